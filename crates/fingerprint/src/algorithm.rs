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
    /// Pinyin-initial DNA codes, one per DNA window, in text order.
    Dna(Vec<u128>),
    /// Hashes of the k longest sentences, longest first.
    Sentences(Vec<u64>),
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
    /// Compares two fingerprints produced by this algorithm.
    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError>;
}
