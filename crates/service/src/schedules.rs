//! Schedules: crawls fired by cron expressions, and the built-in daily dedup run.
//!
//! A schedule is stored with its cron expression and time zone as the operator wrote them,
//! after both were validated (a bad expression is refused naming the field at fault, and
//! nothing is stored). Its crawl settings are a [`CrawlSettings`], kept beside the seeds, so a
//! scheduled crawl behaves exactly like a manual one.
//!
//! The daily dedup run is a built-in schedule, [`DEDUP_SCHEDULE`], of kind `dedup`, that
//! `serve` keeps in step with its settings. Operators pause, resume and run it like any other.

use chrono::{DateTime, Utc};
use copytrace_scheduler::cron::CronSchedule;
use copytrace_store::{Id, NewSchedule, Run, RunFilter, RunKind, Schedule, Store};
use serde::Serialize;

use crate::crawl::{parse_seeds, vet_seeds};
use crate::dedup::DedupJob;
use crate::error::{Context, Result, ServiceError};
use crate::jobs::job_for_schedule;
use crate::runs::manual_run;
use crate::settings::CrawlSettings;

/// Name of the built-in daily dedup schedule.
pub const DEDUP_SCHEDULE: &str = "daily-dedup";
/// Default cron expression of the daily dedup run: 03:00 every day.
pub const DEFAULT_DEDUP_CRON: &str = "0 3 * * *";

/// Checks a cron expression and time zone as the scheduler will read them.
pub fn check_cron(expression: &str, timezone: &str) -> Result<CronSchedule> {
    Ok(CronSchedule::parse(expression, timezone)?)
}

/// A crawl schedule to create.
#[derive(Debug, Clone)]
pub struct CrawlSchedule {
    /// Unique name.
    pub name: String,
    /// Cron expression (five fields, or six with seconds first).
    pub cron: String,
    /// IANA time zone the expression is read in.
    pub timezone: String,
    /// Who owns it.
    pub owner: Option<String>,
    /// Seed URLs.
    pub seeds: Vec<String>,
    /// Scope and limits of each crawl.
    pub settings: CrawlSettings,
}

/// Creates a crawl schedule after validating everything (seeds at non-public addresses are
/// refused unless its settings allow them, [`vet_seeds`]); returns it as stored.
pub async fn add_crawl_schedule(store: &dyn Store, new: &CrawlSchedule) -> Result<Schedule> {
    check_cron(&new.cron, &new.timezone)?;
    vet_seeds(&parse_seeds(&new.seeds)?, &new.settings).await?;
    let name = new.name.trim();
    store
        .create_schedule(&NewSchedule {
            name: name.to_owned(),
            kind: RunKind::Crawl,
            cron: new.cron.trim().to_owned(),
            timezone: new.timezone.trim().to_owned(),
            seeds: new.seeds.clone(),
            config: serde_json::to_value(&new.settings)?,
            owner: new.owner.clone(),
        })
        .await
        .with_context(|| format!("cannot add schedule {:?}", new.name))?;
    Ok(store.get_schedule_by_name(name).await?)
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

/// Starts a schedule's run now, whatever its cron says (even when paused); returns the run's
/// and the job's ids.
pub async fn run_now(store: &dyn Store, name: &str) -> Result<(Id, Id)> {
    let schedule = store.get_schedule_by_name(name).await?;
    let job = job_for_schedule(&schedule, Utc::now())?;
    let mut run = manual_run(schedule.kind);
    run.schedule_id = Some(schedule.id);
    let (run, job) = store.create_run(&run, Some(&job)).await?;
    Ok((
        run,
        job.ok_or_else(|| ServiceError::unavailable("the store created no job"))?,
    ))
}

/// Pauses (`enabled` false) or resumes a schedule by name.
pub async fn set_enabled(store: &dyn Store, name: &str, enabled: bool) -> Result<()> {
    let schedule = store.get_schedule_by_name(name).await?;
    Ok(store.set_schedule_enabled(schedule.id, enabled).await?)
}

/// Deletes a schedule by name (its runs stay in the history).
pub async fn delete(store: &dyn Store, name: &str) -> Result<()> {
    let schedule = store.get_schedule_by_name(name).await?;
    Ok(store.delete_schedule(schedule.id).await?)
}

/// Every schedule, by name.
pub async fn list(store: &dyn Store) -> Result<Vec<Schedule>> {
    Ok(store.list_schedules().await?)
}

/// The next tick of a schedule, if its expression still parses.
pub fn next_tick(schedule: &Schedule, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    CronSchedule::parse(&schedule.cron, &schedule.timezone)
        .ok()?
        .next_after(now)
}

/// A schedule with its next ticks and its latest runs.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduleDetails {
    /// The schedule.
    pub schedule: Schedule,
    /// Its next five ticks.
    pub next: Vec<DateTime<Utc>>,
    /// Its ten latest runs, newest first.
    pub runs: Vec<Run>,
}

/// A schedule, its next ticks and its latest runs.
pub async fn schedule_details(
    store: &dyn Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<ScheduleDetails> {
    let schedule = store.get_schedule_by_name(name).await?;
    let next = CronSchedule::parse(&schedule.cron, &schedule.timezone)
        .map(|c| c.upcoming(now, 5))
        .unwrap_or_default();
    let runs = store
        .list_runs(&RunFilter {
            schedule_id: Some(schedule.id),
            limit: Some(10),
            ..RunFilter::default()
        })
        .await?;
    Ok(ScheduleDetails {
        schedule,
        next,
        runs,
    })
}
