//! MinHash signatures of shingle sets, and LSH banding to find candidate pairs without
//! comparing every page with every work.
//!
//! # Hash family
//!
//! Each 64-bit shingle hash (already a random-looking xxh3 value, see
//! [`crate::shingles::shingle_hashes`]) is folded to 32 bits, `x = lo ⊕ hi`, and permutation
//! `i` maps it to
//!
//! ```text
//! hᵢ(x) = aᵢ·x + bᵢ  (mod 2³²),  aᵢ odd, bᵢ arbitrary, both drawn from the seed
//! ```
//!
//! This is Dietzfelbinger's multiply-shift family with the shift left to the comparison: the
//! signature keeps the minimum, and the minimum is decided by the high bits, whose top `l` bits
//! collide for two distinct inputs with probability at most `2/2ˡ` over the choice of `aᵢ`
//! (2-approximately universal). With `aᵢ` odd, `hᵢ` is a bijection of the 32-bit values, so
//! two distinct folded shingles never collide under any permutation; the only collisions are
//! those of the fold itself, about `n²/2³³` pairs for `n` distinct shingles (for a
//! 10 000-character text, under 1 % chance of a single colliding pair, which moves the
//! estimate by at most one part in `n`). Because the inputs are already random hashes, the
//! minimising shingle is a uniformly random member of the set, so
//! `P[sigᵢ(A) = sigᵢ(B)] = J(A, B)` and [`estimated_jaccard`] is unbiased; the permutations are
//! only approximately independent, which the tests check empirically on the estimator's
//! variance.
//!
//! # Why 32-bit lanes
//!
//! The inner loop is `mins[j] = min(mins[j], a[j]·x + b[j])` over a block of
//! [`BLOCK`] permutations held in fixed-size arrays: no bounds checks, and 32-bit multiply
//! (`pmulld`), add and unsigned min (`pminud`) all exist as SIMD instructions, while 64-bit
//! multiplies do not before AVX-512. A block's minima stay in registers while every shingle
//! streams past, so memory traffic is one `u32` per shingle per block. On x86-64 the block
//! loop is compiled twice and the AVX2 copy is chosen at run time, because the default target
//! has no SSE4.1 and would emulate both instructions.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::shingles::shingle_hashes;

/// Output version of [`MinHashAlgorithm`]; bump whenever the same input would give another
/// signature (hash family, fold, seed or shingling).
pub const VERSION: u32 = 1;

/// Seed of the permutations used by [`MinHashAlgorithm`]. Signatures are only comparable when
/// made with the same seed, so it is fixed and covered by [`VERSION`].
pub const DEFAULT_SEED: u64 = 0x6d69_6e68_6173_6831;

/// Number of permutations computed together: 32 lanes are four AVX2 registers of minima,
/// leaving registers for the multipliers and offsets.
pub const BLOCK: usize = 32;

/// Precomputed permutation parameters, so signing a text costs only the inner loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinHasher {
    num_perm: usize,
    seed: u64,
    /// Odd multipliers, padded with extra permutations to a whole number of blocks.
    a: Vec<[u32; BLOCK]>,
    /// Offsets, padded like `a`.
    b: Vec<[u32; BLOCK]>,
}

/// One step of SplitMix64: advances `state` and returns the next well-mixed 64-bit value.
///
/// It derives the MinHash permutations from a seed; it is public so tests and benchmarks across
/// the workspace generate reproducible data with the same generator instead of each keeping a
/// copy (or pulling in a random-number crate for test data).
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Folds a 64-bit shingle hash to the 32-bit input of the permutations, keeping entropy from
/// both halves.
#[inline]
fn fold(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// Minima of one block of permutations over all folded shingles. Inlined into both the
/// portable and the AVX2 entry point so each gets its own vectorization.
#[inline(always)]
fn block_mins(a: &[u32; BLOCK], b: &[u32; BLOCK], xs: &[u32]) -> [u32; BLOCK] {
    let mut mins = [u32::MAX; BLOCK];
    for &x in xs {
        for j in 0..BLOCK {
            mins[j] = mins[j].min(a[j].wrapping_mul(x).wrapping_add(b[j]));
        }
    }
    mins
}

fn sign_portable(a: &[[u32; BLOCK]], b: &[[u32; BLOCK]], xs: &[u32], out: &mut Vec<u32>) {
    for (a, b) in a.iter().zip(b) {
        out.extend_from_slice(&block_mins(a, b, xs));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sign_avx2(a: &[[u32; BLOCK]], b: &[[u32; BLOCK]], xs: &[u32], out: &mut Vec<u32>) {
    for (a, b) in a.iter().zip(b) {
        out.extend_from_slice(&block_mins(a, b, xs));
    }
}

#[allow(unsafe_code)]
fn sign_blocks(a: &[[u32; BLOCK]], b: &[[u32; BLOCK]], xs: &[u32], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just checked to support AVX2, the only requirement of
        // `sign_avx2`, which is otherwise the same safe code as `sign_portable`.
        unsafe { sign_avx2(a, b, xs, out) };
        return;
    }
    sign_portable(a, b, xs, out);
}

impl MinHasher {
    /// Draws `num_perm` permutations (at least 1) from `seed`. Signatures made by hashers with
    /// different `num_perm` or `seed` cannot be compared.
    pub fn new(num_perm: usize, seed: u64) -> Self {
        let num_perm = num_perm.max(1);
        let blocks = num_perm.div_ceil(BLOCK);
        let mut state = seed;
        let mut a = vec![[0u32; BLOCK]; blocks];
        let mut b = vec![[0u32; BLOCK]; blocks];
        for (a, b) in a.iter_mut().zip(&mut b) {
            for j in 0..BLOCK {
                let r = splitmix64(&mut state);
                a[j] = (r as u32) | 1;
                b[j] = (r >> 32) as u32;
            }
        }
        MinHasher {
            num_perm,
            seed,
            a,
            b,
        }
    }

    /// Number of permutations, which is the signature length.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// The seed the permutations were drawn from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Signature of a set of 64-bit shingle hashes (duplicates are harmless). The empty set
    /// gives all `u32::MAX`, which [`estimated_jaccard`] treats as "no shingles".
    pub fn signature(&self, shingles: &[u64]) -> Vec<u32> {
        let xs: Vec<u32> = shingles.iter().map(|&h| fold(h)).collect();
        let mut out = Vec::with_capacity(self.a.len() * BLOCK);
        sign_blocks(&self.a, &self.b, &xs, &mut out);
        out.truncate(self.num_perm);
        out
    }
}

/// Share of positions where two signatures agree, an unbiased estimate of the Jaccard
/// similarity of the underlying sets (standard error `√(J(1−J)/n)` for `n` permutations).
///
/// Positions holding `u32::MAX` in both are not counted as agreement, so two empty texts
/// estimate 0, as [`crate::shingles::jaccard`] says. Signatures of different lengths cannot
/// be compared.
///
/// # Panics
/// If the lengths differ.
pub fn estimated_jaccard(a: &[u32], b: &[u32]) -> f64 {
    assert_eq!(a.len(), b.len(), "MinHash signatures of different lengths");
    if a.is_empty() {
        return 0.0;
    }
    let agree = a
        .iter()
        .zip(b)
        .filter(|&(&x, &y)| x == y && x != u32::MAX)
        .count();
    agree as f64 / a.len() as f64
}

/// Probability that two sets with Jaccard similarity `s` share at least one of `bands` bands
/// of `rows` rows: the LSH S-curve `1 − (1 − sʳ)ᵇ`.
pub fn collision_probability(s: f64, bands: usize, rows: usize) -> f64 {
    1.0 - (1.0 - s.powi(rows as i32)).powi(bands as i32)
}

/// Composite Simpson integration of `f` over `[lo, hi]`; the S-curve is smooth, so 128
/// intervals are far more precise than the choice of bands and rows needs.
fn integrate(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    const N: usize = 128;
    if hi <= lo {
        return 0.0;
    }
    let h = (hi - lo) / N as f64;
    let inner: f64 = (1..N)
        .map(|i| {
            let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
            weight * f(lo + i as f64 * h)
        })
        .sum();
    (f(lo) + inner + f(hi)) * h / 3.0
}

/// Bands and rows (`bands × rows ≤ num_perm`) for an LSH index whose candidates should be the
/// pairs with Jaccard similarity at or above `threshold`, with false positives and false
/// negatives weighted equally. See [`lsh_params_weighted`].
pub fn lsh_params(threshold: f64, num_perm: usize) -> (usize, usize) {
    lsh_params_weighted(threshold, num_perm, 0.5, 0.5)
}

/// Bands and rows minimising `fp_weight · FP + fn_weight · FN`, the approach of `datasketch`:
///
/// * `FP = ∫₀ᵗ P(s) ds`, the area under the S-curve `P(s) = 1 − (1 − sʳ)ᵇ` below the
///   threshold `t` (pairs that become candidates though they should not);
/// * `FN = ∫ₜ¹ 1 − P(s) ds`, the area above it beyond the threshold (pairs that should be
///   candidates but are missed).
///
/// Every `b × r ≤ num_perm` is tried (about `num_perm · ln num_perm` pairs) and both areas are
/// integrated numerically with Simpson's rule. Ties keep the smallest `b`, then the smallest
/// `r`, so the result is deterministic. Raise `fn_weight` when a missed copy costs more than a
/// wasted verification, which is the usual case here since candidates are verified anyway.
pub fn lsh_params_weighted(
    threshold: f64,
    num_perm: usize,
    fp_weight: f64,
    fn_weight: f64,
) -> (usize, usize) {
    let t = threshold.clamp(0.0, 1.0);
    let mut best = (1, 1);
    let mut best_error = f64::INFINITY;
    for bands in 1..=num_perm.max(1) {
        for rows in 1..=(num_perm.max(1) / bands) {
            let fp = integrate(|s| collision_probability(s, bands, rows), 0.0, t);
            let fneg = integrate(|s| 1.0 - collision_probability(s, bands, rows), t, 1.0);
            let error = fp_weight * fp + fn_weight * fneg;
            if error < best_error {
                best_error = error;
                best = (bands, rows);
            }
        }
    }
    best
}

/// One 64-bit key per band, for an LSH table: two signatures are candidates when any band key
/// is equal. The band index seeds the hash, so equal rows in different bands give different
/// keys and all bands can share one table. Rows beyond `bands × rows` are ignored.
///
/// # Panics
/// If the signature is shorter than `bands × rows`.
pub fn band_hashes(sig: &[u32], bands: usize, rows: usize) -> Vec<u64> {
    assert!(
        bands * rows <= sig.len(),
        "{bands} bands × {rows} rows need more than {} permutations",
        sig.len()
    );
    let mut bytes = Vec::with_capacity(rows * 4);
    sig.chunks_exact(rows.max(1))
        .take(bands)
        .enumerate()
        .map(|(band, values)| {
            bytes.clear();
            bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            xxh3_64_with_seed(&bytes, band as u64)
        })
        .collect()
}

/// MinHash over character shingles: a fixed-size estimate of shingle Jaccard similarity,
/// cheap to store and to index with [`band_hashes`].
///
/// `similarity` is the estimated Jaccard similarity, `distance` is `1 −` it, and `is_match`
/// holds when the estimate reaches `threshold`. Unlike [`crate::shingles::ShingleAlgorithm`]
/// it cannot measure containment, so excerpts need the window-level fingerprints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinHashAlgorithm {
    /// Shingle length in canonical characters.
    pub shingle_k: usize,
    /// Number of permutations (signature length).
    pub num_perm: usize,
    /// Estimated Jaccard similarity at or above which two texts match.
    pub threshold: f64,
}

impl Default for MinHashAlgorithm {
    /// The same 5-character shingles as [`crate::shingles::ShingleAlgorithm`], 128
    /// permutations (standard error 0.044 at J = 0.5, the usual `datasketch` default) and a
    /// 0.5 threshold.
    fn default() -> Self {
        MinHashAlgorithm {
            shingle_k: 5,
            num_perm: 128,
            threshold: 0.5,
        }
    }
}

impl MinHashAlgorithm {
    /// The permutations this configuration signs with.
    pub fn hasher(&self) -> MinHasher {
        MinHasher::new(self.num_perm, DEFAULT_SEED)
    }
}

impl Algorithm for MinHashAlgorithm {
    fn name(&self) -> &'static str {
        "minhash"
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn fingerprint(&self, chars: &[char]) -> Fingerprint {
        Fingerprint::MinHash(
            self.hasher()
                .signature(&shingle_hashes(chars, self.shingle_k)),
        )
    }

    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError> {
        let (Fingerprint::MinHash(a), Fingerprint::MinHash(b)) = (a, b) else {
            return Err(AlgorithmError::Incompatible(
                "minhash compares two MinHash signatures".into(),
            ));
        };
        if a.len() != b.len() {
            return Err(AlgorithmError::Incompatible(format!(
                "MinHash signatures with {} and {} permutations",
                a.len(),
                b.len()
            )));
        }
        let similarity = estimated_jaccard(a, b);
        Ok(Comparison {
            similarity,
            distance: Some(1.0 - similarity),
            is_match: similarity >= self.threshold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingles::jaccard;

    /// Two random sets with exactly `shared` common elements out of `union`.
    fn sets(seed: u64, union: usize, shared: usize) -> (Vec<u64>, Vec<u64>) {
        let mut state = seed;
        let all: Vec<u64> = (0..union).map(|_| splitmix64(&mut state)).collect();
        let only = (union - shared) / 2;
        let a: Vec<u64> = all[..shared + only].to_vec();
        let mut b: Vec<u64> = all[..shared].to_vec();
        b.extend_from_slice(&all[shared + only..]);
        (a, b)
    }

    #[test]
    fn multipliers_are_odd_so_every_permutation_is_a_bijection() {
        let h = MinHasher::new(100, 7);
        assert!(h.a.iter().flatten().all(|a| a % 2 == 1));
        assert_eq!(h.signature(&[1, 2, 3]).len(), 100);
    }

    #[test]
    fn the_vectorized_signature_equals_a_naive_one() {
        let h = MinHasher::new(70, 3);
        let (a, _) = sets(1, 500, 250);
        let naive: Vec<u32> = (0..70)
            .map(|i| {
                let (blk, j) = (i / BLOCK, i % BLOCK);
                a.iter()
                    .map(|&x| h.a[blk][j].wrapping_mul(fold(x)).wrapping_add(h.b[blk][j]))
                    .min()
                    .unwrap()
            })
            .collect();
        let mut portable = Vec::new();
        let xs: Vec<u32> = a.iter().map(|&x| fold(x)).collect();
        sign_portable(&h.a, &h.b, &xs, &mut portable);
        portable.truncate(70);
        assert_eq!(h.signature(&a), naive);
        assert_eq!(portable, naive);
    }

    #[test]
    fn the_estimate_is_unbiased_and_its_error_matches_the_binomial_one() {
        let num_perm = 256;
        let truth = 0.5;
        let trials = 200;
        let mut errors = Vec::new();
        for trial in 0..trials {
            let (a, b) = sets(trial, 600, 300);
            let ja = jaccard(&sorted(a.clone()), &sorted(b.clone()));
            assert!((ja - truth).abs() < 1e-9, "test sets have J = {ja}");
            let h = MinHasher::new(num_perm, 1000 + trial);
            errors.push(estimated_jaccard(&h.signature(&a), &h.signature(&b)) - truth);
        }
        let mean = errors.iter().sum::<f64>() / trials as f64;
        let sd = (errors.iter().map(|e| e * e).sum::<f64>() / trials as f64).sqrt();
        let binomial = (truth * (1.0 - truth) / num_perm as f64).sqrt();
        assert!(
            mean.abs() < 3.0 * binomial / (trials as f64).sqrt(),
            "bias {mean}"
        );
        assert!(sd < 1.3 * binomial, "spread {sd} vs binomial {binomial}");
    }

    fn sorted(mut v: Vec<u64>) -> Vec<u64> {
        v.sort_unstable();
        v
    }

    #[test]
    fn empty_texts_do_not_match_each_other() {
        let algo = MinHashAlgorithm::default();
        let c = algo
            .compare(&algo.fingerprint(&[]), &algo.fingerprint(&[]))
            .unwrap();
        assert_eq!(c.similarity, 0.0);
        assert!(!c.is_match);
    }

    #[test]
    fn a_near_copy_matches_and_an_unrelated_text_does_not() {
        let algo = MinHashAlgorithm::default();
        let a: Vec<char> =
            "夜色渐深雨水顺着屋檐滴落下来少年推开木门看见一个披着蓑衣的陌生人站在院中\
                            手里提着一盏昏黄的灯笼他的眼睛像是藏着整片星空沉默地望着这座破旧的小院"
                .chars()
                .collect();
        let mut b = a.clone();
        b[40] = '树';
        let c: Vec<char> = "今天的红烧肉要先焯水再用冰糖炒出糖色然后加入生抽老抽和八角慢炖一个小时"
            .chars()
            .collect();
        let (fa, fb, fc) = (
            algo.fingerprint(&a),
            algo.fingerprint(&b),
            algo.fingerprint(&c),
        );
        assert!(algo.compare(&fa, &fb).unwrap().is_match);
        assert!(algo.compare(&fa, &fc).unwrap().similarity < 0.1);
    }

    #[test]
    fn signatures_of_different_lengths_are_incompatible() {
        let algo = MinHashAlgorithm::default();
        let r = algo.compare(
            &Fingerprint::MinHash(vec![1; 128]),
            &Fingerprint::MinHash(vec![1; 64]),
        );
        assert!(matches!(r, Err(AlgorithmError::Incompatible(_))));
    }

    #[test]
    fn simpson_integration_is_exact_for_the_identity_curve() {
        // One band of one row: P(s) = s, so FP = t²/2 and FN = (1 − t)²/2.
        let fp = integrate(|s| collision_probability(s, 1, 1), 0.0, 0.3);
        assert!((fp - 0.045).abs() < 1e-12);
        let fneg = integrate(|s| 1.0 - collision_probability(s, 1, 1), 0.3, 1.0);
        assert!((fneg - 0.245).abs() < 1e-12);
    }

    #[test]
    fn lsh_parameters_put_the_s_curve_step_near_the_threshold() {
        for &t in &[0.3, 0.5, 0.7, 0.9] {
            let (b, r) = lsh_params(t, 128);
            assert!(b * r <= 128);
            let step = (1.0 / b as f64).powf(1.0 / r as f64);
            assert!((step - t).abs() < 0.1, "t {t}: b {b} r {r} step {step}");
            assert!(collision_probability(t + 0.2_f64.min(1.0 - t), b, r) > 0.9);
        }
        let (_, r_low) = lsh_params(0.3, 128);
        let (_, r_high) = lsh_params(0.9, 128);
        assert!(r_high > r_low, "higher thresholds need more rows per band");
    }

    #[test]
    fn band_keys_differ_between_bands_with_equal_rows() {
        let sig = vec![5u32; 16];
        let keys = band_hashes(&sig, 4, 4);
        assert_eq!(keys.len(), 4);
        assert_ne!(keys[0], keys[1]);
        let mut other = sig.clone();
        other[15] = 6;
        let k2 = band_hashes(&other, 4, 4);
        assert_eq!(&keys[..3], &k2[..3]);
        assert_ne!(keys[3], k2[3]);
    }
}
