//! A scriptable local HTTP server that records every request (with its arrival time and
//! headers), and a recording sink.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use copytrace_crawler::{CrawlConfig, CrawlError, CrawlProgress, FetchedPage, PageSink};
use tokio::task::JoinHandle;
use url::Url;

/// One canned response.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Option<Duration>,
    /// Instead of `body`: this many bytes of HTML-ish filler, streamed in 64 KiB chunks without
    /// a Content-Length; the counter says how many bytes the server actually produced.
    pub stream: Option<(usize, Arc<AtomicUsize>)>,
    /// Instead of `body`: a tarpit sending one byte of HTML every this often, for ever.
    pub trickle: Option<Duration>,
}

impl Route {
    pub fn html(body: impl Into<Vec<u8>>) -> Self {
        Self::with_type("text/html; charset=utf-8", body)
    }

    pub fn with_type(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: None,
            stream: None,
            trickle: None,
        }
    }

    /// A response without any Content-Type header.
    pub fn untyped(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![],
            body: body.into(),
            delay: None,
            stream: None,
            trickle: None,
        }
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/html".into())],
            body: format!("<p>status {status}</p>").into_bytes(),
            delay: None,
            stream: None,
            trickle: None,
        }
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Self {
            status,
            headers: vec![("location".into(), location.into())],
            body: vec![],
            delay: None,
            stream: None,
            trickle: None,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// A tarpit: an HTML response that never ends, one byte every `every`.
    pub fn trickled(every: Duration) -> Self {
        Self {
            trickle: Some(every),
            ..Self::html(Vec::new())
        }
    }

    /// An HTML response of `len` bytes streamed chunk by chunk (no Content-Length).
    pub fn streamed_html(len: usize, produced: Arc<AtomicUsize>) -> Self {
        Self {
            stream: Some((len, produced)),
            ..Self::html(Vec::new())
        }
    }
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Logged {
    /// Path and query.
    pub path: String,
    /// When the request arrived (before any configured delay).
    pub at: Instant,
    pub headers: HeaderMap,
}

/// Computes a response from the request (for endless link spaces and conditional requests).
pub type Dynamic = Arc<dyn Fn(&Logged) -> Route + Send + Sync>;

struct ServerState {
    /// Responses by path and query; a list is served in order, its last entry repeating.
    routes: Mutex<HashMap<String, Vec<Route>>>,
    served: Mutex<HashMap<String, usize>>,
    /// Handlers by path (any query).
    dynamic: Mutex<HashMap<String, Dynamic>>,
    log: Mutex<Vec<Logged>>,
    /// Requests being handled right now, and the most there ever were.
    active: AtomicUsize,
    max_active: AtomicUsize,
}

/// Counts a request as active while it lives.
struct ActiveGuard(Arc<ServerState>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A server on 127.0.0.1 with a free port; unknown paths answer 404.
pub struct TestServer {
    pub addr: SocketAddr,
    state: Arc<ServerState>,
    task: JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_on("127.0.0.1:0").await
    }

    /// A server on another local address, e.g. `127.0.0.2:0` or `[::1]:0`.
    pub async fn start_on(addr: &str) -> Self {
        let state = Arc::new(ServerState {
            routes: Mutex::new(HashMap::new()),
            served: Mutex::new(HashMap::new()),
            dynamic: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
            active: AtomicUsize::new(0),
            max_active: AtomicUsize::new(0),
        });
        let router = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Self { addr, state, task }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{}", self.addr, path)).unwrap()
    }

    pub fn route(&self, path: &str, route: Route) -> &Self {
        self.sequence(path, vec![route])
    }

    /// Serves `routes` one after the other to successive requests; the last one repeats.
    pub fn sequence(&self, path: &str, routes: Vec<Route>) -> &Self {
        assert!(!routes.is_empty());
        self.state
            .routes
            .lock()
            .unwrap()
            .insert(path.to_owned(), routes);
        self
    }

    /// Answers every request for `path` (whatever its query) with `f(request)`.
    pub fn dynamic(
        &self,
        path: &str,
        f: impl Fn(&Logged) -> Route + Send + Sync + 'static,
    ) -> &Self {
        self.state
            .dynamic
            .lock()
            .unwrap()
            .insert(path.to_owned(), Arc::new(f));
        self
    }

    pub fn page(&self, path: &str, html: &str) -> &Self {
        self.route(path, Route::html(html))
    }

    /// Paths (with query) requested so far, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.log().into_iter().map(|l| l.path).collect()
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<Logged> {
        self.state.log.lock().unwrap().clone()
    }

    /// The most requests this server ever handled at the same time.
    pub fn max_concurrent(&self) -> usize {
        self.state.max_active.load(Ordering::SeqCst)
    }

    /// Arrival times of the requests for exactly `path`.
    pub fn arrivals(&self, path: &str) -> Vec<Instant> {
        self.log()
            .into_iter()
            .filter(|l| l.path == path)
            .map(|l| l.at)
            .collect()
    }

    pub fn times_requested(&self, path: &str) -> usize {
        self.requests().iter().filter(|p| *p == path).count()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(state): State<Arc<ServerState>>, uri: Uri, headers: HeaderMap) -> Response {
    let key = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let logged = Logged {
        path: key.clone(),
        at: Instant::now(),
        headers,
    };
    state.log.lock().unwrap().push(logged.clone());
    let now_active = state.active.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_active.fetch_max(now_active, Ordering::SeqCst);
    let _active = ActiveGuard(state.clone());
    let route = {
        let routes = state.routes.lock().unwrap();
        routes.get(&key).map(|list| {
            let mut served = state.served.lock().unwrap();
            let n = served.entry(key.clone()).or_default();
            let route = list[(*n).min(list.len() - 1)].clone();
            *n += 1;
            route
        })
    };
    let dynamic = state.dynamic.lock().unwrap().get(uri.path()).cloned();
    let Some(route) = route.or_else(|| dynamic.map(|f| f(&logged))) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    if let Some(delay) = route.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::builder().status(route.status);
    for (name, value) in &route.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    let body = match (route.stream, route.trickle) {
        (_, Some(every)) => Body::from_stream(trickle_stream(every)),
        (None, None) => Body::from(route.body),
        (Some((len, produced)), None) => Body::from_stream(filler_stream(len, produced)),
    };
    response.body(body).unwrap()
}

fn trickle_stream(
    every: Duration,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    let bytes = b"<html><body><p>trickle".iter().copied().cycle();
    futures_util::stream::unfold(bytes, move |mut bytes| async move {
        tokio::time::sleep(every).await;
        let byte = bytes.next().expect("an endless cycle");
        Some((Ok(vec![byte]), bytes))
    })
}

fn filler_stream(
    len: usize,
    produced: Arc<AtomicUsize>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    const CHUNK: usize = 64 * 1024;
    let chunk: Vec<u8> = b"<p>filler</p>\n"
        .iter()
        .copied()
        .cycle()
        .take(CHUNK)
        .collect();
    futures_util::stream::unfold(0usize, move |sent| {
        let chunk = chunk.clone();
        let produced = produced.clone();
        async move {
            if sent >= len {
                return None;
            }
            let n = CHUNK.min(len - sent);
            produced.fetch_add(n, Ordering::SeqCst);
            Some((Ok(chunk[..n].to_vec()), sent + n))
        }
    })
}

/// Settings for crawling the local test servers: private addresses allowed, short timeouts
/// and retry backoffs.
pub fn local_config() -> CrawlConfig {
    CrawlConfig {
        allow_private_addresses: true,
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        retry_base_delay: Duration::from_millis(50),
        // Most tests assert the exact requests a crawl makes; the sitemap tests turn them on.
        sitemaps: false,
        ..CrawlConfig::default()
    }
}

/// Encodes `text` as GBK (panics on characters GBK lacks).
pub fn gbk(text: &str) -> Vec<u8> {
    let (bytes, _, had_errors) = encoding_rs::GBK.encode(text);
    assert!(!had_errors, "not encodable in GBK: {text}");
    bytes.into_owned()
}

/// A sink that keeps everything.
#[derive(Default)]
pub struct Recorder {
    pub pages: Vec<FetchedPage>,
    pub failures: Vec<(Url, String)>,
    pub not_modified: Vec<Url>,
    pub progress: Vec<CrawlProgress>,
}

impl Recorder {
    pub fn page(&self, url: &Url) -> &FetchedPage {
        self.pages
            .iter()
            .find(|p| &p.requested_url == url)
            .unwrap_or_else(|| panic!("no page for {url}; pages: {:?}", self.urls()))
    }

    pub fn urls(&self) -> Vec<String> {
        let mut urls: Vec<String> = self.pages.iter().map(|p| p.url.path().to_owned()).collect();
        urls.sort();
        urls
    }

    pub fn failure(&self, url: &Url) -> &str {
        self.failures
            .iter()
            .find(|(u, _)| u == url)
            .map(|(_, reason)| reason.as_str())
            .unwrap_or_else(|| panic!("no failure for {url}; failures: {:?}", self.failures))
    }
}

#[async_trait::async_trait]
impl PageSink for Recorder {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.pages.push(page);
        Ok(())
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        self.failures.push((url.clone(), error.to_string()));
    }

    async fn not_modified(&mut self, url: &Url) {
        self.not_modified.push(url.clone());
    }

    fn progress(&mut self, progress: &CrawlProgress) {
        self.progress.push(progress.clone());
    }
}

/// Wraps paragraphs in a minimal UTF-8 page with the given links.
pub fn html_page(title: &str, paragraphs: &[&str], links: &[&str]) -> String {
    let mut html = format!("<!DOCTYPE html><html><head><title>{title}</title></head><body>");
    html.push_str("<nav>");
    for link in links {
        html.push_str(&format!("<a href=\"{link}\">{link}</a> "));
    }
    html.push_str("</nav><article>");
    for p in paragraphs {
        html.push_str(&format!("<p>{p}</p>"));
    }
    html.push_str("</article></body></html>");
    html
}
