//! Character-level precision and recall of an extracted text against a hand-marked one.
//!
//! Both texts are reduced to their non-whitespace characters (`char::is_whitespace`, which
//! covers the no-break and ideographic spaces used for indentation), so paragraph breaks,
//! indentation and line wrapping do not count. The overlap is the length `L` of the longest
//! common subsequence of the two character sequences:
//!
//! - precision = `L / |extracted|` (how much of what we kept belongs to the main text),
//! - recall = `L / |expected|` (how much of the main text we kept).
//!
//! LCS rather than a multiset of characters because a multiset is blind to order and to
//! duplication: a sidebar written in the same common characters as the chapter, or a chapter
//! extracted twice, would score well as a multiset. Under LCS each expected character can be
//! matched at most once and only in order. An empty extraction scores 0 on both.
//!
//! The LCS is computed with the bit-parallel algorithm of Hyyrö (2004), a refinement of
//! Allison and Dix (1986): one machine word holds 64 cells of a DP row, so a page of a few
//! thousand characters against its expected text costs well under a million word operations.

use std::collections::HashMap;

/// Precision, recall and the counts behind them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Non-whitespace characters in the extracted text.
    pub extracted: usize,
    /// Non-whitespace characters in the expected text.
    pub expected: usize,
    /// Length of their longest common subsequence.
    pub common: usize,
}

impl Score {
    pub fn of(extracted: &str, expected: &str) -> Score {
        let e = significant(extracted);
        let g = significant(expected);
        Score {
            extracted: e.len(),
            expected: g.len(),
            common: lcs_len(&g, &e),
        }
    }

    pub fn precision(&self) -> f64 {
        ratio(self.common, self.extracted)
    }

    pub fn recall(&self) -> f64 {
        ratio(self.common, self.expected)
    }

    /// Sums the counts, so the overall figures weigh every character equally (micro average).
    pub fn add(&mut self, other: Score) {
        self.extracted += other.extracted;
        self.expected += other.expected;
        self.common += other.common;
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn significant(s: &str) -> Vec<char> {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Length of the longest common subsequence of `a` and `b`, bit-parallel over `a`.
///
/// `v` holds one bit per position of `a`; a zero bit marks a position where the LCS of the
/// prefixes grows. For each character of `b` with match mask `m`: `u = v & m`,
/// `v = (v + u) | (v & !m)`, the addition carrying across words. The LCS is the number of zero
/// bits among the first `a.len()`.
pub fn lcs_len(a: &[char], b: &[char]) -> usize {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    let words = a.len().div_ceil(64);
    let mut masks: HashMap<char, Vec<u64>> = HashMap::new();
    for (i, &c) in a.iter().enumerate() {
        masks.entry(c).or_insert_with(|| vec![0; words])[i / 64] |= 1 << (i % 64);
    }
    let mut v = vec![u64::MAX; words];
    for c in b {
        let Some(m) = masks.get(c) else {
            continue;
        };
        let mut carry = 0u64;
        for (vk, &mk) in v.iter_mut().zip(m) {
            let u = *vk & mk;
            let (sum, c1) = vk.overflowing_add(u);
            let (sum, c2) = sum.overflowing_add(carry);
            carry = u64::from(c1 || c2);
            *vk = sum | (*vk & !mk);
        }
    }
    let mut zeros = 0;
    for (k, &word) in v.iter().enumerate() {
        let bits = (a.len() - k * 64).min(64);
        let valid = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        zeros += (!word & valid).count_ones() as usize;
    }
    zeros
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook O(n·m) dynamic programme, as the reference.
    fn naive(a: &[char], b: &[char]) -> usize {
        let mut prev = vec![0usize; b.len() + 1];
        for &x in a {
            let mut row = vec![0usize; b.len() + 1];
            for (j, &y) in b.iter().enumerate() {
                row[j + 1] = if x == y {
                    prev[j] + 1
                } else {
                    row[j].max(prev[j + 1])
                };
            }
            prev = row;
        }
        prev[b.len()]
    }

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn lcs_matches_known_values() {
        assert_eq!(lcs_len(&chars("ABCBDAB"), &chars("BDCABA")), 4);
        assert_eq!(lcs_len(&chars("天才一秒记住"), &chars("记住天才")), 2);
        assert_eq!(lcs_len(&chars(""), &chars("abc")), 0);
        assert_eq!(lcs_len(&chars("abc"), &chars("abc")), 3);
        assert_eq!(lcs_len(&chars("abc"), &chars("xyz")), 0);
    }

    #[test]
    fn bit_parallel_lcs_agrees_with_the_dynamic_programme_across_word_boundaries() {
        // A small linear congruential generator over a 4-letter alphabet, so there are many
        // matches and long carries; lengths cross the 64- and 128-bit word boundaries.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        for _ in 0..300 {
            let la = next() % 200;
            let lb = next() % 200;
            let a: Vec<char> = (0..la)
                .map(|_| ['甲', '乙', 'c', 'd'][next() % 4])
                .collect();
            let b: Vec<char> = (0..lb)
                .map(|_| ['甲', '乙', 'c', 'd'][next() % 4])
                .collect();
            assert_eq!(lcs_len(&a, &b), naive(&a, &b), "{a:?} / {b:?}");
        }
    }

    #[test]
    fn whitespace_does_not_count_and_order_does() {
        let s = Score::of("第一段\n　　第二段", "第一段 第二段");
        assert_eq!((s.precision(), s.recall()), (1.0, 1.0));
        // The same characters in reverse order match only in part (a multiset would say 1.0).
        let s = Score::of("段二第段一第", "第一段第二段");
        assert_eq!((s.precision(), s.recall()), (0.5, 0.5));
        // Extra text lowers precision, missing text lowers recall.
        let s = Score::of("正文正文广告", "正文正文");
        assert_eq!((s.precision(), s.recall()), (4.0 / 6.0, 1.0));
        let s = Score::of("正文", "正文正文");
        assert_eq!((s.precision(), s.recall()), (1.0, 0.5));
        assert_eq!(Score::of("", "正文").precision(), 0.0);
    }
}
