//! The k-gram postings in Redis answer what the in-memory ones answer, on the keys of real
//! texts, through inserts, removals and repeated inserts, on one server and on a cluster; and
//! a hash filed more often than the common limit stops growing there.

use copytrace_fingerprint::normalize;
use copytrace_matcher::postings::{
    Key, MemoryPostings, Posting, PostingIndex, distinct_hashes, work_keys,
};
use copytrace_matcher::{PostingConfig, WorkId};

use crate::helpers::{TestRedisIndex, splitmix};

/// Sorted postings of each hash, for order-free comparison.
fn answers(index: &dyn PostingIndex, hashes: &[u64], limit: usize) -> Vec<Vec<(WorkId, u32)>> {
    let mut found = Vec::new();
    index.lookup(hashes, limit, &mut found).unwrap();
    assert_eq!(found.len(), hashes.len(), "one answer per hash");
    found
        .iter()
        .map(|postings: &Vec<Posting>| {
            let mut pairs: Vec<_> = postings.iter().map(|p| (p.work_id, p.position)).collect();
            pairs.sort_unstable();
            pairs
        })
        .collect()
}

/// Texts of common characters, each sharing passages with the one before it.
fn texts(count: usize) -> Vec<String> {
    let alphabet: Vec<char> = "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜金生丽水玉出昆冈剑号巨阙珠称夜光果珍李柰菜重芥姜海咸河淡鳞潜羽翔"
        .chars()
        .collect();
    let mut state = 3;
    let mut previous: Vec<char> = Vec::new();
    (0..count)
        .map(|_| {
            let mut text: Vec<char> = (0..600)
                .map(|_| alphabet[(splitmix(&mut state) % alphabet.len() as u64) as usize])
                .collect();
            if !previous.is_empty() {
                text.splice(100..100, previous[200..320].iter().copied());
            }
            previous = text.clone();
            text.into_iter().collect()
        })
        .collect()
}

fn like_memory(test: TestRedisIndex) {
    let config = PostingConfig::default();
    let works: Vec<Vec<Key>> = texts(12)
        .iter()
        .map(|t| work_keys(&normalize(t).chars, &config))
        .collect();
    let hashes: Vec<u64> = distinct_hashes(&works.concat());
    let mut redis = test.index.postings_sized(&config, 0).unwrap();
    let mut memory = MemoryPostings::new();
    for (id, keys) in works.iter().enumerate() {
        memory.insert_work(id as WorkId, keys).unwrap();
        redis.insert_work(id as WorkId, keys).unwrap();
    }
    let limit = config.common;
    let first = answers(&memory, &hashes, limit);
    assert_eq!(answers(&redis, &hashes, limit), first);
    assert_eq!(redis.len().unwrap(), memory.len().unwrap());
    assert!(
        first.iter().any(|p| p.len() > 1),
        "the texts share passages, so some hash has postings of two works"
    );
    for id in (0..works.len()).step_by(3) {
        memory.remove_work(id as WorkId, &works[id]).unwrap();
        redis.remove_work(id as WorkId, &works[id]).unwrap();
    }
    assert_eq!(
        answers(&redis, &hashes, limit),
        answers(&memory, &hashes, limit)
    );
    assert_eq!(redis.len().unwrap(), memory.len().unwrap());
    // Filing a work twice stores it once; removing it once leaves nothing of it.
    redis.insert_work(3, &works[3]).unwrap();
    redis.insert_work(3, &works[3]).unwrap();
    memory.insert_work(3, &works[3]).unwrap();
    assert_eq!(
        answers(&redis, &hashes, limit),
        answers(&memory, &hashes, limit)
    );
    redis.remove_work(3, &works[3]).unwrap();
    memory.remove_work(3, &works[3]).unwrap();
    assert_eq!(
        answers(&redis, &hashes, limit),
        answers(&memory, &hashes, limit)
    );
    assert_eq!(redis.len().unwrap(), memory.len().unwrap());
}

#[test]
fn redis_postings_answer_what_memory_postings_answer() {
    like_memory(TestRedisIndex::new(3));
}

#[test]
fn redis_postings_on_a_cluster_answer_what_memory_postings_answer() {
    like_memory(TestRedisIndex::on_cluster(3));
}

#[test]
fn a_hash_filed_more_often_than_the_common_limit_stops_growing() {
    let test = TestRedisIndex::new(3);
    let config = PostingConfig {
        common: 4,
        ..PostingConfig::default()
    };
    let mut redis = test.index.postings_sized(&config, 0).unwrap();
    let shared = Key {
        hash: 0x0123_4567_89ab_cdef,
        position: 9,
        projection: copytrace_fingerprint::winnow::Projection::Chars,
    };
    for work in 1..=20 {
        redis.insert_work(work, &[shared]).unwrap();
    }
    // `common + 1` kept: enough for a lookup to tell the hash is common.
    assert_eq!(redis.len().unwrap(), 5);
    let found = answers(&redis, &[shared.hash], 100);
    assert_eq!(found[0].len(), 5);
    // A work past the limit was not filed, so removing it changes nothing.
    redis.remove_work(20, &[shared]).unwrap();
    assert_eq!(redis.len().unwrap(), 5);
    redis.remove_work(1, &[shared]).unwrap();
    assert_eq!(redis.len().unwrap(), 4);
}

#[test]
fn postings_filed_with_another_shape_are_refused() {
    let test = TestRedisIndex::new(3);
    test.index
        .postings_sized(&PostingConfig::default(), 0)
        .unwrap();
    let other = PostingConfig {
        window: 9,
        ..PostingConfig::default()
    };
    let error = test.index.postings_sized(&other, 0).unwrap_err();
    assert!(error.to_string().contains("postings_window"), "{error}");
}
