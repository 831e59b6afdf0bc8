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
//! **Scope and order.** The frontier is breadth-first, each normalised URL (fragment removed)
//! is fetched at most once, links are followed only within the seed's site (same host, `www.`
//! ignored, same port), and [`CrawlConfig::max_depth`] and [`CrawlConfig::max_pages`] bound
//! the crawl. Up to [`CrawlConfig::concurrency`] requests run at once, as spawned tasks, so a
//! slow sink does not stall requests that are already in flight; the sink itself is only ever
//! called from the task running [`crawl`].

#![allow(
    clippy::result_large_err,
    reason = "CrawlError carries the URL for one-line messages; it is built once per failed \
              URL, far off any hot path, and boxing it would change the public API"
)]

use std::net::IpAddr;
use std::time::Duration;

use url::Url;

mod crawl;
pub mod decode;
mod error;
pub mod extract;
mod fetch;
pub mod guard;
mod robots;

pub use crate::crawl::crawl;
pub use crate::error::CrawlError;
pub use crate::robots::ROBOTS_MAX_BYTES;

/// The User-Agent sent by default.
pub const DEFAULT_USER_AGENT: &str = "CopytraceBot/0.1 (+https://example.invalid/copytrace)";

/// How a crawl behaves. Start from [`CrawlConfig::default`] and override fields.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlConfig {
    /// Total page requests, successful or not (robots.txt fetches and URLs never requested
    /// because of robots.txt do not count). Default 100.
    pub max_pages: usize,
    /// How many links away from a seed to go; seeds are depth 0. `None` means no limit.
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
    /// Total time per request including the body. Default 30 s.
    pub request_timeout: Duration,
    /// Maximum *decompressed* body size in bytes. Default 8 MiB.
    pub max_body_bytes: usize,
    /// Requests in flight at once. Default 4.
    pub concurrency: usize,
    /// Redirect hops followed per URL. Default 5.
    pub max_redirects: usize,
    /// Minimum time between the starts of two requests to the same host. Default 0.
    pub host_delay: Duration,
    /// Upper bound on a robots.txt `Crawl-delay` (which would otherwise let a site stall the
    /// crawl for hours). Default 10 s.
    pub max_crawl_delay: Duration,
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
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 8 * 1024 * 1024,
            concurrency: 4,
            max_redirects: 5,
            host_delay: Duration::ZERO,
            max_crawl_delay: Duration::from_secs(10),
        }
    }
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

/// What a crawl did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlReport {
    /// Pages handed to [`PageSink::page`].
    pub fetched: usize,
    /// URLs that failed, with a one-line reason each, in completion order.
    pub failures: Vec<(String, String)>,
    /// URLs not requested because robots.txt disallows them (or a redirect led to such a URL).
    pub disallowed_by_robots: usize,
    /// Distinct in-scope URLs that were discovered but not requested because of `max_depth` or
    /// `max_pages`.
    pub skipped: usize,
}
