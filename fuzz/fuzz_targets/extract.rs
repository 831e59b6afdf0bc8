//! Arbitrary HTML (lossy UTF-8) → main-text, title and link extraction, and link discovery,
//! against one of a few page URLs:
//!
//! * extraction is deterministic (a second parse gives the same result) and `title_and_text`
//!   agrees with `extract`;
//! * the text is paragraphs joined by `'\n'`, each non-empty and trimmed, and holds no more
//!   characters than the HTML (extraction only drops, decodes and collapses);
//! * a title is non-empty, trimmed and on one line;
//! * links are absolute `http`/`https` URLs with a host and no fragment, without repeats, and
//!   each is also found by `links::discover`, whose links obey the same rules.
#![no_main]

use std::collections::HashSet;

use copytrace_crawler::extract::{extract, extract_document, title_and_text};
use copytrace_crawler::links::{discover, discover_in};
use libfuzzer_sys::fuzz_target;
use scraper::Html;
use url::Url;

const PAGES: [&str; 4] = [
    "http://novel.example.cn/book/1/2.html",
    "https://example.com/",
    "http://127.0.0.1:8080/a/b/?page=2#top",
    "https://xn--fiqs8s.example/%E7%AB%A0/",
];

fn check_url(url: &Url) {
    assert!(matches!(url.scheme(), "http" | "https"), "{url}");
    assert!(url.host().is_some(), "{url} has no host");
    assert!(url.fragment().is_none(), "{url} has a fragment");
}

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let page = Url::parse(PAGES[usize::from(head.first().copied().unwrap_or(0)) % PAGES.len()])
        .expect("valid URL");
    let html = String::from_utf8_lossy(rest);

    let extracted = extract(&html, &page);
    let doc = Html::parse_document(&html);
    assert_eq!(
        extract_document(&doc, &page),
        extracted,
        "extraction is deterministic"
    );
    assert_eq!(
        title_and_text(&doc),
        (extracted.title.clone(), extracted.text.clone()),
        "title_and_text differs from extract"
    );

    let text = &extracted.text;
    if !text.is_empty() {
        for paragraph in text.split('\n') {
            assert!(!paragraph.is_empty(), "empty paragraph in {text:?}");
            assert_eq!(paragraph.trim(), paragraph, "untrimmed paragraph");
        }
    }
    assert!(
        text.chars().count() <= html.chars().count(),
        "more text than HTML"
    );
    if let Some(title) = &extracted.title {
        assert!(
            !title.is_empty() && title.trim() == title,
            "title {title:?}"
        );
        assert!(!title.contains('\n'), "title on several lines: {title:?}");
    }

    let mut seen = HashSet::new();
    for url in &extracted.links {
        check_url(url);
        assert!(seen.insert(url.as_str()), "{url} listed twice");
    }
    let discovered = discover(&html, &page);
    assert_eq!(
        discover_in(&doc, &page),
        discovered,
        "discovery is deterministic"
    );
    let mut found = HashSet::new();
    for link in &discovered {
        check_url(&link.url);
        assert!(
            found.insert(link.url.as_str()),
            "{} discovered twice",
            link.url
        );
    }
    for url in &extracted.links {
        assert!(
            found.contains(url.as_str()),
            "{url} extracted but not discovered"
        );
    }
});
