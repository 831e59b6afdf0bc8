//! A full disk under the embedded SQLite store (issue 23): a run that cannot write stops with
//! a clear error, leaves a database that passes SQLite's integrity check, and the next run,
//! once there is space again, resumes and ends with every page stored once and every copy
//! found. The disk fills at a random point of the crawl in each iteration.

use std::time::Duration;

use sqlx::{Connection, SqliteConnection};

use crate::multi_process::write_library;
use crate::processes::Deployment;
use crate::services::SmallDisk;
use crate::site::GeneratedSite;

/// A copy of the database `db` and its write-ahead log, in a directory of its own: SQLite
/// cannot open a file through `/proc/PID/root`, and the copy is what a backup would hold.
fn copied(db: &std::path::Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copytrace.db");
    std::fs::copy(db, &copy).expect("copy the database");
    let wal = db.with_extension("db-wal");
    if wal.exists() {
        std::fs::copy(&wal, copy.with_extension("db-wal")).expect("copy its log");
    }
    (dir, copy)
}

/// Runs `read` on a connection to a copy of the database `db`.
fn with_copy<T>(db: &std::path::Path, read: impl AsyncFnOnce(&mut SqliteConnection) -> T) -> T {
    let (_dir, db) = copied(db);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", db.display());
        let mut connection = SqliteConnection::connect(&url).await.expect("open");
        let result = read(&mut connection).await;
        let _ = connection.close().await;
        result
    })
}

fn sqlite(db: &std::path::Path, query: &'static str) -> (i64, i64) {
    with_copy(db, async |connection| {
        sqlx::query_as(query)
            .fetch_one(connection)
            .await
            .expect("query")
    })
}

/// The database's size with its write-ahead log applied (pages in use times page size): what
/// the files' lengths would say only after a checkpoint, which a process may leave to the next.
fn stored_bytes(db: &std::path::Path) -> u64 {
    let (bytes, _) = sqlite(
        db,
        "SELECT page_count * page_size, 0 FROM pragma_page_count(), pragma_page_size()",
    );
    bytes as u64
}

fn integrity(db: &std::path::Path) -> String {
    with_copy(db, async |connection| {
        sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(connection)
            .await
            .expect("integrity_check")
    })
}

/// A deployment whose SQLite database is on `disk`, and the database's path from here.
fn on(disk: &SmallDisk, dir: &std::path::Path) -> (Deployment, std::path::PathBuf) {
    let inside = disk.mountpoint().join("copytrace.db");
    let mut deployment = Deployment::new(&format!("sqlite://{}", inside.display()), None, dir);
    deployment.wrapper = disk.wrapper();
    (deployment, disk.path().join("copytrace.db"))
}

/// Bytes of the files on `disk`.
fn used(disk: &SmallDisk) -> u64 {
    std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn a_full_disk_stops_a_sqlite_run_clearly_and_the_next_run_resumes() {
    let (iterations, seed) = crate::chaos::plan();
    let mut rng = fastrand::Rng::with_seed(seed);
    let site = GeneratedSite::serve(300, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let library = write_library(dir.path());
    let crawl = [
        "crawl",
        "--allow-private-addresses",
        "--max-pages",
        "1000",
        &site.base,
    ];
    // What the crawl takes on disk, measured on a disk large enough.
    let need = {
        let disk = SmallDisk::mount(256 << 20);
        let (deployment, db) = on(&disk, dir.path());
        deployment.add_library(&library);
        let before = stored_bytes(&db);
        deployment.ok(&crawl);
        stored_bytes(&db) - before
    };
    for iteration in 0..iterations {
        let disk = SmallDisk::mount(256 << 20);
        let (deployment, db) = on(&disk, dir.path());
        deployment.add_library(&library);
        // The disk is shrunk to what the library takes and a random part of what the crawl
        // needs; the first time to a fortieth of it, so little that SQLite meets the full disk
        // while opening the database (its WAL index cannot grow), not while writing a page.
        let room = if iteration == 0 {
            need / 40
        } else {
            rng.u64(need / 20..=need * 3 / 4)
        };
        disk.grow(used(&disk) + room);
        let output = deployment.command(&crawl).output().expect("copytrace runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "the crawl cannot have fitted in {room} bytes: {stderr}"
        );
        assert!(
            stderr.contains("the disk holding the database is full")
                && stderr.contains("free space, then run again"),
            "the error says the disk is full and what to do: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(integrity(&db), "ok", "the database is intact");
        let (stored, _) = sqlite(&db, "SELECT count(*), 0 FROM pages");

        disk.grow(256 << 20);
        deployment.ok(&crawl);
        deployment.ok(&["match"]);
        assert_eq!(integrity(&db), "ok");
        let (pages, urls) = sqlite(&db, "SELECT count(*), count(DISTINCT url) FROM pages");
        assert_eq!(pages, site.page_count() as i64, "every page stored");
        assert_eq!(urls, pages, "none twice");
        let (unmatched, _) = sqlite(
            &db,
            "SELECT count(*), 0 FROM pages WHERE matched_hash IS NULL OR matched_hash <> content_hash",
        );
        assert_eq!(unmatched, 0, "every page matched");
        let pairs = deployment.exported_pairs();
        let distinct: std::collections::BTreeSet<_> = pairs.iter().cloned().collect();
        assert_eq!(distinct.len(), pairs.len(), "no duplicate match rows");
        assert_eq!(distinct, site.expected_matches());
        eprintln!(
            "disk full iteration {iteration} (COPYTRACE_FAULT_SEED={seed}): {room} of the {need} \
             bytes the crawl needs, {stored} page(s) stored when it filled; the next run stored \
             all {pages}: {}",
            stderr.lines().last().unwrap_or_default()
        );
    }
}
