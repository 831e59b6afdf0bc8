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

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use copytrace_fingerprint::FINGERPRINT_VERSION;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::sketch::{SKETCH_VERSION, Sketcher};
use copytrace_matcher::{IndexError, MatchConfig, Matcher, WorkMatch};
use copytrace_store::{
    EvidencePassage, Id, LibraryState, NewMatch, Page, PageSketch, Store, StoreError, VerdictBasis,
    VerdictOutcome,
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
    fn match_text(&self, text: &str) -> Result<Vec<WorkMatch>, IndexError> {
        match self {
            LoadedMatcher::Memory(m) => m.match_text(text),
            LoadedMatcher::Redis(m) => m.match_text(text),
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
        Ok(self.match_text_at(text).await?.1)
    }

    /// [`MatchEngine::match_text`], with the library state the matcher reflected: its
    /// generation is never later than the works the matcher held.
    async fn match_text_at(&self, text: &str) -> Result<(LibraryState, Vec<WorkMatch>)> {
        let text: Arc<str> = text.into();
        let (mut state, mut matcher) = self.current().await?;
        for _ in 0..MATCH_ATTEMPTS {
            match self.match_checked(state, matcher, text.clone()).await? {
                Some(found) => return Ok((state, found)),
                // The shared index has works filed after the matcher last looked at the
                // library (a `library add` that just ended; the pages it marks may be this
                // one): the matcher learns them, and the page is matched again, since a
                // candidate of a work it did not know was dropped.
                None => (state, matcher) = self.current_checked(true).await?,
            }
        }
        Err(ServiceError::unavailable(format!(
            "the library kept growing while a page was matched ({MATCH_ATTEMPTS} times): \
             retry"
        )))
    }

    /// Matches `text`, then checks that the shared index (read for its candidates) is still
    /// one the matcher may use: one read of the index's generation per page, after its
    /// lookups, so a flush or rebuild during them is seen. `None` when the index has works the
    /// matcher does not know: the verdict may lack them.
    async fn match_checked(
        &self,
        state: LibraryState,
        matcher: Arc<LoadedMatcher>,
        text: Arc<str>,
    ) -> Result<Option<Vec<WorkMatch>>> {
        let loaded = matcher.clone();
        let (found, ahead) = tokio::task::spawn_blocking(move || {
            let found = matcher.match_text(&text);
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
        let page = match self.store.get_page(page_id).await {
            Ok(page) => page,
            Err(StoreError::NotFound(_)) => return Ok(PageOutcome::Gone),
            Err(error) => return Err(error.into()),
        };
        if page.content_hash != content_hash {
            return Ok(PageOutcome::Changed);
        }
        if page.matched_hash.as_deref() == Some(content_hash) {
            return Ok(PageOutcome::AlreadyMatched);
        }
        self.record(&page).await
    }

    /// Matches a page's current text and records the verdict, then the page's sketch, so
    /// works added later find it without reading its text (see [`crate::library`]).
    ///
    /// A page showing the same text as an earlier page of its site is an alias of it
    /// ([`crate::aliases`]): it records an empty verdict (clearing any matches it had) and
    /// points at that page, so reports and statistics count the page once. Any other page
    /// showing the text of a page verified already reuses that verdict (see the module docs).
    async fn record(&self, page: &Page) -> Result<PageOutcome> {
        let alias_of = aliases::primary_of(self.store.as_ref(), page).await?;
        let (matches, basis, mirror_of) = match alias_of {
            Some(_) => (Vec::new(), None, None),
            None => self.verdict_on(page).await?,
        };
        if alias_of.is_some() {
            // Before the empty verdict: a run stopped between the two leaves the page due
            // (its verdict not recorded), never matchless and unlisted. A page stops being an
            // alias only when its text, or its page's, changes or its page is removed, which
            // the store records where that happens.
            self.store.set_page_alias(page.id, alias_of).await?;
        }
        let verdict = self
            .store
            .record_page_verdict(
                page.id,
                &page.content_hash,
                &matches,
                basis.as_ref(),
                Utc::now(),
            )
            .await
            .with_context(|| format!("cannot record matches of {}", page.url))?;
        let sketch = PageSketch {
            page_id: page.id,
            content_hash: page.content_hash.clone(),
            version: SKETCH_VERSION,
            sample: self.sketcher.page_sketch(&page.text),
        };
        match self.store.save_page_sketch(&sketch).await {
            // Deleted since it was matched: nothing to sketch.
            Ok(()) | Err(StoreError::NotFound(_)) => {}
            // The verdict stands: failing the job now would match the page again for nothing.
            // A page left without a current sketch is marked due at the next library change
            // (`Store::mark_unsketched_pages_unmatched`), so no copy of a new work is missed.
            Err(error) => {
                tracing::warn!(page = page.id, %error, "cannot store the sketch of {}", page.url);
            }
        }
        Ok(PageOutcome::Recorded {
            url: page.url.clone(),
            matches: matches.len(),
            verdict,
            alias_of,
            mirror_of,
        })
    }

    /// The verdict on a page that is no alias, with what it was found against: that of
    /// another page showing the same text, verified by this matcher at the library's current
    /// generation (its page is returned too), else the matcher's. A reused verdict's matches
    /// pass this engine's certainty gate afresh; the person's decisions and the licensed hosts
    /// of the page are applied to it as to any verdict.
    async fn verdict_on(
        &self,
        page: &Page,
    ) -> Result<(Vec<NewMatch>, Option<VerdictBasis>, Option<Id>)> {
        use std::sync::atomic::Ordering::Relaxed;
        let twin = self
            .store
            .verified_twin(page.id, &page.content_hash, &self.identity)
            .await?;
        if let Some(twin) = twin {
            self.mirrored_pages.fetch_add(1, Relaxed);
            let matches = twin
                .matches
                .into_iter()
                .map(|m| NewMatch {
                    auto_confirm: self.gate.passes_recorded(&m),
                    ..m
                })
                .collect();
            return Ok((matches, Some(twin.basis), Some(twin.page_id)));
        }
        let (state, found) = self.match_text_at(&page.text).await?;
        self.matched_pages.fetch_add(1, Relaxed);
        let basis = VerdictBasis {
            generation: state.generation,
            matcher: self.identity.clone(),
        };
        let matches = found.iter().map(|m| to_new_match(m, &self.gate)).collect();
        Ok((matches, Some(basis), None))
    }

    /// Matches the next page whose current text has not been matched against the current
    /// library (new or changed pages; every page after the library changed) and records its
    /// verdict atomically, so an interrupted run resumes where it stopped. `None` when no page
    /// is left. A page that changed since it was listed is skipped (`Changed`): its newer text
    /// is matched by a later run, or by the match job its crawl enqueued.
    pub async fn match_next_due(&self, cursor: &mut DueCursor) -> Result<Option<PageOutcome>> {
        if cursor.pending.is_empty() {
            let due = self.store.due_page_ids(cursor.after, DUE_BATCH).await?;
            let Some(&(last, _)) = due.last() else {
                return Ok(None);
            };
            cursor.after = last;
            cursor.pending = due.into();
        }
        let Some((page_id, hash)) = cursor.pending.pop_front() else {
            return Ok(None);
        };
        Ok(Some(self.match_page(page_id, &hash).await?))
    }
}

impl MatchEngine {
    /// Matches every page due now ([`MatchEngine::match_next_due`]'s pages), `concurrency`
    /// pages at a time, and yields each outcome as it is recorded (not in page order).
    ///
    /// Verification is CPU work: one page at a time leaves every core but one idle, so `match`
    /// runs several pages at once ([`default_concurrency`]). Concurrent pages are independent:
    /// each verdict is recorded atomically and on its own, whether a page is an alias depends
    /// only on the stored texts, and a mirror takes a verdict already recorded or is matched
    /// (two mirrors matched at once are both matched). Dropping the stream stops after the
    /// pages recorded so far (the others stay due). A page that fails ends the stream with its
    /// error.
    pub fn match_due(
        &self,
        concurrency: usize,
    ) -> impl futures_util::Stream<Item = Result<PageOutcome>> + '_ {
        use futures_util::{StreamExt, TryStreamExt, stream};
        let batches = stream::try_unfold(Some(0), move |after| async move {
            let Some(after) = after else {
                return Ok(None);
            };
            let due = self.store.due_page_ids(after, DUE_BATCH).await?;
            let next = match due.last() {
                Some(&(last, _)) if due.len() == DUE_BATCH as usize => Some(last),
                _ => None,
            };
            let batch: Vec<Result<(Id, String)>> = due.into_iter().map(Ok).collect();
            Ok::<_, ServiceError>((!batch.is_empty()).then(|| (stream::iter(batch), next)))
        });
        batches
            .try_flatten()
            .map(move |due| async move {
                let (page_id, hash) = due?;
                self.match_page(page_id, &hash).await
            })
            .buffer_unordered(concurrency.max(1))
    }
}

/// Pages matched at once by default: two per core (see [`MatchEngine::match_due`]). A page's
/// turn is part database work (reading it, the alias lookup, recording the verdict and the
/// sketch) and part verification on a core; with one page per core the cores wait while the
/// database works. Measured in docs/benchmarks.md: on two cores, two pages at once ran 1.24×
/// as fast as one, four pages 1.52×.
pub fn default_concurrency() -> usize {
    2 * std::thread::available_parallelism().map_or(1, usize::from)
}

/// Where a pass over the due pages stands (see [`MatchEngine::match_next_due`]).
#[derive(Debug, Default)]
pub struct DueCursor {
    after: Id,
    pending: VecDeque<(Id, String)>,
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
}
