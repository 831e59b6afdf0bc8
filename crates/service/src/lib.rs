//! Copytrace's operations, each with one home.
//!
//! The CLI, the job workers, the scheduler and the admin web all do the same things: add works
//! to the library, crawl, take in crawled pages, match pages and record verdicts, run the daily
//! dedup, manage schedules and runs, export. Each of these lives here once, as plain async
//! functions over a [`Store`](copytrace_store::Store) (and, for matching, a
//! [`MatchEngine`]), so a change to a step is made in one place and every
//! caller gets it. Callers differ only in how they present the result:
//!
//! * progress is reported through a [`Progress`] the caller hands in (the
//!   CLI draws bars, jobs save counts into their run, the web will stream it), never printed;
//! * errors are one [`ServiceError`] with a cause chain and a
//!   [`kind`](error::ServiceError::kind) (not found, invalid, internal);
//! * settings are typed once ([`CrawlSettings`] derives both `clap` and
//!   serde, so a flag, a queued job and a schedule cannot disagree).
//!
//! Following one crawled page to its match crosses each crate once, in one direction:
//! `copytrace-crawler` hands the page to [`intake::PageIntake`] (store it, compare with known
//! copies, queue its match job), a match job runs [`matching::MatchEngine::match_page`]
//! (`copytrace-matcher` over the index, verdict into `copytrace-store`).
//!
//! This crate chooses no backend and reads no environment: the binary opens the store and names
//! the index ([`index::IndexSource`]).

pub mod accounts;
pub mod alerts;
pub mod alias_checks;
pub mod aliases;
pub mod catalog;
pub mod chapters;
pub mod contacts;
pub mod crawl;
pub mod dedup;
pub mod error;
pub mod evidence;
pub mod export;
pub mod followup;
pub mod holders;
pub mod index;
pub mod inspect;
pub mod intake;
pub mod jobs;
pub mod library;
pub mod matching;
pub mod notices;
pub mod progress;
pub mod recrawl;
pub mod reports;
pub mod review;
pub mod runs;
pub mod schedules;
pub mod sending;
pub mod settings;
pub mod sites;
pub mod stats;
pub mod textfile;
pub mod timestamp;
pub mod workfile;

pub use error::{ErrorKind, Result, ServiceError};
pub use matching::MatchEngine;
pub use progress::{NoProgress, Progress};
pub use settings::CrawlSettings;

/// A URL (of a database or a Redis server) with any password replaced, safe to print and log.
/// A comma-separated list (the seed nodes of a Redis Cluster) is redacted URL by URL.
pub fn redact(url: &str) -> String {
    if url.contains(',') {
        return url.split(',').map(redact_one).collect::<Vec<_>>().join(",");
    }
    redact_one(url)
}

fn redact_one(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_in_every_url_of_a_cluster_list() {
        let shown = redact("redis://:s3cret@a:7000,redis://:s3cret@b:7001");
        assert_eq!(shown, "redis://:***@a:7000,redis://:***@b:7001");
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://app:secret@db/copytrace"),
            "postgres://app:***@db/copytrace"
        );
        assert_eq!(
            redact("redis://:secret@cache:6379/0"),
            "redis://:***@cache:6379/0"
        );
        assert_eq!(redact("sqlite://copytrace.db"), "sqlite://copytrace.db");
    }
}
