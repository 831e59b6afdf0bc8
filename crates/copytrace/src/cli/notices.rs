//! `copytrace notice`: takedown notices per site.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use clap::{Subcommand, ValueEnum};
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::evidence::{self, ScreenshotSettings};
use copytrace_service::notices;
use copytrace_service::sending::{self, FollowUpSettings, SendOutcome, SendRequest};
use copytrace_store::{MailPurpose, MailState, Notice, NoticeStatus, NoticeStatusChange};

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
    /// Write a notice for a search engine or a host: its URLs, aliases included, as Google's,
    /// Bing's or Baidu's removal form takes them (to delist them from search results), or an
    /// abuse report to the site's host or CDN (the URLs, the host's IP addresses when known,
    /// each URL's evidence SHA-256; refused naming a missing element). See docs/operations.md
    /// for the forms and what is known of each.
    Export {
        /// The notice id.
        id: i64,
        /// google, bing or baidu (a URL list), or abuse (a report to the host).
        #[arg(long, value_enum)]
        format: ExportFormatArg,
        /// The abuse report's language, zh or en (default: the notice's).
        #[arg(long, value_parser = ["zh", "en"])]
        lang: Option<String>,
        /// An IP address of the site's host, for the abuse report (repeatable).
        #[arg(long = "ip", value_name = "ADDRESS")]
        ips: Vec<std::net::IpAddr>,
        /// Also look the site's IP addresses up in the DNS now, for the abuse report.
        #[arg(long)]
        resolve: bool,
        /// Write it to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
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
    /// Mail a draft notice to its site's contacts (`site contacts HOST`; the operator's
    /// first) through the alert mailer's SMTP server (--smtp-url, --mail-from): the notice as
    /// text and HTML with its evidence hashes, the text attached. Never twice: a notice mailed
    /// before sends nothing and says when; one whose mail broke off stays `sending` (see
    /// `notice list`) until settled with `notice status ID sent|draft` or sent with --force.
    /// With --tsa-url, the text is first timestamped (RFC 3161) and the token kept with the
    /// mail; if the authority fails, nothing is sent.
    Send {
        /// The notice id (or --all-drafts).
        #[arg(required_unless_present = "all_drafts", conflicts_with = "all_drafts")]
        id: Option<i64>,
        /// Mail every draft notice (of --rights-holder); one that cannot be sent is reported
        /// and the others go on (exit 3 when some failed).
        #[arg(long)]
        all_drafts: bool,
        /// With --all-drafts: only this rights holder's drafts.
        #[arg(long, value_name = "NAME", requires = "all_drafts")]
        rights_holder: Option<String>,
        /// Send a notice stuck in `sending` again, accepting that the site may get it twice.
        #[arg(long, conflicts_with = "all_drafts")]
        force: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Move a notice to another status: acknowledged (the site answered), ignored,
    /// escalated (by other means), sent (mailed outside Copytrace, or a stuck one that
    /// arrived) or draft (a stuck one that did not). Removed and partially_removed are set
    /// by removal checks only. Recorded in the notice's history with your login name.
    Status {
        /// The notice id.
        id: i64,
        /// The new status.
        #[arg(value_enum)]
        status: StatusArg,
        /// Why (kept in the history).
        #[arg(long)]
        note: Option<String>,
    },
    /// A notice's history: each status change, reminder and escalation with its time, actor
    /// and note, and the mails sent about it (with the time and authority of each mail's
    /// trusted timestamp, when --tsa-url was set as it was sent).
    History {
        /// The notice id.
        id: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Follow up sent notices whose copies are not all removed: one reminder mail after
    /// --reminder-days, one escalation to the site's abuse contact after --escalate-days (on
    /// record only, with a note, when it has none) and one to its CDN's (contacts of kind
    /// `cdn`, when it has any), then after --delist-days the search-engine delisting lists
    /// (Google, Bing, Baidu) mailed to the rights holder's profile e-mail (the notice becomes
    /// `delisting`). Each happens once however often this runs; the scheduled alerts job runs
    /// it too.
    FollowUp {
        /// Days after sending before the reminder (default: --notice-reminder-days, 7).
        #[arg(long, value_name = "N")]
        reminder_days: Option<u32>,
        /// Days after sending before the escalation (default: --notice-escalate-days, 14).
        #[arg(long, value_name = "M")]
        escalate_days: Option<u32>,
        /// Days after sending before the delisting step, once escalated (default:
        /// --notice-delist-days, 21).
        #[arg(long, value_name = "D")]
        delist_days: Option<u32>,
        /// Act as if it were this time (RFC 3339), e.g. to catch up or to test.
        #[arg(long, value_name = "TIME")]
        now: Option<DateTime<Utc>>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A status a person sets, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    /// Back to a draft (a stuck mail that did not arrive).
    Draft,
    /// Sent outside Copytrace, or a stuck mail that arrived.
    Sent,
    /// The site answered.
    Acknowledged,
    /// The site did not react.
    Ignored,
    /// Escalated by other means.
    Escalated,
}

impl From<StatusArg> for NoticeStatus {
    fn from(status: StatusArg) -> Self {
        match status {
            StatusArg::Draft => NoticeStatus::Draft,
            StatusArg::Sent => NoticeStatus::Sent,
            StatusArg::Acknowledged => NoticeStatus::Acknowledged,
            StatusArg::Ignored => NoticeStatus::Ignored,
            StatusArg::Escalated => NoticeStatus::Escalated,
        }
    }
}

/// What `notice export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    /// Google's copyright removal request: one URL per line.
    Google,
    /// Bing's content removal request: one URL per line.
    Bing,
    /// Baidu's complaint: one URL per line, in groups of at most 10.
    Baidu,
    /// An abuse report to the site's host or CDN.
    Abuse,
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
                timestamps: globals.tsa_url.clone(),
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
                "notice {} (draft, under {}) to {} lists {} cop(ies); `copytrace notice send {}` \
                 mails it to the site's contacts",
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
            // A mail whose fate is unknown must not go unnoticed.
            for notice in list.iter().filter(|n| n.status == NoticeStatus::Sending) {
                let stuck =
                    store.notice_mails(notice.id).await?.into_iter().find(|m| {
                        m.purpose == MailPurpose::Notice && m.state == MailState::Sending
                    });
                if let Some(mail) = stuck {
                    eprintln!("warning: {}", sending::stuck_message(&mail));
                }
            }
        }
        NoticeCommand::Show { id } => {
            let notice = store.get_notice(id, None).await?;
            eprintln!("{}", line(&notice));
            print!("{}", notice.body);
        }
        NoticeCommand::Export {
            id,
            format,
            lang,
            ips,
            resolve,
            out,
        } => {
            use copytrace_analytics::delisting::Engine;
            let kind = match format {
                ExportFormatArg::Google => notices::ExportKind::Delisting(Engine::Google),
                ExportFormatArg::Bing => notices::ExportKind::Delisting(Engine::Bing),
                ExportFormatArg::Baidu => notices::ExportKind::Delisting(Engine::Baidu),
                ExportFormatArg::Abuse => notices::ExportKind::Abuse,
            };
            let options = notices::AbuseOptions { lang, ips, resolve };
            let text = notices::export(store, id, None, kind, &options, Utc::now()).await?;
            match out {
                Some(path) => {
                    std::fs::write(&path, &text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("wrote {}", path.display());
                }
                None => print!("{text}"),
            }
        }
        NoticeCommand::Sent { id } => {
            let notice = notices::move_notice(store, &change(id, NoticeStatus::Sent, None)).await?;
            println!("{}", line(&notice));
        }
        NoticeCommand::Ignored { id } => {
            let notice =
                notices::move_notice(store, &change(id, NoticeStatus::Ignored, None)).await?;
            println!("{}", line(&notice));
        }
        NoticeCommand::Status { id, status, note } => {
            let notice = notices::move_notice(store, &change(id, status.into(), note)).await?;
            println!("{}", line(&notice));
        }
        NoticeCommand::Send {
            id,
            all_drafts,
            rights_holder,
            force,
            json,
        } => {
            let mail = globals.alert_settings();
            let actor = actor();
            let request = SendRequest {
                mail: &mail,
                actor: &actor,
                force,
                now: Utc::now(),
            };
            if all_drafts {
                let report =
                    sending::send_drafts(store, rights_holder.as_deref(), &request).await?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    for outcome in &report.sent {
                        println!("{}", sent_line(outcome));
                    }
                    for (id, error) in &report.failed {
                        eprintln!("notice {id} not sent: {error}");
                    }
                    println!(
                        "{} notice(s) sent, {} failed",
                        report.sent.len(),
                        report.failed.len()
                    );
                }
                if !report.failed.is_empty() {
                    return Ok(ExitCode::from(super::EXIT_PARTIAL));
                }
            } else {
                let id = id.expect("clap requires an id without --all-drafts");
                let outcome = sending::send(store, id, &request).await?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&outcome)?);
                } else {
                    println!("{}", sent_line(&outcome));
                }
            }
        }
        NoticeCommand::History { id, json } => {
            let (steps, mails) = notices::history(store, id).await?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "notice_id": id,
                        "history": steps,
                        "mails": mails,
                    }))?
                );
            } else {
                for step in &steps {
                    println!(
                        "{}  {:<18} → {:<18} {:<20} {}",
                        step.at.to_rfc3339_opts(SecondsFormat::Secs, true),
                        step.from.as_str(),
                        step.to.as_str(),
                        step.actor,
                        step.note.as_deref().unwrap_or("")
                    );
                }
                for mail in &mails {
                    println!(
                        "mail {:<10} {:<9} {}  to {}  {}{}",
                        mail.purpose.as_str(),
                        mail.state.as_str(),
                        mail.started_at.to_rfc3339_opts(SecondsFormat::Secs, true),
                        if mail.recipients.is_empty() {
                            "nobody".to_owned()
                        } else {
                            mail.recipients.join(", ")
                        },
                        mail.message_id,
                        mail.error
                            .as_deref()
                            .map(|e| format!("  ({e})"))
                            .unwrap_or_default()
                    );
                    if let Some(stamp) = &mail.timestamp {
                        println!(
                            "     timestamped {} by {} (RFC 3161, text SHA-256 {})",
                            stamp.gen_time.to_rfc3339_opts(SecondsFormat::Secs, true),
                            stamp.tsa_url,
                            mail.body_sha256.as_deref().unwrap_or("?")
                        );
                    }
                }
            }
        }
        NoticeCommand::FollowUp {
            reminder_days,
            escalate_days,
            delist_days,
            now,
            json,
        } => {
            let mail = globals.alert_settings();
            let reminder_days = reminder_days.unwrap_or(mail.follow_up.reminder_days);
            let escalate_days = escalate_days.unwrap_or(mail.follow_up.escalate_days);
            let delist_days = delist_days.unwrap_or(mail.follow_up.delist_days);
            if escalate_days < reminder_days {
                anyhow::bail!(
                    "--escalate-days {escalate_days} comes before --reminder-days \
                     {reminder_days}: the reminder goes first"
                );
            }
            if delist_days < escalate_days {
                anyhow::bail!(
                    "--delist-days {delist_days} comes before --escalate-days \
                     {escalate_days}: the escalation goes first"
                );
            }
            let report = sending::follow_up(
                store,
                &mail,
                &FollowUpSettings {
                    reminder_days,
                    escalate_days,
                    delist_days,
                },
                &actor(),
                now.unwrap_or_else(Utc::now),
            )
            .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                let ids = |ids: &[i64]| {
                    ids.iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                println!(
                    "{} reminded ({}), {} escalated ({}), {} escalated on record only, no \
                     abuse contact ({}), {} escalated to a CDN ({}), {} delisting ({})",
                    report.reminded.len(),
                    ids(&report.reminded),
                    report.escalated.len(),
                    ids(&report.escalated),
                    report.escalated_without_contact.len(),
                    ids(&report.escalated_without_contact),
                    report.cdn_escalated.len(),
                    ids(&report.cdn_escalated),
                    report.delisted.len(),
                    ids(&report.delisted)
                );
                for failure in &report.failures {
                    eprintln!("{failure}");
                }
            }
            if !report.failures.is_empty() {
                return Ok(ExitCode::from(super::EXIT_PARTIAL));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Who acts at the command line: `cli:` and the login name.
fn actor() -> String {
    format!("cli:{}", super::review::login())
}

/// A move of notice `id` by the person at the command line, now.
fn change(id: i64, status: NoticeStatus, note: Option<String>) -> NoticeStatusChange {
    NoticeStatusChange {
        id,
        status,
        rights_holder_id: None,
        actor: actor(),
        note,
        at: Utc::now(),
    }
}

/// What `notice send` did, on one line.
fn sent_line(outcome: &SendOutcome) -> String {
    match outcome {
        SendOutcome::Sent {
            notice_id,
            recipients,
            message_id,
        } => format!(
            "notice {notice_id} sent to {} (Message-ID {message_id})",
            recipients.join(", ")
        ),
        SendOutcome::AlreadySent { notice_id, mail } => format!(
            "notice {notice_id} was sent already, on {} to {} (Message-ID {}): nothing sent",
            mail.finished_at
                .unwrap_or(mail.started_at)
                .to_rfc3339_opts(SecondsFormat::Secs, true),
            mail.recipients.join(", "),
            mail.message_id
        ),
    }
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
