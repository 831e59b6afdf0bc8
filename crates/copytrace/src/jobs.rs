//! The job kinds of Copytrace and their handlers: what `copytrace worker crawl` and
//! `copytrace worker match` do with a claimed job.
//!
//! * A **crawl** job ([`CrawlJob`]) crawls its seeds into the page library and enqueues a match
//!   job for every page whose text is new or changed.
//! * A **match** job ([`MatchJob`]) matches one page, as it was when the job was enqueued,
//!   against the whole library and records the verdict.
//! * A **dedup** job ([`DedupJob`], run by match workers, which hold the library) re-checks
//!   known infringing pages for removals and matches every due page (see [`crate::dedup`]).
//!
//! Crawl and dedup jobs carry a **run** (`copytrace runs list`): its state, counts and, for a
//! crawl, the crawler's statistics are saved as it goes, and a cancellation request stops it.
//!
//! Both are idempotent, because delivery is at least once: pages are upserted by URL, a match
//! job is keyed by page and content hash (a second job for the same text is not even created
//! while the first is pending) and skips a page already matched on that text, and recording a
//! page's verdict replaces the previous one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Utc;
use copytrace_crawler::{
    CrawlConfig, CrawlError, CrawlProgress, CrawlStats, FetchedPage, PageSink,
};
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{IndexError, MatchConfig, Matcher, WorkMatch};
use copytrace_scheduler::JobHandler;
use copytrace_scheduler::schedules::JobFactory;
use copytrace_scheduler::worker::JobError;
use copytrace_store::{
    Id, Job, NewJob, NewRun, Run, RunCounts, RunKind, RunState, RunTrigger, Schedule, Store,
    WriteOutcome,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use url::Url;

use crate::dedup::{self, DEDUP, DEDUP_ATTEMPTS, DedupEnd, DedupJob};
use crate::pipeline;
use crate::recrawl::{self, Recrawl};

/// Kind of a crawl job.
pub const CRAWL: &str = "crawl";
/// Kind of a match job.
pub const MATCH: &str = "match";

/// Attempts of a crawl job before it goes dead (a crawl repeats cheaply: unchanged pages are
/// only touched).
pub const CRAWL_ATTEMPTS: u32 = 3;
/// Attempts of a match job before it goes dead.
pub const MATCH_ATTEMPTS: u32 = 8;

/// Payload of a crawl job: the seeds and the limits of `copytrace crawl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlJob {
    /// Seed URLs.
    pub seeds: Vec<String>,
    /// Page requests at most.
    pub max_pages: usize,
    /// Link depth limit.
    pub depth: Option<u32>,
    /// Allow loopback and private addresses.
    pub allow_private_addresses: bool,
    /// Requests in flight.
    pub concurrency: usize,
    /// Per-request timeout in seconds.
    pub timeout_secs: u64,
    /// User-Agent header.
    #[serde(default = "default_user_agent")]
    pub user_agent: String,
    /// Minimum seconds between two requests to one host.
    #[serde(default)]
    pub delay_secs: f64,
    /// Requests in flight to one host.
    #[serde(default = "default_per_host")]
    pub per_host: usize,
    /// Retries of a failed request.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Read sitemaps.
    #[serde(default)]
    pub sitemaps: bool,
    /// Only follow links matching one of these regular expressions.
    #[serde(default)]
    pub include: Vec<String>,
    /// Never follow links matching one of these regular expressions.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Further hosts to follow links to.
    #[serde(default)]
    pub allow_host: Vec<String>,
    /// Send the stored validators of known pages back, so unchanged ones answer 304 (see
    /// [`crate::recrawl`] for which pages).
    #[serde(default = "yes")]
    pub conditional: bool,
}

fn yes() -> bool {
    true
}

fn default_user_agent() -> String {
    copytrace_crawler::DEFAULT_USER_AGENT.to_owned()
}

fn default_per_host() -> usize {
    CrawlConfig::default().per_host_concurrency
}

fn default_retries() -> u32 {
    CrawlConfig::default().max_retries
}

impl CrawlJob {
    /// The crawler configuration this job asks for.
    pub fn config(&self) -> CrawlConfig {
        CrawlConfig {
            max_pages: self.max_pages,
            max_depth: self.depth,
            allow_private_addresses: self.allow_private_addresses,
            concurrency: self.concurrency.max(1),
            request_timeout: Duration::from_secs(self.timeout_secs.max(1)),
            user_agent: self.user_agent.clone(),
            host_delay: Duration::try_from_secs_f64(self.delay_secs).unwrap_or_default(),
            per_host_concurrency: self.per_host.max(1),
            max_retries: self.retries,
            sitemaps: self.sitemaps,
            include_patterns: self.include.clone(),
            exclude_patterns: self.exclude.clone(),
            allowed_hosts: self.allow_host.clone(),
            ..CrawlConfig::default()
        }
    }

    /// The crawler configuration with the validators of the pages a conditional re-crawl of the
    /// seeds' sites sends back (none when the job is not conditional).
    pub async fn config_with_validators(
        &self,
        store: &dyn Store,
        seeds: &[Url],
    ) -> Result<CrawlConfig> {
        let mut config = self.config();
        if self.conditional {
            let follows_links = !(config.max_depth == Some(0) && config.max_page_chain == 0);
            config.validators = recrawl::crawl_validators(store, seeds, follows_links).await?;
        }
        Ok(config)
    }

    /// The seeds, parsed (they were validated when the job was enqueued).
    pub fn seed_urls(&self) -> Result<Vec<Url>> {
        self.seeds
            .iter()
            .map(|s| Url::parse(s).with_context(|| format!("invalid seed URL {s:?}")))
            .collect()
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

/// Enqueues a crawl job with its (manual) run; returns the run's and the job's ids.
pub async fn enqueue_crawl(store: &dyn Store, job: &CrawlJob) -> Result<(Id, Id)> {
    enqueue_manual_run(store, RunKind::Crawl, crawl_job(job, Utc::now())?).await
}

/// Enqueues a dedup job with its (manual) run; returns the run's and the job's ids.
pub async fn enqueue_dedup(store: &dyn Store, job: &DedupJob) -> Result<(Id, Id)> {
    enqueue_manual_run(store, RunKind::Dedup, dedup_job(job, Utc::now())?).await
}

async fn enqueue_manual_run(store: &dyn Store, kind: RunKind, job: NewJob) -> Result<(Id, Id)> {
    let (run, job) = store.create_run(&manual_run(kind), Some(&job)).await?;
    Ok((run, job.context("the store created no job")?))
}

/// A run started by a person now.
pub fn manual_run(kind: RunKind) -> NewRun {
    NewRun {
        kind,
        schedule_id: None,
        trigger: RunTrigger::Manual,
        scheduled_for: None,
        created_at: Utc::now(),
    }
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

/// The job a schedule's run needs: a crawl of its seeds with the limits in its config, or a
/// dedup run with the settings in its config.
pub fn job_for_schedule(schedule: &Schedule, run_at: chrono::DateTime<Utc>) -> Result<NewJob> {
    match schedule.kind {
        RunKind::Crawl => {
            let mut config = schedule.config.clone();
            let object = config
                .as_object_mut()
                .context("the schedule's crawl settings are not a JSON object")?;
            object.insert("seeds".to_owned(), serde_json::json!(schedule.seeds));
            let job: CrawlJob = serde_json::from_value(config)
                .context("the schedule's crawl settings are invalid")?;
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
        job_for_schedule(schedule, scheduled_for).map_err(|e| format!("{e:#}"))
    }
}

/// The crawler's statistics as stored with a crawl run.
pub fn crawl_stats_json(stats: &CrawlStats) -> serde_json::Value {
    serde_json::json!({
        "requests": stats.requests,
        "retries": stats.retries,
        "bytes": stats.bytes,
        "pages": stats.pages,
        "not_modified": stats.not_modified,
        "disallowed_by_robots": stats.disallowed_by_robots,
        "errors": stats
            .errors
            .iter()
            .map(|(kind, count)| (kind.to_string(), *count))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "link_limits": stats.link_limits,
        "sitemap_urls": stats.sitemap_urls,
        "elapsed_secs": stats.elapsed.as_secs_f64(),
        "pages_per_second": stats.pages_per_second(),
    })
}

/// The run a claimed crawl or dedup job works on, started; `None` when there is nothing to do
/// (the run was cancelled or already ended). A job enqueued without a run (by an older
/// version) gets a manual one.
async fn begin_run(store: &dyn Store, job: &Job, kind: RunKind) -> Result<Option<Run>> {
    let now = Utc::now();
    let run = match store.run_for_job(job.id).await? {
        Some(run) => store.start_run(run.id, now).await?,
        None => {
            let (id, _) = store.create_run(&manual_run(kind), None).await?;
            store.get_run(id).await?
        }
    };
    if run.state == RunState::Running && run.cancel_requested {
        store
            .finish_run(
                run.id,
                RunState::Cancelled,
                &run.counts,
                &run.stats,
                None,
                now,
            )
            .await?;
        return Ok(None);
    }
    Ok((run.state == RunState::Running).then_some(run))
}

/// Records how a run's attempt ended. A failure ends the run only on the job's last attempt;
/// before that the run stays running and the retry picks it up.
async fn end_run(
    store: &dyn Store,
    job: &Job,
    run_id: Id,
    outcome: Result<RunState, String>,
    counts: &RunCounts,
    stats: &serde_json::Value,
) -> Result<String, JobError> {
    let now = Utc::now();
    match outcome {
        Ok(state) => {
            store
                .finish_run(run_id, state, counts, stats, None, now)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "run {run_id} {}: {} page(s) checked, {} new match(es), {} removed, {} error(s)",
                state.as_str(),
                counts.pages_checked,
                counts.new_matches,
                counts.matches_removed,
                counts.errors
            ))
        }
        Err(error) => {
            let result = if job.attempts >= job.max_attempts {
                store
                    .finish_run(run_id, RunState::Failed, counts, stats, Some(&error), now)
                    .await
            } else {
                store
                    .update_run_progress(run_id, counts, stats)
                    .await
                    .map(|_| ())
            };
            if let Err(store_error) = result {
                tracing::warn!(run = run_id, %store_error, "cannot record the run's failure");
            }
            Err(JobError::from(error))
        }
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

// ----- crawl -----

/// Runs crawl jobs.
pub struct CrawlHandler {
    store: Arc<dyn Store>,
}

impl CrawlHandler {
    /// A handler storing into `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }
}

/// Stores pages and enqueues the match job of each new or changed one, records what became of
/// known infringing pages ([`crate::recrawl`]); stops the crawl when its run is cancelled.
struct QueueingSink {
    store: Arc<dyn Store>,
    stored: usize,
    changed: usize,
    not_modified: usize,
    failures: usize,
    recrawl: Recrawl,
    cancelled: Arc<AtomicBool>,
    latest: Arc<StdMutex<Option<CrawlStats>>>,
}

/// The error a sink stops a cancelled crawl with.
const CANCELLED: &str = "the run was cancelled";

#[async_trait::async_trait]
impl PageSink for QueueingSink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(CANCELLED.into());
        }
        let page = recrawl::new_page(page);
        let write = self.store.upsert_page(&page).await?;
        self.stored += 1;
        if write.outcome == WriteOutcome::Unchanged {
            self.recrawl
                .unchanged(&page.url, page.http_status)
                .await
                .map_err(|e| format!("{e:#}"))?;
        } else {
            self.changed += 1;
            enqueue_match(self.store.as_ref(), write.id, &page.content_hash)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    async fn not_modified(&mut self, url: &Url) {
        self.not_modified += 1;
        if let Err(error) = self.recrawl.not_modified(url).await {
            tracing::warn!(%url, "cannot record a 304: {error:#}");
        }
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        self.failures += 1;
        tracing::debug!(%url, %error, "crawl failure");
        if let Err(store_error) = self.recrawl.failure(url, error).await {
            tracing::warn!(%url, "cannot record the failure of a known copy: {store_error:#}");
        }
    }

    fn progress(&mut self, progress: &CrawlProgress) {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(progress.stats.clone());
    }
}

/// A crawl run's counts from the crawler's statistics.
pub fn crawl_counts(stats: &CrawlStats) -> RunCounts {
    RunCounts {
        pages_checked: stats.pages as u64,
        new_matches: 0,
        matches_removed: 0,
        errors: stats.failed() as u64,
    }
}

#[async_trait::async_trait]
impl JobHandler for CrawlHandler {
    fn kinds(&self) -> Vec<String> {
        vec![CRAWL.to_owned()]
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        let crawl: CrawlJob = serde_json::from_value(job.payload.clone())
            .map_err(|e| format!("malformed crawl job payload: {e}"))?;
        let seeds = crawl.seed_urls().map_err(|e| e.to_string())?;
        let store = self.store.as_ref();
        let Some(run) = begin_run(store, job, RunKind::Crawl)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok("the run was cancelled or has ended: nothing to do".to_owned());
        };
        let cancelled = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(StdMutex::new(None::<CrawlStats>));
        let config = crawl
            .config_with_validators(store, &seeds)
            .await
            .map_err(|e| format!("{e:#}"))?;
        let mut sink = QueueingSink {
            store: self.store.clone(),
            stored: 0,
            changed: 0,
            not_modified: 0,
            failures: 0,
            recrawl: Recrawl::new(self.store.clone(), Some(run.id)),
            cancelled: cancelled.clone(),
            latest: latest.clone(),
        };
        // Saves the counts every few seconds and hears cancellation requests.
        let poller = {
            let store = self.store.clone();
            let cancelled = cancelled.clone();
            let run_id = run.id;
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    let stats = latest.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let Some(stats) = stats else { continue };
                    let counts = crawl_counts(&stats);
                    match store
                        .update_run_progress(run_id, &counts, &crawl_stats_json(&stats))
                        .await
                    {
                        Ok(true) => {
                            cancelled.store(true, Ordering::Relaxed);
                            return;
                        }
                        Ok(false) => {}
                        Err(error) => tracing::warn!(run = run_id, %error, "cannot save progress"),
                    }
                }
            })
        };
        let result = copytrace_crawler::crawl(&config, &seeds, &mut sink).await;
        poller.abort();
        let (outcome, stats) = match result {
            Ok(report) => (Ok(RunState::Succeeded), report.stats),
            Err(CrawlError::Sink(_)) if cancelled.load(Ordering::Relaxed) => {
                let stats = sink
                    .latest
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                    .unwrap_or_default();
                (Ok(RunState::Cancelled), stats)
            }
            Err(error) => (
                Err(format!("crawl aborted: {error}")),
                CrawlStats::default(),
            ),
        };
        let mut counts = crawl_counts(&stats);
        counts.matches_removed = sink.recrawl.removed;
        let ended = end_run(
            store,
            job,
            run.id,
            outcome,
            &counts,
            &crawl_stats_json(&stats),
        )
        .await?;
        // Pages stored by an earlier, interrupted attempt of this crawl (or by `copytrace crawl`)
        // may still lack their match job: the sweep enqueues every due page once.
        let due = enqueue_due_matches(store)
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{ended}; {} stored, {} new or changed, {} not modified, {} failed; {due} page(s) \
             due for matching",
            sink.stored, sink.changed, sink.not_modified, sink.failures
        ))
    }
}

// ----- match -----

/// Where the window index of a match worker lives.
#[derive(Debug, Clone)]
pub enum IndexSource {
    /// Built in memory from the store, again whenever the library changes.
    Memory,
    /// The shared Redis index (`copytrace index rebuild` fills it).
    Redis {
        /// Redis URL.
        url: String,
        /// Key prefix.
        prefix: String,
    },
}

/// A matcher over one of the index kinds.
enum LoadedMatcher {
    Memory(Matcher),
    Redis(Matcher<RedisIndex>),
}

impl LoadedMatcher {
    fn match_text(&self, text: &str) -> Result<Vec<WorkMatch>, IndexError> {
        match self {
            LoadedMatcher::Memory(m) => m.match_text(text),
            LoadedMatcher::Redis(m) => m.match_text(text),
        }
    }

    /// Fails unless the shared index is still the one this matcher was loaded for: a flushed
    /// or half-rebuilt Redis would otherwise answer "no candidates" and the page would be
    /// recorded as clean.
    fn check_index(&self, library: &str) -> Result<()> {
        let LoadedMatcher::Redis(matcher) = self else {
            return Ok(());
        };
        let index = matcher.index();
        match index.source_digest()? {
            Some(found) if found == library => Ok(()),
            Some(_) => bail!(
                "the Redis index under {:?} no longer matches the library: run `copytrace index rebuild`",
                index.prefix()
            ),
            None => bail!(
                "the Redis index under {:?} is empty or being rebuilt: run `copytrace index rebuild`",
                index.prefix()
            ),
        }
    }
}

/// The matcher in use and the library state it reflects.
struct Loaded {
    library: String,
    matcher: Arc<LoadedMatcher>,
    checked: Instant,
}

/// Runs match jobs, reloading the library when it changes.
pub struct MatchHandler {
    store: Arc<dyn Store>,
    source: IndexSource,
    config: MatchConfig,
    loaded: Mutex<Option<Loaded>>,
    /// How often the library is checked for changes.
    recheck: Duration,
}

impl MatchHandler {
    /// A handler matching with `config` over the index in `source`.
    pub fn new(store: Arc<dyn Store>, source: IndexSource, config: MatchConfig) -> Self {
        Self {
            store,
            source,
            config,
            loaded: Mutex::new(None),
            recheck: Duration::from_secs(2),
        }
    }

    /// Loads the matcher now (at start, so the first job does not pay for it and a broken
    /// index is reported before any job is claimed).
    pub async fn preload(&self) -> Result<()> {
        self.current().await.map(|_| ())
    }

    /// The matcher for the library as it is now.
    async fn current(&self) -> Result<(String, Arc<LoadedMatcher>)> {
        let mut loaded = self.loaded.lock().await;
        if let Some(l) = loaded.as_mut()
            && l.checked.elapsed() < self.recheck
        {
            return Ok((l.library.clone(), l.matcher.clone()));
        }
        let library = pipeline::library_digest(self.store.as_ref()).await?;
        if let Some(l) = loaded.as_mut()
            && l.library == library
        {
            l.checked = Instant::now();
            return Ok((l.library.clone(), l.matcher.clone()));
        }
        tracing::info!("loading the library for matching");
        let matcher = match &self.source {
            IndexSource::Memory => LoadedMatcher::Memory(
                pipeline::load_matcher(self.store.as_ref(), self.config).await?,
            ),
            IndexSource::Redis { url, prefix } => {
                let index = RedisIndex::connect(url, prefix, self.config.max_distance)
                    .with_context(|| {
                        format!(
                            "cannot open the Redis index at {}",
                            crate::backend::redact(url)
                        )
                    })?;
                LoadedMatcher::Redis(
                    pipeline::load_redis_matcher(self.store.as_ref(), index, self.config).await?,
                )
            }
        };
        let matcher = Arc::new(matcher);
        *loaded = Some(Loaded {
            library: library.clone(),
            matcher: matcher.clone(),
            checked: Instant::now(),
        });
        Ok((library, matcher))
    }

    /// Matches a text against the library as it is now. Fails, rather than answering "no
    /// match", when the shared index is not the library's (flushed, stale, being rebuilt).
    pub async fn match_text(&self, text: &str) -> Result<Vec<WorkMatch>> {
        let (library, matcher) = self.current().await?;
        let text = text.to_owned();
        tokio::task::spawn_blocking(move || -> Result<Vec<WorkMatch>> {
            matcher.check_index(&library)?;
            let found = matcher.match_text(&text)?;
            // Checked again: the index must not have been flushed while we read it.
            matcher.check_index(&library)?;
            Ok(found)
        })
        .await
        .context("the matching task panicked")?
    }

    /// Runs a dedup job: its run's removal checks and matching (see [`crate::dedup`]).
    async fn run_dedup(&self, job: &Job) -> Result<String, JobError> {
        let payload: DedupJob = serde_json::from_value(job.payload.clone())
            .map_err(|e| format!("malformed dedup job payload: {e}"))?;
        let store = self.store.as_ref();
        let Some(run) = begin_run(store, job, RunKind::Dedup)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok("the run was cancelled or has ended: nothing to do".to_owned());
        };
        // A retried run starts its passes over: counting from zero keeps its figures true.
        let mut counts = RunCounts::default();
        let outcome = dedup::run_dedup(store, self, run.id, &payload, &mut counts)
            .await
            .map(|end| match end {
                DedupEnd::Finished => RunState::Succeeded,
                DedupEnd::Cancelled => RunState::Cancelled,
            })
            .map_err(|e| format!("{e:#}"));
        end_run(
            store,
            job,
            run.id,
            outcome,
            &counts,
            &serde_json::Value::Null,
        )
        .await
    }

    async fn run_match(&self, job: &MatchJob) -> Result<String> {
        let page = match self.store.get_page(job.page_id).await {
            Ok(page) => page,
            Err(copytrace_store::StoreError::NotFound(_)) => {
                return Ok(format!("page {} no longer exists", job.page_id));
            }
            Err(error) => return Err(error.into()),
        };
        if page.content_hash != job.content_hash {
            return Ok(format!(
                "page {} changed since; its newer text has a job of its own",
                page.id
            ));
        }
        if page.matched_hash.as_deref() == Some(job.content_hash.as_str()) {
            return Ok(format!("page {} already matched on this text", page.id));
        }
        let found = self.match_text(&page.text).await?;
        let matches: Vec<_> = found.iter().map(pipeline::to_new_match).collect();
        let verdict = self
            .store
            .record_page_matches(page.id, &page.content_hash, &matches, Utc::now())
            .await
            .with_context(|| format!("cannot record matches of {}", page.url))?;
        Ok(format!(
            "page {} ({}): {} removed, {} reopened, {} match(es)",
            page.id,
            page.url,
            verdict.removed,
            verdict.reopened,
            matches.len()
        ))
    }
}

#[async_trait::async_trait]
impl JobHandler for MatchHandler {
    fn kinds(&self) -> Vec<String> {
        vec![MATCH.to_owned(), DEDUP.to_owned()]
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        if job.kind == DEDUP {
            return self.run_dedup(job).await;
        }
        let payload: MatchJob = serde_json::from_value(job.payload.clone())
            .map_err(|e| format!("malformed match job payload: {e}"))?;
        self.run_match(&payload).await.map_err(|e| {
            let message = format!("{e:#}");
            JobError::from(message)
        })
    }
}
