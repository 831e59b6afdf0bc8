//! Searching and paging the lists that the service gives whole: works, notices, users,
//! schedules and runs. A page is cut on the server, so the browser gets at most
//! [`ROWS_PER_PAGE`] rows whatever the list's length. (The match lists page in SQL instead:
//! they reach millions of rows; these reach thousands at most per tenant.)

use serde::Deserialize;

/// Rows on one page of a list.
pub(super) const ROWS_PER_PAGE: usize = 50;

/// `?q=…&page=N` of a list: words every shown row contains (case-insensitive, any field) and the
/// page, from 1. Anything else in the query is some other form's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct ListQuery {
    pub q: String,
    /// As typed: a page that is not a number is the first.
    pub page: String,
}

impl ListQuery {
    /// Whether a row with these `fields` is shown: each word of the search appears in one of
    /// them.
    pub fn keeps(&self, fields: &[&str]) -> bool {
        let fields: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
        self.q
            .split_whitespace()
            .map(str::to_lowercase)
            .all(|word| fields.iter().any(|field| field.contains(&word)))
    }
}

/// Where a page sits in its list, for the page's links.
pub(super) struct Pager {
    /// This page, from 1.
    pub page: usize,
    /// Pages in all (at least 1).
    pub pages: usize,
    /// Rows in all, after the search.
    pub total: usize,
    /// The search, kept in the links.
    pub q: String,
}

/// The rows of `query`'s page among `rows` (already searched), and where it sits.
pub(super) fn page_of<T>(rows: Vec<T>, query: &ListQuery) -> (Vec<T>, Pager) {
    let total = rows.len();
    let pages = total.div_ceil(ROWS_PER_PAGE).max(1);
    let page = query
        .page
        .trim()
        .parse::<usize>()
        .unwrap_or(1)
        .clamp(1, pages);
    let shown = rows
        .into_iter()
        .skip((page - 1) * ROWS_PER_PAGE)
        .take(ROWS_PER_PAGE)
        .collect();
    let pager = Pager {
        page,
        pages,
        total,
        q: query.q.clone(),
    };
    (shown, pager)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str, page: &str) -> ListQuery {
        ListQuery {
            q: q.into(),
            page: page.into(),
        }
    }

    #[test]
    fn every_word_of_the_search_must_appear_in_some_field() {
        let search = query("Pirate 夜", "");
        assert!(search.keeps(&["pirate.example", "夜雨"]));
        assert!(!search.keeps(&["pirate.example", "晨光"]));
        assert!(query("", "").keeps(&[]), "no search keeps everything");
    }

    #[test]
    fn pages_are_cut_on_the_server_and_clamped() {
        let rows: Vec<usize> = (0..120).collect();
        let (shown, pager) = page_of(rows.clone(), &query("", "2"));
        assert_eq!(shown, (50..100).collect::<Vec<_>>());
        assert_eq!((pager.page, pager.pages, pager.total), (2, 3, 120));
        let (shown, pager) = page_of(rows.clone(), &query("", "99"));
        assert_eq!(
            (shown.len(), pager.page),
            (20, 3),
            "past the end: the last page"
        );
        let (shown, pager) = page_of(rows, &query("", "x'; DROP"));
        assert_eq!(
            (shown.len(), pager.page),
            (50, 1),
            "not a number: the first page"
        );
        let (shown, pager) = page_of(Vec::<usize>::new(), &query("", ""));
        assert_eq!((shown.len(), pager.pages), (0, 1));
    }
}
