//! The compact candidate source: winnowed k-gram postings over two projections, and the
//! consistent-diagonal rule that turns their hits into candidate works.
//!
//! **What is stored.** Each work's canonical characters are read twice, as characters and as
//! toneless syllables (homophones, and romanized syllables, read alike), and each reading is
//! winnowed ([`copytrace_fingerprint::winnow`]): about `2 / (window + 1)` of its k-grams are
//! selected, and each selected k-gram files one [`Posting`] (work, position) under its hash.
//! Any passage a page shares with a work over `window + k − 1` characters in either reading
//! shares a selected hash with it, wherever it stands on either side. At the defaults that is a
//! tenth of a posting per character and projection, each [`PACKED_POSTING`] bytes when packed:
//! a few bytes per library character where the window indexes took about a hundred.
//!
//! **What a page costs.** A page selects its k-grams the same way and looks up each distinct
//! hash once: one batch of a few hundred keys ([`PostingIndex::lookup`]). A hash filed more than
//! [`PostingConfig::common`] times is text many works share (set phrases, a publisher's notice)
//! and proposes nothing.
//!
//! **From hits to candidates.** A hit says "the page's k-gram at `p` is the work's at `q`": its
//! *diagonal* is `q − p`. A copied passage, however it was moved, keeps its k-grams on one
//! diagonal (give or take the characters a disguise inserted or dropped), while k-grams that
//! two unrelated texts happen to share scatter over all diagonals. A work is a candidate when
//! at least [`PostingConfig::min_hits`] of its hits have another hit within
//! [`PostingConfig::slack`] of their diagonal, and works are ranked by those hits. Verification
//! (alignment) decides the rest, as for every source.
//!
//! Removing a work recomputes its keys from its text ([`work_keys`]) instead of keeping a list
//! of them: the index holds only what a lookup reads.

use foldhash::{HashMap, HashMapExt};

use copytrace_fingerprint::pinyin::syllable_ids;
use copytrace_fingerprint::winnow::{Projection, winnowed};

use crate::index::{IndexError, WorkId};

/// Shape of the posting index. Works and pages must be read with the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostingConfig {
    /// Characters per k-gram of the character projection. 5: a five-character sequence is
    /// specific enough in Chinese prose that most are filed a few times in a large library,
    /// and short enough that a copy with one character in ten misread keeps most of them.
    pub char_k: usize,
    /// Syllables per k-gram of the syllable projection. Syllables are fewer than characters
    /// (about 400 toneless ones), so a syllable k-gram is longer to be as specific.
    pub syllable_k: usize,
    /// Winnowing window, in k-grams: one hash in about `(window + 1) / 2` positions is kept,
    /// and any shared run of `window + k − 1` symbols is guaranteed a shared hash.
    pub window: usize,
    /// Whether the character projection is filed and looked up.
    pub chars: bool,
    /// Whether the syllable projection is filed and looked up.
    pub syllables: bool,
    /// A hash filed more than this many times is common text and proposes nothing.
    pub common: usize,
    /// Least number of consistent hits (see the module docs) that makes a work a candidate.
    pub min_hits: usize,
    /// Largest difference between two hits' diagonals that still counts them as one passage.
    pub slack: u32,
}

impl Default for PostingConfig {
    fn default() -> Self {
        PostingConfig {
            char_k: 5,
            syllable_k: 6,
            window: 16,
            chars: true,
            syllables: true,
            common: 64,
            min_hits: 2,
            slack: 24,
        }
    }
}

/// One selected k-gram of a text: what a work files and what a page looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Hash of the k-gram (each projection hashes with its own seed).
    pub hash: u64,
    /// Position of the k-gram's first character in the text's canonical characters (or, for
    /// a page read with romanized syllables, in that reading).
    pub position: u32,
    /// The reading it was selected from.
    pub projection: Projection,
}

/// Where one selected k-gram of a work stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Posting {
    /// The work.
    pub work_id: WorkId,
    /// Position of the k-gram in the work's canonical characters.
    pub position: u32,
}

/// Bytes of one packed posting: a 32-bit check of the hash (the bucket a posting is filed in
/// is chosen by the hash's other bits), the work id and the position, each a big-endian `u32`.
pub const PACKED_POSTING: usize = 12;

/// The check stored with a packed posting: the hash's low 32 bits (buckets take the top bits).
pub fn hash_check(hash: u64) -> u32 {
    hash as u32
}

/// Appends `posting`, filed under `hash`, to `out` in the packed layout.
///
/// # Errors
/// [`IndexError::Corrupt`] when the work id does not fit the layout's 32 bits.
pub fn pack(hash: u64, posting: Posting, out: &mut Vec<u8>) -> Result<(), IndexError> {
    let work = u32::try_from(posting.work_id).map_err(|_| {
        IndexError::Corrupt(format!(
            "work id {} does not fit a packed posting (0 to {})",
            posting.work_id,
            u32::MAX
        ))
    })?;
    out.extend_from_slice(&hash_check(hash).to_be_bytes());
    out.extend_from_slice(&work.to_be_bytes());
    out.extend_from_slice(&posting.position.to_be_bytes());
    Ok(())
}

/// The postings of `hash` among packed postings (a bucket holds several hashes' postings).
/// Trailing bytes short of a whole posting are ignored.
pub fn unpack(bytes: &[u8], hash: u64) -> impl Iterator<Item = Posting> + '_ {
    let check = hash_check(hash).to_be_bytes();
    bytes
        .chunks_exact(PACKED_POSTING)
        .filter(move |record| record[..4] == check)
        .map(|record| Posting {
            work_id: i64::from(u32::from_be_bytes([
                record[4], record[5], record[6], record[7],
            ])),
            position: u32::from_be_bytes([record[8], record[9], record[10], record[11]]),
        })
}

/// The keys a work is filed under: both projections of its canonical characters, winnowed.
pub fn work_keys(chars: &[char], config: &PostingConfig) -> Vec<Key> {
    let syllables = if config.syllables {
        syllable_ids(chars)
    } else {
        Vec::new()
    };
    text_keys(chars, &syllables, config)
}

/// The keys a page is looked up with: its characters, and its syllables (`syllables` is the
/// page's reading with romanized runs as syllables when it has one, else
/// [`syllable_ids`] of `chars`).
pub fn text_keys(chars: &[char], syllables: &[u32], config: &PostingConfig) -> Vec<Key> {
    let mut keys = Vec::new();
    if config.chars {
        let symbols: Vec<u32> = chars.iter().map(|&c| c as u32).collect();
        keys.extend(
            winnowed(&symbols, config.char_k, config.window, Projection::Chars)
                .into_iter()
                .map(|s| Key {
                    hash: s.hash,
                    position: s.position,
                    projection: Projection::Chars,
                }),
        );
    }
    if config.syllables {
        keys.extend(
            winnowed(
                syllables,
                config.syllable_k,
                config.window,
                Projection::Syllables,
            )
            .into_iter()
            .map(|s| Key {
                hash: s.hash,
                position: s.position,
                projection: Projection::Syllables,
            }),
        );
    }
    keys
}

/// Distinct hashes of `keys`, sorted: what a page looks up, each once.
pub fn distinct_hashes(keys: &[Key]) -> Vec<u64> {
    let mut hashes: Vec<u64> = keys.iter().map(|k| k.hash).collect();
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Which hashes a library's postings are filed under, approximately: a blocked Bloom filter
/// of three probes a hash, all in one 512-bit block, held by each process that looks postings
/// up in a shared index.
///
/// **Why.** A page looks up every hash it selected, a few hundred, and in a large library
/// nearly every bucket exists, so each lookup transfers a bucket of unrelated postings. Most
/// of a page that copies nothing selects hashes no work files: the filter answers "filed
/// nowhere" for about `1 − p` of those in this process, and only the rest are read. A filter
/// never says "filed nowhere" of a hash that is filed, so candidates and boilerplate masks
/// are exactly those of a lookup of every hash.
///
/// **Size and shape.** [`HashFilter::BITS_PER_POSTING`] bits per posting when built (about
/// 10 % of absent hashes then pass; the first layout, two probes at three bits, passed 24 %,
/// and every hash that passes costs Redis a bucket read), growing fuller as works are
/// appended until [`HashFilter::has_room_for`] says to build it again. A hash's three probes
/// fall in one block of 512 bits (a cache line), so a probe of a filter of tens of megabytes
/// costs one cache miss, not three. The hashes are already 64-bit values, though not uniform
/// ones (winnowing keeps each window's smallest), so the block is a multiply-shift reduction
/// of one mix of the hash and the probes are bits of another: nothing a Bloom filter crate
/// adds (hashing of arbitrary items, its own serialization) is needed here, and the bit layout is Redis's `SETBIT` order (bit `i` is bit `7 − i mod 8`
/// of byte `i / 8`) so that a shared filter is set in place.
#[derive(Clone, PartialEq, Eq)]
pub struct HashFilter {
    bytes: Vec<u8>,
}

impl std::fmt::Debug for HashFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashFilter")
            .field("bits", &self.bits())
            .finish()
    }
}

impl HashFilter {
    /// Bits per posting a filter is built with: three probes in a block then pass about 10 %
    /// of the hashes filed nowhere, for 0.625 bytes per posting (about 0.15 bytes per library
    /// character).
    pub const BITS_PER_POSTING: u64 = 5;
    /// Fewest bits per posting a filter keeps working with (about 25 % of absent hashes pass,
    /// as many as the first layout passed when new) before it is built again, larger.
    pub const MIN_BITS_PER_POSTING: u64 = 3;
    /// Smallest filter (1 MiB): room for about 1.7 million postings, a library of about
    /// 7 million characters, so a small library never rebuilds it.
    pub const MIN_BITS: u64 = 1 << 23;
    /// Bits of a block, all of one hash's probes in one (a 64-byte cache line).
    pub const BLOCK_BITS: u64 = 512;
    /// Probes per hash.
    pub const PROBES: usize = 3;

    /// An empty filter for about `postings` postings: a whole number of blocks.
    pub fn sized_for(postings: u64) -> Self {
        let bits = postings
            .saturating_mul(Self::BITS_PER_POSTING)
            .max(Self::MIN_BITS)
            .next_multiple_of(Self::BLOCK_BITS);
        HashFilter {
            bytes: vec![0; bits.div_ceil(8) as usize],
        }
    }

    /// A filter read back from [`HashFilter::as_bytes`]; `None` for an empty slice.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        (!bytes.is_empty()).then_some(HashFilter { bytes })
    }

    /// The filter's bits, in `SETBIT` order.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of bits.
    pub fn bits(&self) -> u64 {
        self.bytes.len() as u64 * 8
    }

    /// Whether the filter still has at least [`HashFilter::MIN_BITS_PER_POSTING`] bits for
    /// each of `postings` postings.
    pub fn has_room_for(&self, postings: u64) -> bool {
        Self::bits_have_room_for(self.bits(), postings)
    }

    /// [`HashFilter::has_room_for`] for a filter of `bits` bits (one not read back).
    pub fn bits_have_room_for(bits: u64, postings: u64) -> bool {
        bits >= postings.saturating_mul(Self::MIN_BITS_PER_POSTING)
    }

    /// The bits `hash` sets in a filter of `bits` bits: [`HashFilter::PROBES`] bits of one
    /// block (a filter smaller than a block is one block of its size; bits past the last
    /// whole block are never set).
    pub fn probes_in(bits: u64, hash: u64) -> [u64; Self::PROBES] {
        let blocks = (bits / Self::BLOCK_BITS).max(1);
        let block_bits = bits.min(Self::BLOCK_BITS);
        // Winnowing keeps the smallest hash of each window, so the hashes filed are far from
        // uniform: nearly all are in the lowest sixth of the range. Their top bits would crowd
        // a sixth of the blocks; two independent mixes of the hash pick the block and the
        // probes.
        let block = ((u128::from(mix(hash)) * u128::from(blocks)) >> 64) as u64;
        let probes = mix(hash ^ 0x5851_F42D_4C95_7F2D);
        std::array::from_fn(|i| {
            let within = (probes >> (20 * i)) & 0xF_FFFF;
            block * Self::BLOCK_BITS + within % block_bits
        })
    }

    /// Records `hash` as filed.
    pub fn insert(&mut self, hash: u64) {
        for bit in Self::probes_in(self.bits(), hash) {
            self.bytes[(bit / 8) as usize] |= 0x80 >> (bit % 8);
        }
    }

    /// Whether `hash` may be filed: `false` only when it is filed nowhere.
    pub fn may_hold(&self, hash: u64) -> bool {
        Self::probes_in(self.bits(), hash)
            .iter()
            .all(|&bit| self.bytes[(bit / 8) as usize] & (0x80 >> (bit % 8)) != 0)
    }
}

/// A bijective mix of a 64-bit value in which every output bit depends on every input bit
/// (MurmurHash3's finalizer).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// Where the postings are kept: in this process ([`MemoryPostings`]) or shared (Redis).
pub trait PostingIndex: Send + Sync {
    /// Files a work's keys, replacing what it had under them (a work filed twice is stored
    /// once). A work whose text changed is removed with its old keys first.
    fn insert_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError>;
    /// Removes the postings of a work, given the keys it was filed under.
    fn remove_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError>;
    /// `out[i]` receives the postings of `hashes[i]`: all of them, or any `limit + 1` or more
    /// when there are more than `limit` (the caller then treats the hash as common).
    fn lookup(
        &self,
        hashes: &[u64],
        limit: usize,
        out: &mut Vec<Vec<Posting>>,
    ) -> Result<(), IndexError>;
    /// Number of postings filed.
    fn len(&self) -> Result<usize, IndexError>;
    /// Reads again what a shared index keeps in this process (its [`HashFilter`]), after works
    /// were added to it: what they filed is then looked up too. Nothing to do for an index
    /// this process keeps.
    fn refresh(&self) -> Result<(), IndexError> {
        Ok(())
    }
    /// Whether nothing is filed.
    fn is_empty(&self) -> Result<bool, IndexError> {
        Ok(self.len()? == 0)
    }
}

/// Postings in this process's memory: the embedded deployment's index.
#[derive(Debug, Default)]
pub struct MemoryPostings {
    by_hash: HashMap<u64, Vec<Posting>>,
    postings: usize,
}

impl MemoryPostings {
    /// An empty index.
    pub fn new() -> Self {
        MemoryPostings::default()
    }
}

impl PostingIndex for MemoryPostings {
    fn insert_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError> {
        // Filing a work twice stores it once, as in the shared index.
        self.remove_work(work_id, keys)?;
        for key in keys {
            self.by_hash.entry(key.hash).or_default().push(Posting {
                work_id,
                position: key.position,
            });
            self.postings += 1;
        }
        Ok(())
    }

    fn remove_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError> {
        for hash in distinct_hashes(keys) {
            if let Some(postings) = self.by_hash.get_mut(&hash) {
                let before = postings.len();
                postings.retain(|p| p.work_id != work_id);
                self.postings -= before - postings.len();
                if postings.is_empty() {
                    self.by_hash.remove(&hash);
                }
            }
        }
        Ok(())
    }

    fn lookup(
        &self,
        hashes: &[u64],
        limit: usize,
        out: &mut Vec<Vec<Posting>>,
    ) -> Result<(), IndexError> {
        out.clear();
        out.extend(hashes.iter().map(|hash| {
            self.by_hash
                .get(hash)
                .map(|p| p[..p.len().min(limit + 1)].to_vec())
                .unwrap_or_default()
        }));
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        Ok(self.postings)
    }
}

/// One hit of a text's k-gram: the work holding it, the projection, the diagonal (position in
/// the work minus position in the text) and the position in the text.
type DiagonalHit = (WorkId, Projection, i64, u32);

/// Every hit of `keys` in the postings `by_hash` holds, sorted and each once.
fn diagonal_hits(keys: &[Key], by_hash: &HashMap<u64, &[Posting]>) -> Vec<DiagonalHit> {
    let mut hits: Vec<DiagonalHit> = Vec::new();
    for key in keys {
        if let Some(found) = by_hash.get(&key.hash) {
            hits.extend(found.iter().map(|p| {
                (
                    p.work_id,
                    key.projection,
                    i64::from(p.position) - i64::from(key.position),
                    key.position,
                )
            }));
        }
    }
    hits.sort_unstable();
    hits.dedup();
    hits
}

/// Whether `hits[i]` has another hit of the same work and projection at another text position
/// at most `reach` away, on a diagonal within `slack` of its own: two k-grams that hold
/// together, as a shared passage's do.
fn has_consistent_neighbour(hits: &[DiagonalHit], i: usize, slack: i64, reach: u32) -> bool {
    let (work, projection, diagonal, position) = hits[i];
    let near = |&(w, p, d, q): &DiagonalHit| {
        w == work
            && p == projection
            && (d - diagonal).abs() <= slack
            && q != position
            && q.abs_diff(position) <= reach
    };
    let before = hits[..i]
        .iter()
        .rev()
        .take_while(|h| h.0 == work && h.1 == projection && diagonal - h.2 <= slack)
        .any(near);
    before
        || hits[i + 1..]
            .iter()
            .take_while(|h| h.0 == work && h.1 == projection && h.2 - diagonal <= slack)
            .any(near)
}

/// Works whose hits hold together, with their consistent hits, most first (ties by id).
///
/// `hashes` and `postings` are a lookup's question and answer ([`PostingIndex::lookup`]);
/// `keys` are the page's keys. A hash with more than `config.common` postings is skipped.
pub fn consistent_works(
    keys: &[Key],
    hashes: &[u64],
    postings: &[Vec<Posting>],
    config: &PostingConfig,
) -> Vec<(WorkId, usize)> {
    let by_hash: HashMap<u64, &[Posting]> = hashes
        .iter()
        .zip(postings)
        .filter(|(_, p)| !p.is_empty() && p.len() <= config.common)
        .map(|(&h, p)| (h, p.as_slice()))
        .collect();
    let hits = diagonal_hits(keys, &by_hash);
    let mut consistent: HashMap<WorkId, usize> = HashMap::new();
    for (i, hit) in hits.iter().enumerate() {
        if has_consistent_neighbour(&hits, i, i64::from(config.slack), u32::MAX) {
            *consistent.entry(hit.0).or_default() += 1;
        }
    }
    let mut works: Vec<(WorkId, usize)> = consistent
        .into_iter()
        .filter(|&(_, hits)| hits >= config.min_hits)
        .collect();
    works.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    works
}

/// Which characters of a text are library boilerplate: text at least `min_works` works of the
/// library hold, found from the text's own lookup ([`PostingIndex::lookup`] of `hashes`,
/// answered in `postings`), so that no count per seed is kept anywhere.
///
/// A selected k-gram of the text is *common* when at least `min_works` distinct works hold it
/// on a consistent diagonal with another k-gram of the text nearby (within `window + k`
/// positions, diagonals within `slack`): a shared passage, not a chance five-character
/// coincidence. A work's own text counts the work itself, as a seed count did. Common k-grams
/// mark their characters; gaps of at most `window` positions between two common k-grams of
/// one projection are marked too, and every marked stretch is widened by `window` characters
/// on each side, since winnowing may select the first shared k-gram of a shared passage up to
/// `window` positions into it. The mask thus errs towards boilerplate: a character it marks is
/// never evidence, so a false accusation cannot rest on it.
pub fn common_mask(
    keys: &[Key],
    hashes: &[u64],
    postings: &[Vec<Posting>],
    config: &PostingConfig,
    min_works: usize,
    len: usize,
) -> Vec<bool> {
    let mut mask = vec![false; len];
    if min_works == 0 || len == 0 {
        return mask;
    }
    let by_hash: HashMap<u64, &[Posting]> = hashes
        .iter()
        .zip(postings)
        .filter(|(_, p)| p.len() >= min_works)
        .map(|(&h, p)| (h, p.as_slice()))
        .collect();
    let hits = diagonal_hits(keys, &by_hash);
    // Works holding each (projection, position) consistently.
    let mut supported: HashMap<(Projection, u32), Vec<WorkId>> = HashMap::new();
    for (i, &(work, projection, _, position)) in hits.iter().enumerate() {
        let reach = (config.window + k_of(projection, config)) as u32;
        if has_consistent_neighbour(&hits, i, i64::from(config.slack), reach) {
            supported
                .entry((projection, position))
                .or_default()
                .push(work);
        }
    }
    let mut common: Vec<(Projection, u32)> = supported
        .into_iter()
        .filter_map(|(at, mut works)| {
            works.sort_unstable();
            works.dedup();
            (works.len() >= min_works).then_some(at)
        })
        .collect();
    common.sort_unstable();
    let mut stretches: Vec<(usize, usize)> = Vec::new();
    for (i, &(projection, position)) in common.iter().enumerate() {
        let start = position as usize;
        let mut end = start + k_of(projection, config);
        if let Some(&(next_projection, next)) = common.get(i + 1)
            && next_projection == projection
            && (next - position) as usize <= config.window
        {
            end = end.max(next as usize);
        }
        stretches.push((start, end));
    }
    for (start, end) in stretches {
        let from = start.saturating_sub(config.window);
        let to = (end + config.window).min(len);
        if from < to {
            mask[from..to].iter_mut().for_each(|m| *m = true);
        }
    }
    mask
}

/// The k-gram length of a projection.
fn k_of(projection: Projection, config: &PostingConfig) -> usize {
    match projection {
        Projection::Chars => config.char_k,
        Projection::Syllables => config.syllable_k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copytrace_fingerprint::normalize;

    const WORK: &str = "天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，\
        楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，\
        遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。";

    fn index_of(works: &[(WorkId, &str)], config: &PostingConfig) -> MemoryPostings {
        let mut index = MemoryPostings::new();
        for (id, text) in works {
            index
                .insert_work(*id, &work_keys(&normalize(text).chars, config))
                .unwrap();
        }
        index
    }

    fn candidates(index: &MemoryPostings, page: &str, config: &PostingConfig) -> Vec<WorkId> {
        let chars = normalize(page).chars;
        let keys = text_keys(&chars, &syllable_ids(&chars), config);
        let hashes = distinct_hashes(&keys);
        let mut found = Vec::new();
        index.lookup(&hashes, config.common, &mut found).unwrap();
        consistent_works(&keys, &hashes, &found, config)
            .into_iter()
            .map(|(w, _)| w)
            .collect()
    }

    #[test]
    fn a_copy_behind_boilerplate_finds_its_work() {
        let config = PostingConfig::default();
        let index = index_of(
            &[
                (1, WORK),
                (2, "今天天气很好，我们去公园散步，看见很多人在放风筝。"),
            ],
            &config,
        );
        let page = format!("本站最新章节免费阅读，请收藏本站网址。{WORK}上一章 目录 下一章");
        assert_eq!(candidates(&index, &page, &config), vec![1]);
    }

    #[test]
    fn a_homophone_copy_is_found_through_syllables_alone() {
        let config = PostingConfig {
            chars: false,
            ..PostingConfig::default()
        };
        let index = index_of(&[(7, WORK)], &config);
        // 势→事, 合→和, 国→果, 帝→第: same syllables, other characters.
        let page = WORK
            .replace('势', "事")
            .replace('合', "和")
            .replace('国', "果")
            .replace('帝', "第");
        assert_eq!(candidates(&index, &page, &config), vec![7]);
        let chars_only = PostingConfig {
            syllables: false,
            ..PostingConfig::default()
        };
        let index = index_of(&[(7, WORK)], &chars_only);
        assert!(candidates(&index, "今天天气很好，我们去公园散步。", &chars_only).is_empty());
    }

    #[test]
    fn unrelated_text_proposes_nothing() {
        let config = PostingConfig::default();
        let index = index_of(&[(1, WORK)], &config);
        let page = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。床前明月光，疑是地上霜。";
        assert!(candidates(&index, page, &config).is_empty());
    }

    #[test]
    fn text_every_work_files_is_common_and_proposes_nothing() {
        let config = PostingConfig {
            common: 3,
            ..PostingConfig::default()
        };
        let notice =
            "本书由网友上传整理，仅供试读交流，版权归原作者和出版社所有，请于下载后尽快删除。";
        let works: Vec<(WorkId, String)> = (1..=5)
            .map(|i| {
                (
                    i,
                    format!("{notice}第{i}部的正文各不相同，独一无二的故事{i}。"),
                )
            })
            .collect();
        let refs: Vec<(WorkId, &str)> = works.iter().map(|(i, t)| (*i, t.as_str())).collect();
        let index = index_of(&refs, &config);
        assert!(candidates(&index, notice, &config).is_empty());
    }

    #[test]
    fn removing_a_work_with_its_recomputed_keys_leaves_nothing_of_it() {
        let config = PostingConfig::default();
        let mut index = index_of(
            &[
                (1, WORK),
                (2, "另一部作品的文字，与第一部毫无关系，讲的是海上的故事。"),
            ],
            &config,
        );
        let before = index.len().unwrap();
        let keys = work_keys(&normalize(WORK).chars, &config);
        index.remove_work(1, &keys).unwrap();
        assert_eq!(index.len().unwrap(), before - keys.len());
        assert!(candidates(&index, WORK, &config).is_empty());
    }

    #[test]
    fn packed_postings_read_back_only_under_their_own_hash() {
        let mut bytes = Vec::new();
        let a = Posting {
            work_id: 42,
            position: 7,
        };
        let b = Posting {
            work_id: 3_000_000_000,
            position: 1 << 30,
        };
        pack(0xdead_beef_0000_0001, a, &mut bytes).unwrap();
        pack(0xdead_beef_0000_0002, b, &mut bytes).unwrap();
        assert_eq!(bytes.len(), 2 * PACKED_POSTING);
        assert_eq!(
            unpack(&bytes, 0xdead_beef_0000_0002).collect::<Vec<_>>(),
            vec![b]
        );
        assert!(
            pack(
                1,
                Posting {
                    work_id: -1,
                    position: 0
                },
                &mut bytes
            )
            .is_err()
        );
    }

    /// The characters of `page` the library's boilerplate covers, per `common_mask`.
    fn mask(index: &MemoryPostings, page: &str, config: &PostingConfig) -> Vec<bool> {
        let chars = normalize(page).chars;
        let keys = text_keys(&chars, &syllable_ids(&chars), config);
        let hashes = distinct_hashes(&keys);
        let mut found = Vec::new();
        index.lookup(&hashes, config.common, &mut found).unwrap();
        common_mask(&keys, &hashes, &found, config, 3, chars.len())
    }

    #[test]
    fn text_three_works_share_is_boilerplate_and_text_of_two_is_not() {
        let config = PostingConfig::default();
        let notice = "本书由星河文学网独家首发，版权所有，未经授权不得转载、摘编或以其他方式使用，\
            违者必究。欢迎读者朋友们关注作者的其他作品，并在评论区留下宝贵意见。";
        let bodies = [
            "春风吹过山岗，桃花开满了整个村庄，孩子们在田埂上追逐嬉戏，老人坐在门前晒着太阳。",
            "大雪封山的那一年，猎人带着他的狗走进了深林，再也没有回来，只留下一串脚印。",
            "城市的夜晚灯火通明，出租车司机老王已经连续开了十二个小时，眼睛布满血丝。",
        ];
        let works: Vec<String> = bodies.iter().map(|b| format!("{b}{notice}")).collect();
        let page_body = "海边的灯塔守了三十年，守塔人每天擦亮灯罩，记下过往船只的名字和航向。";
        let page = format!("{page_body}{notice}");
        let notice_start = normalize(page_body).chars.len();
        let page_len = normalize(&page).chars.len();

        let three: Vec<(WorkId, &str)> = works
            .iter()
            .enumerate()
            .map(|(i, w)| (i as WorkId + 1, w.as_str()))
            .collect();
        let covered = mask(&index_of(&three, &config), &page, &config);
        assert_eq!(covered.len(), page_len);
        assert!(
            covered[notice_start..].iter().all(|&c| c),
            "the notice three works hold is boilerplate all through: {covered:?}"
        );
        // The page's own text is left, but for the widening next to the notice.
        let own = covered[..notice_start.saturating_sub(config.window)]
            .iter()
            .filter(|&&c| c)
            .count();
        assert_eq!(own, 0, "{covered:?}");

        let two = &three[..2];
        let covered = mask(&index_of(two, &config), &page, &config);
        assert!(
            covered.iter().all(|&c| !c),
            "two works sharing a passage do not make it boilerplate: {covered:?}"
        );
    }

    /// A splitmix64 stream: uniform hashes, as the winnowed k-gram hashes are.
    fn hashes(seed: u64, n: usize) -> Vec<u64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect()
    }

    #[test]
    fn a_hash_filter_holds_every_hash_inserted_and_passes_about_a_tenth_of_the_others() {
        let postings = 2_000_000u64;
        let mut filter = HashFilter::sized_for(postings);
        assert_eq!(
            filter.bits(),
            (postings * HashFilter::BITS_PER_POSTING).next_multiple_of(HashFilter::BLOCK_BITS)
        );
        // What winnowing files and pages look up: the smallest hash of each window of 16,
        // nearly all in the lowest sixth of the range (a filter placing them by their top
        // bits passed about nine in ten of the absent ones).
        let winnowed = |seed, n: usize| -> Vec<u64> {
            hashes(seed, n * 16)
                .chunks(16)
                .map(|w| *w.iter().min().expect("a window"))
                .collect()
        };
        let filed = winnowed(1, postings as usize);
        for &hash in &filed {
            filter.insert(hash);
        }
        assert!(
            filed.iter().all(|&h| filter.may_hold(h)),
            "no false negative"
        );
        let absent = winnowed(2, 200_000);
        let passed = absent.iter().filter(|&&h| filter.may_hold(h)).count() as f64;
        let rate = passed / absent.len() as f64;
        // Three probes at 5 bits a key, (1 − e^(−3/5))³ ≈ 0.092 unblocked; blocks whose
        // load varies pass a little more.
        assert!((0.085..0.12).contains(&rate), "false positive rate {rate}");
        assert!(filter.has_room_for(postings * 5 / 3));
        assert!(!filter.has_room_for(postings * 2));
    }

    #[test]
    fn a_hash_filter_reads_back_from_its_bytes_with_bits_in_setbit_order() {
        let mut filter = HashFilter::sized_for(0);
        assert_eq!(filter.bits(), HashFilter::MIN_BITS);
        let hash = 0x1234_5678_9ABC_DEF0;
        filter.insert(hash);
        let bytes = filter.as_bytes().to_vec();
        // Bit i is bit 7 − i mod 8 of byte i / 8, as Redis's SETBIT and GETBIT number them.
        for bit in HashFilter::probes_in(filter.bits(), hash) {
            assert_ne!(bytes[(bit / 8) as usize] & (0x80 >> (bit % 8)), 0);
        }
        let probes = HashFilter::probes_in(filter.bits(), hash);
        assert_eq!(
            probes.map(|bit| bit / HashFilter::BLOCK_BITS),
            [probes[0] / HashFilter::BLOCK_BITS; HashFilter::PROBES],
            "one block"
        );
        assert!(bytes.iter().map(|b| b.count_ones()).sum::<u32>() <= 3);
        let read = HashFilter::from_bytes(bytes).expect("a filter");
        assert_eq!(read, filter);
        assert!(read.may_hold(hash));
        assert!(HashFilter::from_bytes(Vec::new()).is_none());
    }
}
