//! The production shape, for real: `copytrace worker` processes sharing a PostgreSQL database
//! and a Redis index, against a generated site on a loopback port. Covers the issue's
//! acceptance: many workers, each page stored once and matched exactly once; a worker killed
//! mid-job; Redis flushed; PostgreSQL restarted under load; and the same exported matches as
//! the embedded SQLite run.
//!
//! Needs the servers `./scripts/test` starts (PostgreSQL binaries and a server, redis-server);
//! run alone with `scripts/with-services cargo test -p copytrace --test production`.

mod processes;
mod services;
mod site;

mod chaos;
mod disk_full;
mod faults;
mod multi_process;
mod schedules;
mod secrets;
mod serve;
