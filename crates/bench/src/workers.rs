//! `copytrace-bench workers`: pages matched per second with 1, 2 and 4 `copytrace worker match`
//! processes sharing one PostgreSQL database and one Redis index (docs/scaling.md).
//!
//! The library and the pages are the quality benchmark's (real text, every disguise), served by
//! its site and crawled once with `copytrace crawl`. Then, for each worker count: the workers
//! are started and load the library, every page is queued for matching again
//! (`copytrace match --all --queue`), and the time until the match queue is empty is measured.
//! Worker start-up (loading the library) is not counted: the clock starts when the jobs are
//! queued. The exported matches must be the same for every worker count.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::quality::corpus;
use crate::quality::disguise::{self, Plan};
use crate::quality::site::Site;

/// Command-line settings.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// PostgreSQL database URL (an empty database; it is migrated and filled).
    #[arg(long)]
    db: String,
    /// Redis URL of the window index.
    #[arg(long)]
    redis_url: String,
    /// Worker counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    workers: Vec<u32>,
    /// Repetitions per worker count (the median is reported).
    #[arg(long, default_value_t = 2)]
    repeat: usize,
    /// Quality benchmark cache (corpus downloads).
    #[arg(long, default_value = "bench/cache/quality")]
    cache: PathBuf,
    /// The copytrace binary (default: beside this one).
    #[arg(long)]
    copytrace: Option<PathBuf>,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let copytrace = match &args.copytrace {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("copytrace"),
    };
    if !copytrace.exists() {
        bail!(
            "{} not found: `cargo build --release -p copytrace` first",
            copytrace.display()
        );
    }
    let corpus = corpus::load(&args.cache)?;
    let bench = disguise::generate(
        &corpus,
        Plan {
            seed: 20_261_122,
            per_disguise: 40,
            more_works: false,
        },
    );
    let dir = tempfile::tempdir()?;
    let library = dir.path().join("library");
    std::fs::create_dir_all(&library)?;
    for work in &bench.library {
        std::fs::write(
            library.join(format!("{}.txt", work.id)),
            format!("{}\n{}\n", work.title, work.text()),
        )?;
    }
    let site = Site::render(&bench.pages);
    let budget = site.request_budget();
    let address = site.serve()?;
    let ct = Cli {
        binary: copytrace,
        db: args.db.clone(),
        redis: args.redis_url.clone(),
        dir: dir.path().to_owned(),
    };

    let step = Instant::now();
    ct.ok(&["library", "add", &library.display().to_string()])?;
    ct.ok(&["index", "rebuild"])?;
    eprintln!(
        "library of {} works added and indexed in {:.1} s",
        bench.library.len(),
        step.elapsed().as_secs_f64()
    );
    let step = Instant::now();
    ct.ok_allowing(
        &[
            "crawl",
            &format!("http://{address}/"),
            "--allow-private-addresses",
            "--max-pages",
            &budget.to_string(),
            "--concurrency",
            "8",
        ],
        &[0, 3],
    )?;
    eprintln!("crawled in {:.1} s", step.elapsed().as_secs_f64());

    let mut rows = Vec::new();
    let mut reference: Option<String> = None;
    for &workers in &args.workers {
        let mut rates = Vec::new();
        for _ in 0..args.repeat {
            let (pages, seconds) = measure(&ct, workers)?;
            let rate = pages as f64 / seconds;
            eprintln!("{workers} worker(s): {pages} pages in {seconds:.1} s = {rate:.1} pages/s");
            rates.push(rate);
            let export = ct.ok(&["export", "matches", "--format", "json"])?;
            let comparable = comparable(&export)?;
            match &reference {
                None => reference = Some(comparable),
                Some(first) if *first != comparable => {
                    bail!("{workers} worker(s) exported other matches than the first run")
                }
                Some(_) => {}
            }
        }
        rates.sort_by(f64::total_cmp);
        rows.push((workers, rates[rates.len() / 2]));
    }
    let single = rows.first().map_or(1.0, |(_, r)| *r);
    println!(
        "| match workers | pages/s (median of {}) | vs 1 worker |",
        args.repeat
    );
    println!("|---|---|---|");
    for (workers, rate) in &rows {
        println!("| {workers} | {rate:.1} | {:.2}× |", rate / single);
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "RESULT pages={} works={} cores={cores} {}",
        bench.pages.len(),
        bench.library.len(),
        rows.iter()
            .map(|(w, r)| format!("workers{w}_pages_s={r:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(())
}

/// One run with `workers` processes: returns (pages matched, seconds).
fn measure(ct: &Cli, workers: u32) -> anyhow::Result<(u64, f64)> {
    let mut processes: Vec<Worker> = (0..workers)
        .map(|n| ct.spawn_worker(n))
        .collect::<anyhow::Result<_>>()?;
    // Each worker logs "worker started" once it has loaded the library.
    let started = Instant::now();
    for worker in &mut processes {
        while !worker.log()?.contains("worker started") {
            if let Some(status) = worker.child.try_wait()? {
                bail!("a match worker exited with {status}:\n{}", worker.log()?);
            }
            if started.elapsed() > Duration::from_secs(600) {
                bail!("a match worker did not start within 10 minutes");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for worker in &processes {
        if let Some(kib) = resident_kib(worker.child.id()) {
            eprintln!(
                "  match worker {} holds {:.0} MiB resident after loading the library",
                worker.child.id(),
                kib as f64 / 1024.0
            );
        }
    }
    let clock = Instant::now();
    let queued = ct.ok(&["match", "--all", "--queue"])?;
    let pages: u64 = queued
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .context("`match --queue` printed no page count")?;
    loop {
        let counts = ct.job_counts()?;
        let pending: u64 = ["queued", "running"]
            .iter()
            .map(|s| {
                counts
                    .get(&("match".to_owned(), (*s).to_owned()))
                    .copied()
                    .unwrap_or(0)
            })
            .sum();
        if pending == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let seconds = clock.elapsed().as_secs_f64();
    for worker in &mut processes {
        worker.stop()?;
    }
    Ok((pages, seconds))
}

/// Resident memory of a process in KiB (Linux `/proc`), `None` elsewhere.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The JSON export without what depends on the clock or on row ids, in a stable order.
fn comparable(export: &str) -> anyhow::Result<String> {
    let mut matches: Vec<serde_json::Value> = serde_json::from_str(export)?;
    for record in &mut matches {
        if let Some(record) = record.as_object_mut() {
            for key in ["first_seen", "last_seen", "id", "page_id"] {
                record.remove(key);
            }
        }
    }
    let mut rows: Vec<String> = matches.iter().map(ToString::to_string).collect();
    rows.sort();
    Ok(rows.join("\n"))
}

/// Runs `copytrace` against the benchmark's database and index.
struct Cli {
    binary: PathBuf,
    db: String,
    redis: String,
    dir: PathBuf,
}

impl Cli {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(&self.dir)
            .env("COPYTRACE_DATABASE_URL", &self.db)
            .env("COPYTRACE_REDIS_URL", &self.redis)
            .env_remove("COPYTRACE_CONFIG")
            .stdin(Stdio::null());
        command
    }

    fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        self.ok_allowing(args, &[0])
    }

    fn ok_allowing(&self, args: &[&str], codes: &[i32]) -> anyhow::Result<String> {
        let output = self
            .command(args)
            .output()
            .context("cannot run copytrace")?;
        if !codes.contains(&output.status.code().unwrap_or(-1)) {
            bail!(
                "`copytrace {}` failed ({}):\n{}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn job_counts(&self) -> anyhow::Result<BTreeMap<(String, String), u64>> {
        let stats: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["jobs", "stats", "--json"])?)?;
        Ok(stats
            .iter()
            .filter_map(|c| {
                Some((
                    (
                        c["kind"].as_str()?.to_owned(),
                        c["state"].as_str()?.to_owned(),
                    ),
                    c["count"].as_u64()?,
                ))
            })
            .collect())
    }

    fn spawn_worker(&self, n: u32) -> anyhow::Result<Worker> {
        let log = self.dir.join(format!("worker-{n}.log"));
        let child = self
            .command(&["worker", "match"])
            .env("COPYTRACE_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("cannot start a match worker")?;
        Ok(Worker { child, log })
    }
}

/// A running `copytrace worker match`.
struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn log(&self) -> anyhow::Result<String> {
        Ok(std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("a match worker exited with {status}:\n{}", self.log()?);
        }
        Ok(())
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
