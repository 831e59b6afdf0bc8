//! Work files in the formats rights holders deliver: plain text (UTF-8, UTF-16 with a BOM, GBK,
//! GB18030, Big5, detected), HTML, Markdown and EPUB (2 and 3). Each becomes the plain text that
//! is fingerprinted, plus a title when the format names one and the work's chapters.
//!
//! HTML goes through the crawler's own decoding and main-text extraction, so a chapter
//! registered as HTML and the same chapter crawled from a pirate site are read alike. Markdown
//! is read with `pulldown-cmark`, keeping the words and dropping the markup. An EPUB is read
//! with `rbook` and each of its documents goes through the same HTML path (see the `epub`
//! submodule).
//!
//! Chapters come from the file's structure when it has one (an EPUB's spine and table of
//! contents); otherwise from the heading lines of the text ([`detect_chapters`]).

mod epub;

use std::path::Path;

use copytrace_crawler::decode::decode_html;
use copytrace_crawler::extract::extract;
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::chapters::detect_chapters;
use crate::error::{Context, Result, ServiceError};
use crate::textfile::{TextFile, decode_text};

/// The formats a work file can be in, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkFormat {
    /// `.txt`, `.text`: plain text.
    Text,
    /// `.html`, `.htm`, `.xhtml`.
    Html,
    /// `.md`, `.markdown`.
    Markdown,
    /// `.epub`: EPUB 2 or 3, without DRM.
    Epub,
}

/// The extensions `library add` reads, for messages and directory walks.
pub const EXTENSIONS: &[&str] = &[
    "txt", "text", "html", "htm", "xhtml", "md", "markdown", "epub",
];

impl WorkFormat {
    /// The format of `path` by its extension (case-insensitive), if it is one of ours.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "text" => WorkFormat::Text,
            "html" | "htm" | "xhtml" => WorkFormat::Html,
            "md" | "markdown" => WorkFormat::Markdown,
            "epub" => WorkFormat::Epub,
            _ => return None,
        })
    }
}

/// Reads a work file in the format its extension names; anything else is refused with the
/// formats that are read.
pub fn read_work_file(path: &Path) -> Result<TextFile> {
    let Some(format) = WorkFormat::of(path) else {
        return Err(ServiceError::invalid(format!(
            "{} is not a work file Copytrace reads: expected plain text (.txt, .text), HTML \
             (.html, .htm, .xhtml), Markdown (.md, .markdown) or EPUB (.epub)",
            path.display()
        )));
    };
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    decode_work(&bytes, format)
        .with_context(|| format!("{} is not usable as a work", path.display()))
}

/// The text, title and chapters of a work file's bytes in `format`.
pub fn decode_work(bytes: &[u8], format: WorkFormat) -> Result<TextFile> {
    match format {
        WorkFormat::Text => decode_text(bytes),
        WorkFormat::Html => {
            let page = html_text(bytes);
            if page.text.trim().is_empty() {
                return Err(ServiceError::invalid("it holds no readable text"));
            }
            Ok(TextFile {
                chapters: detect_chapters(&page.text),
                text: page.text,
                encoding: page.encoding,
                title: page.title,
            })
        }
        WorkFormat::Markdown => {
            let decoded = decode_text(bytes)?;
            let (text, title) = markdown_text(&decoded.text);
            if text.trim().is_empty() {
                return Err(ServiceError::invalid("it holds no readable text"));
            }
            Ok(TextFile {
                chapters: detect_chapters(&text),
                text,
                encoding: decoded.encoding,
                title,
            })
        }
        WorkFormat::Epub => epub::decode_epub(bytes),
    }
}

/// What the HTML path reads from one HTML document.
struct HtmlText {
    /// The main text (empty when the page holds none).
    text: String,
    /// The encoding the bytes were decoded from.
    encoding: &'static str,
    /// Its `<title>`, else its first `<h1>`, if not blank.
    title: Option<String>,
}

/// The main text and title of an HTML document's bytes, read exactly as the crawler reads a
/// pirate page, so a registered chapter and its crawled copy give the same text.
fn html_text(bytes: &[u8]) -> HtmlText {
    let (html, encoding) = decode_html(bytes, None, None);
    let base = url::Url::parse("file:///work.html").expect("a valid URL");
    let extracted = extract(&html, &base);
    HtmlText {
        text: extracted.text,
        encoding,
        title: extracted
            .title
            .map(|title| title.trim().to_owned())
            .filter(|title| !title.is_empty()),
    }
}

/// The words of a Markdown document, one block per line, and its first heading.
fn markdown_text(markdown: &str) -> (String, Option<String>) {
    let mut text = String::with_capacity(markdown.len());
    let mut title: Option<String> = None;
    let mut heading: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Text(words) | Event::Code(words) => {
                text.push_str(&words);
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&words);
                }
            }
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            Event::Start(Tag::Heading { .. }) if title.is_none() => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                if let Some(done) = heading.take() {
                    title = Some(done.trim().to_owned()).filter(|t| !t.is_empty());
                }
                text.push('\n');
            }
            Event::End(
                TagEnd::Paragraph | TagEnd::Item | TagEnd::BlockQuote(_) | TagEnd::CodeBlock,
            ) => text.push('\n'),
            _ => {}
        }
    }
    (text, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str =
        "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院子里。";

    #[test]
    fn formats_are_known_by_extension_whatever_the_case() {
        assert_eq!(
            WorkFormat::of(Path::new("a/第一章.TXT")),
            Some(WorkFormat::Text)
        );
        assert_eq!(WorkFormat::of(Path::new("b.htm")), Some(WorkFormat::Html));
        assert_eq!(
            WorkFormat::of(Path::new("c.Markdown")),
            Some(WorkFormat::Markdown)
        );
        assert_eq!(WorkFormat::of(Path::new("d.pdf")), None);
        assert_eq!(WorkFormat::of(Path::new("README")), None);
    }

    #[test]
    fn html_gives_its_main_text_and_title_without_scripts_or_navigation() {
        let html = format!(
            "<html><head><meta charset=\"gbk\"><title>星辰旅人 第一章</title>\
             <script>var ad = '广告';</script></head><body><nav><a href=\"/\">首页</a></nav>\
             <div id=\"content\"><p>{CHAPTER}</p><p>{CHAPTER}</p></div></body></html>"
        );
        let (bytes, _, _) = encoding_rs::GBK.encode(&html);
        let work = decode_work(&bytes, WorkFormat::Html).unwrap();
        assert_eq!(work.title.as_deref(), Some("星辰旅人 第一章"));
        assert!(work.text.contains(CHAPTER), "{}", work.text);
        assert!(!work.text.contains("广告"), "{}", work.text);
        assert_eq!(work.encoding, "GBK");
    }

    #[test]
    fn markdown_keeps_the_words_and_drops_the_markup() {
        let markdown =
            format!("# 星辰旅人\n\n## 第一章\n\n{CHAPTER}**雨夜**来客。\n\n> {CHAPTER}\n");
        let work = decode_work(markdown.as_bytes(), WorkFormat::Markdown).unwrap();
        assert_eq!(work.title.as_deref(), Some("星辰旅人"));
        assert!(work.text.contains("雨夜来客。"), "{}", work.text);
        assert!(
            !work.text.contains('#') && !work.text.contains('*'),
            "{}",
            work.text
        );
        assert_eq!(work.text.matches(CHAPTER).count(), 2);
    }

    #[test]
    fn utf16_text_with_a_byte_order_mark_is_read() {
        let mut bytes = vec![0xFF, 0xFE];
        for unit in CHAPTER.encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        let work = decode_work(&bytes, WorkFormat::Text).unwrap();
        assert_eq!(work.text, CHAPTER);
        assert_eq!(work.encoding, "UTF-16LE");
    }

    /// A novel of three chapters with a title line before them, as plain text.
    fn three_chapter_novel() -> String {
        format!(
            "星辰旅人\n\n第一章 雨夜来客\n{CHAPTER}\n\n第二章 北方旧事\n{CHAPTER}\n\n\
             第三章 离乡\n{CHAPTER}\n"
        )
    }

    fn chapter_titles(work: &TextFile) -> Vec<&str> {
        work.chapters.iter().map(|c| c.title.as_str()).collect()
    }

    #[test]
    fn gbk_text_gets_its_chapters_from_heading_lines() {
        let novel = three_chapter_novel();
        let (bytes, _, _) = encoding_rs::GBK.encode(&novel);
        let work = decode_work(&bytes, WorkFormat::Text).unwrap();
        assert_eq!(work.text, novel);
        assert_eq!(
            chapter_titles(&work),
            ["第一章 雨夜来客", "第二章 北方旧事", "第三章 离乡"]
        );
        // The title line opens the first chapter rather than being a chapter of its own.
        assert!(work.text[..work.chapters[0].end].starts_with("星辰旅人\n\n第一章 雨夜来客\n"));
        let second = &work.chapters[1];
        assert_eq!(
            &work.text[second.start..second.end],
            format!("第二章 北方旧事\n{CHAPTER}\n\n")
        );
    }

    #[test]
    fn utf16_text_gets_its_chapters_from_heading_lines() {
        let novel = three_chapter_novel();
        let mut bytes = vec![0xFE, 0xFF];
        for unit in novel.encode_utf16() {
            bytes.extend_from_slice(&unit.to_be_bytes());
        }
        let work = decode_work(&bytes, WorkFormat::Text).unwrap();
        assert_eq!(work.encoding, "UTF-16BE");
        assert_eq!(
            chapter_titles(&work),
            ["第一章 雨夜来客", "第二章 北方旧事", "第三章 离乡"]
        );
        assert_eq!(work.chapters.last().unwrap().end, work.text.len());
    }

    #[test]
    fn markdown_headings_make_chapters() {
        let markdown = format!(
            "# 第一章 雨夜来客\n\n{CHAPTER}\n\n# 第二章 北方旧事\n\n{CHAPTER}\n\n\
             # 第三章 离乡\n\n{CHAPTER}\n"
        );
        let work = decode_work(markdown.as_bytes(), WorkFormat::Markdown).unwrap();
        assert_eq!(
            chapter_titles(&work),
            ["第一章 雨夜来客", "第二章 北方旧事", "第三章 离乡"]
        );
        let third = &work.chapters[2];
        assert_eq!(
            &work.text[third.start..third.end],
            format!("第三章 离乡\n{CHAPTER}\n")
        );
    }

    #[test]
    fn html_chapter_headings_make_chapters() {
        let html = format!(
            "<html><head><title>星辰旅人</title></head><body><div id=\"content\">\
             <h2>第一章 雨夜来客</h2><p>{CHAPTER}</p><h2>第二章 北方旧事</h2><p>{CHAPTER}</p>\
             <h2>第三章 离乡</h2><p>{CHAPTER}</p></div></body></html>"
        );
        let work = decode_work(html.as_bytes(), WorkFormat::Html).unwrap();
        assert_eq!(work.title.as_deref(), Some("星辰旅人"));
        assert_eq!(
            chapter_titles(&work),
            ["第一章 雨夜来客", "第二章 北方旧事", "第三章 离乡"]
        );
        assert!(work.text[work.chapters[1].start..].starts_with("第二章 北方旧事\n"));
    }

    #[test]
    fn text_without_headings_has_no_chapters() {
        let work = decode_work(CHAPTER.as_bytes(), WorkFormat::Text).unwrap();
        assert!(work.chapters.is_empty());
    }

    #[test]
    fn epub_is_known_by_its_extension() {
        assert_eq!(
            WorkFormat::of(Path::new("星辰旅人.EPUB")),
            Some(WorkFormat::Epub)
        );
        assert!(EXTENSIONS.contains(&"epub"));
        let refused = read_work_file(Path::new("book.pdf"))
            .unwrap_err()
            .to_string();
        assert!(refused.contains("EPUB (.epub)"), "{refused}");
    }

    #[test]
    fn a_page_without_text_is_refused() {
        let empty = decode_work(
            b"<html><body><script>x()</script></body></html>",
            WorkFormat::Html,
        );
        assert!(empty.unwrap_err().to_string().contains("no readable text"));
    }
}
