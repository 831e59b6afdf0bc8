//! The k-gram postings in Redis answer what the in-memory ones answer, on the keys of real
//! texts, through inserts, removals and repeated inserts, on one server and on a cluster; and
//! a hash filed more often than the common limit stops growing there.

use copytrace_fingerprint::normalize;
use copytrace_matcher::postings::{
    HashFilter, Key, MemoryPostings, Posting, PostingIndex, distinct_hashes, work_keys,
};
use copytrace_matcher::{PostingConfig, WorkId};

use crate::helpers::{TestRedisIndex, redis_url, splitmix};

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

/// Asserts both indexes give the same postings for every hash but the common one at
/// `common_at`, which the memory index holds without limit and Redis keeps `limit + 1` of:
/// both answer `limit + 1` postings of it, a lookup's sign that a hash is common.
fn same_but_common(
    redis: &dyn PostingIndex,
    memory: &dyn PostingIndex,
    hashes: &[u64],
    limit: usize,
    common_at: usize,
) {
    let mut from_redis = answers(redis, hashes, limit);
    let mut from_memory = answers(memory, hashes, limit);
    assert_eq!(from_redis[common_at].len(), limit + 1);
    assert_eq!(from_memory[common_at].len(), limit + 1);
    from_redis.remove(common_at);
    from_memory.remove(common_at);
    assert!(from_redis == from_memory, "the indexes answer differently");
}

/// New works appended in batches ([`RedisPostings::append_new_works`]) give the answers of
/// filing them one by one, with the common limit kept across batches, and can then be
/// replaced and removed as any other.
fn appended_like_filed(test: TestRedisIndex) {
    let config = PostingConfig {
        common: 4,
        ..PostingConfig::default()
    };
    let mut works: Vec<(WorkId, Vec<Key>)> = texts(12)
        .iter()
        .enumerate()
        .map(|(id, t)| (id as WorkId, work_keys(&normalize(t).chars, &config)))
        .collect();
    // Every work also carries one hash more often than the limit keeps.
    let shared = Key {
        hash: 0x0123_4567_89ab_cdef,
        position: 9,
        projection: copytrace_fingerprint::winnow::Projection::Chars,
    };
    for (_, keys) in &mut works {
        keys.push(shared);
    }
    let hashes: Vec<u64> = distinct_hashes(
        &works
            .iter()
            .flat_map(|(_, keys)| keys.iter().copied())
            .collect::<Vec<_>>(),
    );
    let mut redis = test.index.postings_sized(&config, 0).unwrap();
    let mut memory = MemoryPostings::new();
    for (id, keys) in &works {
        memory.insert_work(*id, keys).unwrap();
    }
    let (first, second) = works.split_at(5);
    redis.append_new_works(first).unwrap();
    redis.append_new_works(second).unwrap();
    let limit = config.common;
    let found = answers(&redis, &hashes, 100);
    let shared_at = hashes.iter().position(|&h| h == shared.hash).unwrap();
    assert_eq!(found[shared_at].len(), 5, "common + 1 kept across batches");
    same_but_common(&redis, &memory, &hashes, limit, shared_at);
    let held: usize = answers(&redis, &hashes, 100).iter().map(Vec::len).sum();
    assert_eq!(
        redis.len().unwrap(),
        held,
        "the count is what the buckets hold"
    );
    for (id, keys) in works.iter().skip(6) {
        redis.remove_work(*id, keys).unwrap();
        memory.remove_work(*id, keys).unwrap();
    }
    redis.insert_work(2, &works[2].1).unwrap();
    memory.insert_work(2, &works[2].1).unwrap();
    same_but_common(&redis, &memory, &hashes, limit, shared_at);
    let held: usize = answers(&redis, &hashes, 100).iter().map(Vec::len).sum();
    assert_eq!(
        redis.len().unwrap(),
        held,
        "the count is what the buckets hold"
    );
}

#[test]
fn new_works_appended_in_batches_answer_what_filing_them_answers() {
    appended_like_filed(TestRedisIndex::new(3));
}

#[test]
fn new_works_appended_on_a_cluster_answer_what_filing_them_answers() {
    appended_like_filed(TestRedisIndex::on_cluster(3));
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

/// A reader's filter: a bulk load writes it, a reader loads it and answers what the memory
/// postings answer; works appended or filed afterwards are skipped by a reader that has not
/// refreshed it (the filter is in use), and found once it has.
fn filtered_like_memory(test: TestRedisIndex) {
    let config = PostingConfig::default();
    let works: Vec<(WorkId, Vec<Key>)> = texts(12)
        .iter()
        .enumerate()
        .map(|(id, t)| (id as WorkId, work_keys(&normalize(t).chars, &config)))
        .collect();
    let all: Vec<Key> = works.iter().flat_map(|(_, k)| k.iter().copied()).collect();
    let hashes = distinct_hashes(&all);
    let limit = config.common;
    let mut writer = test.index.postings_sized(&config, 0).unwrap();
    let mut memory = MemoryPostings::new();
    let (loaded, appended) = works.split_at(6);
    writer.load(loaded.iter().cloned()).unwrap();
    for (id, keys) in loaded {
        memory.insert_work(*id, keys).unwrap();
    }
    let reader = test.index.postings(&config).unwrap();
    assert_eq!(reader.load_filter().unwrap(), HashFilter::MIN_BITS);
    assert_eq!(
        answers(&reader, &hashes, limit),
        answers(&memory, &hashes, limit)
    );

    let (batch, last) = appended.split_at(appended.len() - 1);
    writer.append_new_works(batch).unwrap();
    writer.insert_work(last[0].0, &last[0].1).unwrap();
    for (id, keys) in appended {
        memory.insert_work(*id, keys).unwrap();
    }
    assert!(writer.filter_has_room().unwrap());
    let stale = answers(&reader, &hashes, limit);
    assert_ne!(
        stale,
        answers(&memory, &hashes, limit),
        "a reader skips what its filter lacks"
    );
    reader.refresh().unwrap();
    assert_eq!(
        answers(&reader, &hashes, limit),
        answers(&memory, &hashes, limit)
    );

    // A filter written whole (grown) replaces the one in place; one of more than a megabyte
    // is read back in slices, the last one short.
    let mut grown = HashFilter::sized_for(3_000_000);
    assert!(grown.bits() > 8 << 20 && !grown.bits().is_multiple_of(8 << 20));
    for key in &all {
        grown.insert(key.hash);
    }
    writer.write_filter(&grown).unwrap();
    assert_eq!(reader.load_filter().unwrap(), grown.bits());
    assert_eq!(
        answers(&reader, &hashes, limit),
        answers(&memory, &hashes, limit)
    );
}

#[test]
fn a_reader_skips_hashes_its_filter_lacks_and_finds_appended_works_once_refreshed() {
    filtered_like_memory(TestRedisIndex::new(3));
}

#[test]
fn a_reader_on_a_cluster_skips_hashes_its_filter_lacks_until_refreshed() {
    filtered_like_memory(TestRedisIndex::on_cluster(3));
}

/// An index whose filter is still in the first layout (two probes anywhere, under
/// `{prefix}:p:filter`) is read whole, says it has no room so that the writer builds one in
/// the layout readers read, and loses the old one once that is written.
#[test]
fn a_filter_of_the_first_layout_is_read_whole_and_replaced() {
    let test = TestRedisIndex::new(3);
    let config = PostingConfig::default();
    let works: Vec<(WorkId, Vec<Key>)> = texts(4)
        .iter()
        .enumerate()
        .map(|(id, t)| (id as WorkId, work_keys(&normalize(t).chars, &config)))
        .collect();
    let all: Vec<Key> = works.iter().flat_map(|(_, k)| k.iter().copied()).collect();
    let hashes = distinct_hashes(&all);
    let mut memory = MemoryPostings::new();
    for (id, keys) in &works {
        memory.insert_work(*id, keys).unwrap();
    }
    let mut writer = test.index.postings_sized(&config, 0).unwrap();
    writer.load(works.iter().cloned()).unwrap();
    // What an index of the first layout holds: its filter under the old name, none under the
    // new one.
    let prefix = test.index.prefix().to_string();
    let mut redis = redis::Client::open(redis_url())
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("RENAME")
        .arg(format!("{prefix}:p:filter:b3"))
        .arg(format!("{prefix}:p:filter"))
        .query(&mut redis)
        .unwrap();
    let reader = test.index.postings(&config).unwrap();
    assert_eq!(
        reader.load_filter().unwrap(),
        0,
        "the old layout is not read"
    );
    assert_eq!(
        answers(&reader, &hashes, config.common),
        answers(&memory, &hashes, config.common)
    );
    assert!(!writer.filter_has_room().unwrap());

    let mut filter = HashFilter::sized_for(writer.len().unwrap() as u64);
    for key in &all {
        filter.insert(key.hash);
    }
    writer.write_filter(&filter).unwrap();
    assert!(writer.filter_has_room().unwrap());
    let old: bool = redis::cmd("EXISTS")
        .arg(format!("{prefix}:p:filter"))
        .query(&mut redis)
        .unwrap();
    assert!(!old, "the old layout's filter is deleted");
    assert_eq!(reader.load_filter().unwrap(), filter.bits());
    assert_eq!(
        answers(&reader, &hashes, config.common),
        answers(&memory, &hashes, config.common)
    );
}

/// Postings filed again under more bucket bits beside the ones in use: readers keep reading
/// the old buckets until they refresh, the switch records the new bits, the old buckets can
/// then be deleted (not the ones in use), and a refreshed reader answers as before.
fn rebucketed_like_memory(test: TestRedisIndex) {
    let config = PostingConfig::default();
    let works: Vec<(WorkId, Vec<Key>)> = texts(12)
        .iter()
        .enumerate()
        .map(|(id, t)| (id as WorkId, work_keys(&normalize(t).chars, &config)))
        .collect();
    let all: Vec<Key> = works.iter().flat_map(|(_, k)| k.iter().copied()).collect();
    let hashes = distinct_hashes(&all);
    let limit = config.common;
    let mut memory = MemoryPostings::new();
    for (id, keys) in &works {
        memory.insert_work(*id, keys).unwrap();
    }
    let expected = answers(&memory, &hashes, limit);
    let mut writer = test.index.postings_sized(&config, 0).unwrap();
    writer.load(works.iter().cloned()).unwrap();
    let old_bits = writer.bucket_bits();
    let reader = test.index.postings(&config).unwrap();
    assert_eq!(answers(&reader, &hashes, limit), expected);

    let filed = writer.len().unwrap() as u64;
    let mut loader = writer.loader_at(old_bits + 2, filed);
    for (id, keys) in &works {
        loader.add(*id, keys).unwrap();
    }
    loader.finish().unwrap();
    assert_eq!(writer.switch_bits(old_bits + 2).unwrap(), old_bits);
    assert_eq!(writer.len().unwrap() as u64, filed);
    // Not yet refreshed: the reader reads the old buckets, still whole.
    assert_eq!(reader.bucket_bits(), old_bits);
    assert_eq!(answers(&reader, &hashes, limit), expected);
    assert!(
        writer.drop_buckets(old_bits + 2).is_err(),
        "the buckets in use stay"
    );
    writer.drop_buckets(old_bits).unwrap();
    assert!(
        answers(&reader, &hashes, limit).iter().all(Vec::is_empty),
        "the old buckets are gone"
    );
    reader.refresh().unwrap();
    assert_eq!(reader.bucket_bits(), old_bits + 2);
    assert_eq!(answers(&reader, &hashes, limit), expected);
    let fresh = test.index.postings(&config).unwrap();
    assert_eq!(fresh.bucket_bits(), old_bits + 2);
    assert_eq!(answers(&fresh, &hashes, limit), expected);
}

#[test]
fn postings_filed_again_under_more_bucket_bits_answer_as_before() {
    rebucketed_like_memory(TestRedisIndex::new(3));
}

#[test]
fn postings_on_a_cluster_filed_again_under_more_bucket_bits_answer_as_before() {
    rebucketed_like_memory(TestRedisIndex::on_cluster(3));
}

#[test]
fn buckets_are_filed_again_once_they_hold_four_times_their_target() {
    use copytrace_index_redis::{OVERFULL_BUCKET, rebucket_bits};
    // 2^12 buckets: fine up to OVERFULL_BUCKET postings each.
    assert_eq!(rebucket_bits(OVERFULL_BUCKET << 12, 12), None);
    let grown = (OVERFULL_BUCKET << 12) + 1;
    let bits = rebucket_bits(grown, 12).expect("overfull");
    assert!(bits > 12);
    assert!(grown >> bits <= 8, "back to about 8 postings a bucket");
    // Never past the largest bucket count.
    assert_eq!(rebucket_bits(u64::MAX / 2, 28), None);
}
