//! The MinHash LSH and DNA candidate indexes kept in Redis, beside the SimHash windows, so a
//! match worker holds none of the library's candidate indexes in memory.
//!
//! Both in-memory indexes file every window under one 64-bit key per table (a band hash for
//! MinHash, a block of digits for DNA; see `copytrace_matcher`'s `buckets` module). Here a table
//! key is a field of a Redis hash, the hash one of `2^bits` buckets of its table picked by the
//! key's mixed top bits, and the field's value the records of every window filed under that
//! exact key:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{prefix}:<kind>:{<kind><table>:<bucket hex>}` | hash | field: table key (8 bytes, big-endian); value: records `value ‖ work id (i64) ‖ ordinal (u32)` |
//! | `{prefix}:<kind>w:{<kind>w<work id>}` | string | the buckets (`table << 32 | bucket`) the work's records are in, 8 bytes each, big-endian, appended (an id may repeat) |
//! | `{prefix}:<kind>:windows` | hash | work id → number of windows indexed |
//!
//! `kind` is `m` (MinHash: records carry no value, 12 bytes) or `d` (DNA: the value is the
//! 128-bit code, 28-byte records, so the code distance is checked on the client exactly as in
//! memory). Every bucket key carries its own hash tag, so buckets spread evenly over a Redis
//! Cluster's slots; a work's bucket list is tagged by work.
//!
//! **A probe reads only its own key's records.** A page's probes are `HGET bucket key`, one per
//! window and table, pipelined: what a probe transfers does not grow with the library, only with
//! the windows that really share the key. The bucket count only bounds the number of Redis keys
//! (`tables · 2^bits`); it is chosen when the index is first written, from the expected number
//! of windows, so that a bucket holds about a hundred fields, and kept in `{prefix}:meta`.
//! Small hashes stay in Redis's compact listpack encoding up to `hash-max-listpack-entries`
//! (128 by default) while no value passes `hash-max-listpack-value` (64 bytes): MinHash buckets
//! do; DNA buckets whose digit blocks several windows share do not.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use copytrace_matcher::{
    DnaIndex, Hit, Index, IndexError, LshConfig, MinHashLshIndex, MinHashSignature, SegmentRef,
    WorkId,
};
use redis::{Cmd, Value};

use crate::link::Link;
use crate::{check_params, command, recorded_bucket_bits, records, validate_prefix};

/// Bits of a table key that pick its bucket when nothing says how large the index will be:
/// 4,096 buckets per table (61,440 keys for the default 15 MinHash bands).
pub const DEFAULT_BUCKET_BITS: u32 = 12;

/// Fields a bucket should hold at most, on average, when its bit count is chosen from the
/// expected number of windows: below Redis's default `hash-max-listpack-entries` (128), so
/// buckets stay in the compact encoding.
const FIELDS_PER_BUCKET: u64 = 96;

/// Bucket bits for an index expected to hold `windows` windows: the fewest that keep about
/// 96 fields per bucket (`FIELDS_PER_BUCKET`), never fewer than [`DEFAULT_BUCKET_BITS`] (an index
/// built from a small or empty library then grows by `library add` without its buckets
/// outgrowing the compact encoding at once: measured, 1,000 works added to an index built
/// empty with 8 bits took 122 bytes of Redis per library character) and at most 24.
pub fn bucket_bits_for(windows: u64) -> u32 {
    let buckets = (windows / FIELDS_PER_BUCKET).max(1);
    (64 - buckets.leading_zeros()).clamp(DEFAULT_BUCKET_BITS, 24)
}

/// Appends records to fields of one bucket: `ARGV` is `field, records, field, records, …`.
const APPEND_TO_FIELDS: &str = r"
for i = 1, #ARGV, 2 do
  local held = redis.call('HGET', KEYS[1], ARGV[i])
  if held then
    redis.call('HSET', KEYS[1], ARGV[i], held .. ARGV[i + 1])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return 1
";

/// Drops one work's records from every field of one bucket: records of `ARGV[2]` bytes whose
/// work id (8 bytes from 1-based offset `ARGV[3]`) is `ARGV[1]`; a field left empty is deleted.
const REMOVE_FROM_FIELDS: &str = r"
local size = tonumber(ARGV[2])
local at = tonumber(ARGV[3])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local held = all[i + 1]
  local kept = {}
  local dropped = false
  for j = 1, #held, size do
    local record = string.sub(held, j, j + size - 1)
    if string.sub(record, at, at + 7) == ARGV[1] then dropped = true else kept[#kept + 1] = record end
  end
  if dropped then
    if #kept == 0 then redis.call('HDEL', KEYS[1], all[i]) else redis.call('HSET', KEYS[1], all[i], table.concat(kept)) end
  end
end
return 1
";

/// Bytes of a record after its value: work id (i64) and window ordinal (u32).
const SEGMENT_LEN: usize = 12;

/// How one kind of candidate index files its windows.
trait Scheme: Send + Sync {
    /// What a window is filed by and a query searches with.
    type Key: Clone;
    /// The letter naming the index in keys.
    const KIND: &'static str;
    /// Bytes of a record's value.
    const VALUE_LEN: usize;
    /// Tables a window is filed in.
    fn tables(&self) -> usize;
    /// The key of each table for `key`.
    fn table_keys(&self, key: &Self::Key) -> Result<Vec<u64>, IndexError>;
    /// The record value of `key` (what a query needs beyond the exact table key).
    fn value(&self, key: &Self::Key, out: &mut Vec<u8>);
    /// The distance of a record found under one of the query's exact table keys, or `None`
    /// when it is too far.
    fn hit(&self, query: &Self::Key, value: &[u8]) -> Option<u32>;
    /// The distance reported for a window found with `distance` in `agreeing` tables.
    fn reported(&self, distance: u32, agreeing: u32) -> u32 {
        let _ = agreeing;
        distance
    }
}

/// A bucket index of one [`Scheme`] in Redis.
struct Buckets<S> {
    link: Arc<Link>,
    prefix: String,
    scheme: S,
    bits: u32,
}

/// The splitmix64 finalizer: spreads table keys that differ in few bits (DNA blocks are digits)
/// over all buckets.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl<S: Scheme> Buckets<S> {
    /// Opens the index under `prefix`, refusing one written with other `params`. Its bucket
    /// bits are the ones it was written with, or `bits` for a new one.
    fn open(
        link: Arc<Link>,
        prefix: &str,
        scheme: S,
        params: &[(&str, u64)],
        bits: u32,
    ) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        check_params(&link, prefix, params)?;
        let field = format!("{}_bucket_bits", S::KIND);
        let bits = recorded_bucket_bits(&link, prefix, &field, bits)?;
        Ok(Buckets {
            link,
            prefix: prefix.to_owned(),
            scheme,
            bits,
        })
    }

    const RECORD_LEN: usize = S::VALUE_LEN + SEGMENT_LEN;

    /// `(table << 32) | bucket` of a table key.
    fn bucket_id(&self, table: usize, table_key: u64) -> u64 {
        ((table as u64) << 32) | (mix(table_key) >> (64 - self.bits))
    }

    fn bucket_key(&self, id: u64) -> String {
        let (table, bucket) = (id >> 32, id & 0xffff_ffff);
        format!(
            "{}:{kind}:{{{kind}{table}:{bucket:x}}}",
            self.prefix,
            kind = S::KIND
        )
    }

    fn work_key(&self, work_id: WorkId) -> String {
        format!(
            "{}:{kind}w:{{{kind}w{work_id}}}",
            self.prefix,
            kind = S::KIND
        )
    }

    fn windows_key(&self) -> String {
        format!("{}:{}:windows", self.prefix, S::KIND)
    }

    /// One record of `key` for `segment`.
    fn record(&self, key: &S::Key, segment: SegmentRef, out: &mut Vec<u8>) {
        self.scheme.value(key, out);
        out.extend_from_slice(&segment.work_id.to_be_bytes());
        out.extend_from_slice(&segment.ordinal.to_be_bytes());
    }

    /// The commands filing `windows` of one work: its bucket list first (so a run stopped while
    /// appending leaves records that removing the work finds), then one append per bucket.
    fn filing(&self, work_id: WorkId, windows: &[(u32, S::Key)]) -> Result<Vec<Cmd>, IndexError> {
        // bucket id → table key → records
        let mut buckets: BTreeMap<u64, BTreeMap<u64, Vec<u8>>> = BTreeMap::new();
        for (ordinal, key) in windows {
            let segment = SegmentRef {
                work_id,
                ordinal: *ordinal,
            };
            for (table, table_key) in self.scheme.table_keys(key)?.into_iter().enumerate() {
                let records = buckets
                    .entry(self.bucket_id(table, table_key))
                    .or_default()
                    .entry(table_key)
                    .or_default();
                self.record(key, segment, records);
            }
        }
        // Eight bytes per bucket id, appended: a set of the same ids held about 47 bytes each
        // (past 512 members Redis leaves its compact integer encoding), a fifth of the whole
        // index's memory (docs/benchmarks.md).
        let packed: Vec<u8> = buckets.keys().flat_map(|id| id.to_be_bytes()).collect();
        let mut listed = redis::cmd("APPEND");
        listed.arg(self.work_key(work_id)).arg(packed);
        let mut cmds = vec![listed];
        for (id, fields) in &buckets {
            let mut append = redis::cmd("EVAL");
            append
                .arg(APPEND_TO_FIELDS)
                .arg(1)
                .arg(self.bucket_key(*id));
            for (table_key, records) in fields {
                append.arg(&table_key.to_be_bytes()[..]).arg(&records[..]);
            }
            cmds.push(append);
        }
        Ok(cmds)
    }

    fn insert_work(&self, work_id: WorkId, windows: &[(u32, S::Key)]) -> Result<(), IndexError> {
        // Replacing: whatever the work had (also a half-written earlier insert) goes first.
        let exists: bool = self.link.query(
            "insert a work",
            redis::cmd("EXISTS").arg(self.work_key(work_id)),
        )?;
        if exists {
            self.remove_work(work_id)?;
        }
        if windows.is_empty() {
            return Ok(());
        }
        let mut cmds = self.filing(work_id, windows)?;
        let listed = cmds.remove(0);
        self.link.query::<Value>("insert a work", &listed)?;
        self.link.batch::<Value>("insert a work", &cmds)?;
        self.link.query::<Value>(
            "insert a work",
            redis::cmd("HSET")
                .arg(self.windows_key())
                .arg(work_id)
                .arg(windows.len()),
        )?;
        Ok(())
    }

    /// Adds one window to what the work has. Its buckets are appended to the work's list even
    /// when listed already (removal reads each once), so a work built window by window has a
    /// longer list than one inserted whole; the matcher inserts works whole.
    fn insert_window(&self, key: &S::Key, segment: SegmentRef) -> Result<(), IndexError> {
        let mut cmds = self.filing(segment.work_id, &[(segment.ordinal, key.clone())])?;
        let mut count = redis::cmd("HINCRBY");
        count.arg(self.windows_key()).arg(segment.work_id).arg(1);
        cmds.push(count);
        self.link.batch::<Value>("insert a window", &cmds)?;
        Ok(())
    }

    fn remove_work(&self, work_id: WorkId) -> Result<(), IndexError> {
        let work_key = self.work_key(work_id);
        let listed: Option<Vec<u8>> = self
            .link
            .query("remove a work", redis::cmd("GET").arg(&work_key))?;
        let listed = listed.unwrap_or_default();
        // Appended once per insert: a bucket may be listed more than once.
        let ids: BTreeSet<u64> = listed
            .chunks_exact(8)
            .map(|id| u64::from_be_bytes(id.try_into().expect("eight bytes")))
            .collect();
        let removals: Vec<Cmd> = ids
            .iter()
            .map(|&id| {
                let mut eval = redis::cmd("EVAL");
                eval.arg(REMOVE_FROM_FIELDS)
                    .arg(1)
                    .arg(self.bucket_key(id))
                    .arg(&work_id.to_be_bytes()[..])
                    .arg(Self::RECORD_LEN)
                    .arg(S::VALUE_LEN + 1);
                eval
            })
            .collect();
        self.link.batch::<Value>("remove a work", &removals)?;
        let unlisted = [
            command("DEL", [work_key.as_bytes()]),
            command(
                "HDEL",
                [
                    self.windows_key().as_bytes(),
                    work_id.to_string().as_bytes(),
                ],
            ),
        ];
        self.link.batch::<Value>("remove a work", &unlisted)?;
        if !listed.len().is_multiple_of(8) {
            return Err(IndexError::Corrupt(format!(
                "the bucket list of work {work_id} was {} bytes, not whole bucket ids: the \
                 buckets it named were cleared, the rest may hold stale records (`copytrace \
                 index rebuild`)",
                listed.len()
            )));
        }
        Ok(())
    }

    fn query_many(&self, queries: &[S::Key], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        out.clear();
        if queries.is_empty() {
            return Ok(());
        }
        let tables = self.scheme.tables();
        let mut probes = Vec::with_capacity(queries.len() * tables);
        for query in queries {
            for (table, table_key) in self.scheme.table_keys(query)?.into_iter().enumerate() {
                probes.push((
                    self.bucket_key(self.bucket_id(table, table_key)),
                    table_key.to_be_bytes(),
                ));
            }
        }
        let mut replies = self.link.hget_many("query a page", &probes)?.into_iter();
        for query in queries {
            // Each window once, with its distance and the number of tables it agrees in.
            let mut found: HashMap<SegmentRef, (u32, u32)> = HashMap::new();
            let mut order = Vec::new();
            for reply in replies.by_ref().take(tables) {
                for record in records(reply, Self::RECORD_LEN)? {
                    let (value, segment) = record.split_at(S::VALUE_LEN);
                    let Some(distance) = self.scheme.hit(query, value) else {
                        continue;
                    };
                    let segment = unpack_segment(segment);
                    let entry = found.entry(segment).or_insert_with(|| {
                        order.push(segment);
                        (distance, 0)
                    });
                    entry.1 += 1;
                }
            }
            out.push(
                order
                    .into_iter()
                    .map(|segment| {
                        let (distance, agreeing) = found[&segment];
                        Hit {
                            segment,
                            distance: self.scheme.reported(distance, agreeing),
                        }
                    })
                    .collect(),
            );
        }
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        let counts: Vec<usize> = self.link.query(
            "count the indexed windows",
            redis::cmd("HVALS").arg(self.windows_key()),
        )?;
        Ok(counts.into_iter().sum())
    }
}

fn unpack_segment(bytes: &[u8]) -> SegmentRef {
    let work_id = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
    let ordinal = u32::from_be_bytes(bytes[8..12].try_into().expect("4 bytes"));
    SegmentRef { work_id, ordinal }
}

/// MinHash LSH banding: one table per band, keyed by the band's hash.
struct MinHashScheme {
    shape: MinHashLshIndex,
}

impl Scheme for MinHashScheme {
    type Key = MinHashSignature;
    const KIND: &'static str = "m";
    const VALUE_LEN: usize = 0;

    fn tables(&self) -> usize {
        self.shape.bands()
    }

    fn table_keys(&self, signature: &MinHashSignature) -> Result<Vec<u64>, IndexError> {
        self.shape.band_keys(signature)
    }

    fn value(&self, _: &MinHashSignature, _: &mut Vec<u8>) {}

    fn hit(&self, _: &MinHashSignature, _: &[u8]) -> Option<u32> {
        Some(0)
    }

    /// Minima outside the agreeing bands are counted as differing: an upper bound of the
    /// in-memory index's exact count (the signature itself is not stored).
    fn reported(&self, _: u32, agreeing: u32) -> u32 {
        let rows = self.shape.rows() as u32;
        (self.shape.num_perm() as u32).saturating_sub(agreeing * rows)
    }
}

/// DNA codes: one table per pigeonhole block of digits; the whole code is stored so the code
/// distance is checked exactly.
struct DnaScheme {
    shape: DnaIndex,
}

impl Scheme for DnaScheme {
    type Key = u128;
    const KIND: &'static str = "d";
    const VALUE_LEN: usize = 16;

    fn tables(&self) -> usize {
        self.shape.block_count()
    }

    fn table_keys(&self, code: &u128) -> Result<Vec<u64>, IndexError> {
        self.shape.block_keys(*code)
    }

    fn value(&self, code: &u128, out: &mut Vec<u8>) {
        out.extend_from_slice(&code.to_be_bytes());
    }

    fn hit(&self, query: &u128, value: &[u8]) -> Option<u32> {
        let stored = u128::from_be_bytes(value.try_into().ok()?);
        self.shape
            .code_distance(*query, stored)
            .filter(|&d| d <= self.shape.max_distance())
    }
}

/// The MinHash LSH candidate index in Redis: the same bands and rows as
/// [`MinHashLshIndex`] for the same [`LshConfig`], so it proposes the same windows (a query
/// reads one bucket per band; see the [crate documentation](crate) for the layout).
pub struct RedisMinHashIndex {
    buckets: Buckets<MinHashScheme>,
}

impl RedisMinHashIndex {
    pub(crate) fn open(
        link: Arc<Link>,
        prefix: &str,
        config: &LshConfig,
        bits: u32,
    ) -> Result<Self, IndexError> {
        let shape = MinHashLshIndex::new(config);
        let params = [
            ("minhash_perm", shape.num_perm() as u64),
            ("minhash_bands", shape.bands() as u64),
            ("minhash_rows", shape.rows() as u64),
        ];
        Ok(RedisMinHashIndex {
            buckets: Buckets::open(link, prefix, MinHashScheme { shape }, &params, bits)?,
        })
    }
}

/// The DNA-code candidate index in Redis: the same pigeonhole blocks as [`DnaIndex`], with the
/// code distance checked on the client, so it answers exactly what the in-memory index answers.
pub struct RedisDnaIndex {
    buckets: Buckets<DnaScheme>,
}

impl RedisDnaIndex {
    pub(crate) fn open(
        link: Arc<Link>,
        prefix: &str,
        levels: u8,
        max_distance: u32,
        bits: u32,
    ) -> Result<Self, IndexError> {
        let shape = DnaIndex::new(levels, max_distance);
        let params = [
            ("dna_levels", u64::from(shape.levels())),
            ("dna_distance", u64::from(shape.max_distance())),
        ];
        Ok(RedisDnaIndex {
            buckets: Buckets::open(link, prefix, DnaScheme { shape }, &params, bits)?,
        })
    }
}

/// Both indexes implement [`Index`] through their buckets.
macro_rules! bucket_index {
    ($index:ty, $key:ty) => {
        impl Index<$key> for $index {
            /// Adds one window to the work's others.
            fn insert(&mut self, key: &$key, segment: SegmentRef) -> Result<(), IndexError> {
                self.buckets.insert_window(key, segment)
            }

            /// Replaces the work's windows (removing what an earlier insert left, even one
            /// stopped half way).
            fn insert_work(
                &mut self,
                work_id: WorkId,
                windows: &[(u32, $key)],
            ) -> Result<(), IndexError> {
                self.buckets.insert_work(work_id, windows)
            }

            fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
                self.buckets.remove_work(work_id)
            }

            fn query(&self, key: &$key, out: &mut Vec<Hit>) -> Result<(), IndexError> {
                let mut hits = Vec::new();
                self.buckets
                    .query_many(std::slice::from_ref(key), &mut hits)?;
                out.extend(hits.into_iter().flatten());
                Ok(())
            }

            fn query_many(&self, keys: &[$key], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
                self.buckets.query_many(keys, out)
            }

            fn len(&self) -> Result<usize, IndexError> {
                self.buckets.len()
            }
        }
    };
}

bucket_index!(RedisMinHashIndex, MinHashSignature);
bucket_index!(RedisDnaIndex, u128);

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn bucket_bits_keep_about_a_hundred_fields_per_bucket_within_bounds() {
        assert_eq!(bucket_bits_for(0), DEFAULT_BUCKET_BITS);
        assert_eq!(
            bucket_bits_for(132_831),
            DEFAULT_BUCKET_BITS,
            "the quality library's windows: 11 bits by size, raised to the floor"
        );
        let bits = bucket_bits_for(30_000_000);
        let per_bucket = 30_000_000 / (1u64 << bits);
        assert!(
            (48..=FIELDS_PER_BUCKET).contains(&per_bucket),
            "{bits} bits"
        );
        assert_eq!(bucket_bits_for(u64::MAX), 24);
    }

    #[test]
    fn mixing_spreads_neighbouring_keys_over_buckets() {
        let buckets: BTreeSet<u64> = (0..1000u64).map(|k| mix(k) >> 48).collect();
        assert!(buckets.len() > 950, "{} distinct buckets", buckets.len());
    }
}
