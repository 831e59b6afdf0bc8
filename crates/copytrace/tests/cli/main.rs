//! Integration tests of the `copytrace` command-line contract.
//!
//! Every test runs the real built binary against a fresh temporary SQLite database and, where
//! it crawls, a real HTTP server started inside the test process (the bundled sample piracy
//! site of `copytrace::demo`, or a small site built from the same parts) whose request log
//! proves what the crawler did and did not fetch. The Redis index tests use the real
//! `redis-server` that `./scripts/test` starts (`COPYTRACE_TEST_REDIS_URL`), each under its own
//! key prefix; the PostgreSQL tests use its PostgreSQL cluster (`COPYTRACE_TEST_POSTGRES_URL`),
//! each in a database of its own.

mod alerts;
mod aliases;
mod bad_input;
mod catalog;
mod config;
mod contract;
mod crawl_limits;
mod demo;
mod deploy;
mod evidence;
mod exports;
mod formats;
mod helpers;
mod holders;
mod idempotence;
mod inspect;
mod notices;
mod pipes;
mod postgres_store;
mod quiet;
mod recrawl;
mod redis_index;
mod removal_days;
mod rendered_evidence;
mod rendering;
mod reports;
mod review;
mod schedules;
mod sending;
/// The SMTP server the service's tests share.
#[path = "../../../service/tests/support/mod.rs"]
mod smtp_support;
mod stats;
mod timestamps;
#[path = "../../../service/tests/support/tsa.rs"]
mod tsa;
mod users;
