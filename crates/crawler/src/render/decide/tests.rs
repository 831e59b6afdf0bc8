//! Tests of the render decision on HTML fixtures.

use super::*;

/// A chapter's text, long enough to be one.
const CHAPTER: &str = "却说曹操引兵追赶，行至半路，忽见前面尘头大起，一彪军马拦住去路。\
    为首一员大将，手提长枪，高声大叫：丞相休走，赵子龙在此！曹操大惊，急令军士退后。\
    赵云纵马挺枪，杀入阵中，左冲右突，如入无人之境，曹军四散奔走，死伤无数。\
    曹操叹曰：真虎将也！遂传令休要放冷箭，只要捉活的。赵云怀抱幼主，直透重围而去。";

/// About 300 characters of reader comments, as a static block beside the chapter.
fn comments() -> String {
    let lines = [
        "书友甲：这一章写得太精彩了，赵云真是一身是胆，作者大大加油更新！",
        "书友乙：前排占座，等了一整天终于更新了，希望明天能多更几章。",
        "书友丙：曹操这个时候还想着捉活的，真是爱才如命，可惜赵云不会投降。",
        "书友丁：这段看了好几遍，每次都热血沸腾，强烈推荐给身边的朋友们。",
        "书友戊：作者的文笔越来越好了，人物刻画很细腻，情节紧凑不拖沓。",
        "书友己：求加更求加更，月票已投，打赏也送上了，坐等下一章。",
    ];
    let items: String = lines.iter().map(|l| format!("<li>{l}</li>")).collect();
    format!("<div class=\"pl\"><h3>书友评论</h3><ul>{items}</ul></div>")
}

fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

fn page(head: &str, body: &str) -> Html {
    Html::parse_document(&format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>第一章</title>{head}</head>\
         <body><div class=\"header\"><a href=\"/\">笔趣阁</a></div><h1>第一章 风起</h1>\
         {body}<div class=\"footer\">本站所有小说均来自网友上传。</div></body></html>"
    ))
}

/// The inline ad and analytics scripts of the second site: `document.write` of a
/// script tag and of a CNZZ counter, an `innerHTML` banner, AdSense, Baidu and a pixel.
const AD_SCRIPTS: &str = "<div id=\"a1\"></div>\
    <script>document.write('<script src=\"https://ads.example.net/show.js?id=7\"></scr'+'ipt>');</script>\
    <script>document.write(unescape(\"%3Cspan id='cnzz_stat_icon_1'%3E%3C/span%3E%3Cscript src='https://s4.cnzz.com/z_stat.php%3Fid%3D1' type='text/javascript'%3E%3C/script%3E\"));</script>\
    <script>document.getElementById('a1').innerHTML = '<a href=\"https://app.example.com/\"><img src=\"/img/app.png\"></a>';</script>\
    <ins class=\"adsbygoogle\" data-ad-slot=\"1\"></ins><script>(adsbygoogle = window.adsbygoogle || []).push({});</script>\
    <script>var _hmt = _hmt || []; (function() { var hm = document.createElement('script'); hm.src = 'https://hm.baidu.com/hm.js?abc'; var s = document.getElementsByTagName('script')[0]; s.parentNode.insertBefore(hm, s); })();</script>\
    <script>document.write('<img src=\"/stat.gif?r=' + escape(document.referrer) + '&t=' + Math.random() + '\" width=1 height=1>');</script>";

#[test]
fn a_chapter_written_by_document_write_beside_static_comments_is_rendered() {
    let doc = page(
        "",
        &format!(
            "<div id=\"content\"><script>document.write(\"{}\");</script></div>{}",
            escaped(&format!("<p>{CHAPTER}</p>")),
            comments()
        ),
    );
    // The static text is the comments: over 200 characters, which the old rule trusted.
    assert!(assess(&doc, &comments(), 3).is_some());
}

#[test]
fn a_chapter_fetched_by_xhr_beside_a_sidebar_is_rendered() {
    let sidebar: String = (0..12)
        .map(|i| {
            format!("<li><a href=\"/b/{i}.html\">热门小说第{i}部：重生之都市修仙传奇</a></li>")
        })
        .collect();
    let doc = page(
        "",
        &format!(
            "<div class=\"side\"><ul>{sidebar}</ul></div><div id=\"chaptercontent\"></div>\
             <script>var xhr = new XMLHttpRequest(); xhr.open('GET', '/api/c/1.json');\
             xhr.onload = function () {{ document.getElementById('chaptercontent').innerHTML = \
             JSON.parse(xhr.responseText).html; }}; xhr.send();</script>"
        ),
    );
    assert_eq!(
        assess(&doc, &"热门小说".repeat(80), 12),
        Some(Reason::ScriptWritesText)
    );
}

#[test]
fn a_base64_chapter_in_an_unnamed_element_beside_related_links_is_rendered() {
    use base64::Engine as _;
    let blob = base64::engine::general_purpose::STANDARD.encode(CHAPTER.repeat(3));
    let related: String = (0..8)
        .map(|i| format!("<p>相关阅读：第{i}章 重逢故人，夜探古城，血战雪山之巅</p>"))
        .collect();
    let doc = page(
        "",
        &format!(
            "<div id=\"x7f\"></div><div>{related}</div><script>var b = \"{blob}\";\
             var t = new TextDecoder().decode(Uint8Array.from(atob(b), function (c) \
             {{ return c.charCodeAt(0); }})); document.getElementById('x7f').textContent = t;\
             </script>"
        ),
    );
    assert_eq!(
        assess(&doc, &"相关阅读".repeat(60), 8),
        Some(Reason::ScriptWritesText)
    );
}

#[test]
fn an_empty_content_element_filled_by_an_external_script_is_rendered() {
    let doc = page(
        "",
        &format!(
            "<div id=\"booktext\">正在加载…</div>{}<script src=\"/js/read.js\"></script>",
            comments()
        ),
    );
    assert_eq!(assess(&doc, &comments(), 3), Some(Reason::EmptyContent));
    let app = page(
        "",
        "<div id=\"app\"></div><script src=\"/static/js/app.3f9.js\"></script>",
    );
    assert_eq!(assess(&app, "", 0), Some(Reason::EmptyContent));
}

#[test]
fn an_element_a_script_fills_from_a_variable_is_rendered_when_no_slot_holds_the_body() {
    let doc = page(
        "<script>var chapter = window.name;</script>",
        "<div id=\"q9\"></div><script>document.getElementById('q9').innerHTML = chapter;</script>\
         <ul><li><a href=\"/1.html\">上一章</a></li></ul>",
    );
    assert_eq!(assess(&doc, "上一章", 1), Some(Reason::ScriptFillsElement));
}

#[test]
fn pages_whose_only_scripts_are_ads_or_analytics_are_not_rendered() {
    let article = page(
        "",
        &format!("<div class=\"article-content\"><p>{CHAPTER}</p></div>{AD_SCRIPTS}"),
    );
    assert_eq!(assess(&article, CHAPTER, 20), None);
    // A short list page and a near-empty tag page, the same ads: still nothing to render.
    let items: String = (0..15)
        .map(|i| format!("<li><a href=\"/a/{i}.html\">第{i}篇</a></li>"))
        .collect();
    let list = page(
        "",
        &format!("<div id=\"content\"><ul>{items}</ul></div>{AD_SCRIPTS}"),
    );
    assert_eq!(assess(&list, "第1篇", 15), None);
    let tag = page(
        "",
        &format!("<div id=\"content\">暂无文章</div>{AD_SCRIPTS}"),
    );
    assert_eq!(assess(&tag, "暂无文章", 3), None);
    let bare = page(
        "",
        &format!("<div class=\"box\">标签：历史</div>{AD_SCRIPTS}"),
    );
    assert_eq!(assess(&bare, "标签：历史", 3), None);
}

#[test]
fn a_page_whose_content_element_holds_the_text_is_not_rendered_for_a_small_write() {
    let doc = page(
        "",
        &format!(
            "<div id=\"content\"><p>{CHAPTER}</p><span id=\"views\"></span></div>\
             <script>document.getElementById('views').innerHTML = count;\
             document.write(new Date().getFullYear());</script>"
        ),
    );
    assert_eq!(assess(&doc, CHAPTER, 5), None);
    let plain = page("", "<div id=\"content\"></div>");
    assert_eq!(assess(&plain, "", 0), None, "no script, nothing to render");
}

#[test]
fn short_pages_keep_the_old_rule_for_scripts_that_may_write() {
    let external = page(
        "",
        "<div class=\"box\"></div><script src=\"/app.js\"></script>",
    );
    assert_eq!(assess(&external, "短", 5), Some(Reason::ShortText));
    // A table of contents with an external or analytics script has its text in links.
    assert_eq!(assess(&external, "短", 500), None);
    let analytics = page(
        "",
        "<script>var hm = document.createElement(\"script\");</script>",
    );
    assert_eq!(assess(&analytics, "短", 5), None);
}

#[test]
fn literals_are_decoded_for_prose() {
    let mut lits = Vec::new();
    for_each_literal(
        "var a = '\\u4f60\\u597d'; // it's a comment\nvar b = \"x\\\"y\";",
        |l| {
            lits.push(l.to_owned());
            true
        },
    );
    assert_eq!(lits, ["你好", "x\"y"]);
    assert_eq!(prose_chars(&"%E4%BD%A0".repeat(10)), 10);
    assert_eq!(prose_chars("https://hm.baidu.com/hm.js?abcdef"), 0);
    assert_eq!(prose_chars("<a href=\"/x\"><img src=\"/a.png\"></a>"), 0);
    assert!(is_literal(
        "'<img src=\"/s.gif?r=' + escape(document.referrer) + '\">');"
    ));
    assert!(!is_literal("'<p>' + data.html + '</p>';"));
    assert!(!is_literal("content;"));
}

#[test]
fn templates_fold_digits_and_tell_page_shapes_apart() {
    let url = |s: &str| Url::parse(s).unwrap();
    let chapter = |n: usize| {
        page(
            "",
            &format!("<div id=\"content\"><p>{n}{CHAPTER}</p></div><div class=\"pl{n}\"></div>"),
        )
    };
    let a = Template::of(&url("http://s.example/book/12/345.html"), &chapter(1));
    let b = Template::of(&url("http://s.example/book/7/8.html"), &chapter(22));
    assert_eq!(a, b);
    let list = page("", "<ul class=\"list\"><li>1</li></ul>");
    assert_ne!(
        a,
        Template::of(&url("http://s.example/book/7/8.html"), &list)
    );
    assert_ne!(
        a,
        Template::of(&url("http://s.example/tag/8.html"), &chapter(1))
    );
    assert_ne!(
        a,
        Template::of(&url("http://t.example/book/7/8.html"), &chapter(1))
    );
    // Ads rotate from page to page of one template: which slots a page shows says nothing.
    let with_ads = |n: usize, slots: &str| {
        page(
            "",
            &format!(
                "<div id=\"content\"><p>{n}{CHAPTER}</p></div><div class=\"pl{n}\"></div>{slots}"
            ),
        )
    };
    let one = with_ads(
        3,
        "<div id=\"ad_top_3\"></div><script>x()</script><ins class=\"adsbygoogle\"></ins>",
    );
    let other = with_ads(4, "<div class=\"gg_b\"></div><iframe src=\"/a\"></iframe>");
    assert_eq!(
        Template::of(&url("http://s.example/book/1/3.html"), &one),
        Template::of(&url("http://s.example/book/1/4.html"), &other)
    );
    assert_eq!(
        a,
        Template::of(&url("http://s.example/book/1/4.html"), &other)
    );
}

#[tokio::test]
async fn a_template_whose_renders_gain_nothing_stops_being_rendered_and_one_that_gains_does_not() {
    let memory = std::sync::Arc::new(RenderMemory::default());
    let (idle, busy) = (Template(1), Template(2));
    for _ in 0..TEMPLATE_TRIALS {
        assert!(memory.admit(idle).await);
    }
    // A fourth page waits while the trials render; a failed trial lets it take its place.
    let waiting = tokio::spawn({
        let memory = memory.clone();
        async move { memory.admit(idle).await }
    });
    // It gives its crawl slot back while it waits.
    tokio::time::timeout(std::time::Duration::from_secs(5), memory.slot_freed())
        .await
        .expect("a waiting page frees its slot");
    assert!(!waiting.is_finished());
    assert_eq!(memory.parked(), 1);
    memory.record(idle, None);
    assert!(waiting.await.unwrap());
    assert_eq!(memory.parked(), 0);
    for _ in 0..TEMPLATE_TRIALS {
        memory.record(idle, Some(false));
    }
    assert!(!memory.admit(idle).await);
    assert!(!memory.admit(idle).await);
    assert_eq!(memory.skipped(), 2);
    assert!(memory.admit(busy).await);
    memory.record(busy, Some(true));
    for _ in 0..10 {
        assert!(memory.admit(busy).await);
        memory.record(busy, Some(false));
    }
    assert_eq!(memory.skipped(), 2);
}

#[test]
fn gained_text_counts_only_paragraphs_the_static_text_lacked() {
    let comments = "书友甲：好看\n书友乙：加油";
    assert!(gained_text(comments, &format!("{CHAPTER}\n{comments}")));
    assert!(!gained_text(comments, comments));
    assert!(!gained_text(
        comments,
        &format!("{comments}\n广告：下载APP")
    ));
}

#[test]
fn a_deeply_nested_page_is_assessed_without_recursion() {
    let html = format!(
        "<html><body>{}<div id=content></div><script>document.write(x)</script></body></html>",
        "<div>".repeat(5_000)
    );
    let doc = Html::parse_document(&html);
    assert!(assess(&doc, "", 0).is_some());
    let _ = Template::of(&Url::parse("http://s.example/").unwrap(), &doc);
}

#[test]
fn scripts_are_read_whatever_the_case_of_their_calls() {
    let script =
        read_script("var c = JSON.parse(r); Document.getElementById('Box').InnerHTML = c.Text;");
    assert!(script.writes && script.opaque_write, "{script:?}");
    assert_eq!(script.targets, ["Box"]);
    let fetching = read_script("var x = new XMLHttpRequest(); $('#txt').Html(x.responseText);");
    assert!(fetching.fetches && fetching.writes && fetching.opaque_write);
    assert_eq!(fetching.targets, ["txt"]);
    let counter = read_script("var _HMT = _hmt || []; document.Write('<img src=\"/p.gif\">');");
    assert!(counter.ad && counter.writes && !counter.opaque_write);
}

#[test]
fn literals_end_at_their_quote_or_line_and_stop_when_asked() {
    let mut lits = Vec::new();
    for_each_literal(
        "a = 'one'; /* 'no' */ b = \"tw\\x6f\nc = `th\nree`; d = 'four';",
        |l| {
            lits.push(l.to_owned());
            lits.len() < 3
        },
    );
    assert_eq!(lits, ["one", "two", "th\nree"]);
    let payload = format!("var t = '{}'; var u = 'x';", "天".repeat(100));
    assert!(literal_prose(&payload, PAYLOAD_PROSE_CHARS) >= PAYLOAD_PROSE_CHARS);
    assert_eq!(literal_prose("var u = 'https://a.example/x.js';", 80), 0);
}

#[test]
fn a_site_script_file_is_read_for_what_it_can_do() {
    assert_eq!(
        read_script_file("window.siteReady = true; function toggle(m) { m.open = !m.open; }"),
        ScriptFile::Inert
    );
    assert_eq!(
        read_script_file("var _hmt = _hmt || []; document.write('<img src=\"/p.gif\">');"),
        ScriptFile::Inert
    );
    for writer in [
        "document.getElementById('content').innerHTML = chapter;",
        "fetch('/api/c/1').then(r => r.json()).then(show);",
        "var s = document.createElement('script'); s.src = '/reader.js'; document.head.appendChild(s);",
    ] {
        assert_eq!(read_script_file(writer), ScriptFile::MayWrite, "{writer}");
    }
}

#[test]
fn a_page_that_would_be_rendered_for_an_unread_site_script_asks_for_it_first() {
    let tag = page(
        "<script src=\"/js/common.js\"></script><script src=\"https://cdn.example/x.js\"></script>",
        "<div class=\"box\"><h2>标签</h2><a href=\"/b/1.html\">章一</a></div>",
    );
    let url = Url::parse("http://s.example/tag/1.html").unwrap();
    let common = Url::parse("http://s.example/js/common.js").unwrap();
    assert_eq!(assess(&tag, "标签 章一", 1), Some(Reason::ShortText));
    assert_eq!(
        decide(&tag, "标签 章一", 1, &url, &|_| None),
        Decision::ReadScripts(vec![common.clone()])
    );
    // Read as inert, the site's file sends nothing on; the other site's file still may write.
    let inert = |u: &Url| (*u == common).then_some(ScriptFile::Inert);
    assert_eq!(
        decide(&tag, "标签 章一", 1, &url, &inert),
        Decision::Render(Reason::ShortText)
    );
    let only_site = page(
        "<script src=\"/js/common.js\"></script>",
        "<div class=\"box\"><h2>标签</h2><a href=\"/b/1.html\">章一</a></div>",
    );
    assert_eq!(
        decide(&only_site, "标签 章一", 1, &url, &inert),
        Decision::Static
    );
    let writes = |u: &Url| (*u == common).then_some(ScriptFile::MayWrite);
    assert_eq!(
        decide(&only_site, "标签 章一", 1, &url, &writes),
        Decision::Render(Reason::ShortText)
    );
}
