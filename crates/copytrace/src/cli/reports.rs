//! `copytrace report weekly`: the weekly reports, printed, written as a workbook, or mailed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use chrono::{NaiveDate, Utc};
use clap::Subcommand;
use copytrace_analytics::export::ExportOptions;
use copytrace_service::holders;
use copytrace_service::reports::{self, Outcome, Period, Selection};
use copytrace_store::ReportAudience;

use super::{EXIT_PARTIAL, Globals};

/// `copytrace report …`
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// The weekly reports of one period: per rights holder (its works only, to its profile's
    /// e-mail, in its profile's language) and for staff (every holder's works, to
    /// --report-staff-email): new copies, removals, removal rate by site, time to piracy of
    /// works published in the period, pending reviews and notices awaiting follow-up, the
    /// figures `copytrace stats … --json` gives for the same period. Without --send, prints
    /// what would be sent; with it, mails each report at most once per audience and period
    /// (HTML with a text alternative, the XLSX workbook attached), through --smtp-url.
    /// `serve` sends the previous week's once a week (--weekly-report-cron).
    Weekly(WeeklyArgs),
}

/// `copytrace report weekly`
#[derive(Debug, clap::Args)]
pub struct WeeklyArgs {
    /// This rights holder's report (repeatable). Without it and without --staff: every
    /// holder's report and the staff report.
    #[arg(long = "rights-holder", visible_alias = "holder", value_name = "NAME")]
    rights_holder: Vec<String>,
    /// The staff report (every holder's works).
    #[arg(long)]
    staff: bool,
    /// First day of the period (UTC), YYYY-MM-DD. Default: the Monday of last week.
    #[arg(long, value_name = "DATE", requires = "to")]
    from: Option<NaiveDate>,
    /// The day after the period's last (UTC), YYYY-MM-DD: the period is [--from, --to).
    /// Default: the Monday of this week.
    #[arg(long, value_name = "DATE", requires = "from")]
    to: Option<NaiveDate>,
    /// Mail the reports. Each audience's report of a period is sent once: a second --send
    /// sends nothing and says when it was sent.
    #[arg(long)]
    send: bool,
    /// With --send: give up a report whose sending broke off (stuck in `sending`, it may or
    /// may not have arrived) and send it again.
    #[arg(long, requires = "send")]
    force: bool,
    /// Also write the report's workbook here (XLSX; one report only: name --rights-holder
    /// or --staff).
    #[arg(long, value_name = "FILE.xlsx")]
    out: Option<PathBuf>,
    /// Print JSON: the reports' figures, or with --send what became of each.
    #[arg(long)]
    json: bool,
}

/// Runs `copytrace report …`.
pub async fn run(globals: &Globals, command: ReportCommand) -> Result<ExitCode> {
    let ReportCommand::Weekly(args) = command;
    let store = globals.store().await?;
    let store = store.as_ref();
    let period = match (args.from, args.to) {
        (Some(from), Some(to)) => Period::new(from, to)?,
        _ => Period::previous_week(Utc::now().date_naive()),
    };
    let mut holder_ids = Vec::new();
    for name in &args.rights_holder {
        holder_ids.push(holders::find(store, name).await?.id);
    }
    let selection = if holder_ids.is_empty() && !args.staff {
        Selection::all()
    } else {
        Selection {
            holders: Some(holder_ids),
            staff: args.staff,
        }
    };
    if args.out.is_some()
        && selection.holders.as_ref().map_or(2, Vec::len) + usize::from(selection.staff) != 1
    {
        bail!("--out writes one report's workbook: name one --rights-holder, or --staff");
    }
    let now = Utc::now();
    let settings = globals.weekly_settings();
    let prepared = reports::prepare(store, &selection, period, &settings, now).await?;
    if let Some(out) = &args.out {
        let report = &prepared[0].report;
        let xlsx = report.xlsx(&ExportOptions::default())?;
        let partial = out.with_extension("xlsx.partial");
        std::fs::write(&partial, xlsx)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, out)
            .with_context(|| format!("cannot write {}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    if !args.send {
        if args.json {
            println!("{}", serde_json::to_string_pretty(&prepared)?);
        } else {
            for addressed in &prepared {
                let r = &addressed.report;
                println!(
                    "{} ({}): {} new cop(ies), {} removal(s), {} pending review(s), {} \
                     notice(s) awaiting follow-up, {} site(s)",
                    audience(addressed.audience, r.holder.as_deref()),
                    r.lang,
                    r.new_copies,
                    r.removals,
                    r.pending_reviews,
                    r.notices_awaiting_follow_up,
                    r.sites.len()
                );
                match &addressed.skipped {
                    Some(reason) => println!("  not sent: {reason}"),
                    None => println!("  to {}: {}", addressed.recipients.join(", "), r.subject()),
                }
            }
            println!(
                "{} report(s) of {} to {} (UTC, to exclusive); --send mails them",
                prepared.len(),
                period.from,
                period.to
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let outcomes =
        reports::send(store, &globals.alert_settings(), &prepared, args.force, now).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcomes)?);
    } else {
        for outcome in &outcomes {
            match outcome {
                Outcome::Sent {
                    audience: who,
                    recipients,
                    message_id,
                } => println!(
                    "{}: sent to {} ({message_id})",
                    who.key(),
                    recipients.join(", ")
                ),
                Outcome::AlreadySent { mail } => println!(
                    "{}: {} before, at {} (to {}); nothing sent",
                    mail.audience.key(),
                    mail.state.as_str(),
                    mail.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                    mail.recipients.join(", ")
                ),
                Outcome::Skipped {
                    audience: who,
                    reason,
                } => println!("{}: not sent: {reason}", who.key()),
                Outcome::Failed {
                    audience: who,
                    error,
                } => println!("{}: failed: {error}", who.key()),
            }
        }
        println!(
            "weekly reports of {} to {}: {}",
            period.from,
            period.to,
            reports::summary(&outcomes)
        );
    }
    Ok(
        if outcomes.iter().any(|o| matches!(o, Outcome::Failed { .. })) {
            ExitCode::from(EXIT_PARTIAL)
        } else {
            ExitCode::SUCCESS
        },
    )
}

fn audience(audience: ReportAudience, holder: Option<&str>) -> String {
    match holder {
        Some(name) => format!("{} {name}", audience.key()),
        None => audience.key(),
    }
}
