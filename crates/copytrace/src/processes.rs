//! The long-running processes: `copytrace serve` and `copytrace worker crawl|match`.
//!
//! Every process stops cleanly on SIGTERM or Ctrl-C: it claims no new job, gives the job in
//! hand a grace period to finish and otherwise releases it for another worker, resigns the
//! scheduler leadership, and exits 0.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use copytrace_admin_web::ops::{self, Metrics, Probe};
use copytrace_admin_web::web::WebState;
use copytrace_matcher::MatchConfig;
use copytrace_scheduler::leader::{LeaderConfig, run_as_leader};
use copytrace_scheduler::schedules::fire_due_schedules;
use copytrace_scheduler::worker::Handlers;
use copytrace_scheduler::{Clock, JobHandler, SystemClock, WorkerConfig, WorkerReport, run_worker};
use copytrace_store::Store;
use tokio_util::sync::CancellationToken;

use copytrace_service::alerts::{AlertJobs, AlertSettings, Alerter};
use copytrace_service::dedup::DedupJob;
use copytrace_service::index::IndexSource;
use copytrace_service::jobs::{self, CrawlJobs, MatchJobs, ScheduleJobs};
use copytrace_service::reports::{ReportJobs, WeeklySchedule, WeeklySettings};
use copytrace_service::review::ReviewGate;
use copytrace_service::schedules::ensure_dedup_schedule;
use copytrace_service::{MatchEngine, ServiceError};

/// A token cancelled by the first SIGTERM or SIGINT.
pub fn shutdown_on_signals() -> Result<CancellationToken> {
    let token = CancellationToken::new();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: shutting down"),
        }
        cancel.cancel();
    });
    Ok(token)
}

/// Readiness and metrics of a process.
pub struct ProcessProbe {
    store: Arc<dyn Store>,
    redis: Option<(String, String)>,
    leader: Option<Arc<AtomicBool>>,
}

#[async_trait::async_trait]
impl Probe for ProcessProbe {
    async fn ready(&self) -> Result<(), String> {
        self.store
            .job_counts()
            .await
            .map_err(|e| format!("database: {e}"))?;
        if let Some((url, prefix)) = &self.redis {
            let (url, prefix) = (url.clone(), prefix.clone());
            let built = tokio::task::spawn_blocking(move || {
                copytrace_service::index::open_redis_index(&url, &prefix)?
                    .library_generation()
                    .map_err(ServiceError::from)
            })
            .await
            .map_err(|e| format!("redis check panicked: {e}"))?
            .map_err(|e| format!("redis: {}", copytrace_service::error::one_line(&e)))?;
            if built.is_none() {
                return Err("redis: the index is not built (run `copytrace index rebuild`)".into());
            }
        }
        Ok(())
    }

    async fn metrics(&self) -> Metrics {
        Metrics {
            jobs: self.store.job_counts().await.ok(),
            leader: self.leader.as_ref().map(|l| l.load(Ordering::Relaxed)),
        }
    }
}

/// Binds the address of the operations endpoints, before anything else starts, so a taken port
/// fails the start instead of leaving a process without health checks.
async fn bind(listen: SocketAddr) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))
}

/// Serves the admin web beside the operations endpoints on `listener` until `shutdown`.
async fn serve_web(
    listener: tokio::net::TcpListener,
    probe: ProcessProbe,
    web: WebState,
    shutdown: CancellationToken,
) -> Result<()> {
    tracing::info!("admin web on http://{}", listener.local_addr()?);
    let requests = Arc::new(ops::RequestMetrics::default());
    let app = ops::measured(
        ops::router_with(Arc::new(probe), requests.clone())
            .merge(copytrace_admin_web::web::router(web)),
        requests,
    );
    // The login limiter counts failures per client address.
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled().await })
    .await
    .context("the HTTP server failed")
}

/// Serves the operations endpoints on `listener` until `shutdown`.
async fn serve_ops(
    listener: tokio::net::TcpListener,
    probe: ProcessProbe,
    shutdown: CancellationToken,
) -> Result<()> {
    tracing::info!("operations endpoints on http://{}", listener.local_addr()?);
    axum::serve(listener, ops::router(Arc::new(probe)))
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
        .context("the HTTP server failed")
}

/// Settings of the worker loops of one process.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Job loops run at once.
    pub concurrency: u32,
    /// Runner settings.
    pub runner: WorkerConfig,
}

/// Runs `concurrency` loops of `handler` until shutdown and sums their reports.
async fn run_loops(
    store: Arc<dyn Store>,
    handler: Arc<dyn JobHandler>,
    settings: &WorkerSettings,
    shutdown: CancellationToken,
) -> WorkerReport {
    let loops: Vec<_> = (0..settings.concurrency.max(1))
        .map(|_| {
            tokio::spawn(run_worker(
                store.clone(),
                handler.clone(),
                Arc::new(SystemClock),
                settings.runner.clone(),
                shutdown.clone(),
            ))
        })
        .collect();
    let mut total = WorkerReport::default();
    for handle in loops {
        match handle.await {
            Ok(report) => {
                total.completed += report.completed;
                total.failed += report.failed;
                total.released += report.released;
                total.lost += report.lost;
            }
            Err(error) => tracing::error!(%error, "a worker loop panicked"),
        }
    }
    total
}

/// Which jobs a worker process runs.
#[derive(Debug, Clone)]
pub enum WorkerKind {
    /// Crawl jobs, and the alert deliveries they lead to and the weekly reports (crawl
    /// workers reach the outside world), sent with these settings.
    Crawl(AlertSettings),
    /// Match jobs, with this index, configuration and certainty gate.
    Match(IndexSource, Box<MatchConfig>, ReviewGate),
}

/// The handler of a worker kind; a match handler loads the library first, so a broken index
/// fails the start instead of every job.
/// How long a match worker waits at start for a shared index that another process is building
/// or updating (or a database restarting), before it gives up with the reason.
const INDEX_PATIENCE: Duration = Duration::from_secs(120);

/// How long `serve` waits at start for a database that restarts under it.
const START_PATIENCE: Duration = Duration::from_secs(120);

async fn handler_for(store: &Arc<dyn Store>, kind: &WorkerKind) -> Result<Arc<dyn JobHandler>> {
    Ok(match kind {
        WorkerKind::Crawl(alerts) => Arc::new(Handlers(vec![
            Arc::new(CrawlJobs::new(store.clone())),
            Arc::new(AlertJobs::new(Alerter::new(store.clone(), alerts.clone())?)),
            Arc::new(ReportJobs::new(store.clone(), alerts.clone())),
        ])),
        WorkerKind::Match(source, config, gate) => {
            let engine =
                MatchEngine::new(store.clone(), source.clone(), **config).with_review_gate(*gate);
            engine.preload_when_available(INDEX_PATIENCE).await?;
            Arc::new(MatchJobs::new(Arc::new(engine)))
        }
    })
}

/// `copytrace worker crawl|match`: runs jobs of one kind until shutdown (or until idle).
pub async fn worker(
    store: Arc<dyn Store>,
    kind: WorkerKind,
    settings: WorkerSettings,
    listen: Option<SocketAddr>,
    redis: Option<(String, String)>,
) -> Result<WorkerReport> {
    let shutdown = shutdown_on_signals()?;
    let listener = match listen {
        Some(listen) => Some(bind(listen).await?),
        None => None,
    };
    let handler = handler_for(&store, &kind).await?;
    let ops = listener.map(|listener| {
        let probe = ProcessProbe {
            store: store.clone(),
            redis: redis.clone(),
            leader: None,
        };
        tokio::spawn(serve_ops(listener, probe, shutdown.clone()))
    });
    tracing::info!(kind = ?handler.kinds(), concurrency = settings.concurrency, "worker started");
    let report = run_loops(store, handler, &settings, shutdown.clone()).await;
    shutdown.cancel();
    if let Some(ops) = ops {
        ops.await.context("the HTTP server panicked")??;
    }
    Ok(report)
}

/// Settings of `copytrace serve`.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// Address of the admin web and the operations endpoints.
    pub listen: SocketAddr,
    /// Mark the web's cookies Secure (users reach it over HTTPS).
    pub secure_cookies: bool,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// In-process crawl and match worker loops (embedded mode); 0 leaves the jobs to
    /// `copytrace worker` processes.
    pub workers: u32,
    /// How often the scheduler leader sweeps for pages due for matching.
    pub sweep_every: Duration,
    /// Runner settings of the in-process workers.
    pub runner: WorkerConfig,
    /// Index of the in-process match workers.
    pub index: IndexSource,
    /// Matching settings of the in-process match workers.
    pub match_config: MatchConfig,
    /// Certainty gate of the in-process match workers.
    pub review_gate: ReviewGate,
    /// The daily dedup schedule to keep: cron expression, time zone, and the run's settings.
    pub dedup_schedule: (String, String, DedupJob),
    /// How the in-process crawl workers send alerts.
    pub alerts: AlertSettings,
    /// When the weekly reports are sent, and the staff report's recipients; `None`: never.
    pub weekly_reports: Option<(WeeklySchedule, WeeklySettings)>,
}

/// `copytrace serve`: the HTTP endpoints, the scheduler loop (in whichever `serve` process leads:
/// due pages get match jobs, due schedules their runs) and, in embedded mode, the workers.
pub async fn serve(
    store: Arc<dyn Store>,
    settings: ServeSettings,
    redis: Option<(String, String)>,
) -> Result<()> {
    let shutdown = shutdown_on_signals()?;
    let (cron, timezone, dedup_job) = &settings.dedup_schedule;
    // A start during a database restart waits for it, as a running process reconnects.
    copytrace_service::error::patiently(START_PATIENCE, || {
        ensure_dedup_schedule(store.as_ref(), cron, timezone, dedup_job)
    })
    .await?;
    let leading = Arc::new(AtomicBool::new(false));
    let probe = ProcessProbe {
        store: store.clone(),
        redis,
        leader: Some(leading.clone()),
    };
    let web = WebState {
        store: store.clone(),
        secure_cookies: settings.secure_cookies,
        redis: probe.redis.clone(),
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies: settings.trusted_proxies.clone(),
        mail: settings.alerts.clone(),
    };
    let http = tokio::spawn(serve_web(
        bind(settings.listen).await?,
        probe,
        web,
        shutdown.clone(),
    ));

    let scheduler = {
        let store = store.clone();
        let sweep_store = store.clone();
        let leading = leading.clone();
        let weekly = Arc::new(settings.weekly_reports.clone());
        // The period whose reports this process enqueued last: each period's job is enqueued
        // once per leading process (its effect is once in any case, see `reports`).
        let enqueued = Arc::new(std::sync::Mutex::new(None));
        let config = LeaderConfig {
            check_every: settings.sweep_every,
            ..LeaderConfig::scheduler()
        };
        tokio::spawn(run_as_leader(
            store,
            config,
            shutdown.clone(),
            leading,
            move || {
                let store = sweep_store.clone();
                let (weekly, enqueued) = (weekly.clone(), enqueued.clone());
                async move {
                    // Pages stored outside a crawl job, and every page after the library changed,
                    // get their match jobs here.
                    let due = jobs::enqueue_due_matches(store.as_ref())
                        .await
                        .map_err(|e: ServiceError| copytrace_service::error::one_line(&e))?;
                    if due > 0 {
                        tracing::info!("{due} page(s) due for matching have a match job");
                    }
                    // Crawls and the dedup run whose cron tick has come.
                    fire_due_schedules(store.as_ref(), &ScheduleJobs, SystemClock.now()).await?;
                    // The weekly reports of the latest due period.
                    if let Some((schedule, settings)) = weekly.as_ref() {
                        let now = SystemClock.now();
                        let due = schedule.due(now);
                        let last = *enqueued.lock().unwrap_or_else(|e| e.into_inner());
                        if let Some(period) = due.filter(|p| Some(p.from) != last) {
                            copytrace_service::reports::enqueue(
                                store.as_ref(),
                                period,
                                settings,
                                now,
                            )
                            .await
                            .map_err(|e| copytrace_service::error::one_line(&e))?;
                            tracing::info!("weekly reports of {} enqueued", period.from);
                            *enqueued.lock().unwrap_or_else(|e| e.into_inner()) = Some(period.from);
                        }
                    }
                    Ok(())
                }
            },
        ))
    };

    let mut workers = Vec::new();
    if settings.workers > 0 {
        let worker_settings = WorkerSettings {
            concurrency: settings.workers,
            runner: settings.runner.clone(),
        };
        for kind in [
            WorkerKind::Crawl(settings.alerts.clone()),
            WorkerKind::Match(
                settings.index.clone(),
                Box::new(settings.match_config),
                settings.review_gate,
            ),
        ] {
            let handler = handler_for(&store, &kind).await?;
            workers.push(tokio::spawn({
                let (store, settings, shutdown) =
                    (store.clone(), worker_settings.clone(), shutdown.clone());
                async move { run_loops(store, handler, &settings, shutdown).await }
            }));
        }
    }

    let served = http.await.context("the HTTP server panicked")?;
    // The server ends on shutdown, or on its own error: either way everything else stops too.
    shutdown.cancel();
    let ticks = scheduler.await.context("the scheduler panicked")?;
    tracing::info!("scheduler stopped after {ticks} tick(s) as leader");
    for worker in workers {
        let report = worker.await.context("a worker panicked")?;
        tracing::info!(?report, "in-process worker stopped");
    }
    served
}
