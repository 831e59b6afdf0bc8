//! EPUB 2 and 3 work files, read with `rbook`.
//!
//! Publishers deliver finished novels as EPUB far more often than as plain text. The container,
//! the package document (OPF), the spine and both kinds of table of contents (the EPUB 2 NCX and
//! the EPUB 3 navigation document) are read by `rbook`; this module only decides what of it is
//! the work:
//!
//! * the spine, in reading order, is the text: each XHTML document goes through the same HTML
//!   path as an HTML work file (and as a crawled pirate page), and the documents are joined
//!   with a blank line;
//! * each spine document with text is a chapter, because that is how EPUBs are cut, titled by
//!   the table of contents entry that points at it, else by its own `<title>` or first
//!   heading. The navigation document and documents without text (cover pages, image-only
//!   inserts) are skipped. A book that is one long document gets its chapters from heading
//!   lines instead ([`detect_chapters`]);
//! * a DRM-protected book is refused rather than read as the ciphertext's noise: its
//!   `META-INF/encryption.xml` lists resources encrypted with a real cipher (font obfuscation,
//!   which hides only embedded fonts, does not count), or it carries Apple's `sinf.xml`;
//! * an archive whose entries would inflate beyond [`MAX_ENTRY_BYTES`] each or
//!   [`MAX_BOOK_BYTES`] in all (a ZIP bomb: kilobytes that inflate to gigabytes) is refused
//!   from its central directory, before anything is decompressed. Entries are read from the
//!   archive in memory and never written to disk, so a `../` in a name reaches no file.

use std::collections::HashMap;
use std::io::Cursor;

use quick_xml::Reader;
use quick_xml::events::Event;
use rbook::Epub;

use super::html_text;
use crate::chapters::{Chapter, detect_chapters};
use crate::error::{Result, ServiceError};
use crate::textfile::TextFile;

/// Largest uncompressed size of one archive entry: a chapter document, even a whole novel in one
/// XHTML file, is a few megabytes.
const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Largest uncompressed size of all entries together (text, images and fonts).
const MAX_BOOK_BYTES: u64 = 256 << 20;

/// What joins two spine documents in the work text: they are separate pages of the book.
const DOCUMENT_SEPARATOR: &str = "\n\n";

/// Encryption algorithms that only obfuscate embedded fonts (IDPF and Adobe); a book whose
/// `encryption.xml` names nothing else is readable.
const FONT_OBFUSCATION: &[&str] = &[
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
];

/// The text, title and chapters of an EPUB file's bytes.
pub(super) fn decode_epub(bytes: &[u8]) -> Result<TextFile> {
    // Every EPUB is a ZIP archive, which starts with a local file header; saying so beats
    // whatever the archive reader makes of a renamed text or PDF file.
    if !bytes.starts_with(b"PK\x03\x04") {
        return Err(ServiceError::invalid(
            "it is not an EPUB: an EPUB is a ZIP archive, and this file is not one",
        ));
    }
    refuse_bombs(bytes)?;
    let epub = Epub::read(Cursor::new(bytes.to_vec()))
        .map_err(|error| ServiceError::invalid(format!("it is not a readable EPUB: {error}")))?;
    refuse_drm(&epub)?;

    let toc_titles = toc_titles(&epub);
    let mut documents: Vec<(String, String)> = Vec::new();
    let mut encoding = "UTF-8";
    for item in epub
        .spine()
        .iter()
        .filter_map(|entry| entry.manifest_entry())
    {
        let is_html = matches!(item.media_type(), "application/xhtml+xml" | "text/html");
        if !is_html || item.properties().has_property("nav") {
            continue;
        }
        let document = item.read_bytes().map_err(|error| {
            ServiceError::invalid(format!(
                "its document {} cannot be read: {error}",
                item.href().as_str()
            ))
        })?;
        let page = html_text(&document);
        if page.text.trim().is_empty() {
            continue;
        }
        if documents.is_empty() {
            encoding = page.encoding;
        }
        let title = toc_titles
            .get(item.id())
            .cloned()
            .or(page.title)
            .unwrap_or_default();
        documents.push((title, page.text));
    }
    if documents.is_empty() {
        return Err(ServiceError::invalid(
            "it holds no readable text (no document of its spine has any)",
        ));
    }

    let mut text = String::new();
    let mut starts = Vec::with_capacity(documents.len());
    let mut titles = Vec::with_capacity(documents.len());
    for (title, document) in documents {
        if !text.is_empty() {
            text.push_str(DOCUMENT_SEPARATOR);
        }
        starts.push(text.len());
        titles.push(title);
        text.push_str(&document);
    }
    let chapters = if titles.len() == 1 {
        detect_chapters(&text)
    } else {
        // Chapter i runs up to where chapter i + 1 starts, separator included, so the chapters
        // tile the text as detected ones do.
        let ends = starts.iter().skip(1).copied().chain([text.len()]);
        titles
            .into_iter()
            .zip(starts.iter().copied().zip(ends))
            .map(|(title, (start, end))| Chapter { title, start, end })
            .collect()
    };
    let title = epub
        .metadata()
        .title()
        .map(|title| collapse_spaces(title.value()))
        .filter(|title| !title.is_empty());
    Ok(TextFile {
        text,
        encoding,
        title,
        chapters,
    })
}

/// Refuses an archive whose central directory announces entries larger than
/// [`MAX_ENTRY_BYTES`] or more than [`MAX_BOOK_BYTES`] in all, without decompressing anything.
fn refuse_bombs(bytes: &[u8]) -> Result<()> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| ServiceError::invalid(format!("it is not a readable EPUB: {error}")))?;
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(|error| {
            ServiceError::invalid(format!("it is not a readable EPUB: {error}"))
        })?;
        let size = entry.size();
        if size > MAX_ENTRY_BYTES {
            return Err(ServiceError::invalid(format!(
                "its entry {} would inflate to {size} bytes, more than the {MAX_ENTRY_BYTES} an \
                 EPUB document may have",
                entry.name().unwrap_or_default()
            )));
        }
        total = total.saturating_add(size);
    }
    if total > MAX_BOOK_BYTES {
        return Err(ServiceError::invalid(format!(
            "its entries would inflate to {total} bytes, more than the {MAX_BOOK_BYTES} an EPUB \
             may have"
        )));
    }
    Ok(())
}

/// The table of contents label of each manifest item (by id) an entry points at, fragments
/// ignored. Nested entries count too, since chapters are often listed under their volume; when
/// a volume's entry and its first chapter's entry point at the same document, the deeper one,
/// the chapter, names it (among equals, the first).
fn toc_titles(epub: &Epub) -> HashMap<String, String> {
    // Per item: the depth of the entry naming it, and its label.
    let mut titles: HashMap<String, (usize, String)> = HashMap::new();
    if let Some(contents) = epub.toc().contents() {
        for entry in contents.flatten() {
            let label = collapse_spaces(entry.label());
            let Some(item) = entry.manifest_entry().filter(|_| !label.is_empty()) else {
                continue;
            };
            let depth = entry.depth();
            titles
                .entry(item.id().to_owned())
                .and_modify(|named| {
                    if depth > named.0 {
                        *named = (depth, label.clone());
                    }
                })
                .or_insert((depth, label));
        }
    }
    titles
        .into_iter()
        .map(|(id, (_, label))| (id, label))
        .collect()
}

/// Refuses a book whose text is encrypted, naming how, so the user asks the rights holder for
/// a DRM-free copy instead of registering noise.
fn refuse_drm(epub: &Epub) -> Result<()> {
    if epub.contains_resource("/META-INF/sinf.xml") {
        return Err(ServiceError::invalid(
            "it is protected by DRM (Apple FairPlay, META-INF/sinf.xml) and its text cannot be \
             read; ask the rights holder for a DRM-free copy",
        ));
    }
    if !epub.contains_resource("/META-INF/encryption.xml") {
        return Ok(());
    }
    let encrypted = epub
        .read_resource_str("/META-INF/encryption.xml")
        .ok()
        .and_then(|xml| encrypted_resources(&xml));
    match encrypted {
        Some(files) if files.is_empty() => Ok(()),
        Some(files) => Err(ServiceError::invalid(format!(
            "it is protected by DRM: META-INF/encryption.xml lists {} encrypted file(s) (such as \
             {}) whose text cannot be read; ask the rights holder for a DRM-free copy",
            files.len(),
            files[0]
        ))),
        None => Err(ServiceError::invalid(
            "it has an unreadable META-INF/encryption.xml, so its text may be encrypted (DRM); \
             ask the rights holder for a DRM-free copy",
        )),
    }
}

/// The URIs of the resources `encryption.xml` lists as encrypted with anything but font
/// obfuscation; `None` if the file is not well-formed XML.
fn encrypted_resources(xml: &str) -> Option<Vec<String>> {
    let mut reader = Reader::from_str(xml);
    let mut encrypted = Vec::new();
    // Inside an `EncryptedData`: its algorithm and cipher reference, once seen.
    let mut current: Option<(Option<String>, Option<String>)> = None;
    loop {
        match reader.read_event().ok()? {
            Event::Start(element) | Event::Empty(element) => {
                let attribute = |name: &str| {
                    element
                        .attributes()
                        .flatten()
                        .find(|attribute| attribute.key.local_name().as_ref() == name)
                        .map(|attribute| attribute.value.into_owned())
                };
                match element.local_name().as_ref() {
                    "EncryptedData" => current = Some((None, None)),
                    "EncryptionMethod" => {
                        if let Some((algorithm, _)) = current.as_mut() {
                            *algorithm = attribute("Algorithm");
                        }
                    }
                    "CipherReference" => {
                        if let Some((_, uri)) = current.as_mut() {
                            *uri = attribute("URI");
                        }
                    }
                    _ => {}
                }
            }
            Event::End(element) if element.local_name().as_ref() == "EncryptedData" => {
                if let Some((algorithm, uri)) = current.take() {
                    let obfuscated_font = algorithm
                        .as_deref()
                        .is_some_and(|algorithm| FONT_OBFUSCATION.contains(&algorithm));
                    if !obfuscated_font {
                        encrypted.push(uri.unwrap_or_else(|| "an unnamed file".to_owned()));
                    }
                }
            }
            Event::Eof => return Some(encrypted),
            _ => {}
        }
    }
}

/// Whitespace runs as one space, trimmed: labels and titles are often indented or wrapped in
/// the XML they come from.
fn collapse_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, ZipWriter};

    use super::super::{WorkFormat, decode_work, read_work_file};
    use super::*;
    use crate::error::one_line;

    /// The three chapters of the fixture book: table of contents label, `<title>` of the
    /// document, and its two paragraphs.
    const CHAPTERS: [(&str, &str, [&str; 2]); 3] = [
        (
            "第一章 雨夜来客",
            "雨夜",
            [
                "夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院子里。",
                "陌生人摘下斗笠，露出一张布满风霜的脸，他说自己从北方来，要找一个叫林默的人。",
            ],
        ),
        (
            "第二章 北方旧事",
            "旧事",
            [
                "林默的父亲年轻时曾在北方边关从军，十年之后归来，只带回一柄断剑和满身的伤疤。",
                "那柄断剑一直挂在堂屋的墙上，少年从小看着它长大，却从来不知道它背后的故事。",
            ],
        ),
        (
            "第三章 离乡",
            "离乡",
            [
                "天亮的时候雨停了，少年收拾好行囊，跟着陌生人走出了村口那棵老槐树的影子。",
                "母亲站在门口一直望着他们的背影，直到山路拐过弯去，再也看不见为止。",
            ],
        ),
    ];

    fn chapter_document(index: usize) -> String {
        let (label, title, [first, second]) = CHAPTERS[index];
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE html>\n\
             <html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>{title}</title></head>\
             <body><section><h2>{label}</h2><p>{first}</p><p>{second}</p></section></body></html>"
        )
    }

    const COVER: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
        <html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>封面</title></head>\
        <body><div><img src=\"../images/cover.jpg\" alt=\"\"/></div></body></html>";

    const CONTAINER: &str = "<?xml version=\"1.0\"?>\n\
        <container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\">\
        <rootfiles><rootfile full-path=\"OEBPS/content.opf\" \
        media-type=\"application/oebps-package+xml\"/></rootfiles></container>";

    /// A ZIP archive as EPUB wants it: `mimetype` first and stored, the rest compressed.
    fn epub_archive(files: &[(&str, String)]) -> Vec<u8> {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        zip.start_file("mimetype", stored).unwrap();
        zip.write_all(b"application/epub+zip").unwrap();
        zip.start_file("META-INF/container.xml", deflated).unwrap();
        zip.write_all(CONTAINER.as_bytes()).unwrap();
        for (name, content) in files {
            zip.start_file(*name, deflated).unwrap();
            zip.write_all(content.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    /// The manifest items every fixture has: the cover page and the three chapters.
    const CONTENT_ITEMS: &str = "\
        <item id=\"cover\" href=\"text/cover.xhtml\" media-type=\"application/xhtml+xml\"/>\
        <item id=\"c1\" href=\"text/c1.xhtml\" media-type=\"application/xhtml+xml\"/>\
        <item id=\"c2\" href=\"text/c2.xhtml\" media-type=\"application/xhtml+xml\"/>\
        <item id=\"c3\" href=\"text/c3.xhtml\" media-type=\"application/xhtml+xml\"/>\
        <item id=\"cover-image\" href=\"images/cover.jpg\" media-type=\"image/jpeg\"/>";

    fn content_files() -> Vec<(&'static str, String)> {
        vec![
            ("OEBPS/text/cover.xhtml", COVER.to_owned()),
            ("OEBPS/text/c1.xhtml", chapter_document(0)),
            ("OEBPS/text/c2.xhtml", chapter_document(1)),
            ("OEBPS/text/c3.xhtml", chapter_document(2)),
            ("OEBPS/images/cover.jpg", "\u{FFFD}JFIF".to_owned()),
        ]
    }

    /// An EPUB 2 book: OPF 2.0 and an NCX, the chapters listed under a volume whose entry
    /// points at the first chapter too.
    fn epub2() -> Vec<u8> {
        epub_archive(&epub2_files())
    }

    /// The files of [`epub2`]'s archive (besides `mimetype` and the container), OPF first.
    fn epub2_files() -> Vec<(&'static str, String)> {
        let opf = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <package xmlns=\"http://www.idpf.org/2007/opf\" version=\"2.0\" \
             unique-identifier=\"uid\"><metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\" \
             xmlns:opf=\"http://www.idpf.org/2007/opf\">\
             <dc:title>星辰旅人</dc:title><dc:language>zh-CN</dc:language>\
             <dc:identifier id=\"uid\">urn:uuid:0b3c6a38-2f6e-4a55-9d43-8f1c2a7e5b01</dc:identifier>\
             </metadata><manifest>\
             <item id=\"ncx\" href=\"toc.ncx\" media-type=\"application/x-dtbncx+xml\"/>\
             {CONTENT_ITEMS}</manifest><spine toc=\"ncx\">\
             <itemref idref=\"cover\" linear=\"no\"/><itemref idref=\"c1\"/>\
             <itemref idref=\"c2\"/><itemref idref=\"c3\"/></spine></package>"
        );
        let point = |order: usize, file: &str, label: &str| {
            format!(
                "<navPoint id=\"p{order}\" playOrder=\"{order}\"><navLabel><text>{label}</text>\
                 </navLabel><content src=\"{file}\"/></navPoint>"
            )
        };
        let ncx = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <ncx xmlns=\"http://www.daisy.org/z3986/2005/ncx/\" version=\"2005-1\">\
             <head><meta name=\"dtb:uid\" content=\"urn:uuid:0b3c6a38\"/></head>\
             <docTitle><text>星辰旅人</text></docTitle><navMap>\
             <navPoint id=\"v1\" playOrder=\"1\"><navLabel><text>第一卷 风起</text></navLabel>\
             <content src=\"text/c1.xhtml\"/>{}{}{}</navPoint></navMap></ncx>",
            point(2, "text/c1.xhtml", CHAPTERS[0].0),
            point(3, "text/c2.xhtml#start", CHAPTERS[1].0),
            point(4, "text/c3.xhtml", CHAPTERS[2].0),
        );
        let mut files = vec![("OEBPS/content.opf", opf), ("OEBPS/toc.ncx", ncx)];
        files.extend(content_files());
        files
    }

    /// An EPUB 3 book: OPF 3.0 and a navigation document (in the spine, as many books have it)
    /// listing the chapters in `toc` (file, label).
    fn epub3(toc: &[(&str, &str)]) -> Vec<u8> {
        let opf = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\" \
             unique-identifier=\"uid\"><metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\
             <dc:identifier id=\"uid\">urn:uuid:5d1f4c1e-8b0a-4c5e-a2a9-3c7f0e6d9b12</dc:identifier>\
             <dc:title>  星辰旅人\n  </dc:title><dc:language>zh-CN</dc:language>\
             <meta property=\"dcterms:modified\">2024-05-01T00:00:00Z</meta>\
             </metadata><manifest>\
             <item id=\"nav\" href=\"nav.xhtml\" media-type=\"application/xhtml+xml\" \
             properties=\"nav\"/>{CONTENT_ITEMS}</manifest><spine>\
             <itemref idref=\"cover\"/><itemref idref=\"nav\"/><itemref idref=\"c1\"/>\
             <itemref idref=\"c2\"/><itemref idref=\"c3\"/></spine></package>"
        );
        let items: String = toc
            .iter()
            .map(|(file, label)| format!("<li><a href=\"{file}\">{label}</a></li>"))
            .collect();
        let nav = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n\
             <html xmlns=\"http://www.w3.org/1999/xhtml\" \
             xmlns:epub=\"http://www.idpf.org/2007/ops\"><head><title>目录</title></head><body>\
             <nav epub:type=\"toc\" id=\"toc\"><h1>目录</h1><ol>{items}</ol></nav></body></html>"
        );
        let mut files = vec![("OEBPS/content.opf", opf), ("OEBPS/nav.xhtml", nav)];
        files.extend(content_files());
        epub_archive(&files)
    }

    fn full_toc() -> Vec<(&'static str, &'static str)> {
        vec![
            ("text/c1.xhtml", CHAPTERS[0].0),
            ("text/c2.xhtml#start", CHAPTERS[1].0),
            ("text/c3.xhtml", CHAPTERS[2].0),
        ]
    }

    /// The book's text, title and chapters are as the fixture wrote them: each chapter's slice
    /// holds its document's paragraphs (and the separator before the next), in spine order.
    fn assert_reads_the_book(work: &TextFile, titles: [&str; 3]) {
        assert_eq!(work.title.as_deref(), Some("星辰旅人"));
        assert!(!work.text.contains("目录"), "{}", work.text);
        assert_eq!(work.chapters.len(), 3, "{:?}", work.chapters);
        let mut expected_start = 0;
        for (index, chapter) in work.chapters.iter().enumerate() {
            assert_eq!(chapter.title, titles[index]);
            assert_eq!(chapter.start, expected_start);
            let slice = &work.text[chapter.start..chapter.end];
            let [first, second] = CHAPTERS[index].2;
            assert!(slice.contains(first) && slice.contains(second), "{slice}");
            let document = html_text(chapter_document(index).as_bytes()).text;
            assert_eq!(slice.trim_end(), document);
            expected_start = chapter.end;
        }
        assert_eq!(expected_start, work.text.len());
        let documents: Vec<String> = (0..3)
            .map(|index| html_text(chapter_document(index).as_bytes()).text)
            .collect();
        assert_eq!(work.text, documents.join(DOCUMENT_SEPARATOR));
    }

    /// Both EPUB versions, added to a library, are stored as one work with the three chapters
    /// of their tables of contents, each covering its chapter's text.
    #[tokio::test]
    async fn epub_books_are_stored_with_their_chapters() {
        use copytrace_store::Store;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("book2.epub"), epub2()).unwrap();
        std::fs::write(dir.path().join("book3.epub"), epub3(&full_toc())).unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = copytrace_store::sqlite::SqliteStore::connect(&url)
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let files = crate::library::read_library_files(&[dir.path().to_path_buf()]).unwrap();
        let added = crate::library::add_works(
            &store,
            "Yuewen",
            &files,
            None,
            &copytrace_fingerprint::FingerprintConfig::default(),
        )
        .await
        .unwrap();
        assert_eq!(added.works.len(), 2);
        for outcome in &added.works {
            let work = store.get_work(outcome.work_id).await.unwrap();
            assert_eq!(work.summary.title, "星辰旅人");
            let titles: Vec<&str> = work.chapters.iter().map(|c| c.title.as_str()).collect();
            assert_eq!(
                titles,
                CHAPTERS.map(|(label, _, _)| label),
                "{}",
                outcome.external_id
            );
            for (chapter, (_, _, [first, _])) in work.chapters.iter().zip(CHAPTERS) {
                let slice = &work.content[chapter.start as usize..chapter.end as usize];
                assert!(slice.contains(first), "{slice}");
            }
        }
    }

    #[test]
    fn an_epub2_book_reads_its_spine_and_names_chapters_from_the_ncx() {
        let work = decode_work(&epub2(), WorkFormat::Epub).unwrap();
        assert_reads_the_book(&work, CHAPTERS.map(|(label, _, _)| label));
    }

    #[test]
    fn an_epub3_book_reads_its_spine_and_names_chapters_from_the_nav_document() {
        let work = decode_work(&epub3(&full_toc()), WorkFormat::Epub).unwrap();
        assert_reads_the_book(&work, CHAPTERS.map(|(label, _, _)| label));
        assert_eq!(work.encoding, "UTF-8");
    }

    #[test]
    fn a_document_missing_from_the_toc_is_named_by_its_own_title() {
        let mut toc = full_toc();
        toc.remove(1);
        let work = decode_work(&epub3(&toc), WorkFormat::Epub).unwrap();
        assert_reads_the_book(&work, [CHAPTERS[0].0, CHAPTERS[1].1, CHAPTERS[2].0]);
    }

    #[test]
    fn a_book_in_one_document_gets_chapters_from_its_headings() {
        let body: String = CHAPTERS
            .iter()
            .map(|(label, _, [first, second])| {
                format!("<h2>{label}</h2><p>{first}</p><p>{second}</p>")
            })
            .collect();
        let document = format!(
            "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>正文</title></head>\
             <body><div>{body}</div></body></html>"
        );
        let opf = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\" \
             unique-identifier=\"uid\"><metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\
             <dc:identifier id=\"uid\">urn:uuid:1</dc:identifier><dc:title>星辰旅人</dc:title>\
             </metadata><manifest>\
             <item id=\"body\" href=\"body.xhtml\" media-type=\"application/xhtml+xml\"/>\
             </manifest><spine><itemref idref=\"body\"/></spine></package>";
        let bytes = epub_archive(&[
            ("OEBPS/content.opf", opf.to_owned()),
            ("OEBPS/body.xhtml", document),
        ]);
        let work = decode_work(&bytes, WorkFormat::Epub).unwrap();
        let titles: Vec<&str> = work.chapters.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, CHAPTERS.map(|(label, _, _)| label));
        assert!(work.text[work.chapters[1].start..].starts_with(CHAPTERS[1].0));
    }

    #[test]
    fn an_epub_that_is_not_a_zip_archive_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("星辰旅人.epub");
        std::fs::write(&path, "第一章 雨夜\n这其实是一个文本文件。").unwrap();
        let error = one_line(&read_work_file(&path).unwrap_err());
        assert!(error.contains("星辰旅人.epub"), "{error}");
        assert!(
            error.contains("not an EPUB") && error.contains("ZIP"),
            "{error}"
        );
    }

    #[test]
    fn a_zip_archive_that_is_no_epub_is_refused() {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("readme.txt", SimpleFileOptions::default())
            .unwrap();
        zip.write_all("第一章".as_bytes()).unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let error = decode_work(&bytes, WorkFormat::Epub)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a readable EPUB"), "{error}");
    }

    fn with_encryption(method: &str) -> Vec<u8> {
        let encryption = format!(
            "<?xml version=\"1.0\"?>\n\
             <encryption xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\" \
             xmlns:enc=\"http://www.w3.org/2001/04/xmlenc#\">\
             <enc:EncryptedData><enc:EncryptionMethod Algorithm=\"{method}\"/>\
             <enc:CipherData><enc:CipherReference URI=\"OEBPS/text/c1.xhtml\"/></enc:CipherData>\
             </enc:EncryptedData></encryption>"
        );
        let mut archive = ZipWriter::new_append(Cursor::new(epub3(&full_toc()))).unwrap();
        archive
            .start_file("META-INF/encryption.xml", SimpleFileOptions::default())
            .unwrap();
        archive.write_all(encryption.as_bytes()).unwrap();
        archive.finish().unwrap().into_inner()
    }

    #[test]
    fn a_zip_bomb_is_refused_before_anything_is_inflated() {
        // 80 MB of one character compresses to under 100 KB.
        let huge = format!(
            "<html><body><p>{}</p></body></html>",
            " ".repeat((MAX_ENTRY_BYTES + (16 << 20)) as usize)
        );
        let mut files = epub2_files();
        let c1 = files
            .iter()
            .position(|(name, _)| *name == "OEBPS/text/c1.xhtml")
            .unwrap();
        files[c1].1 = huge;
        let bomb = epub_archive(&files);
        assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
        let error = decode_epub(&bomb).unwrap_err().to_string();
        assert!(
            error.contains("OEBPS/text/c1.xhtml") && error.contains("would inflate"),
            "{error}"
        );
    }

    #[test]
    fn a_manifest_pointing_outside_the_archive_reads_no_file() {
        let secret = std::env::temp_dir().join("copytrace-epub-traversal-secret.xhtml");
        std::fs::write(&secret, chapter_document(2).replace("第", "秘密第")).unwrap();
        let href = format!("../../../../../../..{}", secret.display());
        let mut files = epub2_files();
        for (_, content) in files.iter_mut().take(2) {
            *content = content.replace("text/c3.xhtml", &href);
        }
        let result = decode_epub(&epub_archive(&files));
        if let Ok(work) = result {
            assert!(
                !work.text.contains("秘密"),
                "a file outside the archive was read"
            );
        }
        let _ = std::fs::remove_file(&secret);
    }

    #[test]
    fn an_encrypted_epub_is_refused_as_drm_protected() {
        let bytes = with_encryption("http://www.w3.org/2001/04/xmlenc#aes128-cbc");
        let error = decode_work(&bytes, WorkFormat::Epub).unwrap_err();
        assert_eq!(error.kind(), crate::ErrorKind::Invalid);
        let message = error.to_string();
        assert!(
            message.contains("DRM") && message.contains("OEBPS/text/c1.xhtml"),
            "{message}"
        );
    }

    #[test]
    fn obfuscated_fonts_alone_do_not_make_a_book_unreadable() {
        let bytes = with_encryption("http://www.idpf.org/2008/embedding");
        let work = decode_work(&bytes, WorkFormat::Epub).unwrap();
        assert_eq!(work.chapters.len(), 3);
    }
}
