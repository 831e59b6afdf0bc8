//! Properties of the pinyin-initial DNA fingerprint on generated text.

use std::collections::HashMap;
use std::sync::LazyLock;

use copytrace_fingerprint::dna::{ALLOWED_LEVELS, code_digits};
use copytrace_fingerprint::pinyin::{initial, syllable_id};
use copytrace_fingerprint::{DnaConfig, ReferenceDistribution, dna_codes, normalize};
use proptest::prelude::*;

/// Canonical (already Simplified) characters of the CJK Unified block that have at least one
/// homophone, grouped by syllable id: the material for realistic 同音字 substitutions.
struct Homophones {
    /// Characters that have a homophone.
    pool: Vec<char>,
    /// Each pool character's group (all characters with its syllable id, itself included).
    groups: HashMap<u32, Vec<char>>,
}

static HOMOPHONES: LazyLock<Homophones> = LazyLock::new(|| {
    let mut groups: HashMap<u32, Vec<char>> = HashMap::new();
    for c in ('\u{4E00}'..='\u{9FA5}').filter(|&c| initial(c) != 0) {
        let mut buffer = [0u8; 4];
        if normalize(c.encode_utf8(&mut buffer)).chars == [c] {
            groups.entry(syllable_id(c)).or_default().push(c);
        }
    }
    groups.retain(|_, members| members.len() >= 2);
    let mut pool: Vec<char> = groups.values().flatten().copied().collect();
    pool.sort_unstable();
    Homophones { pool, groups }
});

fn config() -> impl Strategy<Value = DnaConfig> {
    (
        1usize..=128,
        0.0f64..0.95,
        prop::sample::select(ALLOWED_LEVELS.to_vec()),
    )
        .prop_map(|(granularity, overlap, levels)| {
            DnaConfig::new(granularity, overlap, levels).expect("valid by construction")
        })
}

/// Mixed text: mostly Chinese, some Latin letters and digits, and arbitrary characters.
fn mixed_text() -> impl Strategy<Value = Vec<char>> {
    let chinese = (0x4E00u32..=0x9FA5).prop_map(|c| char::from_u32(c).expect("CJK"));
    prop::collection::vec(
        prop_oneof![
            6 => chinese,
            2 => prop::char::range('a', 'z'),
            1 => prop::char::range('0', '9'),
            1 => any::<char>(),
        ],
        0..600,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn identical_input_gives_identical_codes(text in mixed_text(), config in config()) {
        let reference = ReferenceDistribution::builtin();
        prop_assert_eq!(
            dna_codes(&text, &config, &reference),
            dna_codes(&text.clone(), &config, &reference)
        );
    }

    #[test]
    fn code_digits_never_exceed_q(text in mixed_text(), config in config()) {
        let q = config.levels();
        let limit = (u128::from(q) + 1).pow(26);
        for window in dna_codes(&text, &config, &ReferenceDistribution::builtin()) {
            prop_assert!(window.code < limit);
            prop_assert!(code_digits(window.code, q).iter().all(|&d| d <= q));
        }
    }

    #[test]
    fn windows_lie_within_the_text_and_cover_every_initial(
        text in mixed_text(),
        config in config(),
    ) {
        let windows = dna_codes(&text, &config, &ReferenceDistribution::builtin());
        let has_initial = |i: usize| initial(text[i]) != 0;
        let mut covered = vec![false; text.len()];
        let mut previous_start = None;
        for w in &windows {
            prop_assert!(w.start < w.end && w.end <= text.len(), "{:?} in {}", w, text.len());
            prop_assert!(has_initial(w.start) && has_initial(w.end - 1));
            prop_assert!(previous_start < Some(w.start), "windows in text order");
            previous_start = Some(w.start);
            covered[w.start..w.end].iter_mut().for_each(|c| *c = true);
        }
        for (i, &is_covered) in covered.iter().enumerate() {
            prop_assert!(!has_initial(i) || is_covered, "initial at {} not covered", i);
        }
    }

    #[test]
    fn replacing_a_tenth_of_the_characters_by_homophones_keeps_most_codes(
        picks in prop::collection::vec(any::<prop::sample::Index>(), 2000),
        replaced in prop::sample::subsequence((0..2000).collect::<Vec<usize>>(), 200),
        choices in prop::collection::vec(any::<prop::sample::Index>(), 200),
    ) {
        let homophones = &*HOMOPHONES;
        let original: String = picks.iter().map(|i| *i.get(&homophones.pool)).collect();
        let mut disguised: Vec<char> = original.chars().collect();
        for (&position, choice) in replaced.iter().zip(&choices) {
            let c = disguised[position];
            let others: Vec<char> = homophones.groups[&syllable_id(c)]
                .iter()
                .copied()
                .filter(|&o| o != c)
                .collect();
            disguised[position] = *choice.get(&others);
        }
        let disguised: String = disguised.into_iter().collect();
        prop_assert_ne!(&original, &disguised);

        let config = DnaConfig::default();
        let reference = ReferenceDistribution::builtin();
        let a = dna_codes(&normalize(&original).chars, &config, &reference);
        let b = dna_codes(&normalize(&disguised).chars, &config, &reference);
        prop_assert!(a.len() >= 50, "2,000 characters give many windows, got {}", a.len());
        let equal = a.iter().zip(&b).filter(|(x, y)| x.code == y.code).count();
        prop_assert!(
            equal * 5 >= a.len().max(b.len()) * 4,
            "only {} of {} window codes survived",
            equal,
            a.len()
        );
    }
}
