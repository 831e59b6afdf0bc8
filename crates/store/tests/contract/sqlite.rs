//! What only the SQLite backend promises: its URL forms and its file.

use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Store, StoreError};

#[tokio::test]
async fn malformed_sqlite_url_is_a_clear_error() {
    for (url, expected_reason) in [
        (
            "postgres://copytrace:hunter2@db/ct",
            "expected a SQLite URL",
        ),
        ("copytrace.db", "expected a SQLite URL"),
        ("sqlite://", "path is missing"),
        ("sqlite:", "path is missing"),
        (
            "sqlite://data.db?mode=ro",
            "query parameters are not supported",
        ),
        ("sqlite://%FF.db", "cannot be decoded"),
    ] {
        match SqliteStore::connect(url).await {
            Err(StoreError::InvalidUrl { url: shown, reason }) => {
                assert!(reason.contains(expected_reason), "{url}: {reason}");
                assert!(!shown.contains("hunter2"), "the password leaked: {shown}");
            }
            Err(other) => panic!("{url}: expected InvalidUrl, got {other}"),
            Ok(_) => panic!("{url}: expected InvalidUrl, got a store"),
        }
    }
    let error = SqliteStore::connect("mysql://root@db/ct")
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid database URL \"mysql://root@db/ct\": ")
    );
}

#[tokio::test]
async fn a_missing_database_file_is_created_and_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    for url in [
        format!("sqlite://{}", path.display()),
        format!("sqlite:{}", path.display()),
    ] {
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        store.migrate().await.expect("migrating twice is harmless");
        store.ensure_rights_holder("Yuewen").await.unwrap();
        store.close().await;
        assert!(path.exists());
    }
    let reopened = SqliteStore::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let holders = reopened.list_rights_holders().await.unwrap();
    assert_eq!(holders.len(), 1, "both URL forms opened the same file");
}

#[tokio::test]
async fn an_in_memory_database_lives_as_long_as_its_store_and_is_private() {
    let first = SqliteStore::connect("sqlite::memory:").await.unwrap();
    let second = SqliteStore::connect("sqlite::memory:").await.unwrap();
    first.migrate().await.unwrap();
    second.migrate().await.unwrap();

    first
        .ensure_rights_holder("Only in the first")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(first.list_rights_holders().await.unwrap().len(), 1);
    assert!(second.list_rights_holders().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_leader_that_stops_renewing_loses_leadership_after_its_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lead.db").display());
    // Two stores on one file stand for two processes.
    let first = SqliteStore::connect(&url).await.unwrap();
    first.migrate().await.unwrap();
    let second = SqliteStore::connect(&url).await.unwrap();
    let ttl = chrono::Duration::milliseconds(300);

    let mut leader = first.try_lead("scheduler", ttl).await.unwrap().unwrap();
    assert!(second.try_lead("scheduler", ttl).await.unwrap().is_none());
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(leader.confirm().await.unwrap(), "renewed within its ttl");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        second.try_lead("scheduler", ttl).await.unwrap().is_none(),
        "the renewal moved the end of the lease"
    );

    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let mut successor = second
        .try_lead("scheduler", ttl)
        .await
        .unwrap()
        .expect("the lease lapsed");
    assert!(
        !leader.confirm().await.unwrap(),
        "the old leader learns it lost"
    );
    assert!(successor.confirm().await.unwrap());
}
