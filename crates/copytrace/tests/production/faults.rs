//! Faults: a worker killed mid-job, Redis flushed, PostgreSQL restarted under load.

use std::time::Duration;

use crate::multi_process::{FAST, worker, write_library};
use crate::processes::{Deployment, assert_each_page_stored_and_matched_once};
use crate::services::{Database, PrivatePostgres, PrivateRedis, wait_for};
use crate::site::GeneratedSite;

#[test]
fn a_crawl_worker_killed_mid_job_leaves_the_job_to_another_after_its_lease() {
    let database = Database::on_shared_server();
    let redis = PrivateRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, Some(&redis.url), dir.path());
    deployment.add_library(&write_library(dir.path()));
    // Slow pages keep the crawl in flight for several seconds.
    let site = GeneratedSite::serve(300, Duration::from_millis(20));

    let mut matcher = worker(&deployment, "match");
    let mut doomed = worker(&deployment, "crawl");
    deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "400",
        "--concurrency",
        "2",
        &site.base,
    ]);
    wait_for(
        "the crawl to be under way",
        Duration::from_secs(120),
        || deployment.pages_stored() >= 40,
    );
    doomed.kill_hard();
    let stored_at_kill = deployment.pages_stored();
    assert!(
        stored_at_kill < site.page_count() as i64,
        "the crawl was still running when killed"
    );

    let mut successor = worker(&deployment, "crawl");
    deployment.wait_until_idle(Duration::from_secs(300));
    let crawl: Vec<serde_json::Value> =
        serde_json::from_str(&deployment.ok(&["jobs", "list", "--kind", "crawl", "--json"]))
            .unwrap();
    assert_eq!(crawl.len(), 1);
    assert_eq!(crawl[0]["state"], "done");
    assert_eq!(
        crawl[0]["attempts"], 2,
        "taken over after the lease of the killed worker ran out"
    );
    for process in [&mut successor, &mut matcher] {
        assert!(
            process.terminate(Duration::from_secs(30)).success(),
            "{}",
            process.log()
        );
    }
    assert_each_page_stored_and_matched_once(
        &deployment,
        site.page_count(),
        &site.expected_matches(),
        &[matcher.log()],
    );
}

#[test]
fn after_redis_is_flushed_the_index_is_built_again_with_identical_matches() {
    let database = Database::on_shared_server();
    let redis = PrivateRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, Some(&redis.url), dir.path());
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve(200, Duration::ZERO);
    deployment.ok(&[
        "crawl",
        "--allow-private-addresses",
        "--max-pages",
        "300",
        &site.base,
    ]);
    deployment.ok(&["match", "--queue"]);
    let mut args = vec!["worker", "match", "--exit-when-idle"];
    args.extend(FAST);
    deployment.ok(&args);
    let before = deployment.comparable_export();
    assert_eq!(before.len(), site.expected_matches().len());

    // Redis lost everything (a restart without persistence): the empty index is built again
    // from the database by the worker that loads it, never read empty.
    redis.flush_all();
    deployment.ok(&["match", "--all", "--queue"]);
    deployment.ok(&args);
    assert_eq!(deployment.comparable_export(), before);
    assert_eq!(deployment.page_counts().2, 0);

    // And `index rebuild` still gives the same index.
    deployment.ok(&["index", "rebuild"]);
    deployment.ok(&["match", "--all", "--queue"]);
    deployment.ok(&args);
    assert_eq!(deployment.comparable_export(), before);
}

#[test]
fn workers_reconnect_and_carry_on_after_postgres_restarts_under_load() {
    let postgres = PrivatePostgres::start();
    let db = postgres.database("copytrace");
    let redis = PrivateRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&db, Some(&redis.url), dir.path());
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve(600, Duration::from_millis(5));

    let mut workers = vec![
        worker(&deployment, "match"),
        worker(&deployment, "match"),
        worker(&deployment, "crawl"),
    ];
    deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "700",
        "--concurrency",
        "4",
        &site.base,
    ]);
    wait_for(
        "the crawl to be under way",
        Duration::from_secs(120),
        || deployment.pages_stored() >= 100,
    );
    postgres.restart();
    deployment.wait_until_idle(Duration::from_secs(600));

    for worker in &mut workers {
        assert!(
            worker.is_running(),
            "{} did not survive the restart:\n{}",
            worker.name,
            worker.log()
        );
        assert!(
            worker.terminate(Duration::from_secs(30)).success(),
            "{}",
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
}

#[test]
fn workers_and_serve_started_while_postgres_is_down_wait_for_it_and_then_work() {
    let postgres = PrivatePostgres::start();
    let db = postgres.database("copytrace");
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&db, None, dir.path());
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve(30, Duration::ZERO);

    // A supervisor restarting workers while the database restarts: they wait for it instead
    // of exiting.
    postgres.stop();
    let mut workers = vec![worker(&deployment, "crawl"), worker(&deployment, "match")];
    let port = crate::services::free_fixed_port();
    let listen = format!("127.0.0.1:{port}");
    let mut web = deployment.spawn(&["serve", "--listen", &listen, "--workers", "0"]);
    std::thread::sleep(Duration::from_secs(3));
    assert!(web.is_running(), "serve exited:\n{}", web.log());
    for worker in &mut workers {
        assert!(
            worker.is_running(),
            "{} exited:\n{}",
            worker.name,
            worker.log()
        );
        assert!(worker.log().contains("trying again"), "{}", worker.log());
    }
    postgres.start_again();
    deployment.ok(&["crawl", "--queue", "--allow-private-addresses", &site.base]);
    deployment.wait_until_idle(Duration::from_secs(120));
    wait_for("serve to answer", Duration::from_secs(60), || {
        crate::serve::get(port, "/login").is_some_and(|(status, _)| status == 200)
    });
    assert!(
        web.terminate(Duration::from_secs(30)).success(),
        "{}",
        web.log()
    );
    let logs: Vec<String> = workers
        .iter_mut()
        .map(|worker| {
            assert!(
                worker.terminate(Duration::from_secs(30)).success(),
                "{}",
                worker.log()
            );
            worker.log()
        })
        .collect();
    assert_each_page_stored_and_matched_once(
        &deployment,
        site.page_count(),
        &site.expected_matches(),
        &logs[1..],
    );
}
