//! Which selectors a page's own `<style>` blocks hide.
//!
//! Pirate sites poison copies by sprinkling hidden text through a chapter: an inline
//! `style="display:none"` is easy to see, but just as common is a class hidden by a rule in a
//! `<style>` block (`.jm{display:none}` … `<font class="jm">3Kq9x</font>`). This module reads
//! the page's `<style>` text and returns the selector lists of the top-level rules that set
//! `display: none` or `visibility: hidden`. Rules inside at-rules (`@media`, `@supports`, ...)
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

/// Whether a declaration block sets `display: none` or `visibility: hidden`.
pub(super) fn hides(declarations: &str) -> bool {
    let compact: String = declarations
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    compact.split(';').any(|d| {
        let Some((property, value)) = d.split_once(':') else {
            return false;
        };
        let value = value.strip_suffix("!important").unwrap_or(value);
        matches!(
            (property, value),
            ("display", "none") | ("visibility", "hidden")
        )
    })
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
