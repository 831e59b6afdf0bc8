//! Romanized pages: Chinese characters written in pinyin (`xiao说` for 小说, `盗版xiaoshuo`,
//! `zheng府`, `wo men de`, `Xiǎo说`).
//!
//! Pirates dodge keyword filters by spelling some characters in Latin letters. Every candidate
//! source and the character alignment then see letters where the work has characters: a
//! romanized syllable breaks the SimHash and MinHash shingles around it, adds letters to the
//! DNA windows (`xiaoshuo` contributes eight initials where 小说 contributes two) and shifts
//! every alignment diagonal by its length minus one.
//!
//! **Reading.** [`read_romanized`] gives a second view of a page in which every run of Latin
//! letters that spells a sequence of pinyin syllables *entirely* is replaced by one
//! placeholder character per syllable. A placeholder has the syllable id
//! ([`copytrace_fingerprint::pinyin::syllable_id`]) and the initial of the characters read that
//! way, and spans the letters of its syllable in the original text. In that view a romanized
//! copy looks exactly like a homophone copy: same syllables and initials as the work, some
//! characters not equal. The matcher reads pages through it in two places, leaving the
//! characters' own view untouched:
//!
//! - **candidates**: DNA codes of the view's initials are looked up besides the page's own,
//!   so the DNA index sees the work's initials again;
//! - **verification**: the page is aligned with each candidate work both as it is and as read
//!   here, and the reading that covers more of the work is kept. Placeholders never equal a
//!   character (they are private-use code points, which normalization removes from every text),
//!   so they align only through the pinyin projection, under its guards: 16-syllable seeds,
//!   half of each run's characters exactly equal, runs starting and ending on equal characters.
//!
//! **Why the alignment decides.** English is full of valid pinyin (`a`, `in`, `men`, `she`,
//! `long`, `pin`, `change` = chang·e). Normalization drops spaces and punctuation, so English
//! text is one long run of letters that almost never spells pinyin from end to end and is left
//! alone; a short run between Chinese characters usually does. Even when English words are read
//! as syllables, the reading only matters if it aligns with a work under the pinyin guards,
//! which needs Chinese characters of that work around it; and the page's own view is always
//! aligned too, so an English page or work is matched exactly as before.
//!
//! **Segmentation.** A run is split into syllables by dynamic programming over the inventory of
//! toneless syllables of the `pinyin` data (those with a vowel: the interjections `m`, `n`,
//! `ng`, `hm`, `hng` are left out). Among the complete segmentations it prefers, in order:
//! syllables not crossing a space, apostrophe or hyphen of the original (`xi an`, `xi'an`),
//! fewer syllables (`xian` is 先, not 西安, as pinyin orthography reads it), then fewer
//! syllables starting with a vowel inside the run (`fangan` as `fan·gan`, the orthographic
//! reading: `fang·an` would be written `fang'an`). Tone marks and `ü` are folded (`xiǎo`,
//! `lǜ`, `lü`, `lv` and, as input methods accept, `lue`/`nue` for `lüe`/`nüe`).

use std::collections::HashMap;
use std::sync::LazyLock;

use copytrace_fingerprint::Normalized;
use copytrace_fingerprint::pinyin::{SYLLABLE_ID_BASE, initial, readings, syllable_id};

/// The placeholder of syllable `SYLLABLE_ID_BASE + rank` is `PLACEHOLDER_BASE + rank`: the
/// Supplementary Private Use Area-A, which normalization removes from every text (private-use
/// characters are neither letters nor digits), so no canonical character of a page or a work
/// ever equals a placeholder.
pub const PLACEHOLDER_BASE: u32 = 0xF_0000;

/// Longest syllable in letters (`zhuang`, `shuang`, `chuang`).
const MAX_SYLLABLE: usize = 6;

/// Folded syllable letters (`a`–`z`, `v` for `ü`) packed into a `u64`, → syllable id.
static INVENTORY: LazyLock<HashMap<u64, u32>> = LazyLock::new(build_inventory);

fn build_inventory() -> HashMap<u64, u32> {
    let mut inventory = HashMap::new();
    // `ê` (欸) would fold onto `e`, whose characters are far more common.
    for (reading, id) in readings().into_iter().filter(|(r, _)| !r.contains('ê')) {
        let letters: Option<Vec<u8>> = reading.chars().map(pinyin_letter).collect();
        let Some(letters) = letters else { continue };
        let has_vowel = letters
            .iter()
            .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'v'));
        if has_vowel && (1..=MAX_SYLLABLE).contains(&letters.len()) {
            inventory.insert(pack(&letters), id);
        }
    }
    // Input methods (and many writers) spell 略 and 虐 `lue` and `nue`.
    for (alias, of) in [(b"lue", b"lve"), (b"nue", b"nve")] {
        if let Some(&id) = inventory.get(&pack(of)) {
            inventory.entry(pack(alias)).or_insert(id);
        }
    }
    inventory
}

fn pack(letters: &[u8]) -> u64 {
    letters
        .iter()
        .fold(0u64, |packed, &b| (packed << 8) | u64::from(b))
}

/// A canonical character as a pinyin letter: `a`–`z` as themselves, vowels with a tone mark
/// as the bare vowel, `ü` (with or without tone) as `v`. `None` for anything else.
fn pinyin_letter(c: char) -> Option<u8> {
    Some(match c {
        'a'..='z' => c as u8,
        'ā' | 'á' | 'ǎ' | 'à' => b'a',
        'ē' | 'é' | 'ě' | 'è' | 'ê' => b'e',
        'ī' | 'í' | 'ǐ' | 'ì' => b'i',
        'ō' | 'ó' | 'ǒ' | 'ò' => b'o',
        'ū' | 'ú' | 'ǔ' | 'ù' => b'u',
        'ü' | 'ǖ' | 'ǘ' | 'ǚ' | 'ǜ' => b'v',
        _ => return None,
    })
}

/// The placeholder character standing for the syllable id `id`.
///
/// # Panics
/// If `id` is not a syllable id (below [`SYLLABLE_ID_BASE`], or beyond the 65,536 ranks a
/// placeholder can hold; the `pinyin` data has about 420 syllables).
pub fn placeholder(id: u32) -> char {
    id.checked_sub(SYLLABLE_ID_BASE)
        .filter(|&rank| rank < 0x1_0000)
        .and_then(|rank| char::from_u32(PLACEHOLDER_BASE + rank))
        .expect("a syllable id")
}

/// Whether `c` is a placeholder of [`read_romanized`].
pub fn is_placeholder(c: char) -> bool {
    (PLACEHOLDER_BASE..PLACEHOLDER_BASE + 0x1_0000).contains(&u32::from(c))
}

/// A page read with its romanized runs as syllables (see the module documentation).
#[derive(Debug, Clone)]
pub struct RomanizedPage {
    /// The canonical page with each romanized run replaced by one placeholder per syllable;
    /// a placeholder's span covers its letters in the original text.
    pub normalized: Normalized,
    /// Syllable id of every character of `normalized` (placeholders: their syllable's).
    pub syllables: Vec<u32>,
    /// Initial letter of every character of `normalized`, for DNA codes.
    pub initials: Vec<u8>,
    /// Number of placeholders.
    pub placeholders: usize,
}

/// `page` (the normalization of `text`) with every run of Latin letters that spells pinyin
/// syllables from end to end read as those syllables; `None` when no run does, or when the
/// page has no Chinese character (a romanized copy keeps most of them, and without any the
/// pinyin alignment has nothing exact to hold on to).
pub fn read_romanized(page: &Normalized, text: &str) -> Option<RomanizedPage> {
    let chars = &page.chars;
    if !chars.iter().any(|&c| syllable_id(c) >= SYLLABLE_ID_BASE) {
        return None;
    }
    // Runs that spell pinyin: (first character, syllables as letter ranges within the run).
    let mut read: Vec<(usize, Vec<Syllable>)> = Vec::new();
    let mut letters: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        letters.clear();
        let start = i;
        while let Some(letter) = chars.get(i).copied().and_then(pinyin_letter) {
            letters.push(letter);
            i += 1;
        }
        if letters.is_empty() {
            i += 1;
            continue;
        }
        let separated: Vec<bool> = (start..i)
            .map(|j| j > start && separator_between(text, page.spans[j - 1], page.spans[j]))
            .collect();
        if let Some(syllables) = segment(&letters, &separated) {
            read.push((start, syllables));
        }
    }
    if read.is_empty() {
        return None;
    }
    let mut out = RomanizedPage {
        normalized: Normalized::default(),
        syllables: Vec::with_capacity(chars.len()),
        initials: Vec::with_capacity(chars.len()),
        placeholders: 0,
    };
    let mut next = 0;
    for (start, syllables) in read {
        out.push_written(page, next..start);
        for &(from, to, id) in &syllables {
            let span = (page.spans[start + from].0, page.spans[start + to - 1].1);
            let first = pinyin_letter(chars[start + from]).expect("a letter");
            out.push(placeholder(id), span, id, first);
            out.placeholders += 1;
        }
        next = start + syllables.last().map_or(0, |&(_, to, _)| to);
    }
    out.push_written(page, next..chars.len());
    Some(out)
}

impl RomanizedPage {
    /// Appends canonical characters `range` of `page` as they are written.
    fn push_written(&mut self, page: &Normalized, range: std::ops::Range<usize>) {
        for (&c, &span) in page.chars[range.clone()].iter().zip(&page.spans[range]) {
            self.push(c, span, syllable_id(c), initial(c));
        }
    }

    fn push(&mut self, c: char, span: (u32, u32), syllable: u32, initial: u8) {
        self.normalized.chars.push(c);
        self.normalized.spans.push(span);
        self.syllables.push(syllable);
        self.initials.push(initial);
    }
}

/// Whether the original text between two canonical characters holds a space, an apostrophe
/// or a hyphen: a writer's syllable or word boundary (`xi an`, `xi'an`, `wo men de`).
fn separator_between(text: &str, before: (u32, u32), after: (u32, u32)) -> bool {
    text.get(before.1 as usize..after.0 as usize)
        .is_some_and(|gap| {
            gap.chars()
                .any(|c| c.is_whitespace() || matches!(c, '\'' | '’' | '‘' | '-' | '‐' | '‑'))
        })
}

/// One syllable of a run: letters `start..end` of the run, and the syllable id they spell.
type Syllable = (usize, usize, u32);

/// The best complete segmentation of `letters` into syllables, or `None` when there is none.
/// `separated[j]`: a separator precedes letter `j`.
fn segment(letters: &[u8], separated: &[bool]) -> Option<Vec<Syllable>> {
    let n = letters.len();
    // Cost of the best segmentation of letters[..j]: (syllables crossing a separator,
    // syllables, vowel-initial syllables not at a boundary).
    let mut best: Vec<Option<(u32, u32, u32)>> = vec![None; n + 1];
    let mut back: Vec<(usize, u32)> = vec![(0, 0); n + 1];
    best[0] = Some((0, 0, 0));
    let mut reachable_until = 0;
    for from in 0..n {
        let Some(cost) = best[from] else {
            if from >= reachable_until {
                // No syllable reaches past this letter: the run does not spell pinyin.
                return None;
            }
            continue;
        };
        for to in from + 1..=(from + MAX_SYLLABLE).min(n) {
            let Some(&id) = INVENTORY.get(&pack(&letters[from..to])) else {
                continue;
            };
            let crossings = separated[from + 1..to].iter().filter(|s| **s).count() as u32;
            let vowel_inside = from > 0
                && !separated[from]
                && matches!(letters[from], b'a' | b'e' | b'o' | b'i' | b'u' | b'v');
            let candidate = (
                cost.0 + crossings,
                cost.1 + 1,
                cost.2 + u32::from(vowel_inside),
            );
            if best[to].is_none_or(|current| candidate < current) {
                best[to] = Some(candidate);
                back[to] = (from, id);
            }
            reachable_until = reachable_until.max(to);
        }
    }
    best[n]?;
    let mut syllables = Vec::new();
    let mut end = n;
    while end > 0 {
        let (start, id) = back[end];
        syllables.push((start, end, id));
        end = start;
    }
    syllables.reverse();
    Some(syllables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use copytrace_fingerprint::normalize;
    use copytrace_fingerprint::pinyin::{initials, syllable_ids};

    fn read(text: &str) -> Option<RomanizedPage> {
        read_romanized(&normalize(text), text)
    }

    /// The syllables the Latin runs of `text` are read as, as the characters given.
    fn syllables_of(text: &str) -> Vec<u32> {
        read(text)
            .map(|r| {
                r.normalized
                    .chars
                    .iter()
                    .zip(&r.syllables)
                    .filter(|(c, _)| is_placeholder(**c))
                    .map(|(_, &id)| id)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn ids(han: &str) -> Vec<u32> {
        syllable_ids(&han.chars().collect::<Vec<_>>())
    }

    #[test]
    fn romanized_syllables_get_the_ids_and_initials_of_the_characters() {
        let text = "盗版xiaoshuo网站";
        let r = read(text).expect("read");
        let plain: Vec<char> = "盗版小说网站".chars().collect();
        assert_eq!(r.syllables, syllable_ids(&plain));
        assert_eq!(r.initials, initials(&plain));
        assert_eq!(r.placeholders, 2);
        assert_eq!(r.normalized.len(), 6);
        // Each placeholder spans its letters in the original text.
        let pieces: Vec<&str> = r
            .normalized
            .spans
            .iter()
            .map(|&(s, e)| &text[s as usize..e as usize])
            .collect();
        assert_eq!(pieces, ["盗", "版", "xiao", "shuo", "网", "站"]);
        assert!(is_placeholder(r.normalized.chars[2]));
        assert_ne!(r.normalized.chars[2], '小');
    }

    #[test]
    fn spaces_capitals_tone_marks_and_u_umlaut_are_read() {
        assert_eq!(syllables_of("我们wo men de家"), ids("我们的"));
        assert_eq!(syllables_of("Xiao说"), ids("小"));
        assert_eq!(syllables_of("XIǍO说"), ids("小"));
        assert_eq!(syllables_of("zheng府和fa轮"), ids("政法"));
        for green in ["lü色", "lv色", "lǜ色"] {
            assert_eq!(syllables_of(green), ids("绿"), "{green}");
        }
        assert_eq!(syllables_of("侵lue者"), ids("略"));
    }

    #[test]
    fn ambiguous_runs_follow_pinyin_orthography_and_the_writers_separators() {
        assert_eq!(syllables_of("首xian"), ids("先"));
        assert_eq!(syllables_of("去xi'an"), ids("西安"));
        assert_eq!(syllables_of("去xi an"), ids("西安"));
        assert_eq!(syllables_of("有fangan"), ids("反感"));
        assert_eq!(syllables_of("有fang'an"), ids("方案"));
        assert_eq!(syllables_of("xiaoshuo网"), ids("小说"));
    }

    #[test]
    fn runs_that_are_not_pinyin_from_end_to_end_stay_letters() {
        for text in [
            "访问www.example.com阅读",
            "他用iPhone看小说",
            "中文To be, or not to be, that is the question.",
            "第12章xml",
        ] {
            assert!(read(text).is_none(), "{text}");
        }
        // Interjection readings without a vowel are not syllables here.
        assert!(read("嗯hm好").is_none());
        assert!(read("他说ng").is_none());
    }

    #[test]
    fn a_page_without_chinese_characters_is_not_read() {
        assert!(read("she wore a long pin in her hair").is_none());
        assert!(read("women").is_none());
        assert!(read("中women").is_some());
    }

    #[test]
    fn normalization_removes_placeholders_from_every_text() {
        let all: String = (0..0x1_0000u32)
            .step_by(97)
            .filter_map(|rank| char::from_u32(PLACEHOLDER_BASE + rank))
            .collect();
        assert!(all.chars().all(is_placeholder));
        assert!(normalize(&all).is_empty());
        assert_eq!(placeholder(SYLLABLE_ID_BASE + 5), '\u{F0005}');
    }
}
