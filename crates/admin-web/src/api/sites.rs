//! Sites and their contacts (issue 40): everyone may read sites (a rights holder only those
//! holding its copies or notices, counted for it alone; another is 404), operators and admins
//! add and remove the contacts notices are mailed to.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::Utc;
use copytrace_service::contacts::{self, SiteContacts};
use copytrace_service::sites;
use copytrace_store::{ContactKind, ContactSource};

use super::schema::{
    ContactItem, ErrorBody, IcpItem, NewContactRequest, SiteContactsBody, SiteItem,
};
use super::{ApiError, ApiResult, Body, Caller};
use crate::web::{Area, WebState};

fn body(known: SiteContacts) -> SiteContactsBody {
    SiteContactsBody {
        host: known.host,
        contacts: known
            .contacts
            .into_iter()
            .map(|c| ContactItem {
                email: c.email,
                kind: c.kind.as_str().to_owned(),
                source: match c.source {
                    ContactSource::Found => "found",
                    ContactSource::Operator => "operator",
                }
                .to_owned(),
                found_on: c.found_on,
                created_at: c.created_at,
            })
            .collect(),
        icp: known.icp.map(|icp| IcpItem {
            icp_number: icp.icp_number,
            found_on: icp.found_on,
            found_at: icp.found_at,
        }),
    }
}

/// The sites the caller may see, most copies first.
#[utoipa::path(
    get,
    path = "/api/v1/sites",
    tag = "sites",
    responses(
        (status = 200, description = "Every crawled site (staff), or those with the caller's copies or notices", body = [SiteItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
    )
)]
pub(super) async fn sites_list(
    caller: Caller,
    State(state): State<WebState>,
) -> ApiResult<Json<Vec<SiteItem>>> {
    caller.enter(Area::Sites)?;
    let sites = sites::overview(state.store.as_ref(), caller.tenant())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        sites
            .into_iter()
            .map(|s| SiteItem {
                host: s.host,
                copies: s.copies,
                removed: s.removed,
                notice_sent: s.notice_sent,
                removal_rate: s.removal_rate,
                first_seen: s.first_seen,
                last_seen: s.last_seen,
                crawled_since: s.crawled_since,
                notices: s.notices as u64,
            })
            .collect(),
    ))
}

/// The host a path names, if the caller may see it: any for staff; for a rights holder only
/// one holding its copies or notices (404 otherwise, as for an unknown site).
async fn visible_host(caller: &Caller, state: &WebState, host: &str) -> ApiResult<String> {
    caller.enter(Area::Sites)?;
    let host = contacts::parse_host(host).map_err(ApiError::service)?;
    if caller.tenant().is_some() {
        let own = sites::overview(state.store.as_ref(), caller.tenant())
            .await
            .map_err(ApiError::service)?;
        if !own.iter().any(|s| s.host == host) {
            return Err(ApiError::not_found());
        }
    }
    Ok(host)
}

/// A site's contacts (the order notices use them) and ICP number.
#[utoipa::path(
    get,
    path = "/api/v1/sites/{host}/contacts",
    tag = "sites",
    params(("host" = String, Path, description = "The site's host, e.g. pirate.example")),
    responses(
        (status = 200, description = "Its contacts", body = SiteContactsBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 400, description = "Not a host name", body = ErrorBody),
        (status = 404, description = "A rights holder: a site without the caller's copies or notices", body = ErrorBody),
    )
)]
pub(super) async fn contacts_list(
    caller: Caller,
    State(state): State<WebState>,
    Path(host): Path<String>,
) -> ApiResult<Json<SiteContactsBody>> {
    let host = visible_host(&caller, &state, &host).await?;
    let known = contacts::list(state.store.as_ref(), &host)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(body(known)))
}

/// Adds an operator's contact to a site (or makes a found one theirs); the address is checked
/// as mails are sent to it. Adding it again changes nothing.
#[utoipa::path(
    post,
    path = "/api/v1/sites/{host}/contacts",
    tag = "sites",
    params(("host" = String, Path, description = "The site's host")),
    request_body = NewContactRequest,
    responses(
        (status = 201, description = "The site's contacts as they now are", body = SiteContactsBody),
        (status = 400, description = "Not an e-mail address, not a host, or an unknown kind", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins edit contacts; or a cookie without X-CSRF-Token", body = ErrorBody),
    )
)]
pub(super) async fn add_contact(
    caller: Caller,
    State(state): State<WebState>,
    Path(host): Path<String>,
    Body(request): Body<NewContactRequest>,
) -> ApiResult<(StatusCode, Json<SiteContactsBody>)> {
    caller.enter(Area::SiteContacts)?;
    let kind = match request.kind.as_deref().map(str::trim) {
        None | Some("") => ContactKind::Copyright,
        Some(kind) => ContactKind::parse(kind).ok_or_else(|| {
            ApiError::bad_request(format!(
                "kind {kind:?}: `copyright`, `general`, `abuse` or `cdn`"
            ))
        })?,
    };
    let known = contacts::add(
        state.store.as_ref(),
        &host,
        &request.email,
        kind,
        Utc::now(),
    )
    .await
    .map_err(ApiError::service)?;
    Ok((StatusCode::CREATED, Json(body(known))))
}

/// Removes a contact of a site (a found one until a crawl finds it on the site again).
#[utoipa::path(
    delete,
    path = "/api/v1/sites/{host}/contacts/{email}",
    tag = "sites",
    params(
        ("host" = String, Path, description = "The site's host"),
        ("email" = String, Path, description = "The address"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "Not a host", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins edit contacts; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "The site has no such contact", body = ErrorBody),
    )
)]
pub(super) async fn remove_contact(
    caller: Caller,
    State(state): State<WebState>,
    Path((host, email)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    caller.enter(Area::SiteContacts)?;
    contacts::remove(state.store.as_ref(), &host, &email)
        .await
        .map_err(ApiError::service)?;
    Ok(StatusCode::NO_CONTENT)
}
