//! Per-crawl statistics and the progress snapshots handed to [`PageSink::progress`].
//!
//! Request, retry and byte counts are bumped by the page tasks as they happen (atomics, so the
//! tasks never wait on each other); everything else is counted by the single task that runs the
//! crawl loop.
//!
//! [`PageSink::progress`]: crate::PageSink::progress

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::ErrorKind;

/// What a crawl did, in numbers. Stored with the crawl run and shown by the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlStats {
    /// HTTP requests sent: pages, redirect hops, retries, robots.txt and sitemap files.
    pub requests: u64,
    /// Requests that were retries of an earlier attempt (included in `requests`).
    pub retries: u64,
    /// Body bytes received, after decompression.
    pub bytes: u64,
    /// Pages handed to [`PageSink::page`](crate::PageSink::page).
    pub pages: usize,
    /// Conditional requests answered `304 Not Modified`.
    pub not_modified: usize,
    /// URLs not requested because robots.txt disallows them.
    pub disallowed_by_robots: usize,
    /// Failed URLs by kind of failure.
    pub errors: BTreeMap<ErrorKind, usize>,
    /// Links dropped by the infinite-link-space guards (URL too long, too many query variants
    /// of one path, pagination chain too long).
    pub link_limits: usize,
    /// URLs taken from sitemaps into the frontier.
    pub sitemap_urls: usize,
    /// Pages whose text was read in headless Chromium (included in `pages`).
    pub rendered: usize,
    /// Pages that `--render auto` would have rendered but kept static, because the first
    /// renders of their template (same host, URL shape and page skeleton) never gained text
    /// (see [`render::decide`](crate::render::decide)).
    pub render_skipped: usize,
    /// Wall time since the crawl started.
    pub elapsed: Duration,
}

impl CrawlStats {
    /// Pages per second of wall time so far (0 before any time has passed).
    pub fn pages_per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.pages as f64 / secs
        } else {
            0.0
        }
    }

    /// Failed URLs of every kind.
    pub fn failed(&self) -> usize {
        self.errors.values().sum()
    }

    /// The error counts as one line, most frequent first: `timeout 3, http-5xx 2` (empty when
    /// nothing failed).
    pub fn errors_line(&self) -> String {
        let mut errors: Vec<(&ErrorKind, &usize)> = self.errors.iter().collect();
        errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        errors
            .iter()
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A snapshot of a running crawl, for progress bars.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlProgress {
    /// Counts so far.
    pub stats: CrawlStats,
    /// URLs waiting in the frontier.
    pub queued: usize,
    /// Page and sitemap tasks running.
    pub in_flight: usize,
}

/// The counters the page tasks bump.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: AtomicU64,
    retries: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    pub(crate) fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn bytes(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Copies the counters into `stats`.
    pub(crate) fn fill(&self, stats: &mut CrawlStats) {
        stats.requests = self.requests.load(Ordering::Relaxed);
        stats.retries = self.retries.load(Ordering::Relaxed);
        stats.bytes = self.bytes.load(Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_error_lines() {
        let mut stats = CrawlStats {
            pages: 30,
            elapsed: Duration::from_secs(10),
            ..CrawlStats::default()
        };
        assert_eq!(stats.pages_per_second(), 3.0);
        assert_eq!(stats.errors_line(), "");
        stats.errors.insert(ErrorKind::Http5xx, 2);
        stats.errors.insert(ErrorKind::Timeout, 3);
        stats.errors.insert(ErrorKind::Dns, 2);
        assert_eq!(stats.errors_line(), "timeout 3, dns 2, http-5xx 2");
        assert_eq!(stats.failed(), 7);
        assert_eq!(CrawlStats::default().pages_per_second(), 0.0);
    }
}
