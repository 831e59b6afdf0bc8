//! Copytrace analytics: turns the match library into things people read and send.
//!
//! This crate owns exports (CSV and JSON today; Excel, statistics and charts later) and
//! human-readable reports. It reads records handed to it by `copytrace-store` and writes to any
//! `io::Write`, so the CLI, the admin web and tests share one implementation.
//!
//! Page titles and URLs come from pirate sites and are hostile input: every spreadsheet cell
//! that a spreadsheet program would evaluate as a formula is neutralised (CWE-1236).

pub mod export;
pub mod notice;
pub mod report;
pub mod stats;

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
    /// A notice template could not be rendered.
    #[error("could not render the notice: {0}")]
    Template(#[from] askama::Error),
}
