//! Arbitrary characters → the pinyin view (syllable ids and initials), and arbitrary strings →
//! `reading_syllable_id`:
//!
//! * the slice functions give one value per character, equal to the per-character ones (they
//!   share the lookup tables and the slow path for rare ideographs);
//! * an initial is `NO_INITIAL` or a letter `a`–`z`; a syllable id is the character's own code
//!   point or at least `SYLLABLE_ID_BASE`, and a character with a syllable id has an initial
//!   and can be read as that syllable;
//! * `reading_syllable_id` finds exactly the readings `readings()` lists.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use copytrace_fingerprint::pinyin::{
    NO_INITIAL, SYLLABLE_ID_BASE, can_read_as, initial, initials, reading_syllable_id, readings,
    syllable_id, syllable_ids,
};
use libfuzzer_sys::fuzz_target;

static READINGS: LazyLock<HashMap<&'static str, u32>> =
    LazyLock::new(|| readings().into_iter().collect());
static IDS: LazyLock<HashSet<u32>> = LazyLock::new(|| READINGS.values().copied().collect());

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let chars: Vec<char> = text.chars().collect();
    let ids = syllable_ids(&chars);
    let letters = initials(&chars);
    assert_eq!(ids.len(), chars.len());
    assert_eq!(letters.len(), chars.len());
    for ((&c, &id), &letter) in chars.iter().zip(&ids).zip(&letters) {
        assert_eq!(id, syllable_id(c), "syllable id of {c:?}");
        assert_eq!(letter, initial(c), "initial of {c:?}");
        assert!(
            letter == NO_INITIAL || letter.is_ascii_lowercase(),
            "initial {letter} of {c:?}"
        );
        if id >= SYLLABLE_ID_BASE {
            assert!(
                can_read_as(c, id),
                "{c:?} cannot be read as its own syllable"
            );
            assert_ne!(letter, NO_INITIAL, "{c:?} has a syllable but no initial");
            assert!(IDS.contains(&id), "unknown id {id}");
        } else {
            assert_eq!(
                id,
                u32::from(c),
                "{c:?} without pinyin keeps its code point"
            );
        }
    }
    for candidate in [text.as_ref(), text.trim()] {
        assert_eq!(
            reading_syllable_id(candidate),
            READINGS.get(candidate).copied(),
            "reading {candidate:?}"
        );
    }
});
