//! The page library statements both backends share: reading pages, sites and kept texts.

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{PageRow, SiteRow, due_pages_query, page_select};
use crate::rules::to_u64;
use crate::{Id, Page, PageSketch, Result, Site, StoreError};

pub(crate) async fn evidence_text<'e, DB, E>(
    executor: E,
    page_id: Id,
    content_hash: &str,
) -> Result<Option<String>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    Ok(sqlx::query_scalar(
        "SELECT text FROM pages WHERE id = $1 AND content_hash = $2 \
         UNION ALL \
         SELECT text FROM page_texts WHERE page_id = $1 AND content_hash = $2 LIMIT 1",
    )
    .bind(page_id)
    .bind(content_hash)
    .fetch_optional(executor)
    .await?)
}

pub(crate) async fn get_page<'e, DB, E>(executor: E, id: Id) -> Result<Page>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PageRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, PageRow<DB>>(concat!(page_select!(), " WHERE id = $1"))
        .bind(id)
        .fetch_optional(executor)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("page {id}")))?
        .into_model()
}

pub(crate) async fn pages_to_match<'e, DB, E>(executor: E, limit: u32) -> Result<Vec<Page>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PageRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, PageRow<DB>>(due_pages_query!())
        .bind(i64::from(limit))
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(PageRow::into_model)
        .collect()
}

pub(crate) async fn due_page_ids<'e, DB, E>(
    executor: E,
    after_id: Id,
    limit: u32,
) -> Result<Vec<(Id, String)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    Ok(sqlx::query_as(
        "SELECT id, content_hash FROM pages \
         WHERE id > $1 AND (matched_hash IS NULL OR matched_hash <> content_hash) \
         ORDER BY id LIMIT $2",
    )
    .bind(after_id)
    .bind(i64::from(limit))
    .fetch_all(executor)
    .await?)
}

pub(crate) async fn list_sites<'e, DB, E>(executor: E) -> Result<Vec<Site>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SiteRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, SiteRow<DB>>("SELECT id, host, created_at FROM sites ORDER BY host")
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(SiteRow::into_model)
        .collect()
}

pub(crate) async fn count_pages<'e, DB, E>(executor: E) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
{
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pages")
        .fetch_one(executor)
        .await?;
    to_u64(count, "page count")
}

/// Keeps the stored text of page `id` in `page_texts` when some match's evidence points into
/// it, before a re-crawl replaces it (fetched at `fetched_at`).
pub(crate) async fn keep_evidence_text<'e, DB, E>(
    executor: E,
    id: Id,
    fetched_at: DB::Time,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "INSERT INTO page_texts (page_id, content_hash, title, text, archived_at) \
         SELECT p.id, p.content_hash, p.title, p.text, $2 FROM pages p \
         WHERE p.id = $1 AND EXISTS (SELECT 1 FROM matches m \
           WHERE m.page_id = p.id AND m.evidence_hash = p.content_hash) \
         ON CONFLICT (page_id, content_hash) DO NOTHING",
    )
    .bind(id)
    .bind(fetched_at)
    .execute(executor)
    .await?;
    Ok(())
}

/// [`crate::Store::save_page_sketch`].
pub(crate) async fn save_page_sketch<'e, DB, E>(executor: E, sketch: &PageSketch) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let sample: Vec<u8> = sketch.sample.iter().flat_map(|h| h.to_le_bytes()).collect();
    let done = sqlx::query(
        "INSERT INTO page_sketches (page_id, content_hash, version, sample) \
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM pages WHERE id = $1) \
         ON CONFLICT (page_id) DO UPDATE SET content_hash = excluded.content_hash, \
         version = excluded.version, sample = excluded.sample",
    )
    .bind(sketch.page_id)
    .bind(sketch.content_hash.as_str())
    .bind(i64::from(sketch.version))
    .bind(sample)
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("page {}", sketch.page_id)));
    }
    Ok(())
}

/// Sketches written by one statement: a page's verdicts are recorded a batch at a time, and a
/// statement per sketch was a large part of what the store's thread did for them.
const SKETCH_ROWS_PER_UPSERT: usize = 256;

/// [`crate::Store::save_page_sketches`] in the caller's transaction: a few statements for the
/// whole batch, each upserting many rows, skipping pages that do not exist (any more). A page
/// named twice keeps its last sketch. Returns the sketches saved.
pub(crate) async fn save_page_sketches_in<DB>(
    conn: &mut DB::Connection,
    sketches: &[PageSketch],
) -> Result<u64>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> DB::Arguments: sqlx::IntoArguments<DB>,
{
    // One row a page (the last sketch given for it): an upsert may not touch a row twice.
    let mut last: std::collections::BTreeMap<Id, &PageSketch> = std::collections::BTreeMap::new();
    for sketch in sketches {
        last.insert(sketch.page_id, sketch);
    }
    let rows: Vec<&PageSketch> = last.into_values().collect();
    let mut saved = 0;
    for chunk in rows.chunks(SKETCH_ROWS_PER_UPSERT) {
        let mut upsert = sqlx::QueryBuilder::<DB>::new(
            "INSERT INTO page_sketches (page_id, content_hash, version, sample) \
             SELECT v.column1, v.column2, v.column3, v.column4 FROM (",
        );
        upsert.push_values(chunk, |mut row, sketch| {
            let sample: Vec<u8> = sketch.sample.iter().flat_map(|h| h.to_le_bytes()).collect();
            row.push_bind(sketch.page_id)
                .push_bind(sketch.content_hash.clone())
                .push_bind(i64::from(sketch.version))
                .push_bind(sample);
        });
        upsert.push(
            ") v WHERE EXISTS (SELECT 1 FROM pages WHERE id = v.column1) \
             ON CONFLICT (page_id) DO UPDATE SET content_hash = excluded.content_hash, \
             version = excluded.version, sample = excluded.sample",
        );
        let done = upsert.build().execute(&mut *conn).await?;
        saved += DB::rows_affected(&done);
    }
    Ok(saved)
}

/// [`crate::Store::page_sketches`].
pub(crate) async fn page_sketches<'e, DB, E>(
    executor: E,
    after_id: Id,
    limit: u32,
    version: u32,
) -> Result<Vec<PageSketch>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String, Vec<u8>): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let rows: Vec<(i64, String, Vec<u8>)> = sqlx::query_as(
        "SELECT s.page_id, s.content_hash, s.sample FROM page_sketches s \
         JOIN pages p ON p.id = s.page_id \
         WHERE s.page_id > $1 AND s.version = $3 AND s.content_hash = p.content_hash \
         ORDER BY s.page_id LIMIT $2",
    )
    .bind(after_id)
    .bind(i64::from(limit))
    .bind(i64::from(version))
    .fetch_all(executor)
    .await?;
    rows.into_iter()
        .map(|(page_id, content_hash, bytes)| {
            if !bytes.len().is_multiple_of(4) {
                return Err(StoreError::Invalid(format!(
                    "the stored sketch of page {page_id} is {} bytes, not whole u32s",
                    bytes.len()
                )));
            }
            Ok(PageSketch {
                page_id,
                content_hash,
                version,
                sample: bytes
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            })
        })
        .collect()
}

/// [`crate::Store::earlier_pages_with_text`].
pub(crate) async fn earlier_pages_with_text<'e, DB, E>(
    executor: E,
    content_hash: &str,
    host: &str,
    before_id: Id,
    limit: u32,
) -> Result<Vec<(Id, String)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    Ok(sqlx::query_as(
        "SELECT p.id, p.url FROM pages p JOIN sites s ON s.id = p.site_id \
         WHERE p.content_hash = $1 AND p.id < $2 AND (s.host = $4 OR s.host LIKE ('%.' || $4)) \
         AND (p.availability IS NULL OR p.availability NOT IN ('gone', 'soft_removed')) \
         ORDER BY p.id LIMIT $3",
    )
    .bind(content_hash)
    .bind(before_id)
    .bind(i64::from(limit))
    .bind(host)
    .fetch_all(executor)
    .await?)
}

/// [`crate::Store::set_page_alias`].
pub(crate) async fn set_page_alias<'e, DB, E>(
    executor: E,
    page_id: Id,
    alias_of: Option<Id>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    if alias_of == Some(page_id) {
        return Err(StoreError::Invalid(format!(
            "page {page_id} cannot be an alias of itself"
        )));
    }
    let done = sqlx::query("UPDATE pages SET alias_of = $2 WHERE id = $1")
        .bind(page_id)
        .bind(alias_of)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("page {page_id}")));
    }
    Ok(())
}

/// [`crate::Store::release_aliases`].
pub(crate) async fn release_aliases<'e, DB, E>(
    executor: E,
    page_id: Id,
    content_hash: &str,
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    // An alias whose text is the evidence of a copy the page is known for stays in the group:
    // matched from its stored text it would be that copy reported again as new. A removal
    // check fetches it before anything is decided (see `copytrace_service::alias_checks`).
    let done = sqlx::query(
        "UPDATE pages SET alias_of = NULL, matched_hash = NULL \
         WHERE alias_of = $1 AND content_hash <> $2 \
         AND content_hash NOT IN (SELECT evidence_hash FROM matches \
                                  WHERE page_id = $1 AND review <> 'rejected')",
    )
    .bind(page_id)
    .bind(content_hash)
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done))
}

/// [`crate::Store::page_aliases`].
pub(crate) async fn page_aliases<'e, DB, E>(executor: E, page_id: Id) -> Result<Vec<String>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    Ok(
        sqlx::query_scalar("SELECT url FROM pages WHERE alias_of = $1 ORDER BY id")
            .bind(page_id)
            .fetch_all(executor)
            .await?,
    )
}

/// [`crate::Store::alias_pages`].
pub(crate) async fn alias_pages<'e, DB, E>(executor: E, page_id: Id) -> Result<Vec<(Id, String)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    Ok(
        sqlx::query_as("SELECT id, url FROM pages WHERE alias_of = $1 ORDER BY id")
            .bind(page_id)
            .fetch_all(executor)
            .await?,
    )
}

/// The dialect-free body of [`crate::Store::hand_over_matches`], in the backend's transaction.
pub(crate) async fn hand_over_matches_in<DB>(
    conn: &mut DB::Connection,
    from: Id,
    to: Id,
    works: &[Id],
) -> Result<Vec<Id>>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    if from == to {
        return Err(StoreError::Invalid(format!(
            "page {from} cannot hand its matches over to itself"
        )));
    }
    let text_of_heir: Option<String> =
        sqlx::query_scalar("SELECT content_hash FROM pages WHERE id = $1")
            .bind(to)
            .fetch_optional(&mut *conn)
            .await?;
    let Some(text_of_heir) = text_of_heir else {
        return Err(StoreError::NotFound(format!("page {to}")));
    };
    let giver: Option<i64> = sqlx::query_scalar("SELECT id FROM pages WHERE id = $1")
        .bind(from)
        .fetch_optional(&mut *conn)
        .await?;
    if giver.is_none() {
        return Err(StoreError::NotFound(format!("page {from}")));
    }
    let mut moved = Vec::new();
    for &work in works {
        // Only a match whose evidence is the heir's own stored text moves: the proof stays on
        // the page that holds the match.
        let done = sqlx::query(
            "UPDATE matches SET page_id = $2 \
             WHERE page_id = $1 AND work_id = $3 AND evidence_hash = $4 \
             AND NOT EXISTS (SELECT 1 FROM matches o WHERE o.page_id = $2 AND o.work_id = $3)",
        )
        .bind(from)
        .bind(to)
        .bind(work)
        .bind(text_of_heir.as_str())
        .execute(&mut *conn)
        .await?;
        if DB::rows_affected(&done) == 0 {
            continue;
        }
        // A person's decisions belong to the pair, and the pair is now the heir's.
        sqlx::query("UPDATE match_decisions SET page_id = $2 WHERE page_id = $1 AND work_id = $3")
            .bind(from)
            .bind(to)
            .bind(work)
            .execute(&mut *conn)
            .await?;
        moved.push(work);
    }
    if moved.is_empty() {
        return Ok(moved);
    }
    sqlx::query("UPDATE pages SET alias_of = NULL WHERE id = $1")
        .bind(to)
        .execute(&mut *conn)
        .await?;
    // Neither page's matches are its verdict's any more: no page with their text reuses them.
    sqlx::query("DELETE FROM page_verdicts WHERE page_id IN ($1, $2)")
        .bind(from)
        .bind(to)
        .execute(&mut *conn)
        .await?;
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE page_id = $1")
        .bind(from)
        .fetch_one(&mut *conn)
        .await?;
    if left == 0 {
        // The page that lost the copy, and its other URLs, are the heir's group now: a later
        // check of the heir fetches them again (a restored page is found that way).
        sqlx::query("UPDATE pages SET alias_of = $2 WHERE (alias_of = $1 AND id <> $2) OR id = $1")
            .bind(from)
            .bind(to)
            .execute(&mut *conn)
            .await?;
    }
    Ok(moved)
}
