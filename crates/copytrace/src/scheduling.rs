//! What `copytrace schedule`, `copytrace runs` and `copytrace dedup` do, and the scheduler's
//! tick inside `copytrace serve`.
//!
//! A schedule is stored with its cron expression and time zone as the operator wrote them,
//! after both were validated (a bad expression is refused naming the field at fault, and
//! nothing is stored). Its crawl settings are the `crawl` command's, kept as the crawl job's
//! JSON without the seeds, so a scheduled crawl behaves exactly like a manual one.
//!
//! The daily dedup run is a built-in schedule, [`DEDUP_SCHEDULE`], of kind `dedup`, that
//! `serve` keeps in step with its settings (`COPYTRACE_DEDUP_CRON`, default 03:00, in
//! `COPYTRACE_TIMEZONE`). Operators pause, resume and run it like any other.

use std::fmt::Write as _;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use copytrace_scheduler::cron::CronSchedule;
use copytrace_store::{Id, NewSchedule, Run, RunFilter, RunKind, RunState, Schedule, Store};
use url::Url;

use crate::dedup::{self, DedupEnd, DedupJob};
use crate::jobs::{self, CrawlJob, MatchHandler};

/// Name of the built-in daily dedup schedule.
pub const DEDUP_SCHEDULE: &str = "daily-dedup";
/// Default cron expression of the daily dedup run: 03:00 every day.
pub const DEFAULT_DEDUP_CRON: &str = "0 3 * * *";

/// Validates seed URLs: absolute `http`/`https` URLs with a host.
pub fn parse_seeds(urls: &[String]) -> Result<Vec<Url>> {
    urls.iter()
        .map(|raw| {
            let url = Url::parse(raw).with_context(|| format!("invalid URL {raw:?}"))?;
            if !matches!(url.scheme(), "http" | "https") {
                bail!("invalid URL {raw:?}: only http and https can be crawled");
            }
            if url.host_str().is_none_or(str::is_empty) {
                bail!("invalid URL {raw:?}: no host");
            }
            Ok(url)
        })
        .collect()
}

/// Checks a cron expression and time zone as the scheduler will read them.
pub fn check_cron(expression: &str, timezone: &str) -> Result<CronSchedule> {
    Ok(CronSchedule::parse(expression, timezone)?)
}

/// Creates a crawl schedule after validating everything; returns it as stored.
pub async fn add_crawl_schedule(
    store: &dyn Store,
    name: &str,
    cron: &str,
    timezone: &str,
    owner: Option<String>,
    crawl: &CrawlJob,
) -> Result<Schedule> {
    check_cron(cron, timezone)?;
    parse_seeds(&crawl.seeds)?;
    let mut config = serde_json::to_value(crawl)?;
    let seeds = config
        .as_object_mut()
        .and_then(|o| o.remove("seeds"))
        .context("a crawl job serializes as an object")?;
    let seeds: Vec<String> = serde_json::from_value(seeds)?;
    store
        .create_schedule(&NewSchedule {
            name: name.trim().to_owned(),
            kind: RunKind::Crawl,
            cron: cron.trim().to_owned(),
            timezone: timezone.trim().to_owned(),
            seeds,
            config,
            owner,
        })
        .await
        .with_context(|| format!("cannot add schedule {name:?}"))?;
    Ok(store.get_schedule_by_name(name.trim()).await?)
}

/// Creates or updates the built-in daily dedup schedule from the settings.
pub async fn ensure_dedup_schedule(
    store: &dyn Store,
    cron: &str,
    timezone: &str,
    job: &DedupJob,
) -> Result<Id> {
    check_cron(cron, timezone).context("invalid dedup schedule (COPYTRACE_DEDUP_CRON)")?;
    let schedule = NewSchedule {
        name: DEDUP_SCHEDULE.to_owned(),
        kind: RunKind::Dedup,
        cron: cron.trim().to_owned(),
        timezone: timezone.trim().to_owned(),
        seeds: Vec::new(),
        config: serde_json::to_value(job)?,
        owner: None,
    };
    // Safe when two `serve` processes start together: the store settles the race.
    Ok(store.ensure_schedule(&schedule).await?)
}

/// Starts a schedule's run now, whatever its cron says (even when paused).
pub async fn run_now(store: &dyn Store, name: &str) -> Result<(Id, Id)> {
    let schedule = store.get_schedule_by_name(name).await?;
    let job = jobs::job_for_schedule(&schedule, Utc::now())?;
    let mut run = jobs::manual_run(schedule.kind);
    run.schedule_id = Some(schedule.id);
    let (run, job) = store.create_run(&run, Some(&job)).await?;
    Ok((run, job.context("the store created no job")?))
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

/// The next tick of a schedule, if its expression still parses.
fn next_tick(schedule: &Schedule, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    CronSchedule::parse(&schedule.cron, &schedule.timezone)
        .ok()?
        .next_after(now)
}

/// `schedule list` as text.
pub fn schedules_table(schedules: &[Schedule], now: DateTime<Utc>) -> String {
    let mut out = String::new();
    for s in schedules {
        let _ = writeln!(
            out,
            "{:<20} {:<5} {:<8} {:<18} {:<16} next {} UTC  last {}  {}",
            s.name,
            s.kind.as_str(),
            if s.enabled { "enabled" } else { "paused" },
            s.cron,
            s.timezone,
            if s.enabled {
                time(next_tick(s, now))
            } else {
                "-".to_owned()
            },
            time(s.last_fired_at),
            s.seeds.join(" ")
        );
    }
    let _ = writeln!(out, "{} schedule(s)", schedules.len());
    out
}

/// `schedule show` as JSON: the schedule, its next ticks and its latest runs.
pub async fn schedule_details(
    store: &dyn Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<serde_json::Value> {
    let schedule = store.get_schedule_by_name(name).await?;
    let upcoming = CronSchedule::parse(&schedule.cron, &schedule.timezone)
        .map(|c| c.upcoming(now, 5))
        .unwrap_or_default();
    let runs = store
        .list_runs(&RunFilter {
            schedule_id: Some(schedule.id),
            limit: Some(10),
            ..RunFilter::default()
        })
        .await?;
    Ok(serde_json::json!({
        "schedule": schedule,
        "next": upcoming,
        "runs": runs,
    }))
}

/// `schedule show` as text.
pub fn schedule_details_text(details: &serde_json::Value) -> Result<String> {
    let schedule: Schedule = serde_json::from_value(details["schedule"].clone())?;
    let next: Vec<DateTime<Utc>> = serde_json::from_value(details["next"].clone())?;
    let runs: Vec<Run> = serde_json::from_value(details["runs"].clone())?;
    let mut out = String::new();
    let _ = writeln!(out, "name:       {}", schedule.name);
    let _ = writeln!(out, "kind:       {}", schedule.kind.as_str());
    let _ = writeln!(
        out,
        "state:      {}",
        if schedule.enabled {
            "enabled"
        } else {
            "paused"
        }
    );
    let _ = writeln!(out, "cron:       {} ({})", schedule.cron, schedule.timezone);
    if !schedule.seeds.is_empty() {
        let _ = writeln!(out, "seeds:      {}", schedule.seeds.join(" "));
    }
    let _ = writeln!(out, "settings:   {}", schedule.config);
    if let Some(owner) = &schedule.owner {
        let _ = writeln!(out, "owner:      {owner}");
    }
    let _ = writeln!(out, "last fired: {} UTC", time(schedule.last_fired_at));
    let tz = copytrace_scheduler::cron::parse_timezone(&schedule.timezone).ok();
    for t in &next {
        let local = tz.map_or_else(String::new, |tz| {
            format!(" ({})", t.with_timezone(&tz).format("%Y-%m-%d %H:%M %Z"))
        });
        let _ = writeln!(
            out,
            "next:       {} UTC{local}",
            t.format("%Y-%m-%d %H:%M:%S")
        );
    }
    if !runs.is_empty() {
        out.push_str("runs:\n");
        out.push_str(&runs_table(&runs));
    }
    Ok(out)
}

/// `runs list` as text.
pub fn runs_table(runs: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>6}  {:<5} {:<9} {:<9} {:<16} {:<19} {:<19} {:<19} {:>7} {:>5} {:>7} {:>6}",
        "run",
        "kind",
        "trigger",
        "state",
        "schedule",
        "scheduled for",
        "started",
        "finished",
        "pages",
        "new",
        "removed",
        "errors"
    );
    for run in runs {
        let state = if run.cancel_requested && run.state == RunState::Running {
            "stopping"
        } else {
            run.state.as_str()
        };
        let _ = writeln!(
            out,
            "{:>6}  {:<5} {:<9} {:<9} {:<16} {:<19} {:<19} {:<19} {:>7} {:>5} {:>7} {:>6}",
            run.id,
            run.kind.as_str(),
            run.trigger.as_str(),
            state,
            run.schedule_name.as_deref().unwrap_or("-"),
            time(run.scheduled_for),
            time(run.started_at),
            time(run.finished_at),
            run.counts.pages_checked,
            run.counts.new_matches,
            run.counts.matches_removed,
            run.counts.errors
        );
        if let Some(error) = &run.error {
            let _ = writeln!(out, "        error: {error}");
        }
    }
    out
}

/// Runs a dedup run in this process (`copytrace dedup`), recorded like a scheduled one.
pub async fn dedup_now(
    store: &dyn Store,
    matcher: &MatchHandler,
    job: &DedupJob,
    progress: &indicatif::ProgressBar,
) -> Result<Run> {
    let (run_id, _) = store
        .create_run(&jobs::manual_run(RunKind::Dedup), None)
        .await?;
    let mut counts = copytrace_store::RunCounts::default();
    progress.set_message(format!("dedup run {run_id}"));
    let outcome = dedup::run_dedup(store, matcher, run_id, job, &mut counts).await;
    let (state, error) = match &outcome {
        Ok(DedupEnd::Finished) => (RunState::Succeeded, None),
        Ok(DedupEnd::Cancelled) => (RunState::Cancelled, None),
        Err(error) => (RunState::Failed, Some(format!("{error:#}"))),
    };
    store
        .finish_run(
            run_id,
            state,
            &counts,
            &serde_json::Value::Null,
            error.as_deref(),
            Utc::now(),
        )
        .await?;
    outcome?;
    Ok(store.get_run(run_id).await?)
}
