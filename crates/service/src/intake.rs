//! Taking in crawled pages: the one [`PageSink`] of the product.
//!
//! Every crawl the product runs (`copytrace crawl`, crawl jobs, scheduled crawls) hands its pages
//! to a [`PageIntake`], which stores each page (upserted by URL, so a repeated crawl changes
//! nothing), compares what it finds with the known copies ([`Recrawl`]: unchanged, 304, gone),
//! queues a match job for every new or changed text when workers do the matching, reports
//! progress, saves the run's counts, and stops the crawl when the run is cancelled.

use std::sync::Arc;

use copytrace_crawler::contacts::PageContacts;
use copytrace_crawler::{CrawlError, CrawlProgress, CrawlStats, FetchedPage, PageSink};
use copytrace_store::{RunCounts, Store, WriteOutcome};
use url::Url;

use crate::error::one_line;
use crate::jobs::enqueue_match;
use crate::progress::Progress;
use crate::recrawl::{self, Recrawl};
use crate::runs::RunTracker;

/// The error the intake stops a cancelled crawl with.
pub const CANCELLED: &str = "the run was cancelled";

/// What happened to the pages of one crawl.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntakeCounts {
    /// Pages stored for the first time.
    pub created: u64,
    /// Pages whose text changed.
    pub updated: u64,
    /// Pages fetched again with the same text.
    pub unchanged: u64,
    /// Pages answered 304 Not Modified (their stored text is current).
    pub not_modified: u64,
    /// URLs that failed.
    pub failures: u64,
}

impl IntakeCounts {
    /// Pages with a new or changed text (each gets matched).
    pub fn changed(&self) -> u64 {
        self.created + self.updated
    }

    /// Pages stored or touched: every page the crawl got a text for.
    pub fn stored(&self) -> u64 {
        self.created + self.updated + self.unchanged
    }
}

/// A crawl run's counts from the crawler's statistics.
pub fn crawl_counts(stats: &CrawlStats) -> RunCounts {
    RunCounts {
        pages_checked: stats.pages as u64,
        new_matches: 0,
        matches_removed: 0,
        errors: stats.failed() as u64,
        ..RunCounts::default()
    }
}

/// The crawler's statistics as stored with a crawl run.
pub fn crawl_stats_json(stats: &CrawlStats) -> serde_json::Value {
    serde_json::json!({
        "requests": stats.requests,
        "retries": stats.retries,
        "bytes": stats.bytes,
        "pages": stats.pages,
        "not_modified": stats.not_modified,
        "disallowed_by_robots": stats.disallowed_by_robots,
        "errors": stats
            .errors
            .iter()
            .map(|(kind, count)| (kind.to_string(), *count))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "link_limits": stats.link_limits,
        "sitemap_urls": stats.sitemap_urls,
        "rendered": stats.rendered,
        "render_skipped": stats.render_skipped,
        "elapsed_secs": stats.elapsed.as_secs_f64(),
        "pages_per_second": stats.pages_per_second(),
    })
}

/// Stores the pages of one crawl run; see the module documentation.
pub struct PageIntake {
    store: Arc<dyn Store>,
    /// Queue a match job per new or changed text (workers match); otherwise pages wait for a
    /// match run (`copytrace match`, the scheduler's sweep).
    queue_matches: bool,
    progress: Arc<dyn Progress>,
    tracker: RunTracker,
    /// What happened so far.
    pub counts: IntakeCounts,
    /// Removal checks of known infringing pages, and what they changed.
    pub recrawl: Recrawl,
    /// The crawler's latest statistics.
    pub latest: CrawlStats,
}

impl PageIntake {
    /// An intake for the running run `tracker` tracks.
    pub fn new(
        store: Arc<dyn Store>,
        tracker: RunTracker,
        queue_matches: bool,
        progress: Arc<dyn Progress>,
    ) -> Self {
        Self {
            recrawl: Recrawl::new(store.clone(), Some(tracker.run_id())),
            store,
            queue_matches,
            progress,
            tracker,
            counts: IntakeCounts::default(),
            latest: CrawlStats::default(),
        }
    }

    /// Whether the crawl stopped because its run was cancelled.
    pub fn cancelled(&self) -> bool {
        self.tracker.cancelled()
    }

    /// The run's counts as they stand.
    pub fn run_counts(&self) -> RunCounts {
        let mut counts = crawl_counts(&self.latest);
        counts.matches_removed = self.recrawl.removed;
        counts.matches_reopened = self.recrawl.reopened;
        counts.aliases_checked = self.recrawl.aliases.aliases_checked;
        counts.aliases_kept = self.recrawl.aliases.aliases_kept;
        counts.aliases_removed = self.recrawl.aliases.aliases_removed;
        counts
    }

    /// Saves the run's counts now and then; `true` once the run must stop.
    async fn save_progress(&mut self) -> bool {
        let counts = self.run_counts();
        let stats = crawl_stats_json(&self.latest);
        match self
            .tracker
            .save(self.store.as_ref(), &counts, &stats)
            .await
        {
            Ok(cancelled) => cancelled,
            Err(error) => {
                tracing::warn!(run = self.tracker.run_id(), %error, "cannot save progress");
                false
            }
        }
    }
}

#[async_trait::async_trait]
impl PageSink for PageIntake {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if self.save_progress().await {
            return Err(CANCELLED.into());
        }
        // Whom to write to about the site: read before the page's body moves into the store.
        let found = crate::contacts::contacts_of(&page);
        let (url, fetched_at) = (page.url.clone(), page.fetched_at);
        let page = recrawl::new_page(page);
        let write = self.store.upsert_page(&page).await?;
        if found != PageContacts::default()
            && let Err(error) =
                crate::contacts::record_found(self.store.as_ref(), &url, &found, fetched_at).await
        {
            tracing::warn!(%url, "cannot record the site's contacts: {error}");
        }
        match write.outcome {
            WriteOutcome::Created => self.counts.created += 1,
            WriteOutcome::Updated => self.counts.updated += 1,
            WriteOutcome::Unchanged => {
                self.counts.unchanged += 1;
                self.recrawl
                    .unchanged(&page.url, page.http_status)
                    .await
                    .map_err(|e| one_line(&e))?;
            }
        }
        if write.outcome != WriteOutcome::Unchanged && self.queue_matches {
            enqueue_match(self.store.as_ref(), write.id, &page.content_hash)
                .await
                .map_err(|e| one_line(&e))?;
        }
        self.progress.advance(1);
        Ok(())
    }

    async fn not_modified(&mut self, url: &Url) {
        self.counts.not_modified += 1;
        if let Err(error) = self.recrawl.not_modified(url).await {
            tracing::warn!(%url, "cannot record a 304: {error}");
        }
        self.progress.advance(1);
        self.save_progress().await;
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        // Failures are listed once, in the caller's summary; here they only count.
        self.counts.failures += 1;
        tracing::debug!(%url, %error, "crawl failure");
        self.progress.label(&format!(
            "crawling ({} failed), pages stored:",
            self.counts.failures
        ));
        if let Err(store_error) = self.recrawl.failure(url, error).await {
            tracing::warn!(%url, "cannot record the failure of a known copy: {store_error}");
        }
        self.save_progress().await;
    }

    fn progress(&mut self, progress: &CrawlProgress) {
        let stats = &progress.stats;
        let mut message = format!(
            "{:.1} pages/s, {} queued, {} in flight, {} requests",
            stats.pages_per_second(),
            progress.queued,
            progress.in_flight,
            stats.requests
        );
        if !stats.errors.is_empty() {
            message.push_str("; errors: ");
            message.push_str(&stats.errors_line());
        }
        self.progress.status(&message);
        self.latest = stats.clone();
    }
}
