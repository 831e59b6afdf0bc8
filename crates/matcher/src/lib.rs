//! Copytrace matcher: from a page's text to verified, evidence-backed matches per work.
//!
//! Matching runs in three stages, each cheap enough for the next to afford:
//!
//! 1. **Candidates** ([`simhash_index`], [`lsh`], [`dna_index`], all behind the [`index`]
//!    trait): the page's windows are looked up in up to three indexes of all library windows,
//!    each blind to different disguises: window SimHash within a few bits (small edits),
//!    MinHash LSH over window shingles (denser edits, shuffled clauses) and pinyin-initial DNA
//!    codes (homophone substitution). A work hit by any of them becomes a candidate,
//!    remembering which sources found it ([`CandidateMethods`]).
//! 2. **Verification** ([`align`]): the page's canonical text is aligned against each
//!    candidate work's; only characters that are really equal on both sides count, so a
//!    fingerprint collision can never become an accusation.
//! 3. **Verdict**: aligned passages are summed per work into coverage (share of the work found
//!    on the page), containment (share of the page taken from the work) and a score; a work is
//!    reported only when enough text is copied that coincidence, a shared dateline, an idiom or
//!    a quoted sentence cannot explain it. Text that several library works share is
//!    boilerplate and counts for nothing ([`postings::common_mask`]).
//!
//! The matcher is pure computation over data handed to it. Loading works and storing verdicts
//! is the caller's job, which keeps this crate free of I/O and easy to benchmark.

pub mod align;
mod buckets;
pub mod dna_index;
pub mod index;
pub mod laundering;
pub mod lsh;
pub mod postings;
pub mod romanized;
pub mod simhash_index;
pub mod sketch;

use foldhash::{HashMap, HashMapExt, HashSet};
use std::cell::OnceCell;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use copytrace_fingerprint::{
    DnaConfig, FingerprintConfig, MinHasher, Normalized, ReferenceDistribution, Window, dna_codes,
    dna_codes_of_initials, fingerprint_normalized, minhash, normalize, shingle_hashes,
    simhash::ngram_hashes,
};
use serde::{Deserialize, Serialize};

pub use align::{AlignConfig, AlignedPassage, WorkSeeds};
pub use dna_index::DnaIndex;
pub use index::{Hit, Index, IndexError, SegmentRef, WorkId};
pub use laundering::LaunderingConfig;
pub use lsh::{LshConfig, MinHashLshIndex, MinHashSignature};
pub use postings::{MemoryPostings, PostingConfig, PostingIndex};
pub use romanized::{RomanizedPage, read_romanized};
pub use simhash_index::SimHashIndex;

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
    /// aligned characters make up at least [`STRETCH_DENSITY`] (three quarters) of the page text they span.
    /// A copy, however disguised (characters misread, junk strewn in, clauses reordered), is a
    /// stretch of the page made of one stretch of the work; a review quoting several short
    /// sentences from all over a work, or another report of the same event sharing names,
    /// figures and a phrase, has its shared bits apart, each shorter than this, with the page's
    /// own words between them or picked from all over the work (see [`densest_stretch`]).
    /// Adding up such near-matches is what made independent reports look like copies. 50,
    /// chosen by the quality benchmark (docs/algorithms.md, "OCR errors, same-event reports and the dense-stretch rule"): above any one
    /// quotation of up to 40 characters, below what every disguise keeps (60 lost a shuffled
    /// and a combined copy); 0 turns the rule off.
    pub min_stretch_chars: usize,
    /// At most this many candidate works (those with the most window hits) are verified.
    pub max_candidates: usize,
    /// Which indexes propose candidates, and their parameters.
    pub candidates: CandidateConfig,
    /// Whether pages are also read with their runs of Latin letters as pinyin syllables
    /// (`xiao说` for 小说, see [`romanized`]): their DNA codes are looked up too, and each
    /// candidate is verified against both readings, keeping the one that covers more of the
    /// work. Needs `align.pinyin`, the only projection in which a romanized syllable can align.
    pub romanized: bool,
    /// Sentence alignment of laundered copies (words replaced by synonyms), see [`laundering`].
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

/// Least share of a dense stretch's page text that is aligned with the work (see
/// [`MatchConfig::min_stretch_chars`]). Three quarters: a copy with one character in ten
/// misread, junk after every third character or an ad line after every paragraph is denser
/// still, while a reviewer who quotes two sentences with a sentence of their own between them
/// is not.
pub const STRETCH_DENSITY: f64 = 0.75;

/// Aligned characters of the densest stretch of `passages` (sorted by page start): the largest
/// sum over consecutive passages whose aligned characters are at least [`STRETCH_DENSITY`] both
/// of the page characters from the first one's start to the last one's end and of the work
/// characters their work ranges span. A copy with its sentences reordered within paragraphs
/// still fills a stretch of the work; quotations picked every few hundred characters, however
/// close together on the page, do not. Stops early once `enough` is reached.
///
/// `counted[i]` is what passage `i` counts for: its aligned characters, less those that are no
/// evidence of copying (digits, see [`WorkMatch::copied_chars`]). The sum returned is of
/// those counts; density is judged on every aligned character, since an aligned figure is
/// copied text even though it proves nothing on its own (judged on the counts, a copy of a
/// work with a table of figures in it was too sparse to be a stretch).
pub fn densest_stretch(
    passages: &[align::AlignedPassage],
    counted: &[usize],
    enough: usize,
) -> usize {
    let mut best = 0;
    for (i, first) in passages.iter().enumerate() {
        let mut counted_sum = 0;
        let (mut work_start, mut work_end) = (first.work_start, first.work_end);
        // Density is judged on every aligned character, figures included: a copy of a work
        // full of figures is as dense as any copy, even though its figures do not count.
        let mut page_aligned = 0;
        let mut work_aligned = 0;
        for (last, count) in passages[i..].iter().zip(&counted[i..]) {
            work_start = work_start.min(last.work_start);
            work_end = work_end.max(last.work_end);
            counted_sum += count;
            page_aligned += last.aligned_chars;
            // A paraphrase is as long as its own words on each side: synonyms differ in length.
            work_aligned += if last.paraphrase {
                last.runs.iter().map(|r| r.len).sum()
            } else {
                last.aligned_chars
            };
            let page_span = last.page_end.max(first.page_start + 1) - first.page_start;
            let work_span = work_end.max(work_start + 1) - work_start;
            let dense = |part: usize, span: usize| part as f64 >= STRETCH_DENSITY * span as f64;
            if !(dense(page_aligned, page_span) && dense(work_aligned, work_span)) {
                // Later passages may fill the gaps (reordered sentences), so keep looking,
                // but this group is no stretch.
                continue;
            }
            best = best.max(counted_sum);
            if best >= enough {
                return best;
            }
        }
    }
    best
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
    /// Words and synonyms of page blocks ([`laundering::SenseIndex`]): laundered copies.
    pub const SENSE: Self = CandidateMethods(8);
    /// Winnowed k-gram postings of characters and syllables ([`postings`]), with the
    /// consistent-diagonal rule.
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

/// Pages [`Matcher::match_text`] verified candidates for, in this process.
static VERIFIED_PAGES: AtomicU64 = AtomicU64::new(0);
/// Candidates verified, in this process.
static VERIFIED_CANDIDATES: AtomicU64 = AtomicU64::new(0);
/// Candidates the sense index proposed, read sentence by sentence, in this process.
static VERIFIED_LAUNDERED: AtomicU64 = AtomicU64::new(0);

/// How much verifying this process has done since it started: what a benchmark divides by its
/// pages to tell whether a larger library costs more candidates per page or more per
/// candidate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerificationCounts {
    /// Pages with at least one candidate (pages without any cost only the index lookups).
    pub pages: u64,
    /// Candidates verified (aligned character by character).
    pub candidates: u64,
    /// Of those, the ones the sense index proposed, also aligned sentence by sentence when
    /// their characters explain too little: the dearest kind.
    pub laundered: u64,
}

/// [`VerificationCounts`] of this process so far.
pub fn verification_counts() -> VerificationCounts {
    VerificationCounts {
        pages: VERIFIED_PAGES.load(Ordering::Relaxed),
        candidates: VERIFIED_CANDIDATES.load(Ordering::Relaxed),
        laundered: VERIFIED_LAUNDERED.load(Ordering::Relaxed),
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
    /// [`Matcher::candidates_for`]).
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

/// A work proposed for verification, with what found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The work.
    pub work_id: WorkId,
    /// The sources that found at least one of its windows.
    pub methods: CandidateMethods,
    /// Distinct windows of the work found by SimHash.
    pub simhash_windows: usize,
    /// Distinct windows of the work found by MinHash LSH.
    pub minhash_windows: usize,
    /// Distinct DNA windows of the work found by code.
    pub dna_windows: usize,
    /// Page blocks whose words (or their synonyms) the work holds.
    pub sense_blocks: usize,
    /// Consistent k-gram hits (see [`postings`]).
    pub kgram_hits: usize,
}

impl Candidate {
    fn new(work_id: WorkId) -> Self {
        Candidate {
            work_id,
            methods: CandidateMethods::NONE,
            simhash_windows: 0,
            minhash_windows: 0,
            dna_windows: 0,
            sense_blocks: 0,
            kgram_hits: 0,
        }
    }

    fn windows(&self) -> usize {
        self.simhash_windows
            + self.minhash_windows
            + self.dna_windows
            + self.sense_blocks
            + self.kgram_hits
    }
}

/// Number of windows in each candidate index, to check that adding and removing works keeps
/// them in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSizes {
    /// Windows in the SimHash index.
    pub simhash: usize,
    /// Windows in the MinHash LSH index.
    pub minhash: usize,
    /// DNA windows in the DNA index.
    pub dna: usize,
    /// Keys (synonym groups and characters) in the sense index.
    pub sense: usize,
    /// Postings in the k-gram posting index.
    pub postings: usize,
}

/// One evidence passage, as byte ranges of both original texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Start byte in the page text.
    pub page_start: u32,
    /// End byte (exclusive) in the page text.
    pub page_end: u32,
    /// Start byte in the work text.
    pub work_start: u32,
    /// End byte (exclusive) in the work text.
    pub work_end: u32,
    /// Canonical characters aligned on both sides within the passage (for a laundered copy's
    /// paraphrased sentences, the page sentences' characters).
    pub aligned_chars: u32,
}

/// The verdict for one work found on a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkMatch {
    /// The work.
    pub work_id: WorkId,
    /// `max(coverage, containment)`: the share of the *smaller unit of copying* that is
    /// copied. A page that is nothing but an excerpt (a work split across pages) scores its
    /// containment, near 1.0; a work reproduced whole inside a long page (a compilation, a page
    /// full of ads) scores its coverage, near 1.0; a page quoting a tenth of itself from a tenth
    /// of a work scores 0.1. Both shares count only verified, non-boilerplate characters, so the
    /// score is an estimate of how much was copied, not a similarity of fingerprints.
    pub score: f64,
    /// Share of the work's informative canonical characters (those not covered by library
    /// boilerplate, see [`postings::common_mask`]) that the evidence covers on the page.
    pub coverage: f64,
    /// Share of the page's informative canonical characters copied from the work (aligned
    /// exactly or, in homophone passages, as the same syllable).
    pub containment: f64,
    /// Canonical characters of the page aligned with the work, boilerplate and digits excluded
    /// (figures are facts that independent reports share, not wording). When the
    /// page was read with romanized syllables (`+romanized`), a syllable such as `xiao` counts
    /// as the one character it stands for, here and in `containment`.
    pub copied_chars: usize,
    /// How it was found and verified: `<candidate source>+align`, with `+pinyin` appended when
    /// part of the evidence was aligned through homophones or romanized syllables, and
    /// `+romanized` when the page's Latin letters were read as pinyin (see [`romanized`]).
    pub method: String,
    /// Evidence passages in page order.
    pub evidence: Vec<Evidence>,
}

/// A page prepared for verification against every candidate: its canonical text with its seeds
/// and, when it has romanized runs, its reading with syllables and that reading's seeds (built
/// on first use: most pages are explained without it).
struct PageViews {
    page: Normalized,
    seeds: align::PageSeeds,
    /// The page read sentence by sentence through the thesaurus, for laundered copies.
    sense: Option<laundering::SenseText>,
    /// The page read with its romanized runs as syllables, with the boilerplate mask of that
    /// reading, and its seeds once a verification needs them.
    romanized: Option<(RomanizedPage, Vec<bool>, OnceCell<align::PageSeeds>)>,
}

/// A text's selected k-grams and what the postings hold for them: one lookup, read by the
/// `kgram` candidate source and by the boilerplate mask ([`postings::common_mask`]).
struct KeyLookup {
    keys: Vec<postings::Key>,
    hashes: Vec<u64>,
    found: Vec<Vec<postings::Posting>>,
}

/// Which characters of a work library boilerplate covers (see [`postings::common_mask`]), and how many it
/// leaves.
#[derive(Debug)]
struct WorkBoilerplate {
    common: Vec<bool>,
    informative: usize,
}

/// A library work prepared for verification.
#[derive(Debug, Clone)]
pub(crate) struct PreparedWork {
    normalized: Normalized,
    seeds: WorkSeeds,
    /// Where its sentences begin (see [`laundering::sentence_starts`]): the original text is
    /// not kept, and laundered copies are aligned sentence by sentence.
    sentences: Vec<u32>,
}

/// The library as the matcher sees it: indexes of window fingerprints plus the canonical text
/// of each work for verification.
pub struct Matcher<I: Index = SimHashIndex> {
    config: MatchConfig,
    index: I,
    lsh: Box<dyn Index<MinHashSignature>>,
    dna: Box<dyn Index<u128>>,
    /// Winnowed k-gram postings (the `kgram` source).
    postings: Box<dyn PostingIndex>,
    /// Whether `postings` is shared with other processes ([`Matcher::with_shared_postings`]).
    postings_shared: bool,
    /// Whether the SimHash, MinHash and DNA indexes are shared with other processes (Redis):
    /// they are then written by whoever changes the library, never by this matcher.
    shared: bool,
    sense: laundering::SenseIndex,
    hasher: MinHasher,
    reference: ReferenceDistribution,
    /// The work DNA configuration read at every initial, for pages.
    page_dna: DnaConfig,
    works: HashMap<WorkId, Arc<PreparedWork>>,
    /// Set by [`Matcher::with_texts_on_demand`]: works are then not kept in `works` but read
    /// when a page proposes them, and kept prepared within a memory budget.
    on_demand: Option<OnDemand>,
    /// Whether the sense index is the library's shared one
    /// ([`Matcher::with_library_statistics`]), kept by whoever changes the library, rather
    /// than filed here as works are added.
    shared_statistics: bool,
    /// Each work's boilerplate mask, computed at its first verification and kept until the
    /// library changes: it depends on what every work holds (see
    /// [`postings::common_mask`]), and recomputing it per candidate was most of the matching
    /// time.
    boilerplate: WorkCache<WorkBoilerplate>,
    /// Works prepared for sentence alignment (laundered copies), kept for at most
    /// [`LAUNDERED_CACHE_WORKS`] works until the library changes: preparing a work again for
    /// every page that proposed it cost 14 % of the matching CPU on a library of 2,137 works and
    /// 18 % on one of 410 (docs/benchmarks.md).
    laundered: WorkCache<laundering::LaunderedWork>,
}

/// Most works kept prepared for sentence alignment, so the cache stays bounded whatever the
/// library's size (on the quality library, 410 works of about 10 KB of text, it added 44 MB to
/// the peak memory of `match`).
const LAUNDERED_CACHE_WORKS: usize = 256;

/// The keys a work is filed under in the MinHash and DNA candidate indexes, window by window
/// (`(ordinal, key)`): what a shared index stores for the work. Empty for a source the
/// configuration does not enable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CandidateKeys {
    /// MinHash signature of each content-anchored window.
    pub minhash: Vec<(u32, MinHashSignature)>,
    /// DNA code of each DNA window.
    pub dna: Vec<(u32, u128)>,
}

/// Where a matcher reads the texts of the works it does not keep in memory (see
/// [`Matcher::with_texts_on_demand`]): the store, in production.
pub trait WorkTexts: Send + Sync {
    /// The current texts of `ids`; a work that is no longer in the library is left out.
    fn texts(&self, ids: &[WorkId]) -> Result<Vec<(WorkId, String)>, IndexError>;
}

/// Weighs a prepared work by the bytes it holds, for the on-demand cache's budget.
#[derive(Debug, Clone, Copy)]
struct PreparedWeight;

impl quick_cache::Weighter<WorkId, Arc<PreparedWork>> for PreparedWeight {
    fn weight(&self, _: &WorkId, work: &Arc<PreparedWork>) -> u64 {
        // Characters, byte offsets and two seed hashes per character, sentence starts.
        let chars = work.normalized.chars.len() as u64;
        (chars * 28 + work.sentences.len() as u64 * 4).max(1)
    }
}

/// The works of a matcher that reads texts on demand.
struct OnDemand {
    /// Every work of the library (known to the shared indexes): what a candidate may be.
    known: HashSet<WorkId>,
    texts: Box<dyn WorkTexts>,
    prepared: quick_cache::sync::Cache<WorkId, Arc<PreparedWork>, PreparedWeight>,
}

/// Works kept prepared for boilerplate masks when texts are read on demand: the masks are a
/// byte per character, so this bounds them at a few tens of megabytes.
const ON_DEMAND_MASK_WORKS: usize = 4096;

/// A per-work cache shared by the threads matching pages at once.
type WorkCache<T> = std::sync::RwLock<HashMap<WorkId, std::sync::Arc<T>>>;

/// The value `cache` holds for `work_id`, or `build()`'s, stored first. Holding at most
/// `capacity` values, it drops any one to make room (the keys' order is random per process).
/// Two threads may build the same value at once; both are the same, and one is kept.
fn cached<T>(
    cache: &WorkCache<T>,
    work_id: WorkId,
    capacity: usize,
    build: impl FnOnce() -> T,
) -> std::sync::Arc<T> {
    match try_cached(cache, work_id, capacity, || {
        Ok::<T, std::convert::Infallible>(build())
    }) {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// [`cached`] with a build that may fail: nothing is kept then.
fn try_cached<T, E>(
    cache: &WorkCache<T>,
    work_id: WorkId,
    capacity: usize,
    build: impl FnOnce() -> Result<T, E>,
) -> Result<std::sync::Arc<T>, E> {
    let found = cache
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&work_id)
        .cloned();
    if let Some(value) = found {
        return Ok(value);
    }
    let value = std::sync::Arc::new(build()?);
    let mut cache = cache
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if cache.len() >= capacity
        && let Some(&evicted) = cache.keys().next()
    {
        cache.remove(&evicted);
    }
    cache.insert(work_id, value.clone());
    Ok(value)
}

/// `config` with windows starting at every initial. Works are indexed at `config`'s step; a
/// page read at every initial then has, for each work window it copies whole, one window with
/// exactly the same initials, wherever the copy starts on the page.
fn every_initial(config: &DnaConfig) -> DnaConfig {
    let granularity = config.granularity();
    let overlap = 1.0 - 1.0 / granularity as f64;
    DnaConfig::new(granularity, overlap, config.levels()).unwrap_or(*config)
}

impl Matcher<SimHashIndex> {
    /// An empty matcher with the in-memory SimHash index.
    pub fn new(config: MatchConfig) -> Self {
        let index = SimHashIndex::new(config.max_distance);
        Matcher::with_index(config, index)
    }
}

impl<I: Index> Matcher<I> {
    /// An empty matcher over the given index.
    pub fn with_index(config: MatchConfig, index: I) -> Self {
        let candidates = &config.candidates;
        let lsh = Box::new(MinHashLshIndex::new(&candidates.lsh));
        let dna = Box::new(DnaIndex::new(
            candidates.dna.levels(),
            candidates.dna_max_distance,
        ));
        Matcher::with_indexes(config, index, lsh, dna, false)
    }

    /// An empty matcher over candidate indexes that other processes share (Redis): it reads
    /// them and never writes them. Works are added with [`Matcher::add_shared_work`] (with texts
    /// on demand and the library's shared statistics); whoever changes the library files the
    /// works' keys ([`Matcher::candidate_keys`], [`Matcher::sense_keys_of`]) in the shared
    /// indexes.
    pub fn with_shared_indexes(
        config: MatchConfig,
        index: I,
        minhash: Box<dyn Index<MinHashSignature>>,
        dna: Box<dyn Index<u128>>,
    ) -> Self {
        Matcher::with_indexes(config, index, minhash, dna, true)
    }

    fn with_indexes(
        config: MatchConfig,
        index: I,
        lsh: Box<dyn Index<MinHashSignature>>,
        dna: Box<dyn Index<u128>>,
        shared: bool,
    ) -> Self {
        let candidates = &config.candidates;
        Matcher {
            lsh,
            dna,
            postings: Box::new(MemoryPostings::new()),
            postings_shared: false,
            shared,
            sense: laundering::SenseIndex::new(),
            hasher: MinHasher::new(candidates.lsh.num_perm, minhash::DEFAULT_SEED),
            reference: ReferenceDistribution::builtin(),
            page_dna: every_initial(&candidates.dna),
            config,
            index,
            works: HashMap::new(),
            on_demand: None,
            shared_statistics: false,
            boilerplate: std::sync::RwLock::default(),
            laundered: std::sync::RwLock::default(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    /// The window index: a shared (remote) index may need checking, e.g. that it was not
    /// emptied while this matcher held it.
    pub fn index(&self) -> &I {
        &self.index
    }

    /// Number of works known.
    pub fn work_count(&self) -> usize {
        match &self.on_demand {
            Some(on_demand) => on_demand.known.len(),
            None => self.works.len(),
        }
    }

    /// Keeps no work's text: works added from now on are only counted (their seeds, for
    /// boilerplate, and the in-process sense index) and remembered by id, and a work a page
    /// proposes is read from `texts`, prepared and kept in a cache of at most `budget_bytes`
    /// (least recently used first out). With shared candidate indexes
    /// ([`Matcher::with_shared_indexes`]) a worker's memory then no longer holds the library's
    /// texts. Call it before adding works.
    pub fn with_texts_on_demand(mut self, texts: Box<dyn WorkTexts>, budget_bytes: u64) -> Self {
        // Estimated items: prepared works of about 10 KB (quick_cache sizes its table by them).
        let estimated = (budget_bytes / (10_000 * 28)).clamp(16, 1 << 20) as usize;
        self.on_demand = Some(OnDemand {
            known: HashSet::default(),
            texts,
            prepared: quick_cache::sync::Cache::with_weighter(
                estimated,
                budget_bytes.max(1),
                PreparedWeight,
            ),
        });
        self
    }

    /// Looks the `kgram` source up in postings other processes share (Redis), which whoever
    /// changes the library files ([`postings::work_keys`] of each work's text); this matcher
    /// never writes them.
    pub fn with_shared_postings(mut self, postings: Box<dyn PostingIndex>) -> Self {
        self.postings = postings;
        self.postings_shared = true;
        self
    }

    /// Uses the sense index whoever changes a shared library keeps (see
    /// [`laundering::SenseIndex::from_parts`]) instead of filing every work's text as it is
    /// added. Works are then added by id alone ([`Matcher::add_shared_work`]), so loading reads
    /// no text and the worker holds nothing per library character (boilerplate is told by the
    /// shared postings). Call it after [`Matcher::with_texts_on_demand`], before adding works.
    pub fn with_library_statistics(mut self, sense: laundering::SenseIndex) -> Self {
        self.sense = sense;
        self.shared_statistics = true;
        self.library_changed();
        self
    }

    /// Adds a work whose windows and statistics are already in the shared indexes and
    /// statistics: only its id is kept, its text is read when a page proposes it. Refused
    /// unless texts are on demand and the statistics shared.
    pub fn add_shared_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        match &mut self.on_demand {
            Some(on_demand) if self.shared_statistics => {
                on_demand.known.insert(work_id);
                on_demand.prepared.remove(&work_id);
                self.library_changed();
                Ok(())
            }
            _ => Err(IndexError::Backend(
                "a work can be added by id only to a matcher with texts on demand and shared \
                 library statistics"
                    .to_owned(),
            )),
        }
    }

    /// Whether `work_id` is a work of the library.
    fn knows(&self, work_id: WorkId) -> bool {
        match &self.on_demand {
            Some(on_demand) => on_demand.known.contains(&work_id),
            None => self.works.contains_key(&work_id),
        }
    }

    /// The prepared works of `ids` (those the library knows), read and prepared first where
    /// texts are on demand and the cache does not hold them: one read for all that are missing.
    fn prepared_works(
        &self,
        ids: impl IntoIterator<Item = WorkId>,
    ) -> Result<HashMap<WorkId, Arc<PreparedWork>>, IndexError> {
        let mut found = HashMap::new();
        let Some(on_demand) = &self.on_demand else {
            for id in ids {
                if let Some(work) = self.works.get(&id) {
                    found.insert(id, work.clone());
                }
            }
            return Ok(found);
        };
        let mut missing = Vec::new();
        for id in ids {
            match on_demand.prepared.get(&id) {
                Some(work) => {
                    found.insert(id, work);
                }
                None if on_demand.known.contains(&id) => missing.push(id),
                None => {}
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        for (id, text) in on_demand.texts.texts(&missing)? {
            let work = Arc::new(self.prepare(&text));
            on_demand.prepared.insert(id, work.clone());
            found.insert(id, work);
        }
        Ok(found)
    }

    /// A work's text prepared for verification.
    fn prepare(&self, text: &str) -> PreparedWork {
        let normalized = normalize(text);
        let sentences = laundering::sentence_starts(text, &normalized);
        let seeds = WorkSeeds::new(&normalized.chars, &self.config.align);
        PreparedWork {
            normalized,
            seeds,
            sentences,
        }
    }

    /// Adds (or replaces) a work, fingerprinting its text; returns the window fingerprints so
    /// the caller can store them.
    pub fn add_work(
        &mut self,
        work_id: WorkId,
        text: &str,
    ) -> Result<Vec<copytrace_fingerprint::WindowFingerprint>, IndexError> {
        let normalized = normalize(text);
        let windows = fingerprint_normalized(&normalized, &self.config.fingerprint);
        let ranges: Vec<(u32, Window)> = windows.iter().map(|w| (w.ordinal, w.window)).collect();
        let simhashes: Vec<(u32, u64)> = windows.iter().map(|w| (w.ordinal, w.simhash)).collect();
        let sentences = laundering::sentence_starts(text, &normalized);
        self.insert(work_id, normalized, sentences, &simhashes, &ranges)?;
        Ok(windows)
    }

    /// Adds (or replaces) a work whose window SimHashes were stored earlier, without
    /// recomputing them. The text is still needed to verify candidates; the window MinHash
    /// signatures and DNA codes, which are not stored, are recomputed from it (cheaply: a
    /// fraction of what fingerprinting the windows costs).
    pub fn add_fingerprinted_work(
        &mut self,
        work_id: WorkId,
        text: &str,
        windows: impl IntoIterator<Item = (u32, u64)>,
    ) -> Result<(), IndexError> {
        let normalized = normalize(text);
        let ranges = self.window_ranges(&normalized);
        let simhashes: Vec<(u32, u64)> = windows.into_iter().collect();
        let sentences = laundering::sentence_starts(text, &normalized);
        self.insert(work_id, normalized, sentences, &simhashes, &ranges)
    }

    /// The content-anchored windows of a text, numbered like its stored SimHash windows.
    fn window_ranges(&self, normalized: &Normalized) -> Vec<(u32, Window)> {
        copytrace_fingerprint::windows(&normalized.chars, &self.config.fingerprint.window)
            .into_iter()
            .enumerate()
            .map(|(ordinal, window)| (ordinal as u32, window))
            .collect()
    }

    /// Adds a work to every candidate index this matcher owns and keeps its text for
    /// verification.
    fn insert(
        &mut self,
        work_id: WorkId,
        normalized: Normalized,
        sentences: Vec<u32>,
        simhashes: &[(u32, u64)],
        windows: &[(u32, Window)],
    ) -> Result<(), IndexError> {
        self.remove_work(work_id)?;
        if !self.shared {
            if self
                .config
                .candidates
                .methods
                .contains(CandidateMethods::SIMHASH)
            {
                self.index.insert_work(work_id, simhashes)?;
            }
            let keys = self.keys_of(&normalized, windows);
            self.lsh.insert_work(work_id, &keys.minhash)?;
            self.dna.insert_work(work_id, &keys.dna)?;
            // Filed whatever the candidate sources: they also tell library boilerplate.
            let keys = postings::work_keys(&normalized.chars, &self.config.candidates.postings);
            self.postings.insert_work(work_id, &keys)?;
        }
        if self.sense_enabled() {
            let keys = self.sense_keys(&normalized.chars, &sentences);
            self.sense.insert_work(work_id, &keys);
        }
        let seeds = self.work_seeds(&normalized);
        match &mut self.on_demand {
            // Counted and remembered; the text is read again when a page proposes the work.
            Some(on_demand) => {
                on_demand.known.insert(work_id);
            }
            None => {
                self.works.insert(
                    work_id,
                    Arc::new(PreparedWork {
                        normalized,
                        seeds,
                        sentences,
                    }),
                );
            }
        }
        Ok(())
    }

    /// Forgets a work. Where texts are on demand, the work's text is read once more to uncount
    /// its seeds: it must still be the text the work was added with.
    pub fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        if self.shared_statistics {
            // Nothing was counted here: forgetting the id is all.
            if let Some(on_demand) = &mut self.on_demand
                && on_demand.known.remove(&work_id)
            {
                on_demand.prepared.remove(&work_id);
                self.library_changed();
            }
            return Ok(());
        }
        let removed = match &self.on_demand {
            Some(on_demand) if on_demand.known.contains(&work_id) => {
                let work = self.prepared_works([work_id])?.remove(&work_id);
                if let Some(on_demand) = &mut self.on_demand {
                    on_demand.known.remove(&work_id);
                    on_demand.prepared.remove(&work_id);
                }
                work
            }
            Some(_) => None,
            None => self.works.remove(&work_id),
        };
        if let Some(work) = removed {
            self.library_changed();
            if !self.shared {
                self.index.remove_work(work_id)?;
                self.lsh.remove_work(work_id)?;
                self.dna.remove_work(work_id)?;
                // The keys are recomputed from the text: the index keeps no list of them.
                let keys =
                    postings::work_keys(&work.normalized.chars, &self.config.candidates.postings);
                self.postings.remove_work(work_id, &keys)?;
            }
            if self.sense_enabled() {
                let keys = self.sense_keys(&work.normalized.chars, &work.sentences);
                self.sense.remove_work(work_id, &keys);
            }
        }
        Ok(())
    }

    /// The keys `text` is filed under in the MinHash and DNA indexes, exactly as
    /// [`Matcher::add_work`] files it: what is written to shared indexes for the work.
    pub fn candidate_keys(&self, text: &str) -> CandidateKeys {
        let normalized = normalize(text);
        let windows = self.window_ranges(&normalized);
        self.keys_of(&normalized, &windows)
    }

    fn keys_of(&self, normalized: &Normalized, windows: &[(u32, Window)]) -> CandidateKeys {
        let methods = self.config.candidates.methods;
        let mut keys = CandidateKeys::default();
        if methods.contains(CandidateMethods::MINHASH) {
            keys.minhash = windows
                .iter()
                .map(|(ordinal, _)| *ordinal)
                .zip(self.window_signatures(&normalized.chars, windows.iter().map(|(_, w)| w)))
                .collect();
        }
        if methods.contains(CandidateMethods::DNA) {
            keys.dna = dna_codes(
                &normalized.chars,
                &self.config.candidates.dna,
                &self.reference,
            )
            .into_iter()
            .enumerate()
            .map(|(ordinal, w)| (ordinal as u32, w.code))
            .collect();
        }
        keys
    }

    /// The k-gram postings keys of `text`, exactly as [`Matcher::add_work`] files them: what is
    /// written to (or, to remove the work, dropped from) shared postings for the work.
    pub fn posting_keys(&self, text: &str) -> Vec<postings::Key> {
        let normalized = normalize(text);
        postings::work_keys(&normalized.chars, &self.config.candidates.postings)
    }

    /// The sense keys of `text`, exactly as [`Matcher::add_work`] files them: what is added to
    /// a shared library's sense index for the work (empty when laundered copies are not
    /// looked for).
    pub fn sense_keys_of(&self, text: &str) -> Vec<u32> {
        if !self.sense_enabled() {
            return Vec::new();
        }
        let normalized = normalize(text);
        let sentences = laundering::sentence_starts(text, &normalized);
        self.sense_keys(&normalized.chars, &sentences)
    }

    /// Whether laundered copies are looked for through the sense index.
    fn sense_enabled(&self) -> bool {
        self.config.laundering.enabled
            && self
                .config
                .candidates
                .methods
                .contains(CandidateMethods::SENSE)
    }

    /// A work's keys in the sense index.
    fn sense_keys(&self, chars: &[char], sentences: &[u32]) -> Vec<u32> {
        let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
        let text = laundering::SenseText::new(chars, sentences, thesaurus);
        laundering::text_keys(chars, &text, thesaurus)
    }

    /// Windows held by each candidate index.
    pub fn index_sizes(&self) -> Result<IndexSizes, IndexError> {
        Ok(IndexSizes {
            simhash: self.index.len()?,
            minhash: self.lsh.len()?,
            dna: self.dna.len()?,
            sense: self.sense.len(),
            postings: self.postings.len()?,
        })
    }

    /// MinHash signatures of windows of `chars`. The text's shingle hashes are computed once and
    /// each window signs its slice of them: duplicates do not change a minimum, so this is the
    /// signature of the window's [`shingle_hashes`] set without hashing and sorting each
    /// window's shingles again.
    fn window_signatures<'a>(
        &self,
        chars: &[char],
        windows: impl IntoIterator<Item = &'a Window>,
    ) -> Vec<MinHashSignature> {
        let k = self.config.candidates.minhash_shingle.max(1);
        let hashes = ngram_hashes(chars, k);
        windows
            .into_iter()
            .map(|w| {
                if w.end - w.start >= k {
                    self.hasher.signature(&hashes[w.start..=w.end - k])
                } else {
                    self.hasher
                        .signature(&shingle_hashes(&chars[w.start..w.end], k))
                }
            })
            .collect()
    }

    /// Finds, verifies and scores every library work copied on a page, best score first.
    pub fn match_text(&self, page_text: &str) -> Result<Vec<WorkMatch>, IndexError> {
        let page = normalize(page_text);
        if page.is_empty() {
            return Ok(Vec::new());
        }
        let romanized = self.read_romanized(&page, page_text);
        let sense = self.read_sense(page_text, &page);
        let lookup = self.look_up(&page.chars, romanized.as_ref().map(|r| &r.syllables[..]))?;
        let candidates = self.candidates(&page, &lookup, romanized.as_ref(), sense.as_ref())?;
        if candidates.is_empty() {
            // Most crawled pages copy nothing: skip building their seed indexes.
            return Ok(Vec::new());
        }
        VERIFIED_PAGES.fetch_add(1, Ordering::Relaxed);
        VERIFIED_CANDIDATES.fetch_add(candidates.len() as u64, Ordering::Relaxed);
        VERIFIED_LAUNDERED.fetch_add(
            candidates
                .iter()
                .filter(|c| c.methods.contains(CandidateMethods::SENSE))
                .count() as u64,
            Ordering::Relaxed,
        );
        let works = self.prepared_works(candidates.iter().map(|c| c.work_id))?;
        for (&work_id, work) in &works {
            self.work_boilerplate(work_id, work)?;
        }
        let common = self.page_mask(&lookup, &page, romanized.is_some());
        let views = self.page_views(page, common, romanized, sense)?;
        let mut matches: Vec<WorkMatch> = candidates
            .into_iter()
            .filter_map(|candidate| {
                let work = works.get(&candidate.work_id)?;
                let found_by = candidate.methods.to_string();
                // Only a work the sense index proposed is worth reading sentence by sentence.
                let laundered = candidate.methods.contains(CandidateMethods::SENSE);
                self.verify_views(&views, candidate.work_id, work, &found_by, laundered)
            })
            .collect();
        matches.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.work_id.cmp(&b.work_id)));
        Ok(matches)
    }

    /// The candidate works of a page, as [`Matcher::match_text`] would verify them: at most
    /// `max_candidates`, those found by the most sources first, then those with the most
    /// windows found. For tests and the quality benchmark, which compare the sources.
    ///
    /// Each enabled source is queried with the page's own windows: the content-anchored windows'
    /// SimHashes and MinHash signatures, and DNA codes of a window starting at *every* initial
    /// of the page. Works' DNA windows start every few dozen initials from the start of the
    /// work, so a copy behind boilerplate of any length still lines up with them. A page with
    /// romanized runs ([`romanized`]) is also looked up with the DNA codes of its reading as
    /// syllables.
    pub fn candidates_for(&self, page_text: &str) -> Result<Vec<Candidate>, IndexError> {
        let page = normalize(page_text);
        let romanized = self.read_romanized(&page, page_text);
        let sense = self.read_sense(page_text, &page);
        let lookup = self.look_up(&page.chars, romanized.as_ref().map(|r| &r.syllables[..]))?;
        self.candidates(&page, &lookup, romanized.as_ref(), sense.as_ref())
    }

    /// The page read sentence by sentence through the thesaurus, when laundered copies are
    /// looked for (the sense index proposes the works it is aligned with, so without that
    /// source there is nothing to read it for).
    fn read_sense(&self, page_text: &str, page: &Normalized) -> Option<laundering::SenseText> {
        if !self.sense_enabled() {
            return None;
        }
        let sentences = laundering::sentence_starts(page_text, page);
        let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
        Some(laundering::SenseText::new(
            &page.chars,
            &sentences,
            thesaurus,
        ))
    }

    /// The page read with its romanized runs as syllables, when the configuration asks for it
    /// and the page has such runs.
    fn read_romanized(&self, page: &Normalized, page_text: &str) -> Option<RomanizedPage> {
        if !(self.config.romanized && self.config.align.pinyin) {
            return None;
        }
        read_romanized(page, page_text)
    }

    fn candidates(
        &self,
        page: &Normalized,
        lookup: &KeyLookup,
        romanized: Option<&RomanizedPage>,
        sense: Option<&laundering::SenseText>,
    ) -> Result<Vec<Candidate>, IndexError> {
        let methods = self.config.candidates.methods;
        // Distinct (work, window) pairs found by each source.
        let mut found: [HashSet<SegmentRef>; 3] = Default::default();
        let mut hits = Vec::new();
        if methods.contains(CandidateMethods::SIMHASH)
            || methods.contains(CandidateMethods::MINHASH)
        {
            let windows = fingerprint_normalized(page, &self.config.fingerprint);
            if methods.contains(CandidateMethods::SIMHASH) {
                let signatures: Vec<u64> = windows.iter().map(|w| w.simhash).collect();
                self.index.query_many(&signatures, &mut hits)?;
                found[0].extend(hits.iter().flatten().map(|hit| hit.segment));
            }
            if methods.contains(CandidateMethods::MINHASH) {
                let signatures =
                    self.window_signatures(&page.chars, windows.iter().map(|w| &w.window));
                self.lsh.query_many(&signatures, &mut hits)?;
                found[1].extend(hits.iter().flatten().map(|hit| hit.segment));
            }
        }
        if methods.contains(CandidateMethods::DNA) {
            let mut codes: Vec<u128> = dna_codes(&page.chars, &self.page_dna, &self.reference)
                .into_iter()
                .map(|w| w.code)
                .collect();
            if let Some(romanized) = romanized {
                let read =
                    dna_codes_of_initials(&romanized.initials, &self.page_dna, &self.reference);
                codes.extend(read.into_iter().map(|w| w.code));
            }
            // Neighbouring start positions often give the same code: query each once.
            codes.sort_unstable();
            codes.dedup();
            self.dna.query_many(&codes, &mut hits)?;
            found[2].extend(hits.iter().flatten().map(|hit| hit.segment));
        }
        let mut per_work: HashMap<WorkId, Candidate> = HashMap::new();
        if methods.contains(CandidateMethods::KGRAM) {
            let config = &self.config.candidates.postings;
            let KeyLookup {
                keys,
                hashes,
                found,
            } = lookup;
            for (work_id, hits) in postings::consistent_works(keys, hashes, found, config) {
                let candidate = per_work
                    .entry(work_id)
                    .or_insert_with(|| Candidate::new(work_id));
                candidate.methods = candidate.methods | CandidateMethods::KGRAM;
                candidate.kgram_hits = hits;
            }
        }
        let sources = [
            CandidateMethods::SIMHASH,
            CandidateMethods::MINHASH,
            CandidateMethods::DNA,
        ];
        for (segments, method) in found.iter().zip(sources) {
            for segment in segments {
                let candidate = per_work
                    .entry(segment.work_id)
                    .or_insert_with(|| Candidate::new(segment.work_id));
                candidate.methods = candidate.methods | method;
                match method {
                    CandidateMethods::SIMHASH => candidate.simhash_windows += 1,
                    CandidateMethods::MINHASH => candidate.minhash_windows += 1,
                    _ => candidate.dna_windows += 1,
                }
            }
        }
        if let Some(sense) = sense.filter(|_| self.sense_enabled()) {
            let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
            let found = self
                .sense
                .query(&page.chars, sense, thesaurus, &self.config.laundering);
            for (work_id, blocks) in found {
                let candidate = per_work
                    .entry(work_id)
                    .or_insert_with(|| Candidate::new(work_id));
                candidate.methods = candidate.methods | CandidateMethods::SENSE;
                candidate.sense_blocks = blocks;
            }
        }
        let mut ranked: Vec<Candidate> = per_work
            .into_values()
            // A work removed while a remote index still held its windows is not a candidate.
            .filter(|c| self.knows(c.work_id))
            .collect();
        ranked.sort_by(|a, b| {
            (b.methods.count(), b.windows())
                .cmp(&(a.methods.count(), a.windows()))
                .then(a.work_id.cmp(&b.work_id))
        });
        ranked.truncate(self.config.max_candidates);
        Ok(ranked)
    }

    /// Verifies a page against one named work, whatever the index says: for re-checking a
    /// stored match, or when a rights holder points at a page and a work. `None` when the
    /// work is unknown (or, with texts on demand, its text cannot be read) or the page does not
    /// copy enough of it.
    pub fn verify_work(&self, page_text: &str, work_id: WorkId) -> Option<WorkMatch> {
        let page = normalize(page_text);
        if page.is_empty() {
            return None;
        }
        let work = self.prepared_works([work_id]).ok()?.remove(&work_id)?;
        self.work_boilerplate(work_id, &work).ok()?;
        let romanized = self.read_romanized(&page, page_text);
        let sense = self.read_sense(page_text, &page);
        let lookup = self
            .look_up(&page.chars, romanized.as_ref().map(|r| &r.syllables[..]))
            .ok()?;
        let common = self.page_mask(&lookup, &page, romanized.is_some());
        let views = self.page_views(page, common, romanized, sense).ok()?;
        self.verify_views(&views, work_id, &work, "direct", true)
    }

    /// Looks a text's selected k-grams up in the postings: its characters, and its syllables
    /// (`syllables`, a reading with romanized runs as syllables, or else the characters'
    /// default readings).
    fn look_up(&self, chars: &[char], syllables: Option<&[u32]>) -> Result<KeyLookup, IndexError> {
        if self.shared && !self.postings_shared {
            return Err(IndexError::Backend(
                "a matcher over shared indexes needs the shared k-gram postings: they are its \
                 candidates and tell library boilerplate"
                    .to_owned(),
            ));
        }
        let config = &self.config.candidates.postings;
        let read;
        let syllables: &[u32] = match syllables {
            Some(syllables) => syllables,
            None if config.syllables => {
                read = copytrace_fingerprint::pinyin::syllable_ids(chars);
                &read
            }
            None => &[],
        };
        let keys = postings::text_keys(chars, syllables, config);
        let hashes = postings::distinct_hashes(&keys);
        let mut found = Vec::new();
        self.postings.lookup(&hashes, config.common, &mut found)?;
        Ok(KeyLookup {
            keys,
            hashes,
            found,
        })
    }

    /// The boilerplate mask of a text from its lookup ([`postings::common_mask`]).
    fn common_mask(&self, lookup: &KeyLookup, len: usize) -> Vec<bool> {
        postings::common_mask(
            &lookup.keys,
            &lookup.hashes,
            &lookup.found,
            &self.config.candidates.postings,
            self.config.align.common_seed_min_works,
            len,
        )
    }

    /// The boilerplate mask of the page as written, from its lookup. A page with romanized runs
    /// was looked up with that reading's syllables, whose positions are not the written
    /// page's: only its character k-grams mark it then.
    fn page_mask(&self, lookup: &KeyLookup, page: &Normalized, romanized: bool) -> Vec<bool> {
        if !romanized {
            return self.common_mask(lookup, page.chars.len());
        }
        let keys: Vec<postings::Key> = lookup
            .keys
            .iter()
            .filter(|k| k.projection == copytrace_fingerprint::winnow::Projection::Chars)
            .copied()
            .collect();
        postings::common_mask(
            &keys,
            &lookup.hashes,
            &lookup.found,
            &self.config.candidates.postings,
            self.config.align.common_seed_min_works,
            page.chars.len(),
        )
    }

    /// A work's seeds in both projections; the library changed.
    fn work_seeds(&mut self, normalized: &Normalized) -> WorkSeeds {
        let seeds = WorkSeeds::new(&normalized.chars, &self.config.align);
        self.library_changed();
        seeds
    }

    /// Forgets what depends on the library-wide seed frequencies.
    fn library_changed(&mut self) {
        self.boilerplate
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        self.laundered
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// The work prepared for sentence alignment, from the cache (see `laundered`) or built.
    fn laundered_work(
        &self,
        work_id: WorkId,
        work: &PreparedWork,
    ) -> std::sync::Arc<laundering::LaunderedWork> {
        cached(&self.laundered, work_id, LAUNDERED_CACHE_WORKS, || {
            laundering::LaunderedWork::new(
                &work.normalized.chars,
                &work.sentences,
                copytrace_fingerprint::thesaurus::Thesaurus::builtin(),
                &self.sense,
            )
        })
    }

    /// The work's boilerplate mask, from the cache (see `boilerplate`) or computed from the
    /// lookup of its own k-grams (the work itself counts among the works holding them).
    fn work_boilerplate(
        &self,
        work_id: WorkId,
        work: &PreparedWork,
    ) -> Result<std::sync::Arc<WorkBoilerplate>, IndexError> {
        // One per work verified: a mask is a flag per character, small beside the work's text
        // when texts are kept; bounded when they are read on demand.
        let capacity = match self.on_demand {
            Some(_) => ON_DEMAND_MASK_WORKS,
            None => usize::MAX,
        };
        try_cached(&self.boilerplate, work_id, capacity, || {
            let chars = &work.normalized.chars;
            let syllables = (!work.seeds.syllables.is_empty()).then_some(&work.seeds.syllables[..]);
            let lookup = self.look_up(chars, syllables)?;
            let common = self.common_mask(&lookup, chars.len());
            Ok(WorkBoilerplate {
                informative: common.iter().filter(|c| !**c).count(),
                common,
            })
        })
    }

    /// The page's views for verification: as written (with its boilerplate mask `common`),
    /// read with romanized runs as syllables (looked up for its own mask), and read for sense.
    fn page_views(
        &self,
        page: Normalized,
        common: Vec<bool>,
        romanized: Option<RomanizedPage>,
        sense: Option<laundering::SenseText>,
    ) -> Result<PageViews, IndexError> {
        let seeds = align::PageSeeds::new(&page.chars, &self.config.align, common);
        let romanized = match romanized {
            Some(read) => {
                let lookup = self.look_up(&read.normalized.chars, Some(&read.syllables))?;
                let common = self.common_mask(&lookup, read.normalized.chars.len());
                Some((read, common, OnceCell::new()))
            }
            None => None,
        };
        Ok(PageViews {
            page,
            seeds,
            sense,
            romanized,
        })
    }

    /// Verifies the page against one work in each of its readings and keeps the verdict that
    /// covers more of the work; on a tie, the page as written. Reading Latin letters as pinyin
    /// is thus never forced on a page: it is used only where it explains more of the work.
    ///
    /// Like the pinyin projection, the reading is skipped when the page as written already
    /// scores `align.pinyin_skip_share`: it can add to a verdict only through pinyin runs, and
    /// those are not even looked for when the characters explain that much.
    ///
    /// With `laundered`, sentences that characters leave unexplained are also read for
    /// paraphrase ([`laundering`]). On a page with romanized runs the readings first compete on
    /// characters alone, whose evidence is exact, and paraphrase is tried only when neither
    /// reading is reported: whole paraphrased sentences would otherwise outweigh a romanized
    /// excerpt's exact evidence.
    fn verify_views(
        &self,
        views: &PageViews,
        work_id: WorkId,
        work: &PreparedWork,
        found_by: &str,
        laundered: bool,
    ) -> Option<WorkMatch> {
        let sense = views.sense.as_ref().filter(|_| laundered);
        let Some((read, common, seeds)) = &views.romanized else {
            return self.verify(&views.page, &views.seeds, sense, work_id, work, found_by);
        };
        let written = self.verify(&views.page, &views.seeds, None, work_id, work, found_by);
        if written
            .as_ref()
            .is_some_and(|w| w.score >= self.config.align.pinyin_skip_share)
        {
            return written;
        }
        let seeds = seeds.get_or_init(|| {
            align::PageSeeds::with_syllables(
                &read.normalized.chars,
                read.syllables.clone(),
                &self.config.align,
                common.clone(),
            )
        });
        let romanized = self.verify(&read.normalized, seeds, None, work_id, work, found_by);
        let best = match (written, romanized) {
            (Some(written), Some(romanized)) if romanized.coverage <= written.coverage => {
                Some(written)
            }
            (written, None) => written,
            (_, Some(mut romanized)) => {
                romanized.method.push_str("+romanized");
                Some(romanized)
            }
        };
        match best {
            None if sense.is_some() => {
                self.verify(&views.page, &views.seeds, sense, work_id, work, found_by)
            }
            best => best,
        }
    }

    /// Aligns the page with one work and turns the passages into a verdict (see [`WorkMatch`]
    /// for what the numbers mean), or `None` when less than `min_copied_chars` is copied.
    fn verify(
        &self,
        page: &Normalized,
        page_seeds: &align::PageSeeds,
        page_sense: Option<&laundering::SenseText>,
        work_id: WorkId,
        work: &PreparedWork,
        found_by: &str,
    ) -> Option<WorkMatch> {
        let work_chars = &work.normalized.chars;
        let boilerplate = self.work_boilerplate(work_id, work).ok()?;
        let work_informative = boilerplate.informative;
        let mut passages = align::align(
            &page.chars,
            page_seeds,
            work_chars,
            &work.seeds,
            work_informative,
            &self.config.align,
        );
        let mut laundered = false;
        if let Some(page_sense) = page_sense.filter(|_| self.config.laundering.enabled) {
            let found: usize = passages.iter().map(|p| p.aligned_chars).sum();
            let page_informative = page.len() - page_seeds.common_chars();
            let shorter = page_informative.min(work_informative);
            if (found as f64) < self.config.align.pinyin_skip_share * shorter as f64 {
                // Sentences that characters already explain keep their exact evidence, and
                // boilerplate proves nothing: only the rest is read sentence by sentence.
                let mut page_done = page_seeds.common_mask().to_vec();
                let mut work_done = boilerplate.common.clone();
                for run in passages.iter().flat_map(|p| &p.runs) {
                    page_done[run.page..run.page + run.len].fill(true);
                    work_done[run.work..run.work + run.len].fill(true);
                }
                let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
                let prepared = self.laundered_work(work_id, work);
                let sentences = laundering::align_laundered(
                    &page.chars,
                    page_sense,
                    &page_done,
                    work_chars,
                    &prepared,
                    &work_done,
                    thesaurus,
                    &self.sense,
                    &self.config.laundering,
                );
                if !sentences.is_empty() {
                    laundered = true;
                    passages = merge_laundered(passages, sentences);
                }
            }
        }
        let mut work_covered = vec![false; work_chars.len()];
        for run in passages.iter().flat_map(|p| &p.runs) {
            work_covered[run.work..run.work + run.len]
                .iter_mut()
                .for_each(|c| *c = true);
        }
        // A page repeating a work's sentence (a heading, a name, a refrain) copies it once: the
        // count is capped by the distinct work characters the evidence covers.
        //
        // Digits are aligned but not counted: figures are facts that independent reports of
        // one event share (a day's stock index table, a match score), not anybody's wording.
        let wording: Vec<usize> = passages
            .iter()
            .map(|p| {
                let digits = |range: &[char]| range.iter().filter(|c| c.is_ascii_digit()).count();
                let digits: usize = if p.paraphrase {
                    digits(&page.chars[p.page_start..p.page_end])
                } else {
                    p.runs
                        .iter()
                        .map(|r| digits(&page.chars[r.page..r.page + r.len]))
                        .sum()
                };
                p.aligned_chars.saturating_sub(digits)
            })
            .collect();
        let page_aligned: usize = wording.iter().sum();
        let copied_chars = page_aligned.min(work_covered.iter().filter(|c| **c).count());
        if copied_chars < self.config.min_copied_chars.max(1) {
            return None;
        }
        let min_stretch = self.config.min_stretch_chars;
        if min_stretch > 0 && densest_stretch(&passages, &wording, min_stretch) < min_stretch {
            return None;
        }
        let covered = work_covered
            .iter()
            .zip(&boilerplate.common)
            .filter(|(covered, common)| **covered && !**common)
            .count();
        let share = |part: usize, whole: usize| (part as f64 / whole.max(1) as f64).min(1.0);
        let coverage = share(covered, work_informative);
        let page_informative = page.len() - page_seeds.common_chars();
        let containment = share(copied_chars, page_informative);
        let evidence = passages
            .iter()
            .map(|p| {
                let (page_start, page_end) = page.byte_range(p.page_start, p.page_end);
                let (work_start, work_end) = work.normalized.byte_range(p.work_start, p.work_end);
                Evidence {
                    page_start,
                    page_end,
                    work_start,
                    work_end,
                    aligned_chars: p.aligned_chars as u32,
                }
            })
            .collect();
        let pinyin = if passages.iter().any(|p| p.pinyin) {
            "+pinyin"
        } else {
            ""
        };
        let laundered = if laundered { "+laundered" } else { "" };
        Some(WorkMatch {
            work_id,
            score: coverage.max(containment),
            coverage,
            containment,
            copied_chars,
            method: format!("{found_by}+align{pinyin}{laundered}"),
            evidence,
        })
    }
}

/// The sentence passages of a laundered copy with the character passages that lie outside
/// them (a sentence copied unchanged between laundered ones is inside), in page order.
fn merge_laundered(
    characters: Vec<AlignedPassage>,
    sentences: Vec<AlignedPassage>,
) -> Vec<AlignedPassage> {
    let mut merged: Vec<AlignedPassage> = characters
        .into_iter()
        .filter(|c| {
            !sentences
                .iter()
                .any(|s| c.page_start < s.page_end && s.page_start < c.page_end)
        })
        .collect();
    merged.extend(sentences);
    merged.sort_by_key(|p| p.page_start);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORK_A: &str = "第一章 雨夜来客\n夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\n\
“你就是沈青川？”陌生人开口问道，声音低沉得像远处滚过的闷雷。少年点了点头，握紧了门框。\
远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃。";
    const WORK_B: &str = "滨海港口三季度吞吐量创新高\n海风通讯社滨海10月8日电 记者从滨海港务集团获悉，\
今年第三季度滨海港货物吞吐量达到一亿二千万吨，同比增长百分之八点六，创下历史同期最高纪录。\
集装箱吞吐量同步增长，新开通的三条国际航线为增长贡献了重要力量。港务集团负责人表示，\
下一步将继续推进智慧码头建设，提升装卸效率，服务区域经济发展。（完）";

    fn matcher() -> Matcher {
        let mut m = Matcher::new(MatchConfig::default());
        m.add_work(1, WORK_A).unwrap();
        m.add_work(2, WORK_B).unwrap();
        m
    }

    #[test]
    fn a_verbatim_copy_in_boilerplate_matches_the_right_work_with_exact_evidence() {
        let page = format!(
            "首页 | 玄幻小说 | 排行榜\n最新章节请访问 www.example.com\n{WORK_A}\n上一章 下一章"
        );
        let found = matcher().match_text(&page).unwrap();
        assert_eq!(found.len(), 1);
        let m = &found[0];
        assert_eq!(m.work_id, 1);
        assert!(m.coverage > 0.95, "coverage {}", m.coverage);
        let e = m.evidence[0];
        assert_eq!(
            &page[e.page_start as usize..e.page_end as usize],
            &WORK_A[e.work_start as usize..e.work_end as usize]
        );
    }

    #[test]
    fn a_traditional_chinese_copy_matches() {
        let traditional = "夜色漸深，雨水順著屋簷滴落下來。少年推開木門，看見一個披著蓑衣的陌生人站在院中，\
手裡提著一盞昏黃的燈籠。他的眼睛像是藏著整片星空，沉默地望著這座破舊的小院。\
“你就是沈青川？”陌生人開口問道，聲音低沉得像遠處滾過的悶雷。少年點了點頭，握緊了門框。";
        let found = matcher().match_text(traditional).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].work_id, 1);
        assert!(
            found[0].containment > 0.9,
            "containment {}",
            found[0].containment
        );
    }

    #[test]
    fn a_page_sharing_only_a_dateline_and_closing_is_not_reported() {
        let page = "滨海地铁5号线开通运营\n海风通讯社滨海10月9日电 记者从滨海地铁集团获悉，\
地铁五号线今天正式开通，全长三十二公里，设站二十四座，连接城东新区与老城区。\
市民可使用交通卡和手机扫码乘车，首末班时间为早六点至晚十一点。（完）";
        assert!(matcher().match_text(page).unwrap().is_empty());
    }

    #[test]
    fn unrelated_text_is_not_reported() {
        let page = "周末厨房：番茄炖牛腩。牛腩切块冷水下锅焯水，撇去浮沫后捞出。番茄去皮切丁，\
锅中放少许油，炒出番茄的汁水，再放入牛腩翻炒均匀，加入热水没过食材，小火慢炖一个半小时。";
        assert!(matcher().match_text(page).unwrap().is_empty());
    }

    #[test]
    fn window_signatures_equal_the_signatures_of_each_windows_shingle_set() {
        let m = matcher();
        let chars = normalize(WORK_A).chars;
        let windows = copytrace_fingerprint::windows(&chars, &m.config.fingerprint.window);
        let mut ranges = windows.clone();
        ranges.push(Window { start: 3, end: 5 });
        let k = m.config.candidates.minhash_shingle;
        let expected: Vec<MinHashSignature> = ranges
            .iter()
            .map(|w| {
                m.hasher
                    .signature(&shingle_hashes(&chars[w.start..w.end], k))
            })
            .collect();
        assert!(windows.len() > 3);
        assert_eq!(m.window_signatures(&chars, &ranges), expected);
    }

    fn passage(page_start: usize, aligned: usize) -> AlignedPassage {
        AlignedPassage {
            page_start,
            page_end: page_start + aligned,
            work_start: 0,
            work_end: aligned,
            aligned_chars: aligned,
            exact_chars: aligned,
            pinyin: false,
            paraphrase: false,
            runs: Vec::new(),
        }
    }

    #[test]
    fn the_densest_stretch_joins_only_passages_close_enough_to_stay_half_aligned() {
        // Two passages ten characters apart form one stretch; the one 170 characters before
        // them would make the stretch less than three quarters aligned.
        let passages = [passage(0, 30), passage(200, 30), passage(240, 30)];
        let counted = [30, 30, 30];
        assert_eq!(densest_stretch(&passages, &counted, usize::MAX), 60);
        // What a passage counts for decides: two passages that are mostly figures are no
        // stretch.
        assert_eq!(densest_stretch(&passages, &[30, 10, 10], usize::MAX), 30);
        // Quotations side by side on the page but from distant places of the work are not one
        // stretch.
        let mut apart = passages.clone();
        apart[2].work_start = 300;
        apart[2].work_end = 330;
        assert_eq!(densest_stretch(&apart, &counted, usize::MAX), 30);
        // Reordered: the work range is filled all the same.
        let mut reordered = passages.clone();
        reordered[1].work_start = 30;
        reordered[1].work_end = 60;
        assert_eq!(
            densest_stretch(&reordered[1..], &counted[1..], usize::MAX),
            60
        );
        assert_eq!(
            densest_stretch(&passages[..1], &counted[..1], usize::MAX),
            30
        );
        assert_eq!(densest_stretch(&[], &[], usize::MAX), 0);
        // Stops at `enough`.
        assert_eq!(densest_stretch(&passages, &counted, 30), 30);
    }

    /// Four clauses of WORK_A, 27 to 33 characters each, with the reviewer's own sentences
    /// between them.
    fn review_quoting_work_a() -> String {
        let own = "这段描写很有画面感，读来令人印象深刻。作者用极简的笔墨交代了人物和环境，\
                   节奏从容，悬念自然而然地生长出来，值得细细品味。";
        let quotes = [
            "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中",
            "手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院",
            "陌生人开口问道，声音低沉得像远处滚过的闷雷。少年点了点头，握紧了门框",
            "村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃",
        ];
        quotes
            .iter()
            .map(|q| format!("{own}书中写道：“{q}”"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_review_quoting_short_passages_apart_is_not_reported_though_they_add_up() {
        let page = review_quoting_work_a();
        assert!(matcher().match_text(&page).unwrap().is_empty());
        // The quotations add up to more than `min_copied_chars`: only the stretch rule keeps
        // the review from being accused.
        let mut m = Matcher::new(MatchConfig {
            min_stretch_chars: 0,
            ..MatchConfig::default()
        });
        m.add_work(1, WORK_A).unwrap();
        let found = m.match_text(&page).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].copied_chars >= 100, "{found:?}");
        assert!(found[0].evidence.len() >= 3, "{found:?}");
    }

    #[test]
    fn a_copy_with_one_character_in_ten_misread_is_still_one_dense_stretch() {
        // Every tenth Han character replaced by one of similar shape.
        let lookalike = |c: char| match c {
            '夜' => '液',
            '雨' => '两',
            '少' => '小',
            '木' => '本',
            '人' => '入',
            '手' => '毛',
            '眼' => '服',
            '天' => '夭',
            _ => '口',
        };
        let mut han = 0;
        let page: String = WORK_A
            .chars()
            .map(|c| {
                if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                    han += 1;
                    if han % 10 == 0 {
                        return lookalike(c);
                    }
                }
                c
            })
            .collect();
        let found = matcher().match_text(&page).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].work_id, 1);
        assert!(found[0].coverage > 0.7, "{found:?}");
    }

    /// A day's stock index table: the same figures in any report of that day.
    const INDEX_TABLE: &str = "上证Ａ股９５４．９８　９５１．８０　１５７８．６１　９０５．４９；\
                               上证Ｂ股６７．０３　６７．０２　６９．３１　２５１．９３；\
                               深证指数３２７．３４　３２６．３３　５２０．２５　２９５．４４；\
                               深证Ａ股３４１．８１　３４０．７０　５４８．５４　３０７．９４；\
                               深证Ｂ股１３２．０８　１３１．６６　１８７．７５　１２０．２２。";

    #[test]
    fn a_copy_of_a_work_full_of_figures_is_still_a_copy() {
        // The figures do not count, but they are copied text: a copy of a market summary
        // with its table is as dense as any copy (judged on the counted characters alone, the
        // table's figures made it look sparse and it went unreported).
        let table = INDEX_TABLE;
        let work = format!(
            "一九九七年股市概览\n{table}\n全年沪深两市成交金额创出历史新高，新股发行数量超过以往\
             任何一年。分析人士认为，年末资金面偏紧，短期内指数仍将在低位徘徊，投资者宜以\
             观望为主，等待新年政策面的进一步明朗。"
        );
        let page = format!("最新章节免费阅读\n{work}\n本站域名随时更换，请收藏。");
        let mut m = Matcher::new(MatchConfig::default());
        m.add_work(3, &work).unwrap();
        let found = m.match_text(&page).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let canonical = normalize(&work).chars;
        let digits = canonical.iter().filter(|c| c.is_ascii_digit()).count();
        assert!(
            digits * 4 > canonical.len(),
            "{digits} of {}",
            canonical.len()
        );
        assert_eq!(found[0].copied_chars, canonical.len() - digits, "{found:?}");
    }

    #[test]
    fn figures_shared_by_two_reports_of_one_market_day_are_not_a_copy() {
        // A day's index table: the same figures in any report of that day.
        let table = INDEX_TABLE;
        let work = format!("{WORK_B}\n{table}");
        let page = format!("{table}\n股市昨日小幅震荡，成交量较前一交易日有所放大。");
        let mut m = Matcher::new(MatchConfig::default());
        m.add_work(2, &work).unwrap();
        assert!(m.match_text(&page).unwrap().is_empty());
        // Counted with its digits, the shared table is over the report floor.
        let canonical = normalize(table).chars;
        assert!(canonical.len() > MatchConfig::default().min_copied_chars);
        assert!(canonical.iter().filter(|c| c.is_ascii_digit()).count() > 90);
    }

    #[test]
    fn removing_a_work_stops_it_matching() {
        let mut m = matcher();
        m.remove_work(1).unwrap();
        assert!(m.match_text(WORK_A).unwrap().is_empty());
        assert_eq!(m.work_count(), 1);
    }
}
