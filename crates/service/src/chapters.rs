//! Chapters of a work, found from the headings of its plain text.
//!
//! Rights holders deliver whole novels as one file, while pirate sites publish them a chapter
//! per page. Knowing where each chapter of a work starts and ends lets a match be reported as
//! "chapters 12–15 of 星辰旅人" instead of a byte offset, and lets a caller fingerprint or show a
//! chapter on its own.
//!
//! A heading is recognised only as a *whole line*: `第十二章 雨夜来客`, `第12章`, `第一百零三回`,
//! `第三节`, `Chapter 3: Title`, `CHAPTER III`, `序章`, `楔子`, `番外一 …` and the like, at most
//! [`MAX_HEADING_CHARS`] characters, not ending like a sentence (`。！？` …). Prose that merely
//! names a chapter (`他读完了第一章，便睡了。`) is therefore never taken for a heading, which a
//! search for `第.+章` anywhere in a line would do on almost every novel.
//!
//! Volume headings (`第一卷 风起`, `卷一`, `第二部`) do not make chapters of their own: a volume
//! without its chapters is not a unit anyone publishes. They name the chapters that follow
//! (`第一卷 风起 第一章 初遇`), and the first chapter after one starts at the volume line, so the
//! volume heading is not left dangling at the end of the previous chapter.

use serde::{Deserialize, Serialize};

/// One chapter of a work: a title and the byte range of the work text it covers.
///
/// The chapters of a work tile its text: in order, without gaps or overlaps, the first starting
/// at 0 and the last ending at the text's length, so `&text[start..end]` is always the whole
/// chapter, heading included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chapter {
    /// The chapter's title: its heading line (with the volume it belongs to, if any), or the
    /// title the work file's structure gives it. Empty for text before the first heading.
    pub title: String,
    /// Byte offset of the chapter's first byte in the work text (a char boundary).
    pub start: usize,
    /// Byte offset just past the chapter's last byte (a char boundary).
    pub end: usize,
}

/// Longest line, in characters, still read as a heading. Headings with their titles are short;
/// a longer line is prose even when it starts like a heading.
pub const MAX_HEADING_CHARS: usize = 50;

/// Longest chapter or volume number, in characters (`一百二十三`, `1024`).
const MAX_NUMBER_CHARS: usize = 12;

/// Headings that name no number: prologues, epilogues, afterwords, side stories. Longer words
/// first, so `序章` is not read as `序` followed by a title.
const SPECIAL_HEADINGS: &[&str] = &[
    "番外篇",
    "序章",
    "序言",
    "序幕",
    "楔子",
    "引子",
    "引言",
    "前言",
    "尾声",
    "尾聲",
    "终章",
    "終章",
    "后记",
    "後記",
    "番外",
    "序",
];

/// The same for English works, compared without case.
const ENGLISH_SPECIAL_HEADINGS: &[&str] = &["prologue", "epilogue"];

/// Finds the chapters of a plain text by its heading lines.
///
/// Returns the chapters in text order, tiling the text (see [`Chapter`]). Text before the first
/// heading becomes a first chapter with an empty title when it holds anything but whitespace (a
/// book's title page, a foreword); otherwise the first chapter starts at 0. Fewer than two
/// headings give an empty `Vec`: such a work is one unit, and callers read empty as "no
/// chapters" rather than as one chapter that is the whole work.
pub fn detect_chapters(text: &str) -> Vec<Chapter> {
    let mut found: Vec<(String, usize)> = Vec::new();
    // The volume the chapters now being read belong to.
    let mut volume: Option<String> = None;
    // Where a volume heading line starts that no chapter has taken in yet.
    let mut volume_start: Option<usize> = None;
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line_start = offset;
        offset += raw.len();
        let line = clean_line(raw);
        let Some(heading) = classify(line) else {
            continue;
        };
        let line = normalize_spaces(line);
        match heading {
            Heading::Volume => {
                volume = Some(match (volume_start, volume.take()) {
                    // Two volume lines in a row (`第一部` then `第一卷`): one name.
                    (Some(_), Some(previous)) => format!("{previous} {line}"),
                    _ => line,
                });
                volume_start.get_or_insert(line_start);
            }
            Heading::Chapter { numbered } => {
                let start = volume_start.take();
                let title = match &volume {
                    Some(name) if start.is_some() || numbered => format!("{name} {line}"),
                    _ => line,
                };
                found.push((title, start.unwrap_or(line_start)));
            }
            Heading::VolumeAndChapter { volume: name } => {
                volume = Some(normalize_spaces(name));
                found.push((line, volume_start.take().unwrap_or(line_start)));
            }
        }
    }
    if found.len() < 2 {
        return Vec::new();
    }
    let mut chapters = Vec::with_capacity(found.len() + 1);
    let first_start = found[0].1;
    // A lone short line before the first heading is the book's title, not front matter.
    let before: Vec<&str> = text[..first_start]
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let only_a_title = before.len() == 1 && before[0].chars().count() <= MAX_HEADING_CHARS;
    if !only_a_title && text[..first_start].chars().any(|c| !is_space(c)) {
        chapters.push(Chapter {
            title: String::new(),
            start: 0,
            end: first_start,
        });
    } else {
        found[0].1 = 0;
    }
    let ends: Vec<usize> = found
        .iter()
        .skip(1)
        .map(|&(_, start)| start)
        .chain([text.len()])
        .collect();
    for ((title, start), end) in found.into_iter().zip(ends) {
        chapters.push(Chapter { title, start, end });
    }
    chapters
}

/// What a heading line announces.
#[derive(Debug, PartialEq, Eq)]
enum Heading<'a> {
    /// A volume (`第一卷 风起`), naming the chapters after it.
    Volume,
    /// A chapter; `numbered` for `第N章` and `Chapter N`, not for `序章`, `后记` and the like,
    /// which belong to the whole book rather than to the volume before them.
    Chapter { numbered: bool },
    /// A volume and its first chapter on one line (`第一卷 风起 第一章 初遇`); `volume` is the
    /// volume's part.
    VolumeAndChapter { volume: &'a str },
}

/// The line without its line break, surrounding whitespace (ideographic spaces included) and
/// a byte-order mark.
fn clean_line(raw: &str) -> &str {
    raw.trim_matches(|c: char| is_space(c) || c == '\u{FEFF}')
}

fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// Whether a heading's number is followed by its title: whitespace or the punctuation headings
/// use between number and title (`第一章：`, `Chapter 3 - `, `第一章·`).
fn is_separator(c: char) -> bool {
    is_space(c) || ":：、.．·•-—–_|/【（(「《〈[".contains(c)
}

/// Punctuation that ends a sentence (or a clause, so that a line cut in two is not a heading
/// either). A heading line never ends with one.
fn ends_sentence(c: char) -> bool {
    "。！？!?…；;，,、.．".contains(c)
}

/// Punctuation inside a sentence: a title glued to its number (`第一章风起`) holds none, while
/// prose starting with a chapter reference (`第一章读完了，他便睡了`) does.
fn is_sentence_punctuation(c: char) -> bool {
    ends_sentence(c) || "：:".contains(c)
}

/// What a line announces, if it is a heading.
fn classify(line: &str) -> Option<Heading<'_>> {
    if line.is_empty() || line.chars().count() > MAX_HEADING_CHARS {
        return None;
    }
    let last = line
        .trim_end_matches(|c: char| "”’」』）)\"'》】".contains(c))
        .chars()
        .next_back()?;
    if ends_sentence(last) {
        return None;
    }
    if let Some(numbered) = chapter_heading(line) {
        return Some(Heading::Chapter { numbered });
    }
    let rest = volume_heading(line)?;
    let offset = line.len() - rest.len();
    for (i, _) in rest.char_indices() {
        let after_separator = i == 0 || rest[..i].ends_with(is_separator);
        if after_separator && chapter_heading(&rest[i..]).is_some() {
            let volume = line[..offset + i].trim_end_matches(is_separator);
            return Some(Heading::VolumeAndChapter { volume });
        }
    }
    Some(Heading::Volume)
}

/// Whether `line` is a chapter heading, and if so whether it is numbered.
fn chapter_heading(line: &str) -> Option<bool> {
    if let Some(rest) = numbered_heading(line, "章回节節话話") {
        return title_follows(rest, true).then_some(true);
    }
    if let Some(rest) = english_chapter(line) {
        return title_follows(rest, false).then_some(true);
    }
    for word in SPECIAL_HEADINGS {
        if let Some(rest) = line.strip_prefix(word) {
            // `番外一`, `番外2 重逢`: a side story's number may follow without a space.
            let rest = rest.trim_start_matches(is_numeral);
            if title_follows(rest, false) {
                return Some(false);
            }
        }
    }
    ENGLISH_SPECIAL_HEADINGS
        .iter()
        .any(|word| {
            line.get(..word.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(word))
                && title_follows(&line[word.len()..], false)
        })
        .then_some(false)
}

/// The rest of a volume heading line (`第一卷`, `第二部`, `卷三`) after its number, if it is one.
fn volume_heading(line: &str) -> Option<&str> {
    let rest = match numbered_heading(line, "卷部") {
        // `第三部分` is a part of an essay, not a volume.
        Some(rest) if !rest.starts_with('分') => rest,
        Some(_) => return None,
        None => {
            let number = line.strip_prefix('卷')?;
            let rest = number.trim_start_matches(is_numeral);
            if rest.len() == number.len() {
                return None;
            }
            rest
        }
    };
    title_follows(rest, true).then_some(rest)
}

/// `第` + number + one of `units`, with optional spaces around the number (`第 12 章`); the rest
/// of the line after the unit.
fn numbered_heading<'a>(line: &'a str, units: &str) -> Option<&'a str> {
    let after = line.strip_prefix('第')?.trim_start_matches(is_space);
    let rest = after.trim_start_matches(is_numeral);
    let digits = after.len() - rest.len();
    if digits == 0 || after[..digits].chars().count() > MAX_NUMBER_CHARS {
        return None;
    }
    let rest = rest.trim_start_matches(is_space);
    let unit = rest.chars().next().filter(|&c| units.contains(c))?;
    Some(&rest[unit.len_utf8()..])
}

/// `Chapter` (any case), spaces, then an Arabic or Roman number; the rest of the line after it.
fn english_chapter(line: &str) -> Option<&str> {
    const WORD: &str = "chapter";
    if !line.get(..WORD.len())?.eq_ignore_ascii_case(WORD) {
        return None;
    }
    let after = &line[WORD.len()..];
    let spaced = after.trim_start_matches(is_space);
    if spaced.len() == after.len() {
        return None;
    }
    let arabic = spaced.trim_start_matches(|c: char| c.is_ascii_digit() || is_wide_digit(c));
    let roman = spaced.trim_start_matches(|c: char| "IVXLCDMivxlcdm".contains(c));
    // A Roman number is a word of its own: `Chapter Ice` is not chapter I.
    let rest = [arabic, roman].into_iter().min_by_key(|rest| rest.len())?;
    if rest.len() == spaced.len() || spaced[..spaced.len() - rest.len()].chars().count() > 12 {
        return None;
    }
    Some(rest)
}

/// Whether what follows a heading's number (or word) is an acceptable title: nothing, a title
/// after a separator, or (when `glued` is allowed, for Chinese headings) a title written right
/// after the unit that holds no sentence punctuation.
fn title_follows(rest: &str, glued: bool) -> bool {
    match rest.chars().next() {
        None => true,
        Some(c) if is_separator(c) => true,
        Some(_) => glued && !rest.contains(is_sentence_punctuation),
    }
}

/// Digits of a chapter number: ASCII, full-width, and Chinese numerals.
fn is_numeral(c: char) -> bool {
    c.is_ascii_digit() || is_wide_digit(c) || "零〇一二三四五六七八九十百千万两".contains(c)
}

fn is_wide_digit(c: char) -> bool {
    ('０'..='９').contains(&c)
}

/// Whitespace runs (ideographic spaces included) as one ASCII space, for titles.
fn normalize_spaces(line: &str) -> String {
    line.split(is_space)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROSE: &str =
        "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院子里。";

    /// The chapters' titles, after checking that they tile `text` at char boundaries.
    fn titles(text: &str) -> Vec<String> {
        let chapters = detect_chapters(text);
        assert_tiles(text, &chapters);
        chapters.into_iter().map(|chapter| chapter.title).collect()
    }

    fn assert_tiles(text: &str, chapters: &[Chapter]) {
        if chapters.is_empty() {
            return;
        }
        assert_eq!(chapters[0].start, 0, "{chapters:?}");
        assert_eq!(chapters.last().unwrap().end, text.len(), "{chapters:?}");
        for pair in chapters.windows(2) {
            assert_eq!(pair[0].end, pair[1].start, "{chapters:?}");
        }
        for chapter in chapters {
            assert!(chapter.start < chapter.end, "{chapter:?}");
            assert!(text.is_char_boundary(chapter.start) && text.is_char_boundary(chapter.end));
        }
    }

    fn book(headings: &[&str]) -> String {
        headings
            .iter()
            .map(|heading| format!("{heading}\n{PROSE}\n{PROSE}\n\n"))
            .collect()
    }

    #[test]
    fn chinese_numbered_headings_of_every_kind_are_found() {
        let headings = [
            "第一章",
            "第1章",
            "第12章 雨夜来客",
            "第一百零三回 风起云涌",
            "第三节",
            "第 20 章：归来",
            "第两千零一章",
            "第〇章",
            "第十一章风起",
            "第五十话 重逢",
        ];
        assert_eq!(titles(&book(&headings)), headings);
    }

    #[test]
    fn full_width_digits_count_as_numbers() {
        let headings = ["第１章 初遇", "第２章 别离", "第１２章"];
        assert_eq!(titles(&book(&headings)), headings);
    }

    #[test]
    fn english_headings_with_arabic_or_roman_numbers_are_found() {
        let headings = [
            "Chapter 3",
            "CHAPTER III",
            "Chapter 4: The Rain",
            "chapter iv - Night",
            "Prologue",
        ];
        assert_eq!(titles(&book(&headings)), headings);
        assert!(detect_chapters(&book(&["Chapter Ice", "Chapters 3"])).is_empty());
    }

    #[test]
    fn prologues_epilogues_and_side_stories_are_headings() {
        let headings = [
            "序章",
            "序",
            "楔子 血夜",
            "引子",
            "尾声",
            "后记",
            "番外",
            "番外一 重逢",
            "序：旧梦",
        ];
        assert_eq!(titles(&book(&headings)), headings);
    }

    #[test]
    fn prose_that_names_a_chapter_is_not_a_heading() {
        let text = format!(
            "第一章 雨夜\n{PROSE}\n他读完了第一章，便睡了。\n第二章读完时，天已经亮了。\n\
             第三章写得真好！\n“第四章呢？”\n序章已经写完了。\n\
             第五章 这一行太长了所以它不是标题而是一段正文因为标题从来不会写到这么长还不停下来的地步啊就像这样一直写一直写下去\n"
        );
        assert!(
            detect_chapters(&text).is_empty(),
            "{:?}",
            detect_chapters(&text)
        );
        let with_second = format!("{text}第二章 天明\n{PROSE}\n");
        assert_eq!(titles(&with_second), ["第一章 雨夜", "第二章 天明"]);
    }

    #[test]
    fn fewer_than_two_headings_mean_no_chapters() {
        assert!(detect_chapters("").is_empty());
        assert!(detect_chapters(PROSE).is_empty());
        assert!(detect_chapters(&book(&["第一章"])).is_empty());
        assert!(detect_chapters(&book(&["第一卷 风起", "第一章"])).is_empty());
    }

    #[test]
    fn a_lone_title_line_opens_the_first_chapter() {
        let text = format!("星辰旅人\n\n{}", book(&["第一章", "第二章"]));
        let chapters = detect_chapters(&text);
        assert_tiles(&text, &chapters);
        assert_eq!(chapters.len(), 2);
        assert_eq!(
            (chapters[0].title.as_str(), chapters[0].start),
            ("第一章", 0)
        );
    }

    #[test]
    fn text_before_the_first_heading_is_a_chapter_only_if_it_holds_text() {
        let body = book(&["第一章", "第二章"]);
        let blank = format!(" \n\u{3000}\n{body}");
        let chapters = detect_chapters(&blank);
        assert_tiles(&blank, &chapters);
        assert_eq!(chapters.len(), 2);
        assert_eq!(chapters[0].start, 0);
        assert_eq!(chapters[0].title, "第一章");

        let foreword = format!("星辰旅人\n作者：某某\n\n{body}");
        let chapters = detect_chapters(&foreword);
        assert_tiles(&foreword, &chapters);
        assert_eq!(chapters.len(), 3);
        assert_eq!(chapters[0].title, "");
        assert_eq!(
            &foreword[chapters[0].start..chapters[0].end],
            "星辰旅人\n作者：某某\n\n"
        );
        assert!(foreword[chapters[1].start..].starts_with("第一章\n"));
    }

    #[test]
    fn volumes_name_their_chapters_and_never_stand_alone() {
        let text = book(&[
            "第一卷 风起",
            "第一章 初遇",
            "第二章 别离",
            "卷二",
            "第一章 重逢",
            "第三卷 终局 第一章 决战",
            "第二章 落幕",
            "后记",
        ]);
        assert_eq!(
            titles(&text),
            [
                "第一卷 风起 第一章 初遇",
                "第一卷 风起 第二章 别离",
                "卷二 第一章 重逢",
                "第三卷 终局 第一章 决战",
                "第三卷 终局 第二章 落幕",
                "后记",
            ]
        );
        // The volume line opens the chapter it names instead of ending the one before.
        let chapters = detect_chapters(&text);
        assert!(text[chapters[2].start..].starts_with("卷二\n"));
        assert!(!text[chapters[1].start..chapters[1].end].contains("卷二"));
    }

    #[test]
    fn chapters_tile_the_text_with_byte_offsets_of_each_heading_line() {
        let text = format!(
            "\u{FEFF}第一章 雨夜\r\n{PROSE}\r\n\u{3000}\u{3000}第二章\u{3000}天明\r\n{PROSE}"
        );
        let chapters = detect_chapters(&text);
        assert_tiles(&text, &chapters);
        assert_eq!(
            chapters,
            [
                Chapter {
                    title: "第一章 雨夜".into(),
                    start: 0,
                    end: text.find("\u{3000}\u{3000}第二章").unwrap(),
                },
                Chapter {
                    title: "第二章 天明".into(),
                    start: text.find("\u{3000}\u{3000}第二章").unwrap(),
                    end: text.len(),
                },
            ]
        );
        assert!(text[chapters[1].start..chapters[1].end].ends_with(PROSE));
    }
}
