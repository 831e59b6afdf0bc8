//! The library-wide statistics verification reads (see [`RedisLibraryStats`]).

use std::collections::HashMap;
use std::sync::Arc;

use copytrace_matcher::laundering::{SENSE_LISTED_MAX_WORKS, SenseIndex};
use copytrace_matcher::{IndexError, SeedFrequency, StatisticsKeys, WorkId};
use redis::{Cmd, Value};

use crate::link::Link;
use crate::{bucket_bits_for, check_params, recorded_bucket_bits, validate_prefix};

/// Decrements one seed count, deleting the field at zero: `KEYS[1]` the bucket, `ARGV[1]` the
/// field. Returns the count left.
const UNCOUNT: &str = r"
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return n
";

/// Projection byte of character seeds in fields and in the common set.
const CHARS: u8 = b'c';
/// Projection byte of pinyin seeds.
const PINYIN: u8 = b'p';

/// Fewest bucket bits of the seed counts: a library has about two seeds per character, so an
/// index first written for a small library and grown by `library add` would soon leave Redis's
/// compact hash encoding (128 fields) at the 12 bits of the window indexes: measured, 1,000
/// works added to an empty index took 261 bytes of Redis per library character, against 104
/// without the statistics. 65,536 buckets hold about 6 million seeds compactly (1,000 works of
/// 3,000 characters) and cost a few megabytes while they are few.
const MIN_SEED_BUCKET_BITS: u32 = 16;

/// Sense keys whose lists are read with one pipeline.
const SENSE_KEYS_PER_BATCH: usize = 4_096;

/// The library-wide statistics verification reads, kept in Redis by whoever changes the
/// library, so a match worker holds nothing per library character: which alignment seeds are
/// common (in at least `min_works` works: boilerplate, see `copytrace_matcher::common`) and the
/// sense index of laundered copies (which works hold each synonym group or Han character).
///
/// | key | type | holds |
/// |---|---|---|
/// | `{prefix}:s:{s<bucket hex>}` | hash | field: projection (`c` characters, `p` pinyin) and seed (8 bytes, big-endian); value: number of works holding it |
/// | `{prefix}:sw:{sw<work id>}` | string | the work's distinct seeds, to uncount them: character seed count (u32), then every character seed and every pinyin seed (8 bytes each) |
/// | `{prefix}:common` | set | projection byte and seed of every seed counted in `min_works` works or more |
/// | `{prefix}:k:{k<key>}` | set | ids of the works holding sense key `key` |
/// | `{prefix}:kw:{kw<work id>}` | string | the work's sense keys (u32 each), to remove them |
/// | `{prefix}:k:keys` | set | every sense key ever filed |
/// | `{prefix}:s:works` | set | ids of the works counted |
///
/// A worker reads only what verification asks: the common seeds (a small share of the
/// library's: text many works share) and, of the sense index, each key's number of works and
/// the lists of the keys in at most [`SENSE_LISTED_MAX_WORKS`] works. Keys are synonym groups
/// and Han characters, a set the thesaurus bounds, so what a worker loads is bounded however
/// large the library grows.
///
/// Counts cannot be written idempotently one field at a time, so a work's seeds are counted
/// once: its list is claimed with `SET NX` before any count moves, and a work already claimed is
/// not counted again (a change of text is a removal, then an insertion). A run stopped half way
/// leaves counts that are wrong, but never readable as right: the library digest stays blank
/// and workers refuse the index until `index rebuild` clears and rebuilds it. Library changes
/// are applied one at a time (the digest check serializes them); the sense sets, written with
/// `SADD`/`SREM`, are idempotent as they are.
pub struct RedisLibraryStats {
    link: Arc<Link>,
    prefix: String,
    bits: u32,
    min_works: u32,
}

impl std::fmt::Debug for RedisLibraryStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLibraryStats")
            .field("url", &self.link.shown_url())
            .field("prefix", &self.prefix)
            .field("bits", &self.bits)
            .field("min_works", &self.min_works)
            .finish_non_exhaustive()
    }
}

impl RedisLibraryStats {
    /// Opens the statistics under `prefix`, counting seeds common from `min_works` works
    /// (refused if they were written with another threshold). Bucket bits: those recorded, or
    /// for a new index those that suit about `expected_seeds` distinct seeds.
    pub(crate) fn open(
        link: Arc<Link>,
        prefix: &str,
        min_works: usize,
        expected_seeds: u64,
    ) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        let min_works = u32::try_from(min_works)
            .map_err(|_| IndexError::Backend(format!("min_works {min_works} is too large")))?;
        check_params(&link, prefix, &[("common_min_works", u64::from(min_works))])?;
        let bits = recorded_bucket_bits(
            &link,
            prefix,
            "s_bucket_bits",
            bucket_bits_for(expected_seeds).max(MIN_SEED_BUCKET_BITS),
        )?;
        Ok(RedisLibraryStats {
            link,
            prefix: prefix.to_owned(),
            bits,
            min_works,
        })
    }

    fn bucket_key(&self, field: &[u8; 9]) -> String {
        let seed = u64::from_be_bytes(field[1..].try_into().expect("8 bytes"));
        // Character and pinyin seeds are both well-mixed hashes: their top bits pick the bucket.
        let bucket = (seed ^ u64::from(field[0])) >> (64 - self.bits);
        format!("{}:s:{{s{bucket:x}}}", self.prefix)
    }

    fn seeds_key(&self, work_id: WorkId) -> String {
        format!("{}:sw:{{sw{work_id}}}", self.prefix)
    }

    fn common_key(&self) -> String {
        format!("{}:common", self.prefix)
    }

    fn sense_key(&self, key: u32) -> String {
        format!("{}:k:{{k{key}}}", self.prefix)
    }

    fn sense_work_key(&self, work_id: WorkId) -> String {
        format!("{}:kw:{{kw{work_id}}}", self.prefix)
    }

    fn sense_keys_key(&self) -> String {
        format!("{}:k:keys", self.prefix)
    }

    fn works_key(&self) -> String {
        format!("{}:s:works", self.prefix)
    }

    /// Counts a work's seeds and files its sense keys, unless it is counted already (inserting
    /// twice counts once). To change a work, remove it first.
    pub fn insert_work(&self, work_id: WorkId, keys: &StatisticsKeys) -> Result<(), IndexError> {
        self.insert_sense(work_id, &keys.sense)?;
        let mut list =
            Vec::with_capacity(4 + 8 * (keys.char_seeds.len() + keys.pinyin_seeds.len()));
        list.extend_from_slice(&(keys.char_seeds.len() as u32).to_be_bytes());
        for seed in keys.char_seeds.iter().chain(&keys.pinyin_seeds) {
            list.extend_from_slice(&seed.to_be_bytes());
        }
        let claimed: Option<String> = self.link.query(
            "count a work's seeds",
            redis::cmd("SET")
                .arg(self.seeds_key(work_id))
                .arg(list)
                .arg("NX"),
        )?;
        if claimed.is_some() {
            let fields = fields(&keys.char_seeds, &keys.pinyin_seeds);
            let counts: Vec<i64> = self.link.batch(
                "count a work's seeds",
                &fields
                    .iter()
                    .map(|field| {
                        let mut cmd = redis::cmd("HINCRBY");
                        cmd.arg(self.bucket_key(field)).arg(&field[..]).arg(1);
                        cmd
                    })
                    .collect::<Vec<_>>(),
            )?;
            let crossed: Vec<&[u8; 9]> = fields
                .iter()
                .zip(counts)
                .filter(|(_, n)| *n == i64::from(self.min_works))
                .map(|(field, _)| field)
                .collect();
            if !crossed.is_empty() {
                let mut add = redis::cmd("SADD");
                add.arg(self.common_key());
                for field in crossed {
                    add.arg(&field[..]);
                }
                self.link.query::<Value>("count a work's seeds", &add)?;
            }
        }
        self.link.query::<Value>(
            "count a work's seeds",
            redis::cmd("SADD").arg(self.works_key()).arg(work_id),
        )?;
        Ok(())
    }

    /// Files the work's sense keys: its list first, so a removal finds whatever a stopped
    /// insertion filed; every write is a set operation, so running it again changes nothing.
    fn insert_sense(&self, work_id: WorkId, keys: &[u32]) -> Result<(), IndexError> {
        if keys.is_empty() {
            return Ok(());
        }
        let list: Vec<u8> = keys.iter().flat_map(|k| k.to_be_bytes()).collect();
        let mut cmds = vec![{
            let mut set = redis::cmd("SET");
            set.arg(self.sense_work_key(work_id)).arg(list);
            set
        }];
        let mut registry = redis::cmd("SADD");
        registry.arg(self.sense_keys_key());
        for &key in keys {
            registry.arg(key);
            let mut add = redis::cmd("SADD");
            add.arg(self.sense_key(key)).arg(work_id);
            cmds.push(add);
        }
        cmds.push(registry);
        self.link
            .batch::<Value>("file a work's sense keys", &cmds)?;
        Ok(())
    }

    /// Uncounts a work's seeds and takes it out of the sense index; nothing for a work not
    /// counted.
    pub fn remove_work(&self, work_id: WorkId) -> Result<(), IndexError> {
        let seeds_key = self.seeds_key(work_id);
        let list: Option<Vec<u8>> = self
            .link
            .query("uncount a work's seeds", redis::cmd("GET").arg(&seeds_key))?;
        if let Some(list) = list {
            let (chars, pinyin) = parse_seed_list(&list)?;
            let fields = fields(&chars, &pinyin);
            let uncounts: Vec<Cmd> = fields
                .iter()
                .map(|field| {
                    let mut eval = redis::cmd("EVAL");
                    eval.arg(UNCOUNT)
                        .arg(1)
                        .arg(self.bucket_key(field))
                        .arg(&field[..]);
                    eval
                })
                .collect();
            let left: Vec<i64> = self.link.batch("uncount a work's seeds", &uncounts)?;
            let dropped: Vec<&[u8; 9]> = fields
                .iter()
                .zip(left)
                .filter(|(_, n)| *n == i64::from(self.min_works) - 1)
                .map(|(field, _)| field)
                .collect();
            if !dropped.is_empty() {
                let mut rem = redis::cmd("SREM");
                rem.arg(self.common_key());
                for field in dropped {
                    rem.arg(&field[..]);
                }
                self.link.query::<Value>("uncount a work's seeds", &rem)?;
            }
            self.link
                .query::<Value>("uncount a work's seeds", redis::cmd("DEL").arg(&seeds_key))?;
        }
        let sense_work_key = self.sense_work_key(work_id);
        let list: Option<Vec<u8>> = self.link.query(
            "remove a work's sense keys",
            redis::cmd("GET").arg(&sense_work_key),
        )?;
        if let Some(list) = list {
            if !list.len().is_multiple_of(4) {
                return Err(IndexError::Corrupt(format!(
                    "a sense key list of {} bytes",
                    list.len()
                )));
            }
            let removals: Vec<Cmd> = list
                .chunks(4)
                .map(|k| {
                    let key = u32::from_be_bytes(k.try_into().expect("4 bytes"));
                    let mut rem = redis::cmd("SREM");
                    rem.arg(self.sense_key(key)).arg(work_id);
                    rem
                })
                .collect();
            self.link
                .batch::<Value>("remove a work's sense keys", &removals)?;
            self.link.query::<Value>(
                "remove a work's sense keys",
                redis::cmd("DEL").arg(&sense_work_key),
            )?;
        }
        self.link.query::<Value>(
            "uncount a work's seeds",
            redis::cmd("SREM").arg(self.works_key()).arg(work_id),
        )?;
        Ok(())
    }

    /// Number of works counted.
    pub fn work_count(&self) -> Result<usize, IndexError> {
        self.link
            .query("count the works", redis::cmd("SCARD").arg(self.works_key()))
    }

    /// The seeds counted in `min_works` works or more, as a matcher sharing these statistics
    /// reads them ([`SeedFrequency::from_common`]).
    pub fn common_seeds(&self) -> Result<SeedFrequency, IndexError> {
        let members: Vec<Vec<u8>> = self.link.query(
            "read the common seeds",
            redis::cmd("SMEMBERS").arg(self.common_key()),
        )?;
        let mut chars = Vec::new();
        let mut pinyin = Vec::new();
        for member in members {
            let field: [u8; 9] = member.as_slice().try_into().map_err(|_| {
                IndexError::Corrupt(format!("a common seed of {} bytes", member.len()))
            })?;
            let seed = u64::from_be_bytes(field[1..].try_into().expect("8 bytes"));
            match field[0] {
                CHARS => chars.push(seed),
                PINYIN => pinyin.push(seed),
                other => {
                    return Err(IndexError::Corrupt(format!(
                        "a common seed of projection {other}"
                    )));
                }
            }
        }
        Ok(SeedFrequency::from_common(
            chars,
            pinyin,
            self.min_works as usize,
        ))
    }

    /// The sense index as a worker reads it: every key's number of works, and the lists of the
    /// keys held by at most [`SENSE_LISTED_MAX_WORKS`] works ([`SenseIndex::from_parts`]).
    pub fn sense_index(&self) -> Result<SenseIndex, IndexError> {
        let works = self.work_count()?;
        let keys: Vec<u32> = self.link.query(
            "read the sense index",
            redis::cmd("SMEMBERS").arg(self.sense_keys_key()),
        )?;
        let mut listed = HashMap::new();
        let mut counts = HashMap::new();
        for batch in keys.chunks(SENSE_KEYS_PER_BATCH) {
            let cards: Vec<u32> = self.link.batch(
                "read the sense index",
                &batch
                    .iter()
                    .map(|&key| {
                        let mut card = redis::cmd("SCARD");
                        card.arg(self.sense_key(key));
                        card
                    })
                    .collect::<Vec<_>>(),
            )?;
            let mut short = Vec::new();
            for (&key, card) in batch.iter().zip(cards) {
                if card as usize > SENSE_LISTED_MAX_WORKS {
                    counts.insert(key, card);
                } else if card > 0 {
                    short.push(key);
                }
            }
            let lists: Vec<Vec<WorkId>> = self.link.batch(
                "read the sense index",
                &short
                    .iter()
                    .map(|&key| {
                        let mut members = redis::cmd("SMEMBERS");
                        members.arg(self.sense_key(key));
                        members
                    })
                    .collect::<Vec<_>>(),
            )?;
            for (key, mut list) in short.into_iter().zip(lists) {
                // The order of a list decides nothing, but sorted it is the same in every worker.
                list.sort_unstable();
                listed.insert(key, list);
            }
        }
        Ok(SenseIndex::from_parts(works, listed, counts))
    }
}

/// The count fields of a work's seeds: projection byte, then the seed.
fn fields(chars: &[u64], pinyin: &[u64]) -> Vec<[u8; 9]> {
    let field = |projection: u8, seed: &u64| {
        let mut field = [projection; 9];
        field[1..].copy_from_slice(&seed.to_be_bytes());
        field
    };
    chars
        .iter()
        .map(|s| field(CHARS, s))
        .chain(pinyin.iter().map(|s| field(PINYIN, s)))
        .collect()
}

/// A work's seed list as [`RedisLibraryStats::insert_work`] stores it.
fn parse_seed_list(list: &[u8]) -> Result<(Vec<u64>, Vec<u64>), IndexError> {
    let corrupt = || IndexError::Corrupt(format!("a seed list of {} bytes", list.len()));
    if list.len() < 4 || !(list.len() - 4).is_multiple_of(8) {
        return Err(corrupt());
    }
    let chars = u32::from_be_bytes(list[..4].try_into().expect("4 bytes")) as usize;
    let seeds: Vec<u64> = list[4..]
        .chunks(8)
        .map(|s| u64::from_be_bytes(s.try_into().expect("8 bytes")))
        .collect();
    if chars > seeds.len() {
        return Err(corrupt());
    }
    let pinyin = seeds[chars..].to_vec();
    let mut chars_seeds = seeds;
    chars_seeds.truncate(chars);
    Ok((chars_seeds, pinyin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_list_reads_back_as_written() {
        let mut list = 2u32.to_be_bytes().to_vec();
        for seed in [1u64, 2, 3] {
            list.extend_from_slice(&seed.to_be_bytes());
        }
        assert_eq!(parse_seed_list(&list).unwrap(), (vec![1, 2], vec![3]));
        assert!(parse_seed_list(&list[..7]).is_err());
        let mut lying = 9u32.to_be_bytes().to_vec();
        lying.extend_from_slice(&1u64.to_be_bytes());
        assert!(parse_seed_list(&lying).is_err());
    }
}
