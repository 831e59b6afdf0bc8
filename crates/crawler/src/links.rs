//! Link discovery with a sense of what a link is for: the next page of the same chapter or
//! list, a chapter of a novel, or anything else.
//!
//! Piracy sites split long chapters over several pages (`1234.html`, `1234_2.html`, ...) and
//! long chapter lists too (`第2页`). A crawl limited to two levels from a novel's index would
//! stop in the middle of a chapter if every page link counted as a level, and a crawl with a
//! page budget would spend it on the site's navigation before reaching the chapters. So
//! [`discover`] classifies each link ([`LinkKind`]):
//!
//! * [`LinkKind::NextPage`]: `rel="next"`, or an anchor reading `下一页`, `下页`, `第3页`,
//!   `next`, `»`, or a bare page number (`2`, `[3]`), **and** pointing into the same series as
//!   the page it is on (same path with another query, same directory, or a sub-path of a
//!   directory-style URL). The crawl treats such a link as a continuation of the page: it keeps
//!   the page's depth, up to [`CrawlConfig::max_page_chain`](crate::CrawlConfig) pages in a row.
//! * [`LinkKind::Chapter`]: an anchor reading `第十二章 …`, `第3回`, `Chapter 7`, `下一章`,
//!   `上一章`, or one of at least [`CHAPTER_LIST_MIN`] links with numeric file names in one
//!   directory (the numbered chapter list of an index page). Chapters are queued ahead of other
//!   links so that a page budget is spent on the novel; they count as a level as usual.
//! * [`LinkKind::Other`]: everything else, in document order.
//!
//! The rules read anchor text and URLs only; they never need the page's language or layout.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use scraper::Html;
use url::Url;

use crate::extract::{base_url, elements_named, plain_attr};

/// What a link leads to, as far as the crawl order cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// The next page of the same document or list (pagination).
    NextPage,
    /// A chapter of a serialised work (from a chapter list or a next/previous-chapter link).
    Chapter,
    /// Any other link.
    Other,
}

/// One discovered link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Absolute `http`/`https` URL without fragment.
    pub url: Url,
    /// What it leads to.
    pub kind: LinkKind,
}

/// How many numerically named links in one directory make a chapter list.
pub const CHAPTER_LIST_MIN: usize = 8;

/// Anchor texts that mean "next page" (the text is trimmed and lower-cased first).
static NEXT_PAGE_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:下一页|下页|后一页|后页|下一頁|下頁|後一頁|後頁|下一分页|next(?:\s*page)?|[>›»→]+|next\s*[>›»→]+)$|^(?:\[|【)?第?\s*\d{1,4}\s*(?:页|頁)?(?:\]|】)?$",
    )
    .expect("regex")
});

/// Anchor texts of chapter links: chapter headings and next/previous-chapter links.
static CHAPTER_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:第\s*[0-9０-９零〇一二三四五六七八九十百千万两]+\s*[章回节節卷集话話篇幕]|(?:chapter|ch\.?)\s*\d+|下一章|上一章|下一回|上一回|下一节|上一节|next\s+chapter|previous\s+chapter|prev\s+chapter)",
    )
    .expect("regex")
});

/// File names of numbered chapters: `123.html`, `123`, `123/`, `123.php`.
static NUMBERED_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+(?:_\d+)?(?:\.(?:s?html?|php|asp|aspx|jsp))?$").expect("regex")
});

/// Extracts and classifies the links of an HTML document. Relative links are resolved against
/// `<base href>` if present, else against `page`. Links are deduplicated (first occurrence
/// wins, but a later, more specific kind upgrades an earlier `Other`).
pub fn discover(html: &str, page: &Url) -> Vec<Link> {
    let doc = crate::extract::parse_html(html);
    discover_in(&doc, page)
}

/// [`discover`] on an already parsed document.
pub fn discover_in(doc: &Html, page: &Url) -> Vec<Link> {
    let base = base_url(doc, page);

    let mut links: Vec<Link> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for el in elements_named(doc, &["a", "area", "link"]) {
        let element = el.value();
        let Some(href) = plain_attr(element, "href") else {
            continue;
        };
        let rel = plain_attr(element, "rel")
            .unwrap_or_default()
            .to_ascii_lowercase();
        let rel_next = rel.split_ascii_whitespace().any(|r| r == "next");
        if element.name() == "link" && !rel_next {
            // <link> elements are stylesheets, icons, feeds...: only rel=next is a page.
            continue;
        }
        let Ok(mut url) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            continue;
        }
        url.set_fragment(None);
        let text = anchor_text(&el.text().collect::<String>(), plain_attr(element, "title"));
        let kind = classify(&text, rel_next, page, &url);
        match index.get(url.as_str()) {
            Some(&i) => {
                if links[i].kind == LinkKind::Other {
                    links[i].kind = kind;
                }
            }
            None => {
                index.insert(url.as_str().to_owned(), links.len());
                links.push(Link { url, kind });
            }
        }
    }
    mark_numbered_chapter_lists(&mut links, page);
    links
}

/// The trimmed, whitespace-collapsed text of an anchor, or its `title` when it has no text
/// (image links).
fn anchor_text(text: &str, title: Option<&str>) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        title.unwrap_or_default().trim().to_owned()
    } else {
        collapsed
    }
}

fn classify(text: &str, rel_next: bool, page: &Url, link: &Url) -> LinkKind {
    if CHAPTER_TEXT.is_match(text) {
        return LinkKind::Chapter;
    }
    let lower = text.to_lowercase();
    if (rel_next || NEXT_PAGE_TEXT.is_match(&lower)) && same_series(page, link) {
        return LinkKind::NextPage;
    }
    LinkKind::Other
}

/// Whether `link` plausibly continues `page`: same host and port, not the page itself, and the
/// same path (another query), the same directory, or a path below a directory-style page URL.
pub(crate) fn same_series(page: &Url, link: &Url) -> bool {
    if page.host_str() != link.host_str()
        || page.port_or_known_default() != link.port_or_known_default()
    {
        return false;
    }
    if page.path() == link.path() {
        return page.query() != link.query();
    }
    let dir = |path: &str| path.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned();
    dir(page.path()) == dir(link.path())
        || (page.path().ends_with('/') && link.path().starts_with(page.path()))
}

/// Marks as chapters the `Other` links with numeric file names when at least
/// [`CHAPTER_LIST_MIN`] of them share a directory on the page's host.
fn mark_numbered_chapter_lists(links: &mut [Link], page: &Url) {
    let mut by_dir: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, link) in links.iter().enumerate() {
        if link.kind != LinkKind::Other || link.url.host_str() != page.host_str() {
            continue;
        }
        let path = link.url.path();
        let trimmed = path.strip_suffix('/').unwrap_or(path);
        let Some((dir, file)) = trimmed.rsplit_once('/') else {
            continue;
        };
        if NUMBERED_FILE.is_match(file) {
            by_dir.entry(dir.to_owned()).or_default().push(i);
        }
    }
    let chapters: HashSet<usize> = by_dir
        .into_values()
        .filter(|members| members.len() >= CHAPTER_LIST_MIN)
        .flatten()
        .collect();
    for i in chapters {
        links[i].kind = LinkKind::Chapter;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(html: &str, page: &str) -> Vec<(String, LinkKind)> {
        discover(html, &Url::parse(page).unwrap())
            .into_iter()
            .map(|l| (l.url.to_string(), l.kind))
            .collect()
    }

    #[test]
    fn next_page_links_of_a_split_chapter_are_recognised() {
        let html = r#"<div class="page">
            <a href="/book/7/1234.html">1</a> <a href="/book/7/1234_2.html">2</a>
            <a href="/book/7/1234_2.html">下一页</a>
            <a href="/book/7/1235.html">下一章</a>
            <a href="/book/7/">目录</a>
            <a href="/top.html">下一页</a></div>"#;
        let found = kinds(html, "http://x.cn/book/7/1234.html");
        assert_eq!(
            found,
            [
                ("http://x.cn/book/7/1234.html".into(), LinkKind::Other),
                ("http://x.cn/book/7/1234_2.html".into(), LinkKind::NextPage),
                ("http://x.cn/book/7/1235.html".into(), LinkKind::Chapter),
                ("http://x.cn/book/7/".into(), LinkKind::Other),
                // "Next page" text, but another directory: not this document's next page.
                ("http://x.cn/top.html".into(), LinkKind::Other),
            ]
        );
    }

    #[test]
    fn page_numbers_rel_next_and_query_pagination_are_next_pages() {
        let html = r#"<head><link rel="next" href="?page=2"><link rel="stylesheet" href="/s.css">
            </head><body><a href="?page=3">第3页</a><a href="list?page=4">[4]</a>
            <a href="/list?page=5">Next »</a><a href="/other?page=6">6</a></body>"#;
        let found = kinds(html, "http://x.cn/list?page=1");
        assert_eq!(
            found,
            [
                ("http://x.cn/list?page=2".into(), LinkKind::NextPage),
                ("http://x.cn/list?page=3".into(), LinkKind::NextPage),
                ("http://x.cn/list?page=4".into(), LinkKind::NextPage),
                ("http://x.cn/list?page=5".into(), LinkKind::NextPage),
                // Same directory ("/"), so a bare number there counts as a page too.
                ("http://x.cn/other?page=6".into(), LinkKind::NextPage),
            ]
        );
    }

    #[test]
    fn chapter_headings_and_numbered_chapter_lists_are_chapters() {
        let mut html = String::from(
            r#"<a href="/b/1/a.html">第一章 风起</a><a href="/b/1/b.html">第12回 云涌</a>
               <a href="/b/1/c.html">Chapter 3: Rain</a><a href="/news/1.html">新闻</a>"#,
        );
        for i in 100..100 + CHAPTER_LIST_MIN {
            html.push_str(&format!("<a href=\"/b/2/{i}.html\">风起云涌 {i}</a>"));
        }
        let found = discover(&html, &Url::parse("http://x.cn/b/1/").unwrap());
        let chapters = found.iter().filter(|l| l.kind == LinkKind::Chapter).count();
        assert_eq!(chapters, 3 + CHAPTER_LIST_MIN, "{found:?}");
        let news = found
            .iter()
            .find(|l| l.url.path() == "/news/1.html")
            .unwrap();
        assert_eq!(news.kind, LinkKind::Other);
    }

    #[test]
    fn a_few_numbered_links_are_not_a_chapter_list() {
        let html = r#"<a href="/n/1.html">a</a><a href="/n/2.html">b</a><a href="/n/3.html">c</a>"#;
        assert!(
            kinds(html, "http://x.cn/")
                .iter()
                .all(|(_, kind)| *kind == LinkKind::Other)
        );
    }

    #[test]
    fn links_are_resolved_deduplicated_and_filtered() {
        let html = r#"<base href="http://x.cn/m/"><a href="a.html#x">A</a><a href="a.html">下一页</a>
            <a href="mailto:a@b.c">m</a><a href="javascript:void(0)">j</a><a href="//y.cn/">y</a>"#;
        let found = kinds(html, "http://x.cn/m/index.html");
        assert_eq!(
            found,
            [
                // Upgraded from Other by the later "next page" anchor.
                ("http://x.cn/m/a.html".into(), LinkKind::NextPage),
                ("http://y.cn/".into(), LinkKind::Other),
            ]
        );
    }

    #[test]
    fn series_membership() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_series(
            &u("http://x.cn/a/1.html"),
            &u("http://x.cn/a/1_2.html")
        ));
        assert!(same_series(
            &u("http://x.cn/a/1.html"),
            &u("http://x.cn/a/1.html?p=2")
        ));
        assert!(same_series(
            &u("http://x.cn/list/"),
            &u("http://x.cn/list/2/")
        ));
        assert!(!same_series(
            &u("http://x.cn/a/1.html"),
            &u("http://x.cn/a/1.html")
        ));
        assert!(!same_series(
            &u("http://x.cn/a/1.html"),
            &u("http://x.cn/b/1_2.html")
        ));
        assert!(!same_series(
            &u("http://x.cn/a/1.html"),
            &u("http://y.cn/a/1_2.html")
        ));
    }
}
