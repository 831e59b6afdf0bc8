//! The rules both backends apply before touching the database, and the conversions they share.
//!
//! Keeping validation here, not in each backend, is what makes "same input, same error" hold by
//! construction: a refused value is refused with the same [`StoreError::Invalid`] message whether
//! SQLite or PostgreSQL runs, and nothing is written.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::{
    Availability, Id, InfringingPage, JobCount, JobLease, JobState, MatchStatus, NewJob, NewMatch,
    NewSchedule, NewUser, NewWork, PageCheck, PageVerdict, Result, Review, Role, RunCounts,
    RunKind, RunState, RunTrigger, Schedule, ScheduleFire, StoreError, VerdictOutcome, WorkChapter,
    WorkStatus,
};

// ----- conversions -----

pub(crate) fn to_u32(value: i64, what: &str) -> Result<u32> {
    u32::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("stored {what} {value} is out of range")))
}

pub(crate) fn to_u64(value: i64, what: &str) -> Result<u64> {
    u64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("stored {what} {value} is out of range")))
}

pub(crate) fn to_json(value: &impl serde::Serialize, what: &str) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|error| StoreError::Invalid(format!("{what} is not serializable: {error}")))
}

pub(crate) fn to_i64(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("{what} {value} is too large to store")))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|error| StoreError::Invalid(format!("stored {what} is not valid JSON: {error}")))
}

pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

// ----- validation -----

/// Checks a rights holder's name and returns it trimmed.
pub(crate) fn rights_holder_name(name: &str) -> Result<&str> {
    let name = name.trim();
    if name.is_empty() {
        return Err(StoreError::Invalid("a rights holder needs a name".into()));
    }
    Ok(name)
}

/// The stored length of a work's text.
pub(crate) fn content_len(work: &NewWork) -> Result<i64> {
    i64::try_from(work.content.len())
        .map_err(|_| StoreError::Invalid("work text is too long".into()))
}

/// Whether a stored work (`title`, `content_hash`, `fingerprint_version`, and the `(algorithm,
/// version)` of its fingerprints) already is `work`, so that upserting it writes nothing.
pub(crate) fn work_unchanged(
    work: &NewWork,
    (title, content_hash, version): (&str, &str, i64),
    algorithms: &[(String, u32)],
) -> bool {
    title == work.title
        && content_hash == work.content_hash
        && version == i64::from(work.fingerprint_version)
        && algorithms == new_algorithm_versions(work)
}

/// What a stored work's catalog entry holds, as an upsert compares it with the new one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredCatalog {
    pub(crate) author: Option<String>,
    pub(crate) published_at: Option<DateTime<Utc>>,
    pub(crate) status: WorkStatus,
    pub(crate) chapters: Vec<WorkChapter>,
    /// The work's own licensed hosts, sorted.
    pub(crate) licensed_hosts: Vec<String>,
}

/// Whether upserting `work` would leave the stored catalog entry as it is: same author,
/// publication date (at stored precision), chapters and, when given, licensed hosts, and the
/// work still active (re-adding a withdrawn work brings it back).
pub(crate) fn catalog_unchanged(
    work: &NewWork,
    stored: &StoredCatalog,
    published_at: Option<DateTime<Utc>>,
) -> bool {
    stored.author == work.author
        && stored.published_at == published_at
        && stored.status == WorkStatus::Active
        && stored.chapters == work.chapters
        && work
            .licensed_hosts
            .as_ref()
            .is_none_or(|hosts| stored.licensed_hosts == sorted_hosts(hosts))
}

/// Hosts sorted and without repeats, as they are compared and stored.
pub(crate) fn sorted_hosts(hosts: &[String]) -> Vec<String> {
    let mut hosts = hosts.to_vec();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Checks a licensed host as the store keeps it: a lower-case host name without scheme, port,
/// path or wildcard, so "this host or a subdomain of it" is a plain suffix comparison.
pub(crate) fn validate_licensed_host(host: &str) -> Result<()> {
    let valid = !host.is_empty()
        && host.len() <= 253
        && !host.starts_with(['.', '-'])
        && !host.ends_with(['.', '-'])
        && !host.contains("..")
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "{host:?} is not a host name as the store keeps them (lower case, letters, digits,              dots and hyphens, no scheme, port or path)"
        )))
    }
}

/// Which chapters a match's evidence copies and how much of each: the union of the evidence's
/// work ranges intersected with every chapter. A chapter is named when the evidence covers at
/// least `MIN_CHAPTER_COPY_BYTES` of it or half of it (a short chapter copied whole), so a
/// passage that runs a few characters into the next chapter does not name that chapter.
pub(crate) fn chapter_copies(
    evidence: &[crate::EvidencePassage],
    chapters: &[WorkChapter],
) -> Vec<crate::ChapterCopy> {
    let mut ranges: Vec<(u32, u32)> = evidence
        .iter()
        .map(|e| (e.work_start, e.work_end))
        .filter(|(start, end)| start < end)
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    chapters
        .iter()
        .filter_map(|chapter| {
            let copied: u32 = merged
                .iter()
                .map(|&(start, end)| {
                    end.min(chapter.end)
                        .saturating_sub(start.max(chapter.start))
                })
                .sum();
            let len = chapter.end - chapter.start;
            let named = copied >= MIN_CHAPTER_COPY_BYTES || (len > 0 && copied * 2 >= len);
            (named && copied > 0).then(|| crate::ChapterCopy {
                ordinal: chapter.ordinal,
                title: chapter.title.clone(),
                copied_bytes: copied,
                coverage: f64::from(copied) / f64::from(len.max(1)),
            })
        })
        .collect()
}

/// Bytes of a chapter a match must cover to name it: 80 CJK characters, the matcher's default
/// `min_copied_chars`.
pub(crate) const MIN_CHAPTER_COPY_BYTES: u32 = 240;

/// Refuses the derived statuses (`withdrawn`, `licensed`) as a review decision: they follow
/// from the library and its licences, and would be overwritten by them.
pub(crate) fn validate_review_status(status: MatchStatus) -> Result<()> {
    if status.is_review_status() {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "{} is not a review decision: it follows from the library (withdraw the work, or \
             license the host, instead)",
            status.as_str()
        )))
    }
}

/// Refuses a statistics filter that could only mean a mistake.
pub(crate) fn validate_stats_filter(filter: &crate::StatsFilter) -> Result<()> {
    if let (Some(since), Some(until)) = (filter.since, filter.until)
        && since >= until
    {
        return Err(StoreError::Invalid(format!(
            "the date range is empty: {since} is not before {until}"
        )));
    }
    if filter.min_score.is_some_and(|s| !s.is_finite()) {
        return Err(StoreError::Invalid(
            "the minimum score must be a number".into(),
        ));
    }
    if let Some(status) = filter.statuses.iter().find(|s| !s.is_review_status()) {
        return Err(StoreError::Invalid(format!(
            "{} is not a stored state: licensed and withdrawn matches are never counted",
            status.as_str()
        )));
    }
    if filter.site.as_ref().is_some_and(|s| s.trim().is_empty()) {
        return Err(StoreError::Invalid(
            "name a site, or no site filter at all".into(),
        ));
    }
    Ok(())
}

pub(crate) fn validate_work(work: &NewWork) -> Result<()> {
    let mut previous_end = 0;
    for (index, chapter) in work.chapters.iter().enumerate() {
        if chapter.ordinal as usize != index
            || chapter.start > chapter.end
            || chapter.start < previous_end
            || chapter.end as usize > work.content.len()
        {
            return Err(StoreError::Invalid(format!(
                "chapter {} of work {:?} ({}..{}) is out of order or outside the {}-byte text: \
                 chapters are numbered from 0 and follow each other inside the text",
                chapter.ordinal,
                work.external_id,
                chapter.start,
                chapter.end,
                work.content.len()
            )));
        }
        previous_end = chapter.end;
    }
    for host in work.licensed_hosts.iter().flatten() {
        validate_licensed_host(host)?;
    }
    if work.external_id.trim().is_empty() {
        return Err(StoreError::Invalid("a work needs an external id".into()));
    }
    if work.content_hash.is_empty() {
        return Err(StoreError::Invalid(format!(
            "work {:?} has an empty content hash",
            work.external_id
        )));
    }
    let mut ordinals = HashSet::with_capacity(work.segments.len());
    for segment in &work.segments {
        if !ordinals.insert(segment.ordinal) {
            return Err(StoreError::Invalid(format!(
                "work {:?} has two segments with ordinal {}",
                work.external_id, segment.ordinal
            )));
        }
        if segment.start > segment.end || segment.end as usize > work.content.len() {
            return Err(StoreError::Invalid(format!(
                "segment {} of work {:?} spans bytes {}..{} outside the {}-byte text",
                segment.ordinal,
                work.external_id,
                segment.start,
                segment.end,
                work.content.len()
            )));
        }
    }
    Ok(())
}

pub(crate) fn validate_matches(page_id: Id, matches: &[NewMatch]) -> Result<()> {
    let mut works = HashSet::with_capacity(matches.len());
    for m in matches {
        if !works.insert(m.work_id) {
            return Err(StoreError::Invalid(format!(
                "page {page_id} lists work {} twice",
                m.work_id
            )));
        }
        for (name, value) in [
            ("score", m.score),
            ("coverage", m.coverage),
            ("containment", m.containment),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(StoreError::Invalid(format!(
                    "{name} {value} of page {page_id} × work {} is outside [0, 1]",
                    m.work_id
                )));
            }
        }
        if m.method.trim().is_empty() {
            return Err(StoreError::Invalid(format!(
                "match of page {page_id} × work {} names no method",
                m.work_id
            )));
        }
        for passage in &m.evidence {
            if passage.page_start > passage.page_end || passage.work_start > passage.work_end {
                return Err(StoreError::Invalid(format!(
                    "evidence of page {page_id} × work {} has a reversed range",
                    m.work_id
                )));
            }
        }
    }
    Ok(())
}

/// The page key and its site: the normalized URL without fragment, and the lower-case host with
/// the port when it is not the scheme's default (the URL parser drops default ports).
pub(crate) fn page_key(raw: &str) -> Result<(String, String)> {
    let mut url = url::Url::parse(raw)
        .map_err(|error| StoreError::Invalid(format!("page URL {raw:?} is malformed: {error}")))?;
    let host = url
        .host_str()
        .filter(|host| !host.is_empty())
        .ok_or_else(|| StoreError::Invalid(format!("page URL {raw:?} has no host")))?
        .to_ascii_lowercase();
    let host = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    };
    url.set_fragment(None);
    Ok((url.into(), host))
}

/// Normalizes an email for storage and lookup; `None` when it cannot be an address.
pub(crate) fn normalize_email(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    (!local.is_empty() && !domain.is_empty()).then_some(email)
}

/// `(algorithm, version)` of a new work's fingerprints, ordered by algorithm name
/// (bytewise), like the stored ones each backend reads back.
pub(crate) fn new_algorithm_versions(work: &NewWork) -> Vec<(String, u32)> {
    let mut versions: Vec<(String, u32)> = work
        .fingerprints
        .iter()
        .map(|f| (f.algorithm.clone(), f.version))
        .collect();
    versions.sort();
    versions
}

/// Checks a job before it is enqueued.
pub(crate) fn validate_job(job: &NewJob) -> Result<()> {
    if job.kind.trim().is_empty() {
        return Err(StoreError::Invalid("a job needs a kind".into()));
    }
    if job.max_attempts == 0 {
        return Err(StoreError::Invalid(format!(
            "{} job must allow at least one attempt",
            job.kind
        )));
    }
    Ok(())
}

/// The end of a lease taken at `now`; a lease must be positive and representable.
pub(crate) fn lease_until(now: DateTime<Utc>, lease: chrono::Duration) -> Result<DateTime<Utc>> {
    if lease <= chrono::Duration::zero() {
        return Err(StoreError::Invalid(format!(
            "job lease {lease} is not positive"
        )));
    }
    now.checked_add_signed(lease)
        .ok_or_else(|| StoreError::Invalid(format!("job lease {lease} is too long")))
}

/// Why a claim is no longer current, given the job's state and attempt count now.
pub(crate) fn describe_lost_lease(lease: JobLease, state: &str, attempts: i64) -> String {
    if state == "running" {
        format!(
            "job {} was taken over (attempt {attempts} runs now, this was attempt {})",
            lease.job_id, lease.attempt
        )
    } else {
        format!(
            "job {} is {state}, no longer running as attempt {}",
            lease.job_id, lease.attempt
        )
    }
}

/// The error of an update of a claimed job that touched no row, given the job's `(state,
/// attempts)` now (`None`: the job does not exist).
pub(crate) fn lease_not_current(lease: JobLease, found: Option<(String, i64)>) -> StoreError {
    match found {
        Some((state, attempts)) => {
            StoreError::LeaseLost(describe_lost_lease(lease, &state, attempts))
        }
        None => StoreError::NotFound(format!("job {}", lease.job_id)),
    }
}

/// The refusal of [`crate::Store::requeue_dead_job`] for a job that is not dead, given its
/// state (`None`: the job does not exist).
pub(crate) fn not_requeueable(job_id: Id, state: Option<String>) -> StoreError {
    match state {
        None => StoreError::NotFound(format!("job {job_id}")),
        Some(state) => StoreError::Invalid(format!(
            "job {job_id} is {state}; only dead jobs are requeued"
        )),
    }
}

/// The refusal of [`crate::Store::requeue_dead_job`] when a pending job with the same dedup
/// key took the dead job's place meanwhile.
pub(crate) fn requeue_taken(job_id: Id) -> StoreError {
    StoreError::Invalid(format!(
        "job {job_id} cannot be requeued: another pending job has its dedup key"
    ))
}

/// The value an insert returned, or `taken()` when it broke a unique constraint (the row
/// exists already); any other database error as it is.
pub(crate) fn refuse_duplicate<T>(
    result: std::result::Result<T, sqlx::Error>,
    taken: impl FnOnce() -> StoreError,
) -> Result<T> {
    match result {
        Ok(value) => Ok(value),
        Err(error) if is_unique_violation(&error) => Err(taken()),
        Err(error) => Err(error.into()),
    }
}

/// One row of [`crate::Store::job_counts`] from stored values.
pub(crate) fn job_count(kind: String, state: &str, count: i64) -> Result<JobCount> {
    Ok(JobCount {
        kind,
        state: JobState::parse(state)
            .ok_or_else(|| StoreError::Invalid(format!("stored job state {state:?} is unknown")))?,
        count: to_u64(count, "job count")?,
    })
}

/// A name for this process as a leader: host, process id and a random part, so two processes
/// (or two stores in one process) never mistake each other's lease for their own.
pub(crate) fn leader_holder_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let nanos = Utc::now().timestamp_subsec_nanos();
    let unique = std::collections::hash_map::RandomState::new();
    let random = std::hash::BuildHasher::hash_one(&unique, nanos);
    format!("{host}:{}:{random:016x}", std::process::id())
}

/// A positive duration in whole microseconds.
pub(crate) fn positive_micros(duration: chrono::Duration, what: &str) -> Result<i64> {
    match duration.num_microseconds() {
        Some(micros) if micros > 0 => Ok(micros),
        _ => Err(StoreError::Invalid(format!(
            "{what} {duration} is not a positive number of microseconds"
        ))),
    }
}

/// Checks a schedule and returns its trimmed name.
pub(crate) fn validate_schedule(schedule: &NewSchedule) -> Result<&str> {
    let name = schedule.name.trim();
    if name.is_empty() {
        return Err(StoreError::Invalid("a schedule needs a name".into()));
    }
    if schedule.cron.trim().is_empty() {
        return Err(StoreError::Invalid(format!(
            "schedule {name:?} needs a cron expression"
        )));
    }
    if schedule.timezone.trim().is_empty() {
        return Err(StoreError::Invalid(format!(
            "schedule {name:?} needs a time zone"
        )));
    }
    Ok(name)
}

/// Whether [`crate::Store::ensure_schedule`] has to rewrite a stored schedule's definition.
pub(crate) fn schedule_differs(stored: &Schedule, wanted: &NewSchedule) -> bool {
    stored.cron != wanted.cron.trim()
        || stored.timezone != wanted.timezone.trim()
        || stored.seeds != wanted.seeds
        || stored.config != wanted.config
        || stored.owner != wanted.owner
}

/// The refusal of [`crate::Store::ensure_schedule`] for a name taken by another kind.
pub(crate) fn schedule_kind_mismatch(name: &str, stored: RunKind, wanted: RunKind) -> StoreError {
    StoreError::Invalid(format!(
        "schedule {name:?} is a {} schedule, not a {} one",
        stored.as_str(),
        wanted.as_str()
    ))
}

/// Checks the job of a run: a valid job without a dedup key (a run is started once, by the
/// caller that creates it, so a second enqueue must not fold into the first run's job).
pub(crate) fn validate_run_job(job: &NewJob) -> Result<()> {
    validate_job(job)?;
    match &job.dedup_key {
        Some(key) => Err(StoreError::Invalid(format!(
            "the {} job of a run cannot have a dedup key ({key:?})",
            job.kind
        ))),
        None => Ok(()),
    }
}

/// Checks that a fire's run and job agree with the fire, and that the fire moves the schedule
/// forward (firing a tick that is not after the last one would fire it twice).
pub(crate) fn validate_fire(fire: &ScheduleFire) -> Result<()> {
    let id = fire.schedule_id;
    if fire.run.schedule_id != Some(id) {
        return Err(StoreError::Invalid(format!(
            "a fire of schedule {id} cannot create a run of {}",
            fire.run.schedule_id.map_or_else(
                || "no schedule".to_owned(),
                |other| format!("schedule {other}")
            )
        )));
    }
    if fire.run.scheduled_for != Some(fire.scheduled_for) {
        return Err(StoreError::Invalid(format!(
            "a fire of schedule {id} for {} cannot create a run scheduled for {}",
            fire.scheduled_for.to_rfc3339(),
            fire.run
                .scheduled_for
                .map_or_else(|| "no tick".to_owned(), |at| at.to_rfc3339())
        )));
    }
    if let Some(last) = fire.expected_last_fired_at
        && stored_micros(fire.scheduled_for) <= stored_micros(last)
    {
        return Err(StoreError::Invalid(format!(
            "schedule {id} cannot fire {}: it is not after its last fire {}",
            fire.scheduled_for.to_rfc3339(),
            last.to_rfc3339()
        )));
    }
    validate_run_job(&fire.job)
}

/// A timestamp at stored precision (whole microseconds), as both backends compare them.
fn stored_micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// Checks the state a run ends with.
pub(crate) fn validate_run_end(id: Id, state: RunState) -> Result<()> {
    if state.is_finished() {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "run {id} cannot end as {}: a run ends as succeeded, failed or cancelled",
            state.as_str()
        )))
    }
}

/// The refusal of [`crate::Store::request_run_cancel`] for a run that is neither queued nor
/// running, given its state (`None`: the run does not exist).
pub(crate) fn not_cancellable(id: Id, state: Option<String>) -> StoreError {
    match state {
        None => StoreError::NotFound(format!("run {id}")),
        Some(state) => run_already_ended(id, &state),
    }
}

/// The refusal of [`crate::Store::request_run_cancel`] for a run that already ended.
pub(crate) fn run_already_ended(id: Id, state: &str) -> StoreError {
    StoreError::Invalid(format!(
        "run {id} already ended ({state}); there is nothing to cancel"
    ))
}

/// A run's counts as stored: `[pages_checked, new_matches, matches_removed, errors,
/// matches_reopened, aliases_checked, aliases_kept, aliases_removed]`.
pub(crate) fn run_counts_to_db(counts: &RunCounts) -> Result<[i64; 8]> {
    Ok([
        to_i64(counts.pages_checked, "pages checked")?,
        to_i64(counts.new_matches, "new matches")?,
        to_i64(counts.matches_removed, "matches removed")?,
        to_i64(counts.errors, "errors")?,
        to_i64(counts.matches_reopened, "matches reopened")?,
        to_i64(counts.aliases_checked, "aliases checked")?,
        to_i64(counts.aliases_kept, "aliases kept")?,
        to_i64(counts.aliases_removed, "aliases removed")?,
    ])
}

/// A run's counts from stored values, in the order of [`run_counts_to_db`].
pub(crate) fn run_counts(stored: [i64; 8]) -> Result<RunCounts> {
    let [
        pages_checked,
        new_matches,
        matches_removed,
        errors,
        matches_reopened,
        aliases_checked,
        aliases_kept,
        aliases_removed,
    ] = stored;
    Ok(RunCounts {
        pages_checked: to_u64(pages_checked, "pages checked")?,
        new_matches: to_u64(new_matches, "new matches")?,
        matches_removed: to_u64(matches_removed, "matches removed")?,
        errors: to_u64(errors, "errors")?,
        matches_reopened: to_u64(matches_reopened, "matches reopened")?,
        aliases_checked: to_u64(aliases_checked, "aliases checked")?,
        aliases_kept: to_u64(aliases_kept, "aliases kept")?,
        aliases_removed: to_u64(aliases_removed, "aliases removed")?,
    })
}

pub(crate) fn run_kind(value: &str) -> Result<RunKind> {
    RunKind::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored run kind {value:?} is unknown")))
}

pub(crate) fn run_state(value: &str) -> Result<RunState> {
    RunState::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored run state {value:?} is unknown")))
}

pub(crate) fn run_trigger(value: &str) -> Result<RunTrigger> {
    RunTrigger::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored run trigger {value:?} is unknown")))
}

pub(crate) fn availability(value: &str) -> Result<Availability> {
    Availability::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored availability {value:?} is unknown")))
}

pub(crate) fn http_status(value: i64) -> Result<u16> {
    u16::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("stored HTTP status {value} is invalid")))
}

/// Checks a removal check: no work can be both gone from the page and still on it.
pub(crate) fn validate_page_check(check: &PageCheck) -> Result<()> {
    let present: HashSet<Id> = check.still_present.iter().copied().collect();
    if let Some(work) = check.removed.iter().find(|work| present.contains(work)) {
        return Err(StoreError::Invalid(format!(
            "the check of page {} lists work {work} as both removed and still present",
            check.page_id
        )));
    }
    Ok(())
}

/// [`crate::Store::infringing_pages`] from `(page id, url, content hash, work id)` rows ordered
/// by page, then work.
/// One row of the infringing pages query: page id, URL, content hash, ETag, Last-Modified, then
/// one unrejected match's work and evidence hash.
pub(crate) type InfringingRow = (
    Id,
    String,
    String,
    Option<String>,
    Option<String>,
    Id,
    String,
);

pub(crate) fn group_infringing_pages(rows: Vec<InfringingRow>) -> Vec<InfringingPage> {
    let mut pages: Vec<InfringingPage> = Vec::new();
    for (page_id, url, content_hash, etag, last_modified, work_id, evidence_hash) in rows {
        let stale = evidence_hash != content_hash;
        match pages.last_mut() {
            Some(last) if last.page_id == page_id => {
                last.work_ids.push(work_id);
                if stale {
                    last.stale_evidence.push(work_id);
                }
            }
            _ => pages.push(InfringingPage {
                page_id,
                url,
                content_hash,
                etag,
                last_modified,
                work_ids: vec![work_id],
                stale_evidence: if stale { vec![work_id] } else { Vec::new() },
            }),
        }
    }
    pages
}

/// A match of a page as it was before a new verdict is recorded.
pub(crate) struct PreviousMatch {
    pub id: Id,
    pub work_id: Id,
    pub status: MatchStatus,
    pub review: Review,
    /// The text its evidence points into.
    pub evidence_hash: String,
    /// Its removal was seen (`removed_at`) before the page's `last_seen`: a fetch after the
    /// removal is what may bring it back.
    pub removed_before_last_seen: bool,
}

/// What recording a verdict does to the previous matches of works the verdict no longer has,
/// and the removal check it amounts to (see `Store::record_page_matches`).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct VerdictPlan {
    /// Matches to delete.
    pub delete: Vec<Id>,
    /// `open` / `notice_sent` matches to move to `removed`.
    pub remove: Vec<Id>,
    /// `removed` matches found again in a text fetched after their removal: reopened.
    pub reopen: Vec<Id>,
    /// The check to append, when the page changed since some unrejected matches were found.
    pub check: Option<(Availability, String)>,
    /// The review state of each match of the verdict, in its order.
    pub reviews: Vec<Review>,
    /// Works whose match the certainty gate confirmed now (an automatic decision to log).
    pub confirmed_now: Vec<Id>,
}

/// Decides, in one place for both backends, what a new verdict on the text `content_hash`
/// does to the previous matches of a page.
pub(crate) fn plan_verdict(
    previous: &[PreviousMatch],
    found: &HashSet<Id>,
    content_hash: &str,
) -> VerdictPlan {
    let mut plan = VerdictPlan::default();
    // Unrejected matches this text is the first verdict on, and those of them it lost.
    let (mut judged, mut lost) = (0_usize, 0_usize);
    for m in previous {
        let page_changed = m.evidence_hash != content_hash;
        if found.contains(&m.work_id) {
            // Back after its removal was seen: in a changed text or, after a 404, the same one.
            let back = m.status == MatchStatus::Removed && m.removed_before_last_seen;
            if back {
                plan.reopen.push(m.id);
            }
            judged += usize::from((page_changed || back) && m.review != Review::Rejected);
            continue;
        }
        if m.review == Review::Rejected {
            // Nothing to keep: the person's decision stays with the pair (match_decisions)
            // and applies again if the pair is ever found again.
            plan.delete.push(m.id);
            continue;
        }
        match (m.status, page_changed) {
            (MatchStatus::Open, false) => plan.delete.push(m.id),
            (MatchStatus::Open | MatchStatus::NoticeSent, true) => {
                plan.remove.push(m.id);
                judged += 1;
                lost += 1;
            }
            // Takedown records: a notice was sent, or the removal was already recorded.
            (MatchStatus::NoticeSent | MatchStatus::Removed, false)
            | (MatchStatus::Removed, true) => {}
            // Never stored (derived when listing), so never read here.
            (MatchStatus::Withdrawn | MatchStatus::Licensed, _) => {}
        }
    }
    if judged > 0 {
        plan.check = Some(if lost > 0 {
            (
                Availability::SoftRemoved,
                format!(
                    "re-crawl: {lost} of {judged} copied work(s) no longer on the changed page"
                ),
            )
        } else {
            (
                Availability::Online,
                "re-crawl: the page changed and still carries the copy".to_owned(),
            )
        });
    }
    plan
}

/// A previous match of a page as both backends read it: id, work, status, review, evidence
/// hash and `removed_at` (in the backend's timestamp type).
pub(crate) type PreviousRow<T> = (Id, Id, String, String, String, Option<T>);

/// The latest decision a person took on a page × work pair, as both backends read it: work,
/// decision, content hash and copied characters of the text decided on.
pub(crate) type DecisionRow = (Id, String, String, i64);

/// A person's latest decision on a pair (see [`DecisionRow`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PersonsDecision {
    pub review: Review,
    pub content_hash: String,
    pub copied_chars: u32,
}

/// Whether a page changed substantially since a person rejected its match: another text, in
/// which the copy grew by half and by at least [`SUBSTANTIAL_GROWTH_CHARS`] characters. A
/// rejected quotation surrounded by new advertisements stays rejected; a page that went on to
/// carry whole chapters is looked at again.
pub(crate) fn changed_substantially(
    decision: &PersonsDecision,
    content_hash: &str,
    copied_chars: u32,
) -> bool {
    let before = decision.copied_chars;
    decision.content_hash != content_hash
        && copied_chars >= before.saturating_add((before / 2).max(SUBSTANTIAL_GROWTH_CHARS))
}

/// See [`changed_substantially`].
pub(crate) const SUBSTANTIAL_GROWTH_CHARS: u32 = 200;

/// The review state of a match in a new verdict: a person's latest decision on the pair wins
/// (a rejection only while the page has not changed substantially: then it waits for a person
/// again); otherwise a confirmed match stays confirmed, and a pending or new one is confirmed
/// when it passes the certainty gate. Returns the state and whether the gate confirmed it now.
pub(crate) fn review_in_verdict(
    previous: Option<Review>,
    decision: Option<&PersonsDecision>,
    found: &NewMatch,
    content_hash: &str,
) -> (Review, bool) {
    match decision.map(|d| (d.review, d)) {
        Some((Review::Rejected, d)) => {
            if changed_substantially(d, content_hash, found.copied_chars) {
                (Review::Pending, false)
            } else {
                (Review::Rejected, false)
            }
        }
        Some((Review::Confirmed | Review::Licensed, d)) => (d.review, false),
        // A person put it back in the queue, or nobody decided: the gate may confirm it.
        Some((Review::Pending, _)) | None => match previous {
            Some(Review::Confirmed) => (Review::Confirmed, false),
            // Decided before decisions were recorded.
            Some(review @ (Review::Rejected | Review::Licensed)) if decision.is_none() => {
                (review, false)
            }
            _ if found.auto_confirm => (Review::Confirmed, true),
            _ => (Review::Pending, false),
        },
    }
}

/// The review state of every match of a new verdict (in `matches` order), and the works the
/// certainty gate confirmed now (their automatic decisions are logged).
pub(crate) fn verdict_reviews(
    previous: &[PreviousMatch],
    decisions: Vec<DecisionRow>,
    matches: &[NewMatch],
    content_hash: &str,
) -> Result<(Vec<Review>, Vec<Id>)> {
    let decisions: HashMap<Id, PersonsDecision> = decisions
        .into_iter()
        .map(|(work_id, review, hash, copied)| {
            Ok((
                work_id,
                PersonsDecision {
                    review: review_value(&review)?,
                    content_hash: hash,
                    copied_chars: to_u32(copied, "copied characters")?,
                },
            ))
        })
        .collect::<Result<_>>()?;
    let before: HashMap<Id, Review> = previous.iter().map(|m| (m.work_id, m.review)).collect();
    let mut reviews = Vec::with_capacity(matches.len());
    let mut confirmed_now = Vec::new();
    for m in matches {
        let (review, by_gate) = review_in_verdict(
            before.get(&m.work_id).copied(),
            decisions.get(&m.work_id),
            m,
            content_hash,
        );
        if by_gate {
            confirmed_now.push(m.work_id);
        }
        reviews.push(review);
    }
    Ok((reviews, confirmed_now))
}

/// Reads a stored review state.
pub(crate) fn review_value(value: &str) -> Result<Review> {
    Review::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored review state {value:?} is unknown")))
}

/// The whole decision of [`crate::Store::record_page_matches`] on a page whose text is
/// `content_hash`, last fetched at `last_seen`: what happens to its previous matches (`rows`,
/// as stored) and what the caller is told, given the works of the new verdict.
pub(crate) fn judge_verdict<T: PartialOrd>(
    rows: Vec<PreviousRow<T>>,
    decisions: Vec<DecisionRow>,
    last_seen: &T,
    matches: &[NewMatch],
    content_hash: &str,
) -> Result<(VerdictPlan, VerdictOutcome)> {
    let previous = rows
        .into_iter()
        .map(|(id, work_id, status, review, evidence_hash, removed_at)| {
            Ok(PreviousMatch {
                id,
                work_id,
                status: match_status(&status)?,
                review: review_value(&review)?,
                evidence_hash,
                removed_before_last_seen: removed_at.is_some_and(|r| r < *last_seen),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let previous_works: HashSet<Id> = previous.iter().map(|m| m.work_id).collect();
    let found: HashSet<Id> = matches.iter().map(|m| m.work_id).collect();
    let mut plan = plan_verdict(&previous, &found, content_hash);
    (plan.reviews, plan.confirmed_now) =
        verdict_reviews(&previous, decisions, matches, content_hash)?;
    let outcome = VerdictOutcome {
        new_matches: found.difference(&previous_works).count() as u64,
        removed: plan.remove.len() as u64,
        reopened: plan.reopen.len() as u64,
    };
    Ok((plan, outcome))
}

/// The verdicts of a batch cut into runs of consecutive verdicts on distinct pages: a run's
/// reads are made for all its pages at once, so a page recorded twice in a batch (a job
/// delivered twice) has its second verdict judged in the next run, after the first is written.
pub(crate) fn distinct_page_runs(verdicts: &[PageVerdict<'_>]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut seen = HashSet::new();
    for (i, verdict) in verdicts.iter().enumerate() {
        if !seen.insert(verdict.page_id) {
            runs.push(start..i);
            start = i;
            seen.clear();
            seen.insert(verdict.page_id);
        }
    }
    if start < verdicts.len() {
        runs.push(start..verdicts.len());
    }
    runs
}

/// The works a batch of verdicts names, each once, in order.
pub(crate) fn works_of(verdicts: &[PageVerdict<'_>]) -> Vec<Id> {
    let mut works: Vec<Id> = verdicts
        .iter()
        .flat_map(|v| v.matches.iter().map(|m| m.work_id))
        .collect();
    works.sort_unstable();
    works.dedup();
    works
}

/// `NotFound` for the first verdict, in order, on a page that does not exist or naming a work
/// that does not, as recording it alone would be refused: a batch is recorded whole or not at
/// all.
pub(crate) fn check_references(
    verdicts: &[PageVerdict<'_>],
    page_exists: impl Fn(Id) -> bool,
    work_exists: impl Fn(Id) -> bool,
) -> Result<()> {
    for verdict in verdicts {
        if !page_exists(verdict.page_id) {
            return Err(StoreError::NotFound(format!("page {}", verdict.page_id)));
        }
        if let Some(gone) = verdict.matches.iter().find(|m| !work_exists(m.work_id)) {
            return Err(StoreError::NotFound(format!("work {}", gone.work_id)));
        }
    }
    Ok(())
}

/// Rows read for a batch of pages, grouped by page.
pub(crate) fn by_page<R>(rows: impl IntoIterator<Item = (Id, R)>) -> HashMap<Id, Vec<R>> {
    let mut grouped: HashMap<Id, Vec<R>> = HashMap::new();
    for (page, row) in rows {
        grouped.entry(page).or_default().push(row);
    }
    grouped
}

/// Whether a check at `at` is the page's latest verdict, given when the page was last checked:
/// an older one joins the history but changes neither the page nor its matches.
pub(crate) fn is_latest_check<T: PartialOrd>(last_checked: Option<T>, at: &T) -> bool {
    last_checked.is_none_or(|last| last <= *at)
}

/// Whether the page at `url` is on `site` or one of its subdomains, as the statistics' SQL
/// compares stored sites: the host, with its port when not the default, lower-case.
pub(crate) fn url_on_site(url: &str, site: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let site = site.trim().to_ascii_lowercase();
    host == site || host.ends_with(&format!(".{site}"))
}

/// Reads a stored match status.
pub(crate) fn match_status(value: &str) -> Result<MatchStatus> {
    MatchStatus::parse(value)
        .ok_or_else(|| StoreError::Invalid(format!("stored match status {value:?} is unknown")))
}

/// The stored forms of a validator scope's hosts: each host as given (lower-cased) and with
/// `www.` added or removed, as the crawler treats both as one site.
pub(crate) fn validator_hosts(hosts: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for host in hosts {
        let host = host.to_ascii_lowercase();
        let other = match host.strip_prefix("www.") {
            Some(bare) => bare.to_owned(),
            None => format!("www.{host}"),
        };
        all.push(host);
        all.push(other);
    }
    all.sort();
    all.dedup();
    all
}

/// Checks a user and returns the email as stored (trimmed, lower-cased).
pub(crate) fn validate_user(user: &NewUser) -> Result<String> {
    let email = normalize_email(&user.email)
        .ok_or_else(|| StoreError::Invalid(format!("{:?} is not an email address", user.email)))?;
    if user.password_hash.is_empty() {
        return Err(StoreError::Invalid(format!(
            "user {email:?} has no password hash"
        )));
    }
    match (user.role, user.rights_holder_id) {
        (Role::RightsHolder, None) => Err(StoreError::Invalid(format!(
            "rights-holder user {email:?} needs a rights holder"
        ))),
        (role, Some(_)) if role != Role::RightsHolder => Err(StoreError::Invalid(format!(
            "{} user {email:?} cannot belong to a rights holder",
            role.as_str()
        ))),
        _ => Ok(email),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_on_its_host_and_the_sites_above_it_only() {
        assert!(url_on_site(
            "http://m.pirate.example/1.html",
            "pirate.example"
        ));
        assert!(url_on_site(
            "http://pirate.example/1.html",
            "Pirate.Example"
        ));
        assert!(url_on_site(
            "http://127.0.0.1:8080/1.html",
            "127.0.0.1:8080"
        ));
        assert!(!url_on_site("http://127.0.0.1:8080/1.html", "127.0.0.1"));
        assert!(!url_on_site(
            "http://notpirate.example/1.html",
            "pirate.example"
        ));
        assert!(!url_on_site("not a url", "pirate.example"));
    }

    #[test]
    fn hosts_are_lower_cased_and_keep_explicit_ports() {
        let (url, host) = page_key("HTTPS://Example.COM:8443/a?b=1#frag").unwrap();
        assert_eq!(url, "https://example.com:8443/a?b=1");
        assert_eq!(host, "example.com:8443");
        let (_, host) = page_key("http://Example.com:80/").unwrap();
        assert_eq!(
            host, "example.com",
            "the default port is not part of the site"
        );
        let (_, host) = page_key("http://[::1]:8080/").unwrap();
        assert_eq!(host, "[::1]:8080");
    }
}

/// Rows a write refers to and checks first, so that a missing one is `NotFound` naming it
/// rather than a foreign-key error.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Referenced {
    RightsHolder,
    Schedule,
    Run,
    Work,
    User,
}

impl Referenced {
    /// The lookup, `$1` being the id (the same text on both backends).
    pub(crate) fn query(self) -> &'static str {
        match self {
            Referenced::RightsHolder => "SELECT id FROM rights_holders WHERE id = $1",
            Referenced::Schedule => "SELECT id FROM schedules WHERE id = $1",
            Referenced::Run => "SELECT id FROM runs WHERE id = $1",
            Referenced::Work => "SELECT id FROM works WHERE id = $1",
            Referenced::User => "SELECT id FROM users WHERE id = $1",
        }
    }

    /// The error when the row is absent.
    pub(crate) fn not_found(self, id: Id) -> StoreError {
        let noun = match self {
            Referenced::RightsHolder => "rights holder",
            Referenced::Schedule => "schedule",
            Referenced::Run => "run",
            Referenced::Work => "work",
            Referenced::User => "user",
        };
        StoreError::NotFound(format!("{noun} {id}"))
    }
}
