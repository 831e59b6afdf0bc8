//! `copytrace-bench incremental`: what adding works to a large library costs with incremental
//! matching, against a full re-match of every stored page, in the same run, on SQLite.
//!
//! The library has `--works` works of 3,000 characters and the store `--pages` pages of 1,500
//! characters. Texts are uniform random draws of 5,120 common CJK characters with punctuation
//! (every text distinct, so no page shares a passage with a work by accident and the matcher's
//! cost is that of ordinary pages); 1 % of the pages copy 800 characters of a library work
//! inside their own text, and each of the `--added` new works is copied by 3 pages. Steps:
//!
//! 1. **full match**: every page matched against the library (`MatchEngine`, as `copytrace
//!    match` does), which also stores each page's sketch: the cost a library change had before
//!    incremental matching (every page against the whole library);
//! 2. **incremental**: the new works added (`add_works`: fingerprinting, storing, and marking
//!    the pages whose sketches collide), then the due pages matched.
//!
//! It checks that the incremental pass found every page copying a new work, and prints
//! `RESULT works=… pages=… full_s=… incremental_s=… speedup=… candidates=… found=…/…`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, ensure};
use copytrace_fingerprint::FingerprintConfig;
use copytrace_matcher::MatchConfig;
use copytrace_service::MatchEngine;
use copytrace_service::index::IndexSource;
use copytrace_service::library::{
    LibraryFile, WORKS_PER_BATCH, add_works, prepare_work, store_works,
};
use copytrace_service::matching::{DueCursor, PageOutcome};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{MatchFilter, Store};

use crate::fixtures::{library_file, store_page};

/// Options of `copytrace-bench incremental`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Works in the library before the addition.
    #[arg(long, default_value_t = 10_000)]
    works: usize,
    /// Stored pages.
    #[arg(long, default_value_t = 100_000)]
    pages: usize,
    /// Works added.
    #[arg(long, default_value_t = 10)]
    added: usize,
}

/// Random text: a xorshift walk over 5,120 CJK characters, a comma every 20 and a full stop
/// every 60 characters.
struct Prose(u64);

impl Prose {
    fn text(&mut self, chars: usize) -> String {
        let mut text = String::with_capacity(chars * 3 + chars / 10);
        for i in 0..chars {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            text.push(char::from_u32(0x4E00 + (self.0 % 0x1400) as u32).expect("CJK"));
            if i % 20 == 19 {
                text.push(if i % 60 == 59 { '。' } else { '，' });
            }
        }
        text
    }
}

/// 800 characters from the middle of `work`, inside 350 characters of the page's own on
/// either side.
fn copy_page(prose: &mut Prose, work: &str) -> String {
    let start = work.char_indices().nth(1000).map_or(0, |(i, _)| i);
    let end = work.char_indices().nth(1800).map_or(work.len(), |(i, _)| i);
    format!(
        "{}\n{}\n{}",
        prose.text(350),
        &work[start..end],
        prose.text(350)
    )
}

/// Runs the measurement.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.works > 0 && args.pages > 0 && args.added > 0,
        "sizes must be positive"
    );
    tokio::runtime::Runtime::new()?.block_on(measure(args))
}

async fn measure(args: &Args) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("incremental.db").display());
    let store = SqliteStore::connect(&url).await?;
    store.migrate().await?;
    let store: Arc<dyn Store> = Arc::new(store);
    let config = FingerprintConfig::default();
    let mut prose = Prose(0x9E37_79B9_7F4A_7C15);

    let started = Instant::now();
    let holder = store.ensure_rights_holder("bench").await?;
    let mut library = Vec::with_capacity(args.works);
    for batch_start in (0..args.works).step_by(WORKS_PER_BATCH) {
        let mut prepared = Vec::new();
        for n in batch_start..(batch_start + WORKS_PER_BATCH).min(args.works) {
            let text = prose.text(3000);
            prepared.push(prepare_work(
                holder,
                &library_file(format!("work-{n:05}"), text.clone()),
                &config,
            )?);
            library.push(text);
        }
        store_works(store.as_ref(), &prepared).await?;
    }
    let added: Vec<String> = (0..args.added).map(|_| prose.text(3000)).collect();
    let now = chrono::Utc::now();
    let mut copies_of_added = 0;
    for n in 0..args.pages {
        let text = if n % 100 == 0 {
            copy_page(&mut prose, &library[(n / 100 * 7919) % library.len()])
        } else if n % 1000 == 1 && copies_of_added < args.added * 3 {
            copies_of_added += 1;
            copy_page(&mut prose, &added[copies_of_added % args.added])
        } else {
            prose.text(1500)
        };
        store_page(store.as_ref(), n, text, now).await?;
    }
    ensure!(
        copies_of_added == args.added * 3,
        "--pages is too small for the copies"
    );
    println!(
        "setup: {} works, {} pages ({copies_of_added} copying the works to add) in {:.0} s",
        args.works,
        args.pages,
        started.elapsed().as_secs_f64()
    );

    // 1. Every page against the whole library.
    let engine = MatchEngine::new(store.clone(), IndexSource::Memory, MatchConfig::default());
    let started = Instant::now();
    engine.preload().await?;
    let load_s = started.elapsed().as_secs_f64();
    let (full_pages, _) = match_due(&engine).await?;
    let full_s = started.elapsed().as_secs_f64();
    println!("full match: {full_pages} pages in {full_s:.1} s (library loaded in {load_s:.1} s)");

    // 2. Add the works and match what they mark.
    let files: Vec<LibraryFile> = added
        .iter()
        .enumerate()
        .map(|(n, text)| library_file(format!("added-{n:02}"), text.clone()))
        .collect();
    let started = Instant::now();
    let report = add_works(store.as_ref(), "bench", &files, None, &config).await?;
    let add_s = started.elapsed().as_secs_f64();
    let (due_pages, _) = match_due(&engine).await?;
    let incremental_s = started.elapsed().as_secs_f64();
    let added_ids: Vec<i64> = report.works.iter().map(|w| w.work_id).collect();
    let found = store
        .list_matches(&MatchFilter::default())
        .await?
        .iter()
        .filter(|m| added_ids.contains(&m.work_id))
        .count();
    println!(
        "incremental: added {} works in {add_s:.1} s ({} sketches read, {} candidates), \
         matched {due_pages} pages; {incremental_s:.1} s in all; found {found} of \
         {copies_of_added} copies of the new works",
        args.added, report.matching.pages_scanned, report.matching.candidates
    );
    println!(
        "RESULT works={} pages={} full_s={full_s:.1} incremental_s={incremental_s:.2} \
         speedup={:.0} candidates={} found={found}/{copies_of_added}",
        args.works,
        args.pages,
        full_s / incremental_s,
        report.matching.candidates
    );
    Ok(())
}

/// Matches every due page; returns how many were matched and how many copy something.
async fn match_due(engine: &MatchEngine) -> Result<(u64, u64)> {
    let mut cursor = DueCursor::default();
    let (mut pages, mut infringing) = (0, 0);
    while let Some(outcome) = engine.match_next_due(&mut cursor).await? {
        if let PageOutcome::Recorded { matches, .. } = outcome {
            pages += 1;
            infringing += u64::from(matches > 0);
        }
    }
    Ok((pages, infringing))
}
