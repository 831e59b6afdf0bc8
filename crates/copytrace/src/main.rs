//! `copytrace`: the command-line entry point. Parses arguments, chooses the backend from the
//! database URL, runs one command, and turns errors into a one-line message and an exit code.
//!
//! Exit codes: 0 success; 1 error (nothing half-written); 2 bad command line; 3 the command
//! finished but some inputs failed (e.g. a seed URL of a crawl was unreachable).

use std::collections::{BTreeSet, HashMap};
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use copytrace::backend::{DEFAULT_DATABASE_URL, open_store, redact};
use copytrace::dedup;
use copytrace::demo;
use copytrace::inspect;
use copytrace::jobs;
use copytrace::pipeline::{self, LibraryFile};
use copytrace::processes;
use copytrace::scheduling::{self, parse_seeds};
use copytrace::textfile::{TextFile, read_text_file};
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{CandidateMethods, Index, MatchConfig};
use copytrace_store::{
    JobFilter, JobState, MatchFilter, RunFilter, RunKind, RunState, Store, WriteOutcome,
};
use indicatif::{ProgressBar, ProgressStyle};
use url::Url;

/// Exit code when a command finished but some of its inputs failed.
const EXIT_PARTIAL: u8 = 3;

/// Copytrace finds pirated copies of registered works on the web: it crawls suspected piracy
/// sites, fingerprints every page, matches it against the source library and keeps
/// evidence-backed matches for reports and takedown notices.
#[derive(Debug, Parser)]
#[command(name = "copytrace", version, propagate_version = true)]
struct Cli {
    /// Database URL: `sqlite://PATH` (the embedded default) or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (an existing database; migrated on open).
    #[arg(long, global = true, env = "COPYTRACE_DATABASE_URL", default_value = DEFAULT_DATABASE_URL,
          hide_env_values = true)]
    db: String,

    /// Redis URL of the shared window index (`redis://[:password@]host:port[/db]`). Without
    /// it, `match` builds an in-memory index from the database at every run.
    #[arg(
        long,
        global = true,
        env = "COPYTRACE_REDIS_URL",
        hide_env_values = true
    )]
    redis_url: Option<String>,

    /// Key prefix of the index in Redis, so several libraries can share one server.
    #[arg(long, global = true, env = "COPYTRACE_REDIS_PREFIX",
          default_value = copytrace_index_redis::DEFAULT_PREFIX)]
    redis_prefix: String,

    /// Configuration file (TOML; see deploy/copytrace.toml). Its settings apply where neither a
    /// flag nor a COPYTRACE_… variable gives one.
    #[arg(long, global = true, env = "COPYTRACE_CONFIG", value_name = "PATH")]
    config: Option<PathBuf>,

    /// More log output on stderr (repeat for more). COPYTRACE_LOG (a tracing filter such as
    /// `info` or `warn,copytrace=debug`) sets it precisely and wins over this flag.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

/// Matching settings an operator may change. The defaults are the ones the quality benchmark
/// (`copytrace-bench quality`) chose; see docs/algorithms.md before changing them.
#[derive(Debug, clap::Args)]
struct MatchArgs {
    /// Candidate sources, joined by `+`: simhash, minhash, dna, or all
    #[arg(long, env = "COPYTRACE_CANDIDATES",
          default_value_t = MatchConfig::default().candidates.methods)]
    candidates: CandidateMethods,
    /// Report a work only when at least this many characters of the page are verified as copied
    /// from it (boilerplate excluded)
    #[arg(long, env = "COPYTRACE_MIN_COPIED_CHARS",
          default_value_t = MatchConfig::default().min_copied_chars)]
    min_copied_chars: usize,
}

/// `copytrace match`: the matching settings, and whether to match now or queue jobs.
#[derive(Debug, clap::Args)]
struct MatchCommandArgs {
    #[command(flatten)]
    settings: MatchArgs,
    /// Enqueue a match job for every page due instead of matching now (for `copytrace worker
    /// match` processes); prints how many pages are due.
    #[arg(long)]
    queue: bool,
    /// Match every stored page again, not only new or changed ones (after restoring an index,
    /// or to apply changed settings).
    #[arg(long)]
    all: bool,
}

/// How jobs are held and retried, for every process that runs jobs.
#[derive(Debug, clap::Args)]
struct LeaseArgs {
    /// Seconds a claimed job stays reserved for this process; renewed every third of it while
    /// the job runs. A killed worker's job is taken over after at most this long.
    #[arg(long, env = "COPYTRACE_LEASE_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lease_secs: u64,
    /// Seconds before the first retry of a failed job; each further retry waits up to twice as
    /// long (with jitter), at most 30 minutes.
    #[arg(long, env = "COPYTRACE_RETRY_BASE_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3_600))]
    retry_base_secs: u64,
}

impl LeaseArgs {
    fn runner(&self, exit_when_idle: bool) -> copytrace_scheduler::WorkerConfig {
        copytrace_scheduler::WorkerConfig {
            lease: Duration::from_secs(self.lease_secs),
            backoff: copytrace_scheduler::backoff::Backoff {
                base: Duration::from_secs(self.retry_base_secs),
                max: Duration::from_secs(30 * 60),
            },
            exit_when_idle,
            ..copytrace_scheduler::WorkerConfig::default()
        }
    }
}

/// Settings of a worker process.
#[derive(Debug, clap::Args)]
struct WorkerArgs {
    /// Job loops in this process (jobs worked on at once).
    #[arg(long, env = "COPYTRACE_WORKER_CONCURRENCY", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    concurrency: u32,
    #[command(flatten)]
    lease: LeaseArgs,
    /// Stop when no job is due instead of waiting for more (batch runs).
    #[arg(long)]
    exit_when_idle: bool,
}

#[derive(Debug, Subcommand)]
enum WorkerCommand {
    /// Run crawl jobs (enqueued by `copytrace crawl --queue` and the scheduler).
    Crawl {
        #[command(flatten)]
        worker: WorkerArgs,
        /// Serve /healthz, /readyz and /metrics on this address.
        #[arg(long, env = "COPYTRACE_WORKER_LISTEN")]
        listen: Option<SocketAddr>,
    },
    /// Run match jobs: match one page against the library each, over the Redis index when
    /// --redis-url is set (shared by all workers), else over an in-memory index.
    Match {
        #[command(flatten)]
        worker: WorkerArgs,
        #[command(flatten)]
        settings: MatchArgs,
        /// Serve /healthz, /readyz and /metrics on this address.
        #[arg(long, env = "COPYTRACE_WORKER_LISTEN")]
        listen: Option<SocketAddr>,
    },
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address of the HTTP endpoints (/healthz, /readyz, /metrics).
    #[arg(long, env = "COPYTRACE_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Crawl and match job loops run inside this process (each). Default: 1 on SQLite (one
    /// process does everything), 0 on PostgreSQL (`copytrace worker` processes run the jobs).
    #[arg(long, env = "COPYTRACE_SERVE_WORKERS",
          value_parser = clap::value_parser!(u32).range(0..=256))]
    workers: Option<u32>,
    /// Seconds between two rounds of the scheduler (enqueueing match jobs for due pages).
    #[arg(long, env = "COPYTRACE_SWEEP_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    sweep_secs: u64,
    #[command(flatten)]
    lease: LeaseArgs,
    #[command(flatten)]
    settings: MatchArgs,
    #[command(flatten)]
    dedup: DedupScheduleArgs,
}

#[derive(Debug, Subcommand)]
enum JobsCommand {
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

#[derive(Debug, Clone, Copy, ValueEnum)]
enum JobStateArg {
    Queued,
    Running,
    Done,
    Dead,
}

impl JobStateArg {
    fn state(self) -> JobState {
        match self {
            JobStateArg::Queued => JobState::Queued,
            JobStateArg::Running => JobState::Running,
            JobStateArg::Done => JobState::Done,
            JobStateArg::Dead => JobState::Dead,
        }
    }
}

impl MatchArgs {
    fn config(&self) -> MatchConfig {
        let mut config = MatchConfig {
            min_copied_chars: self.min_copied_chars,
            ..MatchConfig::default()
        };
        config.candidates.methods = self.candidates;
        config
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Manage the source library (the registered works).
    #[command(subcommand)]
    Library(LibraryCommand),
    /// Crawl sites and store their pages' text. Only the seeds' own sites are followed.
    Crawl(CrawlArgs),
    /// Match every page not yet matched against the library and record the verdicts.
    Match(MatchCommandArgs),
    /// Run a worker process that takes jobs from the durable queue (production: many of them,
    /// against PostgreSQL and Redis). Stops cleanly on SIGTERM.
    #[command(subcommand)]
    Worker(WorkerCommand),
    /// Run the service process: health, readiness and metrics endpoints, the scheduler (one
    /// leader across all `serve` processes) and, on SQLite, the workers. Stops on SIGTERM.
    Serve(ServeArgs),
    /// Inspect and retry jobs of the durable queue.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Apply pending database migrations and exit (every command also migrates on open).
    Migrate,
    /// Print the effective settings (file, environment and defaults), secrets hidden.
    Config,
    /// Manage the Redis window index (production; needs --redis-url).
    #[command(subcommand)]
    Index(IndexCommand),
    /// Export data for analysts and scripts.
    #[command(subcommand)]
    Export(ExportCommand),
    /// Print a readable infringement report, grouped by work.
    Report,
    /// Print the document-level and window-level fingerprints of a text file.
    Fingerprint {
        /// Which algorithm to show.
        #[arg(long, value_enum, default_value_t = AlgorithmChoice::All)]
        algo: AlgorithmChoice,
        /// Print JSON (every window, full fingerprints) instead of a summary.
        #[arg(long)]
        json: bool,
        /// A text file (UTF-8 or GBK/GB18030, detected).
        file: PathBuf,
    },
    /// Compare two text files with every algorithm and with the full matcher (is B a copy of A?).
    Compare {
        /// The original (the work).
        file_a: PathBuf,
        /// The suspected copy (the page).
        file_b: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Manage cron schedules of crawls (and the built-in daily dedup run).
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Crawl and dedup runs: history, counts, statistics, cancellation.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Bring the match library up to date now, as the daily run does: fetch known infringing
    /// pages again to record removals, then match every page not yet matched against the
    /// current library (after a library change, every page).
    Dedup(DedupArgs),
    /// Run the whole pipeline on bundled sample data in a temporary database: ingest a small
    /// library, serve a sample piracy site on a loopback port, crawl it, match, report.
    Demo,
}

#[derive(Debug, Subcommand)]
enum LibraryCommand {
    /// Add works: each `.txt` file (UTF-8 or GBK/GB18030, detected) is one work whose id is
    /// the file stem and whose title is its first non-empty line. Directories are walked.
    /// Re-adding an unchanged file changes nothing; a changed file replaces that work.
    Add {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Rights holder owning the works.
        #[arg(long, default_value = "default")]
        holder: String,
    },
    /// List the works in the library.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum IndexCommand {
    /// Delete the Redis index and fill it again with every work's stored window fingerprints.
    Rebuild,
}

#[derive(Debug, clap::Args)]
struct CrawlArgs {
    /// Seed URLs (http or https).
    #[arg(required = true)]
    urls: Vec<String>,
    #[command(flatten)]
    settings: CrawlSettingsArgs,
    /// Enqueue the crawl as a job for `copytrace worker crawl` instead of crawling now; prints
    /// the job id.
    #[arg(long)]
    queue: bool,
}

/// Scope and limits of a crawl, shared by `crawl` and `schedule add`.
#[derive(Debug, clap::Args)]
struct CrawlSettingsArgs {
    /// Stop after this many page requests.
    #[arg(long, default_value_t = 100)]
    max_pages: usize,
    /// Follow links at most this far from a seed (no limit unless given).
    #[arg(long)]
    depth: Option<u32>,
    /// Allow loopback, private and link-local addresses (refused by default).
    #[arg(long)]
    allow_private_addresses: bool,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// The User-Agent header; robots.txt rules for its first word apply.
    #[arg(long, default_value = copytrace_crawler::DEFAULT_USER_AGENT)]
    user_agent: String,
    /// Seconds between two requests to the same host (a robots.txt Crawl-delay may ask more).
    #[arg(long, value_name = "SECONDS", default_value = "0", value_parser = parse_seconds)]
    delay: Duration,
    /// Requests in flight at once to one host.
    #[arg(long, default_value_t = 2)]
    per_host: usize,
    /// Retries after a timeout, a connection error, 429 or 5xx.
    #[arg(long, default_value_t = 2)]
    retries: u32,
    /// Also queue the URLs of the seeds' sitemaps (robots.txt `Sitemap:` or /sitemap.xml).
    #[arg(long)]
    sitemaps: bool,
    /// Follow only links matching this regular expression (repeatable; seeds always go).
    #[arg(long, value_name = "REGEX")]
    include: Vec<String>,
    /// Never follow links matching this regular expression (repeatable).
    #[arg(long, value_name = "REGEX")]
    exclude: Vec<String>,
    /// Also follow links to this host (repeatable; `*.example.cn` means any subdomain).
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
    /// Never send the stored ETag / Last-Modified back: fetch every known page whole. By
    /// default a re-crawl asks known infringing pages (not the seeds) `If-None-Match` /
    /// `If-Modified-Since`, so an unchanged one costs a 304.
    #[arg(long)]
    no_conditional: bool,
}

impl CrawlSettingsArgs {
    fn job(&self, seeds: &[Url]) -> jobs::CrawlJob {
        jobs::CrawlJob {
            seeds: seeds.iter().map(Url::to_string).collect(),
            max_pages: self.max_pages,
            depth: self.depth,
            allow_private_addresses: self.allow_private_addresses,
            concurrency: self.concurrency,
            timeout_secs: self.timeout,
            user_agent: self.user_agent.clone(),
            delay_secs: self.delay.as_secs_f64(),
            per_host: self.per_host,
            retries: self.retries,
            sitemaps: self.sitemaps,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            allow_host: self.allow_host.clone(),
            conditional: !self.no_conditional,
        }
    }
}

/// How removal checks fetch pages again, shared by `dedup` and `serve` (the daily run).
#[derive(Debug, clap::Args)]
struct RecheckArgs {
    /// Allow loopback and private addresses when fetching infringing pages again.
    #[arg(
        long = "recheck-allow-private-addresses",
        env = "COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES"
    )]
    allow_private_addresses: bool,
    /// User-Agent of the removal checks.
    #[arg(long = "recheck-user-agent", env = "COPYTRACE_RECHECK_USER_AGENT",
          default_value = copytrace_crawler::DEFAULT_USER_AGENT)]
    user_agent: String,
    /// Seconds between two removal checks on the same host.
    #[arg(long = "recheck-delay", env = "COPYTRACE_RECHECK_DELAY", value_name = "SECONDS",
          default_value = "1", value_parser = parse_seconds)]
    delay: Duration,
}

impl RecheckArgs {
    fn settings(&self) -> dedup::RecheckSettings {
        dedup::RecheckSettings {
            allow_private_addresses: self.allow_private_addresses,
            user_agent: self.user_agent.clone(),
            delay_secs: self.delay.as_secs_f64(),
            ..dedup::RecheckSettings::default()
        }
    }
}

/// The daily dedup schedule that `serve` keeps.
#[derive(Debug, clap::Args)]
struct DedupScheduleArgs {
    /// When the daily dedup run starts (cron, five fields or six with seconds first).
    #[arg(long, env = "COPYTRACE_DEDUP_CRON", default_value = scheduling::DEFAULT_DEDUP_CRON)]
    dedup_cron: String,
    /// Time zone of the dedup schedule, and the default of `schedule add --tz`.
    #[arg(long, env = "COPYTRACE_TIMEZONE", default_value = "UTC")]
    timezone: String,
    #[command(flatten)]
    recheck: RecheckArgs,
}

#[derive(Debug, Subcommand)]
enum ScheduleCommand {
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
        #[command(flatten)]
        settings: Box<CrawlSettingsArgs>,
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

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RunKindArg {
    Crawl,
    Dedup,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RunStateArg {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
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

#[derive(Debug, clap::Args)]
struct DedupArgs {
    /// Match every stored page again, not only new or changed ones.
    #[arg(long)]
    full: bool,
    /// Do not fetch known infringing pages again (no removal checks).
    #[arg(long)]
    no_recheck: bool,
    /// Enqueue the run as a job for `copytrace worker match` (or `serve`) instead of running it
    /// now.
    #[arg(long)]
    queue: bool,
    /// Print the finished run as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    recheck: RecheckArgs,
    #[command(flatten)]
    settings: MatchArgs,
}

impl DedupArgs {
    fn job(&self) -> dedup::DedupJob {
        dedup::DedupJob {
            full: self.full,
            recheck: !self.no_recheck,
            fetch: self.recheck.settings(),
        }
    }
}

/// Parses a non-negative number of seconds (`0`, `1.5`).
fn parse_seconds(raw: &str) -> Result<Duration, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("{raw:?} is not a number of seconds >= 0"))
}

#[derive(Debug, Subcommand)]
enum ExportCommand {
    /// Export page × work matches, one row per match.
    Matches {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
        format: ExportFormat,
        /// Write to this file (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AlgorithmChoice {
    /// Weighted SimHash-64 (jieba words, TF-IDF).
    Simhash,
    /// MinHash over character shingles.
    Minhash,
    /// Pinyin-initial DNA codes.
    Dna,
    /// Exact character shingle set.
    Shingles,
    /// Hashes of the longest sentences.
    Sentences,
    /// Every algorithm.
    All,
}

impl AlgorithmChoice {
    fn name(self) -> &'static str {
        match self {
            AlgorithmChoice::Simhash => "simhash",
            AlgorithmChoice::Minhash => "minhash",
            AlgorithmChoice::Dna => "dna",
            AlgorithmChoice::Shingles => "shingles",
            AlgorithmChoice::Sentences => "sentences",
            AlgorithmChoice::All => "all",
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// A JSON array of matches with evidence offsets.
    Json,
}

fn main() -> ExitCode {
    // The configuration file feeds the command-line parser (as environment defaults), so it is
    // read first; see `copytrace::config`.
    if let Err(error) = apply_config_file() {
        eprintln!("error: {}", one_line(&error));
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        // `copytrace … | head` closing the pipe early is not an error.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// Sets the environment variable of every setting of the configuration file that the
/// environment does not set already.
fn apply_config_file() -> Result<()> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let Some(path) = copytrace::config::config_path(&args) else {
        return Ok(());
    };
    let file = copytrace::config::ConfigFile::read(&path)?;
    for (name, value) in file.to_env() {
        if std::env::var_os(name).is_none() {
            #[allow(unsafe_code)]
            // SAFETY: called first thing in `main`, before the async runtime or any other
            // thread exists, so nothing can read the environment concurrently.
            unsafe {
                std::env::set_var(name, value);
            }
        }
    }
    Ok(())
}

/// The cause chain on one line. A cause that only repeats the end of the message before it
/// (database drivers print their source inside their own message) is left out.
fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain().map(ToString::to_string) {
        if parts.last().is_some_and(|last| last.ends_with(&cause)) {
            continue;
        }
        parts.push(cause);
    }
    parts.join(": ")
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn init_logging(verbose: u8) {
    // Per-URL crawl failures are summarised by the command itself; the crawler's own warnings
    // would only repeat them.
    let default = match verbose {
        0 => "warn,copytrace_crawler=error",
        1 => "info,copytrace=debug",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("COPYTRACE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let index = index_source(&cli);
    match cli.command {
        Command::Demo => run_demo().await,
        Command::Crawl(args) => {
            // Validate every URL before touching the database or the network.
            let seeds = parse_seeds(&args.urls)?;
            let store = open_store(&cli.db).await?;
            if args.queue {
                let (run, job) =
                    jobs::enqueue_crawl(store.as_ref(), &args.settings.job(&seeds)).await?;
                println!("enqueued crawl job {job} (run {run})");
                return Ok(ExitCode::SUCCESS);
            }
            crawl(store, &seeds, &args).await
        }
        Command::Library(LibraryCommand::Add { paths, holder }) => {
            let files = pipeline::read_library_files(&paths)?;
            let store = open_store(&cli.db).await?;
            let Some(url) = &cli.redis_url else {
                return library_add(store.as_ref(), &holder, &files).await;
            };
            // Keep the shared index in step, so running match workers pick the change up.
            let mut index = open_redis_index(url, &cli.redis_prefix)?;
            let before = pipeline::library_digest(store.as_ref()).await?;
            let code = library_add(store.as_ref(), &holder, &files).await?;
            let holder_id = store.ensure_rights_holder(&holder).await?;
            let ids: HashMap<String, i64> = store
                .list_works(Some(holder_id))
                .await?
                .into_iter()
                .map(|w| (w.external_id, w.id))
                .collect();
            let changed: Vec<i64> = files
                .iter()
                .filter_map(|f| ids.get(&f.external_id).copied())
                .collect();
            if pipeline::update_redis_index(store.as_ref(), &mut index, &before, &changed).await? {
                println!("Redis index under {:?} updated", cli.redis_prefix);
            } else {
                eprintln!(
                    "note: the Redis index under {:?} was not built from this library; run \
                     `copytrace index rebuild` before matching",
                    cli.redis_prefix
                );
            }
            Ok(code)
        }
        Command::Library(LibraryCommand::List { json }) => {
            let store = open_store(&cli.db).await?;
            library_list(store.as_ref(), json).await
        }
        Command::Match(MatchCommandArgs {
            settings: args,
            queue,
            all,
        }) => {
            if args.candidates.is_empty() {
                bail!("--candidates none would match nothing; name at least one source");
            }
            let store = open_store(&cli.db).await?;
            if all {
                let marked = store.mark_all_pages_unmatched().await?;
                eprintln!("{marked} page(s) will be matched again");
            }
            if queue {
                let due = jobs::enqueue_due_matches(store.as_ref()).await?;
                println!("{due} page(s) due for matching have a match job");
                return Ok(ExitCode::SUCCESS);
            }
            match &cli.redis_url {
                Some(url) => {
                    run_match_redis(store.as_ref(), url, &cli.redis_prefix, args.config()).await
                }
                None => run_match(store.as_ref(), args.config()).await,
            }
        }
        Command::Index(IndexCommand::Rebuild) => {
            let Some(url) = &cli.redis_url else {
                bail!(
                    "index rebuild needs --redis-url (or COPYTRACE_REDIS_URL); without Redis \
                     the in-memory index is built afresh at every match run"
                );
            };
            let store = open_store(&cli.db).await?;
            index_rebuild(store.as_ref(), url, &cli.redis_prefix).await
        }
        Command::Export(ExportCommand::Matches { format, out }) => {
            let store = open_store(&cli.db).await?;
            export_matches(store.as_ref(), format, out).await
        }
        Command::Fingerprint { algo, json, file } => {
            let text = read_text_file(&file)?.text;
            let found = inspect::fingerprints(&text, &inspect::select_algorithms(algo.name()));
            let mut out = std::io::stdout().lock();
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
            } else {
                for f in &found {
                    let document = inspect::describe(&f.document);
                    writeln!(out, "{} v{}: {document}", f.algorithm, f.version)?;
                    for w in &f.windows {
                        let fingerprint = inspect::describe(&w.fingerprint);
                        writeln!(
                            out,
                            "  bytes {:>7}..{:<7} {fingerprint}",
                            w.byte_start, w.byte_end
                        )?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            file_a,
            file_b,
            json,
        } => {
            let a = read_text_file(&file_a)?.text;
            let b = read_text_file(&file_b)?.text;
            let (comparisons, verdict) = inspect::compare(&a, &b);
            if json {
                let value = serde_json::json!({ "algorithms": comparisons, "matcher": verdict });
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                println!(
                    "{:<10} {:>10} {:>10}  match",
                    "algorithm", "similarity", "distance"
                );
                for c in &comparisons {
                    let distance = c
                        .comparison
                        .distance
                        .map(|d| format!("{d}"))
                        .unwrap_or_else(|| "-".into());
                    println!(
                        "{:<10} {:>10.4} {:>10}  {}",
                        c.algorithm,
                        c.comparison.similarity,
                        distance,
                        if c.comparison.is_match { "yes" } else { "no" }
                    );
                }
                println!(
                    "matcher: {} (coverage of A {:.1}%, containment in B {:.1}%, {} characters in {} passage(s))",
                    if verdict.is_match {
                        "B copies A"
                    } else {
                        "no copy found"
                    },
                    verdict.coverage * 100.0,
                    verdict.containment * 100.0,
                    verdict.copied_chars,
                    verdict.passages
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Worker(command) => {
            let store = open_store(&cli.db).await?;
            let redis = cli
                .redis_url
                .clone()
                .map(|url| (url, cli.redis_prefix.clone()));
            let (kind, worker, listen) = match command {
                WorkerCommand::Crawl { worker, listen } => {
                    (processes::WorkerKind::Crawl, worker, listen)
                }
                WorkerCommand::Match {
                    worker,
                    settings,
                    listen,
                } => {
                    if settings.candidates.is_empty() {
                        bail!("--candidates none would match nothing; name at least one source");
                    }
                    (
                        processes::WorkerKind::Match(index, Box::new(settings.config())),
                        worker,
                        listen,
                    )
                }
            };
            let settings = processes::WorkerSettings {
                concurrency: worker.concurrency,
                runner: worker.lease.runner(worker.exit_when_idle),
            };
            let report = processes::worker(store, kind, settings, listen, redis).await?;
            eprintln!(
                "worker stopped: {} job(s) done, {} failed attempt(s), {} released, {} lost to another worker",
                report.completed, report.failed, report.released, report.lost
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(args) => {
            let store = open_store(&cli.db).await?;
            let embedded = !cli.db.to_ascii_lowercase().starts_with("postgres");
            let settings = processes::ServeSettings {
                listen: args.listen,
                workers: args.workers.unwrap_or(u32::from(embedded)),
                sweep_every: Duration::from_secs(args.sweep_secs),
                runner: args.lease.runner(false),
                index,
                match_config: args.settings.config(),
                dedup_schedule: (
                    args.dedup.dedup_cron.clone(),
                    args.dedup.timezone.clone(),
                    dedup::DedupJob {
                        fetch: args.dedup.recheck.settings(),
                        ..dedup::DedupJob::default()
                    },
                ),
            };
            let redis = cli
                .redis_url
                .clone()
                .map(|url| (url, cli.redis_prefix.clone()));
            processes::serve(store, settings, redis).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Jobs(command) => {
            let store = open_store(&cli.db).await?;
            jobs_command(store.as_ref(), command).await
        }
        Command::Schedule(command) => {
            let store = open_store(&cli.db).await?;
            schedule_command(store.as_ref(), command).await
        }
        Command::Runs(command) => {
            let store = open_store(&cli.db).await?;
            runs_command(store.as_ref(), command).await
        }
        Command::Dedup(args) => {
            if args.settings.candidates.is_empty() {
                bail!("--candidates none would match nothing; name at least one source");
            }
            let store = open_store(&cli.db).await?;
            if args.queue {
                let (run, job) = jobs::enqueue_dedup(store.as_ref(), &args.job()).await?;
                println!("enqueued dedup job {job} (run {run})");
                return Ok(ExitCode::SUCCESS);
            }
            let handler =
                jobs::MatchHandler::new(store.clone(), index.clone(), args.settings.config());
            handler.preload().await?;
            let progress = spinner("dedup:");
            let run = scheduling::dedup_now(store.as_ref(), &handler, &args.job(), &progress).await;
            progress.finish_and_clear();
            let run = run?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&run)?);
            } else {
                println!(
                    "dedup run {} {}: {} page(s) checked, {} new match(es), {} match(es) removed, {} page(s) unreachable",
                    run.id,
                    run.state.as_str(),
                    run.counts.pages_checked,
                    run.counts.new_matches,
                    run.counts.matches_removed,
                    run.counts.errors
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate => {
            open_store(&cli.db).await?;
            println!("database {} is up to date", redact(&cli.db));
            Ok(ExitCode::SUCCESS)
        }
        Command::Config => {
            print_config(
                &cli.db,
                cli.redis_url.as_deref(),
                &cli.redis_prefix,
                cli.config.as_deref(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Report => {
            let store = open_store(&cli.db).await?;
            let mut stdout = std::io::stdout().lock();
            report(store.as_ref(), &mut stdout).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Where match workers find the window index.
fn index_source(cli: &Cli) -> jobs::IndexSource {
    match &cli.redis_url {
        Some(url) => jobs::IndexSource::Redis {
            url: url.clone(),
            prefix: cli.redis_prefix.clone(),
        },
        None => jobs::IndexSource::Memory,
    }
}

fn print_config(db: &str, redis_url: Option<&str>, redis_prefix: &str, file: Option<&Path>) {
    let shown = |name: &str| std::env::var(name).ok();
    println!("database_url = {:?}", redact(db));
    match redis_url {
        Some(url) => println!("redis_url = {:?}", redact(url)),
        None => println!("# redis_url: not set (in-memory index)"),
    }
    println!("redis_prefix = {redis_prefix:?}");
    if let Some(path) = file {
        println!("# configuration file: {}", path.display());
    }
    for name in [
        "COPYTRACE_LOG",
        "COPYTRACE_LISTEN",
        "COPYTRACE_SERVE_WORKERS",
        "COPYTRACE_SWEEP_SECS",
        "COPYTRACE_WORKER_CONCURRENCY",
        "COPYTRACE_LEASE_SECS",
        "COPYTRACE_RETRY_BASE_SECS",
        "COPYTRACE_WORKER_LISTEN",
        "COPYTRACE_CANDIDATES",
        "COPYTRACE_MIN_COPIED_CHARS",
        "COPYTRACE_TIMEZONE",
        "COPYTRACE_DEDUP_CRON",
        "COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES",
        "COPYTRACE_RECHECK_USER_AGENT",
        "COPYTRACE_RECHECK_DELAY",
    ] {
        match shown(name) {
            Some(value) => println!("# {name} = {value:?}"),
            None => println!("# {name}: default"),
        }
    }
}

async fn jobs_command(store: &dyn Store, command: JobsCommand) -> Result<ExitCode> {
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
                    state: state.map(JobStateArg::state),
                    limit: Some(limit),
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&jobs)?);
            } else {
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
        }
        JobsCommand::Stats { json } => {
            let counts = store.job_counts().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&counts)?);
            } else {
                for count in &counts {
                    println!(
                        "{:<8} {:<8} {}",
                        count.kind,
                        count.state.as_str(),
                        count.count
                    );
                }
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

async fn schedule_command(store: &dyn Store, command: ScheduleCommand) -> Result<ExitCode> {
    let now = chrono::Utc::now();
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
            scheduling::check_cron(&cron, &tz)?;
            let seeds = parse_seeds(&urls)?;
            let schedule = scheduling::add_crawl_schedule(
                store,
                &name,
                &cron,
                &tz,
                owner,
                &settings.job(&seeds),
            )
            .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&schedule)?);
            } else {
                print!(
                    "{}",
                    scheduling::schedules_table(std::slice::from_ref(&schedule), now)
                );
            }
        }
        ScheduleCommand::List { json } => {
            let schedules = store.list_schedules().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&schedules)?);
            } else {
                print!("{}", scheduling::schedules_table(&schedules, now));
            }
        }
        ScheduleCommand::Show { name, json } => {
            let details = scheduling::schedule_details(store, &name, now).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&details)?);
            } else {
                print!("{}", scheduling::schedule_details_text(&details)?);
            }
        }
        ScheduleCommand::Pause { name } => {
            let schedule = store.get_schedule_by_name(&name).await?;
            store.set_schedule_enabled(schedule.id, false).await?;
            println!("schedule {name:?} paused");
        }
        ScheduleCommand::Resume { name } => {
            let schedule = store.get_schedule_by_name(&name).await?;
            store.set_schedule_enabled(schedule.id, true).await?;
            println!("schedule {name:?} resumed");
        }
        ScheduleCommand::Rm { name } => {
            let schedule = store.get_schedule_by_name(&name).await?;
            store.delete_schedule(schedule.id).await?;
            println!("schedule {name:?} deleted");
        }
        ScheduleCommand::RunNow { name } => {
            let (run, job) = scheduling::run_now(store, &name).await?;
            println!("schedule {name:?}: run {run} enqueued as job {job}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn runs_command(store: &dyn Store, command: RunsCommand) -> Result<ExitCode> {
    match command {
        RunsCommand::List {
            kind,
            state,
            schedule,
            limit,
            json,
        } => {
            let schedule_id = match schedule {
                Some(name) => Some(store.get_schedule_by_name(&name).await?.id),
                None => None,
            };
            let runs = store
                .list_runs(&RunFilter {
                    kind: kind.map(|k| match k {
                        RunKindArg::Crawl => RunKind::Crawl,
                        RunKindArg::Dedup => RunKind::Dedup,
                    }),
                    schedule_id,
                    state: state.map(|s| match s {
                        RunStateArg::Queued => RunState::Queued,
                        RunStateArg::Running => RunState::Running,
                        RunStateArg::Succeeded => RunState::Succeeded,
                        RunStateArg::Failed => RunState::Failed,
                        RunStateArg::Cancelled => RunState::Cancelled,
                    }),
                    limit: Some(limit),
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&runs)?);
            } else {
                print!("{}", scheduling::runs_table(&runs));
                println!("{} run(s)", runs.len());
            }
        }
        RunsCommand::Show { id, json } => {
            let run = store.get_run(id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&run)?);
            } else {
                print!("{}", scheduling::runs_table(std::slice::from_ref(&run)));
                if !run.stats.is_null() {
                    println!("statistics: {}", serde_json::to_string_pretty(&run.stats)?);
                }
            }
        }
        RunsCommand::Cancel { id } => {
            let state = store.request_run_cancel(id, chrono::Utc::now()).await?;
            match state {
                RunState::Cancelled => println!("run {id} cancelled"),
                _ => println!("run {id} will stop at its next page"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn library_add(store: &dyn Store, holder: &str, files: &[LibraryFile]) -> Result<ExitCode> {
    let holder_id = store.ensure_rights_holder(holder).await?;
    let outcomes = pipeline::ingest(store, holder_id, files, &MatchConfig::default()).await?;
    let mut counts = [0usize; 3];
    for o in &outcomes {
        let (word, slot) = match o.outcome {
            WriteOutcome::Created => ("added", 0),
            WriteOutcome::Updated => ("updated", 1),
            WriteOutcome::Unchanged => ("unchanged", 2),
        };
        counts[slot] += 1;
        println!(
            "{word:>9}  {}  《{}》  {} windows, {}",
            o.external_id, o.title, o.windows, o.encoding
        );
    }
    println!(
        "{} work(s): {} added, {} updated, {} unchanged",
        outcomes.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    Ok(ExitCode::SUCCESS)
}

async fn library_list(store: &dyn Store, json: bool) -> Result<ExitCode> {
    let works = store.list_works(None).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&works)?);
    } else {
        for w in &works {
            println!(
                "{}  《{}》  {} bytes, {} windows",
                w.external_id, w.title, w.content_len, w.segment_count
            );
        }
        println!("{} work(s)", works.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn spinner(message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {pos} [{elapsed}] {wide_msg}")
            .expect("valid progress template"),
    );
    bar.set_prefix(message);
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

async fn crawl(store: Arc<dyn Store>, seeds: &[Url], args: &CrawlArgs) -> Result<ExitCode> {
    // The same settings a queued crawl job carries, so both ways crawl alike.
    let config = args
        .settings
        .job(seeds)
        .config_with_validators(store.as_ref(), seeds)
        .await?;
    // Recorded as a run, with the crawler's statistics, like a scheduled crawl.
    let (run_id, _) = store
        .create_run(&jobs::manual_run(RunKind::Crawl), None)
        .await?;
    let progress = spinner("crawling, pages stored:");
    let mut sink = pipeline::StoreSink::new(store.clone(), progress.clone(), Some(run_id));
    let report = copytrace_crawler::crawl(&config, seeds, &mut sink).await;
    progress.finish_and_clear();
    let (state, stats, error) = match &report {
        Ok(report) => (RunState::Succeeded, report.stats.clone(), None),
        Err(error) => (
            RunState::Failed,
            copytrace_crawler::CrawlStats::default(),
            Some(format!("crawl aborted: {error}")),
        ),
    };
    let mut counts = jobs::crawl_counts(&stats);
    counts.matches_removed = sink.recrawl.removed;
    store
        .finish_run(
            run_id,
            state,
            &counts,
            &jobs::crawl_stats_json(&stats),
            error.as_deref(),
            chrono::Utc::now(),
        )
        .await?;
    let report = report.context("crawl aborted")?;
    let counts = &sink.counts;
    let stats = &report.stats;
    println!(
        "crawled {} page(s): {} new, {} changed, {} unchanged; {} failed, {} disallowed by robots.txt, {} left unvisited (limits); {} request(s), {} retried, {} not modified, {} received, {:.1} pages/s",
        report.fetched,
        counts.created,
        counts.updated,
        counts.unchanged,
        report.failures.len(),
        report.disallowed_by_robots,
        report.skipped,
        stats.requests,
        stats.retries,
        stats.not_modified,
        indicatif::HumanBytes(stats.bytes),
        stats.pages_per_second()
    );
    if !stats.errors.is_empty() {
        println!("failures by kind: {}", stats.errors_line());
    }
    for (url, reason) in &report.failures {
        eprintln!("failed: {url}: {reason}");
    }
    // The crawler reports URLs without their fragment, so compare seeds the same way.
    let seed_failed = report.failures.iter().any(|(failed, _)| {
        seeds.iter().any(|seed| {
            let mut seed = seed.clone();
            seed.set_fragment(None);
            Url::parse(failed).is_ok_and(|failed| failed == seed)
        })
    });
    if seed_failed {
        eprintln!("error: some seed URLs could not be crawled (see above); the others were stored");
        return Ok(ExitCode::from(EXIT_PARTIAL));
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_match(store: &dyn Store, config: MatchConfig) -> Result<ExitCode> {
    let matcher = pipeline::load_matcher(store, config).await?;
    let progress = spinner("matching, pages:");
    let summary = pipeline::match_pending(store, &matcher, &progress).await;
    progress.finish_and_clear();
    let summary = summary?;
    println!(
        "matched {} page(s) against {} work(s): {} infringing page(s), {} match(es); \
         {} removed, {} reopened",
        summary.pages,
        matcher.work_count(),
        summary.infringing_pages,
        summary.matches,
        summary.removed,
        summary.reopened
    );
    Ok(ExitCode::SUCCESS)
}

/// Opens the Redis index with the matcher's distance; the URL is shown redacted on failure.
fn open_redis_index(url: &str, prefix: &str) -> Result<RedisIndex> {
    RedisIndex::connect(url, prefix, MatchConfig::default().max_distance)
        .with_context(|| format!("cannot open the Redis index at {}", redact(url)))
}

async fn index_rebuild(store: &dyn Store, url: &str, prefix: &str) -> Result<ExitCode> {
    let mut index = open_redis_index(url, prefix)?;
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template("indexing works {bar:30} {pos}/{len} [{elapsed}]")
            .expect("valid progress template"),
    );
    let summary =
        pipeline::rebuild_redis_index(store, &mut index, &MatchConfig::default(), &progress).await;
    progress.finish_and_clear();
    let summary = summary?;
    println!(
        "indexed {} window(s) of {} work(s) in Redis at {} under {prefix:?} ({} re-fingerprinted)",
        summary.windows,
        summary.works,
        redact(url),
        summary.refingerprinted
    );
    println!("index holds {} window(s)", index.len()?);
    Ok(ExitCode::SUCCESS)
}

async fn run_match_redis(
    store: &dyn Store,
    url: &str,
    prefix: &str,
    config: MatchConfig,
) -> Result<ExitCode> {
    let index = open_redis_index(url, prefix)?;
    let matcher = pipeline::load_redis_matcher(store, index, config).await?;
    let progress = spinner("matching, pages:");
    let summary = pipeline::match_pending(store, &matcher, &progress).await;
    progress.finish_and_clear();
    let summary = summary?;
    println!(
        "matched {} page(s) against {} work(s) (Redis index): {} infringing page(s), {} match(es); \
         {} removed, {} reopened",
        summary.pages,
        matcher.work_count(),
        summary.infringing_pages,
        summary.matches,
        summary.removed,
        summary.reopened
    );
    Ok(ExitCode::SUCCESS)
}

async fn export_matches(
    store: &dyn Store,
    format: ExportFormat,
    out: Option<PathBuf>,
) -> Result<ExitCode> {
    let records = store.list_matches(&MatchFilter::default()).await?;
    let write = |writer: &mut dyn Write| -> Result<()> {
        match format {
            ExportFormat::Csv => copytrace_analytics::export::write_csv(&records, writer)?,
            ExportFormat::Json => copytrace_analytics::export::write_json(&records, writer)?,
        }
        Ok(())
    };
    match out {
        None => write(&mut std::io::stdout().lock())?,
        Some(path) => {
            // Write beside the target and rename, so a failed export never leaves half a file.
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(".".as_ref());
            let mut temp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("cannot write to {}", dir.display()))?;
            write(temp.as_file_mut())?;
            temp.persist(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("exported {} match(es) to {}", records.len(), path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn report(store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    let records = store.list_matches(&MatchFilter::default()).await?;
    // Each match's evidence is read against the text it points into, which a re-crawl may have
    // replaced on the page since (the store keeps it).
    let mut texts = HashMap::new();
    for key in records
        .iter()
        .map(|r| (r.page_id, r.evidence_hash.clone()))
        .collect::<BTreeSet<_>>()
    {
        if let Some(text) = store.evidence_text(key.0, &key.1).await? {
            texts.insert(key, text);
        }
    }
    copytrace_analytics::report::write_text(&records, &texts, out)?;
    Ok(())
}

async fn run_demo() -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let db = format!("sqlite://{}", dir.path().join("demo.db").display());
    println!("Copytrace demo — temporary database {}", redact(&db));
    let store = open_store(&db).await?;

    println!(
        "\n1. Registering the sample library ({} works)",
        demo::LIBRARY.len()
    );
    let files: Vec<LibraryFile> = demo::LIBRARY
        .iter()
        .map(|(id, text)| LibraryFile {
            path: PathBuf::from(format!("demo/library/{id}.txt")),
            external_id: (*id).to_owned(),
            file: TextFile {
                text: (*text).to_owned(),
                encoding: "UTF-8",
            },
        })
        .collect();
    library_add(store.as_ref(), "Demo Publisher", &files).await?;

    let site = demo::sample_site();
    let server = demo::serve(site.clone())
        .await
        .context("cannot start the sample site")?;
    let base = server.base_url();
    println!("\n2. Crawling the sample piracy site at {base}");
    let crawl_args = CrawlArgs {
        urls: vec![base.clone()],
        settings: CrawlSettingsArgs {
            max_pages: 100,
            depth: None,
            allow_private_addresses: true,
            concurrency: 4,
            timeout: 30,
            user_agent: copytrace_crawler::DEFAULT_USER_AGENT.to_owned(),
            delay: Duration::ZERO,
            per_host: 2,
            retries: 2,
            sitemaps: false,
            include: Vec::new(),
            exclude: Vec::new(),
            allow_host: Vec::new(),
            no_conditional: false,
        },
        queue: false,
    };
    let seeds = parse_seeds(&crawl_args.urls)?;
    crawl(store.clone(), &seeds, &crawl_args).await?;

    println!("\n3. Matching pages against the library");
    run_match(store.as_ref(), MatchConfig::default()).await?;

    println!("\n4. Report\n");
    report(store.as_ref(), &mut std::io::stdout().lock()).await?;

    // The demo checks itself: every pirated page found against the right work, nothing else.
    let records = store.list_matches(&MatchFilter::default()).await?;
    let requested = server.requested_paths();
    server.stop().await;
    println!("\n5. Checking the report against what the sample site really contains\n");
    let mut problems = 0;
    for page in &site.pages {
        let url = format!("{}{}", base.trim_end_matches('/'), page.path);
        let found: BTreeSet<&str> = records
            .iter()
            .filter(|r| r.page_url == url)
            .map(|r| r.work_external_id.as_str())
            .collect();
        let expected: BTreeSet<&str> = if page.disallowed {
            BTreeSet::new()
        } else {
            page.copies.iter().copied().collect()
        };
        let fetched = requested.contains(&page.path);
        let ok = found == expected && !(page.disallowed && fetched);
        problems += usize::from(!ok);
        let verdict = match (&expected.is_empty(), page.disallowed) {
            (_, true) => format!(
                "not fetched (robots.txt){}",
                if fetched { " — BUT IT WAS" } else { "" }
            ),
            (true, false) => format!(
                "not reported{}",
                if found.is_empty() {
                    ""
                } else {
                    " — BUT IT WAS"
                }
            ),
            (false, false) => format!(
                "found {}",
                found.iter().copied().collect::<Vec<_>>().join(", ")
            ),
        };
        println!(
            "  {} {:<28} {:<50} {}",
            if ok { "✓" } else { "✗" },
            page.path,
            page.label,
            verdict
        );
    }
    drop(store);
    if problems > 0 {
        bail!("the demo report disagrees with the sample site on {problems} page(s)");
    }
    println!(
        "\nAll pirated sample pages were found against the right work; no unrelated page was accused."
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::one_line;

    #[derive(Debug)]
    struct Server;

    impl fmt::Display for Server {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("database \"ct\" does not exist")
        }
    }

    impl std::error::Error for Server {}

    /// A driver error that prints its source inside its own message and also returns it.
    #[derive(Debug)]
    struct Driver(Server);

    impl fmt::Display for Driver {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "error returned from database: {}", self.0)
        }
    }

    impl std::error::Error for Driver {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_repeating_the_previous_message_is_printed_once() {
        let error = anyhow::Error::new(Driver(Server)).context("cannot open database pg://h/ct");
        assert_eq!(
            one_line(&error),
            "cannot open database pg://h/ct: error returned from database: database \"ct\" does \
             not exist"
        );
        let plain = anyhow::anyhow!("disk full").context("cannot write");
        assert_eq!(one_line(&plain), "cannot write: disk full");
    }
}
