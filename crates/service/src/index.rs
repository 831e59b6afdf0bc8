//! Where the window index lives, and keeping the shared Redis index in step with the library.
//!
//! Embedded runs build an in-memory index from the store at every start; production shares one
//! index in Redis between all match workers. The Redis index records the [library
//! digest](crate::library::library_digest) it was built from, so a worker can always tell an
//! index that reflects the library from a flushed, stale or half-rebuilt one.

use copytrace_fingerprint::fingerprint_text;
use copytrace_index_redis::{RedisDnaIndex, RedisIndex, RedisLibraryStats, RedisMinHashIndex};
use copytrace_matcher::{Index, IndexError, MatchConfig, Matcher};
use copytrace_store::{Id, Store, WorkStatus};

use crate::error::{Context, Result, ServiceError};
use crate::library::{active_works, library_digest, refresh_outdated_works, stored_windows};
use crate::progress::{NoProgress, Progress};
use crate::redact;

/// Where the window index of a matcher lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// Built in memory from the store, again whenever the library changes.
    Memory,
    /// The shared Redis index (the first `library add` or `match` against an empty one, or
    /// `copytrace index rebuild`, fills it).
    Redis {
        /// Redis URL (may hold a password: show it through [`crate::redact`]).
        url: String,
        /// Key prefix.
        prefix: String,
    },
}

/// Opens the Redis index with the matcher's distance; the URL is shown redacted on failure.
pub fn open_redis_index(url: &str, prefix: &str) -> Result<RedisIndex> {
    RedisIndex::connect(url, prefix, MatchConfig::default().max_distance)
        .with_context(|| format!("cannot open the Redis index at {}", redact(url)))
}

/// Opens the Redis index to rebuild it ([`rebuild_redis_index`]), also when it was written
/// with another layout or distance, which [`open_redis_index`] refuses.
pub fn open_redis_index_to_rebuild(url: &str, prefix: &str) -> Result<RedisIndex> {
    RedisIndex::connect_to_replace(url, prefix, MatchConfig::default().max_distance)
        .with_context(|| format!("cannot open the Redis index at {}", redact(url)))
}

/// The MinHash and DNA candidate indexes kept under the SimHash index's prefix, opened for
/// `config`: refused when they were written with other parameters.
pub fn candidate_indexes(
    index: &RedisIndex,
    config: &MatchConfig,
) -> Result<(RedisMinHashIndex, RedisDnaIndex)> {
    let candidates = &config.candidates;
    let minhash = index.minhash(&candidates.lsh)?;
    let dna = index.dna(candidates.dna.levels(), candidates.dna_max_distance)?;
    Ok((minhash, dna))
}

/// The library statistics kept under the index's prefix (common seeds, sense index), opened
/// for `config`'s boilerplate threshold: what a match worker over Redis reads instead of
/// counting every work's text.
pub fn library_statistics(index: &RedisIndex, config: &MatchConfig) -> Result<RedisLibraryStats> {
    Ok(index.statistics(config.align.common_seed_min_works)?)
}

/// Writes works into the shared candidate indexes and statistics: their stored SimHash
/// windows, the MinHash and DNA keys of their text, and their seeds and sense keys, computed as
/// a matcher computes them.
struct SharedWriter {
    minhash: RedisMinHashIndex,
    dna: RedisDnaIndex,
    stats: RedisLibraryStats,
    /// An empty matcher with the configuration in use, for [`Matcher::candidate_keys`].
    keys: Matcher,
}

impl SharedWriter {
    /// A writer for indexes about to receive `windows` windows of `text_bytes` bytes of text:
    /// new (emptied) ones get bucket counts for that size; existing ones keep the counts they
    /// were first written with.
    fn new(
        index: &RedisIndex,
        config: &MatchConfig,
        windows: u64,
        text_bytes: u64,
    ) -> Result<Self> {
        let candidates = &config.candidates;
        let minhash = index.minhash_sized(&candidates.lsh, windows)?;
        let dna = index.dna_sized(
            candidates.dna.levels(),
            candidates.dna_max_distance,
            windows,
        )?;
        // Two seeds per character (one per projection); Chinese text is 3 bytes a character.
        let stats =
            index.statistics_sized(config.align.common_seed_min_works, text_bytes * 2 / 3)?;
        Ok(SharedWriter {
            minhash,
            dna,
            stats,
            keys: Matcher::new(*config),
        })
    }

    /// Files one active work in every index, replacing what it had there: its stored SimHash
    /// `windows`, or (`None`) those of its text, for a work just stored with the configuration
    /// in use (what the store holds, without reading every work's windows).
    async fn insert(
        &mut self,
        store: &dyn Store,
        index: &mut RedisIndex,
        work_id: Id,
        windows: Option<&[(u32, u64)]>,
    ) -> Result<()> {
        let work = store.get_work(work_id).await?;
        let keys = self.keys.candidate_keys(&work.content);
        match windows {
            Some(windows) => index.insert_work(work_id, windows)?,
            None => {
                let fingerprint = &self.keys.config().fingerprint;
                let windows: Vec<(u32, u64)> = fingerprint_text(&work.content, fingerprint)
                    .windows
                    .iter()
                    .map(|w| (w.ordinal, w.simhash))
                    .collect();
                index.insert_work(work_id, &windows)?;
            }
        }
        self.minhash.insert_work(work_id, &keys.minhash)?;
        self.dna.insert_work(work_id, &keys.dna)?;
        self.stats
            .insert_work(work_id, &self.keys.statistics_keys(&work.content))?;
        Ok(())
    }

    /// Takes one work out of every index.
    fn remove(&mut self, index: &mut RedisIndex, work_id: Id) -> Result<()> {
        index.remove_work(work_id)?;
        self.minhash.remove_work(work_id)?;
        self.dna.remove_work(work_id)?;
        self.stats.remove_work(work_id)?;
        Ok(())
    }
}

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

/// Empties the Redis index's namespace and inserts every work's stored window fingerprints and
/// the MinHash and DNA keys of its text. Works fingerprinted by an older algorithm version are
/// fingerprinted again and stored first, as loading an in-memory matcher does, so the index
/// never mixes versions. The library digest is written last: an interrupted rebuild leaves an
/// index that matching refuses.
pub async fn rebuild_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
    progress: &dyn Progress,
) -> Result<RebuildSummary> {
    fill_redis_index(store, index, config, progress, RedisIndex::clear).await
}

/// Builds the index from the library when it was never built and holds no work (a fresh
/// Redis, or one that lost its data): what the first `library add` or `match` against it does,
/// so that a new deployment needs no separate `index rebuild` step. `None`, touching nothing,
/// for any other index. Unlike [`rebuild_redis_index`] it deletes nothing, so two first uses
/// running at once both insert (inserting a work twice changes nothing) instead of one wiping
/// what the other wrote. As in [`update_redis_index`], the digest is blanked while works are
/// inserted, so match workers refuse the index until it is complete.
///
/// A fresh build is marked while it runs ([`RedisIndex::mark_fresh_build`]), and its claim is
/// short and renewed as it goes: when its builder is killed or fails half-way (the database
/// restarting under it), the next process to load the index, once the claim has lapsed, clears
/// what was written and builds it again, rather than every match worker refusing the index
/// until someone runs `index rebuild`. An index with works but no digest and no such mark (an
/// `index rebuild` or `library add` that did not finish) is still left alone: it says nothing
/// about which works are missing, and only a rebuild can tell.
pub async fn build_if_fresh(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
) -> Result<Option<RebuildSummary>> {
    let unfinished = index.fresh_build_unfinished()?;
    if !unfinished && (index.source_digest()?.is_some() || index.work_count()? > 0) {
        return Ok(None);
    }
    // Seed counts must not be written by two builders at once: the first to claim builds, the
    // others (match workers started together on a fresh Redis) wait for their next retry.
    if !index.claim_build(BUILD_CLAIM_SECONDS)? {
        return Err(ServiceError::unavailable(format!(
            "another process is building the Redis index under {:?}: retry when it is done",
            index.prefix()
        )));
    }
    if unfinished {
        tracing::warn!(
            prefix = index.prefix(),
            "an earlier build of the fresh Redis index did not finish; building it again"
        );
    }
    let built = fill_redis_index(store, index, config, &NoProgress, |index| {
        if unfinished {
            index.clear_keeping_build_claim()?;
        }
        index.mark_fresh_build()?;
        index.set_source_digest("")
    })
    .await;
    let finished = match &built {
        Ok(_) => index.finish_fresh_build(),
        Err(_) => Ok(()),
    };
    let released = index.release_build();
    let built = built?;
    finished?;
    released?;
    Ok(Some(built))
}

/// How long a claim to build a fresh index lasts unless renewed; the builder renews it every
/// [`BUILD_CLAIM_RENEW_EVERY`], so a killed builder's claim lapses within this.
const BUILD_CLAIM_SECONDS: u64 = 30;

/// How often a builder renews its claim.
const BUILD_CLAIM_RENEW_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Inserts every active work's stored windows after `prepare` (clearing the namespace, or
/// blanking the digest), then records the library digest.
async fn fill_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
    progress: &dyn Progress,
    prepare: impl FnOnce(&mut RedisIndex) -> Result<(), IndexError>,
) -> Result<RebuildSummary> {
    let refingerprinted = refresh_outdated_works(store, &config.fingerprint).await?;
    let mut segments = stored_windows(store).await?;
    let works = active_works(store).await?;
    progress.set_total(works.len() as u64);
    prepare(index)?;
    let windows: usize = segments.values().map(Vec::len).sum();
    let text_bytes: u64 = works.iter().map(|w| w.content_len).sum();
    let mut writer = SharedWriter::new(index, config, windows as u64, text_bytes)?;
    let mut summary = RebuildSummary {
        refingerprinted,
        ..RebuildSummary::default()
    };
    let mut renewed = std::time::Instant::now();
    for work in &works {
        let windows = segments.remove(&work.id).unwrap_or_default();
        writer.insert(store, index, work.id, Some(&windows)).await?;
        if renewed.elapsed() >= BUILD_CLAIM_RENEW_EVERY {
            index.renew_build(BUILD_CLAIM_SECONDS)?;
            renewed = std::time::Instant::now();
        }
        summary.works += 1;
        summary.windows += windows.len();
        progress.advance(1);
    }
    index.set_source_digest(&library_digest(store).await?)?;
    Ok(summary)
}

/// Brings a Redis index that was in step with the library before works were added in step with
/// it again, by re-indexing only the works `changed`. `before` is the library digest taken
/// before the change. Returns `false`, touching nothing, when the index was not in step to begin
/// with (never built, or built from another state): only a full [`rebuild_redis_index`] can fix
/// that.
///
/// While the works are re-indexed the recorded digest is blanked, so match workers refuse the
/// half-updated index (their jobs wait and retry) rather than trusting it.
pub async fn update_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
    before: &str,
    changed: &[Id],
) -> Result<bool> {
    if index.source_digest()?.as_deref() != Some(before) {
        return Ok(false);
    }
    if changed.is_empty() {
        return Ok(true);
    }
    let mut writer = SharedWriter::new(index, config, 0, 0)?;
    index.set_source_digest("")?;
    for &work_id in changed {
        writer.remove(index, work_id)?;
        if store.work_summary(work_id).await?.status == WorkStatus::Active {
            // Changed works were just stored, fingerprinted with the configuration in use: their
            // windows are those of their text, and no other work's windows need reading.
            writer.insert(store, index, work_id, None).await?;
        }
    }
    index.set_source_digest(&library_digest(store).await?)?;
    Ok(true)
}

/// Fails unless `index` was built from the library whose digest is `library`: a flushed or
/// half-rebuilt Redis would otherwise answer "no candidates" and pages would be recorded clean.
pub fn check_redis_index(index: &RedisIndex, library: &str) -> Result<()> {
    match index.source_digest()? {
        Some(found) if found == library => Ok(()),
        Some(found) if found.is_empty() => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} is being updated or rebuilt: run `copytrace index \
             rebuild` if no update is under way",
            index.prefix()
        ))),
        Some(_) => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} was built from another state of the library: run \
             `copytrace index rebuild`",
            index.prefix()
        ))),
        None => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} has not been built (or its rebuild did not finish): \
             run `copytrace index rebuild`",
            index.prefix()
        ))),
    }
}
