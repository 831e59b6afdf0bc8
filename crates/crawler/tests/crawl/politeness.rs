//! Pacing, per-host concurrency and retries, checked from the server's request timestamps.
//!
//! The crawler spaces the *starts* of its requests; the server logs their *arrival*. The two
//! differ by the connect and scheduling latency of each request, a few milliseconds on loopback
//! but more on a loaded two-core CI machine, so single gaps are checked against three quarters
//! of the delay (without pacing they would be a few milliseconds) and a whole sequence against
//! its total minus a 250 ms allowance. Waits that start only after a response arrived
//! (`Retry-After`, backoff) are checked exactly. All timing assertions are lower bounds.

use std::time::{Duration, Instant};

use copytrace_crawler::{CrawlConfig, ErrorKind, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

const ALLOWANCE: Duration = Duration::from_millis(250);

/// Arrival times of every request except robots.txt, in order.
fn page_arrivals(server: &TestServer) -> Vec<(String, Instant)> {
    server
        .log()
        .into_iter()
        .filter(|l| l.path != "/robots.txt")
        .map(|l| (l.path, l.at))
        .collect()
}

fn assert_spaced(arrivals: &[(String, Instant)], delay: Duration) {
    for pair in arrivals.windows(2) {
        let gap = pair[1].1 - pair[0].1;
        assert!(
            gap >= delay * 3 / 4,
            "{} came {gap:?} after {} (delay {delay:?}); all: {arrivals:?}",
            pair[1].0,
            pair[0].0
        );
    }
}

#[tokio::test]
async fn a_crawl_delay_spaces_every_request_including_redirect_hops_and_retries() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type(
                "text/plain",
                "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n",
            ),
        )
        .page(
            "/",
            &html_page(
                "home",
                &["首页"],
                &["/a", "/redirect", "/flaky", "/private/x"],
            ),
        )
        .page("/a", &html_page("a", &["甲"], &[]))
        .route("/redirect", Route::redirect(302, "/c"))
        .page("/c", &html_page("c", &["丙"], &[]))
        .sequence(
            "/flaky",
            vec![
                Route::status(503),
                Route::html(html_page("flaky", &["丁"], &[])),
            ],
        )
        .page("/private/x", &html_page("x", &["秘密"], &[]));
    let config = CrawlConfig {
        concurrency: 4,
        per_host_concurrency: 2,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();

    assert_eq!(sink.urls(), ["/", "/a", "/c", "/flaky"]);
    assert_eq!(report.disallowed_by_robots, 1);
    assert_eq!(server.times_requested("/robots.txt"), 1);
    assert!(server.requests().iter().all(|p| !p.starts_with("/private")));
    let arrivals = page_arrivals(&server);
    // /, /a, /redirect, /c (hop), /flaky twice (retry).
    assert_eq!(arrivals.len(), 6, "{arrivals:?}");
    assert_spaced(&arrivals, Duration::from_secs(1));
    let span = arrivals[5].1 - arrivals[0].1;
    assert!(span + ALLOWANCE >= Duration::from_secs(5), "{span:?}");
}

#[tokio::test]
async fn the_configured_host_delay_applies_and_a_huge_crawl_delay_is_capped() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type("text/plain", "User-agent: *\nCrawl-delay: 60\n"),
        )
        .page("/", &html_page("home", &["首页"], &["/a", "/b", "/c"]))
        .page("/a", &html_page("a", &["甲"], &[]))
        .page("/b", &html_page("b", &["乙"], &[]))
        .page("/c", &html_page("c", &["丙"], &[]));
    let config = CrawlConfig {
        host_delay: Duration::from_millis(300),
        max_crawl_delay: Duration::from_millis(400),
        ..local_config()
    };
    let started = Instant::now();
    let report = crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(report.fetched, 4);
    // The cap (400 ms) wins over robots.txt's 60 s, and over the host delay (300 ms).
    assert_spaced(&page_arrivals(&server), Duration::from_millis(400));
    // Not a speed check: an uncapped 60 s delay would take three minutes.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn a_retry_after_pauses_the_whole_host() {
    let server = TestServer::start().await;
    server
        .page(
            "/",
            &html_page("home", &["首页"], &["/busy", "/slowish", "/after"]),
        )
        .sequence(
            "/busy",
            vec![
                Route::status(429).header("retry-after", "1"),
                Route::html(html_page("busy", &["忙完了"], &[])),
            ],
        )
        .route(
            "/slowish",
            Route::html(html_page("slowish", &["慢"], &[])).delayed(Duration::from_millis(300)),
        )
        .page("/after", &html_page("after", &["后来"], &[]));
    let config = CrawlConfig {
        concurrency: 4,
        per_host_concurrency: 2,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(report.fetched, 4, "{:?}", report.failures);
    assert_eq!(sink.page(&server.url("/busy")).text, "忙完了");

    let busy = server.arrivals("/busy");
    assert_eq!(busy.len(), 2);
    assert!(busy[1] - busy[0] >= Duration::from_secs(1));
    // /after waited for a slot that /slowish freed after 300 ms, and then for the pause, which
    // began when the 429 arrived at the crawler (after the server logged /busy).
    let after = server.arrivals("/after")[0];
    assert!(
        after - busy[0] >= Duration::from_secs(1),
        "{:?}",
        after - busy[0]
    );
    assert_eq!(report.stats.retries, 1);
    assert_eq!(report.stats.errors.len(), 0);
}

#[tokio::test]
async fn a_retry_after_date_is_honoured_and_one_beyond_the_cap_is_not_waited_for() {
    let server = TestServer::start().await;
    // An HTTP-date has whole seconds: the retry is due at the date itself, which is 1 to 2 s
    // from now, whenever the first request happens to arrive.
    let (now, clock) = (std::time::SystemTime::now(), Instant::now());
    let due = now + Duration::from_secs(2);
    let in_two_seconds = httpdate::fmt_http_date(due);
    let due = httpdate::parse_http_date(&in_two_seconds).unwrap();
    let due = clock + due.duration_since(now).unwrap();
    server
        .page("/", &html_page("home", &["首页"], &["/dated", "/forever"]))
        .sequence(
            "/dated",
            vec![
                Route::status(503).header("retry-after", &in_two_seconds),
                Route::html(html_page("dated", &["按时回来"], &[])),
            ],
        )
        .route("/forever", Route::status(429).header("retry-after", "3600"));
    let config = CrawlConfig {
        max_retry_after: Duration::from_secs(10),
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();

    assert_eq!(sink.page(&server.url("/dated")).text, "按时回来");
    let dated = server.arrivals("/dated");
    assert_eq!(dated.len(), 2);
    // Not retried before the date. The crawler turns the date into a wait on the wall clock when
    // the 503 arrives; 10 ms allow for converting between the wall clock and `Instant`.
    assert!(
        dated[1] + Duration::from_millis(10) >= due,
        "{:?} early",
        due - dated[1]
    );

    assert_eq!(server.times_requested("/forever"), 1);
    assert_eq!(
        sink.failure(&server.url("/forever")),
        format!("HTTP 429 Too Many Requests for {}", server.url("/forever"))
    );
    assert_eq!(report.stats.errors.get(&ErrorKind::Http429), Some(&1));
}

#[tokio::test]
async fn retries_back_off_exponentially() {
    let server = TestServer::start().await;
    server.route("/down", Route::status(502));
    let config = CrawlConfig {
        max_retries: 3,
        retry_base_delay: Duration::from_millis(200),
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/down")], &mut sink)
        .await
        .unwrap();
    assert!(sink.failure(&server.url("/down")).starts_with("HTTP 502"));
    let times = server.arrivals("/down");
    assert_eq!(times.len(), 4);
    // Equal jitter: the n-th wait is at least half of 200 ms × 2^n.
    for (n, pair) in times.windows(2).enumerate() {
        let least = Duration::from_millis(100) * 2u32.pow(n as u32);
        assert!(
            pair[1] - pair[0] >= least,
            "wait {n}: {:?}",
            pair[1] - pair[0]
        );
    }
    assert_eq!(report.stats.retries, 3);
    assert_eq!(report.stats.requests, 5, "robots.txt and four attempts");
}

#[tokio::test]
async fn concurrency_is_limited_per_host_and_hosts_are_crawled_side_by_side() {
    let one = TestServer::start().await;
    let two = TestServer::start().await;
    for server in [&one, &two] {
        let paths: Vec<String> = (0..6).map(|i| format!("/p{i}")).collect();
        let links: Vec<&str> = paths.iter().map(String::as_str).collect();
        server.page("/", &html_page("home", &["首页"], &links));
        for path in &paths {
            server.route(
                path,
                Route::html(html_page(path, &["内容"], &[])).delayed(Duration::from_millis(200)),
            );
        }
    }
    let config = CrawlConfig {
        concurrency: 8,
        per_host_concurrency: 2,
        ..local_config()
    };
    let report = crawl(
        &config,
        &[one.url("/"), two.url("/")],
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(report.fetched, 14);
    assert_eq!(one.max_concurrent(), 2);
    assert_eq!(two.max_concurrent(), 2);

    let server = TestServer::start().await;
    server.page("/", &html_page("home", &["首页"], &["/a", "/b", "/c"]));
    for path in ["/a", "/b", "/c"] {
        server.route(
            path,
            Route::html(html_page(path, &["内容"], &[])).delayed(Duration::from_millis(100)),
        );
    }
    let config = CrawlConfig {
        concurrency: 8,
        per_host_concurrency: 1,
        ..local_config()
    };
    crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(server.max_concurrent(), 1);
}
