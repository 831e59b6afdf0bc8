//! Takedown notices, site contacts, licensed hosts and alerts in the admin web and the API
//! (issue 40), against a real SMTP server on a loopback port (the service tests' own): a notice
//! is mailed from the web or the API at most once, its history shows each step with time and
//! actor, people move it as the store allows, and every one of these is the caller's own
//! (another holder's object is 404, nothing is sent or changed) and open only to the roles that
//! own it. On SQLite and on PostgreSQL.

#[path = "../../service/tests/support/mod.rs"]
mod smtp;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::alerts::AlertSettings;
use copytrace_service::{accounts, holders, notices};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    EvidencePassage, Id, MatchFilter, NewMatch, NewPage, NewWork, NoticeStatus, Role, Store,
};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";
const ADMIN: &str = "admin@example.com";
const OPERATOR: &str = "operator@example.com";
const ANALYST: &str = "analyst@example.com";
const HOLDER_A: &str = "a@example.com";
const HOLDER_B: &str = "b@example.com";

/// What [`seed`] made.
struct Ids {
    a_holder: Id,
    b_holder: Id,
    a_work: Id,
    b_work: Id,
    a_match: Id,
    /// A's draft notice to pirate.example.
    a_notice: Id,
    /// B's draft notice to pirate.example.
    b_notice: Id,
}

/// A confirmed copy of a new work of `holder` on `url`; returns the work's and match's ids.
async fn copied_work(store: &dyn Store, holder: Id, external_id: &str, url: &str) -> (Id, Id) {
    let text = format!("{external_id} 的正文，第一段。").repeat(30);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: external_id.into(),
            title: format!("作品 {external_id}"),
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
            url: url.into(),
            title: Some("盗版".into()),
            text,
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
            work_end: 60,
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

async fn seed(store: &dyn Store) -> Ids {
    let a = store.ensure_rights_holder("Holder A").await.unwrap();
    let b = store.ensure_rights_holder("Holder B").await.unwrap();
    let (a_work, a_match) = copied_work(store, a, "a-1", "https://pirate.example/a-1.html").await;
    let (b_work, _) = copied_work(store, b, "b-1", "https://pirate.example/b-1.html").await;
    let notice = |holder: &'static str| async move {
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
        (HOLDER_B, Role::RightsHolder, Some("Holder B")),
    ] {
        accounts::add_user(store, email, role, holder, PASSWORD)
            .await
            .unwrap();
    }
    Ids {
        a_holder: a,
        b_holder: b,
        a_work,
        b_work,
        a_match,
        a_notice,
        b_notice,
    }
}

/// The admin web over a seeded store, mailing through a real SMTP server.
struct Site {
    base: String,
    http: reqwest::Client,
    store: Arc<dyn Store>,
    ids: Ids,
    mailbox: Arc<Mutex<Vec<smtp::Mail>>>,
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

async fn serve(store: Arc<dyn Store>) -> Site {
    store.migrate().await.unwrap();
    let ids = seed(store.as_ref()).await;
    let (smtp, mailbox) = smtp::start_smtp();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(WebState {
        store: store.clone(),
        secure_cookies: false,
        redis: None,
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies: Vec::new(),
        mail: AlertSettings {
            smtp_url: Some(format!("smtp://{smtp}")),
            mail_from: "Copytrace <notices@copytrace.test>".into(),
            ..AlertSettings::default()
        },
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
        mailbox,
    }
}

impl Site {
    async fn login(&self, email: &str) -> Session {
        self.login_in(email, "en").await
    }

    /// Logs in with the interface in `lang` (`zh` or `en`).
    async fn login_in(&self, email: &str, lang: &str) -> Session {
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
        let cookie = format!(
            "{}; copytrace_lang={lang}",
            cookie_pair(&response, "copytrace_session").unwrap()
        );
        let home = self.get("/", &cookie).await.text().await.unwrap();
        Session {
            csrf: csrf_of(&home),
            cookie,
        }
    }

    async fn get(&self, path: &str, cookie: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, cookie)
            .send()
            .await
            .unwrap()
    }

    async fn page(&self, path: &str, session: &Session) -> (StatusCode, String) {
        let response = self.get(path, &session.cookie).await;
        (response.status(), response.text().await.unwrap())
    }

    /// Posts a form with the session's token.
    async fn post(
        &self,
        path: &str,
        session: &Session,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut form: Vec<(&str, &str)> = fields.to_vec();
        form.push(("csrf", &session.csrf));
        self.http
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &session.cookie)
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// A new API token of `email`.
    async fn token(&self, email: &str) -> String {
        accounts::create_api_token(self.store.as_ref(), email, &format!("t-{}", uuid()))
            .await
            .unwrap()
            .0
    }

    async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(AUTHORIZATION, format!("Bearer {token}"));
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn mails(&self) -> Vec<smtp::Mail> {
        self.mailbox.lock().unwrap().clone()
    }
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

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
        "copytrace_notices_web_{}_{}",
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

/// `path` of a redirect answer.
fn location(response: &reqwest::Response) -> String {
    response.headers()[LOCATION].to_str().unwrap().to_owned()
}

async fn notices_are_mailed_from_the_web_once_with_their_history(site: Site) {
    let ids = &site.ids;
    let store = site.store.as_ref();
    let a = site.login_in(HOLDER_A, "zh").await;
    let b = site.login(HOLDER_B).await;
    let notice_path = format!("/notices/{}", ids.a_notice);
    let send_path = format!("{notice_path}/send");

    // A draft, in Chinese words, with the send button.
    let (status, html) = site.page(&notice_path, &a).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("id=\"notice-status\">草稿<"), "{html}");
    assert!(html.contains("action=\"/notices/") && html.contains("/send\""));

    // No contact yet: refused naming the host, nothing sent, still a draft.
    let refused = site.post(&send_path, &a, &[]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let html = refused.text().await.unwrap();
    assert!(html.contains("pirate.example has no contact"), "{html}");
    assert!(site.mails().is_empty());

    copytrace_service::contacts::add(
        store,
        "pirate.example",
        "legal@pirate.example",
        copytrace_store::ContactKind::Copyright,
        Utc::now(),
    )
    .await
    .unwrap();

    // Other roles and other holders: refused, nothing sent.
    for email in [ANALYST, OPERATOR] {
        let other = site.login(email).await;
        let answer = site.post(&send_path, &other, &[]).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{email}");
    }
    let answer = site.post(&send_path, &b, &[]).await;
    assert_eq!(
        answer.status(),
        StatusCode::NOT_FOUND,
        "another holder's notice"
    );
    let (status, _) = site.page(&notice_path, &b).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let forged = site
        .http
        .post(format!("{}{send_path}", site.base))
        .header(COOKIE, &a.cookie)
        .form(&[("csrf", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN, "no form token");
    assert!(site.mails().is_empty(), "nothing was sent");

    // Sent once; a second click sends nothing and says so.
    let sent = site.post(&send_path, &a, &[]).await;
    assert_eq!(sent.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&sent), format!("{notice_path}?sent=mailed"));
    let again = site.post(&send_path, &a, &[]).await;
    assert_eq!(location(&again), format!("{notice_path}?sent=already"));
    let mails = site.mails();
    assert_eq!(mails.len(), 1, "mailed once");
    assert_eq!(mails[0].to, ["legal@pirate.example"]);
    assert!(mails[0].data.contains(&format!("notice {}", ids.a_notice)));

    let (_, html) = site.page(&location(&again), &a).await;
    assert!(
        html.contains("此通知此前已发送过，本次没有重复发送。"),
        "{html}"
    );
    assert!(html.contains("id=\"notice-status\">已发送<"), "{html}");
    let history = &html[html.find("id=\"notice-history\"").unwrap()..];
    assert!(
        history.contains("web:a@example.com"),
        "the actor: {history}"
    );
    assert!(
        history.contains("草稿") && history.contains("发送中"),
        "{history}"
    );
    assert!(
        history.contains("<td class=\"recipients\">legal@pirate.example</td>"),
        "the mail's recipients: {history}"
    );
    assert!(
        !history.contains(">sending<") && !history.contains(">draft<"),
        "no raw codes"
    );

    // Moved by hand as the store allows, with a note; a move it refuses says why.
    let moved = site
        .post(
            &format!("{notice_path}/status"),
            &a,
            &[("status", "acknowledged"), ("note", "答复已收到")],
        )
        .await;
    assert_eq!(moved.status(), StatusCode::SEE_OTHER);
    let (_, html) = site.page(&notice_path, &a).await;
    assert!(
        html.contains("id=\"notice-status\">对方已确认收到<"),
        "{html}"
    );
    assert!(html.contains("答复已收到"));
    let english = site.login(HOLDER_A).await;
    let (_, html) = site.page(&notice_path, &english).await;
    assert!(
        html.contains("id=\"notice-status\">acknowledged<"),
        "{html}"
    );
    assert!(
        html.contains("<option value=\"escalated\">escalated</option>"),
        "{html}"
    );
    let b_notice = format!("/notices/{}/status", ids.b_notice);
    let refused = site.post(&b_notice, &b, &[("status", "ignored")]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("only a sent notice can be ignored")
    );
    let refused = site
        .post(&b_notice, &b, &[("status", "removal_verified")])
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        notices::get(store, ids.b_notice, None)
            .await
            .unwrap()
            .status,
        NoticeStatus::Draft
    );

    // An admin sends every draft at once (B's is left); then there is none to send.
    let admin = site.login(ADMIN).await;
    let (_, html) = site.page("/notices", &admin).await;
    assert!(html.contains("id=\"send-drafts\""), "{html}");
    let bulk = site.post("/notices/send-drafts", &admin, &[]).await;
    assert_eq!(bulk.status(), StatusCode::OK);
    let html = bulk.text().await.unwrap();
    let report = &html[html.find("id=\"bulk-report\"").unwrap()..];
    assert!(
        report.contains(&format!("#{}: sent to legal@pirate.example", ids.b_notice)),
        "{report}"
    );
    assert_eq!(site.mails().len(), 2);
    assert_eq!(
        notices::get(store, ids.b_notice, None)
            .await
            .unwrap()
            .status,
        NoticeStatus::Sent
    );
    let (_, html) = site.page("/notices", &admin).await;
    assert!(!html.contains("id=\"send-drafts\""), "no draft left");
    let bulk = site.post("/notices/send-drafts", &admin, &[]).await;
    assert!(bulk.text().await.unwrap().contains("Sent: 0"));
    assert_eq!(site.mails().len(), 2, "nothing sent twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_sending_on_sqlite() {
    on_sqlite(notices_are_mailed_from_the_web_once_with_their_history).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_sending_on_postgres() {
    on_postgres(notices_are_mailed_from_the_web_once_with_their_history).await;
}

async fn operators_keep_site_contacts_and_everyone_sees_them(site: Site) {
    let store = site.store.as_ref();
    let now = Utc::now();
    // What a crawl found on the site's own pages.
    store
        .add_site_contacts(&[copytrace_store::NewSiteContact {
            host: "pirate.example".into(),
            email: "webmaster@pirate.example".into(),
            kind: copytrace_store::ContactKind::General,
            found_on: Some("https://pirate.example/lianxi.html".into()),
            at: now,
        }])
        .await
        .unwrap();
    store
        .set_site_icp(&copytrace_store::SiteIcp {
            host: "pirate.example".into(),
            icp_number: "京ICP备12345678号".into(),
            found_on: "https://pirate.example/".into(),
            found_at: now,
        })
        .await
        .unwrap();
    let operator = site.login_in(OPERATOR, "zh").await;

    // The list: every crawled site, with its copies (both holders') and contacts.
    let (status, html) = site.page("/sites", &operator).await;
    assert_eq!(status, StatusCode::OK);
    let row = &html[html.find("<a href=\"/sites/pirate.example\">").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("<td class=\"num\">2</td>"),
        "two copies: {row}"
    );
    let (status, html) = site.page("/sites/pirate.example", &operator).await;
    assert_eq!(status, StatusCode::OK);
    let contacts = &html[html.find("id=\"site-contacts\"").unwrap()..];
    assert!(contacts.contains("webmaster@pirate.example"), "{contacts}");
    assert!(contacts.contains("发现于 <a href=\"https://pirate.example/lianxi.html\""));
    assert!(contacts.contains("一般联系"), "the kind in Chinese");
    assert!(contacts.contains("京ICP备12345678号"));
    assert!(
        !html.contains("href=\"/matches/"),
        "an operator reads no matches"
    );

    // Added (a mailto: link is taken for its address), refused with why, removed.
    let add = "/sites/pirate.example/contacts";
    let added = site
        .post(
            add,
            &operator,
            &[
                ("email", "mailto:DMCA@Pirate.example"),
                ("kind", "copyright"),
            ],
        )
        .await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&added), "/sites/pirate.example?saved=1");
    let (_, html) = site.page("/sites/pirate.example", &operator).await;
    let contacts = &html[html.find("id=\"site-contacts\"").unwrap()..];
    let first = contacts.find("dmca@pirate.example").unwrap();
    assert!(
        first < contacts.find("webmaster@pirate.example").unwrap(),
        "the operator's first"
    );
    assert!(
        contacts.contains("运维添加") && contacts.contains("版权投诉"),
        "{contacts}"
    );
    let refused = site
        .post(
            add,
            &operator,
            &[("email", "not an address"), ("kind", "general")],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let html = refused.text().await.unwrap();
    assert!(html.contains("is not an e-mail address"), "{html}");
    assert!(
        html.contains("value=\"not an address\""),
        "the form keeps what was typed"
    );
    let known = copytrace_service::contacts::list(store, "pirate.example")
        .await
        .unwrap();
    assert_eq!(known.contacts.len(), 2, "nothing stored");
    let removed = site
        .post(
            &format!("{add}/remove"),
            &operator,
            &[("email", "webmaster@pirate.example")],
        )
        .await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    let again = site
        .post(
            &format!("{add}/remove"),
            &operator,
            &[("email", "webmaster@pirate.example")],
        )
        .await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    let known = copytrace_service::contacts::list(store, "pirate.example")
        .await
        .unwrap();
    let emails: Vec<&str> = known.contacts.iter().map(|c| c.email.as_str()).collect();
    assert_eq!(emails, ["dmca@pirate.example"]);

    // A rights holder sees the contacts and its own copies only, and may not edit them.
    let holder = site.login(HOLDER_A).await;
    let (status, html) = site.page("/sites", &holder).await;
    assert_eq!(status, StatusCode::OK);
    let row = &html[html.find("<a href=\"/sites/pirate.example\">").unwrap()..];
    assert!(row[..row.find("</tr>").unwrap()].contains("<td class=\"num\">1</td>"));
    let (_, html) = site.page("/sites/pirate.example", &holder).await;
    assert!(html.contains("dmca@pirate.example") && !html.contains("id=\"add-contact\""));
    assert!(!html.contains("作品 b-1"), "nothing of the other holder");
    let answer = site
        .post(
            add,
            &holder,
            &[("email", "x@pirate.example"), ("kind", "general")],
        )
        .await;
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    let (status, _) = site.page("/sites/elsewhere.example", &holder).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a site without its copies");
    let (status, _) = site.page("/sites/elsewhere.example", &operator).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "staff may open any host, to add a contact"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_contacts_on_sqlite() {
    on_sqlite(operators_keep_site_contacts_and_everyone_sees_them).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_contacts_on_postgres() {
    on_postgres(operators_keep_site_contacts_and_everyone_sees_them).await;
}

async fn holders_manage_their_licensed_hosts_and_alerts(site: Site) {
    let ids = &site.ids;
    let store = site.store.as_ref();
    let a = site.login_in(HOLDER_A, "zh").await;
    let b = site.login(HOLDER_B).await;
    let licences = format!("/holders/{}/licences", ids.a_holder);
    let alerts = format!("/holders/{}/alerts", ids.a_holder);

    let home = site.get("/holders", &a.cookie).await;
    assert_eq!(
        location(&home),
        format!("/holders/{}/profile", ids.a_holder)
    );
    let (status, html) = site.page(&licences, &a).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("id=\"holder-tabs\"") && html.contains("授权网站"),
        "{html}"
    );

    // Licences: every work, or one by its external id; bad hosts and other holders' works
    // are refused with why, and nothing is stored.
    let added = site
        .post(
            &licences,
            &a,
            &[("host", "https://Partner.example/books"), ("work", "")],
        )
        .await;
    assert_eq!(location(&added), format!("{licences}?saved=1"));
    let added = site
        .post(
            &licences,
            &a,
            &[("host", "reader.example"), ("work", "a-1")],
        )
        .await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let (_, html) = site.page(&licences, &a).await;
    assert!(
        html.contains("<td class=\"licensed-host\">partner.example</td>"),
        "{html}"
    );
    assert!(
        html.contains("全部作品") && html.contains("作品 a-1 (a-1)"),
        "{html}"
    );
    for (host, work, why) in [
        ("not a host!", "", "is not a host name"),
        ("other.example", "b-1", "此权利人没有这部作品"),
        ("other.example", "no-such-work", "此权利人没有这部作品"),
    ] {
        let refused = site
            .post(&licences, &a, &[("host", host), ("work", work)])
            .await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{host} {work}");
        let html = refused.text().await.unwrap();
        assert!(html.contains(why), "{host} {work}: {html}");
    }
    let stored = holders::licenses(store, Some("Holder A")).await.unwrap();
    let mut hosts: Vec<&str> = stored.iter().map(|l| l.host.as_str()).collect();
    hosts.sort();
    assert_eq!(hosts, ["partner.example", "reader.example"]);
    assert_eq!(
        stored
            .iter()
            .find(|l| l.host == "reader.example")
            .unwrap()
            .work_id,
        Some(ids.a_work)
    );

    // Another holder: 404 for A's pages and forms, nothing changes; staff other than admins: 403.
    let (status, html) = site.page(&licences, &b).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!html.contains("partner.example"));
    for (path, fields) in [
        (licences.clone(), vec![("host", "b.example")]),
        (
            format!("{licences}/remove"),
            vec![("host", "partner.example")],
        ),
        (
            alerts.clone(),
            vec![("kind", "email"), ("address", "b@b.example")],
        ),
    ] {
        let answer = site.post(&path, &b, &fields).await;
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "B posts {path}");
    }
    for email in [OPERATOR, ANALYST] {
        let other = site.login(email).await;
        let (status, _) = site.page(&licences, &other).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{email}");
    }
    assert_eq!(
        holders::licenses(store, Some("Holder A"))
            .await
            .unwrap()
            .len(),
        2
    );
    assert!(
        holders::licenses(store, Some("Holder B"))
            .await
            .unwrap()
            .is_empty()
    );

    // Taking one back; again is 404.
    let remove = format!("{licences}/remove");
    let removed = site
        .post(&remove, &a, &[("host", "reader.example"), ("work", "a-1")])
        .await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    let again = site
        .post(&remove, &a, &[("host", "reader.example"), ("work", "a-1")])
        .await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        holders::licenses(store, Some("Holder A"))
            .await
            .unwrap()
            .len(),
        1
    );

    // Alerts: an e-mail digest, a webhook whose secret is shown once, a refused URL.
    let added = site
        .post(
            &alerts,
            &a,
            &[
                ("kind", "email"),
                ("address", "alerts@a.example"),
                ("daily", "1"),
                ("lang", "en"),
            ],
        )
        .await;
    assert_eq!(location(&added), format!("{alerts}?saved=1"));
    let hook = site
        .post(
            &alerts,
            &a,
            &[
                ("kind", "webhook"),
                ("address", "https://hooks.a.example/ct"),
            ],
        )
        .await;
    assert_eq!(hook.status(), StatusCode::OK);
    let html = hook.text().await.unwrap();
    let shown = &html[html
        .find("id=\"webhook-secret\"")
        .expect("the secret, once")..];
    let secret = &shown[shown.find("<code>").unwrap() + 6..shown.find("</code>").unwrap()];
    assert_eq!(secret.len(), 64, "{secret}");
    let (_, html) = site.page(&alerts, &a).await;
    assert!(!html.contains(secret), "never shown again");
    assert!(
        html.contains("alerts@a.example") && html.contains("每日"),
        "{html}"
    );
    assert!(html.contains("https://hooks.a.example/ct") && html.contains("每次运行后"));
    let refused = site
        .post(
            &alerts,
            &a,
            &[("kind", "webhook"), ("address", "ftp://hooks.a.example/")],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("expected an http or https URL")
    );
    let targets = copytrace_service::alerts::targets(store, Some("Holder A"))
        .await
        .unwrap();
    assert_eq!(targets.len(), 2);
    let email_target = targets
        .iter()
        .find(|t| t.target.address == "alerts@a.example")
        .unwrap();
    assert_eq!(
        email_target.target.cadence,
        copytrace_store::AlertCadence::Daily
    );

    // B cannot remove A's target, under either holder's path; A can.
    let id = email_target.target.id;
    for path in [
        format!("/holders/{}/alerts/{id}/remove", ids.b_holder),
        format!("{alerts}/{id}/remove"),
    ] {
        let answer = site.post(&path, &b, &[]).await;
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
    }
    let removed = site.post(&format!("{alerts}/{id}/remove"), &a, &[]).await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    let targets = copytrace_service::alerts::targets(store, Some("Holder A"))
        .await
        .unwrap();
    assert_eq!(targets.len(), 1);

    // An admin manages every holder's.
    let admin = site.login(ADMIN).await;
    let (status, html) = site.page("/holders", &admin).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Holder A") && html.contains("Holder B"));
    let added = site
        .post(
            &format!("/holders/{}/licences", ids.b_holder),
            &admin,
            &[("host", "b-partner.example")],
        )
        .await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        holders::licenses(store, Some("Holder B"))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn licences_and_alerts_on_sqlite() {
    on_sqlite(holders_manage_their_licensed_hosts_and_alerts).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn licences_and_alerts_on_postgres() {
    on_postgres(holders_manage_their_licensed_hosts_and_alerts).await;
}

async fn the_api_mails_notices_and_keeps_contacts_licences_and_alerts(site: Site) {
    use reqwest::Method;
    let ids = &site.ids;
    let a = site.token(HOLDER_A).await;
    let b = site.token(HOLDER_B).await;
    let admin = site.token(ADMIN).await;
    let operator = site.token(OPERATOR).await;
    let analyst = site.token(ANALYST).await;

    // Contacts: operators add them, refused with why; holders read them.
    let contacts = "/api/v1/sites/pirate.example/contacts";
    let body = json!({"email": "Legal@Pirate.example"});
    let (status, added) = site
        .api(Method::POST, contacts, &operator, Some(body.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    assert_eq!(added["contacts"][0]["email"], "legal@pirate.example");
    assert_eq!(added["contacts"][0]["source"], "operator");
    assert_eq!(added["contacts"][0]["kind"], "copyright");
    let (status, _) = site.api(Method::POST, contacts, &a, Some(body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let bad = json!({"email": "nobody", "kind": "general"});
    let (status, refused) = site.api(Method::POST, contacts, &operator, Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("is not an e-mail address")
    );
    let (status, listed) = site.api(Method::GET, contacts, &a, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["contacts"].as_array().unwrap().len(), 1);
    let (status, _) = site
        .api(
            Method::GET,
            "/api/v1/sites/elsewhere.example/contacts",
            &a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a site without A's copies");

    // Sending: once; another holder's is 404 and sends nothing.
    let send = format!("/api/v1/notices/{}/send", ids.a_notice);
    let (status, _) = site.api(Method::POST, &send, &b, Some(json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = site
        .api(Method::POST, &send, &analyst, Some(json!({})))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(site.mails().is_empty());
    let (status, sent) = site.api(Method::POST, &send, &a, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    assert_eq!(sent["outcome"], "sent");
    assert_eq!(sent["recipients"], json!(["legal@pirate.example"]));
    let (_, again) = site.api(Method::POST, &send, &a, Some(json!({}))).await;
    assert_eq!(again["outcome"], "already_sent");
    assert_eq!(again["message_id"], sent["message_id"]);
    assert_eq!(site.mails().len(), 1);
    let status_path = format!("/api/v1/notices/{}/status", ids.a_notice);
    let moved = json!({"status": "acknowledged", "note": "the site answered"});
    let (status, notice) = site.api(Method::POST, &status_path, &a, Some(moved)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(notice["status"], "acknowledged");
    let history_path = format!("/api/v1/notices/{}/history", ids.a_notice);
    let (status, history) = site.api(Method::GET, &history_path, &a, None).await;
    assert_eq!(status, StatusCode::OK);
    let steps = history["history"].as_array().unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["to"], "acknowledged");
    assert_eq!(last["actor"], "api:a@example.com");
    assert_eq!(last["note"], "the site answered");
    assert!(
        steps
            .iter()
            .any(|s| s["to"] == "sent" && s["actor"] == "api:a@example.com")
    );
    assert_eq!(
        history["mails"][0]["recipients"],
        json!(["legal@pirate.example"])
    );
    let (status, _) = site.api(Method::GET, &history_path, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, bulk) = site
        .api(
            Method::POST,
            "/api/v1/notices/send-drafts",
            &admin,
            Some(json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{bulk}");
    assert_eq!(bulk["sent"][0]["notice_id"], ids.b_notice);
    assert_eq!(site.mails().len(), 2);

    // Licensed hosts: one work by its external id; another holder's work is refused.
    let licences = format!("/api/v1/holders/{}/licensed-hosts", ids.a_holder);
    let body = json!({"host": "Partner.example", "work_external_id": "a-1"});
    let (status, listed) = site.api(Method::POST, &licences, &a, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{listed}");
    assert_eq!(listed[0]["host"], "partner.example");
    assert_eq!(listed[0]["work_external_id"], "a-1");
    let body = json!({"host": "partner.example", "work_external_id": "b-1"});
    let (status, _) = site.api(Method::POST, &licences, &a, Some(body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = site.api(Method::GET, &licences, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let one = format!("{licences}/partner.example?work_external_id=a-1");
    let (status, _) = site.api(Method::DELETE, &one, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = site.api(Method::DELETE, &one, &a, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = site.api(Method::DELETE, &one, &a, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Alerts: a webhook's secret once; another holder cannot remove it.
    let alerts = format!("/api/v1/holders/{}/alerts", ids.a_holder);
    let body = json!({"kind": "webhook", "address": "https://hooks.a.example/ct", "daily": true});
    let (status, added) = site.api(Method::POST, &alerts, &a, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    let secret = added["secret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 64);
    assert_eq!(added["cadence"], "daily");
    let (_, listed) = site.api(Method::GET, &alerts, &a, None).await;
    assert!(!listed.to_string().contains(&secret), "never shown again");
    let target = format!("{alerts}/{}", added["id"]);
    let (status, _) = site.api(Method::DELETE, &target, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let other = format!("/api/v1/holders/{}/alerts/{}", ids.b_holder, added["id"]);
    let (status, _) = site.api(Method::DELETE, &other, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not B's target");
    let (status, _) = site.api(Method::DELETE, &target, &a, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Exports: a rights holder's own copies only, in the format asked for.
    let download = |path: String, token: String| {
        let request = site
            .http
            .get(format!("{}{path}", site.base))
            .header(AUTHORIZATION, format!("Bearer {token}"));
        async move { request.send().await.unwrap() }
    };
    let csv = download("/api/v1/exports/matches?format=csv".into(), a.clone()).await;
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(
        csv.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let text = csv.text().await.unwrap();
    assert!(text.contains("a-1") && !text.contains("b-1"), "{text}");
    let (status, rows) = site
        .api(
            Method::GET,
            "/api/v1/exports/matches?format=json",
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        rows.as_array().unwrap().len(),
        2,
        "staff export both holders'"
    );
    let wrong = format!("/api/v1/exports/matches?format=csv&work={}", ids.b_work);
    assert_eq!(
        download(wrong, a.clone()).await.status(),
        StatusCode::NOT_FOUND
    );
    let (status, _) = site
        .api(Method::GET, "/api/v1/exports/matches?format=pdf", &a, None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // The evidence package, a ZIP; another holder's match is 404.
    let evidence = format!("{}/api/v1/matches/{}/evidence", site.base, ids.a_match);
    let zip = site
        .http
        .post(&evidence)
        .header(AUTHORIZATION, format!("Bearer {a}"))
        .send()
        .await
        .unwrap();
    assert_eq!(zip.status(), StatusCode::OK);
    assert_eq!(zip.headers()["content-type"], "application/zip");
    assert!(zip.bytes().await.unwrap().starts_with(b"PK\x03\x04"));
    let refused = site
        .http
        .post(&evidence)
        .header(AUTHORIZATION, format!("Bearer {b}"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);

    // A work upload, imported in the background into A's catalog.
    let form = reqwest::multipart::Form::new().part(
        "files",
        reqwest::multipart::Part::bytes(
            "第一章 新作\n这是新上传的作品正文。"
                .repeat(20)
                .into_bytes(),
        )
        .file_name("a-uploaded.txt"),
    );
    let started = site
        .http
        .post(format!("{}/api/v1/works", site.base))
        .header(AUTHORIZATION, format!("Bearer {a}"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let location = location(&started);
    let mut import = Value::Null;
    for _ in 0..300 {
        import = site.api(Method::GET, &location, &a, None).await.1;
        if import["state"] != "running" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(import["state"], "done", "{import}");
    assert_eq!(import["works"][0]["external_id"], "a-uploaded");
    assert_eq!(import["works"][0]["outcome"], "created");
    assert_eq!(import["holder"], "Holder A");
    let (status, _) = site.api(Method::GET, &location, &b, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another tenant's import");

    // Statistics per holder and time to piracy: a rights holder's own.
    let (status, rows) = site
        .api(Method::GET, "/api/v1/stats/holders", &a, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Holder A"]);
    let (status, ttp) = site
        .api(Method::GET, "/api/v1/stats/time-to-piracy", &a, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let copies = ttp["copies"].as_array().unwrap();
    assert_eq!(copies.len(), 1, "{ttp}");
    assert_eq!(copies[0]["work_external_id"], "a-1");
    assert_eq!(ttp["publication_unknown"], json!(["a-1"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_on_sqlite() {
    on_sqlite(the_api_mails_notices_and_keeps_contacts_licences_and_alerts).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_on_postgres() {
    on_postgres(the_api_mails_notices_and_keeps_contacts_licences_and_alerts).await;
}
