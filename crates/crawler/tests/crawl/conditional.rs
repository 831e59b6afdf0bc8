//! Conditional re-fetches: validators from one crawl make the next one's requests conditional,
//! and a 304 is "not modified", not a failure.

use std::collections::HashMap;

use copytrace_crawler::{CrawlConfig, Validators, crawl};

use crate::helpers::{Logged, Recorder, Route, TestServer, html_page, local_config};

const LAST_MODIFIED: &str = "Wed, 21 Oct 2015 07:28:00 GMT";

fn header<'a>(req: &'a Logged, name: &str) -> Option<&'a str> {
    req.headers.get(name).and_then(|v| v.to_str().ok())
}

/// `/etag` answers 304 to `If-None-Match: "v1"`; `/dated` answers 304 to its own
/// `Last-Modified`; `/changed` has a new ETag now.
fn versioned_site(server: &TestServer) {
    server.page(
        "/",
        &html_page("home", &["首页"], &["/etag", "/dated", "/changed"]),
    );
    server.dynamic("/etag", |req| {
        if header(req, "if-none-match") == Some("\"v1\"") {
            Route::status(304)
        } else {
            Route::html(html_page("etag", &["带实体标签的页面"], &[])).header("etag", "\"v1\"")
        }
    });
    server.dynamic("/dated", |req| {
        if header(req, "if-modified-since") == Some(LAST_MODIFIED) {
            Route::status(304)
        } else {
            Route::html(html_page("dated", &["带修改时间的页面"], &[]))
                .header("last-modified", LAST_MODIFIED)
        }
    });
    server.dynamic("/changed", |req| {
        if header(req, "if-none-match") == Some("\"v2\"") {
            Route::status(304)
        } else {
            Route::html(html_page("changed", &["新版本"], &[])).header("etag", "\"v2\"")
        }
    });
}

#[tokio::test]
async fn validators_of_the_last_crawl_turn_unchanged_pages_into_not_modified() {
    let server = TestServer::start().await;
    versioned_site(&server);

    let mut first = Recorder::default();
    crawl(&local_config(), &[server.url("/")], &mut first)
        .await
        .unwrap();
    let etag = first.page(&server.url("/etag")).validators.clone();
    assert_eq!(etag.etag.as_deref(), Some("\"v1\""));
    assert_eq!(etag.last_modified, None);
    let dated = first.page(&server.url("/dated")).validators.clone();
    assert_eq!(dated.last_modified.as_deref(), Some(LAST_MODIFIED));
    assert!(
        server
            .log()
            .iter()
            .all(|l| header(l, "if-none-match").is_none())
    );

    let validators = HashMap::from([
        (server.url("/etag"), etag),
        // Stored under a different spelling of the same URL: still found.
        (server.url("/dated#top"), dated),
        (
            server.url("/changed"),
            Validators {
                etag: Some("\"v1\"".into()),
                last_modified: None,
            },
        ),
    ]);
    let config = CrawlConfig {
        validators,
        ..local_config()
    };
    let mut second = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut second)
        .await
        .unwrap();

    let mut not_modified: Vec<&str> = second.not_modified.iter().map(|u| u.path()).collect();
    not_modified.sort();
    assert_eq!(not_modified, ["/dated", "/etag"]);
    assert_eq!(report.stats.not_modified, 2);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(second.urls(), ["/", "/changed"]);
    assert_eq!(second.page(&server.url("/changed")).text, "新版本");
    assert_eq!(report.fetched, 2);
}

#[tokio::test]
async fn a_304_without_a_conditional_request_is_an_error() {
    let server = TestServer::start().await;
    server.route("/odd", Route::status(304));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/odd")], &mut sink)
        .await
        .unwrap();
    assert!(sink.not_modified.is_empty());
    assert!(sink.failure(&server.url("/odd")).starts_with("HTTP 304"));
    assert_eq!(report.stats.not_modified, 0);
}
