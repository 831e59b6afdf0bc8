//! The rows both backends read, declared once, and their conversion into the domain records.
//!
//! The two schemas have the same tables and column names; only two kinds of value have no
//! common SQL type: timestamps (SQLite: `INTEGER` microseconds since the epoch; PostgreSQL:
//! `timestamptz`) and JSON (SQLite: `TEXT`; PostgreSQL: `jsonb`). [`Columns`] names those types
//! for each database, so every row is one struct generic over it, decoded by `sqlx::FromRow` on
//! either backend and converted into its model by one function. The column lists the rows are
//! selected with live here too, beside the fields they must match.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use sqlx::FromRow;
use sqlx::types::Json;

use crate::rules::{self, from_json, to_u32, to_u64};
use crate::{
    DecisionRecord, EvidencePassage, Id, IndexedSegment, Job, JobState, MatchRecord, Page,
    PageCheckRecord, Result, RightsHolder, Role, Run, Schedule, SegmentFingerprint, Site,
    StoreError, User, WorkChapter, WorkStatus, WorkSummary,
};

// ----- stored representations -----

/// The column types a database stores timestamps and JSON values in.
pub(crate) trait Columns {
    /// A timestamp column.
    type Time: StoredTime + PartialOrd + Copy + Send;
    /// A JSON column holding any value.
    type Json: StoredJson<serde_json::Value>;
    /// A JSON column holding a list of strings.
    type Strings: StoredJson<Vec<String>>;

    /// A timestamp as stored (whole microseconds, see the crate docs).
    fn time(at: DateTime<Utc>) -> Self::Time;

    /// The clock for rows the caller does not timestamp itself, at stored precision.
    fn now() -> Self::Time {
        Self::time(Utc::now())
    }
}

/// SQLite: integer microseconds and JSON text (see the `sqlite` module).
impl Columns for sqlx::Sqlite {
    type Time = i64;
    type Json = String;
    type Strings = String;

    fn time(at: DateTime<Utc>) -> i64 {
        crate::sqlite::micros(at)
    }
}

/// PostgreSQL: `timestamptz` and `jsonb`.
impl Columns for sqlx::Postgres {
    type Time = DateTime<Utc>;
    type Json = serde_json::Value;
    type Strings = Json<Vec<String>>;

    fn time(at: DateTime<Utc>) -> DateTime<Utc> {
        crate::postgres::stored(at)
    }
}

/// A stored timestamp.
pub(crate) trait StoredTime {
    /// The timestamp it stands for; `Invalid` when it is out of range.
    fn into_time(self) -> Result<DateTime<Utc>>;
}

impl StoredTime for i64 {
    fn into_time(self) -> Result<DateTime<Utc>> {
        DateTime::from_timestamp_micros(self)
            .ok_or_else(|| StoreError::Invalid(format!("stored timestamp {self} is out of range")))
    }
}

impl StoredTime for DateTime<Utc> {
    fn into_time(self) -> Result<DateTime<Utc>> {
        Ok(self)
    }
}

fn opt_time<T: StoredTime>(value: Option<T>) -> Result<Option<DateTime<Utc>>> {
    value.map(StoredTime::into_time).transpose()
}

/// A stored JSON value of type `T`.
pub(crate) trait StoredJson<T> {
    /// The value; `Invalid`, naming `what`, when the stored text is not valid JSON for `T`.
    fn into_value(self, what: &str) -> Result<T>;
}

impl<T: DeserializeOwned> StoredJson<T> for String {
    fn into_value(self, what: &str) -> Result<T> {
        from_json(&self, what)
    }
}

impl StoredJson<serde_json::Value> for serde_json::Value {
    fn into_value(self, _: &str) -> Result<serde_json::Value> {
        Ok(self)
    }
}

impl<T> StoredJson<T> for Json<T> {
    fn into_value(self, _: &str) -> Result<T> {
        Ok(self.0)
    }
}

// ----- fingerprint library -----

#[derive(FromRow)]
pub(crate) struct RightsHolderRow<C: Columns> {
    id: i64,
    name: String,
    created_at: C::Time,
}

impl<C: Columns> RightsHolderRow<C> {
    pub(crate) fn into_model(self) -> Result<RightsHolder> {
        Ok(RightsHolder {
            id: self.id,
            name: self.name,
            created_at: self.created_at.into_time()?,
        })
    }
}

/// Columns of a work summary over `works w`; keep in sync with [`WorkRow`].
macro_rules! work_summary_columns {
    () => {
        "w.id, w.rights_holder_id, w.external_id, w.title, w.content_hash, \
         w.fingerprint_version, w.content_len, \
         COALESCE((SELECT s.window_count FROM work_windows s WHERE s.work_id = w.id), 0) \
             AS segment_count, \
         (SELECT COUNT(*) FROM work_chapters c WHERE c.work_id = w.id) AS chapter_count, \
         w.author, w.published_at, w.status, w.withdrawn_at, w.created_at, w.updated_at"
    };
}
pub(crate) use work_summary_columns;

#[derive(FromRow)]
pub(crate) struct WorkRow<C: Columns> {
    id: i64,
    rights_holder_id: i64,
    external_id: String,
    title: String,
    content_hash: String,
    fingerprint_version: i64,
    content_len: i64,
    segment_count: i64,
    chapter_count: i64,
    author: Option<String>,
    published_at: Option<C::Time>,
    status: String,
    withdrawn_at: Option<C::Time>,
    created_at: C::Time,
    updated_at: C::Time,
}

impl<C: Columns> WorkRow<C> {
    pub(crate) fn into_model(self) -> Result<WorkSummary> {
        Ok(WorkSummary {
            id: self.id,
            rights_holder_id: self.rights_holder_id,
            external_id: self.external_id,
            title: self.title,
            content_hash: self.content_hash,
            fingerprint_version: to_u32(self.fingerprint_version, "fingerprint version")?,
            content_len: to_u64(self.content_len, "content length")?,
            segment_count: to_u32(self.segment_count, "segment count")?,
            chapter_count: to_u32(self.chapter_count, "chapter count")?,
            author: self.author,
            published_at: opt_time(self.published_at)?,
            status: WorkStatus::parse(&self.status).ok_or_else(|| {
                StoreError::Invalid(format!("unknown work status {:?}", self.status))
            })?,
            withdrawn_at: opt_time(self.withdrawn_at)?,
            created_at: self.created_at.into_time()?,
            updated_at: self.updated_at.into_time()?,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct WorkWithContentRow<C: Columns> {
    #[sqlx(flatten)]
    pub(crate) summary: WorkRow<C>,
    pub(crate) content: String,
}

#[derive(FromRow)]
pub(crate) struct ChapterRow {
    ordinal: i64,
    title: String,
    start_offset: i64,
    end_offset: i64,
}

impl ChapterRow {
    pub(crate) fn into_model(self) -> Result<WorkChapter> {
        Ok(WorkChapter {
            ordinal: to_u32(self.ordinal, "chapter ordinal")?,
            title: self.title,
            start: to_u32(self.start_offset, "chapter start")?,
            end: to_u32(self.end_offset, "chapter end")?,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct LicensedHostRow<C: Columns> {
    rights_holder_id: i64,
    work_id: Option<i64>,
    host: String,
    created_at: C::Time,
}

impl<C: Columns> LicensedHostRow<C> {
    pub(crate) fn into_model(self) -> Result<crate::LicensedHost> {
        Ok(crate::LicensedHost {
            rights_holder_id: self.rights_holder_id,
            work_id: self.work_id,
            host: self.host,
            created_at: self.created_at.into_time()?,
        })
    }
}

/// Bytes of one packed window: ordinal, start and end (u32) and SimHash (u64), big-endian.
pub(crate) const PACKED_WINDOW: usize = 20;

/// A work's windows packed as `work_windows.windows` holds them (for tools that load or check
/// the table directly, such as `copytrace-bench store`).
pub fn pack_windows(segments: &[SegmentFingerprint]) -> Vec<u8> {
    let mut packed = Vec::with_capacity(segments.len() * PACKED_WINDOW);
    for s in segments {
        packed.extend_from_slice(&s.ordinal.to_be_bytes());
        packed.extend_from_slice(&s.start.to_be_bytes());
        packed.extend_from_slice(&s.end.to_be_bytes());
        packed.extend_from_slice(&s.simhash.to_be_bytes());
    }
    packed
}

#[derive(FromRow)]
pub(crate) struct PackedWindowsRow {
    work_id: i64,
    windows: Vec<u8>,
}

impl PackedWindowsRow {
    /// The work's windows, in ordinal order.
    pub(crate) fn into_model(self) -> Result<Vec<IndexedSegment>> {
        if !self.windows.len().is_multiple_of(PACKED_WINDOW) {
            return Err(StoreError::Invalid(format!(
                "the stored windows of work {} are {} bytes, not whole windows",
                self.work_id,
                self.windows.len()
            )));
        }
        let u32_at = |b: &[u8], i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Ok(self
            .windows
            .chunks_exact(PACKED_WINDOW)
            .map(|b| IndexedSegment {
                work_id: self.work_id,
                segment: SegmentFingerprint {
                    ordinal: u32_at(b, 0),
                    start: u32_at(b, 4),
                    end: u32_at(b, 8),
                    simhash: u64::from_be_bytes(b[12..20].try_into().expect("8 bytes")),
                },
            })
            .collect())
    }
}

/// `(algorithm, version)` from a stored `(algorithm, version)` row.
pub(crate) fn algorithm_version((algorithm, version): (String, i64)) -> Result<(String, u32)> {
    Ok((algorithm, to_u32(version, "fingerprint version")?))
}

/// `(work, algorithm, version)` from a stored `(work, algorithm, version)` row.
pub(crate) fn fingerprint_version(
    (work_id, algorithm, version): (i64, String, i64),
) -> Result<(Id, String, u32)> {
    Ok((work_id, algorithm, to_u32(version, "fingerprint version")?))
}

// ----- page library -----

#[derive(FromRow)]
pub(crate) struct SiteRow<C: Columns> {
    id: i64,
    host: String,
    created_at: C::Time,
}

impl<C: Columns> SiteRow<C> {
    pub(crate) fn into_model(self) -> Result<Site> {
        Ok(Site {
            id: self.id,
            host: self.host,
            created_at: self.created_at.into_time()?,
        })
    }
}

/// Selects pages; keep in sync with [`PageRow`].
macro_rules! page_select {
    () => {
        "SELECT id, site_id, url, title, text, content_hash, http_status, \
         first_seen, last_seen, matched_hash, availability, availability_checked_at, etag, \
         last_modified, alias_of FROM pages"
    };
}
pub(crate) use page_select;

/// Pages due for matching. The WHERE clause repeats the partial index `pages_due_for_matching`
/// word for word, which is what lets SQLite's planner (and PostgreSQL's) use it.
macro_rules! due_pages_query {
    () => {
        concat!(
            $crate::rows::page_select!(),
            " WHERE matched_hash IS NULL OR matched_hash <> content_hash ORDER BY id LIMIT $1"
        )
    };
}
pub(crate) use due_pages_query;

#[derive(FromRow)]
pub(crate) struct PageRow<C: Columns> {
    id: i64,
    site_id: i64,
    url: String,
    title: Option<String>,
    text: String,
    content_hash: String,
    http_status: i64,
    first_seen: C::Time,
    last_seen: C::Time,
    matched_hash: Option<String>,
    availability: Option<String>,
    availability_checked_at: Option<C::Time>,
    etag: Option<String>,
    last_modified: Option<String>,
    alias_of: Option<i64>,
}

impl<C: Columns> PageRow<C> {
    pub(crate) fn into_model(self) -> Result<Page> {
        Ok(Page {
            id: self.id,
            site_id: self.site_id,
            url: self.url,
            title: self.title,
            text: self.text,
            content_hash: self.content_hash,
            http_status: rules::http_status(self.http_status)?,
            first_seen: self.first_seen.into_time()?,
            last_seen: self.last_seen.into_time()?,
            matched_hash: self.matched_hash,
            availability: self
                .availability
                .as_deref()
                .map(rules::availability)
                .transpose()?,
            availability_checked_at: opt_time(self.availability_checked_at)?,
            etag: self.etag,
            last_modified: self.last_modified,
            alias_of: self.alias_of,
        })
    }
}

// ----- match library -----

/// One match joined with one of its evidence passages (all `None` when it has none).
#[derive(FromRow)]
pub(crate) struct MatchEvidenceRow<C: Columns> {
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
    review: String,
    first_seen: C::Time,
    last_seen: C::Time,
    removed_at: Option<C::Time>,
    evidence_hash: String,
    page_start: Option<i64>,
    page_end: Option<i64>,
    work_start: Option<i64>,
    work_end: Option<i64>,
}

impl<C: Columns> MatchEvidenceRow<C> {
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
            review: rules::review_value(&self.review)?,
            first_seen: self.first_seen.into_time()?,
            last_seen: self.last_seen.into_time()?,
            removed_at: opt_time(self.removed_at)?,
            evidence_hash: self.evidence_hash,
            evidence,
            chapters: Vec::new(),
            aliases: Vec::new(),
        })
    }
}

/// A row of `match_decisions`.
#[derive(FromRow)]
pub(crate) struct DecisionRow<C: Columns> {
    id: i64,
    page_id: i64,
    work_id: i64,
    match_id: Option<i64>,
    decision: String,
    automatic: bool,
    actor: String,
    note: String,
    content_hash: String,
    copied_chars: i64,
    decided_at: C::Time,
}

impl<C: Columns> DecisionRow<C> {
    pub(crate) fn into_model(self) -> Result<DecisionRecord> {
        Ok(DecisionRecord {
            id: self.id,
            page_id: self.page_id,
            work_id: self.work_id,
            match_id: self.match_id,
            review: rules::review_value(&self.decision)?,
            automatic: self.automatic,
            actor: self.actor,
            note: self.note,
            content_hash: self.content_hash,
            copied_chars: to_u32(self.copied_chars, "copied characters")?,
            decided_at: self.decided_at.into_time()?,
        })
    }
}

/// A match's status as listings show it, over `matches m JOIN pages p JOIN works w`: the stored
/// review status, unless the work was withdrawn (`withdrawn`) or the page is on a host the
/// holder licensed for the work, a subdomain of it, or either on any port (`licensed`).
macro_rules! match_status_column {
    () => {
        "CASE WHEN w.status = 'withdrawn' THEN 'withdrawn' \
              WHEN m.review = 'licensed' THEN 'licensed' \
              WHEN EXISTS (SELECT 1 FROM licensed_hosts l JOIN sites s ON s.id = p.site_id \
                   WHERE l.rights_holder_id = w.rights_holder_id \
                     AND (l.work_id IS NULL OR l.work_id = w.id) \
                     AND (s.host = l.host OR s.host LIKE ('%.' || l.host) \
                          OR s.host LIKE (l.host || ':%') \
                          OR s.host LIKE ('%.' || l.host || ':%'))) THEN 'licensed' \
              ELSE m.status END AS status"
    };
}
pub(crate) use match_status_column;

/// The columns of a [`MatchEvidenceRow`] over `matches m JOIN pages p JOIN works w LEFT JOIN
/// evidence e`: what every listing of matches selects, whatever its filter and order.
macro_rules! match_listing_columns {
    () => {
        concat!(
            "m.id, m.page_id, p.url AS page_url, p.title AS page_title, m.work_id, \
             w.external_id AS work_external_id, w.title AS work_title, w.rights_holder_id, \
             m.score, m.coverage, m.containment, m.copied_chars, m.method, ",
            $crate::rows::match_status_column!(),
            ", m.review, m.first_seen, m.last_seen, m.removed_at, m.evidence_hash, \
             e.page_start, e.page_end, e.work_start, e.work_end"
        )
    };
}
pub(crate) use match_listing_columns;

/// [`crate::Store::list_matches`] from match × evidence rows ordered by match, then passage.
pub(crate) fn group_matches<C: Columns>(
    rows: Vec<MatchEvidenceRow<C>>,
) -> Result<Vec<MatchRecord>> {
    let mut records: Vec<MatchRecord> = Vec::new();
    for row in rows {
        match records.last_mut() {
            Some(last) if last.id == row.id => last.evidence.extend(row.passage()?),
            _ => records.push(row.into_model()?),
        }
    }
    Ok(records)
}

#[derive(FromRow)]
pub(crate) struct PageCheckRow<C: Columns> {
    id: i64,
    page_id: i64,
    run_id: Option<i64>,
    checked_at: C::Time,
    availability: String,
    http_status: Option<i64>,
    detail: String,
}

impl<C: Columns> PageCheckRow<C> {
    pub(crate) fn into_model(self) -> Result<PageCheckRecord> {
        Ok(PageCheckRecord {
            id: self.id,
            page_id: self.page_id,
            run_id: self.run_id,
            checked_at: self.checked_at.into_time()?,
            availability: rules::availability(&self.availability)?,
            http_status: self.http_status.map(rules::http_status).transpose()?,
            detail: self.detail,
        })
    }
}

// ----- jobs -----

/// Columns of a job; keep in sync with [`JobRow`].
macro_rules! job_columns {
    () => {
        "id, kind, payload, state, attempts, max_attempts, run_at, lease_until, last_error, \
         dedup_key, created_at, updated_at"
    };
}
pub(crate) use job_columns;

#[derive(FromRow)]
pub(crate) struct JobRow<C: Columns> {
    id: i64,
    kind: String,
    payload: C::Json,
    state: String,
    attempts: i64,
    max_attempts: i64,
    run_at: C::Time,
    lease_until: Option<C::Time>,
    last_error: Option<String>,
    dedup_key: Option<String>,
    created_at: C::Time,
    updated_at: C::Time,
}

impl<C: Columns> JobRow<C> {
    pub(crate) fn into_model(self) -> Result<Job> {
        Ok(Job {
            id: self.id,
            kind: self.kind,
            payload: self.payload.into_value("job payload")?,
            state: JobState::parse(&self.state).ok_or_else(|| {
                StoreError::Invalid(format!("stored job state {:?} is unknown", self.state))
            })?,
            attempts: to_u32(self.attempts, "job attempts")?,
            max_attempts: to_u32(self.max_attempts, "job max attempts")?,
            run_at: self.run_at.into_time()?,
            lease_until: opt_time(self.lease_until)?,
            last_error: self.last_error,
            dedup_key: self.dedup_key,
            created_at: self.created_at.into_time()?,
            updated_at: self.updated_at.into_time()?,
        })
    }
}

// ----- schedules and runs -----

/// Selects schedules; keep in sync with [`ScheduleRow`].
macro_rules! schedule_select {
    () => {
        "SELECT id, name, kind, cron, timezone, seeds, config, enabled, owner, last_fired_at, \
         created_at, updated_at FROM schedules"
    };
}
pub(crate) use schedule_select;

#[derive(FromRow)]
pub(crate) struct ScheduleRow<C: Columns> {
    id: i64,
    name: String,
    kind: String,
    cron: String,
    timezone: String,
    seeds: C::Strings,
    config: C::Json,
    enabled: bool,
    owner: Option<String>,
    last_fired_at: Option<C::Time>,
    created_at: C::Time,
    updated_at: C::Time,
}

impl<C: Columns> ScheduleRow<C> {
    pub(crate) fn into_model(self) -> Result<Schedule> {
        Ok(Schedule {
            id: self.id,
            name: self.name,
            kind: rules::run_kind(&self.kind)?,
            cron: self.cron,
            timezone: self.timezone,
            seeds: self.seeds.into_value("schedule seeds")?,
            config: self.config.into_value("schedule config")?,
            enabled: self.enabled,
            owner: self.owner,
            last_fired_at: opt_time(self.last_fired_at)?,
            created_at: self.created_at.into_time()?,
            updated_at: self.updated_at.into_time()?,
        })
    }
}

/// Selects runs with their schedule's name; keep in sync with [`RunRow`].
macro_rules! run_select {
    () => {
        "SELECT r.id, r.kind, r.schedule_id, s.name AS schedule_name, r.job_id, r.trigger, \
         r.state, r.scheduled_for, r.created_at, r.started_at, r.finished_at, r.pages_checked, \
         r.new_matches, r.matches_removed, r.errors, r.matches_reopened, r.aliases_checked, \
         r.aliases_kept, r.aliases_removed, r.stats, r.error, r.cancel_requested \
         FROM runs r LEFT JOIN schedules s ON s.id = r.schedule_id"
    };
}
pub(crate) use run_select;

#[derive(FromRow)]
pub(crate) struct RunRow<C: Columns> {
    id: i64,
    kind: String,
    schedule_id: Option<i64>,
    schedule_name: Option<String>,
    job_id: Option<i64>,
    trigger: String,
    state: String,
    scheduled_for: Option<C::Time>,
    created_at: C::Time,
    started_at: Option<C::Time>,
    finished_at: Option<C::Time>,
    pages_checked: i64,
    new_matches: i64,
    matches_removed: i64,
    errors: i64,
    matches_reopened: i64,
    aliases_checked: i64,
    aliases_kept: i64,
    aliases_removed: i64,
    stats: C::Json,
    error: Option<String>,
    cancel_requested: bool,
}

impl<C: Columns> RunRow<C> {
    pub(crate) fn into_model(self) -> Result<Run> {
        Ok(Run {
            id: self.id,
            kind: rules::run_kind(&self.kind)?,
            schedule_id: self.schedule_id,
            schedule_name: self.schedule_name,
            job_id: self.job_id,
            trigger: rules::run_trigger(&self.trigger)?,
            state: rules::run_state(&self.state)?,
            scheduled_for: opt_time(self.scheduled_for)?,
            created_at: self.created_at.into_time()?,
            started_at: opt_time(self.started_at)?,
            finished_at: opt_time(self.finished_at)?,
            counts: rules::run_counts([
                self.pages_checked,
                self.new_matches,
                self.matches_removed,
                self.errors,
                self.matches_reopened,
                self.aliases_checked,
                self.aliases_kept,
                self.aliases_removed,
            ])?,
            stats: self.stats.into_value("run stats")?,
            error: self.error,
            cancel_requested: self.cancel_requested,
        })
    }
}

// ----- users -----

#[derive(FromRow)]
pub(crate) struct UserRow<C: Columns> {
    id: i64,
    email: String,
    password_hash: String,
    role: String,
    rights_holder_id: Option<i64>,
    created_at: C::Time,
}

impl<C: Columns> UserRow<C> {
    pub(crate) fn into_model(self) -> Result<User> {
        Ok(User {
            id: self.id,
            email: self.email,
            password_hash: self.password_hash,
            role: Role::parse(&self.role).ok_or_else(|| {
                StoreError::Invalid(format!("stored role {:?} is unknown", self.role))
            })?,
            rights_holder_id: self.rights_holder_id,
            created_at: self.created_at.into_time()?,
        })
    }
}

/// A stored [`crate::RightsHolderProfile`].
#[derive(sqlx::FromRow)]
pub(crate) struct RightsHolderProfileRow<C: Columns> {
    rights_holder_id: i64,
    legal_name: Option<String>,
    address: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    agent_name: Option<String>,
    agent_role: Option<String>,
    agent_contact: Option<String>,
    signature: Option<String>,
    language: String,
    updated_at: C::Time,
}

impl<C: Columns> RightsHolderProfileRow<C> {
    pub(crate) fn into_model(self) -> Result<crate::RightsHolderProfile> {
        Ok(crate::RightsHolderProfile {
            rights_holder_id: self.rights_holder_id,
            legal_name: self.legal_name,
            address: self.address,
            email: self.email,
            phone: self.phone,
            agent_name: self.agent_name,
            agent_role: self.agent_role,
            agent_contact: self.agent_contact,
            signature: self.signature,
            language: self.language,
            updated_at: self.updated_at.into_time()?,
        })
    }
}
