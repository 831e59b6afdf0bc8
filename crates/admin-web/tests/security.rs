//! The security review's tests (OWASP Top 10) of the admin web and its JSON API, over real HTTP
//! against the real router, as `copytrace serve` runs it:
//!
//! * response headers: a Content Security Policy, no framing, no MIME sniffing, on every kind
//!   of answer;
//! * tenancy: every object type a rights holder can name by id (works, matches and their
//!   evidence and packages, notices, sites, imports, exports and statistics of a work, API
//!   tokens) answers another holder's as 404 on the web and the API, and changes nothing;
//! * CSRF: every state-changing form and API call refuses a missing, a wrong and another
//!   session's token, and changes nothing;
//! * stored XSS: markup from crawled pages, work files and operators is shown as text on every
//!   page;
//! * sessions: a login always starts a new session, whatever cookie came with it (fixation);
//!   wrong passwords are limited, unknown accounts alike; passwords are never echoed;
//! * SSRF: schedules and queued crawls refuse seeds at private, loopback and link-local
//!   addresses and names resolving to them, unless allowed; an evidence screenshot of a hostile
//!   page reaches no address at all;
//! * path traversal: downloads name their files safely; an uploaded catalog cannot read the
//!   server's files.
//!
//! The tenancy sweep runs on SQLite and PostgreSQL (`COPYTRACE_TEST_POSTGRES_URL`); the
//! screenshot test needs Chromium (`COPYTRACE_CHROMIUM`): `scripts/with-services cargo test -p
//! copytrace-admin-web --test security` provides both.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Utc;
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::schedules::{self, CrawlSchedule};
use copytrace_service::settings::CrawlSettings;
use copytrace_service::{accounts, holders, notices};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    EvidencePassage, Id, MatchFilter, NewCapture, NewMatch, NewPage, NewWork, Review, Role,
    RunCounts, RunFilter, RunKind, RunState, Store,
};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_DISPOSITION, CONTENT_TYPE, COOKIE, LOCATION};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";
const ADMIN: &str = "admin@example.com";
const OPERATOR: &str = "operator@example.com";
const HOLDER_A: &str = "a@example.com";
const HOLDER_B: &str = "b@example.com";

/// Markup a pirate site (or a work file, or an operator) may put in what the pages show. Each
/// sets `window.__xss` if it ever runs.
const EVIL_SCRIPT: &str = "<script>window.__xss=1</script>";
const EVIL_ATTRIBUTE: &str = "\"><img src=x onerror=\"window.__xss=2\">";
const EVIL_SVG: &str = "'><svg onload=window.__xss=3>";
/// What must never appear in a page as markup.
const LIVE: [&str; 4] = [
    "<script>window.__xss",
    "<img src=x",
    "<svg onload",
    "onerror=\"window",
];

/// Holder A's and holder B's objects, by id.
struct Objects {
    a: Id,
    a_work: Id,
    a_match: Id,
    a_notice: Id,
    b_work: Id,
    b_match: Id,
    b_notice: Id,
}

/// The largest character boundary of `text` at most 60 bytes in.
fn boundary(text: &str) -> u32 {
    let end = (0..=60.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    u32::try_from(end).unwrap()
}

/// A page at `url` copying `text`, matched (confirmed) to `work` (whose text is
/// `work_text(external_id)`), their first 60 bytes or so the evidence; returns the match's id.
async fn copy_on(
    store: &dyn Store,
    (work, external_id): (Id, &str),
    url: &str,
    title: &str,
    text: &str,
    capture: Option<NewCapture>,
) -> Id {
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: url.into(),
            title: Some(title.into()),
            text: text.into(),
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: Utc::now(),
            etag: None,
            last_modified: None,
            capture,
        })
        .await
        .unwrap()
        .id;
    let found = NewMatch {
        work_id: work,
        score: 0.95,
        coverage: 0.9,
        containment: 0.95,
        copied_chars: 300,
        method: "simhash+align".into(),
        auto_confirm: true,
        evidence: vec![EvidencePassage {
            page_start: 0,
            page_end: boundary(text),
            work_start: 0,
            work_end: boundary(&work_text(external_id)),
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], Utc::now())
        .await
        .unwrap();
    store
        .list_matches(&MatchFilter {
            work_id: Some(work),
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.page_id == page)
        .expect("the match just recorded")
        .id
}

/// A work of `holder` titled `title`; returns its id.
async fn work(store: &dyn Store, holder: Id, external_id: &str, title: &str) -> Id {
    let text = work_text(external_id);
    store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: external_id.into(),
            title: title.into(),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text,
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

fn work_text(external_id: &str) -> String {
    format!("{external_id} 的正文，第一段，一字不差。").repeat(30)
}

/// Two holders: A's work (its title markup) copied on pirate.example by a page whose title and
/// text carry markup; B's work copied on pirate.example and on b-only.example. A notice each, a
/// user of each role and of each holder, a schedule, a failed run whose error carries markup.
async fn seed(store: &dyn Store) -> Objects {
    let a = store.ensure_rights_holder("Holder A").await.unwrap();
    let b = store.ensure_rights_holder("Holder B").await.unwrap();
    let a_work = work(store, a, "a-1", &format!("{EVIL_SCRIPT}A 的作品")).await;
    let page_text = format!("{EVIL_ATTRIBUTE}{EVIL_SVG}{}", work_text("a-1"));
    let a_match = copy_on(
        store,
        (a_work, "a-1"),
        "https://pirate.example/a-1.html",
        &format!("{EVIL_ATTRIBUTE} 盗版"),
        &page_text,
        None,
    )
    .await;
    let b_work = work(store, b, "b-1", "乙方的秘密作品").await;
    let b_match = copy_on(
        store,
        (b_work, "b-1"),
        "https://pirate.example/b-1.html",
        "盗版",
        &work_text("b-1"),
        None,
    )
    .await;
    copy_on(
        store,
        (b_work, "b-1"),
        "https://b-only.example/b-1.html",
        "盗版",
        &work_text("b-1"),
        None,
    )
    .await;
    let notice = |holder: &'static str| async move {
        // A US notice needs a signature, a name and a contact (issue 40).
        let profile = holders::ProfileUpdate {
            legal_name: Some(format!("{holder} Ltd.")),
            email: Some("legal@holder.example".into()),
            signature: Some(format!("/s/ {holder}")),
            language: Some("en".into()),
            ..holders::ProfileUpdate::default()
        };
        holders::set_profile(store, holder, &profile, Utc::now())
            .await
            .unwrap();
        let request = notices::NoticeRequest {
            holder: Some(holder),
            site: "pirate.example",
            law: None,
            evidence: None,
            at: Utc::now(),
        };
        notices::create(store, &request).await.unwrap().id
    };
    let a_notice = notice("Holder A").await;
    let b_notice = notice("Holder B").await;
    for (email, role, holder) in [
        (ADMIN, Role::Admin, None),
        (OPERATOR, Role::Operator, None),
        (HOLDER_A, Role::RightsHolder, Some("Holder A")),
        (HOLDER_B, Role::RightsHolder, Some("Holder B")),
    ] {
        accounts::add_user(store, email, role, holder, PASSWORD)
            .await
            .unwrap();
    }
    schedules::add_crawl_schedule(
        store,
        &CrawlSchedule {
            name: "nightly".into(),
            cron: "0 3 * * *".into(),
            timezone: "Asia/Shanghai".into(),
            owner: None,
            seeds: vec![format!("https://pirate.example/{EVIL_SVG}")],
            settings: Default::default(),
        },
    )
    .await
    .unwrap();
    let run = copytrace_service::runs::start_manual_run(store, RunKind::Crawl)
        .await
        .unwrap();
    store
        .finish_run(
            run,
            RunState::Failed,
            &RunCounts::default(),
            &json!({}),
            Some(&format!("crawl aborted: {EVIL_ATTRIBUTE}")),
            Utc::now(),
        )
        .await
        .unwrap();
    Objects {
        a,
        a_work,
        a_match,
        a_notice,
        b_work,
        b_match,
        b_notice,
    }
}

struct Site {
    base: String,
    http: reqwest::Client,
    store: Arc<dyn Store>,
    ids: Objects,
}

async fn serve(store: Arc<dyn Store>) -> Site {
    store.migrate().await.unwrap();
    let ids = seed(store.as_ref()).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(WebState {
        store: store.clone(),
        secure_cookies: false,
        redis: None,
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies: Vec::new(),
        mail: Default::default(),
    })
    .into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Site {
        base: format!("http://{addr}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        store,
        ids,
    }
}

/// The site on a fresh in-memory SQLite store.
async fn on_sqlite() -> Site {
    serve(Arc::new(
        SqliteStore::connect("sqlite::memory:").await.unwrap(),
    ))
    .await
}

/// Runs `test` on a fresh database of the test run's PostgreSQL server
/// (`COPYTRACE_TEST_POSTGRES_URL`, started by `./scripts/test`); unset is a failure.
async fn on_postgres(test: impl AsyncFnOnce(Site)) {
    use sqlx::Connection;
    let server = std::env::var("COPYTRACE_TEST_POSTGRES_URL").expect(
        "COPYTRACE_TEST_POSTGRES_URL is not set: run ./scripts/test (or scripts/with-services), \
         which starts PostgreSQL",
    );
    let name = format!(
        "copytrace_security_{}_{}",
        std::process::id(),
        Utc::now().timestamp_micros()
    );
    let mut admin = sqlx::PgConnection::connect(&server).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE \"{name}\" ENCODING 'UTF8'"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    let mut url = url::Url::parse(&server).unwrap();
    url.set_path(&format!("/{name}"));
    let store: Arc<dyn Store> = Arc::new(PostgresStore::connect(url.as_str()).await.unwrap());
    test(serve(store).await).await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}

/// A logged-in browser: the session cookie (`name=value`) and the session's form token.
struct Session {
    cookie: String,
    csrf: String,
}

/// `name=value` of the `Set-Cookie` header of cookie `name`.
fn cookie_pair(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap().to_owned())
}

fn csrf_of(html: &str) -> String {
    let start = html.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    html[start..start + html[start..].find('"').unwrap()].to_owned()
}

impl Site {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Opens the login form (sending `cookie` along, if any): its CSRF cookie and token.
    async fn login_form(&self, cookie: Option<&str>) -> (String, String) {
        let mut request = self.http.get(self.url("/login"));
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        let form = request.send().await.unwrap();
        assert_eq!(form.status(), StatusCode::OK);
        let login_cookie = cookie_pair(&form, "copytrace_csrf").expect("a login CSRF cookie");
        (login_cookie, csrf_of(&form.text().await.unwrap()))
    }

    /// Posts the login form with `cookies` (the form's CSRF cookie and any other).
    async fn post_login(
        &self,
        cookies: &str,
        csrf: &str,
        email: &str,
        password: &str,
    ) -> reqwest::Response {
        self.http
            .post(self.url("/login"))
            .header(COOKIE, cookies)
            .form(&[("csrf", csrf), ("email", email), ("password", password)])
            .send()
            .await
            .unwrap()
    }

    async fn login(&self, email: &str) -> Session {
        let (login_cookie, csrf) = self.login_form(None).await;
        let response = self.post_login(&login_cookie, &csrf, email, PASSWORD).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{email} logs in");
        let cookie = cookie_pair(&response, "copytrace_session").unwrap();
        let home = self.get("/", Some(&cookie)).await.text().await.unwrap();
        Session {
            csrf: csrf_of(&home),
            cookie,
        }
    }

    async fn token(&self, email: &str) -> String {
        accounts::create_api_token(self.store.as_ref(), email, "security")
            .await
            .unwrap()
            .0
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> reqwest::Response {
        let mut request = self.http.get(self.url(path));
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        request.send().await.unwrap()
    }

    /// Posts a form with the session's cookie and `csrf` as its token (none when `None`).
    async fn post_form(
        &self,
        path: &str,
        cookie: &str,
        csrf: Option<&str>,
        fields: &[(&str, String)],
    ) -> reqwest::Response {
        let mut form: Vec<(&str, String)> = fields.to_vec();
        if let Some(csrf) = csrf {
            form.push(("csrf", csrf.to_owned()));
        }
        self.http
            .post(self.url(path))
            .header(COOKIE, cookie)
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// Posts the library's upload form: `csrf` (none when `None`), and `files` as
    /// (field, name, content).
    async fn upload(
        &self,
        cookie: &str,
        csrf: Option<&str>,
        files: &[(&str, &str, &str)],
    ) -> reqwest::Response {
        let mut form = reqwest::multipart::Form::new();
        if let Some(csrf) = csrf {
            form = form.text("csrf", csrf.to_owned());
        }
        for (field, name, content) in files {
            form = form.part(
                field.to_string(),
                reqwest::multipart::Part::text(content.to_string()).file_name(name.to_string()),
            );
        }
        self.http
            .post(self.url("/library"))
            .header(COOKIE, cookie)
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// An API call by bearer `token`, or by `cookie` with `csrf` in `X-CSRF-Token`.
    async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        auth: ApiAuth<'_>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self.http.request(method, self.url(path));
        match auth {
            ApiAuth::Token(token) => {
                request = request.header(AUTHORIZATION, format!("Bearer {token}"));
            }
            ApiAuth::Cookie(cookie, csrf) => {
                request = request.header(COOKIE, cookie);
                if let Some(csrf) = csrf {
                    request = request.header("X-CSRF-Token", csrf);
                }
            }
        }
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Follows an upload to its import's page and reads it until the import has finished;
    /// returns the page's path and final text.
    async fn finished_import(&self, cookie: &str, response: reqwest::Response) -> (String, String) {
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let page = response.headers()[LOCATION].to_str().unwrap().to_owned();
        assert!(page.starts_with("/library/imports/"), "{page}");
        for _ in 0..600 {
            let answer = self.get(&page, Some(cookie)).await;
            assert_eq!(answer.status(), StatusCode::OK);
            let body = answer.text().await.unwrap();
            if !body.contains("import-running") {
                return (page, body);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("the import never finished");
    }
}

/// A form's fields.
type Fields = Vec<(&'static str, String)>;

#[derive(Clone, Copy)]
enum ApiAuth<'a> {
    Token(&'a str),
    Cookie(&'a str, Option<&'a str>),
}

// ----- A05 security misconfiguration: headers -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_the_security_headers() {
    let site = on_sqlite().await;
    let ids = &site.ids;
    let admin = site.login(ADMIN).await;
    let token = site.token(ADMIN).await;
    let mut answers: Vec<(String, reqwest::Response)> = Vec::new();
    for path in [
        "/".to_owned(),
        "/works".to_owned(),
        format!("/works/{}", ids.a_work),
        "/matches".to_owned(),
        format!("/matches/{}", ids.a_match),
        "/review".to_owned(),
        "/stats".to_owned(),
        "/sites/pirate.example".to_owned(),
        "/notices".to_owned(),
        format!("/notices/{}", ids.a_notice),
        "/schedules".to_owned(),
        "/schedules/nightly".to_owned(),
        "/runs".to_owned(),
        "/library".to_owned(),
        "/users".to_owned(),
    ] {
        let response = site.get(&path, Some(&admin.cookie)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        answers.push((format!("GET {path}"), response));
    }
    answers.push(("the login form".into(), site.get("/login", None).await));
    answers.push((
        "an anonymous visit's redirect".into(),
        site.get("/works", None).await,
    ));
    answers.push((
        "an unknown page".into(),
        site.get("/no-such-page", Some(&admin.cookie)).await,
    ));
    answers.push((
        "another holder's work (404 page)".into(),
        site.get("/works/999999", Some(&admin.cookie)).await,
    ));
    answers.push((
        "a CSV download".into(),
        site.get("/exports/matches?format=csv", Some(&admin.cookie))
            .await,
    ));
    answers.push((
        "a JSON download".into(),
        site.get("/exports/sites?format=json", Some(&admin.cookie))
            .await,
    ));
    answers.push((
        "a refused form".into(),
        site.post_form("/matches/decide", &admin.cookie, None, &[])
            .await,
    ));
    answers.push((
        "the OpenAPI document".into(),
        site.get("/api/openapi.json", None).await,
    ));
    answers.push(("an API 401".into(), site.get("/api/v1/works", None).await));
    answers.push((
        "an API answer".into(),
        site.http
            .get(site.url(&format!("/api/v1/matches/{}", ids.a_match)))
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .send()
            .await
            .unwrap(),
    ));
    answers.push((
        "an unknown API endpoint".into(),
        site.get("/api/v1/nothing-here", None).await,
    ));
    for (what, response) in &answers {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_else(|| panic!("{what}: no {name} header"))
                .to_owned()
        };
        let csp = header("content-security-policy");
        for directive in [
            "default-src 'none'",
            "frame-ancestors 'none'",
            "form-action 'self'",
            "base-uri 'none'",
        ] {
            assert!(csp.contains(directive), "{what}: {directive} in {csp}");
        }
        assert!(
            !csp.contains("script-src") && !csp.contains("unsafe-eval"),
            "{what}: no script may run: {csp}"
        );
        assert_eq!(header("x-frame-options"), "DENY", "{what}");
        assert_eq!(header("x-content-type-options"), "nosniff", "{what}");
        assert_eq!(header("referrer-policy"), "same-origin", "{what}");
    }
}

// ----- A01 broken access control: every object type by id, across tenants -----

async fn every_object_of_another_holder_is_not_found(site: Site) {
    let ids = &site.ids;
    let holder = site.login(HOLDER_A).await;
    let other = site.login(HOLDER_B).await;
    let b_secrets = ["b-1", "乙方的秘密作品", "b-only.example"];

    // B's import, started by B.
    let started = site
        .upload(
            &other.cookie,
            Some(&other.csrf),
            &[("files", "b-upload.txt", &work_text("b-upload"))],
        )
        .await;
    let (b_import, _) = site.finished_import(&other.cookie, started).await;

    // Web pages naming B's objects, and the same for ids that do not exist.
    let web_paths = [
        format!("/works/{}", ids.b_work),
        format!("/matches/{}", ids.b_match),
        format!("/notices/{}", ids.b_notice),
        "/sites/b-only.example".to_owned(),
        b_import.clone(),
        format!("/matches?work={}", ids.b_work),
        format!("/review?work={}", ids.b_work),
        format!("/stats?work={}", ids.b_work),
        format!("/stats?table=sites&work={}", ids.b_work),
        format!("/stats?table=daily&work={}", ids.b_work),
        format!("/exports/matches?format=csv&work={}", ids.b_work),
        format!("/exports/works?format=json&work={}", ids.b_work),
        format!("/exports/sites?format=ndjson&work={}", ids.b_work),
        format!("/exports/daily?format=xlsx&work={}", ids.b_work),
        format!("/exports/time-to-piracy?format=csv&work={}", ids.b_work),
        "/works/999999".to_owned(),
        "/matches/999999".to_owned(),
        "/notices/999999".to_owned(),
        "/sites/nowhere.example".to_owned(),
        "/library/imports/no-such-import".to_owned(),
    ];
    for path in &web_paths {
        let response = site.get(path, Some(&holder.cookie)).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "GET {path}");
        let body = response.text().await.unwrap();
        for secret in b_secrets {
            assert!(!body.contains(secret), "GET {path} shows {secret}");
        }
    }
    let library = site.get("/library", Some(&holder.cookie)).await;
    assert!(
        !library.text().await.unwrap().contains(&b_import),
        "B's import is not listed to A"
    );

    // Forms naming B's objects: 404, and nothing of A's or B's changes.
    let before = site
        .store
        .list_matches(&MatchFilter {
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await
        .unwrap();
    for (path, fields) in [
        (
            "/matches/decide".to_owned(),
            vec![
                ("decision", "reject".to_owned()),
                ("id", ids.a_match.to_string()),
                ("id", ids.b_match.to_string()),
            ],
        ),
        (
            "/matches/decide".to_owned(),
            vec![
                ("decision", "license".to_owned()),
                ("id", ids.b_match.to_string()),
            ],
        ),
        (format!("/matches/{}/package", ids.b_match), Vec::new()),
        (
            format!("/notices/{}/status", ids.b_notice),
            vec![("status", "sent".to_owned())],
        ),
        (
            format!("/notices/{}/text", ids.b_notice),
            vec![("body", "rewritten by A".to_owned())],
        ),
    ] {
        let response = site
            .post_form(&path, &holder.cookie, Some(&holder.csrf), &fields)
            .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "POST {path}");
    }
    let after = site
        .store
        .list_matches(&MatchFilter {
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await
        .unwrap();
    let reviews = |list: &[copytrace_store::MatchRecord]| -> Vec<(Id, Review)> {
        list.iter().map(|m| (m.id, m.review)).collect()
    };
    assert_eq!(
        reviews(&after),
        reviews(&before),
        "no decision was taken, not even on A's own match named beside B's"
    );
    assert!(
        site.store
            .evidence_packages(ids.b_match)
            .await
            .unwrap()
            .is_empty(),
        "no package of B's match was made"
    );
    let b_notice = notices::get(site.store.as_ref(), ids.b_notice, None)
        .await
        .unwrap();
    assert_eq!(b_notice.status, copytrace_store::NoticeStatus::Draft);
    assert!(!b_notice.body.contains("rewritten"));
    // A notice A writes naming holder B is A's own, about A's copies only.
    let created = site
        .post_form(
            "/notices",
            &holder.cookie,
            Some(&holder.csrf),
            &[
                ("site", "pirate.example".to_owned()),
                ("holder", "Holder B".to_owned()),
            ],
        )
        .await;
    assert_eq!(created.status(), StatusCode::SEE_OTHER);
    let id: Id = created.headers()[LOCATION]
        .to_str()
        .unwrap()
        .trim_start_matches("/notices/")
        .parse()
        .unwrap();
    let notice = notices::get(site.store.as_ref(), id, Some(ids.a))
        .await
        .expect("the notice is A's");
    assert!(!notice.body.contains("b-1"), "{}", notice.body);

    // The API, by token: B's objects answer exactly as missing ones.
    let token = site.token(HOLDER_A).await;
    let (b_token, b_token_id) = accounts::create_api_token(site.store.as_ref(), HOLDER_B, "b")
        .await
        .unwrap();
    let auth = ApiAuth::Token(&token);
    let (_, missing) = site
        .api(reqwest::Method::GET, "/api/v1/works/999999", auth, None)
        .await;
    for path in [
        format!("/api/v1/works/{}", ids.b_work),
        format!("/api/v1/matches/{}", ids.b_match),
        format!("/api/v1/notices/{}", ids.b_notice),
        format!("/api/v1/matches?work={}", ids.b_work),
        format!("/api/v1/stats/works?work={}", ids.b_work),
        format!("/api/v1/stats/sites?work={}", ids.b_work),
        format!("/api/v1/stats/daily?work={}", ids.b_work),
    ] {
        let (status, body) = site.api(reqwest::Method::GET, &path, auth, None).await;
        assert_eq!((status, &body), (404, &missing), "GET {path}");
    }
    for (path, body) in [
        (
            "/api/v1/matches/decide".to_owned(),
            json!({"ids": [ids.a_match, ids.b_match], "decision": "reject"}),
        ),
        (
            format!("/api/v1/notices/{}/status", ids.b_notice),
            json!({"status": "ignored"}),
        ),
    ] {
        let (status, answer) = site
            .api(reqwest::Method::POST, &path, auth, Some(&body))
            .await;
        assert_eq!((status, &answer), (404, &missing), "POST {path}");
    }
    // Lists and filters hold A's objects only.
    let (_, listed) = site
        .api(
            reqwest::Method::GET,
            "/api/v1/matches?site=b-only.example",
            auth,
            None,
        )
        .await;
    assert_eq!(listed["matches"], json!([]), "{listed}");
    let (_, tokens) = site
        .api(reqwest::Method::GET, "/api/v1/tokens", auth, None)
        .await;
    assert!(
        tokens
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["id"] != b_token_id),
        "B's token is not listed to A: {tokens}"
    );
    let (status, me) = site
        .api(
            reqwest::Method::GET,
            "/api/v1/me",
            ApiAuth::Token(&b_token),
            None,
        )
        .await;
    assert_eq!((status, me["email"].as_str()), (200, Some(HOLDER_B)));
    let after_api = site
        .store
        .list_matches(&MatchFilter {
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        reviews(&after_api),
        reviews(&before),
        "the API decided nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_object_of_another_holder_is_not_found_on_sqlite() {
    every_object_of_another_holder_is_not_found(on_sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_object_of_another_holder_is_not_found_on_postgres() {
    on_postgres(every_object_of_another_holder_is_not_found).await;
}

// ----- A01 CSRF: every state-changing request -----

/// What the forms below could change, as text: two snapshots are equal when nothing changed.
async fn state(site: &Site, admin: &Session) -> String {
    let store = site.store.as_ref();
    let schedules: Vec<(String, bool)> = schedules::list(store)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.name, s.enabled))
        .collect();
    let runs = store.list_runs(&RunFilter::default()).await.unwrap().len();
    let users: Vec<String> = accounts::list(store)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.user.email)
        .collect();
    let notices: Vec<(Id, String, String)> = notices::list(store, None)
        .await
        .unwrap()
        .into_iter()
        .map(|n| (n.id, n.status.as_str().to_owned(), n.body))
        .collect();
    let matches: Vec<(Id, Review)> = store
        .list_matches(&MatchFilter {
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.review))
        .collect();
    let packages = store
        .evidence_packages(site.ids.a_match)
        .await
        .unwrap()
        .len();
    let works = copytrace_service::library::list_works(store, None)
        .await
        .unwrap()
        .len();
    let library = site
        .get("/library", Some(&admin.cookie))
        .await
        .text()
        .await
        .unwrap();
    let imports = library.matches("/library/imports/").count();
    let logged_in = site.get("/", Some(&admin.cookie)).await.status();
    format!(
        "{schedules:?} runs {runs} {users:?} {notices:?} {matches:?} packages {packages} \
         works {works} imports {imports} session {logged_in}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_state_changing_request_refuses_a_missing_wrong_or_foreign_token() {
    let site = on_sqlite().await;
    let ids = &site.ids;
    let admin = site.login(ADMIN).await;
    // Another live session's token: valid, but not this session's.
    let foreign = site.login(OPERATOR).await;
    assert_ne!(admin.csrf, foreign.csrf);
    let forms: Vec<(String, Fields, u16)> = vec![
        (format!("/matches/{}/package", ids.a_match), Vec::new(), 200),
        (
            "/notices".into(),
            vec![
                ("site", "pirate.example".into()),
                ("holder", "Holder A".into()),
            ],
            303,
        ),
        (
            format!("/notices/{}/text", ids.a_notice),
            vec![("body", "edited".into())],
            303,
        ),
        (
            format!("/notices/{}/status", ids.a_notice),
            vec![("status", "sent".into())],
            303,
        ),
        (
            "/schedules".into(),
            vec![
                ("name", "made-by-csrf".into()),
                ("cron", "0 4 * * *".into()),
                ("timezone", "UTC".into()),
                ("seeds", "https://pirate.example/".into()),
                ("max_pages", "10".into()),
            ],
            303,
        ),
        (
            "/matches/decide".into(),
            vec![
                ("decision", "reject".into()),
                ("id", ids.a_match.to_string()),
            ],
            303,
        ),
        ("/schedules/nightly/pause".into(), Vec::new(), 303),
        ("/schedules/nightly/resume".into(), Vec::new(), 303),
        ("/schedules/nightly/run".into(), Vec::new(), 303),
        ("/schedules/nightly/delete".into(), Vec::new(), 303),
        (
            "/users".into(),
            vec![
                ("email", "new@example.com".into()),
                ("role", "analyst".into()),
                ("holder", String::new()),
                ("password", PASSWORD.into()),
            ],
            303,
        ),
        (
            "/users/remove".into(),
            vec![("email", "new@example.com".into())],
            303,
        ),
    ];
    let upload = [("files", "csrf.txt", "第一章\n少年推开木门，雨声未歇。\n")];
    for (path, fields, done) in &forms {
        let before = state(&site, &admin).await;
        for (what, token) in [
            ("no token", None),
            ("a wrong token", Some("forged")),
            ("another session's token", Some(foreign.csrf.as_str())),
        ] {
            let response = site.post_form(path, &admin.cookie, token, fields).await;
            assert_eq!(
                response.status(),
                StatusCode::FORBIDDEN,
                "POST {path} with {what}"
            );
        }
        assert_eq!(
            state(&site, &admin).await,
            before,
            "POST {path} refused changed something"
        );
        // The same form with the session's own token is done: the token was the reason.
        let response = site
            .post_form(path, &admin.cookie, Some(&admin.csrf), fields)
            .await;
        assert_eq!(response.status().as_u16(), *done, "POST {path}");
        assert_ne!(state(&site, &admin).await, before, "POST {path} did it");
    }
    // The library upload (multipart).
    let before = state(&site, &admin).await;
    for token in [None, Some("forged"), Some(foreign.csrf.as_str())] {
        let response = site.upload(&admin.cookie, token, &upload).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "upload {token:?}");
    }
    assert_eq!(state(&site, &admin).await, before, "a refused upload");
    let done = site.upload(&admin.cookie, Some(&admin.csrf), &upload).await;
    site.finished_import(&admin.cookie, done).await;

    // The API by cookie: another session's token in X-CSRF-Token is refused too.
    let calls: Vec<(reqwest::Method, String, Value)> = vec![
        (
            reqwest::Method::POST,
            "/api/v1/matches/decide".into(),
            json!({"ids": [ids.a_match], "decision": "license"}),
        ),
        (
            reqwest::Method::POST,
            "/api/v1/notices".into(),
            json!({"site": "pirate.example", "holder": "Holder A"}),
        ),
        (
            reqwest::Method::POST,
            format!("/api/v1/notices/{}/status", ids.a_notice),
            json!({"status": "ignored"}),
        ),
        (
            reqwest::Method::POST,
            "/api/v1/schedules".into(),
            json!({"name": "api-csrf", "cron": "0 5 * * *", "seeds": ["https://pirate.example/"]}),
        ),
        (
            reqwest::Method::POST,
            "/api/v1/schedules/made-by-csrf/pause".into(),
            json!({}),
        ),
        (
            reqwest::Method::POST,
            "/api/v1/schedules/made-by-csrf/resume".into(),
            json!({}),
        ),
        (
            reqwest::Method::POST,
            "/api/v1/schedules/made-by-csrf/run".into(),
            json!({}),
        ),
        (
            reqwest::Method::DELETE,
            "/api/v1/schedules/made-by-csrf".into(),
            json!({}),
        ),
    ];
    let before = state(&site, &admin).await;
    for (method, path, body) in &calls {
        for token in [None, Some("forged"), Some(foreign.csrf.as_str())] {
            let (status, answer) = site
                .api(
                    method.clone(),
                    path,
                    ApiAuth::Cookie(&admin.cookie, token),
                    Some(body),
                )
                .await;
            assert_eq!(status, 403, "{method} {path} with {token:?}: {answer}");
        }
    }
    assert_eq!(state(&site, &admin).await, before, "refused API calls");
    // Logging out, last: refused without the token, the session lives on.
    for token in [None, Some("forged"), Some(foreign.csrf.as_str())] {
        let response = site.post_form("/logout", &admin.cookie, token, &[]).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "logout {token:?}");
    }
    assert_eq!(
        site.get("/", Some(&admin.cookie)).await.status(),
        StatusCode::OK
    );
    let out = site
        .post_form("/logout", &admin.cookie, Some(&admin.csrf), &[])
        .await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        site.get("/", Some(&admin.cookie)).await.status(),
        StatusCode::SEE_OTHER,
        "logged out"
    );
}

// ----- A03 injection: stored XSS from crawled content -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_from_crawled_pages_work_files_and_operators_is_shown_as_text() {
    let site = on_sqlite().await;
    let ids = &site.ids;
    let admin = site.login(ADMIN).await;
    let holder = site.login(HOLDER_A).await;
    // A work file whose <title> is markup (entities decoded into text by the reader).
    let html = "<html><head><title>&lt;script&gt;window.__xss=4&lt;/script&gt;</title></head>\
                <body><p>第一章 雨夜。少年推开木门，雨声未歇。灯下的老人抬起头来。</p></body></html>";
    let uploaded = site
        .upload(
            &holder.cookie,
            Some(&holder.csrf),
            &[("files", "evil.html", html)],
        )
        .await;
    let (import, _) = site.finished_import(&holder.cookie, uploaded).await;
    // As askama escapes (numeric references), or with the named ones.
    let escaped = |text: &str| {
        [
            [
                ("<", "&#60;"),
                (">", "&#62;"),
                ("\"", "&#34;"),
                ("'", "&#39;"),
            ],
            [
                ("<", "&lt;"),
                (">", "&gt;"),
                ("\"", "&quot;"),
                ("'", "&#x27;"),
            ],
        ]
        .map(|table| {
            table
                .iter()
                .fold(text.to_owned(), |t, (from, to)| t.replace(from, to))
        })
    };
    let shown_escaped = |body: &str, text: &str| escaped(text).iter().any(|e| body.contains(e));
    let pages: Vec<(&Session, String, Vec<&str>)> = vec![
        (&admin, "/".into(), vec![]),
        (&admin, "/works".into(), vec!["window.__xss=1"]),
        (
            &admin,
            format!("/works/{}", ids.a_work),
            vec!["window.__xss=1"],
        ),
        (&admin, "/matches".into(), vec!["window.__xss=1"]),
        (&admin, "/review?review=all".into(), vec!["window.__xss=1"]),
        (
            &admin,
            format!("/matches/{}", ids.a_match),
            vec!["window.__xss=1", "onerror="],
        ),
        (&admin, "/stats".into(), vec!["window.__xss=1"]),
        (&admin, "/stats?table=sites".into(), vec![]),
        (&admin, "/stats?table=daily".into(), vec![]),
        (
            &admin,
            "/sites/pirate.example".into(),
            vec!["window.__xss=1"],
        ),
        (&admin, "/notices".into(), vec![]),
        (&admin, format!("/notices/{}", ids.a_notice), vec![]),
        (&admin, "/schedules".into(), vec![]),
        (&admin, "/schedules/nightly".into(), vec!["svg onload"]),
        (&admin, "/runs".into(), vec!["onerror="]),
        (&admin, "/users".into(), vec![]),
        (&holder, "/".into(), vec![]),
        (&holder, "/works".into(), vec!["window.__xss=1"]),
        (
            &holder,
            format!("/matches/{}", ids.a_match),
            vec!["window.__xss=1", "onerror="],
        ),
        (&holder, import.clone(), vec!["window.__xss=4"]),
    ];
    for (session, path, expected) in pages {
        let response = site.get(&path, Some(&session.cookie)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body = response.text().await.unwrap();
        for live in LIVE {
            assert!(!body.contains(live), "{path} carries {live:?} as markup");
        }
        for text in expected {
            let shown = match text {
                "window.__xss=1" => shown_escaped(&body, EVIL_SCRIPT),
                "window.__xss=4" => shown_escaped(&body, "<script>window.__xss=4</script>"),
                "onerror=" => shown_escaped(&body, "onerror=\"window.__xss=2\">"),
                "svg onload" => shown_escaped(&body, "<svg onload=window.__xss=3>"),
                other => panic!("{other}"),
            };
            assert!(shown, "{path} shows {text:?} as text:\n{body}");
        }
    }
    // The JSON API carries the text as JSON strings, for a client to escape.
    let token = site.token(ADMIN).await;
    let (_, detail) = site
        .api(
            reqwest::Method::GET,
            &format!("/api/v1/matches/{}", ids.a_match),
            ApiAuth::Token(&token),
            None,
        )
        .await;
    assert!(detail["work_title"].as_str().unwrap().contains(EVIL_SCRIPT));
}

// ----- A07 identification and authentication failures -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_always_starts_a_new_session_whatever_cookie_came_with_it() {
    let site = on_sqlite().await;
    let me = |cookie: String| {
        let site = &site;
        async move {
            site.api(
                reqwest::Method::GET,
                "/api/v1/me",
                ApiAuth::Cookie(&cookie, None),
                None,
            )
            .await
        }
    };
    // An attacker plants a session id of their choosing, or their own live session.
    let attacker = site.login(OPERATOR).await;
    let chosen = format!("copytrace_session={}", "a".repeat(64));
    for planted in [chosen.clone(), attacker.cookie.clone()] {
        let (login_cookie, csrf) = site.login_form(None).await;
        let response = site
            .post_login(
                &format!("{planted}; {login_cookie}"),
                &csrf,
                HOLDER_A,
                PASSWORD,
            )
            .await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let issued = cookie_pair(&response, "copytrace_session").expect("a new session cookie");
        assert_ne!(issued, planted, "the session id changes at login");
        assert_ne!(
            issued.split_once('=').unwrap().1,
            login_cookie.split_once('=').unwrap().1,
            "the session id is not the login form's token"
        );
        let (status, who) = me(issued.clone()).await;
        assert_eq!((status, who["email"].as_str()), (200, Some(HOLDER_A)));
        // The planted cookie did not become the victim's session.
        let (status, who) = me(planted.clone()).await;
        if planted == chosen {
            assert_eq!(status, 401, "a chosen id is no session: {who}");
        } else {
            assert_eq!(who["email"], OPERATOR, "still only the attacker's own");
        }
        // The new session's form token is its own, not the login form's.
        let home = site.get("/", Some(&issued)).await.text().await.unwrap();
        assert_ne!(csrf_of(&home), csrf);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_is_limited_alike_for_unknown_accounts_and_passwords_are_never_echoed() {
    let site = on_sqlite().await;
    let (cookie, csrf) = site.login_form(None).await;
    let guess = "guess-Pa55word-7f3a";
    // An unknown account and a known one with a wrong password get the same answer.
    let unknown = site
        .post_login(&cookie, &csrf, "nobody@example.com", guess)
        .await;
    let known = site.post_login(&cookie, &csrf, ADMIN, guess).await;
    assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(known.status(), StatusCode::UNAUTHORIZED);
    let unknown = unknown.text().await.unwrap();
    let known = known.text().await.unwrap();
    assert_eq!(
        unknown
            .replace("nobody@example.com", ADMIN)
            .replace(&csrf_of(&unknown), ""),
        known.replace(&csrf_of(&known), ""),
        "the same page but for the e-mail typed"
    );
    assert!(
        known.contains(ADMIN) && !known.contains(guess),
        "the form keeps the e-mail, never the password"
    );
    // An unknown account is limited like a known one: guessing cannot tell them apart.
    for _ in 1..accounts::MAX_ACCOUNT_FAILURES {
        site.post_login(&cookie, &csrf, "nobody@example.com", guess)
            .await;
    }
    let limited = site
        .post_login(&cookie, &csrf, "nobody@example.com", guess)
        .await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    // An admin adding an account with a too-short password sees why, not the password.
    let admin = site.login(ADMIN).await;
    let short = "Shrt-7f3a";
    let refused = site
        .post_form(
            "/users",
            &admin.cookie,
            Some(&admin.csrf),
            &[
                ("email", "short@example.com".into()),
                ("role", "analyst".into()),
                ("password", short.into()),
            ],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let body = refused.text().await.unwrap();
    assert!(body.contains("10"), "the reason: {body}");
    assert!(!body.contains(short), "the password is not echoed");
    let users = accounts::list(site.store.as_ref()).await.unwrap();
    assert!(users.iter().all(|a| a.user.email != "short@example.com"));
}

// ----- A10 SSRF: schedules, queued crawls, the evidence renderer -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_at_private_addresses_are_refused_unless_allowed() {
    let site = on_sqlite().await;
    let admin = site.login(ADMIN).await;
    let token = site.token(ADMIN).await;
    let private = [
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://LocalHost:9200/_cat",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/admin",
        "http://192.168.1.1/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0x7f.1/",
        "http://2130706433/",
    ];
    for (n, seed) in private.iter().enumerate() {
        let name = format!("private-{n}");
        let form = site
            .post_form(
                "/schedules",
                &admin.cookie,
                Some(&admin.csrf),
                &[
                    ("name", name.clone()),
                    ("cron", "0 3 * * *".into()),
                    ("timezone", "UTC".into()),
                    ("seeds", format!("https://pirate.example/\n{seed}")),
                    ("max_pages", "10".into()),
                ],
            )
            .await;
        assert_eq!(form.status(), StatusCode::BAD_REQUEST, "web: {seed}");
        let body = form.text().await.unwrap();
        assert!(
            body.contains("refused private address"),
            "web: {seed}: {body}"
        );
        let (status, answer) = site
            .api(
                reqwest::Method::POST,
                "/api/v1/schedules",
                ApiAuth::Token(&token),
                Some(&json!({"name": name, "cron": "0 3 * * *", "seeds": [seed]})),
            )
            .await;
        assert_eq!(status, 400, "API: {seed}: {answer}");
        assert!(
            answer["error"]
                .as_str()
                .unwrap()
                .contains("refused private address"),
            "API: {seed}: {answer}"
        );
        // A crawl queued by the CLI is refused the same way.
        let job = copytrace_service::jobs::CrawlJob {
            seeds: vec![(*seed).to_owned()],
            settings: CrawlSettings::default(),
        };
        let queued = copytrace_service::jobs::enqueue_crawl(site.store.as_ref(), &job).await;
        let error = copytrace_service::error::one_line(&queued.expect_err(seed));
        assert!(error.contains("refused private address"), "{seed}: {error}");
    }
    let stored = schedules::list(site.store.as_ref()).await.unwrap();
    assert_eq!(
        stored.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["nightly"],
        "nothing refused was stored"
    );
    assert_eq!(
        site.store
            .list_runs(&RunFilter::default())
            .await
            .unwrap()
            .len(),
        1,
        "no crawl was queued"
    );
    // Allowed explicitly (the CLI's --allow-private-addresses), the same seeds are taken.
    let allowed = schedules::add_crawl_schedule(
        site.store.as_ref(),
        &CrawlSchedule {
            name: "intranet".into(),
            cron: "0 3 * * *".into(),
            timezone: "UTC".into(),
            owner: None,
            seeds: private.iter().map(|s| (*s).to_owned()).collect(),
            settings: CrawlSettings {
                allow_private_addresses: true,
                ..CrawlSettings::default()
            },
        },
    )
    .await;
    assert!(allowed.is_ok(), "{allowed:?}");
    // A public name is taken (a name that does not resolve is left to the crawler's guard).
    let (status, answer) = site
        .api(
            reqwest::Method::POST,
            "/api/v1/schedules",
            ApiAuth::Token(&token),
            Some(&json!({"name": "public", "cron": "0 3 * * *",
                         "seeds": ["https://pirate.example/"]})),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
}

/// A TCP listener on loopback that counts the connections it accepts.
async fn connection_counter() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((_stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (port, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evidence_screenshot_of_a_hostile_page_reaches_no_address() {
    assert!(
        std::env::var_os("COPYTRACE_CHROMIUM").is_some(),
        "COPYTRACE_CHROMIUM is not set: run scripts/with-services (or ./scripts/test), which \
         installs Chromium; the evidence screenshot needs it"
    );
    let site = on_sqlite().await;
    let (port, connections) = connection_counter().await;
    // The counter counts: a connection of our own is seen.
    tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(connections.load(Ordering::SeqCst), 1);
    // The stored page reaches for loopback by address, by name and by IPv4-mapped address,
    // with images, a style sheet, a frame, fetch, a WebSocket and a beacon.
    let text = work_text("a-1");
    let html = format!(
        "<html><head><meta charset=\"utf-8\">\
         <link rel=\"stylesheet\" href=\"http://localhost:{port}/style.css\"></head><body>\
         <img src=\"http://127.0.0.1:{port}/pixel.png\">\
         <img src=\"http://localhost:{port}/name.png\">\
         <iframe src=\"http://[::ffff:127.0.0.1]:{port}/frame\"></iframe>\
         <script>fetch('http://localhost:{port}/fetch').catch(function () {{}});\
         try {{ new WebSocket('ws://127.0.0.1:{port}/ws'); }} catch (e) {{}}\
         navigator.sendBeacon('http://localhost:{port}/beacon', 'x');</script>\
         <p>{text}</p></body></html>"
    );
    let url = "https://pirate.example/hostile.html";
    let capture = NewCapture {
        requested_url: url.into(),
        final_url: url.into(),
        headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
        encoding: "UTF-8".into(),
        body: html.into_bytes(),
        rendering: None,
    };
    let hostile = copy_on(
        site.store.as_ref(),
        (site.ids.a_work, "a-1"),
        url,
        "盗版",
        &text,
        Some(capture),
    )
    .await;
    let holder = site.login(HOLDER_A).await;
    let response = site
        .post_form(
            &format!("/matches/{hostile}/package"),
            &holder.cookie,
            Some(&holder.csrf),
            &[],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let zip = response.bytes().await.unwrap();
    let name = format!("evidence-{hostile}/screenshot.png");
    assert!(
        zip.windows(name.len()).any(|w| w == name.as_bytes()),
        "the page was rendered (the package has its screenshot)"
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "the renderer connected to loopback"
    );
}

// ----- Path traversal: downloads and uploaded catalogs -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_name_their_files_safely_and_unknown_tables_are_not_found() {
    let site = on_sqlite().await;
    let admin = site.login(ADMIN).await;
    for path in [
        "/exports/..%2F..%2Fetc%2Fpasswd?format=csv",
        "/exports/matches%22%0D%0ASet-Cookie:%20x=1?format=csv",
    ] {
        let response = site.get(path, Some(&admin.cookie)).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(response.headers().get(CONTENT_DISPOSITION).is_none());
        assert!(response.headers().get("set-cookie").is_none());
    }
    let mut downloads = Vec::new();
    for table in ["matches", "works", "sites", "daily", "time-to-piracy"] {
        for format in ["csv", "json", "ndjson", "xlsx"] {
            let response = site
                .get(
                    &format!("/exports/{table}?format={format}"),
                    Some(&admin.cookie),
                )
                .await;
            assert_eq!(response.status(), StatusCode::OK, "{table} {format}");
            downloads.push(response);
        }
    }
    let package = site
        .post_form(
            &format!("/matches/{}/package", site.ids.a_match),
            &admin.cookie,
            Some(&admin.csrf),
            &[],
        )
        .await;
    assert_eq!(package.status(), StatusCode::OK);
    downloads.push(package);
    for response in downloads {
        let disposition = response.headers()[CONTENT_DISPOSITION]
            .to_str()
            .unwrap()
            .to_owned();
        let name = disposition
            .strip_prefix("attachment; filename=\"")
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{disposition}"));
        assert!(
            !name.is_empty()
                && !name.starts_with('.')
                && !name.contains("..")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "{disposition}"
        );
        if name.ends_with(".zip") {
            let zip = response.bytes().await.unwrap();
            let entry = format!("evidence-{}/page.txt", site.ids.a_match);
            assert!(zip.windows(entry.len()).any(|w| w == entry.as_bytes()));
            assert!(!zip.windows(3).any(|w| w == b"../"), "no climbing entry");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_catalog_cannot_read_the_servers_files() {
    let site = on_sqlite().await;
    let admin = site.login(ADMIN).await;
    // A file beside the upload's temporary directory, and one anywhere: neither is uploaded.
    let marker = format!("服务器的秘密{}", std::process::id());
    let secret_text = format!("{marker}，不应被导入。").repeat(20);
    let beside = std::env::temp_dir().join(format!("copytrace-secret-{}.txt", std::process::id()));
    std::fs::write(&beside, &secret_text).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let absolute = elsewhere.path().join("secret.txt");
    std::fs::write(&absolute, &secret_text).unwrap();
    let catalog = format!(
        "external_id,title,author,rights_holder,path,published_at\n\
         fine,Fine,,Holder A,fine.txt,\n\
         absolute,Absolute,,Holder A,{},\n\
         climbing,Climbing,,Holder A,../{},\n",
        absolute.display(),
        beside.file_name().unwrap().to_string_lossy()
    );
    let response = site
        .upload(
            &admin.cookie,
            Some(&admin.csrf),
            &[
                ("catalog", "catalog.csv", &catalog),
                ("files", "fine.txt", &work_text("fine")),
            ],
        )
        .await;
    let (_, page) = site.finished_import(&admin.cookie, response).await;
    std::fs::remove_file(&beside).unwrap();
    assert!(page.contains("upload-report"), "{page}");
    assert_eq!(
        page.matches("outside the upload").count(),
        2,
        "both rows refused, saying why: {page}"
    );
    let works = copytrace_service::library::list_works(site.store.as_ref(), None)
        .await
        .unwrap();
    let ids: Vec<&str> = works.iter().map(|w| w.external_id.as_str()).collect();
    assert!(
        ids.contains(&"fine"),
        "the uploaded file is imported: {ids:?}"
    );
    assert!(
        !ids.contains(&"absolute") && !ids.contains(&"climbing"),
        "no file of the server is: {ids:?}"
    );
    for work in &works {
        let text = site.store.get_work(work.id).await.unwrap().content;
        assert!(
            !text.contains(&marker),
            "{} holds the server's file",
            work.external_id
        );
    }
}
