//! MinHash LSH index: candidate windows by estimated Jaccard similarity of their shingle sets.
//!
//! SimHash within a few bits finds windows with a handful of edited characters; a window whose
//! characters were edited more densely, or whose sentences were shuffled inside it, falls out of
//! that radius long before it stops sharing most of its shingles. MinHash estimates that share
//! (Jaccard similarity) and LSH banding finds the similar windows without comparing every pair:
//!
//! * each signature of `num_perm` minima is cut into `b` bands of `r` rows;
//! * one hash table per band maps the band's hash ([`band_hashes`]) to the windows having it;
//! * a query probes `b` buckets; two windows with Jaccard similarity `s` share at least one band
//!   with probability `P(s) = 1 − (1 − sʳ)ᵇ`, the S-curve ([`collision_probability`]).
//!
//! `b` and `r` come from a target threshold through [`lsh_params_weighted`]: the area under the
//! S-curve below the threshold (false positives) and above it beyond the threshold (false
//! negatives) are weighted and the cheapest `b × r ≤ num_perm` is taken. Candidates are verified
//! by alignment anyway, so a missed copy costs more than a wasted verification and the default
//! weights false negatives 4:1. With the defaults (64 permutations, threshold 0.5) that gives
//! 15 bands × 3 rows:
//!
//! | Jaccard `s`        | 0.1   | 0.3   | 0.4   | **0.5** | 0.6   | 0.7    |
//! |--------------------|-------|-------|-------|---------|-------|--------|
//! | `P(candidate)`     | 0.015 | 0.337 | 0.629 | 0.865   | 0.974 | 0.998  |
//!
//! so at the threshold ±0.1 a window is missed with probability 0.135 (0.5), 0.026 (0.6) and
//! found by mistake with probability 0.629 (0.4); below 0.2 collisions become rare.
//!
//! A query reports every window sharing at least one band, once, with [`Hit::distance`] the
//! number of differing minima, an estimate of `(1 − J) × num_perm` the caller can filter on. The
//! index does not filter by that estimate itself: the S-curve already is the filter, and a hard
//! cut on a 64-sample estimate would add its own false negatives.

use copytrace_fingerprint::minhash::{band_hashes, collision_probability, lsh_params_weighted};

use crate::buckets::Buckets;
use crate::index::{Hit, Index, IndexError, SegmentRef, WorkId};

/// A window's MinHash signature: one minimum per permutation, as made by
/// [`copytrace_fingerprint::MinHasher::signature`]. Signatures are comparable only when made by
/// the same hasher (same permutation count and seed).
pub type MinHashSignature = Vec<u32>;

/// How an LSH index is shaped: how many minima a signature has and which Jaccard similarity
/// should make two windows candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LshConfig {
    /// Signature length (permutations). More permutations allow sharper S-curves at the cost of
    /// signing time and memory.
    pub num_perm: usize,
    /// Jaccard similarity around which the S-curve steps up.
    pub threshold: f64,
    /// Weight of false negatives against false positives (which get `1 − weight`) when choosing
    /// bands and rows; above 0.5 trades extra candidates for fewer missed copies.
    pub false_negative_weight: f64,
}

impl Default for LshConfig {
    /// 64 permutations (window signatures are made for every window of every page, so they must
    /// be cheap), threshold 0.5, false negatives weighted 0.8: 15 bands × 3 rows.
    fn default() -> Self {
        LshConfig {
            num_perm: 64,
            threshold: 0.5,
            false_negative_weight: 0.8,
        }
    }
}

impl LshConfig {
    /// `(bands, rows)` for this configuration.
    pub fn bands_rows(&self) -> (usize, usize) {
        let w = self.false_negative_weight.clamp(0.0, 1.0);
        lsh_params_weighted(self.threshold, self.num_perm.max(1), 1.0 - w, w)
    }
}

/// In-memory MinHash LSH index over window signatures.
#[derive(Debug, Clone)]
pub struct MinHashLshIndex {
    num_perm: usize,
    bands: usize,
    rows: usize,
    /// Signatures, filed in one table per band under the band's hash.
    buckets: Buckets<Box<[u32]>>,
}

impl MinHashLshIndex {
    /// An empty index with bands and rows chosen for `config`.
    pub fn new(config: &LshConfig) -> Self {
        let (bands, rows) = config.bands_rows();
        MinHashLshIndex::with_bands(config.num_perm, bands, rows)
    }

    /// An empty index with explicit bands and rows, for experiments; `bands × rows` must not
    /// exceed `num_perm` (both are raised to at least 1 and `bands` is cut to fit).
    pub fn with_bands(num_perm: usize, bands: usize, rows: usize) -> Self {
        let num_perm = num_perm.max(1);
        let rows = rows.clamp(1, num_perm);
        let bands = bands.clamp(1, num_perm / rows);
        MinHashLshIndex {
            num_perm,
            bands,
            rows,
            buckets: Buckets::new(bands),
        }
    }

    /// Number of bands (`b`).
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// Rows per band (`r`).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Signature length the index expects.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// Probability that a window with Jaccard similarity `s` to a query shares a band with it.
    pub fn collision_probability(&self, s: f64) -> f64 {
        collision_probability(s, self.bands, self.rows)
    }

    /// The key of each band of `signature`, band order: what a shared index (Redis) files the
    /// window under, so it answers exactly the band collisions this index answers.
    pub fn band_keys(&self, signature: &[u32]) -> Result<Vec<u64>, IndexError> {
        self.check(signature)?;
        Ok(band_hashes(signature, self.bands, self.rows))
    }

    fn check(&self, signature: &[u32]) -> Result<(), IndexError> {
        if signature.len() == self.num_perm {
            Ok(())
        } else {
            Err(IndexError::Corrupt(format!(
                "MinHash signature of {} minima given to an index of {} permutations",
                signature.len(),
                self.num_perm
            )))
        }
    }

    fn band<'a>(&self, signature: &'a [u32], band: usize) -> &'a [u32] {
        &signature[band * self.rows..(band + 1) * self.rows]
    }
}

impl Index<MinHashSignature> for MinHashLshIndex {
    /// Fails with [`IndexError::Corrupt`] when the signature's length is not the index's
    /// permutation count (a signature made with another configuration).
    fn insert(
        &mut self,
        signature: &MinHashSignature,
        segment: SegmentRef,
    ) -> Result<(), IndexError> {
        self.check(signature)?;
        let keys = band_hashes(signature, self.bands, self.rows);
        self.buckets
            .insert(signature.clone().into_boxed_slice(), segment, keys);
        Ok(())
    }

    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let (bands, rows) = (self.bands, self.rows);
        self.buckets
            .remove_work(work_id, |signature| band_hashes(signature, bands, rows));
        Ok(())
    }

    fn query(&self, signature: &MinHashSignature, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        self.check(signature)?;
        let keys = band_hashes(signature, self.bands, self.rows);
        self.buckets.hits(keys, out, |band, candidate| {
            // The band's rows really agree (not a 64-bit key collision), and no earlier band
            // does, so each window is reported once, from its first agreeing band.
            if self.band(candidate, band) != self.band(signature, band)
                || (0..band).any(|b| self.band(candidate, b) == self.band(signature, b))
            {
                return None;
            }
            let differing = candidate.iter().zip(signature).filter(|(a, b)| a != b);
            Some(differing.count() as u32)
        });
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        Ok(self.buckets.len())
    }
}

#[cfg(test)]
mod tests {
    use copytrace_fingerprint::MinHasher;

    use super::*;

    use copytrace_fingerprint::minhash::splitmix64 as splitmix;

    /// Two random shingle sets of a window's size (46 shingles each, as a 48-character window
    /// of 3-grams has) whose Jaccard similarity is as close to `jaccard` as set sizes allow.
    /// Returns the sets and their exact similarity.
    fn pair(state: &mut u64, jaccard: f64) -> (Vec<u64>, Vec<u64>, f64) {
        const SIZE: usize = 46;
        // |A ∩ B| = shared, |A ∪ B| = 2·SIZE − shared, so J = shared / (2·SIZE − shared).
        let shared = ((2.0 * SIZE as f64 * jaccard) / (1.0 + jaccard)).round() as usize;
        let common: Vec<u64> = (0..shared).map(|_| splitmix(state)).collect();
        let mut a = common.clone();
        let mut b = common;
        a.extend((shared..SIZE).map(|_| splitmix(state)));
        b.extend((shared..SIZE).map(|_| splitmix(state)));
        let exact = shared as f64 / (2 * SIZE - shared) as f64;
        (a, b, exact)
    }

    fn segment(work_id: WorkId, ordinal: u32) -> SegmentRef {
        SegmentRef { work_id, ordinal }
    }

    /// Share of trials in which a window similar to the query at `jaccard` is found, each trial
    /// with fresh sets and fresh permutations.
    fn found_rate(config: &LshConfig, jaccard: f64, trials: u64) -> (f64, f64) {
        let mut state = 0x5eed ^ (jaccard * 1000.0) as u64;
        let mut found = 0;
        let mut exact = 0.0;
        for trial in 0..trials {
            let hasher = MinHasher::new(config.num_perm, trial.wrapping_mul(7919) ^ state);
            let mut index = MinHashLshIndex::new(config);
            let (a, b, j) = pair(&mut state, jaccard);
            exact = j;
            index.insert(&hasher.signature(&a), segment(1, 0)).unwrap();
            let mut hits = Vec::new();
            index.query(&hasher.signature(&b), &mut hits).unwrap();
            assert!(hits.len() <= 1, "one window is reported at most once");
            found += hits.len();
        }
        (found as f64 / trials as f64, exact)
    }

    #[test]
    fn default_bands_and_rows_follow_the_documented_s_curve() {
        let index = MinHashLshIndex::new(&LshConfig::default());
        assert_eq!((index.bands(), index.rows()), (15, 3));
        let expected = [
            (0.1, 0.015),
            (0.3, 0.337),
            (0.4, 0.629),
            (0.5, 0.865),
            (0.6, 0.974),
            (0.7, 0.998),
        ];
        for (s, p) in expected {
            assert!(
                (index.collision_probability(s) - p).abs() < 0.0015,
                "P({s}) = {}",
                index.collision_probability(s)
            );
        }
    }

    #[test]
    fn windows_well_above_the_threshold_are_found_in_at_least_99_percent_of_trials() {
        let config = LshConfig::default();
        let (rate, exact) = found_rate(&config, config.threshold + 0.2, 2000);
        assert!(rate >= 0.99, "found {rate} at J = {exact}");
    }

    #[test]
    fn windows_far_below_the_threshold_are_rarely_candidates() {
        let config = LshConfig::default();
        let (rate, exact) = found_rate(&config, 0.1, 2000);
        assert!(rate <= 0.05, "found {rate} at J = {exact}");
        let (rate, exact) = found_rate(&config, 0.0, 500);
        assert_eq!(rate, 0.0, "disjoint sets share no minimum (J = {exact})");
    }

    #[test]
    fn the_measured_rate_follows_the_s_curve_at_the_threshold() {
        let config = LshConfig::default();
        let index = MinHashLshIndex::new(&config);
        let (rate, exact) = found_rate(&config, config.threshold, 2000);
        let expected = index.collision_probability(exact);
        // Binomial standard error at 2000 trials is under 0.01; allow four of them.
        assert!(
            (rate - expected).abs() < 0.04,
            "found {rate}, S-curve {expected} at J = {exact}"
        );
    }

    #[test]
    fn an_identical_signature_is_always_found_with_distance_zero() {
        let config = LshConfig::default();
        let hasher = MinHasher::new(config.num_perm, 11);
        let mut index = MinHashLshIndex::new(&config);
        let mut state = 3;
        let mut signatures = Vec::new();
        for ordinal in 0..500 {
            let (a, _, _) = pair(&mut state, 0.0);
            let signature = hasher.signature(&a);
            index.insert(&signature, segment(7, ordinal)).unwrap();
            signatures.push(signature);
        }
        for (ordinal, signature) in signatures.iter().enumerate() {
            let mut hits = Vec::new();
            index.query(signature, &mut hits).unwrap();
            let own: Vec<&Hit> = hits
                .iter()
                .filter(|h| h.segment.ordinal == ordinal as u32)
                .collect();
            assert_eq!(own.len(), 1);
            assert_eq!(own[0].distance, 0);
        }
    }

    #[test]
    fn the_distance_counts_differing_minima() {
        let mut index = MinHashLshIndex::with_bands(8, 2, 4);
        let a: Vec<u32> = (0..8).collect();
        let mut b = a.clone();
        b[5] = 100;
        b[7] = 200;
        index.insert(&a, segment(1, 0)).unwrap();
        let mut hits = Vec::new();
        index.query(&b, &mut hits).unwrap();
        assert_eq!(
            hits,
            [Hit {
                segment: segment(1, 0),
                distance: 2
            }]
        );
    }

    #[test]
    fn removed_works_are_no_longer_found_and_their_slots_are_reused() {
        let config = LshConfig::default();
        let hasher = MinHasher::new(config.num_perm, 5);
        let mut index = MinHashLshIndex::new(&config);
        let mut state = 9;
        let (a, b, _) = pair(&mut state, 0.0);
        let (sa, sb) = (hasher.signature(&a), hasher.signature(&b));
        index
            .insert_work(1, &[(0, sa.clone()), (1, sb.clone())])
            .unwrap();
        index.insert_work(2, &[(0, sa.clone())]).unwrap();
        assert_eq!(index.len().unwrap(), 3);
        index.remove_work(1).unwrap();
        assert_eq!(index.len().unwrap(), 1);
        let mut hits = Vec::new();
        index.query(&sa, &mut hits).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].segment.work_id, 2);
        hits.clear();
        index.query(&sb, &mut hits).unwrap();
        assert!(hits.is_empty());
        index.insert_work(3, &[(0, sb.clone())]).unwrap();
        assert_eq!(index.buckets.slots(), 3, "a freed slot was reused");
        index.query(&sb, &mut hits).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].segment.work_id, 3);
        index.remove_work(2).unwrap();
        index.remove_work(3).unwrap();
        assert!(index.is_empty().unwrap());
        assert!(index.buckets.tables_are_empty());
    }

    #[test]
    fn a_signature_of_the_wrong_length_is_refused() {
        let mut index = MinHashLshIndex::new(&LshConfig::default());
        assert!(matches!(
            index.insert(&vec![1; 10], segment(1, 0)),
            Err(IndexError::Corrupt(_))
        ));
        assert!(index.query(&vec![1; 10], &mut Vec::new()).is_err());
        assert!(index.is_empty().unwrap());
    }
}
