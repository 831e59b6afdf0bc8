//! The dedup run: what the daily schedule (and `copytrace dedup`) does.
//!
//! The library grows every day and pirate pages change or vanish, so a verdict recorded once
//! does not stay true. A dedup run brings the match library up to date, in two passes:
//!
//! 1. **Removal checks.** Every page with a match that was not dismissed is fetched again (one
//!    request each, no links followed, politely, conditional on the stored `ETag` /
//!    `Last-Modified`, so an unchanged page costs a 304) and its fresh text matched. The page is
//!    `online` if the copies are still there, `soft_removed` if it answers without them, `gone`
//!    on 404/410 or when its host no longer resolves, and `unreachable` (no verdict, nothing
//!    changed) on timeouts, refused connections and server errors. A 304 means the stored text
//!    is still online (and moves the page's `last_seen`). Matches whose copy is gone become
//!    `removed` with the time it was seen gone; a copy that comes back reopens its match. The
//!    stored text and evidence are never replaced: they are the proof.
//!
//!    A page found gone or soft-removed is recorded only after its **aliases** (the same page
//!    under other URLs, see [`crate::aliases`]) are fetched again in the same pass: one that
//!    is gone is removed with it; one that still shows the copy takes the group's matches over
//!    under its own URL, open, with the group's first-seen time ([`crate::alias_checks`]).
//!    Aliases are never freed to be matched from their stored, stale text: that reported a
//!    known copy as a new one (open, confirmed, alerted as `new`) under each of its other URLs.
//! 2. **Matching.** Every page whose text was not yet matched against the current library is
//!    matched and its verdict recorded. This is what makes the run incremental: a page is due
//!    when its text is new or changed, or when the library changed and its sketch collides with
//!    a new or changed work (see [`crate::library::mark_pages_for_works`]), so a quiet day costs
//!    nothing and no page is re-crawled to find a new work's copies. `--full` makes every page
//!    due first: it also finds the short copies the sketches' sampling can miss.
//!
//! Both passes are idempotent (recording a verdict replaces the previous one; a removal check
//! moves matches between states), so a run that is retried after a crash, or run twice,
//! creates no duplicate matches. The run's counts are saved as it goes, and a cancellation
//! request stops it between pages.

use std::collections::{BTreeSet, HashMap};

use chrono::Utc;
use copytrace_crawler::{CrawlConfig, Validators};
use copytrace_store::{
    Availability, Id, InfringingPage, PageCheck, Run, RunCounts, RunKind, RunState, Store,
};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::alias_checks::{Fetched, RemovalTally, crawl_key, fetch_pages, record_removals};
use crate::error::{Result, one_line};
use crate::library::content_hash;
use crate::matching::{MatchEngine, PageOutcome, default_concurrency};
use crate::progress::Progress;
use crate::runs::{RunTracker, end_run, start_manual_run};
use crate::settings::CrawlSettings;

/// Pages fetched again per crawl of the removal pass.
const RECHECK_BATCH: u32 = 200;

/// Payload of a dedup job, and the settings of `copytrace dedup`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedupJob {
    /// Match every page again, not only the due ones.
    #[serde(default)]
    pub full: bool,
    /// Fetch known infringing pages again to record removals.
    #[serde(default = "yes")]
    pub recheck: bool,
    /// How the removal checks fetch (politeness; scope settings do not apply).
    #[serde(default)]
    pub fetch: CrawlSettings,
}

fn yes() -> bool {
    true
}

impl Default for DedupJob {
    fn default() -> Self {
        Self {
            full: false,
            recheck: true,
            fetch: CrawlSettings::default(),
        }
    }
}

/// How a dedup run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DedupEnd {
    /// Both passes done.
    Finished,
    /// Stopped on a cancellation request.
    Cancelled,
}

/// Runs both passes of a dedup run for the run `tracker` tracks (already started), matching
/// with `engine`'s library. `counts` is updated as the run goes, so a caller still has them when
/// the run fails halfway.
pub async fn run_dedup(
    engine: &MatchEngine,
    tracker: &mut RunTracker,
    job: &DedupJob,
    counts: &mut RunCounts,
    progress: &dyn Progress,
) -> Result<DedupEnd> {
    let store = engine.store().as_ref();
    if job.full {
        let marked = store.mark_all_pages_unmatched().await?;
        tracing::info!(
            run = tracker.run_id(),
            "full dedup: {marked} page(s) to match again"
        );
    }
    if job.recheck
        && recheck_pass(engine, tracker, job, counts, progress).await? == DedupEnd::Cancelled
    {
        return Ok(DedupEnd::Cancelled);
    }
    let mut outcomes = std::pin::pin!(engine.match_due(default_concurrency()));
    while let Some(outcome) = outcomes.next().await {
        if let PageOutcome::Recorded { verdict, .. } = &outcome? {
            counts.new_matches += verdict.new_matches;
            counts.matches_removed += verdict.removed;
            counts.matches_reopened += verdict.reopened;
            counts.pages_checked += 1;
            progress.advance(1);
            if tracker
                .save(store, counts, &serde_json::Value::Null)
                .await?
            {
                return Ok(DedupEnd::Cancelled);
            }
        }
    }
    // Removal checks and verdicts are in: sent notices follow their copies.
    let moved = crate::notices::follow_removals(store, chrono::Utc::now()).await?;
    if moved > 0 {
        tracing::info!(run = tracker.run_id(), "{moved} notice(s) changed status");
    }
    Ok(DedupEnd::Finished)
}

async fn recheck_pass(
    engine: &MatchEngine,
    tracker: &mut RunTracker,
    job: &DedupJob,
    counts: &mut RunCounts,
    progress: &dyn Progress,
) -> Result<DedupEnd> {
    let store = engine.store().as_ref();
    let politeness = recheck_politeness(&job.fetch);
    let mut after = 0;
    loop {
        let batch = store.infringing_pages(after, RECHECK_BATCH).await?;
        let Some(last) = batch.last() else {
            return Ok(DedupEnd::Finished);
        };
        after = last.page_id;
        let fetched = fetch_again(&batch, &politeness).await?;
        // Pages found removed are recorded after their aliases are fetched (below).
        let mut removals = Vec::new();
        let mut cancelled = false;
        for page in &batch {
            let key = crawl_key(&page.url);
            let outcome = fetched.get(&key);
            let check = judge(engine, page, outcome, tracker.run_id()).await?;
            tracing::debug!(
                page = page.page_id,
                url = %page.url,
                availability = check.availability.as_str(),
                detail = %check.detail,
                "removal check"
            );
            counts.pages_checked += 1;
            progress.advance(1);
            match check.availability {
                Availability::Gone | Availability::SoftRemoved => removals.push(check),
                availability => {
                    if availability == Availability::Unreachable {
                        counts.errors += 1;
                    }
                    let changed = store.record_page_check(&check).await?;
                    counts.matches_removed += changed.removed;
                    counts.matches_reopened += changed.reopened;
                }
            }
            if tracker
                .save(store, counts, &serde_json::Value::Null)
                .await?
            {
                cancelled = true;
                break;
            }
        }
        // The copy left these URLs; their aliases may still serve it. They are fetched now,
        // before any could be matched on its own (see `crate::alias_checks`).
        let tally = record_removals(store, Some(engine), removals, &politeness).await?;
        add_tally(counts, &tally);
        if cancelled
            || tracker
                .save(store, counts, &serde_json::Value::Null)
                .await?
        {
            return Ok(DedupEnd::Cancelled);
        }
    }
}

/// Adds what recording removals did to a run's counts.
pub(crate) fn add_tally(counts: &mut RunCounts, tally: &RemovalTally) {
    counts.matches_removed += tally.matches_removed;
    counts.matches_reopened += tally.matches_reopened;
    counts.aliases_checked += tally.aliases_checked;
    counts.aliases_kept += tally.aliases_kept;
    counts.aliases_removed += tally.aliases_removed;
}

/// `copytrace dedup`: runs a dedup run now, in this process, recorded like a scheduled one.
pub async fn dedup_now(
    engine: &MatchEngine,
    job: &DedupJob,
    progress: &dyn Progress,
) -> Result<Run> {
    let store = engine.store().as_ref();
    let run_id = start_manual_run(store, RunKind::Dedup).await?;
    let mut counts = RunCounts::default();
    progress.status(&format!("dedup run {run_id}"));
    let mut tracker = RunTracker::new(run_id);
    let outcome = run_dedup(engine, &mut tracker, job, &mut counts, progress).await;
    let state = match &outcome {
        Ok(DedupEnd::Finished) => Ok(RunState::Succeeded),
        Ok(DedupEnd::Cancelled) => Ok(RunState::Cancelled),
        Err(error) => Err(one_line(error)),
    };
    let recorded = end_run(
        store,
        run_id,
        state,
        &counts,
        &serde_json::Value::Null,
        true,
    )
    .await;
    outcome?;
    recorded.map_err(crate::error::ServiceError::unavailable)?;
    Ok(store.get_run(run_id).await?)
}

async fn fetch_again(
    batch: &[InfringingPage],
    politeness: &CrawlConfig,
) -> Result<HashMap<String, Fetched>> {
    let mut seeds = Vec::with_capacity(batch.len());
    let mut validators = HashMap::new();
    for page in batch {
        let Ok(url) = Url::parse(&page.url) else {
            continue;
        };
        if page.etag.is_some() || page.last_modified.is_some() {
            let stored = Validators {
                etag: page.etag.clone(),
                last_modified: page.last_modified.clone(),
            };
            validators.insert(url.clone(), stored);
        }
        seeds.push(url);
    }
    fetch_pages(&seeds, validators, politeness).await
}

/// How a removal check fetches: the settings' politeness, no link followed, and the Chromium
/// of the crawler's rendered path (a copy first read in Chromium is read the same way again;
/// without Chromium it is "unreachable", never "gone").
fn recheck_politeness(settings: &CrawlSettings) -> CrawlConfig {
    let mut config = settings.recheck_config(0, HashMap::new());
    config.chromium = crate::crawl::find_chromium();
    config
}

/// The verdict on one page.
async fn judge(
    engine: &MatchEngine,
    page: &InfringingPage,
    outcome: Option<&Fetched>,
    run_id: Id,
) -> Result<PageCheck> {
    let store: &dyn Store = engine.store().as_ref();
    let mut check = PageCheck {
        page_id: page.page_id,
        run_id: Some(run_id),
        checked_at: Utc::now(),
        availability: Availability::Unreachable,
        http_status: None,
        detail: String::new(),
        still_present: Vec::new(),
        removed: Vec::new(),
    };
    // The text now online, when it is not the stored one with every copy's evidence in it (the
    // verdict then stands without matching).
    let (status, online_text) = match outcome {
        None => {
            check.detail = "not fetched (robots.txt disallows it, or the URL is invalid)".into();
            return Ok(check);
        }
        Some(Fetched::Failed(reason, status, availability)) => {
            check.availability = *availability;
            check.http_status = *status;
            check.detail = reason.clone();
            if *availability == Availability::Gone {
                check.removed = page.work_ids.clone();
            }
            return Ok(check);
        }
        Some(Fetched::NotModified) => {
            store
                .record_not_modified(&page.url, check.checked_at)
                .await?;
            let text = if page.stale_evidence.is_empty() {
                None
            } else {
                Some(store.get_page(page.page_id).await?.text)
            };
            (304, text)
        }
        Some(Fetched::Page(fetched)) => {
            let unchanged = content_hash(&fetched.text) == page.content_hash;
            let text =
                (!unchanged || !page.stale_evidence.is_empty()).then(|| fetched.text.clone());
            (fetched.status, text)
        }
    };
    check.http_status = Some(status);
    let found: BTreeSet<Id> = match online_text {
        None => page.work_ids.iter().copied().collect(),
        Some(text) => engine
            .match_text(&text)
            .await?
            .iter()
            .map(|m| m.work_id)
            .collect(),
    };
    for &work in &page.work_ids {
        if found.contains(&work) {
            check.still_present.push(work);
        } else {
            check.removed.push(work);
        }
    }
    if check.removed.is_empty() {
        check.availability = Availability::Online;
        check.detail = format!("HTTP {status}: the copy is still there");
    } else {
        check.availability = Availability::SoftRemoved;
        check.detail = format!(
            "HTTP {status}: {} of {} copied work(s) no longer on the page",
            check.removed.len(),
            page.work_ids.len()
        );
    }
    Ok(check)
}
