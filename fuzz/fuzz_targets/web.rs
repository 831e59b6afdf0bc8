//! The admin web's form and query parsing, through the real router: fuzzed requests to the
//! pages and the JSON API, sent as a logged-in administrator (session cookie, and the session's
//! CSRF token when the input asks for it) to an in-memory SQLite store holding one copied work.
//!
//! Every query string, form body, path segment, JSON body and the headers the web reads
//! (`Accept-Language`, `Referer`, `X-Forwarded-For`) come from the input. Query strings and
//! forms are `name=value` pairs over the fields the handlers read (or fuzzed names), or raw
//! text with malformed escapes. Whatever arrives:
//!
//! * no handler panics;
//! * no answer is a server error (5xx): bad input is refused with a 4xx or shown as a message
//!   on the page;
//! * a redirect never leaves the site: its `Location` is a path (`/…`) that a browser does not
//!   read as another host (`//host`, `/\host`, or the same with tabs or line breaks inside,
//!   which browsers remove).
//!
//! `FUZZ_WEB_TRACE=1` prints each request with its answer's status.
//!
//! Routes that would end the session (`/logout`), hash passwords (adding users), spawn imports
//! (library uploads) or write evidence packages to disk are left out.
#![no_main]

use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, header};
use chrono::Utc;
use copytrace_admin_web::web::{SESSION_COOKIE, WebState, router};
use copytrace_service::accounts::{self, Login};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{EvidencePassage, NewMatch, NewPage, NewWork, Role, Store};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Site {
    runtime: tokio::runtime::Runtime,
    router: Router,
    cookie: String,
    csrf: String,
}

const ADMIN: &str = "admin@example.com";
const PASSWORD: &str = "correct horse battery";

static SITE: LazyLock<Site> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (router, cookie, csrf) = runtime.block_on(start());
    Site {
        runtime,
        router,
        cookie,
        csrf,
    }
});

/// A store with one rights holder, one work copied by one page (match, evidence), and an
/// administrator; the router over it; the administrator's session cookie and CSRF token.
async fn start() -> (Router, String, String) {
    let store = SqliteStore::connect("sqlite::memory:")
        .await
        .expect("SQLite");
    store.migrate().await.expect("migrations");
    let holder = store
        .ensure_rights_holder("Holder A")
        .await
        .expect("holder");
    let text = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个陌生人。".repeat(10);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: "a-1".into(),
            title: "夜雨".into(),
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
        .expect("work");
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let now = Utc::now();
    let page = store
        .upsert_page(&NewPage {
            url: "https://pirate.example/a-1.html".into(),
            title: None,
            text: text.clone(),
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: now,
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .expect("page")
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
            page_end: 30,
            work_start: 0,
            work_end: 30,
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], now)
        .await
        .expect("match");
    accounts::add_user(&store, ADMIN, Role::Admin, None, PASSWORD)
        .await
        .expect("admin");
    let Login::Started { token, session } =
        accounts::login(&store, ADMIN, PASSWORD, "127.0.0.1", now)
            .await
            .expect("login")
    else {
        panic!("the administrator cannot log in");
    };
    let store: Arc<dyn Store> = Arc::new(store);
    let state = WebState {
        store,
        secure_cookies: false,
        redis: None,
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies: vec!["127.0.0.0/8".parse().expect("a network")],
    };
    (
        router(state),
        format!("{SESSION_COOKIE}={token}"),
        session.csrf_token,
    )
}

/// How a route takes its input.
#[derive(Clone, Copy, PartialEq)]
enum Input {
    /// A query string only.
    Query,
    /// An `application/x-www-form-urlencoded` body (and the query string).
    Form,
    /// A JSON body with the CSRF header (the API).
    Json,
}

/// Routes, with `{}` standing for a fuzzed path segment.
const ROUTES: &[(Method, &str, Input)] = &[
    (Method::GET, "/", Input::Query),
    (Method::GET, "/login", Input::Query),
    (Method::POST, "/login", Input::Form),
    (Method::GET, "/lang/{}", Input::Query),
    (Method::GET, "/matches", Input::Query),
    (Method::GET, "/review", Input::Query),
    (Method::POST, "/matches/decide", Input::Form),
    (Method::GET, "/matches/{}", Input::Query),
    (Method::GET, "/works", Input::Query),
    (Method::GET, "/works/{}", Input::Query),
    (Method::GET, "/stats", Input::Query),
    (Method::GET, "/exports/{}", Input::Query),
    (Method::GET, "/sites/{}", Input::Query),
    (Method::GET, "/notices", Input::Query),
    (Method::POST, "/notices", Input::Form),
    (Method::GET, "/notices/{}", Input::Query),
    (Method::POST, "/notices/{}/status", Input::Form),
    (Method::POST, "/notices/{}/text", Input::Form),
    (Method::GET, "/users", Input::Query),
    (Method::POST, "/users/remove", Input::Form),
    (Method::GET, "/schedules", Input::Query),
    (Method::POST, "/schedules", Input::Form),
    (Method::GET, "/schedules/{}", Input::Query),
    (Method::POST, "/schedules/{}/{}", Input::Form),
    (Method::GET, "/runs", Input::Query),
    (Method::GET, "/library/imports/{}", Input::Query),
    (Method::GET, "/api/v1/me", Input::Query),
    (Method::GET, "/api/v1/works", Input::Query),
    (Method::GET, "/api/v1/works/{}", Input::Query),
    (Method::GET, "/api/v1/matches", Input::Query),
    (Method::POST, "/api/v1/matches/decide", Input::Json),
    (Method::GET, "/api/v1/matches/{}", Input::Query),
    (Method::GET, "/api/v1/stats/works", Input::Query),
    (Method::GET, "/api/v1/stats/sites", Input::Query),
    (Method::GET, "/api/v1/stats/daily", Input::Query),
    (Method::GET, "/api/v1/notices", Input::Query),
    (Method::POST, "/api/v1/notices", Input::Json),
    (Method::GET, "/api/v1/notices/{}", Input::Query),
    (Method::POST, "/api/v1/notices/{}/status", Input::Json),
    (Method::GET, "/api/v1/schedules", Input::Query),
    (Method::POST, "/api/v1/schedules", Input::Json),
    (Method::POST, "/api/v1/schedules/{}/{}", Input::Json),
    (Method::GET, "/api/v1/runs", Input::Query),
    (Method::GET, "/api/v1/tokens", Input::Query),
    (Method::GET, "/api/v1/{}", Input::Query),
];

/// Field names the handlers read, so that most pairs reach a parser.
const FIELDS: &[&str] = &[
    "work",
    "site",
    "status",
    "review",
    "since",
    "until",
    "min_score",
    "page",
    "per_page",
    "q",
    "table",
    "format",
    "decision",
    "id",
    "back",
    "note",
    "lang",
    "holder",
    "body",
    "email",
    "role",
    "password",
    "name",
    "cron",
    "timezone",
    "seeds",
    "max_pages",
    "group",
    "limit",
];

/// Path segments worth trying besides fuzzed ones.
const SEGMENTS: &[&str] = &[
    "1",
    "2",
    "0",
    "-1",
    "9223372036854775808",
    "en",
    "zh",
    "matches",
    "works",
    "sites",
    "daily",
    "time-to-piracy",
    "pause",
    "resume",
    "run",
    "delete",
    "nightly",
];

/// Percent-encodes what a URI cannot carry, leaving `%`, `&`, `=` and `+` alone so that
/// malformed escapes and odd pairs reach the parsers.
fn raw_query(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A header value: visible ASCII, spaces and tabs as they are (backslashes included), anything
/// else percent-encoded.
fn header_value(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if matches!(byte, b' '..=b'~' | b'\t') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn pairs(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 8)? {
        return Ok(raw_query(u.arbitrary()?));
    }
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for _ in 0..u.int_in_range(0..=6)? {
        let name: String = if u.ratio(7, 8)? {
            (*u.choose(FIELDS)?).to_owned()
        } else {
            u.arbitrary()?
        };
        let value: String = u.arbitrary()?;
        serializer.append_pair(&name, &value);
    }
    Ok(serializer.finish())
}

fn segment(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(if u.ratio(1, 2)? {
        (*u.choose(SEGMENTS)?).to_owned()
    } else {
        url::form_urlencoded::byte_serialize(u.arbitrary::<&str>()?.as_bytes()).collect()
    })
}

/// Whether a browser following `location` stays on this site.
fn stays_on_site(location: &str) -> bool {
    // What the URL parser does first: leading and trailing spaces and controls go, tabs and
    // line breaks inside go, and in http(s) URLs a backslash is a slash.
    let cleaned: String = location
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .map(|c| if c == '\\' { '/' } else { c })
        .collect();
    cleaned.starts_with('/') && !cleaned.starts_with("//")
}

fn request(u: &mut Unstructured<'_>, site: &Site) -> Result<Request<Body>> {
    let (method, template, input) = u.choose(ROUTES)?.clone();
    let mut path = String::new();
    for (i, part) in template.split("{}").enumerate() {
        if i > 0 {
            path.push_str(&segment(u)?);
        }
        path.push_str(part);
    }
    let query = pairs(u)?;
    let uri = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    let with_csrf = u.ratio(3, 4)?;
    let mut builder = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::COOKIE, &site.cookie);
    for name in [header::ACCEPT_LANGUAGE, header::REFERER] {
        if u.ratio(1, 4)? {
            builder = builder.header(name, header_value(u.arbitrary()?));
        }
    }
    if u.ratio(1, 8)? {
        builder = builder.header("x-forwarded-for", header_value(u.arbitrary()?));
    }
    let body = match input {
        Input::Query => Body::empty(),
        Input::Form => {
            let mut form = pairs(u)?;
            if with_csrf {
                form = format!("csrf={}&{form}", site.csrf);
            }
            builder = builder.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            Body::from(form)
        }
        Input::Json => {
            if with_csrf {
                builder = builder.header("x-csrf-token", &site.csrf);
            }
            builder = builder.header(header::CONTENT_TYPE, "application/json");
            Body::from(u.arbitrary::<String>()?)
        }
    };
    let mut request = builder
        .body(body)
        .map_err(|_| libfuzzer_sys::arbitrary::Error::IncorrectFormat)?;
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000))));
    Ok(request)
}

fn check(data: &[u8]) -> Result<()> {
    let site = &*SITE;
    let mut u = Unstructured::new(data);
    let request = request(&mut u, site)?;
    let described = format!("{} {}", request.method(), request.uri());
    let response = site
        .runtime
        .block_on(site.router.clone().oneshot(request))
        .expect("the router is infallible");
    let status = response.status();
    if std::env::var_os("FUZZ_WEB_TRACE").is_some() {
        eprintln!("{status} {described}");
    }
    assert!(!status.is_server_error(), "{status} for {described}");
    if let Some(location) = response.headers().get(header::LOCATION) {
        let location = String::from_utf8_lossy(location.as_bytes());
        assert!(
            stays_on_site(&location),
            "{described} redirects off the site to {location:?}"
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
