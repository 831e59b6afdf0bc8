//! In-memory SimHash index: candidate windows within a few Hamming bits of a page window.
//!
//! [`SimHashIndex`] uses the pigeonhole principle (Manku, Jain, Das Sarma 2007): split the
//! 64-bit signature into `m >= k + 1` blocks; two signatures within Hamming distance `k` differ
//! in at most `k` blocks, so they agree exactly on at least `m - k` of them. The index keeps one
//! *table* per choice of `m - k` blocks (`k + 1` tables of one block each for the default
//! `m = k + 1`). A query probes each table once and checks the full distance only for the
//! fingerprints agreeing on that table's blocks, instead of scanning everything. Recall against
//! a brute-force scan is exact for every distance up to `k`.
//!
//! # Layout, and why
//!
//! Memory decides how large a library one machine holds, and cache misses decide query speed,
//! so the index is column storage rather than maps of vectors:
//!
//! - Each table stores every fingerprint *permuted* so its key blocks are the top bits, sorted,
//!   in a plain `Vec<u64>`, with the row id of each entry in a parallel `Vec<u32>`. Hamming
//!   distance is invariant under a bit permutation, so the query is permuted once per table and
//!   compared with the stored values directly: the candidates of a probe are one contiguous run
//!   of `u64`s (one or two cache lines), not pointers to chase.
//! - A directory of `2^d + 1` offsets per table, indexed by the top `d` bits (`d` at most the
//!   key width, about `log2(n) - 2`), gives that run without a binary search. It costs at most
//!   one byte per fingerprint per table.
//! - Rows (the ids) carry the segment: the window ordinal in a `Vec<u32>` and the work id as
//!   runs `(first row, work)`, since a work's windows are inserted together. Tombstones are a
//!   bitset. With the default `k + 1` tables that is `12 (k + 1) + 4` bytes per fingerprint
//!   plus a few for the runs and directories: 52 bytes at `k = 3`.
//!
//! Inserts go to a small *delta*: the raw fingerprints plus, per table, a chained hash of the
//! key (12 bytes per table per delta entry), which queries probe besides the sorted tables. When
//! the delta outgrows an eighth of the base (and at least 4096 entries) it is sorted and merged
//! into the tables in place, so `n` single inserts cost `O(n log n)` in all. Removing a work
//! marks its rows dead; once a quarter of the rows are dead, [`SimHashIndex::compact`] drops
//! them and renumbers the rows (it can also be called after a bulk load, to merge the delta).
//!
//! # Choosing the number of blocks
//!
//! With `k + 1` blocks a probe's key is `64 / (k + 1)` bits wide, so each probe finds about
//! `n / 2^(64 / (k + 1))` candidates: 15 at `n = 10^6, k = 3`, 150 at `10^7`, 15,000 at `10^9`.
//! For very large libraries [`SimHashIndex::with_blocks`] uses more, smaller blocks with one
//! table per `m - k` of them (Manku's permuted tables): `m = 5, k = 3` gives 10 tables keyed
//! by 25–26 bits, so 10 probes of ~0.015 candidates each at `n = 10^6` and ~15 at `10^9`, for
//! 10 / 4 of the memory. Every layout is exact; they trade memory for candidates per query.
//!
//! # Snapshots
//!
//! [`SimHashIndex::write_snapshot`] writes the sorted tables as they are (little-endian,
//! versioned header, xxh3 checksums of header and body) so [`SimHashIndex::read_snapshot`] loads
//! a library at start-up with sequential reads, no sorting and no hashing of fingerprints.

use std::io::{Read, Write};

use copytrace_fingerprint::cpu;

use crate::index::{Hit, Index, IndexError, SegmentRef, WorkId};

mod snapshot;

/// Most tables one layout may use: memory grows with the table count (12 bytes per fingerprint
/// per table), so layouts past this are a mistake rather than a trade-off.
pub const MAX_TABLES: usize = 64;
/// The delta is merged into the sorted tables once it holds more than this many entries…
const MIN_DELTA: usize = 4096;
/// …and more than the base size divided by this.
const DELTA_DIVISOR: usize = 8;
/// End of a delta hash chain.
const EMPTY: u32 = u32::MAX;

/// Moves one block of bits: `(x >> from & mask) << to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Move {
    from: u32,
    to: u32,
    mask: u64,
}

fn apply(moves: &[Move], x: u64) -> u64 {
    moves
        .iter()
        .fold(0, |acc, m| acc | (x >> m.from & m.mask) << m.to)
}

/// How one table orders the bits: its key blocks first (the top bits), then the others.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    /// Original fingerprint → table order.
    forward: Vec<Move>,
    /// Table order → original fingerprint.
    backward: Vec<Move>,
    /// Bits of the key (the top bits in table order).
    key_width: u32,
    /// The key bits, in original bit positions.
    key_mask: u64,
}

/// The tables of `blocks` blocks for distance `max_distance`, or `None` if that layout is not
/// exact (`blocks <= max_distance`) or too large.
fn plans(max_distance: u32, blocks: u32) -> Option<Vec<Plan>> {
    if max_distance > 63 || blocks <= max_distance || blocks > 64 {
        return None;
    }
    let m = blocks as usize;
    let chosen = m - max_distance as usize;
    // C(m, chosen), stopping as soon as it passes the limit.
    let mut count: u128 = 1;
    for i in 0..chosen {
        count = count * (m - i) as u128 / (i + 1) as u128;
    }
    if count > MAX_TABLES as u128 {
        return None;
    }
    let bounds: Vec<(u32, u64)> = (0..blocks)
        .map(|b| {
            let start = 64 * b / blocks;
            let width = 64 * (b + 1) / blocks - start;
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1 << width) - 1
            };
            (start, mask)
        })
        .collect();
    let mut result = Vec::new();
    // Every `chosen`-subset of the blocks, in lexicographic order.
    let mut subset: Vec<usize> = (0..chosen).collect();
    loop {
        let mut order = subset.clone();
        order.extend((0..m).filter(|b| !subset.contains(b)));
        let mut forward = Vec::with_capacity(m);
        let mut backward = Vec::with_capacity(m);
        let mut top = 64;
        for &b in &order {
            let (start, mask) = bounds[b];
            top -= mask.count_ones();
            forward.push(Move {
                from: start,
                to: top,
                mask,
            });
            backward.push(Move {
                from: top,
                to: start,
                mask,
            });
        }
        result.push(Plan {
            forward,
            backward,
            key_width: subset.iter().map(|&b| bounds[b].1.count_ones()).sum(),
            key_mask: subset
                .iter()
                .fold(0, |acc, &b| acc | bounds[b].1 << bounds[b].0),
        });
        // Next subset: bump the last index that can still move right.
        let Some(i) = (0..chosen).rev().find(|&i| subset[i] < m - chosen + i) else {
            break;
        };
        subset[i] += 1;
        for j in i + 1..chosen {
            subset[j] = subset[j - 1] + 1;
        }
    }
    Some(result)
}

/// One table: permuted fingerprints sorted, their rows, and a directory over the top bits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Table {
    keys: Vec<u64>,
    ids: Vec<u32>,
    dir_bits: u32,
    /// `dir[p]..dir[p + 1]` are the entries whose top `dir_bits` bits equal `p`.
    dir: Vec<u32>,
}

impl Table {
    /// Recomputes the directory for the current entries: about `n / 4` slots, so at most one
    /// byte per entry and a handful of entries per slot.
    fn rebuild_dir(&mut self, key_width: u32) {
        let n = self.keys.len().max(1);
        let log2 = usize::BITS - 1 - n.leading_zeros();
        self.dir_bits = log2.saturating_sub(2).clamp(1, 28).min(key_width);
        let shift = 64 - self.dir_bits;
        let mut dir = vec![0u32; (1usize << self.dir_bits) + 1];
        for &key in &self.keys {
            dir[(key >> shift) as usize + 1] += 1;
        }
        for p in 1..dir.len() {
            dir[p] += dir[p - 1];
        }
        self.dir = dir;
    }

    /// The entries whose top directory bits match those of `permuted`.
    fn range(&self, permuted: u64) -> (usize, usize) {
        let slot = (permuted >> (64 - self.dir_bits)) as usize;
        (self.dir[slot] as usize, self.dir[slot + 1] as usize)
    }

    /// Merges `sorted` (by key, all ids above the present ones) in place, from the back.
    fn merge(&mut self, sorted: &[(u64, u32)]) {
        let old = self.keys.len();
        let total = old + sorted.len();
        self.keys.reserve_exact(sorted.len());
        self.ids.reserve_exact(sorted.len());
        self.keys.resize(total, 0);
        self.ids.resize(total, 0);
        let (mut i, mut j, mut w) = (old, sorted.len(), total);
        while j > 0 {
            w -= 1;
            if i > 0 && self.keys[i - 1] > sorted[j - 1].0 {
                i -= 1;
                self.keys[w] = self.keys[i];
                self.ids[w] = self.ids[i];
            } else {
                j -= 1;
                (self.keys[w], self.ids[w]) = sorted[j];
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.ids.capacity() * 4 + self.dir.capacity() * 4
    }
}

/// Recent inserts not merged into the sorted tables yet, with a chained hash per table.
#[derive(Debug, Clone, Default)]
struct Delta {
    /// Original fingerprints; slot `s` is row `base_rows + s`.
    fps: Vec<u64>,
    /// How many leading `fps` are in the chains.
    linked: usize,
    hash_bits: u32,
    /// Per table: hash of the key → last slot with that hash, or [`EMPTY`].
    heads: Vec<Vec<u32>>,
    /// Per table: slot → previous slot of its chain, or [`EMPTY`].
    next: Vec<Vec<u32>>,
}

fn chain_hash(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

impl Delta {
    /// Enters every unlinked slot in the chains, doubling the heads when they get crowded.
    fn link(&mut self, plans: &[Plan]) {
        if self.fps.is_empty() {
            self.clear();
            return;
        }
        if self.fps.len() * 2 > 1usize << self.hash_bits || self.heads.len() != plans.len() {
            let wanted = (self.fps.len() * 2).next_power_of_two().max(1024);
            self.hash_bits = wanted.trailing_zeros();
            self.heads = vec![vec![EMPTY; wanted]; plans.len()];
            self.next = vec![Vec::with_capacity(self.fps.len()); plans.len()];
            self.linked = 0;
        }
        for slot in self.linked..self.fps.len() {
            let fp = self.fps[slot];
            for (t, plan) in plans.iter().enumerate() {
                let h = chain_hash(fp & plan.key_mask, self.hash_bits);
                self.next[t].push(self.heads[t][h]);
                self.heads[t][h] = slot as u32;
            }
        }
        self.linked = self.fps.len();
    }

    fn clear(&mut self) {
        *self = Delta::default();
    }

    fn heap_bytes(&self) -> usize {
        self.fps.capacity() * 8
            + self.heads.iter().map(|h| h.capacity() * 4).sum::<usize>()
            + self.next.iter().map(|n| n.capacity() * 4).sum::<usize>()
    }
}

/// In-memory SimHash index answering Hamming distance up to `max_distance`, exactly (see the
/// module documentation for the layout). Queries take `&self` and may run on many threads.
#[derive(Debug, Clone)]
pub struct SimHashIndex {
    max_distance: u32,
    blocks: u32,
    plans: Vec<Plan>,
    /// Sorted tables holding rows `0..base_rows`.
    tables: Vec<Table>,
    base_rows: usize,
    /// Rows `base_rows..` (those inserted since the last merge).
    delta: Delta,
    /// Window ordinal of each row.
    ordinals: Vec<u32>,
    /// First row of each run of rows of one work, increasing.
    run_starts: Vec<u32>,
    /// The work of each run.
    run_works: Vec<WorkId>,
    /// Bit `r` set: row `r` was removed.
    dead: Vec<u64>,
    dead_count: usize,
}

impl SimHashIndex {
    /// An empty index answering queries within `max_distance` bits (at most 63), with the
    /// plain pigeonhole layout of `max_distance + 1` blocks and tables.
    pub fn new(max_distance: u32) -> Self {
        let max_distance = max_distance.min(63);
        Self::with_blocks(max_distance, max_distance + 1)
    }

    /// An empty index splitting fingerprints into `blocks` blocks, with one table per choice of
    /// `blocks - max_distance` of them. More blocks than `max_distance + 1` mean more tables
    /// (memory) but far fewer candidates per probe: the layout for very large libraries.
    ///
    /// # Panics
    ///
    /// If `max_distance > 63`, `blocks <= max_distance`, `blocks > 64`, or the layout needs more
    /// than [`MAX_TABLES`] tables.
    pub fn with_blocks(max_distance: u32, blocks: u32) -> Self {
        let plans = plans(max_distance, blocks).unwrap_or_else(|| {
            panic!("no exact SimHash layout of {blocks} blocks for distance {max_distance}")
        });
        Self::from_plans(max_distance, blocks, plans)
    }

    fn from_plans(max_distance: u32, blocks: u32, plans: Vec<Plan>) -> Self {
        let tables = plans
            .iter()
            .map(|plan| {
                let mut table = Table::default();
                table.rebuild_dir(plan.key_width);
                table
            })
            .collect();
        SimHashIndex {
            max_distance,
            blocks,
            plans,
            tables,
            base_rows: 0,
            delta: Delta::default(),
            ordinals: Vec::new(),
            run_starts: Vec::new(),
            run_works: Vec::new(),
            dead: Vec::new(),
            dead_count: 0,
        }
    }

    /// The distance this index answers for.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// Number of blocks the fingerprints are split into.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Number of tables (sorted copies of the fingerprints) a query probes.
    pub fn tables(&self) -> usize {
        self.plans.len()
    }

    /// Bytes of heap this index holds (allocated capacity, not just length), so benchmarks and
    /// operators can size a library without guessing.
    pub fn heap_bytes(&self) -> usize {
        self.tables.iter().map(Table::heap_bytes).sum::<usize>()
            + self.delta.heap_bytes()
            + self.ordinals.capacity() * 4
            + self.run_starts.capacity() * 4
            + self.run_works.capacity() * 8
            + self.dead.capacity() * 8
            + self.plans.capacity() * std::mem::size_of::<Plan>()
            + self
                .plans
                .iter()
                .map(|p| (p.forward.capacity() + p.backward.capacity()) * 16)
                .sum::<usize>()
            + self.tables.capacity() * std::mem::size_of::<Table>()
    }

    /// Merges the pending inserts into the sorted tables and drops removed rows, then trims
    /// every allocation to size. Runs by itself when the delta or the dead rows grow; call it
    /// after a bulk load for the tightest memory and the fastest queries.
    pub fn compact(&mut self) {
        if self.dead_count > 0 {
            self.drop_dead();
        }
        self.merge_delta();
        for table in &mut self.tables {
            table.keys.shrink_to_fit();
            table.ids.shrink_to_fit();
        }
        self.ordinals.shrink_to_fit();
        self.run_starts.shrink_to_fit();
        self.run_works.shrink_to_fit();
        self.dead.shrink_to_fit();
    }

    /// Writes the index in the snapshot format (see `simhash_index/snapshot.rs`: versioned
    /// little-endian columns with xxh3 checksums), so a process can start from it without
    /// re-inserting.
    pub fn write_snapshot(&self, writer: impl Write) -> Result<(), IndexError> {
        snapshot::write(self, writer)
    }

    /// Reads an index written by [`SimHashIndex::write_snapshot`]. Damaged, truncated or
    /// foreign input is refused with [`IndexError::Corrupt`], never loaded half-way.
    pub fn read_snapshot(reader: impl Read) -> Result<Self, IndexError> {
        snapshot::read(reader)
    }

    fn rows(&self) -> usize {
        self.ordinals.len()
    }

    fn is_dead(&self, row: usize) -> bool {
        self.dead[row / 64] >> (row % 64) & 1 == 1
    }

    fn work_of(&self, row: usize) -> WorkId {
        let run = self
            .run_starts
            .partition_point(|&start| start as usize <= row)
            - 1;
        self.run_works[run]
    }

    /// Appends a row to the columns and its fingerprint to the delta (not yet to the chains).
    fn push_row(&mut self, fingerprint: u64, segment: SegmentRef) -> Result<(), IndexError> {
        let row = self.rows();
        if row >= EMPTY as usize {
            return Err(IndexError::Backend(format!(
                "SimHashIndex holds at most {EMPTY} windows; compact or shard the library"
            )));
        }
        self.ordinals.push(segment.ordinal);
        if self.run_works.last() != Some(&segment.work_id) {
            self.run_starts.push(row as u32);
            self.run_works.push(segment.work_id);
        }
        if row.is_multiple_of(64) {
            self.dead.push(0);
        }
        self.delta.fps.push(fingerprint);
        Ok(())
    }

    /// After rows were pushed: merge the delta if it grew too large, else chain the new rows.
    fn settle(&mut self) {
        if self.delta.fps.len() > MIN_DELTA.max(self.base_rows / DELTA_DIVISOR) {
            self.merge_delta();
        } else {
            self.delta.link(&self.plans);
        }
    }

    /// Sorts the delta into every table and empties it.
    fn merge_delta(&mut self) {
        if self.delta.fps.is_empty() {
            return;
        }
        let base = self.base_rows as u32;
        let mut sorted: Vec<(u64, u32)> = Vec::with_capacity(self.delta.fps.len());
        for (plan, table) in self.plans.iter().zip(&mut self.tables) {
            sorted.clear();
            sorted.extend(
                self.delta
                    .fps
                    .iter()
                    .enumerate()
                    .map(|(slot, &fp)| (apply(&plan.forward, fp), base + slot as u32)),
            );
            sorted.sort_unstable();
            table.merge(&sorted);
            table.rebuild_dir(plan.key_width);
        }
        self.base_rows += self.delta.fps.len();
        self.delta.clear();
    }

    /// Removes the dead rows from every column and table, renumbering the live ones densely
    /// (order is kept, so the tables stay sorted).
    fn drop_dead(&mut self) {
        let rows = self.rows();
        // Dead rows before each 64-row word.
        let mut rank = Vec::with_capacity(self.dead.len() + 1);
        let mut total = 0u32;
        for word in &self.dead {
            rank.push(total);
            total += word.count_ones();
        }
        rank.push(total);
        let dead = &self.dead;
        let renumber = |row: usize| -> u32 {
            let below = if row.is_multiple_of(64) {
                0
            } else {
                (dead[row / 64] & ((1u64 << (row % 64)) - 1)).count_ones()
            };
            (row as u32) - rank[row / 64] - below
        };
        let alive = |row: usize| dead[row / 64] >> (row % 64) & 1 == 0;

        for table in &mut self.tables {
            let mut w = 0;
            for r in 0..table.keys.len() {
                let id = table.ids[r] as usize;
                if alive(id) {
                    table.keys[w] = table.keys[r];
                    table.ids[w] = renumber(id);
                    w += 1;
                }
            }
            table.keys.truncate(w);
            table.ids.truncate(w);
        }
        let base = self.base_rows;
        let mut slot = 0;
        self.delta.fps.retain(|_| {
            slot += 1;
            alive(base + slot - 1)
        });
        let mut row = 0;
        self.ordinals.retain(|_| {
            row += 1;
            alive(row - 1)
        });
        let mut starts = Vec::new();
        let mut works: Vec<WorkId> = Vec::new();
        for (i, &work) in self.run_works.iter().enumerate() {
            let start = self.run_starts[i] as usize;
            let end = self.run_starts.get(i + 1).map_or(rows, |&s| s as usize);
            let (new_start, new_end) = (renumber(start), renumber(end));
            if new_end > new_start && works.last() != Some(&work) {
                starts.push(new_start);
                works.push(work);
            }
        }
        self.run_starts = starts;
        self.run_works = works;
        self.base_rows = renumber(base) as usize;
        let live = rows - self.dead_count;
        self.dead = vec![0; live.div_ceil(64)];
        self.dead_count = 0;
        self.delta.linked = 0;
        self.delta.heads.clear();
        for (plan, table) in self.plans.iter().zip(&mut self.tables) {
            table.rebuild_dir(plan.key_width);
        }
        self.delta.link(&self.plans);
    }

    /// Whether a hit found through table `t` must be reported there: only if no earlier table
    /// would have found it too (it agrees on none of their keys), so each hit comes once.
    fn first_table(&self, diff: u64, t: usize) -> bool {
        self.plans[..t].iter().all(|p| diff & p.key_mask != 0)
    }

    /// Reports the entries `from..to` of table `t` within distance of the query (`permuted`
    /// into the table's bit order) that this table is the first to find.
    fn scan_table(
        &self,
        t: usize,
        permuted: u64,
        (from, to): (usize, usize),
        positions: &mut Vec<u32>,
        out: &mut Vec<Hit>,
    ) {
        let plan = &self.plans[t];
        let table = &self.tables[t];
        // The distance filter runs on the CPU's popcount (AVX2/POPCNT when present): the
        // default x86-64 target has none, and this loop is most of a query's work.
        positions.clear();
        cpu::hamming_scan(
            permuted,
            &table.keys[from..to],
            self.max_distance,
            positions,
        );
        let key_shift = 64 - plan.key_width;
        for &position in positions.iter() {
            let j = from + position as usize;
            let diff = table.keys[j] ^ permuted;
            // Agreeing on this table's key is what makes the hit this table's to report.
            if diff >> key_shift != 0 {
                continue;
            }
            if t > 0 && !self.first_table(apply(&plan.backward, diff), t) {
                continue;
            }
            self.emit(table.ids[j] as usize, diff.count_ones(), out);
        }
    }

    /// Reports the delta's entries within distance of the query, each from its first table.
    fn scan_delta(&self, fingerprint: u64, out: &mut Vec<Hit>) {
        if self.delta.linked == 0 {
            return;
        }
        let bits = self.delta.hash_bits;
        for (t, plan) in self.plans.iter().enumerate() {
            let mut slot = self.delta.heads[t][chain_hash(fingerprint & plan.key_mask, bits)];
            while slot != EMPTY {
                let diff = self.delta.fps[slot as usize] ^ fingerprint;
                let distance = diff.count_ones();
                if distance <= self.max_distance
                    && diff & plan.key_mask == 0
                    && self.first_table(diff, t)
                {
                    self.emit(self.base_rows + slot as usize, distance, out);
                }
                slot = self.delta.next[t][slot as usize];
            }
        }
    }

    fn emit(&self, row: usize, distance: u32, out: &mut Vec<Hit>) {
        if !self.is_dead(row) {
            out.push(Hit {
                segment: SegmentRef {
                    work_id: self.work_of(row),
                    ordinal: self.ordinals[row],
                },
                distance,
            });
        }
    }
}

impl Index for SimHashIndex {
    fn insert(&mut self, &fingerprint: &u64, segment: SegmentRef) -> Result<(), IndexError> {
        self.push_row(fingerprint, segment)?;
        self.settle();
        Ok(())
    }

    fn insert_work(&mut self, work_id: WorkId, windows: &[(u32, u64)]) -> Result<(), IndexError> {
        self.ordinals.reserve(windows.len());
        self.delta.fps.reserve(windows.len());
        let mut result = Ok(());
        for &(ordinal, fingerprint) in windows {
            result = self.push_row(fingerprint, SegmentRef { work_id, ordinal });
            if result.is_err() {
                break;
            }
        }
        self.settle();
        result
    }

    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        let rows = self.rows();
        for i in 0..self.run_works.len() {
            if self.run_works[i] != work_id {
                continue;
            }
            let start = self.run_starts[i] as usize;
            let end = self.run_starts.get(i + 1).map_or(rows, |&s| s as usize);
            for row in start..end {
                let bit = 1u64 << (row % 64);
                if self.dead[row / 64] & bit == 0 {
                    self.dead[row / 64] |= bit;
                    self.dead_count += 1;
                }
            }
        }
        if self.dead_count > 0 && self.dead_count * 4 >= rows {
            self.compact();
        }
        Ok(())
    }

    fn query(&self, &fingerprint: &u64, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        let mut positions = Vec::new();
        for (t, (plan, table)) in self.plans.iter().zip(&self.tables).enumerate() {
            let permuted = apply(&plan.forward, fingerprint);
            self.scan_table(t, permuted, table.range(permuted), &mut positions, out);
        }
        self.scan_delta(fingerprint, out);
        Ok(())
    }

    /// Batched: the directory entries and first candidates of a group of queries are loaded
    /// before any is scanned, so their cache misses overlap instead of running one after the
    /// other (group prefetching, with plain loads). Same answers as [`Index::query`].
    fn query_many(&self, fingerprints: &[u64], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        const GROUP: usize = 32;
        // Reuse the caller's vectors: a page's queries come in one call after another.
        out.truncate(fingerprints.len());
        out.iter_mut().for_each(Vec::clear);
        out.resize_with(fingerprints.len(), Vec::new);
        let tables = self.plans.len();
        let mut probes: Vec<(u64, usize, usize)> = vec![(0, 0, 0); GROUP * tables];
        let mut positions = Vec::new();
        for (queries, outs) in fingerprints.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for (i, &fingerprint) in queries.iter().enumerate() {
                for (t, (plan, table)) in self.plans.iter().zip(&self.tables).enumerate() {
                    let permuted = apply(&plan.forward, fingerprint);
                    let (from, to) = table.range(permuted);
                    probes[i * tables + t] = (permuted, from, to);
                }
            }
            let mut touched = 0u64;
            for (i, _) in queries.iter().enumerate() {
                for (t, table) in self.tables.iter().enumerate() {
                    // First and last candidate: a run of ~15 keys spans two or three lines.
                    let (_, from, to) = probes[i * tables + t];
                    touched ^= table.keys.get(from).copied().unwrap_or(0);
                    touched ^= table.keys.get(to.wrapping_sub(1)).copied().unwrap_or(0);
                }
            }
            std::hint::black_box(touched);
            for (i, (&fingerprint, hits)) in queries.iter().zip(outs).enumerate() {
                for t in 0..tables {
                    let (permuted, from, to) = probes[i * tables + t];
                    self.scan_table(t, permuted, (from, to), &mut positions, hits);
                }
                self.scan_delta(fingerprint, hits);
            }
        }
        Ok(())
    }

    fn len(&self) -> Result<usize, IndexError> {
        Ok(self.rows() - self.dead_count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use copytrace_fingerprint::minhash::splitmix64 as splitmix;

    /// `value` with exactly `count` distinct bits flipped.
    fn flip_bits(mut value: u64, count: u32, state: &mut u64) -> u64 {
        let mut mask = 0u64;
        while mask.count_ones() < count {
            mask |= 1 << (splitmix(state) % 64);
        }
        value ^= mask;
        value
    }

    /// The windows a brute-force scan finds, sorted.
    fn brute(model: &[(u64, SegmentRef)], query: u64, k: u32) -> Vec<(SegmentRef, u32)> {
        let mut found: Vec<(SegmentRef, u32)> = model
            .iter()
            .map(|&(fp, segment)| (segment, (fp ^ query).count_ones()))
            .filter(|&(_, distance)| distance <= k)
            .collect();
        found.sort_unstable_by_key(|&(s, d)| (s.work_id, s.ordinal, d));
        found
    }

    fn indexed(index: &SimHashIndex, query: u64) -> Vec<(SegmentRef, u32)> {
        let mut hits = Vec::new();
        index.query(&query, &mut hits).unwrap();
        let mut found: Vec<(SegmentRef, u32)> =
            hits.iter().map(|h| (h.segment, h.distance)).collect();
        found.sort_unstable_by_key(|&(s, d)| (s.work_id, s.ordinal, d));
        found
    }

    /// Queries planted at every distance `0..=k + 1` from indexed fingerprints, plus random
    /// ones, must find exactly what the brute-force scan finds (each hit once).
    fn assert_exact(
        index: &SimHashIndex,
        model: &[(u64, SegmentRef)],
        state: &mut u64,
        what: &str,
    ) {
        let k = index.max_distance();
        assert_eq!(index.len().unwrap(), model.len(), "{what}: len");
        for distance in 0..=k + 1 {
            for _ in 0..40 {
                let base = model[(splitmix(state) % model.len() as u64) as usize].0;
                let query = flip_bits(base, distance, state);
                assert_eq!(
                    indexed(index, query),
                    brute(model, query, k),
                    "{what}: k={k} distance={distance}"
                );
            }
        }
        let query = splitmix(state);
        assert_eq!(
            indexed(index, query),
            brute(model, query, k),
            "{what}: random"
        );
    }

    /// Random fingerprints in works of 100 windows; every 10th is a near copy (0..=k+1 bits
    /// off) of an earlier one, so hits cluster as they do with shared text.
    fn library(
        count: usize,
        first_work: WorkId,
        k: u32,
        state: &mut u64,
    ) -> Vec<(u64, SegmentRef)> {
        let mut model: Vec<(u64, SegmentRef)> = Vec::with_capacity(count);
        for i in 0..count {
            let fp = if i % 10 == 9 {
                let earlier = model[(splitmix(state) % i as u64) as usize].0;
                flip_bits(earlier, (splitmix(state) % u64::from(k + 2)) as u32, state)
            } else {
                splitmix(state)
            };
            let segment = SegmentRef {
                work_id: first_work + (i / 100) as WorkId,
                ordinal: (i % 100) as u32,
            };
            model.push((fp, segment));
        }
        model
    }

    fn insert_all(index: &mut SimHashIndex, windows: &[(u64, SegmentRef)]) {
        for chunk in windows.chunk_by(|a, b| a.1.work_id == b.1.work_id) {
            let work: Vec<(u32, u64)> = chunk.iter().map(|&(fp, s)| (s.ordinal, fp)).collect();
            index.insert_work(chunk[0].1.work_id, &work).unwrap();
        }
    }

    fn remove(index: &mut SimHashIndex, model: &mut Vec<(u64, SegmentRef)>, work: WorkId) {
        index.remove_work(work).unwrap();
        model.retain(|(_, s)| s.work_id != work);
    }

    fn check_layout(k: u32, blocks: u32) {
        let mut state = u64::from(k) * 1000 + u64::from(blocks);
        let mut index = SimHashIndex::with_blocks(k, blocks);
        let mut model = library(6000, 0, k, &mut state);
        // Half merged into the sorted tables, half left in the delta.
        insert_all(&mut index, &model[..3000]);
        index.compact();
        assert_eq!(index.delta.fps.len(), 0);
        insert_all(&mut index, &model[3000..]);
        assert_eq!(index.delta.fps.len(), 3000, "below the merge threshold");
        assert_exact(&index, &model, &mut state, "base + delta");
        // Removing works from both parts (fewer than a quarter: stays tombstoned).
        for work in [3, 17, 41, 58] {
            remove(&mut index, &mut model, work);
        }
        assert!(index.dead_count > 0);
        assert_exact(&index, &model, &mut state, "after removals");
        index.compact();
        assert_eq!((index.dead_count, index.delta.fps.len()), (0, 0));
        assert_exact(&index, &model, &mut state, "after compaction");
        // A delta large enough to merge by itself.
        let more = library(5000, 100, k, &mut state);
        insert_all(&mut index, &more);
        model.extend_from_slice(&more);
        assert!(
            index.delta.fps.len() < 5000,
            "the delta was merged on insert"
        );
        assert_exact(&index, &model, &mut state, "after an automatic merge");
    }

    #[test]
    fn recall_equals_brute_force_for_every_distance_up_to_k_and_none_beyond() {
        for k in 0..=6 {
            check_layout(k, k + 1);
        }
    }

    #[test]
    fn permuted_table_layouts_are_exact_too() {
        check_layout(3, 5);
        check_layout(3, 6);
        check_layout(2, 8);
        assert_eq!(SimHashIndex::with_blocks(3, 5).tables(), 10);
        assert_eq!(SimHashIndex::with_blocks(3, 6).tables(), 20);
    }

    #[test]
    fn layouts_that_cannot_be_exact_or_are_too_large_are_refused() {
        assert!(plans(3, 3).is_none(), "3 blocks cannot cover distance 3");
        assert!(plans(64, 65).is_none());
        assert!(
            plans(8, 16).is_none(),
            "C(16, 8) tables is far past the limit"
        );
        let tables = plans(3, 4).unwrap();
        // The keys of the pigeonhole layout partition the 64 bits.
        assert_eq!(
            tables.iter().fold(0u64, |acc, p| acc | p.key_mask),
            u64::MAX
        );
        assert_eq!(tables.iter().map(|p| p.key_width).sum::<u32>(), 64);
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

    #[test]
    fn a_work_inserted_again_after_removal_is_found_once_per_window() {
        let mut index = SimHashIndex::new(2);
        index.insert_work(7, &[(0, 1000), (1, 2000)]).unwrap();
        index.insert_work(8, &[(0, 3000)]).unwrap();
        index.remove_work(7).unwrap();
        index.insert_work(7, &[(0, 1001)]).unwrap();
        let found = indexed(&index, 1000);
        assert_eq!(
            found,
            vec![(
                SegmentRef {
                    work_id: 7,
                    ordinal: 0
                },
                1
            )],
            "only the new window, at distance 1"
        );
        assert_eq!(index.len().unwrap(), 2);
    }

    fn sample_index() -> (SimHashIndex, Vec<(u64, SegmentRef)>) {
        let mut state = 99;
        let mut index = SimHashIndex::new(3);
        let mut model = library(9000, 0, 3, &mut state);
        insert_all(&mut index, &model[..6000]);
        index.compact();
        insert_all(&mut index, &model[6000..]);
        remove(&mut index, &mut model, 12);
        (index, model)
    }

    fn snapshot_bytes(index: &SimHashIndex) -> Vec<u8> {
        let mut bytes = Vec::new();
        index.write_snapshot(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_snapshot_reads_back_into_the_same_index() {
        let (index, model) = sample_index();
        assert!(index.delta.linked > 0 && index.dead_count > 0);
        let bytes = snapshot_bytes(&index);
        let loaded = SimHashIndex::read_snapshot(bytes.as_slice()).unwrap();
        assert_eq!(loaded.tables, index.tables);
        assert_eq!(loaded.delta.fps, index.delta.fps);
        assert_eq!(loaded.ordinals, index.ordinals);
        assert_eq!(
            (loaded.run_starts, loaded.run_works),
            (index.run_starts, index.run_works)
        );
        assert_eq!(
            (&loaded.dead, loaded.dead_count),
            (&index.dead, index.dead_count)
        );
        let loaded = SimHashIndex::read_snapshot(bytes.as_slice()).unwrap();
        let mut state = 5;
        assert_exact(&loaded, &model, &mut state, "loaded snapshot");
        // Writing the loaded index gives the same bytes.
        assert_eq!(snapshot_bytes(&loaded), bytes);
    }

    #[test]
    fn an_empty_index_round_trips() {
        let bytes = snapshot_bytes(&SimHashIndex::with_blocks(3, 5));
        let loaded = SimHashIndex::read_snapshot(bytes.as_slice()).unwrap();
        assert_eq!((loaded.len().unwrap(), loaded.tables()), (0, 10));
        assert!(indexed(&loaded, 0).is_empty());
    }

    fn assert_corrupt(bytes: &[u8], what: &str) {
        match SimHashIndex::read_snapshot(bytes) {
            Err(IndexError::Corrupt(_)) => {}
            other => panic!("{what}: expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn truncated_snapshots_are_refused_as_corrupt() {
        let (index, _) = sample_index();
        let bytes = snapshot_bytes(&index);
        for len in (0..bytes.len())
            .step_by(997)
            .chain([55, 56, 57, bytes.len() - 1])
        {
            assert_corrupt(&bytes[..len], &format!("cut at {len}"));
        }
    }

    #[test]
    fn damaged_snapshots_are_refused_as_corrupt() {
        let (index, _) = sample_index();
        let bytes = snapshot_bytes(&index);
        for at in (0..HEADER_LEN_FOR_TESTS).chain((56..bytes.len()).step_by(4999)) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            assert_corrupt(&damaged, &format!("bit flipped at byte {at}"));
        }
        let mut damaged = bytes.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert_corrupt(&damaged, "body checksum");
        assert_corrupt(
            b"not a snapshot at all, but long enough to hold a header.....",
            "magic",
        );
    }

    const HEADER_LEN_FOR_TESTS: usize = 56;

    /// Rewrites the body checksum after tampering, as a forger would.
    fn reseal(bytes: &mut [u8]) {
        let end = bytes.len() - 8;
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[HEADER_LEN_FOR_TESTS..end]);
        bytes[end..].copy_from_slice(&checksum.to_le_bytes());
    }

    #[test]
    fn a_forged_body_with_a_matching_checksum_is_still_validated() {
        let mut index = SimHashIndex::new(1);
        index.insert_work(1, &[(0, 10), (1, 20), (2, 30)]).unwrap();
        index.compact();
        let bytes = snapshot_bytes(&index);
        // Body: 3 ordinals (12 B), 1 run start (4 B), 1 run work (8 B), 1 dead word (8 B),
        // then table 0: 3 keys (24 B) and 3 ids (12 B).
        let table0_ids = HEADER_LEN_FOR_TESTS + 12 + 4 + 8 + 8 + 24;
        let mut forged = bytes.clone();
        forged[table0_ids..table0_ids + 4].copy_from_slice(&7u32.to_le_bytes());
        reseal(&mut forged);
        assert_corrupt(&forged, "row id out of range");
        let mut forged = bytes.clone();
        let table0_keys = HEADER_LEN_FOR_TESTS + 32;
        forged[table0_keys..table0_keys + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        reseal(&mut forged);
        assert_corrupt(&forged, "unsorted keys");
        let mut forged = bytes.clone();
        let dead = HEADER_LEN_FOR_TESTS + 24;
        forged[dead..dead + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        reseal(&mut forged);
        assert_corrupt(&forged, "dead bit past the end");
        // The untouched snapshot still loads, so the failures above are the forgeries'.
        assert!(SimHashIndex::read_snapshot(bytes.as_slice()).is_ok());
    }

    #[test]
    fn a_snapshot_of_another_format_version_is_refused() {
        let bytes = snapshot_bytes(&SimHashIndex::new(3));
        let mut other = bytes.clone();
        other[8..12].copy_from_slice(&2u32.to_le_bytes());
        let checksum = xxhash_rust::xxh3::xxh3_64(&other[..48]);
        other[48..56].copy_from_slice(&checksum.to_le_bytes());
        match SimHashIndex::read_snapshot(other.as_slice()) {
            Err(IndexError::Corrupt(message)) => assert!(message.contains("version 2")),
            other => panic!("expected a version error, got {other:?}"),
        }
    }

    #[test]
    fn heap_accounting_grows_with_the_library_and_shrinks_after_compaction() {
        let mut state = 3;
        let mut index = SimHashIndex::new(3);
        let empty = index.heap_bytes();
        insert_all(&mut index, &library(20_000, 0, 3, &mut state));
        let loaded = index.heap_bytes();
        index.compact();
        let compacted = index.heap_bytes();
        assert!(loaded > empty && compacted <= loaded);
        // 4 tables × 12 B + 4 B of ordinal per window, plus directories and runs.
        let per_window = compacted as f64 / 20_000.0;
        assert!(
            (52.0..60.0).contains(&per_window),
            "{per_window} B per window"
        );
    }

    mod random_operations {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Insert {
                work: WorkId,
                count: usize,
                near: bool,
            },
            Remove {
                work: WorkId,
            },
            Compact,
            Query {
                planted: u32,
            },
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => (0..12i64, 1..3000usize, any::<bool>())
                    .prop_map(|(work, count, near)| Op::Insert { work, count, near }),
                2 => (0..12i64).prop_map(|work| Op::Remove { work }),
                1 => Just(Op::Compact),
                4 => (0..6u32).prop_map(|planted| Op::Query { planted }),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            #[test]
            fn any_sequence_of_inserts_removals_and_compactions_answers_like_brute_force(
                ops in prop::collection::vec(op(), 1..25),
                seed in any::<u64>(),
                k in 0..5u32,
            ) {
                let mut state = seed;
                let mut index = SimHashIndex::new(k);
                let mut model: Vec<(u64, SegmentRef)> = Vec::new();
                for op in ops {
                    match op {
                        Op::Insert { work, count, near } => {
                            let first = model.iter().filter(|(_, s)| s.work_id == work).count();
                            let windows: Vec<(u32, u64)> = (0..count)
                                .map(|i| {
                                    let fp = if near && !model.is_empty() {
                                        let pick = splitmix(&mut state) % model.len() as u64;
                                        let d = (splitmix(&mut state) % u64::from(k + 2)) as u32;
                                        flip_bits(model[pick as usize].0, d, &mut state)
                                    } else {
                                        splitmix(&mut state)
                                    };
                                    ((first + i) as u32, fp)
                                })
                                .collect();
                            index.insert_work(work, &windows).unwrap();
                            model.extend(windows.iter().map(|&(ordinal, fp)| {
                                (fp, SegmentRef { work_id: work, ordinal })
                            }));
                        }
                        Op::Remove { work } => remove(&mut index, &mut model, work),
                        Op::Compact => index.compact(),
                        Op::Query { planted } => {
                            let query = if model.is_empty() {
                                splitmix(&mut state)
                            } else {
                                let pick = splitmix(&mut state) % model.len() as u64;
                                flip_bits(model[pick as usize].0, planted.min(k + 1), &mut state)
                            };
                            prop_assert_eq!(indexed(&index, query), brute(&model, query, k));
                        }
                    }
                    prop_assert_eq!(index.len().unwrap(), model.len());
                }
            }
        }
    }
}
