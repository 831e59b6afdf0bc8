//! The Copytrace crawler: frontier, robots.txt, politeness, guarded fetching, decoding,
//! main-text extraction and link discovery.
//!
//! [`crawl`] takes seed URLs and hands every fetched HTML page to a [`PageSink`]; it does no
//! database work itself (the binary wires the sink to the store). The pieces are usable on their
//! own: [`decode`] (bytes → text with the right charset), [`extract`] (HTML → title, main text,
//! links) and [`guard`] (which addresses may be contacted).
//!
//! # Design decisions
//!
//! **Redirects are followed by hand.** The client is built with `redirect::Policy::none()`; the
//! crawler follows up to [`CrawlConfig::max_redirects`] hops itself so that *every* hop passes
//! the address guard and the target origin's robots.txt. A redirect is the classic way to walk
//! a crawler from a public page to `http://169.254.169.254/` or `http://127.0.0.1:6379/`.
//!
//! **The guard resolves names itself and pins the answer.** The client's DNS resolver is
//! replaced by [`guard::GuardedResolver`], which resolves with `tokio::net::lookup_host`,
//! refuses the name if *any* address is non-public, and returns exactly the vetted addresses
//! to the connector. There is no second lookup between check and connect, so DNS rebinding
//! cannot swap in a private address. Resolvers never see IP-literal hosts, so literals
//! (including the odd spellings `127.1`, `0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`, which
//! the `url` crate canonicalises) are checked separately before every hop. Proxies are
//! disabled (`no_proxy`), because a proxy would resolve names out of the guard's sight. Only
//! `http` and `https` are fetched. [`CrawlConfig::allow_private_addresses`] turns the guard
//! off (local test servers, intranets); [`CrawlConfig::allowed_addresses`] exempts single
//! addresses.
//!
//! **robots.txt** is fetched once per origin through the same guarded fetcher and obeyed for
//! the product token of [`CrawlConfig::user_agent`]. A 4xx means "no rules"; a 5xx, 429 or an
//! unreachable server means "disallow everything" for the rest of the crawl, as RFC 9309 and
//! Google do, and such URLs are reported as [`CrawlError::RobotsUnavailable`] failures.
//! Disallowed URLs are never requested. `Crawl-delay` is honoured per host, capped by
//! [`CrawlConfig::max_crawl_delay`]. Details in the `robots` module source.
//!
//! **Pages written by scripts are rendered, under the same rules.** When a page's content says
//! a script writes its text (its content element is empty, an inline script writes text from a
//! payload or a request; ad and analytics scripts do not count, and the static text's size
//! alone decides nothing), it is read again in headless Chromium ([`render`],
//! [`render::decide`], [`CrawlConfig::render`]); a page template whose first renders gained no
//! text is not rendered again in the crawl. The fetched bytes are served to the browser from
//! memory, and every subrequest of the page goes through a proxy that asks this crawl's guard
//! (resolving and pinning names itself), robots.txt and per-host pace. Without Chromium such a
//! page is a [`CrawlError::NotRendered`] failure, never a stored page with no text.
//!
//! **Bodies are capped after decompression.** reqwest has no body limit and decompresses
//! gzip/brotli/deflate transparently, so a 10 KB gzip bomb can expand to gigabytes. Bodies
//! are read as a stream and the count of *decompressed* bytes is checked against
//! [`CrawlConfig::max_body_bytes`] chunk by chunk. Connect and total request timeouts are
//! always set.
//!
//! **Charsets are decided by the crawler**, not by `Response::text()` (which assumes UTF-8
//! without a header charset and mangles GBK pages): BOM, header, `<meta>` prescan, then
//! `chardetng` with the TLD as a hint. See [`decode`].
//!
//! **Politeness is per host.** The frontier keeps one queue per host (host and port) and
//! serves hosts round-robin, at most [`CrawlConfig::concurrency`] requests in flight overall and
//! [`CrawlConfig::per_host_concurrency`] per host. Each host has its own `governor` rate limiter
//! (governor has no per-key quota) whose period is the larger of [`CrawlConfig::host_delay`]
//! and the host's robots.txt `Crawl-delay`; a host that must wait does not hold a concurrency
//! slot, the frontier serves another host meanwhile. Every request to a host is paced,
//! redirect hops and retries included. A `Retry-After` pauses the whole host. Details in the
//! `politeness` module source.
//!
//! **Transient failures are retried** ([`CrawlConfig::max_retries`]): timeouts, connection
//! errors, 408, 429 and most 5xx, after the server's `Retry-After` (seconds or HTTP-date, up to
//! [`CrawlConfig::max_retry_after`]) or an exponential backoff with jitter. robots.txt itself is
//! fetched once, without retries, as RFC 9309 describes.
//!
//! **Redirect chains** are limited to [`CrawlConfig::max_redirects`] hops and stop as soon as
//! they come back to a URL they already visited ([`CrawlError::RedirectLoop`]).
//!
//! **Re-crawls can be conditional.** [`CrawlConfig::validators`] carries the `ETag` and
//! `Last-Modified` of pages fetched before; the request then says `If-None-Match` /
//! `If-Modified-Since`, and a `304 Not Modified` is reported through
//! [`PageSink::not_modified`], not as a failure. [`FetchedPage`] carries the new validators.
//!
//! **URLs are normalized** ([`urls::normalize`]: case, default ports, fragments, sorted query,
//! tracking and session parameters removed) and each normalized URL is fetched at most once.
//!
//! **Scope and order.** Links are followed within the seed's site (same host, `www.` ignored,
//! same port) and [`CrawlConfig::allowed_hosts`], filtered by
//! [`CrawlConfig::include_patterns`] and [`CrawlConfig::exclude_patterns`], and bounded by
//! [`CrawlConfig::max_depth`] and [`CrawlConfig::max_pages`]. Within a host the order is
//! breadth-first, except that pagination and chapter links ([`links`]) go first, so a page
//! budget is spent on the novel being tracked rather than on site navigation; a "next page"
//! link continues its page and keeps its depth, so a chapter split over several pages is read
//! whole even at a small depth. Infinite link spaces (calendars, ever-longer query strings) are
//! cut by [`CrawlConfig::max_url_length`], [`CrawlConfig::max_query_variants`] and
//! [`CrawlConfig::max_page_chain`]. Sitemaps ([`sitemap`]) are read when
//! [`CrawlConfig::sitemaps`] is on. Page tasks run as spawned tasks, so a slow sink does not
//! stall requests already in flight; the sink itself is only ever called from the task running
//! [`crawl`].
//!
//! **Numbers.** [`CrawlReport::stats`] counts requests, retries, bytes, pages per second,
//! `304`s, robots.txt refusals and failures by [`ErrorKind`]; [`PageSink::progress`] receives
//! the same numbers while the crawl runs, for progress bars.

#![allow(
    clippy::result_large_err,
    reason = "CrawlError carries the URL for one-line messages; it is built once per failed \
              URL, far off any hot path, and boxing it would change the public API"
)]

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use url::Url;

pub mod contacts;
mod crawl;
pub mod decode;
mod error;
pub mod extract;
mod fetch;
mod frontier;
pub mod guard;
pub mod links;
mod politeness;
pub mod render;
mod retry;
mod robots;
pub mod sitemap;
mod stats;
pub mod urls;

pub use crate::crawl::crawl;
pub use crate::error::{CrawlError, ErrorKind};
pub use crate::render::RenderMode;
pub use crate::robots::ROBOTS_MAX_BYTES;
pub use crate::stats::{CrawlProgress, CrawlStats};

/// The User-Agent sent by default.
pub const DEFAULT_USER_AGENT: &str = "CopytraceBot/0.1 (+https://example.invalid/copytrace)";

/// How a crawl behaves. Start from [`CrawlConfig::default`] and override fields.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlConfig {
    /// Total page requests, successful or not (robots.txt and sitemap fetches, redirect hops,
    /// retries and URLs never requested because of robots.txt do not count). Default 100.
    pub max_pages: usize,
    /// How many links away from a seed to go; seeds are depth 0, sitemap entries depth 1, and a
    /// "next page" link has the depth of the page it is on. `None` means no limit.
    pub max_depth: Option<u32>,
    /// Allow loopback, private, link-local and other non-public addresses. Default false.
    pub allow_private_addresses: bool,
    /// Single addresses allowed even when `allow_private_addresses` is false (for example one
    /// intranet mirror). Default empty.
    pub allowed_addresses: Vec<IpAddr>,
    /// The User-Agent header; its product token (before the first `/`) is matched against
    /// robots.txt groups.
    pub user_agent: String,
    /// Time allowed to establish a connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Longest silence while reading a response (headers or body). Default 20 s.
    pub read_timeout: Duration,
    /// Total time per request including the body. Default 30 s.
    pub request_timeout: Duration,
    /// Maximum *decompressed* body size in bytes. Default 8 MiB.
    pub max_body_bytes: usize,
    /// Requests in flight at once, all hosts together. Default 4.
    pub concurrency: usize,
    /// Requests in flight at once to one host (host and port). Default 2.
    pub per_host_concurrency: usize,
    /// Redirect hops followed per URL. Default 5.
    pub max_redirects: usize,
    /// Minimum time between the starts of two requests to the same host. Default 0.
    pub host_delay: Duration,
    /// Upper bound on a robots.txt `Crawl-delay` (which would otherwise let a site stall the
    /// crawl for hours). Default 10 s.
    pub max_crawl_delay: Duration,
    /// Retries after a timeout, connection error, 408, 429 or 5xx (except 501 and 505).
    /// Default 2.
    pub max_retries: u32,
    /// First backoff before a retry; doubled per attempt, with jitter. Default 500 ms.
    pub retry_base_delay: Duration,
    /// Upper bound of the backoff. Default 30 s.
    pub max_retry_delay: Duration,
    /// Longest `Retry-After` waited for; a server asking for more gets no retry. Default 60 s.
    pub max_retry_after: Duration,
    /// Validators of pages fetched before, by URL (normalized when the crawl starts): requests
    /// for them are conditional. Default empty.
    pub validators: HashMap<Url, Validators>,
    /// Hosts whose links are followed besides each seed's own site, e.g. the domain a site
    /// serves its chapters from. `www.` is ignored; `*.example.cn` means any subdomain.
    pub allowed_hosts: Vec<String>,
    /// Regular expressions over the normalized URL: when any are given, a link is followed only
    /// if one of them matches. Seeds are always fetched.
    pub include_patterns: Vec<String>,
    /// Regular expressions over the normalized URL: a link matching any of them is not followed.
    pub exclude_patterns: Vec<String>,
    /// Links longer than this (normalized, in bytes) are not followed. Default 2048.
    pub max_url_length: usize,
    /// Distinct query strings followed per host and path (`/search?q=…` variants). Default 1000.
    pub max_query_variants: usize,
    /// "Next page" links followed in a row without a level of depth. Default 100.
    pub max_page_chain: u32,
    /// Read the seeds' sitemaps (robots.txt `Sitemap:` lines, else `/sitemap.xml`) and queue
    /// their in-scope URLs at depth 1. On by default: pirate sites list every chapter there,
    /// some of them linked from nowhere else. They share the page budget with the seed's own
    /// links.
    pub sitemaps: bool,
    /// When pages are rendered in headless Chromium (see [`render`]). Default
    /// [`RenderMode::Auto`]: pages whose content a script writes ([`render::decide`]).
    pub render: RenderMode,
    /// The Chromium executable (`copytrace_browser::find_chromium`); `None` when it is not
    /// installed, in which case pages that need rendering are reported as
    /// [`CrawlError::NotRendered`].
    pub chromium: Option<std::path::PathBuf>,
    /// Longest time to start the browser, and to load and settle one rendered page. Default
    /// 20 s.
    pub render_timeout: Duration,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        Self {
            max_pages: 100,
            max_depth: None,
            allow_private_addresses: false,
            allowed_addresses: Vec::new(),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 8 * 1024 * 1024,
            concurrency: 4,
            per_host_concurrency: 2,
            max_redirects: 5,
            host_delay: Duration::ZERO,
            max_crawl_delay: Duration::from_secs(10),
            max_retries: 2,
            retry_base_delay: Duration::from_millis(500),
            max_retry_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            validators: HashMap::new(),
            allowed_hosts: Vec::new(),
            include_patterns: Vec::new(),
            exclude_patterns: Vec::new(),
            max_url_length: 2048,
            max_query_variants: 1000,
            max_page_chain: 100,
            sitemaps: true,
            render: RenderMode::Auto,
            chromium: None,
            render_timeout: Duration::from_secs(20),
        }
    }
}

/// The HTTP validators of a page fetched before, for a conditional re-fetch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` header as received (sent back as `If-None-Match`).
    pub etag: Option<String>,
    /// The `Last-Modified` header as received (sent back as `If-Modified-Since`).
    pub last_modified: Option<String>,
}

/// One successfully fetched and extracted HTML page.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedPage {
    /// The URL that was requested.
    pub requested_url: Url,
    /// The final URL after redirects.
    pub url: Url,
    /// The HTTP status of the final response (always 2xx).
    pub status: u16,
    /// The page title, see [`extract::Extracted::title`].
    pub title: Option<String>,
    /// The extracted main text, paragraphs separated by `'\n'`.
    pub text: String,
    /// The `encoding_rs` name of the encoding used to decode the page (`"UTF-8"`, `"GBK"`, ...).
    pub encoding: &'static str,
    /// When the response arrived.
    pub fetched_at: chrono::DateTime<chrono::Utc>,
    /// Links followed from the seed to reach this page (seeds are 0).
    pub depth: u32,
    /// The `ETag` and `Last-Modified` headers of the response, to make the next fetch of this
    /// page conditional (see [`CrawlConfig::validators`]).
    pub validators: Validators,
    /// Every header of the final response, in the order received (names lower-case, values
    /// lossily decoded): part of the record of what the server said. Headers describing a
    /// compressed transfer (`content-encoding`, `content-length`) are absent when the client
    /// decoded the body, because they would misdescribe the decoded `body` kept beside them.
    pub headers: Vec<(String, String)>,
    /// The body as received, after HTTP content decoding (gzip, brotli, deflate) and before
    /// charset decoding: the bytes `text` was extracted from (through the browser's DOM when
    /// `rendered`), kept as evidence.
    pub body: Vec<u8>,
    /// Whether `text` (and `title`) were read from the page as headless Chromium rendered it,
    /// its scripts run, rather than from the HTML as served (`rendering` says how).
    pub rendered: bool,
    /// The page as headless Chromium rendered it, when it was: the DOM `text` was read from,
    /// the responses its scripts received, and how it was rendered; kept as evidence of what
    /// the browser showed.
    pub rendering: Option<Rendering>,
}

/// A page as headless Chromium rendered it ([`render`]): what its evidence shows besides the
/// bytes served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendering {
    /// The DOM's HTML once the page settled, with its doctype.
    pub dom: String,
    /// The responses the page's scripts received (scripts, XHR, `fetch`, frames), with their
    /// bodies within the crawl's caps, in the order they arrived.
    pub subresponses: Vec<copytrace_browser::Subresponse>,
    /// Responses over [`render::MAX_KEPT_RESPONSES`], only counted.
    pub responses_not_kept: usize,
    /// The browser's product and version (`HeadlessChrome/…`).
    pub browser: String,
    /// How long the DOM had to stay unchanged to count as settled.
    pub settle_quiet: Duration,
    /// From navigation to the moment the DOM was read.
    pub settled_after: Duration,
    /// When the DOM was read.
    pub rendered_at: chrono::DateTime<chrono::Utc>,
}

/// Receives the crawl's results. Called from a single task, in completion order.
#[async_trait::async_trait]
pub trait PageSink: Send {
    /// Called for every successfully fetched and extracted HTML page. An Err stops the crawl.
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

    /// Called for every URL that failed (network error, refused address, HTTP error status,
    /// too large, not HTML, robots.txt unavailable...). Default: do nothing.
    async fn failure(&mut self, _url: &Url, _error: &CrawlError) {}

    /// Called for every URL whose conditional request was answered `304 Not Modified`: the
    /// stored copy is still current. `url` is the URL as requested. Default: do nothing.
    async fn not_modified(&mut self, _url: &Url) {}

    /// Called after every settled URL with the crawl's numbers so far (for progress bars;
    /// keep it cheap). Default: do nothing.
    fn progress(&mut self, _progress: &CrawlProgress) {}
}

/// Collects pages in memory (handy for tests and `--json` output).
#[async_trait::async_trait]
impl PageSink for Vec<FetchedPage> {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.push(page);
        Ok(())
    }
}

/// One URL a crawl could not store as a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlFailure {
    /// The URL as requested.
    pub url: String,
    /// Its class, for summaries (`http-4xx 104`) and statistics.
    pub kind: ErrorKind,
    /// The error on one line (it names the URL that answered).
    pub reason: String,
}

/// A kind of failure in a [`CrawlReport`]: how many URLs failed so, and the first few of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureGroup<'a> {
    /// The kind.
    pub kind: ErrorKind,
    /// URLs that failed with it.
    pub count: usize,
    /// The first of them, in completion order.
    pub examples: Vec<&'a CrawlFailure>,
}

/// What a crawl did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlReport {
    /// Pages handed to [`PageSink::page`].
    pub fetched: usize,
    /// URLs that failed, with their kind and a one-line reason each, in completion order.
    pub failures: Vec<CrawlFailure>,
    /// Of `failures`, the pages that needed rendering and were not rendered, with the reason
    /// alone (the browser's error, or that Chromium is not installed), so that a caller can
    /// say it once for all of them.
    pub not_rendered: Vec<(String, String)>,
    /// URLs not requested because robots.txt disallows them (or a redirect led to such a URL).
    pub disallowed_by_robots: usize,
    /// Distinct in-scope URLs that were discovered but not requested because of `max_depth` or
    /// `max_pages`.
    pub skipped: usize,
    /// Requests, retries, bytes, rates and failures by kind.
    pub stats: CrawlStats,
}

impl CrawlReport {
    /// The failures grouped by kind, most frequent first, each with at most `examples` of its
    /// URLs: a crawl of a site with a hundred broken ad links says so in one line, not a
    /// hundred.
    pub fn failures_by_kind(&self, examples: usize) -> Vec<FailureGroup<'_>> {
        let mut groups: Vec<FailureGroup<'_>> = Vec::new();
        for failure in &self.failures {
            let group = match groups.iter_mut().position(|g| g.kind == failure.kind) {
                Some(at) => &mut groups[at],
                None => {
                    groups.push(FailureGroup {
                        kind: failure.kind,
                        count: 0,
                        examples: Vec::new(),
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            group.count += 1;
            if group.examples.len() < examples {
                group.examples.push(failure);
            }
        }
        groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(url: &str, kind: ErrorKind) -> CrawlFailure {
        CrawlFailure {
            url: url.to_owned(),
            kind,
            reason: format!("{kind} for {url}"),
        }
    }

    #[test]
    fn failures_are_grouped_by_kind_most_frequent_first_with_a_few_examples() {
        let mut report = CrawlReport::default();
        for id in 0..104 {
            report.failures.push(failure(
                &format!("http://site.test/ad/click.php?id={id}"),
                ErrorKind::Http4xx,
            ));
            if id % 50 == 0 {
                report
                    .failures
                    .push(failure("http://site.test/slow", ErrorKind::Timeout));
            }
        }
        let groups = report.failures_by_kind(3);
        let summary: Vec<(ErrorKind, usize, usize)> = groups
            .iter()
            .map(|g| (g.kind, g.count, g.examples.len()))
            .collect();
        assert_eq!(
            summary,
            [(ErrorKind::Http4xx, 104, 3), (ErrorKind::Timeout, 3, 3)]
        );
        assert_eq!(
            groups[0].examples[2].url,
            "http://site.test/ad/click.php?id=2"
        );
        assert!(CrawlReport::default().failures_by_kind(3).is_empty());
    }
}
