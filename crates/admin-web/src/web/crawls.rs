//! Crawls: schedules (created with their cron checked and the next runs previewed in their
//! time zone; paused, resumed, run now, deleted), and runs and jobs with their progress.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::{Form, Query};
use chrono::{DateTime, Utc};
use copytrace_service::schedules::{self, CrawlSchedule};
use copytrace_service::settings::CrawlSettings;
use copytrace_store::RunState;
use serde::Deserialize;

use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/schedules", get(schedules_page).post(create_schedule))
        .route("/schedules/{name}", get(schedule_page))
        .route("/schedules/{name}/{action}", post(schedule_action))
        .route("/runs", get(runs_page))
}

/// Next runs a preview shows.
const PREVIEWED_RUNS: usize = 5;

/// The schedule form's fields, as typed.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
struct ScheduleForm {
    csrf: String,
    name: String,
    cron: String,
    timezone: String,
    /// One seed URL per line.
    seeds: String,
    max_pages: String,
}

impl Default for ScheduleForm {
    fn default() -> Self {
        ScheduleForm {
            csrf: String::new(),
            name: String::new(),
            cron: "0 3 * * *".to_owned(),
            timezone: "Asia/Shanghai".to_owned(),
            seeds: String::new(),
            max_pages: CrawlSettings::default().max_pages.to_string(),
        }
    }
}

/// The next runs of a cron expression in its time zone, as the form's preview shows them; or
/// why the expression or zone is refused.
fn preview(cron: &str, timezone: &str, now: DateTime<Utc>) -> Result<Vec<String>, String> {
    let schedule = schedules::check_cron(cron, timezone).map_err(|e| e.to_string())?;
    let zone = schedule.timezone();
    Ok(schedule
        .upcoming(now, PREVIEWED_RUNS)
        .into_iter()
        .map(|at| {
            at.with_timezone(&zone)
                .format("%Y-%m-%d %H:%M (%a) %Z")
                .to_string()
        })
        .collect())
}

struct ScheduleRow {
    name: String,
    kind: &'static str,
    cron: String,
    timezone: String,
    enabled: bool,
    next: String,
    seeds: usize,
}

#[derive(Template)]
#[template(path = "web/schedules.html")]
struct SchedulesPage {
    t: &'static Texts,
    viewer: Viewer,
    schedules: Vec<ScheduleRow>,
    pager: Pager,
    list_path: &'static str,
    form: ScheduleForm,
    /// Next runs of the form's expression, when it was previewed and holds.
    next_runs: Vec<String>,
    problem: Option<String>,
}

/// Schedules, and the form to create one. `?cron=…&timezone=…` previews the next runs of an
/// expression (the form's Preview button, which works without JavaScript).
async fn schedules_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(form): Query<ScheduleForm>,
    Query(list): Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Crawls)?;
    let previewing = !form.name.is_empty() || form.cron != ScheduleForm::default().cron;
    let (next_runs, problem) = match preview(&form.cron, &form.timezone, Utc::now()) {
        Ok(next) => (next, None),
        Err(problem) if previewing => (Vec::new(), Some(problem)),
        Err(_) => (Vec::new(), None),
    };
    schedules_listing(
        &state,
        &visitor,
        &list,
        form,
        next_runs,
        problem,
        StatusCode::OK,
    )
    .await
}

async fn schedules_listing(
    state: &WebState,
    visitor: &Visitor,
    list: &ListQuery,
    form: ScheduleForm,
    next_runs: Vec<String>,
    problem: Option<String>,
    status: StatusCode,
) -> Result<Response, Response> {
    let t = visitor.t;
    let now = Utc::now();
    let stored = schedules::list(state.store.as_ref())
        .await
        .map_err(failure)?;
    let schedules: Vec<ScheduleRow> = stored
        .into_iter()
        .map(|s| ScheduleRow {
            next: if s.enabled {
                schedules::next_tick(&s, now)
                    .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string())
                    .unwrap_or_default()
            } else {
                t.paused.to_owned()
            },
            kind: t.code(s.kind.as_str()),
            seeds: s.seeds.len(),
            name: s.name,
            cron: s.cron,
            timezone: s.timezone,
            enabled: s.enabled,
        })
        .filter(|s| list.keeps(&[&s.name, s.kind, &s.cron, &s.timezone]))
        .collect();
    let (schedules, pager) = page_of(schedules, list);
    Ok((
        status,
        page(SchedulesPage {
            t,
            viewer: visitor.viewer(),
            schedules,
            pager,
            list_path: "/schedules",
            form,
            next_runs,
            problem,
        }),
    )
        .into_response())
}

/// Creates a crawl schedule from the form; a bad cron expression, time zone, seed or name
/// shows the form again with the error and what was typed.
async fn create_schedule(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<ScheduleForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Crawls)?;
    visitor.check_form(&form.csrf)?;
    let t = visitor.t;
    let refused = |problem: String, form: ScheduleForm| {
        let state = state.clone();
        let visitor = &visitor;
        async move {
            schedules_listing(
                &state,
                visitor,
                &ListQuery::default(),
                form,
                Vec::new(),
                Some(problem),
                StatusCode::BAD_REQUEST,
            )
            .await
        }
    };
    if let Err(problem) = preview(&form.cron, &form.timezone, Utc::now()) {
        return refused(problem, form).await;
    }
    let Ok(max_pages) = form.max_pages.trim().parse::<usize>() else {
        let problem = format!("{} {:?}", t.max_pages, form.max_pages);
        return refused(problem, form).await;
    };
    let seeds: Vec<String> = form
        .seeds
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let created = schedules::add_crawl_schedule(
        state.store.as_ref(),
        &CrawlSchedule {
            name: form.name.trim().to_owned(),
            cron: form.cron.clone(),
            timezone: form.timezone.clone(),
            owner: Some(visitor.session.user.email.clone()),
            seeds,
            settings: CrawlSettings {
                max_pages,
                ..CrawlSettings::default()
            },
        },
    )
    .await;
    match created {
        Ok(schedule) => {
            Ok(Redirect::to(&format!("/schedules/{}", urlencoded(&schedule.name))).into_response())
        }
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            refused(copytrace_service::error::one_line(&error), form).await
        }
        Err(error) => Err(failure(error)),
    }
}

fn urlencoded(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}

struct RunRow {
    id: i64,
    kind: &'static str,
    schedule: String,
    trigger: &'static str,
    state: &'static str,
    running: bool,
    created: String,
    started: String,
    finished: String,
    pages: u64,
    new_matches: u64,
    removed: u64,
    errors: u64,
    error: String,
}

impl RunRow {
    fn of(run: &copytrace_store::Run, t: &Texts) -> RunRow {
        let at = |time: Option<DateTime<Utc>>| {
            time.map(|at| at.format("%m-%d %H:%M:%S").to_string())
                .unwrap_or_default()
        };
        RunRow {
            id: run.id,
            kind: t.code(run.kind.as_str()),
            schedule: run.schedule_name.clone().unwrap_or_default(),
            trigger: t.code(run.trigger.as_str()),
            state: t.code(run.state.as_str()),
            running: matches!(run.state, RunState::Queued | RunState::Running),
            created: at(Some(run.created_at)),
            started: at(run.started_at),
            finished: at(run.finished_at),
            pages: run.counts.pages_checked,
            new_matches: run.counts.new_matches,
            removed: run.counts.matches_removed,
            errors: run.counts.errors,
            error: run.error.clone().unwrap_or_default(),
        }
    }
}

#[derive(Template)]
#[template(path = "web/schedule.html")]
struct SchedulePage {
    t: &'static Texts,
    viewer: Viewer,
    name: String,
    path: String,
    kind: &'static str,
    cron: String,
    timezone: String,
    enabled: bool,
    seeds: Vec<String>,
    next_runs: Vec<String>,
    runs: Vec<RunRow>,
    /// Whether to reload the page every few seconds (a run is queued or running).
    live: bool,
}

/// One schedule: its next runs in its time zone, its latest runs, and its actions.
async fn schedule_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(name): Path<String>,
) -> Result<Response, Response> {
    visitor.enter(Area::Crawls)?;
    let t = visitor.t;
    let details = schedules::schedule_details(state.store.as_ref(), &name, Utc::now())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let schedule = details.schedule;
    let next_runs = preview(&schedule.cron, &schedule.timezone, Utc::now()).unwrap_or_default();
    let runs: Vec<RunRow> = details.runs.iter().map(|r| RunRow::of(r, t)).collect();
    Ok(page(SchedulePage {
        t,
        viewer: visitor.viewer(),
        path: format!("/schedules/{}", urlencoded(&schedule.name)),
        name: schedule.name,
        kind: t.code(schedule.kind.as_str()),
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        seeds: schedule.seeds,
        next_runs: if schedule.enabled {
            next_runs
        } else {
            Vec::new()
        },
        live: runs.iter().any(|r| r.running),
        runs,
    }))
}

#[derive(Deserialize)]
struct ActionForm {
    #[serde(default)]
    csrf: String,
}

/// Pauses, resumes, runs now or deletes a schedule.
async fn schedule_action(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((name, action)): Path<(String, String)>,
    Form(form): Form<ActionForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Crawls)?;
    visitor.check_form(&form.csrf)?;
    let store = state.store.as_ref();
    let done = match action.as_str() {
        "pause" => schedules::set_enabled(store, &name, false).await,
        "resume" => schedules::set_enabled(store, &name, true).await,
        "run" => schedules::run_now(store, &name).await.map(|_| ()),
        "delete" => {
            schedules::delete(store, &name)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?;
            return Ok(Redirect::to("/schedules").into_response());
        }
        _ => return Err(visitor.not_found()),
    };
    done.map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(Redirect::to(&format!("/schedules/{}", urlencoded(&name))).into_response())
}

struct JobLine {
    kind: String,
    state: &'static str,
    count: u64,
}

#[derive(Template)]
#[template(path = "web/runs.html")]
struct RunsPage {
    t: &'static Texts,
    viewer: Viewer,
    runs: Vec<RunRow>,
    pager: Pager,
    list_path: &'static str,
    jobs: Vec<JobLine>,
    live: bool,
}

/// Runs the runs page searches and pages through: the newest (a run is a crawl or a dedup pass;
/// a busy deployment makes a few dozen a day).
const RUNS_LISTED: u32 = 2_000;

/// The latest runs with their progress, and the job queue's counts; reloads itself while a run
/// is queued or running.
async fn runs_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(list): Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Crawls)?;
    let t = visitor.t;
    let store = state.store.as_ref();
    let runs = copytrace_service::runs::list_runs(store, None, None, None, RUNS_LISTED)
        .await
        .map_err(failure)?;
    let jobs = copytrace_service::jobs::queue_counts(store)
        .await
        .map_err(failure)?;
    let runs: Vec<RunRow> = runs
        .iter()
        .map(|r| RunRow::of(r, t))
        .filter(|r| list.keeps(&[&r.id.to_string(), r.kind, &r.schedule, r.trigger, r.state]))
        .collect();
    let (runs, pager) = page_of(runs, &list);
    Ok(page(RunsPage {
        t,
        viewer: visitor.viewer(),
        live: runs.iter().any(|r| r.running),
        runs,
        pager,
        list_path: "/runs",
        jobs: jobs
            .into_iter()
            .map(|j| JobLine {
                state: t.code(j.state.as_str()),
                kind: j.kind,
                count: j.count,
            })
            .collect(),
    }))
}
