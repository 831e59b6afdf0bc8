//! Pinyin-initial DNA: a fingerprint of how a text *sounds*, robust to homophones.
//!
//! Homophone substitution (同音字), Traditional characters and re-encoding change the
//! characters of a copy but not its pronunciation. The DNA fingerprint therefore forgets the
//! characters and keeps only the first letter of each syllable's pinyin
//! ([`crate::pinyin::initials`]), then describes each stretch of text by which letters it
//! over- or under-uses:
//!
//! 1. **Initials.** Canonical characters (see [`crate::normalize()`]) → initials `a`–`z`;
//!    characters without an initial (digits, other scripts) are skipped, so windows count
//!    letters only.
//! 2. **Windows.** Every `granularity` consecutive initials form a window; windows start every
//!    `step = max(1, round(granularity × (1 − overlap)))` initials, and one more window is
//!    added at the end when the last regular one stops short of it, so every initial is
//!    covered. A text with fewer initials than `granularity` is one window.
//! 3. **Letter frequencies minus a reference.** In each window, the share of each of the 26
//!    letters minus its share in a [`ReferenceDistribution`] (the average of the library).
//!    Without the subtraction, the letters every Chinese text uses a lot (`y`, `s`, `z`, `j`)
//!    would dominate every window alike; after it, what is left is what is *particular* to
//!    this passage.
//! 4. **Quantization into [0, Q]** (`Q` = [`DnaConfig::levels`], one of 9, 7, 3, 1): per
//!    window **min–max scaling** of the 26 differences, rounded half up,
//!    `q = round(Q × (d − min) / (max − min))`. The most over-used letter gets `Q`, the most
//!    under-used gets 0, the others fall in between. Scaling per window uses the whole range in
//!    every window whatever its length (a short tail window has larger swings than a long one)
//!    and keeps the *shape* of the deviation, which is what identifies a passage, rather than
//!    its size, which mostly reflects the window length. Smaller `Q` gives coarser codes that
//!    survive more edits but tell fewer passages apart. A window whose letters match the
//!    reference exactly (all differences equal, hence zero) gets all digits 0. The arithmetic
//!    is exact integer arithmetic, so codes are identical on every platform.
//! 5. **Code.** The 26 digits, `a` most significant, read as one base-`Q + 1` number: a
//!    `u128` (at most 10²⁶ < 2⁸⁷).
//!
//! Codes depend on the configuration and the reference distribution: fingerprints are only
//! comparable when both were made with the same ones, so an index stores them alongside.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, AlgorithmError, Comparison, Fingerprint};
use crate::pinyin::initials;

/// Number of letters in a DNA code, `a` to `z`.
pub const LETTERS: usize = 26;

/// The quantization depths a configuration may use (the values of `Q`).
pub const ALLOWED_LEVELS: [u8; 4] = [1, 3, 7, 9];

/// Fixed-point scale of [`ReferenceDistribution`] weights: they sum to about this, which keeps
/// the share of a letter exact to about 10⁻⁷, far below what one initial in a window moves.
const REFERENCE_SCALE: u128 = 1 << 24;

/// Why a DNA configuration or reference was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DnaError {
    /// `levels` is not one of [`ALLOWED_LEVELS`].
    #[error("DNA levels must be one of 1, 3, 7, 9, got {0}")]
    InvalidLevels(u8),
    /// A window must hold at least one initial.
    #[error("DNA granularity must be at least 1 initial")]
    ZeroGranularity,
    /// Overlap must be in [0, 1); 1 would never advance.
    #[error("DNA overlap must be in [0, 1), got {0}")]
    InvalidOverlap(f64),
    /// A reference distribution needs at least one letter.
    #[error("a DNA reference distribution needs at least one letter")]
    EmptyReference,
    /// A match threshold is a similarity, in [0, 1].
    #[error("DNA match threshold must be in [0, 1], got {0}")]
    InvalidThreshold(f64),
}

/// How a text is cut into DNA windows and how finely each window is quantized. Fields are
/// private so that every value in use has been validated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DnaConfigFields", into = "DnaConfigFields")]
pub struct DnaConfig {
    granularity: usize,
    overlap: f64,
    levels: u8,
}

/// The serialized form of [`DnaConfig`], validated on the way in.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct DnaConfigFields {
    granularity: usize,
    overlap: f64,
    levels: u8,
}

impl TryFrom<DnaConfigFields> for DnaConfig {
    type Error = DnaError;
    fn try_from(f: DnaConfigFields) -> Result<Self, DnaError> {
        DnaConfig::new(f.granularity, f.overlap, f.levels)
    }
}

impl From<DnaConfig> for DnaConfigFields {
    fn from(c: DnaConfig) -> Self {
        DnaConfigFields {
            granularity: c.granularity,
            overlap: c.overlap,
            levels: c.levels,
        }
    }
}

impl Default for DnaConfig {
    /// 64 initials per window (about two sentences of prose, enough for letter frequencies to
    /// mean something), windows overlapping by half, and the finest quantization, 0–9.
    fn default() -> Self {
        DnaConfig {
            granularity: 64,
            overlap: 0.5,
            levels: 9,
        }
    }
}

impl DnaConfig {
    /// A validated configuration: `granularity ≥ 1` initials per window, `overlap` in [0, 1),
    /// `levels` (Q) one of [`ALLOWED_LEVELS`].
    pub fn new(granularity: usize, overlap: f64, levels: u8) -> Result<Self, DnaError> {
        if granularity == 0 {
            return Err(DnaError::ZeroGranularity);
        }
        if !(0.0..1.0).contains(&overlap) {
            return Err(DnaError::InvalidOverlap(overlap));
        }
        if !ALLOWED_LEVELS.contains(&levels) {
            return Err(DnaError::InvalidLevels(levels));
        }
        Ok(DnaConfig {
            granularity,
            overlap,
            levels,
        })
    }

    /// Initials per window (`m`).
    pub fn granularity(&self) -> usize {
        self.granularity
    }

    /// Share of a window that the next window repeats, in [0, 1).
    pub fn overlap(&self) -> f64 {
        self.overlap
    }

    /// Largest digit of a code (`Q`); digits run over 0..=Q.
    pub fn levels(&self) -> u8 {
        self.levels
    }

    /// Initials between consecutive window starts: `max(1, round(m × (1 − overlap)))`.
    pub fn step(&self) -> usize {
        ((self.granularity as f64 * (1.0 - self.overlap)).round() as usize).max(1)
    }
}

/// The letter distribution a window is measured against, normally the average over the whole
/// library, so a code says how a passage differs from the library's usual sound.
///
/// Stored as fixed-point weights (summing to about 2²⁴) rather than floats, so that it
/// serializes exactly and codes computed before and after storing it are identical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ReferenceFields", into = "ReferenceFields")]
pub struct ReferenceDistribution {
    weights: [u32; LETTERS],
}

/// The serialized form of [`ReferenceDistribution`], validated on the way in.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReferenceFields {
    weights: [u32; LETTERS],
}

impl TryFrom<ReferenceFields> for ReferenceDistribution {
    type Error = DnaError;
    fn try_from(f: ReferenceFields) -> Result<Self, DnaError> {
        ReferenceDistribution::from_counts(&f.weights.map(u64::from))
    }
}

impl From<ReferenceDistribution> for ReferenceFields {
    fn from(r: ReferenceDistribution) -> Self {
        ReferenceFields { weights: r.weights }
    }
}

/// Built-in reference: initial-letter counts of the 3,755 level-1 characters of GB 2312
/// (its most common characters), each character counted once, read with the default pinyin
/// of [`crate::pinyin`]. Recomputed by the test `builtin_reference_matches_gb2312_level_1`.
///
/// It is an inventory of common characters, not a frequency-weighted corpus: very frequent
/// characters (的, 是, 一) count as much as any other common one. It is a sensible centre for
/// texts of any library; a library's own average ([`ReferenceDistribution::from_texts`]) is
/// better once enough text has been added.
#[rustfmt::skip]
const BUILTIN_COUNTS: [u64; LETTERS] = [
    //  a    b    c    d    e    f    g    h    i    j    k    l    m
       36, 182, 235, 184,  22, 124, 157, 182,   0, 295,  99, 248, 151,
    //  n    o    p    q    r    s    t    u    v    w    x    y    z
       82,   8, 125, 155,  59, 287, 156,   0,   0, 120, 222, 306, 320,
];

impl Default for ReferenceDistribution {
    fn default() -> Self {
        ReferenceDistribution::builtin()
    }
}

impl ReferenceDistribution {
    /// The built-in reference, for before a library has its own (see `BUILTIN_COUNTS` in the
    /// source: the initials of the 3,755 level-1 characters of GB 2312, each counted once).
    pub fn builtin() -> Self {
        ReferenceDistribution::from_counts(&BUILTIN_COUNTS).expect("built-in counts are not empty")
    }

    /// A reference from letter counts, `counts[0]` for `a` to `counts[25]` for `z`.
    pub fn from_counts(counts: &[u64; LETTERS]) -> Result<Self, DnaError> {
        let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
        if total == 0 {
            return Err(DnaError::EmptyReference);
        }
        let weights =
            counts.map(|c| ((u128::from(c) * REFERENCE_SCALE + total / 2) / total) as u32);
        Ok(ReferenceDistribution { weights })
    }

    /// The average letter distribution of a library: counts the letters `a`–`z` in each text's
    /// initials (as produced by [`crate::pinyin::initials`]; other bytes are ignored), so long
    /// texts weigh more than short ones, as they do in the windows compared against it.
    pub fn from_texts<'a, I>(texts: I) -> Result<Self, DnaError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut counts = [0u64; LETTERS];
        for text in texts {
            for &b in text {
                if b.is_ascii_lowercase() {
                    counts[usize::from(b - b'a')] += 1;
                }
            }
        }
        ReferenceDistribution::from_counts(&counts)
    }

    /// Fixed-point weights, `a` first; their sum is the denominator of each letter's share.
    pub fn weights(&self) -> &[u32; LETTERS] {
        &self.weights
    }

    /// The share of `letter` (`b'a'`–`b'z'`) in the reference, 0 for anything else; for
    /// reports and diagnostics.
    pub fn share(&self, letter: u8) -> f64 {
        if !letter.is_ascii_lowercase() {
            return 0.0;
        }
        let total: u64 = self.weights.iter().map(|&w| u64::from(w)).sum();
        f64::from(self.weights[usize::from(letter - b'a')]) / total as f64
    }
}

/// One DNA window: canonical characters `start..end` and their code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnaWindow {
    /// Canonical position of the window's first initial.
    pub start: usize,
    /// One past the canonical position of the window's last initial.
    pub end: usize,
    /// The window's 26 quantized letter deviations as one base-`Q + 1` number.
    pub code: u128,
}

/// DNA windows of canonical characters, in text order. A text without any initial (empty,
/// digits only) gives no window.
pub fn dna_codes(
    chars: &[char],
    config: &DnaConfig,
    reference: &ReferenceDistribution,
) -> Vec<DnaWindow> {
    dna_codes_of_initials(&initials(chars), config, reference)
}

/// [`dna_codes`] of a text given as its initials, one byte per canonical character (`a`–`z`,
/// anything else skipped, as [`crate::pinyin::initials`] produces them): for a reading of a
/// text that is not its characters' default pinyin, such as the matcher's reading of Latin
/// letters on a page as romanized syllables. Window positions index `initials`.
pub fn dna_codes_of_initials(
    initials: &[u8],
    config: &DnaConfig,
    reference: &ReferenceDistribution,
) -> Vec<DnaWindow> {
    let letters: Vec<(usize, usize)> = initials
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, b)| b.is_ascii_lowercase())
        .map(|(position, b)| (position, usize::from(b - b'a')))
        .collect();
    let n = letters.len();
    if n == 0 {
        return Vec::new();
    }
    let m = config.granularity.min(n);
    let step = config.step();
    let mut starts: Vec<usize> = (0..=n - m).step_by(step).collect();
    if starts.last().is_some_and(|&last| last + m < n) {
        starts.push(n - m);
    }
    let ref_total: u128 = reference.weights.iter().map(|&w| u128::from(w)).sum();
    // Sliding letter counts over letters[lo..hi].
    let mut counts = [0u64; LETTERS];
    let (mut lo, mut hi) = (0usize, 0usize);
    starts
        .into_iter()
        .map(|start| {
            let end = start + m;
            if start >= hi {
                counts = [0; LETTERS];
                lo = start;
                hi = start;
            }
            while lo < start {
                counts[letters[lo].1] -= 1;
                lo += 1;
            }
            while hi < end {
                counts[letters[hi].1] += 1;
                hi += 1;
            }
            DnaWindow {
                start: letters[start].0,
                end: letters[end - 1].0 + 1,
                code: encode(&counts, m, &reference.weights, ref_total, config.levels),
            }
        })
        .collect()
}

/// Quantizes one window's letter counts (summing to `len`) against the reference into a code.
fn encode(
    counts: &[u64; LETTERS],
    len: usize,
    weights: &[u32; LETTERS],
    ref_total: u128,
    levels: u8,
) -> u128 {
    // The usual windows (tens of initials against a reference summing to about 2²⁴) keep every
    // intermediate below 2⁵⁰, so 64-bit arithmetic gives the same digits and avoids 128-bit
    // divisions, which dominate when a page is read at every initial.
    if (len as u128) * ref_total < 1 << 40 {
        encode_small(counts, len as i64, weights, ref_total as i64, levels)
    } else {
        encode_wide(counts, len, weights, ref_total, levels)
    }
}

/// [`encode`] in 128-bit arithmetic, for any window length.
fn encode_wide(
    counts: &[u64; LETTERS],
    len: usize,
    weights: &[u32; LETTERS],
    ref_total: u128,
    levels: u8,
) -> u128 {
    // d_k = counts_k / len − w_k / ref_total, scaled by len × ref_total to stay in integers.
    let diffs: [i128; LETTERS] = std::array::from_fn(|k| {
        (u128::from(counts[k]) * ref_total) as i128 - (u128::from(weights[k]) * len as u128) as i128
    });
    quantize(diffs, levels)
}

/// [`encode`] in 64-bit arithmetic, for `len × ref_total < 2⁴⁰`: differences then stay below
/// 2⁴⁰ in magnitude, their range below 2⁴¹ and `(d − min) × 2Q + range` below 2⁴⁷.
fn encode_small(
    counts: &[u64; LETTERS],
    len: i64,
    weights: &[u32; LETTERS],
    ref_total: i64,
    levels: u8,
) -> u128 {
    let diffs: [i64; LETTERS] =
        std::array::from_fn(|k| counts[k] as i64 * ref_total - i64::from(weights[k]) * len);
    quantize(diffs, levels)
}

/// The code of the scaled letter differences: each spread linearly over `0..=levels` between
/// the smallest and the largest, then the digits read in base `levels + 1`. Generic over the
/// integer width so [`encode_small`] keeps its 64-bit divisions and [`encode_wide`] its
/// 128-bit ones, with one copy of the rounding.
fn quantize<T>(diffs: [T; LETTERS], levels: u8) -> u128
where
    T: Copy
        + Ord
        + From<u8>
        + Into<i128>
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    let min = *diffs.iter().min().expect("26 letters");
    let max = *diffs.iter().max().expect("26 letters");
    let range = max - min;
    let (zero, two, q) = (T::from(0), T::from(2), T::from(levels));
    diffs.iter().fold(0u128, |code, &d| {
        let digit = if range == zero {
            zero
        } else {
            // round(q × (d − min) / range), halves rounded up.
            ((d - min) * two * q + range) / (two * range)
        };
        code * (u128::from(levels) + 1) + Into::<i128>::into(digit) as u128
    })
}

/// The 26 digits of a code, `a` first. Panics if `levels` is not one of [`ALLOWED_LEVELS`].
pub fn code_digits(code: u128, levels: u8) -> [u8; LETTERS] {
    assert!(
        ALLOWED_LEVELS.contains(&levels),
        "DNA levels must be one of 1, 3, 7, 9, got {levels}"
    );
    let base = u128::from(levels) + 1;
    let mut digits = [0u8; LETTERS];
    let mut rest = code;
    for digit in digits.iter_mut().rev() {
        *digit = (rest % base) as u8;
        rest /= base;
    }
    digits
}

/// Sum over the 26 letters of the difference between the two codes' digits: 0 for equal codes,
/// small for windows that differ by a few initials, so an index can look up *near* codes when
/// a copy was edited a little. Panics if `levels` is not one of [`ALLOWED_LEVELS`].
pub fn code_distance(a: u128, b: u128, levels: u8) -> u32 {
    code_digits(a, levels)
        .iter()
        .zip(code_digits(b, levels))
        .map(|(&x, y)| u32::from(x.abs_diff(y)))
        .sum()
}

/// The DNA fingerprint behind the shared [`Algorithm`] interface.
#[derive(Debug, Clone, PartialEq)]
pub struct DnaAlgorithm {
    config: DnaConfig,
    reference: ReferenceDistribution,
    threshold: f64,
}

impl Default for DnaAlgorithm {
    /// Default configuration, built-in reference and a provisional threshold of 0.5 (half of
    /// the smaller text's windows found in the other), until the quality benchmark measures a
    /// better one.
    fn default() -> Self {
        DnaAlgorithm {
            config: DnaConfig::default(),
            reference: ReferenceDistribution::builtin(),
            threshold: 0.5,
        }
    }
}

impl DnaAlgorithm {
    /// Version of the DNA output; stored with every DNA fingerprint.
    pub const VERSION: u32 = 1;

    /// A DNA algorithm; `threshold` is the similarity in [0, 1] from which two texts match.
    pub fn new(
        config: DnaConfig,
        reference: ReferenceDistribution,
        threshold: f64,
    ) -> Result<Self, DnaError> {
        if !(0.0..=1.0).contains(&threshold) {
            return Err(DnaError::InvalidThreshold(threshold));
        }
        Ok(DnaAlgorithm {
            config,
            reference,
            threshold,
        })
    }

    /// The window and quantization parameters.
    pub fn config(&self) -> &DnaConfig {
        &self.config
    }

    /// The reference distribution codes are measured against.
    pub fn reference(&self) -> &ReferenceDistribution {
        &self.reference
    }

    /// Similarity from which two texts count as a match.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

/// Share of the codes of the shorter list that also occur in the longer one, counted as
/// multisets (a code occurring twice in the shorter list needs two occurrences in the longer
/// one). Measuring against the *shorter* text makes an excerpt copied into a long page, or a
/// page holding a whole chapter of a longer work, score as high as a full copy. 0 when either
/// list is empty: no windows, no evidence.
pub fn shared_code_share(a: &[u128], b: &[u128]) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0.0;
    }
    let mut available: HashMap<u128, usize> = HashMap::with_capacity(large.len());
    for &code in large {
        *available.entry(code).or_default() += 1;
    }
    let shared = small
        .iter()
        .filter(|code| match available.get_mut(code) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        })
        .count();
    shared as f64 / small.len() as f64
}

impl Algorithm for DnaAlgorithm {
    fn name(&self) -> &'static str {
        "dna"
    }

    fn version(&self) -> u32 {
        Self::VERSION
    }

    fn fingerprint(&self, chars: &[char]) -> Fingerprint {
        Fingerprint::Dna(
            dna_codes(chars, &self.config, &self.reference)
                .into_iter()
                .map(|w| w.code)
                .collect(),
        )
    }

    /// Similarity is [`shared_code_share`]; there is no natural distance between code lists.
    fn compare(&self, a: &Fingerprint, b: &Fingerprint) -> Result<Comparison, AlgorithmError> {
        let (Fingerprint::Dna(a), Fingerprint::Dna(b)) = (a, b) else {
            return Err(AlgorithmError::Incompatible(
                "DNA compares only DNA fingerprints".into(),
            ));
        };
        let similarity = shared_code_share(a, b);
        Ok(Comparison {
            similarity,
            distance: None,
            is_match: similarity >= self.threshold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize;
    use crate::pinyin::initial;

    const PASSAGE: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
                           手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\
                           远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了。";

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn codes(text: &str, config: &DnaConfig) -> Vec<u128> {
        dna_codes(
            &normalize(text).chars,
            config,
            &ReferenceDistribution::builtin(),
        )
        .into_iter()
        .map(|w| w.code)
        .collect()
    }

    fn small(levels: u8) -> DnaConfig {
        DnaConfig::new(16, 0.5, levels).unwrap()
    }

    #[test]
    fn homophone_substitution_keeps_initials() {
        let original = "他在公园里散步，看见一只小鸟飞过天空";
        let disguised = "她再攻元理伞布，看剑一只晓鸟非过添空";
        assert_eq!(
            crate::pinyin::syllable_ids(&chars(original)),
            crate::pinyin::syllable_ids(&chars(disguised))
        );
        assert_eq!(codes(original, &small(9)), codes(disguised, &small(9)));
        assert_ne!(normalize(original).text(), normalize(disguised).text());
    }

    #[test]
    fn codes_are_deterministic() {
        let config = DnaConfig::default();
        let first = codes(PASSAGE, &config);
        assert!(!first.is_empty());
        assert_eq!(first, codes(PASSAGE, &config));
        assert_eq!(first, codes(PASSAGE, &DnaConfig::new(64, 0.5, 9).unwrap()));
    }

    #[test]
    fn traditional_and_simplified_give_the_same_codes() {
        let traditional = "夜色漸深，雨水順著屋簷滴落下來。少年推開木門，看見一個披著蓑衣的陌生人站在院中，\
                           手裡提著一盞昏黃的燈籠。他的眼睛像是藏著整片星空，沉默地望著這座破舊的小院。\
                           遠處傳來幾聲犬吠，村子裡的燈火一盞接一盞地熄滅了。";
        for levels in ALLOWED_LEVELS {
            assert_eq!(
                codes(traditional, &small(levels)),
                codes(PASSAGE, &small(levels))
            );
        }
    }

    #[test]
    fn levels_change_the_code_range() {
        for levels in ALLOWED_LEVELS {
            let base = u128::from(levels) + 1;
            let windows = codes(PASSAGE, &small(levels));
            assert!(windows.len() > 3);
            for code in windows {
                assert!(
                    code < base.pow(26),
                    "code {code} fits 26 base-{base} digits"
                );
                let digits = code_digits(code, levels);
                // Min–max scaling puts the most over-used letter at Q, the most under-used at 0.
                assert_eq!(digits.iter().max(), Some(&levels));
                assert_eq!(digits.iter().min(), Some(&0));
            }
        }
        assert_ne!(codes(PASSAGE, &small(9)), codes(PASSAGE, &small(3)));
    }

    #[test]
    fn empty_text_gives_no_windows() {
        let reference = ReferenceDistribution::builtin();
        let config = DnaConfig::default();
        assert!(dna_codes(&[], &config, &reference).is_empty());
        assert!(dna_codes(&chars("2026０１"), &config, &reference).is_empty());
    }

    #[test]
    fn bad_config_is_refused() {
        assert_eq!(DnaConfig::new(0, 0.5, 9), Err(DnaError::ZeroGranularity));
        assert_eq!(
            DnaConfig::new(8, 1.0, 9),
            Err(DnaError::InvalidOverlap(1.0))
        );
        assert_eq!(
            DnaConfig::new(8, -0.1, 9),
            Err(DnaError::InvalidOverlap(-0.1))
        );
        assert!(matches!(
            DnaConfig::new(8, f64::NAN, 9),
            Err(DnaError::InvalidOverlap(_))
        ));
        for levels in [0, 2, 5, 8, 10, 255] {
            assert_eq!(
                DnaConfig::new(8, 0.5, levels),
                Err(DnaError::InvalidLevels(levels))
            );
        }
        assert!(DnaConfig::new(1, 0.0, 1).is_ok());
        assert_eq!(
            ReferenceDistribution::from_counts(&[0; LETTERS]),
            Err(DnaError::EmptyReference)
        );
        assert!(ReferenceDistribution::from_texts([&b"123"[..]]).is_err());
        assert_eq!(
            DnaAlgorithm::new(DnaConfig::default(), ReferenceDistribution::builtin(), 1.5),
            Err(DnaError::InvalidThreshold(1.5))
        );
    }

    #[test]
    fn a_window_is_quantized_by_min_max_scaling_of_the_deviations() {
        // Uniform reference: every letter's share is 1/26. In "aabb", a and b are over-used
        // (+1/2 − 1/26), every other letter under-used (−1/26): a, b → 9, the rest → 0.
        let uniform = ReferenceDistribution::from_counts(&[1; LETTERS]).unwrap();
        let config = DnaConfig::new(4, 0.0, 9).unwrap();
        let windows = dna_codes(&chars("aabb"), &config, &uniform);
        assert_eq!(
            windows,
            [DnaWindow {
                start: 0,
                end: 4,
                code: 99 * 10u128.pow(24)
            }]
        );
        // Three levels: "aaab" puts a at 3, b at round(3 × (1/4) / (3/4)) = 1.
        let config = DnaConfig::new(4, 0.0, 3).unwrap();
        let code = dna_codes(&chars("aaab"), &config, &uniform)[0].code;
        let mut expected = [0u8; LETTERS];
        expected[0] = 3;
        expected[1] = 1;
        assert_eq!(code_digits(code, 3), expected);
    }

    #[test]
    fn windows_step_by_the_overlap_and_cover_the_tail() {
        let uniform = ReferenceDistribution::from_counts(&[1; LETTERS]).unwrap();
        let text = chars("abcdefghij"); // 10 initials
        let config = DnaConfig::new(4, 0.5, 9).unwrap(); // step 2
        let spans: Vec<(usize, usize)> = dna_codes(&text, &config, &uniform)
            .iter()
            .map(|w| (w.start, w.end))
            .collect();
        assert_eq!(spans, [(0, 4), (2, 6), (4, 8), (6, 10)]);
        let config = DnaConfig::new(4, 0.25, 9).unwrap(); // step 3, plus a tail window
        let spans: Vec<(usize, usize)> = dna_codes(&text, &config, &uniform)
            .iter()
            .map(|w| (w.start, w.end))
            .collect();
        assert_eq!(spans, [(0, 4), (3, 7), (6, 10)]);
        let config = DnaConfig::new(4, 0.0, 9).unwrap();
        let spans: Vec<(usize, usize)> = dna_codes(&text, &config, &uniform)
            .iter()
            .map(|w| (w.start, w.end))
            .collect();
        assert_eq!(spans, [(0, 4), (4, 8), (6, 10)]);
    }

    #[test]
    fn windows_count_initials_and_skip_digits() {
        let uniform = ReferenceDistribution::from_counts(&[1; LETTERS]).unwrap();
        let config = DnaConfig::new(64, 0.5, 9).unwrap();
        // A text shorter than the granularity is one window, from its first to its last initial.
        let windows = dna_codes(&chars("12ab3c4"), &config, &uniform);
        assert_eq!(windows.len(), 1);
        assert_eq!((windows[0].start, windows[0].end), (2, 6));
        assert_eq!(
            windows[0].code,
            dna_codes(&chars("abc"), &config, &uniform)[0].code
        );
    }

    #[test]
    fn reference_from_texts_counts_letters_only() {
        let reference =
            ReferenceDistribution::from_texts([&b"aab"[..], &[0, b'b', b'7'][..]]).unwrap();
        assert_eq!(reference.share(b'a'), 0.5);
        assert_eq!(reference.share(b'b'), 0.5);
        assert_eq!(reference.share(b'c'), 0.0);
        let builtin = ReferenceDistribution::default();
        let total: f64 = (b'a'..=b'z').map(|l| builtin.share(l)).sum();
        assert!((total - 1.0).abs() < 1e-6);
        assert!(builtin.share(b'z') > builtin.share(b'o'));
    }

    #[test]
    fn the_64_bit_encoding_equals_the_128_bit_one() {
        let reference = ReferenceDistribution::builtin();
        let ref_total: u128 = reference.weights.iter().map(|&w| u128::from(w)).sum();
        let mut state = 0x1234_5678_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        for len in [1usize, 2, 7, 16, 64, 65, 500, 10_000] {
            for levels in ALLOWED_LEVELS {
                for _ in 0..50 {
                    let mut counts = [0u64; LETTERS];
                    for _ in 0..len {
                        // Skewed towards a few letters, as real windows are.
                        let k = (next() % 26).min(next() % 26) as usize;
                        counts[k] += 1;
                    }
                    assert_eq!(
                        encode_small(
                            &counts,
                            len as i64,
                            &reference.weights,
                            ref_total as i64,
                            levels
                        ),
                        encode_wide(&counts, len, &reference.weights, ref_total, levels),
                        "len {len} levels {levels} counts {counts:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn code_distance_sums_digit_differences() {
        let a = code_from_digits(&[(0, 9), (1, 3)], 9);
        let b = code_from_digits(&[(0, 7), (1, 3), (25, 2)], 9);
        assert_eq!(code_distance(a, a, 9), 0);
        assert_eq!(code_distance(a, b, 9), 2 + 2);
        assert_eq!(code_distance(b, a, 9), 4);
    }

    fn code_from_digits(digits: &[(usize, u128)], levels: u8) -> u128 {
        let base = u128::from(levels) + 1;
        digits
            .iter()
            .map(|&(k, d)| d * base.pow(25 - k as u32))
            .sum()
    }

    #[test]
    fn the_algorithm_matches_copies_and_excerpts_but_not_other_texts() {
        let dna = DnaAlgorithm::default();
        assert_eq!((dna.name(), dna.version()), ("dna", 1));
        let text = normalize(&PASSAGE.repeat(4)).chars;
        let work = dna.fingerprint(&text);
        let copy = dna.fingerprint(&text);
        let same = dna.compare(&work, &copy).unwrap();
        assert_eq!(same.similarity, 1.0);
        assert!(same.is_match);
        let other = dna.fingerprint(&normalize(
            "The quick brown fox jumps over the lazy dog while the farmer sleeps under an old tree \
             and dreams of rain, harvest, markets and the long road home through the quiet hills.",
        ).chars);
        let different = dna.compare(&work, &other).unwrap();
        assert!(!different.is_match, "{different:?}");
        assert!(dna.compare(&work, &Fingerprint::SimHash(0)).is_err());
        let empty = dna.fingerprint(&[]);
        assert_eq!(dna.compare(&work, &empty).unwrap().similarity, 0.0);
    }

    #[test]
    fn shared_code_share_counts_multisets_against_the_shorter_list() {
        assert_eq!(shared_code_share(&[1, 1, 2], &[1, 2, 3, 4]), 2.0 / 3.0);
        assert_eq!(shared_code_share(&[1, 2, 3, 4], &[1, 1, 2]), 2.0 / 3.0);
        assert_eq!(shared_code_share(&[5], &[5, 6, 7]), 1.0);
        assert_eq!(shared_code_share(&[], &[1]), 0.0);
    }

    #[test]
    fn builtin_reference_matches_gb2312_level_1() {
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
        let mut counts = [0u64; LETTERS];
        let mut n = 0;
        for c in text.chars() {
            n += 1;
            let b = initial(c);
            assert!(b.is_ascii_lowercase(), "{c} has an initial");
            counts[usize::from(b - b'a')] += 1;
        }
        assert_eq!(n, 3755);
        assert_eq!(counts, BUILTIN_COUNTS, "recomputed built-in counts");
    }
}
