//! Arbitrary text → `Url::parse` (alone and joined to a page URL, as links are) →
//! `urls::normalize`:
//!
//! * normalizing is idempotent: `normalize(normalize(u)) == normalize(u)`, and for http(s)
//!   URLs (the only ones the crawler normalizes) also after a round trip through the URL's
//!   text (stored pages are compared by it);
//! * the result has no fragment, no empty query, no empty query pair, no tracking or session
//!   parameter, and its query pairs are sorted;
//! * scheme, port and host (without trailing dots, as the scheme reads it) are kept.
#![no_main]

use copytrace_crawler::urls::{is_tracking_param, normalize};
use libfuzzer_sys::fuzz_target;
use url::Url;

/// Percent-decoding enough to see a parameter name as `normalize` does.
fn decoded(name: &str) -> String {
    url::form_urlencoded::parse(name.as_bytes())
        .next()
        .map(|(name, _)| name.into_owned())
        .unwrap_or_default()
}

fn check(url: &Url) {
    let normalized = normalize(url);
    assert_eq!(
        normalize(&normalized),
        normalized,
        "not idempotent for {url}"
    );
    // The crawler normalizes only the http(s) URLs it fetches. For a URL of another scheme
    // without a host, the `url` crate's `set_path` can leave a path starting with `//` that
    // its text then reads as a host, so only idempotence is asked of those.
    if matches!(url.scheme(), "http" | "https") {
        let reparsed = Url::parse(normalized.as_str()).expect("a normalized URL parses");
        assert_eq!(
            normalize(&reparsed),
            normalized,
            "not stable through its text: {url}"
        );
    }

    assert!(
        normalized.fragment().is_none(),
        "{normalized} has a fragment"
    );
    assert_eq!(normalized.scheme(), url.scheme());
    assert_eq!(normalized.port(), url.port());
    // The host without its trailing dots, as the URL's scheme reads it (`1..` without its dots
    // is the IPv4 address `0.0.0.1`); a name of dots only stays as it is.
    let trimmed = url
        .host_str()
        .map(|h| h.trim_end_matches('.'))
        .unwrap_or_default();
    if !trimmed.is_empty()
        && let Ok(expected) = Url::parse(&format!("{}://{trimmed}/", url.scheme()))
    {
        assert_eq!(normalized.host_str(), expected.host_str(), "host of {url}");
    }
    if let Some(query) = normalized.query() {
        assert!(!query.is_empty(), "empty query kept: {normalized}");
        let pairs: Vec<&str> = query.split('&').collect();
        assert!(
            pairs.iter().all(|p| !p.is_empty()),
            "empty pair: {normalized}"
        );
        assert!(pairs.is_sorted(), "unsorted query: {normalized}");
        for pair in pairs {
            let name = pair.split('=').next().unwrap_or_default();
            // `normalize` decodes `%XX` only; `+` stays what it is in the name.
            let name = decoded(&name.replace('+', "%2B"));
            assert!(
                !is_tracking_param(&name),
                "tracking parameter kept: {normalized}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(url) = Url::parse(&text) {
        check(&url);
    }
    let base = Url::parse("http://novel.example.cn/book/1/2.html?x=1").expect("valid URL");
    if let Ok(url) = base.join(&text) {
        check(&url);
    }
});
