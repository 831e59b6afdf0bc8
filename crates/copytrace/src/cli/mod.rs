//! The command line: what `copytrace` accepts (clap types, one module per command group) and
//! how each command presents the service's results. No pipeline step lives here: every command
//! calls `copytrace-service` and prints what it returns.

pub mod alerts;
pub mod crawl;
pub mod evidence;
pub mod filters;
pub mod holders;
pub mod inspect;
pub mod library;
pub mod matching;
pub mod notices;
pub mod output;
pub mod processes;
pub mod progress;
pub mod queue;
pub mod reports;
pub mod review;
pub mod schedules;
pub mod sites;
pub mod stats;
pub mod users;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::{Parser, Subcommand};
use copytrace_service::index::IndexSource;
use copytrace_service::redact;
use copytrace_store::Store;

use crate::backend::{DEFAULT_DATABASE_URL, Open, open_store};

/// Exit code when a command finished but some of its inputs failed.
pub const EXIT_PARTIAL: u8 = 3;

/// Copytrace finds pirated copies of registered works on the web: it crawls suspected piracy
/// sites, fingerprints every page, matches it against the source library and keeps
/// evidence-backed matches for reports and takedown notices.
#[derive(Debug, Parser)]
#[command(name = "copytrace", version, propagate_version = true)]
pub struct Cli {
    /// Where the data lives.
    #[command(flatten)]
    pub globals: Globals,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Where the data lives: the options every command shares.
#[derive(Debug, Clone, clap::Args)]
pub struct Globals {
    /// More output on stderr (repeat for more): `-v` lists every failed URL of a crawl instead
    /// of a few per kind and logs Copytrace's own debug lines; `-vv` logs everything, the
    /// libraries' lines (HTML parser, browser protocol) included. COPYTRACE_LOG (a tracing
    /// filter such as `info` or `warn,copytrace=debug`) sets the log precisely and wins over
    /// this flag.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Database URL: `sqlite://PATH` (the embedded default) or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (an existing database; migrated on open).
    #[arg(long, global = true, env = "COPYTRACE_DATABASE_URL", default_value = DEFAULT_DATABASE_URL,
          hide_env_values = true)]
    pub db: String,

    /// Redis URL of the shared candidate indexes (`redis://[:password@]host:port[/db]`), or the
    /// seed nodes of a Redis Cluster as several such URLs separated by commas. Without it,
    /// `match` builds in-memory indexes from the database at every run.
    #[arg(
        long,
        global = true,
        env = "COPYTRACE_REDIS_URL",
        hide_env_values = true
    )]
    pub redis_url: Option<String>,

    /// Key prefix of the index in Redis, so several libraries can share one server.
    #[arg(long, global = true, env = "COPYTRACE_REDIS_PREFIX",
          default_value = copytrace_index_redis::DEFAULT_PREFIX)]
    pub redis_prefix: String,

    /// Configuration file (TOML; see deploy/copytrace.toml). Its settings apply where neither a
    /// flag nor a COPYTRACE_… variable gives one.
    #[arg(long, global = true, env = "COPYTRACE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// SMTP server of alert e-mails and takedown notices (`notice send`, and the admin web's
    /// and API's send under `serve`): `smtp://host:port` (plain), `smtp://host?tls=required`
    /// (STARTTLS), `smtps://user:password@host` (TLS). E-mail alerts wait, and sending notices
    /// is refused saying so, until it is set.
    #[arg(
        long,
        global = true,
        env = "COPYTRACE_SMTP_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub smtp_url: Option<String>,

    /// Sender of alert e-mails and takedown notices.
    #[arg(
        long,
        global = true,
        env = "COPYTRACE_MAIL_FROM",
        value_name = "MAILBOX",
        default_value = "Copytrace <copytrace@localhost>"
    )]
    pub mail_from: String,

    /// Let alert webhooks reach private and loopback addresses (an intranet receiver). They
    /// are refused by default, as the crawler refuses them.
    #[arg(long, global = true, env = "COPYTRACE_ALERTS_ALLOW_PRIVATE_ADDRESSES")]
    pub alerts_allow_private_addresses: bool,

    /// Days after a notice was sent, without all its copies removed, before its one reminder
    /// (`notice follow-up` and the scheduled alerts job).
    #[arg(long, global = true, env = "COPYTRACE_NOTICE_REMINDER_DAYS", value_name = "N",
          default_value_t = copytrace_service::sending::DEFAULT_REMINDER_DAYS)]
    pub notice_reminder_days: u32,

    /// Days after a notice was sent, without all its copies removed, before its one
    /// escalation to the site's abuse contact.
    #[arg(long, global = true, env = "COPYTRACE_NOTICE_ESCALATE_DAYS", value_name = "M",
          default_value_t = copytrace_service::sending::DEFAULT_ESCALATE_DAYS)]
    pub notice_escalate_days: u32,

    /// Days after a notice was sent, without all its copies removed, before its search-engine
    /// delisting step (once escalated): the Google, Bing and Baidu lists mailed to the rights
    /// holder's profile e-mail.
    #[arg(long, global = true, env = "COPYTRACE_NOTICE_DELIST_DAYS", value_name = "D",
          default_value_t = copytrace_service::followup::DEFAULT_DELIST_DAYS)]
    pub notice_delist_days: u32,

    /// RFC 3161 time-stamping authority (`http(s)://…`, e.g. `https://freetsa.org/tsr`): when
    /// set, every evidence package's manifest and the text of every notice mail get a signed
    /// timestamp from it (see `copytrace evidence --help`).
    #[arg(
        long,
        global = true,
        env = "COPYTRACE_TSA_URL",
        value_name = "URL",
        value_parser = parse_tsa_url,
        hide_env_values = true
    )]
    pub tsa_url: Option<copytrace_service::timestamp::TsaSettings>,

    /// The certificate(s) of the time-stamping authority to trust (PEM or DER: its CA's or its
    /// own): `evidence verify` requires a package's timestamp to chain to one of them. Without
    /// it, the timestamp's signature is checked against the certificate it carries only.
    #[arg(long, global = true, env = "COPYTRACE_TSA_CERT", value_name = "FILE")]
    pub tsa_cert: Option<PathBuf>,

    /// Recipients of the staff weekly report, every rights holder's figures (repeatable, or
    /// comma-separated in the variable); without one, no staff report is sent.
    #[arg(
        long = "report-staff-email",
        global = true,
        env = "COPYTRACE_REPORT_STAFF_EMAILS",
        value_delimiter = ',',
        value_name = "ADDRESS"
    )]
    pub report_staff_emails: Vec<String>,

    /// Language of the staff weekly report (a holder's report is in its profile's language).
    #[arg(long, global = true, env = "COPYTRACE_REPORT_STAFF_LANGUAGE", default_value = "en",
          value_parser = ["zh", "en"])]
    pub report_staff_language: String,

    /// Whether the command may create the database: not an option, [`run`] sets it from the
    /// command ([`Command::open`]).
    #[arg(skip)]
    pub open: Open,
}

/// `--tsa-url`: an http or https URL.
fn parse_tsa_url(url: &str) -> Result<copytrace_service::timestamp::TsaSettings, String> {
    copytrace_service::timestamp::TsaSettings::parse(url).map_err(|e| e.to_string())
}

/// How long `serve` and `worker` wait at start for a database that cannot be reached yet.
const DATABASE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

impl Globals {
    /// Opens (and migrates) the database; a SQLite file that does not exist is created or
    /// refused as the command says ([`Globals::open`]).
    pub async fn store(&self) -> Result<Arc<dyn Store>> {
        open_store(&self.db, self.open).await
    }

    /// The store, for a long-running process (`serve`, `worker`): waits up to
    /// two minutes for a database that cannot be reached yet (one restarting).
    pub async fn store_waiting(&self) -> Result<Arc<dyn Store>> {
        crate::backend::open_store_waiting(&self.db, self.open, DATABASE_PATIENCE).await
    }

    /// The shared Redis index a library change keeps in step, when `--redis-url` is given.
    pub fn redis_index(&self) -> Result<Option<copytrace_index_redis::RedisIndex>> {
        match &self.redis_url {
            Some(url) => Ok(Some(copytrace_service::index::open_redis_index(
                url,
                &self.redis_prefix,
            )?)),
            None => Ok(None),
        }
    }

    /// Where matching finds the window index.
    pub fn index_source(&self) -> IndexSource {
        match &self.redis_url {
            Some(url) => IndexSource::Redis {
                url: url.clone(),
                prefix: self.redis_prefix.clone(),
            },
            None => IndexSource::Memory,
        }
    }

    /// How alerts are sent.
    pub fn alert_settings(&self) -> copytrace_service::alerts::AlertSettings {
        copytrace_service::alerts::AlertSettings {
            smtp_url: self.smtp_url.clone(),
            mail_from: self.mail_from.clone(),
            allow_private_addresses: self.alerts_allow_private_addresses,
            follow_up: copytrace_service::sending::FollowUpSettings {
                reminder_days: self.notice_reminder_days,
                escalate_days: self.notice_escalate_days,
                delist_days: self.notice_delist_days,
            },
            timestamps: self.tsa_url.clone(),
            ..Default::default()
        }
    }

    /// Who gets the staff weekly report, and in which language.
    pub fn weekly_settings(&self) -> copytrace_service::reports::WeeklySettings {
        copytrace_service::reports::WeeklySettings {
            staff_recipients: self.report_staff_emails.clone(),
            staff_language: self.report_staff_language.clone(),
        }
    }

    /// Whether the database is the embedded one (everything in one process).
    pub fn embedded(&self) -> bool {
        !self.db.to_ascii_lowercase().starts_with("postgres")
    }
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage the source library (the registered works).
    #[command(subcommand)]
    Library(library::LibraryCommand),
    /// Manage rights holders, the owners of works.
    #[command(subcommand)]
    RightsHolder(holders::HolderCommand),
    /// Crawl sites and store their pages' text. Only the seeds' own sites are followed.
    Crawl(crawl::CrawlArgs),
    /// Match every page not yet matched against the library and record the verdicts.
    Match(matching::MatchCommandArgs),
    /// Run a worker process that takes jobs from the durable queue (production: many of them,
    /// against PostgreSQL and Redis). Stops cleanly on SIGTERM.
    #[command(subcommand)]
    Worker(processes::WorkerCommand),
    /// Run the service process: health, readiness and metrics endpoints, the scheduler (one
    /// leader across all `serve` processes) and, on SQLite, the workers. Stops on SIGTERM.
    Serve(processes::ServeArgs),
    /// Inspect and retry jobs of the durable queue.
    #[command(subcommand)]
    Jobs(queue::JobsCommand),
    /// Apply pending database migrations and exit; a SQLite database file that does not exist
    /// yet is created (every command also migrates on open).
    Migrate,
    /// Print the effective settings (file, environment and defaults), secrets hidden.
    Config,
    /// Manage the Redis window index (production; needs --redis-url).
    #[command(subcommand)]
    Index(matching::IndexCommand),
    /// Export data for analysts and scripts.
    #[command(subcommand)]
    Export(output::ExportCommand),
    /// Alert rights holders of new copies and removals (webhook, e-mail).
    #[command(subcommand)]
    Alert(alerts::AlertCommand),
    /// Accounts of the admin web and API.
    #[command(subcommand)]
    User(users::UserCommand),
    /// The review queue: confirm, reject or license matches below the certainty gate.
    #[command(subcommand)]
    Review(review::ReviewCommand),
    /// Takedown notices: write one per site from the confirmed copies, mail it to the site's
    /// contacts, follow it up (reminder, escalation); removal checks verify the removals.
    #[command(subcommand)]
    Notice(notices::NoticeCommand),
    /// Sites' contacts: where notices are sent (found on their pages, or added here).
    #[command(subcommand)]
    Site(sites::SiteCommand),
    /// Statistics of the match library: per work or chapter, site, day, rights holder, and
    /// time to piracy.
    #[command(subcommand)]
    Stats(stats::StatsCommand),
    /// Write the evidence package of one match (raw page, text, passages side by side,
    /// screenshot, manifest with SHA-256 hashes), or check one (`evidence verify DIR`).
    ///
    /// With a time-stamping authority (--tsa-url, COPYTRACE_TSA_URL, `tsa_url` in the
    /// configuration file), the SHA-256 of manifest.json is timestamped (RFC 3161): the token is
    /// written beside it as manifest.tsr and kept in the database with its time. When the
    /// authority fails, the package is still written and recorded, a warning says why, the
    /// command exits 3, and `copytrace evidence timestamp DIR` stamps it later.
    Evidence(evidence::EvidenceArgs),
    /// Print a readable infringement report, grouped by work; `report weekly` writes (and
    /// with --send mails) the weekly reports.
    #[command(args_conflicts_with_subcommands = true)]
    Report {
        /// The weekly reports instead.
        #[command(subcommand)]
        command: Option<reports::ReportCommand>,
        /// Which matches it reports.
        #[command(flatten)]
        scope: filters::ScopeArgs,
    },
    /// Print the document-level and window-level fingerprints of a text file.
    Fingerprint(inspect::FingerprintArgs),
    /// Compare two text files with every algorithm and with the full matcher (is B a copy of A?).
    Compare(inspect::CompareArgs),
    /// Manage cron schedules of crawls (and the built-in daily dedup run).
    #[command(subcommand)]
    Schedule(schedules::ScheduleCommand),
    /// Crawl and dedup runs: history, counts, statistics, cancellation.
    #[command(subcommand)]
    Runs(queue::RunsCommand),
    /// Bring the match library up to date now, as the daily run does: fetch known infringing
    /// pages again to record removals, then match every page not yet matched against the
    /// current library (after a library change, every page).
    Dedup(matching::DedupArgs),
    /// Run the whole pipeline on bundled sample data in a temporary database: ingest a small
    /// library, serve a sample piracy site on a loopback port, crawl it, match, report.
    Demo,
}

impl Command {
    /// Whether the command may create the database. Only the commands that can start a new
    /// library, and the service's processes, create a SQLite file that does not exist yet;
    /// every other command refuses it, so that a mistyped `--db` is an error instead of an
    /// empty new database. A subcommand not named here opens an existing database only.
    pub fn open(&self) -> Open {
        use holders::HolderCommand;
        use library::LibraryCommand;
        use schedules::ScheduleCommand;
        use users::UserCommand;
        match self {
            // The first steps of a new library: works, their owners, accounts, schedules,
            // crawled pages.
            Command::Library(LibraryCommand::Add { .. } | LibraryCommand::Import { .. })
            | Command::RightsHolder(HolderCommand::Add { .. })
            | Command::User(UserCommand::Add { .. })
            | Command::Schedule(ScheduleCommand::Add { .. })
            | Command::Crawl(_)
            // Setting up and running the service.
            | Command::Migrate
            | Command::Serve(_)
            | Command::Worker(_) => Open::Create,
            Command::Library(_)
            | Command::RightsHolder(_)
            | Command::User(_)
            | Command::Schedule(_)
            | Command::Match(_)
            | Command::Jobs(_)
            | Command::Index(_)
            | Command::Export(_)
            | Command::Alert(_)
            | Command::Review(_)
            | Command::Notice(_)
            | Command::Site(_)
            | Command::Stats(_)
            | Command::Evidence(_)
            | Command::Report { .. }
            | Command::Runs(_)
            | Command::Dedup(_)
            // These open no database of `--db` (the demo makes its own).
            | Command::Config
            | Command::Fingerprint(_)
            | Command::Compare(_)
            | Command::Demo => Open::Existing,
        }
    }
}

/// Runs one command.
pub async fn run(cli: Cli) -> Result<ExitCode> {
    let globals = &Globals {
        open: cli.command.open(),
        ..cli.globals
    };
    match cli.command {
        Command::Demo => crate::demo::run_demo().await,
        Command::Crawl(args) => crawl::run(globals, args).await,
        Command::Library(command) => library::run(globals, command).await,
        Command::RightsHolder(command) => holders::run(globals, command).await,
        Command::Match(args) => matching::run_match(globals, args).await,
        Command::Index(command) => matching::run_index(globals, command).await,
        Command::Dedup(args) => matching::run_dedup(globals, args).await,
        Command::Export(command) => output::run_export(globals, command).await,
        Command::Alert(command) => alerts::run(globals, command).await,
        Command::User(command) => users::run(globals, command).await,
        Command::Evidence(args) => evidence::run(globals, args).await,
        Command::Report {
            command: Some(command),
            ..
        } => reports::run(globals, command).await,
        Command::Report {
            command: None,
            scope,
        } => output::run_report(globals, scope).await,
        Command::Review(command) => review::run(globals, command).await,
        Command::Stats(command) => stats::run(globals, command).await,
        Command::Notice(command) => notices::run(globals, command).await,
        Command::Site(command) => sites::run(globals, command).await,
        Command::Fingerprint(args) => inspect::fingerprint(args),
        Command::Compare(args) => inspect::compare(args),
        Command::Worker(command) => processes::run_worker(globals, command).await,
        Command::Serve(args) => processes::run_serve(globals, args).await,
        Command::Jobs(command) => queue::run_jobs(globals, command).await,
        Command::Runs(command) => queue::run_runs(globals, command).await,
        Command::Schedule(command) => schedules::run(globals, command).await,
        Command::Migrate => {
            globals.store().await?;
            println!("database {} is up to date", redact(&globals.db));
            Ok(ExitCode::SUCCESS)
        }
        Command::Config => {
            crate::config::print_effective(globals);
            Ok(ExitCode::SUCCESS)
        }
    }
}
