//! robots.txt: disallowed paths, our own user agent's rules, missing and failing files,
//! Crawl-delay.

use copytrace_crawler::{CrawlConfig, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

#[tokio::test]
async fn robots_disallowed_paths_are_never_requested() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type(
                "text/plain",
                "User-agent: *\nDisallow: /secret\n\nUser-agent: OtherBot\nDisallow: /\n",
            ),
        )
        .page(
            "/",
            &html_page(
                "home",
                &["首页"],
                &["/public", "/secret/a", "/secret-b", "/redirect"],
            ),
        )
        .page("/public", &html_page("public", &["公开"], &[]))
        .page("/secret/a", &html_page("secret", &["秘密"], &[]))
        .page("/secret-b", &html_page("secret", &["秘密"], &[]))
        .route("/redirect", Route::redirect(302, "/secret/c"));

    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();

    let requests = server.requests();
    assert!(
        !requests.iter().any(|p| p.starts_with("/secret")),
        "disallowed paths were requested: {requests:?}"
    );
    assert_eq!(server.times_requested("/robots.txt"), 1, "{requests:?}");
    assert_eq!(sink.urls(), ["/", "/public"]);
    // /secret/a, /secret-b, and the redirect hop to /secret/c.
    assert_eq!(report.disallowed_by_robots, 3);
    assert_eq!(report.fetched, 2);
}

#[tokio::test]
async fn rules_for_our_own_user_agent_are_obeyed() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type("text/plain", "User-agent: copytracebot\nDisallow: /\n"),
        )
        .page("/", &html_page("home", &["首页"], &[]));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.disallowed_by_robots, 1);
    assert_eq!(server.requests(), ["/robots.txt"]);
}

#[tokio::test]
async fn a_missing_robots_txt_allows_everything() {
    let server = TestServer::start().await;
    server
        .page("/", &html_page("home", &["首页"], &["/a"]))
        .page("/a", &html_page("a", &["甲"], &[]));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 2);
    assert_eq!(report.disallowed_by_robots, 0);
}

#[tokio::test]
async fn a_robots_txt_server_error_disallows_the_whole_site() {
    let server = TestServer::start().await;
    server
        .route("/robots.txt", Route::status(503))
        .page("/", &html_page("home", &["首页"], &[]));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(server.requests(), ["/robots.txt"]);
    assert_eq!(report.fetched, 0);
    let reason = sink.failure(&server.url("/"));
    assert!(
        reason.contains("robots.txt") && reason.contains("503"),
        "{reason}"
    );
    assert_eq!(report.failures.len(), 1);
}

#[tokio::test]
async fn a_crawl_delay_spaces_requests_to_the_same_host() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type("text/plain", "User-agent: *\nCrawl-delay: 0.3\n"),
        )
        .page("/", &html_page("home", &["首页"], &["/a", "/b"]))
        .page("/a", &html_page("a", &["甲"], &[]))
        .page("/b", &html_page("b", &["乙"], &[]));
    let config = CrawlConfig {
        concurrency: 3,
        ..local_config()
    };
    let started = std::time::Instant::now();
    let report = crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(report.fetched, 3);
    // Three page requests at least 0.3 s apart: two gaps.
    assert!(started.elapsed() >= std::time::Duration::from_millis(600));
}

#[tokio::test]
async fn a_configured_user_agent_is_sent_and_its_robots_group_obeyed() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type(
                "text/plain",
                "User-agent: *\nDisallow: /\n\nUser-agent: PirateHunter\nDisallow: /members/\n",
            ),
        )
        .page("/", &html_page("home", &["首页"], &["/members/1", "/a"]))
        .page("/a", &html_page("a", &["甲"], &[]));
    let config = CrawlConfig {
        user_agent: "PirateHunter/2.0 (+mailto:ops@example.invalid)".into(),
        ..local_config()
    };
    let report = crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(report.fetched, 2);
    assert_eq!(report.disallowed_by_robots, 1);
    for request in server.log() {
        assert_eq!(
            request.headers["user-agent"],
            "PirateHunter/2.0 (+mailto:ops@example.invalid)"
        );
    }
}
