//! A page read once per match: its canonical text and every reading of it that candidate
//! generation and verification need, so neither stage normalizes, reads or looks the page up
//! again (the romanized reading's own lookup, for its boilerplate mask, reuses the page's:
//! see [`Indexes::look_up_reading`]).

use copytrace_fingerprint::Normalized;

use crate::candidates::{Indexes, KeyLookup};
use crate::config::MatchConfig;
use crate::index::{Index, IndexError};
use crate::laundering;
use crate::postings;
use crate::romanized::{RomanizedPage, read_romanized};

/// A page's canonical text with its readings and its k-gram lookup.
pub(crate) struct PageReading {
    /// The canonical page.
    pub(crate) normalized: Normalized,
    /// The syllable id of every canonical character (its default reading), when the lookup
    /// was made with them: read once, they are also the page's pinyin seeds.
    pub(crate) syllables: Option<Vec<u32>>,
    /// The page read with its romanized runs as syllables, when the configuration asks for it
    /// and the page has such runs.
    pub(crate) romanized: Option<RomanizedPage>,
    /// The page read sentence by sentence through the thesaurus, when laundered copies are
    /// looked for.
    pub(crate) sense: Option<laundering::SenseText>,
    /// The page's k-grams (with its romanized reading's syllables, if any) and what the
    /// postings hold for them: the `kgram` source and the page's boilerplate mask.
    pub(crate) lookup: KeyLookup,
}

/// A page read up to its k-grams, before they are looked up: what a batch of pages needs to
/// look every page's k-grams up at once ([`crate::Matcher::match_texts`]).
pub(crate) struct PageKeys {
    normalized: Normalized,
    syllables: Option<Vec<u32>>,
    romanized: Option<RomanizedPage>,
    sense: Option<laundering::SenseText>,
    keys: Vec<postings::Key>,
}

impl PageKeys {
    /// Reads `normalized`, the normalization of `text`, and selects its k-grams: characters,
    /// and syllables (the romanized reading's, or else the default readings).
    pub(crate) fn select(config: &MatchConfig, text: &str, normalized: Normalized) -> Self {
        let romanized = romanized_reading(config, &normalized, text);
        let sense = sense_reading(config, text, &normalized);
        let postings = &config.candidates.postings;
        let syllables = (romanized.is_none() && postings.syllables)
            .then(|| copytrace_fingerprint::pinyin::syllable_ids(&normalized.chars));
        let keys = postings::text_keys(
            &normalized.chars,
            romanized
                .as_ref()
                .map(|r| &r.syllables[..])
                .or(syllables.as_deref())
                .unwrap_or(&[]),
            postings,
        );
        PageKeys {
            normalized,
            syllables,
            romanized,
            sense,
            keys,
        }
    }

    /// The distinct hashes of the page's k-grams, sorted.
    pub(crate) fn hashes(&self) -> Vec<u64> {
        postings::distinct_hashes(&self.keys)
    }

    /// Looks the k-grams up, taking those `looked_up` holds from it (a lookup of a batch of
    /// pages' hashes made just before): the page read.
    pub(crate) fn look_up<I: Index>(
        self,
        config: &MatchConfig,
        indexes: &Indexes<I>,
        looked_up: Option<&KeyLookup>,
    ) -> Result<PageReading, IndexError> {
        let lookup = indexes.look_up_keys(&config.candidates.postings, self.keys, looked_up)?;
        Ok(PageReading {
            normalized: self.normalized,
            syllables: self.syllables,
            romanized: self.romanized,
            sense: self.sense,
            lookup,
        })
    }
}

impl PageReading {
    /// Reads `normalized`, the normalization of `text`, and looks it up in `indexes`' postings.
    pub(crate) fn read<I: Index>(
        config: &MatchConfig,
        indexes: &Indexes<I>,
        text: &str,
        normalized: Normalized,
    ) -> Result<Self, IndexError> {
        PageKeys::select(config, text, normalized).look_up(config, indexes, None)
    }
    /// The syllable id of every canonical character for the page's pinyin seeds (empty
    /// without pinyin), read for the lookup or now.
    pub(crate) fn seed_syllables(&mut self, config: &MatchConfig) -> Vec<u32> {
        if !config.align.pinyin {
            return Vec::new();
        }
        self.syllables
            .take()
            .unwrap_or_else(|| copytrace_fingerprint::pinyin::syllable_ids(&self.normalized.chars))
    }

    /// The boilerplate mask of the page as written, from its lookup. A page with romanized runs
    /// was looked up with that reading's syllables, whose positions are not the written
    /// page's: only its character k-grams mark it then.
    pub(crate) fn common_mask(&self, config: &MatchConfig) -> Vec<bool> {
        let len = self.normalized.chars.len();
        match self.romanized {
            None => self.lookup.common_mask(config, len),
            Some(_) => self.lookup.chars_common_mask(config, len),
        }
    }
}

/// The page read sentence by sentence through the thesaurus, when laundered copies are
/// looked for (the sense index proposes the works it is aligned with, so without that
/// source there is nothing to read it for).
fn sense_reading(
    config: &MatchConfig,
    text: &str,
    page: &Normalized,
) -> Option<laundering::SenseText> {
    if !config.sense_enabled() {
        return None;
    }
    let sentences = laundering::sentence_starts(text, page);
    let thesaurus = copytrace_fingerprint::thesaurus::Thesaurus::builtin();
    Some(laundering::SenseText::new(
        &page.chars,
        &sentences,
        thesaurus,
    ))
}

/// The page read with its romanized runs as syllables, when the configuration asks for it
/// and the page has such runs.
fn romanized_reading(config: &MatchConfig, page: &Normalized, text: &str) -> Option<RomanizedPage> {
    if !(config.romanized && config.align.pinyin) {
        return None;
    }
    read_romanized(page, text)
}
