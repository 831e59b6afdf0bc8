//! Copytrace admin web: the axum + askama user interface.
//!
//! It holds the **operations endpoints** every Copytrace process serves ([`ops`]: liveness,
//! readiness and Prometheus metrics) and the **admin web** `serve` adds beside them ([`web`]):
//! login with CSRF tokens, the per-account and per-address limiter and database sessions
//! (`copytrace_service::accounts`), Chinese and English, and pages for every role (dashboard,
//! works, matches with their evidence side by side, the review queue, notices, statistics and
//! exports, schedules and runs, the library, users), each behind a role check
//! ([`web::Area`]) and scoped to a rights holder's own data. Templates live in the
//! repository's `web/templates/web/` and are compiled in. The web calls the service layer and
//! never writes SQL.
//!
//! The **JSON API** ([`api`]) serves the same resources under `/api/v1/` with the same roles and
//! tenancy, authenticated by the session cookie or a per-user API token, and describes itself in
//! an OpenAPI document at `/api/openapi.json`.

pub mod api;
pub mod ops;
pub mod web;
