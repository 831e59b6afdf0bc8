//! The MinHash LSH and DNA indexes in Redis answer what the in-memory ones answer, on the same
//! windows, through inserts, removals and repeated inserts.

use std::collections::BTreeSet;

use copytrace_fingerprint::MinHasher;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{DnaIndex, Hit, Index, LshConfig, MinHashLshIndex, MinHashSignature};

use crate::helpers::{TestRedisIndex, splitmix};

/// Windows of one work: `(ordinal, key)`.
type Windows<K> = Vec<(u32, K)>;

fn segments(hits: &[Hit]) -> Vec<(i64, u32)> {
    let mut pairs: Vec<_> = hits
        .iter()
        .map(|h| (h.segment.work_id, h.segment.ordinal))
        .collect();
    pairs.sort_unstable();
    pairs
}

fn answers<K>(index: &dyn Index<K>, queries: &[K]) -> Vec<Vec<(i64, u32)>> {
    let mut hits = Vec::new();
    index.query_many(queries, &mut hits).unwrap();
    assert_eq!(hits.len(), queries.len(), "one answer per query");
    hits.iter()
        .map(|h| {
            let pairs = segments(h);
            let distinct: BTreeSet<_> = pairs.iter().collect();
            assert_eq!(distinct.len(), pairs.len(), "each window reported once");
            pairs
        })
        .collect()
}

/// Inserts every work in both, then compares the answers after inserting, after removing some
/// works, after inserting one again twice, and the window counts.
fn same_answers<K: Clone>(
    memory: &mut dyn Index<K>,
    redis: &mut dyn Index<K>,
    works: &[Windows<K>],
    queries: &[K],
) -> usize {
    for (id, windows) in works.iter().enumerate() {
        memory.insert_work(id as i64, windows).unwrap();
        redis.insert_work(id as i64, windows).unwrap();
    }
    let first = answers(memory, queries);
    assert_eq!(answers(redis, queries), first);
    assert_eq!(redis.len().unwrap(), memory.len().unwrap());
    for id in (0..works.len()).step_by(3) {
        memory.remove_work(id as i64).unwrap();
        redis.remove_work(id as i64).unwrap();
    }
    assert_eq!(answers(redis, queries), answers(memory, queries));
    assert_eq!(redis.len().unwrap(), memory.len().unwrap());
    // Inserting a work twice stores it once; removing it once leaves nothing of it.
    redis.insert_work(3, &works[3]).unwrap();
    redis.insert_work(3, &works[3]).unwrap();
    memory.insert_work(3, &works[3]).unwrap();
    assert_eq!(answers(redis, queries), answers(memory, queries));
    redis.remove_work(3).unwrap();
    memory.remove_work(3).unwrap();
    assert_eq!(answers(redis, queries), answers(memory, queries));
    first.iter().filter(|a| !a.is_empty()).count()
}

/// A random shingle set and a copy of it with `changed` of its shingles replaced.
fn shingles(state: &mut u64, size: usize, changed: usize) -> (Vec<u64>, Vec<u64>) {
    let original: Vec<u64> = (0..size).map(|_| splitmix(state)).collect();
    let mut edited = original.clone();
    for _ in 0..changed {
        let at = (splitmix(state) % size as u64) as usize;
        edited[at] = splitmix(state);
    }
    (original, edited)
}

#[test]
fn the_redis_minhash_index_proposes_the_windows_the_memory_index_proposes() {
    minhash_like_memory(TestRedisIndex::new(3));
}

#[test]
fn the_redis_minhash_index_on_a_cluster_proposes_the_windows_the_memory_index_proposes() {
    minhash_like_memory(TestRedisIndex::on_cluster(3));
}

#[test]
fn the_redis_dna_index_answers_exactly_what_the_memory_index_answers() {
    dna_like_memory(TestRedisIndex::new(3));
}

#[test]
fn the_redis_dna_index_on_a_cluster_answers_exactly_what_the_memory_index_answers() {
    dna_like_memory(TestRedisIndex::on_cluster(3));
}

fn minhash_like_memory(test: TestRedisIndex) {
    let config = LshConfig::default();
    let hasher = MinHasher::new(config.num_perm, 7);
    let mut state = 11;
    let mut works: Vec<Windows<MinHashSignature>> = Vec::new();
    let mut queries = Vec::new();
    for _ in 0..24 {
        let mut windows = Vec::new();
        for ordinal in 0..40 {
            let changed = (splitmix(&mut state) % 40) as usize;
            let (original, edited) = shingles(&mut state, 46, changed);
            windows.push((ordinal, hasher.signature(&original)));
            if ordinal % 4 == 0 {
                queries.push(hasher.signature(&edited));
            }
        }
        works.push(windows);
    }
    let mut redis = test.index.minhash(&config).unwrap();
    let mut memory = MinHashLshIndex::new(&config);
    let answered = same_answers(&mut memory, &mut redis, &works, &queries);
    assert!(
        answered > queries.len() / 3,
        "only {answered} queries found anything"
    );
}

fn dna_like_memory(test: TestRedisIndex) {
    let (levels, max_distance) = (9u8, 2u32);
    let base = u128::from(levels) + 1;
    let encode = |digits: &[u8; 26]| digits.iter().fold(0u128, |c, &d| c * base + u128::from(d));
    let mut state = 5;
    let random_digits = |state: &mut u64| -> [u8; 26] {
        std::array::from_fn(|_| (splitmix(state) % base as u64) as u8)
    };
    let centres: Vec<[u8; 26]> = (0..12).map(|_| random_digits(&mut state)).collect();
    let nudge = |mut digits: [u8; 26], state: &mut u64| {
        for _ in 0..splitmix(state) % 5 {
            let k = (splitmix(state) % 26) as usize;
            digits[k] = if digits[k] < levels {
                digits[k] + 1
            } else {
                digits[k] - 1
            };
        }
        digits
    };
    let mut works: Vec<Windows<u128>> = Vec::new();
    for _ in 0..20 {
        let windows = (0..50)
            .map(|ordinal| {
                let centre = centres[(splitmix(&mut state) % 12) as usize];
                (ordinal, encode(&nudge(centre, &mut state)))
            })
            .collect();
        works.push(windows);
    }
    let queries: Vec<u128> = (0..200)
        .map(|q| encode(&nudge(centres[q % 12], &mut state)))
        .collect();
    let mut redis = test.index.dna(levels, max_distance).unwrap();
    let mut memory = DnaIndex::new(levels, max_distance);
    let answered = same_answers(&mut memory, &mut redis, &works, &queries);
    assert!(answered > 100, "only {answered} queries found anything");
    let distances = |index: &dyn Index<u128>| {
        let mut hits = Vec::new();
        index.query_many(&queries, &mut hits).unwrap();
        hits.iter()
            .map(|h| {
                let mut d: Vec<_> = h
                    .iter()
                    .map(|h| (h.segment.work_id, h.segment.ordinal, h.distance))
                    .collect();
                d.sort_unstable();
                d
            })
            .collect::<Vec<_>>()
    };
    // Distances too: both check the exact code distance.
    assert_eq!(distances(&redis), distances(&memory));
}

#[test]
fn candidate_indexes_written_with_other_parameters_are_refused() {
    let test = TestRedisIndex::new(3);
    test.index.dna(9, 2).unwrap();
    let error = test
        .index
        .dna(9, 3)
        .err()
        .expect("another distance is refused");
    assert!(error.to_string().contains("dna_distance"), "{error}");
    let config = LshConfig::default();
    test.index.minhash(&config).unwrap();
    let other = LshConfig {
        threshold: 0.8,
        ..config
    };
    let error = test
        .index
        .minhash(&other)
        .err()
        .expect("other bands are refused");
    assert!(error.to_string().contains("minhash_"), "{error}");
    // Clearing the namespace clears the candidate indexes' parameters with their keys.
    let mut index =
        RedisIndex::connect(&crate::helpers::redis_url(), test.index.prefix(), 3).unwrap();
    index.clear().unwrap();
    index.dna(9, 3).unwrap();
}
