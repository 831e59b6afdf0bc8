//! When and how long to wait before trying a request again.
//!
//! Retried: timeouts, failed connections and other transport errors (a reset in the middle of a
//! body), and the statuses that mean "not now" — 408, 429, and 5xx except 501 and 505, which
//! mean "never". DNS failures, refused addresses and every other status are final.
//!
//! The wait is the server's `Retry-After` when it sent one (delta-seconds or an HTTP-date),
//! otherwise exponential backoff with jitter: `base × 2^attempt`, capped at `max`, then scaled
//! by a random factor in [0.5, 1) ("equal jitter"), so that many tasks failing together do not
//! come back together. A `Retry-After` longer than the configured cap is not waited out: the
//! request fails at once (waiting less than the server asked would only earn another 429).

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};

use crate::error::CrawlError;

/// Whether a status is worth retrying.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429) || ((500..600).contains(&status) && !matches!(status, 501 | 505))
}

/// Whether a transport error is worth retrying.
pub(crate) fn retryable_error(error: &CrawlError) -> bool {
    matches!(
        error,
        CrawlError::Timeout { .. } | CrawlError::Connect { .. } | CrawlError::Network { .. }
    )
}

/// The `Retry-After` header as a duration from `now`: delta-seconds (`120`) or an HTTP-date
/// (`Fri, 31 Dec 1999 23:59:59 GMT`; a date in the past means "now"). `None` when absent or
/// unparsable.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Exponential backoff with equal jitter for the `attempt`-th retry (0-based).
pub(crate) fn backoff(attempt: u32, base: Duration, max: Duration) -> Duration {
    let exponential = base.saturating_mul(2u32.saturating_pow(attempt.min(30)));
    let capped = exponential.min(max);
    capped.mul_f64(0.5 + fastrand::f64() * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers("3"), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(retry_after(&headers(" 0 "), now), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            retry_after(&headers(&later), now),
            Some(Duration::from_secs(90))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(retry_after(&headers(&past), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&headers("-5"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_grows_exponentially_within_its_jitter_band_and_is_capped() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        for _ in 0..50 {
            for (attempt, full) in [
                (0, 100),
                (1, 200),
                (2, 400),
                (3, 800),
                (4, 1000),
                (40, 1000),
            ] {
                let wait = backoff(attempt, base, max);
                let full = Duration::from_millis(full);
                assert!(wait >= full / 2 && wait < full, "{attempt}: {wait:?}");
            }
        }
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for status in [408, 429, 500, 502, 503, 504, 599] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [200, 301, 304, 400, 403, 404, 410, 501, 505] {
            assert!(!retryable_status(status), "{status}");
        }
    }
}
