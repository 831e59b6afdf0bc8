//! The SSRF guard: private and loopback addresses are refused, also behind redirects.

use std::net::{IpAddr, Ipv4Addr};

use copytrace_crawler::{CrawlConfig, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

fn strict_config() -> CrawlConfig {
    CrawlConfig {
        allow_private_addresses: false,
        ..local_config()
    }
}

#[tokio::test]
async fn private_addresses_are_refused_without_sending_anything() {
    let server = TestServer::start().await;
    server.page("/", &html_page("home", &["首页"], &[]));
    let localhost = url::Url::parse(&format!("http://localhost:{}/", server.addr.port())).unwrap();
    let seeds = [server.url("/"), localhost.clone()];
    let mut sink = Recorder::default();
    let report = crawl(&strict_config(), &seeds, &mut sink).await.unwrap();

    assert_eq!(report.fetched, 0);
    assert_eq!(report.failures.len(), 2, "{:?}", report.failures);
    let reason = sink.failure(&server.url("/"));
    assert_eq!(
        reason,
        format!(
            "refused private address 127.0.0.1 for {} (loopback; use --allow-private-addresses)",
            server.url("/")
        )
    );
    let reason = sink.failure(&localhost);
    assert!(reason.starts_with("refused private address"), "{reason}");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    server
        .page(
            "/",
            &html_page(
                "home",
                &["首页"],
                &["/to-v6", "/to-ten", "/to-other-loopback", "/ok"],
            ),
        )
        .route(
            "/to-v6",
            Route::redirect(302, &format!("http://[::1]:{port}/secret")),
        )
        .route("/to-ten", Route::redirect(301, "http://10.0.0.1/admin"))
        .route(
            "/to-other-loopback",
            Route::redirect(307, &format!("http://0x7f.0.0.2:{port}/secret")),
        )
        .page("/ok", &html_page("ok", &["正常"], &[]));
    // Only the test server's own address is exempt: everything else private stays refused.
    let config = CrawlConfig {
        allowed_addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        ..strict_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();

    assert_eq!(sink.urls(), ["/", "/ok"]);
    for (path, ip) in [
        ("/to-v6", "::1"),
        ("/to-ten", "10.0.0.1"),
        ("/to-other-loopback", "127.0.0.2"),
    ] {
        let reason = sink.failure(&server.url(path));
        assert!(
            reason.starts_with(&format!("refused private address {ip} for http")),
            "{path}: {reason}"
        );
    }
    assert_eq!(report.failures.len(), 3);
    assert!(!server.requests().iter().any(|p| p == "/secret"));
}

/// The allowed host is a server on 127.0.0.2, exempted by address. The redirect targets are
/// real servers on 127.0.0.1 and [::1] (and the IPv4-mapped spelling of 127.0.0.1), so a guard
/// that let a hop through would be seen in their logs; a control crawl with private addresses
/// allowed shows that the same hops do reach them. The 10.x target is never contacted in either
/// crawl (nothing runs there, and traffic to it would leave the machine).
#[tokio::test]
async fn redirects_from_an_allowed_host_to_loopback_and_private_addresses_are_refused() {
    let allowed = TestServer::start_on("127.0.0.2:0").await;
    let v4 = TestServer::start_on("127.0.0.1:0").await;
    let v6 = TestServer::start_on("[::1]:0").await;
    for target in [&v4, &v6] {
        target.page("/secret", &html_page("secret", &["内网秘密"], &[]));
    }
    let (p4, p6) = (v4.addr.port(), v6.addr.port());
    let hops = [
        (
            "/to-127",
            format!("http://127.0.0.1:{p4}/secret"),
            "127.0.0.1",
        ),
        ("/to-v6", format!("http://[::1]:{p6}/secret"), "::1"),
        (
            "/to-mapped",
            format!("http://[::ffff:127.0.0.1]:{p4}/secret"),
            "::ffff:127.0.0.1",
        ),
        ("/to-localhost", format!("http://localhost:{p4}/secret"), ""),
    ];
    let mut links: Vec<&str> = hops.iter().map(|(path, _, _)| *path).collect();
    links.push("/to-ten");
    links.push("/ok");
    allowed
        .page("/", &html_page("home", &["首页"], &links))
        .route("/to-ten", Route::redirect(302, "http://10.0.0.1/admin"))
        .page("/ok", &html_page("ok", &["正常"], &[]));
    for (path, target, _) in &hops {
        allowed.route(path, Route::redirect(302, target));
    }
    let config = CrawlConfig {
        allowed_addresses: vec!["127.0.0.2".parse().unwrap()],
        max_retries: 0,
        ..strict_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[allowed.url("/")], &mut sink)
        .await
        .unwrap();

    assert_eq!(
        sink.urls(),
        ["/", "/ok"],
        "the exempted host itself is crawled"
    );
    for (path, _, ip) in &hops {
        let reason = sink.failure(&allowed.url(path));
        assert!(
            reason.starts_with(&format!("refused private address {ip}")),
            "{path}: {reason}"
        );
    }
    let reason = sink.failure(&allowed.url("/to-ten"));
    assert!(
        reason.starts_with("refused private address 10.0.0.1 for http://10.0.0.1/admin"),
        "{reason}"
    );
    assert_eq!(report.failures.len(), 5);
    assert!(v4.requests().is_empty(), "{:?}", v4.requests());
    assert!(v6.requests().is_empty(), "{:?}", v6.requests());

    // Control: with private addresses allowed, the same hops do reach the loopback servers
    // (the 10.x hop is left out: it must never be contacted).
    let control_seeds: Vec<url::Url> = hops.iter().map(|(path, _, _)| allowed.url(path)).collect();
    let mut control = Recorder::default();
    crawl(&local_config(), &control_seeds, &mut control)
        .await
        .unwrap();
    assert_eq!(control.pages.len(), hops.len(), "{:?}", control.failures);
    assert!(v4.times_requested("/secret") >= 3);
    assert_eq!(v6.times_requested("/secret"), 1);
}
