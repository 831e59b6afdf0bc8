//! `copytrace review`: the review queue and people's decisions on matches.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use copytrace_service::holders;
use copytrace_service::review::{self, Decision, Reviewer};
use copytrace_store::MatchRecord;

use super::Globals;
use super::filters::ReviewArg;

/// `copytrace review …`
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// List matches waiting for a person (by default), or in other review states, strongest
    /// first. Matches scoring at least the auto-confirm level (`--auto-confirm-score` of
    /// `match`) are confirmed without a person and are not in the queue.
    List {
        /// Review states to list (repeatable, or comma-separated).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ReviewArg::Pending])]
        review: Vec<ReviewArg>,
        /// Only matches of this rights holder's works.
        #[arg(long, value_name = "NAME")]
        rights_holder: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Confirm matches: they are reported infringements (exports, reports, notices).
    Confirm(DecideArgs),
    /// Reject matches as false positives: never reported again unless the page changes
    /// substantially (another text carrying half as much again of the work, and at least 200
    /// more characters).
    Reject(DecideArgs),
    /// Mark matches licensed: the page may carry the work; never reported.
    License(DecideArgs),
    /// Put matches back in the review queue.
    Reopen(DecideArgs),
    /// Show every decision taken on a match's page × work pair: who, when, why.
    History {
        /// The match id.
        id: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The matches to decide on and the decision's record.
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// Match ids (from `review list`, or the `id` of the JSON export).
    #[arg(required = true, value_name = "ID")]
    ids: Vec<i64>,
    /// Why (kept with the decision).
    #[arg(long, default_value = "")]
    note: String,
    /// Who decides, as recorded (default: `cli:` and the login name).
    #[arg(long = "by", value_name = "NAME")]
    actor: Option<String>,
}

/// Runs `copytrace review …`.
pub async fn run(globals: &Globals, command: ReviewCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let (args, decision) = match command {
        ReviewCommand::List {
            review: states,
            rights_holder,
            json,
        } => {
            let holder = match rights_holder {
                Some(name) => Some(holders::find(store.as_ref(), &name).await?.id),
                None => None,
            };
            let listed = review::queue(store.as_ref(), holder, &ReviewArg::states(&states)).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&listed)?);
            } else {
                for record in &listed {
                    println!("{}", queue_line(record));
                }
                println!("{} match(es)", listed.len());
            }
            return Ok(ExitCode::SUCCESS);
        }
        ReviewCommand::History { id, json } => {
            let reviewer = operator(None);
            let trail = review::history(store.as_ref(), &reviewer, id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&trail)?);
            } else {
                for d in &trail {
                    println!(
                        "{}  {:<9}  {}{}  {}",
                        d.decided_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        d.review.as_str(),
                        d.actor,
                        if d.automatic { " (certainty gate)" } else { "" },
                        d.note
                    );
                }
                println!("{} decision(s)", trail.len());
            }
            return Ok(ExitCode::SUCCESS);
        }
        ReviewCommand::Confirm(args) => (args, Decision::Confirm),
        ReviewCommand::Reject(args) => (args, Decision::Reject),
        ReviewCommand::License(args) => (args, Decision::License),
        ReviewCommand::Reopen(args) => (args, Decision::Reopen),
    };
    let reviewer = operator(args.actor);
    review::decide(store.as_ref(), &reviewer, &args.ids, decision, &args.note).await?;
    println!(
        "{} match(es) now {} (by {})",
        args.ids.len(),
        decision.review().as_str(),
        reviewer.actor
    );
    Ok(ExitCode::SUCCESS)
}

/// An operator at the command line: every rights holder's matches, recorded as `cli:LOGIN`.
fn operator(actor: Option<String>) -> Reviewer {
    Reviewer {
        actor: actor.unwrap_or_else(|| format!("cli:{}", login())),
        rights_holder_id: None,
    }
}

/// Who runs the command: `USER` (or `LOGNAME`) as the shell sets it, else the login name of the
/// process's user id from the system's user database, else `uid:N`. Cron jobs and containers
/// often set neither variable, and a decision must still name who took it.
pub(crate) fn login() -> String {
    let from_env = std::env::var("USER")
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::env::var("LOGNAME")
                .ok()
                .filter(|name| !name.is_empty())
        });
    from_env.unwrap_or_else(|| {
        let uid = nix::unistd::Uid::current();
        match nix::unistd::User::from_uid(uid) {
            Ok(Some(user)) => user.name,
            Ok(None) | Err(_) => format!("uid:{uid}"),
        }
    })
}

/// One match of the queue on one line.
fn queue_line(record: &MatchRecord) -> String {
    let chapters = copytrace_analytics::export::chapter_list(record);
    format!(
        "{:>7}  {:<9}  score {:.2}  {:>6} chars  {}  ←  {} {}{}",
        record.id,
        record.review.as_str(),
        record.score,
        record.copied_chars,
        record.page_url,
        record.work_external_id,
        record.work_title,
        if chapters.is_empty() {
            String::new()
        } else {
            format!(" [{chapters}]")
        }
    )
}
