//! Failures that must not stop a crawl: unreachable hosts, oversized and compressed bodies,
//! error statuses, non-HTML answers, redirect loops and slow servers.

use std::io::Write;
use std::time::Duration;

use copytrace_crawler::{CrawlConfig, CrawlFailure, ErrorKind, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

#[tokio::test]
async fn an_unreachable_host_is_a_failure_and_other_seeds_continue() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dead = url::Url::parse(&format!("http://127.0.0.1:{closed}/book/1.html")).unwrap();
    let server = TestServer::start().await;
    server.page("/", &html_page("home", &["首页"], &[]));

    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[dead.clone(), server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 1);
    assert_eq!(sink.urls(), ["/"]);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].url, dead.as_str());
    let reason = sink.failure(&dead);
    assert!(reason.contains(&format!("127.0.0.1:{closed}")), "{reason}");
    assert!(!reason.contains('\n'));
}

#[tokio::test]
async fn a_body_over_the_cap_fails_cleanly() {
    let server = TestServer::start().await;
    let big = format!("<html><body><p>{}</p></body></html>", "大".repeat(10_000));
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(b"<html><body><p>").unwrap();
    gzip.write_all(&vec![b'a'; 2_000_000]).unwrap();
    gzip.write_all(b"</p></body></html>").unwrap();
    let bomb = gzip.finish().unwrap();
    assert!(bomb.len() < 20_000);
    server
        .page(
            "/",
            &html_page("home", &["首页"], &["/big", "/bomb", "/small"]),
        )
        .page("/big", &big)
        .route(
            "/bomb",
            Route::html(bomb).header("content-encoding", "gzip"),
        )
        .page("/small", &html_page("small", &["小"], &[]));
    let config = CrawlConfig {
        max_body_bytes: 20_000,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(sink.urls(), ["/", "/small"]);
    for path in ["/big", "/bomb"] {
        let reason = sink.failure(&server.url(path));
        assert!(
            reason.contains("larger than 20000 bytes"),
            "{path}: {reason}"
        );
    }
    assert_eq!(report.failures.len(), 2);
}

#[tokio::test]
async fn a_gzip_page_under_the_cap_is_decompressed() {
    let server = TestServer::start().await;
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(html_page("gz", &["压缩的正文"], &[]).as_bytes())
        .unwrap();
    server.route(
        "/",
        Route::html(gzip.finish().unwrap()).header("content-encoding", "gzip"),
    );
    let mut sink = Recorder::default();
    crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(sink.page(&server.url("/")).text, "压缩的正文");
}

#[tokio::test]
async fn error_statuses_non_html_and_redirect_loops_are_failures() {
    let server = TestServer::start().await;
    server
        .page(
            "/",
            &html_page(
                "home",
                &["首页"],
                &[
                    "/missing",
                    "/broken",
                    "/file.pdf",
                    "/loop",
                    "/self",
                    "/chain/1",
                    "/blob",
                ],
            ),
        )
        .route("/broken", Route::status(500))
        .route("/file.pdf", Route::with_type("application/pdf", "%PDF-1.7"))
        .route("/blob", Route::untyped(vec![0u8, 1, 2, 3]))
        .route("/loop", Route::redirect(302, "/loop2"))
        .route("/loop2", Route::redirect(302, "/loop"))
        .route("/self", Route::redirect(301, "/self#again"));
    for i in 1..6 {
        server.route(
            &format!("/chain/{i}"),
            Route::redirect(302, &format!("/chain/{}", i + 1)),
        );
    }
    let config = CrawlConfig {
        max_redirects: 3,
        max_retries: 0,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(report.fetched, 1);
    let reason = |path: &str| sink.failure(&server.url(path)).to_owned();
    assert_eq!(
        reason("/missing"),
        format!("HTTP 404 Not Found for {}", server.url("/missing"))
    );
    assert!(reason("/broken").starts_with("HTTP 500 Internal Server Error"));
    assert!(reason("/file.pdf").starts_with("not HTML (application/pdf)"));
    assert!(reason("/blob").starts_with("not HTML (unknown)"));
    // A loop is recognised when it closes, not when the hop limit runs out.
    assert_eq!(
        reason("/loop"),
        format!(
            "redirect loop starting at {}: {} was already visited",
            server.url("/loop"),
            server.url("/loop")
        )
    );
    assert!(reason("/self").starts_with("redirect loop"));
    let requested = |prefix: &str| {
        server
            .requests()
            .iter()
            .filter(|p| p.starts_with(prefix))
            .count()
    };
    assert_eq!(requested("/loop"), 2);
    assert_eq!(requested("/self"), 1);
    // A chain without a loop stops at the limit: 1 request + 3 followed hops.
    assert!(reason("/chain/1").starts_with("more than 3 redirects"));
    assert_eq!(requested("/chain/"), 4);
    assert_eq!(report.failures.len(), 7);
    assert_eq!(report.stats.errors[&ErrorKind::Redirects], 3);
    assert_eq!(report.stats.errors[&ErrorKind::NotHtml], 2);
}

#[tokio::test]
async fn a_slow_page_times_out_and_the_crawl_goes_on() {
    let server = TestServer::start().await;
    server
        .page("/", &html_page("home", &["首页"], &["/slow", "/fast"]))
        .route(
            "/slow",
            Route::html("<p>late</p>").delayed(Duration::from_secs(10)),
        )
        .page("/fast", &html_page("fast", &["快"], &[]));
    let config = CrawlConfig {
        request_timeout: Duration::from_millis(500),
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(sink.urls(), ["/", "/fast"]);
    assert_eq!(
        sink.failure(&server.url("/slow")),
        format!("timed out fetching {}", server.url("/slow"))
    );
    assert_eq!(report.failures.len(), 1);
}

#[tokio::test]
async fn seeds_that_are_not_http_are_reported() {
    let seeds = [url::Url::parse("ftp://example.com/file").unwrap()];
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &seeds, &mut sink).await.unwrap();
    assert_eq!(report.fetched, 0);
    assert_eq!(
        report.failures,
        [CrawlFailure {
            url: "ftp://example.com/file".to_owned(),
            kind: ErrorKind::InvalidUrl,
            reason: "unsupported URL scheme in ftp://example.com/file (only http and https are \
                     crawled)"
                .to_owned()
        }]
    );
}
