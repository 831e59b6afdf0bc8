//! The background of `copytrace-bench web --background-sites N`: real crawls and real matching
//! writing to the database the admin web serves, while its users browse.
//!
//! * **Sites.** `N` copies of the crawl benchmark's generated novel site
//!   ([`crate::crawl::site`], `--background-pages` chapters each in books of 200, plus the home
//!   page and the tables of contents), each on its own loopback port, served from this process
//!   on a thread of their own (pages rendered on demand). The copies hold the same text under
//!   other hosts, so every page is stored and matched once per site.
//! * **Workers.** The `copytrace` binary beside `copytrace-bench` (both built by
//!   `cargo build --release`), configured only through `COPYTRACE_DATABASE_URL` (no Redis: the
//!   match worker holds the library in memory): one `copytrace worker crawl --concurrency N`
//!   (all sites crawled at once) and one `copytrace worker match --concurrency 2`. They are
//!   started before the web's warm-up and waited for until both log `worker started`: the
//!   match worker first fingerprints every work of the generated library that has no stored
//!   fingerprints (the web's data set is loaded by `COPY` without them) and loads the library;
//!   that set-up is timed and printed apart, not part of the load.
//! * **Load.** When the measured load starts, one crawl job per site is queued with
//!   `copytrace crawl --queue --allow-private-addresses --max-pages … --concurrency 4
//!   --per-host 4 --render never --no-sitemaps http://127.0.0.1:PORT/`; every page the crawl
//!   stores queues a match job. When the load ends the database is read again (pages, matches,
//!   jobs by kind and state) and the workers are stopped with SIGTERM, so the figures are what
//!   the background did during the load. The CPU time the two workers used during it is read
//!   from `/proc`.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use sqlx::PgConnection;

use crate::crawl::cpu;
use crate::crawl::site::{Page, Site};

/// Chapters per book of the generated sites.
const PER_BOOK: usize = 200;
/// Requests in flight of one crawl job (and to its one host).
const CRAWL_CONCURRENCY: usize = 4;
/// Match jobs run at once by the match worker.
const MATCH_CONCURRENCY: usize = 2;

/// The running background: sites served, workers started, nothing queued yet.
pub struct Background {
    binary: PathBuf,
    db: String,
    dir: tempfile::TempDir,
    sites: Vec<SocketAddr>,
    pages_per_site: usize,
    crawl: Worker,
    matcher: Worker,
    /// Dropping it stops the sites' server.
    _stop_sites: tokio::sync::oneshot::Sender<()>,
}

impl Background {
    /// Serves `sites` sites of `chapters` chapters and starts the workers on `db`; returns once
    /// both workers are ready, with the seconds that took.
    pub async fn start(
        copytrace: Option<&Path>,
        db: &str,
        sites: usize,
        chapters: usize,
    ) -> Result<(Background, f64)> {
        let binary = match copytrace {
            Some(path) => path.to_owned(),
            None => std::env::current_exe()?.with_file_name("copytrace"),
        };
        if !binary.exists() {
            bail!(
                "{} not found: `cargo build --release -p copytrace` first",
                binary.display()
            );
        }
        let site = Site::new(chapters, PER_BOOK)?;
        let pages_per_site = site.pages().len();
        let (addresses, stop) = serve_sites(site, sites)?;
        let dir = tempfile::tempdir()?;
        let started = Instant::now();
        let mut background = Background {
            crawl: Worker::spawn(
                &binary,
                db,
                dir.path(),
                "crawl",
                &["worker", "crawl", "--concurrency", &sites.to_string()],
            )?,
            matcher: Worker::spawn(
                &binary,
                db,
                dir.path(),
                "match",
                &[
                    "worker",
                    "match",
                    "--concurrency",
                    &MATCH_CONCURRENCY.to_string(),
                ],
            )?,
            binary,
            db: db.to_owned(),
            dir,
            sites: addresses,
            pages_per_site,
            _stop_sites: stop,
        };
        for worker in [&mut background.crawl, &mut background.matcher] {
            worker
                .wait_started(Duration::from_secs(3_600))
                .await
                .with_context(|| format!("the {} worker did not start", worker.kind))?;
        }
        Ok((background, started.elapsed().as_secs_f64()))
    }

    /// Pages per site (chapters, tables of contents, home page).
    pub fn pages_per_site(&self) -> usize {
        self.pages_per_site
    }

    /// Queues one crawl job per site.
    pub async fn enqueue(&self) -> Result<()> {
        let urls: Vec<String> = self
            .sites
            .iter()
            .map(|address| format!("http://{address}/"))
            .collect();
        let max_pages = (self.pages_per_site + 10).to_string();
        let concurrency = CRAWL_CONCURRENCY.to_string();
        let (binary, db, dir) = (
            self.binary.clone(),
            self.db.clone(),
            self.dir.path().to_owned(),
        );
        tokio::task::spawn_blocking(move || {
            for url in &urls {
                let output = command(&binary, &db, &dir)
                    .args([
                        "crawl",
                        "--queue",
                        "--allow-private-addresses",
                        "--max-pages",
                        &max_pages,
                        "--concurrency",
                        &concurrency,
                        "--per-host",
                        &concurrency,
                        "--render",
                        "never",
                        "--no-sitemaps",
                        url,
                    ])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .output()
                    .context("cannot run copytrace crawl --queue")?;
                if !output.status.success() {
                    bail!(
                        "`copytrace crawl --queue {url}` failed ({}):\n{}",
                        output.status,
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            }
            Ok(())
        })
        .await?
    }

    /// CPU seconds the crawl and the match worker have used so far.
    pub fn cpu_seconds(&self) -> (f64, f64) {
        (self.crawl.cpu_seconds(), self.matcher.cpu_seconds())
    }

    /// Stops both workers (SIGTERM, then SIGKILL after 60 s); says how each ended.
    pub fn stop(mut self) -> Vec<String> {
        let mut ended = Vec::new();
        for worker in [&mut self.crawl, &mut self.matcher] {
            let how = worker.stop();
            ended.push(format!("{} worker: {how}", worker.kind));
        }
        ended
    }
}

/// What the database holds, read before and after the load.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub pages: i64,
    pub matches: i64,
    /// `(kind, state) → jobs`.
    pub jobs: BTreeMap<(String, String), i64>,
}

impl Snapshot {
    /// Reads the counts.
    pub async fn read(connection: &mut PgConnection) -> Result<Snapshot> {
        let pages = sqlx::query_scalar("SELECT count(*) FROM pages")
            .fetch_one(&mut *connection)
            .await?;
        let matches = sqlx::query_scalar("SELECT count(*) FROM matches")
            .fetch_one(&mut *connection)
            .await?;
        let rows: Vec<(String, String, i64)> =
            sqlx::query_as("SELECT kind, state, count(*) FROM jobs GROUP BY kind, state")
                .fetch_all(&mut *connection)
                .await?;
        Ok(Snapshot {
            pages,
            matches,
            jobs: rows.into_iter().map(|(k, s, n)| ((k, s), n)).collect(),
        })
    }

    /// Jobs of `kind` in `state`.
    pub fn jobs(&self, kind: &str, state: &str) -> i64 {
        self.jobs
            .get(&(kind.to_owned(), state.to_owned()))
            .copied()
            .unwrap_or(0)
    }
}

/// A `copytrace` command on the benchmark's database and nothing else.
fn command(binary: &Path, db: &str, dir: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .current_dir(dir)
        .env("COPYTRACE_DATABASE_URL", db)
        .env("COPYTRACE_LOG", "info")
        .env("NO_COLOR", "1")
        .env_remove("COPYTRACE_CONFIG")
        .env_remove("COPYTRACE_REDIS_URL")
        .stdin(Stdio::null());
    command
}

/// A running `copytrace worker`.
struct Worker {
    kind: &'static str,
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn spawn(
        binary: &Path,
        db: &str,
        dir: &Path,
        kind: &'static str,
        args: &[&str],
    ) -> Result<Worker> {
        let log = dir.join(format!("worker-{kind}.log"));
        let child = command(binary, db, dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .with_context(|| format!("cannot start the {kind} worker"))?;
        Ok(Worker { kind, child, log })
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn wait_started(&mut self, limit: Duration) -> Result<()> {
        let started = Instant::now();
        while !self.log().contains("worker started") {
            if let Some(status) = self.child.try_wait()? {
                bail!("it exited with {status}:\n{}", self.log());
            }
            if started.elapsed() > limit {
                bail!("not within {limit:?}:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    fn cpu_seconds(&self) -> f64 {
        cpu::process_seconds(self.child.id()).unwrap_or(0.0)
    }

    fn stop(&mut self) -> String {
        if let Ok(Some(status)) = self.child.try_wait() {
            return format!("had exited with {status}:\n{}", self.log());
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(60) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!(
                    "stopped in {:.1} s ({status})",
                    asked.elapsed().as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        "killed: still running 60 s after SIGTERM".to_owned()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A generated site and its pages by URL path.
struct Pages {
    site: Site,
    by_path: HashMap<String, Page>,
}

/// Serves `count` copies of `site` on loopback ports, on a thread of their own, until the
/// returned sender is dropped.
fn serve_sites(
    site: Site,
    count: usize,
) -> Result<(Vec<SocketAddr>, tokio::sync::oneshot::Sender<()>)> {
    let by_path = site
        .pages()
        .into_iter()
        .map(|p| (site.path(p), p))
        .collect();
    let pages = Arc::new(Pages { site, by_path });
    let mut listeners = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..count {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        addresses.push(listener.local_addr()?);
        listeners.push(listener);
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("bench-sites".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                for listener in listeners {
                    let app = axum::Router::new().fallback(page).with_state(pages.clone());
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("a loopback listener");
                    tokio::spawn(async move { axum::serve(listener, app).await });
                }
                let _ = stopped.await;
            });
        })?;
    Ok((addresses, stop))
}

async fn page(State(pages): State<Arc<Pages>>, uri: Uri) -> Response {
    match uri.path() {
        "/robots.txt" => "User-agent: *\nAllow: /\n".into_response(),
        path => match pages.by_path.get(path) {
            Some(&page) => Html(pages.site.render(page)).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        },
    }
}
