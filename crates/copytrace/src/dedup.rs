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
//! 2. **Matching.** Every page whose text was not yet matched against the current library is
//!    matched and its verdict recorded. This is what makes the run incremental: a page is due
//!    when its text is new or changed, and every page is due after the library changed (new or
//!    changed works must be looked for in pages crawled before them), so a quiet day costs
//!    nothing and no page is re-crawled to find a new work's copies. `--full` makes every page
//!    due first.
//!
//! Both passes are idempotent (recording a verdict replaces the previous one; a removal check
//! moves matches between states), so a run that is retried after a crash, or run twice,
//! creates no duplicate matches. The run's counts are saved as it goes, and a cancellation
//! request stops it between pages.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, PageSink, Validators};
use copytrace_store::{Availability, Id, InfringingPage, PageCheck, RunCounts, Store, StoreError};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::jobs::MatchHandler;
use crate::pipeline;
use crate::recrawl::classify_failure;

/// Kind of a dedup job.
pub const DEDUP: &str = "dedup";
/// Attempts of a dedup job before it goes dead.
pub const DEDUP_ATTEMPTS: u32 = 3;

/// Pages fetched again per crawl of the removal pass.
const RECHECK_BATCH: u32 = 200;
/// Due pages read per batch of the matching pass.
const MATCH_BATCH: u32 = 500;
/// How often the run's counts are saved (and cancellation looked for).
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Payload of a dedup job, and the settings of `copytrace dedup`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedupJob {
    /// Match every page again, not only the due ones.
    #[serde(default)]
    pub full: bool,
    /// Fetch known infringing pages again to record removals.
    #[serde(default = "yes")]
    pub recheck: bool,
    /// How the removal checks fetch.
    #[serde(default)]
    pub fetch: RecheckSettings,
}

fn yes() -> bool {
    true
}

impl Default for DedupJob {
    fn default() -> Self {
        Self {
            full: false,
            recheck: true,
            fetch: RecheckSettings::default(),
        }
    }
}

/// Crawler settings of the removal checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecheckSettings {
    /// Allow loopback and private addresses.
    #[serde(default)]
    pub allow_private_addresses: bool,
    /// User-Agent header.
    #[serde(default = "default_user_agent")]
    pub user_agent: String,
    /// Requests in flight.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Requests in flight to one host.
    #[serde(default = "default_per_host")]
    pub per_host: usize,
    /// Minimum seconds between two requests to one host.
    #[serde(default)]
    pub delay_secs: f64,
    /// Per-request timeout in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Retries of a failed request.
    #[serde(default = "default_retries")]
    pub retries: u32,
}

fn default_user_agent() -> String {
    copytrace_crawler::DEFAULT_USER_AGENT.to_owned()
}
fn default_concurrency() -> usize {
    CrawlConfig::default().concurrency
}
fn default_per_host() -> usize {
    CrawlConfig::default().per_host_concurrency
}
fn default_timeout() -> u64 {
    CrawlConfig::default().request_timeout.as_secs()
}
fn default_retries() -> u32 {
    CrawlConfig::default().max_retries
}

impl Default for RecheckSettings {
    fn default() -> Self {
        Self {
            allow_private_addresses: false,
            user_agent: default_user_agent(),
            concurrency: default_concurrency(),
            per_host: default_per_host(),
            delay_secs: 0.0,
            timeout_secs: default_timeout(),
            retries: default_retries(),
        }
    }
}

impl RecheckSettings {
    /// A crawl of exactly `pages` URLs: no link, not even a "next page" link, is followed, so
    /// every request may be conditional on `validators` (a 304 hides no link that matters).
    fn config(&self, pages: usize, validators: HashMap<Url, Validators>) -> CrawlConfig {
        CrawlConfig {
            max_pages: pages,
            validators,
            max_depth: Some(0),
            max_page_chain: 0,
            allow_private_addresses: self.allow_private_addresses,
            user_agent: self.user_agent.clone(),
            concurrency: self.concurrency.max(1),
            per_host_concurrency: self.per_host.max(1),
            host_delay: Duration::try_from_secs_f64(self.delay_secs).unwrap_or_default(),
            request_timeout: Duration::from_secs(self.timeout_secs.max(1)),
            max_retries: self.retries,
            ..CrawlConfig::default()
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

/// Saves a run's counts every [`PROGRESS_EVERY`] and reports cancellation requests.
struct Progress<'a> {
    store: &'a dyn Store,
    run_id: Id,
    last: Instant,
}

impl Progress<'_> {
    /// `true` when the run must stop.
    async fn cancelled(&mut self, counts: &RunCounts) -> Result<bool> {
        if self.last.elapsed() < PROGRESS_EVERY {
            return Ok(false);
        }
        self.last = Instant::now();
        Ok(self
            .store
            .update_run_progress(self.run_id, counts, &serde_json::Value::Null)
            .await?)
    }
}

/// Runs both passes of a dedup run for the run `run_id` (already started), matching with
/// `matcher`'s library. `counts` is updated as the run goes, so a caller still has them when
/// the run fails halfway.
pub async fn run_dedup(
    store: &dyn Store,
    matcher: &MatchHandler,
    run_id: Id,
    job: &DedupJob,
    counts: &mut RunCounts,
) -> Result<DedupEnd> {
    let mut progress = Progress {
        store,
        run_id,
        last: Instant::now(),
    };
    if job.full {
        let marked = store.mark_all_pages_unmatched().await?;
        tracing::info!(run = run_id, "full dedup: {marked} page(s) to match again");
    }
    if job.recheck
        && recheck_pass(store, matcher, run_id, job, counts, &mut progress).await?
            == DedupEnd::Cancelled
    {
        return Ok(DedupEnd::Cancelled);
    }
    match_pass(store, matcher, counts, &mut progress).await
}

async fn recheck_pass(
    store: &dyn Store,
    matcher: &MatchHandler,
    run_id: Id,
    job: &DedupJob,
    counts: &mut RunCounts,
    progress: &mut Progress<'_>,
) -> Result<DedupEnd> {
    let mut after = 0;
    loop {
        let batch = store.infringing_pages(after, RECHECK_BATCH).await?;
        let Some(last) = batch.last() else {
            return Ok(DedupEnd::Finished);
        };
        after = last.page_id;
        let fetched = fetch_again(&batch, &job.fetch).await?;
        for page in &batch {
            let key = crawl_key(&page.url);
            let outcome = fetched.get(&key);
            let check = judge(store, matcher, page, outcome, run_id).await?;
            if check.availability == Availability::Unreachable {
                counts.errors += 1;
            }
            let changed = store.record_page_check(&check).await?;
            counts.pages_checked += 1;
            counts.matches_removed += changed.removed;
            tracing::debug!(
                page = page.page_id,
                url = %page.url,
                availability = check.availability.as_str(),
                detail = %check.detail,
                "removal check"
            );
            if progress.cancelled(counts).await? {
                return Ok(DedupEnd::Cancelled);
            }
        }
    }
}

async fn match_pass(
    store: &dyn Store,
    matcher: &MatchHandler,
    counts: &mut RunCounts,
    progress: &mut Progress<'_>,
) -> Result<DedupEnd> {
    let mut after = 0;
    loop {
        let due = store.due_page_ids(after, MATCH_BATCH).await?;
        let Some(&(last, _)) = due.last() else {
            return Ok(DedupEnd::Finished);
        };
        after = last;
        for (page_id, hash) in due {
            let page = match store.get_page(page_id).await {
                Ok(page) => page,
                Err(StoreError::NotFound(_)) => continue,
                Err(error) => return Err(error.into()),
            };
            // Changed since it was listed: its new text is matched by the next run (or by the
            // match job its crawl enqueued).
            if page.content_hash != hash {
                continue;
            }
            let found = matcher.match_text(&page.text).await?;
            let matches: Vec<_> = found.iter().map(pipeline::to_new_match).collect();
            let verdict = store
                .record_page_matches(page.id, &page.content_hash, &matches, Utc::now())
                .await
                .with_context(|| format!("cannot record matches of {}", page.url))?;
            counts.new_matches += verdict.new_matches;
            counts.matches_removed += verdict.removed;
            counts.pages_checked += 1;
            if progress.cancelled(counts).await? {
                return Ok(DedupEnd::Cancelled);
            }
        }
    }
}

/// The crawler's form of a stored URL, to find a page's fetch among the crawl's results.
fn crawl_key(url: &str) -> String {
    Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |u| copytrace_crawler::urls::normalize(&u).to_string(),
    )
}

/// What fetching a page again gave.
enum Fetched {
    Page(Box<FetchedPage>),
    /// The conditional request was answered 304: the stored text is current.
    NotModified,
    Failed(String, Option<u16>, Availability),
}

/// Collects the re-fetched pages and failures by URL.
#[derive(Default)]
struct RecheckSink {
    results: HashMap<String, Fetched>,
}

#[async_trait::async_trait]
impl PageSink for RecheckSink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.results.insert(
            page.requested_url.to_string(),
            Fetched::Page(Box::new(page)),
        );
        Ok(())
    }

    async fn not_modified(&mut self, url: &Url) {
        self.results.insert(url.to_string(), Fetched::NotModified);
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        let (status, availability) = classify_failure(error);
        self.results.insert(
            url.to_string(),
            Fetched::Failed(error.to_string(), status, availability),
        );
    }
}

async fn fetch_again(
    batch: &[InfringingPage],
    settings: &RecheckSettings,
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
    let mut sink = RecheckSink::default();
    copytrace_crawler::crawl(&settings.config(seeds.len(), validators), &seeds, &mut sink)
        .await
        .context("the removal check crawl failed")?;
    Ok(sink.results)
}

/// The verdict on one page.
async fn judge(
    store: &dyn Store,
    matcher: &MatchHandler,
    page: &InfringingPage,
    outcome: Option<&Fetched>,
    run_id: Id,
) -> Result<PageCheck> {
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
            let unchanged = pipeline::content_hash(&fetched.text) == page.content_hash;
            let text =
                (!unchanged || !page.stale_evidence.is_empty()).then(|| fetched.text.clone());
            (fetched.status, text)
        }
    };
    check.http_status = Some(status);
    let found: BTreeSet<Id> = match online_text {
        None => page.work_ids.iter().copied().collect(),
        Some(text) => matcher
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recheck_crawl_follows_no_link_and_is_conditional() {
        let url = Url::parse("http://pirate.example/1.html").unwrap();
        let stored = Validators {
            etag: Some("\"v1\"".into()),
            last_modified: None,
        };
        let config =
            RecheckSettings::default().config(3, HashMap::from([(url.clone(), stored.clone())]));
        assert_eq!(config.max_pages, 3);
        assert_eq!(config.max_depth, Some(0));
        assert_eq!(config.max_page_chain, 0);
        assert!(!config.allow_private_addresses);
        assert_eq!(config.validators.get(&url), Some(&stored));
    }
}
