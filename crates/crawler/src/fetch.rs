//! Guarded HTTP fetching: one request per hop, redirects followed by hand, capped bodies.

use std::sync::Arc;

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Client, Response, StatusCode};
use url::Url;

use crate::CrawlConfig;
use crate::error::CrawlError;
use crate::guard::{AddressPolicy, GuardedResolver};
use crate::robots::{RobotsCache, Verdict};

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

/// The HTTP client plus the policy it enforces on every hop.
pub(crate) struct Fetcher {
    client: Client,
    policy: Arc<AddressPolicy>,
    max_redirects: usize,
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
            .timeout(config.request_timeout)
            // Every hop must pass the guard and robots.txt, so reqwest must not follow any.
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            // A system proxy would resolve names itself, out of the guard's sight.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(policy.clone())))
            .pool_max_idle_per_host(config.concurrency.max(1))
            .build()
            .map_err(|e| CrawlError::Client(e.to_string()))?;
        Ok(Self {
            client,
            policy,
            max_redirects: config.max_redirects,
        })
    }

    pub(crate) fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    /// One GET without following redirects. IP-literal hosts are checked here; names are
    /// checked by the client's [`GuardedResolver`] during the connect.
    async fn send_once(&self, url: &Url) -> Result<Response, CrawlError> {
        self.policy
            .check_host_literal(url)
            .map_err(|e| CrawlError::from_guard(url, &e))?;
        self.client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| CrawlError::from_reqwest(url, &e))
    }

    /// GETs `url`, following up to `max_redirects` redirects by hand. Every hop is checked by
    /// the address guard and, when `robots` is given, against its origin's robots.txt (the first
    /// URL is assumed to have been checked by the caller). Returns the final URL and the
    /// response, whose body is still unread; the status is not judged here.
    pub(crate) async fn get(
        &self,
        url: &Url,
        robots: Option<&RobotsCache>,
    ) -> Result<(Url, Response), FetchFailure> {
        let mut current = url.clone();
        let mut hops = 0usize;
        loop {
            if hops > 0
                && let Some(robots) = robots
            {
                match robots.verdict(self, &current).await {
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
            let response = self.send_once(&current).await?;
            let status = response.status();
            if !is_followed_redirect(status) {
                return Ok((current, response));
            }
            let Some(location) = response.headers().get(header::LOCATION) else {
                // A redirect status without a target: let the caller judge the status.
                return Ok((current, response));
            };
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            if hops >= self.max_redirects {
                return Err(CrawlError::TooManyRedirects {
                    url: url.clone(),
                    max: self.max_redirects,
                }
                .into());
            }
            let mut next = current
                .join(location.trim())
                .map_err(|_| CrawlError::BadRedirect {
                    url: current.clone(),
                    location: location.clone(),
                })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(CrawlError::UnsupportedScheme { url: next }.into());
            }
            next.set_fragment(None);
            tracing::debug!(from = %current, to = %next, status = status.as_u16(), "redirect");
            current = next;
            hops += 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
