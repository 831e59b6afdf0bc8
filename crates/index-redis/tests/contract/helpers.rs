//! Random signatures, brute force, and Redis indexes that clean up after themselves.

use std::sync::atomic::{AtomicUsize, Ordering};

use copytrace_index_redis::RedisIndex;
use copytrace_matcher::{Hit, Index, IndexError, SegmentRef, WorkId};

/// Makes a fresh, empty index answering within the given distance.
pub type Make = dyn Fn(u32) -> Box<dyn Index>;

pub use copytrace_fingerprint::minhash::splitmix64 as splitmix;

/// `value` with exactly `count` distinct bits flipped.
pub fn flip_bits(value: u64, count: u32, state: &mut u64) -> u64 {
    let mut mask = 0u64;
    while mask.count_ones() < count {
        mask |= 1u64 << (splitmix(state) % 64);
    }
    value ^ mask
}

/// Hits as sorted `(work, ordinal, distance)` triples, for order-free comparison.
pub fn sorted(hits: &[Hit]) -> Vec<(WorkId, u32, u32)> {
    let mut triples: Vec<_> = hits
        .iter()
        .map(|h| (h.segment.work_id, h.segment.ordinal, h.distance))
        .collect();
    triples.sort_unstable();
    triples
}

/// What a linear scan of `indexed` finds within `k` of `query`.
pub fn brute_force(indexed: &[(u64, SegmentRef)], query: u64, k: u32) -> Vec<(WorkId, u32, u32)> {
    let mut found: Vec<_> = indexed
        .iter()
        .filter_map(|&(fingerprint, segment)| {
            let distance = (fingerprint ^ query).count_ones();
            (distance <= k).then_some((segment.work_id, segment.ordinal, distance))
        })
        .collect();
    found.sort_unstable();
    found
}

/// The test server's URL. Unset means the tests were not started by `./scripts/test`: that is
/// a failure, never a reason to skip.
pub fn redis_url() -> String {
    std::env::var("COPYTRACE_TEST_REDIS_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_REDIS_URL is not set: run ./scripts/test, which starts a real \
             redis-server for these tests (or export the URL of a disposable Redis yourself)"
        )
    })
}

/// A key prefix no other test (in this or another test process) uses.
pub fn unique_prefix() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A [`RedisIndex`] under its own prefix whose keys are deleted when it is dropped.
pub struct TestRedisIndex {
    /// The index under test.
    pub index: RedisIndex,
}

impl TestRedisIndex {
    /// A fresh index under a new prefix on the test server.
    pub fn new(max_distance: u32) -> TestRedisIndex {
        TestRedisIndex::on(&redis_url(), max_distance)
    }

    /// A fresh index under a new prefix on the test Redis Cluster.
    pub fn on_cluster(max_distance: u32) -> TestRedisIndex {
        TestRedisIndex::on(&cluster_url(), max_distance)
    }

    fn on(url: &str, max_distance: u32) -> TestRedisIndex {
        let index = RedisIndex::connect(url, &unique_prefix(), max_distance)
            .expect("the test Redis server answers");
        TestRedisIndex { index }
    }
}

impl Drop for TestRedisIndex {
    fn drop(&mut self) {
        // Best effort: a failed cleanup must not hide the test's own failure.
        let _ = self.index.delete_namespace();
    }
}

/// The seed URLs of the test Redis Cluster (three masters started by `./scripts/test`); unset
/// is a failure, never a reason to skip.
pub fn cluster_url() -> String {
    std::env::var("COPYTRACE_TEST_REDIS_CLUSTER_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_REDIS_CLUSTER_URL is not set: run ./scripts/test, which starts a \
             real three-master Redis Cluster for these tests"
        )
    })
}

impl Index for TestRedisIndex {
    fn insert(&mut self, fingerprint: &u64, segment: SegmentRef) -> Result<(), IndexError> {
        self.index.insert(fingerprint, segment)
    }
    fn insert_work(&mut self, work_id: WorkId, windows: &[(u32, u64)]) -> Result<(), IndexError> {
        self.index.insert_work(work_id, windows)
    }
    fn remove_work(&mut self, work_id: WorkId) -> Result<(), IndexError> {
        self.index.remove_work(work_id)
    }
    fn query(&self, fingerprint: &u64, out: &mut Vec<Hit>) -> Result<(), IndexError> {
        self.index.query(fingerprint, out)
    }
    fn query_many(&self, fingerprints: &[u64], out: &mut Vec<Vec<Hit>>) -> Result<(), IndexError> {
        self.index.query_many(fingerprints, out)
    }
    fn len(&self) -> Result<usize, IndexError> {
        self.index.len()
    }
}

/// Every key on the test server under `prefix`.
pub fn keys_under(prefix: &str) -> Vec<String> {
    let client = redis::Client::open(redis_url()).expect("a valid test URL");
    let mut connection = client
        .get_connection()
        .expect("the test Redis server answers");
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query(&mut connection)
        .expect("KEYS answers");
    keys.sort();
    keys
}
