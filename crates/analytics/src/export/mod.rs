//! Exports: any table of typed rows as CSV, JSON, NDJSON or XLSX, written one row at a time.
//!
//! # The abstraction
//!
//! An export is a [`Table`] (a sheet name and its [`Column`]s: a header name, a
//! [`ColumnKind`], a width for spreadsheets and an optional number format) and a sequence of
//! rows of one type that implements [`TableRow`]. [`TableWriter`] takes the rows **one at a
//! time** and writes them straight out in the chosen [`ExportFormat`], so memory stays flat
//! however many rows there are, as long as the caller also reads them one at a time (a
//! database stream or keyset pages, not a `Vec`).
//!
//! A row has two faces, and each format uses one:
//!
//! * **typed cells** ([`TableRow::cells`]), one [`Cell`] per column in the table's order, for
//!   CSV and XLSX: text, integers, floats, dates and date-times, or empty for a value that is
//!   absent (an optional date, say);
//! * **its serde form** (`TableRow: Serialize`) for JSON and NDJSON, which may be richer than
//!   the columns (the match export's JSON carries every evidence passage, which has no column).
//!
//! Writing a new export (statistics per work, per site, per day …) is therefore:
//!
//! ```
//! use copytrace_analytics::export::{Cell, Column, ExportFormat, ExportOptions, Table,
//!     TableRow, TableWriter};
//!
//! #[derive(serde::Serialize)]
//! struct Day { day: chrono::NaiveDate, new_matches: i64, removal_rate: Option<f64> }
//!
//! impl TableRow for Day {
//!     fn cells(&self) -> Vec<Cell<'_>> {
//!         vec![
//!             Cell::Date(self.day),
//!             Cell::Integer(self.new_matches),
//!             self.removal_rate.map_or(Cell::Empty, Cell::Float),
//!         ]
//!     }
//! }
//!
//! let table = Table::new("daily", vec![
//!     Column::date("day"),
//!     Column::integer("new_matches"),
//!     Column::float("removal_rate").num_format("0.0%"),
//! ]);
//! let mut out = Vec::new();
//! let mut writer = TableWriter::new(ExportFormat::Csv, &table, &mut out, &ExportOptions::default())?;
//! writer.write(&Day { day: chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap(),
//!                     new_matches: 3, removal_rate: None })?;
//! assert_eq!(writer.finish()?, 1);
//! assert_eq!(String::from_utf8(out).unwrap(), "day,new_matches,removal_rate\n2026-11-01,3,\n");
//! # Ok::<(), copytrace_analytics::AnalyticsError>(())
//! ```
//!
//! # What each format does with the cells
//!
//! | cell | CSV | XLSX |
//! |---|---|---|
//! | [`Cell::Text`] | as is, `'` prefixed when it would run as a formula ([`spreadsheet_safe`]) | a string cell; one that looks like a formula also gets Excel's quote prefix |
//! | [`Cell::Integer`], [`Cell::Float`] | Rust's shortest round-trip form (`0.5`, `420`) | a number (in the column's number format, if any) |
//! | [`Cell::Date`] | `2026-11-01` | a date (`yyyy-mm-dd`) |
//! | [`Cell::DateTime`] | RFC 3339 in UTC to the second (`2026-11-01T08:00:00Z`) | a date-time in UTC (`yyyy-mm-dd hh:mm:ss`) |
//! | [`Cell::Empty`] | an empty field | no cell |
//!
//! **Formula injection** (CWE-1236): titles and URLs come from pirate sites. In CSV the only
//! defence is to change the text, so a leading `= + - @ TAB CR` gets a `'`. In XLSX a cell has a
//! type, and text is written as a *string* cell, which Excel, LibreOffice and every reader show
//! as text and never evaluate, so the text is kept exactly as it is (an analyst filtering on a
//! title sees the real title); such a cell also carries the quote-prefix style, which is what
//! Excel itself stores when a person types `'=…`, so that editing the cell and pressing Enter
//! does not turn it into a formula either.
//!
//! **XLSX** is written with `rust_xlsxwriter` in its constant-memory mode: each row goes to a
//! temporary file as soon as the next begins, and the workbook is zipped into `out` by
//! [`TableWriter::finish`] (no seeking, so `out` may be a pipe). The temporary file is as large
//! as the uncompressed sheet (about 0.75 kB a match row); [`ExportOptions::scratch_dir`] puts it
//! beside the output instead of the system's temporary directory, which may be RAM-backed. A
//! sheet holds at most [`XLSX_ROWS_PER_SHEET`] data rows below its header (Excel's limit of
//! 1,048,576 rows); beyond that the rows continue on `"{sheet} (2)"`, and so on, each sheet with
//! its own header, frozen top row and autofilter. Text longer than Excel's 32,767 characters a
//! cell is cut there with `…`.
//!
//! **JSON** is one array, pretty-printed exactly as `serde_json::to_writer_pretty` prints a
//! slice, but streamed: `[`, each row as it comes, `]`. **NDJSON** is one compact object per
//! line.

mod matches;
mod statistics;
mod to_csv;
mod to_json;
mod to_xlsx;

use std::borrow::Cow;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::AnalyticsError;

pub use matches::{CSV_HEADER, chapter_list, match_table};
pub use statistics::{
    chapter_table, daily_table, first_copy_table, holder_table, notice_table, site_table,
    work_table,
};
pub use to_xlsx::XLSX_ROWS_PER_SHEET;

/// The file formats an export can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Comma-separated values in UTF-8 with a header row (optionally after a BOM).
    Csv,
    /// One JSON array of the rows' serde form.
    Json,
    /// One JSON object per line (newline-delimited JSON), for streaming consumers.
    Ndjson,
    /// An Excel workbook with typed cells.
    Xlsx,
}

impl ExportFormat {
    /// Whether the output is binary (not for a terminal).
    pub fn is_binary(self) -> bool {
        self == ExportFormat::Xlsx
    }
}

/// How an export is written, beyond its format.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// CSV only: start with a UTF-8 byte order mark, without which Excel reads a CSV file in
    /// the machine's legacy code page and garbles Chinese text.
    pub bom: bool,
    /// XLSX only: where the sheet's temporary file goes (the system's temporary directory when
    /// `None`).
    pub scratch_dir: Option<PathBuf>,
}

/// What a column holds; each cell of it is of this kind or [`Cell::Empty`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Free text.
    Text,
    /// Whole numbers.
    Integer,
    /// Real numbers.
    Float,
    /// Calendar dates.
    Date,
    /// Instants, in UTC.
    DateTime,
}

/// One column of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header: CSV column name and XLSX header cell. JSON keys come from the row's serde
    /// form, not from here.
    pub name: String,
    /// What its cells hold.
    pub kind: ColumnKind,
    /// XLSX column width in characters of the default font.
    pub width: f64,
    /// XLSX number format of its numbers (`"0.0%"`, `"#,##0"`); `None` for Excel's general
    /// format. Dates and date-times have their own formats.
    pub num_format: Option<String>,
}

impl Column {
    /// A column of `kind`, with a width that fits its kind.
    pub fn new(name: impl Into<String>, kind: ColumnKind) -> Self {
        let width = match kind {
            ColumnKind::Text => 24.0,
            ColumnKind::Integer | ColumnKind::Float => 12.0,
            ColumnKind::Date => 12.0,
            ColumnKind::DateTime => 20.0,
        };
        Column {
            name: name.into(),
            kind,
            width,
            num_format: None,
        }
    }

    /// A text column.
    pub fn text(name: impl Into<String>) -> Self {
        Column::new(name, ColumnKind::Text)
    }

    /// An integer column.
    pub fn integer(name: impl Into<String>) -> Self {
        Column::new(name, ColumnKind::Integer)
    }

    /// A float column.
    pub fn float(name: impl Into<String>) -> Self {
        Column::new(name, ColumnKind::Float)
    }

    /// A date column.
    pub fn date(name: impl Into<String>) -> Self {
        Column::new(name, ColumnKind::Date)
    }

    /// A date-time column.
    pub fn datetime(name: impl Into<String>) -> Self {
        Column::new(name, ColumnKind::DateTime)
    }

    /// The same column with an XLSX width of `width` characters.
    pub fn width(mut self, width: f64) -> Self {
        self.width = width;
        self
    }

    /// The same column with an XLSX number format.
    pub fn num_format(mut self, format: impl Into<String>) -> Self {
        self.num_format = Some(format.into());
        self
    }
}

/// The shape of an export: a sheet name and its columns, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// XLSX worksheet name (at most 31 characters, none of `[ ] : * ? / \`).
    pub sheet: String,
    /// The columns, in order.
    pub columns: Vec<Column>,
}

impl Table {
    /// A table named `sheet` with `columns`.
    pub fn new(sheet: impl Into<String>, columns: Vec<Column>) -> Self {
        Table {
            sheet: sheet.into(),
            columns,
        }
    }

    /// The header names, in order.
    pub fn header(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.name.as_str())
    }
}

/// One typed value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// No value (an optional one that is absent): an empty CSV field, no XLSX cell.
    Empty,
    /// Text.
    Text(Cow<'a, str>),
    /// A whole number.
    Integer(i64),
    /// A real number.
    Float(f64),
    /// A calendar date.
    Date(NaiveDate),
    /// An instant, shown in UTC.
    DateTime(DateTime<Utc>),
}

impl<'a> Cell<'a> {
    /// Borrowed text.
    pub fn text(text: &'a str) -> Self {
        Cell::Text(Cow::Borrowed(text))
    }

    /// A date-time, or [`Cell::Empty`] for `None`.
    pub fn datetime(at: Option<DateTime<Utc>>) -> Self {
        at.map_or(Cell::Empty, Cell::DateTime)
    }

    /// Whether the cell may stand in a column of `kind`.
    fn fits(&self, kind: ColumnKind) -> bool {
        matches!(
            (self, kind),
            (Cell::Empty, _)
                | (Cell::Text(_), ColumnKind::Text)
                | (Cell::Integer(_), ColumnKind::Integer)
                | (Cell::Float(_), ColumnKind::Float)
                | (Cell::Date(_), ColumnKind::Date)
                | (Cell::DateTime(_), ColumnKind::DateTime)
        )
    }
}

/// A row of an export: its typed cells for CSV and XLSX, its serde form for JSON and NDJSON.
pub trait TableRow: Serialize {
    /// One cell per column of the table, in the table's order, each of its column's kind or
    /// [`Cell::Empty`].
    fn cells(&self) -> Vec<Cell<'_>>;
}

/// Writes the rows of one [`Table`] to `out` in one [`ExportFormat`], one row at a time.
///
/// Create it, [`write`](TableWriter::write) each row, then [`finish`](TableWriter::finish):
/// only `finish` completes the output (the JSON array's `]`, the XLSX workbook), so an export
/// abandoned on an error is visibly incomplete, and callers writing to a file write to a
/// temporary one and rename it after `finish`. The output is buffered here; `out` need not be.
pub struct TableWriter<'t, W: Write + Send> {
    table: &'t Table,
    rows: u64,
    sink: Sink<W>,
}

/// The format-specific part of a [`TableWriter`].
enum Sink<W: Write + Send> {
    /// `csv::Writer` buffers itself. Boxed like XLSX: the variants' sizes differ a lot.
    Csv(Box<to_csv::CsvSink<W>>),
    Json(to_json::JsonArraySink<BufWriter<W>>),
    Ndjson(BufWriter<W>),
    Xlsx(Box<to_xlsx::XlsxSink<W>>),
}

impl<'t, W: Write + Send> TableWriter<'t, W> {
    /// Starts an export of `table` to `out`: writes what comes before the first row (the CSV
    /// BOM and header, the JSON `[`, the XLSX header row).
    pub fn new(
        format: ExportFormat,
        table: &'t Table,
        out: W,
        options: &ExportOptions,
    ) -> Result<Self, AnalyticsError> {
        let sink = match format {
            ExportFormat::Csv => Sink::Csv(Box::new(to_csv::CsvSink::new(out, table, options)?)),
            ExportFormat::Json => Sink::Json(to_json::JsonArraySink::new(BufWriter::new(out))?),
            ExportFormat::Ndjson => Sink::Ndjson(BufWriter::new(out)),
            ExportFormat::Xlsx => {
                Sink::Xlsx(Box::new(to_xlsx::XlsxSink::new(out, table, options)?))
            }
        };
        Ok(TableWriter {
            table,
            rows: 0,
            sink,
        })
    }

    /// Writes one row.
    ///
    /// # Errors
    ///
    /// [`AnalyticsError::Row`] if the row's cells do not fit the table (a programming error:
    /// wrong count, or a cell of another kind than its column), and any error of the output.
    pub fn write<R: TableRow + ?Sized>(&mut self, row: &R) -> Result<(), AnalyticsError> {
        match &mut self.sink {
            Sink::Json(sink) => sink.write(row)?,
            Sink::Ndjson(out) => {
                serde_json::to_writer(&mut *out, row)?;
                out.write_all(b"\n")?;
            }
            Sink::Csv(sink) => sink.write(&checked(self.table, row.cells())?)?,
            Sink::Xlsx(sink) => sink.write(&checked(self.table, row.cells())?)?,
        }
        self.rows += 1;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Completes the output and flushes it; returns how many rows were written.
    pub fn finish(self) -> Result<u64, AnalyticsError> {
        match self.sink {
            Sink::Csv(sink) => sink.finish()?,
            Sink::Json(sink) => sink.finish()?,
            Sink::Ndjson(mut out) => out.flush()?,
            Sink::Xlsx(sink) => sink.finish()?,
        }
        Ok(self.rows)
    }
}

/// Several tables as the worksheets of one XLSX workbook, one worksheet (or more, past
/// [`XLSX_ROWS_PER_SHEET`] rows) per table, in the order they are written: what a report
/// with several tables attaches. Each worksheet is written as [`TableWriter`] writes an XLSX
/// export (typed cells, frozen header, autofilter, formula-looking text kept as text).
///
/// ```
/// use copytrace_analytics::export::{Workbook, ExportOptions, daily_table, site_table};
///
/// let mut out = Vec::new();
/// let mut book = Workbook::new(&mut out, &ExportOptions::default());
/// book.sheet(&daily_table(), &Vec::<copytrace_store::DailyStats>::new())?;
/// book.sheet(&site_table(), &Vec::<copytrace_analytics::stats::SiteRow>::new())?;
/// book.finish()?;
/// assert!(out.starts_with(b"PK"));
/// # Ok::<(), copytrace_analytics::AnalyticsError>(())
/// ```
pub struct Workbook<W: Write + Send> {
    /// The output, until the first sheet starts the workbook.
    out: Option<W>,
    options: ExportOptions,
    sink: Option<Box<to_xlsx::XlsxSink<W>>>,
}

impl<W: Write + Send> Workbook<W> {
    /// A workbook that [`Workbook::finish`] writes to `out`.
    pub fn new(out: W, options: &ExportOptions) -> Self {
        Workbook {
            out: Some(out),
            options: options.clone(),
            sink: None,
        }
    }

    /// Adds `table` as the next worksheet, with `rows`; returns how many rows it holds.
    pub fn sheet<R: TableRow>(&mut self, table: &Table, rows: &[R]) -> Result<u64, AnalyticsError> {
        match (&mut self.sink, self.out.take()) {
            (Some(sink), _) => sink.next_table(table)?,
            (None, Some(out)) => {
                self.sink = Some(Box::new(to_xlsx::XlsxSink::new(out, table, &self.options)?));
            }
            (None, None) => unreachable!("the output is kept until the first sheet"),
        }
        let sink = self.sink.as_mut().expect("started above");
        for row in rows {
            sink.write(&checked(table, row.cells())?)?;
        }
        Ok(rows.len() as u64)
    }

    /// Writes the workbook to its output; refused for a workbook without a sheet.
    pub fn finish(self) -> Result<(), AnalyticsError> {
        match self.sink {
            Some(sink) => sink.finish(),
            None => Err(AnalyticsError::Row("a workbook needs a sheet".into())),
        }
    }
}

/// `cells`, if they fit `table`'s columns.
fn checked<'c>(table: &Table, cells: Vec<Cell<'c>>) -> Result<Vec<Cell<'c>>, AnalyticsError> {
    if cells.len() != table.columns.len() {
        return Err(AnalyticsError::Row(format!(
            "a row of {} has {} cells for {} columns",
            table.sheet,
            cells.len(),
            table.columns.len()
        )));
    }
    if let Some((cell, column)) = cells
        .iter()
        .zip(&table.columns)
        .find(|(cell, column)| !cell.fits(column.kind))
    {
        return Err(AnalyticsError::Row(format!(
            "column {} of {} holds {:?} values, not {cell:?}",
            column.name, table.sheet, column.kind
        )));
    }
    Ok(cells)
}

/// Whether a spreadsheet program would evaluate `value` as a formula (or a DDE command) when
/// it begins a cell: it starts with `=`, `+`, `-`, `@`, a tab or a carriage return.
pub fn looks_like_formula(value: &str) -> bool {
    value.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// Prefixes `'` to text a spreadsheet would evaluate as a formula (CWE-1236), for CSV, where
/// text has no type that could say "this is not a formula".
pub fn spreadsheet_safe(value: &str) -> Cow<'_, str> {
    if looks_like_formula(value) {
        Cow::Owned(format!("'{value}"))
    } else {
        Cow::Borrowed(value)
    }
}

#[cfg(test)]
mod tests;
