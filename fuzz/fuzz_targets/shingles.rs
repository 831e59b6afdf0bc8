//! Two arbitrary texts → exact k-shingle sets and their comparison:
//!
//! * a shingle set is strictly increasing, empty exactly for an empty text, and no larger than
//!   the number of k-grams (one for a text shorter than `k`);
//! * `intersection_size` equals a plain set intersection; `jaccard` and `containment` are in
//!   [0, 1], Jaccard is symmetric, and a non-empty set has Jaccard and containment 1 with
//!   itself;
//! * `ShingleAlgorithm` compares symmetrically and matches a non-empty text with itself.
#![no_main]

use std::collections::BTreeSet;

use copytrace_fingerprint::algorithm::Algorithm;
use copytrace_fingerprint::shingles::{containment, intersection_size, jaccard};
use copytrace_fingerprint::{ShingleAlgorithm, normalize, shingle_hashes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(2));
    let byte = |i: usize| usize::from(head.get(i).copied().unwrap_or(0));
    let k = byte(0) % 12;
    let split = if rest.is_empty() {
        0
    } else {
        byte(1) * rest.len() / 256
    };
    let (first, second) = rest.split_at(split);
    let a_chars = normalize(&String::from_utf8_lossy(first)).chars;
    let b_chars = normalize(&String::from_utf8_lossy(second)).chars;

    let a = shingle_hashes(&a_chars, k);
    let b = shingle_hashes(&b_chars, k);
    for (set, chars) in [(&a, &a_chars), (&b, &b_chars)] {
        assert!(
            set.windows(2).all(|p| p[0] < p[1]),
            "not strictly increasing"
        );
        assert_eq!(set.is_empty(), chars.is_empty());
        let grams = if chars.len() >= k.max(1) {
            chars.len() + 1 - k.max(1)
        } else {
            usize::from(!chars.is_empty())
        };
        assert!(
            set.len() <= grams,
            "{} shingles of {grams} k-grams",
            set.len()
        );
    }

    let plain = BTreeSet::from_iter(&a)
        .intersection(&BTreeSet::from_iter(&b))
        .count();
    assert_eq!(intersection_size(&a, &b), plain, "intersection size");
    let j = jaccard(&a, &b);
    assert!((0.0..=1.0).contains(&j), "Jaccard {j}");
    assert_eq!(j, jaccard(&b, &a), "Jaccard is symmetric");
    for c in [containment(&a, &b), containment(&b, &a)] {
        assert!((0.0..=1.0).contains(&c), "containment {c}");
    }
    if !a.is_empty() {
        assert_eq!(jaccard(&a, &a), 1.0);
        assert_eq!(containment(&a, &a), 1.0);
    }

    let algorithm = ShingleAlgorithm { k, threshold: 0.5 };
    let fa = algorithm.fingerprint(&a_chars);
    let fb = algorithm.fingerprint(&b_chars);
    let ab = algorithm.compare(&fa, &fb).expect("two shingle sets");
    assert_eq!(ab, algorithm.compare(&fb, &fa).expect("two shingle sets"));
    if !a.is_empty() {
        assert!(algorithm.compare(&fa, &fa).expect("same kind").is_match);
    }
});
