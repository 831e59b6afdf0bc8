//! Exact k-shingle sets: the verifier that says how much text two documents really share.
//!
//! A text becomes the set of hashes of its character k-grams ("shingles"). Sets are kept as
//! sorted, deduplicated vectors, so intersections are a linear merge with no hashing or
//! allocation, and the same vector doubles as the input of [`crate::minhash`].
//!
//! Jaccard similarity catches whole copies; containment catches excerpts, where a short page
//! copies a small part of a long work and the Jaccard similarity stays low however exact the
//! copy is.

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::simhash::sorted_ngram_hashes;

/// Output version of [`ShingleAlgorithm`]; bump whenever the same input would hash differently.
pub const VERSION: u32 = 1;

/// Sorted, deduplicated hashes of the character `k`-grams of `chars`.
///
/// A text shorter than `k` (but not empty) is one shingle, as in
/// [`crate::simhash::simhash_ngrams`], so short titles still compare; empty input gives an
/// empty set. `k` is at least 1.
pub fn shingle_hashes(chars: &[char], k: usize) -> Vec<u64> {
    let mut hashes = sorted_ngram_hashes(chars, k);
    hashes.dedup();
    hashes
}

/// Size of the intersection of two sorted, deduplicated sets (linear merge).
pub fn intersection_size(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Exact Jaccard similarity |a ∩ b| / |a ∪ b| of two sorted, deduplicated sets.
///
/// Two empty sets give 0, not 1: texts with nothing to compare are no evidence of copying.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let shared = intersection_size(a, b);
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// Containment |a ∩ b| / |a| of `a_in` in `b` (both sorted and deduplicated): the share of
/// `a_in` found in `b`, which stays high for an excerpt however long the whole work is.
///
/// An empty `a_in` gives 0.
pub fn containment(a_in: &[u64], b: &[u64]) -> f64 {
    if a_in.is_empty() {
        0.0
    } else {
        intersection_size(a_in, b) as f64 / a_in.len() as f64
    }
}

/// Exact shingle-set comparison, used to verify candidates found by the cheaper indexes.
///
/// `similarity` is the Jaccard similarity and `distance` is `1 - Jaccard`. `is_match` holds
/// when the Jaccard similarity **or** the containment of the smaller set in the larger reaches
/// `threshold`: a page that copies one chapter of a novel is a match even though it shares a
/// small fraction of the novel's shingles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShingleAlgorithm {
    /// Shingle length in canonical characters.
    pub k: usize,
    /// Jaccard or containment at or above which two texts match.
    pub threshold: f64,
}

impl Default for ShingleAlgorithm {
    /// 5-character shingles (about two to three Chinese words, rarely shared by unrelated
    /// texts) and a 0.5 threshold, until the quality benchmark measures better values.
    fn default() -> Self {
        ShingleAlgorithm {
            k: 5,
            threshold: 0.5,
        }
    }
}

impl Algorithm for ShingleAlgorithm {
    fn name(&self) -> &'static str {
        "shingles"
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn fingerprint(&self, chars: &[char]) -> Fingerprint {
        Fingerprint::Shingles(shingle_hashes(chars, self.k))
    }

    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError> {
        let (Fingerprint::Shingles(a), Fingerprint::Shingles(b)) = (a, b) else {
            return Err(AlgorithmError::Incompatible(
                "shingles compares two shingle sets".into(),
            ));
        };
        let similarity = jaccard(a, b);
        let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        let contained = containment(small, large);
        Ok(Comparison {
            similarity,
            distance: Some(1.0 - similarity),
            is_match: similarity >= self.threshold || contained >= self.threshold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::hash_chars;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn shingles_are_sorted_and_deduplicated() {
        let s = shingle_hashes(&chars("哈哈哈哈哈哈哈"), 3);
        assert_eq!(
            s.len(),
            1,
            "seven identical characters have one distinct 3-gram"
        );
        let s = shingle_hashes(&chars("夜色渐深雨水顺着屋檐滴落"), 3);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_text_shorter_than_k_is_one_shingle_and_empty_text_none() {
        assert_eq!(
            shingle_hashes(&chars("夜色"), 5),
            vec![hash_chars(&chars("夜色"))]
        );
        assert!(shingle_hashes(&[], 5).is_empty());
    }

    #[test]
    fn jaccard_and_containment_match_hand_counts() {
        let a = [1, 3, 5, 7];
        let b = [3, 4, 5, 6, 7, 8];
        assert_eq!(intersection_size(&a, &b), 3);
        assert!((jaccard(&a, &b) - 3.0 / 7.0).abs() < 1e-12);
        assert!((containment(&a, &b) - 0.75).abs() < 1e-12);
        assert!((containment(&b, &a) - 0.5).abs() < 1e-12);
        assert_eq!(jaccard(&a, &a), 1.0);
    }

    #[test]
    fn empty_sets_are_no_evidence() {
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(containment(&[], &[1, 2]), 0.0);
    }

    #[test]
    fn an_excerpt_matches_by_containment_though_its_jaccard_is_low() {
        let work = chars(
            "夜色渐深雨水顺着屋檐滴落下来少年推开木门看见一个披着蓑衣的陌生人站在院中\
             手里提着一盏昏黄的灯笼他的眼睛像是藏着整片星空沉默地望着这座破旧的小院",
        );
        let excerpt = &work[..20];
        let algo = ShingleAlgorithm::default();
        let c = algo
            .compare(&algo.fingerprint(excerpt), &algo.fingerprint(&work))
            .unwrap();
        assert!(c.similarity < 0.5, "jaccard {}", c.similarity);
        assert!(c.is_match);
        let unrelated = chars("今天的红烧肉要先焯水再用冰糖炒出糖色然后加入生抽老抽和八角");
        let c = algo
            .compare(&algo.fingerprint(&unrelated), &algo.fingerprint(&work))
            .unwrap();
        assert!(!c.is_match);
        assert_eq!(c.similarity, 0.0);
    }

    #[test]
    fn comparing_with_another_kind_of_fingerprint_is_an_error() {
        let algo = ShingleAlgorithm::default();
        assert!(
            algo.compare(&Fingerprint::SimHash(1), &Fingerprint::Shingles(vec![]))
                .is_err()
        );
    }
}
