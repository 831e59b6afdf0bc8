//! The caller, crawl schedules and runs (operators and admins), and the caller's API tokens.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::Utc;
use copytrace_service::accounts;
use copytrace_service::schedules::{self, CrawlSchedule};
use copytrace_service::settings::CrawlSettings;

use super::schema::{
    ErrorBody, Me, NewScheduleRequest, RunItem, RunStarted, RunsQuery, ScheduleItem, TokenItem,
};
use super::{ApiError, ApiResult, Body, Caller, DEFAULT_PER_PAGE, MAX_PER_PAGE, Query};
use crate::web::{Area, WebState};

/// Next runs a schedule lists.
const NEXT_RUNS: usize = 5;

/// Who the credentials belong to: a cheap way for a script to check its token.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "account",
    responses(
        (status = 200, description = "The caller", body = Me),
        (status = 401, description = "No live credentials", body = ErrorBody),
    )
)]
pub(super) async fn me(caller: Caller) -> ApiResult<Json<Me>> {
    caller.enter(Area::Dashboard)?;
    let user = caller.user;
    Ok(Json(Me {
        id: user.id,
        email: user.email,
        role: user.role.as_str().to_owned(),
        rights_holder_id: user.rights_holder_id,
    }))
}

/// The caller's own API tokens (never the tokens themselves; they are made and revoked with
/// `copytrace user token`).
#[utoipa::path(
    get,
    path = "/api/v1/tokens",
    tag = "account",
    responses(
        (status = 200, description = "The caller's tokens", body = [TokenItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
    )
)]
pub(super) async fn tokens(
    caller: Caller,
    State(state): State<WebState>,
) -> ApiResult<Json<Vec<TokenItem>>> {
    caller.enter(Area::Dashboard)?;
    let tokens = accounts::list_api_tokens(state.store.as_ref(), &caller.user.email)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        tokens
            .into_iter()
            .map(|t| TokenItem {
                id: t.id,
                name: t.name,
                created_at: t.created_at,
                last_used_at: t.last_used_at,
            })
            .collect(),
    ))
}

fn schedule_item(schedule: copytrace_store::Schedule) -> ScheduleItem {
    let next_runs = if schedule.enabled {
        schedules::check_cron(&schedule.cron, &schedule.timezone)
            .map(|cron| cron.upcoming(Utc::now(), NEXT_RUNS))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    ScheduleItem {
        name: schedule.name,
        kind: schedule.kind.as_str().to_owned(),
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        seeds: schedule.seeds,
        owner: schedule.owner,
        next_runs,
        last_fired_at: schedule.last_fired_at,
        created_at: schedule.created_at,
    }
}

/// Every schedule with its next runs.
#[utoipa::path(
    get,
    path = "/api/v1/schedules",
    tag = "crawls",
    responses(
        (status = 200, description = "The schedules", body = [ScheduleItem]),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls", body = ErrorBody),
    )
)]
pub(super) async fn schedules(
    caller: Caller,
    State(state): State<WebState>,
) -> ApiResult<Json<Vec<ScheduleItem>>> {
    caller.enter(Area::Crawls)?;
    let listed = schedules::list(state.store.as_ref())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(listed.into_iter().map(schedule_item).collect()))
}

/// Creates a crawl schedule. A bad cron expression, time zone, seed or a taken name is 400
/// with the reason.
#[utoipa::path(
    post,
    path = "/api/v1/schedules",
    tag = "crawls",
    request_body = NewScheduleRequest,
    responses(
        (status = 201, description = "The schedule as stored", body = ScheduleItem),
        (status = 400, description = "A bad cron, time zone, seed or name, with the reason", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 422, description = "The body is not a schedule", body = ErrorBody),
    )
)]
pub(super) async fn create_schedule(
    caller: Caller,
    State(state): State<WebState>,
    Body(request): Body<NewScheduleRequest>,
) -> ApiResult<(StatusCode, Json<ScheduleItem>)> {
    caller.enter(Area::Crawls)?;
    let timezone = request
        .timezone
        .as_deref()
        .map(str::trim)
        .filter(|zone| !zone.is_empty())
        .unwrap_or("UTC")
        .to_owned();
    let defaults = CrawlSettings::default();
    let created = schedules::add_crawl_schedule(
        state.store.as_ref(),
        &CrawlSchedule {
            name: request.name.trim().to_owned(),
            cron: request.cron,
            timezone,
            owner: Some(caller.user.email.clone()),
            seeds: request.seeds,
            settings: CrawlSettings {
                max_pages: request.max_pages.unwrap_or(defaults.max_pages),
                ..defaults
            },
        },
    )
    .await
    .map_err(ApiError::service)?;
    Ok((StatusCode::CREATED, Json(schedule_item(created))))
}

/// The latest runs, newest first, with their progress.
#[utoipa::path(
    get,
    path = "/api/v1/runs",
    tag = "crawls",
    params(RunsQuery),
    responses(
        (status = 200, description = "The runs", body = [RunItem]),
        (status = 400, description = "A wrong limit", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls", body = ErrorBody),
    )
)]
pub(super) async fn runs(
    caller: Caller,
    State(state): State<WebState>,
    Query(query): Query<RunsQuery>,
) -> ApiResult<Json<Vec<RunItem>>> {
    caller.enter(Area::Crawls)?;
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => DEFAULT_PER_PAGE,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_PER_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(format!("limit {text:?}: a number from 1 to {MAX_PER_PAGE}"))
            })?,
    };
    let runs = copytrace_service::runs::list_runs(state.store.as_ref(), None, None, None, limit)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        runs.into_iter()
            .map(|run| RunItem {
                id: run.id,
                kind: run.kind.as_str().to_owned(),
                schedule: run.schedule_name,
                trigger: run.trigger.as_str().to_owned(),
                state: run.state.as_str().to_owned(),
                created_at: run.created_at,
                started_at: run.started_at,
                finished_at: run.finished_at,
                pages_checked: run.counts.pages_checked,
                new_matches: run.counts.new_matches,
                matches_removed: run.counts.matches_removed,
                errors: run.counts.errors,
                error: run.error,
            })
            .collect(),
    ))
}

/// Pauses a schedule: it fires no more until resumed (a run already started goes on).
#[utoipa::path(
    post,
    path = "/api/v1/schedules/{name}/pause",
    tag = "crawls",
    params(("name" = String, Path, description = "The schedule's name")),
    responses(
        (status = 200, description = "The schedule, paused", body = ScheduleItem),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
pub(super) async fn pause_schedule(
    caller: Caller,
    State(state): State<WebState>,
    Path(name): Path<String>,
) -> ApiResult<Json<ScheduleItem>> {
    set_schedule_enabled(&caller, &state, &name, false).await
}

/// Resumes a paused schedule: it fires at its next tick.
#[utoipa::path(
    post,
    path = "/api/v1/schedules/{name}/resume",
    tag = "crawls",
    params(("name" = String, Path, description = "The schedule's name")),
    responses(
        (status = 200, description = "The schedule, resumed, with its next runs", body = ScheduleItem),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
pub(super) async fn resume_schedule(
    caller: Caller,
    State(state): State<WebState>,
    Path(name): Path<String>,
) -> ApiResult<Json<ScheduleItem>> {
    set_schedule_enabled(&caller, &state, &name, true).await
}

async fn set_schedule_enabled(
    caller: &Caller,
    state: &WebState,
    name: &str,
    enabled: bool,
) -> ApiResult<Json<ScheduleItem>> {
    caller.enter(Area::Crawls)?;
    let store = state.store.as_ref();
    schedules::set_enabled(store, name, enabled)
        .await
        .map_err(ApiError::service)?;
    let details = schedules::schedule_details(store, name, Utc::now())
        .await
        .map_err(ApiError::service)?;
    Ok(Json(schedule_item(details.schedule)))
}

/// Starts a schedule's run now, whatever its cron says (even while paused). The run is queued:
/// follow it in `GET /api/v1/runs`.
#[utoipa::path(
    post,
    path = "/api/v1/schedules/{name}/run",
    tag = "crawls",
    params(("name" = String, Path, description = "The schedule's name")),
    responses(
        (status = 202, description = "The run and its job, queued", body = RunStarted),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
pub(super) async fn run_schedule(
    caller: Caller,
    State(state): State<WebState>,
    Path(name): Path<String>,
) -> ApiResult<(StatusCode, Json<RunStarted>)> {
    caller.enter(Area::Crawls)?;
    let (run_id, job_id) = schedules::run_now(state.store.as_ref(), &name)
        .await
        .map_err(ApiError::service)?;
    Ok((StatusCode::ACCEPTED, Json(RunStarted { run_id, job_id })))
}

/// Deletes a schedule; its runs stay in the history.
#[utoipa::path(
    delete,
    path = "/api/v1/schedules/{name}",
    tag = "crawls",
    params(("name" = String, Path, description = "The schedule's name")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only operators and admins manage crawls; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
pub(super) async fn delete_schedule(
    caller: Caller,
    State(state): State<WebState>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    caller.enter(Area::Crawls)?;
    schedules::delete(state.store.as_ref(), &name)
        .await
        .map_err(ApiError::service)?;
    Ok(StatusCode::NO_CONTENT)
}
