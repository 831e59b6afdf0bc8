//! `copytrace crawl`: crawl now, or queue a crawl job.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use copytrace_crawler::{CrawlReport, ErrorKind};
use copytrace_service::crawl::{self, CrawlDone, CrawledAndMatched};
use copytrace_service::jobs::{self, CrawlJob};
use copytrace_service::{CrawlSettings, MatchEngine};
use copytrace_store::Store;
use url::Url;

use super::matching::{MatchArgs, Parallel, print_match_summary};
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
    #[arg(long, conflicts_with = "match_pages")]
    pub queue: bool,
    /// Match the pages against the library as they are stored (as `copytrace match` would
    /// afterwards), on the cores the crawl leaves idle: the run takes about as long as the
    /// slower of the two instead of both
    #[arg(long = "match")]
    pub match_pages: bool,
    /// Matching settings, with --match.
    #[command(flatten)]
    pub matching: MatchArgs,
    /// Pages matched at once, with --match.
    #[command(flatten)]
    pub parallel: Parallel,
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
    if !args.match_pages {
        return crawl_and_print(store, &seeds, &args.settings, globals.verbose).await;
    }
    let engine = MatchEngine::new(
        store.clone(),
        globals.index_source(),
        args.matching.config()?,
    )
    .with_review_gate(args.matching.gate()?);
    let crawl_bar = Bar::spinner("crawling, pages stored:");
    let match_bar = Bar::spinner("matching, pages:");
    let bars = indicatif::MultiProgress::new();
    bars.add(crawl_bar.0.clone());
    bars.add(match_bar.0.clone());
    let CrawledAndMatched { crawl, matched } = crawl::crawl_and_match_now(
        store.clone(),
        &seeds,
        &args.settings,
        &engine,
        args.parallel.get(),
        Arc::new(crawl_bar.clone()),
        &match_bar,
    )
    .await;
    crawl_bar.finish();
    match_bar.finish();
    let code = print_crawl(crawl?, &seeds, globals.verbose)?;
    // The crawl's pages are stored whatever happened to matching; `copytrace match` resumes.
    let summary = matched.context(
        "matching stopped; the crawled pages are stored and `copytrace match` matches them",
    )?;
    print_match_summary(&summary, engine.work_count().await?, engine.uses_redis());
    super::alerts::after_run(globals, store).await;
    Ok(code)
}

/// Crawls `seeds` now and prints what happened; exit code 3 when a seed failed.
pub async fn crawl_and_print(
    store: Arc<dyn Store>,
    seeds: &[Url],
    settings: &CrawlSettings,
    verbose: u8,
) -> Result<ExitCode> {
    let bar = Bar::spinner("crawling, pages stored:");
    let done = crawl::crawl_now(store, seeds, settings, Arc::new(bar.clone())).await;
    bar.finish();
    print_crawl(done?, seeds, verbose)
}

/// Failed URLs listed per kind of failure, without `-v`.
const FAILURE_EXAMPLES: usize = 3;

/// Prints what a crawl did; exit code 3 when a seed failed.
fn print_crawl(done: CrawlDone, seeds: &[Url], verbose: u8) -> Result<ExitCode> {
    let CrawlDone { result, pages, .. } = done;
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
    if stats.render_skipped > 0 {
        println!(
            "{} page(s) not rendered: the first renders of their page template gained no text",
            stats.render_skipped
        );
    }
    if !stats.errors.is_empty() {
        println!("failures by kind: {}", stats.errors_line());
    }
    print_failures(&report, verbose);
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

/// The crawl's failed URLs on stderr: per kind, how many and the first few (a site with a
/// hundred broken ad links takes one line, not a hundred), or every one with `-v`. Pages that
/// could not be rendered are said apart (once per reason), after this.
fn print_failures(report: &CrawlReport, verbose: u8) {
    let rendered_apart = |url: &str| {
        report
            .not_rendered
            .iter()
            .any(|(not_rendered, _)| not_rendered == url)
    };
    if verbose > 0 {
        for failure in &report.failures {
            if !rendered_apart(&failure.url) {
                eprintln!("failed: {}: {}", failure.url, failure.reason);
            }
        }
        return;
    }
    for group in report.failures_by_kind(FAILURE_EXAMPLES) {
        if group.kind == ErrorKind::NotRendered {
            continue;
        }
        let more = group.count - group.examples.len();
        eprintln!(
            "failed: {} URL(s), {}{}",
            group.count,
            group.kind,
            if more > 0 {
                format!(" ({more} more not shown; -v lists every one)")
            } else {
                String::new()
            }
        );
        for failure in group.examples {
            // Most reasons name the URL already ("HTTP 404 Not Found for URL").
            if failure.reason.contains(&failure.url) {
                eprintln!("  {}", failure.reason);
            } else {
                eprintln!("  {}: {}", failure.url, failure.reason);
            }
        }
    }
}
