//! What every candidate index offers the matcher: the [`Index`] trait, the [`SegmentRef`] it
//! stores per window, the [`Hit`] a query returns, and [`IndexError`].
//!
//! Implementations: [`SimHashIndex`] (window SimHash within a few bits,
//! [`crate::simhash_index`]), [`MinHashLshIndex`](crate::MinHashLshIndex) (MinHash LSH,
//! [`crate::lsh`]), [`DnaIndex`](crate::DnaIndex) (pinyin-initial DNA codes,
//! [`crate::dna_index`]) and, in `copytrace-index-redis`, a shared SimHash index in Redis.

use serde::{Deserialize, Serialize};

// The SimHash index lived in this module before it had its own; these keep the old paths
// (`copytrace_matcher::index::SimHashIndex`) working.
pub use crate::simhash_index::{MAX_TABLES, SimHashIndex};

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
    /// Writing or reading a snapshot failed for a reason other than its content.
    #[error("index snapshot I/O: {0}")]
    Io(#[from] std::io::Error),
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
