//! The seeded disguise generator: from real texts, the library to register and the labelled
//! pages of the pirate site.
//!
//! Every page carries one disguise and the works it copies (none for a negative). The
//! disguises are the ones pirates use (see the issue of this benchmark): conversion to
//! Traditional characters (also served as Big5), homophones, pinyin romanization, character
//! noise, injected ads, partial excerpts inside other text, reordering, splitting a work over
//! several pages, interleaving two works, and combinations. The hard negatives share with a
//! registered work only what many texts share: a topic, a dateline, a famous quotation, a few
//! idioms, a publisher's standard paragraph.
//!
//! Everything is drawn from one [`Rng`] seeded by the caller, so a seed names a benchmark.

use std::collections::BTreeMap;

use pinyin::ToPinyin;

use super::corpus::{Corpus, Lang, Synonyms, Text};

/// SplitMix64 with the helpers the generator needs; deterministic on every platform.
pub struct Rng(u64);

impl Rng {
    /// A generator whose whole sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        copytrace_fingerprint::minhash::splitmix64(&mut self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform(0.0, 1.0) < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// How a page's bytes are encoded on the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageEncoding {
    /// UTF-8, declared in the HTTP header.
    Utf8,
    /// GBK, declared only in a `<meta>` tag (as most Chinese piracy sites do).
    Gbk,
    /// Big5, declared only in a `<meta>` tag.
    Big5,
}

impl PageEncoding {
    /// The label for tables.
    pub fn name(self) -> &'static str {
        match self {
            PageEncoding::Utf8 => "utf-8",
            PageEncoding::Gbk => "gbk",
            PageEncoding::Big5 => "big5",
        }
    }
}

/// One page of the pirate site, with its label.
#[derive(Debug, Clone)]
pub struct Page {
    /// Site path, e.g. `/book/p0042.html`.
    pub path: String,
    /// Disguise name; negatives start with `negative-`.
    pub disguise: &'static str,
    /// Ids of the works the page copies.
    pub expected: Vec<String>,
    /// Title shown on the page.
    pub title: String,
    /// Body paragraphs as served, before the site's chrome is added.
    pub paragraphs: Vec<String>,
    /// Encoding on the wire.
    pub encoding: PageEncoding,
    /// Paths of the previous and next part when a work is split over several pages.
    pub prev: Option<String>,
    /// See `prev`.
    pub next: Option<String>,
}

impl Page {
    /// Whether the page is a negative (copies nothing).
    pub fn is_negative(&self) -> bool {
        self.disguise.starts_with("negative")
    }

    /// The body text, paragraphs joined by newlines.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// A work as registered: the real text, sometimes with a quotation or a publisher's paragraph
/// added (what the hard negatives then share with it).
#[derive(Debug, Clone)]
pub struct LibraryWork {
    /// Work id (the file stem when registered).
    pub id: String,
    /// Title (the first line of the registered file).
    pub title: String,
    /// Body paragraphs.
    pub paragraphs: Vec<String>,
    /// Language.
    pub lang: Lang,
}

impl LibraryWork {
    /// The body text, paragraphs joined by newlines.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// The library and the site of one benchmark run.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// Works to register.
    pub library: Vec<LibraryWork>,
    /// Pages of the site, in generation order.
    pub pages: Vec<Page>,
}

/// The positive disguises, in table order.
pub const POSITIVE: [&str; 31] = [
    "verbatim",
    "traditional",
    "traditional-big5",
    "homophone-light",
    "homophone-heavy",
    "romanized",
    "noise",
    "ads",
    "excerpt-10",
    "excerpt-30",
    "excerpt-50",
    "shuffled",
    "split",
    "interleaved",
    "combined",
    "english-verbatim",
    "english-noise",
    "junk-between",
    "excerpt-small",
    "ocr",
    "laundered-light",
    "laundered-heavy",
    "laundered-traditional",
    "rendered-write",
    "rendered-blob",
    "rendered-xhr",
    "rendered-write-comments",
    "rendered-xhr-sidebar",
    "rendered-blob-related",
    "hidden-junk",
    "sitemap-only",
];

/// The negatives, in table order. After the unrelated and same-topic pages come the hard
/// negatives: sharing only a dateline, a quotation, common phrases, a standard paragraph; one
/// sentence of a work (a news lead of up to 100 characters); a commentary quoting a work in a
/// few short quotations; an unrelated page strewn with visible junk characters; and another
/// article on the same event (the same names, places, dates and figures, and one phrase).
pub const NEGATIVE: [&str; 10] = [
    "negative-unrelated",
    "negative-topic",
    "negative-dateline",
    "negative-quote",
    "negative-phrase",
    "negative-boilerplate",
    "negative-sentence",
    "negative-commentary",
    "negative-obfuscated",
    "negative-same-event",
];

/// Standard paragraphs a publisher appends to each of its works. Registered works carry them,
/// so they are library boilerplate, and a page sharing only one of them is innocent.
const PUBLISHER_PARAGRAPHS: [&str; 2] = [
    "本作品由星河文学网独家授权发布，版权所有，侵权必究。未经书面许可，任何单位和个人不得转载、摘编或以其他方式使用本作品的全部或部分内容，违者将依法追究法律责任。",
    "This work is published under exclusive licence. All rights reserved. No part of this publication may be reproduced, stored in a retrieval system or transmitted in any form without the prior written permission of the publisher.",
];

/// Lines piracy sites put between and inside paragraphs (written for this benchmark, in the
/// style of real sites: site names, addresses, app promotions, pagination prompts).
const AD_LINES: [&str; 12] = [
    "天才一秒记住本站地址：www.xbiquge.la 最快更新！无广告！",
    "【推荐下，追书神器真的好用，这里下载 www.zhuishu.app 大家去快可以试试吧。】",
    "手机用户请浏览 m.qu.la 阅读，更优质的阅读体验。",
    "（本章未完，请点击下一页继续阅读）",
    "最新章节请到笔趣阁 biquge.cc 阅读，免费无弹窗。",
    "喜欢本书请收藏本站，方便下次阅读，书架与电脑版同步。",
    "支持正版？不存在的，本站永久免费！加入书签，方便阅读。",
    "★★★ 热门推荐：《重生之都市修仙》《斗罗大陆》最新章节 ★★★",
    "看最新章节请关注微信公众号：免费小说大全",
    "一秒记住【顶点小说网 www.23us.so】，精彩小说无弹窗免费阅读！",
    "Read the latest chapters for free at www.novelfull.example — no registration!",
    "请记住本书首发域名：dingdian.cc。手机版阅读网址：m.dingdian.cc",
];

/// Short junk inserted inside paragraphs.
const JUNK: [&str; 8] = [
    "ｗｗｗ．ｂｉｑｕｇｅ．ｃｏｍ",
    "щщщ.23US.ＣＯＭ",
    "（无弹窗）",
    "★",
    "ωωω.Ъiquge.Cc",
    "&nbsp;&nbsp;",
    "【顶点】",
    "\u{3000}\u{3000}",
];

/// Settings of [`generate`].
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Seed of the whole generation.
    pub seed: u64,
    /// Pages per disguise (a split work counts as one, however many parts it has).
    pub per_disguise: usize,
    /// Whether the corpus's library-only texts are registered too, never copied: a library of
    /// thousands of works, where a false-positive rate would show.
    pub more_works: bool,
}

/// Builds the library and the labelled pages.
pub fn generate(corpus: &Corpus, plan: Plan) -> Benchmark {
    let mut rng = Rng::new(plan.seed);
    let mut library: Vec<LibraryWork> = corpus
        .works
        .iter()
        .map(|t| LibraryWork {
            id: t.id.clone(),
            title: t.title.clone(),
            paragraphs: t.paragraphs.clone(),
            lang: t.lang,
        })
        .collect();

    // Quotations embedded in some Chinese works, and a publisher's paragraph appended to every
    // work of one source, as real libraries have them.
    let chinese: Vec<usize> = (0..library.len())
        .filter(|&i| library[i].lang == Lang::Chinese)
        .collect();
    let mut quoted: Vec<(usize, String)> = Vec::new();
    if !corpus.quotations.is_empty() {
        for _ in 0..plan.per_disguise {
            let w = *rng.pick(&chinese);
            let quote = rng.pick(&corpus.quotations).clone();
            let at = rng.below(library[w].paragraphs.len() + 1);
            library[w]
                .paragraphs
                .insert(at, format!("正如古人所说：“{quote}”"));
            quoted.push((w, quote));
        }
    }
    let publisher_source = corpus
        .works
        .iter()
        .find(|t| t.source == "sanguo")
        .map(|t| t.source);
    for (work, text) in library.iter_mut().zip(&corpus.works) {
        if Some(text.source) == publisher_source {
            work.paragraphs.push(PUBLISHER_PARAGRAPHS[0].to_owned());
        } else if text.lang == Lang::English {
            work.paragraphs.push(PUBLISHER_PARAGRAPHS[1].to_owned());
        }
    }

    let english: Vec<usize> = (0..library.len())
        .filter(|&i| library[i].lang == Lang::English)
        .collect();
    // Works long enough for a small excerpt to be a small share of them (the 6-9 %),
    // or every Chinese work when none is.
    let long_chinese: Vec<usize> = chinese
        .iter()
        .copied()
        .filter(|&i| library[i].text().chars().count() >= 1_500)
        .collect();
    let long_chinese = if long_chinese.is_empty() {
        chinese.clone()
    } else {
        long_chinese
    };
    let chinese_unrelated: Vec<&Text> = corpus
        .unrelated
        .iter()
        .filter(|t| t.lang == Lang::Chinese)
        .collect();
    let english_unrelated: Vec<&Text> = corpus
        .unrelated
        .iter()
        .filter(|t| t.lang == Lang::English)
        .collect();

    let mut pages: Vec<Page> = Vec::new();
    let mut next_id = 0usize;
    let mut path = |rng: &mut Rng| {
        next_id += 1;
        let dir = *rng.pick(&["book", "read", "html", "txt"]);
        format!("/{dir}/{next_id:05}.html")
    };

    for disguise in POSITIVE {
        for _ in 0..plan.per_disguise {
            let english_only = disguise.starts_with("english");
            let pool = if english_only {
                &english
            } else if disguise == "excerpt-small" {
                &long_chinese
            } else {
                &chinese
            };
            if pool.is_empty() {
                break;
            }
            let w = *rng.pick(pool);
            let work = &library[w];
            let mut page = Page {
                path: path(&mut rng),
                disguise,
                expected: vec![work.id.clone()],
                title: format!("{}_免费阅读", work.title),
                paragraphs: work.paragraphs.clone(),
                encoding: PageEncoding::Utf8,
                prev: None,
                next: None,
            };
            match disguise {
                // The site delivers these verbatim copies its own way (`site::content_html`):
                // written by scripts, strewn with hidden junk, or linked only from the sitemap.
                "verbatim"
                | "english-verbatim"
                | "rendered-write"
                | "rendered-blob"
                | "rendered-xhr"
                | "rendered-write-comments"
                | "rendered-xhr-sidebar"
                | "rendered-blob-related"
                | "hidden-junk"
                | "sitemap-only" => {}
                "traditional" => page.paragraphs = traditional(&page.paragraphs),
                "traditional-big5" => {
                    page.paragraphs = traditional(&page.paragraphs);
                    page.title = zhconv::zhconv(&page.title, zhconv::Variant::ZhTW);
                    page.encoding = PageEncoding::Big5;
                }
                "homophone-light" => {
                    let rate = rng.uniform(0.05, 0.10);
                    page.paragraphs = homophones(&page.paragraphs, rate, corpus, &mut rng);
                }
                "homophone-heavy" => {
                    let rate = rng.uniform(0.15, 0.25);
                    page.paragraphs = homophones(&page.paragraphs, rate, corpus, &mut rng);
                }
                "romanized" => {
                    let rate = rng.uniform(0.10, 0.20);
                    page.paragraphs = romanize(&page.paragraphs, rate, &mut rng);
                }
                "noise" | "english-noise" => page.paragraphs = noise(&page.paragraphs, &mut rng),
                "junk-between" => page.paragraphs = junk_between(&page.paragraphs, &mut rng),
                "ocr" => page.paragraphs = ocr_errors(&page.paragraphs, corpus, &mut rng),
                "laundered-light" => {
                    let how = Laundering {
                        rate: rng.uniform(0.20, 0.30),
                        rewrite_sentences: false,
                    };
                    page.paragraphs = launder(&page.paragraphs, how, corpus, &mut rng);
                }
                "laundered-heavy" => {
                    let how = Laundering {
                        rate: rng.uniform(0.85, 0.95),
                        rewrite_sentences: true,
                    };
                    page.paragraphs = launder(&page.paragraphs, how, corpus, &mut rng);
                }
                "laundered-traditional" => {
                    let how = Laundering {
                        rate: rng.uniform(0.50, 0.70),
                        rewrite_sentences: true,
                    };
                    let laundered = launder(&page.paragraphs, how, corpus, &mut rng);
                    page.paragraphs = traditional(&laundered);
                    page.title = zhconv::zhconv(&page.title, zhconv::Variant::ZhTW);
                }
                "ads" => page.paragraphs = ads(&page.paragraphs, &mut rng),
                "excerpt-10" | "excerpt-30" | "excerpt-50" => {
                    let share = match disguise {
                        "excerpt-10" => rng.uniform(0.10, 0.20),
                        "excerpt-30" => rng.uniform(0.20, 0.35),
                        _ => rng.uniform(0.35, 0.50),
                    };
                    let host = rng.pick(&chinese_unrelated);
                    page.title = host.title.clone();
                    page.paragraphs = excerpt_in(&work.paragraphs, share, host, &mut rng);
                }
                "excerpt-small" => {
                    // One passage of 120-300 characters inside a long page of other articles.
                    let hosts: Vec<&Text> = (0..3).map(|_| *rng.pick(&chinese_unrelated)).collect();
                    page.title = hosts[0].title.clone();
                    page.paragraphs = small_excerpt_in(&work.paragraphs, &hosts, &mut rng);
                }
                "shuffled" => page.paragraphs = shuffle(&page.paragraphs, &mut rng),
                "split" => {
                    let parts = 2 + rng.below(3);
                    let chunks = split(&work.paragraphs, parts);
                    let paths: Vec<String> = (0..chunks.len()).map(|_| path(&mut rng)).collect();
                    for (i, chunk) in chunks.into_iter().enumerate() {
                        pages.push(Page {
                            path: paths[i].clone(),
                            disguise,
                            expected: vec![work.id.clone()],
                            title: format!("{}（第{}页）", work.title, i + 1),
                            paragraphs: chunk,
                            encoding: if rng.chance(0.25) {
                                PageEncoding::Gbk
                            } else {
                                PageEncoding::Utf8
                            },
                            prev: i.checked_sub(1).map(|p| paths[p].clone()),
                            next: paths.get(i + 1).cloned(),
                        });
                    }
                    continue;
                }
                "interleaved" => {
                    let mut other = *rng.pick(pool);
                    while other == w && pool.len() > 1 {
                        other = *rng.pick(pool);
                    }
                    let second = &library[other];
                    page.expected.push(second.id.clone());
                    page.expected.sort();
                    page.expected.dedup();
                    page.paragraphs = interleave(&work.paragraphs, &second.paragraphs);
                }
                "combined" => page.paragraphs = combined(&page.paragraphs, corpus, &mut rng),
                other => unreachable!("disguise {other} has no generator"),
            }
            if page.encoding == PageEncoding::Utf8 && rng.chance(0.25) {
                page.encoding = PageEncoding::Gbk;
            }
            pages.push(page);
        }
    }

    negatives(
        corpus,
        &library,
        &quoted,
        &chinese_unrelated,
        &english_unrelated,
        plan,
        &mut rng,
        &mut path,
        &mut pages,
    );
    if plan.more_works {
        library.extend(corpus.library_only.iter().map(|t| LibraryWork {
            id: t.id.clone(),
            title: t.title.clone(),
            paragraphs: t.paragraphs.clone(),
            lang: t.lang,
        }));
    }
    Benchmark { library, pages }
}

#[allow(clippy::too_many_arguments)]
fn negatives(
    corpus: &Corpus,
    library: &[LibraryWork],
    quoted: &[(usize, String)],
    chinese_unrelated: &[&Text],
    english_unrelated: &[&Text],
    plan: Plan,
    rng: &mut Rng,
    path: &mut impl FnMut(&mut Rng) -> String,
    pages: &mut Vec<Page>,
) {
    let plain = |text: &Text, disguise: &'static str, path: String| Page {
        path,
        disguise,
        expected: Vec::new(),
        title: text.title.clone(),
        paragraphs: text.paragraphs.clone(),
        encoding: PageEncoding::Utf8,
        prev: None,
        next: None,
    };
    // Works' topics and datelines, to pick unrelated articles that resemble them.
    let work_topics: BTreeMap<&str, usize> = corpus
        .works
        .iter()
        .flat_map(|t| t.topics.iter().map(String::as_str))
        .fold(BTreeMap::new(), |mut m, t| {
            *m.entry(t).or_default() += 1;
            m
        });
    let on_topic: Vec<&Text> = chinese_unrelated
        .iter()
        .copied()
        .filter(|t| {
            t.topics
                .iter()
                .any(|topic| work_topics.contains_key(topic.as_str()))
        })
        .collect();
    let datelines: Vec<&str> = corpus
        .works
        .iter()
        .filter_map(|t| t.dateline.as_deref())
        .collect();
    let idioms_by_work: Vec<(usize, Vec<&str>)> = library
        .iter()
        .enumerate()
        .filter(|(_, w)| w.lang == Lang::Chinese)
        .map(|(i, w)| {
            let text = w.text();
            let found: Vec<&str> = corpus
                .phrases
                .iter()
                .map(String::as_str)
                .filter(|p| text.contains(p))
                .take(6)
                .collect();
            (i, found)
        })
        .filter(|(_, found)| found.len() >= 3)
        .collect();

    let chinese_works: &Vec<&LibraryWork> =
        &library.iter().filter(|w| w.lang == Lang::Chinese).collect();
    // Works long enough for three quotations to be a few percent of them.
    let quotable: &Vec<&LibraryWork> = &chinese_works
        .iter()
        .copied()
        .filter(|w| w.text().chars().count() >= 2_000)
        .collect();
    let quotable = if quotable.is_empty() {
        chinese_works
    } else {
        quotable
    };
    // Registered news articles with enough named things for another report of their event.
    let news_works: Vec<&Text> = corpus
        .works
        .iter()
        .filter(|t| t.entities.len() >= SAME_EVENT_MIN_ENTITIES)
        .collect();
    for disguise in NEGATIVE {
        for n in 0..plan.per_disguise {
            let host = if disguise == "negative-unrelated"
                && n % 4 == 3
                && !english_unrelated.is_empty()
            {
                *rng.pick(english_unrelated)
            } else if disguise == "negative-topic" && !on_topic.is_empty() {
                *rng.pick(&on_topic)
            } else {
                *rng.pick(chinese_unrelated)
            };
            let mut page = plain(host, disguise, path(rng));
            match disguise {
                "negative-unrelated" | "negative-topic" => {}
                "negative-dateline" => {
                    if datelines.is_empty() {
                        continue;
                    }
                    let dateline = rng.pick(&datelines);
                    match host.dateline.as_deref() {
                        Some(own) => {
                            page.paragraphs[0] = page.paragraphs[0].replacen(own, dateline, 1);
                        }
                        None => page.paragraphs.insert(0, format!("{dateline}　")),
                    }
                }
                "negative-quote" => {
                    if quoted.is_empty() {
                        continue;
                    }
                    let (_, quote) = rng.pick(quoted);
                    let at = rng.below(page.paragraphs.len() + 1);
                    page.paragraphs.insert(at, format!("古人云：“{quote}”"));
                }
                "negative-phrase" => {
                    if idioms_by_work.is_empty() {
                        continue;
                    }
                    let (_, idioms) = rng.pick(&idioms_by_work);
                    for idiom in idioms.iter().take(4) {
                        let at = rng.below(page.paragraphs.len());
                        page.paragraphs[at].push_str(&format!("真可谓{idiom}。"));
                    }
                }
                "negative-boilerplate" => {
                    let english = host.lang == Lang::English;
                    page.paragraphs
                        .push(PUBLISHER_PARAGRAPHS[usize::from(english)].to_owned());
                }
                "negative-sentence" => {
                    // A news lead (the work's first sentence) when it is of a lead's length,
                    // else another sentence of that length, quoted once in another article.
                    let Some(sentence) = shared_sentence(chinese_works, rng) else {
                        continue;
                    };
                    let at = rng.below(page.paragraphs.len());
                    page.paragraphs[at].push_str(&sentence);
                }
                "negative-commentary" => {
                    // Three to eight quotations, together at most a few percent of the work:
                    // many reviews of a long chapter quote well over the report threshold.
                    let count = 3 + rng.below(6);
                    let Some((work, quotes)) = (0..10).find_map(|_| {
                        let work = rng.pick(quotable);
                        let quotes = short_quotations(work, count, rng);
                        (quotes.len() >= 3).then_some((work, quotes))
                    }) else {
                        continue;
                    };
                    for quote in quotes {
                        let at = rng.below(page.paragraphs.len());
                        let lead =
                            rng.pick(&["书中写道", "作者写道", "原文是这样的", "正如文中所说"]);
                        page.paragraphs[at].push_str(&format!("{lead}：“{quote}”"));
                    }
                    page.title = format!("评《{}》", work.title);
                }
                "negative-obfuscated" => page.paragraphs = junk_between(&page.paragraphs, rng),
                "negative-same-event" => {
                    if news_works.is_empty() {
                        continue;
                    }
                    let Some((title, paragraphs)) = (0..20).find_map(|_| {
                        let work = rng.pick(&news_works);
                        // Another article on the work's topic when there is one.
                        let same_topic: Vec<&Text> = chinese_unrelated
                            .iter()
                            .copied()
                            .filter(|t| t.topics.iter().any(|topic| work.topics.contains(topic)))
                            .collect();
                        let host = if same_topic.is_empty() {
                            *rng.pick(chinese_unrelated)
                        } else {
                            *rng.pick(&same_topic)
                        };
                        same_event(work, host, rng)
                    }) else {
                        continue;
                    };
                    page.title = title;
                    page.paragraphs = paragraphs;
                }
                other => unreachable!("negative {other} has no generator"),
            }
            if rng.chance(0.25) {
                page.encoding = PageEncoding::Gbk;
            }
            pages.push(page);
        }
    }
}

/// Lengths of the sentence a `negative-sentence` page shares with a work, in characters: a news
/// lead or a quoted sentence, up to the "about 100 characters" of the issue.
const SHARED_SENTENCE_CHARS: std::ops::RangeInclusive<usize> = 40..=100;

/// One sentence of a Chinese work for a page to share: the work's first (a news article's lead)
/// when its length is in [`SHARED_SENTENCE_CHARS`], else a random one that is.
fn shared_sentence(works: &[&LibraryWork], rng: &mut Rng) -> Option<String> {
    for _ in 0..20 {
        let work = rng.pick(works);
        let all: Vec<&str> = work.paragraphs.iter().flat_map(|p| sentences(p)).collect();
        let fits = |s: &&str| SHARED_SENTENCE_CHARS.contains(&s.trim().chars().count());
        if let Some(lead) = all.first().filter(|s| fits(s)) {
            return Some(lead.trim().to_owned());
        }
        let fitting: Vec<&str> = all.into_iter().filter(fits).collect();
        if !fitting.is_empty() {
            return Some(rng.pick(&fitting).trim().to_owned());
        }
    }
    None
}

/// Length of one quotation of a commentary, in characters: a clause or sentence long enough to
/// count as a passage (shorter ones are below the matcher's passage floor and prove nothing
/// about the rules), up to the "about 40 characters".
const COMMENTARY_QUOTE_CHARS: std::ops::RangeInclusive<usize> = 24..=40;

/// Least distance in the work, in characters, between the sentences two quotations of a
/// commentary come from: quotations from "separate places", not the halves of one passage.
const COMMENTARY_QUOTE_APART: usize = 150;

/// Share of a work a commentary quotes at most, in all: "a few percent".
const COMMENTARY_MAX_SHARE: f64 = 0.05;

/// Up to `count` separate short quotations of `work` (clauses or sentences of
/// [`COMMENTARY_QUOTE_CHARS`], from different places), as a review quotes a book: fewer when `count` would
/// quote more than [`COMMENTARY_MAX_SHARE`] of the work.
fn short_quotations(work: &LibraryWork, count: usize, rng: &mut Rng) -> Vec<String> {
    // Each clause with the offset of its sentence in the work, in characters.
    let mut offset = 0;
    let mut clauses: Vec<(usize, String)> = Vec::new();
    for sentence in work.paragraphs.iter().flat_map(|p| sentences(p)) {
        for clause in sentence.split(['，', '；']) {
            let clause = clause.trim();
            if COMMENTARY_QUOTE_CHARS.contains(&clause.chars().count()) {
                clauses.push((offset, clause.to_owned()));
            }
        }
        offset += sentence.chars().count();
    }
    if clauses.len() < count {
        return Vec::new();
    }
    // Evenly spaced picks with a random offset, each from a sentence at least
    // COMMENTARY_QUOTE_APART characters after the one before: separate quotations, not one
    // passage quoted in pieces.
    let stride = clauses.len() / count;
    let first = rng.below(stride);
    let budget = (work.text().chars().count() as f64 * COMMENTARY_MAX_SHARE) as usize;
    let mut quoted = 0;
    let mut last_start: Option<usize> = None;
    (0..count)
        .map(|i| &clauses[first + i * stride])
        .filter(|(start, _)| {
            let separate = last_start.is_none_or(|last| *start >= last + COMMENTARY_QUOTE_APART);
            if separate {
                last_start = Some(*start);
            }
            separate
        })
        .map(|(_, clause)| clause.clone())
        .take_while(|quote| {
            quoted += quote.chars().count();
            quoted <= budget
        })
        .collect()
}

/// Named things a registered news article needs for a same-event report of it.
const SAME_EVENT_MIN_ENTITIES: usize = 4;

/// Another newspaper's report of the same event as `work`, as two reporters covering one
/// press conference write it: `host`'s own sentences with its names, places, organisations,
/// dates and figures replaced by `work`'s (kind for kind) and its dateline by `work`'s; and,
/// in one of its paragraphs, one clause of `work` (20 to 40 characters) quoted word for word
/// between the reporter's own versions of the two sentences on either side of it: the same named things in
/// the same order and the same short joining words (up to [`SAME_EVENT_KEPT_JOINS`]
/// characters), in other words. Returns the title and paragraphs, or `None` when fewer than
/// [`SAME_EVENT_MIN_ENTITIES`] named things could be carried over.
fn same_event(work: &Text, host: &Text, rng: &mut Rng) -> Option<(String, Vec<String>)> {
    let mut title = host.title.clone();
    let mut paragraphs = host.paragraphs.clone();
    // The host's named things, longest first so that a name inside a longer one is not
    // replaced piecemeal.
    let mut own: Vec<&(String, super::corpus::EntityKind)> = host.entities.iter().collect();
    own.sort_by_key(|(text, _)| std::cmp::Reverse(text.chars().count()));
    let mut carried = 0;
    let mut next_of_kind: BTreeMap<String, usize> = BTreeMap::new();
    for (text, kind) in own {
        let theirs: Vec<&String> = work
            .entities
            .iter()
            .filter(|(_, k)| k == kind)
            .map(|(t, _)| t)
            .collect();
        if theirs.is_empty() {
            continue;
        }
        let next = next_of_kind.entry(format!("{kind:?}")).or_default();
        let replacement = theirs[*next % theirs.len()];
        *next += 1;
        title = title.replace(text.as_str(), replacement);
        for p in &mut paragraphs {
            *p = p.replace(text.as_str(), replacement);
        }
        carried += 1;
    }
    if carried < SAME_EVENT_MIN_ENTITIES {
        return None;
    }
    if let (Some(theirs), Some(ours)) = (&work.dateline, &host.dateline) {
        for p in &mut paragraphs {
            *p = p.replacen(ours.as_str(), theirs, 1);
        }
    }
    // The quoted clause and the reporter's versions of its sentence's neighbours.
    let work_sentences: Vec<&str> = work
        .paragraphs
        .iter()
        .flat_map(|p| sentences(p))
        .map(str::trim)
        .collect();
    let with_clause: Vec<(usize, &str)> = work_sentences
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.split(['，', '；', '。']).map(move |c| (i, c.trim())))
        .filter(|(_, c)| (20..=40).contains(&c.chars().count()))
        .collect();
    if with_clause.is_empty() {
        return None;
    }
    let (at_sentence, clause) = *rng.pick(&with_clause);
    let own_words: Vec<char> = host.body().chars().filter(|c| is_han(*c)).collect();
    let mut cursor = rng.below(own_words.len().max(1));
    let mut retold = |sentence: &str| retell(sentence, &work.entities, &own_words, &mut cursor);
    // Up to two sentences retold on each side of the quoted clause.
    let mut passage = String::new();
    for before in &work_sentences[at_sentence.saturating_sub(2)..at_sentence] {
        passage.push_str(&retold(before));
    }
    passage.push_str(clause);
    passage.push('。');
    for after in work_sentences.iter().skip(at_sentence + 1).take(2) {
        passage.push_str(&retold(after));
    }
    let at = rng.below(paragraphs.len());
    paragraphs[at].push_str(&passage);
    Some((title, paragraphs))
}

/// Joining words of a retold sentence kept as they are (在, 会见了, 的, 和): longer stretches
/// between named things are said in the reporter's own words.
const SAME_EVENT_KEPT_JOINS: usize = 3;

/// `sentence` as another reporter says it: its named things (from `entities`) in the same
/// order with the same short joins, every longer stretch between them replaced by as many
/// characters of the reporter's own text (`own`, read on from `cursor`).
fn retell(
    sentence: &str,
    entities: &[(String, super::corpus::EntityKind)],
    own: &[char],
    cursor: &mut usize,
) -> String {
    // Where each named thing occurs, leftmost and longest first, without overlaps.
    let mut marks: Vec<(usize, usize)> = Vec::new();
    for (name, _) in entities {
        for (start, _) in sentence.match_indices(name.as_str()) {
            marks.push((start, start + name.len()));
        }
    }
    marks.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
    let mut out = String::new();
    let mut at = 0;
    let mut say = |stretch: &str, out: &mut String| {
        let han = stretch.chars().filter(|c| is_han(*c)).count();
        if han <= SAME_EVENT_KEPT_JOINS || own.is_empty() {
            out.push_str(stretch);
        } else {
            for _ in 0..han {
                out.push(own[*cursor % own.len()]);
                *cursor += 1;
            }
        }
    };
    for (start, end) in marks {
        if start < at {
            continue;
        }
        say(&sentence[at..start], &mut out);
        out.push_str(&sentence[start..end]);
        at = end;
    }
    say(&sentence[at..], &mut out);
    if !out.ends_with(['。', '！', '？']) {
        out.push('。');
    }
    out
}

/// Copies made from scans: about one Han character in ten replaced by one of similar shape
/// (形近字), and a few dropped or doubled.
fn ocr_errors(paragraphs: &[String], corpus: &Corpus, rng: &mut Rng) -> Vec<String> {
    // Only characters with look-alikes can be misread: raise their rate so that one character
    // in ten of the whole text is.
    let (han, misreadable) = paragraphs
        .iter()
        .flat_map(|p| p.chars())
        .filter(|c| is_han(*c))
        .fold((0usize, 0usize), |(all, some), c| {
            (
                all + 1,
                some + usize::from(corpus.lookalikes.contains_key(&c)),
            )
        });
    let rate = (0.1 * han as f64 / misreadable.max(1) as f64).min(1.0);
    paragraphs
        .iter()
        .map(|p| {
            let mut out = String::with_capacity(p.len());
            for c in p.chars() {
                if is_han(c) && rng.chance(0.005) {
                    continue;
                }
                match corpus.lookalikes.get(&c) {
                    Some(options) if rng.chance(rate) => out.push(*rng.pick(options)),
                    _ => out.push(c),
                }
                if is_han(c) && rng.chance(0.005) {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// How a laundering (伪原创) tool rewrites a text.
#[derive(Debug, Clone, Copy)]
struct Laundering {
    /// Share of the words the synonym table knows that are replaced (function words included).
    rate: f64,
    /// Whether sentences are also rewritten: two clauses swapped in about a third of the
    /// sentences that have several, a filler phrase opening about a fifth of them.
    rewrite_sentences: bool,
}

/// Filler phrases laundering tools open sentences with (written for this benchmark).
const FILLERS: [&str; 8] = [
    "说实话，",
    "不得不说，",
    "众所周知，",
    "事实上，",
    "值得一提的是，",
    "总的来说，",
    "可以说，",
    "换句话说，",
];

/// A laundered copy (洗稿, 伪原创) as automatic tools make them: the text cut into words by
/// forward maximum matching over the synonym table (the tool's own segmentation, not the
/// matcher's), `rate` of the known words replaced by a synonym from one of their groups, and,
/// with `rewrite_sentences`, clauses swapped and filler phrases added.
fn launder(paragraphs: &[String], how: Laundering, corpus: &Corpus, rng: &mut Rng) -> Vec<String> {
    let synonyms = &corpus.synonyms;
    let replace_words = |text: &str, rng: &mut Rng| -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len() + 8);
        let mut i = 0;
        while i < chars.len() {
            let longest = (i..chars.len().min(i + Synonyms::MAX_WORD_CHARS))
                .take_while(|&j| is_han(chars[j]))
                .count();
            let known = (1..=longest).rev().find_map(|len| {
                let word: String = chars[i..i + len].iter().collect();
                synonyms.of.get(&word).map(|groups| (len, word, groups))
            });
            match known {
                Some((len, word, groups)) => {
                    let group = &synonyms.groups[*rng.pick(groups) as usize];
                    let others: Vec<&String> = group.iter().filter(|w| **w != word).collect();
                    if !others.is_empty() && rng.chance(how.rate) {
                        out.push_str(rng.pick(&others).as_str());
                    } else {
                        out.push_str(&word);
                    }
                    i += len;
                }
                None => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        out
    };
    paragraphs
        .iter()
        .map(|p| {
            let mut out = String::with_capacity(p.len() + 16);
            for sentence in p.split_inclusive(['。', '！', '？']) {
                let mut sentence = sentence.to_owned();
                if how.rewrite_sentences {
                    sentence = rewrite_sentence(&sentence, rng);
                }
                out.push_str(&replace_words(&sentence, rng));
            }
            out
        })
        .collect()
}

/// Swaps two neighbouring clauses of a sentence (about a third of those with several) and opens
/// about a fifth of the sentences with a filler phrase.
fn rewrite_sentence(sentence: &str, rng: &mut Rng) -> String {
    let (body, end) = match sentence.char_indices().last() {
        Some((at, '。' | '！' | '？')) => (&sentence[..at], &sentence[at..]),
        _ => (sentence, ""),
    };
    let mut clauses: Vec<&str> = body.split('，').collect();
    let quoted = body.contains(['“', '”', '「', '」']);
    if clauses.len() >= 2 && !quoted && rng.chance(0.35) {
        let at = rng.below(clauses.len() - 1);
        clauses.swap(at, at + 1);
    }
    let mut out = String::with_capacity(sentence.len() + 24);
    if body.chars().count() >= 8 && rng.chance(0.2) {
        out.push_str(rng.pick(&FILLERS).as_ref());
    }
    out.push_str(&clauses.join("，"));
    out.push_str(end);
    out
}

/// Visible junk between characters, as anti-copy sites strew it (我※的ⓧ朋7友): a decorative
/// symbol, a stray Latin letter or a digit after every two to four Han characters.
fn junk_between(paragraphs: &[String], rng: &mut Rng) -> Vec<String> {
    const JUNK_CHARS: [char; 16] = [
        '※', 'ⓧ', '◆', '☆', '丶', '♂', 'ゞ', '①', '7', 'x', 'Q', 'k', '3', '◎', '¤', '〓',
    ];
    paragraphs
        .iter()
        .map(|p| {
            let mut out = String::with_capacity(p.len() * 2);
            let mut until_junk = 2 + rng.below(3);
            for c in p.chars() {
                out.push(c);
                if is_han(c) {
                    until_junk -= 1;
                    if until_junk == 0 {
                        out.push(*rng.pick(&JUNK_CHARS));
                        until_junk = 2 + rng.below(3);
                    }
                }
            }
            out
        })
        .collect()
}

fn traditional(paragraphs: &[String]) -> Vec<String> {
    paragraphs
        .iter()
        .map(|p| zhconv::zhconv(p, zhconv::Variant::ZhTW))
        .collect()
}

fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// Replaces `rate` of the Han characters that have homophones by one of them.
fn homophones(paragraphs: &[String], rate: f64, corpus: &Corpus, rng: &mut Rng) -> Vec<String> {
    paragraphs
        .iter()
        .map(|p| {
            p.chars()
                .map(|c| match corpus.homophones.get(&c) {
                    Some(options) if !options.is_empty() && rng.chance(rate) => *rng.pick(options),
                    _ => c,
                })
                .collect()
        })
        .collect()
}

/// Writes `rate` of the Han characters as toneless pinyin, in runs of one or two characters.
fn romanize(paragraphs: &[String], rate: f64, rng: &mut Rng) -> Vec<String> {
    paragraphs
        .iter()
        .map(|p| {
            let chars: Vec<char> = p.chars().collect();
            let mut out = String::with_capacity(p.len() * 2);
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                // A run of one or two starts with probability rate / 1.5.
                if is_han(c) && rng.chance(rate / 1.5) {
                    let run = 1 + rng.below(2);
                    let mut taken = 0;
                    while taken < run && i < chars.len() {
                        match chars[i].to_pinyin() {
                            Some(syllable) if is_han(chars[i]) => out.push_str(syllable.plain()),
                            _ => break,
                        }
                        i += 1;
                        taken += 1;
                    }
                    if taken == 0 {
                        out.push(c);
                        i += 1;
                    }
                } else {
                    out.push(c);
                    i += 1;
                }
            }
            out
        })
        .collect()
}

/// Zero-width and full-width characters, changed punctuation, stray spaces.
fn noise(paragraphs: &[String], rng: &mut Rng) -> Vec<String> {
    const ZERO_WIDTH: [char; 4] = ['\u{200b}', '\u{200c}', '\u{200d}', '\u{feff}'];
    paragraphs
        .iter()
        .map(|p| {
            let mut out = String::with_capacity(p.len() * 2);
            for c in p.chars() {
                let c = match c {
                    '，' if rng.chance(0.5) => ',',
                    '。' if rng.chance(0.5) => '.',
                    '“' | '”' if rng.chance(0.5) => '"',
                    '：' if rng.chance(0.5) => ':',
                    '！' if rng.chance(0.5) => '!',
                    // Full-width forms of ASCII letters, digits and punctuation.
                    '!'..='~' if rng.chance(0.5) => {
                        char::from_u32(c as u32 - 0x21 + 0xff01).unwrap_or(c)
                    }
                    _ => c,
                };
                out.push(c);
                if rng.chance(0.08) {
                    out.push(*rng.pick(&ZERO_WIDTH));
                }
                if rng.chance(0.02) {
                    out.push(*rng.pick(&[' ', '\u{3000}', '·', '~', '*']));
                }
            }
            out
        })
        .collect()
}

/// An ad line after every paragraph and junk inside some.
fn ads(paragraphs: &[String], rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::with_capacity(paragraphs.len() * 2);
    for p in paragraphs {
        let sentences = sentences(p);
        let mut with_junk = String::with_capacity(p.len() + 64);
        for s in sentences {
            with_junk.push_str(s);
            if rng.chance(0.15) {
                let junk: &&str = rng.pick(&JUNK);
                with_junk.push_str(junk);
            }
        }
        out.push(with_junk);
        out.push((*rng.pick(&AD_LINES)).to_owned());
    }
    out
}

/// Sentences of a paragraph with their closing punctuation (Chinese or English).
fn sentences(paragraph: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = paragraph.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = matches!(c, '。' | '！' | '？' | '；' | '…')
            || (matches!(c, '.' | '!' | '?' | ';')
                && chars.peek().is_none_or(|(_, n)| n.is_whitespace()));
        if ends {
            // Keep closing quotes with their sentence.
            let mut end = i + c.len_utf8();
            while let Some(&(j, q)) = chars.peek() {
                if matches!(q, '”' | '」' | '’' | '"' | '）' | ')') {
                    end = j + q.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(&paragraph[start..end]);
            start = end;
        }
    }
    if start < paragraph.len() {
        out.push(&paragraph[start..]);
    }
    out
}

/// A contiguous run of sentences making up about `share` of the work, between paragraphs of an
/// unrelated host text.
fn excerpt_in(work: &[String], share: f64, host: &Text, rng: &mut Rng) -> Vec<String> {
    let sentences: Vec<&str> = work.iter().flat_map(|p| sentences(p)).collect();
    let total: usize = sentences.iter().map(|s| s.chars().count()).sum();
    let wanted = (total as f64 * share) as usize;
    let start = rng.below(sentences.len());
    let mut taken = String::new();
    let mut count = 0;
    let mut i = start;
    // Wrap to the beginning only if the tail is too short.
    while count < wanted && i < start + sentences.len() {
        let s = sentences[i % sentences.len()];
        taken.push_str(s);
        count += s.chars().count();
        i += 1;
    }
    let mut out = host.paragraphs.clone();
    let at = rng.below(out.len() + 1);
    out.insert(at, taken);
    out
}

/// Characters of the one passage an `excerpt-small` page copies: the shortest excerpts the issue
/// names (6-9 % of a work of a few thousand characters).
const SMALL_EXCERPT_CHARS: std::ops::RangeInclusive<usize> = 120..=300;

/// A contiguous run of the work's sentences of [`SMALL_EXCERPT_CHARS`] characters (as close to
/// a drawn length as sentence ends allow, a long sentence cut at the upper bound), placed
/// between the paragraphs of several unrelated articles.
fn small_excerpt_in(work: &[String], hosts: &[&Text], rng: &mut Rng) -> Vec<String> {
    let sentences: Vec<&str> = work.iter().flat_map(|p| sentences(p)).collect();
    let wanted = SMALL_EXCERPT_CHARS.start()
        + rng.below(SMALL_EXCERPT_CHARS.end() - SMALL_EXCERPT_CHARS.start() + 1);
    let start = rng.below(sentences.len());
    let mut taken = String::new();
    for s in sentences.iter().cycle().skip(start).take(sentences.len()) {
        if taken.chars().count() >= wanted {
            break;
        }
        taken.push_str(s);
    }
    let taken: String = taken.chars().take(*SMALL_EXCERPT_CHARS.end()).collect();
    let mut out: Vec<String> = hosts.iter().flat_map(|h| h.paragraphs.clone()).collect();
    let at = 1 + rng.below(out.len().max(1));
    out.insert(at.min(out.len()), taken);
    out
}

/// Sentences shuffled inside each paragraph, paragraphs shuffled, a fifth of them dropped.
fn shuffle(paragraphs: &[String], rng: &mut Rng) -> Vec<String> {
    let mut kept: Vec<String> = Vec::with_capacity(paragraphs.len());
    for p in paragraphs {
        if rng.chance(0.2) {
            continue;
        }
        let mut parts = sentences(p);
        rng.shuffle(&mut parts);
        kept.push(parts.concat());
    }
    if kept.is_empty() {
        kept.push(paragraphs[0].clone());
    }
    rng.shuffle(&mut kept);
    kept
}

/// `parts` contiguous runs of paragraphs of about equal length, as sites paginate a chapter
/// (long paragraphs are split at sentences first, so a work in few paragraphs still splits).
/// Each unit goes to the part its middle falls in, so no part is a sliver of a heading.
fn split(paragraphs: &[String], parts: usize) -> Vec<Vec<String>> {
    let units: Vec<String> = paragraphs
        .iter()
        .flat_map(|p| {
            if p.chars().count() > 300 {
                sentences(p).into_iter().map(str::to_owned).collect()
            } else {
                vec![p.clone()]
            }
        })
        .collect();
    let total: usize = units
        .iter()
        .map(|u| u.chars().count())
        .sum::<usize>()
        .max(1);
    let mut out = vec![Vec::new(); parts];
    let mut start = 0;
    for unit in units {
        let len = unit.chars().count();
        let middle = start + len / 2;
        out[(middle * parts / total).min(parts - 1)].push(unit);
        start += len;
    }
    out.retain(|part| !part.is_empty());
    out
}

fn interleave(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    for i in 0..a.len().max(b.len()) {
        out.extend(a.get(i).cloned());
        out.extend(b.get(i).cloned());
    }
    out
}

/// Two or three disguises applied one after the other.
fn combined(paragraphs: &[String], corpus: &Corpus, rng: &mut Rng) -> Vec<String> {
    let mut steps = [
        "traditional",
        "homophone",
        "romanized",
        "noise",
        "ads",
        "shuffled",
    ];
    rng.shuffle(&mut steps);
    let count = 2 + rng.below(2);
    let mut chosen: Vec<&str> = steps[..count].to_vec();
    // Conversion to Traditional goes first: pirates convert, then decorate.
    chosen.sort_by_key(|s| *s != "traditional");
    let mut out = paragraphs.to_vec();
    for step in chosen {
        out = match step {
            "traditional" => traditional(&out),
            "homophone" => homophones(&out, 0.05, corpus, rng),
            "romanized" => romanize(&out, 0.08, rng),
            "noise" => noise(&out, rng),
            "ads" => ads(&out, rng),
            _ => shuffle(&out, rng),
        };
    }
    out
}

/// Pages per disguise, for the run log.
pub fn census(pages: &[Page]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for page in pages {
        *counts.entry(page.disguise).or_default() += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::corpus::EntityKind;

    /// A homophone table from (character, its homophones) pairs.
    fn table(pairs: &[(char, &str)]) -> std::collections::HashMap<char, Vec<char>> {
        pairs
            .iter()
            .map(|(c, options)| (*c, options.chars().collect()))
            .collect()
    }

    fn text(id: &str, source: &'static str, lang: Lang, paragraphs: &[&str]) -> Text {
        Text {
            id: id.to_owned(),
            title: format!("title {id}"),
            paragraphs: paragraphs.iter().map(|p| (*p).to_owned()).collect(),
            source,
            lang,
            topics: vec!["春节".to_owned()],
            dateline: Some("新华社北京１月５日电".to_owned()),
            entities: [
                ("新华社", EntityKind::Organisation),
                ("北京", EntityKind::Place),
                ("１月５日", EntityKind::Time),
                ("有关部门", EntityKind::Organisation),
                ("春节", EntityKind::Name),
            ]
            .iter()
            .map(|(t, k)| ((*t).to_owned(), *k))
            .collect(),
        }
    }

    fn corpus() -> Corpus {
        let zh = [
            "新华社北京１月５日电　今年春节前夕，各地纷纷开展送温暖活动。",
            "记者在街头看到，人们忙着购买年货，市场上商品丰富，价格稳定。",
            "有关部门表示，将继续做好节日期间的市场供应和安全保障工作。",
        ];
        // A chapter long enough for a commentary to quote a few percent of it.
        let chapter: Vec<String> = (0..80)
            .map(|i| format!("第{i}回双方将士在城下摆开阵势准备迎接新一轮的激烈交锋。"))
            .collect();
        let chapter: Vec<&str> = chapter.iter().map(String::as_str).collect();
        let en = [
            "To be, or not to be, that is the question. Whether tis nobler in the mind to suffer.",
            "The slings and arrows of outrageous fortune, or to take arms against a sea of troubles.",
        ];
        Corpus {
            works: vec![
                text("w1", "people-daily-1998", Lang::Chinese, &zh),
                text("w2", "sanguo", Lang::Chinese, &chapter),
                text("e1", "shakespeare", Lang::English, &en),
            ],
            unrelated: vec![
                text("u1", "people-daily-1998", Lang::Chinese, &zh[..2]),
                text("u2", "milton", Lang::English, &en[..1]),
            ],
            quotations: vec!["学而时习之，不亦说乎".to_owned()],
            phrases: vec![
                "商品丰富".to_owned(),
                "价格稳定".to_owned(),
                "安全保障".to_owned(),
            ],
            homophones: table(&[('春', "纯唇"), ('节', "结洁"), ('市', "是事")]),
            lookalikes: table(&[('春', "舂"), ('市', "巿"), ('日', "曰")]),
            library_only: Vec::new(),
            synonyms: Synonyms::parse("市场 集市\n供应 供给 提供\n节日 节假日\n"),
            sources: Vec::new(),
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_benchmark_and_another_seed_differs() {
        let plan = Plan {
            seed: 7,
            per_disguise: 3,
            more_works: false,
        };
        let a = generate(&corpus(), plan);
        let b = generate(&corpus(), plan);
        let texts = |bench: &Benchmark| -> Vec<String> {
            bench
                .pages
                .iter()
                .map(|p| format!("{}{}", p.path, p.text()))
                .collect()
        };
        assert_eq!(texts(&a), texts(&b));
        let c = generate(&corpus(), Plan { seed: 8, ..plan });
        assert_ne!(texts(&a), texts(&c));
    }

    #[test]
    fn every_disguise_gets_pages_and_negatives_expect_nothing() {
        let bench = generate(
            &corpus(),
            Plan {
                seed: 1,
                per_disguise: 4,
                more_works: false,
            },
        );
        let counts = census(&bench.pages);
        for disguise in POSITIVE.iter().chain(&NEGATIVE) {
            assert!(
                counts.get(disguise).copied().unwrap_or(0) >= 4,
                "{disguise}: {counts:?}"
            );
        }
        for page in &bench.pages {
            assert_eq!(
                page.is_negative(),
                page.expected.is_empty(),
                "{}",
                page.disguise
            );
        }
        let paths: std::collections::HashSet<&str> =
            bench.pages.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths.len(), bench.pages.len(), "paths are unique");
    }

    #[test]
    fn homophones_replace_about_the_requested_share() {
        let text = vec!["春节春节市".repeat(400)];
        let out = homophones(&text, 0.2, &corpus(), &mut Rng::new(3));
        let changed = text[0]
            .chars()
            .zip(out[0].chars())
            .filter(|(a, b)| a != b)
            .count();
        let share = changed as f64 / text[0].chars().count() as f64;
        assert!((0.15..0.25).contains(&share), "{share}");
    }

    #[test]
    fn laundering_replaces_about_the_requested_share_of_known_words() {
        let text = vec!["今天市场供应充足。".repeat(300)];
        let how = Laundering {
            rate: 0.5,
            rewrite_sentences: false,
        };
        let out = launder(&text, how, &corpus(), &mut Rng::new(5));
        let kept = out[0].matches("市场").count() + out[0].matches("供应").count();
        let replaced = out[0].matches("集市").count()
            + out[0].matches("供给").count()
            + out[0].matches("提供").count();
        assert_eq!(kept + replaced, 600, "{}", &out[0][..200]);
        let share = replaced as f64 / 600.0;
        assert!((0.4..0.6).contains(&share), "{share}");
        assert_eq!(out[0].matches("今天").count(), 300, "unknown words stay");
    }

    #[test]
    fn rewriting_sentences_swaps_clauses_and_adds_fillers_but_keeps_every_clause() {
        let sentence = "城外大军压境，城内粮草将尽，守将连夜商议对策。";
        let mut rng = Rng::new(9);
        let outs: Vec<String> = (0..200)
            .map(|_| rewrite_sentence(sentence, &mut rng))
            .collect();
        assert!(
            outs.iter()
                .any(|o| o.starts_with("城内粮草将尽，城外大军压境"))
        );
        assert!(
            outs.iter()
                .any(|o| FILLERS.iter().any(|f| o.starts_with(f)))
        );
        for out in &outs {
            for clause in ["城外大军压境", "城内粮草将尽", "守将连夜商议对策"] {
                assert!(out.contains(clause), "{out}");
            }
            assert!(out.ends_with('。'));
        }
    }

    #[test]
    fn romanization_writes_pinyin_for_some_characters() {
        let out = romanize(
            &["今年春节前夕各地纷纷开展送温暖活动".repeat(20)],
            0.2,
            &mut Rng::new(5),
        );
        assert!(out[0].chars().any(|c| c.is_ascii_lowercase()), "{}", out[0]);
        assert!(out[0].chars().any(is_han));
    }

    #[test]
    fn sentences_keep_their_punctuation_and_closing_quotes() {
        assert_eq!(
            sentences("他说：“走吧。”我们走了！Then he left. End"),
            vec!["他说：“走吧。”", "我们走了！", "Then he left.", " End"]
        );
    }

    #[test]
    fn split_parts_are_balanced_even_after_a_short_heading() {
        let mut paragraphs = vec!["第一章".to_owned()];
        paragraphs.extend((0..9).map(|i| format!("{}{i}。", "长".repeat(100))));
        let parts = split(&paragraphs, 3);
        assert_eq!(parts.concat(), paragraphs);
        for part in &parts {
            let len: usize = part.iter().map(|p| p.chars().count()).sum();
            assert!((250..=420).contains(&len), "{len}: {parts:?}");
        }
    }

    #[test]
    fn split_parts_cover_the_work_in_order() {
        let paragraphs: Vec<String> = (0..10).map(|i| format!("第{i}段。")).collect();
        let parts = split(&paragraphs, 3);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), paragraphs);
    }
}
