//! Verification of laundered copies (洗稿, 伪原创): a work rewritten word by word with
//! synonyms, clauses swapped within sentences, filler phrases added.
//!
//! Character alignment ([`crate::align`]) needs runs of identical characters; a copy with most
//! of its words replaced has none long enough. What such a copy keeps is its *sentences*: each
//! sentence of the page says what one sentence of the work says, in the work's order, with
//! synonyms in place of the words. So laundered copies are aligned sentence by sentence:
//!
//! 1. Both texts are cut into sentences at the original's sentence punctuation (。！？；…, line
//!    breaks) and each sentence into words through the thesaurus
//!    ([`copytrace_fingerprint::thesaurus`]): a word it knows carries its synonym groups, any
//!    other character is its own token.
//! 2. A page sentence and a work sentence are *paraphrases* when the page sentence's tokens
//!    found in the work sentence (the same characters, or a shared synonym group) carry at least
//!    [`LaunderingConfig::min_sentence_similarity`] of the weight of the heavier of the two.
//!    Order within the sentence does not matter (swapped clauses). Each token weighs by how
//!    rare it is among the work's sentences, so that 的, 了 and 说 cannot make two sentences
//!    alike, and by how rare it is in the library ([`SenseIndex::rarity`]), so that what every
//!    report of a kind says (因病医治无效, 逝世, 享年) weighs less than the names that make a
//!    report this report. Words the work does not have at all (fillers, replacements from
//!    outside the thesaurus) are left out of the page's weight; digits weigh nothing (figures
//!    are facts, not wording).
//! 3. Paraphrased sentence pairs are chained in order on both sides (a sentence or two may be
//!    skipped on either side: an added or dropped sentence), and only chains of at least
//!    [`LaunderingConfig::min_sentences`] pairs count. A single shared sentence, a few
//!    quotations spread through a commentary or a report of the same event, which tells it in
//!    its own order, make no such chain.
//!
//! A chain's runs of adjacent sentences are reported as passages whose sentences count as
//! copied whole, so the usual rules (minimum copied characters, the dense stretch) judge them
//! like any other evidence; a sentence skipped inside a chain because characters already
//! explain it keeps its exact passage between them.

use foldhash::{HashMap, HashMapExt};
use smallvec::SmallVec;

use copytrace_fingerprint::Normalized;
use copytrace_fingerprint::thesaurus::{SenseToken, Thesaurus, is_han};

use crate::align::{AlignedPassage, Run};
use crate::index::WorkId;

/// Parameters of the sentence alignment of laundered copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunderingConfig {
    /// Whether laundered copies are looked for at all.
    pub enabled: bool,
    /// Least weighted share of the heavier sentence found in the other for two sentences to
    /// be paraphrases. 0.75: on the large quality run every laundered class keeps its recall
    /// from 0.6 to 0.8 and loses 30 heavy copies of 350 at 0.9, while at 0.6 one report of
    /// another city's railway news and one paragraph of set political phrases were still
    /// taken for paraphrases.
    pub min_sentence_similarity: f64,
    /// Least number of paraphrased sentences, in order, for a passage.
    pub min_sentences: usize,
    /// Sentences with fewer Han characters take no part: too short to judge.
    pub min_sentence_chars: usize,
    /// Largest step between consecutive pairs of a chain, on either side (1 = adjacent).
    pub max_sentence_step: usize,
    /// The page is looked up in the sense index ([`SenseIndex`]) in blocks of consecutive
    /// sentences with at least this many Han characters.
    pub block_chars: usize,
    /// Least weighted share of a block's words that a work must hold (the same words or
    /// synonyms) to be a candidate, when it holds clearly more than any other work (see
    /// [`SenseIndex`]).
    pub min_block_share: f64,
    /// A work holding this share of a block's words is a candidate whatever other works hold.
    pub sure_block_share: f64,
}

impl Default for LaunderingConfig {
    fn default() -> Self {
        LaunderingConfig {
            enabled: true,
            min_sentence_similarity: 0.75,
            min_sentences: 3,
            min_sentence_chars: 8,
            max_sentence_step: 3,
            block_chars: 300,
            min_block_share: 0.3,
            sure_block_share: 0.6,
        }
    }
}

/// Characters that end a sentence in the original text.
fn ends_sentence(c: char) -> bool {
    matches!(
        c,
        '。' | '！' | '？' | '!' | '?' | '；' | ';' | '…' | '\n' | '\r' | '．'
    )
}

/// Where sentences begin, as indexes into `normalized`'s characters (the first is 0): a
/// sentence ends wherever the original text has sentence punctuation or a line break between
/// two canonical characters.
pub fn sentence_starts(original: &str, normalized: &Normalized) -> Vec<u32> {
    let mut starts = Vec::new();
    if normalized.is_empty() {
        return starts;
    }
    starts.push(0);
    for (i, pair) in normalized.spans.windows(2).enumerate() {
        let (end, next) = (pair[0].1 as usize, pair[1].0 as usize);
        if next > end
            && original
                .get(end..next)
                .is_some_and(|between| between.chars().any(ends_sentence))
        {
            starts.push(i as u32 + 1);
        }
    }
    starts
}

/// A text read sentence by sentence through the thesaurus.
#[derive(Debug, Clone)]
pub struct SenseText {
    tokens: Vec<SenseToken>,
    /// Token range of each sentence.
    sentences: Vec<(u32, u32)>,
}

impl SenseText {
    /// Tokenizes each sentence of `chars` (canonical characters; `starts` from
    /// [`sentence_starts`]) on its own, so no word spans two sentences.
    pub fn new(chars: &[char], starts: &[u32], thesaurus: &Thesaurus) -> SenseText {
        let mut tokens = Vec::with_capacity(chars.len() / 2 + 1);
        let mut sentences = Vec::with_capacity(starts.len());
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).map_or(chars.len(), |&e| e as usize);
            let first = tokens.len() as u32;
            tokens.extend(
                thesaurus
                    .tokens(&chars[start as usize..end])
                    .into_iter()
                    .map(|mut t| {
                        t.start += start;
                        t
                    }),
            );
            sentences.push((first, tokens.len() as u32));
        }
        SenseText { tokens, sentences }
    }

    fn sentence(&self, s: usize) -> &[SenseToken] {
        let (a, b) = self.sentences[s];
        &self.tokens[a as usize..b as usize]
    }

    /// Canonical character range of sentence `s`.
    fn char_range(&self, s: usize) -> (usize, usize) {
        let tokens = self.sentence(s);
        match (tokens.first(), tokens.last()) {
            (Some(first), Some(last)) => (first.start as usize, last.end()),
            _ => (0, 0),
        }
    }
}

/// Keys a token is found under: its synonym groups, or its character when the thesaurus does
/// not know it. Only Han text has keys: a Latin letter or a digit says nothing on its own, and
/// English text is left to character alignment (digits are figures, not wording).
fn keys<'t>(
    thesaurus: &'t Thesaurus,
    chars: &[char],
    token: &SenseToken,
    buffer: &'t mut [u32; 1],
) -> &'t [u32] {
    let groups = thesaurus.groups(token);
    if !groups.is_empty() {
        return groups;
    }
    let c = chars[token.start as usize];
    if !is_han(c) {
        return &[];
    }
    buffer[0] = 0x8000_0000 | c as u32;
    &buffer[..]
}

/// Han characters of a sentence: its length as far as paraphrase goes.
fn han_chars(chars: &[char], text: &SenseText, s: usize) -> usize {
    let (a, b) = text.char_range(s);
    chars[a..b].iter().filter(|c| is_han(**c)).count()
}

/// The work side of the sentence alignment: in which sentences each key occurs.
#[derive(Debug)]
struct WorkKeys {
    postings: HashMap<u32, Vec<u32>>,
    /// Weight of each work sentence (sum of its tokens' weights).
    sentence_weight: Vec<f64>,
    sentences: usize,
}

/// How much a token found in `df` of `sentences` sentences says: rare words say more.
fn weight(df: usize, sentences: usize) -> f64 {
    ((sentences as f64 + 1.0) / (df as f64 + 0.5)).ln().max(0.0)
}

impl WorkKeys {
    fn new(
        chars: &[char],
        text: &SenseText,
        thesaurus: &Thesaurus,
        library: &SenseIndex,
    ) -> WorkKeys {
        let sentences = text.sentences.len();
        let mut postings: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut buffer = [0u32; 1];
        for s in 0..sentences {
            for token in text.sentence(s) {
                for &key in keys(thesaurus, chars, token, &mut buffer) {
                    let list = postings.entry(key).or_default();
                    if list.last() != Some(&(s as u32)) {
                        list.push(s as u32);
                    }
                }
            }
        }
        let mut work = WorkKeys {
            postings,
            sentence_weight: vec![0.0; sentences],
            sentences,
        };
        let mut hits = Hits::new(sentences);
        for s in 0..sentences {
            let mut total = 0.0;
            for token in text.sentence(s) {
                if let Some(df) = work.df(thesaurus, chars, token, &mut hits) {
                    let rarity = library.rarity(keys(thesaurus, chars, token, &mut buffer));
                    total += weight(df, sentences) * rarity;
                }
            }
            work.sentence_weight[s] = total;
        }
        work
    }

    /// In how many work sentences a token of the same sense as `token` occurs (`None` when
    /// it has no key): the length of its one list, or the size of the union of its lists.
    fn df(
        &self,
        thesaurus: &Thesaurus,
        chars: &[char],
        token: &SenseToken,
        hits: &mut Hits,
    ) -> Option<usize> {
        let mut buffer = [0u32; 1];
        match keys(thesaurus, chars, token, &mut buffer) {
            [] => None,
            [key] => Some(self.postings.get(key).map_or(0, Vec::len)),
            _ => {
                self.hits(thesaurus, chars, token, hits);
                Some(hits.len())
            }
        }
    }

    /// The work sentences holding a token of the same sense as `token` (of a text whose
    /// characters are `chars`), each once, in no particular order, into `hits`; `false` when
    /// the token has no key.
    fn hits(
        &self,
        thesaurus: &Thesaurus,
        chars: &[char],
        token: &SenseToken,
        hits: &mut Hits,
    ) -> bool {
        hits.clear();
        let mut buffer = [0u32; 1];
        let keys = keys(thesaurus, chars, token, &mut buffer);
        if keys.is_empty() {
            return false;
        }
        for key in keys {
            if let Some(list) = self.postings.get(key) {
                if keys.len() == 1 {
                    hits.list.extend(list);
                } else {
                    list.iter().for_each(|&s| hits.insert(s));
                }
            }
        }
        true
    }
}

/// A set of sentence numbers, cleared in constant time: the union of a token's postings is
/// collected for every token of every candidate, and sorting to deduplicate was a third of
/// the matching time.
struct Hits {
    list: Vec<u32>,
    /// `seen[s] == round` when `s` is in the set.
    seen: Vec<u32>,
    round: u32,
}

impl Hits {
    fn new(sentences: usize) -> Hits {
        Hits {
            list: Vec::new(),
            seen: vec![0; sentences],
            round: 1,
        }
    }

    fn clear(&mut self) {
        self.list.clear();
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.seen.fill(0);
            self.round = 1;
        }
    }

    fn insert(&mut self, s: u32) {
        if self.seen[s as usize] != self.round {
            self.seen[s as usize] = self.round;
            self.list.push(s);
        }
    }

    fn len(&self) -> usize {
        self.list.len()
    }
}

/// How much more of a block the leading work must hold than the next one: a laundered copy's
/// work stands out, while an unrelated page's best works hold about as much of it as each
/// other.
const BLOCK_LEAD: f64 = 1.2;

/// Most works one block proposes (more only when they hold exactly as much of it as the last
/// one proposed: copies of one text registered as several works). A block's laundered copy is
/// the work holding most of it; the other works past the sure share are chance, and a larger
/// library holds more of them. A bound, not the cure: on `copytrace-bench scale`'s pages it
/// alone left the candidates a page as they were (9.15 at 1,000 works, 25.6 at 10,000), which
/// were ties on a word or two ([`MIN_BLOCK_WORDS`]).
const MAX_BLOCK_PROPOSALS: usize = 2;

/// Fewest looked-up words of a block a work must hold to be proposed for it. A block whose
/// weight rests on a word or two (the rest too common to look up) gives every work holding
/// them the whole share, tied: on `copytrace-bench scale`'s pages this proposed 9.2 works a
/// page at 1,000 works and 25.7 at 10,000, three pages in four copying nothing. A laundered
/// copy's work holds dozens of a block's words.
const MIN_BLOCK_WORDS: usize = 8;

/// Every key of a text's tokens, sorted, each once: what the sense index holds for a work.
pub fn text_keys(chars: &[char], text: &SenseText, thesaurus: &Thesaurus) -> Vec<u32> {
    let mut buffer = [0u32; 1];
    let mut out: Vec<u32> = Vec::new();
    for token in &text.tokens {
        out.extend(keys(thesaurus, chars, token, &mut buffer));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Candidate source for laundered copies: which works hold each key (synonym group or Han
/// character).
///
/// A laundered copy shares few character n-grams with its work, so the window indexes miss
/// it; but nearly every word of it is the work's word or a synonym of it. A page is looked up
/// in blocks of a few hundred characters, each word weighing by how rare its keys are in the
/// library, and a work is a candidate for a block when it holds
/// [`LaunderingConfig::sure_block_share`] of its weight, or
/// [`LaunderingConfig::min_block_share`] and 1.2 times what the next work holds. Keys found in
/// more than an eighth of the works (and at least eight), or in more than
/// [`SENSE_LISTED_MAX_WORKS`], are not looked up: they weigh little and their lists are long.
///
/// Keys are synonym groups and Han characters, a set the thesaurus bounds; with the cap on the
/// lists looked up, an index that holds only those lists and the other keys' counts
/// ([`SenseIndex::from_parts`], what a worker sharing the library reads) stays bounded whatever
/// the library's size.
#[derive(Debug, Default, Clone)]
pub struct SenseIndex {
    /// Key → the works holding it, as slots of `slot_works`: a query scores works in an
    /// array indexed by slot, where a hash map of work ids was a tenth of a page's matching.
    postings: HashMap<u32, Vec<u32>>,
    /// The work of each slot, in the order works were first seen.
    slot_works: Vec<WorkId>,
    /// The slot of each work.
    slots: HashMap<WorkId, u32>,
    /// Number of works holding each key whose list is not held (more than
    /// [`SENSE_LISTED_MAX_WORKS`]; only in an index built by [`SenseIndex::from_parts`]).
    counts: HashMap<u32, u32>,
    works: usize,
}

/// Longest list of works the sense index looks up for a key, whatever the library's size. The
/// eighth-of-the-library rule alone lets lists grow with the library, and with them a worker's
/// memory and each page's cost; below 4,104 works the cap changes nothing.
pub const SENSE_LISTED_MAX_WORKS: usize = 512;

impl SenseIndex {
    /// An empty index.
    pub fn new() -> Self {
        SenseIndex::default()
    }

    /// An index read from a shared copy: the number of works, the lists of the keys held by at
    /// most [`SENSE_LISTED_MAX_WORKS`] works, and the number of works holding each other key.
    /// It answers [`SenseIndex::query`] and [`SenseIndex::rarity`] exactly as the full index
    /// does, but cannot be changed (works are added to the shared copy, and read again).
    pub fn from_parts(
        works: usize,
        listed: impl IntoIterator<Item = (u32, Vec<WorkId>)>,
        counts: impl IntoIterator<Item = (u32, u32)>,
    ) -> Self {
        let mut index = SenseIndex {
            counts: counts.into_iter().collect(),
            works,
            ..SenseIndex::default()
        };
        for (key, list) in listed {
            let list = list.into_iter().map(|work| index.slot_of(work)).collect();
            index.postings.insert(key, list);
        }
        index
    }

    /// The slot of a work, given one when first seen.
    fn slot_of(&mut self, work_id: WorkId) -> u32 {
        *self.slots.entry(work_id).or_insert_with(|| {
            self.slot_works.push(work_id);
            (self.slot_works.len() - 1) as u32
        })
    }

    /// The works holding `key`, when its list is held.
    pub fn works_with(&self, key: u32) -> Option<impl Iterator<Item = WorkId> + '_> {
        let list = self.postings.get(&key)?;
        Some(list.iter().map(|&slot| self.slot_works[slot as usize]))
    }

    /// Number of works holding `key`, if any does.
    fn works_holding(&self, key: u32) -> Option<usize> {
        match self.postings.get(&key) {
            Some(list) => Some(list.len()),
            None => self.counts.get(&key).map(|n| *n as usize),
        }
    }

    /// Adds a work's keys (from [`text_keys`]).
    pub fn insert_work(&mut self, work_id: WorkId, keys: &[u32]) {
        let slot = self.slot_of(work_id);
        for &key in keys {
            self.postings.entry(key).or_default().push(slot);
        }
        self.works += 1;
    }

    /// Removes a work added with the same keys. Its slot stays, held by no key.
    pub fn remove_work(&mut self, work_id: WorkId, keys: &[u32]) {
        let Some(&slot) = self.slots.get(&work_id) else {
            return;
        };
        for key in keys {
            if let Some(list) = self.postings.get_mut(key) {
                list.retain(|&w| w != slot);
                if list.is_empty() {
                    self.postings.remove(key);
                }
            }
        }
        self.works = self.works.saturating_sub(1);
    }

    /// How rare a word with these keys is in the library, from 1 (in no other work) down to
    /// near 0 (in every work): the words reports of the same kind share (逝世, 享年, 院士 in
    /// every obituary) weigh less than the names and terms that make a text this text. With
    /// fewer than two works it is 1 for every word.
    pub fn rarity(&self, keys: &[u32]) -> f64 {
        if self.works < 2 {
            return 1.0;
        }
        let df = keys
            .iter()
            .map(|k| self.works_holding(*k).unwrap_or(0))
            .min()
            .unwrap_or(0);
        let n = self.works as f64;
        (((n + 1.0) / (df as f64 + 0.5)).ln() / ((n + 1.0) / 0.5).ln()).clamp(0.02, 1.0)
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.postings.len() + self.counts.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.postings.is_empty() && self.counts.is_empty()
    }

    /// Works holding enough of some block of the page, with the number of such blocks.
    pub fn query(
        &self,
        page_chars: &[char],
        page: &SenseText,
        thesaurus: &Thesaurus,
        config: &LaunderingConfig,
    ) -> Vec<(WorkId, usize)> {
        if self.works == 0 {
            return Vec::new();
        }
        let max_df = (self.works / 8).clamp(8, SENSE_LISTED_MAX_WORKS);
        let mut blocks: HashMap<WorkId, usize> = HashMap::new();
        BLOCK_SCORES.with_borrow_mut(|scores| {
            scores.make_room(self.slot_works.len());
            // A query that panicked on this thread may have left its scores behind.
            scores.clear();
            let mut token_number = 0u32;
            let mut buffer = [0u32; 1];
            let mut total = 0.0;
            let mut block_han = 0;
            let sentences = page.sentences.len();
            for s in 0..sentences {
                for token in page.sentence(s) {
                    let keys = keys(thesaurus, page_chars, token, &mut buffer);
                    if keys.is_empty() {
                        continue;
                    }
                    // Each key looked up once: its list, if held and short enough to read, and
                    // the number of works holding it.
                    let mut df = usize::MAX;
                    let mut lists: SmallVec<[&[u32]; 2]> = SmallVec::new();
                    for key in keys {
                        match self.postings.get(key) {
                            Some(list) => {
                                df = df.min(list.len());
                                if list.len() <= max_df {
                                    lists.push(list);
                                }
                            }
                            None => {
                                if let Some(n) = self.counts.get(key) {
                                    df = df.min(*n as usize);
                                }
                            }
                        }
                    }
                    // A word no work holds is as rare as a word can be.
                    if df == usize::MAX {
                        df = 0;
                    }
                    if df > max_df {
                        continue;
                    }
                    let w = weight(df, self.works);
                    total += w;
                    token_number += 1;
                    for list in &lists {
                        for &slot in list.iter() {
                            // A work counts once per token, whichever of its keys it holds.
                            scores.count(slot, token_number, w);
                        }
                    }
                }
                block_han += han_chars(page_chars, page, s);
                if block_han >= config.block_chars || s + 1 == sentences {
                    if total > 0.0 {
                        let mut ranked: Vec<(f64, WorkId)> = scores
                            .touched()
                            // A share of a handful of words is chance, however large.
                            .filter(|(_, (_, _, held))| *held >= MIN_BLOCK_WORDS as u32)
                            .map(|(slot, (found, _, _))| {
                                (found / total, self.slot_works[slot as usize])
                            })
                            .collect();
                        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                        let runner_up = ranked.get(1).map_or(0.0, |r| r.0);
                        let mut proposed = 0;
                        let mut last_share = f64::INFINITY;
                        for (share, work) in ranked {
                            let leads =
                                share >= config.min_block_share && share >= BLOCK_LEAD * runner_up;
                            let full = proposed >= MAX_BLOCK_PROPOSALS && share < last_share;
                            if (share >= config.sure_block_share || leads) && !full {
                                *blocks.entry(work).or_default() += 1;
                                proposed += 1;
                                last_share = share;
                            } else {
                                break;
                            }
                        }
                    }
                    scores.clear();
                    total = 0.0;
                    block_han = 0;
                }
            }
            scores.clear();
        });
        let mut out: Vec<(WorkId, usize)> = blocks.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

thread_local! {
    /// The scores of the block [`SenseIndex::query`] is weighing, kept between queries so that
    /// a page does not allocate (and the allocator fault in) an array as long as the library.
    static BLOCK_SCORES: std::cell::RefCell<BlockScores> =
        std::cell::RefCell::new(BlockScores::default());
}

/// Per work slot: the weight found in the block, the last token counted, and how many tokens
/// it holds; with the slots touched, so that clearing costs what the block found.
#[derive(Debug, Default)]
struct BlockScores {
    by_slot: Vec<(f64, u32, u32)>,
    touched: Vec<u32>,
}

impl BlockScores {
    fn make_room(&mut self, slots: usize) {
        if self.by_slot.len() < slots {
            self.by_slot.resize(slots, (0.0, 0, 0));
        }
    }

    /// Counts token number `token` of weight `w` for a slot, once however many of the
    /// token's keys the slot's work holds.
    fn count(&mut self, slot: u32, token: u32, w: f64) {
        let entry = &mut self.by_slot[slot as usize];
        if entry.1 != token {
            if entry.2 == 0 {
                self.touched.push(slot);
            }
            entry.0 += w;
            entry.1 = token;
            entry.2 += 1;
        }
    }

    fn touched(&self) -> impl Iterator<Item = (u32, (f64, u32, u32))> + '_ {
        self.touched
            .iter()
            .map(|&slot| (slot, self.by_slot[slot as usize]))
    }

    fn clear(&mut self) {
        for &slot in &self.touched {
            self.by_slot[slot as usize] = (0.0, 0, 0);
        }
        self.touched.clear();
    }
}

/// A work prepared for sentence alignment: its text read through the thesaurus, and in which
/// of its sentences each key occurs with the sentences' weights. Both depend only on the work
/// and on the library's key rarities, and building them means tokenizing the whole work, so the
/// matcher keeps them for works verified again, until the library changes.
#[derive(Debug)]
pub struct LaunderedWork {
    text: SenseText,
    keys: WorkKeys,
}

impl LaunderedWork {
    /// Prepares a work (canonical characters, `sentences` from [`sentence_starts`]) against the
    /// key rarities of `library`.
    pub fn new(
        chars: &[char],
        sentences: &[u32],
        thesaurus: &Thesaurus,
        library: &SenseIndex,
    ) -> LaunderedWork {
        let text = SenseText::new(chars, sentences, thesaurus);
        let keys = WorkKeys::new(chars, &text, thesaurus, library);
        LaunderedWork { text, keys }
    }
}

/// A page sentence paraphrasing a work sentence.
#[derive(Debug, Clone, Copy)]
struct Pair {
    page: usize,
    work: usize,
}

/// Passages of `page` that paraphrase `work` sentence by sentence, in page order (see the
/// module documentation). Each passage's runs are its sentence pairs, each counted whole (see
/// [`AlignedPassage::paraphrase`]).
///
/// `page_done` and `work_done` mark characters already accounted for, one flag per canonical
/// character: library boilerplate, which proves nothing, and what character alignment has
/// already explained, whose evidence is exact. A sentence mostly made of them takes no part.
#[allow(
    clippy::too_many_arguments,
    reason = "two texts in three views each, and the config"
)]
pub fn align_laundered(
    page_chars: &[char],
    page: &SenseText,
    page_done: &[bool],
    work_chars: &[char],
    prepared: &LaunderedWork,
    work_done: &[bool],
    thesaurus: &Thesaurus,
    library: &SenseIndex,
    config: &LaunderingConfig,
) -> Vec<AlignedPassage> {
    let (work, keys) = (&prepared.text, &prepared.keys);
    if page.sentences.len() < config.min_sentences || work.sentences.len() < config.min_sentences {
        return Vec::new();
    }
    let mut buffer = [0u32; 1];
    let open = |chars: &[char], text: &SenseText, done: &[bool], s: usize| {
        let (a, b) = text.char_range(s);
        let han = || (a..b).filter(|&i| is_han(chars[i]));
        let fresh = han()
            .filter(|&i| !done.get(i).copied().unwrap_or(false))
            .count();
        fresh >= config.min_sentence_chars && 2 * fresh > han().count()
    };
    let work_long: Vec<bool> = (0..keys.sentences)
        .map(|s| open(work_chars, work, work_done, s))
        .collect();
    let mut pairs = Vec::new();
    let mut found = vec![0.0f64; keys.sentences];
    let mut touched: Vec<u32> = Vec::new();
    let mut hits = Hits::new(keys.sentences);
    for p in 0..page.sentences.len() {
        if !open(page_chars, page, page_done, p) {
            continue;
        }
        let mut total = 0.0;
        for token in page.sentence(p) {
            if !keys.hits(thesaurus, page_chars, token, &mut hits) || hits.len() == 0 {
                // A word the work does not have at all (a filler, a replacement outside the
                // thesaurus) says nothing about which sentence this is; the longer side's
                // weight below still keeps a long page sentence from matching a short one.
                continue;
            }
            let rarity = library.rarity(self::keys(thesaurus, page_chars, token, &mut buffer));
            let w = weight(hits.len(), keys.sentences) * rarity;
            total += w;
            for &s in &hits.list {
                if found[s as usize] == 0.0 {
                    touched.push(s);
                }
                found[s as usize] += w;
            }
        }
        let mut best: Vec<(f64, usize)> = touched
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| work_long[s])
            .filter_map(|s| {
                let longer = total.max(keys.sentence_weight[s]);
                let similarity = found[s].min(longer) / longer.max(f64::MIN_POSITIVE);
                (similarity >= config.min_sentence_similarity).then_some((similarity, s))
            })
            .collect();
        best.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        pairs.extend(best.iter().take(3).map(|&(_, s)| Pair { page: p, work: s }));
        for s in touched.drain(..) {
            found[s as usize] = 0.0;
        }
    }
    // A chain is evidence as a whole, but its passages are its runs of adjacent page
    // sentences: a sentence skipped inside it may be one that characters explain, whose exact
    // passage then stays between them and fills the stretch.
    chains(&pairs, config)
        .into_iter()
        .flat_map(|chain| {
            chain
                .chunk_by(|a, b| b.page == a.page + 1)
                .map(|run| passage(run, page_chars, page, work_chars, work))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The longest chains of pairs in order on both sides, each pair used once, at least
/// `min_sentences` long, disjoint on the page, in page order.
fn chains(pairs: &[Pair], config: &LaunderingConfig) -> Vec<Vec<Pair>> {
    // Longest chain ending at each pair (pairs are sorted by page sentence).
    let step = config.max_sentence_step.max(1);
    let mut length = vec![1usize; pairs.len()];
    let mut previous = vec![usize::MAX; pairs.len()];
    for i in 0..pairs.len() {
        for j in (0..i).rev() {
            if pairs[i].page - pairs[j].page > step {
                break;
            }
            let ahead = pairs[j].page < pairs[i].page
                && pairs[j].work < pairs[i].work
                && pairs[i].work - pairs[j].work <= step;
            if ahead && length[j] + 1 > length[i] {
                length[i] = length[j] + 1;
                previous[i] = j;
            }
        }
    }
    // Take chains longest first, skipping pairs whose page sentences another chain took.
    let mut ends: Vec<usize> = (0..pairs.len())
        .filter(|&i| length[i] >= config.min_sentences)
        .collect();
    ends.sort_by(|&a, &b| length[b].cmp(&length[a]).then(a.cmp(&b)));
    let mut taken: Vec<bool> = Vec::new();
    let mut out = Vec::new();
    for end in ends {
        let mut chain = Vec::new();
        let mut at = end;
        while at != usize::MAX {
            chain.push(pairs[at]);
            at = previous[at];
        }
        chain.reverse();
        let last_page = chain.last().map_or(0, |p| p.page);
        if taken.len() <= last_page {
            taken.resize(last_page + 1, false);
        }
        if chain.iter().any(|p| taken[p.page]) {
            continue;
        }
        chain.iter().for_each(|p| taken[p.page] = true);
        out.push(chain);
    }
    out.sort_by_key(|chain| chain[0].page);
    out
}

/// A chain as a passage: each sentence pair a run from the page sentence's start over the whole
/// work sentence, the page sentences counted as aligned.
fn passage(
    chain: &[Pair],
    page_chars: &[char],
    page: &SenseText,
    work_chars: &[char],
    work: &SenseText,
) -> AlignedPassage {
    let mut runs = Vec::with_capacity(chain.len());
    let mut exact_chars = 0;
    let mut page_chars_total = 0;
    for pair in chain {
        let (ps, pe) = page.char_range(pair.page);
        let (ws, we) = work.char_range(pair.work);
        let len = we - ws;
        page_chars_total += pe - ps;
        let same: usize =
            identical_tokens(page_chars, page, pair.page, work_chars, work, pair.work)
                .iter()
                .map(|t| t.len as usize)
                .sum();
        exact_chars += same.min(len);
        runs.push(Run {
            page: ps,
            work: ws,
            len,
            exact: same.min(len),
            pinyin: false,
        });
    }
    let first = chain[0];
    let last = chain[chain.len() - 1];
    let work_start = chain
        .iter()
        .map(|p| work.char_range(p.work).0)
        .min()
        .unwrap_or(0);
    let work_end = chain
        .iter()
        .map(|p| work.char_range(p.work).1)
        .max()
        .unwrap_or(0);
    AlignedPassage {
        page_start: page.char_range(first.page).0,
        page_end: page.char_range(last.page).1,
        work_start,
        work_end,
        aligned_chars: page_chars_total,
        exact_chars,
        pinyin: false,
        paraphrase: true,
        runs,
    }
}

/// Page tokens of sentence `p` whose exact characters occur as a token of work sentence `w`.
fn identical_tokens<'a>(
    page_chars: &[char],
    page: &'a SenseText,
    p: usize,
    work_chars: &[char],
    work: &SenseText,
    w: usize,
) -> Vec<&'a SenseToken> {
    let work_words: Vec<&[char]> = work
        .sentence(w)
        .iter()
        .map(|t| &work_chars[t.start as usize..t.end()])
        .collect();
    page.sentence(p)
        .iter()
        .filter(|t| work_words.contains(&&page_chars[t.start as usize..t.end()]))
        .collect()
}

/// The words of a laundered page passage that replace a different word of the same sense in
/// the work's passage, as `(page word, work word)`: the substitutions a reviewer checks.
/// `page_text` and `work_text` are two passages' original texts, as evidence gives them; the
/// thesaurus is the built-in one the matcher aligned them with.
pub fn substitutions(page_text: &str, work_text: &str) -> Vec<(String, String)> {
    let thesaurus = Thesaurus::builtin();
    let page = copytrace_fingerprint::normalize(page_text);
    let work = copytrace_fingerprint::normalize(work_text);
    let page_tokens = thesaurus.tokens(&page.chars);
    let work_tokens = thesaurus.tokens(&work.chars);
    let word = |chars: &[char], t: &SenseToken| -> String {
        chars[t.start as usize..t.end()].iter().collect()
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for pt in page_tokens.iter().filter(|t| t.is_known()) {
        let page_word = word(&page.chars, pt);
        if work_tokens
            .iter()
            .any(|wt| word(&work.chars, wt) == page_word)
        {
            continue;
        }
        if let Some(wt) = work_tokens
            .iter()
            .find(|wt| thesaurus.same_sense(&page.chars, pt, &work.chars, wt))
        {
            let pair = (page_word, word(&work.chars, wt));
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use copytrace_fingerprint::normalize;

    fn read(text: &str) -> (Normalized, SenseText) {
        let normalized = normalize(text);
        let starts = sentence_starts(text, &normalized);
        let sense = SenseText::new(&normalized.chars, &starts, Thesaurus::builtin());
        (normalized, sense)
    }

    fn passages(page: &str, work: &str) -> Vec<AlignedPassage> {
        let (pn, ps) = read(page);
        let wn = normalize(work);
        let starts = sentence_starts(work, &wn);
        let prepared =
            LaunderedWork::new(&wn.chars, &starts, Thesaurus::builtin(), &SenseIndex::new());
        align_laundered(
            &pn.chars,
            &ps,
            &[],
            &wn.chars,
            &prepared,
            &[],
            Thesaurus::builtin(),
            &SenseIndex::new(),
            &LaunderingConfig::default(),
        )
    }

    const WORK: &str = "少年立即推开木门，看见院子里站着一个陌生人。\
那人身材高大，穿着一件破旧的蓑衣，手里提着一盏昏黄的灯笼。\
少年心中十分害怕，却还是鼓起勇气问他从哪里来。\
陌生人沉默了很久，才低声说自己是从北方逃难来的。\
少年看他浑身湿透，便把他请进屋里，生起了一堆火。";

    #[test]
    fn sentences_end_at_sentence_punctuation_and_line_breaks() {
        let text = "第一句，还是第一句。第二句！\n第三句";
        let normalized = normalize(text);
        let starts = sentence_starts(text, &normalized);
        let chars = &normalized.chars;
        let heads: Vec<char> = starts.iter().map(|&s| chars[s as usize]).collect();
        assert_eq!(starts.len(), 3, "{starts:?}");
        assert_eq!(heads, ['第', '第', '第']);
        assert_eq!(chars[starts[1] as usize + 1], '二');
    }

    #[test]
    fn a_copy_with_words_replaced_by_synonyms_aligns_sentence_by_sentence() {
        // Words replaced by Cilin synonyms, clauses swapped, a filler added.
        let laundered = "少年马上推开木门，瞧见庭院里站着一个生人。\
那人个子高大，手里提着一盏昏黄的灯笼，穿着一件陈旧的蓑衣。\
说实话，少年心中非常恐惧，却还是鼓起勇气问他从何处来。\
生人默默了很久，才低声说自己是从北方逃荒来的。\
少年看他满身湿透，就把他请进房里，生起了一堆火。";
        let found = passages(laundered, WORK);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].runs.len(), 5);
        assert!(found[0].exact_chars < found[0].aligned_chars);
    }

    #[test]
    fn unrelated_sentences_about_the_same_scene_do_not_align() {
        let other = "夜里下起了大雨，村口的老槐树被风吹得哗哗作响。\
一个商人牵着骡子走进客栈，要了一壶热酒。\
掌柜的打量着他，问他是不是从南边来的。\
商人笑了笑，说自己只是路过，明天一早就走。\
第二天清晨，客栈门口只剩下一串泥泞的脚印。";
        assert!(passages(other, WORK).is_empty());
    }

    #[test]
    fn two_paraphrased_sentences_are_not_a_passage() {
        let two = "少年马上推开木门，瞧见庭院里站着一个生人。\
那人个子高大，穿着一件陈旧的蓑衣，手里提着一盏昏黄的灯笼。\
今天的天气很好，我们一起去公园散步吧。";
        assert!(passages(two, WORK).is_empty());
    }

    #[test]
    fn english_text_is_left_to_character_alignment() {
        let work = "The king is dead. Long live the king. The queen weeps in the hall. \
                    The guards stand at the door. Nobody speaks of the war.";
        let page = "A storm is coming. The sea is grey and cold. The ships stay in the port. \
                    The sailors drink in the inn. Nobody speaks of the sea.";
        assert!(passages(page, work).is_empty());
    }

    /// The sense index's query as it was written first: each key looked up twice, its lists
    /// collected. What the query must answer, exactly.
    fn query_as_first_written(
        index: &SenseIndex,
        page_chars: &[char],
        page: &SenseText,
        thesaurus: &Thesaurus,
        config: &LaunderingConfig,
    ) -> Vec<(WorkId, usize)> {
        if index.works == 0 {
            return Vec::new();
        }
        let max_df = (index.works / 8).clamp(8, SENSE_LISTED_MAX_WORKS);
        let mut blocks: HashMap<WorkId, usize> = HashMap::new();
        // Per work: weight found, the last token counted, and how many tokens it holds.
        let mut score: HashMap<WorkId, (f64, u32, usize)> = HashMap::new();
        let mut token_number = 0u32;
        let mut buffer = [0u32; 1];
        let mut total = 0.0;
        let mut block_han = 0;
        let sentences = page.sentences.len();
        for s in 0..sentences {
            for token in page.sentence(s) {
                let keys = keys(thesaurus, page_chars, token, &mut buffer);
                let lists: Vec<Vec<WorkId>> = keys
                    .iter()
                    .filter_map(|k| Some(index.works_with(*k)?.collect()))
                    .collect();
                let df = keys
                    .iter()
                    .filter_map(|k| index.works_holding(*k))
                    .min()
                    .unwrap_or(0);
                if keys.is_empty() || df > max_df {
                    continue;
                }
                let w = weight(df, index.works);
                total += w;
                token_number += 1;
                for list in lists.iter().filter(|l| l.len() <= max_df) {
                    for &work in list.iter() {
                        // A work counts once per token, whichever of its keys it holds.
                        let (found, last, held) = score.entry(work).or_insert((0.0, 0, 0));
                        if *last != token_number {
                            *last = token_number;
                            *found += w;
                            *held += 1;
                        }
                    }
                }
            }
            block_han += han_chars(page_chars, page, s);
            if block_han >= config.block_chars || s + 1 == sentences {
                if total > 0.0 {
                    let mut ranked: Vec<(f64, WorkId)> = score
                        .drain()
                        // A share of a handful of words is chance, however large.
                        .filter(|(_, (_, _, held))| *held >= MIN_BLOCK_WORDS)
                        .map(|(w, (found, _, _))| (found / total, w))
                        .collect();
                    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    let runner_up = ranked.get(1).map_or(0.0, |r| r.0);
                    let mut proposed = 0;
                    let mut last_share = f64::INFINITY;
                    for (share, work) in ranked {
                        let leads =
                            share >= config.min_block_share && share >= BLOCK_LEAD * runner_up;
                        let full = proposed >= MAX_BLOCK_PROPOSALS && share < last_share;
                        if (share >= config.sure_block_share || leads) && !full {
                            *blocks.entry(work).or_default() += 1;
                            proposed += 1;
                            last_share = share;
                        } else {
                            break;
                        }
                    }
                }
                score.clear();
                total = 0.0;
                block_han = 0;
            }
        }
        let mut out: Vec<(WorkId, usize)> = blocks.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    #[test]
    fn the_query_answers_as_it_was_first_written() {
        let thesaurus = Thesaurus::builtin();
        // Han characters drawn with a skew, so that words are shared by few to many works, as
        // in a library.
        let alphabet: Vec<char> = (0x4E00..0x4E00 + 3_000)
            .filter_map(char::from_u32)
            .collect();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let sentence = |next: &mut dyn FnMut(usize) -> usize| -> String {
            let len = 8 + next(12);
            let mut s: String = (0..len)
                .map(|_| {
                    let skewed = next(alphabet.len()) + 1;
                    alphabet[next(skewed)]
                })
                .collect();
            s.push('。');
            s
        };
        let works: Vec<String> = (0..300)
            .map(|_| (0..30).map(|_| sentence(&mut next)).collect())
            .collect();
        let mut index = SenseIndex::new();
        for (id, work) in works.iter().enumerate() {
            file(&mut index, id as WorkId, work);
        }
        let config = LaunderingConfig::default();
        let mut proposing = 0;
        for p in 0..240 {
            let page: String = match p % 3 {
                // A work's text, a fifth of its characters changed.
                0 => works[next(works.len())]
                    .chars()
                    .map(|c| match next(5) {
                        0 if is_han(c) => alphabet[next(alphabet.len())],
                        _ => c,
                    })
                    .collect(),
                // Two works' halves.
                1 => {
                    let a: Vec<char> = works[next(works.len())].chars().collect();
                    let b: Vec<char> = works[next(works.len())].chars().collect();
                    a[..a.len() / 2].iter().chain(&b[b.len() / 2..]).collect()
                }
                // Sentences of two or three works interleaved, in uneven shares: blocks whose
                // leader holds little more than the next work.
                2 if p % 2 == 0 => {
                    let sources: Vec<Vec<&str>> = (0..2 + next(2))
                        .map(|_| works[next(works.len())].split_inclusive('。').collect())
                        .collect();
                    (0..30)
                        .map(|k| {
                            let source = &sources[next(sources.len() + 1) % sources.len()];
                            source[k % source.len()]
                        })
                        .collect()
                }
                _ => (0..30).map(|_| sentence(&mut next)).collect(),
            };
            let (n, sense) = read(&page);
            let expected = query_as_first_written(&index, &n.chars, &sense, thesaurus, &config);
            assert_eq!(
                index.query(&n.chars, &sense, thesaurus, &config),
                expected,
                "page {p}"
            );
            proposing += usize::from(!expected.is_empty());
        }
        assert!(proposing >= 80, "only {proposing} pages propose a work");
    }

    /// Files `text` in `index` as work `id`, read as the matcher reads a work.
    fn file(index: &mut SenseIndex, id: WorkId, text: &str) {
        let (n, sense) = read(text);
        index.insert_work(id, &text_keys(&n.chars, &sense, Thesaurus::builtin()));
    }

    /// The works the sense index proposes for `page` with the default settings, most blocks
    /// first.
    fn proposed(index: &SenseIndex, page: &str) -> Vec<WorkId> {
        let (n, sense) = read(page);
        index
            .query(
                &n.chars,
                &sense,
                Thesaurus::builtin(),
                &LaunderingConfig::default(),
            )
            .into_iter()
            .map(|(work, _)| work)
            .collect()
    }

    #[test]
    fn a_block_proposes_the_two_works_holding_most_of_it_however_many_pass_the_sure_share() {
        let page = "老船夫摇着橹把渡船慢慢撑到对岸的芦苇丛边天色已经暗了下来远处村庄亮起灯火";
        let page_chars: Vec<char> = page.chars().collect();
        let mut index = SenseIndex::new();
        // Works 0..9 hold ever shorter beginnings of the page: every one of them holds more
        // than the sure share of its block, each less than the one before.
        for id in 0..9i64 {
            let held: String = page_chars[..page_chars.len() - 2 * id as usize]
                .iter()
                .collect();
            file(&mut index, id, &format!("{held}。"));
        }
        // Unrelated works, so that the page's keys are rare enough to be looked up.
        for id in 100..200i64 {
            let a = char::from_u32(0x5E00 + id as u32).unwrap();
            file(
                &mut index,
                id,
                &format!("{a}今天天气很好，我们一起去公园散步。"),
            );
        }
        assert_eq!(proposed(&index, page), vec![0, 1]);
    }

    #[test]
    fn works_sharing_only_a_word_or_two_of_a_block_are_not_proposed_for_it() {
        let common = "今天天气很好，我们一起去公园散步。";
        let mut index = SenseIndex::new();
        // Twenty works hold the page's two rare words; the other three hundred only what
        // everybody writes, which is too common to be looked up.
        for id in 0..320i64 {
            let text = if id < 20 {
                format!("{common}芦苇丛边有一条渡船。")
            } else {
                common.to_owned()
            };
            file(&mut index, id, &text);
        }
        assert_eq!(
            proposed(&index, &format!("{common}{common}芦苇渡船。{common}")),
            Vec::<WorkId>::new()
        );
        // A page holding a work's sentence of many rare words still proposes that work.
        let rare = "老船夫摇着橹，把渡船慢慢撑到对岸的芦苇丛边，天色已经暗了下来。";
        file(&mut index, 1_000, &format!("{common}{rare}"));
        assert_eq!(proposed(&index, &format!("{common}{rare}")), vec![1_000]);
    }

    #[test]
    fn an_index_of_the_short_lists_and_the_other_counts_answers_as_the_full_index() {
        let thesaurus = Thesaurus::builtin();
        let rare = "老船夫摇着橹，把渡船慢慢撑到对岸的芦苇丛边，天色已经暗了下来。";
        let mut full = SenseIndex::new();
        // More than 8 · SENSE_LISTED_MAX_WORKS works, so the cap is what bounds the lists.
        for id in 0..4_500i64 {
            let a = char::from_u32(0x4E00 + (id as u32 * 7) % 2_000).unwrap();
            let b = char::from_u32(0x5E00 + (id as u32 * 13) % 3_000).unwrap();
            let mut text = if id % 3 == 0 {
                format!("{WORK}{a}{b}。")
            } else {
                format!("{a}{b}。今天天气很好，我们一起去公园散步。")
            };
            if id % 700 == 1 {
                text.push_str(rare);
            }
            file(&mut full, id, &text);
        }
        let listed = full
            .postings
            .iter()
            .filter(|(_, l)| l.len() <= SENSE_LISTED_MAX_WORKS)
            .map(|(k, _)| (*k, full.works_with(*k).unwrap().collect()));
        let counts = full
            .postings
            .iter()
            .filter(|(_, l)| l.len() > SENSE_LISTED_MAX_WORKS)
            .map(|(k, l)| (*k, l.len() as u32));
        let parts = SenseIndex::from_parts(full.works, listed, counts);
        assert!(
            !parts.counts.is_empty(),
            "some keys are in more works than the cap"
        );
        assert_eq!(parts.len(), full.len());
        for page in [rare, WORK, "今天天气很好，我们一起去公园散步。"] {
            let (pn, ps) = read(page);
            let config = LaunderingConfig::default();
            let expected = full.query(&pn.chars, &ps, thesaurus, &config);
            assert_eq!(parts.query(&pn.chars, &ps, thesaurus, &config), expected);
            if page == rare {
                let found: Vec<WorkId> = expected.iter().map(|(w, _)| *w).collect();
                assert_eq!(found, vec![1, 701, 1401, 2101, 2801, 3501, 4201]);
            }
        }
        for key in full.postings.keys() {
            assert_eq!(parts.rarity(&[*key]), full.rarity(&[*key]));
        }
    }

    #[test]
    fn substitutions_name_the_replaced_words() {
        let pairs = substitutions(
            "少年马上推开木门，瞧见庭院里站着一个生人。",
            "少年立即推开木门，看见院子里站着一个陌生人。",
        );
        assert!(
            pairs.contains(&("马上".to_owned(), "立即".to_owned())),
            "{pairs:?}"
        );
        assert!(
            pairs.contains(&("瞧见".to_owned(), "看见".to_owned())),
            "{pairs:?}"
        );
        assert!(!pairs.iter().any(|(p, _)| p == "木门"), "{pairs:?}");
    }
}
