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
        matches!(self, CrawlError::Client(_) | CrawlError::Sink(_))
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
