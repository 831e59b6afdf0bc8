//! The browser tests' harness: a seeded store served by the real router on a loopback port, a
//! real headless Chromium (launched by `copytrace-browser`, so its process group dies with the
//! test), and a [`Tab`] with the few verbs a flow needs: open a path, fill a field, click and
//! wait for the next page, read the DOM, take a screenshot.
//!
//! A new flow (schedules, exports, statistics) is usually three lines of setup:
//!
//! ```ignore
//! let site = Site::start().await;             // the seed below; `site.store` to add more
//! let browser = launch().await;               // fails, never skips, without Chromium
//! let tab = Tab::open(&browser, &site, Prefers::Chinese).await;
//! tab.login(RIGHTS_HOLDER, PASSWORD).await;
//! ```
//!
//! Every helper panics with what it was waiting for and where the browser was, so a failing
//! flow says which step broke.

// A harness for flows to come: not every helper and seeded id is used by every flow yet.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::network::SetUserAgentOverrideParams;
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::page::ScreenshotParams;
use chrono::{DateTime, Utc};
use copytrace_admin_web::web::{WebState, router};
use copytrace_browser::{Browser, BrowserConfig, Network, Vetter, find_chromium, png_size};
use copytrace_service::accounts;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{EvidencePassage, Id, NewMatch, NewPage, NewWork, Role, Store};
use serde::de::DeserializeOwned;

/// Every seeded user's password.
pub const PASSWORD: &str = "correct horse battery";
/// The user of rights holder A ([`HOLDER_A`]).
pub const RIGHTS_HOLDER: &str = "holder-a@example.com";
/// The user of rights holder B.
pub const OTHER_RIGHTS_HOLDER: &str = "holder-b@example.com";
/// Staff users, one per role.
pub const ADMIN: &str = "admin@example.com";
pub const OPERATOR: &str = "operator@example.com";
pub const ANALYST: &str = "analyst@example.com";

/// Rights holder A, with two copied works.
pub const HOLDER_A: &str = "星河文学";
/// Rights holder B, with one.
pub const HOLDER_B: &str = "乙方出版社";

/// A's work whose copy substitutes characters: [`NIGHT_RAIN_PASSAGES`].
pub const NIGHT_RAIN: &str = "夜雨寄北";
/// A's work copied word for word.
pub const RIVER_TOWN: &str = "江城旧事";
/// B's work: A must never see it.
pub const SECRET: &str = "乙方的秘密作品";

/// The passages of [`NIGHT_RAIN`] the pirated page copied, as `(original, copy)`: the copy
/// substitutes 歇→息 and 于→於 in the first, 诉→述 in the second.
pub const NIGHT_RAIN_PASSAGES: [(&str, &str); 2] = [
    (
        "少年推开木门，雨声未歇。灯下的老人抬起头来，说道：你终于回来了。",
        "少年推开木门，雨声未息。灯下的老人抬起头来，说道：你终於回来了。",
    ),
    (
        "窗外的竹林在风里沙沙作响，像是有人在低声诉说多年前的旧事。",
        "窗外的竹林在风里沙沙作响，像是有人在低声述说多年前的旧事。",
    ),
];
/// What the match page must mark on the page's side, in order.
pub const SUBSTITUTED: [&str; 3] = ["息", "於", "述"];
/// What it must strike out on the original's side, in order.
pub const REPLACED: [&str; 3] = ["歇", "于", "诉"];

/// Ids of what [`Site::start`] seeded.
#[derive(Debug, Clone, Copy)]
pub struct Seeded {
    pub night_rain: Id,
    pub river_town: Id,
    pub secret: Id,
    /// The match of [`NIGHT_RAIN`] with substituted characters.
    pub night_rain_match: Id,
    /// The word-for-word copy of [`RIVER_TOWN`].
    pub river_town_match: Id,
    pub secret_match: Id,
}

/// The admin web on a loopback port over a seeded in-memory store.
pub struct Site {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The store, to seed more or check what a flow changed.
    pub store: Arc<dyn Store>,
    pub seeded: Seeded,
}

impl Site {
    /// Seeds two rights holders, three works with copies (one with substituted characters,
    /// matches spread over the last days so the dashboard's chart has bars) and a user of
    /// every role, and serves the real router the way `copytrace serve` does.
    pub async fn start() -> Site {
        Site::start_with_mail(Default::default()).await
    }

    /// [`Site::start`], mailing notices through `mail` (an SMTP server of the test's).
    pub async fn start_with_mail(mail: copytrace_service::alerts::AlertSettings) -> Site {
        let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
        store.migrate().await.unwrap();
        let seeded = seed(&store).await;
        let store: Arc<dyn Store> = Arc::new(store);
        let state = WebState {
            store: store.clone(),
            secure_cookies: false,
            redis: None,
            dashboard: Default::default(),
            imports: Default::default(),
            trusted_proxies: Vec::new(),
            mail,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Site {
            base: format!("http://{addr}"),
            store,
            seeded,
        }
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

async fn seed(store: &SqliteStore) -> Seeded {
    let a = store.ensure_rights_holder(HOLDER_A).await.unwrap();
    let b = store.ensure_rights_holder(HOLDER_B).await.unwrap();
    let now = Utc::now();
    let days_ago = |days: i64| now - chrono::Duration::days(days);

    // 夜雨寄北: its two passages inside a longer text, copied with substitutions between a
    // pirate site's header and footer.
    let (original_1, copy_1) = NIGHT_RAIN_PASSAGES[0];
    let (original_2, copy_2) = NIGHT_RAIN_PASSAGES[1];
    let work_text = format!("第一章 夜雨\n{original_1}\n她把伞靠在门边。\n{original_2}\n雨停了。");
    let night_rain = work(store, a, "a-night-rain", NIGHT_RAIN, &work_text).await;
    let page_text = format!("盗版小说网 · 最新章节\n{copy_1}\n{copy_2}\n本站内容均来自网络。");
    let passages = [(copy_1, original_1), (copy_2, original_2)]
        .map(|(copy, original)| passage(&page_text, copy, &work_text, original));
    let night_rain_match = copy(
        store,
        "https://daoban.example/night-rain/1.html",
        &page_text,
        night_rain,
        &passages,
        now,
    )
    .await;
    // A second copy on another site, days earlier.
    copy(
        store,
        "https://mirror.example/book/42.html",
        &page_text,
        night_rain,
        &passages,
        days_ago(3),
    )
    .await;

    // 江城旧事, copied word for word: its match marks nothing.
    let river_text = "江城的旧码头早已废弃，只有几只白鹭还在浅滩上踱步。".repeat(3);
    let river_town = work(store, a, "a-river-town", RIVER_TOWN, &river_text).await;
    let river_page = format!("免费阅读：{river_text}");
    let whole = passage(&river_page, &river_text, &river_text, &river_text);
    let river_town_match = copy(
        store,
        "https://daoban.example/river-town.html",
        &river_page,
        river_town,
        &[whole],
        days_ago(9),
    )
    .await;

    // B's work, on the same pirate site.
    let secret_text = "这是乙方的作品，甲方的用户不应看到。".repeat(4);
    let secret = work(store, b, "b-secret", SECRET, &secret_text).await;
    let secret_page = format!("转载：{secret_text}");
    let whole = passage(&secret_page, &secret_text, &secret_text, &secret_text);
    let secret_match = copy(
        store,
        "https://daoban.example/secret.html",
        &secret_page,
        secret,
        &[whole],
        days_ago(1),
    )
    .await;

    let users = [
        (RIGHTS_HOLDER, Role::RightsHolder, Some(HOLDER_A)),
        (OTHER_RIGHTS_HOLDER, Role::RightsHolder, Some(HOLDER_B)),
        (ADMIN, Role::Admin, None),
        (OPERATOR, Role::Operator, None),
        (ANALYST, Role::Analyst, None),
    ];
    for (email, role, holder) in users {
        accounts::add_user(store, email, role, holder, PASSWORD)
            .await
            .unwrap();
    }
    Seeded {
        night_rain,
        river_town,
        secret,
        night_rain_match,
        river_town_match,
        secret_match,
    }
}

async fn work(store: &SqliteStore, holder: Id, external_id: &str, title: &str, text: &str) -> Id {
    store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: external_id.into(),
            title: title.into(),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text.into(),
            fingerprint_version: 1,
            segments: Vec::new(),
            fingerprints: Vec::new(),
            author: None,
            published_at: None,
            chapters: Vec::new(),
            licensed_hosts: None,
        })
        .await
        .unwrap()
        .0
}

/// The evidence passage joining `copy` in `page_text` to `original` in `work_text`: byte
/// offsets, as the matcher records them.
fn passage(page_text: &str, copy: &str, work_text: &str, original: &str) -> EvidencePassage {
    let page_start = page_text.find(copy).expect("the copy is in the page");
    let work_start = work_text
        .find(original)
        .expect("the original is in the work");
    let offset = |n: usize| u32::try_from(n).unwrap();
    EvidencePassage {
        page_start: offset(page_start),
        page_end: offset(page_start + copy.len()),
        work_start: offset(work_start),
        work_end: offset(work_start + original.len()),
    }
}

/// A crawled page at `url` with `text`, matched (auto-confirmed, so reported) to `work` at
/// `at`; returns the match's id.
async fn copy(
    store: &SqliteStore,
    url: &str,
    text: &str,
    work: Id,
    evidence: &[EvidencePassage],
    at: DateTime<Utc>,
) -> Id {
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: url.into(),
            title: Some("盗版小说网".into()),
            text: text.into(),
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: at,
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    let found = NewMatch {
        work_id: work,
        score: 0.93,
        coverage: 0.8,
        containment: 0.9,
        copied_chars: 60,
        method: "simhash+align".into(),
        auto_confirm: true,
        evidence: evidence.to_vec(),
    };
    store
        .record_page_matches(page, &hash, &[found], at)
        .await
        .unwrap();
    store
        .list_matches(&copytrace_store::MatchFilter {
            work_id: Some(work),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.page_id == page)
        .expect("the match just recorded")
        .id
}

/// Lets the browser reach loopback only: the site under test, nothing on the internet (the
/// seeded pages link to `*.example` pirate sites, which must not be fetched).
struct LoopbackOnly;

#[async_trait::async_trait]
impl Vetter for LoopbackOnly {
    async fn vet(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) if ip.is_loopback() => Ok(vec![SocketAddr::new(ip, port)]),
            _ => Err(format!("the browser tests reach only loopback, not {host}")),
        }
    }
}

/// The Chromium to test with: `COPYTRACE_CHROMIUM` if set, else the first Chromium or Chrome
/// on `PATH`. Panics (the test fails, it never skips) when there is none.
fn chromium() -> PathBuf {
    let explicit = std::env::var_os("COPYTRACE_CHROMIUM").map(PathBuf::from);
    find_chromium(explicit.as_deref(), std::env::var_os("PATH").as_deref()).unwrap_or_else(
        |error| {
            panic!(
                "the browser tests need headless Chromium: {error}. Set COPYTRACE_CHROMIUM to \
                 its executable, or run ./scripts/test, which installs Debian's chromium and sets \
                 COPYTRACE_CHROMIUM"
            )
        },
    )
}

/// Launches headless Chromium (1280 × 800) that reaches only loopback. Panics, naming
/// `COPYTRACE_CHROMIUM`, when it cannot be found or started.
pub async fn launch() -> Browser {
    let executable = chromium();
    let config = BrowserConfig::new(executable.clone(), Network::Guarded(Arc::new(LoopbackOnly)));
    Browser::launch(config).await.unwrap_or_else(|error| {
        panic!(
            "the browser tests could not start Chromium {}: {error} (COPYTRACE_CHROMIUM names \
             the executable to use)",
            executable.display()
        )
    })
}

/// The language a browser asks for first.
#[derive(Debug, Clone, Copy)]
pub enum Prefers {
    Chinese,
    English,
}

impl Prefers {
    fn accept_language(self) -> &'static str {
        match self {
            Prefers::Chinese => "zh-CN,zh;q=0.9,en;q=0.8",
            Prefers::English => "en-US,en;q=0.9,zh;q=0.8",
        }
    }
}

/// How long a wait may take before the flow fails.
const WAIT: Duration = Duration::from_secs(10);

/// One browser tab on the site. Tabs of one browser share its cookies (one session).
pub struct Tab {
    pub page: chromiumoxide::Page,
    base: String,
}

impl Tab {
    /// A new tab whose requests say `Accept-Language` for `prefers`, still blank.
    pub async fn open(browser: &Browser, site: &Site, prefers: Prefers) -> Tab {
        let page = browser.new_page("about:blank").await.expect("a new tab");
        let user_agent = page.user_agent().await.expect("the browser's user agent");
        let mut params = SetUserAgentOverrideParams::new(user_agent);
        params.accept_language = Some(prefers.accept_language().to_owned());
        page.set_user_agent(params)
            .await
            .expect("overriding Accept-Language");
        Tab {
            page,
            base: site.base.clone(),
        }
    }

    /// Opens `path` of the site, waits for it to load, and checks it was answered 2xx (after
    /// redirects: `/` of a visitor ends on `/login`, 200).
    pub async fn goto(&self, path: &str) {
        match self.try_goto(path).await {
            Ok(status) if (200..300).contains(&status) => {}
            Ok(status) => panic!("opening {path}: HTTP {status}"),
            Err(error) => panic!("opening {path}: {error}"),
        }
    }

    /// Opens `path` of the site and waits for it to load: the HTTP status of the document the
    /// browser ended on, or the browser's error when it refused to show an answer (Chromium
    /// shows its own error page, `net::ERR_HTTP_RESPONSE_CODE_FAILURE`, for an error status
    /// with an empty body).
    pub async fn try_goto(&self, path: &str) -> Result<u16, String> {
        let url = format!("{}{path}", self.base);
        let mut outcome = Ok(());
        self.navigate(&format!("opening {url}"), || async {
            outcome = self.page.goto(url.as_str()).await.map(|_| ());
        })
        .await;
        outcome.map_err(|e| e.to_string())?;
        Ok(self.status().await)
    }

    /// The HTTP status of the page the tab shows (its navigation's response).
    pub async fn status(&self) -> u16 {
        self.eval("performance.getEntriesByType('navigation')[0].responseStatus")
            .await
    }

    /// Reloads the page and waits for it.
    pub async fn reload(&self) {
        self.navigate("reloading", || async {
            self.eval::<bool>("location.reload(), true").await;
        })
        .await;
    }

    /// Clicks the first element matching `selector` (a link or a submit button) and waits
    /// for the page it leads to.
    pub async fn click_and_wait(&self, selector: &str) {
        self.wait_for(selector).await;
        self.navigate(&format!("clicking {selector}"), || async {
            self.page
                .find_element(selector)
                .await
                .unwrap_or_else(|e| panic!("finding {selector}: {e}"))
                .click()
                .await
                .unwrap_or_else(|e| panic!("clicking {selector}: {e}"));
        })
        .await;
    }

    /// Does `action` and waits until a *new* document has loaded: the old one is marked
    /// first, so a navigation to the same URL (a reload, a redirect back) is seen too.
    async fn navigate<F, Fut>(&self, what: &str, action: F)
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        self.eval::<bool>("window.__copytraceOldDocument = true")
            .await;
        action().await;
        self.wait_until(
            "!window.__copytraceOldDocument && document.readyState === 'complete'",
            what,
        )
        .await;
    }

    /// Types `text` into the field matching `selector`, as a user would (key events).
    pub async fn fill(&self, selector: &str, text: &str) {
        self.wait_for(selector).await;
        self.page
            .find_element(selector)
            .await
            .unwrap_or_else(|e| panic!("finding {selector}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("focusing {selector}: {e}"))
            .type_str(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {selector}: {e}"));
    }

    /// Sets the value of the field matching `selector` to `text` at once, as an input method
    /// commits Chinese text (key events cannot type characters outside the keyboard's), or to
    /// choose an option of a `<select>`.
    pub async fn set(&self, selector: &str, text: &str) {
        self.wait_for(selector).await;
        let _: bool = self
            .eval(&format!(
                "(document.querySelector({}).value = {}, true)",
                js_string(selector),
                js_string(text)
            ))
            .await;
    }

    /// Logs in through the login form: opens `/login`, fills it, submits it with its button
    /// and waits for the page it leads to (the dashboard, or the form again with an error).
    pub async fn login(&self, email: &str, password: &str) {
        self.goto("/login").await;
        self.fill("#email", email).await;
        self.fill("#password", password).await;
        self.click_and_wait("form[action='/login'] button[type=submit]")
            .await;
    }

    /// Logs out with the header's button and waits for the login page.
    pub async fn logout(&self) {
        self.click_and_wait("form[action='/logout'] button[type=submit]")
            .await;
    }

    /// Evaluates a JavaScript expression and returns its value.
    pub async fn eval<T: DeserializeOwned>(&self, expression: &str) -> T {
        self.page
            .evaluate(expression)
            .await
            .unwrap_or_else(|e| panic!("evaluating {expression}: {e}"))
            .into_value()
            .unwrap_or_else(|e| panic!("the value of {expression}: {e}"))
    }

    /// Polls until the JavaScript `condition` is true; panics after [`WAIT`] naming `what`
    /// and the page the browser is on.
    pub async fn wait_until(&self, condition: &str, what: &str) {
        let expression = format!(
            "(() => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }})()"
        );
        let started = Instant::now();
        loop {
            // A navigation in flight may destroy the context an evaluation ran in: try again.
            let done = matches!(
                self.page
                    .evaluate(expression.as_str())
                    .await
                    .map(|r| r.into_value::<bool>()),
                Ok(Ok(true))
            );
            if done {
                return;
            }
            if started.elapsed() > WAIT {
                let url = self.page.url().await.ok().flatten().unwrap_or_default();
                panic!("{what}: still waiting for `{condition}` after {WAIT:?}, at {url}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until an element matches `selector`.
    pub async fn wait_for(&self, selector: &str) {
        let condition = format!("document.querySelector({})", js_string(selector));
        self.wait_until(&condition, &format!("waiting for {selector}"))
            .await;
    }

    /// The path (and query) of the page the tab is on.
    pub async fn path(&self) -> String {
        self.eval("location.pathname + location.search").await
    }

    /// How many elements match `selector`.
    pub async fn count(&self, selector: &str) -> usize {
        self.eval(&format!(
            "document.querySelectorAll({}).length",
            js_string(selector)
        ))
        .await
    }

    /// The text of every element matching `selector`, in document order.
    pub async fn texts(&self, selector: &str) -> Vec<String> {
        self.eval(&format!(
            "Array.from(document.querySelectorAll({}), e => e.textContent.trim())",
            js_string(selector)
        ))
        .await
    }

    /// The text of the first element matching `selector`; panics when there is none.
    pub async fn text(&self, selector: &str) -> String {
        self.wait_for(selector).await;
        self.texts(selector).await.remove(0)
    }

    /// The `lang` attribute of `<html>`.
    pub async fn html_lang(&self) -> String {
        self.eval("document.documentElement.lang").await
    }

    /// Names of the cookies the browser holds for the site.
    pub async fn cookie_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .page
            .get_cookies()
            .await
            .expect("the tab's cookies")
            .into_iter()
            .map(|c| c.name)
            .collect();
        names.sort();
        names
    }

    /// When `COPYTRACE_SCREENSHOTS` names a directory (relative paths are taken from the
    /// workspace root), saves the viewport (1280 × 800) there as `NAME.png`; otherwise does
    /// nothing.
    pub async fn screenshot(&self, name: &str) {
        let Some(dir) = screenshot_dir() else {
            return;
        };
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let png = self
            .page
            .screenshot(
                ScreenshotParams::builder()
                    .format(CaptureScreenshotFormat::Png)
                    .build(),
            )
            .await
            .unwrap_or_else(|e| panic!("taking screenshot {name}: {e}"));
        assert_eq!(png_size(&png), Some((1280, 800)), "screenshot {name}");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

fn screenshot_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("COPYTRACE_SCREENSHOTS")?);
    if dir.is_absolute() {
        return Some(dir);
    }
    // Tests run in the crate's directory; people name directories from the workspace root.
    Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(dir),
    )
}

/// `text` as a JavaScript string literal.
fn js_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}
