//! `copytrace alert`: telling rights holders of new copies and removals by webhook or e-mail.

use std::process::ExitCode;

use anyhow::Result;
use chrono::Utc;
use clap::{Subcommand, ValueEnum};
use copytrace_service::alerts::{self, Alerter, Destination};
use copytrace_store::{AlertCadence, Id, Store};

use super::Globals;

/// `copytrace alert …`
#[derive(Debug, Subcommand)]
pub enum AlertCommand {
    /// Tell a rights holder of its new reported copies and of removals, by webhook (JSON,
    /// signed with HMAC-SHA256) or e-mail digest. Adding the same address again updates it.
    /// Only what happens from now on is told.
    Add {
        /// The rights holder's name.
        name: String,
        /// POST each alert to this http(s) URL.
        #[arg(
            long,
            value_name = "URL",
            conflicts_with = "email",
            required_unless_present = "email"
        )]
        webhook: Option<String>,
        /// Mail a digest to this address (through --smtp-url).
        #[arg(long, value_name = "ADDRESS")]
        email: Option<String>,
        /// The webhook's signing key (at least 16 characters); a random one is made and
        /// printed once when absent.
        #[arg(long, env = "COPYTRACE_WEBHOOK_SECRET", hide_env_values = true)]
        secret: Option<String>,
        /// Send at most one digest a day instead of after every run.
        #[arg(long)]
        daily: bool,
        /// Language of the e-mail digest.
        #[arg(long, value_enum, default_value_t = LangArg::Zh)]
        lang: LangArg,
    },
    /// List alert targets and how their deliveries stand (secrets are never shown).
    List {
        /// Only this rights holder's.
        #[arg(long, value_name = "NAME")]
        rights_holder: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an alert target (its delivery history goes with it).
    Rm {
        /// Its id, from `alert list`.
        id: Id,
    },
    /// Gather what each target has not been told and send everything due now (runs by itself
    /// after `match` and `dedup`, and in production after every crawl and dedup job).
    Send,
}

/// The language of an e-mail digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// Chinese.
    Zh,
    /// English.
    En,
}

/// Runs `copytrace alert …`.
pub async fn run(globals: &Globals, command: AlertCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    match command {
        AlertCommand::Add {
            name,
            webhook,
            email,
            secret,
            daily,
            lang,
        } => {
            let destination = match (webhook, email) {
                (Some(url), _) => Destination::Webhook(url),
                (None, Some(address)) => Destination::Email(address),
                (None, None) => unreachable!("clap requires one"),
            };
            let webhook = matches!(destination, Destination::Webhook(_));
            let given = secret.is_some();
            let cadence = if daily {
                AlertCadence::Daily
            } else {
                AlertCadence::AfterRun
            };
            let lang = match lang {
                LangArg::Zh => "zh",
                LangArg::En => "en",
            };
            let (id, secret) =
                alerts::add_target(store.as_ref(), &name, destination, secret, cadence, lang)
                    .await?;
            println!("alert target {id} of {name}");
            if webhook && !given {
                println!("signing secret (shown once; give it to the receiver): {secret}");
            }
        }
        AlertCommand::List {
            rights_holder,
            json,
        } => {
            let targets = alerts::targets(store.as_ref(), rights_holder.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&targets)?);
            } else {
                for t in &targets {
                    println!(
                        "{:>4}  {:<16} {:<8} {:<9} {:<2}  {}  delivered {}, waiting {}, failed {}{}",
                        t.target.id,
                        t.rights_holder,
                        t.target.kind.as_str(),
                        t.target.cadence.as_str(),
                        t.target.lang,
                        t.target.address,
                        t.delivered,
                        t.waiting,
                        t.failed,
                        t.last_error
                            .as_deref()
                            .map(|e| format!(" (last error: {e})"))
                            .unwrap_or_default()
                    );
                }
                println!("{} target(s)", targets.len());
            }
        }
        AlertCommand::Rm { id } => {
            alerts::remove_target(store.as_ref(), id, None).await?;
            println!("removed alert target {id}");
        }
        AlertCommand::Send => {
            let report = Alerter::new(store.clone(), globals.alert_settings())?
                .run(Utc::now())
                .await?;
            println!("{}", alerts::summary(&report));
            if !report.failures.is_empty() {
                return Ok(ExitCode::from(3));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// After a run that may have found or lost copies: sends the alerts it leads to. A failure to
/// send is reported and retried later, never a failure of the run.
pub async fn after_run(globals: &Globals, store: std::sync::Arc<dyn Store>) {
    let sent = match Alerter::new(store, globals.alert_settings()) {
        Ok(alerter) => alerter.run(Utc::now()).await,
        Err(error) => Err(error),
    };
    match sent {
        Ok(report)
            if report.gathered == 0 && report.delivered == 0 && report.failures.is_empty() => {}
        Ok(report) => eprintln!("alerts: {}", alerts::summary(&report)),
        Err(error) => eprintln!(
            "warning: alerts not sent: {}",
            copytrace_service::error::one_line(&error)
        ),
    }
}
