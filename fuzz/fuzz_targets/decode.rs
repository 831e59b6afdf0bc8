//! Arbitrary bytes, a fuzzed `Content-Type` header and a fuzzed host → `decode_html`, which
//! must never panic whatever the bytes or the charset label:
//!
//! * the encoding it names is a real `encoding_rs` encoding under its canonical name, never
//!   `replacement`;
//! * it is deterministic;
//! * a byte order mark wins, and the text is the rest decoded by the BOM's encoding;
//! * bytes that are valid UTF-8 and declare no charset (no usable header charset, no `<meta>`)
//!   decode to themselves;
//! * `charset_from_content_type` gives a non-empty, trimmed value.
#![no_main]

use copytrace_crawler::decode::{charset_from_content_type, decode_html, prescan_meta_charset};
use encoding_rs::Encoding;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use url::Url;

/// Labels worth trying besides fuzzed ones: the usual Chinese ones, the odd ones the HTML
/// standard treats specially, and ones `encoding_rs` does not know.
const LABELS: &[&str] = &[
    "utf-8",
    "gbk",
    "gb2312",
    "gb18030",
    "big5",
    "shift_jis",
    "utf-16le",
    "utf-16be",
    "x-user-defined",
    "replacement",
    "iso-2022-kr",
    "windows-1252",
    "no-such-charset",
];

/// Hosts whose last label is a usable detector hint, is not, or is not a domain.
const HOSTS: &[&str] = &[
    "http://novel.example.cn/1.html",
    "http://example.jp/",
    "http://example.tw./",
    "http://127.0.0.1/",
    "http://[::1]/",
    "http://xn--fiqs8s.xn--fiqs8s/",
    "http://a.b-c/",
    "file:///tmp/x.html",
];

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let content_type: Option<String> = match u.int_in_range(0..=3)? {
        0 => None,
        1 => Some(format!("text/html; charset={}", u.choose(LABELS)?)),
        2 => Some(format!("text/html; charset=\"{}\"", u.arbitrary::<&str>()?)),
        _ => Some(u.arbitrary::<String>()?),
    };
    let url = match u.int_in_range(0..=HOSTS.len())? {
        0 => None,
        i => Some(Url::parse(HOSTS[i - 1]).expect("valid URL")),
    };
    let bytes = u.take_rest();

    let (text, name) = decode_html(bytes, content_type.as_deref(), url.as_ref());
    let encoding = Encoding::for_label(name.as_bytes()).expect("a known encoding");
    assert_eq!(encoding.name(), name, "not a canonical name");
    assert_ne!(encoding, encoding_rs::REPLACEMENT, "replacement encoding");
    assert_eq!(
        decode_html(bytes, content_type.as_deref(), url.as_ref()),
        (text.clone(), name),
        "decoding is deterministic"
    );

    if let Some((bom, length)) = Encoding::for_bom(bytes) {
        assert_eq!(encoding, bom, "the byte order mark must win");
        let (expected, _) = bom.decode_without_bom_handling(&bytes[length..]);
        assert_eq!(text, expected);
        return Ok(());
    }

    let header = content_type.as_deref().and_then(charset_from_content_type);
    if let Some(label) = &header {
        assert!(
            !label.is_empty() && label.trim() == label,
            "label {label:?}"
        );
    }
    let declared = header
        .is_some_and(|label| Encoding::for_label_no_replacement(label.as_bytes()).is_some())
        || prescan_meta_charset(bytes).is_some();
    if !declared && let Ok(utf8) = std::str::from_utf8(bytes) {
        assert_eq!(text, utf8, "valid UTF-8 without a declaration was changed");
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
