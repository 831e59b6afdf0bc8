//! Winnowed k-grams (Schleimer, Wilkerson and Aiken, 2003): a handful of hashes per text that two
//! texts are guaranteed to share wherever they share a run of `window + k − 1` symbols.
//!
//! Every k-gram of a symbol sequence is hashed; of every `window` consecutive hashes the
//! smallest is *selected* (the rightmost one on ties, so a run of equal hashes selects one). The
//! choice depends only on the hashes in view, so two texts sharing a run of `window + k − 1`
//! symbols see the same `window` hashes there and select the same one, at the same offset
//! within the run: wherever the run stands in either text. About `2 / (window + 1)` of the
//! positions are selected, which is what makes an index of them small (a tenth of a posting
//! per character at `window` 19) while it still finds every copied passage longer than the
//! guarantee.
//!
//! Texts are read through *projections*: the canonical characters, or the toneless syllable of
//! each character (homophones share one, so a 同音字 copy selects the same syllable k-grams as
//! the work). Each projection hashes with its own seed, so their hashes never collide with each
//! other's in a shared index.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Which reading of a text the symbols are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Projection {
    /// Canonical characters (code points).
    Chars,
    /// Toneless syllable ids ([`crate::pinyin::syllable_id`]).
    Syllables,
}

impl Projection {
    /// Seed of this projection's k-gram hashes.
    fn seed(self) -> u64 {
        match self {
            Projection::Chars => 0x636f_7079_7472_6163,
            Projection::Syllables => 0x7069_6e79_696e_5f31,
        }
    }
}

/// A selected k-gram: its hash and the position of its first symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selected {
    /// Hash of the k-gram (seeded by projection).
    pub hash: u64,
    /// Index of the k-gram's first symbol in the sequence.
    pub position: u32,
}

/// Hash of every `k`-gram of `symbols`, position by position, seeded by `projection`: the
/// xxh3 of the k-gram's symbols as little-endian bytes.
pub fn kgram_hashes(symbols: &[u32], k: usize, projection: Projection) -> Vec<u64> {
    if k == 0 || symbols.len() < k {
        return Vec::new();
    }
    let seed = projection.seed();
    // The whole sequence as bytes once, so that each k-gram is a slice of it rather than a
    // copy of its symbols (hashing is most of what selecting a page's k-grams costs).
    let bytes: Vec<u8> = symbols.iter().flat_map(|s| s.to_le_bytes()).collect();
    let width = k * 4;
    (0..=symbols.len() - k)
        .map(|start| xxh3_64_with_seed(&bytes[start * 4..start * 4 + width], seed))
        .collect()
}

/// The hashes winnowing selects from `hashes` with windows of `window` hashes, in position
/// order, each selected position once. A sequence shorter than one window selects its
/// minimum. `window` 0 is read as 1 (every hash selected).
pub fn winnow(hashes: &[u64], window: usize, out: &mut Vec<Selected>) {
    out.clear();
    if hashes.is_empty() {
        return;
    }
    let window = window.max(1).min(hashes.len());
    // Positions whose hashes increase strictly from front to back: the front is the minimum of
    // the current window (rightmost on ties, since an equal hash pushes out the older one).
    let mut queue: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut last: Option<usize> = None;
    for (i, &hash) in hashes.iter().enumerate() {
        while queue.back().is_some_and(|&j| hashes[j] >= hash) {
            queue.pop_back();
        }
        queue.push_back(i);
        if i + 1 < window {
            continue;
        }
        let start = i + 1 - window;
        while queue.front().is_some_and(|&j| j < start) {
            queue.pop_front();
        }
        let chosen = queue[0];
        if last != Some(chosen) {
            out.push(Selected {
                hash: hashes[chosen],
                position: chosen as u32,
            });
            last = Some(chosen);
        }
    }
}

/// The selected k-grams of `symbols` read as `projection`: [`kgram_hashes`] then [`winnow`].
pub fn winnowed(symbols: &[u32], k: usize, window: usize, projection: Projection) -> Vec<Selected> {
    let hashes = kgram_hashes(symbols, k, projection);
    let mut out = Vec::with_capacity(hashes.len() * 2 / (window + 1) + 1);
    winnow(&hashes, window, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn symbols(text: &str) -> Vec<u32> {
        text.chars().map(|c| c as u32).collect()
    }

    #[test]
    fn the_selected_hash_is_each_windows_rightmost_minimum() {
        let hashes = [5, 3, 3, 9, 1, 4, 4, 8];
        let mut out = Vec::new();
        winnow(&hashes, 3, &mut out);
        let positions: Vec<u32> = out.iter().map(|s| s.position).collect();
        // Windows: [5 3 3] → 2, [3 3 9] → 2, [3 9 1] → 4, [9 1 4] → 4, [1 4 4] → 4,
        // [4 4 8] → 6.
        assert_eq!(positions, vec![2, 4, 6]);
    }

    #[test]
    fn a_sequence_shorter_than_a_window_selects_its_minimum() {
        let mut out = Vec::new();
        winnow(&[7, 2, 9], 10, &mut out);
        assert_eq!(
            out,
            vec![Selected {
                hash: 2,
                position: 1
            }]
        );
    }

    #[test]
    fn projections_hash_the_same_symbols_apart() {
        let text = symbols("天下大势分久必合");
        assert_ne!(
            kgram_hashes(&text, 4, Projection::Chars),
            kgram_hashes(&text, 4, Projection::Syllables)
        );
    }

    #[test]
    fn a_kgram_hash_is_the_xxh3_of_its_symbols_little_endian() {
        // What indexes already hold was filed with these hashes: they must never change.
        let text = symbols("天下大势分久必合");
        let hashes = kgram_hashes(&text, 3, Projection::Chars);
        assert_eq!(hashes.len(), text.len() - 2);
        for (start, hash) in hashes.iter().enumerate() {
            let bytes: Vec<u8> = text[start..start + 3]
                .iter()
                .flat_map(|s| s.to_le_bytes())
                .collect();
            assert_eq!(*hash, xxh3_64_with_seed(&bytes, Projection::Chars.seed()));
        }
        assert!(kgram_hashes(&text[..2], 3, Projection::Chars).is_empty());
    }

    #[test]
    fn density_is_about_two_over_window_plus_one() {
        let text: Vec<u32> = (0..20_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 3_000)
            .collect();
        let selected = winnowed(&text, 5, 19, Projection::Chars);
        let density = selected.len() as f64 / text.len() as f64;
        assert!((0.08..0.12).contains(&density), "density {density}");
    }

    proptest! {
        /// The guarantee: a run of `window + k - 1` symbols shared by two texts, wherever it
        /// stands in each, makes them share a selected hash inside the run.
        #[test]
        fn a_shared_run_of_the_guaranteed_length_shares_a_selected_hash(
            before in proptest::collection::vec(0u32..50, 0..40),
            after in proptest::collection::vec(0u32..50, 0..40),
            other in proptest::collection::vec(0u32..50, 0..40),
            run in proptest::collection::vec(0u32..50, 20..21),
            k in 2usize..6,
            window in 1usize..15,
        ) {
            let run = &run[..(window + k - 1).min(run.len())];
            let first: Vec<u32> = before.iter().chain(run).chain(&after).copied().collect();
            let second: Vec<u32> = other.iter().chain(run).copied().collect();
            let a = winnowed(&first, k, window, Projection::Chars);
            let b = winnowed(&second, k, window, Projection::Chars);
            let in_run_a: Vec<u64> = a
                .iter()
                .filter(|s| (s.position as usize) >= before.len()
                    && s.position as usize + k <= before.len() + run.len())
                .map(|s| s.hash)
                .collect();
            prop_assert!(b.iter().any(|s| in_run_a.contains(&s.hash)));
        }
    }
}
