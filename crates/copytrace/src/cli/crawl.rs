//! `copytrace crawl`: crawl now, or queue a crawl job.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use copytrace_service::CrawlSettings;
use copytrace_service::crawl::{self, CrawlDone};
use copytrace_service::jobs::{self, CrawlJob};
use copytrace_store::Store;
use url::Url;

use super::progress::Bar;
use super::{EXIT_PARTIAL, Globals};

/// `copytrace crawl`
#[derive(Debug, clap::Args)]
pub struct CrawlArgs {
    /// Seed URLs (http or https).
    #[arg(required = true)]
    pub urls: Vec<String>,
    /// Scope and limits.
    #[command(flatten)]
    pub settings: CrawlSettings,
    /// Enqueue the crawl as a job for `copytrace worker crawl` instead of crawling now; prints
    /// the job id.
    #[arg(long)]
    pub queue: bool,
}

/// Runs `copytrace crawl`.
pub async fn run(globals: &Globals, args: CrawlArgs) -> Result<ExitCode> {
    // Validate every URL before touching the database or the network.
    let seeds = crawl::parse_seeds(&args.urls)?;
    let store = globals.store().await?;
    if args.queue {
        let job = CrawlJob {
            seeds: seeds.iter().map(Url::to_string).collect(),
            settings: args.settings,
        };
        let (run, job) = jobs::enqueue_crawl(store.as_ref(), &job).await?;
        println!("enqueued crawl job {job} (run {run})");
        return Ok(ExitCode::SUCCESS);
    }
    crawl_and_print(store, &seeds, &args.settings).await
}

/// Crawls `seeds` now and prints what happened; exit code 3 when a seed failed.
pub async fn crawl_and_print(
    store: Arc<dyn Store>,
    seeds: &[Url],
    settings: &CrawlSettings,
) -> Result<ExitCode> {
    let bar = Bar::spinner("crawling, pages stored:");
    let done = crawl::crawl_now(store, seeds, settings, Arc::new(bar.clone())).await;
    bar.finish();
    let CrawlDone { result, pages, .. } = done?;
    let Ok(report) = result else {
        println!("crawl cancelled");
        return Ok(ExitCode::SUCCESS);
    };
    let stats = &report.stats;
    println!(
        "crawled {} page(s): {} new, {} changed, {} unchanged; {} failed, {} disallowed by robots.txt, {} left unvisited (limits); {} request(s), {} retried, {} not modified, {} received, {:.1} pages/s",
        report.fetched,
        pages.created,
        pages.updated,
        pages.unchanged + pages.not_modified,
        report.failures.len(),
        report.disallowed_by_robots,
        report.skipped,
        stats.requests,
        stats.retries,
        stats.not_modified,
        indicatif::HumanBytes(stats.bytes),
        stats.pages_per_second()
    );
    if stats.rendered > 0 {
        println!(
            "{} page(s) read in headless Chromium (their text is written by scripts)",
            stats.rendered
        );
    }
    if !stats.errors.is_empty() {
        println!("failures by kind: {}", stats.errors_line());
    }
    for (url, reason) in &report.failures {
        if !report.not_rendered.iter().any(|(u, _)| u == url) {
            eprintln!("failed: {url}: {reason}");
        }
    }
    // Said once per reason (most often: Chromium is not installed), then the pages.
    let mut reasons: Vec<&str> = report
        .not_rendered
        .iter()
        .map(|(_, r)| r.as_str())
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    for reason in reasons {
        let urls: Vec<&str> = report
            .not_rendered
            .iter()
            .filter(|(_, r)| r == reason)
            .map(|(u, _)| u.as_str())
            .collect();
        eprintln!(
            "not rendered: {} page(s) show their text only through scripts and were not read: {reason}. \
             They are recorded as failed, not as pages without a match; crawl again once this is fixed:",
            urls.len()
        );
        for url in urls {
            eprintln!("  {url}");
        }
    }
    if crawl::seed_failed(&report, seeds) {
        eprintln!("error: some seed URLs could not be crawled (see above); the others were stored");
        return Ok(ExitCode::from(EXIT_PARTIAL));
    }
    Ok(ExitCode::SUCCESS)
}
