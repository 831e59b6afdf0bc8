//! Backends under test and the fixtures the contract tests share.
//!
//! Adding a backend: write one `async fn NAME() -> Option<TestDb>` here that returns a fresh,
//! migrated database (or `None` when the test environment provides no server), and add one
//! `#[tokio::test] async fn NAME()` arm to `contract_tests!`.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    AlgorithmFingerprint, EvidencePassage, Id, NewMatch, NewPage, NewWork, SegmentFingerprint,
    Store, StoreError,
};
use tempfile::TempDir;

/// A fresh database for one test; dropping it removes the database.
pub struct TestDb {
    pub store: Arc<dyn Store>,
    _dir: TempDir,
}

/// A migrated SQLite database in its own temporary directory.
pub async fn sqlite() -> Option<TestDb> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("contract.db").display());
    let store = SqliteStore::connect(&url).await.expect("connect to SQLite");
    store.migrate().await.expect("migrate SQLite");
    Some(TestDb {
        store: Arc::new(store),
        _dir: dir,
    })
}

/// Runs each named `async fn(Arc<dyn Store>)` of the calling module against every backend, as
/// `<module>::<test>::<backend>`. Forgetting to list a test leaves its function unused, which the
/// `dead_code` lint (denied in CI) reports.
macro_rules! contract_tests {
    ($($test:ident),+ $(,)?) => {
        $(
            mod $test {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    let db = $crate::helpers::sqlite().await.expect("SQLite is always available");
                    super::$test(db.store.clone()).await;
                }
            }
        )+
    };
}
pub(crate) use contract_tests;

/// A fixed instant with whole microseconds (what every backend keeps), plus `seconds`.
pub fn at(seconds: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap()
        + Duration::microseconds(123_456)
        + Duration::seconds(seconds)
}

/// A stable stand-in for the content hash the ingest pipeline computes.
pub fn hash_of(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// A work whose text is cut into windows of `window` bytes (ASCII texts only).
pub fn work(rights_holder_id: Id, external_id: &str, text: &str) -> NewWork {
    let window = 8;
    let segments = (0..text.len())
        .step_by(window)
        .enumerate()
        .map(|(ordinal, start)| SegmentFingerprint {
            ordinal: ordinal as u32,
            start: start as u32,
            end: (start + window).min(text.len()) as u32,
            simhash: hash_of(&text[start..(start + window).min(text.len())])
                .chars()
                .fold(0, |acc: u64, c| acc.rotate_left(5) ^ u64::from(c)),
        })
        .collect();
    NewWork {
        rights_holder_id,
        external_id: external_id.to_owned(),
        title: format!("Title of {external_id}"),
        content: text.to_owned(),
        content_hash: hash_of(text),
        fingerprint_version: 1,
        segments,
        fingerprints: vec![
            algorithm_fingerprint("simhash", 1, serde_json::json!({ "SimHash": 42 })),
            algorithm_fingerprint("minhash", 1, serde_json::json!({ "MinHash": [1, 2, 3] })),
        ],
    }
}

/// A document-level fingerprint of one algorithm.
pub fn algorithm_fingerprint(
    algorithm: &str,
    version: u32,
    fingerprint: serde_json::Value,
) -> AlgorithmFingerprint {
    AlgorithmFingerprint {
        algorithm: algorithm.to_owned(),
        version,
        fingerprint,
    }
}

/// A successfully fetched page.
pub fn page(url: &str, text: &str, fetched_at: DateTime<Utc>) -> NewPage {
    NewPage {
        url: url.to_owned(),
        title: Some(format!("Page {url}")),
        text: text.to_owned(),
        content_hash: hash_of(text),
        http_status: 200,
        fetched_at,
    }
}

/// A verified match with one evidence passage per given (page_start, work_start) pair.
pub fn found(work_id: Id, score: f64, passages: &[(u32, u32)]) -> NewMatch {
    NewMatch {
        work_id,
        score,
        coverage: score / 2.0,
        containment: score / 3.0,
        copied_chars: (score * 1000.0) as u32,
        method: "simhash+align".to_owned(),
        evidence: passages
            .iter()
            .map(|&(page_start, work_start)| EvidencePassage {
                page_start,
                page_end: page_start + 10,
                work_start,
                work_end: work_start + 10,
            })
            .collect(),
    }
}

/// Stores a page and returns its id.
pub async fn stored_page(store: &dyn Store, url: &str, text: &str) -> Id {
    store.upsert_page(&page(url, text, at(0))).await.unwrap().id
}

/// Stores a work of a new holder named after `external_id` and returns the work id.
pub async fn stored_work(store: &dyn Store, holder: Id, external_id: &str, text: &str) -> Id {
    store
        .upsert_work(&work(holder, external_id, text))
        .await
        .unwrap()
        .0
}

/// The message of a `NotFound`, failing the test on anything else.
#[track_caller]
pub fn not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) -> String {
    match result {
        Err(StoreError::NotFound(what)) => what,
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// The message of an `Invalid`, failing the test on anything else.
#[track_caller]
pub fn invalid<T: std::fmt::Debug>(result: Result<T, StoreError>) -> String {
    match result {
        Err(StoreError::Invalid(why)) => why,
        other => panic!("expected Invalid, got {other:?}"),
    }
}
