//! Paragraph-level clean-up of the chosen main text.
//!
//! The DOM rules pick the right container, but pirate sites write their ads *into* the chapter
//! text, as ordinary lines between the paragraphs: "天才一秒记住本站地址：… www.xxx.net 最快更新！",
//! "本章未完，点击下一页继续阅读", "(本章完)", "关注公众号…", and watermarks such as
//! `ｗｗｗ．ｘｘ．ｃｏｍ` pushed into the middle of a sentence. News pages end their body with
//! "责任编辑：…" and disclaimers. This module removes such lines while leaving prose alone,
//! which is why every rule needs more than one signal:
//!
//! - **site ads**: a paragraph of at most [`AD_MAX_CHARS`] that names a domain *and* uses
//!   promotion vocabulary (记住, 首发, 最快, 手机版, 阅读网址, 本站, …). A character who types a
//!   web address, or a sentence that says 记住 or 访问, stays.
//! - **markers**: short paragraphs ([`MARKER_MAX_CHARS`]) with a fixed phrase of page furniture
//!   (本章未完, 继续阅读, 本章完, 关注公众号, 识别二维码, 章节报错, 加入书签, …; "Advertisement",
//!   "continues below", "report chapter" in English).
//! - **meta lines**, only at the start or end of the text: short lines with two labels
//!   (来源, 编辑, 作者, 发布, 字数, translator, …), one label and a date or time, or one that
//!   opens with a credit label and a colon ("（责编：…）").
//! - **title lines** at the start: a line contained in the page's `<title>` is the heading.
//! - **author notes** ("作者有话要说：…") and **disclaimers** ("声明：…") by their opening words.
//! - **image captions**: short lines opening with "图为" or closing with a photo credit
//!   ("（受访者供图）", "（记者 王某 摄）").
//! - **watermarks**: runs of full-width Latin letters and digits that spell a domain are cut out
//!   of the paragraph (prose writes web addresses in ASCII, ad injectors use full width to
//!   dodge filters).
//!
//! Traditional-script forms of the phrases are listed too (Big5 mirrors).

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};

/// Longest paragraph (non-whitespace characters) treated as a site ad.
const AD_MAX_CHARS: usize = 120;
/// Longest paragraph treated as a marker line.
const MARKER_MAX_CHARS: usize = 60;
/// Longest paragraph treated as a meta line.
const META_MAX_CHARS: usize = 80;
/// Longest paragraph treated as a disclaimer.
const DISCLAIMER_MAX_CHARS: usize = 300;
/// Longest English paragraph (words) treated as a marker line.
const MARKER_MAX_WORDS: usize = 40;

/// Promotion vocabulary of site ads; only counts together with a domain name.
const AD_PHRASES: &[&str] = &[
    "记住",
    "記住",
    "首发",
    "首發",
    "最快",
    "无弹窗",
    "無彈窗",
    "无广告",
    "無廣告",
    "手机版",
    "手機版",
    "手机用户",
    "手機用戶",
    "手机阅读",
    "手機閱讀",
    "阅读网址",
    "閱讀網址",
    "本站",
    "域名",
    "请访问",
    "請訪問",
    "欢迎访问",
    "歡迎訪問",
    "请浏览",
    "請瀏覽",
    "收藏",
    "最新章节",
    "最新章節",
    "免费阅读",
    "免費閱讀",
    "全文阅读",
    "全文閱讀",
    "阅读体验",
    "閱讀體驗",
    "更新",
    "小说网",
    "小說網",
    "收集整理",
    "电子书",
    "電子書",
    "chapter",
    "read ",
    "visit",
    "update",
    "upload",
    "novel",
    "latest",
    "free",
];

/// Page-furniture phrases that mark a short paragraph as boilerplate on their own.
const MARKER_PHRASES: &[&str] = &[
    "本章未完",
    "继续阅读",
    "繼續閱讀",
    "点击下一页",
    "點擊下一頁",
    "请翻页",
    "請翻頁",
    "本章完",
    "关注公众号",
    "關注公眾號",
    "关注微信公众号",
    "關注微信公眾號",
    "识别二维码",
    "識別二維碼",
    "扫描二维码",
    "掃描二維碼",
    "扫码关注",
    "掃碼關注",
    "点击上方",
    "點擊上方",
    "长按识别",
    "長按識別",
    "阅读原文",
    "支持正版",
    "看正版",
    "正版阅读",
    "正版閱讀",
    "閱讀原文",
    "章节错误",
    "章節錯誤",
    "章节报错",
    "章節報錯",
    "点此举报",
    "點此舉報",
    "加入书签",
    "加入書籤",
    "加入书架",
    "加入書架",
    "投推荐票",
    "投推薦票",
    "continues below",
    "report chapter",
    "broken links",
    "scroll to continue",
];

/// Phrases that mark a short paragraph only together with one of their companions.
const MARKER_PAIRS: &[(&str, &[&str])] = &[
    ("书友", &["推荐", "收藏", "月票"]),
    ("書友", &["推薦", "收藏", "月票"]),
    ("首发", &["小说网", "正版", "本站"]),
    ("首發", &["小說網", "正版", "本站"]),
    (
        "小说网",
        &["更新最快", "最快更新", "无弹窗", "提供", "手打", "免费阅读"],
    ),
    (
        "小說網",
        &["更新最快", "最快更新", "無彈窗", "提供", "手打", "免費閱讀"],
    ),
];

/// Labels of byline, source and editor lines.
const META_LABELS: &[&str] = &[
    "作者",
    "来源",
    "來源",
    "出处",
    "出處",
    "编辑",
    "編輯",
    "审核",
    "審核",
    "记者",
    "記者",
    "发布",
    "發布",
    "發佈",
    "发表于",
    "發表於",
    "更新时间",
    "更新時間",
    "字数",
    "字數",
    "点击",
    "點擊",
    "浏览",
    "瀏覽",
    "时间",
    "時間",
    "translator:",
    "translated by",
    "editor:",
    "edited by",
    "proofreader:",
];

/// Openings of author notes.
const AUTHOR_NOTE_OPENINGS: &[&str] = &[
    "作者有话要说",
    "作者有話要說",
    "作者有话说",
    "作者的话",
    "作者的話",
    "作者留言",
    "author's note",
    "author’s note",
    "a/n:",
];

/// Openings of disclaimers.
const DISCLAIMER_OPENINGS: &[&str] = &[
    "声明：",
    "聲明：",
    "声明:",
    "免责声明",
    "免責聲明",
    "特别声明",
    "特別聲明",
    "版权声明",
    "版權聲明",
    "郑重声明",
    "鄭重聲明",
    "disclaimer:",
];

/// Labels that open an editor, source or credit line when a colon follows them
/// ("责任编辑：…", "（责编：…）", "来源：…").
const CREDIT_OPENINGS: &[&str] = &[
    "责任编辑",
    "責任編輯",
    "责编",
    "責編",
    "编辑",
    "編輯",
    "审核",
    "審核",
    "校对",
    "校對",
    "本文来源",
    "文章来源",
    "来源",
    "來源",
    "原标题",
    "原標題",
    "作者",
    "记者",
    "記者",
    "通讯员",
    "通訊員",
    "摄影",
    "攝影",
];

/// Photo credits that end a caption ("（受访者供图）", "（记者 王某 摄）").
const PHOTO_CREDITS: &[&str] = &[
    "摄",
    "攝",
    "供图",
    "供圖",
    "图源",
    "圖源",
    "资料图",
    "資料圖",
    "图片来源",
    "圖片來源",
];

/// Longest paragraph treated as an image caption.
const CAPTION_MAX_CHARS: usize = 80;

/// Labels stripped from the start of a paragraph (a book description's "简介：").
const LEADING_LABELS: &[&str] = &[
    "内容简介：",
    "內容簡介：",
    "作品简介：",
    "作品簡介：",
    "简介：",
    "簡介：",
    "简介:",
    "簡介:",
];

/// Bracketed end-of-chapter markers stripped from the end of a paragraph.
const TRAILING_MARKERS: &[&str] = &["(本章完)", "（本章完）", "【本章完】"];

/// Top-level domains that identify a web address; short ones that are also English words or
/// abbreviations (`in`, `me`, `us`, `co`, `so`) are left out, but any alphabetic top-level
/// domain counts after a `www.`, `m.` or `wap.` host (`www.xbqg.so`).
const TLDS: &[&str] = &[
    "com", "net", "org", "cn", "cc", "la", "tw", "hk", "info", "io", "xyz", "top", "vip", "biz",
    "tv", "app", "site", "online", "club",
];

/// Host labels that make a dotted token a web address whatever its top-level domain.
const HOST_PREFIXES: &[&str] = &["www", "m", "wap"];

/// A rendered paragraph: trimmed, whitespace runs collapsed to single spaces, with its
/// [significant length](significant_len), counted while rendering.
pub(super) struct Rendered {
    pub(super) text: String,
    pub(super) significant_len: usize,
    /// Inside a list item (`<li>`, `<dd>`) or a repeated item (a reply, a review, a blurb).
    pub(super) in_item: bool,
    /// Inside a run of repeated items (not merely a list item).
    pub(super) in_repeat: bool,
    /// The text node the paragraph starts in, and how many text nodes the render had met
    /// by then (its place in page order).
    pub(super) at: Option<(ego_tree::NodeId, u32)>,
}

/// [`clean_rendered`] on bare paragraphs.
#[cfg(test)]
fn clean(paragraphs: Vec<String>, title: Option<&str>) -> Vec<String> {
    let rendered = paragraphs
        .into_iter()
        .map(|text| Rendered {
            significant_len: significant_len(&text),
            text,
            in_item: false,
            in_repeat: false,
            at: None,
        })
        .collect();
    clean_rendered(rendered, title)
}

/// Cleans the paragraphs of a chosen main text; `title` is the page's `<title>`.
pub(super) fn clean_rendered(paragraphs: Vec<Rendered>, title: Option<&str>) -> Vec<String> {
    let title_key = title.map(significant).unwrap_or_default();
    let mut kept: Vec<String> = paragraphs
        .into_iter()
        .filter_map(
            |Rendered {
                 text: p,
                 significant_len: len,
                 ..
             }| {
                // Look for site ads before tidying: cutting a watermark out of an ad line would
                // hide the domain that identifies it. The other rules look after tidying, so that
                // "(本章完)" at the end of a short last line does not take the line with it.
                let raw = Para::with_len(&p, len);
                if is_site_ad_para(&raw) {
                    return None;
                }
                match tidy(&p) {
                    // Most paragraphs come out of tidying unchanged: they keep their facts (the
                    // site-ad rule has just said no to this very text) and their allocation.
                    Cow::Borrowed(tidied) if tidied.len() == p.len() => {
                        (!p.is_empty() && !is_boilerplate_but_ad(&raw)).then_some(p)
                    }
                    tidied => {
                        let tidied = tidied.into_owned();
                        let para = Para::new(&tidied);
                        (!tidied.is_empty() && !is_boilerplate(&para)).then_some(tidied)
                    }
                }
            },
        )
        .collect();
    let leading = kept
        .iter()
        .take_while(|p| is_meta(p) || is_title_line(p, &title_key))
        .count();
    kept.drain(..leading);
    while kept.last().is_some_and(|p| is_meta(p)) {
        kept.pop();
    }
    kept
}

/// A paragraph with what several rules need, worked out once: its
/// [significant length](significant_len) and word count up front, its [folded](fold) form
/// only when a rule asks for it (a long paragraph of Chinese prose usually needs none).
struct Para<'a> {
    text: &'a str,
    len: usize,
    folded: std::cell::OnceCell<String>,
}

impl<'a> Para<'a> {
    fn new(text: &'a str) -> Para<'a> {
        Para::with_len(text, significant_len(text))
    }

    /// A paragraph whose [`significant_len`] is known already.
    fn with_len(text: &'a str, len: usize) -> Para<'a> {
        debug_assert_eq!(len, significant_len(text));
        Para {
            text,
            len,
            folded: std::cell::OnceCell::new(),
        }
    }

    fn folded(&self) -> &str {
        self.folded.get_or_init(|| fold(self.text))
    }

    /// Whether the paragraph has at most `limit` whitespace-separated words (as many as the
    /// folded text: folding maps every character to a non-empty run of characters that are
    /// whitespace exactly when it is, checked by a test). A paragraph with fewer whitespace
    /// characters than `limit` is settled by two counts, without splitting it into words.
    fn words_at_most(&self, limit: usize) -> bool {
        let whitespace = self.text.chars().count() - self.len;
        whitespace < limit || self.text.split_whitespace().count() <= limit
    }
}

/// Cuts watermarks, a leading label and a trailing end-of-chapter marker out of a paragraph.
/// Borrows when no watermark was cut (the other cuts only shorten the text).
fn tidy(p: &str) -> Cow<'_, str> {
    match strip_watermarks(p) {
        Cow::Borrowed(p) => Cow::Borrowed(tidy_ends(p)),
        Cow::Owned(p) => Cow::Owned(tidy_ends(&p).to_owned()),
    }
}

/// The leading-label and trailing-marker part of [`tidy`].
fn tidy_ends(p: &str) -> &str {
    let mut p = p;
    for label in LEADING_LABELS {
        if let Some(rest) = p.strip_prefix(label) {
            p = rest;
            break;
        }
    }
    for marker in TRAILING_MARKERS {
        if let Some(rest) = p.trim_end().strip_suffix(marker) {
            p = rest;
            break;
        }
    }
    p.trim()
}

/// Whether a tidied paragraph is boilerplate. Its length is counted once (counting it in every
/// rule was a good part of the extraction time of a chapter), and it is folded at most once.
fn is_boilerplate(p: &Para<'_>) -> bool {
    is_site_ad_para(p) || is_boilerplate_but_ad(p)
}

/// [`is_boilerplate`] without the site-ad rule, for a paragraph that rule has already passed.
fn is_boilerplate_but_ad(p: &Para<'_>) -> bool {
    is_marker_para(p) || is_caption_para(p) || opens_with_note_or_disclaimer(p)
}

/// [`is_caption_para`] on a bare paragraph.
#[cfg(test)]
fn is_caption(p: &str) -> bool {
    is_caption_para(&Para::new(p))
}

/// A short image caption: it starts with "图为" / "图：", or ends with a bracketed photo
/// credit ("（受访者供图）", "（记者 王某 摄）").
fn is_caption_para(p: &Para<'_>) -> bool {
    if p.len > CAPTION_MAX_CHARS {
        return false;
    }
    let folded = p.folded().trim();
    if ["图为", "圖為", "图:", "圖:", "图片:", "圖片:"]
        .iter()
        .any(|o| folded.starts_with(o))
    {
        return true;
    }
    let Some(inner) = folded.strip_suffix(')') else {
        return false;
    };
    let credit = inner.rsplit('(').next().unwrap_or("");
    credit.len() < inner.len() && PHOTO_CREDITS.iter().any(|c| credit.contains(c))
}

/// [`is_site_ad_para`] on a bare paragraph.
#[cfg(test)]
fn is_site_ad(p: &str) -> bool {
    is_site_ad_para(&Para::new(p))
}

/// A short paragraph naming a domain in promotion vocabulary.
fn is_site_ad_para(p: &Para<'_>) -> bool {
    // A domain needs a dot, and only `.` and the full-width `．` fold to one.
    if !(p.text.as_bytes().contains(&b'.') || p.text.contains('．')) || p.len > AD_MAX_CHARS {
        return false;
    }
    let folded = p.folded();
    has_domain(folded) && AD_PHRASE_SEARCH.is_match(folded)
}

/// [`is_marker_para`] on a bare paragraph.
#[cfg(test)]
fn is_marker(p: &str) -> bool {
    is_marker_para(&Para::new(p))
}

/// A short paragraph of page furniture.
fn is_marker_para(p: &Para<'_>) -> bool {
    if p.len > MARKER_MAX_CHARS && !p.words_at_most(MARKER_MAX_WORDS) {
        return false;
    }
    // Only `v`, `V` and their full-width forms fold to a `v` (checked by a test): without one
    // the paragraph cannot hold "advertisement", and a long one need not be folded for it.
    if has_v(p.text) && p.words_at_most(4) && p.folded().contains("advertisement") {
        return true;
    }
    // CJK phrases need a short paragraph; English ones a short paragraph in words (an English
    // paragraph of 40 words has far more than 60 characters).
    let short_cjk = p.len <= MARKER_MAX_CHARS;
    if !(short_cjk || p.words_at_most(MARKER_MAX_WORDS) && folds_to_ascii(p.text)) {
        return false;
    }
    let folded = p.folded();
    MARKER_PHRASE_SEARCH.is_match(folded)
        || MARKER_PAIR_SEARCH.is_match(folded)
            && MARKER_PAIRS
                .iter()
                .any(|(a, bs)| folded.contains(a) && bs.iter().any(|b| folded.contains(b)))
}

/// Whether `s` holds `v`, `V`, `ｖ` or `Ｖ`: four `memchr` searches, much faster than one walk
/// over the characters or bytes.
fn has_v(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.contains(&b'v') || bytes.contains(&b'V') || s.contains('ｖ') || s.contains('Ｖ')
}

/// Whether [`fold`] turns `s` into ASCII: the characters that fold to ASCII are ASCII, the
/// full-width forms, the ideographic space and the Kelvin sign (checked by a test). A Chinese
/// paragraph is told from its first ideograph, without folding it.
fn folds_to_ascii(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii() || is_fullwidth_ascii(c) || c == '\u{3000}' || c == '\u{212A}')
}

/// Matches any of [`AD_PHRASES`] in one pass over the folded text.
static AD_PHRASE_SEARCH: LazyLock<AhoCorasick> = LazyLock::new(|| phrase_search(AD_PHRASES));
/// Matches any of [`MARKER_PHRASES`] in one pass over the folded text.
static MARKER_PHRASE_SEARCH: LazyLock<AhoCorasick> =
    LazyLock::new(|| phrase_search(MARKER_PHRASES));

/// Matches the first phrase of any of [`MARKER_PAIRS`]: most paragraphs have none, and need
/// no search for each pair.
static MARKER_PAIR_SEARCH: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let firsts: Vec<&str> = MARKER_PAIRS.iter().map(|(a, _)| *a).collect();
    phrase_search(&firsts)
});

fn phrase_search(phrases: &[&str]) -> AhoCorasick {
    AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::DFA))
        .build(phrases)
        .expect("fixed phrase lists build")
}

/// A short byline, source, editor or date line.
fn is_meta(p: &str) -> bool {
    if significant_len(p) > META_MAX_CHARS {
        return false;
    }
    let folded = fold(p);
    let labels = META_LABELS.iter().filter(|l| folded.contains(*l)).count();
    labels >= 2 || labels == 1 && has_date_or_time(p) || opens_with_credit(&folded)
}

/// Whether folded text opens (after any brackets) with a credit label and a colon.
fn opens_with_credit(folded: &str) -> bool {
    let start = folded.trim_start_matches(|c: char| c.is_whitespace() || "([【〔".contains(c));
    CREDIT_OPENINGS.iter().any(|label| {
        start
            .strip_prefix(label)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })
}

/// [`opens_with_note_or_disclaimer`]'s disclaimer rule on a bare paragraph.
#[cfg(test)]
fn is_disclaimer(p: &str) -> bool {
    let p = Para::new(p);
    p.len <= DISCLAIMER_MAX_CHARS && opens_with(p.text, DISCLAIMER_OPENINGS)
}

/// An author note ("作者有话要说：…", any length) or a disclaimer of at most
/// [`DISCLAIMER_MAX_CHARS`] ("声明：…"), by their opening words.
fn opens_with_note_or_disclaimer(p: &Para<'_>) -> bool {
    let head = Head::of(p.text);
    head.starts_with_any(AUTHOR_NOTE_OPENINGS)
        || p.len <= DISCLAIMER_MAX_CHARS && head.starts_with_any(DISCLAIMER_OPENINGS)
}

/// Whether the paragraph is contained in the page title (a heading repeated in the body).
fn is_title_line(p: &str, title_key: &str) -> bool {
    let key = significant(p);
    key.chars().count() >= 2 && title_key.contains(&key)
}

/// Whether the paragraph starts with one of `openings`, ignoring case and leading brackets.
#[cfg(test)]
fn opens_with(p: &str, openings: &[&str]) -> bool {
    Head::of(p).starts_with_any(openings)
}

/// Openings are compared with at most this many characters of a paragraph's start; no
/// opening is longer (checked by a test).
const HEAD_CHARS: usize = 16;

/// The lower case of the start of a paragraph, after spacing and opening brackets: what
/// [`AUTHOR_NOTE_OPENINGS`] and [`DISCLAIMER_OPENINGS`] are compared with.
struct Head {
    /// One character's lower case has at most three characters.
    chars: [char; HEAD_CHARS + 2],
    len: usize,
}

impl Head {
    fn of(p: &str) -> Head {
        let start = p.trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, '【' | '[' | '(' | '（' | '〔' | '*' | '#')
        });
        // Every character lower-cases to at least one, so the first `n` characters of the
        // lower case come from the first `n` of the text: lower-casing [`HEAD_CHARS`] of
        // them is enough (and cheap on a long paragraph).
        let mut head = Head {
            chars: ['\0'; HEAD_CHARS + 2],
            len: 0,
        };
        for c in start.chars() {
            if head.len >= HEAD_CHARS {
                break;
            }
            if c.is_ascii() {
                head.push(c.to_ascii_lowercase());
            } else if is_caseless(c) {
                head.push(c);
            } else {
                c.to_lowercase().for_each(|l| head.push(l));
            }
        }
        head
    }

    fn push(&mut self, c: char) {
        self.chars[self.len] = c;
        self.len += 1;
    }

    fn starts_with_any(&self, openings: &[&str]) -> bool {
        let head = &self.chars[..self.len];
        openings.iter().any(|o| {
            let mut head = head.iter();
            o.chars().all(|c| head.next() == Some(&c))
        })
    }
}

/// Removes runs of full-width characters that spell a domain (`ｗｗｗ．ｘｘ．ｃｏｍ`), with the
/// site name that precedes such a run when one stands there on its own (`ｕｕ看书　ｗｗｗ．…`).
fn strip_watermarks(p: &str) -> Cow<'_, str> {
    // A run is cut only when it spells a domain, which needs a dot, and the only dot among the
    // full-width address characters is `．`. Chinese prose is full of full-width punctuation
    // (`，！？：`), but rarely of `．`.
    if !p.contains('．') {
        return Cow::Borrowed(p);
    }
    let mut out = String::with_capacity(p.len());
    let mut run = String::new();
    let mut removed = false;
    let flush = |run: &mut String, out: &mut String| {
        if run.is_empty() {
            return false;
        }
        let domain = has_domain(&fold(run));
        if domain {
            drop_site_name(out);
        } else {
            out.push_str(run);
        }
        run.clear();
        domain
    };
    for c in p.chars() {
        if is_fullwidth_address_char(c) {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            removed = flush(&mut run, &mut out);
        }
        // Spacing that only separated the watermark from the text goes with it.
        if removed && c.is_whitespace() {
            continue;
        }
        removed = false;
        out.push(c);
    }
    flush(&mut run, &mut out);
    Cow::Owned(out)
}

/// Longest site name removed in front of a watermark.
const SITE_NAME_MAX_CHARS: usize = 6;

/// If `out` ends with a short site name and spacing (`…。ｕｕ看书　`), removes them. A name is
/// at most [`SITE_NAME_MAX_CHARS`], starts after punctuation, spacing or the start of the
/// paragraph, and looks like one: it has Latin letters or digits, or a character or word
/// sites name themselves with (书, 网, 阁, 小说, 文学).
fn drop_site_name(out: &mut String) {
    let trimmed = out.trim_end();
    if trimmed.len() == out.len() {
        return;
    }
    let name_start = trimmed
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || is_punctuation(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &trimmed[name_start..];
    let len = name.chars().count();
    let looks_like_site = name
        .chars()
        .any(|c| c.is_ascii_alphanumeric() || is_fullwidth_ascii(c) || "书書网網阁閣".contains(c))
        || ["小说", "小說", "文学", "文學"]
            .iter()
            .any(|w| name.contains(w));
    if (1..=SITE_NAME_MAX_CHARS).contains(&len) && looks_like_site {
        out.truncate(name_start);
    }
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || "。，、；：？！…—「」『』“”‘’（）《》〈〉【】".contains(c)
}

/// Full-width letters, digits and the `．－／：` of a web address (not `，` and friends, which
/// end a watermark).
fn is_fullwidth_address_char(c: char) -> bool {
    halfwidth(c).is_some_and(|a| a.is_ascii_alphanumeric() || ".-/:".contains(a))
}

fn is_fullwidth_ascii(c: char) -> bool {
    halfwidth(c).is_some()
}

/// The ASCII character a full-width form (U+FF01–U+FF5E) stands for.
fn halfwidth(c: char) -> Option<char> {
    ('\u{FF01}'..='\u{FF5E}')
        .contains(&c)
        .then(|| char::from_u32(c as u32 - 0xFF01 + 0x21))
        .flatten()
}

/// Full-width ASCII forms to ASCII, the ideographic space to a space, lower case.
fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Runs of characters that fold to themselves (lower-case ASCII, and the caseless CJK
    // range but its ideographic space) are copied whole.
    let mut run = 0;
    for (i, c) in s.char_indices() {
        let unchanged = if c.is_ascii() {
            !c.is_ascii_uppercase()
        } else {
            c != '\u{3000}' && is_caseless(c)
        };
        if unchanged {
            continue;
        }
        out.push_str(&s[run..i]);
        run = i + c.len_utf8();
        let c = match c {
            c if is_fullwidth_ascii(c) => halfwidth(c).unwrap_or(c),
            '\u{3000}' => ' ',
            c => c,
        };
        push_lowercase(&mut out, c);
    }
    out.push_str(&s[run..]);
    out
}

/// Characters from the CJK punctuation block to the end of the CJK Unified Ideographs (kana,
/// Hangul compatibility jamo, CJK compatibility squares included) have no lower-case mapping
/// (checked by a test); most of a Chinese page is in this range, and `char::to_lowercase`
/// searches a table for every character outside ASCII.
const CASELESS_CJK: std::ops::RangeInclusive<char> = '\u{3000}'..='\u{9FFF}';

/// The General Punctuation block (dashes, curly quotes, `…`, `※`) has no lower-case mapping
/// either (checked by a test), and Chinese prose uses it all the time.
const CASELESS_PUNCTUATION: std::ops::RangeInclusive<char> = '\u{2000}'..='\u{206F}';

/// Whether a non-ASCII character is known, without searching the case tables, to be its own
/// lower case.
fn is_caseless(c: char) -> bool {
    CASELESS_CJK.contains(&c) || CASELESS_PUNCTUATION.contains(&c)
}

/// Appends the lower case of `c` (as [`char::to_lowercase`]).
fn push_lowercase(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
    } else if is_caseless(c) {
        out.push(c);
    } else {
        out.extend(c.to_lowercase());
    }
}

/// Whether folded text contains a domain name: dot-separated labels of `[a-z0-9-]` ending in a
/// known top-level domain, with at least one letter before it.
fn has_domain(folded: &str) -> bool {
    folded
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
        .any(|token| {
            let token = token.trim_matches(|c| c == '.' || c == '-');
            // A domain has at least two labels (checked below); most tokens of a Chinese text
            // are empty or dot-free, and need no label vector.
            if !token.contains('.') {
                return false;
            }
            let labels: Vec<&str> = token.split('.').collect();
            let tld = labels.last().copied().unwrap_or("");
            let known_tld = TLDS.contains(&tld)
                || labels.len() >= 3
                    && HOST_PREFIXES.contains(&labels[0])
                    && (2..=6).contains(&tld.len())
                    && tld.chars().all(|c| c.is_ascii_alphabetic());
            labels.len() >= 2
                && labels.iter().all(|l| !l.is_empty())
                && known_tld
                && labels[..labels.len() - 1]
                    .iter()
                    .any(|l| l.chars().any(|c| c.is_ascii_alphabetic()) || l.len() >= 2)
        })
}

/// Whether the text holds a numeric date (`2023-7-10`, `2024/05/13`, `2024年3月`) or a clock
/// time (`08:02`).
fn has_date_or_time(p: &str) -> bool {
    let chars: Vec<char> = fold(p).chars().collect();
    let digits_at = |i: usize| chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = 0;
    while i < chars.len() {
        let n = digits_at(i);
        if n == 0 {
            i += 1;
            continue;
        }
        let next = chars.get(i + n).copied();
        let after = i + n + 1;
        if n == 4
            && matches!(next, Some('-' | '/' | '.' | '年'))
            && after < chars.len()
            && (1..=2).contains(&digits_at(after))
        {
            return true;
        }
        if (1..=2).contains(&n) && next == Some(':') && after < chars.len() && digits_at(after) == 2
        {
            return true;
        }
        i += n;
    }
    false
}

fn significant(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The number of non-whitespace characters of `s` (as `char::is_whitespace`), counted from
/// the UTF-8 bytes in a branch-free loop that the compiler vectorizes (about three times as
/// fast as decoding every character): every page's text is counted several times. Checked
/// against the character-by-character count for every character by a test.
pub(super) fn significant_len(s: &str) -> usize {
    let b = s.as_bytes();
    let n = b.len();
    // Every byte is looked at with the two after it; the last two bytes, which start no
    // three-byte character, are done apart.
    let main = n.saturating_sub(2);
    let mut total = 0;
    if main > 0 {
        let (x, y, z) = (&b[..main], &b[1..=main], &b[2..main + 2]);
        // Byte-wide counters over chunks of at most 255 bytes let the loop run on wide lanes.
        let mut start = 0;
        while start < main {
            let end = (start + 255).min(main);
            let mut chunk: u8 = 0;
            for i in start..end {
                chunk = chunk.wrapping_add(u8::from(starts_significant(x[i], y[i], z[i])));
            }
            total += usize::from(chunk);
            start = end;
        }
    }
    for i in main..n {
        let next = b.get(i + 1).copied().unwrap_or(0);
        total += usize::from(starts_significant(b[i], next, 0));
    }
    total
}

/// Whether the byte `x`, followed by `y` and `z`, starts a character that is not whitespace.
#[inline(always)]
fn starts_significant(x: u8, y: u8, z: u8) -> bool {
    // Not a continuation byte (`10xxxxxx`).
    let starts = (x as i8) >= -0x40;
    starts & !starts_whitespace(x, y, z)
}

/// Whether the byte `x`, followed by `y` and `z`, starts a whitespace character.
#[inline(always)]
fn starts_whitespace(x: u8, y: u8, z: u8) -> bool {
    // Tab, line feed, vertical tab, form feed, carriage return, space.
    let ascii = (x == b' ') | (x.wrapping_sub(0x09) < 5);
    // U+0085, U+00A0.
    let two = (x == 0xC2) & ((y == 0x85) | (y == 0xA0));
    // U+1680; U+2000–U+200A, U+2028, U+2029, U+202F; U+205F; U+3000.
    let ogham = (x == 0xE1) & (y == 0x9A) & (z == 0x80);
    let general = (x == 0xE2)
        & (((y == 0x80) & ((z <= 0x8A) | (z == 0xA8) | (z == 0xA9) | (z == 0xAF)))
            | ((y == 0x81) & (z == 0x9F)));
    let ideographic = (x == 0xE3) & (y == 0x80) & (z == 0x80);
    ascii | two | ogham | general | ideographic
}

/// The byte offset of the first whitespace character of `s` (as `s.find(char::is_whitespace)`),
/// looked for 32 bytes at a time with the branch-free test of [`significant_len`]: rendering
/// looks for the end of every word, and Chinese text has few, long words.
pub(super) fn find_whitespace(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let n = b.len();
    let main = n.saturating_sub(2);
    if main > 0 {
        let (x, y, z) = (&b[..main], &b[1..=main], &b[2..main + 2]);
        let mut start = 0;
        while start < main {
            let end = (start + 32).min(main);
            let mut any = false;
            for i in start..end {
                any |= starts_whitespace(x[i], y[i], z[i]);
            }
            if any {
                return (start..end).find(|&i| starts_whitespace(x[i], y[i], z[i]));
            }
            start = end;
        }
    }
    (main..n).find(|&i| starts_whitespace(b[i], b.get(i + 1).copied().unwrap_or(0), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cleaned(paragraphs: &[&str], title: &str) -> Vec<String> {
        clean(
            paragraphs.iter().map(|p| (*p).to_owned()).collect(),
            Some(title),
        )
    }

    #[test]
    fn site_ads_need_a_domain_and_promotion_words() {
        for ad in [
            "天才一秒记住本站地址：[笔趣阁] https://www.biqugexx.net 最快更新！无广告！",
            "请记住本书首发域名：biqugexx.net。笔趣阁手机版阅读网址：m.biqugexx.net",
            "顶点小说 ２３ＵＳ．ＣＯＭ更新最快",
            "請記住本站域名：xstt.tw　手機版閱讀網址：m.xstt.tw",
            "最新章节请访问 www.uukanshu.net",
            "This chapter upload first at NovelBinLoft.com",
        ] {
            assert!(is_site_ad(ad), "{ad}");
        }
        for prose in [
            "他又试着打开公司的官网，浏览器卡了半天，最后只跳出一行灰色的小字：无法访问此网站，www.lanhai-pay.com 的响应时间过长。",
            "记住，线上出了事，先止血，再查因，最后才是追责。",
            "他在浏览器里输入了内部监控平台的网址，页面转了好几圈才打开。",
            "The cure costs 3.5 silver, e.g. a week of wages.",
        ] {
            assert!(!is_site_ad(prose), "{prose}");
        }
    }

    #[test]
    fn markers_are_short_and_prose_mentioning_them_stays() {
        for marker in [
            "本章未完，点击下一页继续阅读。",
            "-->>本章未完，点击下一页继续阅读",
            "(本章完)",
            "点击上方蓝字 关注我们",
            "【推荐】关注微信公众号【书香小栈】，回复书名即可免费阅读全本！",
            "各位书友要是觉得《寒江雪》还不错的话请不要忘记向您QQ群和微博里的朋友推荐哦！",
            "Advertisement",
            "Story continues below advertisement",
            "If you find any errors ( broken links, non-standard content, etc.. ), Please let us know < report chapter > so we can fix it as soon as possible.",
        ] {
            assert!(is_marker(marker), "{marker}");
        }
        for prose in [
            "她把那本书加入书架的时候，窗外正下着雨，楼下的书店老板在门口收拾被风吹倒的招牌，一边收拾一边骂骂咧咧，她听着觉得好笑，便把窗户关上了，又坐回桌前继续读那本没读完的小说。",
            "书友们都在催更。",
            "她的公众号今天更新了，二维码就印在杂志封底。",
            "The advertisement on the side of the bus had been there for years, faded by the sun until the smiling family in it looked like ghosts of themselves.",
        ] {
            assert!(!is_marker(prose), "{prose}");
        }
    }

    #[test]
    fn meta_lines_need_two_labels_or_a_label_and_a_date() {
        assert!(is_meta("本文来源：江城日报　责任编辑：周小川_NN6021"));
        assert!(is_meta("2023-09-14 作者： 观星人"));
        assert!(is_meta("本帖最后由 南山有竹 于 2023-7-10 08:02 编辑"));
        assert!(is_meta("来源：星空下的科普　编辑：小满　审核：老周"));
        assert!(!is_meta("作者从小在海边长大。"));
        assert!(!is_meta("1998年的夏天，我十二岁。"));
    }

    #[test]
    fn cleaning_drops_furniture_and_keeps_the_story() {
        let out = cleaned(
            &[
                "第二百一十章 灯塔",
                "2023-09-14 作者： 观星人",
                "“探测器回传的信号又变了。”",
                "舰桥上安静下来，ｕｕ看书　ｗｗｗ．ｕｕｋａｎｓｈｕ．ｃｏｍ只剩下嗡嗡声。",
                "作者有话要说：感谢投出地雷的小天使！",
                "林宛点点头。(本章完)",
                "声明：转载此文是出于传递更多信息之目的。",
                "来源：星空下的科普　编辑：小满",
            ],
            "第二百一十章 灯塔-深空回声-69书吧",
        );
        assert_eq!(
            out,
            [
                "“探测器回传的信号又变了。”",
                "舰桥上安静下来，只剩下嗡嗡声。",
                "林宛点点头。"
            ]
        );
    }

    #[test]
    fn watermarks_go_with_their_site_name_but_not_with_prose() {
        assert_eq!(
            strip_watermarks("交與陸家莊。ｕｕ看書　ｗｗｗ．ｕｕｋａｎｓｈｕ．ｃｏｍ他不知道"),
            "交與陸家莊。他不知道"
        );
        assert_eq!(
            strip_watermarks("他看了一眼　ｗｗｗ．ｘｘｓｗ．ｃｏｍ，没说话。"),
            "他看了一眼　，没说话。"
        );
        assert_eq!(
            strip_watermarks("他说道，ｗｗｗ．ｘｘｓｗ．ｃｏｍ这件事"),
            "他说道，这件事"
        );
        // Full-width text that is not a domain stays.
        assert_eq!(strip_watermarks("ＡＢＣ三个字母"), "ＡＢＣ三个字母");
    }

    #[test]
    fn more_ad_and_meta_lines() {
        assert!(is_site_ad("笔趣阁 www.xbqg.so，最快更新万剑归宗最新章节！"));
        assert!(is_marker("本书首发来自17K小说网，第一时间看正版内容！"));
        assert!(!is_marker("他第一次进入首发阵容，激动得一夜没睡。"));
        assert!(is_meta("Translator: Rain  Editor: Cloud"));
        assert!(!is_meta("The editor: a tired man with ink on his cuffs."));
    }

    #[test]
    fn captions_credits_and_bracketed_site_lines() {
        assert!(is_caption(
            "11月6日，支教老师在给孩子们上美术课。（受访者供图）"
        ));
        assert!(is_caption("图为游客在景区参观。"));
        assert!(is_caption("市民在公园赏花。（记者 王某 摄）"));
        assert!(!is_caption("他说（这句话是后来才想起来的）。"));
        assert!(!is_caption("图书馆里很安静。"));
        assert!(is_meta("（责编：王小川、陈静）"));
        assert!(is_meta("责任编辑：李文"));
        assert!(!is_meta("编辑部的灯还亮着。"));
        assert!(is_marker("【手打小说网 提供更新最快的小说】"));
        assert!(is_disclaimer(
            "Disclaimer: The characters and town are my own invention."
        ));
    }

    #[test]
    fn a_title_line_is_dropped_only_at_the_start() {
        let out = cleaned(&["灯塔", "正文第一段。", "灯塔"], "第二百一十章 灯塔");
        assert_eq!(out, ["正文第一段。", "灯塔"]);
    }

    #[test]
    fn the_caseless_cjk_range_has_no_lower_case_mapping() {
        for c in CASELESS_CJK {
            assert!(
                c.to_lowercase().eq(std::iter::once(c)),
                "U+{:04X} has a lower case",
                c as u32
            );
        }
        let mixed = "ＡＢＣ　Straße İstanbul ΣΑΣ 第一章 ｗｗｗ．ＸＸ．ＣＯＭ Kelvin \u{212A}";
        let expected: String = mixed
            .chars()
            .map(|c| match c {
                c if is_fullwidth_ascii(c) => halfwidth(c).unwrap(),
                '\u{3000}' => ' ',
                c => c,
            })
            .flat_map(char::to_lowercase)
            .collect();
        assert_eq!(fold(mixed), expected);
        assert!(opens_with("【DISCLAIMER: none", DISCLAIMER_OPENINGS));
        assert!(opens_with("  作者有话要说：谢谢", AUTHOR_NOTE_OPENINGS));
        assert!(!opens_with("他说声明：无", DISCLAIMER_OPENINGS));
    }

    #[test]
    fn domains_are_recognised() {
        assert!(has_domain("www.biqugexx.net"));
        assert!(has_domain(&fold("２３ＵＳ．ＣＯＭ")));
        assert!(has_domain("see m.xstt.tw now"));
        assert!(!has_domain("u.s. e.g. 3.5 no.1 mr.smith"));
        assert!(has_date_or_time("更新：2024-02-03 12:00"));
        assert!(has_date_or_time("2023年10月"));
        assert!(!has_date_or_time("第3章 12345"));
    }

    /// Every character, one per string, for the rules that read the UTF-8 bytes or skip a fold
    /// on the strength of what folding can produce.
    fn every_char() -> impl Iterator<Item = char> {
        (0..=0x10FFFF).filter_map(char::from_u32)
    }

    #[test]
    fn the_byte_count_of_significant_characters_is_the_character_count() {
        let slow = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
        for c in every_char() {
            let s = format!("a{c}b{c}");
            assert_eq!(significant_len(&s), slow(&s), "U+{:04X}", c as u32);
        }
        for s in [
            "",
            " \t\n\u{b}\u{c}\r\u{1c}\u{85}\u{a0}\u{1680}\u{2000}\u{200a}\u{200b}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}",
            "　　他说：“走吧。” Ｈｅ ｓａｉｄ, 🙂 ok\u{3001}\u{2e80}",
        ] {
            assert_eq!(significant_len(s), slow(s), "{s:?}");
        }
    }

    #[test]
    fn the_byte_search_for_whitespace_finds_what_the_character_search_finds() {
        for c in every_char() {
            for s in [format!("{c}"), format!("ab{c}cd"), format!("天{c}")] {
                assert_eq!(
                    find_whitespace(&s),
                    s.find(char::is_whitespace),
                    "U+{:04X}",
                    c as u32
                );
            }
        }
        let long = "夜色如墨，少年推开了木门。".repeat(20);
        for space in [" ", "\u{3000}", "\u{a0}", "\u{2009}", "\n"] {
            for at in [0, 1, 29, 30, 31, 32, 33, 63, 64, long.len()] {
                if !long.is_char_boundary(at) {
                    continue;
                }
                let s = format!("{}{space}{}", &long[..at], &long[at..]);
                assert_eq!(find_whitespace(&s), Some(at), "{space:?} at {at}");
            }
        }
        assert_eq!(find_whitespace(&long), None);
        assert_eq!(find_whitespace(""), None);
    }

    #[test]
    fn folding_keeps_words_and_only_the_expected_characters_fold_to_ascii_or_v() {
        for c in every_char() {
            let folded = fold(&c.to_string());
            assert!(!folded.is_empty());
            // Whitespace stays whitespace and nothing else becomes it, so word counts agree.
            assert!(
                folded
                    .chars()
                    .all(|f| f.is_whitespace() == c.is_whitespace()),
                "U+{:04X}",
                c as u32
            );
            assert_eq!(
                folded.is_ascii(),
                folds_to_ascii(&c.to_string()),
                "U+{:04X}",
                c as u32
            );
            if folded.contains('v') {
                assert!(['v', 'V', 'ｖ', 'Ｖ'].contains(&c), "U+{:04X}", c as u32);
            }
            assert_eq!(
                has_v(&format!("a{c}b")),
                ['v', 'V', 'ｖ', 'Ｖ'].contains(&c),
                "U+{:04X}",
                c as u32
            );
        }
    }

    #[test]
    fn the_fast_fold_folds_as_character_by_character() {
        let slow = |s: &str| {
            let mut out = String::new();
            for c in s.chars() {
                let c = match c {
                    c if is_fullwidth_ascii(c) => halfwidth(c).unwrap(),
                    '\u{3000}' => ' ',
                    c => c,
                };
                out.extend(c.to_lowercase());
            }
            out
        };
        let all: String = every_char().collect();
        assert_eq!(fold(&all), slow(&all));
        for s in [
            "",
            "ABC",
            "第一章　风起，ＷＷＷ．ＸＸ．ＣＯＭ",
            "İ\u{212a}ΣΑΣ end",
        ] {
            assert_eq!(fold(s), slow(s), "{s:?}");
        }
    }

    #[test]
    fn no_opening_is_longer_than_the_compared_head() {
        for o in AUTHOR_NOTE_OPENINGS.iter().chain(DISCLAIMER_OPENINGS) {
            assert!(o.chars().count() <= HEAD_CHARS, "{o}");
            assert_eq!(*o, o.to_lowercase(), "{o} is lower case");
        }
    }

    #[test]
    fn general_punctuation_has_no_lower_case_mapping() {
        for c in CASELESS_PUNCTUATION {
            assert!(
                c.to_lowercase().eq(std::iter::once(c)),
                "U+{:04X} has a lower case",
                c as u32
            );
        }
    }
}
