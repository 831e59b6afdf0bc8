//! Runs: the record of every crawl and dedup, scheduled or manual, from start to end.
//!
//! A run is created with its job (queued) or, when a person runs the work in their own process,
//! already running. While it works, its counts are saved every few seconds by a [`RunTracker`],
//! which in the same round trip learns whether someone asked to cancel it. A failed attempt of a
//! job leaves its run running for the retry; only the last attempt fails it.

use std::time::{Duration, Instant};

use chrono::Utc;
use copytrace_store::{
    Id, Job, NewRun, Run, RunCounts, RunFilter, RunKind, RunState, RunTrigger, Store,
};

use crate::error::Result;

/// How often a run's counts are saved (and cancellation looked for).
const SAVE_EVERY: Duration = Duration::from_secs(2);

/// A run started by a person now.
pub fn manual_run(kind: RunKind) -> NewRun {
    NewRun {
        kind,
        schedule_id: None,
        trigger: RunTrigger::Manual,
        scheduled_for: None,
        created_at: Utc::now(),
    }
}

/// Creates a manual run that starts now, in the caller's process (no job); returns its id.
pub async fn start_manual_run(store: &dyn Store, kind: RunKind) -> Result<Id> {
    Ok(store.create_run(&manual_run(kind), None).await?.0)
}

/// The run a claimed crawl or dedup job works on, started; `None` when there is nothing to do
/// (the run was cancelled or already ended). A job enqueued without a run (by an older
/// version) gets a manual one.
pub async fn begin_run(store: &dyn Store, job: &Job, kind: RunKind) -> Result<Option<Run>> {
    let now = Utc::now();
    let run = match store.run_for_job(job.id).await? {
        Some(run) => store.start_run(run.id, now).await?,
        None => {
            let id = start_manual_run(store, kind).await?;
            store.get_run(id).await?
        }
    };
    if run.state == RunState::Running && run.cancel_requested {
        store
            .finish_run(
                run.id,
                RunState::Cancelled,
                &run.counts,
                &run.stats,
                None,
                now,
            )
            .await?;
        return Ok(None);
    }
    Ok((run.state == RunState::Running).then_some(run))
}

/// Records how a run's attempt ended and returns a one-line summary, or the error again. A
/// failure ends the run only on the last attempt (`last_attempt`); before that the run stays
/// running with the counts so far, and the retry picks it up.
pub async fn end_run(
    store: &dyn Store,
    run_id: Id,
    outcome: Result<RunState, String>,
    counts: &RunCounts,
    stats: &serde_json::Value,
    last_attempt: bool,
) -> std::result::Result<String, String> {
    let now = Utc::now();
    match outcome {
        Ok(state) => {
            store
                .finish_run(run_id, state, counts, stats, None, now)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "run {run_id} {}: {} page(s) checked, {} new match(es), {} removed, {} error(s), \
                 {} reopened, {} alias(es) of removed pages fetched again ({} kept, {} gone)",
                state.as_str(),
                counts.pages_checked,
                counts.new_matches,
                counts.matches_removed,
                counts.errors,
                counts.matches_reopened,
                counts.aliases_checked,
                counts.aliases_kept,
                counts.aliases_removed
            ))
        }
        Err(error) => {
            let result = if last_attempt {
                store
                    .finish_run(run_id, RunState::Failed, counts, stats, Some(&error), now)
                    .await
            } else {
                store
                    .update_run_progress(run_id, counts, stats)
                    .await
                    .map(|_| ())
            };
            if let Err(store_error) = result {
                tracing::warn!(run = run_id, %store_error, "cannot record the run's failure");
            }
            Err(error)
        }
    }
}

/// Saves a running run's counts now and then and hears cancellation requests.
pub struct RunTracker {
    run_id: Id,
    last: Instant,
    cancelled: bool,
}

impl RunTracker {
    /// A tracker of the run `run_id`; the first save happens two seconds from now.
    pub fn new(run_id: Id) -> Self {
        Self {
            run_id,
            last: Instant::now(),
            cancelled: false,
        }
    }

    /// The run tracked.
    pub fn run_id(&self) -> Id {
        self.run_id
    }

    /// Whether a cancellation request was heard.
    pub fn cancelled(&self) -> bool {
        self.cancelled
    }

    /// Saves `counts` and `stats` if the last save is old enough; `true` once the run must
    /// stop (someone asked to cancel it).
    pub async fn save(
        &mut self,
        store: &dyn Store,
        counts: &RunCounts,
        stats: &serde_json::Value,
    ) -> Result<bool> {
        if self.cancelled || self.last.elapsed() < SAVE_EVERY {
            return Ok(self.cancelled);
        }
        self.last = Instant::now();
        self.cancelled = store
            .update_run_progress(self.run_id, counts, stats)
            .await?;
        Ok(self.cancelled)
    }
}

/// Runs, newest first, filtered; a schedule is named (not numbered) as people know it.
pub async fn list_runs(
    store: &dyn Store,
    kind: Option<RunKind>,
    state: Option<RunState>,
    schedule: Option<&str>,
    limit: u32,
) -> Result<Vec<Run>> {
    let schedule_id = match schedule {
        Some(name) => Some(store.get_schedule_by_name(name).await?.id),
        None => None,
    };
    Ok(store
        .list_runs(&RunFilter {
            kind,
            schedule_id,
            state,
            limit: Some(limit),
        })
        .await?)
}

/// Asks a run to stop: a queued run never starts, a running one stops at its next page.
/// Returns the run's state after the request.
pub async fn cancel_run(store: &dyn Store, run_id: Id) -> Result<RunState> {
    Ok(store.request_run_cancel(run_id, Utc::now()).await?)
}
