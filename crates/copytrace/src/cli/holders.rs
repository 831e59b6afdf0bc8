//! `copytrace rights-holder`: the owners of works.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use copytrace_service::holders;

use super::Globals;

/// `copytrace rights-holder …`
#[derive(Debug, Subcommand)]
pub enum HolderCommand {
    /// Register a rights holder (nothing changes if it exists).
    Add {
        /// Its name, as it appears in reports and notices.
        name: String,
        /// Print the stored holder as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List rights holders with the number of works each owns.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a rights holder that owns no work and no user account (refused otherwise: its
    /// works and their evidence are never removed as a side effect).
    Rm {
        /// Its name.
        name: String,
    },
    /// Hosts licensed to publish a holder's works: matches on them (and their subdomains)
    /// are listed as `licensed` and left out of exports, reports and notices.
    #[command(subcommand)]
    License(LicenseCommand),
}

/// `copytrace rights-holder license …`
#[derive(Debug, Subcommand)]
pub enum LicenseCommand {
    /// License hosts (and their subdomains, on any port) to publish the holder's works.
    Add {
        /// The rights holder's name.
        name: String,
        /// Hosts, e.g. `partner.example` (a URL or `*.partner.example` names its host).
        #[arg(required = true)]
        hosts: Vec<String>,
        /// License only this work (its id, from `library list`) instead of all of them.
        #[arg(long, value_name = "ID")]
        work: Option<i64>,
    },
    /// Take licences back.
    Rm {
        /// The rights holder's name.
        name: String,
        /// Hosts to take back.
        #[arg(required = true)]
        hosts: Vec<String>,
        /// The work the licence was for (omit for holder-wide licences).
        #[arg(long, value_name = "ID")]
        work: Option<i64>,
    },
    /// List licensed hosts, of one holder or of all.
    List {
        /// The rights holder's name.
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `copytrace rights-holder …`.
pub async fn run(globals: &Globals, command: HolderCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    match command {
        HolderCommand::Add { name, json } => {
            let holder = holders::add(store.as_ref(), &name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&holder)?);
            } else {
                println!("rights holder {:?} (id {})", holder.name, holder.id);
            }
        }
        HolderCommand::List { json } => {
            let list = holders::list(store.as_ref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for summary in &list {
                    println!(
                        "{:>6}  {}  {} work(s)",
                        summary.holder.id, summary.holder.name, summary.works
                    );
                }
                println!("{} rights holder(s)", list.len());
            }
        }
        HolderCommand::Rm { name } => {
            holders::remove(store.as_ref(), &name).await?;
            println!("rights holder {:?} removed", name.trim());
        }
        HolderCommand::License(LicenseCommand::Add { name, hosts, work }) => {
            let (hosts, added) = holders::license(store.as_ref(), &name, work, &hosts).await?;
            let scope = scope(work);
            println!(
                "{} licensed to publish {scope} of {:?} ({added} new): {}",
                if hosts.len() == 1 { "host" } else { "hosts" },
                name.trim(),
                hosts.join(", ")
            );
        }
        HolderCommand::License(LicenseCommand::Rm { name, hosts, work }) => {
            let removed = holders::unlicense(store.as_ref(), &name, work, &hosts).await?;
            println!(
                "{removed} licence(s) for {} of {:?} taken back",
                scope(work),
                name.trim()
            );
        }
        HolderCommand::License(LicenseCommand::List { name, json }) => {
            let list = holders::licenses(store.as_ref(), name.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for licence in &list {
                    println!(
                        "{:>6}  {}  {}",
                        licence.rights_holder_id,
                        licence.host,
                        scope(licence.work_id)
                    );
                }
                println!("{} licensed host(s)", list.len());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a licence covers, in words.
fn scope(work: Option<i64>) -> String {
    match work {
        Some(id) => format!("work {id}"),
        None => "every work".to_owned(),
    }
}
