//! The match export (`copytrace export matches`): one row per page × work match.

use copytrace_store::MatchRecord;

use super::{Cell, Column, ColumnKind, Table, TableRow};

/// Columns of the match export, in order. The first seven are a stable contract: scripts read
/// them by name, so new columns are only ever appended.
pub const CSV_HEADER: [&str; 16] = [
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
    "aliases",
];

/// The match export's table: the [`CSV_HEADER`] columns with their kinds and widths.
///
/// | column | kind | holds |
/// |---|---|---|
/// | `page_url` | text | URL of the infringing page |
/// | `work_external_id`, `work_title` | text | the rights holder's identifier and the work's title |
/// | `score`, `coverage`, `containment` | float | rounded to 4 decimals; see the matcher |
/// | `method` | text | how it was found (`simhash+align`) |
/// | `first_seen`, `last_seen` | date-time | first recorded, last confirmed (UTC) |
/// | `status` | text | `open`, `notice_sent`, `removed`, `withdrawn` or `licensed` |
/// | `evidence_passages`, `copied_chars` | integer | passages, and characters verified as copied |
/// | `removed_at` | date-time, optional | when a removal check found the copy gone |
/// | `chapters` | text | `7:第七章 雨夜 (98%)`, `; `-separated, numbered from 1 |
/// | `review` | text | `confirmed`, `pending`, `rejected` or `licensed` |
/// | `aliases` | text | other URLs of the same page (the same text on the same site), space-separated |
pub fn match_table() -> Table {
    let width = |name: &str| match name {
        "page_url" => 48.0,
        "work_title" | "chapters" | "aliases" => 32.0,
        "work_external_id" | "method" => 18.0,
        "first_seen" | "last_seen" | "removed_at" => 20.0,
        "evidence_passages" | "copied_chars" => 10.0,
        _ => 11.0,
    };
    let kind = |name: &str| match name {
        "score" | "coverage" | "containment" => ColumnKind::Float,
        "first_seen" | "last_seen" | "removed_at" => ColumnKind::DateTime,
        "evidence_passages" | "copied_chars" => ColumnKind::Integer,
        _ => ColumnKind::Text,
    };
    Table::new(
        "matches",
        CSV_HEADER
            .iter()
            .map(|&name| Column::new(name, kind(name)).width(width(name)))
            .collect(),
    )
}

/// A match's cells, in [`CSV_HEADER`] order. Its JSON form is the whole record (with `id`,
/// page and work ids, and every evidence passage's offsets).
impl TableRow for MatchRecord {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::text(&self.page_url),
            Cell::text(&self.work_external_id),
            Cell::text(&self.work_title),
            Cell::Float(round4(self.score)),
            Cell::Float(round4(self.coverage)),
            Cell::text(&self.method),
            Cell::DateTime(self.first_seen),
            Cell::Float(round4(self.containment)),
            Cell::DateTime(self.last_seen),
            Cell::text(self.status.as_str()),
            Cell::Integer(self.evidence.len() as i64),
            Cell::Integer(i64::from(self.copied_chars)),
            Cell::datetime(self.removed_at),
            Cell::Text(chapter_list(self).into()),
            Cell::text(self.review.as_str()),
            Cell::Text(self.aliases.join(" ").into()),
        ]
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
