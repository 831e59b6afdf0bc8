//! Weighted features for the whole-text SimHash ([`crate::simhash::SimHashAlgorithm`]):
//! character n-grams weighted by count, or jieba words with TF-IDF weights.
//!
//! Unweighted character n-grams ([`crate::simhash::simhash_ngrams`]) let the most frequent
//! function words ("的", "了", "是") move as many signature bits as the rare names and phrases
//! that identify a text. Weighting words by TF-IDF makes the signature follow what the text is
//! about, so a pirate's changed filler words and inserted slogans move fewer bits.
//!
//! The IDF table is the one bundled with `jieba-rs` (built from the jieba project's corpus
//! statistics; words it does not know get its median IDF), and the segmentation is jieba's
//! dictionary mode without HMM, so the same text always gives the same words. jieba-rs keeps
//! that table inside its private `TfIdf` state and only offers it through keyword extraction,
//! which re-segments with part-of-speech tags and allocates a string per keyword (1.8-2x the
//! cost of a bare cut). So the table is read once per process into [`WordIdf`], a map from the
//! 64-bit hash of a word to its IDF, and [`word_features`] does one bare `Jieba::cut`, hashes
//! each kept word once (that hash is also its SimHash feature) and weighs it by a lookup.
//! Both the dictionary and the IDF table are loaded on first use and shared read-only by all
//! threads.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use jieba_rs::{DEFAULT_STOP_WORDS, Jieba, TfIdf};
use xxhash_rust::xxh3::xxh3_64;

use crate::simhash::sorted_ngram_hashes;

/// Loading jieba's dictionary takes about 100 ms, far more than segmenting a chapter, so one
/// instance serves the whole process.
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// jieba's bundled IDF table, loaded once for the same reason as [`JIEBA`].
static IDF: LazyLock<WordIdf> = LazyLock::new(WordIdf::jieba);

/// IDFs become integer SimHash weights in thousandths: SimHash only compares column sums, so
/// any common scale gives the same signature, and jieba's IDFs (about 2 to 14) keep four
/// significant digits.
const IDF_SCALE: f64 = 1000.0;

/// Words shorter than this many characters carry no weight: single characters are mostly
/// particles ("的", "了") and would drown the signal. jieba's keyword extraction uses the same
/// bound.
const MIN_WORD_CHARS: usize = 2;

/// The shared jieba segmenter, for callers that need other jieba modes on the same dictionary
/// without loading it a second time.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

/// jieba words of `text` (dictionary mode, no HMM), borrowed from `text`.
///
/// This is the segmentation the word features use, with no work per word beyond jieba's own,
/// so benchmarks can hold it against a bare `Jieba::cut`.
pub fn jieba_words(text: &str) -> Vec<&str> {
    JIEBA
        .cut(text, false)
        .into_iter()
        .map(|token| token.word)
        .collect()
}

/// Keys of [`WordIdf`] are already xxh3 hashes, so hashing them again would only cost time.
#[derive(Default)]
struct PrehashedKey(u64);

impl Hasher for PrehashedKey {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used for `u64` keys; fold anything else in so the hasher stays
        // correct if it ever sees other input.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Inverse document frequencies of words, keyed by the xxh3-64 hash of the word's UTF-8 bytes
/// (the same hash the word has as a SimHash feature), with a fallback for unknown words.
#[derive(Debug, Clone)]
pub struct WordIdf {
    idf: HashMap<u64, f32, BuildHasherDefault<PrehashedKey>>,
    unknown: f32,
    stop_words: HashMap<u64, (), BuildHasherDefault<PrehashedKey>>,
}

impl WordIdf {
    /// jieba's bundled IDF table and stop words, with its median IDF for unknown words.
    ///
    /// jieba-rs exposes the table only through `TfIdf`'s `Debug` output, which prints each
    /// entry as `"word": idf`; it is read from there once. A test pins the size and sample
    /// values, so a jieba-rs upgrade that changes the format fails loudly instead of silently
    /// weighting every word alike.
    pub fn jieba() -> WordIdf {
        let debug = format!("{:?}", TfIdf::default());
        let (idf, unknown) = parse_tfidf_debug(&debug);
        let stop_words = DEFAULT_STOP_WORDS
            .iter()
            .map(|word| (xxh3_64(word.as_bytes()), ()))
            .collect();
        WordIdf {
            idf,
            unknown,
            stop_words,
        }
    }

    /// Number of words with a known IDF.
    pub fn len(&self) -> usize {
        self.idf.len()
    }

    /// Whether no word has a known IDF.
    pub fn is_empty(&self) -> bool {
        self.idf.is_empty()
    }

    /// IDF of the word whose xxh3-64 hash is `word_hash`.
    pub fn idf(&self, word_hash: u64) -> f32 {
        self.idf.get(&word_hash).copied().unwrap_or(self.unknown)
    }

    /// IDF of `word`.
    pub fn idf_of(&self, word: &str) -> f32 {
        self.idf(xxh3_64(word.as_bytes()))
    }

    fn is_stop_word(&self, word_hash: u64) -> bool {
        self.stop_words.contains_key(&word_hash)
    }
}

/// Reads `"word": idf` pairs and the `median_idf: value` field out of `TfIdf`'s `Debug` text.
fn parse_tfidf_debug(debug: &str) -> (HashMap<u64, f32, BuildHasherDefault<PrehashedKey>>, f32) {
    let unknown = debug
        .split("median_idf: ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ', '}']).next())
        .and_then(|value| value.parse::<f32>().ok())
        .unwrap_or(1.0);
    let mut idf = HashMap::with_capacity_and_hasher(300_000, BuildHasherDefault::default());
    let Some(start) = debug.find("idf_dict: {") else {
        return (idf, unknown);
    };
    let mut rest = &debug[start + "idf_dict: {".len()..];
    let mut word = String::new();
    loop {
        rest = rest.trim_start_matches([',', ' ']);
        let Some(body) = rest.strip_prefix('"') else {
            break;
        };
        // The word, with `Debug`'s escapes undone (jieba's words contain none in practice).
        word.clear();
        let mut chars = body.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    end = Some(i + 1);
                    break;
                }
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        word.push(escaped);
                    }
                }
                _ => word.push(c),
            }
        }
        let Some(end) = end else { break };
        let after = body[end..].trim_start_matches([':', ' ']);
        let value_len = after.find([',', '}']).unwrap_or(after.len());
        if let Ok(value) = after[..value_len].trim().parse::<f32>() {
            idf.insert(xxh3_64(word.as_bytes()), value);
        }
        rest = &after[value_len..];
        if rest.starts_with('}') {
            break;
        }
    }
    (idf, unknown)
}

/// Character `n`-grams of `chars` weighted by their count in the text (there is no corpus IDF
/// for n-grams). A text shorter than `n` is one feature, as in
/// [`crate::simhash::simhash_ngrams`]; empty input has none.
pub fn char_ngram_features(chars: &[char], n: usize) -> Vec<(u64, i64)> {
    let hashes = sorted_ngram_hashes(chars, n);
    let mut features: Vec<(u64, i64)> = Vec::with_capacity(hashes.len());
    for hash in hashes {
        match features.last_mut() {
            Some((last, count)) if *last == hash => *count += 1,
            _ => features.push((hash, 1)),
        }
    }
    features
}

/// One word's IDF as an integer SimHash weight, in thousandths.
fn idf_weight(idf: &WordIdf, word_hash: u64) -> i64 {
    (f64::from(idf.idf(word_hash)) * IDF_SCALE).round().max(1.0) as i64
}

/// Hashes of the words of `text` long enough to carry weight, in order, with repeats.
fn long_word_hashes(text: &str) -> Vec<u64> {
    JIEBA
        .cut(text, false)
        .iter()
        .filter(|token| token.end - token.start >= MIN_WORD_CHARS)
        .map(|token| xxh3_64(token.word.as_bytes()))
        .collect()
}

/// Each kept occurrence of a word in `text`, in order, weighted by its IDF: the hash of a word
/// occurring `tf` times appears `tf` times, so the column sums equal those of
/// [`word_features`]. Like jieba's keyword extraction, words shorter than two characters and
/// jieba's stop words are left out.
pub fn word_occurrences(text: &str) -> Vec<(u64, i64)> {
    let idf = &*IDF;
    long_word_hashes(text)
        .into_iter()
        .filter(|&hash| !idf.is_stop_word(hash))
        .map(|hash| (hash, idf_weight(idf, hash)))
        .collect()
}

/// jieba words of `text` weighted by TF-IDF (term frequency × jieba's IDF in thousandths), one
/// feature per distinct word in order of first occurrence, with the same words as
/// [`word_occurrences`].
///
/// Words are counted before the IDF table is consulted: a chapter repeats most of its words,
/// and the table (a few MB) is far outside the cache, so one lookup per distinct word instead
/// of one per occurrence is most of the difference to a bare jieba cut.
pub fn word_features(text: &str) -> Vec<(u64, i64)> {
    let tokens = JIEBA.cut(text, false);
    let mut position: HashMap<u64, usize, BuildHasherDefault<PrehashedKey>> =
        HashMap::with_capacity_and_hasher(256, BuildHasherDefault::default());
    let mut counts: Vec<(u64, i64)> = Vec::with_capacity(256);
    for token in tokens
        .iter()
        .filter(|token| token.end - token.start >= MIN_WORD_CHARS)
    {
        let hash = xxh3_64(token.word.as_bytes());
        let next = counts.len();
        let index = *position.entry(hash).or_insert(next);
        if index == next {
            counts.push((hash, 1));
        } else {
            counts[index].1 += 1;
        }
    }
    let idf = &*IDF;
    counts.retain(|&(hash, _)| !idf.is_stop_word(hash));
    for (hash, weight) in &mut counts {
        *weight *= idf_weight(idf, *hash);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize;
    use crate::simhash::tests::STORY;
    use crate::simhash::{hash_chars, simhash_ngrams, simhash_weighted};

    #[test]
    fn jieba_words_cover_the_text_in_order() {
        let text = "我们中出了一个叛徒";
        let words = jieba_words(text);
        assert_eq!(words.concat(), text);
        assert!(words.contains(&"我们"), "{words:?}");
    }

    #[test]
    fn count_weighted_ngrams_equal_plain_ngram_simhash_without_repeats() {
        let chars: Vec<char> = "夜色渐深雨水顺着屋檐滴落下来".chars().collect();
        let features = char_ngram_features(&chars, 3);
        assert!(features.iter().all(|&(_, w)| w == 1));
        assert_eq!(simhash_weighted(&features, 64), simhash_ngrams(&chars, 3));
    }

    #[test]
    fn repeated_ngrams_are_counted() {
        let chars: Vec<char> = "哈哈哈哈哈".chars().collect();
        assert_eq!(
            char_ngram_features(&chars, 2),
            vec![(hash_chars(&chars[..2]), 4)]
        );
    }

    #[test]
    fn jieba_idf_table_is_read_whole() {
        let idf = &*IDF;
        // jieba-rs 0.11 ships 270,131 IDF lines (a few words repeat).
        assert!(idf.len() > 260_000, "only {} IDF entries", idf.len());
        assert!((idf.idf_of("劳动防护") - 13.900_678).abs() < 1e-4);
        assert!(idf.idf_of("我们") < idf.idf_of("蓑衣"));
        // Unknown words get the median, which lies between common and rare words.
        let unknown = idf.idf_of("\u{e000}\u{e001}");
        assert!(unknown > idf.idf_of("我们") && unknown < 13.9, "{unknown}");
    }

    #[test]
    fn debug_parser_undoes_escapes() {
        let (idf, median) = parse_tfidf_debug(
            r#"TfIdf { idf_dict: {"a\"b": 2.5, "词": 3}, median_idf: 1.25, config: x }"#,
        );
        assert_eq!(idf.len(), 2);
        assert_eq!(idf.get(&xxh3_64("a\"b".as_bytes())), Some(&2.5));
        assert_eq!(idf.get(&xxh3_64("词".as_bytes())), Some(&3.0));
        assert_eq!(median, 1.25);
    }

    #[test]
    fn counted_features_and_occurrences_give_the_same_signature() {
        let text: String = normalize(STORY).chars.iter().collect();
        let repeated = format!("{text}{text}少年少年");
        for text in [text.as_str(), repeated.as_str()] {
            let features = word_features(text);
            let occurrences = word_occurrences(text);
            assert!(features.len() < occurrences.len());
            assert_eq!(
                simhash_weighted(&features, 64),
                simhash_weighted(&occurrences, 64)
            );
        }
    }

    #[test]
    fn stop_words_and_single_characters_have_no_feature() {
        let features = word_features("the 的 我们 蓑衣");
        assert_eq!(features.len(), 2, "{features:?}");
        assert!(!features.iter().any(|f| f.0 == xxh3_64(b"the")));
    }

    #[test]
    fn rare_words_weigh_more_than_common_ones() {
        let features = word_features("蓑衣和我们");
        let weight = |w: &str| {
            features
                .iter()
                .find(|f| f.0 == xxh3_64(w.as_bytes()))
                .map(|f| f.1)
                .unwrap_or_else(|| panic!("{w} missing from {features:?}"))
        };
        assert!(weight("蓑衣") > weight("我们"));
        assert_eq!(
            features[0].0,
            xxh3_64("蓑衣".as_bytes()),
            "first occurrence first"
        );
    }
}
