//! Whether a page goes to the browser in [`RenderMode::Auto`](super::RenderMode::Auto): decided
//! from where the page's body should be and what its scripts do, not from the size of its static
//! text, and then from what rendering found on the same site and template earlier in the crawl.
//!
//! The size of a page's static text says little: a chapter written by a script often sits beside
//! a static block of reader comments (书友评论), a sidebar or a list of related chapters of 200 to
//! 600 characters, which the extractor then takes for the page's text; and a short list or tag
//! page with an ad script that calls `document.write` writes no text at all. So [`assess`] reads
//! the parsed document:
//!
//! * **The body's place.** Elements whose `id` or `class` names the body (`content`, `chapter`,
//!   `article`, `txt`, `booktext`, `read`…, and `<article>`) and that are not named as furniture
//!   (`comment`, `sidebar`, `nav`, `footer`, `related`, `ad`, `tip`…) are the page's content
//!   slots. Only the innermost count (a `#main` around `#content` says nothing more), and their
//!   text is counted without scripts and without furniture inside them, links included (a list
//!   page's content is its links). When every such slot is near empty (under
//!   [`SLOT_FILLED_CHARS`]) and the page has a script that is not an ad, the body is missing:
//!   [`Reason::EmptyContent`]. When one slot holds text, the body is present and only a script
//!   that writes text (below) sends the page to the browser.
//! * **What inline scripts do.** Each inline script is read (its string literals decoded from
//!   `\uXXXX`, `\xXX`, percent-encoding and base64) for what it writes: a script that writes
//!   the page (`document.write`, `innerHTML`, jQuery's `.html(`…) from a text payload (string
//!   literals holding at least [`PAYLOAD_PROSE_CHARS`] characters of prose) or from a request
//!   (`fetch`, `XMLHttpRequest`, `$.ajax`…) is writing the page's text:
//!   [`Reason::ScriptWritesText`], whatever the static text holds. An ad or analytics script
//!   is not: one naming an ad or analytics service (`adsbygoogle`, `_hmt`, `cnzz`,
//!   `google-analytics`…) without a payload, or one that only writes tags and a few words given
//!   as literals (`document.write('<script src=…>')`, an `<ins>`, an `<iframe>`, a tracking
//!   pixel). An element that a non-ad script writes into by id (`getElementById('x')`,
//!   `$('#x')`) and that is empty is a slot too, when no named slot holds the body:
//!   [`Reason::ScriptFillsElement`].
//! * **Short pages.** The old rule stays as the last resort for pages without a named slot: a
//!   static text under [`RENDER_BELOW_CHARS`] characters with a
//!   non-ad script that writes something not given as a literal, or with a non-ad external
//!   script and fewer than [`NAVIGATION_LINKS`] links:
//!   [`Reason::ShortText`].
//!
//! **What rendering found before.** The crawl keeps, per host and [`Template`] (the URL path
//! with digit runs folded, the query's keys, and the set of the top levels' tags, ids and
//! classes with digits folded), how many renders gained text (at least [`GAINED_CHARS`]
//! characters of paragraphs the static text lacked) and how many gained nothing. After
//! [`TEMPLATE_TRIALS`] renders of one template that all gained nothing, that template's pages
//! keep their static text (pages arriving while those first renders run wait for them, so a
//! template that does need the browser loses no page and one that does not costs no more than
//! the trials; a waiting page gives its crawl slot back, so the trials do not stall the rest of
//! the crawl) and are counted in
//! [`CrawlStats::render_skipped`](crate::CrawlStats::render_skipped); a template whose renders
//! did gain text keeps being rendered. Renders that failed (no Chromium, a timeout) count
//! neither way, so a page that needed the browser is never stored without it just because the
//! browser was missing.

use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};

use aho_corasick::{AhoCorasick, Input, MatchKind};
use base64::Engine as _;
use ego_tree::iter::Edge;
use scraper::{Html, Node};
use url::Url;

use super::{NAVIGATION_LINKS, RENDER_BELOW_CHARS};
use crate::extract::plain_attr;

/// A content slot holding fewer visible characters than this is empty: a "loading…" line or a
/// chapter heading repeated inside it, not a chapter.
pub const SLOT_FILLED_CHARS: usize = 50;

/// An inline script whose string literals hold at least this many characters of prose (Han
/// characters, and letters of space-separated words) carries text, not an ad's markup (an ad
/// line such as "天才一秒记住本站地址…最快更新！" has about 20).
pub const PAYLOAD_PROSE_CHARS: usize = 80;

/// A render gained text when its text has paragraphs the static text lacked of at least this
/// many characters in all.
pub const GAINED_CHARS: usize = 50;

/// Renders of one template that gained nothing, after which its pages keep their static text.
pub const TEMPLATE_TRIALS: u32 = 3;

/// Why a page is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Every content slot is empty and a script that is not an ad may fill it.
    EmptyContent,
    /// An inline script writes the page from a text payload or from a request.
    ScriptWritesText,
    /// A script writes into an empty element, and no named slot holds the body.
    ScriptFillsElement,
    /// The static text is short, and a script writes or may write it (the rule before content
    /// slots were read).
    ShortText,
}

/// Why `doc` (whose extracted static text is `text`, with `links` links) should be rendered,
/// or `None` when its static text is its text.
pub fn assess(doc: &Html, text: &str, links: usize) -> Option<Reason> {
    assess_scripts(doc, text, links, &scripts_of(doc, None))
}

/// What a same-site script file was read to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptFile {
    /// It writes no page text: no write, no request, no script loaded (a site's settings, a
    /// menu toggle), or an ad's or analytics' code.
    Inert,
    /// It writes, requests or loads code, or it could not be read: it may write the text.
    MayWrite,
}

/// Reads a same-site script file's source for what it can do to the page.
pub fn read_script_file(source: &str) -> ScriptFile {
    let script = read_script(source);
    let loads = SCRIPT_LOADS
        .iter()
        .any(|call| contains_ignoring_case(source, call));
    if script.ad || !(script.writes || script.fetches || loads) {
        ScriptFile::Inert
    } else {
        ScriptFile::MayWrite
    }
}

/// Calls by which a script runs code it does not hold.
const SCRIPT_LOADS: [&str; 8] = [
    "createelement(",
    "import(",
    "importscripts(",
    "eval(",
    "new function(",
    "settimeout(\"",
    "settimeout('",
    "require(",
];

/// Same-site script files read for one page at most; more stay unread (and may write).
pub const MAX_SCRIPT_FILES: usize = 4;

/// What [`decide`] concludes for a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Its static text is its text.
    Static,
    /// It goes to the browser.
    Render(Reason),
    /// It would go to the browser because of same-site script files nobody has read yet: read
    /// them (their addresses are here), then decide again.
    ReadScripts(Vec<Url>),
}

/// [`assess`] for a page served at `page`, knowing what the crawl has read of the site's script
/// files (`known`): a same-site file read as [`ScriptFile::Inert`] counts as an ad's. When the
/// page would be rendered only because of files not read yet, the decision is to read them
/// first: a page with a site script that writes nothing (a short tag page beside `common.js`)
/// then needs no browser, and a page whose script does write still goes to it.
pub fn decide(
    doc: &Html,
    text: &str,
    links: usize,
    page: &Url,
    known: &dyn Fn(&Url) -> Option<ScriptFile>,
) -> Decision {
    let scripts = scripts_of(doc, Some((page, known)));
    match assess_scripts(doc, text, links, &scripts) {
        None => Decision::Static,
        Some(reason) => {
            let unread: Vec<Url> = scripts
                .iter()
                .filter_map(|s| s.unread.clone())
                .take(MAX_SCRIPT_FILES)
                .collect();
            if unread.is_empty() {
                Decision::Render(reason)
            } else {
                Decision::ReadScripts(unread)
            }
        }
    }
}

fn assess_scripts(doc: &Html, text: &str, links: usize, scripts: &[Script]) -> Option<Reason> {
    if scripts.is_empty() {
        return None;
    }
    if scripts.iter().any(|s| s.text_source() && !s.ad) && scripts.iter().any(|s| s.writes && !s.ad)
    {
        return Some(Reason::ScriptWritesText);
    }
    // Only a script that is not an ad's, or one writing into an element that is not named as
    // furniture (an ad's `#ad_top_3` is), can send the page on from here: most pages of a site
    // whose scripts are all ads stop before the walk over their elements.
    let may_fill = |s: &Script| {
        s.writes
            && !s.ad
            && (s.in_slot || s.targets.iter().any(|t| !any_name_word(t, is_furniture)))
    };
    if !scripts.iter().any(|s| !s.ad_like() || may_fill(s)) {
        return None;
    }
    let targets: HashSet<&str> = scripts
        .iter()
        .filter(|s| s.writes && !s.ad)
        .flat_map(|s| s.targets.iter().map(String::as_str))
        .collect();
    let slots = slots_of(doc, &targets);
    if slots.named.iter().any(|&fill| fill >= SLOT_FILLED_CHARS) {
        return None; // the body is there
    }
    // A script that writes into the empty slot, or sits in it, fills it however little it
    // writes; any other script but an ad's may.
    let fills = |s: &Script| {
        s.writes && !s.ad && (s.in_slot || s.targets.iter().any(|t| slots.empty_named.contains(t)))
    };
    if !slots.named.is_empty() && scripts.iter().any(|s| !s.ad_like() || fills(s)) {
        return Some(Reason::EmptyContent);
    }
    let fills_unnamed = |s: &Script| {
        !s.ad_like() && s.opaque_write && s.targets.iter().any(|t| slots.empty_unnamed.contains(t))
    };
    if scripts.iter().any(fills_unnamed) {
        return Some(Reason::ScriptFillsElement);
    }
    let chars = text.chars().filter(|c| !c.is_whitespace()).count();
    if chars < RENDER_BELOW_CHARS {
        let opaque = scripts
            .iter()
            .any(|s| s.inline && !s.ad_like() && s.opaque_write);
        let external = scripts.iter().any(|s| !s.inline && !s.ad);
        if opaque || (external && links < NAVIGATION_LINKS) {
            return Some(Reason::ShortText);
        }
    }
    None
}

/// What one `<script>` element does, as far as its source says.
#[derive(Debug, Default)]
struct Script {
    inline: bool,
    /// Names an ad or analytics service (and carries no text payload), or is a common library
    /// (jQuery…) loaded by address.
    ad: bool,
    /// Writes into the document (`document.write`, `innerHTML`, jQuery's `.html(`…).
    writes: bool,
    /// Some write's value is not a string literal: a variable, a response, a decoded string.
    opaque_write: bool,
    /// Its string literals hold at least [`PAYLOAD_PROSE_CHARS`] of prose.
    payload: bool,
    /// Requests data (`fetch`, `XMLHttpRequest`, `$.ajax`…).
    fetches: bool,
    /// Ids of elements it selects (`getElementById('x')`, `$('#x')`).
    targets: Vec<String>,
    /// It sits inside a named content element (a `document.write` in place).
    in_slot: bool,
    /// A same-site file not read yet, which the page's decision may hang on.
    unread: Option<Url>,
}

impl Script {
    /// Text comes from it: a payload in its literals or a response.
    fn text_source(&self) -> bool {
        self.payload || self.fetches
    }

    /// An ad or analytics script, or one that only writes markup given as literals (an
    /// `<ins>`, an `<iframe>`, a `<script src>`, a pixel).
    fn ad_like(&self) -> bool {
        self.ad || (self.writes && !self.opaque_write && !self.text_source())
    }
}

/// Names of ad and analytics services and calls, found in a script's source.
const AD_MARKERS: [&str; 30] = [
    "adsbygoogle",
    "googletag",
    "googlesyndication",
    "doubleclick",
    "google-analytics",
    "googletagmanager",
    "gtag(",
    "_gaq",
    "ga('",
    "ga(\"",
    "_hmt",
    "hm.baidu.com",
    "cpro.baidu",
    "pos.baidu",
    "cnzz",
    "_czc",
    "umeng",
    "51.la",
    "tongji",
    "fbq(",
    "_paq",
    "matomo",
    "piwik",
    "yandex",
    "adsense",
    "/ad/",
    "sendbeacon",
    "analytics",
    "union.",
    "baidustatic",
];

/// Words of an external script's address that name an ad or analytics script, or a common
/// library that writes no page text of its own.
const AD_SRC_WORDS: [&str; 32] = [
    "ad",
    "ads",
    "adv",
    "advert",
    "gg",
    "guanggao",
    "tongji",
    "stat",
    "stats",
    "analytics",
    "track",
    "tracker",
    "pixel",
    "cnzz",
    "umeng",
    "hm",
    "gtag",
    "gtm",
    "ga",
    "adsbygoogle",
    "pagead",
    "googlesyndication",
    "jquery",
    "bootstrap",
    "swiper",
    "zepto",
    "layer",
    "lazyload",
    "polyfill",
    "modernizr",
    "html5shiv",
    "respond",
];

/// Calls whose argument is what they write.
const CALL_WRITES: [&str; 11] = [
    "document.write(",
    "document.writeln(",
    ".html(",
    ".append(",
    ".prepend(",
    ".text(",
    ".load(",
    "createtextnode(",
    ".replacewith(",
    ".before(",
    ".after(",
];

/// Properties whose assigned value is what they write.
const PROPERTY_WRITES: [&str; 4] = [".innerhtml", ".outerhtml", ".textcontent", ".innertext"];

/// Calls by which a script asks a server for data.
const FETCH_CALLS: [&str; 9] = [
    "fetch(",
    "xmlhttprequest",
    "$.ajax",
    "$.get(",
    "$.post(",
    "$.getjson",
    "jquery.ajax",
    "axios",
    ".load(",
];

/// What the crawl knows of a page's script files: the page's address (whose host is the
/// site's) and what was read of them.
type SiteScripts<'a> = (&'a Url, &'a dyn Fn(&Url) -> Option<ScriptFile>);

/// The scripts of `doc` that a browser runs (a JSON or template `<script>` is data).
fn scripts_of(doc: &Html, site: Option<SiteScripts<'_>>) -> Vec<Script> {
    let mut scripts = Vec::new();
    let mut base: Option<Url> = None;
    for node in doc.tree.nodes() {
        let Some(el) = scraper::ElementRef::wrap(node) else {
            continue;
        };
        if el.value().name() != "script" {
            continue;
        }
        let kind = plain_attr(el.value(), "type").unwrap_or("").trim();
        let runs = kind.is_empty()
            || kind.eq_ignore_ascii_case("module")
            || contains_ignoring_case(kind, "javascript")
            || contains_ignoring_case(kind, "ecmascript");
        if !runs {
            continue;
        }
        if let Some(src) = plain_attr(el.value(), "src") {
            let lower = src.to_ascii_lowercase();
            let mut ad = words(&lower).any(|w| AD_SRC_WORDS.contains(&w))
                || AD_MARKERS.iter().any(|m| lower.contains(m));
            let mut unread = None;
            if !ad
                && let Some((page, known)) = site
                // The page's `<base>` is looked for only when a script file needs it.
                && let Ok(file) = base
                    .get_or_insert_with(|| crate::extract::base_url(doc, page))
                    .join(src)
                && file.host_str() == page.host_str()
                && file.port_or_known_default() == page.port_or_known_default()
            {
                match known(&file) {
                    Some(ScriptFile::Inert) => ad = true,
                    Some(ScriptFile::MayWrite) => {}
                    None => unread = Some(file),
                }
            }
            scripts.push(Script {
                ad,
                unread,
                ..Script::default()
            });
            continue;
        }
        // A script's source is one text node; it is copied only when the parser split it.
        let mut texts = el.text();
        let first = texts.next().unwrap_or("");
        let source: Cow<'_, str> = match texts.next() {
            None => Cow::Borrowed(first),
            Some(second) => Cow::Owned([first, second].into_iter().chain(texts).collect()),
        };
        if source.trim().is_empty() {
            continue;
        }
        let mut script = read_script(&source);
        script.in_slot = el
            .ancestors()
            .take(32)
            .filter_map(|a| a.value().as_element())
            .any(|a| naming(a) == Naming::Content);
        scripts.push(script);
    }
    scripts
}

fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// What [`read_script`] looks for, each a role (some words have two: `.load(` writes and
/// fetches).
mod role {
    pub const CALL_WRITE: u8 = 1;
    pub const PROPERTY_WRITE: u8 = 2;
    pub const FETCH: u8 = 4;
    pub const INSERT_ADJACENT: u8 = 8;
    pub const TARGET_BY_ID: u8 = 16;
    pub const TARGET_BY_SELECTOR: u8 = 32;
    pub const AD: u8 = 64;
}

/// The words [`read_script`] looks for in a script, matched in one pass with ASCII case
/// ignored: the decision runs on every page of a crawl in `--render auto`, the default, so its
/// scan of each inline script must cost little next to the page's extraction.
///
/// Matches are leftmost-longest and do not overlap, so that the search skips ahead with a
/// prefilter. No calling word lies inside another, so none is lost to a longer match (`.load(`
/// is one word with two roles). An ad marker can cover the start of a call (`union.html(`), so
/// after the first marker the rest of the script is searched for calls alone.
struct ScriptWords {
    /// The calling words, then [`AD_MARKERS`].
    all: AhoCorasick,
    /// The calling words alone (the same pattern ids as in `all`).
    calls: AhoCorasick,
    /// The roles of each word.
    roles: Vec<u8>,
}

static SCRIPT_WORDS: LazyLock<ScriptWords> = LazyLock::new(|| {
    let mut words: Vec<(&'static str, u8)> = Vec::new();
    let add = |words: &mut Vec<(&'static str, u8)>, word: &'static str, role: u8| match words
        .iter_mut()
        .find(|(w, _)| *w == word)
    {
        Some((_, roles)) => *roles |= role,
        None => words.push((word, role)),
    };
    CALL_WRITES
        .iter()
        .for_each(|w| add(&mut words, w, role::CALL_WRITE));
    PROPERTY_WRITES
        .iter()
        .for_each(|w| add(&mut words, w, role::PROPERTY_WRITE));
    FETCH_CALLS
        .iter()
        .for_each(|w| add(&mut words, w, role::FETCH));
    add(&mut words, "insertadjacenthtml(", role::INSERT_ADJACENT);
    add(&mut words, "getelementbyid(", role::TARGET_BY_ID);
    for call in ["queryselector(", "$(", "jquery("] {
        add(&mut words, call, role::TARGET_BY_SELECTOR);
    }
    let calls = words.len();
    AD_MARKERS.iter().for_each(|w| add(&mut words, w, role::AD));
    assert!(
        words[..calls]
            .iter()
            .all(|&(_, roles)| roles & role::AD == 0),
        "an ad marker is also a calling word"
    );
    let build = |words: &[(&str, u8)]| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(words.iter().map(|(w, _)| w))
            .expect("the script words build an automaton")
    };
    ScriptWords {
        all: build(&words),
        calls: build(&words[..calls]),
        roles: words.iter().map(|&(_, roles)| roles).collect(),
    }
});

/// What an inline script's source says it does: one pass over the source for the words of
/// [`SCRIPT_WORDS`], and one over its string literals for prose, stopping once a payload is
/// found.
fn read_script(source: &str) -> Script {
    let payload = literal_prose(source, PAYLOAD_PROSE_CHARS) >= PAYLOAD_PROSE_CHARS;
    let mut script = Script {
        inline: true,
        payload,
        ..Script::default()
    };
    let words = &*SCRIPT_WORDS;
    let mut ad = false;
    let mut searched = &words.all;
    let mut at = 0;
    while let Some(found) = searched.find(Input::new(source).span(at..source.len())) {
        let roles = words.roles[found.pattern().as_usize()];
        if roles & role::AD != 0 {
            ad = true;
            searched = &words.calls;
            at = found.start() + 1;
            continue;
        }
        at = found.end();
        let rest = &source[found.end()..];
        script.fetches |= roles & role::FETCH != 0;
        if roles & role::CALL_WRITE != 0 {
            let value = rest.trim_start();
            // `.html()`, `r.text()`: a getter.
            if !value.starts_with(')') {
                script.writes = true;
                script.opaque_write |= !is_literal(value);
            }
        }
        if roles & role::PROPERTY_WRITE != 0 {
            let rest = rest.trim_start();
            let value = if let Some(v) = rest.strip_prefix("+=") {
                Some(v)
            } else {
                rest.strip_prefix('=').filter(|v| !v.starts_with('='))
            };
            if let Some(value) = value {
                script.writes = true;
                script.opaque_write |= !is_literal(value.trim_start());
            }
        }
        if roles & role::INSERT_ADJACENT != 0 {
            script.writes = true;
            let value = rest.split_once(',').map_or("", |(_, v)| v.trim_start());
            script.opaque_write |= !is_literal(value);
        }
        if roles & (role::TARGET_BY_ID | role::TARGET_BY_SELECTOR) != 0
            && let Some(id) = selected_id(rest, roles & role::TARGET_BY_ID != 0)
        {
            script.targets.push(id.to_owned());
        }
    }
    script.ad = !payload && ad;
    script
}

/// The id a selecting call names, from the source right after its opening parenthesis:
/// `getElementById('x')` (`by_id`), or `'#x'` for `querySelector`, `$` and `jQuery`.
fn selected_id(rest: &str, by_id: bool) -> Option<&str> {
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let inner = &rest[1..];
    let id = &inner[..inner.find(quote)?];
    let id = if by_id { id } else { id.strip_prefix('#')? };
    (!id.is_empty() && id.chars().all(|c| c.is_alphanumeric() || "-_".contains(c))).then_some(id)
}

/// Characters of prose in the string literals of a script, counted until `enough` is reached.
fn literal_prose(source: &str, enough: usize) -> usize {
    let mut prose = 0;
    for_each_literal(source, |literal| {
        prose += prose_chars(literal);
        prose < enough
    });
    prose
}

/// Calls `f` with each string literal of a script, escapes decoded (`\uXXXX`, `\xXX`, `\n`…),
/// until it returns false. Comments are skipped so that an apostrophe in one does not open a
/// string. A literal without escapes is lent as it stands; one buffer serves the others.
fn for_each_literal(source: &str, mut f: impl FnMut(&str) -> bool) {
    let bytes = source.as_bytes();
    let mut buffer = String::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |n| i + n + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = source[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            quote @ (b'"' | b'\'' | b'`') => {
                let start = i + 1;
                // The literal ends at its quote, at a line's end (but for a template), or at the
                // end of the source; a backslash sends it to the decoding path.
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == quote || b == b'\\' || (b == b'\n' && quote != b'`'))
                    .map_or(bytes.len(), |n| start + n);
                let keep_going = if bytes.get(end) == Some(&b'\\') {
                    buffer.clear();
                    buffer.push_str(&source[start..end]);
                    i = decode_literal_rest(source, end, char::from(quote), &mut buffer);
                    f(&buffer)
                } else {
                    i = end + 1;
                    f(&source[start..end])
                };
                if !keep_going {
                    return;
                }
            }
            _ => i += 1,
        }
    }
}

/// Decodes a literal quoted by `quote` from `at` (a backslash) on into `literal`, and returns
/// the index after it.
fn decode_literal_rest(source: &str, at: usize, quote: char, literal: &mut String) -> usize {
    let mut chars = source[at..].char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '\\' => match chars.next().map(|(_, c)| c) {
                Some(x @ ('u' | 'x')) => {
                    let digits = if x == 'u' { 4 } else { 2 };
                    let mut code = 0u32;
                    let mut valid = true;
                    for _ in 0..digits {
                        match chars.next().and_then(|(_, d)| d.to_digit(16)) {
                            Some(d) => code = code * 16 + d,
                            None => valid = false,
                        }
                    }
                    if valid && let Some(ch) = char::from_u32(code) {
                        literal.push(ch);
                    }
                }
                Some('n') => literal.push('\n'),
                Some(other) => literal.push(other),
                None => break,
            },
            c if c == quote => break,
            '\n' if quote != '`' => break,
            c => literal.push(c),
        }
    }
    chars.peek().map_or(source.len(), |&(n, _)| at + n)
}

/// Whether a written value (the source from the start of the value on) is made of
/// string literals only, perhaps decoded or joined with harmless values (`unescape("%3Cscript…")`,
/// `'<img src="/s.gif?r=' + escape(document.referrer) + '">'`): what it writes is then in the
/// script's literals. A variable, a response or a function's result makes it opaque.
fn is_literal(value: &str) -> bool {
    let mut literal = false;
    let mut depth = 0usize;
    let mut chars = value.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                literal = true;
                let mut escaped = false;
                for (_, d) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == c {
                        break;
                    }
                }
            }
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => break,
            ')' | ']' => depth -= 1,
            ';' | '\n' | ',' | '}' if depth == 0 => break,
            c if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                let mut end = at + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || matches!(d, '_' | '$' | '.') {
                        end = i + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                if !HARMLESS_VALUES
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(&value[at..end]))
                {
                    return false;
                }
            }
            _ => {}
        }
    }
    literal
}

/// Names a literal-only write may use besides its literals: decoding and encoding functions,
/// and the page's address, referrer, time and screen, which tracking pixels send.
const HARMLESS_VALUES: [&str; 22] = [
    "unescape",
    "escape",
    "decodeuricomponent",
    "encodeuricomponent",
    "encodeuri",
    "decodeuri",
    "atob",
    "document.referrer",
    "document.url",
    "document.location.href",
    "location.href",
    "window.location.href",
    "document.location",
    "location",
    "window.location",
    "math.random",
    "new",
    "date",
    "date.now",
    "gettime",
    "screen.width",
    "screen.height",
];

/// Characters of prose in a literal, after decoding percent-encoding or base64 and dropping
/// markup: Han (and other non-ASCII letters) one each, ASCII letters of words only when the
/// literal has spaces between words (a URL or an identifier is not prose).
fn prose_chars(literal: &str) -> usize {
    let decoded;
    let mut text = literal;
    if literal.matches('%').count() >= 8 {
        decoded = percent_decode(literal);
        text = &decoded;
    } else if literal.len() >= 64
        && literal
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(literal)
        && let Ok(s) = String::from_utf8(bytes)
    {
        decoded = s;
        text = &decoded;
    }
    let spaced = text.matches(' ').count() >= 3;
    if !spaced && text.is_ascii() {
        return 0; // a URL, an identifier, markup: only letters of spaced words count
    }
    let mut count = 0;
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if in_tag => {}
            c if c.is_alphabetic() && !c.is_ascii() => count += 1,
            c if c.is_ascii_alphabetic() && spaced => count += 1,
            _ => {}
        }
    }
    count
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(byte) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Words of an identifier, class list or address: split at every non-alphanumeric character.
fn words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Calls `f` with each word of an `id` or `class` value, camel case split as well
/// (`chapterContent` → `chapter`, `content`), until it returns true.
fn any_name_word(name: &str, mut f: impl FnMut(&str) -> bool) -> bool {
    for word in words(name) {
        let bytes = word.as_bytes();
        let mut start = 0;
        for i in 1..bytes.len() {
            if bytes[i].is_ascii_uppercase() && !bytes[i - 1].is_ascii_uppercase() {
                if f(&word[start..i]) {
                    return true;
                }
                start = i;
            }
        }
        if f(&word[start..]) {
            return true;
        }
    }
    false
}

fn listed(list: &[&str], word: &str) -> bool {
    list.iter().any(|w| w.eq_ignore_ascii_case(word))
}

fn is_furniture(word: &str) -> bool {
    listed(&FURNITURE_WORDS, word)
}

/// Words naming the element that holds a page's body.
const CONTENT_WORDS: [&str; 27] = [
    "content",
    "contents",
    "chapter",
    "chaptercontent",
    "chaptertext",
    "article",
    "articlebody",
    "articlecontent",
    "txt",
    "text",
    "booktext",
    "bookcontent",
    "readcontent",
    "readtext",
    "read",
    "reader",
    "nr",
    "nr1",
    "htmlcontent",
    "txtcontent",
    "novelcontent",
    "acontent",
    "cont",
    "story",
    "entry",
    "post",
    "zhengwen",
];

/// Words naming furniture: what sits beside a page's body or inside it without being it.
const FURNITURE_WORDS: [&str; 63] = [
    "comment",
    "comments",
    "pinglun",
    "pl",
    "reply",
    "replies",
    "review",
    "reviews",
    "sidebar",
    "side",
    "aside",
    "nav",
    "navbar",
    "menu",
    "footer",
    "foot",
    "header",
    "related",
    "relate",
    "recommend",
    "tuijian",
    "hot",
    "rank",
    "share",
    "ad",
    "ads",
    "advert",
    "gg",
    "guanggao",
    "banner",
    "breadcrumb",
    "crumb",
    "crumbs",
    "copyright",
    "login",
    "search",
    "meta",
    "info",
    "tool",
    "tools",
    "toolbar",
    "pager",
    "pagination",
    "btn",
    "button",
    "icon",
    "tip",
    "tips",
    "notice",
    "author",
    "date",
    "time",
    "title",
    "tag",
    "tags",
    "social",
    "widget",
    "popup",
    "download",
    "list",
    "bottom",
    "top",
    "more",
];

/// Ids of the element a single-page application's script fills.
const APP_ROOTS: [&str; 4] = ["app", "root", "__next", "__nuxt"];

/// Elements dropped whole when counting what a slot holds.
const SKIPPED_TAGS: [&str; 12] = [
    "script", "style", "noscript", "template", "head", "nav", "aside", "footer", "header",
    "iframe", "select", "svg",
];

/// The content slots of a page and what they hold.
struct Slots {
    /// Visible characters of each innermost named slot.
    named: Vec<usize>,
    /// Ids of empty named slots that scripts write into.
    empty_named: HashSet<String>,
    /// Ids of other empty elements that scripts write into.
    empty_unnamed: HashSet<String>,
}

/// How an element's `id` and `class` read.
#[derive(PartialEq, Eq)]
enum Naming {
    Content,
    Furniture,
    Neutral,
}

fn naming(el: &scraper::node::Element) -> Naming {
    // `plain_attr`, not `Element::attr`: the walk reads two attributes of every element, and
    // `attr` makes an atom of the name on every call.
    let id = plain_attr(el, "id").unwrap_or("");
    let class = plain_attr(el, "class").unwrap_or("");
    if id.is_empty() && class.is_empty() {
        return if el.name() == "article" {
            Naming::Content
        } else {
            Naming::Neutral
        };
    }
    if APP_ROOTS.contains(&id) {
        return Naming::Content;
    }
    if any_name_word(id, is_furniture) || any_name_word(class, is_furniture) {
        return Naming::Furniture;
    }
    let content = |w: &str| listed(&CONTENT_WORDS, w);
    if el.name() == "article" || any_name_word(id, content) || any_name_word(class, content) {
        Naming::Content
    } else {
        Naming::Neutral
    }
}

/// One open element of the walk in [`slots_of`].
struct Frame<'a> {
    slot: bool,
    skipped: bool,
    /// Its id, when a script writes into it.
    targeted: Option<&'a str>,
    /// Visible characters inside it so far.
    chars: usize,
    /// A named slot is inside it.
    slot_inside: bool,
}

/// The named slots of `doc` (innermost only) with the visible characters each holds, and
/// which elements with an id in `targets` are empty. Walks the tree without recursion (a
/// hostile page nests 100,000 elements).
fn slots_of(doc: &Html, targets: &HashSet<&str>) -> Slots {
    let mut slots = Slots {
        named: Vec::new(),
        empty_named: HashSet::new(),
        empty_unnamed: HashSet::new(),
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut skipping = 0usize;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    let naming = if skipping > 0 {
                        Naming::Furniture
                    } else {
                        naming(el)
                    };
                    let skipped = naming == Naming::Furniture || SKIPPED_TAGS.contains(&el.name());
                    if skipped {
                        skipping += 1;
                    }
                    stack.push(Frame {
                        slot: !skipped && naming == Naming::Content,
                        skipped,
                        targeted: el.id().filter(|id| !skipped && targets.contains(id)),
                        chars: 0,
                        slot_inside: false,
                    });
                }
                Node::Text(text) if skipping == 0 => {
                    if let Some(top) = stack.last_mut() {
                        top.chars += text.chars().filter(|c| !c.is_whitespace()).count();
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if !node.value().is_element() {
                    continue;
                }
                let Some(frame) = stack.pop() else {
                    continue;
                };
                if frame.skipped {
                    skipping -= 1;
                }
                if frame.slot && !frame.slot_inside {
                    slots.named.push(frame.chars);
                }
                if let Some(id) = frame.targeted
                    && frame.chars < SLOT_FILLED_CHARS
                {
                    if frame.slot {
                        slots.empty_named.insert(id.to_owned());
                    } else {
                        slots.empty_unnamed.insert(id.to_owned());
                    }
                }
                if let Some(parent) = stack.last_mut() {
                    parent.chars += frame.chars;
                    parent.slot_inside |= frame.slot || frame.slot_inside;
                }
            }
        }
    }
    slots
}

/// A page's template: its host, URL path shape and top-level skeleton, hashed. Pages of one
/// template were made by the same server code, so what rendering found on a few of them holds
/// for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Template(u64);

impl Template {
    /// The template of `doc` served at `url`: the host and port; the path with every run of
    /// digits folded (`/book/12/345.html` → `/book/#/#.html`) and the query's keys; and the set
    /// of tag, id and class (digits folded) of the elements in the top four levels of `<body>`,
    /// but for ads, scripts and frames, which rotate from page to page of one template.
    pub fn of(url: &Url, doc: &Html) -> Template {
        let mut hasher = DefaultHasher::new();
        crate::urls::host_key(url).hash(&mut hasher);
        fold_digits(url.path()).hash(&mut hasher);
        let mut keys: Vec<&str> = url
            .query()
            .unwrap_or("")
            .split('&')
            .map(|pair| pair.split('=').next().unwrap_or(""))
            .collect();
        keys.sort_unstable();
        keys.hash(&mut hasher);
        let mut skeleton = BTreeSet::new();
        let mut depth = 0usize;
        let mut body_depth = None;
        for edge in doc.tree.root().traverse() {
            match edge {
                Edge::Open(node) => {
                    let Node::Element(el) = node.value() else {
                        continue;
                    };
                    depth += 1;
                    if el.name() == "body" && body_depth.is_none() {
                        body_depth = Some(depth);
                    }
                    if let Some(body) = body_depth
                        && depth - body <= 4
                        && !is_rotating(el)
                    {
                        skeleton.insert(format!(
                            "{}#{}.{}",
                            el.name(),
                            fold_digits(plain_attr(el, "id").unwrap_or("")),
                            fold_digits(plain_attr(el, "class").unwrap_or(""))
                        ));
                    }
                }
                Edge::Close(node) => {
                    if node.value().is_element() {
                        if body_depth == Some(depth) {
                            body_depth = None;
                        }
                        depth -= 1;
                    }
                }
            }
        }
        skeleton.hash(&mut hasher);
        Template(hasher.finish())
    }
}

/// Elements a site's server code places differently from page to page of one template: ads
/// (a rotation shows four of seven slots on one page, five on the next), scripts and frames.
fn is_rotating(el: &scraper::node::Element) -> bool {
    const TAGS: [&str; 7] = [
        "script", "noscript", "style", "ins", "iframe", "link", "meta",
    ];
    TAGS.contains(&el.name())
        || [plain_attr(el, "id"), plain_attr(el, "class")]
            .into_iter()
            .flatten()
            .any(|name| any_name_word(name, |w| listed(&AD_WORDS, w)))
}

/// Words naming an ad's element.
const AD_WORDS: [&str; 9] = [
    "ad",
    "ads",
    "adv",
    "advert",
    "gg",
    "guanggao",
    "banner",
    "adsbygoogle",
    "sponsor",
];

fn fold_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the rendered text has text the static one lacked: paragraphs not in the static
/// text of at least [`GAINED_CHARS`] characters in all.
pub fn gained_text(static_text: &str, rendered_text: &str) -> bool {
    let gained: usize = rendered_text
        .split('\n')
        .map(str::trim)
        .filter(|p| !p.is_empty() && !static_text.contains(p))
        .map(|p| p.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    gained >= GAINED_CHARS
}

/// Pages at most that wait for their template's trials without holding one of the crawl's
/// slots; more wait holding theirs (each waiting page keeps its HTML in memory).
pub(crate) const MAX_PARKED: usize = 256;

/// What rendering found per template in this crawl, and the pages not rendered because of it.
#[derive(Debug, Default)]
pub(crate) struct RenderMemory {
    templates: Mutex<HashMap<Template, Record>>,
    /// Signalled whenever a render of any template is recorded.
    recorded: tokio::sync::Notify,
    skipped: AtomicUsize,
    /// Pages waiting for their template's trials that gave their crawl slot back.
    parked: AtomicUsize,
    /// Signalled when a page parks: the crawl may start another page in its place.
    slot_freed: tokio::sync::Notify,
}

#[derive(Debug, Default, Clone, Copy)]
struct Record {
    /// Renders admitted and not yet recorded as failed.
    started: u32,
    /// Renders recorded, and how many of them gained text.
    finished: u32,
    gained: u32,
}

impl RenderMemory {
    /// Whether a page of `template` that [`assess`] would render is rendered: yes while its
    /// template's first [`TEMPLATE_TRIALS`] renders are being admitted, or once one of them
    /// gained text; no (counted as skipped) once that many finished and none gained. A page
    /// arriving while the trials are still rendering waits for their outcome, so that a
    /// template whose pages do need the browser loses none of them; while it waits it gives its
    /// crawl slot back ([`parked`](Self::parked), up to [`MAX_PARKED`] pages), so that the
    /// trials do not stall the crawl of every other page.
    pub(crate) async fn admit(&self, template: Template) -> bool {
        let mut parked = false;
        let admitted = loop {
            let recorded = self.recorded.notified();
            {
                let mut templates = self.templates.lock().unwrap_or_else(|e| e.into_inner());
                let record = templates.entry(template).or_default();
                if record.gained > 0 {
                    break true;
                }
                if record.started < TEMPLATE_TRIALS {
                    record.started += 1;
                    break true;
                }
                if record.finished >= TEMPLATE_TRIALS {
                    self.skipped.fetch_add(1, Ordering::Relaxed);
                    break false;
                }
            }
            if !parked
                && self
                    .parked
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                        (n < MAX_PARKED).then_some(n + 1)
                    })
                    .is_ok()
            {
                parked = true;
                self.slot_freed.notify_one();
            }
            recorded.await;
        };
        if parked {
            self.parked.fetch_sub(1, Ordering::AcqRel);
        }
        admitted
    }

    /// Pages waiting for their template's trials without a crawl slot.
    pub(crate) fn parked(&self) -> usize {
        self.parked.load(Ordering::Acquire)
    }

    /// Resolves when a page has parked since the last call (or since the crawl began).
    pub(crate) async fn slot_freed(&self) {
        self.slot_freed.notified().await;
    }

    /// Notes the end of an admitted render of a page of `template`: whether it gained text, or
    /// `None` when it failed (it then counts neither way, and another page may try).
    pub(crate) fn record(&self, template: Template, gained: Option<bool>) {
        {
            let mut templates = self.templates.lock().unwrap_or_else(|e| e.into_inner());
            let record = templates.entry(template).or_default();
            match gained {
                Some(gained) => {
                    record.finished += 1;
                    record.gained += u32::from(gained);
                }
                None => record.started = record.started.saturating_sub(1),
            }
        }
        self.recorded.notify_waiters();
    }

    /// Pages not rendered because their template's renders never gained text.
    pub(crate) fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests;
