//! Who is calling: a bearer API token or the web's session cookie, and the CSRF header the
//! cookie needs on state-changing requests.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum_extra::extract::CookieJar;
use copytrace_service::accounts;
use copytrace_store::{Id, User};

use super::{ApiError, ApiResult};
use crate::web::{Area, WebState};

/// The header carrying the session's CSRF token on state-changing requests made with the
/// session cookie.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// An authenticated caller of the API. Taking it as a handler's first argument answers 401
/// before the handler runs when there are no live credentials, and 403 when a cookie-borne
/// request that changes something lacks the session's CSRF token.
pub(crate) struct Caller {
    /// The user, as the token or the session has it.
    pub user: User,
}

impl FromRequestParts<WebState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &WebState) -> ApiResult<Caller> {
        let store = state.store.as_ref();
        if let Some(value) = parts.headers.get(header::AUTHORIZATION) {
            let token = value
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
                .ok_or_else(|| {
                    ApiError::unauthorized("the Authorization header is not `Bearer ct_…`")
                })?;
            return match accounts::api_user(store, token)
                .await
                .map_err(ApiError::service)?
            {
                Some(user) => Ok(Caller { user }),
                None => Err(ApiError::unauthorized(
                    "the API token is unknown or revoked",
                )),
            };
        }
        let jar = CookieJar::from_headers(&parts.headers);
        let session = crate::web::current_session(state, &jar)
            .await
            // Already logged by the web's session lookup.
            .map_err(|_| {
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error",
                )
            })?
            .ok_or_else(|| {
                ApiError::unauthorized(
                    "log in (session cookie) or send an API token (Authorization: Bearer ct_…)",
                )
            })?;
        let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
        if !safe {
            let sent = parts
                .headers
                .get(CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if sent.is_empty() || sent != session.csrf_token {
                return Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    "a request with the session cookie carries the session's CSRF token in the \
                     X-CSRF-Token header",
                ));
            }
        }
        Ok(Caller { user: session.user })
    }
}

impl Caller {
    /// Nothing when the caller's role may use `area`, else 403.
    pub fn enter(&self, area: Area) -> ApiResult<()> {
        if area.allows(self.user.role) {
            Ok(())
        } else {
            Err(ApiError::forbidden())
        }
    }

    /// Who acts, as histories record it: the API and the caller's e-mail.
    pub fn actor(&self) -> String {
        format!("api:{}", self.user.email)
    }

    /// The rights holder whose data alone this caller may see; `None` for staff.
    pub fn tenant(&self) -> Option<Id> {
        self.user.rights_holder_id
    }

    /// Nothing when work `id` exists and the caller may see it, else 404 (the same for both).
    pub async fn check_work(&self, state: &WebState, id: Id) -> ApiResult<()> {
        let details = copytrace_service::library::work_details(state.store.as_ref(), id)
            .await
            .map_err(ApiError::service)?;
        if self
            .tenant()
            .is_some_and(|own| own != details.work.rights_holder_id)
        {
            return Err(ApiError::not_found());
        }
        Ok(())
    }

    /// Nothing when a filter's work (as typed; nothing typed is fine) is one the caller may
    /// see, else 404. Text that is not an id is left for the filter to refuse.
    pub async fn check_filter_work(&self, state: &WebState, work: &str) -> ApiResult<()> {
        match (self.tenant(), work.trim().parse::<Id>()) {
            (Some(_), Ok(id)) => self.check_work(state, id).await,
            _ => Ok(()),
        }
    }
}
