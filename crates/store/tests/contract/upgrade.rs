//! Upgrading a database made by an earlier version: rows written before a migration read back
//! with the values the migration promises.

use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{ListingOrder, MatchFilter, MatchStatus, RunFilter, RunKind, Store};
use sqlx::migrate::Migrator;
use sqlx::{Connection, PgConnection, SqliteConnection};

use crate::helpers::{at, create_postgres_database, drop_postgres_database, postgres_url};

static SQLITE: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("./migrations/postgres");

/// The version before runs, schedule kinds and removal checks.
const BEFORE_RUNS: i64 = 4;

/// A new SQLite database migrated up to `version` only, as an earlier release left it: its
/// directory (removed when dropped), its URL and an open connection.
async fn sqlite_at_version(version: i64) -> (tempfile::TempDir, String, SqliteConnection) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("old.db").display());
    let mut old = SqliteConnection::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut old)
        .await
        .unwrap();
    SQLITE.run_to(version, &mut old).await.unwrap();
    (dir, url, old)
}

/// A SQLite database left at `version` with the rows `rows` writes (given the time as SQLite
/// stores it), then opened and migrated by the store. Keep the directory while the store is used.
async fn sqlite_upgraded(
    version: i64,
    rows: fn(&str) -> String,
) -> (tempfile::TempDir, SqliteStore) {
    let (dir, url, mut old) = sqlite_at_version(version).await;
    let created = at(0).timestamp_micros().to_string();
    sqlx::raw_sql(sqlx::AssertSqlSafe(rows(&created)))
        .execute(&mut old)
        .await
        .unwrap();
    old.close().await.unwrap();
    let store = SqliteStore::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    (dir, store)
}

/// [`sqlite_upgraded`] on a new PostgreSQL database; returns its name (to drop) and the store.
async fn postgres_upgraded(version: i64, rows: fn(&str) -> String) -> (String, PostgresStore) {
    let name = create_postgres_database().await;
    let mut old = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    POSTGRES.run_to(version, &mut old).await.unwrap();
    let created = format!("'{}'", at(0).to_rfc3339());
    sqlx::raw_sql(sqlx::AssertSqlSafe(rows(&created)))
        .execute(&mut old)
        .await
        .unwrap();
    old.close().await.unwrap();
    let store = PostgresStore::connect(&postgres_url(&name)).await.unwrap();
    store.migrate().await.unwrap();
    (name, store)
}

/// What a schedule, page and match written before migration 0005 read back as.
async fn rows_from_before_runs_read_back_with_defaults(store: &dyn Store) {
    let schedules = store.list_schedules().await.unwrap();
    assert_eq!(schedules.len(), 1);
    let nightly = &schedules[0];
    assert_eq!(nightly.name, "nightly");
    assert_eq!(nightly.kind, RunKind::Crawl, "every old schedule crawled");
    assert_eq!(nightly.last_fired_at, None);
    assert_eq!(nightly.created_at, at(0));
    assert_eq!(nightly.updated_at, at(0), "updated_at starts at created_at");
    assert_eq!(
        nightly.seeds,
        ["https://pirate.example/".to_owned()].as_slice()
    );

    let page = store.get_page(1).await.unwrap();
    assert_eq!(
        (page.availability, page.availability_checked_at),
        (None, None)
    );
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    assert_eq!(
        (matches[0].status, matches[0].removed_at),
        (MatchStatus::Open, None)
    );
    // Migration 0019 gave the match its work's rights holder, which holders' lists select by.
    let own = MatchFilter {
        rights_holder_id: Some(matches[0].rights_holder_id),
        ..MatchFilter::default()
    };
    let listed = store
        .match_listing(&own, ListingOrder::Newest, 0, 10)
        .await
        .unwrap();
    assert_eq!(listed.matches.len(), 1);
    let other = MatchFilter {
        rights_holder_id: Some(matches[0].rights_holder_id + 1),
        ..MatchFilter::default()
    };
    let listed = store
        .match_listing(&other, ListingOrder::Newest, 0, 10)
        .await
        .unwrap();
    assert!(listed.matches.is_empty());
    assert!(
        store
            .list_runs(&RunFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.page_checks(1).await.unwrap().is_empty());

    // The upgraded schedule fires like a new one.
    let fired = store
        .fire_schedule(&crate::helpers::fire(nightly.id, None, at(60)))
        .await
        .unwrap();
    assert!(fired.is_some());
}

#[tokio::test]
async fn sqlite_rows_written_before_runs_existed_survive_the_upgrade() {
    let (_dir, url, mut old) = sqlite_at_version(BEFORE_RUNS).await;
    let created = at(0).timestamp_micros();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "INSERT INTO schedules (name, cron, timezone, seeds, config, enabled, owner, created_at) \
           VALUES ('nightly', '0 3 * * *', 'UTC', '[\"https://pirate.example/\"]', '{{}}', 1, \
                   NULL, {created}); \
         INSERT INTO rights_holders (name, created_at) VALUES ('Yuewen', {created}); \
         INSERT INTO works (rights_holder_id, external_id, title, content, content_len, \
           content_hash, fingerprint_version, created_at, updated_at) \
           VALUES (1, 'novel', 'Novel', 'text', 4, 'h', 1, {created}, {created}); \
         INSERT INTO sites (host, created_at) VALUES ('pirate.example', {created}); \
         INSERT INTO pages (site_id, url, title, text, content_hash, http_status, first_seen, \
           last_seen, matched_hash) VALUES (1, 'https://pirate.example/1', NULL, 'text', 'h', \
           200, {created}, {created}, 'h'); \
         INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
           first_seen, last_seen) VALUES (1, 1, 0.9, 0.9, 0.9, 'simhash', {created}, {created});"
    )))
    .execute(&mut old)
    .await
    .unwrap();
    old.close().await.unwrap();

    let store = SqliteStore::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    rows_from_before_runs_read_back_with_defaults(&store).await;
    store.close().await;
}

#[tokio::test]
async fn postgres_rows_written_before_runs_existed_survive_the_upgrade() {
    let name = create_postgres_database().await;
    let mut old = PgConnection::connect(&postgres_url(&name)).await.unwrap();
    POSTGRES.run_to(BEFORE_RUNS, &mut old).await.unwrap();
    let created = at(0).to_rfc3339();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "INSERT INTO schedules (name, cron, timezone, seeds, config, enabled, owner, created_at) \
           VALUES ('nightly', '0 3 * * *', 'UTC', '[\"https://pirate.example/\"]', '{{}}', TRUE, \
                   NULL, '{created}'); \
         INSERT INTO rights_holders (name, created_at) VALUES ('Yuewen', '{created}'); \
         INSERT INTO works (rights_holder_id, external_id, title, content, content_len, \
           content_hash, fingerprint_version, created_at, updated_at) \
           VALUES (1, 'novel', 'Novel', 'text', 4, 'h', 1, '{created}', '{created}'); \
         INSERT INTO sites (host, created_at) VALUES ('pirate.example', '{created}'); \
         INSERT INTO pages (site_id, url, title, text, content_hash, http_status, first_seen, \
           last_seen, matched_hash) VALUES (1, 'https://pirate.example/1', NULL, 'text', 'h', \
           200, '{created}', '{created}', 'h'); \
         INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
           first_seen, last_seen) \
           VALUES (1, 1, 0.9, 0.9, 0.9, 'simhash', '{created}', '{created}');"
    )))
    .execute(&mut old)
    .await
    .unwrap();
    old.close().await.unwrap();

    let store = PostgresStore::connect(&postgres_url(&name)).await.unwrap();
    store.migrate().await.unwrap();
    rows_from_before_runs_read_back_with_defaults(&store).await;
    store.close().await;
    drop_postgres_database(&name).await;
}

/// The version before validators and kept evidence texts.
const BEFORE_REFETCH: i64 = 5;

/// What a page and its match written before migration 0006 read back as, and how they go on.
async fn rows_from_before_refetch_read_back_with_defaults(store: &dyn Store) {
    let page = store.get_page(1).await.unwrap();
    assert_eq!((page.etag, page.last_modified), (None, None));
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    assert_eq!(
        matches[0].evidence_hash, "h",
        "old evidence points into the stored text"
    );
    assert_eq!(
        store.evidence_text(1, "h").await.unwrap().as_deref(),
        Some("copied text")
    );
    let listed = store.infringing_pages(0, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].stale_evidence.is_empty());

    // A re-crawl of the upgraded page keeps the text its evidence points into.
    store
        .upsert_page(&copytrace_store::NewPage {
            url: "https://pirate.example/1".to_owned(),
            title: None,
            text: "other text".to_owned(),
            content_hash: "h2".to_owned(),
            http_status: 200,
            fetched_at: at(100),
            etag: Some("\"e\"".to_owned()),
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap();
    assert_eq!(
        store.evidence_text(1, "h").await.unwrap().as_deref(),
        Some("copied text")
    );
    let verdict = store
        .record_page_matches(1, "h2", &[], at(101))
        .await
        .unwrap();
    assert_eq!(verdict.removed, 1);
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(
        (matches[0].status, matches[0].removed_at),
        (MatchStatus::Removed, Some(at(100)))
    );
}

/// Rows as version 5 wrote them: a matched page with one evidence passage.
fn before_refetch_rows(created: &str) -> String {
    format!(
        "INSERT INTO rights_holders (name, created_at) VALUES ('Yuewen', {created}); \
         INSERT INTO works (rights_holder_id, external_id, title, content, content_len, \
           content_hash, fingerprint_version, created_at, updated_at) \
           VALUES (1, 'novel', 'Novel', 'copied text', 11, 'w', 1, {created}, {created}); \
         INSERT INTO sites (host, created_at) VALUES ('pirate.example', {created}); \
         INSERT INTO pages (site_id, url, title, text, content_hash, http_status, first_seen, \
           last_seen, matched_hash) VALUES (1, 'https://pirate.example/1', NULL, 'copied text', \
           'h', 200, {created}, {created}, 'h'); \
         INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
           first_seen, last_seen) VALUES (1, 1, 0.9, 0.9, 0.9, 'simhash', {created}, {created}); \
         INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, work_end) \
           VALUES (1, 0, 0, 6, 0, 6);"
    )
}

#[tokio::test]
async fn sqlite_pages_and_matches_written_before_refetch_survive_the_upgrade() {
    let (_dir, store) = sqlite_upgraded(BEFORE_REFETCH, before_refetch_rows).await;
    rows_from_before_refetch_read_back_with_defaults(&store).await;
    store.close().await;
}

#[tokio::test]
async fn postgres_pages_and_matches_written_before_refetch_survive_the_upgrade() {
    let (name, store) = postgres_upgraded(BEFORE_REFETCH, before_refetch_rows).await;
    rows_from_before_refetch_read_back_with_defaults(&store).await;
    store.close().await;
    drop_postgres_database(&name).await;
}

/// The version before windows were packed, one row per window.
const BEFORE_PACKED_WINDOWS: i64 = 9;

/// Two works, one with three window rows (a SimHash with the top bit set among them, written
/// out of ordinal order) and one with none, as a version before 0010 stored them.
fn window_rows(created: &str) -> String {
    format!(
        "INSERT INTO rights_holders (id, name, created_at) VALUES (1, 'Yuewen', {created}); \
         INSERT INTO works (id, rights_holder_id, external_id, title, content, content_len, \
           content_hash, fingerprint_version, created_at, updated_at) VALUES \
           (1, 1, 'novel', 'Novel', 'x', 1, 'h1', 2, {created}, {created}), \
           (2, 1, 'empty', 'Empty', 'y', 1, 'h2', 2, {created}, {created}); \
         INSERT INTO work_segments (work_id, ordinal, start_offset, end_offset, simhash) VALUES \
           (1, 2, 24, 4294967295, 1), (1, 0, 0, 48, -9223372036854775807), \
           (1, 1, 12, 60, -1);"
    )
}

/// What [`window_rows`] reads back as after the upgrade.
async fn windows_read_back_packed(store: &dyn Store) {
    let segments: Vec<(i64, u32, u32, u32, u64)> = store
        .all_segments()
        .await
        .unwrap()
        .into_iter()
        .map(|s| {
            let w = s.segment;
            (s.work_id, w.ordinal, w.start, w.end, w.simhash)
        })
        .collect();
    assert_eq!(
        segments,
        [
            (1, 0, 0, 48, 0x8000_0000_0000_0001),
            (1, 1, 12, 60, u64::MAX),
            (1, 2, 24, u32::MAX, 1),
        ]
    );
    let counts: Vec<(String, u32)> = store
        .list_works(None)
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.external_id, w.segment_count))
        .collect();
    assert_eq!(counts, [("empty".to_owned(), 0), ("novel".to_owned(), 3)]);
}

#[tokio::test]
async fn sqlite_window_rows_are_packed_by_the_upgrade() {
    let (_dir, store) = sqlite_upgraded(BEFORE_PACKED_WINDOWS, window_rows).await;
    windows_read_back_packed(&store).await;
    store.close().await;
}

#[tokio::test]
async fn postgres_window_rows_are_packed_by_the_upgrade() {
    let (name, store) = postgres_upgraded(BEFORE_PACKED_WINDOWS, window_rows).await;
    windows_read_back_packed(&store).await;
    store.close().await;
    drop_postgres_database(&name).await;
}

/// The version before notices were sent and followed up (its SQLite table is rebuilt).
const BEFORE_SENDING: i64 = 26;

/// A matched page and a sent notice listing its match, as version 26 wrote them.
fn notice_rows(created: &str) -> String {
    format!(
        "INSERT INTO rights_holders (name, created_at) VALUES ('Yuewen', {created}); \
         INSERT INTO works (rights_holder_id, external_id, title, content, content_len, \
           content_hash, fingerprint_version, created_at, updated_at) \
           VALUES (1, 'novel', 'Novel', 'copied text', 11, 'w', 1, {created}, {created}); \
         INSERT INTO sites (host, created_at) VALUES ('pirate.example', {created}); \
         INSERT INTO pages (site_id, url, title, text, content_hash, http_status, first_seen, \
           last_seen, matched_hash) VALUES (1, 'https://pirate.example/1', NULL, 'copied text', \
           'h', 200, {created}, {created}, 'h'); \
         INSERT INTO matches (page_id, work_id, rights_holder_id, score, coverage, containment, \
           method, first_seen, last_seen) \
           VALUES (1, 1, 1, 0.9, 0.9, 0.9, 'simhash', {created}, {created}); \
         INSERT INTO notices (rights_holder_id, site, lang, status, body, created_at, \
           sent_at) VALUES (1, 'pirate.example', 'zh', 'sent', '侵权通知', {created}, {created}); \
         INSERT INTO notice_matches (notice_id, match_id) VALUES (1, 1);"
    )
}

/// A notice written before migration 0027 keeps its status, text and matches, has an empty
/// history, and takes the new states.
async fn notices_from_before_sending_read_back(store: &dyn Store) {
    let notice = store.get_notice(1, None).await.unwrap();
    assert_eq!(notice.status, copytrace_store::NoticeStatus::Sent);
    assert_eq!(
        (notice.body.as_str(), notice.sent_at),
        ("侵权通知", Some(at(0)))
    );
    assert_eq!(notice.match_ids, [1]);
    assert!(store.notice_history(1).await.unwrap().is_empty());
    store
        .set_notice_status(&copytrace_store::NoticeStatusChange {
            id: 1,
            status: copytrace_store::NoticeStatus::Acknowledged,
            rights_holder_id: None,
            actor: "cli:tester".into(),
            note: None,
            at: at(10),
        })
        .await
        .unwrap();
    assert_eq!(store.notice_history(1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn sqlite_notices_survive_the_rebuild_of_their_table() {
    let (_dir, store) = sqlite_upgraded(BEFORE_SENDING, notice_rows).await;
    notices_from_before_sending_read_back(&store).await;
    store.close().await;
}

#[tokio::test]
async fn postgres_notices_take_the_new_states_after_the_upgrade() {
    let (name, store) = postgres_upgraded(BEFORE_SENDING, notice_rows).await;
    notices_from_before_sending_read_back(&store).await;
    store.close().await;
    drop_postgres_database(&name).await;
}

/// The version before the further follow-up steps (its SQLite tables are rebuilt).
const BEFORE_FOLLOW_UP_STEPS: i64 = 29;

/// [`notice_rows`] plus what sending and follow-up wrote by version 29: a contact, the notice's
/// mail, a step of its history, a profile.
fn sending_rows(created: &str) -> String {
    format!(
        "{} \
         INSERT INTO site_contacts (host, email, kind, source, found_on, created_at) \
           VALUES ('pirate.example', 'abuse@host.example', 'abuse', 'operator', NULL, {created}); \
         INSERT INTO notice_mails (notice_id, purpose, message_id, recipients, state, \
           started_at, finished_at) VALUES (1, 'notice', '<n@test>', 'dmca@pirate.example', \
           'sent', {created}, {created}); \
         INSERT INTO notice_history (notice_id, from_status, to_status, at, actor, note) \
           VALUES (1, 'sending', 'sent', {created}, 'cli:tester', 'mailed'); \
         INSERT INTO rights_holder_profiles (rights_holder_id, email, language, updated_at) \
           VALUES (1, 'legal@yuewen.example', 'zh', {created});",
        notice_rows(created)
    )
}

/// Notices, their mails and history, contacts and profiles written before migration 0030 read
/// back, and take the new contact kind, mail purposes and state.
async fn sending_from_before_steps_read_back(store: &dyn Store) {
    use copytrace_store::{
        ContactKind, MailClaim, MailEnd, MailOutcome, MailPurpose, MailState, NewNoticeMail,
        NewSiteContact, NoticeStatus,
    };
    let notice = store.get_notice(1, None).await.unwrap();
    assert_eq!(
        (notice.status, notice.match_ids.clone()),
        (NoticeStatus::Sent, vec![1])
    );
    let mails = store.notice_mails(1).await.unwrap();
    assert_eq!(
        mails
            .iter()
            .map(|m| (m.purpose, m.state, m.message_id.as_str()))
            .collect::<Vec<_>>(),
        [(MailPurpose::Notice, MailState::Sent, "<n@test>")]
    );
    let history = store.notice_history(1).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].note.as_deref(), Some("mailed"));
    let profile = store.rights_holder_profile(1).await.unwrap().unwrap();
    assert_eq!(profile.email.as_deref(), Some("legal@yuewen.example"));
    store
        .add_site_contacts(&[NewSiteContact {
            host: "pirate.example".into(),
            email: "abuse@cdn.example".into(),
            kind: ContactKind::Cdn,
            found_on: None,
            at: at(5),
        }])
        .await
        .unwrap();
    let kinds: Vec<ContactKind> = store
        .site_contacts("pirate.example")
        .await
        .unwrap()
        .iter()
        .map(|c| c.kind)
        .collect();
    assert!(
        kinds.contains(&ContactKind::Abuse) && kinds.contains(&ContactKind::Cdn),
        "{kinds:?}"
    );
    let MailClaim::Claimed(mail_id) = store
        .begin_notice_mail(&NewNoticeMail {
            notice_id: 1,
            purpose: MailPurpose::Delisting,
            message_id: "<d@test>".into(),
            recipients: Vec::new(),
            force: false,
            actor: "scheduler".into(),
            at: at(10),
            body_sha256: None,
            timestamp: None,
        })
        .await
        .unwrap()
    else {
        panic!("the delisting step was taken before");
    };
    store
        .finish_notice_mail(&MailEnd {
            mail_id,
            outcome: MailOutcome::Skipped,
            actor: "scheduler".into(),
            note: Some("lists made".into()),
            at: at(11),
        })
        .await
        .unwrap();
    assert_eq!(
        store.get_notice(1, None).await.unwrap().status,
        NoticeStatus::Delisting
    );
    assert_eq!(store.notice_history(1).await.unwrap().len(), 2);
}

#[tokio::test]
async fn sqlite_notices_mails_and_contacts_survive_the_second_rebuild() {
    let (_dir, store) = sqlite_upgraded(BEFORE_FOLLOW_UP_STEPS, sending_rows).await;
    sending_from_before_steps_read_back(&store).await;
    store.close().await;
}

#[tokio::test]
async fn postgres_notices_take_the_further_steps_after_the_upgrade() {
    let (name, store) = postgres_upgraded(BEFORE_FOLLOW_UP_STEPS, sending_rows).await;
    sending_from_before_steps_read_back(&store).await;
    store.close().await;
    drop_postgres_database(&name).await;
}
