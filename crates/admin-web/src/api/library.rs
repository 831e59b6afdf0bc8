//! Works and statistics: what rights holders (their own) and analysts read.

use axum::Json;
use axum::extract::State;
use copytrace_analytics::stats::SiteGrouping;
use copytrace_store::{MatchFilter, StatsFilter};

use super::schema::{
    DailyItem, DelayItem, DistributionItem, ErrorBody, FilterParams, FirstCopyItem,
    HolderStatsItem, SiteStatsItem, TimeToPiracyBody, WorkDetail, WorkItem, WorkPage,
    WorkStatsItem, WorksQuery,
};
use super::{ApiError, ApiResult, Caller, IdPath, Query, paging};
use crate::web::i18n::Lang;
use crate::web::{Area, WebState};

/// The library's works (a rights holder's own), filtered by title or identifier, a page at a
/// time, with how many pages and sites copy each.
#[utoipa::path(
    get,
    path = "/api/v1/works",
    tag = "works",
    params(WorksQuery),
    responses(
        (status = 200, description = "One page of works", body = WorkPage),
        (status = 400, description = "A wrong page or per_page", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read works", body = ErrorBody),
    )
)]
pub(super) async fn works(
    caller: Caller,
    State(state): State<WebState>,
    Query(query): Query<WorksQuery>,
) -> ApiResult<Json<WorkPage>> {
    caller.enter(Area::Reports)?;
    let (page, per_page) = paging(query.page.as_deref(), query.per_page.as_deref())?;
    let store = state.store.as_ref();
    let holder = caller.tenant();
    let works = copytrace_service::library::list_works(store, holder)
        .await
        .map_err(ApiError::service)?;
    let filter = StatsFilter {
        rights_holder_id: holder,
        reviews: MatchFilter::reported().reviews,
        ..StatsFilter::default()
    };
    let copies = copytrace_service::stats::works(store, &filter, None)
        .await
        .map_err(ApiError::service)?;
    let needle = query.q.unwrap_or_default().trim().to_lowercase();
    let matching: Vec<_> = works
        .into_iter()
        .filter(|w| {
            needle.is_empty()
                || w.title.to_lowercase().contains(&needle)
                || w.external_id.to_lowercase().contains(&needle)
        })
        .collect();
    let total = matching.len() as u64;
    let skip = (page - 1).saturating_mul(u64::from(per_page));
    let works = matching
        .into_iter()
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .take(per_page as usize)
        .map(|w| {
            let found = copies.iter().find(|c| c.stats.work_id == w.id);
            WorkItem {
                id: w.id,
                external_id: w.external_id,
                title: w.title,
                author: w.author,
                rights_holder_id: w.rights_holder_id,
                chapters: w.chapter_count,
                status: w.status.as_str().to_owned(),
                created_at: w.created_at,
                pages: found.map_or(0, |c| c.stats.pages),
                sites: found.map_or(0, |c| c.stats.sites),
            }
        })
        .collect();
    Ok(Json(WorkPage {
        total,
        page,
        per_page,
        works,
    }))
}

/// One work with its owner and its matches by state. Another rights holder's work is 404.
#[utoipa::path(
    get,
    path = "/api/v1/works/{id}",
    tag = "works",
    params(("id" = i64, Path, description = "The work's id")),
    responses(
        (status = 200, description = "The work", body = WorkDetail),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read works", body = ErrorBody),
        (status = 404, description = "No such work, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn work(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<WorkDetail>> {
    caller.enter(Area::Reports)?;
    let details = copytrace_service::library::work_details(state.store.as_ref(), id)
        .await
        .map_err(ApiError::service)?;
    let work = details.work;
    if caller
        .tenant()
        .is_some_and(|own| own != work.rights_holder_id)
    {
        return Err(ApiError::not_found());
    }
    Ok(Json(WorkDetail {
        id: work.id,
        external_id: work.external_id,
        title: work.title,
        author: work.author,
        rights_holder_id: work.rights_holder_id,
        rights_holder: details.rights_holder,
        chapters: work.chapter_count,
        status: work.status.as_str().to_owned(),
        published_at: work.published_at,
        created_at: work.created_at,
        matches_by_status: details.matches,
        licensed_hosts: details.licensed_hosts,
    }))
}

/// The statistics filter of `params` for `caller`: its own works only for a rights holder; a
/// filter naming another holder's work is 404, a wrong field 400.
async fn stats_filter(
    caller: &Caller,
    state: &WebState,
    params: &FilterParams,
) -> ApiResult<StatsFilter> {
    let form = params.form();
    caller.check_filter_work(state, &form.work).await?;
    form.stats_filter(caller.tenant(), Lang::En.texts())
        .map_err(ApiError::bad_request)
}

/// Copies per work, most pages first, for the filter.
#[utoipa::path(
    get,
    path = "/api/v1/stats/works",
    tag = "statistics",
    params(FilterParams),
    responses(
        (status = 200, description = "One row per copied work", body = [WorkStatsItem]),
        (status = 400, description = "A wrong filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read statistics", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn work_stats(
    caller: Caller,
    State(state): State<WebState>,
    Query(params): Query<FilterParams>,
) -> ApiResult<Json<Vec<WorkStatsItem>>> {
    caller.enter(Area::Statistics)?;
    let filter = stats_filter(&caller, &state, &params).await?;
    let rows = copytrace_service::stats::works(state.store.as_ref(), &filter, None)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        rows.into_iter()
            .map(|r| WorkStatsItem {
                work_id: r.stats.work_id,
                external_id: r.stats.external_id,
                title: r.stats.title,
                pages: r.stats.pages,
                sites: r.stats.sites,
                best_score: r.stats.best_score,
                online: r.stats.online,
                removed: r.stats.removed,
                first_seen: r.stats.first_seen,
                last_seen: r.stats.last_seen,
                hours_to_first_copy: r.hours_to_first_copy,
            })
            .collect(),
    ))
}

/// Copies per site (registered domain), for the filter.
#[utoipa::path(
    get,
    path = "/api/v1/stats/sites",
    tag = "statistics",
    params(FilterParams),
    responses(
        (status = 200, description = "One row per site", body = [SiteStatsItem]),
        (status = 400, description = "A wrong filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read statistics", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn site_stats(
    caller: Caller,
    State(state): State<WebState>,
    Query(params): Query<FilterParams>,
) -> ApiResult<Json<Vec<SiteStatsItem>>> {
    caller.enter(Area::Statistics)?;
    let filter = stats_filter(&caller, &state, &params).await?;
    let rows =
        copytrace_service::stats::sites(state.store.as_ref(), &filter, SiteGrouping::Domain, None)
            .await
            .map_err(ApiError::service)?;
    Ok(Json(
        rows.into_iter()
            .map(|r| SiteStatsItem {
                site: r.site,
                hosts: r.hosts,
                pages: r.pages,
                works: r.works,
                copies: r.copies,
                removed: r.removed,
                notice_sent: r.notice_sent,
                removal_rate: r.removal_rate,
                median_hours_to_removal: r.median_hours_to_removal,
                first_seen: r.first_seen,
                last_seen: r.last_seen,
            })
            .collect(),
    ))
}

/// New matches, removals and pages crawled per UTC day, for the filter.
#[utoipa::path(
    get,
    path = "/api/v1/stats/daily",
    tag = "statistics",
    params(FilterParams),
    responses(
        (status = 200, description = "One row per day, oldest first", body = [DailyItem]),
        (status = 400, description = "A wrong filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read statistics", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn daily_stats(
    caller: Caller,
    State(state): State<WebState>,
    Query(params): Query<FilterParams>,
) -> ApiResult<Json<Vec<DailyItem>>> {
    caller.enter(Area::Statistics)?;
    let filter = stats_filter(&caller, &state, &params).await?;
    let rows = copytrace_service::stats::daily(state.store.as_ref(), &filter)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        rows.into_iter()
            .map(|r| DailyItem {
                day: r.day,
                new_matches: r.new_matches,
                removals: r.removals,
                pages_crawled: r.pages_crawled,
            })
            .collect(),
    ))
}

/// Copies per rights holder, for the filter (a rights holder's: its own row only).
#[utoipa::path(
    get,
    path = "/api/v1/stats/holders",
    tag = "statistics",
    params(FilterParams),
    responses(
        (status = 200, description = "One row per rights holder with copies", body = [HolderStatsItem]),
        (status = 400, description = "A wrong filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read statistics", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn holder_stats(
    caller: Caller,
    State(state): State<WebState>,
    Query(params): Query<FilterParams>,
) -> ApiResult<Json<Vec<HolderStatsItem>>> {
    caller.enter(Area::Statistics)?;
    let filter = stats_filter(&caller, &state, &params).await?;
    let rows = copytrace_service::stats::holders(state.store.as_ref(), &filter)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(
        rows.into_iter()
            .map(|r| HolderStatsItem {
                rights_holder_id: r.rights_holder_id,
                name: r.name,
                works_copied: r.works_copied,
                pages: r.pages,
                sites: r.sites,
                copies: r.copies,
                confirmed: r.confirmed,
                pending: r.pending,
                removed: r.removed,
            })
            .collect(),
    ))
}

/// Time from publication (the catalog's `published_at`) to piracy, for the filter: each
/// work's first copy on each site, the delay per work and per site, and their distribution.
#[utoipa::path(
    get,
    path = "/api/v1/stats/time-to-piracy",
    tag = "statistics",
    params(FilterParams),
    responses(
        (status = 200, description = "First copies and their delays", body = TimeToPiracyBody),
        (status = 400, description = "A wrong filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read statistics", body = ErrorBody),
        (status = 404, description = "The filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn time_to_piracy(
    caller: Caller,
    State(state): State<WebState>,
    Query(params): Query<FilterParams>,
) -> ApiResult<Json<TimeToPiracyBody>> {
    caller.enter(Area::Statistics)?;
    let filter = stats_filter(&caller, &state, &params).await?;
    let ttp = copytrace_service::stats::time_to_piracy(
        state.store.as_ref(),
        &filter,
        &copytrace_analytics::stats::PublishedWindow::default(),
    )
    .await
    .map_err(ApiError::service)?;
    let delays = |rows: Vec<copytrace_analytics::stats::DelayRow>| {
        rows.into_iter()
            .map(|d| DelayItem {
                key: d.key,
                hours: d.hours,
                works: d.works,
            })
            .collect()
    };
    Ok(Json(TimeToPiracyBody {
        copies: ttp
            .copies
            .into_iter()
            .map(|c| FirstCopyItem {
                work_id: c.work_id,
                work_external_id: c.work_external_id,
                site: c.site,
                published_at: c.published_at,
                first_copy_at: c.first_copy_at,
                hours: c.hours,
            })
            .collect(),
        works: delays(ttp.works),
        sites: delays(ttp.sites),
        overall: DistributionItem {
            count: ttp.overall.count,
            p10: ttp.overall.p10,
            median: ttp.overall.median,
            p90: ttp.overall.p90,
            buckets: ttp.overall.buckets,
        },
        publication_unknown: ttp.publication_unknown,
    }))
}
