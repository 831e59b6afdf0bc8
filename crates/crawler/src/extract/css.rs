//! Which selectors a page's own `<style>` blocks hide.
//!
//! Pirate sites poison copies by sprinkling hidden text through a chapter: an inline
//! `style="display:none"` is easy to see, but just as common is a class hidden by a rule in a
//! `<style>` block (`.jm{display:none}` … `<font class="jm">3Kq9x</font>`). This module reads
//! the page's `<style>` text and returns the selector lists of the top-level rules that hide
//! their elements ([`hides`]: `display: none`, `visibility: hidden`, zero font size or opacity,
//! a clipped or zero-sized box, far off-screen positioning). Rules inside at-rules (`@media`, `@supports`, ...)
//! are skipped: they hide things only on some screens, and a responsive layout hides the
//! desktop copy of content on phones and vice versa. External stylesheets are not fetched.

/// At most this many hiding rules are used; each one costs a pass over the document.
const MAX_RULES: usize = 200;

/// Returns the selector lists (as written, e.g. `".jm , span.dn"`) of the top-level rules in
/// `css` whose declarations hide their elements.
pub(super) fn hiding_selectors(css: &str) -> Vec<String> {
    let css = strip_comments(css);
    let mut out = Vec::new();
    let mut rest = css.as_str();
    while let Some(open) = rest.find('{') {
        let prelude = rest[..open].trim();
        let Some(close) = matching_brace(&rest[open..]) else {
            break;
        };
        let block = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        // A statement at-rule (`@import url(x);`) can precede a rule in the same prelude.
        let prelude = prelude.rsplit(';').next().unwrap_or("").trim();
        if prelude.is_empty() || prelude.starts_with('@') {
            continue;
        }
        if hides(block) && out.len() < MAX_RULES {
            out.push(prelude.to_owned());
        }
    }
    out
}

/// Whether a declaration block makes its element invisible to a reader: `display: none`,
/// `visibility: hidden`, a zero `font-size` or `opacity`, a zero-sized box whose overflow is
/// hidden (or a `clip` to nothing), or an absolutely positioned box moved far off the screen
/// (`left: -9999px`). These are the ways pirate sites hide their anti-copy characters; each
/// leaves the text in the HTML and out of what anyone sees.
pub(super) fn hides(declarations: &str) -> bool {
    let compact: String = declarations
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let mut properties: Vec<(&str, &str)> = Vec::new();
    for declaration in compact.split(';') {
        let Some((property, value)) = declaration.split_once(':') else {
            continue;
        };
        let value = value.strip_suffix("!important").unwrap_or(value);
        properties.push((property, value));
    }
    // The last declaration of a property wins, as in a browser.
    let get = |name: &str| {
        properties
            .iter()
            .rev()
            .find(|(property, _)| *property == name)
            .map(|(_, value)| *value)
    };
    if get("display") == Some("none") || get("visibility") == Some("hidden") {
        return true;
    }
    if get("font-size").is_some_and(is_zero_length) || get("opacity").is_some_and(is_zero_number) {
        return true;
    }
    let overflow_hidden = get("overflow").is_some_and(|v| v == "hidden" || v == "clip");
    let zero_box =
        get("width").is_some_and(is_zero_length) || get("height").is_some_and(is_zero_length);
    if overflow_hidden && zero_box {
        return true;
    }
    let positioned = get("position").is_some_and(|v| v == "absolute" || v == "fixed");
    if positioned {
        if get("clip").is_some() && clips_to_nothing(declarations) {
            return true;
        }
        if ["left", "top", "right", "bottom"]
            .into_iter()
            .any(|side| get(side).is_some_and(is_far_off_screen))
        {
            return true;
        }
    }
    false
}

/// Whether the (last) `clip` declaration is `rect()` of nothing but zero lengths, read from the
/// declarations as written: `rect(0px 0px 0px 0px)` separates its lengths by spaces only, which
/// the compacted form of [`hides`] would run together.
fn clips_to_nothing(declarations: &str) -> bool {
    let Some(value) = declarations
        .split(';')
        .filter_map(|d| d.split_once(':'))
        .filter(|(property, _)| property.trim().eq_ignore_ascii_case("clip"))
        .map(|(_, value)| value.trim().to_ascii_lowercase())
        .next_back()
    else {
        return false;
    };
    let value = value
        .strip_suffix("!important")
        .unwrap_or(&value)
        .trim_end();
    let Some(inner) = value
        .strip_prefix("rect(")
        .and_then(|v| v.strip_suffix(')'))
    else {
        return false;
    };
    let mut lengths = inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .peekable();
    lengths.peek().is_some() && lengths.all(is_zero_length)
}

/// `0`, `0px`, `0.0em`, `0%`: a length of nothing.
fn is_zero_length(value: &str) -> bool {
    let number = value.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%');
    !number.is_empty() && number.parse::<f64>().is_ok_and(|n| n == 0.0)
}

/// `0`, `.0`, `0%`: an opacity of nothing.
fn is_zero_number(value: &str) -> bool {
    let number = value.strip_suffix('%').unwrap_or(value);
    number.parse::<f64>().is_ok_and(|n| n == 0.0)
}

/// A negative offset that puts a box off any screen: at least 500 CSS pixels (or 30 em/rem, or
/// a viewport's width) to the left or above. Small negative offsets are layout, not hiding.
fn is_far_off_screen(value: &str) -> bool {
    let split = value
        .find(|c: char| c.is_ascii_alphabetic() || c == '%')
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let Ok(number) = number.parse::<f64>() else {
        return false;
    };
    let limit = match unit {
        "px" | "" => -500.0,
        "em" | "rem" => -30.0,
        "vw" | "vh" | "%" => -100.0,
        "pt" => -375.0,
        _ => return false,
    };
    number <= limit
}

/// Removes `/* … */` comments and the `<!--`/`-->` wrappers old pages put around CSS.
fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = match rest[start + 2..].find("*/") {
            Some(end) => &rest[start + 2 + end + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out.replace("<!--", " ").replace("-->", " ")
}

/// Given text starting with `{`, the byte offset of the brace that closes it.
fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_hiding_rules_are_found_and_media_queries_are_not() {
        let css = r#"
            <!--
            body { background: #e9e4d9 }
            /* .commented { display: none } */
            .jm , span.dn { display : none ; }
            #TextContent { font-size: 20px }
            .ghost { color: red; VISIBILITY: Hidden }
            @media (max-width: 720px) { .hide720 { display: none } .x { display: none } }
            @import url(a.css); .after-import { display:none }
            .shown { display: block } .none-ish { display: nonexistent }
            .important { display: none !important }
            -->"#;
        assert_eq!(
            hiding_selectors(css),
            [".jm , span.dn", ".ghost", ".after-import", ".important"]
        );
    }

    #[test]
    fn every_way_of_hiding_text_from_a_reader_is_seen() {
        for hidden in [
            "display:none",
            "visibility: hidden",
            "font-size:0",
            "font-size: 0px",
            "FONT-SIZE: 0.0em !important",
            "opacity:0",
            "opacity: .0",
            "opacity:0%",
            "width:0;height:0;overflow:hidden",
            "height: 0px; overflow: hidden",
            "position:absolute;left:-9999px",
            "position: fixed; top: -10000px",
            "position:absolute; left:-100em",
            "position:absolute;clip:rect(0,0,0,0)",
            "position:absolute;clip:rect(0 0 0 0)",
            "position: absolute; clip: rect(0px 0px 0px 0px)",
            "position:absolute;clip:rect(0px, 0px, 0px, 0px) !important",
            "display:block;display:none",
        ] {
            assert!(hides(hidden), "{hidden}");
        }
        for shown in [
            "display:inline",
            "font-size:16px",
            "font-size:0.9em",
            "opacity:0.5",
            "opacity:1",
            "height:0",
            "overflow:hidden",
            "position:relative;left:-9999px",
            "position:absolute;left:-20px",
            "position:absolute;top:-2em",
            "left:-9999px",
            "position:absolute;clip:rect(0,10px,10px,0)",
            "position: absolute; clip: rect(0px 10px 10px 0px)",
            "display:none;display:block",
            "margin-left:-9999px",
        ] {
            assert!(!hides(shown), "{shown}");
        }
    }

    #[test]
    fn broken_css_does_not_panic() {
        for css in [
            "",
            "{",
            "}",
            ".a {",
            ".a { display:none",
            "/*",
            "@media {{{",
            "a{}}b{display:none}",
        ] {
            let _ = hiding_selectors(css);
        }
    }
}
