//! The steps every command and job runs: ingest works, store crawled pages, match pages.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use chrono::Utc;
use copytrace_crawler::{CrawlError, CrawlProgress, FetchedPage, PageSink};
use copytrace_fingerprint::{
    FINGERPRINT_VERSION, WindowFingerprint, default_algorithms, fingerprint_text,
};
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{Index, MatchConfig, Matcher, WorkMatch};
use copytrace_store::{
    AlgorithmFingerprint, EvidencePassage, Id, NewMatch, NewWork, SegmentFingerprint, Store,
    WriteOutcome,
};
use indicatif::ProgressBar;
use url::Url;

use crate::recrawl::{self, Recrawl};
use crate::textfile::{TextFile, first_line_title, read_text_file};

/// Stable hex digest of a text, used to tell whether a work or page changed.
pub fn content_hash(text: &str) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()))
}

/// A library file read and decoded, ready to ingest.
#[derive(Debug, Clone)]
pub struct LibraryFile {
    /// Where it came from.
    pub path: PathBuf,
    /// The work's external id: the file stem.
    pub external_id: String,
    /// Its decoded text.
    pub file: TextFile,
}

/// Expands `paths` (files and directories, walked recursively for `.txt` files) and reads
/// every file. Any unreadable, binary or undecodable file fails the whole call, so nothing is
/// ingested from a half-valid list.
pub fn read_library_files(paths: &[PathBuf]) -> Result<Vec<LibraryFile>> {
    let mut files = Vec::new();
    for path in paths {
        let metadata =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if metadata.is_dir() {
            let before = files.len();
            walk_txt(path, &mut files)?;
            if files.len() == before {
                bail!("no .txt files found in {}", path.display());
            }
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    let read: Vec<LibraryFile> = files
        .into_iter()
        .map(|path| {
            let file = read_text_file(&path)?;
            let external_id = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .filter(|stem| !stem.is_empty())
                .with_context(|| format!("{} has no file name to use as id", path.display()))?;
            Ok(LibraryFile {
                path,
                external_id,
                file,
            })
        })
        .collect::<Result<_>>()?;
    // The file stem is the work's id: two files with one stem would silently replace each other.
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for file in &read {
        if let Some(other) = seen.insert(&file.external_id, &file.path) {
            bail!(
                "{} and {} would both be work {:?}: rename one of them",
                other.display(),
                file.path.display(),
                file.external_id
            );
        }
    }
    Ok(read)
}

fn walk_txt(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
        let path = entry.path();
        let file_type = entry
            .file_type()
            .with_context(|| format!("cannot read {}", path.display()))?;
        // Symbolic links to directories are not followed: a link to a parent would loop.
        if file_type.is_symlink() && path.is_dir() {
            continue;
        }
        if file_type.is_dir() {
            walk_txt(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("txt"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The stored form of window fingerprints.
/// The document-level fingerprint of `text` by every default algorithm, each with the
/// algorithm's version, as the store keeps them.
pub fn document_fingerprints(text: &str) -> Result<Vec<AlgorithmFingerprint>> {
    default_algorithms()
        .iter()
        .map(|algorithm| {
            Ok(AlgorithmFingerprint {
                algorithm: algorithm.name().to_owned(),
                version: algorithm.version(),
                fingerprint: serde_json::to_value(algorithm.fingerprint_text(text)).with_context(
                    || format!("cannot serialize a {} fingerprint", algorithm.name()),
                )?,
            })
        })
        .collect()
}

/// `(algorithm, version)` of every default algorithm, ordered by name like the store's
/// [`Store::fingerprint_versions`].
fn current_algorithm_versions() -> Vec<(String, u32)> {
    let mut versions: Vec<(String, u32)> = default_algorithms()
        .iter()
        .map(|algorithm| (algorithm.name().to_owned(), algorithm.version()))
        .collect();
    versions.sort();
    versions
}

fn to_segments(windows: &[WindowFingerprint]) -> Vec<SegmentFingerprint> {
    windows
        .iter()
        .map(|w| SegmentFingerprint {
            ordinal: w.ordinal,
            start: w.byte_start,
            end: w.byte_end,
            simhash: w.simhash,
        })
        .collect()
}

/// What ingesting one file did.
#[derive(Debug, Clone)]
pub struct IngestOutcome {
    /// The work's external id.
    pub external_id: String,
    /// Its title.
    pub title: String,
    /// Created, updated or unchanged.
    pub outcome: WriteOutcome,
    /// Number of window fingerprints.
    pub windows: usize,
    /// Encoding the file was decoded from.
    pub encoding: &'static str,
}

/// Fingerprints and stores works for a rights holder. When anything changed, every stored page
/// is marked for re-matching, because the library it was matched against is different now.
pub async fn ingest(
    store: &dyn Store,
    rights_holder_id: Id,
    files: &[LibraryFile],
    config: &MatchConfig,
) -> Result<Vec<IngestOutcome>> {
    let mut outcomes = Vec::with_capacity(files.len());
    for library_file in files {
        let text = &library_file.file.text;
        let title = first_line_title(text);
        let fingerprint = fingerprint_text(text, &config.fingerprint);
        let work = NewWork {
            rights_holder_id,
            external_id: library_file.external_id.clone(),
            title: title.clone(),
            content: text.clone(),
            content_hash: content_hash(text),
            fingerprint_version: FINGERPRINT_VERSION,
            segments: to_segments(&fingerprint.windows),
            fingerprints: document_fingerprints(text)?,
        };
        let (_, outcome) = store
            .upsert_work(&work)
            .await
            .with_context(|| format!("cannot store {}", library_file.path.display()))?;
        outcomes.push(IngestOutcome {
            external_id: library_file.external_id.clone(),
            title,
            outcome,
            windows: fingerprint.windows.len(),
            encoding: library_file.file.encoding,
        });
    }
    if outcomes
        .iter()
        .any(|o| o.outcome != WriteOutcome::Unchanged)
    {
        store.mark_all_pages_unmatched().await?;
    }
    Ok(outcomes)
}

/// Counts of a crawl as seen by the store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCounts {
    /// Pages stored for the first time.
    pub created: usize,
    /// Pages whose text changed.
    pub updated: usize,
    /// Pages fetched again with the same text, or answered 304 Not Modified.
    pub unchanged: usize,
}

/// Stores every crawled page and reports progress and failures as they happen; records what
/// became of known infringing pages (see [`crate::recrawl`]).
pub struct StoreSink {
    store: Arc<dyn Store>,
    progress: ProgressBar,
    /// Counts so far.
    pub counts: StoredCounts,
    /// Removal checks of known infringing pages, and what they changed.
    pub recrawl: Recrawl,
    failures: usize,
}

impl StoreSink {
    /// A sink writing to `store` for the crawl run `run_id` and ticking `progress`.
    pub fn new(store: Arc<dyn Store>, progress: ProgressBar, run_id: Option<Id>) -> Self {
        StoreSink {
            recrawl: Recrawl::new(store.clone(), run_id),
            store,
            progress,
            counts: StoredCounts::default(),
            failures: 0,
        }
    }
}

#[async_trait::async_trait]
impl PageSink for StoreSink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let page = recrawl::new_page(page);
        let write = self.store.upsert_page(&page).await?;
        match write.outcome {
            WriteOutcome::Created => self.counts.created += 1,
            WriteOutcome::Updated => self.counts.updated += 1,
            WriteOutcome::Unchanged => {
                self.counts.unchanged += 1;
                self.recrawl.unchanged(&page.url, page.http_status).await?;
            }
        }
        self.progress.inc(1);
        Ok(())
    }

    async fn not_modified(&mut self, url: &Url) {
        self.counts.unchanged += 1;
        if let Err(error) = self.recrawl.not_modified(url).await {
            tracing::warn!(%url, "cannot record a 304: {error:#}");
        }
        self.progress.inc(1);
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        // Failures are listed once, in the command's summary; here they only count.
        self.failures += 1;
        self.progress.set_prefix(format!(
            "crawling ({} failed), pages stored:",
            self.failures
        ));
        if let Err(store_error) = self.recrawl.failure(url, error).await {
            tracing::warn!(%url, "cannot record the failure of a known copy: {store_error:#}");
        }
    }

    fn progress(&mut self, progress: &CrawlProgress) {
        let stats = &progress.stats;
        let mut message = format!(
            "{:.1} pages/s, {} queued, {} in flight, {} requests",
            stats.pages_per_second(),
            progress.queued,
            progress.in_flight,
            stats.requests
        );
        if !stats.errors.is_empty() {
            message.push_str("; errors: ");
            message.push_str(&stats.errors_line());
        }
        self.progress.set_message(message);
    }
}

/// Re-fingerprints and stores again every work fingerprinted by another version of any
/// algorithm (the window SimHash or a document-level one), so that old and new fingerprints
/// never mix in an index. Returns how many works were refreshed.
pub async fn refresh_outdated_works(store: &dyn Store, config: &MatchConfig) -> Result<usize> {
    let mut stored_versions: HashMap<Id, Vec<(String, u32)>> = HashMap::new();
    for (work_id, algorithm, version) in store.fingerprint_versions().await? {
        stored_versions
            .entry(work_id)
            .or_default()
            .push((algorithm, version));
    }
    let current_versions = current_algorithm_versions();
    let mut refreshed = 0;
    for summary in store.list_works(None).await? {
        let up_to_date = summary.fingerprint_version == FINGERPRINT_VERSION
            && stored_versions.get(&summary.id) == Some(&current_versions);
        if up_to_date {
            continue;
        }
        let content = store.get_work(summary.id).await?.content;
        let windows = fingerprint_text(&content, &config.fingerprint).windows;
        let work = NewWork {
            rights_holder_id: summary.rights_holder_id,
            external_id: summary.external_id.clone(),
            title: summary.title.clone(),
            fingerprints: document_fingerprints(&content)?,
            content,
            content_hash: summary.content_hash.clone(),
            fingerprint_version: FINGERPRINT_VERSION,
            segments: to_segments(&windows),
        };
        store.upsert_work(&work).await?;
        refreshed += 1;
    }
    Ok(refreshed)
}

/// Every work's stored SimHash windows, `(ordinal, signature)` in ordinal order.
async fn stored_windows(store: &dyn Store) -> Result<HashMap<Id, Vec<(u32, u64)>>> {
    let mut segments: HashMap<Id, Vec<(u32, u64)>> = HashMap::new();
    for indexed in store.all_segments().await? {
        segments
            .entry(indexed.work_id)
            .or_default()
            .push((indexed.segment.ordinal, indexed.segment.simhash));
    }
    Ok(segments)
}

/// Builds a matcher holding every work of the store, refreshing outdated fingerprints first
/// ([`refresh_outdated_works`]).
pub async fn load_matcher(store: &dyn Store, config: MatchConfig) -> Result<Matcher> {
    refresh_outdated_works(store, &config).await?;
    let mut segments = stored_windows(store).await?;
    let mut matcher = Matcher::new(config);
    for summary in store.list_works(None).await? {
        let work = store.get_work(summary.id).await?;
        let windows = segments.remove(&summary.id).unwrap_or_default();
        matcher.add_fingerprinted_work(summary.id, &work.content, windows)?;
    }
    Ok(matcher)
}

/// What a match run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchSummary {
    /// Pages matched.
    pub pages: usize,
    /// Pages with at least one match.
    pub infringing_pages: usize,
    /// Page × work matches recorded.
    pub matches: usize,
    /// Matches moved to `removed`: the page changed and no longer carries the copy.
    pub removed: usize,
    /// `removed` matches reopened: a newer text of the page carries the copy again.
    pub reopened: usize,
}

/// Matches every page whose current text has not been matched yet, recording each page's
/// verdict atomically (so an interrupted run resumes where it stopped).
pub async fn match_pending<I: Index>(
    store: &dyn Store,
    matcher: &Matcher<I>,
    progress: &ProgressBar,
) -> Result<MatchSummary> {
    const BATCH: u32 = 200;
    let mut summary = MatchSummary::default();
    loop {
        let pages = store.pages_to_match(BATCH).await?;
        if pages.is_empty() {
            break;
        }
        for page in pages {
            let found = matcher.match_text(&page.text)?;
            let matches: Vec<NewMatch> = found.iter().map(to_new_match).collect();
            let verdict = store
                .record_page_matches(page.id, &page.content_hash, &matches, Utc::now())
                .await
                .with_context(|| format!("cannot record matches of {}", page.url))?;
            summary.removed += verdict.removed as usize;
            summary.reopened += verdict.reopened as usize;
            summary.pages += 1;
            summary.matches += matches.len();
            summary.infringing_pages += usize::from(!matches.is_empty());
            progress.inc(1);
        }
    }
    Ok(summary)
}

/// The store record of a verdict on one work.
pub fn to_new_match(found: &WorkMatch) -> NewMatch {
    NewMatch {
        work_id: found.work_id,
        score: found.score,
        coverage: found.coverage,
        containment: found.containment,
        copied_chars: u32::try_from(found.copied_chars).unwrap_or(u32::MAX),
        method: found.method.clone(),
        evidence: found
            .evidence
            .iter()
            .map(|e| EvidencePassage {
                page_start: e.page_start,
                page_end: e.page_end,
                work_start: e.work_start,
                work_end: e.work_end,
            })
            .collect(),
    }
}

// ----- the Redis index -----

/// What `index rebuild` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildSummary {
    /// Works indexed.
    pub works: usize,
    /// Windows indexed.
    pub windows: usize,
    /// Works fingerprinted by an older algorithm version, fingerprinted again and stored.
    pub refingerprinted: usize,
}

/// Digest of what an index built from the store must reflect: every work's id, content hash and
/// fingerprint version. Recorded in the Redis index by [`rebuild_redis_index`] and compared by
/// [`load_redis_matcher`], so a match never runs against an index older than the library.
pub async fn library_digest(store: &dyn Store) -> Result<String> {
    let mut works = store.list_works(None).await?;
    works.sort_by_key(|w| w.id);
    let mut listing = String::new();
    for w in &works {
        listing.push_str(&format!(
            "{} {} {}\n",
            w.id, w.content_hash, w.fingerprint_version
        ));
    }
    Ok(content_hash(&listing))
}

/// Empties the Redis index's namespace and inserts every work's stored window fingerprints
/// (one transaction per work). Works fingerprinted by an older algorithm version are
/// fingerprinted again and stored first, as [`load_matcher`] does, so the index never mixes
/// versions. The library digest is written last: an interrupted rebuild leaves an index that
/// `match` refuses.
pub async fn rebuild_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
    progress: &ProgressBar,
) -> Result<RebuildSummary> {
    let refingerprinted = refresh_outdated_works(store, config).await?;
    let mut segments = stored_windows(store).await?;
    let works = store.list_works(None).await?;
    progress.set_length(works.len() as u64);
    index.clear()?;
    let mut summary = RebuildSummary {
        refingerprinted,
        ..RebuildSummary::default()
    };
    for work in &works {
        let windows = segments.remove(&work.id).unwrap_or_default();
        index.insert_work(work.id, &windows)?;
        summary.works += 1;
        summary.windows += windows.len();
        progress.inc(1);
    }
    index.set_source_digest(&library_digest(store).await?)?;
    Ok(summary)
}

/// Brings a Redis index that was in step with the library before `library add` in step with it
/// again, by re-indexing only the works that `ingest` added or changed. `before` is the
/// [`library_digest`] taken before the ingest. Returns `false`, touching nothing, when the index
/// was not in step to begin with (never built, or built from another state): only a full
/// [`rebuild_redis_index`] can fix that.
///
/// While the works are re-indexed the recorded digest is blanked, so match workers refuse the
/// half-updated index (their jobs wait and retry) rather than trusting it.
pub async fn update_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    before: &str,
    changed: &[Id],
) -> Result<bool> {
    if index.source_digest()?.as_deref() != Some(before) {
        return Ok(false);
    }
    if changed.is_empty() {
        return Ok(true);
    }
    index.set_source_digest("")?;
    let mut segments = stored_windows(store).await?;
    for work_id in changed {
        index.remove_work(*work_id)?;
        let windows = segments.remove(work_id).unwrap_or_default();
        index.insert_work(*work_id, &windows)?;
    }
    index.set_source_digest(&library_digest(store).await?)?;
    Ok(true)
}

/// A matcher over the shared Redis index: the store provides only the works' texts, for
/// verification; the index is used as `index rebuild` left it. Refuses an index that was not
/// built from the library as it is now (a work added, changed or removed since, or a rebuild
/// that did not finish).
pub async fn load_redis_matcher(
    store: &dyn Store,
    index: RedisIndex,
    config: MatchConfig,
) -> Result<Matcher<RedisIndex>> {
    let expected = library_digest(store).await?;
    match index.source_digest()? {
        Some(found) if found == expected => {}
        Some(_) => bail!(
            "the Redis index under {:?} was built from another state of the library: run \
             `copytrace index rebuild`",
            index.prefix()
        ),
        None => bail!(
            "the Redis index under {:?} has not been built (or its rebuild did not finish): \
             run `copytrace index rebuild`",
            index.prefix()
        ),
    }
    let mut matcher = Matcher::with_index(config, index);
    for summary in store.list_works(None).await? {
        let work = store.get_work(summary.id).await?;
        matcher.add_indexed_work(summary.id, &work.content)?;
    }
    Ok(matcher)
}

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;
    use crate::demo::LIBRARY;

    async fn store_in(dir: &tempfile::TempDir) -> SqliteStore {
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        store
    }

    fn library_file(external_id: &str, text: &str) -> LibraryFile {
        LibraryFile {
            path: PathBuf::from(format!("{external_id}.txt")),
            external_id: external_id.to_owned(),
            file: TextFile {
                text: text.to_owned(),
                encoding: "UTF-8",
            },
        }
    }

    /// A fresh store in `dir` holding the first demo work, ingested as `library add` would.
    async fn store_with_one_work(dir: &tempfile::TempDir) -> (SqliteStore, Id, &'static str) {
        let store = store_in(dir).await;
        let holder = store.ensure_rights_holder("test").await.unwrap();
        let (id, text) = LIBRARY[0];
        ingest(
            &store,
            holder,
            &[library_file(id, text)],
            &MatchConfig::default(),
        )
        .await
        .unwrap();
        (store, holder, text)
    }

    #[tokio::test]
    async fn ingest_stores_every_algorithm_with_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _, text) = store_with_one_work(&dir).await;
        let work_id = store.list_works(None).await.unwrap()[0].id;
        let stored = store.work_fingerprints(work_id).await.unwrap();
        let versions: Vec<(String, u32)> = stored
            .iter()
            .map(|f| (f.algorithm.clone(), f.version))
            .collect();
        assert_eq!(versions, current_algorithm_versions());
        for (stored, algorithm) in stored.iter().zip({
            let mut all = default_algorithms();
            all.sort_by_key(|a| a.name());
            all
        }) {
            let fingerprint: copytrace_fingerprint::Fingerprint =
                serde_json::from_value(stored.fingerprint.clone()).unwrap();
            assert_eq!(fingerprint, algorithm.fingerprint_text(text));
        }
    }

    #[tokio::test]
    async fn works_with_an_outdated_algorithm_version_are_refingerprinted_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let (store, holder, text) = store_with_one_work(&dir).await;
        let summary = store.list_works(None).await.unwrap().remove(0);
        // What an older Copytrace would have stored: one algorithm at an older version, with
        // a fingerprint the current version would not produce.
        let mut outdated = document_fingerprints(text).unwrap();
        outdated[0].version = outdated[0].version.wrapping_sub(1);
        outdated[0].fingerprint = serde_json::json!({ "kind": "sim_hash", "value": 1 });
        let work = store.get_work(summary.id).await.unwrap();
        let old = NewWork {
            rights_holder_id: holder,
            external_id: summary.external_id.clone(),
            title: summary.title.clone(),
            content: work.content,
            content_hash: summary.content_hash.clone(),
            fingerprint_version: FINGERPRINT_VERSION,
            segments: store
                .all_segments()
                .await
                .unwrap()
                .into_iter()
                .map(|s| s.segment)
                .collect(),
            fingerprints: outdated,
        };
        assert_eq!(
            store.upsert_work(&old).await.unwrap().1,
            WriteOutcome::Updated
        );

        let matcher = load_matcher(&store, MatchConfig::default()).await.unwrap();
        assert_eq!(matcher.work_count(), 1);
        let refreshed = store.work_fingerprints(summary.id).await.unwrap();
        let mut expected = document_fingerprints(text).unwrap();
        expected.sort_by(|a, b| a.algorithm.cmp(&b.algorithm));
        assert_eq!(refreshed, expected);
        assert!(
            store
                .fingerprint_versions()
                .await
                .unwrap()
                .iter()
                .all(|(_, name, version)| current_algorithm_versions()
                    .contains(&(name.clone(), *version))),
            "no fingerprint of the old version is left"
        );
    }
}
