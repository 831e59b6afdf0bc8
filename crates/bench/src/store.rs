//! `copytrace-bench store`: how fast the PostgreSQL store loads a large library's window
//! fingerprints, against `psql \copy` of the same rows into the same table in the same run.
//!
//! The library is `--rows` window fingerprints of generated Chinese prose (the real
//! fingerprinting pipeline's windows: ordinals, byte ranges and SimHashes), cut into works of
//! `--windows-per-work` windows each. The store keeps a work's windows packed in one row of
//! `work_windows` (20 bytes a window), so `psql \copy` loads those same packed rows; rates are
//! in windows per second on every side. One round:
//!
//! 1. **store**: every table of the fingerprint library is emptied, then each work goes in with
//!    [`Store::upsert_work`], one after the other, as `copytrace library add` does it: one
//!    transaction per work writing the work (with its text) and all its windows;
//! 2. **psql**: `work_windows` alone is emptied (the works stay, the foreign keys need them),
//!    then `psql \copy` loads the same rows from a text file: the acceptance ratio is
//!    store windows/s ÷ these windows/s;
//! 3. **psql with the works**: every table is emptied again, and `psql \copy` loads the works
//!    exactly as the store wrote them (with their texts, dumped by `psql \copy works TO` after
//!    the first round), then the same windows. This is what the store writes too, so the
//!    second ratio tells the cost of the store's path from the cost of the data.
//!
//! Every side starts after a `CHECKPOINT`, so none pays for another's dirty pages, and ends with
//! checksums of both tables (row counts, sums, a hash of the packed windows and of each text),
//! which must equal the
//! store's. The figure per side is the median over `--reps` rounds after `--warmup` untimed
//! ones; each ratio is the median of the per-round ratios.
//!
//! Without `--url` the benchmark starts a throwaway cluster with PostgreSQL's default
//! durability (see [`crate::pgcluster`]); with `--url` it creates a database of its own on that
//! server (the user needs `CREATEDB`) and drops it at the end.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use copytrace_fingerprint::{FingerprintConfig, fingerprint_text};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::{Id, NewWork, SegmentFingerprint, Store, pack_windows};
use sha2::{Digest, Sha256};
use sqlx::{Connection, PgConnection};

use crate::corpus::chinese_prose;

/// Options of `copytrace-bench store`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// PostgreSQL server to measure (`postgres://USER@HOST:PORT/DATABASE`); the user must be
    /// allowed to create databases. Without it a throwaway cluster is started and stopped.
    #[arg(long)]
    url: Option<String>,
    /// Window fingerprint rows to load.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Windows per work (one `upsert_work` each); about 12 characters of text per window.
    #[arg(long, default_value_t = 10_000)]
    windows_per_work: usize,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Untimed rounds first.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// The `psql` to compare with (default: the throwaway cluster's, else `psql` on PATH).
    #[arg(long)]
    psql: Option<PathBuf>,
}

/// Runs the measurement and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.rows > 0 && args.windows_per_work > 0 && args.reps > 0,
        "--rows, --windows-per-work and --reps must be positive"
    );
    let (cluster, server_url) = crate::pgcluster::server(args.url.as_deref())?;
    let psql = match (&args.psql, &cluster) {
        (Some(psql), _) => psql.clone(),
        (None, Some(cluster)) => cluster.bin().join("psql"),
        (None, None) => PathBuf::from("psql"),
    };
    if let Some(cluster) = &cluster {
        println!("throwaway cluster: {}", cluster.version()?);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let name = format!("copytrace_bench_store_{}", std::process::id());
        let server = url::Url::parse(&server_url).context("invalid PostgreSQL URL")?;
        admin(
            &server,
            &format!("CREATE DATABASE \"{name}\" ENCODING 'UTF8'"),
        )
        .await?;
        let mut database = server.clone();
        database.set_path(&format!("/{name}"));
        let result = measure(args, database.as_str(), &psql).await;
        // Drop the database whether or not the measurement worked.
        let dropped = admin(
            &server,
            &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        )
        .await;
        result.and(dropped)
    })?;
    drop(cluster);
    Ok(())
}

/// Runs one administrative statement on the server's database.
pub(crate) async fn admin(server: &url::Url, statement: &str) -> Result<()> {
    let mut connection = PgConnection::connect(server.as_str())
        .await
        .context("cannot connect to PostgreSQL")?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_owned()))
        .execute(&mut connection)
        .await
        .with_context(|| format!("{statement} failed"))?;
    connection.close().await?;
    Ok(())
}

/// The generated library: works of `windows_per_work` real window fingerprints each.
fn library(rows: usize, windows_per_work: usize, holder: Id) -> Result<Vec<NewWork>> {
    let config = FingerprintConfig::default();
    // About 40 bytes of prose per window; more is generated than needed.
    let prose = chinese_prose(rows * 56 + 100_000);
    let mut works = Vec::new();
    let mut cursor = 0;
    let mut left = rows;
    while left > 0 {
        let wanted = left.min(windows_per_work);
        let mut estimate = wanted * 48 + 1_000;
        let (text, windows) = loop {
            // Cut just after a line end (always a character boundary).
            let end = prose.as_bytes()[(cursor + estimate).min(prose.len())..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(prose.len(), |i| cursor + estimate + i + 1);
            let text = &prose[cursor..end];
            let windows = fingerprint_text(text, &config).windows;
            if windows.len() >= wanted || end == prose.len() {
                break (text, windows);
            }
            estimate *= 2;
        };
        ensure!(windows.len() >= wanted, "the generated prose is too short");
        let content = &text[..windows[wanted - 1].byte_end as usize];
        // The next work starts where this one's text ends.
        cursor += content.len();
        let segments = windows[..wanted]
            .iter()
            .map(|w| SegmentFingerprint {
                ordinal: w.ordinal,
                start: w.byte_start,
                end: w.byte_end,
                simhash: w.simhash,
            })
            .collect();
        works.push(NewWork {
            rights_holder_id: holder,
            external_id: format!("bench-{:06}", works.len()),
            title: format!("Benchmark work {}", works.len()),
            content: content.to_owned(),
            content_hash: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(content.as_bytes())),
            fingerprint_version: 1,
            segments,
            fingerprints: Vec::new(),
            author: None,
            published_at: None,
            chapters: Vec::new(),
            licensed_hosts: None,
        });
        left -= wanted;
    }
    Ok(works)
}

/// Row count, window count and a SHA-256 of the packed windows of `work_windows`, as
/// PostgreSQL prints them.
async fn table_checksum(connection: &mut PgConnection) -> Result<String> {
    Ok(sqlx::query_scalar(
        "SELECT concat_ws(' ', count(*), sum(work_id), sum(window_count), \
         encode(sha256(string_agg(windows, ''::bytea ORDER BY work_id)), 'hex')) \
         FROM work_windows",
    )
    .fetch_one(connection)
    .await?)
}

/// The same checksum computed from the generated works (ids in increasing order).
fn expected_checksum(works: &[NewWork], ids: &[Id]) -> String {
    let mut hasher = Sha256::new();
    let (mut sum_ids, mut windows) = (0i128, 0u64);
    for (work, id) in works.iter().zip(ids) {
        sum_ids += i128::from(*id);
        windows += work.segments.len() as u64;
        hasher.update(pack_windows(&work.segments));
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{} {sum_ids} {windows} {digest}", works.len())
}

/// The rows as `psql \copy` reads them (text format: a `bytea` in hex, its backslash escaped).
fn write_copy_file(path: &Path, works: &[NewWork], ids: &[Id]) -> Result<()> {
    let mut text = String::new();
    for (work, id) in works.iter().zip(ids) {
        write!(text, "{id}\t{}\t\\\\x", work.segments.len())?;
        for byte in pack_windows(&work.segments) {
            write!(text, "{byte:02x}")?;
        }
        text.push('\n');
    }
    std::fs::write(path, text)?;
    Ok(())
}

async fn measure(args: &Args, url: &str, psql: &Path) -> Result<()> {
    let store = PostgresStore::connect(url).await?;
    store.migrate().await?;
    let mut connection = PgConnection::connect(url).await?;
    let settings: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name IN \
         ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_wal_size', \
          'server_version') ORDER BY name",
    )
    .fetch_all(&mut connection)
    .await?;

    println!("load average before: {}", load_average());
    let holder = store.ensure_rights_holder("Benchmark").await?;
    let started = Instant::now();
    let works = library(args.rows, args.windows_per_work, holder)?;
    let text_bytes: usize = works.iter().map(|w| w.content.len()).sum();
    println!(
        "generated {} works, {} windows, {:.1} MB of text in {:.1} s",
        works.len(),
        args.rows,
        text_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let dir = tempfile::tempdir()?;
    let segments_file = dir.path().join("work_windows.tsv");
    let works_file = dir.path().join("works.tsv");
    for file in [&segments_file, &works_file] {
        let text = file.to_str().context("temporary path is not UTF-8")?;
        ensure!(!text.contains('\''), "temporary path {text:?} has a quote");
    }
    let copy_segments = format!(
        "\\copy work_windows (work_id, window_count, windows) FROM '{}'",
        segments_file.display()
    );
    let copy_works = format!("\\copy works FROM '{}'", works_file.display());

    let mut ids: Option<Vec<Id>> = None;
    let mut expected = String::new();
    let mut expected_works = String::new();
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut can_checkpoint = true;
    for round in 0..args.warmup + args.reps {
        // ----- the store's path -----
        empty(&mut connection, EVERY_TABLE, &mut can_checkpoint).await?;
        let start = Instant::now();
        let mut loaded = Vec::with_capacity(works.len());
        for work in &works {
            loaded.push(store.upsert_work(work).await?.0);
        }
        let store_time = start.elapsed();
        match &ids {
            None => {
                expected = expected_checksum(&works, &loaded);
                write_copy_file(&segments_file, &works, &loaded)?;
                // The works as the store wrote them, escaped by psql itself, for side 3.
                let dump = format!("\\copy works TO '{}'", works_file.display());
                run_psql(psql, url, &[&dump]).await?;
                expected_works = works_checksum(&mut connection).await?;
                ids = Some(loaded);
            }
            Some(ids) => ensure!(*ids == loaded, "work ids differ between rounds"),
        }
        check(&mut connection, &expected, &expected_works, "store").await?;

        // ----- psql \copy of the same window rows (the works stay) -----
        empty(&mut connection, "work_windows", &mut can_checkpoint).await?;
        let psql_time = run_psql(psql, url, &[&copy_segments]).await?;
        check(&mut connection, &expected, &expected_works, "psql").await?;

        // ----- psql \copy of the works and their window rows: what the store writes -----
        empty(&mut connection, EVERY_TABLE, &mut can_checkpoint).await?;
        let both_time = run_psql(psql, url, &[&copy_works, &copy_segments]).await?;
        check(&mut connection, &expected, &expected_works, "psql works").await?;

        let timed = round >= args.warmup;
        let secs = |time: Duration| time.as_secs_f64();
        println!(
            "round {} ({}): store {:.2} s, psql \\copy {:.2} s (ratio {:.2}), \
             with the works {:.2} s (ratio {:.2})",
            round + 1,
            if timed { "timed" } else { "warm-up" },
            secs(store_time),
            secs(psql_time),
            secs(psql_time) / secs(store_time),
            secs(both_time),
            secs(both_time) / secs(store_time),
        );
        if timed {
            for (side, time) in times.iter_mut().zip([store_time, psql_time, both_time]) {
                side.push(time);
            }
        }
    }
    store.close().await;
    connection.close().await?;
    println!("load average after: {}", load_average());

    let [store_times, psql_times, both_times] = &mut times;
    let ratio = median_ratio(psql_times, store_times);
    let both_ratio = median_ratio(both_times, store_times);
    let rows = args.rows as f64;
    let store_rate = rows / median(store_times).as_secs_f64();
    let psql_rate = rows / median(psql_times).as_secs_f64();
    let both_rate = rows / median(both_times).as_secs_f64();

    println!();
    for (name, setting) in &settings {
        println!("{name} = {setting}");
    }
    if !can_checkpoint {
        println!("(CHECKPOINT was refused: the user is not allowed to; rounds ran without it)");
    }
    println!("{:<44} {:>10}  note", "measurement", "value");
    println!(
        "{:<44} {:>10.0}  {} works of {} windows, one upsert_work each",
        "store upsert_work (windows/s)",
        store_rate,
        works.len(),
        args.windows_per_work
    );
    println!(
        "{:<44} {:>10.0}  same rows from a text file, one COPY",
        "psql \\copy work_windows (windows/s)", psql_rate
    );
    println!(
        "{:<44} {:>10.0}  the works' {:.1} MB of text too",
        "psql \\copy works + work_windows (windows/s)",
        both_rate,
        text_bytes as f64 / 1e6
    );
    println!(
        "{:<44} {:>10.2}  median of {} rounds, target >= 0.70",
        "store ÷ psql \\copy work_windows", ratio, args.reps
    );
    println!(
        "{:<44} {:>10.2}  the same work on both sides",
        "store ÷ psql \\copy works + work_windows", both_ratio
    );
    println!(
        "RESULT store_rows_per_s={store_rate:.0} psql_copy_rows_per_s={psql_rate:.0} \
         ratio={ratio:.2} psql_copy_with_works_rows_per_s={both_rate:.0} \
         ratio_with_works={both_ratio:.2} rows={} windows_per_work={} reps={}",
        args.rows, args.windows_per_work, args.reps
    );
    Ok(())
}

/// Every table of the fingerprint library, and those whose rows would point at its works.
const EVERY_TABLE: &str = "works, work_windows, work_fingerprints, matches, evidence";

/// Empties `tables` (restarting their ids) and checkpoints, so the next load starts from the
/// same state whatever the previous one left dirty.
async fn empty(
    connection: &mut PgConnection,
    tables: &str,
    can_checkpoint: &mut bool,
) -> Result<()> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "TRUNCATE {tables} RESTART IDENTITY CASCADE"
    )))
    .execute(&mut *connection)
    .await?;
    // A user without the right to checkpoint gets a note in the output instead.
    if *can_checkpoint
        && sqlx::raw_sql("CHECKPOINT")
            .execute(connection)
            .await
            .is_err()
    {
        *can_checkpoint = false;
    }
    Ok(())
}

/// Runs `psql -c COMMAND ...` (each command its own transaction) and returns how long it took.
async fn run_psql(psql: &Path, url: &str, commands: &[&str]) -> Result<Duration> {
    let mut command = tokio::process::Command::new(psql);
    command.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url]);
    for sql in commands {
        command.arg("-c").arg(sql);
    }
    let start = Instant::now();
    let output = command
        .output()
        .await
        .with_context(|| format!("cannot run {}", psql.display()))?;
    let time = start.elapsed();
    if !output.status.success() {
        bail!("psql failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(time)
}

/// Row count and total text length of `works`, as PostgreSQL prints them.
async fn works_checksum(connection: &mut PgConnection) -> Result<String> {
    Ok(sqlx::query_scalar(
        "SELECT concat_ws(' ', count(*), sum(id), sum(octet_length(content)), \
         sum(content_len), sum(hashtext(content)::numeric)) FROM works",
    )
    .fetch_one(connection)
    .await?)
}

/// Fails unless both tables hold what the store wrote in the first round.
async fn check(
    connection: &mut PgConnection,
    segments: &str,
    works: &str,
    side: &str,
) -> Result<()> {
    let found = table_checksum(connection).await?;
    ensure!(
        found == segments,
        "{side} load: work_windows holds {found}, expected {segments}"
    );
    let found = works_checksum(connection).await?;
    ensure!(
        found == works,
        "{side} load: works holds {found}, expected {works}"
    );
    Ok(())
}

/// The median of the per-round ratios `numerators[i] / denominators[i]`.
fn median_ratio(numerators: &[Duration], denominators: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = numerators
        .iter()
        .zip(denominators)
        .map(|(n, d)| n.as_secs_f64() / d.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// The machine's 1, 5 and 15 minute load averages: the benchmark shares its cores with
/// whatever else runs, and the figures mean little without them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::{expected_checksum, library, write_copy_file};
    use copytrace_store::SegmentFingerprint;

    #[test]
    fn the_library_holds_exactly_the_requested_windows_each_inside_its_text() {
        let works = library(2_500, 1_000, 7).unwrap();
        let sizes: Vec<usize> = works.iter().map(|w| w.segments.len()).collect();
        assert_eq!(sizes, [1_000, 1_000, 500]);
        for work in &works {
            assert_eq!(work.rights_holder_id, 7);
            let last = work.segments.last().unwrap();
            assert_eq!(
                last.end as usize,
                work.content.len(),
                "the text ends with its windows"
            );
            for (ordinal, segment) in work.segments.iter().enumerate() {
                assert_eq!(segment.ordinal as usize, ordinal);
                assert!(segment.start < segment.end);
                assert!(work.content.is_char_boundary(segment.start as usize));
                assert!(work.content.is_char_boundary(segment.end as usize));
            }
        }
        assert_ne!(
            works[0].content, works[1].content,
            "works have texts of their own"
        );
    }

    #[test]
    fn the_copy_file_has_one_line_per_work_with_its_windows_packed_in_hex() {
        let mut works = library(2, 2, 1).unwrap();
        works[0].segments = vec![
            SegmentFingerprint {
                ordinal: 0,
                start: 0,
                end: 3,
                simhash: u64::MAX,
            },
            SegmentFingerprint {
                ordinal: 1,
                start: 3,
                end: 6,
                simhash: 5,
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.tsv");
        write_copy_file(&path, &works, &[42]).unwrap();
        // Per window: ordinal, start, end (u32) and SimHash (u64), big-endian; the backslash of
        // the bytea's `\x` is escaped for COPY's text format.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            concat!(
                "42\t2\t\\\\x",
                "00000000",
                "00000000",
                "00000003",
                "ffffffffffffffff",
                "00000001",
                "00000003",
                "00000006",
                "0000000000000005",
                "\n"
            )
        );
        let checksum = expected_checksum(&works[..1], &[42]);
        assert!(checksum.starts_with("1 42 2 "), "{checksum}");
    }
}
