//! `copytrace serve` and `copytrace worker`: the long-running processes' settings.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Subcommand;
use copytrace_service::dedup::DedupJob;
use copytrace_service::reports::{WeeklySchedule, WeeklySettings};
use copytrace_service::schedules::DEFAULT_DEDUP_CRON;

use super::Globals;
use super::matching::{MatchArgs, RecheckArgs};
use crate::processes::{self, ServeSettings, WorkerKind, WorkerSettings};

/// How jobs are held and retried, for every process that runs jobs.
#[derive(Debug, clap::Args)]
pub struct LeaseArgs {
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
pub struct WorkerArgs {
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

/// `copytrace worker …`
#[derive(Debug, Subcommand)]
pub enum WorkerCommand {
    /// Run crawl jobs (enqueued by `copytrace crawl --queue` and the scheduler).
    Crawl {
        /// Worker settings.
        #[command(flatten)]
        worker: WorkerArgs,
        /// Serve /healthz, /readyz and /metrics on this address.
        #[arg(long, env = "COPYTRACE_WORKER_LISTEN")]
        listen: Option<SocketAddr>,
    },
    /// Run match jobs: match one page against the library each, over the Redis index when
    /// --redis-url is set (shared by all workers), else over an in-memory index.
    Match {
        /// Worker settings.
        #[command(flatten)]
        worker: WorkerArgs,
        /// Matching settings.
        #[command(flatten)]
        settings: MatchArgs,
        /// Serve /healthz, /readyz and /metrics on this address.
        #[arg(long, env = "COPYTRACE_WORKER_LISTEN")]
        listen: Option<SocketAddr>,
    },
}

/// The daily dedup schedule that `serve` keeps.
#[derive(Debug, clap::Args)]
pub struct DedupScheduleArgs {
    /// When the daily dedup run starts (cron, five fields or six with seconds first).
    #[arg(long, env = "COPYTRACE_DEDUP_CRON", default_value = DEFAULT_DEDUP_CRON)]
    dedup_cron: String,
    /// Time zone of the dedup schedule, and the default of `schedule add --tz`.
    #[arg(long, env = "COPYTRACE_TIMEZONE", default_value = "UTC")]
    timezone: String,
    #[command(flatten)]
    recheck: RecheckArgs,
    /// When the weekly reports are mailed (cron, in --timezone; default Mondays 08:00), each
    /// of the seven UTC days before that day; `off` sends none. Sent only when an SMTP server
    /// is configured (--smtp-url). See `copytrace report weekly`.
    #[arg(long, env = "COPYTRACE_WEEKLY_REPORT_CRON",
          default_value = copytrace_service::reports::DEFAULT_WEEKLY_REPORT_CRON)]
    weekly_report_cron: String,
}

/// `copytrace serve`
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address of the admin web and the operations endpoints (/healthz, /readyz, /metrics).
    #[arg(long, env = "COPYTRACE_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Mark the web's cookies Secure: set it when users reach the web over HTTPS (directly or
    /// through a TLS-terminating proxy), so browsers never send a session over plain HTTP.
    #[arg(long, env = "COPYTRACE_SECURE_COOKIES")]
    secure_cookies: bool,
    /// A reverse proxy in front of the web (an address, or a network such as 10.0.0.0/8;
    /// repeatable, or comma-separated in the variable): its `X-Forwarded-For` header names the
    /// client, so the login limiter counts each client rather than the proxy. Other senders of
    /// the header are not believed.
    #[arg(long = "trusted-proxy", env = "COPYTRACE_TRUSTED_PROXIES", value_delimiter = ',',
          value_parser = copytrace_admin_web::web::parse_trusted_proxy)]
    trusted_proxies: Vec<ipnet::IpNet>,
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

fn redis(globals: &Globals) -> Option<(String, String)> {
    globals
        .redis_url
        .clone()
        .map(|url| (url, globals.redis_prefix.clone()))
}

/// Runs `copytrace worker …` until SIGTERM (or until idle).
pub async fn run_worker(globals: &Globals, command: WorkerCommand) -> Result<ExitCode> {
    let (kind, worker, listen) = match command {
        WorkerCommand::Crawl { worker, listen } => {
            (WorkerKind::Crawl(globals.alert_settings()), worker, listen)
        }
        WorkerCommand::Match {
            worker,
            settings,
            listen,
        } => {
            let config = settings.config()?;
            (
                WorkerKind::Match(globals.index_source(), Box::new(config), settings.gate()?),
                worker,
                listen,
            )
        }
    };
    let store = globals.store_waiting().await?;
    let settings = WorkerSettings {
        concurrency: worker.concurrency,
        runner: worker.lease.runner(worker.exit_when_idle),
    };
    let report = processes::worker(store, kind, settings, listen, redis(globals)).await?;
    eprintln!(
        "worker stopped: {} job(s) done, {} failed attempt(s), {} released, {} lost to another worker",
        report.completed, report.failed, report.released, report.lost
    );
    Ok(ExitCode::SUCCESS)
}

/// The weekly reports' schedule and recipients, unless they are off or no SMTP server is
/// configured to send them.
fn weekly_reports(
    globals: &Globals,
    args: &DedupScheduleArgs,
) -> Result<Option<(WeeklySchedule, WeeklySettings)>> {
    if args.weekly_report_cron.trim().eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let schedule = WeeklySchedule::parse(&args.weekly_report_cron, &args.timezone)
        .context("invalid weekly report schedule (--weekly-report-cron)")?;
    if globals.smtp_url.is_none() {
        tracing::info!("no SMTP server is configured (--smtp-url): no weekly reports are sent");
        return Ok(None);
    }
    Ok(Some((schedule, globals.weekly_settings())))
}

/// Runs `copytrace serve` until SIGTERM.
pub async fn run_serve(globals: &Globals, args: ServeArgs) -> Result<ExitCode> {
    let match_config = args.settings.config()?;
    let review_gate = args.settings.gate()?;
    let store = globals.store_waiting().await?;
    let settings = ServeSettings {
        listen: args.listen,
        secure_cookies: args.secure_cookies,
        trusted_proxies: args.trusted_proxies,
        workers: args.workers.unwrap_or(u32::from(globals.embedded())),
        sweep_every: Duration::from_secs(args.sweep_secs),
        runner: args.lease.runner(false),
        index: globals.index_source(),
        match_config,
        review_gate,
        alerts: globals.alert_settings(),
        weekly_reports: weekly_reports(globals, &args.dedup)?,
        dedup_schedule: (
            args.dedup.dedup_cron.clone(),
            args.dedup.timezone.clone(),
            DedupJob {
                fetch: args.dedup.recheck.settings(),
                ..DedupJob::default()
            },
        ),
    };
    processes::serve(store, settings, redis(globals)).await?;
    Ok(ExitCode::SUCCESS)
}
