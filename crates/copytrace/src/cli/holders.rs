//! `copytrace rights-holder`: the owners of works.

use std::process::ExitCode;

use anyhow::{Context, Result};
use chrono::Utc;
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
    /// Set a rights holder's profile, what takedown notices say about it: each flag given
    /// replaces that field (an empty value clears it), the others stay. A cn notice needs the
    /// legal name, address and an email or phone; a us notice the signature, legal name and a
    /// contact.
    Set {
        /// The rights holder's name (as `rights-holder list` shows it).
        name: String,
        /// Registered name of the company or person.
        #[arg(long, value_name = "TEXT")]
        legal_name: Option<String>,
        /// Postal address.
        #[arg(long, value_name = "TEXT")]
        address: Option<String>,
        /// Contact e-mail address.
        #[arg(long, value_name = "ADDRESS")]
        email: Option<String>,
        /// Contact telephone number, e.g. "+86 21 1234 5678".
        #[arg(long, value_name = "NUMBER")]
        phone: Option<String>,
        /// The person authorised to act for the holder.
        #[arg(long, value_name = "TEXT")]
        agent_name: Option<String>,
        /// Their role, e.g. "Legal counsel".
        #[arg(long, value_name = "TEXT")]
        agent_role: Option<String>,
        /// How to reach them.
        #[arg(long, value_name = "TEXT")]
        agent_contact: Option<String>,
        /// The signature line, as text (an electronic signature), e.g. "/s/ Jane Doe".
        #[arg(long, value_name = "TEXT")]
        signature: Option<String>,
        /// Default notice language: zh (notices under China's 条例第十四条) or en (US
        /// §512(c)(3)). A new profile starts with zh.
        #[arg(long, value_name = "zh|en")]
        language: Option<String>,
        /// The signature as an image (PNG or JPEG, at most 200 KB), shown under the signature
        /// line of the notices' HTML mails and in the web.
        #[arg(long, value_name = "FILE", conflicts_with = "no_signature_image")]
        signature_image: Option<std::path::PathBuf>,
        /// Remove the signature image.
        #[arg(long)]
        no_signature_image: bool,
        /// Print the stored profile as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a rights holder's profile.
    Show {
        /// The rights holder's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
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
        HolderCommand::Set {
            name,
            legal_name,
            address,
            email,
            phone,
            agent_name,
            agent_role,
            agent_contact,
            signature,
            language,
            signature_image,
            no_signature_image,
            json,
        } => {
            // Read and checked before anything is written: a bad file changes nothing.
            let image = match &signature_image {
                Some(path) => {
                    let bytes = std::fs::read(path)
                        .with_context(|| format!("cannot read {}", path.display()))?;
                    Some(holders::parse_signature_image(bytes)?.bytes)
                }
                None => None,
            };
            let update = holders::ProfileUpdate {
                legal_name,
                address,
                email,
                phone,
                agent_name,
                agent_role,
                agent_contact,
                signature,
                language,
            };
            holders::set_profile(store.as_ref(), &name, &update, Utc::now()).await?;
            if image.is_some() || no_signature_image {
                holders::set_signature_image(store.as_ref(), &name, image, Utc::now()).await?;
            }
            let shown = holders::profile(store.as_ref(), &name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                print_profile(&shown);
            }
        }
        HolderCommand::Show { name, json } => {
            let shown = holders::profile(store.as_ref(), &name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                print_profile(&shown);
            }
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

/// A holder's profile, one field a line; fields not given say so, since a notice needs them.
fn print_profile(shown: &holders::HolderProfile) {
    println!(
        "rights holder {:?} (id {})",
        shown.holder.name, shown.holder.id
    );
    let Some(profile) = &shown.profile else {
        println!(
            "no profile yet: set one with `copytrace rights-holder set {:?} --legal-name …`",
            shown.holder.name
        );
        return;
    };
    let fields = [
        ("legal name", &profile.legal_name),
        ("address", &profile.address),
        ("email", &profile.email),
        ("phone", &profile.phone),
        ("agent name", &profile.agent_name),
        ("agent role", &profile.agent_role),
        ("agent contact", &profile.agent_contact),
        ("signature", &profile.signature),
    ];
    for (label, value) in fields {
        println!(
            "{label:<14} {}",
            value
                .as_deref()
                .unwrap_or("(not given)")
                .replace('\n', "\n               ")
        );
    }
    match &shown.signature_image {
        Some(image) => println!(
            "{:<14} {}, {} bytes",
            "signature img", image.content_type, image.bytes
        ),
        None => println!("{:<14} (none)", "signature img"),
    }
    println!("{:<14} {}", "language", profile.language);
    println!(
        "{:<14} {}",
        "updated",
        profile.updated_at.format("%Y-%m-%d %H:%M UTC")
    );
}

/// What a licence covers, in words.
fn scope(work: Option<i64>) -> String {
    match work {
        Some(id) => format!("work {id}"),
        None => "every work".to_owned(),
    }
}
