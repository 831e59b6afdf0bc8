//! Reading library files: text in UTF-8, UTF-16 with BOM, or a legacy Chinese encoding.

use std::path::Path;

use crate::chapters::{Chapter, detect_chapters};
use crate::error::{Context, Result, ServiceError};

/// A decoded library file.
#[derive(Debug, Clone)]
pub struct TextFile {
    /// Decoded text.
    pub text: String,
    /// Name of the encoding it was decoded from.
    pub encoding: &'static str,
    /// The title the file names (an EPUB's title, an HTML `<title>`, a Markdown heading); plain
    /// text has none, and its first line is used.
    pub title: Option<String>,
    /// The chapters of the text, tiling it (see [`Chapter`]): from the file's structure where it
    /// has one (an EPUB's spine and table of contents), else from heading lines
    /// ([`detect_chapters`]). Empty when the work is one unit.
    pub chapters: Vec<Chapter>,
}

/// Reads and decodes a text file, refusing binary data and text that does not decode cleanly.
pub fn read_text_file(path: &Path) -> Result<TextFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    decode_text(&bytes).with_context(|| format!("{} is not usable as a work", path.display()))
}

/// Decodes bytes of a text file: BOM first, then strict UTF-8, then `chardetng`'s guess (GBK,
/// GB18030, Big5 and the other legacy encodings pirated and published Chinese text comes in).
pub fn decode_text(bytes: &[u8]) -> Result<TextFile> {
    if let Some((encoding, bom_length)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_length..]);
        if had_errors {
            return Err(ServiceError::invalid(format!(
                "it starts with a {} byte-order mark but does not decode as such",
                encoding.name()
            )));
        }
        return finish(text.into_owned(), encoding.name());
    }
    if looks_binary(bytes) {
        return Err(ServiceError::invalid(
            "it looks like a binary file, not text",
        ));
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return finish(text.to_owned(), "UTF-8");
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    let replaced = text.chars().filter(|&c| c == '\u{FFFD}').count();
    if had_errors && replaced * 200 > text.chars().count().max(1) {
        return Err(ServiceError::invalid(format!(
            "it is neither valid UTF-8 nor cleanly decodable as {}",
            encoding.name()
        )));
    }
    finish(text.into_owned(), encoding.name())
}

fn finish(text: String, encoding: &'static str) -> Result<TextFile> {
    if text.trim().is_empty() {
        return Err(ServiceError::invalid("it is empty"));
    }
    let control = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{0C}'))
        .count();
    if control * 100 > text.chars().count() {
        return Err(ServiceError::invalid(
            "it looks like a binary file, not text",
        ));
    }
    Ok(TextFile {
        chapters: detect_chapters(&text),
        text,
        encoding,
        title: None,
    })
}

/// NUL bytes never occur in UTF-8 or GBK text (UTF-16 is recognised by its BOM before this).
fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(64 * 1024).any(|&b| b == 0)
}

/// The title of a work: its first non-empty line, trimmed (at most 200 characters).
pub fn first_line_title(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    line.trim_start_matches('\u{FEFF}')
        .chars()
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbk_text_is_detected_and_decoded() {
        let original = "星辰旅人 第一章 雨夜来客\n夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人。";
        let (bytes, _, _) = encoding_rs::GBK.encode(original);
        let decoded = decode_text(&bytes).unwrap();
        assert_eq!(decoded.text, original);
        assert!(decoded.encoding.starts_with("GB"), "{}", decoded.encoding);
    }

    #[test]
    fn binary_data_is_refused() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10";
        let error = decode_text(png).unwrap_err().to_string();
        assert!(error.contains("binary"), "{error}");
    }

    #[test]
    fn empty_files_are_refused() {
        assert!(decode_text(b"  \n\n").is_err());
    }

    #[test]
    fn the_title_is_the_first_non_empty_line() {
        assert_eq!(first_line_title("\n\n  第一章 雨夜  \n正文"), "第一章 雨夜");
    }
}
