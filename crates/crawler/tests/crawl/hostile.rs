//! The acceptance crawl: one site with every hostile endpoint at once, crawled with small limits.
//! The server's request log (with arrival times) is the witness for what was fetched and when.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use copytrace_crawler::{CrawlConfig, ErrorKind, crawl};

use crate::helpers::{Recorder, Route, TestServer, gbk, html_page, local_config};

const FIFTY_MB: usize = 50 * 1024 * 1024;

/// Paragraphs of the good pages, by path.
const GOOD: &[(&str, &[&str])] = &[
    (
        "/good.html",
        &[
            "正文第一段，讲述了少年离家的缘由。",
            "正文第二段，他在山路上遇见了一位老人。",
        ],
    ),
    (
        "/flaky.html",
        &["服务器两次出错之后，这一页终于可以读到了。"],
    ),
    (
        "/busy.html",
        &["服务器要求稍后再来，于是我们等了一秒钟再来。"],
    ),
    (
        "/chapter/7.html",
        &["第七章的第一页，故事讲到一半就被分页打断了。"],
    ),
    (
        "/chapter/7_2.html",
        &["第七章的第二页，故事在这里接着讲完。"],
    ),
];

/// A GBK chapter with enough text for detection; `head` may declare the charset.
fn gbk_chapter(head: &str, paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    gbk(&format!(
        "<html><head>{head}<title>第三章 夜雨</title></head><body><div id=\"content\">{body}</div></body></html>"
    ))
}

const GBK_HEADER: [&str; 2] = [
    "夜色如墨，少年推开了那扇沉重的木门，屋外的雨声越来越大。",
    "他知道，从今天起，一切都将不同。师父曾说过，江湖险恶，人心难测。",
];
const GBK_SNIFFED: [&str; 2] = [
    "山中的雾气渐渐散去，远处传来了钟声，村里的孩子们都跑出来看热闹。",
    "老掌柜把账本合上，叹了口气说道：这年头生意难做，客人越来越少了。",
];

fn hostile_site(server: &TestServer, huge_produced: Arc<AtomicUsize>) {
    server.route(
        "/robots.txt",
        Route::with_type("text/plain", "User-agent: *\nDisallow: /private/\n"),
    );
    server.page(
        "/",
        &html_page(
            "首页",
            &["这是一个充满陷阱的网站。"],
            &[
                "/slow.html",
                "/error.html",
                "/flaky.html",
                "/busy.html",
                "/loop.html",
                "/huge.html",
                "/binary.html",
                "/trap?q=a",
                "/gbk-header.html",
                "/gbk-sniffed.html",
                "/private/secret.html",
                "/to-private.html",
                "/good.html",
                "/chapter/7.html",
            ],
        ),
    );
    // A 30-second page against a 1-second request timeout.
    server.route(
        "/slow.html",
        Route::html("<p>too late</p>").delayed(Duration::from_secs(30)),
    );
    server.route("/error.html", Route::status(500));
    let good = |path: &str| {
        let paragraphs = GOOD.iter().find(|(p, _)| *p == path).unwrap().1;
        Route::html(html_page(path, paragraphs, &[]))
    };
    server.sequence(
        "/flaky.html",
        vec![Route::status(500), Route::status(503), good("/flaky.html")],
    );
    server.sequence(
        "/busy.html",
        vec![
            Route::status(429).header("retry-after", "1"),
            good("/busy.html"),
        ],
    );
    server
        .route("/loop.html", Route::redirect(302, "/loop2.html"))
        .route("/loop2.html", Route::redirect(302, "/loop.html"));
    server.route("/huge.html", Route::streamed_html(FIFTY_MB, huge_produced));
    // Bytes of every value, served as HTML.
    let binary: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    server.route("/binary.html", Route::html(binary));
    // A calendar-like trap: every page offers two "next pages", longer variants of itself.
    // As pagination they keep their depth, so only the link-space limits stop them.
    server.dynamic("/trap", |req| {
        let q = req.path.split_once("?q=").map_or("", |(_, q)| q).to_owned();
        Route::html(format!(
            "<html><body><p>无穷无尽的链接。</p><a href=\"/trap?q={q}a\">下一页</a> \
             <a href=\"/trap?q={q}{q}b\">next »</a></body></html>"
        ))
    });
    server.route(
        "/gbk-header.html",
        Route::with_type("text/html; charset=gbk", gbk_chapter("", &GBK_HEADER)),
    );
    server.route(
        "/gbk-sniffed.html",
        Route::with_type("text/html", gbk_chapter("", &GBK_SNIFFED)),
    );
    server.page("/private/secret.html", &html_page("secret", &["秘密"], &[]));
    server.route(
        "/to-private.html",
        Route::redirect(302, "/private/elsewhere.html"),
    );
    server.route("/good.html", good("/good.html"));
    // A chapter split over two pages.
    let chapter = |path: &str, next: Option<&str>| {
        let paragraphs = GOOD.iter().find(|(p, _)| *p == path).unwrap().1;
        let mut html =
            String::from("<html><head><title>第七章</title></head><body><div id=\"content\">");
        for p in paragraphs {
            html.push_str(&format!("<p>{p}</p>"));
        }
        html.push_str("</div>");
        if let Some(next) = next {
            html.push_str(&format!(
                "<div class=\"page\"><a href=\"{next}\">下一页</a></div>"
            ));
        }
        html.push_str("</body></html>");
        Route::html(html)
    };
    server.route(
        "/chapter/7.html",
        chapter("/chapter/7.html", Some("7_2.html")),
    );
    server.route("/chapter/7_2.html", chapter("/chapter/7_2.html", None));
}

#[tokio::test]
async fn a_hostile_site_is_crawled_within_limits_and_every_good_page_is_stored() {
    crawl_a_hostile_site().await;
}

/// The test's crawl and checks, also run by the `hostile_memory` test for its memory bound.
pub async fn crawl_a_hostile_site() {
    let server = TestServer::start().await;
    let huge_produced = Arc::new(AtomicUsize::new(0));
    hostile_site(&server, huge_produced.clone());
    let config = CrawlConfig {
        request_timeout: Duration::from_secs(1),
        max_retries: 2,
        max_body_bytes: 1024 * 1024,
        max_url_length: 200,
        max_query_variants: 12,
        // Depth 1 from the home page: the chapter's second page is two links away and is
        // reached only because "下一页" continues its page.
        max_depth: Some(1),
        max_pages: 200,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    let log = server.log();

    // robots.txt: nothing under /private/ was requested, not even through the redirect.
    assert!(
        log.iter().all(|l| !l.path.starts_with("/private/")),
        "disallowed URLs were requested: {:?}",
        server.requests()
    );
    assert_eq!(report.disallowed_by_robots, 2, "{report:?}");

    // Every good page was stored with the right text.
    for (path, paragraphs) in GOOD {
        let page = sink.page(&server.url(path));
        assert_eq!(page.text, paragraphs.join("\n"), "{path}");
        assert_eq!(page.encoding, "UTF-8", "{path}");
    }
    for (path, paragraphs) in [
        ("/gbk-header.html", GBK_HEADER),
        ("/gbk-sniffed.html", GBK_SNIFFED),
    ] {
        let page = sink.page(&server.url(path));
        assert_eq!(page.encoding, "GBK", "{path}");
        assert_eq!(page.title.as_deref(), Some("第三章 夜雨"), "{path}");
        assert_eq!(page.text, paragraphs.join("\n"), "{path}");
    }
    assert_eq!(sink.page(&server.url("/chapter/7_2.html")).depth, 1);

    // The hostile endpoints failed, each for its own reason.
    let reason = |path: &str| sink.failure(&server.url(path)).to_owned();
    assert_eq!(
        reason("/slow.html"),
        format!("timed out fetching {}", server.url("/slow.html"))
    );
    assert!(reason("/error.html").starts_with("HTTP 500"));
    assert!(reason("/loop.html").starts_with("redirect loop"));
    assert!(
        reason("/huge.html").contains("larger than 1048576 bytes"),
        "{}",
        reason("/huge.html")
    );
    assert!(reason("/binary.html").starts_with("not HTML (binary data)"));
    let errors = &report.stats.errors;
    assert_eq!(errors.get(&ErrorKind::Timeout), Some(&1), "{errors:?}");
    assert_eq!(errors.get(&ErrorKind::Http5xx), Some(&1), "{errors:?}");
    assert_eq!(errors.get(&ErrorKind::Redirects), Some(&1), "{errors:?}");
    assert_eq!(errors.get(&ErrorKind::TooLarge), Some(&1), "{errors:?}");
    assert_eq!(errors.get(&ErrorKind::NotHtml), Some(&1), "{errors:?}");
    assert_eq!(report.failures.len(), 5, "{:?}", report.failures);

    // Retries: the slow page and the 500 three times each, the flaky page until it answered.
    assert_eq!(server.arrivals("/slow.html").len(), 3);
    assert_eq!(server.arrivals("/error.html").len(), 3);
    assert_eq!(server.arrivals("/flaky.html").len(), 3);
    // The 429 was retried once, no sooner than its Retry-After of one second.
    let busy = server.arrivals("/busy.html");
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1] - busy[0] >= Duration::from_secs(1),
        "{:?}",
        busy[1] - busy[0]
    );
    assert_eq!(report.stats.retries, 2 + 2 + 2 + 1);

    // The 50 MB body was abandoned long before its end (the cap is 1 MiB; what the server
    // produced beyond it sat in socket buffers).
    let produced = huge_produced.load(Ordering::SeqCst);
    assert!(
        produced < FIFTY_MB / 2,
        "the server produced {produced} bytes"
    );

    // The infinite link space was cut by the variant and length limits.
    let trap: Vec<&str> = log
        .iter()
        .map(|l| l.path.as_str())
        .filter(|p| p.starts_with("/trap"))
        .collect();
    assert!(!trap.is_empty() && trap.len() <= 12, "{trap:?}");
    assert!(
        trap.iter()
            .all(|p| server.url(p).as_str().len() <= config.max_url_length),
        "{trap:?}"
    );
    assert!(report.stats.link_limits > 0);

    // Every request the crawler counted reached the server, and nothing else did.
    assert_eq!(report.stats.requests, log.len() as u64);
    assert!(report.stats.bytes > 1024 * 1024);
    assert_eq!(report.stats.pages, report.fetched);
    assert!(report.stats.pages_per_second() > 0.0);
    // Progress was reported as the crawl went, ending with the final numbers.
    let last = sink.progress.last().expect("progress was reported");
    assert_eq!(last.stats.pages, report.fetched);
    assert_eq!(last.stats.failed(), report.failures.len());
}
