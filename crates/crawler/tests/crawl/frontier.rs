//! The frontier: link depth, breadth-first order, page limits, each URL fetched once, redirects.

use copytrace_crawler::{CrawlConfig, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

/// Eight pages: `/` → `/1a`, `/1b` (and an off-site link); `/1a` → `/2aa`, `/2ab`; `/1b` →
/// `/2ba`, `/2bb`; every level-2 page → `/3x`. Level-1 pages also link home and to a fragment.
fn tree_site(server: &TestServer) {
    server.page(
        "/",
        &html_page("home", &["根"], &["/1a", "/1b", "http://other.example/x"]),
    );
    server.page(
        "/1a",
        &html_page("1a", &["一"], &["/2aa", "/2ab", "/", "#top"]),
    );
    server.page(
        "/1b",
        &html_page("1b", &["一"], &["/2ba", "/2bb", "/", "#top"]),
    );
    for path in ["/2aa", "/2ab", "/2ba", "/2bb"] {
        server.page(path, &html_page(path, &["二"], &["/3x"]));
    }
    server.page("/3x", &html_page("3x", &["三"], &[]));
}

#[tokio::test]
async fn link_following_stops_at_max_depth() {
    let server = TestServer::start().await;
    tree_site(&server);
    let config = CrawlConfig {
        max_depth: Some(1),
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(sink.urls(), ["/", "/1a", "/1b"]);
    assert_eq!(report.fetched, 3);
    // /2aa, /2ab, /2ba, /2bb were found but are too deep.
    assert_eq!(report.skipped, 4);
    assert!(server.requests().iter().all(|p| !p.starts_with("/2")));
    for page in &sink.pages {
        let expected = if page.url.path() == "/" { 0 } else { 1 };
        assert_eq!(page.depth, expected, "{}", page.url);
    }
}

#[tokio::test]
async fn link_following_is_breadth_first_and_stops_at_max_pages() {
    let server = TestServer::start().await;
    tree_site(&server);
    let config = CrawlConfig {
        max_pages: 4,
        concurrency: 1,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(report.fetched, 4);
    let pages: Vec<&str> = sink.pages.iter().map(|p| p.url.path()).collect();
    assert_eq!(pages, ["/", "/1a", "/1b", "/2aa"]);
    let page_requests = server
        .requests()
        .into_iter()
        .filter(|p| p != "/robots.txt")
        .count();
    assert_eq!(page_requests, 4);
    // Left in the queue when the budget ran out: /2ab, /2ba, /2bb, /3x.
    assert_eq!(report.skipped, 4, "{report:?}");
}

#[tokio::test]
async fn every_url_is_fetched_once_and_off_site_links_are_ignored() {
    let server = TestServer::start().await;
    tree_site(&server);
    let config = CrawlConfig {
        concurrency: 4,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(
        &config,
        &[server.url("/"), server.url("/#again")],
        &mut sink,
    )
    .await
    .unwrap();
    let requests = server.requests();
    let mut unique = requests.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), requests.len(), "{requests:?}");
    assert_eq!(report.fetched, 8, "{:?}", sink.urls());
    assert!(report.failures.is_empty(), "{:?}", report.failures);
}

#[tokio::test]
async fn redirects_are_followed_and_the_target_is_not_fetched_again() {
    let server = TestServer::start().await;
    server
        .page("/", &html_page("home", &["首页"], &["/old", "/new"]))
        .route("/old", Route::redirect(301, "/new#frag"))
        .page("/new", &html_page("new", &["新页面"], &[]));
    let config = CrawlConfig {
        concurrency: 1,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(report.fetched, 2, "{report:?}");
    let page = sink.page(&server.url("/old"));
    assert_eq!(page.url, server.url("/new"));
    assert_eq!(page.status, 200);
    assert_eq!(server.times_requested("/new"), 1);
}

#[tokio::test]
async fn a_failing_sink_stops_the_crawl() {
    struct Failing;
    #[async_trait::async_trait]
    impl copytrace_crawler::PageSink for Failing {
        async fn page(
            &mut self,
            _page: copytrace_crawler::FetchedPage,
        ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
            Err("database is gone".into())
        }
    }
    let server = TestServer::start().await;
    tree_site(&server);
    let err = crawl(&local_config(), &[server.url("/")], &mut Failing)
        .await
        .unwrap_err();
    assert!(
        matches!(err, copytrace_crawler::CrawlError::Sink(_)),
        "{err}"
    );
    assert_eq!(err.to_string(), "page sink failed");
}
