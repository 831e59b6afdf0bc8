//! Exports and reports of the match library, read from the store and written by the
//! analytics crate to any writer (a file, standard output, an HTTP response).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

pub use copytrace_analytics::export::{ExportFormat, ExportOptions};
use copytrace_analytics::export::{TableWriter, match_table};
use copytrace_store::{MatchFilter, MatchRecord, Review, Store};
use futures_util::TryStreamExt;

use crate::error::Result;

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

/// The store filter that selects the matches in `scope`.
fn filter(scope: Scope) -> MatchFilter {
    MatchFilter {
        // Asking for licensed decisions asks for the licensed status they list as.
        include_licensed: scope.include_licensed || scope.reviews.contains(&Review::Licensed),
        reviews: scope.reviews,
        ..MatchFilter::default()
    }
}

/// The recorded matches in `scope`, ordered by page URL then work, in memory: for reports,
/// which group them. Exports stream instead ([`export_matches`]).
pub async fn matches(store: &dyn Store, scope: Scope) -> Result<Vec<MatchRecord>> {
    Ok(store.list_matches(&filter(scope)).await?)
}

/// Writes the recorded matches in `scope` to `out` in `format` (the match table of
/// [`copytrace_analytics::export::match_table`]; JSON and NDJSON carry whole records); returns
/// how many were written.
///
/// The matches are streamed from the store ([`Store::stream_matches`]) into the writer one at a
/// time, so memory stays flat however many there are; they come ordered by page (in the order
/// pages were first stored), then by work id. `out` receives an incomplete export when this
/// fails: write to a temporary file and keep it only on success.
pub async fn export_matches(
    store: &dyn Store,
    format: ExportFormat,
    scope: Scope,
    options: &ExportOptions,
    out: &mut (dyn Write + Send),
) -> Result<u64> {
    let table = match_table();
    let mut writer = TableWriter::new(format, &table, out, options)?;
    let mut matches = store.stream_matches(&filter(scope)).await?;
    while let Some(record) = matches.try_next().await? {
        writer.write(&record)?;
    }
    Ok(writer.finish()?)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use copytrace_store::sqlite::SqliteStore;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_export_runs_as_a_spawned_task_like_a_web_handler_would_run_it() {
        let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
        store.migrate().await.unwrap();
        let store: Arc<dyn Store> = Arc::new(store);
        // `tokio::spawn` requires the export's future to be `Send`: an XLSX workbook is held
        // across the store's awaits.
        let export = tokio::spawn(async move {
            let mut out = Vec::new();
            let options = ExportOptions::default();
            let rows = export_matches(
                &*store,
                ExportFormat::Xlsx,
                Scope::default(),
                &options,
                &mut out,
            )
            .await?;
            Ok::<_, crate::ServiceError>((rows, out))
        });
        let (rows, out) = export.await.unwrap().unwrap();
        assert_eq!(rows, 0);
        assert_eq!(
            &out[..4],
            b"PK\x03\x04",
            "a workbook with its header row only"
        );
    }
}
