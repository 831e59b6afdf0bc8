//! Bucket bookkeeping shared by the hash-table candidate indexes ([`crate::lsh`] and
//! [`crate::dna_index`]).
//!
//! Both file every window under one 64-bit key per table (a band hash for MinHash LSH, a block
//! of digits for DNA codes) and answer a query by walking the buckets of the query's keys. What
//! differs is only how keys are made and which entries of a bucket count as hits, so that stays
//! with each index; the storage is here, once:
//!
//! - entries live in a slot vector, and a removed work's slots are reused by the next inserts,
//!   so positions stay stable and memory does not grow with churn;
//! - each work's positions are kept, so removing a work touches only its own entries (and its
//!   keys are recomputed from the stored entry, not kept a second time);
//! - a bucket emptied by a removal is dropped, so an emptied index holds no tables' worth of
//!   empty vectors.

use foldhash::{HashMap, HashMapExt};
use smallvec::SmallVec;

use crate::index::{Hit, SegmentRef, WorkId};

/// Positions of the entries filed under one key.
type Bucket = SmallVec<[u32; 4]>;

/// Entries of type `E` with their segment, filed under one key per table.
#[derive(Debug, Clone)]
pub(crate) struct Buckets<E> {
    /// One map per table: key → positions in `entries`. Most keys file one or two entries
    /// (band hashes of different windows rarely collide), so up to four positions are kept in
    /// place rather than in an allocation of their own: loading a library of 2,137 works, the
    /// MinHash index (15 tables) took 285 MB with a `Vec` per key and 211 MB so
    /// (docs/scaling.md).
    tables: Vec<HashMap<u64, Bucket>>,
    /// Entries with their segment; `None` for a freed slot (positions stay stable).
    entries: Vec<Option<(E, SegmentRef)>>,
    /// Freed positions, reused by the next inserts.
    free: Vec<u32>,
    /// Positions of each work's windows, so removing a work touches only its own entries.
    by_work: HashMap<WorkId, Vec<u32>>,
    live: usize,
}

impl<E> Buckets<E> {
    /// Empty storage with `tables` tables.
    pub(crate) fn new(tables: usize) -> Self {
        Buckets {
            tables: vec![HashMap::new(); tables],
            entries: Vec::new(),
            free: Vec::new(),
            by_work: HashMap::new(),
            live: 0,
        }
    }

    /// Stores `entry` for `segment`, filed in table `t` under the `t`-th of `keys`.
    pub(crate) fn insert(
        &mut self,
        entry: E,
        segment: SegmentRef,
        keys: impl IntoIterator<Item = u64>,
    ) {
        let entry = Some((entry, segment));
        let position = match self.free.pop() {
            Some(position) => {
                self.entries[position as usize] = entry;
                position
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        for (table, key) in keys.into_iter().enumerate() {
            self.tables[table].entry(key).or_default().push(position);
        }
        self.by_work
            .entry(segment.work_id)
            .or_default()
            .push(position);
        self.live += 1;
    }

    /// Removes every entry of a work; `keys` gives the keys an entry was filed under (the same
    /// ones [`Buckets::insert`] was given for it).
    pub(crate) fn remove_work<K: IntoIterator<Item = u64>>(
        &mut self,
        work_id: WorkId,
        mut keys: impl FnMut(&E) -> K,
    ) {
        let Some(positions) = self.by_work.remove(&work_id) else {
            return;
        };
        for position in positions {
            let Some((entry, _)) = self.entries[position as usize].take() else {
                continue;
            };
            for (table, key) in keys(&entry).into_iter().enumerate() {
                if let Some(bucket) = self.tables[table].get_mut(&key) {
                    bucket.retain(|p| *p != position);
                    if bucket.is_empty() {
                        self.tables[table].remove(&key);
                    }
                }
            }
            self.free.push(position);
            self.live -= 1;
        }
    }

    /// The entries filed in `table` under `key`, in insertion order (reused slots aside).
    fn bucket(&self, table: usize, key: u64) -> impl Iterator<Item = (&E, SegmentRef)> {
        self.tables[table]
            .get(&key)
            .into_iter()
            .flatten()
            .filter_map(|&position| {
                let (entry, segment) = self.entries[position as usize].as_ref()?;
                Some((entry, *segment))
            })
    }

    /// Walks the buckets of a query, table `t` under the `t`-th of `keys`, and appends a hit for
    /// each entry that `accept` gives a distance. `accept` also sees the table the entry was
    /// found through, so an index that files one entry in several tables can report it once.
    pub(crate) fn hits(
        &self,
        keys: impl IntoIterator<Item = u64>,
        out: &mut Vec<Hit>,
        mut accept: impl FnMut(usize, &E) -> Option<u32>,
    ) {
        for (table, key) in keys.into_iter().enumerate() {
            for (entry, segment) in self.bucket(table, key) {
                if let Some(distance) = accept(table, entry) {
                    out.push(Hit { segment, distance });
                }
            }
        }
    }

    /// Number of entries stored.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// Slots allocated, live or freed: what reuse keeps from growing.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.entries.len()
    }

    /// Whether every table is empty, with no bucket left behind by removals.
    #[cfg(test)]
    pub(crate) fn tables_are_empty(&self) -> bool {
        self.tables.iter().all(HashMap::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(work_id: WorkId, ordinal: u32) -> SegmentRef {
        SegmentRef { work_id, ordinal }
    }

    /// Entries are numbers filed under themselves and their double.
    fn keys(entry: &u64) -> [u64; 2] {
        [*entry, entry * 2]
    }

    fn found(buckets: &Buckets<u64>, table: usize, key: u64) -> Vec<(u64, SegmentRef)> {
        buckets.bucket(table, key).map(|(e, s)| (*e, s)).collect()
    }

    #[test]
    fn entries_are_found_under_each_of_their_keys_until_their_work_is_removed() {
        let mut buckets = Buckets::new(2);
        for (entry, work) in [(1, 10), (2, 10), (1, 20)] {
            buckets.insert(entry, segment(work, 0), keys(&entry));
        }
        assert_eq!(buckets.len(), 3);
        assert_eq!(
            found(&buckets, 0, 1),
            [(1, segment(10, 0)), (1, segment(20, 0))]
        );
        assert_eq!(found(&buckets, 1, 4), [(2, segment(10, 0))]);
        assert!(found(&buckets, 1, 1).is_empty(), "keys are per table");
        buckets.remove_work(10, keys);
        assert_eq!(buckets.len(), 1);
        assert_eq!(found(&buckets, 0, 1), [(1, segment(20, 0))]);
        assert!(found(&buckets, 1, 4).is_empty());
        buckets.remove_work(10, keys);
        assert_eq!(buckets.len(), 1, "removing an absent work changes nothing");
    }

    #[test]
    fn freed_slots_are_reused_and_emptied_buckets_dropped() {
        let mut buckets = Buckets::new(2);
        buckets.insert(5, segment(1, 0), keys(&5));
        buckets.insert(6, segment(1, 1), keys(&6));
        buckets.remove_work(1, keys);
        assert!(buckets.tables_are_empty());
        buckets.insert(7, segment(2, 0), keys(&7));
        assert_eq!(buckets.slots(), 2);
        assert_eq!(found(&buckets, 1, 14), [(7, segment(2, 0))]);
    }
}
