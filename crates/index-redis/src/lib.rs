//! The matcher's SimHash window index kept in Redis, so that every process of a production
//! deployment (web, match workers, the daily dedup) shares one index instead of each loading
//! the whole library into memory at start.
//!
//! [`RedisIndex`] implements [`copytrace_matcher::Index`] with the same pigeonhole scheme as the
//! in-memory [`copytrace_matcher::SimHashIndex`]: the 64-bit signature is cut into `k + 1`
//! blocks, two signatures within Hamming distance `k` agree exactly on at least one block, so a
//! query reads `k + 1` buckets and checks the full distance only for what it finds there.
//! Recall is exact for every distance up to `k`.
//!
//! # Key layout
//!
//! Every key starts with a configurable prefix (default [`DEFAULT_PREFIX`]), so several
//! libraries, or the tests, can share one server. Braces mark the Redis Cluster *hash tag*: only
//! the part inside them decides the slot.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{prefix}:b:{b<block>:<value hex>}` | string | packed entries, concatenated, whose signature has `value` in block `block` |
//! | `{prefix}:w:{w<work id>}` | set | packed entries of one work, to find its buckets on removal |
//! | `{prefix}:works` | set | ids of the works indexed (for [`Index::len`]) |
//! | `{prefix}:meta` | hash | `max_distance` and `layout` the keys were written with; `source`, a digest of the library it was built from |
//!
//! A packed entry is 20 bytes: signature (u64), work id (i64), window ordinal (u32), all
//! big-endian. The whole signature is stored in the bucket so the distance is checked on the
//! client without a second lookup.
//!
//! **One key per block probe.** A lookup of one signature reads exactly `k + 1` keys, and
//! [`Index::query_many`] reads the probes of every window of a page with a few pipelined
//! `MGET`s (1,024 keys each): one round trip per page.
//!
//! **Hash tags per bucket, not per block.** The `k + 1` buckets a query reads are different
//! buckets by construction, so no tag could put them on one node; grouping a whole block under
//! one tag would pile a quarter of the index (for `k = 3`) onto one slot. Tagging each bucket on
//! its own spreads the `(k + 1) · 2^(64/(k+1))` possible buckets (262 144 for `k = 3`) evenly
//! over a cluster's slots, and the key count stays bounded however large the library grows.
//! Per-work keys are tagged by work for the same reason.
//!
//! **Strings, not sets.** A bucket is one string of fixed-size records, appended to on insert:
//! a page's probes are then plain `MGET`s, which Redis answers several times faster than as many
//! `SMEMBERS` (measured in `docs/benchmarks.md`). Re-inserting an identical entry is still a
//! no-op, because an insert appends only the entries its work's set does not hold yet (read
//! under `WATCH`), and removing a work runs a small server-side script per bucket that drops
//! the records carrying its id. This client talks to one server (or a primary); a cluster
//! client would send the same commands grouped per node (`MGET` per slot, one bucket per
//! script call), but writes would then no longer be one `MULTI` transaction.
//!
//! # Consistency
//!
//! A work is inserted in one `MULTI`/`EXEC` transaction guarded by `WATCH` on its work key
//! (readers see all its windows or none)
//! and removed in one transaction guarded by `WATCH` on its work key, so a concurrent insert of
//! the same work cannot leave orphan bucket entries behind. [`Index::len`] is exact: the sum of
//! the work sets' cardinalities, read in one pipeline (its cost grows with the number of works,
//! which is why it is not on the matching path).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use copytrace_matcher::{Hit, Index, IndexError, SegmentRef, WorkId};
use redis::{Connection, RedisResult, Value};

/// The key prefix used when none is configured.
pub const DEFAULT_PREFIX: &str = "copytrace";

/// Version of the key layout written to `{prefix}:meta`, so a future layout can refuse to read
/// an old one instead of misreading it.
pub const LAYOUT_VERSION: u32 = 1;

/// Bytes of one packed entry: signature, work id, ordinal.
const ENTRY_LEN: usize = 20;

/// How long to wait for the server to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one command or pipeline may take; a whole page of probes is one pipeline.
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// Keys deleted per `UNLINK` when a namespace is cleared.
const CLEAR_BATCH: usize = 1000;

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

/// The packed entries of one bucket: a string of 20-byte records, or nothing.
fn records(reply: Value) -> Result<Vec<Vec<u8>>, IndexError> {
    let bytes = match reply {
        Value::BulkString(bytes) => bytes,
        Value::Nil => return Ok(Vec::new()),
        other => {
            return Err(IndexError::Corrupt(format!(
                "expected a bucket of packed entries, got {other:?}"
            )));
        }
    };
    if bytes.len() % ENTRY_LEN != 0 {
        return Err(IndexError::Corrupt(format!(
            "a bucket of {} bytes is not a whole number of {ENTRY_LEN}-byte entries",
            bytes.len()
        )));
    }
    Ok(bytes.chunks(ENTRY_LEN).map(<[u8]>::to_vec).collect())
}

/// Removes one work's records from a bucket string, server side: keeps the 20-byte records
/// whose work id (bytes 9..16) differs from `ARGV[1]`, and deletes the key when none is left.
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

/// Bucket keys read by one `MGET`: large enough that a page is a few commands, small enough
/// that one reply stays a few hundred kilobytes.
const KEYS_PER_MGET: usize = 1024;

/// Pigeonhole SimHash index in Redis. See the [crate documentation](crate) for the key layout.
pub struct RedisIndex {
    client: redis::Client,
    /// `None` after an I/O error: the next call reconnects instead of reusing a broken stream.
    connection: Mutex<Option<Connection>>,
    shown_url: String,
    prefix: String,
    max_distance: u32,
    blocks: Vec<(u32, u64)>,
}

impl fmt::Debug for RedisIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisIndex")
            .field("url", &self.shown_url)
            .field("prefix", &self.prefix)
            .field("max_distance", &self.max_distance)
            .finish_non_exhaustive()
    }
}

impl RedisIndex {
    /// Connects to the Redis server at `url` (`redis://[:password@]host[:port][/db]`) and opens
    /// the index stored under `prefix`, answering queries within `max_distance` bits (at most
    /// 63). Fails if the server cannot be reached or if the keys under `prefix` were written
    /// for another `max_distance` (their blocks would not match): such an index must be cleared
    /// and rebuilt.
    pub fn connect(url: &str, prefix: &str, max_distance: u32) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        let shown_url = redact_url(url);
        let client = redis::Client::open(url)
            .map_err(|e| IndexError::Backend(format!("invalid Redis URL {shown_url}: {e}")))?;
        let max_distance = max_distance.min(63);
        let index = RedisIndex {
            client,
            connection: Mutex::new(None),
            shown_url,
            prefix: prefix.to_owned(),
            max_distance,
            blocks: blocks(max_distance),
        };
        index.check_meta()?;
        Ok(index)
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
        format!("{}:meta", self.prefix)
    }

    fn block(&self, index: usize, fingerprint: u64) -> u64 {
        let (shift, mask) = self.blocks[index];
        fingerprint >> shift & mask
    }

    /// Deletes every key of this index (the whole namespace) and writes its metadata again:
    /// the first step of a rebuild. Other prefixes on the same server are untouched.
    pub fn clear(&mut self) -> Result<(), IndexError> {
        let pattern = format!("{}:*", self.prefix);
        self.with_connection("clear the index", |connection| {
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(CLEAR_BATCH)
                    .query(connection)?;
                for batch in keys.chunks(CLEAR_BATCH) {
                    redis::cmd("UNLINK").arg(batch).exec(connection)?;
                }
                if next == 0 {
                    return Ok(());
                }
                cursor = next;
            }
        })?;
        self.check_meta()
    }

    /// Records a digest of the library the index was built from (`source` in `{prefix}:meta`),
    /// so a process opening the index later can tell whether the library changed since. Cleared
    /// with the rest of the namespace, so an interrupted rebuild leaves no digest behind.
    pub fn set_source_digest(&self, digest: &str) -> Result<(), IndexError> {
        let meta = self.meta_key();
        self.with_connection("record the library digest", |connection| {
            redis::cmd("HSET")
                .arg(&meta)
                .arg("source")
                .arg(digest)
                .exec(connection)
        })
    }

    /// How many works the index holds windows of (one `SCARD`, whatever the library's size;
    /// [`Index::len`] counts windows and reads every work's set).
    pub fn work_count(&self) -> Result<usize, IndexError> {
        let works = self.works_key();
        self.with_connection("count the indexed works", |connection| {
            redis::cmd("SCARD").arg(&works).query(connection)
        })
    }

    /// The digest recorded by [`RedisIndex::set_source_digest`], if any.
    pub fn source_digest(&self) -> Result<Option<String>, IndexError> {
        let meta = self.meta_key();
        self.with_connection("read the library digest", |connection| {
            redis::cmd("HGET")
                .arg(&meta)
                .arg("source")
                .query(connection)
        })
    }

    /// Records this index's parameters under `{prefix}:meta` if absent, and refuses to go on if
    /// the keys were written with other ones.
    fn check_meta(&self) -> Result<(), IndexError> {
        let meta = self.meta_key();
        let (distance, layout): (Option<u32>, Option<u32>) =
            self.with_connection("read the index metadata", |connection| {
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .cmd("HSETNX")
                    .arg(&meta)
                    .arg("max_distance")
                    .arg(self.max_distance)
                    .ignore()
                    .cmd("HSETNX")
                    .arg(&meta)
                    .arg("layout")
                    .arg(LAYOUT_VERSION)
                    .ignore()
                    .cmd("HGET")
                    .arg(&meta)
                    .arg("max_distance")
                    .cmd("HGET")
                    .arg(&meta)
                    .arg("layout");
                pipe.query(connection)
            })?;
        if layout != Some(LAYOUT_VERSION) {
            return Err(IndexError::Corrupt(format!(
                "the index under {:?} at {} has key layout {layout:?}, this build reads \
                 layout {LAYOUT_VERSION}: rebuild it",
                self.prefix, self.shown_url
            )));
        }
        if distance != Some(self.max_distance) {
            return Err(IndexError::Backend(format!(
                "the index under {:?} at {} was built for max distance {distance:?}, not {}: \
                 rebuild it",
                self.prefix, self.shown_url, self.max_distance
            )));
        }
        Ok(())
    }

    /// Runs `operation` on the connection, connecting first if needed. Errors become
    /// [`IndexError::Backend`] naming the server (password redacted) and what was being done;
    /// after an I/O error the connection is dropped so the next call reconnects.
    fn with_connection<T>(
        &self,
        doing: &str,
        mut operation: impl FnMut(&mut Connection) -> RedisResult<T>,
    ) -> Result<T, IndexError> {
        let mut guard: MutexGuard<'_, Option<Connection>> = self
            .connection
            .lock()
            .map_err(|_| IndexError::Backend("the Redis connection lock is poisoned".into()))?;
        if guard.is_none() {
            *guard = Some(self.open_connection()?);
        }
        let connection = guard.as_mut().expect("connected just above");
        operation(connection).map_err(|error| {
            if error.is_io_error() || error.is_connection_dropped() || error.is_timeout() {
                *guard = None;
            }
            IndexError::Backend(format!(
                "Redis at {} failed to {doing}: {error}",
                self.shown_url
            ))
        })
    }

    fn open_connection(&self) -> Result<Connection, IndexError> {
        let connection = self
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|e| {
                IndexError::Backend(format!(
                    "cannot connect to Redis at {}: {e}",
                    self.shown_url
                ))
            })?;
        connection
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| connection.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| {
                IndexError::Backend(format!(
                    "cannot set timeouts on the Redis connection to {}: {e}",
                    self.shown_url
                ))
            })?;
        Ok(connection)
    }

    /// The bucket keys one signature probes, one per block.
    fn probe_keys(&self, fingerprint: u64, keys: &mut Vec<String>) {
        for b in 0..self.blocks.len() {
            keys.push(self.bucket_key(b, self.block(b, fingerprint)));
        }
    }

    /// Reads buckets with pipelined `MGET`s, one reply per key in order.
    fn read_buckets(&self, keys: &[String], what: &str) -> Result<Vec<Value>, IndexError> {
        let mut pipe = redis::pipe();
        for chunk in keys.chunks(KEYS_PER_MGET) {
            pipe.cmd("MGET").arg(chunk);
        }
        let chunks: Vec<Vec<Value>> =
            self.with_connection(what, |connection| pipe.query(connection))?;
        let replies: Vec<Value> = chunks.into_iter().flatten().collect();
        if replies.len() != keys.len() {
            return Err(IndexError::Corrupt(format!(
                "{} replies to {} probes",
                replies.len(),
                keys.len()
            )));
        }
        Ok(replies)
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
            for entry in records(reply)? {
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

impl Index for RedisIndex {
    fn insert(&mut self, fingerprint: &u64, segment: SegmentRef) -> Result<(), IndexError> {
        self.insert_work(segment.work_id, &[(segment.ordinal, *fingerprint)])
    }

    fn insert_work(&mut self, work_id: WorkId, windows: &[(u32, u64)]) -> Result<(), IndexError> {
        if windows.is_empty() {
            return Ok(());
        }
        let work_key = self.work_key(work_id);
        let works_key = self.works_key();
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
        // WATCH the work's key and append only entries it does not hold yet, so re-inserting
        // identical windows stores them once, as sets did, while buckets stay plain strings
        // that a page reads with a few `MGET`s.
        self.with_connection("insert a work", |connection| {
            redis::transaction(connection, &[&work_key], |connection, pipe| {
                let present: Vec<bool> = redis::cmd("SMISMEMBER")
                    .arg(&work_key)
                    .arg(&packed)
                    .query(connection)?;
                pipe.cmd("SADD").arg(&works_key).arg(work_id).ignore();
                pipe.cmd("SADD").arg(&work_key).arg(&packed).ignore();
                for ((fingerprint, entry), present) in entries.iter().zip(&present) {
                    if *present {
                        continue;
                    }
                    for b in 0..self.blocks.len() {
                        pipe.cmd("APPEND")
                            .arg(self.bucket_key(b, self.block(b, *fingerprint)))
                            .arg(&entry[..])
                            .ignore();
                    }
                }
                pipe.query(connection)
            })
        })
    }

    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let work_key = self.work_key(work_id);
        let works_key = self.works_key();
        // WATCH the work's key: if an insert of the same work lands between reading its
        // entries and deleting them, the transaction aborts and is retried with the new set.
        let entries: Vec<Vec<u8>> = self.with_connection("remove a work", |connection| {
            redis::transaction(connection, &[&work_key], |connection, pipe| {
                let entries: Vec<Vec<u8>> =
                    redis::cmd("SMEMBERS").arg(&work_key).query(connection)?;
                let mut buckets = BTreeSet::new();
                for entry in &entries {
                    // A malformed entry is skipped here and reported after the transaction.
                    let Ok((fingerprint, _)) = unpack(entry) else {
                        continue;
                    };
                    for b in 0..self.blocks.len() {
                        buckets.insert(self.bucket_key(b, self.block(b, fingerprint)));
                    }
                }
                for bucket in &buckets {
                    pipe.cmd("EVAL")
                        .arg(REMOVE_FROM_BUCKET)
                        .arg(1)
                        .arg(bucket)
                        .arg(&work_id.to_be_bytes()[..])
                        .ignore();
                }
                pipe.cmd("DEL").arg(&work_key).ignore();
                pipe.cmd("SREM").arg(&works_key).arg(work_id).ignore();
                let done: Option<()> = pipe.query(connection)?;
                Ok(done.map(|()| entries.clone()))
            })
        })?;
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
        let replies = self.read_buckets(&keys, "query")?;
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
        let mut replies = self.read_buckets(&keys, "query a page")?.into_iter();
        for &fingerprint in fingerprints {
            let mut hits = Vec::new();
            self.collect_hits(fingerprint, replies.by_ref().take(per_query), &mut hits)?;
            out.push(hits);
        }
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        let works_key = self.works_key();
        let works: BTreeSet<WorkId> = self
            .with_connection("list the indexed works", |connection| {
                redis::cmd("SMEMBERS").arg(&works_key).query(connection)
            })?;
        if works.is_empty() {
            return Ok(0);
        }
        let mut pipe = redis::pipe();
        for &work_id in &works {
            pipe.cmd("SCARD").arg(self.work_key(work_id));
        }
        let counts: Vec<usize> = self
            .with_connection("count the indexed windows", |connection| {
                pipe.query(connection)
            })?;
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
            client: redis::Client::open("redis://127.0.0.1:1").unwrap(),
            connection: Mutex::new(None),
            shown_url: String::new(),
            prefix: "p".into(),
            max_distance: 3,
            blocks: blocks(3),
        };
        assert_eq!(index.bucket_key(2, 0x1f3a), "p:b:{b2:1f3a}");
        assert_eq!(index.work_key(42), "p:w:{w42}");
    }
}
