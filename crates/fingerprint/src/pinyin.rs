//! Pinyin view of canonical text: syllable ids and initial letters.
//!
//! Pirates swap characters for homophones (同音字: 的 → 得, 他 → 她 → 它) precisely because a
//! reader hears the same sentence. Comparing the *sound* of the text instead of its characters
//! absorbs that disguise: two homophones get the same [`syllable_id`] and the same
//! [`initial`].
//!
//! **Reading.** Each character is read with its default (first-listed) reading from the
//! `pinyin` crate's data, without tone. Context-dependent readings of polyphones (银行 háng vs
//! 行走 xíng) are deliberately ignored: a substitution is judged by the character alone, and
//! the same character must always give the same value wherever it stands.
//!
//! **Speed.** These functions run on every character of every crawled page, so the CJK Unified
//! Ideographs block and Extension A (U+3400–U+9FFF, 27,648 code points) are looked up in a
//! table built once on first use; the hot path is a subtraction, a bounds check and an array
//! index. Rarer ideographs (Extension B and later, 〇) fall back to the `pinyin` crate's own
//! lookup, which is slower but gives the same answers.

use std::collections::HashMap;
use std::sync::LazyLock;

use ::pinyin::{ToPinyin, ToPinyinMulti};

/// First code point covered by the lookup table (start of CJK Extension A).
const TABLE_START: u32 = 0x3400;
/// Last code point covered by the lookup table (end of the CJK Unified Ideographs block).
const TABLE_END: u32 = 0x9FFF;

/// Syllable ids of Chinese characters start here, just past the last Unicode code point, so
/// they never collide with the code points used as ids of every other character.
pub const SYLLABLE_ID_BASE: u32 = 0x11_0000;

/// The marker [`initials`] gives a character that has no initial letter (digits, non-Latin
/// letters, ideographs without pinyin data). It is not a letter, so every consumer that
/// counts `a`–`z` ignores it, and the output keeps one byte per input character.
pub const NO_INITIAL: u8 = 0;

/// Characters outside the table whose pinyin is still looked up (the slow path).
const EXTRA_RANGES: [(u32, u32); 2] = [(0x3007, 0x3007), (0x2_0000, 0x3_23AF)];

struct Tables {
    /// `ids[c - TABLE_START]`: 0 when the character has no pinyin, otherwise its syllable's
    /// rank + 1.
    ids: Box<[u16]>,
    /// `letters[c - TABLE_START]`: the initial letter, or [`NO_INITIAL`]. Kept apart from `ids`
    /// so that [`initials`] walks a 27 KB table that stays in cache.
    letters: Box<[u8]>,
    /// Toneless syllable → rank in the sorted list of all syllables.
    ranks: HashMap<&'static str, u32>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(build_tables);

fn build_tables() -> Tables {
    let table_chars = (TABLE_START..=TABLE_END).filter_map(char::from_u32);
    let extra_chars = EXTRA_RANGES
        .iter()
        .flat_map(|&(lo, hi)| (lo..=hi).filter_map(char::from_u32));
    let mut syllables: Vec<&'static str> = table_chars
        .chain(extra_chars)
        .filter_map(|c| c.to_pinyin().map(|p| p.plain()))
        .collect();
    syllables.sort_unstable();
    syllables.dedup();
    let ranks: HashMap<&'static str, u32> = syllables
        .iter()
        .enumerate()
        .map(|(rank, &s)| (s, rank as u32))
        .collect();
    let readings: Vec<Option<&'static str>> = (TABLE_START..=TABLE_END)
        .map(|code| {
            char::from_u32(code)
                .and_then(|c| c.to_pinyin())
                .map(|p| p.plain())
        })
        .collect();
    let ids = readings
        .iter()
        .map(|r| {
            r.map_or(0, |s| {
                u16::try_from(ranks[s] + 1).expect("fewer than 65,535 syllables")
            })
        })
        .collect();
    let letters = readings
        .iter()
        .map(|r| r.map_or(NO_INITIAL, letter_of))
        .collect();
    Tables {
        ids,
        letters,
        ranks,
    }
}

/// The initial letter of a toneless syllable, folded to `a`–`z` (the data spells 欸 as `ê`).
fn letter_of(syllable: &str) -> u8 {
    match syllable.chars().next() {
        Some(c @ 'a'..='z') => c as u8,
        Some('ê') => b'e',
        Some('ü') => b'v',
        _ => NO_INITIAL,
    }
}

/// `(syllable rank, initial letter)` of a character outside the table, from the `pinyin`
/// crate: the slow path, for the few ideographs beyond U+9FFF that have pinyin data.
#[cold]
fn lookup_slow(tables: &Tables, c: char) -> Option<(u32, u8)> {
    let code = u32::from(c);
    if !EXTRA_RANGES
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&code))
    {
        return None;
    }
    let syllable = c.to_pinyin()?.plain();
    Some((*tables.ranks.get(syllable)?, letter_of(syllable)))
}

#[inline]
fn syllable_id_in(tables: &Tables, c: char) -> u32 {
    let code = u32::from(c);
    if let Some(&id) = tables.ids.get(code.wrapping_sub(TABLE_START) as usize) {
        return if id == 0 {
            code
        } else {
            SYLLABLE_ID_BASE + u32::from(id) - 1
        };
    }
    if code < 0x3000 {
        return code;
    }
    lookup_slow(tables, c).map_or(code, |(rank, _)| SYLLABLE_ID_BASE + rank)
}

#[inline]
fn initial_in(tables: &Tables, c: char) -> u8 {
    let code = u32::from(c);
    if let Some(&letter) = tables.letters.get(code.wrapping_sub(TABLE_START) as usize) {
        return letter;
    }
    if c.is_ascii_alphabetic() {
        return c.to_ascii_lowercase() as u8;
    }
    if code < 0x3000 {
        return NO_INITIAL;
    }
    lookup_slow(tables, c).map_or(NO_INITIAL, |(_, letter)| letter)
}

/// Sound identity of one character: homophones share an id, so a pirate's 同音字 swap leaves
/// the id sequence unchanged.
///
/// A Chinese character with pinyin data gets `SYLLABLE_ID_BASE + rank`, where `rank` is the
/// position of its toneless default reading in the sorted list of all toneless syllables
/// (a few hundred); every other character gets its own code point, so Latin words and digits
/// still compare exactly. Ids are stable for a given version of the `pinyin` data.
pub fn syllable_id(c: char) -> u32 {
    syllable_id_in(&TABLES, c)
}

/// Initial letter of one character, the alphabet of the DNA fingerprint: the first letter
/// `a`–`z` of the toneless pinyin of a Chinese character, the lower-case letter itself for an
/// ASCII letter, and [`NO_INITIAL`] for anything else (digits, other scripts, ideographs
/// without pinyin data) so that positions still line up with the input.
pub fn initial(c: char) -> u8 {
    initial_in(&TABLES, c)
}

/// [`syllable_id`] of every character, one id per character.
pub fn syllable_ids(chars: &[char]) -> Vec<u32> {
    let tables = &*TABLES;
    chars.iter().map(|&c| syllable_id_in(tables, c)).collect()
}

/// [`initial`] of every character, one byte per character (see [`NO_INITIAL`]).
pub fn initials(chars: &[char]) -> Vec<u8> {
    let tables = &*TABLES;
    chars.iter().map(|&c| initial_in(tables, c)).collect()
}

/// The syllable id every character read `reading` (a toneless syllable as the `pinyin` data
/// spells it: `xiao`, `lü`) has under [`syllable_id`], or `None` when no character is read that
/// way. Lets a reader of romanized text (`xiao说` for 小说) give a Latin syllable the identity
/// of the characters it stands for.
pub fn reading_syllable_id(reading: &str) -> Option<u32> {
    TABLES
        .ranks
        .get(reading)
        .map(|&rank| SYLLABLE_ID_BASE + rank)
}

/// Whether `c` has, among all its readings (a polyphone such as 地 has `di` and `de`, 行 has
/// `xing` and `hang`), one whose syllable id is `id`. [`syllable_id`] gives the default reading
/// only; a writer spelling a character in pinyin spells the reading of its context, so a
/// romanized `de` standing where the work has 地 is read as 地.
pub fn can_read_as(c: char, id: u32) -> bool {
    if syllable_id(c) == id {
        return true;
    }
    let Some(readings) = c.to_pinyin_multi() else {
        return false;
    };
    let ranks = &TABLES.ranks;
    readings.into_iter().any(|p| {
        ranks
            .get(p.plain())
            .is_some_and(|&rank| SYLLABLE_ID_BASE + rank == id)
    })
}

/// Every toneless reading of the `pinyin` data with its syllable id (see
/// [`reading_syllable_id`]), in id order: the inventory a romanized-text reader segments Latin
/// letters into.
pub fn readings() -> Vec<(&'static str, u32)> {
    let mut all: Vec<(&'static str, u32)> = TABLES
        .ranks
        .iter()
        .map(|(&reading, &rank)| (reading, SYLLABLE_ID_BASE + rank))
        .collect();
    all.sort_unstable_by_key(|&(_, id)| id);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn homophones_share_a_syllable_id() {
        assert_eq!(
            syllable_ids(&chars("他她它")),
            syllable_ids(&chars("塌踏塔"))
        );
        let ids = syllable_ids(&chars("是事市"));
        assert!(ids.iter().all(|&id| id == ids[0] && id >= SYLLABLE_ID_BASE));
        assert_ne!(syllable_id('是'), syllable_id('他'));
    }

    #[test]
    fn tones_are_ignored() {
        // mā má mǎ mà
        let ids = syllable_ids(&chars("妈麻马骂"));
        assert!(ids.iter().all(|&id| id == ids[0]));
    }

    #[test]
    fn non_chinese_characters_keep_their_code_points() {
        assert_eq!(
            syllable_ids(&chars("a9é")),
            vec!['a' as u32, '9' as u32, 'é' as u32]
        );
    }

    #[test]
    fn initials_are_pinyin_first_letters() {
        assert_eq!(initials(&chars("中国人民")), b"zgrm");
        assert_eq!(initials(&chars("安心")), b"ax");
    }

    #[test]
    fn ascii_letters_are_their_own_initials_and_digits_have_none() {
        assert_eq!(initials(&chars("aZ7")), [b'a', b'z', NO_INITIAL]);
        assert_eq!(initials(&chars("é")), [NO_INITIAL]);
    }

    #[test]
    fn readings_give_the_ids_of_the_characters_read_that_way() {
        assert_eq!(reading_syllable_id("xiao"), Some(syllable_id('小')));
        assert_eq!(reading_syllable_id("shuo"), Some(syllable_id('说')));
        assert_eq!(reading_syllable_id("lü"), Some(syllable_id('绿')));
        assert_eq!(reading_syllable_id("xyz"), None);
        assert_eq!(reading_syllable_id("Xiao"), None, "readings are lower case");
        let all = readings();
        assert!(all.len() > 400, "{}", all.len());
        assert!(all.windows(2).all(|pair| pair[0].1 < pair[1].1));
        assert!(
            all.iter()
                .all(|&(reading, id)| reading_syllable_id(reading) == Some(id))
        );
    }

    #[test]
    fn polyphones_can_be_read_in_each_of_their_readings() {
        let id = |reading| reading_syllable_id(reading).expect("a reading");
        assert!(can_read_as('地', id("di")) && can_read_as('地', id("de")));
        assert!(can_read_as('行', id("xing")) && can_read_as('行', id("hang")));
        assert!(!can_read_as('行', id("de")));
        assert!(can_read_as('小', id("xiao")) && !can_read_as('小', id("shao")));
        assert!(!can_read_as('a', id("a")));
        // The default reading is still the only one `syllable_id` gives.
        assert_eq!(syllable_id('地'), id("di"));
    }

    #[test]
    fn rare_ideographs_outside_the_table_still_have_pinyin() {
        // U+20000 𠀀 (hē) is in Extension B, served by the slow path.
        assert_eq!(initial('\u{20000}'), b'h');
        assert_eq!(syllable_id('\u{20000}'), syllable_id('喝'));
        assert_eq!(initial('〇'), b'l');
    }

    #[test]
    fn table_and_slow_path_agree() {
        for c in ['一', '的', '\u{3400}', '\u{9FA5}'] {
            let p = c.to_pinyin().expect("has pinyin").plain();
            assert_eq!(initial(c), letter_of(p));
            assert_eq!(syllable_id(c), SYLLABLE_ID_BASE + TABLES.ranks[p]);
        }
        // Characters of the table's range without pinyin data (Yijing hexagram symbols).
        assert_eq!(syllable_id('\u{4DC0}'), 0x4DC0);
        assert_eq!(initial('\u{4DC0}'), NO_INITIAL);
    }
}
