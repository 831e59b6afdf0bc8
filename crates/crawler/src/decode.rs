//! Turning the bytes of an HTML page into text.
//!
//! `reqwest::Response::text()` trusts only the `Content-Type` charset and otherwise assumes
//! UTF-8, which turns the many GBK/GB18030 pages of Chinese sites into mojibake. This module
//! follows the browsers' order instead:
//!
//! 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
//! 2. the `charset` parameter of the HTTP `Content-Type` header;
//! 3. a prescan of the first [`PRESCAN_BYTES`] for `<meta charset=…>` or
//!    `<meta http-equiv="Content-Type" content="…; charset=…">`;
//! 4. `chardetng`, given the host's top-level domain as a hint (`.cn` → GBK is likely);
//! 5. decoding with `encoding_rs`, which never panics and replaces malformed sequences with
//!    U+FFFD.
//!
//! One pragmatic deviation from browsers: when a *declared* charset (header or meta) produces
//! many malformed sequences (more than one in twenty non-ASCII characters) but the detector's
//! guess decodes the same bytes cleanly, the guess wins. Pirate sites copy templates and often
//! declare a charset their bytes do not use. A few malformed sequences do not count: a page
//! with one corrupt byte is still in its declared charset, and a single-byte guess such as
//! windows-1252 decodes *any* bytes "cleanly" into mojibake.
//!
//! Labels are resolved by the WHATWG rules in `encoding_rs`, so `gb2312` and `gbk` both mean
//! the GBK decoder, which is the GB18030 decoder (a superset).

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use url::{Host, Url};

/// How many leading bytes are scanned for a `<meta>` charset declaration. The HTML standard
/// says 1024; Chinese sites often put long comments and scripts first, so we look further.
pub const PRESCAN_BYTES: usize = 4096;

/// How many bytes the statistical detector sees at most.
const DETECT_BYTES: usize = 256 * 1024;

/// Decodes an HTML document. Returns the text and the `encoding_rs` name of the encoding used
/// (for example `"UTF-8"` or `"GBK"`).
///
/// `content_type` is the raw HTTP `Content-Type` header value, if any; `url` supplies the
/// top-level-domain hint for detection. Never panics, whatever the bytes.
pub fn decode_html(
    bytes: &[u8],
    content_type: Option<&str>,
    url: Option<&Url>,
) -> (String, &'static str) {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return (text.into_owned(), encoding.name());
    }

    let declared = content_type
        .and_then(charset_from_content_type)
        .and_then(|label| usable_label(label.as_bytes(), false))
        .or_else(|| prescan_meta_charset(bytes));

    if let Some(encoding) = declared {
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        if !had_errors || mostly_clean(&text) || (encoding == UTF_8 && mostly_utf8(&text)) {
            return (text.into_owned(), encoding.name());
        }
        let guess = detect(bytes, url);
        if guess != encoding {
            let (guessed, guess_errors) = guess.decode_without_bom_handling(bytes);
            if !guess_errors {
                return (guessed.into_owned(), guess.name());
            }
        }
        return (text.into_owned(), encoding.name());
    }

    let encoding = detect(bytes, url);
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    (text.into_owned(), encoding.name())
}

/// Whether at most one in twenty non-ASCII characters of a decoded text is U+FFFD.
fn mostly_clean(text: &str) -> bool {
    let (mut non_ascii, mut replaced) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_ascii()) {
        non_ascii += 1;
        replaced += usize::from(c == '\u{FFFD}');
    }
    replaced * 20 <= non_ascii
}

/// Whether a text decoded as UTF-8 has at least twice as many real non-ASCII characters as
/// replaced sequences. Valid multi-byte UTF-8 sequences almost never occur by chance in bytes
/// of another encoding, so a page declared UTF-8 that has them is UTF-8 with a corrupt run,
/// however short the page: a run of stray bytes in a short chapter must not make a single-byte
/// guess (windows-1252, which decodes anything "cleanly") turn all of its text into mojibake.
fn mostly_utf8(text: &str) -> bool {
    let (mut real, mut replaced) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_ascii()) {
        if c == '\u{FFFD}' {
            replaced += 1;
        } else {
            real += 1;
        }
    }
    real >= 2 * replaced
}

/// Runs `chardetng` over (a prefix of) the bytes with the URL's top-level domain as a hint.
fn detect(bytes: &[u8], url: Option<&Url>) -> &'static Encoding {
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    let sample = &bytes[..bytes.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == bytes.len());
    let tld = url.and_then(tld_hint);
    detector.guess(tld.as_deref().map(str::as_bytes), Utf8Detection::Allow)
}

/// The last DNS label of the URL's host, in the form `chardetng` requires (lower-case ASCII, no
/// dots); `None` for IP literals or anything odd (chardetng panics on bad labels).
fn tld_hint(url: &Url) -> Option<String> {
    let Some(Host::Domain(domain)) = url.host() else {
        return None;
    };
    let label = domain.trim_end_matches('.').rsplit('.').next()?;
    let valid = !label.is_empty()
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then(|| label.to_owned())
}

/// Maps a charset label to an encoding the way the HTML standard does for documents:
/// unknown labels and the `replacement` encoding are ignored; from a `<meta>`, UTF-16 means
/// UTF-8 (the bytes would not have been ASCII-readable otherwise) and `x-user-defined` means
/// windows-1252.
fn usable_label(label: &[u8], from_meta: bool) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label_no_replacement(label)?;
    if from_meta {
        if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
            return Some(UTF_8);
        }
        if encoding == encoding_rs::X_USER_DEFINED {
            return Some(WINDOWS_1252);
        }
    }
    Some(encoding)
}

/// Extracts the `charset` parameter from a `Content-Type` value (`text/html; charset="gbk"`).
pub fn charset_from_content_type(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// Scans the first [`PRESCAN_BYTES`] of the document for a `<meta>` charset declaration,
/// following the outline of the HTML standard's prescan (comments skipped, attributes parsed
/// loosely, `http-equiv` honoured only together with `content`).
pub fn prescan_meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let buf = &bytes[..bytes.len().min(PRESCAN_BYTES)];
    let mut i = 0;
    while i < buf.len() {
        if buf[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &buf[i..];
        if rest.starts_with(b"<!--") {
            i += 4 + find(&buf[i + 4..], b"-->").map_or(buf.len(), |p| p + 3);
            continue;
        }
        if rest.len() > 6
            && rest[1..5].eq_ignore_ascii_case(b"meta")
            && matches!(rest[5], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/')
        {
            let (attrs, consumed) = parse_attributes(&buf[i + 5..]);
            i += 5 + consumed;
            if let Some(encoding) = meta_encoding(&attrs) {
                return Some(encoding);
            }
            continue;
        }
        // Any other tag (or `</x`, `<!x`, `<?x`): skip to its end so that a `<meta` inside an
        // attribute value or a script is not mistaken for a tag of its own.
        if rest.len() > 1 && (rest[1].is_ascii_alphabetic() || rest[1] == b'/') {
            let (_, consumed) = parse_attributes(&buf[i + 1..]);
            i += 1 + consumed;
            continue;
        }
        if rest.len() > 1 && matches!(rest[1], b'!' | b'?') {
            i += 2 + find(&buf[i + 2..], b">").map_or(buf.len(), |p| p + 1);
            continue;
        }
        i += 1;
    }
    None
}

fn meta_encoding(attrs: &[(Vec<u8>, Vec<u8>)]) -> Option<&'static Encoding> {
    let get = |name: &[u8]| {
        attrs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    };
    if let Some(label) = get(b"charset")
        && let Some(encoding) = usable_label(label.trim_ascii(), true)
    {
        return Some(encoding);
    }
    let http_equiv = get(b"http-equiv")?;
    if !http_equiv
        .trim_ascii()
        .eq_ignore_ascii_case(b"content-type")
    {
        return None;
    }
    let content = String::from_utf8_lossy(get(b"content")?);
    let label = charset_from_content_type(&content).or_else(|| {
        // `content="charset=gbk"` without a MIME type also occurs in the wild.
        let lower = content.to_ascii_lowercase();
        let at = lower.find("charset=")?;
        Some(
            content[at + 8..]
                .trim()
                .trim_matches(['"', '\''])
                .to_owned(),
        )
    })?;
    usable_label(label.as_bytes(), true)
}

/// Parses `name=value` pairs after a tag name up to the closing `>`. Returns the attributes
/// and the number of bytes consumed (including the `>`, if found).
#[allow(clippy::type_complexity)]
fn parse_attributes(buf: &[u8]) -> (Vec<(Vec<u8>, Vec<u8>)>, usize) {
    let mut attrs = Vec::new();
    let mut i = 0;
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    // Skip the rest of the tag name.
    while i < buf.len() && !is_space(buf[i]) && buf[i] != b'>' && buf[i] != b'/' {
        i += 1;
    }
    loop {
        while i < buf.len() && (is_space(buf[i]) || buf[i] == b'/') {
            i += 1;
        }
        if i >= buf.len() {
            return (attrs, i);
        }
        if buf[i] == b'>' {
            return (attrs, i + 1);
        }
        let name_start = i;
        while i < buf.len() && !is_space(buf[i]) && !matches!(buf[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let name = buf[name_start..i].to_ascii_lowercase();
        while i < buf.len() && is_space(buf[i]) {
            i += 1;
        }
        let mut value = Vec::new();
        if i < buf.len() && buf[i] == b'=' {
            i += 1;
            while i < buf.len() && is_space(buf[i]) {
                i += 1;
            }
            if i < buf.len() && (buf[i] == b'"' || buf[i] == b'\'') {
                let quote = buf[i];
                i += 1;
                let start = i;
                while i < buf.len() && buf[i] != quote {
                    i += 1;
                }
                value = buf[start..i].to_vec();
                i = (i + 1).min(buf.len());
            } else {
                let start = i;
                while i < buf.len() && !is_space(buf[i]) && buf[i] != b'>' {
                    i += 1;
                }
                value = buf[start..i].to_vec();
            }
        }
        if !name.is_empty() {
            attrs.push((name, value));
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{GBK, SHIFT_JIS, UTF_16LE};

    const CHAPTER: &str = "第一章 风起\n　　夜色如墨，少年推开了那扇沉重的木门。\n\
        他知道，从今天起，一切都将不同。师父曾说过，江湖险恶，人心难测。";

    fn gbk(text: &str) -> Vec<u8> {
        let (bytes, _, had_errors) = GBK.encode(text);
        assert!(!had_errors);
        bytes.into_owned()
    }

    fn page(head: &str, body: &str) -> String {
        format!(
            "<!DOCTYPE html><html><head>{head}<title>测试</title></head><body><p>{body}</p></body></html>"
        )
    }

    fn traditional_page(head: &str, body: &str) -> String {
        page(head, body).replace("测试", "測試")
    }

    #[test]
    fn gbk_without_any_declaration_is_detected() {
        let bytes = gbk(&page("", CHAPTER));
        let url = Url::parse("http://www.example.cn/1.html").unwrap();
        let (text, encoding) = decode_html(&bytes, Some("text/html"), Some(&url));
        assert_eq!(encoding, "GBK");
        assert!(text.contains(CHAPTER));
    }

    #[test]
    fn gbk_without_a_hint_is_still_detected() {
        let bytes = gbk(&page("", CHAPTER));
        let (text, encoding) = decode_html(&bytes, None, None);
        assert_eq!(encoding, "GBK");
        assert!(text.contains(CHAPTER));
    }

    #[test]
    fn the_content_type_charset_is_honoured() {
        let bytes = gbk(&page("", CHAPTER));
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=GB2312"), None);
        assert_eq!(encoding, "GBK");
        assert!(text.contains(CHAPTER));
        let (_, encoding) = decode_html(&bytes, Some("text/html;charset=\"gbk\""), None);
        assert_eq!(encoding, "GBK");
    }

    #[test]
    fn meta_charset_and_http_equiv_are_honoured() {
        for head in [
            "<meta charset=gbk>",
            "<meta charset=\"gb2312\" />",
            "<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=gb2312\">",
            "<meta content='text/html;charset=gbk' http-equiv='content-type'>",
        ] {
            let bytes = gbk(&page(head, CHAPTER));
            let (text, encoding) = decode_html(&bytes, Some("text/html"), None);
            assert_eq!(encoding, "GBK", "{head}");
            assert!(text.contains(CHAPTER), "{head}");
        }
    }

    #[test]
    fn meta_inside_a_comment_is_ignored() {
        let html = page(
            "<!-- <meta charset=shift_jis> --><meta charset=gbk>",
            CHAPTER,
        );
        assert_eq!(prescan_meta_charset(&gbk(&html)), Some(GBK));
    }

    #[test]
    fn a_meta_after_the_prescan_window_is_not_seen() {
        let html = format!("{}<meta charset=shift_jis>", " ".repeat(PRESCAN_BYTES));
        assert_eq!(prescan_meta_charset(html.as_bytes()), None);
    }

    #[test]
    fn the_header_wins_over_meta() {
        let (bytes, _, _) = SHIFT_JIS.encode("<meta charset=gbk><p>こんにちは、世界。</p>");
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=shift_jis"), None);
        assert_eq!(encoding, "Shift_JIS");
        assert!(text.contains("こんにちは"));
    }

    #[test]
    fn a_wrong_declaration_falls_back_to_detection() {
        let bytes = gbk(&page("<meta charset=utf-8>", CHAPTER));
        let (text, encoding) = decode_html(&bytes, None, None);
        assert_eq!(encoding, "GBK");
        assert!(text.contains(CHAPTER));
    }

    #[test]
    fn a_byte_order_mark_wins_over_everything() {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        bytes.extend_from_slice(page("<meta charset=gbk>", CHAPTER).as_bytes());
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=gbk"), None);
        assert_eq!(encoding, "UTF-8");
        assert!(text.starts_with("<!DOCTYPE"));
        assert!(text.contains(CHAPTER));

        let mut utf16 = vec![0xFF, 0xFE];
        for unit in "<p>你好</p>".encode_utf16() {
            utf16.extend_from_slice(&unit.to_le_bytes());
        }
        let (text, encoding) = decode_html(&utf16, None, None);
        assert_eq!(encoding, UTF_16LE.name());
        assert_eq!(text, "<p>你好</p>");
    }

    #[test]
    fn meta_utf16_means_utf8() {
        let html = "<meta charset=utf-16><p>你好</p>";
        assert_eq!(prescan_meta_charset(html.as_bytes()), Some(UTF_8));
    }

    #[test]
    fn plain_utf8_is_detected() {
        let (text, encoding) = decode_html(page("", CHAPTER).as_bytes(), None, None);
        assert_eq!(encoding, "UTF-8");
        assert!(text.contains(CHAPTER));
    }

    fn encode(encoding: &'static Encoding, text: &str) -> Vec<u8> {
        let (bytes, _, had_errors) = encoding.encode(text);
        assert!(!had_errors, "{} cannot encode {text}", encoding.name());
        bytes.into_owned()
    }

    const TRADITIONAL: &str = "第一章 風起\n　　夜色如墨，少年推開了那扇沉重的木門。\n\
        他知道，從今天起，一切都將不同。師父曾說過，江湖險惡，人心難測。";

    #[test]
    fn big5_is_honoured_when_declared_and_detected_when_not() {
        let bytes = encode(encoding_rs::BIG5, &traditional_page("", TRADITIONAL));
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=big5"), None);
        assert_eq!(encoding, "Big5");
        assert!(text.contains(TRADITIONAL));
        let meta = encode(
            encoding_rs::BIG5,
            &traditional_page("<meta charset=big5>", TRADITIONAL),
        );
        assert_eq!(decode_html(&meta, None, None).1, "Big5");
        let tw = Url::parse("http://www.example.com.tw/1.html").unwrap();
        let (text, encoding) = decode_html(&bytes, Some("text/html"), Some(&tw));
        assert_eq!(encoding, "Big5");
        assert!(text.contains(TRADITIONAL));
        let (text, encoding) = decode_html(&bytes, None, None);
        assert_eq!(encoding, "Big5");
        assert!(text.contains(TRADITIONAL));
    }

    #[test]
    fn gb18030_four_byte_characters_survive() {
        // U+20000 and U+2A6A5 (CJK Extension B) and the euro sign need GB18030's
        // four-byte sequences or its one-byte 0x80; GBK has no bytes for the first two.
        let rare = "𠀀和𪚥是罕见字，价格是100€。";
        let text = format!("{CHAPTER}\n{rare}");
        let bytes = encode(encoding_rs::GB18030, &page("", &text));
        for ct in [
            Some("text/html; charset=gb18030"),
            Some("text/html; charset=gbk"),
        ] {
            let (decoded, encoding) = decode_html(&bytes, ct, None);
            assert!(decoded.contains(rare), "{ct:?}: {encoding}");
        }
        let meta = encode(encoding_rs::GB18030, &page("<meta charset=gb18030>", &text));
        let (decoded, encoding) = decode_html(&meta, None, None);
        assert_eq!(encoding, "gb18030");
        assert!(decoded.contains(rare));
    }

    #[test]
    fn malformed_bytes_in_a_declared_charset_become_replacement_characters() {
        let mut bytes = gbk(&page("", CHAPTER));
        // A lone lead byte and a lead byte followed by a control byte.
        let at = bytes.len() / 2;
        bytes.splice(at..at, [0x81, 0x0a, 0xFE]);
        bytes.push(0x81);
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=gbk"), None);
        assert_eq!(encoding, "GBK");
        assert!(text.contains('\u{FFFD}'));
        assert!(text.contains("第一章 风起"));
    }

    #[test]
    fn a_short_utf8_page_with_a_run_of_stray_bytes_stays_utf8() {
        // Found by the hostile-page crawl test: nine invalid bytes in a page of 26 Chinese
        // characters made it "not mostly clean", and windows-1252 won, as mojibake.
        let mut bytes = "<html><body><p>深处的这一段文字仍然应当被读到并且保存下来。</p><p>"
            .as_bytes()
            .to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xf8, 0x88]);
        bytes.extend_from_slice("乱码之后</p></body></html>".as_bytes());
        let (text, encoding) = decode_html(&bytes, Some("text/html; charset=utf-8"), None);
        assert_eq!(encoding, "UTF-8");
        assert!(
            text.contains("仍然应当被读到") && text.contains("乱码之后"),
            "{text}"
        );
        // A Latin-1 page declared UTF-8 still decodes as what it is.
        let latin1: Vec<u8> =
            b"<p>Caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu, na\xefve \xe9l\xe8ve.</p>".to_vec();
        let (text, encoding) = decode_html(&latin1, Some("text/html; charset=utf-8"), None);
        assert_eq!(encoding, "windows-1252");
        assert!(text.contains("Café crème"), "{text}");
    }

    #[test]
    fn garbage_bytes_never_panic() {
        let mut seed = 0x2545_f491_u32;
        for len in [0usize, 1, 2, 3, 7, 100, 5000] {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    seed as u8
                })
                .collect();
            let url = Url::parse("http://xn--fiqs8s.xn--fiqs8s/").unwrap();
            for ct in [
                None,
                Some("text/html; charset=bogus"),
                Some("text/html; charset="),
            ] {
                let _ = decode_html(&bytes, ct, Some(&url));
            }
        }
        for odd in [
            &b"<meta"[..],
            b"<meta charset=",
            b"<meta charset='",
            b"<!--",
            b"<",
            b"<!",
        ] {
            let _ = decode_html(odd, None, None);
        }
    }

    #[test]
    fn tld_hints_are_well_formed() {
        let hint = |s: &str| tld_hint(&Url::parse(s).unwrap());
        assert_eq!(hint("http://www.Example.CN/").as_deref(), Some("cn"));
        assert_eq!(hint("http://example.com./").as_deref(), Some("com"));
        assert_eq!(hint("http://127.0.0.1/"), None);
        assert_eq!(hint("http://[::1]/"), None);
    }

    #[test]
    fn content_type_parameters_are_parsed() {
        assert_eq!(
            charset_from_content_type("text/html; Charset = 'GBK' ").as_deref(),
            Some("GBK")
        );
        assert_eq!(charset_from_content_type("text/html"), None);
        assert_eq!(charset_from_content_type("text/html; charset="), None);
    }
}
