//! Longest-sentence signatures: a handful of hashes that survive reordering, splitting and
//! inserted advertisements.
//!
//! Long sentences are nearly unique to a text and pirates rarely rewrite them; a page that
//! repeats two of a chapter's five longest sentences verbatim (after normalization) almost
//! certainly copied it, wherever those sentences stand on the page.
//!
//! Sentence boundaries are punctuation, which normalization removes, so the real entry point is
//! [`longest_sentences`] on the **original** text
//! ([`SentenceAlgorithm::fingerprint_original`]).

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::normalize::normalize;
use crate::simhash::hash_chars;

/// Output version of [`SentenceAlgorithm`]; bump whenever the same input would give other
/// hashes (boundaries, minimum length, ordering, fallback).
pub const VERSION: u32 = 1;

/// Sentences shorter than this many canonical characters are ignored: short ones ("他笑了",
/// chapter headings, "未完待续") are shared by unrelated texts.
pub const MIN_SENTENCE_CHARS: usize = 8;

/// Length, in canonical characters, of the pseudo-sentences used when only canonical characters
/// are available (see [`SentenceAlgorithm`]).
pub const FALLBACK_CHUNK_CHARS: usize = 16;

/// Characters that end a sentence. The ASCII full stop is not one: it is far more often part of
/// a number ("4.3亿"), an abbreviation or a web address than a sentence end in Chinese text.
fn is_sentence_end(c: char) -> bool {
    matches!(
        c,
        '。' | '！' | '？' | '!' | '?' | '；' | ';' | '…' | '\n' | '\r' | '\u{2029}'
    )
}

/// Picks the `k` longest of `(canonical length, hash)` candidates: longest first, equal lengths
/// by ascending hash. Hashes decide ties, not positions, so the choice does not change when a
/// pirate reorders sentences or inserts some of the same length. Repeated sentences count once.
fn pick_longest(mut candidates: Vec<(usize, u64)>, k: usize) -> Vec<u64> {
    candidates.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    candidates.dedup_by_key(|c| c.1);
    candidates
        .into_iter()
        .take(k)
        .map(|(_, hash)| hash)
        .collect()
}

/// Hashes of the `k` longest sentences of `original_text`, longest first.
///
/// The text is split after Chinese and Western sentence-ending punctuation (`。！？!?；;…`) and
/// at line breaks; each sentence is normalized on its own (so Traditional characters, full-width
/// letters and changed punctuation inside it do not matter), sentences shorter than
/// [`MIN_SENTENCE_CHARS`] canonical characters are dropped, and the canonical characters of each
/// remaining sentence are hashed with [`crate::simhash::hash_chars`].
pub fn longest_sentences(original_text: &str, k: usize) -> Vec<u64> {
    let candidates = original_text
        .split(is_sentence_end)
        .filter_map(|sentence| {
            let chars = normalize(sentence).chars;
            (chars.len() >= MIN_SENTENCE_CHARS).then(|| (chars.len(), hash_chars(&chars)))
        })
        .collect();
    pick_longest(candidates, k)
}

/// Longest-sentence signature: `k` sentence hashes, compared by how many they share.
///
/// `similarity` is shared hashes / `k` and `distance` is `k −` shared; when both texts have
/// fewer than `k` sentences, the larger count replaces `k`, so identical short texts still
/// score 1. `is_match` holds when at least `min_shared` hashes are shared (at least 1).
///
/// [`Algorithm::fingerprint`] receives canonical characters, in which sentence boundaries are
/// gone. Rather than guess boundaries, it cuts the canonical text into fixed chunks of
/// [`FALLBACK_CHUNK_CHARS`] characters and keeps the `k` with the smallest hashes (all chunks
/// are equally long, so the hash order decides). Such chunks move with every inserted or deleted
/// character, so this fallback only recognizes copies that keep long runs aligned; use
/// [`SentenceAlgorithm::fingerprint_original`] whenever the original text is at hand, and never
/// compare a fallback fingerprint with one made from the original text: both are
/// [`Fingerprint::Sentences`], but their hashes have nothing in common.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentenceAlgorithm {
    /// Number of sentences kept.
    pub k: usize,
    /// Shared sentences from which two texts match.
    pub min_shared: usize,
}

impl Default for SentenceAlgorithm {
    /// Five sentences, two of them shared: one long sentence may be a quotation or a common
    /// phrase, two are rarely a coincidence.
    fn default() -> Self {
        SentenceAlgorithm {
            k: 5,
            min_shared: 2,
        }
    }
}

impl SentenceAlgorithm {
    /// Fingerprints the original text, with its punctuation: the real entry point.
    pub fn fingerprint_original(&self, text: &str) -> Fingerprint {
        Fingerprint::Sentences(longest_sentences(text, self.k))
    }
}

impl Algorithm for SentenceAlgorithm {
    fn name(&self) -> &'static str {
        "sentences"
    }

    fn version(&self) -> u32 {
        VERSION
    }

    fn fingerprint_text(&self, text: &str) -> Fingerprint {
        self.fingerprint_original(text)
    }

    fn fingerprint(&self, chars: &[char]) -> Fingerprint {
        let candidates = chars
            .chunks(FALLBACK_CHUNK_CHARS)
            .filter(|chunk| chunk.len() >= MIN_SENTENCE_CHARS)
            .map(|chunk| (chunk.len(), hash_chars(chunk)))
            .collect();
        Fingerprint::Sentences(pick_longest(candidates, self.k))
    }

    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError> {
        let (Fingerprint::Sentences(a), Fingerprint::Sentences(b)) = (a, b) else {
            return Err(AlgorithmError::Incompatible(
                "sentences compares two sentence signatures".into(),
            ));
        };
        let mut a = a.clone();
        let mut b = b.clone();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        let shared = crate::shingles::intersection_size(&a, &b);
        // Normally both sides have k hashes and this is k; a short text with fewer sentences
        // is judged on what it has, so a text still has similarity 1 with itself.
        let slots = a.len().max(b.len()).min(self.k).max(1);
        Ok(Comparison {
            similarity: (shared as f64 / slots as f64).min(1.0),
            distance: Some(slots.saturating_sub(shared) as f64),
            is_match: shared >= self.min_shared.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中！\
        他手里提着一盏昏黄的灯笼；灯笼的光在风里摇晃。\n那人的眼睛像是藏着整片星空，沉默地望着这座破旧的小院？\
        远处传来几声犬吠…村子里的灯火一盏接一盏地熄灭了。他笑了。";

    #[test]
    fn keeps_the_longest_sentences_longest_first_and_drops_short_ones() {
        let all = longest_sentences(CHAPTER, 100);
        // 他笑了 (3 characters) is too short; the other seven sentences remain.
        assert_eq!(all.len(), 7);
        let top = longest_sentences(CHAPTER, 2);
        assert_eq!(top, all[..2]);
        let longest: Vec<char> = "那人的眼睛像是藏着整片星空沉默地望着这座破旧的小院"
            .chars()
            .collect();
        assert_eq!(top[0], hash_chars(&longest));
    }

    #[test]
    fn traditional_characters_and_changed_punctuation_give_the_same_signature() {
        let pirate = "夜色漸深,雨水順著屋簷滴落下來.少年推開木門,看見一個披著蓑衣的陌生人站在院中!\
            他手裡提著一盞昏黃的燈籠;燈籠的光在風裡搖晃\r\n那人的眼睛像是藏著整片星空，沉默地望著這座破舊的小院?\
            遠處傳來幾聲犬吠……村子裡的燈火一盞接一盞地熄滅了。";
        let algo = SentenceAlgorithm::default();
        let c = algo
            .compare(
                &algo.fingerprint_original(CHAPTER),
                &algo.fingerprint_original(pirate),
            )
            .unwrap();
        assert!(c.is_match, "{c:?}");
        assert!(c.similarity >= 0.6, "{c:?}");
    }

    #[test]
    fn reordered_sentences_with_an_inserted_ad_still_match() {
        let mut parts: Vec<&str> = CHAPTER.split_inclusive('。').collect();
        parts.reverse();
        let pirate = format!("最新章节请访问本站，免费阅读无弹窗广告。{}", parts.concat());
        let algo = SentenceAlgorithm::default();
        let c = algo
            .compare(
                &algo.fingerprint_original(CHAPTER),
                &algo.fingerprint_original(&pirate),
            )
            .unwrap();
        assert!(c.is_match, "{c:?}");
    }

    #[test]
    fn unrelated_texts_share_no_sentence() {
        let other = "今天的红烧肉要先焯水再用冰糖炒出糖色。然后加入生抽老抽和八角慢炖一个小时。";
        let algo = SentenceAlgorithm::default();
        let c = algo
            .compare(
                &algo.fingerprint_original(CHAPTER),
                &algo.fingerprint_original(other),
            )
            .unwrap();
        assert_eq!(c.similarity, 0.0);
        assert!(!c.is_match);
    }

    #[test]
    fn ties_are_broken_by_hash_so_order_does_not_matter() {
        let a = "一二三四五六七八。甲乙丙丁戊己庚辛。";
        let b = "甲乙丙丁戊己庚辛。一二三四五六七八。";
        assert_eq!(longest_sentences(a, 1), longest_sentences(b, 1));
    }

    #[test]
    fn similarity_counts_shared_sentences_out_of_k() {
        let algo = SentenceAlgorithm::default();
        let a = Fingerprint::Sentences(vec![1, 2, 3, 4, 5]);
        let b = Fingerprint::Sentences(vec![5, 4, 9, 8, 7]);
        let c = algo.compare(&a, &b).unwrap();
        assert!((c.similarity - 0.4).abs() < 1e-12);
        assert_eq!(c.distance, Some(3.0));
        assert!(c.is_match);
        let short = Fingerprint::Sentences(vec![1, 2]);
        assert_eq!(algo.compare(&short, &short).unwrap().similarity, 1.0);
    }

    #[test]
    fn the_canonical_fallback_matches_an_identical_text() {
        let chars = normalize(CHAPTER).chars;
        let algo = SentenceAlgorithm::default();
        let fp = algo.fingerprint(&chars);
        let Fingerprint::Sentences(hashes) = &fp else {
            panic!()
        };
        assert_eq!(hashes.len(), 5);
        assert!(algo.compare(&fp, &fp).unwrap().is_match);
    }
}
