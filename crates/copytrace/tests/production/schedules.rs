//! Cron schedules across processes: two `serve` processes against one PostgreSQL database fire
//! every tick exactly once, also while leadership changes hands.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::processes::Deployment;
use crate::services::{Database, free_port, wait_for};

/// `(schedule name, scheduled_for, trigger)` of every run.
fn runs(deployment: &Deployment) -> Vec<(String, String, String)> {
    let listed = deployment.ok(&["runs", "list", "--limit", "100000", "--json"]);
    let runs: Vec<serde_json::Value> = serde_json::from_str(&listed).expect("runs list --json");
    runs.iter()
        .map(|r| {
            (
                r["schedule_name"].as_str().unwrap_or("-").to_owned(),
                r["scheduled_for"].as_str().unwrap_or("-").to_owned(),
                r["trigger"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

#[test]
fn two_serve_processes_enqueue_each_scheduled_run_once_across_a_leader_change() {
    let database = Database::on_shared_server();
    let dir = tempfile::tempdir().unwrap();
    let deployment = Deployment::new(&database.url, None, dir.path());
    deployment.ok(&["migrate"]);
    // A crawl every two seconds. On PostgreSQL `serve` runs no workers, so every job it
    // enqueues stays queued and can be counted.
    let nobody = format!("http://127.0.0.1:{}/", free_port());
    deployment.ok(&[
        "schedule",
        "add",
        "--name",
        "every-2s",
        "--cron",
        "*/2 * * * * *",
        "--allow-private-addresses",
        &nobody,
    ]);
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
                // The daily dedup run, every three seconds.
                "--dedup-cron",
                "*/3 * * * * *",
            ])
        })
        .collect();
    wait_for("the schedules to fire", Duration::from_secs(60), || {
        runs(&deployment).len() >= 6
    });
    // Kill whichever leads (the follower takes over within its next round), then let both
    // kinds fire a while longer.
    let leader = ports
        .iter()
        .position(|port| {
            std::net::TcpStream::connect(("127.0.0.1", *port)).is_ok_and(|mut s| {
                use std::io::{Read, Write};
                let _ = write!(s, "GET /metrics HTTP/1.0\r\n\r\n");
                let mut body = String::new();
                let _ = s.read_to_string(&mut body);
                body.contains("copytrace_scheduler_leader 1\n")
            })
        })
        .expect("one serve process leads");
    servers[leader].kill_hard();
    let before = runs(&deployment).len();
    wait_for("the other process to fire", Duration::from_secs(60), || {
        runs(&deployment).len() >= before + 6
    });
    let follower = 1 - leader;
    assert!(
        servers[follower]
            .terminate(Duration::from_secs(30))
            .success(),
        "{}",
        servers[follower].log()
    );

    let all = runs(&deployment);
    let mut ticks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (schedule, tick, trigger) in &all {
        assert!(
            ["schedule", "catch_up"].contains(&trigger.as_str()),
            "{trigger}"
        );
        assert!(
            ticks.entry(schedule).or_default().insert(tick),
            "tick {tick} of {schedule} was fired twice: {all:?}"
        );
    }
    assert!(ticks["every-2s"].len() >= 4, "{ticks:?}");
    assert!(ticks["daily-dedup"].len() >= 3, "{ticks:?}");
    // One job per run, of the run's kind, and the built-in schedule exists once.
    let counts = deployment.job_counts();
    let jobs_of = |kind: &str| -> u64 {
        counts
            .iter()
            .filter(|((k, _), _)| k == kind)
            .map(|(_, n)| n)
            .sum()
    };
    assert_eq!(jobs_of("crawl"), ticks["every-2s"].len() as u64);
    assert_eq!(jobs_of("dedup"), ticks["daily-dedup"].len() as u64);
    let schedules: Vec<serde_json::Value> =
        serde_json::from_str(&deployment.ok(&["schedule", "list", "--json"])).unwrap();
    let names: Vec<_> = schedules
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["daily-dedup", "every-2s"]);
    assert_eq!(schedules[0]["cron"], "*/3 * * * * *");
}
