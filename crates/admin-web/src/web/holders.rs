//! A rights holder's own settings (issue 40) besides its profile (`profiles`): the hosts it
//! licensed to publish its works (matches there are `licensed`, not infringements) and its
//! alert targets (webhooks and e-mail digests of new copies and removals).
//!
//! They belong to the holder: a rights holder manages its own (another holder's pages and forms
//! answer 404, as a missing holder's do), an admin every holder's ([`Area::Holders`]); other
//! roles get 403. Everything goes through `copytrace_service::holders` and
//! `copytrace_service::alerts`, the operations behind `copytrace rights-holder license` and
//! `copytrace alert`, which check each host, URL and address.

use std::collections::HashMap;

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use copytrace_service::alerts::{self, Destination};
use copytrace_service::holders;
use copytrace_service::library::{self, WorkRef};
use copytrace_store::{AlertCadence, Id, RightsHolder};
use serde::Deserialize;

use super::i18n::Texts;
use super::{Area, Viewer, Visitor, WebState, failure, page, utc_seconds};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/holders", get(holders_page))
        .route(
            "/holders/{id}/licences",
            get(licences_page).post(add_licence),
        )
        .route("/holders/{id}/licences/remove", post(remove_licence))
        .route("/holders/{id}/alerts", get(alerts_page).post(add_alert))
        .route("/holders/{id}/alerts/{target}/remove", post(remove_alert))
}

/// Holder `id`, if the visitor may manage it: its own for a rights holder, any for an admin;
/// the 404 answer otherwise, as for a holder that does not exist.
pub(super) async fn managed(
    state: &WebState,
    visitor: &Visitor,
    id: Id,
) -> Result<RightsHolder, Response> {
    visitor.enter(Area::Holders)?;
    if visitor.tenant().is_some_and(|own| own != id) {
        return Err(visitor.not_found());
    }
    holders::get(state.store.as_ref(), id)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))
}

#[derive(Template)]
#[template(path = "web/holders.html")]
struct HoldersPage {
    t: &'static Texts,
    viewer: Viewer,
    /// (id, name, works)
    holders: Vec<(Id, String, usize)>,
}

/// The rights holders an admin manages; a rights holder goes to its own profile.
async fn holders_page(
    State(state): State<WebState>,
    visitor: Visitor,
) -> Result<Response, Response> {
    visitor.enter(Area::Holders)?;
    if let Some(own) = visitor.tenant() {
        return Ok(Redirect::to(&format!("/holders/{own}/profile")).into_response());
    }
    let holders = holders::list(state.store.as_ref())
        .await
        .map_err(failure)?
        .into_iter()
        .map(|s| (s.holder.id, s.holder.name, s.works))
        .collect();
    Ok(page(HoldersPage {
        t: visitor.t,
        viewer: visitor.viewer(),
        holders,
    }))
}

/// A licence as the page lists it.
struct LicenceView {
    host: String,
    /// The work's external id and title; empty for a licence of every work.
    work: String,
    work_external_id: String,
    created: String,
}

#[derive(Template)]
#[template(path = "web/holder_licences.html")]
struct LicencesPage {
    t: &'static Texts,
    viewer: Viewer,
    id: Id,
    name: String,
    tab: &'static str,
    licences: Vec<LicenceView>,
    /// The add form as posted, shown again with the problem.
    host: String,
    work: String,
    problem: Option<String>,
    saved: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SavedQuery {
    saved: String,
}

/// A holder's licensed hosts, and the forms to add and take back one.
async fn licences_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    axum::extract::Query(query): axum::extract::Query<SavedQuery>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    let form = (String::new(), String::new(), None, !query.saved.is_empty());
    licences_view(&state, &visitor, holder, form, StatusCode::OK).await
}

async fn licences_view(
    state: &WebState,
    visitor: &Visitor,
    holder: RightsHolder,
    (host, work, problem, saved): (String, String, Option<String>, bool),
    status: StatusCode,
) -> Result<Response, Response> {
    let store = state.store.as_ref();
    let works: HashMap<Id, (String, String)> = library::list_works(store, Some(holder.id))
        .await
        .map_err(failure)?
        .into_iter()
        .map(|w| (w.id, (w.external_id, w.title)))
        .collect();
    let licences = holders::licenses(store, Some(&holder.name))
        .await
        .map_err(failure)?
        .into_iter()
        .map(|l| {
            let (external_id, title) = l
                .work_id
                .and_then(|w| works.get(&w).cloned())
                .unwrap_or_default();
            LicenceView {
                host: l.host,
                work: if external_id.is_empty() {
                    String::new()
                } else {
                    format!("{title} ({external_id})")
                },
                work_external_id: external_id,
                created: utc_seconds(l.created_at),
            }
        })
        .collect();
    Ok((
        status,
        page(LicencesPage {
            t: visitor.t,
            viewer: visitor.viewer(),
            id: holder.id,
            name: holder.name,
            tab: "licences",
            licences,
            host,
            work,
            problem,
            saved,
        }),
    )
        .into_response())
}

#[derive(Deserialize)]
struct LicenceForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    host: String,
    /// A work's external id; empty for every work of the holder.
    #[serde(default)]
    work: String,
}

/// The work of `holder` an external id names; `None` for an empty one (every work).
async fn licence_work(
    state: &WebState,
    holder: &RightsHolder,
    work: &str,
) -> Result<Option<Id>, copytrace_service::ServiceError> {
    if work.trim().is_empty() {
        return Ok(None);
    }
    library::resolve_work(
        state.store.as_ref(),
        &WorkRef::External {
            external_id: work.trim().to_owned(),
            rights_holder: Some(holder.name.clone()),
        },
    )
    .await
    .map(Some)
}

/// What to tell a person whose licence form named a host or work that cannot be used.
fn form_problem(error: &copytrace_service::ServiceError, t: &Texts, work: &str) -> Option<String> {
    match error.kind() {
        copytrace_service::ErrorKind::Invalid => Some(copytrace_service::error::one_line(error)),
        copytrace_service::ErrorKind::NotFound => Some(format!("{} {:?}", t.no_such_work, work)),
        copytrace_service::ErrorKind::Internal => None,
    }
}

/// Licenses a host (and its subdomains) for every work of the holder, or for one; a refused
/// host or an unknown work shows the form again with why (400), and nothing is stored.
async fn add_licence(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<LicenceForm>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    let added = match licence_work(&state, &holder, &form.work).await {
        Ok(work) => {
            holders::license(
                state.store.as_ref(),
                &holder.name,
                work,
                std::slice::from_ref(&form.host),
            )
            .await
        }
        Err(error) => Err(error),
    };
    match added {
        Ok(_) => Ok(Redirect::to(&format!("/holders/{id}/licences?saved=1")).into_response()),
        Err(error) => match form_problem(&error, visitor.t, &form.work) {
            Some(problem) => {
                let form = (form.host, form.work, Some(problem), false);
                licences_view(&state, &visitor, holder, form, StatusCode::BAD_REQUEST).await
            }
            None => Err(failure(error)),
        },
    }
}

/// Takes a licence back; one that does not exist is 404.
async fn remove_licence(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<LicenceForm>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    let work = licence_work(&state, &holder, &form.work)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let removed = holders::unlicense(
        state.store.as_ref(),
        &holder.name,
        work,
        std::slice::from_ref(&form.host),
    )
    .await
    .map_err(|error| match error.kind() {
        copytrace_service::ErrorKind::Invalid => {
            visitor.bad_request(&copytrace_service::error::one_line(&error))
        }
        _ => visitor.not_found_or_failure(error),
    })?;
    if removed == 0 {
        return Err(visitor.not_found());
    }
    Ok(Redirect::to(&format!("/holders/{id}/licences")).into_response())
}

/// An alert target as the page lists it.
struct AlertView {
    id: Id,
    kind: &'static str,
    address: String,
    cadence: &'static str,
    lang: &'static str,
    delivered: usize,
    waiting: usize,
    failed: usize,
    last_error: String,
    created: String,
}

#[derive(Template)]
#[template(path = "web/holder_alerts.html")]
struct AlertsPage {
    t: &'static Texts,
    viewer: Viewer,
    id: Id,
    name: String,
    tab: &'static str,
    targets: Vec<AlertView>,
    /// A new webhook's signing secret, shown this once.
    secret: Option<String>,
    /// The add form as posted, shown again with the problem.
    form: AlertForm,
    problem: Option<String>,
    saved: bool,
}

/// A holder's alert targets with how their deliveries stand, and the forms to add and remove
/// one.
async fn alerts_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    axum::extract::Query(query): axum::extract::Query<SavedQuery>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    let shown = AlertsShown {
        saved: !query.saved.is_empty(),
        ..AlertsShown::default()
    };
    alerts_view(&state, &visitor, holder, shown, StatusCode::OK).await
}

/// What the alerts page shows besides the targets.
#[derive(Default)]
struct AlertsShown {
    form: AlertForm,
    secret: Option<String>,
    problem: Option<String>,
    saved: bool,
}

async fn alerts_view(
    state: &WebState,
    visitor: &Visitor,
    holder: RightsHolder,
    shown: AlertsShown,
    status: StatusCode,
) -> Result<Response, Response> {
    let t = visitor.t;
    let targets = alerts::targets(state.store.as_ref(), Some(&holder.name))
        .await
        .map_err(failure)?
        .into_iter()
        .map(|s| AlertView {
            id: s.target.id,
            kind: t.code(s.target.kind.as_str()),
            address: s.target.address,
            cadence: t.code(s.target.cadence.as_str()),
            lang: if s.target.lang == "en" {
                "English"
            } else {
                "中文"
            },
            delivered: s.delivered,
            waiting: s.waiting,
            failed: s.failed,
            last_error: s.last_error.unwrap_or_default(),
            created: utc_seconds(s.target.created_at),
        })
        .collect();
    let mut form = shown.form;
    if form.kind.is_empty() {
        form.kind = "email".to_owned();
    }
    if form.lang.is_empty() {
        form.lang = if t.html_lang == "en" { "en" } else { "zh" }.to_owned();
    }
    Ok((
        status,
        page(AlertsPage {
            t,
            viewer: visitor.viewer(),
            id: holder.id,
            name: holder.name,
            tab: "alerts",
            targets,
            secret: shown.secret,
            form,
            problem: shown.problem,
            saved: shown.saved,
        }),
    )
        .into_response())
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AlertForm {
    csrf: String,
    /// `webhook` or `email`.
    kind: String,
    /// The webhook's URL or the e-mail address.
    address: String,
    /// `1`: at most one digest a day.
    daily: String,
    /// `zh` or `en`: the e-mail digest's language.
    lang: String,
}

/// Adds an alert target (the same address again updates it); a new webhook's secret is shown
/// once, on the answer. A refused URL or address shows the form again with why (400).
async fn add_alert(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<AlertForm>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    let destination = match form.kind.as_str() {
        "webhook" => Destination::Webhook(form.address.trim().to_owned()),
        "email" => Destination::Email(form.address.trim().to_owned()),
        other => return Err(visitor.bad_request(&format!("{other:?}"))),
    };
    let webhook = matches!(destination, Destination::Webhook(_));
    let cadence = if form.daily == "1" {
        AlertCadence::Daily
    } else {
        AlertCadence::AfterRun
    };
    let lang = if form.lang == "en" { "en" } else { "zh" };
    let added = alerts::add_target(
        state.store.as_ref(),
        &holder.name,
        destination,
        None,
        cadence,
        lang,
    )
    .await;
    match added {
        Ok((_, secret)) if webhook => {
            // The secret is never shown again: the answer is the page, not a redirect.
            let shown = AlertsShown {
                secret: Some(secret),
                saved: true,
                ..AlertsShown::default()
            };
            alerts_view(&state, &visitor, holder, shown, StatusCode::OK).await
        }
        Ok(_) => Ok(Redirect::to(&format!("/holders/{id}/alerts?saved=1")).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
            let shown = AlertsShown {
                problem: Some(copytrace_service::error::one_line(&error)),
                form,
                ..AlertsShown::default()
            };
            alerts_view(&state, &visitor, holder, shown, StatusCode::BAD_REQUEST).await
        }
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

#[derive(Deserialize)]
struct RemoveForm {
    #[serde(default)]
    csrf: String,
}

/// Removes an alert target of the holder (with its delivery history); another holder's
/// target is 404 and stays.
async fn remove_alert(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((id, target)): Path<(Id, Id)>,
    Form(form): Form<RemoveForm>,
) -> Result<Response, Response> {
    let holder = managed(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    alerts::remove_target(state.store.as_ref(), target, Some(holder.id))
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(Redirect::to(&format!("/holders/{id}/alerts")).into_response())
}
