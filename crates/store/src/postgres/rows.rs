//! The rows the PostgreSQL backend reads, and their conversion into the domain records.

use chrono::{DateTime, Utc};
use sqlx::FromRow;
use sqlx::types::Json;

use crate::rules::{self, to_u32, to_u64};
use crate::{
    EvidencePassage, IndexedSegment, Job, JobState, MatchRecord, Page, PageCheckRecord, Result,
    RightsHolder, Role, Run, Schedule, SegmentFingerprint, Site, StoreError, User, WorkSummary,
};

#[derive(FromRow)]
pub(super) struct RightsHolderRow {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) created_at: DateTime<Utc>,
}

impl RightsHolderRow {
    pub(super) fn into_model(self) -> RightsHolder {
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
pub(super) use work_summary_columns;

#[derive(FromRow)]
pub(super) struct WorkRow {
    pub(super) id: i64,
    pub(super) rights_holder_id: i64,
    pub(super) external_id: String,
    pub(super) title: String,
    pub(super) content_hash: String,
    pub(super) fingerprint_version: i64,
    pub(super) content_len: i64,
    pub(super) segment_count: i64,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
}

impl WorkRow {
    pub(super) fn into_model(self) -> Result<WorkSummary> {
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
pub(super) struct WorkWithContentRow {
    #[sqlx(flatten)]
    pub(super) summary: WorkRow,
    pub(super) content: String,
}

#[derive(FromRow)]
pub(super) struct SegmentRow {
    pub(super) work_id: i64,
    pub(super) ordinal: i64,
    pub(super) start_offset: i64,
    pub(super) end_offset: i64,
    pub(super) simhash: i64,
}

impl SegmentRow {
    pub(super) fn into_model(self) -> Result<IndexedSegment> {
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
pub(super) struct SiteRow {
    pub(super) id: i64,
    pub(super) host: String,
    pub(super) created_at: DateTime<Utc>,
}

impl SiteRow {
    pub(super) fn into_model(self) -> Site {
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
pub(super) use page_select;

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
pub(super) use due_pages_query;

#[derive(FromRow)]
pub(super) struct PageRow {
    pub(super) id: i64,
    pub(super) site_id: i64,
    pub(super) url: String,
    pub(super) title: Option<String>,
    pub(super) text: String,
    pub(super) content_hash: String,
    pub(super) http_status: i64,
    pub(super) first_seen: DateTime<Utc>,
    pub(super) last_seen: DateTime<Utc>,
    pub(super) matched_hash: Option<String>,
    pub(super) availability: Option<String>,
    pub(super) availability_checked_at: Option<DateTime<Utc>>,
    pub(super) etag: Option<String>,
    pub(super) last_modified: Option<String>,
}

impl PageRow {
    pub(super) fn into_model(self) -> Result<Page> {
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
pub(super) struct MatchEvidenceRow {
    pub(super) id: i64,
    pub(super) page_id: i64,
    pub(super) page_url: String,
    pub(super) page_title: Option<String>,
    pub(super) work_id: i64,
    pub(super) work_external_id: String,
    pub(super) work_title: String,
    pub(super) rights_holder_id: i64,
    pub(super) score: f64,
    pub(super) coverage: f64,
    pub(super) containment: f64,
    pub(super) copied_chars: i64,
    pub(super) method: String,
    pub(super) status: String,
    pub(super) first_seen: DateTime<Utc>,
    pub(super) last_seen: DateTime<Utc>,
    pub(super) removed_at: Option<DateTime<Utc>>,
    pub(super) evidence_hash: String,
    pub(super) page_start: Option<i64>,
    pub(super) page_end: Option<i64>,
    pub(super) work_start: Option<i64>,
    pub(super) work_end: Option<i64>,
}

impl MatchEvidenceRow {
    pub(super) fn passage(&self) -> Result<Option<EvidencePassage>> {
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

    pub(super) fn into_model(self) -> Result<MatchRecord> {
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
pub(super) use job_columns;

#[derive(FromRow)]
pub(super) struct JobRow {
    pub(super) id: i64,
    pub(super) kind: String,
    pub(super) payload: serde_json::Value,
    pub(super) state: String,
    pub(super) attempts: i64,
    pub(super) max_attempts: i64,
    pub(super) run_at: DateTime<Utc>,
    pub(super) lease_until: Option<DateTime<Utc>>,
    pub(super) last_error: Option<String>,
    pub(super) dedup_key: Option<String>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
}

impl JobRow {
    pub(super) fn into_model(self) -> Result<Job> {
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
pub(super) use schedule_select;

#[derive(FromRow)]
pub(super) struct ScheduleRow {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) cron: String,
    pub(super) timezone: String,
    pub(super) seeds: Json<Vec<String>>,
    pub(super) config: serde_json::Value,
    pub(super) enabled: bool,
    pub(super) owner: Option<String>,
    pub(super) last_fired_at: Option<DateTime<Utc>>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
}

impl ScheduleRow {
    pub(super) fn into_model(self) -> Result<Schedule> {
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
pub(super) use run_select;

#[derive(FromRow)]
pub(super) struct RunRow {
    pub(super) id: i64,
    pub(super) kind: String,
    pub(super) schedule_id: Option<i64>,
    pub(super) schedule_name: Option<String>,
    pub(super) job_id: Option<i64>,
    pub(super) trigger: String,
    pub(super) state: String,
    pub(super) scheduled_for: Option<DateTime<Utc>>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) started_at: Option<DateTime<Utc>>,
    pub(super) finished_at: Option<DateTime<Utc>>,
    pub(super) pages_checked: i64,
    pub(super) new_matches: i64,
    pub(super) matches_removed: i64,
    pub(super) errors: i64,
    pub(super) stats: serde_json::Value,
    pub(super) error: Option<String>,
    pub(super) cancel_requested: bool,
}

impl RunRow {
    pub(super) fn into_model(self) -> Result<Run> {
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
pub(super) struct PageCheckRow {
    pub(super) id: i64,
    pub(super) page_id: i64,
    pub(super) run_id: Option<i64>,
    pub(super) checked_at: DateTime<Utc>,
    pub(super) availability: String,
    pub(super) http_status: Option<i64>,
    pub(super) detail: String,
}

impl PageCheckRow {
    pub(super) fn into_model(self) -> Result<PageCheckRecord> {
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
pub(super) struct UserRow {
    pub(super) id: i64,
    pub(super) email: String,
    pub(super) password_hash: String,
    pub(super) role: String,
    pub(super) rights_holder_id: Option<i64>,
    pub(super) created_at: DateTime<Utc>,
}

impl UserRow {
    pub(super) fn into_model(self) -> Result<User> {
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
