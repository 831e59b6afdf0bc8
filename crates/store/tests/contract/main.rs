//! The storage contract: what every [`copytrace_store::Store`] backend must do.
//!
//! Each module lists its tests in `contract_tests!`, which runs every test once per backend,
//! each time on a fresh database (see `helpers`). A test function takes only
//! `Arc<dyn Store>`, so it cannot depend on which backend runs it. Tests of one backend's own
//! behaviour (URL forms, files) live in that backend's module.

mod helpers;

mod alerts;
mod batches;
mod captures;
mod catalog;
mod jobs;
mod library;
mod matches;
mod mirrors;
mod notices;
mod pages;
mod postgres;
mod profiles;
mod recrawl;
mod removals;
mod reports;
mod review;
mod runs;
mod schedules;
mod sending;
mod sketches;
mod sqlite;
mod stats;
mod streams;
mod upgrade;
mod users;
