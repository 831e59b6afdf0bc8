//! The library-wide statistics verification reads (see [`RedisLibraryStats`]).

use std::collections::HashMap;
use std::sync::Arc;

use copytrace_matcher::laundering::{SENSE_LISTED_MAX_WORKS, SenseIndex};
use copytrace_matcher::{IndexError, WorkId};
use redis::{Cmd, Value};

use crate::link::Link;
use crate::validate_prefix;

/// Sense keys whose lists are read with one pipeline.
const SENSE_KEYS_PER_BATCH: usize = 4_096;

/// The library-wide statistics verification reads, kept in Redis by whoever changes the
/// library, so a match worker holds nothing per library character: the sense index of
/// laundered copies (which works hold each synonym group or Han character).
///
/// | key | type | holds |
/// |---|---|---|
/// | `{prefix}:k:{k<key>}` | string | ids of the works holding sense key `key`, 4 bytes each, big-endian |
/// | `{prefix}:kw:{kw<work id>}` | string | the work's sense keys (u32 each), to remove them |
/// | `{prefix}:k:keys` | set | every sense key ever filed |
/// | `{prefix}:s:works` | set | ids of the works filed |
///
/// A worker reads each key's number of works and the lists of the keys in at most
/// [`SENSE_LISTED_MAX_WORKS`] works. Keys are synonym groups and Han characters, a set the
/// thesaurus bounds, so what a worker loads is bounded however large the library grows.
///
/// Which text is library boilerplate is no longer counted here, seed by seed (about 45 bytes a
/// library character): the k-gram postings tell it ([`copytrace_matcher::postings::common_mask`]).
/// A work's id is appended to each of its keys' lists (a set of ids took about 50 bytes a
/// member once past 512 members, and the sense index grew with the library: 32 bytes a library
/// character at 10,000 works); a work already filed is not appended again.
pub struct RedisLibraryStats {
    link: Arc<Link>,
    prefix: String,
}

impl std::fmt::Debug for RedisLibraryStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLibraryStats")
            .field("url", &self.link.shown_url())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisLibraryStats {
    /// Opens the statistics under `prefix`.
    pub(crate) fn open(link: Arc<Link>, prefix: &str) -> Result<Self, IndexError> {
        validate_prefix(prefix)?;
        Ok(RedisLibraryStats {
            link,
            prefix: prefix.to_owned(),
        })
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

    /// Files a work's sense keys (`sense`, see `copytrace_matcher::Matcher::sense_keys_of`).
    /// Filing a work filed already changes nothing; to change a work, remove it first.
    pub fn insert_work(&self, work_id: WorkId, sense: &[u32]) -> Result<(), IndexError> {
        self.append_new_works(&[(work_id, sense.to_vec())])
    }

    /// Files many works at once: each work's own key list (for its removal), then for each
    /// sense key one `APPEND` of the packed ids of every work of the batch holding it, then the
    /// keys in the registry and the works in the list of works. Works already filed are
    /// skipped, so filing a batch again changes nothing. Library changes are made one at a
    /// time (the caller serializes them).
    pub fn append_new_works(&self, works: &[(WorkId, Vec<u32>)]) -> Result<(), IndexError> {
        if works.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = works.iter().map(|(id, _)| id.to_string()).collect();
        let mut filed = redis::cmd("SMISMEMBER");
        filed.arg(self.works_key());
        for id in &ids {
            filed.arg(id);
        }
        let filed: Vec<bool> = self.link.query("file works' sense keys", &filed)?;
        let mut lists = Vec::new();
        let mut per_key: std::collections::BTreeMap<u32, Vec<u8>> = Default::default();
        let mut new_ids = Vec::new();
        for ((work_id, keys), filed) in works.iter().zip(filed) {
            if filed {
                continue;
            }
            let packed = packed_id(*work_id)?;
            if !keys.is_empty() {
                let list: Vec<u8> = keys.iter().flat_map(|k| k.to_be_bytes()).collect();
                let mut set = redis::cmd("SET");
                set.arg(self.sense_work_key(*work_id)).arg(list);
                lists.push(set);
            }
            for &key in keys {
                per_key.entry(key).or_default().extend_from_slice(&packed);
            }
            new_ids.push(*work_id);
        }
        if new_ids.is_empty() {
            return Ok(());
        }
        self.link.batch::<Value>("file works' sense keys", &lists)?;
        let keys: Vec<u32> = per_key.keys().copied().collect();
        let appends: Vec<Cmd> = per_key
            .into_iter()
            .map(|(key, ids)| {
                let mut append = redis::cmd("APPEND");
                append.arg(self.sense_key(key)).arg(ids);
                append
            })
            .collect();
        for batch in appends.chunks(SENSE_KEYS_PER_BATCH) {
            self.link.batch::<Value>("file works' sense keys", batch)?;
        }
        for batch in keys.chunks(SENSE_KEYS_PER_BATCH) {
            let mut registry = redis::cmd("SADD");
            registry.arg(self.sense_keys_key());
            for key in batch {
                registry.arg(*key);
            }
            self.link
                .query::<Value>("file works' sense keys", &registry)?;
        }
        let mut listed = redis::cmd("SADD");
        listed.arg(self.works_key());
        for id in new_ids {
            listed.arg(id);
        }
        self.link
            .query::<Value>("file works' sense keys", &listed)?;
        Ok(())
    }

    /// Takes a work out of the sense index (its id out of each of its keys' lists, found from
    /// its own key list); nothing for a work not filed.
    pub fn remove_work(&self, work_id: WorkId) -> Result<(), IndexError> {
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
            let packed = packed_id(work_id)?;
            let keys: Vec<String> = list
                .chunks(4)
                .map(|k| self.sense_key(u32::from_be_bytes(k.try_into().expect("4 bytes"))))
                .collect();
            for batch in keys.chunks(SENSE_KEYS_PER_BATCH) {
                let held = self.link.get_many("remove a work's sense keys", batch)?;
                let mut writes = Vec::new();
                for (key, held) in batch.iter().zip(held) {
                    let ids = work_ids_of(held)?;
                    let kept: Vec<u8> = ids
                        .chunks(4)
                        .filter(|id| *id != packed)
                        .flatten()
                        .copied()
                        .collect();
                    if kept.len() == ids.len() {
                        continue;
                    }
                    let mut write = if kept.is_empty() {
                        redis::cmd("DEL")
                    } else {
                        redis::cmd("SET")
                    };
                    write.arg(key);
                    if !kept.is_empty() {
                        write.arg(kept);
                    }
                    writes.push(write);
                }
                self.link
                    .batch::<Value>("remove a work's sense keys", &writes)?;
            }
            self.link.query::<Value>(
                "remove a work's sense keys",
                redis::cmd("DEL").arg(&sense_work_key),
            )?;
        }
        self.link.query::<Value>(
            "remove a work's sense keys",
            redis::cmd("SREM").arg(self.works_key()).arg(work_id),
        )?;
        Ok(())
    }

    /// Number of works filed.
    pub fn work_count(&self) -> Result<usize, IndexError> {
        self.link
            .query("count the works", redis::cmd("SCARD").arg(self.works_key()))
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
            let lengths: Vec<usize> = self.link.batch(
                "read the sense index",
                &batch
                    .iter()
                    .map(|&key| {
                        let mut length = redis::cmd("STRLEN");
                        length.arg(self.sense_key(key));
                        length
                    })
                    .collect::<Vec<_>>(),
            )?;
            let mut short = Vec::new();
            for (&key, length) in batch.iter().zip(lengths) {
                let holding = length / 4;
                if holding > SENSE_LISTED_MAX_WORKS {
                    counts.insert(key, holding as u32);
                } else if holding > 0 {
                    short.push(key);
                }
            }
            let names: Vec<String> = short.iter().map(|&key| self.sense_key(key)).collect();
            let lists = self.link.get_many("read the sense index", &names)?;
            for (key, list) in short.into_iter().zip(lists) {
                let mut list: Vec<WorkId> = work_ids_of(list)?
                    .chunks(4)
                    .map(|id| WorkId::from(u32::from_be_bytes(id.try_into().expect("4 bytes"))))
                    .collect();
                // The order of a list decides nothing, but sorted it is the same in every worker.
                list.sort_unstable();
                listed.insert(key, list);
            }
        }
        Ok(SenseIndex::from_parts(works, listed, counts))
    }
}

/// A work id as a sense list holds it: 4 bytes, big-endian.
fn packed_id(work_id: WorkId) -> Result<[u8; 4], IndexError> {
    u32::try_from(work_id)
        .map(u32::to_be_bytes)
        .map_err(|_| IndexError::Corrupt(format!("work id {work_id} does not fit a sense list")))
}

/// The packed ids of a sense list read back (none for a missing key).
fn work_ids_of(reply: Value) -> Result<Vec<u8>, IndexError> {
    match reply {
        Value::Nil => Ok(Vec::new()),
        Value::BulkString(bytes) if bytes.len().is_multiple_of(4) => Ok(bytes),
        other => Err(IndexError::Corrupt(format!(
            "a sense list that is not whole 4-byte ids: {other:?}"
        ))),
    }
}
