//! The fingerprint library statements both backends share: rights holders, works, segments and
//! fingerprint versions.

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{
    ChapterRow, LicensedHostRow, PackedWindowsRow, RightsHolderRow, StoredTime, WorkRow,
    WorkWithContentRow, fingerprint_version, pack_windows, work_summary_columns,
};
use crate::rules::{self, Referenced};
use crate::{
    Id, IndexedSegment, LicensedHost, NewWork, Result, RightsHolder, StoreError, Work, WorkChapter,
    WorkStatus, WorkSummary,
};

pub(crate) async fn list_rights_holders<'e, DB, E>(executor: E) -> Result<Vec<RightsHolder>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RightsHolderRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, RightsHolderRow<DB>>(
        "SELECT id, name, created_at FROM rights_holders ORDER BY name, id",
    )
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(RightsHolderRow::into_model)
    .collect()
}

/// Deletes a rights holder that owns no work and no user account; otherwise refuses, saying
/// what it still owns (works are never removed as a side effect of removing their owner).
pub(crate) async fn delete_rights_holder<'e, DB, E>(executor: E, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (String, i64, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let deleted = sqlx::query(
        "DELETE FROM rights_holders WHERE id = $1 \
         AND NOT EXISTS (SELECT 1 FROM works WHERE rights_holder_id = $1) \
         AND NOT EXISTS (SELECT 1 FROM users WHERE rights_holder_id = $1)",
    )
    .bind(id)
    .execute(executor)
    .await?;
    if DB::rows_affected(&deleted) > 0 {
        return Ok(());
    }
    let owned: Option<(String, i64, i64)> = sqlx::query_as(
        "SELECT name, \
                (SELECT COUNT(*) FROM works WHERE rights_holder_id = $1), \
                (SELECT COUNT(*) FROM users WHERE rights_holder_id = $1) \
         FROM rights_holders WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(executor)
    .await?;
    match owned {
        None => Err(StoreError::NotFound(format!("rights holder {id}"))),
        Some((name, works, users)) => Err(StoreError::Invalid(format!(
            "rights holder {name:?} still owns {works} work(s) and {users} user account(s): \
             remove them first"
        ))),
    }
}

pub(crate) async fn get_work<'e, DB, E>(executor: E, id: Id) -> Result<Work>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    WorkWithContentRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let row = sqlx::query_as::<_, WorkWithContentRow<DB>>(concat!(
        "SELECT ",
        work_summary_columns!(),
        ", w.content FROM works w WHERE w.id = $1"
    ))
    .bind(id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("work {id}")))?;
    Ok(Work {
        summary: row.summary.into_model()?,
        content: row.content,
        chapters: work_chapters(executor, id).await?,
    })
}

/// [`crate::Store::work_summary`]: one row, without the text.
pub(crate) async fn work_summary<'e, DB, E>(executor: E, id: Id) -> Result<WorkSummary>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    WorkRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, WorkRow<DB>>(concat!(
        "SELECT ",
        work_summary_columns!(),
        " FROM works w WHERE w.id = $1"
    ))
    .bind(id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("work {id}")))?
    .into_model()
}

pub(crate) async fn all_segments<'e, DB, E>(executor: E) -> Result<Vec<IndexedSegment>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PackedWindowsRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    let rows = sqlx::query_as::<_, PackedWindowsRow>(
        "SELECT ww.work_id, ww.windows FROM work_windows ww \
         JOIN works w ON w.id = ww.work_id WHERE w.status = 'active' ORDER BY ww.work_id",
    )
    .fetch_all(executor)
    .await?;
    let mut segments = Vec::new();
    for row in rows {
        segments.extend(row.into_model()?);
    }
    Ok(segments)
}

/// Writes a work's windows, packed into one row, in the caller's transaction (its previous
/// windows, if any, were deleted first).
pub(crate) async fn insert_windows<DB>(
    conn: &mut DB::Connection,
    work_id: Id,
    work: &NewWork,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query("INSERT INTO work_windows (work_id, window_count, windows) VALUES ($1, $2, $3)")
        .bind(work_id)
        .bind(work.segments.len() as i64)
        .bind(pack_windows(&work.segments))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub(crate) async fn fingerprint_versions<'e, DB, E>(executor: E) -> Result<Vec<(Id, String, u32)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String, i64): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    let rows: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT work_id, algorithm, version FROM work_fingerprints \
         ORDER BY work_id, algorithm",
    )
    .fetch_all(executor)
    .await?;
    rows.into_iter().map(fingerprint_version).collect()
}

/// Replaces a stored work's text, title and fingerprint version and drops its segments and
/// fingerprints (the caller inserts the new ones), in the caller's transaction.
pub(crate) async fn rewrite_work<DB>(
    conn: &mut DB::Connection,
    id: Id,
    work: &NewWork,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "UPDATE works SET title = $2, content = $3, content_len = $4, \
         content_hash = $5, fingerprint_version = $6, updated_at = $7 WHERE id = $1",
    )
    .bind(id)
    .bind(work.title.as_str())
    .bind(work.content.as_str())
    .bind(rules::content_len(work)?)
    .bind(work.content_hash.as_str())
    .bind(i64::from(work.fingerprint_version))
    .bind(DB::now())
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM work_windows WHERE work_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM work_fingerprints WHERE work_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The catalog entry of stored work `id` (author, publication, status, chapters, its own
/// licensed hosts), as [`rules::catalog_unchanged`] compares it.
pub(crate) async fn stored_catalog<DB>(
    conn: &mut DB::Connection,
    id: Id,
) -> Result<rules::StoredCatalog>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (Option<String>, Option<DB::Time>, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (String,): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let (author, published_at, status): (Option<String>, Option<DB::Time>, String) =
        sqlx::query_as("SELECT author, published_at, status FROM works WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *conn)
            .await?;
    let chapters = work_chapters::<DB, _>(&mut *conn, id).await?;
    let licensed_hosts: Vec<String> =
        sqlx::query_scalar("SELECT host FROM licensed_hosts WHERE work_id = $1 ORDER BY host")
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    Ok(rules::StoredCatalog {
        author,
        published_at: published_at.map(StoredTime::into_time).transpose()?,
        status: WorkStatus::parse(&status)
            .ok_or_else(|| StoreError::Invalid(format!("unknown work status {status:?}")))?,
        chapters,
        licensed_hosts,
    })
}

/// The chapters of one work, in order.
pub(crate) async fn work_chapters<'e, DB, E>(executor: E, work_id: Id) -> Result<Vec<WorkChapter>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, ChapterRow>(
        "SELECT ordinal, title, start_offset, end_offset FROM work_chapters \
         WHERE work_id = $1 ORDER BY ordinal",
    )
    .bind(work_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(ChapterRow::into_model)
    .collect()
}

/// Chapter rows per multi-row `INSERT` (5 binds each, well under both databases' limits).
const CHAPTER_ROWS_PER_INSERT: usize = 1_000;

/// Writes the catalog entry of work `id` from `work`, in the caller's transaction: author,
/// publication date, status back to active, chapters replaced, and its own licensed hosts
/// replaced when `work` names them.
pub(crate) async fn write_catalog<DB>(
    conn: &mut DB::Connection,
    rights_holder_id: Id,
    id: Id,
    work: &NewWork,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<String>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
    Option<DB::Time>: for<'q> Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> DB::Arguments: sqlx::IntoArguments<DB>,
{
    sqlx::query(
        "UPDATE works SET author = $2, published_at = $3, status = 'active', \
         withdrawn_at = NULL, updated_at = $4 WHERE id = $1",
    )
    .bind(id)
    .bind(work.author.clone())
    .bind(work.published_at.map(DB::time))
    .bind(DB::now())
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM work_chapters WHERE work_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    // Many rows per statement: a novel has hundreds of chapters, and one round trip each was
    // a large part of loading a library on PostgreSQL.
    for chunk in work.chapters.chunks(CHAPTER_ROWS_PER_INSERT) {
        let mut insert = sqlx::QueryBuilder::<DB>::new(
            "INSERT INTO work_chapters (work_id, ordinal, title, start_offset, end_offset) ",
        );
        insert.push_values(chunk, |mut row, chapter| {
            row.push_bind(id)
                .push_bind(i64::from(chapter.ordinal))
                .push_bind(chapter.title.clone())
                .push_bind(i64::from(chapter.start))
                .push_bind(i64::from(chapter.end));
        });
        insert.build().execute(&mut *conn).await?;
    }
    if let Some(hosts) = &work.licensed_hosts {
        sqlx::query("DELETE FROM licensed_hosts WHERE work_id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await?;
        for host in rules::sorted_hosts(hosts) {
            sqlx::query(
                "INSERT INTO licensed_hosts (rights_holder_id, work_id, host, created_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(rights_holder_id)
            .bind(id)
            .bind(host.as_str())
            .bind(DB::now())
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

/// Withdraws work `id` from the library at `at`. Returns whether it was active (`false`: it
/// already was withdrawn, nothing changed); `NotFound` if absent.
pub(crate) async fn withdraw_work<'e, DB, E>(
    executor: E,
    id: Id,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE works SET status = 'withdrawn', withdrawn_at = $2, updated_at = $2 \
         WHERE id = $1 AND status = 'active'",
    )
    .bind(id)
    .bind(DB::time(at))
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) > 0 {
        return Ok(true);
    }
    super::exists(executor, Referenced::Work, id).await?;
    Ok(false)
}

/// Adds licensed hosts for a rights holder (all its works, or work `work_id`, which must be
/// the holder's). Returns how many were new; hosts already licensed are left as they are.
pub(crate) async fn add_licensed_hosts<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    for host in hosts {
        rules::validate_licensed_host(host)?;
    }
    let statement = "INSERT INTO licensed_hosts (rights_holder_id, work_id, host, created_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
    change_licences(executor, rights_holder_id, work_id, hosts, statement).await
}

/// Removes licensed hosts of a rights holder (holder-wide, or of work `work_id`). Returns how
/// many were removed.
pub(crate) async fn remove_licensed_hosts<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    // Both statements take the same four binds; the time (`$4`) only matters to the insert.
    let statement = "DELETE FROM licensed_hosts WHERE rights_holder_id = $1 \
                     AND COALESCE(work_id, 0) = COALESCE($2, 0) AND host = $3 \
                     AND $4 IS NOT NULL";
    change_licences(executor, rights_holder_id, work_id, hosts, statement).await
}

/// Runs `statement` (binds: holder, work, host, now) once per host, after checking the holder
/// and the work exist and belong together; returns how many rows it changed. Each host is its
/// own write: adding or removing the same hosts again changes nothing, so a retry after a
/// failure is safe.
async fn change_licences<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
    work_id: Option<Id>,
    hosts: &[String],
    statement: &'static str,
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    super::exists(executor, Referenced::RightsHolder, rights_holder_id).await?;
    if let Some(work_id) = work_id {
        let owner: Option<i64> =
            sqlx::query_scalar("SELECT rights_holder_id FROM works WHERE id = $1")
                .bind(work_id)
                .fetch_optional(executor)
                .await?;
        if owner != Some(rights_holder_id) {
            return Err(StoreError::NotFound(format!(
                "work {work_id} of rights holder {rights_holder_id}"
            )));
        }
    }
    let mut changed = 0;
    for host in rules::sorted_hosts(hosts) {
        let done = sqlx::query(statement)
            .bind(rights_holder_id)
            .bind(work_id)
            .bind(host.as_str())
            .bind(DB::now())
            .execute(executor)
            .await?;
        changed += DB::rows_affected(&done);
    }
    Ok(changed)
}

/// Licensed hosts, of one rights holder or of all, by holder, then holder-wide before
/// per-work, then host.
pub(crate) async fn list_licensed_hosts<'e, DB, E>(
    executor: E,
    rights_holder_id: Option<Id>,
) -> Result<Vec<LicensedHost>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    LicensedHostRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, LicensedHostRow<DB>>(
        "SELECT rights_holder_id, work_id, host, created_at FROM licensed_hosts \
         WHERE COALESCE($1, rights_holder_id) = rights_holder_id \
         ORDER BY rights_holder_id, COALESCE(work_id, 0), host",
    )
    .bind(rights_holder_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(LicensedHostRow::into_model)
    .collect()
}

/// See [`crate::Store::library_state`].
pub(crate) async fn library_state<'e, DB, E>(executor: E) -> Result<crate::LibraryState>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, i64, i64): for<'r> FromRow<'r, DB::Row>,
{
    let (generation, rewritten, marked): (i64, i64, i64) =
        sqlx::query_as("SELECT generation, rewritten, marked FROM library_state WHERE id = 1")
            .fetch_one(executor)
            .await?;
    Ok(crate::LibraryState {
        generation,
        rewritten,
        marked,
    })
}

/// See [`crate::Store::library_changes_since`]. Whether a work is withdrawn is read through
/// the partial index of withdrawn works: on SQLite `status` sits after the text.
pub(crate) async fn library_changes_since<'e, DB, E>(
    executor: E,
    generation: i64,
) -> Result<Vec<crate::LibraryChange>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, i64, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT g.work_id, g.generation, CAST(CASE WHEN g.removed = 0 AND NOT EXISTS (              SELECT 1 FROM works x WHERE x.id = g.work_id AND x.status = 'withdrawn')            THEN 1 ELSE 0 END AS BIGINT)          FROM work_generations g WHERE g.generation > $1 ORDER BY g.generation",
    )
    .bind(generation)
    .fetch_all(executor)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(work_id, generation, active)| crate::LibraryChange {
            work_id,
            generation,
            active: active == 1,
        })
        .collect())
}

/// See [`crate::Store::mark_library_generation`].
pub(crate) async fn mark_library_generation<'e, DB, E>(executor: E, generation: i64) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "UPDATE library_state SET marked = CASE WHEN marked < $1 THEN $1 ELSE marked END \
         WHERE id = 1",
    )
    .bind(generation)
    .execute(executor)
    .await?;
    Ok(())
}
