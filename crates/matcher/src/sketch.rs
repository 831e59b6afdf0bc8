//! Page sketches: what a stored page keeps so that works added to the library later find the
//! pages that may copy them without reading any page text again (incremental matching).
//!
//! A sketch is the MinHash LSH band keys of a sample of the page's windows: the same windows,
//! signatures and bands the MinHash candidate source uses (the source that alone finds every
//! copy of the quality benchmark, see docs/algorithms.md). A work is checked against a sketch
//! with the band keys of *all* its windows: a page is a candidate when its sampled windows
//! collide with the work's windows in at least [`MIN_SHARED_KEYS`] band keys, the LSH test the
//! matcher runs, on fewer windows. Keys of a 48-character window, not loose n-grams, so words
//! every text shares never make a page a candidate.
//!
//! The windows kept are those whose anchor hash falls in one [`SAMPLING`]th of the anchors, a
//! choice made by the content: a page and a work that share a passage keep the same windows
//! of it. A copy of *w* windows keeps about *w* / [`SAMPLING`] of them: a copied chapter keeps
//! dozens, the shortest reportable excerpt (80 characters, about 6 windows) one or two, so some
//! of those are missed here and found by the next full pass (the daily dedup). A sketch is
//! about 60 bytes per sampled window: 3.7 kB for a 3,000-character chapter, less than half
//! its text.

use copytrace_fingerprint::minhash::{self, MinHasher, band_hashes};
use copytrace_fingerprint::simhash::{hash_chars, ngram_hashes};
use copytrace_fingerprint::{normalize, shingle_hashes, windows};

use crate::MatchConfig;

/// Version of the sketch: a stored sketch of another version is not comparable and is made
/// again.
pub const SKETCH_VERSION: u32 = 1;

/// One anchored window in `SAMPLING` is kept in a page sketch.
pub const SAMPLING: u64 = 4;

/// Band keys a page must share with a work to be a candidate: one collision can be a window of
/// boilerplate, two are a copied passage (each similar window pair collides in several bands).
pub const MIN_SHARED_KEYS: usize = 2;

/// Makes page sketches and work keys with one matching configuration.
#[derive(Debug, Clone)]
pub struct Sketcher {
    config: MatchConfig,
    hasher: MinHasher,
    bands: usize,
    rows: usize,
}

impl Sketcher {
    /// A sketcher for matchers of `config` (its windows, shingles and LSH bands).
    pub fn new(config: &MatchConfig) -> Self {
        let lsh = &config.candidates.lsh;
        let (bands, rows) = lsh.bands_rows();
        Sketcher {
            config: *config,
            hasher: MinHasher::new(lsh.num_perm, minhash::DEFAULT_SEED),
            bands,
            rows,
        }
    }

    /// The sketch of a page: band keys of its sampled windows, sorted, without repeats.
    pub fn page_sketch(&self, text: &str) -> Vec<u32> {
        self.keys(&normalize(text).chars, true)
    }

    /// [`Sketcher::page_sketch`] of a page already normalized (its canonical characters, as
    /// [`normalize()`] gives them): what the matcher sketches with the text it has just read,
    /// rather than reading the page a second time.
    pub fn page_sketch_of(&self, normalized: &[char]) -> Vec<u32> {
        self.keys(normalized, true)
    }

    /// The band keys of every window of a work, sorted, without repeats: what page sketches
    /// are checked against.
    pub fn work_keys(&self, text: &str) -> Vec<u32> {
        self.keys(&normalize(text).chars, false)
    }

    fn keys(&self, chars: &[char], sampled: bool) -> Vec<u32> {
        let window = &self.config.fingerprint.window;
        let width = window.anchor_width.max(1);
        let k = self.config.candidates.minhash_shingle.max(1);
        let hashes = ngram_hashes(chars, k);
        let every = window.spacing.max(1) as u64 * SAMPLING;
        let mut keys: Vec<u32> = windows(chars, window)
            .into_iter()
            .filter(|w| {
                !sampled
                    || (w.start + width <= chars.len()
                        && hash_chars(&chars[w.start..w.start + width]).is_multiple_of(every))
            })
            .flat_map(|w| {
                let signature = if w.end - w.start >= k {
                    self.hasher.signature(&hashes[w.start..=w.end - k])
                } else {
                    self.hasher
                        .signature(&shingle_hashes(&chars[w.start..w.end], k))
                };
                band_hashes(&signature, self.bands, self.rows)
            })
            // Band keys are uniform 64-bit hashes: the low half is as good a key.
            .map(|key| key as u32)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// How many keys two sorted key lists share.
pub fn shared_keys(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str = "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院中，\
        手里提着一盏昏黄的灯笼。他的眼睛像是藏着整片星空，沉默地望着这座破旧的小院。“你就是沈青川？”\
        陌生人开口问道，声音低沉得像远处滚过的闷雷。少年点了点头，握紧了门框。远处传来几声犬吠，\
        村子里的灯火一盏接一盏地熄灭了，只剩下这一盏灯笼还在雨中摇晃。他把少年带到山脚下，\
        指着云雾里若隐若现的石阶说，从今往后，你每天要走完这九百九十九级台阶，再挑两担水回来。\
        少年没有问为什么，只是默默地把水桶挂上扁担。第一天他走到一半就摔倒了，膝盖磕出了血，\
        第二天他咬着牙走到了三百级，第三天下起了大雨，石阶湿滑，他几乎是爬着上去的。";
    const NEWS: &str = "滨海港口三季度吞吐量创新高。记者从滨海港务集团获悉，今年第三季度滨海港货物吞吐量\
        达到一亿二千万吨，同比增长百分之八点六，创下历史同期最高纪录。集装箱吞吐量同步增长，\
        新开通的三条国际航线为增长贡献了重要力量。港务集团负责人表示，下一步将继续推进智慧码头建设，\
        提升装卸效率，服务区域经济发展。业内人士分析认为，港口吞吐量的持续增长反映出区域外贸的活力。";

    fn sketcher() -> Sketcher {
        Sketcher::new(&MatchConfig::default())
    }

    #[test]
    fn a_page_sketch_keeps_a_fraction_of_the_windows_keys() {
        let s = sketcher();
        let page = s.page_sketch(CHAPTER);
        let all = s.work_keys(CHAPTER);
        assert!(page.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        assert!(!page.is_empty());
        assert!(
            page.len() * 2 < all.len(),
            "{} of {}",
            page.len(),
            all.len()
        );
        assert_eq!(
            shared_keys(&page, &all),
            page.len(),
            "a sample of the same keys"
        );
        assert!(s.page_sketch("").is_empty());
    }

    #[test]
    fn a_copy_in_boilerplate_shares_keys_with_its_work_and_other_text_none() {
        let s = sketcher();
        let page = s.page_sketch(&format!(
            "首页 | 玄幻小说 | 排行榜\n{CHAPTER}\n上一章 下一章 加入书签"
        ));
        assert!(shared_keys(&page, &s.work_keys(CHAPTER)) >= MIN_SHARED_KEYS);
        assert_eq!(shared_keys(&page, &s.work_keys(NEWS)), 0);
    }

    #[test]
    fn traditional_characters_and_junk_do_not_hide_a_copy() {
        let s = sketcher();
        let traditional = copytrace_fingerprint::normalize(CHAPTER)
            .chars
            .iter()
            .collect::<String>()
            .replace('这', "這")
            .replace('里', "裡")
            .replace('着', "著")
            .replace('灯', "燈");
        let junked: String = CHAPTER
            .chars()
            .enumerate()
            .flat_map(|(i, c)| if i % 9 == 8 { vec![c, '※'] } else { vec![c] })
            .collect();
        let work = s.work_keys(CHAPTER);
        assert!(shared_keys(&s.page_sketch(&traditional), &work) >= MIN_SHARED_KEYS);
        assert!(shared_keys(&s.page_sketch(&junked), &work) >= MIN_SHARED_KEYS);
    }
}
