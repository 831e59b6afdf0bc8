//! The rights-holder profile page (issue 40): what a holder's takedown notices say about it.
//! A rights holder sees and edits its own profile only (another holder's is 404, as a missing
//! one is); an admin any holder's. Other roles have no business with notices (403).

use askama::Template;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::multipart::Multipart;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::Form;
use chrono::Utc;
use copytrace_service::holders::{self, HolderProfile, ProfileUpdate};
use copytrace_store::Id;
use serde::Deserialize;

use super::i18n::Texts;
use super::{Area, Viewer, Visitor, WebState, page};

pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route(
            "/holders/{id}/profile",
            get(profile_page).post(save_profile),
        )
        .route(
            "/holders/{id}/signature-image",
            get(signature_image)
                .post(upload_signature_image)
                // Room for the form around an image at the service's cap; it refuses more.
                .layer(DefaultBodyLimit::max(
                    holders::MAX_SIGNATURE_IMAGE_BYTES + 64 * 1024,
                )),
        )
        .route(
            "/holders/{id}/signature-image/remove",
            post(remove_signature_image),
        )
}

/// The profile's fields as the form shows and posts them (empty: not given).
#[derive(Debug, Default, Deserialize)]
struct ProfileForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    legal_name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    agent_name: String,
    #[serde(default)]
    agent_role: String,
    #[serde(default)]
    agent_contact: String,
    #[serde(default)]
    signature: String,
    #[serde(default)]
    language: String,
}

impl ProfileForm {
    fn of(shown: &HolderProfile) -> ProfileForm {
        let Some(p) = &shown.profile else {
            return ProfileForm {
                language: holders::DEFAULT_PROFILE_LANGUAGE.to_owned(),
                ..ProfileForm::default()
            };
        };
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        ProfileForm {
            csrf: String::new(),
            legal_name: text(&p.legal_name),
            address: text(&p.address),
            email: text(&p.email),
            phone: text(&p.phone),
            agent_name: text(&p.agent_name),
            agent_role: text(&p.agent_role),
            agent_contact: text(&p.agent_contact),
            signature: text(&p.signature),
            language: p.language.clone(),
        }
    }

    /// The form replaces every field: it shows them all, so an emptied one is cleared.
    fn update(&self) -> ProfileUpdate {
        ProfileUpdate {
            legal_name: Some(self.legal_name.clone()),
            address: Some(self.address.clone()),
            email: Some(self.email.clone()),
            phone: Some(self.phone.clone()),
            agent_name: Some(self.agent_name.clone()),
            agent_role: Some(self.agent_role.clone()),
            agent_contact: Some(self.agent_contact.clone()),
            signature: Some(self.signature.clone()),
            language: Some(self.language.clone()),
        }
    }
}

#[derive(Template)]
#[template(path = "web/holder_profile.html")]
struct ProfilePage {
    t: &'static Texts,
    viewer: Viewer,
    id: Id,
    name: String,
    tab: &'static str,
    form: ProfileForm,
    saved: bool,
    problem: Option<String>,
    /// The stored signature image, as "image/png, 1234 bytes".
    signature_image: Option<String>,
}

fn image_label(shown: &HolderProfile) -> Option<String> {
    shown
        .signature_image
        .as_ref()
        .map(|i| format!("{}, {} bytes", i.content_type, i.bytes))
}

#[derive(Deserialize)]
struct SavedQuery {
    #[serde(default)]
    saved: Option<String>,
}

/// The holder `id` with its profile, if the visitor may see it.
async fn visible(state: &WebState, visitor: &Visitor, id: Id) -> Result<HolderProfile, Response> {
    let holder = super::holders::managed(state, visitor, id).await?;
    holders::profile(state.store.as_ref(), &holder.name)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))
}

/// The profile form, filled with what is stored.
async fn profile_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Query(query): Query<SavedQuery>,
) -> Result<Response, Response> {
    let shown = visible(&state, &visitor, id).await?;
    Ok(page(ProfilePage {
        t: visitor.t,
        viewer: visitor.viewer(),
        id,
        tab: "profile",
        form: ProfileForm::of(&shown),
        signature_image: image_label(&shown),
        name: shown.holder.name,
        saved: query.saved.is_some(),
        problem: None,
    }))
}

/// Saves the posted profile; a refused value shows the form again as posted, with the reason
/// (400), and stores nothing.
async fn save_profile(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<ProfileForm>,
) -> Result<Response, Response> {
    let shown = visible(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    match holders::set_profile_of(state.store.as_ref(), id, &form.update(), Utc::now()).await {
        Ok(_) => Ok(Redirect::to(&format!("/holders/{id}/profile?saved=1")).into_response()),
        Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => Ok((
            axum::http::StatusCode::BAD_REQUEST,
            page(ProfilePage {
                t: visitor.t,
                viewer: visitor.viewer(),
                id,
                signature_image: image_label(&shown),
                name: shown.holder.name,
                tab: "profile",
                form,
                saved: false,
                problem: Some(copytrace_service::error::one_line(&error)),
            }),
        )
            .into_response()),
        Err(error) => Err(visitor.not_found_or_failure(error)),
    }
}

/// A holder's signature image, for the profile page and the holder's notices: to those who
/// may see its notices (its own users, staff allowed into notices); another holder's, or one
/// without an image, is 404.
async fn signature_image(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    if visitor.tenant().is_some_and(|own| own != id) {
        return Err(visitor.not_found());
    }
    let image = holders::signature_image_of(state.store.as_ref(), id)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?
        .ok_or_else(|| visitor.not_found())?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, image.content_type),
            (
                axum::http::header::CACHE_CONTROL,
                "private, no-cache".to_owned(),
            ),
        ],
        image.bytes,
    )
        .into_response())
}

/// Stores an uploaded signature image (multipart: `csrf`, `image`); a file that is no PNG or
/// JPEG, or too large, shows the form again with why (400) and changes nothing.
async fn upload_signature_image(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    mut multipart: Multipart,
) -> Result<Response, Response> {
    let shown = visible(&state, &visitor, id).await?;
    let mut csrf = String::new();
    let mut image: Option<Vec<u8>> = None;
    let mut problem = None;
    loop {
        match multipart.next_field().await {
            Ok(Some(field)) => match field.name() {
                Some("csrf") => csrf = field.text().await.unwrap_or_default(),
                Some("image") => match field.bytes().await {
                    Ok(bytes) => image = Some(bytes.to_vec()),
                    Err(error) => problem = Some(error.body_text()),
                },
                _ => {}
            },
            Ok(None) => break,
            Err(error) => {
                problem = Some(error.body_text());
                break;
            }
        }
    }
    visitor.check_form(&csrf)?;
    let stored = match (problem, image) {
        (Some(problem), _) => Err(problem),
        (None, None) => Err(visitor.t.signature_image_missing.to_owned()),
        (None, Some(bytes)) => {
            match holders::set_signature_image_of(state.store.as_ref(), id, Some(bytes), Utc::now())
                .await
            {
                Ok(_) => Ok(()),
                Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
                    Err(copytrace_service::error::one_line(&error))
                }
                Err(error) => return Err(visitor.not_found_or_failure(error)),
            }
        }
    };
    match stored {
        Ok(()) => Ok(Redirect::to(&format!("/holders/{id}/profile?saved=1")).into_response()),
        Err(problem) => Ok((
            axum::http::StatusCode::BAD_REQUEST,
            page(ProfilePage {
                t: visitor.t,
                viewer: visitor.viewer(),
                id,
                signature_image: image_label(&shown),
                form: ProfileForm::of(&shown),
                name: shown.holder.name,
                tab: "profile",
                saved: false,
                problem: Some(problem),
            }),
        )
            .into_response()),
    }
}

#[derive(Deserialize)]
struct RemoveForm {
    #[serde(default)]
    csrf: String,
}

/// Removes a holder's signature image.
async fn remove_signature_image(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<Id>,
    Form(form): Form<RemoveForm>,
) -> Result<Response, Response> {
    visible(&state, &visitor, id).await?;
    visitor.check_form(&form.csrf)?;
    holders::set_signature_image_of(state.store.as_ref(), id, None, Utc::now())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    Ok(Redirect::to(&format!("/holders/{id}/profile?saved=1")).into_response())
}
