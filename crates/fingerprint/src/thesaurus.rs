//! Synonym classes of Chinese words, so that a laundered copy (洗稿, 伪原创: words replaced by
//! synonyms) can be read for what it says rather than for its characters.
//!
//! The classes are the synonym groups of the Cilin extended edition (《同义词词林》扩展版,
//! HIT-SCIR), compiled in (`data/cilin_synonyms.txt`, see `data/README.md` for its origin and
//! how it was reduced). A word may belong to several groups (说 is "explain", "speak" and
//! "mediate"): two words are interchangeable when they share *any* group, so a token carries
//! the set of its groups, not one canonical id. Measured on the quality benchmark's laundered
//! copies, a single canonical group per word agrees on only a third of the substitutions a
//! laundering tool makes, while a shared group covers four in five.
//!
//! Text is cut into words by forward maximum matching over the thesaurus's words (at most
//! four characters): laundering replaces exactly the words a thesaurus knows, so these are the
//! words worth finding, and a character the thesaurus does not know stays a token of its own
//! (names, places, figures), compared by identity.

use foldhash::{HashMap, HashMapExt};
use std::sync::OnceLock;

/// The compiled-in synonym groups: one per line, `CODE word word …`.
const CILIN: &str = include_str!("../data/cilin_synonyms.txt");

/// Longest word looked up, in characters.
const MAX_WORD_CHARS: usize = 4;

/// Words and the synonym groups each belongs to.
#[derive(Debug, Clone, Default)]
pub struct Thesaurus {
    /// Word ([`word_key`] of its characters) → index into `entries`. Keyed by the packed
    /// characters, not by the string, because tokenizing looks up every 1- to 4-character
    /// stretch of every text: building and hashing a string for each was a tenth of the
    /// matching time.
    words: HashMap<u128, u32>,
    /// The first two characters of the words of two or more ([`pair_key`]) → the longest such
    /// word's length. Most positions of a text start no such word, and one lookup here spares
    /// them the three lookups of longer words that would fail.
    starts: HashMap<u64, u8>,
    /// Entry of each one-character word, by [`single_index`] (`u32::MAX`: not a word): read
    /// at nearly every position of a text, so an array rather than a hash.
    singles: Vec<u32>,
    /// Per word: the range of its groups in `groups`.
    entries: Vec<(u32, u32)>,
    /// Group ids of every word, concatenated.
    groups: Vec<u32>,
    /// Group codes, by id (`Aa01A01`).
    codes: Vec<Box<str>>,
}

/// A token of a text read through the thesaurus: `len` characters from `start`, and, when the
/// thesaurus knows the word, its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenseToken {
    /// First character, as an index into the text's characters.
    pub start: u32,
    /// Length in characters (1 to 4).
    pub len: u8,
    /// Entry in the thesaurus, `u32::MAX` when the word is not in it.
    entry: u32,
}

impl SenseToken {
    /// Whether the thesaurus knows the token's word.
    pub fn is_known(&self) -> bool {
        self.entry != u32::MAX
    }

    /// End of the token (exclusive), as a character index.
    pub fn end(&self) -> usize {
        self.start as usize + self.len as usize
    }
}

impl Thesaurus {
    /// The Cilin groups compiled into the crate, parsed once per process.
    pub fn builtin() -> &'static Thesaurus {
        static BUILTIN: OnceLock<Thesaurus> = OnceLock::new();
        BUILTIN.get_or_init(|| Thesaurus::parse(CILIN))
    }

    /// Reads groups written one per line as `CODE word word …`. Lines with fewer than two
    /// words are skipped (a group of one says nothing about synonymy); words longer than four
    /// characters are kept out, since tokenization never looks that far.
    pub fn parse(text: &str) -> Thesaurus {
        let mut per_word: HashMap<Box<str>, Vec<u32>> = HashMap::new();
        let mut order: Vec<Box<str>> = Vec::new();
        let mut codes = Vec::new();
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let Some(code) = fields.next() else { continue };
            let words: Vec<&str> = fields
                .filter(|w| w.chars().count() <= MAX_WORD_CHARS)
                .collect();
            if words.len() < 2 {
                continue;
            }
            let id = codes.len() as u32;
            codes.push(code.into());
            for word in words {
                let groups = per_word.entry(word.into()).or_insert_with(|| {
                    order.push(word.into());
                    Vec::new()
                });
                if groups.last() != Some(&id) {
                    groups.push(id);
                }
            }
        }
        let mut thesaurus = Thesaurus {
            codes,
            ..Thesaurus::default()
        };
        for word in order {
            let groups = &per_word[&word];
            let start = thesaurus.groups.len() as u32;
            thesaurus.groups.extend(groups);
            let index = thesaurus.entries.len() as u32;
            thesaurus
                .entries
                .push((start, thesaurus.groups.len() as u32));
            let chars: Vec<char> = word.chars().collect();
            thesaurus.words.insert(word_key(&chars), index);
            if chars.len() >= 2 {
                let longest = thesaurus
                    .starts
                    .entry(pair_key(chars[0], chars[1]))
                    .or_insert(0);
                *longest = (*longest).max(chars.len() as u8);
            } else if let Some(slot) = single_index(chars[0]) {
                if thesaurus.singles.is_empty() {
                    thesaurus.singles = vec![u32::MAX; SINGLES];
                }
                thesaurus.singles[slot] = index;
            }
        }
        thesaurus
    }

    /// Number of words known.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no word is known.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of synonym groups.
    pub fn group_count(&self) -> usize {
        self.codes.len()
    }

    /// The Cilin code of a group (`Aa01A01`), for explaining a substitution.
    pub fn code(&self, group: u32) -> &str {
        self.codes.get(group as usize).map_or("", |c| c)
    }

    /// The groups a word belongs to (empty when unknown).
    pub fn groups_of_word(&self, word: &str) -> &[u32] {
        let chars: Vec<char> = word.chars().collect();
        if chars.is_empty() || chars.len() > MAX_WORD_CHARS {
            return &[];
        }
        self.words
            .get(&word_key(&chars))
            .map_or(&[], |&entry| self.entry_groups(entry))
    }

    /// The groups of a token's word (empty when the thesaurus does not know it).
    pub fn groups(&self, token: &SenseToken) -> &[u32] {
        if token.is_known() {
            self.entry_groups(token.entry)
        } else {
            &[]
        }
    }

    fn entry_groups(&self, entry: u32) -> &[u32] {
        let (start, end) = self.entries[entry as usize];
        &self.groups[start as usize..end as usize]
    }

    /// Whether two tokens of `a` and `b` say the same: the same characters, or words sharing a
    /// synonym group.
    pub fn same_sense(&self, a: &[char], ta: &SenseToken, b: &[char], tb: &SenseToken) -> bool {
        if a[ta.start as usize..ta.end()] == b[tb.start as usize..tb.end()] {
            return true;
        }
        let (ga, gb) = (self.groups(ta), self.groups(tb));
        // Both lists are short (a handful of groups) and in file order: a nested scan is
        // faster than any set.
        ga.iter().any(|g| gb.contains(g))
    }

    /// Cuts `chars` (canonical characters, see [`crate::normalize()`]) into tokens by forward
    /// maximum matching: at each position the longest known word of two to four Han
    /// characters, else the single character (known or not).
    pub fn tokens(&self, chars: &[char]) -> Vec<SenseToken> {
        let mut tokens = Vec::with_capacity(chars.len() / 2 + 1);
        let mut i = 0;
        while i < chars.len() {
            let mut found = None;
            if is_han(chars[i]) {
                let longest = (i..chars.len().min(i + MAX_WORD_CHARS))
                    .take_while(|&j| is_han(chars[j]))
                    .count();
                let longest = match longest >= 2 {
                    true => self
                        .starts
                        .get(&pair_key(chars[i], chars[i + 1]))
                        .map_or(1, |&n| longest.min(n as usize)),
                    false => 1,
                };
                for len in (2..=longest).rev() {
                    if let Some(&entry) = self.words.get(&word_key(&chars[i..i + len])) {
                        found = Some((len, entry));
                        break;
                    }
                }
                if found.is_none() {
                    found = single_index(chars[i])
                        .and_then(|slot| self.singles.get(slot))
                        .filter(|&&entry| entry != u32::MAX)
                        .map(|&entry| (1, entry));
                }
            }
            let (len, entry) = found.unwrap_or((1, u32::MAX));
            tokens.push(SenseToken {
                start: i as u32,
                len: len as u8,
                entry,
            });
            i += len;
        }
        tokens
    }
}

/// A word of at most [`MAX_WORD_CHARS`] characters packed into one integer, 21 bits a
/// character below a leading 1 bit, so that words of different lengths never share a key
/// (without it, `"\0L"` and `"L"` would: a thesaurus file may hold any character).
fn word_key(chars: &[char]) -> u128 {
    debug_assert!(chars.len() <= MAX_WORD_CHARS);
    chars
        .iter()
        .fold(1u128, |key, &c| (key << 21) | u128::from(u32::from(c)))
}

/// The first two characters of a word, packed as [`word_key`] packs them.
fn pair_key(a: char, b: char) -> u64 {
    (u64::from(u32::from(a)) << 21) | u64::from(u32::from(b))
}

/// Slots of [`Thesaurus::singles`]: one per character [`is_han`] accepts.
const SINGLES: usize = (0x9fff - 0x4e00 + 1) + (0x4dbf - 0x3400 + 1);

/// The slot of a one-character word in [`Thesaurus::singles`]; `None` for a character that is
/// not Han (such a word, if the thesaurus has one, is never looked up: tokens of other
/// characters are never words).
fn single_index(c: char) -> Option<usize> {
    match c {
        '\u{4e00}'..='\u{9fff}' => Some(c as usize - 0x4e00),
        '\u{3400}'..='\u{4dbf}' => Some((0x9fff - 0x4e00 + 1) + c as usize - 0x3400),
        _ => None,
    }
}

/// CJK unified ideographs (and extension A): the characters words are made of.
pub fn is_han(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(thesaurus: &Thesaurus, text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        thesaurus
            .tokens(&chars)
            .iter()
            .map(|t| chars[t.start as usize..t.end()].iter().collect())
            .collect()
    }

    /// The tokenizer skips lookups that cannot succeed (`starts`, `singles`); it must cut
    /// every text as the plain forward maximum matching does, trying each length in turn.
    #[test]
    fn tokens_are_those_of_plain_forward_maximum_matching() {
        let thesaurus = Thesaurus::builtin();
        let plain = |chars: &[char]| {
            let mut tokens = Vec::new();
            let mut i = 0;
            while i < chars.len() {
                let longest = (i..chars.len().min(i + MAX_WORD_CHARS))
                    .take_while(|&j| is_han(chars[j]))
                    .count();
                let found = (1..=longest).rev().find_map(|len| {
                    Some((len, *thesaurus.words.get(&word_key(&chars[i..i + len]))?))
                });
                let (len, entry) = found.unwrap_or((1, u32::MAX));
                tokens.push(SenseToken {
                    start: i as u32,
                    len: len as u8,
                    entry,
                });
                i += len;
            }
            tokens
        };
        // Every word of the thesaurus, run together with text between them, then prose.
        let mut text: Vec<char> = Vec::new();
        for (n, word) in thesaurus.words.keys().enumerate().take(20_000) {
            let mut key = *word;
            let mut chars = Vec::new();
            while key > 1 {
                chars.push(char::from_u32((key & 0x1f_ffff) as u32).unwrap());
                key >>= 21;
            }
            text.extend(chars.iter().rev());
            if n % 3 == 0 {
                text.extend("，A1".chars());
            }
        }
        text.extend(
            "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人。".chars(),
        );
        assert_eq!(thesaurus.tokens(&text), plain(&text));
        assert!(
            thesaurus
                .tokens(&text)
                .iter()
                .any(|t| t.len == 1 && t.is_known())
        );
        assert!(thesaurus.tokens(&text).iter().any(|t| t.len == 4));
    }

    #[test]
    fn the_builtin_thesaurus_holds_the_cilin_groups() {
        let thesaurus = Thesaurus::builtin();
        assert!(
            thesaurus.group_count() > 9_000,
            "{}",
            thesaurus.group_count()
        );
        assert!(thesaurus.len() > 40_000, "{}", thesaurus.len());
        // 立即 and 马上 share Ka08A01 (立刻 即刻 立时 …).
        let a = thesaurus.groups_of_word("立即");
        let b = thesaurus.groups_of_word("马上");
        assert!(a.iter().any(|g| b.contains(g)), "{a:?} {b:?}");
        assert!(
            a.iter().any(|&g| thesaurus.code(g) == "Ka08A01"),
            "{:?}",
            a.iter().map(|&g| thesaurus.code(g)).collect::<Vec<_>>()
        );
        // A polysemous word keeps every group.
        assert!(thesaurus.groups_of_word("说").len() >= 3);
        assert!(thesaurus.groups_of_word("刘备").is_empty());
    }

    #[test]
    fn tokens_take_the_longest_known_word_and_keep_unknown_characters_alone() {
        let thesaurus = Thesaurus::parse("X1 美丽 漂亮\nX2 看见 瞧见\nX3 看 瞧\n");
        assert_eq!(
            words(&thesaurus, "我看见美丽的花a1"),
            ["我", "看见", "美丽", "的", "花", "a", "1"]
        );
        assert_eq!(words(&thesaurus, "瞧他"), ["瞧", "他"]);
    }

    #[test]
    fn synonyms_and_identical_words_have_the_same_sense_and_others_do_not() {
        let thesaurus = Thesaurus::parse("X1 美丽 漂亮\nX2 说 讲\nX3 说 劝\n");
        let a: Vec<char> = "美丽地劝".chars().collect();
        let b: Vec<char> = "漂亮地说".chars().collect();
        let (ta, tb) = (thesaurus.tokens(&a), thesaurus.tokens(&b));
        assert_eq!(ta.len(), 3);
        assert!(thesaurus.same_sense(&a, &ta[0], &b, &tb[0]), "美丽 ~ 漂亮");
        assert!(thesaurus.same_sense(&a, &ta[1], &b, &tb[1]), "地 = 地");
        assert!(
            thesaurus.same_sense(&a, &ta[2], &b, &tb[2]),
            "劝 ~ 说 via X3"
        );
        assert!(!thesaurus.same_sense(&a, &ta[0], &b, &tb[2]), "美丽 ≁ 说");
    }

    #[test]
    fn a_word_with_a_nul_character_is_not_the_word_without_it() {
        // Found by the `thesaurus` fuzz target: "\0L" and "L" shared a key, so the later
        // word took the earlier one's place.
        let thesaurus = Thesaurus::parse("A \u{0}L \u{FFFD}\n\u{FFFD} L \u{FFFD}");
        assert_eq!(thesaurus.len(), 3);
        assert_eq!(thesaurus.groups_of_word("\u{0}L"), [0]);
        assert_eq!(thesaurus.groups_of_word("L"), [1]);
        assert_eq!(thesaurus.groups_of_word("\u{FFFD}"), [0, 1]);
    }

    #[test]
    fn a_one_word_line_is_no_group() {
        let thesaurus = Thesaurus::parse("X1 孤单\nX2 a b\n\n");
        assert_eq!(thesaurus.group_count(), 1);
        assert!(thesaurus.groups_of_word("孤单").is_empty());
    }
}
