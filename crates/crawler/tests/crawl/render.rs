//! The rendered path, in real headless Chromium against real local servers: text written by
//! `document.write`, decoded from a base64 or percent-encoded blob, fetched as JSON or as an
//! HTML fragment; text hidden by styles in both paths; scripts that try to reach loopback and
//! private addresses; pages that never settle; a machine without Chromium.
//!
//! These tests need Chromium and fail without it (`./scripts/test` installs Debian's).

use std::time::Duration;

use copytrace_crawler::{CrawlConfig, RenderMode, crawl};

use crate::helpers::{Recorder, Route, TestServer, local_config};

/// A chapter long enough to be a page's text, short enough to read in a failure message.
const CHAPTER: &str = "却说曹操引兵追赶，行至半路，忽见前面尘头大起，一彪军马拦住去路。\
    为首一员大将，手提长枪，高声大叫：丞相休走，赵子龙在此！曹操大惊，急令军士退后。\
    赵云纵马挺枪，杀入阵中，左冲右突，如入无人之境，曹军四散奔走，死伤无数。\
    曹操叹曰：真虎将也！遂传令休要放冷箭，只要捉活的。赵云怀抱幼主，直透重围而去。";

fn chromium() -> std::path::PathBuf {
    copytrace_browser::find_chromium(None, std::env::var_os("PATH").as_deref()).unwrap_or_else(
        |e| panic!("the rendering tests need Chromium ({e}); ./scripts/test installs it"),
    )
}

fn rendering(mode: RenderMode) -> CrawlConfig {
    CrawlConfig {
        render: mode,
        chromium: Some(chromium()),
        render_timeout: Duration::from_secs(15),
        ..local_config()
    }
}

/// `s` as a JavaScript string literal of `\uXXXX` escapes only: nothing of the text is in the
/// HTML as served.
fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

fn shell(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>\
         <body><h1>{title}</h1><div id=\"content\"></div>{body}\
         <p><a href=\"/\">目录</a></p></body></html>"
    )
}

fn canonical(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !c.is_ascii_punctuation())
        .collect()
}

async fn crawl_one(config: &CrawlConfig, server: &TestServer, path: &str) -> Recorder {
    let mut sink = Recorder::default();
    let config = CrawlConfig {
        max_depth: Some(0),
        ..config.clone()
    };
    crawl(&config, &[server.url(path)], &mut sink)
        .await
        .unwrap();
    sink
}

fn assert_has_chapter(sink: &Recorder, server: &TestServer, path: &str) {
    let page = sink.page(&server.url(path));
    assert!(page.rendered, "{path} was not rendered");
    let text = canonical(&page.text);
    assert!(
        text.contains(&canonical(CHAPTER)),
        "{path}: the rendered text lacks the chapter: {}",
        page.text
    );
}

#[tokio::test]
async fn text_written_by_document_write_of_escaped_literals_is_read() {
    let server = TestServer::start().await;
    let script = format!(
        "<script>document.write(\"<div class=\\\"text\\\">{}</div>\");</script>",
        escaped(CHAPTER)
    );
    server.page("/1.html", &shell("第一回", &script));
    // The static path sees nothing of it.
    let static_only = crawl_one(
        &CrawlConfig {
            render: RenderMode::Never,
            ..local_config()
        },
        &server,
        "/1.html",
    )
    .await;
    let page = static_only.page(&server.url("/1.html"));
    assert!(!page.rendered);
    assert!(!canonical(&page.text).contains(&canonical(&CHAPTER[..30])));

    let sink = crawl_one(&rendering(RenderMode::Auto), &server, "/1.html").await;
    assert_has_chapter(&sink, &server, "/1.html");
}

#[tokio::test]
async fn text_decoded_from_a_base64_or_percent_encoded_blob_is_read() {
    use base64::Engine;
    let server = TestServer::start().await;
    let blob = base64::engine::general_purpose::STANDARD.encode(CHAPTER.as_bytes());
    let base64_page = shell(
        "第二回",
        &format!(
            "<script>var blob = \"{blob}\";\
             var bytes = Uint8Array.from(atob(blob), function (c) {{ return c.charCodeAt(0); }});\
             document.getElementById('content').textContent = new TextDecoder().decode(bytes);\
             </script>"
        ),
    );
    let percent: String = CHAPTER.bytes().map(|b| format!("%{b:02X}")).collect();
    let percent_page = shell(
        "第三回",
        &format!(
            "<script>setTimeout(function () {{ document.getElementById('content').innerText = \
             decodeURIComponent(\"{percent}\"); }}, 300);</script>"
        ),
    );
    server
        .page("/2.html", &base64_page)
        .page("/3.html", &percent_page);
    let config = rendering(RenderMode::Auto);
    let sink = crawl_one(&config, &server, "/2.html").await;
    assert_has_chapter(&sink, &server, "/2.html");
    let sink = crawl_one(&config, &server, "/3.html").await;
    assert_has_chapter(&sink, &server, "/3.html");
}

#[tokio::test]
async fn text_fetched_as_json_or_as_an_html_fragment_is_read() {
    let server = TestServer::start().await;
    let json = serde_json_string(CHAPTER);
    server
        .route(
            "/api/chapter/4.json",
            Route::with_type(
                "application/json",
                format!("{{\"title\":\"第四回\",\"content\":{json}}}"),
            ),
        )
        .route("/fragment/5.html", Route::html(format!("<p>{CHAPTER}</p>")))
        .page(
            "/4.html",
            &shell(
                "第四回",
                "<script>var xhr = new XMLHttpRequest();\
                 xhr.open('GET', '/api/chapter/4.json');\
                 xhr.onload = function () { document.getElementById('content').textContent = \
                 JSON.parse(xhr.responseText).content; };\
                 xhr.send();</script>",
            ),
        )
        .page(
            "/5.html",
            &shell("第五回", "<script src=\"/app.js\"></script>"),
        )
        .route(
            "/app.js",
            Route::with_type(
                "application/javascript",
                "fetch('/fragment/5.html').then(function (r) { return r.text(); })\
                 .then(function (html) { document.getElementById('content').innerHTML = html; });",
            ),
        );
    let config = rendering(RenderMode::Auto);
    let sink = crawl_one(&config, &server, "/4.html").await;
    assert_has_chapter(&sink, &server, "/4.html");
    let sink = crawl_one(&config, &server, "/5.html").await;
    assert_has_chapter(&sink, &server, "/5.html");
    // The subrequests reached the server, through the proxy and the crawler's rules.
    assert_eq!(server.times_requested("/api/chapter/4.json"), 1);
    assert_eq!(server.times_requested("/fragment/5.html"), 1);
    // The site's script file once for the render decision (it writes), once by the browser.
    assert_eq!(server.times_requested("/app.js"), 2);
}

#[tokio::test]
async fn a_subrequest_disallowed_by_robots_txt_is_not_made() {
    let server = TestServer::start().await;
    server
        .route(
            "/robots.txt",
            Route::with_type("text/plain", "User-agent: *\nDisallow: /api/\n"),
        )
        .route(
            "/api/chapter/6.json",
            Route::with_type("application/json", "{\"content\":\"秘密\"}"),
        )
        .page(
            "/6.html",
            &shell(
                "第六回",
                "<script>fetch('/api/chapter/6.json').then(function (r) { return r.json(); })\
                 .then(function (j) { document.getElementById('content').textContent = j.content; })\
                 .catch(function () { document.getElementById('content').textContent = 'refused'; });\
                 </script>",
            ),
        );
    let sink = crawl_one(&rendering(RenderMode::Auto), &server, "/6.html").await;
    let page = sink.page(&server.url("/6.html"));
    assert!(page.rendered);
    assert!(!page.text.contains("秘密"), "{}", page.text);
    assert_eq!(server.times_requested("/api/chapter/6.json"), 0);
}

/// A page on an allowed host (127.0.0.2, exempted by address) whose scripts try loopback
/// (127.0.0.1) directly and through a DNS name (`localhost`). Private ranges are refused by
/// the same policy (`guard` tests).
#[tokio::test]
async fn scripts_cannot_reach_loopback_or_private_addresses_unless_allowed() {
    let site = TestServer::start_on("127.0.0.2:0").await;
    let inner = TestServer::start_on("127.0.0.1:0").await;
    inner.route(
        "/secret",
        Route::with_type("text/plain", "内网秘密").header("access-control-allow-origin", "*"),
    );
    let port = inner.addr.port();
    let script = format!(
        "<script>\
         var out = document.getElementById('content');\
         function grab(url) {{ return fetch(url).then(function (r) {{ return r.text(); }})\
           .then(function (t) {{ out.textContent += t; }}, function () {{}}); }}\
         Promise.all([grab('http://127.0.0.1:{port}/secret'), grab('http://localhost:{port}/secret')])\
           .then(function () {{ out.textContent += '{chapter}'; }});\
         </script>",
        chapter = CHAPTER
    );
    site.page("/7.html", &shell("第七回", &script));
    let guarded = CrawlConfig {
        allow_private_addresses: false,
        allowed_addresses: vec!["127.0.0.2".parse().unwrap()],
        ..rendering(RenderMode::Always)
    };
    let sink = crawl_one(&guarded, &site, "/7.html").await;
    assert_has_chapter(&sink, &site, "/7.html");
    let page = sink.page(&site.url("/7.html"));
    assert!(!page.text.contains("内网秘密"), "{}", page.text);
    assert_eq!(
        inner.times_requested("/secret"),
        0,
        "the browser reached loopback"
    );

    // Allowed explicitly, the same page does reach it (so the refusal above is the guard's).
    let open = CrawlConfig {
        allow_private_addresses: true,
        ..rendering(RenderMode::Always)
    };
    let sink = crawl_one(&open, &site, "/7.html").await;
    let page = sink.page(&site.url("/7.html"));
    assert!(page.text.contains("内网秘密"), "{}", page.text);
    assert!(inner.times_requested("/secret") >= 1);
}

#[tokio::test]
async fn a_page_that_never_settles_is_abandoned_and_reported_not_rendered() {
    let server = TestServer::start().await;
    server.page(
        "/8.html",
        &shell(
            "第八回",
            "<script>setInterval(function () { document.getElementById('content')\
             .appendChild(document.createTextNode('走')); }, 50);</script>",
        ),
    );
    let config = CrawlConfig {
        render_timeout: Duration::from_secs(3),
        ..rendering(RenderMode::Auto)
    };
    let started = std::time::Instant::now();
    let sink = crawl_one(&config, &server, "/8.html").await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(sink.pages.is_empty(), "an unsettled page is not stored");
    let reason = sink.failure(&server.url("/8.html"));
    assert!(reason.contains("not rendered"), "{reason}");
}

#[tokio::test]
async fn without_chromium_pages_that_need_it_are_reported_and_their_links_followed() {
    let server = TestServer::start().await;
    server
        .page(
            "/9.html",
            &format!(
                "<html><head><title>第九回</title></head><body><div id=content></div>\
                 <script>document.write(\"{}\")</script><a href=\"/10.html\">下一章</a></body></html>",
                escaped(CHAPTER)
            ),
        )
        .page(
            "/10.html",
            &format!("<html><head><title>第十回</title></head><body><article><p>{CHAPTER}</p></article></body></html>"),
        );
    let config = CrawlConfig {
        render: RenderMode::Auto,
        chromium: None,
        ..local_config()
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/9.html")], &mut sink)
        .await
        .unwrap();
    let reason = sink.failure(&server.url("/9.html"));
    assert!(reason.contains("not rendered"), "{reason}");
    assert!(reason.contains("apt-get install chromium"), "{reason}");
    assert_eq!(
        sink.urls(),
        ["/10.html"],
        "the static page is stored, the other is not"
    );
    assert_eq!(
        report
            .stats
            .errors
            .get(&copytrace_crawler::ErrorKind::NotRendered),
        Some(&1)
    );
}

/// Every way of hiding anti-copy characters from a reader, in the static and the rendered
/// path alike: the `hidden` attribute, inline styles, and `<style>` rules by class, id and
/// descendant selector.
#[tokio::test]
async fn text_hidden_by_styles_is_dropped_in_both_paths() {
    let hiders = [
        "<span hidden>",
        "<span style=\"display:none\">",
        "<span style=\"visibility: hidden\">",
        "<span style=\"font-size:0\">",
        "<span style=\"opacity:0\">",
        "<span style=\"position:absolute;left:-9999px\">",
        "<span class=\"jm\">",
        "<span id=\"x7\">",
        "<span class=\"wrap\"><i>",
        "<font class=\"tiny\">",
        "<span class=\"ghost\">",
        "<span class=\"away\">",
    ];
    let clauses: Vec<&str> = CHAPTER.split('，').collect();
    let mut body = String::from("<div id=\"content\"><p>");
    for (i, clause) in clauses.iter().enumerate() {
        body.push_str(clause);
        body.push('，');
        let open = hiders[i % hiders.len()];
        let close: String = open
            .split('<')
            .filter(|t| !t.is_empty())
            .rev()
            .map(|t| format!("</{}>", t.split([' ', '>']).next().unwrap()))
            .collect();
        body.push_str(&format!("{open}ZQX{i}{close}"));
    }
    body.push_str("</p></div>");
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>第十一回</title><style>\
         .jm {{ display: none }} #x7 {{ visibility: hidden }} .wrap i {{ display:none }}\
         font.tiny {{ font-size: 0px }} .ghost {{ opacity: 0 }}\
         .away {{ position: absolute; top: -10000px }}</style></head>\
         <body><h1>第十一回</h1>{body}</body></html>"
    );
    let server = TestServer::start().await;
    server.page("/11.html", &html);
    for (mode, rendered) in [(RenderMode::Never, false), (RenderMode::Always, true)] {
        let sink = crawl_one(&rendering(mode), &server, "/11.html").await;
        let page = sink.page(&server.url("/11.html"));
        assert_eq!(page.rendered, rendered);
        assert!(
            !page.text.contains("ZQX"),
            "{mode}: junk kept: {}",
            page.text
        );
        let text = canonical(&page.text);
        for clause in &clauses {
            assert!(
                text.contains(&canonical(clause)),
                "{mode}: lost {clause}: {}",
                page.text
            );
        }
    }
}

fn serde_json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Scripts written to hold the renderer: a busy loop that never yields, an allocation that
/// grows until the tab dies, and a flood of requests. Each page is abandoned within the render
/// timeout (or fails as the renderer crashes), the crawl goes on, and a plain page crawled after
/// them still renders: the browser survives its tabs.
#[tokio::test]
async fn scripts_that_loop_allocate_or_flood_are_abandoned_and_the_next_page_renders() {
    let server = TestServer::start().await;
    server.page(
        "/loop.html",
        &shell("死循环", "<script>while (true) {}</script>"),
    );
    server.page(
        "/allocate.html",
        &shell(
            "吃内存",
            "<script>var hoard = []; while (true) { hoard.push(new Array(1e6).fill(hoard.length)); }</script>",
        ),
    );
    server.page(
        "/flood.html",
        &shell(
            "请求风暴",
            "<script>function go() { for (var i = 0; i < 50; i++) { fetch('/flood-' + Math.random()).catch(function () {}); } setTimeout(go, 0); } go();</script>",
        ),
    );
    server.page(
        "/after.html",
        &shell(
            "第九回",
            &format!(
                "<script>document.getElementById('content').textContent = '{}';</script>",
                escaped(CHAPTER)
            ),
        ),
    );
    let config = CrawlConfig {
        render_timeout: Duration::from_secs(5),
        ..rendering(RenderMode::Always)
    };
    for path in ["/loop.html", "/allocate.html", "/flood.html"] {
        let started = std::time::Instant::now();
        let sink = crawl_one(&config, &server, path).await;
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{path} held the crawl for {:?}",
            started.elapsed()
        );
        if let Some(page) = sink.pages.first() {
            // Whatever was stored is the shell's text, never the script's work.
            assert!(
                page.text.len() < 10_000,
                "{path}: {} bytes",
                page.text.len()
            );
        } else {
            let reason = sink.failure(&server.url(path));
            assert!(!reason.is_empty(), "{path} failed without a reason");
        }
    }
    let sink = crawl_one(&config, &server, "/after.html").await;
    assert_has_chapter(&sink, &server, "/after.html");
}

/// Evidence of what the browser showed: a rendered page carries its DOM, the responses its
/// scripts used (with bodies within the crawl's body cap) and how it was rendered; a page read
/// without the browser carries none.
#[tokio::test]
async fn a_rendered_page_keeps_its_dom_and_the_responses_its_scripts_used() {
    let server = TestServer::start().await;
    let json = format!("{{\"content\":{}}}", serde_json_string(CHAPTER));
    let padding = "x".repeat(50_000);
    server
        .route(
            "/api/chapter/6.json",
            Route::with_type("application/json", json.clone()),
        )
        .route(
            "/app6.js",
            Route::with_type(
                "application/javascript",
                "var xhr = new XMLHttpRequest(); xhr.open('GET', '/api/chapter/6.json');\
                 xhr.onload = function () { document.getElementById('content').textContent = \
                 JSON.parse(xhr.responseText).content; }; xhr.send();",
            ),
        )
        .route(
            "/big.js",
            Route::with_type("application/javascript", format!("/*{padding}*/")),
        )
        .page(
            "/6.html",
            &shell(
                "第六回",
                "<script src=\"/app6.js\"></script><script src=\"/big.js\"></script>",
            ),
        )
        .page(
            "/7.html",
            &format!("<html><body><p>{CHAPTER}</p></body></html>"),
        );
    let config = CrawlConfig {
        max_body_bytes: 40_000,
        ..rendering(RenderMode::Auto)
    };
    let sink = crawl_one(&config, &server, "/6.html").await;
    assert_has_chapter(&sink, &server, "/6.html");
    let page = sink.page(&server.url("/6.html"));
    let rendering = page
        .rendering
        .as_ref()
        .expect("a rendered page keeps its rendering");
    assert!(canonical(&rendering.dom).contains(&canonical(CHAPTER)));
    assert!(
        rendering.browser.contains("Chrome"),
        "{}",
        rendering.browser
    );
    assert_eq!(
        rendering.settle_quiet,
        copytrace_crawler::render::SETTLE_QUIET
    );
    assert!(rendering.settled_after >= rendering.settle_quiet);
    let response = |suffix: &str| {
        rendering
            .subresponses
            .iter()
            .find(|r| r.url.ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix}: {:?}", rendering.subresponses))
    };
    let xhr = response("/api/chapter/6.json");
    assert_eq!((xhr.resource_type.as_str(), xhr.status), ("XHR", 200));
    assert_eq!(xhr.body.as_deref(), Some(json.as_bytes()));
    assert_eq!(response("/app6.js").resource_type, "Script");
    // Over the crawl's body cap: listed, with no more of it than the cap.
    let big = response("/big.js");
    let kept = big.body.as_ref().map_or(0, Vec::len);
    assert!(kept <= 40_000, "{kept} bytes of big.js kept");
    // The page's own document is the capture's, not a subresponse.
    assert!(
        rendering
            .subresponses
            .iter()
            .all(|r| !r.url.ends_with("/6.html"))
    );

    let sink = crawl_one(&config, &server, "/7.html").await;
    let page = sink.page(&server.url("/7.html"));
    assert!(!page.rendered);
    assert_eq!(page.rendering, None);
}
