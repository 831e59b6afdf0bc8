//! XLSX: typed cells in constant-memory worksheets, zipped into the output at the end.

use std::borrow::Cow;
use std::io::Write;

use chrono::Datelike;
use rust_xlsxwriter::{ColNum, ExcelDateTime, Format, RowNum, Workbook};

use super::{Cell, ColumnKind, ExportOptions, Table, looks_like_formula};
use crate::AnalyticsError;

/// Data rows a worksheet holds below its header: Excel's 1,048,576 rows, less the header.
pub const XLSX_ROWS_PER_SHEET: u32 = 1_048_575;

/// The longest text Excel keeps in one cell, in UTF-16 code units.
const MAX_CELL_UNITS: usize = 32_767;

/// Writes rows into worksheets of a workbook that is saved to `out` at the end.
pub(super) struct XlsxSink<W: Write + Send> {
    workbook: Workbook,
    out: W,
    /// Sheet name and columns.
    table: Table,
    /// Formats by column: the column's number format for numbers, the date or date-time
    /// format for dates; `None` for text and general numbers.
    formats: Vec<Option<Format>>,
    /// For text that looks like a formula: a string cell with Excel's quote prefix.
    quoted: Format,
    bold: Format,
    /// Index of the worksheet being written (in the workbook), which worksheet of its table it
    /// is (from 0: a table longer than a sheet continues on the next), and its next row.
    sheet: usize,
    part: usize,
    row: RowNum,
    /// Data rows per worksheet (only tests lower it).
    rows_per_sheet: u32,
}

impl<W: Write + Send> XlsxSink<W> {
    /// Creates the workbook and its first worksheet, with the header row.
    pub(super) fn new(
        out: W,
        table: &Table,
        options: &ExportOptions,
    ) -> Result<Self, AnalyticsError> {
        Self::with_rows_per_sheet(out, table, options, XLSX_ROWS_PER_SHEET)
    }

    /// [`XlsxSink::new`] starting a new worksheet every `rows_per_sheet` rows.
    pub(super) fn with_rows_per_sheet(
        out: W,
        table: &Table,
        options: &ExportOptions,
        rows_per_sheet: u32,
    ) -> Result<Self, AnalyticsError> {
        let mut workbook = Workbook::new();
        if let Some(dir) = &options.scratch_dir {
            workbook.set_tempdir(dir)?;
        }
        let mut sink = XlsxSink {
            workbook,
            out,
            table: table.clone(),
            formats: formats_of(table),
            quoted: Format::new().set_quote_prefix(),
            bold: Format::new().set_bold(),
            sheet: 0,
            part: 0,
            row: 0,
            rows_per_sheet: rows_per_sheet.clamp(1, XLSX_ROWS_PER_SHEET),
        };
        sink.add_sheet()?;
        Ok(sink)
    }

    /// Ends the current table's last worksheet and starts `table`'s first, in the same
    /// workbook: the worksheets of a [`super::Workbook`].
    pub(super) fn next_table(&mut self, table: &Table) -> Result<(), AnalyticsError> {
        self.set_autofilter()?;
        self.table = table.clone();
        self.formats = formats_of(table);
        self.sheet += 1;
        self.part = 0;
        self.add_sheet()
    }

    /// Starts worksheet number `self.sheet` (from 0), part `self.part` of its table: name,
    /// column widths, header, frozen header row.
    fn add_sheet(&mut self) -> Result<(), AnalyticsError> {
        let name = if self.part == 0 {
            self.table.sheet.clone()
        } else {
            format!("{} ({})", self.table.sheet, self.part + 1)
        };
        let sheet = self.workbook.add_worksheet_with_constant_memory()?;
        sheet.set_name(name)?;
        for (col, column) in (0..).zip(&self.table.columns) {
            sheet.set_column_width(col, column.width)?;
            sheet.write_string_with_format(0, col, &column.name, &self.bold)?;
        }
        sheet.set_freeze_panes(1, 0)?;
        self.row = 1;
        Ok(())
    }

    /// Writes one row (on a new worksheet when the current one is full).
    pub(super) fn write(&mut self, cells: &[Cell<'_>]) -> Result<(), AnalyticsError> {
        if self.row > self.rows_per_sheet {
            self.set_autofilter()?;
            self.sheet += 1;
            self.part += 1;
            self.add_sheet()?;
        }
        let row = self.row;
        let sheet = self.workbook.worksheet_from_index(self.sheet)?;
        for ((col, cell), format) in (0..).zip(cells).zip(&self.formats) {
            let col: ColNum = col;
            match (cell, format) {
                (Cell::Empty, _) => {}
                (Cell::Text(text), _) => {
                    let text = within_cell_limit(text);
                    let text = text.as_ref();
                    if text.is_empty() {
                        // No cell: Excel's filters list it as (Blanks), like an empty CSV field.
                    } else if looks_like_formula(text) {
                        sheet.write_string_with_format(row, col, text, &self.quoted)?;
                    } else {
                        sheet.write_string(row, col, text)?;
                    }
                }
                (Cell::Integer(n), format) => number(sheet, row, col, *n as f64, format.as_ref())?,
                (Cell::Float(x), format) => number(sheet, row, col, *x, format.as_ref())?,
                (Cell::Date(day), Some(format)) => {
                    let date = ExcelDateTime::from_ymd(
                        u16::try_from(day.year()).unwrap_or(0),
                        day.month() as u8,
                        day.day() as u8,
                    )?;
                    sheet.write_datetime_with_format(row, col, date, format)?;
                }
                (Cell::DateTime(at), Some(format)) => {
                    let at = ExcelDateTime::from_timestamp(at.timestamp())?;
                    sheet.write_datetime_with_format(row, col, at, format)?;
                }
                // A date in a column that is not of dates: `TableWriter` refuses such rows.
                (Cell::Date(_) | Cell::DateTime(_), None) => {}
            }
        }
        self.row += 1;
        Ok(())
    }

    /// The autofilter of the current worksheet, over its header and every row written.
    fn set_autofilter(&mut self) -> Result<(), AnalyticsError> {
        let last_col = ColNum::try_from(self.table.columns.len().saturating_sub(1))
            .map_err(|_| AnalyticsError::Row("too many columns for a worksheet".into()))?;
        let last_row = self.row - 1;
        self.workbook
            .worksheet_from_index(self.sheet)?
            .autofilter(0, 0, last_row, last_col)?;
        Ok(())
    }

    /// Sets the last worksheet's autofilter and writes the workbook to the output.
    pub(super) fn finish(mut self) -> Result<(), AnalyticsError> {
        self.set_autofilter()?;
        self.workbook.save_to_writer(&mut self.out)?;
        self.out.flush()?;
        Ok(())
    }
}

/// The formats of `table`'s columns: the column's number format for numbers, the date or
/// date-time format for dates; `None` for text and general numbers.
fn formats_of(table: &Table) -> Vec<Option<Format>> {
    table
        .columns
        .iter()
        .map(|column| match column.kind {
            ColumnKind::Date => Some(Format::new().set_num_format("yyyy-mm-dd")),
            ColumnKind::DateTime => Some(Format::new().set_num_format("yyyy-mm-dd hh:mm:ss")),
            ColumnKind::Integer | ColumnKind::Float => column
                .num_format
                .as_ref()
                .map(|format| Format::new().set_num_format(format)),
            ColumnKind::Text => None,
        })
        .collect()
}

/// Writes a number, in the column's format if it has one. NaN and infinities have no Excel
/// form and are left empty.
fn number(
    sheet: &mut rust_xlsxwriter::Worksheet,
    row: RowNum,
    col: ColNum,
    value: f64,
    format: Option<&Format>,
) -> Result<(), AnalyticsError> {
    if !value.is_finite() {
        return Ok(());
    }
    match format {
        Some(format) => sheet.write_number_with_format(row, col, value, format)?,
        None => sheet.write_number(row, col, value)?,
    };
    Ok(())
}

/// `text`, cut to Excel's limit for a cell (32,767 UTF-16 code units), ending in `…` when cut.
fn within_cell_limit(text: &str) -> Cow<'_, str> {
    // A UTF-8 string is never shorter in bytes than in UTF-16 units.
    if text.len() <= MAX_CELL_UNITS || text.encode_utf16().count() <= MAX_CELL_UNITS {
        return Cow::Borrowed(text);
    }
    // Keep what fits with one unit left for the ellipsis.
    let mut units = 0;
    let end = text
        .char_indices()
        .find(|(_, ch)| {
            units += ch.len_utf16();
            units > MAX_CELL_UNITS - 1
        })
        .map_or(text.len(), |(at, _)| at);
    Cow::Owned(format!("{}…", &text[..end]))
}
