//! The library's upkeep: the works' texts as verification needs them ([`Library`]), and adding
//! and removing works, which files them in the candidate indexes, keeps their texts and
//! forgets what verification cached about the library.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet};

use copytrace_fingerprint::{Normalized, Window, fingerprint_normalized, normalize};

use crate::Matcher;
use crate::align::{AlignConfig, WorkSeeds};
use crate::candidates::{CandidateKeys, sense_keys};
use crate::index::{Index, IndexError, WorkId};
use crate::laundering;
use crate::postings;

/// Where a matcher reads the texts of the works it does not keep in memory (see
/// [`Matcher::with_texts_on_demand`]): the store, in production.
pub trait WorkTexts: Send + Sync {
    /// The current texts of `ids`; a work that is no longer in the library is left out.
    fn texts(&self, ids: &[WorkId]) -> Result<Vec<(WorkId, String)>, IndexError>;
}

/// A library work prepared for verification.
#[derive(Debug, Clone)]
pub(crate) struct PreparedWork {
    pub(crate) normalized: Normalized,
    pub(crate) seeds: WorkSeeds,
    /// Where its sentences begin (see [`laundering::sentence_starts`]): the original text is
    /// not kept, and laundered copies are aligned sentence by sentence.
    pub(crate) sentences: Vec<u32>,
}

impl PreparedWork {
    /// A work's text prepared for verification.
    fn new(text: &str, align: &AlignConfig) -> Self {
        let normalized = normalize(text);
        let sentences = laundering::sentence_starts(text, &normalized);
        let seeds = WorkSeeds::new(&normalized.chars, align);
        PreparedWork {
            normalized,
            seeds,
            sentences,
        }
    }
}

/// Weighs a prepared work by the bytes it holds, for the on-demand cache's budget.
#[derive(Debug, Clone, Copy)]
struct PreparedWeight;

impl quick_cache::Weighter<WorkId, Arc<PreparedWork>> for PreparedWeight {
    fn weight(&self, _: &WorkId, work: &Arc<PreparedWork>) -> u64 {
        // Characters, byte offsets and two seed hashes per character, sentence starts.
        let chars = work.normalized.chars.len() as u64;
        (chars * 28 + work.sentences.len() as u64 * 4).max(1)
    }
}

/// The works of a matcher that reads texts on demand.
struct OnDemand {
    /// Every work of the library (known to the shared indexes): what a candidate may be.
    /// Behind a lock so that works added to the shared library are learnt by a matcher in use
    /// ([`Matcher::learn_shared_works`]).
    known: std::sync::RwLock<HashSet<WorkId>>,
    texts: Box<dyn WorkTexts>,
    prepared: quick_cache::sync::Cache<WorkId, Arc<PreparedWork>, PreparedWeight>,
}

/// The works a matcher knows, with their texts prepared for verification: all kept in memory,
/// or (texts on demand) only their ids, each text read when a page proposes the work and kept
/// prepared within a memory budget.
pub(crate) struct Library {
    works: HashMap<WorkId, Arc<PreparedWork>>,
    /// Set by [`Library::texts_on_demand`]: works are then not kept in `works`.
    on_demand: Option<OnDemand>,
}

impl Library {
    /// No work, texts kept in memory.
    pub(crate) fn new() -> Self {
        Library {
            works: HashMap::new(),
            on_demand: None,
        }
    }

    /// Reads texts from `texts` from now on, keeping at most `budget_bytes` of prepared works.
    pub(crate) fn texts_on_demand(&mut self, texts: Box<dyn WorkTexts>, budget_bytes: u64) {
        // Estimated items: prepared works of about 10 KB (quick_cache sizes its table by them).
        let estimated = (budget_bytes / (10_000 * 28)).clamp(16, 1 << 20) as usize;
        self.on_demand = Some(OnDemand {
            known: std::sync::RwLock::default(),
            texts,
            prepared: quick_cache::sync::Cache::with_weighter(
                estimated,
                budget_bytes.max(1),
                PreparedWeight,
            ),
        });
    }

    /// Whether texts are read on demand.
    pub(crate) fn on_demand(&self) -> bool {
        self.on_demand.is_some()
    }

    /// Number of works known.
    pub(crate) fn len(&self) -> usize {
        match &self.on_demand {
            Some(on_demand) => on_demand.known().len(),
            None => self.works.len(),
        }
    }

    /// Whether `work_id` is a work of the library.
    pub(crate) fn knows(&self, work_id: WorkId) -> bool {
        match &self.on_demand {
            Some(on_demand) => on_demand.known().contains(&work_id),
            None => self.works.contains_key(&work_id),
        }
    }

    /// The prepared works of `ids` (those the library knows), read and prepared first where
    /// texts are on demand and the cache does not hold them: one read for all that are missing.
    pub(crate) fn prepared(
        &self,
        ids: impl IntoIterator<Item = WorkId>,
        align: &AlignConfig,
    ) -> Result<HashMap<WorkId, Arc<PreparedWork>>, IndexError> {
        let mut found = HashMap::new();
        let Some(on_demand) = &self.on_demand else {
            for id in ids {
                if let Some(work) = self.works.get(&id) {
                    found.insert(id, work.clone());
                }
            }
            return Ok(found);
        };
        let mut missing = Vec::new();
        for id in ids {
            match on_demand.prepared.get(&id) {
                Some(work) => {
                    found.insert(id, work);
                }
                None if on_demand.known().contains(&id) => missing.push(id),
                None => {}
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        for (id, text) in on_demand.texts.texts(&missing)? {
            let work = Arc::new(PreparedWork::new(&text, align));
            on_demand.prepared.insert(id, work.clone());
            found.insert(id, work);
        }
        Ok(found)
    }

    /// Keeps a work: its prepared text, or where texts are on demand only its id (the text is
    /// read again when a page proposes the work).
    fn insert(&mut self, work_id: WorkId, work: PreparedWork) {
        match &mut self.on_demand {
            Some(on_demand) => {
                on_demand.known_mut().insert(work_id);
            }
            None => {
                self.works.insert(work_id, Arc::new(work));
            }
        }
    }

    /// Forgets a work and returns it as it was added. Where texts are on demand, its text is
    /// read once more (it must still be the text the work was added with); the work is
    /// forgotten even when the text is no longer there, and `None` returned.
    fn remove(
        &mut self,
        work_id: WorkId,
        align: &AlignConfig,
    ) -> Result<Option<Arc<PreparedWork>>, IndexError> {
        match &self.on_demand {
            Some(on_demand) if on_demand.known().contains(&work_id) => {
                let work = self.prepared([work_id], align)?.remove(&work_id);
                if let Some(on_demand) = &mut self.on_demand {
                    on_demand.known_mut().remove(&work_id);
                    on_demand.prepared.remove(&work_id);
                }
                Ok(work)
            }
            Some(_) => Ok(None),
            None => Ok(self.works.remove(&work_id)),
        }
    }

    /// Forgets a work's id and prepared text, reading nothing; whether it was known.
    fn forget(&mut self, work_id: WorkId) -> bool {
        match &mut self.on_demand {
            Some(on_demand) if on_demand.known().contains(&work_id) => {
                on_demand.known_mut().remove(&work_id);
                on_demand.prepared.remove(&work_id);
                true
            }
            _ => false,
        }
    }

    /// Remembers a work by id alone, whatever was prepared for it before; refused unless texts
    /// are on demand.
    fn insert_id(&mut self, work_id: WorkId) -> bool {
        self.learn_ids(&[work_id])
    }

    /// Remembers works by id alone, through a shared reference (the matcher may be in use);
    /// refused unless texts are on demand.
    fn learn_ids(&self, work_ids: &[WorkId]) -> bool {
        let Some(on_demand) = &self.on_demand else {
            return false;
        };
        let mut known = on_demand
            .known
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for &work_id in work_ids {
            known.insert(work_id);
            on_demand.prepared.remove(&work_id);
        }
        true
    }
}

impl OnDemand {
    fn known(&self) -> std::sync::RwLockReadGuard<'_, HashSet<WorkId>> {
        self.known
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn known_mut(&mut self) -> &mut HashSet<WorkId> {
        self.known
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<I: Index> Matcher<I> {
    /// Adds a work whose windows and statistics are already in the shared indexes and
    /// statistics: only its id is kept, its text is read when a page proposes it. Refused
    /// unless texts are on demand and the statistics shared.
    pub fn add_shared_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        if self.indexes.shared_statistics && self.library.insert_id(work_id) {
            self.library_changed();
            return Ok(());
        }
        Err(IndexError::Backend(
            "a work can be added by id only to a matcher with texts on demand and shared \
             library statistics"
                .to_owned(),
        ))
    }

    /// [`Matcher::add_shared_work`] for works added to the shared library while this matcher
    /// is in use (matching pages on other threads): a worker learns them without loading the
    /// library again. What verification cached about the library is forgotten, as for any
    /// change.
    pub fn learn_shared_works(&self, work_ids: &[WorkId]) -> Result<(), IndexError> {
        if !self.indexes.shared_statistics {
            return Err(IndexError::Backend(
                "works can be learnt by id only by a matcher with shared library statistics"
                    .to_owned(),
            ));
        }
        // First, so that a failure leaves the works unlearnt: what they filed is looked up
        // from now on.
        self.indexes.refresh_shared_postings()?;
        if self.library.learn_ids(work_ids) {
            self.caches.forget();
            return Ok(());
        }
        Err(IndexError::Backend(
            "works can be learnt by id only by a matcher with texts on demand".to_owned(),
        ))
    }

    /// Adds (or replaces) a work, fingerprinting its text; returns the window fingerprints so
    /// the caller can store them.
    pub fn add_work(
        &mut self,
        work_id: WorkId,
        text: &str,
    ) -> Result<Vec<copytrace_fingerprint::WindowFingerprint>, IndexError> {
        let normalized = normalize(text);
        let windows = fingerprint_normalized(&normalized, &self.config.fingerprint);
        let ranges: Vec<(u32, Window)> = windows.iter().map(|w| (w.ordinal, w.window)).collect();
        let simhashes: Vec<(u32, u64)> = windows.iter().map(|w| (w.ordinal, w.simhash)).collect();
        let sentences = laundering::sentence_starts(text, &normalized);
        self.insert(work_id, normalized, sentences, &simhashes, &ranges)?;
        Ok(windows)
    }

    /// Adds (or replaces) a work whose window SimHashes were stored earlier, without
    /// recomputing them. The text is still needed to verify candidates; the window MinHash
    /// signatures and DNA codes, which are not stored, are recomputed from it (cheaply: a
    /// fraction of what fingerprinting the windows costs).
    pub fn add_fingerprinted_work(
        &mut self,
        work_id: WorkId,
        text: &str,
        windows: impl IntoIterator<Item = (u32, u64)>,
    ) -> Result<(), IndexError> {
        let normalized = normalize(text);
        let ranges = self.window_ranges(&normalized);
        let simhashes: Vec<(u32, u64)> = windows.into_iter().collect();
        let sentences = laundering::sentence_starts(text, &normalized);
        self.insert(work_id, normalized, sentences, &simhashes, &ranges)
    }

    /// The content-anchored windows of a text, numbered like its stored SimHash windows.
    fn window_ranges(&self, normalized: &Normalized) -> Vec<(u32, Window)> {
        copytrace_fingerprint::windows(&normalized.chars, &self.config.fingerprint.window)
            .into_iter()
            .enumerate()
            .map(|(ordinal, window)| (ordinal as u32, window))
            .collect()
    }

    /// Adds a work to every candidate index this matcher owns and keeps its text for
    /// verification.
    fn insert(
        &mut self,
        work_id: WorkId,
        normalized: Normalized,
        sentences: Vec<u32>,
        simhashes: &[(u32, u64)],
        windows: &[(u32, Window)],
    ) -> Result<(), IndexError> {
        self.remove_work(work_id)?;
        self.indexes.insert_work(
            &self.config,
            work_id,
            &normalized,
            &sentences,
            simhashes,
            windows,
        )?;
        let seeds = WorkSeeds::new(&normalized.chars, &self.config.align);
        self.library_changed();
        self.library.insert(
            work_id,
            PreparedWork {
                normalized,
                seeds,
                sentences,
            },
        );
        Ok(())
    }

    /// Forgets a work. Where texts are on demand, the work's text is read once more to uncount
    /// its seeds: it must still be the text the work was added with.
    pub fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        if self.indexes.shared_statistics {
            // Nothing was counted here: forgetting the id is all.
            if self.library.forget(work_id) {
                self.library_changed();
            }
            return Ok(());
        }
        if let Some(work) = self.library.remove(work_id, &self.config.align)? {
            self.library_changed();
            self.indexes
                .remove_work(&self.config, work_id, &work.normalized, &work.sentences)?;
        }
        Ok(())
    }

    /// The keys `text` is filed under in the MinHash and DNA indexes, exactly as
    /// [`Matcher::add_work`] files it: what is written to shared indexes for the work.
    pub fn candidate_keys(&self, text: &str) -> CandidateKeys {
        let normalized = normalize(text);
        let windows = self.window_ranges(&normalized);
        self.indexes
            .keys_of(&self.config.candidates, &normalized, &windows)
    }

    /// The k-gram postings keys of `text`, exactly as [`Matcher::add_work`] files them: what is
    /// written to (or, to remove the work, dropped from) shared postings for the work.
    pub fn posting_keys(&self, text: &str) -> Vec<postings::Key> {
        let normalized = normalize(text);
        postings::work_keys(&normalized.chars, &self.config.candidates.postings)
    }

    /// The sense keys of `text`, exactly as [`Matcher::add_work`] files them: what is added to
    /// a shared library's sense index for the work (empty when laundered copies are not
    /// looked for).
    pub fn sense_keys_of(&self, text: &str) -> Vec<u32> {
        if !self.config.sense_enabled() {
            return Vec::new();
        }
        let normalized = normalize(text);
        let sentences = laundering::sentence_starts(text, &normalized);
        sense_keys(&normalized.chars, &sentences)
    }

    /// Forgets what verification cached about the library: boilerplate masks depend on what
    /// every work holds.
    pub(crate) fn library_changed(&mut self) {
        self.caches.clear();
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::{WORK_A, matcher};

    #[test]
    fn removing_a_work_stops_it_matching() {
        let mut m = matcher();
        m.remove_work(1).unwrap();
        assert!(m.match_text(WORK_A).unwrap().is_empty());
        assert_eq!(m.work_count(), 1);
    }
}
