//! The matcher's candidate indexes kept in Redis, so that every process of a production
//! deployment (web, match workers, the daily dedup) shares one copy of them instead of each
//! building them from the whole library at start: the SimHash windows ([`RedisIndex`]), the
//! MinHash LSH bands ([`RedisMinHashIndex`]) and the DNA codes ([`RedisDnaIndex`]), all under
//! one key prefix, on one server or a Redis Cluster.
//!
//! [`RedisIndex`] implements [`copytrace_matcher::Index`] with the same pigeonhole scheme as the
//! in-memory [`copytrace_matcher::SimHashIndex`]: the 64-bit signature is cut into `k + 1`
//! blocks, two signatures within Hamming distance `k` agree exactly on at least one block, so a
//! query reads `k + 1` buckets and checks the full distance only for what it finds there.
//! Recall is exact for every distance up to `k`. The MinHash and DNA indexes file windows the
//! way their in-memory counterparts do and answer the same windows (tested against them).
//!
//! # Servers
//!
//! The URL names one server (`redis://[:password@]host[:port][/db]`) or, as several such URLs
//! separated by commas, the seed nodes of a Redis Cluster. Every command names one key (or, on a
//! single server, several keys read with `MGET`), so the same layout works on both: on a
//! cluster a page's probes go to each node as one pipeline.
//!
//! # Key layout
//!
//! Every key starts with a configurable prefix (default [`DEFAULT_PREFIX`]), so several
//! libraries, or the tests, can share one server. Braces mark the Redis Cluster *hash tag*: only
//! the part inside them decides the slot.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{prefix}:b:{b<block>:<value hex>}` | string | SimHash: packed entries, concatenated, whose signature has `value` in block `block` |
//! | `{prefix}:w:{w<work id>}` | set | SimHash: packed entries of one work, to find its buckets on removal |
//! | `{prefix}:works` | set | SimHash: ids of the works indexed (for [`Index::len`]) |
//! | `{prefix}:m:…`, `{prefix}:mw:…`, `{prefix}:d:…`, `{prefix}:dw:…` | | the MinHash and DNA indexes ([`RedisMinHashIndex`], [`RedisDnaIndex`]): buckets, per-work bucket lists and window counts, laid out alike |
//! | `{prefix}:s:works`, `{prefix}:k:…`, `{prefix}:kw:…` | | the library statistics verification reads ([`RedisLibraryStats`]): the sense index of laundered copies |
//! | `{prefix}:p:…` | | the winnowed k-gram postings ([`RedisPostings`]): packed postings in buckets by hash, their count, and a filter of the hashes filed; the `kgram` candidate source, and what tells library boilerplate |
//! | `{prefix}:meta` | hash | the parameters every index was written with (`layout`, `max_distance`, `minhash_*`, `dna_*`); `generation`, the library generation it reflects (empty while it is rebuilt or replaced works are refiled) |
//!
//! A packed SimHash entry is 20 bytes: signature (u64), work id (i64), window ordinal (u32),
//! all big-endian. The whole signature is stored in the bucket so the distance is checked on
//! the client without a second lookup.
//!
//! MinHash and DNA windows are filed under their exact table key (one band hash or block of
//! digits per table) as a field of a bucket hash; the bucket is picked by the key's top bits, so
//! those indexes hold `tables · 2^bits` keys, with `bits` chosen for the library's size when
//! they are first written ([`bucket_bits_for`]), and a probe reads only its own key's records.
//!
//! **One key per block probe.** A lookup of one signature reads exactly `k + 1` keys, and
//! [`Index::query_many`] reads the probes of every window of a page in one batch: a few
//! pipelined `MGET`s (1,024 keys each) on one server, one pipeline per node on a cluster.
//!
//! **Hash tags per bucket, not per block.** The `k + 1` buckets a query reads are different
//! buckets by construction, so no tag could put them on one node; grouping a whole block under
//! one tag would pile a quarter of the index (for `k = 3`) onto one slot. Tagging each bucket on
//! its own spreads the `(k + 1) · 2^(64/(k+1))` possible buckets (262 144 for `k = 3`) evenly
//! over a cluster's slots. Per-work keys are tagged by work for the same reason.
//!
//! **Strings, not sets.** A bucket is one string of fixed-size records, appended to on insert:
//! a page's probes are then plain `MGET`s, which Redis answers several times faster than as many
//! `SMEMBERS` (measured in `docs/benchmarks.md`). Removing a work runs a small server-side
//! script per bucket (one key each, so it runs on a cluster) that drops the records carrying
//! its id.
//!
//! # Consistency
//!
//! No write spans keys in one transaction: a cluster cannot offer that across nodes. Instead
//! every write is idempotent in effect and ordered so that a run stopped half way is finished
//! by running it again:
//!
//! - a SimHash insert appends only the entries its work's set does not hold yet, then records
//!   them in that set; a MinHash or DNA insert removes whatever the work had, appends the list
//!   of its buckets, then appends its records to them (a bucket listed twice is cleaned once).
//!   Inserting a work twice stores it once.
//! - a removal drops the work's records bucket by bucket, then its bookkeeping keys.
//!
//! Readers never see a half-written library as complete: a rebuild, or an update that replaces
//! or withdraws works, blanks the `generation` first and writes the library generation it
//! reached last; an update that only adds works writes the new generation last without
//! blanking it, so match workers keep matching while a catalog is imported (the works it lacks
//! were added after the pages they are matching were marked). Workers refuse an index whose
//! generation is older than the library's last replacement or newer than the library
//! (`copytrace_service::index`). A stray record left by a stopped run names a work id, and the
//! matcher drops candidates it does not know.

mod buckets;
mod link;
mod postings;
mod stats;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use copytrace_matcher::{CandidateMethods, Hit, Index, IndexError, SegmentRef, WorkId};
use redis::{Cmd, Value};

pub use buckets::{DEFAULT_BUCKET_BITS, RedisDnaIndex, RedisMinHashIndex, bucket_bits_for};
use link::Link;
pub use link::{commands, requests};
pub use postings::{
    OVERFULL_BUCKET, POSTINGS_PER_BUCKET, PostingLoader, RedisPostings, posting_bucket_bits_for,
    rebucket_bits,
};
pub use stats::RedisLibraryStats;

/// The key prefix used when none is configured.
pub const DEFAULT_PREFIX: &str = "copytrace";

/// Version of the key layout written to `{prefix}:meta`, so a future layout can refuse to read
/// an old one instead of misreading it. Layout 2 added the MinHash and DNA indexes, layout 3
/// the library statistics ([`RedisLibraryStats`]): a worker reading a layout-2 index would find
/// no common seed and take boilerplate for copied text. Layout 4 keeps the MinHash and DNA
/// indexes' per-work bucket lists as strings of packed ids instead of sets (about a fifth of
/// the memory), which a layout-3 reader would fail to read. Layout 5 adds the k-gram postings
/// (which also tell boilerplate), drops the seed counts and keeps the sense index's lists as
/// strings of packed ids: a layout-4 index has no postings, and its sense sets are of a type a
/// layout-5 reader refuses. Layout 6 names each postings bucket with its bucket bits, so the
/// postings can be filed again under more bits as the library grows: a layout-6 reader would
/// find none of a layout-5 index's buckets.
pub const LAYOUT_VERSION: u32 = 6;

/// Bytes of one packed entry: signature, work id, ordinal.
const ENTRY_LEN: usize = 20;

/// The URL with any password replaced, safe to put in error messages and logs.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        // An unparsable URL may still hold a secret: show only its scheme.
        Err(_) => match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://…"),
            None => "<invalid URL>".to_owned(),
        },
    }
}

/// A prefix must not contain glob characters (it is used in `SCAN MATCH`), braces (they would
/// become the hash tag) or `:` (so that clearing `a` cannot touch `a:b`).
fn validate_prefix(prefix: &str) -> Result<(), IndexError> {
    let valid = !prefix.is_empty()
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if valid {
        Ok(())
    } else {
        Err(IndexError::Backend(format!(
            "invalid Redis key prefix {prefix:?}: use letters, digits, '_', '-' and '.' only"
        )))
    }
}

/// The pigeonhole blocks of a 64-bit signature: `(shift, mask)` of each, the same cut as
/// `SimHashIndex` so both indexes answer the same queries.
fn blocks(max_distance: u32) -> Vec<(u32, u64)> {
    let count = max_distance + 1;
    (0..count)
        .map(|b| {
            let start = 64 * b / count;
            let end = 64 * (b + 1) / count;
            let width = end - start;
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            (start, mask)
        })
        .collect()
}

fn pack(fingerprint: u64, segment: SegmentRef) -> [u8; ENTRY_LEN] {
    let mut entry = [0u8; ENTRY_LEN];
    entry[..8].copy_from_slice(&fingerprint.to_be_bytes());
    entry[8..16].copy_from_slice(&segment.work_id.to_be_bytes());
    entry[16..].copy_from_slice(&segment.ordinal.to_be_bytes());
    entry
}

fn unpack(entry: &[u8]) -> Result<(u64, SegmentRef), IndexError> {
    let entry: &[u8; ENTRY_LEN] = entry.try_into().map_err(|_| {
        IndexError::Corrupt(format!(
            "index entry of {} bytes, expected {ENTRY_LEN}",
            entry.len()
        ))
    })?;
    let fingerprint = u64::from_be_bytes(entry[..8].try_into().expect("8 bytes"));
    let work_id = i64::from_be_bytes(entry[8..16].try_into().expect("8 bytes"));
    let ordinal = u32::from_be_bytes(entry[16..].try_into().expect("4 bytes"));
    Ok((fingerprint, SegmentRef { work_id, ordinal }))
}

/// The packed entries of one bucket: a string of `entry_len`-byte records, or nothing.
pub(crate) fn records(reply: Value, entry_len: usize) -> Result<Vec<Vec<u8>>, IndexError> {
    let bytes = match reply {
        Value::BulkString(bytes) => bytes,
        Value::Nil => return Ok(Vec::new()),
        other => {
            return Err(IndexError::Corrupt(format!(
                "expected a bucket of packed entries, got {other:?}"
            )));
        }
    };
    if bytes.len() % entry_len != 0 {
        return Err(IndexError::Corrupt(format!(
            "a bucket of {} bytes is not a whole number of {entry_len}-byte entries",
            bytes.len()
        )));
    }
    Ok(bytes.chunks(entry_len).map(<[u8]>::to_vec).collect())
}

/// Removes one work's records from a bucket string, server side: keeps the 20-byte records
/// whose work id (bytes 9..16) differs from `ARGV[1]`, and deletes the key when none is left.
/// One key per call, so it runs on a cluster.
const REMOVE_FROM_BUCKET: &str = r"
local bucket = redis.call('GET', KEYS[1])
if not bucket then return 0 end
local kept = {}
for i = 1, #bucket, 20 do
  local entry = string.sub(bucket, i, i + 19)
  if string.sub(entry, 9, 16) ~= ARGV[1] then kept[#kept + 1] = entry end
end
if #kept == 0 then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], table.concat(kept)) end
return 1
";

/// The `EVAL` removing `work_id`'s records from one bucket.
fn remove_from_bucket(bucket: &str, work_id: WorkId) -> Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(REMOVE_FROM_BUCKET)
        .arg(1)
        .arg(bucket)
        .arg(&work_id.to_be_bytes()[..]);
    eval
}

/// A command with its arguments.
pub(crate) fn command<'a>(name: &str, args: impl IntoIterator<Item = &'a [u8]>) -> Cmd {
    let mut cmd = redis::cmd(name);
    for arg in args {
        cmd.arg(arg);
    }
    cmd
}

/// Pigeonhole SimHash index in Redis. See the [crate documentation](crate) for the key layout.
pub struct RedisIndex {
    link: Arc<Link>,
    prefix: String,
    max_distance: u32,
    blocks: Vec<(u32, u64)>,
}

impl fmt::Debug for RedisIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisIndex")
            .field("url", &self.link.shown_url())
            .field("prefix", &self.prefix)
            .field("max_distance", &self.max_distance)
            .finish_non_exhaustive()
    }
}

/// What an index's metadata says of the library state it reflects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexedGeneration {
    /// Being rebuilt, or replaced or withdrawn works being refiled: not to be trusted until
    /// the writer records a generation again.
    Updating,
    /// Complete for every change of the library up to this generation.
    At(i64),
}

impl IndexedGeneration {
    fn parse(recorded: Option<&str>, prefix: &str) -> Result<Option<Self>, IndexError> {
        match recorded {
            None => Ok(None),
            Some("") => Ok(Some(IndexedGeneration::Updating)),
            Some(text) => text
                .parse()
                .map(|g| Some(IndexedGeneration::At(g)))
                .map_err(|_| {
                    IndexError::Corrupt(format!(
                        "the index under {prefix:?} records the library generation {text:?}"
                    ))
                }),
        }
    }
}

impl RedisIndex {
    /// Connects to the Redis server at `url` (`redis://[:password@]host[:port][/db]`, or the
    /// comma-separated seed nodes of a Redis Cluster) and opens the index stored under
    /// `prefix`, answering queries within `max_distance` bits (at most 63). Fails if the server
    /// cannot be reached or if the keys under `prefix` were written for another `max_distance`
    /// (their blocks would not match): such an index must be cleared and rebuilt.
    pub fn connect(url: &str, prefix: &str, max_distance: u32) -> Result<Self, IndexError> {
        let index = RedisIndex::open(url, prefix, max_distance)?;
        index.check_meta()?;
        Ok(index)
    }

    /// The index's handle; nothing is sent to the server yet (connecting is lazy).
    fn open(url: &str, prefix: &str, max_distance: u32) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        let max_distance = max_distance.min(63);
        Ok(RedisIndex {
            link: Arc::new(Link::open(url)?),
            prefix: prefix.to_owned(),
            max_distance,
            blocks: blocks(max_distance),
        })
    }

    /// Opens the index to replace it: a rebuild clears the namespace ([`RedisIndex::clear`])
    /// before writing. [`RedisIndex::connect`] refuses an index of an older layout or another
    /// distance and says to rebuild it, so the rebuild must not refuse it too. An index of a
    /// newer layout than this version's is still refused: replacing it would leave every newer
    /// process an index it refuses.
    pub fn connect_to_replace(
        url: &str,
        prefix: &str,
        max_distance: u32,
    ) -> Result<Self, IndexError> {
        let index = RedisIndex::open(url, prefix, max_distance)?;
        // One key, so one node of a cluster; this is also where a server that cannot be
        // reached is reported.
        let layout: Option<u64> = index.link.query(
            "read the index metadata",
            redis::cmd("HGET").arg(index.meta_key()).arg("layout"),
        )?;
        if let Some(layout) = layout.filter(|&layout| layout > u64::from(LAYOUT_VERSION)) {
            return Err(IndexError::Corrupt(format!(
                "the index under {prefix:?} at {} was written with layout {layout} by a newer \
                 version; this one writes layout {LAYOUT_VERSION} and would leave the newer \
                 version an index it refuses: rebuild it with the newer version, or use \
                 another prefix",
                index.link.shown_url()
            )));
        }
        Ok(index)
    }

    /// The MinHash LSH index kept under the same prefix, on the same connection, for windows
    /// signed with `config`'s permutation count (see [`RedisMinHashIndex`]).
    pub fn minhash(
        &self,
        config: &copytrace_matcher::LshConfig,
    ) -> Result<RedisMinHashIndex, IndexError> {
        self.minhash_sized(config, 0)
    }

    /// [`RedisIndex::minhash`], sized for about `windows` windows if it is new (see
    /// [`bucket_bits_for`]): what a build that knows the library's size opens.
    pub fn minhash_sized(
        &self,
        config: &copytrace_matcher::LshConfig,
        windows: u64,
    ) -> Result<RedisMinHashIndex, IndexError> {
        RedisMinHashIndex::open(
            self.link.clone(),
            &self.prefix,
            config,
            bucket_bits_for(windows),
        )
    }

    /// The DNA index kept under the same prefix, on the same connection, for codes of `levels`
    /// answered within `max_distance` (see [`RedisDnaIndex`]).
    pub fn dna(&self, levels: u8, max_distance: u32) -> Result<RedisDnaIndex, IndexError> {
        self.dna_sized(levels, max_distance, 0)
    }

    /// [`RedisIndex::dna`], sized for about `windows` DNA windows if it is new.
    pub fn dna_sized(
        &self,
        levels: u8,
        max_distance: u32,
        windows: u64,
    ) -> Result<RedisDnaIndex, IndexError> {
        RedisDnaIndex::open(
            self.link.clone(),
            &self.prefix,
            levels,
            max_distance,
            bucket_bits_for(windows),
        )
    }

    /// The winnowed k-gram postings kept under the same prefix, for keys selected with `config`
    /// (refused when they were filed with another one): what a match worker reads, with the
    /// index's filter loaded ([`RedisPostings::load_filter`]).
    pub fn postings(
        &self,
        config: &copytrace_matcher::PostingConfig,
    ) -> Result<RedisPostings, IndexError> {
        let postings = self.postings_sized(config, 0)?;
        postings.load_filter()?;
        Ok(postings)
    }

    /// The winnowed k-gram postings kept under the same prefix, on the same connection, for
    /// keys selected with `config` (see [`RedisPostings`]), sized for about `postings` postings
    /// if new (see [`posting_bucket_bits_for`]).
    pub fn postings_sized(
        &self,
        config: &copytrace_matcher::PostingConfig,
        postings: u64,
    ) -> Result<RedisPostings, IndexError> {
        RedisPostings::open(
            self.link.clone(),
            &self.prefix,
            config,
            posting_bucket_bits_for(postings),
            postings,
        )
    }

    /// The library statistics kept under the same prefix (the sense index; see
    /// [`RedisLibraryStats`]).
    pub fn statistics(&self) -> Result<RedisLibraryStats, IndexError> {
        RedisLibraryStats::open(self.link.clone(), &self.prefix)
    }

    /// The distance this index answers for.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// The key prefix of this index.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Number of keys one signature's lookup reads (`k + 1`); what a benchmark counts as
    /// probes.
    pub fn probes_per_query(&self) -> usize {
        self.blocks.len()
    }

    /// The bucket key of `value` in block `block`.
    pub fn bucket_key(&self, block: usize, value: u64) -> String {
        format!("{}:b:{{b{block}:{value:x}}}", self.prefix)
    }

    /// The key listing one work's entries.
    pub fn work_key(&self, work_id: WorkId) -> String {
        format!("{}:w:{{w{work_id}}}", self.prefix)
    }

    fn works_key(&self) -> String {
        format!("{}:works", self.prefix)
    }

    fn meta_key(&self) -> String {
        meta_key(&self.prefix)
    }

    fn block(&self, index: usize, fingerprint: u64) -> u64 {
        let (shift, mask) = self.blocks[index];
        fingerprint >> shift & mask
    }

    /// Deletes every key of this index and of the MinHash and DNA indexes under the same prefix
    /// (the whole namespace, on every node of a cluster) and writes its metadata again: the
    /// first step of a rebuild. Other prefixes on the same server are untouched.
    pub fn clear(&mut self) -> Result<(), IndexError> {
        self.delete_namespace()?;
        self.check_meta()
    }

    /// Deletes every key under the prefix, metadata included, leaving nothing of this index
    /// behind (what tests and a decommissioned library need; a rebuild uses
    /// [`RedisIndex::clear`]).
    pub fn delete_namespace(&self) -> Result<(), IndexError> {
        self.link.delete_matching(&format!("{}:*", self.prefix))
    }

    /// Records the library generation the index reflects (`generation` in `{prefix}:meta`;
    /// see `copytrace_store::LibraryState`), or (`None`) that it is being rebuilt or that
    /// replaced works are being refiled, so match workers wait. Cleared with the rest of the
    /// namespace, so an interrupted rebuild leaves no generation behind.
    pub fn set_library_generation(&self, generation: Option<i64>) -> Result<(), IndexError> {
        self.link.query(
            "record the library generation",
            redis::cmd("HSET")
                .arg(self.meta_key())
                .arg("generation")
                .arg(generation.map_or(String::new(), |g| g.to_string())),
        )
    }

    /// Claims the right to build a fresh index for `seconds` (`SET {prefix}:building NX EX`):
    /// `false` when another process holds it. Building from an empty index inserts without
    /// clearing, and two builders must not write at once. A crashed
    /// builder's claim expires; `clear` drops it with the rest of the namespace.
    pub fn claim_build(&self, seconds: u64) -> Result<bool, IndexError> {
        let claimed: Option<String> = self.link.query(
            "claim the index build",
            redis::cmd("SET")
                .arg(format!("{}:building", self.prefix))
                .arg(std::process::id())
                .arg("NX")
                .arg("EX")
                .arg(seconds.max(1)),
        )?;
        Ok(claimed.is_some())
    }

    /// Extends a build claim to `seconds` from now, if one is held (`SET … XX EX`): a builder
    /// renews its claim as it goes, so the claim can be short and a killed builder's claim
    /// lapses soon. Does nothing when no claim exists (an `index rebuild` holds none).
    pub fn renew_build(&self, seconds: u64) -> Result<(), IndexError> {
        let _: Option<String> = self.link.query(
            "renew the index build claim",
            redis::cmd("SET")
                .arg(format!("{}:building", self.prefix))
                .arg(std::process::id())
                .arg("XX")
                .arg("EX")
                .arg(seconds.max(1)),
        )?;
        Ok(())
    }

    /// Marks a build of a fresh index as under way (`{prefix}:fresh-build`), until
    /// [`RedisIndex::finish_fresh_build`]: a builder that dies or fails half-way leaves the
    /// mark, and the next process to load the index builds it again from scratch instead of
    /// refusing it forever.
    pub fn mark_fresh_build(&self) -> Result<(), IndexError> {
        self.link.query(
            "mark a fresh index build",
            redis::cmd("SET")
                .arg(format!("{}:fresh-build", self.prefix))
                .arg(std::process::id()),
        )
    }

    /// Whether a fresh build was started and not finished ([`RedisIndex::mark_fresh_build`]).
    pub fn fresh_build_unfinished(&self) -> Result<bool, IndexError> {
        let exists: i64 = self.link.query(
            "read the fresh build mark",
            redis::cmd("EXISTS").arg(format!("{}:fresh-build", self.prefix)),
        )?;
        Ok(exists > 0)
    }

    /// Ends a fresh build: the index is complete (its generation recorded).
    pub fn finish_fresh_build(&self) -> Result<(), IndexError> {
        self.link.query(
            "end the fresh index build",
            redis::cmd("DEL").arg(format!("{}:fresh-build", self.prefix)),
        )
    }

    /// [`RedisIndex::clear`], keeping a build claim: what a builder that holds the claim does
    /// before building a half-built fresh index again, without letting another builder in.
    pub fn clear_keeping_build_claim(&mut self) -> Result<(), IndexError> {
        let claim = format!("{}:building", self.prefix);
        self.link
            .delete_matching_except(&format!("{}:*", self.prefix), &[&claim])?;
        self.check_meta()
    }

    /// Gives up a claim taken by [`RedisIndex::claim_build`].
    pub fn release_build(&self) -> Result<(), IndexError> {
        self.link.query(
            "release the index build",
            redis::cmd("DEL").arg(format!("{}:building", self.prefix)),
        )
    }

    /// How many works the index holds windows of (one `SCARD`, whatever the library's size;
    /// [`Index::len`] counts windows and reads every work's set).
    pub fn work_count(&self) -> Result<usize, IndexError> {
        self.link.query(
            "count the indexed works",
            redis::cmd("SCARD").arg(self.works_key()),
        )
    }

    /// Records that `works`'s ids are in the library the index holds, without SimHash windows:
    /// what whoever files a work does when the SimHash source is not in use, so that
    /// [`RedisIndex::work_count`] still tells an index that holds works from a fresh one.
    pub fn list_works(&self, works: &[WorkId]) -> Result<(), IndexError> {
        if works.is_empty() {
            return Ok(());
        }
        self.link
            .query::<Value>("list the indexed works", &self.works_command("SADD", works))?;
        Ok(())
    }

    /// `name` (`SADD`, `SMISMEMBER`) on the list of works, with `works`' ids.
    fn works_command(&self, name: &str, works: &[WorkId]) -> Cmd {
        let ids: Vec<String> = works.iter().map(ToString::to_string).collect();
        command(
            name,
            [self.works_key().as_bytes()]
                .into_iter()
                .chain(ids.iter().map(String::as_bytes)),
        )
    }

    /// Whether each of `works` is listed in the index (filed by an earlier change of the
    /// library): one `SMISMEMBER`.
    pub fn listed_works(&self, works: &[WorkId]) -> Result<Vec<bool>, IndexError> {
        if works.is_empty() {
            return Ok(Vec::new());
        }
        self.link.query(
            "look up the indexed works",
            &self.works_command("SMISMEMBER", works),
        )
    }

    /// Records which candidate sources the index was filed for (`sources` in `{prefix}:meta`),
    /// so that a worker configured for a source nobody filed (a `kgram` worker over an index
    /// built before that source existed) refuses the index instead of finding nothing in it.
    pub fn set_filed_sources(&self, sources: CandidateMethods) -> Result<(), IndexError> {
        self.link.query(
            "record the filed candidate sources",
            redis::cmd("HSET")
                .arg(self.meta_key())
                .arg("sources")
                .arg(sources.to_string()),
        )
    }

    /// The sources recorded by [`RedisIndex::set_filed_sources`]. An index written before the
    /// record existed holds the four sources every writer filed then
    /// (`simhash+minhash+dna+sense`).
    pub fn filed_sources(&self) -> Result<CandidateMethods, IndexError> {
        let recorded: Option<String> = self.link.query(
            "read the filed candidate sources",
            redis::cmd("HGET").arg(self.meta_key()).arg("sources"),
        )?;
        match recorded {
            None => Ok(CandidateMethods::SIMHASH
                | CandidateMethods::MINHASH
                | CandidateMethods::DNA
                | CandidateMethods::SENSE),
            Some(recorded) => recorded.parse().map_err(|_| {
                IndexError::Corrupt(format!(
                    "the index under {:?} records unknown candidate sources {recorded:?}",
                    self.prefix
                ))
            }),
        }
    }

    /// What [`RedisIndex::set_library_generation`] recorded; `None` when nothing was (an
    /// index never built, or built before generations existed).
    pub fn library_generation(&self) -> Result<Option<IndexedGeneration>, IndexError> {
        let recorded: Option<String> = self.link.query(
            "read the library generation",
            redis::cmd("HGET").arg(self.meta_key()).arg("generation"),
        )?;
        IndexedGeneration::parse(recorded.as_deref(), &self.prefix)
    }

    /// Records this index's parameters under `{prefix}:meta` if absent, and refuses to go on if
    /// the keys were written with other ones.
    fn check_meta(&self) -> Result<(), IndexError> {
        check_params(
            &self.link,
            &self.prefix,
            &[
                ("layout", u64::from(LAYOUT_VERSION)),
                ("max_distance", u64::from(self.max_distance)),
            ],
        )
    }

    /// The bucket keys one signature probes, one per block.
    fn probe_keys(&self, fingerprint: u64, keys: &mut Vec<String>) {
        for b in 0..self.blocks.len() {
            keys.push(self.bucket_key(b, self.block(b, fingerprint)));
        }
    }

    /// Turns the `k + 1` bucket replies of one signature into hits, each entry once: from the
    /// first block on which it agrees (as `SimHashIndex` does).
    fn collect_hits(
        &self,
        fingerprint: u64,
        replies: impl Iterator<Item = Value>,
        out: &mut Vec<Hit>,
    ) -> Result<(), IndexError> {
        for (b, reply) in replies.enumerate() {
            for entry in records(reply, ENTRY_LEN)? {
                let (candidate, segment) = unpack(&entry)?;
                let distance = (candidate ^ fingerprint).count_ones();
                if distance > self.max_distance {
                    continue;
                }
                let first_agreeing = (0..b).all(|earlier| {
                    self.block(earlier, candidate) != self.block(earlier, fingerprint)
                });
                if first_agreeing {
                    out.push(Hit { segment, distance });
                }
            }
        }
        Ok(())
    }
}

/// The metadata hash of a prefix.
pub(crate) fn meta_key(prefix: &str) -> String {
    format!("{prefix}:meta")
}

/// The bucket bits recorded under `field` of the prefix's metadata, recording `bits` first if
/// none are: an index keeps the bucket count it was first written with.
pub(crate) fn recorded_bucket_bits(
    link: &Link,
    prefix: &str,
    field: &str,
    bits: u32,
) -> Result<u32, IndexError> {
    let meta = meta_key(prefix);
    let mut cmds = vec![redis::cmd("HSETNX"), redis::cmd("HGET")];
    cmds[0].arg(&meta).arg(field).arg(bits.clamp(1, 32));
    cmds[1].arg(&meta).arg(field);
    let replies: Vec<Option<u32>> = link.batch("read the index metadata", &cmds)?;
    match replies.last() {
        Some(Some(bits)) if (1..=32).contains(bits) => Ok(*bits),
        found => Err(IndexError::Corrupt(format!(
            "the index under {prefix:?} records {field} {found:?}: rebuild it"
        ))),
    }
}

/// Records each `(field, value)` under the prefix's metadata if absent, and fails if a field
/// was recorded with another value: keys written with other parameters would be misread.
pub(crate) fn check_params(
    link: &Link,
    prefix: &str,
    params: &[(&str, u64)],
) -> Result<(), IndexError> {
    let meta = meta_key(prefix);
    let mut cmds = Vec::new();
    for (field, value) in params {
        let mut set = redis::cmd("HSETNX");
        set.arg(&meta).arg(*field).arg(*value);
        cmds.push(set);
    }
    let mut get = redis::cmd("HMGET");
    get.arg(&meta);
    for (field, _) in params {
        get.arg(*field);
    }
    cmds.push(get);
    let mut replies: Vec<Value> = link.batch("read the index metadata", &cmds)?;
    let found: Vec<Option<u64>> = match replies.pop() {
        Some(reply) => redis::from_redis_value(reply)
            .map_err(|e| IndexError::Corrupt(format!("unreadable index metadata: {e}")))?,
        None => Vec::new(),
    };
    for ((field, wanted), found) in params.iter().zip(found) {
        if found != Some(*wanted) {
            let found = found.map_or("nothing".to_owned(), |f| f.to_string());
            return Err(IndexError::Corrupt(format!(
                "the index under {prefix:?} at {} was written with {field} {found}, this \
                 process needs {wanted}: rebuild it (`copytrace index rebuild`)",
                link.shown_url()
            )));
        }
    }
    Ok(())
}

impl Index for RedisIndex {
    fn insert(&mut self, fingerprint: &u64, segment: SegmentRef) -> Result<(), IndexError> {
        self.insert_work(segment.work_id, &[(segment.ordinal, *fingerprint)])
    }

    /// Appends the entries the work's set does not hold yet to their buckets, then records them
    /// in the work's set and the work in the list of works. Re-inserting identical windows thus
    /// stores them once; a run stopped between the two steps leaves at worst entries listed
    /// nowhere, which a query reports (and the matcher, which knows the library, drops) and a
    /// rebuild removes.
    fn insert_work(&mut self, work_id: WorkId, windows: &[(u32, u64)]) -> Result<(), IndexError> {
        if windows.is_empty() {
            return Ok(());
        }
        let work_key = self.work_key(work_id);
        let entries: Vec<(u64, [u8; ENTRY_LEN])> = windows
            .iter()
            .map(|&(ordinal, fingerprint)| {
                (
                    fingerprint,
                    pack(fingerprint, SegmentRef { work_id, ordinal }),
                )
            })
            .collect();
        let packed: Vec<&[u8]> = entries.iter().map(|(_, entry)| &entry[..]).collect();
        let present: Vec<bool> = self.link.query(
            "insert a work",
            &command(
                "SMISMEMBER",
                [work_key.as_bytes()]
                    .into_iter()
                    .chain(packed.iter().copied()),
            ),
        )?;
        let mut appends = Vec::new();
        for ((fingerprint, entry), present) in entries.iter().zip(&present) {
            if *present {
                continue;
            }
            for b in 0..self.blocks.len() {
                let mut append = redis::cmd("APPEND");
                append
                    .arg(self.bucket_key(b, self.block(b, *fingerprint)))
                    .arg(&entry[..]);
                appends.push(append);
            }
        }
        self.link.batch::<Value>("insert a work", &appends)?;
        let listed = [
            command(
                "SADD",
                [work_key.as_bytes()]
                    .into_iter()
                    .chain(packed.iter().copied()),
            ),
            command(
                "SADD",
                [self.works_key().as_bytes(), work_id.to_string().as_bytes()],
            ),
        ];
        self.link.batch::<Value>("insert a work", &listed)?;
        Ok(())
    }

    /// Drops the work's entries from every bucket they were filed in, then its set and its place
    /// in the list of works: a run stopped on the way is finished by removing the work again.
    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let work_key = self.work_key(work_id);
        let entries: Vec<Vec<u8>> = self
            .link
            .query("remove a work", redis::cmd("SMEMBERS").arg(&work_key))?;
        let mut buckets = BTreeSet::new();
        for entry in &entries {
            // A malformed entry is skipped here and reported once the rest is removed.
            let Ok((fingerprint, _)) = unpack(entry) else {
                continue;
            };
            for b in 0..self.blocks.len() {
                buckets.insert(self.bucket_key(b, self.block(b, fingerprint)));
            }
        }
        let removals: Vec<Cmd> = buckets
            .iter()
            .map(|bucket| remove_from_bucket(bucket, work_id))
            .collect();
        self.link.batch::<Value>("remove a work", &removals)?;
        let unlisted = [
            command("DEL", [work_key.as_bytes()]),
            command(
                "SREM",
                [self.works_key().as_bytes(), work_id.to_string().as_bytes()],
            ),
        ];
        self.link.batch::<Value>("remove a work", &unlisted)?;
        match entries.iter().find(|entry| entry.len() != ENTRY_LEN) {
            Some(bad) => Err(IndexError::Corrupt(format!(
                "work {work_id} had an index entry of {} bytes; its other entries were removed",
                bad.len()
            ))),
            None => Ok(()),
        }
    }

    fn query(&self, fingerprint: &u64, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        let mut keys = Vec::with_capacity(self.blocks.len());
        self.probe_keys(*fingerprint, &mut keys);
        let replies = self.link.get_many("query", &keys)?;
        self.collect_hits(*fingerprint, replies.into_iter(), out)
    }

    fn query_many(&self, fingerprints: &[u64], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        out.clear();
        if fingerprints.is_empty() {
            return Ok(());
        }
        let per_query = self.blocks.len();
        let mut keys = Vec::with_capacity(fingerprints.len() * per_query);
        for &fingerprint in fingerprints {
            self.probe_keys(fingerprint, &mut keys);
        }
        let mut replies = self.link.get_many("query a page", &keys)?.into_iter();
        for &fingerprint in fingerprints {
            let mut hits = Vec::new();
            self.collect_hits(fingerprint, replies.by_ref().take(per_query), &mut hits)?;
            out.push(hits);
        }
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        let works: BTreeSet<WorkId> = self.link.query(
            "list the indexed works",
            redis::cmd("SMEMBERS").arg(self.works_key()),
        )?;
        let counts: Vec<usize> = self.link.batch(
            "count the indexed windows",
            &works
                .iter()
                .map(|&work_id| command("SCARD", [self.work_key(work_id).as_bytes()]))
                .collect::<Vec<_>>(),
        )?;
        Ok(counts.into_iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_the_shown_url() {
        assert_eq!(
            redact_url("redis://:hunter2@cache:6379/2"),
            "redis://:***@cache:6379/2"
        );
        assert_eq!(
            redact_url("redis://app:hunter2@cache/"),
            "redis://app:***@cache/"
        );
        assert_eq!(redact_url("redis://cache:6379"), "redis://cache:6379");
        assert!(!redact_url("redis://a:hunter2@[bad").contains("hunter2"));
    }

    #[test]
    fn entries_round_trip_through_their_packed_form() {
        let segment = SegmentRef {
            work_id: -7,
            ordinal: 4_000_000_000,
        };
        let packed = pack(0xDEAD_BEEF_0123_4567, segment);
        assert_eq!(unpack(&packed).unwrap(), (0xDEAD_BEEF_0123_4567, segment));
        assert!(matches!(unpack(&packed[..19]), Err(IndexError::Corrupt(_))));
    }

    #[test]
    fn prefixes_that_would_break_scans_or_hash_tags_are_refused() {
        for bad in ["", "a:b", "a*", "{x}", "a b", "a?"] {
            assert!(validate_prefix(bad).is_err(), "{bad:?} accepted");
        }
        validate_prefix("copytrace-test_1.2").unwrap();
    }

    #[test]
    fn blocks_cover_all_64_bits_exactly_once() {
        for k in 0..=63 {
            let mut covered = 0u64;
            for (shift, mask) in blocks(k) {
                let bits = mask << shift;
                assert_eq!(covered & bits, 0, "k={k} overlaps");
                covered |= bits;
            }
            assert_eq!(covered, u64::MAX, "k={k}");
        }
    }

    #[test]
    fn bucket_keys_carry_one_hash_tag_per_bucket() {
        let index = RedisIndex {
            link: Arc::new(Link::open("redis://127.0.0.1:1").unwrap()),
            prefix: "p".into(),
            max_distance: 3,
            blocks: blocks(3),
        };
        assert_eq!(index.bucket_key(2, 0x1f3a), "p:b:{b2:1f3a}");
        assert_eq!(index.work_key(42), "p:w:{w42}");
    }
}
