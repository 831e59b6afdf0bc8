//! Catalog import: a rights holder's whole catalog from one CSV file.
//!
//! A catalog has one row per work, with the columns `external_id, title, author,
//! rights_holder, path, published_at` and optionally `licensed_hosts`, found by their header
//! names in any order. Every row is checked on its own and stored on its own (one transaction:
//! text, windows, chapters and catalog entry), so a bad row is reported with its line number
//! and never stops or half-writes the others. Re-importing the same catalog changes nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use copytrace_fingerprint::FingerprintConfig;
use copytrace_index_redis::RedisIndex;
use copytrace_store::Store;
use serde::Serialize;

use crate::error::{Context, Result, ServiceError, one_line};
use crate::holders::licensed_host;
use crate::library::{
    CatalogEntry, IncrementalMatch, IndexUpdate, IngestOutcome, LibraryFile, PreparedWork,
    WORKS_PER_BATCH, library_changed, prepare_work, store_works, update_index,
};
use crate::progress::Progress;
use crate::workfile::read_work_file;

/// Columns every catalog has.
pub const REQUIRED_COLUMNS: [&str; 6] = [
    "external_id",
    "title",
    "author",
    "rights_holder",
    "path",
    "published_at",
];
/// The optional column of hosts licensed to publish the work, separated by `;`, `|` or spaces.
pub const LICENSED_HOSTS_COLUMN: &str = "licensed_hosts";

/// A catalog row that was not imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RejectedRow {
    /// Line of the file the row starts on (the header is line 1).
    pub line: u64,
    /// The row's external id, when it has one.
    pub external_id: Option<String>,
    /// Why, in one line.
    pub error: String,
}

/// What `library import` did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    /// Rows stored (created, updated or unchanged), in file order.
    pub imported: Vec<IngestOutcome>,
    /// Rows refused, in file order.
    pub rejected: Vec<RejectedRow>,
    /// What became of the Redis index.
    pub index: IndexUpdate,
    /// The stored pages marked for matching against the new and changed works.
    pub matching: IncrementalMatch,
}

/// One checked row, ready to store.
struct CatalogRow {
    holder: String,
    file: LibraryFile,
}

/// Imports the catalog at `path`. Work file paths are read relative to the catalog's
/// directory (an absolute path or `..` reaches anywhere the process may read: the catalog is
/// the operator's own file). A catalog that cannot be read at all (missing file, missing
/// columns) is an error; a bad row is only [`RejectedRow`]. `progress` counts rows.
pub async fn import_catalog(
    store: &dyn Store,
    path: &Path,
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
    progress: &dyn Progress,
) -> Result<ImportReport> {
    import(store, path, redis, config, progress, false).await
}

/// Imports a catalog uploaded with its files (the admin web), as [`import_catalog`] does, but
/// reads work files only from the catalog's own directory, where the upload put them: a row
/// whose path is absolute or climbs out with `..` is rejected, so a catalog cannot import a
/// file of the server (`/etc/passwd`, the configuration) as a work and show its text.
pub async fn import_uploaded_catalog(
    store: &dyn Store,
    path: &Path,
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
    progress: &dyn Progress,
) -> Result<ImportReport> {
    import(store, path, redis, config, progress, true).await
}

async fn import(
    store: &dyn Store,
    path: &Path,
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
    progress: &dyn Progress,
    confined: bool,
) -> Result<ImportReport> {
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let open = || {
        csv::ReaderBuilder::new()
            .flexible(true)
            .trim(csv::Trim::All)
            .from_path(path)
            .map_err(csv_error)
            .with_context(|| format!("cannot read catalog {}", path.display()))
    };
    // A first pass only counts the rows, for the progress bar: the catalog is streamed, never
    // held in memory with its texts.
    let total = open()?.records().count();
    progress.set_total(total as u64);
    let mut reader = open()?;
    let columns = Columns {
        confined,
        ..Columns::of(
            reader
                .headers()
                .map_err(csv_error)
                .with_context(|| format!("cannot read the header of {}", path.display()))?,
        )
        .with_context(|| format!("{} is not a catalog", path.display()))?
    };

    let mut report = ImportReport {
        imported: Vec::new(),
        rejected: Vec::new(),
        index: IndexUpdate::NotUsed,
        matching: IncrementalMatch::default(),
    };
    // (holder, external id) → line of the row that named it first.
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    let mut holders: HashMap<String, i64> = HashMap::new();
    // Rows checked and fingerprinted, waiting to be stored together.
    let mut batch: Vec<(u64, PreparedWork)> = Vec::new();
    for record in reader.records() {
        progress.advance(1);
        let (line, result) = match record {
            Ok(record) => {
                let line = record.position().map_or(0, |p| p.line());
                (line, columns.row(&record, &base, line, &mut seen))
            }
            Err(error) => {
                let line = error.position().map_or(0, |p| p.line());
                (line, Err(csv_error(error)))
            }
        };
        let prepared = match result {
            Ok(row) => prepare_row(store, &row, &mut holders, config)
                .await
                .map_err(|e| (Some(row.file.external_id.clone()), e)),
            Err(error) => Err((None, error)),
        };
        match prepared {
            Ok(work) => batch.push((line, work)),
            Err((external_id, error)) => reject(&mut report, progress, line, external_id, &error),
        }
        if batch.len() >= WORKS_PER_BATCH {
            flush(store, &mut batch, &mut report, progress).await;
            // A row refused by the store is known only when its batch is written.
            report.rejected.sort_by_key(|r| r.line);
        }
    }
    flush(store, &mut batch, &mut report, progress).await;
    // The index first: pages marked for a new work must find it there.
    report.index = update_index(store, redis).await?;
    report.matching = library_changed(store, &report.imported, config).await?;
    Ok(report)
}

/// Resolves the row's rights holder and fingerprints its work.
async fn prepare_row(
    store: &dyn Store,
    row: &CatalogRow,
    holders: &mut HashMap<String, i64>,
    config: &FingerprintConfig,
) -> Result<PreparedWork> {
    let holder_id = match holders.get(&row.holder) {
        Some(id) => *id,
        None => {
            let id = store.ensure_rights_holder(&row.holder).await?;
            holders.insert(row.holder.clone(), id);
            id
        }
    };
    prepare_work(holder_id, &row.file, config)
}

/// Stores the batch in one transaction; if that fails, row by row, so that only the rows at
/// fault are rejected (each row stays all-or-nothing).
async fn flush(
    store: &dyn Store,
    batch: &mut Vec<(u64, PreparedWork)>,
    report: &mut ImportReport,
    progress: &dyn Progress,
) {
    if batch.is_empty() {
        return;
    }
    let works: Vec<PreparedWork> = batch.iter().map(|(_, w)| w.clone()).collect();
    match store_works(store, &works).await {
        Ok(outcomes) => report.imported.extend(outcomes),
        Err(_) => {
            for (line, work) in batch.iter() {
                match store_works(store, std::slice::from_ref(work)).await {
                    Ok(outcomes) => report.imported.extend(outcomes),
                    Err(error) => reject(
                        report,
                        progress,
                        *line,
                        Some(work.work.external_id.clone()),
                        &error,
                    ),
                }
            }
        }
    }
    batch.clear();
}

/// Records a rejected row.
fn reject(
    report: &mut ImportReport,
    progress: &dyn Progress,
    line: u64,
    external_id: Option<String>,
    error: &ServiceError,
) {
    let error = one_line(error);
    progress.status(&format!("line {line}: {error}"));
    report.rejected.push(RejectedRow {
        line,
        external_id,
        error,
    });
}

/// Where each column is in the header.
struct Columns {
    index: HashMap<&'static str, usize>,
    licensed_hosts: Option<usize>,
    /// Whether work files must be inside the catalog's directory.
    confined: bool,
}

impl Columns {
    fn of(header: &csv::StringRecord) -> Result<Self> {
        let position = |name: &str| {
            header
                .iter()
                .position(|h| h.trim_start_matches('\u{feff}').eq_ignore_ascii_case(name))
        };
        let missing: Vec<&str> = REQUIRED_COLUMNS
            .iter()
            .copied()
            .filter(|name| position(name).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(ServiceError::invalid(format!(
                "its header lacks the column(s) {}; a catalog has the columns {} and \
                 optionally {LICENSED_HOSTS_COLUMN}",
                missing.join(", "),
                REQUIRED_COLUMNS.join(",")
            )));
        }
        Ok(Columns {
            index: REQUIRED_COLUMNS
                .iter()
                .map(|name| (*name, position(name).expect("checked above")))
                .collect(),
            licensed_hosts: position(LICENSED_HOSTS_COLUMN),
            confined: false,
        })
    }

    fn get<'r>(&self, record: &'r csv::StringRecord, name: &str) -> &'r str {
        record.get(self.index[name]).unwrap_or("")
    }

    /// Checks one row and reads its work file.
    fn row(
        &self,
        record: &csv::StringRecord,
        base: &Path,
        line: u64,
        seen: &mut HashMap<(String, String), u64>,
    ) -> Result<CatalogRow> {
        let required = |name: &str| {
            let value = self.get(record, name);
            if value.is_empty() {
                Err(ServiceError::invalid(format!("{name} is empty")))
            } else {
                Ok(value.to_owned())
            }
        };
        let external_id = required("external_id")?;
        let title = required("title")?;
        let holder = required("rights_holder")?;
        let relative = required("path")?;
        let author = Some(self.get(record, "author").to_owned()).filter(|a| !a.is_empty());
        let published_at = published_at(self.get(record, "published_at"))?;
        let licensed_hosts = match self.licensed_hosts {
            None => None,
            Some(index) => Some(
                record
                    .get(index)
                    .unwrap_or("")
                    .split([';', '|', ' ', ','])
                    .filter(|h| !h.is_empty())
                    .map(licensed_host)
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        if let Some(first) = seen.get(&(holder.clone(), external_id.clone())) {
            return Err(ServiceError::invalid(format!(
                "work {external_id:?} of {holder:?} is already on line {first}"
            )));
        }
        if self.confined
            && !Path::new(&relative)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            return Err(ServiceError::invalid(format!(
                "path {relative:?} is outside the upload: an uploaded catalog names the files \
                 uploaded with it, never an absolute path or `..`"
            )));
        }
        let path: PathBuf = base.join(&relative);
        let file = read_work_file(&path)?;
        seen.insert((holder.clone(), external_id.clone()), line);
        Ok(CatalogRow {
            holder,
            file: LibraryFile {
                path,
                external_id,
                file,
                catalog: CatalogEntry {
                    title: Some(title),
                    author,
                    published_at,
                    licensed_hosts,
                },
            },
        })
    }
}

/// A CSV reading error: the catalog's own fault (bad quoting, bad UTF-8) or the file system's.
fn csv_error(error: csv::Error) -> ServiceError {
    if error.is_io_error() {
        match error.into_kind() {
            csv::ErrorKind::Io(io) => ServiceError::Io(io),
            other => ServiceError::invalid(format!("{other:?}")),
        }
    } else {
        ServiceError::invalid(error.to_string())
    }
}

/// A publication date: empty (unknown), `2024-03-01`, or an RFC 3339 time.
fn published_at(value: &str) -> Result<Option<DateTime<Utc>>> {
    if value.is_empty() {
        return Ok(None);
    }
    parse_instant("published_at", value).map(Some)
}

/// A date (`2024-03-01`, midnight UTC) or an RFC 3339 time (`2024-03-01T08:00:00+08:00`), as
/// catalogs and date filters are written; the error names `what`.
pub fn parse_instant(what: &str, value: &str) -> Result<DateTime<Utc>> {
    let value = value.trim();
    if let Ok(date) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        return Ok(date.and_hms_opt(0, 0, 0).expect("midnight").and_utc());
    }
    DateTime::parse_from_rfc3339(value)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|_| {
            ServiceError::invalid(format!(
                "{what} {value:?} is not a date (2024-03-01) or an RFC 3339 time \
                 (2024-03-01T08:00:00+08:00)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publication_dates_are_days_or_rfc3339_times() {
        assert_eq!(published_at("").unwrap(), None);
        assert_eq!(
            published_at("2024-03-01").unwrap().unwrap().to_rfc3339(),
            "2024-03-01T00:00:00+00:00"
        );
        assert_eq!(
            published_at("2024-03-01T08:00:00+08:00")
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2024-03-01T00:00:00+00:00"
        );
        for bad in ["2024-13-01", "yesterday", "01/03/2024"] {
            let error = published_at(bad).unwrap_err().to_string();
            assert!(error.contains(bad), "{error}");
        }
    }
}
