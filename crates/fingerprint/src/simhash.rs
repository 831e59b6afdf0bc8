//! SimHash (Charikar 2002): a locality-sensitive 64-bit signature of a weighted feature set,
//! for windows and, as [`SimHashAlgorithm`], for whole texts.
//!
//! Every feature contributes its weight to each bit column, positively where its hash has a 1
//! and negatively where it has a 0; the signature keeps the sign of each column. Texts that
//! share most of their features share most signature bits, so near-duplicate windows are a few
//! Hamming bits apart while unrelated ones sit near 32.
//!
//! [`simhash_weighted`] takes explicit hashes and weights (it reproduces the worked examples of
//! the SimHash literature with short hashes); [`simhash_ngrams`] and [`simhash_hashes`] are
//! what the window pipeline uses. [`SimHashAlgorithm`] signs a whole text's weighted features
//! (TF-IDF jieba words or counted character n-grams, made in [`crate::weighted_features`]).
//! [`hash_chars`] is the character hash of every n-gram feature in this crate, shingles and
//! sentences included.

use xxhash_rust::xxh3::xxh3_64;

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::weighted_features::{char_ngram_features, word_features};

/// Column sums of a weighted feature set over the low `bits` bits of each hash, listed from the
/// most significant column (`bits - 1`) to the least significant (0), the order in which the
/// literature writes them.
pub fn column_sums(features: &[(u64, i64)], bits: u32) -> Vec<i64> {
    assert!(
        (1..=64).contains(&bits),
        "SimHash width must be 1..=64 bits, got {bits}"
    );
    (0..bits)
        .rev()
        .map(|bit| {
            features
                .iter()
                .map(|&(hash, weight)| {
                    if hash >> bit & 1 == 1 {
                        weight
                    } else {
                        -weight
                    }
                })
                .sum()
        })
        .collect()
}

/// SimHash of a weighted feature set using the low `bits` bits of each hash: bit `i` of the
/// result is 1 when column `i`'s sum is positive.
pub fn simhash_weighted(features: &[(u64, i64)], bits: u32) -> u64 {
    column_sums(features, bits)
        .iter()
        .fold(0u64, |signature, &sum| signature << 1 | u64::from(sum > 0))
}

/// SimHash-64 of the character `n`-grams of `chars`, each weighted 1 (a text shorter than `n`
/// is one feature). Empty input gives 0.
pub fn simhash_ngrams(chars: &[char], n: usize) -> u64 {
    let n = n.max(1);
    if chars.is_empty() {
        return 0;
    }
    if chars.len() < n {
        return hash_chars(chars);
    }
    // Hash the n-grams in stack-sized batches and count their bit columns.
    let mut counts = [0u32; 64];
    let mut batch = [0u64; 256];
    let grams = chars.len() - n + 1;
    let mut done = 0;
    while done < grams {
        let take = (grams - done).min(batch.len());
        for (i, slot) in batch[..take].iter_mut().enumerate() {
            *slot = hash_chars(&chars[done + i..done + i + n]);
        }
        crate::cpu::bit_counts(&batch[..take], &mut counts);
        done += take;
    }
    signature_from_counts(&counts, grams)
}

/// SimHash of features that all weigh 1, given by their hashes. Identical to
/// [`simhash_ngrams`] when `hashes` are the [`ngram_hashes`] of a window (one hash: the hash
/// itself; none: 0).
pub fn simhash_hashes(hashes: &[u64]) -> u64 {
    let mut counts = [0u32; 64];
    crate::cpu::bit_counts(hashes, &mut counts);
    signature_from_counts(&counts, hashes.len())
}

/// With ±1 weights, column `bit` sums to `ones - (features - ones)`, which is positive exactly
/// when `2 * ones > features`.
fn signature_from_counts(counts: &[u32; 64], features: usize) -> u64 {
    counts
        .iter()
        .enumerate()
        .fold(0u64, |signature, (bit, &ones)| {
            signature | u64::from(2 * ones as usize > features) << bit
        })
}

/// [`hash_chars`] of every `n`-gram of `chars`, in order: `hashes[i]` covers
/// `chars[i..i + n]`. Empty when `chars` is shorter than `n`.
pub fn ngram_hashes(chars: &[char], n: usize) -> Vec<u64> {
    let n = n.max(1);
    if chars.len() < n {
        return Vec::new();
    }
    chars.windows(n).map(hash_chars).collect()
}

/// [`hash_chars`] of every `n`-gram of `chars`, sorted, repeats kept. A text shorter than `n`
/// (but not empty) is one n-gram, as in [`simhash_ngrams`]; empty input has none. The common
/// start of [`crate::shingles::shingle_hashes`] and
/// [`crate::weighted_features::char_ngram_features`].
pub(crate) fn sorted_ngram_hashes(chars: &[char], n: usize) -> Vec<u64> {
    let n = n.max(1);
    if chars.is_empty() {
        return Vec::new();
    }
    let mut hashes = if chars.len() < n {
        vec![hash_chars(chars)]
    } else {
        ngram_hashes(chars, n)
    };
    hashes.sort_unstable();
    hashes
}

/// Number of differing bits.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Stable 64-bit hash of a character sequence: XXH3-64 of the characters' code points as
/// little-endian `u32`s.
#[inline]
pub fn hash_chars(chars: &[char]) -> u64 {
    // Small buffers for the usual n-gram lengths: zeroing and hashing stay in registers.
    if chars.len() <= 4 {
        let mut bytes = [0u8; 16];
        for (i, &c) in chars.iter().enumerate() {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&(c as u32).to_le_bytes());
        }
        return xxh3_64(&bytes[..chars.len() * 4]);
    }
    if chars.len() <= 32 {
        let mut bytes = [0u8; 128];
        for (i, &c) in chars.iter().enumerate() {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&(c as u32).to_le_bytes());
        }
        return xxh3_64(&bytes[..chars.len() * 4]);
    }
    let long: Vec<u8> = chars
        .iter()
        .flat_map(|&c| (c as u32).to_le_bytes())
        .collect();
    xxh3_64(&long)
}

/// Output version of [`SimHashAlgorithm`]; bump whenever the same input would give another
/// signature (features, weights, segmentation or dictionaries).
pub const VERSION: u32 = 2;

/// Which features a [`SimHashAlgorithm`] hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureKind {
    /// Character `n`-grams weighted by count: needs no dictionary, works on any script.
    CharNgrams {
        /// n-gram length in canonical characters.
        n: usize,
    },
    /// jieba words weighted by TF-IDF: follows the content words of Chinese text.
    Words,
}

/// SimHash-64 of weighted features.
///
/// `similarity` is `1 − hamming / 64`, `distance` the Hamming distance in bits, and `is_match`
/// holds when the distance is at most `max_distance`. A text without features (empty, or only
/// one-character words) has signature 0, so two such texts match; callers fingerprint texts
/// of some length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimHashAlgorithm {
    /// The features hashed.
    pub features: FeatureKind,
    /// Largest Hamming distance, in bits, that still counts as a match.
    pub max_distance: u32,
}

impl Default for SimHashAlgorithm {
    /// TF-IDF words and at most 3 differing bits, the setting of Manku et al. (2007) for
    /// 64-bit SimHash near-duplicate detection, until the quality benchmark measures ours.
    fn default() -> Self {
        SimHashAlgorithm {
            features: FeatureKind::Words,
            max_distance: 3,
        }
    }
}

impl SimHashAlgorithm {
    /// The weighted features of canonical characters.
    pub fn features_of(&self, chars: &[char]) -> Vec<(u64, i64)> {
        match self.features {
            FeatureKind::CharNgrams { n } => char_ngram_features(chars, n),
            FeatureKind::Words => {
                // Chinese characters take three UTF-8 bytes: one allocation, no regrowth.
                let mut text = String::with_capacity(chars.len() * 3);
                text.extend(chars);
                word_features(&text)
            }
        }
    }
}

impl Algorithm for SimHashAlgorithm {
    fn name(&self) -> &'static str {
        "simhash"
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn fingerprint(&self, chars: &[char]) -> Fingerprint {
        Fingerprint::SimHash(simhash_weighted(&self.features_of(chars), 64))
    }

    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError> {
        let (&Fingerprint::SimHash(a), &Fingerprint::SimHash(b)) = (a, b) else {
            return Err(AlgorithmError::Incompatible(
                "simhash compares two SimHash signatures".into(),
            ));
        };
        let bits = hamming(a, b);
        Ok(Comparison {
            similarity: 1.0 - f64::from(bits) / 64.0,
            distance: Some(f64::from(bits)),
            is_match: bits <= self.max_distance,
        })
    }
}
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::normalize;

    /// Story prose with repeated words, for the whole-text SimHash tests here and in
    /// [`crate::weighted_features`].
    pub(crate) const STORY: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
        手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\
        远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了。少年握紧了手中的柴刀，\
        问他从哪里来，要到哪里去。陌生人只是笑了笑，说自己是来找一个故人的。";

    #[test]
    fn an_edited_copy_stays_close_and_an_unrelated_text_is_far() {
        let algo = SimHashAlgorithm::default();
        let original = normalize(STORY).chars;
        let pirate = normalize(&STORY.replace("柴刀", "长刀").replace("故人", "朋友")).chars;
        let other = normalize(
            "今天的红烧肉要先焯水，再用冰糖炒出糖色，然后加入生抽、老抽和八角，小火慢炖一个小时。\
             出锅前大火收汁，撒上葱花，肥而不腻，入口即化，是一道家常的下饭菜。",
        )
        .chars;
        let (a, b, c) = (
            algo.fingerprint(&original),
            algo.fingerprint(&pirate),
            algo.fingerprint(&other),
        );
        let near = algo.compare(&a, &b).unwrap();
        let far = algo.compare(&a, &c).unwrap();
        assert!(near.distance.unwrap() <= 10.0, "{near:?}");
        assert!(far.distance.unwrap() >= 16.0, "{far:?}");
        assert!(near.similarity > far.similarity);
        assert!(algo.compare(&a, &a).unwrap().is_match);
    }

    #[test]
    fn char_ngram_mode_separates_copies_from_unrelated_text() {
        let algo = SimHashAlgorithm {
            features: FeatureKind::CharNgrams { n: 3 },
            max_distance: 3,
        };
        let original = normalize(STORY).chars;
        let other = normalize("今天的红烧肉要先焯水再用冰糖炒出糖色然后加入生抽老抽和八角").chars;
        let c = algo
            .compare(&algo.fingerprint(&original), &algo.fingerprint(&other))
            .unwrap();
        assert!(!c.is_match);
        assert!(c.distance.unwrap() >= 16.0, "{c:?}");
    }

    #[test]
    fn comparing_with_another_kind_of_fingerprint_is_an_error() {
        let algo = SimHashAlgorithm::default();
        assert!(
            algo.compare(&Fingerprint::SimHash(0), &Fingerprint::Dna(vec![]))
                .is_err()
        );
    }

    fn bits(s: &str) -> u64 {
        u64::from_str_radix(s, 2).unwrap()
    }

    #[test]
    fn reproduces_the_five_keyword_worked_example() {
        // 美国 5, 51区 2, 飞碟 3, 灰色 1, 外星人 4
        let features = [
            (bits("100101"), 5),
            (bits("101011"), 2),
            (bits("100111"), 3),
            (bits("101111"), 1),
            (bits("111011"), 4),
        ];
        assert_eq!(column_sums(&features, 6), [15, -7, -1, 3, 5, 15]);
        assert_eq!(simhash_weighted(&features, 6), bits("100111"));
    }

    #[test]
    fn reproduces_the_random_hyperplane_worked_example() {
        let d = [1, 2, 0, 3, 0];
        let hashes = ["101", "011", "100", "001", "110"];
        let features: Vec<(u64, i64)> = hashes.iter().zip(d).map(|(h, w)| (bits(h), w)).collect();
        assert_eq!(simhash_weighted(&features, 3), bits("001"));
    }

    #[test]
    fn reproduces_the_two_keyword_worked_example() {
        let features = [(bits("100101"), 4), (bits("101011"), 5)];
        assert_eq!(column_sums(&features, 6), [9, -9, 1, -1, 1, 9]);
        assert_eq!(simhash_weighted(&features, 6), bits("101011"));
    }

    /// The original column-by-column SimHash, kept as the reference the fast path must match.
    fn simhash_ngrams_reference(chars: &[char], n: usize) -> u64 {
        let n = n.max(1);
        if chars.is_empty() {
            return 0;
        }
        let mut columns = [0i32; 64];
        let mut add = |gram: &[char]| {
            let hash = hash_chars(gram);
            for (bit, column) in columns.iter_mut().enumerate() {
                *column += if hash >> bit & 1 == 1 { 1 } else { -1 };
            }
        };
        if chars.len() < n {
            add(chars);
        } else {
            chars.windows(n).for_each(&mut add);
        }
        columns
            .iter()
            .enumerate()
            .fold(0u64, |signature, (bit, &sum)| {
                signature | u64::from(sum > 0) << bit
            })
    }

    #[test]
    fn fast_simhash_equals_the_column_by_column_reference() {
        let text: Vec<char> =
            "夜色渐深雨水顺着屋檐滴落下来少年推开木门看见一个披着蓑衣的陌生人abc123"
                .repeat(12)
                .chars()
                .collect();
        for n in [1, 2, 3, 4, 5, 8, 40] {
            for len in [0, 1, 2, 3, 4, 7, 48, 300, text.len()] {
                let chars = &text[..len];
                let expected = simhash_ngrams_reference(chars, n);
                assert_eq!(simhash_ngrams(chars, n), expected, "n {n}, len {len}");
                if len >= n {
                    assert_eq!(simhash_hashes(&ngram_hashes(chars, n)), expected);
                }
            }
        }
    }

    #[test]
    fn one_changed_character_moves_few_bits_and_unrelated_text_moves_many() {
        let a: Vec<char> =
            "夜色渐深雨水顺着屋檐滴落下来少年推开木门看见一个披着蓑衣的陌生人站在院中"
                .chars()
                .collect();
        let mut b = a.clone();
        b[10] = '树';
        let c: Vec<char> = "今天的红烧肉要先焯水再用冰糖炒出糖色然后加入生抽老抽和八角慢炖一个小时"
            .chars()
            .collect();
        let near = hamming(simhash_ngrams(&a, 3), simhash_ngrams(&b, 3));
        let far = hamming(simhash_ngrams(&a, 3), simhash_ngrams(&c, 3));
        assert!(near <= 12, "one edit moved {near} bits");
        assert!(far >= 16, "unrelated texts only {far} bits apart");
    }
}
