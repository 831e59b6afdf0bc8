//! Pages hostile to parsing rather than to fetching: deep nesting, a hundred thousand elements,
//! tags never closed, one enormous line, lying and invalid encodings, and a tarpit that trickles
//! bytes. None may crash the crawler or hold it past its timeouts; each page is stored with its
//! readable text or refused for a stated reason.

use std::time::{Duration, Instant};

use copytrace_crawler::{CrawlConfig, crawl};

use crate::helpers::{Recorder, Route, TestServer, gbk, html_page, local_config};

const SENTENCE: &str = "深处的这一段文字仍然应当被读到并且保存下来。";

/// How much larger than in `./scripts/test` the pages are: `COPYTRACE_HOSTILE_SCALE` (the
/// nightly long mode sets 3; larger pages would pass the 8 MiB body cap and be refused whole).
fn scale() -> usize {
    std::env::var("COPYTRACE_HOSTILE_SCALE")
        .ok()
        .map(|n| n.parse().expect("COPYTRACE_HOSTILE_SCALE is a number"))
        .unwrap_or(1)
}

fn hostile_pages(server: &TestServer) -> Vec<&'static str> {
    let depth = 100_000 * scale();
    server.route(
        "/deep.html",
        Route::html(format!(
            "<html><body>{}<p>{SENTENCE}</p>{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        )),
    );
    // A hundred thousand elements, one character each, spelling the sentence again and again.
    let letters: Vec<char> = SENTENCE.chars().collect();
    let elements: String = (0..100_000 * scale())
        .map(|i| {
            format!(
                "<span class=\"c{}\">{}</span>",
                i % 7,
                letters[i % letters.len()]
            )
        })
        .collect();
    server.route(
        "/wide.html",
        Route::html(format!(
            "<html><body><p>{SENTENCE}</p><div>{elements}</div></body></html>"
        )),
    );
    server.route(
        "/unclosed.html",
        Route::html(format!(
            "<html><body><p>{SENTENCE}{}",
            "<b><i><u><font><a href=x>".repeat(20_000 * scale())
        )),
    );
    // Six megabytes of one line without a tag, under the 8 MiB body cap.
    server.route(
        "/line.html",
        Route::html(format!(
            "<html><body><p>{SENTENCE}{}</p></body></html>",
            "字".repeat(2_000_000)
        )),
    );
    // The header says UTF-8, the bytes are GBK.
    server.route(
        "/lying-header.html",
        Route::with_type(
            "text/html; charset=utf-8",
            gbk(&html_page("谎报的编码", &[SENTENCE], &[])),
        ),
    );
    // The page says Big5, the bytes are UTF-8; the header says nothing.
    server.route(
        "/lying-meta.html",
        Route::with_type(
            "text/html",
            format!(
                "<html><head><meta charset=\"big5\"></head><body><p>{SENTENCE}</p></body></html>"
            ),
        ),
    );
    // Invalid UTF-8 sequences among the text.
    let mut invalid = format!("<html><body><p>{SENTENCE}</p><p>").into_bytes();
    invalid.extend_from_slice(&[0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xf8, 0x88]);
    invalid.extend_from_slice("乱码之后</p></body></html>".as_bytes());
    server.route("/invalid.html", Route::html(invalid));
    server.route("/tarpit.html", Route::trickled(Duration::from_millis(100)));
    vec![
        "/deep.html",
        "/wide.html",
        "/unclosed.html",
        "/line.html",
        "/lying-header.html",
        "/lying-meta.html",
        "/invalid.html",
        "/tarpit.html",
    ]
}

#[tokio::test]
async fn pages_built_to_break_a_parser_are_stored_or_refused_within_the_timeouts() {
    crawl_pages_built_to_break_a_parser().await;
}

/// The test's crawl and checks, also run by the `hostile_memory` test for its memory bound.
pub async fn crawl_pages_built_to_break_a_parser() {
    let server = TestServer::start().await;
    let paths = hostile_pages(&server);
    server.page("/", &html_page("首页", &["入口"], &paths));
    let config = CrawlConfig {
        request_timeout: Duration::from_secs(2),
        max_retries: 0,
        max_depth: Some(1),
        ..local_config()
    };
    let mut sink = Recorder::default();
    let started = Instant::now();
    let report = tokio::time::timeout(
        Duration::from_secs(120),
        crawl(&config, &[server.url("/")], &mut sink),
    )
    .await
    .expect("the crawl finished instead of stalling")
    .unwrap();
    let took = started.elapsed();

    // The tarpit was cut by the request timeout, once.
    assert_eq!(
        sink.failure(&server.url("/tarpit.html")),
        format!("timed out fetching {}", server.url("/tarpit.html"))
    );
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    // Every other page was stored with its text readable.
    for path in &paths[..paths.len() - 1] {
        let page = sink.page(&server.url(path));
        assert!(
            page.text.contains(SENTENCE) || *path == "/lying-header.html",
            "{path}: {:?}",
            page.text.chars().take(80).collect::<String>()
        );
    }
    assert!(
        sink.page(&server.url("/invalid.html"))
            .text
            .contains("乱码之后")
    );
    assert!(
        sink.page(&server.url("/line.html")).text.chars().count() > 2_000_000,
        "the long line was kept whole"
    );
    eprintln!("hostile pages crawled in {took:?}");
}
