//! Canonical text with an offset map back to the original.
//!
//! The pipeline, applied character by character so that every output character knows the
//! original bytes it came from:
//!
//! 1. **NFKC** compatibility folding: full-width Latin letters and digits become ASCII,
//!    ligatures and circled or parenthesised forms are spelled out;
//! 2. **lower case**, so `ABC` and `abc` compare equal;
//! 3. **drop** everything that is not a letter or a digit: punctuation, symbols, whitespace,
//!    control, format (zero-width spaces and joiners, BOM, direction marks) and private-use
//!    characters — pirates insert and change exactly these;
//! 4. **Traditional → Simplified** with `zhconv` (OpenCC/MediaWiki tables, phrase aware).
//!
//! Character-wise NFKC differs from whole-string NFKC only for combining sequences, which do
//! not occur in the Chinese and Latin text this is made for, and keeps the offset map exact.

use unicode_normalization::UnicodeNormalization;

/// Canonical characters with, for each of them, the byte range of the original text it came
/// from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalized {
    /// Canonical characters.
    pub chars: Vec<char>,
    /// `spans[i]` is the byte range `(start, end)` in the original text that produced
    /// `chars[i]`. Spans never decrease and always fall on character boundaries.
    pub spans: Vec<(u32, u32)>,
}

impl Normalized {
    /// Number of canonical characters.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether nothing is left after normalization.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The canonical text as a string.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Original byte range covering canonical characters `start..end` (`start < end`).
    ///
    /// # Panics
    /// If the range is empty or out of bounds.
    pub fn byte_range(&self, start: usize, end: usize) -> (u32, u32) {
        assert!(
            start < end && end <= self.spans.len(),
            "bad canonical range {start}..{end}"
        );
        (self.spans[start].0, self.spans[end - 1].1)
    }
}

/// Normalizes `text` for fingerprinting and matching.
pub fn normalize(text: &str) -> Normalized {
    let mut folded = String::with_capacity(text.len());
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(text.len() / 2);
    for (offset, original) in text.char_indices() {
        if is_invisible(original) {
            continue;
        }
        let span = (offset as u32, (offset + original.len_utf8()) as u32);
        for compat in std::iter::once(original).nfkc() {
            for lower in compat.to_lowercase() {
                if lower.is_alphanumeric() {
                    folded.push(lower);
                    spans.push(span);
                }
            }
        }
    }
    let chars = to_simplified(&folded, spans.len());
    debug_assert_eq!(chars.len(), spans.len());
    Normalized { chars, spans }
}

/// Characters removed before anything else: they render as nothing (or as a box) and are the
/// pirates' favourite way to break naive string matching.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}'                // soft hyphen
        | '\u{034F}'              // combining grapheme joiner
        | '\u{061C}'              // Arabic letter mark
        | '\u{115F}' | '\u{1160}' // Hangul fillers
        | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' // Mongolian variation selectors and vowel separator
        | '\u{200B}'..='\u{200F}' // zero-width space, joiners, direction marks
        | '\u{202A}'..='\u{202E}' // embedding and override controls
        | '\u{2060}'..='\u{206F}' // word joiner, invisible operators
        | '\u{3164}'              // Hangul filler
        | '\u{FE00}'..='\u{FE0F}' // variation selectors
        | '\u{FEFF}'              // BOM / zero-width no-break space
        | '\u{FFA0}'
        | '\u{E000}'..='\u{F8FF}' // private use
        | '\u{E0000}'..='\u{E0FFF}' // tags and variation selectors supplement
    ) || c.is_control()
}

/// Converts canonical characters to Simplified Chinese, one output character per input
/// character so the offset map stays valid.
///
/// The mainland (`zh-CN`) tables are tried first because they also resolve characters that are
/// Simplified in some words and Traditional in others (順著 → 顺着, 其餘 → 其余), which the
/// script-only `zh-Hans` tables leave alone. When a phrase rule changes the length (regional
/// vocabulary such as 部落格 → 博客, rare), the script-only tables are tried, and as a last
/// resort the text is converted character by character.
fn to_simplified(folded: &str, expected: usize) -> Vec<char> {
    if folded.is_ascii() {
        return folded.chars().collect();
    }
    for variant in [zhconv::Variant::ZhCN, zhconv::Variant::ZhHans] {
        let chars: Vec<char> = zhconv::zhconv(folded, variant).chars().collect();
        if chars.len() == expected {
            return chars;
        }
    }
    let mut buffer = [0u8; 4];
    folded
        .chars()
        .map(|c| {
            if c.is_ascii() {
                return c;
            }
            let single = zhconv::zhconv(c.encode_utf8(&mut buffer), zhconv::Variant::ZhCN);
            let mut it = single.chars();
            match (it.next(), it.next()) {
                (Some(s), None) => s,
                _ => c,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traditional_and_simplified_texts_normalize_identically() {
        let traditional = normalize("夜色漸深，雨水順著屋簷滴落。他說：「這裡是哪裡？」");
        let simplified = normalize("夜色渐深，雨水顺着屋檐滴落。他说：“这里是哪里？”");
        assert_eq!(traditional.text(), simplified.text());
        assert_eq!(simplified.text(), "夜色渐深雨水顺着屋檐滴落他说这里是哪里");
    }

    #[test]
    fn full_width_zero_width_and_case_are_folded_away() {
        let n = normalize("Ｃｏｐｙ\u{200b}Trace　２０２６！");
        assert_eq!(n.text(), "copytrace2026");
    }

    #[test]
    fn spans_point_at_the_original_characters() {
        let text = "「ＡＢ」\u{200b}漢字 x";
        let n = normalize(text);
        let pieces: Vec<&str> = n
            .spans
            .iter()
            .map(|&(s, e)| &text[s as usize..e as usize])
            .collect();
        assert_eq!(pieces, ["Ａ", "Ｂ", "漢", "字", "x"]);
        assert_eq!(n.text(), "ab汉字x");
    }

    #[test]
    fn compatibility_forms_expand_with_the_same_span() {
        let n = normalize("ﬁ㈱");
        assert_eq!(n.text(), "fi株");
        assert_eq!(n.spans[0], n.spans[1]);
    }

    #[test]
    fn empty_and_punctuation_only_texts_normalize_to_nothing() {
        assert!(normalize("").is_empty());
        assert!(normalize("……！？，。 \n\t\u{feff}").is_empty());
    }
}
