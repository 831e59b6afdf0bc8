//! Canonical text with an offset map back to the original.
//!
//! The pipeline, applied character by character so that every output character knows the
//! original bytes it came from:
//!
//! 1. **NFKC** compatibility folding: full-width Latin letters and digits become ASCII,
//!    ligatures and circled or parenthesised forms are spelled out;
//! 2. **lower case**, so `ABC` and `abc` compare equal, and **digits unified**: decimal digits
//!    of every script (Arabic-Indic ٣, Devanagari ३, Thai ๓, …) become ASCII `0`–`9`, as
//!    NFKC already does for full-width, circled and mathematical digits;
//! 3. **drop** everything that is not a letter or a digit: punctuation, symbols, whitespace,
//!    control, format (zero-width spaces and joiners, BOM, direction marks) and private-use
//!    characters — pirates insert and change exactly these;
//! 4. **Traditional → Simplified** with `zhconv` (OpenCC/MediaWiki tables, phrase aware);
//! 5. **drop lone junk between Han characters**: a single letter or digit of any script with a
//!    Han character on either side (我ⓧ的朋7友 → 我的朋友), what anti-copy sites strew into
//!    text. Chinese prose has no one-letter words, and the few real cases (`5月3日`) lose their
//!    digit on both sides of a comparison alike. Runs of two or more (`xiao说`, `iPhone`, `2026年`)
//!    and Latin text are kept.
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
    // Chinese prose is mostly 3-byte characters, a few of which are dropped.
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(text.len() / 3 + 16);
    for (offset, original) in text.char_indices() {
        let span = (offset as u32, (offset + original.len_utf8()) as u32);
        match fold_fast(original) {
            Fold::Keep(c) => {
                folded.push(c);
                spans.push(span);
            }
            Fold::Drop => {}
            Fold::Slow => fold_slow(original, |c| {
                folded.push(c);
                spans.push(span);
            }),
        }
    }
    let chars = to_simplified(&folded, spans.len());
    debug_assert_eq!(chars.len(), spans.len());
    drop_lone_junk(Normalized { chars, spans })
}

/// Whether `c` is a Han character (CJK Unified Ideographs with Extension A, the later
/// extensions, and the compatibility ideographs).
fn is_han(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3134F}')
}

/// Step 5 of [`normalize`]: removes every single non-Han character that has a Han character
/// on either side.
fn drop_lone_junk(mut text: Normalized) -> Normalized {
    let chars = &text.chars;
    let lone = |i: usize| {
        i > 0
            && i + 1 < chars.len()
            && !is_han(chars[i])
            && is_han(chars[i - 1])
            && is_han(chars[i + 1])
    };
    if !(0..chars.len()).any(lone) {
        return text;
    }
    let keep: Vec<bool> = (0..chars.len()).map(|i| !lone(i)).collect();
    let mut flags = keep.iter();
    text.chars.retain(|_| *flags.next().unwrap_or(&true));
    let mut flags = keep.iter();
    text.spans.retain(|_| *flags.next().unwrap_or(&true));
    text
}

/// What [`fold_fast`] decided about one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// Folds to exactly this one character.
    Keep(char),
    /// Folds to nothing.
    Drop,
    /// Needs the general path, [`fold_slow`].
    Slow,
}

/// The common characters of Chinese and Latin text, folded without NFKC tables: ASCII, the
/// full-width forms of ASCII (their NFKC is the ASCII character `0xFEE0` below), the CJK
/// Unified Ideographs and Extension A (NFKC-stable, caseless letters), and the common CJK and
/// general punctuation. The test `the_fast_path_agrees_with_the_general_path_on_every_character`
/// checks every Unicode scalar value against [`fold_slow`].
#[inline]
fn fold_fast(c: char) -> Fold {
    match c {
        'a'..='z' | '0'..='9' => Fold::Keep(c),
        'A'..='Z' => Fold::Keep(c.to_ascii_lowercase()),
        '\0'..='\u{7F}' => Fold::Drop,
        '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' => Fold::Keep(c),
        '\u{FF01}'..='\u{FF5E}' => {
            let ascii = char::from_u32(c as u32 - 0xFEE0).unwrap_or(c);
            match fold_fast(ascii) {
                Fold::Keep(folded) => Fold::Keep(folded),
                _ => Fold::Drop,
            }
        }
        // General punctuation (dashes, quotes, ellipsis, daggers, per mille) and the CJK
        // brackets and marks 、。〈〉《》「」『』【】〔〕〖〗〘〙〚〛: not letters, and their NFKC forms
        // are punctuation too.
        '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{203E}' | '\u{3001}'..='\u{3002}' => Fold::Drop,
        '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301B}' => Fold::Drop,
        _ => Fold::Slow,
    }
}

/// The general path: drop invisible characters, NFKC, lower case, keep letters and digits.
/// Character-wise NFKC may expand one character into several (ﬁ → fi), all with its span.
fn fold_slow(original: char, mut keep: impl FnMut(char)) {
    if is_invisible(original) {
        return;
    }
    for compat in std::iter::once(original).nfkc() {
        for lower in compat.to_lowercase() {
            if lower.is_alphanumeric() {
                keep(ascii_digit(lower).unwrap_or(lower));
            }
        }
    }
}

/// The first code point ("zero") of each run of ten decimal digits (Unicode category Nd) in the
/// Basic Multilingual Plane outside ASCII and the full-width forms (NFKC folds those). Digits
/// outside the BMP are either folded by NFKC (mathematical digits) or belong to historic
/// scripts no page of ours uses.
const DIGIT_ZEROS: [u32; 35] = [
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
];

/// The ASCII digit a decimal digit of another script stands for.
fn ascii_digit(c: char) -> Option<char> {
    let code = c as u32;
    if !(0x0660..=0xABF9).contains(&code) {
        return None;
    }
    let zero = DIGIT_ZEROS
        .iter()
        .rev()
        .find(|&&zero| zero <= code)
        .copied()?;
    let value = code - zero;
    (value < 10).then(|| char::from(b'0' + value as u8))
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
    fn lone_junk_between_han_characters_is_dropped_and_real_latin_text_kept() {
        let junk = normalize("我※的ⓧ朋7友Q们");
        assert_eq!(junk.text(), "我的朋友们");
        // Every kept character still points at its own original bytes.
        let original = "我※的ⓧ朋7友Q们";
        let kept: String = junk
            .spans
            .iter()
            .map(|&(s, e)| &original[s as usize..e as usize])
            .collect();
        assert_eq!(kept, "我的朋友们");
        // Runs of two or more, letters at the edges and Latin text stay.
        assert_eq!(normalize("xiao说很好看").text(), "xiao说很好看");
        assert_eq!(normalize("买了iPhone手机").text(), "买了iphone手机");
        assert_eq!(normalize("2026年12月").text(), "2026年12月");
        assert_eq!(normalize("A sentence, a word.").text(), "asentenceaword");
        assert_eq!(normalize("第a").text(), "第a");
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_path_on_every_character() {
        let mut mismatches = Vec::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let mut slow = Vec::new();
            fold_slow(c, |folded| slow.push(folded));
            let agrees = match fold_fast(c) {
                Fold::Keep(folded) => slow == [folded],
                Fold::Drop => slow.is_empty(),
                Fold::Slow => true,
            };
            if !agrees {
                mismatches.push(c);
            }
        }
        assert!(mismatches.is_empty(), "fast path differs on {mismatches:?}");
    }

    #[test]
    fn traditional_and_simplified_texts_normalize_identically() {
        let traditional = normalize("夜色漸深，雨水順著屋簷滴落。他說：「這裡是哪裡？」");
        let simplified = normalize("夜色渐深，雨水顺着屋檐滴落。他说：“这里是哪里？”");
        assert_eq!(traditional.text(), simplified.text());
        assert_eq!(simplified.text(), "夜色渐深雨水顺着屋檐滴落他说这里是哪里");
    }

    #[test]
    fn decimal_digits_of_every_script_become_ascii() {
        for zero in DIGIT_ZEROS {
            for value in 0..10u32 {
                let digit = char::from_u32(zero + value).unwrap();
                assert!(digit.is_numeric(), "U+{:04X} is not a digit", zero + value);
                let expected = char::from(b'0' + value as u8);
                assert_eq!(
                    normalize(&digit.to_string()).chars,
                    [expected],
                    "U+{:04X}",
                    zero + value
                );
            }
        }
        // Full-width, circled and Arabic-Indic forms of one number normalize alike.
        let forms = ["第12章", "第１２章", "第١٢章", "第१२章"];
        for form in forms {
            assert_eq!(normalize(form).text(), "第12章", "{form}");
        }
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
