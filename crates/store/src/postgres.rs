//! The production backend: one PostgreSQL database shared by any number of processes.
//!
//! It keeps every rule of the SQLite backend (the crate documentation lists them, the contract
//! tests check them on both), with PostgreSQL's own means where SQLite serializes writers:
//!
//! * **Races are settled by row locks and unique indexes, not by one global write lock.**
//!   Transactions run at `READ COMMITTED`. A read-then-write locks the row it read
//!   (`FOR NO KEY UPDATE`, which, unlike `FOR UPDATE`, does not block the foreign-key checks of
//!   other writers); an insert that may race another uses `ON CONFLICT DO NOTHING` and, when it
//!   lost, reads the winner's row and starts over. Recording a page's matches locks the page
//!   first, so two recorders of one page run one after the other.
//! * **A schedule's cron tick is fired by a conditional `UPDATE`** of its `last_fired_at`
//!   (compare-and-set) in the transaction that inserts the run and its job: concurrent firers
//!   queue on the row lock, and each loser re-reads the winner's value and updates nothing.
//! * **Jobs are claimed with `FOR UPDATE SKIP LOCKED`**: concurrent claimers never wait for each
//!   other and never take the same job; a job one of them is taking is simply skipped.
//! * **Timestamps are `timestamptz`**, written as whole microseconds (finer parts are truncated
//!   before binding, as SQLite's integer microseconds do), so both backends return identical
//!   values. The clock of rows the caller does not timestamp is the process's, like SQLite's.
//! * **Bulk writes are one statement each**: a work's window fingerprints, its document
//!   fingerprints, a page's matches and all their evidence go in as `UNNEST` of one array per
//!   column, whatever the row count (no bind-parameter limit, one round trip). A binary `COPY`
//!   of a work's windows was measured instead: no faster for large works, and over TCP 4.5x
//!   slower for works of 1,000 windows, because sqlx 0.9.0 does not set `TCP_NODELAY` and the
//!   message ending each COPY waits about 40 ms for the server's delayed acknowledgement
//!   (docs/benchmarks.md, "Store bulk load").
//! * **Text keys sort bytewise** (`COLLATE "C"` in the schema); page URLs and job dedup keys are
//!   unique through `md5(value)` because a B-tree entry cannot hold a very long URL.
//! * **Only parameterized, static SQL** (`$n` binds), as in the SQLite backend.
//!
//! PostgreSQL cannot store the NUL character in `text` or `jsonb`; such a value is refused as
//! [`StoreError::Invalid`] (SQLite would store it; no Copytrace input path produces one).

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{Connection, FromRow, PgConnection, Postgres, Transaction};

use crate::rules::{
    self, PreviousMatch, Referenced, is_unique_violation, lease_until, new_algorithm_versions,
    normalize_email, page_key, to_u32, to_u64, validate_job, validate_matches, validate_schedule,
    validate_user, validate_work,
};
use crate::{
    AlgorithmFingerprint, EvidencePassage, FiredRun, Id, IndexedSegment, InfringingPage, Job,
    JobCount, JobFilter, JobLease, JobState, Leadership, MatchFilter, MatchRecord, MatchStatus,
    NewJob, NewMatch, NewPage, NewRun, NewSchedule, NewUser, NewWork, Page, PageCheck,
    PageCheckOutcome, PageCheckRecord, PageValidators, PageWrite, Result, RightsHolder, Role, Run,
    RunCounts, RunFilter, RunKind, RunState, Schedule, ScheduleFire, SegmentFingerprint, Site,
    Store, StoreError, User, ValidatorScope, VerdictOutcome, Work, WorkSummary, WriteOutcome,
    redact_url,
};

/// The PostgreSQL migrations, embedded at compile time so the binary needs no files beside it.
/// sqlx takes an advisory lock while migrating, so processes starting together are safe.
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Connections per process: enough for the concurrent claimers and writers of one worker
/// without exhausting the server's default 100 connections across a handful of processes.
const POOL_SIZE: u32 = 10;

/// How long a statement waits for a free connection, including reconnecting after the server
/// restarted, before failing.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// An insert that lost a race (or a digest collision) is retried this many times in all.
const ATTEMPTS: usize = 5;

/// [`Store`] on a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects to the database named by `url` (`postgres://` or `postgresql://`, with any of
    /// libpq's query parameters that sqlx understands, e.g. `?sslmode=disable`).
    ///
    /// One connection is opened right away, so a wrong host, password or database name fails
    /// here with the server's reason instead of at the first query; the database must exist and
    /// use the UTF8 encoding. The schema is not touched: call [`Store::migrate`].
    pub async fn connect(url: &str) -> Result<PostgresStore> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: redact_url(url),
            reason,
        };
        let scheme = url.split_once("://").map(|(scheme, _)| scheme);
        if !scheme.is_some_and(|s| {
            s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql")
        }) {
            return Err(invalid(
                "expected a PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
                    .to_owned(),
            ));
        }
        let mut options = PgConnectOptions::from_str(url)
            .map_err(|error| invalid(format!("it cannot be parsed: {error}")))?;
        if options.get_application_name().is_none() {
            options = options.application_name("copytrace");
        }

        let mut first = PgConnection::connect_with(&options).await?;
        let encoding: String = sqlx::query_scalar("SELECT current_setting('server_encoding')")
            .fetch_one(&mut first)
            .await?;
        first.close().await?;
        if encoding != "UTF8" {
            return Err(StoreError::Invalid(format!(
                "database {} uses the {encoding} encoding; Copytrace needs UTF8",
                redact_url(url)
            )));
        }

        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options);
        tracing::debug!(url = %redact_url(url), "connected to PostgreSQL");
        Ok(PostgresStore { pool })
    }

    /// Closes every connection. Call it on shutdown; later calls on the store fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }
}

// ----- conversions -----

/// A timestamp as stored: whole microseconds, finer parts truncated (see the crate docs).
fn stored(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap_or(at)
}

/// The clock for rows the caller does not timestamp itself, at stored precision.
fn now() -> DateTime<Utc> {
    stored(Utc::now())
}

fn u32_to_i64(values: impl Iterator<Item = u32>) -> Vec<i64> {
    values.map(i64::from).collect()
}

// ----- rows -----

#[derive(FromRow)]
struct RightsHolderRow {
    id: i64,
    name: String,
    created_at: DateTime<Utc>,
}

impl RightsHolderRow {
    fn into_model(self) -> RightsHolder {
        RightsHolder {
            id: self.id,
            name: self.name,
            created_at: self.created_at,
        }
    }
}

/// Columns of a work summary over `works w`; keep in sync with [`WorkRow`].
macro_rules! work_summary_columns {
    () => {
        "w.id, w.rights_holder_id, w.external_id, w.title, w.content_hash, \
         w.fingerprint_version, w.content_len, \
         (SELECT COUNT(*) FROM work_segments s WHERE s.work_id = w.id) AS segment_count, \
         w.created_at, w.updated_at"
    };
}

#[derive(FromRow)]
struct WorkRow {
    id: i64,
    rights_holder_id: i64,
    external_id: String,
    title: String,
    content_hash: String,
    fingerprint_version: i64,
    content_len: i64,
    segment_count: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl WorkRow {
    fn into_model(self) -> Result<WorkSummary> {
        Ok(WorkSummary {
            id: self.id,
            rights_holder_id: self.rights_holder_id,
            external_id: self.external_id,
            title: self.title,
            content_hash: self.content_hash,
            fingerprint_version: to_u32(self.fingerprint_version, "fingerprint version")?,
            content_len: to_u64(self.content_len, "content length")?,
            segment_count: to_u32(self.segment_count, "segment count")?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(FromRow)]
struct WorkWithContentRow {
    #[sqlx(flatten)]
    summary: WorkRow,
    content: String,
}

#[derive(FromRow)]
struct SegmentRow {
    work_id: i64,
    ordinal: i64,
    start_offset: i64,
    end_offset: i64,
    simhash: i64,
}

impl SegmentRow {
    fn into_model(self) -> Result<IndexedSegment> {
        Ok(IndexedSegment {
            work_id: self.work_id,
            segment: SegmentFingerprint {
                ordinal: to_u32(self.ordinal, "segment ordinal")?,
                start: to_u32(self.start_offset, "segment start")?,
                end: to_u32(self.end_offset, "segment end")?,
                simhash: self.simhash as u64,
            },
        })
    }
}

#[derive(FromRow)]
struct SiteRow {
    id: i64,
    host: String,
    created_at: DateTime<Utc>,
}

impl SiteRow {
    fn into_model(self) -> Site {
        Site {
            id: self.id,
            host: self.host,
            created_at: self.created_at,
        }
    }
}

/// Selects pages; keep in sync with [`PageRow`].
macro_rules! page_select {
    () => {
        "SELECT id, site_id, url, title, text, content_hash, http_status, \
         first_seen, last_seen, matched_hash, availability, availability_checked_at, etag, \
         last_modified FROM pages"
    };
}

/// Pages due for matching. The WHERE clause repeats the partial index `pages_due_for_matching`
/// word for word, which is what lets the planner use it.
macro_rules! due_pages_query {
    () => {
        concat!(
            page_select!(),
            " WHERE matched_hash IS NULL OR matched_hash <> content_hash ORDER BY id LIMIT $1"
        )
    };
}

#[derive(FromRow)]
struct PageRow {
    id: i64,
    site_id: i64,
    url: String,
    title: Option<String>,
    text: String,
    content_hash: String,
    http_status: i64,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    matched_hash: Option<String>,
    availability: Option<String>,
    availability_checked_at: Option<DateTime<Utc>>,
    etag: Option<String>,
    last_modified: Option<String>,
}

impl PageRow {
    fn into_model(self) -> Result<Page> {
        Ok(Page {
            id: self.id,
            site_id: self.site_id,
            url: self.url,
            title: self.title,
            text: self.text,
            content_hash: self.content_hash,
            http_status: rules::http_status(self.http_status)?,
            first_seen: self.first_seen,
            last_seen: self.last_seen,
            matched_hash: self.matched_hash,
            availability: self
                .availability
                .as_deref()
                .map(rules::availability)
                .transpose()?,
            availability_checked_at: self.availability_checked_at,
            etag: self.etag,
            last_modified: self.last_modified,
        })
    }
}

/// One match joined with one of its evidence passages (all `None` when it has none).
#[derive(FromRow)]
struct MatchEvidenceRow {
    id: i64,
    page_id: i64,
    page_url: String,
    page_title: Option<String>,
    work_id: i64,
    work_external_id: String,
    work_title: String,
    rights_holder_id: i64,
    score: f64,
    coverage: f64,
    containment: f64,
    copied_chars: i64,
    method: String,
    status: String,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    removed_at: Option<DateTime<Utc>>,
    evidence_hash: String,
    page_start: Option<i64>,
    page_end: Option<i64>,
    work_start: Option<i64>,
    work_end: Option<i64>,
}

impl MatchEvidenceRow {
    fn passage(&self) -> Result<Option<EvidencePassage>> {
        let (Some(page_start), Some(page_end), Some(work_start), Some(work_end)) = (
            self.page_start,
            self.page_end,
            self.work_start,
            self.work_end,
        ) else {
            return Ok(None);
        };
        Ok(Some(EvidencePassage {
            page_start: to_u32(page_start, "evidence offset")?,
            page_end: to_u32(page_end, "evidence offset")?,
            work_start: to_u32(work_start, "evidence offset")?,
            work_end: to_u32(work_end, "evidence offset")?,
        }))
    }

    fn into_model(self) -> Result<MatchRecord> {
        let evidence = self.passage()?.into_iter().collect();
        Ok(MatchRecord {
            id: self.id,
            page_id: self.page_id,
            page_url: self.page_url,
            page_title: self.page_title,
            work_id: self.work_id,
            work_external_id: self.work_external_id,
            work_title: self.work_title,
            rights_holder_id: self.rights_holder_id,
            score: self.score,
            coverage: self.coverage,
            containment: self.containment,
            copied_chars: to_u32(self.copied_chars, "copied characters")?,
            method: self.method,
            status: rules::match_status(&self.status)?,
            first_seen: self.first_seen,
            last_seen: self.last_seen,
            removed_at: self.removed_at,
            evidence_hash: self.evidence_hash,
            evidence,
        })
    }
}

/// Columns of a job; keep in sync with [`JobRow`].
macro_rules! job_columns {
    () => {
        "id, kind, payload, state, attempts, max_attempts, run_at, lease_until, last_error, \
         dedup_key, created_at, updated_at"
    };
}

#[derive(FromRow)]
struct JobRow {
    id: i64,
    kind: String,
    payload: serde_json::Value,
    state: String,
    attempts: i64,
    max_attempts: i64,
    run_at: DateTime<Utc>,
    lease_until: Option<DateTime<Utc>>,
    last_error: Option<String>,
    dedup_key: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl JobRow {
    fn into_model(self) -> Result<Job> {
        Ok(Job {
            id: self.id,
            kind: self.kind,
            payload: self.payload,
            state: JobState::parse(&self.state).ok_or_else(|| {
                StoreError::Invalid(format!("stored job state {:?} is unknown", self.state))
            })?,
            attempts: to_u32(self.attempts, "job attempts")?,
            max_attempts: to_u32(self.max_attempts, "job max attempts")?,
            run_at: self.run_at,
            lease_until: self.lease_until,
            last_error: self.last_error,
            dedup_key: self.dedup_key,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Selects schedules; keep in sync with [`ScheduleRow`].
macro_rules! schedule_select {
    () => {
        "SELECT id, name, kind, cron, timezone, seeds, config, enabled, owner, last_fired_at, \
         created_at, updated_at FROM schedules"
    };
}

#[derive(FromRow)]
struct ScheduleRow {
    id: i64,
    name: String,
    kind: String,
    cron: String,
    timezone: String,
    seeds: Json<Vec<String>>,
    config: serde_json::Value,
    enabled: bool,
    owner: Option<String>,
    last_fired_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ScheduleRow {
    fn into_model(self) -> Result<Schedule> {
        Ok(Schedule {
            id: self.id,
            name: self.name,
            kind: rules::run_kind(&self.kind)?,
            cron: self.cron,
            timezone: self.timezone,
            seeds: self.seeds.0,
            config: self.config,
            enabled: self.enabled,
            owner: self.owner,
            last_fired_at: self.last_fired_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Selects runs with their schedule's name; keep in sync with [`RunRow`].
macro_rules! run_select {
    () => {
        "SELECT r.id, r.kind, r.schedule_id, s.name AS schedule_name, r.job_id, r.trigger, \
         r.state, r.scheduled_for, r.created_at, r.started_at, r.finished_at, r.pages_checked, \
         r.new_matches, r.matches_removed, r.errors, r.stats, r.error, r.cancel_requested \
         FROM runs r LEFT JOIN schedules s ON s.id = r.schedule_id"
    };
}

#[derive(FromRow)]
struct RunRow {
    id: i64,
    kind: String,
    schedule_id: Option<i64>,
    schedule_name: Option<String>,
    job_id: Option<i64>,
    trigger: String,
    state: String,
    scheduled_for: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    pages_checked: i64,
    new_matches: i64,
    matches_removed: i64,
    errors: i64,
    stats: serde_json::Value,
    error: Option<String>,
    cancel_requested: bool,
}

impl RunRow {
    fn into_model(self) -> Result<Run> {
        Ok(Run {
            id: self.id,
            kind: rules::run_kind(&self.kind)?,
            schedule_id: self.schedule_id,
            schedule_name: self.schedule_name,
            job_id: self.job_id,
            trigger: rules::run_trigger(&self.trigger)?,
            state: rules::run_state(&self.state)?,
            scheduled_for: self.scheduled_for,
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
            counts: rules::run_counts(
                self.pages_checked,
                self.new_matches,
                self.matches_removed,
                self.errors,
            )?,
            stats: self.stats,
            error: self.error,
            cancel_requested: self.cancel_requested,
        })
    }
}

#[derive(FromRow)]
struct PageCheckRow {
    id: i64,
    page_id: i64,
    run_id: Option<i64>,
    checked_at: DateTime<Utc>,
    availability: String,
    http_status: Option<i64>,
    detail: String,
}

impl PageCheckRow {
    fn into_model(self) -> Result<PageCheckRecord> {
        Ok(PageCheckRecord {
            id: self.id,
            page_id: self.page_id,
            run_id: self.run_id,
            checked_at: self.checked_at,
            availability: rules::availability(&self.availability)?,
            http_status: self.http_status.map(rules::http_status).transpose()?,
            detail: self.detail,
        })
    }
}

#[derive(FromRow)]
struct UserRow {
    id: i64,
    email: String,
    password_hash: String,
    role: String,
    rights_holder_id: Option<i64>,
    created_at: DateTime<Utc>,
}

impl UserRow {
    fn into_model(self) -> Result<User> {
        Ok(User {
            id: self.id,
            email: self.email,
            password_hash: self.password_hash,
            role: Role::parse(&self.role).ok_or_else(|| {
                StoreError::Invalid(format!("stored role {:?} is unknown", self.role))
            })?,
            rights_holder_id: self.rights_holder_id,
            created_at: self.created_at,
        })
    }
}

// ----- transaction helpers -----

/// `NotFound` naming the row unless it exists.
async fn exists(conn: &mut PgConnection, what: Referenced, id: Id) -> Result<()> {
    let found: Option<i64> = sqlx::query_scalar(what.query())
        .bind(id)
        .fetch_optional(conn)
        .await?;
    found.map(|_| ()).ok_or_else(|| what.not_found(id))
}

/// Inserts all window fingerprints of a work in one statement.
async fn insert_segments(conn: &mut PgConnection, work_id: Id, work: &NewWork) -> Result<()> {
    if work.segments.is_empty() {
        return Ok(());
    }
    let segments = &work.segments;
    sqlx::query(
        "INSERT INTO work_segments (work_id, ordinal, start_offset, end_offset, simhash) \
         SELECT $1, * FROM UNNEST($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])",
    )
    .bind(work_id)
    .bind(u32_to_i64(segments.iter().map(|s| s.ordinal)))
    .bind(u32_to_i64(segments.iter().map(|s| s.start)))
    .bind(u32_to_i64(segments.iter().map(|s| s.end)))
    .bind(
        segments
            .iter()
            .map(|s| s.simhash as i64)
            .collect::<Vec<i64>>(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Inserts all document-level fingerprints of a work in one statement.
async fn insert_fingerprints(conn: &mut PgConnection, work_id: Id, work: &NewWork) -> Result<()> {
    if work.fingerprints.is_empty() {
        return Ok(());
    }
    let fingerprints = &work.fingerprints;
    sqlx::query(
        "INSERT INTO work_fingerprints (work_id, algorithm, version, fingerprint) \
         SELECT $1, * FROM UNNEST($2::text[], $3::bigint[], $4::jsonb[])",
    )
    .bind(work_id)
    .bind(
        fingerprints
            .iter()
            .map(|f| f.algorithm.as_str())
            .collect::<Vec<&str>>(),
    )
    .bind(u32_to_i64(fingerprints.iter().map(|f| f.version)))
    .bind(
        fingerprints
            .iter()
            .map(|f| f.fingerprint.clone())
            .collect::<Vec<serde_json::Value>>(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// `(algorithm, version)` of a stored work's fingerprints, ordered by algorithm.
async fn algorithm_versions(conn: &mut PgConnection, work_id: Id) -> Result<Vec<(String, u32)>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT algorithm, version FROM work_fingerprints WHERE work_id = $1 ORDER BY algorithm",
    )
    .bind(work_id)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(algorithm, version)| Ok((algorithm, to_u32(version, "fingerprint version")?)))
        .collect()
}

/// Explains why an update of a claimed job touched no row: the job is missing, or it is no
/// longer running under this claim.
async fn lease_not_current(pool: &PgPool, lease: JobLease) -> StoreError {
    let found: std::result::Result<Option<(String, i64)>, sqlx::Error> =
        sqlx::query_as("SELECT state, attempts FROM jobs WHERE id = $1")
            .bind(lease.job_id)
            .fetch_optional(pool)
            .await;
    match found {
        Ok(Some((state, attempts))) => {
            StoreError::LeaseLost(rules::describe_lost_lease(lease, &state, attempts))
        }
        Ok(None) => StoreError::NotFound(format!("job {}", lease.job_id)),
        Err(error) => error.into(),
    }
}

/// Inserts a queued job without a dedup key (keyed jobs need [`Store::enqueue_job`]'s race
/// handling).
async fn insert_job(conn: &mut PgConnection, job: &NewJob) -> Result<Id> {
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, 'queued', 0, $3, $4, $5, $5) \
         RETURNING id",
    )
    .bind(&job.kind)
    .bind(&job.payload)
    .bind(i64::from(job.max_attempts))
    .bind(stored(job.run_at))
    .bind(now())
    .fetch_one(conn)
    .await?)
}

/// Inserts a run: queued when a job carries it, otherwise running since its creation.
async fn insert_run(conn: &mut PgConnection, run: &NewRun, job_id: Option<Id>) -> Result<Id> {
    let created_at = stored(run.created_at);
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
    .bind(run.scheduled_for.map(stored))
    .bind(created_at)
    .bind(started_at)
    .fetch_one(conn)
    .await?)
}

/// Inserts an enabled, never fired schedule unless its name is taken (`None` then).
async fn insert_schedule(
    conn: &mut PgConnection,
    name: &str,
    schedule: &NewSchedule,
) -> Result<Option<Id>> {
    Ok(sqlx::query_scalar(
        "INSERT INTO schedules (name, kind, cron, timezone, seeds, config, enabled, owner, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7, $8, $8) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(schedule.kind.as_str())
    .bind(schedule.cron.trim())
    .bind(schedule.timezone.trim())
    .bind(Json(&schedule.seeds))
    .bind(&schedule.config)
    .bind(&schedule.owner)
    .bind(now())
    .fetch_optional(conn)
    .await?)
}

async fn fetch_run(conn: &mut PgConnection, id: Id) -> Result<Run> {
    sqlx::query_as::<_, RunRow>(concat!(run_select!(), " WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?
        .into_model()
}

/// The advisory lock key of a leadership name: FNV-1a of the name, stable across processes,
/// versions and platforms (PostgreSQL's own `hashtext` is not promised to be).
fn advisory_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"copytrace-leader:".iter().chain(name.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Leadership held as a session-level advisory lock on a connection of its own (taken out of
/// the pool, so no other query ever runs on it and it is never recycled while the lock is held).
struct PostgresLeadership {
    connection: Option<PgConnection>,
    key: i64,
}

#[async_trait]
impl Leadership for PostgresLeadership {
    async fn confirm(&mut self) -> Result<bool> {
        let Some(connection) = self.connection.as_mut() else {
            return Ok(false);
        };
        // The lock lives as long as the session: if the session still answers, and still holds
        // the lock, we lead. A restarted server or a broken connection ends both.
        let held: std::result::Result<bool, sqlx::Error> = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
               AND pid = pg_backend_pid() AND granted \
               AND ((classid::bigint << 32) | objid::bigint) = $1)",
        )
        .bind(self.key)
        .fetch_one(&mut *connection)
        .await;
        match held {
            Ok(true) => Ok(true),
            Ok(false) | Err(_) => {
                self.connection = None;
                Ok(false)
            }
        }
    }

    async fn resign(mut self: Box<Self>) -> Result<()> {
        if let Some(mut connection) = self.connection.take() {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(self.key)
                .execute(&mut connection)
                .await?;
            connection.close().await?;
        }
        Ok(())
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn migrate(&self) -> Result<()> {
        MIGRATOR.run(&self.pool).await?;
        tracing::debug!("PostgreSQL schema is up to date");
        Ok(())
    }

    // ----- fingerprint library -----

    async fn ensure_rights_holder(&self, name: &str) -> Result<Id> {
        let name = name.trim();
        if name.is_empty() {
            return Err(StoreError::Invalid("a rights holder needs a name".into()));
        }
        let find = || {
            sqlx::query_scalar::<_, i64>("SELECT id FROM rights_holders WHERE name = $1").bind(name)
        };
        // Read first: the usual case writes nothing and leaves no gap in the id sequence.
        if let Some(id) = find().fetch_optional(&self.pool).await? {
            return Ok(id);
        }
        // Insert-or-ignore then read: correct under concurrency without a transaction (the
        // insert waits for a concurrent insert of the same name to commit).
        sqlx::query(
            "INSERT INTO rights_holders (name, created_at) VALUES ($1, $2) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(find().fetch_one(&self.pool).await?)
    }

    async fn list_rights_holders(&self) -> Result<Vec<RightsHolder>> {
        Ok(sqlx::query_as::<_, RightsHolderRow>(
            "SELECT id, name, created_at FROM rights_holders ORDER BY name, id",
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(RightsHolderRow::into_model)
        .collect())
    }

    async fn upsert_work(&self, work: &NewWork) -> Result<(Id, WriteOutcome)> {
        validate_work(work)?;
        let version = i64::from(work.fingerprint_version);
        let content_len = i64::try_from(work.content.len())
            .map_err(|_| StoreError::Invalid("work text is too long".into()))?;
        for _ in 0..ATTEMPTS {
            // The server checks each window row's foreign key with a query it plans once per
            // connection and keeps until the next ANALYZE of `works`. Planned while the table
            // was small (early in a library load, right after autovacuum analyzed a few rows),
            // it is a sequential scan, and as the load goes on every window of every new work
            // reads every work: loading a library into a new database became several times
            // slower. Planned with sequential scans disabled, the check is the primary-key
            // lookup it should be, whenever it is (re)planned: window rows are only ever
            // inserted here. In the BEGIN's own round trip, and for this transaction only.
            let mut tx = self
                .pool
                .begin_with("BEGIN; SET LOCAL enable_seqscan = off")
                .await?;
            let existing: Option<(i64, String, String, i64)> = sqlx::query_as(
                "SELECT id, title, content_hash, fingerprint_version FROM works \
                 WHERE rights_holder_id = $1 AND external_id = $2 FOR NO KEY UPDATE",
            )
            .bind(work.rights_holder_id)
            .bind(&work.external_id)
            .fetch_optional(&mut *tx)
            .await?;
            let now = now();
            let stored_algorithms = match &existing {
                Some((id, ..)) => algorithm_versions(&mut tx, *id).await?,
                None => Vec::new(),
            };
            let (id, outcome) = match existing {
                Some((id, title, hash, stored_version))
                    if title == work.title
                        && hash == work.content_hash
                        && stored_version == version
                        && stored_algorithms == new_algorithm_versions(work) =>
                {
                    tx.rollback().await?;
                    return Ok((id, WriteOutcome::Unchanged));
                }
                Some((id, ..)) => {
                    sqlx::query(
                        "UPDATE works SET title = $2, content = $3, content_len = $4, \
                         content_hash = $5, fingerprint_version = $6, updated_at = $7 \
                         WHERE id = $1",
                    )
                    .bind(id)
                    .bind(&work.title)
                    .bind(&work.content)
                    .bind(content_len)
                    .bind(&work.content_hash)
                    .bind(version)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query("DELETE FROM work_segments WHERE work_id = $1")
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("DELETE FROM work_fingerprints WHERE work_id = $1")
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    // Every page matched against the old version must be matched again. The
                    // pages are locked in id order so two such updates cannot deadlock.
                    sqlx::query(
                        "WITH stale AS ( \
                           SELECT id FROM pages WHERE matched_hash IS NOT NULL \
                             AND id IN (SELECT page_id FROM matches WHERE work_id = $1) \
                           ORDER BY id FOR NO KEY UPDATE) \
                         UPDATE pages SET matched_hash = NULL \
                         WHERE id IN (SELECT id FROM stale)",
                    )
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    (id, WriteOutcome::Updated)
                }
                None => {
                    exists(&mut tx, Referenced::RightsHolder, work.rights_holder_id).await?;
                    let inserted: Option<i64> = sqlx::query_scalar(
                        "INSERT INTO works (rights_holder_id, external_id, title, content, \
                         content_len, content_hash, fingerprint_version, created_at, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
                         ON CONFLICT (rights_holder_id, external_id) DO NOTHING RETURNING id",
                    )
                    .bind(work.rights_holder_id)
                    .bind(&work.external_id)
                    .bind(&work.title)
                    .bind(&work.content)
                    .bind(content_len)
                    .bind(&work.content_hash)
                    .bind(version)
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let Some(id) = inserted else {
                        // A concurrent writer created it first: start over, updating theirs.
                        tx.rollback().await?;
                        continue;
                    };
                    (id, WriteOutcome::Created)
                }
            };
            insert_segments(&mut tx, id, work).await?;
            insert_fingerprints(&mut tx, id, work).await?;
            tx.commit().await?;
            return Ok((id, outcome));
        }
        Err(StoreError::Invalid(format!(
            "work {:?} kept being replaced concurrently; try again",
            work.external_id
        )))
    }

    async fn list_works(&self, rights_holder_id: Option<Id>) -> Result<Vec<WorkSummary>> {
        sqlx::query_as::<_, WorkRow>(concat!(
            "SELECT ",
            work_summary_columns!(),
            " FROM works w WHERE ($1::bigint IS NULL OR w.rights_holder_id = $1)",
            " ORDER BY w.external_id, w.rights_holder_id"
        ))
        .bind(rights_holder_id)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(WorkRow::into_model)
        .collect()
    }

    async fn get_work(&self, id: Id) -> Result<Work> {
        let row = sqlx::query_as::<_, WorkWithContentRow>(concat!(
            "SELECT ",
            work_summary_columns!(),
            ", w.content FROM works w WHERE w.id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("work {id}")))?;
        Ok(Work {
            summary: row.summary.into_model()?,
            content: row.content,
        })
    }

    async fn all_segments(&self) -> Result<Vec<IndexedSegment>> {
        sqlx::query_as::<_, SegmentRow>(
            "SELECT work_id, ordinal, start_offset, end_offset, simhash FROM work_segments \
             ORDER BY work_id, ordinal",
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(SegmentRow::into_model)
        .collect()
    }

    async fn work_fingerprints(&self, work_id: Id) -> Result<Vec<AlgorithmFingerprint>> {
        let mut tx = self.begin().await?;
        let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = $1")
            .bind(work_id)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_none() {
            return Err(StoreError::NotFound(format!("work {work_id}")));
        }
        let rows: Vec<(String, i64, serde_json::Value)> = sqlx::query_as(
            "SELECT algorithm, version, fingerprint FROM work_fingerprints \
             WHERE work_id = $1 ORDER BY algorithm",
        )
        .bind(work_id)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.into_iter()
            .map(|(algorithm, version, fingerprint)| {
                Ok(AlgorithmFingerprint {
                    version: to_u32(version, "fingerprint version")?,
                    fingerprint,
                    algorithm,
                })
            })
            .collect()
    }

    async fn fingerprint_versions(&self) -> Result<Vec<(Id, String, u32)>> {
        let rows: Vec<(i64, String, i64)> = sqlx::query_as(
            "SELECT work_id, algorithm, version FROM work_fingerprints \
             ORDER BY work_id, algorithm",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(work_id, algorithm, version)| {
                Ok((work_id, algorithm, to_u32(version, "fingerprint version")?))
            })
            .collect()
    }

    // ----- page library -----

    async fn upsert_page(&self, page: &NewPage) -> Result<PageWrite> {
        let (url, host) = page_key(&page.url)?;
        let fetched_at = stored(page.fetched_at);
        let status = i64::from(page.http_status);
        for _ in 0..ATTEMPTS {
            let mut tx = self.begin().await?;
            let site = || sqlx::query_scalar::<_, i64>("SELECT id FROM sites WHERE host = $1");
            let site_id = match site().bind(&host).fetch_optional(&mut *tx).await? {
                Some(id) => id,
                None => {
                    sqlx::query(
                        "INSERT INTO sites (host, created_at) VALUES ($1, $2) \
                         ON CONFLICT (host) DO NOTHING",
                    )
                    .bind(&host)
                    .bind(fetched_at)
                    .execute(&mut *tx)
                    .await?;
                    site().bind(&host).fetch_one(&mut *tx).await?
                }
            };

            let existing: Option<(i64, String)> = sqlx::query_as(
                "SELECT id, content_hash FROM pages WHERE md5(url) = md5($1) AND url = $1 \
                 FOR NO KEY UPDATE",
            )
            .bind(&url)
            .fetch_optional(&mut *tx)
            .await?;
            let write = match existing {
                None => {
                    let inserted: Option<i64> = sqlx::query_scalar(
                        "INSERT INTO pages (site_id, url, title, text, content_hash, \
                         http_status, first_seen, last_seen, etag, last_modified) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) \
                         ON CONFLICT (md5(url)) DO NOTHING RETURNING id",
                    )
                    .bind(site_id)
                    .bind(&url)
                    .bind(&page.title)
                    .bind(&page.text)
                    .bind(&page.content_hash)
                    .bind(status)
                    .bind(fetched_at)
                    .bind(&page.etag)
                    .bind(&page.last_modified)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let Some(id) = inserted else {
                        // A concurrent fetch of the same URL stored it first: start over.
                        tx.rollback().await?;
                        continue;
                    };
                    PageWrite {
                        id,
                        outcome: WriteOutcome::Created,
                    }
                }
                Some((id, hash)) if hash == page.content_hash => {
                    sqlx::query(
                        "UPDATE pages SET title = $2, http_status = $3, \
                         last_seen = GREATEST(last_seen, $4), etag = $5, last_modified = $6 \
                         WHERE id = $1",
                    )
                    .bind(id)
                    .bind(&page.title)
                    .bind(status)
                    .bind(fetched_at)
                    .bind(&page.etag)
                    .bind(&page.last_modified)
                    .execute(&mut *tx)
                    .await?;
                    PageWrite {
                        id,
                        outcome: WriteOutcome::Unchanged,
                    }
                }
                Some((id, _)) => {
                    // The text some evidence points into is kept before it is replaced.
                    sqlx::query(
                        "INSERT INTO page_texts (page_id, content_hash, title, text, \
                         archived_at) \
                         SELECT p.id, p.content_hash, p.title, p.text, $2 FROM pages p \
                         WHERE p.id = $1 AND EXISTS (SELECT 1 FROM matches m \
                           WHERE m.page_id = p.id AND m.evidence_hash = p.content_hash) \
                         ON CONFLICT (page_id, content_hash) DO NOTHING",
                    )
                    .bind(id)
                    .bind(fetched_at)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query(
                        "UPDATE pages SET title = $2, text = $3, content_hash = $4, \
                         http_status = $5, last_seen = GREATEST(last_seen, $6), \
                         matched_hash = NULL, etag = $7, last_modified = $8 WHERE id = $1",
                    )
                    .bind(id)
                    .bind(&page.title)
                    .bind(&page.text)
                    .bind(&page.content_hash)
                    .bind(status)
                    .bind(fetched_at)
                    .bind(&page.etag)
                    .bind(&page.last_modified)
                    .execute(&mut *tx)
                    .await?;
                    PageWrite {
                        id,
                        outcome: WriteOutcome::Updated,
                    }
                }
            };
            tx.commit().await?;
            return Ok(write);
        }
        // Only reachable when another stored URL has the same MD5 digest.
        Err(StoreError::Invalid(format!(
            "page URL {url:?} cannot be stored: its MD5 digest equals another stored URL's"
        )))
    }

    async fn record_not_modified(&self, url: &str, seen_at: DateTime<Utc>) -> Result<Option<Id>> {
        let (url, _) = page_key(url)?;
        Ok(sqlx::query_scalar(
            "UPDATE pages SET last_seen = GREATEST(last_seen, $2) \
             WHERE md5(url) = md5($1) AND url = $1 RETURNING id",
        )
        .bind(&url)
        .bind(stored(seen_at))
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn page_validators(&self, scope: &ValidatorScope) -> Result<Vec<PageValidators>> {
        let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT p.url, p.etag, p.last_modified FROM pages p \
             JOIN sites s ON s.id = p.site_id \
             WHERE s.host = ANY($1) \
               AND (p.etag IS NOT NULL OR p.last_modified IS NOT NULL) \
               AND (NOT $2 OR EXISTS (SELECT 1 FROM matches m \
                    WHERE m.page_id = p.id AND m.status <> 'dismissed')) \
             ORDER BY p.id LIMIT $3",
        )
        .bind(rules::validator_hosts(&scope.hosts))
        .bind(scope.infringing_only)
        .bind(i64::from(scope.limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(url, etag, last_modified)| PageValidators {
                url,
                etag,
                last_modified,
            })
            .collect())
    }

    async fn evidence_text(&self, page_id: Id, content_hash: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(
            "SELECT text FROM pages WHERE id = $1 AND content_hash = $2 \
             UNION ALL \
             SELECT text FROM page_texts WHERE page_id = $1 AND content_hash = $2 LIMIT 1",
        )
        .bind(page_id)
        .bind(content_hash)
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn get_page(&self, id: Id) -> Result<Page> {
        sqlx::query_as::<_, PageRow>(concat!(page_select!(), " WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("page {id}")))?
            .into_model()
    }

    async fn pages_to_match(&self, limit: u32) -> Result<Vec<Page>> {
        sqlx::query_as::<_, PageRow>(due_pages_query!())
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(PageRow::into_model)
            .collect()
    }

    async fn due_page_ids(&self, after_id: Id, limit: u32) -> Result<Vec<(Id, String)>> {
        Ok(sqlx::query_as(
            "SELECT id, content_hash FROM pages \
             WHERE id > $1 AND (matched_hash IS NULL OR matched_hash <> content_hash) \
             ORDER BY id LIMIT $2",
        )
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?)
    }

    async fn mark_all_pages_unmatched(&self) -> Result<u64> {
        // Rows are locked in id order, like a work update does, so the two cannot deadlock.
        let done = sqlx::query(
            "WITH matched AS ( \
               SELECT id FROM pages WHERE matched_hash IS NOT NULL ORDER BY id \
               FOR NO KEY UPDATE) \
             UPDATE pages SET matched_hash = NULL WHERE id IN (SELECT id FROM matched)",
        )
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn list_sites(&self) -> Result<Vec<Site>> {
        Ok(
            sqlx::query_as::<_, SiteRow>("SELECT id, host, created_at FROM sites ORDER BY host")
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map(SiteRow::into_model)
                .collect(),
        )
    }

    async fn count_pages(&self) -> Result<u64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pages")
            .fetch_one(&self.pool)
            .await?;
        to_u64(count, "page count")
    }

    // ----- match library -----

    async fn record_page_matches(
        &self,
        page_id: Id,
        content_hash: &str,
        matches: &[NewMatch],
        at: DateTime<Utc>,
    ) -> Result<VerdictOutcome> {
        validate_matches(page_id, matches)?;
        let at = stored(at);
        let work_ids: Vec<i64> = matches.iter().map(|m| m.work_id).collect();
        let mut tx = self.begin().await?;

        // Locking the page serializes two recordings of the same page (at-least-once delivery
        // may run a match job twice); the second then replaces the first's verdict whole.
        let page: Option<(String, DateTime<Utc>, i64, Option<DateTime<Utc>>)> = sqlx::query_as(
            "SELECT content_hash, last_seen, http_status, availability_checked_at \
             FROM pages WHERE id = $1 FOR NO KEY UPDATE",
        )
        .bind(page_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((current_hash, last_seen, http_status, last_checked)) = page else {
            return Err(StoreError::NotFound(format!("page {page_id}")));
        };
        let known: HashSet<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = ANY($1)")
            .bind(&work_ids)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .collect();
        if let Some(missing) = work_ids.iter().find(|id| !known.contains(id)) {
            return Err(StoreError::NotFound(format!("work {missing}")));
        }
        if current_hash != content_hash {
            // The page changed while it was matched: its newer text gets a verdict of its own.
            return Ok(VerdictOutcome::default());
        }
        // The page is locked, so its matches cannot change before the upsert below.
        let rows: Vec<(i64, i64, String, String, Option<DateTime<Utc>>)> = sqlx::query_as(
            "SELECT id, work_id, status, evidence_hash, removed_at FROM matches \
             WHERE page_id = $1",
        )
        .bind(page_id)
        .fetch_all(&mut *tx)
        .await?;
        let previous = rows
            .into_iter()
            .map(|(id, work_id, status, evidence_hash, removed_at)| {
                Ok(PreviousMatch {
                    id,
                    work_id,
                    status: rules::match_status(&status)?,
                    evidence_hash,
                    removed_before_last_seen: removed_at.is_some_and(|r| r < last_seen),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let previous_works: HashSet<Id> = previous.iter().map(|m| m.work_id).collect();
        let found: HashSet<Id> = work_ids.iter().copied().collect();
        let plan = rules::plan_verdict(&previous, &found, content_hash);
        let outcome = VerdictOutcome {
            new_matches: found.difference(&previous_works).count() as u64,
            removed: plan.remove.len() as u64,
            reopened: plan.reopen.len() as u64,
        };

        if !matches.is_empty() {
            // Upsert keeps id, status and first_seen of a match found again.
            let ids: Vec<(i64, i64)> = sqlx::query_as(
                "INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
                 copied_chars, first_seen, last_seen, evidence_hash) \
                 SELECT $1, t.*, $2, $2, $9 FROM UNNEST($3::bigint[], $4::float8[], \
                   $5::float8[], $6::float8[], $7::text[], $8::bigint[]) AS t \
                 ON CONFLICT (page_id, work_id) DO UPDATE SET score = excluded.score, \
                 coverage = excluded.coverage, containment = excluded.containment, \
                 method = excluded.method, last_seen = excluded.last_seen, \
                 copied_chars = excluded.copied_chars, evidence_hash = excluded.evidence_hash \
                 RETURNING work_id, id",
            )
            .bind(page_id)
            .bind(at)
            .bind(&work_ids)
            .bind(matches.iter().map(|m| m.score).collect::<Vec<f64>>())
            .bind(matches.iter().map(|m| m.coverage).collect::<Vec<f64>>())
            .bind(matches.iter().map(|m| m.containment).collect::<Vec<f64>>())
            .bind(
                matches
                    .iter()
                    .map(|m| m.method.as_str())
                    .collect::<Vec<&str>>(),
            )
            .bind(u32_to_i64(matches.iter().map(|m| m.copied_chars)))
            .bind(content_hash)
            .fetch_all(&mut *tx)
            .await?;
            let match_of: HashMap<i64, i64> = ids.into_iter().collect();
            let match_ids: Vec<i64> = match_of.values().copied().collect();

            // Evidence is replaced, not appended: all of it in two statements.
            sqlx::query("DELETE FROM evidence WHERE match_id = ANY($1)")
                .bind(&match_ids)
                .execute(&mut *tx)
                .await?;
            let passages = matches.iter().flat_map(|m| {
                let match_id = match_of[&m.work_id];
                m.evidence
                    .iter()
                    .enumerate()
                    .map(move |(ordinal, passage)| (match_id, ordinal as i64, *passage))
            });
            let mut columns: [Vec<i64>; 6] = Default::default();
            for (match_id, ordinal, passage) in passages {
                for (column, value) in columns.iter_mut().zip([
                    match_id,
                    ordinal,
                    i64::from(passage.page_start),
                    i64::from(passage.page_end),
                    i64::from(passage.work_start),
                    i64::from(passage.work_end),
                ]) {
                    column.push(value);
                }
            }
            if !columns[0].is_empty() {
                let [
                    match_id,
                    ordinal,
                    page_start,
                    page_end,
                    work_start,
                    work_end,
                ] = columns;
                sqlx::query(
                    "INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, \
                     work_end) SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], \
                     $4::bigint[], $5::bigint[], $6::bigint[])",
                )
                .bind(match_id)
                .bind(ordinal)
                .bind(page_start)
                .bind(page_end)
                .bind(work_start)
                .bind(work_end)
                .execute(&mut *tx)
                .await?;
            }
        }

        sqlx::query("DELETE FROM matches WHERE id = ANY($1)")
            .bind(&plan.delete)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE matches SET status = 'removed', removed_at = $2 WHERE id = ANY($1)")
            .bind(&plan.remove)
            .bind(last_seen)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE matches SET status = 'open', removed_at = NULL WHERE id = ANY($1)")
            .bind(&plan.reopen)
            .execute(&mut *tx)
            .await?;
        if let Some((availability, detail)) = &plan.check {
            sqlx::query(
                "INSERT INTO page_checks (page_id, run_id, checked_at, availability, \
                 http_status, detail) VALUES ($1, NULL, $2, $3, $4, $5)",
            )
            .bind(page_id)
            .bind(last_seen)
            .bind(availability.as_str())
            .bind(http_status)
            .bind(detail)
            .execute(&mut *tx)
            .await?;
            if last_checked.is_none_or(|last| last <= last_seen) {
                sqlx::query(
                    "UPDATE pages SET availability = $2, availability_checked_at = $3 \
                     WHERE id = $1",
                )
                .bind(page_id)
                .bind(availability.as_str())
                .bind(last_seen)
                .execute(&mut *tx)
                .await?;
            }
        }
        // Earlier texts no evidence points into any more are let go.
        sqlx::query(
            "DELETE FROM page_texts WHERE page_id = $1 AND (content_hash = $2 OR \
             content_hash NOT IN (SELECT evidence_hash FROM matches WHERE page_id = $1))",
        )
        .bind(page_id)
        .bind(content_hash)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE pages SET matched_hash = $2 WHERE id = $1")
            .bind(page_id)
            .bind(content_hash)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn list_matches(&self, filter: &MatchFilter) -> Result<Vec<MatchRecord>> {
        // One statement (not one per match) so the listing is a consistent snapshot.
        let rows = sqlx::query_as::<_, MatchEvidenceRow>(
            "SELECT m.id, m.page_id, p.url AS page_url, p.title AS page_title, m.work_id, \
                    w.external_id AS work_external_id, w.title AS work_title, \
                    w.rights_holder_id, m.score, m.coverage, m.containment, m.copied_chars, \
                    m.method, m.status, m.first_seen, m.last_seen, m.removed_at, \
                    m.evidence_hash, e.page_start, e.page_end, e.work_start, e.work_end \
             FROM matches m \
             JOIN pages p ON p.id = m.page_id \
             JOIN works w ON w.id = m.work_id \
             LEFT JOIN evidence e ON e.match_id = m.id \
             WHERE ($1::bigint IS NULL OR w.rights_holder_id = $1) \
               AND ($2::bigint IS NULL OR m.work_id = $2) \
             ORDER BY p.url, w.external_id, m.id, e.ordinal",
        )
        .bind(filter.rights_holder_id)
        .bind(filter.work_id)
        .fetch_all(&self.pool)
        .await?;

        let mut records: Vec<MatchRecord> = Vec::new();
        for row in rows {
            match records.last_mut() {
                Some(last) if last.id == row.id => last.evidence.extend(row.passage()?),
                _ => records.push(row.into_model()?),
            }
        }
        Ok(records)
    }

    async fn set_match_status(&self, match_id: Id, status: MatchStatus) -> Result<()> {
        // removed_at belongs to the removed status: any other status clears it.
        let done = sqlx::query(
            "UPDATE matches SET status = $2, \
             removed_at = CASE WHEN $2::text = 'removed' THEN removed_at END WHERE id = $1",
        )
        .bind(match_id)
        .bind(status.as_str())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("match {match_id}")));
        }
        Ok(())
    }

    // ----- jobs -----

    async fn enqueue_job(&self, job: &NewJob) -> Result<Id> {
        validate_job(job)?;
        let Some(key) = &job.dedup_key else {
            let mut conn = self.pool.acquire().await?;
            return insert_job(&mut conn, job).await;
        };
        let pending = || {
            sqlx::query_scalar::<_, i64>(
                "SELECT id FROM jobs WHERE md5(dedup_key) = md5($1) AND dedup_key = $1 \
                 AND state IN ('queued', 'running')",
            )
            .bind(key)
        };
        for _ in 0..ATTEMPTS {
            if let Some(id) = pending().fetch_optional(&self.pool).await? {
                return Ok(id);
            }
            // The partial unique index decides between concurrent enqueuers of one key.
            let inserted: Option<i64> = sqlx::query_scalar(
                "INSERT INTO jobs (kind, payload, dedup_key, state, attempts, max_attempts, \
                 run_at, created_at, updated_at) \
                 VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $6) \
                 ON CONFLICT (md5(dedup_key)) \
                   WHERE dedup_key IS NOT NULL AND state IN ('queued', 'running') \
                 DO NOTHING RETURNING id",
            )
            .bind(&job.kind)
            .bind(&job.payload)
            .bind(key)
            .bind(i64::from(job.max_attempts))
            .bind(stored(job.run_at))
            .bind(now())
            .fetch_optional(&self.pool)
            .await?;
            if let Some(id) = inserted {
                return Ok(id);
            }
            // Another enqueuer won; the next round returns its job (or, if that job finished
            // in between, enqueues again).
        }
        Err(StoreError::Invalid(format!(
            "{} job with dedup key {key:?} cannot be enqueued: another pending job's key has \
             the same MD5 digest",
            job.kind
        )))
    }

    async fn claim_job(
        &self,
        kinds: &[&str],
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Option<Job>> {
        if kinds.is_empty() {
            return Ok(None);
        }
        let lease_until = stored(lease_until(now, lease)?);
        let now = stored(now);
        let mut tx = self.begin().await?;

        // A worker that died during the last allowed attempt must not earn the job another one.
        sqlx::query(
            "UPDATE jobs SET state = 'dead', lease_until = NULL, updated_at = $2, \
             last_error = 'lease expired during the last allowed attempt' \
             WHERE state = 'running' AND lease_until <= $2 AND attempts >= max_attempts \
               AND kind = ANY($1)",
        )
        .bind(kinds)
        .bind(now)
        .execute(&mut *tx)
        .await?;

        // The oldest due job nobody else is taking right now: rows locked by another claimer
        // are skipped, not waited for, and re-checked after locking, so no job is taken twice.
        let row = sqlx::query_as::<_, JobRow>(concat!(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = $3, \
             updated_at = $2 \
             WHERE id = ( \
               SELECT id FROM jobs \
               WHERE kind = ANY($1) \
                 AND ((state = 'queued' AND run_at <= $2) \
                   OR (state = 'running' AND lease_until <= $2 \
                       AND attempts < max_attempts)) \
               ORDER BY run_at, id LIMIT 1 \
               FOR UPDATE SKIP LOCKED) \
             RETURNING ",
            job_columns!()
        ))
        .bind(kinds)
        .bind(now)
        .bind(lease_until)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        row.map(JobRow::into_model).transpose()
    }

    async fn complete_job(&self, lease: JobLease) -> Result<()> {
        let done = sqlx::query(
            "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = $3 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&self.pool, lease).await);
        }
        Ok(())
    }

    async fn fail_job(&self, lease: JobLease, error: &str, retry_at: DateTime<Utc>) -> Result<()> {
        let done = sqlx::query(
            "UPDATE jobs SET \
               state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
               run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE $3 END, \
               lease_until = NULL, last_error = $4, updated_at = $5 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(stored(retry_at))
        .bind(error)
        .bind(now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&self.pool, lease).await);
        }
        Ok(())
    }

    async fn renew_job_lease(&self, lease: JobLease, lease_until: DateTime<Utc>) -> Result<()> {
        let done = sqlx::query(
            "UPDATE jobs SET lease_until = $3, updated_at = $4 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(stored(lease_until))
        .bind(now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&self.pool, lease).await);
        }
        Ok(())
    }

    async fn release_job(&self, lease: JobLease, run_at: DateTime<Utc>) -> Result<()> {
        let done = sqlx::query(
            "UPDATE jobs SET state = 'queued', attempts = attempts - 1, run_at = $3, \
               lease_until = NULL, updated_at = $4 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(stored(run_at))
        .bind(now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&self.pool, lease).await);
        }
        Ok(())
    }

    async fn requeue_dead_job(&self, job_id: Id, run_at: DateTime<Utc>) -> Result<()> {
        let requeued = sqlx::query(
            "UPDATE jobs SET state = 'queued', attempts = 0, run_at = $2, lease_until = NULL, \
               updated_at = $3 WHERE id = $1 AND state = 'dead'",
        )
        .bind(job_id)
        .bind(stored(run_at))
        .bind(now())
        .execute(&self.pool)
        .await;
        match requeued {
            Ok(done) if done.rows_affected() == 1 => Ok(()),
            Ok(_) => {
                let state: Option<String> =
                    sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
                        .bind(job_id)
                        .fetch_optional(&self.pool)
                        .await?;
                Err(match state {
                    None => StoreError::NotFound(format!("job {job_id}")),
                    Some(state) => StoreError::Invalid(format!(
                        "job {job_id} is {state}; only dead jobs are requeued"
                    )),
                })
            }
            // A pending job with the same dedup key took its place meanwhile.
            Err(error) if is_unique_violation(&error) => Err(StoreError::Invalid(format!(
                "job {job_id} cannot be requeued: another pending job has its dedup key"
            ))),
            Err(error) => Err(error.into()),
        }
    }

    async fn get_job(&self, job_id: Id) -> Result<Job> {
        sqlx::query_as::<_, JobRow>(concat!(
            "SELECT ",
            job_columns!(),
            " FROM jobs WHERE id = $1"
        ))
        .bind(job_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("job {job_id}")))?
        .into_model()
    }

    async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>> {
        sqlx::query_as::<_, JobRow>(concat!(
            "SELECT ",
            job_columns!(),
            " FROM jobs WHERE ($1::text IS NULL OR kind = $1) \
               AND ($2::text IS NULL OR state = $2) ORDER BY id DESC LIMIT $3"
        ))
        .bind(&filter.kind)
        .bind(filter.state.map(JobState::as_str))
        .bind(filter.limit.map(i64::from))
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(JobRow::into_model)
        .collect()
    }

    async fn job_counts(&self) -> Result<Vec<JobCount>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state \
             ORDER BY kind COLLATE \"C\", state COLLATE \"C\"",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(kind, state, count)| rules::job_count(kind, &state, count))
            .collect()
    }

    // ----- leadership -----

    async fn try_lead(
        &self,
        name: &str,
        ttl: chrono::Duration,
    ) -> Result<Option<Box<dyn Leadership>>> {
        // The lock ends with its session, so PostgreSQL needs no ttl; it is still validated so
        // that both backends refuse the same arguments.
        rules::positive_micros(ttl, "leadership ttl")?;
        let key = advisory_key(name);
        let mut connection = self.pool.acquire().await?.detach();
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(key)
            .fetch_one(&mut connection)
            .await?;
        if !locked {
            let _ = connection.close().await;
            return Ok(None);
        }
        Ok(Some(Box::new(PostgresLeadership {
            connection: Some(connection),
            key,
        })))
    }

    // ----- schedules -----

    async fn create_schedule(&self, schedule: &NewSchedule) -> Result<Id> {
        let name = validate_schedule(schedule)?;
        let mut conn = self.pool.acquire().await?;
        insert_schedule(&mut conn, name, schedule)
            .await?
            .ok_or_else(|| StoreError::Invalid(format!("schedule {name:?} already exists")))
    }

    async fn ensure_schedule(&self, schedule: &NewSchedule) -> Result<Id> {
        let name = validate_schedule(schedule)?;
        for _ in 0..ATTEMPTS {
            let mut tx = self.begin().await?;
            let existing = sqlx::query_as::<_, ScheduleRow>(concat!(
                schedule_select!(),
                " WHERE name = $1 FOR NO KEY UPDATE"
            ))
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
            let id = match existing {
                None => match insert_schedule(&mut tx, name, schedule).await? {
                    Some(id) => id,
                    None => {
                        // A concurrent caller created it first: start over, comparing with it.
                        tx.rollback().await?;
                        continue;
                    }
                },
                Some(row) => {
                    let stored = row.into_model()?;
                    if stored.kind != schedule.kind {
                        return Err(rules::schedule_kind_mismatch(
                            name,
                            stored.kind,
                            schedule.kind,
                        ));
                    }
                    if rules::schedule_differs(&stored, schedule) {
                        sqlx::query(
                            "UPDATE schedules SET cron = $2, timezone = $3, seeds = $4, \
                             config = $5, owner = $6, updated_at = $7 WHERE id = $1",
                        )
                        .bind(stored.id)
                        .bind(schedule.cron.trim())
                        .bind(schedule.timezone.trim())
                        .bind(Json(&schedule.seeds))
                        .bind(&schedule.config)
                        .bind(&schedule.owner)
                        .bind(now())
                        .execute(&mut *tx)
                        .await?;
                    }
                    stored.id
                }
            };
            tx.commit().await?;
            return Ok(id);
        }
        Err(StoreError::Invalid(format!(
            "schedule {name:?} kept being created and deleted concurrently; try again"
        )))
    }

    async fn list_schedules(&self) -> Result<Vec<Schedule>> {
        sqlx::query_as::<_, ScheduleRow>(concat!(schedule_select!(), " ORDER BY name"))
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(ScheduleRow::into_model)
            .collect()
    }

    async fn get_schedule_by_name(&self, name: &str) -> Result<Schedule> {
        let name = name.trim();
        sqlx::query_as::<_, ScheduleRow>(concat!(schedule_select!(), " WHERE name = $1"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("schedule {name:?}")))?
            .into_model()
    }

    async fn set_schedule_enabled(&self, id: Id, enabled: bool) -> Result<()> {
        // Only a change of the flag is a change of the schedule.
        let done = sqlx::query(
            "UPDATE schedules SET enabled = $2, \
             updated_at = CASE WHEN enabled = $2 THEN updated_at ELSE $3 END WHERE id = $1",
        )
        .bind(id)
        .bind(enabled)
        .bind(now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("schedule {id}")));
        }
        Ok(())
    }

    async fn delete_schedule(&self, id: Id) -> Result<()> {
        let done = sqlx::query("DELETE FROM schedules WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("schedule {id}")));
        }
        Ok(())
    }

    async fn fire_schedule(&self, fire: &ScheduleFire) -> Result<Option<FiredRun>> {
        rules::validate_fire(fire)?;
        let mut tx = self.begin().await?;
        // The compare-and-set. Concurrent firers queue on the schedule's row lock; once the
        // winner commits, each re-evaluates the condition against the row the winner wrote,
        // finds `last_fired_at` moved, and updates nothing.
        let moved = sqlx::query(
            "UPDATE schedules SET last_fired_at = $2 \
             WHERE id = $1 AND enabled AND last_fired_at IS NOT DISTINCT FROM $3",
        )
        .bind(fire.schedule_id)
        .bind(stored(fire.scheduled_for))
        .bind(fire.expected_last_fired_at.map(stored))
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            exists(&mut tx, Referenced::Schedule, fire.schedule_id).await?;
            tx.rollback().await?;
            return Ok(None);
        }
        let job_id = insert_job(&mut tx, &fire.job).await?;
        let run_id = insert_run(&mut tx, &fire.run, Some(job_id)).await?;
        tx.commit().await?;
        Ok(Some(FiredRun { run_id, job_id }))
    }

    // ----- runs -----

    async fn create_run(&self, run: &NewRun, job: Option<&NewJob>) -> Result<(Id, Option<Id>)> {
        if let Some(job) = job {
            rules::validate_run_job(job)?;
        }
        let mut tx = self.begin().await?;
        if let Some(schedule_id) = run.schedule_id {
            // Locked (key share, as the foreign key would) so it cannot vanish before the insert.
            let found: Option<i64> =
                sqlx::query_scalar("SELECT id FROM schedules WHERE id = $1 FOR KEY SHARE")
                    .bind(schedule_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            if found.is_none() {
                return Err(StoreError::NotFound(format!("schedule {schedule_id}")));
            }
        }
        let job_id = match job {
            Some(job) => Some(insert_job(&mut tx, job).await?),
            None => None,
        };
        let run_id = insert_run(&mut tx, run, job_id).await?;
        tx.commit().await?;
        Ok((run_id, job_id))
    }

    async fn get_run(&self, id: Id) -> Result<Run> {
        let mut conn = self.pool.acquire().await?;
        fetch_run(&mut conn, id).await
    }

    async fn run_for_job(&self, job_id: Id) -> Result<Option<Run>> {
        sqlx::query_as::<_, RunRow>(concat!(
            run_select!(),
            " WHERE r.job_id = $1 ORDER BY r.id LIMIT 1"
        ))
        .bind(job_id)
        .fetch_optional(&self.pool)
        .await?
        .map(RunRow::into_model)
        .transpose()
    }

    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<Run>> {
        sqlx::query_as::<_, RunRow>(concat!(
            run_select!(),
            " WHERE ($1::text IS NULL OR r.kind = $1) \
               AND ($2::bigint IS NULL OR r.schedule_id = $2) \
               AND ($3::text IS NULL OR r.state = $3) ORDER BY r.id DESC LIMIT $4"
        ))
        .bind(filter.kind.map(RunKind::as_str))
        .bind(filter.schedule_id)
        .bind(filter.state.map(RunState::as_str))
        .bind(filter.limit.map(i64::from))
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(RunRow::into_model)
        .collect()
    }

    async fn last_succeeded_run(&self, kind: RunKind) -> Result<Option<Run>> {
        sqlx::query_as::<_, RunRow>(concat!(
            run_select!(),
            " WHERE r.kind = $1 AND r.state = 'succeeded' \
             ORDER BY r.started_at DESC NULLS LAST, r.id DESC LIMIT 1"
        ))
        .bind(kind.as_str())
        .fetch_optional(&self.pool)
        .await?
        .map(RunRow::into_model)
        .transpose()
    }

    async fn start_run(&self, id: Id, at: DateTime<Utc>) -> Result<Run> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "UPDATE runs SET state = 'running', started_at = $2 \
             WHERE id = $1 AND state = 'queued' AND NOT cancel_requested",
        )
        .bind(id)
        .bind(stored(at))
        .execute(&mut *tx)
        .await?;
        let run = fetch_run(&mut tx, id).await?;
        tx.commit().await?;
        Ok(run)
    }

    async fn update_run_progress(
        &self,
        id: Id,
        counts: &RunCounts,
        stats: &serde_json::Value,
    ) -> Result<bool> {
        let [pages_checked, new_matches, matches_removed, errors] =
            rules::run_counts_to_db(counts)?;
        let cancel: Option<bool> = sqlx::query_scalar(
            "UPDATE runs SET pages_checked = $2, new_matches = $3, matches_removed = $4, \
             errors = $5, stats = $6 WHERE id = $1 AND state = 'running' \
             RETURNING cancel_requested",
        )
        .bind(id)
        .bind(pages_checked)
        .bind(new_matches)
        .bind(matches_removed)
        .bind(errors)
        .bind(stats)
        .fetch_optional(&self.pool)
        .await?;
        match cancel {
            Some(cancel) => Ok(cancel),
            None => {
                // Not running (any more): the worker must stop.
                let mut conn = self.pool.acquire().await?;
                exists(&mut conn, Referenced::Run, id).await?;
                Ok(true)
            }
        }
    }

    async fn finish_run(
        &self,
        id: Id,
        state: RunState,
        counts: &RunCounts,
        stats: &serde_json::Value,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<()> {
        rules::validate_run_end(id, state)?;
        let [pages_checked, new_matches, matches_removed, errors] =
            rules::run_counts_to_db(counts)?;
        let done = sqlx::query(
            "UPDATE runs SET state = $2, pages_checked = $3, new_matches = $4, \
             matches_removed = $5, errors = $6, stats = $7, error = $8, finished_at = $9 \
             WHERE id = $1",
        )
        .bind(id)
        .bind(state.as_str())
        .bind(pages_checked)
        .bind(new_matches)
        .bind(matches_removed)
        .bind(errors)
        .bind(stats)
        .bind(error)
        .bind(stored(at))
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run {id}")));
        }
        Ok(())
    }

    async fn request_run_cancel(&self, id: Id, at: DateTime<Utc>) -> Result<RunState> {
        // A queued run ends here; a running one is asked to stop by its worker. The conditions
        // are re-checked against the latest row if another writer changed it meanwhile.
        let state: Option<String> = sqlx::query_scalar(
            "UPDATE runs SET \
               state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, \
               finished_at = CASE WHEN state = 'queued' THEN $2 ELSE finished_at END, \
               cancel_requested = (state = 'running') OR cancel_requested \
             WHERE id = $1 AND state IN ('queued', 'running') RETURNING state",
        )
        .bind(id)
        .bind(stored(at))
        .fetch_optional(&self.pool)
        .await?;
        if let Some(state) = state {
            return rules::run_state(&state);
        }
        let ended: Option<String> = sqlx::query_scalar("SELECT state FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Err(match ended {
            None => StoreError::NotFound(format!("run {id}")),
            Some(state) => rules::run_already_ended(id, &state),
        })
    }

    // ----- removal checks -----

    async fn infringing_pages(&self, after_id: Id, limit: u32) -> Result<Vec<InfringingPage>> {
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
        .fetch_all(&self.pool)
        .await?;
        Ok(rules::group_infringing_pages(rows))
    }

    async fn infringing_page(&self, url: &str) -> Result<Option<InfringingPage>> {
        let (url, _) = page_key(url)?;
        let rows: Vec<rules::InfringingRow> = sqlx::query_as(
            "SELECT p.id, p.url, p.content_hash, p.etag, p.last_modified, m.work_id, \
             m.evidence_hash FROM pages p \
             JOIN matches m ON m.page_id = p.id AND m.status <> 'dismissed' \
             WHERE md5(p.url) = md5($1) AND p.url = $1 ORDER BY m.work_id",
        )
        .bind(&url)
        .fetch_all(&self.pool)
        .await?;
        Ok(rules::group_infringing_pages(rows).pop())
    }

    async fn record_page_check(&self, check: &PageCheck) -> Result<PageCheckOutcome> {
        rules::validate_page_check(check)?;
        let checked_at = stored(check.checked_at);
        let mut tx = self.begin().await?;
        // Locking the page orders concurrent checks of it (and a match recording) one after
        // the other, so "is this the latest check" is answered against committed data.
        let page: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
            "SELECT availability_checked_at FROM pages WHERE id = $1 FOR NO KEY UPDATE",
        )
        .bind(check.page_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(last_checked) = page else {
            return Err(StoreError::NotFound(format!("page {}", check.page_id)));
        };
        if let Some(run_id) = check.run_id {
            exists(&mut tx, Referenced::Run, run_id).await?;
        }
        sqlx::query(
            "INSERT INTO page_checks (page_id, run_id, checked_at, availability, http_status, \
             detail) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(check.page_id)
        .bind(check.run_id)
        .bind(checked_at)
        .bind(check.availability.as_str())
        .bind(check.http_status.map(i64::from))
        .bind(&check.detail)
        .execute(&mut *tx)
        .await?;

        let mut outcome = PageCheckOutcome::default();
        // A check older than the page's latest one is history only: its verdict was superseded.
        if last_checked.is_none_or(|last| last <= checked_at) {
            sqlx::query(
                "UPDATE pages SET availability = $2, availability_checked_at = $3 WHERE id = $1",
            )
            .bind(check.page_id)
            .bind(check.availability.as_str())
            .bind(checked_at)
            .execute(&mut *tx)
            .await?;
            outcome.removed = sqlx::query(
                "UPDATE matches SET status = 'removed', removed_at = $3 \
                 WHERE page_id = $1 AND status IN ('open', 'notice_sent') \
                   AND work_id = ANY($2)",
            )
            .bind(check.page_id)
            .bind(&check.removed)
            .bind(checked_at)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            outcome.reopened = sqlx::query(
                "UPDATE matches SET status = 'open', removed_at = NULL \
                 WHERE page_id = $1 AND status = 'removed' AND work_id = ANY($2)",
            )
            .bind(check.page_id)
            .bind(&check.still_present)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        }
        tx.commit().await?;
        Ok(outcome)
    }

    async fn page_checks(&self, page_id: Id) -> Result<Vec<PageCheckRecord>> {
        sqlx::query_as::<_, PageCheckRow>(
            "SELECT id, page_id, run_id, checked_at, availability, http_status, detail \
             FROM page_checks WHERE page_id = $1 ORDER BY checked_at, id",
        )
        .bind(page_id)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(PageCheckRow::into_model)
        .collect()
    }

    // ----- users -----

    async fn create_user(&self, user: &NewUser) -> Result<Id> {
        let email = validate_user(user)?;
        let mut tx = self.begin().await?;
        if let Some(holder) = user.rights_holder_id {
            exists(&mut tx, Referenced::RightsHolder, holder).await?;
        }
        let result = sqlx::query_scalar(
            "INSERT INTO users (email, password_hash, role, rights_holder_id, created_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(&email)
        .bind(&user.password_hash)
        .bind(user.role.as_str())
        .bind(user.rights_holder_id)
        .bind(now())
        .fetch_one(&mut *tx)
        .await;
        let id = match result {
            Ok(id) => id,
            Err(error) if is_unique_violation(&error) => {
                return Err(StoreError::Invalid(format!(
                    "user {email:?} already exists"
                )));
            }
            Err(error) => return Err(error.into()),
        };
        tx.commit().await?;
        Ok(id)
    }

    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>> {
        let Some(email) = normalize_email(email) else {
            return Ok(None);
        };
        sqlx::query_as::<_, UserRow>(
            "SELECT id, email, password_hash, role, rights_holder_id, created_at FROM users \
             WHERE email = $1",
        )
        .bind(email)
        .fetch_optional(&self.pool)
        .await?
        .map(UserRow::into_model)
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_migrations_mirror_the_sqlite_ones_one_for_one() {
        let steps = |migrator: &sqlx::migrate::Migrator| {
            migrator
                .iter()
                .map(|m| (m.version, m.description.to_string()))
                .collect::<Vec<_>>()
        };
        let postgres = steps(&super::MIGRATOR);
        assert_eq!(postgres, steps(&crate::sqlite::MIGRATOR));
        assert_eq!(
            postgres.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn stored_timestamps_are_truncated_to_whole_microseconds() {
        use chrono::TimeZone;
        let at = chrono::Utc
            .timestamp_opt(1_780_000_000, 123_456_789)
            .unwrap();
        assert_eq!(super::stored(at).timestamp_subsec_nanos(), 123_456_000);
        let before_1970 = chrono::Utc.timestamp_opt(-10, 999_999_999).unwrap();
        assert_eq!(
            super::stored(before_1970).timestamp_subsec_nanos(),
            999_999_000,
            "truncated towards the past, as SQLite's integer microseconds are"
        );
    }
}
