//! The rendered path: pages whose text only scripts write, read in headless Chromium.
//!
//! Most pages keep the fast static path. In [`RenderMode::Auto`] a page goes to the browser when
//! its content says a script writes it ([`decide`]): its content element is empty, an inline
//! script writes text from a payload or a request, or its text is short and a script may write
//! it, and an ad or analytics script that writes an `<ins>`, a frame or a pixel is not such a
//! script. The size of the static text alone decides nothing: a script-written chapter beside a
//! static block of comments is rendered. Per host and page template the crawl remembers whether
//! rendering gained text, and stops rendering a template whose first renders never did. With
//! [`RenderMode::Always`] every page is rendered, with [`RenderMode::Never`] none. The browser
//! is the `copytrace-browser` crate's: started once per crawl on first need (and again if it
//! dies), in a process group of its own that is killed when the crawl ends, errs or is dropped.
//!
//! The rendered fetch obeys what the static one does:
//! * **the page itself** is not fetched again: the bytes the static fetch received (under
//!   robots.txt, the address guard, the size cap and the host's pace) are served to the
//!   browser from memory at the page's URL;
//! * **every subrequest** the page makes (scripts, `XMLHttpRequest`, `fetch`, frames) goes
//!   through the browser crate's proxy, which asks this crawl's gate (`RenderGate`): the address
//!   guard vets and resolves the host itself (a name resolving to a private address is
//!   refused, and there is no second lookup to rebind), robots.txt is checked for the URL and
//!   the request waits for the host's turn like any other request of the crawl; responses are
//!   cut at the crawl's body cap, and images are not loaded at all;
//! * **evidence**: besides the DOM, the responses the page's scripts received (scripts, XHR,
//!   `fetch`, frames) are kept, with the browser's version and the settle time
//!   ([`Rendering`]), at most [`MAX_KEPT_RESPONSES`] a page, each within the
//!   crawl's body cap and [`KEPT_RESPONSE_BODIES`] times it in all; the service stores them with
//!   the page's capture for its evidence packages;
//! * **time**: a page must settle (its DOM unchanged for [`SETTLE_QUIET`]) within
//!   [`CrawlConfig::render_timeout`](crate::CrawlConfig::render_timeout), else it is abandoned
//!   and reported as not rendered.
//!
//! Without Chromium, a page that needed it is reported as [`CrawlError::NotRendered`](crate::CrawlError::NotRendered) (the
//! sink's `failure`): it is not stored, so it can never be recorded as a page without a match.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use copytrace_browser::{Browser, BrowserConfig, CaptureLimits, Document, Network, Vetter};
use scraper::Html;
use tokio::sync::Semaphore;
use url::Url;

use crate::Rendering;
use crate::crawl::Shared;
use crate::robots::Verdict;
use crate::urls::host_key;

pub mod decide;

/// When pages are rendered in the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RenderMode {
    /// Never: the static text is the page's text.
    Never,
    /// When the page's content says a script writes its text (the default; see [`decide`]).
    #[default]
    Auto,
    /// Every HTML page (slow; for sites known to write all their text by script).
    Always,
}

impl RenderMode {
    /// `never`, `auto` or `always`.
    pub fn as_str(self) -> &'static str {
        match self {
            RenderMode::Never => "never",
            RenderMode::Auto => "auto",
            RenderMode::Always => "always",
        }
    }
}

impl std::str::FromStr for RenderMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "never" => Ok(RenderMode::Never),
            "auto" => Ok(RenderMode::Auto),
            "always" => Ok(RenderMode::Always),
            other => Err(format!(
                "unknown render mode {other:?}: expected never, auto or always"
            )),
        }
    }
}

impl std::fmt::Display for RenderMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// In [`RenderMode::Auto`], a page without a named content element whose static text has fewer
/// characters than this is rendered when a script may write it ([`decide`]'s last rule). A
/// chapter or article is longer; a title, a menu line and a copyright line are shorter.
pub const RENDER_BELOW_CHARS: usize = 200;

/// A page has settled when its DOM has not changed for this long after the load event.
pub const SETTLE_QUIET: Duration = Duration::from_millis(500);

/// Responses of one rendered page kept as evidence (scripts, XHR, `fetch`, frames); later ones
/// are only counted. A chapter page uses a handful.
pub const MAX_KEPT_RESPONSES: usize = 64;

/// The bodies kept of one rendered page's responses, all together, are at most this many times
/// the crawl's body cap ([`CrawlConfig::max_body_bytes`](crate::CrawlConfig::max_body_bytes),
/// which also bounds each one).
pub const KEPT_RESPONSE_BODIES: usize = 4;

/// Pages rendered at once (tabs of the one browser).
const MAX_TABS: usize = 2;

/// In [`RenderMode::Auto`], a short page without a content slot, with only external scripts
/// and at least this many links is a navigation page (a home page, a table of contents, whose
/// text is in its links) with analytics or ad scripts, not a chapter waiting for a script: it
/// is not rendered.
pub const NAVIGATION_LINKS: usize = 40;

/// Whether a page should be rendered under `mode`, given its parsed document, its extracted
/// static text and its number of links. In [`RenderMode::Auto`], when [`decide::assess`] finds
/// a reason: the page's content slots are empty, a script writes its text, or its text is short
/// and a script may write it. (The crawl also asks [`decide`]'s per-template memory, which this
/// function, having no crawl, does not.)
pub fn needs_rendering(mode: RenderMode, doc: &Html, text: &str, links: usize) -> bool {
    match mode {
        RenderMode::Never => false,
        RenderMode::Always => true,
        RenderMode::Auto => decide::assess(doc, text, links).is_some(),
    }
}

/// A crawl starts Chromium again at most this many times after it died (killed, crashed, out
/// of memory): enough for any crash a page provokes by chance, not a loop of relaunches for a
/// page built to kill the browser.
pub(crate) const MAX_BROWSER_RESTARTS: u32 = 16;

/// Times a page is rendered when the browser dies under it, before it is reported as not
/// rendered: a page that kills Chromium itself does so at most this often.
pub(crate) const RENDER_ATTEMPTS: u32 = 3;

/// The crawl's browser, started on first need, and started again when it dies.
pub(crate) struct Renderer {
    executable: Option<PathBuf>,
    timeout: Duration,
    browser: tokio::sync::Mutex<BrowserSlot>,
    tabs: Semaphore,
}

/// The browser of a crawl: not started yet, running, or not to be had (why).
#[derive(Default)]
struct BrowserSlot {
    current: Option<Result<Arc<Browser>, String>>,
    restarts: u32,
}

impl Renderer {
    pub(crate) fn new(executable: Option<PathBuf>, timeout: Duration) -> Self {
        Self {
            executable,
            timeout,
            browser: tokio::sync::Mutex::new(BrowserSlot::default()),
            tabs: Semaphore::new(MAX_TABS),
        }
    }

    /// The page served at `url` as `html` (the page as the crawler decoded it, served as UTF-8
    /// so that a GBK page is not decoded a second time) as the browser rendered it: its DOM and
    /// the responses its scripts received (within the crawl's body cap,
    /// [`KEPT_RESPONSE_BODIES`] and [`MAX_KEPT_RESPONSES`]), or why it could not be had. A page
    /// whose browser died under it is rendered again in a new browser (up to
    /// [`RENDER_ATTEMPTS`] times in all): a killed Chromium costs the pages in flight nothing,
    /// and the pages after them are not all reported as not rendered.
    pub(crate) async fn render(
        &self,
        shared: Weak<Shared>,
        url: &Url,
        html: String,
    ) -> Result<Rendering, String> {
        let max_body_bytes = shared
            .upgrade()
            .map_or(CaptureLimits::default().max_body_bytes, |s| {
                s.config.max_body_bytes
            });
        let limits = CaptureLimits {
            max_responses: MAX_KEPT_RESPONSES,
            max_body_bytes,
            max_total_bytes: max_body_bytes.saturating_mul(KEPT_RESPONSE_BODIES),
        };
        let _tab = self
            .tabs
            .acquire()
            .await
            .map_err(|_| "the renderer was closed".to_owned())?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let browser = self.running_browser(&shared).await?;
            let document = Document {
                content_type: "text/html; charset=utf-8".to_owned(),
                body: html.clone().into_bytes(),
            };
            match browser
                .render_page(url, document, SETTLE_QUIET, limits)
                .await
            {
                Ok(page) => {
                    return Ok(Rendering {
                        dom: page.html,
                        subresponses: page.subresponses,
                        responses_not_kept: page.responses_not_kept,
                        browser: browser.version().to_owned(),
                        settle_quiet: SETTLE_QUIET,
                        settled_after: page.settled_after,
                        rendered_at: chrono::Utc::now(),
                    });
                }
                Err(error) if attempts < RENDER_ATTEMPTS && died_under(&browser, &error).await => {
                    tracing::warn!(%url, %error, "Chromium exited while rendering; rendering the page again in a new browser");
                }
                Err(error) => return Err(error.to_string()),
            }
        }
    }

    /// The running browser: started on first need, and again (up to [`MAX_BROWSER_RESTARTS`]
    /// times) when the last one has exited.
    async fn running_browser(&self, shared: &Weak<Shared>) -> Result<Arc<Browser>, String> {
        let mut slot = self.browser.lock().await;
        match &slot.current {
            Some(Ok(browser)) if !browser.has_exited() => return Ok(Arc::clone(browser)),
            Some(Err(reason)) => return Err(reason.clone()),
            Some(Ok(_)) => {
                if slot.restarts >= MAX_BROWSER_RESTARTS {
                    let reason = format!(
                        "Chromium exited {} times in this crawl; no more pages are rendered",
                        slot.restarts + 1
                    );
                    slot.current = Some(Err(reason.clone()));
                    return Err(reason);
                }
                slot.restarts += 1;
                tracing::warn!(
                    restart = slot.restarts,
                    "Chromium exited; starting it again"
                );
            }
            None => {}
        }
        let launched = self.launch(shared.clone()).await.map(Arc::new);
        slot.current = Some(launched.clone());
        launched
    }

    async fn launch(&self, shared: Weak<Shared>) -> Result<Browser, String> {
        let Some(executable) = &self.executable else {
            return Err(
                "headless Chromium is not installed (Debian: apt-get install chromium; \
                 or name it with --chromium)"
                    .to_owned(),
            );
        };
        let gate = RenderGate { shared };
        let mut config = BrowserConfig::new(executable.clone(), Network::Guarded(Arc::new(gate)));
        config.timeout = self.timeout;
        config.images = false;
        Browser::launch(config).await.map_err(|e| e.to_string())
    }

    /// Closes the browser, if it was started.
    pub(crate) async fn close(self) {
        if let Some(Ok(browser)) = self.browser.into_inner().current
            && let Ok(browser) = Arc::try_unwrap(browser)
        {
            browser.close().await;
        }
    }
}

/// Whether `browser` died while it rendered the page that failed with `error`. A page's
/// commands fail (their replies cancelled) a moment before the browser is seen to have exited,
/// so a failure that is not the page's own timeout is given a second to show it.
async fn died_under(browser: &Browser, error: &copytrace_browser::BrowserError) -> bool {
    if matches!(error, copytrace_browser::BrowserError::Timeout { .. }) {
        return browser.has_exited();
    }
    for _ in 0..20 {
        if browser.has_exited() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The crawl's rules for the browser's subrequests: the address guard, robots.txt, the hosts'
/// pace and the body cap.
struct RenderGate {
    shared: Weak<Shared>,
}

#[async_trait::async_trait]
impl Vetter for RenderGate {
    async fn vet(&self, host: &str, port: u16) -> Result<Vec<std::net::SocketAddr>, String> {
        let shared = self.shared.upgrade().ok_or("the crawl is over")?;
        shared
            .fetcher
            .policy()
            .resolve(host, port)
            .await
            .map_err(|e| e.to_string())
    }

    async fn admit(&self, url: &Url) -> Result<(), String> {
        let shared = self.shared.upgrade().ok_or("the crawl is over")?;
        match shared.gate.prepare(&shared.fetcher, url).await.0 {
            Verdict::Allowed => {}
            Verdict::Disallowed => return Err(format!("{url} is disallowed by robots.txt")),
            Verdict::Unavailable { reason, .. } => {
                return Err(format!("robots.txt for {url} is unavailable: {reason}"));
            }
        }
        shared.gate.politeness.acquire(&host_key(url)).await;
        Ok(())
    }

    fn max_response_bytes(&self) -> Option<u64> {
        let shared = self.shared.upgrade()?;
        u64::try_from(shared.config.max_body_bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_never_and_always_ignore_the_content() {
        let writing =
            Html::parse_document("<html><body><div id=c></div><SCRIPT>document.write(x)</SCRIPT>");
        let plain = Html::parse_document("<html><body><p>短</p></body></html>");
        assert!(needs_rendering(RenderMode::Always, &plain, "短", 500));
        assert!(!needs_rendering(RenderMode::Never, &writing, "", 0));
        assert!(needs_rendering(RenderMode::Auto, &writing, "", 0));
        assert!(!needs_rendering(RenderMode::Auto, &plain, "短", 0));
    }

    #[test]
    fn render_modes_parse_and_display() {
        for mode in [RenderMode::Never, RenderMode::Auto, RenderMode::Always] {
            assert_eq!(mode.as_str().parse::<RenderMode>(), Ok(mode));
        }
        assert_eq!(" ALWAYS ".parse::<RenderMode>(), Ok(RenderMode::Always));
        assert!("sometimes".parse::<RenderMode>().is_err());
    }
}
