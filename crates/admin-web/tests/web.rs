//! The admin web over real HTTP: login with CSRF and the limiter, cookie attributes, language,
//! the dashboard's tenancy and escaping, logout.

use std::net::SocketAddr;
use std::sync::Arc;

use chrono::Utc;
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::accounts;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{EvidencePassage, NewMatch, NewPage, NewWork, Role, Store};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT_LANGUAGE, COOKIE, LOCATION, SET_COOKIE};

const PASSWORD: &str = "correct horse battery";
const EVIL_TITLE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

/// A work of `holder` titled `title`, copied by one page.
async fn copied_work(store: &dyn Store, holder: i64, external_id: &str, title: &str) {
    let text = format!("{title} 的正文。").repeat(30);
    let copy = Copy {
        external_id,
        title,
        work_text: &text,
        page_text: &format!("copy of {external_id}"),
        method: "simhash+align",
    };
    recorded_match(store, holder, &copy, (10, 10)).await;
}

/// A registered work and a page recorded as copying it.
struct Copy<'a> {
    external_id: &'a str,
    title: &'a str,
    work_text: &'a str,
    page_text: &'a str,
    method: &'a str,
}

/// Registers `copy`'s work for `holder` and records its page as a reported copy whose one
/// evidence passage is the first `page_end` bytes of the page and `work_end` of the work;
/// returns the match's id.
async fn recorded_match(
    store: &dyn Store,
    holder: i64,
    copy: &Copy<'_>,
    (page_end, work_end): (u32, u32),
) -> i64 {
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: copy.external_id.into(),
            title: copy.title.into(),
            content_hash: copytrace_store::sha256_hex(copy.work_text.as_bytes()),
            content: copy.work_text.into(),
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
    let hash = copytrace_store::sha256_hex(copy.page_text.as_bytes());
    let at = Utc::now();
    let page = store
        .upsert_page(&NewPage {
            url: format!("https://pirate.example/{}.html", copy.external_id),
            title: None,
            text: copy.page_text.into(),
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
        score: 0.95,
        coverage: 0.9,
        containment: 0.95,
        copied_chars: 300,
        method: copy.method.into(),
        auto_confirm: true,
        evidence: vec![EvidencePassage {
            page_start: 0,
            page_end,
            work_start: 0,
            work_end,
        }],
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
        .unwrap()[0]
        .id
}

struct Site {
    base: String,
    http: reqwest::Client,
    store: Arc<dyn Store>,
}

/// A store with holders A (its work titled [`EVIL_TITLE`]) and B, a user of each and an
/// admin, served on a loopback port.
async fn start(secure_cookies: bool) -> Site {
    start_behind(secure_cookies, Vec::new()).await
}

/// The site behind reverse proxies at `trusted_proxies`.
async fn start_behind(secure_cookies: bool, trusted_proxies: Vec<ipnet::IpNet>) -> Site {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    store.migrate().await.unwrap();
    let a = store.ensure_rights_holder("Holder A").await.unwrap();
    let b = store.ensure_rights_holder("Holder B").await.unwrap();
    copied_work(&store, a, "a-1", EVIL_TITLE).await;
    copied_work(&store, b, "b-1", "乙方的秘密作品").await;
    accounts::add_user(
        &store,
        "a@example.com",
        Role::RightsHolder,
        Some("Holder A"),
        PASSWORD,
    )
    .await
    .unwrap();
    accounts::add_user(&store, "admin@example.com", Role::Admin, None, PASSWORD)
        .await
        .unwrap();
    let store: Arc<dyn Store> = Arc::new(store);
    let state = WebState {
        store: store.clone(),
        secure_cookies,
        redis: None,
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies,
        mail: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Site {
        base: format!("http://{addr}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        store,
    }
}

/// The `Set-Cookie` header of `name`, whole.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with(&format!("{name}=")))
}

/// `name=value` of a `Set-Cookie` header.
fn pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

/// The hidden CSRF token of a page's form.
fn csrf_of(html: &str) -> String {
    let start = html.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    html[start..start + html[start..].find('"').unwrap()].to_owned()
}

impl Site {
    /// Opens the login form: its cookie and token.
    async fn login_form(&self) -> (String, String) {
        let response = self
            .http
            .get(format!("{}/login", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let cookie = set_cookie(&response, "copytrace_csrf").expect("a CSRF cookie");
        let html = response.text().await.unwrap();
        (pair(&cookie), csrf_of(&html))
    }

    async fn post_login(
        &self,
        cookie: &str,
        csrf: &str,
        email: &str,
        password: &str,
    ) -> reqwest::Response {
        self.post_login_via(cookie, csrf, email, password, None)
            .await
    }

    /// Posts the login form, through a proxy that names the client `forwarded_for` when given.
    async fn post_login_via(
        &self,
        cookie: &str,
        csrf: &str,
        email: &str,
        password: &str,
        forwarded_for: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(format!("{}/login", self.base))
            .header(COOKIE, cookie)
            .form(&[("csrf", csrf), ("email", email), ("password", password)]);
        if let Some(client) = forwarded_for {
            request = request.header("x-forwarded-for", client);
        }
        request.send().await.unwrap()
    }

    /// Logs in; returns the session cookie pair.
    async fn login(&self, email: &str) -> String {
        let (cookie, csrf) = self.login_form().await;
        let response = self.post_login(&cookie, &csrf, email, PASSWORD).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        pair(&set_cookie(&response, "copytrace_session").expect("a session cookie"))
    }

    async fn get(&self, path: &str, cookie: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, cookie)
            .send()
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_login_needs_its_forms_token_and_sets_a_guarded_session_cookie() {
    let site = start(false).await;
    let (cookie, csrf) = site.login_form().await;
    let first = site
        .http
        .get(format!("{}/login", site.base))
        .send()
        .await
        .unwrap();
    let csrf_cookie = set_cookie(&first, "copytrace_csrf").unwrap();
    assert!(csrf_cookie.contains("HttpOnly"), "{csrf_cookie}");
    assert!(csrf_cookie.contains("SameSite=Strict"), "{csrf_cookie}");

    // No token, or another form's: refused, no session.
    for (cookie, token) in [
        (cookie.as_str(), ""),
        (cookie.as_str(), "forged"),
        ("", csrf.as_str()),
    ] {
        let refused = site
            .post_login(cookie, token, "admin@example.com", PASSWORD)
            .await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(set_cookie(&refused, "copytrace_session").is_none());
    }
    let wrong = site
        .post_login(&cookie, &csrf, "admin@example.com", "wrong password")
        .await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(set_cookie(&wrong, "copytrace_session").is_none());

    let ok = site
        .post_login(&cookie, &csrf, "Admin@Example.com", PASSWORD)
        .await;
    assert_eq!(ok.status(), StatusCode::SEE_OTHER);
    assert_eq!(ok.headers()[LOCATION], "/");
    let session = set_cookie(&ok, "copytrace_session").unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(session.contains(attribute), "{attribute} in {session}");
    }
    assert!(!session.contains("Secure"), "plain HTTP here: {session}");

    let secure = start(true).await;
    let cookie = secure.login("admin@example.com").await;
    assert!(!cookie.is_empty());
    let (form_cookie, csrf) = secure.login_form().await;
    let response = secure
        .post_login(&form_cookie, &csrf, "admin@example.com", PASSWORD)
        .await;
    assert!(
        set_cookie(&response, "copytrace_session")
            .unwrap()
            .contains("Secure")
    );
}

#[tokio::test]
async fn the_limiter_refuses_a_guessed_account_even_with_the_right_password() {
    let site = start(false).await;
    let (cookie, csrf) = site.login_form().await;
    for _ in 0..accounts::MAX_ACCOUNT_FAILURES {
        let wrong = site
            .post_login(&cookie, &csrf, "admin@example.com", "guess")
            .await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    let limited = site
        .post_login(&cookie, &csrf, "admin@example.com", PASSWORD)
        .await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(set_cookie(&limited, "copytrace_session").is_none());
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_limiter_counts_each_client_not_the_proxy() {
    let proxy = copytrace_admin_web::web::parse_trusted_proxy("127.0.0.1").unwrap();
    let site = start_behind(false, vec![proxy]).await;
    let (cookie, csrf) = site.login_form().await;
    // One client guesses many accounts (one failure each, so no account is limited).
    for n in 0..accounts::MAX_ADDRESS_FAILURES {
        let wrong = site
            .post_login_via(
                &cookie,
                &csrf,
                &format!("guess{n}@example.com"),
                "guess",
                Some("203.0.113.1"),
            )
            .await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    let limited = site
        .post_login_via(
            &cookie,
            &csrf,
            "admin@example.com",
            PASSWORD,
            Some("203.0.113.1"),
        )
        .await;
    assert_eq!(
        limited.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "that client is limited"
    );
    // Another client behind the same proxy still logs in.
    let other = site
        .post_login_via(
            &cookie,
            &csrf,
            "admin@example.com",
            PASSWORD,
            Some("198.51.100.2"),
        )
        .await;
    assert_eq!(other.status(), StatusCode::SEE_OTHER, "the others are not");
    // Without the proxy trusted, the header is ignored and the proxy is the client.
    let direct = start(false).await;
    let (cookie, csrf) = direct.login_form().await;
    for n in 0..accounts::MAX_ADDRESS_FAILURES {
        let forged = format!("203.0.113.{n}");
        let wrong = direct
            .post_login_via(
                &cookie,
                &csrf,
                &format!("g{n}@example.com"),
                "g",
                Some(&forged),
            )
            .await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    let limited = direct
        .post_login_via(
            &cookie,
            &csrf,
            "admin@example.com",
            PASSWORD,
            Some("198.51.100.2"),
        )
        .await;
    assert_eq!(
        limited.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "a forged header does not escape the limiter"
    );
}

#[tokio::test]
async fn a_rights_holder_sees_only_its_own_copies_with_every_title_inert() {
    let site = start(false).await;
    let anonymous = site.get("/", "").await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers()[LOCATION], "/login");

    let holder = site.login("a@example.com").await;
    let page = site.get("/", &holder).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("Holder A"), "its name");
    assert!(
        !html.contains("乙方的秘密作品"),
        "another holder's work never shows"
    );
    assert!(!html.contains("<script>alert"), "escaped: {html}");
    assert!(!html.contains("<img src=x"), "escaped");
    assert!(
        html.contains("&#60;script&#62;alert(1)") || html.contains("&lt;script&gt;alert(1)"),
        "shown as text: {html}"
    );

    let admin = site.login("admin@example.com").await;
    let html = site.get("/", &admin).await.text().await.unwrap();
    assert!(html.contains("乙方的秘密作品"), "staff see every holder");
}

#[tokio::test]
async fn logout_needs_the_sessions_token_and_ends_it() {
    let site = start(false).await;
    let session = site.login("admin@example.com").await;
    let html = site.get("/", &session).await.text().await.unwrap();
    let csrf = csrf_of(&html);
    let post = |token: &'static str| {
        let csrf = if token.is_empty() {
            csrf.clone()
        } else {
            token.to_owned()
        };
        site.http
            .post(format!("{}/logout", site.base))
            .header(COOKIE, &session)
            .form(&[("csrf", csrf)])
            .send()
    };
    assert_eq!(
        post("forged").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        site.get("/", &session).await.status(),
        StatusCode::OK,
        "still logged in"
    );
    assert_eq!(post("").await.unwrap().status(), StatusCode::SEE_OTHER);
    assert_eq!(
        site.get("/", &session).await.status(),
        StatusCode::SEE_OTHER,
        "ended"
    );
}

#[tokio::test]
async fn chinese_by_default_when_the_browser_prefers_it_and_a_choice_is_remembered() {
    let site = start(false).await;
    let login = |accept: &'static str| {
        site.http
            .get(format!("{}/login", site.base))
            .header(ACCEPT_LANGUAGE, accept)
            .send()
    };
    let zh = login("zh-CN,zh;q=0.9,en;q=0.8")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(zh.contains("<html lang=\"zh-CN\">") && zh.contains("登录"));
    let en = login("en-US,en;q=0.9").await.unwrap().text().await.unwrap();
    assert!(en.contains("Log in"));

    let chosen = site
        .http
        .get(format!("{}/lang/en", site.base))
        .header(ACCEPT_LANGUAGE, "zh-CN")
        .header(reqwest::header::REFERER, format!("{}/login", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(chosen.status(), StatusCode::SEE_OTHER);
    assert_eq!(chosen.headers()[LOCATION], "/login");
    let remembered = pair(&set_cookie(&chosen, "copytrace_lang").unwrap());
    let html = site
        .http
        .get(format!("{}/login", site.base))
        .header(ACCEPT_LANGUAGE, "zh-CN")
        .header(COOKIE, remembered)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Log in"), "the choice wins over the browser");
    let evil = site
        .http
        .get(format!("{}/lang/en", site.base))
        .header(
            reqwest::header::REFERER,
            "https://evil.example//evil.example/x",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(evil.headers()[LOCATION], "/", "never back to another site");
}

#[tokio::test]
async fn another_holders_work_is_not_found_and_lists_show_only_ones_own() {
    let site = start(false).await;
    let works = site.store.list_works(None).await.unwrap();
    let id_of = |external: &str| works.iter().find(|w| w.external_id == external).unwrap().id;
    let (mine, theirs) = (id_of("a-1"), id_of("b-1"));
    let holder = site.login("a@example.com").await;

    let list = site.get("/works", &holder).await.text().await.unwrap();
    assert!(list.contains(&format!("href=\"/works/{mine}\"")), "{list}");
    assert!(!list.contains("乙方的秘密作品"));
    let own = site.get(&format!("/works/{mine}"), &holder).await;
    assert_eq!(own.status(), StatusCode::OK);
    let html = own.text().await.unwrap();
    assert!(
        html.contains("https://pirate.example/a-1.html"),
        "its copy: {html}"
    );
    assert!(!html.contains("<script>alert"), "escaped");

    for path in [format!("/works/{theirs}"), "/works/999999".to_owned()] {
        let response = site.get(&path, &holder).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(
            !response.text().await.unwrap().contains("乙方"),
            "none of its data"
        );
    }
    let admin = site.login("admin@example.com").await;
    assert_eq!(
        site.get(&format!("/works/{theirs}"), &admin).await.status(),
        StatusCode::OK
    );
    let searched = site
        .get("/works?q=%E4%B9%99%E6%96%B9", &admin)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        searched.contains("乙方的秘密作品") && !searched.contains("a-1"),
        "{searched}"
    );
    let anonymous = site.get(&format!("/works/{mine}"), "").await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_match_shows_its_passages_side_by_side_with_differences_marked() {
    let site = start(false).await;
    let matches = site
        .store
        .list_matches(&copytrace_store::MatchFilter::default())
        .await
        .unwrap();
    let id_of = |external: &str| {
        matches
            .iter()
            .find(|m| m.work_external_id == external)
            .unwrap()
            .id
    };
    let (mine, theirs) = (id_of("a-1"), id_of("b-1"));
    let holder = site.login("a@example.com").await;
    let response = site.get(&format!("/matches/{mine}"), &holder).await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.unwrap();
    // The work's passage is the start of its evil title, the page's is "copy of a-".
    assert!(
        html.contains("<mark>"),
        "the page's differing text is marked: {html}"
    );
    assert!(html.contains("<del>"), "the work's missing text is marked");
    assert!(!html.contains("<script>al"), "escaped");
    assert!(html.contains("https://pirate.example/a-1.html"));
    for path in [format!("/matches/{theirs}"), "/matches/999999".to_owned()] {
        assert_eq!(
            site.get(&path, &holder).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let admin = site.login("admin@example.com").await;
    assert_eq!(
        site.get(&format!("/matches/{theirs}"), &admin)
            .await
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn short_lists_are_searched_and_paged_on_the_server() {
    let site = start(false).await;
    for n in 0..60 {
        accounts::add_user(
            site.store.as_ref(),
            &format!("analyst{n:02}@example.com"),
            Role::Analyst,
            None,
            PASSWORD,
        )
        .await
        .unwrap();
    }
    let admin = site.login("admin@example.com").await;
    // 62 accounts: the first page has 50 rows, the second the other 12.
    let rows = |html: &str| html.matches("action=\"/users/remove\"").count();
    let first = site.get("/users", &admin).await.text().await.unwrap();
    let second = site
        .get("/users?page=2", &admin)
        .await
        .text()
        .await
        .unwrap();
    // The admin's own row has no remove button.
    assert_eq!(rows(&first) + rows(&second), 61);
    assert!(
        rows(&first) >= 49 && rows(&second) <= 12,
        "{} + {}",
        rows(&first),
        rows(&second)
    );
    assert!(first.contains("rel=\"next\""), "a link to the next page");
    assert!(second.contains("rel=\"prev\"") && !second.contains("rel=\"next\""));
    // A search keeps the matching rows only, and the links keep the search.
    let searched = site
        .get("/users?q=analyst0", &admin)
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(rows(&searched), 10, "analyst00 to analyst09");
    assert!(!searched.contains("analyst10@example.com"));
    let two_words = site
        .get("/users?q=ANALYST5+example", &admin)
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(rows(&two_words), 10, "every word, in any case");
    // A page past the end or not a number is a page, not an error.
    for odd in ["/users?page=99", "/users?page=%27%3B"] {
        assert_eq!(
            site.get(odd, &admin).await.status(),
            StatusCode::OK,
            "{odd}"
        );
    }
}

#[tokio::test]
async fn a_laundered_copy_shows_the_synonyms_it_substituted() {
    let site = start(false).await;
    let store = site.store.as_ref();
    let holder = store.ensure_rights_holder("Holder A").await.unwrap();
    let original = "少年立即推开木门，看见院子里站着一个陌生人。";
    let laundered = "少年马上推开木门，瞧见庭院里站着一个生人。";
    let copy = Copy {
        external_id: "a-laundered",
        title: "雨夜",
        work_text: original,
        page_text: laundered,
        method: "sense+align+laundered",
    };
    let whole = (laundered.len() as u32, original.len() as u32);
    let id = recorded_match(store, holder, &copy, whole).await;
    let session = site.login("a@example.com").await;
    let html = site
        .get(&format!("/matches/{id}"), &session)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("class=\"substitutions\""), "{html}");
    assert!(
        html.contains("<mark>马上</mark> ← <del>立即</del>"),
        "the substitution is named: {html}"
    );
    // A match found by characters lists none.
    let plain = site
        .store
        .list_matches(&copytrace_store::MatchFilter::default())
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.work_external_id == "a-1")
        .unwrap()
        .id;
    let html = site
        .get(&format!("/matches/{plain}"), &session)
        .await
        .text()
        .await
        .unwrap();
    assert!(!html.contains("class=\"substitutions\""));
}

#[tokio::test]
async fn a_match_lists_the_other_urls_of_its_page() {
    let site = start(false).await;
    let matches = site
        .store
        .list_matches(&copytrace_store::MatchFilter::default())
        .await
        .unwrap();
    let mine = matches
        .iter()
        .find(|m| m.work_external_id == "a-1")
        .unwrap();
    // The same text under a tracking parameter, recorded as an alias of the page.
    let page = site.store.get_page(mine.page_id).await.unwrap();
    let alias_url = "https://pirate.example/a-1.html?from=<hot>&x=1";
    let alias = site
        .store
        .upsert_page(&NewPage {
            url: alias_url.into(),
            title: None,
            text: page.text.clone(),
            content_hash: page.content_hash.clone(),
            http_status: 200,
            fetched_at: Utc::now(),
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    site.store
        .set_page_alias(alias, Some(mine.page_id))
        .await
        .unwrap();
    let holder = site.login("a@example.com").await;
    let html = site
        .get(&format!("/matches/{}", mine.id), &holder)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("Same page also at") || html.contains("同一网页的其他网址"),
        "{html}"
    );
    // Listed, and escaped like every URL the page shows.
    assert!(
        html.contains("https://pirate.example/a-1.html?from=%3Chot%3E&#38;x=1"),
        "{html}"
    );
}
