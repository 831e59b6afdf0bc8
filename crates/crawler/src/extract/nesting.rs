//! A guard against pages nested too deep for the HTML parser.
//!
//! html5ever's tree builder checks the stack of open elements at many start tags ("is there a
//! `<p>` in button scope?"), so its time grows with the square of the nesting depth: a
//! 1.2 MB page of 100,000 nested `<div>`s took 70 s to parse (release build), and an 8 MB one
//! would take hours, stalling a crawl worker that no request timeout covers. Browsers cap the
//! depth instead (Chromium's parser stops nesting at 512 and adds deeper elements as siblings),
//! so a reader still sees all the text. [`parse_html`] does the same before parsing: start and
//! end tags beyond [`MAX_NESTING`] open elements are dropped, text and shallower markup kept.
//!
//! The scan is a linear pass over the markup that knows just enough HTML to count: comments,
//! doctype and processing instructions, void elements, self-closing tags, quoted attribute
//! values and raw-text elements (`script`, `style`, `textarea`, `title`, `xmp`, `noscript`,
//! `iframe`, `noembed`, `noframes`, `plaintext`) whose content holds no tags. It may count
//! deeper than the parser would (it does not know which end tags HTML implies), which only
//! matters for pages already over the limit.

use std::borrow::Cow;

use scraper::Html;

/// Deepest element nesting kept, as in Chromium's HTML parser.
pub const MAX_NESTING: usize = 512;

/// How many open elements an end tag is matched against, from the innermost: a stray end tag
/// must not make the scan quadratic too.
const END_TAG_REACH: usize = 16;

/// Parses an HTML document, first flattening any nesting deeper than [`MAX_NESTING`]:
/// html5ever's tree builder takes time growing with the square of the depth (100,000 nested
/// `<div>`s took 70 s), and browsers cap the depth the same way. What every page the crawler
/// reads goes through.
pub fn parse_html(html: &str) -> Html {
    Html::parse_document(&flatten_deep_nesting(html, MAX_NESTING))
}

/// `html` unchanged when no element is nested deeper than `limit`, else with the start and end
/// tags of deeper elements removed.
pub fn flatten_deep_nesting(html: &str, limit: usize) -> Cow<'_, str> {
    if scan(html, limit, None) {
        let mut out = String::with_capacity(html.len());
        scan(html, limit, Some(&mut out));
        Cow::Owned(out)
    } else {
        Cow::Borrowed(html)
    }
}

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];

const RAW_TEXT: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "noscript",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
];

/// Elements whose end tag may be omitted, closed by the start of another of their kind.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "rb",
    "rt", "rp", "colgroup",
];

/// One open element: its lower-case name and whether its tags were dropped.
struct Open {
    name: String,
    dropped: bool,
}

/// Walks the markup counting open elements. Without `out`, returns whether the nesting ever
/// exceeds `limit`; with it, copies everything but the tags of elements deeper than `limit`.
fn scan(html: &str, limit: usize, mut out: Option<&mut String>) -> bool {
    let bytes = html.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut exceeded = false;
    let mut i = 0;
    let mut copied = 0;
    while let Some(offset) = position_of(b'<', &bytes[i..]) {
        let at = i + offset;
        let rest = &bytes[at..];
        // Comments, doctype, CDATA and processing instructions: skipped whole.
        if rest.starts_with(b"<!--") {
            i = find(bytes, at + 4, b"-->").map_or(bytes.len(), |e| e + 3);
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            i = find(bytes, at + 2, b">").map_or(bytes.len(), |e| e + 1);
            continue;
        }
        let closing = rest.starts_with(b"</");
        let name_start = at + if closing { 2 } else { 1 };
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            // Not a tag: a lone `<` in text.
            i = at + 1;
            continue;
        }
        let name_end = (name_start..bytes.len())
            .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'-' || bytes[j] == b':'))
            .unwrap_or(bytes.len());
        let name = html[name_start..name_end].to_ascii_lowercase();
        let tag_end = tag_end(bytes, name_end);
        let self_closing = tag_end >= 2 && bytes[tag_end - 2] == b'/';
        let drop_tag = if closing {
            // Matched against the innermost open elements only.
            let reach = stack.len().saturating_sub(END_TAG_REACH);
            match (reach..stack.len()).rev().find(|&k| stack[k].name == name) {
                Some(k) => {
                    let dropped = stack[k].dropped;
                    stack.truncate(k);
                    dropped
                }
                None => false,
            }
        } else if VOID.contains(&name.as_str()) || self_closing {
            stack.len() >= limit
        } else {
            // An element whose end tag HTML lets a page leave out (`<p>`, `<li>`, `<td>`…)
            // ends where the next one of its kind starts: a sibling, not a child.
            if OPTIONAL_END.contains(&name.as_str()) {
                let reach = stack.len().saturating_sub(END_TAG_REACH);
                if let Some(k) = (reach..stack.len()).rev().find(|&k| stack[k].name == name) {
                    stack.truncate(k);
                }
            }
            let dropped = stack.len() >= limit;
            exceeded |= dropped;
            if out.is_none() && exceeded {
                return true;
            }
            stack.push(Open {
                name: name.clone(),
                dropped,
            });
            dropped
        };
        if let Some(out) = out.as_deref_mut()
            && drop_tag
        {
            out.push_str(&html[copied..at]);
            copied = tag_end;
        }
        i = tag_end;
        // Raw text: nothing inside is a tag, up to the element's own end tag.
        // (Its end tag is then read as any other.)
        if !closing && !self_closing && RAW_TEXT.contains(&name.as_str()) {
            i = find_end_tag(bytes, i, name.as_bytes());
        }
    }
    if let Some(out) = out {
        out.push_str(&html[copied..]);
    }
    exceeded
}

/// The index just past the `>` ending a tag whose name ends at `from`, skipping quoted
/// attribute values; the end of the input for an unterminated tag.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote: Option<u8> = None;
    for (j, &b) in bytes.iter().enumerate().skip(from) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return j + 1,
            None => {}
        }
    }
    bytes.len()
}

/// Where the end tag `</name` (any case) begins at or after `from`, or the end of the input.
fn find_end_tag(bytes: &[u8], from: usize, name: &[u8]) -> usize {
    let mut j = from;
    while let Some(offset) = position_of(b'<', &bytes[j..]) {
        let at = j + offset;
        let candidate = &bytes[at..];
        if candidate.len() >= 2 + name.len()
            && candidate[1] == b'/'
            && candidate[2..2 + name.len()].eq_ignore_ascii_case(name)
        {
            return at;
        }
        j = at + 1;
    }
    bytes.len()
}

/// Where `needle` first occurs at or after `from`.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn position_of(byte: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pages_are_left_as_they_are() {
        let html = "<!doctype html><html><head><title>a<b</title><script>if (a<b) x='</div>'</script>\
                    </head><body><div class=\"a>b\"><p>一<br>二<img src=x /></p></div><!-- <div> --></body></html>";
        assert!(matches!(flatten_deep_nesting(html, 4), Cow::Borrowed(_)));
    }

    #[test]
    fn tags_deeper_than_the_limit_are_dropped_and_their_text_kept() {
        let html = format!(
            "<html><body>{}<p>深处</p>{}<p>之后</p></body></html>",
            "<div>".repeat(10),
            "</div>".repeat(10)
        );
        let flat = flatten_deep_nesting(&html, 5);
        // html, body and three divs are kept; the deeper divs and the p go.
        assert_eq!(flat.matches("<div>").count(), 3, "{flat}");
        assert_eq!(flat.matches("</div>").count(), 3, "{flat}");
        assert!(
            flat.contains("深处") && flat.contains("<p>之后</p>"),
            "{flat}"
        );
        let doc = parse_html(&html);
        let text: String = doc.root_element().text().collect();
        assert_eq!(text, "深处之后");
    }

    #[test]
    fn a_hundred_thousand_nested_elements_parse_in_linear_time() {
        // Found by the hostile-page crawl test: 70 s of parsing before this guard.
        let depth = 100_000;
        let html = format!(
            "<html><body>{}<p>深处的文字</p>{}</body></html>",
            "<div><b>".repeat(depth),
            "</b></div>".repeat(depth)
        );
        let flat = flatten_deep_nesting(&html, MAX_NESTING);
        assert!(flat.len() < 20_000, "{} bytes left", flat.len());
        let text: String = parse_html(&html).root_element().text().collect();
        assert_eq!(text, "深处的文字");
    }

    #[test]
    fn paragraphs_and_list_items_left_open_are_siblings_not_a_deep_nest() {
        // Old pages often never close their <p> or <li>: thousands of them are not deep.
        let html = format!(
            "<html><body><ul>{}</ul>{}</body></html>",
            "<li>一项".repeat(3_000),
            "<p>一段".repeat(3_000)
        );
        assert!(matches!(flatten_deep_nesting(&html, 16), Cow::Borrowed(_)));
    }

    #[test]
    fn unterminated_markup_never_panics() {
        for html in [
            "<",
            "<div",
            "<div a=\"",
            "</",
            "<!--",
            "<!",
            "<script>",
            "<a<b<c",
            "<\u{4e00}>",
        ] {
            let _ = flatten_deep_nesting(html, 1);
            let _ = flatten_deep_nesting(&html.repeat(3), 1);
        }
    }
}
