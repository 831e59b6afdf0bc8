//! Arbitrary text → the weighted features of the whole-text SimHash:
//!
//! * `jieba_words` cover the text in order (their concatenation is the text);
//! * `word_features` is `word_occurrences` summed per word, in order of first occurrence, each
//!   weight at least 1 (so both give the same SimHash column sums, as documented);
//! * `char_ngram_features` are distinct, sorted by hash, and count every n-gram once (a text
//!   shorter than `n` is one feature).
#![no_main]

use copytrace_fingerprint::normalize;
use copytrace_fingerprint::weighted_features::{
    char_ngram_features, jieba_words, word_features, word_occurrences,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let n = usize::from(head.first().copied().unwrap_or(0) % 9);
    let text = String::from_utf8_lossy(rest);

    let words = jieba_words(&text);
    assert_eq!(words.concat(), text, "jieba words do not cover the text");

    let features = word_features(&text);
    let mut summed: Vec<(u64, i64)> = Vec::new();
    for (hash, weight) in word_occurrences(&text) {
        assert!(weight >= 1, "weight {weight} below 1");
        match summed.iter_mut().find(|(h, _)| *h == hash) {
            Some((_, total)) => *total += weight,
            None => summed.push((hash, weight)),
        }
    }
    assert_eq!(
        features, summed,
        "word_features differs from the summed word_occurrences"
    );

    let chars = normalize(&text).chars;
    let grams = char_ngram_features(&chars, n);
    assert!(
        grams.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "n-gram features not distinct and sorted"
    );
    assert!(grams.iter().all(|&(_, count)| count >= 1));
    let total: i64 = grams.iter().map(|&(_, count)| count).sum();
    let expected = match chars.len() {
        0 => 0,
        len if len < n.max(1) => 1,
        len => len + 1 - n.max(1),
    };
    assert_eq!(total as usize, expected, "n-gram count with n = {n}");
});
