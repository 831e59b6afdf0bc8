//! Fault injection in many iterations, with random timing (issue 23): real `copytrace`
//! processes sharing PostgreSQL and Redis crawl and match a generated site while faults hit
//! them at random moments, and every iteration then checks what must hold whatever happened:
//! every page stored once, every page's verdict recorded (and recorded once), every match job
//! done, exactly the pirated chapters reported, no row duplicated, every stored capture's hash
//! intact.
//!
//! The faults: `kill -9` of a crawl worker, of a match worker and of `serve` (which runs jobs
//! of its own), PostgreSQL crashed (`-m immediate`) and restarted, Redis killed and restarted
//! empty, or (over the Redis Cluster) a cluster node killed and restarted after a random
//! outage. A killed process is replaced at once, as a supervisor would.
//!
//! `./scripts/test` runs a short mode ([`SHORT_ITERATIONS`]); the nightly long mode sets
//! `COPYTRACE_FAULT_ITERATIONS` (see `docs/reliability.md`). `COPYTRACE_FAULT_SEED` replays a
//! run: each iteration prints its seed, faults and counts.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection};

use crate::multi_process::{FAST, worker, write_library};
use crate::processes::{Deployment, Process, assert_each_page_stored_and_matched_once_by_db};
use crate::serve::get;
use crate::services::{PrivatePostgres, PrivateRedis, SharedCluster, free_fixed_port};
use crate::site::GeneratedSite;

/// Iterations of `./scripts/test`'s short mode.
const SHORT_ITERATIONS: u64 = 2;

/// How many iterations to run, and the seed of the first (also for the full-disk test).
pub fn plan() -> (u64, u64) {
    let iterations = std::env::var("COPYTRACE_FAULT_ITERATIONS")
        .ok()
        .map(|n| n.parse().expect("COPYTRACE_FAULT_ITERATIONS is a number"))
        .unwrap_or(SHORT_ITERATIONS);
    let seed = std::env::var("COPYTRACE_FAULT_SEED")
        .ok()
        .map(|n| n.parse().expect("COPYTRACE_FAULT_SEED is a number"))
        .unwrap_or_else(|| fastrand::u64(..));
    (iterations, seed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    KillCrawlWorker,
    KillMatchWorker,
    KillServe,
    CrashPostgres,
    /// Redis killed and restarted: a single server comes back empty, a cluster node with its
    /// append-only file after a random outage.
    KillRedis,
}

/// The shared index the deployment uses.
enum Index {
    Single(PrivateRedis),
    Cluster(SharedCluster),
}

impl Index {
    fn url(&self) -> &str {
        match self {
            Index::Single(redis) => &redis.url,
            Index::Cluster(cluster) => &cluster.url,
        }
    }

    fn kill_and_restart(&mut self, rng: &mut fastrand::Rng) {
        match self {
            Index::Single(redis) => redis.kill_and_restart(),
            Index::Cluster(cluster) => {
                cluster.kill_and_restart(rng.usize(..3), Duration::from_millis(rng.u64(0..=2_000)))
            }
        }
    }
}

const FAULTS: [Fault; 5] = [
    Fault::KillCrawlWorker,
    Fault::KillMatchWorker,
    Fault::KillServe,
    Fault::CrashPostgres,
    Fault::KillRedis,
];

/// The processes of one deployment, each replaced when killed.
struct Fleet {
    crawlers: Vec<Process>,
    matchers: Vec<Process>,
    serve: Process,
    serve_port: u16,
    /// Logs of killed processes: their recorded verdicts count too.
    dead_logs: Vec<String>,
}

impl Fleet {
    fn start(deployment: &Deployment) -> Fleet {
        let serve_port = free_fixed_port();
        Fleet {
            crawlers: vec![worker(deployment, "crawl"), worker(deployment, "crawl")],
            matchers: vec![worker(deployment, "match"), worker(deployment, "match")],
            serve: spawn_serve(deployment, serve_port),
            serve_port,
            dead_logs: Vec::new(),
        }
    }

    /// Kills a process and then starts its replacement, as a supervisor restarts a process
    /// once it has died: a new `serve` started before the old one is gone finds its port
    /// taken (a flake of this test before: "Address already in use").
    fn kill(&mut self, deployment: &Deployment, fault: Fault, rng: &mut fastrand::Rng) {
        let serve_port = self.serve_port;
        let (process, restart): (&mut Process, Box<dyn FnOnce() -> Process>) = match fault {
            Fault::KillCrawlWorker => {
                let i = rng.usize(..self.crawlers.len());
                (
                    &mut self.crawlers[i],
                    Box::new(|| worker(deployment, "crawl")),
                )
            }
            Fault::KillMatchWorker => {
                let i = rng.usize(..self.matchers.len());
                (
                    &mut self.matchers[i],
                    Box::new(|| worker(deployment, "match")),
                )
            }
            Fault::KillServe => (
                &mut self.serve,
                Box::new(move || spawn_serve(deployment, serve_port)),
            ),
            _ => unreachable!("not a process fault"),
        };
        process.kill_hard();
        let killed = std::mem::replace(process, restart());
        self.dead_logs.push(killed.log());
    }

    /// Stops every process cleanly; panics with its log if one died on its own or does not
    /// stop.
    fn stop(mut self) -> Vec<String> {
        let mut logs = self.dead_logs;
        for process in self
            .crawlers
            .iter_mut()
            .chain(self.matchers.iter_mut())
            .chain(std::iter::once(&mut self.serve))
        {
            assert!(
                process.is_running(),
                "{} died on its own:\n{}",
                process.name,
                process.log()
            );
            assert!(
                process.terminate(Duration::from_secs(60)).success(),
                "{}",
                process.log()
            );
            logs.push(process.log());
        }
        logs
    }
}

fn spawn_serve(deployment: &Deployment, port: u16) -> Process {
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec![
        "serve",
        "--listen",
        &listen,
        "--sweep-secs",
        "1",
        "--workers",
        "1",
    ];
    args.extend(FAST);
    deployment.spawn(&args)
}

/// What one iteration did, for the summary line.
#[derive(Debug, Default)]
struct Tally {
    faults: BTreeMap<Fault, u64>,
    jobs_done: u64,
    pages: u64,
    matches: u64,
    captures: u64,
}

#[test]
fn random_faults_at_random_moments_lose_and_duplicate_nothing() {
    run_faults("", Index::Single(PrivateRedis::start()), plan());
}

/// The same over the three-master Redis Cluster, whose nodes are killed instead.
#[test]
fn random_faults_over_a_redis_cluster_lose_and_duplicate_nothing() {
    let (iterations, seed) = plan();
    run_faults(
        " on a Redis Cluster",
        Index::Cluster(SharedCluster::get()),
        (iterations.div_ceil(2), seed),
    );
}

fn run_faults(label: &str, mut index: Index, (iterations, first_seed): (u64, u64)) {
    let postgres = PrivatePostgres::start_durable();
    let mut total = Tally::default();
    let started = Instant::now();
    // Faults are dealt from a shuffled deck of every kind, so even the short mode's few
    // iterations inject each kind at least once.
    let mut deck = Vec::new();
    for iteration in 0..iterations {
        let seed = first_seed.wrapping_add(iteration);
        eprintln!("fault iteration {iteration}: COPYTRACE_FAULT_SEED={seed}");
        let tally = run_iteration(iteration, seed, &postgres, &mut index, &mut deck);
        eprintln!(
            "fault iteration {iteration} (COPYTRACE_FAULT_SEED={seed}): faults {:?}, {} jobs \
             done, {} pages, {} matches, {} captures verified; 0 lost, 0 duplicated",
            tally.faults, tally.jobs_done, tally.pages, tally.matches, tally.captures
        );
        for (fault, n) in tally.faults {
            *total.faults.entry(fault).or_default() += n;
        }
        total.jobs_done += tally.jobs_done;
        total.pages += tally.pages;
        total.matches += tally.matches;
        total.captures += tally.captures;
    }
    eprintln!(
        "fault injection{label}: {iterations} iteration(s) in {:.0} s, faults {:?} ({} in all), {} jobs \
         done, {} pages stored, {} matches; rows lost 0, duplicated 0",
        started.elapsed().as_secs_f64(),
        total.faults,
        total.faults.values().sum::<u64>(),
        total.jobs_done,
        total.pages,
        total.matches
    );
}

fn run_iteration(
    iteration: u64,
    seed: u64,
    postgres: &PrivatePostgres,
    index: &mut Index,
    deck: &mut Vec<Fault>,
) -> Tally {
    let mut rng = fastrand::Rng::with_seed(seed);
    let db = postgres.database(&format!("chaos_{iteration}_{seed}"));
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&db, Some(index.url()), dir.path());
    deployment.add_library(&write_library(dir.path()));
    let chapters = rng.usize(150..=300);
    let site = GeneratedSite::serve(chapters, Duration::from_millis(rng.u64(2..=15)));
    let mut fleet = Fleet::start(&deployment);
    deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "1000",
        "--concurrency",
        "4",
        &site.base,
    ]);

    // Faults at random points of the crawl: after a random share of the pages is stored, and
    // a random pause more, so they land while pages are fetched, stored and matched.
    let mut tally = Tally::default();
    let faults = rng.usize(3..=5);
    let mut marks: Vec<f64> = (0..faults).map(|_| rng.f64() * 0.9).collect();
    marks.sort_by(f64::total_cmp);
    for mark in marks {
        if deck.is_empty() {
            deck.extend(FAULTS);
            rng.shuffle(deck);
        }
        let fault = deck.pop().expect("a dealt fault");
        let target = (mark * site.page_count() as f64) as i64;
        let limit = Instant::now() + Duration::from_secs(180);
        while deployment.pages_stored_or_zero() < target && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(rng.u64(0..=400)));
        let stored = deployment.pages_stored_or_zero();
        match fault {
            Fault::CrashPostgres => postgres.crash_and_restart(),
            Fault::KillRedis => index.kill_and_restart(&mut rng),
            _ => fleet.kill(&deployment, fault, &mut rng),
        }
        eprintln!("  {fault:?} after {stored} stored page(s)");
        *tally.faults.entry(fault).or_default() += 1;
    }

    deployment.wait_until_idle(Duration::from_secs(600));
    // The web answers after whatever happened to it.
    let answered = Instant::now() + Duration::from_secs(60);
    while get(fleet.serve_port, "/login").is_none_or(|(status, _)| status != 200) {
        assert!(
            Instant::now() < answered,
            "serve does not answer on port {}:\n{}",
            fleet.serve_port,
            fleet.serve.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let logs = fleet.stop();
    assert_each_page_stored_and_matched_once_by_db(
        &deployment,
        site.page_count(),
        &site.expected_matches(),
        &logs,
    );
    let jobs = deployment.job_counts();
    for ((kind, state), n) in &jobs {
        assert_eq!(state, "done", "{n} {kind} job(s) ended {state}: {jobs:?}");
    }
    tally.jobs_done = jobs.values().sum();
    tally.pages = site.page_count() as u64;
    tally.matches = site.expected_matches().len() as u64;
    tally.captures = verify_captures(&deployment.db);
    tally
}

/// Checks the stored raw response of every page: one capture of its current text, whose
/// SHA-256 is that of its stored body. Returns how many were checked.
fn verify_captures(db: &str) -> u64 {
    use sha2::Digest;
    use std::io::Read;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut connection = PgConnection::connect(db).await.expect("connect");
        let missing: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pages p WHERE NOT EXISTS (SELECT 1 FROM page_captures c \
             WHERE c.page_id = p.id AND c.content_hash = p.content_hash)",
        )
        .fetch_one(&mut connection)
        .await
        .expect("count pages without a capture");
        assert_eq!(missing, 0, "every page keeps the capture of its text");
        let rows: Vec<(i64, String, String, i64, Vec<u8>)> = sqlx::query_as(
            "SELECT page_id, body_sha256, compression, body_size, body FROM page_captures",
        )
        .fetch_all(&mut connection)
        .await
        .expect("read captures");
        for (page, sha256, compression, size, body) in &rows {
            assert_eq!(compression, "gzip");
            let mut raw = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut raw)
                .unwrap_or_else(|e| panic!("the capture of page {page} is not gzip: {e}"));
            assert_eq!(
                raw.len() as i64,
                *size,
                "size of the capture of page {page}"
            );
            assert_eq!(
                &hex(&sha2::Sha256::digest(&raw)),
                sha256,
                "hash of the capture of page {page}"
            );
        }
        let _ = connection.close().await;
        rows.len() as u64
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The main Chromium processes started by process `parent` (their parent is it).
fn chromium_children(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: the name may hold spaces, so split after its `)`.
        let Some((name, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(parent) && name.contains("chrom") {
            found.push(pid);
        }
    }
    found
}

/// Each iteration is one crawl of its own site of 60 rendered pages, during which Chromium's
/// main process is killed twice (a crawl starts Chromium again at most 16 times: more kills in
/// one crawl would stop its rendering by design).
#[test]
fn chromium_killed_at_random_moments_costs_no_page() {
    let (iterations, first_seed) = plan();
    let mut rng = fastrand::Rng::with_seed(first_seed);
    let (mut total_killed, mut total_pages) = (0, 0);
    for _ in 0..iterations {
        let (killed, pages) = crawl_while_killing_chromium(&mut rng);
        total_killed += killed;
        total_pages += pages;
    }
    eprintln!(
        "Chromium killed {total_killed} time(s) during {iterations} crawl(s) of {total_pages} \
         rendered pages (COPYTRACE_FAULT_SEED={first_seed}): every page stored and read"
    );
}

/// One crawl with two Chromium kills; returns the kills and the pages checked.
fn crawl_while_killing_chromium(rng: &mut fastrand::Rng) -> (usize, usize) {
    let database = crate::services::Database::on_shared_server();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, None, dir.path());
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve_scripted(60);
    let mut crawl = deployment.spawn(&[
        "crawl",
        "--render",
        "always",
        "--allow-private-addresses",
        "--max-pages",
        "1000",
        "--concurrency",
        "4",
        &site.base,
    ]);
    // Chromium's main process is killed while pages render, each time after a random pause of
    // at least a second (a page is rendered again after a kill, up to three times: kills
    // closer together than a render could fail a page by design).
    let mut killed = 0;
    while killed < 2 && crawl.is_running() {
        std::thread::sleep(Duration::from_millis(rng.u64(1000..=2500)));
        for pid in chromium_children(crawl.id()) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            killed += 1;
        }
    }
    let status = crawl.wait_for_exit(Duration::from_secs(600));
    let log = crawl.log();
    assert!(status.success(), "{log}");
    assert!(
        killed >= 1,
        "the crawl ended before Chromium could be killed: {log}"
    );
    assert!(!log.contains("not rendered"), "{log}");
    deployment.ok(&["match"]);
    let (pages, urls, _) = deployment.page_counts();
    assert_eq!(pages, site.page_count() as i64, "every page stored: {log}");
    assert_eq!(urls, pages);
    let pairs = deployment.exported_pairs();
    assert_eq!(
        pairs.into_iter().collect::<std::collections::BTreeSet<_>>(),
        site.expected_matches(),
        "every copy read and found"
    );
    (killed, site.page_count())
}
