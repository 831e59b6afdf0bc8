//! The job runner and leader election against a real (SQLite) store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use copytrace_scheduler::backoff::Backoff;
use copytrace_scheduler::leader::{LeaderConfig, run_as_leader};
use copytrace_scheduler::worker::JobError;
use copytrace_scheduler::{JobHandler, SystemClock, WorkerConfig, WorkerReport, run_worker};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Job, JobState, NewJob, Store};
use tokio_util::sync::CancellationToken;

async fn store_in(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    let url = format!("sqlite://{}", dir.path().join("jobs.db").display());
    let store = SqliteStore::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    Arc::new(store)
}

async fn enqueue(store: &dyn Store, kind: &str, max_attempts: u32) -> i64 {
    store
        .enqueue_job(&NewJob {
            kind: kind.to_owned(),
            payload: serde_json::json!({ "n": 1 }),
            dedup_key: None,
            run_at: Utc::now(),
            max_attempts,
        })
        .await
        .unwrap()
}

fn quick() -> WorkerConfig {
    WorkerConfig {
        lease: Duration::from_millis(600),
        idle_poll: Duration::from_millis(20),
        backoff: Backoff {
            base: Duration::from_millis(1),
            max: Duration::from_millis(2),
        },
        shutdown_grace: Duration::from_millis(200),
        exit_when_idle: true,
    }
}

/// Runs each job for `work`, failing the first `failures` attempts, counting runs.
struct Counting {
    work: Duration,
    failures: u32,
    runs: AtomicU32,
}

impl Counting {
    fn new(work: Duration, failures: u32) -> Arc<Self> {
        Arc::new(Self {
            work,
            failures,
            runs: AtomicU32::new(0),
        })
    }
}

#[async_trait]
impl JobHandler for Counting {
    fn kinds(&self) -> Vec<String> {
        vec!["test".to_owned()]
    }

    async fn run(&self, job: &Job) -> Result<String, JobError> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(self.work).await;
        if run <= self.failures {
            return Err(format!("attempt {} failed", job.attempts).into());
        }
        Ok(format!("job {} done", job.id))
    }
}

async fn run(
    store: &Arc<dyn Store>,
    handler: Arc<dyn JobHandler>,
    config: WorkerConfig,
) -> WorkerReport {
    run_worker(
        store.clone(),
        handler,
        Arc::new(SystemClock),
        config,
        CancellationToken::new(),
    )
    .await
}

/// Runs until every job is done or dead (failed jobs wait out their short backoff).
async fn drain(store: &Arc<dyn Store>, handler: Arc<dyn JobHandler>) -> WorkerReport {
    let mut total = WorkerReport::default();
    for _ in 0..200 {
        let report = run(store, handler.clone(), quick()).await;
        total.completed += report.completed;
        total.failed += report.failed;
        let pending = store
            .job_counts()
            .await
            .unwrap()
            .iter()
            .filter(|c| matches!(c.state, JobState::Queued | JobState::Running))
            .map(|c| c.count)
            .sum::<u64>();
        if pending == 0 {
            return total;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("jobs still pending")
}

#[tokio::test]
async fn failed_jobs_are_retried_and_go_dead_when_their_attempts_are_used_up() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    let recovers = enqueue(store.as_ref(), "test", 3).await;
    let handler = Counting::new(Duration::ZERO, 2);
    let report = drain(&store, handler.clone()).await;
    assert_eq!((report.completed, report.failed), (1, 2));
    let job = store.get_job(recovers).await.unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Done, 3));
    assert_eq!(job.last_error.as_deref(), Some("attempt 2 failed"));

    let doomed = enqueue(store.as_ref(), "test", 2).await;
    let always = Counting::new(Duration::ZERO, u32::MAX);
    let report = drain(&store, always.clone()).await;
    assert_eq!((report.completed, report.failed), (0, 2));
    let job = store.get_job(doomed).await.unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Dead, 2));
    assert_eq!(always.runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_job_longer_than_its_lease_keeps_it_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    let id = enqueue(store.as_ref(), "test", 5).await;
    // Three leases long: without renewal the second worker would take the job over.
    let handler = Counting::new(Duration::from_millis(1800), 0);
    let config = WorkerConfig {
        exit_when_idle: false,
        ..quick()
    };
    let stop = CancellationToken::new();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            tokio::spawn(run_worker(
                store.clone(),
                handler.clone(),
                Arc::new(SystemClock),
                config.clone(),
                stop.clone(),
            ))
        })
        .collect();
    for _ in 0..300 {
        if store.get_job(id).await.unwrap().state == JobState::Done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    let mut completed = 0;
    for worker in workers {
        let report = worker.await.unwrap();
        assert_eq!(report.lost, 0);
        completed += report.completed;
    }
    let job = store.get_job(id).await.unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Done, 1));
    assert_eq!(completed, 1);
    assert_eq!(handler.runs.load(Ordering::SeqCst), 1, "never run twice");
}

#[tokio::test]
async fn shutdown_gives_an_unfinished_job_back_without_spending_its_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    let id = enqueue(store.as_ref(), "test", 1).await;
    let handler = Counting::new(Duration::from_secs(3600), 0);
    let stop = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        store.clone(),
        handler.clone(),
        Arc::new(SystemClock),
        WorkerConfig {
            exit_when_idle: false,
            ..quick()
        },
        stop.clone(),
    ));
    while store.get_job(id).await.unwrap().state != JobState::Running {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.cancel();
    let report = tokio::time::timeout(Duration::from_secs(10), worker)
        .await
        .expect("the worker stops after its grace period")
        .unwrap();
    assert_eq!(report.released, 1);
    let job = store.get_job(id).await.unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Queued, 0));

    // The job finishes quickly within the grace period: it is completed, not released.
    let quick_handler = Counting::new(Duration::from_millis(50), 0);
    let stop = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        store.clone(),
        quick_handler,
        Arc::new(SystemClock),
        WorkerConfig {
            exit_when_idle: false,
            shutdown_grace: Duration::from_secs(5),
            ..quick()
        },
        stop.clone(),
    ));
    while store.get_job(id).await.unwrap().state != JobState::Running {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.cancel();
    let report = worker.await.unwrap();
    assert_eq!((report.completed, report.released), (1, 0));
    assert_eq!(store.get_job(id).await.unwrap().state, JobState::Done);
}

#[tokio::test]
async fn one_of_two_contenders_leads_and_the_other_takes_over_when_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lead.db").display());
    let first: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    first.migrate().await.unwrap();
    let second: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    let config = LeaderConfig {
        name: "scheduler".into(),
        ttl: Duration::from_millis(400),
        check_every: Duration::from_millis(40),
    };
    let active = Arc::new(AtomicU32::new(0));
    let overlap = Arc::new(AtomicU32::new(0));
    let contender = |store: Arc<dyn Store>, stop: CancellationToken| {
        let (active, overlap, config) = (active.clone(), overlap.clone(), config.clone());
        let leading = Arc::new(std::sync::atomic::AtomicBool::new(false));
        tokio::spawn(run_as_leader(store, config, stop, leading, move || {
            let (active, overlap) = (active.clone(), overlap.clone());
            async move {
                if active.fetch_add(1, Ordering::SeqCst) > 0 {
                    overlap.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                active.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            }
        }))
    };
    let stop_first = CancellationToken::new();
    let stop_second = CancellationToken::new();
    let a = contender(first, stop_first.clone());
    tokio::time::sleep(Duration::from_millis(150)).await;
    let b = contender(second, stop_second.clone());
    tokio::time::sleep(Duration::from_millis(600)).await;
    stop_first.cancel();
    let first_ticks = a.await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    stop_second.cancel();
    let second_ticks = b.await.unwrap();
    assert_eq!(
        overlap.load(Ordering::SeqCst),
        0,
        "never two leaders at once"
    );
    assert!(
        first_ticks > 0 && second_ticks > 0,
        "{first_ticks} {second_ticks}"
    );
}
