//! Candidate generation from the three window indexes (SimHash, MinHash LSH, DNA), on the demo
//! corpus: which source finds which disguise, that unrelated pages find nothing, and that
//! removing a work empties every index of it.

use std::collections::HashMap;

use copytrace_fingerprint::pinyin::syllable_ids;
use copytrace_fingerprint::{FingerprintConfig, fingerprint_text, normalize};
use copytrace_matcher::{Candidate, CandidateMethods, MatchConfig, Matcher, WorkId};
use pinyin::ToPinyin;

const LIBRARY: [(WorkId, &str); 4] = [
    (
        1,
        include_str!("../../copytrace/demo/library/jianghu-ch1.txt"),
    ),
    (
        2,
        include_str!("../../copytrace/demo/library/news-harbor.txt"),
    ),
    (
        3,
        include_str!("../../copytrace/demo/library/xingchen-ch1.txt"),
    ),
    (
        4,
        include_str!("../../copytrace/demo/library/xingchen-ch2.txt"),
    ),
];
const BOILERPLATE: &str = include_str!("../../copytrace/demo/site/boilerplate.txt");
const COOKING: &str = include_str!("../../copytrace/demo/unrelated/cooking.txt");
const ANOTHER_NOVEL: &str = include_str!("../../copytrace/demo/unrelated/another-novel.txt");

fn matcher(methods: CandidateMethods) -> Matcher {
    let mut config = MatchConfig::default();
    config.candidates.methods = methods;
    let mut m = Matcher::new(config);
    for (id, text) in LIBRARY {
        m.add_work(id, text).unwrap();
    }
    m
}

fn find(candidates: &[Candidate], work_id: WorkId) -> Option<&Candidate> {
    candidates.iter().find(|c| c.work_id == work_id)
}

/// The 3,755 level-1 characters of GB 2312, the most common Simplified characters.
fn common_characters() -> Vec<char> {
    let mut bytes = Vec::new();
    for row in 0xB0u8..=0xD7 {
        for col in 0xA1u8..=0xFE {
            if row == 0xD7 && col > 0xF9 {
                continue;
            }
            bytes.extend([row, col]);
        }
    }
    let (text, _, had_errors) = encoding_rs::GBK.decode(&bytes);
    assert!(!had_errors);
    text.chars().collect()
}

use copytrace_fingerprint::minhash::splitmix64 as splitmix;

/// `text` with `share` of its characters replaced by a different common character of the same
/// toneless pinyin (a 同音字 disguise), at random positions. Returns the disguised text and the
/// number of characters replaced.
fn homophone_disguise(text: &str, share: f64, seed: u64) -> (String, usize) {
    let common = common_characters();
    let mut by_sound: HashMap<u32, Vec<char>> = HashMap::new();
    for &c in &common {
        // Only characters normalization leaves alone, so the disguise survives it.
        if normalize(&c.to_string()).chars == [c] {
            by_sound.entry(syllable_ids(&[c])[0]).or_default().push(c);
        }
    }
    let mut chars: Vec<char> = text.chars().collect();
    let mut substitutable: Vec<usize> = (0..chars.len())
        .filter(|&i| {
            by_sound
                .get(&syllable_ids(&[chars[i]])[0])
                .is_some_and(|same| same.iter().any(|&s| s != chars[i]))
        })
        .collect();
    let target = (chars.len() as f64 * share).round() as usize;
    assert!(
        substitutable.len() >= target,
        "{} substitutable characters for a target of {target}",
        substitutable.len()
    );
    let mut state = seed;
    // Partial Fisher–Yates: the first `target` positions of a random permutation.
    for i in 0..target {
        let j = i + (splitmix(&mut state) % (substitutable.len() - i) as u64) as usize;
        substitutable.swap(i, j);
    }
    for &i in &substitutable[..target] {
        let same: Vec<char> = by_sound[&syllable_ids(&[chars[i]])[0]]
            .iter()
            .copied()
            .filter(|&s| s != chars[i])
            .collect();
        chars[i] = same[(splitmix(&mut state) % same.len() as u64) as usize];
    }
    (chars.into_iter().collect(), target)
}

fn wrapped(body: &str) -> String {
    let lines: Vec<&str> = BOILERPLATE.lines().collect();
    format!(
        "{}\n{body}\n{}",
        lines[..5].join("\n"),
        lines[5..].join("\n")
    )
}

#[test]
fn a_page_with_15_percent_homophones_is_a_dna_candidate_though_simhash_finds_nothing() {
    let (_, work) = LIBRARY[0];
    let (disguised, replaced) = homophone_disguise(work, 0.15, 42);
    let page = wrapped(&disguised);
    // The disguise is real: many characters differ, the pinyin does not.
    let (a, b) = (normalize(work).chars, normalize(&disguised).chars);
    assert_eq!(a.len(), b.len());
    let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(
        differing * 100 >= a.len() * 14,
        "{differing} of {}",
        a.len()
    );
    assert!(replaced >= differing);
    assert_eq!(syllable_ids(&a), syllable_ids(&b));

    let simhash_only = matcher(CandidateMethods::SIMHASH)
        .candidates_for(&page)
        .unwrap();
    assert!(
        find(&simhash_only, 1).is_none(),
        "SimHash found the disguised copy: {simhash_only:?}"
    );

    let all = matcher(CandidateMethods::ALL)
        .candidates_for(&page)
        .unwrap();
    let candidate = find(&all, 1).expect("the disguised copy is a candidate");
    assert!(
        candidate.methods.contains(CandidateMethods::DNA),
        "{candidate:?}"
    );
    assert!(!candidate.methods.contains(CandidateMethods::SIMHASH));
    assert!(
        candidate.dna_windows * 2 >= work_dna_windows(work),
        "most of the work's DNA windows are found: {candidate:?}"
    );
    assert_eq!(all[0].work_id, 1, "the copied work ranks first: {all:?}");

    let dna_only = matcher(CandidateMethods::DNA)
        .candidates_for(&page)
        .unwrap();
    assert_eq!(
        find(&dna_only, 1).map(|c| c.methods),
        Some(CandidateMethods::DNA)
    );
}

#[test]
fn the_kgram_postings_alone_find_heavy_homophones_and_romanized_copies() {
    let (_, work) = LIBRARY[0];
    let kgram = matcher(CandidateMethods::KGRAM);
    let (heavy, _) = homophone_disguise(work, 0.3, 9);
    for page in [wrapped(&heavy), wrapped(&romanized(work, 0.3, 3))] {
        let found = kgram.candidates_for(&page).unwrap();
        assert_eq!(found.first().map(|c| c.work_id), Some(1), "{found:?}");
        assert_eq!(found[0].methods, CandidateMethods::KGRAM);
        let verdict = kgram.match_text(&page).unwrap();
        assert_eq!(verdict.first().map(|m| m.work_id), Some(1), "{verdict:?}");
    }
    // The characters alone cannot see through 30 % homophones; the syllables can.
    let mut chars_only = MatchConfig::default();
    chars_only.candidates.methods = CandidateMethods::KGRAM;
    chars_only.candidates.postings.syllables = false;
    let mut m = Matcher::new(chars_only);
    m.add_work(1, work).unwrap();
    let by_chars = m.candidates_for(&wrapped(&heavy)).unwrap();
    let by_both = kgram.candidates_for(&wrapped(&heavy)).unwrap();
    assert!(
        by_chars.first().map_or(0, |c| c.kgram_hits) * 2 < by_both[0].kgram_hits,
        "{by_chars:?} vs {by_both:?}"
    );
}

fn work_dna_windows(work: &str) -> usize {
    let mut m = Matcher::new(MatchConfig::default());
    m.add_work(1, work).unwrap();
    m.index_sizes().unwrap().dna
}

/// `text` with each Chinese character written in toneless pinyin (`xiao说`) with probability
/// `share`.
fn romanized(text: &str, share: f64, seed: u64) -> String {
    let mut state = seed;
    text.chars()
        .map(|c| match c.to_pinyin() {
            Some(p) if ((splitmix(&mut state) % 1000) as f64) < share * 1000.0 => {
                p.plain().to_owned()
            }
            _ => c.to_string(),
        })
        .collect()
}

#[test]
fn a_romanized_page_is_a_dna_candidate_through_its_reading_as_syllables() {
    let (_, work) = LIBRARY[0];
    let page = wrapped(&romanized(work, 0.3, 42));
    let mut config = MatchConfig::default();
    config.candidates.methods = CandidateMethods::DNA;
    let mut written_only = Matcher::new(MatchConfig {
        romanized: false,
        ..config
    });
    for (id, text) in LIBRARY {
        written_only.add_work(id, text).unwrap();
    }
    let read = matcher(CandidateMethods::DNA)
        .candidates_for(&page)
        .unwrap();
    let written = written_only.candidates_for(&page).unwrap();
    let windows = work_dna_windows(work);
    let candidate = find(&read, 1).expect("a candidate through the reading");
    eprintln!("{candidate:?} {:?} of {windows}", find(&written, 1));
    assert!(
        candidate.dna_windows * 10 >= windows * 9,
        "nearly every DNA window of the work: {candidate:?} of {windows}"
    );
    assert!(
        find(&written, 1).is_none_or(|c| c.dna_windows * 10 < windows),
        "the letters as written hide the work's DNA: {written:?}"
    );
}

#[test]
fn unrelated_pages_yield_no_candidates_from_any_source() {
    let m = matcher(CandidateMethods::ALL);
    for page in [COOKING, ANOTHER_NOVEL, &wrapped(COOKING)] {
        let found = m.candidates_for(page).unwrap();
        assert!(found.is_empty(), "{found:?}");
    }
}

#[test]
fn a_verbatim_copy_is_found_by_every_source_and_the_verdict_names_them() {
    let (_, work) = LIBRARY[2];
    let page = wrapped(work);
    let m = matcher(CandidateMethods::ALL);
    let found = m.candidates_for(&page).unwrap();
    assert_eq!(found[0].work_id, 3, "{found:?}");
    assert_eq!(found[0].methods, CandidateMethods::ALL);
    let verdict = m.match_text(&page).unwrap();
    assert_eq!(verdict[0].work_id, 3);
    assert_eq!(verdict[0].method, "simhash+minhash+dna+sense+kgram+align");
}

#[test]
fn disabled_sources_are_neither_indexed_nor_reported() {
    let m = matcher(CandidateMethods::SIMHASH | CandidateMethods::MINHASH);
    let sizes = m.index_sizes().unwrap();
    assert!(sizes.simhash > 0 && sizes.minhash > 0);
    assert_eq!(sizes.dna, 0);
    let found = m.candidates_for(LIBRARY[1].1).unwrap();
    assert_eq!(found[0].work_id, 2);
    assert_eq!(
        found[0].methods,
        CandidateMethods::SIMHASH | CandidateMethods::MINHASH
    );
    assert_eq!(found[0].dna_windows, 0);
}

#[test]
fn removing_a_work_removes_it_from_every_index() {
    let mut m = matcher(CandidateMethods::ALL);
    let before = m.index_sizes().unwrap();
    let only_jianghu = {
        let mut m = matcher(CandidateMethods::ALL);
        for (id, _) in &LIBRARY[1..] {
            m.remove_work(*id).unwrap();
        }
        m
    };
    let own = only_jianghu.index_sizes().unwrap();
    assert!(own.simhash > 0 && own.minhash > 0 && own.dna > 0 && own.sense > 0);
    assert!(own.postings > 0);

    m.remove_work(1).unwrap();
    let after = m.index_sizes().unwrap();
    assert_eq!(after.simhash, before.simhash - own.simhash);
    assert_eq!(after.minhash, before.minhash - own.minhash);
    assert_eq!(after.dna, before.dna - own.dna);
    assert_eq!(after.postings, before.postings - own.postings);
    // Keys are shared between works: the jianghu story's own keys go, the shared ones stay.
    assert!(after.sense < before.sense && after.sense >= before.sense - own.sense);
    let found = m.candidates_for(LIBRARY[0].1).unwrap();
    assert!(find(&found, 1).is_none(), "{found:?}");

    for (id, _) in &LIBRARY[1..] {
        m.remove_work(*id).unwrap();
    }
    let empty = m.index_sizes().unwrap();
    assert_eq!(
        (
            empty.simhash,
            empty.minhash,
            empty.dna,
            empty.sense,
            empty.postings
        ),
        (0, 0, 0, 0, 0)
    );
}

#[test]
fn stored_simhash_windows_give_the_same_candidates_as_fingerprinting_afresh() {
    let fresh = matcher(CandidateMethods::ALL);
    let mut config = MatchConfig::default();
    config.candidates.methods = CandidateMethods::ALL;
    let mut stored = Matcher::new(config);
    for (id, text) in LIBRARY {
        let windows = fingerprint_text(text, &FingerprintConfig::default()).windows;
        stored
            .add_fingerprinted_work(id, text, windows.iter().map(|w| (w.ordinal, w.simhash)))
            .unwrap();
    }
    assert_eq!(fresh.index_sizes().unwrap(), stored.index_sizes().unwrap());
    let (disguised, _) = homophone_disguise(LIBRARY[3].1, 0.15, 7);
    for page in [wrapped(LIBRARY[3].1), disguised] {
        assert_eq!(
            fresh.candidates_for(&page).unwrap(),
            stored.candidates_for(&page).unwrap()
        );
    }
}

#[test]
fn candidate_methods_print_and_parse_as_plus_joined_names() {
    assert_eq!(
        CandidateMethods::ALL.to_string(),
        "simhash+minhash+dna+sense+kgram"
    );
    assert_eq!(CandidateMethods::DEFAULT.to_string(), "sense+kgram");
    assert_eq!(
        "default".parse::<CandidateMethods>().unwrap(),
        CandidateMethods::DEFAULT
    );
    assert_eq!(
        (CandidateMethods::SIMHASH | CandidateMethods::DNA).to_string(),
        "simhash+dna"
    );
    assert_eq!(CandidateMethods::NONE.to_string(), "none");
    assert_eq!(
        "dna+simhash".parse::<CandidateMethods>().unwrap(),
        CandidateMethods::SIMHASH | CandidateMethods::DNA
    );
    assert_eq!(
        "all".parse::<CandidateMethods>().unwrap(),
        CandidateMethods::ALL
    );
    assert!("simhash+lsh".parse::<CandidateMethods>().is_err());
}
