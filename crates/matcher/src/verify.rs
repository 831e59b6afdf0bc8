//! Verification: a candidate work is aligned with the page's canonical text ([`crate::align`]),
//! and the aligned passages become a verdict ([`WorkMatch`]) only when enough of them, in a
//! dense enough stretch, cannot be explained by coincidence or library boilerplate.
//!
//! The page is prepared once for every candidate ([`PageViews`]); what depends on one work and
//! the whole library (its boilerplate mask, its sentences prepared for laundered copies) is
//! kept in [`VerifyCaches`] until the library changes.

use std::cell::OnceCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::HashMap;
use serde::{Deserialize, Serialize};

use copytrace_fingerprint::Normalized;

use crate::Matcher;
use crate::align::{self, AlignedPassage};
use crate::candidates::{Candidate, KeyLookup};
use crate::config::CandidateMethods;
use crate::index::{Index, IndexError, WorkId};
use crate::laundering;
use crate::library::PreparedWork;
use crate::page::PageReading;
use crate::romanized::RomanizedPage;

/// Least share of a dense stretch's page text that is aligned with the work (see
/// [`MatchConfig::min_stretch_chars`](crate::MatchConfig::min_stretch_chars)). Three quarters:
/// a copy with one character in ten misread, junk after every third character or an ad line
/// after every paragraph is denser still, while a reviewer who quotes two sentences with a
/// sentence of their own between them is not.
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

/// Counts a page's candidates in [`VerificationCounts`]: all are verified.
fn count_verified(candidates: &[Candidate]) {
    VERIFIED_PAGES.fetch_add(1, Ordering::Relaxed);
    VERIFIED_CANDIDATES.fetch_add(candidates.len() as u64, Ordering::Relaxed);
    VERIFIED_LAUNDERED.fetch_add(
        candidates
            .iter()
            .filter(|c| c.methods.contains(CandidateMethods::SENSE))
            .count() as u64,
        Ordering::Relaxed,
    );
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
    /// boilerplate, see [`common_mask`](crate::postings::common_mask)) that the evidence
    /// covers on the page.
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
    /// `+romanized` when the page's Latin letters were read as pinyin (see
    /// [`romanized`](crate::romanized)).
    pub method: String,
    /// Evidence passages in page order.
    pub evidence: Vec<Evidence>,
}

/// A page prepared for verification against every candidate: its canonical text with its seeds
/// and, when it has romanized runs, its reading with syllables and that reading's seeds (built
/// on first use: most pages are explained without it).
pub(crate) struct PageViews {
    page: Normalized,
    seeds: align::PageSeeds,
    /// The page read sentence by sentence through the thesaurus, for laundered copies.
    sense: Option<laundering::SenseText>,
    /// The page read with its romanized runs as syllables, with the boilerplate mask of that
    /// reading, and its seeds once a verification needs them.
    romanized: Option<(RomanizedPage, Vec<bool>, OnceCell<align::PageSeeds>)>,
}

/// Which characters of a work library boilerplate covers (see
/// [`common_mask`](crate::postings::common_mask)), and how many it leaves.
#[derive(Debug)]
pub(crate) struct WorkBoilerplate {
    common: Vec<bool>,
    informative: usize,
}

/// Most works kept prepared for sentence alignment, so the cache stays bounded whatever the
/// library's size (on the quality library, 410 works of about 10 KB of text, it added 44 MB to
/// the peak memory of `match`).
const LAUNDERED_CACHE_WORKS: usize = 256;

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

/// One candidate work as its verification reads it.
#[derive(Clone, Copy)]
struct WorkView<'a> {
    id: WorkId,
    prepared: &'a PreparedWork,
    boilerplate: &'a WorkBoilerplate,
    /// The candidate sources that found it, or `direct`: the verdict's method starts with it.
    found_by: &'a str,
}

/// What verification keeps per work until the library changes: both depend on what every
/// work of the library holds.
#[derive(Default)]
pub(crate) struct VerifyCaches {
    /// Each work's boilerplate mask, computed at its first verification: it depends on what
    /// every work holds (see [`crate::postings::common_mask`]), and recomputing it per
    /// candidate was most of the matching time.
    boilerplate: WorkCache<WorkBoilerplate>,
    /// Works prepared for sentence alignment (laundered copies), kept for at most
    /// [`LAUNDERED_CACHE_WORKS`] works: preparing a work again for every page that proposed it
    /// cost 14 % of the matching CPU on a library of 2,137 works and 18 % on one of 410
    /// (docs/benchmarks.md).
    laundered: WorkCache<laundering::LaunderedWork>,
}

impl VerifyCaches {
    /// [`VerifyCaches::clear`] through a shared reference, for a matcher in use.
    pub(crate) fn forget(&self) {
        self.boilerplate
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        self.laundered
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Forgets every work's cached values: the library changed.
    pub(crate) fn clear(&mut self) {
        self.boilerplate
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        self.laundered
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

impl<I: Index> Matcher<I> {
    /// Verifies a page against each of its candidates (at least one), best score first.
    pub(crate) fn verify_candidates(
        &self,
        page: PageReading,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<WorkMatch>, IndexError> {
        count_verified(&candidates);
        let works = self
            .library
            .prepared(candidates.iter().map(|c| c.work_id), &self.config.align)?;
        for (&work_id, work) in &works {
            self.work_boilerplate(work_id, work, Some(&page.lookup))?;
        }
        let views = self.page_views(page)?;
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

    /// The work prepared for sentence alignment, from the cache or built.
    fn laundered_work(
        &self,
        work_id: WorkId,
        work: &PreparedWork,
    ) -> Arc<laundering::LaunderedWork> {
        cached(
            &self.caches.laundered,
            work_id,
            LAUNDERED_CACHE_WORKS,
            || {
                laundering::LaunderedWork::new(
                    &work.normalized.chars,
                    &work.sentences,
                    copytrace_fingerprint::thesaurus::Thesaurus::builtin(),
                    &self.indexes.sense,
                )
            },
        )
    }

    /// The work's boilerplate mask, from the cache or computed from the lookup of its own
    /// k-grams (the work itself counts among the works holding them). The hashes the page's
    /// lookup `page` holds are taken from it rather than read again.
    pub(crate) fn work_boilerplate(
        &self,
        work_id: WorkId,
        work: &PreparedWork,
        page: Option<&KeyLookup>,
    ) -> Result<Arc<WorkBoilerplate>, IndexError> {
        // One per work verified: a mask is a flag per character, small beside the work's text
        // when texts are kept; bounded when they are read on demand.
        let capacity = if self.library.on_demand() {
            ON_DEMAND_MASK_WORKS
        } else {
            usize::MAX
        };
        try_cached(&self.caches.boilerplate, work_id, capacity, || {
            let chars = &work.normalized.chars;
            let syllables = (!work.seeds.syllables.is_empty()).then_some(&work.seeds.syllables[..]);
            let lookup =
                self.indexes
                    .look_up(&self.config.candidates.postings, chars, syllables, page)?;
            let common = lookup.common_mask(&self.config, chars.len());
            Ok(WorkBoilerplate {
                informative: common.iter().filter(|c| !**c).count(),
                common,
            })
        })
    }

    /// The page's views for verification: as written (with its boilerplate mask), read with
    /// romanized runs as syllables (looked up for its own mask), and read for sense.
    pub(crate) fn page_views(&self, mut page: PageReading) -> Result<PageViews, IndexError> {
        let common = page.common_mask(&self.config);
        let syllables = page.seed_syllables(&self.config);
        let PageReading {
            normalized,
            romanized,
            sense,
            lookup,
            ..
        } = page;
        let seeds = align::PageSeeds::with_syllables(
            &normalized.chars,
            syllables,
            &self.config.align,
            common,
        );
        let romanized = match romanized {
            Some(read) => {
                let lookup = self.indexes.look_up_reading(
                    &self.config.candidates.postings,
                    &read.normalized.chars,
                    &lookup,
                )?;
                let common = lookup.common_mask(&self.config, read.normalized.chars.len());
                Some((read, common, OnceCell::new()))
            }
            None => None,
        };
        Ok(PageViews {
            page: normalized,
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
    pub(crate) fn verify_views(
        &self,
        views: &PageViews,
        work_id: WorkId,
        work: &PreparedWork,
        found_by: &str,
        laundered: bool,
    ) -> Option<WorkMatch> {
        let boilerplate = self.work_boilerplate(work_id, work, None).ok()?;
        let work = WorkView {
            id: work_id,
            prepared: work,
            boilerplate: &boilerplate,
            found_by,
        };
        let sense = views.sense.as_ref().filter(|_| laundered);
        // The page as written is aligned once, however many verdicts read the passages.
        let written_passages = self.align_work(&views.page, &views.seeds, &work);
        let Some((read, common, seeds)) = &views.romanized else {
            return self.verdict(&views.page, &views.seeds, sense, &work, &written_passages);
        };
        let written = self.verdict(&views.page, &views.seeds, None, &work, &written_passages);
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
        let romanized_passages = self.align_work(&read.normalized, seeds, &work);
        let romanized = self.verdict(&read.normalized, seeds, None, &work, &romanized_passages);
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
                self.verdict(&views.page, &views.seeds, sense, &work, &written_passages)
            }
            best => best,
        }
    }

    /// Aligns one reading of the page with one work: the passages in page order.
    fn align_work(
        &self,
        page: &Normalized,
        page_seeds: &align::PageSeeds,
        work: &WorkView,
    ) -> Vec<AlignedPassage> {
        align::align(
            &page.chars,
            page_seeds,
            &work.prepared.normalized.chars,
            &work.prepared.seeds,
            work.boilerplate.informative,
            &self.config.align,
        )
    }

    /// Turns the passages of one alignment ([`Matcher::align_work`]) into a verdict (see
    /// [`WorkMatch`] for what the numbers mean), or `None` when less than `min_copied_chars` is
    /// copied. With `page_sense`, sentences the passages leave unexplained are first read for
    /// paraphrase.
    fn verdict(
        &self,
        page: &Normalized,
        page_seeds: &align::PageSeeds,
        page_sense: Option<&laundering::SenseText>,
        work: &WorkView,
        passages: &[AlignedPassage],
    ) -> Option<WorkMatch> {
        let WorkView {
            id: work_id,
            prepared: work,
            boilerplate,
            found_by,
        } = *work;
        let work_chars = &work.normalized.chars;
        let work_informative = boilerplate.informative;
        let merged;
        let mut passages = passages;
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
                    &self.indexes.sense,
                    &self.config.laundering,
                );
                if !sentences.is_empty() {
                    laundered = true;
                    merged = merge_laundered(passages, sentences);
                    passages = &merged;
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
        if min_stretch > 0 && densest_stretch(passages, &wording, min_stretch) < min_stretch {
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
    characters: &[AlignedPassage],
    sentences: Vec<AlignedPassage>,
) -> Vec<AlignedPassage> {
    let mut merged: Vec<AlignedPassage> = characters
        .iter()
        .filter(|c| {
            !sentences
                .iter()
                .any(|s| c.page_start < s.page_end && s.page_start < c.page_end)
        })
        .cloned()
        .collect();
    merged.extend(sentences);
    merged.sort_by_key(|p| p.page_start);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MatchConfig;
    use crate::tests::{WORK_A, WORK_B, matcher};
    use copytrace_fingerprint::normalize;

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
}
