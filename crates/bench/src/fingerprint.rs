//! `copytrace-bench fingerprint`: one run, one table, one `RESULT` line.

use std::time::Duration;

use copytrace_fingerprint::cpu::{self, Level};
use copytrace_fingerprint::dna::{DnaConfig, ReferenceDistribution, dna_codes};
use copytrace_fingerprint::minhash::{DEFAULT_SEED, MinHasher};
use copytrace_fingerprint::simhash::{FeatureKind, SimHashAlgorithm};
use copytrace_fingerprint::weighted_features::jieba;
use copytrace_fingerprint::{
    Algorithm, FingerprintConfig, fingerprint_normalized, fingerprint_text, normalize,
    shingle_hashes,
};

use crate::corpus::chinese_prose;
use crate::timing::{mb_per_s, median, median_ratio, ns_per};

/// Options of `copytrace-bench fingerprint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Size of the generated Chinese corpus, in bytes of UTF-8.
    #[arg(long, default_value_t = 400_000)]
    bytes: usize,
    /// Timed repetitions per row (the median is reported).
    #[arg(long, default_value_t = 15)]
    reps: usize,
    /// Untimed warm-up repetitions per row.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
}

/// One line of the table.
struct Row {
    name: &'static str,
    value: Option<f64>,
    unit: &'static str,
    note: String,
}

impl Row {
    fn throughput(name: &'static str, bytes: usize, time: Duration) -> Row {
        Row {
            name,
            value: Some(mb_per_s(bytes, time)),
            unit: "MB/s",
            note: format!("median {:.2} ms for {bytes} B", time.as_secs_f64() * 1e3),
        }
    }
}

fn format_value(value: Option<f64>) -> String {
    value.map_or_else(|| "NA".to_owned(), |v| format!("{v:.2}"))
}

/// Runs every measurement and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let simplified = chinese_prose(args.bytes);
    let traditional = zhconv::zhconv(&simplified, zhconv::Variant::ZhHant);
    let config = FingerprintConfig::default();
    let time = |f: &mut dyn FnMut() -> usize| median(args.warmup, args.reps, f);
    let mut rows = Vec::new();

    rows.push(Row::throughput(
        "normalize (simplified)",
        simplified.len(),
        time(&mut || normalize(&simplified).len()),
    ));
    rows.push(Row::throughput(
        "normalize (traditional)",
        traditional.len(),
        time(&mut || normalize(&traditional).len()),
    ));
    let normalized = normalize(&simplified);
    rows.push(Row::throughput(
        "windows + SimHash",
        simplified.len(),
        time(&mut || fingerprint_normalized(&normalized, &config).len()),
    ));
    // The full pipeline of the issue: normalize + windows + SimHash + pinyin DNA.
    let dna_config = DnaConfig::default();
    let reference = ReferenceDistribution::builtin();
    let pipeline = time(&mut || {
        let fingerprint = fingerprint_text(&simplified, &config);
        fingerprint.windows.len()
            + dna_codes(&fingerprint.normalized.chars, &dna_config, &reference).len()
    });
    let pipeline_mb_s = mb_per_s(simplified.len(), pipeline);
    rows.push(Row::throughput(
        "full pipeline (simplified)",
        simplified.len(),
        pipeline,
    ));
    rows.push(Row::throughput(
        "full pipeline (traditional)",
        traditional.len(),
        time(&mut || {
            let fingerprint = fingerprint_text(&traditional, &config);
            fingerprint.windows.len()
                + dna_codes(&fingerprint.normalized.chars, &dna_config, &reference).len()
        }),
    ));
    rows.push(Row::throughput(
        "pinyin DNA alone",
        simplified.len(),
        time(&mut || dna_codes(&normalized.chars, &dna_config, &reference).len()),
    ));

    // Run-time CPU dispatch: the same loops forced to the baseline target vs the detected level.
    let level = cpu::detected();
    let fingerprints = pseudo_random_u64(1_000_000);
    let query = fingerprints[4242];
    let mut hits = Vec::new();
    let mut scan = |at: Level| {
        time(&mut || {
            hits.clear();
            cpu::hamming_scan_at(at, query, &fingerprints, 3, &mut hits);
            hits.len()
        })
    };
    let scan_portable = scan(Level::Portable);
    let scan_dispatched = scan(level);
    let popcount_speedup = scan_portable.as_secs_f64() / scan_dispatched.as_secs_f64();
    for (name, at, t) in [
        ("Hamming scan, portable", Level::Portable, scan_portable),
        ("Hamming scan, dispatched", level, scan_dispatched),
    ] {
        rows.push(Row {
            name,
            value: Some(ns_per(fingerprints.len(), t)),
            unit: "ns/fingerprint",
            note: format!("{} over 1M, k=3", at.name()),
        });
    }
    let hashes = &fingerprints[..46 * 10_000];
    let counts = |at: Level| {
        time(&mut || {
            let mut counts = [0u32; 64];
            for window in hashes.chunks(46) {
                cpu::bit_counts_at(at, window, &mut counts);
            }
            counts[0] as usize
        })
    };
    let counts_portable = counts(Level::Portable);
    let counts_dispatched = counts(level);
    for (name, at, t) in [
        (
            "SimHash columns, portable",
            Level::Portable,
            counts_portable,
        ),
        ("SimHash columns, dispatched", level, counts_dispatched),
    ] {
        rows.push(Row {
            name,
            value: Some(ns_per(hashes.len(), t)),
            unit: "ns/hash",
            note: format!("{}, 46-hash windows", at.name()),
        });
    }
    let columns_speedup = counts_portable.as_secs_f64() / counts_dispatched.as_secs_f64();
    // MinHash: 256 permutations over the 5-character shingle set of the corpus.
    const PERMUTATIONS: usize = 256;
    let shingles = shingle_hashes(&normalized.chars, 5);
    let hasher = MinHasher::new(PERMUTATIONS, DEFAULT_SEED);
    let minhash_time = time(&mut || hasher.signature(&shingles).len());
    let minhash = Some(ns_per(shingles.len() * PERMUTATIONS, minhash_time));
    rows.push(Row {
        name: "MinHash",
        value: minhash,
        unit: "ns/(shingle*perm)",
        note: format!("{} shingles x {PERMUTATIONS} permutations", shingles.len()),
    });
    // jieba mode (word features with TF-IDF weights, hashed into a SimHash) against a bare
    // jieba-rs cut of the same canonical text.
    let canonical = normalized.text();
    let words = SimHashAlgorithm {
        features: FeatureKind::Words,
        max_distance: 3,
    };
    let (ratio, ours, bare) = median_ratio(
        args.warmup,
        args.reps.max(31),
        || match words.fingerprint(&normalized.chars) {
            copytrace_fingerprint::Fingerprint::SimHash(value) => value as usize,
            _ => 0,
        },
        || jieba().cut(&canonical, false).len(),
    );
    let jieba = Some(ratio);
    rows.push(Row {
        name: "jieba mode / bare jieba cut",
        value: jieba,
        unit: "time ratio",
        note: format!(
            "{:.2} ms vs {:.2} ms",
            ours.as_secs_f64() * 1e3,
            bare.as_secs_f64() * 1e3
        ),
    });

    println!(
        "corpus: {} B simplified, {} B traditional; {} reps after {} warm-up, median",
        simplified.len(),
        traditional.len(),
        args.reps,
        args.warmup
    );
    println!("{:<34} {:>12} {:<18} note", "measurement", "value", "unit");
    for row in &rows {
        println!(
            "{:<34} {:>12} {:<18} {}",
            row.name,
            format_value(row.value),
            row.unit,
            row.note
        );
    }
    println!(
        "RESULT pipeline_mb_s_per_core={pipeline_mb_s:.2} minhash_ns_per_shingle_perm={} \
         jieba_ratio={} popcount_speedup={popcount_speedup:.2} \
         simhash_columns_speedup={columns_speedup:.2} cpu_level={}",
        format_value(minhash),
        format_value(jieba),
        level.name(),
    );
    Ok(())
}

/// `n` fixed pseudo-random 64-bit values (a PCG-style generator, the same on every run).
fn pseudo_random_u64(n: usize) -> Vec<u64> {
    let mut state = 1u64;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state ^ state >> 29
        })
        .collect()
}
