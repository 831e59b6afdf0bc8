//! `copytrace fingerprint` and `copytrace compare`: what the algorithms see in a text.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::ValueEnum;
use copytrace_service::inspect;
use copytrace_service::textfile::read_text_file;

/// `copytrace fingerprint`
#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {
    /// Which algorithm to show.
    #[arg(long, value_enum, default_value_t = AlgorithmChoice::All)]
    algo: AlgorithmChoice,
    /// Print JSON (every window, full fingerprints) instead of a summary.
    #[arg(long)]
    json: bool,
    /// A text file (UTF-8 or GBK/GB18030, detected).
    file: PathBuf,
}

/// `copytrace compare`
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The original (the work).
    file_a: PathBuf,
    /// The suspected copy (the page).
    file_b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AlgorithmChoice {
    /// Weighted SimHash-64 (jieba words, TF-IDF).
    Simhash,
    /// MinHash over character shingles.
    Minhash,
    /// Pinyin-initial DNA codes.
    Dna,
    /// Exact character shingle set.
    Shingles,
    /// Hashes of the longest sentences.
    Sentences,
    /// Every algorithm.
    All,
}

impl AlgorithmChoice {
    fn name(self) -> &'static str {
        match self {
            AlgorithmChoice::Simhash => "simhash",
            AlgorithmChoice::Minhash => "minhash",
            AlgorithmChoice::Dna => "dna",
            AlgorithmChoice::Shingles => "shingles",
            AlgorithmChoice::Sentences => "sentences",
            AlgorithmChoice::All => "all",
        }
    }
}

/// Runs `copytrace fingerprint`.
pub fn fingerprint(args: FingerprintArgs) -> Result<ExitCode> {
    let text = read_text_file(&args.file)?.text;
    let found = inspect::fingerprints(&text, &inspect::select_algorithms(args.algo.name()));
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
    } else {
        for f in &found {
            let document = inspect::describe(&f.document);
            writeln!(out, "{} v{}: {document}", f.algorithm, f.version)?;
            for w in &f.windows {
                let fingerprint = inspect::describe(&w.fingerprint);
                writeln!(
                    out,
                    "  bytes {:>7}..{:<7} {fingerprint}",
                    w.byte_start, w.byte_end
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `copytrace compare`.
pub fn compare(args: CompareArgs) -> Result<ExitCode> {
    let a = read_text_file(&args.file_a)?.text;
    let b = read_text_file(&args.file_b)?.text;
    let (comparisons, verdict) = inspect::compare(&a, &b);
    if args.json {
        let value = serde_json::json!({ "algorithms": comparisons, "matcher": verdict });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<10} {:>10} {:>10}  match",
        "algorithm", "similarity", "distance"
    );
    for c in &comparisons {
        let distance = c
            .comparison
            .distance
            .map(|d| format!("{d}"))
            .unwrap_or_else(|| "-".into());
        println!(
            "{:<10} {:>10.4} {:>10}  {}",
            c.algorithm,
            c.comparison.similarity,
            distance,
            if c.comparison.is_match { "yes" } else { "no" }
        );
    }
    println!(
        "matcher: {} (coverage of A {:.1}%, containment in B {:.1}%, {} characters in {} passage(s))",
        if verdict.is_match {
            "B copies A"
        } else {
            "no copy found"
        },
        verdict.coverage * 100.0,
        verdict.containment * 100.0,
        verdict.copied_chars,
        verdict.passages
    );
    Ok(ExitCode::SUCCESS)
}
