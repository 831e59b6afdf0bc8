//! The binary on PostgreSQL: `--db postgres://…` opens (and migrates) the PostgreSQL store, and
//! the library commands give the same results as on SQLite. Runs against the throwaway server
//! `./scripts/test` starts (`COPYTRACE_TEST_POSTGRES_URL`), in a database of its own.

use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::migrate::MigrateDatabase;

use crate::helpers::{TestSite, Workspace, add_crawl_match, write_sample_library};

/// The test server's URL; unset means the suite was not started by `./scripts/test`, which is a
/// failure, never a reason to skip.
fn server_url() -> url::Url {
    let url = std::env::var("COPYTRACE_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_POSTGRES_URL is not set: run ./scripts/test, which starts a \
             throwaway PostgreSQL cluster for these tests"
        )
    });
    url::Url::parse(&url).expect("COPYTRACE_TEST_POSTGRES_URL is a URL")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// A new, empty database on the test server, dropped (with its connections) at the end.
pub struct Database {
    pub url: String,
}

impl Database {
    pub fn new() -> Database {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut url = server_url();
        url.set_path(&format!(
            "/copytrace_cli_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let url = url.to_string();
        runtime().block_on(async {
            let _ = sqlx::Postgres::force_drop_database(&url).await;
            sqlx::Postgres::create_database(&url)
                .await
                .unwrap_or_else(|error| panic!("cannot create the test database: {error}"));
        });
        Database { url }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = runtime().block_on(sqlx::Postgres::force_drop_database(&self.url));
    }
}

#[test]
fn library_add_and_list_work_on_postgres_as_on_sqlite() {
    let database = Database::new();
    let on_sqlite = Workspace::new();
    let mut on_postgres = Workspace::new();
    on_postgres.db = database.url.clone();
    let library = write_sample_library(&on_sqlite);
    let add = ["library".as_ref(), "add".as_ref(), library.as_os_str()];

    let added = on_postgres.ok(&add);
    assert!(
        added
            .stdout
            .contains("4 work(s): 4 added, 0 updated, 0 unchanged"),
        "{}",
        added.stdout
    );
    let again = on_postgres.ok(&add);
    assert!(
        again
            .stdout
            .contains("4 work(s): 0 added, 0 updated, 4 unchanged"),
        "{}",
        again.stdout
    );
    on_sqlite.ok(&add);

    // Everything but the clock agrees: ids, ids of holders, titles, hashes, sizes, windows.
    let comparable = |workspace: &Workspace| {
        let mut works = workspace.works();
        for work in &mut works {
            let work = work.as_object_mut().expect("a work is an object");
            assert!(work.remove("created_at").is_some() && work.remove("updated_at").is_some());
        }
        works
    };
    let works = comparable(&on_postgres);
    assert_eq!(works.len(), 4);
    assert!(works.iter().all(|w| w["segment_count"].as_u64() > Some(0)));
    assert_eq!(works, comparable(&on_sqlite));

    let listed = on_postgres.ok(&["library", "list"]);
    for id in ["jianghu-ch1", "news-harbor", "xingchen-ch1", "xingchen-ch2"] {
        assert!(listed.stdout.contains(id), "{id}: {}", listed.stdout);
    }
}

#[test]
fn an_unreachable_postgres_server_is_a_one_line_error_without_the_password() {
    let workspace = Workspace::new();
    let mut command = workspace.bare();
    command.args([
        "--db",
        "postgres://copytrace:hunter2@127.0.0.1:1/copytrace",
        "library",
        "list",
    ]);
    let run = crate::helpers::run_command(&mut command);
    let error = run.one_line_error();
    assert!(
        error.contains("cannot open database postgres://copytrace:***@127.0.0.1:1/copytrace"),
        "{error}"
    );
    assert!(!error.contains("hunter2"), "{error}");
}

#[test]
fn a_missing_postgres_database_is_named_once_in_a_one_line_error() {
    let mut url = server_url();
    url.set_path("/copytrace_cli_no_such_database");
    let workspace = Workspace::new();
    let mut command = workspace.bare();
    command.args(["--db", url.as_str(), "library", "list"]);
    let run = crate::helpers::run_command(&mut command);
    let error = run.one_line_error();
    assert!(
        error.contains("cannot open database postgres://"),
        "{error}"
    );
    assert_eq!(
        error
            .matches("database \"copytrace_cli_no_such_database\" does not exist")
            .count(),
        1,
        "the server's reason, once: {error}"
    );
}

#[test]
fn the_whole_pipeline_exports_the_same_matches_on_postgres_as_on_sqlite() {
    let database = Database::new();
    let site = TestSite::sample();
    let on_sqlite = Workspace::new();
    let mut on_postgres = Workspace::new();
    on_postgres.db = database.url.clone();
    add_crawl_match(&on_sqlite, &site);
    add_crawl_match(&on_postgres, &site);

    // Everything agrees, evidence offsets included, but the clock, the ids of pages and
    // matches and the order of the export (by page id): those follow the order in which
    // concurrent fetches finished.
    let comparable = |workspace: &Workspace| {
        let mut matches = workspace.export_json();
        for record in &mut matches {
            let record = record.as_object_mut().expect("a match is an object");
            for key in ["first_seen", "last_seen", "id", "page_id"] {
                assert!(record.remove(key).is_some(), "{key} is exported");
            }
        }
        matches.sort_by_key(|record| {
            (
                record["page_url"].to_string(),
                record["work_external_id"].to_string(),
            )
        });
        matches
    };
    let exported = comparable(&on_postgres);
    assert!(
        exported.len() >= 3,
        "the sample site has pirated copies: {exported:?}"
    );
    assert_eq!(exported, comparable(&on_sqlite));
}
