//! Copytrace matcher: from a page's text to verified, evidence-backed matches per work.
//!
//! Matching runs in three stages, each cheap enough for the next to afford:
//!
//! 1. **Candidates** ([`index`]): every window fingerprint of the page is looked up in a
//!    SimHash index of all library windows; works with at least one window within the
//!    configured Hamming distance become candidates.
//! 2. **Verification** ([`align`]): the page's canonical text is aligned against each
//!    candidate work's; only characters that are really equal on both sides count, so a
//!    fingerprint collision can never become an accusation.
//! 3. **Verdict**: aligned passages are summed per work into coverage (share of the work found
//!    on the page), containment (share of the page taken from the work) and a score; a work is
//!    reported only when enough text is copied that coincidence, a shared dateline, an idiom or
//!    a quoted sentence cannot explain it.
//!
//! The matcher is pure computation over data handed to it. Loading works and storing verdicts
//! is the caller's job, which keeps this crate free of I/O and easy to benchmark.

pub mod align;
pub mod index;

use std::collections::HashMap;

use copytrace_fingerprint::{FingerprintConfig, Normalized, fingerprint_normalized, normalize};
use serde::{Deserialize, Serialize};

pub use align::{AlignConfig, AlignedPassage};
pub use index::{Hit, Index, IndexError, SegmentRef, SimHashIndex, WorkId};

/// Thresholds and parameters of matching.
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
    /// aligned with it. Shorter overlaps (a dateline, an idiom, a quoted sentence) are what
    /// unrelated texts share by coincidence.
    pub min_copied_chars: usize,
    /// At most this many candidate works (those with the most window hits) are verified.
    pub max_candidates: usize,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            fingerprint: FingerprintConfig::default(),
            max_distance: 3,
            align: AlignConfig::default(),
            min_copied_chars: 60,
            max_candidates: 32,
        }
    }
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
    /// Canonical characters exactly equal on both sides within the passage.
    pub aligned_chars: u32,
}

/// The verdict for one work found on a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkMatch {
    /// The work.
    pub work_id: WorkId,
    /// `max(coverage, containment)`: the larger of the share of the work reproduced on the page
    /// and the share of the page taken from the work. 1.0 means a complete copy (or a page that
    /// is nothing but an excerpt); 0.1 means a tenth of one side is copied.
    pub score: f64,
    /// Share of the work's canonical characters aligned on the page.
    pub coverage: f64,
    /// Share of the page's canonical characters aligned with the work.
    pub containment: f64,
    /// Canonical characters of the page aligned with the work.
    pub copied_chars: usize,
    /// How it was found and verified.
    pub method: String,
    /// Evidence passages in page order.
    pub evidence: Vec<Evidence>,
}

/// A library work prepared for verification.
#[derive(Debug, Clone)]
struct PreparedWork {
    normalized: Normalized,
    seeds: Vec<u64>,
}

/// The library as the matcher sees it: an index of window fingerprints plus the canonical text
/// of each work for verification.
pub struct Matcher<I: Index = SimHashIndex> {
    config: MatchConfig,
    index: I,
    works: HashMap<WorkId, PreparedWork>,
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
        Matcher {
            config,
            index,
            works: HashMap::new(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    /// Number of works known.
    pub fn work_count(&self) -> usize {
        self.works.len()
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
        self.insert(
            work_id,
            normalized,
            windows.iter().map(|w| (w.ordinal, w.simhash)),
        )?;
        Ok(windows)
    }

    /// Adds (or replaces) a work whose window fingerprints were stored earlier, without
    /// recomputing them. The text is still needed to verify candidates.
    pub fn add_fingerprinted_work(
        &mut self,
        work_id: WorkId,
        text: &str,
        windows: impl IntoIterator<Item = (u32, u64)>,
    ) -> Result<(), IndexError> {
        self.insert(work_id, normalize(text), windows)
    }

    /// Adds a work's text for verification only: its windows are already in the index, as
    /// with a shared Redis index built once by `copytrace index rebuild` and read by every
    /// match process, which must not rewrite it at start.
    pub fn add_indexed_work(&mut self, work_id: WorkId, text: &str) {
        let normalized = normalize(text);
        let seeds = align::seed_hashes(&normalized.chars, self.config.align.seed_length);
        self.works
            .insert(work_id, PreparedWork { normalized, seeds });
    }

    fn insert(
        &mut self,
        work_id: WorkId,
        normalized: Normalized,
        windows: impl IntoIterator<Item = (u32, u64)>,
    ) -> Result<(), IndexError> {
        self.remove_work(work_id)?;
        let windows: Vec<(u32, u64)> = windows.into_iter().collect();
        self.index.insert_work(work_id, &windows)?;
        let seeds = align::seed_hashes(&normalized.chars, self.config.align.seed_length);
        self.works
            .insert(work_id, PreparedWork { normalized, seeds });
        Ok(())
    }

    /// Forgets a work.
    pub fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        if self.works.remove(&work_id).is_some() {
            self.index.remove_work(work_id)?;
        }
        Ok(())
    }

    /// Finds, verifies and scores every library work copied on a page, best score first.
    pub fn match_text(&self, page_text: &str) -> Result<Vec<WorkMatch>, IndexError> {
        let page = normalize(page_text);
        if page.is_empty() {
            return Ok(Vec::new());
        }
        let page_seeds = align::PageSeeds::new(&page.chars, self.config.align.seed_length);
        let mut matches: Vec<WorkMatch> = self
            .candidates(&page)?
            .into_iter()
            .filter_map(|work_id| self.verify(&page, &page_seeds, work_id))
            .collect();
        matches.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.work_id.cmp(&b.work_id)));
        Ok(matches)
    }

    /// Candidate works ordered by number of windows hit, most first.
    fn candidates(&self, page: &Normalized) -> Result<Vec<WorkId>, IndexError> {
        let mut hits_per_work: HashMap<WorkId, usize> = HashMap::new();
        let signatures: Vec<u64> = fingerprint_normalized(page, &self.config.fingerprint)
            .iter()
            .map(|window| window.simhash)
            .collect();
        let mut hits = Vec::new();
        self.index.query_many(&signatures, &mut hits)?;
        for hit in hits.iter().flatten() {
            *hits_per_work.entry(hit.segment.work_id).or_default() += 1;
        }
        let mut ranked: Vec<(WorkId, usize)> = hits_per_work.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(self.config.max_candidates);
        Ok(ranked.into_iter().map(|(work_id, _)| work_id).collect())
    }

    fn verify(
        &self,
        page: &Normalized,
        page_seeds: &align::PageSeeds,
        work_id: WorkId,
    ) -> Option<WorkMatch> {
        let work = self.works.get(&work_id)?;
        let passages = align::align(
            &page.chars,
            page_seeds,
            &work.normalized.chars,
            &work.seeds,
            &self.config.align,
        );
        let copied_chars: usize = passages.iter().map(|p| p.aligned_chars).sum();
        if copied_chars < self.config.min_copied_chars {
            return None;
        }
        let mut work_covered = vec![false; work.normalized.len()];
        for run in passages.iter().flat_map(|p| &p.runs) {
            work_covered[run.work..run.work + run.len]
                .iter_mut()
                .for_each(|c| *c = true);
        }
        let covered = work_covered.iter().filter(|c| **c).count();
        let coverage = covered as f64 / work.normalized.len() as f64;
        let containment = copied_chars as f64 / page.len() as f64;
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
        Some(WorkMatch {
            work_id,
            score: coverage.max(containment).min(1.0),
            coverage,
            containment: containment.min(1.0),
            copied_chars,
            method: "simhash+align".to_owned(),
            evidence,
        })
    }
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
手裡提著一盞昏黃的燈籠。他的眼睛像是藏著整片星空，沉默地望著這座破舊的小院。";
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
    fn removing_a_work_stops_it_matching() {
        let mut m = matcher();
        m.remove_work(1).unwrap();
        assert!(m.match_text(WORK_A).unwrap().is_empty());
        assert_eq!(m.work_count(), 1);
    }
}
