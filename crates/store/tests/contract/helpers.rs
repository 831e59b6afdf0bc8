//! Backends under test and the fixtures the contract tests share.
//!
//! Adding a backend: write one `async fn NAME() -> TestDb` here that returns a fresh, migrated
//! database, and add one `#[tokio::test] async fn NAME()` arm to `contract_tests!`. A backend
//! whose server the environment does not provide fails its tests; it never skips them.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Duration, TimeZone, Utc};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    AlgorithmFingerprint, EvidencePassage, Id, MatchFilter, MatchRecord, MatchStatus, NewJob,
    NewMatch, NewPage, NewRun, NewSchedule, NewWork, RunKind, RunTrigger, ScheduleFire,
    SegmentFingerprint, Store, StoreError,
};
use sqlx::{Connection, PgConnection};
use tempfile::TempDir;

/// A fresh database for one test; [`TestDb::remove`] deletes it.
pub struct TestDb {
    pub store: Arc<dyn Store>,
    place: Place,
}

/// Where a test database lives, to remove it afterwards.
enum Place {
    Directory(TempDir),
    Postgres { store: PostgresStore, name: String },
}

impl TestDb {
    /// Deletes the database: the SQLite directory, or the PostgreSQL database (closing the
    /// store's connections and ending any left behind).
    pub async fn remove(self) {
        drop(self.store);
        match self.place {
            Place::Directory(dir) => drop(dir),
            Place::Postgres { store, name } => {
                let _ =
                    tokio::time::timeout(std::time::Duration::from_secs(5), store.close()).await;
                drop_postgres_database(&name).await;
            }
        }
    }
}

/// A migrated SQLite database in its own temporary directory.
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("contract.db").display());
    let store = SqliteStore::connect(&url).await.expect("connect to SQLite");
    store.migrate().await.expect("migrate SQLite");
    TestDb {
        store: Arc::new(store),
        place: Place::Directory(dir),
    }
}

/// The PostgreSQL server of the test run (`./scripts/test` starts one). Unset is a failure,
/// never a reason to skip.
pub fn postgres_server_url() -> url::Url {
    let url = std::env::var("COPYTRACE_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_POSTGRES_URL is not set: run ./scripts/test, which starts a \
             throwaway PostgreSQL cluster for these tests, or set it to a server where the \
             user may create databases (postgres://USER@127.0.0.1:PORT/postgres)"
        )
    });
    url::Url::parse(&url)
        .unwrap_or_else(|error| panic!("COPYTRACE_TEST_POSTGRES_URL {url:?} is not a URL: {error}"))
}

/// The test server's URL with the database part replaced by `name`.
pub fn postgres_url(name: &str) -> String {
    let mut url = postgres_server_url();
    url.set_path(&format!("/{name}"));
    url.into()
}

/// Creates a uniquely named, empty database on the test server and returns its name.
///
/// Its default collation is ICU's `en-US`, as a production database's often is, so ordering
/// tests prove the schema sorts text keys bytewise on its own (`COLLATE "C"`).
pub async fn create_postgres_database() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_micros()
        % 1_000_000_000_000;
    // Digits and underscores only, so the name needs no quoting rules beyond the quotes.
    let name = format!(
        "copytrace_test_{}_{}_{stamp}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = admin_connection().await;
    let create = format!(
        "CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' \
         LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(create))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|error| panic!("cannot create test database {name}: {error}"));
    let _ = admin.close().await;
    name
}

/// Drops a database made by [`create_postgres_database`], ending its open connections.
pub async fn drop_postgres_database(name: &str) {
    assert!(
        name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "{name:?} is not a test database name"
    );
    let mut admin = admin_connection().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap_or_else(|error| panic!("cannot drop test database {name}: {error}"));
    let _ = admin.close().await;
}

async fn admin_connection() -> PgConnection {
    let url = postgres_server_url();
    PgConnection::connect(url.as_str())
        .await
        .unwrap_or_else(|error| panic!("cannot connect to the test PostgreSQL server: {error}"))
}

/// A migrated PostgreSQL database of its own on the test server.
pub async fn postgres() -> TestDb {
    let name = create_postgres_database().await;
    let store = PostgresStore::connect(&postgres_url(&name))
        .await
        .expect("connect to the test database");
    store.migrate().await.expect("migrate PostgreSQL");
    TestDb {
        store: Arc::new(store.clone()),
        place: Place::Postgres { store, name },
    }
}

/// Runs one contract test on `db`, then removes the database whether the test passed or not.
pub async fn run<F, Fut>(test: F, db: TestDb)
where
    F: FnOnce(Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let outcome = tokio::spawn(test(db.store.clone())).await;
    db.remove().await;
    if let Err(error) = outcome {
        match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(error) => panic!("the test did not finish: {error}"),
        }
    }
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
                    $crate::helpers::run(super::$test, $crate::helpers::sqlite().await).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    $crate::helpers::run(super::$test, $crate::helpers::postgres().await).await;
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
        author: None,
        published_at: None,
        chapters: Vec::new(),
        licensed_hosts: None,
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
        etag: None,
        last_modified: None,
        capture: None,
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
        auto_confirm: true,
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

/// The message of a `LeaseLost`, failing the test on anything else.
#[track_caller]
pub fn lease_lost<T: std::fmt::Debug>(result: Result<T, StoreError>) -> String {
    match result {
        Err(StoreError::LeaseLost(why)) => why,
        other => panic!("expected LeaseLost, got {other:?}"),
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

/// A crawl schedule with seeds, scope and an owner.
pub fn schedule(name: &str) -> NewSchedule {
    NewSchedule {
        name: name.to_owned(),
        kind: RunKind::Crawl,
        cron: "0 3 * * *".to_owned(),
        timezone: "Asia/Shanghai".to_owned(),
        seeds: vec![
            "https://pirate.example/".to_owned(),
            "https://mirror.example/书".to_owned(),
        ],
        config: serde_json::json!({ "max_pages": 500, "same_host": true }),
        owner: Some("ops@example.com".to_owned()),
    }
}

/// The job that carries a run of `kind`.
pub fn run_job(kind: RunKind) -> NewJob {
    NewJob {
        kind: kind.as_str().to_owned(),
        payload: serde_json::json!({ "run": kind.as_str() }),
        dedup_key: None,
        run_at: at(0),
        max_attempts: 3,
    }
}

/// A run started by hand, created at `created_at`.
pub fn manual_run(kind: RunKind, schedule_id: Option<Id>, created_at: DateTime<Utc>) -> NewRun {
    NewRun {
        kind,
        schedule_id,
        trigger: RunTrigger::Manual,
        scheduled_for: None,
        created_at,
    }
}

/// The fire of one crawl tick of a schedule, as a scheduler that read `expected` builds it.
pub fn fire(schedule_id: Id, expected: Option<DateTime<Utc>>, tick: DateTime<Utc>) -> ScheduleFire {
    ScheduleFire {
        schedule_id,
        expected_last_fired_at: expected,
        scheduled_for: tick,
        run: NewRun {
            kind: RunKind::Crawl,
            schedule_id: Some(schedule_id),
            trigger: RunTrigger::Schedule,
            scheduled_for: Some(tick),
            created_at: tick + Duration::seconds(1),
        },
        job: run_job(RunKind::Crawl),
    }
}

/// The matches of one page, by work.
pub async fn matches_of(store: &dyn Store, page: Id) -> Vec<MatchRecord> {
    let mut matches: Vec<MatchRecord> = store
        .list_matches(&MatchFilter::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.page_id == page)
        .collect();
    matches.sort_by_key(|m| m.work_id);
    matches
}

/// `(work, status, removed_at)` of a page's matches, by work.
/// A person rejects the match of `work` on `page` (a false positive); returns the match id.
pub async fn reject(store: &dyn Store, page: Id, work: Id) -> Id {
    let record = matches_of(store, page)
        .await
        .into_iter()
        .find(|m| m.work_id == work)
        .expect("the match to reject");
    store
        .decide_match(&copytrace_store::NewDecision {
            match_id: record.id,
            review: copytrace_store::Review::Rejected,
            actor: "reviewer@example.com".to_owned(),
            note: "a quotation".to_owned(),
            at: at(50),
            rights_holder_id: None,
        })
        .await
        .unwrap();
    record.id
}

pub async fn statuses(
    store: &dyn Store,
    page: Id,
) -> Vec<(Id, MatchStatus, Option<DateTime<Utc>>)> {
    matches_of(store, page)
        .await
        .into_iter()
        .map(|m| (m.work_id, m.status, m.removed_at))
        .collect()
}

/// A seeded xorshift generator: `next(n)` draws from `0..n`. Property tests replay exactly
/// from their seed, without a random-number crate.
pub fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}
