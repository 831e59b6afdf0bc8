//! Three days of removal checks on a site whose chapters are also served under `?from=` URLs:
//! day one a crawl finds the copies; day two some pages are deleted (with or without their
//! aliases), soft-removed (200 without the copy) or replaced, and `dedup` checks them; day
//! three some come back. After each day the export lists every copy once, under a URL that
//! still shows it, with its first-seen time kept; a removal is recorded once; a restored copy is
//! reopened, never new; the webhook (a real HTTP receiver here) hears only of true new copies
//! and true removals; and `runs list` counts what each run did.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::helpers::{Workspace, library_text};

/// The answers of a site by path and query (`/a.html?from=hot` is a page of its own here).
type Answers = Arc<Mutex<BTreeMap<String, (u16, String)>>>;

/// A site on a loopback port whose pages change between days.
struct ChangingSite {
    answers: Answers,
    addr: std::net::SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl ChangingSite {
    fn serve(runtime: tokio::runtime::Runtime, pages: BTreeMap<String, (u16, String)>) -> Self {
        let answers: Answers = Arc::new(Mutex::new(pages));
        let app = Router::new().fallback(answer).with_state(answers.clone());
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            addr
        });
        ChangingSite {
            answers,
            addr,
            _runtime: runtime,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn set(&self, path: &str, status: u16, body: String) {
        self.answers
            .lock()
            .unwrap()
            .insert(path.to_owned(), (status, body));
    }
}

async fn answer(State(answers): State<Answers>, request: Request) -> Response {
    let key = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let answers = answers.lock().unwrap();
    let (status, body) = if key == "/" {
        // The table of contents links every chapter ever published, as stale indexes do.
        let links: String = answers
            .keys()
            .map(|p| format!("<li><a href=\"{p}\">{p}</a></li>"))
            .collect();
        (
            200,
            format!(
                "<!DOCTYPE html><html><head><title>目录</title></head><body><ul>{links}</ul></body></html>"
            ),
        )
    } else {
        match answers.get(&key) {
            Some(found) => found.clone(),
            None => (404, "not found".to_owned()),
        }
    };
    let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// A chapter page: a line of its own (so two chapters copying one work are two pages), then
/// the body of a sample work.
fn copy_page(mark: &str, work: &str) -> String {
    let paragraphs: String = library_text(work)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>"))
        .collect();
    format!(
        "<!DOCTYPE html><html><head><title>第{mark}章</title></head><body><div id=\"content\">\
         <p>本站第{mark}章，欢迎收藏。</p>{paragraphs}</div></body></html>"
    )
}

/// A page without the copy: what a soft removal answers.
fn removed_page(mark: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>第{mark}章</title></head><body><div id=\"content\">\
         <p>因版权方要求，本章节已删除。{mark}：今天做一道家常红烧牛肉，牛腩切块，冷水下锅焯去血沫。</p>\
         <p>锅中放油，下冰糖小火炒出糖色，再放入牛肉翻炒上色，加葱姜、八角和桂皮。</p>\
         </div></body></html>"
    )
}

type Hooks = Arc<Mutex<Vec<String>>>;

async fn receive(State(hooks): State<Hooks>, body: Bytes) -> StatusCode {
    hooks
        .lock()
        .unwrap()
        .push(String::from_utf8(body.to_vec()).unwrap());
    StatusCode::OK
}

fn start_receiver(runtime: &tokio::runtime::Runtime, hooks: Hooks) -> String {
    runtime.block_on(async {
        let app = Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(hooks);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/hook")
    })
}

/// `(event, page URL, work)` of every webhook event received since the last call.
fn take_events(hooks: &Hooks) -> BTreeSet<(String, String, String)> {
    let bodies = std::mem::take(&mut *hooks.lock().unwrap());
    let mut events = BTreeSet::new();
    for body in bodies {
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        for event in json["events"].as_array().unwrap() {
            let new = events.insert((
                event["event"].as_str().unwrap().to_owned(),
                event["page_url"].as_str().unwrap().to_owned(),
                event["work_external_id"].as_str().unwrap().to_owned(),
            ));
            assert!(new, "an event told twice: {event}");
        }
    }
    events
}

/// One export row: `(page URL, work) → (status, first_seen)`, with the export proven free of
/// duplicates (one row per page × work, and no page's alias listed as a page or as the alias
/// of two pages).
fn rows(workspace: &Workspace) -> BTreeMap<(String, String), (String, String)> {
    let json = workspace.export_json();
    let csv = workspace.export_csv();
    assert_eq!(
        csv.rows.len(),
        json.len(),
        "CSV and JSON list the same rows"
    );
    let mut rows = BTreeMap::new();
    let mut listed_urls = BTreeSet::new();
    for m in &json {
        let key = (
            m["page_url"].as_str().unwrap().to_owned(),
            m["work_external_id"].as_str().unwrap().to_owned(),
        );
        let value = (
            m["status"].as_str().unwrap().to_owned(),
            m["first_seen"].as_str().unwrap().to_owned(),
        );
        assert!(
            rows.insert(key.clone(), value).is_none(),
            "a duplicated row: {key:?}"
        );
        for alias in m["aliases"].as_array().unwrap() {
            listed_urls.insert((alias.as_str().unwrap().to_owned(), key.0.clone()));
        }
    }
    for (alias, page) in &listed_urls {
        assert!(
            !rows.keys().any(|(url, _)| url == alias),
            "{alias} is listed as an alias of {page} and as a page of its own: {rows:?}"
        );
        assert_eq!(
            listed_urls.iter().filter(|(a, _)| a == alias).count(),
            1,
            "{alias} is the alias of two pages"
        );
    }
    rows
}

/// The runs, newest first, as `runs list --json` prints them.
fn runs(workspace: &Workspace) -> Vec<serde_json::Value> {
    let listed = workspace.ok(&["runs", "list", "--json"]);
    serde_json::from_str(&listed.stdout).unwrap()
}

fn count(run: &serde_json::Value, name: &str) -> u64 {
    run["counts"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no count {name} in {run}"))
}

const W1: &str = "xingchen-ch1";
const W2: &str = "xingchen-ch2";
const W3: &str = "jianghu-ch1";
const W4: &str = "news-harbor";

#[test]
fn three_days_of_removals_keep_one_row_per_copy_and_tell_only_true_news() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let hooks = Hooks::default();
    let hook_url = start_receiver(&runtime, hooks.clone());
    // a: deleted with its alias, restored on day three; b: deleted while its alias still serves
    // the copy; c: soft-removed, restored on day three; d: replaced by a copy of another
    // work; e: soft-removed while its alias still serves the copy; f: untouched.
    let plan = [
        ("/a.html", "?from=hot", "一", W1),
        ("/b.html", "?from=hot", "二", W2),
        ("/c.html", "", "三", W3),
        ("/d.html", "", "四", W4),
        ("/e.html", "?from=app", "五", W1),
        ("/f.html", "?from=rank", "六", W2),
    ];
    let mut pages = BTreeMap::new();
    for (path, alias, mark, work) in plan {
        pages.insert(path.to_owned(), (200, copy_page(mark, work)));
        if !alias.is_empty() {
            pages.insert(format!("{path}{alias}"), (200, copy_page(mark, work)));
        }
    }
    let site = ChangingSite::serve(runtime, pages);

    let workspace = Workspace::new();
    for work in [W1, W2, W3, W4] {
        workspace.write(&format!("library/{work}.txt"), library_text(work));
    }
    workspace.ok(&[
        "library",
        "add",
        workspace.path("library").to_str().unwrap(),
    ]);
    workspace.ok(&["alert", "add", "default", "--webhook", &hook_url]);

    // ----- day one: the chapters first (so each is the page of its group), then the site
    let mut seeds: Vec<String> = plan.iter().map(|(path, ..)| site.url(path)).collect();
    seeds.extend(
        ["crawl", "--depth", "0", "--allow-private-addresses"]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    seeds.rotate_right(4);
    workspace.ok(&seeds);
    workspace.ok(&[
        "crawl",
        &site.url("/"),
        "--allow-private-addresses",
        "--match",
        "--alerts-allow-private-addresses",
    ]);
    let day_one = rows(&workspace);
    let expected: BTreeSet<(String, String)> = plan
        .iter()
        .map(|(path, _, _, work)| (site.url(path), (*work).to_owned()))
        .collect();
    assert_eq!(
        day_one.keys().cloned().collect::<BTreeSet<_>>(),
        expected,
        "one row per chapter, its ?from= URLs as aliases"
    );
    assert!(day_one.values().all(|(status, _)| status == "open"));
    let told = take_events(&hooks);
    let expected_new: BTreeSet<(String, String, String)> = expected
        .iter()
        .map(|(url, work)| ("new".to_owned(), url.clone(), work.clone()))
        .collect();
    assert_eq!(told, expected_new, "day one: every copy is new, once");
    let listed = runs(&workspace);
    assert_eq!(listed[0]["kind"], "crawl");
    assert_eq!(
        count(&listed[0], "new_matches"),
        6,
        "the crawl --match run counts what its matching found: {}",
        listed[0]
    );
    let table = workspace.ok(&["runs", "list"]).stdout;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert!(header.contains(&"new"), "{table}");

    // ----- day two
    site.set("/a.html", 404, String::new());
    site.set("/a.html?from=hot", 404, String::new());
    site.set("/b.html", 404, String::new());
    site.set("/c.html", 200, removed_page("三"));
    site.set("/d.html", 200, copy_page("四", W3));
    site.set("/e.html", 200, removed_page("五"));
    let dedup = workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
        "--alerts-allow-private-addresses",
    ]);
    let day_two = rows(&workspace);
    let first_seen = |url: &str, work: &str| day_one[&(site.url(url), work.to_owned())].1.clone();
    let want = |rows: &[(&str, &str, &str, &str)]| -> BTreeMap<(String, String), (String, String)> {
        rows.iter()
            .map(|(url, work, status, first)| {
                (
                    (site.url(url), (*work).to_owned()),
                    ((*status).to_owned(), first_seen(first, work)),
                )
            })
            .collect()
    };
    assert_eq!(
        day_two,
        want(&[
            ("/a.html", W1, "removed", "/a.html"),
            // The alias still shows the copy: it takes the row over, with the group's
            // first-seen time.
            ("/b.html?from=hot", W2, "open", "/b.html"),
            ("/c.html", W3, "removed", "/c.html"),
            ("/d.html", W4, "removed", "/d.html"),
            ("/e.html?from=app", W1, "open", "/e.html"),
            ("/f.html", W2, "open", "/f.html"),
        ]),
        "day two: {}",
        dedup.stdout
    );
    let told = take_events(&hooks);
    let removed = |paths: &[(&str, &str)]| -> BTreeSet<(String, String, String)> {
        paths
            .iter()
            .map(|(path, work)| ("removed".to_owned(), site.url(path), (*work).to_owned()))
            .collect()
    };
    assert_eq!(
        told,
        removed(&[("/a.html", W1), ("/c.html", W3), ("/d.html", W4)]),
        "day two: only the true removals are told"
    );
    let listed = runs(&workspace);
    assert_eq!(listed[0]["kind"], "dedup");
    assert_eq!(count(&listed[0], "new_matches"), 0, "{}", listed[0]);
    assert_eq!(count(&listed[0], "matches_removed"), 3, "{}", listed[0]);
    assert_eq!(count(&listed[0], "matches_reopened"), 0, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_checked"), 3, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_kept"), 2, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_removed"), 1, "{}", listed[0]);

    // A second check the same day changes nothing and tells nothing.
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
        "--alerts-allow-private-addresses",
    ]);
    assert_eq!(rows(&workspace), day_two);
    assert_eq!(take_events(&hooks), BTreeSet::new());

    // ----- day three: a (with its alias) and c come back
    site.set("/a.html", 200, copy_page("一", W1));
    site.set("/a.html?from=hot", 200, copy_page("一", W1));
    site.set("/c.html", 200, copy_page("三", W3));
    workspace.ok(&[
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
        "--alerts-allow-private-addresses",
    ]);
    let day_three = rows(&workspace);
    assert_eq!(
        day_three,
        want(&[
            ("/a.html", W1, "open", "/a.html"),
            ("/b.html?from=hot", W2, "open", "/b.html"),
            ("/c.html", W3, "open", "/c.html"),
            ("/d.html", W4, "removed", "/d.html"),
            ("/e.html?from=app", W1, "open", "/e.html"),
            ("/f.html", W2, "open", "/f.html"),
        ]),
        "day three: restored copies are reopened, not new"
    );
    assert_eq!(
        take_events(&hooks),
        BTreeSet::new(),
        "a reopened copy is no news"
    );
    let listed = runs(&workspace);
    assert_eq!(count(&listed[0], "new_matches"), 0, "{}", listed[0]);
    assert_eq!(count(&listed[0], "matches_reopened"), 2, "{}", listed[0]);
    assert_eq!(count(&listed[0], "matches_removed"), 0, "{}", listed[0]);

    // A crawl of the whole site afterwards finds the one true new copy (d now carries
    // another work) and nothing else new.
    workspace.ok(&[
        "crawl",
        &site.url("/"),
        "--allow-private-addresses",
        "--match",
        "--alerts-allow-private-addresses",
    ]);
    let after_crawl = rows(&workspace);
    let mut expected = day_three.clone();
    let new_copy = (site.url("/d.html"), W3.to_owned());
    let (status, _) = after_crawl
        .get(&new_copy)
        .unwrap_or_else(|| panic!("the new copy on d is found: {after_crawl:?}"));
    assert_eq!(status, "open");
    expected.insert(new_copy.clone(), after_crawl[&new_copy].clone());
    assert_eq!(after_crawl, expected);
    assert_eq!(
        take_events(&hooks),
        BTreeSet::from([("new".to_owned(), new_copy.0, new_copy.1)]),
        "the crawl tells only the true new copy"
    );
    let listed = runs(&workspace);
    assert_eq!(count(&listed[0], "new_matches"), 1, "{}", listed[0]);
}

#[test]
fn a_crawl_that_finds_a_page_gone_checks_its_aliases_in_the_same_run() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut pages = BTreeMap::new();
    for (path, mark, work) in [("/g.html", "七", W1), ("/h.html", "八", W2)] {
        pages.insert(path.to_owned(), (200, copy_page(mark, work)));
        pages.insert(format!("{path}?from=hot"), (200, copy_page(mark, work)));
    }
    let site = ChangingSite::serve(runtime, pages);
    let workspace = Workspace::new();
    for work in [W1, W2] {
        workspace.write(&format!("library/{work}.txt"), library_text(work));
    }
    workspace.ok(&[
        "library",
        "add",
        workspace.path("library").to_str().unwrap(),
    ]);
    workspace.ok(&[
        "crawl",
        &site.url("/g.html"),
        &site.url("/h.html"),
        "--depth",
        "0",
        "--allow-private-addresses",
    ]);
    workspace.ok(&[
        "crawl",
        &site.url("/"),
        "--allow-private-addresses",
        "--match",
    ]);
    let day_one = rows(&workspace);
    assert_eq!(day_one.len(), 2, "{day_one:?}");

    // g is deleted while its alias still serves the copy; h is deleted with its alias.
    site.set("/g.html", 404, String::new());
    site.set("/h.html", 404, String::new());
    site.set("/h.html?from=hot", 404, String::new());
    workspace.ok(&[
        "crawl",
        &site.url("/"),
        "--allow-private-addresses",
        "--match",
    ]);
    let g = (site.url("/g.html"), W1.to_owned());
    let h = (site.url("/h.html"), W2.to_owned());
    assert_eq!(
        rows(&workspace),
        BTreeMap::from([
            (
                (site.url("/g.html?from=hot"), W1.to_owned()),
                ("open".to_owned(), day_one[&g].1.clone())
            ),
            (h.clone(), ("removed".to_owned(), day_one[&h].1.clone())),
        ])
    );
    let listed = runs(&workspace);
    assert_eq!(listed[0]["kind"], "crawl");
    assert_eq!(count(&listed[0], "new_matches"), 0, "{}", listed[0]);
    assert_eq!(count(&listed[0], "matches_removed"), 1, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_checked"), 2, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_kept"), 1, "{}", listed[0]);
    assert_eq!(count(&listed[0], "aliases_removed"), 1, "{}", listed[0]);
}

#[test]
fn a_crawl_whose_only_seed_is_refused_or_unreachable_is_recorded_as_failed() {
    let workspace = Workspace::new();
    // A loopback seed without --allow-private-addresses: the address guard refuses it.
    let refused = workspace.run(&["crawl", "http://127.0.0.1:9/"]);
    assert_eq!(refused.code, Some(3), "{refused:#?}");
    let port = crate::helpers::closed_port();
    let unreachable = workspace.run(&[
        "crawl",
        &format!("http://127.0.0.1:{port}/"),
        "--allow-private-addresses",
        "--retries",
        "0",
    ]);
    assert_eq!(unreachable.code, Some(3), "{unreachable:#?}");
    let listed = runs(&workspace);
    assert_eq!(listed.len(), 2);
    for run in &listed {
        assert_eq!(run["state"], "failed", "{run}");
        let error = run["error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with("no seed could be crawled: http://127.0.0.1:"),
            "{run}"
        );
    }
    let table = workspace.ok(&["runs", "list"]).stdout;
    assert!(table.contains("error: no seed could be crawled"), "{table}");
}
