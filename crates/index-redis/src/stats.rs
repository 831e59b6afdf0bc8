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
/// | `{prefix}:k:{k<key>}` | set | ids of the works holding sense key `key` |
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
/// The sense sets, written with `SADD`/`SREM`, are idempotent as they are.
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
    /// Filing twice changes nothing; to change a work, remove it first.
    pub fn insert_work(&self, work_id: WorkId, sense: &[u32]) -> Result<(), IndexError> {
        self.insert_sense(work_id, sense)?;
        self.link.query::<Value>(
            "file a work's sense keys",
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

    /// Takes a work out of the sense index; nothing for a work not filed.
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
