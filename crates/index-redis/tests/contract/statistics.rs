//! The library statistics in Redis (the sense index) answer what filing every work in memory
//! answers, through inserts, repeated inserts and removals.

use copytrace_fingerprint::normalize;
use copytrace_fingerprint::thesaurus::Thesaurus;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::laundering::{
    LaunderingConfig, SENSE_LISTED_MAX_WORKS, SenseIndex, SenseText, sentence_starts,
};
use copytrace_matcher::{MatchConfig, Matcher, WorkId};

use crate::helpers::{TestRedisIndex, cluster_url, redis_url};

const NOTICE: &str = "本书由某某文学网独家首发，版权所有，未经许可不得转载。";

/// More works than the sense index lists a key for, so some keys are only counted.
const WORKS: usize = SENSE_LISTED_MAX_WORKS + 88;

fn text(i: usize) -> String {
    let distinct: String = (0..8)
        .map(|j| char::from_u32(0x4E00 + ((i * 37 + j * 1_009) % 6_000) as u32).unwrap())
        .collect();
    let mut text = format!("第{i}回 {distinct}，少年推开木门，看见院子里站着一个陌生人。");
    if i.is_multiple_of(2) {
        text.push_str(NOTICE);
    }
    if i % 100 == 7 {
        text.push_str("老船夫摇着橹，把渡船慢慢撑到对岸的芦苇丛边，天色已经暗了下来。");
    }
    text
}

/// Filing in memory: what a matcher holding every work knows.
struct Reference {
    sense: SenseIndex,
}

impl Reference {
    fn new() -> Self {
        Reference {
            sense: SenseIndex::new(),
        }
    }

    fn count(&mut self, id: WorkId, keys: &[u32], delta: isize) {
        if delta > 0 {
            self.sense.insert_work(id, keys);
        } else {
            self.sense.remove_work(id, keys);
        }
    }
}

/// Compares what the Redis statistics load with the reference.
fn same_statistics(stats: &copytrace_index_redis::RedisLibraryStats, reference: &Reference) {
    let sense = stats.sense_index().unwrap();
    let thesaurus = Thesaurus::builtin();
    for page in [
        "老船夫摇着橹，把渡船慢慢撑到对岸的芦苇丛边，天色已经暗了下来。",
        "少年推开木门，看见院子里站着一个陌生人。",
        NOTICE,
    ] {
        let normalized = normalize(page);
        let starts = sentence_starts(page, &normalized);
        let text = SenseText::new(&normalized.chars, &starts, thesaurus);
        let config = LaunderingConfig::default();
        assert_eq!(
            sense.query(&normalized.chars, &text, thesaurus, &config),
            reference
                .sense
                .query(&normalized.chars, &text, thesaurus, &config),
            "{page}"
        );
    }
    assert_eq!(sense.len(), reference.sense.len());
}

fn statistics_like_memory(url: &str) {
    let test = TestRedisIndex {
        index: RedisIndex::connect(url, &crate::helpers::unique_prefix(), 3).unwrap(),
    };
    let config = MatchConfig::default();
    let stats = test.index.statistics().unwrap();
    let keys_of = Matcher::new(config);
    let keys: Vec<Vec<u32>> = (0..WORKS)
        .map(|i| keys_of.sense_keys_of(&text(i)))
        .collect();
    let mut reference = Reference::new();
    for (i, keys) in keys.iter().enumerate() {
        stats.insert_work(i as WorkId, keys).unwrap();
        reference.count(i as WorkId, keys, 1);
    }
    assert_eq!(stats.work_count().unwrap(), WORKS);
    same_statistics(&stats, &reference);
    // Rarities: a key of every work is counted beyond the lists, and weighs as in memory.
    let sense = stats.sense_index().unwrap();
    for key in &keys[7] {
        assert_eq!(sense.rarity(&[*key]), reference.sense.rarity(&[*key]));
    }
    // Inserting a counted work again counts nothing.
    stats.insert_work(4, &keys[4]).unwrap();
    same_statistics(&stats, &reference);
    // Removing works takes them out of the lists. Removing a work twice changes nothing.
    for i in (0..WORKS).step_by(3) {
        stats.remove_work(i as WorkId).unwrap();
        reference.count(i as WorkId, &keys[i], -1);
    }
    stats.remove_work(0).unwrap();
    stats.remove_work(3).unwrap();
    assert_eq!(stats.work_count().unwrap(), WORKS - WORKS.div_ceil(3));
    same_statistics(&stats, &reference);
    // A removed work inserted again is counted again.
    stats.insert_work(6, &keys[6]).unwrap();
    reference.count(6, &keys[6], 1);
    same_statistics(&stats, &reference);
    // Removing every work leaves no sense list behind.
    for i in 0..WORKS {
        stats.remove_work(i as WorkId).unwrap();
    }
    assert_eq!(stats.work_count().unwrap(), 0);
    assert!(stats.sense_index().unwrap().is_empty());
    if url == redis_url() {
        let left = crate::helpers::keys_under(test.index.prefix());
        assert!(
            left.iter()
                .all(|k| k.ends_with(":meta") || k.ends_with(":k:keys")),
            "{left:?}"
        );
    }
}

#[test]
fn the_redis_statistics_answer_what_filing_in_memory_answers() {
    statistics_like_memory(&redis_url());
}

#[test]
fn the_redis_statistics_on_a_cluster_answer_what_filing_in_memory_answers() {
    statistics_like_memory(&cluster_url());
}
