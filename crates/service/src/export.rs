//! Exports and reports of the match library, read from the store and written by the
//! analytics crate to any writer (a file, standard output, an HTTP response).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

pub use copytrace_analytics::export::{ExportFormat, ExportOptions};
use copytrace_analytics::export::{
    Table, TableRow, TableWriter, chapter_table, daily_table, first_copy_table, match_table,
    site_table, work_table,
};
use copytrace_analytics::stats::SiteGrouping;
use copytrace_store::{ListingOrder, MatchFilter, MatchListing, MatchRecord, StatsFilter, Store};
use futures_util::TryStreamExt;

use crate::error::Result;
use crate::stats;

/// The recorded matches `filter` selects, ordered by page URL then work, in memory: for
/// reports, which group them. Exports stream instead ([`export_matches`]).
///
/// Exports and reports show the reported infringements unless asked otherwise
/// ([`MatchFilter::reported`]): every match the matcher verified, confirmed (by a person or the
/// certainty gate) or waiting for review, except those a person rejected and those on licensed
/// hosts. The `review` column tells them apart; takedown notices take confirmed ones only.
pub async fn matches(store: &dyn Store, filter: &MatchFilter) -> Result<Vec<MatchRecord>> {
    Ok(store.list_matches(filter).await?)
}

/// One page of the matches `filter` selects, in `order`, with how many there are in all: what
/// a paginated list shows ([`Store::match_listing`]; the records carry no evidence).
pub async fn match_listing(
    store: &dyn Store,
    filter: &MatchFilter,
    order: ListingOrder,
    offset: u64,
    limit: u32,
) -> Result<MatchListing> {
    Ok(store.match_listing(filter, order, offset, limit).await?)
}

/// Writes the recorded matches `filter` selects to `out` in `format` (the match table of
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
    filter: &MatchFilter,
    options: &ExportOptions,
    out: &mut (dyn Write + Send),
) -> Result<u64> {
    let table = match_table();
    let mut writer = TableWriter::new(format, &table, out, options)?;
    let mut matches = store.stream_matches(filter).await?;
    while let Some(record) = matches.try_next().await? {
        writer.write(&record)?;
    }
    Ok(writer.finish()?)
}

/// The statistics tables `copytrace export` writes besides matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsTable {
    /// Copies per work ([`copytrace_analytics::export::work_table`]).
    Works,
    /// Copies per chapter.
    Chapters,
    /// Copies per host, or per registered domain.
    Sites(SiteGrouping),
    /// Activity per UTC day.
    Daily,
    /// Time to piracy per work × site, the chart-ready series.
    TimeToPiracy,
}

/// Writes one statistics table (the rows `copytrace stats` shows, for the same filter and
/// `top`) to `out` in `format`; returns how many rows were written.
///
/// Statistics are aggregated in the database first, so what is held is one row per work,
/// chapter, site or day, never one per match; the rows are then written one at a time.
pub async fn export_stats(
    store: &dyn Store,
    table: StatsTable,
    filter: &StatsFilter,
    top: Option<usize>,
    format: ExportFormat,
    options: &ExportOptions,
    out: &mut (dyn Write + Send),
) -> Result<u64> {
    match table {
        StatsTable::Works => {
            let rows = stats::works(store, filter, top).await?;
            write_rows(&work_table(), &rows, format, options, out)
        }
        StatsTable::Chapters => {
            let rows = stats::chapters(store, filter, top).await?;
            write_rows(&chapter_table(), &rows, format, options, out)
        }
        StatsTable::Sites(grouping) => {
            let rows = stats::sites(store, filter, grouping, top).await?;
            write_rows(&site_table(), &rows, format, options, out)
        }
        StatsTable::Daily => {
            let rows = stats::daily(store, filter).await?;
            write_rows(&daily_table(), &rows, format, options, out)
        }
        StatsTable::TimeToPiracy => {
            let mut rows = stats::time_to_piracy(store, filter, &Default::default())
                .await?
                .copies;
            rows.truncate(top.unwrap_or(usize::MAX));
            write_rows(&first_copy_table(), &rows, format, options, out)
        }
    }
}

/// Writes `rows` as `table`.
fn write_rows<R: TableRow>(
    table: &Table,
    rows: &[R],
    format: ExportFormat,
    options: &ExportOptions,
    out: &mut (dyn Write + Send),
) -> Result<u64> {
    let mut writer = TableWriter::new(format, table, out, options)?;
    for row in rows {
        writer.write(row)?;
    }
    Ok(writer.finish()?)
}

/// Writes the readable infringement report of the matches `filter` selects, grouped by work,
/// to `out`.
pub async fn report(store: &dyn Store, filter: &MatchFilter, out: &mut dyn Write) -> Result<()> {
    let records = matches(store, filter).await?;
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
                &MatchFilter::reported(),
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
