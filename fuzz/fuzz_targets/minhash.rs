//! MinHash signatures and LSH banding on fuzzed shingle sets, texts and parameters:
//!
//! * a signature has `num_perm` values, does not depend on the order or repeats of the
//!   shingles, is all `u32::MAX` for the empty set, and the signature of a union is the
//!   element-wise minimum of the signatures (which checks the SIMD block loop against the
//!   definition);
//! * `estimated_jaccard` is in [0, 1], symmetric, and 1 for a non-empty set with itself;
//! * `lsh_params` never asks for more rows than permutations, `band_hashes` gives one key per
//!   band, and `collision_probability` stays a probability;
//! * `MinHashAlgorithm` refuses signatures of different lengths and matches a text with itself.
#![no_main]

use copytrace_fingerprint::algorithm::Algorithm;
use copytrace_fingerprint::minhash::{
    band_hashes, collision_probability, estimated_jaccard, lsh_params, lsh_params_weighted,
};
use copytrace_fingerprint::{MinHashAlgorithm, MinHasher, normalize, shingle_hashes};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fn set(u: &mut Unstructured<'_>) -> Result<Vec<u64>> {
    let len = u.int_in_range(0..=200)?;
    (0..len).map(|_| u.arbitrary()).collect()
}

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let num_perm: usize = u.int_in_range(0..=160)?;
    let seed: u64 = u.arbitrary()?;
    let hasher = MinHasher::new(num_perm, seed);
    assert_eq!(hasher.num_perm(), num_perm.max(1));
    let a = set(&mut u)?;
    let b = set(&mut u)?;

    let sig_a = hasher.signature(&a);
    let sig_b = hasher.signature(&b);
    assert_eq!(sig_a.len(), hasher.num_perm(), "signature length");
    let mut shuffled = a.clone();
    shuffled.reverse();
    shuffled.extend_from_slice(&a[..a.len() / 2]);
    assert_eq!(
        hasher.signature(&shuffled),
        sig_a,
        "order or repeats changed it"
    );
    if a.is_empty() {
        assert!(sig_a.iter().all(|&v| v == u32::MAX), "empty set");
    }
    let union: Vec<u64> = a.iter().chain(&b).copied().collect();
    let minimum: Vec<u32> = sig_a.iter().zip(&sig_b).map(|(x, y)| *x.min(y)).collect();
    assert_eq!(hasher.signature(&union), minimum, "signature of a union");

    let ab = estimated_jaccard(&sig_a, &sig_b);
    assert!((0.0..=1.0).contains(&ab), "{ab}");
    assert_eq!(ab, estimated_jaccard(&sig_b, &sig_a), "symmetric");
    // A non-empty set can still sign all u32::MAX under a permutation (a shingle mapped to
    // the maximum), which counts as "no shingles"; only then is the estimate below 1.
    if !a.is_empty() && sig_a.iter().all(|&v| v != u32::MAX) {
        assert_eq!(estimated_jaccard(&sig_a, &sig_a), 1.0);
    }

    let threshold: f64 = f64::from(u.int_in_range(0u16..=1000)?) / 1000.0;
    let small = hasher.num_perm().min(48);
    let (bands, rows) = lsh_params(threshold, small);
    assert!(
        bands >= 1 && rows >= 1 && bands * rows <= small,
        "{bands}×{rows} > {small}"
    );
    let weighted = lsh_params_weighted(threshold, small, u.arbitrary()?, u.arbitrary()?);
    assert!(weighted.0 >= 1 && weighted.1 >= 1 && weighted.0 * weighted.1 <= small);
    let keys = band_hashes(&sig_a, bands, rows);
    assert_eq!(keys.len(), bands);
    assert_eq!(
        band_hashes(&sig_a, bands, rows),
        keys,
        "band keys deterministic"
    );
    let p = collision_probability(threshold, bands, rows);
    assert!((0.0..=1.0).contains(&p), "collision probability {p}");

    let shingle_k = u.int_in_range(0..=8)?;
    let text = String::from_utf8_lossy(u.take_rest());
    let chars = normalize(&text).chars;
    let algorithm = MinHashAlgorithm {
        shingle_k,
        num_perm: hasher.num_perm(),
        threshold: 0.5,
    };
    let fp = algorithm.fingerprint(&chars);
    assert_eq!(algorithm.fingerprint(&chars), fp, "deterministic");
    let same = algorithm.compare(&fp, &fp).expect("same length");
    assert!((0.0..=1.0).contains(&same.similarity));
    let other = MinHashAlgorithm {
        num_perm: algorithm.num_perm + 1,
        ..algorithm
    };
    assert!(algorithm.compare(&fp, &other.fingerprint(&chars)).is_err());
    let shingles = shingle_hashes(&chars, shingle_k);
    assert_eq!(
        fp,
        copytrace_fingerprint::Fingerprint::MinHash(algorithm.hasher().signature(&shingles))
    );
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
