//! `copytrace jobs` and `copytrace runs`: the durable queue and the history of runs.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use copytrace_service::runs;
use copytrace_store::{JobFilter, JobState, RunKind, RunState};

use super::Globals;
use super::schedules::runs_table;

/// `copytrace jobs …`
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// List jobs, newest first.
    List {
        /// Only jobs in this state.
        #[arg(long, value_enum)]
        state: Option<JobStateArg>,
        /// Only jobs of this kind (crawl, match).
        #[arg(long)]
        kind: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Count jobs by kind and state.
    Stats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Put dead jobs back in the queue with fresh attempts (after fixing what killed them).
    Retry {
        /// Job ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
}

/// Job states on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum JobStateArg {
    /// Waiting for a worker.
    Queued,
    /// Claimed by a worker.
    Running,
    /// Finished.
    Done,
    /// Out of attempts.
    Dead,
}

impl From<JobStateArg> for JobState {
    fn from(state: JobStateArg) -> Self {
        match state {
            JobStateArg::Queued => JobState::Queued,
            JobStateArg::Running => JobState::Running,
            JobStateArg::Done => JobState::Done,
            JobStateArg::Dead => JobState::Dead,
        }
    }
}

/// Runs `copytrace jobs …`.
pub async fn run_jobs(globals: &Globals, command: JobsCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    match command {
        JobsCommand::List {
            state,
            kind,
            limit,
            json,
        } => {
            let jobs = store
                .list_jobs(&JobFilter {
                    kind,
                    state: state.map(JobState::from),
                    limit: Some(limit),
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&jobs)?);
                return Ok(ExitCode::SUCCESS);
            }
            for job in &jobs {
                println!(
                    "{:>8}  {:<6} {:<8} attempts {}/{}  run at {}  {}",
                    job.id,
                    job.kind,
                    job.state.as_str(),
                    job.attempts,
                    job.max_attempts,
                    job.run_at.format("%Y-%m-%d %H:%M:%S"),
                    job.last_error.as_deref().unwrap_or("")
                );
            }
            println!("{} job(s)", jobs.len());
        }
        JobsCommand::Stats { json } => {
            let counts = store.job_counts().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&counts)?);
                return Ok(ExitCode::SUCCESS);
            }
            for count in &counts {
                println!(
                    "{:<8} {:<8} {}",
                    count.kind,
                    count.state.as_str(),
                    count.count
                );
            }
        }
        JobsCommand::Retry { ids } => {
            for id in ids {
                store
                    .requeue_dead_job(id, chrono::Utc::now())
                    .await
                    .with_context(|| format!("cannot retry job {id}"))?;
                println!("job {id} queued again");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Run kinds on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RunKindArg {
    /// Crawls.
    Crawl,
    /// Dedup runs.
    Dedup,
}

/// Run states on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RunStateArg {
    /// Waiting for its job.
    Queued,
    /// Working.
    Running,
    /// Ended well.
    Succeeded,
    /// Ended on an error.
    Failed,
    /// Stopped on request.
    Cancelled,
}

/// `copytrace runs …`
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List crawl and dedup runs, newest first.
    List {
        /// Only runs of this kind.
        #[arg(long, value_enum)]
        kind: Option<RunKindArg>,
        /// Only runs in this state.
        #[arg(long, value_enum)]
        state: Option<RunStateArg>,
        /// Only runs of this schedule.
        #[arg(long)]
        schedule: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one run with its statistics.
    Show {
        /// Run id.
        id: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a run: a queued run never starts, a running one stops at its next page.
    Cancel {
        /// Run id.
        id: i64,
    },
}

/// Runs `copytrace runs …`.
pub async fn run_runs(globals: &Globals, command: RunsCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    match command {
        RunsCommand::List {
            kind,
            state,
            schedule,
            limit,
            json,
        } => {
            let kind = kind.map(|k| match k {
                RunKindArg::Crawl => RunKind::Crawl,
                RunKindArg::Dedup => RunKind::Dedup,
            });
            let state = state.map(|s| match s {
                RunStateArg::Queued => RunState::Queued,
                RunStateArg::Running => RunState::Running,
                RunStateArg::Succeeded => RunState::Succeeded,
                RunStateArg::Failed => RunState::Failed,
                RunStateArg::Cancelled => RunState::Cancelled,
            });
            let runs =
                runs::list_runs(store.as_ref(), kind, state, schedule.as_deref(), limit).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&runs)?);
            } else {
                print!("{}", runs_table(&runs));
                println!("{} run(s)", runs.len());
            }
        }
        RunsCommand::Show { id, json } => {
            let run = store.get_run(id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&run)?);
            } else {
                print!("{}", runs_table(std::slice::from_ref(&run)));
                if !run.stats.is_null() {
                    println!("statistics: {}", serde_json::to_string_pretty(&run.stats)?);
                }
            }
        }
        RunsCommand::Cancel { id } => match runs::cancel_run(store.as_ref(), id).await? {
            RunState::Cancelled => println!("run {id} cancelled"),
            _ => println!("run {id} will stop at its next page"),
        },
    }
    Ok(ExitCode::SUCCESS)
}
