//! Takedown notices (issue 40): written from the confirmed copies on a site, edited while a
//! draft, mailed to the site's contacts, moved through their states by people and by removal
//! checks, each step kept in the notice's history.
//!
//! **Sending** goes through `copytrace_service::sending::send`, the operation behind
//! `copytrace notice send`, with the SMTP server `serve` was given: at most once per notice
//! (a second click finds the mail and sends nothing, saying when it went), a refused mail
//! back to draft, an interrupted one left `sending` for a person to settle. Only the notice's
//! rights holder and admins may send it (another holder's notice is 404); an admin may also
//! send every draft at once, each as a single send does.
//!
//! **Moves by hand** are those the store allows from the notice's status
//! ([`notices::manual_moves`]); each is recorded with the visitor's e-mail (`web:EMAIL`) and
//! note.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use chrono::Utc;
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::sending::{self, SendOutcome, SendRequest};
use copytrace_service::{ServiceError, holders, notices};
use copytrace_store::{Id, MailState, Notice, NoticeMail, NoticeStatus, NoticeStep};
use serde::Deserialize;

use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, Viewer, Visitor, WebState, failure, page, utc_seconds};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/notices", get(notices_page).post(create_notice))
        .route("/notices/send-drafts", post(send_drafts))
        .route("/notices/{id}", get(notice_page))
        .route("/notices/{id}/status", post(set_notice_status))
        .route("/notices/{id}/text", post(edit_notice))
        .route("/notices/{id}/send", post(send_notice))
}

/// Who acts, as a notice's history records it: the web and the visitor's e-mail.
fn actor(visitor: &Visitor) -> String {
    format!("web:{}", visitor.session.user.email)
}

pub(super) struct NoticeRowView {
    pub id: Id,
    pub site: String,
    /// The status as the visitor's language reads it.
    pub status: &'static str,
    pub created: String,
    pub sent: String,
    pub copies: usize,
    pub removed: u64,
    /// Removed copies in percent, for the progress bar.
    pub percent: u64,
}

impl NoticeRowView {
    pub fn of(notice: &Notice, t: &Texts) -> NoticeRowView {
        let copies = notice.match_ids.len();
        NoticeRowView {
            id: notice.id,
            site: notice.site.clone(),
            status: t.code(notice.status.as_str()),
            created: notice.created_at.format("%Y-%m-%d %H:%M").to_string(),
            sent: notice
                .sent_at
                .map(|at| at.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default(),
            copies,
            removed: notice.removed,
            percent: (notice.removed * 100)
                .checked_div(copies as u64)
                .unwrap_or(0),
        }
    }
}

#[derive(Template)]
#[template(path = "web/notices.html")]
struct NoticesPage {
    t: &'static Texts,
    viewer: Viewer,
    notices: Vec<NoticeRowView>,
    pager: Pager,
    list_path: &'static str,
    /// Holders a notice may be written for: an admin chooses; a rights holder has its own.
    holders: Vec<String>,
    /// The profiles the visitor may edit, as (holder id, name): its own, or every holder's.
    profiles: Vec<(Id, String)>,
    /// Drafts the visitor may send at once.
    drafts: usize,
    /// What "send all drafts" did: lines of notices sent, and of those not sent with why.
    report: Option<(Vec<String>, Vec<String>)>,
    problem: Option<String>,
}

/// The visitor's notices (a rights holder's own), and the form to write one.
async fn notices_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    notices_listing(&state, &visitor, &query, None, None).await
}

async fn notices_listing(
    state: &WebState,
    visitor: &Visitor,
    query: &ListQuery,
    problem: Option<String>,
    report: Option<(Vec<String>, Vec<String>)>,
) -> Result<Response, Response> {
    let t = visitor.t;
    let store = state.store.as_ref();
    let stored = notices::list(store, visitor.tenant())
        .await
        .map_err(failure)?;
    let drafts = stored
        .iter()
        .filter(|n| n.status == NoticeStatus::Draft)
        .count();
    let rows: Vec<NoticeRowView> = stored
        .iter()
        .map(|n| NoticeRowView::of(n, t))
        .filter(|n| query.keeps(&[&n.id.to_string(), &n.site, n.status]))
        .collect();
    let (notices, pager) = page_of(rows, query);
    let holders = match visitor.tenant() {
        Some(_) => Vec::new(),
        None => holders::names(store).await.map_err(failure)?,
    };
    let profiles = match visitor.tenant() {
        Some(own) => {
            let holder = holders::get(store, own).await.map_err(failure)?;
            vec![(holder.id, holder.name)]
        }
        None => holders::list(store)
            .await
            .map_err(failure)?
            .into_iter()
            .map(|s| (s.holder.id, s.holder.name))
            .collect(),
    };
    let status = if problem.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        page(NoticesPage {
            t,
            viewer: visitor.viewer(),
            notices,
            pager,
            list_path: "/notices",
            holders,
            profiles,
            drafts,
            report,
            problem,
        }),
    )
        .into_response())
}

#[derive(Deserialize)]
struct NoticeForm {
    #[serde(default)]
    csrf: String,
    site: String,
    #[serde(default)]
    lang: String,
    /// The holder, for an admin; a rights holder's own is used whatever this says.
    #[serde(default)]
    holder: String,
}

/// Writes a draft notice of the confirmed copies online on a site.
async fn create_notice(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<NoticeForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    let store = state.store.as_ref();
    let holder = match visitor.tenant() {
        Some(own) => {
            holders::get(store, own)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?
                .name
        }
        None => form.holder.clone(),
    };
    // The form's language picks the law: zh the Chinese 条例 notice, en the US §512(c)(3)
    // one; anything else the holder's default.
    let law = match form.lang.as_str() {
        "zh" | "cn" => Some(NoticeLaw::Cn),
        "en" | "us" => Some(NoticeLaw::Us),
        _ => None,
    };
    let request = notices::NoticeRequest {
        holder: Some(&holder),
        site: &form.site,
        law,
        evidence: None,
        at: Utc::now(),
    };
    match notices::create(store, &request).await {
        Ok(notice) => Ok(Redirect::to(&format!("/notices/{}", notice.id)).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            notices_listing(
                &state,
                &visitor,
                &ListQuery::default(),
                Some(copytrace_service::error::one_line(&error)),
                None,
            )
            .await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

#[derive(Deserialize)]
struct BulkForm {
    #[serde(default)]
    csrf: String,
}

/// Mails every draft the visitor may send (an admin's: all; a rights holder's: its own),
/// each as a single send does; one that cannot be sent is listed with why and the others go
/// on. A second click finds nothing left to send.
async fn send_drafts(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<BulkForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    let store = state.store.as_ref();
    let holder = match visitor.tenant() {
        Some(own) => Some(
            holders::get(store, own)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?
                .name,
        ),
        None => None,
    };
    let actor = actor(&visitor);
    let request = SendRequest {
        mail: &state.mail,
        actor: &actor,
        force: false,
        now: Utc::now(),
    };
    match sending::send_drafts(store, holder.as_deref(), &request).await {
        Ok(report) => {
            let t = visitor.t;
            let sent = report
                .sent
                .iter()
                .map(|outcome| sent_line(outcome, t))
                .collect();
            let failed = report
                .failed
                .iter()
                .map(|(id, why)| format!("#{id}: {why}"))
                .collect();
            notices_listing(
                &state,
                &visitor,
                &ListQuery::default(),
                None,
                Some((sent, failed)),
            )
            .await
        }
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            notices_listing(
                &state,
                &visitor,
                &ListQuery::default(),
                Some(copytrace_service::error::one_line(&error)),
                None,
            )
            .await
        }
        Err(error) => Err(failure(error)),
    }
}

/// One line saying what a send did, in the visitor's language.
fn sent_line(outcome: &SendOutcome, t: &Texts) -> String {
    match outcome {
        SendOutcome::Sent {
            notice_id,
            recipients,
            ..
        } => format!("#{notice_id}: {} {}", t.sent_to, recipients.join(", ")),
        SendOutcome::AlreadySent { notice_id, mail } => format!(
            "#{notice_id}: {} ({}, {})",
            t.already_sent,
            utc_seconds(mail.finished_at.unwrap_or(mail.started_at)),
            mail.recipients.join(", ")
        ),
    }
}

/// A step of a notice's history as the page shows it.
struct StepView {
    at: String,
    from: &'static str,
    to: &'static str,
    actor: String,
    note: String,
}

impl StepView {
    fn of(step: &NoticeStep, t: &Texts) -> StepView {
        StepView {
            at: utc_seconds(step.at),
            from: t.code(step.from.as_str()),
            to: t.code(step.to.as_str()),
            actor: step.actor.clone(),
            note: step.note.clone().unwrap_or_default(),
        }
    }
}

/// A mail about a notice as the page shows it.
struct MailView {
    purpose: &'static str,
    state: &'static str,
    started: String,
    finished: String,
    recipients: String,
    message_id: String,
    error: String,
}

impl MailView {
    fn of(mail: &NoticeMail, t: &Texts) -> MailView {
        MailView {
            purpose: t.code(mail.purpose.as_str()),
            state: t.code(mail.state.as_str()),
            started: utc_seconds(mail.started_at),
            finished: mail.finished_at.map(utc_seconds).unwrap_or_default(),
            recipients: if mail.recipients.is_empty() {
                t.nobody.to_owned()
            } else {
                mail.recipients.join(", ")
            },
            message_id: mail.message_id.clone(),
            error: mail.error.clone().unwrap_or_default(),
        }
    }
}

#[derive(Template)]
#[template(path = "web/notice.html")]
struct NoticePage {
    t: &'static Texts,
    viewer: Viewer,
    notice: NoticeRowView,
    body: String,
    is_draft: bool,
    /// Its mail broke off: a person settles it, or sends it again with force.
    stuck: bool,
    /// The statuses the visitor may move it to, as (code, label).
    moves: Vec<(&'static str, &'static str)>,
    steps: Vec<StepView>,
    mails: Vec<MailView>,
    /// What the last send did, said in words.
    outcome: Option<String>,
    problem: Option<String>,
    /// The holder whose signature image the notice shows under its text, when it has one.
    signature_of: Option<Id>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NoticeQuery {
    /// `mailed` or `already`, after a send.
    sent: String,
}

/// One notice: its text, status, removal progress, history, mails and actions. Another
/// holder's notice answers 404.
async fn notice_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Query(query): Query<NoticeQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    let outcome = match query.sent.as_str() {
        "mailed" => Some(visitor.t.mailed_now.to_owned()),
        "already" => Some(visitor.t.already_sent.to_owned()),
        _ => None,
    };
    notice_view(&state, &visitor, id, outcome, None, StatusCode::OK).await
}

async fn notice_view(
    state: &WebState,
    visitor: &Visitor,
    id: Id,
    outcome: Option<String>,
    problem: Option<String>,
    status: StatusCode,
) -> Result<Response, Response> {
    let t = visitor.t;
    let store = state.store.as_ref();
    let notice = notices::get(store, id, visitor.tenant())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let (steps, mails) = notices::history(store, id)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let stuck = notice.status == NoticeStatus::Sending
        && mails.iter().any(|m| m.state == MailState::Sending);
    let signature_of =
        copytrace_service::holders::signature_image_of(store, notice.rights_holder_id)
            .await
            .map_err(|error| visitor.not_found_or_failure(error))?
            .map(|_| notice.rights_holder_id);
    Ok((
        status,
        page(NoticePage {
            t,
            viewer: visitor.viewer(),
            is_draft: notice.status == NoticeStatus::Draft,
            stuck,
            moves: notices::manual_moves(notice.status)
                .into_iter()
                .map(|s| (s.as_str(), t.code(s.as_str())))
                .collect(),
            steps: steps.iter().map(|s| StepView::of(s, t)).collect(),
            mails: mails.iter().map(|m| MailView::of(m, t)).collect(),
            body: notice.body.clone(),
            notice: NoticeRowView::of(&notice, t),
            outcome,
            problem,
            signature_of,
        }),
    )
        .into_response())
}

#[derive(Deserialize)]
struct SendForm {
    #[serde(default)]
    csrf: String,
    /// `1` to send a notice stuck in `sending` again, accepting a possible duplicate.
    #[serde(default)]
    force: String,
}

/// Mails a notice to its site's contacts, at most once: a notice mailed before sends nothing
/// and says so. A refusal (no contact, no SMTP server) shows the notice again with why (400);
/// a mail server that refused or broke off, with what became of the notice (502).
async fn send_notice(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<SendForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    let store = state.store.as_ref();
    // Tenancy first: another holder's notice is not found, and nothing is sent.
    notices::get(store, id, visitor.tenant())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let actor = actor(&visitor);
    let request = SendRequest {
        mail: &state.mail,
        actor: &actor,
        force: form.force == "1",
        now: Utc::now(),
    };
    let problem = |error: &ServiceError| Some(copytrace_service::error::one_line(error));
    match sending::send(store, id, &request).await {
        Ok(SendOutcome::Sent { .. }) => {
            Ok(Redirect::to(&format!("/notices/{id}?sent=mailed")).into_response())
        }
        Ok(SendOutcome::AlreadySent { .. }) => {
            Ok(Redirect::to(&format!("/notices/{id}?sent=already")).into_response())
        }
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            let problem = problem(&error);
            notice_view(&state, &visitor, id, None, problem, StatusCode::BAD_REQUEST).await
        }
        Err(error @ ServiceError::Unavailable(_)) => {
            let problem = problem(&error);
            notice_view(&state, &visitor, id, None, problem, StatusCode::BAD_GATEWAY).await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

#[derive(Deserialize)]
struct StatusForm {
    #[serde(default)]
    csrf: String,
    /// `sent`, `acknowledged`, `ignored`, `escalated` or `draft`.
    status: String,
    /// Why (kept in the history).
    #[serde(default)]
    note: String,
}

/// Moves a notice to another status by hand (recorded in its history with the visitor and
/// the note); a move the store does not allow from its status shows why (400).
async fn set_notice_status(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<StatusForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    let Some(status) = NoticeStatus::parse(&form.status) else {
        return Err(visitor.bad_request(visitor.t.choose_decision));
    };
    let note = Some(form.note.trim().to_owned());
    match notices::set_status(
        state.store.as_ref(),
        id,
        status,
        visitor.tenant(),
        &actor(&visitor),
        note,
    )
    .await
    {
        Ok(_) => Ok(Redirect::to(&format!("/notices/{id}")).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            let problem = Some(copytrace_service::error::one_line(&error));
            notice_view(&state, &visitor, id, None, problem, StatusCode::BAD_REQUEST).await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

#[derive(Deserialize)]
struct NoticeTextForm {
    #[serde(default)]
    csrf: String,
    body: String,
}

/// Replaces a draft notice's text, as edited before sending; a sent notice keeps its text.
async fn edit_notice(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<NoticeTextForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    // Browsers send a textarea's line breaks as CR LF.
    let body = form.body.replace("\r\n", "\n");
    match notices::edit(state.store.as_ref(), id, visitor.tenant(), &body).await {
        Ok(_) => Ok(Redirect::to(&format!("/notices/{id}")).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            Err(visitor.bad_request(&copytrace_service::error::one_line(&error)))
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}
