//! Acting on copies and running the site: takedown notices (created from the confirmed copies
//! on a site, marked sent or ignored, their removal progress followed) and, for admins, user
//! accounts.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use chrono::Utc;
use copytrace_analytics::notice::NoticeLaw;
use copytrace_service::{accounts, holders, notices};
use copytrace_store::{Id, NoticeStatus, Role};
use serde::Deserialize;

use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/notices", get(notices_page).post(create_notice))
        .route("/notices/{id}", get(notice_page))
        .route("/notices/{id}/status", post(set_notice_status))
        .route("/notices/{id}/text", post(edit_notice))
        .route("/users", get(users_page).post(add_user))
        .route("/users/remove", post(remove_user))
}

struct NoticeRowView {
    id: Id,
    site: String,
    status: &'static str,
    created: String,
    sent: String,
    copies: usize,
    removed: u64,
    /// Removed copies in percent, for the progress bar.
    percent: u64,
}

impl NoticeRowView {
    fn of(notice: &copytrace_store::Notice, t: &Texts) -> NoticeRowView {
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
    problem: Option<String>,
}

/// The visitor's notices (a rights holder's own), and the form to write one.
async fn notices_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    notices_listing(&state, &visitor, &query, None).await
}

async fn notices_listing(
    state: &WebState,
    visitor: &Visitor,
    query: &ListQuery,
    problem: Option<String>,
) -> Result<Response, Response> {
    let t = visitor.t;
    let store = state.store.as_ref();
    let rows: Vec<NoticeRowView> = store_notices(state, visitor)
        .await?
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
        axum::http::StatusCode::BAD_REQUEST
    } else {
        axum::http::StatusCode::OK
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
            problem,
        }),
    )
        .into_response())
}

async fn store_notices(
    state: &WebState,
    visitor: &Visitor,
) -> Result<Vec<copytrace_store::Notice>, Response> {
    notices::list(state.store.as_ref(), visitor.tenant())
        .await
        .map_err(failure)
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
            )
            .await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
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
}

/// One notice: its text, its status and removal progress, and its actions. Another holder's
/// notice answers 404.
async fn notice_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    let t = visitor.t;
    let notice = notices::get(state.store.as_ref(), id, visitor.tenant())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(page(NoticePage {
        t,
        viewer: visitor.viewer(),
        is_draft: notice.status == NoticeStatus::Draft,
        body: notice.body.clone(),
        notice: NoticeRowView::of(&notice, t),
    }))
}

#[derive(Deserialize)]
struct StatusForm {
    #[serde(default)]
    csrf: String,
    /// `sent`, `ignored` or `draft`.
    status: String,
}

/// Marks a notice sent (its copies become `notice_sent`), ignored, or back to draft.
async fn set_notice_status(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<StatusForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    visitor.check_form(&form.csrf)?;
    let status = match form.status.as_str() {
        "sent" => NoticeStatus::Sent,
        "ignored" => NoticeStatus::Ignored,
        "draft" => NoticeStatus::Draft,
        _ => return Err(visitor.bad_request(visitor.t.choose_decision)),
    };
    notices::set_status(state.store.as_ref(), id, status, visitor.tenant())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(Redirect::to(&format!("/notices/{id}")).into_response())
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

struct UserRow {
    email: String,
    role: &'static str,
    holder: String,
}

#[derive(Template)]
#[template(path = "web/users.html")]
struct UsersPage {
    t: &'static Texts,
    viewer: Viewer,
    users: Vec<UserRow>,
    pager: Pager,
    list_path: &'static str,
    holders: Vec<String>,
    roles: Vec<(&'static str, &'static str)>,
    problem: Option<String>,
}

/// Accounts, and the forms to add and remove them (admins only).
async fn users_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Users)?;
    users_listing(&state, &visitor, &query, None).await
}

async fn users_listing(
    state: &WebState,
    visitor: &Visitor,
    query: &ListQuery,
    problem: Option<String>,
) -> Result<Response, Response> {
    let t = visitor.t;
    let store = state.store.as_ref();
    let users = accounts::list(store)
        .await
        .map_err(failure)?
        .into_iter()
        .map(|a| UserRow {
            role: t.code(a.user.role.as_str()),
            email: a.user.email,
            holder: a.rights_holder.unwrap_or_default(),
        })
        .filter(|u| query.keeps(&[&u.email, u.role, &u.holder]))
        .collect();
    let (users, pager) = page_of(users, query);
    let holders = holders::names(store).await.map_err(failure)?;
    let roles = [
        Role::RightsHolder,
        Role::Analyst,
        Role::Operator,
        Role::Admin,
    ]
    .into_iter()
    .map(|r| (r.as_str(), t.code(r.as_str())))
    .collect();
    let status = if problem.is_some() {
        axum::http::StatusCode::BAD_REQUEST
    } else {
        axum::http::StatusCode::OK
    };
    Ok((
        status,
        page(UsersPage {
            t,
            viewer: visitor.viewer(),
            users,
            pager,
            list_path: "/users",
            holders,
            roles,
            problem,
        }),
    )
        .into_response())
}

#[derive(Deserialize)]
struct UserForm {
    #[serde(default)]
    csrf: String,
    email: String,
    role: String,
    #[serde(default)]
    holder: String,
    password: String,
}

/// Adds an account; a bad e-mail, role, holder or short password shows the form again with
/// the reason.
async fn add_user(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<UserForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Users)?;
    visitor.check_form(&form.csrf)?;
    let Some(role) = Role::parse(&form.role) else {
        return users_listing(
            &state,
            &visitor,
            &ListQuery::default(),
            Some(format!("{:?}", form.role)),
        )
        .await;
    };
    let holder = (role == Role::RightsHolder).then_some(form.holder.as_str());
    match accounts::add_user(
        state.store.as_ref(),
        form.email.trim(),
        role,
        holder,
        &form.password,
    )
    .await
    {
        Ok(_) => Ok(Redirect::to("/users").into_response()),
        Err(error) => {
            let problem = copytrace_service::error::one_line(&error);
            users_listing(&state, &visitor, &ListQuery::default(), Some(problem)).await
        }
    }
}

#[derive(Deserialize)]
struct RemoveUserForm {
    #[serde(default)]
    csrf: String,
    email: String,
}

/// Removes an account (its sessions end with it). An admin cannot remove their own.
async fn remove_user(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<RemoveUserForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Users)?;
    visitor.check_form(&form.csrf)?;
    if form.email == visitor.session.user.email {
        return Err(visitor.bad_request(visitor.t.cannot_remove_self));
    }
    accounts::remove_user(state.store.as_ref(), &form.email)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(Redirect::to("/users").into_response())
}
