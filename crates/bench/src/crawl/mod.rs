//! `copytrace-bench crawl`: pages per second of the Copytrace crawler on a local static site,
//! against `wrk` (what the same server answers at the same concurrency when the client does
//! nothing but HTTP) and Scrapy (a Python crawler doing the same crawl), in one run.
//!
//! 1. [`site`] writes a novel site of `--pages` chapters (20,000 by default, a few KB of Chinese
//!    prose each) with one table of contents per 200 chapters and a home page into a temporary
//!    directory, world-readable.
//! 2. [`server`] starts nginx on a free loopback port serving those files (separate processes,
//!    so its CPU time is read from `/proc` for every client; no gzip, so every client gets the
//!    same bytes).
//! 3. After a short untimed `wrk` warm-up, `--rounds` rounds alternate:
//!    * `wrk -t 2 -c C -d 10s` with a Lua script cycling through every page path;
//!    * [`copytrace_crawler::crawl`] from `/` with politeness off (no host delay, per-host
//!      concurrency = concurrency = C, `allow_private_addresses`, a permissive robots.txt,
//!      default retries), on a fresh 2-thread tokio runtime, with a sink that checks that every
//!      page of the site was fetched once with non-empty extracted text (the run fails if not).
//! 4. Scrapy (`bench/peers/crawl_scrapy.py`, its own venv under `bench/cache`) crawls the site
//!    once with politeness off and the same concurrency, following links from `/`.
//!
//! Reported: medians over the rounds (wrk's and the crawler's requests/s, the crawler's
//! pages/s), the median of the per-round ratios crawler ÷ wrk (target ≥ 0.5), the crawler's
//! pages/s ÷ Scrapy's (target ≥ 10), and for every client the CPU time per request of the client
//! and of the server and the 1-minute load average before it ran. The last line is
//! `RESULT crawler_req_s=… crawler_pages_s=… wrk_req_s=… wrk_ratio=… scrapy_pages_s=…
//! scrapy_ratio=… …`.

pub mod ads;
pub mod ads_site;
pub mod cpu;
mod http_only;
mod server;
pub mod site;
mod wrk;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, PageSink};
use url::Url;

use self::server::Nginx;
use self::site::Site;

/// Options of `copytrace-bench crawl`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Chapter pages of the site (plus a home page and one table of contents per book).
    #[arg(long, default_value_t = 20_000)]
    pages: usize,
    /// Chapters per book (links per table of contents).
    #[arg(long, default_value_t = 200)]
    chapters_per_book: usize,
    /// wrk's connections, and the requests in flight of the crawler and of Scrapy.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Rounds of wrk and the crawler, alternating (medians are reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds of each wrk run.
    #[arg(long, default_value_t = 10)]
    wrk_seconds: u64,
    /// wrk threads (capped by the concurrency).
    #[arg(long, default_value_t = 2)]
    wrk_threads: usize,
    /// nginx worker processes.
    #[arg(long, default_value_t = 2)]
    server_workers: usize,
    /// Pages Scrapy crawls; 0 = the whole site. A smaller number stops it early (its pages/s is
    /// compared all the same) for machines where the whole site takes too long.
    #[arg(long, default_value_t = 0)]
    scrapy_pages: usize,
    /// Leave Scrapy out (no scrapy figures in the table and the RESULT line).
    #[arg(long)]
    no_scrapy: bool,
    /// The nginx binary.
    #[arg(long, default_value = "nginx")]
    nginx: String,
    /// The wrk binary.
    #[arg(long, default_value = "wrk")]
    wrk: String,
    /// Python 3 for the Scrapy script (which makes its own venv).
    #[arg(long, default_value = "python3")]
    python: String,
}

/// One client's measured run.
#[derive(Debug, Clone, Copy, Default)]
struct Measured {
    requests: u64,
    pages: u64,
    seconds: f64,
    client_cpu: f64,
    server_cpu: f64,
    load: f64,
}

impl Measured {
    fn requests_per_s(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    fn pages_per_s(&self) -> f64 {
        self.pages as f64 / self.seconds
    }

    fn client_us_per_request(&self) -> f64 {
        self.client_cpu * 1e6 / self.requests as f64
    }

    fn server_us_per_request(&self) -> f64 {
        self.server_cpu * 1e6 / self.requests as f64
    }

    fn cores_busy(&self) -> f64 {
        (self.client_cpu + self.server_cpu) / self.seconds
    }
}

/// Runs the benchmark and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> Result<()> {
    if args.pages == 0 || args.concurrency == 0 || args.rounds == 0 || args.wrk_seconds == 0 {
        bail!("--pages, --concurrency, --rounds and --wrk-seconds must be positive");
    }
    require(&args.wrk, "-v", "wrk", "apt-get install -y wrk")?;
    require(&args.nginx, "-v", "nginx", "apt-get install -y nginx-light")?;
    if !args.no_scrapy {
        require(
            &args.python,
            "--version",
            "python3",
            "apt-get install -y python3-venv",
        )?;
    }

    let dir = tempfile::Builder::new()
        .prefix("copytrace-crawl-bench-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let site_root = dir.path().join("site");
    std::fs::create_dir(&site_root)?;
    let site = Site::new(args.pages, args.chapters_per_book)?;
    let html_bytes = site.write(&site_root)?;
    make_world_readable(dir.path())?;
    let pages = site.pages();
    let paths: Vec<String> = pages.iter().map(|&p| site.path(p)).collect();
    let paths_file = dir.path().join("paths.txt");
    std::fs::write(&paths_file, paths.join("\n") + "\n")?;
    let script_file = dir.path().join("cycle.lua");
    std::fs::write(&script_file, wrk::script(&paths_file))?;

    let server = Nginx::start(&args.nginx, &site_root, dir.path(), args.server_workers)?;
    let base = format!("http://{}/", server.addr);
    let seed = Url::parse(&base)?;
    let expected: HashSet<String> = paths.iter().cloned().collect();
    let wrk_threads = args.wrk_threads.clamp(1, args.concurrency);
    println!(
        "Site: {} HTML pages ({} chapters, {} tables of contents, home), {:.1} MB, mean {:.1} KB; \
         nginx {} workers on {}; concurrency {}; {} cores ({}); load average {:.2}",
        pages.len(),
        args.pages,
        site.books(),
        html_bytes as f64 / 1e6,
        html_bytes as f64 / pages.len() as f64 / 1e3,
        args.server_workers,
        server.addr,
        args.concurrency,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        cpu::load_average(),
    );

    // Untimed: the first requests open nginx's file cache and warm everyone's connections.
    wrk::run(
        &args.wrk,
        &base,
        &script_file,
        wrk_threads,
        args.concurrency,
        2,
    )?;

    let mut wrk_runs = Vec::new();
    let mut crawler_runs = Vec::new();
    let mut http_runs = Vec::new();
    for round in 1..=args.rounds {
        let w = measure_wrk(args, &server, &base, &script_file, wrk_threads)?;
        eprintln!(
            "round {round}: wrk {:.0} req/s (load {:.2})",
            w.requests_per_s(),
            w.load
        );
        wrk_runs.push(w);
        let c = measure_crawler(args, &server, &seed, &expected)?;
        eprintln!(
            "round {round}: crawler {:.0} req/s, {:.0} pages/s (load {:.2})",
            c.requests_per_s(),
            c.pages_per_s(),
            c.load
        );
        crawler_runs.push(c);
        let h = measure_http_only(args, &server, &base, &paths)?;
        eprintln!(
            "round {round}: reqwest, HTTP only {:.0} req/s (load {:.2})",
            h.requests_per_s(),
            h.load
        );
        http_runs.push(h);
    }
    let scrapy = if args.no_scrapy {
        None
    } else {
        let (s, version) = measure_scrapy(args, &server, &base, dir.path(), pages.len())?;
        eprintln!(
            "scrapy: {:.0} pages/s over {} pages (load {:.2})",
            s.pages_per_s(),
            s.pages,
            s.load
        );
        Some((s, version))
    };
    drop(server);

    let ratios: Vec<f64> = crawler_runs
        .iter()
        .zip(&wrk_runs)
        .map(|(c, w)| c.requests_per_s() / w.requests_per_s())
        .collect();
    let wrk_ratio = median_of(&ratios);
    let wrk_mid = median_by(&wrk_runs, Measured::requests_per_s);
    let crawler_mid = median_by(&crawler_runs, Measured::requests_per_s);
    let crawler_pages_s = median_of(
        &crawler_runs
            .iter()
            .map(Measured::pages_per_s)
            .collect::<Vec<_>>(),
    );
    let crawler_req_s = crawler_mid.requests_per_s();
    let http_mid = median_by(&http_runs, Measured::requests_per_s);
    let http_ratio = median_of(
        &http_runs
            .iter()
            .zip(&wrk_runs)
            .map(|(h, w)| h.requests_per_s() / w.requests_per_s())
            .collect::<Vec<_>>(),
    );
    let wrk_req_s = wrk_mid.requests_per_s();

    println!();
    println!(
        "| client | runs | requests/s | pages/s | client CPU µs/request | server CPU µs/request | \
         cores busy | load avg before |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, runs: String, m: &Measured, pages: bool| {
        println!(
            "| {name} | {runs} | {:.0} | {} | {:.1} | {:.1} | {:.2} | {:.2} |",
            m.requests_per_s(),
            if pages {
                format!("{:.0}", m.pages_per_s())
            } else {
                "–".to_owned()
            },
            m.client_us_per_request(),
            m.server_us_per_request(),
            m.cores_busy(),
            m.load
        );
    };
    let rounds = format!("median of {}", args.rounds);
    row(
        &format!("wrk -t {wrk_threads} -c {}", args.concurrency),
        rounds.clone(),
        &wrk_mid,
        false,
    );
    row("copytrace crawler", rounds.clone(), &crawler_mid, true);
    row("reqwest, HTTP only", rounds, &http_mid, false);
    if let Some((s, version)) = &scrapy {
        row(
            &format!("Scrapy {version}"),
            format!("1 ({} pages)", s.pages),
            s,
            true,
        );
    }
    println!();
    println!(
        "crawler requests/s ÷ wrk requests/s: {wrk_ratio:.2} (per round: {}; target ≥ 0.50)",
        ratios
            .iter()
            .map(|r| format!("{r:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "reqwest (HTTP only) requests/s ÷ wrk requests/s: {http_ratio:.2}: the most any crawler \
         on this HTTP stack could reach here"
    );
    let scrapy = scrapy.map(|(s, _)| s);
    let scrapy_ratio = scrapy.map(|s| crawler_pages_s / s.pages_per_s());
    if let (Some(s), Some(ratio)) = (&scrapy, scrapy_ratio) {
        println!(
            "crawler pages/s ÷ Scrapy pages/s: {ratio:.1} ({crawler_pages_s:.0} ÷ {:.0}; \
             target ≥ 10)",
            s.pages_per_s()
        );
    }
    let scrapy_part = match (&scrapy, scrapy_ratio) {
        (Some(s), Some(ratio)) => format!(
            "scrapy_pages_s={:.0} scrapy_ratio={ratio:.1} scrapy_pages={}",
            s.pages_per_s(),
            s.pages
        ),
        _ => "scrapy=skipped".to_owned(),
    };
    println!(
        "RESULT crawler_req_s={crawler_req_s:.0} crawler_pages_s={crawler_pages_s:.0} \
         wrk_req_s={wrk_req_s:.0} wrk_ratio={wrk_ratio:.2} http_only_req_s={:.0} \
         http_only_ratio={http_ratio:.2} {scrapy_part} concurrency={} \
         pages={} load={:.2}",
        http_mid.requests_per_s(),
        args.concurrency,
        pages.len(),
        cpu::load_average()
    );
    Ok(())
}

/// Fails with the install command when a tool cannot be started.
fn require(program: &str, flag: &str, name: &str, install: &str) -> Result<()> {
    match Command::new(program)
        .arg(flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(e) => bail!(
            "{name} is needed and `{program}` cannot be run ({e}): {install} \
             (scripts/bench-crawl installs it), or pass its path"
        ),
    }
}

/// nginx's workers run as `nobody` when started by root: let them read the site.
fn make_world_readable(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot open up {dir:?}"))
}

fn measure_wrk(
    args: &Args,
    server: &Nginx,
    base: &str,
    script: &Path,
    threads: usize,
) -> Result<Measured> {
    let load = cpu::load_average();
    let (client0, server0) = (cpu::waited_children_seconds(), server.cpu_seconds());
    let report = wrk::run(
        &args.wrk,
        base,
        script,
        threads,
        args.concurrency,
        args.wrk_seconds,
    )?;
    let (client1, server1) = (cpu::waited_children_seconds(), server.cpu_seconds());
    if report.non_2xx > 0 {
        bail!(
            "wrk got {} non-2xx responses; nginx's error log ends with:\n{}",
            report.non_2xx,
            server.error_log_tail()
        );
    }
    if report.socket_errors > 0 {
        eprintln!("wrk: {} socket errors", report.socket_errors);
    }
    // wrk's own rate, over its own clock; its request count over the same rate gives its time.
    Ok(Measured {
        requests: report.requests,
        pages: report.requests,
        seconds: report.requests as f64 / report.requests_per_s,
        client_cpu: client1 - client0,
        server_cpu: server1 - server0,
        load,
    })
}

fn measure_http_only(
    args: &Args,
    server: &Nginx,
    base: &str,
    paths: &[String],
) -> Result<Measured> {
    let load = cpu::load_average();
    let (client0, server0) = (cpu::self_seconds(), server.cpu_seconds());
    let report = http_only::run(base, paths, args.concurrency)?;
    let (client1, server1) = (cpu::self_seconds(), server.cpu_seconds());
    if report.requests != paths.len() as u64 || report.bytes == 0 {
        bail!(
            "the HTTP-only client made {} requests for {} pages ({} bytes)",
            report.requests,
            paths.len(),
            report.bytes
        );
    }
    Ok(Measured {
        requests: report.requests,
        pages: report.requests,
        seconds: report.seconds,
        client_cpu: client1 - client0,
        server_cpu: server1 - server0,
        load,
    })
}

/// Counts pages and checks them against the site.
#[derive(Default)]
struct CheckingSink {
    paths: HashSet<String>,
    pages: u64,
    duplicates: Vec<String>,
    empty: Vec<String>,
    failures: Vec<String>,
}

#[async_trait::async_trait]
impl PageSink for CheckingSink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.pages += 1;
        if page.text.trim().is_empty() {
            self.empty.push(page.url.to_string());
        }
        if !self.paths.insert(page.url.path().to_owned()) {
            self.duplicates.push(page.url.to_string());
        }
        Ok(())
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        self.failures.push(format!("{url}: {error}"));
    }
}

fn measure_crawler(
    args: &Args,
    server: &Nginx,
    seed: &Url,
    expected: &HashSet<String>,
) -> Result<Measured> {
    let config = CrawlConfig {
        max_pages: expected.len() * 2,
        max_depth: None,
        allow_private_addresses: true,
        concurrency: args.concurrency,
        per_host_concurrency: args.concurrency,
        host_delay: Duration::ZERO,
        ..CrawlConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let mut sink = CheckingSink::default();
    let load = cpu::load_average();
    let (client0, server0) = (cpu::self_seconds(), server.cpu_seconds());
    let report = runtime.block_on(copytrace_crawler::crawl(
        &config,
        std::slice::from_ref(seed),
        &mut sink,
    ))?;
    let (client1, server1) = (cpu::self_seconds(), server.cpu_seconds());
    drop(runtime);
    check_crawl(&sink, expected)?;
    let stats = &report.stats;
    if stats.pages as u64 != sink.pages {
        bail!(
            "the crawl reports {} pages, the sink saw {}",
            stats.pages,
            sink.pages
        );
    }
    Ok(Measured {
        requests: stats.requests,
        pages: stats.pages as u64,
        seconds: stats.elapsed.as_secs_f64(),
        client_cpu: client1 - client0,
        server_cpu: server1 - server0,
        load,
    })
}

fn check_crawl(sink: &CheckingSink, expected: &HashSet<String>) -> Result<()> {
    let mut problems = Vec::new();
    if !sink.failures.is_empty() {
        problems.push(format!(
            "{} failed URLs, e.g. {:?}",
            sink.failures.len(),
            &sink.failures[..sink.failures.len().min(3)]
        ));
    }
    if !sink.empty.is_empty() {
        problems.push(format!(
            "{} pages without text, e.g. {:?}",
            sink.empty.len(),
            &sink.empty[..sink.empty.len().min(3)]
        ));
    }
    if !sink.duplicates.is_empty() {
        problems.push(format!(
            "{} pages fetched twice, e.g. {:?}",
            sink.duplicates.len(),
            &sink.duplicates[..sink.duplicates.len().min(3)]
        ));
    }
    let missing: Vec<&String> = expected.difference(&sink.paths).take(3).collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} of {} pages never fetched, e.g. {missing:?}",
            expected.len() - expected.intersection(&sink.paths).count(),
            expected.len()
        ));
    }
    let extra: Vec<&String> = sink.paths.difference(expected).take(3).collect();
    if !extra.is_empty() {
        problems.push(format!("pages not on the site were fetched: {extra:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        bail!("the crawler's run is wrong: {}", problems.join("; "))
    }
}

/// What `crawl_scrapy.py` prints as its last line.
#[derive(Debug, serde::Deserialize)]
struct ScrapyResult {
    pages: u64,
    distinct: u64,
    requests: u64,
    seconds: f64,
    cpu_seconds: f64,
    scrapy: String,
}

fn measure_scrapy(
    args: &Args,
    server: &Nginx,
    base: &str,
    dir: &Path,
    site_pages: usize,
) -> Result<(Measured, String)> {
    let script: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/crawl_scrapy.py");
    let log_path = dir.join("scrapy.log");
    let log = std::fs::File::create(&log_path)?;
    let mut command = Command::new(&args.python);
    command
        .arg(&script)
        .arg("--seed")
        .arg(base)
        .arg("--concurrency")
        .arg(args.concurrency.to_string())
        .stderr(log);
    if args.scrapy_pages > 0 && args.scrapy_pages < site_pages {
        command
            .arg("--max-pages")
            .arg(args.scrapy_pages.to_string());
    } else {
        command.arg("--expect").arg(site_pages.to_string());
    }
    let load = cpu::load_average();
    let server0 = server.cpu_seconds();
    let output = command
        .output()
        .with_context(|| format!("cannot run {} {}", args.python, script.display()))?;
    let server1 = server.cpu_seconds();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        bail!(
            "the Scrapy script failed ({}): {stdout}\n{}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let last = stdout.lines().last().unwrap_or_default();
    let result: ScrapyResult = serde_json::from_str(last)
        .with_context(|| format!("cannot read the Scrapy script's result {last:?}"))?;
    if result.distinct != result.pages {
        bail!(
            "Scrapy parsed {} pages but {} distinct URLs",
            result.pages,
            result.distinct
        );
    }
    // The server's delta also spans the interpreter's start, when nothing is requested.
    let measured = Measured {
        requests: result.requests,
        pages: result.pages,
        seconds: result.seconds,
        client_cpu: result.cpu_seconds,
        server_cpu: server1 - server0,
        load,
    };
    Ok((measured, result.scrapy))
}

fn median_of(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// The run with the median value of `key`.
fn median_by(runs: &[Measured], key: fn(&Measured) -> f64) -> Measured {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|a, b| key(a).total_cmp(&key(b)));
    sorted[sorted.len() / 2]
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}
