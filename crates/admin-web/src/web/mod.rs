//! The server-rendered admin web: login and logout, language choice, and the dashboard. Pages
//! work without JavaScript.
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
//! **Tenancy.** A rights holder's pages count only its own works' copies.

mod dashboard;
pub mod i18n;

use std::net::SocketAddr;
use std::sync::Arc;

use askama::Template;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};
use chrono::Utc;
use copytrace_service::accounts::{self, Login};
use copytrace_store::{MatchFilter, Role, Session, StatsFilter, Store};
use serde::Deserialize;

pub use dashboard::DashboardCache;
use dashboard::{SiteLine, Totals, WorkLine};
use i18n::{LANG_COOKIE, Lang, Texts};

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
    /// The dashboard's figures per tenant, computed at most once a minute (see
    /// [`DashboardCache`] for how stale they may be).
    pub dashboard: DashboardCache,
}

/// The pages. Serve it with connection info (`into_make_service_with_connect_info`): the login
/// limiter counts failures per client address.
pub fn router(state: WebState) -> Router {
    Router::new()
        .route("/", get(dashboard))
        .route("/login", get(login_page).post(login_submit))
        .route("/logout", post(logout))
        .route("/lang/{lang}", get(choose_language))
        .route("/works", get(works_page))
        .route("/works/{id}", get(work_page))
        .route("/matches/{id}", get(match_page))
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
async fn current_session(state: &WebState, jar: &CookieJar) -> Result<Option<Session>, Response> {
    let Some(token) = jar.get(SESSION_COOKIE) else {
        return Ok(None);
    };
    accounts::session(state.store.as_ref(), token.value(), Utc::now())
        .await
        .map_err(failure)
}

#[derive(Template)]
#[template(path = "web/login.html")]
struct LoginPage {
    t: &'static Texts,
    csrf: String,
    email: String,
    error: Option<&'static str>,
}

/// The login form, with a fresh CSRF token in a cookie and in the form.
fn login_form(
    state: &WebState,
    jar: CookieJar,
    lang: Lang,
    email: String,
    error: Option<&'static str>,
    status: StatusCode,
) -> Response {
    let csrf = accounts::random_token();
    let jar = jar.add(cookie(
        state,
        LOGIN_CSRF_COOKIE,
        csrf.clone(),
        SameSite::Strict,
    ));
    let t = lang.texts();
    (
        status,
        jar,
        page(LoginPage {
            t,
            csrf,
            email,
            error,
        }),
    )
        .into_response()
}

async fn login_page(State(state): State<WebState>, jar: CookieJar, headers: HeaderMap) -> Response {
    let lang = Lang::of_request(&jar, &headers);
    match current_session(&state, &jar).await {
        Ok(Some(_)) => Redirect::to("/").into_response(),
        Ok(None) => login_form(&state, jar, lang, String::new(), None, StatusCode::OK),
        Err(response) => response,
    }
}

#[derive(Deserialize)]
struct LoginForm {
    csrf: String,
    email: String,
    password: String,
}

async fn login_submit(
    State(state): State<WebState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    jar: CookieJar,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let lang = Lang::of_request(&jar, &headers);
    let t = lang.texts();
    let expected = jar.get(LOGIN_CSRF_COOKIE).map(|c| c.value().to_owned());
    if expected.as_deref() != Some(form.csrf.as_str()) || form.csrf.is_empty() {
        return login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.expired_form),
            StatusCode::FORBIDDEN,
        );
    }
    let outcome = accounts::login(
        state.store.as_ref(),
        &form.email,
        &form.password,
        &client.ip().to_string(),
        Utc::now(),
    )
    .await;
    match outcome {
        Ok(Login::Started { token, .. }) => {
            let jar = jar
                .remove(Cookie::build(LOGIN_CSRF_COOKIE).path("/"))
                .add(cookie(&state, SESSION_COOKIE, token, SameSite::Lax));
            (jar, Redirect::to("/")).into_response()
        }
        Ok(Login::Refused) => login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.wrong_login),
            StatusCode::UNAUTHORIZED,
        ),
        Ok(Login::Limited) => login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.too_many_attempts),
            StatusCode::TOO_MANY_REQUESTS,
        ),
        Err(error) => failure(error),
    }
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: String,
}

async fn logout(
    State(state): State<WebState>,
    jar: CookieJar,
    Form(form): Form<CsrfForm>,
) -> Response {
    let session = match current_session(&state, &jar).await {
        Ok(Some(session)) => session,
        Ok(None) => return Redirect::to("/login").into_response(),
        Err(response) => return response,
    };
    if form.csrf != session.csrf_token {
        return (StatusCode::FORBIDDEN, "invalid form token").into_response();
    }
    if let Some(token) = jar.get(SESSION_COOKIE)
        && let Err(error) = accounts::logout(state.store.as_ref(), token.value()).await
    {
        return failure(error);
    }
    let jar = jar.remove(Cookie::build(SESSION_COOKIE).path("/"));
    (jar, Redirect::to("/login")).into_response()
}

async fn choose_language(
    State(state): State<WebState>,
    Path(lang): Path<String>,
    jar: CookieJar,
    headers: HeaderMap,
) -> Response {
    let Some(lang) = Lang::parse(&lang) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let code = match lang {
        Lang::Zh => "zh",
        Lang::En => "en",
    };
    let mut remembered = cookie(&state, LANG_COOKIE, code.to_owned(), SameSite::Lax);
    remembered.make_permanent();
    // Back to the page it was chosen on, when that was one of ours.
    let back = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(url_path)
        .unwrap_or_else(|| "/".to_owned());
    (jar.add(remembered), Redirect::to(&back)).into_response()
}

/// The path (and query) of a URL, never another site: `/a?b` of `http://host/a?b`.
fn url_path(referer: &str) -> Option<String> {
    let rest = referer.split_once("://").map_or(referer, |(_, rest)| rest);
    let path = &rest[rest.find('/')?..];
    (!path.starts_with("//")).then(|| path.to_owned())
}

/// Who is looking at a page: what the header shows, and the session's CSRF token for its forms.
struct Viewer {
    email: String,
    role_name: &'static str,
    csrf: String,
}

impl Viewer {
    fn of(session: &Session, t: &'static Texts) -> Viewer {
        Viewer {
            email: session.user.email.clone(),
            role_name: t.roles[match session.user.role {
                Role::Admin => 0,
                Role::Operator => 1,
                Role::Analyst => 2,
                Role::RightsHolder => 3,
            }],
            csrf: session.csrf_token.clone(),
        }
    }
}

/// A logged-in visitor: their session and the texts of their language. A page that needs a
/// login takes it as an argument; without a live session the request is answered with a
/// redirect to `/login` before the page runs.
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

/// 404 for what is missing or not the visitor's (the same answer, so that another tenant's
/// ids reveal nothing), else a failure.
fn not_found_or_failure(error: copytrace_service::ServiceError) -> Response {
    if error.kind() == copytrace_service::ErrorKind::NotFound {
        StatusCode::NOT_FOUND.into_response()
    } else {
        failure(error)
    }
}

/// One bar of the dashboard's chart.
struct Bar {
    day: String,
    new_matches: u64,
    removals: u64,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    label: bool,
}

#[derive(Template)]
#[template(path = "web/dashboard.html")]
struct DashboardPage {
    t: &'static Texts,
    viewer: Viewer,
    holder: Option<String>,
    totals: Totals,
    days: Vec<Bar>,
    any_matches: bool,
    chart_width: u32,
    works: Vec<WorkLine>,
    sites: Vec<SiteLine>,
}

async fn dashboard(State(state): State<WebState>, Visitor { session, t }: Visitor) -> Response {
    match dashboard_page(&state, &session, t).await {
        Ok(page_data) => page(page_data),
        Err(error) => failure(error),
    }
}

/// The dashboard of `session`'s user: a rights holder's own copies, everyone's for staff, from
/// figures at most [`DashboardCache::ttl`] (plus one computation) old.
async fn dashboard_page(
    state: &WebState,
    session: &Session,
    t: &'static Texts,
) -> copytrace_service::Result<DashboardPage> {
    let (_, figures) = state
        .dashboard
        .figures(&state.store, session.user.rights_holder_id)
        .await?;
    let any_matches = figures.daily.iter().any(|d| d.new_matches > 0);
    let (days, chart_width) = bars(&figures.daily);
    Ok(DashboardPage {
        t,
        viewer: Viewer::of(session, t),
        holder: figures.holder.clone(),
        totals: figures.totals.clone(),
        days,
        any_matches,
        chart_width,
        works: figures.works.clone(),
        sites: figures.sites.clone(),
    })
}

/// Days the dashboard's chart spans, ending today.
const CHART_DAYS: i64 = 30;

/// Bars of new matches for each of the last [`CHART_DAYS`] days (days without any are empty
/// bars, so the axis is always a month), scaled to 120 units of height; returns them and the
/// chart's width.
fn bars(daily: &[copytrace_store::DailyStats]) -> (Vec<Bar>, u32) {
    let today = Utc::now().date_naive();
    let days: Vec<(String, u64, u64)> = (0..CHART_DAYS)
        .rev()
        .map(|back| {
            let day = (today - chrono::Duration::days(back))
                .format("%Y-%m-%d")
                .to_string();
            let found = daily.iter().find(|d| d.day == day);
            (
                day,
                found.map_or(0, |d| d.new_matches),
                found.map_or(0, |d| d.removals),
            )
        })
        .collect();
    let highest = days.iter().map(|d| d.1).max().unwrap_or(0).max(1);
    let width = 18;
    let bars = days
        .into_iter()
        .enumerate()
        .map(|(i, (day, new_matches, removals))| {
            let height = ((new_matches as f64 / highest as f64) * 120.0).round() as u32;
            Bar {
                day,
                new_matches,
                removals,
                x: i as u32 * (width + 4),
                y: 122 - height,
                width,
                height,
                label: i % 7 == 0,
            }
        })
        .collect();
    (bars, CHART_DAYS as u32 * (width + 4))
}

/// Works shown on one page of the works list.
const WORKS_PER_PAGE: usize = 50;

struct WorkRowView {
    id: i64,
    title: String,
    external_id: String,
    chapters: u32,
    pages: u64,
    sites: u64,
}

#[derive(Template)]
#[template(path = "web/works.html")]
struct WorksPage {
    t: &'static Texts,
    viewer: Viewer,
    query: String,
    works: Vec<WorkRowView>,
    total: usize,
    page: usize,
    pages: usize,
}

#[derive(Deserialize)]
struct WorksQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<usize>,
}

/// The library's works (a rights holder's own), filtered by title or identifier, a page at a
/// time, with how many pages and sites copy each.
async fn works_page(
    State(state): State<WebState>,
    Visitor { session, t }: Visitor,
    axum::extract::Query(query): axum::extract::Query<WorksQuery>,
) -> Response {
    let store = state.store.as_ref();
    let holder = session.user.rights_holder_id;
    let listed = async {
        let works = copytrace_service::library::list_works(store, holder).await?;
        let filter = StatsFilter {
            rights_holder_id: holder,
            reviews: MatchFilter::reported().reviews,
            ..StatsFilter::default()
        };
        let copies = copytrace_service::stats::works(store, &filter, None).await?;
        Ok::<_, copytrace_service::ServiceError>((works, copies))
    };
    let (works, copies) = match listed.await {
        Ok(found) => found,
        Err(error) => return failure(error),
    };
    let needle = query.q.trim().to_lowercase();
    let matching: Vec<_> = works
        .into_iter()
        .filter(|w| {
            needle.is_empty()
                || w.title.to_lowercase().contains(&needle)
                || w.external_id.to_lowercase().contains(&needle)
        })
        .collect();
    let total = matching.len();
    let pages = total.div_ceil(WORKS_PER_PAGE).max(1);
    let page_number = query.page.unwrap_or(1).clamp(1, pages);
    let works = matching
        .into_iter()
        .skip((page_number - 1) * WORKS_PER_PAGE)
        .take(WORKS_PER_PAGE)
        .map(|w| {
            let found = copies.iter().find(|c| c.stats.work_id == w.id);
            WorkRowView {
                id: w.id,
                title: w.title,
                external_id: w.external_id,
                chapters: w.chapter_count,
                pages: found.map_or(0, |c| c.stats.pages),
                sites: found.map_or(0, |c| c.stats.sites),
            }
        })
        .collect();
    page(WorksPage {
        t,
        viewer: Viewer::of(&session, t),
        query: query.q,
        works,
        total,
        page: page_number,
        pages,
    })
}

/// A match as pages show it: its figures formatted, and whether its page URL may be a link
/// (only `http` and `https`: a crawled URL is never trusted as a `javascript:` link).
struct MatchRowView {
    id: i64,
    page_url: String,
    linkable: bool,
    score: String,
    coverage: String,
    first_seen: String,
    status: &'static str,
    review: &'static str,
}

impl MatchRowView {
    fn of(m: &copytrace_store::MatchRecord) -> MatchRowView {
        MatchRowView {
            id: m.id,
            linkable: m.page_url.starts_with("http://") || m.page_url.starts_with("https://"),
            page_url: m.page_url.clone(),
            score: format!("{:.2}", m.score),
            coverage: format!("{:.0}", m.coverage * 100.0),
            first_seen: m.first_seen.format("%Y-%m-%d %H:%M").to_string(),
            status: m.status.as_str(),
            review: m.review.as_str(),
        }
    }
}

#[derive(Template)]
#[template(path = "web/work.html")]
struct WorkPage {
    t: &'static Texts,
    viewer: Viewer,
    title: String,
    external_id: String,
    holder: String,
    chapters: u32,
    matches: Vec<MatchRowView>,
}

/// One work and its reported copies. Another holder's work answers 404, as a missing one does.
async fn work_page(
    State(state): State<WebState>,
    Visitor { session, t }: Visitor,
    Path(id): Path<i64>,
) -> Response {
    let store = state.store.as_ref();
    let (work, holder) = match copytrace_service::library::work_summary(store, id).await {
        Ok(found) => found,
        Err(error) => return not_found_or_failure(error),
    };
    if session
        .user
        .rights_holder_id
        .is_some_and(|own| own != work.rights_holder_id)
    {
        return StatusCode::NOT_FOUND.into_response();
    }
    let filter = MatchFilter {
        work_id: Some(id),
        rights_holder_id: session.user.rights_holder_id,
        ..MatchFilter::reported()
    };
    let records = match copytrace_service::export::matches(store, &filter).await {
        Ok(records) => records,
        Err(error) => return failure(error),
    };
    let matches = records.iter().map(MatchRowView::of).collect();
    page(WorkPage {
        t,
        viewer: Viewer::of(&session, t),
        title: work.title,
        external_id: work.external_id,
        holder,
        chapters: work.chapter_count,
        matches,
    })
}

/// A run of characters of a passage, and whether it differs from the other side.
struct Segment {
    text: String,
    changed: bool,
}

/// One aligned passage with its differences marked on both sides.
struct PairView {
    page_range: String,
    work_range: String,
    page: Vec<Segment>,
    work: Vec<Segment>,
}

/// Marks, character by character, what the page changed: on the work's side what it lacks, on
/// the page's side what it substituted or inserted.
fn diff_pair(pair: &copytrace_service::evidence::PassagePair) -> PairView {
    use similar::{ChangeTag, TextDiff};
    let work = pair.work.as_deref().unwrap_or("");
    let copy = pair.page.as_deref().unwrap_or("");
    let mut work_side: Vec<Segment> = Vec::new();
    let mut page_side: Vec<Segment> = Vec::new();
    let push = |side: &mut Vec<Segment>, text: &str, changed: bool| match side.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => side.push(Segment {
            text: text.to_owned(),
            changed,
        }),
    };
    let diff = TextDiff::from_chars(work, copy);
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push(&mut work_side, text, false);
                push(&mut page_side, text, false);
            }
            ChangeTag::Delete => push(&mut work_side, text, true),
            ChangeTag::Insert => push(&mut page_side, text, true),
        }
    }
    PairView {
        page_range: format!("{}–{}", pair.page_range.0, pair.page_range.1),
        work_range: format!("{}–{}", pair.work_range.0, pair.work_range.1),
        page: page_side,
        work: work_side,
    }
}

#[derive(Template)]
#[template(path = "web/match.html")]
struct MatchPage {
    t: &'static Texts,
    viewer: Viewer,
    m: MatchRowView,
    work_id: i64,
    work_title: String,
    work_external_id: String,
    pairs: Vec<PairView>,
}

/// One match with its passages side by side and the differences marked. Another holder's
/// match answers 404, as a missing one does.
async fn match_page(
    State(state): State<WebState>,
    Visitor { session, t }: Visitor,
    Path(id): Path<i64>,
) -> Response {
    let evidence = match copytrace_service::evidence::match_evidence(
        state.store.as_ref(),
        id,
        session.user.rights_holder_id,
    )
    .await
    {
        Ok(evidence) => evidence,
        Err(error) => return not_found_or_failure(error),
    };
    let record = evidence.record;
    page(MatchPage {
        t,
        viewer: Viewer::of(&session, t),
        m: MatchRowView::of(&record),
        work_id: record.work_id,
        work_title: record.work_title,
        work_external_id: record.work_external_id,
        pairs: evidence.pairs.iter().map(diff_pair).collect(),
    })
}
