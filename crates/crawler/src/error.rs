//! The crawler's error type.

use std::error::Error as StdError;
use std::net::IpAddr;

use url::Url;

use crate::guard::GuardError;

/// Everything that can go wrong while crawling. Per-URL problems end up in
/// [`CrawlReport::failures`](crate::CrawlReport::failures) and
/// [`PageSink::failure`](crate::PageSink::failure); only [`CrawlError::Client`] and
/// [`CrawlError::Sink`] stop a crawl. Every message is a single line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// The HTTP client could not be built (fatal).
    #[error("could not build the HTTP client: {0}")]
    Client(String),
    /// The [`PageSink`](crate::PageSink) returned an error (fatal).
    #[error("page sink failed")]
    Sink(#[source] Box<dyn StdError + Send + Sync>),
    /// The URL cannot be crawled as written (no host, unparsable redirect target, ...).
    #[error("invalid URL {url}: {reason}")]
    InvalidUrl {
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Only `http` and `https` are crawled.
    #[error("unsupported URL scheme in {url} (only http and https are crawled)")]
    UnsupportedScheme {
        /// The URL.
        url: Url,
    },
    /// The SSRF guard refused the destination.
    #[error("refused private address {ip} for {url} ({class}; use --allow-private-addresses)")]
    RefusedAddress {
        /// The URL being requested (for a redirect, the hop that was refused).
        url: Url,
        /// The non-public address the host is or resolves to.
        ip: IpAddr,
        /// The kind of address (`loopback`, `private`, `link-local`, ...).
        class: &'static str,
    },
    /// The host name could not be resolved.
    #[error("could not resolve {host} for {url}: {message}")]
    Dns {
        /// The URL being requested.
        url: Url,
        /// The host name.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The TCP or TLS connection could not be established.
    #[error("connection failed for {url}: {message}")]
    Connect {
        /// The URL being requested.
        url: Url,
        /// The underlying cause.
        message: String,
    },
    /// The connect or total request timeout expired.
    #[error("timed out fetching {url}")]
    Timeout {
        /// The URL being requested.
        url: Url,
    },
    /// Any other transport or decoding problem (connection reset, bad gzip, ...).
    #[error("network error fetching {url}: {message}")]
    Network {
        /// The URL being requested.
        url: Url,
        /// The underlying cause.
        message: String,
    },
    /// The server answered with a status other than 2xx (after following redirects).
    #[error("HTTP {status}{reason} for {url}", reason = reason_suffix(*.status))]
    HttpStatus {
        /// The URL that answered (after redirects).
        url: Url,
        /// The status code.
        status: u16,
    },
    /// The redirect chain was longer than `max_redirects`.
    #[error("more than {max} redirects starting at {url}")]
    TooManyRedirects {
        /// The URL first requested.
        url: Url,
        /// The configured limit.
        max: usize,
    },
    /// A redirect chain came back to a URL it had already visited. Without cookies (the
    /// crawler keeps none) such a chain would only repeat itself until the hop limit.
    #[error("redirect loop starting at {url}: {target} was already visited")]
    RedirectLoop {
        /// The URL first requested.
        url: Url,
        /// The hop that closed the loop.
        target: Url,
    },
    /// A redirect's `Location` could not be resolved to a URL.
    #[error("invalid redirect from {url} to {location:?}")]
    BadRedirect {
        /// The URL that redirected.
        url: Url,
        /// The `Location` header as received.
        location: String,
    },
    /// The decompressed body exceeded `max_body_bytes`.
    #[error("body of {url} is larger than {limit} bytes (after decompression)")]
    TooLarge {
        /// The URL that answered.
        url: Url,
        /// The configured limit.
        limit: usize,
    },
    /// The response is not an HTML document.
    #[error("not HTML ({content_type}): {url}")]
    NotHtml {
        /// The URL that answered.
        url: Url,
        /// The content type received, or `"unknown"` when sniffing failed.
        content_type: String,
    },
    /// `robots.txt` answered 5xx/429 or could not be fetched, so by convention the whole origin
    /// is treated as disallowed for the rest of the crawl; the URL was never requested.
    #[error("robots.txt of {origin} is unavailable ({reason}); not requesting {url}")]
    RobotsUnavailable {
        /// The URL that was not requested.
        url: Url,
        /// The origin whose robots.txt failed (`https://example.com`).
        origin: String,
        /// Why robots.txt was unavailable.
        reason: String,
    },
    /// A scope pattern of the configuration is not a valid regular expression (fatal: the crawl
    /// does not start).
    #[error("invalid {which} pattern {pattern:?}: {message}")]
    InvalidPattern {
        /// `include` or `exclude`.
        which: &'static str,
        /// The pattern as given.
        pattern: String,
        /// The regex compiler's message, on one line.
        message: String,
    },
    /// The page shows its text only through scripts and could not be rendered (no Chromium,
    /// or the browser failed or timed out). Not a page without a match: its text is unknown.
    #[error("{url} needs JavaScript to show its text and was not rendered: {reason}")]
    NotRendered {
        /// The page.
        url: Url,
        /// Why it was not rendered.
        reason: String,
    },
    /// A crawl task ended unexpectedly (a bug; reported, and the crawl goes on).
    #[error("internal error while crawling {url}: {message}")]
    Internal {
        /// The URL being crawled.
        url: String,
        /// What happened.
        message: String,
    },
}

fn reason_suffix(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

impl CrawlError {
    /// Maps an SSRF-guard verdict for `url` to a crawl error.
    pub fn from_guard(url: &Url, error: &GuardError) -> Self {
        match error {
            GuardError::Refused { ip, class, .. } => CrawlError::RefusedAddress {
                url: url.clone(),
                ip: *ip,
                class,
            },
            GuardError::UnsupportedScheme { .. } => {
                CrawlError::UnsupportedScheme { url: url.clone() }
            }
            GuardError::NoHost => CrawlError::InvalidUrl {
                url: url.to_string(),
                reason: "no host".into(),
            },
            GuardError::Resolve { host, message } => CrawlError::Dns {
                url: url.clone(),
                host: host.clone(),
                message: message.clone(),
            },
            GuardError::NoAddresses { host } => CrawlError::Dns {
                url: url.clone(),
                host: host.clone(),
                message: "no addresses".into(),
            },
        }
    }

    /// Maps a `reqwest` error for `url`, looking through its source chain for guard refusals
    /// raised inside the resolver.
    pub(crate) fn from_reqwest(url: &Url, error: &reqwest::Error) -> Self {
        if let Some(guard) = crate::guard::find_guard_error(error) {
            return Self::from_guard(url, guard);
        }
        if error.is_timeout() {
            return CrawlError::Timeout { url: url.clone() };
        }
        let message = root_cause(error);
        if error.is_connect() {
            CrawlError::Connect {
                url: url.clone(),
                message,
            }
        } else {
            CrawlError::Network {
                url: url.clone(),
                message,
            }
        }
    }

    /// True for errors that end the whole crawl rather than one URL.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            CrawlError::Client(_) | CrawlError::Sink(_) | CrawlError::InvalidPattern { .. }
        )
    }

    /// The kind of failure, for per-kind counts in [`CrawlStats::errors`](crate::CrawlStats).
    pub fn kind(&self) -> ErrorKind {
        match self {
            CrawlError::Client(_) | CrawlError::Sink(_) | CrawlError::InvalidPattern { .. } => {
                ErrorKind::Fatal
            }
            CrawlError::InvalidUrl { .. }
            | CrawlError::UnsupportedScheme { .. }
            | CrawlError::BadRedirect { .. } => ErrorKind::InvalidUrl,
            CrawlError::RefusedAddress { .. } => ErrorKind::RefusedAddress,
            CrawlError::Dns { .. } => ErrorKind::Dns,
            CrawlError::Connect { .. } => ErrorKind::Connect,
            CrawlError::Timeout { .. } => ErrorKind::Timeout,
            CrawlError::Network { .. } => ErrorKind::Network,
            CrawlError::HttpStatus { status, .. } if *status >= 500 => ErrorKind::Http5xx,
            CrawlError::HttpStatus { status, .. } if *status == 429 => ErrorKind::Http429,
            CrawlError::HttpStatus { .. } => ErrorKind::Http4xx,
            CrawlError::TooManyRedirects { .. } | CrawlError::RedirectLoop { .. } => {
                ErrorKind::Redirects
            }
            CrawlError::TooLarge { .. } => ErrorKind::TooLarge,
            CrawlError::NotHtml { .. } => ErrorKind::NotHtml,
            CrawlError::RobotsUnavailable { .. } => ErrorKind::RobotsUnavailable,
            CrawlError::NotRendered { .. } => ErrorKind::NotRendered,
            CrawlError::Internal { .. } => ErrorKind::Internal,
        }
    }
}

/// Coarse classes of [`CrawlError`], small enough to show side by side on a progress bar
/// (`timeout 3, http-5xx 2`) and stable enough to store with a crawl run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The connect, read or total timeout expired (after retries).
    Timeout,
    /// The TCP or TLS connection failed.
    Connect,
    /// The host name did not resolve.
    Dns,
    /// Another transport error (reset, bad compression, ...).
    Network,
    /// The SSRF guard refused the address.
    RefusedAddress,
    /// A 4xx status other than 429.
    Http4xx,
    /// 429 Too Many Requests (after retries).
    Http429,
    /// A 5xx status (after retries).
    Http5xx,
    /// Too many redirects, or a redirect loop.
    Redirects,
    /// The body exceeded the cap.
    TooLarge,
    /// Not an HTML document (by type, sniffing, or binary content).
    NotHtml,
    /// robots.txt could not be fetched, so the origin is off limits.
    RobotsUnavailable,
    /// A URL that cannot be crawled (scheme, no host, bad redirect target).
    InvalidUrl,
    /// A page that needed JavaScript rendering and was not rendered.
    NotRendered,
    /// A crawler bug caught at run time.
    Internal,
    /// A crawl-ending error (client, sink, configuration).
    Fatal,
}

impl ErrorKind {
    /// A short, stable, lower-case name (`"timeout"`, `"http-5xx"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connect => "connect",
            ErrorKind::Dns => "dns",
            ErrorKind::Network => "network",
            ErrorKind::RefusedAddress => "refused-address",
            ErrorKind::Http4xx => "http-4xx",
            ErrorKind::Http429 => "http-429",
            ErrorKind::Http5xx => "http-5xx",
            ErrorKind::Redirects => "redirects",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::NotHtml => "not-html",
            ErrorKind::RobotsUnavailable => "robots-unavailable",
            ErrorKind::InvalidUrl => "invalid-url",
            ErrorKind::NotRendered => "not-rendered",
            ErrorKind::Internal => "internal",
            ErrorKind::Fatal => "fatal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The innermost cause of an error chain as a single line (`Connection refused (os error
/// 111)` rather than reqwest's `error sending request for url (...)`).
fn root_cause(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string().replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_single_lines_and_say_what_to_do() {
        let url = Url::parse("http://localhost/").unwrap();
        let err = CrawlError::RefusedAddress {
            url: url.clone(),
            ip: "127.0.0.1".parse().unwrap(),
            class: "loopback",
        };
        assert_eq!(
            err.to_string(),
            "refused private address 127.0.0.1 for http://localhost/ \
             (loopback; use --allow-private-addresses)"
        );
        let err = CrawlError::HttpStatus { url, status: 404 };
        assert_eq!(err.to_string(), "HTTP 404 Not Found for http://localhost/");
    }
}
