//! Copytrace analytics: turns the match library into things people read and send.
//!
//! This crate owns exports (CSV, JSON, NDJSON and XLSX of any table of typed rows, written a
//! row at a time: see [`export`]) and human-readable reports. It reads records handed to it by
//! `copytrace-store` and writes to any `io::Write`, so the CLI, the admin web and tests share
//! one implementation.
//!
//! Page titles and URLs come from pirate sites and are hostile input: every spreadsheet cell
//! that a spreadsheet program would evaluate as a formula is neutralised (CWE-1236).

pub mod delisting;
pub mod export;
pub mod notice;
pub mod report;
pub mod stats;
pub mod weekly;

/// Records the tests of several modules share.
#[cfg(test)]
mod fixtures {
    use chrono::TimeZone;
    use copytrace_store::{EvidencePassage, MatchRecord, MatchStatus, Review};

    /// A confirmed match of `xingchen-ch1` titled `title` on one page, copying chapter 7.
    pub(crate) fn match_record(title: &str) -> MatchRecord {
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
            aliases: Vec::new(),
        }
    }
}

/// Errors of exporting and reporting.
#[derive(Debug, thiserror::Error)]
pub enum AnalyticsError {
    /// Writing the output failed.
    #[error("could not write the export: {0}")]
    Io(#[from] std::io::Error),
    /// CSV encoding failed.
    #[error("could not write CSV: {0}")]
    Csv(#[from] csv::Error),
    /// JSON encoding failed.
    #[error("could not write JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing the XLSX workbook failed.
    #[error("could not write XLSX: {0}")]
    Xlsx(#[from] rust_xlsxwriter::XlsxError),
    /// A row does not fit its table (a programming error of the caller).
    #[error("a row does not fit its table: {0}")]
    Row(String),
    /// A notice template could not be rendered.
    #[error("could not render the notice: {0}")]
    Template(#[from] askama::Error),
    /// A notice would lack elements its law requires (issue 40): it is not written.
    #[error("a notice under {law} must give: {}", missing.join("; "))]
    MissingElements {
        /// The law's citation.
        law: &'static str,
        /// Each missing element, named.
        missing: Vec<String>,
    },
}
