//! The job runner: claim, keep the lease, record the outcome, retry, shut down cleanly.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use copytrace_store::{Job, Store, StoreError};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::backoff::Backoff;
use crate::clock::Clock;

/// Error of one attempt of a job: its message is stored as the job's `last_error`.
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// What a kind of job does. Implementations must be idempotent: a job can run more than once
/// (its worker died after doing the work but before recording it), and a job can be cancelled
/// at any `.await` (shutdown, lost lease), so every write must leave the data consistent on its
/// own (one transaction per write, upserts keyed by natural keys).
#[async_trait]
pub trait JobHandler: Send + Sync {
    /// The job kinds this handler runs.
    fn kinds(&self) -> Vec<String>;
    /// Runs one job. `Ok` marks it done; `Err` schedules a retry (or kills the job once its
    /// attempts are used up) with the error's message as `last_error`. The returned text is a
    /// one-line summary for the log.
    async fn run(&self, job: &Job) -> Result<String, JobError>;
}

/// Several handlers as one: each job goes to the handler of its kind. A worker process runs
/// one loop over all of them (a crawl worker runs crawl jobs and alert deliveries).
pub struct Handlers(pub Vec<Arc<dyn JobHandler>>);

#[async_trait]
impl JobHandler for Handlers {
    fn kinds(&self) -> Vec<String> {
        self.0.iter().flat_map(|handler| handler.kinds()).collect()
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        match self
            .0
            .iter()
            .find(|handler| handler.kinds().contains(&job.kind))
        {
            Some(handler) => handler.run(job).await,
            None => Err(format!("no handler runs {} jobs", job.kind).into()),
        }
    }
}

/// How a worker claims and keeps jobs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Length of a claim. A worker that dies holds its job at most this long; a worker that
    /// lives renews it every `lease / 3`.
    pub lease: Duration,
    /// Wait between claims when the queue has nothing due.
    pub idle_poll: Duration,
    /// Retry delays of failed jobs.
    pub backoff: Backoff,
    /// On shutdown, how long the job in hand may take to finish before it is given back.
    pub shutdown_grace: Duration,
    /// Stop once the queue has nothing due for this worker (batch runs and tests); `false`
    /// keeps polling until shutdown.
    pub exit_when_idle: bool,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(60),
            idle_poll: Duration::from_secs(1),
            backoff: Backoff::default(),
            shutdown_grace: Duration::from_secs(20),
            exit_when_idle: false,
        }
    }
}

/// What a worker did before it stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Jobs run to completion and recorded done.
    pub completed: u64,
    /// Attempts that failed (the job was retried later or went dead).
    pub failed: u64,
    /// Jobs given back unfinished at shutdown.
    pub released: u64,
    /// Jobs abandoned because another worker took them over (this worker's lease ran out).
    pub lost: u64,
}

/// Why a store call failed in a way the loop must react to.
fn is_lease_lost(error: &StoreError) -> bool {
    matches!(error, StoreError::LeaseLost(_))
}

/// Converts a std duration into a chrono one for store timestamps.
fn chrono_duration(duration: Duration) -> chrono::Duration {
    chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX)
}

/// Runs jobs of `handler`'s kinds until `shutdown` is cancelled (or, with
/// [`WorkerConfig::exit_when_idle`], until nothing is due).
///
/// Database errors never end the loop: a claim or a write that fails (the server restarted,
/// the network blinked) is logged and retried after a pause, and the connection pool
/// reconnects. The only way out is `shutdown`, after which the job in hand gets
/// [`WorkerConfig::shutdown_grace`] to finish and is otherwise released for another worker.
pub async fn run_worker(
    store: Arc<dyn Store>,
    handler: Arc<dyn JobHandler>,
    clock: Arc<dyn Clock>,
    config: WorkerConfig,
    shutdown: CancellationToken,
) -> WorkerReport {
    let kinds = handler.kinds();
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let lease = chrono_duration(config.lease);
    let mut report = WorkerReport::default();
    let mut store_errors: u32 = 0;
    while !shutdown.is_cancelled() {
        let claimed = store.claim_job(&kinds, clock.now(), lease).await;
        let job = match claimed {
            Ok(Some(job)) => {
                store_errors = 0;
                job
            }
            Ok(None) => {
                store_errors = 0;
                if config.exit_when_idle {
                    break;
                }
                pause(config.idle_poll, &shutdown).await;
                continue;
            }
            Err(error) => {
                store_errors = store_errors.saturating_add(1);
                let wait = config
                    .backoff
                    .ceiling(store_errors)
                    .min(Duration::from_secs(5));
                tracing::warn!(%error, "cannot claim a job; retrying in {wait:?}");
                pause(wait, &shutdown).await;
                continue;
            }
        };
        let span =
            tracing::info_span!("job", id = job.id, kind = %job.kind, attempt = job.attempts);
        run_one(
            store.as_ref(),
            handler.as_ref(),
            clock.as_ref(),
            &config,
            &shutdown,
            &job,
            &mut report,
        )
        .instrument(span)
        .await;
    }
    report
}

/// Sleeps for `wait` unless shutdown comes first.
async fn pause(wait: Duration, shutdown: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(wait) => {}
        () = shutdown.cancelled() => {}
    }
}

/// Runs one claimed job to its recorded end.
async fn run_one(
    store: &dyn Store,
    handler: &dyn JobHandler,
    clock: &dyn Clock,
    config: &WorkerConfig,
    shutdown: &CancellationToken,
    job: &Job,
    report: &mut WorkerReport,
) {
    let claim = job.lease();
    tracing::debug!("claimed");
    let work = handler.run(job);
    tokio::pin!(work);
    let renew_every = (config.lease / 3).max(Duration::from_millis(100));
    let mut renewals =
        tokio::time::interval_at(tokio::time::Instant::now() + renew_every, renew_every);
    let mut grace_ends: Option<tokio::time::Instant> = None;
    let outcome = loop {
        let grace = async {
            match grace_ends {
                Some(end) => tokio::time::sleep_until(end).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            outcome = &mut work => break Some(outcome),
            _ = renewals.tick() => {
                let until = clock.now() + chrono_duration(config.lease);
                match store.renew_job_lease(claim, until).await {
                    Ok(()) => {}
                    Err(error) if is_lease_lost(&error) => {
                        tracing::warn!(%error, "lease lost; abandoning the job");
                        report.lost += 1;
                        return;
                    }
                    // The database is unreachable: keep working; the lease may still hold
                    // when it comes back, and if not, recording will say so.
                    Err(error) => tracing::warn!(%error, "cannot renew the lease"),
                }
            }
            () = shutdown.cancelled(), if grace_ends.is_none() => {
                tracing::info!("shutting down: {:?} to finish the job in hand", config.shutdown_grace);
                grace_ends = Some(tokio::time::Instant::now() + config.shutdown_grace);
            }
            () = grace => break None,
        }
    };
    match outcome {
        Some(Ok(summary)) => {
            record(report, "done", store.complete_job(claim).await, |r| {
                r.completed += 1;
            });
            tracing::info!("{summary}");
        }
        Some(Err(error)) => {
            let message = one_line(error.as_ref());
            let retry_at = clock.now() + chrono_duration(config.backoff.delay(job.attempts));
            tracing::warn!(error = %message, "failed; attempt {} of {}", job.attempts, job.max_attempts);
            record(
                report,
                "failed",
                store.fail_job(claim, &message, retry_at).await,
                |r| {
                    r.failed += 1;
                },
            );
        }
        None => {
            // Dropping `work` cancelled the handler; give the job back for another worker.
            record(
                report,
                "released",
                store.release_job(claim, clock.now()).await,
                |r| {
                    r.released += 1;
                },
            );
        }
    }
}

/// Counts a recorded outcome, or the reason it could not be recorded.
fn record(
    report: &mut WorkerReport,
    what: &str,
    result: copytrace_store::Result<()>,
    count: impl FnOnce(&mut WorkerReport),
) {
    match result {
        Ok(()) => count(report),
        Err(error) if is_lease_lost(&error) => {
            report.lost += 1;
            tracing::warn!(%error, "could not record the job as {what}");
        }
        // The lease runs out and another worker repeats the job: at least once, as promised.
        Err(error) => tracing::error!(%error, "could not record the job as {what}"),
    }
}

/// An error and its causes on one line, for `last_error`.
fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = cause.source();
    }
    line
}
