//! A scriptable local HTTP server that records every request, and a recording sink.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, PageSink};
use tokio::task::JoinHandle;
use url::Url;

/// One canned response.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Option<Duration>,
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
        }
    }

    /// A response without any Content-Type header.
    pub fn untyped(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![],
            body: body.into(),
            delay: None,
        }
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/html".into())],
            body: format!("<p>status {status}</p>").into_bytes(),
            delay: None,
        }
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Self {
            status,
            headers: vec![("location".into(), location.into())],
            body: vec![],
            delay: None,
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
}

struct ServerState {
    routes: Mutex<HashMap<String, Route>>,
    log: Mutex<Vec<String>>,
}

/// A server on 127.0.0.1 with a free port; unknown paths answer 404.
pub struct TestServer {
    pub addr: SocketAddr,
    state: Arc<ServerState>,
    task: JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> Self {
        let state = Arc::new(ServerState {
            routes: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
        });
        let router = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
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
        self.state
            .routes
            .lock()
            .unwrap()
            .insert(path.to_owned(), route);
        self
    }

    pub fn page(&self, path: &str, html: &str) -> &Self {
        self.route(path, Route::html(html))
    }

    /// Paths (with query) requested so far, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.state.log.lock().unwrap().clone()
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

async fn handle(State(state): State<Arc<ServerState>>, uri: Uri) -> Response {
    let key = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    state.log.lock().unwrap().push(key.clone());
    let route = state.routes.lock().unwrap().get(&key).cloned();
    let Some(route) = route else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    if let Some(delay) = route.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::builder().status(route.status);
    for (name, value) in &route.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    response.body(Body::from(route.body)).unwrap()
}

/// Settings for crawling the local test servers: private addresses allowed, short timeouts.
pub fn local_config() -> CrawlConfig {
    CrawlConfig {
        allow_private_addresses: true,
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        ..CrawlConfig::default()
    }
}

/// A sink that keeps everything.
#[derive(Default)]
pub struct Recorder {
    pub pages: Vec<FetchedPage>,
    pub failures: Vec<(Url, String)>,
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
