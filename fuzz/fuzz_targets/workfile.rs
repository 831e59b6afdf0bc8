//! Arbitrary bytes → `workfile::decode_work` as plain text, HTML or Markdown (the formats a
//! rights holder's work file and a catalog row's file are read in), and arbitrary text →
//! `chapters::detect_chapters`. A file is refused or read, never a panic; what is read is
//! usable:
//!
//! * the text is not blank, and the encoding is a real `encoding_rs` name;
//! * a title, when there is one, is non-empty and trimmed (plain text has none);
//! * the chapters tile the text: in order, each non-empty, on character boundaries, the first
//!   at 0 and the last ending at the text's end (or there are none);
//! * valid UTF-8 plain text without a byte order mark is read as itself, and reading is
//!   deterministic.
#![no_main]

use copytrace_service::chapters::{Chapter, detect_chapters};
use copytrace_service::textfile::TextFile;
use copytrace_service::workfile::{WorkFormat, decode_work};
use libfuzzer_sys::fuzz_target;

const FORMATS: [WorkFormat; 3] = [WorkFormat::Text, WorkFormat::Html, WorkFormat::Markdown];

fn check_chapters(text: &str, chapters: &[Chapter]) {
    let mut at = 0;
    for chapter in chapters {
        assert_eq!(
            chapter.start, at,
            "chapters do not tile the text: {chapters:?}"
        );
        assert!(chapter.start < chapter.end, "empty chapter {chapter:?}");
        assert!(
            text.is_char_boundary(chapter.start) && text.is_char_boundary(chapter.end),
            "chapter {chapter:?} off character boundaries"
        );
        at = chapter.end;
    }
    if !chapters.is_empty() {
        assert_eq!(at, text.len(), "the last chapter ends before the text");
    }
}

fn check_file(file: &TextFile, format: WorkFormat) {
    assert!(!file.text.trim().is_empty(), "blank text accepted");
    let encoding = encoding_rs::Encoding::for_label(file.encoding.as_bytes());
    assert_eq!(encoding.map(|e| e.name()), Some(file.encoding));
    match &file.title {
        Some(title) => assert!(
            !title.is_empty() && title.trim() == title,
            "title {title:?}"
        ),
        None => {}
    }
    if format == WorkFormat::Text {
        assert!(file.title.is_none(), "plain text has no title");
    }
    check_chapters(&file.text, &file.chapters);
    assert_eq!(file.chapters, detect_chapters(&file.text));
}

fuzz_target!(|data: &[u8]| {
    let (head, bytes) = data.split_at(data.len().min(1));
    let format = FORMATS[usize::from(head.first().copied().unwrap_or(0)) % FORMATS.len()];

    let text = String::from_utf8_lossy(bytes);
    check_chapters(&text, &detect_chapters(&text));

    let Ok(file) = decode_work(bytes, format) else {
        return;
    };
    check_file(&file, format);
    let again = decode_work(bytes, format).expect("read once, read twice");
    assert_eq!(
        (&again.text, again.encoding, &again.title, &again.chapters),
        (&file.text, file.encoding, &file.title, &file.chapters),
        "reading is deterministic"
    );
    if format == WorkFormat::Text
        && encoding_rs::Encoding::for_bom(bytes).is_none()
        && let Ok(utf8) = std::str::from_utf8(bytes)
    {
        assert_eq!(file.text, utf8);
        assert_eq!(file.encoding, "UTF-8");
    }
});
