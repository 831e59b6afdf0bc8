//! Rights-holder profiles (issue 40): what a holder's takedown notices say about it. A rights
//! holder reads and edits its own profile only (another holder's is 404, as a missing one is);
//! an admin any holder's. Other roles have no business with notices (403).

use axum::Json;
use axum::extract::State;
use chrono::Utc;
use copytrace_service::holders::{self, HolderProfile, ProfileUpdate};
use copytrace_store::Id;

use super::schema::{ErrorBody, HolderProfileBody, HolderProfileRequest};
use super::{ApiError, ApiResult, Body, Caller, IdPath};
use crate::web::{Area, WebState};

/// The profile as the API shows it.
fn body(shown: HolderProfile) -> HolderProfileBody {
    let profile = shown.profile;
    let field = |f: fn(&copytrace_store::RightsHolderProfile) -> &Option<String>| {
        profile.as_ref().and_then(|p| f(p).clone())
    };
    HolderProfileBody {
        id: shown.holder.id,
        name: shown.holder.name.clone(),
        legal_name: field(|p| &p.legal_name),
        address: field(|p| &p.address),
        email: field(|p| &p.email),
        phone: field(|p| &p.phone),
        agent_name: field(|p| &p.agent_name),
        agent_role: field(|p| &p.agent_role),
        agent_contact: field(|p| &p.agent_contact),
        signature: field(|p| &p.signature),
        language: profile.as_ref().map(|p| p.language.clone()),
        updated_at: profile.as_ref().map(|p| p.updated_at),
    }
}

/// The holder `id` if the caller may see its profile: its own for a rights holder, any for
/// staff allowed into notices; 404 otherwise, as for a missing holder.
async fn visible(caller: &Caller, state: &WebState, id: Id) -> ApiResult<HolderProfile> {
    caller.enter(Area::Notices)?;
    if caller.tenant().is_some_and(|own| own != id) {
        return Err(ApiError::not_found());
    }
    let holder = holders::get(state.store.as_ref(), id)
        .await
        .map_err(ApiError::service)?;
    holders::profile(state.store.as_ref(), &holder.name)
        .await
        .map_err(ApiError::service)
}

/// A rights holder's profile.
#[utoipa::path(
    get,
    path = "/api/v1/holders/{id}/profile",
    tag = "notices",
    params(("id" = i64, Path, description = "The rights holder's id")),
    responses(
        (status = 200, description = "The profile (fields null until given)", body = HolderProfileBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn profile(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<HolderProfileBody>> {
    Ok(Json(body(visible(&caller, &state, id).await?)))
}

/// Changes a rights holder's profile: the fields given (an empty string clears one). Every
/// field is checked before anything is stored; a refusal names the field.
#[utoipa::path(
    post,
    path = "/api/v1/holders/{id}/profile",
    tag = "notices",
    params(("id" = i64, Path, description = "The rights holder's id")),
    request_body = HolderProfileRequest,
    responses(
        (status = 200, description = "The profile as stored", body = HolderProfileBody),
        (status = 400, description = "A refused value, named (e-mail, phone, language, length)", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn set_profile(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    Body(request): Body<HolderProfileRequest>,
) -> ApiResult<Json<HolderProfileBody>> {
    let shown = visible(&caller, &state, id).await?;
    let update = ProfileUpdate {
        legal_name: request.legal_name,
        address: request.address,
        email: request.email,
        phone: request.phone,
        agent_name: request.agent_name,
        agent_role: request.agent_role,
        agent_contact: request.agent_contact,
        signature: request.signature,
        language: request.language,
    };
    holders::set_profile_of(state.store.as_ref(), shown.holder.id, &update, Utc::now())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(body(visible(&caller, &state, id).await?)))
}
