//! `copytrace-bench scale`: what a match worker over the shared Redis indexes costs as the
//! library grows, per library size (1,000, 10,000 and 100,000 works by default).
//!
//! For each size `N`, in a fresh SQLite store and a fresh Redis namespace:
//!
//! 1. **Library.** `N − 1,000` works of `--chars` characters are stored and the Redis indexes
//!    built from them (`index rebuild`'s code); then the last 1,000 works are added the way
//!    `copytrace library add --redis-url` adds them (fingerprinting, storing, re-indexing in
//!    Redis): timed as `add_1000_s`. What the works are is `--library`'s choice:
//!    - `prose` (the default): chapters cut from the bundled Chinese prose
//!      (`corpus::chinese_prose`), each passed through its own permutation of the CJK
//!      characters that prose uses: 100,000 distinct works that keep real text's character
//!      frequencies, sentence lengths and punctuation, and share nothing, not even a name;
//!    - `novels`: chapters of novels of 20 to 200 chapters, of at least `--chars` characters,
//!      each chapter's prose through its own permutation but sharing what a real catalog's
//!      chapters share, left as it is: the novel's cast (names from pools common to all
//!      novels) in every chapter, stock phrases (`倒吸一口凉气`) across novels, and
//!      boilerplate (headings, authors' notes, a platform's first-publication line under a
//!      sixth of the library). See `scale::novels`.
//! 2. **Pages.** `--pages` pages: one in four carries 1,200 characters of a random work inside
//!    600 of its own; the others are unrelated text of the same kind (with `novels`: chapters
//!    of novels that are not in the library, so the shared names, phrases and boilerplate
//!    tempt the candidate sources).
//! 3. **Matching.** A fresh process (`copytrace-bench scale-match`) loads the matcher over Redis
//!    exactly as `copytrace match --redis-url` does and matches every page, in batches of 32
//!    on one task (`MatchEngine::match_pages`, as `copytrace match --parallel 1`); it reports
//!    its peak resident memory (`VmHWM`), its CPU time and the Redis requests (round trips)
//!    and commands it sent (`copytrace_index_redis::requests` and `commands`: a
//!    pipeline of `n` commands is one request and `n` commands, an `MGET` one command).
//! 4. **Verdicts.** The matches recorded in the store are compared with the copies planted.
//!
//! Per size it prints `RESULT works=N rss_mb=… pages_per_s_core=… redis_bytes_per_char=…
//! add_1000_s=…` with, after those, the Redis commands and round trips per page, Redis's own
//! CPU per page (measured while loading too, which reads no index), the time and memory of
//! loading the matcher, the planted pages matched to the work they copy (`found=…/…`), the
//! unplanted pages given any match (`false=…/…`), the matches of a planted page against
//! another work than its own (`wrong_work=…`), and the candidates verified per page (and of
//! those, the ones read sentence by sentence). Pages per second per core count the matching's
//! CPU only, not the loading's; Redis bytes per character count the library's characters as
//! stored.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use copytrace_fingerprint::FingerprintConfig;
use copytrace_matcher::MatchConfig;
use copytrace_service::MatchEngine;
use copytrace_service::NoProgress;
use copytrace_service::index::{IndexSource, open_redis_index, rebuild_redis_index};
use copytrace_service::library::{
    LibraryFile, WORKS_PER_BATCH, add_works, prepare_work, store_works,
};
use copytrace_service::matching::{DueCursor, PageOutcome};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{MatchFilter, Store};

use crate::corpus;
use crate::fixtures::{library_file, store_page};

mod novels;

use novels::{Novels, UNLISTED};

/// Works added last, timed.
const TIMED_WORKS: usize = 1000;

/// Options of `copytrace-bench scale`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Library sizes, in works (each at least 1,000).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    sizes: Vec<usize>,
    /// Characters per work.
    #[arg(long, default_value_t = 3000)]
    chars: usize,
    /// Pages matched per size.
    #[arg(long, default_value_t = 2000)]
    pages: usize,
    /// Redis server (its namespaces `scale-…` are deleted afterwards).
    #[arg(long)]
    redis_url: String,
    /// Directory for the SQLite stores (default: a temporary one).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// What the works are: chapters of permuted prose sharing nothing, or chapters of novels
    /// sharing names, stock phrases and boilerplate (see the module documentation).
    #[arg(long, value_enum, default_value_t = LibraryKind::Prose)]
    library: LibraryKind,
}

/// The library `copytrace-bench scale --library` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LibraryKind {
    /// Every work a run of the bundled prose through its own permutation.
    Prose,
    /// Works are chapters of novels (`scale::novels`).
    Novels,
}

/// The texts of the works and of the pages.
enum Library {
    Prose(Texts),
    Novels(Novels),
}

impl Library {
    /// Work `n`, of `chars` characters (prose) or at least `chars` (novels).
    fn work(&self, n: usize, chars: usize) -> String {
        match self {
            Library::Prose(texts) => texts.text(n as u64, chars),
            Library::Novels(novels) => novels.work(n, chars),
        }
    }

    /// Text of page `n` that copies no work, of `chars` characters (prose) or at least `chars`
    /// (novels: a chapter of a novel outside the library, 50 of its chapters on the pages).
    fn unrelated(&self, n: usize, chars: usize) -> String {
        match self {
            Library::Prose(texts) => texts.text(1_000_000_000 + n as u64, chars),
            Library::Novels(novels) => novels.chapter(UNLISTED + n as u64 / 50, n % 50, chars),
        }
    }
}

/// Options of `copytrace-bench scale-match` (run by `scale`).
#[derive(Debug, clap::Args)]
pub struct MatchArgs {
    #[arg(long)]
    db: String,
    #[arg(long)]
    redis_url: String,
    #[arg(long)]
    prefix: String,
}

/// Texts made from the bundled prose, distinct per seed (see the module documentation).
pub(crate) struct Texts {
    chars: Vec<char>,
    /// The CJK characters the prose uses, in order of first use.
    alphabet: Vec<char>,
    /// Where each prose character sits in `alphabet` (`u32::MAX` for the rest).
    position: std::collections::HashMap<char, u32>,
}

impl Texts {
    pub(crate) fn new() -> Texts {
        let chars: Vec<char> = corpus::chinese_prose(4 << 20).chars().collect();
        let mut alphabet = Vec::new();
        let mut position = std::collections::HashMap::new();
        for &c in &chars {
            if ('\u{4e00}'..='\u{9fff}').contains(&c) && !position.contains_key(&c) {
                position.insert(c, alphabet.len() as u32);
                alphabet.push(c);
            }
        }
        Texts {
            chars,
            alphabet,
            position,
        }
    }

    /// `len` characters from a place `seed` picks, through the permutation of `seed`.
    pub(crate) fn text(&self, seed: u64, len: usize) -> String {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut permutation = self.alphabet.clone();
        for i in (1..permutation.len()).rev() {
            permutation.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let start = (next() % (self.chars.len() - len) as u64) as usize;
        self.chars[start..start + len]
            .iter()
            .map(|c| match self.position.get(c) {
                Some(&p) => permutation[p as usize],
                None => *c,
            })
            .collect()
    }
}

/// Runs the measurement for every size.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.sizes.iter().all(|&n| n >= TIMED_WORKS),
        "every size must be at least {TIMED_WORKS} works"
    );
    ensure!(args.chars >= 2000, "--chars must be at least 2,000");
    let temporary = tempfile::tempdir()?;
    let dir = args.dir.clone().unwrap_or_else(|| temporary.path().into());
    std::fs::create_dir_all(&dir)?;
    let texts = Texts::new();
    let library = match args.library {
        LibraryKind::Prose => Library::Prose(texts),
        LibraryKind::Novels => {
            let most = args.sizes.iter().copied().max().unwrap_or(TIMED_WORKS);
            Library::Novels(Novels::new(texts, most))
        }
    };
    let runtime = tokio::runtime::Runtime::new()?;
    for &works in &args.sizes {
        runtime.block_on(measure(args, &library, works, &dir))?;
    }
    Ok(())
}

/// Calls and microseconds spent per command so far, from `INFO commandstats`.
pub(crate) fn command_stats(url: &str) -> Result<std::collections::BTreeMap<String, (u64, u64)>> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut connection)?;
    let mut stats = std::collections::BTreeMap::new();
    for line in info.lines() {
        let Some((name, fields)) = line
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        let field = |key: &str| {
            fields
                .split(',')
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        stats.insert(name.to_owned(), (field("calls"), field("usec")));
    }
    Ok(stats)
}

/// `used_memory` and the CPU seconds Redis has used, from `INFO`.
pub(crate) fn redis_figures(url: &str) -> Result<(u64, f64)> {
    let mut connection = redis::Client::open(url)?.get_connection()?;
    let info: String = redis::cmd("INFO").arg("memory").query(&mut connection)?;
    let cpu: String = redis::cmd("INFO").arg("cpu").query(&mut connection)?;
    let field = |text: &str, name: &str| -> Result<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .context("a field of INFO")?
            .trim()
            .parse::<f64>()
            .context("a number in INFO")
    };
    let memory = field(&info, "used_memory")? as u64;
    let cpu = field(&cpu, "used_cpu_user")? + field(&cpu, "used_cpu_sys")?;
    Ok((memory, cpu))
}

async fn measure(args: &Args, library: &Library, works: usize, dir: &Path) -> Result<()> {
    let path = dir.join(format!("scale-{works}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let db = format!("sqlite://{}", path.display());
    let store = SqliteStore::connect(&db).await?;
    store.migrate().await?;
    let store: Arc<dyn Store> = Arc::new(store);
    let prefix = format!("scale-{works}-{}", std::process::id());
    let mut index = open_redis_index(&args.redis_url, &prefix)?;
    index.delete_namespace()?;
    let config = FingerprintConfig::default();
    let (memory_before, _) = redis_figures(&args.redis_url)?;

    // 1. The library: all but the last 1,000 works stored, the Redis indexes built.
    let started = Instant::now();
    let holder = store.ensure_rights_holder("bench").await?;
    let bulk = works - TIMED_WORKS;
    let mut library_chars = 0;
    for batch_start in (0..bulk).step_by(WORKS_PER_BATCH) {
        let mut prepared = Vec::new();
        for n in batch_start..(batch_start + WORKS_PER_BATCH).min(bulk) {
            let text = library.work(n, args.chars);
            library_chars += text.chars().count();
            prepared.push(prepare_work(
                holder,
                &library_file(format!("w{n:06}"), text),
                &config,
            )?);
        }
        store_works(store.as_ref(), &prepared).await?;
    }
    let stored_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let built = rebuild_redis_index(
        store.as_ref(),
        &mut index,
        &MatchConfig::default(),
        &NoProgress,
    )
    .await?;
    let built_s = started.elapsed().as_secs_f64();
    let files: Vec<LibraryFile> = (bulk..works)
        .map(|n| library_file(format!("w{n:06}"), library.work(n, args.chars)))
        .collect();
    library_chars += files
        .iter()
        .map(|f| f.file.text.chars().count())
        .sum::<usize>();
    let started = Instant::now();
    for batch in files.chunks(WORKS_PER_BATCH) {
        let report = add_works(store.as_ref(), "bench", batch, Some(&mut index), &config).await?;
        ensure!(
            matches!(
                report.index,
                copytrace_service::library::IndexUpdate::Updated
            ),
            "the Redis index was not kept in step: {:?}",
            report.index
        );
    }
    let add_1000_s = started.elapsed().as_secs_f64();
    let (memory_after, _) = redis_figures(&args.redis_url)?;
    let redis_bytes_per_char =
        memory_after.saturating_sub(memory_before) as f64 / library_chars as f64;
    println!(
        "{works} works: stored {bulk} in {stored_s:.0} s, Redis indexes built in {built_s:.0} s \
         ({} windows), last {TIMED_WORKS} added in {add_1000_s:.1} s; Redis holds {:.0} MB",
        built.windows,
        memory_after.saturating_sub(memory_before) as f64 / 1e6
    );

    // 2. Pages: the work each copies, by URL.
    let now = chrono::Utc::now();
    let mut planted = std::collections::HashMap::new();
    for n in 0..args.pages {
        let text = if n % 4 == 0 {
            // Copies of distinct works (as many at every size: 7,919 is prime to every size),
            // so the worker prepares as many works for verification at 1,000 works as at
            // 100,000 (stepping by `n`, a multiple of four, copied only 250 distinct works of
            // 1,000).
            let work = ((n / 4) as u64).wrapping_mul(7919) % works as u64;
            planted.insert(
                format!("http://pirate.example/{n}.html"),
                format!("w{work:06}"),
            );
            let copy: String = library
                .work(work as usize, args.chars)
                .chars()
                .skip(args.chars / 4)
                .take(1200)
                .collect();
            let own = library.unrelated(n, 600);
            let (before, after) = own.split_at(own.char_indices().nth(300).map_or(0, |(i, _)| i));
            format!("{before}\n{copy}\n{after}")
        } else {
            library.unrelated(n, 1500)
        };
        store_page(store.as_ref(), n, text, now).await?;
    }
    drop(store);

    // 3. Matching, in a process of its own.
    let (_, redis_cpu_before) = redis_figures(&args.redis_url)?;
    let commands_before = command_stats(&args.redis_url)?;
    let output = Command::new(std::env::current_exe()?)
        .args(["scale-match", "--db", &db, "--redis-url", &args.redis_url])
        .args(["--prefix", &prefix])
        .output()
        .context("running copytrace-bench scale-match")?;
    let (_, redis_cpu_after) = redis_figures(&args.redis_url)?;
    let commands_after = command_stats(&args.redis_url)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "scale-match failed: {}{}",
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let line = stdout
        .lines()
        .find(|l| l.starts_with("MATCHED "))
        .context("scale-match printed no MATCHED line")?;
    let value = |name: &str| -> Result<f64> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .with_context(|| format!("{name} in {line}"))?
            .parse()
            .with_context(|| format!("{name} in {line}"))
    };
    let (pages, cpu_s, peak_kib) = (value("pages")?, value("cpu_s")?, value("peak_kib")?);
    let (requests, commands) = (value("requests")?, value("commands")?);
    let (load_s, load_kib) = (value("load_s")?, value("load_kib")?);
    let (candidates, laundered) = (value("candidates")?, value("laundered")?);
    println!("  matching: {line}");
    // Redis's own time in the commands matching sent (`INFO commandstats`), per command: the
    // share of its CPU the pages cost, without its idle housekeeping.
    let mut command_ms = 0.0;
    let mut spent = Vec::new();
    for (name, &(calls, usec)) in &commands_after {
        let (calls_before, usec_before) = commands_before.get(name).copied().unwrap_or((0, 0));
        let (calls, usec) = (calls - calls_before, usec - usec_before);
        if calls > 0 && name != "info" {
            command_ms += usec as f64 / 1000.0;
            spent.push(format!(
                "{name}={:.3}ms/page({:.2}/page)",
                usec as f64 / 1000.0 / pages,
                calls as f64 / pages
            ));
        }
    }
    println!("  redis commands: {}", spent.join(" "));
    index.delete_namespace()?;

    // 4. The verdicts: a planted page is found when it is matched to the work it copies; any
    // other match is false, on an unrelated page or against another work.
    let store = SqliteStore::connect(&db).await?;
    let (mut found, mut false_pages, mut wrong_work) = (HashSet::new(), HashSet::new(), 0);
    for record in store.list_matches(&MatchFilter::default()).await? {
        match planted.get(&record.page_url) {
            Some(work) if *work == record.work_external_id => {
                found.insert(record.page_url);
            }
            Some(_) => wrong_work += 1,
            None => {
                false_pages.insert(record.page_url);
            }
        }
    }
    let (found, false_pages, planted) = (found.len(), false_pages.len(), planted.len());
    println!(
        "RESULT works={works} rss_mb={:.0} pages_per_s_core={:.1} redis_bytes_per_char={:.1} \
         add_1000_s={add_1000_s:.1} redis_commands_per_page={:.1} \
         redis_round_trips_per_page={:.1} redis_cpu_ms_per_page={:.1} \
         redis_command_ms_per_page={:.2} load_s={load_s:.1} load_rss_mb={:.0} found={found}/{planted} \
         false={false_pages}/{} wrong_work={wrong_work} \
         candidates_per_page={:.2} laundered_per_page={:.2}",
        peak_kib * 1024.0 / 1e6,
        pages / cpu_s,
        redis_bytes_per_char,
        commands / pages,
        requests / pages,
        (redis_cpu_after - redis_cpu_before) * 1000.0 / pages,
        command_ms / pages,
        load_kib * 1024.0 / 1e6,
        (pages as usize).saturating_sub(planted),
        candidates / pages,
        laundered / pages,
    );
    Ok(())
}

/// Loads the matcher over the Redis indexes under `--prefix`, then matches every due page of
/// `--db`, a batch at a time on one task, and prints `MATCHED pages=… infringing=… mirrors=…
/// cpu_s=… wall_s=… peak_kib=… requests=… commands=… load_s=… load_cpu_s=… load_kib=…` (CPU, time,
/// Redis requests and commands of the matching alone; peak memory of the whole process, and at
/// the end of loading; `mirrors`: pages that reused the verdict of a page with their text).
pub fn run_match(args: &MatchArgs) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let store = SqliteStore::connect(&args.db).await?;
        let store: Arc<dyn Store> = Arc::new(store);
        let source = IndexSource::Redis {
            url: args.redis_url.clone(),
            prefix: args.prefix.clone(),
        };
        let engine = MatchEngine::new(store, source, MatchConfig::default());
        let started = Instant::now();
        engine.preload().await?;
        let load_s = started.elapsed().as_secs_f64();
        let (load_cpu_s, load_kib) = (cpu_seconds()?, crate::export::status_kib("VmHWM:")?);
        let (load_requests, load_commands) = (
            copytrace_index_redis::requests(),
            copytrace_index_redis::commands(),
        );
        let verified_before = copytrace_matcher::verification_counts();
        let started = Instant::now();
        let mut cursor = DueCursor::default();
        let (mut pages, mut infringing, mut mirrors) = (0u64, 0u64, 0u64);
        while let Some(outcome) = engine.match_next_due(&mut cursor).await? {
            if let PageOutcome::Recorded {
                matches, mirror_of, ..
            } = outcome
            {
                pages += 1;
                infringing += u64::from(matches > 0);
                mirrors += u64::from(mirror_of.is_some());
            }
        }
        let wall_s = started.elapsed().as_secs_f64();
        let verified = copytrace_matcher::verification_counts();
        println!(
            "MATCHED pages={pages} infringing={infringing} mirrors={mirrors} cpu_s={:.2} \
             wall_s={wall_s:.2} \
             peak_kib={} requests={} commands={} load_s={load_s:.2} load_cpu_s={load_cpu_s:.2} \
             load_kib={load_kib} verified_pages={} candidates={} laundered={}",
            cpu_seconds()? - load_cpu_s,
            crate::export::status_kib("VmHWM:")?,
            copytrace_index_redis::requests() - load_requests,
            copytrace_index_redis::commands() - load_commands,
            verified.pages - verified_before.pages,
            verified.candidates - verified_before.candidates,
            verified.laundered - verified_before.laundered,
        );
        Ok(())
    })
}

/// User and system CPU seconds of this process so far, from `/proc/self/stat`.
pub(crate) fn cpu_seconds() -> Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").context("CPU time (Linux only)")?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("a /proc stat line")?
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>()? + fields[12].parse::<f64>()?;
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Ok(ticks / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_distinct_per_seed_and_the_same_for_one_seed() {
        let texts = Texts::new();
        let a = texts.text(1, 3000);
        assert_eq!(a, texts.text(1, 3000));
        assert_eq!(a.chars().count(), 3000);
        let b = texts.text(2, 3000);
        let shared = a
            .chars()
            .collect::<Vec<_>>()
            .windows(8)
            .filter(|w| b.contains(&w.iter().collect::<String>()))
            .count();
        assert!(shared < 30, "{shared} eight-character runs shared");
    }
}
