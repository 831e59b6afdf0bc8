//! Arbitrary bytes → `fingerprint_text`, with a `FingerprintConfig` taken from the first four
//! bytes: the pipeline's shortcuts (n-gram hashes shared by the windows and, when the anchor
//! width equals the n-gram length, by the anchor test) must give exactly what the plain
//! definition gives: `normalize`, then `windows`, then `simhash_ngrams` of each window, with
//! byte ranges from `Normalized::byte_range`.
#![no_main]

use copytrace_fingerprint::{
    FingerprintConfig, WindowConfig, fingerprint_normalized, fingerprint_text, normalize,
    simhash_ngrams, windows,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(4));
    let byte = |i: usize| head.get(i).copied().unwrap_or(0) as usize;
    // Bounded sizes, zero included on purpose (the pipeline treats it as 1); n-grams up to 20
    // characters, so both the shared-hash path (n ≤ 16) and the plain one are taken.
    let config = FingerprintConfig {
        window: WindowConfig {
            size: byte(0) % 160,
            spacing: byte(1) % 64,
            anchor_width: byte(2) % 21,
        },
        ngram: byte(3) % 21,
    };
    let text = String::from_utf8_lossy(rest);
    let fp = fingerprint_text(&text, &config);
    let n = normalize(&text);
    assert_eq!(
        fp.normalized, n,
        "fingerprint_text normalizes like normalize"
    );

    let expected = windows(&n.chars, &config.window);
    assert_eq!(
        fp.windows.len(),
        expected.len(),
        "as many window fingerprints as windows"
    );
    for (i, (w, window)) in fp.windows.iter().zip(&expected).enumerate() {
        assert_eq!(w.ordinal as usize, i, "ordinals count from 0");
        assert_eq!(w.window, *window, "window {i} differs from `windows`");
        assert_eq!(
            (w.byte_start, w.byte_end),
            n.byte_range(window.start, window.end),
            "byte range of window {i}"
        );
        assert!(
            text.get(w.byte_start as usize..w.byte_end as usize)
                .is_some_and(|s| !s.is_empty()),
            "window {i} is not a non-empty slice of the original"
        );
        assert_eq!(
            w.simhash,
            simhash_ngrams(&n.chars[window.start..window.end], config.ngram),
            "SimHash of window {i} differs from simhash_ngrams"
        );
    }
    assert_eq!(fingerprint_normalized(&n, &config), fp.windows);
});
