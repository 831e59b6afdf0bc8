//! Several worker processes sharing PostgreSQL and Redis; the same matches as embedded SQLite.

use std::time::Duration;

use crate::processes::{Deployment, assert_each_page_stored_and_matched_once};
use crate::services::{Database, PrivateRedis};
use crate::site::GeneratedSite;

/// The bundled sample library as `.txt` files in `dir/library`.
pub fn write_library(dir: &std::path::Path) -> std::path::PathBuf {
    let library = dir.join("library");
    std::fs::create_dir_all(&library).expect("library directory");
    for (id, text) in copytrace::demo::LIBRARY {
        std::fs::write(library.join(format!("{id}.txt")), text).expect("write a work");
    }
    library
}

/// Worker flags fit for tests: short leases and retries.
pub const FAST: [&str; 4] = ["--lease-secs", "5", "--retry-base-secs", "1"];

pub fn worker(deployment: &Deployment, kind: &str) -> crate::processes::Process {
    let mut args = vec!["worker", kind];
    args.extend(FAST);
    deployment.spawn(&args)
}

#[test]
fn two_match_workers_and_a_crawl_worker_store_and_match_every_page_once() {
    let database = Database::on_shared_server();
    let redis = PrivateRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, Some(&redis.url), dir.path());
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve(2000, Duration::ZERO);

    let mut workers = vec![
        worker(&deployment, "match"),
        worker(&deployment, "match"),
        worker(&deployment, "crawl"),
    ];
    let enqueued = deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "2500",
        "--concurrency",
        "8",
        &site.base,
    ]);
    assert!(enqueued.starts_with("enqueued crawl job "), "{enqueued}");
    deployment.wait_until_idle(Duration::from_secs(600));

    for worker in &mut workers {
        assert!(
            worker.is_running(),
            "{} died:\n{}",
            worker.name,
            worker.log()
        );
        let status = worker.terminate(Duration::from_secs(30));
        assert!(
            status.success(),
            "{} exited with {status}:\n{}",
            worker.name,
            worker.log()
        );
    }
    let logs: Vec<String> = workers[..2].iter().map(|w| w.log()).collect();
    assert_each_page_stored_and_matched_once(
        &deployment,
        site.page_count(),
        &site.expected_matches(),
        &logs,
    );
    let requests = site.requests();
    assert_eq!(requests.len(), site.page_count(), "every page was fetched");
    assert!(
        requests.values().all(|&n| n == 1),
        "no page fetched twice by one crawl"
    );
    // Both match workers took part (neither sat idle while the other did all the work).
    for log in &logs {
        assert!(
            log.contains("match(es)"),
            "a match worker did no job:\n{log}"
        );
    }
}

#[test]
fn postgres_with_redis_workers_export_the_same_matches_as_embedded_sqlite() {
    let site = GeneratedSite::serve(300, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();

    let sqlite_dir = dir.path().join("sqlite");
    std::fs::create_dir_all(&sqlite_dir).unwrap();
    let sqlite = Deployment::new(
        &format!("sqlite://{}", sqlite_dir.join("ct.db").display()),
        None,
        &sqlite_dir,
    );
    sqlite.add_library(&write_library(&sqlite_dir));
    sqlite.ok(&[
        "crawl",
        "--allow-private-addresses",
        "--max-pages",
        "400",
        &site.base,
    ]);
    sqlite.ok(&["match"]);

    let database = Database::on_shared_server();
    let redis = PrivateRedis::start();
    let production = Deployment::new(&database.url, Some(&redis.url), dir.path());
    production.add_library(&write_library(dir.path()));
    production.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "400",
        &site.base,
    ]);
    let mut args = vec!["worker", "crawl", "--exit-when-idle"];
    args.extend(FAST);
    production.ok(&args);
    let mut args = vec!["worker", "match", "--exit-when-idle"];
    args.extend(FAST);
    production.ok(&args);

    let exported = production.comparable_export();
    assert_eq!(
        exported.len(),
        site.expected_matches().len(),
        "the pirated chapters are found"
    );
    assert_eq!(exported, sqlite.comparable_export());
}
