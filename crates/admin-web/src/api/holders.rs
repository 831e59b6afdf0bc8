//! Rights-holder profiles (issue 40): what a holder's takedown notices say about it. A rights
//! holder reads and edits its own profile only (another holder's is 404, as a missing one is);
//! an admin any holder's. Other roles have no business with notices (403).

use axum::Json;
use axum::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use copytrace_service::alerts::{self, Destination};
use copytrace_service::holders::{self, HolderProfile, ProfileUpdate};
use copytrace_service::library::{self, WorkRef};
use copytrace_store::{AlertCadence, Id, RightsHolder};

use super::schema::{
    AlertAdded, AlertItem, ErrorBody, HolderProfileBody, HolderProfileRequest, LicenceItem,
    LicenceQuery, NewAlertRequest, NewLicenceRequest,
};
use super::{ApiError, ApiResult, Body, Caller, IdPath, Query};
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
        signature_image: shown.signature_image.map(|i| i.content_type),
        language: profile.as_ref().map(|p| p.language.clone()),
        updated_at: profile.as_ref().map(|p| p.updated_at),
    }
}

/// The holder `id` if the caller may see its profile: its own for a rights holder, any for
/// staff allowed into notices; 404 otherwise, as for a missing holder.
async fn visible(caller: &Caller, state: &WebState, id: Id) -> ApiResult<HolderProfile> {
    let holder = managed(caller, state, id).await?;
    holders::profile(state.store.as_ref(), &holder.name)
        .await
        .map_err(ApiError::service)
}

/// Holder `id` if the caller manages it: its own for a rights holder, any for an admin; 404
/// otherwise, as for a missing holder. Other roles: 403.
async fn managed(caller: &Caller, state: &WebState, id: Id) -> ApiResult<RightsHolder> {
    caller.enter(Area::Holders)?;
    if caller.tenant().is_some_and(|own| own != id) {
        return Err(ApiError::not_found());
    }
    holders::get(state.store.as_ref(), id)
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

/// A rights holder's signature image, as stored (PNG or JPEG).
#[utoipa::path(
    get,
    path = "/api/v1/holders/{id}/signature-image",
    tag = "notices",
    params(("id" = i64, Path, description = "The rights holder's id")),
    responses(
        (status = 200, description = "The image, `image/png` or `image/jpeg`", content_type = "image/png"),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices", body = ErrorBody),
        (status = 404, description = "No such rights holder, not the caller, or no image", body = ErrorBody),
    )
)]
pub(super) async fn signature_image(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let holder = managed(&caller, &state, id).await?;
    let image = holders::signature_image_of(state.store.as_ref(), holder.id)
        .await
        .map_err(ApiError::service)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "the rights holder has no signature image",
            )
        })?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, image.content_type)],
        image.bytes,
    )
        .into_response())
}

/// Sets a rights holder's signature image from the request body: a PNG or JPEG file (told by
/// its first bytes, whatever the Content-Type says), at most 200 KB; shown under the signature
/// of its notices' HTML mails and in the web. A holder without a profile gets one.
#[utoipa::path(
    put,
    path = "/api/v1/holders/{id}/signature-image",
    tag = "notices",
    params(("id" = i64, Path, description = "The rights holder's id")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The PNG or JPEG file"),
    responses(
        (status = 200, description = "The profile as stored", body = HolderProfileBody),
        (status = 400, description = "Not a PNG or JPEG, empty, or larger than 200 KB", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn set_signature_image(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    image: axum::body::Bytes,
) -> ApiResult<Json<HolderProfileBody>> {
    let holder = managed(&caller, &state, id).await?;
    holders::set_signature_image_of(
        state.store.as_ref(),
        holder.id,
        Some(image.to_vec()),
        Utc::now(),
    )
    .await
    .map_err(ApiError::service)?;
    Ok(Json(body(visible(&caller, &state, id).await?)))
}

/// Removes a rights holder's signature image.
#[utoipa::path(
    delete,
    path = "/api/v1/holders/{id}/signature-image",
    tag = "notices",
    params(("id" = i64, Path, description = "The rights holder's id")),
    responses(
        (status = 200, description = "The profile as stored", body = HolderProfileBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn remove_signature_image(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<HolderProfileBody>> {
    let holder = managed(&caller, &state, id).await?;
    holders::set_signature_image_of(state.store.as_ref(), holder.id, None, Utc::now())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(body(visible(&caller, &state, id).await?)))
}

/// An id of a path: not a number is a JSON 404, no such object.
fn path_id(text: &str) -> ApiResult<Id> {
    text.parse().map_err(|_| ApiError::not_found())
}

/// The work of `holder` an external id names (`None`: every work); another holder's or an
/// unknown one is a 400 naming it.
async fn licence_work(
    state: &WebState,
    holder: &RightsHolder,
    external_id: Option<&str>,
) -> ApiResult<Option<Id>> {
    let Some(external_id) = external_id.map(str::trim).filter(|e| !e.is_empty()) else {
        return Ok(None);
    };
    library::resolve_work(
        state.store.as_ref(),
        &WorkRef::External {
            external_id: external_id.to_owned(),
            rights_holder: Some(holder.name.clone()),
        },
    )
    .await
    .map(Some)
    .map_err(|error| match error.kind() {
        copytrace_service::ErrorKind::Internal => ApiError::service(error),
        _ => ApiError::bad_request(format!(
            "work_external_id {external_id:?}: the rights holder has no such work"
        )),
    })
}

/// The holder's licences as the API lists them.
async fn licence_items(state: &WebState, holder: &RightsHolder) -> ApiResult<Vec<LicenceItem>> {
    let store = state.store.as_ref();
    let works: std::collections::HashMap<Id, String> = library::list_works(store, Some(holder.id))
        .await
        .map_err(ApiError::service)?
        .into_iter()
        .map(|w| (w.id, w.external_id))
        .collect();
    Ok(holders::licenses(store, Some(&holder.name))
        .await
        .map_err(ApiError::service)?
        .into_iter()
        .map(|l| LicenceItem {
            work_external_id: l.work_id.and_then(|w| works.get(&w).cloned()),
            host: l.host,
            work_id: l.work_id,
            created_at: l.created_at,
        })
        .collect())
}

/// A rights holder's licensed hosts: matches there are `licensed`, not infringements.
#[utoipa::path(
    get,
    path = "/api/v1/holders/{id}/licensed-hosts",
    tag = "holders",
    params(("id" = i64, Path, description = "The rights holder's id")),
    responses(
        (status = 200, description = "Its licences", body = [LicenceItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn licences(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<Vec<LicenceItem>>> {
    let holder = managed(&caller, &state, id).await?;
    Ok(Json(licence_items(&state, &holder).await?))
}

/// Licenses a host (and its subdomains) to publish every work of the holder, or one. Adding it
/// again changes nothing.
#[utoipa::path(
    post,
    path = "/api/v1/holders/{id}/licensed-hosts",
    tag = "holders",
    params(("id" = i64, Path, description = "The rights holder's id")),
    request_body = NewLicenceRequest,
    responses(
        (status = 201, description = "The holder's licences as they now are", body = [LicenceItem]),
        (status = 400, description = "Not a host name, or no such work of the holder", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn add_licence(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    Body(request): Body<NewLicenceRequest>,
) -> ApiResult<(StatusCode, Json<Vec<LicenceItem>>)> {
    let holder = managed(&caller, &state, id).await?;
    let work = licence_work(&state, &holder, request.work_external_id.as_deref()).await?;
    holders::license(
        state.store.as_ref(),
        &holder.name,
        work,
        std::slice::from_ref(&request.host),
    )
    .await
    .map_err(ApiError::service)?;
    Ok((
        StatusCode::CREATED,
        Json(licence_items(&state, &holder).await?),
    ))
}

/// Takes a licence back.
#[utoipa::path(
    delete,
    path = "/api/v1/holders/{id}/licensed-hosts/{host}",
    tag = "holders",
    params(
        ("id" = i64, Path, description = "The rights holder's id"),
        ("host" = String, Path, description = "The licensed host"),
        LicenceQuery,
    ),
    responses(
        (status = 204, description = "Taken back"),
        (status = 400, description = "Not a host name, or no such work of the holder", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such licence, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn remove_licence(
    caller: Caller,
    State(state): State<WebState>,
    Path((id, host)): Path<(String, String)>,
    Query(query): Query<LicenceQuery>,
) -> ApiResult<StatusCode> {
    let holder = managed(&caller, &state, path_id(&id)?).await?;
    let work = licence_work(&state, &holder, query.work_external_id.as_deref()).await?;
    let removed = holders::unlicense(
        state.store.as_ref(),
        &holder.name,
        work,
        std::slice::from_ref(&host),
    )
    .await
    .map_err(ApiError::service)?;
    if removed == 0 {
        return Err(ApiError::not_found());
    }
    Ok(StatusCode::NO_CONTENT)
}

fn alert_item(s: alerts::TargetStatus) -> AlertItem {
    AlertItem {
        id: s.target.id,
        kind: s.target.kind.as_str().to_owned(),
        address: s.target.address,
        cadence: s.target.cadence.as_str().to_owned(),
        lang: s.target.lang,
        created_at: s.target.created_at,
        delivered: s.delivered as u64,
        waiting: s.waiting as u64,
        failed: s.failed as u64,
        last_error: s.last_error,
    }
}

/// A rights holder's alert targets with how their deliveries stand (secrets never shown).
#[utoipa::path(
    get,
    path = "/api/v1/holders/{id}/alerts",
    tag = "holders",
    params(("id" = i64, Path, description = "The rights holder's id")),
    responses(
        (status = 200, description = "Its alert targets", body = [AlertItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn alerts_list(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<Vec<AlertItem>>> {
    let holder = managed(&caller, &state, id).await?;
    let targets = alerts::targets(state.store.as_ref(), Some(&holder.name))
        .await
        .map_err(ApiError::service)?;
    Ok(Json(targets.into_iter().map(alert_item).collect()))
}

/// Adds an alert target: a webhook (JSON signed with HMAC-SHA256, retried) or an e-mail
/// digest of new copies and removals. Adding the same address again updates it. A webhook's
/// secret is in this answer only.
#[utoipa::path(
    post,
    path = "/api/v1/holders/{id}/alerts",
    tag = "holders",
    params(("id" = i64, Path, description = "The rights holder's id")),
    request_body = NewAlertRequest,
    responses(
        (status = 201, description = "The target, with a webhook's secret", body = AlertAdded),
        (status = 400, description = "A wrong kind, URL, address, secret or language", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn add_alert(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    Body(request): Body<NewAlertRequest>,
) -> ApiResult<(StatusCode, Json<AlertAdded>)> {
    let holder = managed(&caller, &state, id).await?;
    let destination = match request.kind.trim() {
        "webhook" => Destination::Webhook(request.address.trim().to_owned()),
        "email" => Destination::Email(request.address.trim().to_owned()),
        other => {
            return Err(ApiError::bad_request(format!(
                "kind {other:?}: `webhook` or `email`"
            )));
        }
    };
    let webhook = matches!(destination, Destination::Webhook(_));
    let lang = match request.lang.as_deref().map(str::trim) {
        None | Some("") | Some("zh") => "zh",
        Some("en") => "en",
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "lang {other:?}: `zh` or `en`"
            )));
        }
    };
    let cadence = if request.daily {
        AlertCadence::Daily
    } else {
        AlertCadence::AfterRun
    };
    let store = state.store.as_ref();
    let (target_id, secret) = alerts::add_target(
        store,
        &holder.name,
        destination,
        request.secret,
        cadence,
        lang,
    )
    .await
    .map_err(ApiError::service)?;
    let target = alerts::targets(store, Some(&holder.name))
        .await
        .map_err(ApiError::service)?
        .into_iter()
        .find(|t| t.target.id == target_id)
        .ok_or_else(ApiError::not_found)?;
    Ok((
        StatusCode::CREATED,
        Json(AlertAdded {
            target: alert_item(target),
            secret: webhook.then_some(secret),
        }),
    ))
}

/// Removes an alert target of the holder, with its delivery history.
#[utoipa::path(
    delete,
    path = "/api/v1/holders/{id}/alerts/{alert_id}",
    tag = "holders",
    params(
        ("id" = i64, Path, description = "The rights holder's id"),
        ("alert_id" = i64, Path, description = "The target's id"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders manage holders' settings; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such target of the holder, or not the caller", body = ErrorBody),
    )
)]
pub(super) async fn remove_alert(
    caller: Caller,
    State(state): State<WebState>,
    Path((id, alert_id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let holder = managed(&caller, &state, path_id(&id)?).await?;
    alerts::remove_target(state.store.as_ref(), path_id(&alert_id)?, Some(holder.id))
        .await
        .map_err(ApiError::service)?;
    Ok(StatusCode::NO_CONTENT)
}
