//! Repeated items: reply threads, review lists, lists of blurbs.
//!
//! The spread rule of the parent module joins long paragraphs from anywhere outside
//! boilerplate to the best block. On a piracy site the long paragraphs beside a chapter are
//! mostly other people's text: forum replies under the first post, reader reviews, blurbs of
//! other books. Many carry no class name that says so, and joined to the chapter they are
//! noise that can match other works. What they share is their shape: a run of sibling
//! elements built alike (same tag, same class names up to digits, or the same id up to
//! digits when they have no class: `post_1290031`, `post_1290107`), each with a line that is
//! a link elsewhere (a user name, a book title) and no heading of its own. An article's
//! sections are built alike too, but each opens with a heading and its links sit inside its
//! prose, so they are not items.
//!
//! [`repeated_items`] finds such runs: a group of at least [`MIN_GROUP`] siblings of one shape
//! of which at least [`MIN_GROUP`], and at least half, are items. Every member of the group
//! counts as an item; the spread rule leaves items out as it leaves out `<li>`s.

use std::collections::{HashMap, HashSet};

use ego_tree::iter::Edge;
use ego_tree::{NodeId, NodeRef};
use scraper::Node;
use scraper::node::Element;

use super::{Mode, Page, is_block, lines, plain_attr};

/// Fewest repeated siblings (and fewest of them looking like items) that make a run of items.
const MIN_GROUP: usize = 2;

/// What one block holds, counted bottom-up.
#[derive(Default, Clone, Copy)]
struct Stats {
    /// Link lines (blocks whose own text is mostly link text) inside, this block included.
    link_lines: usize,
    /// Headings inside that are not link lines.
    headings: usize,
}

/// A block being counted.
struct Open<'a> {
    node: NodeRef<'a, Node>,
    /// Its [`shape`].
    key: u64,
    /// Significant characters of its own text (not in nested blocks) outside links.
    own_text: usize,
    /// … in links to somewhere else.
    own_link: usize,
    /// … in links within the page (`#top`) or to scripts.
    own_link_raw: usize,
    heading: bool,
    /// What its nested blocks hold.
    sum: Stats,
}

/// The shape of an element: its tag and its class names without digits (or, without a class,
/// its id without digits), hashed.
fn shape(el: &Element) -> u64 {
    // FNV-1a: cheap, and a collision only merges two groups of siblings.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    };
    for b in el.name().bytes() {
        eat(b);
    }
    eat(b'|');
    let class = plain_attr(el, "class").filter(|c| !c.trim().is_empty());
    let named = class.or_else(|| plain_attr(el, "id"));
    if let Some(named) = named {
        for b in named.bytes().filter(|b| !b.is_ascii_digit()) {
            eat(b);
        }
    }
    h
}

/// Whether a link points somewhere else (not an anchor in the page, not a script).
fn is_outward(el: &Element) -> bool {
    plain_attr(el, "href").is_some_and(|href| {
        let href = href.trim();
        !href.is_empty() && !href.starts_with('#') && !href.starts_with("javascript:")
    })
}

/// Elements under `root` that are members of a run of repeated items (see the module
/// header), judged with the exclusion rules of `mode`. One pass over the tree.
pub(super) fn repeated_items(root: NodeRef<'_, Node>, mode: Mode, page: &Page) -> HashSet<NodeId> {
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut skip: Option<NodeId> = None;
    let mut link_depth = 0usize;
    let mut outward_depth = 0usize;
    // Members of each group of siblings, by (parent, shape).
    let mut groups: HashMap<(NodeId, u64), Vec<(NodeId, Stats)>> = HashMap::new();
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) if skip.is_none() => match node.value() {
                Node::Element(el) => {
                    if node != root && page.is_excluded(node, el, mode) {
                        skip = Some(node.id());
                    } else if el.name() == "a" {
                        link_depth += 1;
                        if is_outward(el) {
                            outward_depth += 1;
                        }
                    } else if is_block(el.name()) {
                        stack.push(Open {
                            node,
                            key: shape(el),
                            own_text: 0,
                            own_link: 0,
                            own_link_raw: 0,
                            heading: matches!(el.name(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6"),
                            sum: Stats::default(),
                        });
                    }
                }
                Node::Text(text) => {
                    let n = lines::significant_len(text);
                    if let Some(top) = stack.last_mut() {
                        if outward_depth > 0 {
                            top.own_link += n;
                        } else if link_depth > 0 {
                            top.own_link_raw += n;
                        } else {
                            top.own_text += n;
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
                    if is_outward(el) {
                        outward_depth = outward_depth.saturating_sub(1);
                    }
                    continue;
                }
                if !is_block(el.name()) {
                    continue;
                }
                let Some(open) = stack.pop() else {
                    continue;
                };
                let mut stats = open.sum;
                let link_line = open.own_link > 0
                    && open.own_link * 2 > open.own_text + open.own_link + open.own_link_raw;
                // A heading that is a link (a commenter's name in an `<h4>`) is a link line;
                // a heading in words is what opens an article's section.
                if link_line {
                    stats.link_lines += 1;
                } else if open.heading {
                    stats.headings += 1;
                }
                if let Some(parent) = stack.last_mut() {
                    parent.sum.link_lines += stats.link_lines;
                    parent.sum.headings += stats.headings;
                    groups
                        .entry((parent.node.id(), open.key))
                        .or_default()
                        .push((open.node.id(), stats));
                }
            }
            Edge::Open(_) => {}
        }
    }
    let mut items = HashSet::new();
    for members in groups.values() {
        if members.len() < MIN_GROUP {
            continue;
        }
        let items_among = members
            .iter()
            .filter(|(_, s)| s.link_lines > 0 && s.headings == 0)
            .count();
        if items_among >= MIN_GROUP && items_among * 2 >= members.len() {
            items.extend(members.iter().map(|(id, _)| *id));
        }
    }
    items
}
