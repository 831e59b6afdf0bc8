//! Who may open what: every route of the admin web × every role (and anonymous) gets exactly
//! the intended status; a rights holder asking for another holder's work, match, notice,
//! statistics or export by id gets 404 and changes nothing; every form refuses a post without
//! its token; SQL-looking filters are harmless. On SQLite and on PostgreSQL.

use std::net::SocketAddr;
use std::sync::Arc;

use chrono::Utc;
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::{accounts, holders, notices};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    EvidencePassage, Id, MatchFilter, NewMatch, NewPage, NewWork, Review, Role, Store,
};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};

const PASSWORD: &str = "correct horse battery";
const ADMIN: &str = "admin@example.com";
const OPERATOR: &str = "operator@example.com";
const ANALYST: &str = "analyst@example.com";
const HOLDER_A: &str = "a@example.com";

/// Holder A's and holder B's objects, by id.
struct Objects {
    a_holder: Id,
    b_holder: Id,
    a_work: Id,
    a_match: Id,
    a_notice: Id,
    b_work: Id,
    b_match: Id,
    b_notice: Id,
}

/// A work of `holder` copied by one page whose title and text carry markup and a
/// `javascript:` link; returns the work's and the match's ids.
async fn copied_work(store: &dyn Store, holder: Id, external_id: &str) -> (Id, Id) {
    let text = format!("{external_id} 的正文，第一段。").repeat(30);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: external_id.into(),
            title: format!("<script>alert('{external_id}')</script>"),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text.clone(),
            fingerprint_version: 1,
            segments: Vec::new(),
            fingerprints: Vec::new(),
            author: None,
            published_at: None,
            chapters: Vec::new(),
            licensed_hosts: None,
        })
        .await
        .unwrap();
    let page_text = format!("<a href=\"javascript:alert(1)\">x</a>{text}");
    let hash = copytrace_store::sha256_hex(page_text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: format!("https://pirate.example/{external_id}.html"),
            title: Some("\"><img src=x onerror=alert(2)>".into()),
            text: page_text,
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: Utc::now(),
            etag: None,
            last_modified: None,
            capture: None,
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
            page_end: 60,
            work_start: 0,
            work_end: 30,
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], Utc::now())
        .await
        .unwrap();
    let matched = store
        .list_matches(&MatchFilter {
            work_id: Some(work),
            ..MatchFilter::default()
        })
        .await
        .unwrap();
    (work, matched[0].id)
}

/// Two holders with a copied work and a notice each, a user of every role, a schedule.
async fn seed(store: &dyn Store) -> Objects {
    let a = store.ensure_rights_holder("Holder A").await.unwrap();
    let b = store.ensure_rights_holder("Holder B").await.unwrap();
    let (a_work, a_match) = copied_work(store, a, "a-1").await;
    let (b_work, b_match) = copied_work(store, b, "b-1").await;
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
        (ANALYST, Role::Analyst, None),
        (HOLDER_A, Role::RightsHolder, Some("Holder A")),
    ] {
        accounts::add_user(store, email, role, holder, PASSWORD)
            .await
            .unwrap();
    }
    copytrace_service::schedules::add_crawl_schedule(
        store,
        &copytrace_service::schedules::CrawlSchedule {
            name: "nightly".into(),
            cron: "0 3 * * *".into(),
            timezone: "Asia/Shanghai".into(),
            owner: None,
            seeds: vec!["https://pirate.example/".into()],
            settings: Default::default(),
        },
    )
    .await
    .unwrap();
    Objects {
        a_holder: a,
        b_holder: b,
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

/// A logged-in user: the session cookie and the session's form token.
struct Session {
    cookie: String,
    csrf: String,
}

fn cookie_pair(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
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
    async fn login(&self, email: &str) -> Session {
        let form = self
            .http
            .get(format!("{}/login", self.base))
            .send()
            .await
            .unwrap();
        let login_cookie = cookie_pair(&form, "copytrace_csrf").unwrap();
        let csrf = csrf_of(&form.text().await.unwrap());
        let response = self
            .http
            .post(format!("{}/login", self.base))
            .header(COOKIE, &login_cookie)
            .form(&[
                ("csrf", csrf.as_str()),
                ("email", email),
                ("password", PASSWORD),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{email} logs in");
        let cookie = cookie_pair(&response, "copytrace_session").unwrap();
        let home = self.get("/", Some(&cookie)).await.text().await.unwrap();
        Session {
            csrf: csrf_of(&home),
            cookie,
        }
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> reqwest::Response {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        request.send().await.unwrap()
    }

    async fn post(
        &self,
        path: &str,
        session: Option<&Session>,
        fields: &[(&str, String)],
    ) -> reqwest::Response {
        let mut form: Vec<(&str, String)> = fields.to_vec();
        let mut request = self.http.post(format!("{}{path}", self.base));
        if let Some(session) = session {
            request = request.header(COOKIE, &session.cookie);
            form.push(("csrf", session.csrf.clone()));
        }
        request.form(&form).send().await.unwrap()
    }
}

/// A form's fields.
type Fields = Vec<(&'static str, String)>;

/// The roles of the matrix's columns.
const ROLES: [&str; 4] = [ADMIN, OPERATOR, ANALYST, HOLDER_A];

/// Statuses per column (admin, operator, analyst, rights holder) for pages of each area.
const EVERYONE: [u16; 4] = [200, 200, 200, 200];
const READERS: [u16; 4] = [200, 403, 200, 200];
const DECIDERS: [u16; 4] = [200, 403, 403, 200];
const CRAWLERS: [u16; 4] = [200, 200, 403, 403];
const ADMINS: [u16; 4] = [200, 403, 403, 403];
const LIBRARIANS: [u16; 4] = [200, 200, 403, 200];

async fn every_route_answers_every_role_as_intended(site: Site) {
    let ids = &site.ids;
    let pages: Vec<(String, [u16; 4])> = vec![
        ("/".into(), EVERYONE),
        ("/works".into(), READERS),
        (format!("/works/{}", ids.a_work), READERS),
        ("/matches".into(), READERS),
        (format!("/matches/{}", ids.a_match), READERS),
        ("/stats".into(), READERS),
        ("/stats?table=sites".into(), READERS),
        ("/stats?table=daily".into(), READERS),
        ("/sites".into(), EVERYONE),
        ("/sites/pirate.example".into(), EVERYONE),
        ("/exports/matches?format=csv".into(), READERS),
        ("/exports/works?format=xlsx".into(), READERS),
        ("/exports/sites?format=json".into(), READERS),
        ("/exports/daily?format=ndjson".into(), READERS),
        ("/exports/time-to-piracy?format=csv".into(), READERS),
        ("/review".into(), DECIDERS),
        ("/notices".into(), DECIDERS),
        (format!("/notices/{}", ids.a_notice), DECIDERS),
        (format!("/holders/{}/profile", ids.a_holder), DECIDERS),
        (format!("/holders/{}/licences", ids.a_holder), DECIDERS),
        (format!("/holders/{}/alerts", ids.a_holder), DECIDERS),
        // A rights holder is sent to its own profile.
        ("/holders".into(), [200, 403, 403, 303]),
        ("/schedules".into(), CRAWLERS),
        ("/schedules/nightly".into(), CRAWLERS),
        ("/runs".into(), CRAWLERS),
        ("/users".into(), ADMINS),
        ("/library".into(), LIBRARIANS),
    ];
    let mut sessions = Vec::new();
    for email in ROLES {
        sessions.push(site.login(email).await);
    }
    for (path, expected) in &pages {
        let anonymous = site.get(path, None).await;
        assert_eq!(
            anonymous.status(),
            StatusCode::SEE_OTHER,
            "anonymous {path}"
        );
        assert_eq!(anonymous.headers()[LOCATION], "/login", "anonymous {path}");
        for (column, session) in sessions.iter().enumerate() {
            let status = site.get(path, Some(&session.cookie)).await.status();
            assert_eq!(
                status.as_u16(),
                expected[column],
                "GET {path} as {}",
                ROLES[column]
            );
        }
    }

    // Forms: each role posts a valid one (its own token); 303 is done, 403 refused.
    let schedule = |name: &str| {
        vec![
            ("name", name.to_owned()),
            ("cron", "*/30 * * * *".to_owned()),
            ("timezone", "UTC".to_owned()),
            ("seeds", "https://pirate.example/".to_owned()),
            ("max_pages", "10".to_owned()),
        ]
    };
    for (column, session) in sessions.iter().enumerate() {
        let role = ROLES[column];
        let forms: Vec<(String, Fields, u16)> = vec![
            (
                "/matches/decide".into(),
                vec![
                    ("decision", "confirm".into()),
                    ("id", ids.a_match.to_string()),
                    ("back", "/review".into()),
                ],
                DECIDERS[column],
            ),
            (
                "/notices".into(),
                vec![
                    ("site", "pirate.example".into()),
                    ("lang", "en".into()),
                    ("holder", "Holder A".into()),
                ],
                DECIDERS[column],
            ),
            (
                format!("/notices/{}/text", ids.a_notice),
                vec![("body", format!("edited by {column}"))],
                DECIDERS[column],
            ),
            (
                format!("/notices/{}/status", ids.a_notice),
                vec![("status", "draft".into())],
                DECIDERS[column],
            ),
            (
                format!("/holders/{}/profile", ids.a_holder),
                vec![
                    ("legal_name", "Holder A Ltd.".into()),
                    ("email", "legal@holder.example".into()),
                    ("signature", "/s/ Holder A".into()),
                    ("agent_name", format!("agent {column}")),
                    ("language", "en".into()),
                ],
                DECIDERS[column],
            ),
            (
                "/schedules".into(),
                schedule(&format!("by-{column}")),
                CRAWLERS[column],
            ),
            (
                "/schedules/nightly/pause".into(),
                Vec::new(),
                CRAWLERS[column],
            ),
            (
                "/schedules/nightly/run".into(),
                Vec::new(),
                CRAWLERS[column],
            ),
            (
                "/users".into(),
                vec![
                    ("email", format!("new-{column}@example.com")),
                    ("role", "analyst".into()),
                    ("holder", String::new()),
                    ("password", PASSWORD.into()),
                ],
                ADMINS[column],
            ),
            (
                "/users/remove".into(),
                vec![("email", format!("new-{column}@example.com"))],
                ADMINS[column],
            ),
            (
                format!("/holders/{}/licences", ids.a_holder),
                vec![("host", format!("partner-{column}.example"))],
                DECIDERS[column],
            ),
            (
                format!("/holders/{}/licences/remove", ids.a_holder),
                vec![("host", format!("partner-{column}.example"))],
                DECIDERS[column],
            ),
            (
                format!("/holders/{}/alerts", ids.a_holder),
                vec![
                    ("kind", "email".into()),
                    ("address", format!("alerts-{column}@holder.example")),
                ],
                DECIDERS[column],
            ),
            (
                "/sites/pirate.example/contacts".into(),
                vec![
                    ("email", format!("desk-{column}@pirate.example")),
                    ("kind", "general".into()),
                ],
                CRAWLERS[column],
            ),
            (
                "/sites/pirate.example/contacts/remove".into(),
                vec![("email", format!("desk-{column}@pirate.example"))],
                CRAWLERS[column],
            ),
        ];
        for (path, fields, allowed) in forms {
            let expected = if allowed == 200 { 303 } else { 403 };
            let status = site.post(&path, Some(session), &fields).await.status();
            assert_eq!(status.as_u16(), expected, "POST {path} as {role}");
            // Anonymous posts go to the login; a post without the token is refused.
            let anonymous = site.post(&path, None, &fields).await;
            assert_eq!(
                anonymous.status(),
                StatusCode::SEE_OTHER,
                "anonymous {path}"
            );
            let mut forged = site
                .http
                .post(format!("{}{path}", site.base))
                .header(COOKIE, &session.cookie);
            forged = forged.form(&fields);
            assert_eq!(
                forged.send().await.unwrap().status(),
                StatusCode::FORBIDDEN,
                "POST {path} as {role} without the form's token"
            );
        }
    }
    // The evidence package: a ZIP for those who may read matches.
    for (column, session) in sessions.iter().enumerate() {
        let path = format!("/matches/{}/package", ids.a_match);
        let response = site.post(&path, Some(session), &[]).await;
        assert_eq!(
            response.status().as_u16(),
            READERS[column],
            "POST {path} as {}",
            ROLES[column]
        );
        if response.status() == StatusCode::OK {
            assert_eq!(response.headers()["content-type"], "application/zip");
            let bytes = response.bytes().await.unwrap();
            assert!(bytes.starts_with(b"PK\x03\x04"), "a ZIP archive");
        }
    }
    let users = accounts::list(site.store.as_ref()).await.unwrap();
    assert!(
        users.iter().all(|u| !u.user.email.starts_with("new-")),
        "the admin's account was added and removed, nobody else's"
    );
}

async fn another_holders_objects_are_not_found(site: Site) {
    let ids = &site.ids;
    let holder = site.login(HOLDER_A).await;
    for path in [
        format!("/works/{}", ids.b_work),
        format!("/matches/{}", ids.b_match),
        format!("/notices/{}", ids.b_notice),
        format!("/holders/{}/profile", ids.b_holder),
        "/holders/999999/profile".to_owned(),
        format!("/exports/matches?format=json&work={}", ids.b_work),
        format!("/exports/works?format=csv&work={}", ids.b_work),
        format!("/stats?work={}", ids.b_work),
        format!("/matches?work={}", ids.b_work),
        "/works/999999".to_owned(),
        "/matches/999999".to_owned(),
        "/notices/999999".to_owned(),
    ] {
        let response = site.get(&path, Some(&holder.cookie)).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = response.text().await.unwrap();
        assert!(!body.contains("b-1"), "{path} shows nothing of B's work");
    }
    for (path, fields) in [
        (
            "/matches/decide".to_owned(),
            vec![
                ("decision", "reject".to_owned()),
                ("id", ids.b_match.to_string()),
            ],
        ),
        (
            format!("/notices/{}/status", ids.b_notice),
            vec![("status", "ignored".to_owned())],
        ),
        (format!("/matches/{}/package", ids.b_match), Vec::new()),
        (
            format!("/notices/{}/text", ids.b_notice),
            vec![("body", "rewritten".to_owned())],
        ),
        (
            format!("/holders/{}/profile", ids.b_holder),
            vec![("legal_name", "Taken Over Ltd.".to_owned())],
        ),
    ] {
        let status = site.post(&path, Some(&holder), &fields).await.status();
        assert_eq!(status, StatusCode::NOT_FOUND, "POST {path}");
    }
    let b_match = copytrace_service::evidence::find_match(site.store.as_ref(), ids.b_match, None)
        .await
        .unwrap();
    assert_eq!(b_match.review, Review::Confirmed, "B's match is untouched");
    let b_notice = notices::get(site.store.as_ref(), ids.b_notice, None)
        .await
        .unwrap();
    assert_eq!(b_notice.status, copytrace_store::NoticeStatus::Draft);
    assert!(
        !b_notice.body.contains("rewritten"),
        "B's notice text is untouched"
    );
    let b_profile = site
        .store
        .rights_holder_profile(ids.b_holder)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b_profile.legal_name.as_deref(), Some("Holder B Ltd."));
    // A's own profile: the notices page links it, a bad e-mail is refused by name and
    // nothing is stored, a good form is saved.
    let notices_page = site.get("/notices", Some(&holder.cookie)).await;
    let html = notices_page.text().await.unwrap();
    let own = format!("/holders/{}/profile", ids.a_holder);
    assert!(html.contains(&format!("href=\"{own}\"")), "{html}");
    assert!(!html.contains(&format!("/holders/{}/profile", ids.b_holder)));
    let refused = site
        .post(
            &own,
            Some(&holder),
            &[
                ("legal_name", "Holder A Group".to_owned()),
                ("email", "legal-at-a".to_owned()),
                ("language", "zh".to_owned()),
            ],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let html = refused.text().await.unwrap();
    assert!(
        html.contains("email &#34;legal-at-a&#34;")
            || html.contains("email &quot;legal-at-a&quot;"),
        "{html}"
    );
    let kept = site
        .store
        .rights_holder_profile(ids.a_holder)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        kept.legal_name.as_deref(),
        Some("Holder A Ltd."),
        "nothing stored"
    );
    let saved = site
        .post(
            &own,
            Some(&holder),
            &[
                ("legal_name", "Holder A Group".to_owned()),
                ("address", "1 Main St\nSpringfield".to_owned()),
                ("email", "legal@a.example".to_owned()),
                ("signature", "/s/ A".to_owned()),
                ("language", "zh".to_owned()),
            ],
        )
        .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let stored = site
        .store
        .rights_holder_profile(ids.a_holder)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.legal_name.as_deref(), Some("Holder A Group"));
    assert_eq!(stored.address.as_deref(), Some("1 Main St\nSpringfield"));
    assert_eq!(stored.language, "zh");
    let shown = site
        .get(&format!("{own}?saved=1"), Some(&holder.cookie))
        .await;
    let html = shown.text().await.unwrap();
    assert!(
        html.contains("Holder A Group") && html.contains("profile-saved"),
        "{html}"
    );
    // A's own export holds A's copy and nothing of B's.
    let export = site
        .get("/exports/matches?format=json", Some(&holder.cookie))
        .await;
    assert_eq!(export.status(), StatusCode::OK);
    let text = export.text().await.unwrap();
    assert!(text.contains("a-1") && !text.contains("b-1"), "{text}");
}

async fn hostile_input_stays_inert(site: Site) {
    let ids = &site.ids;
    let admin = site.login(ADMIN).await;
    let before = site
        .store
        .list_matches(&MatchFilter::default())
        .await
        .unwrap()
        .len();
    for value in [
        "' OR 1=1 --",
        "1; DROP TABLE matches; --",
        "\" UNION SELECT * FROM users --",
        "%' OR '%'='",
    ] {
        for field in [
            "work",
            "site",
            "status",
            "review",
            "since",
            "until",
            "min_score",
        ] {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair(field, value)
                .finish();
            for path in ["/matches", "/review", "/stats", "/exports/matches"] {
                let response = site
                    .get(&format!("{path}?{query}"), Some(&admin.cookie))
                    .await;
                let status = response.status();
                assert!(
                    status == StatusCode::OK || status == StatusCode::BAD_REQUEST,
                    "{path}?{query}: {status}"
                );
                let body = response.text().await.unwrap();
                assert!(!body.contains("<script>alert"), "{path}?{query} escapes");
            }
        }
    }
    let after = site
        .store
        .list_matches(&MatchFilter::default())
        .await
        .unwrap()
        .len();
    assert_eq!(before, after, "no filter changed anything");
    assert_eq!(accounts::list(site.store.as_ref()).await.unwrap().len(), 4);
    for path in [
        "/".to_owned(),
        "/works".to_owned(),
        format!("/works/{}", ids.a_work),
        "/matches".to_owned(),
        "/review?review=all".to_owned(),
        format!("/matches/{}", ids.a_match),
        "/stats".to_owned(),
        format!("/notices/{}", ids.a_notice),
    ] {
        let body = site
            .get(&path, Some(&admin.cookie))
            .await
            .text()
            .await
            .unwrap();
        for live in ["<script>alert", "<img src=x", "href=\"javascript:"] {
            assert!(!body.contains(live), "{path} carries {live:?} live");
        }
    }
}

/// Runs `test` on a fresh in-memory SQLite store.
async fn on_sqlite(test: impl AsyncFnOnce(Site)) {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::connect("sqlite::memory:").await.unwrap());
    test(serve(store).await).await;
}

/// Runs `test` on a fresh database of the test run's PostgreSQL server
/// (`COPYTRACE_TEST_POSTGRES_URL`, started by `./scripts/test`); unset is a failure.
async fn on_postgres(test: impl AsyncFnOnce(Site)) {
    use sqlx::Connection;
    let server = std::env::var("COPYTRACE_TEST_POSTGRES_URL").expect(
        "COPYTRACE_TEST_POSTGRES_URL is not set: run ./scripts/test, which starts PostgreSQL",
    );
    let name = format!(
        "copytrace_web_{}_{}",
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

/// Posts an upload form: the session's token, and `files` as (field, name, content).
async fn upload(site: &Site, session: &Session, files: &[(&str, &str, &str)]) -> reqwest::Response {
    let mut form = reqwest::multipart::Form::new().text("csrf", session.csrf.clone());
    for (field, name, content) in files {
        form = form.part(
            field.to_string(),
            reqwest::multipart::Part::text(content.to_string()).file_name(name.to_string()),
        );
    }
    site.http
        .post(format!("{}/library", site.base))
        .header(COOKIE, &session.cookie)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// Follows an upload to its import's page (the upload answers with a redirect to it) and reads
/// the page until the import has finished; returns the page's path and final text.
async fn finished_import(
    site: &Site,
    session: &Session,
    response: reqwest::Response,
) -> (String, String) {
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let page = response.headers()[LOCATION].to_str().unwrap().to_owned();
    assert!(
        page.starts_with("/library/imports/"),
        "sent to the import's page: {page}"
    );
    for _ in 0..600 {
        let answer = site.get(&page, Some(&session.cookie)).await;
        assert_eq!(answer.status(), StatusCode::OK);
        let body = answer.text().await.unwrap();
        if !body.contains("import-running") {
            return (page, body);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the import never finished");
}

async fn uploads_go_into_the_visitors_own_catalog(site: Site) {
    let holder = site.login(HOLDER_A).await;
    let novel = "第一章 雨夜\n少年推开木门，雨声未歇。\n第二章 归来\n灯下的老人抬起头来。\n";
    let response = upload(&site, &holder, &[("files", "../../rain-night.txt", novel)]).await;
    let (import_page, body) = finished_import(&site, &holder, response).await;
    assert!(body.contains("upload-report"), "{body}");
    assert!(body.contains("rain-night"), "{body}");
    // The library page lists the import; no other tenant sees it, staff included.
    let library = site.get("/library", Some(&holder.cookie)).await;
    assert!(library.text().await.unwrap().contains(&import_page));
    let admin = site.login(ADMIN).await;
    let elsewhere = site.get(&import_page, Some(&admin.cookie)).await;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    let library = site.get("/library", Some(&admin.cookie)).await;
    assert!(!library.text().await.unwrap().contains(&import_page));
    let works = copytrace_service::library::list_works(site.store.as_ref(), None)
        .await
        .unwrap();
    let added = works
        .iter()
        .find(|w| w.external_id == "rain-night")
        .expect("the uploaded work, named by its file");
    let a = site.store.ensure_rights_holder("Holder A").await.unwrap();
    assert_eq!(added.rights_holder_id, a, "into the holder's own catalog");
    assert_eq!(added.chapter_count, 2);

    // A catalog names other holders: a rights holder may not import one.
    let catalog =
        "external_id,title,author,rights_holder,path,published_at\nx,X,,Holder B,x.txt,\n";
    let refused = upload(
        &site,
        &holder,
        &[
            ("catalog", "catalog.csv", catalog),
            ("files", "x.txt", novel),
        ],
    )
    .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    // A file that is not text is refused whole, with the reason, and stores nothing.
    let binary = upload(
        &site,
        &holder,
        &[("files", "cover.txt", "\u{0}\u{1}\u{2}PNG")],
    )
    .await;
    let (_, body) = finished_import(&site, &holder, binary).await;
    assert!(body.contains("upload-error"), "{body}");
    assert!(!body.contains("upload-report"), "{body}");
    assert_eq!(
        copytrace_service::library::list_works(site.store.as_ref(), None)
            .await
            .unwrap()
            .len(),
        works.len()
    );
    // Staff import a catalog with its files.
    let imported = upload(
        &site,
        &admin,
        &[
            ("catalog", "catalog.csv", catalog),
            ("files", "x.txt", novel),
        ],
    )
    .await;
    let (staff_import, body) = finished_import(&site, &admin, imported).await;
    assert!(body.contains("upload-report"), "{body}");
    let elsewhere = site.get(&staff_import, Some(&holder.cookie)).await;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    let b = site.store.ensure_rights_holder("Holder B").await.unwrap();
    assert!(
        copytrace_service::library::list_works(site.store.as_ref(), Some(b))
            .await
            .unwrap()
            .iter()
            .any(|w| w.external_id == "x")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_on_sqlite() {
    on_sqlite(uploads_go_into_the_visitors_own_catalog).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_matrix_on_sqlite() {
    on_sqlite(every_route_answers_every_role_as_intended).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_matrix_on_postgres() {
    on_postgres(every_route_answers_every_role_as_intended).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenancy_on_sqlite() {
    on_sqlite(another_holders_objects_are_not_found).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenancy_on_postgres() {
    on_postgres(another_holders_objects_are_not_found).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_on_sqlite() {
    on_sqlite(hostile_input_stays_inert).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_on_postgres() {
    on_postgres(hostile_input_stays_inert).await;
}
