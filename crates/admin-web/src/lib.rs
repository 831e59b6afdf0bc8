//! Copytrace admin web: the axum + askama user interface and JSON API.
//!
//! It holds the **operations endpoints** every Copytrace process serves ([`ops`]: liveness,
//! readiness and Prometheus metrics) and the **admin web** `serve` adds beside them ([`web`]):
//! login with CSRF tokens, the per-account and per-address limiter and database sessions
//! (`copytrace_service::accounts`), Chinese and English, and the dashboard, works, work and
//! match pages (passages side by side, differences marked), scoped to a rights holder's own
//! data. Templates live in the repository's `web/templates/web/` and are compiled in. The web
//! calls the service layer and never writes SQL.
//!
//! Still to come: sites, review, notices, schedules, runs, exports, library and user pages,
//! the JSON API with its OpenAPI document.

pub mod ops;
pub mod web;
