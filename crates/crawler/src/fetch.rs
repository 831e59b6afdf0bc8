//! Guarded HTTP fetching: one request per hop, redirects followed by hand, paced and retried
//! hops, capped bodies.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Client, Response, StatusCode};
use tokio::time::Instant;
use url::Url;

use crate::error::CrawlError;
use crate::guard::{AddressPolicy, GuardedResolver};
use crate::politeness::Politeness;
use crate::robots::{HostRobots, RobotsCache, Verdict};
use crate::stats::Counters;
use crate::urls::{host_key, normalize};
use crate::{CrawlConfig, Validators, retry};

/// Why a page fetch did not produce a response.
#[derive(Debug)]
pub(crate) enum FetchFailure {
    /// A redirect hop is disallowed by its origin's robots.txt.
    Disallowed,
    /// Anything else.
    Failed(CrawlError),
}

impl From<CrawlError> for FetchFailure {
    fn from(e: CrawlError) -> Self {
        FetchFailure::Failed(e)
    }
}

/// What every page-like request (pages, their redirect hops, sitemaps) passes through besides
/// the address guard: robots.txt and per-host pacing.
pub(crate) struct Gate {
    pub(crate) robots: RobotsCache,
    pub(crate) politeness: Politeness,
    host_delay: Duration,
    max_crawl_delay: Duration,
}

impl Gate {
    pub(crate) fn new(config: &CrawlConfig) -> Self {
        Self {
            robots: RobotsCache::new(&config.user_agent),
            politeness: Politeness::new(),
            host_delay: config.host_delay,
            max_crawl_delay: config.max_crawl_delay,
        }
    }

    /// Loads `url`'s robots.txt (once per origin), sets its host's pace from it, and says
    /// whether `url` may be requested.
    pub(crate) async fn prepare(&self, fetcher: &Fetcher, url: &Url) -> (Verdict, Arc<HostRobots>) {
        let robots = self.robots.for_url(fetcher, url).await;
        let delay = robots
            .crawl_delay()
            .map_or(Duration::ZERO, |d| d.min(self.max_crawl_delay))
            .max(self.host_delay);
        self.politeness.configure(&host_key(url), delay);
        (robots.verdict(url), robots)
    }
}

/// How [`Fetcher::get`] treats one request.
#[derive(Clone, Copy, Default)]
pub(crate) struct RequestOptions<'a> {
    /// robots.txt and pacing for every hop, and retries. `None` for robots.txt itself: one
    /// attempt, unpaced, unchecked.
    pub(crate) gate: Option<&'a Gate>,
    /// The caller already took the first hop's politeness turn.
    pub(crate) first_turn_taken: bool,
    /// Make the first hop conditional.
    pub(crate) validators: Option<&'a Validators>,
}

/// The HTTP client plus the policy it enforces on every hop.
pub(crate) struct Fetcher {
    client: Client,
    policy: Arc<AddressPolicy>,
    max_redirects: usize,
    max_retries: u32,
    retry_base_delay: Duration,
    max_retry_delay: Duration,
    max_retry_after: Duration,
    pub(crate) counters: Arc<Counters>,
}

impl Fetcher {
    pub(crate) fn new(config: &CrawlConfig) -> Result<Self, CrawlError> {
        let policy = Arc::new(AddressPolicy {
            allow_private: config.allow_private_addresses,
            allowed: config.allowed_addresses.clone(),
        });
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"),
        );
        headers.insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("zh-CN,zh;q=0.9,en;q=0.5"),
        );
        let client = Client::builder()
            .user_agent(config.user_agent.as_str())
            .default_headers(headers)
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .timeout(config.request_timeout)
            // Every hop must pass the guard and robots.txt, so reqwest must not follow any.
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            // A system proxy would resolve names itself, out of the guard's sight.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(policy.clone())))
            .pool_max_idle_per_host(config.per_host_concurrency.max(1))
            .build()
            .map_err(|e| CrawlError::Client(e.to_string()))?;
        Ok(Self {
            client,
            policy,
            max_redirects: config.max_redirects,
            max_retries: config.max_retries,
            retry_base_delay: config.retry_base_delay,
            max_retry_delay: config.max_retry_delay,
            max_retry_after: config.max_retry_after,
            counters: Arc::new(Counters::default()),
        })
    }

    pub(crate) fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    /// One GET without following redirects. IP-literal hosts are checked here; names are
    /// checked by the client's [`GuardedResolver`] during the connect.
    async fn send_once(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Response, CrawlError> {
        self.policy
            .check_host_literal(url)
            .map_err(|e| CrawlError::from_guard(url, &e))?;
        let mut request = self.client.get(url.clone());
        if let Some(validators) = validators {
            if let Some(etag) = &validators.etag {
                request = request.header(header::IF_NONE_MATCH, etag.as_str());
            }
            if let Some(date) = &validators.last_modified {
                request = request.header(header::IF_MODIFIED_SINCE, date.as_str());
            }
        }
        self.counters.request();
        request
            .send()
            .await
            .map_err(|e| CrawlError::from_reqwest(url, &e))
    }

    /// One hop: paced and retried when a gate is given.
    async fn send_hop(
        &self,
        url: &Url,
        options: RequestOptions<'_>,
        first_hop: bool,
    ) -> Result<Response, CrawlError> {
        let validators = if first_hop { options.validators } else { None };
        let Some(gate) = options.gate else {
            return self.send_once(url, validators).await;
        };
        let host = host_key(url);
        let mut attempt = 0u32;
        loop {
            if attempt > 0 || !(first_hop && options.first_turn_taken) {
                gate.politeness.acquire(&host).await;
            }
            if attempt > 0 {
                self.counters.retry();
            }
            let result = self.send_once(url, validators).await;
            if attempt >= self.max_retries {
                return result;
            }
            let wait = match &result {
                Ok(response) if retry::retryable_status(response.status().as_u16()) => {
                    match retry::retry_after(response.headers(), SystemTime::now()) {
                        Some(after) if after > self.max_retry_after => return result,
                        Some(after) => {
                            // The whole host is asked to wait, not only this request.
                            gate.politeness.pause(&host, Instant::now() + after);
                            Duration::ZERO
                        }
                        None => self.backoff(attempt),
                    }
                }
                Err(error) if retry::retryable_error(error) => self.backoff(attempt),
                _ => return result,
            };
            tracing::debug!(%url, attempt, ?wait, "retrying");
            drop(result);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        retry::backoff(attempt, self.retry_base_delay, self.max_retry_delay)
    }

    /// GETs `url`, following up to `max_redirects` redirects by hand. Every hop is checked by
    /// the address guard and, with a gate, against its origin's robots.txt (the first URL is
    /// assumed to have been checked by the caller) and paced. A chain that returns to a URL it
    /// visited is a [`CrawlError::RedirectLoop`]. Returns the final URL and the response, whose
    /// body is still unread; the status is not judged here.
    pub(crate) async fn get(
        &self,
        url: &Url,
        options: RequestOptions<'_>,
    ) -> Result<(Url, Response), FetchFailure> {
        let mut current = url.clone();
        let mut visited: HashSet<String> = HashSet::from([normalize(url).to_string()]);
        let mut hops = 0usize;
        loop {
            if hops > 0
                && let Some(gate) = options.gate
            {
                match gate.prepare(self, &current).await.0 {
                    Verdict::Allowed => {}
                    Verdict::Disallowed => return Err(FetchFailure::Disallowed),
                    Verdict::Unavailable { origin, reason } => {
                        return Err(CrawlError::RobotsUnavailable {
                            url: current,
                            origin,
                            reason,
                        }
                        .into());
                    }
                }
            }
            let response = self.send_hop(&current, options, hops == 0).await?;
            let status = response.status();
            if !is_followed_redirect(status) {
                return Ok((current, response));
            }
            let Some(location) = response.headers().get(header::LOCATION) else {
                // A redirect status without a target: let the caller judge the status.
                return Ok((current, response));
            };
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            let next = current
                .join(location.trim())
                .map_err(|_| CrawlError::BadRedirect {
                    url: current.clone(),
                    location: location.clone(),
                })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(CrawlError::UnsupportedScheme { url: next }.into());
            }
            let next = normalize(&next);
            if !visited.insert(next.to_string()) {
                return Err(CrawlError::RedirectLoop {
                    url: url.clone(),
                    target: next,
                }
                .into());
            }
            if hops >= self.max_redirects {
                return Err(CrawlError::TooManyRedirects {
                    url: url.clone(),
                    max: self.max_redirects,
                }
                .into());
            }
            tracing::debug!(from = %current, to = %next, status = status.as_u16(), "redirect");
            current = next;
            hops += 1;
        }
    }

    /// [`read_body`], counting the bytes read.
    pub(crate) async fn read_body(
        &self,
        url: &Url,
        response: &mut Response,
        limit: usize,
        truncate: bool,
    ) -> Result<Vec<u8>, CrawlError> {
        let result = read_body(url, response, limit, truncate).await;
        match &result {
            Ok(body) => self.counters.bytes(body.len()),
            Err(CrawlError::TooLarge { limit, .. }) => self.counters.bytes(*limit),
            Err(_) => {}
        }
        result
    }
}

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// Reads a response body as a stream, counting *decompressed* bytes (reqwest's gzip, brotli
/// and deflate decoders run before the chunks reach us). Past `limit`, either fails with
/// [`CrawlError::TooLarge`] or, with `truncate`, returns the first `limit` bytes.
pub(crate) async fn read_body(
    url: &Url,
    response: &mut Response,
    limit: usize,
    truncate: bool,
) -> Result<Vec<u8>, CrawlError> {
    let declared = response.content_length();
    if !truncate && declared.is_some_and(|len| len > limit as u64) {
        return Err(CrawlError::TooLarge {
            url: url.clone(),
            limit,
        });
    }
    let initial = declared.map_or(16 * 1024, |len| len as usize).min(limit);
    let mut body = Vec::with_capacity(initial);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| CrawlError::from_reqwest(url, &e))?
    {
        if body.len() + chunk.len() > limit {
            if truncate {
                body.extend_from_slice(&chunk[..limit - body.len()]);
                break;
            }
            return Err(CrawlError::TooLarge {
                url: url.clone(),
                limit,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What the `Content-Type` header says about HTML-ness.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ContentKind {
    Html,
    /// No (usable) content type: sniff the body.
    Unknown,
    Other(String),
}

pub(crate) fn content_kind(content_type: Option<&str>) -> ContentKind {
    let Some(ct) = content_type else {
        return ContentKind::Unknown;
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => ContentKind::Html,
        "" => ContentKind::Unknown,
        _ => ContentKind::Other(mime),
    }
}

/// The HTML part of the WHATWG MIME sniffing rules: after optional whitespace (and a UTF-8
/// BOM), the body starts with one of a few HTML tags followed by a space or `>`.
pub(crate) fn sniff_html(body: &[u8]) -> bool {
    const PATTERNS: &[&[u8]] = &[
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<body",
        b"<br",
        b"<p",
        b"<!--",
        b"<meta",
    ];
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'))
        .unwrap_or(body.len());
    let body = &body[start..];
    PATTERNS.iter().any(|p| {
        body.len() > p.len()
            && body[..p.len()].eq_ignore_ascii_case(p)
            && (matches!(body[p.len()], b' ' | b'>') || *p == b"<!--")
    })
}

/// Whether a body declared (or sniffed) as HTML is really binary data: its first 1024 bytes
/// contain a byte that never occurs in text (the WHATWG "binary data byte" set: controls other
/// than tab, line feed, form feed, carriage return and escape). Bodies starting with a UTF-16
/// byte order mark are text whatever their NUL bytes; GBK, Big5 and UTF-8 never use these bytes.
pub(crate) fn looks_binary(body: &[u8]) -> bool {
    if body.starts_with(b"\xFF\xFE") || body.starts_with(b"\xFE\xFF") {
        return false;
    }
    body.iter()
        .take(1024)
        .any(|&b| matches!(b, 0x00..=0x08 | 0x0B | 0x0E..=0x1A | 0x1C..=0x1F))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_bodies_are_told_from_text_in_any_encoding() {
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(looks_binary(b"<html>\0\x01\x02"));
        assert!(!looks_binary(b"<html>\t\r\n\x0c\x1b</html>"));
        let (gbk, _, _) = encoding_rs::GBK.encode("<p>第一章 风起云涌，少年推门。</p>");
        assert!(!looks_binary(&gbk));
        let (big5, _, _) = encoding_rs::BIG5.encode("<p>第一章 風起雲湧，少年推門。</p>");
        assert!(!looks_binary(&big5));
        let mut utf16 = vec![0xFF, 0xFE];
        for unit in "<p>你好</p>".encode_utf16() {
            utf16.extend_from_slice(&unit.to_le_bytes());
        }
        assert!(!looks_binary(&utf16));
        assert!(!looks_binary(b""));
    }

    #[test]
    fn content_types_are_classified() {
        assert_eq!(
            content_kind(Some("text/html; charset=gbk")),
            ContentKind::Html
        );
        assert_eq!(
            content_kind(Some("Application/XHTML+XML")),
            ContentKind::Html
        );
        assert_eq!(content_kind(None), ContentKind::Unknown);
        assert_eq!(content_kind(Some(" ")), ContentKind::Unknown);
        assert_eq!(
            content_kind(Some("application/pdf")),
            ContentKind::Other("application/pdf".into())
        );
    }

    #[test]
    fn html_is_sniffed_from_its_first_tag() {
        assert!(sniff_html(b"  \n<!DOCTYPE html><html>"));
        assert!(sniff_html(b"\xEF\xBB\xBF<HTML lang=zh>"));
        assert!(sniff_html(b"<p>hi</p>"));
        assert!(sniff_html(b"<!-- x -->"));
        assert!(!sniff_html(b"%PDF-1.7"));
        assert!(!sniff_html(b"<?xml version='1.0'?><rss>"));
        assert!(!sniff_html(b"<pre"));
        assert!(!sniff_html(b""));
    }
}
