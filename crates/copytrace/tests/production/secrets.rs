//! Passwords never printed: a PostgreSQL server and a Redis server that require a password are
//! given a wrong one, and nothing `copytrace` writes (one-shot commands' errors, `serve`'s and
//! the workers' logs at the most verbose level, the readiness endpoint's answer) holds the wrong
//! password or the right one, while it does say that authentication failed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::processes::Deployment;
use crate::services::{Database, PrivatePostgres, PrivateRedis, free_port, wait_for};

const RIGHT: &str = "right-Pw-5c1f07";
const WRONG: &str = "wrong-Pw-9e2d31";

/// Everything a one-shot command printed, with its exit status: `(success, stdout + stderr)`.
fn run(deployment: &Deployment, args: &[&str]) -> (bool, String) {
    let output = deployment
        .command(args)
        .env("COPYTRACE_LOG", "trace")
        .stdin(Stdio::null())
        .output()
        .expect("copytrace runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A long-running command at the most verbose log level, its stderr in a file.
fn spawn(deployment: &Deployment, args: &[&str], log: &std::path::Path) -> Child {
    deployment
        .command(args)
        .env("COPYTRACE_LOG", "trace")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("copytrace starts")
}

/// Waits up to `limit` for `child` to exit (killing it then); returns its stdout and stderr.
fn finish(mut child: Child, log: &std::path::Path, limit: Duration) -> String {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    format!(
        "{}{}",
        std::fs::read_to_string(log.with_extension("out")).unwrap_or_default(),
        std::fs::read_to_string(log).unwrap_or_default()
    )
}

/// `GET path` on 127.0.0.1:port: `(status, body)`, or `None` while nothing answers.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
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

#[track_caller]
fn assert_no_password(what: &str, text: &str) {
    assert!(
        !text.contains(WRONG) && !text.contains(RIGHT),
        "{what} shows a password:\n{text}"
    );
}

#[test]
fn a_wrong_database_password_is_never_printed() {
    let cluster = PrivatePostgres::start_with_password(RIGHT);
    let dir = tempfile::tempdir().unwrap();
    let url = |password: &str| {
        format!(
            "postgres://copytrace:{password}@127.0.0.1:{}/postgres",
            cluster.port
        )
    };
    // The server does check passwords: the right one gets in.
    let right = Deployment::new(&url(RIGHT), None, dir.path());
    let (ok, text) = run(&right, &["migrate"]);
    assert!(ok, "the right password logs in: {text}");
    assert_no_password("migrate", &text);
    // Nor does a healthy `serve` log it, at the most verbose level.
    let port = free_port();
    let log = dir.path().join("serve-right.log");
    let serve = spawn(
        &right,
        &["serve", "--listen", &format!("127.0.0.1:{port}")],
        &log,
    );
    wait_for("serve to be ready", Duration::from_secs(60), || {
        get(port, "/readyz").is_some_and(|(status, _)| status == 200)
    });
    let text = finish(serve, &log, Duration::ZERO);
    assert!(text.contains("connected to PostgreSQL"), "{text}");
    assert_no_password("a healthy serve's log", &text);

    let wrong = Deployment::new(&url(WRONG), None, dir.path());
    for args in [&["migrate"][..], &["library", "list"], &["jobs", "stats"]] {
        let (ok, text) = run(&wrong, args);
        assert!(!ok, "{args:?} with a wrong password: {text}");
        assert!(
            text.contains("password authentication failed"),
            "{args:?} says why: {text}"
        );
        assert!(
            text.contains("copytrace:***@127.0.0.1"),
            "{args:?} names the server: {text}"
        );
        assert_no_password(&format!("{args:?}"), &text);
    }
    for args in [
        vec![
            "serve".to_owned(),
            "--listen".to_owned(),
            format!("127.0.0.1:{}", free_port()),
        ],
        vec!["worker".to_owned(), "match".to_owned()],
        vec!["worker".to_owned(), "crawl".to_owned()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let log = dir.path().join(format!("{}.log", args[..2].join("-")));
        let text = finish(spawn(&wrong, &args, &log), &log, Duration::from_secs(30));
        assert!(
            text.contains("password authentication failed"),
            "{args:?} says why: {text}"
        );
        assert_no_password(&format!("{args:?}"), &text);
    }
}

#[test]
fn a_wrong_redis_password_is_never_printed() {
    let redis = PrivateRedis::start_with_password(RIGHT);
    let database = Database::on_shared_server();
    let dir = tempfile::tempdir().unwrap();
    let right = Deployment::new(&database.url, Some(&redis.url), dir.path());
    right.ok(&["migrate"]);
    // The server does check passwords: the right one builds the index.
    let (ok, text) = run(&right, &["index", "rebuild"]);
    assert!(ok, "the right password gets in: {text}");
    assert_no_password("index rebuild", &text);

    let wrong_url = redis.url.replace(RIGHT, WRONG);
    assert!(wrong_url.contains(WRONG));
    let wrong = Deployment::new(&database.url, Some(&wrong_url), dir.path());
    let refused = |text: &str| {
        let lower = text.to_lowercase();
        lower.contains("authentication failed") || lower.contains("wrongpass")
    };
    for args in [&["index", "rebuild"][..], &["match"], &["config"]] {
        let (ok, text) = run(&wrong, args);
        if args != ["config"] {
            assert!(!ok, "{args:?} with a wrong password: {text}");
            assert!(refused(&text), "{args:?} says why: {text}");
            assert!(text.contains(":***@127.0.0.1"), "{args:?}: {text}");
        }
        assert_no_password(&format!("{args:?}"), &text);
    }
    // `serve` runs; its readiness answer says Redis is refused, without the password.
    let port = free_port();
    let log = dir.path().join("serve.log");
    let serve = spawn(
        &wrong,
        &["serve", "--listen", &format!("127.0.0.1:{port}")],
        &log,
    );
    let mut ready = None;
    wait_for("serve to answer", Duration::from_secs(60), || {
        ready = get(port, "/readyz");
        ready.is_some()
    });
    let (status, body) = ready.unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(refused(&body), "readiness says why: {body}");
    assert_no_password("/readyz", &body);
    let text = finish(serve, &log, Duration::ZERO);
    assert_no_password("serve's log", &text);
    let log = dir.path().join("worker.log");
    let text = finish(
        spawn(&wrong, &["worker", "match"], &log),
        &log,
        Duration::from_secs(30),
    );
    assert!(refused(&text), "the worker says why: {text}");
    assert_no_password("worker match's log", &text);
}
