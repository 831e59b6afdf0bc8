//! Criterion benches of candidate generation per source, and of a whole page match with only
//! SimHash candidates against all three sources, on the demo library; the `romanized` page
//! (a fifth of the copy's characters in pinyin) also costs the page's reading as syllables.
//!
//! `cargo bench -p copytrace-matcher --bench candidates`. The library is the four demo works;
//! index lookups barely depend on its size (a few hash probes per window), so what this measures
//! is what each source adds per page: MinHash signing of every window and DNA codes at every
//! initial.

use std::hint::black_box;

use copytrace_fingerprint::minhash::splitmix64;
use copytrace_matcher::{CandidateMethods, MatchConfig, Matcher};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pinyin::ToPinyin;

const LIBRARY: [&str; 4] = [
    include_str!("../../copytrace/demo/library/jianghu-ch1.txt"),
    include_str!("../../copytrace/demo/library/news-harbor.txt"),
    include_str!("../../copytrace/demo/library/xingchen-ch1.txt"),
    include_str!("../../copytrace/demo/library/xingchen-ch2.txt"),
];
const BOILERPLATE: &str = include_str!("../../copytrace/demo/site/boilerplate.txt");
const COOKING: &str = include_str!("../../copytrace/demo/unrelated/cooking.txt");

fn matcher(methods: CandidateMethods) -> Matcher {
    let mut config = MatchConfig::default();
    config.candidates.methods = methods;
    let mut m = Matcher::new(config);
    for (id, text) in (1..).zip(LIBRARY) {
        m.add_work(id, text).unwrap();
    }
    m
}

/// `text` with each Chinese character written in toneless pinyin (`xiao说`) with probability
/// one in five, the disguise that makes the matcher read the page a second time.
fn romanized(text: &str) -> String {
    let mut state = 0x5eed;
    text.chars()
        .map(|c| match c.to_pinyin() {
            Some(p) if splitmix64(&mut state).is_multiple_of(5) => p.plain().to_owned(),
            _ => c.to_string(),
        })
        .collect()
}

fn pages() -> [(&'static str, String); 3] {
    [
        (
            "copy",
            format!("{BOILERPLATE}\n{}\n{BOILERPLATE}", LIBRARY[2]),
        ),
        ("unrelated", format!("{BOILERPLATE}\n{COOKING}")),
        (
            "romanized",
            format!("{BOILERPLATE}\n{}\n{BOILERPLATE}", romanized(LIBRARY[2])),
        ),
    ]
}

fn candidate_benches(c: &mut Criterion) {
    let sources = [
        ("simhash", CandidateMethods::SIMHASH),
        ("minhash", CandidateMethods::MINHASH),
        ("dna", CandidateMethods::DNA),
        ("all", CandidateMethods::ALL),
    ];
    let mut group = c.benchmark_group("candidates");
    for (page_name, page) in pages() {
        group.throughput(Throughput::BytesDecimal(page.len() as u64));
        for (name, methods) in sources {
            let m = matcher(methods);
            group.bench_with_input(BenchmarkId::new(name, page_name), &page, |b, page| {
                b.iter(|| m.candidates_for(black_box(page)).unwrap())
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("match_text");
    for (page_name, page) in pages() {
        group.throughput(Throughput::BytesDecimal(page.len() as u64));
        for (name, methods) in [sources[0], sources[3]] {
            let m = matcher(methods);
            group.bench_with_input(BenchmarkId::new(name, page_name), &page, |b, page| {
                b.iter(|| m.match_text(black_box(page)).unwrap())
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("add_work");
    for (name, methods) in [sources[0], sources[3]] {
        group.bench_function(name, |b| b.iter(|| matcher(black_box(methods))));
    }
    group.finish();
}

criterion_group!(benches, candidate_benches);
criterion_main!(benches);
