//! The source library: reading work files, fingerprinting and storing works, keeping stored
//! fingerprints at the current algorithm versions, and keeping the shared index and the
//! pages due for matching in step with the library as it changes.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

use copytrace_fingerprint::{
    FINGERPRINT_VERSION, FingerprintConfig, WindowFingerprint, default_algorithms, fingerprint_text,
};
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::MatchConfig;
use copytrace_matcher::sketch::{MIN_SHARED_KEYS, SKETCH_VERSION, Sketcher};
use copytrace_store::{
    AlgorithmFingerprint, Id, NewWork, SegmentFingerprint, Store, WorkChapter, WorkStatus,
    WorkSummary, WriteOutcome,
};
use serde::Serialize;

use crate::chapters::Chapter;
use crate::error::{Context, Result, ServiceError};
use crate::index;
use crate::progress::Progress;
use crate::textfile::{TextFile, first_line_title};
use crate::workfile::{EXTENSIONS, WorkFormat, read_work_file};

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
    /// What a catalog says of it beyond the file (nothing, for `library add`).
    pub catalog: CatalogEntry,
}

/// What a catalog row says of a work beyond its file: each field overrides or adds to what the
/// file itself gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogEntry {
    /// The title; `None` takes the file's own (an HTML or EPUB title, else its first line).
    pub title: Option<String>,
    /// The author.
    pub author: Option<String>,
    /// First publication.
    pub published_at: Option<DateTime<Utc>>,
    /// Hosts licensed to publish this work; `Some` replaces the stored set, `None` (no catalog)
    /// leaves it as it is.
    pub licensed_hosts: Option<Vec<String>>,
}

/// A work file found by [`find_library_files`], not read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkPath {
    /// The file.
    pub path: PathBuf,
    /// The work's external id: the file stem.
    pub external_id: String,
}

/// Expands `paths` (files and directories, walked recursively for work files: plain text, HTML,
/// Markdown, EPUB; see [`crate::workfile`]) without reading them, sorted. Two files with one
/// stem (one work id) are refused.
pub fn find_library_files(paths: &[PathBuf]) -> Result<Vec<WorkPath>> {
    let mut files = Vec::new();
    for path in paths {
        let metadata =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if metadata.is_dir() {
            let before = files.len();
            walk_txt(path, &mut files)?;
            if files.len() == before {
                return Err(ServiceError::invalid(format!(
                    "no work files (.{}) found in {}",
                    EXTENSIONS.join(", ."),
                    path.display()
                )));
            }
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    let found: Vec<WorkPath> = files
        .into_iter()
        .map(|path| {
            let external_id = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .filter(|stem| !stem.is_empty())
                .ok_or_else(|| {
                    ServiceError::invalid(format!(
                        "{} has no file name to use as id",
                        path.display()
                    ))
                })?;
            Ok(WorkPath { path, external_id })
        })
        .collect::<Result<_>>()?;
    // The file stem is the work's id: two files with one stem would silently replace each other.
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for file in &found {
        if let Some(other) = seen.insert(&file.external_id, &file.path) {
            return Err(ServiceError::invalid(format!(
                "{} and {} would both be work {:?}: rename one of them",
                other.display(),
                file.path.display(),
                file.external_id
            )));
        }
    }
    Ok(found)
}

/// Reads one found work file.
pub fn read_library_file(found: &WorkPath) -> Result<LibraryFile> {
    Ok(LibraryFile {
        path: found.path.clone(),
        external_id: found.external_id.clone(),
        file: read_work_file(&found.path)?,
        catalog: CatalogEntry::default(),
    })
}

/// [`find_library_files`] and reads every file. Any unreadable, binary or undecodable file
/// fails the whole call. Holds every text in memory: [`add_paths`] streams instead.
pub fn read_library_files(paths: &[PathBuf]) -> Result<Vec<LibraryFile>> {
    find_library_files(paths)?
        .iter()
        .map(read_library_file)
        .collect()
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
        } else if WorkFormat::of(&path).is_some() {
            out.push(path);
        }
    }
    Ok(())
}

/// The document-level fingerprint of `text` by every default algorithm, each with the
/// algorithm's version, as the store keeps them.
pub fn document_fingerprints(text: &str) -> Result<Vec<AlgorithmFingerprint>> {
    stored_algorithms()
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

/// The default algorithms whose document fingerprints the library stores: all but the shingle
/// set. A shingle set holds a hash of every n-gram of the text, about seven times the text's
/// size as JSON; nothing reads it back (verification makes shingles from the text), and
/// writing it was most of the cost of loading a library (docs/benchmarks.md, "Library
/// ingest").
fn stored_algorithms() -> Vec<Box<dyn copytrace_fingerprint::Algorithm>> {
    default_algorithms()
        .into_iter()
        .filter(|algorithm| algorithm.name() != "shingles")
        .collect()
}

/// `(algorithm, version)` of every algorithm whose document fingerprint is stored, ordered by
/// name like the store's [`Store::fingerprint_versions`].
pub fn current_algorithm_versions() -> Vec<(String, u32)> {
    let mut versions: Vec<(String, u32)> = stored_algorithms()
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

/// The stored form of a text: its window and document fingerprints, with an empty catalog
/// entry the caller fills in.
fn fingerprinted_work(
    rights_holder_id: Id,
    external_id: String,
    title: String,
    content: String,
    config: &FingerprintConfig,
) -> Result<NewWork> {
    let windows = fingerprint_text(&content, config).windows;
    Ok(NewWork {
        rights_holder_id,
        external_id,
        title,
        content_hash: content_hash(&content),
        fingerprint_version: FINGERPRINT_VERSION,
        segments: to_segments(&windows),
        fingerprints: document_fingerprints(&content)?,
        content,
        author: None,
        published_at: None,
        chapters: Vec::new(),
        licensed_hosts: None,
    })
}

/// The stored form of a library file: its text fingerprinted, its chapters and its catalog
/// entry.
fn new_work(
    rights_holder_id: Id,
    library_file: &LibraryFile,
    title: String,
    config: &FingerprintConfig,
) -> Result<NewWork> {
    let catalog = &library_file.catalog;
    let mut work = fingerprinted_work(
        rights_holder_id,
        library_file.external_id.clone(),
        title,
        library_file.file.text.clone(),
        config,
    )?;
    work.author = catalog.author.clone();
    work.published_at = catalog.published_at;
    work.licensed_hosts = catalog.licensed_hosts.clone();
    work.chapters = stored_chapters(&library_file.file.chapters)?;
    Ok(work)
}

/// Chapters as the store keeps them: numbered in order, offsets as `u32`.
fn stored_chapters(chapters: &[Chapter]) -> Result<Vec<WorkChapter>> {
    chapters
        .iter()
        .enumerate()
        .map(|(ordinal, chapter)| {
            let offset = |value: usize| {
                u32::try_from(value)
                    .map_err(|_| ServiceError::invalid("the work is longer than 4 GiB"))
            };
            Ok(WorkChapter {
                ordinal: offset(ordinal)?,
                title: chapter.title.clone(),
                start: offset(chapter.start)?,
                end: offset(chapter.end)?,
            })
        })
        .collect()
}

/// What ingesting one file did.
#[derive(Debug, Clone)]
pub struct IngestOutcome {
    /// The work's id in the store.
    pub work_id: Id,
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
    /// Whether pages must be checked against it: it is new, its text or fingerprints changed,
    /// or it came back from withdrawal (a catalog-only change needs no matching).
    pub needs_matching: bool,
}

/// A work fingerprinted and ready to store, with what its outcome reports.
#[derive(Debug, Clone)]
pub struct PreparedWork {
    /// The work as the store takes it.
    pub work: NewWork,
    /// Where it came from.
    pub path: PathBuf,
    /// Encoding the file was decoded from.
    pub encoding: &'static str,
}

/// Fingerprints a library file for `rights_holder_id` (CPU only: run it off the async
/// runtime for large batches).
pub fn prepare_work(
    rights_holder_id: Id,
    library_file: &LibraryFile,
    config: &FingerprintConfig,
) -> Result<PreparedWork> {
    let text = &library_file.file.text;
    let title = library_file
        .catalog
        .title
        .clone()
        .or_else(|| library_file.file.title.clone())
        .unwrap_or_else(|| first_line_title(text));
    Ok(PreparedWork {
        work: new_work(rights_holder_id, library_file, title, config)?,
        path: library_file.path.clone(),
        encoding: library_file.file.encoding,
    })
}

/// Stores prepared works in one transaction (text, windows, chapters and catalog entries
/// together; all or none). A work needs matching when the store's library generation moved
/// for it (new, text or fingerprint version replaced, brought back from withdrawal; a
/// catalog-only change moves nothing). Pages are not marked for matching: call
/// `add_works`'s last steps ([`update_index`], then [`library_changed`]) once everything is
/// stored.
pub async fn store_works(
    store: &dyn Store,
    prepared: &[PreparedWork],
) -> Result<Vec<IngestOutcome>> {
    let works: Vec<NewWork> = prepared.iter().map(|p| p.work.clone()).collect();
    let before = store.library_state().await?.generation;
    let stored = store
        .upsert_works(&works)
        .await
        .with_context(|| match prepared {
            [one] => format!("cannot store {}", one.path.display()),
            _ => format!(
                "cannot store {} works ({} … {})",
                prepared.len(),
                prepared
                    .first()
                    .map_or(String::new(), |p| p.path.display().to_string()),
                prepared
                    .last()
                    .map_or(String::new(), |p| p.path.display().to_string())
            ),
        })?;
    // Works another writer changed meanwhile may be listed too: they need matching as well.
    let moved: HashSet<Id> = store
        .library_changes_since(before)
        .await?
        .into_iter()
        .filter(|c| c.active)
        .map(|c| c.work_id)
        .collect();
    Ok(prepared
        .iter()
        .zip(stored)
        .map(|(p, (work_id, outcome))| {
            let work = &p.work;
            IngestOutcome {
                work_id,
                external_id: work.external_id.clone(),
                title: work.title.clone(),
                outcome,
                windows: work.segments.len(),
                encoding: p.encoding,
                needs_matching: moved.contains(&work_id),
            }
        })
        .collect())
}

/// Works stored per transaction when adding files: enough that a commit per work no longer
/// dominates, few enough that a batch of novels stays a few dozen megabytes.
pub const WORKS_PER_BATCH: usize = 32;
/// Text bytes per batch at most (a batch is cut early when its texts reach this size).
pub const BYTES_PER_BATCH: usize = 16 << 20;

/// After works were stored and the index brought in step: the stored pages that may copy a
/// new or changed one become due for matching (see [`mark_pages_for_works`]); pages matched
/// against a changed work's old text already are (the store marks them when the text is
/// replaced). Works an earlier run stored without reaching this step (it was stopped) are
/// marked too: the store records the last generation whose pages were marked.
///
/// Marking comes after the index update, so that no worker matches a page marked for a new
/// work against an index that does not hold the work yet.
pub async fn library_changed(
    store: &dyn Store,
    outcomes: &[IngestOutcome],
    config: &FingerprintConfig,
) -> Result<IncrementalMatch> {
    let state = store.library_state().await?;
    let mut changed: Vec<Id> = outcomes
        .iter()
        .filter(|o| o.needs_matching)
        .map(|o| o.work_id)
        .collect();
    changed.extend(
        store
            .library_changes_since(state.marked)
            .await?
            .into_iter()
            .filter(|c| c.active)
            .map(|c| c.work_id),
    );
    changed.sort_unstable();
    changed.dedup();
    let config = MatchConfig {
        fingerprint: *config,
        ..MatchConfig::default()
    };
    let report = mark_pages_for_works(store, &changed, &config).await?;
    store.mark_library_generation(state.generation).await?;
    Ok(report)
}

/// What [`mark_pages_for_works`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IncrementalMatch {
    /// Page sketches read.
    pub pages_scanned: u64,
    /// Pages whose sketch collides with a work's windows: due for matching.
    pub candidates: u64,
    /// Matched pages without a current sketch (matched before sketches existed): due too,
    /// since nothing tells whether they copy the works.
    pub unsketched: u64,
}

/// Pages read per batch when walking sketches.
const SKETCH_BATCH: u32 = 2_000;

/// Marks for matching the stored pages that may copy the works `work_ids`, by their sketches
/// (see `copytrace_matcher::sketch`): the cost is one pass over the sketches, about 4 kB per
/// page and never a page text, plus matching the candidates, instead of matching every page
/// against the whole library. The pages are then matched as any due page is (`copytrace
/// match`, or the workers), against the whole library, so a verdict is never partial.
pub async fn mark_pages_for_works(
    store: &dyn Store,
    work_ids: &[Id],
    config: &MatchConfig,
) -> Result<IncrementalMatch> {
    let mut report = IncrementalMatch::default();
    if work_ids.is_empty() {
        return Ok(report);
    }
    let mut batch = store.page_sketches(0, SKETCH_BATCH, SKETCH_VERSION).await?;
    if batch.is_empty() {
        // No page to check (a library loaded before any crawl): the works' keys are not needed.
        report.unsketched = store
            .mark_unsketched_pages_unmatched(SKETCH_VERSION)
            .await?;
        return Ok(report);
    }
    let sketcher = Sketcher::new(config);
    // Band key → the works (by position in `work_ids`) having it.
    let mut keys: HashMap<u32, Vec<usize>> = HashMap::new();
    for (position, &work_id) in work_ids.iter().enumerate() {
        let text = store.get_work(work_id).await?.content;
        for key in sketcher.work_keys(&text) {
            keys.entry(key).or_default().push(position);
        }
    }
    let mut candidates = Vec::new();
    let mut shared = vec![0usize; work_ids.len()];
    while let Some(last) = batch.last() {
        let after = last.page_id;
        for sketch in &batch {
            report.pages_scanned += 1;
            shared.iter_mut().for_each(|count| *count = 0);
            let collides = sketch.sample.iter().any(|key| {
                keys.get(key).is_some_and(|works| {
                    works.iter().any(|&w| {
                        shared[w] += 1;
                        shared[w] >= MIN_SHARED_KEYS
                    })
                })
            });
            if collides {
                candidates.push(sketch.page_id);
            }
        }
        batch = store
            .page_sketches(after, SKETCH_BATCH, SKETCH_VERSION)
            .await?;
    }
    for chunk in candidates.chunks(SKETCH_BATCH as usize) {
        report.candidates += store.mark_pages_unmatched(chunk).await?;
    }
    report.unsketched = store
        .mark_unsketched_pages_unmatched(SKETCH_VERSION)
        .await?;
    Ok(report)
}

/// What became of the shared Redis index when works were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUpdate {
    /// No Redis index is in use: match runs build theirs from the store.
    NotUsed,
    /// The index was in step with the library and now holds the added works too.
    Updated,
    /// The index had never been built and held nothing: it was built from the whole library.
    Built {
        /// Works indexed.
        works: usize,
    },
    /// The index was not built from this library (never built, or from another state): only
    /// `index rebuild` can bring it in step.
    NeedsRebuild,
}

/// What `library add` did.
#[derive(Debug, Clone)]
pub struct AddReport {
    /// One outcome per file, in the order given.
    pub works: Vec<IngestOutcome>,
    /// What became of the Redis index.
    pub index: IndexUpdate,
    /// The stored pages marked for matching against the new and changed works.
    pub matching: IncrementalMatch,
}

/// Adds works for the rights holder named `holder` (created when new), marks the stored pages
/// that may copy the new or changed ones for matching ([`library_changed`]) and, when a Redis
/// index is in use, keeps it in step so running match workers pick the change up. The files
/// are already in memory; [`add_paths`] streams them from disk.
pub async fn add_works(
    store: &dyn Store,
    holder: &str,
    files: &[LibraryFile],
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
) -> Result<AddReport> {
    let holder_id = store.ensure_rights_holder(holder).await?;
    let mut works = Vec::with_capacity(files.len());
    for batch in files.chunks(WORKS_PER_BATCH) {
        let prepared = batch
            .iter()
            .map(|file| prepare_work(holder_id, file, config))
            .collect::<Result<Vec<_>>>()?;
        works.extend(store_works(store, &prepared).await?);
    }
    finish_add(store, works, redis, config).await
}

/// Finds the work files under `paths` and reads each once to check it (unreadable, binary
/// or undecodable files and clashing ids are refused), keeping nothing in memory: the first
/// half of [`add_paths`], done before the store is even opened, so a half-valid list changes
/// nothing. `progress` counts files.
pub fn check_library_files(paths: &[PathBuf], progress: &dyn Progress) -> Result<Vec<WorkPath>> {
    let found = find_library_files(paths)?;
    progress.label("checking");
    progress.set_total(found.len() as u64);
    for file in &found {
        read_work_file(&file.path)?;
        progress.advance(1);
    }
    Ok(found)
}

/// [`add_works`] for the files [`check_library_files`] found, streamed from disk: each is
/// read again, fingerprinted and stored a batch at a time, the next batch fingerprinted on
/// another thread while the store writes the current one. Memory holds two batches, whatever
/// the size of the library. `progress` counts files.
pub async fn add_paths(
    store: &dyn Store,
    holder: &str,
    found: &[WorkPath],
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
    progress: &dyn Progress,
) -> Result<AddReport> {
    let holder_id = store.ensure_rights_holder(holder).await?;
    progress.label("adding");
    progress.set_total(found.len() as u64);
    let batches = batches_of(found);
    let config_copy = *config;
    let prepare = move |batch: Vec<WorkPath>| {
        tokio::task::spawn_blocking(move || -> Result<Vec<PreparedWork>> {
            batch
                .iter()
                .map(|file| prepare_work(holder_id, &read_library_file(file)?, &config_copy))
                .collect()
        })
    };
    let mut works = Vec::with_capacity(found.len());
    let mut batches = batches.into_iter();
    let mut next = batches.next().map(&prepare);
    while let Some(current) = next.take() {
        let prepared = current.await.map_err(|e| {
            ServiceError::unavailable(format!("a fingerprinting task failed: {e}"))
        })??;
        next = batches.next().map(&prepare);
        works.extend(store_works(store, &prepared).await?);
        progress.advance(prepared.len() as u64);
    }
    finish_add(store, works, redis, config).await
}

/// Cuts found files into batches of at most [`WORKS_PER_BATCH`] files and about
/// [`BYTES_PER_BATCH`] bytes (by file size).
fn batches_of(found: &[WorkPath]) -> Vec<Vec<WorkPath>> {
    let mut batches: Vec<Vec<WorkPath>> = Vec::new();
    let mut bytes = 0;
    for file in found {
        let size = std::fs::metadata(&file.path).map_or(0, |m| m.len() as usize);
        let full = batches
            .last()
            .is_none_or(|b| b.len() >= WORKS_PER_BATCH || bytes + size > BYTES_PER_BATCH);
        if full {
            batches.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        batches.last_mut().expect("a batch").push(file.clone());
    }
    batches
}

/// Brings the Redis index (when one is in use) in step with the library (see
/// [`index::update_redis_index`]); an index that cannot be caught up is built when it is
/// fresh, and reported as needing a rebuild otherwise.
pub async fn update_index(
    store: &dyn Store,
    redis: Option<&mut RedisIndex>,
) -> Result<IndexUpdate> {
    let Some(redis) = redis else {
        return Ok(IndexUpdate::NotUsed);
    };
    let config = copytrace_matcher::MatchConfig::default();
    if index::update_redis_index(store, redis, &config).await? {
        return Ok(IndexUpdate::Updated);
    }
    Ok(match index::build_if_fresh(store, redis, &config).await? {
        Some(built) => IndexUpdate::Built { works: built.works },
        None => IndexUpdate::NeedsRebuild,
    })
}

/// The end of adding works: the Redis index brought in step, then the pages that may copy
/// the new or changed works marked for matching (in that order: see [`library_changed`]).
async fn finish_add(
    store: &dyn Store,
    works: Vec<IngestOutcome>,
    redis: Option<&mut RedisIndex>,
    config: &FingerprintConfig,
) -> Result<AddReport> {
    let index = update_index(store, redis).await?;
    let matching = library_changed(store, &works, config).await?;
    Ok(AddReport {
        works,
        index,
        matching,
    })
}

/// The works that take part in matching (every work not withdrawn), as the store lists them:
/// what an index is built from.
pub async fn active_works(store: &dyn Store) -> Result<Vec<WorkSummary>> {
    let mut works = store.list_works(None).await?;
    works.retain(|w| w.status == WorkStatus::Active);
    Ok(works)
}

/// What `library rm` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawal {
    /// The work.
    pub work: WorkSummary,
    /// `false` when it already was withdrawn (nothing changed).
    pub changed: bool,
    /// What became of the Redis index.
    pub index: IndexUpdate,
}

/// Withdraws a work from the library (`library rm`): its windows leave the store's index at
/// once, and the shared Redis index too when one is in use (match workers reload as soon as
/// they see the library generation move). Its matches stay, listed as `withdrawn`.
pub async fn withdraw_work(
    store: &dyn Store,
    work_id: Id,
    redis: Option<&mut RedisIndex>,
) -> Result<Withdrawal> {
    let changed = store
        .withdraw_work(work_id, Utc::now())
        .await
        .with_context(|| format!("cannot withdraw work {work_id}"))?;
    let work = store.get_work(work_id).await?.summary;
    let index = update_index(store, redis).await?;
    Ok(Withdrawal {
        work,
        changed,
        index,
    })
}

/// Every work of the library (or of one rights holder), ordered as the store lists them.
pub async fn list_works(
    store: &dyn Store,
    rights_holder_id: Option<Id>,
) -> Result<Vec<WorkSummary>> {
    Ok(store.list_works(rights_holder_id).await?)
}

/// How a person names one work: by the internal id the store gave it, or by the external id
/// of the publisher's catalog (unique per rights holder only, so possibly narrowed to one).
///
/// The two are never guessed from the text alone: external ids are often numeric (`1001`, an
/// ISBN), so a number could name one work by its internal id and another by its external id,
/// and a withdrawal acting on the wrong one is worse than a refusal. The caller says which it
/// means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkRef {
    /// The internal id (`library list`'s first column).
    Id(Id),
    /// The catalog's external id, of any rights holder or of the one named.
    External {
        /// The external id, as the catalog or the file stem gave it.
        external_id: String,
        /// The rights holder's name, to tell apart works of several holders sharing the id.
        rights_holder: Option<String>,
    },
}

/// The internal id of the work `work` names. An external id no work has is `NotFound`; one that
/// several rights holders' works share is refused (`Invalid`), naming them, rather than picked.
pub async fn resolve_work(store: &dyn Store, work: &WorkRef) -> Result<Id> {
    let (external_id, rights_holder) = match work {
        WorkRef::Id(id) => return Ok(*id),
        WorkRef::External {
            external_id,
            rights_holder,
        } => (external_id.trim(), rights_holder.as_deref()),
    };
    let holder = match rights_holder {
        Some(name) => Some(crate::holders::find(store, name).await?),
        None => None,
    };
    let found: Vec<WorkSummary> = store
        .list_works(holder.as_ref().map(|h| h.id))
        .await?
        .into_iter()
        .filter(|w| w.external_id == external_id)
        .collect();
    match found.as_slice() {
        [work] => Ok(work.id),
        [] => Err(copytrace_store::StoreError::NotFound(match &holder {
            Some(holder) => format!(
                "work with external id {external_id:?} of rights holder {:?}",
                holder.name
            ),
            None => format!("work with external id {external_id:?}"),
        })
        .into()),
        several => {
            let names: HashMap<Id, String> = store
                .list_rights_holders()
                .await?
                .into_iter()
                .map(|h| (h.id, h.name))
                .collect();
            let listed: Vec<String> = several
                .iter()
                .map(|w| {
                    let owner = names.get(&w.rights_holder_id).map_or("?", String::as_str);
                    format!("work {} of {owner:?}", w.id)
                })
                .collect();
            Err(ServiceError::invalid(format!(
                "external id {external_id:?} names {} works ({}): name the rights holder with \
                 --rights-holder, or give the work's id",
                several.len(),
                listed.join(", ")
            )))
        }
    }
}

/// A work with its owner, its fingerprints' versions and what was found of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WorkDetails {
    /// The work (without its text).
    #[serde(flatten)]
    pub work: WorkSummary,
    /// Its rights holder's name.
    pub rights_holder: String,
    /// `(algorithm, version)` of its stored document fingerprints.
    pub fingerprints: Vec<(String, u32)>,
    /// Recorded matches of the work, by status (`open`, `removed`, `licensed`, …).
    pub matches: std::collections::BTreeMap<String, usize>,
    /// Its chapters in order (empty: the work is one unit).
    pub chapters: Vec<copytrace_store::WorkChapter>,
    /// Hosts licensed to publish it: its own and its holder's (holder-wide ones first).
    pub licensed_hosts: Vec<String>,
}

/// A work's summary and its rights holder's name, without the figures of [`work_details`]
/// (which lists every match of the work to count them): what a page that lists the work's
/// copies itself needs above them.
pub async fn work_summary(store: &dyn Store, work_id: Id) -> Result<(WorkSummary, String)> {
    let work = store.work_summary(work_id).await?;
    let rights_holder = crate::holders::get(store, work.rights_holder_id)
        .await?
        .name;
    Ok((work, rights_holder))
}

/// One work by its id, with its owner, fingerprints and matches.
pub async fn work_details(store: &dyn Store, work_id: Id) -> Result<WorkDetails> {
    let stored = store.get_work(work_id).await?;
    let work = stored.summary;
    let licensed_hosts = store
        .list_licensed_hosts(Some(work.rights_holder_id))
        .await?
        .into_iter()
        .filter(|l| l.work_id.is_none_or(|id| id == work_id))
        .map(|l| l.host)
        .collect();
    let rights_holder = store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.id == work.rights_holder_id)
        .map(|holder| holder.name)
        .unwrap_or_default();
    let fingerprints = store
        .work_fingerprints(work_id)
        .await?
        .into_iter()
        .map(|f| (f.algorithm, f.version))
        .collect();
    let mut matches = std::collections::BTreeMap::new();
    let filter = copytrace_store::MatchFilter {
        work_id: Some(work_id),
        include_licensed: true,
        ..Default::default()
    };
    for record in store.list_matches(&filter).await? {
        *matches
            .entry(record.status.as_str().to_owned())
            .or_insert(0) += 1;
    }
    Ok(WorkDetails {
        work,
        rights_holder,
        chapters: stored.chapters,
        licensed_hosts,
        fingerprints,
        matches,
    })
}

/// Re-fingerprints and stores again every work fingerprinted by another version of any
/// algorithm (the window SimHash or a document-level one), so that old and new fingerprints
/// never mix in an index. Returns how many works were refreshed.
pub async fn refresh_outdated_works(
    store: &dyn Store,
    config: &FingerprintConfig,
) -> Result<usize> {
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
        // A withdrawn work is in no index: refreshing it would bring it back.
        if summary.status == WorkStatus::Withdrawn {
            continue;
        }
        let stored = store.get_work(summary.id).await?;
        let mut work = fingerprinted_work(
            summary.rights_holder_id,
            summary.external_id.clone(),
            summary.title.clone(),
            stored.content,
            config,
        )?;
        // The text and its catalog entry are the ones stored: keep them and the recorded hash.
        work.content_hash = summary.content_hash.clone();
        work.author = summary.author.clone();
        work.published_at = summary.published_at;
        work.chapters = stored.chapters;
        store.upsert_work(&work).await?;
        refreshed += 1;
    }
    Ok(refreshed)
}

/// Every work's stored SimHash windows, `(ordinal, signature)` in ordinal order.
pub async fn stored_windows(store: &dyn Store) -> Result<HashMap<Id, Vec<(u32, u64)>>> {
    let mut segments: HashMap<Id, Vec<(u32, u64)>> = HashMap::new();
    for indexed in store.all_segments().await? {
        segments
            .entry(indexed.work_id)
            .or_default()
            .push((indexed.segment.ordinal, indexed.segment.simhash));
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;

    const TEXT: &str = "星辰旅人 第一章 雨夜来客\n夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见一个披着蓑衣的陌生人站在院子里，手里提着一盏昏黄的灯笼。他说自己从北方来，要去南边的城里找一个多年不见的朋友。";

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
                title: None,
                chapters: Vec::new(),
            },
            catalog: Default::default(),
        }
    }

    /// A fresh store in `dir` holding one work, ingested as `library add` would.
    async fn store_with_one_work(dir: &tempfile::TempDir) -> (SqliteStore, Id) {
        let store = store_in(dir).await;
        let report = add_works(
            &store,
            "test",
            &[library_file("w1", TEXT)],
            None,
            &FingerprintConfig::default(),
        )
        .await
        .unwrap();
        assert_eq!(report.index, IndexUpdate::NotUsed);
        let holder = store.list_rights_holders().await.unwrap()[0].id;
        (store, holder)
    }

    #[tokio::test]
    async fn ingest_stores_every_algorithm_but_the_shingle_set_with_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store_with_one_work(&dir).await;
        let work_id = store.list_works(None).await.unwrap()[0].id;
        let stored = store.work_fingerprints(work_id).await.unwrap();
        let versions: Vec<(String, u32)> = stored
            .iter()
            .map(|f| (f.algorithm.clone(), f.version))
            .collect();
        assert_eq!(versions, current_algorithm_versions());
        assert!(!versions.iter().any(|(name, _)| name == "shingles"));
        assert_eq!(versions.len(), default_algorithms().len() - 1);
        for (stored, algorithm) in stored.iter().zip({
            let mut all = stored_algorithms();
            all.sort_by_key(|a| a.name());
            all
        }) {
            let fingerprint: copytrace_fingerprint::Fingerprint =
                serde_json::from_value(stored.fingerprint.clone()).unwrap();
            assert_eq!(fingerprint, algorithm.fingerprint_text(TEXT));
        }
    }

    #[tokio::test]
    async fn works_with_an_outdated_algorithm_version_are_refingerprinted() {
        let dir = tempfile::tempdir().unwrap();
        let (store, holder) = store_with_one_work(&dir).await;
        let summary = store.list_works(None).await.unwrap().remove(0);
        // What an older Copytrace would have stored: one algorithm at an older version, with
        // a fingerprint the current version would not produce.
        let mut old = fingerprinted_work(
            holder,
            summary.external_id.clone(),
            summary.title.clone(),
            TEXT.to_owned(),
            &FingerprintConfig::default(),
        )
        .unwrap();
        old.fingerprints[0].version = old.fingerprints[0].version.wrapping_sub(1);
        old.fingerprints[0].fingerprint = serde_json::json!({ "kind": "sim_hash", "value": 1 });
        assert_eq!(
            store.upsert_work(&old).await.unwrap().1,
            WriteOutcome::Updated
        );

        let refreshed = refresh_outdated_works(&store, &FingerprintConfig::default())
            .await
            .unwrap();
        assert_eq!(refreshed, 1);
        let stored = store.work_fingerprints(summary.id).await.unwrap();
        let mut expected = document_fingerprints(TEXT).unwrap();
        expected.sort_by(|a, b| a.algorithm.cmp(&b.algorithm));
        assert_eq!(stored, expected);
        assert_eq!(
            refresh_outdated_works(&store, &FingerprintConfig::default())
                .await
                .unwrap(),
            0,
            "nothing of the old version is left"
        );
    }

    #[tokio::test]
    async fn adding_a_changed_work_moves_the_library_generation_only_when_its_text_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store_with_one_work(&dir).await;
        let before = store.library_state().await.unwrap();
        let again = add_works(
            &store,
            "test",
            &[library_file("w1", TEXT)],
            None,
            &FingerprintConfig::default(),
        )
        .await
        .unwrap();
        assert_eq!(again.works[0].outcome, WriteOutcome::Unchanged);
        assert!(!again.works[0].needs_matching);
        assert_eq!(store.library_state().await.unwrap(), before);
        let changed = format!("{TEXT}\n尾声。");
        let report = add_works(
            &store,
            "test",
            &[library_file("w1", &changed)],
            None,
            &FingerprintConfig::default(),
        )
        .await
        .unwrap();
        assert_eq!(report.works[0].outcome, WriteOutcome::Updated);
        assert!(report.works[0].needs_matching);
        let after = store.library_state().await.unwrap();
        assert_eq!(after.generation, before.generation + 1);
        assert_eq!(
            after.rewritten, after.generation,
            "a replaced text is a rewrite"
        );
        assert_eq!(after.marked, after.generation, "its pages were marked");
    }
}
