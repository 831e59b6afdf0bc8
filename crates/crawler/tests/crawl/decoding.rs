//! Charset detection end to end: GBK pages with and without a declared charset.

use encoding_rs::GBK;

use copytrace_crawler::crawl;

use crate::helpers::{Recorder, Route, TestServer, local_config};

const PARAGRAPHS: [&str; 2] = [
    "夜色如墨，少年推开了那扇沉重的木门。",
    "他知道，从今天起，一切都将不同。师父曾说过，江湖险恶，人心难测。",
];

fn gbk_chapter(head: &str) -> Vec<u8> {
    let html = format!(
        "<html><head>{head}<title>第一章 风起</title></head><body>\
         <div id=\"content\">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br />　　{}<br /></div></body></html>",
        PARAGRAPHS[0], PARAGRAPHS[1]
    );
    let (bytes, _, had_errors) = GBK.encode(&html);
    assert!(!had_errors);
    bytes.into_owned()
}

async fn crawl_one(route: Route) -> copytrace_crawler::FetchedPage {
    let server = TestServer::start().await;
    server.route("/1.html", route);
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/1.html")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 1, "{report:?}");
    sink.pages.pop().unwrap()
}

#[tokio::test]
async fn a_gbk_page_without_any_charset_declaration_is_decoded() {
    let page = crawl_one(Route::with_type("text/html", gbk_chapter(""))).await;
    assert_eq!(page.encoding, "GBK");
    assert_eq!(page.title.as_deref(), Some("第一章 风起"));
    assert_eq!(page.text, PARAGRAPHS.join("\n"));
}

#[tokio::test]
async fn a_gbk_page_with_a_header_charset_is_decoded() {
    let page = crawl_one(Route::with_type("text/html; charset=GBK", gbk_chapter(""))).await;
    assert_eq!(page.encoding, "GBK");
    assert_eq!(page.text, PARAGRAPHS.join("\n"));
}

#[tokio::test]
async fn a_gbk_page_with_a_meta_charset_is_decoded() {
    for head in [
        "<meta charset=gbk>",
        "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">",
    ] {
        let page = crawl_one(Route::with_type("text/html", gbk_chapter(head))).await;
        assert_eq!(page.encoding, "GBK", "{head}");
        assert_eq!(page.title.as_deref(), Some("第一章 风起"), "{head}");
        assert_eq!(page.text, PARAGRAPHS.join("\n"), "{head}");
    }
}

#[tokio::test]
async fn a_page_without_content_type_is_sniffed_as_html() {
    let page = crawl_one(Route::untyped(gbk_chapter("<meta charset=gbk>"))).await;
    assert_eq!(page.text, PARAGRAPHS.join("\n"));
}

#[tokio::test]
async fn extraction_drops_navigation_ads_and_comments_and_keeps_the_article() {
    let html = r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>新闻</title></head><body>
<div id="nav"><a href="/">首页</a><a href="/news">新闻</a> 导航文字导航文字导航文字导航文字</div>
<div class="main">
  <div class="ad">广告位招租广告位招租广告位招租广告位招租广告位招租广告位招租</div>
  <div class="article"><p>第一段正文，讲述了事情的来龙去脉。</p><p>第二段正文，给出了专家的评论和分析。</p></div>
  <div class="comment-list"><p>评论：这是一条很长很长很长很长很长很长很长很长很长很长很长很长的读者评论。</p></div>
  <div class="copyright">Copyright 2024 版权所有 未经授权禁止转载 违者必究 联系电话 010-12345678</div>
</div></body></html>"#;
    let page = crawl_one(Route::html(html)).await;
    assert_eq!(
        page.text,
        "第一段正文，讲述了事情的来龙去脉。\n第二段正文，给出了专家的评论和分析。"
    );
}

#[tokio::test]
async fn big5_and_gb18030_pages_are_decoded() {
    let traditional = [
        "夜色如墨，少年推開了那扇沉重的木門。",
        "他知道，從今天起，一切都將不同。",
    ];
    let html = format!(
        "<html><head><title>第一章 風起</title></head><body><div id=\"content\">\
         <p>{}</p><p>{}</p></div></body></html>",
        traditional[0], traditional[1]
    );
    let (big5, _, had_errors) = encoding_rs::BIG5.encode(&html);
    assert!(!had_errors);
    let page = crawl_one(Route::with_type(
        "text/html; charset=big5",
        big5.into_owned(),
    ))
    .await;
    assert_eq!(page.encoding, "Big5");
    assert_eq!(page.title.as_deref(), Some("第一章 風起"));
    assert_eq!(page.text, traditional.join("\n"));

    // Characters beyond GBK (CJK Extension B) need GB18030's four-byte sequences.
    let rare = "𠀀和𪚥是罕见字，书里用了很多次。";
    let html = format!(
        "<html><head><meta charset=\"gb18030\"><title>罕见字</title></head><body>\
         <div id=\"content\"><p>{}</p><p>{rare}</p></div></body></html>",
        PARAGRAPHS[0]
    );
    let (bytes, _, had_errors) = encoding_rs::GB18030.encode(&html);
    assert!(!had_errors);
    let page = crawl_one(Route::with_type("text/html", bytes.into_owned())).await;
    assert_eq!(page.encoding, "gb18030");
    assert_eq!(page.text, format!("{}\n{rare}", PARAGRAPHS[0]));
}

#[tokio::test]
async fn undecodable_bytes_become_replacement_characters_and_the_crawl_goes_on() {
    let server = TestServer::start().await;
    let mut broken = gbk_chapter("");
    // A lead byte without its trail byte in the middle of the first paragraph.
    let at = broken.windows(2).position(|w| w == [0xD2, 0xB9]).unwrap(); // 夜
    broken.insert(at, 0x81);
    broken.insert(at + 1, b'\n');
    server
        .route(
            "/broken.html",
            Route::with_type(
                "text/html; charset=gbk",
                [broken, b"<a href=\"/next.html\">next</a>".to_vec()].concat(),
            ),
        )
        .route("/next.html", Route::with_type("text/html", gbk_chapter("")));
    let mut sink = Recorder::default();
    let report = crawl(&local_config(), &[server.url("/broken.html")], &mut sink)
        .await
        .unwrap();
    assert_eq!(report.fetched, 2, "{:?}", report.failures);
    let page = sink.page(&server.url("/broken.html"));
    assert_eq!(page.encoding, "GBK");
    assert!(page.text.contains('\u{FFFD}'), "{}", page.text);
    assert!(page.text.contains(PARAGRAPHS[1]), "{}", page.text);
    assert_eq!(
        sink.page(&server.url("/next.html")).text,
        PARAGRAPHS.join("\n")
    );
}

#[tokio::test]
async fn the_body_is_kept_as_served_with_every_response_header() {
    use std::io::Write;
    let original = gbk_chapter("");
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&original).unwrap();
    let route = Route::with_type("text/html", gzip.finish().unwrap())
        .header("content-encoding", "gzip")
        .header("x-served-by", "pirate-7");
    let page = crawl_one(route).await;
    // Transfer compression is undone, the charset is not: these are the page's own bytes.
    assert_eq!(page.body, original);
    assert_eq!(page.encoding, "GBK");
    let header = |name: &str| {
        page.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("content-type"), Some("text/html"));
    assert_eq!(header("content-encoding"), Some("gzip"));
    assert_eq!(header("x-served-by"), Some("pirate-7"));
}
