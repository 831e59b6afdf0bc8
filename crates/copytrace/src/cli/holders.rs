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
    }
    Ok(ExitCode::SUCCESS)
}
