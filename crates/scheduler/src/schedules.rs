//! Firing due schedules: one scheduler tick.
//!
//! Each tick reads the enabled schedules and fires, for each, the latest cron tick since the
//! one it fired last, or since the schedule was created, changed or resumed (`updated_at`):
//! ticks that passed while it was paused are not owed. A tick is fired through
//! [`Store::fire_schedule`], a compare-and-set on the schedule's `last_fired_at` that creates
//! the run and its job in the same transaction, so:
//!
//! * a tick is enqueued **at most once**, even if two schedulers race (the leader election of
//!   [`crate::leader`] normally keeps a second one from running at all);
//! * ticks missed while no scheduler ran (the deployment was down) are **caught up once**: only
//!   the latest is fired, marked [`RunTrigger::CatchUp`];
//! * a tick is never lost between "fired" and "enqueued": both happen or neither does.
//!
//! The current time is an argument, so a test drives a month of schedule with a hand-moved
//! [`crate::Clock`] and no sleeping.

use chrono::{DateTime, Utc};
use copytrace_store::{
    FiredRun, Id, NewJob, NewRun, RunTrigger, Schedule, ScheduleFire, Store, StoreError,
};

use crate::cron::CronSchedule;

/// Builds the job that carries a schedule's run (the scheduler does not know job payloads).
pub trait JobFactory: Send + Sync {
    /// The job to enqueue when `schedule` fires the tick `scheduled_for`. An error leaves the
    /// tick unfired (and is reported in [`TickReport::errors`]), so a later tick retries.
    fn job_for(&self, schedule: &Schedule, scheduled_for: DateTime<Utc>) -> Result<NewJob, String>;
}

/// One fired tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    /// The schedule.
    pub schedule_id: Id,
    /// Its name.
    pub schedule_name: String,
    /// The cron tick fired.
    pub scheduled_for: DateTime<Utc>,
    /// Scheduled or catch-up.
    pub trigger: RunTrigger,
    /// Earlier ticks folded into this one.
    pub missed: u32,
    /// The run and job created.
    pub run: FiredRun,
}

/// What one tick did.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Ticks fired here.
    pub fired: Vec<Fired>,
    /// Due ticks another scheduler fired first.
    pub lost_races: usize,
    /// Schedules that could not be evaluated or fired, with the reason.
    pub errors: Vec<(String, String)>,
}

/// Fires every enabled schedule whose next tick has come by `now`. Errors of one schedule
/// (an expression that no longer parses, a job that cannot be built) are reported and do not
/// stop the others; only a failure to list the schedules is an `Err`.
pub async fn fire_due_schedules(
    store: &dyn Store,
    jobs: &dyn JobFactory,
    now: DateTime<Utc>,
) -> Result<TickReport, StoreError> {
    let mut report = TickReport::default();
    for schedule in store.list_schedules().await? {
        if !schedule.enabled {
            continue;
        }
        match fire_one(store, jobs, &schedule, now).await {
            Ok(Some(Outcome::Fired(fired))) => {
                tracing::info!(
                    schedule = %fired.schedule_name,
                    scheduled_for = %fired.scheduled_for,
                    trigger = fired.trigger.as_str(),
                    missed = fired.missed,
                    run = fired.run.run_id,
                    "schedule fired"
                );
                report.fired.push(fired);
            }
            Ok(Some(Outcome::LostRace)) => report.lost_races += 1,
            Ok(None) => {}
            Err(reason) => {
                tracing::warn!(schedule = %schedule.name, %reason, "schedule not fired");
                report.errors.push((schedule.name.clone(), reason));
            }
        }
    }
    Ok(report)
}

enum Outcome {
    Fired(Fired),
    LostRace,
}

async fn fire_one(
    store: &dyn Store,
    jobs: &dyn JobFactory,
    schedule: &Schedule,
    now: DateTime<Utc>,
) -> Result<Option<Outcome>, String> {
    let cron =
        CronSchedule::parse(&schedule.cron, &schedule.timezone).map_err(|e| e.to_string())?;
    // Ticks before the schedule existed, while it was paused, or of its previous expression
    // are not owed: count from its last change when that is later than its last fire.
    let since = schedule
        .last_fired_at
        .map_or(schedule.updated_at, |fired| fired.max(schedule.updated_at));
    let Some(due) = cron.due(since, now) else {
        return Ok(None);
    };
    let trigger = if due.missed > 0 {
        RunTrigger::CatchUp
    } else {
        RunTrigger::Schedule
    };
    let job = jobs.job_for(schedule, due.at)?;
    let fire = ScheduleFire {
        schedule_id: schedule.id,
        expected_last_fired_at: schedule.last_fired_at,
        scheduled_for: due.at,
        run: NewRun {
            kind: schedule.kind,
            schedule_id: Some(schedule.id),
            trigger,
            scheduled_for: Some(due.at),
            created_at: now,
        },
        job,
    };
    match store.fire_schedule(&fire).await {
        Ok(Some(run)) => Ok(Some(Outcome::Fired(Fired {
            schedule_id: schedule.id,
            schedule_name: schedule.name.clone(),
            scheduled_for: due.at,
            trigger,
            missed: due.missed,
            run,
        }))),
        Ok(None) => Ok(Some(Outcome::LostRace)),
        // Deleted since it was listed.
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}
