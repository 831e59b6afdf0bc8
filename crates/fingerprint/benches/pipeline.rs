//! Criterion benches of the fingerprinting pipeline on ~400 KB of Chinese prose.
//!
//! `cargo bench -p copytrace-fingerprint --bench pipeline` (add `-- hamming` for one group).
//! Throughput is counted in decimal bytes of UTF-8 input, so criterion prints MB/s directly
//! comparable with `copytrace-bench fingerprint`.

use std::hint::black_box;

use copytrace_fingerprint::cpu::{self, Level};
use copytrace_fingerprint::minhash::DEFAULT_SEED;
use copytrace_fingerprint::simhash::{FeatureKind, SimHashAlgorithm};
use copytrace_fingerprint::weighted_features::jieba;
use copytrace_fingerprint::{
    Algorithm, DnaConfig, FingerprintConfig, MinHasher, ReferenceDistribution, dna_codes,
    fingerprint_normalized, fingerprint_text, normalize, shingle_hashes,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[allow(dead_code, missing_docs)]
#[path = "../../bench/src/corpus.rs"]
mod corpus;

fn text_benches(c: &mut Criterion) {
    let text = corpus::chinese_prose(400_000);
    let config = FingerprintConfig::default();
    let normalized = normalize(&text);
    let mut group = c.benchmark_group("text");
    group.throughput(Throughput::BytesDecimal(text.len() as u64));
    group.sample_size(20);
    group.bench_function("normalize", |b| b.iter(|| normalize(black_box(&text))));
    group.bench_function("windows_simhash", |b| {
        b.iter(|| fingerprint_normalized(black_box(&normalized), &config))
    });
    group.bench_function("full_pipeline", |b| {
        b.iter(|| fingerprint_text(black_box(&text), &config))
    });
    // The fingerprint-generator issue's full pipeline: normalize + windows + SimHash + DNA.
    let dna_config = DnaConfig::default();
    let reference = ReferenceDistribution::builtin();
    group.bench_function("full_pipeline_with_dna", |b| {
        b.iter(|| {
            let fingerprint = fingerprint_text(black_box(&text), &config);
            let codes = dna_codes(&fingerprint.normalized.chars, &dna_config, &reference);
            (fingerprint.windows.len(), codes.len())
        })
    });
    group.finish();

    // jieba mode (TF-IDF word SimHash) and a bare jieba-rs cut of the same canonical text,
    // side by side in one group so their ratio comes from one run.
    let canonical = normalized.text();
    let words = SimHashAlgorithm {
        features: FeatureKind::Words,
        max_distance: 3,
    };
    let mut group = c.benchmark_group("jieba");
    group.throughput(Throughput::BytesDecimal(canonical.len() as u64));
    group.sample_size(30);
    group.bench_function("bare_cut", |b| {
        b.iter(|| jieba().cut(black_box(&canonical), false).len())
    });
    group.bench_function("word_simhash", |b| {
        b.iter(|| words.fingerprint(black_box(&normalized.chars)))
    });
    group.finish();

    // MinHash with 256 permutations; elements are shingle x permutation pairs.
    let shingles = shingle_hashes(&normalized.chars, 5);
    let hasher = MinHasher::new(256, DEFAULT_SEED);
    let mut group = c.benchmark_group("minhash_256");
    group.throughput(Throughput::Elements((shingles.len() * 256) as u64));
    group.bench_function("signature", |b| {
        b.iter(|| hasher.signature(black_box(&shingles)))
    });
    group.finish();
}

fn hamming_benches(c: &mut Criterion) {
    let mut state = 1u64;
    let fingerprints: Vec<u64> = (0..1_000_000)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state ^ state >> 29
        })
        .collect();
    let query = fingerprints[12_345];
    let mut group = c.benchmark_group("hamming_scan_1m");
    group.throughput(Throughput::Elements(fingerprints.len() as u64));
    group.sample_size(20);
    for level in [Level::Portable, cpu::detected()] {
        group.bench_with_input(
            BenchmarkId::from_parameter(level.name()),
            &level,
            |b, &level| {
                let mut out = Vec::new();
                b.iter(|| {
                    out.clear();
                    cpu::hamming_scan_at(level, black_box(query), &fingerprints, 3, &mut out);
                    out.len()
                })
            },
        );
    }
    group.finish();

    let hashes = &fingerprints[..46 * 1000];
    let mut group = c.benchmark_group("simhash_bit_counts_46k");
    group.throughput(Throughput::Elements(hashes.len() as u64));
    for level in [Level::Portable, cpu::detected()] {
        group.bench_with_input(
            BenchmarkId::from_parameter(level.name()),
            &level,
            |b, &level| {
                b.iter(|| {
                    let mut counts = [0u32; 64];
                    for window in hashes.chunks(46) {
                        cpu::bit_counts_at(level, black_box(window), &mut counts);
                    }
                    counts
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, text_benches, hamming_benches);
criterion_main!(benches);
