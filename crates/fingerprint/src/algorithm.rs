//! One small interface for every fingerprinting algorithm, so they can be swapped, stored with
//! their version, and compared on the same data (`copytrace compare`, the quality benchmark).
//!
//! An algorithm turns canonical characters (see [`crate::normalize()`]) into a [`Fingerprint`]
//! and compares two fingerprints of its own kind. Each has a stable version number stored with
//! every fingerprint it produced: when its output changes, the version changes, and stored
//! fingerprints of the old version are recomputed instead of silently mixed with new ones.

use serde::{Deserialize, Serialize};

/// A fingerprint produced by one algorithm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Fingerprint {
    /// A 64-bit SimHash.
    SimHash(u64),
    /// MinHash signature: the minimum hash of the shingle set under each permutation.
    MinHash(Vec<u32>),
    /// The sorted, deduplicated hashes of the text's k-shingles.
    Shingles(Vec<u64>),
    /// Pinyin-initial DNA codes, one per DNA window, in text order. Serialized as decimal
    /// strings: codes reach 26 digits, beyond what JSON numbers carry exactly (and beyond
    /// `serde_json::Value`).
    Dna(#[serde(with = "decimal_strings")] Vec<u128>),
    /// Hashes of the k longest sentences, longest first.
    Sentences(Vec<u64>),
}

/// (De)serializes `u128` values as decimal strings.
mod decimal_strings {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(values: &[u128], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(values.iter().map(u128::to_string))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u128>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .iter()
            .map(|value| value.parse().map_err(D::Error::custom))
            .collect()
    }
}

/// How two fingerprints of one algorithm compare.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Similarity in [0, 1] (1 = identical as far as the algorithm can tell).
    pub similarity: f64,
    /// The algorithm's natural distance, where it has one (Hamming bits for SimHash).
    pub distance: Option<f64>,
    /// Whether the algorithm's threshold counts this as a match.
    pub is_match: bool,
}

/// Errors comparing fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlgorithmError {
    /// The two fingerprints are not of this algorithm's kind, or have different shapes (e.g.
    /// MinHash signatures with different numbers of permutations).
    #[error("cannot compare fingerprints: {0}")]
    Incompatible(String),
}

/// A fingerprinting algorithm.
pub trait Algorithm: Send + Sync {
    /// Stable short name (`simhash`, `minhash`, `shingles`, `dna`, `sentences`).
    fn name(&self) -> &'static str;
    /// Version of the algorithm's output; changes whenever the same input would produce a
    /// different fingerprint.
    fn version(&self) -> u32;
    /// Fingerprints canonical characters.
    fn fingerprint(&self, chars: &[char]) -> Fingerprint;
    /// Fingerprints an original text. Most algorithms only need its canonical characters; those
    /// that also read what normalization removes (sentence punctuation) override this.
    fn fingerprint_text(&self, text: &str) -> Fingerprint {
        self.fingerprint(&crate::normalize(text).chars)
    }
    /// Compares two fingerprints produced by this algorithm.
    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError>;
}

/// Every algorithm with its default parameters, so `copytrace compare` and the quality
/// benchmark run the same set without each listing it:
///
/// * `simhash`: TF-IDF jieba words, match within 3 bits ([`crate::simhash::SimHashAlgorithm`]);
/// * `minhash`: 5-character shingles, 128 permutations, estimated Jaccard ≥ 0.5
///   ([`crate::minhash::MinHashAlgorithm`]);
/// * `shingles`: 5-character shingles, Jaccard or containment ≥ 0.5
///   ([`crate::shingles::ShingleAlgorithm`]);
/// * `sentences`: 5 longest sentences, 2 shared ([`crate::sentences::SentenceAlgorithm`]);
/// * `dna`: pinyin-initial DNA codes of 64-initial windows, half overlapping, 10 levels, half
///   of the codes shared ([`crate::dna::DnaAlgorithm`]).
///
/// The defaults are starting points; the quality benchmark is what should set them.
pub fn default_algorithms() -> Vec<Box<dyn Algorithm>> {
    vec![
        Box::new(crate::simhash::SimHashAlgorithm::default()),
        Box::new(crate::minhash::MinHashAlgorithm::default()),
        Box::new(crate::shingles::ShingleAlgorithm::default()),
        Box::new(crate::sentences::SentenceAlgorithm::default()),
        Box::new(crate::dna::DnaAlgorithm::default()),
    ]
}

/// The default-parameter algorithm called `name` (see [`default_algorithms`]), so stored
/// fingerprints and command-line options can name an algorithm by its stable name.
pub fn algorithm_by_name(name: &str) -> Option<Box<dyn Algorithm>> {
    default_algorithms()
        .into_iter()
        .find(|algorithm| algorithm.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_algorithm_is_found_by_its_unique_name() {
        let algorithms = default_algorithms();
        let mut names: Vec<&str> = algorithms.iter().map(|a| a.name()).collect();
        for name in &names {
            assert_eq!(algorithm_by_name(name).unwrap().name(), *name);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), algorithms.len());
        assert!(algorithm_by_name("no-such-algorithm").is_none());
    }

    #[test]
    fn every_kind_of_fingerprint_round_trips_through_json_values() {
        let chars =
            crate::normalize("夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个陌生人。")
                .chars;
        for algorithm in default_algorithms() {
            let fingerprint = algorithm.fingerprint(&chars);
            let value = serde_json::to_value(&fingerprint).unwrap();
            let back: Fingerprint = serde_json::from_value(value).unwrap();
            assert_eq!(back, fingerprint, "{}", algorithm.name());
        }
        let big = Fingerprint::Dna(vec![u128::MAX, 0]);
        let value = serde_json::to_value(&big).unwrap();
        assert_eq!(value["value"][0], u128::MAX.to_string());
        assert_eq!(serde_json::from_value::<Fingerprint>(value).unwrap(), big);
    }

    #[test]
    fn every_algorithm_matches_a_text_with_itself_and_rejects_foreign_fingerprints() {
        let chars = crate::normalize(
            "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
             手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。",
        )
        .chars;
        for algorithm in default_algorithms() {
            let fp = algorithm.fingerprint(&chars);
            let c = algorithm.compare(&fp, &fp).unwrap();
            assert!(
                c.is_match,
                "{} does not match a text with itself",
                algorithm.name()
            );
            assert_eq!(c.similarity, 1.0, "{}", algorithm.name());
            assert!(algorithm.version() >= 1, "{}", algorithm.name());
            let foreign = match fp {
                Fingerprint::SimHash(_) => Fingerprint::Dna(vec![1]),
                _ => Fingerprint::SimHash(1),
            };
            assert!(
                algorithm.compare(&fp, &foreign).is_err(),
                "{}",
                algorithm.name()
            );
        }
    }
}
