//! [`crate::Store::stream_matches`]: every match of a filter, read a page of rows at a time so
//! an export of millions of matches holds a few thousand in memory, never all of them.
//!
//! **Keyset pages, not one long statement.** One `SELECT` streamed row by row would be a single
//! snapshot, but it would hold a connection for the whole export (an in-memory SQLite store has
//! exactly one, which the chapter lookups below also need), and the listing's order by page URL
//! would make the database sort every match before handing over the first. Instead each page
//! is one statement over the `UNIQUE (page_id, work_id)` index of `matches`, continuing after
//! the last pair read: `(page_id, work_id) > (last page, last work)`, so a page costs the same
//! at the start and the end of the table, and no connection is held between pages.
//!
//! The price is that the walk is not one snapshot: a match recorded, decided on or deleted
//! while the export runs may or may not be in it, as it would be had the export started a moment
//! earlier or later. No pair is ever listed twice or skipped if it exists throughout, because
//! the key is unique and only moves forward.
//!
//! The statement is the same on both databases (`CAST(… AS BIGINT)` instead of PostgreSQL's
//! `::bigint`), so it lives here, once.

use std::collections::{HashMap, VecDeque};

use futures_util::StreamExt;
use sqlx::{Encode, Executor, FromRow, Pool, Type};

use super::Db;
use crate::rows::{ChapterRow, MatchEvidenceRow, group_matches, match_listing_columns};
use crate::rules;
use crate::{Id, MatchFilter, MatchRecord, MatchStream, Result, WorkChapter};

/// Matches read by one statement: enough that the statement's cost is spread thin, few enough
/// that a page (with its evidence) stays around a megabyte.
pub(crate) const MATCHES_PER_PAGE: i64 = 1_000;

/// Works whose chapters the walk keeps between pages. Matches come in page order, and pages
/// stored together (a crawl of one site) mostly copy the same works, so a small cache spares
/// almost every chapter query; when it is full it is emptied, which bounds memory by this many
/// works' chapter lists, however large the library.
const CACHED_WORKS: usize = 256;

/// One page of [`crate::Store::stream_matches`]: the matches (with their evidence, in passage
/// order) whose `(page_id, work_id)` comes after `($3, $4)`, at most `$5` of them, of holder
/// `$1` and work `$2` when given.
const PAGE: &str = concat!(
    "SELECT ",
    match_listing_columns!(),
    " FROM (SELECT m.* FROM matches m JOIN works w ON w.id = m.work_id \
            WHERE (m.page_id, m.work_id) > ($3, $4) \
              AND (CAST($1 AS BIGINT) IS NULL OR w.rights_holder_id = $1) \
              AND (CAST($2 AS BIGINT) IS NULL OR m.work_id = $2) \
            ORDER BY m.page_id, m.work_id LIMIT $5) AS m \
     JOIN pages p ON p.id = m.page_id \
     JOIN works w ON w.id = m.work_id \
     LEFT JOIN evidence e ON e.match_id = m.id \
     ORDER BY m.page_id, m.work_id, e.ordinal"
);

/// The chapter lists of recently seen works, to name the chapters each match copies
/// ([`MatchRecord::chapters`]) with one query per work instead of one per match.
pub(crate) struct ChapterCache {
    works: HashMap<Id, Vec<WorkChapter>>,
    /// Most works held; `None` for a listing that is in memory whole anyway.
    capacity: Option<usize>,
}

impl ChapterCache {
    /// A cache that keeps every work it reads.
    pub(crate) fn unbounded() -> Self {
        ChapterCache {
            works: HashMap::new(),
            capacity: None,
        }
    }

    /// A cache that holds at most `capacity` works.
    fn bounded(capacity: usize) -> Self {
        ChapterCache {
            works: HashMap::new(),
            capacity: Some(capacity),
        }
    }

    /// Fills in `record.chapters` from its evidence and its work's chapters.
    pub(crate) async fn name_chapters<'e, DB, E>(
        &mut self,
        executor: E,
        record: &mut MatchRecord,
    ) -> Result<()>
    where
        DB: Db,
        E: Executor<'e, Database = DB>,
        ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
        i64: for<'q> Encode<'q, DB> + Type<DB>,
    {
        if !self.works.contains_key(&record.work_id) {
            if self
                .capacity
                .is_some_and(|capacity| self.works.len() >= capacity)
            {
                self.works.clear();
            }
            let chapters = super::work_chapters(executor, record.work_id).await?;
            self.works.insert(record.work_id, chapters);
        }
        record.chapters = rules::chapter_copies(&record.evidence, &self.works[&record.work_id]);
        Ok(())
    }
}

/// The aliases of the page last seen ([`MatchRecord::aliases`]). Listings come in page order,
/// so a page's works follow each other and its aliases are read once.
#[derive(Default)]
pub(crate) struct AliasCache {
    page_id: Option<Id>,
    urls: Vec<String>,
}

impl AliasCache {
    /// Fills in `record.aliases`.
    pub(crate) async fn name_aliases<'e, DB, E>(
        &mut self,
        executor: E,
        record: &mut MatchRecord,
    ) -> Result<()>
    where
        DB: Db,
        E: Executor<'e, Database = DB>,
        (String,): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
        i64: for<'q> Encode<'q, DB> + Type<DB>,
    {
        if self.page_id != Some(record.page_id) {
            self.urls = super::page_aliases(executor, record.page_id).await?;
            self.page_id = Some(record.page_id);
        }
        record.aliases.clone_from(&self.urls);
        Ok(())
    }
}

/// [`crate::Store::stream_matches`] on the store's pool (cloned: the stream owns it, so it
/// outlives the borrow of the store).
pub(crate) async fn stream_matches<DB>(pool: &Pool<DB>, filter: &MatchFilter) -> Result<MatchStream>
where
    DB: Db,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    MatchEvidenceRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (String,): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let walk = Walk {
        pool: pool.clone(),
        filter: filter.clone(),
        after: (Id::MIN, Id::MIN),
        ready: VecDeque::new(),
        chapters: ChapterCache::bounded(CACHED_WORKS),
        aliases: AliasCache::default(),
        exhausted: false,
    };
    Ok(futures_util::stream::try_unfold(walk, Walk::next).boxed())
}

/// Where a [`stream_matches`] walk stands.
struct Walk<DB: Db> {
    pool: Pool<DB>,
    filter: MatchFilter,
    /// `(page_id, work_id)` of the last match read; the next page starts after it.
    after: (Id, Id),
    /// Matches read and listed but not yet handed out.
    ready: VecDeque<MatchRecord>,
    chapters: ChapterCache,
    aliases: AliasCache,
    /// The last page read was not full: nothing comes after it.
    exhausted: bool,
}

impl<DB> Walk<DB>
where
    DB: Db,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    MatchEvidenceRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (String,): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    /// The next match and the walk after it; `None` at the end.
    async fn next(mut self) -> Result<Option<(MatchRecord, Self)>> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Ok(Some((record, self)));
            }
            if self.exhausted {
                return Ok(None);
            }
            self.read_page().await?;
        }
    }

    /// Reads the next page of matches into `ready` (leaving out those the filter does not
    /// list, which still move the walk on).
    async fn read_page(&mut self) -> Result<()> {
        let rows = sqlx::query_as::<DB, MatchEvidenceRow<DB>>(PAGE)
            .bind(self.filter.rights_holder_id)
            .bind(self.filter.work_id)
            .bind(self.after.0)
            .bind(self.after.1)
            .bind(MATCHES_PER_PAGE)
            .fetch_all(&self.pool)
            .await?;
        let records = group_matches(rows)?;
        self.exhausted = records.len() < MATCHES_PER_PAGE as usize;
        if let Some(last) = records.last() {
            self.after = (last.page_id, last.work_id);
        }
        for mut record in records {
            if self.filter.selects(&record) {
                self.chapters.name_chapters(&self.pool, &mut record).await?;
                self.aliases.name_aliases(&self.pool, &mut record).await?;
                self.ready.push_back(record);
            }
        }
        Ok(())
    }
}
