//! Exports and reports of the match library, read from the store and written by the
//! analytics crate to any writer (a file, standard output, an HTTP response).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use copytrace_store::{MatchFilter, MatchRecord, Review, Store};

use crate::error::Result;

/// Formats of `export matches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// A JSON array of matches with evidence offsets.
    Json,
}

/// Which matches an export or report holds. The default is the reported infringements: every
/// match the matcher verified, confirmed (by a person or the certainty gate) or waiting for
/// review, except those a person rejected and those on licensed hosts. The `review` column
/// tells them apart; takedown notices take confirmed ones only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// Also matches on hosts licensed to publish the work (status `licensed`), which are not
    /// infringements and are left out by default.
    pub include_licensed: bool,
    /// Review states to include (all when empty); `[Pending, Confirmed]` by default.
    pub reviews: Vec<Review>,
}

impl Default for Scope {
    fn default() -> Self {
        Self {
            include_licensed: false,
            reviews: vec![Review::Pending, Review::Confirmed],
        }
    }
}

/// The recorded matches in `scope`, ordered by page URL then work.
pub async fn matches(store: &dyn Store, scope: Scope) -> Result<Vec<MatchRecord>> {
    let filter = MatchFilter {
        // Asking for licensed decisions asks for the licensed status they list as.
        include_licensed: scope.include_licensed || scope.reviews.contains(&Review::Licensed),
        reviews: scope.reviews,
        ..MatchFilter::default()
    };
    Ok(store.list_matches(&filter).await?)
}

/// Writes the recorded matches in `scope` to `out` in `format`; returns how many were written.
pub async fn export_matches(
    store: &dyn Store,
    format: ExportFormat,
    scope: Scope,
    out: &mut dyn Write,
) -> Result<usize> {
    let records = matches(store, scope).await?;
    match format {
        ExportFormat::Csv => copytrace_analytics::export::write_csv(&records, out)?,
        ExportFormat::Json => copytrace_analytics::export::write_json(&records, out)?,
    }
    Ok(records.len())
}

/// Writes the readable infringement report of the matches in `scope`, grouped by work, to
/// `out`.
pub async fn report(store: &dyn Store, scope: Scope, out: &mut dyn Write) -> Result<()> {
    let records = matches(store, scope).await?;
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
