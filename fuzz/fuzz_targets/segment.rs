//! Arbitrary bytes → `normalize` → `windows`, with a window configuration taken from the
//! first three bytes: windows must be non-empty, in bounds, in order, cover every canonical
//! character, and map back to valid slices of the original text.
#![no_main]

use copytrace_fingerprint::{WindowConfig, normalize, windows};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(3));
    let byte = |i: usize| head.get(i).copied().unwrap_or(0) as usize;
    // Bounded sizes, zero included on purpose (`windows` treats it as 1).
    let config = WindowConfig {
        size: byte(0) % 160,
        spacing: byte(1) % 64,
        anchor_width: byte(2) % 9,
    };
    let text = String::from_utf8_lossy(rest);
    let n = normalize(&text);
    let ws = windows(&n.chars, &config);
    assert_eq!(
        ws.is_empty(),
        n.is_empty(),
        "windows exist exactly for non-empty text"
    );
    let mut covered_to = 0;
    for (i, w) in ws.iter().enumerate() {
        assert!(w.start < w.end, "empty window {w:?}");
        assert!(w.end <= n.len(), "window {w:?} past the end {}", n.len());
        assert!(
            w.end - w.start <= config.size.max(1),
            "window {w:?} longer than {config:?}"
        );
        if i > 0 {
            let previous = ws[i - 1];
            assert!(
                previous.start < w.start && previous.end < w.end,
                "window {w:?} not after {previous:?}"
            );
        }
        // Windows are ordered, so they cover everything iff none starts past the covered part.
        assert!(
            w.start <= covered_to,
            "characters {covered_to}..{} in no window",
            w.start
        );
        covered_to = covered_to.max(w.end);
        let (start, end) = n.byte_range(w.start, w.end);
        let slice = text.get(start as usize..end as usize);
        assert!(
            slice.is_some_and(|s| !s.is_empty()),
            "bad byte range {start}..{end} for {w:?}"
        );
    }
    assert_eq!(covered_to, n.len(), "the end of the text is in no window");
});
