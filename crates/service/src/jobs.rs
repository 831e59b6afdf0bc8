//! The job kinds of Copytrace, their payloads, and their handlers: what `copytrace worker
//! crawl` and `copytrace worker match` (and `serve` in embedded mode) do with a claimed job.
//!
//! * A **crawl** job ([`CrawlJob`]) crawls its seeds into the page library and enqueues a match
//!   job for every page whose text is new or changed ([`crate::crawl`]).
//! * A **match** job ([`MatchJob`]) matches one page, as it was when the job was enqueued,
//!   against the whole library and records the verdict ([`crate::matching`]).
//! * A **dedup** job ([`DedupJob`], run by match workers, which hold the library) re-checks
//!   known infringing pages for removals and matches every due page ([`crate::dedup`]).
//!
//! Crawl and dedup jobs carry a **run** ([`crate::runs`]). All are idempotent, because delivery
//! is at least once: pages are upserted by URL, a match job is keyed by page and content hash (a
//! second job for the same text is not even created while the first is pending) and skips a
//! page already matched on that text, and recording a page's verdict replaces the previous one.

use std::sync::Arc;

use chrono::Utc;
use copytrace_scheduler::JobHandler;
use copytrace_scheduler::schedules::JobFactory;
use copytrace_scheduler::worker::JobError;
use copytrace_store::{Id, Job, NewJob, RunCounts, RunKind, RunState, Schedule, Store};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::crawl::{crawl_config, crawl_for_run, parse_seeds, vet_seeds};
use crate::dedup::{DedupEnd, DedupJob, run_dedup};
use crate::error::{Context, Result, ServiceError, one_line};
use crate::matching::{MatchEngine, PageOutcome};
use crate::progress::NoProgress;
use crate::runs::{RunTracker, begin_run, end_run, manual_run};
use crate::settings::CrawlSettings;

/// Kind of a crawl job.
pub const CRAWL: &str = "crawl";
/// Kind of a match job.
pub const MATCH: &str = "match";
/// Kind of a dedup job.
pub const DEDUP: &str = "dedup";

/// Attempts of a crawl job before it goes dead (a crawl repeats cheaply: unchanged pages are
/// only touched). Most failed attempts of a crawl are not the crawl's fault: its worker was
/// killed or restarted (a deploy) or the database restarted under it, and a crawl of hours sees
/// several; fault injection killed a crawl after three such faults. Retries back off up to 30
/// minutes apart.
pub const CRAWL_ATTEMPTS: u32 = 8;
/// Attempts of a match job before it goes dead.
pub const MATCH_ATTEMPTS: u32 = 8;
/// Attempts of a dedup job before it goes dead (as many as a crawl, for the same reasons).
pub const DEDUP_ATTEMPTS: u32 = 8;

/// Payload of a crawl job: the seeds and the settings of `copytrace crawl`. A schedule stores
/// the same settings without the seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlJob {
    /// Seed URLs.
    pub seeds: Vec<String>,
    /// Scope and limits.
    #[serde(flatten)]
    pub settings: CrawlSettings,
}

impl CrawlJob {
    /// The seeds, parsed (they were validated when the job was enqueued).
    pub fn seed_urls(&self) -> Result<Vec<Url>> {
        parse_seeds(&self.seeds)
    }
}

/// Payload of a match job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchJob {
    /// The page.
    pub page_id: Id,
    /// The hash of the page text this job matches; a newer text gets a job of its own.
    pub content_hash: String,
}

fn crawl_job(job: &CrawlJob, run_at: chrono::DateTime<Utc>) -> Result<NewJob> {
    Ok(NewJob {
        kind: CRAWL.to_owned(),
        payload: serde_json::to_value(job)?,
        dedup_key: None,
        run_at,
        max_attempts: CRAWL_ATTEMPTS,
    })
}

fn dedup_job(job: &DedupJob, run_at: chrono::DateTime<Utc>) -> Result<NewJob> {
    Ok(NewJob {
        kind: DEDUP.to_owned(),
        payload: serde_json::to_value(job)?,
        dedup_key: None,
        run_at,
        max_attempts: DEDUP_ATTEMPTS,
    })
}

/// How many jobs of each kind are in each state: the queue at a glance.
pub async fn queue_counts(store: &dyn Store) -> Result<Vec<copytrace_store::JobCount>> {
    Ok(store.job_counts().await?)
}

/// Enqueues a crawl job with its (manual) run, its seeds vetted ([`vet_seeds`]); returns the
/// run's and the job's ids.
pub async fn enqueue_crawl(store: &dyn Store, job: &CrawlJob) -> Result<(Id, Id)> {
    vet_seeds(&job.seed_urls()?, &job.settings).await?;
    enqueue_manual_run(store, RunKind::Crawl, crawl_job(job, Utc::now())?).await
}

/// Enqueues a dedup job with its (manual) run; returns the run's and the job's ids.
pub async fn enqueue_dedup(store: &dyn Store, job: &DedupJob) -> Result<(Id, Id)> {
    enqueue_manual_run(store, RunKind::Dedup, dedup_job(job, Utc::now())?).await
}

async fn enqueue_manual_run(store: &dyn Store, kind: RunKind, job: NewJob) -> Result<(Id, Id)> {
    let (run, job) = store.create_run(&manual_run(kind), Some(&job)).await?;
    Ok((
        run,
        job.ok_or_else(|| ServiceError::unavailable("the store created no job"))?,
    ))
}

/// The job a schedule's run needs: a crawl of its seeds with the settings in its config, or a
/// dedup run with the settings in its config.
pub fn job_for_schedule(schedule: &Schedule, run_at: chrono::DateTime<Utc>) -> Result<NewJob> {
    match schedule.kind {
        RunKind::Crawl => {
            let settings: CrawlSettings = serde_json::from_value(schedule.config.clone())
                .context("the schedule's crawl settings are invalid")?;
            let job = CrawlJob {
                seeds: schedule.seeds.clone(),
                settings,
            };
            job.seed_urls()?;
            crawl_job(&job, run_at)
        }
        RunKind::Dedup => {
            let job: DedupJob = serde_json::from_value(schedule.config.clone())
                .context("the schedule's dedup settings are invalid")?;
            dedup_job(&job, run_at)
        }
    }
}

/// The scheduler's [`JobFactory`]: schedules' jobs as [`job_for_schedule`] builds them.
pub struct ScheduleJobs;

impl JobFactory for ScheduleJobs {
    fn job_for(
        &self,
        schedule: &Schedule,
        scheduled_for: chrono::DateTime<Utc>,
    ) -> Result<NewJob, String> {
        job_for_schedule(schedule, scheduled_for).map_err(|e| one_line(&e))
    }
}

/// Enqueues the match job of one page text; while such a job is pending, returns its id.
pub async fn enqueue_match(store: &dyn Store, page_id: Id, content_hash: &str) -> Result<Id> {
    let job = MatchJob {
        page_id,
        content_hash: content_hash.to_owned(),
    };
    Ok(store
        .enqueue_job(&NewJob {
            kind: MATCH.to_owned(),
            payload: serde_json::to_value(&job)?,
            dedup_key: Some(format!("match:{page_id}:{content_hash}")),
            run_at: Utc::now(),
            max_attempts: MATCH_ATTEMPTS,
        })
        .await?)
}

/// Enqueues a match job for every page due for matching (new or changed text, or every page
/// after the library changed). Pages with a pending job are not enqueued twice. Returns how
/// many due pages were seen.
pub async fn enqueue_due_matches(store: &dyn Store) -> Result<u64> {
    const BATCH: u32 = 1000;
    let mut after = 0;
    let mut seen = 0;
    loop {
        let due = store.due_page_ids(after, BATCH).await?;
        let Some(&(last, _)) = due.last() else {
            return Ok(seen);
        };
        for (page_id, hash) in &due {
            enqueue_match(store, *page_id, hash).await?;
        }
        seen += due.len() as u64;
        after = last;
    }
}

/// Queues the alerts of what a run found (sent by crawl workers). A run's work is done and
/// recorded by then, so failing to queue them only logs: the next run queues them again.
async fn enqueue_alerts(store: &dyn Store) {
    if let Err(error) = crate::alerts::enqueue(store).await {
        tracing::warn!(error = %one_line(&error), "could not queue the alerts job");
    }
}

fn payload<T: serde::de::DeserializeOwned>(job: &Job) -> Result<T, JobError> {
    serde_json::from_value(job.payload.clone())
        .map_err(|e| format!("malformed {} job payload: {e}", job.kind).into())
}

fn job_error(error: &ServiceError) -> JobError {
    one_line(error).into()
}

// ----- crawl -----

/// Runs crawl jobs.
pub struct CrawlJobs {
    store: Arc<dyn Store>,
}

impl CrawlJobs {
    /// A handler storing into `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }
}

#[async_trait::async_trait]
impl JobHandler for CrawlJobs {
    fn kinds(&self) -> Vec<String> {
        vec![CRAWL.to_owned()]
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        let crawl: CrawlJob = payload(job)?;
        let seeds = crawl.seed_urls().map_err(|e| job_error(&e))?;
        let store = self.store.as_ref();
        let Some(run) = begin_run(store, job, RunKind::Crawl)
            .await
            .map_err(|e| job_error(&e))?
        else {
            return Ok("the run was cancelled or has ended: nothing to do".to_owned());
        };
        let config = crawl_config(store, &seeds, &crawl.settings)
            .await
            .map_err(|e| job_error(&e))?;
        let done = crawl_for_run(
            self.store.clone(),
            run.id,
            &seeds,
            &config,
            true,
            Arc::new(NoProgress),
        )
        .await;
        // A crawl none of whose seeds could be crawled failed for good: retrying would fetch
        // the same refused or unreachable seeds.
        let ended = end_run(
            store,
            run.id,
            done.run_outcome(),
            &done.run_counts,
            &done.stats,
            job.attempts >= job.max_attempts || done.seeds_failed.is_some(),
        )
        .await;
        let ended = match ended {
            Err(reason) if done.seeds_failed.is_some() => {
                format!("run {} failed: {reason}", run.id)
            }
            ended => ended?,
        };
        // Pages stored by an earlier, interrupted attempt of this crawl (or by `copytrace crawl`)
        // may still lack their match job: the sweep enqueues every due page once.
        let due = enqueue_due_matches(store)
            .await
            .map_err(|e| job_error(&e))?;
        enqueue_alerts(store).await;
        let pages = &done.pages;
        Ok(format!(
            "{ended}; {} stored, {} new or changed, {} not modified, {} failed; {due} page(s) \
             due for matching",
            pages.stored(),
            pages.changed(),
            pages.not_modified,
            pages.failures
        ))
    }
}

// ----- match -----

/// Runs match and dedup jobs over one [`MatchEngine`].
pub struct MatchJobs {
    engine: Arc<MatchEngine>,
}

impl MatchJobs {
    /// A handler matching with `engine`.
    pub fn new(engine: Arc<MatchEngine>) -> Self {
        Self { engine }
    }

    async fn run_match(&self, job: &MatchJob) -> Result<String> {
        let page = job.page_id;
        Ok(
            match self.engine.match_page(page, &job.content_hash).await? {
                PageOutcome::Gone => format!("page {page} no longer exists"),
                PageOutcome::Changed => {
                    format!("page {page} changed since; its newer text has a job of its own")
                }
                PageOutcome::AlreadyMatched => {
                    format!("page {page} already matched on this text")
                }
                PageOutcome::Recorded {
                    url,
                    alias_of: Some(of),
                    ..
                } => format!("page {page} ({url}) is an alias of page {of}: no matches of its own"),
                PageOutcome::Recorded {
                    url,
                    matches,
                    verdict,
                    alias_of: None,
                    mirror_of,
                } => format!(
                    // The line ends with the match count whatever the verdict's origin: tests
                    // and log readers count verdicts by it.
                    "page {page} ({url}){}: {} removed, {} reopened, {matches} match(es)",
                    match mirror_of {
                        Some(of) => format!(", the verdict of page {of} with the same text"),
                        None => String::new(),
                    },
                    verdict.removed,
                    verdict.reopened,
                ),
            },
        )
    }

    async fn run_dedup(&self, job: &Job) -> Result<String, JobError> {
        let dedup: DedupJob = payload(job)?;
        let store = self.engine.store().as_ref();
        let Some(run) = begin_run(store, job, RunKind::Dedup)
            .await
            .map_err(|e| job_error(&e))?
        else {
            return Ok("the run was cancelled or has ended: nothing to do".to_owned());
        };
        // A retried run starts its passes over: counting from zero keeps its figures true.
        let mut counts = RunCounts::default();
        let mut tracker = RunTracker::new(run.id);
        let outcome = run_dedup(&self.engine, &mut tracker, &dedup, &mut counts, &NoProgress)
            .await
            .map(|end| match end {
                DedupEnd::Finished => RunState::Succeeded,
                DedupEnd::Cancelled => RunState::Cancelled,
            })
            .map_err(|e| one_line(&e));
        let ended = end_run(
            store,
            run.id,
            outcome,
            &counts,
            &serde_json::Value::Null,
            job.attempts >= job.max_attempts,
        )
        .await?;
        enqueue_alerts(store).await;
        Ok(ended)
    }
}

#[async_trait::async_trait]
impl JobHandler for MatchJobs {
    fn kinds(&self) -> Vec<String> {
        vec![MATCH.to_owned(), DEDUP.to_owned()]
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        if job.kind == DEDUP {
            return self.run_dedup(job).await;
        }
        let payload: MatchJob = payload(job)?;
        self.run_match(&payload).await.map_err(|e| job_error(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crawl_job_payload_is_the_seeds_beside_the_settings() {
        let job = CrawlJob {
            seeds: vec!["http://pirate.example/".into()],
            settings: CrawlSettings {
                max_pages: 5,
                ..CrawlSettings::default()
            },
        };
        let value = serde_json::to_value(&job).unwrap();
        assert_eq!(value["seeds"][0], "http://pirate.example/");
        assert_eq!(value["max_pages"], 5);
        assert_eq!(value["conditional"], true);
        let back: CrawlJob = serde_json::from_value(value).unwrap();
        assert_eq!(back, job);
    }
}
