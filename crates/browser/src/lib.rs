//! Headless Chromium for Copytrace: one home for finding the browser, launching it, rendering
//! pages behind the address guard, and taking full-page screenshots.
//!
//! Evidence packages use it to picture a page; the crawler will use it to render pages whose
//! text only JavaScript writes. Everything about the browser that is easy to get wrong is here
//! once:
//!
//! * **Finding it.** [`find_chromium`] looks for Debian's `chromium` (and the usual Chrome
//!   names) on a search path the caller hands in: library crates read no environment.
//! * **Launching it.** Chromium runs `--headless=new` in a fresh temporary profile, with
//!   `--no-sandbox` (needed as root, where CI runs), in a **process group of its own**: dropping
//!   the [`Browser`] (on success, error, panic or timeout) kills the whole group, renderers and
//!   zygote included, so no zombie browsers pile up. The DevTools endpoint is read from
//!   Chromium's stderr; `chromiumoxide` speaks the protocol (built without its `fetcher`, which
//!   would download a browser).
//! * **The network.** Chromium resolves names and opens subrequests itself, so it is pointed at
//!   an in-process proxy ([`proxy`]) for every request, loopback included, and told not to
//!   resolve names or send UDP (WebRTC) itself. The proxy either refuses everything but the
//!   documents handed to it ([`Network::Offline`]) or vets and resolves every destination itself
//!   ([`Network::Guarded`]): a page on a public host cannot make the browser reach
//!   `127.0.0.1:6379` or `169.254.169.254`, not even by DNS rebinding.
//! * **Screenshots** are of the whole page, not the viewport, up to [`MAX_SCREENSHOT_HEIGHT`]
//!   CSS pixels tall (taller pages are cut there and say so); a DOM rendered earlier is
//!   pictured with scripts disabled ([`Browser::screenshot_document_without_scripts`]).
//! * **What a rendered page received.** [`Browser::render_page`] returns, with the DOM, the
//!   responses the page's scripts used to write it, recorded through the DevTools protocol
//!   ([`capture`]): evidence of where a script-written text came from.

pub mod capture;
pub mod proxy;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chromiumoxide::cdp::browser_protocol::emulation::{
    ClearDeviceMetricsOverrideParams, SetDeviceMetricsOverrideParams,
    SetScriptExecutionDisabledParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetLayoutMetricsParams, Viewport,
};
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport as WindowViewport;
use futures_util::StreamExt;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use url::Url;

pub use capture::{CaptureLimits, RenderedPage, Subresponse};
pub use proxy::{Document, Network, Proxy, ProxyEvent, Vetter};

/// Executable names tried on the search path, in order.
pub const CHROMIUM_NAMES: [&str; 5] = [
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
    "chrome",
];

/// Screenshots are cut at this height (CSS pixels): an endless page must not produce a
/// gigabyte image.
pub const MAX_SCREENSHOT_HEIGHT: u32 = 16_384;

/// Errors of the renderer.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No Chromium executable was found.
    #[error(
        "headless Chromium was not found (looked for {looked_for}); install it (Debian: apt-get install chromium) or name it"
    )]
    NotFound {
        /// What was looked for, and where.
        looked_for: String,
    },
    /// Chromium could not be started, or did not open its DevTools endpoint.
    #[error("cannot start Chromium {path}: {reason}")]
    Launch {
        /// The executable.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The DevTools protocol failed (navigation, screenshot, connection).
    #[error("Chromium: {0}")]
    Protocol(String),
    /// A page took longer than allowed.
    #[error("rendering {url} took longer than {seconds} s")]
    Timeout {
        /// The page.
        url: String,
        /// The limit.
        seconds: u64,
    },
    /// The proxy could not start.
    #[error("cannot start the renderer's proxy: {0}")]
    Proxy(#[source] std::io::Error),
}

impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(error: chromiumoxide::error::CdpError) -> Self {
        BrowserError::Protocol(error.to_string())
    }
}

/// Finds a Chromium executable: `explicit` if given (it must exist), else the first of
/// [`CHROMIUM_NAMES`] in the directories of `search_path` (a `PATH`-style list the caller
/// reads), else Debian's `/usr/lib/chromium/chromium`.
pub fn find_chromium(
    explicit: Option<&Path>,
    search_path: Option<&OsStr>,
) -> Result<PathBuf, BrowserError> {
    if let Some(path) = explicit {
        return if path.is_file() {
            Ok(path.to_owned())
        } else {
            Err(BrowserError::NotFound {
                looked_for: format!("{} (no such file)", path.display()),
            })
        };
    }
    let dirs: Vec<PathBuf> = search_path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    for name in CHROMIUM_NAMES {
        for dir in &dirs {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    let debian = Path::new("/usr/lib/chromium/chromium");
    if debian.is_file() {
        return Ok(debian.to_owned());
    }
    Err(BrowserError::NotFound {
        looked_for: format!("{} on the search path", CHROMIUM_NAMES.join(", ")),
    })
}

/// How the browser is started.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// The Chromium executable ([`find_chromium`]).
    pub executable: PathBuf,
    /// Where the rendered pages may connect.
    pub network: Network,
    /// Longest time to start the browser, and to render one page and picture it.
    pub timeout: Duration,
    /// Window width in CSS pixels (the page is laid out for it).
    pub width: u32,
    /// Window height in CSS pixels (a screenshot is at least this tall).
    pub height: u32,
    /// Load images. Screenshots need them; reading a page's text does not, and a crawl that
    /// renders pages saves their bytes and requests.
    pub images: bool,
}

impl BrowserConfig {
    /// Defaults for `executable` and `network`: 30 s, a 1280 × 800 window.
    pub fn new(executable: PathBuf, network: Network) -> Self {
        Self {
            executable,
            network,
            timeout: Duration::from_secs(30),
            width: 1280,
            height: 800,
            images: true,
        }
    }
}

/// A full-page screenshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// The PNG file.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// Whether the page was taller than [`MAX_SCREENSHOT_HEIGHT`] and was cut there.
    pub truncated: bool,
}

/// A running headless Chromium and its proxy. Dropping it kills the browser's process group.
pub struct Browser {
    browser: chromiumoxide::Browser,
    handler: JoinHandle<()>,
    /// Locked only to ask whether it has exited ([`Browser::has_exited`]) and to reap it.
    child: std::sync::Mutex<Child>,
    pgid: Option<i32>,
    proxy: Proxy,
    config: BrowserConfig,
    version: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium headless with a fresh profile, behind a proxy for `config.network`.
    pub async fn launch(config: BrowserConfig) -> Result<Browser, BrowserError> {
        let proxy = Proxy::start(config.network.clone())
            .await
            .map_err(BrowserError::Proxy)?;
        let launch_error = |reason: String| BrowserError::Launch {
            path: config.executable.clone(),
            reason,
        };
        let profile = tempfile::Builder::new()
            .prefix("copytrace-chromium-")
            .tempdir()
            .map_err(|e| launch_error(format!("no temporary profile directory: {e}")))?;
        let mut command = Command::new(&config.executable);
        command
            .args(chromium_args(&config, proxy.addr(), profile.path()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| launch_error(e.to_string()))?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let mut guard = KillGroup(pgid);
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| launch_error("no stderr".into()))?;
        let endpoint = tokio::time::timeout(config.timeout, devtools_endpoint(stderr)).await;
        let endpoint = match endpoint {
            Ok(Ok(url)) => url,
            Ok(Err(output)) => {
                return Err(launch_error(format!(
                    "it exited without a DevTools endpoint: {output}"
                )));
            }
            Err(_) => return Err(launch_error("no DevTools endpoint in time".into())),
        };
        let handler_config = HandlerConfig {
            viewport: Some(WindowViewport {
                width: config.width,
                height: config.height,
                ..WindowViewport::default()
            }),
            request_timeout: config.timeout,
            ..HandlerConfig::default()
        };
        let (browser, mut handler) =
            chromiumoxide::Browser::connect_with_config(endpoint, handler_config).await?;
        // The handler drives the connection; events of protocol versions newer than the
        // crate's are reported as errors, which are not fatal. A broken WebSocket is: the
        // browser is gone, and the task ends so that [`Browser::has_exited`] says so.
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                match event {
                    Err(chromiumoxide::error::CdpError::Ws(error)) => {
                        tracing::debug!(%error, "DevTools connection lost");
                        break;
                    }
                    Err(error) => tracing::trace!(%error, "DevTools event"),
                    Ok(()) => {}
                }
            }
        });
        let version = browser
            .version()
            .await
            .map(|v| v.product)
            .unwrap_or_else(|_| "Chromium".to_owned());
        guard.0 = None;
        Ok(Browser {
            browser,
            handler,
            child: std::sync::Mutex::new(child),
            pgid,
            proxy,
            config,
            version,
            _profile: profile,
        })
    }

    /// Whether Chromium is gone: its main process exited (killed, crashed, out of memory) or its
    /// DevTools connection ended. Nothing rendered by this browser can succeed any more; a
    /// long-running caller starts a new one instead of failing every later page.
    pub fn has_exited(&self) -> bool {
        if self.handler.is_finished() {
            return true;
        }
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        !matches!(child.try_wait(), Ok(None))
    }

    /// The browser's product and version, e.g. `HeadlessChrome/156.0.8078.108`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The proxy every request of the browser goes through.
    pub fn proxy(&self) -> &Proxy {
        &self.proxy
    }

    /// Opens a new tab at `url` (loaded through the proxy, like every request) for a caller
    /// that drives the page itself over the DevTools protocol: browser tests of the admin web
    /// fill forms, click links and read the DOM. The tab shares the browser's cookies.
    pub async fn new_page(&self, url: &str) -> Result<chromiumoxide::Page, BrowserError> {
        Ok(self.browser.new_page(url).await?)
    }

    /// Renders `document` as if it had been served at `url` (its subresources go to the
    /// network only if the browser's [`Network`] allows it) and takes a full-page screenshot.
    /// Nothing is fetched for `url` itself.
    pub async fn screenshot_document(
        &self,
        url: &Url,
        document: Document,
    ) -> Result<Screenshot, BrowserError> {
        self.proxy.serve(url, document);
        let shot = self.screenshot_url(url).await;
        self.proxy.forget(url);
        shot
    }

    /// Like [`Browser::screenshot_document`], with the page's scripts disabled: how a DOM
    /// rendered earlier ([`RenderedPage::html`]) is pictured as it was, without its scripts
    /// running a second time over the text they already wrote.
    pub async fn screenshot_document_without_scripts(
        &self,
        url: &Url,
        document: Document,
    ) -> Result<Screenshot, BrowserError> {
        self.proxy.serve(url, document);
        let seconds = self.config.timeout.as_secs();
        let shot = tokio::time::timeout(self.config.timeout, self.render(url, false))
            .await
            .unwrap_or_else(|_| {
                Err(BrowserError::Timeout {
                    url: url.to_string(),
                    seconds,
                })
            });
        self.proxy.forget(url);
        shot
    }

    /// Loads `url` through the proxy and takes a full-page screenshot. A refused or failed
    /// navigation is an error, not a picture of Chromium's error page.
    pub async fn screenshot_url(&self, url: &Url) -> Result<Screenshot, BrowserError> {
        let seconds = self.config.timeout.as_secs();
        let timeout = |_| BrowserError::Timeout {
            url: url.to_string(),
            seconds,
        };
        tokio::time::timeout(self.config.timeout, self.render(url, true))
            .await
            .map_err(timeout)?
    }

    async fn render(&self, url: &Url, scripts: bool) -> Result<Screenshot, BrowserError> {
        let page = self.browser.new_page("about:blank").await?;
        let shot = async {
            if !scripts {
                page.execute(SetScriptExecutionDisabledParams::new(true))
                    .await?;
            }
            page.goto(url.as_str()).await?;
            // The page's own document, not whichever request finished last: its URL is an
            // error page when the navigation failed, and its status is the document's.
            let (location, status): (String, u16) = page
                .evaluate(
                    "[document.URL, (performance.getEntriesByType('navigation')[0] || {}) \
                     .responseStatus || 0]",
                )
                .await?
                .into_value()
                .map_err(|e| BrowserError::Protocol(format!("reading the page state: {e}")))?;
            if location.starts_with("chrome-error:") {
                return Err(BrowserError::Protocol(format!("loading {url} failed")));
            }
            if !(200..300).contains(&status) {
                return Err(BrowserError::Protocol(format!(
                    "loading {url} was answered HTTP {status}"
                )));
            }
            full_page_png(&page, self.config.width).await
        }
        .await;
        if let Err(error) = page.close().await {
            tracing::debug!(%error, "closing a page");
        }
        shot
    }

    /// Renders `document` as if it had been served at `url` and returns the HTML of its DOM
    /// once scripts have written the page (see [`Browser::render_page`], which also returns
    /// what the page received).
    pub async fn render_html(
        &self,
        url: &Url,
        document: Document,
        quiet: Duration,
    ) -> Result<String, BrowserError> {
        let limits = CaptureLimits {
            max_responses: 0,
            ..CaptureLimits::default()
        };
        Ok(self.render_page(url, document, quiet, limits).await?.html)
    }

    /// Renders `document` as if it had been served at `url` and returns the HTML of its DOM
    /// once scripts have written the page, with the responses its scripts received (within
    /// `limits`, see [`capture`]): the crawler's rendered path. Nothing is fetched for `url`
    /// itself (the crawler fetched it, under robots.txt, the address guard and the size cap);
    /// the page's subrequests (scripts, `XMLHttpRequest`, `fetch`, frames) go through the proxy
    /// and its [`Network`]. The page has settled when the length of its DOM's HTML has not
    /// changed for `quiet` after the load event; a page that has not settled within the
    /// browser's timeout is abandoned ([`BrowserError::Timeout`]), not taken half-written.
    pub async fn render_page(
        &self,
        url: &Url,
        document: Document,
        quiet: Duration,
        limits: CaptureLimits,
    ) -> Result<RenderedPage, BrowserError> {
        let seconds = self.config.timeout.as_secs();
        self.proxy.serve(url, document);
        // A window of its own: a second tab of one window would be hidden, and a hidden page
        // gets no animation frames and only delayed timers, so text written by them would be
        // missed (a reader always looks at a visible page).
        let window = CreateTargetParams::builder()
            .url("about:blank")
            .new_window(true)
            .build()
            .expect("a target with a URL");
        let page = match self.browser.new_page(window).await {
            Ok(page) => page,
            Err(error) => {
                self.proxy.forget(url);
                return Err(error.into());
            }
        };
        let rendered = async {
            let recorder = capture::Recorder::listen(&page).await?;
            let started = tokio::time::Instant::now();
            let html = settled_html(&page, url, quiet).await?;
            let settled_after = started.elapsed();
            let (subresponses, responses_not_kept) = if limits.max_responses == 0 {
                (Vec::new(), 0)
            } else {
                recorder.collect(&page, url, limits).await
            };
            Ok(RenderedPage {
                html,
                subresponses,
                responses_not_kept,
                settled_after,
            })
        };
        let rendered = tokio::time::timeout(self.config.timeout, rendered)
            .await
            .unwrap_or_else(|_| {
                Err(BrowserError::Timeout {
                    url: url.to_string(),
                    seconds,
                })
            });
        self.proxy.forget(url);
        if let Err(error) = page.close().await {
            tracing::debug!(%error, "closing a page");
        }
        rendered
    }

    /// Closes the browser and waits for it to exit; its process group is killed either way.
    pub async fn close(mut self) {
        if let Err(error) = self.browser.close().await {
            tracing::debug!(%error, "closing Chromium");
        }
        let child = self
            .child
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.handler.abort();
        drop(KillGroup(self.pgid.take()));
    }
}

/// Kills a process group when dropped (unless emptied first).
struct KillGroup(Option<i32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            // ESRCH (already gone) is fine.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }
}

fn chromium_args(
    config: &BrowserConfig,
    proxy: std::net::SocketAddr,
    profile: &Path,
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--headless=new".into(),
        // Chromium's sandbox cannot run as root (CI); the renderer sees only pages served or
        // vetted by the proxy.
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--hide-scrollbars".into(),
        "--mute-audio".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-extensions".into(),
        "--disable-sync".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-default-apps".into(),
        "--disable-breakpad".into(),
        // A page Chromium counts as in the background (hidden or occluded) would have its
        // timers delayed by up to a second, and a page written by `setTimeout` would settle
        // before its text exists; each page also gets a window of its own (`render_html`).
        "--disable-background-timer-throttling".into(),
        "--disable-renderer-backgrounding".into(),
        "--disable-backgrounding-occluded-windows".into(),
        "--metrics-recording-only".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
        // Every request through the proxy, loopback included; Chromium resolves no name and
        // sends no UDP itself.
        format!("--proxy-server=http://{proxy}"),
        "--proxy-bypass-list=<-loopback>".into(),
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1".into(),
        "--dns-prefetch-disable".into(),
        // An http:// page is loaded as http://, not first tried as https:// (whose refused
        // tunnel would be reported as the navigation's failure).
        "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable".into(),
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        format!("--window-size={},{}", config.width, config.height),
        format!("--user-data-dir={}", profile.display()),
        "--remote-debugging-port=0".into(),
    ];
    if !config.images {
        args.push("--blink-settings=imagesEnabled=false".into());
    }
    args.push("about:blank".into());
    args
}

/// Reads Chromium's stderr until it names its DevTools WebSocket, then keeps draining it in the
/// background (a full pipe would stall the browser). On exit without one, returns what it said.
async fn devtools_endpoint(stderr: tokio::process::ChildStderr) -> Result<String, String> {
    let mut lines = BufReader::new(stderr).lines();
    let mut said = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(rest) = line.split("DevTools listening on ").nth(1) {
            let endpoint = rest.trim().to_owned();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok(endpoint);
        }
        if said.len() < 5 {
            said.push(line);
        }
    }
    Err(said.join(" | "))
}

/// Loads `url` in `page` and waits until its text stops changing for `quiet`; returns the
/// DOM's HTML.
async fn settled_html(
    page: &chromiumoxide::Page,
    url: &Url,
    quiet: Duration,
) -> Result<String, BrowserError> {
    page.goto(url.as_str()).await?;
    let location: String = page
        .evaluate("document.URL")
        .await?
        .into_value()
        .map_err(|e| BrowserError::Protocol(format!("reading the page state: {e}")))?;
    if location.starts_with("chrome-error:") {
        return Err(BrowserError::Protocol(format!("loading {url} failed")));
    }
    let poll = (quiet / 4).max(Duration::from_millis(25));
    let mut last_len: i64 = -1;
    let mut stable_since = tokio::time::Instant::now();
    loop {
        let len: i64 = page
            .evaluate("document.documentElement ? document.documentElement.innerHTML.length : 0")
            .await?
            .into_value()
            .map_err(|e| BrowserError::Protocol(format!("reading the page state: {e}")))?;
        let now = tokio::time::Instant::now();
        if len != last_len {
            last_len = len;
            stable_since = now;
        } else if now.duration_since(stable_since) >= quiet {
            break;
        }
        tokio::time::sleep(poll).await;
    }
    // With its doctype: the DOM pictured again later is laid out in the same mode.
    let html: String = page
        .evaluate(
            "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' \
             : '') + (document.documentElement ? document.documentElement.outerHTML : '')",
        )
        .await?
        .into_value()
        .map_err(|e| BrowserError::Protocol(format!("reading the rendered page: {e}")))?;
    Ok(html)
}

/// A PNG of the whole laid-out page (not only the viewport), cut at [`MAX_SCREENSHOT_HEIGHT`].
async fn full_page_png(page: &chromiumoxide::Page, width: u32) -> Result<Screenshot, BrowserError> {
    let metrics = page
        .execute(GetLayoutMetricsParams::default())
        .await?
        .result;
    let content = metrics.css_content_size;
    let page_width = (content.width.ceil() as u32).max(width);
    let full_height = content.height.ceil().max(1.0) as u32;
    let height = full_height.min(MAX_SCREENSHOT_HEIGHT);
    page.execute(SetDeviceMetricsOverrideParams::new(
        i64::from(page_width),
        i64::from(height),
        1.0,
        false,
    ))
    .await?;
    let params = CaptureScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .clip(Viewport {
            x: 0.0,
            y: 0.0,
            width: f64::from(page_width),
            height: f64::from(height),
            scale: 1.0,
        })
        .capture_beyond_viewport(true)
        .build();
    let data = page.execute(params).await?.result.data;
    page.execute(ClearDeviceMetricsOverrideParams {}).await?;
    let png = BASE64
        .decode(AsRef::<str>::as_ref(&data))
        .map_err(|e| BrowserError::Protocol(format!("the screenshot is not base64: {e}")))?;
    let (width, height) = png_size(&png)
        .ok_or_else(|| BrowserError::Protocol("the screenshot is not a PNG".into()))?;
    Ok(Screenshot {
        png,
        width,
        height,
        truncated: full_height > MAX_SCREENSHOT_HEIGHT,
    })
}

/// The PNG signature every PNG file starts with.
pub const PNG_SIGNATURE: [u8; 8] = *b"\x89PNG\r\n\x1a\n";

/// Width and height of a PNG, from its header (`IHDR`, the first chunk); `None` when `bytes`
/// is not a PNG.
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || bytes[..8] != PNG_SIGNATURE || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let height = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((width, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_sizes_are_read_from_the_header() {
        let mut png = PNG_SIGNATURE.to_vec();
        png.extend_from_slice(&13u32.to_be_bytes());
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&1280u32.to_be_bytes());
        png.extend_from_slice(&2400u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((1280, 2400)));
        assert_eq!(png_size(b"GIF89a........................"), None);
    }

    #[test]
    fn a_missing_explicit_executable_is_not_found() {
        let error = find_chromium(Some(Path::new("/nonexistent/chromium")), None).unwrap_err();
        assert!(matches!(error, BrowserError::NotFound { .. }), "{error}");
    }
}
