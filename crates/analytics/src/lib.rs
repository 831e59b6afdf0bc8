//! Copytrace analytics: turns the match library into things people read and send.
//!
//! This crate owns exports (CSV, JSON, NDJSON and XLSX of any table of typed rows, written a
//! row at a time: see [`export`]) and human-readable reports. It reads records handed to it by
//! `copytrace-store` and writes to any `io::Write`, so the CLI, the admin web and tests share
//! one implementation.
//!
//! Page titles and URLs come from pirate sites and are hostile input: every spreadsheet cell
//! that a spreadsheet program would evaluate as a formula is neutralised (CWE-1236).

pub mod export;
pub mod report;

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
}
