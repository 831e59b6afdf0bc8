//! `copytrace-bench index`: the SimHash index against a brute-force popcount scan, same data,
//! same run.
//!
//! The library is `n` fingerprints in works of 1,000 windows: random 64-bit values, with every
//! 20th a near copy (0..=k+1 bits off) of an earlier one, as shared text produces. Half of the
//! queries are planted at a uniform distance 0..=k+1 from an indexed fingerprint, half are
//! random. Or both come from files (`--fingerprints`, `--query-file`: little-endian `u64`s),
//! which is how `bench/peers/simhash_index.py` runs this index on a peer's signatures.
//!
//! Throughput is queries per second of wall time, each query collecting its hits into a
//! reused `Vec`. Memory is the index's own heap accounting (capacities), cross-checked with the
//! growth of the process's resident set while building.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use copytrace_fingerprint::cpu;
use copytrace_matcher::{Hit, Index, SegmentRef, SimHashIndex};

use crate::timing::median_ratio;

/// Options of `copytrace-bench index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Indexed fingerprints (ignored with --fingerprints).
    #[arg(long, default_value_t = 1_000_000)]
    n: usize,
    /// Queries timed through the index (ignored with --query-file).
    #[arg(long, default_value_t = 200_000)]
    queries: usize,
    /// Hamming distance answered.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Blocks per fingerprint (default k + 1: plain pigeonhole; more gives permuted tables).
    #[arg(long)]
    blocks: Option<u32>,
    /// Queries timed through the brute-force scan (each scans all n fingerprints).
    #[arg(long, default_value_t = 400)]
    brute_queries: usize,
    /// Queries whose hits are checked against the brute-force scan for recall.
    #[arg(long, default_value_t = 2_000)]
    recall_sample: usize,
    /// Timed repetitions of the index queries (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
    /// Library fingerprints from a file of little-endian u64s instead of generated ones.
    #[arg(long)]
    fingerprints: Option<PathBuf>,
    /// Queries from a file of little-endian u64s instead of generated ones.
    #[arg(long)]
    query_file: Option<PathBuf>,
    /// Where the snapshot is written and read back (default: the temporary directory).
    #[arg(long)]
    snapshot: Option<PathBuf>,
}

const WORK_SIZE: usize = 1_000;
/// Fingerprints per `query_many` call: about one page's windows.
const PAGE: usize = 64;

use copytrace_fingerprint::minhash::splitmix64 as splitmix;

fn flip_bits(value: u64, count: u32, state: &mut u64) -> u64 {
    let mut mask = 0u64;
    while mask.count_ones() < count {
        mask |= 1 << (splitmix(state) % 64);
    }
    value ^ mask
}

fn read_u64s(path: &PathBuf) -> anyhow::Result<Vec<u64>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if !bytes.len().is_multiple_of(8) {
        bail!(
            "{}: length {} is not a multiple of 8",
            path.display(),
            bytes.len()
        );
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// Resident set size of this process, in bytes (Linux; `None` elsewhere).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Row `i` is window `i % 1000` of work `i / 1000`.
fn segment(row: usize) -> SegmentRef {
    SegmentRef {
        work_id: (row / WORK_SIZE) as i64,
        ordinal: (row % WORK_SIZE) as u32,
    }
}

fn run_queries(index: &SimHashIndex, queries: &[u64]) -> usize {
    let mut hits: Vec<Hit> = Vec::with_capacity(64);
    let mut total = 0;
    for query in queries {
        hits.clear();
        index.query(query, &mut hits).expect("in-memory index");
        total += hits.len();
    }
    total
}

/// Queries in batches of [`PAGE`] through `query_many`, as the matcher queries a page.
fn run_batched(index: &SimHashIndex, queries: &[u64]) -> usize {
    let mut hits: Vec<Vec<Hit>> = Vec::new();
    let mut total = 0;
    for page in queries.chunks(PAGE) {
        index.query_many(page, &mut hits).expect("in-memory index");
        total += hits.iter().map(Vec::len).sum::<usize>();
    }
    total
}

fn run_brute(library: &[u64], queries: &[u64], k: u32) -> usize {
    let mut out = Vec::with_capacity(64);
    let mut total = 0;
    for &query in queries {
        out.clear();
        cpu::hamming_scan(query, library, k, &mut out);
        total += out.len();
    }
    total
}

/// Wall time of `work` over `queries` split between `threads` threads.
fn timed_parallel(
    threads: usize,
    queries: &[u64],
    work: impl Fn(&[u64]) -> usize + Sync,
) -> Duration {
    let chunk = queries.len().div_ceil(threads).max(1);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for part in queries.chunks(chunk) {
            let work = &work;
            scope.spawn(move || std::hint::black_box(work(part)));
        }
    });
    start.elapsed()
}

fn median_of(reps: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..reps.max(1)).map(|_| f()).collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn qps(count: usize, time: Duration) -> f64 {
    count as f64 / time.as_secs_f64()
}

/// Runs every measurement and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let k = args.k;
    let blocks = args.blocks.unwrap_or(k + 1);
    let mut state = args.seed;
    let library: Vec<u64> = match &args.fingerprints {
        Some(path) => read_u64s(path)?,
        None => {
            let mut library = Vec::with_capacity(args.n);
            for i in 0..args.n {
                let fp = if i % 20 == 19 {
                    let earlier = library[(splitmix(&mut state) % i as u64) as usize];
                    flip_bits(
                        earlier,
                        (splitmix(&mut state) % u64::from(k + 2)) as u32,
                        &mut state,
                    )
                } else {
                    splitmix(&mut state)
                };
                library.push(fp);
            }
            library
        }
    };
    let n = library.len();
    if n == 0 {
        bail!("an empty library has nothing to benchmark");
    }
    let queries: Vec<u64> = match &args.query_file {
        Some(path) => read_u64s(path)?,
        None => (0..args.queries)
            .map(|i| {
                if i % 2 == 0 {
                    let base = library[(splitmix(&mut state) % n as u64) as usize];
                    flip_bits(
                        base,
                        (splitmix(&mut state) % u64::from(k + 2)) as u32,
                        &mut state,
                    )
                } else {
                    splitmix(&mut state)
                }
            })
            .collect(),
    };
    if queries.is_empty() {
        bail!("no queries");
    }

    // Build: one insert_work per 1000-window work, then a compaction.
    let rss_before = rss_bytes();
    let start = Instant::now();
    let mut index = SimHashIndex::with_blocks(k, blocks);
    for (w, chunk) in library.chunks(WORK_SIZE).enumerate() {
        let windows: Vec<(u32, u64)> = chunk
            .iter()
            .enumerate()
            .map(|(i, &fp)| (i as u32, fp))
            .collect();
        index.insert_work(w as i64, &windows)?;
    }
    index.compact();
    let build = start.elapsed();
    let rss_after = rss_bytes();
    let heap = index.heap_bytes();
    let bytes_per_fp = heap as f64 / n as f64;
    let rss_per_fp = rss_before
        .zip(rss_after)
        .map(|(b, a)| a.saturating_sub(b) as f64 / n as f64);

    // Throughput: index on 1 and 2 threads, brute force on 1 and 2 threads.
    let single_1t = median_of(args.reps, || {
        timed_parallel(1, &queries, |q| run_queries(&index, q))
    });
    let index_1t = median_of(args.reps, || {
        timed_parallel(1, &queries, |q| run_batched(&index, q))
    });
    let index_2t = median_of(args.reps, || {
        timed_parallel(2, &queries, |q| run_batched(&index, q))
    });
    if run_batched(&index, &queries) != run_queries(&index, &queries) {
        bail!("query_many and query disagree");
    }
    let single_qps_1t = qps(queries.len(), single_1t);
    let brute_sample = &queries[..args.brute_queries.clamp(1, queries.len())];
    let brute_1t = timed_parallel(1, brute_sample, |q| run_brute(&library, q, k));
    let brute_2t = timed_parallel(2, brute_sample, |q| run_brute(&library, q, k));
    let (index_qps_1t, index_qps_2t) = (qps(queries.len(), index_1t), qps(queries.len(), index_2t));
    let (brute_qps_1t, brute_qps_2t) = (
        qps(brute_sample.len(), brute_1t),
        qps(brute_sample.len(), brute_2t),
    );

    // Recall and precision against the exact scan, with the distances.
    let sample = &queries[..args.recall_sample.clamp(1, queries.len())];
    let (mut expected_total, mut found_total, mut wrong) = (0usize, 0usize, 0usize);
    let mut positions = Vec::new();
    let mut hits = Vec::new();
    for &query in sample {
        positions.clear();
        cpu::hamming_scan(query, &library, k, &mut positions);
        let mut expected: Vec<(SegmentRef, u32)> = positions
            .iter()
            .map(|&p| {
                (
                    segment(p as usize),
                    (library[p as usize] ^ query).count_ones(),
                )
            })
            .collect();
        hits.clear();
        index.query(&query, &mut hits)?;
        let mut found: Vec<(SegmentRef, u32)> =
            hits.iter().map(|h| (h.segment, h.distance)).collect();
        let key = |&(s, d): &(SegmentRef, u32)| (s.work_id, s.ordinal, d);
        expected.sort_unstable_by_key(key);
        found.sort_unstable_by_key(key);
        expected_total += expected.len();
        found_total += found
            .iter()
            .filter(|f| expected.binary_search_by_key(&key(f), key).is_ok())
            .count();
        wrong += found
            .iter()
            .filter(|f| expected.binary_search_by_key(&key(f), key).is_err())
            .count();
    }
    let recall = if expected_total == 0 {
        1.0
    } else {
        found_total as f64 / expected_total as f64
    };

    // Snapshot: write, then load back and check it answers the same.
    let path = args.snapshot.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("copytrace-index-{}.snap", std::process::id()))
    });
    let start = Instant::now();
    {
        let file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        index.write_snapshot(&mut writer)?;
        std::io::Write::flush(&mut writer)?;
    }
    let write_time = start.elapsed();
    let snapshot_bytes = std::fs::metadata(&path)?.len();
    let start = Instant::now();
    let loaded = SimHashIndex::read_snapshot(std::io::BufReader::with_capacity(
        1 << 20,
        std::fs::File::open(&path)?,
    ))?;
    let load_time = start.elapsed();
    std::fs::remove_file(&path).ok();
    let check = &queries[..queries.len().min(10_000)];
    if loaded.len()? != n || run_queries(&loaded, check) != run_queries(&index, check) {
        bail!("the loaded snapshot does not answer like the index it was written from");
    }
    drop(loaded);

    // The ratio from alternated rounds (index slice, then brute-force slice, each of about the
    // same wall time), so both sides see the same load of the shared machine.
    let speedup = |threads: usize| -> f64 {
        let index_slice = &queries[..queries.len().min(20_000)];
        let brute_slice = &brute_sample[..brute_sample.len().min(40)];
        let (ratio, _, _) = median_ratio(
            1,
            9,
            || timed_parallel(threads, brute_slice, |q| run_brute(&library, q, k)),
            || timed_parallel(threads, index_slice, |q| run_batched(&index, q)),
        );
        ratio * index_slice.len() as f64 / brute_slice.len() as f64
    };
    let (speedup_1t, speedup_2t) = (speedup(1), speedup(2));
    let rows = [
        ("fingerprints (n)", format!("{n}"), String::new()),
        (
            "k / blocks / tables",
            format!("{k} / {blocks} / {}", index.tables()),
            String::new(),
        ),
        (
            "queries",
            format!("{}", queries.len()),
            format!("median of {} runs", args.reps),
        ),
        (
            "build",
            format!("{:.2} s", build.as_secs_f64()),
            format!("insert_work per {WORK_SIZE} + compact"),
        ),
        (
            "index query, 1 thread",
            format!("{single_qps_1t:.0} q/s"),
            format!("{:.0} ns/query, one query() call each", 1e9 / single_qps_1t),
        ),
        (
            "index query_many, 1 thread",
            format!("{index_qps_1t:.0} q/s"),
            format!("{:.0} ns/query, pages of {PAGE}", 1e9 / index_qps_1t),
        ),
        (
            "index query_many, 2 threads",
            format!("{index_qps_2t:.0} q/s"),
            String::new(),
        ),
        (
            "brute force, 1 thread",
            format!("{brute_qps_1t:.1} q/s"),
            format!(
                "{} queries, cpu level {}",
                brute_sample.len(),
                cpu::detected().name()
            ),
        ),
        (
            "brute force, 2 threads",
            format!("{brute_qps_2t:.1} q/s"),
            String::new(),
        ),
        (
            "speedup, 1 thread",
            format!("{speedup_1t:.0}x"),
            "per-query time ratio, median of 9 alternated rounds".into(),
        ),
        (
            "speedup, 2 threads",
            format!("{speedup_2t:.0}x"),
            String::new(),
        ),
        (
            "recall",
            format!("{recall:.6}"),
            format!(
                "{found_total}/{expected_total} on {} queries; {wrong} wrong hits",
                sample.len()
            ),
        ),
        (
            "index heap",
            format!("{:.1} MB", heap as f64 / 1e6),
            format!("{bytes_per_fp:.2} B per fingerprint"),
        ),
        (
            "RSS growth while building",
            rss_per_fp.map_or("NA".into(), |b| format!("{:.1} MB", b * n as f64 / 1e6)),
            rss_per_fp.map_or(String::new(), |b| format!("{b:.2} B per fingerprint")),
        ),
        (
            "snapshot write",
            format!("{:.1} ms", write_time.as_secs_f64() * 1e3),
            format!("{:.1} MB", snapshot_bytes as f64 / 1e6),
        ),
        (
            "snapshot load",
            format!("{:.1} ms", load_time.as_secs_f64() * 1e3),
            "read + checksum + validate".into(),
        ),
    ];
    for (name, value, note) in rows {
        println!("{name:<28} {value:>18}  {note}");
    }
    println!(
        "RESULT n={n} k={k} blocks={blocks} index_qps={index_qps_2t:.0} index_qps_1t={index_qps_1t:.0} \
         single_qps_1t={single_qps_1t:.0} \
         brute_qps={brute_qps_2t:.1} brute_qps_1t={brute_qps_1t:.1} speedup={speedup_2t:.1} \
         speedup_1t={speedup_1t:.1} recall={recall:.6} wrong_hits={wrong} bytes_per_fp={bytes_per_fp:.2} \
         rss_bytes_per_fp={} build_s={:.3} snapshot_write_ms={:.1} snapshot_load_ms={:.1}",
        rss_per_fp.map_or("NA".into(), |b| format!("{b:.2}")),
        build.as_secs_f64(),
        write_time.as_secs_f64() * 1e3,
        load_time.as_secs_f64() * 1e3,
    );
    Ok(())
}
