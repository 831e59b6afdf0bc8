//! The statistics exports (`copytrace export works|chapters|sites|daily|time-to-piracy`): the
//! rows of [`crate::stats`] as tables, so the four writers serve them as they serve matches.
//!
//! Their JSON form is the same as `copytrace stats … --json` prints, one object per row.

use chrono::NaiveDate;
use copytrace_store::{DailyStats, HolderStats};

use super::{Cell, Column, Table, TableRow};
use crate::stats::{ChapterRow, FirstCopyRow, NoticeRow, SiteRow, WorkRow};

/// Scores, coverages and rates are shown with this many decimals in spreadsheets; the stored
/// value is exact.
const FRACTION: &str = "0.0000";
/// Removal rates and coverages as percentages.
const PERCENT: &str = "0.0%";
/// Hours with one decimal.
const HOURS: &str = "0.0";

/// Copies per work ([`WorkRow`]).
pub fn work_table() -> Table {
    Table::new(
        "works",
        vec![
            Column::integer("work_id").width(9.0),
            Column::text("work_external_id").width(18.0),
            Column::text("title").width(32.0),
            Column::integer("rights_holder_id").width(9.0),
            Column::integer("pages").width(9.0),
            Column::integer("sites").width(9.0),
            Column::float("best_score").num_format(FRACTION),
            Column::float("mean_score").num_format(FRACTION),
            Column::float("best_coverage").num_format(PERCENT),
            Column::datetime("first_seen").width(20.0),
            Column::datetime("last_seen").width(20.0),
            Column::integer("online").width(9.0),
            Column::integer("removed").width(9.0),
            Column::datetime("published_at").width(20.0),
            Column::float("hours_to_first_copy").num_format(HOURS),
        ],
    )
}

impl TableRow for WorkRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        let s = &self.stats;
        vec![
            Cell::Integer(s.work_id),
            Cell::text(&s.external_id),
            Cell::text(&s.title),
            Cell::Integer(s.rights_holder_id),
            count(s.pages),
            count(s.sites),
            Cell::Float(s.best_score),
            Cell::Float(s.mean_score),
            Cell::Float(s.best_coverage),
            Cell::DateTime(s.first_seen),
            Cell::DateTime(s.last_seen),
            count(s.online),
            count(s.removed),
            Cell::datetime(s.published_at),
            hours(self.hours_to_first_copy),
        ]
    }
}

/// Copies per chapter ([`ChapterRow`]).
pub fn chapter_table() -> Table {
    Table::new(
        "chapters",
        vec![
            Column::integer("work_id").width(9.0),
            Column::text("work_external_id").width(18.0),
            Column::integer("chapter").width(9.0),
            Column::text("title").width(32.0),
            Column::integer("pages").width(9.0),
            Column::integer("sites").width(9.0),
            Column::float("best_score").num_format(FRACTION),
            Column::float("best_coverage").num_format(PERCENT),
            Column::datetime("first_seen").width(20.0),
            Column::datetime("last_seen").width(20.0),
            Column::integer("online").width(9.0),
            Column::integer("removed").width(9.0),
        ],
    )
}

impl TableRow for ChapterRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::Integer(self.work_id),
            Cell::text(&self.work_external_id),
            Cell::Integer(i64::from(self.chapter)),
            Cell::text(&self.title),
            count(self.pages),
            count(self.sites),
            Cell::Float(self.best_score),
            Cell::Float(self.best_coverage),
            Cell::DateTime(self.first_seen),
            Cell::DateTime(self.last_seen),
            count(self.online),
            count(self.removed),
        ]
    }
}

/// Copies per site or registered domain ([`SiteRow`]).
pub fn site_table() -> Table {
    Table::new(
        "sites",
        vec![
            Column::text("site").width(32.0),
            Column::integer("hosts").width(9.0),
            Column::integer("pages").width(9.0),
            Column::integer("works").width(9.0),
            Column::integer("copies").width(9.0),
            Column::integer("removed").width(9.0),
            Column::integer("notice_sent").width(11.0),
            Column::float("removal_rate").num_format(PERCENT),
            Column::float("median_hours_to_removal")
                .num_format(HOURS)
                .width(14.0),
            Column::float("median_hours_online")
                .num_format(HOURS)
                .width(14.0),
            Column::datetime("first_seen").width(20.0),
            Column::datetime("last_seen").width(20.0),
        ],
    )
}

impl TableRow for SiteRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::text(&self.site),
            count(self.hosts),
            count(self.pages),
            count(self.works),
            count(self.copies),
            count(self.removed),
            count(self.notice_sent),
            Cell::Float(self.removal_rate),
            self.median_hours_to_removal
                .map_or(Cell::Empty, Cell::Float),
            self.median_hours_online.map_or(Cell::Empty, Cell::Float),
            Cell::DateTime(self.first_seen),
            Cell::DateTime(self.last_seen),
        ]
    }
}

/// Activity per UTC day ([`DailyStats`]).
pub fn daily_table() -> Table {
    Table::new(
        "daily",
        vec![
            Column::date("day").width(12.0),
            Column::integer("new_matches").width(12.0),
            Column::integer("removals").width(10.0),
            Column::integer("pages_crawled").width(13.0),
        ],
    )
}

impl TableRow for DailyStats {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            // The store names days `YYYY-MM-DD`; a day it could not name stays readable text.
            NaiveDate::parse_from_str(&self.day, "%Y-%m-%d")
                .map_or_else(|_| Cell::text(&self.day), Cell::Date),
            count(self.new_matches),
            count(self.removals),
            count(self.pages_crawled),
        ]
    }
}

/// Time to piracy, one row per work × site: the chart-ready series ([`FirstCopyRow`]).
pub fn first_copy_table() -> Table {
    Table::new(
        "time_to_piracy",
        vec![
            Column::integer("work_id").width(9.0),
            Column::text("work_external_id").width(18.0),
            Column::text("site").width(32.0),
            Column::datetime("published_at").width(20.0),
            Column::text("published_from").width(14.0),
            Column::datetime("first_copy_at").width(20.0),
            Column::float("hours").num_format(HOURS),
        ],
    )
}

impl TableRow for FirstCopyRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::Integer(self.work_id),
            Cell::text(&self.work_external_id),
            Cell::text(&self.site),
            Cell::datetime(self.published_at),
            Cell::text(if self.published_at.is_some() {
                "catalog"
            } else {
                "unknown"
            }),
            Cell::DateTime(self.first_copy_at),
            hours(self.hours),
        ]
    }
}

/// Copies per rights holder ([`HolderStats`], as `stats holders` counts them).
pub fn holder_table() -> Table {
    Table::new(
        "holders",
        vec![
            Column::integer("rights_holder_id").width(9.0),
            Column::text("name").width(24.0),
            Column::integer("works_copied").width(12.0),
            Column::integer("pages").width(9.0),
            Column::integer("sites").width(9.0),
            Column::integer("copies").width(9.0),
            Column::integer("confirmed").width(10.0),
            Column::integer("pending").width(9.0),
            Column::integer("removed").width(9.0),
        ],
    )
}

impl TableRow for HolderStats {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::Integer(self.rights_holder_id),
            Cell::text(&self.name),
            count(self.works_copied),
            count(self.pages),
            count(self.sites),
            count(self.copies),
            count(self.confirmed),
            count(self.pending),
            count(self.removed),
        ]
    }
}

/// How sites answered takedown notices ([`NoticeRow`], as `stats notices` counts them).
pub fn notice_table() -> Table {
    Table::new(
        "notices",
        vec![
            Column::text("site").width(32.0),
            Column::integer("sent").width(9.0),
            Column::integer("removal_verified").width(12.0),
            Column::integer("partially_removed").width(12.0),
            Column::integer("ignored").width(9.0),
            Column::float("response_rate").num_format(PERCENT),
            Column::float("median_hours_to_removal")
                .num_format(HOURS)
                .width(14.0),
            Column::integer("awaiting_follow_up").width(12.0),
        ],
    )
}

impl TableRow for NoticeRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::text(&self.site),
            count(self.sent),
            count(self.removal_verified),
            count(self.partially_removed),
            count(self.ignored),
            Cell::Float(self.response_rate),
            hours(self.median_hours_to_removal),
            count(self.awaiting_follow_up),
        ]
    }
}

/// Hours of time to piracy, or an empty cell when the publication time is unknown (a zero
/// would read as "copied at once").
fn hours(value: Option<f64>) -> Cell<'static> {
    value.map_or(Cell::Empty, Cell::Float)
}

/// A count as an integer cell (counts beyond `i64` do not occur; they would saturate).
fn count(value: u64) -> Cell<'static> {
    Cell::Integer(i64::try_from(value).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportFormat, ExportOptions, TableWriter};

    fn csv<R: TableRow>(table: &Table, rows: &[R]) -> String {
        let mut out = Vec::new();
        let mut writer = TableWriter::new(
            ExportFormat::Csv,
            table,
            &mut out,
            &ExportOptions::default(),
        )
        .unwrap();
        for row in rows {
            writer.write(row).unwrap();
        }
        assert_eq!(writer.finish().unwrap(), rows.len() as u64);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn daily_rows_are_dates_and_counts() {
        let rows = [
            DailyStats {
                day: "2026-11-01".into(),
                new_matches: 3,
                removals: 1,
                pages_crawled: 40,
            },
            DailyStats {
                day: "2026-11-02".into(),
                new_matches: 0,
                removals: 2,
                pages_crawled: 0,
            },
        ];
        assert_eq!(
            csv(&daily_table(), &rows),
            "day,new_matches,removals,pages_crawled\n2026-11-01,3,1,40\n2026-11-02,0,2,0\n"
        );
    }

    #[test]
    fn a_site_without_removals_has_empty_medians() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-01T08:00:00Z")
            .unwrap()
            .to_utc();
        let row = SiteRow {
            site: "=pirate.example".into(),
            hosts: 1,
            pages: 2,
            works: 1,
            copies: 2,
            removed: 0,
            notice_sent: 0,
            removal_rate: 0.0,
            median_hours_to_removal: None,
            median_hours_online: Some(36.5),
            first_seen: at,
            last_seen: at,
        };
        let text = csv(&site_table(), &[row]);
        let line = text.lines().nth(1).unwrap();
        // A formula-looking name is neutralised; the missing median is an empty field.
        assert_eq!(
            line,
            "'=pirate.example,1,2,1,2,0,0,0,,36.5,2026-11-01T08:00:00Z,2026-11-01T08:00:00Z"
        );
    }

    #[test]
    fn an_unknown_publication_time_is_no_zero_hours_to_piracy() {
        let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc();
        let row = |published_at: Option<&str>, hours: Option<f64>| FirstCopyRow {
            work_id: 1,
            work_external_id: "w1".into(),
            site: "pirate.example".into(),
            published_at: published_at.map(at),
            first_copy_at: at("2026-11-02T08:00:00Z"),
            hours,
        };
        let text = csv(
            &first_copy_table(),
            &[
                row(Some("2026-11-01T08:00:00Z"), Some(24.0)),
                row(None, None),
            ],
        );
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "1,w1,pirate.example,2026-11-01T08:00:00Z,catalog,2026-11-02T08:00:00Z,24",
                "1,w1,pirate.example,,unknown,2026-11-02T08:00:00Z,",
            ]
        );
    }
}
