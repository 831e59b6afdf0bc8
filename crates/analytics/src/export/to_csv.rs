//! CSV: UTF-8, a header row, text neutralised against formula injection.

use std::borrow::Cow;
use std::io::Write;

use super::{Cell, ExportOptions, Table, spreadsheet_safe};
use crate::AnalyticsError;

/// The UTF-8 byte order mark.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Writes rows as CSV records.
pub(super) struct CsvSink<W: Write> {
    writer: csv::Writer<W>,
}

impl<W: Write> CsvSink<W> {
    /// Writes the BOM (if asked for) and the header.
    pub(super) fn new(
        mut out: W,
        table: &Table,
        options: &ExportOptions,
    ) -> Result<Self, AnalyticsError> {
        if options.bom {
            out.write_all(BOM)?;
        }
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(table.header())?;
        Ok(CsvSink { writer })
    }

    /// Writes one record.
    pub(super) fn write(&mut self, cells: &[Cell<'_>]) -> Result<(), AnalyticsError> {
        for cell in cells {
            self.writer.write_field(field(cell).as_bytes())?;
        }
        self.writer.write_record(None::<&[u8]>)?;
        Ok(())
    }

    /// Flushes everything to the output.
    pub(super) fn finish(mut self) -> Result<(), AnalyticsError> {
        self.writer.flush()?;
        let mut out = self
            .writer
            .into_inner()
            .map_err(|error| AnalyticsError::Io(error.into_error()))?;
        out.flush()?;
        Ok(())
    }
}

/// A cell as a CSV field.
fn field<'c>(cell: &'c Cell<'_>) -> Cow<'c, str> {
    match cell {
        Cell::Empty => Cow::Borrowed(""),
        Cell::Text(text) => spreadsheet_safe(text),
        Cell::Integer(n) => Cow::Owned(n.to_string()),
        Cell::Float(x) => Cow::Owned(x.to_string()),
        Cell::Date(day) => Cow::Owned(day.format("%Y-%m-%d").to_string()),
        Cell::DateTime(at) => Cow::Owned(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
    }
}
