//! The in-process HTTP proxy every request of the browser goes through.
//!
//! Chromium resolves names and opens subrequests (images, scripts, frames, redirects) itself, so
//! checking the page's URL before navigating proves nothing, and request interception by URL
//! cannot see where a name resolves to (DNS rebinding). Instead Chromium is started with
//! `--proxy-server=http://127.0.0.1:PORT` and `--proxy-bypass-list=<-loopback>` (loopback goes
//! through the proxy too), and this proxy decides every request:
//!
//! * a URL registered with [`Proxy::serve`] is answered from memory (how stored evidence bytes
//!   are rendered without any network);
//! * with [`Network::Offline`] everything else is refused with `403`;
//! * with [`Network::Guarded`] the proxy resolves the host itself through the [`Vetter`], which
//!   refuses the name if any address is non-public, and connects only to the vetted addresses:
//!   `CONNECT` tunnels (HTTPS, WSS) and plain `http` requests alike. A name is never resolved
//!   twice between check and connect, so rebinding has no window.
//!
//! Plain HTTP requests are forwarded one per connection (`Connection: close` upstream), so a
//! kept-alive client connection can never carry a second request to another host past the
//! check.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use url::Url;

/// Longest request head the proxy reads (request line and headers).
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long a connection may take to send its request head, or to connect upstream.
const HEAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Decides which hosts the browser may reach, and where they are.
///
/// The crawler's address guard is the product's implementation (wired by the service); it is a
/// trait so this crate depends on no other Copytrace crate and the crawler can later render
/// pages with it.
#[async_trait::async_trait]
pub trait Vetter: Send + Sync {
    /// Resolves `host` (a name or an IP literal, IPv6 without brackets) and returns the
    /// addresses that may be connected to, or why the host is refused.
    async fn vet(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String>;

    /// Whether a request for `url` may go out, and when: the crawler checks robots.txt and
    /// waits for the host's turn here, so a rendered page's subrequests are as polite as the
    /// crawler's own. Called with the full URL of plain `http` requests and with
    /// `https://host:port/` for a `CONNECT` tunnel (whose paths the proxy cannot see).
    /// Default: every URL, at once.
    async fn admit(&self, _url: &Url) -> Result<(), String> {
        Ok(())
    }

    /// Most bytes of one upstream response passed to the browser; the rest is cut off.
    /// Default: no limit.
    fn max_response_bytes(&self) -> Option<u64> {
        None
    }
}

/// How the rendered pages reach the network.
#[derive(Clone)]
pub enum Network {
    /// No request leaves the process: only documents given to the renderer are served.
    Offline,
    /// Requests go out, each destination vetted (and resolved) by the [`Vetter`].
    Guarded(Arc<dyn Vetter>),
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Network::Offline => "Offline",
            Network::Guarded(_) => "Guarded",
        })
    }
}

/// A document the proxy answers from memory.
#[derive(Debug, Clone)]
pub struct Document {
    /// The `Content-Type` it is served with.
    pub content_type: String,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

/// What the proxy did with one request, for tests and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEvent {
    /// `CONNECT host:port` or the absolute URL requested.
    pub target: String,
    /// Whether it was served or forwarded (`true`) or refused (`false`).
    pub allowed: bool,
}

struct State {
    network: Network,
    documents: Mutex<HashMap<String, Document>>,
    events: Mutex<Vec<ProxyEvent>>,
}

/// A running proxy on a loopback port; stopped when dropped.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Starts the proxy on `127.0.0.1` on a free port.
    pub async fn start(network: Network) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            network,
            documents: Mutex::new(HashMap::new()),
            events: Mutex::new(Vec::new()),
        });
        let accept_state = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = accept_state.clone();
                tokio::spawn(async move {
                    if let Err(error) = handle(stream, &state).await {
                        tracing::debug!(%error, "proxy connection ended");
                    }
                });
            }
        });
        Ok(Proxy { addr, state, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers requests for `url` (compared as serialized by the `url` crate) with `document`.
    pub fn serve(&self, url: &Url, document: Document) {
        lock(&self.state.documents).insert(url.to_string(), document);
    }

    /// Stops answering requests for `url`.
    pub fn forget(&self, url: &Url) {
        lock(&self.state.documents).remove(url.as_str());
    }

    /// Every request seen so far, in order.
    pub fn events(&self) -> Vec<ProxyEvent> {
        lock(&self.state.events).clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One parsed request head.
struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
}

async fn handle(mut client: TcpStream, state: &State) -> std::io::Result<()> {
    let (head, rest) = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(Some(read))) => read,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(error)) => return Err(error),
        Err(_) => return Ok(()),
    };
    let record = |target: &str, allowed: bool| {
        lock(&state.events).push(ProxyEvent {
            target: target.to_owned(),
            allowed,
        });
    };
    if head.method.eq_ignore_ascii_case("CONNECT") {
        let Network::Guarded(vetter) = &state.network else {
            record(&format!("CONNECT {}", head.target), false);
            return refuse(&mut client, "offline: no request leaves the renderer").await;
        };
        let Some((host, port)) = split_authority(&head.target) else {
            record(&format!("CONNECT {}", head.target), false);
            return refuse(&mut client, "bad CONNECT target").await;
        };
        let admitted = match Url::parse(&format!("https://{}/", head.target)) {
            Ok(url) => vetter.admit(&url).await,
            Err(error) => Err(format!("bad CONNECT target: {error}")),
        };
        let upstream = match admitted {
            Ok(()) => connect_vetted(vetter.as_ref(), &host, port).await,
            Err(reason) => Err(reason),
        };
        let upstream = match upstream {
            Ok(upstream) => upstream,
            Err(reason) => {
                record(&format!("CONNECT {}", head.target), false);
                return refuse(&mut client, &reason).await;
            }
        };
        record(&format!("CONNECT {}", head.target), true);
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        return splice(client, upstream, &rest, vetter.max_response_bytes()).await;
    }

    let Ok(url) = Url::parse(&head.target) else {
        record(&head.target, false);
        return refuse(
            &mut client,
            "only absolute-form proxy requests are accepted",
        )
        .await;
    };
    let document = lock(&state.documents).get(url.as_str()).cloned();
    if let Some(document) = document {
        record(url.as_str(), true);
        return serve(&mut client, &head, &document).await;
    }
    let Network::Guarded(vetter) = &state.network else {
        record(url.as_str(), false);
        return refuse(&mut client, "offline: no request leaves the renderer").await;
    };
    if url.scheme() != "http" {
        record(url.as_str(), false);
        return refuse(&mut client, "only http is proxied in the clear").await;
    }
    let host = url.host_str().unwrap_or_default();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let upstream = match vetter.admit(&url).await {
        Ok(()) => connect_vetted(vetter.as_ref(), &host, port).await,
        Err(reason) => Err(reason),
    };
    let mut upstream = match upstream {
        Ok(upstream) => upstream,
        Err(reason) => {
            record(url.as_str(), false);
            return refuse(&mut client, &reason).await;
        }
    };
    record(url.as_str(), true);
    upstream.write_all(&origin_form_head(&head, &url)).await?;
    splice(client, upstream, &rest, vetter.max_response_bytes()).await
}

/// Reads the request head; returns it and the bytes read past it. `None` when the client
/// closed before sending a whole head.
async fn read_head(client: &mut TcpStream) -> std::io::Result<Option<(Head, Vec<u8>)>> {
    let mut buffer = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = find_head_end(&buffer) {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Ok(None);
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let text = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let mut parts = lines.next().unwrap_or_default().split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Ok(None);
    };
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let head = Head {
        method: method.to_owned(),
        target: target.to_owned(),
        version: version.to_owned(),
        headers,
    };
    Ok(Some((head, buffer[end + 4..].to_vec())))
}

fn find_head_end(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|w| w == b"\r\n\r\n")
}

/// `host:port` of a CONNECT target (IPv6 in brackets).
fn split_authority(target: &str) -> Option<(String, u16)> {
    let (host, port) = target.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

/// Vets `host` and connects to the first vetted address that answers.
async fn connect_vetted(vetter: &dyn Vetter, host: &str, port: u16) -> Result<TcpStream, String> {
    let addrs = vetter.vet(host, port).await?;
    let mut last = format!("{host} has no address");
    for addr in addrs {
        match tokio::time::timeout(HEAD_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(error)) => last = format!("cannot connect to {addr}: {error}"),
            Err(_) => last = format!("connecting to {addr} timed out"),
        }
    }
    Err(last)
}

/// The request as the origin server expects it: origin-form target, hop-by-hop headers
/// dropped, one request per connection.
fn origin_form_head(head: &Head, url: &Url) -> Vec<u8> {
    let mut target = url.path().to_owned();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let mut out = format!("{} {target} {}\r\n", head.method, head.version);
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "proxy-connection" | "connection" | "keep-alive" | "proxy-authorization"
        ) {
            continue;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    out.into_bytes()
}

async fn serve(client: &mut TcpStream, head: &Head, document: &Document) -> std::io::Result<()> {
    let mut response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         Connection: close\r\n\r\n",
        document.content_type.replace(['\r', '\n'], " "),
        document.body.len()
    )
    .into_bytes();
    if !head.method.eq_ignore_ascii_case("HEAD") {
        response.extend_from_slice(&document.body);
    }
    client.write_all(&response).await?;
    client.shutdown().await
}

async fn refuse(client: &mut TcpStream, reason: &str) -> std::io::Result<()> {
    tracing::debug!(reason, "proxy refused a request");
    let body = format!("refused by the Copytrace renderer: {reason}\n");
    let response = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

/// Copies both ways until either side closes, after handing `early` (bytes the client sent
/// past its request head) upstream; at most `limit` bytes go from upstream to the client.
async fn splice(
    mut client: impl AsyncRead + AsyncWrite + Unpin,
    mut upstream: TcpStream,
    early: &[u8],
    limit: Option<u64>,
) -> std::io::Result<()> {
    if !early.is_empty() {
        upstream.write_all(early).await?;
    }
    let Some(limit) = limit else {
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    };
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let up = tokio::io::copy(&mut client_read, &mut upstream_write);
    let down = async {
        let copied =
            tokio::io::copy(&mut (&mut upstream_read).take(limit), &mut client_write).await;
        // Cut off (or finished): the client's side closes, which ends the request.
        let _ = client_write.shutdown().await;
        copied
    };
    // The response decides: once it is over (or cut), the request direction is dropped too;
    // a client that finishes sending first still gets the whole (capped) response.
    tokio::pin!(down);
    tokio::select! {
        copied = &mut down => { copied?; }
        _ = up => { (&mut down).await?; }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_targets_are_split_into_host_and_port() {
        assert_eq!(
            split_authority("example.com:443"),
            Some(("example.com".into(), 443))
        );
        assert_eq!(split_authority("[::1]:8443"), Some(("::1".into(), 8443)));
        assert_eq!(split_authority("example.com"), None);
        assert_eq!(split_authority(":80"), None);
    }

    #[test]
    fn forwarded_requests_are_origin_form_and_one_per_connection() {
        let head = Head {
            method: "GET".into(),
            target: "http://a.example/x?y=1".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("Host".into(), "a.example".into()),
                ("Proxy-Connection".into(), "keep-alive".into()),
                ("Connection".into(), "keep-alive".into()),
            ],
        };
        let url = Url::parse(&head.target).unwrap();
        let text = String::from_utf8(origin_form_head(&head, &url)).unwrap();
        assert_eq!(
            text,
            "GET /x?y=1 HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n"
        );
    }
}
