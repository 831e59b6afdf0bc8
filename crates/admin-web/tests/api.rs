//! The JSON API's authorization, as `access.rs` holds the web's: every endpoint × every role
//! (and anonymous) gets exactly the intended status, by API token and by session cookie; a
//! revoked token is refused; a cookie-borne POST without `X-CSRF-Token` is refused and changes
//! nothing; a rights holder asking for another holder's work, match or notice gets the same 404
//! as for a missing one and changes nothing; and the OpenAPI document describes exactly the
//! routes served. On SQLite and on PostgreSQL.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use chrono::Utc;
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::{accounts, holders, notices};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    EvidencePassage, Id, MatchFilter, NewMatch, NewPage, NewWork, NoticeStatus, Review, Role, Store,
};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, SET_COOKIE, WWW_AUTHENTICATE};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";
const ADMIN: &str = "admin@example.com";
const OPERATOR: &str = "operator@example.com";
const ANALYST: &str = "analyst@example.com";
const HOLDER_A: &str = "a@example.com";

/// The roles of the matrix's columns.
const ROLES: [&str; 4] = [ADMIN, OPERATOR, ANALYST, HOLDER_A];

/// Statuses per column (admin, operator, analyst, rights holder) for each area's endpoints.
const EVERYONE: [u16; 4] = [200, 200, 200, 200];
const READERS: [u16; 4] = [200, 403, 200, 200];
const DECIDERS: [u16; 4] = [200, 403, 403, 200];
const CRAWLERS: [u16; 4] = [200, 200, 403, 403];

/// The passage every seeded page copies from its work.
fn passage(external_id: &str) -> String {
    format!("{external_id} 的正文，第一段。")
}

/// A work of `holder` copied word for word by one page, the match confirmed; returns the
/// work's and the match's ids.
async fn copied_work(store: &dyn Store, holder: Id, external_id: &str) -> (Id, Id) {
    let unit = passage(external_id);
    let text = unit.repeat(30);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: external_id.into(),
            title: format!("Title of {external_id}"),
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
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: format!("https://pirate.example/{external_id}.html"),
            title: Some(format!("Pirated {external_id}")),
            text: text.clone(),
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
    let len = unit.len() as u32;
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
            page_end: len,
            work_start: 0,
            work_end: len,
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

/// Holder A's (two copied works) and holder B's (one) objects, by id.
struct Objects {
    a_holder: Id,
    b_holder: Id,
    a_work: Id,
    a_match: Id,
    a_other_match: Id,
    a_notice: Id,
    b_work: Id,
    b_match: Id,
    b_notice: Id,
}

/// Two holders with copied works and a notice each, a user of every role, a schedule.
async fn seed(store: &dyn Store) -> Objects {
    let a = store.ensure_rights_holder("Holder A").await.unwrap();
    let b = store.ensure_rights_holder("Holder B").await.unwrap();
    let (a_work, a_match) = copied_work(store, a, "a-1").await;
    let (_, a_other_match) = copied_work(store, a, "a-2").await;
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
        a_other_match,
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

/// How a request authenticates.
#[derive(Clone, Copy)]
enum Auth<'a> {
    Anonymous,
    /// `Authorization: Bearer` with this token.
    Token(&'a str),
    /// The session cookie, and the CSRF header when given.
    Cookie(&'a Session, Option<&'a str>),
}

/// A logged-in browser: the session cookie and the session's CSRF token.
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

/// An answer: its status and its JSON body (`Null` when the body is not JSON).
struct Answer {
    status: u16,
    body: Value,
    www_authenticate: bool,
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
        let home = self
            .http
            .get(format!("{}/", self.base))
            .header(COOKIE, &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        Session {
            csrf: csrf_of(&home),
            cookie,
        }
    }

    /// A fresh API token of `email`.
    async fn token(&self, email: &str) -> String {
        accounts::create_api_token(self.store.as_ref(), email, "test")
            .await
            .unwrap()
            .0
    }

    async fn call(&self, method: &str, path: &str, auth: Auth<'_>, body: Option<&Value>) -> Answer {
        let url = format!("{}{path}", self.base);
        let mut request = match method {
            "get" => self.http.get(url),
            "post" => self.http.post(url),
            "delete" => self.http.delete(url),
            "put" => self.http.put(url),
            other => panic!("method {other}"),
        };
        match auth {
            Auth::Anonymous => {}
            Auth::Token(token) => {
                request = request.header(AUTHORIZATION, format!("Bearer {token}"))
            }
            Auth::Cookie(session, csrf) => {
                request = request.header(COOKIE, &session.cookie);
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
        let www_authenticate = response.headers().contains_key(WWW_AUTHENTICATE);
        let text = response.text().await.unwrap();
        Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            www_authenticate,
        }
    }

    async fn get(&self, path: &str, auth: Auth<'_>) -> Answer {
        self.call("get", path, auth, None).await
    }

    async fn post(&self, path: &str, auth: Auth<'_>, body: &Value) -> Answer {
        self.call("post", path, auth, Some(body)).await
    }
}

/// Every route the API serves, as the OpenAPI document writes them: the list this test holds
/// the router and the document to.
const ROUTES: [(&str, &str); 46] = [
    ("get", "/api/openapi.json"),
    ("get", "/api/v1/me"),
    ("get", "/api/v1/tokens"),
    ("get", "/api/v1/works"),
    ("get", "/api/v1/works/{id}"),
    ("get", "/api/v1/matches"),
    ("get", "/api/v1/matches/{id}"),
    ("post", "/api/v1/matches/decide"),
    ("get", "/api/v1/stats/works"),
    ("get", "/api/v1/stats/sites"),
    ("get", "/api/v1/stats/daily"),
    ("get", "/api/v1/notices"),
    ("post", "/api/v1/notices"),
    ("get", "/api/v1/notices/{id}"),
    ("post", "/api/v1/notices/{id}/status"),
    ("get", "/api/v1/schedules"),
    ("post", "/api/v1/schedules"),
    ("post", "/api/v1/schedules/{name}/pause"),
    ("post", "/api/v1/schedules/{name}/resume"),
    ("post", "/api/v1/schedules/{name}/run"),
    ("get", "/api/v1/runs"),
    ("get", "/api/v1/holders/{id}/profile"),
    ("post", "/api/v1/holders/{id}/profile"),
    ("get", "/api/v1/holders/{id}/licensed-hosts"),
    ("post", "/api/v1/holders/{id}/licensed-hosts"),
    ("get", "/api/v1/holders/{id}/alerts"),
    ("post", "/api/v1/holders/{id}/alerts"),
    ("get", "/api/v1/sites"),
    ("get", "/api/v1/sites/{host}/contacts"),
    ("post", "/api/v1/sites/{host}/contacts"),
    ("post", "/api/v1/notices/{id}/send"),
    ("post", "/api/v1/notices/send-drafts"),
    ("get", "/api/v1/notices/{id}/history"),
    ("get", "/api/v1/exports/{table}"),
    ("post", "/api/v1/matches/{id}/evidence"),
    ("post", "/api/v1/works"),
    ("get", "/api/v1/imports/{id}"),
    ("get", "/api/v1/stats/holders"),
    ("get", "/api/v1/stats/time-to-piracy"),
    ("delete", "/api/v1/holders/{id}/licensed-hosts/{host}"),
    ("delete", "/api/v1/holders/{id}/alerts/{alert_id}"),
    ("delete", "/api/v1/sites/{host}/contacts/{email}"),
    ("put", "/api/v1/holders/{id}/signature-image"),
    ("get", "/api/v1/holders/{id}/signature-image"),
    ("delete", "/api/v1/holders/{id}/signature-image"),
    // Last: the route check below deletes the schedule the others act on.
    ("delete", "/api/v1/schedules/{name}"),
];

/// The GET endpoints with holder A's ids filled in, and who may read them.
fn readable(ids: &Objects) -> Vec<(String, [u16; 4])> {
    vec![
        ("/api/v1/me".into(), EVERYONE),
        ("/api/v1/tokens".into(), EVERYONE),
        ("/api/v1/works".into(), READERS),
        (format!("/api/v1/works/{}", ids.a_work), READERS),
        ("/api/v1/matches".into(), READERS),
        (format!("/api/v1/matches/{}", ids.a_match), READERS),
        ("/api/v1/stats/works".into(), READERS),
        ("/api/v1/stats/sites".into(), READERS),
        ("/api/v1/stats/daily".into(), READERS),
        ("/api/v1/notices".into(), DECIDERS),
        (format!("/api/v1/notices/{}", ids.a_notice), DECIDERS),
        ("/api/v1/schedules".into(), CRAWLERS),
        ("/api/v1/runs".into(), CRAWLERS),
        (
            format!("/api/v1/holders/{}/profile", ids.a_holder),
            DECIDERS,
        ),
        (
            format!("/api/v1/holders/{}/licensed-hosts", ids.a_holder),
            DECIDERS,
        ),
        (format!("/api/v1/holders/{}/alerts", ids.a_holder), DECIDERS),
        ("/api/v1/sites".into(), EVERYONE),
        ("/api/v1/sites/pirate.example/contacts".into(), EVERYONE),
        (
            format!("/api/v1/notices/{}/history", ids.a_notice),
            DECIDERS,
        ),
        ("/api/v1/stats/holders".into(), READERS),
        ("/api/v1/stats/time-to-piracy".into(), READERS),
        ("/api/v1/exports/matches?format=json".into(), READERS),
    ]
}

/// The state-changing endpoints with a valid body for column `column`, the status a success
/// answers, and who may call them.
fn writable(ids: &Objects, column: usize) -> Vec<(String, Value, u16, [u16; 4])> {
    vec![
        (
            "/api/v1/matches/decide".into(),
            json!({"ids": [ids.a_match], "decision": "confirm", "note": "checked"}),
            200,
            DECIDERS,
        ),
        (
            "/api/v1/notices".into(),
            json!({"site": "pirate.example", "lang": "en", "holder": "Holder A"}),
            201,
            DECIDERS,
        ),
        (
            format!("/api/v1/holders/{}/profile", ids.a_holder),
            json!({"agent_name": format!("agent {column}")}),
            200,
            DECIDERS,
        ),
        (
            format!("/api/v1/notices/{}/status", ids.a_notice),
            json!({"status": "sent"}),
            200,
            DECIDERS,
        ),
        (
            "/api/v1/schedules".into(),
            json!({
                "name": format!("api-{column}"),
                "cron": "*/30 * * * *",
                "timezone": "Europe/Berlin",
                "seeds": ["https://pirate.example/"],
                "max_pages": 10,
            }),
            201,
            CRAWLERS,
        ),
        (
            format!("/api/v1/schedules/api-{column}/pause"),
            json!({}),
            200,
            CRAWLERS,
        ),
        (
            format!("/api/v1/schedules/api-{column}/resume"),
            json!({}),
            200,
            CRAWLERS,
        ),
        (
            format!("/api/v1/schedules/api-{column}/run"),
            json!({}),
            202,
            CRAWLERS,
        ),
        (
            "/api/v1/sites/pirate.example/contacts".into(),
            json!({"email": format!("desk-{column}@pirate.example"), "kind": "general"}),
            201,
            CRAWLERS,
        ),
        (
            format!("/api/v1/holders/{}/licensed-hosts", ids.a_holder),
            json!({"host": format!("partner-{column}.example")}),
            201,
            DECIDERS,
        ),
        (
            format!("/api/v1/holders/{}/alerts", ids.a_holder),
            json!({"kind": "email", "address": format!("alerts-{column}@holder.example")}),
            201,
            DECIDERS,
        ),
    ]
}

/// Holds a 401 answer to what it must be: JSON, saying why, with `WWW-Authenticate`.
#[track_caller]
fn assert_unauthorized(answer: &Answer, what: &str) {
    assert_eq!(answer.status, 401, "{what}");
    assert!(answer.body["error"].is_string(), "{what}: {}", answer.body);
    assert!(answer.www_authenticate, "{what} says how to authenticate");
}

async fn every_endpoint_answers_every_role_as_intended(site: Site) {
    let ids = &site.ids;
    let mut tokens = Vec::new();
    let mut sessions = Vec::new();
    for email in ROLES {
        tokens.push(site.token(email).await);
        sessions.push(site.login(email).await);
    }
    for (path, expected) in readable(ids) {
        assert_unauthorized(&site.get(&path, Auth::Anonymous).await, &path);
        for column in 0..ROLES.len() {
            let role = ROLES[column];
            let by_token = site.get(&path, Auth::Token(&tokens[column])).await;
            assert_eq!(
                by_token.status, expected[column],
                "GET {path} as {role} by token"
            );
            let by_cookie = site.get(&path, Auth::Cookie(&sessions[column], None)).await;
            assert_eq!(
                by_cookie.status, expected[column],
                "GET {path} as {role} by cookie (no CSRF header needed to read)"
            );
            if expected[column] == 200 {
                assert!(
                    by_token.body.is_object() || by_token.body.is_array(),
                    "GET {path} as {role} answers JSON"
                );
            } else {
                assert!(by_token.body["error"].is_string(), "GET {path} as {role}");
            }
        }
    }
    // A rights holder's lists hold its own objects only.
    let holder = Auth::Token(&tokens[3]);
    let works = site.get("/api/v1/works", holder).await.body;
    assert_eq!(works["total"], 2, "{works}");
    let matches = site.get("/api/v1/matches", holder).await.body;
    let seen: BTreeSet<i64> = matches["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert_eq!(seen, BTreeSet::from([ids.a_match, ids.a_other_match]));
    let listed = site.get("/api/v1/notices", holder).await.body;
    let notices: Vec<i64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_i64().unwrap())
        .collect();
    assert_eq!(notices, [ids.a_notice]);
    let admin_works = site
        .get("/api/v1/works", Auth::Token(&tokens[0]))
        .await
        .body;
    assert_eq!(admin_works["total"], 3, "staff see every holder's");

    for column in 0..ROLES.len() {
        let role = ROLES[column];
        for (path, body, done, allowed) in writable(ids, column) {
            let expected = if allowed[column] == 200 { done } else { 403 };
            let answer = site.post(&path, Auth::Token(&tokens[column]), &body).await;
            assert_eq!(
                answer.status, expected,
                "POST {path} as {role}: {}",
                answer.body
            );
            assert_unauthorized(&site.post(&path, Auth::Anonymous, &body).await, &path);
            // By cookie, the session's CSRF token must come along.
            let session = &sessions[column];
            let forged = site.post(&path, Auth::Cookie(session, None), &body).await;
            assert_eq!(
                forged.status, 403,
                "POST {path} as {role} by cookie without CSRF"
            );
            let wrong = site
                .post(&path, Auth::Cookie(session, Some("not-the-token")), &body)
                .await;
            assert_eq!(wrong.status, 403, "POST {path} as {role} with a wrong CSRF");
        }
    }
    // With the CSRF header, a cookie-borne post is done.
    let admin = &sessions[0];
    let created = site
        .post(
            "/api/v1/schedules",
            Auth::Cookie(admin, Some(&admin.csrf)),
            &json!({"name": "by-cookie", "cron": "0 4 * * *", "seeds": ["https://pirate.example/"]}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["timezone"], "UTC", "the default zone");
    assert_eq!(created.body["next_runs"].as_array().unwrap().len(), 5);
    let names: BTreeSet<String> = copytrace_service::schedules::list(site.store.as_ref())
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["nightly", "api-0", "api-1", "by-cookie"].map(str::to_owned)),
        "created by the admin's and the operator's tokens and the admin's cookie, by nobody \
         else and never without the CSRF header"
    );

    // Pausing, resuming and running act on the schedule; deleting removes it.
    let operator = Auth::Token(&tokens[1]);
    let paused = site
        .post("/api/v1/schedules/api-1/pause", operator, &json!({}))
        .await;
    assert_eq!(paused.body["enabled"], false, "{}", paused.body);
    assert_eq!(paused.body["next_runs"].as_array().unwrap().len(), 0);
    let resumed = site
        .post("/api/v1/schedules/api-1/resume", operator, &json!({}))
        .await;
    assert_eq!(resumed.body["enabled"], true);
    assert_eq!(resumed.body["next_runs"].as_array().unwrap().len(), 5);
    let started = site
        .post("/api/v1/schedules/api-1/run", operator, &json!({}))
        .await;
    let run_id = started.body["run_id"].as_i64().unwrap();
    let runs = site.get("/api/v1/runs", operator).await.body;
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == run_id && r["schedule"] == "api-1" && r["trigger"] == "manual"),
        "{runs}"
    );
    let missing = site
        .post("/api/v1/schedules/no-such/run", operator, &json!({}))
        .await;
    assert_eq!(missing.status, 404);
    let analyst = Auth::Token(&tokens[2]);
    let refused = site
        .call("delete", "/api/v1/schedules/api-1", analyst, None)
        .await;
    assert_eq!(refused.status, 403);
    let forged = site
        .call(
            "delete",
            "/api/v1/schedules/api-1",
            Auth::Cookie(&sessions[1], None),
            None,
        )
        .await;
    assert_eq!(forged.status, 403, "a cookie without the CSRF header");
    let deleted = site
        .call("delete", "/api/v1/schedules/api-1", operator, None)
        .await;
    assert_eq!(deleted.status, 204);
    let again = site
        .call("delete", "/api/v1/schedules/api-1", operator, None)
        .await;
    assert_eq!(again.status, 404, "gone");
    assert!(
        !copytrace_service::schedules::list(site.store.as_ref())
            .await
            .unwrap()
            .iter()
            .any(|s| s.name == "api-1")
    );
}

async fn tokens_authenticate_until_revoked(site: Site) {
    let (token, id) = accounts::create_api_token(site.store.as_ref(), ANALYST, "script")
        .await
        .unwrap();
    let me = site.get("/api/v1/me", Auth::Token(&token)).await;
    assert_eq!(me.status, 200);
    assert_eq!(me.body["email"], ANALYST);
    assert_eq!(me.body["role"], "analyst");
    let listed = site.get("/api/v1/tokens", Auth::Token(&token)).await.body;
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["name"], "script");
    assert!(!listed[0]["last_used_at"].is_null(), "{listed}");
    assert!(!listed.to_string().contains(&token[3..]), "never the token");

    accounts::revoke_api_token(site.store.as_ref(), ANALYST, id)
        .await
        .unwrap();
    assert_unauthorized(
        &site.get("/api/v1/me", Auth::Token(&token)).await,
        "a revoked token",
    );
    assert_unauthorized(
        &site.get("/api/v1/works", Auth::Token(&token)).await,
        "a revoked token",
    );
    // A bad Authorization header is refused even beside a live session cookie: no fallback.
    let session = site.login(ANALYST).await;
    for header in ["Bearer ct_forged", "Basic YWRtaW46YWRtaW4=", "Bearer"] {
        let response = site
            .http
            .get(format!("{}/api/v1/me", site.base))
            .header(AUTHORIZATION, header)
            .header(COOKIE, &session.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{header}");
    }
    // A user's removal takes their tokens with it.
    let (operator_token, _) = accounts::create_api_token(site.store.as_ref(), OPERATOR, "ops")
        .await
        .unwrap();
    assert_eq!(
        site.get("/api/v1/runs", Auth::Token(&operator_token))
            .await
            .status,
        200
    );
    accounts::remove_user(site.store.as_ref(), OPERATOR)
        .await
        .unwrap();
    assert_unauthorized(
        &site.get("/api/v1/runs", Auth::Token(&operator_token)).await,
        "a removed user's token",
    );
}

async fn another_holders_objects_are_not_found(site: Site) {
    let ids = &site.ids;
    let token = site.token(HOLDER_A).await;
    let holder = Auth::Token(&token);
    let missing = site.get("/api/v1/works/999999", holder).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body, json!({"error": "not found"}));
    for path in [
        format!("/api/v1/works/{}", ids.b_work),
        format!("/api/v1/matches/{}", ids.b_match),
        format!("/api/v1/notices/{}", ids.b_notice),
        format!("/api/v1/holders/{}/profile", ids.b_holder),
        "/api/v1/holders/999999/profile".to_owned(),
        format!("/api/v1/matches?work={}", ids.b_work),
        format!("/api/v1/stats/works?work={}", ids.b_work),
        format!("/api/v1/stats/sites?work={}", ids.b_work),
        format!("/api/v1/stats/daily?work={}", ids.b_work),
        "/api/v1/matches/999999".to_owned(),
        "/api/v1/notices/999999".to_owned(),
        "/api/v1/works/not-a-number".to_owned(),
    ] {
        let answer = site.get(&path, holder).await;
        assert_eq!(answer.status, 404, "{path}");
        assert_eq!(
            answer.body, missing.body,
            "{path}: the same answer as a missing object's"
        );
    }
    // A decision naming B's match among A's own decides nothing at all.
    let mixed = site
        .post(
            "/api/v1/matches/decide",
            holder,
            &json!({"ids": [ids.a_match, ids.b_match], "decision": "reject"}),
        )
        .await;
    assert_eq!(mixed.status, 404);
    let a_match = copytrace_service::evidence::find_match(site.store.as_ref(), ids.a_match, None)
        .await
        .unwrap();
    assert_eq!(
        a_match.review,
        Review::Confirmed,
        "A's match is not decided either"
    );
    let b_match = copytrace_service::evidence::find_match(site.store.as_ref(), ids.b_match, None)
        .await
        .unwrap();
    assert_eq!(b_match.review, Review::Confirmed, "B's match is untouched");
    let status = site
        .post(
            &format!("/api/v1/notices/{}/status", ids.b_notice),
            holder,
            &json!({"status": "ignored"}),
        )
        .await;
    assert_eq!(status.status, 404);
    let b_notice = notices::get(site.store.as_ref(), ids.b_notice, None)
        .await
        .unwrap();
    assert_eq!(b_notice.status, NoticeStatus::Draft);
    // Nor may A change B's profile: 404, and B's stays as it was.
    let b_profile = site
        .post(
            &format!("/api/v1/holders/{}/profile", ids.b_holder),
            holder,
            &json!({"legal_name": "Taken Over Ltd."}),
        )
        .await;
    assert_eq!(b_profile.status, 404);
    let b_stored = site
        .store
        .rights_holder_profile(ids.b_holder)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b_stored.legal_name.as_deref(), Some("Holder B Ltd."));
    // A's own: shown and edited, one field at a time.
    let own = format!("/api/v1/holders/{}/profile", ids.a_holder);
    let shown = site.get(&own, holder).await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert_eq!(shown.body["legal_name"], "Holder A Ltd.");
    assert_eq!(shown.body["name"], "Holder A");
    let edited = site
        .post(&own, holder, &json!({"address": "1 Main St, Springfield"}))
        .await;
    assert_eq!(edited.status, 200, "{}", edited.body);
    assert_eq!(edited.body["address"], "1 Main St, Springfield");
    assert_eq!(edited.body["legal_name"], "Holder A Ltd.", "left as it was");
    // A holder's notice is always its own, whatever holder it names.
    let created = site
        .post(
            "/api/v1/notices",
            holder,
            &json!({"site": "pirate.example", "holder": "Holder B"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let a = site.store.ensure_rights_holder("Holder A").await.unwrap();
    assert_eq!(created.body["rights_holder_id"], a);
    assert!(!created.body["body"].as_str().unwrap().contains("b-1"));
    // A's own match, with its evidence passages.
    let detail = site
        .get(&format!("/api/v1/matches/{}", ids.a_match), holder)
        .await
        .body;
    assert_eq!(detail["work_external_id"], "a-1");
    assert_eq!(detail["evidence"][0]["page_text"], passage("a-1"));
    assert_eq!(detail["evidence"][0]["work_text"], passage("a-1"));
}

async fn bad_input_is_a_json_400(site: Site) {
    let ids = &site.ids;
    let token = site.token(ADMIN).await;
    let admin = Auth::Token(&token);
    for (path, field) in [
        (
            "/api/v1/matches?status=open'; DROP TABLE matches; --",
            "Status",
        ),
        ("/api/v1/matches?min_score=2", "\"2\""),
        ("/api/v1/matches?since=yesterday", "yesterday"),
        ("/api/v1/matches?per_page=201", "per_page"),
        ("/api/v1/matches?page=0", "page"),
        ("/api/v1/matches?order=random", "order"),
        ("/api/v1/works?per_page=0", "per_page"),
        ("/api/v1/stats/sites?review=maybe", "maybe"),
        ("/api/v1/runs?limit=1000", "limit"),
    ] {
        let answer = site.get(path, admin).await;
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
        let error = answer.body["error"].as_str().unwrap_or_default();
        assert!(error.contains(field), "{path}: {error}");
    }
    // A profile's refused values are named, and nothing of the request is stored.
    let profile = format!("/api/v1/holders/{}/profile", ids.a_holder);
    for (body, named) in [
        (
            json!({"email": "legal-at-a", "phone": "+1 555 0100"}),
            "email",
        ),
        (json!({"language": "fr"}), "language"),
        (json!({"phone": "call us"}), "phone"),
    ] {
        let answer = site.post(&profile, admin, &body).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        let error = answer.body["error"].as_str().unwrap_or_default();
        assert!(error.contains(named), "{body}: {error}");
    }
    let unknown = site
        .post(&profile, admin, &json!({"fax": "+1 555 0100"}))
        .await;
    assert_eq!(unknown.status, 422, "{}", unknown.body);
    assert!(
        unknown.body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("fax"),
        "{}",
        unknown.body
    );
    let stored = site.get(&profile, admin).await.body;
    assert_eq!(
        stored["phone"],
        Value::Null,
        "nothing of a refused request is kept"
    );
    assert_eq!(stored["language"], "en");
    let bad_cron = site
        .post(
            "/api/v1/schedules",
            admin,
            &json!({"name": "bad", "cron": "61 * * * *", "seeds": ["https://pirate.example/"]}),
        )
        .await;
    assert_eq!(bad_cron.status, 400, "{}", bad_cron.body);
    assert!(bad_cron.body["error"].is_string());
    let bad_zone = site
        .post(
            "/api/v1/schedules",
            admin,
            &json!({"name": "bad", "cron": "0 3 * * *", "timezone": "Mars/Olympus",
                    "seeds": ["https://pirate.example/"]}),
        )
        .await;
    assert_eq!(bad_zone.status, 400, "{}", bad_zone.body);
    assert!(
        copytrace_service::schedules::list(site.store.as_ref())
            .await
            .unwrap()
            .iter()
            .all(|s| s.name != "bad"),
        "nothing refused was stored"
    );
    let not_a_decision = site
        .post(
            "/api/v1/matches/decide",
            admin,
            &json!({"ids": [ids.a_match], "decision": "maybe"}),
        )
        .await;
    assert_eq!(not_a_decision.status, 422);
    assert!(not_a_decision.body["error"].is_string());
    let none = site
        .post(
            "/api/v1/matches/decide",
            admin,
            &json!({"ids": [], "decision": "confirm"}),
        )
        .await;
    assert_eq!(none.status, 400);
    let no_holder = site
        .post("/api/v1/notices", admin, &json!({"site": "pirate.example"}))
        .await;
    assert_eq!(no_holder.status, 400);
    assert!(no_holder.body["error"].as_str().unwrap().contains("holder"));
    let unknown = site.get("/api/v1/nothing-here", admin).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body, json!({"error": "not found"}));

    // Paging: two pages of one of A's two copies each, the first saying another follows.
    let first = site
        .get(
            &format!("/api/v1/matches?work={}&per_page=1", ids.a_work),
            admin,
        )
        .await
        .body;
    assert_eq!(first["matches"].as_array().unwrap().len(), 1);
    assert_eq!(first["more"], false);
    let holder_token = site.token(HOLDER_A).await;
    let holder = Auth::Token(&holder_token);
    let page_1 = site
        .get("/api/v1/matches?per_page=1&page=1", holder)
        .await
        .body;
    let page_2 = site
        .get("/api/v1/matches?per_page=1&page=2", holder)
        .await
        .body;
    let page_3 = site
        .get("/api/v1/matches?per_page=1&page=3", holder)
        .await
        .body;
    assert_eq!(
        (page_1["more"].clone(), page_2["more"].clone()),
        (json!(true), json!(false))
    );
    assert_ne!(page_1["matches"][0]["id"], page_2["matches"][0]["id"]);
    assert_eq!(page_3["matches"], json!([]), "past the end is empty");
}

async fn the_document_describes_every_route(site: Site) {
    let document = site.get("/api/openapi.json", Auth::Anonymous).await;
    assert_eq!(document.status, 200, "public");
    let doc = document.body;
    assert!(
        doc["openapi"].as_str().unwrap().starts_with('3'),
        "{}",
        doc["openapi"]
    );
    let mut described = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                described.insert((method.clone(), path.clone()));
            }
        }
    }
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(described, listed, "the document and this test's route list");
    let served: BTreeSet<(String, String)> = copytrace_admin_web::api::ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(served, listed, "the crate's route list");
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    assert!(schemes.contains_key("bearer") && schemes.contains_key("session"));
    for schema in [
        "ErrorBody",
        "MatchPage",
        "MatchDetail",
        "WorkPage",
        "NoticeDetail",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "{schema} is described"
        );
    }

    // And every documented route is served: an admin's call reaches a handler (no 404 or 405
    // of the router), with the path's id filled in.
    let token = site.token(ADMIN).await;
    let ids = &site.ids;
    // Objects the routes with more than an id name.
    let store = site.store.as_ref();
    copytrace_service::contacts::add(
        store,
        "pirate.example",
        "desk@pirate.example",
        copytrace_store::ContactKind::General,
        Utc::now(),
    )
    .await
    .unwrap();
    copytrace_service::holders::license(store, "Holder A", None, &["partner.example".into()])
        .await
        .unwrap();
    let (alert, _) = copytrace_service::alerts::add_target(
        store,
        "Holder A",
        copytrace_service::alerts::Destination::Email("alerts@holder.example".into()),
        None,
        copytrace_store::AlertCadence::Daily,
        "zh",
    )
    .await
    .unwrap();
    let upload = reqwest::multipart::Form::new().part(
        "files",
        reqwest::multipart::Part::bytes("第一章\n正文。".repeat(20).into_bytes())
            .file_name("route-check.txt"),
    );
    let started = site
        .http
        .post(format!("{}/api/v1/works", site.base))
        .header("authorization", format!("Bearer {token}"))
        .multipart(upload)
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 202);
    let import: Value = serde_json::from_str(&started.text().await.unwrap()).unwrap();
    let import = import["id"].as_str().unwrap().to_owned();
    for (method, path) in ROUTES {
        let id = if path.starts_with("/api/v1/notices") {
            ids.a_notice
        } else if path.starts_with("/api/v1/holders") {
            ids.a_holder
        } else if path.starts_with("/api/v1/works") {
            ids.a_work
        } else {
            ids.a_match
        };
        let concrete = if path == "/api/v1/imports/{id}" {
            format!("/api/v1/imports/{import}")
        } else {
            path.replace("{id}", &id.to_string())
        }
        .replace("{name}", "nightly")
        .replace("{table}", "matches")
        .replace(
            "{host}",
            if path.contains("licensed") {
                "partner.example"
            } else {
                "pirate.example"
            },
        )
        .replace("{email}", "desk@pirate.example")
        .replace("{alert_id}", &alert.to_string());
        let answer = site
            .call(method, &concrete, Auth::Token(&token), Some(&json!({})))
            .await;
        // A holder without a signature image has none to show: a 404 that says so.
        let no_image = answer.status == 404
            && answer.body["error"]
                .as_str()
                .is_some_and(|e| e.contains("no signature image"));
        assert!(
            no_image || ![404, 405].contains(&answer.status),
            "{method} {concrete}: {}",
            answer.status
        );
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
        "copytrace_api_{}_{}",
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_authorization_matrix_on_sqlite() {
    on_sqlite(every_endpoint_answers_every_role_as_intended).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_authorization_matrix_on_postgres() {
    on_postgres(every_endpoint_answers_every_role_as_intended).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tokens_on_sqlite() {
    on_sqlite(tokens_authenticate_until_revoked).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tokens_on_postgres() {
    on_postgres(tokens_authenticate_until_revoked).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tenancy_on_sqlite() {
    on_sqlite(another_holders_objects_are_not_found).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tenancy_on_postgres() {
    on_postgres(another_holders_objects_are_not_found).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_bad_input_on_sqlite() {
    on_sqlite(bad_input_is_a_json_400).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_bad_input_on_postgres() {
    on_postgres(bad_input_is_a_json_400).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_document_on_sqlite() {
    on_sqlite(the_document_describes_every_route).await;
}
