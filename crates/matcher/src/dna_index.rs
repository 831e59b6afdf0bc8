//! DNA-code index: candidate windows by pinyin-initial DNA code, exact and near.
//!
//! A DNA code ([`copytrace_fingerprint::dna`]) is 26 digits in `0..=Q`, one per initial
//! letter. Homophone substitution (同音字) keeps every initial, hence every code, so this is the
//! candidate source that still finds a copy whose characters were swapped for same-sound ones;
//! Traditional characters and punctuation noise are absorbed earlier, by normalization. A few
//! real edits in a window move a digit or two by one, so the index also answers *near* codes:
//! every indexed code within [`code_distance`](copytrace_fingerprint::dna::code_distance) `≤ d` (the sum of per-letter digit differences).
//!
//! **Why pigeonhole blocks rather than enumerating neighbours.** Two codes at distance `≤ d`
//! differ in at most `d` digits (each differing digit adds at least 1). Cutting the 26 digits
//! into `d + 1` contiguous blocks, at least one block is then identical in both codes. One hash
//! table per block maps the block's digits to the codes having them; a query probes `d + 1`
//! buckets and checks the exact distance of what it finds there. That is the SimHash index's
//! scheme ([`crate::SimHashIndex`]) on digits instead of bits, and it answers exactly what a
//! brute-force scan would, for every `d`. Enumerating neighbours instead needs 53 lookups per
//! query for `d = 1` and about 1,400 for `d = 2` (every way to move one or two digits by ±1 or
//! one digit by ±2), which matters because the matcher queries one code per initial of a page.
//!
//! Blocks of about `26 / (d + 1)` digits are selective as long as `d` is small; the default
//! `d = 2` gives three blocks of 8–9 digits. `d` is capped at 25, one digit per block.

use std::ops::Range;

use copytrace_fingerprint::dna::{ALLOWED_LEVELS, LETTERS};

use crate::buckets::Buckets;
use crate::index::{Hit, Index, IndexError, SegmentRef, WorkId};

/// Largest near distance the pigeonhole scheme supports: 26 blocks of one digit.
pub const MAX_DNA_DISTANCE: u32 = LETTERS as u32 - 1;

/// The 26 digits of a code in base `levels + 1`, `a` first. Same result as
/// [`copytrace_fingerprint::dna::code_digits`], but splits the `u128` once into two halves of
/// 13 digits and divides 64-bit numbers by a constant from there (a multiply and a shift each),
/// which is many times faster; the matcher does this for a code at every initial of a page.
fn digits(code: u128, base: u64) -> [u8; LETTERS] {
    match base {
        2 => digits_in::<2>(code),
        4 => digits_in::<4>(code),
        8 => digits_in::<8>(code),
        _ => digits_in::<10>(code),
    }
}

fn digits_in<const BASE: u64>(code: u128) -> [u8; LETTERS] {
    let base = BASE;
    let half = u128::from(base).pow(13);
    let mut hi = (code / half) as u64;
    let mut lo = (code % half) as u64;
    let mut out = [0u8; LETTERS];
    for digit in out[13..].iter_mut().rev() {
        *digit = (lo % base) as u8;
        lo /= base;
    }
    for digit in out[..13].iter_mut().rev() {
        *digit = (hi % base) as u8;
        hi /= base;
    }
    out
}

fn distance(a: &[u8; LETTERS], b: &[u8; LETTERS]) -> u32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| u32::from(x.abs_diff(y)))
        .sum()
}

/// The pigeonhole blocks of the 26 digits, and the table key each block's digits make.
#[derive(Debug, Clone)]
struct Blocks {
    /// Digit ranges of the blocks.
    ranges: Vec<Range<usize>>,
    /// Base of the digits, `levels + 1`.
    base: u64,
}

impl Blocks {
    fn len(&self) -> usize {
        self.ranges.len()
    }

    fn key(&self, block: usize, digits: &[u8; LETTERS]) -> u64 {
        // Up to 19 digits of base ≤ 10 fit a u64 exactly. The single 26-digit block of an exact
        // index wraps, which can only merge buckets: every hit's distance is checked, and the
        // report-once test compares these same keys.
        digits[self.ranges[block].clone()]
            .iter()
            .fold(0u64, |key, &d| {
                key.wrapping_mul(self.base).wrapping_add(u64::from(d))
            })
    }

    /// The key of every block, in block order.
    fn keys(&self, digits: [u8; LETTERS]) -> impl Iterator<Item = u64> {
        (0..self.len()).map(move |block| self.key(block, &digits))
    }
}

/// In-memory index of DNA window codes answering exact and near lookups.
#[derive(Debug, Clone)]
pub struct DnaIndex {
    levels: u8,
    max_distance: u32,
    /// `(levels + 1)²⁶`, the first value that is not a code.
    limit: u128,
    blocks: Blocks,
    /// Code digits, filed in one table per block under the block's key.
    buckets: Buckets<[u8; LETTERS]>,
}

impl DnaIndex {
    /// An empty index of codes quantized to `levels` (Q, one of
    /// [`copytrace_fingerprint::dna::ALLOWED_LEVELS`]; anything else is taken as 9, the
    /// default) answering every code within `max_distance` (at most [`MAX_DNA_DISTANCE`]).
    pub fn new(levels: u8, max_distance: u32) -> Self {
        let levels = if ALLOWED_LEVELS.contains(&levels) {
            levels
        } else {
            9
        };
        let max_distance = max_distance.min(MAX_DNA_DISTANCE);
        let count = max_distance as usize + 1;
        let blocks = Blocks {
            ranges: (0..count)
                .map(|b| LETTERS * b / count..LETTERS * (b + 1) / count)
                .collect(),
            base: u64::from(levels) + 1,
        };
        DnaIndex {
            levels,
            max_distance,
            limit: (u128::from(levels) + 1).pow(LETTERS as u32),
            blocks,
            buckets: Buckets::new(count),
        }
    }

    /// The quantization depth (Q) of the codes indexed.
    pub fn levels(&self) -> u8 {
        self.levels
    }

    /// The largest code distance a query answers.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    fn base(&self) -> u64 {
        u64::from(self.levels) + 1
    }

    /// Number of pigeonhole blocks (`max_distance + 1`): the tables a code is filed in.
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// The key of each block of `code`, block order: what a shared index (Redis) files the code
    /// under. Fails like [`Index::insert`] for a code of another quantization depth.
    pub fn block_keys(&self, code: u128) -> Result<Vec<u64>, IndexError> {
        Ok(self.blocks.keys(self.checked_digits(code)?).collect())
    }

    /// The code distance between two codes of this index's depth (sum of per-letter digit
    /// differences), or `None` for a code that does not fit it.
    pub fn code_distance(&self, a: u128, b: u128) -> Option<u32> {
        Some(distance(
            &self.checked_digits(a).ok()?,
            &self.checked_digits(b).ok()?,
        ))
    }

    /// Digits of a code, refusing codes that do not fit 26 digits of this index's base (codes
    /// made with another quantization depth).
    fn checked_digits(&self, code: u128) -> Result<[u8; LETTERS], IndexError> {
        if code >= self.limit {
            return Err(IndexError::Corrupt(format!(
                "DNA code {code} has more than 26 base-{} digits",
                self.base()
            )));
        }
        Ok(digits(code, self.base()))
    }
}

impl Index<u128> for DnaIndex {
    /// Fails with [`IndexError::Corrupt`] for a code that does not fit this index's
    /// quantization depth.
    fn insert(&mut self, &code: &u128, segment: SegmentRef) -> Result<(), IndexError> {
        let digits = self.checked_digits(code)?;
        self.buckets
            .insert(digits, segment, self.blocks.keys(digits));
        Ok(())
    }

    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let blocks = &self.blocks;
        self.buckets
            .remove_work(work_id, |&digits| blocks.keys(digits));
        Ok(())
    }

    fn query(&self, &code: &u128, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        let digits = self.checked_digits(code)?;
        let mut keys = [0u64; LETTERS];
        for (key, block_key) in keys.iter_mut().zip(self.blocks.keys(digits)) {
            *key = block_key;
        }
        let probes = keys[..self.blocks.len()].iter().copied();
        self.buckets.hits(probes, out, |block, candidate| {
            let distance = distance(candidate, &digits);
            if distance > self.max_distance {
                return None;
            }
            // Report each code once: from the first block on which it agrees.
            let first_agreeing = (0..block).all(|b| self.blocks.key(b, candidate) != keys[b]);
            first_agreeing.then_some(distance)
        });
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        Ok(self.buckets.len())
    }
}

#[cfg(test)]
mod tests {
    use copytrace_fingerprint::dna::{code_digits, code_distance};

    use super::*;

    use copytrace_fingerprint::minhash::splitmix64 as splitmix;

    fn encode(digits: &[u8; LETTERS], levels: u8) -> u128 {
        digits.iter().fold(0u128, |code, &d| {
            code * (u128::from(levels) + 1) + u128::from(d)
        })
    }

    fn random_digits(state: &mut u64, levels: u8) -> [u8; LETTERS] {
        std::array::from_fn(|_| (splitmix(state) % (u64::from(levels) + 1)) as u8)
    }

    /// `digits` with `moves` random single-digit steps of ±1 that stay in `0..=levels`.
    fn nudge(mut digits: [u8; LETTERS], moves: u32, levels: u8, state: &mut u64) -> [u8; LETTERS] {
        for _ in 0..moves {
            let k = (splitmix(state) % LETTERS as u64) as usize;
            let up = splitmix(state).is_multiple_of(2);
            digits[k] = match (up, digits[k]) {
                (true, d) if d < levels => d + 1,
                (_, d) if d > 0 => d - 1,
                (_, d) => d + 1,
            };
        }
        digits
    }

    #[test]
    fn fast_digits_equal_the_fingerprint_crates_digits() {
        let mut state = 1;
        for levels in ALLOWED_LEVELS {
            for _ in 0..200 {
                let code = encode(&random_digits(&mut state, levels), levels);
                assert_eq!(
                    digits(code, u64::from(levels) + 1),
                    code_digits(code, levels)
                );
            }
        }
    }

    #[test]
    fn near_lookups_equal_a_brute_force_scan_over_code_distance() {
        for levels in ALLOWED_LEVELS {
            for max_distance in 0..=4u32 {
                let mut state = u64::from(levels) * 100 + u64::from(max_distance);
                let mut index = DnaIndex::new(levels, max_distance);
                // Clusters of codes around a few centres, so many pairs are near each other.
                let centres: Vec<[u8; LETTERS]> =
                    (0..20).map(|_| random_digits(&mut state, levels)).collect();
                let mut all = Vec::new();
                for i in 0..1500u32 {
                    let centre = centres[(splitmix(&mut state) % 20) as usize];
                    let moves = (splitmix(&mut state) % 7) as u32;
                    let code = encode(&nudge(centre, moves, levels, &mut state), levels);
                    let segment = SegmentRef {
                        work_id: i64::from(i % 5),
                        ordinal: i,
                    };
                    index.insert(&code, segment).unwrap();
                    all.push(code);
                }
                let mut near_hits = 0;
                for q in 0..100 {
                    let centre = centres[q % 20];
                    let moves = (splitmix(&mut state) % 7) as u32;
                    let query = encode(&nudge(centre, moves, levels, &mut state), levels);
                    let mut hits = Vec::new();
                    index.query(&query, &mut hits).unwrap();
                    let mut found: Vec<(u32, u32)> = hits
                        .iter()
                        .map(|h| (h.segment.ordinal, h.distance))
                        .collect();
                    found.sort_unstable();
                    let expected: Vec<(u32, u32)> = all
                        .iter()
                        .enumerate()
                        .map(|(i, &code)| (i as u32, code_distance(code, query, levels)))
                        .filter(|&(_, d)| d <= max_distance)
                        .collect();
                    assert_eq!(found, expected, "levels {levels} distance {max_distance}");
                    near_hits += expected.iter().filter(|&&(_, d)| d > 0).count();
                }
                if max_distance > 0 {
                    assert!(near_hits >= 50, "too few near codes to test ({near_hits})");
                }
            }
        }
    }

    #[test]
    fn an_exact_code_is_found_with_distance_zero() {
        let mut index = DnaIndex::new(9, 0);
        let code = encode(&[3; LETTERS], 9);
        index.insert_work(4, &[(2, code)]).unwrap();
        let mut hits = Vec::new();
        index.query(&code, &mut hits).unwrap();
        assert_eq!(
            hits,
            [Hit {
                segment: SegmentRef {
                    work_id: 4,
                    ordinal: 2
                },
                distance: 0
            }]
        );
        hits.clear();
        let mut near = [3; LETTERS];
        near[25] = 4;
        index.query(&encode(&near, 9), &mut hits).unwrap();
        assert!(hits.is_empty(), "distance 1 is beyond an exact index");
    }

    #[test]
    fn removed_works_are_no_longer_found() {
        let mut index = DnaIndex::new(9, 2);
        let a = encode(&[1; LETTERS], 9);
        let b = encode(&[5; LETTERS], 9);
        index.insert_work(1, &[(0, a), (1, b)]).unwrap();
        index.insert_work(2, &[(0, a)]).unwrap();
        index.remove_work(1).unwrap();
        assert_eq!(index.len().unwrap(), 1);
        let mut hits = Vec::new();
        index.query(&a, &mut hits).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].segment.work_id, 2);
        hits.clear();
        index.query(&b, &mut hits).unwrap();
        assert!(hits.is_empty());
        index.remove_work(2).unwrap();
        assert!(index.is_empty().unwrap());
        assert!(index.buckets.tables_are_empty());
    }

    #[test]
    fn codes_too_large_for_the_quantization_are_refused() {
        let mut index = DnaIndex::new(3, 2);
        let segment = SegmentRef {
            work_id: 1,
            ordinal: 0,
        };
        assert!(matches!(
            index.insert(&4u128.pow(26), segment),
            Err(IndexError::Corrupt(_))
        ));
        assert!(index.insert(&(4u128.pow(26) - 1), segment).is_ok());
    }
}
