//! The statements whose SQL is the same on both backends, written once.
//!
//! Most reads do not depend on the dialect: the same text, the same binds, the same row type
//! (generic over [`Columns`]) and the same conversion. Each is a function generic over the
//! database, run on whatever executor the backend passes (its pool); the backend's section
//! file forwards to it. A statement that differs between SQLite and PostgreSQL, even by a
//! cast or a lock clause, stays in the backend that needs it.
//!
//! The `where` clauses name what sqlx needs to bind and decode on a generic database; they are
//! met by both `sqlx::Sqlite` and `sqlx::Postgres`.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgQueryResult;
use sqlx::sqlite::SqliteQueryResult;
use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Transaction, Type};

use crate::rows::{
    Columns, JobRow, PageCheckRow, PageRow, RightsHolderRow, RunRow, ScheduleRow, SegmentRow,
    SiteRow, UserRow, WorkWithContentRow, due_pages_query, fingerprint_version, job_columns,
    page_select, run_select, schedule_select, work_summary_columns,
};
use crate::rules::{self, Referenced, normalize_email, to_u64};
use crate::{
    Availability, Id, IndexedSegment, InfringingPage, Job, JobLease, NewRun, NewUser, Page,
    PageCheck, PageCheckRecord, Result, RightsHolder, Run, RunKind, RunState, Schedule, Site,
    StoreError, User, Work,
};

/// A database the shared statements run on: SQLite or PostgreSQL.
pub(crate) trait Db: Database<Arguments: IntoArguments<Self>> + Columns {
    /// How many rows a write changed (sqlx has no trait for it).
    fn rows_affected(result: &Self::QueryResult) -> u64;
}

impl Db for sqlx::Sqlite {
    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }
}

impl Db for sqlx::Postgres {
    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }
}

/// `NotFound` naming the row unless it exists.
pub(crate) async fn exists<'e, DB, E>(executor: E, what: Referenced, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found: Option<i64> = sqlx::query_scalar(what.query())
        .bind(id)
        .fetch_optional(executor)
        .await?;
    found.map(|_| ()).ok_or_else(|| what.not_found(id))
}

// ----- library -----
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

pub(crate) async fn get_work<'e, DB, E>(executor: E, id: Id) -> Result<Work>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    WorkWithContentRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
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
    })
}

pub(crate) async fn all_segments<'e, DB, E>(executor: E) -> Result<Vec<IndexedSegment>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SegmentRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, SegmentRow>(
        "SELECT work_id, ordinal, start_offset, end_offset, simhash FROM work_segments \
         ORDER BY work_id, ordinal",
    )
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(SegmentRow::into_model)
    .collect()
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

// ----- pages -----
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

// ----- matches -----
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
               ORDER BY page_id LIMIT $2) AS chosen \
         JOIN pages p ON p.id = chosen.page_id \
         JOIN matches m ON m.page_id = p.id AND m.status <> 'dismissed' \
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
/// texts no evidence points into any more, and marking the text as matched. `last_seen` and
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
    sqlx::query("UPDATE pages SET matched_hash = $2 WHERE id = $1")
        .bind(page_id)
        .bind(content_hash)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

// ----- jobs -----
pub(crate) async fn get_job<'e, DB, E>(executor: E, job_id: Id) -> Result<Job>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    JobRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, JobRow<DB>>(concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE id = $1"
    ))
    .bind(job_id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("job {job_id}")))?
    .into_model()
}

/// Why a lease-guarded update of a claimed job touched no row (see
/// `rules::lease_not_current`).
pub(crate) async fn lease_not_current<'e, DB, E>(executor: E, lease: JobLease) -> StoreError
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (String, i64): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found = sqlx::query_as("SELECT state, attempts FROM jobs WHERE id = $1")
        .bind(lease.job_id)
        .fetch_optional(executor)
        .await;
    match found {
        Ok(found) => rules::lease_not_current(lease, found),
        Err(error) => error.into(),
    }
}

/// The lease-guarded updates of a claimed job: each changes the job only while `lease` is its
/// current claim (same attempt, still running), and answers whether it did. The caller then
/// explains a `false` with [`lease_not_current`].
pub(crate) async fn complete_job<'e, DB, E>(executor: E, lease: JobLease) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = $3 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: back to queued at `retry_at`, or dead once attempts are used up.
pub(crate) async fn fail_job<'e, DB, E>(
    executor: E,
    lease: JobLease,
    error: &str,
    retry_at: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET \
           state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
           run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE $3 END, \
           lease_until = NULL, last_error = $4, updated_at = $5 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(retry_at))
    .bind(error)
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: the lease now ends at `lease_until`.
pub(crate) async fn renew_job_lease<'e, DB, E>(
    executor: E,
    lease: JobLease,
    lease_until: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET lease_until = $3, updated_at = $4 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(lease_until))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: queued again at `run_at`, the attempt given back.
pub(crate) async fn release_job<'e, DB, E>(
    executor: E,
    lease: JobLease,
    run_at: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET state = 'queued', attempts = attempts - 1, run_at = $3, \
           lease_until = NULL, updated_at = $4 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(run_at))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

// ----- schedules -----
pub(crate) async fn list_schedules<'e, DB, E>(executor: E) -> Result<Vec<Schedule>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ScheduleRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, ScheduleRow<DB>>(concat!(schedule_select!(), " ORDER BY name"))
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(ScheduleRow::into_model)
        .collect()
}

pub(crate) async fn get_schedule_by_name<'e, DB, E>(executor: E, name: &str) -> Result<Schedule>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ScheduleRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let name = name.trim();
    sqlx::query_as::<_, ScheduleRow<DB>>(concat!(schedule_select!(), " WHERE name = $1"))
        .bind(name)
        .fetch_optional(executor)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("schedule {name:?}")))?
        .into_model()
}

pub(crate) async fn set_schedule_enabled<'e, DB, E>(
    executor: E,
    id: Id,
    enabled: bool,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    // Only a change of the flag is a change of the schedule.
    let done = sqlx::query(
        "UPDATE schedules SET enabled = $2, \
         updated_at = CASE WHEN enabled = $2 THEN updated_at ELSE $3 END WHERE id = $1",
    )
    .bind(id)
    .bind(enabled)
    .bind(DB::now())
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("schedule {id}")));
    }
    Ok(())
}

pub(crate) async fn delete_schedule<'e, DB, E>(executor: E, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query("DELETE FROM schedules WHERE id = $1")
        .bind(id)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("schedule {id}")));
    }
    Ok(())
}

/// Inserts a run: queued when a job carries it, otherwise running since its creation.
pub(crate) async fn insert_run<'e, DB, E>(
    executor: E,
    run: &NewRun,
    job_id: Option<Id>,
) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
    Option<DB::Time>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let created_at = DB::time(run.created_at);
    let (state, started_at) = match job_id {
        Some(_) => (RunState::Queued, None),
        None => (RunState::Running, Some(created_at)),
    };
    Ok(sqlx::query_scalar(
        "INSERT INTO runs (kind, schedule_id, job_id, trigger, state, scheduled_for, created_at, \
         started_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(run.kind.as_str())
    .bind(run.schedule_id)
    .bind(job_id)
    .bind(run.trigger.as_str())
    .bind(state.as_str())
    .bind(run.scheduled_for.map(DB::time))
    .bind(created_at)
    .bind(started_at)
    .fetch_one(executor)
    .await?)
}

pub(crate) async fn run_for_job<'e, DB, E>(executor: E, job_id: Id) -> Result<Option<Run>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RunRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, RunRow<DB>>(concat!(
        run_select!(),
        " WHERE r.job_id = $1 ORDER BY r.id LIMIT 1"
    ))
    .bind(job_id)
    .fetch_optional(executor)
    .await?
    .map(RunRow::into_model)
    .transpose()
}

pub(crate) async fn last_succeeded_run<'e, DB, E>(executor: E, kind: RunKind) -> Result<Option<Run>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RunRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, RunRow<DB>>(concat!(
        run_select!(),
        " WHERE r.kind = $1 AND r.state = 'succeeded' \
         ORDER BY r.started_at DESC NULLS LAST, r.id DESC LIMIT 1"
    ))
    .bind(kind.as_str())
    .fetch_optional(executor)
    .await?
    .map(RunRow::into_model)
    .transpose()
}

// ----- users -----

/// Creates a user, in `tx` (a write transaction of the backend), once `user` is validated and
/// its `email` normalized (see `rules::validate_user`).
pub(crate) async fn create_user<DB>(
    mut tx: Transaction<'static, DB>,
    email: &str,
    user: &NewUser,
) -> Result<Id>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some(holder) = user.rights_holder_id {
        exists(&mut *tx, Referenced::RightsHolder, holder).await?;
    }
    let result = sqlx::query_scalar(
        "INSERT INTO users (email, password_hash, role, rights_holder_id, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(email)
    .bind(user.password_hash.as_str())
    .bind(user.role.as_str())
    .bind(user.rights_holder_id)
    .bind(DB::now())
    .fetch_one(&mut *tx)
    .await;
    let id = rules::refuse_duplicate(result, || {
        StoreError::Invalid(format!("user {email:?} already exists"))
    })?;
    tx.commit().await?;
    Ok(id)
}

pub(crate) async fn find_user_by_email<'e, DB, E>(executor: E, email: &str) -> Result<Option<User>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    UserRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    String: for<'q> Encode<'q, DB> + Type<DB>,
{
    let Some(email) = normalize_email(email) else {
        return Ok(None);
    };
    sqlx::query_as::<_, UserRow<DB>>(
        "SELECT id, email, password_hash, role, rights_holder_id, created_at FROM users \
         WHERE email = $1",
    )
    .bind(email)
    .fetch_optional(executor)
    .await?
    .map(UserRow::into_model)
    .transpose()
}
