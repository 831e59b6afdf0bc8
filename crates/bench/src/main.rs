//! `copytrace-bench`: throughput of the fingerprinting pipeline and the candidate indexes.
//!
//! Every figure is the median of several timed repetitions after a warm-up, measured with
//! [`std::time::Instant`] on one thread, so it is a *per core* figure; the machine's other cores
//! may be busy, which is why the median (not the mean or the best) is reported. Megabytes are
//! 10^6 bytes of UTF-8 input.
//!
//! The last line of `copytrace-bench fingerprint` is machine-readable:
//! `RESULT pipeline_mb_s_per_core=… minhash_ns_per_shingle_perm=… jieba_ratio=… …`.
//!
//! `copytrace-bench redis --url URL` measures the Redis window index against the same server's
//! `redis-benchmark -P 16` figure and ends with `RESULT probes_per_s=… ratio=…`.
//!
//! `copytrace-bench store [--url URL]` loads 1,000,000 window fingerprint rows through the
//! PostgreSQL store and, in the same run, through `psql \copy` into the same table, and ends
//! with `RESULT store_rows_per_s=… psql_copy_rows_per_s=… ratio=…`.
//!
//! `copytrace-bench crawl` crawls a generated static site of 20,000 novel chapters served by
//! nginx on a loopback port with the Copytrace crawler (politeness off), and in the same run
//! measures `wrk` against the same server at the same concurrency and Scrapy on the same site;
//! it ends with `RESULT crawler_req_s=… wrk_req_s=… wrk_ratio=… scrapy_pages_s=… scrapy_ratio=…`
//! (`scripts/bench-crawl` installs wrk and nginx, builds and runs it).
//!
//! `copytrace-bench crawl-ads` crawls a generated news site whose every page carries inline ad
//! and analytics scripts (and no script-written text) with `--render never` and `--render auto`
//! alternately, and ends with `RESULT never_s=… auto_s=… ratio=… rendered=… …`.
//!
//! `copytrace-bench export` exports 1,000,000 generated match rows from SQLite to CSV and XLSX
//! through the service, each in a fresh process, and ends with
//! `RESULT rows=… csv_rows_per_s=… csv_peak_mb=… xlsx_rows_per_s=… xlsx_peak_mb=…`.
//!
//! `copytrace-bench web` loads 10,000 works and 1,000,000 matches into PostgreSQL, logs 20
//! clients in to the admin web and measures its pages under their load; it ends with
//! `RESULT works=… matches=… req_s=… error_rate=… dashboard_admin_p50_ms=… … target=met|missed`;
//! with `--background-sites N` crawls of N local sites and the matching of their pages, by real
//! `copytrace worker` processes, write to the same database during the load.
//!
//! `copytrace-bench index` measures the SimHash index (1 and 2 threads) against the
//! brute-force popcount scan in the same run and ends with
//! `RESULT n=… k=… index_qps=… brute_qps=… speedup=… recall=… bytes_per_fp=… …`.

mod background;
mod corpus;
mod crawl;
mod export;
mod extraction;
mod fingerprint;
mod fixtures;
mod incremental;
mod index;
mod ingest;
mod pgcluster;
mod postings;
mod quality;
mod redis;
mod scale;
mod store;
mod timing;
mod web;
mod workers;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    version,
    about = "Copytrace benchmarks (single core, median of repetitions)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fingerprinting throughput: normalize, windows + SimHash, full pipeline, Hamming scans.
    Fingerprint(fingerprint::Args),
    /// Redis window index: pipelined probes/s against `redis-benchmark -P 16` on one server.
    Redis(redis::Args),
    /// PostgreSQL store: window fingerprint rows/s of `upsert_work` against `psql \copy` of the
    /// same rows into the same table.
    Store(store::Args),
    /// Incremental matching: adding works to a library of 10,000 works with 100,000 stored
    /// pages, against a full re-match of every page, in one run.
    Incremental(incremental::Args),
    /// Library ingest: real Chinese novels into SQLite and PostgreSQL, end to end and storage
    /// alone, next to the raw fingerprinting rate of the same text.
    Ingest(ingest::Args),
    /// SimHash index against the brute-force popcount scan: queries/s, recall, memory,
    /// snapshot load time.
    Index(index::Args),
    /// Detection quality end to end on real text: precision, recall and F1 per disguise and
    /// per candidate source, the report threshold sweep, and the peers on the same pages.
    Quality(quality::Args),
    /// Pages matched per second with 1, 2 and 4 `copytrace worker match` processes on one
    /// PostgreSQL database and Redis index (run through `scripts/scaling`).
    Workers(workers::Args),
    /// Crawler throughput on a local static site of 20,000 pages served by nginx: requests/s
    /// against `wrk` at the same concurrency, pages/s against Scrapy, in one run.
    Crawl(crawl::Args),
    /// What `--render auto` costs on a site whose every page carries inline ad and analytics
    /// scripts and whose text no script writes: `never` and `auto` side by side, in one run.
    CrawlAds(crawl::ads::Args),
    /// Extraction on trafilatura's public evaluation set (about 1,000 real pages with snippets
    /// that must and must not appear): the crawler's stored page text against trafilatura
    /// 2.3.1, precision, recall and F1, in one run.
    Extraction(extraction::Args),
    /// Streaming exports: 1,000,000 match rows from SQLite to CSV and XLSX (each in a fresh
    /// process), rows/s and peak resident memory against a 150 MB budget.
    Export(export::Args),
    /// The admin web under load: 10,000 works and 1,000,000 matches in PostgreSQL, 20 logged-in
    /// clients on the dashboard, work pages and the match list; latency per route and role.
    Web(web::Args),
    /// A match worker over the shared Redis indexes as the library grows: peak memory, pages
    /// per second per core, Redis bytes per library character, time to add 1,000 works.
    Scale(scale::Args),
    /// The compact candidate source (winnowed k-gram postings in Redis) as the library grows:
    /// postings and Redis bytes per library character, pages per second per core of the
    /// candidate stage, Redis commands and CPU per page, copies found.
    Postings(postings::Args),
    /// Matching over Redis in this process (run by `scale`).
    #[command(hide = true)]
    ScaleMatch(scale::MatchArgs),
    /// One export in this process (run by `export`).
    #[command(hide = true)]
    ExportOne(export::OneArgs),
    /// Quality benchmark corpus: fetch (cached) and print its statistics.
    #[command(hide = true)]
    QualityCorpus(quality::corpus::StatsArgs),
}

/// The allocator `copytrace` uses, so the figures are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Fingerprint(args) => fingerprint::run(&args),
        Command::Redis(args) => redis::run(&args),
        Command::Store(args) => store::run(&args),
        Command::Index(args) => index::run(&args),
        Command::Ingest(args) => ingest::run(&args),
        Command::Incremental(args) => incremental::run(&args),
        Command::Quality(args) => quality::run(&args),
        Command::Workers(args) => workers::run(&args),
        Command::Crawl(args) => crawl::run(&args),
        Command::CrawlAds(args) => crawl::ads::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Extraction(args) => extraction::run(&args),
        Command::Web(args) => web::run(&args),
        Command::ExportOne(args) => export::run_one(&args),
        Command::Scale(args) => scale::run(&args),
        Command::Postings(args) => postings::run(&args),
        Command::ScaleMatch(args) => scale::run_match(&args),
        Command::QualityCorpus(args) => quality::corpus::run_stats(&args),
    }
}
