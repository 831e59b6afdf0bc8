//! Link following: endless link spaces, pagination, chapter lists, URL normalization, scope
//! patterns and sitemaps.

use std::io::Write;

use copytrace_crawler::{CrawlConfig, crawl};

use crate::helpers::{Recorder, Route, TestServer, html_page, local_config};

#[tokio::test]
async fn ever_longer_query_strings_stop_at_the_url_length_limit() {
    let server = TestServer::start().await;
    server.page(
        "/",
        &html_page("home", &["首页"], &["/search?q=a", "/real"]),
    );
    // Each result page links to a query twice as long: no depth limit would stop this.
    server.dynamic("/search", |req| {
        let q = req.path.split_once("?q=").map_or("", |(_, q)| q).to_owned();
        Route::html(html_page(
            "search",
            &["结果"],
            &[&format!("/search?q={q}{q}")],
        ))
    });
    server.page("/real", &html_page("real", &["真正的内容"], &[]));
    let config = CrawlConfig {
        max_url_length: 300,
        max_pages: 1000,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    let searches: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|p| p.starts_with("/search"))
        .collect();
    // q has 1, 2, 4, ... 256 letters (URLs up to 289 bytes); 512 would exceed 300 bytes.
    assert_eq!(searches.len(), 9, "{searches:?}");
    assert!(searches.iter().all(|p| server.url(p).as_str().len() <= 300));
    assert_eq!(report.stats.link_limits, 1);
    assert_eq!(sink.page(&server.url("/real")).text, "真正的内容");
}

#[tokio::test]
async fn query_variants_of_one_path_are_capped() {
    let server = TestServer::start().await;
    server.page("/", &html_page("home", &["首页"], &["/cal?d=0"]));
    // A calendar: every day links to the next day and the next month.
    server.dynamic("/cal", |req| {
        let d: u64 = req.path.rsplit('=').next().unwrap().parse().unwrap();
        Route::html(html_page(
            "cal",
            &["日历"],
            &[&format!("/cal?d={}", d + 1), &format!("/cal?d={}", d + 30)],
        ))
    });
    let config = CrawlConfig {
        max_query_variants: 25,
        max_pages: 1000,
        ..local_config()
    };
    let report = crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    let calendar = server
        .requests()
        .iter()
        .filter(|p| p.starts_with("/cal"))
        .count();
    assert_eq!(calendar, 25);
    assert!(report.stats.link_limits > 0);
}

/// A novel: the index lists ten chapters (plain numbered links after the site navigation);
/// chapter 3 is split over three pages joined by "下一页".
fn novel_site(server: &TestServer) {
    let mut index = String::from(
        "<html><head><title>某小说</title></head><body><div class=\"nav\">\
         <a href=\"/news/1.html\">新闻一</a><a href=\"/news/2.html\">新闻二</a>\
         <a href=\"/news/3.html\">新闻三</a><a href=\"/rank.html\">排行榜</a></div><ul>",
    );
    for i in 1..=10 {
        index.push_str(&format!(
            "<li><a href=\"/book/{i}.html\">风起云涌（{i}）</a></li>"
        ));
    }
    index.push_str("</ul></body></html>");
    server.page("/book/", &index);
    for i in 1..=10 {
        if i == 3 {
            continue;
        }
        server.page(
            &format!("/book/{i}.html"),
            &html_page(&format!("第{i}章"), &[&format!("第{i}章的正文。")], &[]),
        );
    }
    let split = |part: usize, next: Option<&str>| {
        let nav = next.map_or(String::new(), |n| {
            format!("<div class=\"pager\"><a href=\"{n}\">下一页</a></div>")
        });
        format!(
            "<html><head><title>第3章</title></head><body><div id=\"content\">\
             <p>第3章第{part}页的正文。</p></div>{nav}</body></html>"
        )
    };
    server
        .page("/book/3.html", &split(1, Some("3_2.html")))
        .page("/book/3_2.html", &split(2, Some("/book/3_3.html")))
        .page("/book/3_3.html", &split(3, None));
    for path in ["/news/1.html", "/news/2.html", "/news/3.html", "/rank.html"] {
        server.page(path, &html_page(path, &["导航页"], &[]));
    }
}

#[tokio::test]
async fn a_whole_novel_and_its_split_chapter_are_followed_before_site_navigation() {
    let server = TestServer::start().await;
    novel_site(&server);
    // Index + 10 chapters + 2 continuation pages = 13; one page of budget to spare.
    let config = CrawlConfig {
        max_depth: Some(1),
        max_pages: 14,
        concurrency: 1,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/book/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 14);
    for i in 1..=10 {
        let page = sink.page(&server.url(&format!("/book/{i}.html")));
        assert_eq!(page.depth, 1);
    }
    // The continuation pages are two and three links from the index, yet within depth 1.
    for (path, text) in [
        ("/book/3.html", "第3章第1页的正文。"),
        ("/book/3_2.html", "第3章第2页的正文。"),
        ("/book/3_3.html", "第3章第3页的正文。"),
    ] {
        let page = sink.page(&server.url(path));
        assert_eq!(page.text, text);
        assert_eq!(page.depth, 1, "{path}");
    }
    // Navigation got what was left of the budget.
    let navigation = server
        .requests()
        .iter()
        .filter(|p| p.starts_with("/news/") || *p == "/rank.html")
        .count();
    assert_eq!(navigation, 1);
}

#[tokio::test]
async fn tracking_parameters_and_query_order_do_not_refetch_a_page() {
    let server = TestServer::start().await;
    server.page(
        "/",
        &html_page(
            "home",
            &["首页"],
            &[
                "/read?book=1&chapter=2",
                "/read?chapter=2&book=1&utm_source=weibo",
                "/read?spm=a1.b2&book=1&chapter=2&fbclid=xyz#comments",
            ],
        ),
    );
    server.page("/read?book=1&chapter=2", &html_page("read", &["章节"], &[]));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 2, "{:?}", report.failures);
    assert_eq!(server.times_requested("/read?book=1&chapter=2"), 1);
    assert_eq!(server.requests().len(), 3, "{:?}", server.requests());
}

#[tokio::test]
async fn include_and_exclude_patterns_and_listed_hosts_shape_the_scope() {
    let main = TestServer::start().await;
    let mirror = TestServer::start_on("127.0.0.3:0").await;
    let mirror_link = mirror.url("/book/9.html").to_string();
    main.page(
        "/",
        &html_page(
            "home",
            &["首页"],
            &["/book/1.html", "/book/1.zip", "/forum/1.html", &mirror_link],
        ),
    )
    .page("/book/1.html", &html_page("1", &["一"], &[]));
    mirror.page("/book/9.html", &html_page("9", &["九"], &[]));
    let config = CrawlConfig {
        include_patterns: vec!["/book/".into()],
        exclude_patterns: vec![r"\.zip$".into()],
        allowed_hosts: vec!["127.0.0.3".into()],
        ..local_config()
    };
    let mut sink = Recorder::default();
    crawl(&config, &[main.url("/")], &mut sink).await.unwrap();
    assert_eq!(
        main.requests(),
        ["/robots.txt", "/", "/book/1.html"],
        "the seed is fetched although it does not match the include pattern"
    );
    assert_eq!(mirror.requests(), ["/robots.txt", "/book/9.html"]);
    assert_eq!(sink.page(&mirror.url("/book/9.html")).text, "九");
}

#[tokio::test]
async fn sitemaps_listed_in_robots_txt_are_read_through_an_index() {
    let server = TestServer::start().await;
    let base = server.url("/").to_string();
    let base = base.trim_end_matches('/');
    let urlset = |urls: &[String]| {
        let mut xml = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
        );
        for url in urls {
            xml.push_str(&format!("<url><loc>{url}</loc></url>"));
        }
        xml.push_str("</urlset>");
        xml
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(urlset(&[format!("{base}/orphan/2.html")]).as_bytes())
        .unwrap();
    server
        .route(
            "/robots.txt",
            Route::with_type(
                "text/plain",
                format!("User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap-index.xml\n"),
            ),
        )
        .route(
            "/sitemap-index.xml",
            Route::with_type(
                "application/xml",
                format!(
                    "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <sitemap><loc>{base}/s1.xml</loc></sitemap>\
                     <sitemap><loc>{base}/s2.xml.gz</loc></sitemap></sitemapindex>"
                ),
            ),
        )
        .route(
            "/s1.xml",
            Route::with_type(
                "application/xml",
                urlset(&[
                    format!("{base}/orphan/1.html"),
                    format!("{base}/private/3.html"),
                    "http://elsewhere.example/4.html".to_owned(),
                ]),
            ),
        )
        .route(
            "/s2.xml.gz",
            Route::with_type("application/x-gzip", gz.finish().unwrap()),
        )
        .page("/", &html_page("home", &["首页"], &[]))
        .page("/orphan/1.html", &html_page("o1", &["孤儿页一"], &[]))
        .page("/orphan/2.html", &html_page("o2", &["孤儿页二"], &[]));
    let config = CrawlConfig {
        sitemaps: true,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(sink.urls(), ["/", "/orphan/1.html", "/orphan/2.html"]);
    assert_eq!(sink.page(&server.url("/orphan/2.html")).depth, 1);
    assert_eq!(
        report.stats.sitemap_urls, 3,
        "two orphans and the disallowed page"
    );
    assert_eq!(report.disallowed_by_robots, 1);
    assert!(server.requests().iter().all(|p| !p.starts_with("/private")));
    assert_eq!(server.times_requested("/sitemap.xml"), 0);
}

#[tokio::test]
async fn sitemap_xml_is_probed_by_default_and_not_when_sitemaps_are_off() {
    let server = TestServer::start().await;
    let orphan = server.url("/orphan.html");
    server
        .page("/", &html_page("home", &["首页"], &[]))
        .route(
            "/sitemap.xml",
            Route::with_type(
                "text/xml",
                format!("<urlset><url><loc>{orphan}</loc></url></urlset>"),
            ),
        )
        .page("/orphan.html", &html_page("orphan", &["孤儿页"], &[]));

    let off = CrawlConfig {
        sitemaps: false,
        ..local_config()
    };
    let report = crawl(&off, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(report.fetched, 1);
    assert_eq!(server.times_requested("/sitemap.xml"), 0);

    // The default reads them.
    let config = CrawlConfig {
        sitemaps: CrawlConfig::default().sitemaps,
        ..local_config()
    };
    let report = crawl(&config, &[server.url("/")], &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(report.fetched, 2);
    assert_eq!(server.times_requested("/sitemap.xml"), 1);
    assert_eq!(server.times_requested("/orphan.html"), 1);
}
