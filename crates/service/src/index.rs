//! Where the window index lives, and keeping the shared Redis index in step with the library.
//!
//! Embedded runs build an in-memory index from the store at every start; production shares one
//! index in Redis between all match workers. The Redis index records the [library
//! generation](copytrace_store::LibraryState) it reflects, so a worker can always tell an
//! index that reflects the library from a flushed, stale or half-rebuilt one, and one that
//! lacks only works added since (it keeps matching) from one that still holds replaced or
//! withdrawn text (it waits).

use copytrace_fingerprint::fingerprint_text;
use copytrace_index_redis::{
    IndexedGeneration, PostingLoader, RedisDnaIndex, RedisIndex, RedisLibraryStats,
    RedisMinHashIndex, RedisPostings,
};
use copytrace_matcher::postings::{HashFilter, Key, PostingIndex};
use copytrace_matcher::{CandidateMethods, Index, IndexError, MatchConfig, Matcher};
use copytrace_store::{Id, LibraryState, Store, StoreError, Work};

use crate::error::{Context, Result, ServiceError};
use crate::library::{active_works, refresh_outdated_works, stored_windows};
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

/// The library statistics kept under the index's prefix (the sense index): what a match
/// worker over Redis reads instead of filing every work's text.
pub fn library_statistics(index: &RedisIndex) -> Result<RedisLibraryStats> {
    Ok(index.statistics()?)
}

/// The sources an index is filed for under `config`: its candidate sources, and the k-gram
/// postings always, since they also tell library boilerplate.
pub fn filed_sources(config: &MatchConfig) -> CandidateMethods {
    config.candidates.methods | CandidateMethods::KGRAM
}

/// Writes works into the shared candidate indexes and statistics: for each candidate source
/// the configuration enables, what a matcher would file for the work (stored SimHash windows,
/// MinHash and DNA keys), its k-gram postings (always: they also tell boilerplate), and its
/// sense keys.
struct SharedWriter {
    methods: CandidateMethods,
    minhash: Option<RedisMinHashIndex>,
    dna: Option<RedisDnaIndex>,
    postings: Option<RedisPostings>,
    stats: RedisLibraryStats,
    /// Sense keys of works filed but not yet written (see [`SharedWriter::insert`]).
    pending_sense: Vec<(Id, Vec<u32>)>,
    /// An empty matcher with the configuration in use, for [`Matcher::candidate_keys`].
    keys: Matcher,
}

/// Works whose sense keys are written together.
const SENSE_WORKS_BATCH: usize = 256;

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
        let methods = candidates.methods;
        let minhash = methods
            .contains(CandidateMethods::MINHASH)
            .then(|| index.minhash_sized(&candidates.lsh, windows))
            .transpose()?;
        let dna = methods
            .contains(CandidateMethods::DNA)
            .then(|| {
                index.dna_sized(
                    candidates.dna.levels(),
                    candidates.dna_max_distance,
                    windows,
                )
            })
            .transpose()?;
        // About a quarter of a posting per character (two projections, one hash kept per
        // window of 16); Chinese text is 3 bytes a character.
        let postings = Some(index.postings_sized(&candidates.postings, text_bytes / 12)?);
        let stats = index.statistics()?;
        Ok(SharedWriter {
            methods,
            minhash,
            dna,
            postings,
            stats,
            pending_sense: Vec::new(),
            keys: Matcher::new(*config),
        })
    }

    /// Files one active work in every index, replacing what it had there: its stored SimHash
    /// `windows`, or (`None`) those of its text, for a work just stored with the configuration
    /// in use (what the store holds, without reading every work's windows). Its k-gram
    /// postings are filed as `postings` says.
    fn insert(
        &mut self,
        index: &mut RedisIndex,
        work: &Work,
        windows: Option<&[(u32, u64)]>,
        postings: PostingFiling<'_, '_>,
    ) -> Result<()> {
        let work_id = work.summary.id;
        if self.methods.contains(CandidateMethods::SIMHASH) {
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
        }
        // Listed in any case (a work without windows files none): the list tells a built
        // index from a fresh one.
        index.list_works(&[work_id])?;
        if self.minhash.is_some() || self.dna.is_some() {
            let keys = self.keys.candidate_keys(&work.content);
            if let Some(minhash) = &mut self.minhash {
                minhash.insert_work(work_id, &keys.minhash)?;
            }
            if let Some(dna) = &mut self.dna {
                dna.insert_work(work_id, &keys.dna)?;
            }
        }
        let keys = self.keys.posting_keys(&work.content);
        let sense = self.keys.sense_keys_of(&work.content);
        match (postings, &mut self.postings) {
            (PostingFiling::Load(loader), _) => loader.add(work_id, &keys)?,
            (PostingFiling::Append(pending), _) => pending.push((work_id, keys)),
            (PostingFiling::Replace, Some(postings)) => postings.insert_work(work_id, &keys)?,
            (PostingFiling::Replace, None) => {}
        }
        // New works' sense keys are appended together too: one command per sense key and batch
        // rather than per key and work.
        self.pending_sense.push((work_id, sense));
        if self.pending_sense.len() >= SENSE_WORKS_BATCH {
            self.append_pending_sense()?;
        }
        Ok(())
    }

    /// Files the sense keys of the works gathered by [`SharedWriter::insert`].
    fn append_pending_sense(&mut self) -> Result<()> {
        self.stats.append_new_works(&self.pending_sense)?;
        self.pending_sense.clear();
        Ok(())
    }

    /// Appends the postings of new works gathered by [`PostingFiling::Append`], emptying
    /// `pending`.
    fn append_pending(&mut self, pending: &mut Vec<(Id, Vec<Key>)>) -> Result<()> {
        if let Some(postings) = &mut self.postings
            && !pending.is_empty()
        {
            postings.append_new_works(pending)?;
        }
        pending.clear();
        self.append_pending_sense()
    }

    /// Takes one work out of every index. Its k-gram postings are found from `text`, the text
    /// it was filed with where the store still has it (a withdrawn work); a work whose text
    /// was replaced since has its postings replaced where the new text files any, and any left
    /// elsewhere name a text the work no longer has: a candidate they propose is verified
    /// against the work's current text and dropped, and `index rebuild` sheds them.
    fn remove(&mut self, index: &mut RedisIndex, work_id: Id, text: Option<&str>) -> Result<()> {
        index.remove_work(work_id)?;
        if let Some(minhash) = &mut self.minhash {
            minhash.remove_work(work_id)?;
        }
        if let Some(dna) = &mut self.dna {
            dna.remove_work(work_id)?;
        }
        if let (Some(postings), Some(text)) = (&mut self.postings, text) {
            postings.remove_work(work_id, &self.keys.posting_keys(text))?;
        }
        self.stats.remove_work(work_id)?;
        Ok(())
    }
}

impl SharedWriter {
    /// Files every active work's postings again under more bucket bits when works appended
    /// since the index was built left its buckets overfull ([`RedisPostings::overfull`]): each
    /// lookup would otherwise read several times what it needs. Every work's keys are
    /// recomputed from its text, as a rebuild does, about once each time the library grows
    /// fourfold. The new buckets (and a new filter) are written beside the ones in use and
    /// recorded as in use at the end; returns the bits of the old buckets, which the caller
    /// deletes once the library generation has moved.
    async fn rebucket_if_overfull(
        &mut self,
        store: &dyn Store,
        index: &RedisIndex,
    ) -> Result<Option<u32>> {
        let Some(postings) = self.postings.as_mut() else {
            return Ok(None);
        };
        let Some(bits) = postings.overfull()? else {
            return Ok(None);
        };
        let filed = postings.len()? as u64;
        tracing::info!(
            postings = filed,
            from_bits = postings.bucket_bits(),
            to_bits = bits,
            "the k-gram buckets grew overfull: filing every posting again under more bits"
        );
        let mut loader = postings.loader_at(bits, filed);
        each_work_keys(store, index, &self.keys, |work_id, keys| {
            Ok(loader.add(work_id, &keys)?)
        })
        .await?;
        loader.finish()?;
        Ok(Some(postings.switch_bits(bits)?))
    }

    /// Builds the postings filter again, sized for the postings filed now, when works appended
    /// since it was built left it too full to skip many lookups
    /// ([`RedisPostings::filter_has_room`]): every active work's keys are recomputed from its
    /// text, as a rebuild does, about once each time the library grows by half. The filter in
    /// place stays correct (only fuller) until the new one replaces it.
    async fn grow_filter_if_full(&self, store: &dyn Store, index: &RedisIndex) -> Result<()> {
        let Some(postings) = &self.postings else {
            return Ok(());
        };
        if postings.filter_has_room()? {
            return Ok(());
        }
        tracing::info!(
            "the postings filter grew full: building a larger one from the library's texts"
        );
        let mut filter = HashFilter::sized_for(postings.len()? as u64);
        each_work_keys(store, index, &self.keys, |_, keys| {
            for key in keys {
                filter.insert(key.hash);
            }
            Ok(())
        })
        .await?;
        postings.write_filter(&filter)?;
        Ok(())
    }
}

/// Calls `each` with every active work's k-gram keys, recomputed from its text (`keys` a
/// matcher with the configuration in use), renewing the writer's claim on `index` as it goes:
/// what refiling the whole library's postings or filter reads.
async fn each_work_keys(
    store: &dyn Store,
    index: &RedisIndex,
    keys: &Matcher,
    mut each: impl FnMut(Id, Vec<Key>) -> Result<()>,
) -> Result<()> {
    let mut renewed = std::time::Instant::now();
    for work in active_works(store).await? {
        let work = match store.get_work(work.id).await {
            Ok(work) => work,
            Err(StoreError::NotFound(_)) => continue,
            Err(error) => return Err(error.into()),
        };
        each(work.summary.id, keys.posting_keys(&work.content))?;
        if renewed.elapsed() >= BUILD_CLAIM_RENEW_EVERY {
            index.renew_build(BUILD_CLAIM_SECONDS)?;
            renewed = std::time::Instant::now();
        }
    }
    Ok(())
}

/// How [`SharedWriter::insert`] files a work's k-gram postings.
enum PostingFiling<'a, 'b> {
    /// Replacing whatever the work had, one script per bucket (a work filed before).
    Replace,
    /// Gathered for one bulk write of every bucket (a build from scratch).
    Load(&'a mut PostingLoader<'b>),
    /// Gathered to be appended with other new works ([`RedisPostings::append_new_works`]).
    Append(&'a mut Vec<(Id, Vec<Key>)>),
}

/// Postings of new works gathered before they are appended: a batch of about 50 MB.
const APPEND_POSTINGS_BATCH: usize = 2_000_000;

/// What `index rebuild` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildSummary {
    /// Works indexed.
    pub works: usize,
    /// Windows of the works' texts (filed in Redis when the SimHash source is in use).
    pub windows: usize,
    /// k-gram postings filed (when the `kgram` source is in use).
    pub postings: u64,
    /// Works fingerprinted by an older algorithm version, fingerprinted again and stored.
    pub refingerprinted: usize,
}

/// Empties the Redis index's namespace and inserts every work's stored window fingerprints and
/// the MinHash and DNA keys of its text. Works fingerprinted by an older algorithm version are
/// fingerprinted again and stored first, as loading an in-memory matcher does, so the index
/// never mixes versions. The library generation is written last: an interrupted rebuild leaves
/// an index that matching refuses.
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
/// what the other wrote. The generation is blanked while works are inserted, so match workers
/// refuse the index until it is complete.
///
/// A fresh build is marked while it runs ([`RedisIndex::mark_fresh_build`]), and its claim is
/// short and renewed as it goes: when its builder is killed or fails half-way (the database
/// restarting under it), the next process to load the index, once the claim has lapsed, clears
/// what was written and builds it again, rather than every match worker refusing the index
/// until someone runs `index rebuild`. An index with works but no generation and no such mark (an
/// `index rebuild` or `library add` that did not finish) is still left alone: it says nothing
/// about which works are missing, and only a rebuild can tell.
pub async fn build_if_fresh(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
) -> Result<Option<RebuildSummary>> {
    let unfinished = index.fresh_build_unfinished()?;
    if !unfinished && (index.library_generation()?.is_some() || index.work_count()? > 0) {
        return Ok(None);
    }
    // Two builders must not write at once: the first to claim builds, the
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
        index.set_library_generation(None)
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
/// blanking the generation), then records the library generation read before the works were
/// listed: a change made meanwhile is newer, and the next update files it.
async fn fill_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
    progress: &dyn Progress,
    prepare: impl FnOnce(&mut RedisIndex) -> Result<(), IndexError>,
) -> Result<RebuildSummary> {
    let refingerprinted = refresh_outdated_works(store, &config.fingerprint).await?;
    let state = store.library_state().await?;
    let mut segments = stored_windows(store).await?;
    let works = active_works(store).await?;
    progress.set_total(works.len() as u64);
    prepare(index)?;
    let windows: usize = segments.values().map(Vec::len).sum();
    let text_bytes: u64 = works.iter().map(|w| w.content_len).sum();
    let mut writer = SharedWriter::new(index, config, windows as u64, text_bytes)?;
    index.set_filed_sources(filed_sources(config))?;
    let mut summary = RebuildSummary {
        refingerprinted,
        ..RebuildSummary::default()
    };
    // The postings are gathered and written bucket by bucket at the end: one write per bucket
    // instead of one script per bucket and work.
    let mut postings = writer.postings.take();
    let mut loader = postings.as_mut().map(RedisPostings::loader);
    let mut renewed = std::time::Instant::now();
    for work in &works {
        let windows = segments.remove(&work.id).unwrap_or_default();
        let filing = match loader.as_mut() {
            Some(loader) => PostingFiling::Load(loader),
            None => PostingFiling::Replace,
        };
        writer.insert(
            index,
            &store.get_work(work.id).await?,
            Some(&windows),
            filing,
        )?;
        if renewed.elapsed() >= BUILD_CLAIM_RENEW_EVERY {
            index.renew_build(BUILD_CLAIM_SECONDS)?;
            renewed = std::time::Instant::now();
        }
        summary.works += 1;
        summary.windows += windows.len();
        progress.advance(1);
    }
    if let Some(loader) = loader {
        summary.postings = loader.finish()?;
    }
    writer.append_pending_sense()?;
    index.set_library_generation(Some(state.generation))?;
    Ok(summary)
}

/// Brings a Redis index in step with the library by filing the works that changed since the
/// generation it records ([`Store::library_changes_since`]): new works appended, replaced ones
/// refiled, withdrawn ones taken out. Returns `false`, touching nothing, when the index cannot
/// be caught up: never built, built before generations existed, for other candidate sources,
/// or newer than the library (another database's); only a full [`rebuild_redis_index`] fixes
/// that.
///
/// While only additions are filed, the generation stays as it was and match workers keep
/// matching (the pages that may copy the new works are marked for matching after this
/// returns). A replacement or withdrawal blanks it until the update ends, so workers wait
/// rather than trust text that is no longer the library's. One update runs at a time (a
/// claim in Redis); a second waits for the first, then files what is left.
pub async fn update_redis_index(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
) -> Result<bool> {
    if !index.filed_sources()?.contains(filed_sources(config)) {
        return Ok(false);
    }
    claim_update(index).await?;
    let updated = file_changes(store, index, config).await;
    let released = index.release_build();
    let updated = updated?;
    released?;
    Ok(updated)
}

/// Waits for the claim of the index's writer: an update, or a fresh build, holds it.
async fn claim_update(index: &RedisIndex) -> Result<()> {
    let started = std::time::Instant::now();
    while !index.claim_build(BUILD_CLAIM_SECONDS)? {
        // A killed writer's claim lapses within BUILD_CLAIM_SECONDS.
        if started.elapsed() > std::time::Duration::from_secs(3 * BUILD_CLAIM_SECONDS) {
            return Err(ServiceError::unavailable(format!(
                "another process has been writing the Redis index under {:?} for over {} s: \
                 retry when it is done",
                index.prefix(),
                3 * BUILD_CLAIM_SECONDS
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}

/// [`update_redis_index`] once its claim is held.
async fn file_changes(
    store: &dyn Store,
    index: &mut RedisIndex,
    config: &MatchConfig,
) -> Result<bool> {
    let Some(IndexedGeneration::At(from)) = index.library_generation()? else {
        return Ok(false);
    };
    let state = store.library_state().await?;
    if from > state.generation {
        return Ok(false);
    }
    let changes = store.library_changes_since(from).await?;
    let Some(reached) = changes.last().map(|c| c.generation.max(state.generation)) else {
        return Ok(true);
    };
    let mut changed: Vec<Id> = changes.iter().map(|c| c.work_id).collect();
    changed.sort_unstable();
    changed.dedup();
    let listed = index.listed_works(&changed)?;
    let active: std::collections::HashSet<Id> = changes
        .iter()
        .filter(|c| c.active)
        .map(|c| c.work_id)
        .collect();
    let additions_only = changed
        .iter()
        .zip(&listed)
        .all(|(id, &listed)| !listed && active.contains(id));
    if !additions_only {
        index.set_library_generation(None)?;
    }
    let mut writer = SharedWriter::new(index, config, 0, 0)?;
    // New works' postings are appended together, in batches: nothing to replace.
    let mut pending: Vec<(Id, Vec<Key>)> = Vec::new();
    let mut pending_keys = 0;
    let mut appended_any = false;
    let mut renewed = std::time::Instant::now();
    for (&work_id, listed) in changed.iter().zip(listed) {
        let work = match store.get_work(work_id).await {
            Ok(work) => Some(work),
            Err(StoreError::NotFound(_)) => None,
            Err(error) => return Err(error.into()),
        };
        if listed {
            writer.remove(index, work_id, work.as_ref().map(|w| w.content.as_str()))?;
        }
        let Some(work) = work.filter(|_| active.contains(&work_id)) else {
            continue;
        };
        // Changed works were stored fingerprinted with the configuration in use: their
        // windows are those of their text, and no other work's windows need reading.
        let filing = if listed {
            PostingFiling::Replace
        } else {
            PostingFiling::Append(&mut pending)
        };
        writer.insert(index, &work, None, filing)?;
        if !listed {
            pending_keys += pending.last().map_or(0, |(_, keys)| keys.len());
            appended_any = true;
        }
        if pending_keys >= APPEND_POSTINGS_BATCH {
            writer.append_pending(&mut pending)?;
            pending_keys = 0;
        }
        if renewed.elapsed() >= BUILD_CLAIM_RENEW_EVERY {
            index.renew_build(BUILD_CLAIM_SECONDS)?;
            renewed = std::time::Instant::now();
        }
    }
    writer.append_pending(&mut pending)?;
    // Works appended may have overfilled the buckets (filed again, with a new filter, under
    // more bits) or the filter alone (built again).
    let rebucketed = if appended_any {
        writer.rebucket_if_overfull(store, index).await?
    } else {
        None
    };
    if rebucketed.is_none() {
        writer.grow_filter_if_full(store, index).await?;
    }
    index.set_library_generation(Some(reached))?;
    // Only now: a worker reading the old buckets meanwhile finds the generation moved, learns
    // the new bits and matches its page again.
    if let (Some(old), Some(postings)) = (rebucketed, &writer.postings)
        && let Err(error) = postings.drop_buckets(old)
    {
        tracing::warn!(%error, "the buckets of {old} bits were left in Redis; `index rebuild` clears them");
    }
    Ok(true)
}

/// Fails unless `index` may be used for the library as `state` describes it: complete,
/// holding no text the library replaced or withdrew since, and lacking no work whose pages were
/// marked for matching (it may lack works added since, whose pages are marked only once the
/// index has them). A flushed or half-rebuilt Redis would otherwise answer "no candidates" and
/// pages would be recorded clean. Returns the generation the index reflects, which may be ahead
/// of `state` (works added and filed since it was read): see [`check_index_not_ahead`].
pub fn check_redis_index(index: &RedisIndex, state: &LibraryState) -> Result<i64> {
    let floor = state.rewritten.max(state.marked);
    match index.library_generation()? {
        Some(IndexedGeneration::At(g)) if g >= floor => Ok(g),
        Some(IndexedGeneration::At(g)) => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} reflects library generation {g}, and the library \
             changed at generation {floor} in a way matching cannot skip (works replaced or \
             withdrawn, or added with their pages marked): it is brought in step by `library \
             add` or `library rm` with `--redis-url`, or by the next match; run `copytrace \
             index rebuild` if it stays behind",
            index.prefix(),
        ))),
        Some(IndexedGeneration::Updating) => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} is being updated or rebuilt: run `copytrace index \
             rebuild` if no update is under way",
            index.prefix()
        ))),
        None => Err(ServiceError::unavailable(format!(
            "the Redis index under {:?} has not been built (or its rebuild did not finish, or \
             it was built by an older version): run `copytrace index rebuild`",
            index.prefix()
        ))),
    }
}

/// Fails when the generation `indexed` an index reflects is ahead of the library as `state`
/// read it just now: the index was built from another database (or one restored from an
/// older backup).
pub fn check_index_not_ahead(index: &RedisIndex, indexed: i64, state: &LibraryState) -> Result<()> {
    if indexed <= state.generation {
        return Ok(());
    }
    Err(ServiceError::unavailable(format!(
        "the Redis index under {:?} reflects library generation {indexed}, and the library is \
         at {}: it was built from another state of the library (another database); run \
         `copytrace index rebuild`",
        index.prefix(),
        state.generation
    )))
}

/// Whether `index` records a generation behind what matching may skip (see
/// [`check_redis_index`]): what the library changed without filing it there (a `library add`
/// without `--redis-url`, or one stopped before its update).
pub fn lags_behind(index: &RedisIndex, state: &LibraryState) -> Result<bool> {
    Ok(matches!(
        index.library_generation()?,
        Some(IndexedGeneration::At(g)) if g < state.rewritten.max(state.marked)
    ))
}

/// Fails unless `index` was filed for every candidate source `config` looks up: a worker
/// looking up the k-gram postings of an index built before they existed would find nothing
/// and record every page clean.
pub fn check_filed_sources(index: &RedisIndex, config: &MatchConfig) -> Result<()> {
    let filed = index.filed_sources()?;
    let wanted = filed_sources(config);
    if filed.contains(wanted) {
        return Ok(());
    }
    Err(ServiceError::unavailable(format!(
        "the Redis index under {:?} was filed for the candidate sources {filed}, and this \
         process looks up {wanted}: run `copytrace index rebuild` (it files the default \
         sources, {}) and look up only those",
        index.prefix(),
        CandidateMethods::DEFAULT
    )))
}
