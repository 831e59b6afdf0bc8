//! Following up sent notices (issue 40): a ladder of steps, each taken at most once, each a
//! step of the notice's history with its time and actor.
//!
//! For a sent notice whose copies are not all removed, as of `now`:
//!
//! 1. **Reminder**, `reminder_days` after sending (default 7), to the notice's recipients.
//! 2. **Escalation to the host**, `escalate_days` after sending (default 14), to the site's
//!    abuse contacts (kind `abuse`); a site with none is escalated on record only, with a note
//!    saying so. The notice becomes `escalated`.
//! 3. **Escalation to the CDN**, alongside (once the host's step is done), to the site's
//!    contacts of kind `cdn`, when it has any: a CDN in front of a site hides the host that
//!    serves it, and answers abuse reports itself. A site without one has no such step (none
//!    is recorded), so a CDN contact added later is written to on the next run.
//! 4. **Search-engine delisting**, `delist_days` after sending (default 21), once the notice
//!    was escalated: the notice's URL lists for Google, Bing and Baidu
//!    ([`crate::notices::export`], the lists of `copytrace notice export --format
//!    google|bing|baidu`) are made and mailed to the rights holder's profile e-mail as
//!    attachments, with where to submit each (the engines' removal forms take no mail, and
//!    only the rights holder or its agent may file them). Without a profile e-mail the step is
//!    recorded as made, nobody written to, with a note naming the exports. The notice becomes
//!    `delisting`, the last state of follow-up.
//!
//! Every step is a notice mail of its own purpose ([`MailPurpose`]), claimed before its SMTP
//! exchange as [`crate::sending`] does for the notice itself, under a unique index per notice
//! and purpose: running follow-up every hour, retrying a failed job, or running it in several
//! processes takes each step once. A step whose mail the server refused is tried again by the
//! next run.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use copytrace_analytics::delisting::Engine;
use copytrace_store::{
    ContactKind, Id, MailClaim, MailEnd, MailOutcome, MailPurpose, MailState, Notice, NoticeMail,
    NoticeStatus, Store,
};
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, MultiPart};
use serde::Serialize;

use crate::alerts::AlertSettings;
use crate::error::{Result, ServiceError};
use crate::holders;
use crate::notices::{self, AbuseOptions, ExportKind};
use crate::sending::{
    DEFAULT_ESCALATE_DAYS, DEFAULT_REMINDER_DAYS, Letter, Mailer, SendRequest, claim, compose,
    escape_html, finish, mailbox, manifest_lines, message_id, notice_recipients,
};

/// Default days after sending before the delisting step.
pub const DEFAULT_DELIST_DAYS: u32 = 21;

/// When follow-up acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowUpSettings {
    /// Days after sending without full removal before the one reminder.
    pub reminder_days: u32,
    /// Days after sending without full removal before the one escalation (to the host, and
    /// to the CDN when the site has a CDN contact).
    pub escalate_days: u32,
    /// Days after sending without full removal before the search-engine delisting step (once
    /// the notice was escalated).
    pub delist_days: u32,
}

impl Default for FollowUpSettings {
    fn default() -> Self {
        Self {
            reminder_days: DEFAULT_REMINDER_DAYS,
            escalate_days: DEFAULT_ESCALATE_DAYS,
            delist_days: DEFAULT_DELIST_DAYS,
        }
    }
}

/// What one [`follow_up`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FollowUpReport {
    /// Notices reminded now.
    pub reminded: Vec<Id>,
    /// Notices escalated now, to an abuse contact.
    pub escalated: Vec<Id>,
    /// Notices escalated on record only: their host has no abuse contact.
    pub escalated_without_contact: Vec<Id>,
    /// Notices escalated now to their site's CDN.
    pub cdn_escalated: Vec<Id>,
    /// Notices whose delisting lists were made now (mailed to the rights holder, or recorded
    /// when it has no e-mail).
    pub delisted: Vec<Id>,
    /// What could not be done, and why (tried again next time).
    pub failures: Vec<String>,
}

/// Follows up every sent notice not fully removed, as of `now`: see the module documentation
/// for the steps.
pub async fn follow_up(
    store: &dyn Store,
    mail: &AlertSettings,
    settings: &FollowUpSettings,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<FollowUpReport> {
    let mut report = FollowUpReport::default();
    let waiting: Vec<Notice> = store
        .list_notices(None)
        .await?
        .into_iter()
        .filter(has_steps_left)
        .collect();
    if waiting.is_empty() {
        return Ok(report);
    }
    let request = SendRequest {
        mail,
        actor,
        force: false,
        now,
    };
    let days = |n: u32| Duration::days(n.into());
    for notice in waiting.iter().rev() {
        let age = now - notice.sent_at.unwrap_or(now);
        let failed = |report: &mut FollowUpReport, step: &str, error: ServiceError| {
            report.failures.push(format!(
                "notice {} {step}: {}",
                notice.id,
                crate::error::one_line(&error)
            ));
        };
        let mails = store.notice_mails(notice.id).await?;
        let first_steps = copytrace_analytics::stats::awaiting_follow_up(notice);
        if first_steps
            && age >= days(settings.reminder_days)
            && !done(&mails, MailPurpose::Reminder)
        {
            match remind(store, notice, &mails, &request).await {
                Ok(true) => report.reminded.push(notice.id),
                Ok(false) => {}
                Err(error) => failed(&mut report, "reminder", error),
            }
        }
        if first_steps
            && age >= days(settings.escalate_days)
            && !done(&mails, MailPurpose::Escalation)
        {
            match escalate(store, notice, &mails, &request, Desk::Host).await {
                Ok(Some(true)) => report.escalated.push(notice.id),
                Ok(Some(false)) => report.escalated_without_contact.push(notice.id),
                Ok(None) => {}
                Err(error) => failed(&mut report, "escalation", error),
            }
        }
        // The further steps follow the host's escalation (this run's included).
        let mails = store.notice_mails(notice.id).await?;
        let escalated = notice.status == NoticeStatus::Escalated
            || mails.iter().any(|m| {
                m.purpose == MailPurpose::Escalation
                    && matches!(m.state, MailState::Sent | MailState::Skipped)
            });
        if !escalated {
            continue;
        }
        if age >= days(settings.escalate_days) && !done(&mails, MailPurpose::CdnEscalation) {
            match escalate(store, notice, &mails, &request, Desk::Cdn).await {
                Ok(Some(_)) => report.cdn_escalated.push(notice.id),
                Ok(None) => {}
                Err(error) => failed(&mut report, "CDN escalation", error),
            }
        }
        if age >= days(settings.delist_days) && !done(&mails, MailPurpose::Delisting) {
            match delist(store, notice, &mails, &request).await {
                Ok(true) => report.delisted.push(notice.id),
                Ok(false) => {}
                Err(error) => failed(&mut report, "delisting", error),
            }
        }
    }
    Ok(report)
}

/// Whether `notice` may have a follow-up step left: sent, not every copy removed, and not
/// verified removed, not at the last step (`delisting`), not a draft.
fn has_steps_left(notice: &Notice) -> bool {
    copytrace_analytics::stats::awaiting_follow_up(notice)
        || (notice.status == NoticeStatus::Escalated
            && notice.sent_at.is_some()
            && notice.removed < notice.match_ids.len() as u64)
}

/// Whether the step of `purpose` was taken (or is under way, or stuck: never twice).
fn done(mails: &[NoticeMail], purpose: MailPurpose) -> bool {
    mails.iter().any(|m| {
        m.purpose == purpose
            && matches!(
                m.state,
                MailState::Sent | MailState::Skipped | MailState::Sending
            )
    })
}

/// The original notice mail, if it was mailed.
fn original(mails: &[NoticeMail]) -> Option<&NoticeMail> {
    mails
        .iter()
        .find(|m| m.purpose == MailPurpose::Notice && m.state == MailState::Sent)
}

/// The copies of `notice` still online, as words.
fn still_online(notice: &Notice) -> u64 {
    notice.match_ids.len() as u64 - notice.removed
}

/// Sends the reminder of a notice; `false` when another process did first.
async fn remind(
    store: &dyn Store,
    notice: &Notice,
    mails: &[NoticeMail],
    request: &SendRequest<'_>,
) -> Result<bool> {
    let mailer = Mailer::new(request.mail)?;
    let first = original(mails);
    let recipients = match first {
        Some(mail) => mail.recipients.clone(),
        None => notice_recipients(store, &notice.site).await?,
    };
    if recipients.is_empty() {
        return Err(ServiceError::invalid(format!(
            "{} has no contact to remind: add one with `copytrace site contact add {} EMAIL`",
            notice.site, notice.site
        )));
    }
    let holder = holders::get(store, notice.rights_holder_id).await?;
    let sent = notice
        .sent_at
        .unwrap_or(request.now)
        .to_rfc3339_opts(SecondsFormat::Secs, true);
    let total = notice.match_ids.len();
    let online = still_online(notice);
    let (subject, intro) = if notice.lang == "zh" {
        (
            format!("提醒：侵权通知（通知编号 {}）所列页面尚未删除", notice.id),
            format!(
                "提醒：{} 于 {sent} 向贵方发送的侵权通知（通知编号 {}）所列 {total} 个侵权\
                 页面中，截至 {} 仍有 {online} 个可以访问。请尽快删除或断开链接。原通知如下。",
                holder.name,
                notice.id,
                request.now.to_rfc3339_opts(SecondsFormat::Secs, true)
            ),
        )
    } else {
        (
            format!(
                "Reminder: infringing material still online [notice {}]",
                notice.id
            ),
            format!(
                "Reminder: of the {total} URL(s) in the notice of copyright infringement {} sent \
                 you on {sent} (notice {}), {online} are still online as of {}. Please remove \
                 or disable access to them expeditiously. The notice follows.",
                holder.name,
                notice.id,
                request.now.to_rfc3339_opts(SecondsFormat::Secs, true)
            ),
        )
    };
    let text = format!(
        "{intro}\n\n{}\n\n{}",
        notice.body.trim_end(),
        manifest_lines(store, notice).await?
    );
    let mid = message_id(notice.id, MailPurpose::Reminder);
    let signature = store.signature_image(notice.rights_holder_id).await?;
    let message = compose(
        &mailer.from,
        &recipients,
        &Letter {
            subject: &subject,
            message_id: &mid,
            in_reply_to: first.map(|m| m.message_id.as_str()),
            notice_id: notice.id,
            text: &text,
            signature: signature.as_ref(),
        },
    )?;
    let claimed = claim(
        store,
        notice.id,
        MailPurpose::Reminder,
        mid.clone(),
        recipients.clone(),
        false,
        request,
        Some(&text),
    )
    .await?;
    let MailClaim::Claimed(mail_id) = claimed else {
        return Ok(false);
    };
    let note = format!(
        "reminder mailed to {} (Message-ID {mid}): {online} of {total} cop(ies) still online",
        recipients.join(", ")
    );
    finish(
        store,
        (notice.id, mail_id),
        mailer.send(message).await,
        request,
        &note,
    )
    .await?;
    Ok(true)
}

/// Whom an escalation goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Desk {
    /// The host's abuse desk (contacts of kind `abuse`).
    Host,
    /// The CDN's (contacts of kind `cdn`).
    Cdn,
}

/// Escalates a notice to its host's or CDN's abuse desk: `Some(true)` mailed, `Some(false)`
/// recorded without a mail (the host has no abuse contact), `None` when another process did
/// first, or (CDN) when the site has no CDN contact and there is no such step.
async fn escalate(
    store: &dyn Store,
    notice: &Notice,
    mails: &[NoticeMail],
    request: &SendRequest<'_>,
    desk: Desk,
) -> Result<Option<bool>> {
    let (kind, purpose) = match desk {
        Desk::Host => (ContactKind::Abuse, MailPurpose::Escalation),
        Desk::Cdn => (ContactKind::Cdn, MailPurpose::CdnEscalation),
    };
    let to: Vec<String> = store
        .site_contacts(&notice.site)
        .await?
        .into_iter()
        .filter(|c| c.kind == kind)
        .map(|c| c.email)
        .collect();
    let mid = message_id(notice.id, purpose);
    if to.is_empty() && desk == Desk::Cdn {
        return Ok(None);
    }
    if to.is_empty() {
        let claimed = claim(
            store,
            notice.id,
            purpose,
            mid,
            Vec::new(),
            false,
            request,
            None,
        )
        .await?;
        let MailClaim::Claimed(mail_id) = claimed else {
            return Ok(None);
        };
        store
            .finish_notice_mail(&MailEnd {
                mail_id,
                outcome: MailOutcome::Skipped,
                actor: request.actor.to_owned(),
                note: Some(format!(
                    "escalated on record only: no abuse contact is known for {}; add one with \
                     `copytrace site contact add {} EMAIL --kind abuse` and report it there",
                    notice.site, notice.site
                )),
                at: request.now,
            })
            .await?;
        return Ok(Some(false));
    }
    let mailer = Mailer::new(request.mail)?;
    let holder = holders::get(store, notice.rights_holder_id).await?;
    let first = original(mails);
    let sent = notice
        .sent_at
        .unwrap_or(request.now)
        .to_rfc3339_opts(SecondsFormat::Secs, true);
    let total = notice.match_ids.len();
    let online = still_online(notice);
    let told = first.map_or_else(String::new, |m| m.recipients.join(", "));
    let now = request.now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let (subject, intro) = match (notice.lang == "zh", desk) {
        (true, Desk::Host) => (
            format!(
                "投诉升级：{} 上的侵权内容经通知后仍未删除（通知编号 {}）",
                notice.site, notice.id
            ),
            format!(
                "{} 于 {sent} 向 {} 的运营者（{told}）发送了侵权通知（通知编号 {}），并已发送\
                 提醒；截至 {now}，所列 {total} 个侵权页面中仍有 {online} 个可以访问。请贵方作为\
                 其网络服务提供者依法处理。原通知如下。",
                holder.name, notice.site, notice.id,
            ),
        ),
        (true, Desk::Cdn) => (
            format!(
                "CDN 投诉：经由贵方 CDN 提供的 {} 上的侵权内容经通知后仍未删除（通知编号 {}）",
                notice.site, notice.id
            ),
            format!(
                "{} 于 {sent} 向 {} 的运营者（{told}）发送了侵权通知（通知编号 {}），并已提醒、\
                 向其主机服务商投诉；截至 {now}，所列 {total} 个侵权页面中仍有 {online} 个可以\
                 访问。该网站经由贵方的 CDN 提供服务，请贵方依法处理，并告知其源站主机。原通知\
                 如下。",
                holder.name, notice.site, notice.id,
            ),
        ),
        (false, Desk::Host) => (
            format!(
                "Abuse report: copyright infringement on {} not removed after notice [notice {}]",
                notice.site, notice.id
            ),
            format!(
                "{} sent the operator of {} ({told}) a notice of copyright infringement on {sent} \
                 (notice {}) and a reminder; as of {now}, {online} of its {total} URL(s) are \
                 still online. As the site's service provider, please act on it. The notice \
                 follows.",
                holder.name, notice.site, notice.id,
            ),
        ),
        (false, Desk::Cdn) => (
            format!(
                "CDN abuse report: copyright infringement served through your network on {} \
                 [notice {}]",
                notice.site, notice.id
            ),
            format!(
                "{} sent the operator of {} ({told}) a notice of copyright infringement on {sent} \
                 (notice {}), a reminder, and a report to its host; as of {now}, {online} of its \
                 {total} URL(s) are still online. The site is served through your CDN: please \
                 act on it, and name the origin host that serves it. The notice follows.",
                holder.name, notice.site, notice.id,
            ),
        ),
    };
    let text = format!(
        "{intro}\n\n{}\n\n{}",
        notice.body.trim_end(),
        manifest_lines(store, notice).await?
    );
    let signature = store.signature_image(notice.rights_holder_id).await?;
    let message = compose(
        &mailer.from,
        &to,
        &Letter {
            subject: &subject,
            message_id: &mid,
            in_reply_to: first.map(|m| m.message_id.as_str()),
            notice_id: notice.id,
            text: &text,
            signature: signature.as_ref(),
        },
    )?;
    let claimed = claim(
        store,
        notice.id,
        purpose,
        mid.clone(),
        to.clone(),
        false,
        request,
        Some(&text),
    )
    .await?;
    let MailClaim::Claimed(mail_id) = claimed else {
        return Ok(None);
    };
    let desk_name = match desk {
        Desk::Host => "the abuse contact",
        Desk::Cdn => "the CDN's abuse contact",
    };
    let note = format!(
        "escalated to {desk_name} {} (Message-ID {mid})",
        to.join(", ")
    );
    finish(
        store,
        (notice.id, mail_id),
        mailer.send(message).await,
        request,
        &note,
    )
    .await?;
    Ok(Some(true))
}

/// Where each engine's list is submitted, as the mail tells the rights holder (see
/// `docs/operations.md`, "Exports for search engines and hosts", for the sources).
const ENGINES: [(Engine, &str, &str); 3] = [
    (
        Engine::Google,
        "google",
        "Google Search: https://reportcontent.google.com/forms/dmca_search",
    ),
    (
        Engine::Bing,
        "bing",
        "Bing: https://www.bing.com/webmaster/contentremovalform/showcontentremovalform",
    ),
    (
        Engine::Baidu,
        "baidu",
        "Baidu 百度: 搜索资源平台 https://ziyuan.baidu.com/ (用户反馈, 侵权投诉)",
    ),
];

/// The search-engine delisting step: makes the notice's lists and mails them to the rights
/// holder (or records them as made when it has no e-mail); `false` when another process did
/// first.
async fn delist(
    store: &dyn Store,
    notice: &Notice,
    mails: &[NoticeMail],
    request: &SendRequest<'_>,
) -> Result<bool> {
    let mut lists = Vec::with_capacity(ENGINES.len());
    for (engine, name, _) in ENGINES {
        let list = notices::export(
            store,
            notice.id,
            None,
            ExportKind::Delisting(engine),
            &AbuseOptions::default(),
            request.now,
        )
        .await?;
        lists.push((name, list));
    }
    let urls = lists[0].1.lines().filter(|l| !l.trim().is_empty()).count();
    let holder = holders::get(store, notice.rights_holder_id).await?;
    let address = store
        .rights_holder_profile(holder.id)
        .await?
        .and_then(|p| p.email)
        .filter(|e| !e.trim().is_empty());
    let mid = message_id(notice.id, MailPurpose::Delisting);
    let exports = format!(
        "`copytrace notice export {} --format google|bing|baidu`, or the notice's page",
        notice.id
    );
    let Some(address) = address else {
        let claimed = claim(
            store,
            notice.id,
            MailPurpose::Delisting,
            mid,
            Vec::new(),
            false,
            request,
            None,
        )
        .await?;
        let MailClaim::Claimed(mail_id) = claimed else {
            return Ok(false);
        };
        store
            .finish_notice_mail(&MailEnd {
                mail_id,
                outcome: MailOutcome::Skipped,
                actor: request.actor.to_owned(),
                note: Some(format!(
                    "delisting lists made ({urls} URL(s) for Google, Bing and Baidu), mailed to \
                     nobody: {} has no e-mail in its profile; submit them from {exports}",
                    holder.name
                )),
                at: request.now,
            })
            .await?;
        return Ok(true);
    };
    let mailer = Mailer::new(request.mail)?;
    let zh = notice.lang == "zh";
    let sent = notice
        .sent_at
        .unwrap_or(request.now)
        .to_rfc3339_opts(SecondsFormat::Secs, true);
    let online = still_online(notice);
    let total = notice.match_ids.len();
    let forms: String = ENGINES
        .iter()
        .map(|(_, name, form)| format!("- delisting-{}-{name}.txt: {form}\n", notice.id))
        .collect();
    let (subject, text) = if zh {
        (
            format!(
                "搜索引擎删除链接清单：{} 上仍未删除的侵权页面（通知编号 {}）",
                notice.site, notice.id
            ),
            format!(
                "{} 于 {sent} 发出的侵权通知（通知编号 {}）已经提醒并升级投诉，所列 {total} 个\
                 页面中仍有 {online} 个可以访问。附件是请搜索引擎删除这些链接（共 {urls} 个网址，\
                 含别名）的清单，请由权利人或其代理人提交至：\n\n{forms}\n搜索引擎只会从搜索结果中\
                 删除链接，不会删除网页本身。清单也可随时从 {exports} 导出。\n",
                holder.name, notice.id
            ),
        )
    } else {
        (
            format!(
                "Search-engine delisting lists: infringing URLs still online on {} [notice {}]",
                notice.site, notice.id
            ),
            format!(
                "The notice of copyright infringement {} sent on {sent} (notice {}) was followed \
                 by a reminder and an escalation; {online} of its {total} URL(s) are still \
                 online. Attached are the lists ({urls} URL(s), aliases included) to ask the \
                 search engines to delist them; the rights holder or its agent submits each \
                 at:\n\n{forms}\nSearch engines remove the links from their results, not the \
                 pages. The lists can be exported again at any time from {exports}.\n",
                holder.name, notice.id
            ),
        )
    };
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\
         <pre style=\"white-space: pre-wrap; font-family: sans-serif\">{}</pre></body></html>",
        escape_html(&text)
    );
    let mut parts =
        MultiPart::mixed().multipart(MultiPart::alternative_plain_html(text.clone(), html));
    for (name, list) in &lists {
        parts = parts.singlepart(
            Attachment::new(format!("delisting-{}-{name}.txt", notice.id)).body(
                list.clone(),
                ContentType::parse("text/plain; charset=utf-8").expect("a valid content type"),
            ),
        );
    }
    let mut builder = Message::builder()
        .from(mailer.from.clone())
        .to(mailbox(&address)?)
        .subject(subject)
        .message_id(Some(mid.clone()));
    if let Some(first) = original(mails) {
        builder = builder.references(first.message_id.clone());
    }
    let message = builder
        .multipart(parts)
        .map_err(|e| ServiceError::invalid(format!("cannot build the mail: {e}")))?;
    let claimed = claim(
        store,
        notice.id,
        MailPurpose::Delisting,
        mid.clone(),
        vec![address.clone()],
        false,
        request,
        Some(&text),
    )
    .await?;
    let MailClaim::Claimed(mail_id) = claimed else {
        return Ok(false);
    };
    let note = format!(
        "delisting lists for Google, Bing and Baidu ({urls} URL(s)) mailed to the rights holder \
         at {address} (Message-ID {mid})"
    );
    finish(
        store,
        (notice.id, mail_id),
        mailer.send(message).await,
        request,
        &note,
    )
    .await?;
    Ok(true)
}
