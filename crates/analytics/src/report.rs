//! A plain-text infringement report, grouped by work, for terminals and e-mails.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use copytrace_store::{Id, MatchRecord, MatchStatus};

use crate::AnalyticsError;

/// Longest evidence excerpt shown per match, in characters.
const EXCERPT_CHARS: usize = 48;

/// The page texts a report quotes evidence from, by page id and content hash: the text each
/// match's evidence points into ([`MatchRecord::evidence_hash`]), which is not always the page's
/// current text (a re-crawl may have replaced it; the store keeps the older one).
pub type EvidenceTexts = HashMap<(Id, String), String>;

/// Writes a report of `records` grouped by work. `page_texts` holds the texts the evidence
/// points into so each match can show the start of its first evidence passage; a match whose
/// text is missing is listed without an excerpt. Each match shows its review status, and a
/// removed one when it was seen gone.
pub fn write_text(
    records: &[MatchRecord],
    page_texts: &EvidenceTexts,
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
            write!(
                out,
                "  {}  score {:.2}  coverage {:.0}%  containment {:.0}%  passages {}",
                m.page_url,
                m.score,
                m.coverage * 100.0,
                m.containment * 100.0,
                m.evidence.len()
            )?;
            if m.status != MatchStatus::Open {
                write!(out, "  {}", m.status.as_str())?;
            }
            if let Some(removed_at) = m.removed_at {
                write!(out, " since {}", removed_at.format("%Y-%m-%d %H:%M UTC"))?;
            }
            writeln!(out)?;
            if !m.chapters.is_empty() {
                writeln!(out, "      chapters {}", crate::export::chapter_list(m))?;
            }
            for alias in &m.aliases {
                writeln!(out, "      also at {alias}")?;
            }
            if let Some(excerpt) = excerpt(m, page_texts) {
                writeln!(out, "      “{excerpt}”")?;
            }
        }
    }
    Ok(())
}

/// The beginning of the first evidence passage, on one line.
fn excerpt(record: &MatchRecord, page_texts: &EvidenceTexts) -> Option<String> {
    let text = page_texts.get(&(record.page_id, record.evidence_hash.clone()))?;
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

#[cfg(test)]
mod tests {
    use copytrace_store::EvidencePassage;

    use super::*;

    fn removed_match(evidence_hash: &str) -> MatchRecord {
        let mut record = crate::fixtures::match_record("星辰");
        record.score = 0.9;
        record.containment = 0.9;
        record.status = MatchStatus::Removed;
        record.removed_at = Some(record.last_seen + chrono::Duration::days(1));
        record.evidence_hash = evidence_hash.into();
        record.evidence = vec![EvidencePassage {
            page_start: 6,
            page_end: 15,
            work_start: 0,
            work_end: 9,
        }];
        record.chapters = Vec::new();
        record
    }

    #[test]
    fn evidence_is_quoted_from_the_text_it_points_into_with_the_removal() {
        let texts: EvidenceTexts = HashMap::from([
            ((2, "old".to_owned()), "intro copied it words".to_owned()),
            ((2, "new".to_owned()), "an unrelated page now".to_owned()),
        ]);
        let mut out = Vec::new();
        write_text(&[removed_match("old")], &texts, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("“copied it”"), "{out}");
        assert!(out.contains("removed since 2026-11-02 08:00 UTC"), "{out}");

        let mut out = Vec::new();
        write_text(&[removed_match("gone")], &texts, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains('“'), "no text, no excerpt: {out}");
    }
}
