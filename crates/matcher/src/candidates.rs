//! Candidate generation: the indexes of library windows and keys, filed as works are added
//! and queried with a page's reading ([`PageReading`]).
//!
//! Every source answers the same question, "which works hold something of this page?", each
//! blind to different disguises (see the crate documentation). A work any enabled source finds
//! becomes a [`Candidate`]; the best `max_candidates` go on to verification. The k-gram
//! postings are filed whatever the sources, since they also tell library boilerplate
//! ([`crate::postings::common_mask`]) to verification.

use foldhash::{HashMap, HashMapExt, HashSet};

use copytrace_fingerprint::{
    DnaConfig, MinHasher, Normalized, ReferenceDistribution, Window, dna_codes,
    dna_codes_of_initials, fingerprint_normalized, minhash, shingle_hashes, simhash::ngram_hashes,
};

use crate::config::{CandidateConfig, CandidateMethods, MatchConfig};
use crate::index::{Index, IndexError, SegmentRef, WorkId};
use crate::laundering;
use crate::lsh::MinHashSignature;
use crate::page::PageReading;
use crate::postings::{self, MemoryPostings, PostingConfig, PostingIndex};

/// A work proposed for verification, with what found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The work.
    pub work_id: WorkId,
    /// The sources that found at least one of its windows.
    pub methods: CandidateMethods,
    /// Distinct windows of the work found by SimHash.
    pub simhash_windows: usize,
    /// Distinct windows of the work found by MinHash LSH.
    pub minhash_windows: usize,
    /// Distinct DNA windows of the work found by code.
    pub dna_windows: usize,
    /// Page blocks whose words (or their synonyms) the work holds.
    pub sense_blocks: usize,
    /// Consistent k-gram hits (see [`postings`]).
    pub kgram_hits: usize,
}

impl Candidate {
    fn new(work_id: WorkId) -> Self {
        Candidate {
            work_id,
            methods: CandidateMethods::NONE,
            simhash_windows: 0,
            minhash_windows: 0,
            dna_windows: 0,
            sense_blocks: 0,
            kgram_hits: 0,
        }
    }

    fn windows(&self) -> usize {
        self.simhash_windows
            + self.minhash_windows
            + self.dna_windows
            + self.sense_blocks
            + self.kgram_hits
    }
}

/// Number of windows in each candidate index, to check that adding and removing works keeps
/// them in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSizes {
    /// Windows in the SimHash index.
    pub simhash: usize,
    /// Windows in the MinHash LSH index.
    pub minhash: usize,
    /// DNA windows in the DNA index.
    pub dna: usize,
    /// Keys (synonym groups and characters) in the sense index.
    pub sense: usize,
    /// Postings in the k-gram posting index.
    pub postings: usize,
}

/// The keys a work is filed under in the MinHash and DNA candidate indexes, window by window
/// (`(ordinal, key)`): what a shared index stores for the work. Empty for a source the
/// configuration does not enable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CandidateKeys {
    /// MinHash signature of each content-anchored window.
    pub minhash: Vec<(u32, MinHashSignature)>,
    /// DNA code of each DNA window.
    pub dna: Vec<(u32, u128)>,
}

/// A text's selected k-grams and what the postings hold for them: one lookup, read by the
/// `kgram` candidate source and by the boilerplate mask ([`postings::common_mask`]).
pub(crate) struct KeyLookup {
    keys: Vec<postings::Key>,
    hashes: Vec<u64>,
    found: Vec<Vec<postings::Posting>>,
}

impl KeyLookup {
    /// The boilerplate mask of the text looked up ([`postings::common_mask`]), `len` its
    /// characters.
    pub(crate) fn common_mask(&self, config: &MatchConfig, len: usize) -> Vec<bool> {
        postings::common_mask(
            &self.keys,
            &self.hashes,
            &self.found,
            &config.candidates.postings,
            config.align.common_seed_min_works,
            len,
        )
    }

    /// The boilerplate mask told by the character k-grams alone: for a text looked up with
    /// syllables of another reading, whose positions are not the text's.
    pub(crate) fn chars_common_mask(&self, config: &MatchConfig, len: usize) -> Vec<bool> {
        let keys: Vec<postings::Key> = self
            .keys
            .iter()
            .filter(|k| k.projection == copytrace_fingerprint::winnow::Projection::Chars)
            .copied()
            .collect();
        postings::common_mask(
            &keys,
            &self.hashes,
            &self.found,
            &config.candidates.postings,
            config.align.common_seed_min_works,
            len,
        )
    }
}

/// The candidate indexes of a matcher, and what it needs to compute their keys. The matcher
/// owns them, or reads indexes other processes share and keep (Redis): then it never writes
/// them.
pub(crate) struct Indexes<I: Index> {
    /// Window SimHashes (the `simhash` source).
    pub(crate) simhash: I,
    /// Window MinHash signatures (the `minhash` source).
    minhash: Box<dyn Index<MinHashSignature>>,
    /// Pinyin-initial DNA codes (the `dna` source).
    dna: Box<dyn Index<u128>>,
    /// Winnowed k-gram postings (the `kgram` source).
    postings: Box<dyn PostingIndex>,
    /// Whether `postings` is shared with other processes ([`Indexes::share_postings`]).
    postings_shared: bool,
    /// Whether the SimHash, MinHash and DNA indexes are shared with other processes (Redis):
    /// they are then written by whoever changes the library, never by this matcher.
    pub(crate) shared: bool,
    /// Words and synonyms of every work's sentences (the `sense` source); verification reads
    /// it too, to align laundered copies.
    pub(crate) sense: laundering::SenseIndex,
    /// Whether `sense` is the library's shared one ([`Indexes::share_statistics`]), kept by
    /// whoever changes the library, rather than filed here as works are added.
    pub(crate) shared_statistics: bool,
    hasher: MinHasher,
    reference: ReferenceDistribution,
    /// The work DNA configuration read at every initial, for pages.
    page_dna: DnaConfig,
}

/// `config` with windows starting at every initial. Works are indexed at `config`'s step; a
/// page read at every initial then has, for each work window it copies whole, one window with
/// exactly the same initials, wherever the copy starts on the page.
fn every_initial(config: &DnaConfig) -> DnaConfig {
    let granularity = config.granularity();
    let overlap = 1.0 - 1.0 / granularity as f64;
    DnaConfig::new(granularity, overlap, config.levels()).unwrap_or(*config)
}

impl<I: Index> Indexes<I> {
    /// Empty in-process postings and sense index beside the given window indexes.
    pub(crate) fn new(
        config: &CandidateConfig,
        simhash: I,
        minhash: Box<dyn Index<MinHashSignature>>,
        dna: Box<dyn Index<u128>>,
        shared: bool,
    ) -> Self {
        Indexes {
            simhash,
            minhash,
            dna,
            postings: Box::new(MemoryPostings::new()),
            postings_shared: false,
            shared,
            sense: laundering::SenseIndex::new(),
            shared_statistics: false,
            hasher: MinHasher::new(config.lsh.num_perm, minhash::DEFAULT_SEED),
            reference: ReferenceDistribution::builtin(),
            page_dna: every_initial(&config.dna),
        }
    }

    /// Reads `postings`, which other processes share and keep, instead of its own.
    pub(crate) fn share_postings(&mut self, postings: Box<dyn PostingIndex>) {
        self.postings = postings;
        self.postings_shared = true;
    }

    /// Reads the library's shared sense index, which whoever changes the library keeps.
    pub(crate) fn share_statistics(&mut self, sense: laundering::SenseIndex) {
        self.sense = sense;
        self.shared_statistics = true;
    }

    /// Files a work in every candidate index this matcher owns (none of the window indexes
    /// when they are shared), and in the sense index when laundered copies are looked for.
    pub(crate) fn insert_work(
        &mut self,
        config: &MatchConfig,
        work_id: WorkId,
        normalized: &Normalized,
        sentences: &[u32],
        simhashes: &[(u32, u64)],
        windows: &[(u32, Window)],
    ) -> Result<(), IndexError> {
        if !self.shared {
            if config
                .candidates
                .methods
                .contains(CandidateMethods::SIMHASH)
            {
                self.simhash.insert_work(work_id, simhashes)?;
            }
            let keys = self.keys_of(&config.candidates, normalized, windows);
            self.minhash.insert_work(work_id, &keys.minhash)?;
            self.dna.insert_work(work_id, &keys.dna)?;
            // Filed whatever the candidate sources: they also tell library boilerplate.
            let keys = postings::work_keys(&normalized.chars, &config.candidates.postings);
            self.postings.insert_work(work_id, &keys)?;
        }
        if config.sense_enabled() {
            let keys = sense_keys(&normalized.chars, sentences);
            self.sense.insert_work(work_id, &keys);
        }
        Ok(())
    }

    /// Removes a work from every index [`Indexes::insert_work`] filed it in, given the text
    /// it was filed with.
    pub(crate) fn remove_work(
        &mut self,
        config: &MatchConfig,
        work_id: WorkId,
        normalized: &Normalized,
        sentences: &[u32],
    ) -> Result<(), IndexError> {
        if !self.shared {
            self.simhash.remove_work(work_id)?;
            self.minhash.remove_work(work_id)?;
            self.dna.remove_work(work_id)?;
            // The keys are recomputed from the text: the index keeps no list of them.
            let keys = postings::work_keys(&normalized.chars, &config.candidates.postings);
            self.postings.remove_work(work_id, &keys)?;
        }
        if config.sense_enabled() {
            let keys = sense_keys(&normalized.chars, sentences);
            self.sense.remove_work(work_id, &keys);
        }
        Ok(())
    }

    /// The keys a text is filed under in the MinHash and DNA indexes, `windows` its
    /// content-anchored windows.
    pub(crate) fn keys_of(
        &self,
        config: &CandidateConfig,
        normalized: &Normalized,
        windows: &[(u32, Window)],
    ) -> CandidateKeys {
        let methods = config.methods;
        let mut keys = CandidateKeys::default();
        if methods.contains(CandidateMethods::MINHASH) {
            keys.minhash = windows
                .iter()
                .map(|(ordinal, _)| *ordinal)
                .zip(self.window_signatures(
                    config,
                    &normalized.chars,
                    windows.iter().map(|(_, w)| w),
                ))
                .collect();
        }
        if methods.contains(CandidateMethods::DNA) {
            keys.dna = dna_codes(&normalized.chars, &config.dna, &self.reference)
                .into_iter()
                .enumerate()
                .map(|(ordinal, w)| (ordinal as u32, w.code))
                .collect();
        }
        keys
    }

    /// Windows held by each candidate index.
    pub(crate) fn sizes(&self) -> Result<IndexSizes, IndexError> {
        Ok(IndexSizes {
            simhash: self.simhash.len()?,
            minhash: self.minhash.len()?,
            dna: self.dna.len()?,
            sense: self.sense.len(),
            postings: self.postings.len()?,
        })
    }

    /// MinHash signatures of windows of `chars`. The text's shingle hashes are computed once and
    /// each window signs its slice of them: duplicates do not change a minimum, so this is the
    /// signature of the window's [`shingle_hashes`] set without hashing and sorting each
    /// window's shingles again.
    fn window_signatures<'a>(
        &self,
        config: &CandidateConfig,
        chars: &[char],
        windows: impl IntoIterator<Item = &'a Window>,
    ) -> Vec<MinHashSignature> {
        let k = config.minhash_shingle.max(1);
        let hashes = ngram_hashes(chars, k);
        windows
            .into_iter()
            .map(|w| {
                if w.end - w.start >= k {
                    self.hasher.signature(&hashes[w.start..=w.end - k])
                } else {
                    self.hasher
                        .signature(&shingle_hashes(&chars[w.start..w.end], k))
                }
            })
            .collect()
    }

    /// Looks a text's selected k-grams up in the postings: its characters, and its syllables
    /// (`syllables`, a reading with romanized runs as syllables, or else the characters'
    /// default readings). A hash `looked_up` (another text's lookup, made just before) holds is
    /// not read again: the same hash has the same postings, and a work's lookup at its
    /// verification shares every hash of the passage the page copies.
    pub(crate) fn look_up(
        &self,
        config: &PostingConfig,
        chars: &[char],
        syllables: Option<&[u32]>,
        looked_up: Option<&KeyLookup>,
    ) -> Result<KeyLookup, IndexError> {
        let read;
        let syllables: &[u32] = match syllables {
            Some(syllables) => syllables,
            None if config.syllables => {
                read = copytrace_fingerprint::pinyin::syllable_ids(chars);
                &read
            }
            None => &[],
        };
        let keys = postings::text_keys(chars, syllables, config);
        self.look_up_keys(config, keys, looked_up)
    }

    /// [`Indexes::look_up`] of another reading of a text whose lookup `looked_up` was made
    /// with this reading's syllables (a page with romanized runs is looked up with the
    /// syllables of its romanized reading, which is then looked up for its own boilerplate
    /// mask). The syllable k-grams are `looked_up`'s, and a hash it holds is not looked up
    /// again: only the reading's new character k-grams are, so the postings are read once
    /// per page.
    pub(crate) fn look_up_reading(
        &self,
        config: &PostingConfig,
        chars: &[char],
        looked_up: &KeyLookup,
    ) -> Result<KeyLookup, IndexError> {
        // The keys `look_up(chars, syllables)` selects: characters first, then syllables.
        let chars_only = PostingConfig {
            syllables: false,
            ..*config
        };
        let mut keys = postings::text_keys(chars, &[], &chars_only);
        keys.extend(
            looked_up
                .keys
                .iter()
                .filter(|k| k.projection == copytrace_fingerprint::winnow::Projection::Syllables)
                .copied(),
        );
        self.look_up_keys(config, keys, Some(looked_up))
    }

    /// The postings of `hashes` (sorted, distinct) in one read: a batch of pages' hashes,
    /// from which each page's lookup then takes its own ([`Indexes::look_up_keys`]), so a batch
    /// costs one remote lookup instead of one a page. Holds no keys: it is no text's lookup.
    pub(crate) fn look_up_hashes(
        &self,
        config: &PostingConfig,
        hashes: Vec<u64>,
    ) -> Result<KeyLookup, IndexError> {
        let mut found = Vec::new();
        if !hashes.is_empty() {
            self.readable_postings()?
                .lookup(&hashes, config.common, &mut found)?;
        }
        found.resize_with(hashes.len(), Vec::new);
        Ok(KeyLookup {
            keys: Vec::new(),
            hashes,
            found,
        })
    }

    /// The postings of `keys`' hashes, those `looked_up` holds taken from it.
    pub(crate) fn look_up_keys(
        &self,
        config: &PostingConfig,
        keys: Vec<postings::Key>,
        looked_up: Option<&KeyLookup>,
    ) -> Result<KeyLookup, IndexError> {
        let index = self.readable_postings()?;
        let hashes = postings::distinct_hashes(&keys);
        // Both hash lists are sorted: what `looked_up` holds is found by binary search.
        let held = |hash: &u64| looked_up.and_then(|l| l.hashes.binary_search(hash).ok());
        let missing: Vec<u64> = hashes
            .iter()
            .filter(|h| held(h).is_none())
            .copied()
            .collect();
        let mut fetched = Vec::new();
        if !missing.is_empty() {
            index.lookup(&missing, config.common, &mut fetched)?;
        }
        let mut fetched = fetched.into_iter();
        let found = hashes
            .iter()
            .map(|hash| match (held(hash), looked_up) {
                (Some(i), Some(looked_up)) => looked_up.found[i].clone(),
                _ => fetched.next().unwrap_or_default(),
            })
            .collect();
        Ok(KeyLookup {
            keys,
            hashes,
            found,
        })
    }

    /// Reads again what the shared postings keep in this process, after works were added to
    /// them ([`PostingIndex::refresh`]).
    pub(crate) fn refresh_shared_postings(&self) -> Result<(), IndexError> {
        if self.postings_shared {
            self.postings.refresh()?;
        }
        Ok(())
    }

    fn readable_postings(&self) -> Result<&dyn PostingIndex, IndexError> {
        if self.shared && !self.postings_shared {
            return Err(IndexError::Backend(
                "a matcher over shared indexes needs the shared k-gram postings: they are its \
                 candidates and tell library boilerplate"
                    .to_owned(),
            ));
        }
        Ok(self.postings.as_ref())
    }

    /// The candidate works of a page: every work an enabled source finds and `knows` admits,
    /// at most `max_candidates`, those found by the most sources first, then those with the
    /// most windows found (see [`crate::Matcher::candidates_for`]).
    pub(crate) fn candidates(
        &self,
        config: &MatchConfig,
        page: &PageReading,
        knows: impl Fn(WorkId) -> bool,
    ) -> Result<Vec<Candidate>, IndexError> {
        let methods = config.candidates.methods;
        let normalized = &page.normalized;
        // Distinct (work, window) pairs found by each source.
        let mut found: [HashSet<SegmentRef>; 3] = Default::default();
        let mut hits = Vec::new();
        if methods.contains(CandidateMethods::SIMHASH)
            || methods.contains(CandidateMethods::MINHASH)
        {
            let windows = fingerprint_normalized(normalized, &config.fingerprint);
            if methods.contains(CandidateMethods::SIMHASH) {
                let signatures: Vec<u64> = windows.iter().map(|w| w.simhash).collect();
                self.simhash.query_many(&signatures, &mut hits)?;
                found[0].extend(hits.iter().flatten().map(|hit| hit.segment));
            }
            if methods.contains(CandidateMethods::MINHASH) {
                let signatures = self.window_signatures(
                    &config.candidates,
                    &normalized.chars,
                    windows.iter().map(|w| &w.window),
                );
                self.minhash.query_many(&signatures, &mut hits)?;
                found[1].extend(hits.iter().flatten().map(|hit| hit.segment));
            }
        }
        if methods.contains(CandidateMethods::DNA) {
            let mut codes: Vec<u128> =
                dna_codes(&normalized.chars, &self.page_dna, &self.reference)
                    .into_iter()
                    .map(|w| w.code)
                    .collect();
            if let Some(romanized) = &page.romanized {
                let read =
                    dna_codes_of_initials(&romanized.initials, &self.page_dna, &self.reference);
                codes.extend(read.into_iter().map(|w| w.code));
            }
            // Neighbouring start positions often give the same code: query each once.
            codes.sort_unstable();
            codes.dedup();
            self.dna.query_many(&codes, &mut hits)?;
            found[2].extend(hits.iter().flatten().map(|hit| hit.segment));
        }
        let mut per_work: HashMap<WorkId, Candidate> = HashMap::new();
        if methods.contains(CandidateMethods::KGRAM) {
            let KeyLookup {
                keys,
                hashes,
                found,
            } = &page.lookup;
            let consistent =
                postings::consistent_works(keys, hashes, found, &config.candidates.postings);
            for (work_id, hits) in consistent {
                let candidate = per_work
                    .entry(work_id)
                    .or_insert_with(|| Candidate::new(work_id));
                candidate.methods = candidate.methods | CandidateMethods::KGRAM;
                candidate.kgram_hits = hits;
            }
        }
        let sources = [
            CandidateMethods::SIMHASH,
            CandidateMethods::MINHASH,
            CandidateMethods::DNA,
        ];
        for (segments, method) in found.iter().zip(sources) {
            for segment in segments {
                let candidate = per_work
                    .entry(segment.work_id)
                    .or_insert_with(|| Candidate::new(segment.work_id));
                candidate.methods = candidate.methods | method;
                match method {
                    CandidateMethods::SIMHASH => candidate.simhash_windows += 1,
                    CandidateMethods::MINHASH => candidate.minhash_windows += 1,
                    _ => candidate.dna_windows += 1,
                }
            }
        }
        if let Some(sense) = page.sense.as_ref().filter(|_| config.sense_enabled()) {
            let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
            let found = self
                .sense
                .query(&normalized.chars, sense, thesaurus, &config.laundering);
            for (work_id, blocks) in found {
                let candidate = per_work
                    .entry(work_id)
                    .or_insert_with(|| Candidate::new(work_id));
                candidate.methods = candidate.methods | CandidateMethods::SENSE;
                candidate.sense_blocks = blocks;
            }
        }
        let mut ranked: Vec<Candidate> = per_work
            .into_values()
            // A work removed while a remote index still held its windows is not a candidate.
            .filter(|c| knows(c.work_id))
            .collect();
        ranked.sort_by(|a, b| {
            (b.methods.count(), b.windows())
                .cmp(&(a.methods.count(), a.windows()))
                .then(a.work_id.cmp(&b.work_id))
        });
        ranked.truncate(config.max_candidates);
        Ok(ranked)
    }
}

/// A work's keys in the sense index, `sentences` where its sentences begin.
pub(crate) fn sense_keys(chars: &[char], sentences: &[u32]) -> Vec<u32> {
    let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
    let text = laundering::SenseText::new(chars, sentences, thesaurus);
    laundering::text_keys(chars, &text, thesaurus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimHashIndex;
    use crate::dna_index::DnaIndex;
    use crate::lsh::MinHashLshIndex;
    use copytrace_fingerprint::normalize;

    fn empty_indexes(config: &MatchConfig) -> Indexes<SimHashIndex> {
        let candidates = &config.candidates;
        Indexes::new(
            candidates,
            SimHashIndex::new(config.max_distance),
            Box::new(MinHashLshIndex::new(&candidates.lsh)),
            Box::new(DnaIndex::new(
                candidates.dna.levels(),
                candidates.dna_max_distance,
            )),
            false,
        )
    }

    #[test]
    fn a_romanized_reading_looked_up_from_the_pages_lookup_equals_its_own_lookup() {
        let config = MatchConfig::default();
        let mut indexes = empty_indexes(&config);
        for (id, text) in [(1, crate::tests::WORK_A), (2, crate::tests::WORK_B)] {
            let normalized = normalize(text);
            let sentences = laundering::sentence_starts(text, &normalized);
            indexes
                .insert_work(&config, id, &normalized, &sentences, &[], &[])
                .unwrap();
        }
        // Part of WORK_A with two words spelled in pinyin, and a line of its own.
        let text = "夜色渐深，yushui顺着屋檐滴落下来。少年推开木门，kanjian一个披着蓑衣的陌生人站在院中。\
                    本站域名随时更换，请收藏。";
        let page = PageReading::read(&config, &indexes, text, normalize(text)).unwrap();
        let read = page.romanized.as_ref().expect("a romanized reading");
        let postings = &config.candidates.postings;
        let reused = indexes
            .look_up_reading(postings, &read.normalized.chars, &page.lookup)
            .unwrap();
        let own = indexes
            .look_up(
                postings,
                &read.normalized.chars,
                Some(&read.syllables),
                None,
            )
            .unwrap();
        assert_eq!(reused.keys, own.keys);
        assert_eq!(reused.hashes, own.hashes);
        assert_eq!(reused.found, own.found);
        assert!(own.found.iter().any(|p| !p.is_empty()));
    }

    #[test]
    fn window_signatures_equal_the_signatures_of_each_windows_shingle_set() {
        let config = MatchConfig::default();
        let candidates = &config.candidates;
        let indexes = empty_indexes(&config);
        let chars = normalize(crate::tests::WORK_A).chars;
        let windows = copytrace_fingerprint::windows(&chars, &config.fingerprint.window);
        let mut ranges = windows.clone();
        ranges.push(Window { start: 3, end: 5 });
        let k = candidates.minhash_shingle;
        let expected: Vec<MinHashSignature> = ranges
            .iter()
            .map(|w| {
                indexes
                    .hasher
                    .signature(&shingle_hashes(&chars[w.start..w.end], k))
            })
            .collect();
        assert!(windows.len() > 3);
        assert_eq!(
            indexes.window_signatures(candidates, &chars, &ranges),
            expected
        );
    }
}
