//! Matching pages against the library and recording the verdicts: the one place where a page
//! text meets the matcher.
//!
//! A [`MatchEngine`] holds the matcher for the library as it is now, over an in-memory index
//! built from the store or over the shared Redis index, and reloads it when the library changes
//! (it looks at most every two seconds). The CLI's `match`, match jobs, dedup runs and removal
//! checks all match through it, so they cannot disagree on a verdict.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use copytrace_index_redis::RedisIndex;
use copytrace_matcher::sketch::{SKETCH_VERSION, Sketcher};
use copytrace_matcher::{IndexError, MatchConfig, Matcher, WorkMatch};
use copytrace_store::{
    EvidencePassage, Id, NewMatch, Page, PageSketch, Store, StoreError, VerdictOutcome,
};
use tokio::sync::Mutex;

use crate::error::{Context, Result, ServiceError};
use crate::index::{IndexSource, check_redis_index, open_redis_index};
use crate::library::{active_works, library_digest, refresh_outdated_works, stored_windows};

/// Due pages read per batch when matching every due page.
const DUE_BATCH: u32 = 500;

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

    /// Fails unless the shared index is still the one this matcher was loaded for.
    fn check_index(&self, library: &str) -> Result<()> {
        match self {
            LoadedMatcher::Memory(_) => Ok(()),
            LoadedMatcher::Redis(matcher) => check_redis_index(matcher.index(), library),
        }
    }
}

/// The matcher in use and the library state it reflects.
struct Loaded {
    library: String,
    matcher: Arc<LoadedMatcher>,
    checked: Instant,
}

/// Matches texts against the library as it is now, and records pages' verdicts.
pub struct MatchEngine {
    store: Arc<dyn Store>,
    source: IndexSource,
    config: MatchConfig,
    /// Makes the sketch stored with each matched page.
    sketcher: Sketcher,
    loaded: Mutex<Option<Loaded>>,
    /// How often the library is checked for changes.
    recheck: Duration,
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
}

impl MatchSummary {
    /// Counts one page's outcome; `true` when a verdict was recorded.
    pub fn add(&mut self, outcome: &PageOutcome) -> bool {
        let PageOutcome::Recorded {
            matches, verdict, ..
        } = outcome
        else {
            return false;
        };
        let matches = *matches;
        self.pages += 1;
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
            store,
            source,
            sketcher: Sketcher::new(&config),
            config,
            loaded: Mutex::new(None),
            recheck: Duration::from_secs(2),
        }
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

    /// Works in the library the matcher holds.
    pub async fn work_count(&self) -> Result<usize> {
        Ok(self.current().await?.1.work_count())
    }

    /// The matcher for the library as it is now.
    async fn current(&self) -> Result<(String, Arc<LoadedMatcher>)> {
        let mut loaded = self.loaded.lock().await;
        if let Some(l) = loaded.as_mut()
            && l.checked.elapsed() < self.recheck
        {
            return Ok((l.library.clone(), l.matcher.clone()));
        }
        let library = library_digest(self.store.as_ref()).await?;
        if let Some(l) = loaded.as_mut()
            && l.library == library
        {
            l.checked = Instant::now();
            return Ok((l.library.clone(), l.matcher.clone()));
        }
        tracing::info!("loading the library for matching");
        let matcher = Arc::new(self.load(&library).await?);
        *loaded = Some(Loaded {
            library: library.clone(),
            matcher: matcher.clone(),
            checked: Instant::now(),
        });
        Ok((library, matcher))
    }

    /// A matcher holding every work of the store. In memory, works fingerprinted by an older
    /// algorithm version are fingerprinted again first. Over Redis, the index is used as
    /// `index rebuild` left it, and refused unless it was built from the library as it is now;
    /// the store provides only the works' texts, for verification.
    async fn load(&self, library: &str) -> Result<LoadedMatcher> {
        let store = self.store.as_ref();
        match &self.source {
            IndexSource::Memory => {
                refresh_outdated_works(store, &self.config.fingerprint).await?;
                let mut segments = stored_windows(store).await?;
                let mut matcher = Matcher::new(self.config);
                for summary in active_works(store).await? {
                    let work = store.get_work(summary.id).await?;
                    let windows = segments.remove(&summary.id).unwrap_or_default();
                    matcher.add_fingerprinted_work(summary.id, &work.content, windows)?;
                }
                Ok(LoadedMatcher::Memory(matcher))
            }
            IndexSource::Redis { url, prefix } => {
                let index = open_redis_index(url, prefix)?;
                check_redis_index(&index, library)?;
                let mut matcher = Matcher::with_index(self.config, index);
                for summary in active_works(store).await? {
                    let work = store.get_work(summary.id).await?;
                    matcher.add_indexed_work(summary.id, &work.content)?;
                }
                Ok(LoadedMatcher::Redis(matcher))
            }
        }
    }

    /// Matches a text against the library as it is now. Fails, rather than answering "no
    /// match", when the shared index is not the library's (flushed, stale, being rebuilt).
    pub async fn match_text(&self, text: &str) -> Result<Vec<WorkMatch>> {
        let (library, matcher) = self.current().await?;
        let text = text.to_owned();
        tokio::task::spawn_blocking(move || -> Result<Vec<WorkMatch>> {
            matcher.check_index(&library)?;
            let found = matcher.match_text(&text)?;
            // Checked again: the index must not have been flushed while we read it.
            matcher.check_index(&library)?;
            Ok(found)
        })
        .await
        .map_err(|e| ServiceError::unavailable(format!("the matching task panicked: {e}")))?
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
    async fn record(&self, page: &Page) -> Result<PageOutcome> {
        let found = self.match_text(&page.text).await?;
        let matches: Vec<NewMatch> = found.iter().map(to_new_match).collect();
        let verdict = self
            .store
            .record_page_matches(page.id, &page.content_hash, &matches, Utc::now())
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
            Err(error) => {
                return Err(ServiceError::from(error))
                    .with_context(|| format!("cannot store the sketch of {}", page.url));
            }
        }
        Ok(PageOutcome::Recorded {
            url: page.url.clone(),
            matches: matches.len(),
            verdict,
        })
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

/// Where a pass over the due pages stands (see [`MatchEngine::match_next_due`]).
#[derive(Debug, Default)]
pub struct DueCursor {
    after: Id,
    pending: VecDeque<(Id, String)>,
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
