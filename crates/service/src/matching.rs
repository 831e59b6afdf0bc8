//! Matching pages against the library and recording the verdicts: the one place where a page
//! text meets the matcher.
//!
//! A [`MatchEngine`] holds the matcher for the library as it is now, over an in-memory index
//! built from the store or over the shared Redis index, and reloads it when the library changes
//! (it looks at most every two seconds). The CLI's `match`, match jobs, dedup runs and removal
//! checks all match through it, so they cannot disagree on a verdict.
//!
//! **Mirror pages are verified once.** Pirate mirrors copy whole pages across sites. A page
//! whose text (content hash) is that of another page already verified takes that page's
//! verdict instead of being matched again, but only a verdict of the same matcher (version,
//! settings, kind of index) recorded at the library's current generation: every change to the
//! works (added, replaced, withdrawn, brought back, deleted) moves the generation, so a verdict
//! found before it is never reused, and the page is matched. A verdict is labelled with the
//! generation the matcher reflected, read before its works were, so no label claims a later
//! library than the verdict was found against: a verdict at the current generation is what
//! matching now gives (see [`Store::verified_twin`]). Over the shared index, works just added
//! may not be filed yet: a verdict lacks them then, as any page matched meanwhile does, and
//! the marking that follows their filing marks a mirror with its twin (the same text, the same
//! sketch). A reused verdict never names a work withdrawn or replaced since: those changes
//! move the generation.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use copytrace_fingerprint::FINGERPRINT_VERSION;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::sketch::{SKETCH_VERSION, Sketcher};
use copytrace_matcher::{IndexError, MatchConfig, Matcher, WorkMatch};
use copytrace_store::{
    EvidencePassage, Id, LibraryState, NewMatch, Page, PageSketch, PageVerdict, Store, StoreError,
    VerdictBasis, VerdictOutcome,
};
use tokio::sync::Mutex;

use crate::aliases;
use crate::error::{Context, Result, ServiceError};
use crate::index::{
    IndexSource, build_if_fresh, candidate_indexes, check_filed_sources, check_index_not_ahead,
    check_redis_index, lags_behind, library_statistics, open_redis_index, update_redis_index,
};
use crate::library::{active_works, refresh_outdated_works, stored_windows};
use crate::review::ReviewGate;

/// Due pages read per batch when matching every due page.
const DUE_BATCH: u32 = 500;

/// Memory a matcher over the shared Redis indexes may spend on works prepared for verification
/// (their texts are read from the store when a page proposes them).
const PREPARED_WORKS_BUDGET: u64 = 64 << 20;

/// The store as the matcher's source of work texts, for a matcher that keeps none. The matcher
/// runs on blocking threads (`spawn_blocking`), where waiting on the runtime is allowed.
struct StoreTexts {
    store: Arc<dyn Store>,
    runtime: tokio::runtime::Handle,
}

impl copytrace_matcher::WorkTexts for StoreTexts {
    fn texts(&self, ids: &[Id]) -> Result<Vec<(Id, String)>, IndexError> {
        self.runtime.block_on(async {
            let mut texts = Vec::with_capacity(ids.len());
            for &id in ids {
                match self.store.get_work(id).await {
                    Ok(work) => texts.push((id, work.content)),
                    Err(StoreError::NotFound(_)) => {}
                    Err(error) => {
                        return Err(IndexError::Backend(format!(
                            "cannot read work {id} for verification: {error}"
                        )));
                    }
                }
            }
            Ok(texts)
        })
    }
}

/// A matcher over one of the index kinds.
enum LoadedMatcher {
    Memory(Matcher),
    Redis(Matcher<RedisIndex>),
}

impl LoadedMatcher {
    fn match_texts_reading(
        &self,
        texts: &[&str],
        read: impl FnMut(usize, &[char]),
    ) -> Result<Vec<Vec<WorkMatch>>, IndexError> {
        match self {
            LoadedMatcher::Memory(m) => m.match_texts_reading(texts, read),
            LoadedMatcher::Redis(m) => m.match_texts_reading(texts, read),
        }
    }

    fn work_count(&self) -> usize {
        match self {
            LoadedMatcher::Memory(m) => m.work_count(),
            LoadedMatcher::Redis(m) => m.work_count(),
        }
    }

    /// Fails unless the shared index still reflects the library as `state` described it when
    /// this matcher was loaded. `Ok(true)` when the index has works added after that, which
    /// this matcher must learn before it matches (it drops candidates it does not know).
    fn check_index(&self, state: &LibraryState) -> Result<bool> {
        match self {
            LoadedMatcher::Memory(_) => Ok(false),
            LoadedMatcher::Redis(matcher) => {
                Ok(check_redis_index(matcher.index(), state)? > state.generation)
            }
        }
    }
}

/// Times a page is matched while the shared index keeps getting works the matcher has not
/// learnt yet, before its job is failed for a later retry.
const MATCH_ATTEMPTS: usize = 4;

/// The matcher in use and the library state it reflects.
struct Loaded {
    state: LibraryState,
    matcher: Arc<LoadedMatcher>,
    checked: Instant,
    /// The works the matcher holds.
    works: HashSet<Id>,
}

/// At most this many works added, changed or withdrawn (and at most a tenth of the library)
/// are applied to a loaded in-memory matcher in place; a larger change loads the library again.
const IN_PLACE_CHANGES: usize = 256;

/// Matches texts against the library as it is now, and records pages' verdicts.
pub struct MatchEngine {
    store: Arc<dyn Store>,
    source: IndexSource,
    config: MatchConfig,
    /// Makes the sketch stored with each matched page.
    sketcher: Sketcher,
    /// How many times the whole library was loaded (small changes are applied in place).
    full_loads: std::sync::atomic::AtomicUsize,
    loaded: Mutex<Option<Loaded>>,
    /// How often the library is checked for changes.
    recheck: Duration,
    /// Which new matches are confirmed without a person.
    gate: ReviewGate,
    /// The matcher's identity, kept with each verdict: a page reuses only the verdicts of the
    /// same matcher ([`matcher_identity`]).
    identity: String,
    /// Pages whose verdict the matcher gave (in [`MatchEngine::record`]).
    matched_pages: std::sync::atomic::AtomicU64,
    /// Pages that reused the verdict of a page with the same text instead.
    mirrored_pages: std::sync::atomic::AtomicU64,
}

/// How many pages an engine matched, and how many reused a verified page's verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    /// Pages whose verdict the matcher gave.
    pub matched: u64,
    /// Pages whose text another page showed and was verified on: its verdict was reused.
    pub mirrored: u64,
}

/// What a verdict is found by: the program's version, the kind of index (the candidates of
/// the in-memory and Redis indexes are not promised to be the same), the fingerprint version
/// and every matching setting. Two engines with the same identity give the same verdict on a
/// text against the same library.
fn matcher_identity(config: &MatchConfig, source: &IndexSource) -> String {
    let index = match source {
        IndexSource::Memory => "memory",
        IndexSource::Redis { .. } => "redis",
    };
    let settings = format!("{FINGERPRINT_VERSION} {config:?}");
    let digest = copytrace_store::sha256_hex(settings.as_bytes());
    format!(
        "copytrace {} {index} {}",
        env!("CARGO_PKG_VERSION"),
        &digest[..16]
    )
}

/// What matching one page did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOutcome {
    /// The verdict was recorded.
    Recorded {
        /// The page's URL.
        url: String,
        /// Works the page copies.
        matches: usize,
        /// What recording changed.
        verdict: VerdictOutcome,
        /// The page this one is an alias of (the same text, earlier, on the same site): it
        /// recorded no matches of its own (see [`crate::aliases`]).
        alias_of: Option<Id>,
        /// The page whose verdict this one reused: the same text, on another site, verified
        /// against the library as it is now (a mirror); `None` when the matcher gave it.
        mirror_of: Option<Id>,
    },
    /// The page changed since it was listed: its newer text is matched on its own.
    Changed,
    /// The page was already matched on this text.
    AlreadyMatched,
    /// The page no longer exists.
    Gone,
}

/// What matching many pages did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchSummary {
    /// Pages matched.
    pub pages: u64,
    /// Pages with at least one match.
    pub infringing_pages: u64,
    /// Page × work matches recorded.
    pub matches: u64,
    /// Matches that did not exist before.
    pub new_matches: u64,
    /// Matches moved to `removed`: the page changed and no longer carries the copy.
    pub removed: u64,
    /// `removed` matches reopened: a newer text of the page carries the copy again.
    pub reopened: u64,
    /// Pages that are aliases of an earlier page (the same text on the same site under
    /// another URL): counted in `pages`, with no matches of their own.
    pub aliases: u64,
    /// Pages that reused the verdict of a page with the same text verified already (mirrors):
    /// counted in `pages`, with the matches of that verdict.
    pub mirrors: u64,
}

impl MatchSummary {
    /// Counts one page's outcome; `true` when a verdict was recorded.
    pub fn add(&mut self, outcome: &PageOutcome) -> bool {
        let PageOutcome::Recorded {
            matches,
            verdict,
            alias_of,
            mirror_of,
            ..
        } = outcome
        else {
            return false;
        };
        let matches = *matches;
        self.pages += 1;
        self.aliases += u64::from(alias_of.is_some());
        self.mirrors += u64::from(mirror_of.is_some());
        self.matches += matches as u64;
        self.infringing_pages += u64::from(matches > 0);
        self.new_matches += verdict.new_matches;
        self.removed += verdict.removed;
        self.reopened += verdict.reopened;
        true
    }
}

impl MatchEngine {
    /// An engine matching with `config` over the index in `source`; nothing is loaded until
    /// the first use (or [`MatchEngine::preload`]).
    pub fn new(store: Arc<dyn Store>, source: IndexSource, config: MatchConfig) -> Self {
        Self {
            identity: matcher_identity(&config, &source),
            store,
            source,
            sketcher: Sketcher::new(&config),
            full_loads: std::sync::atomic::AtomicUsize::new(0),
            config,
            loaded: Mutex::new(None),
            recheck: Duration::from_secs(2),
            gate: ReviewGate::default(),
            matched_pages: std::sync::atomic::AtomicU64::new(0),
            mirrored_pages: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many pages this engine matched, and how many reused a verified page's verdict.
    pub fn verdict_counts(&self) -> VerdictCounts {
        use std::sync::atomic::Ordering::Relaxed;
        VerdictCounts {
            matched: self.matched_pages.load(Relaxed),
            mirrored: self.mirrored_pages.load(Relaxed),
        }
    }

    /// The same engine with the certainty gate `gate` (default: [`ReviewGate::default`]).
    pub fn with_review_gate(mut self, gate: ReviewGate) -> Self {
        self.gate = gate;
        self
    }

    /// The store verdicts are recorded in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether candidates come from the shared Redis index.
    pub fn uses_redis(&self) -> bool {
        matches!(self.source, IndexSource::Redis { .. })
    }

    /// Loads the matcher now (at start, so the first page does not pay for it and a broken
    /// index is reported before any job is claimed).
    pub async fn preload(&self) -> Result<()> {
        self.current().await.map(|_| ())
    }

    /// [`MatchEngine::preload`], waiting up to `patience` while the shared index is being
    /// built or updated by another process (a worker started while a fresh Redis is filled, or
    /// during `index rebuild`) or the database cannot be reached: such a worker starts once they
    /// are ready instead of exiting. Any other error, or one that outlasts `patience`, is
    /// returned.
    pub async fn preload_when_available(&self, patience: Duration) -> Result<()> {
        crate::error::patiently(patience, || self.preload()).await
    }

    /// Works in the library the matcher holds.
    pub async fn work_count(&self) -> Result<usize> {
        Ok(self.current().await?.1.work_count())
    }

    /// The matcher for the library as it is now (looked at every few seconds).
    async fn current(&self) -> Result<(LibraryState, Arc<LoadedMatcher>)> {
        self.current_checked(false).await
    }

    /// [`MatchEngine::current`], looking at the library now when `now` (the shared index was
    /// found ahead of the matcher).
    async fn current_checked(&self, now: bool) -> Result<(LibraryState, Arc<LoadedMatcher>)> {
        let mut loaded = self.loaded.lock().await;
        if let Some(l) = loaded.as_mut()
            && !now
            && l.checked.elapsed() < self.recheck
        {
            return Ok((l.state, l.matcher.clone()));
        }
        // One row: what the library's generation is, whatever its size.
        let state = self.store.library_state().await?;
        if let Some(l) = loaded.as_mut()
            && l.state.generation == state.generation
        {
            l.checked = Instant::now();
            return Ok((l.state, l.matcher.clone()));
        }
        if let Some(previous) = loaded.take() {
            // `None`: in use by a task still matching, or too large a change: load it again.
            if let Some(updated) = self.apply_changes(previous, state).await? {
                let matcher = updated.matcher.clone();
                *loaded = Some(updated);
                return Ok((state, matcher));
            }
        }
        tracing::info!("loading the library for matching");
        self.full_loads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (matcher, works, state) = self.load(state).await?;
        let matcher = Arc::new(matcher);
        *loaded = Some(Loaded {
            state,
            matcher: matcher.clone(),
            checked: Instant::now(),
            works,
        });
        Ok((state, matcher))
    }

    /// Applies a library change (works added, changed or withdrawn since the loaded
    /// generation) to the loaded matcher instead of loading every work again. In memory, a
    /// small change is applied in place to a matcher no task is using (after adding ten works
    /// to a library of 10,000, the reload took 80 s and this takes the ten works'
    /// fingerprinting). Over Redis, works that were only added are learnt by id, even while
    /// other tasks match with the matcher (their keys are in the shared index; `library add`
    /// filed them before marking pages); a replacement or withdrawal loads the matcher again,
    /// once the index reflects it. `None` when it cannot: the caller loads the library again.
    async fn apply_changes(&self, previous: Loaded, state: LibraryState) -> Result<Option<Loaded>> {
        let store = self.store.as_ref();
        let redis = match previous.matcher.as_ref() {
            LoadedMatcher::Memory(_) => false,
            // A replacement or withdrawal, or an index that does not hold what the library
            // needs it to: loaded again (which brings the index in step when it can).
            LoadedMatcher::Redis(matcher) => {
                if state.rewritten > previous.state.generation
                    || check_redis_index(matcher.index(), &state).is_err()
                {
                    return Ok(None);
                }
                true
            }
        };
        let changes = store
            .library_changes_since(previous.state.generation)
            .await?;
        if !redis
            && (changes.len() > IN_PLACE_CHANGES
                || changes.len() * 10 > previous.works.len().max(1))
        {
            return Ok(None);
        }
        let Loaded {
            matcher, mut works, ..
        } = previous;
        tracing::info!(
            changes = changes.len(),
            "applying library changes to the loaded matcher"
        );
        // Over Redis, works only added are learnt by the matcher in use.
        if let LoadedMatcher::Redis(shared) = matcher.as_ref() {
            let added: Vec<Id> = changes
                .iter()
                .filter(|c| c.active)
                .map(|c| c.work_id)
                .collect();
            shared.learn_shared_works(&added)?;
            works.extend(added);
            return Ok(Some(Loaded {
                state,
                matcher,
                checked: Instant::now(),
                works,
            }));
        }
        let Ok(LoadedMatcher::Memory(mut matcher)) = Arc::try_unwrap(matcher) else {
            return Ok(None);
        };
        for change in &changes {
            if works.remove(&change.work_id) {
                matcher.remove_work(change.work_id)?;
            }
            if change.active {
                let work = store.get_work(change.work_id).await?;
                // Works fingerprinted by another version are refreshed by a full load.
                if work.summary.fingerprint_version != FINGERPRINT_VERSION {
                    return Ok(None);
                }
                matcher.add_work(change.work_id, &work.content)?;
                works.insert(change.work_id);
            }
        }
        Ok(Some(Loaded {
            state,
            matcher: Arc::new(LoadedMatcher::Memory(matcher)),
            checked: Instant::now(),
            works,
        }))
    }

    /// A matcher holding every work of the store. In memory, works fingerprinted by an older
    /// algorithm version are fingerprinted again first. Over Redis, the index is used as
    /// `index rebuild` or `library add` left it (built first if it is empty and was never
    /// built), and refused unless it was built from the library as it is now; the store
    /// provides only the works' texts, for verification.
    ///
    /// Returns the library state the matcher reflects: `state`, or a later one when the shared
    /// index was found ahead of it (works added meanwhile).
    async fn load(
        &self,
        state: LibraryState,
    ) -> Result<(LoadedMatcher, HashSet<Id>, LibraryState)> {
        let store = self.store.as_ref();
        let mut works = HashSet::new();
        match &self.source {
            IndexSource::Memory => {
                refresh_outdated_works(store, &self.config.fingerprint).await?;
                let mut segments = stored_windows(store).await?;
                let mut matcher = Matcher::new(self.config);
                for summary in active_works(store).await? {
                    let work = store.get_work(summary.id).await?;
                    let windows = segments.remove(&summary.id).unwrap_or_default();
                    matcher.add_fingerprinted_work(summary.id, &work.content, windows)?;
                    works.insert(summary.id);
                }
                Ok((LoadedMatcher::Memory(matcher), works, state))
            }
            IndexSource::Redis { url, prefix } => {
                let mut index = open_redis_index(url, prefix)?;
                // A fresh Redis, as a new deployment has when its works were added without
                // `--redis-url`, or one that lost its data: built here rather than refused.
                let fresh = build_if_fresh(store, &mut index, &self.config)
                    .await?
                    .is_some();
                if fresh {
                    tracing::info!("built the empty Redis index from the library");
                }
                // Read again when the index is ahead of `state` (works were added and filed
                // since) or was built here (refingerprinting moves the generation).
                let mut state = match fresh {
                    true => store.library_state().await?,
                    false => state,
                };
                // An index the library moved past without filing the change (works added
                // without `--redis-url`, an update that was stopped) is brought in step here,
                // as a fresh one is built: the pages marked for those works need them.
                if lags_behind(&index, &state)? {
                    tracing::info!("bringing the Redis index in step with the library");
                    update_redis_index(store, &mut index, &self.config).await?;
                    state = store.library_state().await?;
                }
                let indexed = check_redis_index(&index, &state)?;
                if indexed > state.generation {
                    state = store.library_state().await?;
                    check_index_not_ahead(&index, indexed, &state)?;
                }
                check_filed_sources(&index, &self.config)?;
                let (minhash, dna) = candidate_indexes(&index, &self.config)?;
                // Read by every worker: candidates, and which text is library boilerplate.
                let postings = index.postings(&self.config.candidates.postings)?;
                let texts = StoreTexts {
                    store: self.store.clone(),
                    runtime: tokio::runtime::Handle::current(),
                };
                // The library's statistics are read, not counted: no work's text is read here.
                let sense = library_statistics(&index)?.sense_index()?;
                let mut matcher = Matcher::with_shared_indexes(
                    self.config,
                    index,
                    Box::new(minhash),
                    Box::new(dna),
                )
                .with_texts_on_demand(Box::new(texts), PREPARED_WORKS_BUDGET)
                .with_shared_postings(Box::new(postings))
                .with_library_statistics(sense);
                // Ids only, through the index of changes: no work's row is read.
                for change in store.library_changes_since(-1).await? {
                    if change.active {
                        matcher.add_shared_work(change.work_id)?;
                        works.insert(change.work_id);
                    }
                }
                Ok((LoadedMatcher::Redis(matcher), works, state))
            }
        }
    }

    /// Matches a text against the library as it is now. Fails, rather than answering "no
    /// match", when the shared index is not the library's (flushed, stale, being rebuilt).
    pub async fn match_text(&self, text: &str) -> Result<Vec<WorkMatch>> {
        let (_, mut found) = self.match_texts_at(vec![text.to_owned()]).await?;
        Ok(found.pop().map(|(matches, _)| matches).unwrap_or_default())
    }

    /// [`MatchEngine::match_text`] of each of `texts`, in one blocking task and one lookup of
    /// the shared index, with the library state the matcher reflected: its generation is never
    /// later than the works the matcher held. Each text's matches come with its sketch, made
    /// from the text as the matcher read it.
    async fn match_texts_at(
        &self,
        texts: Vec<String>,
    ) -> Result<(LibraryState, Vec<(Vec<WorkMatch>, Vec<u32>)>)> {
        let texts: Arc<[String]> = texts.into();
        let (mut state, mut matcher) = self.current().await?;
        for _ in 0..MATCH_ATTEMPTS {
            match self.match_checked(state, matcher, texts.clone()).await? {
                Some(found) => return Ok((state, found)),
                // The shared index has works filed after the matcher last looked at the
                // library (a `library add` that just ended; the pages it marks may be among
                // these): the matcher learns them, and the pages are matched again, since a
                // candidate of a work it did not know was dropped.
                None => (state, matcher) = self.current_checked(true).await?,
            }
        }
        Err(ServiceError::unavailable(format!(
            "the library kept growing while pages were matched ({MATCH_ATTEMPTS} times): \
             retry"
        )))
    }

    /// Matches `texts`, then checks that the shared index (read for their candidates) is
    /// still one the matcher may use: one read of the index's generation per batch, after its
    /// lookups, so a flush or rebuild during them is seen. `None` when the index has works the
    /// matcher does not know: the verdicts may lack them.
    async fn match_checked(
        &self,
        state: LibraryState,
        matcher: Arc<LoadedMatcher>,
        texts: Arc<[String]>,
    ) -> Result<Option<Vec<(Vec<WorkMatch>, Vec<u32>)>>> {
        let loaded = matcher.clone();
        let sketcher = self.sketcher.clone();
        let (found, ahead) = tokio::task::spawn_blocking(move || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut sketches = vec![Vec::new(); texts.len()];
            let found = matcher.match_texts_reading(&texts, |i, chars| {
                sketches[i] = sketcher.page_sketch_of(chars);
            });
            let found = found.map(|found| found.into_iter().zip(sketches).collect());
            (found, matcher.check_index(&state))
        })
        .await
        .map_err(|e| ServiceError::unavailable(format!("the matching task panicked: {e}")))?;
        match ahead {
            Ok(false) => Ok(Some(found?)),
            Ok(true) => Ok(None),
            Err(error) => {
                self.forget(&loaded).await;
                Err(error)
            }
        }
    }

    /// Forgets `loaded` when the shared index is not the one it was loaded with any more
    /// (Redis restarted empty, flushed, rebuilt), so that a later job loads the index again
    /// (building an empty one) instead of failing on this matcher until its library changes.
    async fn forget(&self, loaded: &Arc<LoadedMatcher>) {
        let mut current = self.loaded.lock().await;
        if current
            .as_ref()
            .is_some_and(|l| Arc::ptr_eq(&l.matcher, loaded))
        {
            tracing::warn!(
                "the shared index changed under the loaded matcher; it will be loaded again"
            );
            *current = None;
        }
    }

    /// Matches the stored page `page_id` if its text is still the one with `content_hash` and
    /// was not matched yet, and records the verdict atomically (recording replaces the previous
    /// verdict, so doing this twice changes nothing).
    pub async fn match_page(&self, page_id: Id, content_hash: &str) -> Result<PageOutcome> {
        let mut outcomes = self
            .match_pages(&[(page_id, content_hash.to_owned())])
            .await?;
        Ok(outcomes.pop().unwrap_or(PageOutcome::Gone))
    }

    /// [`MatchEngine::match_page`] of each `(page, content hash)` of `due`, with their
    /// outcomes in that order, as a batch: the pages are read in one statement, their k-grams
    /// looked up in the shared index in one request and matched in one blocking task, their
    /// verdicts recorded in one transaction and their sketches stored in another. A worker
    /// matching one page at a time spent more of its time handing statements and replies
    /// between threads, and committing, than matching (docs/benchmarks.md).
    ///
    /// Each page's verdict is the one it would get alone: whether a page is an alias depends
    /// only on the stored texts, and a mirror takes a verdict already recorded or is matched
    /// (two mirrors in one batch are both matched). Then each verdict is recorded with a
    /// sketch of the page, so works added later find it without reading its text (see
    /// [`crate::library`]). A page showing the same text as an earlier page of its site is an
    /// alias of it ([`crate::aliases`]): it records an empty verdict (clearing any matches it
    /// had) and points at that page, so reports and statistics count the page once.
    ///
    /// When the batch's transaction fails, the pages are recorded one at a time, so the error
    /// returned names the page that failed and the pages before it keep their verdicts. The
    /// pages of `due` are distinct (a page named twice is matched twice).
    pub async fn match_pages(&self, due: &[(Id, String)]) -> Result<Vec<PageOutcome>> {
        use std::sync::atomic::Ordering::Relaxed;
        let ids: Vec<Id> = due.iter().map(|(id, _)| *id).collect();
        let pages: HashMap<Id, Page> = self
            .store
            .get_pages(&ids)
            .await?
            .into_iter()
            .map(|page| (page.id, page))
            .collect();
        // Only a page whose text another page shows can be an alias or have a verified twin:
        // one statement for the batch spares the others a statement each for either.
        let unmatched: Vec<String> = due
            .iter()
            .filter(|(id, hash)| {
                pages.get(id).is_some_and(|page| {
                    page.content_hash == *hash && page.matched_hash.as_deref() != Some(hash)
                })
            })
            .map(|(_, hash)| hash.clone())
            .collect();
        let shared: HashSet<String> = self
            .store
            .shared_texts(&unmatched)
            .await?
            .into_iter()
            .collect();
        let mut outcomes: Vec<Option<PageOutcome>> = vec![None; due.len()];
        let mut verdicts: Vec<PendingVerdict> = Vec::new();
        for (slot, (id, hash)) in due.iter().enumerate() {
            let Some(page) = pages.get(id) else {
                outcomes[slot] = Some(PageOutcome::Gone);
                continue;
            };
            if page.content_hash != *hash {
                outcomes[slot] = Some(PageOutcome::Changed);
                continue;
            }
            if page.matched_hash.as_deref() == Some(hash.as_str()) {
                outcomes[slot] = Some(PageOutcome::AlreadyMatched);
                continue;
            }
            let shown_elsewhere = shared.contains(hash);
            let alias_of = match shown_elsewhere || page.alias_of.is_some() {
                true => aliases::primary_of(self.store.as_ref(), page).await?,
                false => None,
            };
            let mut verdict = PendingVerdict {
                slot,
                page: page.clone(),
                alias_of,
                matches: Vec::new(),
                basis: None,
                mirror_of: None,
                matched: false,
                sketch: None,
            };
            if verdict.alias_of.is_none() {
                // The verdict of another page showing this text, verified by this matcher at
                // the library's current generation: its matches pass this engine's certainty
                // gate afresh; the person's decisions and the licensed hosts of the page are
                // applied to it as to any verdict.
                let twin = match shown_elsewhere {
                    true => {
                        self.store
                            .verified_twin(page.id, &page.content_hash, &self.identity)
                            .await?
                    }
                    false => None,
                };
                match twin {
                    Some(twin) => {
                        verdict.matches = twin
                            .matches
                            .into_iter()
                            .map(|m| NewMatch {
                                auto_confirm: self.gate.passes_recorded(&m),
                                ..m
                            })
                            .collect();
                        verdict.basis = Some(twin.basis);
                        verdict.mirror_of = Some(twin.page_id);
                    }
                    None => verdict.matched = true,
                }
            }
            verdicts.push(verdict);
        }
        if verdicts.is_empty() {
            return Ok(outcomes.into_iter().flatten().collect());
        }

        let texts: Vec<String> = verdicts
            .iter()
            .filter(|v| v.matched)
            .map(|v| v.page.text.clone())
            .collect();
        if !texts.is_empty() {
            let (state, found) = self.match_texts_at(texts).await?;
            let basis = VerdictBasis {
                generation: state.generation,
                matcher: self.identity.clone(),
            };
            for (verdict, (found, sketch)) in verdicts.iter_mut().filter(|v| v.matched).zip(found) {
                verdict.matches = found.iter().map(|m| to_new_match(m, &self.gate)).collect();
                verdict.basis = Some(basis.clone());
                verdict.sketch = Some(sketch);
            }
        }
        let matched = verdicts.iter().filter(|v| v.matched).count() as u64;
        self.matched_pages.fetch_add(matched, Relaxed);
        let mirrored = verdicts.iter().filter(|v| v.mirror_of.is_some()).count() as u64;
        self.mirrored_pages.fetch_add(mirrored, Relaxed);

        for verdict in verdicts.iter().filter(|v| v.alias_of.is_some()) {
            // Before the empty verdict: a run stopped between the two leaves the page due
            // (its verdict not recorded), never matchless and unlisted. A page stops being an
            // alias only when its text, or its page's, changes or its page is removed, which
            // the store records where that happens.
            self.store
                .set_page_alias(verdict.page.id, verdict.alias_of)
                .await?;
        }
        let at = Utc::now();
        let recorded = self.record_verdicts(&verdicts, at).await?;
        self.save_sketches(&verdicts).await;
        for (verdict, recorded) in verdicts.into_iter().zip(recorded) {
            outcomes[verdict.slot] = Some(PageOutcome::Recorded {
                url: verdict.page.url,
                matches: verdict.matches.len(),
                verdict: recorded,
                alias_of: verdict.alias_of,
                mirror_of: verdict.mirror_of,
            });
        }
        Ok(outcomes.into_iter().flatten().collect())
    }

    /// Records `verdicts` in one transaction, or one at a time when that fails (see
    /// [`MatchEngine::match_pages`]).
    async fn record_verdicts(
        &self,
        verdicts: &[PendingVerdict],
        at: chrono::DateTime<Utc>,
    ) -> Result<Vec<VerdictOutcome>> {
        let records: Vec<PageVerdict> = verdicts
            .iter()
            .map(|v| PageVerdict {
                page_id: v.page.id,
                content_hash: &v.page.content_hash,
                matches: &v.matches,
                basis: v.basis.as_ref(),
                at,
            })
            .collect();
        let failed = match self.store.record_page_verdicts(&records).await {
            Ok(outcomes) => return Ok(outcomes),
            Err(error) => error,
        };
        if records.len() == 1 {
            return Err::<Vec<VerdictOutcome>, _>(failed)
                .with_context(|| format!("cannot record matches of {}", verdicts[0].page.url));
        }
        tracing::debug!(error = %failed, "recording the batch's verdicts one at a time");
        let mut outcomes = Vec::with_capacity(records.len());
        for (record, verdict) in records.iter().zip(verdicts) {
            match self
                .store
                .record_page_verdicts(std::slice::from_ref(record))
                .await
            {
                Ok(outcome) => outcomes.extend(outcome),
                Err(error) => {
                    // The pages recorded before it keep their verdicts: they get their
                    // sketches too, or the next library change would match them again.
                    self.save_sketches(&verdicts[..outcomes.len()]).await;
                    return Err::<Vec<VerdictOutcome>, _>(error)
                        .with_context(|| format!("cannot record matches of {}", verdict.page.url));
                }
            }
        }
        Ok(outcomes)
    }

    /// Stores the sketch of each page whose verdict was recorded, in one transaction. A page
    /// deleted since is skipped. A failure is only logged: the verdicts stand (failing the job
    /// now would match the pages again for nothing), and a page left without a current sketch
    /// is marked due at the next library change (`Store::mark_unsketched_pages_unmatched`), so
    /// no copy of a new work is missed.
    async fn save_sketches(&self, verdicts: &[PendingVerdict]) {
        let sketcher = self.sketcher.clone();
        // Pages the matcher read come with their sketch; the others (aliases, mirrors) are
        // sketched here.
        let pages: Vec<(Id, String, Result<Vec<u32>, String>)> = verdicts
            .iter()
            .map(|v| {
                let sample = v.sketch.clone().ok_or_else(|| v.page.text.clone());
                (v.page.id, v.page.content_hash.clone(), sample)
            })
            .collect();
        let sketched = tokio::task::spawn_blocking(move || {
            pages
                .into_iter()
                .map(|(page_id, content_hash, sample)| PageSketch {
                    page_id,
                    content_hash,
                    version: SKETCH_VERSION,
                    sample: sample.unwrap_or_else(|text| sketcher.page_sketch(&text)),
                })
                .collect::<Vec<_>>()
        })
        .await;
        let sketches = match sketched {
            Ok(sketches) => sketches,
            Err(error) => {
                tracing::warn!(%error, "cannot sketch {} matched pages", verdicts.len());
                return;
            }
        };
        if let Err(error) = self.store.save_page_sketches(&sketches).await {
            tracing::warn!(%error, "cannot store the sketches of {} matched pages", sketches.len());
        }
    }

    /// Matches the next page whose current text has not been matched against the current
    /// library (new or changed pages; every page after the library changed) and records its
    /// verdict atomically, so an interrupted run resumes where it stopped. `None` when no page
    /// is left. A page that changed since it was listed is skipped (`Changed`): its newer text
    /// is matched by a later run, or by the match job its crawl enqueued.
    pub async fn match_next_due(&self, cursor: &mut DueCursor) -> Result<Option<PageOutcome>> {
        if cursor.pending.is_empty() && cursor.outcomes.is_empty() {
            let due = self.store.due_page_ids(cursor.after, DUE_BATCH).await?;
            let Some(&(last, _)) = due.last() else {
                return Ok(None);
            };
            cursor.after = last;
            cursor.pending = due.into();
        }
        if cursor.outcomes.is_empty() {
            let take = cursor.pending.len().min(PAGES_PER_BATCH);
            let batch: Vec<(Id, String)> = cursor.pending.drain(..take).collect();
            if batch.is_empty() {
                return Ok(None);
            }
            cursor.outcomes = self.match_pages(&batch).await?.into();
        }
        Ok(cursor.outcomes.pop_front())
    }
}

impl MatchEngine {
    /// Matches every page due now ([`MatchEngine::match_next_due`]'s pages) in batches
    /// ([`MatchEngine::match_pages`]), `concurrency` batches at a time, and yields each outcome
    /// as it is recorded (in page order within a batch, not across batches).
    ///
    /// Verification is CPU work: one batch at a time leaves every core but one idle, so
    /// `match` runs several at once ([`default_concurrency`]). Concurrent batches are
    /// independent: each batch's verdicts are recorded atomically, whether a page is an alias
    /// depends only on the stored texts, and a mirror takes a verdict already recorded or is
    /// matched (two mirrors matched at once are both matched). Dropping the stream stops after
    /// the batches recorded so far (the other pages stay due). A batch that fails ends the
    /// stream with its error.
    pub fn match_due(
        &self,
        concurrency: usize,
    ) -> impl futures_util::Stream<Item = Result<PageOutcome>> + '_ {
        use futures_util::{StreamExt, TryStreamExt, stream};
        let concurrency = concurrency.max(1);
        let batches = stream::try_unfold(Some(0), move |after| async move {
            let Some(after) = after else {
                return Ok(None);
            };
            let due = self.store.due_page_ids(after, DUE_BATCH).await?;
            let next = match due.last() {
                Some(&(last, _)) if due.len() == DUE_BATCH as usize => Some(last),
                _ => None,
            };
            let size = batch_size(due.len(), concurrency);
            let batches: Vec<Result<Vec<(Id, String)>>> =
                due.chunks(size).map(|batch| Ok(batch.to_vec())).collect();
            Ok::<_, ServiceError>((!batches.is_empty()).then(|| (stream::iter(batches), next)))
        });
        batches
            .try_flatten()
            .map(move |batch| async move { self.match_pages(&batch?).await })
            .buffer_unordered(concurrency)
            .map_ok(|outcomes| stream::iter(outcomes.into_iter().map(Ok)))
            .try_flatten()
    }
}

/// Pages (batches, for [`MatchEngine::match_due`]) matched at once by default: two per core. A
/// page's turn is part database work (reading it, the alias lookup, recording the verdict and
/// the sketch) and part verification on a core; with one page per core the cores wait while the
/// database works. Measured in docs/benchmarks.md: on two cores, two pages at once ran 1.24×
/// as fast as one, four pages 1.52×.
pub fn default_concurrency() -> usize {
    2 * std::thread::available_parallelism().map_or(1, usize::from)
}

/// A page of a batch whose verdict is to be recorded ([`MatchEngine::match_pages`]).
struct PendingVerdict {
    /// Its place in the batch.
    slot: usize,
    page: Page,
    alias_of: Option<Id>,
    matches: Vec<NewMatch>,
    basis: Option<VerdictBasis>,
    /// The page whose verdict it reused.
    mirror_of: Option<Id>,
    /// Whether the matcher gives its verdict (neither an alias nor a mirror).
    matched: bool,
    /// The page's sketch, when the matcher made it as it read the page.
    sketch: Option<Vec<u32>>,
}

/// Most pages matched as one batch ([`MatchEngine::match_pages`]): enough that a batch's
/// statements, lookup and commit cost little per page, few enough that a batch's
/// transaction holds SQLite's write lock for milliseconds, not seconds.
pub const PAGES_PER_BATCH: usize = 32;

/// The size of the batches `due` pages are matched in, `concurrency` batches at a time: at
/// most [`PAGES_PER_BATCH`], and small enough that every batch slot has pages (ten due pages
/// on four slots are matched three at a time, not ten on one core).
fn batch_size(due: usize, concurrency: usize) -> usize {
    due.div_ceil(concurrency.max(1)).clamp(1, PAGES_PER_BATCH)
}

/// Where a pass over the due pages stands (see [`MatchEngine::match_next_due`]).
#[derive(Debug, Default)]
pub struct DueCursor {
    after: Id,
    pending: VecDeque<(Id, String)>,
    /// Outcomes of the batch matched last, not yet returned.
    outcomes: VecDeque<PageOutcome>,
}

/// The store record of a verdict on one work, with the certainty gate's judgement.
pub fn to_new_match(found: &WorkMatch, gate: &ReviewGate) -> NewMatch {
    NewMatch {
        auto_confirm: gate.passes(found),
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

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;
    use crate::library::{CatalogEntry, LibraryFile, add_works, withdraw_work};
    use crate::textfile::TextFile;

    /// Distinct random text of `chars` common CJK characters with punctuation.
    fn text(seed: u64, chars: usize) -> String {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut out = String::new();
        for i in 0..chars {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.push(char::from_u32(0x4E00 + (state % 0x1400) as u32).unwrap());
            if i % 20 == 19 {
                out.push('，');
            }
        }
        out
    }

    fn file(id: &str, text: &str) -> LibraryFile {
        LibraryFile {
            path: format!("{id}.txt").into(),
            external_id: id.to_owned(),
            file: TextFile {
                text: text.to_owned(),
                encoding: "UTF-8",
                title: None,
                chapters: Vec::new(),
            },
            catalog: CatalogEntry::default(),
        }
    }

    async fn found(engine: &MatchEngine, text: &str) -> Vec<Id> {
        engine
            .match_text(text)
            .await
            .unwrap()
            .iter()
            .map(|m| m.work_id)
            .collect()
    }

    /// A fresh SQLite store in `dir`.
    async fn sqlite_store(dir: &tempfile::TempDir) -> Arc<dyn Store> {
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        Arc::new(store)
    }

    #[tokio::test]
    async fn small_library_changes_are_applied_to_the_loaded_matcher_without_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let config = copytrace_fingerprint::FingerprintConfig::default();
        let texts: Vec<String> = (0..12).map(|n| text(n + 1, 600)).collect();
        let first: Vec<LibraryFile> = (0..10).map(|n| file(&format!("w{n}"), &texts[n])).collect();
        let added = add_works(store.as_ref(), "h", &first, None, &config)
            .await
            .unwrap();
        let ids: Vec<Id> = added.works.iter().map(|w| w.work_id).collect();

        let mut engine =
            MatchEngine::new(store.clone(), IndexSource::Memory, MatchConfig::default());
        engine.recheck = Duration::ZERO;
        assert_eq!(found(&engine, &texts[0]).await, [ids[0]]);
        assert!(found(&engine, &texts[10]).await.is_empty());

        // One work added: found at once, without loading the library again.
        let later = add_works(
            store.as_ref(),
            "h",
            &[file("w10", &texts[10])],
            None,
            &config,
        )
        .await
        .unwrap();
        assert_eq!(found(&engine, &texts[10]).await, [later.works[0].work_id]);
        // One withdrawn: never found again.
        withdraw_work(store.as_ref(), ids[0], None).await.unwrap();
        assert!(found(&engine, &texts[0]).await.is_empty());
        assert_eq!(engine.work_count().await.unwrap(), 10);
        assert_eq!(
            engine.full_loads.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "both changes were applied in place"
        );
    }

    /// Stores a page at `url` showing `text`; returns its id and content hash.
    async fn stored_page(store: &dyn Store, url: &str, text: &str) -> (Id, String) {
        let hash = crate::library::content_hash(text);
        let page = copytrace_store::NewPage {
            url: url.to_owned(),
            title: None,
            text: text.to_owned(),
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: Utc::now(),
            etag: None,
            last_modified: None,
            capture: None,
        };
        (store.upsert_page(&page).await.unwrap().id, hash)
    }

    /// What a page's verdict says, page aside: work, scores, method, evidence and review.
    async fn verdict_of(store: &dyn Store, page: Id) -> Vec<String> {
        let filter = copytrace_store::MatchFilter::default();
        let mut found: Vec<String> = (store.list_matches(&filter).await.unwrap())
            .into_iter()
            .filter(|m| m.page_id == page)
            .map(|m| {
                format!(
                    "{} {} {} {} {} {} {:?} {:?}",
                    m.work_id,
                    m.score,
                    m.coverage,
                    m.containment,
                    m.copied_chars,
                    m.method,
                    m.evidence,
                    m.review
                )
            })
            .collect();
        found.sort();
        found
    }

    /// The works a page's verdict names.
    async fn works_of(store: &dyn Store, page: Id) -> Vec<Id> {
        let filter = copytrace_store::MatchFilter::default();
        let mut works: Vec<Id> = (store.list_matches(&filter).await.unwrap())
            .into_iter()
            .filter(|m| m.page_id == page)
            .map(|m| m.work_id)
            .collect();
        works.sort();
        works
    }

    #[tokio::test]
    async fn a_mirror_reuses_the_verdict_of_its_text_until_the_library_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let config = copytrace_fingerprint::FingerprintConfig::default();
        let texts: Vec<String> = (0..10).map(|n| text(n + 1, 600)).collect();
        // The library holds the first chapter (and unrelated works), not yet the second.
        let first: Vec<LibraryFile> = (0..9)
            .filter(|&n| n != 1)
            .map(|n| file(&format!("w{n}"), &texts[n]))
            .collect();
        let added = add_works(store.as_ref(), "h", &first, None, &config)
            .await
            .unwrap();
        let chapter_one = added.works[0].work_id;
        // Pirate sites show both chapters on one page, each site the same text.
        let copy = format!("{}。{}", texts[0], texts[1]);

        let mut engine =
            MatchEngine::new(store.clone(), IndexSource::Memory, MatchConfig::default());
        engine.recheck = Duration::ZERO;
        let page = |n: usize| format!("https://pirate{n}.example/book/1.html");
        let mut pages = Vec::new();
        for n in 0..6 {
            pages.push(stored_page(store.as_ref(), &page(n), &copy).await);
        }
        let outcome = |n: usize| {
            let (id, hash) = pages[n].clone();
            let engine = &engine;
            async move { engine.match_page(id, &hash).await.unwrap() }
        };
        let mirror_of = |outcome: PageOutcome| match outcome {
            PageOutcome::Recorded {
                mirror_of,
                alias_of: None,
                ..
            } => mirror_of,
            other => panic!("not a verdict of its own: {other:?}"),
        };
        let counts = |matched, mirrored| VerdictCounts { matched, mirrored };

        // The first page is matched; the second, on another site, reuses its verdict.
        assert_eq!(mirror_of(outcome(0).await), None);
        assert_eq!(engine.verdict_counts(), counts(1, 0));
        assert_eq!(works_of(store.as_ref(), pages[0].0).await, [chapter_one]);
        assert_eq!(mirror_of(outcome(1).await), Some(pages[0].0));
        assert_eq!(
            engine.verdict_counts(),
            counts(1, 1),
            "the matcher was not run"
        );
        assert_eq!(
            verdict_of(store.as_ref(), pages[1].0).await,
            verdict_of(store.as_ref(), pages[0].0).await
        );

        // The second chapter joins the library: the verdicts found before lack it, so the
        // third page is matched, and finds both chapters.
        let later = add_works(store.as_ref(), "h", &[file("w1", &texts[1])], None, &config)
            .await
            .unwrap();
        let chapter_two = later.works[0].work_id;
        assert_eq!(mirror_of(outcome(2).await), None);
        assert_eq!(engine.verdict_counts(), counts(2, 1));
        let both = [chapter_one.min(chapter_two), chapter_one.max(chapter_two)];
        assert_eq!(works_of(store.as_ref(), pages[2].0).await, both);

        // The first chapter is withdrawn: no verdict that names it is reused.
        withdraw_work(store.as_ref(), chapter_one, None)
            .await
            .unwrap();
        assert_eq!(mirror_of(outcome(3).await), None);
        assert_eq!(engine.verdict_counts(), counts(3, 1));
        assert_eq!(works_of(store.as_ref(), pages[3].0).await, [chapter_two]);

        // The verdict found against the library as it is now is reused again.
        assert_eq!(mirror_of(outcome(4).await), Some(pages[3].0));
        assert_eq!(engine.verdict_counts(), counts(3, 2));
        assert_eq!(
            verdict_of(store.as_ref(), pages[4].0).await,
            verdict_of(store.as_ref(), pages[3].0).await
        );

        // A matcher with other settings does not take this one's verdicts.
        let strict = MatchConfig {
            min_copied_chars: 200,
            ..MatchConfig::default()
        };
        let other = MatchEngine::new(store.clone(), IndexSource::Memory, strict);
        let (id, hash) = pages[5].clone();
        let outcome = other.match_page(id, &hash).await.unwrap();
        assert_eq!(mirror_of(outcome), None);
        assert_eq!(other.verdict_counts(), counts(1, 0));
    }

    #[tokio::test]
    async fn a_batch_of_pages_gets_the_outcome_each_page_gets_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let config = copytrace_fingerprint::FingerprintConfig::default();
        let texts: Vec<String> = (0..3).map(|n| text(n + 40, 600)).collect();
        let files: Vec<LibraryFile> = (0..2).map(|n| file(&format!("w{n}"), &texts[n])).collect();
        let added = add_works(store.as_ref(), "h", &files, None, &config)
            .await
            .unwrap();
        let ids: Vec<Id> = added.works.iter().map(|w| w.work_id).collect();
        let engine = MatchEngine::new(store.clone(), IndexSource::Memory, MatchConfig::default());

        let copy_text = format!("目录 上一章\n{}", texts[0]);
        let (copy, copy_hash) = stored_page(store.as_ref(), "http://a.example/1", &copy_text).await;
        let (alias, alias_hash) =
            stored_page(store.as_ref(), "http://a.example/1?from=home", &copy_text).await;
        let (other, other_hash) =
            stored_page(store.as_ref(), "http://a.example/2", &texts[1]).await;
        let (clean, clean_hash) =
            stored_page(store.as_ref(), "http://a.example/3", &texts[2]).await;
        let (mirror, mirror_hash) =
            stored_page(store.as_ref(), "http://b.example/1", &copy_text).await;
        let due = vec![
            (copy, copy_hash.clone()),
            (alias, alias_hash),
            (other + 1000, other_hash.clone()),
            (other, other_hash),
            (clean, "an older text".to_owned()),
            (clean, clean_hash.clone()),
            (mirror, mirror_hash),
        ];
        let outcomes = engine.match_pages(&due).await.unwrap();
        let summary: Vec<String> = outcomes
            .iter()
            .map(|outcome| match outcome {
                PageOutcome::Recorded {
                    matches,
                    alias_of,
                    mirror_of,
                    ..
                } => format!("{matches} {alias_of:?} {mirror_of:?}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "1 None None".to_owned(),
                format!("0 Some({copy}) None"),
                "Gone".to_owned(),
                "1 None None".to_owned(),
                "Changed".to_owned(),
                "0 None None".to_owned(),
                // Its twin had no verdict yet when the batch began: matched on its own.
                "1 None None".to_owned(),
            ]
        );
        assert_eq!(works_of(store.as_ref(), copy).await, [ids[0]]);
        assert_eq!(works_of(store.as_ref(), other).await, [ids[1]]);
        assert_eq!(works_of(store.as_ref(), mirror).await, [ids[0]]);
        assert!(works_of(store.as_ref(), alias).await.is_empty());
        assert_eq!(
            verdict_of(store.as_ref(), mirror).await,
            verdict_of(store.as_ref(), copy).await
        );
        // Every page recorded has a sketch of its text.
        let sketched: Vec<Id> = store
            .page_sketches(0, 100, SKETCH_VERSION)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.page_id)
            .collect();
        assert_eq!(sketched, [copy, alias, other, clean, mirror]);

        // Done twice, the batch matches nothing again; a later mirror reuses the verdict.
        let again = engine.match_pages(&due[..2]).await.unwrap();
        assert_eq!(
            again,
            [PageOutcome::AlreadyMatched, PageOutcome::AlreadyMatched]
        );
        let (late, late_hash) = stored_page(store.as_ref(), "http://c.example/1", &copy_text).await;
        let outcome = engine.match_page(late, &late_hash).await.unwrap();
        assert!(
            matches!(
                outcome,
                PageOutcome::Recorded {
                    mirror_of: Some(_),
                    matches: 1,
                    ..
                }
            ),
            "{outcome:?}"
        );
        assert_eq!(works_of(store.as_ref(), late).await, [ids[0]]);
    }

    #[test]
    fn batches_are_split_so_every_slot_has_pages() {
        assert_eq!(batch_size(0, 4), 1);
        assert_eq!(batch_size(10, 4), 3);
        assert_eq!(batch_size(500, 4), PAGES_PER_BATCH);
        assert_eq!(batch_size(7, 0), 7);
    }
}
