//! `copytrace-bench quality`: detection quality, end to end, on real text.
//!
//! 1. [`corpus`] fetches real texts from pinned packages into the ignored cache.
//! 2. [`disguise`] turns them, from one seed, into a library and the labelled pages of a pirate
//!    site (every disguise pirates use, plus hard negatives).
//! 3. [`site`] serves the pages on a loopback port, with chrome, pagination and legacy
//!    encodings.
//! 4. The real `copytrace` binary runs the user's pipeline: `library add`, `crawl`, `match`,
//!    `export matches`. `match` runs once with the defaults (the figures users get) and once
//!    per candidate source with a low report threshold, so [`score`] can sweep the threshold
//!    offline: the threshold is a final filter on the verified copied characters, so a loose
//!    run filtered at T reports exactly what a run at T reports (checked at every run against
//!    the default run).
//! 5. The peers (`bench/peers/quality.py`) run on the same pages and works.
//!
//! The output ends with `RESULT precision=… recall=… f1=… …`; the tables and the plot are
//! written to the run directory (`report.md`, `threshold.svg`).

pub mod corpus;
pub mod disguise;
mod score;
pub(crate) mod site;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::Deserialize;

use disguise::{Benchmark, NEGATIVE, POSITIVE, Plan};
use score::{Predictions, Reported, SweepPoint, Table};

/// Command-line settings of the quality benchmark.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cache of downloaded packages; the run directory is `<cache>/run`.
    #[arg(long, default_value = "bench/cache/quality")]
    cache: PathBuf,
    /// Seed of the disguise generator: one seed, one benchmark.
    #[arg(long, default_value_t = 20_261_122)]
    seed: u64,
    /// Pages per disguise.
    #[arg(long, default_value_t = 40)]
    per_disguise: usize,
    /// The `copytrace` binary (default: next to this one).
    #[arg(long)]
    copytrace: Option<PathBuf>,
    /// Skip the peers (Python) comparison.
    #[arg(long)]
    no_peers: bool,
    /// Also register the corpus's library-only texts (short news, 宋词 anthologies): thousands
    /// of works that no page copies, for the large run.
    #[arg(long)]
    more_works: bool,
    /// Python interpreter for the peers script.
    #[arg(long, default_value = "python3")]
    python: String,
}

/// Candidate configurations matched with a low threshold for the sweep: the default sources
/// (whose run, filtered at the default threshold, must equal the default run), every source,
/// each source alone, and the k-gram postings with the sense index (the compact pair that
/// would replace the window indexes).
const LOOSE: [&str; 8] = [
    "default",
    "all",
    "simhash",
    "minhash",
    "dna",
    "sense",
    "kgram",
    "kgram+sense",
];
/// Report threshold of the loose runs: the matcher's floor (one passage's minimum).
const LOOSE_MIN_COPIED: u32 = 20;
/// Thresholds of the sweep, in verified copied characters.
const THRESHOLDS: [u32; 13] = [20, 30, 40, 50, 60, 70, 80, 100, 120, 150, 200, 300, 400];
/// Settings of `--min-stretch-chars` compared with the default (each a run with the other
/// defaults), to show what the dense-stretch rule does; 0 turns it off.
const STRETCHES: [usize; 4] = [0, 40, 60, 80];
/// The precision the default must reach: a false accusation costs more than a miss.
const MIN_PRECISION: f64 = 0.995;

/// Runs the benchmark.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let copytrace = match &args.copytrace {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("copytrace"),
    };
    if !copytrace.exists() {
        bail!(
            "{} not found: build it first (`cargo build --release -p copytrace`), or run \
             `scripts/quality`, which builds both binaries",
            copytrace.display()
        );
    }

    let corpus = corpus::load(&args.cache)?;
    let bench = disguise::generate(
        &corpus,
        Plan {
            seed: args.seed,
            per_disguise: args.per_disguise,
            more_works: args.more_works,
        },
    );
    let run_dir = args.cache.join("run");
    if run_dir.exists() {
        std::fs::remove_dir_all(&run_dir)
            .with_context(|| format!("cannot clear {}", run_dir.display()))?;
    }
    std::fs::create_dir_all(run_dir.join("library"))?;
    let mut log = String::new();
    writeln!(
        log,
        "seed {}, {} works registered ({} Chinese, {} English), {} pages",
        args.seed,
        bench.library.len(),
        bench
            .library
            .iter()
            .filter(|w| w.lang == corpus::Lang::Chinese)
            .count(),
        bench
            .library
            .iter()
            .filter(|w| w.lang == corpus::Lang::English)
            .count(),
        bench.pages.len()
    )?;
    let census = disguise::census(&bench.pages);
    writeln!(
        log,
        "{} negative pages; pages per disguise: {}",
        bench.pages.iter().filter(|p| p.is_negative()).count(),
        census
            .iter()
            .map(|(d, n)| format!("{d} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    eprint!("{log}");

    for work in &bench.library {
        let path = run_dir.join("library").join(format!("{}.txt", work.id));
        std::fs::write(&path, format!("{}\n{}\n", work.title, work.text()))?;
    }
    write_peer_inputs(&run_dir, &bench)?;

    let site = site::Site::render(&bench.pages);
    let budget = site.request_budget();
    let list_pages = site.list_pages();
    let address = site.serve()?;
    let base = format!("http://{address}");

    let crawl_db = run_dir.join("crawl.db");
    let db_url = |path: &Path| format!("sqlite://{}", path.display());
    let mut timings: Vec<(String, f64)> = Vec::new();
    let step = Instant::now();
    cli(
        &copytrace,
        &db_url(&crawl_db),
        &["library", "add", &path_str(&run_dir.join("library"))],
    )?;
    timings.push(("library add".to_owned(), step.elapsed().as_secs_f64()));
    let step = Instant::now();
    let crawl_out = cli_allowing(
        &copytrace,
        &db_url(&crawl_db),
        &[
            "crawl",
            &format!("{base}/"),
            "--allow-private-addresses",
            "--max-pages",
            &budget.to_string(),
            "--concurrency",
            "8",
            "--timeout",
            "20",
        ],
        &[0, 3],
    )?;
    timings.push(("crawl".to_owned(), step.elapsed().as_secs_f64()));
    eprintln!("crawl: {}", crawl_out.lines().last().unwrap_or(""));

    // The default run, then the loose runs, two at a time (this machine has two cores).
    let mut runs: Vec<(String, Vec<String>)> = vec![("default".to_owned(), Vec::new())];
    for candidates in LOOSE {
        runs.push((
            format!("loose-{candidates}"),
            vec![
                "--candidates".to_owned(),
                candidates.to_owned(),
                "--min-copied-chars".to_owned(),
                LOOSE_MIN_COPIED.to_string(),
            ],
        ));
    }
    for stretch in STRETCHES {
        runs.push((
            format!("stretch-{stretch}"),
            vec!["--min-stretch-chars".to_owned(), stretch.to_string()],
        ));
    }
    let mut exports: BTreeMap<String, Predictions> = BTreeMap::new();
    for pair in runs.chunks(2) {
        let step = Instant::now();
        let results: Vec<anyhow::Result<Predictions>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pair
                .iter()
                .map(|(name, flags)| {
                    let (copytrace, run_dir, crawl_db, base) =
                        (&copytrace, &run_dir, &crawl_db, &base);
                    scope.spawn(move || {
                        match_and_export(copytrace, run_dir, crawl_db, name, flags, base)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("match thread"))
                .collect()
        });
        for ((name, _), result) in pair.iter().zip(results) {
            exports.insert(name.clone(), result?);
        }
        let names: Vec<&str> = pair.iter().map(|(n, _)| n.as_str()).collect();
        timings.push((
            format!("match {}", names.join(" & ")),
            step.elapsed().as_secs_f64(),
        ));
    }

    let default_threshold =
        u32::try_from(copytrace_matcher::MatchConfig::default().min_copied_chars)?;
    let pages = &bench.pages;
    let default_table = score::score(pages, &exports["default"], 0);
    let replayed = score::score(pages, &exports["loose-default"], default_threshold);
    if replayed.overall != default_table.overall {
        bail!(
            "the loose run filtered at {default_threshold} ({:?}) disagrees with the default run \
             ({:?}): the threshold is not a pure final filter, so the sweep would be wrong",
            replayed.overall,
            default_table.overall
        );
    }

    let mut report = String::new();
    writeln!(report, "# Detection quality run\n")?;
    writeln!(report, "{log}")?;
    writeln!(
        report,
        "Pages generated: {}; listed on {} table-of-contents pages.\n",
        pages.len(),
        list_pages
    )?;

    // Per-disguise table: the default, then each candidate source alone at the same threshold.
    let per_source: Vec<(&str, Table)> = LOOSE
        .iter()
        .map(|c| {
            (
                *c,
                score::score(pages, &exports[&format!("loose-{c}")], default_threshold),
            )
        })
        .collect();
    report.push_str(&disguise_table(&default_table, &per_source));
    report.push_str(&confidence_lines(&default_table));
    report.push_str(&encoding_table(&default_table));
    let default_stretch = copytrace_matcher::MatchConfig::default().min_stretch_chars;
    let mut stretches: Vec<(usize, Table)> = STRETCHES
        .iter()
        .map(|&s| (s, score::score(pages, &exports[&format!("stretch-{s}")], 0)))
        .collect();
    stretches.push((default_stretch, default_table.clone()));
    stretches.sort_by_key(|(s, _)| *s);
    report.push_str(&stretch_table(&stretches, default_stretch));

    let sweeps: Vec<(String, Vec<SweepPoint>)> = LOOSE
        .iter()
        .map(|c| {
            (
                c.to_string(),
                score::sweep(pages, &exports[&format!("loose-{c}")], &THRESHOLDS),
            )
        })
        .collect();
    let chosen = score::choose(&sweeps[0].1, MIN_PRECISION);
    report.push_str(&sweep_table(&sweeps[0].1, chosen.map(|c| c.threshold)));
    let svg = score::plot_svg(&sweeps, chosen.map(|c| c.threshold));
    std::fs::write(run_dir.join("threshold.svg"), svg)?;
    match chosen {
        Some(c) if c.threshold == default_threshold => writeln!(
            report,
            "\nThe benchmark's choice of the report threshold is {} copied characters, the \
             default.",
            c.threshold
        )?,
        Some(c) => writeln!(
            report,
            "\n**The benchmark chooses {} copied characters; the default is {default_threshold}.** \
             Change `MatchConfig::min_copied_chars` with a new table, or explain why not.",
            c.threshold
        )?,
        None => writeln!(
            report,
            "\n**No threshold reaches precision {MIN_PRECISION} without a false positive on the \
             hard negatives.**"
        )?,
    }

    let peers = if args.no_peers {
        None
    } else {
        let step = Instant::now();
        let peers = run_peers(&args.python, &run_dir)?;
        timings.push(("peers".to_owned(), step.elapsed().as_secs_f64()));
        Some(peers)
    };
    if let Some(peers) = &peers {
        report.push_str(&peer_table(&default_table, peers));
    }

    writeln!(report, "\n| step | seconds |\n|---|---:|")?;
    for (name, seconds) in &timings {
        writeln!(report, "| {name} | {seconds:.1} |")?;
    }
    let total = started.elapsed().as_secs_f64();
    writeln!(report, "| total | {total:.1} |")?;
    std::fs::write(run_dir.join("report.md"), &report)?;
    println!("{report}");
    println!(
        "Report: {}  plot: {}",
        run_dir.join("report.md").display(),
        run_dir.join("threshold.svg").display()
    );

    let overall = default_table.overall;
    let (worst_name, worst) = default_table.worst_disguise();
    let hard_fp = default_table.hard_negative_fp();
    let best_peer = peers
        .as_ref()
        .and_then(|p| p.values().map(|r| r.overall.f1).max_by(f64::total_cmp));
    println!(
        "RESULT precision={:.4} precision_low95={:.4} recall={:.4} f1={:.4} \
         worst_disguise={worst_name}:{worst:.3} hard_negative_fp={hard_fp} chosen_min_copied_chars={} default_min_copied_chars={default_threshold} \
         best_peer_f1={} seconds={total:.0}",
        overall.precision(),
        score::wilson_interval(overall.tp, overall.tp + overall.fp).0,
        overall.recall(),
        overall.f1(),
        chosen.map_or("none".to_owned(), |c| c.threshold.to_string()),
        best_peer.map_or("none".to_owned(), |f| format!("{f:.4}")),
    );
    Ok(())
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

/// Runs `copytrace --db URL ARGS…`, failing with its output unless it exits 0.
fn cli(copytrace: &Path, db: &str, args: &[&str]) -> anyhow::Result<String> {
    cli_allowing(copytrace, db, args, &[0])
}

fn cli_allowing(copytrace: &Path, db: &str, args: &[&str], ok: &[i32]) -> anyhow::Result<String> {
    let output = Command::new(copytrace)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", copytrace.display()))?;
    let code = output.status.code().unwrap_or(-1);
    if !ok.contains(&code) {
        bail!(
            "`copytrace {}` exited with {code}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[derive(Deserialize)]
struct ExportedMatch {
    page_url: String,
    work_external_id: String,
    copied_chars: u32,
    /// Other URLs of the same page: pages of the site that show the identical text (the
    /// verbatim copy of a chapter in two classes, say) are one infringing page, reported
    /// once with the others listed here. Each counts as reported.
    #[serde(default)]
    aliases: Vec<String>,
}

/// Copies the crawled database, runs `match FLAGS` and `export matches` on the copy.
fn match_and_export(
    copytrace: &Path,
    run_dir: &Path,
    crawl_db: &Path,
    name: &str,
    flags: &[String],
    base: &str,
) -> anyhow::Result<Predictions> {
    let db = run_dir.join(format!("{name}.db"));
    std::fs::copy(crawl_db, &db)?;
    // SQLite may leave committed pages in the write-ahead log; the copy needs them too.
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", crawl_db.display()));
        if side.exists() {
            std::fs::copy(&side, format!("{}{suffix}", db.display()))?;
        }
    }
    let url = format!("sqlite://{}", db.display());
    let mut args: Vec<&str> = vec!["match"];
    args.extend(flags.iter().map(String::as_str));
    let started = Instant::now();
    let out = cli(copytrace, &url, &args)?;
    eprintln!(
        "{name}: {} ({:.1} s)",
        out.trim(),
        started.elapsed().as_secs_f64()
    );
    let export = run_dir.join(format!("{name}.json"));
    cli(
        copytrace,
        &url,
        &[
            "export",
            "matches",
            "--format",
            "json",
            "--out",
            &path_str(&export),
        ],
    )?;
    let rows: Vec<ExportedMatch> = serde_json::from_slice(&std::fs::read(&export)?)
        .with_context(|| format!("cannot read {}", export.display()))?;
    let mut predictions = Predictions::new();
    for row in rows {
        for url in std::iter::once(&row.page_url).chain(&row.aliases) {
            let path = url.strip_prefix(base).unwrap_or(url).to_owned();
            predictions.entry(path).or_default().push(Reported {
                work: row.work_external_id.clone(),
                copied_chars: row.copied_chars,
            });
        }
    }
    Ok(predictions)
}

/// Works and pages as JSON lines for the peers script.
fn write_peer_inputs(run_dir: &Path, bench: &Benchmark) -> anyhow::Result<()> {
    let mut works = std::io::BufWriter::new(std::fs::File::create(run_dir.join("works.jsonl"))?);
    for work in &bench.library {
        serde_json::to_writer(
            &mut works,
            &serde_json::json!({ "id": work.id, "text": work.text() }),
        )?;
        works.write_all(b"\n")?;
    }
    works.flush()?;
    let mut pages = std::io::BufWriter::new(std::fs::File::create(run_dir.join("pages.jsonl"))?);
    for page in &bench.pages {
        let text = format!("{}\n{}", page.title, page.text());
        serde_json::to_writer(
            &mut pages,
            &serde_json::json!({
                "id": page.path,
                "disguise": page.disguise,
                "expected": page.expected,
                "text": text,
            }),
        )?;
        pages.write_all(b"\n")?;
    }
    pages.flush()?;
    Ok(())
}

#[derive(Debug, Deserialize)]
struct PeerCounts {
    precision: f64,
    recall: f64,
    f1: f64,
}

#[derive(Debug, Deserialize)]
struct PeerResult {
    settings: String,
    overall: PeerCounts,
    per_disguise: BTreeMap<String, PeerCounts>,
    #[serde(default)]
    seconds: f64,
    best_sweep: Option<PeerSweep>,
}

/// A peer's best setting found by sweeping on the benchmark's own labels: an upper bound no
/// user would get, shown beside the recommended settings.
#[derive(Debug, Deserialize)]
struct PeerSweep {
    parameter: String,
    value: serde_json::Value,
    overall: PeerCounts,
}

fn run_peers(python: &str, run_dir: &Path) -> anyhow::Result<BTreeMap<String, PeerResult>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/quality.py");
    let out = run_dir.join("peers.json");
    let status = Command::new(python)
        .arg(&script)
        .arg(run_dir)
        .arg("--out")
        .arg(&out)
        .status()
        .with_context(|| format!("cannot run {python} {}", script.display()))?;
    if !status.success() {
        bail!("the peers script failed ({status}); rerun with --no-peers to skip it");
    }
    let peers: BTreeMap<String, PeerResult> = serde_json::from_slice(&std::fs::read(&out)?)
        .with_context(|| format!("cannot read {}", out.display()))?;
    Ok(peers)
}

fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

fn disguise_table(default: &Table, per_source: &[(&str, Table)]) -> String {
    let mut out = String::from(
        "\n## Per disguise (default settings; candidate sources alone at the same threshold)\n\n",
    );
    out.push_str("| disguise | pairs | precision | recall | F1 |");
    for (name, _) in per_source {
        let _ = write!(out, " recall {name} |");
    }
    out.push_str("\n|---|---:|---:|---:|---:|");
    out.push_str(&"---:|".repeat(per_source.len()));
    out.push('\n');
    for name in POSITIVE {
        let Some(c) = default.by_disguise.get(name) else {
            continue;
        };
        let _ = write!(
            out,
            "| {name} | {} | {} | {} | {} |",
            c.tp + c.missed,
            fmt3(c.precision()),
            fmt3(c.recall()),
            fmt3(c.f1())
        );
        for (_, table) in per_source {
            let r = table.by_disguise.get(name).map_or(0.0, |c| c.recall());
            let _ = write!(out, " {} |", fmt3(r));
        }
        out.push('\n');
    }
    out.push_str("\n| negative class | pages | false positives |");
    for (name, _) in per_source {
        let _ = write!(out, " FP {name} |");
    }
    out.push_str("\n|---|---:|---:|");
    out.push_str(&"---:|".repeat(per_source.len()));
    out.push('\n');
    for name in NEGATIVE {
        let Some(c) = default.by_disguise.get(name) else {
            continue;
        };
        let pages = default.pages.get(name).copied().unwrap_or(0);
        let _ = write!(out, "| {name} | {pages} | {} |", c.fp);
        for (_, table) in per_source {
            let fp = table.by_disguise.get(name).map_or(0, |c| c.fp);
            let _ = write!(out, " {fp} |");
        }
        out.push('\n');
    }
    let o = default.overall;
    let _ = write!(
        out,
        "\n**Overall (default): precision {}, recall {}, F1 {}** ({} copies found, {} missed, {} false positives).\n",
        fmt3(o.precision()),
        fmt3(o.recall()),
        fmt3(o.f1()),
        o.tp,
        o.missed,
        o.fp
    );
    for (name, table) in per_source {
        let o = table.overall;
        let _ = writeln!(
            out,
            "- candidates `{name}` alone: precision {}, recall {}, F1 {}",
            fmt3(o.precision()),
            fmt3(o.recall()),
            fmt3(o.f1())
        );
    }
    out
}

fn encoding_table(table: &Table) -> String {
    let mut out =
        String::from("\n| encoding on the wire | precision | recall |\n|---|---:|---:|\n");
    for (name, c) in &table.by_encoding {
        let _ = writeln!(
            out,
            "| {name} | {} | {} |",
            fmt3(c.precision()),
            fmt3(c.recall())
        );
    }
    out
}

/// How sure the figures are: 95 % Wilson intervals of precision (over the reports) and of the
/// share of negative pages reported (over the negative pages).
fn confidence_lines(table: &Table) -> String {
    let o = table.overall;
    let (precision_low, _) = score::wilson_interval(o.tp, o.tp + o.fp);
    let negatives: usize = table
        .pages
        .iter()
        .filter(|(name, _)| name.starts_with("negative"))
        .map(|(_, pages)| pages)
        .sum();
    let negative_fp: usize = table
        .by_disguise
        .iter()
        .filter(|(name, _)| name.starts_with("negative"))
        .map(|(_, c)| c.fp)
        .sum();
    let (_, fp_rate_high) = score::wilson_interval(negative_fp, negatives);
    format!(
        "- 95 % Wilson interval: precision at least {precision_low:.4} ({} reports); share of \
         negative pages reported at most {fp_rate_high:.4} ({negative_fp} of {negatives}).\n",
        o.tp + o.fp
    )
}

/// What the dense-stretch rule (`--min-stretch-chars`) changes: overall figures per setting,
/// then every class whose figures differ between settings.
fn stretch_table(runs: &[(usize, Table)], default: usize) -> String {
    let mut out = String::from(
        "\n## Dense-stretch rule (`--min-stretch-chars`, other settings default)\n\n| min stretch \
         chars | precision | recall | FP | FP on hard negatives | worst disguise recall |\n\
         |---:|---:|---:|---:|---:|---:|\n",
    );
    for (stretch, table) in runs {
        let mark = if *stretch == default { " ←" } else { "" };
        let hard = table.hard_negative_fp();
        let (_, worst) = table.worst_disguise();
        let _ = writeln!(
            out,
            "| {stretch}{mark} | {} | {} | {} | {hard} | {} |",
            fmt3(table.overall.precision()),
            fmt3(table.overall.recall()),
            table.overall.fp,
            fmt3(worst)
        );
    }
    let classes: Vec<&&str> = runs
        .first()
        .map(|(_, t)| t.by_disguise.keys().collect())
        .unwrap_or_default();
    let mut changed = String::new();
    for class in classes {
        let cells: Vec<String> = runs
            .iter()
            .map(|(_, t)| {
                let c = t.by_disguise.get(*class).copied().unwrap_or_default();
                if class.starts_with("negative") {
                    format!("{} FP", c.fp)
                } else {
                    fmt3(c.recall())
                }
            })
            .collect();
        if cells.windows(2).any(|w| w[0] != w[1]) {
            let _ = writeln!(changed, "| {class} | {} |", cells.join(" | "));
        }
    }
    if changed.is_empty() {
        out.push_str("\nNo class changes between these settings.\n");
    } else {
        let header: Vec<String> = runs.iter().map(|(s, _)| s.to_string()).collect();
        let _ = write!(
            out,
            "\n| class (recall, or false positives) | {} |\n|---|{}\n{changed}",
            header.join(" | "),
            "---:|".repeat(runs.len())
        );
    }
    out
}

fn sweep_table(points: &[SweepPoint], chosen: Option<u32>) -> String {
    let mut out = String::from(
        "\n## Report threshold sweep (all candidate sources)\n\n| min copied chars | precision | \
         recall | F1 | FP on hard negatives | worst disguise recall |\n|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        let mark = if Some(p.threshold) == chosen {
            " ←"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {}{mark} | {} | {} | {} | {} | {} |",
            p.threshold,
            fmt3(p.overall.precision()),
            fmt3(p.overall.recall()),
            fmt3(p.overall.f1()),
            p.hard_negative_fp,
            fmt3(p.worst_disguise_recall)
        );
    }
    out
}

fn peer_table(default: &Table, peers: &BTreeMap<String, PeerResult>) -> String {
    let ours = default.overall.f1();
    let mut out = String::from(
        "\n## Peers on the same pages (their recommended settings)\n\n| system | settings | precision | \
         recall | F1 | Copytrace F1 − peer F1 | seconds | best F1 tuned on these labels (upper bound) |\n\
         |---|---|---:|---:|---:|---:|---:|---|\n",
    );
    let _ = writeln!(
        out,
        "| **Copytrace (default)** | end to end through the CLI | {} | {} | {} | | | |",
        fmt3(default.overall.precision()),
        fmt3(default.overall.recall()),
        fmt3(ours)
    );
    for (name, peer) in peers {
        let best = peer.best_sweep.as_ref().map_or(String::new(), |b| {
            format!("{} at {} = {}", fmt3(b.overall.f1), b.parameter, b.value)
        });
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {:+.3} | {:.1} | {best} |",
            peer.settings,
            fmt3(peer.overall.precision),
            fmt3(peer.overall.recall),
            fmt3(peer.overall.f1),
            ours - peer.overall.f1,
            peer.seconds
        );
    }
    out.push_str("\n| disguise | Copytrace recall |");
    for name in peers.keys() {
        let _ = write!(out, " {name} recall |");
    }
    out.push_str("\n|---|---:|");
    out.push_str(&"---:|".repeat(peers.len()));
    out.push('\n');
    for name in POSITIVE {
        let Some(c) = default.by_disguise.get(name) else {
            continue;
        };
        let _ = write!(out, "| {name} | {} |", fmt3(c.recall()));
        for peer in peers.values() {
            let r = peer
                .per_disguise
                .get(name)
                .map_or("–".to_owned(), |c| fmt3(c.recall));
            let _ = write!(out, " {r} |");
        }
        out.push('\n');
    }
    out
}
