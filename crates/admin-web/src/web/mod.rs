//! The server-rendered admin web. Pages work without JavaScript; each area of the product has
//! its module, and every page goes through the service layer (the web writes no SQL).
//!
//! **Sessions.** Logging in (`service::accounts::login`, limited per account and per address)
//! gives a random token in the `copytrace_session` cookie (HttpOnly, SameSite=Lax, Secure when
//! served behind TLS); the store keeps only its SHA-256.
//!
//! **CSRF.** Every form carries a token: a logged-in user's forms the session's own, the login
//! form one that must match the `copytrace_csrf` cookie it came with (a cross-site page can
//! neither read that cookie nor make the browser send it, SameSite=Strict). A post without the
//! right token is refused with 403 and changes nothing.
//!
//! **Roles.** Each page belongs to an [`Area`]; [`Area::allows`] says which roles may open it,
//! and everyone else gets 403.
//!
//! **Tenancy.** A rights holder sees only its own works, matches, notices, exports and
//! statistics; another holder's object answers 404, the same as a missing one.
//!
//! **Headers.** Every answer of the web and the API carries [`SECURITY_HEADERS`]: a Content
//! Security Policy that loads nothing but inline styles (the pages have no script at all, so
//! markup slipped into a crawled title could run nothing even if it escaped escaping), no
//! framing (clickjacking), no MIME sniffing (a JSON or CSV download is never read as HTML),
//! and no `Referer` to other sites (match pages link to pirate sites).

// Pages answer `Result<Response, Response>`: an early answer (403, 404, a form's error) is the
// error, taken with `?`. A `Response` is large, but it is built once per request.
#![allow(clippy::result_large_err)]

mod access;
mod actions;
mod analysis;
mod auth;
pub use auth::parse_trusted_proxy;
mod crawls;
mod dashboard;
mod figures;
pub(crate) mod filters;
mod holders;
pub mod i18n;
pub(crate) mod imports;
pub(crate) mod library;
mod lists;
mod matches;
mod notices;
mod profiles;
mod reports;
mod sites;
mod works;

pub use access::Area;
pub use figures::DashboardCache;
pub use imports::LibraryImports;

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};
use chrono::Utc;
use copytrace_service::accounts;
use copytrace_store::{Role, Session, Store};

use i18n::{Lang, Texts};

/// Cookie holding the session token.
pub const SESSION_COOKIE: &str = "copytrace_session";
/// Cookie holding the login form's CSRF token.
pub const LOGIN_CSRF_COOKIE: &str = "copytrace_csrf";

/// What every page handler shares.
#[derive(Clone)]
pub struct WebState {
    /// The store, read through the service layer.
    pub store: Arc<dyn Store>,
    /// Mark cookies `Secure` (the site is served over TLS, directly or behind a proxy).
    pub secure_cookies: bool,
    /// The shared Redis index (URL, key prefix) that library uploads keep in step, as
    /// `copytrace library add --redis-url` does; `None` when matching reads the database.
    pub redis: Option<(String, String)>,
    /// The dashboard's figures per tenant, computed at most once a minute (see
    /// [`DashboardCache`] for how stale they may be).
    pub dashboard: DashboardCache,
    /// Library uploads being imported in the background, and the last ones finished (see
    /// [`LibraryImports`]).
    pub imports: LibraryImports,
    /// Reverse proxies whose `X-Forwarded-For` names the client (see
    /// `auth::client_address`); empty: the connection's peer is the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The SMTP server and sender takedown notices are mailed through (the alert mailer's,
    /// as `copytrace notice send` uses); without an SMTP URL, sending from the web is refused
    /// saying so. Its time-stamping authority (`timestamps`) also stamps the evidence packages
    /// the web and the API hand out, as `copytrace evidence` does.
    pub mail: copytrace_service::alerts::AlertSettings,
}

/// The Content Security Policy of every answer: nothing is loaded or run but the pages' inline
/// styles and same-origin images, forms post only to this site, no page may be framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The headers every answer of the web and the API carries, as `(name, value)`.
pub const SECURITY_HEADERS: [(&str, &str); 4] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
];

/// Adds [`SECURITY_HEADERS`] to an answer.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, axum::http::HeaderValue::from_static(value));
    }
    response
}

/// The pages, and the JSON API beside them ([`crate::api`]), every answer with
/// [`SECURITY_HEADERS`]. Serve it with connection info (`into_make_service_with_connect_info`):
/// the login limiter counts failures per client address.
pub fn router(state: WebState) -> Router {
    Router::new()
        .merge(auth::routes())
        .merge(dashboard::routes())
        .merge(works::routes())
        .merge(matches::routes())
        .merge(crawls::routes())
        .merge(analysis::routes())
        .merge(actions::routes())
        .merge(notices::routes())
        .merge(sites::routes())
        .merge(library::routes())
        .merge(profiles::routes())
        .merge(reports::routes())
        .merge(holders::routes())
        .merge(crate::api::routes())
        .layer(axum::middleware::map_response(security_headers))
        .with_state(state)
}

/// A page, or a status with its text.
fn page(template: impl Template) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(error) => {
            tracing::error!(%error, "a template failed to render");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page could not be rendered",
            )
                .into_response()
        }
    }
}

/// A download of `file` (written in full first, so a failure never sends half of it), streamed
/// from its start as the attachment `name` ([`attachment_name`]).
pub(crate) fn download(
    mut file: std::fs::File,
    content_type: &str,
    name: &str,
) -> Result<Response, Response> {
    std::io::Seek::rewind(&mut file).map_err(|e| failure(e.into()))?;
    let body = axum::body::Body::from_stream(tokio_util::io::ReaderStream::new(
        tokio::fs::File::from_std(file),
    ));
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, content_type.to_owned()),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", attachment_name(name)),
            ),
        ],
        body,
    )
        .into_response())
}

/// A download's file name as `Content-Disposition` may carry it: only ASCII letters, digits,
/// `-`, `_` and `.` (anything else becomes `_`), no leading dot, so no quote, line break, slash
/// or `..` from whatever the name was built from can end the header, add another, or make a
/// browser save outside its download folder.
fn attachment_name(name: &str) -> String {
    let kept: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let kept = kept.replace("..", "_").trim_start_matches('.').to_owned();
    if kept.is_empty() {
        "download".to_owned()
    } else {
        kept
    }
}

/// A service failure, logged; the user sees only that something failed.
fn failure(error: copytrace_service::ServiceError) -> Response {
    tracing::error!(error = %copytrace_service::error::one_line(&error), "a page failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "the page could not be loaded",
    )
        .into_response()
}

fn cookie(
    state: &WebState,
    name: &'static str,
    value: String,
    same_site: SameSite,
) -> Cookie<'static> {
    Cookie::build((name, value))
        .path("/")
        .http_only(true)
        .same_site(same_site)
        .secure(state.secure_cookies)
        .build()
}

/// The session of a request's cookie, if live.
pub(crate) async fn current_session(
    state: &WebState,
    jar: &CookieJar,
) -> Result<Option<Session>, Response> {
    let Some(token) = jar.get(SESSION_COOKIE) else {
        return Ok(None);
    };
    accounts::session(state.store.as_ref(), token.value(), Utc::now())
        .await
        .map_err(failure)
}

/// A link of the header's navigation.
struct NavLink {
    href: &'static str,
    label: &'static str,
}

/// Who is looking at a page: what the header shows (the links their role may follow), and the
/// session's CSRF token for its forms.
struct Viewer {
    email: String,
    role_name: &'static str,
    csrf: String,
    nav: Vec<NavLink>,
}

impl Viewer {
    fn of(session: &Session, t: &'static Texts) -> Viewer {
        let role = session.user.role;
        let links = [
            ("/", t.dashboard, Area::Dashboard),
            ("/works", t.works, Area::Reports),
            ("/matches", t.matches, Area::Reports),
            ("/review", t.review_queue, Area::Review),
            ("/notices", t.notices, Area::Notices),
            ("/stats", t.statistics, Area::Statistics),
            ("/reports/weekly", t.weekly_report, Area::Statistics),
            ("/sites", t.sites_title, Area::Sites),
            ("/schedules", t.schedules, Area::Crawls),
            ("/runs", t.runs, Area::Crawls),
            ("/library", t.library, Area::Library),
            ("/holders", t.rights_holders, Area::Holders),
            ("/users", t.users, Area::Users),
        ];
        Viewer {
            email: session.user.email.clone(),
            role_name: t.roles[match role {
                Role::Admin => 0,
                Role::Operator => 1,
                Role::Analyst => 2,
                Role::RightsHolder => 3,
            }],
            csrf: session.csrf_token.clone(),
            nav: links
                .into_iter()
                .filter(|(.., area)| area.allows(role))
                .map(|(href, label, _)| NavLink { href, label })
                .collect(),
        }
    }
}

/// A logged-in visitor: their session and the texts of their language. A page that needs a
/// login takes it as an argument; without a live session the request is answered with a
/// redirect to `/login` before the page runs. The page then says which [`Area`] it belongs
/// to with [`Visitor::enter`].
struct Visitor {
    session: Session,
    t: &'static Texts,
}

impl axum::extract::FromRequestParts<WebState> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &WebState,
    ) -> Result<Self, Response> {
        let jar = CookieJar::from_headers(&parts.headers);
        match current_session(state, &jar).await? {
            Some(session) => Ok(Visitor {
                session,
                t: Lang::of_request(&jar, &parts.headers).texts(),
            }),
            None => Err(Redirect::to("/login").into_response()),
        }
    }
}

impl Visitor {
    /// Nothing when the visitor's role may open `area`'s pages, else the 403 answer.
    fn enter(&self, area: Area) -> Result<(), Response> {
        if area.allows(self.session.user.role) {
            Ok(())
        } else {
            Err(self.forbidden())
        }
    }

    /// The 403 answer: the visitor's role may not do this.
    fn forbidden(&self) -> Response {
        message_page(
            &self.session,
            self.t,
            StatusCode::FORBIDDEN,
            self.t.forbidden,
        )
    }

    /// Nothing when `csrf` is the session's form token, else the 403 answer: every form
    /// posted by a logged-in visitor carries it.
    fn check_form(&self, csrf: &str) -> Result<(), Response> {
        if !csrf.is_empty() && csrf == self.session.csrf_token {
            Ok(())
        } else {
            Err(message_page(
                &self.session,
                self.t,
                StatusCode::FORBIDDEN,
                self.t.expired_form,
            ))
        }
    }

    /// The rights holder whose data alone this visitor may see; `None` for staff.
    fn tenant(&self) -> Option<copytrace_store::Id> {
        self.session.user.rights_holder_id
    }

    /// The 404 answer, for what is missing or not the visitor's: the same answer for both, so
    /// that another tenant's ids reveal nothing.
    fn not_found(&self) -> Response {
        message_page(
            &self.session,
            self.t,
            StatusCode::NOT_FOUND,
            self.t.not_found,
        )
    }

    /// [`Visitor::not_found`] when the service found nothing, else a failure.
    fn not_found_or_failure(&self, error: copytrace_service::ServiceError) -> Response {
        if error.kind() == copytrace_service::ErrorKind::NotFound {
            self.not_found()
        } else {
            failure(error)
        }
    }

    /// Nothing when a filter's work (`work` as typed; nothing typed is fine) is one the visitor
    /// may see, else the 404 answer: a rights holder naming another holder's work learns
    /// nothing, not even that it exists. Text that is not an id is left for the filter to
    /// refuse.
    async fn check_work(&self, state: &WebState, work: &str) -> Result<(), Response> {
        let (Some(own), Ok(id)) = (self.tenant(), work.trim().parse::<copytrace_store::Id>())
        else {
            return Ok(());
        };
        let (work, _) = copytrace_service::library::work_summary(state.store.as_ref(), id)
            .await
            .map_err(|error| self.not_found_or_failure(error))?;
        if work.rights_holder_id == own {
            Ok(())
        } else {
            Err(self.not_found())
        }
    }

    /// The 400 answer for a form that cannot be done as posted, saying why.
    fn bad_request(&self, message: &str) -> Response {
        message_page(&self.session, self.t, StatusCode::BAD_REQUEST, message)
    }

    fn viewer(&self) -> Viewer {
        Viewer::of(&self.session, self.t)
    }
}

#[derive(Template)]
#[template(path = "web/message.html")]
struct MessagePage {
    t: &'static Texts,
    viewer: Viewer,
    message: String,
}

/// A page that only says `message`, answered with `status`.
fn message_page(
    session: &Session,
    t: &'static Texts,
    status: StatusCode,
    message: impl Into<String>,
) -> Response {
    (
        status,
        page(MessagePage {
            t,
            viewer: Viewer::of(session, t),
            message: message.into(),
        }),
    )
        .into_response()
}

/// A match as pages show it: its figures formatted, its states in the visitor's language, and
/// whether its page URL may be a link (only `http` and `https`: a crawled URL is never trusted
/// as a `javascript:` link).
struct MatchRowView {
    id: i64,
    work_id: i64,
    work_title: String,
    page_url: String,
    linkable: bool,
    score: String,
    coverage: String,
    first_seen: String,
    status: &'static str,
    review: &'static str,
}

impl MatchRowView {
    fn of(m: &copytrace_store::MatchRecord, t: &Texts) -> MatchRowView {
        MatchRowView {
            id: m.id,
            work_id: m.work_id,
            work_title: m.work_title.clone(),
            linkable: m.page_url.starts_with("http://") || m.page_url.starts_with("https://"),
            page_url: m.page_url.clone(),
            score: format!("{:.2}", m.score),
            coverage: format!("{:.0}", m.coverage * 100.0),
            first_seen: m.first_seen.format("%Y-%m-%d %H:%M").to_string(),
            status: t.code(m.status.as_str()),
            review: t.code(m.review.as_str()),
        }
    }
}

/// An instant as the pages show a moment to the second: `2026-11-27 11:10:10 UTC`.
pub(super) fn utc_seconds(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::attachment_name;

    #[test]
    fn attachment_names_cannot_break_the_header_or_leave_the_download_folder() {
        assert_eq!(
            attachment_name("copytrace-matches-20261127-1110.csv"),
            "copytrace-matches-20261127-1110.csv"
        );
        for (hostile, expected) in [
            ("../../etc/passwd", "____etc_passwd"),
            ("..\\..\\boot.ini", "____boot.ini"),
            ("a\"; filename=evil.exe", "a___filename_evil.exe"),
            ("a\r\nSet-Cookie: x=1", "a__Set-Cookie__x_1"),
            ("作品.csv", "__.csv"),
            ("...", "_."),
            ("", "download"),
        ] {
            let safe = attachment_name(hostile);
            assert_eq!(safe, expected, "{hostile:?}");
            assert!(!safe.contains(['"', '/', '\\', '\r', '\n', ';']), "{safe}");
            assert!(!safe.contains("..") && !safe.starts_with('.'), "{safe}");
        }
    }
}
