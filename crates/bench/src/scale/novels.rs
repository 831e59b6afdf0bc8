//! The `novels` library of `copytrace-bench scale`: works that are chapters of novels, sharing
//! what the chapters of a real catalog share and nothing else.
//!
//! A novel has 20 to 200 chapters. Each chapter is a run of the bundled prose passed through a
//! permutation of the CJK characters of its own (the bundled prose is about 14,000 distinct
//! characters drawn again and again, so two chapters of one novel through one permutation would
//! share whole paragraphs). Left as they are, unpermuted, and so shared:
//!
//! - **names**: the novel's cast of five, each a surname and a given name from small pools,
//!   popular ones drawn more often (as 林风 and 叶凡 recur across real catalogs), stands in for
//!   the prose's own characters (沈青川 becomes the protagonist) and opens stock sentences, so
//!   every chapter of a novel names its cast and other novels reuse the names;
//! - **stock phrases**: reactions (`倒吸一口凉气`, `嘴角微微上扬`) after a cast name, and
//!   openers (`话音刚落`), at half of the paragraphs' starts, each novel favouring ten
//!   reactions of the pool;
//! - **boilerplate**: the heading `<book> 第N章 <title>` (book titles and chapter titles from
//!   pools, so many novels share a title), an author's note (`求月票！`) under some chapters,
//!   `（本章完）`, and the first-publication line of the novel's platform under every chapter
//!   (six platforms: each line is in a sixth of the library).
//!
//! Everything follows from the novel's number and the chapter's, so a library of `N` works is
//! the first `N` chapters of novels 0, 1, 2, … on every run, and pages draw their unrelated text
//! from novels numbered from [`UNLISTED`] on: the same pools, other permutations.

use super::Texts;

/// The first novel number of the novels that are never in the library.
pub(crate) const UNLISTED: u64 = 1 << 40;

/// The source prose's own characters, and the cast member each becomes.
const SOURCE_NAMES: [(&str, usize); 10] = [
    ("沈青川", 0),
    ("江潮生", 0),
    ("林遥", 0),
    ("苏映雪", 1),
    ("孟三斤", 2),
    ("孟大哥", 2),
    ("阿哲", 2),
    ("沈老伯", 3),
    ("周先生", 3),
    ("陆小满", 4),
];

/// Cast members per novel.
const CAST: usize = 5;

/// Surnames, the more popular first.
const SURNAMES: [&str; 24] = [
    "林", "叶", "萧", "苏", "陈", "李", "王", "张", "秦", "韩", "楚", "沈", "顾", "陆", "江", "白",
    "唐", "宋", "许", "方", "柳", "赵", "杨", "洛",
];

/// Given names, the more popular first.
const GIVEN_NAMES: [&str; 40] = [
    "风", "凡", "炎", "辰", "尘", "逸", "天", "昊", "峰", "宇", "轩", "羽", "雪", "月", "灵儿",
    "婉儿", "诗涵", "若曦", "清雪", "紫萱", "云", "浩", "杰", "寒", "默", "阳", "青", "墨", "瑶",
    "璃", "落雪", "梦瑶", "子轩", "天明", "长生", "不凡", "无忌", "小凡", "青云", "傲天",
];

/// Reactions, written after a cast member's name.
const REACTIONS: [&str; 40] = [
    "倒吸一口凉气",
    "嘴角微微上扬",
    "眼中闪过一丝寒芒",
    "心中一动",
    "不由得愣住了",
    "冷哼一声",
    "深吸一口气",
    "脸色大变",
    "眉头微微一皱",
    "淡淡一笑",
    "目光一凝",
    "微微一怔",
    "沉吟片刻",
    "苦笑一声",
    "摇了摇头",
    "点了点头",
    "瞳孔猛地一缩",
    "浑身一震",
    "只觉得头皮发麻",
    "心中暗道不好",
    "嘴角勾起一抹冷笑",
    "眼中精光一闪",
    "神色凝重",
    "不禁哑然失笑",
    "心头一紧",
    "脸上露出一丝苦涩",
    "缓缓睁开了双眼",
    "长长地吐出一口浊气",
    "目光扫过众人",
    "一脸的不可置信",
    "握紧了拳头",
    "心中掀起了惊涛骇浪",
    "忍不住笑出声来",
    "眼眶微微泛红",
    "身形一闪",
    "轻轻叹了口气",
    "默默地站在一旁",
    "脸上的笑容渐渐凝固",
    "心中暗暗发誓",
    "不动声色地退后一步",
];

/// Reactions a novel favours.
const FAVOURITE_REACTIONS: usize = 10;

/// Openers of a paragraph, followed by `，`.
const OPENERS: [&str; 16] = [
    "就在这时",
    "与此同时",
    "话音刚落",
    "片刻之后",
    "一时间",
    "不知过了多久",
    "下一刻",
    "紧接着",
    "说时迟那时快",
    "众人闻言",
    "此言一出",
    "转眼之间",
    "没过多久",
    "半晌之后",
    "一念及此",
    "良久",
];

/// Book titles are a prefix and a suffix, so many novels share a title.
const BOOK_PREFIXES: [&str; 16] = [
    "万古",
    "太古",
    "九天",
    "星辰",
    "混沌",
    "无上",
    "绝世",
    "逆天",
    "都市",
    "重生之",
    "我的",
    "修罗",
    "龙武",
    "剑道",
    "天道",
    "神级",
];

const BOOK_SUFFIXES: [&str; 16] = [
    "神帝", "剑尊", "战神", "仙尊", "狂龙", "医仙", "至尊", "武神", "丹帝", "兵王", "天骄", "霸主",
    "龙王", "剑仙", "魔尊", "圣王",
];

const CHAPTER_TITLES: [&str; 40] = [
    "风起云涌",
    "初露锋芒",
    "一鸣惊人",
    "不速之客",
    "生死一线",
    "绝境逢生",
    "真相大白",
    "暗流涌动",
    "步步惊心",
    "针锋相对",
    "以一敌百",
    "扮猪吃虎",
    "震惊全场",
    "破而后立",
    "大战将至",
    "强势归来",
    "一拳之威",
    "意外之喜",
    "故人重逢",
    "神秘老者",
    "夜探禁地",
    "再次突破",
    "当众打脸",
    "退婚风波",
    "拍卖会",
    "比武大会",
    "天才之争",
    "杀机四伏",
    "血战到底",
    "秘境开启",
    "离别",
    "归来",
    "新的旅程",
    "山雨欲来",
    "惊天秘密",
    "师徒",
    "宗门大比",
    "上古传承",
    "不死不休",
    "尘埃落定",
];

const AUTHOR_NOTES: [&str; 10] = [
    "求月票！求推荐票！",
    "PS：今天两更，求收藏求订阅！",
    "感谢各位书友的打赏和月票支持，明天继续爆更！",
    "新书上传，求收藏，求推荐，拜谢！",
    "PS：卡文了，今天只有一更，明天补上。",
    "月底了，兄弟们手里还有月票的砸过来吧！",
    "感谢书友们一直以来的支持，本书已经上架，求首订！",
    "PS：下一章晚点发，大家不要等，明早再看。",
    "本月更新不会断，求保底月票！",
    "看到大家的评论了，剧情不会崩，放心追读。",
];

const PLATFORMS: [&str; 6] = [
    "本书由云阅中文网首发，请支持正版阅读！",
    "本作品由星河文学网独家首发，未经授权禁止转载。",
    "本书首发于青竹小说网，更多精彩内容请关注作者。",
    "本章节由墨香书城首发，喜欢本书请加入书架。",
    "本书为纵横阅读签约作品，转载请注明出处。",
    "本文由晋阳文学城首发，谢绝转载。",
];

const CHAPTER_END: &str = "（本章完）";

/// A splitmix64 generator: deterministic, and good enough to shuffle with.
struct Rng(u64);

impl Rng {
    fn new(a: u64, b: u64, salt: u64) -> Rng {
        let mut rng = Rng(a ^ salt.rotate_left(17));
        let first = rng.next();
        Rng(first ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// An index below `n`, small ones more likely (the smaller of two draws).
    fn popular(&mut self, n: usize) -> usize {
        self.below(n).min(self.below(n))
    }
}

/// What a novel's chapters share.
struct Novel {
    book: String,
    cast: [String; CAST],
    reactions: [&'static str; FAVOURITE_REACTIONS],
    platform: &'static str,
}

impl Novel {
    fn new(number: u64) -> Novel {
        let mut rng = Rng::new(number, 0, 0x6e6f76656c);
        let book = format!(
            "{}{}",
            BOOK_PREFIXES[rng.below(BOOK_PREFIXES.len())],
            BOOK_SUFFIXES[rng.below(BOOK_SUFFIXES.len())]
        );
        let mut cast: Vec<String> = Vec::with_capacity(CAST);
        while cast.len() < CAST {
            let name = format!(
                "{}{}",
                SURNAMES[rng.popular(SURNAMES.len())],
                GIVEN_NAMES[rng.popular(GIVEN_NAMES.len())]
            );
            if !cast.contains(&name) {
                cast.push(name);
            }
        }
        let reactions = std::array::from_fn(|_| REACTIONS[rng.below(REACTIONS.len())]);
        Novel {
            book,
            cast: cast.try_into().expect("five names"),
            reactions,
            platform: PLATFORMS[rng.below(PLATFORMS.len())],
        }
    }
}

/// A piece of a chapter: its own text, or text other works share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Own(String),
    Shared(String),
}

/// Chapters of novels from the bundled prose (see the module documentation).
pub(crate) struct Novels {
    texts: Texts,
    /// The first work of each library novel, and one past the last work.
    starts: Vec<usize>,
}

impl Novels {
    /// The novels holding at least `works` works.
    pub(crate) fn new(texts: Texts, works: usize) -> Novels {
        let (mut starts, mut end) = (vec![0], 0);
        while end < works {
            end += chapters(starts.len() as u64 - 1);
            starts.push(end);
        }
        Novels { texts, starts }
    }

    /// Library work `n`: its novel and chapter.
    pub(crate) fn place(&self, n: usize) -> (u64, usize) {
        let novel = self.starts.partition_point(|&start| start <= n) - 1;
        (novel as u64, n - self.starts[novel])
    }

    /// Library work `n`, of at least `chars` characters.
    pub(crate) fn work(&self, n: usize, chars: usize) -> String {
        let (novel, chapter) = self.place(n);
        self.chapter(novel, chapter, chars)
    }

    /// Chapter `chapter` (from 0) of novel `novel`, of at least `chars` characters.
    pub(crate) fn chapter(&self, novel: u64, chapter: usize, chars: usize) -> String {
        self.pieces(novel, chapter, chars)
            .into_iter()
            .map(|piece| match piece {
                Piece::Own(text) | Piece::Shared(text) => text,
            })
            .collect()
    }

    /// The chapter, piece by piece.
    pub(crate) fn pieces(&self, novel: u64, chapter: usize, chars: usize) -> Vec<Piece> {
        let shared = Novel::new(novel);
        let texts = &self.texts;
        let mut rng = Rng::new(novel, chapter as u64, 0x6368617074);
        let mut permutation = texts.alphabet.clone();
        for i in (1..permutation.len()).rev() {
            permutation.swap(i, rng.below(i + 1));
        }
        // Real chapters vary in length: up to a quarter over the minimum.
        let target = chars + rng.below(chars / 4 + 1);

        let mut pieces = vec![Piece::Shared(format!(
            "{} 第{}章 {}\n",
            shared.book,
            chapter + 1,
            CHAPTER_TITLES[rng.below(CHAPTER_TITLES.len())]
        ))];
        let mut length = pieces_len(&pieces);
        let mut own = String::new();
        let source = &texts.chars;
        // A paragraph's start, far enough from the end.
        let mut at = rng.below(source.len() - 4 * target - 1000);
        while source[at] != '\n' {
            at += 1;
        }
        at += 1;
        let (mut first, mut paragraph_start) = (true, true);
        while length < target || !paragraph_start {
            if paragraph_start {
                // The first paragraph opens on the protagonist's reaction; of the others, a
                // third on a cast member's, a sixth on an opener.
                let who = match rng.below(6) {
                    _ if first => Some(0),
                    0 | 1 => Some(rng.popular(CAST)),
                    _ => None,
                };
                let stock = match who {
                    Some(who) => Some(format!(
                        "{}{}。",
                        shared.cast[who],
                        shared.reactions[rng.below(FAVOURITE_REACTIONS)]
                    )),
                    None if rng.below(4) == 0 => {
                        Some(format!("{}，", OPENERS[rng.below(OPENERS.len())]))
                    }
                    None => None,
                };
                if let Some(stock) = stock {
                    length += stock.chars().count();
                    push_shared(&mut pieces, &mut own, stock);
                }
                (first, paragraph_start) = (false, false);
            }
            let c = source[at];
            if let Some((name, role)) = SOURCE_NAMES
                .iter()
                .find(|(name, _)| name.chars().zip(&source[at..]).all(|(a, &b)| a == b))
            {
                let name_in_cast = shared.cast[*role].clone();
                length += name_in_cast.chars().count();
                push_shared(&mut pieces, &mut own, name_in_cast);
                at += name.chars().count();
                continue;
            }
            own.push(match texts.position.get(&c) {
                Some(&p) => permutation[p as usize],
                None => c,
            });
            length += 1;
            at += 1;
            paragraph_start = c == '\n';
        }
        let mut end = String::new();
        if rng.below(2) == 0 {
            end.push_str(CHAPTER_END);
            end.push('\n');
        }
        if rng.below(3) == 0 {
            end.push_str(AUTHOR_NOTES[rng.below(AUTHOR_NOTES.len())]);
            end.push('\n');
        }
        end.push_str(shared.platform);
        push_shared(&mut pieces, &mut own, end);
        pieces
    }
}

/// Chapters of library novel `novel`: 20 to 200.
fn chapters(novel: u64) -> usize {
    20 + Rng::new(novel, 0, 0x6c656e677468).below(181)
}

fn pieces_len(pieces: &[Piece]) -> usize {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Own(text) | Piece::Shared(text) => text.chars().count(),
        })
        .sum()
}

/// Ends the current run of own text and appends `shared`.
fn push_shared(pieces: &mut Vec<Piece>, own: &mut String, shared: String) {
    if !own.is_empty() {
        pieces.push(Piece::Own(std::mem::take(own)));
    }
    pieces.push(Piece::Shared(shared));
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The eight-character runs of a chapter's own text (shared pieces end a run).
    fn own_runs(pieces: &[Piece]) -> HashSet<String> {
        pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Own(text) => Some(text.chars().collect::<Vec<_>>()),
                Piece::Shared(_) => None,
            })
            .flat_map(|chars| {
                chars
                    .windows(8)
                    .map(|w| w.iter().collect::<String>())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn text(pieces: &[Piece]) -> String {
        pieces
            .iter()
            .map(|piece| match piece {
                Piece::Own(text) | Piece::Shared(text) => text.as_str(),
            })
            .collect()
    }

    #[test]
    fn chapters_of_one_novel_share_names_and_boilerplate_but_no_passage() {
        let novels = Novels::new(Texts::new(), 1000);
        let cast = Novel::new(3).cast;
        let first = novels.pieces(3, 0, 3000);
        let later = novels.pieces(3, 7, 3000);
        for chapter in [&first, &later] {
            let text = text(chapter);
            assert!(text.chars().count() >= 3000);
            assert!(text.contains(&cast[0]), "the protagonist in every chapter");
            assert!(text.contains(Novel::new(3).platform));
        }
        assert!(text(&first).contains("第1章") && text(&later).contains("第8章"));
        let shared = own_runs(&first).intersection(&own_runs(&later)).count();
        assert_eq!(shared, 0, "eight-character runs of own text shared");
    }

    #[test]
    fn works_of_different_novels_share_only_the_pools() {
        let novels = Novels::new(Texts::new(), 1000);
        let library = novels.place(500);
        let work = novels.pieces(library.0, library.1, 3000);
        let runs = own_runs(&work);
        for (novel, chapter) in [(0, 0), (1, 3), (UNLISTED, 0), (UNLISTED + 7, 49)] {
            let other = novels.pieces(novel, chapter, 3000);
            let shared = runs.intersection(&own_runs(&other)).count();
            assert_eq!(
                shared, 0,
                "runs shared with novel {novel}, chapter {chapter}"
            );
        }
        // What is shared is only names, stock phrases and boilerplate.
        let pooled = |s: &str| {
            s.contains('第')
                || PLATFORMS.iter().any(|p| s.contains(p))
                || OPENERS.iter().any(|o| s.starts_with(o))
                || SURNAMES.iter().any(|n| s.starts_with(n))
        };
        assert!(work.iter().all(|piece| match piece {
            Piece::Shared(s) => pooled(s),
            Piece::Own(_) => true,
        }));
    }

    #[test]
    fn novels_are_the_same_for_one_seed_and_hold_20_to_200_chapters() {
        let texts = Texts::new();
        let novels = Novels::new(texts, 10_000);
        assert_eq!(novels.work(1234, 3000), novels.work(1234, 3000));
        assert_ne!(novels.work(1234, 3000), novels.work(1235, 3000));
        assert_eq!(novels.place(0), (0, 0));
        for pair in novels.starts.windows(2) {
            assert!((20..=200).contains(&(pair[1] - pair[0])));
        }
        let (novel, chapter) = novels.place(9999);
        assert_eq!(novels.starts[novel as usize] + chapter, 9999);
        assert_eq!(Novel::new(5).cast, Novel::new(5).cast);
    }
}
