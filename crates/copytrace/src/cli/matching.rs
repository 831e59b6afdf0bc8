//! `copytrace match`, `copytrace dedup` and `copytrace index`: bringing the match library up to
//! date, and the shared Redis index it can read from.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use copytrace_matcher::{CandidateMethods, Index, MatchConfig};
use copytrace_service::dedup::{self, DedupJob};
use copytrace_service::index::{open_redis_index_to_rebuild, rebuild_redis_index};
use copytrace_service::matching::{MatchSummary, default_concurrency};
use copytrace_service::redact;
use copytrace_service::review::{DEFAULT_AUTO_CONFIRM_SCORE, ReviewGate};
use copytrace_service::settings::parse_seconds;
use copytrace_service::{CrawlSettings, MatchEngine, Progress, jobs};
use futures_util::StreamExt;

use super::Globals;
use super::progress::Bar;

/// Matching settings an operator may change. The defaults are the ones the quality benchmark
/// (`copytrace-bench quality`) chose; see docs/algorithms.md before changing them.
#[derive(Debug, Clone, clap::Args)]
pub struct MatchArgs {
    /// Candidate sources, joined by `+`: kgram (winnowed k-gram postings), sense (words and
    /// synonyms, for laundered copies), simhash, minhash, dna, or default (kgram+sense), or
    /// all. With a Redis index, only the sources `index rebuild` filed (the default) can be
    /// looked up
    #[arg(long, env = "COPYTRACE_CANDIDATES",
          default_value_t = MatchConfig::default().candidates.methods)]
    pub candidates: CandidateMethods,
    /// Report a work only when at least this many characters of the page are verified as copied
    /// from it (boilerplate excluded)
    #[arg(long, env = "COPYTRACE_MIN_COPIED_CHARS",
          default_value_t = MatchConfig::default().min_copied_chars)]
    pub min_copied_chars: usize,
    /// Report a work only when at least this many of the copied characters lie in one dense
    /// stretch of the page and of the work (three quarters of each aligned), not in short quotations
    /// or shared names scattered over it; 0 turns the rule off (see docs/algorithms.md)
    #[arg(long, env = "COPYTRACE_MIN_STRETCH_CHARS",
          default_value_t = MatchConfig::default().min_stretch_chars)]
    pub min_stretch_chars: usize,
    /// Confirm matches at least this certain without a person; the others wait in `copytrace
    /// review list`. Certainty is the larger of the score (the share of the page, or of the
    /// work, that is the copy) and copied characters / 1000. Above 1 every match waits for a
    /// person, 0 confirms every match
    #[arg(long, env = "COPYTRACE_AUTO_CONFIRM_SCORE", value_name = "SCORE",
          default_value_t = DEFAULT_AUTO_CONFIRM_SCORE)]
    pub auto_confirm_score: f64,
}

impl MatchArgs {
    /// The certainty gate of new matches.
    pub fn gate(&self) -> Result<ReviewGate> {
        Ok(ReviewGate::new(self.auto_confirm_score)?)
    }

    /// The matcher configuration, refusing settings that could match nothing.
    pub fn config(&self) -> Result<MatchConfig> {
        if self.candidates.is_empty() {
            bail!("--candidates none would match nothing; name at least one source");
        }
        let mut config = MatchConfig {
            min_copied_chars: self.min_copied_chars,
            min_stretch_chars: self.min_stretch_chars,
            ..MatchConfig::default()
        };
        config.candidates.methods = self.candidates;
        Ok(config)
    }
}

/// `copytrace match`: the matching settings, and whether to match now or queue jobs.
#[derive(Debug, clap::Args)]
pub struct MatchCommandArgs {
    /// Matching settings.
    #[command(flatten)]
    pub settings: MatchArgs,
    /// Enqueue a match job for every page due instead of matching now (for `copytrace worker
    /// match` processes); prints how many pages are due.
    #[arg(long)]
    pub queue: bool,
    /// Match every stored page again, not only new or changed ones (after restoring an index,
    /// or to apply changed settings).
    #[arg(long)]
    pub all: bool,
    /// Batches of pages matched at once.
    #[command(flatten)]
    pub parallel: Parallel,
}

/// How many pages are matched at once.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Parallel {
    /// Batches of pages (up to 32 each) matched at once; default two per core, so that one
    /// batch's database reads and writes overlap another's verification
    #[arg(long = "parallel", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub count: Option<u16>,
}

impl Parallel {
    /// The number asked for, or the default.
    pub fn get(self) -> usize {
        self.count.map_or_else(default_concurrency, usize::from)
    }
}

/// Runs `copytrace match`.
pub async fn run_match(globals: &Globals, args: MatchCommandArgs) -> Result<ExitCode> {
    let config = args.settings.config()?;
    let store = globals.store().await?;
    if args.all {
        let marked = store.mark_all_pages_unmatched().await?;
        eprintln!("{marked} page(s) will be matched again");
    }
    if args.queue {
        let due = jobs::enqueue_due_matches(store.as_ref()).await?;
        println!("{due} page(s) due for matching have a match job");
        return Ok(ExitCode::SUCCESS);
    }
    let engine = MatchEngine::new(store.clone(), globals.index_source(), config)
        .with_review_gate(args.settings.gate()?);
    let code = match_and_print(engine, args.parallel.get()).await?;
    super::alerts::after_run(globals, store).await;
    Ok(code)
}

/// Matches every due page with `engine`, `parallel` batches at a time, and prints a summary.
pub async fn match_and_print(engine: MatchEngine, parallel: usize) -> Result<ExitCode> {
    let works = engine.work_count().await?;
    let bar = Bar::spinner("matching, pages:");
    let mut summary = MatchSummary::default();
    let matched = async {
        let mut outcomes = std::pin::pin!(engine.match_due(parallel));
        while let Some(outcome) = outcomes.next().await {
            if summary.add(&outcome?) {
                bar.advance(1);
            }
        }
        Ok::<_, copytrace_service::ServiceError>(())
    }
    .await;
    bar.finish();
    matched?;
    print_match_summary(&summary, works, engine.uses_redis());
    Ok(ExitCode::SUCCESS)
}

/// Prints what a match pass did (`works`: the library's size).
pub fn print_match_summary(summary: &MatchSummary, works: usize, uses_redis: bool) {
    println!(
        "matched {} page(s) against {} work(s){}: {} infringing page(s), {} match(es); \
         {} removed, {} reopened",
        summary.pages,
        works,
        if uses_redis { " (Redis index)" } else { "" },
        summary.infringing_pages,
        summary.matches,
        summary.removed,
        summary.reopened
    );
    if summary.aliases > 0 {
        println!(
            "{} page(s) show the same text as an earlier page of their site under another URL \
             (tracking parameters, index.html, a mobile host): listed as that page's aliases, \
             with no matches of their own",
            summary.aliases
        );
    }
    if summary.mirrors > 0 {
        println!(
            "{} page(s) show the same text as another page verified against the library as it \
             is now (mirrors, mostly on other sites): its verdict was reused, not matched again",
            summary.mirrors
        );
    }
}

/// `copytrace index …`
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Delete the Redis index and fill it again with every work's stored window fingerprints.
    Rebuild,
}

/// Runs `copytrace index …`.
pub async fn run_index(globals: &Globals, command: IndexCommand) -> Result<ExitCode> {
    let IndexCommand::Rebuild = command;
    let Some(url) = &globals.redis_url else {
        bail!(
            "index rebuild needs --redis-url (or COPYTRACE_REDIS_URL); without Redis the \
             in-memory index is built afresh at every match run"
        );
    };
    let prefix = &globals.redis_prefix;
    let store = globals.store().await?;
    let mut index = open_redis_index_to_rebuild(url, prefix)?;
    let bar = Bar::counted("indexing works {bar:30} {pos}/{len} [{elapsed}]");
    let summary =
        rebuild_redis_index(store.as_ref(), &mut index, &MatchConfig::default(), &bar).await;
    bar.finish();
    let summary = summary?;
    println!(
        "indexed {} work(s) in Redis at {} under {prefix:?} ({} re-fingerprinted)",
        summary.works,
        redact(url),
        summary.refingerprinted
    );
    println!(
        "index holds {} k-gram posting(s) and {} SimHash window(s)",
        summary.postings,
        index.len()?
    );
    Ok(ExitCode::SUCCESS)
}

/// How removal checks fetch pages again, shared by `dedup` and `serve` (the daily run). The
/// command line names these `--recheck-…` beside a crawl's own settings; they fill the
/// politeness part of a [`CrawlSettings`].
#[derive(Debug, Clone, clap::Args)]
pub struct RecheckArgs {
    /// Allow loopback and private addresses when fetching infringing pages again.
    #[arg(
        long = "recheck-allow-private-addresses",
        env = "COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES"
    )]
    pub allow_private_addresses: bool,
    /// User-Agent of the removal checks.
    #[arg(long = "recheck-user-agent", env = "COPYTRACE_RECHECK_USER_AGENT",
          default_value = copytrace_crawler::DEFAULT_USER_AGENT)]
    pub user_agent: String,
    /// Seconds between two removal checks on the same host.
    #[arg(long = "recheck-delay", env = "COPYTRACE_RECHECK_DELAY", value_name = "SECONDS",
          default_value = "1", value_parser = parse_seconds)]
    pub delay: f64,
}

impl RecheckArgs {
    /// The crawl settings of the removal checks.
    pub fn settings(&self) -> CrawlSettings {
        CrawlSettings {
            allow_private_addresses: self.allow_private_addresses,
            user_agent: self.user_agent.clone(),
            delay_secs: self.delay,
            ..CrawlSettings::default()
        }
    }
}

/// `copytrace dedup`
#[derive(Debug, clap::Args)]
pub struct DedupArgs {
    /// Match every stored page again, not only new or changed ones.
    #[arg(long)]
    pub full: bool,
    /// Do not fetch known infringing pages again (no removal checks).
    #[arg(long)]
    pub no_recheck: bool,
    /// Enqueue the run as a job for `copytrace worker match` (or `serve`) instead of running it
    /// now.
    #[arg(long)]
    pub queue: bool,
    /// Print the finished run as JSON.
    #[arg(long)]
    pub json: bool,
    /// How removal checks fetch.
    #[command(flatten)]
    pub recheck: RecheckArgs,
    /// Matching settings.
    #[command(flatten)]
    pub settings: MatchArgs,
}

/// Runs `copytrace dedup`.
pub async fn run_dedup(globals: &Globals, args: DedupArgs) -> Result<ExitCode> {
    let config = args.settings.config()?;
    let store = globals.store().await?;
    let job = DedupJob {
        full: args.full,
        recheck: !args.no_recheck,
        fetch: args.recheck.settings(),
    };
    if args.queue {
        let (run, job) = jobs::enqueue_dedup(store.as_ref(), &job).await?;
        println!("enqueued dedup job {job} (run {run})");
        return Ok(ExitCode::SUCCESS);
    }
    let engine = MatchEngine::new(store.clone(), globals.index_source(), config)
        .with_review_gate(args.settings.gate()?);
    engine.preload().await?;
    let bar = Bar::spinner("dedup:");
    let run = dedup::dedup_now(&engine, &job, &bar).await;
    bar.finish();
    let run = run?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&run)?);
    } else {
        println!(
            "dedup run {} {}: {} page(s) checked, {} new match(es), {} match(es) removed, {} page(s) unreachable, {} match(es) reopened; {} alias URL(s) of removed pages fetched again: {} still show the copy, {} gone",
            run.id,
            run.state.as_str(),
            run.counts.pages_checked,
            run.counts.new_matches,
            run.counts.matches_removed,
            run.counts.errors,
            run.counts.matches_reopened,
            run.counts.aliases_checked,
            run.counts.aliases_kept,
            run.counts.aliases_removed
        );
    }
    super::alerts::after_run(globals, store).await;
    Ok(ExitCode::SUCCESS)
}
