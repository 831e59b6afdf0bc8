//! Candidate search over window fingerprints.
//!
//! [`SimHashIndex`] uses the pigeonhole principle (Manku, Jain, Das Sarma 2007): split the
//! 64-bit signature into `k + 1` blocks; two signatures within Hamming distance `k` agree
//! exactly on at least one block. One hash table per block maps that block's value to the
//! fingerprints having it, so a query probes `k + 1` buckets and checks the full distance only
//! for the few fingerprints found there, instead of scanning everything. Recall against a
//! brute-force scan is exact for every distance up to `k`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Identifier of a work (the store's row id).
pub type WorkId = i64;

/// One indexed window: which work, which window of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SegmentRef {
    /// The work.
    pub work_id: WorkId,
    /// The window's ordinal in the work.
    pub ordinal: u32,
}

/// A fingerprint found near a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The indexed window.
    pub segment: SegmentRef,
    /// Distance to the query in the index's own unit (Hamming bits for SimHash, differing
    /// minima for MinHash, code distance for DNA); 0 means identical.
    pub distance: u32,
}

/// Why an index operation failed. In-memory indexes never fail; remote ones (Redis) can.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The index's server could not be reached or refused the command.
    #[error("index backend: {0}")]
    Backend(String),
    /// A snapshot or stored entry could not be read back.
    #[error("corrupt index data: {0}")]
    Corrupt(String),
}

/// What every candidate index offers the matcher, so implementations (in memory, Redis, other
/// algorithms) can be swapped and compared on the same data. `F` is the window fingerprint the
/// index searches by: `u64` SimHash signatures by default.
pub trait Index<F = u64>: Send + Sync {
    /// Adds one window fingerprint.
    fn insert(&mut self, fingerprint: &F, segment: SegmentRef) -> Result<(), IndexError>;
    /// Adds every window of one work, `(ordinal, fingerprint)` each. Remote indexes override
    /// this to send a whole work in one round trip.
    fn insert_work(&mut self, work_id: WorkId, windows: &[(u32, F)]) -> Result<(), IndexError> {
        for (ordinal, fingerprint) in windows {
            self.insert(
                fingerprint,
                SegmentRef {
                    work_id,
                    ordinal: *ordinal,
                },
            )?;
        }
        Ok(())
    }
    /// Removes every window of a work.
    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError>;
    /// Appends to `out` every indexed window within the index's distance of `fingerprint`,
    /// each once.
    fn query(&self, fingerprint: &F, out: &mut Vec<Hit>) -> Result<(), IndexError>;
    /// Queries every fingerprint of a page; `out[i]` receives the hits of `fingerprints[i]`.
    /// Remote indexes override this to pipeline the lookups.
    fn query_many(&self, fingerprints: &[F], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        out.clear();
        for fingerprint in fingerprints {
            let mut hits = Vec::new();
            self.query(fingerprint, &mut hits)?;
            out.push(hits);
        }
        Ok(())
    }
    /// Number of indexed windows.
    fn len(&self) -> Result<usize, IndexError>;
    /// Whether nothing is indexed.
    fn is_empty(&self) -> Result<bool, IndexError> {
        Ok(self.len()? == 0)
    }
}

/// In-memory pigeonhole SimHash index for Hamming distance up to `max_distance`.
#[derive(Debug, Clone)]
pub struct SimHashIndex {
    max_distance: u32,
    /// `(shift, mask)` of each block.
    blocks: Vec<(u32, u64)>,
    /// One table per block: block value → positions in `entries`.
    tables: Vec<HashMap<u64, Vec<u32>>>,
    /// Fingerprints with their segment; `None` once removed (positions stay stable).
    entries: Vec<Option<(u64, SegmentRef)>>,
    live: usize,
}

impl SimHashIndex {
    /// An empty index answering queries within `max_distance` bits (at most 63).
    pub fn new(max_distance: u32) -> Self {
        let max_distance = max_distance.min(63);
        let count = max_distance + 1;
        let blocks = (0..count)
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
            .collect();
        SimHashIndex {
            max_distance,
            blocks,
            tables: vec![HashMap::new(); count as usize],
            entries: Vec::new(),
            live: 0,
        }
    }

    /// The distance this index answers for.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    fn block(&self, index: usize, fingerprint: u64) -> u64 {
        let (shift, mask) = self.blocks[index];
        fingerprint >> shift & mask
    }
}

impl Index for SimHashIndex {
    fn insert(&mut self, &fingerprint: &u64, segment: SegmentRef) -> Result<(), IndexError> {
        let position = self.entries.len() as u32;
        self.entries.push(Some((fingerprint, segment)));
        for b in 0..self.blocks.len() {
            let key = self.block(b, fingerprint);
            self.tables[b].entry(key).or_default().push(position);
        }
        self.live += 1;
        Ok(())
    }

    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let mut removed = Vec::new();
        for (position, entry) in self.entries.iter_mut().enumerate() {
            if let Some((fingerprint, segment)) = *entry
                && segment.work_id == work_id
            {
                removed.push((position as u32, fingerprint));
                *entry = None;
            }
        }
        for &(position, fingerprint) in &removed {
            for b in 0..self.blocks.len() {
                let key = self.block(b, fingerprint);
                if let Some(bucket) = self.tables[b].get_mut(&key) {
                    bucket.retain(|&p| p != position);
                    if bucket.is_empty() {
                        self.tables[b].remove(&key);
                    }
                }
            }
        }
        self.live -= removed.len();
        Ok(())
    }

    fn query(&self, &fingerprint: &u64, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        for b in 0..self.blocks.len() {
            let Some(bucket) = self.tables[b].get(&self.block(b, fingerprint)) else {
                continue;
            };
            for &position in bucket {
                let Some((candidate, segment)) = self.entries[position as usize] else {
                    continue;
                };
                let distance = (candidate ^ fingerprint).count_ones();
                if distance > self.max_distance {
                    continue;
                }
                // Report each fingerprint once: from the first block on which it agrees.
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

    fn len(&self) -> Result<usize, IndexError> {
        Ok(self.live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random numbers (SplitMix64) so the tests need no extra crate.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn flip_bits(mut value: u64, count: u32, state: &mut u64) -> u64 {
        let mut flipped = 0;
        while flipped < count {
            let bit = 1u64 << (splitmix(state) % 64);
            if value & bit == (value ^ bit) & bit {
                continue;
            }
            value ^= bit;
            flipped += 1;
        }
        value
    }

    #[test]
    fn recall_equals_brute_force_for_every_distance_up_to_k_and_none_beyond() {
        for k in 0..=6u32 {
            let mut state = u64::from(k) + 1;
            let mut index = SimHashIndex::new(k);
            let mut all = Vec::new();
            for i in 0..3000u32 {
                let fp = splitmix(&mut state);
                index
                    .insert(
                        &fp,
                        SegmentRef {
                            work_id: 1,
                            ordinal: i,
                        },
                    )
                    .unwrap();
                all.push(fp);
            }
            for distance in 0..=k + 1 {
                for q in 0..50 {
                    let base = all[(q * 37) % all.len()];
                    let query = flip_bits(base, distance, &mut state);
                    let mut hits = Vec::new();
                    index.query(&query, &mut hits).unwrap();
                    let mut found: Vec<u32> = hits.iter().map(|h| h.segment.ordinal).collect();
                    found.sort_unstable();
                    let expected: Vec<u32> = all
                        .iter()
                        .enumerate()
                        .filter(|(_, fp)| (**fp ^ query).count_ones() <= k)
                        .map(|(i, _)| i as u32)
                        .collect();
                    assert_eq!(found, expected, "k={k} distance={distance}");
                }
            }
        }
    }

    #[test]
    fn removed_works_are_no_longer_found() {
        let mut index = SimHashIndex::new(3);
        index.insert_work(1, &[(0, 42)]).unwrap();
        index.insert_work(2, &[(0, 43)]).unwrap();
        index.remove_work(1).unwrap();
        let mut hits = Vec::new();
        index.query(&42, &mut hits).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].segment.work_id, 2);
        assert_eq!(index.len().unwrap(), 1);
    }
}
