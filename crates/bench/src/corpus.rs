//! Deterministic benchmark corpus: realistic Chinese prose built from the demo texts.
//!
//! The demo library and the unrelated demo pages (novels, news, an essay, a recipe) are cut into
//! paragraphs, and paragraphs are drawn by a fixed linear congruential generator until the
//! requested size is reached. The result is the same on every machine and every run, reads like
//! real prose (punctuation, quotes, digits, the odd Latin word) and does not repeat with a short
//! period, so window anchors and n-gram hashes behave as they do on real pages.
//!
//! This file is shared, through `#[path]`, by the `copytrace-bench` binary and the criterion
//! benches of `copytrace-fingerprint`, so both measure the same text.

const SOURCES: [&str; 8] = [
    include_str!("../../copytrace/demo/library/jianghu-ch1.txt"),
    include_str!("../../copytrace/demo/library/news-harbor.txt"),
    include_str!("../../copytrace/demo/library/xingchen-ch1.txt"),
    include_str!("../../copytrace/demo/library/xingchen-ch2.txt"),
    include_str!("../../copytrace/demo/unrelated/another-novel.txt"),
    include_str!("../../copytrace/demo/unrelated/cooking.txt"),
    include_str!("../../copytrace/demo/unrelated/essay-quote.txt"),
    include_str!("../../copytrace/demo/unrelated/tech-news.txt"),
];

/// The non-empty paragraphs of the demo texts, trimmed, in source order.
pub fn paragraphs() -> Vec<&'static str> {
    SOURCES
        .iter()
        .flat_map(|text| text.lines())
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect()
}

/// At least `min_bytes` bytes of UTF-8 Chinese prose, paragraphs separated by newlines.
pub fn chinese_prose(min_bytes: usize) -> String {
    let paragraphs = paragraphs();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut text = String::with_capacity(min_bytes + 4096);
    while text.len() < min_bytes {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let pick = (state >> 33) as usize % paragraphs.len();
        text.push_str(paragraphs[pick]);
        text.push('\n');
    }
    text
}
