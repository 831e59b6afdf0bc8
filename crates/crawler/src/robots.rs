//! robots.txt: fetched once per origin through the guarded fetcher, then obeyed.
//!
//! The policy follows RFC 9309 and Google's documented behaviour:
//!
//! | robots.txt answer | meaning for the origin |
//! |---|---|
//! | 2xx | parse with `texting_robots` for our product token (e.g. `CopytraceBot`), falling back to the `*` group; unparsable files allow everything |
//! | 3xx | followed like any redirect (up to `max_redirects`, every hop guarded); too many hops or a refused hop count as "unavailable" in RFC 9309's sense: allow all |
//! | 4xx except 429 | no robots.txt: allow all |
//! | 429, 5xx | server error: **disallow all** for the rest of this crawl (RFC 9309 §2.3.1.4, Google treats it the same way until the file can be fetched again) |
//! | network error, DNS failure, timeout | unreachable: disallow all for the rest of this crawl |
//!
//! URLs of an origin whose robots.txt was unreachable are reported as
//! [`CrawlError::RobotsUnavailable`] failures rather than silently counted as disallowed, so an
//! operator sees *why* nothing was crawled. Only the first [`ROBOTS_MAX_BYTES`] of a file are
//! read (Google reads 500 KiB and ignores the rest). `Crawl-delay` is returned for politeness.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use texting_robots::Robot;
use tokio::sync::OnceCell;
use url::Url;

use crate::error::CrawlError;
use crate::fetch::{FetchFailure, Fetcher, RequestOptions};

/// How much of a robots.txt file is read.
pub const ROBOTS_MAX_BYTES: usize = 512 * 1024;

/// The rules for one origin.
#[derive(Debug)]
pub(crate) enum HostRobots {
    Rules(Box<Robot>),
    AllowAll,
    Unavailable(String),
}

/// Whether a URL may be requested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allowed,
    Disallowed,
    Unavailable { origin: String, reason: String },
}

/// robots.txt per origin, each fetched at most once even when many tasks ask at the same time.
pub(crate) struct RobotsCache {
    agent: String,
    origins: Mutex<HashMap<String, Arc<OnceCell<Arc<HostRobots>>>>>,
}

impl RobotsCache {
    /// `user_agent` is the full User-Agent header; robots.txt groups are matched against its
    /// product token (the part before the first `/` or space).
    pub(crate) fn new(user_agent: &str) -> Self {
        Self {
            agent: product_token(user_agent).to_owned(),
            origins: Mutex::new(HashMap::new()),
        }
    }

    /// The rules for `url`'s origin, fetching robots.txt on first use.
    pub(crate) async fn for_url(&self, fetcher: &Fetcher, url: &Url) -> Arc<HostRobots> {
        let origin = url.origin().ascii_serialization();
        let cell = {
            let mut origins = self.origins.lock().unwrap_or_else(|p| p.into_inner());
            origins.entry(origin).or_default().clone()
        };
        cell.get_or_init(|| async {
            // Boxed: fetching robots.txt goes through the same fetcher that consults this cache
            // on redirects, which would otherwise make this future contain itself.
            Arc::new(Box::pin(load(fetcher, &self.agent, url)).await)
        })
        .await
        .clone()
    }

    /// The rules for `url`'s origin if they are already loaded (never fetches).
    pub(crate) fn peek(&self, url: &Url) -> Option<Arc<HostRobots>> {
        let origin = url.origin().ascii_serialization();
        let origins = self.origins.lock().unwrap_or_else(|p| p.into_inner());
        origins.get(&origin)?.get().cloned()
    }
}

impl HostRobots {
    /// Whether `url` (of this origin) may be requested.
    pub(crate) fn verdict(&self, url: &Url) -> Verdict {
        match self {
            HostRobots::AllowAll => Verdict::Allowed,
            HostRobots::Rules(robot) if robot.allowed(url.as_str()) => Verdict::Allowed,
            HostRobots::Rules(_) => Verdict::Disallowed,
            HostRobots::Unavailable(reason) => Verdict::Unavailable {
                origin: url.origin().ascii_serialization(),
                reason: reason.clone(),
            },
        }
    }

    /// The `Sitemap:` URLs of the file (they apply to every agent).
    pub(crate) fn sitemaps(&self) -> Vec<Url> {
        match self {
            HostRobots::Rules(robot) => robot
                .sitemaps
                .iter()
                .filter_map(|s| Url::parse(s.trim()).ok())
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The `Crawl-delay` for our agent, if any.
    pub(crate) fn crawl_delay(&self) -> Option<Duration> {
        match self {
            HostRobots::Rules(robot) => robot
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f64(f64::from(d).min(86_400.0))),
            _ => None,
        }
    }
}

/// The product token of a User-Agent string: `CopytraceBot/0.1 (+…)` → `CopytraceBot`.
pub(crate) fn product_token(user_agent: &str) -> &str {
    let token = user_agent
        .split(|c: char| c == '/' || c.is_whitespace())
        .next()
        .unwrap_or("");
    if token.is_empty() { "*" } else { token }
}

fn robots_url(url: &Url) -> Url {
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    let _ = robots.set_username("");
    let _ = robots.set_password(None);
    robots
}

async fn load(fetcher: &Fetcher, agent: &str, url: &Url) -> HostRobots {
    let robots_url = robots_url(url);
    let (final_url, mut response) = match fetcher.get(&robots_url, RequestOptions::default()).await
    {
        Ok(ok) => ok,
        Err(FetchFailure::Disallowed) => return HostRobots::AllowAll,
        Err(FetchFailure::Failed(e)) => return from_fetch_error(&robots_url, e),
    };
    let status = response.status();
    if status.is_success() {
        return match fetcher
            .read_body(&final_url, &mut response, ROBOTS_MAX_BYTES, true)
            .await
        {
            Ok(body) => match Robot::new(agent, &body) {
                Ok(robot) => HostRobots::Rules(Box::new(robot)),
                Err(e) => {
                    tracing::warn!(url = %robots_url, error = %e, "unparsable robots.txt; allowing all");
                    HostRobots::AllowAll
                }
            },
            Err(e) => from_fetch_error(&robots_url, e),
        };
    }
    if status.as_u16() == 429 || status.is_server_error() {
        tracing::warn!(url = %robots_url, status = status.as_u16(), "robots.txt unavailable; disallowing the origin");
        return HostRobots::Unavailable(format!("HTTP {}", status.as_u16()));
    }
    tracing::debug!(url = %robots_url, status = status.as_u16(), "no robots.txt; allowing all");
    HostRobots::AllowAll
}

fn from_fetch_error(robots_url: &Url, error: CrawlError) -> HostRobots {
    match error {
        // The origin's own pages are checked by the guard independently; a robots.txt that
        // cannot be followed is "unavailable" (RFC 9309 §2.3.1.2): allow.
        CrawlError::RefusedAddress { .. }
        | CrawlError::UnsupportedScheme { .. }
        | CrawlError::BadRedirect { .. }
        | CrawlError::TooManyRedirects { .. }
        | CrawlError::RedirectLoop { .. }
        | CrawlError::InvalidUrl { .. }
        | CrawlError::RobotsUnavailable { .. } => {
            tracing::debug!(url = %robots_url, %error, "robots.txt not followable; allowing all");
            HostRobots::AllowAll
        }
        other => {
            tracing::warn!(url = %robots_url, error = %other, "robots.txt unreachable; disallowing the origin");
            HostRobots::Unavailable(other.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_token_is_the_part_before_the_version() {
        assert_eq!(
            product_token("CopytraceBot/0.1 (+https://example.invalid/copytrace)"),
            "CopytraceBot"
        );
        assert_eq!(product_token("Plain"), "Plain");
        assert_eq!(product_token(""), "*");
    }

    #[test]
    fn rules_for_our_token_win_over_the_star_group() {
        let txt = b"User-agent: *\nDisallow: /\n\nUser-agent: copytracebot\nDisallow: /private\nCrawl-delay: 2\n";
        let robot = Robot::new(product_token("CopytraceBot/0.1"), txt).unwrap();
        assert!(robot.allowed("http://x.cn/book/1.html"));
        assert!(!robot.allowed("http://x.cn/private/1.html"));
        let host = HostRobots::Rules(Box::new(robot));
        assert_eq!(host.crawl_delay(), Some(Duration::from_secs(2)));
    }

    #[test]
    fn robots_url_drops_path_query_and_credentials() {
        let url = Url::parse("https://u:p@x.cn:8443/a/b?c=d#e").unwrap();
        assert_eq!(robots_url(&url).as_str(), "https://x.cn:8443/robots.txt");
    }
}
