//! Overlapping windows whose positions are chosen by the content.
//!
//! Fixed-step windows (0, 32, 64, ...) break as soon as a page adds a line of boilerplate in
//! front of a copied chapter: every window is shifted and no fingerprint of the page equals one
//! of the work. Instead a window starts at every **anchor**: a position whose following
//! `anchor_width` characters hash to 0 modulo `spacing`. Anchors depend only on nearby
//! characters, so a copied passage has the same anchors, hence the same windows, on the page
//! and in the work. Each window is `size` characters long; with an anchor every `spacing`
//! characters on average, every character is covered by about `size / spacing` windows, which
//! is the overlap, and an insertion or edit spoils only the windows that span it.
//!
//! The text's start always opens a window, and a stretch without anchors gets forced window
//! starts, so every character is covered and nothing is left without a fingerprint.

use serde::{Deserialize, Serialize};

/// How texts are cut into windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowConfig {
    /// Window length in canonical characters.
    pub size: usize,
    /// Average distance between window starts; `size / spacing` windows cover each character.
    pub spacing: usize,
    /// Number of characters hashed to decide whether a position is an anchor.
    pub anchor_width: usize,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            size: 48,
            spacing: 12,
            anchor_width: 3,
        }
    }
}

/// A window in canonical characters: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// First canonical character.
    pub start: usize,
    /// One past the last canonical character.
    pub end: usize,
}

/// Cuts `chars` into content-anchored windows, in text order. Empty input gives no window.
///
/// Windows that would end past the text are cut at its end; a window entirely contained in the
/// previous one (which happens only at the end of the text) is skipped.
pub fn windows(chars: &[char], config: &WindowConfig) -> Vec<Window> {
    let width = config.anchor_width.max(1);
    windows_by_anchor_hash(chars.len(), config, |start| {
        anchor_hash(&chars[start..start + width])
    })
}

/// [`windows`] of a text of `len` characters, given `anchor_hash_at(start)`, the
/// [`anchor_hash`] of the `anchor_width` characters at `start` (only asked for positions where
/// they fit). Lets the pipeline reuse n-gram hashes it computed anyway.
pub(crate) fn windows_by_anchor_hash(
    len: usize,
    config: &WindowConfig,
    mut anchor_hash_at: impl FnMut(usize) -> u64,
) -> Vec<Window> {
    let size = config.size.max(1);
    let spacing = Divisor::new(config.spacing.max(1) as u64);
    let width = config.anchor_width.max(1);
    if len == 0 {
        return Vec::new();
    }
    // A stretch without any anchor longer than this gets a forced window start, so every
    // character is covered. The forced position is relative to the previous window, hence
    // still determined by the content once the first real anchor is passed.
    let forced_gap = (size - size / 4).max(1);
    let mut result: Vec<Window> = Vec::with_capacity(len / spacing.value as usize + 2);
    for start in 0..len {
        let is_anchor = start + width <= len && spacing.divides(anchor_hash_at(start));
        let forced = match result.last() {
            None => true,
            Some(previous) => start - previous.start >= forced_gap,
        };
        if !is_anchor && !forced {
            continue;
        }
        let end = (start + size).min(len);
        if result.last().is_some_and(|previous| previous.end >= end) {
            continue;
        }
        result.push(Window { start, end });
    }
    result
}

/// Divisibility by a constant without a division instruction (one multiply and a rotate;
/// Hacker's Delight §10-17): with `value = odd << shift`, `x` is a multiple of `value` exactly
/// when `(x * odd⁻¹ mod 2⁶⁴).rotate_right(shift) <= u64::MAX / value`.
#[derive(Debug, Clone, Copy)]
struct Divisor {
    value: u64,
    inverse: u64,
    shift: u32,
    limit: u64,
}

impl Divisor {
    fn new(value: u64) -> Divisor {
        assert!(value > 0, "divisor must be positive");
        let shift = value.trailing_zeros();
        let odd = value >> shift;
        // Newton's iteration doubles the correct low bits each step: 3 → 6 → … → 96 ≥ 64.
        let mut inverse = odd;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        Divisor {
            value,
            inverse,
            shift,
            limit: u64::MAX / value,
        }
    }

    #[inline]
    fn divides(&self, x: u64) -> bool {
        x.wrapping_mul(self.inverse).rotate_right(self.shift) <= self.limit
    }
}

/// Hash of a few characters, the same on every platform: XXH3-64 of the first 16 characters'
/// code points as little-endian `u32`s, hence equal to [`crate::simhash::hash_chars`] for up
/// to 16 characters.
pub(crate) fn anchor_hash(chars: &[char]) -> u64 {
    crate::simhash::hash_chars(&chars[..chars.len().min(16)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    #[test]
    fn divisibility_without_division_agrees_with_the_remainder() {
        let samples: Vec<u64> = (0..2000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i)
            .chain(0..300)
            .chain([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) + 12])
            .collect();
        for value in (1..=70).chain([96, 1000, 4096, u64::MAX / 3, u64::MAX]) {
            let divisor = Divisor::new(value);
            for &x in &samples {
                for x in [x, x - x % value] {
                    assert_eq!(divisor.divides(x), x % value == 0, "{x} % {value}");
                }
            }
        }
    }

    #[test]
    fn anchor_hash_matches_the_original_byte_buffer_hash() {
        let text = chars("天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏");
        for len in 1..text.len() {
            let mut bytes = Vec::new();
            for &c in text.iter().take(len.min(16)) {
                bytes.extend((c as u32).to_le_bytes());
            }
            let expected = xxhash_rust::xxh3::xxh3_64(&bytes);
            assert_eq!(anchor_hash(&text[..len]), expected);
        }
    }

    #[test]
    fn short_text_gets_one_window_covering_it() {
        let text = chars("短文本");
        assert_eq!(
            windows(&text, &WindowConfig::default()),
            [Window { start: 0, end: 3 }]
        );
    }

    #[test]
    fn empty_text_gets_no_window() {
        assert!(windows(&[], &WindowConfig::default()).is_empty());
    }

    #[test]
    fn windows_start_at_the_same_content_after_a_prefix_is_added() {
        let body: String =
            "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜"
                .repeat(4);
        let prefixed = format!("本站广告{body}");
        let config = WindowConfig::default();
        let plain: Vec<String> = windows(&chars(&body), &config)
            .iter()
            .map(|w| chars(&body)[w.start..w.end].iter().collect())
            .collect();
        let shifted: Vec<String> = windows(&chars(&prefixed), &config)
            .iter()
            .map(|w| chars(&prefixed)[w.start..w.end].iter().collect())
            .collect();
        let common = plain.iter().filter(|w| shifted.contains(w)).count();
        assert!(
            common + 1 >= plain.len(),
            "{common} of {} windows survive",
            plain.len()
        );
    }

    #[test]
    fn every_character_is_covered_by_some_window() {
        let text: Vec<char> = (0..2000u32)
            .map(|i| char::from_u32(0x4e00 + (i * 7919) % 20000).unwrap())
            .collect();
        let ws = windows(&text, &WindowConfig::default());
        let mut covered = vec![false; text.len()];
        for w in &ws {
            assert!(w.start < w.end && w.end <= text.len());
            covered[w.start..w.end].iter_mut().for_each(|c| *c = true);
        }
        let uncovered = covered.iter().filter(|c| !**c).count();
        assert_eq!(uncovered, 0, "{uncovered} characters are in no window");
    }
}
