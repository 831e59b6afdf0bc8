//! Arbitrary bytes → `normalize` → pinyin-initial DNA codes, with the configuration and the
//! reference distribution taken from the first bytes: windows must be non-empty, in bounds and
//! in order, and every digit of a code must be a valid quantization level.
#![no_main]

use copytrace_fingerprint::dna::{DnaConfig, ReferenceDistribution, code_digits, dna_codes};
use copytrace_fingerprint::normalize;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    const HEAD: usize = 3 + 26;
    let (head, rest) = data.split_at(data.len().min(HEAD));
    let byte = |i: usize| head.get(i).copied().unwrap_or(0);
    let granularity = usize::from(byte(0) % 200);
    let overlap = f64::from(byte(1)) / 256.0;
    let levels = [1, 3, 7, 9][usize::from(byte(2) % 4)];
    // Invalid combinations (granularity 0, an all-zero reference) must be refused, not panic;
    // the defaults then stand in so the text is still fuzzed.
    let config = DnaConfig::new(granularity, overlap, levels).unwrap_or_default();
    let mut counts = [0u64; 26];
    for (i, count) in counts.iter_mut().enumerate() {
        *count = u64::from(byte(3 + i));
    }
    let reference = ReferenceDistribution::from_counts(&counts).unwrap_or_default();

    let text = String::from_utf8_lossy(rest);
    let n = normalize(&text);
    let codes = dna_codes(&n.chars, &config, &reference);
    for (i, w) in codes.iter().enumerate() {
        assert!(w.start < w.end, "empty DNA window {w:?}");
        assert!(
            w.end <= n.len(),
            "DNA window {w:?} past the end {}",
            n.len()
        );
        if i > 0 {
            assert!(
                codes[i - 1].start < w.start,
                "DNA window {w:?} not after {:?}",
                codes[i - 1]
            );
        }
        let digits = code_digits(w.code, config.levels());
        assert!(
            digits.iter().all(|&d| d <= config.levels()),
            "code {:#x} has a digit above {}",
            w.code,
            config.levels()
        );
        let (start, end) = n.byte_range(w.start, w.end);
        assert!(
            text.get(start as usize..end as usize)
                .is_some_and(|s| !s.is_empty())
        );
    }
    assert_eq!(
        dna_codes(&n.chars, &config, &reference),
        codes,
        "DNA codes are deterministic"
    );
});
