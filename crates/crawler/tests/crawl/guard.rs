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
