//! `copytrace site`: what is known of a site besides its pages — whom to write to about it.

use std::process::ExitCode;

use anyhow::Result;
use chrono::{SecondsFormat, Utc};
use clap::{Subcommand, ValueEnum};
use copytrace_service::contacts::{self, SiteContacts};
use copytrace_store::{ContactKind, ContactSource};

use super::Globals;

/// `copytrace site …`
#[derive(Debug, Subcommand)]
pub enum SiteCommand {
    /// List a site's contacts (the operator's first, then those found on its pages, each
    /// with the page) and the ICP filing number its footer shows: where `notice send` writes.
    Contacts {
        /// The site's host, e.g. pirate.example (with :PORT when not the default).
        host: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add or remove a contact of a site.
    #[command(subcommand)]
    Contact(ContactCommand),
}

/// `copytrace site contact …`
#[derive(Debug, Subcommand)]
pub enum ContactCommand {
    /// Add an address of a site (or make a found one yours, with this kind). Notices go to
    /// the operator's addresses first; escalations to `abuse` ones.
    Add {
        /// The site's host.
        host: String,
        /// The e-mail address.
        email: String,
        /// Which desk it is.
        #[arg(long, value_enum, default_value_t = KindArg::Copyright)]
        kind: KindArg,
    },
    /// Remove an address of a site (a found one comes back if a crawl finds it again).
    Rm {
        /// The site's host.
        host: String,
        /// The e-mail address.
        email: String,
    },
}

/// Which desk an address is, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// Copyright complaints (DMCA agent, 版权投诉): where notices go first.
    Copyright,
    /// The host's or the site's abuse desk: where escalations go.
    Abuse,
    /// Any other address (webmaster, 联系我们).
    General,
    /// The abuse desk of the CDN in front of the site: escalations go there too.
    Cdn,
}

impl From<KindArg> for ContactKind {
    fn from(kind: KindArg) -> Self {
        match kind {
            KindArg::Copyright => ContactKind::Copyright,
            KindArg::Abuse => ContactKind::Abuse,
            KindArg::General => ContactKind::General,
            KindArg::Cdn => ContactKind::Cdn,
        }
    }
}

/// Runs `copytrace site …`.
pub async fn run(globals: &Globals, command: SiteCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let store = store.as_ref();
    match command {
        SiteCommand::Contacts { host, json } => {
            let known = contacts::list(store, &host).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&known)?);
            } else {
                print!("{}", listing(&known));
            }
        }
        SiteCommand::Contact(ContactCommand::Add { host, email, kind }) => {
            let known = contacts::add(store, &host, &email, kind.into(), Utc::now()).await?;
            print!("{}", listing(&known));
        }
        SiteCommand::Contact(ContactCommand::Rm { host, email }) => {
            contacts::remove(store, &host, &email).await?;
            println!(
                "removed {} from {}",
                email.trim().to_lowercase(),
                host.trim()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A site's contacts, one a line, then its ICP number.
fn listing(known: &SiteContacts) -> String {
    let mut out = String::new();
    for contact in &known.contacts {
        let source = match contact.source {
            ContactSource::Operator => "operator".to_owned(),
            ContactSource::Found => {
                format!("found on {}", contact.found_on.as_deref().unwrap_or("?"))
            }
        };
        out.push_str(&format!(
            "{:<40} {:<10} {}  (since {})\n",
            contact.email,
            contact.kind.as_str(),
            source,
            contact.created_at.format("%Y-%m-%d")
        ));
    }
    if known.contacts.is_empty() {
        out.push_str(&format!(
            "no contact known for {}: `copytrace site contact add {} EMAIL`\n",
            known.host, known.host
        ));
    }
    if let Some(icp) = &known.icp {
        out.push_str(&format!(
            "ICP filing: {} (on {}, {})\n",
            icp.icp_number,
            icp.found_on,
            icp.found_at.to_rfc3339_opts(SecondsFormat::Secs, true)
        ));
    }
    out
}
