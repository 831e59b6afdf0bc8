//! The crawl loop: a breadth-first frontier feeding up to `concurrency` spawned page tasks.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header;
use tokio::task::JoinSet;
use tokio::time::Instant;
use url::{Host, Url};

use crate::error::CrawlError;
use crate::fetch::{ContentKind, FetchFailure, Fetcher, content_kind, read_body, sniff_html};
use crate::robots::{RobotsCache, Verdict};
use crate::{CrawlConfig, CrawlReport, FetchedPage, PageSink, decode, extract};

/// Crawls from `seeds`, handing each fetched HTML page to `sink`.
///
/// Returns `Err` only for fatal problems: the HTTP client could not be built, or the sink
/// returned an error (the crawl stops at once and requests in flight are cancelled). Every
/// per-URL problem is recorded in [`CrawlReport::failures`], passed to
/// [`PageSink::failure`], and the crawl goes on. Seeds that are not `http`/`https` URLs are
/// reported as failures.
pub async fn crawl(
    config: &CrawlConfig,
    seeds: &[Url],
    sink: &mut dyn PageSink,
) -> Result<CrawlReport, CrawlError> {
    let fetcher = Fetcher::new(config)?;
    let shared = Arc::new(Shared {
        robots: RobotsCache::new(&config.user_agent),
        fetcher,
        politeness: Politeness::default(),
        config: config.clone(),
    });
    let mut report = CrawlReport::default();
    let mut frontier = Frontier::new(config.max_depth);

    for seed in seeds {
        let mut url = seed.clone();
        url.set_fragment(None);
        match Scope::of(&url) {
            Some(scope) if matches!(url.scheme(), "http" | "https") => {
                frontier.push_seed(url, scope);
            }
            _ => {
                let error = CrawlError::UnsupportedScheme { url: url.clone() };
                report.failures.push((url.to_string(), error.to_string()));
                sink.failure(&url, &error).await;
            }
        }
    }

    let concurrency = config.concurrency.max(1);
    let mut tasks: JoinSet<Outcome> = JoinSet::new();
    let mut in_flight: HashMap<tokio::task::Id, Item> = HashMap::new();
    // Requests started or about to start; given back by tasks that never requested their page.
    let mut budget_used = 0usize;

    loop {
        while tasks.len() < concurrency && budget_used < config.max_pages {
            let Some(item) = frontier.pop() else {
                break;
            };
            budget_used += 1;
            let handle = tasks.spawn(page_task(shared.clone(), item.clone()));
            in_flight.insert(handle.id(), item);
        }
        let Some(joined) = tasks.join_next_with_id().await else {
            break;
        };
        let (id, outcome) = match joined {
            Ok((id, outcome)) => (id, outcome),
            Err(e) => {
                let message = e.to_string();
                (
                    e.id(),
                    Outcome::not_requested(Err(Failure::Internal(message))),
                )
            }
        };
        let Some(item) = in_flight.remove(&id) else {
            continue;
        };
        if !outcome.requested {
            budget_used = budget_used.saturating_sub(1);
        }
        match outcome.result {
            Ok((page, links)) => {
                report.fetched += 1;
                frontier.add_links(&item, &page.url, links);
                sink.page(page).await.map_err(CrawlError::Sink)?;
            }
            Err(Failure::Disallowed) => report.disallowed_by_robots += 1,
            Err(Failure::Internal(message)) => {
                let error = CrawlError::Internal {
                    url: item.url.to_string(),
                    message,
                };
                tracing::error!(%error, "crawl task failed");
                report
                    .failures
                    .push((item.url.to_string(), error.to_string()));
                sink.failure(&item.url, &error).await;
            }
            Err(Failure::Crawl(error)) => {
                tracing::info!(url = %item.url, %error, "fetch failed");
                report
                    .failures
                    .push((item.url.to_string(), error.to_string()));
                sink.failure(&item.url, &error).await;
            }
        }
    }
    report.skipped = frontier.skipped();
    Ok(report)
}

struct Shared {
    fetcher: Fetcher,
    robots: RobotsCache,
    politeness: Politeness,
    config: CrawlConfig,
}

/// A frontier entry.
#[derive(Clone, Debug)]
struct Item {
    url: Url,
    depth: u32,
    scope: Arc<Scope>,
}

/// The sites a crawl branch may visit: the seed's, plus the one a seed redirected to.
#[derive(Debug, PartialEq, Eq)]
struct Scope {
    sites: Vec<Site>,
}

/// A site: host without a leading `www.`, and the port when it is not the scheme's default
/// (so `http://x/` and `https://www.x/` are the same site, `http://x:8080/` is another).
#[derive(Debug, PartialEq, Eq, Clone)]
struct Site {
    host: String,
    port: Option<u16>,
}

impl Site {
    fn of(url: &Url) -> Option<Site> {
        let host = match url.host()? {
            Host::Domain(d) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d.strip_prefix("www.").map(str::to_owned).unwrap_or(d)
            }
            Host::Ipv4(ip) => ip.to_string(),
            Host::Ipv6(ip) => ip.to_string(),
        };
        Some(Site {
            host,
            port: url.port(),
        })
    }
}

impl Scope {
    fn of(url: &Url) -> Option<Scope> {
        Some(Scope {
            sites: vec![Site::of(url)?],
        })
    }

    fn contains(&self, url: &Url) -> bool {
        Site::of(url).is_some_and(|site| self.sites.contains(&site))
    }
}

struct Frontier {
    queue: VecDeque<Item>,
    /// Normalised URLs queued or fetched (including final URLs of redirects).
    seen: HashSet<String>,
    /// In-scope URLs found only beyond `max_depth` so far.
    too_deep: HashSet<String>,
    /// Final URLs of redirected requests: already fetched, never to be requested again.
    redirect_targets: HashSet<String>,
    max_depth: Option<u32>,
}

impl Frontier {
    fn new(max_depth: Option<u32>) -> Self {
        Self {
            queue: VecDeque::new(),
            seen: HashSet::new(),
            too_deep: HashSet::new(),
            redirect_targets: HashSet::new(),
            max_depth,
        }
    }

    fn push_seed(&mut self, url: Url, scope: Scope) {
        if self.seen.insert(url.as_str().to_owned()) {
            self.queue.push_back(Item {
                url,
                depth: 0,
                scope: Arc::new(scope),
            });
        }
    }

    fn pop(&mut self) -> Option<Item> {
        // A queued URL may meanwhile have been fetched as the target of a redirect.
        while let Some(item) = self.queue.pop_front() {
            if !self.redirect_targets.contains(item.url.as_str()) {
                return Some(item);
            }
        }
        None
    }

    /// Queues the in-scope links of a fetched page.
    fn add_links(&mut self, parent: &Item, final_url: &Url, links: Vec<Url>) {
        if final_url != &parent.url {
            self.seen.insert(final_url.as_str().to_owned());
            self.redirect_targets.insert(final_url.as_str().to_owned());
        }
        let mut scope = parent.scope.clone();
        if parent.depth == 0 && !scope.contains(final_url) {
            // A seed that moved (old domain → new domain) is crawled where it moved to.
            if let Some(site) = Site::of(final_url) {
                let mut sites = scope.sites.clone();
                sites.push(site);
                scope = Arc::new(Scope { sites });
            }
        }
        let depth = parent.depth.saturating_add(1);
        for mut link in links {
            link.set_fragment(None);
            if !matches!(link.scheme(), "http" | "https") || !scope.contains(&link) {
                continue;
            }
            let key = link.as_str().to_owned();
            if self.seen.contains(&key) {
                continue;
            }
            if self.max_depth.is_some_and(|max| depth > max) {
                self.too_deep.insert(key);
                continue;
            }
            self.too_deep.remove(&key);
            self.seen.insert(key);
            self.queue.push_back(Item {
                url: link,
                depth,
                scope: scope.clone(),
            });
        }
    }

    /// URLs discovered but never requested: too deep, or left in the queue when the page
    /// budget ran out.
    fn skipped(&self) -> usize {
        self.too_deep.len() + self.queue.len()
    }
}

/// Per-host spacing of request starts (`host_delay`, robots.txt `Crawl-delay`).
#[derive(Default)]
struct Politeness {
    next_start: Mutex<HashMap<String, Instant>>,
}

impl Politeness {
    async fn wait_turn(&self, host: &str, delay: Duration) {
        if delay.is_zero() {
            return;
        }
        let start = {
            let mut next = self.next_start.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let start = next.get(host).copied().unwrap_or(now).max(now);
            next.insert(host.to_owned(), start + delay);
            start
        };
        tokio::time::sleep_until(start).await;
    }
}

enum Failure {
    Disallowed,
    Crawl(CrawlError),
    Internal(String),
}

struct Outcome {
    /// Whether the page itself was requested (counts against `max_pages`).
    requested: bool,
    result: Result<(FetchedPage, Vec<Url>), Failure>,
}

impl Outcome {
    fn not_requested(result: Result<(FetchedPage, Vec<Url>), Failure>) -> Self {
        Self {
            requested: false,
            result,
        }
    }

    fn requested(result: Result<(FetchedPage, Vec<Url>), Failure>) -> Self {
        Self {
            requested: true,
            result,
        }
    }
}

async fn page_task(shared: Arc<Shared>, item: Item) -> Outcome {
    let url = &item.url;
    // Literal hosts are refused before robots.txt is even asked for.
    if let Err(e) = shared.fetcher.policy().check_host_literal(url) {
        return Outcome::requested(Err(Failure::Crawl(CrawlError::from_guard(url, &e))));
    }
    let robots = shared.robots.for_url(&shared.fetcher, url).await;
    match robots.verdict(url) {
        Verdict::Allowed => {}
        Verdict::Disallowed => return Outcome::not_requested(Err(Failure::Disallowed)),
        Verdict::Unavailable { origin, reason } => {
            return Outcome::not_requested(Err(Failure::Crawl(CrawlError::RobotsUnavailable {
                url: url.clone(),
                origin,
                reason,
            })));
        }
    }
    let config = &shared.config;
    let delay = robots
        .crawl_delay()
        .map_or(Duration::ZERO, |d| d.min(config.max_crawl_delay))
        .max(config.host_delay);
    shared
        .politeness
        .wait_turn(url.host_str().unwrap_or_default(), delay)
        .await;

    Outcome::requested(fetch_page(&shared, &item).await)
}

async fn fetch_page(shared: &Shared, item: &Item) -> Result<(FetchedPage, Vec<Url>), Failure> {
    let (final_url, mut response) = match shared.fetcher.get(&item.url, Some(&shared.robots)).await
    {
        Ok(ok) => ok,
        Err(FetchFailure::Disallowed) => return Err(Failure::Disallowed),
        Err(FetchFailure::Failed(e)) => return Err(Failure::Crawl(e)),
    };
    let fetched_at = chrono::Utc::now();
    let status = response.status();
    if !status.is_success() {
        return Err(Failure::Crawl(CrawlError::HttpStatus {
            url: final_url,
            status: status.as_u16(),
        }));
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let kind = content_kind(content_type.as_deref());
    if let ContentKind::Other(mime) = kind {
        return Err(Failure::Crawl(CrawlError::NotHtml {
            url: final_url,
            content_type: mime,
        }));
    }
    let limit = shared.config.max_body_bytes;
    let body = read_body(&final_url, &mut response, limit, false)
        .await
        .map_err(Failure::Crawl)?;
    drop(response);
    if kind == ContentKind::Unknown && !sniff_html(&body) {
        return Err(Failure::Crawl(CrawlError::NotHtml {
            url: final_url,
            content_type: "unknown".into(),
        }));
    }

    // Parsing a few megabytes of HTML takes long enough to keep off the async workers.
    let base = final_url.clone();
    let parsed = tokio::task::spawn_blocking(move || {
        let (html, encoding) = decode::decode_html(&body, content_type.as_deref(), Some(&base));
        (extract::extract(&html, &base), encoding)
    })
    .await;
    let (extracted, encoding) = parsed.map_err(|e| Failure::Internal(e.to_string()))?;
    let page = FetchedPage {
        requested_url: item.url.clone(),
        url: final_url,
        status: status.as_u16(),
        title: extracted.title,
        text: extracted.text,
        encoding,
        fetched_at,
        depth: item.depth,
    };
    Ok((page, extracted.links))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_crawl_future_can_be_spawned_on_a_multi_threaded_runtime() {
        fn assert_send<T: Send>(_: &T) {}
        let config = CrawlConfig::default();
        let mut sink: Vec<FetchedPage> = Vec::new();
        let future = crawl(&config, &[], &mut sink);
        assert_send(&future);
    }

    #[test]
    fn sites_ignore_www_and_default_ports_but_not_other_ports() {
        let scope = Scope::of(&url("http://www.example.cn/")).unwrap();
        assert!(scope.contains(&url("https://example.cn/a")));
        assert!(scope.contains(&url("http://WWW.example.cn:80/b")));
        assert!(!scope.contains(&url("http://example.cn:8080/")));
        assert!(!scope.contains(&url("http://m.example.cn/")));
        assert!(!scope.contains(&url("http://example.com/")));
    }

    #[test]
    fn links_beyond_max_depth_are_counted_as_skipped_once() {
        let mut frontier = Frontier::new(Some(0));
        frontier.push_seed(
            url("http://a.cn/"),
            Scope::of(&url("http://a.cn/")).unwrap(),
        );
        let seed = frontier.pop().unwrap();
        let links = vec![
            url("http://a.cn/1"),
            url("http://a.cn/1#x"),
            url("http://b.cn/"),
        ];
        frontier.add_links(&seed, &seed.url.clone(), links);
        assert!(frontier.pop().is_none());
        assert_eq!(frontier.skipped(), 1);
    }

    #[test]
    fn a_seed_that_redirects_to_another_domain_is_followed_there() {
        let mut frontier = Frontier::new(None);
        frontier.push_seed(
            url("http://old.cn/"),
            Scope::of(&url("http://old.cn/")).unwrap(),
        );
        let seed = frontier.pop().unwrap();
        let links = vec![
            url("http://new.cn/2"),
            url("http://old.cn/3"),
            url("http://x.cn/"),
        ];
        frontier.add_links(&seed, &url("http://new.cn/"), links);
        let queued: Vec<String> = std::iter::from_fn(|| frontier.pop())
            .map(|i| i.url.to_string())
            .collect();
        assert_eq!(queued, ["http://new.cn/2", "http://old.cn/3"]);
    }
}
