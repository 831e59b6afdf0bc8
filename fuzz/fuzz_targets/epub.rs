//! EPUB work files → `workfile::decode_work(…, WorkFormat::Epub)`.
//!
//! Random bytes are almost never a ZIP archive, so most inputs are cut into parts (at the byte
//! `0x1e`) that become the files of an archive laid out as EPUBs are: `mimetype` first and
//! stored, `META-INF/container.xml` (fixed, or fuzzed), the package document
//! `OEBPS/content.opf`, an NCX and a navigation document, two XHTML chapters, and optionally
//! `META-INF/encryption.xml` and Apple's `META-INF/sinf.xml`. The first byte's flags choose;
//! with its lowest bit set, the rest is handed over as raw bytes instead.
//!
//! A book is refused or read, never a panic. What is read has non-blank text, a real encoding
//! name, a non-empty trimmed title if any, and chapters that tile the text; a book carrying
//! `sinf.xml` (FairPlay DRM) is always refused.
#![no_main]

use std::io::{Cursor, Write};

use copytrace_service::workfile::{WorkFormat, decode_work};
use libfuzzer_sys::fuzz_target;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

const CONTAINER: &str = "<?xml version=\"1.0\"?>\n\
    <container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\">\
    <rootfiles><rootfile full-path=\"OEBPS/content.opf\" \
    media-type=\"application/oebps-package+xml\"/></rootfiles></container>";

/// Where each fuzzed part goes, in order.
const NAMES: [&str; 7] = [
    "OEBPS/content.opf",
    "OEBPS/toc.ncx",
    "OEBPS/nav.xhtml",
    "OEBPS/text/c1.xhtml",
    "OEBPS/text/c2.xhtml",
    "META-INF/encryption.xml",
    "META-INF/container.xml",
];

const RAW: u8 = 1;
const ENCRYPTION: u8 = 2;
const OWN_CONTAINER: u8 = 4;
const STORED: u8 = 8;
const SINF: u8 = 16;

fn archive(flags: u8, parts: &[&[u8]]) -> Vec<u8> {
    let part = |i: usize| parts.get(i).copied().unwrap_or(b"");
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let options = if flags & STORED != 0 {
        stored
    } else {
        SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
    };
    let mut add = |name: &str, options: SimpleFileOptions, content: &[u8]| {
        zip.start_file(name, options).expect("in memory");
        zip.write_all(content).expect("in memory");
    };
    add("mimetype", stored, b"application/epub+zip");
    if flags & OWN_CONTAINER != 0 {
        add(NAMES[6], options, part(6));
    } else {
        add(NAMES[6], options, CONTAINER.as_bytes());
    }
    for (i, name) in NAMES.iter().enumerate().take(5) {
        add(name, options, part(i));
    }
    if flags & ENCRYPTION != 0 {
        add(NAMES[5], options, part(5));
    }
    if flags & SINF != 0 {
        add("META-INF/sinf.xml", options, b"<fairplay/>");
    }
    zip.finish().expect("in memory").into_inner()
}

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let flags = head.first().copied().unwrap_or(0);
    let bytes = if flags & RAW != 0 {
        rest.to_vec()
    } else {
        let parts: Vec<&[u8]> = rest.split(|&b| b == 0x1e).collect();
        archive(flags, &parts)
    };

    let result = decode_work(&bytes, WorkFormat::Epub);
    if flags & (RAW | SINF) == SINF {
        assert!(result.is_err(), "a book with META-INF/sinf.xml was read");
    }
    let Ok(file) = result else {
        return;
    };
    assert!(!file.text.trim().is_empty(), "blank text accepted");
    let encoding = encoding_rs::Encoding::for_label(file.encoding.as_bytes());
    assert_eq!(encoding.map(|e| e.name()), Some(file.encoding));
    if let Some(title) = &file.title {
        assert!(
            !title.is_empty() && title.trim() == title,
            "title {title:?}"
        );
    }
    let mut at = 0;
    for chapter in &file.chapters {
        assert_eq!(chapter.start, at, "chapters do not tile the text");
        assert!(chapter.start < chapter.end, "empty chapter {chapter:?}");
        assert!(
            file.text.is_char_boundary(chapter.start) && file.text.is_char_boundary(chapter.end)
        );
        at = chapter.end;
    }
    if !file.chapters.is_empty() {
        assert_eq!(at, file.text.len(), "the last chapter ends before the text");
    }
});
