//! Verification by alignment of canonical texts (seed and extend).
//!
//! A fingerprint hit only says two windows *look* alike. Before anything is reported, the
//! page's canonical text is aligned against the work's: every `seed_length`-character substring
//! the two share is a seed, each seed is extended along its diagonal into a maximal exact run,
//! overlapping runs are resolved in favour of the longest, and runs that follow each other
//! closely on both sides (small edits, a replaced character, a short inserted ad) are chained
//! into passages. The passages are the evidence: canonical ranges that map back to exact byte
//! ranges of both originals.

use std::collections::HashMap;

use copytrace_fingerprint::simhash::hash_chars;

/// Parameters of the alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlignConfig {
    /// Length of the shared substrings that start a run (canonical characters).
    pub seed_length: usize,
    /// Largest gap, on either side, between two runs chained into one passage.
    pub max_gap: usize,
    /// Passages with fewer aligned characters are dropped as coincidence.
    pub min_passage_chars: usize,
}

impl Default for AlignConfig {
    fn default() -> Self {
        AlignConfig {
            seed_length: 8,
            max_gap: 12,
            min_passage_chars: 20,
        }
    }
}

/// An exact run of equal characters: `page[page..page+len] == work[work..work+len]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Start in the page's canonical text.
    pub page: usize,
    /// Start in the work's canonical text.
    pub work: usize,
    /// Length in characters.
    pub len: usize,
}

/// A passage of the page copied from the work, in canonical characters (end exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignedPassage {
    /// Page range start.
    pub page_start: usize,
    /// Page range end.
    pub page_end: usize,
    /// Work range start.
    pub work_start: usize,
    /// Work range end.
    pub work_end: usize,
    /// Characters inside the passage that are exactly equal on both sides.
    pub aligned_chars: usize,
    /// The exact runs the passage is made of, in page order.
    pub runs: Vec<Run>,
}

/// Hashes of every `seed_length`-gram of `chars`, position by position.
pub fn seed_hashes(chars: &[char], seed_length: usize) -> Vec<u64> {
    if chars.len() < seed_length || seed_length == 0 {
        return Vec::new();
    }
    chars.windows(seed_length).map(hash_chars).collect()
}

/// Aligns `page` against `work` (canonical characters; `work_seeds` from [`seed_hashes`] of the
/// work with the same seed length) and returns the passages in page order.
/// Where each seed occurs on a page. Built once per page and shared by the verification of
/// every candidate work, since it depends only on the page.
#[derive(Debug, Clone, Default)]
pub struct PageSeeds {
    positions: HashMap<u64, Vec<u32>>,
}

impl PageSeeds {
    /// Indexes the `seed_length`-grams of a page's canonical characters.
    pub fn new(page: &[char], seed_length: usize) -> Self {
        let mut positions: HashMap<u64, Vec<u32>> = HashMap::with_capacity(page.len());
        for (position, hash) in seed_hashes(page, seed_length.max(1))
            .into_iter()
            .enumerate()
        {
            positions.entry(hash).or_default().push(position as u32);
        }
        PageSeeds { positions }
    }
}

/// Aligns `page` against `work` (canonical characters; `page_seeds` from [`PageSeeds::new`] and
/// `work_seeds` from [`seed_hashes`], both with `config.seed_length`) and returns the passages
/// in page order.
pub fn align(
    page: &[char],
    page_seeds: &PageSeeds,
    work: &[char],
    work_seeds: &[u64],
    config: &AlignConfig,
) -> Vec<AlignedPassage> {
    let k = config.seed_length.max(1);
    if page.len() < k || work.len() < k {
        return Vec::new();
    }
    // Substrings repeated many times on one page are filler, not evidence; they are not used
    // as seeds.
    const MAX_REPEATS: usize = 8;
    let page_positions = &page_seeds.positions;

    let mut runs: Vec<Run> = Vec::new();
    // Per diagonal (page - work), the work position up to which it is already extended.
    let mut extended_until: HashMap<isize, usize> = HashMap::new();
    for (w, hash) in work_seeds.iter().enumerate() {
        let Some(positions) = page_positions.get(hash) else {
            continue;
        };
        if positions.len() > MAX_REPEATS {
            continue;
        }
        for &p in positions {
            let p = p as usize;
            let diagonal = p as isize - w as isize;
            if extended_until
                .get(&diagonal)
                .is_some_and(|&until| w < until)
            {
                continue;
            }
            let mut len = 0;
            while p + len < page.len() && w + len < work.len() && page[p + len] == work[w + len] {
                len += 1;
            }
            extended_until.insert(diagonal, w + len.max(1));
            if len >= k {
                runs.push(Run {
                    page: p,
                    work: w,
                    len,
                });
            }
        }
    }

    let runs = disjoint_on_page(runs, k);
    chain(runs, config)
}

/// Keeps the longest runs and trims the others so that no page character is claimed twice.
fn disjoint_on_page(mut runs: Vec<Run>, min_len: usize) -> Vec<Run> {
    runs.sort_by(|a, b| {
        b.len
            .cmp(&a.len)
            .then(a.page.cmp(&b.page))
            .then(a.work.cmp(&b.work))
    });
    let mut taken: Vec<Run> = Vec::new();
    'runs: for mut run in runs {
        for other in &taken {
            let (start, end) = (run.page, run.page + run.len);
            let (other_start, other_end) = (other.page, other.page + other.len);
            if end <= other_start || start >= other_end {
                continue;
            }
            if start >= other_start && end <= other_end {
                continue 'runs;
            }
            if start < other_start && end > other_end {
                // Spans a shorter accepted run: keep the longer left part only.
                run.len = other_start - start;
            } else if start < other_start {
                run.len = other_start - start;
            } else {
                let cut = other_end - start;
                run.page += cut;
                run.work += cut;
                run.len -= cut;
            }
            if run.len < min_len {
                continue 'runs;
            }
        }
        taken.push(run);
    }
    taken.sort_by_key(|run| run.page);
    taken
}

/// Chains runs that follow each other closely on both sides into passages.
fn chain(runs: Vec<Run>, config: &AlignConfig) -> Vec<AlignedPassage> {
    let mut passages: Vec<AlignedPassage> = Vec::new();
    for run in runs {
        if let Some(current) = passages.last_mut() {
            let last = current.runs.last().expect("a passage has at least one run");
            let page_gap = run.page.checked_sub(last.page + last.len);
            let work_gap = run.work.checked_sub(last.work + last.len);
            if let (Some(page_gap), Some(work_gap)) = (page_gap, work_gap)
                && page_gap <= config.max_gap
                && work_gap <= config.max_gap
            {
                current.page_end = run.page + run.len;
                current.work_end = run.work + run.len;
                current.aligned_chars += run.len;
                current.runs.push(run);
                continue;
            }
        }
        passages.push(AlignedPassage {
            page_start: run.page,
            page_end: run.page + run.len,
            work_start: run.work,
            work_end: run.work + run.len,
            aligned_chars: run.len,
            runs: vec![run],
        });
    }
    passages.retain(|passage| passage.aligned_chars >= config.min_passage_chars);
    passages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    fn run_align(page: &str, work: &str) -> Vec<AlignedPassage> {
        let config = AlignConfig::default();
        let work = chars(work);
        let seeds = seed_hashes(&work, config.seed_length);
        let page = chars(page);
        let page_seeds = PageSeeds::new(&page, config.seed_length);
        align(&page, &page_seeds, &work, &seeds, &config)
    }

    const WORK: &str = "夜色渐深雨水顺着屋檐滴落下来少年推开木门看见一个披着蓑衣的陌生人站在院中\
                        手里提着一盏昏黄的灯笼他的眼睛像是藏着整片星空沉默地望着这座破旧的小院";

    #[test]
    fn a_verbatim_copy_aligns_as_one_passage() {
        let page = format!("本站首页玄幻小说{WORK}手机用户请访问");
        let passages = run_align(&page, WORK);
        assert_eq!(passages.len(), 1);
        let p = &passages[0];
        assert_eq!((p.work_start, p.work_end), (0, WORK.chars().count()));
        assert_eq!(p.page_start, 8);
        assert_eq!(p.aligned_chars, WORK.chars().count());
    }

    #[test]
    fn a_few_replaced_characters_stay_inside_one_passage() {
        let mut page = chars(WORK);
        page[15] = '甲';
        page[40] = '乙';
        let page: String = page.into_iter().collect();
        let passages = run_align(&page, WORK);
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].aligned_chars, WORK.chars().count() - 2);
    }

    #[test]
    fn two_separate_copied_passages_give_two_passages() {
        let work = chars(WORK);
        let first: String = work[0..30].iter().collect();
        let second: String = work[40..70].iter().collect();
        let page = format!("{first}今天天气很好我们一起去公园散步吧顺便买点水果回家做晚饭{second}");
        let passages = run_align(&page, WORK);
        assert_eq!(passages.len(), 2);
        assert_eq!((passages[0].work_start, passages[0].work_end), (0, 30));
        assert_eq!((passages[1].work_start, passages[1].work_end), (40, 70));
    }

    #[test]
    fn a_short_shared_phrase_is_not_a_passage() {
        let page = "我们常说一个披着蓑衣的陌生人是诗人笔下的形象然而今天要讲的是另一件事";
        assert!(run_align(page, WORK).is_empty());
    }
}
