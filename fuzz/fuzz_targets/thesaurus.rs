//! Arbitrary text → the synonym thesaurus:
//!
//! * the built-in thesaurus cuts canonical text into tokens that tile it (in order, no gaps),
//!   one to four characters each; a token longer than one character is a known word of Han
//!   characters, a known token has groups and an unknown one none, and every token has the
//!   same sense as itself;
//! * the same text read as a thesaurus file (`CODE word word …` per line) gives one group per
//!   line with at least two words of at most four characters, with its code, and every such
//!   word belongs to its line's group.
#![no_main]

use std::collections::HashSet;

use copytrace_fingerprint::normalize;
use copytrace_fingerprint::thesaurus::{Thesaurus, is_han};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);

    let builtin = Thesaurus::builtin();
    let chars = normalize(&text).chars;
    let tokens = builtin.tokens(&chars);
    let mut at = 0;
    for token in &tokens {
        assert_eq!(token.start as usize, at, "tokens do not tile the text");
        assert!(
            (1..=4).contains(&token.len),
            "token of {} characters",
            token.len
        );
        let word = &chars[token.start as usize..token.end()];
        if token.len > 1 {
            assert!(token.is_known(), "unknown word of {} characters", token.len);
            assert!(word.iter().all(|&c| is_han(c)), "word {word:?} not all Han");
        }
        assert_eq!(token.is_known(), !builtin.groups(token).is_empty());
        assert!(builtin.same_sense(&chars, token, &chars, token));
        at = token.end();
    }
    assert_eq!(at, chars.len(), "the end of the text is in no token");

    let parsed = Thesaurus::parse(&text);
    let mut group = 0u32;
    let mut words = HashSet::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(code) = fields.next() else { continue };
        let kept: Vec<&str> = fields.filter(|w| w.chars().count() <= 4).collect();
        if kept.len() < 2 {
            continue;
        }
        assert_eq!(parsed.code(group), code, "code of group {group}");
        for word in kept {
            assert!(
                parsed.groups_of_word(word).contains(&group),
                "{word:?} is not in the group of its line {line:?}"
            );
            words.insert(word);
        }
        group += 1;
    }
    assert_eq!(parsed.group_count(), group as usize, "one group per line");
    assert_eq!(parsed.len(), words.len(), "one entry per distinct word");
});
