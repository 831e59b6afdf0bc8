//! The OpenAPI document, derived by utoipa from the handlers' `#[utoipa::path]` attributes and
//! the types of [`super::schema`], and served (without credentials) at `/api/openapi.json`.

use std::sync::OnceLock;

use axum::Json;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{files, holders, library, operations, reviews, sending, sites};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Copytrace API",
        description = "The admin web's resources as JSON, with the web's roles and tenancy. \
                       Authenticate with `Authorization: Bearer ct_…` (a token made by \
                       `copytrace user token add`) or the admin web's session cookie; with the \
                       cookie, POST requests carry the session's CSRF token in `X-CSRF-Token`. \
                       Errors are `{\"error\": \"…\"}`.",
    ),
    paths(
        document,
        operations::me,
        operations::tokens,
        library::works,
        library::work,
        reviews::matches,
        reviews::match_detail,
        reviews::decide,
        library::work_stats,
        library::site_stats,
        library::daily_stats,
        reviews::notices,
        reviews::notice,
        reviews::create_notice,
        reviews::notice_status,
        operations::schedules,
        operations::create_schedule,
        operations::pause_schedule,
        operations::resume_schedule,
        operations::run_schedule,
        operations::delete_schedule,
        operations::runs,
        holders::profile,
        holders::set_profile,
        holders::signature_image,
        holders::set_signature_image,
        holders::remove_signature_image,
        holders::licences,
        holders::add_licence,
        holders::remove_licence,
        holders::alerts_list,
        holders::add_alert,
        holders::remove_alert,
        sites::sites_list,
        sites::contacts_list,
        sites::add_contact,
        sites::remove_contact,
        sending::send,
        sending::send_drafts,
        sending::history,
        files::export,
        files::evidence,
        files::upload,
        files::import,
        library::holder_stats,
        library::time_to_piracy,
    ),
    modifiers(&Credentials),
    security(("bearer" = []), ("session" = [])),
    tags(
        (name = "account", description = "The caller and its API tokens"),
        (name = "works", description = "The library's works (a rights holder's own)"),
        (name = "matches", description = "Copies found, their evidence, and decisions on them"),
        (name = "statistics", description = "Copies per work, per site and per day"),
        (name = "notices", description = "Takedown notices: writing, mailing, moving, history"),
        (name = "holders", description = "A rights holder's profile, licensed hosts and alerts (its own, or any for admins)"),
        (name = "sites", description = "Sites with their copies and notices, and the contacts notices are mailed to"),
        (name = "crawls", description = "Crawl schedules and runs"),
        (name = "meta", description = "This document"),
    )
)]
struct ApiDoc;

/// The two ways to authenticate, as security schemes.
struct Credentials;

impl Modify for Credentials {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("ct_ followed by 64 hex digits")
                    .description(Some(
                        "A per-user API token: `copytrace user token add EMAIL --name NAME`",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::web::SESSION_COOKIE,
                "The admin web's session; state-changing requests also send X-CSRF-Token",
            ))),
        );
    }
}

/// The OpenAPI document of the API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// This document, as JSON. Public: it describes the API, and holds nothing of anyone's data.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json")),
)]
pub(super) async fn document() -> Response {
    static DOCUMENT: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    Json(DOCUMENT.get_or_init(openapi)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_describes_every_route_and_only_those() {
        let doc = openapi();
        let mut described: Vec<(String, String)> = Vec::new();
        for (path, item) in &doc.paths.paths {
            for (method, operation) in [
                ("get", &item.get),
                ("post", &item.post),
                ("put", &item.put),
                ("delete", &item.delete),
                ("patch", &item.patch),
            ] {
                if operation.is_some() {
                    described.push((method.to_owned(), path.clone()));
                }
            }
        }
        described.sort();
        let mut served: Vec<(String, String)> = super::super::ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        served.sort();
        assert_eq!(described, served);
    }
}
