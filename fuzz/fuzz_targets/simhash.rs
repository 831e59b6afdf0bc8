//! SimHash and the CPU-dispatched loops under it, on fuzzed features and text.
//!
//! * `simhash_weighted` keeps exactly the sign of each of `column_sums` and nothing above
//!   `bits`; with every weight 1 it equals `simhash_hashes`, whose column counts come from the
//!   `unsafe` AVX2 code where the CPU has it.
//! * `cpu::bit_counts_at` and `cpu::hamming_scan_at` give the same answer at every level as a
//!   plain loop.
//! * `simhash_ngrams` equals `simhash_hashes` of `ngram_hashes` (one hash for a text shorter
//!   than `n`), and both `SimHashAlgorithm` feature kinds are deterministic, match a text with
//!   itself at distance 0, and compare symmetrically within [0, 1].
#![no_main]

use copytrace_fingerprint::algorithm::{Algorithm, Fingerprint};
use copytrace_fingerprint::cpu::{Level, bit_counts_at, hamming_scan_at};
use copytrace_fingerprint::simhash::{column_sums, hash_chars, ngram_hashes};
use copytrace_fingerprint::{
    FeatureKind, SimHashAlgorithm, hamming, normalize, simhash_hashes, simhash_ngrams,
    simhash_weighted,
};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

const LEVELS: [Level; 3] = [Level::Portable, Level::Popcnt, Level::Avx2];

fn features(u: &mut Unstructured<'_>) -> Result<Vec<(u64, i64)>> {
    let count = u.int_in_range(0..=300)?;
    let mut features = Vec::with_capacity(count);
    for _ in 0..count {
        // Weights of real features are IDFs in thousandths times a count; i32 keeps every
        // column sum of 300 features far from i64 overflow.
        features.push((u.arbitrary::<u64>()?, i64::from(u.arbitrary::<i32>()?)));
    }
    Ok(features)
}

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let bits: u32 = u.int_in_range(1..=64)?;
    let features = features(&mut u)?;
    let signature = simhash_weighted(&features, bits);
    assert!(bits == 64 || signature >> bits == 0, "bits above {bits}");
    let sums = column_sums(&features, bits);
    assert_eq!(sums.len(), bits as usize);
    for (i, &sum) in sums.iter().enumerate() {
        let bit = bits as usize - 1 - i;
        assert_eq!(signature >> bit & 1 == 1, sum > 0, "bit {bit} of {sum}");
    }

    // Unweighted: the counting path (SIMD where available) against the weighted definition.
    let hashes: Vec<u64> = features.iter().map(|&(hash, _)| hash).collect();
    let ones: Vec<(u64, i64)> = hashes.iter().map(|&hash| (hash, 1)).collect();
    assert_eq!(simhash_hashes(&hashes), simhash_weighted(&ones, 64));

    let mut expected = [0u32; 64];
    for hash in &hashes {
        for (bit, count) in expected.iter_mut().enumerate() {
            *count += (hash >> bit & 1) as u32;
        }
    }
    let query: u64 = u.arbitrary()?;
    let max_distance: u32 = u.int_in_range(0..=64)?;
    let neighbours: Vec<u32> = (0..hashes.len() as u32)
        .filter(|&i| hamming(query, hashes[i as usize]) <= max_distance)
        .collect();
    for level in LEVELS {
        let mut counts = [0u32; 64];
        bit_counts_at(level, &hashes, &mut counts);
        assert_eq!(counts, expected, "bit counts at {level:?}");
        let mut found = Vec::new();
        hamming_scan_at(level, query, &hashes, max_distance, &mut found);
        assert_eq!(found, neighbours, "Hamming scan at {level:?}");
    }

    // Text.
    let n = u.int_in_range(0..=8)?;
    let rest = u.take_rest();
    let (first, second) = rest.split_at(rest.len() / 2);
    let chars = normalize(&String::from_utf8_lossy(first)).chars;
    let other = normalize(&String::from_utf8_lossy(second)).chars;
    let plain = simhash_ngrams(&chars, n);
    let expected = if chars.is_empty() {
        0
    } else if chars.len() < n.max(1) {
        hash_chars(&chars)
    } else {
        simhash_hashes(&ngram_hashes(&chars, n))
    };
    assert_eq!(plain, expected, "simhash_ngrams with n = {n}");

    for features in [FeatureKind::Words, FeatureKind::CharNgrams { n }] {
        let algorithm = SimHashAlgorithm {
            features,
            max_distance: 3,
        };
        let a = algorithm.fingerprint(&chars);
        assert_eq!(
            algorithm.fingerprint(&chars),
            a,
            "{features:?} deterministic"
        );
        let b = algorithm.fingerprint(&other);
        let same = algorithm.compare(&a, &a).expect("two SimHashes compare");
        assert!(same.is_match && same.similarity == 1.0 && same.distance == Some(0.0));
        let ab = algorithm.compare(&a, &b).expect("two SimHashes compare");
        let ba = algorithm.compare(&b, &a).expect("two SimHashes compare");
        assert_eq!(ab, ba, "comparison is symmetric");
        assert!((0.0..=1.0).contains(&ab.similarity), "{ab:?}");
        assert!(
            algorithm
                .compare(&a, &Fingerprint::Shingles(vec![]))
                .is_err()
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
