//! `copytrace stats`: statistics of the match library for analysts.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use copytrace_analytics::stats::{PublishedWindow, SiteGrouping};
use copytrace_service::catalog::parse_instant;
use copytrace_service::{holders, stats};
use serde::Serialize;

use super::Globals;
use super::filters::FilterArgs;

/// `copytrace stats …`
#[derive(Debug, Subcommand)]
pub enum StatsCommand {
    /// Copies per work: pages, sites, best and mean score, coverage, first and last seen,
    /// online and removed, hours from publication (the catalog's `published_at`) to the first
    /// copy, or "publication time unknown".
    Works {
        /// Per chapter instead (works with chapters only).
        #[arg(long)]
        chapters: bool,
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// How the rows are shown.
        #[command(flatten)]
        list: ListArgs,
    },
    /// Copies per site: pages, works, removal rate, median time to removal, time online.
    Sites {
        /// One row per registered domain (all hosts of one operator) instead of per host.
        #[arg(long)]
        by_domain: bool,
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// How the rows are shown.
        #[command(flatten)]
        list: ListArgs,
    },
    /// Per UTC day: new matches, removals, pages crawled.
    Daily {
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per rights holder: works copied, pages, sites, confirmed, pending and removed copies.
    Holders {
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per site: takedown notices sent, removals verified, partial removals, ignored, response
    /// rate, median hours from sending to verified removal, and notices awaiting follow-up
    /// (sent, not all copies removed, not escalated: what `notice follow-up` acts on).
    Notices {
        /// Only this rights holder's notices.
        #[arg(long, value_name = "NAME")]
        rights_holder: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Time from publication (the catalog's `published_at`) to the first copy: per work, per
    /// site, and its distribution. Works without a publication time are counted apart, never
    /// in the delays.
    TimeToPiracy {
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Only works published on or after this date (2026-01-31) or time (RFC 3339); a work
        /// without a publication time counts by when it entered the library.
        #[arg(long, value_name = "DATE")]
        published_since: Option<String>,
        /// Only works published before this date or time (likewise).
        #[arg(long, value_name = "DATE")]
        published_until: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// How a list of statistics is shown.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Only the first N rows (the largest).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `copytrace stats …`.
pub async fn run(globals: &Globals, command: StatsCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let store = store.as_ref();
    match command {
        StatsCommand::Works {
            chapters,
            filter,
            list,
        } => {
            let stats_filter = filter.stats_filter(store).await?;
            if chapters {
                let rows = stats::chapters(store, &stats_filter, list.top).await?;
                print(list.json, &rows, |r| {
                    format!(
                        "{:>6}  {:<24} {:>4}  {:<24} {:>5} page(s) {:>4} site(s)  best {:.2}  \
                         coverage {:>3.0}%  online {} removed {}",
                        r.work_id,
                        r.work_external_id,
                        r.chapter,
                        r.title,
                        r.pages,
                        r.sites,
                        r.best_score,
                        r.best_coverage * 100.0,
                        r.online,
                        r.removed
                    )
                })
            } else {
                let rows = stats::works(store, &stats_filter, list.top).await?;
                print(list.json, &rows, |r| {
                    let s = &r.stats;
                    format!(
                        "{:>6}  {:<24} {:>5} page(s) {:>4} site(s)  best {:.2} mean {:.2}  \
                         coverage {:>3.0}%  online {} removed {}  first {}  {}",
                        s.work_id,
                        s.external_id,
                        s.pages,
                        s.sites,
                        s.best_score,
                        s.mean_score,
                        s.best_coverage * 100.0,
                        s.online,
                        s.removed,
                        day(s.first_seen),
                        match r.hours_to_first_copy {
                            Some(h) => format!("{h:.1} h after publication"),
                            None => "publication time unknown".to_owned(),
                        }
                    )
                })
            }
        }
        StatsCommand::Sites {
            by_domain,
            filter,
            list,
        } => {
            let grouping = if by_domain {
                SiteGrouping::Domain
            } else {
                SiteGrouping::Host
            };
            let rows = stats::sites(
                store,
                &filter.stats_filter(store).await?,
                grouping,
                list.top,
            )
            .await?;
            print(list.json, &rows, |r| {
                format!(
                    "{:<32} {:>5} page(s) {:>4} work(s) {:>5} cop(ies)  removed {:>3.0}%  \
                     median to removal {}  median online {}",
                    r.site,
                    r.pages,
                    r.works,
                    r.copies,
                    r.removal_rate * 100.0,
                    hours(r.median_hours_to_removal),
                    hours(r.median_hours_online)
                )
            })
        }
        StatsCommand::Daily { filter, json } => {
            let rows = stats::daily(store, &filter.stats_filter(store).await?).await?;
            print(json, &rows, |r| {
                format!(
                    "{}  {:>6} new match(es) {:>6} removal(s) {:>7} page(s) crawled",
                    r.day, r.new_matches, r.removals, r.pages_crawled
                )
            })
        }
        StatsCommand::Holders { filter, json } => {
            let rows = stats::holders(store, &filter.stats_filter(store).await?).await?;
            print(json, &rows, |r| {
                format!(
                    "{:<24} {:>5} work(s) copied {:>6} page(s) {:>4} site(s)  confirmed {} \
                     pending {} removed {}",
                    r.name, r.works_copied, r.pages, r.sites, r.confirmed, r.pending, r.removed
                )
            })
        }
        StatsCommand::Notices {
            rights_holder,
            json,
        } => {
            let holder = match rights_holder {
                Some(name) => Some(holders::find(store, &name).await?.id),
                None => None,
            };
            let rows = stats::notices(store, holder).await?;
            print(json, &rows, |r| {
                format!(
                    "{:<32} {:>4} sent  {:>4} removed  {:>4} partially  {:>4} ignored  \
                     response {:>3.0}%  median to removal {}  {} awaiting follow-up",
                    r.site,
                    r.sent,
                    r.removal_verified,
                    r.partially_removed,
                    r.ignored,
                    r.response_rate * 100.0,
                    hours(r.median_hours_to_removal),
                    r.awaiting_follow_up
                )
            })
        }
        StatsCommand::TimeToPiracy {
            filter,
            published_since,
            published_until,
            json,
        } => {
            let published = PublishedWindow {
                since: published_since
                    .as_deref()
                    .map(|v| parse_instant("--published-since", v))
                    .transpose()?,
                until: published_until
                    .as_deref()
                    .map(|v| parse_instant("--published-until", v))
                    .transpose()?,
            };
            let report =
                stats::time_to_piracy(store, &filter.stats_filter(store).await?, &published)
                    .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                let overall = &report.overall;
                println!(
                    "{} work(s) with a known publication time copied: median {}, 10% within {}, \
                     90% within {}",
                    overall.count,
                    hours(overall.median),
                    hours(overall.p10),
                    hours(overall.p90)
                );
                for (label, count) in &overall.buckets {
                    println!("  {label:<16} {count}");
                }
                println!("per site (median over its works):");
                for row in &report.sites {
                    println!(
                        "  {:<32} {} ({} work(s))",
                        row.key,
                        hours(Some(row.hours)),
                        row.works
                    );
                }
                let unknown = &report.publication_unknown;
                if !unknown.is_empty() {
                    const SHOWN: usize = 10;
                    let more = match unknown.len().saturating_sub(SHOWN) {
                        0 => String::new(),
                        n => format!(" and {n} more (--json lists them)"),
                    };
                    println!(
                        "{} work(s) copied whose publication time is unknown (no published_at \
                         in the catalog), not counted above: {}{more}",
                        unknown.len(),
                        unknown[..unknown.len().min(SHOWN)].join(", ")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints rows as JSON, or one line each and a count.
fn print<T: Serialize>(json: bool, rows: &[T], line: impl Fn(&T) -> String) -> Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(rows)?);
    } else {
        for row in rows {
            println!("{}", line(row));
        }
        println!("{} row(s)", rows.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn day(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%d").to_string()
}

fn hours(value: Option<f64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(h) if h.abs() < 48.0 => format!("{h:.1} h"),
        Some(h) => format!("{:.1} d", h / 24.0),
    }
}
