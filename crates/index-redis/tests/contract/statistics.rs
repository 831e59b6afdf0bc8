//! The library statistics in Redis answer what counting every work in memory answers: the
//! same common seeds, the same sense index, through inserts, repeated inserts and removals.

use std::collections::HashMap;

use copytrace_fingerprint::normalize;
use copytrace_fingerprint::thesaurus::Thesaurus;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::laundering::{
    LaunderingConfig, SENSE_LISTED_MAX_WORKS, SenseIndex, SenseText, sentence_starts,
};
use copytrace_matcher::{MatchConfig, Matcher, StatisticsKeys, WorkId};

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

/// Counting in memory: what a matcher holding every work knows.
struct Reference {
    min_works: usize,
    chars: HashMap<u64, usize>,
    pinyin: HashMap<u64, usize>,
    sense: SenseIndex,
}

impl Reference {
    fn new(min_works: usize) -> Self {
        Reference {
            min_works,
            chars: HashMap::new(),
            pinyin: HashMap::new(),
            sense: SenseIndex::new(),
        }
    }

    fn count(&mut self, id: WorkId, keys: &StatisticsKeys, delta: isize) {
        for (table, seeds) in [
            (&mut self.chars, &keys.char_seeds),
            (&mut self.pinyin, &keys.pinyin_seeds),
        ] {
            for seed in seeds {
                let n = table.entry(*seed).or_default();
                *n = n.checked_add_signed(delta).unwrap();
            }
        }
        if delta > 0 {
            self.sense.insert_work(id, &keys.sense);
        } else {
            self.sense.remove_work(id, &keys.sense);
        }
    }
}

/// Compares what the Redis statistics load with the reference.
fn same_statistics(stats: &copytrace_index_redis::RedisLibraryStats, reference: &Reference) {
    let common = stats.common_seeds().unwrap();
    let mut commons = 0;
    for (seed, n) in &reference.chars {
        let expected = *n >= reference.min_works;
        assert_eq!(common.is_common_char(*seed, reference.min_works), expected);
        commons += usize::from(expected);
    }
    for (seed, n) in &reference.pinyin {
        assert_eq!(
            common.is_common_pinyin(*seed, reference.min_works),
            *n >= reference.min_works
        );
    }
    assert!(commons > 0, "the notice is common");
    assert_eq!(common.held().0, commons, "only common seeds are held");
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
    let min_works = config.align.common_seed_min_works;
    let stats = test.index.statistics(min_works).unwrap();
    let keys_of = Matcher::new(config);
    let keys: Vec<StatisticsKeys> = (0..WORKS)
        .map(|i| keys_of.statistics_keys(&text(i)))
        .collect();
    let mut reference = Reference::new(min_works);
    for (i, keys) in keys.iter().enumerate() {
        stats.insert_work(i as WorkId, keys).unwrap();
        reference.count(i as WorkId, keys, 1);
    }
    assert_eq!(stats.work_count().unwrap(), WORKS);
    same_statistics(&stats, &reference);
    // Rarities: a key of every work is counted beyond the lists, and weighs as in memory.
    let sense = stats.sense_index().unwrap();
    for key in &keys[7].sense {
        assert_eq!(sense.rarity(&[*key]), reference.sense.rarity(&[*key]));
    }
    // Inserting a counted work again counts nothing.
    stats.insert_work(4, &keys[4]).unwrap();
    same_statistics(&stats, &reference);
    // Removing works uncounts them; seeds fall back below the threshold. Removing a work
    // twice changes nothing.
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
    // Removing every work leaves no count, no common seed and no sense list behind.
    for i in 0..WORKS {
        stats.remove_work(i as WorkId).unwrap();
    }
    assert_eq!(stats.work_count().unwrap(), 0);
    assert_eq!(stats.common_seeds().unwrap().held(), (0, 0));
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
fn the_redis_statistics_answer_what_counting_in_memory_answers() {
    statistics_like_memory(&redis_url());
}

#[test]
fn the_redis_statistics_on_a_cluster_answer_what_counting_in_memory_answers() {
    statistics_like_memory(&cluster_url());
}
