//! `copytrace-bench export`: streaming exports of a million match rows in flat memory.
//!
//! 1. **Data**: a SQLite store (migrated by the store itself) is filled with `--rows` reported
//!    matches: 2,000 works of 40 chapters each, 100 sites, a page per 4 matches, each match
//!    with 2 evidence passages inside one chapter, a tenth of them removed, a quarter pending
//!    review, and one work in 500 with a title that looks like a spreadsheet formula. Writing
//!    them one page verdict at a time through `Store::record_page_matches` would take most of
//!    an hour, so the rows are generated inside SQLite by `INSERT … SELECT` over a recursive
//!    counter (a few seconds), straight into the store's tables; only this benchmark writes
//!    rows that way.
//! 2. **Exports**: each format is exported by a fresh child process (this binary, hidden
//!    subcommand `export-one`) that opens the store and calls the service's
//!    `export::export_matches` with the CLI's default scope, exactly what `copytrace export
//!    matches --out FILE` runs, then reports its own peak resident memory (`VmHWM` of
//!    `/proc/self/status`: the whole process, runtime and SQLite included, not a delta) and
//!    its time (the export, and apart from it the `fsync` the CLI also does). A fresh process per format keeps one export's allocations out of the next
//!    one's figure.
//!
//! The output is checked (a CSV line per match plus the header; an XLSX file that is a zip
//! archive) and the run fails if a peak reaches `--max-peak-mb` (150). It ends with
//! `RESULT rows=… csv_rows_per_s=… csv_peak_mb=… xlsx_rows_per_s=… xlsx_peak_mb=…`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use copytrace_service::export::{self, ExportFormat, ExportOptions};
use copytrace_store::Store;
use copytrace_store::sqlite::SqliteStore;

/// Options of `copytrace-bench export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Match rows to generate and export (a multiple of 4: four matches a page).
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Formats to export, comma-separated (csv, json, ndjson, xlsx).
    #[arg(long, value_delimiter = ',', default_values_t = ["csv".to_owned(), "xlsx".to_owned()])]
    formats: Vec<String>,
    /// Keep the database and the exports in this directory (created if needed; a database
    /// already there with `--rows` matches is reused) instead of a temporary one.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Fail if an export's peak resident memory reaches this many MB (10^6 bytes).
    #[arg(long, default_value_t = 150.0)]
    max_peak_mb: f64,
}

/// Options of the hidden `copytrace-bench export-one`.
#[derive(Debug, clap::Args)]
pub struct OneArgs {
    /// The store.
    #[arg(long)]
    db: String,
    /// csv, json, ndjson or xlsx.
    #[arg(long)]
    format: String,
    /// The output file.
    #[arg(long)]
    out: PathBuf,
}

/// Works in the generated library.
const WORKS: u64 = 2_000;
/// Chapters per work, 3,000 bytes each.
const CHAPTERS: u64 = 40;
/// Sites the pages are spread over.
const SITES: u64 = 100;
/// Matches per page.
const MATCHES_PER_PAGE: u64 = 4;

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.rows > 0 && args.rows.is_multiple_of(MATCHES_PER_PAGE),
        "--rows must be a positive multiple of {MATCHES_PER_PAGE}"
    );
    let temp;
    let dir = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_owned()
        }
    };
    let db = dir.join("export-bench.db");
    let url = format!("sqlite://{}", db.display());
    let runtime = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    let generated = runtime.block_on(generate(&url, args.rows))?;
    println!(
        "data: {} matches on {} pages, {WORKS} works of {CHAPTERS} chapters ({}; {:.1} s, \
         database {:.0} MB)",
        args.rows,
        args.rows / MATCHES_PER_PAGE,
        if generated { "generated" } else { "reused" },
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&db)?.len() as f64 / 1e6
    );

    let mut result = format!("RESULT rows={}", args.rows);
    println!(
        "\n| format | rows | export (s) | rows/s | fsync (s) | peak RSS (MB) | RSS before export \
         (MB) | file (MB) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut over = Vec::new();
    for format in &args.formats {
        parse_format(format)?;
        let out = dir.join(format!("matches.{format}"));
        let child = Command::new(std::env::current_exe()?)
            .args(["export-one", "--db", &url, "--format", format, "--out"])
            .arg(&out)
            .output()
            .context("cannot start the export process")?;
        if !child.status.success() {
            bail!(
                "the {format} export failed: {}",
                String::from_utf8_lossy(&child.stderr)
            );
        }
        let report = Report::parse(&String::from_utf8_lossy(&child.stdout))?;
        ensure!(
            report.rows == args.rows,
            "the {format} export wrote {} rows, not {}",
            report.rows,
            args.rows
        );
        check_output(format, &out, args.rows)?;
        let rows_per_s = report.rows as f64 / report.seconds;
        let peak_mb = report.peak_kib as f64 * 1024.0 / 1e6;
        println!(
            "| {format} | {} | {:.1} | {:.0} | {:.1} | {peak_mb:.1} | {:.1} | {:.0} |",
            report.rows,
            report.seconds,
            rows_per_s,
            report.sync_seconds,
            report.before_kib as f64 * 1024.0 / 1e6,
            std::fs::metadata(&out)?.len() as f64 / 1e6
        );
        result.push_str(&format!(
            " {format}_rows_per_s={rows_per_s:.0} {format}_peak_mb={peak_mb:.1}"
        ));
        if peak_mb >= args.max_peak_mb {
            over.push(format!("{format} peaked at {peak_mb:.1} MB"));
        }
    }
    println!("\n{result}");
    ensure!(
        over.is_empty(),
        "over the {} MB budget: {}",
        args.max_peak_mb,
        over.join(", ")
    );
    Ok(())
}

fn parse_format(name: &str) -> Result<ExportFormat> {
    Ok(match name {
        "csv" => ExportFormat::Csv,
        "json" => ExportFormat::Json,
        "ndjson" => ExportFormat::Ndjson,
        "xlsx" => ExportFormat::Xlsx,
        other => bail!("unknown format {other:?}: csv, json, ndjson or xlsx"),
    })
}

/// What an `export-one` process prints.
struct Report {
    rows: u64,
    seconds: f64,
    sync_seconds: f64,
    peak_kib: u64,
    before_kib: u64,
}

impl Report {
    fn parse(stdout: &str) -> Result<Report> {
        let line = stdout
            .lines()
            .find(|l| l.starts_with("EXPORTED "))
            .context("the export process printed no EXPORTED line")?;
        let field = |name: &str| -> Result<&str> {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
                .with_context(|| format!("no {name} in {line:?}"))
        };
        Ok(Report {
            rows: field("rows")?.parse()?,
            seconds: field("seconds")?.parse()?,
            sync_seconds: field("sync_seconds")?.parse()?,
            peak_kib: field("peak_kib")?.parse()?,
            before_kib: field("before_kib")?.parse()?,
        })
    }
}

/// `copytrace-bench export-one`: one export in this process, then its figures on one line.
pub fn run_one(args: &OneArgs) -> Result<()> {
    let format = parse_format(&args.format)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let store = SqliteStore::connect(&args.db).await?;
        store.migrate().await?;
        let before_kib = status_kib("VmRSS:")?;
        let dir = args.out.parent().unwrap_or(Path::new("."));
        let options = ExportOptions {
            bom: false,
            scratch_dir: Some(dir.to_owned()),
        };
        let mut file = std::fs::File::create(&args.out)?;
        let started = Instant::now();
        let rows = export::export_matches(
            &store,
            format,
            &copytrace_store::MatchFilter::reported(),
            &options,
            &mut file,
        )
        .await?;
        let seconds = started.elapsed().as_secs_f64();
        // The CLI makes the file durable before renaming it; timed apart, because it measures
        // the disk (and whatever else is writing to it), not the export.
        let started = Instant::now();
        file.sync_all()?;
        let sync_seconds = started.elapsed().as_secs_f64();
        store.close().await;
        println!(
            "EXPORTED rows={rows} seconds={seconds:.3} sync_seconds={sync_seconds:.3} \
             peak_kib={} before_kib={before_kib}",
            status_kib("VmHWM:")?
        );
        Ok(())
    })
}

/// A memory figure of this process from `/proc/self/status`, in KiB.
pub(crate) fn status_kib(key: &str) -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")
        .context("peak memory is read from /proc/self/status (Linux only)")?;
    let line = status
        .lines()
        .find(|l| l.starts_with(key))
        .with_context(|| format!("no {key} in /proc/self/status"))?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .context("malformed /proc/self/status")?
        .parse()?)
}

/// Checks the export file: a CSV line per row and the header; a zip archive for XLSX; a JSON
/// document or line per row otherwise.
fn check_output(format: &str, out: &Path, rows: u64) -> Result<()> {
    use std::io::{BufRead, BufReader, Read};
    let file = std::fs::File::open(out)?;
    match format {
        "csv" | "ndjson" => {
            let lines = BufReader::new(file).lines().count() as u64;
            let expected = rows + u64::from(format == "csv");
            ensure!(lines == expected, "{format}: {lines} lines, not {expected}");
        }
        "xlsx" => {
            let mut magic = [0; 4];
            BufReader::new(file).read_exact(&mut magic)?;
            ensure!(
                &magic == b"PK\x03\x04",
                "the XLSX file is not a zip archive"
            );
        }
        _ => {
            let mut reader = BufReader::new(file);
            let mut first = [0; 1];
            reader.read_exact(&mut first)?;
            ensure!(&first == b"[", "the JSON export is not an array");
        }
    }
    Ok(())
}

/// Fills the store at `url` with `rows` matches unless it holds them already; returns whether
/// it generated them.
async fn generate(url: &str, rows: u64) -> Result<bool> {
    let store = SqliteStore::connect(url).await?;
    store.migrate().await?;
    store.close().await;
    let pool = sqlx::SqlitePool::connect(url).await?;
    let existing: i64 = sqlx::query_scalar("SELECT count(*) FROM matches")
        .fetch_one(&pool)
        .await?;
    if existing as u64 == rows {
        pool.close().await;
        return Ok(false);
    }
    ensure!(
        existing == 0,
        "the database holds {existing} matches, not {rows}: use another --dir"
    );
    let pages = (rows / MATCHES_PER_PAGE) as i64;
    // 2026-11-01T00:00:00Z in microseconds.
    let t0: i64 = 1_793_491_200_000_000;
    // Each statement with its binds, in order: `$1`, `$2`, … are the numbers beside it.
    let statements: [(&str, &[i64]); 7] = [
        (
            "INSERT INTO rights_holders (name, created_at) VALUES ('bench', $1)",
            &[t0],
        ),
        (
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1) \
             INSERT INTO works (rights_holder_id, external_id, title, content, content_len, \
                                content_hash, fingerprint_version, created_at, updated_at) \
             SELECT 1, printf('work-%05d', i), \
                    CASE WHEN i % 500 = 7 THEN '=HYPERLINK(\"http://evil.example\",\"点击\")' \
                         ELSE '星辰旅人 第' || (i + 1) || '卷' END, \
                    '', 0, printf('%032x', i), 1, $2, $2 FROM n",
            &[WORKS as i64, t0],
        ),
        (
            "WITH RECURSIVE c(o) AS (SELECT 0 UNION ALL SELECT o + 1 FROM c WHERE o + 1 < $1) \
             INSERT INTO work_chapters (work_id, ordinal, title, start_offset, end_offset) \
             SELECT w.id, c.o, '第' || (c.o + 1) || '章 雨夜', c.o * 3000, c.o * 3000 + 3000 \
             FROM works w, c",
            &[CHAPTERS as i64],
        ),
        (
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1) \
             INSERT INTO sites (host, created_at) \
             SELECT printf('pirate-%02d.example', i), $2 FROM n",
            &[SITES as i64, t0],
        ),
        // Page i is on site i % SITES; consecutive pages copy the same four works (a crawl of
        // one book's chapters), 125 pages per group.
        (
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1) \
             INSERT INTO pages (site_id, url, title, text, content_hash, http_status, \
                                first_seen, last_seen, matched_hash) \
             SELECT 1 + i % $2, \
                    printf('https://pirate-%02d.example/book/%d/%d.html', i % $2, i / 125, i), \
                    '第' || i || '章 - 免费小说网', '', printf('%032x', i), 200, \
                    $3 + i * 1000000, $3 + i * 1000000, printf('%032x', i) FROM n",
            &[pages, SITES as i64, t0],
        ),
        (
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1) \
             INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
                                  status, first_seen, last_seen, copied_chars, removed_at, \
                                  evidence_hash, review) \
             SELECT 1 + i / 4, 1 + ((i / 4 / 125) * 4 + i % 4) % $2, \
                    0.5 + (i % 500) / 1000.0, 0.02 + (i % 97) / 1000.0, \
                    0.4 + (i % 600) / 1000.0, 'simhash+align', \
                    CASE WHEN i % 10 = 3 THEN 'removed' ELSE 'open' END, \
                    $3 + (i / 4) * 1000000, $3 + (i / 4) * 1000000 + 86400000000, \
                    800 + i % 700, \
                    CASE WHEN i % 10 = 3 THEN $3 + (i / 4) * 1000000 + 172800000000 END, \
                    printf('%032x', i / 4), \
                    CASE WHEN i % 4 = 1 THEN 'pending' ELSE 'confirmed' END FROM n",
            &[rows as i64, WORKS as i64, t0],
        ),
        // Two passages of 1,200 bytes in chapter (page id mod CHAPTERS) of the work.
        (
            "INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, \
                                   work_end) \
             SELECT m.id, e.o, e.o * 1200, e.o * 1200 + 1200, \
                    (m.page_id % $1) * 3000 + e.o * 1200, \
                    (m.page_id % $1) * 3000 + e.o * 1200 + 1200 \
             FROM matches m, (SELECT 0 AS o UNION ALL SELECT 1) e",
            &[CHAPTERS as i64],
        ),
    ];
    let mut tx = pool.begin().await?;
    for (sql, binds) in statements {
        let mut statement = sqlx::query(sql);
        for bind in binds {
            statement = statement.bind(*bind);
        }
        statement.execute(&mut *tx).await?;
    }
    tx.commit().await?;
    pool.close().await;
    Ok(true)
}
