//! Weighted features for SimHash: character n-grams or jieba words with TF-IDF weights.
//!
//! Unweighted character n-grams ([`crate::simhash::simhash_ngrams`]) let the most frequent
//! function words ("的", "了", "是") move as many signature bits as the rare names and phrases
//! that identify a text. Weighting words by TF-IDF makes the signature follow what the text is
//! about, so a pirate's changed filler words and inserted slogans move fewer bits.
//!
//! The IDF table is the one bundled with `jieba-rs` (`TfIdf`, built from the jieba project's
//! corpus statistics; words it does not know get its median IDF), and the segmentation is
//! jieba's dictionary mode without HMM, so the same text always gives the same words.
//! Both the dictionary and the IDF table are loaded once per process, on first use, and shared
//! read-only by all threads.

use std::sync::LazyLock;

use jieba_rs::{Jieba, KeywordExtract, TfIdf};
use xxhash_rust::xxh3::xxh3_64;

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::simhash::{hamming, hash_chars, simhash_weighted};

/// Output version of [`SimHashAlgorithm`]; bump whenever the same input would give another
/// signature (features, weights, segmentation or dictionaries).
pub const VERSION: u32 = 1;

/// Loading jieba's dictionary takes about 100 ms, far more than segmenting a chapter, so one
/// instance serves the whole process.
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// jieba's bundled IDF table, loaded once for the same reason as [`JIEBA`].
static TFIDF: LazyLock<TfIdf> = LazyLock::new(TfIdf::default);

/// Weighted SimHash features are scaled so the heaviest is this integer weight: SimHash only
/// compares column sums, so any common scale gives the same signature, and a million keeps six
/// significant digits of the lightest weights.
const WEIGHT_SCALE: f64 = 1_000_000.0;

/// The shared jieba segmenter, for callers that need other jieba modes on the same dictionary
/// without loading it a second time.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

/// jieba words of `text` (dictionary mode, no HMM), borrowed from `text`.
///
/// This is the segmentation the word features use, with no work per word beyond jieba's own,
/// so benchmarks can hold it against a bare `Jieba::cut`.
pub fn jieba_words(text: &str) -> Vec<&str> {
    JIEBA
        .cut(text, false)
        .into_iter()
        .map(|token| token.word)
        .collect()
}

/// Character `n`-grams of `chars` weighted by their count in the text (there is no corpus IDF
/// for n-grams). A text shorter than `n` is one feature, as in
/// [`crate::simhash::simhash_ngrams`]; empty input has none.
pub fn char_ngram_features(chars: &[char], n: usize) -> Vec<(u64, i64)> {
    let n = n.max(1);
    if chars.is_empty() {
        return Vec::new();
    }
    let mut hashes: Vec<u64> = if chars.len() < n {
        vec![hash_chars(chars)]
    } else {
        chars.windows(n).map(hash_chars).collect()
    };
    hashes.sort_unstable();
    let mut features: Vec<(u64, i64)> = Vec::with_capacity(hashes.len());
    for hash in hashes {
        match features.last_mut() {
            Some((last, count)) if *last == hash => *count += 1,
            _ => features.push((hash, 1)),
        }
    }
    features
}

/// jieba words of `text` weighted by TF-IDF (term frequency × jieba's IDF), the heaviest scaled
/// to a million. Like jieba's keyword extraction, one-character words and a few English stop
/// words are left out: single characters are mostly particles and would drown the signal.
pub fn word_features(text: &str) -> Vec<(u64, i64)> {
    let keywords = TFIDF.extract_keywords(&JIEBA, text, usize::MAX, Vec::new());
    let heaviest = keywords.iter().map(|k| k.weight).fold(0.0_f64, f64::max);
    if heaviest <= 0.0 {
        return Vec::new();
    }
    keywords
        .iter()
        .map(|k| {
            let weight = (k.weight / heaviest * WEIGHT_SCALE).round().max(1.0) as i64;
            (xxh3_64(k.keyword.as_bytes()), weight)
        })
        .collect()
}

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
            FeatureKind::Words => word_features(&chars.iter().collect::<String>()),
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
mod tests {
    use super::*;
    use crate::normalize;
    use crate::simhash::simhash_ngrams;

    const STORY: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
        手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\
        远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了。少年握紧了手中的柴刀，\
        问他从哪里来，要到哪里去。陌生人只是笑了笑，说自己是来找一个故人的。";

    #[test]
    fn jieba_words_cover_the_text_in_order() {
        let text = "我们中出了一个叛徒";
        let words = jieba_words(text);
        assert_eq!(words.concat(), text);
        assert!(words.contains(&"我们"), "{words:?}");
    }

    #[test]
    fn count_weighted_ngrams_equal_plain_ngram_simhash_without_repeats() {
        let chars: Vec<char> = "夜色渐深雨水顺着屋檐滴落下来".chars().collect();
        let features = char_ngram_features(&chars, 3);
        assert!(features.iter().all(|&(_, w)| w == 1));
        assert_eq!(simhash_weighted(&features, 64), simhash_ngrams(&chars, 3));
    }

    #[test]
    fn repeated_ngrams_are_counted() {
        let chars: Vec<char> = "哈哈哈哈哈".chars().collect();
        assert_eq!(
            char_ngram_features(&chars, 2),
            vec![(hash_chars(&chars[..2]), 4)]
        );
    }

    #[test]
    fn rare_words_weigh_more_than_common_ones() {
        let features = word_features("蓑衣和我们");
        let weight = |w: &str| {
            features
                .iter()
                .find(|f| f.0 == xxh3_64(w.as_bytes()))
                .map(|f| f.1)
                .unwrap_or_else(|| panic!("{w} missing from {features:?}"))
        };
        assert!(weight("蓑衣") > weight("我们"));
        assert_eq!(weight("蓑衣"), WEIGHT_SCALE as i64);
    }

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
}
