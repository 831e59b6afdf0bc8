//! `copytrace-bench redis`: lookup throughput of the Redis window index, compared on the same
//! server and in the same run with `redis-benchmark -P 16` (Redis's own pipelined GET/SET
//! figure), so the ratio says how much of what the server can do the index gets, independent
//! of how fast this machine happens to be.
//!
//! A *probe* is one bucket read (`SMEMBERS` of one key); a signature's lookup is `k + 1`
//! probes, and a page's lookups go out as one pipeline. The index is filled with `N` random
//! signatures in works of 100 windows (one transaction per work), then `Q` signatures are looked
//! up in pages of `--page` windows: half are indexed signatures with up to `k` bits flipped
//! (each must be found), half random (found by nothing). Everything lives under a fresh key
//! prefix that is deleted at the end; other keys on the server are not touched.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use copytrace_index_redis::{RedisIndex, redact_url};
use copytrace_matcher::Index;

use crate::timing::median;

/// Options of `copytrace-bench redis`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Redis server to measure (`redis://[:password@]host:port[/db]`); a disposable one.
    #[arg(long)]
    url: String,
    /// Indexed window signatures.
    #[arg(long, default_value_t = 200_000)]
    n: usize,
    /// Signatures looked up per timed repetition.
    #[arg(long, default_value_t = 50_000)]
    queries: usize,
    /// Windows per pipelined page (a page of 1 000 windows is 4 000 probes at k = 3).
    #[arg(long, default_value_t = 1000)]
    page: usize,
    /// Hamming distance the index answers for.
    #[arg(long, default_value_t = 3)]
    max_distance: u32,
    /// Timed repetitions of the query pass (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Requests of each `redis-benchmark` test.
    #[arg(long, default_value_t = 2_000_000)]
    redis_benchmark_requests: usize,
}

use copytrace_fingerprint::minhash::splitmix64 as splitmix;

/// Runs the measurement and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> Result<()> {
    if args.n == 0 || args.queries == 0 || args.page == 0 {
        bail!("--n, --queries and --page must be positive");
    }
    let shown = redact_url(&args.url);
    let prefix = format!("bench-{}", std::process::id());
    let mut index = RedisIndex::connect(&args.url, &prefix, args.max_distance)
        .with_context(|| format!("cannot open the index at {shown}"))?;
    index.clear()?;
    let result = measure(args, &mut index);
    // Leave the server as it was, whether or not the measurement worked.
    let cleared = index.clear();
    let meta = redis::Client::open(args.url.as_str())
        .and_then(|client| client.get_connection())
        .and_then(|mut connection| {
            redis::cmd("DEL")
                .arg(format!("{prefix}:meta"))
                .exec(&mut connection)
        });
    let (load_s, probes_per_s, found, expected) = result?;
    cleared?;
    meta.context("cannot delete the benchmark's metadata key")?;

    let (get_ops, set_ops) = redis_benchmark(&args.url, args.redis_benchmark_requests)?;
    let ratio = probes_per_s / get_ops;
    let probes = args.queries * index.probes_per_query();
    println!("Redis index at {shown}, k = {}", args.max_distance);
    println!("{:<38} {:>14}  note", "measurement", "value");
    println!(
        "{:<38} {:>14.0}  {} windows in {:.2} s, one MULTI per work of 100",
        "load (windows/s)",
        args.n as f64 / load_s,
        args.n,
        load_s
    );
    println!(
        "{:<38} {:>14.0}  median of {} passes of {probes} probes, pages of {} windows",
        "index probes/s (pipelined SMEMBERS)", probes_per_s, args.reps, args.page
    );
    println!(
        "{:<38} {:>14}  of {expected} near-duplicate queries (each must be found)",
        "near duplicates found", found
    );
    println!(
        "{:<38} {:>14.0}  redis-benchmark -P 16 -q -t get,set -n {}",
        "redis-benchmark GET ops/s", get_ops, args.redis_benchmark_requests
    );
    println!("{:<38} {:>14.0}", "redis-benchmark SET ops/s", set_ops);
    println!(
        "{:<38} {:>14.2}  target >= 0.5",
        "probes/s ÷ redis-benchmark GET", ratio
    );
    println!(
        "RESULT probes_per_s={probes_per_s:.0} redis_benchmark_p16_ops={get_ops:.0} ratio={ratio:.2} \
         redis_benchmark_p16_set_ops={set_ops:.0} load_windows_per_s={:.0} recall={found}/{expected}",
        args.n as f64 / load_s
    );
    if found != expected {
        bail!(
            "the index missed {} near-duplicate queries",
            expected - found
        );
    }
    Ok(())
}

/// Loads the index and times the query passes: `(load seconds, probes/s, found, expected)`.
fn measure(args: &Args, index: &mut RedisIndex) -> Result<(f64, f64, usize, usize)> {
    let mut state = 0x5EED;
    let indexed: Vec<u64> = (0..args.n).map(|_| splitmix(&mut state)).collect();
    let start = Instant::now();
    for (work, chunk) in indexed.chunks(100).enumerate() {
        let windows: Vec<(u32, u64)> = chunk
            .iter()
            .copied()
            .zip(0..)
            .map(|(f, o)| (o, f))
            .collect();
        index.insert_work(work as i64, &windows)?;
    }
    let load_s = start.elapsed().as_secs_f64();
    let loaded = index.len()?;
    if loaded != args.n {
        bail!("the index holds {loaded} windows after loading {}", args.n);
    }

    // Even positions: an indexed signature with 0..=k bits flipped; odd: random.
    let queries: Vec<u64> = (0..args.queries)
        .map(|i| {
            if i.is_multiple_of(2) {
                let mut q = indexed[splitmix(&mut state) as usize % indexed.len()];
                let flips = (i / 2) as u32 % (args.max_distance + 1);
                let mut mask = 0u64;
                while mask.count_ones() < flips {
                    mask |= 1 << (splitmix(&mut state) % 64);
                }
                q ^= mask;
                q
            } else {
                splitmix(&mut state)
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut pass = || -> Result<usize> {
        let mut found = 0;
        for (p, page) in queries.chunks(args.page).enumerate() {
            index.query_many(page, &mut out)?;
            found += out
                .iter()
                .enumerate()
                .filter(|(i, hits)| (p * args.page + i).is_multiple_of(2) && !hits.is_empty())
                .count();
        }
        Ok(found)
    };
    let found = pass()?;
    let mut failure = None;
    let time = median(1, args.reps, || {
        if let Err(error) = pass() {
            failure.get_or_insert(error);
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    let probes = (args.queries * index.probes_per_query()) as f64;
    Ok((
        load_s,
        probes / time.as_secs_f64(),
        found,
        args.queries.div_ceil(2),
    ))
}

/// Runs `redis-benchmark -P 16 -q -t get,set` against the server of `url` and returns its
/// `(GET, SET)` requests per second.
fn redis_benchmark(url: &str, requests: usize) -> Result<(f64, f64)> {
    let parsed = url::Url::parse(url).context("invalid Redis URL")?;
    let mut command = Command::new("redis-benchmark");
    command
        .arg("-h")
        .arg(parsed.host_str().unwrap_or("127.0.0.1"))
        .arg("-p")
        .arg(parsed.port().unwrap_or(6379).to_string())
        .args(["-P", "16", "-q", "-t", "get,set", "-n"])
        .arg(requests.to_string());
    if let Some(password) = parsed.password() {
        command.arg("-a").arg(password).arg("--no-auth-warning");
    }
    let db = parsed.path().trim_start_matches('/');
    if !db.is_empty() {
        command.arg("--dbnum").arg(db);
    }
    let output = command
        .output()
        .context("cannot run redis-benchmark (apt-get install redis-server brings it)")?;
    if !output.status.success() {
        bail!(
            "redis-benchmark failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // With -q each test ends with a line like `GET: 1234567.00 requests per second, p50=…`;
    // progress updates before it are separated by carriage returns.
    let text = String::from_utf8_lossy(&output.stdout);
    let rate = |name: &str| -> Result<f64> {
        text.split(['\r', '\n'])
            .filter_map(|line| line.trim().strip_prefix(name))
            .filter_map(|rest| rest.split_whitespace().next())
            .filter_map(|value| value.parse::<f64>().ok())
            .next_back()
            .with_context(|| format!("no {name} figure in redis-benchmark output {text:?}"))
    };
    Ok((rate("GET:")?, rate("SET:")?))
}
