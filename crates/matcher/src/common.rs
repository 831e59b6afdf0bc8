//! Library-wide document frequency of alignment seeds: text many works share is boilerplate.
//!
//! A publisher's copyright notice, a serial's "未完待续" closing, a news agency's standard
//! paragraph or a poem every second novel quotes are all text the page and a work *share*
//! without one being copied from the other. A hand-made list of such phrases never ends and
//! never fits the next library, so the library tells instead: a seed (an n-gram hash of the
//! character or pinyin projection, see [`crate::align`]) that occurs in at least
//! [`AlignConfig::common_seed_min_works`](crate::align::AlignConfig::common_seed_min_works)
//! distinct works is *common*. Common seeds neither start an alignment nor count as copied
//! characters, and the characters they cover are left out of coverage and containment.
//!
//! The counts are kept up to date by the [`Matcher`](crate::Matcher): one call to
//! [`SeedFrequency::add`] when a work is inserted and one to [`SeedFrequency::remove`] when it is
//! removed, with the same [`WorkSeeds`].
//!
//! A matcher whose library is shared (the counts kept in Redis by whoever changes the library)
//! does not count: it is handed the seeds already known to be common
//! ([`SeedFrequency::from_common`]), which is all verification asks, and holds nothing for the
//! seeds of one or two works, the overwhelming majority of a library's seeds.

use foldhash::{HashMap, HashSet};

use crate::align::WorkSeeds;

/// Number of distinct works each seed hash occurs in, per projection.
#[derive(Debug, Clone, Default)]
pub struct SeedFrequency {
    chars: HashMap<u64, u32>,
    pinyin: HashMap<u64, u32>,
}

impl SeedFrequency {
    /// An empty table (no work known).
    pub fn new() -> Self {
        SeedFrequency::default()
    }

    /// Counts a work's seeds, each distinct hash once however often the work repeats it.
    pub fn add(&mut self, seeds: &WorkSeeds) {
        count(&mut self.chars, &seeds.chars, 1);
        count(&mut self.pinyin, &seeds.pinyin, 1);
    }

    /// A table holding only the seeds known to occur in at least `min_works` works (each
    /// counted as `min_works`): what a matcher sharing the library's counts needs, since
    /// verification only asks whether a seed is common at the configured threshold.
    pub fn from_common(
        chars: impl IntoIterator<Item = u64>,
        pinyin: impl IntoIterator<Item = u64>,
        min_works: usize,
    ) -> Self {
        let n = u32::try_from(min_works).unwrap_or(u32::MAX);
        SeedFrequency {
            chars: chars.into_iter().map(|h| (h, n)).collect(),
            pinyin: pinyin.into_iter().map(|h| (h, n)).collect(),
        }
    }

    /// Distinct seeds of each projection held (what [`SeedFrequency::from_common`] was given,
    /// for a shared table).
    pub fn held(&self) -> (usize, usize) {
        (self.chars.len(), self.pinyin.len())
    }

    /// Uncounts a work's seeds; `seeds` must be what was passed to [`SeedFrequency::add`].
    pub fn remove(&mut self, seeds: &WorkSeeds) {
        count(&mut self.chars, &seeds.chars, -1);
        count(&mut self.pinyin, &seeds.pinyin, -1);
    }

    /// Number of works containing the character seed `hash`.
    pub fn char_works(&self, hash: u64) -> u32 {
        self.chars.get(&hash).copied().unwrap_or(0)
    }

    /// Number of works containing the pinyin seed `hash`.
    pub fn pinyin_works(&self, hash: u64) -> u32 {
        self.pinyin.get(&hash).copied().unwrap_or(0)
    }

    /// Whether the character seed `hash` occurs in at least `min_works` works (never, when
    /// `min_works` is 0).
    pub fn is_common_char(&self, hash: u64, min_works: usize) -> bool {
        min_works > 0 && self.char_works(hash) as usize >= min_works
    }

    /// Whether the pinyin seed `hash` occurs in at least `min_works` works (never, when
    /// `min_works` is 0).
    pub fn is_common_pinyin(&self, hash: u64, min_works: usize) -> bool {
        min_works > 0 && self.pinyin_works(hash) as usize >= min_works
    }
}

/// Each distinct hash of `hashes` once, sorted: what a work adds to the counts.
pub fn distinct(hashes: &[u64]) -> Vec<u64> {
    let mut out = hashes.to_vec();
    out.sort_unstable();
    out.dedup();
    out
}

fn count(table: &mut HashMap<u64, u32>, hashes: &[u64], delta: i32) {
    let distinct: HashSet<u64> = hashes.iter().copied().collect();
    for hash in distinct {
        if delta > 0 {
            *table.entry(hash).or_default() += 1;
        } else if let Some(n) = table.get_mut(&hash) {
            *n -= 1;
            if *n == 0 {
                table.remove(&hash);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::AlignConfig;

    fn seeds(text: &str) -> WorkSeeds {
        let chars: Vec<char> = text.chars().collect();
        WorkSeeds::new(&chars, &AlignConfig::default())
    }

    #[test]
    fn a_seed_counts_once_per_work_and_disappears_with_its_last_work() {
        let a = seeds("版权所有未经许可不得转载版权所有未经许可不得转载甲");
        let b = seeds("版权所有未经许可不得转载乙");
        let hash = a.chars[0];
        let mut df = SeedFrequency::new();
        df.add(&a);
        assert_eq!(
            df.char_works(hash),
            1,
            "repeated within one work counts once"
        );
        df.add(&b);
        assert_eq!(df.char_works(hash), 2);
        assert!(df.is_common_char(hash, 2));
        assert!(!df.is_common_char(hash, 3));
        assert!(!df.is_common_char(hash, 0), "0 disables the rule");
        df.remove(&a);
        df.remove(&b);
        assert_eq!(df.char_works(hash), 0);
        assert!(df.chars.is_empty() && df.pinyin.is_empty());
    }

    #[test]
    fn a_table_of_known_common_seeds_answers_as_the_counts_do() {
        let works: Vec<WorkSeeds> = [
            "版权所有未经许可不得转载甲乙丙丁",
            "版权所有未经许可不得转载戊己庚辛",
            "版权所有未经许可不得转载壬癸子丑",
            "另一段完全不同的文字内容寅卯辰巳",
        ]
        .into_iter()
        .map(seeds)
        .collect();
        let mut counted = SeedFrequency::new();
        for work in &works {
            counted.add(work);
        }
        let common = |table: &HashMap<u64, u32>| -> Vec<u64> {
            table
                .iter()
                .filter(|(_, n)| **n >= 3)
                .map(|(h, _)| *h)
                .collect()
        };
        let known = SeedFrequency::from_common(common(&counted.chars), common(&counted.pinyin), 3);
        assert!(known.held().0 > 0, "the shared notice is common");
        for work in &works {
            for &h in &work.chars {
                assert_eq!(known.is_common_char(h, 3), counted.is_common_char(h, 3));
            }
            for &h in &work.pinyin {
                assert_eq!(known.is_common_pinyin(h, 3), counted.is_common_pinyin(h, 3));
            }
        }
        assert_eq!(distinct(&[3, 1, 3, 2]), vec![1, 2, 3]);
    }
}
