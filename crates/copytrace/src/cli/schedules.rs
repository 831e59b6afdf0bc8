//! `copytrace schedule`: cron schedules of crawls and the daily dedup run, and the tables that
//! show schedules and runs.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Subcommand;
use copytrace_service::CrawlSettings;
use copytrace_service::crawl::parse_seeds;
use copytrace_service::schedules::{self, CrawlSchedule, ScheduleDetails, next_tick};
use copytrace_store::{Run, RunState, Schedule};
use url::Url;

use super::Globals;

/// `copytrace schedule …`
#[derive(Debug, Subcommand)]
pub enum ScheduleCommand {
    /// Schedule a crawl: its seeds, scope and limits as for `crawl`, fired by a cron
    /// expression (`0 3 * * *`, or six fields with seconds first) in a time zone.
    Add {
        /// Unique name.
        #[arg(long)]
        name: String,
        /// Cron expression: minute hour day-of-month month day-of-week (0 or 7 is Sunday), or
        /// six fields with seconds first.
        #[arg(long)]
        cron: String,
        /// IANA time zone the expression is read in.
        #[arg(long, env = "COPYTRACE_TIMEZONE", default_value = "UTC")]
        tz: String,
        /// Who owns it (a person or team).
        #[arg(long)]
        owner: Option<String>,
        /// Print the stored schedule as JSON.
        #[arg(long)]
        json: bool,
        /// Scope and limits of each crawl.
        #[command(flatten)]
        settings: Box<CrawlSettings>,
        /// Seed URLs (http or https).
        #[arg(required = true)]
        urls: Vec<String>,
    },
    /// List schedules with their next and last tick.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a schedule, its next ticks and its latest runs.
    Show {
        /// Schedule name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop a schedule from firing (ticks while paused are not caught up).
    Pause {
        /// Schedule name.
        name: String,
    },
    /// Let a paused schedule fire again from its next tick.
    Resume {
        /// Schedule name.
        name: String,
    },
    /// Delete a schedule (its runs stay in the history).
    Rm {
        /// Schedule name.
        name: String,
    },
    /// Start a schedule's run now, as a job.
    RunNow {
        /// Schedule name.
        name: String,
    },
}

/// Runs `copytrace schedule …`.
pub async fn run(globals: &Globals, command: ScheduleCommand) -> Result<ExitCode> {
    let now = Utc::now();
    match command {
        ScheduleCommand::Add {
            name,
            cron,
            tz,
            owner,
            json,
            settings,
            urls,
        } => {
            // Everything is checked before anything is stored.
            schedules::check_cron(&cron, &tz)?;
            let seeds = parse_seeds(&urls)?;
            let store = globals.store().await?;
            let schedule = schedules::add_crawl_schedule(
                store.as_ref(),
                &CrawlSchedule {
                    name,
                    cron,
                    timezone: tz,
                    owner,
                    seeds: seeds.iter().map(Url::to_string).collect(),
                    settings: *settings,
                },
            )
            .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&schedule)?);
            } else {
                print!("{}", schedules_table(std::slice::from_ref(&schedule), now));
            }
        }
        ScheduleCommand::List { json } => {
            let schedules = globals.store().await?.list_schedules().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&schedules)?);
            } else {
                print!("{}", schedules_table(&schedules, now));
            }
        }
        ScheduleCommand::Show { name, json } => {
            let store = globals.store().await?;
            let details = schedules::schedule_details(store.as_ref(), &name, now).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&details)?);
            } else {
                print!("{}", schedule_details_text(&details));
            }
        }
        ScheduleCommand::Pause { name } => {
            schedules::set_enabled(globals.store().await?.as_ref(), &name, false).await?;
            println!("schedule {name:?} paused");
        }
        ScheduleCommand::Resume { name } => {
            schedules::set_enabled(globals.store().await?.as_ref(), &name, true).await?;
            println!("schedule {name:?} resumed");
        }
        ScheduleCommand::Rm { name } => {
            schedules::delete(globals.store().await?.as_ref(), &name).await?;
            println!("schedule {name:?} deleted");
        }
        ScheduleCommand::RunNow { name } => {
            let (run, job) = schedules::run_now(globals.store().await?.as_ref(), &name).await?;
            println!("schedule {name:?}: run {run} enqueued as job {job}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
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

/// `schedule show` as text.
pub fn schedule_details_text(details: &ScheduleDetails) -> String {
    let ScheduleDetails {
        schedule,
        next,
        runs,
    } = details;
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
    for t in next {
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
        out.push_str(&runs_table(runs));
    }
    out
}

/// `runs list` as text: per run its pages, new, removed and reopened matches, the aliases of
/// removed pages it fetched again (`aliases`), of which still showed the copy (`kept`) or were
/// gone with their page (`gone`), and its errors.
pub fn runs_table(runs: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>6}  {:<5} {:<9} {:<9} {:<16} {:<19} {:<19} {:<19} {:>7} {:>5} {:>7} {:>8} {:>7} {:>5} {:>5} {:>6}",
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
        "reopened",
        "aliases",
        "kept",
        "gone",
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
            "{:>6}  {:<5} {:<9} {:<9} {:<16} {:<19} {:<19} {:<19} {:>7} {:>5} {:>7} {:>8} {:>7} {:>5} {:>5} {:>6}",
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
            run.counts.matches_reopened,
            run.counts.aliases_checked,
            run.counts.aliases_kept,
            run.counts.aliases_removed,
            run.counts.errors
        );
        if let Some(error) = &run.error {
            let _ = writeln!(out, "        error: {error}");
        }
    }
    out
}
