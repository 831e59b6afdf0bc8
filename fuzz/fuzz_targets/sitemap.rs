//! Arbitrary bytes → `sitemap::parse`, plain and gzip-compressed:
//!
//! * every URL listed is an absolute `http`/`https` URL without a fragment, at most
//!   `MAX_SITEMAP_URLS` per list, and parsing is deterministic;
//! * the byte limit is a prefix: `parse(bytes, m)` reads what `parse(&bytes[..m], ∞)` reads;
//! * the gzip path reads what the plain path reads: `parse(gzip(bytes), m)` equals
//!   `parse(bytes, m)` (the limit counts decompressed bytes), and a truncated gzip stream
//!   gives what was decompressed before the cut, never a panic.
#![no_main]

use std::io::Write;

use copytrace_crawler::sitemap::{MAX_SITEMAP_URLS, Sitemap, parse};
use flate2::Compression;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;

fn check(sitemap: &Sitemap) {
    for url in sitemap.pages.iter().chain(&sitemap.sitemaps) {
        assert!(matches!(url.scheme(), "http" | "https"), "{url}");
        assert!(url.fragment().is_none(), "{url} has a fragment");
    }
    assert!(sitemap.pages.len() <= MAX_SITEMAP_URLS);
    assert!(sitemap.sitemaps.len() <= MAX_SITEMAP_URLS);
}

fuzz_target!(|data: &[u8]| {
    let (head, bytes) = data.split_at(data.len().min(2));
    let limit = usize::from(u16::from_le_bytes([
        head.first().copied().unwrap_or(0),
        head.get(1).copied().unwrap_or(0),
    ]));

    let whole = parse(bytes, usize::MAX);
    check(&whole);
    assert_eq!(parse(bytes, usize::MAX), whole, "parsing is deterministic");
    let limited = parse(bytes, limit);
    check(&limited);
    if bytes.starts_with(&[0x1f, 0x8b]) {
        // Already "gzip": the plain-text comparisons below would not hold.
        return;
    }
    assert_eq!(
        limited,
        parse(&bytes[..bytes.len().min(limit)], usize::MAX),
        "the byte limit is not a prefix"
    );

    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).expect("in memory");
    let gzip = encoder.finish().expect("in memory");
    assert_eq!(parse(&gzip, usize::MAX), whole, "gzip path differs");
    assert_eq!(
        parse(&gzip, limit),
        limited,
        "gzip path differs under a limit"
    );
    let cut = parse(&gzip[..gzip.len() * 2 / 3], usize::MAX);
    check(&cut);
});
