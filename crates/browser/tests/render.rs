//! The renderer against a real headless Chromium (installed by `./scripts/test`; these tests
//! fail, never skip, without it) and a real HTTP server on loopback.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::routing::get;
use copytrace_browser::{
    Browser, BrowserConfig, BrowserError, CaptureLimits, Document, Network, PNG_SIGNATURE, Vetter,
    find_chromium,
};
use url::Url;

/// A vetter that allows loopback only when told to, as the crawler's guard does with
/// `--allow-private-addresses`.
struct Loopback {
    allow: bool,
}

#[async_trait::async_trait]
impl Vetter for Loopback {
    async fn vet(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| e.to_string())?
            .collect();
        if !self.allow && addrs.iter().any(|a| a.ip().is_loopback()) {
            return Err(format!("refused loopback address of {host}"));
        }
        Ok(addrs)
    }
}

fn chromium() -> std::path::PathBuf {
    find_chromium(None, std::env::var_os("PATH").as_deref())
        .expect("headless Chromium must be installed for these tests (./scripts/test installs it)")
}

/// A tall page and an image on a loopback server; counts the image requests.
async fn site() -> (SocketAddr, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let tall: String = (0..120)
        .map(|i| format!("<p>第{i}段：少年推门而入，雨声未歇。</p>"))
        .collect();
    let page = format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head>\
         <body style=\"margin:0\">{tall}<img src=\"/pixel.png\"></body></html>"
    );
    let app = Router::new()
        .route(
            "/page.html",
            get(move || async move { axum::response::Html(page) }),
        )
        .route(
            "/pixel.png",
            get(move || async move {
                counter.fetch_add(1, Ordering::SeqCst);
                "not really a png"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_page_is_pictured_whole_when_its_address_is_allowed() {
    let (addr, _) = site().await;
    let network = Network::Guarded(Arc::new(Loopback { allow: true }));
    let browser = Browser::launch(BrowserConfig::new(chromium(), network))
        .await
        .unwrap();
    let url = Url::parse(&format!("http://{addr}/page.html")).unwrap();
    let shot = browser.screenshot_url(&url).await.unwrap();
    assert!(shot.png.starts_with(&PNG_SIGNATURE));
    assert_eq!(shot.width, 1280);
    // 120 paragraphs are far taller than the 800-pixel window: the whole page is pictured.
    assert!(shot.height > 2000, "height {}", shot.height);
    assert!(!shot.truncated);
    assert!(
        browser.version().contains("Chrome"),
        "{}",
        browser.version()
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_pages_are_refused_unless_allowed() {
    let (addr, _) = site().await;
    let network = Network::Guarded(Arc::new(Loopback { allow: false }));
    let browser = Browser::launch(BrowserConfig::new(chromium(), network))
        .await
        .unwrap();
    let url = Url::parse(&format!("http://{addr}/page.html")).unwrap();
    let error = browser.screenshot_url(&url).await.unwrap_err();
    assert!(matches!(error, BrowserError::Protocol(_)), "{error}");
    let events = browser.proxy().events();
    assert!(
        events
            .iter()
            .any(|e| e.target == url.as_str() && !e.allowed),
        "{events:?}"
    );
    assert!(events.iter().all(|e| !e.allowed), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_document_is_rendered_without_any_request_leaving() {
    let (addr, hits) = site().await;
    let browser = Browser::launch(BrowserConfig::new(chromium(), Network::Offline))
        .await
        .unwrap();
    // The stored page names its image on the live server; offline, nothing reaches it.
    let url = Url::parse(&format!("http://{addr}/page.html")).unwrap();
    let body = format!(
        "<html><body><h1>存档</h1><img src=\"http://{addr}/pixel.png\">\
         <img src=\"https://{addr}/pixel.png\"></body></html>"
    );
    let document = Document {
        content_type: "text/html; charset=utf-8".into(),
        body: body.into_bytes(),
    };
    let shot = browser.screenshot_document(&url, document).await;
    let shot = shot.unwrap_or_else(|e| panic!("{e}: {:?}", browser.proxy().events()));
    assert!(shot.png.starts_with(&PNG_SIGNATURE));
    assert_eq!((shot.width, shot.height), (1280, 800));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the live server was contacted"
    );
    let events = browser.proxy().events();
    assert!(
        events.iter().any(|e| e.target == url.as_str() && e.allowed),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.target.ends_with("/pixel.png") && !e.allowed),
        "{events:?}"
    );
}

/// Pages rendered side by side are each seen as a reader sees a page in front of them: a text
/// written by a timer appears on time (a hidden tab's timers would be delayed by up to a
/// second, past the settle time) and one written at the next animation frame appears at all
/// (a hidden tab gets no frames). Found by the Chromium fault test, whose rendered chapters
/// were, now and then, stored without their text.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_rendered_at_once_each_run_their_timers_and_animation_frames() {
    let browser = Arc::new(
        Browser::launch(BrowserConfig::new(chromium(), Network::Offline))
            .await
            .unwrap(),
    );
    let renders = (0..12).map(|i| {
        let browser = browser.clone();
        tokio::spawn(async move {
            let url = Url::parse(&format!("http://example.com/p/{i}")).unwrap();
            let body = format!(
                "<html><body><div id=timer></div><div id=frame></div><script>\
                 setTimeout(function () {{ document.getElementById('timer').textContent = \
                 'timer ' + String.fromCharCode(0x4e00 + {i}); }}, 150);\
                 requestAnimationFrame(function () {{ document.getElementById('frame').\
                 textContent = 'frame ' + document.visibilityState; }});</script></body></html>"
            );
            let document = Document {
                content_type: "text/html; charset=utf-8".into(),
                body: body.into_bytes(),
            };
            let html = browser
                .render_html(&url, document, std::time::Duration::from_millis(500))
                .await
                .unwrap();
            (i, html)
        })
    });
    for render in futures_util::future::join_all(renders).await {
        let (i, html) = render.unwrap();
        let timer = format!(
            "<div id=\"timer\">timer {}</div>",
            char::from_u32(0x4e00 + i).unwrap()
        );
        assert!(
            html.contains(&timer),
            "page {i} lost its timer's text: {html}"
        );
        assert!(
            html.contains("<div id=\"frame\">frame visible</div>"),
            "page {i} was not rendered as a visible page: {html}"
        );
    }
}

/// A chapter whose external script asks a JSON file by XHR and writes it, on a loopback server.
async fn scripted_site() -> SocketAddr {
    let page = "<!DOCTYPE html><html><body><div id=content></div>\
                <script src=\"/chapter.js\"></script></body></html>";
    let script = "var x = new XMLHttpRequest(); x.open('GET', '/chapter.json'); \
                  x.onload = function () { document.getElementById('content').textContent = \
                  JSON.parse(x.responseText).text; }; x.send();";
    let app = Router::new()
        .route(
            "/page.html",
            get(move || async move { axum::response::Html(page) }),
        )
        .route(
            "/chapter.js",
            get(move || async move { ([("content-type", "application/javascript")], script) }),
        )
        .route(
            "/chapter.json",
            get(|| async {
                (
                    [
                        ("content-type", "application/json"),
                        ("x-served-by", "pirate"),
                    ],
                    "{\"text\":\"第一章 雨夜来客\"}",
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rendered_page_returns_the_responses_its_scripts_wrote_it_from() {
    let addr = scripted_site().await;
    let network = Network::Guarded(Arc::new(Loopback { allow: true }));
    let browser = Browser::launch(BrowserConfig::new(chromium(), network))
        .await
        .unwrap();
    let url = Url::parse(&format!("http://{addr}/page.html")).unwrap();
    let document = || Document {
        content_type: "text/html; charset=utf-8".into(),
        body: b"<!DOCTYPE html><html><body><div id=content></div>\
                <script src=\"/chapter.js\"></script></body></html>"
            .to_vec(),
    };
    let quiet = std::time::Duration::from_millis(300);
    let page = browser
        .render_page(&url, document(), quiet, CaptureLimits::default())
        .await
        .unwrap();
    assert!(page.html.starts_with("<!DOCTYPE html>"), "{}", page.html);
    assert!(page.html.contains("第一章 雨夜来客"), "{}", page.html);
    assert!(page.settled_after >= quiet);
    let kinds: Vec<(&str, &str)> = page
        .subresponses
        .iter()
        .map(|r| (r.resource_type.as_str(), r.url.rsplit('/').next().unwrap()))
        .collect();
    // The page's own document is not among them: it is the crawler's to keep.
    assert_eq!(
        kinds,
        [("Script", "chapter.js"), ("XHR", "chapter.json")],
        "{:?}",
        page.subresponses
    );
    let json = &page.subresponses[1];
    assert_eq!(json.status, 200);
    assert_eq!(
        json.body.as_deref(),
        Some("{\"text\":\"第一章 雨夜来客\"}".as_bytes())
    );
    assert!(json.decoded_text);
    assert!(
        json.headers
            .contains(&("x-served-by".to_owned(), "pirate".to_owned())),
        "{:?}",
        json.headers
    );

    // Over the caps: later responses only counted, a large body recorded without it.
    let limits = CaptureLimits {
        max_responses: 1,
        max_body_bytes: 10,
        max_total_bytes: 10,
    };
    let page = browser
        .render_page(&url, document(), quiet, limits)
        .await
        .unwrap();
    assert_eq!(page.subresponses.len(), 1);
    assert_eq!(page.responses_not_kept, 1);
    assert_eq!(page.subresponses[0].body, None);
    assert!(
        page.subresponses[0]
            .body_note
            .as_deref()
            .unwrap()
            .contains("over the 10 bytes"),
        "{:?}",
        page.subresponses[0]
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dom_pictured_without_scripts_is_not_written_again() {
    let browser = Browser::launch(BrowserConfig::new(chromium(), Network::Offline))
        .await
        .unwrap();
    let url = Url::parse("http://evidence.copytrace.invalid/dom").unwrap();
    // A script that would blank the page if it ran a second time.
    let dom = "<!DOCTYPE html><html><body style=\"margin:0\"><div id=content \
               style=\"height:3000px\">已写入的正文</div><script>\
               document.body.innerHTML = '';</script></body></html>";
    let document = || Document {
        content_type: "text/html; charset=utf-8".into(),
        body: dom.as_bytes().to_vec(),
    };
    let shot = browser
        .screenshot_document_without_scripts(&url, document())
        .await
        .unwrap();
    assert!(shot.height >= 3000, "the text stayed: {}", shot.height);
    let run = browser.screenshot_document(&url, document()).await.unwrap();
    assert!(
        run.height < 3000,
        "with scripts, it is blanked: {}",
        run.height
    );
    browser.close().await;
}
