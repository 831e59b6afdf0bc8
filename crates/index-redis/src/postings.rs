//! The winnowed k-gram postings ([`copytrace_matcher::postings`]) kept in Redis: the compact
//! candidate source, a few bytes per library character.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{prefix}:p:{p<bits>:<bucket hex>}` | string | packed postings ([`PACKED_POSTING`] bytes each: hash check, work id, position) of every hash whose top `bits` bits are `bucket` |
//! | `{prefix}:p:count` | string | number of postings filed, for [`PostingIndex::len`] |
//! | `{prefix}:p:filter:b3` | string | a [`HashFilter`] of every hash filed: bits in `SETBIT` order |
//! | `{prefix}:p:filter` | string | the filter's first layout (two probes anywhere): no longer read; a writer that finds it builds the new one at the next library change and deletes it |
//!
//! **Why buckets of packed strings.** A Redis key costs about 50–70 bytes of its own (dictionary
//! entry, key and value headers) whatever it holds, and a set member 45–75 bytes; a posting is
//! 12 bytes. One key per hash would spend five times the posting on bookkeeping; buckets of
//! about [`POSTINGS_PER_BUCKET`] postings spend a few bytes per posting, and a page still reads
//! one key per distinct hash it selected, all in one `MGET` batch (one pipeline per node on a
//! cluster). Each bucket key carries its own hash tag, so buckets spread over a cluster's slots.
//!
//! **Common hashes stop growing.** A bucket keeps at most `keep` postings of one hash: a hash
//! filed that often is text many works share, which proposes nothing (the matcher ignores a
//! hash with more postings than its `common` limit, which must be below `keep`), so its
//! further postings would only cost memory and transfer.
//!
//! **A filter in each reader.** A reader keeps the filter in memory ([`RedisPostings::load_filter`],
//! about 0.6 bytes a posting) and reads only the buckets of hashes it may hold: a page that
//! copies nothing reads about a tenth of the buckets it would otherwise, and Redis spends as
//! much less. Writers set a hash's bits before filing its postings and before the library
//! generation moves, so a reader that loads the filter after reading a generation has the bits
//! of every work of that generation; one that learns works added since loads it again
//! ([`PostingIndex::refresh`]). Bits are never cleared (a removed work's only let a few more
//! hashes through); a filter that grew too full is built again by the writer
//! ([`RedisPostings::write_filter`]). An index without a filter (built before it existed) is
//! read whole, as before.
//!
//! **Buckets grow with the library.** The number of buckets is chosen for the postings an index
//! is built with (`p_bucket_bits` in the metadata). A library that grows by appending works
//! fills them: past [`OVERFULL_BUCKET`] postings a bucket, every lookup would read that many
//! times more than it needs. The writer then files every posting again under more bits
//! ([`rebucket_bits`], [`RedisPostings::loader_at`], [`RedisPostings::switch_bits`]), before the
//! generation moves, and deletes the old buckets after it moved
//! ([`RedisPostings::drop_buckets`]). The bits are part of each bucket's name, so the old and new
//! buckets never mix. A reader still on the old bits that reads the old buckets while they are
//! deleted then finds the generation ahead of the one it knows, learns the works added
//! ([`PostingIndex::refresh`] reads the bits again with the filter), and matches the page again.
//!
//! **No per-work bookkeeping.** Removing a work needs the keys it was filed under, recomputed
//! from its text by the caller ([`copytrace_matcher::postings::work_keys`]): the index holds
//! only what a lookup reads. Filing a work replaces whatever it had in the buckets it touches,
//! in one server-side script per bucket, so a run stopped half way is finished by running it
//! again and a work filed twice is stored once.

use std::collections::BTreeMap;
use std::sync::Arc;

use copytrace_matcher::postings::{
    HashFilter, Key, PACKED_POSTING, Posting, PostingIndex, pack, unpack,
};
use copytrace_matcher::{IndexError, PostingConfig, WorkId};
use redis::{Cmd, Value};

use crate::link::Link;
use crate::{check_params, recorded_bucket_bits, validate_prefix};

/// Postings a bucket should hold on average when its bit count is chosen from the expected
/// number of postings: a key's own overhead (about 60 bytes) is then under 2 bytes a posting,
/// while a page's lookup reads under half a kilobyte per hash.
pub const POSTINGS_PER_BUCKET: u64 = 8;

/// Postings a bucket may hold on average before the writer files the postings again under more
/// bits ([`rebucket_bits`]): four times the target, so that growing a library by appending
/// works re-buckets it about once each time it grows fourfold (amortized, a few refilings of
/// each posting), while lookups never read more than four times what they need.
pub const OVERFULL_BUCKET: u64 = 4 * POSTINGS_PER_BUCKET;

/// The bucket bits an index of `postings` postings in buckets of `bits` bits should move to,
/// when its buckets hold more than [`OVERFULL_BUCKET`] postings on average and more bits are
/// allowed; `None` when they are fine.
pub fn rebucket_bits(postings: u64, bits: u32) -> Option<u32> {
    let wanted = posting_bucket_bits_for(postings);
    (postings > OVERFULL_BUCKET << bits && wanted > bits).then_some(wanted)
}

// The script below reads records of this size.
const _: () = assert!(PACKED_POSTING == 12);

/// Replaces one work's postings in one bucket: drops the records of work `ARGV[1]` (4 bytes),
/// then appends the records of `ARGV[2]`, skipping any whose hash check already has `ARGV[3]`
/// records in the bucket. Returns the change in the bucket's number of records. One key per
/// call, so it runs on a cluster.
const REFILE_WORK: &str = r"
local size = 12
local keep = tonumber(ARGV[3])
local held = redis.call('GET', KEYS[1]) or ''
local kept = {}
local per_check = {}
local before = #held / size
for i = 1, #held, size do
  local record = string.sub(held, i, i + size - 1)
  if string.sub(record, 5, 8) ~= ARGV[1] then
    kept[#kept + 1] = record
    local check = string.sub(record, 1, 4)
    per_check[check] = (per_check[check] or 0) + 1
  end
end
local new = ARGV[2]
for i = 1, #new, size do
  local record = string.sub(new, i, i + size - 1)
  local check = string.sub(record, 1, 4)
  local n = per_check[check] or 0
  if n < keep then
    kept[#kept + 1] = record
    per_check[check] = n + 1
  end
end
if #kept == 0 then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], table.concat(kept)) end
return #kept - before
";

/// Bucket bits for about `postings` postings: the fewest that keep about
/// [`POSTINGS_PER_BUCKET`] postings a bucket, between 12 and 28.
pub fn posting_bucket_bits_for(postings: u64) -> u32 {
    let buckets = (postings / POSTINGS_PER_BUCKET).max(1);
    (64 - buckets.leading_zeros()).clamp(12, 28)
}

/// The k-gram postings in Redis: packed postings in buckets by hash, one script per bucket
/// and work filed, no per-work lists (the key layout is in the [crate documentation](crate)).
pub struct RedisPostings {
    link: Arc<Link>,
    prefix: String,
    /// Bucket bits in use: fixed for a writer's run; a reader re-reads them when it learns
    /// works added ([`PostingIndex::refresh`]).
    bits: std::sync::atomic::AtomicU32,
    keep: usize,
    /// Postings a bulk load is expected to write: the size of the filter it builds.
    expected: u64,
    /// The filter a reader loaded ([`RedisPostings::load_filter`]); `None` reads every bucket.
    filter: std::sync::RwLock<Option<Arc<HashFilter>>>,
}

impl std::fmt::Debug for RedisPostings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPostings")
            .field("server", &self.link.shown_url())
            .field("prefix", &self.prefix)
            .field("bits", &self.bucket_bits())
            .field("keep", &self.keep)
            .field("filter_bits", &self.loaded_filter().map(|f| f.bits()))
            .finish()
    }
}

impl RedisPostings {
    /// Opens the postings under `prefix`, refusing ones filed with another `config` (other
    /// k-gram lengths, window or projections would select other hashes). A new index gets
    /// `bits` bucket bits (see [`posting_bucket_bits_for`]); an existing one keeps its own.
    /// At most `config.common + 1` postings of one hash are kept. A bulk load builds a filter
    /// for `expected` postings.
    pub(crate) fn open(
        link: Arc<Link>,
        prefix: &str,
        config: &PostingConfig,
        bits: u32,
        expected: u64,
    ) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        let projections = u64::from(config.chars) | (u64::from(config.syllables) << 1);
        check_params(
            &link,
            prefix,
            &[
                ("postings_char_k", config.char_k as u64),
                ("postings_syllable_k", config.syllable_k as u64),
                ("postings_window", config.window as u64),
                ("postings_projections", projections),
            ],
        )?;
        let bits = recorded_bucket_bits(&link, prefix, BUCKET_BITS_FIELD, bits)?;
        Ok(RedisPostings {
            link,
            prefix: prefix.to_owned(),
            bits: std::sync::atomic::AtomicU32::new(bits),
            keep: config.common + 1,
            expected,
            filter: std::sync::RwLock::new(None),
        })
    }

    /// The filter's key. The name tells its layout (`b3`: three probes in a block of 512
    /// bits), so that a reader never probes a filter set in another layout, which would say
    /// "filed nowhere" of hashes that are filed.
    fn filter_key(&self) -> String {
        format!("{}:p:filter:b3", self.prefix)
    }

    /// The key of the filter's first layout (two probes anywhere in the filter), which readers
    /// no longer read: see [`RedisPostings::filter_has_room`].
    fn first_filter_key(&self) -> String {
        format!("{}:p:filter", self.prefix)
    }

    fn loaded_filter(&self) -> Option<Arc<HashFilter>> {
        self.filter
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads the index's [`HashFilter`] into this process, so that lookups skip the hashes
    /// filed nowhere; an index without one is read whole. Returns the filter's size in bits
    /// (0 without one). A reader calls this after reading the library generation it matches
    /// at: writers set a work's bits before the generation moves past it, so the filter then
    /// holds every work of that generation.
    pub fn load_filter(&self) -> Result<u64, IndexError> {
        let filter = self.read_filter()?.map(Arc::new);
        let bits = filter.as_ref().map_or(0, |f| f.bits());
        *self
            .filter
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = filter;
        Ok(bits)
    }

    /// The filter in Redis, read in slices of [`FILTER_BYTES_PER_READ`] into one buffer: a
    /// whole-value `GET` of a large library's filter (tens of megabytes) would briefly hold it
    /// two or three times over in the client's read buffers, and a worker's peak memory is
    /// what a deployment must provision. Bits set while it is read are harmless (they are only
    /// ever set); a filter replaced meanwhile (grown: it changes size) is read again.
    fn read_filter(&self) -> Result<Option<HashFilter>, IndexError> {
        let key = self.filter_key();
        for _ in 0..FILTER_READ_ATTEMPTS {
            let bits = self.shared_filter_bits()?;
            if bits == 0 {
                return Ok(None);
            }
            let len = (bits / 8) as usize;
            let mut bytes = Vec::with_capacity(len);
            let slices: Vec<(usize, usize)> = (0..len)
                .step_by(FILTER_BYTES_PER_READ)
                .map(|start| (start, (start + FILTER_BYTES_PER_READ).min(len) - 1))
                .collect();
            for group in slices.chunks(FILTER_READS_PER_BATCH) {
                let cmds: Vec<Cmd> = group
                    .iter()
                    .map(|&(start, end)| {
                        let mut range = redis::cmd("GETRANGE");
                        range.arg(&key).arg(start).arg(end);
                        range
                    })
                    .collect();
                let parts: Vec<Vec<u8>> = self.link.batch("read the postings filter", &cmds)?;
                for part in parts {
                    bytes.extend_from_slice(&part);
                }
            }
            if bytes.len() == len && self.shared_filter_bits()? == bits {
                return Ok(HashFilter::from_bytes(bytes));
            }
        }
        Err(IndexError::Backend(format!(
            "the postings filter under {:?} kept changing size while it was read: retry when \
             the library update under way is done",
            self.prefix
        )))
    }

    /// Size in bits of the filter in Redis (0 when there is none).
    fn shared_filter_bits(&self) -> Result<u64, IndexError> {
        let bytes: u64 = self.link.query(
            "measure the postings filter",
            redis::cmd("STRLEN").arg(self.filter_key()),
        )?;
        Ok(bytes * 8)
    }

    /// Sets the bits of `hashes` in the filter in Redis, before their postings are filed.
    /// Nothing to do for an index without a filter.
    fn set_filter_bits(&self, hashes: impl Iterator<Item = u64>) -> Result<(), IndexError> {
        let bits = self.shared_filter_bits()?;
        if bits == 0 {
            return Ok(());
        }
        let mut offsets: Vec<u64> = hashes
            .flat_map(|hash| HashFilter::probes_in(bits, hash))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let key = self.filter_key();
        for chunk in offsets.chunks(FILTER_BITS_PER_BATCH) {
            let cmds: Vec<Cmd> = chunk
                .chunks(FILTER_BITS_PER_COMMAND)
                .map(|offsets| {
                    let mut bitfield = redis::cmd("BITFIELD");
                    bitfield.arg(&key);
                    for offset in offsets {
                        bitfield.arg("SET").arg("u1").arg(offset).arg(1);
                    }
                    bitfield
                })
                .collect();
            self.link.batch::<Value>("set the postings filter", &cmds)?;
        }
        Ok(())
    }

    /// Whether the filter in Redis still has room for the postings filed
    /// ([`HashFilter::has_room_for`]); `true` for an index without a filter, which has nothing
    /// to grow.
    ///
    /// An index whose filter is still in the first layout (built before the filter's key named
    /// its layout) is read whole by readers of this one; it has no room either, so the writer
    /// builds the filter in this layout at its next library change.
    pub fn filter_has_room(&self) -> Result<bool, IndexError> {
        let bits = self.shared_filter_bits()?;
        if bits == 0 {
            let first: bool = self.link.query(
                "look for a postings filter of the first layout",
                redis::cmd("EXISTS").arg(self.first_filter_key()),
            )?;
            return Ok(!first);
        }
        Ok(HashFilter::bits_have_room_for(bits, self.len()? as u64))
    }

    /// Replaces the filter in Redis with `filter`, which holds every hash the index files
    /// (recomputed from the library's texts by the caller, under the writer's claim): for a
    /// filter grown too full ([`RedisPostings::filter_has_room`]), built anew sized for the
    /// postings filed now (`HashFilter::sized_for(index.len())`).
    pub fn write_filter(&self, filter: &HashFilter) -> Result<(), IndexError> {
        self.link.query::<Value>(
            "write the postings filter",
            redis::cmd("SET")
                .arg(self.filter_key())
                .arg(filter.as_bytes()),
        )?;
        self.drop_first_filter()
    }

    /// Deletes a filter of the first layout, which no reader reads once one in this layout
    /// is written.
    fn drop_first_filter(&self) -> Result<(), IndexError> {
        self.link.query::<Value>(
            "delete the postings filter of the first layout",
            redis::cmd("DEL").arg(self.first_filter_key()),
        )?;
        Ok(())
    }

    /// Bucket bits in use.
    pub fn bucket_bits(&self) -> u32 {
        self.bits.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The bucket of `hash` under the bits in use (a writer's: a reader takes the bits once per
    /// lookup, since another thread may refresh them).
    fn bucket(&self, hash: u64) -> u64 {
        bucket_at(self.bucket_bits(), hash)
    }

    fn bucket_key(&self, bucket: u64) -> String {
        self.bucket_key_at(self.bucket_bits(), bucket)
    }

    fn bucket_key_at(&self, bits: u32, bucket: u64) -> String {
        format!("{}:p:{{p{bits}:{bucket:x}}}", self.prefix)
    }

    /// The bucket bits the postings filed now should move to ([`rebucket_bits`]); `None`
    /// when the buckets are fine.
    pub fn overfull(&self) -> Result<Option<u32>, IndexError> {
        Ok(rebucket_bits(self.len()? as u64, self.bucket_bits()))
    }

    /// Records `bits` as the bucket bits in use, for postings a [`RedisPostings::loader_at`]
    /// just filed under them, and returns the bits used before. The caller moves the library
    /// generation next, then deletes the old buckets ([`RedisPostings::drop_buckets`]).
    pub fn switch_bits(&self, bits: u32) -> Result<u32, IndexError> {
        let old = self.bucket_bits();
        self.link.query::<Value>(
            "record the bucket bits",
            redis::cmd("HSET")
                .arg(crate::meta_key(&self.prefix))
                .arg(BUCKET_BITS_FIELD)
                .arg(bits),
        )?;
        self.bits.store(bits, std::sync::atomic::Ordering::Release);
        Ok(old)
    }

    /// Deletes the buckets filed under `bits`, once the index has moved to other bits
    /// ([`RedisPostings::switch_bits`]). Refuses to delete the buckets in use.
    pub fn drop_buckets(&self, bits: u32) -> Result<(), IndexError> {
        if bits == self.recorded_bits()? {
            return Err(IndexError::Backend(format!(
                "the buckets of {bits} bits under {:?} are in use",
                self.prefix
            )));
        }
        self.link
            .delete_matching(&format!("{}:p:{{p{bits}:*", self.prefix))
    }

    /// The bucket bits the index records now (another process may have re-bucketed it).
    fn recorded_bits(&self) -> Result<u32, IndexError> {
        let bits: Option<u32> = self.link.query(
            "read the bucket bits",
            redis::cmd("HGET")
                .arg(crate::meta_key(&self.prefix))
                .arg(BUCKET_BITS_FIELD),
        )?;
        match bits {
            Some(bits) if (1..=32).contains(&bits) => Ok(bits),
            found => Err(IndexError::Corrupt(format!(
                "the index under {:?} records {BUCKET_BITS_FIELD} {found:?}: rebuild it",
                self.prefix
            ))),
        }
    }

    fn count_key(&self) -> String {
        format!("{}:p:count", self.prefix)
    }

    /// One script per bucket the keys fall in, replacing the work's postings there with
    /// `keys`' (none, to remove).
    fn refile(&self, work_id: WorkId, keys: &[Key], filing: bool) -> Result<(), IndexError> {
        let work = u32::try_from(work_id).map_err(|_| {
            IndexError::Corrupt(format!("work id {work_id} does not fit a packed posting"))
        })?;
        if filing {
            self.set_filter_bits(keys.iter().map(|k| k.hash))?;
        }
        let mut buckets: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for key in keys {
            let records = buckets.entry(self.bucket(key.hash)).or_default();
            if filing {
                let posting = Posting {
                    work_id,
                    position: key.position,
                };
                pack(key.hash, posting, records)?;
            }
        }
        let cmds: Vec<Cmd> = buckets
            .iter()
            .map(|(&bucket, records)| {
                let mut eval = redis::cmd("EVAL");
                eval.arg(REFILE_WORK)
                    .arg(1)
                    .arg(self.bucket_key(bucket))
                    .arg(&work.to_be_bytes()[..])
                    .arg(&records[..])
                    .arg(self.keep);
                eval
            })
            .collect();
        let changes: Vec<i64> = self.link.batch("file a work's postings", &cmds)?;
        let change: i64 = changes.iter().sum();
        if change != 0 {
            self.link.query::<Value>(
                "count the postings",
                redis::cmd("INCRBY").arg(self.count_key()).arg(change),
            )?;
        }
        Ok(())
    }
}

impl RedisPostings {
    /// Files many works at once into an index nobody reads yet (a build from scratch): their
    /// postings are grouped by bucket in this process, at most `common + 1` kept per hash, and
    /// each bucket is written with one `SET`, pipelined, where filing work by work runs a
    /// script per bucket and work. Buckets already holding postings are replaced. Returns the
    /// postings written.
    pub fn load(
        &mut self,
        works: impl IntoIterator<Item = (WorkId, Vec<Key>)>,
    ) -> Result<u64, IndexError> {
        let mut loader = self.loader();
        for (work_id, keys) in works {
            loader.add(work_id, &keys)?;
        }
        loader.finish()
    }

    /// Files works that hold no postings yet (new to the library), many at once: their
    /// postings are grouped by bucket, each bucket touched is read once (pipelined `GET`s) so
    /// that at most `common + 1` postings of one hash are kept, and the new records are
    /// appended (pipelined `APPEND`s). Filing work by work runs a script per bucket and work,
    /// about 700 for a work of 3,000 characters, each reading and rewriting its bucket; this
    /// sends two plain commands per bucket for the whole batch. A work that may already hold
    /// postings must be filed with [`PostingIndex::insert_work`], which replaces them:
    /// appending it would store it twice. Library changes are made one at a time (the caller
    /// serializes them), so no other writer appends between the read and the append. Returns
    /// the postings appended.
    pub fn append_new_works(&mut self, works: &[(WorkId, Vec<Key>)]) -> Result<u64, IndexError> {
        self.set_filter_bits(
            works
                .iter()
                .flat_map(|(_, keys)| keys.iter().map(|k| k.hash)),
        )?;
        let mut buckets: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (work_id, keys) in works {
            for key in keys {
                let posting = Posting {
                    work_id: *work_id,
                    position: key.position,
                };
                pack(
                    key.hash,
                    posting,
                    buckets.entry(self.bucket(key.hash)).or_default(),
                )?;
            }
        }
        let buckets: Vec<(u64, Vec<u8>)> = buckets.into_iter().collect();
        let mut appended = 0u64;
        for chunk in buckets.chunks(BUCKETS_PER_BATCH) {
            let keys: Vec<String> = chunk.iter().map(|(b, _)| self.bucket_key(*b)).collect();
            let held = self.link.get_many("read the buckets to append to", &keys)?;
            let mut appends = Vec::with_capacity(chunk.len());
            for ((key, (bucket, new)), held) in keys.iter().zip(chunk).zip(held) {
                let held = match held {
                    Value::BulkString(bytes) if bytes.len() % PACKED_POSTING == 0 => bytes,
                    Value::Nil => Vec::new(),
                    other => {
                        return Err(IndexError::Corrupt(format!(
                            "posting bucket {bucket:x} under {:?} is not whole packed \
                             postings: {other:?}",
                            self.prefix
                        )));
                    }
                };
                let records = self.capped_after(&held, new);
                if records.is_empty() {
                    continue;
                }
                appended += (records.len() / PACKED_POSTING) as u64;
                let mut append = redis::cmd("APPEND");
                append.arg(key).arg(records);
                appends.push(append);
            }
            self.link.batch::<Value>("append postings", &appends)?;
        }
        if appended > 0 {
            self.link.query::<Value>(
                "count the postings",
                redis::cmd("INCRBY").arg(self.count_key()).arg(appended),
            )?;
        }
        Ok(appended)
    }

    /// A bulk load ([`RedisPostings::load`]) fed one work at a time, so a caller reading works
    /// from a store keeps only their packed postings (12 bytes each), not their keys.
    pub fn loader(&mut self) -> PostingLoader<'_> {
        let (bits, expected) = (self.bucket_bits(), self.expected);
        self.loader_at(bits, expected)
    }

    /// A bulk load under `bits` bucket bits with a filter for about `expected` postings: for
    /// filing every posting again under more bits ([`rebucket_bits`]) while readers still read
    /// the buckets in use. Its buckets are read once [`RedisPostings::switch_bits`] records
    /// `bits`.
    pub fn loader_at(&mut self, bits: u32, expected: u64) -> PostingLoader<'_> {
        PostingLoader {
            postings: self,
            bits,
            buckets: std::collections::HashMap::new(),
            filter: HashFilter::sized_for(expected),
        }
    }

    /// The records of `new` a bucket holding `held` may take: at most `keep` records of one
    /// hash check in both together, `held`'s first.
    fn capped_after(&self, held: &[u8], new: &[u8]) -> Vec<u8> {
        let mut per_check: std::collections::HashMap<&[u8], usize> =
            std::collections::HashMap::new();
        for record in held.chunks_exact(PACKED_POSTING) {
            *per_check.entry(&record[..4]).or_default() += 1;
        }
        let mut kept = Vec::with_capacity(new.len());
        for record in new.chunks_exact(PACKED_POSTING) {
            let n = per_check.entry(&record[..4]).or_default();
            if *n < self.keep {
                *n += 1;
                kept.extend_from_slice(record);
            }
        }
        kept
    }

    /// `records` with at most `keep` records of one hash check, in their order.
    fn capped(&self, records: &[u8]) -> Vec<u8> {
        self.capped_after(&[], records)
    }
}

/// Postings gathered for one bulk write (see [`RedisPostings::loader`]): nothing is written
/// until [`PostingLoader::finish`].
pub struct PostingLoader<'a> {
    postings: &'a mut RedisPostings,
    /// Bucket bits the postings are filed under.
    bits: u32,
    buckets: std::collections::HashMap<u64, Vec<u8>>,
    /// The filter of the hashes gathered, sized for the postings the index expected.
    filter: HashFilter,
}

impl PostingLoader<'_> {
    /// Adds one work's postings (each work once: a bulk load replaces nothing).
    pub fn add(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError> {
        for key in keys {
            let posting = Posting {
                work_id,
                position: key.position,
            };
            let bucket = bucket_at(self.bits, key.hash);
            pack(key.hash, posting, self.buckets.entry(bucket).or_default())?;
            self.filter.insert(key.hash);
        }
        Ok(())
    }

    /// Writes the filter, then every bucket gathered, one `SET` each, pipelined, and the
    /// postings count. Returns the postings written. A filter the postings overfilled (far
    /// more than expected) is left out: the index is then read whole until
    /// [`RedisPostings::write_filter`] writes one.
    pub fn finish(self) -> Result<u64, IndexError> {
        let postings = self.postings;
        let gathered: usize = self
            .buckets
            .values()
            .map(|b| b.len() / PACKED_POSTING)
            .sum();
        let mut filter_cmd = redis::cmd(if self.filter.has_room_for(gathered as u64) {
            "SET"
        } else {
            "DEL"
        });
        filter_cmd.arg(postings.filter_key());
        if self.filter.has_room_for(gathered as u64) {
            filter_cmd.arg(self.filter.as_bytes());
        }
        postings
            .link
            .query::<Value>("write the postings filter", &filter_cmd)?;
        postings.drop_first_filter()?;
        let mut written = 0u64;
        let mut cmds = Vec::with_capacity(BUCKETS_PER_BATCH);
        let mut buckets: Vec<(u64, Vec<u8>)> = self.buckets.into_iter().collect();
        buckets.sort_unstable_by_key(|(bucket, _)| *bucket);
        for (bucket, records) in buckets {
            let records = postings.capped(&records);
            written += (records.len() / PACKED_POSTING) as u64;
            let mut set = redis::cmd("SET");
            set.arg(postings.bucket_key_at(self.bits, bucket))
                .arg(records);
            cmds.push(set);
            if cmds.len() == BUCKETS_PER_BATCH {
                postings.link.batch::<Value>("load the postings", &cmds)?;
                cmds.clear();
            }
        }
        postings.link.batch::<Value>("load the postings", &cmds)?;
        postings.link.query::<Value>(
            "count the postings",
            redis::cmd("SET").arg(postings.count_key()).arg(written),
        )?;
        Ok(written)
    }
}

/// Where the bucket bits are recorded in the index's metadata.
const BUCKET_BITS_FIELD: &str = "p_bucket_bits";

/// The bucket of `hash` among `2^bits`.
fn bucket_at(bits: u32, hash: u64) -> u64 {
    hash >> (64 - bits)
}

/// Bucket writes sent in one pipeline by [`RedisPostings::load`].
const BUCKETS_PER_BATCH: usize = 10_000;

/// Bytes of the filter read by one `GETRANGE`, slices read in one pipeline, and reads of a
/// filter that changed size meanwhile before giving up.
const FILTER_BYTES_PER_READ: usize = 1 << 20;
const FILTER_READS_PER_BATCH: usize = 4;
const FILTER_READ_ATTEMPTS: usize = 3;

/// Filter bits set by one `BITFIELD` command, and in one pipeline.
const FILTER_BITS_PER_COMMAND: usize = 512;
const FILTER_BITS_PER_BATCH: usize = 64 * FILTER_BITS_PER_COMMAND;

impl PostingIndex for RedisPostings {
    fn insert_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError> {
        self.refile(work_id, keys, true)
    }

    fn remove_work(&mut self, work_id: WorkId, keys: &[Key]) -> Result<(), IndexError> {
        self.refile(work_id, keys, false)
    }

    fn lookup(
        &self,
        hashes: &[u64],
        limit: usize,
        out: &mut Vec<Vec<Posting>>,
    ) -> Result<(), IndexError> {
        out.clear();
        if hashes.is_empty() {
            return Ok(());
        }
        // Hashes the filter says are filed nowhere are not read; each bucket is read once,
        // however many of the page's hashes fall in it.
        let filter = self.loaded_filter();
        let held_maybe: Vec<bool> = hashes
            .iter()
            .map(|&hash| filter.as_ref().is_none_or(|f| f.may_hold(hash)))
            .collect();
        let bits = self.bucket_bits();
        let mut buckets: Vec<u64> = hashes
            .iter()
            .zip(&held_maybe)
            .filter(|(_, maybe)| **maybe)
            .map(|(&h, _)| bucket_at(bits, h))
            .collect();
        buckets.sort_unstable();
        buckets.dedup();
        if buckets.is_empty() {
            out.resize_with(hashes.len(), Vec::new);
            return Ok(());
        }
        let keys: Vec<String> = buckets
            .iter()
            .map(|&b| self.bucket_key_at(bits, b))
            .collect();
        let replies = self.link.get_many("look up a page's postings", &keys)?;
        let mut held: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (bucket, reply) in buckets.into_iter().zip(replies) {
            match reply {
                Value::BulkString(bytes) if bytes.len() % PACKED_POSTING == 0 => {
                    held.insert(bucket, bytes);
                }
                Value::Nil => {}
                other => {
                    return Err(IndexError::Corrupt(format!(
                        "posting bucket {bucket:x} under {:?} is not whole packed postings: \
                         {other:?}",
                        self.prefix
                    )));
                }
            }
        }
        out.extend(hashes.iter().zip(&held_maybe).map(|(&hash, &maybe)| {
            if !maybe {
                return Vec::new();
            }
            held.get(&bucket_at(bits, hash))
                .map(|bytes| unpack(bytes, hash).take(limit + 1).collect())
                .unwrap_or_default()
        }));
        Ok(())
    }

    fn refresh(&self) -> Result<(), IndexError> {
        // The bits before the filter: a re-bucketing writes its filter before its bits.
        let bits = self.recorded_bits()?;
        self.bits.store(bits, std::sync::atomic::Ordering::Release);
        self.load_filter().map(|_| ())
    }

    fn len(&self) -> Result<usize, IndexError> {
        let count: Option<i64> = self.link.query(
            "count the postings",
            redis::cmd("GET").arg(self.count_key()),
        )?;
        Ok(count.unwrap_or(0).max(0) as usize)
    }
}
