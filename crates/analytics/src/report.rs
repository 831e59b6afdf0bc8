//! A plain-text infringement report, grouped by work, for terminals and e-mails.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use copytrace_store::{Id, MatchRecord};

use crate::AnalyticsError;

/// Longest evidence excerpt shown per match, in characters.
const EXCERPT_CHARS: usize = 48;

/// Writes a report of `records` grouped by work. `page_texts` holds the extracted text of the
/// pages (by page id) so each match can show the start of its first evidence passage; a page
/// missing from it is listed without an excerpt.
pub fn write_text(
    records: &[MatchRecord],
    page_texts: &HashMap<Id, String>,
    mut out: impl Write,
) -> Result<(), AnalyticsError> {
    if records.is_empty() {
        writeln!(out, "No infringing pages found.")?;
        return Ok(());
    }
    let mut by_work: BTreeMap<(&str, &str), Vec<&MatchRecord>> = BTreeMap::new();
    for record in records {
        by_work
            .entry((record.work_external_id.as_str(), record.work_title.as_str()))
            .or_default()
            .push(record);
    }
    let pages: std::collections::HashSet<Id> = records.iter().map(|r| r.page_id).collect();
    writeln!(
        out,
        "{} infringing page(s) of {} work(s):",
        pages.len(),
        by_work.len()
    )?;
    for ((external_id, title), mut matches) in by_work {
        matches.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.page_url.cmp(&b.page_url))
        });
        writeln!(
            out,
            "\n《{title}》 ({external_id}): {} page(s)",
            matches.len()
        )?;
        for m in matches {
            writeln!(
                out,
                "  {}  score {:.2}  coverage {:.0}%  containment {:.0}%  passages {}",
                m.page_url,
                m.score,
                m.coverage * 100.0,
                m.containment * 100.0,
                m.evidence.len()
            )?;
            if let Some(excerpt) = excerpt(m, page_texts) {
                writeln!(out, "      “{excerpt}”")?;
            }
        }
    }
    Ok(())
}

/// The beginning of the first evidence passage, on one line.
fn excerpt(record: &MatchRecord, page_texts: &HashMap<Id, String>) -> Option<String> {
    let text = page_texts.get(&record.page_id)?;
    let passage = record.evidence.first()?;
    let slice = text.get(passage.page_start as usize..passage.page_end as usize)?;
    let mut excerpt: String = slice
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .take(EXCERPT_CHARS)
        .collect();
    if slice.chars().count() > EXCERPT_CHARS {
        excerpt.push('…');
    }
    Some(excerpt)
}
