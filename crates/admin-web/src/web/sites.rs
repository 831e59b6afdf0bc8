//! Sites (issue 40): the list of sites with their copies, removal rates, notices and first and
//! last seen, and one site's page with the same per host, its newest copies, the notices sent
//! to it, and its contacts (found on its own pages, with where, or added by an operator) and
//! ICP number.
//!
//! Everyone may look ([`Area::Sites`]): a rights holder sees only the sites holding its copies,
//! counted for it alone (another site is 404, as an unknown one is); staff see every site, and
//! any host's page (so a contact can be added before a site is crawled). Only operators and
//! admins add and remove contacts ([`Area::SiteContacts`]), through
//! `copytrace_service::contacts`, which checks each address as mails are sent to it.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use chrono::Utc;
use copytrace_analytics::stats::SiteGrouping;
use copytrace_service::contacts::{self, SiteContacts};
use copytrace_service::sites::{self, SiteSummary};
use copytrace_store::{ContactKind, ContactSource};
use serde::Deserialize;

use super::filters::FilterQuery;
use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/sites", get(sites_page))
        .route("/sites/{site}", get(site_page))
        .route("/sites/{site}/contacts", post(add_contact))
        .route("/sites/{site}/contacts/remove", post(remove_contact))
}

/// Whether a URL read from a crawled page may be a link: only `http` and `https`.
fn linkable(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

fn day(at: Option<chrono::DateTime<Utc>>) -> String {
    at.map(|at| at.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

/// A row of the site list.
struct SiteRowView {
    host: String,
    copies: u64,
    removed: u64,
    removal_percent: String,
    notices: usize,
    first_seen: String,
    last_seen: String,
    crawled_since: String,
    /// Contacts known (counted for the rows shown only).
    contacts: usize,
}

impl SiteRowView {
    fn of(site: &SiteSummary) -> SiteRowView {
        SiteRowView {
            host: site.host.clone(),
            copies: site.copies,
            removed: site.removed,
            removal_percent: format!("{:.0}", site.removal_rate * 100.0),
            notices: site.notices,
            first_seen: day(site.first_seen),
            last_seen: day(site.last_seen),
            crawled_since: day(site.crawled_since),
            contacts: 0,
        }
    }
}

#[derive(Template)]
#[template(path = "web/sites.html")]
struct SitesPage {
    t: &'static Texts,
    viewer: Viewer,
    sites: Vec<SiteRowView>,
    pager: Pager,
    list_path: &'static str,
    /// Staff: the form to open any host's page.
    staff: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SitesQuery {
    #[serde(flatten)]
    list: ListQuery,
    /// A host to open (the "open a site" form).
    host: String,
}

/// The sites the visitor may see, most copies first, searchable and paged.
async fn sites_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<SitesQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Sites)?;
    if !query.host.trim().is_empty() {
        let host = contacts::parse_host(&query.host)
            .map_err(|error| visitor.bad_request(&copytrace_service::error::one_line(&error)))?;
        let path = format!(
            "/sites/{}",
            url::form_urlencoded::byte_serialize(host.as_bytes()).collect::<String>()
        );
        return Ok(Redirect::to(&path).into_response());
    }
    let store = state.store.as_ref();
    let rows: Vec<SiteRowView> = sites::overview(store, visitor.tenant())
        .await
        .map_err(failure)?
        .iter()
        .map(SiteRowView::of)
        .filter(|row| query.list.keeps(&[&row.host]))
        .collect();
    let (mut sites, pager) = page_of(rows, &query.list);
    for row in &mut sites {
        row.contacts = contacts::list(store, &row.host)
            .await
            .map(|known| known.contacts.len())
            .unwrap_or(0);
    }
    Ok(page(SitesPage {
        t: visitor.t,
        viewer: visitor.viewer(),
        sites,
        pager,
        list_path: "/sites",
        staff: visitor.tenant().is_none(),
    }))
}

/// A host's copies as the site page lists them.
struct HostLine {
    host: String,
    copies: u64,
    pages: u64,
    works: u64,
    removed: u64,
    removal_percent: String,
    median_removal: String,
    first_seen: String,
    last_seen: String,
}

/// A contact as the site page shows it.
struct ContactView {
    email: String,
    kind: &'static str,
    /// Found on one of the site's pages (`found_on`), or added by a person.
    found: bool,
    found_on: String,
    found_on_link: bool,
    added: String,
}

/// A notice to the site as the site page lists it.
struct NoticeLine {
    id: i64,
    status: &'static str,
    created: String,
    copies: usize,
    removed: u64,
}

#[derive(Template)]
#[template(path = "web/site.html")]
struct SitePage {
    t: &'static Texts,
    viewer: Viewer,
    site: String,
    site_query: String,
    hosts: Vec<HostLine>,
    /// Whether the visitor may read matches (operators count copies only).
    show_matches: bool,
    matches: Vec<super::MatchRowView>,
    /// Whether the site has more copies than the page shows.
    more_matches: bool,
    notices: Vec<NoticeLine>,
    /// Whether the visitor may open notices.
    notice_links: bool,
    contacts: Vec<ContactView>,
    /// The ICP number: the number, the page it was read on (and whether it may be a link),
    /// when.
    icp: Option<(String, String, bool, String)>,
    /// Whether the visitor may add and remove contacts; the kinds to choose from.
    may_edit: bool,
    kinds: Vec<(&'static str, &'static str)>,
    /// The add form as posted, shown again with the problem.
    email: String,
    problem: Option<String>,
    saved: bool,
}

/// Copies shown on a site's page (the match list has them all).
const SITE_MATCHES: u32 = 20;

#[derive(Deserialize, Default)]
#[serde(default)]
struct SiteQuery {
    saved: String,
}

/// One site (a host and its subdomains): its copies per host with the removal rate and when
/// they were first and last seen, its newest copies, the notices sent to it, and its contacts.
async fn site_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(site): Path<String>,
    Query(query): Query<SiteQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Sites)?;
    let form = (String::new(), None, !query.saved.is_empty());
    site_view(&state, &visitor, &site, form, StatusCode::OK).await
}

async fn site_view(
    state: &WebState,
    visitor: &Visitor,
    site: &str,
    (email, problem, saved): (String, Option<String>, bool),
    status: StatusCode,
) -> Result<Response, Response> {
    let t = visitor.t;
    let store = state.store.as_ref();
    let Ok(site) = contacts::parse_host(site) else {
        return Err(visitor.not_found());
    };
    let query = FilterQuery {
        site: site.clone(),
        ..FilterQuery::default()
    };
    let filter = query
        .stats_filter(visitor.tenant(), t)
        .map_err(|problem| visitor.bad_request(&problem))?;
    let hosts: Vec<HostLine> =
        copytrace_service::stats::sites(store, &filter, SiteGrouping::Host, None)
            .await
            .map_err(failure)?
            .into_iter()
            .map(|r| HostLine {
                host: r.site,
                copies: r.copies,
                pages: r.pages,
                works: r.works,
                removed: r.removed,
                removal_percent: format!("{:.0}", r.removal_rate * 100.0),
                median_removal: r
                    .median_hours_to_removal
                    .map(|h| format!("{h:.0} h"))
                    .unwrap_or_default(),
                first_seen: day(Some(r.first_seen)),
                last_seen: day(Some(r.last_seen)),
            })
            .collect();
    let show_matches = Area::Reports.allows(visitor.session.user.role);
    let listing = copytrace_service::export::match_listing(
        store,
        &copytrace_store::MatchFilter::from(&filter),
        copytrace_store::ListingOrder::Newest,
        0,
        if show_matches { SITE_MATCHES } else { 1 },
    )
    .await
    .map_err(failure)?;
    let notices: Vec<NoticeLine> = copytrace_service::notices::list(store, visitor.tenant())
        .await
        .map_err(failure)?
        .into_iter()
        .filter(|n| n.site == site || n.site.ends_with(&format!(".{site}")))
        .map(|n| NoticeLine {
            id: n.id,
            status: t.code(n.status.as_str()),
            created: n.created_at.format("%Y-%m-%d").to_string(),
            copies: n.match_ids.len(),
            removed: n.removed,
        })
        .collect();
    // A rights holder learns nothing of a site without its copies or notices, not even that
    // it is known.
    if visitor.tenant().is_some()
        && hosts.is_empty()
        && listing.matches.is_empty()
        && notices.is_empty()
    {
        return Err(visitor.not_found());
    }
    let known: SiteContacts = contacts::list(store, &site).await.map_err(failure)?;
    let contacts = known
        .contacts
        .iter()
        .map(|c| {
            let found_on = c.found_on.clone().unwrap_or_default();
            ContactView {
                email: c.email.clone(),
                kind: t.code(c.kind.as_str()),
                found: c.source == ContactSource::Found,
                found_on_link: linkable(&found_on),
                found_on,
                added: super::utc_seconds(c.created_at),
            }
        })
        .collect();
    let icp = known.icp.map(|icp| {
        let link = linkable(&icp.found_on);
        (
            icp.icp_number,
            icp.found_on,
            link,
            super::utc_seconds(icp.found_at),
        )
    });
    let kinds = [
        ContactKind::Copyright,
        ContactKind::General,
        ContactKind::Abuse,
        ContactKind::Cdn,
    ]
    .into_iter()
    .map(|k| (k.as_str(), t.code(k.as_str())))
    .collect();
    Ok((
        status,
        page(SitePage {
            t,
            viewer: visitor.viewer(),
            site_query: query.query_string(),
            site,
            hosts,
            show_matches,
            more_matches: listing.more,
            matches: if show_matches {
                listing
                    .matches
                    .iter()
                    .map(|m| super::MatchRowView::of(m, t))
                    .collect()
            } else {
                Vec::new()
            },
            notices,
            notice_links: Area::Notices.allows(visitor.session.user.role),
            contacts,
            icp,
            may_edit: Area::SiteContacts.allows(visitor.session.user.role),
            kinds,
            email,
            problem,
            saved,
        }),
    )
        .into_response())
}

#[derive(Deserialize)]
struct ContactForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    /// `copyright`, `general`, `abuse` or `cdn`.
    #[serde(default)]
    kind: String,
}

/// The path of a site's page.
fn site_path(site: &str) -> String {
    format!(
        "/sites/{}",
        url::form_urlencoded::byte_serialize(site.as_bytes()).collect::<String>()
    )
}

/// Adds an operator's contact to a site (or makes a found one theirs); a refused address
/// shows the page again with why (400) and stores nothing.
async fn add_contact(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(site): Path<String>,
    Form(form): Form<ContactForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::SiteContacts)?;
    visitor.check_form(&form.csrf)?;
    let Some(kind) = ContactKind::parse(&form.kind) else {
        return Err(visitor.bad_request(&format!("{:?}", form.kind)));
    };
    match contacts::add(state.store.as_ref(), &site, &form.email, kind, Utc::now()).await {
        Ok(known) => {
            Ok(Redirect::to(&format!("{}?saved=1", site_path(&known.host))).into_response())
        }
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            let problem = Some(copytrace_service::error::one_line(&error));
            site_view(
                &state,
                &visitor,
                &site,
                (form.email, problem, false),
                StatusCode::BAD_REQUEST,
            )
            .await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

/// Removes a contact of a site (a found one until a crawl finds it again).
async fn remove_contact(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(site): Path<String>,
    Form(form): Form<ContactForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::SiteContacts)?;
    visitor.check_form(&form.csrf)?;
    match contacts::remove(state.store.as_ref(), &site, &form.email).await {
        Ok(()) => Ok(Redirect::to(&site_path(&site)).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            Err(visitor.bad_request(&copytrace_service::error::one_line(&error)))
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}
