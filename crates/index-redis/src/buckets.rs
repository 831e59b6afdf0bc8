//! The MinHash LSH and DNA candidate indexes kept in Redis, beside the SimHash windows, so a
//! match worker holds none of the library's candidate indexes in memory.
//!
//! Both in-memory indexes file every window under one 64-bit key per table (a band hash for
//! MinHash, a block of digits for DNA; see `copytrace_matcher`'s `buckets` module). Here a table
//! key picks one of `2^bits` buckets of its table, and a bucket is a Redis string of fixed-size
//! records appended to on insert, read with the page's other probes in one batch:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{prefix}:<kind>:{<kind><table>:<bucket hex>}` | string | records `value ‖ work id (i64) ‖ ordinal (u32)`, big-endian |
//! | `{prefix}:<kind>w:{<kind>w<work id>}` | set | the buckets (`table << 32 | bucket`) the work's records are in |
//! | `{prefix}:<kind>:windows` | hash | work id → number of windows indexed |
//!
//! `kind` is `m` (MinHash: the value is the low 32 bits of the band hash, 16-byte records) or
//! `d` (DNA: the value is the 128-bit code, 28-byte records, so the code distance is checked on
//! the client exactly as in memory). Every bucket key carries its own hash tag, so buckets spread
//! evenly over a Redis Cluster's slots; a work's set is tagged by work.
//!
//! **Bounded key count.** Bucketing by `bits` bits (stored in `{prefix}:meta`, default
//! [`DEFAULT_BUCKET_BITS`]) bounds the keys at `tables · 2^bits` however large the library grows,
//! so key overhead stays fixed; what grows is the records per bucket, hence the bytes a page's
//! probes read. Records of other keys that share a bucket are told apart by the stored value.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use copytrace_matcher::{
    DnaIndex, Hit, Index, IndexError, LshConfig, MinHashLshIndex, MinHashSignature, SegmentRef,
    WorkId,
};
use redis::{Cmd, Value};

use crate::link::Link;
use crate::{check_params, command, records, remove_from_bucket, validate_prefix};

/// Bits of a table key that pick its bucket, unless the index was written with others: 65,536
/// buckets per table (983,040 keys at most for the default 15 MinHash bands).
pub const DEFAULT_BUCKET_BITS: u32 = 16;

/// Bytes of a record after its value: work id (i64) and window ordinal (u32).
const SEGMENT_LEN: usize = 12;

/// How one kind of candidate index files its windows.
trait Scheme: Send + Sync {
    /// What a window is filed by and a query searches with.
    type Key;
    /// The letter naming the index in keys.
    const KIND: &'static str;
    /// Bytes of a record's value.
    const VALUE_LEN: usize;
    /// Tables a window is filed in.
    fn tables(&self) -> usize;
    /// The key of each table for `key`.
    fn table_keys(&self, key: &Self::Key) -> Result<Vec<u64>, IndexError>;
    /// The record value of `key` filed in a table under `table_key`.
    fn value(&self, key: &Self::Key, table_key: u64, out: &mut Vec<u8>);
    /// The distance of a record found in `table` to the query, or `None` when it is not a hit
    /// (another key sharing the bucket, or too far).
    fn hit(&self, query: &Self::Key, query_keys: &[u64], table: usize, value: &[u8])
    -> Option<u32>;
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
    fn open(
        link: Arc<Link>,
        prefix: &str,
        scheme: S,
        params: &[(&str, u64)],
    ) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        let bits = DEFAULT_BUCKET_BITS;
        let bits_field = format!("{}_bucket_bits", S::KIND);
        let mut all = params.to_vec();
        all.push((&bits_field, u64::from(bits)));
        check_params(&link, prefix, &all)?;
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
        let mut buckets: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (ordinal, key) in windows {
            for (table, table_key) in self.scheme.table_keys(key)?.into_iter().enumerate() {
                let records = buckets.entry(self.bucket_id(table, table_key)).or_default();
                self.scheme.value(key, table_key, records);
                records.extend_from_slice(&work_id.to_be_bytes());
                records.extend_from_slice(&ordinal.to_be_bytes());
            }
        }
        // The work's bucket list first, so a run stopped while appending leaves records that
        // removing the work (or inserting it again) finds.
        let mut listed = redis::cmd("SADD");
        listed.arg(self.work_key(work_id));
        for id in buckets.keys() {
            listed.arg(*id);
        }
        self.link.query::<Value>("insert a work", &listed)?;
        let appends: Vec<Cmd> = buckets
            .iter()
            .map(|(id, records)| {
                let mut append = redis::cmd("APPEND");
                append.arg(self.bucket_key(*id)).arg(&records[..]);
                append
            })
            .collect();
        self.link.batch::<Value>("insert a work", &appends)?;
        self.link.query::<Value>(
            "insert a work",
            redis::cmd("HSET")
                .arg(self.windows_key())
                .arg(work_id)
                .arg(windows.len()),
        )?;
        Ok(())
    }

    /// Adds one window to what the work has.
    fn insert_window(&self, key: &S::Key, segment: SegmentRef) -> Result<(), IndexError> {
        let mut cmds = Vec::new();
        let mut appends = Vec::new();
        let mut listed = redis::cmd("SADD");
        listed.arg(self.work_key(segment.work_id));
        for (table, table_key) in self.scheme.table_keys(key)?.into_iter().enumerate() {
            let id = self.bucket_id(table, table_key);
            listed.arg(id);
            let mut record = Vec::with_capacity(Self::RECORD_LEN);
            self.scheme.value(key, table_key, &mut record);
            record.extend_from_slice(&segment.work_id.to_be_bytes());
            record.extend_from_slice(&segment.ordinal.to_be_bytes());
            let mut append = redis::cmd("APPEND");
            append.arg(self.bucket_key(id)).arg(record);
            appends.push(append);
        }
        cmds.push(listed);
        cmds.extend(appends);
        let mut count = redis::cmd("HINCRBY");
        count.arg(self.windows_key()).arg(segment.work_id).arg(1);
        cmds.push(count);
        self.link.batch::<Value>("insert a window", &cmds)?;
        Ok(())
    }

    fn remove_work(&self, work_id: WorkId) -> Result<(), IndexError> {
        let work_key = self.work_key(work_id);
        let ids: Vec<u64> = self
            .link
            .query("remove a work", redis::cmd("SMEMBERS").arg(&work_key))?;
        let removals: Vec<Cmd> = ids
            .iter()
            .map(|&id| {
                remove_from_bucket(
                    &self.bucket_key(id),
                    work_id,
                    Self::RECORD_LEN,
                    S::VALUE_LEN,
                )
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
        Ok(())
    }

    fn query_many(&self, queries: &[S::Key], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        out.clear();
        if queries.is_empty() {
            return Ok(());
        }
        let tables = self.scheme.tables();
        let mut query_keys = Vec::with_capacity(queries.len());
        let mut probes = Vec::with_capacity(queries.len() * tables);
        for query in queries {
            let keys = self.scheme.table_keys(query)?;
            for (table, &table_key) in keys.iter().enumerate() {
                probes.push(self.bucket_key(self.bucket_id(table, table_key)));
            }
            query_keys.push(keys);
        }
        let mut replies = self.link.get_many("query a page", &probes)?.into_iter();
        for (query, keys) in queries.iter().zip(&query_keys) {
            // Each window once, with the distance of its first agreeing table and the number of
            // tables it agrees in.
            let mut found: HashMap<SegmentRef, (u32, u32)> = HashMap::new();
            let mut order = Vec::new();
            for (table, reply) in replies.by_ref().take(tables).enumerate() {
                for record in records(reply, Self::RECORD_LEN)? {
                    let (value, segment) = record.split_at(S::VALUE_LEN);
                    let Some(distance) = self.scheme.hit(query, keys, table, value) else {
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

    /// Works with windows in the index.
    fn work_count(&self) -> Result<usize, IndexError> {
        self.link.query(
            "count the indexed works",
            redis::cmd("HLEN").arg(self.windows_key()),
        )
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
    const VALUE_LEN: usize = 4;

    fn tables(&self) -> usize {
        self.shape.bands()
    }

    fn table_keys(&self, signature: &MinHashSignature) -> Result<Vec<u64>, IndexError> {
        self.shape.band_keys(signature)
    }

    fn value(&self, _: &MinHashSignature, table_key: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&(table_key as u32).to_be_bytes());
    }

    fn hit(&self, _: &MinHashSignature, keys: &[u64], table: usize, value: &[u8]) -> Option<u32> {
        (value == (keys[table] as u32).to_be_bytes()).then_some(0)
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

    fn value(&self, code: &u128, _: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&code.to_be_bytes());
    }

    fn hit(&self, query: &u128, _: &[u64], _: usize, value: &[u8]) -> Option<u32> {
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
    ) -> Result<Self, IndexError> {
        let shape = MinHashLshIndex::new(config);
        let params = [
            ("minhash_perm", shape.num_perm() as u64),
            ("minhash_bands", shape.bands() as u64),
            ("minhash_rows", shape.rows() as u64),
        ];
        Ok(RedisMinHashIndex {
            buckets: Buckets::open(link, prefix, MinHashScheme { shape }, &params)?,
        })
    }

    /// Works with windows in this index.
    pub fn work_count(&self) -> Result<usize, IndexError> {
        self.buckets.work_count()
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
    ) -> Result<Self, IndexError> {
        let shape = DnaIndex::new(levels, max_distance);
        let params = [
            ("dna_levels", u64::from(shape.levels())),
            ("dna_distance", u64::from(shape.max_distance())),
        ];
        Ok(RedisDnaIndex {
            buckets: Buckets::open(link, prefix, DnaScheme { shape }, &params)?,
        })
    }

    /// Works with windows in this index.
    pub fn work_count(&self) -> Result<usize, IndexError> {
        self.buckets.work_count()
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
    fn mixing_spreads_neighbouring_keys_over_buckets() {
        let buckets: BTreeSet<u64> = (0..1000u64).map(|k| mix(k) >> 48).collect();
        assert!(buckets.len() > 950, "{} distinct buckets", buckets.len());
    }
}
