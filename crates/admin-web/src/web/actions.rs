//! Running the site: user accounts, for admins. (Takedown notices are in `notices`.)

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use copytrace_service::{accounts, holders};
use copytrace_store::Role;
use serde::Deserialize;

use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/users", get(users_page).post(add_user))
        .route("/users/remove", post(remove_user))
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
