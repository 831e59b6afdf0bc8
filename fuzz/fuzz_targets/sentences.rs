//! Arbitrary text → longest-sentence signatures:
//!
//! * at most `k` distinct hashes, and the `k − 1` longest are a prefix of the `k` longest;
//! * the signature does not change when the sentences are reordered (the documented reason
//!   ties are broken by hash, not position);
//! * the fallback over canonical characters keeps at most `k` chunks;
//! * a signature compared with itself is a match (when not empty) with similarity 1.
#![no_main]

use copytrace_fingerprint::algorithm::{Algorithm, Fingerprint};
use copytrace_fingerprint::{SentenceAlgorithm, longest_sentences, normalize};
use libfuzzer_sys::fuzz_target;

/// The sentence ends of `sentences.rs` (its doc comment lists them; the function is private).
fn is_sentence_end(c: char) -> bool {
    matches!(
        c,
        '。' | '！' | '？' | '!' | '?' | '；' | ';' | '…' | '\n' | '\r' | '\u{2029}'
    )
}

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let k = usize::from(head.first().copied().unwrap_or(0) % 12);
    let text = String::from_utf8_lossy(rest);

    let top = longest_sentences(&text, k);
    assert!(top.len() <= k, "{} hashes for k = {k}", top.len());
    let mut distinct = top.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), top.len(), "repeated hashes");
    if k > 0 {
        assert!(
            top.starts_with(&longest_sentences(&text, k - 1)),
            "the k - 1 longest are not a prefix of the k longest"
        );
    }

    let mut sentences: Vec<&str> = text.split(is_sentence_end).collect();
    sentences.reverse();
    let reordered = sentences.join("\n");
    assert_eq!(
        longest_sentences(&reordered, k),
        top,
        "reordering the sentences changed the signature"
    );

    let algorithm = SentenceAlgorithm { k, min_shared: 1 };
    let fallback = algorithm.fingerprint(&normalize(&text).chars);
    let Fingerprint::Sentences(chunks) = &fallback else {
        panic!("not a sentence signature: {fallback:?}");
    };
    assert!(chunks.len() <= k);

    let original = algorithm.fingerprint_original(&text);
    assert_eq!(original, Fingerprint::Sentences(top.clone()));
    let same = algorithm.compare(&original, &original).expect("same kind");
    assert_eq!(same.is_match, !top.is_empty(), "{same:?}");
    if !top.is_empty() {
        assert_eq!(same.similarity, 1.0, "{same:?}");
    }
    let cross = algorithm.compare(&original, &fallback).expect("same kind");
    assert!((0.0..=1.0).contains(&cross.similarity), "{cross:?}");
});
