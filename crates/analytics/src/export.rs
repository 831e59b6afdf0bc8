//! Match exports for analysts and scripts.

use std::io::Write;

use copytrace_store::MatchRecord;
use serde::Serialize;

use crate::AnalyticsError;

/// Columns of the CSV export, in order. The first seven are a stable contract: scripts read
/// them by name, so new columns are only ever appended.
pub const CSV_HEADER: [&str; 15] = [
    "page_url",
    "work_external_id",
    "work_title",
    "score",
    "coverage",
    "method",
    "first_seen",
    "containment",
    "last_seen",
    "status",
    "evidence_passages",
    "copied_chars",
    "removed_at",
    "chapters",
    "review",
];

/// One exported row: a page × work match.
#[derive(Debug, Serialize)]
pub struct ExportRow<'a> {
    /// URL of the infringing page.
    pub page_url: &'a str,
    /// The rights holder's identifier of the work.
    pub work_external_id: &'a str,
    /// Title of the work.
    pub work_title: &'a str,
    /// Score (see the matcher's documentation).
    pub score: f64,
    /// Share of the work found on the page.
    pub coverage: f64,
    /// How it was found.
    pub method: &'a str,
    /// First time the match was recorded (RFC 3339).
    pub first_seen: String,
    /// Share of the page copied from the work.
    pub containment: f64,
    /// Last time it was confirmed (RFC 3339).
    pub last_seen: String,
    /// Review state.
    pub status: &'a str,
    /// Number of evidence passages.
    pub evidence_passages: usize,
    /// Characters of the page verified as copied: what the report threshold applies to.
    pub copied_chars: u32,
    /// When a removal check found the copy gone (RFC 3339); empty while it is online.
    pub removed_at: String,
    /// The chapters copied, `7:第七章 雨夜 (98%)` separated by `; `, numbered from 1; empty
    /// when the work has no chapters.
    pub chapters: String,
    /// Whether it is reported: `confirmed`, `pending` (waiting for a person), `rejected`
    /// (a false positive) or `licensed`.
    pub review: &'a str,
}

impl<'a> From<&'a MatchRecord> for ExportRow<'a> {
    fn from(record: &'a MatchRecord) -> Self {
        ExportRow {
            page_url: &record.page_url,
            work_external_id: &record.work_external_id,
            work_title: &record.work_title,
            score: round4(record.score),
            coverage: round4(record.coverage),
            method: &record.method,
            first_seen: record
                .first_seen
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            containment: round4(record.containment),
            last_seen: record
                .last_seen
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            status: record.status.as_str(),
            evidence_passages: record.evidence.len(),
            copied_chars: record.copied_chars,
            removed_at: record.removed_at.map_or_else(String::new, |t| {
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            }),
            chapters: chapter_list(record),
            review: record.review.as_str(),
        }
    }
}

/// The chapters a match copies, in one cell: `7:第七章 雨夜 (98%); 8:第八章 (41%)`.
pub fn chapter_list(record: &MatchRecord) -> String {
    record
        .chapters
        .iter()
        .map(|c| {
            format!(
                "{}:{} ({:.0}%)",
                c.ordinal + 1,
                c.title,
                (c.coverage * 100.0).min(100.0)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

/// Writes matches as CSV with [`CSV_HEADER`], one row per page × work match.
pub fn write_csv(records: &[MatchRecord], out: impl Write) -> Result<(), AnalyticsError> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(CSV_HEADER)?;
    for record in records {
        let row = ExportRow::from(record);
        writer.write_record([
            spreadsheet_safe(row.page_url),
            spreadsheet_safe(row.work_external_id),
            spreadsheet_safe(row.work_title),
            row.score.to_string(),
            row.coverage.to_string(),
            spreadsheet_safe(row.method),
            row.first_seen,
            row.containment.to_string(),
            row.last_seen,
            row.status.to_owned(),
            row.evidence_passages.to_string(),
            row.copied_chars.to_string(),
            row.removed_at,
            spreadsheet_safe(&row.chapters),
            row.review.to_owned(),
        ])?;
    }
    writer.flush()?;
    Ok(())
}

/// Writes matches as a pretty JSON array of full records (with evidence offsets).
pub fn write_json(records: &[MatchRecord], mut out: impl Write) -> Result<(), AnalyticsError> {
    serde_json::to_writer_pretty(&mut out, records)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Prefixes `'` to text a spreadsheet would evaluate as a formula (CWE-1236).
pub fn spreadsheet_safe(value: &str) -> String {
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{value}")
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use copytrace_store::{EvidencePassage, MatchStatus, Review};

    fn record(title: &str) -> MatchRecord {
        let at = chrono::Utc.with_ymd_and_hms(2026, 11, 1, 8, 0, 0).unwrap();
        MatchRecord {
            id: 1,
            page_id: 2,
            page_url: "http://pirate.example/1.html".into(),
            page_title: None,
            work_id: 3,
            work_external_id: "xingchen-ch1".into(),
            work_title: title.into(),
            rights_holder_id: 1,
            score: 0.987654,
            coverage: 0.5,
            containment: 0.987654,
            copied_chars: 420,
            method: "simhash+align".into(),
            status: MatchStatus::Open,
            review: Review::Confirmed,
            first_seen: at,
            last_seen: at,
            removed_at: None,
            evidence_hash: "abc".into(),
            evidence: vec![EvidencePassage {
                page_start: 0,
                page_end: 3,
                work_start: 0,
                work_end: 3,
            }],
            chapters: vec![copytrace_store::ChapterCopy {
                ordinal: 6,
                title: "第七章 雨夜".into(),
                copied_bytes: 2900,
                coverage: 0.975,
            }],
        }
    }

    #[test]
    fn csv_has_the_contract_header_and_one_row_per_match() {
        let mut out = Vec::new();
        write_csv(&[record("星辰旅人")], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert!(
            lines.next().unwrap().starts_with(
                "page_url,work_external_id,work_title,score,coverage,method,first_seen"
            )
        );
        assert_eq!(
            lines.next().unwrap(),
            "http://pirate.example/1.html,xingchen-ch1,星辰旅人,0.9877,0.5,simhash+align,\
             2026-11-01T08:00:00Z,0.9877,2026-11-01T08:00:00Z,open,1,420,,7:第七章 雨夜 (98%),confirmed"
        );
        assert!(lines.next().is_none());
        // A copy found gone carries when.
        let mut removed = record("星辰旅人");
        removed.status = MatchStatus::Removed;
        removed.removed_at = Some(removed.last_seen);
        let mut out = Vec::new();
        write_csv(&[removed], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .ends_with(",removed,1,420,2026-11-01T08:00:00Z,7:第七章 雨夜 (98%),confirmed"),
            "{text}"
        );
    }

    #[test]
    fn formula_like_cells_are_neutralised() {
        let mut out = Vec::new();
        write_csv(&[record("=HYPERLINK(\"http://evil\")")], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\"'=HYPERLINK(\"\"http://evil\"\")\""),
            "{text}"
        );
    }

    #[test]
    fn json_round_trips_the_records() {
        let mut out = Vec::new();
        write_json(&[record("星辰旅人")], &mut out).unwrap();
        let parsed: Vec<MatchRecord> = serde_json::from_slice(&out).unwrap();
        assert_eq!(parsed, vec![record("星辰旅人")]);
    }
}
