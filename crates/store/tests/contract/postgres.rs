//! What only the PostgreSQL backend promises: its URLs, its connection errors, its schema types,
//! and claims that skip locked jobs instead of waiting for them.

use std::time::{Duration, Instant};

use copytrace_store::postgres::PostgresStore;
use copytrace_store::{JobState, NewJob, Store, StoreError};
use sqlx::{Connection, PgConnection};

use crate::helpers::{
    at, create_postgres_database, drop_postgres_database, invalid, page, postgres_url, work,
};

/// A migrated database of its own; [`finish`] removes it.
async fn fresh() -> (PostgresStore, String) {
    let name = create_postgres_database().await;
    let store = PostgresStore::connect(&postgres_url(&name)).await.unwrap();
    store.migrate().await.unwrap();
    (store, name)
}

async fn finish(store: PostgresStore, name: String) {
    store.close().await;
    drop_postgres_database(&name).await;
}

#[tokio::test]
async fn malformed_postgres_url_is_a_clear_error_without_the_password() {
    for (url, expected_reason) in [
        ("sqlite://copytrace.db", "expected a PostgreSQL URL"),
        ("mysql://root:hunter2@db/ct", "expected a PostgreSQL URL"),
        ("copytrace.db", "expected a PostgreSQL URL"),
        ("postgres://app:hunter2@db:notaport/ct", "cannot be parsed"),
    ] {
        match PostgresStore::connect(url).await {
            Err(StoreError::InvalidUrl { url: shown, reason }) => {
                assert!(reason.contains(expected_reason), "{url}: {reason}");
                assert!(!shown.contains("hunter2"), "the password leaked: {shown}");
                assert!(!reason.contains("hunter2"), "the password leaked: {reason}");
            }
            Err(other) => panic!("{url}: expected InvalidUrl, got {other}"),
            Ok(_) => panic!("{url}: expected InvalidUrl, got a store"),
        }
    }
}

#[tokio::test]
async fn an_unreachable_server_fails_at_once_without_the_password() {
    // Port 1 on the loopback interface: nothing listens there, the connection is refused.
    let started = Instant::now();
    let error = PostgresStore::connect("postgresql://app:hunter2@127.0.0.1:1/ct")
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a refused connection must not wait for the pool timeout ({:?})",
        started.elapsed()
    );
    assert!(matches!(error, StoreError::Database(_)), "{error:?}");
    assert!(!error.to_string().contains("hunter2"), "{error}");
}

#[tokio::test]
async fn a_missing_database_is_named_by_the_server() {
    let error = PostgresStore::connect(&postgres_url("copytrace_no_such_database"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("does not exist"),
        "the server's reason is kept: {error}"
    );
}

#[tokio::test]
async fn migrating_twice_is_harmless_and_data_survives_a_reconnect() {
    let (store, name) = fresh().await;
    store.migrate().await.expect("migrating twice is harmless");
    let id = store.ensure_rights_holder("Yuewen").await.unwrap();
    store.close().await;

    let reopened = PostgresStore::connect(&postgres_url(&name)).await.unwrap();
    reopened.migrate().await.unwrap();
    let holders = reopened.list_rights_holders().await.unwrap();
    assert_eq!(holders.len(), 1);
    assert_eq!(holders[0].id, id);
    finish(reopened, name).await;
}

#[tokio::test]
async fn the_schema_uses_postgres_types() {
    let (store, name) = fresh().await;
    let mut conn = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    for (table, column, expected) in [
        ("pages", "first_seen", "timestamp with time zone"),
        ("jobs", "lease_until", "timestamp with time zone"),
        ("jobs", "payload", "jsonb"),
        ("work_fingerprints", "fingerprint", "jsonb"),
        ("schedules", "seeds", "jsonb"),
        ("schedules", "enabled", "boolean"),
        ("work_windows", "windows", "bytea"),
        ("matches", "score", "double precision"),
        ("matches", "removed_at", "timestamp with time zone"),
        ("schedules", "last_fired_at", "timestamp with time zone"),
        ("runs", "stats", "jsonb"),
        ("runs", "cancel_requested", "boolean"),
        ("runs", "scheduled_for", "timestamp with time zone"),
        ("page_checks", "checked_at", "timestamp with time zone"),
    ] {
        let found: String = sqlx::query_scalar(
            "SELECT data_type FROM information_schema.columns \
             WHERE table_name = $1 AND column_name = $2",
        )
        .bind(table)
        .bind(column)
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(found, expected, "{table}.{column}");
    }
    let identity: String = sqlx::query_scalar(
        "SELECT is_identity FROM information_schema.columns \
         WHERE table_name = 'works' AND column_name = 'id'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(identity, "YES");
    conn.close().await.unwrap();
    finish(store, name).await;
}

#[tokio::test]
async fn long_texts_are_compressed_with_lz4_where_the_server_has_it() {
    let (store, name) = fresh().await;
    let mut conn = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    // Whether this server can: PostgreSQL 14+ built --with-lz4 (Debian's is).
    let lz4 = sqlx::query("CREATE TEMPORARY TABLE lz4_probe (t text COMPRESSION lz4)")
        .execute(&mut conn)
        .await
        .is_ok();
    let expected = if lz4 { "l" } else { "" };
    for (table, column) in [
        ("works", "content"),
        ("pages", "text"),
        ("page_texts", "text"),
    ] {
        let method: String = sqlx::query_scalar(
            "SELECT attcompression::text FROM pg_attribute \
         WHERE attrelid = $1::regclass AND attname = $2",
        )
        .bind(table)
        .bind(column)
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(method, expected, "{table}.{column} (server has lz4: {lz4})");
    }
    // A compressed text reads back as written.
    let text = "the empire, long divided, must unite; long united, must divide. ".repeat(2_000);
    let rights_holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (id, _) = store
        .upsert_work(&work(rights_holder, "w1", &text))
        .await
        .unwrap();
    assert_eq!(store.get_work(id).await.unwrap().content, text);
    if lz4 {
        let compression: Option<String> =
            sqlx::query_scalar("SELECT pg_column_compression(content) FROM works WHERE id = $1")
                .bind(id)
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!(compression.as_deref(), Some("lz4"));
    }
    conn.close().await.unwrap();
    finish(store, name).await;
}

#[tokio::test]
async fn a_claim_skips_a_job_locked_by_another_transaction_instead_of_waiting() {
    let (store, name) = fresh().await;
    let job = |seconds| NewJob {
        kind: "match".to_owned(),
        payload: serde_json::json!({ "page": seconds }),
        dedup_key: None,
        run_at: at(seconds),
        max_attempts: 3,
    };
    let older = store.enqueue_job(&job(0)).await.unwrap();
    let newer = store.enqueue_job(&job(1)).await.unwrap();

    // Another worker is in the middle of taking the older job.
    let mut other = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut other).await.unwrap();
    sqlx::query("SELECT id FROM jobs WHERE id = $1 FOR UPDATE")
        .bind(older)
        .execute(&mut other)
        .await
        .unwrap();

    let lease = chrono::Duration::seconds(30);
    let claimed = tokio::time::timeout(
        Duration::from_secs(10),
        store.claim_job(&["match"], at(5), lease),
    )
    .await
    .expect("the claim does not wait for the other transaction")
    .unwrap()
    .unwrap();
    assert_eq!(claimed.id, newer, "the locked older job is skipped");

    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    let next = store
        .claim_job(&["match"], at(5), lease)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (next.id, next.state),
        (older, JobState::Running),
        "released, it is claimed next"
    );
    other.close().await.unwrap();
    finish(store, name).await;
}

#[tokio::test]
async fn text_with_a_nul_character_is_refused_as_invalid() {
    let (store, name) = fresh().await;
    let why = invalid(
        store
            .upsert_page(&page("https://pirate.example/nul", "before\0after", at(0)))
            .await,
    );
    assert!(why.contains("NUL"), "{why}");
    assert_eq!(store.count_pages().await.unwrap(), 0);
    finish(store, name).await;
}

#[tokio::test]
async fn leadership_ends_with_the_leaders_session() {
    let (store, name) = fresh().await;
    let ttl = chrono::Duration::seconds(60);
    let mut leader = store.try_lead("scheduler", ttl).await.unwrap().unwrap();
    assert!(store.try_lead("scheduler", ttl).await.unwrap().is_none());

    // What a crash of the leader's process, or a server restart, does to its session. Only this
    // test's database: other tests on the server hold advisory locks too (migrations).
    let mut admin = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    let ended: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_locks \
         WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() \
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS t",
    )
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert_eq!(ended, 1, "one session held the lock");
    admin.close().await.unwrap();

    assert!(
        !leader.confirm().await.unwrap(),
        "the old leader learns it lost"
    );
    let mut successor = store
        .try_lead("scheduler", ttl)
        .await
        .unwrap()
        .expect("the lock died with its session");
    assert!(successor.confirm().await.unwrap());
    successor.resign().await.unwrap();
    drop(leader);
    finish(store, name).await;
}

#[tokio::test]
async fn deleting_a_work_row_deletes_its_windows() {
    // A work's windows are one packed row of `work_windows`, deleted with the work.
    let (store, name) = fresh().await;
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let text = "0123456789".repeat(40);
    let (kept, _) = store
        .upsert_work(&work(holder, "kept", &text))
        .await
        .unwrap();
    let (gone, _) = store
        .upsert_work(&work(holder, "gone", &text))
        .await
        .unwrap();
    let mut conn = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    let windows = |id: i64| {
        sqlx::query_scalar::<_, i64>(
            "SELECT COALESCE(sum(window_count), 0)::bigint FROM work_windows WHERE work_id = $1",
        )
        .bind(id)
    };
    assert_eq!(windows(gone).fetch_one(&mut conn).await.unwrap(), 50);
    sqlx::query("DELETE FROM works WHERE id = $1")
        .bind(gone)
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(windows(gone).fetch_one(&mut conn).await.unwrap(), 0);
    assert_eq!(windows(kept).fetch_one(&mut conn).await.unwrap(), 50);
    conn.close().await.unwrap();
    store.close().await;
    drop_postgres_database(&name).await;
}
