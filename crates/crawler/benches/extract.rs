//! Criterion benches of the crawler's per-page HTML work: parsing, and extraction of title,
//! main text and links.
//!
//! `cargo bench -p copytrace-crawler --bench extract` (add `-- chapters` for one group).
//!
//! Two page sets, each timed as a whole and counted in pages, so criterion's "thrpt" is pages
//! per second and its time divided by the page count is the cost of one page:
//!
//! * `fixtures`: the 50 hand-marked pages of `tests/fixtures/extract` (novel sites, news,
//!   blogs, WeChat, English fiction; decoded to UTF-8 beforehand);
//! * `chapters`: 200 chapter pages, 2 tables of contents and the home page of the site that
//!   `copytrace-bench crawl` serves (`crates/bench/src/crawl/site.rs`, shared through
//!   `#[path]`), the pages whose extraction bounds the crawl benchmark.
//!
//! In each set:
//!
//! * `tokenize_html5gum`: the `html5gum` tokenizer alone, no tree: a floor for any
//!   spec-compliant HTML reading;
//! * `parse`: `scraper::Html::parse_document` (html5ever's tokenizer and tree builder);
//! * `extract`: [`extract::extract`], parse included: title, main text, links;
//! * `crawl_path`: what the crawler does with each page body: decode, parse once, title and
//!   main text ([`extract::title_and_text`]), classified links ([`links::discover_in`]);
//! * `crawl_path_auto`: the same and the rendering decision of `--render auto`
//!   ([`render::needs_rendering`]), the default: the difference with `crawl_path` is what the
//!   decision costs the static path;
//! * `assess`: the decision alone, on documents parsed beforehand.
//!
//! A third set, `ad_site`, is the news site of `copytrace-bench crawl-ads`
//! (`crates/bench/src/crawl/ads_site.rs`): 300 articles with their list and tag pages, every
//! page with jQuery and four to seven inline ad and analytics scripts, none writing text.

use std::hint::black_box;
use std::path::Path;

use copytrace_crawler::decode::decode_html;
use copytrace_crawler::extract;
use copytrace_crawler::links;
use copytrace_crawler::render::{self, RenderMode};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use url::Url;

#[allow(dead_code, missing_docs)]
#[path = "../../bench/src/corpus.rs"]
mod corpus;

// Its tests, compiled out here, leave their imports unused under `cargo bench`.
#[allow(dead_code, missing_docs, unused_imports)]
#[path = "../../bench/src/crawl/site.rs"]
mod site;

#[allow(dead_code, missing_docs)]
#[path = "../../bench/src/crawl/ads_site.rs"]
mod ads_site;

/// One page: its raw bytes, the decoded text and its URL.
struct Page {
    bytes: Vec<u8>,
    html: String,
    url: Url,
}

fn fixture_pages() -> Vec<Page> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/extract");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "html"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).expect("fixture page");
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("UTF-8 name");
            let url = Url::parse(&format!("http://fixtures.example/{name}")).expect("URL");
            let html = decode_html(&bytes, None, Some(&url)).0;
            Page { bytes, html, url }
        })
        .collect()
}

fn site_pages() -> Vec<Page> {
    let site = site::Site::new(200, 100).expect("site");
    let base = Url::parse("http://127.0.0.1:8080/").expect("URL");
    site.pages()
        .into_iter()
        .map(|page| {
            let html = site.render(page);
            Page {
                bytes: html.clone().into_bytes(),
                url: base.join(&site.path(page)).expect("URL"),
                html,
            }
        })
        .collect()
}

fn ad_site_pages() -> Vec<Page> {
    let site = ads_site::AdSite::new(300, false);
    let base = Url::parse("http://127.0.0.1:8080/").expect("URL");
    let mut paths: Vec<&String> = site.pages.keys().collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let html = site.pages[path].clone();
            Page {
                bytes: html.clone().into_bytes(),
                url: base.join(path).expect("URL"),
                html,
            }
        })
        .collect()
}

fn tokenize(html: &str) -> usize {
    html5gum::Tokenizer::new(html)
        .filter(|token| token.is_ok())
        .count()
}

fn crawl_path(page: &Page) -> usize {
    let (html, _) = decode_html(&page.bytes, Some("text/html"), Some(&page.url));
    let doc = scraper::Html::parse_document(&html);
    let (_, text) = extract::title_and_text(&doc);
    let links = links::discover_in(&doc, &page.url);
    text.len() + links.len()
}

fn crawl_path_auto(page: &Page) -> usize {
    let (html, _) = decode_html(&page.bytes, Some("text/html"), Some(&page.url));
    let doc = scraper::Html::parse_document(&html);
    let (_, text) = extract::title_and_text(&doc);
    let links = links::discover_in(&doc, &page.url);
    let render = render::needs_rendering(RenderMode::Auto, &doc, &text, links.len());
    text.len() + links.len() + usize::from(render)
}

fn bench_set(c: &mut Criterion, name: &str, pages: &[Page]) {
    let bytes: usize = pages.iter().map(|p| p.html.len()).sum();
    println!(
        "{name}: {} pages, mean {:.1} KB of UTF-8",
        pages.len(),
        bytes as f64 / pages.len() as f64 / 1000.0
    );
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(pages.len() as u64));
    group.sample_size(20);
    group.bench_function("tokenize_html5gum", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| tokenize(black_box(&p.html)))
                .sum::<usize>()
        })
    });
    group.bench_function("parse", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| {
                    scraper::Html::parse_document(black_box(&p.html))
                        .tree
                        .nodes()
                        .count()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("extract", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| extract::extract(black_box(&p.html), &p.url).text.len())
                .sum::<usize>()
        })
    });
    group.bench_function("crawl_path", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| crawl_path(black_box(p)))
                .sum::<usize>()
        })
    });
    group.bench_function("crawl_path_auto", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| crawl_path_auto(black_box(p)))
                .sum::<usize>()
        })
    });
    let docs: Vec<(scraper::Html, String, usize)> = pages
        .iter()
        .map(|p| {
            let doc = scraper::Html::parse_document(&p.html);
            let (_, text) = extract::title_and_text(&doc);
            let links = links::discover_in(&doc, &p.url).len();
            (doc, text, links)
        })
        .collect();
    let rendered = docs
        .iter()
        .filter(|(doc, text, links)| render::needs_rendering(RenderMode::Auto, doc, text, *links))
        .count();
    println!(
        "{name}: {rendered} of {} pages go to the browser",
        pages.len()
    );
    group.bench_function("assess", |b| {
        b.iter(|| {
            docs.iter()
                .filter(|(doc, text, links)| {
                    render::needs_rendering(RenderMode::Auto, black_box(doc), text, *links)
                })
                .count()
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_set(c, "fixtures", &fixture_pages());
    bench_set(c, "chapters", &site_pages());
    bench_set(c, "ad_site", &ad_site_pages());
}

criterion_group!(extract_benches, benches);
criterion_main!(extract_benches);
