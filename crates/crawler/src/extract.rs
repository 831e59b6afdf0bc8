//! Main-text, title and link extraction from HTML.
//!
//! The approach is a small, predictable cousin of Readability:
//!
//! 1. Drop boilerplate subtrees: `script, style, noscript, nav, footer, aside, iframe, figure`
//!    (and a few more such as `select`, `svg`, `template`), hidden elements, and
//!    elements whose `class`/`id` looks like navigation, ads, comments, sidebars,
//!    share/recommend widgets, breadcrumbs, bylines, disclaimers or copyright footers — in
//!    English and in the pinyin that Chinese sites use (`guanggao`, `tuijian`, ...). A class
//!    name that reads as content (`content`, `article`, `chapter`, ...) without a boilerplate
//!    word protects its element, so `<div class="main has-sidebar">` survives while
//!    `<div class="comment-content">` does not. Class rules judge what sits *beside* the
//!    content, never what holds it: an element containing the heading that repeats the title
//!    or an `itemprop="articleBody"` is kept whatever its class says (`content-sidebar-wrap`,
//!    a blog's `widget Blog` box), and so is an element whose name mixes a boilerplate word
//!    and a content word when it holds at least half of the page's text (a wrapper such as
//!    `sidebar-and-content-body` around an article whose headline differs from the title; a
//!    `comment-content` never holds that much). A BEM modifier (`row--sidebar`,
//!    `l-outer--nav`) is not read, since it says how a block is laid out rather than what it
//!    holds.
//!
//!    *Hidden* means the `hidden` attribute, or an inline style or a top-level rule of the
//!    page's own `<style>` blocks (class, id and descendant selectors; see the `css`
//!    submodule) that sets `display:none`, `visibility:hidden`, a zero `font-size` or
//!    `opacity`, a zero-sized box with hidden overflow, a clip to nothing, or an absolute
//!    position far off the screen. The same rules apply to a page rendered by Chromium (the
//!    rendered DOM keeps its styles). Pirate
//!    sites sprinkle such text through chapters to poison copies, and no reader sees it, so
//!    it is dropped. The exception is a hidden element holding at least half of the page's
//!    text: that is an article hidden until a script shows it (WeChat pages do this).
//! 2. Score every remaining block element by its paragraph text: its own text (text not inside
//!    a nested block) plus the own text of its child paragraphs (`<p>`, blocks without
//!    nested blocks, and text-less wrappers around a single `<p>`, as on pages that put every
//!    paragraph in its own `<div>`). Link text does not count, so menus and chapter lists
//!    score nothing.
//!    Headings name the text and are not text: an `<h1>`–`<h6>` never wins and adds nothing
//!    to its parent's score, so a headline box with a one-line kicker cannot beat the article.
//!    Blocks near the heading that repeats the page title (inside the heading's grandparent)
//!    score triple: a chapter or article sits next to its heading, while a book blurb in a
//!    sidebar, a comment list or a list of related stories usually does not, and on a short
//!    chapter those can hold more text than the chapter itself.
//! 3. Take the highest-scoring element (the deeper one on ties) and render it with its block
//!    structure: block boundaries and `<br>` end a paragraph, whitespace runs (including
//!    `&nbsp;` and the ideographic space used for indentation) collapse to one space, every
//!    paragraph is trimmed, empty and link-dominated paragraphs are dropped, and so are whole
//!    blocks whose text is mostly links ("More on this story" lists with their heading) and
//!    that hold little else (a wrapper whose menus outweigh its article keeps the article).
//!
//!    The text may be spread over several blocks (an article in sibling sections, a page
//!    builder's text columns). When the page has a heading that repeats its title, or else
//!    when the best block holds under 70 % of the page's prose, every paragraph of at least
//!    60 characters outside boilerplate, outside list items and outside runs of repeated items
//!    joins it, in page order, while short lines elsewhere (dates, categories, widget
//!    headings), lists of long items and reply threads (book blurbs, reviews, forum replies:
//!    sibling blocks of one shape, each with a link line and no heading; the `items`
//!    submodule) stay out. Where a paragraph sits decides too: with a title heading, only
//!    paragraphs inside the *column* (the smallest element holding the heading and the best
//!    block, or the `<article>` around it) join, so a notice in a sidebar or a paywall line in
//!    a rail stays out, and a navigation bar (`<nav>`, a chapter `<select>`, a pager) between a
//!    paragraph and the best block, where the two part, keeps out a book's description under
//!    the pager or a story's summary above the chapter menu. The short lines, subheadings and
//!    lists that share a container with a joined paragraph join with it (a section's own).
//! 4. Clean the paragraphs (the `lines` submodule): site ads written into the text
//!    ("天才一秒记住本站地址…", "最新章节请访问…"), page furniture ("本章未完，点击下一页继续阅读",
//!    "(本章完)", "Advertisement"), byline and editor lines at the ends, the heading repeated
//!    at the start, author notes, disclaimers and full-width domain watermarks inside
//!    sentences. Paragraphs are joined with `'\n'`.
//!
//! If class-based dropping leaves no text at all, the page is scored again with only the tag
//! and hidden rules, so an over-eager class match cannot empty a page.
//!
//! Measured on the hand-marked pages in `tests/fixtures/extract/` by the `extract` integration
//! test (character precision and recall).
//!
//! The DOM is walked iteratively (`html5ever` happily builds trees thousands of levels deep from
//! malformed input), and nothing here panics on any input.

mod css;
mod items;
mod lines;
mod nesting;

pub use nesting::{MAX_NESTING, flatten_deep_nesting, parse_html};

use std::collections::{HashMap, HashSet};

use ego_tree::iter::Edge;
use ego_tree::{NodeId, NodeRef};
use scraper::node::Element;
use scraper::{ElementRef, Html, Node, Selector};
use url::Url;

/// What [`extract`] found in a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The page title: `<title>`, or the first `<h1>` when the title is missing or empty.
    pub title: Option<String>,
    /// The main text, paragraphs separated by `'\n'`.
    pub text: String,
    /// Absolute `http`/`https` links found anywhere in the page (navigation included), without
    /// fragments, deduplicated, in document order.
    pub links: Vec<Url>,
}

/// Extracts the title, the main text and the links of an HTML document. Relative links are
/// resolved against `<base href>` if present, else against `base`.
pub fn extract(html: &str, base: &Url) -> Extracted {
    extract_document(&parse_html(html), base)
}

/// [`extract`] on a document parsed already, so a caller that also reads the links of the page
/// (the crawler's link discovery) parses each page once.
pub fn extract_document(doc: &Html, base: &Url) -> Extracted {
    let title = title(doc);
    Extracted {
        text: main_text(doc, title.as_deref()),
        title,
        links: links(doc, base),
    }
}

/// The title and main text of a parsed document, without [`Extracted::links`]: the crawler
/// classifies links itself ([`crate::links::discover_in`]) and would only throw these away.
pub fn title_and_text(doc: &Html) -> (Option<String>, String) {
    let title = title(doc);
    let text = main_text(doc, title.as_deref());
    (title, text)
}

/// The elements called `names` (in any namespace), in the order `Html::select` yields them:
/// the tree's storage order, attached elements only. What `Html::select` does for a selector of
/// bare tag names, without the general selector-matching machinery, which took a tenth of the
/// extraction time for the half-dozen lookups of a page.
pub(crate) fn elements_named<'a>(
    doc: &'a Html,
    names: &'a [&'a str],
) -> impl Iterator<Item = ElementRef<'a>> + 'a {
    doc.tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .filter(|el| el.parent().is_some() && names.contains(&el.value().name()))
}

/// An attribute in no namespace, as `Element::attr` and the `[name]` selector read it (without
/// turning `name` into an atom on every call).
pub(crate) fn plain_attr<'a>(el: &'a Element, name: &str) -> Option<&'a str> {
    el.attrs.iter().find_map(|entry| {
        let key = &entry.0;
        let value: &str = &entry.1;
        (key.prefix.is_none() && key.ns.is_empty() && &*key.local == name).then_some(value)
    })
}

/// The `href` of the first `<base href>`, resolved against `page` when it is an `http(s)` URL.
pub(crate) fn base_url(doc: &Html, page: &Url) -> Url {
    elements_named(doc, &["base"])
        .find_map(|el| plain_attr(el.value(), "href"))
        .and_then(|href| page.join(href.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| page.clone())
}

fn title(doc: &Html) -> Option<String> {
    let from = |name: &'static str| {
        elements_named(doc, &[name])
            .map(|el| collapse_whitespace(&el.text().collect::<String>()))
            .find(|t| !t.is_empty())
    };
    from("title").or_else(|| from("h1"))
}

fn links(doc: &Html, page: &Url) -> Vec<Url> {
    let base = base_url(doc, page);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for el in elements_named(doc, &["a", "area"]) {
        let Some(href) = plain_attr(el.value(), "href") else {
            continue;
        };
        let Ok(mut url) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            continue;
        }
        url.set_fragment(None);
        if seen.insert(url.as_str().to_owned()) {
            out.push(url);
        }
    }
    out
}

/// Tags whose whole subtree is never main text. `figure` holds illustrations with their
/// captions and credits, which the expected texts do not count as the work.
fn is_excluded_tag(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "noscript"
            | "nav"
            | "footer"
            | "aside"
            | "iframe"
            | "head"
            | "title"
            | "template"
            | "svg"
            | "canvas"
            | "select"
            | "button"
            | "textarea"
            | "object"
            | "embed"
            | "video"
            | "audio"
            | "map"
            | "dialog"
            | "menu"
            | "figure"
    )
}

/// Tags that start a new paragraph. A `match` rather than a list: it is asked about every
/// element in every pass over the page.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "blockquote"
            | "body"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "main"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}

/// Class/id words that mark boilerplate when they are a whole word of a class name.
fn is_boilerplate_whole_word(word: &str) -> bool {
    matches!(
        word,
        "ad"
            | "ads"
            | "adv"
            | "advert"
            | "adverts"
            | "advertisement"
            | "advertising"
            | "adsense"
            | "adsbygoogle"
            | "banner"
            | "banners"
            | "sidebar"
            | "side"
            | "nav"
            | "navbar"
            | "navi"
            | "navigation"
            | "menu"
            | "menus"
            | "comment"
            | "comments"
            | "footer"
            | "foot"
            | "share"
            | "sharing"
            | "recommend"
            | "recommended"
            | "recommendation"
            | "related"
            | "breadcrumb"
            | "breadcrumbs"
            | "crumbs"
            | "copyright"
            | "social"
            | "sponsor"
            | "sponsored"
            | "promo"
            | "popup"
            | "modal"
            | "cookie"
            | "cookies"
            | "login"
            | "signup"
            | "subscribe"
            | "newsletter"
            | "widget"
            | "widgets"
            | "toolbar"
            | "topbar"
            | "masthead"
            | "header"
            | "pager"
            | "pagination"
            | "statement"
            | "disclaimer"
            | "byline"
            | "dateline"
            | "writtenby"
            | "caption"
            | "author"
            | "authors"
            | "bio"
            | "meta"
            | "metadata"
            | "rating"
            | "ratings"
            | "discuss"
            | "reply"
            | "replies"
            | "respond"
            | "sociable"
            | "tags"
            | "summary"
            | "jianjie"
            // pinyin used by Chinese sites
            | "gg"
            | "guanggao"
            | "tuijian"
            | "pinglun"
            | "fenxiang"
            | "daohang"
            | "banquan"
            | "xiangguan"
            | "shengming"
    )
}

/// Words that also mark boilerplate as the start or end of a longer word (`topnav`,
/// `commentlist`, `footerwrap`).
const BOILERPLATE_AFFIXES: &[&str] = &[
    "nav",
    "menu",
    "sidebar",
    "comment",
    "footer",
    "share",
    "recommend",
    "breadcrumb",
    "copyright",
    "advert",
    "banner",
    "sponsor",
    "guanggao",
    "tuijian",
    "pinglun",
    "caption",
    "related",
    "author",
    "meta",
    "rating",
    "reply",
    "discuss",
];

/// Class/id words that mark main content.
fn is_content_word(word: &str) -> bool {
    matches!(
        word,
        "content"
            | "article"
            | "main"
            | "body"
            | "post"
            | "entry"
            | "chapter"
            | "story"
            | "text"
            | "txt"
            | "zhengwen"
            | "neirong"
            | "read"
            | "reader"
            | "novel"
    )
}

/// ARIA roles that mark boilerplate.
const BOILERPLATE_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "menu",
    "menubar",
    "search",
    "dialog",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Tag, hidden and class/id rules.
    Full,
    /// Tag and hidden rules only (fallback).
    TagsOnly,
}

/// How much a block's score is multiplied by when it sits near the title heading.
const NEAR_TITLE_BOOST: usize = 3;

/// What the rules need to know about the whole page before judging single elements.
struct Page {
    /// Elements that a rule in the page's own `<style>` blocks hides.
    css_hidden: HashSet<NodeId>,
    /// Hidden elements that hold at least half of the page's text. They are hidden only until
    /// a script shows them (WeChat article pages ship `#js_content` with
    /// `visibility: hidden`), so they count as visible. Poison text is always a small part of
    /// a page, so this never revives it.
    revealed: HashSet<NodeId>,
    /// The grandparent of the heading that repeats the page title. The article or chapter
    /// sits next to its heading, while sidebars, blurbs and comment lists sit further away, so
    /// blocks inside this element score [`NEAR_TITLE_BOOST`] times their text.
    anchor: Option<NodeId>,
    /// Elements that hold the page's heading or a marked article body. Whatever their class
    /// names say, they are not boilerplate: a layout wrapper called `content-sidebar-wrap` or a
    /// blog's `widget Blog` box holds the article itself, and dropping it drops the text.
    /// Class rules judge what sits *beside* the content, never what contains it.
    content_ancestors: HashSet<NodeId>,
    /// The heading that repeats the page title.
    heading: Option<NodeId>,
}

impl Page {
    fn new(doc: &Html, title: Option<&str>) -> Page {
        let heading = title_heading(doc, title);
        let mut content_ancestors = HashSet::new();
        let marked = doc.tree.nodes().filter(|node| {
            node.value().as_element().is_some_and(|el| {
                plain_attr(el, "itemprop")
                    .is_some_and(|p| p.trim().eq_ignore_ascii_case("articleBody"))
            })
        });
        for node in heading.into_iter().chain(marked) {
            for ancestor in node.ancestors() {
                if !content_ancestors.insert(ancestor.id()) {
                    break;
                }
            }
        }
        let mut page = Page {
            css_hidden: css_hidden(doc),
            revealed: HashSet::new(),
            anchor: heading.map(|h| {
                let parent = h.parent().unwrap_or(h);
                parent.parent().unwrap_or(parent).id()
            }),
            content_ancestors,
            heading: heading.map(|h| h.id()),
        };
        // Only hidden elements can be revealed and only elements with a mixed name can be
        // wrappers: a page without any (most pages) needs no count of its text.
        if !page.any_hidden_or_mixed(doc) {
            return page;
        }
        let (total, counted) = page.hidden_text_lens(doc.tree.root());
        for (id, len, hidden) in counted {
            if len * 2 >= total.max(1) {
                if hidden {
                    page.revealed.insert(id);
                } else {
                    page.content_ancestors.insert(id);
                }
            }
        }
        page
    }

    /// Whether any element of the document is hidden (by [`Page::hides_with`]) or has a
    /// [mixed name](mixed_name); a quick look at attributes, without the text counts of
    /// [`Page::hidden_text_lens`].
    fn any_hidden_or_mixed(&self, doc: &Html) -> bool {
        !self.css_hidden.is_empty()
            || doc.tree.nodes().any(|node| match node.value() {
                Node::Element(el) => {
                    let attrs = KnownAttrs::of(el);
                    self.hides_with(node, &attrs) || mixed_name(attrs.class, attrs.id)
                }
                _ => false,
            })
    }

    /// The page's text length and that of every hidden element and every element with a
    /// [mixed name](mixed_name) (`true` for hidden), in one pass (per-element walks would be
    /// quadratic on the deeply nested trees of malformed pages). Text under excluded tags
    /// (scripts, styles, ...) does not count.
    fn hidden_text_lens(&self, root: NodeRef<'_, Node>) -> (usize, Vec<(NodeId, usize, bool)>) {
        let mut hidden = Vec::new();
        // Text length of each open element; the bottom entry is the whole document.
        let mut open: Vec<usize> = vec![0];
        let mut skip: Option<NodeId> = None;
        for edge in root.traverse() {
            match edge {
                Edge::Open(node) if skip.is_none() => match node.value() {
                    Node::Element(el) if is_excluded_tag(el.name()) => {
                        skip = Some(node.id());
                    }
                    Node::Element(_) => open.push(0),
                    Node::Text(text) => {
                        if let Some(top) = open.last_mut() {
                            *top += lines::significant_len(text);
                        }
                    }
                    _ => {}
                },
                Edge::Close(node) => {
                    if skip.is_some() {
                        if skip == Some(node.id()) {
                            skip = None;
                        }
                        continue;
                    }
                    let Node::Element(el) = node.value() else {
                        continue;
                    };
                    let len = open.pop().unwrap_or(0);
                    if let Some(parent) = open.last_mut() {
                        *parent += len;
                    }
                    let attrs = KnownAttrs::of(el);
                    if self.hides_with(node, &attrs) {
                        hidden.push((node.id(), len, true));
                    } else if mixed_name(attrs.class, attrs.id) {
                        hidden.push((node.id(), len, false));
                    }
                }
                Edge::Open(_) => {}
            }
        }
        (open.first().copied().unwrap_or(0), hidden)
    }

    /// Whether an element, whose attributes are read already, is hidden by the `hidden`
    /// attribute, its inline style or the page's stylesheet (ignoring [`Page::revealed`]).
    fn hides_with(&self, node: NodeRef<'_, Node>, attrs: &KnownAttrs<'_>) -> bool {
        attrs.hidden
            || attrs.style.is_some_and(css::hides)
            || !self.css_hidden.is_empty() && self.css_hidden.contains(&node.id())
    }

    fn is_excluded(&self, node: NodeRef<'_, Node>, el: &Element, mode: Mode) -> bool {
        let name = el.name();
        if is_excluded_tag(name) {
            return true;
        }
        let attrs = KnownAttrs::of(el);
        if self.hides_with(node, &attrs)
            && (self.revealed.is_empty() || !self.revealed.contains(&node.id()))
        {
            return true;
        }
        if mode == Mode::TagsOnly
            || matches!(name, "html" | "body" | "main" | "article")
            || self.content_ancestors.contains(&node.id())
        {
            return false;
        }
        if let Some(role) = attrs.role
            && BOILERPLATE_ROLES.contains(&role.trim().to_ascii_lowercase().as_str())
        {
            return true;
        }
        looks_like_boilerplate(attrs.class, attrs.id)
    }
}

/// The attributes the exclusion rules read, found in one look at the element's attributes.
/// `Element::attr` turns the name asked for into an atom on every call, which cost more than
/// the rules themselves when asked five times per element per pass.
#[derive(Default)]
struct KnownAttrs<'a> {
    hidden: bool,
    style: Option<&'a str>,
    role: Option<&'a str>,
    class: Option<&'a str>,
    id: Option<&'a str>,
}

impl<'a> KnownAttrs<'a> {
    fn of(el: &'a Element) -> KnownAttrs<'a> {
        let mut known = KnownAttrs::default();
        for entry in el.attrs.iter() {
            let name = &entry.0;
            // As `Element::attr`: plain attributes only, not `xlink:role` and the like.
            if name.prefix.is_some() || !name.ns.is_empty() {
                continue;
            }
            let value: &str = &entry.1;
            match &*name.local {
                "hidden" => known.hidden = true,
                "style" => known.style = Some(value),
                "role" => known.role = Some(value),
                "class" => known.class = Some(value),
                "id" => known.id = Some(value),
                _ => {}
            }
        }
        known
    }
}

/// Elements matched by the hiding rules of the page's `<style>` blocks.
fn css_hidden(doc: &Html) -> HashSet<NodeId> {
    let mut hidden = HashSet::new();
    for style in elements_named(doc, &["style"]) {
        let css: String = style.text().collect();
        for list in css::hiding_selectors(&css) {
            // One selector the parser does not support must not void the others in its list.
            for one in list.split(',') {
                if let Ok(selector) = Selector::parse(one.trim()) {
                    hidden.extend(doc.select(&selector).map(|el| el.id()));
                }
            }
        }
    }
    hidden
}

/// The longest `h1`–`h3` whose text occurs in the title.
fn title_heading<'a>(doc: &'a Html, title: Option<&str>) -> Option<NodeRef<'a, Node>> {
    let title: String = title?.chars().filter(|c| !c.is_whitespace()).collect();
    let heading = elements_named(doc, &["h1", "h2", "h3"])
        .map(|h| {
            let text: String = h
                .text()
                .flat_map(str::chars)
                .filter(|c| !c.is_whitespace())
                .collect();
            (text.chars().count(), text, h)
        })
        .filter(|(len, text, _)| *len >= 2 && title.contains(text.as_str()))
        .fold(
            None,
            |best: Option<(usize, NodeRef<'_, Node>)>, (len, _, h)| match best {
                Some((best_len, _)) if best_len >= len => best,
                _ => Some((len, *h)),
            },
        )?
        .1;
    Some(heading)
}

/// Whether class and id values name boilerplate: some class name (or the id) contains a
/// boilerplate word, and no class name reads purely as content.
fn looks_like_boilerplate(class: Option<&str>, id: Option<&str>) -> bool {
    let names = class
        .into_iter()
        .flat_map(str::split_whitespace)
        .chain(id.map(str::trim));
    let mut boilerplate = false;
    let mut content = false;
    // One buffer for the words of every name: this runs for every element in every pass.
    let mut word = String::new();
    for name in names {
        // A BEM modifier (`item-content__row--sidebar`, `l-outer--nav`) says how a block is
        // laid out or styled, not what it holds.
        let name = name.split_once("--").map_or(name, |(block, _)| block);
        if any_word(name, &mut word, is_boilerplate_word) {
            boilerplate = true;
        } else if any_word(name, &mut word, is_content_word) {
            content = true;
        }
    }
    boilerplate && !content
}

/// Whether a class name (or the id) mixes a boilerplate word and a content word. Such a name
/// is ambiguous: `comment-content` is a comment's text, but `content-sidebar-wrap` and
/// `sidebar-and-content-body` are layout wrappers around the article and its sidebar. One
/// that holds at least half of the page's text is a wrapper ([`Page::new`] then keeps it
/// like an ancestor of the title heading); a comment's text never holds that much.
fn mixed_name(class: Option<&str>, id: Option<&str>) -> bool {
    let mut word = String::new();
    class
        .into_iter()
        .flat_map(str::split_whitespace)
        .chain(id.map(str::trim))
        .any(|name| {
            let name = name.split_once("--").map_or(name, |(block, _)| block);
            any_word(name, &mut word, is_content_word)
                && any_word(name, &mut word, is_boilerplate_word)
        })
}

fn is_boilerplate_word(word: &str) -> bool {
    is_boilerplate_whole_word(word)
        || BOILERPLATE_AFFIXES
            .iter()
            .any(|a| word.len() > a.len() && (word.starts_with(a) || word.ends_with(a)))
}

/// Splits a class name into lower-case words at non-alphanumerics and camelCase humps:
/// `"topNav-list_2"` → `["top", "nav", "list", "2"]`.
#[cfg(test)]
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    any_word(name, &mut String::new(), |w| {
        out.push(w.to_owned());
        false
    });
    out
}

/// Whether `test` holds for one of the [words](words) of a class name, each built in `word`.
fn any_word(name: &str, word: &mut String, mut test: impl FnMut(&str) -> bool) -> bool {
    word.clear();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                if test(word) {
                    return true;
                }
                word.clear();
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            if test(word) {
                return true;
            }
            word.clear();
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    !word.is_empty() && test(word)
}

fn main_text(doc: &Html, title: Option<&str>) -> String {
    let root = doc.tree.root();
    let page = Page::new(doc, title);
    for mode in [Mode::Full, Mode::TagsOnly] {
        if let Some(best) = best_block(root, mode, &page) {
            let mut paragraphs = lines::clean_rendered(render(best.node, mode, &page, None), title);
            let own = paragraphs
                .iter()
                .map(|p| lines::significant_len(p))
                .sum::<usize>();
            // Cheap tests first: no paragraph of the spread's length can lie outside the best
            // block when the rest of the page holds fewer characters, and the best block
            // cannot hold under a share of the page's prose when it holds that share of all
            // the page's text.
            if mode == Mode::Full
                && best.page_text >= own + SPREAD_PROSE_MIN
                && (page.heading.is_some()
                    || own * SPREAD_SHARE.1 < best.page_text * SPREAD_SHARE.0)
                && could_spread(root, best.node, &page)
                && let Some(spread) = spread_text(root, best.node, own, &page, title)
            {
                paragraphs = spread;
            }
            if !paragraphs.is_empty() {
                return paragraphs.join("\n");
            }
        }
    }
    String::new()
}

/// Below this share (numerator, denominator) of the page's prose, the best block is one part
/// of a text spread over several ([`spread_text`]).
const SPREAD_SHARE: (usize, usize) = (7, 10);

/// Shortest paragraph (significant characters) that counts as prose outside the best block.
const SPREAD_PROSE_MIN: usize = 60;

/// The page's text when the best block holds under [`SPREAD_SHARE`] of its prose: articles
/// split over sibling sections, text columns of page builders, a chapter whose paragraphs sit
/// in blocks of their own. Then every paragraph of at least [`SPREAD_PROSE_MIN`] characters
/// outside boilerplate (the class, tag and hiding rules, link lists) joins the best block's
/// paragraphs, in page order. Short lines outside the best block (dates, bylines, widget
/// headings) stay out, and so do list items (`<li>`, `<dd>`) and runs of repeated items
/// ([`items::repeated_items`]): lists of book blurbs, reviews and replies are lists of long
/// items, while an article's own lists are inside its best block or short, and its sections
/// open with headings. On a page with a title heading this applies whatever share the best
/// block holds, but only to paragraphs that [`Place::admits`] (in the title's column, no
/// navigation bar between); the short lines, subheadings and lists sharing a container with
/// a joined paragraph then join too. `None` on a page without a title heading when the best
/// block holds enough of the prose: it keeps exactly the best block's text.
fn spread_text(
    root: NodeRef<'_, Node>,
    best: NodeRef<'_, Node>,
    own: usize,
    page: &Page,
    title: Option<&str>,
) -> Option<Vec<String>> {
    let own_paragraphs: HashSet<String> = render(best, Mode::Full, page, None)
        .into_iter()
        .map(|r| r.text)
        .collect();
    let items = items::repeated_items(root, Mode::Full, page);
    let mut layout = Layout {
        best: best.id(),
        span: (0, 0),
        fences: Vec::new(),
    };
    let all = render_laid_out(root, Mode::Full, page, Some(&items), Some(&mut layout));
    let place = Place::new(best, page, layout);
    let mut keep: Vec<bool> = all
        .iter()
        .map(|r| {
            own_paragraphs.contains(&r.text)
                || (r.significant_len >= SPREAD_PROSE_MIN && !r.in_item && place.admits(r))
        })
        .collect();
    // The short lines, subheadings and lists of a section that the spread took in: what sits
    // in the same container as one of its long paragraphs is the same text.
    let homes: HashSet<NodeId> = all
        .iter()
        .zip(&keep)
        .filter(|(r, kept)| **kept && !own_paragraphs.contains(&r.text))
        .filter_map(|(r, _)| container(best, r))
        .collect();
    if !homes.is_empty() {
        for (r, kept) in all.iter().zip(keep.iter_mut()) {
            if !*kept
                && !r.in_repeat
                && container(best, r).is_some_and(|c| homes.contains(&c))
                && place.admits(r)
            {
                *kept = true;
            }
        }
    }
    let kept: Vec<lines::Rendered> = all
        .into_iter()
        .zip(keep)
        .filter_map(|(r, kept)| kept.then_some(r))
        .collect();
    let spread = lines::clean_rendered(kept, title);
    let total = spread
        .iter()
        .map(|p| lines::significant_len(p))
        .sum::<usize>();
    (page.heading.is_some() || own * SPREAD_SHARE.1 < total * SPREAD_SHARE.0).then_some(spread)
}

/// Whether a paragraph that [`spread_text`] would take could lie outside the best block: a
/// run of [`SPREAD_PROSE_MIN`] characters between block boundaries, outside excluded elements
/// and list items, in the title's column ([`title_column`]) or, without a title heading, in
/// the page. An upper bound from one walk of that text, which spares most pages (a chapter
/// under its heading and pager) the spread's renders of the whole page.
fn could_spread(root: NodeRef<'_, Node>, best: NodeRef<'_, Node>, page: &Page) -> bool {
    let scope = title_column(best, page).unwrap_or(root);
    let mut run = 0usize;
    let mut skip: Option<NodeId> = None;
    for edge in scope.traverse() {
        match edge {
            Edge::Open(node) => {
                if skip.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Element(el) => {
                        if node.id() == best.id()
                            || matches!(el.name(), "li" | "dd")
                            || (node.id() != scope.id() && page.is_excluded(node, el, Mode::Full))
                        {
                            run = 0;
                            skip = Some(node.id());
                        } else if is_block(el.name()) {
                            run = 0;
                        }
                    }
                    Node::Text(text) => {
                        run += lines::significant_len(text);
                        if run >= SPREAD_PROSE_MIN {
                            return true;
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(id) = skip {
                    if id == node.id() {
                        skip = None;
                    }
                    continue;
                }
                if let Node::Element(el) = node.value()
                    && is_block(el.name())
                {
                    run = 0;
                }
            }
        }
    }
    false
}

/// The title's column: the smallest element holding the best block and the heading that
/// repeats the title, or the `<article>` around it. `None` without a title heading.
fn title_column<'a>(best: NodeRef<'a, Node>, page: &Page) -> Option<NodeRef<'a, Node>> {
    let heading = best.tree().get(page.heading?)?;
    let up: Vec<NodeId> = std::iter::once(best)
        .chain(best.ancestors())
        .map(|n| n.id())
        .collect();
    let meet = std::iter::once(heading)
        .chain(heading.ancestors())
        .find(|a| up.contains(&a.id()))?;
    let article = std::iter::once(meet).chain(meet.ancestors()).find(|a| {
        a.value()
            .as_element()
            .is_some_and(|e| e.name() == "article")
    });
    Some(article.unwrap_or(meet))
}

/// The block holding a rendered paragraph's block: the parent of its `<p>` (or heading, or
/// text block), or of its list when it is a list item. `tree` is any node of the document.
fn container(tree: NodeRef<'_, Node>, r: &lines::Rendered) -> Option<NodeId> {
    let is = |n: &NodeRef<'_, Node>, test: fn(&str) -> bool| {
        n.value().as_element().is_some_and(|e| test(e.name()))
    };
    let at = tree.tree().get(r.at?.0)?;
    let mut block = at.ancestors().find(|a| is(a, is_block))?;
    if is(&block, |name| matches!(name, "li" | "dd" | "dt")) {
        block = block
            .ancestors()
            .find(|a| is(a, |name| matches!(name, "ul" | "ol" | "dl")))?;
    }
    block.parent().map(|p| p.id())
}

/// What a render of the whole page records about its layout for [`spread_text`].
struct Layout {
    /// The best block.
    best: NodeId,
    /// Text nodes met before the best block opened and when it closed.
    span: (u32, u32),
    /// Navigation bars (see [`is_fence`]): text nodes met before each, and its parent.
    fences: Vec<(u32, NodeId)>,
}

/// Longest text (significant characters) of a dropped block that [`is_fence`] reads as a
/// navigation bar: a pager or a chapter bar has a few words, a related-stories box has
/// headlines.
const FENCE_MAX_TEXT: usize = 40;

/// Whether a dropped element is a navigation bar that closes or opens a text: `<nav>`,
/// `<select>` (a chapter menu), or a short block that is mostly link text ("Page 1 of 3 Next
/// page »", "« Prev | Chapters | Next »").
fn is_fence(node: NodeRef<'_, Node>, el: &Element) -> bool {
    if matches!(el.name(), "nav" | "select") {
        return true;
    }
    if is_excluded_tag(el.name()) {
        return false;
    }
    let (mut text, mut links) = (0usize, 0usize);
    for d in node.descendants() {
        if let Node::Text(t) = d.value() {
            let n = lines::significant_len(t);
            text += n;
            if text > FENCE_MAX_TEXT {
                return false;
            }
            let in_link = d
                .ancestors()
                .take_while(|a| a.id() != node.id())
                .any(|a| a.value().as_element().is_some_and(|e| e.name() == "a"));
            if in_link {
                links += n;
            }
        }
    }
    text > 0 && links * 2 > text
}

/// Where the text of a page lies, for [`spread_text`]: the column of the best block and the
/// navigation bars around it.
///
/// A paragraph outside the best block joins it only from within the *column*: the smallest
/// element holding both the best block and the heading that repeats the title (widened to the
/// `<article>` around it, when there is one, for pages that head the article with a box of
/// its own). A sidebar's notice, a rail's paywall note or the comment column sit beside that
/// element, not in it. Within the column, a paragraph that a navigation bar separates from
/// the best block, at the level where the two part (a pager under the chapter, then a book's
/// description; a chapter menu between a story's summary and the story), is not the text.
struct Place<'a> {
    best: NodeRef<'a, Node>,
    /// The best block and its ancestors, with their distance from it.
    up: HashMap<NodeId, usize>,
    /// The column's distance above the best block.
    column: Option<usize>,
    layout: Layout,
}

impl<'a> Place<'a> {
    fn new(best: NodeRef<'a, Node>, page: &Page, layout: Layout) -> Place<'a> {
        let up: HashMap<NodeId, usize> = std::iter::once(best)
            .chain(best.ancestors())
            .enumerate()
            .map(|(i, n)| (n.id(), i))
            .collect();
        let column = title_column(best, page).and_then(|c| up.get(&c.id()).copied());
        Place {
            best,
            up,
            column,
            layout,
        }
    }

    /// Whether a paragraph outside the best block lies in its column with no navigation bar
    /// between them.
    fn admits(&self, r: &lines::Rendered) -> bool {
        let Some((at, order)) = r.at else {
            return true;
        };
        let Some(node) = self.best.tree().get(at) else {
            return true;
        };
        let Some((level, meet)) = node
            .ancestors()
            .find_map(|a| Some((*self.up.get(&a.id())?, a)))
        else {
            return true;
        };
        if self.column.is_some_and(|column| level > column) {
            return false;
        }
        let (start, end) = self.layout.span;
        let (from, to) = if order < start {
            (order, start)
        } else {
            (end, order)
        };
        !self
            .layout
            .fences
            .iter()
            .any(|&(at, parent)| parent == meet.id() && (from..=to).contains(&at))
    }
}

struct Frame<'a> {
    node: NodeRef<'a, Node>,
    /// Non-link, non-whitespace characters directly in this block (not in nested blocks).
    own: usize,
    /// Sum of `own` of child paragraphs.
    child_paragraphs: usize,
    has_block_descendant: bool,
    is_p: bool,
    /// An `<h1>`–`<h6>`.
    is_heading: bool,
    /// Inside [`Page::anchor`].
    near_title: bool,
    /// Child blocks, and the text of the last one if it was a `<p>` or a paragraph wrapper.
    block_children: usize,
    last_child_p: Option<usize>,
}

/// Finds the block element with the most paragraph text.
///
/// A block whose score comes almost entirely (at least [`DOMINANT_SHARE`]) from one child block
/// hands the win to that child: `<div class="box"><h1>第一章</h1><div id="content">…</div></div>`
/// yields `#content`, not the box with its title and navigation bars.
fn best_block<'a>(root: NodeRef<'a, Node>, mode: Mode, page: &Page) -> Option<Best<'a>> {
    let mut page_text = 0usize;
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut skip: Option<NodeId> = None;
    let mut link_depth = 0usize;
    let mut near_title = false;
    let mut best: Option<(usize, NodeRef<'_, Node>)> = None;
    // Scored blocks by their nearest block ancestor, for the dominant-child descent.
    let mut children: HashMap<NodeId, Vec<(usize, NodeRef<'_, Node>)>> = HashMap::new();
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => {
                if skip.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Element(el) => {
                        if page.is_excluded(node, el, mode) {
                            skip = Some(node.id());
                            continue;
                        }
                        if Some(node.id()) == page.anchor {
                            near_title = true;
                        }
                        if el.name() == "a" {
                            link_depth += 1;
                        }
                        if is_block(el.name()) {
                            stack.push(Frame {
                                node,
                                own: 0,
                                child_paragraphs: 0,
                                has_block_descendant: false,
                                is_p: el.name() == "p",
                                is_heading: matches!(
                                    el.name(),
                                    "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
                                ),
                                near_title,
                                block_children: 0,
                                last_child_p: None,
                            });
                        }
                    }
                    Node::Text(text) if link_depth == 0 => {
                        if let Some(top) = stack.last_mut() {
                            top.own += lines::significant_len(text);
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(id) = skip {
                    if id == node.id() {
                        skip = None;
                    }
                    continue;
                }
                let Node::Element(el) = node.value() else {
                    continue;
                };
                if Some(node.id()) == page.anchor {
                    near_title = false;
                }
                if el.name() == "a" {
                    link_depth = link_depth.saturating_sub(1);
                }
                if !is_block(el.name()) {
                    continue;
                }
                let Some(frame) = stack.pop() else {
                    continue;
                };
                page_text += frame.own;
                let boost = if frame.near_title {
                    NEAR_TITLE_BOOST
                } else {
                    1
                };
                // A heading is never the text, however long it is.
                let score = if frame.is_heading {
                    0
                } else {
                    (frame.own + frame.child_paragraphs) * boost
                };
                if score > 0 && best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, frame.node));
                }
                // A block with no text of its own around a single `<p>` (or around such a
                // wrapper) is a paragraph too: pages that wrap every paragraph in its own
                // `<div>` then score like pages with bare `<p>`s.
                let p_text = if frame.is_heading {
                    // A heading names the text; it is not text, and counting it would let
                    // the box around a title and its kicker beat the article it heads.
                    Some(0)
                } else if frame.is_p {
                    Some(frame.own)
                } else if frame.own == 0 && frame.block_children == 1 {
                    frame.last_child_p
                } else {
                    None
                };
                if let Some(parent) = stack.last_mut() {
                    if let Some(text) = p_text {
                        parent.child_paragraphs += text;
                    } else if !frame.has_block_descendant {
                        parent.child_paragraphs += frame.own;
                    }
                    parent.has_block_descendant = true;
                    parent.block_children += 1;
                    parent.last_child_p = p_text;
                    if score > 0 {
                        children
                            .entry(parent.node.id())
                            .or_default()
                            .push((score, frame.node));
                    }
                }
            }
        }
    }
    let (mut score, mut node) = best?;
    while let Some(&(child_score, child)) = children.get(&node.id()).and_then(|c| {
        c.iter()
            .find(|(s, _)| *s as f64 >= score as f64 * DOMINANT_SHARE)
    }) {
        score = child_score;
        node = child;
    }
    Some(Best { node, page_text })
}

/// What [`best_block`] found.
struct Best<'a> {
    node: NodeRef<'a, Node>,
    /// Non-link characters of the page outside excluded elements: an upper bound of the
    /// prose [`spread_text`] would weigh the best block against.
    page_text: usize,
}

/// See [`best_block`].
const DOMINANT_SHARE: f64 = 0.8;

#[derive(Default)]
struct Paragraphs {
    out: Vec<lines::Rendered>,
    line: String,
    pending_space: bool,
    /// Non-whitespace characters in `line`: the characters of its words, which are quick to
    /// count (no whitespace test per character), and which the clean-up rules need.
    chars: usize,
    /// Non-whitespace characters of link text in `line`.
    link_chars: usize,
    /// Some of `line` sits in a list item.
    in_item: bool,
    /// Some of `line` sits in a repeated item.
    in_repeat: bool,
    /// See [`lines::Rendered::at`].
    at: Option<(NodeId, u32)>,
}

impl Paragraphs {
    /// Appends text, collapsing whitespace runs to single spaces between its words; copies
    /// whole words rather than characters.
    fn push_text(&mut self, text: &str, in_link: bool) {
        let mut rest = text;
        loop {
            let word_start = rest.trim_start();
            if word_start.len() != rest.len() {
                self.pending_space = true;
            }
            if word_start.is_empty() {
                break;
            }
            let end = lines::find_whitespace(word_start).unwrap_or(word_start.len());
            let (word, after) = word_start.split_at(end);
            if self.pending_space && !self.line.is_empty() {
                self.line.push(' ');
            }
            self.pending_space = false;
            self.line.push_str(word);
            let chars = word.chars().count();
            self.chars += chars;
            if in_link {
                self.link_chars += chars;
            }
            rest = after;
        }
    }

    fn end_paragraph(&mut self) {
        // Drop paragraphs that are mostly link text ("上一章 目录 下一章").
        if !self.line.is_empty() && self.link_chars * 2 <= self.chars {
            debug_assert_eq!(self.chars, lines::significant_len(&self.line));
            self.out.push(lines::Rendered {
                text: std::mem::take(&mut self.line),
                significant_len: self.chars,
                in_item: self.in_item,
                in_repeat: self.in_repeat,
                at: self.at,
            });
        }
        self.line.clear();
        self.pending_space = false;
        self.chars = 0;
        self.link_chars = 0;
        self.in_item = false;
        self.in_repeat = false;
        self.at = None;
    }
}

/// Blocks under `root` more than half of whose text is link text: a "More on this story" list
/// with its heading, a tag list, a pager. Dropped whole when rendering, heading included
/// (the per-paragraph link rule alone would keep the heading).
fn link_heavy_blocks(root: NodeRef<'_, Node>, mode: Mode, page: &Page) -> HashSet<NodeId> {
    let mut heavy = HashSet::new();
    // (text, link text) of each open block.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut skip: Option<NodeId> = None;
    let mut link_depth = 0usize;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) if skip.is_none() => match node.value() {
                Node::Element(el) => {
                    if node != root && page.is_excluded(node, el, mode) {
                        skip = Some(node.id());
                    } else if el.name() == "a" {
                        link_depth += 1;
                    } else if is_block(el.name()) {
                        open.push((0, 0));
                    }
                }
                Node::Text(text) => {
                    let n = lines::significant_len(text);
                    if let Some(top) = open.last_mut() {
                        top.0 += n;
                        if link_depth > 0 {
                            top.1 += n;
                        }
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if skip.is_some() {
                    if skip == Some(node.id()) {
                        skip = None;
                    }
                    continue;
                }
                let Node::Element(el) = node.value() else {
                    continue;
                };
                if el.name() == "a" {
                    link_depth = link_depth.saturating_sub(1);
                } else if is_block(el.name()) {
                    let (text, links) = open.pop().unwrap_or_default();
                    if links * 2 > text && text - links <= LINK_HEAVY_MAX_PROSE {
                        heavy.insert(node.id());
                    }
                    if let Some(parent) = open.last_mut() {
                        parent.0 += text;
                        parent.1 += links;
                    }
                }
            }
            Edge::Open(_) => {}
        }
    }
    heavy
}

/// Most non-link text (significant characters) a link-heavy block may hold. A list of links
/// with its heading or a pager has a few dozen; a container whose menus outweigh its
/// article has the article, which is not to be dropped with the menus.
const LINK_HEAVY_MAX_PROSE: usize = 200;

/// Renders an element's text as paragraphs.
fn render(
    root: NodeRef<'_, Node>,
    mode: Mode,
    page: &Page,
    items: Option<&HashSet<NodeId>>,
) -> Vec<lines::Rendered> {
    render_laid_out(root, mode, page, items, None)
}

/// [`render`], recording the [`Layout`] when asked.
fn render_laid_out(
    root: NodeRef<'_, Node>,
    mode: Mode,
    page: &Page,
    items: Option<&HashSet<NodeId>>,
    mut layout: Option<&mut Layout>,
) -> Vec<lines::Rendered> {
    // Text nodes met so far.
    let mut texts: u32 = 0;
    let mut repeat_depth = 0usize;
    let link_heavy = link_heavy_blocks(root, mode, page);
    let mut p = Paragraphs::default();
    let mut skip: Option<NodeId> = None;
    let mut link_depth = 0usize;
    let mut pre_depth = 0usize;
    let mut item_depth = 0usize;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => {
                if skip.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Element(el) => {
                        // The chosen root itself may carry a boilerplate-looking class (it won
                        // the scoring anyway); only its descendants are filtered.
                        if node != root
                            && (page.is_excluded(node, el, mode) || link_heavy.contains(&node.id()))
                        {
                            if let Some(layout) = layout.as_deref_mut()
                                && let Some(parent) = node.parent()
                                && is_fence(node, el)
                            {
                                layout.fences.push((texts, parent.id()));
                            }
                            skip = Some(node.id());
                            continue;
                        }
                        if let Some(layout) = layout.as_deref_mut()
                            && layout.best == node.id()
                        {
                            layout.span.0 = texts;
                        }
                        match el.name() {
                            "br" => p.end_paragraph(),
                            "a" => link_depth += 1,
                            "pre" => {
                                pre_depth += 1;
                                p.end_paragraph();
                            }
                            name @ ("li" | "dd") => {
                                item_depth += 1;
                                debug_assert!(is_block(name));
                                p.end_paragraph();
                            }
                            name if is_block(name) => {
                                if items.is_some_and(|i| i.contains(&node.id())) {
                                    item_depth += 1;
                                    repeat_depth += 1;
                                }
                                p.end_paragraph()
                            }
                            _ => {}
                        }
                    }
                    Node::Text(text) => {
                        texts += 1;
                        if !text.trim().is_empty() {
                            p.in_item |= item_depth > 0;
                            p.in_repeat |= repeat_depth > 0;
                            if p.at.is_none() {
                                p.at = Some((node.id(), texts));
                            }
                        }
                        if pre_depth > 0 {
                            let mut lines = text.split('\n');
                            if let Some(first) = lines.next() {
                                p.push_text(first, link_depth > 0);
                            }
                            for line in lines {
                                p.end_paragraph();
                                p.push_text(line, link_depth > 0);
                            }
                        } else {
                            p.push_text(text, link_depth > 0);
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(id) = skip {
                    if id == node.id() {
                        skip = None;
                    }
                    continue;
                }
                if let Some(layout) = layout.as_deref_mut()
                    && layout.best == node.id()
                {
                    layout.span.1 = texts;
                }
                if let Node::Element(el) = node.value() {
                    match el.name() {
                        "a" => link_depth = link_depth.saturating_sub(1),
                        "pre" => {
                            pre_depth = pre_depth.saturating_sub(1);
                            p.end_paragraph();
                        }
                        "li" | "dd" => {
                            item_depth = item_depth.saturating_sub(1);
                            p.end_paragraph();
                        }
                        name if is_block(name) => {
                            p.end_paragraph();
                            if items.is_some_and(|i| i.contains(&node.id())) {
                                item_depth = item_depth.saturating_sub(1);
                                repeat_depth = repeat_depth.saturating_sub(1);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    p.end_paragraph();
    p.out
}

/// Collapses whitespace runs (including no-break and ideographic spaces) to single spaces and
/// trims.
fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("http://novel.example.cn/book/1/").unwrap()
    }

    #[test]
    fn chapter_text_in_a_br_separated_content_div_becomes_clean_paragraphs() {
        let html = r#"<html><head><meta charset="gbk"><title>第一章 风起_某某小说_笔趣阁</title></head>
<body>
<div id="wrapper">
  <div class="header"><a href="/">笔趣阁</a> <a href="/top">排行榜</a></div>
  <div class="box_con">
    <div class="con_top"><a href="/">首页</a> &gt; <a href="/book/1/">某某小说</a> &gt; 第一章</div>
    <div class="bookname"><h1>第一章 风起</h1>
      <div class="bottem1"><a href="0.html">上一章</a> &larr; <a href="./">章节目录</a> &rarr; <a href="2.html">下一章</a></div>
    </div>
    <div id="content">&nbsp;&nbsp;&nbsp;&nbsp;夜色如墨，少年推开了那扇沉重的木门。<br /><br />&nbsp;&nbsp;&nbsp;&nbsp;他知道，从今天起，一切都将不同。<br><br>
    　　师父曾说过，江湖险恶，人心难测。   他   点了点头。<br/>
    <script>ads();</script></div>
    <div class="bottem2"><a href="0.html">上一章</a> &larr; <a href="./">章节目录</a> &rarr; <a href="2.html">下一章</a></div>
  </div>
  <div class="footer"><p>本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传让更多读者欣赏。</p><p>Copyright © 2024 笔趣阁 All Rights Reserved.</p></div>
</div></body></html>"#;
        let e = extract(html, &base());
        assert_eq!(e.title.as_deref(), Some("第一章 风起_某某小说_笔趣阁"));
        assert_eq!(
            e.text,
            "夜色如墨，少年推开了那扇沉重的木门。\n他知道，从今天起，一切都将不同。\n\
             师父曾说过，江湖险恶，人心难测。 他 点了点头。"
        );
    }

    #[test]
    fn a_chapter_inside_a_page_wide_form_or_a_header_element_is_kept() {
        // ASP.NET pages wrap the whole body in one <form>; some article templates put the
        // text itself in a <header>. Both tags used to drop their subtree with the text.
        let chapter = "<p>账簿上记着三十年前的旧事，每一笔都用蝇头小楷写得清清楚楚，没有一处涂改。</p>\
                       <p>他看到最后一页，忽然停住了手，那上面只写着一个名字，却没有数目。</p>";
        for html in [
            format!(
                r#"<html><head><title>第三章 夜雨</title></head><body>
<form id="aspnetForm" method="post" action="./3.aspx">
  <div class="nav"><a href="/">首页</a> <a href="/list">目录</a></div>
  <div class="entry-content"><h1>第三章 夜雨</h1>{chapter}</div>
</form></body></html>"#
            ),
            format!(
                r#"<html><head><title>第三章 夜雨</title></head><body>
<div class="menu"><a href="/">首页</a> <a href="/list">目录</a></div>
<article><header><h1>第三章 夜雨</h1><div class="abstract">{chapter}</div></header></article>
</body></html>"#
            ),
        ] {
            let e = extract(&html, &base());
            assert!(e.text.contains("账簿上记着三十年前的旧事"), "{}", e.text);
            assert!(e.text.contains("那上面只写着一个名字"), "{}", e.text);
            assert!(!e.text.contains("首页"), "{}", e.text);
        }
    }

    #[test]
    fn a_news_article_keeps_its_paragraphs_and_drops_nav_ads_and_comments() {
        let html = r#"<!DOCTYPE html><html><head><title>新闻标题</title><style>p{color:red}</style></head><body>
<nav><ul><li><a href="/">首页</a></li><li><a href="/news">新闻</a></li></ul></nav>
<div class="top-menu">国内 国际 财经 体育 娱乐 科技 汽车 房产 教育 旅游 时尚 健康</div>
<div class="layout">
 <div class="main-column">
  <h1>城市更新进入新阶段</h1>
  <div class="ad-banner">广告：点击领取新人大礼包，限时优惠不容错过，立即下载客户端</div>
  <div class="article-body">
   <p>记者从市住建局获悉，今年全市将启动一百个老旧小区改造项目。</p>
   <p>  改造内容包括加装电梯、管网更新和   社区养老设施建设。 </p>
   <div class="adsbygoogle">赞助内容赞助内容赞助内容赞助内容赞助内容赞助内容赞助内容</div>
   <p>专家表示，城市更新需要兼顾历史风貌与居民需求。</p>
   <div style="display: none">隐藏的反爬虫文字隐藏的反爬虫文字隐藏的反爬虫文字</div>
  </div>
  <div class="share-bar">分享到：微信 微博 QQ空间</div>
  <div id="comments"><div class="comment-content"><p>网友甲：这个政策太好了，希望我们小区也能早日改造，加装电梯方便老人出行。</p></div>
    <div class="comment-content"><p>网友乙：支持！但是施工期间的噪音问题也要考虑，希望相关部门做好协调工作。</p></div></div>
 </div>
 <aside class="sidebar"><h3>热门推荐</h3><p>这是一段很长很长的侧栏推荐文字，用来测试侧栏会被丢弃，而不会被当作正文输出。这是一段很长很长的侧栏推荐文字。</p></aside>
 <div class="recommend-list"><p>相关推荐：另一条很长的新闻标题另一条很长的新闻标题另一条很长的新闻标题另一条很长的新闻</p></div>
</div>
<footer><p>版权所有 © 2024 某某网 京ICP备12345678号</p></footer>
</body></html>"#;
        let e = extract(html, &base());
        assert_eq!(e.title.as_deref(), Some("新闻标题"));
        assert_eq!(
            e.text,
            "记者从市住建局获悉，今年全市将启动一百个老旧小区改造项目。\n\
             改造内容包括加装电梯、管网更新和 社区养老设施建设。\n\
             专家表示，城市更新需要兼顾历史风貌与居民需求。"
        );
    }

    #[test]
    fn the_first_h1_is_the_title_when_title_is_missing() {
        let e = extract(
            "<body><h1> 标题 一 </h1><h1>标题二</h1><p>正文</p></body>",
            &base(),
        );
        assert_eq!(e.title.as_deref(), Some("标题 一"));
        let e = extract("<title>  </title><p>正文</p>", &base());
        assert_eq!(e.title, None);
    }

    #[test]
    fn links_are_absolute_http_without_fragments_and_deduplicated() {
        let html = r##"<a href="2.html#top">next</a><a href="2.html">again</a>
            <a href="/book/1/">toc</a><a href="javascript:void(0)">js</a><a href="mailto:a@b.c">m</a>
            <a href="https://other.example.com/x">other</a><a href="#">self</a><a href=" 3.html ">3</a>"##;
        let links: Vec<String> = extract(html, &base())
            .links
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(
            links,
            [
                "http://novel.example.cn/book/1/2.html",
                "http://novel.example.cn/book/1/",
                "https://other.example.com/x",
                "http://novel.example.cn/book/1/3.html",
            ]
        );
    }

    #[test]
    fn base_href_changes_how_links_resolve() {
        let html = r#"<head><base href="/mirror/"></head><a href="a.html">a</a>"#;
        let links = extract(html, &base()).links;
        assert_eq!(links[0].as_str(), "http://novel.example.cn/mirror/a.html");
    }

    #[test]
    fn paragraphs_made_of_divs_are_kept_together() {
        let html = r#"<div class="wrap"><div class="txt">
            <div>第一段文字，有一些内容。</div><div>第二段文字，也有一些内容。</div>
            <div>第三段文字，还有一些内容。</div></div>
            <div class="links"><a href="/a">很长的链接文字很长的链接文字很长的链接文字</a></div></div>"#;
        assert_eq!(
            extract(html, &base()).text,
            "第一段文字，有一些内容。\n第二段文字，也有一些内容。\n第三段文字，还有一些内容。"
        );
    }

    #[test]
    fn a_boilerplate_looking_page_still_yields_text() {
        let html = r#"<body><div class="sidebar-layout"><p>唯一的正文在一个名字奇怪的容器里。</p></div></body>"#;
        assert_eq!(
            extract(html, &base()).text,
            "唯一的正文在一个名字奇怪的容器里。"
        );
    }

    #[test]
    fn pre_keeps_its_lines() {
        let html = "<pre>第一行\n  第二行\n\n第三行</pre>";
        assert_eq!(extract(html, &base()).text, "第一行\n第二行\n第三行");
    }

    #[test]
    fn class_names_split_into_words() {
        assert_eq!(words("topNav-list_2"), ["top", "nav", "list", "2"]);
        assert!(looks_like_boilerplate(Some("main-nav"), None));
        assert!(looks_like_boilerplate(Some("topnav"), None));
        assert!(looks_like_boilerplate(Some("comment-content"), None));
        assert!(looks_like_boilerplate(None, Some("guanggao1")));
        assert!(!looks_like_boilerplate(Some("main has-sidebar"), None));
        assert!(!looks_like_boilerplate(
            Some("header-image"),
            Some("content")
        ));
        assert!(!looks_like_boilerplate(
            Some("address download thread"),
            None
        ));
    }

    #[test]
    fn text_hidden_by_the_pages_own_stylesheet_is_dropped() {
        let html = r#"<html><head><style>.jm, span.dn { display : none } @media (max-width:9px) { .m { display:none } }</style></head>
<body><div id="content"><p>第一段正文<font class="jm">飘天文学</font>继续。</p><p>第二段<span class="dn">首发</span>正文<span class="m">，窄屏才隐藏</span>。</p></div></body></html>"#;
        assert_eq!(
            extract(html, &base()).text,
            "第一段正文继续。\n第二段正文，窄屏才隐藏。"
        );
    }

    #[test]
    fn an_article_hidden_until_a_script_shows_it_is_still_the_main_text() {
        let html = r#"<body><h1>标题</h1><div id="js_content" style="visibility: hidden;">
<p>这是公众号文章的第一段，脚本加载后才显示出来。</p><p>第二段<span style="display:none">隐藏的毒化文字</span>也在这里。</p></div>
<div class="discuss">留言：写得好</div></body>"#;
        assert_eq!(
            extract(html, &base()).text,
            "这是公众号文章的第一段，脚本加载后才显示出来。\n第二段也在这里。"
        );
    }

    #[test]
    fn a_short_chapter_beats_a_longer_blurb_far_from_its_heading() {
        let html = r#"<html><head><title>楔子_某书_某站</title></head><body><div class="wrap">
<div class="left"><div class="box"><h1>楔子</h1><div id="txt"><p>很多年以后，人们还会说起那一年的春天。</p></div></div></div>
<div class="right"><div class="summary"><p>这是一段很长的作品简介，比正文还要长得多，讲的是一个少年走进长安城的故事，后来发生了很多事情。</p></div></div>
</div></body></html>"#;
        assert_eq!(
            extract(html, &base()).text,
            "很多年以后，人们还会说起那一年的春天。"
        );
    }

    #[test]
    fn a_layout_wrapper_named_after_its_sidebar_still_yields_its_article() {
        // Genesis themes wrap content and sidebar in `content-sidebar-wrap`; the class names
        // a layout, and the wrapper holds the article with its heading.
        let html = r#"<html><head><title>Lemon cake | Baking blog</title></head><body>
<div class="site-inner"><div class="content-sidebar-wrap"><main class="content"><article>
<h1>Lemon cake</h1><div class="entry-body"><p>A cake that is sour and sweet at once, baked on a tray.</p>
<p>Beat the butter with the sugar until it is pale, then add the eggs one by one.</p></div>
</article></main><div class="sidebar"><p>About me: I bake every weekend and write it all down here.</p></div>
</div></div><div class="site-info"><p>This blog has been baking since 2012 and every recipe here is tested twice.</p></div>
</body></html>"#;
        let text = extract(html, &base()).text;
        assert!(text.contains("Beat the butter"), "{text}");
        assert!(!text.contains("About me"), "{text}");
    }

    #[test]
    fn a_wrapper_with_a_mixed_name_holding_most_of_the_page_is_kept_without_a_title_heading() {
        // The headline does not repeat the title, so nothing marks the wrapper as the
        // article's; it holds most of the page's text, which a comment's text never does.
        let html = format!(
            "<html><head><title>Ideas for a small nursery</title></head><body>\
             <div class=\"content-sidebar-wrap\"><main class=\"content\"><article>\
             <h1>Twenty clever ideas when you are tight on space</h1><p>{LONG}</p><p>{LONG}</p>\
             </article></main><div class=\"sidebar\"><p>About me: a mother of two.</p></div>\
             </div></body></html>"
        );
        let text = extract(&html, &base()).text;
        assert!(text.contains("The keeper climbed"), "{text}");
        assert!(!text.contains("About me"), "{text}");
    }

    #[test]
    fn the_spread_is_skipped_when_no_paragraph_of_its_length_lies_in_the_column() {
        let page_with = |aside: &str| {
            format!(
                "<html><head><title>Chapter 4</title></head><body><div class=\"wrap\">\
                 <div class=\"col-l\"><h2>Chapter 4</h2><div id=\"text\"><p>{LONG}</p>\
                 <p>{LONG}</p></div><div class=\"pages\"><a href=\"3.html\">Prev</a> \
                 <a href=\"5.html\">Next</a></div>{aside}</div><div class=\"col-r\"><p>{LONG}\
                 </p></div></div></body></html>"
            )
        };
        let could = |html: &str| {
            let doc = Html::parse_document(html);
            let page = Page::new(&doc, Some("Chapter 4"));
            let best = best_block(doc.tree.root(), Mode::Full, &page).unwrap();
            could_spread(doc.tree.root(), best.node, &page)
        };
        // The pager and the heading are short; the long text beside the column is not in it.
        assert!(!could(&page_with("")));
        assert!(could(&page_with(&format!("<p>{LONG}</p>"))));
        // List items never join as paragraphs.
        assert!(!could(&page_with(&format!("<ul><li>{LONG}</li></ul>"))));
    }

    #[test]
    fn a_comment_content_block_with_little_of_the_page_stays_out() {
        let html = format!(
            "<html><head><title>The Keeper</title></head><body><article><h1>The Keeper</h1>\
             <p>{LONG}</p><p>{LONG}</p><p>{LONG}</p></article><div class=\"comment-content\">\
             <p>Great story, I read it twice on the train home and cried at the ending.</p>\
             </div></body></html>"
        );
        let text = extract(&html, &base()).text;
        assert!(text.contains("The keeper climbed"), "{text}");
        assert!(!text.contains("Great story"), "{text}");
    }

    #[test]
    fn a_bem_modifier_does_not_make_a_block_boilerplate() {
        // `--sidebar` says how the row is laid out; the row is the article.
        let html = r#"<html><head><title>News</title></head><body>
<div class="item-content__row--sidebar"><div class="item-paragraph">
<p>The council voted on Tuesday to rebuild the old bridge across the river.</p>
<p>Work is to start in spring and last two years, the mayor said after the vote.</p></div></div>
<div class="site-info"><p>The Gazette has reported on the valley since 1902.</p></div></body></html>"#;
        let text = extract(html, &base()).text;
        assert!(text.contains("rebuild the old bridge"), "{text}");
        assert!(text.contains("last two years"), "{text}");
    }

    #[test]
    fn long_list_items_beside_a_short_chapter_do_not_join_it() {
        // Blurbs of other books in a sidebar list hold more than half of the page's prose, but
        // a list of long items is a list of other things (blurbs, reviews, replies), not more
        // of the text. The chapter wins the scoring by sitting next to its heading.
        let blurb = |title: &str| {
            format!(
                "<li><a href=\"/b\">{title}</a><p>这是一部关于少年走进长安城的小说，后来他在西市做过伙计，\
                 又在酒楼替人写诗，最后卷入了一场宫廷里的风波，命运从此彻底改变。</p></li>"
            )
        };
        let html = format!(
            "<html><head><title>楔子_某书</title></head><body><div class=\"wrap\"><div class=\"l\">\
             <div class=\"box\"><h1>楔子</h1><div id=\"txt\"><p>很多年以后，人们还会说起那一年的春天。\
             那一年，桃花开得比往年早了半个月，城南的老井里打上来的水是甜的。</p></div></div></div>\
             <div class=\"r\"><ul>{}{}</ul></div></div></body></html>",
            blurb("锦绣长歌"),
            blurb("春深似海")
        );
        let text = extract(&html, &base()).text;
        assert!(text.starts_with("很多年以后"), "{text}");
        assert!(!text.contains("西市"), "{text}");
    }

    const LONG: &str = "The keeper climbed the stairs of the lighthouse every evening at dusk, \
                        counting the steps aloud, and lit the lamp before the fishing boats came \
                        home across the grey water of the bay. ";

    #[test]
    fn with_a_title_heading_a_short_second_section_joins_the_article() {
        // The first section holds far more than 70 % of the prose: only the title's column
        // says that the second one belongs to the text.
        let html = format!(
            "<html><head><title>The Keeper</title></head><body><div class=\"story\">\
             <h1>The Keeper</h1><div class=\"part\"><p>{LONG}</p><p>{LONG}</p><p>{LONG}</p></div>\
             <div class=\"part-b\"><h2>Winter</h2><p>In winter the ice closed the harbour \
             and the keeper wrote long letters that nobody answered.</p><p>Short line.</p>\
             </div></div></body></html>"
        );
        let text = extract(&html, &base()).text;
        assert!(text.contains("In winter the ice"), "{text}");
        // The section's heading and short line come with it.
        assert!(text.contains("Winter\n"), "{text}");
        assert!(text.contains("Short line."), "{text}");
    }

    #[test]
    fn a_notice_in_the_column_beside_the_titled_text_stays_out() {
        let html = format!(
            "<html><head><title>Chapter 4</title></head><body><div class=\"wrap\">\
             <div class=\"col-l\"><h2>Chapter 4</h2><div id=\"text\"><p>{LONG}</p><p>{LONG}</p>\
             </div></div><div class=\"col-r\"><div class=\"mod\"><div>Dear readers, the site \
             has been upgraded and chapters now load faster; report any missing chapter to us.\
             </div></div></div></div></body></html>"
        );
        let text = extract(&html, &base()).text;
        assert!(text.contains("The keeper climbed"), "{text}");
        assert!(!text.contains("Dear readers"), "{text}");
    }

    #[test]
    fn a_description_after_the_pager_under_the_text_stays_out() {
        let html = format!(
            "<html><head><title>Chapter 4</title></head><body><div id=\"wrap\">\
             <h2>Chapter 4</h2><pre>{LONG}\n{LONG}</pre>\
             <div class=\"pages\">Page 1 of 3 <a href=\"?page=2\">Next page &raquo;</a></div>\
             <div class=\"book\"><h3>About this book</h3><p>A collection of twelve stories \
             about a lighthouse keeper, first published in a monthly magazine.</p></div>\
             </div></body></html>"
        );
        let text = extract(&html, &base()).text;
        assert!(text.contains("The keeper climbed"), "{text}");
        assert!(!text.contains("twelve stories"), "{text}");
    }

    #[test]
    fn an_article_split_over_sibling_sections_is_read_whole_without_its_short_lines() {
        // A page builder's text columns: each section is a block of its own, none holds half
        // of the prose. The short lines around them (a date, a category) stay out.
        let section = |n: u32, body: &str| {
            format!(
                "<div class=\"wpb_wrapper\"><h2>Part {n}</h2><p>{body}</p></div><div class=\"spacer\"></div>"
            )
        };
        let html = format!(
            "<html><head><title>Guide</title></head><body><div class=\"row\">{}{}{}{}</div>\
             <div class=\"post-date\">January 13, 2022</div><div class=\"cat\">Category: News</div></body></html>",
            section(
                1,
                "The first part explains how the river was measured before the dam was planned, in detail."
            ),
            section(
                2,
                "The second part tells how the village argued about the dam for three long winters and springs."
            ),
            section(
                3,
                "The third part follows the engineers who came from the city and stayed in the old school house."
            ),
            section(
                4,
                "The fourth part is about the flood that came anyway, two years after the dam was finished."
            ),
        );
        let text = extract(&html, &base()).text;
        for part in ["first part", "second part", "third part", "fourth part"] {
            assert!(text.contains(part), "{part} missing: {text}");
        }
        assert!(!text.contains("January 13"), "{text}");
        assert!(!text.contains("Category"), "{text}");
    }

    #[test]
    fn a_reply_thread_beside_an_article_in_sections_is_left_out_and_the_sections_read_whole() {
        // The article's sections are blocks of one shape, each opening with a heading; the
        // replies below are blocks of one shape too, each with a user link and no heading,
        // and no class name that says "comment". Sections join, replies do not.
        let section =
            |n: u32, body: &str| format!("<div class=\"sec\"><h2>Part {n}</h2><p>{body}</p></div>");
        let reply = |user: &str, body: &str| {
            format!(
                "<div class=\"t\"><div class=\"u\"><a href=\"/u/{user}\">{user}</a> 2 days ago</div>\
                 <p>{body}</p></div>"
            )
        };
        let html = format!(
            "<html><head><title>The dam</title></head><body><div class=\"row\">{}{}{}{}</div>\
             <div class=\"thread\">{}{}{}</div></body></html>",
            section(
                1,
                "The first part explains how the river was measured before the dam was planned, in detail."
            ),
            section(
                2,
                "The second part tells how the village argued about the dam for three long winters and springs."
            ),
            section(
                3,
                "The third part follows the engineers who came from the city and stayed in the old school house."
            ),
            section(
                4,
                "The fourth part is about the flood that came anyway, two years after the dam was finished."
            ),
            reply(
                "marginalia",
                "Great piece, my grandfather worked on that dam and never talked about the flood."
            ),
            reply(
                "quietreader",
                "Is there a map of the old river anywhere? I would love to see where it stood."
            ),
            reply(
                "saltroad",
                "The school house part made me laugh, we had engineers lodging with us too."
            ),
        );
        let text = extract(&html, &base()).text;
        for part in ["first part", "second part", "third part", "fourth part"] {
            assert!(text.contains(part), "{part} missing: {text}");
        }
        for reply in ["grandfather", "map of the old river", "lodging with us"] {
            assert!(!text.contains(reply), "reply {reply:?} joined: {text}");
        }
    }

    #[test]
    fn forum_posts_named_by_numbered_ids_are_repeated_items_and_sections_are_not() {
        let post = |n: u32, user: &str| {
            format!(
                "<div id=\"post_{n}\"><table><tr><td><a href=\"/space-uid-{n}.html\">{user}</a></td>\
                 <td>楼主写得真好，坐等更新，这一段我反复看了好几遍，每一遍都有新的感受。</td></tr></table></div>"
            )
        };
        let html = format!(
            "<html><body><div id=\"postlist\">{}{}{}</div>\
             <div class=\"sec\"><h2>一</h2><p>正文第一节。<a href=\"/x\">链接</a></p></div>\
             <div class=\"sec\"><h2>二</h2><p>正文第二节。</p></div></body></html>",
            post(1290031, "南山有竹"),
            post(1290107, "晚风与茶"),
            post(1290245, "老猫不吃鱼"),
        );
        let doc = parse_html(&html);
        let page = Page::new(&doc, None);
        let items = items::repeated_items(doc.tree.root(), Mode::Full, &page);
        let ids: Vec<&str> = doc
            .tree
            .nodes()
            .filter(|n| items.contains(&n.id()))
            .filter_map(|n| n.value().as_element().and_then(|el| plain_attr(el, "id")))
            .collect();
        assert_eq!(ids, ["post_1290031", "post_1290107", "post_1290245"]);
        let sections = doc.tree.nodes().filter(|n| {
            n.value()
                .as_element()
                .is_some_and(|el| plain_attr(el, "class") == Some("sec"))
        });
        for section in sections {
            assert!(!items.contains(&section.id()));
        }
    }

    #[test]
    fn a_headline_box_does_not_outscore_the_article_it_heads() {
        // The heading and its kicker sit near the title (boosted); the heading's own words
        // must not count as text, or the box beats the body below it.
        let html = r#"<html><head><title>A very long headline about the harbour strike that closed the port for a week | Paper</title></head><body>
<div class="top"><div class="intro"><div class="headline"><h1>A very long headline about the harbour strike that closed the port for a week</h1></div>
<p>Dockers walked out on Monday.</p></div></div>
<div class="story"><p>The strike began when the port authority announced new shift rules without talks.</p>
<p>Ships queued outside the harbour for days, and fresh food ran short in the markets.</p></div>
</body></html>"#;
        let text = extract(html, &base()).text;
        assert!(text.contains("fresh food ran short"), "{text}");
    }

    #[test]
    fn ad_lines_and_the_repeated_heading_are_cleaned_from_the_text() {
        let html = r#"<html><head><title>第一章 风起_笔趣阁</title></head><body><div id="content">
第一章 风起<br>天才一秒记住本站地址：www.biquge.example.com 最快更新！<br>他说：记住这个地址。<br>正文第二行。<br>(本章完)</div></body></html>"#;
        assert_eq!(
            extract(html, &base()).text,
            "他说：记住这个地址。\n正文第二行。"
        );
    }

    #[test]
    fn paragraphs_wrapped_one_per_div_add_up_and_link_lists_go_whole() {
        let html = r#"<html><head><title>Ferry returns</title></head><body><article>
<h1>Ferry returns</h1>
<div class="text-block"><p>The first paragraph of the story, long enough to matter here.</p></div>
<div class="text-block"><p>The second paragraph, which is a little longer than the first one is.</p></div>
<div class="links-block"><h2>More on this story</h2><ul><li><a href="/1">Islanders call for better ferry links</a></li><li><a href="/2">New ferry contract awarded</a></li></ul></div>
<div class="text-block"><p>A third paragraph, shorter.</p></div>
<figure><img src="x.jpg"><figcaption>A ferry at dusk</figcaption></figure>
</article></body></html>"#;
        assert_eq!(
            extract(html, &base()).text,
            "The first paragraph of the story, long enough to matter here.\n\
             The second paragraph, which is a little longer than the first one is.\n\
             A third paragraph, shorter."
        );
    }

    #[test]
    fn malformed_html_does_not_panic() {
        let deep = "<div>".repeat(20_000) + "深" + &"</span>".repeat(100);
        let deep_hidden = "<div hidden>".repeat(20_000) + "深";
        for html in [
            "",
            "<",
            "<p",
            "<<<>>>",
            "<table><p>a<td>b</table></p>",
            "<a href='http://[::1'>x</a><a href='http://%zz/'>y</a>",
            "<div id=content>text<br<br/>more</div",
            "\u{0}\u{feff}<html><body>\u{0}</body>",
            &deep,
            &deep_hidden,
        ] {
            let _ = extract(html, &base());
        }
        assert!(extract(&deep, &base()).text.contains('深'));
    }
}
