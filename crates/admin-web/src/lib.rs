//! Copytrace admin web: the axum + askama user interface and JSON API.
//!
//! For now this crate holds the **operations endpoints** every Copytrace process serves
//! ([`ops`]): liveness, readiness and Prometheus metrics, which container health checks, load
//! balancers and monitoring need from the first deployment on.
//!
//! It will own the server-rendered pages (dashboard, works and their infringing pages,
//! side-by-side evidence, sites, crawl schedules, jobs, exports, takedown notices, users) in
//! Chinese and English, the JSON API with its OpenAPI document, authentication (argon2 password
//! hashes, sessions, CSRF tokens) and role checks that keep every rights holder inside their own
//! data. It depends on `copytrace-store` for data and never writes SQL itself.

pub mod ops;
