//! Sending takedown notices by e-mail and following them up (issue 40).
//!
//! **Where a notice goes.** To the contacts of its site ([`crate::contacts`]): the operator's
//! first, then those found on the site's pages; abuse desks only when the site has no other
//! address (they are where escalations go). A site with none is refused, naming the host and
//! how to add one. Mail goes through the alert mailer's SMTP server and sender
//! ([`AlertSettings`]: `--smtp-url`, `--mail-from`, the same configuration).
//!
//! **What it says.** The notice's text as written (every element of its law, the URLs with
//! their aliases, first-seen times, SHA-256 of the evidence), as plain text and as HTML
//! (escaped, never interpreted), a list of each copy's evidence-manifest SHA-256, and the
//! notice text attached as `notice-ID.txt`.
//!
//! **At most once: a duplicate notice is worse than a late one, a lost one must be visible.**
//! Before the SMTP exchange, the store records the mail as `sending` with its `Message-ID`
//! and moves the notice to `sending` ([`Store::begin_notice_mail`]); afterwards it records how
//! the exchange ended ([`Store::finish_notice_mail`]). So:
//!
//! * a retry, a second process or a re-run of a sent notice finds its mail and sends nothing,
//!   saying when it was sent;
//! * a refusal that proves nothing was delivered — the server could not be reached, or it
//!   answered 4xx/5xx — puts the notice back to `draft`, sendable again;
//! * anything else (a connection cut mid-exchange, a timeout, a crash of this process between
//!   the server's "250 OK" and the store's update) leaves the notice in `sending`. It is
//!   **never sent again by itself**: `notice list` reports it as stuck, and a person who has
//!   checked (the SMTP server's log, the site) either settles it (`notice status ID sent` or
//!   `draft`) or sends it again with `notice send ID --force`, accepting a possible duplicate.
//!
//! This is at-most-once delivery with a visible gap, chosen over at-least-once because a
//! rights holder who mails a pirate site twice looks careless and can be flagged as a spammer,
//! while a notice a day late costs little.
//!
//! **Proof of time.** With a time-stamping authority configured ([`AlertSettings::timestamps`]),
//! the text of every mail is timestamped (RFC 3161, [`crate::timestamp`]) just before it is
//! claimed and sent; the SHA-256 of the text and the token are kept with the mail. An authority
//! that fails stops the mail before anything is recorded: a notice does not go out without the
//! proof of time that was asked for, and stays sendable.
//!
//! **Follow-up** ([`follow_up`], in [`crate::followup`]): a sent notice whose copies are not all
//! removed gets one reminder, one escalation to its host's abuse contact and, alongside, one to
//! its CDN's, then the search-engine delisting step, each at most once through the same
//! at-most-once records, each a step of the notice's history with its time and actor.

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_store::{
    ContactKind, Id, MailClaim, MailEnd, MailOutcome, MailPurpose, MailState, NewNoticeMail,
    Notice, NoticeMail, NoticeStatus, SignatureImage, SiteContact, Store, sha256_hex,
};
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::alerts::AlertSettings;
use crate::error::{Context, Result, ServiceError};
use crate::{holders, timestamp};

pub use crate::followup::{FollowUpReport, FollowUpSettings, follow_up};

/// Default days after sending before the one reminder.
pub const DEFAULT_REMINDER_DAYS: u32 = 7;
/// Default days after sending before the one escalation.
pub const DEFAULT_ESCALATE_DAYS: u32 = 14;

/// What [`send`] did with one notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SendOutcome {
    /// Mailed now.
    Sent {
        /// The notice.
        notice_id: Id,
        /// To whom, in order.
        recipients: Vec<String>,
        /// Its `Message-ID`.
        message_id: String,
    },
    /// Mailed before: nothing sent now.
    AlreadySent {
        /// The notice.
        notice_id: Id,
        /// The earlier mail.
        mail: NoticeMail,
    },
}

/// Who sends, how, and when.
#[derive(Debug, Clone)]
pub struct SendRequest<'a> {
    /// SMTP server and sender (the alert mailer's).
    pub mail: &'a AlertSettings,
    /// Who sends (history): `cli:LOGIN`, `scheduler`, …
    pub actor: &'a str,
    /// Give up a notice stuck in `sending` and send it again.
    pub force: bool,
    /// Now.
    pub now: DateTime<Utc>,
}

/// How an SMTP exchange failed.
pub(crate) enum Failure {
    /// Nothing was delivered (no connection, or the server answered 4xx/5xx).
    Refused(String),
    /// The exchange broke off: it may or may not have been delivered.
    Unknown(String),
}

/// The SMTP side: the alert mailer's server and sender (notices and weekly reports).
pub(crate) struct Mailer<'a> {
    settings: &'a AlertSettings,
    pub(crate) from: Mailbox,
}

impl<'a> Mailer<'a> {
    pub(crate) fn new(settings: &'a AlertSettings) -> Result<Self> {
        if settings.smtp_url.is_none() {
            return Err(ServiceError::invalid(
                "no SMTP server is configured: notices and reports are mailed through the alert mailer's \
                 (--smtp-url, COPYTRACE_SMTP_URL, or smtp_url in copytrace.toml)",
            ));
        }
        let from = settings.mail_from.parse().map_err(|e| {
            ServiceError::invalid(format!("bad sender {:?}: {e}", settings.mail_from))
        })?;
        Ok(Self { settings, from })
    }

    pub(crate) async fn send(&self, message: Message) -> std::result::Result<(), Failure> {
        let url = self.settings.smtp_url.as_deref().unwrap_or_default();
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| Failure::Refused(format!("bad SMTP URL: {e}")))?
            .timeout(Some(self.settings.timeout))
            .build();
        // Reaching the server first tells "nothing was sent" from "fate unknown" when it is
        // down, the common failure.
        match transport.test_connection().await {
            Ok(true) => {}
            Ok(false) => return Err(Failure::Refused("the SMTP server did not answer".into())),
            Err(e) => {
                return Err(Failure::Refused(format!(
                    "cannot reach the SMTP server: {e}"
                )));
            }
        }
        match transport.send(message).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_permanent() || e.is_transient() => {
                Err(Failure::Refused(format!("the SMTP server refused it: {e}")))
            }
            Err(e) => Err(Failure::Unknown(format!("SMTP: {e}"))),
        }
    }
}

pub(crate) fn mailbox(address: &str) -> Result<Mailbox> {
    address
        .parse()
        .map_err(|e| ServiceError::invalid(format!("bad recipient {address:?}: {e}")))
}

/// HTML-escapes `text`.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A `Message-ID` for a mail about notice `id`.
pub(crate) fn message_id(id: Id, purpose: MailPurpose) -> String {
    format!(
        "<notice-{id}-{}-{}@copytrace>",
        purpose.as_str(),
        uuid::Uuid::new_v4()
    )
}

/// The proof section: each listed copy's URL with the SHA-256 of its newest evidence
/// package's manifest.
pub(crate) async fn manifest_lines(store: &dyn Store, notice: &Notice) -> Result<String> {
    let zh = notice.lang == "zh";
    let mut lines = String::from(if zh {
        "证据包清单 SHA-256（每个侵权页面）：\n"
    } else {
        "Evidence package manifests, SHA-256 (per infringing URL):\n"
    });
    for &match_id in &notice.match_ids {
        let (page_id, _) = store.match_subject(match_id).await?;
        let url = store.get_page(page_id).await?.url;
        let hash = store
            .evidence_packages(match_id)
            .await?
            .pop()
            .map(|p| p.manifest_sha256)
            .unwrap_or_else(|| if zh { "（无）" } else { "(none)" }.to_owned());
        lines.push_str(&format!("- {url}\n  {hash}\n"));
    }
    Ok(lines)
}

/// The Content-ID of the signature image inline in a notice's HTML.
const SIGNATURE_CID: &str = "signature@copytrace";

/// What a mail about a notice says and who signs it.
pub(crate) struct Letter<'a> {
    pub(crate) subject: &'a str,
    pub(crate) message_id: &'a str,
    pub(crate) in_reply_to: Option<&'a str>,
    pub(crate) notice_id: Id,
    pub(crate) text: &'a str,
    /// The rights holder's signature image, shown under the HTML text.
    pub(crate) signature: Option<&'a SignatureImage>,
}

/// A mail of `letter.text` (as plain text, as escaped HTML with the holder's signature image
/// inline, and attached as `notice-ID.txt`).
pub(crate) fn compose(from: &Mailbox, to: &[String], letter: &Letter<'_>) -> Result<Message> {
    let mut builder = Message::builder()
        .from(from.clone())
        .subject(letter.subject)
        .message_id(Some(letter.message_id.to_owned()));
    for address in to {
        builder = builder.to(mailbox(address)?);
    }
    if let Some(original) = letter.in_reply_to {
        builder = builder
            .in_reply_to(original.to_owned())
            .references(original.to_owned());
    }
    let text = letter.text;
    let image = letter.signature.map_or_else(String::new, |_| {
        format!(
            "<p><img src=\"cid:{SIGNATURE_CID}\" alt=\"signature\" \
             style=\"max-height: 120px; max-width: 360px\"></p>"
        )
    });
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\
         <pre style=\"white-space: pre-wrap; font-family: sans-serif\">{}</pre>{image}</body></html>",
        escape_html(text)
    );
    let attachment = Attachment::new(format!("notice-{}.txt", letter.notice_id)).body(
        text.to_owned(),
        ContentType::parse("text/plain; charset=utf-8").expect("a valid content type"),
    );
    let body = match letter.signature {
        None => MultiPart::alternative_plain_html(text.to_owned(), html),
        Some(signature) => {
            let content_type = ContentType::parse(&signature.content_type)
                .map_err(|e| ServiceError::invalid(format!("bad signature image type: {e}")))?;
            MultiPart::alternative()
                .singlepart(SinglePart::plain(text.to_owned()))
                .multipart(
                    MultiPart::related()
                        .singlepart(SinglePart::html(html))
                        .singlepart(
                            Attachment::new_inline(SIGNATURE_CID.to_owned())
                                .body(signature.bytes.clone(), content_type),
                        ),
                )
        }
    };
    builder
        .multipart(MultiPart::mixed().multipart(body).singlepart(attachment))
        .map_err(|e| ServiceError::invalid(format!("cannot build the mail: {e}")))
}

/// The addresses a notice to `site` goes to: the site's non-abuse contacts (operator's first),
/// or its abuse desks when it has no other. Also tries `www.` + site, where a site's pages
/// often are.
pub(crate) async fn notice_recipients(store: &dyn Store, site: &str) -> Result<Vec<String>> {
    let mut contacts: Vec<SiteContact> = store.site_contacts(site).await?;
    if contacts.is_empty() && !site.starts_with("www.") {
        contacts = store.site_contacts(&format!("www.{site}")).await?;
    }
    let desks: Vec<String> = contacts
        .iter()
        .filter(|c| c.kind != ContactKind::Abuse)
        .map(|c| c.email.clone())
        .collect();
    Ok(if desks.is_empty() {
        contacts.into_iter().map(|c| c.email).collect()
    } else {
        desks
    })
}

/// Mails notice `id` to its site's contacts, at most once (see the module documentation).
/// Refused, naming the host, when the site has no contact; `Unavailable` when the SMTP
/// exchange broke off and the notice stays `sending` (what to do is in the message).
pub async fn send(store: &dyn Store, id: Id, request: &SendRequest<'_>) -> Result<SendOutcome> {
    let notice = store.get_notice(id, None).await?;
    // A notice mailed before needs no contact (nor a mail server) to be reported as such.
    if let Some(mail) = store
        .notice_mails(id)
        .await?
        .into_iter()
        .find(|m| m.purpose == MailPurpose::Notice && m.state == MailState::Sent)
    {
        return Ok(SendOutcome::AlreadySent {
            notice_id: id,
            mail,
        });
    }
    let mailer = Mailer::new(request.mail)?;
    let recipients = notice_recipients(store, &notice.site).await?;
    if recipients.is_empty() {
        return Err(ServiceError::invalid(format!(
            "{} has no contact to send notice {id} to: add one with `copytrace site contact add \
             {} EMAIL` (contacts are also found when its contact or DMCA pages are crawled)",
            notice.site, notice.site
        )));
    }
    let holder = holders::get(store, notice.rights_holder_id).await?;
    let mid = message_id(id, MailPurpose::Notice);
    let text = format!(
        "{}\n\n{}",
        notice.body.trim_end(),
        manifest_lines(store, &notice).await?
    );
    let subject = if notice.lang == "zh" {
        format!(
            "侵权通知：{} 要求删除 {} 上的 {} 个侵权页面（通知编号 {id}）",
            holder.name,
            notice.site,
            notice.match_ids.len()
        )
    } else {
        format!(
            "Notice of copyright infringement (17 U.S.C. §512(c)(3)) from {}: {} URL(s) on {} \
             [notice {id}]",
            holder.name,
            notice.match_ids.len(),
            notice.site
        )
    };
    let signature = store.signature_image(notice.rights_holder_id).await?;
    let message = compose(
        &mailer.from,
        &recipients,
        &Letter {
            subject: &subject,
            message_id: &mid,
            in_reply_to: None,
            notice_id: id,
            text: &text,
            signature: signature.as_ref(),
        },
    )?;
    let claimed = claim(
        store,
        id,
        MailPurpose::Notice,
        mid.clone(),
        recipients.clone(),
        request.force,
        request,
        Some(&text),
    )
    .await?;
    let mail_id = match claimed {
        MailClaim::Claimed(mail_id) => mail_id,
        MailClaim::Exists(mail) if mail.state == MailState::Sending => {
            return Err(ServiceError::invalid(stuck_message(&mail)));
        }
        MailClaim::Exists(mail) => {
            return Ok(SendOutcome::AlreadySent {
                notice_id: id,
                mail,
            });
        }
    };
    let note = format!("mailed to {} (Message-ID {mid})", recipients.join(", "));
    finish(
        store,
        (id, mail_id),
        mailer.send(message).await,
        request,
        &note,
    )
    .await?;
    Ok(SendOutcome::Sent {
        notice_id: id,
        recipients,
        message_id: mid,
    })
}

/// Records a mail about notice `notice_id` as `sending` before its SMTP exchange
/// ([`Store::begin_notice_mail`]): `Claimed` when this call may send it.
///
/// With a time-stamping authority configured, the SHA-256 of `text` (the mail's text) is
/// timestamped first and kept with the mail; when the authority fails, nothing is claimed or
/// sent and the error says so (the notice stays as it was, to send again).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn claim(
    store: &dyn Store,
    notice_id: Id,
    purpose: MailPurpose,
    message_id: String,
    recipients: Vec<String>,
    force: bool,
    request: &SendRequest<'_>,
    text: Option<&str>,
) -> Result<MailClaim> {
    let (body_sha256, timestamp) = match (text, &request.mail.timestamps) {
        (Some(text), Some(tsa)) => {
            let digest: [u8; 32] = Sha256::digest(text.as_bytes()).into();
            let stamp = timestamp::request(tsa, &digest).await.with_context(|| {
                format!(
                    "the {} of notice {notice_id} was not sent: its text could not be                      timestamped",
                    purpose.as_str()
                )
            })?;
            (Some(sha256_hex(text.as_bytes())), Some(stamp.stored()))
        }
        _ => (None, None),
    };
    Ok(store
        .begin_notice_mail(&NewNoticeMail {
            notice_id,
            purpose,
            message_id,
            recipients,
            force,
            actor: request.actor.to_owned(),
            at: request.now,
            body_sha256,
            timestamp,
        })
        .await?)
}

/// What to say of a notice mail stuck in `sending`.
pub fn stuck_message(mail: &NoticeMail) -> String {
    format!(
        "notice {} is stuck in sending since {} (Message-ID {}, to {}): the SMTP exchange \
         broke off and it may or may not have arrived; check the mail server's log, then \
         `copytrace notice status {} sent` (it arrived) or `draft` (it did not), or send it \
         again with `copytrace notice send {} --force`",
        mail.notice_id,
        mail.started_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        mail.message_id,
        mail.recipients.join(", "),
        mail.notice_id,
        mail.notice_id
    )
}

/// Records how a claimed mail's exchange ended; an exchange of unknown fate is left
/// `sending` and reported as `Unavailable`.
pub(crate) async fn finish(
    store: &dyn Store,
    (notice_id, mail_id): (Id, Id),
    sent: std::result::Result<(), Failure>,
    request: &SendRequest<'_>,
    note: &str,
) -> Result<()> {
    let outcome = match sent {
        Ok(()) => MailOutcome::Sent,
        Err(Failure::Refused(error)) => MailOutcome::Refused(error),
        Err(Failure::Unknown(error)) => {
            let mail = store
                .notice_mails(notice_id)
                .await?
                .into_iter()
                .find(|m| m.id == mail_id)
                .ok_or_else(|| ServiceError::invalid(format!("mail {mail_id} vanished")))?;
            return Err(ServiceError::Unavailable(format!(
                "{error}; {}",
                stuck_message(&mail)
            )));
        }
    };
    let refused = match &outcome {
        MailOutcome::Refused(error) => Some(error.clone()),
        _ => None,
    };
    store
        .finish_notice_mail(&MailEnd {
            mail_id,
            outcome,
            actor: request.actor.to_owned(),
            note: Some(if refused.is_some() {
                format!("not delivered, {note}")
            } else {
                note.to_owned()
            }),
            at: request.now,
        })
        .await?;
    match refused {
        Some(error) => Err(ServiceError::Unavailable(format!(
            "nothing was delivered ({error}); the notice is a draft again, to send later"
        ))),
        None => Ok(()),
    }
}

/// What [`send_drafts`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BulkReport {
    /// Notices mailed (or found mailed before).
    pub sent: Vec<SendOutcome>,
    /// Notices not sent, with why (no contact, SMTP refused, …).
    pub failed: Vec<(Id, String)>,
}

/// Mails every draft notice (of one rights holder, by name, when given), each as [`send`]
/// does; one that cannot be sent is reported and the others go on.
pub async fn send_drafts(
    store: &dyn Store,
    holder: Option<&str>,
    request: &SendRequest<'_>,
) -> Result<BulkReport> {
    Mailer::new(request.mail)?;
    let holder_id = match holder {
        Some(name) => Some(holders::find(store, name).await?.id),
        None => None,
    };
    let mut drafts: Vec<Notice> = store
        .list_notices(holder_id)
        .await?
        .into_iter()
        .filter(|n| n.status == NoticeStatus::Draft)
        .collect();
    drafts.sort_by_key(|n| n.id);
    let mut report = BulkReport::default();
    for notice in drafts {
        match send(store, notice.id, request).await {
            Ok(outcome) => report.sent.push(outcome),
            Err(error) => report
                .failed
                .push((notice.id, crate::error::one_line(&error))),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            escape_html("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
    }
}
