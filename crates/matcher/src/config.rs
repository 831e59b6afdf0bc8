//! What matching is told: thresholds ([`MatchConfig`]) and which indexes propose candidates
//! ([`CandidateMethods`], [`CandidateConfig`]). Plain data, so the quality benchmark and the
//! CLI can build, print and compare configurations without a matcher.

use std::fmt;
use std::str::FromStr;

use copytrace_fingerprint::{DnaConfig, FingerprintConfig};

use crate::align::AlignConfig;
use crate::laundering::LaunderingConfig;
use crate::lsh::LshConfig;
use crate::postings::PostingConfig;

/// Thresholds and parameters of matching.
///
/// The defaults are reasoned starting points: issue 5's quality benchmark (labelled pirated
/// variants of real text) chooses them; `docs/algorithms.md` explains each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatchConfig {
    /// Fingerprinting parameters; must be the ones the indexed works were fingerprinted with.
    pub fingerprint: FingerprintConfig,
    /// Largest Hamming distance between a page window and a work window that makes the work a
    /// candidate.
    pub max_distance: u32,
    /// Alignment parameters.
    pub align: AlignConfig,
    /// A work is reported only if at least this many canonical characters of the page are
    /// aligned with it (boilerplate excluded, each work character counted once). 100, chosen by
    /// the quality benchmark (`copytrace-bench quality`, see docs/algorithms.md) once it had a
    /// class of pages sharing one sentence with a work: at 80, a news lead of 87 characters
    /// quoted in another article was reported, as on held-out sites (85–87 characters); at 100
    /// no page sharing one sentence of up to 100 characters (most carry punctuation, which is
    /// not counted) was, and every disguise kept its recall. Real quotations (a news article
    /// citing another's two sentences: 64 characters), datelines, idioms and poems stay far
    /// below it; the shortest excerpts a pirate posts (120 characters and more) stay above it.
    pub min_copied_chars: usize,
    /// A work is reported only if, besides `min_copied_chars` in all, at least this many
    /// aligned characters lie in one *dense stretch* of the page: consecutive passages whose
    /// aligned characters make up at least [`STRETCH_DENSITY`](crate::STRETCH_DENSITY) (three
    /// quarters) of the page text they span. A copy, however disguised (characters misread,
    /// junk strewn in, clauses reordered), is a stretch of the page made of one stretch of the
    /// work; a review quoting several short sentences from all over a work, or another report
    /// of the same event sharing names, figures and a phrase, has its shared bits apart, each
    /// shorter than this, with the page's own words between them or picked from all over the
    /// work (see [`densest_stretch`](crate::densest_stretch)). Adding up such near-matches is
    /// what made independent reports look like copies. 50, chosen by the quality benchmark
    /// (docs/algorithms.md, "OCR errors, same-event reports and the dense-stretch rule"): above
    /// any one quotation of up to 40 characters, below what every disguise keeps (60 lost a
    /// shuffled and a combined copy); 0 turns the rule off.
    pub min_stretch_chars: usize,
    /// At most this many candidate works (those with the most window hits) are verified.
    pub max_candidates: usize,
    /// Which indexes propose candidates, and their parameters.
    pub candidates: CandidateConfig,
    /// Whether pages are also read with their runs of Latin letters as pinyin syllables
    /// (`xiao说` for 小说, see [`romanized`](crate::romanized)): their DNA codes are looked up
    /// too, and each candidate is verified against both readings, keeping the one that covers
    /// more of the work. Needs `align.pinyin`, the only projection in which a romanized
    /// syllable can align.
    pub romanized: bool,
    /// Sentence alignment of laundered copies (words replaced by synonyms), see
    /// [`laundering`](crate::laundering).
    pub laundering: LaunderingConfig,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            fingerprint: FingerprintConfig::default(),
            max_distance: 3,
            align: AlignConfig::default(),
            min_copied_chars: 100,
            min_stretch_chars: 50,
            max_candidates: 32,
            candidates: CandidateConfig::default(),
            romanized: true,
            laundering: LaunderingConfig::default(),
        }
    }
}

impl MatchConfig {
    /// Whether laundered copies are looked for through the sense index: laundering on and the
    /// `sense` source enabled (without that source there is nothing to read a page for sense).
    pub(crate) fn sense_enabled(&self) -> bool {
        self.laundering.enabled && self.candidates.methods.contains(CandidateMethods::SENSE)
    }
}

/// A set of candidate sources, so the quality benchmark can compare them alone and together
/// and a verdict can say which found it. Displays and parses as `sense+kgram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CandidateMethods(u8);

impl CandidateMethods {
    /// No source.
    pub const NONE: Self = CandidateMethods(0);
    /// Window SimHash within `max_distance` bits.
    pub const SIMHASH: Self = CandidateMethods(1);
    /// MinHash LSH over window shingles.
    pub const MINHASH: Self = CandidateMethods(2);
    /// Pinyin-initial DNA codes, exact or near.
    pub const DNA: Self = CandidateMethods(4);
    /// Words and synonyms of page blocks ([`SenseIndex`](crate::laundering::SenseIndex)):
    /// laundered copies.
    pub const SENSE: Self = CandidateMethods(8);
    /// Winnowed k-gram postings of characters and syllables ([`postings`](crate::postings)),
    /// with the consistent-diagonal rule.
    pub const KGRAM: Self = CandidateMethods(16);
    /// Every source.
    pub const ALL: Self = CandidateMethods(31);
    /// The sources matching uses unless told otherwise: the k-gram postings and the sense
    /// index. On the quality benchmark they find every disguise the four older sources find
    /// (the k-gram postings alone find what MinHash alone finds, SimHash and DNA nothing the
    /// pair misses) at a few bytes per library character instead of about 140
    /// (docs/algorithms.md, docs/benchmarks.md).
    pub const DEFAULT: Self = CandidateMethods(24);

    const NAMES: [(Self, &'static str); 5] = [
        (Self::SIMHASH, "simhash"),
        (Self::MINHASH, "minhash"),
        (Self::DNA, "dna"),
        (Self::SENSE, "sense"),
        (Self::KGRAM, "kgram"),
    ];

    /// Whether every source of `other` is in `self`.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The sources of both.
    pub fn union(self, other: Self) -> Self {
        CandidateMethods(self.0 | other.0)
    }

    /// Whether no source is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Number of sources in the set.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }
}

impl std::ops::BitOr for CandidateMethods {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl fmt::Display for CandidateMethods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = Self::NAMES
            .iter()
            .filter(|(m, _)| self.contains(*m))
            .map(|(_, name)| *name)
            .collect();
        f.write_str(&names.join("+"))
    }
}

/// A candidate source name that is not `simhash`, `minhash`, `dna`, `sense`, `kgram`, `all`,
/// `default` or `none`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown candidate method {0:?} (expected simhash, minhash, dna, sense, kgram, all, default \
     or none)"
)]
pub struct UnknownCandidateMethod(pub String);

impl FromStr for CandidateMethods {
    type Err = UnknownCandidateMethod;

    /// Names joined by `+` or `,`, e.g. `simhash+dna`; `all` and `none` also work.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.split(['+', ','])
            .map(str::trim)
            .try_fold(CandidateMethods::NONE, |set, name| {
                let method = match name {
                    "all" => CandidateMethods::ALL,
                    "default" => CandidateMethods::DEFAULT,
                    "none" => CandidateMethods::NONE,
                    _ => Self::NAMES
                        .iter()
                        .find(|(_, n)| *n == name)
                        .map(|(m, _)| *m)
                        .ok_or_else(|| UnknownCandidateMethod(name.to_owned()))?,
                };
                Ok(set | method)
            })
    }
}

/// Candidate sources and their parameters. A source left out of `methods` is neither indexed
/// nor queried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandidateConfig {
    /// The sources that propose candidates.
    pub methods: CandidateMethods,
    /// Shingle length, in canonical characters, of the window MinHash. 3, like the SimHash
    /// n-grams: a 48-character window has 46 shingles, and one replaced character spoils only
    /// three of them.
    pub minhash_shingle: usize,
    /// Shape of the MinHash LSH index.
    pub lsh: LshConfig,
    /// DNA windows and quantization of works (pages are read at every initial, see
    /// [`Matcher::candidates_for`](crate::Matcher::candidates_for)).
    pub dna: DnaConfig,
    /// Largest [`copytrace_fingerprint::code_distance`] between a page code and a work code
    /// that makes the work a candidate.
    pub dna_max_distance: u32,
    /// Shape of the winnowed k-gram postings.
    pub postings: PostingConfig,
}

impl Default for CandidateConfig {
    /// The [`CandidateMethods::DEFAULT`] sources; MinHash of 3-shingles with the default
    /// [`LshConfig`]; DNA with the default [`DnaConfig`] and near codes within distance 2 (one
    /// or two digits moved, what a replaced character or two in a 64-initial window does).
    fn default() -> Self {
        CandidateConfig {
            methods: CandidateMethods::DEFAULT,
            minhash_shingle: 3,
            lsh: LshConfig::default(),
            dna: DnaConfig::default(),
            dna_max_distance: 2,
            postings: PostingConfig::default(),
        }
    }
}
