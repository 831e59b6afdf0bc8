//! The match library statements both backends share: infringing pages, removal checks and the
//! end of a verdict.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use sqlx::{Encode, Executor, FromRow, Type};

use super::{Db, exists};
use crate::rows::{ChapterRow, PageCheckRow};
use crate::rules::{self, Referenced};
use crate::{
    Availability, Id, InfringingPage, MatchFilter, MatchRecord, MatchStatus, PageCheck,
    PageCheckRecord, Result, WorkChapter,
};

pub(crate) async fn infringing_pages<'e, DB, E>(
    executor: E,
    after_id: Id,
    limit: u32,
) -> Result<Vec<InfringingPage>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    rules::InfringingRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    // One statement, so a page and its works are one consistent snapshot.
    let rows: Vec<rules::InfringingRow> = sqlx::query_as(
        "SELECT p.id, p.url, p.content_hash, p.etag, p.last_modified, m.work_id, \
         m.evidence_hash \
         FROM (SELECT DISTINCT page_id FROM matches \
               WHERE status <> 'dismissed' AND page_id > $1 \
                 AND work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
               ORDER BY page_id LIMIT $2) AS chosen \
         JOIN pages p ON p.id = chosen.page_id \
         JOIN matches m ON m.page_id = p.id AND m.status <> 'dismissed' \
              AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
         ORDER BY p.id, m.work_id",
    )
    .bind(after_id)
    .bind(i64::from(limit))
    .fetch_all(executor)
    .await?;
    Ok(rules::group_infringing_pages(rows))
}

pub(crate) async fn page_checks<'e, DB, E>(executor: E, page_id: Id) -> Result<Vec<PageCheckRecord>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PageCheckRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, PageCheckRow<DB>>(
        "SELECT id, page_id, run_id, checked_at, availability, http_status, detail \
         FROM page_checks WHERE page_id = $1 ORDER BY checked_at, id",
    )
    .bind(page_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(PageCheckRow::into_model)
    .collect()
}

/// Appends a removal check to a page's history (`run_id` `None` for a re-crawl's verdict).
pub(crate) async fn insert_page_check<'e, DB, E>(
    executor: E,
    page_id: Id,
    run_id: Option<Id>,
    checked_at: DB::Time,
    availability: Availability,
    http_status: Option<i64>,
    detail: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "INSERT INTO page_checks (page_id, run_id, checked_at, availability, http_status, \
         detail) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(page_id)
    .bind(run_id)
    .bind(checked_at)
    .bind(availability.as_str())
    .bind(http_status)
    .bind(detail)
    .execute(executor)
    .await?;
    Ok(())
}

/// Sets a page's availability as seen by its latest check, at `checked_at`.
pub(crate) async fn set_availability<'e, DB, E>(
    executor: E,
    page_id: Id,
    availability: Availability,
    checked_at: DB::Time,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query("UPDATE pages SET availability = $2, availability_checked_at = $3 WHERE id = $1")
        .bind(page_id)
        .bind(availability.as_str())
        .bind(checked_at)
        .execute(executor)
        .await?;
    Ok(())
}

/// The dialect-free part of [`crate::Store::record_page_check`], in the transaction `conn`
/// runs once the page is known to exist: checks the run, appends the check to the page's
/// history and, when it is the page's latest (`last_checked` is the page's latest check so
/// far), sets the page's availability. Returns whether it is the latest: only then do the
/// page's matches move.
pub(crate) async fn append_check<DB>(
    conn: &mut DB::Connection,
    check: &PageCheck,
    checked_at: DB::Time,
    last_checked: Option<DB::Time>,
) -> Result<bool>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some(run_id) = check.run_id {
        exists(&mut *conn, Referenced::Run, run_id).await?;
    }
    let status = check.http_status.map(i64::from);
    let (page_id, availability) = (check.page_id, check.availability);
    insert_page_check(
        &mut *conn,
        page_id,
        check.run_id,
        checked_at,
        availability,
        status,
        &check.detail,
    )
    .await?;
    // A check older than the page's latest one is history only: its verdict was superseded.
    let latest = rules::is_latest_check(last_checked, &checked_at);
    if latest {
        set_availability(&mut *conn, page_id, availability, checked_at).await?;
    }
    Ok(latest)
}

/// The end of [`crate::Store::record_page_matches`], once the page's matches are written: the
/// removal check the verdict amounts to (see `rules::plan_verdict`), letting go of earlier
/// texts (and their captures) no evidence points into any more, and marking the text as
/// matched. `last_seen` and
/// `last_checked` are the page's, as read at the start of the transaction `conn` runs.
pub(crate) async fn finish_verdict<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    content_hash: &str,
    check: Option<&(Availability, String)>,
    http_status: i64,
    last_seen: DB::Time,
    last_checked: Option<DB::Time>,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some((availability, detail)) = check {
        let (availability, status) = (*availability, Some(http_status));
        insert_page_check(
            &mut *conn,
            page_id,
            None,
            last_seen,
            availability,
            status,
            detail,
        )
        .await?;
        if rules::is_latest_check(last_checked, &last_seen) {
            set_availability(&mut *conn, page_id, availability, last_seen).await?;
        }
    }
    // Earlier texts no evidence points into any more are let go.
    sqlx::query(
        "DELETE FROM page_texts WHERE page_id = $1 AND (content_hash = $2 OR \
         content_hash NOT IN (SELECT evidence_hash FROM matches WHERE page_id = $1))",
    )
    .bind(page_id)
    .bind(content_hash)
    .execute(&mut *conn)
    .await?;
    super::prune_captures(&mut *conn, page_id, content_hash).await?;
    sqlx::query("UPDATE pages SET matched_hash = $2 WHERE id = $1")
        .bind(page_id)
        .bind(content_hash)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The end of [`crate::Store::list_matches`]: leaves out `licensed` matches unless the filter
/// asks for them, and names the chapters each match copies (one chapter query per work).
pub(crate) async fn finish_match_listing<'e, DB, E>(
    executor: E,
    mut records: Vec<MatchRecord>,
    filter: &MatchFilter,
) -> Result<Vec<MatchRecord>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    if !filter.include_licensed {
        records.retain(|m| m.status != MatchStatus::Licensed);
    }
    let mut chapters: HashMap<Id, Vec<WorkChapter>> = HashMap::new();
    for record in &mut records {
        let of_work = match chapters.entry(record.work_id) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => new.insert(super::work_chapters(executor, record.work_id).await?),
        };
        record.chapters = rules::chapter_copies(&record.evidence, of_work);
    }
    Ok(records)
}
