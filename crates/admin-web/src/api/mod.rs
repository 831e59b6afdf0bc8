//! The JSON API: the admin web's resources under `/api/v1/`, for scripts and other programs,
//! with the web's authorization, and its OpenAPI document at `/api/openapi.json`.
//!
//! **Authentication.** A request carries either a per-user API token
//! (`Authorization: Bearer ct_…`, made by `copytrace user token add`) or the admin web's
//! session cookie. A token acts as its user; it needs no CSRF token, because a browser never
//! adds it to a request by itself. A request authenticated by the cookie is one a browser may
//! have been tricked into sending, so every state-changing one (any method but GET and HEAD)
//! must carry the session's CSRF token in the `X-CSRF-Token` header, which a cross-site page
//! cannot read; without it the answer is 403 and nothing changes. An `Authorization` header
//! that is not a live token is 401 even when a cookie is present: a script with a revoked
//! token should hear so, not fall back to someone's browser session.
//!
//! **Authorization** is the web's, decided by the same code: each endpoint belongs to a
//! [`crate::web::Area`], and a role outside it gets 403. A rights holder sees only its own works,
//! matches, notices and statistics; another holder's object is 404, as a missing one is, with
//! the same body, so ids reveal nothing.
//!
//! **Answers.** Errors are `{"error": "…"}` with the status saying what kind: 400 bad input
//! (naming the field), 401 no or bad credentials (never a redirect to the login page), 403 role
//! or CSRF, 404 missing or not the caller's, 500 a fault (logged, not shown). Lists of works and
//! matches are paged with `page` (from 1) and `per_page` (1 to [`MAX_PER_PAGE`]); works say their
//! `total`, matches whether `more` follow (counting millions costs more than a page). Like the web, the API calls the service layer and writes no SQL.

mod auth;
mod doc;
mod files;
mod holders;
mod library;
mod operations;
mod reviews;
mod schema;
mod sending;
mod sites;

use axum::Json;
use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;

use crate::web::WebState;
pub(crate) use auth::Caller;
pub use doc::openapi;
use schema::ErrorBody;

/// Most items one page of a list holds.
pub const MAX_PER_PAGE: u32 = 200;
/// Items on a page when `per_page` is not given.
pub const DEFAULT_PER_PAGE: u32 = 50;

/// Every route of the API, as `(method, path)` in the OpenAPI document's notation: what
/// [`routes`] serves, and what the document must describe (a test holds them to each other).
pub const ROUTES: [(&str, &str); 46] = [
    ("get", "/api/openapi.json"),
    ("get", "/api/v1/me"),
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
    ("delete", "/api/v1/schedules/{name}"),
    ("post", "/api/v1/schedules/{name}/pause"),
    ("post", "/api/v1/schedules/{name}/resume"),
    ("post", "/api/v1/schedules/{name}/run"),
    ("get", "/api/v1/runs"),
    ("get", "/api/v1/tokens"),
    ("get", "/api/v1/holders/{id}/profile"),
    ("post", "/api/v1/holders/{id}/profile"),
    ("get", "/api/v1/holders/{id}/licensed-hosts"),
    ("post", "/api/v1/holders/{id}/licensed-hosts"),
    ("delete", "/api/v1/holders/{id}/licensed-hosts/{host}"),
    ("get", "/api/v1/holders/{id}/alerts"),
    ("post", "/api/v1/holders/{id}/alerts"),
    ("delete", "/api/v1/holders/{id}/alerts/{alert_id}"),
    ("get", "/api/v1/sites"),
    ("get", "/api/v1/sites/{host}/contacts"),
    ("post", "/api/v1/sites/{host}/contacts"),
    ("delete", "/api/v1/sites/{host}/contacts/{email}"),
    ("post", "/api/v1/notices/{id}/send"),
    ("post", "/api/v1/notices/send-drafts"),
    ("get", "/api/v1/notices/{id}/history"),
    ("get", "/api/v1/exports/{table}"),
    ("post", "/api/v1/matches/{id}/evidence"),
    ("post", "/api/v1/works"),
    ("get", "/api/v1/imports/{id}"),
    ("get", "/api/v1/stats/holders"),
    ("get", "/api/v1/stats/time-to-piracy"),
    ("get", "/api/v1/holders/{id}/signature-image"),
    ("put", "/api/v1/holders/{id}/signature-image"),
    ("delete", "/api/v1/holders/{id}/signature-image"),
];

/// The API's routes, merged into the web's router by [`crate::web::router`].
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/api/openapi.json", get(doc::document))
        .route("/api/v1/me", get(operations::me))
        .route("/api/v1/works", get(library::works).post(files::upload))
        .route("/api/v1/imports/{id}", get(files::import))
        .route("/api/v1/exports/{table}", get(files::export))
        .route("/api/v1/matches/{id}/evidence", post(files::evidence))
        .route("/api/v1/stats/holders", get(library::holder_stats))
        .route("/api/v1/stats/time-to-piracy", get(library::time_to_piracy))
        .route("/api/v1/sites", get(sites::sites_list))
        .route(
            "/api/v1/sites/{host}/contacts",
            get(sites::contacts_list).post(sites::add_contact),
        )
        .route(
            "/api/v1/sites/{host}/contacts/{email}",
            axum::routing::delete(sites::remove_contact),
        )
        .route("/api/v1/notices/send-drafts", post(sending::send_drafts))
        .route("/api/v1/notices/{id}/send", post(sending::send))
        .route("/api/v1/notices/{id}/history", get(sending::history))
        .route(
            "/api/v1/holders/{id}/licensed-hosts",
            get(holders::licences).post(holders::add_licence),
        )
        .route(
            "/api/v1/holders/{id}/licensed-hosts/{host}",
            axum::routing::delete(holders::remove_licence),
        )
        .route(
            "/api/v1/holders/{id}/alerts",
            get(holders::alerts_list).post(holders::add_alert),
        )
        .route(
            "/api/v1/holders/{id}/alerts/{alert_id}",
            axum::routing::delete(holders::remove_alert),
        )
        .route("/api/v1/works/{id}", get(library::work))
        .route("/api/v1/matches", get(reviews::matches))
        .route("/api/v1/matches/decide", post(reviews::decide))
        .route("/api/v1/matches/{id}", get(reviews::match_detail))
        .route("/api/v1/stats/works", get(library::work_stats))
        .route("/api/v1/stats/sites", get(library::site_stats))
        .route("/api/v1/stats/daily", get(library::daily_stats))
        .route(
            "/api/v1/notices",
            get(reviews::notices).post(reviews::create_notice),
        )
        .route("/api/v1/notices/{id}", get(reviews::notice))
        .route("/api/v1/notices/{id}/status", post(reviews::notice_status))
        .route(
            "/api/v1/schedules",
            get(operations::schedules).post(operations::create_schedule),
        )
        .route(
            "/api/v1/schedules/{name}",
            axum::routing::delete(operations::delete_schedule),
        )
        .route(
            "/api/v1/schedules/{name}/pause",
            post(operations::pause_schedule),
        )
        .route(
            "/api/v1/schedules/{name}/resume",
            post(operations::resume_schedule),
        )
        .route(
            "/api/v1/schedules/{name}/run",
            post(operations::run_schedule),
        )
        .route("/api/v1/runs", get(operations::runs))
        .route("/api/v1/tokens", get(operations::tokens))
        .route(
            "/api/v1/holders/{id}/profile",
            get(holders::profile).post(holders::set_profile),
        )
        .route(
            "/api/v1/holders/{id}/signature-image",
            get(holders::signature_image)
                .put(holders::set_signature_image)
                .delete(holders::remove_signature_image),
        )
        // Anything else under the API is a JSON 404, not the web's empty one.
        .route("/api/{*rest}", axum::routing::any(no_such_endpoint))
}

async fn no_such_endpoint() -> ApiError {
    ApiError::not_found()
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 401: no credentials, or ones that are not live.
    fn unauthorized(message: &str) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 403: the caller's role may not do this.
    fn forbidden() -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "your role may not do this")
    }

    /// 404, for what is missing and for what is not the caller's alike.
    fn not_found() -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not found")
    }

    /// 400, saying what is wrong with the request.
    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A service failure: 404 for a missing thing, 400 with the reason for refused input, else
    /// 500 (logged; the caller learns only that it failed).
    fn service(error: copytrace_service::ServiceError) -> ApiError {
        use copytrace_service::ErrorKind;
        match error.kind() {
            ErrorKind::NotFound => ApiError::not_found(),
            ErrorKind::Invalid => ApiError::bad_request(copytrace_service::error::one_line(&error)),
            ErrorKind::Internal => {
                tracing::error!(
                    error = %copytrace_service::error::one_line(&error),
                    "an API request failed"
                );
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"copytrace\""),
            );
        }
        response
    }
}

/// Handler result.
type ApiResult<T> = Result<T, ApiError>;

/// A JSON body whose refusal (not JSON, wrong fields) is a JSON error too.
pub(crate) struct Body<T>(T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        Json::<T>::from_request(request, state)
            .await
            .map(|Json(value)| Body(value))
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))
    }
}

/// A query string whose refusal is a JSON error.
pub(crate) struct Query<T>(T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        axum_extra::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum_extra::extract::Query(value)| Query(value))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}

/// A path's id, whose refusal (not a number) is a JSON 404: no such object.
pub(crate) struct IdPath(copytrace_store::Id);

impl<S: Send + Sync> FromRequestParts<S> for IdPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        axum::extract::Path::<copytrace_store::Id>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(id)| IdPath(id))
            .map_err(|_| ApiError::not_found())
    }
}

/// `page` and `per_page` as asked (text, so that a wrong one is a clear 400): the page number
/// from 1 and the page size.
fn paging(page: Option<&str>, per_page: Option<&str>) -> ApiResult<(u64, u32)> {
    let page = match page.map(str::trim) {
        None | Some("") => 1,
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ApiError::bad_request(format!("page {text:?}: a number from 1")))?,
    };
    let per_page = match per_page.map(str::trim) {
        None | Some("") => DEFAULT_PER_PAGE,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_PER_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "per_page {text:?}: a number from 1 to {MAX_PER_PAGE}"
                ))
            })?,
    };
    Ok((page, per_page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_defaults_and_refuses_what_is_out_of_range() {
        assert_eq!(paging(None, None).unwrap(), (1, DEFAULT_PER_PAGE));
        assert_eq!(paging(Some("3"), Some("200")).unwrap(), (3, 200));
        for (page, per_page) in [
            (Some("0"), None),
            (Some("x"), None),
            (None, Some("0")),
            (None, Some("201")),
            (None, Some("-1")),
        ] {
            let refused = paging(page, per_page).unwrap_err();
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{page:?} {per_page:?}"
            );
        }
    }
}
