//! `copytrace-bench extraction`: the crawler's stored page text scored on trafilatura's public
//! evaluation set, side by side with trafilatura in the same run.
//!
//! The set is the `tests` folder of a checkout of `adbar/trafilatura`: `evaldata.json` names,
//! for about a thousand real pages (news, blogs, forums, in many languages), up to six
//! snippets that must appear in the extracted text ("with") and up to six that must not
//! ("without"); the pages are in `eval/` and `cache/`. Scoring is trafilatura's own
//! (`tests/eval_common.py`): whitespace-normalized substring matching, a "with" snippet found
//! is a true positive, missed a false negative; a "without" snippet found is a false
//! positive. Copytrace's side is what the crawler stores and matches: the page decoded as the
//! crawler decodes it (`decode::decode_html`, no HTTP header), then `extract::extract`'s text
//! (the title is stored apart and is not part of it). trafilatura's side runs
//! `bench/peers/extraction.py` in a venv pinned to trafilatura 2.3.1 with its evaluation
//! settings (no comments, tables, no formatting).
//!
//! Recall is what matters most for Copytrace: matching tolerates text around a copy, while a
//! copy in a block the extractor dropped is a missed copy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use url::Url;

/// `copytrace-bench extraction`
#[derive(clap::Args)]
pub struct Args {
    /// The `tests` directory of a checkout of adbar/trafilatura (with `evaldata.json`, `eval/`
    /// and `cache/`).
    #[arg(long, value_name = "DIR")]
    trafilatura: PathBuf,
    /// Score Copytrace alone (no Python, no trafilatura).
    #[arg(long)]
    no_peers: bool,
    /// Python interpreter for the peer script (it makes its own venv under bench/cache).
    #[arg(long, default_value = "python3")]
    python: String,
    /// Write every page's text (Copytrace's, and trafilatura's when run) to this directory, one
    /// file per page, with the snippets each missed, for reading the failures.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

/// One annotated page of the evaluation set.
#[derive(serde::Deserialize)]
struct Item {
    file: String,
    with: Vec<String>,
    without: Vec<String>,
}

/// True and false positives and negatives over snippets.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.tn += other.tn;
    }

    fn precision(self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    fn recall(self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    fn f1(self) -> f64 {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Whitespace runs to one space, trimmed (trafilatura's `norm`).
fn norm(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Scores one page's text (`None`: the extractor failed, every snippet missed).
fn count(item: &Item, text: Option<&str>) -> Counts {
    let Some(text) = text else {
        return Counts {
            fn_: item.with.len(),
            tn: item.without.len(),
            ..Counts::default()
        };
    };
    let text = norm(text);
    let tp = item.with.iter().filter(|w| text.contains(&norm(w))).count();
    let fp = item
        .without
        .iter()
        .filter(|w| text.contains(&norm(w)))
        .count();
    Counts {
        tp,
        fp,
        fn_: item.with.len() - tp,
        tn: item.without.len() - fp,
    }
}

/// The page file of `name`, in `cache/` or `eval/` (trafilatura's order).
fn resolve(tests: &Path, name: &str) -> Option<PathBuf> {
    ["cache", "eval"]
        .iter()
        .map(|dir| tests.join(dir).join(name))
        .find(|path| path.is_file())
}

/// What trafilatura's peer script writes.
#[derive(serde::Deserialize)]
struct PeerOutput {
    version: String,
    seconds: f64,
    texts: BTreeMap<String, Option<String>>,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let evaldata = args.trafilatura.join("evaldata.json");
    let items: BTreeMap<String, Item> = serde_json::from_slice(
        &std::fs::read(&evaldata).with_context(|| {
            format!(
                "cannot read {}: pass --trafilatura the tests directory of a checkout of adbar/trafilatura",
                evaldata.display()
            )
        })?,
    )
    .with_context(|| format!("{} is not trafilatura's evaluation data", evaldata.display()))?;
    let mut pages = Vec::with_capacity(items.len());
    for (url, item) in &items {
        let path = resolve(&args.trafilatura, &item.file)
            .with_context(|| format!("{url}: page file {} not found", item.file))?;
        pages.push((url.as_str(), item, std::fs::read(&path)?));
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
    }

    let started = Instant::now();
    let mut ours: BTreeMap<&str, String> = BTreeMap::new();
    for (url, _, bytes) in &pages {
        let base = Url::parse(url).ok();
        let (html, _) = copytrace_crawler::decode::decode_html(bytes, None, base.as_ref());
        let base = base.unwrap_or_else(|| Url::parse("http://localhost/").expect("a URL"));
        let extracted = copytrace_crawler::extract::extract(&html, &base);
        ours.insert(url, extracted.text);
    }
    let our_seconds = started.elapsed().as_secs_f64();
    let mut our_counts = Counts::default();
    for (url, item, _) in &pages {
        our_counts.add(count(item, ours.get(url).map(String::as_str)));
    }

    let peer = if args.no_peers {
        None
    } else {
        Some(run_peer(&args.python, &args.trafilatura)?)
    };
    let mut peer_counts = Counts::default();
    if let Some(peer) = &peer {
        for (url, item, _) in &pages {
            let text = peer.texts.get(*url).and_then(Option::as_deref);
            peer_counts.add(count(item, text));
        }
    }

    if let Some(dir) = &args.dump {
        for (i, (url, item, _)) in pages.iter().enumerate() {
            let text = &ours[url];
            let normalized = norm(text);
            let missed: Vec<&String> = item
                .with
                .iter()
                .filter(|w| !normalized.contains(&norm(w)))
                .collect();
            let kept: Vec<&String> = item
                .without
                .iter()
                .filter(|w| normalized.contains(&norm(w)))
                .collect();
            let peer_text = peer
                .as_ref()
                .and_then(|p| p.texts.get(*url).cloned().flatten())
                .unwrap_or_default();
            let body = format!(
                "{url}\nfile: {}\nmissed: {missed:?}\nkept: {kept:?}\n\n=== copytrace\n{text}\n\n=== trafilatura\n{peer_text}\n",
                item.file
            );
            std::fs::write(dir.join(format!("{i:04}.txt")), body)?;
        }
    }

    println!(
        "trafilatura evaluation set: {} pages, {} snippets that must appear, {} that must not",
        pages.len(),
        items.values().map(|i| i.with.len()).sum::<usize>(),
        items.values().map(|i| i.without.len()).sum::<usize>()
    );
    println!();
    println!("| extractor | precision | recall | F1 | seconds |");
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| Copytrace (stored page text) | {:.3} | {:.3} | {:.3} | {:.1} |",
        our_counts.precision(),
        our_counts.recall(),
        our_counts.f1(),
        our_seconds
    );
    if let Some(peer) = &peer {
        println!(
            "| trafilatura {} | {:.3} | {:.3} | {:.3} | {:.1} |",
            peer.version,
            peer_counts.precision(),
            peer_counts.recall(),
            peer_counts.f1(),
            peer.seconds
        );
    }
    let mut result = format!(
        "RESULT pages={} copytrace_precision={:.4} copytrace_recall={:.4} copytrace_f1={:.4}",
        pages.len(),
        our_counts.precision(),
        our_counts.recall(),
        our_counts.f1()
    );
    if peer.is_some() {
        result.push_str(&format!(
            " trafilatura_precision={:.4} trafilatura_recall={:.4} trafilatura_f1={:.4} recall_ratio={:.3} f1_ratio={:.3}",
            peer_counts.precision(),
            peer_counts.recall(),
            peer_counts.f1(),
            our_counts.recall() / peer_counts.recall().max(f64::MIN_POSITIVE),
            our_counts.f1() / peer_counts.f1().max(f64::MIN_POSITIVE)
        ));
    }
    println!("\n{result}");
    Ok(())
}

fn run_peer(python: &str, tests: &Path) -> anyhow::Result<PeerOutput> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/extraction.py");
    let out = tempfile::NamedTempFile::new()?;
    let status = Command::new(python)
        .arg(&script)
        .arg(tests)
        .arg(out.path())
        .status()
        .with_context(|| format!("cannot run {python} {}", script.display()))?;
    if !status.success() {
        bail!("the trafilatura script failed ({status}); rerun with --no-peers to skip it");
    }
    let output: PeerOutput = serde_json::from_slice(&std::fs::read(out.path())?)
        .context("cannot read the trafilatura script's output")?;
    Ok(output)
}
