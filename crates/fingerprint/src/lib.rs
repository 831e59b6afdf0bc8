//! Copytrace fingerprint generator: pure functions from text to fingerprints.
//!
//! Pirates disguise copies (Traditional characters, full-width letters, zero-width junk,
//! changed punctuation, inserted ads). Everything that can be absorbed *before* comparing is
//! absorbed here, in three steps:
//!
//! 1. [`mod@normalize`] maps the original text to a canonical character sequence (NFKC,
//!    Traditional→Simplified, lower case, no punctuation, whitespace or invisible characters)
//!    and keeps, for every canonical character, the byte range it came from, so evidence found
//!    on canonical text always points at real characters of the original.
//! 2. [`mod@window`] cuts the canonical text into overlapping windows whose start positions are
//!    chosen by the content itself (anchors), so the same passage produces the same windows
//!    wherever it stands on a page, whatever boilerplate precedes it.
//! 3. [`mod@simhash`] turns each window into a 64-bit SimHash over character n-grams, so windows
//!    that differ by a few characters stay within a few bits of each other.
//!
//! Beside the window SimHash the matcher indexes, every algorithm of the fingerprint-tracking
//! design sits behind one [`Algorithm`] trait, so they can be compared on the same data:
//! weighted SimHash over character n-grams or jieba words with TF-IDF weights
//! ([`SimHashAlgorithm`] in [`mod@simhash`], its features in [`weighted_features`]),
//! MinHash with LSH banding ([`minhash`]), exact k-shingle sets ([`shingles`]), top-k
//! longest-sentence signatures ([`sentences`]) and the pinyin-initial DNA fingerprint
//! ([`dna`], over the homophone-proof projection of [`pinyin`]).
//!
//! The crate does no I/O and holds no global state besides the read-only conversion tables,
//! so it can be called from any thread and fuzzed on arbitrary input.

pub mod algorithm;
pub mod cpu;
pub mod dna;
pub mod minhash;
pub mod normalize;
pub mod pinyin;
pub mod sentences;
pub mod shingles;
pub mod simhash;
pub mod thesaurus;
pub mod weighted_features;
pub mod window;
pub mod winnow;

pub use algorithm::{
    Algorithm, AlgorithmError, Comparison, Fingerprint, algorithm_by_name, default_algorithms,
};
pub use dna::{
    DnaAlgorithm, DnaConfig, DnaError, DnaWindow, ReferenceDistribution, code_distance, dna_codes,
    dna_codes_of_initials,
};
pub use minhash::{MinHashAlgorithm, MinHasher};
pub use normalize::{Normalized, normalize};
pub use sentences::{SentenceAlgorithm, longest_sentences};
pub use shingles::{ShingleAlgorithm, shingle_hashes};
pub use simhash::{
    FeatureKind, SimHashAlgorithm, hamming, simhash_hashes, simhash_ngrams, simhash_weighted,
};
pub use weighted_features::jieba_words;
pub use window::{Window, WindowConfig, windows};

use serde::{Deserialize, Serialize};

/// Version of normalization and window fingerprinting, the steps every algorithm shares. Stored
/// with every work: when normalization, the windows or the window SimHash change their output,
/// this number changes and stored works are re-fingerprinted instead of silently mixing old and
/// new fingerprints in one index. Each [`Algorithm`] has its own version on top of this one.
///
/// 2: decimal digits of every script unified to ASCII.
/// 3: a lone letter or digit between two Han characters dropped (junk strewn into text).
pub const FINGERPRINT_VERSION: u32 = 3;

/// Parameters of the whole fingerprinting pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FingerprintConfig {
    /// How texts are cut into windows.
    pub window: WindowConfig,
    /// Character n-gram length of the SimHash features.
    pub ngram: usize,
}

impl Default for FingerprintConfig {
    fn default() -> Self {
        FingerprintConfig {
            window: WindowConfig::default(),
            ngram: 3,
        }
    }
}

/// The fingerprint of one window, with its position in both the canonical and the original text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowFingerprint {
    /// Position of the window in the text, starting at 0.
    pub ordinal: u32,
    /// The window in canonical characters.
    pub window: Window,
    /// Byte offset of the window's first character in the original text.
    pub byte_start: u32,
    /// Byte offset just past the window's last character in the original text.
    pub byte_end: u32,
    /// SimHash-64 of the window's character n-grams.
    pub simhash: u64,
}

/// Everything the matcher needs about one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFingerprint {
    /// The canonical text with its offset map.
    pub normalized: Normalized,
    /// One fingerprint per window, in text order.
    pub windows: Vec<WindowFingerprint>,
}

/// Normalizes `text`, cuts it into windows and fingerprints each window.
pub fn fingerprint_text(text: &str, config: &FingerprintConfig) -> TextFingerprint {
    let normalized = normalize(text);
    let windows = fingerprint_normalized(&normalized, config);
    TextFingerprint {
        normalized,
        windows,
    }
}

/// Window fingerprints of an already normalized text.
///
/// The n-gram hashes are computed once for the whole text and shared by the overlapping windows
/// (and, when the anchor width equals the n-gram length, by the anchor test), which gives the
/// same fingerprints as [`windows`] followed by [`simhash_ngrams`] on each window.
pub fn fingerprint_normalized(
    normalized: &Normalized,
    config: &FingerprintConfig,
) -> Vec<WindowFingerprint> {
    let chars = &normalized.chars;
    let n = config.ngram.max(1);
    let hashes = simhash::ngram_hashes(chars, n);
    let anchor_width = config.window.anchor_width.max(1);
    let found = if anchor_width == n && n <= 16 {
        window::windows_by_anchor_hash(chars.len(), &config.window, |start| hashes[start])
    } else {
        windows(chars, &config.window)
    };
    found
        .into_iter()
        .enumerate()
        .map(|(ordinal, window)| {
            let (byte_start, byte_end) = normalized.byte_range(window.start, window.end);
            let simhash = if window.end - window.start >= n {
                simhash_hashes(&hashes[window.start..=window.end - n])
            } else {
                simhash_ngrams(&chars[window.start..window.end], n)
            };
            WindowFingerprint {
                ordinal: ordinal as u32,
                window,
                byte_start,
                byte_end,
                simhash,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_passage_gets_the_same_window_fingerprints_behind_different_boilerplate() {
        let passage = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
                       手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\
                       远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了。";
        let config = FingerprintConfig::default();
        let work = fingerprint_text(passage, &config);
        let page = fingerprint_text(
            &format!("首页 | 玄幻小说 | 排行榜\n最新章节请访问本站\n{passage}"),
            &config,
        );
        let work_hashes: std::collections::HashSet<u64> =
            work.windows.iter().map(|w| w.simhash).collect();
        let shared = page
            .windows
            .iter()
            .filter(|w| work_hashes.contains(&w.simhash))
            .count();
        assert!(
            work.windows.len() >= 2,
            "a 120-character passage has several windows"
        );
        assert!(
            shared + 1 >= work.windows.len(),
            "shared {shared} of {}",
            work.windows.len()
        );
    }

    /// Texts covering every branch of the pipeline: the demo prose in Simplified, Traditional
    /// and Taiwanese forms, and a line of disguises (full-width and compatibility forms,
    /// ligatures, Kangxi radicals, compatibility ideographs, combining marks, case, regional
    /// vocabulary, invisible characters).
    fn golden_texts() -> Vec<String> {
        let demo = [
            include_str!("../../copytrace/demo/library/jianghu-ch1.txt"),
            include_str!("../../copytrace/demo/library/news-harbor.txt"),
            include_str!("../../copytrace/demo/library/xingchen-ch1.txt"),
            include_str!("../../copytrace/demo/unrelated/cooking.txt"),
            include_str!("../../copytrace/demo/unrelated/tech-news.txt"),
        ];
        let mut texts = Vec::new();
        for text in demo {
            texts.push(text.to_owned());
            texts.push(zhconv::zhconv(text, zhconv::Variant::ZhHant));
            texts.push(zhconv::zhconv(text, zhconv::Variant::ZhTW));
        }
        texts.push(
            "Ｃｏｐｙ\u{200b}Trace　２０２６！ﬁ㈱Ⅻ²①⼀⼈豈﨑ｶﾀｶﾅ e\u{301}İΣΑΣ ÅÉ \u{feff}\
             軟體部落格計程車 软体 𠀀𪚥 😀 \u{e000}\u{1F1E8}\u{1F1F3} ﹏﹐「」《》\t\r\n"
                .repeat(3),
        );
        texts
    }

    #[test]
    fn fingerprints_of_the_golden_texts_are_unchanged() {
        // Any change of this digest changes stored fingerprints: bump FINGERPRINT_VERSION.
        let mut bytes = Vec::new();
        for text in golden_texts() {
            let fp = fingerprint_text(&text, &FingerprintConfig::default());
            for (c, span) in fp.normalized.chars.iter().zip(&fp.normalized.spans) {
                bytes.extend((*c as u32).to_le_bytes());
                bytes.extend(span.0.to_le_bytes());
                bytes.extend(span.1.to_le_bytes());
            }
            for w in &fp.windows {
                for v in [w.ordinal, w.window.start as u32, w.window.end as u32] {
                    bytes.extend(v.to_le_bytes());
                }
                bytes.extend(w.byte_start.to_le_bytes());
                bytes.extend(w.byte_end.to_le_bytes());
                bytes.extend(w.simhash.to_le_bytes());
            }
            bytes.push(0xff);
        }
        let digest = xxhash_rust::xxh3::xxh3_64(&bytes);
        assert_eq!(
            digest, 0xfa49_ad32_4242_8fd7,
            "golden digest {digest:#018x}"
        );
    }

    #[test]
    fn window_byte_ranges_slice_the_original_text() {
        let text = "第一章　雨夜來客\n\u{200b}夜色漸深，雨水順著屋簷滴落。ＡＢＣ123";
        let fp = fingerprint_text(text, &FingerprintConfig::default());
        for w in &fp.windows {
            let slice = &text[w.byte_start as usize..w.byte_end as usize];
            assert!(!slice.is_empty());
        }
    }
}
