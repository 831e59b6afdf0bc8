//! Copytrace admin web: the axum + askama user interface and JSON API.
//!
//! This crate will own the server-rendered pages (dashboard, works and their infringing pages,
//! side-by-side evidence, sites, crawl schedules, jobs, exports, takedown notices, users) in
//! Chinese and English, the JSON API with its OpenAPI document, authentication (argon2 password
//! hashes, sessions, CSRF tokens) and role checks that keep every rights holder inside their own
//! data.
//!
//! It depends on `copytrace-store` for data and `copytrace-analytics` for reports and never
//! writes SQL itself. Nothing is implemented yet: the foundation issue only fixes its place in
//! the workspace so that later work has an obvious home.
