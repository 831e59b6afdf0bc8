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
//!
//! [`Matcher`] is a facade over a few rooms, each in its own module: `config` (what matching
//! is told), `page` (a page read once: normalized, its romanized and sense readings, its
//! k-gram lookup), `candidates` (the candidate indexes, filed and queried), `verify`
//! (alignment and verdicts, with what they cache per work) and `library` (the works' texts and
//! the upkeep of adding and removing works). A page flows through them once:
//! [`Matcher::match_text`] reads it, asks for candidates and verifies them.

pub mod align;
mod buckets;
mod candidates;
mod config;
pub mod dna_index;
pub mod index;
pub mod laundering;
mod library;
pub mod lsh;
mod page;
pub mod postings;
pub mod romanized;
pub mod simhash_index;
pub mod sketch;
mod verify;

use copytrace_fingerprint::normalize;

pub use align::{AlignConfig, AlignedPassage, WorkSeeds};
pub use candidates::{Candidate, CandidateKeys, IndexSizes};
pub use config::{CandidateConfig, CandidateMethods, MatchConfig, UnknownCandidateMethod};
pub use dna_index::DnaIndex;
pub use index::{Hit, Index, IndexError, SegmentRef, WorkId};
pub use laundering::LaunderingConfig;
pub use library::WorkTexts;
pub use lsh::{LshConfig, MinHashLshIndex, MinHashSignature};
pub use postings::{MemoryPostings, PostingConfig, PostingIndex};
pub use romanized::{RomanizedPage, read_romanized};
pub use simhash_index::SimHashIndex;
pub use verify::{
    Evidence, STRETCH_DENSITY, VerificationCounts, WorkMatch, densest_stretch, verification_counts,
};

use candidates::Indexes;
use library::Library;
use page::{PageKeys, PageReading};
use verify::VerifyCaches;

/// The library as the matcher sees it: indexes of window fingerprints plus the canonical text
/// of each work for verification.
pub struct Matcher<I: Index = SimHashIndex> {
    config: MatchConfig,
    /// The candidate indexes (and the sense index, which verification reads too).
    indexes: Indexes<I>,
    /// The works' texts, kept or read on demand.
    library: Library,
    /// What verification keeps per work until the library changes.
    caches: VerifyCaches,
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
        Matcher {
            indexes: Indexes::new(&config.candidates, index, lsh, dna, shared),
            config,
            library: Library::new(),
            caches: VerifyCaches::default(),
        }
    }

    /// Keeps no work's text: works added from now on are only counted (their seeds, for
    /// boilerplate, and the in-process sense index) and remembered by id, and a work a page
    /// proposes is read from `texts`, prepared and kept in a cache of at most `budget_bytes`
    /// (least recently used first out). With shared candidate indexes
    /// ([`Matcher::with_shared_indexes`]) a worker's memory then no longer holds the library's
    /// texts. Call it before adding works.
    pub fn with_texts_on_demand(mut self, texts: Box<dyn WorkTexts>, budget_bytes: u64) -> Self {
        self.library.texts_on_demand(texts, budget_bytes);
        self
    }

    /// Looks the `kgram` source up in postings other processes share (Redis), which whoever
    /// changes the library files ([`postings::work_keys`] of each work's text); this matcher
    /// never writes them.
    pub fn with_shared_postings(mut self, postings: Box<dyn PostingIndex>) -> Self {
        self.indexes.share_postings(postings);
        self
    }

    /// Uses the sense index whoever changes a shared library keeps (see
    /// [`laundering::SenseIndex::from_parts`]) instead of filing every work's text as it is
    /// added. Works are then added by id alone ([`Matcher::add_shared_work`]), so loading reads
    /// no text and the worker holds nothing per library character (boilerplate is told by the
    /// shared postings). Call it after [`Matcher::with_texts_on_demand`], before adding works.
    pub fn with_library_statistics(mut self, sense: laundering::SenseIndex) -> Self {
        self.indexes.share_statistics(sense);
        self.library_changed();
        self
    }

    /// The configuration in use.
    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    /// The window index: a shared (remote) index may need checking, e.g. that it was not
    /// emptied while this matcher held it.
    pub fn index(&self) -> &I {
        &self.indexes.simhash
    }

    /// Number of works known.
    pub fn work_count(&self) -> usize {
        self.library.len()
    }

    /// Windows held by each candidate index.
    pub fn index_sizes(&self) -> Result<IndexSizes, IndexError> {
        self.indexes.sizes()
    }

    /// Finds, verifies and scores every library work copied on a page, best score first.
    ///
    /// The page is normalized and read once (its romanized and sense readings, its k-gram
    /// lookup); candidate generation and the verification of every candidate share that
    /// reading.
    pub fn match_text(&self, page_text: &str) -> Result<Vec<WorkMatch>, IndexError> {
        let normalized = normalize(page_text);
        if normalized.is_empty() {
            return Ok(Vec::new());
        }
        let page = PageReading::read(&self.config, &self.indexes, page_text, normalized)?;
        let candidates = self.find_candidates(&page)?;
        if candidates.is_empty() {
            // Most crawled pages copy nothing: skip building their seed indexes.
            return Ok(Vec::new());
        }
        self.verify_candidates(page, candidates)
    }

    /// [`Matcher::match_text`] of each of `texts`, with one lookup of their k-grams for all
    /// of them instead of one a page: a worker matching many pages sends one request to the
    /// shared index per batch, not per page. Each page's verdict is the one
    /// [`Matcher::match_text`] gives: a hash's postings do not depend on what else is read
    /// with it.
    pub fn match_texts(&self, texts: &[&str]) -> Result<Vec<Vec<WorkMatch>>, IndexError> {
        self.match_texts_reading(texts, |_, _| {})
    }

    /// [`Matcher::match_texts`], showing `read` each page's canonical characters (its index
    /// in `texts`, and what [`normalize()`] gives) as they are read: what else is made of a
    /// page's text (its sketch) is made without normalizing it again.
    pub fn match_texts_reading(
        &self,
        texts: &[&str],
        mut read: impl FnMut(usize, &[char]),
    ) -> Result<Vec<Vec<WorkMatch>>, IndexError> {
        let pages: Vec<Option<PageKeys>> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let normalized = normalize(text);
                read(i, &normalized.chars);
                (!normalized.is_empty()).then(|| PageKeys::select(&self.config, text, normalized))
            })
            .collect();
        let mut hashes: Vec<u64> = pages.iter().flatten().flat_map(PageKeys::hashes).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let batch = self
            .indexes
            .look_up_hashes(&self.config.candidates.postings, hashes)?;
        pages
            .into_iter()
            .map(|page| {
                let Some(page) = page else {
                    return Ok(Vec::new());
                };
                let page = page.look_up(&self.config, &self.indexes, Some(&batch))?;
                let candidates = self.find_candidates(&page)?;
                if candidates.is_empty() {
                    return Ok(Vec::new());
                }
                self.verify_candidates(page, candidates)
            })
            .collect()
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
        let normalized = normalize(page_text);
        let page = PageReading::read(&self.config, &self.indexes, page_text, normalized)?;
        self.find_candidates(&page)
    }

    /// The candidates of a page read, among the works the library still knows.
    fn find_candidates(&self, page: &PageReading) -> Result<Vec<Candidate>, IndexError> {
        self.indexes
            .candidates(&self.config, page, |work_id| self.library.knows(work_id))
    }

    /// Verifies a page against one named work, whatever the index says: for re-checking a
    /// stored match, or when a rights holder points at a page and a work. `None` when the
    /// work is unknown (or, with texts on demand, its text cannot be read) or the page does not
    /// copy enough of it.
    pub fn verify_work(&self, page_text: &str, work_id: WorkId) -> Option<WorkMatch> {
        let normalized = normalize(page_text);
        if normalized.is_empty() {
            return None;
        }
        let work = self
            .library
            .prepared([work_id], &self.config.align)
            .ok()?
            .remove(&work_id)?;
        let page = PageReading::read(&self.config, &self.indexes, page_text, normalized).ok()?;
        let views = self.page_views(page).ok()?;
        self.verify_views(&views, work_id, &work, "direct", true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A novel's opening chapter: the library work most tests copy.
    pub(crate) const WORK_A: &str = "第一章 雨夜来客\n夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。\n\
“你就是沈青川？”陌生人开口问道，声音低沉得像远处滚过的闷雷。少年点了点头，握紧了门框。\
远处传来几声犬吠，村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃。";
    /// A news report, sharing a dateline and a closing with any report of its agency.
    pub(crate) const WORK_B: &str = "滨海港口三季度吞吐量创新高\n海风通讯社滨海10月8日电 记者从滨海港务集团获悉，\
今年第三季度滨海港货物吞吐量达到一亿二千万吨，同比增长百分之八点六，创下历史同期最高纪录。\
集装箱吞吐量同步增长，新开通的三条国际航线为增长贡献了重要力量。港务集团负责人表示，\
下一步将继续推进智慧码头建设，提升装卸效率，服务区域经济发展。（完）";

    /// A matcher with the default configuration holding `WORK_A` (1) and `WORK_B` (2).
    pub(crate) fn matcher() -> Matcher {
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
    fn a_batch_of_pages_gets_the_verdicts_each_page_gets_alone() {
        let matcher = matcher();
        let copy_a = format!("首页 | 排行榜\n{WORK_A}\n上一章 下一章");
        let half_b: String = WORK_B.chars().skip(20).take(120).collect();
        let pages = [
            copy_a.as_str(),
            "",
            "周末厨房：番茄炖牛腩。牛腩切块冷水下锅焯水，撇去浮沫后捞出。",
            half_b.as_str(),
            copy_a.as_str(),
        ];
        let batch = matcher.match_texts(&pages).unwrap();
        assert_eq!(batch.len(), pages.len());
        for (page, found) in pages.iter().zip(&batch) {
            assert_eq!(found, &matcher.match_text(page).unwrap(), "{page}");
        }
        let works = |found: &[WorkMatch]| found.iter().map(|m| m.work_id).collect::<Vec<_>>();
        assert_eq!(works(&batch[0]), [1]);
        assert!(batch[1].is_empty() && batch[2].is_empty());
        assert_eq!(works(&batch[3]), [2]);
        assert_eq!(works(&batch[4]), [1]);
    }
}
