//! `copytrace serve`: the operations endpoints, one scheduler leader across processes, and the
//! embedded mode where one process runs everything.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::multi_process::write_library;
use crate::processes::Deployment;
use crate::services::{Database, PrivateRedis, free_port, wait_for};
use crate::site::GeneratedSite;

/// `GET path` on 127.0.0.1:port: `(status, body)`, or `None` while nothing answers.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

fn leads(port: u16) -> Option<bool> {
    let (_, metrics) = get(port, "/metrics")?;
    if metrics.contains("copytrace_scheduler_leader 1\n") {
        Some(true)
    } else if metrics.contains("copytrace_scheduler_leader 0\n") {
        Some(false)
    } else {
        None
    }
}

#[test]
fn exactly_one_of_two_serve_processes_leads_and_the_other_takes_over_when_it_dies() {
    let database = Database::on_shared_server();
    let redis = PrivateRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, Some(&redis.url), dir.path());
    deployment.ok(&["migrate"]);
    let ports = [free_port(), free_port()];
    let mut servers: Vec<_> = ports
        .iter()
        .map(|port| {
            deployment.spawn(&[
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--sweep-secs",
                "1",
            ])
        })
        .collect();
    let mut leaders = Vec::new();
    wait_for("one serve process to lead", Duration::from_secs(60), || {
        leaders = ports.iter().map(|p| leads(*p)).collect();
        leaders.iter().all(Option::is_some) && leaders.contains(&Some(true))
    });
    // Several rounds later there is still exactly one.
    std::thread::sleep(Duration::from_secs(3));
    let now: Vec<_> = ports.iter().map(|p| leads(*p)).collect();
    assert_eq!(
        now.iter().filter(|l| **l == Some(true)).count(),
        1,
        "{now:?}"
    );
    let leader = now.iter().position(|l| *l == Some(true)).unwrap();
    let follower = 1 - leader;

    // Readiness: the database answers, but the Redis index was never built.
    let (status, body) = get(ports[follower], "/readyz").unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("index rebuild"), "{body}");
    deployment.ok(&["index", "rebuild"]);
    assert_eq!(get(ports[follower], "/readyz").unwrap().0, 200);
    assert_eq!(get(ports[follower], "/healthz").unwrap().0, 200);
    // The admin web is served beside them: anonymous visitors are sent to log in.
    let (status, login) = get(ports[follower], "/login").unwrap();
    assert_eq!(status, 200);
    assert!(login.contains("name=\"password\""), "{login}");
    assert_eq!(get(ports[follower], "/").unwrap().0, 303);

    servers[leader].kill_hard();
    wait_for(
        "the other serve process to take over",
        Duration::from_secs(60),
        || leads(ports[follower]) == Some(true),
    );
    let status = servers[follower].terminate(Duration::from_secs(30));
    assert!(status.success(), "{}", servers[follower].log());
}

#[test]
fn embedded_serve_runs_queued_crawls_and_matches_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(
        &format!("sqlite://{}", dir.path().join("ct.db").display()),
        None,
        dir.path(),
    );
    deployment.add_library(&write_library(dir.path()));
    let site = GeneratedSite::serve(120, Duration::ZERO);
    let port = free_port();
    let mut server = deployment.spawn(&[
        "serve",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--sweep-secs",
        "1",
    ]);
    deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "200",
        &site.base,
    ]);
    deployment.wait_until_idle(Duration::from_secs(300));
    // The dedup run as a job of the in-process match worker: every infringing page is checked
    // again and found still online.
    let enqueued = deployment.ok(&[
        "dedup",
        "--queue",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
    ]);
    let run_id = enqueued
        .trim()
        .rsplit_once("(run ")
        .and_then(|(_, id)| id.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{enqueued}"))
        .to_owned();
    let mut run = serde_json::Value::Null;
    wait_for("the dedup run to finish", Duration::from_secs(120), || {
        run = serde_json::from_str(&deployment.ok(&["runs", "show", &run_id, "--json"])).unwrap();
        run["state"] == "succeeded"
    });
    let infringing: std::collections::BTreeSet<_> = site
        .expected_matches()
        .into_iter()
        .map(|(url, _)| url)
        .collect();
    assert_eq!(
        run["counts"]["pages_checked"],
        infringing.len() as u64,
        "{run}"
    );
    assert_eq!(run["counts"]["matches_removed"], 0, "{run}");
    assert_eq!(run["counts"]["errors"], 0, "{run}");
    // A run is finished a moment before its job is marked done: wait for the job to follow.
    let mut metrics = String::new();
    wait_for(
        "the crawl and dedup jobs to be done in /metrics",
        Duration::from_secs(30),
        || {
            let (status, body) = get(port, "/metrics").expect("serve answers");
            assert_eq!(status, 200);
            metrics = body;
            metrics.contains("copytrace_jobs{kind=\"crawl\",state=\"done\"} 1\n")
                && metrics.contains("copytrace_jobs{kind=\"dedup\",state=\"done\"} 1\n")
        },
    );
    assert!(
        metrics.contains("copytrace_scheduler_leader 1\n"),
        "{metrics}"
    );
    assert!(
        server.terminate(Duration::from_secs(30)).success(),
        "{}",
        server.log()
    );

    let found: std::collections::BTreeSet<_> = deployment.exported_pairs().into_iter().collect();
    assert_eq!(found, site.expected_matches());
    let due = deployment.ok(&["match", "--queue"]);
    assert!(
        due.starts_with("0 page(s) due"),
        "every page was matched: {due}"
    );
}

#[test]
fn a_running_crawl_is_cancelled_at_its_next_page_and_its_run_records_why_it_stopped() {
    let database = Database::on_shared_server();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, None, dir.path());
    deployment.add_library(&write_library(dir.path()));
    // Slow pages, so the crawl is still running when it is cancelled.
    let site = GeneratedSite::serve(400, Duration::from_millis(100));
    let port = free_port();
    let mut server = deployment.spawn(&[
        "serve",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--sweep-secs",
        "1",
        "--workers",
        "1",
    ]);
    let enqueued = deployment.ok(&[
        "crawl",
        "--queue",
        "--allow-private-addresses",
        "--max-pages",
        "1000",
        "--concurrency",
        "2",
        &site.base,
    ]);
    let run_id = enqueued
        .trim()
        .rsplit_once("(run ")
        .and_then(|(_, id)| id.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{enqueued}"))
        .to_owned();
    let run = |deployment: &Deployment| -> serde_json::Value {
        serde_json::from_str(&deployment.ok(&["runs", "show", &run_id, "--json"])).unwrap()
    };
    wait_for("the crawl to store pages", Duration::from_secs(120), || {
        let r = run(&deployment);
        r["state"] == "running" && r["counts"]["pages_checked"].as_u64().unwrap_or(0) >= 5
    });
    let said = deployment.ok(&["runs", "cancel", &run_id]);
    assert!(said.contains("will stop"), "{said}");
    wait_for("the run to stop", Duration::from_secs(60), || {
        run(&deployment)["state"] == "cancelled"
    });
    let stopped = run(&deployment);
    assert!(stopped["finished_at"].is_string(), "{stopped}");
    assert!(
        stopped["stats"]["requests"].as_u64().unwrap() > 0,
        "{stopped}"
    );
    // It stopped well before the end of the site, and its job ended without a retry.
    let stored = deployment.pages_stored();
    assert!(stored < 300, "{stored} pages stored after the cancellation");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        deployment.pages_stored(),
        stored,
        "nothing crawled after the stop"
    );
    let counts = deployment.job_counts();
    assert_eq!(
        counts.get(&("crawl".into(), "done".into())),
        Some(&1),
        "{counts:?}"
    );
    assert!(
        server.terminate(Duration::from_secs(30)).success(),
        "{}",
        server.log()
    );
}
