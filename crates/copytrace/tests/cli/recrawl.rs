//! Re-crawls: known infringing pages are fetched conditionally (`If-None-Match`,
//! `If-Modified-Since`), and a re-crawl that finds a copy gone, whether the page answers other
//! text or 404, records the removal without losing the evidence; a copy that comes back
//! reopens its match. The site is a real HTTP server on loopback that honours validators and
//! logs every request with its conditional headers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Page, PageCheckRecord, Store};

use crate::helpers::{Workspace, library_text};

/// One page as the server answers it.
#[derive(Clone)]
struct Served {
    /// HTML body.
    body: String,
    /// `ETag` sent, and matched against `If-None-Match`.
    etag: Option<String>,
    /// `Last-Modified` sent, and matched against `If-Modified-Since`.
    last_modified: Option<String>,
    /// Status of a full answer (404 makes the page gone).
    status: u16,
}

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq)]
struct Logged {
    path: String,
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    status: u16,
}

#[derive(Default)]
struct SiteState {
    pages: BTreeMap<String, Served>,
    log: Vec<Logged>,
}

/// A site whose pages can change between crawls.
struct ConditionalSite {
    state: Arc<Mutex<SiteState>>,
    addr: std::net::SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    /// Runs the server; dropped with the site.
    _runtime: tokio::runtime::Runtime,
}

impl ConditionalSite {
    fn serve(pages: BTreeMap<String, Served>) -> ConditionalSite {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(Mutex::new(SiteState {
            pages,
            log: Vec::new(),
        }));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new().fallback(answer).with_state(state.clone());
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
            addr
        });
        ConditionalSite {
            state,
            addr,
            shutdown: Some(shutdown),
            _runtime: runtime,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Changes how a page is answered from now on.
    fn set(&self, path: &str, page: Served) {
        self.state
            .lock()
            .unwrap()
            .pages
            .insert(path.to_owned(), page);
    }

    /// The requests of one path since the log was last taken, and empties the log.
    fn take_log(&self) -> Vec<Logged> {
        std::mem::take(&mut self.state.lock().unwrap().log)
    }
}

impl Drop for ConditionalSite {
    fn drop(&mut self) {
        // The runtime, dropped next, ends the server task.
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

async fn answer(State(state): State<Arc<Mutex<SiteState>>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let header_of = |name: header::HeaderName| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let if_none_match = header_of(header::IF_NONE_MATCH);
    let if_modified_since = header_of(header::IF_MODIFIED_SINCE);
    let mut state = state.lock().unwrap();
    let index = || {
        let links: String = state
            .pages
            .keys()
            .map(|p| format!("<li><a href=\"{p}\">{p}</a></li>"))
            .collect();
        format!(
            "<!DOCTYPE html><html><head><title>盗版站</title></head><body><ul>{links}</ul></body></html>"
        )
    };
    let (status, response) = match path.as_str() {
        "/" => (200, html(200, index(), None, None)),
        _ => match state.pages.get(&path) {
            None => (404, (StatusCode::NOT_FOUND, "not found").into_response()),
            Some(page) if page.status != 200 => (
                page.status,
                (StatusCode::from_u16(page.status).unwrap(), "gone").into_response(),
            ),
            Some(page) => {
                // RFC 9110: If-None-Match wins over If-Modified-Since when both are sent.
                let unchanged = match (&if_none_match, &if_modified_since) {
                    (Some(tag), _) => page.etag.as_ref() == Some(tag),
                    (None, Some(date)) => page.last_modified.as_ref() == Some(date),
                    (None, None) => false,
                };
                if unchanged {
                    (304, StatusCode::NOT_MODIFIED.into_response())
                } else {
                    let response = html(
                        200,
                        page.body.clone(),
                        page.etag.as_deref(),
                        page.last_modified.as_deref(),
                    );
                    (200, response)
                }
            }
        },
    };
    state.log.push(Logged {
        path,
        if_none_match,
        if_modified_since,
        status,
    });
    response
}

fn html(status: u16, body: String, etag: Option<&str>, modified: Option<&str>) -> Response {
    let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Some(etag) = etag {
        headers.insert(header::ETAG, HeaderValue::from_str(etag).unwrap());
    }
    if let Some(modified) = modified {
        headers.insert(
            header::LAST_MODIFIED,
            HeaderValue::from_str(modified).unwrap(),
        );
    }
    response
}

/// A chapter page carrying the body of a sample work.
fn copy_of(work: &str) -> String {
    let paragraphs: String = library_text(work)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>"))
        .collect();
    format!(
        "<!DOCTYPE html><html><head><title>{work}</title></head><body>{paragraphs}</body></html>"
    )
}

/// A page with nothing of the library on it: a short cooking article.
fn unrelated(what: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{what}</title></head><body><div id=\"content\">\
         <p>{what}：今天做一道家常红烧牛肉。牛腩切块，冷水下锅焯去血沫，捞出沥干备用。</p>\
         <p>锅中放油，下冰糖小火炒出糖色，再放入牛肉翻炒上色，加葱姜、八角和桂皮。</p>\
         <p>倒入生抽老抽和热水，大火烧开后转小火慢炖一个半小时，最后大火收汁即可。</p>\
         </div></body></html>"
    )
}

const MODIFIED: &str = "Sun, 01 Mar 2026 08:00:00 GMT";

/// `/book/etag.html` copies xingchen-ch1 and sends an ETag; `/book/dated.html` copies
/// jianghu-ch1 and sends only Last-Modified; `/about.html` copies nothing (ETag too).
fn site() -> ConditionalSite {
    let served = |body: String, etag: Option<&str>, modified: Option<&str>| Served {
        body,
        etag: etag.map(str::to_owned),
        last_modified: modified.map(str::to_owned),
        status: 200,
    };
    ConditionalSite::serve(BTreeMap::from([
        (
            "/book/etag.html".to_owned(),
            served(copy_of("xingchen-ch1"), Some("\"x1\""), None),
        ),
        (
            "/book/dated.html".to_owned(),
            served(copy_of("jianghu-ch1"), None, Some(MODIFIED)),
        ),
        (
            "/about.html".to_owned(),
            served(unrelated("关于本站"), Some("\"a1\""), None),
        ),
    ]))
}

/// A workspace with the two works, the site crawled once and matched.
fn crawled_and_matched(site: &ConditionalSite) -> Workspace {
    let workspace = Workspace::new();
    for work in ["xingchen-ch1", "jianghu-ch1"] {
        workspace.write(&format!("library/{work}.txt"), library_text(work));
    }
    workspace.ok(&[
        "library",
        "add",
        workspace.path("library").to_str().unwrap(),
    ]);
    crawl(&workspace, site);
    workspace.ok(&["match"]);
    assert_eq!(workspace.export_json().len(), 2, "both copies are found");
    site.take_log();
    workspace
}

fn crawl(workspace: &Workspace, site: &ConditionalSite) -> String {
    workspace
        .ok(&["crawl", &site.url("/"), "--allow-private-addresses"])
        .stdout
}

/// The request of `path` in a log (exactly one expected).
fn request<'a>(log: &'a [Logged], path: &str) -> &'a Logged {
    let found: Vec<&Logged> = log.iter().filter(|r| r.path == path).collect();
    assert_eq!(found.len(), 1, "one request of {path}: {log:?}");
    found[0]
}

/// The exported match of a page URL.
fn exported(workspace: &Workspace, url: &str) -> serde_json::Value {
    workspace
        .export_json()
        .into_iter()
        .find(|m| m["page_url"] == url)
        .unwrap_or_else(|| panic!("no match of {url} exported"))
}

/// Reads the store the binary wrote, after it exited.
fn inspect<T>(workspace: &Workspace, read: impl AsyncFnOnce(&SqliteStore) -> T) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let store = SqliteStore::connect(&workspace.db).await.unwrap();
            let value = read(&store).await;
            store.close().await;
            value
        })
}

/// A stored page and its removal checks, by URL.
fn stored(workspace: &Workspace, url: &str) -> (Page, Vec<PageCheckRecord>) {
    let url = url.to_owned();
    inspect(workspace, async move |store: &SqliteStore| {
        let id = store
            .infringing_page(&url)
            .await
            .unwrap()
            .map(|p| p.page_id);
        let id = match id {
            Some(id) => id,
            None => {
                let mut id = None;
                for candidate in 1..=store.count_pages().await.unwrap() as i64 {
                    if store.get_page(candidate).await.unwrap().url == url {
                        id = Some(candidate);
                    }
                }
                id.unwrap_or_else(|| panic!("no page {url}"))
            }
        };
        (
            store.get_page(id).await.unwrap(),
            store.page_checks(id).await.unwrap(),
        )
    })
}

/// The report's output.
fn report(workspace: &Workspace) -> String {
    workspace.ok(&["report"]).stdout
}

#[test]
fn a_second_crawl_asks_known_copies_conditionally_and_keeps_their_matches() {
    let site = site();
    let workspace = crawled_and_matched(&site);
    let (etag_url, dated_url) = (site.url("/book/etag.html"), site.url("/book/dated.html"));
    let before = workspace.export_json();
    let (etag_page, _) = stored(&workspace, &etag_url);
    let (dated_page, _) = stored(&workspace, &dated_url);
    assert_eq!(etag_page.etag.as_deref(), Some("\"x1\""));
    assert_eq!(dated_page.last_modified.as_deref(), Some(MODIFIED));

    let out = crawl(&workspace, &site);
    let log = site.take_log();
    let etag = request(&log, "/book/etag.html");
    assert_eq!(
        (etag.if_none_match.as_deref(), etag.status),
        (Some("\"x1\""), 304),
        "{log:?}"
    );
    let dated = request(&log, "/book/dated.html");
    assert_eq!(
        (
            dated.if_none_match.as_deref(),
            dated.if_modified_since.as_deref(),
            dated.status
        ),
        (None, Some(MODIFIED), 304),
        "{log:?}"
    );
    // No copy on it: its links may matter, so it is fetched whole; so is the seed.
    for path in ["/about.html", "/"] {
        let plain = request(&log, path);
        assert_eq!(
            (
                plain.if_none_match.as_deref(),
                plain.if_modified_since.as_deref(),
                plain.status
            ),
            (None, None, 200),
            "{path}: {log:?}"
        );
    }
    assert!(out.contains("2 not modified"), "{out}");

    // The pages are unchanged, seen again, and their matches and evidence untouched.
    for (url, page) in [(&etag_url, etag_page), (&dated_url, dated_page)] {
        let (now, checks) = stored(&workspace, url);
        assert!(now.last_seen > page.last_seen, "{url}: last_seen moved");
        assert_eq!(
            (&now.text, &now.content_hash),
            (&page.text, &page.content_hash)
        );
        assert_eq!(
            (&now.etag, &now.last_modified),
            (&page.etag, &page.last_modified)
        );
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert_eq!(
            (checks[0].availability.as_str(), checks[0].http_status),
            ("online", Some(304))
        );
    }
    // The matches are untouched, except that the copies were seen online again now.
    let after = workspace.export_json();
    let without_last_seen = |records: &[serde_json::Value]| -> Vec<serde_json::Value> {
        records
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.as_object_mut().unwrap().remove("last_seen");
                r
            })
            .collect()
    };
    assert_eq!(without_last_seen(&after), without_last_seen(&before));
    for (now, then) in after.iter().zip(&before) {
        let seen = |r: &serde_json::Value| r["last_seen"].as_str().unwrap().to_owned();
        assert!(seen(now) > seen(then), "{now} was seen online again");
    }
    let matched = workspace.ok(&["match"]).stdout;
    assert!(
        matched.starts_with("matched 0 page(s)"),
        "nothing is due: {matched}"
    );

    // --no-conditional fetches them whole.
    workspace.ok(&[
        "crawl",
        &site.url("/"),
        "--allow-private-addresses",
        "--no-conditional",
    ]);
    let log = site.take_log();
    assert!(
        log.iter()
            .filter(|r| r.path != "/robots.txt" && r.path != "/sitemap.xml")
            .all(|r| r.status == 200 && r.if_none_match.is_none() && r.if_modified_since.is_none()),
        "{log:?}"
    );
}

#[test]
fn a_copy_replaced_by_other_text_is_removed_with_its_evidence_and_reopens_when_back() {
    let site = site();
    let workspace = crawled_and_matched(&site);
    let url = site.url("/book/etag.html");
    let before = exported(&workspace, &url);
    let report_before = report(&workspace);
    let quote = report_before
        .lines()
        .skip_while(|l| !l.contains(&url))
        .nth(1)
        .unwrap_or_else(|| panic!("an excerpt under {url}: {report_before}"))
        .trim()
        .to_owned();
    assert!(quote.starts_with('“'), "{quote}");

    // The pirate replaces the chapter with a notice.
    let mut page = Served {
        body: unrelated("删除"),
        etag: Some("\"x2\"".to_owned()),
        last_modified: None,
        status: 200,
    };
    site.set("/book/etag.html", page.clone());
    crawl(&workspace, &site);
    let log = site.take_log();
    let asked = request(&log, "/book/etag.html");
    assert_eq!(
        (asked.if_none_match.as_deref(), asked.status),
        (Some("\"x1\""), 200)
    );
    workspace.ok(&["match"]);

    let removed = exported(&workspace, &url);
    assert_eq!(removed["status"], "removed", "{removed}");
    assert!(removed["removed_at"].is_string(), "{removed}");
    assert_eq!(
        removed["evidence"], before["evidence"],
        "the evidence is kept"
    );
    assert_eq!(removed["evidence_hash"], before["evidence_hash"]);
    assert_eq!(removed["first_seen"], before["first_seen"]);
    let (stored_page, checks) = stored(&workspace, &url);
    assert!(
        stored_page.text.contains("红烧牛肉"),
        "the page's new text is stored: {:?}",
        stored_page.text
    );
    assert_eq!(
        checks.last().map(|c| c.availability.as_str()),
        Some("soft_removed"),
        "{checks:?}"
    );
    let report_after = report(&workspace);
    assert!(
        report_after.contains(&quote),
        "the report still quotes the copied passage {quote}: {report_after}"
    );
    assert!(report_after.contains("removed since"), "{report_after}");

    // The daily removal check agrees: the copy is not on the page (it must not take the
    // stored new text for the copy's text).
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
    ]);
    let log = site.take_log();
    let rechecked = request(&log, "/book/etag.html");
    assert_eq!(
        (rechecked.if_none_match.as_deref(), rechecked.status),
        (Some("\"x2\""), 304),
        "the removal check is conditional on the stored text's ETag"
    );
    assert_eq!(exported(&workspace, &url)["status"], "removed");

    // The copy comes back.
    page.body = copy_of("xingchen-ch1");
    page.etag = Some("\"x3\"".to_owned());
    site.set("/book/etag.html", page);
    crawl(&workspace, &site);
    let matched = workspace.ok(&["match"]).stdout;
    assert!(matched.contains("1 reopened"), "{matched}");
    let back = exported(&workspace, &url);
    assert_eq!(back["status"], "open", "{back}");
    assert!(back["removed_at"].is_null(), "{back}");
    assert_eq!(back["evidence"], before["evidence"]);
    let (_, checks) = stored(&workspace, &url);
    assert_eq!(
        checks.last().map(|c| c.availability.as_str()),
        Some("online"),
        "{checks:?}"
    );
}

#[test]
fn a_copy_answering_404_is_gone_with_its_evidence_and_reopens_when_back() {
    let site = site();
    let workspace = crawled_and_matched(&site);
    let url = site.url("/book/dated.html");
    let before = exported(&workspace, &url);
    let (page_before, _) = stored(&workspace, &url);
    let mut gone = Served {
        body: String::new(),
        etag: None,
        last_modified: Some(MODIFIED.to_owned()),
        status: 404,
    };
    site.set("/book/dated.html", gone.clone());
    let out = crawl(&workspace, &site);
    assert!(out.contains("1 failed"), "{out}");

    let removed = exported(&workspace, &url);
    assert_eq!(removed["status"], "removed", "{removed}");
    assert!(removed["removed_at"].is_string(), "{removed}");
    assert_eq!(removed["evidence"], before["evidence"]);
    let (page, checks) = stored(&workspace, &url);
    assert_eq!(
        (&page.text, page.last_seen),
        (&page_before.text, page_before.last_seen)
    );
    let last = checks.last().unwrap();
    assert_eq!(
        (
            last.availability.as_str(),
            last.http_status,
            last.run_id.is_some()
        ),
        ("gone", Some(404), true),
        "{checks:?}"
    );
    let runs = workspace
        .ok(&["runs", "list", "--kind", "crawl", "--json"])
        .stdout;
    let runs: serde_json::Value = serde_json::from_str(&runs).unwrap();
    assert_eq!(runs[0]["counts"]["matches_removed"], 1, "{runs}");
    // Matching the stored (old) text again does not bring it back: the page is gone.
    workspace.ok(&["dedup", "--no-recheck", "--full"]);
    assert_eq!(exported(&workspace, &url)["status"], "removed");
    assert!(report(&workspace).contains("removed since"));

    // The page is back unchanged: a 304 reopens the match.
    gone.body = copy_of("jianghu-ch1");
    gone.status = 200;
    site.set("/book/dated.html", gone);
    site.take_log();
    crawl(&workspace, &site);
    let log = site.take_log();
    assert_eq!(request(&log, "/book/dated.html").status, 304, "{log:?}");
    let back = exported(&workspace, &url);
    assert_eq!(back["status"], "open", "{back}");
    assert!(back["removed_at"].is_null());
    assert_eq!(back["evidence"], before["evidence"]);
    let (_, checks) = stored(&workspace, &url);
    assert_eq!(checks.last().unwrap().availability.as_str(), "online");
}

#[test]
fn removal_checks_are_conditional_and_a_304_keeps_the_copy_online() {
    let site = site();
    let workspace = crawled_and_matched(&site);
    let url = site.url("/book/etag.html");
    let (page, _) = stored(&workspace, &url);
    let run = workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
        "--json",
    ]);
    let run: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(run["counts"]["matches_removed"], 0, "{run}");
    let log = site.take_log();
    let etag = request(&log, "/book/etag.html");
    assert_eq!(
        (etag.if_none_match.as_deref(), etag.status),
        (Some("\"x1\""), 304)
    );
    let dated = request(&log, "/book/dated.html");
    assert_eq!(
        (dated.if_modified_since.as_deref(), dated.status),
        (Some(MODIFIED), 304)
    );
    assert!(
        log.iter().all(|r| r.path != "/about.html"),
        "only known copies are checked: {log:?}"
    );
    let (now, checks) = stored(&workspace, &url);
    assert!(now.last_seen > page.last_seen, "a 304 is a sighting");
    assert_eq!(
        (checks[0].availability.as_str(), checks[0].http_status),
        ("online", Some(304))
    );
    assert_eq!(exported(&workspace, &url)["status"], "open");

    // Changed: the check gets the whole page, finds the copy gone, and stores nothing of it.
    site.set(
        "/book/etag.html",
        Served {
            body: unrelated("换了"),
            etag: Some("\"x2\"".to_owned()),
            last_modified: None,
            status: 200,
        },
    );
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
    ]);
    let log = site.take_log();
    assert_eq!(request(&log, "/book/etag.html").status, 200);
    assert_eq!(exported(&workspace, &url)["status"], "removed");
    let (after, checks) = stored(&workspace, &url);
    assert_eq!((&after.text, &after.etag), (&page.text, &page.etag));
    assert_eq!(checks.last().unwrap().availability.as_str(), "soft_removed");
}

#[test]
fn a_notice_lists_its_holders_confirmed_copies_and_is_verified_when_they_disappear() {
    let site = site();
    let workspace = Workspace::new();
    workspace.write("mine/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.write("theirs/jianghu-ch1.txt", library_text("jianghu-ch1"));
    workspace.ok(&["library", "add", workspace.path("mine").to_str().unwrap()]);
    workspace.ok(&[
        "library",
        "add",
        "--rights-holder",
        "Other House",
        workspace.path("theirs").to_str().unwrap(),
    ]);
    crawl(&workspace, &site);
    workspace.ok(&["match"]);
    let host = site
        .url("/")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let (mine, theirs) = (site.url("/book/etag.html"), site.url("/book/dated.html"));

    // The default holder's notice lists its copy only; the other holder's, its own. Each
    // holder's profile gives what its notice's law asks for (issue 40).
    workspace.ok(&[
        "rights-holder",
        "set",
        "default",
        "--legal-name",
        "Default Books Ltd.",
        "--phone",
        "+1 555 0100",
        "--signature",
        "/s/ Jane Doe",
    ]);
    workspace.ok(&[
        "rights-holder",
        "set",
        "Other House",
        "--legal-name",
        "其他出版社有限公司",
        "--address",
        "北京市朝阳区某路1号",
        "--email",
        "legal@other.example",
    ]);
    let out = workspace.path("notice.txt");
    let created = workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--rights-holder",
        "default",
        "--law",
        "us",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(created.stderr.contains("lists 1 cop"), "{}", created.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains(&mine), "{text}");
    assert!(
        !text.contains(&theirs),
        "another holder's copy leaked: {text}"
    );
    assert!(
        text.contains("NOTIFICATION OF CLAIMED COPYRIGHT INFRINGEMENT"),
        "{text}"
    );
    // The holder's default language (zh) picks the Chinese law, which asks for proof: an
    // evidence package per copy, written by --evidence-dir.
    let evidence = workspace.path("evidence");
    let other = workspace.ok(&[
        "notice",
        "create",
        "--site",
        &host,
        "--rights-holder",
        "Other House",
        "--evidence-dir",
        evidence.to_str().unwrap(),
        "--no-screenshot",
    ]);
    assert!(other.stdout.starts_with("侵权通知"), "{}", other.stdout);
    assert!(other.stdout.contains(&theirs) && !other.stdout.contains(&mine));
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    assert_eq!(notices.len(), 2);
    let first = notices.iter().find(|n| n["lang"] == "en").unwrap();
    assert_eq!(first["status"], "draft");
    assert_eq!(first["match_ids"].as_array().unwrap().len(), 1);
    let first_id = first["id"].as_i64().unwrap().to_string();
    // Nothing confirmed on another site: refused, nothing stored.
    let none = workspace.run(&["notice", "create", "--site", "elsewhere.example"]);
    assert_ne!(none.code, Some(0));
    assert!(none.stderr.contains("no confirmed copy"), "{}", none.stderr);

    workspace.ok(&["notice", "sent", &first_id]);
    assert_eq!(exported(&workspace, &mine)["status"], "notice_sent");
    assert_eq!(
        exported(&workspace, &theirs)["status"],
        "open",
        "not in the sent notice"
    );

    // The pirate takes the page down; the daily removal check verifies it.
    site.set(
        "/book/etag.html",
        Served {
            body: "not found".to_owned(),
            etag: None,
            last_modified: None,
            status: 404,
        },
    );
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
    ]);
    let notices: Vec<serde_json::Value> =
        serde_json::from_str(&workspace.ok(&["notice", "list", "--json"]).stdout).unwrap();
    let status = |lang: &str| {
        notices.iter().find(|n| n["lang"] == lang).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status("en"), "removal_verified");
    assert_eq!(status("zh"), "draft", "a draft is not followed");
    let shown = workspace.ok(&["notice", "show", &first_id]);
    assert_eq!(shown.stdout, text, "the notice is kept as written");
    // One notice sent to the site, its removal verified: a response rate of 1.
    let answered: serde_json::Value =
        serde_json::from_str(&workspace.ok(&["stats", "notices", "--json"]).stdout).unwrap();
    assert_eq!(answered[0]["site"], host.as_str());
    assert_eq!(answered[0]["sent"], 1);
    assert_eq!(answered[0]["removal_verified"], 1);
    assert_eq!(answered[0]["response_rate"], 1.0);
    assert!(answered[0]["median_hours_to_removal"].as_f64().unwrap() >= 0.0);
}
