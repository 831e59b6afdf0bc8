//! The snapshot format of [`SimHashIndex`](super::SimHashIndex): what a process writes at
//! shutdown (or after a library update) and reads back at start-up instead of re-inserting and
//! re-sorting every window.
//!
//! Everything is little-endian. A 56-byte header:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `CTSIMIDX` |
//! | 8 | format version, `u32` (1) |
//! | 12 | `max_distance`, `u32` |
//! | 16 | `blocks`, `u32` (the tables follow from `max_distance` and `blocks`) |
//! | 20 | reserved, `u32` zero |
//! | 24 | `rows`, `u64`: every row, dead or alive |
//! | 32 | `base_rows`, `u64`: rows in the sorted tables; the rest are the delta |
//! | 40 | `runs`, `u64`: runs of rows of one work |
//! | 48 | xxh3-64 of bytes 0..48 |
//!
//! then the body: ordinals (`rows` × `u32`), run starts (`runs` × `u32`), run works
//! (`runs` × `i64`), the dead-row bitset (`ceil(rows / 64)` × `u64`), the delta's fingerprints
//! (`rows - base_rows` × `u64`), and per table its sorted keys (`base_rows` × `u64`) then their
//! rows (`base_rows` × `u32`); and last the xxh3-64 of the body. Directories and delta chains are
//! rebuilt on load (linear passes), so a snapshot holds no derived data.
//!
//! The header checksum is checked before anything is allocated from its counts, so a damaged
//! header cannot make the reader allocate wildly; the body checksum catches damage in the
//! data; and the structure is validated after that (ids in range and each present once per
//! table, keys sorted, runs increasing), so even a body forged with a matching checksum cannot
//! make a query read out of bounds.

use std::io::{ErrorKind, Read, Write};

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use super::{Delta, IndexError, SimHashIndex, Table, WorkId, plans};

const MAGIC: &[u8; 8] = b"CTSIMIDX";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 56;

fn corrupt(what: impl Into<String>) -> IndexError {
    IndexError::Corrupt(what.into())
}

/// Writes through a buffer while hashing everything written.
struct HashingWriter<W: Write> {
    inner: W,
    hasher: Xxh3,
    buffer: Vec<u8>,
}

impl<W: Write> HashingWriter<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= 1 << 16 {
            self.flush_buffer()?;
        }
        Ok(())
    }

    fn flush_buffer(&mut self) -> std::io::Result<()> {
        self.hasher.update(&self.buffer);
        self.inner.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }
}

macro_rules! put_all {
    ($writer:expr, $values:expr) => {
        for value in $values {
            $writer.put(&value.to_le_bytes())?;
        }
    };
}

pub(super) fn write(index: &SimHashIndex, writer: impl Write) -> Result<(), IndexError> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&index.max_distance.to_le_bytes());
    header.extend_from_slice(&index.blocks.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(index.rows() as u64).to_le_bytes());
    header.extend_from_slice(&(index.base_rows as u64).to_le_bytes());
    header.extend_from_slice(&(index.run_starts.len() as u64).to_le_bytes());
    let checksum = xxh3_64(&header);
    header.extend_from_slice(&checksum.to_le_bytes());

    let mut out = HashingWriter {
        inner: writer,
        hasher: Xxh3::new(),
        buffer: Vec::with_capacity(1 << 17),
    };
    out.inner.write_all(&header)?;
    put_all!(out, &index.ordinals);
    put_all!(out, &index.run_starts);
    put_all!(out, &index.run_works);
    put_all!(out, &index.dead);
    put_all!(out, &index.delta.fps);
    for table in &index.tables {
        put_all!(out, &table.keys);
        put_all!(out, &table.ids);
    }
    out.flush_buffer()?;
    let body_checksum = out.hasher.digest();
    out.inner.write_all(&body_checksum.to_le_bytes())?;
    out.inner.flush()?;
    Ok(())
}

/// `read_exact` that reports a short input as corruption (a truncated snapshot).
fn read_exact(reader: &mut impl Read, buf: &mut [u8], what: &str) -> Result<(), IndexError> {
    reader.read_exact(buf).map_err(|e| match e.kind() {
        ErrorKind::UnexpectedEof => corrupt(format!("truncated {what}")),
        _ => IndexError::Io(e),
    })
}

/// Reads fixed-size little-endian values off the checked body.
struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, len: usize) -> &'a [u8] {
        let (head, tail) = self.bytes.split_at(len);
        self.bytes = tail;
        head
    }
    fn u32s(&mut self, count: usize) -> Vec<u32> {
        self.take(count * 4)
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()
    }
    fn u64s(&mut self, count: usize) -> Vec<u64> {
        self.take(count * 8)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
    fn i64s(&mut self, count: usize) -> Vec<i64> {
        self.take(count * 8)
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
}

fn field_u32(header: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"))
}

fn field_u64(header: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"))
}

pub(super) fn read(mut reader: impl Read) -> Result<SimHashIndex, IndexError> {
    let mut header = [0u8; HEADER_LEN];
    read_exact(&mut reader, &mut header, "header")?;
    if &header[..8] != MAGIC {
        return Err(corrupt("not a SimHash index snapshot (bad magic)"));
    }
    let version = field_u32(&header, 8);
    if version != VERSION {
        return Err(corrupt(format!(
            "snapshot format version {version}, this build reads {VERSION}"
        )));
    }
    if xxh3_64(&header[..48]) != field_u64(&header, 48) {
        return Err(corrupt("header checksum mismatch"));
    }
    let max_distance = field_u32(&header, 12);
    let blocks = field_u32(&header, 16);
    let plans = plans(max_distance, blocks)
        .ok_or_else(|| corrupt(format!("no layout of {blocks} blocks for k={max_distance}")))?;
    if field_u32(&header, 20) != 0 {
        return Err(corrupt("reserved header field is not zero"));
    }
    let rows = field_u64(&header, 24);
    let base_rows = field_u64(&header, 32);
    let runs = field_u64(&header, 40);
    if rows >= u64::from(u32::MAX) || base_rows > rows || runs > rows || (rows > 0) != (runs > 0) {
        return Err(corrupt(format!(
            "inconsistent counts: rows={rows} base_rows={base_rows} runs={runs}"
        )));
    }
    let (rows, base_rows, runs) = (rows as usize, base_rows as usize, runs as usize);
    let words = rows.div_ceil(64);
    let body_len = (rows as u128) * 4
        + (runs as u128) * 12
        + (words as u128) * 8
        + ((rows - base_rows) as u128) * 8
        + (plans.len() as u128) * (base_rows as u128) * 12;
    let body_len = usize::try_from(body_len)
        .map_err(|_| corrupt(format!("body of {body_len} bytes is too large")))?;

    let mut body = Vec::new();
    body.try_reserve_exact(body_len)
        .map_err(|_| corrupt(format!("body of {body_len} bytes cannot be allocated")))?;
    reader
        .by_ref()
        .take(body_len as u64)
        .read_to_end(&mut body)?;
    if body.len() != body_len {
        return Err(corrupt(format!(
            "truncated body: {} of {body_len} bytes",
            body.len()
        )));
    }
    let mut trailer = [0u8; 8];
    read_exact(&mut reader, &mut trailer, "body checksum")?;
    if xxh3_64(&body) != u64::from_le_bytes(trailer) {
        return Err(corrupt("body checksum mismatch"));
    }

    let mut cursor = Cursor { bytes: &body };
    let ordinals = cursor.u32s(rows);
    let run_starts = cursor.u32s(runs);
    let run_works: Vec<WorkId> = cursor.i64s(runs);
    let dead = cursor.u64s(words);
    let delta_fps = cursor.u64s(rows - base_rows);
    if run_starts.first().is_some_and(|&s| s != 0)
        || run_starts.windows(2).any(|w| w[0] >= w[1])
        || run_starts.last().is_some_and(|&s| s as usize >= rows)
    {
        return Err(corrupt("work runs are not increasing from row 0"));
    }
    if !rows.is_multiple_of(64) && dead.last().is_some_and(|&w| w >> (rows % 64) != 0) {
        return Err(corrupt("dead-row bits set past the last row"));
    }
    let dead_count = dead.iter().map(|w| w.count_ones() as usize).sum();

    let mut seen = vec![0u64; base_rows.div_ceil(64)];
    let mut tables = Vec::with_capacity(plans.len());
    for (t, plan) in plans.iter().enumerate() {
        let keys = cursor.u64s(base_rows);
        let ids = cursor.u32s(base_rows);
        if keys.windows(2).any(|w| w[0] > w[1]) {
            return Err(corrupt(format!("table {t} is not sorted")));
        }
        seen.fill(0);
        for &id in &ids {
            let id = id as usize;
            if id >= base_rows || seen[id / 64] >> (id % 64) & 1 == 1 {
                return Err(corrupt(format!("table {t} has a bad or repeated row {id}")));
            }
            seen[id / 64] |= 1 << (id % 64);
        }
        let mut table = Table {
            keys,
            ids,
            ..Table::default()
        };
        table.rebuild_dir(plan.key_width);
        tables.push(table);
    }

    let mut index = SimHashIndex::from_plans(max_distance, blocks, plans);
    index.tables = tables;
    index.base_rows = base_rows;
    index.ordinals = ordinals;
    index.run_starts = run_starts;
    index.run_works = run_works;
    index.dead = dead;
    index.dead_count = dead_count;
    index.delta = Delta {
        fps: delta_fps,
        ..Delta::default()
    };
    if !index.delta.fps.is_empty() {
        index.delta.link(&index.plans);
    }
    Ok(index)
}
