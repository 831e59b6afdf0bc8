//! `copytrace notice`: takedown notices per site.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::Utc;
use clap::{Subcommand, ValueEnum};
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::evidence::{self, ScreenshotSettings};
use copytrace_service::notices;
use copytrace_store::{Notice, NoticeStatus};

use super::Globals;

/// `copytrace notice …`
#[derive(Debug, Subcommand)]
pub enum NoticeCommand {
    /// Write a takedown notice to one site listing a rights holder's confirmed copies still
    /// online there (pending matches need `review confirm` first), under China's 条例第十四条
    /// (cn, Chinese) or the US §512(c)(3) (us, English), filled from the holder's profile
    /// (`rights-holder set`); store it as a draft and print it (or write it to --out). Refused,
    /// naming each, when an element the law requires is missing.
    Create {
        /// The site's host (its subdomains included), e.g. pirate.example.
        #[arg(long, value_name = "HOST")]
        site: String,
        /// Whose works. Without it: the rights holder whose works the confirmed copies on the
        /// site are, when they are all one holder's (refused, naming the holders, when they are
        /// several holders').
        #[arg(long, value_name = "NAME")]
        rights_holder: Option<String>,
        /// The law, and so the template: cn (《信息网络传播权保护条例》第十四条, Chinese) or us
        /// (17 U.S.C. §512(c)(3), English). Default: the holder's notice language (zh → cn,
        /// en → us).
        #[arg(long, value_enum)]
        law: Option<LawArg>,
        /// Write a fresh evidence package of every listed copy into DIR/match-ID and cite
        /// its manifest SHA-256. Without it, each copy cites its newest package written by
        /// `copytrace evidence` (a cn notice is refused for a copy that has none).
        #[arg(long, value_name = "DIR")]
        evidence_dir: Option<PathBuf>,
        /// The Chromium executable for the packages' screenshots (default: on PATH).
        #[arg(long, env = "COPYTRACE_CHROMIUM", value_name = "PATH")]
        chromium: Option<PathBuf>,
        /// Write the packages without screenshots.
        #[arg(long)]
        no_screenshot: bool,
        /// Write the notice to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// List notices with their status and how many of their copies are removed.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a notice as it was written.
    Show {
        /// The notice id.
        id: i64,
    },
    /// Record that a notice was sent: its copies become `notice_sent`, and the daily removal
    /// check moves it to removal_verified or partially_removed as they disappear.
    Sent {
        /// The notice id.
        id: i64,
    },
    /// Record that the site ignored a notice.
    Ignored {
        /// The notice id.
        id: i64,
    },
}

/// The law a notice is written under, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LawArg {
    /// China: 《信息网络传播权保护条例》第十四条, in Chinese.
    Cn,
    /// United States: 17 U.S.C. §512(c)(3), in English.
    Us,
}

/// Runs `copytrace notice …`.
pub async fn run(globals: &Globals, command: NoticeCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let store = store.as_ref();
    match command {
        NoticeCommand::Create {
            site,
            rights_holder,
            law,
            evidence_dir,
            chromium,
            no_screenshot,
            out,
        } => {
            let evidence = evidence_dir.map(|dir| notices::EvidenceOutput {
                dir,
                screenshot: if no_screenshot {
                    ScreenshotSettings::Skip("not asked for (--no-screenshot)".into())
                } else {
                    evidence::screenshot_settings(chromium.as_deref(), Duration::from_secs(30))
                },
            });
            let notice = notices::create(
                store,
                &notices::NoticeRequest {
                    holder: rights_holder.as_deref(),
                    site: &site,
                    law: law.map(|law| match law {
                        LawArg::Cn => NoticeLaw::Cn,
                        LawArg::Us => NoticeLaw::Us,
                    }),
                    evidence: evidence.as_ref(),
                    at: Utc::now(),
                },
            )
            .await?;
            match out {
                None => print!("{}", notice.body),
                Some(path) => {
                    let mut file = std::fs::File::create(&path)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    file.write_all(notice.body.as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
            }
            eprintln!(
                "notice {} (draft, under {}) to {} lists {} cop(ies); `copytrace notice sent {}` \
                 once sent",
                notice.id,
                NoticeLaw::for_language(&notice.lang).map_or("?", NoticeLaw::citation),
                notice.site,
                notice.match_ids.len(),
                notice.id
            );
        }
        NoticeCommand::List { json } => {
            let list = store.list_notices(None).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for notice in &list {
                    println!("{}", line(notice));
                }
                println!("{} notice(s)", list.len());
            }
        }
        NoticeCommand::Show { id } => {
            let notice = store.get_notice(id, None).await?;
            eprintln!("{}", line(&notice));
            print!("{}", notice.body);
        }
        NoticeCommand::Sent { id } => {
            let notice = notices::set_status(store, id, NoticeStatus::Sent, None).await?;
            println!("{}", line(&notice));
        }
        NoticeCommand::Ignored { id } => {
            let notice = notices::set_status(store, id, NoticeStatus::Ignored, None).await?;
            println!("{}", line(&notice));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One notice on one line.
fn line(notice: &Notice) -> String {
    format!(
        "{:>6}  {:<18} {:<32} {}  {} cop(ies), {} removed  created {}{}",
        notice.id,
        notice.status.as_str(),
        notice.site,
        notice.lang,
        notice.match_ids.len(),
        notice.removed,
        notice.created_at.format("%Y-%m-%d %H:%M"),
        notice
            .sent_at
            .map(|t| format!(", sent {}", t.format("%Y-%m-%d %H:%M")))
            .unwrap_or_default()
    )
}
