//! Exports and reports of the match library, read from the store and written by the
//! analytics crate to any writer (a file, standard output, an HTTP response).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use copytrace_store::{MatchFilter, MatchRecord, Store};

use crate::error::Result;

/// Formats of `export matches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// A JSON array of matches with evidence offsets.
    Json,
}

/// Every recorded match, ordered by page URL then work.
pub async fn matches(store: &dyn Store) -> Result<Vec<MatchRecord>> {
    Ok(store.list_matches(&MatchFilter::default()).await?)
}

/// Writes every recorded match to `out` in `format`; returns how many were written.
pub async fn export_matches(
    store: &dyn Store,
    format: ExportFormat,
    out: &mut dyn Write,
) -> Result<usize> {
    let records = matches(store).await?;
    match format {
        ExportFormat::Csv => copytrace_analytics::export::write_csv(&records, out)?,
        ExportFormat::Json => copytrace_analytics::export::write_json(&records, out)?,
    }
    Ok(records.len())
}

/// Writes the readable infringement report, grouped by work, to `out`.
pub async fn report(store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    let records = matches(store).await?;
    // Each match's evidence is read against the text it points into, which a re-crawl may have
    // replaced on the page since (the store keeps it).
    let mut texts = HashMap::new();
    for key in records
        .iter()
        .map(|r| (r.page_id, r.evidence_hash.clone()))
        .collect::<BTreeSet<_>>()
    {
        if let Some(text) = store.evidence_text(key.0, &key.1).await? {
            texts.insert(key, text);
        }
    }
    copytrace_analytics::report::write_text(&records, &texts, out)?;
    Ok(())
}
