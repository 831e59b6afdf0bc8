//! The embedded backend: one SQLite file, no server.
//!
//! Design decisions, each chosen so the PostgreSQL backend can keep the same semantics:
//!
//! * **Write transactions start with `BEGIN IMMEDIATE`.** A deferred SQLite transaction that
//!   reads and then writes fails with `SQLITE_BUSY` when another writer got there first, and the
//!   busy timeout cannot help it; taking the write lock up front makes writers queue instead.
//!   It also makes every read-then-write (upserts, job dedup) race-free, which PostgreSQL gets
//!   from unique constraints and `FOR UPDATE SKIP LOCKED`.
//! * **Timestamps are `INTEGER` microseconds since the epoch (UTC).** They sort and compare as
//!   numbers, cannot be mis-parsed, and have exactly `timestamptz`'s resolution.
//! * **SimHash values are stored as the `i64` bit pattern** of the `u64` (`as` casts both ways),
//!   because SQLite integers are signed 64-bit.
//! * **WAL journal, foreign keys on, 5 s busy timeout**: readers never block the writer, cascades
//!   work, and short lock waits are absorbed instead of surfacing as errors.
//! * **Only runtime queries** (`sqlx::query*` with `$n` parameters): a clean checkout builds
//!   without a database, and the SQL stays close to what PostgreSQL accepts.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{FromRow, Sqlite, SqliteConnection, Transaction};

use crate::rules::{
    self, PreviousMatch, Referenced, from_json, is_unique_violation, lease_until,
    new_algorithm_versions, normalize_email, page_key, to_json, to_u32, to_u64, validate_job,
    validate_matches, validate_schedule, validate_user, validate_work,
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

/// The SQLite migrations, embedded at compile time so the binary needs no files beside it.
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// How long a statement waits for another connection's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections for a file database: WAL lets readers run beside the single writer.
const FILE_POOL_SIZE: u32 = 8;

/// [`Store`] on a SQLite database file (or an in-memory database for throw-away runs).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens the database named by `url`, creating the file if it does not exist yet.
    ///
    /// Accepted forms: `sqlite://PATH`, `sqlite:PATH` (relative or absolute; `sqlite:///abs`
    /// works too) and `sqlite::memory:`. Query parameters are refused because the store sets
    /// the connection options itself. The schema is not touched: call [`Store::migrate`].
    ///
    /// An in-memory database lives exactly as long as this store (one connection that is never
    /// recycled), and every call gets a fresh, private one.
    pub async fn connect(url: &str) -> Result<SqliteStore> {
        let target = parse_url(url)?;
        let pool = match target {
            Target::Memory => {
                let options = SqliteConnectOptions::from_str("sqlite::memory:")?
                    .foreign_keys(true)
                    .busy_timeout(BUSY_TIMEOUT);
                // The database vanishes with its last connection, so keep exactly one forever.
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(options)
                    .await?
            }
            Target::File(options) => {
                let options = (*options)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .foreign_keys(true)
                    .busy_timeout(BUSY_TIMEOUT);
                SqlitePoolOptions::new()
                    .max_connections(FILE_POOL_SIZE)
                    .connect_with(options)
                    .await?
            }
        };
        tracing::debug!(url = %redact_url(url), "connected to SQLite");
        Ok(SqliteStore { pool })
    }

    /// Closes every connection, checkpointing the WAL into the database file. Call it on
    /// shutdown so the file is self-contained afterwards; later calls on the store fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Starts a transaction holding the write lock from its first statement.
    async fn write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

/// What a database URL points at.
enum Target {
    Memory,
    File(Box<SqliteConnectOptions>),
}

/// Checks the URL shape ourselves: sqlx's parser strips any prefix it knows and treats the rest
/// as a file name, so `postgres://...` would silently become a strange SQLite file.
fn parse_url(url: &str) -> Result<Target> {
    let invalid = |reason: &str| StoreError::InvalidUrl {
        url: redact_url(url),
        reason: reason.to_owned(),
    };
    let scheme = url.get(..7).filter(|s| s.eq_ignore_ascii_case("sqlite:"));
    if scheme.is_none() {
        return Err(invalid(
            "expected a SQLite URL: sqlite://PATH, sqlite:PATH or sqlite::memory:",
        ));
    }
    let rest = &url[7..];
    let path = rest.strip_prefix("//").unwrap_or(rest);
    if path.contains('?') {
        return Err(invalid(
            "query parameters are not supported (the store sets journal mode, foreign keys and \
             timeouts itself); percent-encode a '?' that belongs to the file name",
        ));
    }
    if path.is_empty() {
        return Err(invalid("the database file path is missing"));
    }
    if path == ":memory:" {
        return Ok(Target::Memory);
    }
    // sqlx percent-decodes the path; that is the only way this can still fail.
    SqliteConnectOptions::from_str(&format!("sqlite://{path}"))
        .map(|options| Target::File(Box::new(options)))
        .map_err(|error| invalid(&format!("the file path cannot be decoded: {error}")))
}

// ----- conversions -----

/// Database form of a timestamp. Sub-microsecond parts are dropped (see the crate docs).
fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

fn from_micros(value: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored timestamp {value} is out of range")))
}

fn from_opt_micros(value: Option<i64>) -> Result<Option<DateTime<Utc>>> {
    value.map(from_micros).transpose()
}

/// The clock for rows the caller does not timestamp itself, at stored precision.
fn now_micros() -> i64 {
    micros(Utc::now())
}

// ----- rows -----

#[derive(FromRow)]
struct RightsHolderRow {
    id: i64,
    name: String,
    created_at: i64,
}

impl RightsHolderRow {
    fn into_model(self) -> Result<RightsHolder> {
        Ok(RightsHolder {
            id: self.id,
            name: self.name,
            created_at: from_micros(self.created_at)?,
        })
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
    created_at: i64,
    updated_at: i64,
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
            created_at: from_micros(self.created_at)?,
            updated_at: from_micros(self.updated_at)?,
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
    created_at: i64,
}

impl SiteRow {
    fn into_model(self) -> Result<Site> {
        Ok(Site {
            id: self.id,
            host: self.host,
            created_at: from_micros(self.created_at)?,
        })
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
/// word for word, which is what lets SQLite use it.
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
    first_seen: i64,
    last_seen: i64,
    matched_hash: Option<String>,
    availability: Option<String>,
    availability_checked_at: Option<i64>,
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
            first_seen: from_micros(self.first_seen)?,
            last_seen: from_micros(self.last_seen)?,
            matched_hash: self.matched_hash,
            availability: self
                .availability
                .as_deref()
                .map(rules::availability)
                .transpose()?,
            availability_checked_at: from_opt_micros(self.availability_checked_at)?,
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
    first_seen: i64,
    last_seen: i64,
    removed_at: Option<i64>,
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
            first_seen: from_micros(self.first_seen)?,
            last_seen: from_micros(self.last_seen)?,
            removed_at: from_opt_micros(self.removed_at)?,
            evidence_hash: self.evidence_hash,
            evidence,
        })
    }
}

#[derive(FromRow)]
struct JobRow {
    id: i64,
    kind: String,
    payload: String,
    state: String,
    attempts: i64,
    max_attempts: i64,
    run_at: i64,
    lease_until: Option<i64>,
    last_error: Option<String>,
    dedup_key: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl JobRow {
    fn into_model(self) -> Result<Job> {
        Ok(Job {
            id: self.id,
            kind: self.kind,
            payload: from_json(&self.payload, "job payload")?,
            state: JobState::parse(&self.state).ok_or_else(|| {
                StoreError::Invalid(format!("stored job state {:?} is unknown", self.state))
            })?,
            attempts: to_u32(self.attempts, "job attempts")?,
            max_attempts: to_u32(self.max_attempts, "job max attempts")?,
            run_at: from_micros(self.run_at)?,
            lease_until: from_opt_micros(self.lease_until)?,
            last_error: self.last_error,
            dedup_key: self.dedup_key,
            created_at: from_micros(self.created_at)?,
            updated_at: from_micros(self.updated_at)?,
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
    seeds: String,
    config: String,
    enabled: bool,
    owner: Option<String>,
    last_fired_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl ScheduleRow {
    fn into_model(self) -> Result<Schedule> {
        Ok(Schedule {
            id: self.id,
            name: self.name,
            kind: rules::run_kind(&self.kind)?,
            cron: self.cron,
            timezone: self.timezone,
            seeds: from_json(&self.seeds, "schedule seeds")?,
            config: from_json(&self.config, "schedule config")?,
            enabled: self.enabled,
            owner: self.owner,
            last_fired_at: from_opt_micros(self.last_fired_at)?,
            created_at: from_micros(self.created_at)?,
            updated_at: from_micros(self.updated_at)?,
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
    scheduled_for: Option<i64>,
    created_at: i64,
    started_at: Option<i64>,
    finished_at: Option<i64>,
    pages_checked: i64,
    new_matches: i64,
    matches_removed: i64,
    errors: i64,
    stats: String,
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
            scheduled_for: from_opt_micros(self.scheduled_for)?,
            created_at: from_micros(self.created_at)?,
            started_at: from_opt_micros(self.started_at)?,
            finished_at: from_opt_micros(self.finished_at)?,
            counts: rules::run_counts(
                self.pages_checked,
                self.new_matches,
                self.matches_removed,
                self.errors,
            )?,
            stats: from_json(&self.stats, "run stats")?,
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
    checked_at: i64,
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
            checked_at: from_micros(self.checked_at)?,
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
    created_at: i64,
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
            created_at: from_micros(self.created_at)?,
        })
    }
}

// ----- transaction helpers -----

/// `NotFound` naming the row unless it exists.
async fn exists(conn: &mut SqliteConnection, what: Referenced, id: Id) -> Result<()> {
    let found: Option<i64> = sqlx::query_scalar(what.query())
        .bind(id)
        .fetch_optional(conn)
        .await?;
    found.map(|_| ()).ok_or_else(|| what.not_found(id))
}

async fn insert_segments(conn: &mut SqliteConnection, work_id: Id, work: &NewWork) -> Result<()> {
    for segment in &work.segments {
        sqlx::query(
            "INSERT INTO work_segments (work_id, ordinal, start_offset, end_offset, simhash) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(work_id)
        .bind(i64::from(segment.ordinal))
        .bind(i64::from(segment.start))
        .bind(i64::from(segment.end))
        .bind(segment.simhash as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn insert_fingerprints(
    conn: &mut SqliteConnection,
    work_id: Id,
    work: &NewWork,
) -> Result<()> {
    for fingerprint in &work.fingerprints {
        sqlx::query(
            "INSERT INTO work_fingerprints (work_id, algorithm, version, fingerprint) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(work_id)
        .bind(&fingerprint.algorithm)
        .bind(i64::from(fingerprint.version))
        .bind(fingerprint.fingerprint.to_string())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `(algorithm, version)` of a stored work's fingerprints, ordered by algorithm.
async fn algorithm_versions(
    conn: &mut SqliteConnection,
    work_id: Id,
) -> Result<Vec<(String, u32)>> {
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

/// Leadership held through a row of `leader_leases`, renewed by [`Leadership::confirm`].
struct SqliteLeadership {
    pool: SqlitePool,
    name: String,
    holder: String,
    ttl_micros: i64,
}

#[async_trait]
impl Leadership for SqliteLeadership {
    async fn confirm(&mut self) -> Result<bool> {
        let now = now_micros();
        let renewed = sqlx::query(
            "UPDATE leader_leases SET lease_until = $3 \
             WHERE name = $1 AND holder = $2 AND lease_until > $4",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(now.saturating_add(self.ttl_micros))
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(renewed.rows_affected() == 1)
    }

    async fn resign(self: Box<Self>) -> Result<()> {
        sqlx::query("DELETE FROM leader_leases WHERE name = $1 AND holder = $2")
            .bind(&self.name)
            .bind(&self.holder)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// Columns of a job; keep in sync with [`JobRow`].
macro_rules! job_columns {
    () => {
        "id, kind, payload, state, attempts, max_attempts, run_at, lease_until, last_error, \
         dedup_key, created_at, updated_at"
    };
}

/// Explains why an update of a claimed job touched no row: the job is missing, or it is no
/// longer running under this claim.
async fn lease_not_current(conn: &mut SqliteConnection, lease: JobLease) -> StoreError {
    let found: std::result::Result<Option<(String, i64)>, sqlx::Error> =
        sqlx::query_as("SELECT state, attempts FROM jobs WHERE id = $1")
            .bind(lease.job_id)
            .fetch_optional(conn)
            .await;
    match found {
        Ok(Some((state, attempts))) => {
            StoreError::LeaseLost(rules::describe_lost_lease(lease, &state, attempts))
        }
        Ok(None) => StoreError::NotFound(format!("job {}", lease.job_id)),
        Err(error) => error.into(),
    }
}

/// Inserts a queued job (the dedup check, when there is a key, is the caller's).
async fn insert_job(conn: &mut SqliteConnection, job: &NewJob) -> Result<Id> {
    let payload = to_json(&job.payload, "job payload")?;
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, dedup_key, state, attempts, max_attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $6) \
         RETURNING id",
    )
    .bind(&job.kind)
    .bind(payload)
    .bind(&job.dedup_key)
    .bind(i64::from(job.max_attempts))
    .bind(micros(job.run_at))
    .bind(now_micros())
    .fetch_one(conn)
    .await?)
}

/// Inserts a run: queued when a job carries it, otherwise running since its creation.
async fn insert_run(conn: &mut SqliteConnection, run: &NewRun, job_id: Option<Id>) -> Result<Id> {
    let created_at = micros(run.created_at);
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
    .bind(run.scheduled_for.map(micros))
    .bind(created_at)
    .bind(started_at)
    .fetch_one(conn)
    .await?)
}

/// Inserts an enabled, never fired schedule; the raw error lets the caller name a duplicate.
async fn insert_schedule(
    conn: &mut SqliteConnection,
    name: &str,
    schedule: &NewSchedule,
) -> Result<std::result::Result<Id, sqlx::Error>> {
    let seeds = to_json(&schedule.seeds, "schedule seeds")?;
    let config = to_json(&schedule.config, "schedule config")?;
    Ok(sqlx::query_scalar(
        "INSERT INTO schedules (name, kind, cron, timezone, seeds, config, enabled, owner, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $8) RETURNING id",
    )
    .bind(name)
    .bind(schedule.kind.as_str())
    .bind(schedule.cron.trim())
    .bind(schedule.timezone.trim())
    .bind(seeds)
    .bind(config)
    .bind(&schedule.owner)
    .bind(now_micros())
    .fetch_one(conn)
    .await)
}

async fn fetch_run(conn: &mut SqliteConnection, id: Id) -> Result<Run> {
    sqlx::query_as::<_, RunRow>(concat!(run_select!(), " WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?
        .into_model()
}

#[async_trait]
impl Store for SqliteStore {
    async fn migrate(&self) -> Result<()> {
        MIGRATOR.run(&self.pool).await?;
        tracing::debug!("SQLite schema is up to date");
        Ok(())
    }

    // ----- fingerprint library -----

    async fn ensure_rights_holder(&self, name: &str) -> Result<Id> {
        let name = name.trim();
        if name.is_empty() {
            return Err(StoreError::Invalid("a rights holder needs a name".into()));
        }
        // Insert-or-ignore then read: correct under concurrency without a transaction.
        sqlx::query(
            "INSERT INTO rights_holders (name, created_at) VALUES ($1, $2) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(now_micros())
        .execute(&self.pool)
        .await?;
        Ok(
            sqlx::query_scalar("SELECT id FROM rights_holders WHERE name = $1")
                .bind(name)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn list_rights_holders(&self) -> Result<Vec<RightsHolder>> {
        sqlx::query_as::<_, RightsHolderRow>(
            "SELECT id, name, created_at FROM rights_holders ORDER BY name, id",
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(RightsHolderRow::into_model)
        .collect()
    }

    async fn upsert_work(&self, work: &NewWork) -> Result<(Id, WriteOutcome)> {
        validate_work(work)?;
        let version = i64::from(work.fingerprint_version);
        let mut tx = self.write().await?;
        let existing: Option<(i64, String, String, i64)> = sqlx::query_as(
            "SELECT id, title, content_hash, fingerprint_version FROM works \
             WHERE rights_holder_id = $1 AND external_id = $2",
        )
        .bind(work.rights_holder_id)
        .bind(&work.external_id)
        .fetch_optional(&mut *tx)
        .await?;
        let now = now_micros();
        let content_len = i64::try_from(work.content.len())
            .map_err(|_| StoreError::Invalid("work text is too long".into()))?;

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
                     content_hash = $5, fingerprint_version = $6, updated_at = $7 WHERE id = $1",
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
                // Every page matched against the old version must be matched again.
                sqlx::query(
                    "UPDATE pages SET matched_hash = NULL \
                     WHERE matched_hash IS NOT NULL \
                       AND id IN (SELECT page_id FROM matches WHERE work_id = $1)",
                )
                .bind(id)
                .execute(&mut *tx)
                .await?;
                (id, WriteOutcome::Updated)
            }
            None => {
                exists(&mut tx, Referenced::RightsHolder, work.rights_holder_id).await?;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO works (rights_holder_id, external_id, title, content, \
                     content_len, content_hash, fingerprint_version, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id",
                )
                .bind(work.rights_holder_id)
                .bind(&work.external_id)
                .bind(&work.title)
                .bind(&work.content)
                .bind(content_len)
                .bind(&work.content_hash)
                .bind(version)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                (id, WriteOutcome::Created)
            }
        };
        insert_segments(&mut tx, id, work).await?;
        insert_fingerprints(&mut tx, id, work).await?;
        tx.commit().await?;
        Ok((id, outcome))
    }

    async fn list_works(&self, rights_holder_id: Option<Id>) -> Result<Vec<WorkSummary>> {
        sqlx::query_as::<_, WorkRow>(concat!(
            "SELECT ",
            work_summary_columns!(),
            " FROM works w WHERE ($1 IS NULL OR w.rights_holder_id = $1)",
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
        let mut conn = self.pool.acquire().await?;
        let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = $1")
            .bind(work_id)
            .fetch_optional(&mut *conn)
            .await?;
        if exists.is_none() {
            return Err(StoreError::NotFound(format!("work {work_id}")));
        }
        let rows: Vec<(String, i64, String)> = sqlx::query_as(
            "SELECT algorithm, version, fingerprint FROM work_fingerprints \
             WHERE work_id = $1 ORDER BY algorithm",
        )
        .bind(work_id)
        .fetch_all(&mut *conn)
        .await?;
        rows.into_iter()
            .map(|(algorithm, version, fingerprint)| {
                Ok(AlgorithmFingerprint {
                    version: to_u32(version, "fingerprint version")?,
                    fingerprint: serde_json::from_str(&fingerprint).map_err(|error| {
                        StoreError::Invalid(format!(
                            "stored {algorithm} fingerprint of work {work_id} is not JSON: {error}"
                        ))
                    })?,
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
        let fetched_at = micros(page.fetched_at);
        let status = i64::from(page.http_status);
        let mut tx = self.write().await?;

        sqlx::query(
            "INSERT INTO sites (host, created_at) VALUES ($1, $2) ON CONFLICT (host) DO NOTHING",
        )
        .bind(&host)
        .bind(fetched_at)
        .execute(&mut *tx)
        .await?;
        let site_id: i64 = sqlx::query_scalar("SELECT id FROM sites WHERE host = $1")
            .bind(&host)
            .fetch_one(&mut *tx)
            .await?;

        let existing: Option<(i64, String, i64)> =
            sqlx::query_as("SELECT id, content_hash, last_seen FROM pages WHERE url = $1")
                .bind(&url)
                .fetch_optional(&mut *tx)
                .await?;
        let write = match existing {
            None => {
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO pages (site_id, url, title, text, content_hash, http_status, \
                     first_seen, last_seen, etag, last_modified) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) RETURNING id",
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
                .fetch_one(&mut *tx)
                .await?;
                PageWrite {
                    id,
                    outcome: WriteOutcome::Created,
                }
            }
            Some((id, hash, last_seen)) if hash == page.content_hash => {
                sqlx::query(
                    "UPDATE pages SET title = $2, http_status = $3, last_seen = $4, etag = $5, \
                     last_modified = $6 WHERE id = $1",
                )
                .bind(id)
                .bind(&page.title)
                .bind(status)
                .bind(last_seen.max(fetched_at))
                .bind(&page.etag)
                .bind(&page.last_modified)
                .execute(&mut *tx)
                .await?;
                PageWrite {
                    id,
                    outcome: WriteOutcome::Unchanged,
                }
            }
            Some((id, _, last_seen)) => {
                // The text some evidence points into is kept before it is replaced.
                sqlx::query(
                    "INSERT INTO page_texts (page_id, content_hash, title, text, archived_at) \
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
                     http_status = $5, last_seen = $6, matched_hash = NULL, etag = $7, \
                     last_modified = $8 WHERE id = $1",
                )
                .bind(id)
                .bind(&page.title)
                .bind(&page.text)
                .bind(&page.content_hash)
                .bind(status)
                .bind(last_seen.max(fetched_at))
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
        Ok(write)
    }

    async fn record_not_modified(&self, url: &str, seen_at: DateTime<Utc>) -> Result<Option<Id>> {
        let (url, _) = page_key(url)?;
        Ok(sqlx::query_scalar(
            "UPDATE pages SET last_seen = MAX(last_seen, $2) WHERE url = $1 RETURNING id",
        )
        .bind(&url)
        .bind(micros(seen_at))
        .fetch_optional(&self.pool)
        .await?)
    }

    async fn page_validators(&self, scope: &ValidatorScope) -> Result<Vec<PageValidators>> {
        let hosts = to_json(&rules::validator_hosts(&scope.hosts), "hosts")?;
        let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT p.url, p.etag, p.last_modified FROM pages p \
             JOIN sites s ON s.id = p.site_id \
             WHERE s.host IN (SELECT value FROM json_each($1)) \
               AND (p.etag IS NOT NULL OR p.last_modified IS NOT NULL) \
               AND (NOT $2 OR EXISTS (SELECT 1 FROM matches m \
                    WHERE m.page_id = p.id AND m.status <> 'dismissed')) \
             ORDER BY p.id LIMIT $3",
        )
        .bind(hosts)
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
        let done =
            sqlx::query("UPDATE pages SET matched_hash = NULL WHERE matched_hash IS NOT NULL")
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected())
    }

    async fn list_sites(&self) -> Result<Vec<Site>> {
        sqlx::query_as::<_, SiteRow>("SELECT id, host, created_at FROM sites ORDER BY host")
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(SiteRow::into_model)
            .collect()
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
        let at = micros(at);
        let mut tx = self.write().await?;

        let page: Option<(String, i64, i64, Option<i64>)> = sqlx::query_as(
            "SELECT content_hash, last_seen, http_status, availability_checked_at \
             FROM pages WHERE id = $1",
        )
        .bind(page_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((current_hash, last_seen, http_status, last_checked)) = page else {
            return Err(StoreError::NotFound(format!("page {page_id}")));
        };
        for m in matches {
            exists(&mut tx, Referenced::Work, m.work_id).await?;
        }
        if current_hash != content_hash {
            // The page changed while it was matched: its newer text gets a verdict of its own.
            return Ok(VerdictOutcome::default());
        }
        let rows: Vec<(i64, i64, String, String, Option<i64>)> = sqlx::query_as(
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
        let found: HashSet<Id> = matches.iter().map(|m| m.work_id).collect();
        let plan = rules::plan_verdict(&previous, &found, content_hash);
        let outcome = VerdictOutcome {
            new_matches: found.difference(&previous_works).count() as u64,
            removed: plan.remove.len() as u64,
            reopened: plan.reopen.len() as u64,
        };

        for m in matches {
            // Upsert keeps id, status and first_seen of a match found again.
            let match_id: i64 = sqlx::query_scalar(
                "INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
                 first_seen, last_seen, copied_chars, evidence_hash) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) \
                 ON CONFLICT (page_id, work_id) DO UPDATE SET score = excluded.score, \
                 coverage = excluded.coverage, containment = excluded.containment, \
                 method = excluded.method, last_seen = excluded.last_seen, \
                 copied_chars = excluded.copied_chars, evidence_hash = excluded.evidence_hash \
                 RETURNING id",
            )
            .bind(page_id)
            .bind(m.work_id)
            .bind(m.score)
            .bind(m.coverage)
            .bind(m.containment)
            .bind(&m.method)
            .bind(at)
            .bind(i64::from(m.copied_chars))
            .bind(content_hash)
            .fetch_one(&mut *tx)
            .await?;

            sqlx::query("DELETE FROM evidence WHERE match_id = $1")
                .bind(match_id)
                .execute(&mut *tx)
                .await?;
            for (ordinal, passage) in m.evidence.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, \
                     work_end) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(match_id)
                .bind(ordinal as i64)
                .bind(i64::from(passage.page_start))
                .bind(i64::from(passage.page_end))
                .bind(i64::from(passage.work_start))
                .bind(i64::from(passage.work_end))
                .execute(&mut *tx)
                .await?;
            }
        }

        for id in &plan.delete {
            sqlx::query("DELETE FROM matches WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        for id in &plan.remove {
            sqlx::query("UPDATE matches SET status = 'removed', removed_at = $2 WHERE id = $1")
                .bind(id)
                .bind(last_seen)
                .execute(&mut *tx)
                .await?;
        }
        for id in &plan.reopen {
            sqlx::query("UPDATE matches SET status = 'open', removed_at = NULL WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
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
                    w.rights_holder_id, m.score, m.coverage, m.containment, m.copied_chars, m.method, m.status, \
                    m.first_seen, m.last_seen, m.removed_at, m.evidence_hash, \
                    e.page_start, e.page_end, e.work_start, e.work_end \
             FROM matches m \
             JOIN pages p ON p.id = m.page_id \
             JOIN works w ON w.id = m.work_id \
             LEFT JOIN evidence e ON e.match_id = m.id \
             WHERE ($1 IS NULL OR w.rights_holder_id = $1) AND ($2 IS NULL OR m.work_id = $2) \
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
             removed_at = CASE WHEN $2 = 'removed' THEN removed_at END WHERE id = $1",
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
        let mut tx = self.write().await?;
        if let Some(key) = &job.dedup_key {
            let pending: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM jobs WHERE dedup_key = $1 AND state IN ('queued', 'running')",
            )
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(id) = pending {
                tx.rollback().await?;
                return Ok(id);
            }
        }
        let id = insert_job(&mut tx, job).await?;
        tx.commit().await?;
        Ok(id)
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
        let lease_until = lease_until(now, lease)?;
        // Kinds travel as one JSON array so the statement text stays fixed (PostgreSQL:
        // `kind = ANY($1)`).
        let kinds = to_json(&kinds, "job kinds")?;
        let now = micros(now);
        let mut tx = self.write().await?;

        // A worker that died during the last allowed attempt must not earn the job another one.
        sqlx::query(
            "UPDATE jobs SET state = 'dead', lease_until = NULL, updated_at = $2, \
             last_error = 'lease expired during the last allowed attempt' \
             WHERE state = 'running' AND lease_until <= $2 AND attempts >= max_attempts \
               AND kind IN (SELECT value FROM json_each($1))",
        )
        .bind(&kinds)
        .bind(now)
        .execute(&mut *tx)
        .await?;

        // One statement picks and takes the job, so no other claimer can take it in between
        // (and the write lock of the transaction serializes claimers anyway).
        let row = sqlx::query_as::<_, JobRow>(concat!(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = $3, \
             updated_at = $2 \
             WHERE id = ( \
               SELECT id FROM jobs \
               WHERE kind IN (SELECT value FROM json_each($1)) \
                 AND ((state = 'queued' AND run_at <= $2) \
                   OR (state = 'running' AND lease_until <= $2)) \
               ORDER BY run_at, id LIMIT 1) \
             RETURNING ",
            job_columns!()
        ))
        .bind(&kinds)
        .bind(now)
        .bind(micros(lease_until))
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        row.map(JobRow::into_model).transpose()
    }

    async fn complete_job(&self, lease: JobLease) -> Result<()> {
        let mut tx = self.write().await?;
        let done = sqlx::query(
            "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = $3 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&mut tx, lease).await);
        }
        tx.commit().await?;
        Ok(())
    }

    async fn fail_job(&self, lease: JobLease, error: &str, retry_at: DateTime<Utc>) -> Result<()> {
        let mut tx = self.write().await?;
        let done = sqlx::query(
            "UPDATE jobs SET \
               state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
               run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE $3 END, \
               lease_until = NULL, last_error = $4, updated_at = $5 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(micros(retry_at))
        .bind(error)
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&mut tx, lease).await);
        }
        tx.commit().await?;
        Ok(())
    }

    async fn renew_job_lease(&self, lease: JobLease, lease_until: DateTime<Utc>) -> Result<()> {
        let mut tx = self.write().await?;
        let done = sqlx::query(
            "UPDATE jobs SET lease_until = $3, updated_at = $4 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(micros(lease_until))
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&mut tx, lease).await);
        }
        tx.commit().await?;
        Ok(())
    }

    async fn release_job(&self, lease: JobLease, run_at: DateTime<Utc>) -> Result<()> {
        let mut tx = self.write().await?;
        let done = sqlx::query(
            "UPDATE jobs SET state = 'queued', attempts = attempts - 1, run_at = $3, \
               lease_until = NULL, updated_at = $4 \
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .bind(lease.job_id)
        .bind(i64::from(lease.attempt))
        .bind(micros(run_at))
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(lease_not_current(&mut tx, lease).await);
        }
        tx.commit().await?;
        Ok(())
    }

    async fn requeue_dead_job(&self, job_id: Id, run_at: DateTime<Utc>) -> Result<()> {
        let mut tx = self.write().await?;
        let state: Option<String> = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(&mut *tx)
            .await?;
        match state.as_deref() {
            None => return Err(StoreError::NotFound(format!("job {job_id}"))),
            Some("dead") => {}
            Some(other) => {
                return Err(StoreError::Invalid(format!(
                    "job {job_id} is {other}; only dead jobs are requeued"
                )));
            }
        }
        let requeued = sqlx::query(
            "UPDATE jobs SET state = 'queued', attempts = 0, run_at = $2, lease_until = NULL, \
               updated_at = $3 WHERE id = $1 AND state = 'dead'",
        )
        .bind(job_id)
        .bind(micros(run_at))
        .bind(now_micros())
        .execute(&mut *tx)
        .await;
        match requeued {
            Ok(_) => {}
            // A pending job with the same dedup key took its place meanwhile.
            Err(error) if is_unique_violation(&error) => {
                return Err(StoreError::Invalid(format!(
                    "job {job_id} cannot be requeued: another pending job has its dedup key"
                )));
            }
            Err(error) => return Err(error.into()),
        }
        tx.commit().await?;
        Ok(())
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
            " FROM jobs WHERE ($1 IS NULL OR kind = $1) AND ($2 IS NULL OR state = $2) \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(&filter.kind)
        .bind(filter.state.map(JobState::as_str))
        .bind(filter.limit.map_or(-1, i64::from))
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(JobRow::into_model)
        .collect()
    }

    async fn job_counts(&self) -> Result<Vec<JobCount>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state ORDER BY kind, state",
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
        let holder = rules::leader_holder_id();
        let ttl_micros = rules::positive_micros(ttl, "leadership ttl")?;
        let now = now_micros();
        let mut tx = self.write().await?;
        // Take the row if it is free, lapsed, or ours already.
        let taken = sqlx::query(
            "INSERT INTO leader_leases (name, holder, lease_until) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
               lease_until = excluded.lease_until \
             WHERE leader_leases.lease_until <= $4 OR leader_leases.holder = excluded.holder",
        )
        .bind(name)
        .bind(&holder)
        .bind(now.saturating_add(ttl_micros))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        if taken.rows_affected() == 0 {
            return Ok(None);
        }
        Ok(Some(Box::new(SqliteLeadership {
            pool: self.pool.clone(),
            name: name.to_owned(),
            holder,
            ttl_micros,
        })))
    }
    // ----- schedules -----

    async fn create_schedule(&self, schedule: &NewSchedule) -> Result<Id> {
        let name = validate_schedule(schedule)?;
        let mut conn = self.pool.acquire().await?;
        match insert_schedule(&mut conn, name, schedule).await? {
            Ok(id) => Ok(id),
            Err(error) if is_unique_violation(&error) => Err(StoreError::Invalid(format!(
                "schedule {name:?} already exists"
            ))),
            Err(error) => Err(error.into()),
        }
    }

    async fn ensure_schedule(&self, schedule: &NewSchedule) -> Result<Id> {
        let name = validate_schedule(schedule)?;
        let mut tx = self.write().await?;
        let existing =
            sqlx::query_as::<_, ScheduleRow>(concat!(schedule_select!(), " WHERE name = $1"))
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
        let id = match existing {
            None => insert_schedule(&mut tx, name, schedule).await??,
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
                        "UPDATE schedules SET cron = $2, timezone = $3, seeds = $4, config = $5, \
                         owner = $6, updated_at = $7 WHERE id = $1",
                    )
                    .bind(stored.id)
                    .bind(schedule.cron.trim())
                    .bind(schedule.timezone.trim())
                    .bind(to_json(&schedule.seeds, "schedule seeds")?)
                    .bind(to_json(&schedule.config, "schedule config")?)
                    .bind(&schedule.owner)
                    .bind(now_micros())
                    .execute(&mut *tx)
                    .await?;
                }
                stored.id
            }
        };
        tx.commit().await?;
        Ok(id)
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
        .bind(now_micros())
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
        let mut tx = self.write().await?;
        // The compare-and-set: the write lock makes it atomic with the inserts below.
        let moved = sqlx::query(
            "UPDATE schedules SET last_fired_at = $2 \
             WHERE id = $1 AND enabled = 1 AND last_fired_at IS $3",
        )
        .bind(fire.schedule_id)
        .bind(micros(fire.scheduled_for))
        .bind(fire.expected_last_fired_at.map(micros))
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
        let mut tx = self.write().await?;
        if let Some(schedule_id) = run.schedule_id {
            exists(&mut tx, Referenced::Schedule, schedule_id).await?;
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
            " WHERE ($1 IS NULL OR r.kind = $1) AND ($2 IS NULL OR r.schedule_id = $2) \
               AND ($3 IS NULL OR r.state = $3) ORDER BY r.id DESC LIMIT $4"
        ))
        .bind(filter.kind.map(RunKind::as_str))
        .bind(filter.schedule_id)
        .bind(filter.state.map(RunState::as_str))
        .bind(filter.limit.map_or(-1, i64::from))
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
        let mut tx = self.write().await?;
        sqlx::query(
            "UPDATE runs SET state = 'running', started_at = $2 \
             WHERE id = $1 AND state = 'queued' AND cancel_requested = 0",
        )
        .bind(id)
        .bind(micros(at))
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
        let stats = to_json(stats, "run stats")?;
        let mut tx = self.write().await?;
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
        .fetch_optional(&mut *tx)
        .await?;
        let cancel = match cancel {
            Some(cancel) => cancel,
            None => {
                // Not running (any more): the worker must stop.
                exists(&mut tx, Referenced::Run, id).await?;
                true
            }
        };
        tx.commit().await?;
        Ok(cancel)
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
        let stats = to_json(stats, "run stats")?;
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
        .bind(micros(at))
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("run {id}")));
        }
        Ok(())
    }

    async fn request_run_cancel(&self, id: Id, at: DateTime<Utc>) -> Result<RunState> {
        let mut tx = self.write().await?;
        // A queued run ends here; a running one is asked to stop by its worker.
        let state: Option<String> = sqlx::query_scalar(
            "UPDATE runs SET \
               state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, \
               finished_at = CASE WHEN state = 'queued' THEN $2 ELSE finished_at END, \
               cancel_requested = CASE WHEN state = 'running' THEN 1 ELSE cancel_requested END \
             WHERE id = $1 AND state IN ('queued', 'running') RETURNING state",
        )
        .bind(id)
        .bind(micros(at))
        .fetch_optional(&mut *tx)
        .await?;
        let state = match state {
            Some(state) => rules::run_state(&state)?,
            None => {
                let ended: Option<String> =
                    sqlx::query_scalar("SELECT state FROM runs WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                return Err(match ended {
                    None => StoreError::NotFound(format!("run {id}")),
                    Some(state) => rules::run_already_ended(id, &state),
                });
            }
        };
        tx.commit().await?;
        Ok(state)
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
             WHERE p.url = $1 ORDER BY m.work_id",
        )
        .bind(&url)
        .fetch_all(&self.pool)
        .await?;
        Ok(rules::group_infringing_pages(rows).pop())
    }

    async fn record_page_check(&self, check: &PageCheck) -> Result<PageCheckOutcome> {
        rules::validate_page_check(check)?;
        let checked_at = micros(check.checked_at);
        let removed = to_json(&check.removed, "removed works")?;
        let still_present = to_json(&check.still_present, "works still present")?;
        let mut tx = self.write().await?;
        let page: Option<Option<i64>> =
            sqlx::query_scalar("SELECT availability_checked_at FROM pages WHERE id = $1")
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
                   AND work_id IN (SELECT value FROM json_each($2))",
            )
            .bind(check.page_id)
            .bind(&removed)
            .bind(checked_at)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            outcome.reopened = sqlx::query(
                "UPDATE matches SET status = 'open', removed_at = NULL \
                 WHERE page_id = $1 AND status = 'removed' \
                   AND work_id IN (SELECT value FROM json_each($2))",
            )
            .bind(check.page_id)
            .bind(&still_present)
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
        let mut tx = self.write().await?;
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
        .bind(now_micros())
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
    use super::*;

    #[test]
    fn accepted_url_forms_are_understood() {
        assert!(matches!(parse_url("sqlite::memory:"), Ok(Target::Memory)));
        assert!(matches!(parse_url("sqlite://:memory:"), Ok(Target::Memory)));
        for (url, file) in [
            ("sqlite://data/copytrace.db", "data/copytrace.db"),
            ("sqlite:copytrace.db", "copytrace.db"),
            ("sqlite:///var/lib/ct.db", "/var/lib/ct.db"),
            ("SQLite://a%3Fb.db", "a?b.db"),
        ] {
            let Ok(Target::File(options)) = parse_url(url) else {
                panic!("{url} was refused");
            };
            assert_eq!(options.get_filename().to_str(), Some(file), "{url}");
        }
    }

    #[tokio::test]
    async fn connections_use_wal_foreign_keys_and_a_busy_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("pragmas.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let busy_timeout: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(foreign_keys, 1);
        assert_eq!(busy_timeout, 5000);
    }

    #[tokio::test]
    async fn the_due_pages_query_uses_its_partial_index() {
        let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
        store.migrate().await.unwrap();
        let plan: Vec<(i64, i64, i64, String)> =
            sqlx::query_as(concat!("EXPLAIN QUERY PLAN ", due_pages_query!()))
                .bind(10_i64)
                .fetch_all(&store.pool)
                .await
                .unwrap();
        let detail: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(
            detail.iter().any(|d| d.contains("pages_due_for_matching")),
            "plan: {detail:?}"
        );
    }
}
