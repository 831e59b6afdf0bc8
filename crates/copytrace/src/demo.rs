//! The bundled demo: a small source library and a sample piracy site served on loopback.
//!
//! The sample site carries, each on its own page, the disguises the foundation must see
//! through (a verbatim copy in pirate-site boilerplate, a Traditional-Chinese copy, a
//! GBK-encoded copy, a copy with ads injected between paragraphs, an excerpt embedded in other
//! text), a copy under a path robots.txt forbids, and unrelated pages, two of them hard
//! negatives sharing only a dateline or a classical quotation with a work. Every page knows
//! which works it copies, so the demo checks its own report and integration tests reuse the
//! same site.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

mod run;

pub use run::run_demo;

/// A library work bundled with the binary: `(external id, text)`.
pub const LIBRARY: [(&str, &str); 4] = [
    (
        "xingchen-ch1",
        include_str!("../demo/library/xingchen-ch1.txt"),
    ),
    (
        "xingchen-ch2",
        include_str!("../demo/library/xingchen-ch2.txt"),
    ),
    (
        "jianghu-ch1",
        include_str!("../demo/library/jianghu-ch1.txt"),
    ),
    (
        "news-harbor",
        include_str!("../demo/library/news-harbor.txt"),
    ),
];

/// Unrelated texts a pirate site also carries.
pub const UNRELATED: [(&str, &str); 4] = [
    ("cooking", include_str!("../demo/unrelated/cooking.txt")),
    ("tech-news", include_str!("../demo/unrelated/tech-news.txt")),
    (
        "essay-quote",
        include_str!("../demo/unrelated/essay-quote.txt"),
    ),
    (
        "another-novel",
        include_str!("../demo/unrelated/another-novel.txt"),
    ),
];

const BOILERPLATE: &str = include_str!("../demo/site/boilerplate.txt");

/// One page of the sample site.
#[derive(Debug, Clone)]
pub struct SamplePage {
    /// URL path, starting with `/`.
    pub path: String,
    /// What the disguise is, for people reading the demo output.
    pub label: &'static str,
    /// `Content-Type` header value.
    pub content_type: &'static str,
    /// Response body.
    pub body: Vec<u8>,
    /// External ids of the works this page copies (empty for unrelated pages).
    pub copies: Vec<&'static str>,
    /// Whether robots.txt forbids the page (a crawler must never request it).
    pub disallowed: bool,
}

/// The sample piracy site.
#[derive(Debug, Clone)]
pub struct SampleSite {
    /// Every page except `/` and `/robots.txt`.
    pub pages: Vec<SamplePage>,
}

fn library_text(id: &str) -> &'static str {
    LIBRARY
        .iter()
        .chain(UNRELATED.iter())
        .find(|(key, _)| *key == id)
        .map(|(_, t)| *t)
        .unwrap_or("")
}

/// Lines of a text after its title line, without blank lines.
fn body_paragraphs(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .skip(1)
        .collect()
}

fn title_of(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Wraps paragraphs in a typical pirate-site chapter page: navigation, ads, the text in
/// `<div id="content">` with `<br>` line breaks, comments and a footer.
fn chapter_html(title: &str, paragraphs: &[String], charset: &str) -> String {
    let junk: Vec<&str> = BOILERPLATE.lines().collect();
    let line = |i: usize| escape(junk.get(i).copied().unwrap_or_default());
    let content: String = paragraphs
        .iter()
        .map(|p| format!("&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br />\n", escape(p)))
        .collect();
    let comments: String = (13..17).map(|i| format!("<li>{}</li>", line(i))).collect();
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"{charset}\">\
         <title>{title}_{site}</title></head>\n<body>\n\
         <div class=\"header\"><a href=\"/\">{site}</a></div>\n\
         <div class=\"nav\"><a href=\"/\">{nav}</a></div>\n\
         <div class=\"breadcrumb\">{crumb}</div>\n\
         <div class=\"ad\">{ad1}</div>\n\
         <div class=\"bookname\"><h1>{title}</h1></div>\n\
         <div class=\"chapter-nav\"><a href=\"/\">{chapter_nav}</a></div>\n\
         <div id=\"content\">\n{content}</div>\n\
         <div class=\"ad\">{ad2}<br />{ad3}</div>\n\
         <div id=\"comments\"><ul>{comments}</ul></div>\n\
         <div class=\"footer\">{hint}<br />{disclaimer}<br />{copyright}</div>\n\
         </body></html>\n",
        title = escape(title),
        site = line(0),
        nav = line(1),
        crumb = line(2),
        chapter_nav = line(3),
        ad1 = line(4),
        ad2 = line(5),
        ad3 = line(8),
        hint = line(17),
        disclaimer = line(18),
        copyright = line(19),
    )
}

fn page(path: &str, label: &'static str, html: String, copies: Vec<&'static str>) -> SamplePage {
    SamplePage {
        path: path.to_owned(),
        label,
        content_type: "text/html; charset=utf-8",
        body: html.into_bytes(),
        copies,
        disallowed: false,
    }
}

/// Builds the sample site from the bundled texts.
pub fn sample_site() -> SampleSite {
    let owned = |paragraphs: Vec<&str>| {
        paragraphs
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut pages = Vec::new();

    let ch1 = library_text("xingchen-ch1");
    pages.push(page(
        "/book/xingchen/1.html",
        "verbatim copy in site boilerplate",
        chapter_html(title_of(ch1), &owned(body_paragraphs(ch1)), "utf-8"),
        vec!["xingchen-ch1"],
    ));

    let ch2 = library_text("xingchen-ch2");
    let traditional = zhconv::zhconv(ch2, zhconv::Variant::ZhTW);
    pages.push(page(
        "/book/xingchen/2.html",
        "Traditional Chinese copy",
        chapter_html(
            title_of(&traditional),
            &owned(body_paragraphs(&traditional)),
            "utf-8",
        ),
        vec!["xingchen-ch2"],
    ));

    let jianghu = library_text("jianghu-ch1");
    let gbk_html = chapter_html(title_of(jianghu), &owned(body_paragraphs(jianghu)), "gbk");
    let (gbk_bytes, _, _) = encoding_rs::GBK.encode(&gbk_html);
    pages.push(SamplePage {
        path: "/book/jianghu/1.html".to_owned(),
        label: "GBK-encoded copy (no charset in the HTTP header)",
        content_type: "text/html",
        body: gbk_bytes.into_owned(),
        copies: vec!["jianghu-ch1"],
        disallowed: false,
    });

    let harbor = library_text("news-harbor");
    let junk: Vec<&str> = BOILERPLATE.lines().collect();
    let with_ads: Vec<String> = body_paragraphs(harbor)
        .iter()
        .enumerate()
        .flat_map(|(i, p)| [p.to_string(), junk[4 + i % 9].to_owned()])
        .collect();
    pages.push(page(
        "/news/2026/harbor.html",
        "news article with ads injected between paragraphs",
        chapter_html(title_of(harbor), &with_ads, "utf-8"),
        vec!["news-harbor"],
    ));

    let other = body_paragraphs(library_text("another-novel"));
    let excerpt: Vec<&str> = body_paragraphs(jianghu)
        .into_iter()
        .skip(3)
        .take(4)
        .collect();
    let mut mixed = owned(other[..other.len() / 2].to_vec());
    mixed.extend(owned(excerpt));
    mixed.extend(owned(other[other.len() / 2..].to_vec()));
    pages.push(page(
        "/forum/thread-88.html",
        "excerpt embedded in unrelated text",
        chapter_html("书友分享：最近在看的两本书", &mixed, "utf-8"),
        vec!["jianghu-ch1"],
    ));

    for (id, path, label) in [
        ("cooking", "/life/beef.html", "unrelated: cooking blog"),
        (
            "tech-news",
            "/news/2026/subway.html",
            "hard negative: same dateline and closing",
        ),
        (
            "essay-quote",
            "/essay/friend.html",
            "hard negative: same classical quotations",
        ),
        (
            "another-novel",
            "/book/shenkong/9.html",
            "unrelated: another novel",
        ),
    ] {
        let text = library_text(id);
        pages.push(page(
            path,
            label,
            chapter_html(title_of(text), &owned(body_paragraphs(text)), "utf-8"),
            Vec::new(),
        ));
    }

    let mut hidden = page(
        "/vip/xingchen/1.html",
        "copy under a robots.txt-disallowed path",
        chapter_html(title_of(ch1), &owned(body_paragraphs(ch1)), "utf-8"),
        vec!["xingchen-ch1"],
    );
    hidden.disallowed = true;
    pages.push(hidden);

    SampleSite { pages }
}

impl SampleSite {
    /// The robots.txt of the site: everything under `/vip/` is off limits.
    pub fn robots_txt(&self) -> String {
        "User-agent: *\nDisallow: /vip/\n".to_owned()
    }

    /// The home page linking to every page (including the disallowed one, which a crawler
    /// must then refuse to fetch).
    pub fn index_html(&self) -> String {
        let links: String = self
            .pages
            .iter()
            .map(|p| format!("<li><a href=\"{}\">{}</a></li>\n", p.path, escape(p.label)))
            .collect();
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>小小笔趣阁</title></head>\
             <body><h1>小小笔趣阁</h1><ul>\n{links}</ul></body></html>"
        )
    }
}

/// A running sample-site server.
pub struct SiteServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Every request path received, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl SiteServer {
    /// Base URL, e.g. `http://127.0.0.1:41234/`.
    pub fn base_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Paths requested so far.
    pub fn requested_paths(&self) -> Vec<String> {
        self.requests.lock().expect("request log lock").clone()
    }

    /// Stops the server and waits for it.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        let _ = (&mut self.task).await;
    }
}

#[derive(Clone)]
struct SiteState {
    site: Arc<SampleSite>,
    requests: Arc<Mutex<Vec<String>>>,
}

/// Serves `site` on `127.0.0.1` on a free port, logging every request path.
pub async fn serve(site: SampleSite) -> std::io::Result<SiteServer> {
    serve_at(site, SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// Serves `site` at `addr` (port 0: a free port): how a test brings a site back changed at the
/// address its pages were crawled from.
pub async fn serve_at(site: SampleSite, addr: SocketAddr) -> std::io::Result<SiteServer> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let requests = Arc::new(Mutex::new(Vec::new()));
    let state = SiteState {
        site: Arc::new(site),
        requests: requests.clone(),
    };
    let app = Router::new().fallback(handle).with_state(state);
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    Ok(SiteServer {
        addr,
        requests,
        shutdown: Some(shutdown),
        task,
    })
}

async fn handle(State(state): State<SiteState>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    state
        .requests
        .lock()
        .expect("request log lock")
        .push(path.clone());
    let typed = |content_type: &'static str, body: Vec<u8>| {
        let mut response = body.into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    match path.as_str() {
        "/robots.txt" => typed(
            "text/plain; charset=utf-8",
            state.site.robots_txt().into_bytes(),
        ),
        "/" | "/index.html" => typed(
            "text/html; charset=utf-8",
            state.site.index_html().into_bytes(),
        ),
        _ => match state.site.pages.iter().find(|p| p.path == path) {
            Some(page) => typed(page.content_type, page.body.clone()),
            None => (StatusCode::NOT_FOUND, "not found").into_response(),
        },
    }
}
