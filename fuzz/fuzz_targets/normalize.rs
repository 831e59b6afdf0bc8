//! Arbitrary bytes → lossy UTF-8 → `normalize`: the offset map must stay exact.
#![no_main]

use copytrace_fingerprint::normalize;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let n = normalize(&text);
    assert_eq!(
        n.chars.len(),
        n.spans.len(),
        "one span per canonical character"
    );
    let mut previous = (0u32, 0u32);
    for &(start, end) in &n.spans {
        let (s, e) = (start as usize, end as usize);
        assert!(s < e, "empty span {s}..{e}");
        assert!(e <= text.len(), "span {s}..{e} past the end {}", text.len());
        assert!(
            text.is_char_boundary(s),
            "span start {s} inside a character"
        );
        assert!(text.is_char_boundary(e), "span end {e} inside a character");
        assert!(
            previous.0 <= start && previous.1 <= end,
            "span {start}..{end} after {previous:?}"
        );
        assert!(
            (start, end) == previous || start >= previous.1,
            "span {start}..{end} overlaps {previous:?}"
        );
        previous = (start, end);
    }
    // Normalizing is deterministic.
    assert_eq!(normalize(&text), n);
});
