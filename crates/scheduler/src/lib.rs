//! Copytrace scheduler: the durable job runner, leader election and cron schedules.
//!
//! Work travels between processes as jobs in the store's durable queue (`copytrace-store`):
//! a crawl, the matching of one page. This crate runs them:
//!
//! * [`worker::run_worker`] claims jobs of the kinds a [`worker::JobHandler`] runs, keeps the
//!   claim's lease alive while the handler works, records the outcome, retries failures with
//!   exponential backoff and jitter ([`backoff`]), and on shutdown finishes or gives back the
//!   job in hand. Delivery is at least once: a worker killed mid-job leaves a lease that runs
//!   out, and another worker takes the job over. Handlers are therefore idempotent.
//! * [`leader::run_as_leader`] runs a task in exactly one process of a deployment (the
//!   scheduler loop), taking over when the leader dies.
//! * [`schedules::fire_due_schedules`] is one scheduler tick: every enabled schedule whose
//!   cron tick ([`cron`]) has come gets its run and job, exactly once across processes, and
//!   ticks missed while the deployment was down are caught up once.
//!
//! Time comes from a [`clock::Clock`] so that tests can run days of schedule in milliseconds.
//! The concrete handlers (what a crawl or a match job does) live in the binary, which is the
//! only place that knows the backends; this crate depends on the store's trait only.

pub mod backoff;
pub mod clock;
pub mod cron;
pub mod leader;
pub mod schedules;
pub mod worker;

pub use clock::{Clock, ManualClock, SystemClock};
pub use worker::{JobHandler, WorkerConfig, WorkerReport, run_worker};
