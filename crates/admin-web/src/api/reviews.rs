//! Matches with their evidence, decisions on them, and takedown notices.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::review::{self, Decision, Reviewer};
use copytrace_service::{holders, notices};
use copytrace_store::{ListingOrder, NoticeStatus};

use super::schema::{
    DecideRequest, DecideResult, DecisionName, ErrorBody, MatchDetail, MatchItem, MatchPage,
    MatchesQuery, NewNoticeRequest, NoticeDetail, NoticeItem, NoticeStatusName,
    NoticeStatusRequest, Passage,
};
use super::{ApiError, ApiResult, Body, Caller, IdPath, Query, paging};
use crate::web::i18n::Lang;
use crate::web::{Area, WebState};

/// Most matches one decision names.
const MAX_DECIDED: usize = 1000;

/// One page of the matches the filter selects (a rights holder's own only), newest first or
/// strongest first.
#[utoipa::path(
    get,
    path = "/api/v1/matches",
    tag = "matches",
    params(MatchesQuery),
    responses(
        (status = 200, description = "One page of matches", body = MatchPage),
        (status = 400, description = "A wrong filter field, order or page, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read matches", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn matches(
    caller: Caller,
    State(state): State<WebState>,
    Query(query): Query<MatchesQuery>,
) -> ApiResult<Json<MatchPage>> {
    caller.enter(Area::Reports)?;
    let (page, per_page) = paging(query.page.as_deref(), query.per_page.as_deref())?;
    let order = match query.order.as_deref().map(str::trim) {
        None | Some("" | "newest") => ListingOrder::Newest,
        Some("score") => ListingOrder::HighestScore,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "order {other:?}: `newest` or `score`"
            )));
        }
    };
    let form = query.filter().form();
    caller.check_filter_work(&state, &form.work).await?;
    let filter = form
        .match_filter(caller.tenant(), Lang::En.texts())
        .map_err(ApiError::bad_request)?;
    let listing = copytrace_service::export::match_listing(
        state.store.as_ref(),
        &filter,
        order,
        (page - 1).saturating_mul(u64::from(per_page)),
        per_page,
    )
    .await
    .map_err(ApiError::service)?;
    Ok(Json(MatchPage {
        more: listing.more,
        page,
        per_page,
        matches: listing.matches.iter().map(MatchItem::from).collect(),
    }))
}

/// One match with its evidence passages. Another rights holder's match is 404.
#[utoipa::path(
    get,
    path = "/api/v1/matches/{id}",
    tag = "matches",
    params(("id" = i64, Path, description = "The match's id")),
    responses(
        (status = 200, description = "The match and its passages", body = MatchDetail),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read matches", body = ErrorBody),
        (status = 404, description = "No such match, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn match_detail(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<MatchDetail>> {
    caller.enter(Area::Reports)?;
    let evidence =
        copytrace_service::evidence::match_evidence(state.store.as_ref(), id, caller.tenant())
            .await
            .map_err(ApiError::service)?;
    Ok(Json(MatchDetail {
        record: MatchItem::from(&evidence.record),
        evidence: evidence
            .pairs
            .into_iter()
            .map(|p| Passage {
                page_start: p.page_range.0,
                page_end: p.page_range.1,
                work_start: p.work_range.0,
                work_end: p.work_range.1,
                page_text: p.page,
                work_text: p.work,
                substitutions: p.substitutions.into_iter().map(|(a, b)| [a, b]).collect(),
            })
            .collect(),
    }))
}

/// Takes one decision on matches, each with its audit record. All of them are looked up
/// first: if one is missing or another rights holder's, the answer is 404 and none is decided.
#[utoipa::path(
    post,
    path = "/api/v1/matches/decide",
    tag = "matches",
    request_body = DecideRequest,
    responses(
        (status = 200, description = "Decided", body = DecideResult),
        (status = 400, description = "No ids, or too many", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders decide; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "A match is missing or not the caller's; nothing was decided", body = ErrorBody),
        (status = 422, description = "The body is not a decision", body = ErrorBody),
    )
)]
pub(super) async fn decide(
    caller: Caller,
    State(state): State<WebState>,
    Body(request): Body<DecideRequest>,
) -> ApiResult<Json<DecideResult>> {
    caller.enter(Area::Review)?;
    if request.ids.is_empty() || request.ids.len() > MAX_DECIDED {
        return Err(ApiError::bad_request(format!(
            "ids: name 1 to {MAX_DECIDED} matches"
        )));
    }
    let store = state.store.as_ref();
    let decision = match request.decision {
        DecisionName::Confirm => Decision::Confirm,
        DecisionName::Reject => Decision::Reject,
        DecisionName::License => Decision::License,
        DecisionName::Reopen => Decision::Reopen,
    };
    let reviewer = Reviewer {
        actor: caller.user.email.clone(),
        rights_holder_id: caller.tenant(),
    };
    review::decide(
        store,
        &reviewer,
        &request.ids,
        decision,
        request.note.trim(),
    )
    .await
    .map_err(ApiError::service)?;
    Ok(Json(DecideResult {
        decision: request.decision,
        decided: request.ids,
    }))
}

/// The caller's notices (a rights holder's own), newest first.
#[utoipa::path(
    get,
    path = "/api/v1/notices",
    tag = "notices",
    responses(
        (status = 200, description = "The notices", body = [NoticeItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices", body = ErrorBody),
    )
)]
pub(super) async fn notices(
    caller: Caller,
    State(state): State<WebState>,
) -> ApiResult<Json<Vec<NoticeItem>>> {
    caller.enter(Area::Notices)?;
    let listed = notices::list(state.store.as_ref(), caller.tenant())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(listed.iter().map(NoticeItem::from).collect()))
}

fn detail(notice: &copytrace_store::Notice) -> NoticeDetail {
    NoticeDetail {
        notice: NoticeItem::from(notice),
        body: notice.body.clone(),
    }
}

/// One notice with its text. Another rights holder's notice is 404.
#[utoipa::path(
    get,
    path = "/api/v1/notices/{id}",
    tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    responses(
        (status = 200, description = "The notice", body = NoticeDetail),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices", body = ErrorBody),
        (status = 404, description = "No such notice, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn notice(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<NoticeDetail>> {
    caller.enter(Area::Notices)?;
    let notice = notices::get(state.store.as_ref(), id, caller.tenant())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(detail(&notice)))
}

/// Writes a draft notice of the rights holder's confirmed copies online on a site.
#[utoipa::path(
    post,
    path = "/api/v1/notices",
    tag = "notices",
    request_body = NewNoticeRequest,
    responses(
        (status = 201, description = "The draft", body = NoticeDetail),
        (status = 400, description = "No holder named (staff), a wrong language or site, or no confirmed copy there", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such rights holder", body = ErrorBody),
        (status = 422, description = "The body is not a notice request", body = ErrorBody),
    )
)]
pub(super) async fn create_notice(
    caller: Caller,
    State(state): State<WebState>,
    Body(request): Body<NewNoticeRequest>,
) -> ApiResult<(StatusCode, Json<NoticeDetail>)> {
    caller.enter(Area::Notices)?;
    let store = state.store.as_ref();
    let holder = match caller.tenant() {
        Some(own) => {
            holders::get(store, own)
                .await
                .map_err(ApiError::service)?
                .name
        }
        None => match request.holder.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => return Err(ApiError::bad_request("holder: name the rights holder")),
        },
    };
    // The language picks the law: zh the Chinese 条例第十四条 notice, en the US §512(c)(3)
    // one (`cn`/`us` name them directly); without one, the holder's default.
    let law = match request.lang.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("zh" | "cn") => Some(NoticeLaw::Cn),
        Some("en" | "us") => Some(NoticeLaw::Us),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "lang {other:?}: `zh` (cn) or `en` (us)"
            )));
        }
    };
    let notice = notices::create(
        store,
        &notices::NoticeRequest {
            holder: Some(&holder),
            site: &request.site,
            law,
            evidence: None,
            at: Utc::now(),
        },
    )
    .await
    .map_err(ApiError::service)?;
    Ok((StatusCode::CREATED, Json(detail(&notice))))
}

/// Moves a notice by hand: sent (its copies become `notice_sent`), acknowledged, ignored,
/// escalated, or back to draft, recorded in its history with the caller (`api:EMAIL`) and the
/// note. Another rights holder's notice is 404 and is not changed.
#[utoipa::path(
    post,
    path = "/api/v1/notices/{id}/status",
    tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    request_body = NoticeStatusRequest,
    responses(
        (status = 200, description = "The notice as it is now", body = NoticeDetail),
        (status = 400, description = "A move its status does not allow (e.g. acknowledged before it was sent)", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such notice, or not the caller's", body = ErrorBody),
        (status = 422, description = "Not a status", body = ErrorBody),
    )
)]
pub(super) async fn notice_status(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    Body(request): Body<NoticeStatusRequest>,
) -> ApiResult<Json<NoticeDetail>> {
    caller.enter(Area::Notices)?;
    let status = match request.status {
        NoticeStatusName::Sent => NoticeStatus::Sent,
        NoticeStatusName::Acknowledged => NoticeStatus::Acknowledged,
        NoticeStatusName::Ignored => NoticeStatus::Ignored,
        NoticeStatusName::Escalated => NoticeStatus::Escalated,
        NoticeStatusName::Draft => NoticeStatus::Draft,
    };
    let notice = notices::set_status(
        state.store.as_ref(),
        id,
        status,
        caller.tenant(),
        &caller.actor(),
        request.note,
    )
    .await
    .map_err(ApiError::service)?;
    Ok(Json(detail(&notice)))
}
