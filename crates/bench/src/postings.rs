//! `copytrace-bench postings`: what the compact candidate source (winnowed k-gram postings in
//! Redis, `copytrace_matcher::postings`) costs as the library grows, per library size.
//!
//! For each size `N`, in a fresh Redis namespace: `N − 1,000` works of `--chars` characters
//! (the permuted prose of `copytrace-bench scale`: distinct works with real text's character
//! frequencies) are loaded in bulk, then the last 1,000 are added as `library add` adds new
//! works, appended together (timed: `add_1000_s`), and 100 of them filed again one by one as a
//! changed work is, each replacing its postings (timed: `refile_100_s`). Then `--pages` pages are looked up one at a time, one
//! in four carrying 1,200 characters of a random work inside 600 of its own, the others
//! unrelated text of the same kind: each page is winnowed, its distinct hashes read in one
//! batch, and the consistent-diagonal rule applied, which is the whole candidate stage of the
//! `kgram` source.
//!
//! Per size it prints `RESULT works=N postings_per_char=… redis_bytes_per_char=… load_s=…
//! add_1000_s=… refile_100_s=… pages_per_s_core=… keys_per_page=… commands_per_page=…
//! round_trips_per_page=… redis_cpu_ms_per_page=… copies_found=… unrelated_with_candidates=…`.
//! `redis_bytes_per_char` is Redis's `used_memory` growth over the library's canonical
//! characters; commands are counted by `INFO commandstats`, Redis CPU by `INFO cpu`, and pages
//! per second per core by this process's CPU time for the lookups alone (a verifier runs after
//! this stage in `match`, and only for pages with candidates).

use std::time::Instant;

use anyhow::{Context, Result, ensure};
use copytrace_fingerprint::normalize;
use copytrace_fingerprint::pinyin::syllable_ids;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::PostingConfig;
use copytrace_matcher::postings::{
    PostingIndex, consistent_works, distinct_hashes, text_keys, work_keys,
};

use crate::scale::{Texts, cpu_seconds, redis_figures};

/// Works added last, timed.
const TIMED_WORKS: usize = 1000;
/// Works filed again one by one (a changed text), timed.
const REFILED_WORKS: usize = 100;

/// Options of `copytrace-bench postings`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Library sizes, in works (each at least 1,000).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    sizes: Vec<usize>,
    /// Characters per work.
    #[arg(long, default_value_t = 3000)]
    chars: usize,
    /// Pages looked up per size.
    #[arg(long, default_value_t = 2000)]
    pages: usize,
    /// Redis server (its namespaces `bench-postings-…` are deleted afterwards).
    #[arg(long)]
    redis_url: String,
}

/// Runs the measurement for every size.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.sizes.iter().all(|&n| n >= TIMED_WORKS),
        "every size must be at least {TIMED_WORKS} works"
    );
    ensure!(args.chars >= 2000, "--chars must be at least 2,000");
    let texts = Texts::new();
    for &works in &args.sizes {
        measure(args, &texts, works)?;
    }
    Ok(())
}

/// Sum of `calls=` over every command in `INFO commandstats`.
fn redis_commands(url: &str) -> Result<u64> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut connection)?;
    let mut calls = 0;
    for line in stats.lines().filter(|l| l.starts_with("cmdstat_")) {
        let field = line
            .split([':', ','])
            .find_map(|f| f.strip_prefix("calls="))
            .context("calls= in INFO commandstats")?;
        calls += field.parse::<u64>()?;
    }
    Ok(calls)
}

fn measure(args: &Args, texts: &Texts, works: usize) -> Result<()> {
    let config = PostingConfig::default();
    let prefix = format!("bench-postings-{}-{works}", std::process::id());
    let index = RedisIndex::connect(&args.redis_url, &prefix, 3)?;
    let work_text = |i: usize| texts.text(i as u64 + 1, args.chars);
    // Canonical characters of every work filed: what the bytes are divided by.
    let library_chars = std::cell::Cell::new(0usize);
    let keys_of = |i: usize| {
        let chars = normalize(&work_text(i)).chars;
        library_chars.set(library_chars.get() + chars.len());
        work_keys(&chars, &config)
    };
    let (memory_before, _) = redis_figures(&args.redis_url)?;
    // About a tenth of a posting per character and projection.
    let expected = (works * args.chars) as u64 / 5;
    let mut postings = index.postings_sized(&config, expected)?;

    let started = Instant::now();
    let bulk = works - TIMED_WORKS;
    postings.load((0..bulk).map(|i| (i as i64 + 1, keys_of(i))))?;
    let load_s = started.elapsed().as_secs_f64();
    // Added as `library add` adds new works: their keys computed, then appended together.
    let started = Instant::now();
    let added: Vec<(i64, Vec<_>)> = (bulk..works).map(|i| (i as i64 + 1, keys_of(i))).collect();
    postings.append_new_works(&added)?;
    let add_s = started.elapsed().as_secs_f64();
    // Changed works are filed again one by one, each replacing its postings bucket by bucket.
    let started = Instant::now();
    for (id, keys) in added.iter().take(REFILED_WORKS) {
        postings.insert_work(*id, keys)?;
    }
    let refile_s = started.elapsed().as_secs_f64();
    let (memory_after, redis_cpu_before) = redis_figures(&args.redis_url)?;
    let library_chars = library_chars.get();
    let filed = postings.len()?;

    // Pages: a copy inside text of its own in one of four, unrelated text otherwise.
    let mut state = 0x5eed_u64 + works as u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pages: Vec<(Option<i64>, String)> = (0..args.pages)
        .map(|p| {
            let own = texts.text(1_000_000_000 + p as u64, 1800);
            if p % 4 == 0 {
                let work = (next() % works as u64) as usize;
                let text: Vec<char> = work_text(work).chars().collect();
                let start = (next() % (text.len() - 1200) as u64) as usize;
                let copy: String = text[start..start + 1200].iter().collect();
                let own: Vec<char> = own.chars().collect();
                let page = format!(
                    "{}{copy}{}",
                    own[..300].iter().collect::<String>(),
                    own[300..600].iter().collect::<String>()
                );
                (Some(work as i64 + 1), page)
            } else {
                (None, own)
            }
        })
        .collect();

    let commands_before = redis_commands(&args.redis_url)?;
    let cpu_before = cpu_seconds()?;
    let (mut keys_total, mut found, mut copies, mut noisy) = (0usize, 0usize, 0usize, 0usize);
    let mut answers = Vec::new();
    for (planted, page) in &pages {
        let chars = normalize(page).chars;
        let keys = text_keys(&chars, &syllable_ids(&chars), &config);
        let hashes = distinct_hashes(&keys);
        keys_total += hashes.len();
        postings.lookup(&hashes, config.common, &mut answers)?;
        let candidates = consistent_works(&keys, &hashes, &answers, &config);
        match planted {
            Some(work) => {
                copies += 1;
                found += usize::from(candidates.iter().any(|(w, _)| w == work));
            }
            None => noisy += usize::from(!candidates.is_empty()),
        }
    }
    let cpu = cpu_seconds()? - cpu_before;
    let commands = redis_commands(&args.redis_url)? - commands_before;
    let (_, redis_cpu_after) = redis_figures(&args.redis_url)?;
    let pages_n = pages.len() as f64;
    println!(
        "RESULT works={works} postings_per_char={:.3} redis_bytes_per_char={:.2} load_s={load_s:.1} \
         add_1000_s={add_s:.1} refile_100_s={refile_s:.1} pages_per_s_core={:.0} keys_per_page={:.0} \
         commands_per_page={:.2} round_trips_per_page=1 redis_cpu_ms_per_page={:.3} \
         copies_found={found}/{copies} unrelated_with_candidates={noisy}/{}",
        filed as f64 / library_chars as f64,
        memory_after.saturating_sub(memory_before) as f64 / library_chars as f64,
        pages_n / cpu.max(1e-9),
        keys_total as f64 / pages_n,
        // The first `INFO commandstats` is counted in the difference, the second not yet.
        commands.saturating_sub(1) as f64 / pages_n,
        (redis_cpu_after - redis_cpu_before) * 1000.0 / pages_n,
        pages.len() - copies,
    );
    index.delete_namespace()?;
    Ok(())
}
