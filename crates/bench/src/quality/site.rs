//! The pirate site of the benchmark, served on a loopback port for the real crawler.
//!
//! It looks like the sites it stands for: a header with navigation, ad lines, a sidebar of
//! other titles, a footer disclaimer on every page; a paginated table of contents (`/list/N.html`,
//! linked by 上一页/下一页) that the crawler must walk to find the pages; works split over
//! several pages linked in a chain; and some pages encoded in GBK or Big5 with the charset only
//! in a `<meta>` tag.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::disguise::{Page, PageEncoding};

/// The sitemap, at the path a crawler probes when robots.txt names none.
const SITEMAP: &str = "/sitemap.xml";

/// Links per page of the table of contents.
const LIST_PAGE_SIZE: usize = 40;

/// A rendered page: bytes on the wire and the `Content-Type` header.
#[derive(Clone)]
struct Rendered {
    body: Vec<u8>,
    content_type: &'static str,
}

/// Every path of the site with its response.
pub struct Site {
    files: HashMap<String, Rendered>,
    list_pages: usize,
    /// Pages linked from nowhere, listed only in the sitemap.
    sitemap_only: Vec<String>,
}

impl Site {
    /// Renders the pages. Only the first part of a split work is listed in the table of
    /// contents; the other parts are reached through its 下一页 links, as on real sites.
    pub fn render(pages: &[Page]) -> Site {
        let listed: Vec<&Page> = pages
            .iter()
            .filter(|p| p.prev.is_none() && p.disguise != "sitemap-only")
            .collect();
        let sitemap_only: Vec<String> = pages
            .iter()
            .filter(|p| p.disguise == "sitemap-only")
            .map(|p| p.path.clone())
            .collect();
        let sidebar: Vec<(&str, &str)> = listed
            .iter()
            .step_by(97)
            .take(8)
            .map(|p| (p.path.as_str(), p.title.as_str()))
            .collect();
        let mut files = HashMap::new();
        for page in pages {
            let (rendered, fragment) = render_page(page, &sidebar);
            files.insert(page.path.clone(), rendered);
            if let Some((path, json)) = fragment {
                files.insert(path, json);
            }
        }
        // Written with absolute URLs once the address is known (`serve`); here so the request
        // budget counts it.
        files.insert(
            SITEMAP.to_owned(),
            Rendered {
                body: Vec::new(),
                content_type: "application/xml",
            },
        );
        let list_pages = listed.len().div_ceil(LIST_PAGE_SIZE).max(1);
        for (n, chunk) in listed.chunks(LIST_PAGE_SIZE).enumerate() {
            files.insert(
                format!("/list/{}.html", n + 1),
                render_list(n + 1, list_pages, chunk),
            );
        }
        files.insert(
            "/robots.txt".to_owned(),
            Rendered {
                body: b"User-agent: *\nDisallow: /admin/\n".to_vec(),
                content_type: "text/plain",
            },
        );
        Site {
            files,
            list_pages,
            sitemap_only,
        }
    }

    /// Requests the crawler needs to fetch every page: pages, list pages, robots.txt and the
    /// home page.
    pub fn request_budget(&self) -> usize {
        self.files.len() + 2
    }

    /// Number of table-of-contents pages.
    pub fn list_pages(&self) -> usize {
        self.list_pages
    }

    /// Serves the site on `127.0.0.1` on a free port, on a background thread with its own
    /// runtime, until the process ends. Returns the address.
    pub fn serve(self) -> anyhow::Result<SocketAddr> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .context("cannot bind a loopback port for the benchmark site")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let mut files = self.files;
        let mut sitemap = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for path in &self.sitemap_only {
            sitemap.push_str(&format!("<url><loc>http://{address}{path}</loc></url>\n"));
        }
        sitemap.push_str("</urlset>\n");
        files.insert(
            SITEMAP.to_owned(),
            Rendered {
                body: sitemap.into_bytes(),
                content_type: "application/xml",
            },
        );
        let files = Arc::new(files);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime for the site");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                let app = Router::new()
                    .route("/", get(home))
                    .route("/{*path}", get(file))
                    .with_state(files);
                axum::serve(listener, app)
                    .await
                    .expect("the benchmark site");
            });
        });
        Ok(address)
    }
}

type Files = Arc<HashMap<String, Rendered>>;

async fn home(State(files): State<Files>) -> Response {
    serve_path(&files, "/list/1.html")
}

async fn file(State(files): State<Files>, Path(path): Path<String>) -> Response {
    serve_path(&files, &format!("/{path}"))
}

fn serve_path(files: &Files, path: &str) -> Response {
    match files.get(path) {
        Some(rendered) => (
            [(header::CONTENT_TYPE, rendered.content_type)],
            rendered.body.clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

const SITE_NAME: &str = "笔趣阁";

fn header_html() -> String {
    format!(
        "<div class=\"header\"><a href=\"/\">{SITE_NAME}</a> | <a href=\"/list/1.html\">玄幻小说</a> \
         | <a href=\"/list/1.html\">都市言情</a> | <a href=\"/list/1.html\">新闻资讯</a> \
         | <a href=\"/admin/login.html\">登录</a></div>\n\
         <div class=\"ad\">天才一秒记住本站地址：{SITE_NAME} www.biquge.example 最快更新！无广告！</div>\n"
    )
}

fn footer_html() -> &'static str {
    "<div class=\"footer\">本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，\
     让更多读者欣赏。如有侵权请联系删除。Copyright © 2026 笔趣阁 All Rights Reserved.</div>\n"
}

/// The page, and for a page whose text a script fetches, the fragment it fetches (path and
/// response).
fn render_page(page: &Page, sidebar: &[(&str, &str)]) -> (Rendered, Option<(String, Rendered)>) {
    let mut html =
        String::with_capacity(page.paragraphs.iter().map(String::len).sum::<usize>() * 2);
    let meta = match page.encoding {
        PageEncoding::Utf8 => "<meta charset=\"utf-8\">",
        PageEncoding::Gbk => {
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\">"
        }
        PageEncoding::Big5 => {
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=big5\">"
        }
    };
    html.push_str(&format!(
        "<!DOCTYPE html>\n<html><head>{meta}<title>{} - {SITE_NAME}</title></head>\n<body>\n",
        escape(&page.title)
    ));
    html.push_str(&header_html());
    html.push_str(&format!("<h1>{}</h1>\n", escape(&page.title)));
    let fragment = content_html(page, &mut html);
    html.push_str("<div class=\"pager\">");
    if let Some(prev) = &page.prev {
        html.push_str(&format!("<a href=\"{prev}\">上一页</a> "));
    }
    html.push_str("<a href=\"/list/1.html\">返回目录</a>");
    if let Some(next) = &page.next {
        html.push_str(&format!(" <a href=\"{next}\">下一页</a>"));
    }
    html.push_str("</div>\n<div class=\"sidebar\">热门推荐：");
    for (path, title) in sidebar {
        html.push_str(&format!("<a href=\"{path}\">{}</a> ", escape(title)));
    }
    html.push_str("</div>\n");
    html.push_str(footer_html());
    html.push_str("</body></html>\n");
    (encode(&html, page.encoding), fragment)
}

/// The page's text as its disguise delivers it: plain paragraphs, or (the rendered classes) an
/// empty content element filled by a script, from `document.write` of escaped string literals,
/// a percent-encoded or base64 blob or an `XMLHttpRequest` of a JSON fragment (returned, to be
/// served), the last three classes beside 200 to 600 characters of static reader comments, a
/// sidebar of blurbs or a list of related chapters (so the static text is not short), or
/// (`hidden-junk`) paragraphs strewn with junk that styles hide from a reader.
fn content_html(page: &Page, html: &mut String) -> Option<(String, Rendered)> {
    let paragraphs: String = page
        .paragraphs
        .iter()
        .map(|p| format!("<p>{}</p>", escape(p)))
        .collect();
    match page.disguise {
        "rendered-write-comments" => {
            html.push_str(&format!(
                "<div id=\"content\"><script>document.write(\"{}\");</script></div>\n",
                js_escaped(&paragraphs)
            ));
            html.push_str(&comments_html(page));
            None
        }
        "rendered-xhr-sidebar" => {
            let path = format!("/api/chapter{}.json", page.path.trim_end_matches(".html"));
            html.push_str(&format!(
                "<div class=\"col-right\">{}</div>\n<div id=\"chaptercontent\"></div>\n\
                 <script>var xhr = new XMLHttpRequest(); xhr.open('GET', '{path}');\
                 xhr.onload = function () {{ document.getElementById('chaptercontent').innerHTML = \
                 JSON.parse(xhr.responseText).html; }}; xhr.send();</script>\n",
                blurbs_html(page)
            ));
            let json = serde_json::json!({ "title": page.title, "html": paragraphs });
            Some((
                path,
                Rendered {
                    body: json.to_string().into_bytes(),
                    content_type: "application/json",
                },
            ))
        }
        "rendered-blob-related" => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(paragraphs.as_bytes());
            html.push_str(&format!(
                "<div id=\"txt\"></div>\n<script>var b = \"{blob}\";\
                 var bytes = Uint8Array.from(atob(b), function (c) {{ return c.charCodeAt(0); }});\
                 document.getElementById('txt').innerHTML = new TextDecoder().decode(bytes);</script>\n"
            ));
            html.push_str(&related_html(page));
            None
        }
        "rendered-write" => {
            html.push_str(&format!(
                "<div id=\"content\"><script>document.write(\"{}\");</script></div>\n",
                js_escaped(&paragraphs)
            ));
            None
        }
        "rendered-blob" => {
            let blob: String = paragraphs.bytes().map(|b| format!("%{b:02X}")).collect();
            html.push_str(&format!(
                "<div id=\"content\"></div>\n<script>var blob = \"{blob}\";\
                 document.getElementById('content').innerHTML = decodeURIComponent(blob);</script>\n"
            ));
            None
        }
        "rendered-xhr" => {
            let path = format!("/api/chapter{}.json", page.path.trim_end_matches(".html"));
            html.push_str(&format!(
                "<div id=\"content\"></div>\n<script>var xhr = new XMLHttpRequest();\
                 xhr.open('GET', '{path}');\
                 xhr.onload = function () {{ document.getElementById('content').innerHTML = \
                 JSON.parse(xhr.responseText).html; }};\
                 xhr.send();</script>\n"
            ));
            let json = serde_json::json!({ "title": page.title, "html": paragraphs });
            Some((
                path,
                Rendered {
                    body: json.to_string().into_bytes(),
                    content_type: "application/json",
                },
            ))
        }
        "hidden-junk" => {
            html.push_str(HIDING_STYLE);
            html.push_str("<div id=\"content\">\n");
            let mut n = 0usize;
            for p in &page.paragraphs {
                html.push_str("<p>");
                let chars: Vec<char> = p.chars().collect();
                for (i, piece) in chars.chunks(9).enumerate() {
                    html.push_str(&escape(&piece.iter().collect::<String>()));
                    if i % 2 == 0 {
                        let (open, close) = HIDERS[n % HIDERS.len()];
                        let junk: String = JUNK.chars().cycle().skip(n * 3).take(4).collect();
                        html.push_str(&format!("{open}{junk}{close}"));
                        n += 1;
                    }
                }
                html.push_str("</p>\n");
            }
            html.push_str("</div>\n");
            None
        }
        _ => {
            html.push_str("<div id=\"content\">\n");
            for p in &page.paragraphs {
                html.push_str(&format!("<p>{}</p>\n", escape(p)));
            }
            html.push_str("</div>\n");
            None
        }
    }
}

/// Reader comments (书友评论) of 200 to 600 characters, static beside a script-written chapter:
/// lines written for this benchmark, in the manner of real sites, chosen by the page's path.
fn comments_html(page: &Page) -> String {
    const LINES: [&str; 10] = [
        "这一章写得太精彩了，看得我热血沸腾，忍不住拍案叫绝。",
        "等了一整天终于等到了，这一段读来酣畅淋漓，痛快极了。",
        "人物的对话很有味道，几句话就把性格写活了，佩服佩服。",
        "这段情节反转得太妙了，完全没想到，伏笔埋得真深。",
        "主角的性格越来越讨喜了，配角也写得有血有肉，好评。",
        "看了三遍还是觉得不过瘾，每个细节都经得起推敲。",
        "作者对那个年代的风土人情很熟悉，写得真实可信。",
        "文笔细腻，描写生动，情节紧凑不拖沓，是难得的好书。",
        "有没有人和我一样，每天晚上睡前都要来这里看一看的？",
        "这本书我从第一天就开始看了，一路看下来真的很感动。",
    ];
    let seed = page.path.bytes().map(usize::from).sum::<usize>();
    let mut out = String::from("<div class=\"box\"><h3>书友评论</h3>\n");
    for i in 0..8 + seed % 5 {
        out.push_str(&format!(
            "<p>书友{}：{}</p>\n",
            (seed + i * 7) % 9_000 + 1_000,
            LINES[(seed + i) % LINES.len()]
        ));
    }
    out.push_str("</div>\n");
    out
}

/// A sidebar of book blurbs of 200 to 600 characters (titles and blurbs written for this
/// benchmark).
fn blurbs_html(page: &Page) -> String {
    const BOOKS: [(&str, &str); 8] = [
        (
            "星辰变",
            "一个不能修炼内功的少年，凭借坚韧的毅力踏上修仙之路，终成一代强者。",
        ),
        (
            "剑道独尊",
            "少年剑客出身寒微，一剑在手，横扫八荒六合，问鼎剑道之巅。",
        ),
        (
            "苍穹志",
            "天地不仁，以万物为刍狗，少年逆天而行，只为守护心中所爱之人。",
        ),
        (
            "九天录",
            "九天之上神魔并立，一名凡人少年意外得到上古传承，从此风云变色。",
        ),
        (
            "长生劫",
            "长生之路漫漫，劫难重重，他步步为营，终于看破生死轮回的秘密。",
        ),
        (
            "山河志",
            "乱世之中群雄并起，一介书生投笔从戎，以一己之力改写山河格局。",
        ),
        (
            "大荒纪",
            "大荒深处妖兽横行，部落少年为寻找失踪的父亲，踏入无尽荒原。",
        ),
        (
            "青云歌",
            "青云山下有少年，剑心通明，一路斩妖除魔，终成一代宗师。",
        ),
    ];
    let seed = page.path.bytes().map(usize::from).sum::<usize>();
    let mut out = String::from("<h3>本周强推</h3><ul>");
    for i in 0..7 + seed % 2 {
        let (title, blurb) = BOOKS[(seed + i) % BOOKS.len()];
        out.push_str(&format!("<li>《{title}》：{blurb}</li>"));
    }
    out.push_str("</ul>");
    out
}

/// Related chapters with their opening lines, 200 to 600 characters (written for this
/// benchmark).
fn related_html(page: &Page) -> String {
    const OPENINGS: [&str; 6] = [
        "夜色渐深，城中灯火次第熄灭，只有城楼上的更鼓声远远传来。",
        "清晨的山谷里雾气弥漫，几声鸟鸣打破了四下的寂静。",
        "马车在官道上颠簸前行，车帘被风吹起，露出一张苍白的脸。",
        "客栈里人声鼎沸，说书先生一拍醒木，众人顿时安静下来。",
        "大雪封山已有半月，村里的粮食一天比一天少了。",
        "江面上一叶扁舟顺流而下，船头立着一个披蓑衣的老人。",
    ];
    let seed = page.path.bytes().map(usize::from).sum::<usize>();
    let mut out = String::from("<div class=\"other\"><h3>相关章节</h3>\n");
    for i in 0..8 + seed % 3 {
        out.push_str(&format!(
            "<div class=\"item\"><p>第{}章：{}</p></div>\n",
            (seed + i * 13) % 900 + 100,
            OPENINGS[(seed + i) % OPENINGS.len()]
        ));
    }
    out.push_str("</div>\n");
    out
}

/// Class, id and descendant rules that hide the `hidden-junk` class's anti-copy characters.
const HIDING_STYLE: &str = "<style>.jm{display:none} #content b.x{visibility:hidden} \
    .tiny{font-size:0} .ghost{opacity:0} .away{position:absolute;left:-9999px}</style>\n";

/// Ways of hiding junk from a reader: the `hidden` attribute, inline styles, and the rules of
/// [`HIDING_STYLE`].
const HIDERS: [(&str, &str); 9] = [
    ("<span style=\"display:none\">", "</span>"),
    ("<span hidden>", "</span>"),
    ("<font class=\"jm\">", "</font>"),
    ("<b class=\"x\">", "</b>"),
    ("<span class=\"tiny\">", "</span>"),
    ("<i class=\"ghost\">", "</i>"),
    ("<span class=\"away\">", "</span>"),
    ("<span style=\"font-size:0px\">", "</span>"),
    ("<span style=\"opacity:0\">", "</span>"),
];

/// Anti-copy characters: site names and random-looking Han text, as pirate sites use.
const JUNK: &str = "笔趣阁首发请收藏本站最新网址天才一秒记住无弹窗广告免费阅读";

/// `s` as the inside of a JavaScript string literal of `\uXXXX` escapes only.
fn js_escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

fn render_list(n: usize, total: usize, pages: &[&Page]) -> Rendered {
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>最新更新 第{n}页 - \
         {SITE_NAME}</title></head>\n<body>\n{}<h1>最新更新</h1>\n<ul>\n",
        header_html()
    );
    for page in pages {
        html.push_str(&format!(
            "<li><a href=\"{}\">{}</a></li>\n",
            page.path,
            escape(&page.title)
        ));
    }
    html.push_str("</ul>\n<div class=\"pager\">");
    if n > 1 {
        html.push_str(&format!("<a href=\"/list/{}.html\">上一页</a> ", n - 1));
    }
    if n < total {
        html.push_str(&format!("<a href=\"/list/{}.html\">下一页</a>", n + 1));
    }
    html.push_str("</div>\n");
    // The first page jumps to every other one, as real sites' page selectors do: a crawler
    // stops following 下一页 after a hundred pages in a row (`max_page_chain`), and a large
    // run has more.
    if n == 1 && total > 2 {
        html.push_str("<div class=\"jump\">跳转：");
        for page in 2..=total {
            html.push_str(&format!("<a href=\"/list/{page}.html\">{page}</a> "));
        }
        html.push_str("</div>\n");
    }
    html.push_str(footer_html());
    html.push_str("</body></html>\n");
    encode(&html, PageEncoding::Utf8)
}

/// Encodes the page; characters the legacy encoding lacks become numeric character references,
/// as browsers and servers do.
fn encode(html: &str, encoding: PageEncoding) -> Rendered {
    match encoding {
        PageEncoding::Utf8 => Rendered {
            body: html.as_bytes().to_vec(),
            content_type: "text/html; charset=utf-8",
        },
        PageEncoding::Gbk | PageEncoding::Big5 => {
            let codec = if encoding == PageEncoding::Gbk {
                encoding_rs::GBK
            } else {
                encoding_rs::BIG5
            };
            let (bytes, _, _) = codec.encode(html);
            Rendered {
                body: bytes.into_owned(),
                // No charset in the header: the crawler must read the <meta> tag.
                content_type: "text/html",
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(path: &str, encoding: PageEncoding) -> Page {
        Page {
            path: path.to_owned(),
            disguise: "verbatim",
            expected: vec!["w".to_owned()],
            title: "標題 <b>".to_owned(),
            paragraphs: vec!["今天天氣很好。".to_owned(), "a < b & c".to_owned()],
            encoding,
            prev: None,
            next: None,
        }
    }

    /// The crawl side of the classes whose script-written chapter sits beside a static block:
    /// as served, the page's extracted text is that block, 200 to 600 characters (more than
    /// the old rule's 200, which therefore never rendered them), and `--render auto` renders
    /// it. (`render_auto` in the crawler's tests renders such pages in Chromium.)
    #[test]
    fn chapters_written_beside_static_blocks_have_long_static_text_and_are_rendered() {
        let chapter = "却说曹操引兵追赶，行至半路，忽见前面尘头大起，一彪军马拦住去路。".repeat(20);
        for (i, disguise) in [
            "rendered-write-comments",
            "rendered-xhr-sidebar",
            "rendered-blob-related",
        ]
        .into_iter()
        .enumerate()
        {
            for n in 0..8 {
                let mut p = page(&format!("/book/{i}{n:04}.html"), PageEncoding::Utf8);
                p.disguise = disguise;
                p.paragraphs = vec![chapter.clone()];
                let (rendered, _) = render_page(&p, &[("/a.html", "别的书")]);
                let html = String::from_utf8(rendered.body).unwrap();
                assert!(
                    !html.contains(&chapter[..30]),
                    "{disguise}: the chapter is static"
                );
                let doc = copytrace_crawler::extract::parse_html(&html);
                let (_, text) = copytrace_crawler::extract::title_and_text(&doc);
                let chars = text.chars().filter(|c| !c.is_whitespace()).count();
                assert!(
                    (200..=600).contains(&chars),
                    "{disguise} {n}: {chars} static characters: {text}"
                );
                let url = url::Url::parse("http://127.0.0.1/").unwrap();
                let links = copytrace_crawler::links::discover_in(&doc, &url).len();
                assert!(
                    copytrace_crawler::render::needs_rendering(
                        copytrace_crawler::RenderMode::Auto,
                        &doc,
                        &text,
                        links
                    ),
                    "{disguise} {n} is not rendered"
                );
            }
        }
    }

    #[test]
    fn legacy_encodings_round_trip_and_text_is_escaped() {
        let site = Site::render(&[
            page("/a.html", PageEncoding::Big5),
            page("/b.html", PageEncoding::Gbk),
        ]);
        let big5 = &site.files["/a.html"];
        assert_eq!(big5.content_type, "text/html");
        let (decoded, _, errors) = encoding_rs::BIG5.decode(&big5.body);
        assert!(!errors);
        assert!(decoded.contains("今天天氣很好。"));
        assert!(decoded.contains("a &lt; b &amp; c"));
        assert!(decoded.contains("charset=big5"));
        let (gbk, _, errors) = encoding_rs::GBK.decode(&site.files["/b.html"].body);
        assert!(!errors);
        assert!(
            gbk.contains("今天天氣很好。"),
            "GBK holds traditional characters too"
        );
    }

    #[test]
    fn the_table_of_contents_lists_every_first_part_across_pages() {
        let mut pages: Vec<Page> = (0..95)
            .map(|i| page(&format!("/p{i}.html"), PageEncoding::Utf8))
            .collect();
        pages[5].prev = Some("/p4.html".to_owned());
        let site = Site::render(&pages);
        assert_eq!(site.list_pages(), 3);
        let lists: String = (1..=3)
            .map(|n| {
                String::from_utf8(site.files[&format!("/list/{n}.html")].body.clone()).unwrap()
            })
            .collect();
        assert!(lists.contains("href=\"/p94.html\""));
        assert!(
            !lists.contains("href=\"/p5.html\""),
            "later parts are reached from part one"
        );
    }
}
