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
use xxhash_rust::xxh3::xxh3_64;

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
    let size = config.size.max(1);
    let spacing = config.spacing.max(1) as u64;
    let width = config.anchor_width.max(1);
    if chars.is_empty() {
        return Vec::new();
    }
    // A stretch without any anchor longer than this gets a forced window start, so every
    // character is covered. The forced position is relative to the previous window, hence
    // still determined by the content once the first real anchor is passed.
    let forced_gap = (size - size / 4).max(1);
    let mut result: Vec<Window> = Vec::new();
    for start in 0..chars.len() {
        let is_anchor = start + width <= chars.len()
            && anchor_hash(&chars[start..start + width]).is_multiple_of(spacing);
        let forced = match result.last() {
            None => true,
            Some(previous) => start - previous.start >= forced_gap,
        };
        if !is_anchor && !forced {
            continue;
        }
        let end = (start + size).min(chars.len());
        if result.last().is_some_and(|previous| previous.end >= end) {
            continue;
        }
        result.push(Window { start, end });
    }
    result
}

/// Hash of a few characters, the same on every platform.
pub(crate) fn anchor_hash(chars: &[char]) -> u64 {
    let mut bytes = [0u8; 64];
    let mut length = 0;
    for &c in chars.iter().take(16) {
        bytes[length..length + 4].copy_from_slice(&(c as u32).to_le_bytes());
        length += 4;
    }
    xxh3_64(&bytes[..length])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
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
