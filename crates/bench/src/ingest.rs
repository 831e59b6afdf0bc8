//! `copytrace-bench ingest`: how fast a catalog of real Chinese novels goes into the library,
//! end to end, next to the raw fingerprinting rate of the same text, on SQLite and PostgreSQL.
//!
//! The text is the real Chinese prose of the quality corpus (People's Daily 1998, 三国演义,
//! 《呐喊》; a few megabytes, `copytrace-bench quality-corpus` prints its statistics), cut into chapters headed `第N章 …` and bound
//! into novels of `--chapters` chapters, written as `.txt` files until `--mb` megabytes are on
//! disk. The corpus is smaller than the library, so chapters recur in other novels, each time
//! in another order and with another heading; windows and rows are as many as for new text.
//! Three figures, each over the same files:
//!
//! 1. **fingerprint**: read, decode, detect chapters, window SimHashes and document
//!    fingerprints of every file, one after the other on one thread: the raw rate;
//! 2. **end to end**: `copytrace library add` as the binary runs it (`check_library_files`,
//!    then `add_paths`: a check pass, then batches of works fingerprinted on one thread while
//!    the store writes the previous batch) into an empty database;
//! 3. **store only**: the same works, fingerprinted beforehand and held in memory, written by
//!    `store_works` batch after batch into another empty database: the cost of storage alone.
//!
//! The acceptance figure is `store_share` = store-only time ÷ end-to-end time (≤ 0.5).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use copytrace_fingerprint::FingerprintConfig;
use copytrace_service::NoProgress;
use copytrace_service::library::{
    PreparedWork, WORKS_PER_BATCH, add_paths, check_library_files, prepare_work, read_library_file,
    store_works,
};
use copytrace_store::Store;
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;

use crate::quality::corpus::{self, Lang};
use crate::store::admin;

/// Options of `copytrace-bench ingest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Megabytes (10^6 bytes) of novels to ingest.
    #[arg(long, default_value_t = 200)]
    mb: usize,
    /// Chapters per novel.
    #[arg(long, default_value_t = 100)]
    chapters: usize,
    /// Cache of the quality corpus's downloaded packages (fetched when missing).
    #[arg(long, default_value = "bench/cache/quality")]
    cache: PathBuf,
    /// PostgreSQL server to measure (the user must be allowed to create databases); without
    /// it a throwaway cluster is started and stopped.
    #[arg(long)]
    postgres_url: Option<String>,
    /// Measure SQLite only.
    #[arg(long)]
    no_postgres: bool,
}

/// Runs the measurement and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.mb > 0 && args.chapters > 0,
        "--mb and --chapters must be positive"
    );
    let dir = tempfile::tempdir()?;
    let files_dir = dir.path().join("novels");
    let bytes = write_novels(&args.cache, &files_dir, args.mb * 1_000_000, args.chapters)?;
    let mb = bytes as f64 / 1e6;
    let found = check_library_files(std::slice::from_ref(&files_dir), &NoProgress)?;
    println!(
        "{} novels of {} chapters, {mb:.1} MB of real Chinese text",
        found.len(),
        args.chapters
    );
    let config = FingerprintConfig::default();

    // 1. Raw fingerprinting, one thread.
    let started = Instant::now();
    let mut prepared: Vec<PreparedWork> = Vec::with_capacity(found.len());
    for file in &found {
        prepared.push(prepare_work(1, &read_library_file(file)?, &config)?);
    }
    let fingerprint_s = started.elapsed().as_secs_f64();
    let windows: usize = prepared.iter().map(|p| p.work.segments.len()).sum();
    let chapters: usize = prepared.iter().map(|p| p.work.chapters.len()).sum();
    println!(
        "fingerprint: {fingerprint_s:.1} s, {:.1} MB/s ({windows} windows, {chapters} chapters)",
        mb / fingerprint_s
    );

    let runtime = tokio::runtime::Runtime::new()?;
    let mut results = Vec::new();
    // SQLite.
    let sqlite = runtime.block_on(async {
        let e2e_db = dir.path().join("e2e.db");
        let only_db = dir.path().join("only.db");
        let e2e = SqliteStore::connect(&format!("sqlite://{}", e2e_db.display())).await?;
        let only = SqliteStore::connect(&format!("sqlite://{}", only_db.display())).await?;
        measure(&e2e, &only, &found, &prepared, &config).await
    })?;
    results.push(("sqlite", sqlite));
    if !args.no_postgres {
        let (cluster, server) = crate::pgcluster::server(args.postgres_url.as_deref())?;
        let postgres = runtime.block_on(async {
            let server = url::Url::parse(&server).context("invalid PostgreSQL URL")?;
            let mut urls = Vec::new();
            for side in ["e2e", "only"] {
                let name = format!("copytrace_bench_ingest_{side}_{}", std::process::id());
                admin(
                    &server,
                    &format!("CREATE DATABASE \"{name}\" ENCODING 'UTF8'"),
                )
                .await?;
                let mut database = server.clone();
                database.set_path(&format!("/{name}"));
                urls.push((name, database.to_string()));
            }
            let result = async {
                let e2e = PostgresStore::connect(&urls[0].1).await?;
                let only = PostgresStore::connect(&urls[1].1).await?;
                measure(&e2e, &only, &found, &prepared, &config).await
            }
            .await;
            for (name, _) in &urls {
                admin(
                    &server,
                    &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                )
                .await?;
            }
            result
        })?;
        results.push(("postgres", postgres));
        drop(cluster);
    }

    println!();
    println!("| backend | end to end | store only | store share | fingerprint only |");
    println!("|---|---|---|---|---|");
    let mut result_line = format!(
        "RESULT mb={mb:.1} fingerprint_mb_s={:.1}",
        mb / fingerprint_s
    );
    for (backend, (e2e_s, only_s)) in &results {
        println!(
            "| {backend} | {:.1} MB/s ({e2e_s:.1} s) | {:.1} MB/s ({only_s:.1} s) | {:.2} | {:.1} MB/s |",
            mb / e2e_s,
            mb / only_s,
            only_s / e2e_s,
            mb / fingerprint_s
        );
        result_line.push_str(&format!(
            " {backend}_e2e_mb_s={:.1} {backend}_store_mb_s={:.1} {backend}_store_share={:.2}",
            mb / e2e_s,
            mb / only_s,
            only_s / e2e_s
        ));
    }
    println!("{result_line}");
    Ok(())
}

/// End-to-end seconds into `e2e`, store-only seconds into `only` (both empty).
async fn measure(
    e2e: &dyn Store,
    only: &dyn Store,
    found: &[copytrace_service::library::WorkPath],
    prepared: &[PreparedWork],
    config: &FingerprintConfig,
) -> Result<(f64, f64)> {
    e2e.migrate().await?;
    only.migrate().await?;
    let paths: Vec<PathBuf> = found.iter().map(|f| f.path.clone()).collect();
    let started = Instant::now();
    let checked = check_library_files(&paths, &NoProgress)?;
    let report = add_paths(e2e, "bench", &checked, None, config, &NoProgress).await?;
    let e2e_s = started.elapsed().as_secs_f64();
    ensure!(report.works.len() == found.len(), "every novel is stored");

    let holder = only.ensure_rights_holder("bench").await?;
    let works: Vec<PreparedWork> = prepared
        .iter()
        .cloned()
        .map(|mut p| {
            p.work.rights_holder_id = holder;
            p
        })
        .collect();
    let started = Instant::now();
    for batch in works.chunks(WORKS_PER_BATCH) {
        store_works(only, batch).await?;
    }
    let only_s = started.elapsed().as_secs_f64();
    Ok((e2e_s, only_s))
}

/// Writes novels of `chapters` chapters of the corpus's Chinese texts into `dir` until
/// `bytes` bytes are written; returns the bytes written.
fn write_novels(cache: &Path, dir: &Path, bytes: usize, chapters: usize) -> Result<usize> {
    let corpus = corpus::load(cache)?;
    let texts: Vec<(String, String)> = corpus
        .works
        .iter()
        .chain(&corpus.unrelated)
        .filter(|t| t.lang == Lang::Chinese)
        .map(|t| (t.title.clone(), t.body()))
        .collect();
    ensure!(!texts.is_empty(), "the corpus has no Chinese text");
    std::fs::create_dir_all(dir)?;
    let (mut written, mut novel, mut next) = (0, 0, 0usize);
    while written < bytes {
        let mut text = format!("长篇第{novel}部\n\n");
        for chapter in 1..=chapters {
            // A stride coprime with the text count visits every text before repeating, in
            // another order for every novel.
            let (title, body) = &texts[next % texts.len()];
            next += 7 + novel % 5 * 2;
            text.push_str(&format!("第{chapter}章 {title}\n{body}\n\n"));
        }
        let path = dir.join(format!("novel-{novel:05}.txt"));
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        written += text.len();
        novel += 1;
    }
    Ok(written)
}
