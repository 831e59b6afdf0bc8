//! `--render auto` decides from a page's content, in real headless Chromium against real local
//! servers: chapters written by `document.write`, an `XMLHttpRequest` of JSON or a base64 blob
//! beside 200–600 characters of static comments, a sidebar or related links are rendered (the
//! static text's size said they were pages already); a site whose every page carries inline ad
//! and analytics scripts that write with `document.write` and `innerHTML` renders nothing; and
//! a page template whose renders gain nothing stops being rendered after a few.
//!
//! These tests need Chromium and fail without it (`./scripts/test` installs Debian's).

use std::time::Duration;

use copytrace_crawler::render::decide::TEMPLATE_TRIALS;
use copytrace_crawler::{CrawlConfig, RenderMode, crawl};

use crate::helpers::{Recorder, Route, TestServer, local_config};

/// A chapter's text: what the browser must find.
const CHAPTER: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，\
    楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，\
    遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，\
    大将军窦武、太傅陈蕃共相辅佐。时有宦官曹节等弄权，窦武、陈蕃谋诛之，机事不密，反为所害。";

fn chromium() -> std::path::PathBuf {
    copytrace_browser::find_chromium(None, std::env::var_os("PATH").as_deref()).unwrap_or_else(
        |e| panic!("the rendering tests need Chromium ({e}); ./scripts/test installs it"),
    )
}

fn config(mode: RenderMode) -> CrawlConfig {
    CrawlConfig {
        render: mode,
        chromium: Some(chromium()),
        render_timeout: Duration::from_secs(15),
        ..local_config()
    }
}

fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

fn canonical(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !c.is_ascii_punctuation())
        .collect()
}

fn non_whitespace(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

/// Reader comments (书友评论) of about 450 characters, in a block no class name marks.
fn comments() -> String {
    let lines = [
        "书友甲：这一章写得太精彩了，天下大势分分合合，作者对历史的理解真是深刻，加油更新！",
        "书友乙：前排占座，等了一整天终于更新了，希望明天能多更几章，月票已经投了。",
        "书友丙：开篇这几句话我背了好多年，今天在这里看到还是觉得热血沸腾，强烈推荐。",
        "书友丁：宦官弄权这一段写得好，窦武陈蕃太可惜了，机事不密反为所害，读来唏嘘。",
        "书友戊：作者的文笔越来越好了，人物刻画很细腻，情节紧凑不拖沓，期待后面的桃园结义。",
        "书友己：求加更求加更，打赏也送上了，坐等下一章，希望不要断更，拜托拜托。",
        "书友庚：第一次在这里看书，没想到评论区这么热闹，大家都是老书迷了吧。",
        "书友辛：桓帝灵帝这一段交代得清清楚楚，比教科书有意思多了，收藏了。",
        "书友壬：每天下班第一件事就是来看更新，已经成了习惯，感谢作者。",
        "书友癸：看到这里忍不住又从头看了一遍，细节真的经得起推敲。",
    ];
    let items: String = lines.iter().map(|l| format!("<p>{l}</p>")).collect();
    format!("<div class=\"box\"><h3>书友评论</h3>{items}</div>")
}

/// A sidebar of book blurbs, about 260 characters.
fn sidebar() -> String {
    let books = [
        "《星辰变》：一个不能修炼内功的少年，凭借坚韧的毅力踏上修仙之路，终成一代强者。",
        "《剑道独尊》：少年剑客出身寒微，一剑在手，横扫八荒六合，问鼎剑道巅峰。",
        "《苍穹志》：天地不仁，以万物为刍狗，少年逆天而行，只为守护心中所爱之人。",
        "《九天录》：九天之上，神魔并立，一名凡人少年意外得到上古传承，从此风云变色。",
        "《长生劫》：长生之路漫漫，劫难重重，他步步为营，终于看破生死轮回的秘密。",
        "《山河志》：乱世之中群雄并起，一介书生投笔从戎，以一己之力改写山河格局。",
        "《大荒纪》：大荒深处妖兽横行，部落少年为寻找失踪的父亲，踏入无尽荒原。",
    ];
    let items: String = books.iter().map(|b| format!("<li>{b}</li>")).collect();
    format!("<div class=\"col-right\"><h3>本周强推</h3><ul>{items}</ul></div>")
}

/// Related articles with their first lines, about 420 characters.
fn related() -> String {
    let items: String = (1..=8)
        .map(|i| {
            format!(
                "<div class=\"item\"><p>第{i}回 宴桃园豪杰三结义：玄德、关、张三人焚香再拜而说誓，\
                 同心协力，救困扶危。</p></div>"
            )
        })
        .collect();
    format!("<div class=\"other\"><h3>相关章节</h3>{items}</div>")
}

/// The chapter as long as a real one: a few times [`CHAPTER`].
fn long_chapter() -> String {
    CHAPTER.repeat(4)
}

fn chapter_page(title: &str, content: &str, beside: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head><body>\
         <div class=\"header\"><a href=\"/\">书海阁</a></div><h1>{title}</h1>{content}{beside}\
         <p><a href=\"/\">目录</a></p></body></html>"
    )
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

#[tokio::test]
async fn script_written_chapters_beside_comments_sidebars_or_related_lists_are_rendered() {
    use base64::Engine;
    let server = TestServer::start().await;
    let write = format!(
        "<div id=\"content\"><script>document.write(\"{}\");</script></div>",
        escaped(&format!("<p>{}</p>", long_chapter()))
    );
    let xhr = "<div id=\"chaptercontent\"></div><script>var xhr = new XMLHttpRequest();\
               xhr.open('GET', '/api/chapter/2.json');\
               xhr.onload = function () { document.getElementById('chaptercontent').innerHTML = \
               JSON.parse(xhr.responseText).html; }; xhr.send();</script>";
    let blob = base64::engine::general_purpose::STANDARD.encode(long_chapter().as_bytes());
    let base64 = format!(
        "<div id=\"txt\"></div><script>var b = \"{blob}\";\
         var bytes = Uint8Array.from(atob(b), function (c) {{ return c.charCodeAt(0); }});\
         document.getElementById('txt').textContent = new TextDecoder().decode(bytes);</script>"
    );
    let json = format!("{{\"html\":\"<p>{}</p>\"}}", long_chapter());
    server.route(
        "/api/chapter/2.json",
        Route::with_type("application/json", json),
    );
    let pages = [
        ("/1.html", chapter_page("第一回", &write, &comments())),
        ("/2.html", chapter_page("第二回", xhr, &sidebar())),
        ("/3.html", chapter_page("第三回", &base64, &related())),
        ("/4.html", chapter_page("第四回", &write, &sidebar())),
        ("/5.html", chapter_page("第五回", xhr, &related())),
        ("/6.html", chapter_page("第六回", &base64, &comments())),
    ];
    for (path, html) in &pages {
        server.page(path, html);
    }
    for (path, _) in &pages {
        // As served, each page's text is its static block: 200 to 600 characters, more than
        // the old rule's 200, and without a line of the chapter.
        let static_only = crawl_one(&config(RenderMode::Never), &server, path).await;
        let text = &static_only.page(&server.url(path)).text;
        assert!(
            (200..=600).contains(&non_whitespace(text)),
            "{path}: {} static characters: {text}",
            non_whitespace(text)
        );
        assert!(!canonical(text).contains(&canonical(&CHAPTER[..30])));

        let sink = crawl_one(&config(RenderMode::Auto), &server, path).await;
        let page = sink.page(&server.url(path));
        assert!(page.rendered, "{path} was not rendered");
        assert!(
            canonical(&page.text).contains(&canonical(CHAPTER)),
            "{path}: the stored text lacks the chapter: {}",
            page.text
        );
    }
}

/// The inline ad and analytics scripts of a news site: `document.write` of an ad server's
/// script and of a CNZZ counter, an `innerHTML` banner, AdSense, Baidu Tongji, a pixel.
const AD_SCRIPTS: &str = "<div id=\"a1\"></div>\
    <script>document.write('<script src=\"/show.js?id=7\"></scr'+'ipt>');</script>\
    <script>document.write(unescape(\"%3Cspan id='cnzz_stat_icon_1'%3E%3C/span%3E\"));</script>\
    <script>document.getElementById('a1').innerHTML = '<a href=\"/app/\"><img src=\"/app.png\"></a>';</script>\
    <ins class=\"adsbygoogle\" data-ad-slot=\"1\"></ins><script>(adsbygoogle = window.adsbygoogle || []).push({});</script>\
    <script>var _hmt = _hmt || []; (function() { var hm = document.createElement('script'); hm.src = '/hm.js'; var s = document.getElementsByTagName('script')[0]; s.parentNode.insertBefore(hm, s); })();</script>\
    <script>document.write('<img src=\"/stat.gif?r=' + escape(document.referrer) + '\" width=1 height=1>');</script>";

fn news_page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head><body>\
         <div class=\"nav\"><a href=\"/\">首页</a> <a href=\"/list/1.html\">国内</a> \
         <a href=\"/tag/1.html\">标签</a></div><h1>{title}</h1>{body}{AD_SCRIPTS}\
         <div class=\"footer\">版权所有 © 2026 新闻网</div></body></html>"
    )
}

#[tokio::test]
async fn a_site_whose_every_page_has_inline_ad_scripts_renders_no_page() {
    let server = TestServer::start().await;
    server
        .route("/show.js", Route::with_type("application/javascript", ""))
        .route("/hm.js", Route::with_type("application/javascript", ""));
    let articles = 12;
    let mut list = String::from("<div id=\"content\"><ul>");
    for i in 1..=articles {
        list.push_str(&format!("<li><a href=\"/a/{i}.html\">第{i}篇</a></li>"));
        let body = format!(
            "<div class=\"article-content\"><p>{CHAPTER}</p><p>记者 {i} 报道。</p></div>\
             <p><a href=\"/tag/{i}.html\">标签{i}</a></p>"
        );
        server.page(
            &format!("/a/{i}.html"),
            &news_page(&format!("新闻{i}"), &body),
        );
        // Tag pages: short, a handful of links, the same ad scripts.
        server.page(
            &format!("/tag/{i}.html"),
            &news_page(
                &format!("标签{i}"),
                &format!("<div id=\"content\"><a href=\"/a/{i}.html\">新闻{i}</a></div>"),
            ),
        );
    }
    list.push_str("</ul></div>");
    server.page("/list/1.html", &news_page("国内", &list));
    server.page("/", &news_page("首页", &list));
    let mut sink = Recorder::default();
    let report = crawl(&config(RenderMode::Auto), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(sink.pages.len(), 2 + 2 * articles, "{:?}", sink.failures);
    assert_eq!(report.stats.rendered, 0, "rendered: {:?}", rendered(&sink));
    assert_eq!(report.stats.render_skipped, 0);
    for i in 1..=articles {
        let page = sink.page(&server.url(&format!("/a/{i}.html")));
        assert!(canonical(&page.text).contains(&canonical(CHAPTER)));
    }
    // No script the ads wrote was ever requested: no page was opened in a browser.
    assert_eq!(server.times_requested("/show.js"), 0);
}

fn rendered(sink: &Recorder) -> Vec<String> {
    sink.pages
        .iter()
        .filter(|p| p.rendered)
        .map(|p| p.url.path().to_owned())
        .collect()
}

/// Short pages of a site whose own script file writes nothing (`common.js` sets a flag): the
/// file is read once, and no page goes to the browser for it. Pages beside a script file that
/// writes the chapter still do.
#[tokio::test]
async fn a_site_script_file_that_writes_nothing_is_read_once_and_sends_no_page_to_the_browser() {
    let server = TestServer::start().await;
    server.route(
        "/js/common.js",
        Route::with_type(
            "application/javascript",
            "window.siteReady = true; var menu = { open: false };",
        ),
    );
    server.route(
        "/js/read.js",
        Route::with_type(
            "application/javascript",
            format!(
                "document.getElementById('content').textContent = '{}';",
                escaped(&long_chapter())
            ),
        ),
    );
    let count = 8;
    let mut index = String::new();
    for i in 1..=count {
        index.push_str(&format!(
            "<a href=\"/tag/{i}.html\">签{i}</a> <a href=\"/book/{i}.html\">章{i}</a> "
        ));
        server.page(
            &format!("/tag/{i}.html"),
            &format!(
                "<html><head><title>标签{i}</title><script src=\"/js/common.js\"></script></head>\
                 <body><div class=\"box\"><h2>标签{i}</h2><a href=\"/book/{i}.html\">章{i}</a></div>\
                 </body></html>"
            ),
        );
        server.page(
            &format!("/book/{i}.html"),
            &chapter_page(
                &format!("第{i}回"),
                "<div id=\"content\"></div><script src=\"/js/read.js\"></script>\
                 <script src=\"/js/common.js\"></script>",
                &sidebar(),
            ),
        );
    }
    server.page(
        "/",
        &format!("<html><head><title>目录</title></head><body><div>{index}</div></body></html>"),
    );
    let mut sink = Recorder::default();
    let report = crawl(&config(RenderMode::Auto), &[server.url("/")], &mut sink)
        .await
        .unwrap();
    assert_eq!(sink.pages.len(), 1 + 2 * count, "{:?}", sink.failures);
    let rendered = rendered(&sink);
    assert!(
        rendered.iter().all(|p| p.starts_with("/book/")),
        "rendered: {rendered:?}"
    );
    assert_eq!(report.stats.rendered, count, "rendered: {rendered:?}");
    assert_eq!(report.stats.render_skipped, 0);
    for i in 1..=count {
        let page = sink.page(&server.url(&format!("/book/{i}.html")));
        assert!(canonical(&page.text).contains(&canonical(CHAPTER)));
    }
    // Read once by the crawl for its decisions (the browser, rendering the chapters, asks for
    // it too, as a page's script).
    assert!(
        (1..=1 + count).contains(&server.times_requested("/js/common.js")),
        "common.js requested {} times",
        server.times_requested("/js/common.js")
    );
}

/// Pages whose empty content element an external script leaves empty (it only counts
/// visits, reporting each to the server): the first renders of their template gain nothing,
/// and the rest are not rendered.
/// Beside them, pages of another template whose script does write the chapter are all
/// rendered.
#[tokio::test]
async fn a_template_whose_renders_gain_nothing_stops_being_rendered_and_one_that_gains_does_not() {
    let server = TestServer::start().await;
    let count = 10;
    server.route(
        "/js/count.js",
        Route::with_type(
            "application/javascript",
            "fetch('/js/visit').then(function () { window.visits = (window.visits || 0) + 1; });",
        ),
    );
    server.route(
        "/js/read.js",
        Route::with_type(
            "application/javascript",
            format!(
                "document.getElementById('content').textContent = '{}';",
                escaped(&long_chapter())
            ),
        ),
    );
    let mut index = String::new();
    for i in 1..=count {
        index.push_str(&format!(
            "<a href=\"/idle/{i}.html\">闲{i}</a> <a href=\"/book/{i}.html\">章{i}</a> "
        ));
        server.page(
            &format!("/idle/{i}.html"),
            &chapter_page(
                &format!("闲话{i}"),
                "<div id=\"content\"></div><script src=\"/js/count.js\"></script>",
                &comments(),
            ),
        );
        server.page(
            &format!("/book/{i}.html"),
            &chapter_page(
                &format!("第{i}回"),
                "<div id=\"content\"></div><script src=\"/js/read.js\"></script>",
                &sidebar(),
            ),
        );
    }
    server.page(
        "/",
        &format!("<html><head><title>目录</title></head><body><div>{index}</div></body></html>"),
    );
    let config = CrawlConfig {
        concurrency: 2,
        per_host_concurrency: 2,
        ..config(RenderMode::Auto)
    };
    let mut sink = Recorder::default();
    let report = crawl(&config, &[server.url("/")], &mut sink).await.unwrap();
    assert_eq!(sink.pages.len(), 1 + 2 * count, "{:?}", sink.failures);
    for i in 1..=count {
        let page = sink.page(&server.url(&format!("/book/{i}.html")));
        assert!(page.rendered, "/book/{i}.html was not rendered");
        assert!(canonical(&page.text).contains(&canonical(CHAPTER)));
    }
    let idle_rendered = rendered(&sink)
        .iter()
        .filter(|p| p.starts_with("/idle/"))
        .count();
    // The trials, and at most the pages in flight when the last of them came back.
    let most = TEMPLATE_TRIALS as usize + config.concurrency;
    assert!(
        (TEMPLATE_TRIALS as usize..=most).contains(&idle_rendered),
        "{idle_rendered} idle pages rendered"
    );
    assert_eq!(report.stats.render_skipped, count - idle_rendered);
    assert_eq!(report.stats.rendered, count + idle_rendered);
}
