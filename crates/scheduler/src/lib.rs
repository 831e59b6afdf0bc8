//! Copytrace scheduler: cron crawl schedules, the durable job runner and the daily dedup run.
//!
//! This crate will own the scheduler loop (five-field and seconds cron expressions evaluated in
//! the operator's time zone, missed runs caught up once, one leader across processes), the
//! workers that claim jobs from the store's durable queue, and the daily re-run of dedup of all
//! stored pages against the growing source library. Time is injected through a clock so tests
//! never sleep.
//!
//! Nothing is implemented yet: the foundation issue runs crawl and match in-process from the
//! binary; the schedule and job *records* already live in `copytrace-store`.
