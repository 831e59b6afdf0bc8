//! Verification by alignment of canonical texts (seed and extend), in two projections.
//!
//! A fingerprint hit only says two windows *look* alike. Before anything is reported, the
//! page's canonical text is aligned against the work's: every `seed_length`-character substring
//! the two share is a seed, each seed is extended along its diagonal into a maximal exact run,
//! overlapping runs are resolved in favour of the longest, and runs that follow each other
//! closely on both sides (small edits, a replaced character, a short inserted ad) are chained
//! into passages. The passages are the evidence: canonical ranges that map back to exact byte
//! ranges of both originals.
//!
//! **Pinyin projection.** Pirates replace 5–25 % of the characters by homophones (同音字);
//! at 15 % an 8-character seed survives with probability 0.85⁸ ≈ 27 %, and the exact runs
//! between substitutions average six characters, below any sensible seed length. Where the
//! character projection explains little of the shorter text, the same seed-and-extend runs
//! over *syllable ids* ([`copytrace_fingerprint::pinyin::syllable_ids`]: homophones share an
//! id, characters without pinyin keep their own identity), where a homophone swap changes
//! nothing. Syllables collide far more than characters (a few hundred toneless syllables,
//! homophone words such as 权利/权力 or 公式/公事), so a pinyin run must (1) start from a seed
//! twice as long as a character seed, (2) have at least
//! [`AlignConfig::pinyin_min_exact_share`] of its characters *exactly* equal — a pirated copy
//! keeps most characters, a different text that merely sounds alike keeps almost none — and
//! (3) begin and end on exactly equal characters, so evidence never starts on a coincidental
//! homophone.
//!
//! **Boilerplate.** Characters of text several library works hold are marked by the caller
//! ([`crate::postings::common_mask`]): seeds lying wholly on them start no run, and the page
//! characters marked are cut out of every run, so they are never counted as copied.

use foldhash::{HashMap, HashMapExt};

use copytrace_fingerprint::pinyin::{can_read_as, syllable_ids};
use copytrace_fingerprint::simhash::hash_chars;
use xxhash_rust::xxh3::xxh3_64;

use crate::romanized::is_placeholder;

/// Parameters of the alignment.
///
/// Every default is a reasoned starting point, not a measured optimum: issue 5's quality
/// benchmark (labelled pirated variants of real text) chooses the defaults, and
/// `docs/algorithms.md` ("Verification and scoring") explains each of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlignConfig {
    /// Length of the shared substrings that start a run (canonical characters). Eight
    /// characters are longer than any four-character idiom pair and than most set phrases,
    /// and short enough to survive an edit every ten characters.
    pub seed_length: usize,
    /// Largest gap, on either side, between two runs chained into one passage.
    pub max_gap: usize,
    /// Passages with fewer aligned characters are dropped as coincidence. Twenty characters
    /// are more than a dateline (新华社北京11月22日电: 12), a run of idioms (three chained
    /// chengyu: 12), a classical couplet (five- or seven-character lines: 10 or 14) or a
    /// closing such as 未完待续请看下一章 (9).
    pub min_passage_chars: usize,
    /// Whether the pinyin projection is tried where the character projection finds little.
    pub pinyin: bool,
    /// Length of pinyin seeds in syllables. Twice the character seed: a syllable carries
    /// fewer bits than a character and homophone words collide, while a homophone copy keeps
    /// its syllables, so a long seed costs that copy almost nothing.
    pub pinyin_seed_length: usize,
    /// Minimum share of exactly equal characters in a pinyin run. Pirates replace at most a
    /// quarter or so of the characters (a text with half its characters swapped is hard to
    /// read); a different text that happens to sound alike shares few characters.
    pub pinyin_min_exact_share: f64,
    /// The pinyin projection is skipped when character runs already cover this share of the
    /// shorter text's informative characters: there is nothing left for it to explain.
    pub pinyin_skip_share: f64,
    /// A seed found in at least this many distinct library works is boilerplate (copyright
    /// notices, standard closings, text everybody quotes): it starts no run and is not counted
    /// as copied. 0 disables the rule. Three: one work is the original, a second may be a
    /// registered edition of the same text, a third sharing it means the text is not any one
    /// work's own.
    pub common_seed_min_works: usize,
}

impl Default for AlignConfig {
    fn default() -> Self {
        AlignConfig {
            seed_length: 8,
            max_gap: 12,
            min_passage_chars: 20,
            pinyin: true,
            pinyin_seed_length: 16,
            pinyin_min_exact_share: 0.5,
            pinyin_skip_share: 0.9,
            common_seed_min_works: 3,
        }
    }
}

/// A run of aligned characters: `page[page..page+len]` corresponds to `work[work..work+len]`,
/// character for character (character projection) or syllable for syllable (pinyin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Start in the page's canonical text.
    pub page: usize,
    /// Start in the work's canonical text.
    pub work: usize,
    /// Length in characters.
    pub len: usize,
    /// Characters of the run exactly equal on both sides (`len` for a character run).
    pub exact: usize,
    /// Whether the run was found in the pinyin projection and spans homophone substitutions.
    pub pinyin: bool,
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
    /// Characters inside the passage aligned on both sides (exactly or as homophones).
    pub aligned_chars: usize,
    /// Of those, the characters exactly equal on both sides.
    pub exact_chars: usize,
    /// Whether a pinyin run contributed (the copy swaps characters for homophones).
    pub pinyin: bool,
    /// Whether the passage is a chain of paraphrased sentences ([`crate::laundering`]) rather
    /// than of aligned characters: `aligned_chars` then counts the page's sentences and each
    /// run spans the page sentence's start and the whole work sentence.
    pub paraphrase: bool,
    /// The runs the passage is made of, in page order.
    pub runs: Vec<Run>,
}

/// Hashes of every `seed_length`-gram of `chars`, position by position.
pub fn seed_hashes(chars: &[char], seed_length: usize) -> Vec<u64> {
    if chars.len() < seed_length || seed_length == 0 {
        return Vec::new();
    }
    chars.windows(seed_length).map(hash_chars).collect()
}

/// Hashes of every `seed_length`-gram of syllable ids, position by position.
pub fn syllable_seed_hashes(ids: &[u32], seed_length: usize) -> Vec<u64> {
    if ids.len() < seed_length || seed_length == 0 {
        return Vec::new();
    }
    let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    (0..=ids.len() - seed_length)
        .map(|i| xxh3_64(&bytes[i * 4..(i + seed_length) * 4]))
        .collect()
}

/// A work's seeds in both projections, computed once when the work is added.
#[derive(Debug, Clone, Default)]
pub struct WorkSeeds {
    /// [`seed_hashes`] of the canonical characters.
    pub chars: Vec<u64>,
    /// Syllable id of every canonical character (empty when pinyin is off).
    pub syllables: Vec<u32>,
    /// [`syllable_seed_hashes`] of `syllables` (empty when pinyin is off).
    pub pinyin: Vec<u64>,
}

impl WorkSeeds {
    /// Seeds of a work's canonical characters with the lengths of `config`.
    pub fn new(chars: &[char], config: &AlignConfig) -> Self {
        let (syllables, pinyin) = if config.pinyin {
            let ids = syllable_ids(chars);
            let seeds = syllable_seed_hashes(&ids, config.pinyin_seed_length);
            (ids, seeds)
        } else {
            (Vec::new(), Vec::new())
        };
        WorkSeeds {
            chars: seed_hashes(chars, config.seed_length),
            syllables,
            pinyin,
        }
    }
}

/// Where each usable seed occurs in one projection of a page.
#[derive(Debug, Clone, Default)]
struct SeedPositions(HashMap<u64, Vec<u32>>);

impl SeedPositions {
    /// The seeds of `hashes` (one per position, each `k` long), but those whose characters
    /// `common` marks all.
    fn new(hashes: &[u64], k: usize, common: &[bool]) -> Self {
        let mut positions: HashMap<u64, Vec<u32>> = HashMap::with_capacity(hashes.len());
        for (position, &hash) in hashes.iter().enumerate() {
            let covered = common
                .get(position..position + k)
                .is_some_and(|span| span.iter().all(|&c| c));
            if !covered {
                positions.entry(hash).or_default().push(position as u32);
            }
        }
        SeedPositions(positions)
    }
}

/// A page prepared for alignment: where each seed occurs, in both projections, and which
/// characters are library boilerplate. Built once per page and shared by the verification of
/// every candidate work, since it depends only on the page and what the library holds.
#[derive(Debug, Clone, Default)]
pub struct PageSeeds {
    chars: SeedPositions,
    syllables: Vec<u32>,
    pinyin: SeedPositions,
    common: Vec<bool>,
    common_count: usize,
}

impl PageSeeds {
    /// Indexes the seeds of a page's canonical characters, leaving out those of library
    /// boilerplate: `common` marks its characters (one flag per character, see
    /// [`crate::postings::common_mask`]).
    pub fn new(page: &[char], config: &AlignConfig, common: Vec<bool>) -> Self {
        let syllables = if config.pinyin {
            syllable_ids(page)
        } else {
            Vec::new()
        };
        PageSeeds::with_syllables(page, syllables, config, common)
    }

    /// [`PageSeeds::new`] for a page whose syllables are not its characters' default readings,
    /// one id per character: a page read with its romanized letters as syllables
    /// ([`crate::romanized`]), whose placeholders have the syllable id of what they spell.
    /// `syllables` is ignored when `config.pinyin` is off.
    ///
    /// # Panics
    /// If `config.pinyin` is on and `syllables` does not have one id per character, or if
    /// `common` does not have one flag per character.
    pub fn with_syllables(
        page: &[char],
        syllables: Vec<u32>,
        config: &AlignConfig,
        common: Vec<bool>,
    ) -> Self {
        assert_eq!(
            common.len(),
            page.len(),
            "one boilerplate flag per character"
        );
        let k = config.seed_length.max(1);
        let kp = config.pinyin_seed_length.max(1);
        let char_hashes = seed_hashes(page, k);
        let (syllables, pinyin_hashes) = if config.pinyin {
            assert_eq!(syllables.len(), page.len(), "one syllable per character");
            let hashes = syllable_seed_hashes(&syllables, kp);
            (syllables, hashes)
        } else {
            (Vec::new(), Vec::new())
        };
        let common_count = common.iter().filter(|c| **c).count();
        PageSeeds {
            chars: SeedPositions::new(&char_hashes, k, &common),
            pinyin: SeedPositions::new(&pinyin_hashes, kp, &common),
            syllables,
            common,
            common_count,
        }
    }

    /// Page characters covered by common (boilerplate) seeds: never counted as copied.
    pub fn common_chars(&self) -> usize {
        self.common_count
    }

    /// Per page character, whether common (boilerplate) seeds cover it.
    pub fn common_mask(&self) -> &[bool] {
        &self.common
    }
}

/// Aligns `page` against `work` (canonical characters; `page_seeds` from [`PageSeeds::new`] and
/// `work_seeds` from [`WorkSeeds::new`], both with `config`) and returns the passages in page
/// order. `work_informative` is the number of the work's characters not covered by common
/// seeds; it decides whether the pinyin projection still has something to explain.
pub fn align(
    page: &[char],
    page_seeds: &PageSeeds,
    work: &[char],
    work_seeds: &WorkSeeds,
    work_informative: usize,
    config: &AlignConfig,
) -> Vec<AlignedPassage> {
    let k = config.seed_length.max(1);
    if page.len() < k || work.len() < k {
        return Vec::new();
    }
    let common = &page_seeds.common;
    let char_runs = find_runs(&page_seeds.chars, &work_seeds.chars, k, |p, w| {
        page.get(p).is_some_and(|c| work.get(w) == Some(c))
    });
    let mut runs = disjoint_on_page(split_common(char_runs, common, k), k);

    let page_informative = page.len() - page_seeds.common_count;
    let found: usize = runs.iter().map(|run| run.len).sum();
    let shorter = page_informative.min(work_informative);
    let pinyin_ready = !page_seeds.syllables.is_empty() && !work_seeds.syllables.is_empty();
    if config.pinyin && pinyin_ready && (found as f64) < config.pinyin_skip_share * shorter as f64 {
        let kp = config.pinyin_seed_length.max(1);
        let (page_ids, work_ids) = (&page_seeds.syllables, &work_seeds.syllables);
        let pinyin_runs = find_runs(&page_seeds.pinyin, &work_seeds.pinyin, kp, |p, w| {
            match (page_ids.get(p), work_ids.get(w)) {
                (Some(a), Some(b)) => {
                    a == b || (is_placeholder(page[p]) && can_read_as(work[w], *a))
                }
                _ => false,
            }
        });
        let pinyin_runs: Vec<Run> = split_common(pinyin_runs, common, k)
            .into_iter()
            .filter_map(|run| homophone_run(run, page, work, k, config))
            .collect();
        if !pinyin_runs.is_empty() {
            runs.extend(pinyin_runs);
            runs = disjoint_on_page(runs, k)
                .into_iter()
                .filter_map(|run| homophone_run(run, page, work, k, config))
                .collect();
        }
    }
    chain(runs, config)
}

/// Seeds shared by both sequences, each extended along its diagonal into a maximal run of
/// positions where `same(page position, work position)` holds (false past either end). Runs
/// are returned as character runs (`exact == len`, `pinyin == false`); the caller re-labels
/// pinyin runs.
fn find_runs(
    page_positions: &SeedPositions,
    work_seeds: &[u64],
    k: usize,
    same: impl Fn(usize, usize) -> bool,
) -> Vec<Run> {
    // Substrings repeated many times on one page are filler, not evidence; they are not used
    // as seeds.
    const MAX_REPEATS: usize = 8;
    let mut runs: Vec<Run> = Vec::new();
    // Per diagonal (page - work), the work position up to which it is already extended.
    let mut extended_until: HashMap<isize, usize> = HashMap::new();
    for (w, hash) in work_seeds.iter().enumerate() {
        let Some(positions) = page_positions.0.get(hash) else {
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
            while same(p + len, w + len) {
                len += 1;
            }
            extended_until.insert(diagonal, w + len.max(1));
            if len >= k {
                runs.push(Run {
                    page: p,
                    work: w,
                    len,
                    exact: len,
                    pinyin: false,
                });
            }
        }
    }
    runs
}

/// Cuts the page characters marked common out of every run; pieces shorter than `min_len`
/// are dropped.
fn split_common(runs: Vec<Run>, common: &[bool], min_len: usize) -> Vec<Run> {
    let mut pieces = Vec::with_capacity(runs.len());
    for run in runs {
        let mut start = 0;
        while start < run.len {
            while start < run.len && common[run.page + start] {
                start += 1;
            }
            let mut end = start;
            while end < run.len && !common[run.page + end] {
                end += 1;
            }
            if end - start >= min_len {
                pieces.push(Run {
                    page: run.page + start,
                    work: run.work + start,
                    len: end - start,
                    exact: end - start,
                    pinyin: run.pinyin,
                });
            }
            start = end;
        }
    }
    pieces
}

/// A run of equal syllables, trimmed to start and end on exactly equal characters, labelled
/// with its exact characters; `None` when too short or too few characters are really equal.
fn homophone_run(
    mut run: Run,
    page: &[char],
    work: &[char],
    min_len: usize,
    config: &AlignConfig,
) -> Option<Run> {
    while run.len > 0 && page[run.page] != work[run.work] {
        run.page += 1;
        run.work += 1;
        run.len -= 1;
    }
    while run.len > 0 && page[run.page + run.len - 1] != work[run.work + run.len - 1] {
        run.len -= 1;
    }
    if run.len < min_len {
        return None;
    }
    run.exact = (0..run.len)
        .filter(|&i| page[run.page + i] == work[run.work + i])
        .count();
    run.pinyin = run.exact < run.len;
    let share = run.exact as f64 / run.len as f64;
    (share >= config.pinyin_min_exact_share).then_some(run)
}

/// Keeps the longest runs and trims the others so that no page character is claimed twice.
/// On equal length an exact character run wins over a pinyin run.
fn disjoint_on_page(mut runs: Vec<Run>, min_len: usize) -> Vec<Run> {
    runs.sort_by(|a, b| {
        b.len
            .cmp(&a.len)
            .then(a.pinyin.cmp(&b.pinyin))
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
            if start < other_start {
                // Ends inside or spans a longer accepted run: keep the left part only.
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
        if !run.pinyin {
            run.exact = run.len;
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
                current.exact_chars += run.exact;
                current.pinyin |= run.pinyin;
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
            exact_chars: run.exact,
            pinyin: run.pinyin,
            paraphrase: false,
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

    fn align_with(page: &str, work: &str, config: &AlignConfig) -> Vec<AlignedPassage> {
        let work = chars(work);
        let seeds = WorkSeeds::new(&work, config);
        let page = chars(page);
        let page_seeds = PageSeeds::new(&page, config, vec![false; page.len()]);
        align(&page, &page_seeds, &work, &seeds, work.len(), config)
    }

    fn run_align(page: &str, work: &str) -> Vec<AlignedPassage> {
        align_with(page, work, &AlignConfig::default())
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
        assert!(!p.pinyin);
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

    /// Homophones by syllable id: CJK characters that normalization leaves unchanged.
    fn homophone_table() -> HashMap<u32, Vec<char>> {
        let all: String = ('\u{4e00}'..='\u{9fa5}').collect();
        let normalized = copytrace_fingerprint::normalize(&all);
        let mut table: HashMap<u32, Vec<char>> = HashMap::new();
        for (c, span) in normalized.chars.iter().zip(&normalized.spans) {
            if all[span.0 as usize..span.1 as usize].starts_with(*c) {
                table.entry(syllable_ids(&[*c])[0]).or_default().push(*c);
            }
        }
        table
    }

    /// `text` with the characters at positions `i` where `pick(i)` replaced by a homophone.
    fn with_homophones(text: &str, pick: impl Fn(usize) -> bool) -> String {
        let table = homophone_table();
        let text = chars(text);
        let ids = syllable_ids(&text);
        text.iter()
            .enumerate()
            .map(|(i, &c)| {
                let other = table
                    .get(&ids[i])
                    .and_then(|list| list.iter().find(|&&h| h != c));
                match other {
                    Some(&h) if pick(i) => h,
                    _ => c,
                }
            })
            .collect()
    }

    #[test]
    fn homophone_substitutions_are_bridged_by_the_pinyin_projection() {
        let homophones = with_homophones(WORK, |i| i % 5 == 2);
        let n = WORK.chars().count();
        assert_eq!(
            syllable_ids(&chars(&homophones)),
            syllable_ids(&chars(WORK))
        );
        let differing = chars(WORK)
            .iter()
            .zip(chars(&homophones))
            .filter(|(a, b)| **a != *b)
            .count();
        assert!(
            differing >= n / 6,
            "the fixture really substitutes: {differing}"
        );
        let without = align_with(
            &homophones,
            WORK,
            &AlignConfig {
                pinyin: false,
                ..AlignConfig::default()
            },
        );
        let found_without: usize = without.iter().map(|p| p.aligned_chars).sum();
        let with = run_align(&homophones, WORK);
        let found_with: usize = with.iter().map(|p| p.aligned_chars).sum();
        assert!(
            found_without < n / 2,
            "characters alone find {found_without}"
        );
        assert_eq!(found_with, n, "{with:?}");
        assert!(with.iter().any(|p| p.pinyin));
        let exact: usize = with.iter().map(|p| p.exact_chars).sum();
        assert_eq!(exact, n - differing);
    }

    #[test]
    fn a_text_that_only_sounds_alike_is_not_aligned() {
        // Every character of the work replaced by a homophone where one exists: the pinyin is
        // identical, the text is not the work's.
        let sounds_alike = with_homophones(WORK, |_| true);
        assert_eq!(
            syllable_ids(&chars(&sounds_alike)),
            syllable_ids(&chars(WORK))
        );
        assert!(run_align(&sounds_alike, WORK).is_empty());
    }

    #[test]
    fn pinyin_evidence_starts_and_ends_on_exactly_equal_characters() {
        // The page copies WORK[10..60] with homophones and is framed by characters that sound
        // like the work's neighbours on both sides, which must not become evidence.
        let work = chars(WORK);
        let homophones = chars(&with_homophones(WORK, |i| i % 4 == 2));
        let sounds_alike = chars(&with_homophones(WORK, |_| true));
        assert_ne!(homophones[10], work[10]);
        let before: String = sounds_alike[7..10].iter().collect();
        let inner: String = homophones[10..60].iter().collect();
        let after: String = sounds_alike[60..63].iter().collect();
        let page = format!("今天{before}{inner}{after}很冷");
        let passages = run_align(&page, WORK);
        assert_eq!(passages.len(), 1, "{passages:?}");
        let p = &passages[0];
        let page_chars = chars(&page);
        assert_eq!(page_chars[p.page_start], work[p.work_start]);
        assert_eq!(page_chars[p.page_end - 1], work[p.work_end - 1]);
        assert_eq!((p.work_start, p.work_end), (11, 60), "{p:?}");
    }
}
