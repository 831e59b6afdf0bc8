//! Mailing notices and reading their history (issue 40), as `copytrace notice send` and
//! `notice history` do: at most once per notice (a second call sends nothing and says when it
//! went), the notice's rights holder and admins only (another holder's notice is 404 and
//! nothing is sent).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use copytrace_service::sending::{self, SendOutcome, SendRequest};
use copytrace_service::{ServiceError, holders, notices};

use super::schema::{
    BulkSendResult, ErrorBody, MailItem, NoticeHistory, SendFailure, SendRequestBody, SendResult,
    StepItem,
};
use super::{ApiError, ApiResult, Body, Caller, IdPath};
use crate::web::{Area, WebState};

fn result(outcome: SendOutcome) -> SendResult {
    match outcome {
        SendOutcome::Sent {
            notice_id,
            recipients,
            message_id,
        } => SendResult {
            notice_id,
            outcome: "sent".into(),
            recipients,
            message_id,
        },
        SendOutcome::AlreadySent { notice_id, mail } => SendResult {
            notice_id,
            outcome: "already_sent".into(),
            recipients: mail.recipients,
            message_id: mail.message_id,
        },
    }
}

/// A send's failure: the refusal's reason (400), or what became of the notice when the mail
/// server refused or broke off (502), else the usual mapping.
fn send_error(error: ServiceError) -> ApiError {
    match error {
        ServiceError::Unavailable(_) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            copytrace_service::error::one_line(&error),
        ),
        error => ApiError::service(error),
    }
}

/// Mails a notice to its site's contacts (the operator's first), with its evidence hashes
/// and the notice attached. Never twice: a notice mailed before answers `already_sent` and
/// nothing is sent.
#[utoipa::path(
    post,
    path = "/api/v1/notices/{id}/send",
    tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    request_body = SendRequestBody,
    responses(
        (status = 200, description = "Sent now, or found sent before (nothing sent)", body = SendResult),
        (status = 400, description = "The site has no contact, no SMTP server is configured, or the notice is stuck in sending (settle it or force)", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such notice, or not the caller's", body = ErrorBody),
        (status = 502, description = "The mail server refused it (the notice is a draft again) or the exchange broke off (it stays sending)", body = ErrorBody),
    )
)]
pub(super) async fn send(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
    Body(request): Body<SendRequestBody>,
) -> ApiResult<Json<SendResult>> {
    caller.enter(Area::Notices)?;
    let store = state.store.as_ref();
    notices::get(store, id, caller.tenant())
        .await
        .map_err(ApiError::service)?;
    let actor = caller.actor();
    let outcome = sending::send(
        store,
        id,
        &SendRequest {
            mail: &state.mail,
            actor: &actor,
            force: request.force,
            now: Utc::now(),
        },
    )
    .await
    .map_err(send_error)?;
    Ok(Json(result(outcome)))
}

/// Mails every draft the caller may send (an admin's: all; a rights holder's: its own), each
/// as a single send does; one that cannot be sent is listed with why, the others go on.
#[utoipa::path(
    post,
    path = "/api/v1/notices/send-drafts",
    tag = "notices",
    responses(
        (status = 200, description = "What was sent and what was not", body = BulkSendResult),
        (status = 400, description = "No SMTP server is configured", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices; or a cookie without X-CSRF-Token", body = ErrorBody),
    )
)]
pub(super) async fn send_drafts(
    caller: Caller,
    State(state): State<WebState>,
) -> ApiResult<Json<BulkSendResult>> {
    caller.enter(Area::Notices)?;
    let store = state.store.as_ref();
    let holder = match caller.tenant() {
        Some(own) => Some(
            holders::get(store, own)
                .await
                .map_err(ApiError::service)?
                .name,
        ),
        None => None,
    };
    let actor = caller.actor();
    let report = sending::send_drafts(
        store,
        holder.as_deref(),
        &SendRequest {
            mail: &state.mail,
            actor: &actor,
            force: false,
            now: Utc::now(),
        },
    )
    .await
    .map_err(send_error)?;
    Ok(Json(BulkSendResult {
        sent: report.sent.into_iter().map(result).collect(),
        failed: report
            .failed
            .into_iter()
            .map(|(notice_id, error)| SendFailure { notice_id, error })
            .collect(),
    }))
}

/// A notice's history, oldest first (each status change, reminder and escalation with its
/// time, actor and note), and the mails sent about it.
#[utoipa::path(
    get,
    path = "/api/v1/notices/{id}/history",
    tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    responses(
        (status = 200, description = "Its history and mails", body = NoticeHistory),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Only admins and rights holders handle notices", body = ErrorBody),
        (status = 404, description = "No such notice, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn history(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Json<NoticeHistory>> {
    caller.enter(Area::Notices)?;
    let store = state.store.as_ref();
    notices::get(store, id, caller.tenant())
        .await
        .map_err(ApiError::service)?;
    let (steps, mails) = notices::history(store, id)
        .await
        .map_err(ApiError::service)?;
    Ok(Json(NoticeHistory {
        notice_id: id,
        history: steps
            .into_iter()
            .map(|s| StepItem {
                from: s.from.as_str().to_owned(),
                to: s.to.as_str().to_owned(),
                at: s.at,
                actor: s.actor,
                note: s.note,
            })
            .collect(),
        mails: mails
            .into_iter()
            .map(|m| MailItem {
                purpose: m.purpose.as_str().to_owned(),
                state: m.state.as_str().to_owned(),
                message_id: m.message_id,
                recipients: m.recipients,
                started_at: m.started_at,
                finished_at: m.finished_at,
                error: m.error,
            })
            .collect(),
    }))
}
