//! Main-text extraction quality on the hand-marked fixture pages in `tests/fixtures/extract/`
//! (see the README there for how the expected texts were marked, and `metric.rs` for how they
//! are compared).
//!
//! Print the per-page table with:
//!
//! ```text
//! cargo test -p copytrace-crawler --test extract -- --nocapture
//! ```
//!
//! Set `COPYTRACE_EXTRACT_DUMP=DIR` to also write each page's extracted title and text to
//! `DIR/NAME.extracted.txt`, for comparing with `NAME.expected.txt` when working on the
//! extractor. `peers.py` beside this file scores trafilatura and readability-lxml on the same
//! pages next to those dumps (optional; it needs Python packages).

mod metric;

use std::path::{Path, PathBuf};

use copytrace_crawler::decode::decode_html;
use copytrace_crawler::extract::extract;
use url::Url;

use crate::metric::Score;

/// Overall precision and recall the extractor must reach, both character-weighted (micro
/// average: every character counts once) and page-weighted (macro average: the mean of the
/// pages' figures). Both, because an English page has several times as many characters as a
/// Chinese page of the same length, so the micro average alone leans on the English pages.
const OVERALL_FLOOR: f64 = 0.95;
/// Precision and recall every single page must reach.
const PAGE_FLOOR: f64 = 0.80;
/// The set is meant to stay broad; fewer pages means something failed to load.
const MIN_FIXTURES: usize = 30;

struct Fixture {
    name: String,
    html: Vec<u8>,
    title: String,
    text: String,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/extract")
}

fn load_fixtures() -> Vec<Fixture> {
    let dir = fixture_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name())
        .filter_map(|name| {
            name.to_str()?
                .strip_suffix(".expected.txt")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let html_path = dir.join(format!("{name}.html"));
            let html = std::fs::read(&html_path)
                .unwrap_or_else(|e| panic!("{}: {e}", html_path.display()));
            let expected = std::fs::read_to_string(dir.join(format!("{name}.expected.txt")))
                .expect("expected text is UTF-8");
            let (title, text) = expected
                .split_once("\n\n")
                .unwrap_or_else(|| panic!("{name}.expected.txt: no blank line after the title"));
            Fixture {
                name,
                html,
                title: title.trim().to_owned(),
                text: text.to_owned(),
            }
        })
        .collect()
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn extraction_quality_on_the_fixture_set_meets_the_floor() {
    let fixtures = load_fixtures();
    assert!(
        fixtures.len() >= MIN_FIXTURES,
        "only {} fixtures in {}",
        fixtures.len(),
        fixture_dir().display()
    );
    let dump = std::env::var_os("COPYTRACE_EXTRACT_DUMP").map(PathBuf::from);

    let mut total = Score {
        extracted: 0,
        expected: 0,
        common: 0,
    };
    let (mut precision_sum, mut recall_sum) = (0.0, 0.0);
    let mut failures = Vec::new();
    println!(
        "{:<26} {:>8} {:>9} {:>9} {:>7} {:>7}  title",
        "page", "encoding", "expected", "extracted", "P", "R"
    );
    for f in &fixtures {
        let url = Url::parse(&format!("http://fixtures.example/{}.html", f.name)).unwrap();
        let (html, encoding) = decode_html(&f.html, None, Some(&url));
        let page = extract(&html, &url);
        if let Some(dir) = &dump {
            let title = page.title.as_deref().unwrap_or("");
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(
                dir.join(format!("{}.extracted.txt", f.name)),
                format!("{title}\n\n{}\n", page.text),
            )
            .unwrap();
        }
        let score = Score::of(&page.text, &f.text);
        total.add(score);
        precision_sum += score.precision();
        recall_sum += score.recall();
        let title_ok = page
            .title
            .as_deref()
            .is_some_and(|t| collapse(t).contains(&collapse(&f.title)));
        println!(
            "{:<26} {:>8} {:>9} {:>9} {:>7.3} {:>7.3}  {}",
            f.name,
            encoding,
            score.expected,
            score.extracted,
            score.precision(),
            score.recall(),
            if title_ok { "ok" } else { "MISSING" }
        );
        if score.precision() < PAGE_FLOOR || score.recall() < PAGE_FLOOR {
            failures.push(format!(
                "{}: precision {:.3}, recall {:.3} (floor {PAGE_FLOOR})",
                f.name,
                score.precision(),
                score.recall()
            ));
        }
        if !title_ok {
            failures.push(format!(
                "{}: title {:?} does not contain {:?}",
                f.name, page.title, f.title
            ));
        }
    }
    let pages = fixtures.len() as f64;
    let (macro_precision, macro_recall) = (precision_sum / pages, recall_sum / pages);
    println!(
        "{:<26} {:>8} {:>9} {:>9} {:>7.3} {:>7.3}",
        "overall, per character",
        "",
        total.expected,
        total.extracted,
        total.precision(),
        total.recall()
    );
    println!(
        "{:<26} {:>8} {:>9} {:>9} {:>7.3} {:>7.3}",
        format!("overall, per page ({})", fixtures.len()),
        "",
        "",
        "",
        macro_precision,
        macro_recall
    );
    for (what, precision, recall) in [
        ("per character", total.precision(), total.recall()),
        ("per page", macro_precision, macro_recall),
    ] {
        if precision < OVERALL_FLOOR || recall < OVERALL_FLOOR {
            failures.push(format!(
                "overall {what}: precision {precision:.3}, recall {recall:.3} \
                 (floor {OVERALL_FLOOR})"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_expected_texts_are_marked_from_the_pages_themselves() {
    // Guards the fixtures, not the extractor: every expected character must occur, in order,
    // in the page's decoded markup, so a typo in an expected file cannot masquerade as an
    // extraction error (or hide one).
    for f in load_fixtures() {
        let url = Url::parse("http://fixtures.example/").unwrap();
        let (html, _) = decode_html(&f.html, None, Some(&url));
        let source = all_text(&html);
        let score = Score::of(&source, &f.text);
        assert_eq!(
            score.common, score.expected,
            "{}: expected text not found in order in the page",
            f.name
        );
    }
}

/// All text nodes of the page (scripts included), entities decoded, in document order.
fn all_text(html: &str) -> String {
    scraper::Html::parse_document(html)
        .root_element()
        .text()
        .collect::<Vec<_>>()
        .join(" ")
}
