//! Running the `copytrace` binary: one-shot commands and long-running worker processes, plus
//! what the tests read back from the database to check the outcome.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection};

use crate::services::wait_for;

/// Where a deployment's processes find their database and index.
#[derive(Clone)]
pub struct Deployment {
    pub db: String,
    pub redis: Option<String>,
    pub prefix: String,
    pub dir: std::path::PathBuf,
    /// A program every command runs under (`nsenter …` to run inside a mount namespace).
    pub wrapper: Vec<String>,
}

impl Deployment {
    pub fn new(db: &str, redis: Option<&str>, dir: &std::path::Path) -> Deployment {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        Deployment {
            db: db.to_owned(),
            redis: redis.map(str::to_owned),
            prefix: format!(
                "ct-prod-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            dir: dir.to_owned(),
            wrapper: Vec::new(),
        }
    }

    /// A `copytrace` command for this deployment, configured through the environment as a
    /// container would be.
    pub fn command(&self, args: &[&str]) -> Command {
        let binary = env!("CARGO_BIN_EXE_copytrace");
        let mut command = match self.wrapper.split_first() {
            None => Command::new(binary),
            Some((program, wrapper_args)) => {
                let mut command = Command::new(program);
                command.args(wrapper_args).arg(binary);
                command
            }
        };
        command
            .args(args)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("COPYTRACE_DATABASE_URL", &self.db)
            .env("COPYTRACE_REDIS_PREFIX", &self.prefix)
            .env("COPYTRACE_LOG", "info")
            .env("NO_COLOR", "1");
        if let Some(redis) = &self.redis {
            command.env("COPYTRACE_REDIS_URL", redis);
        }
        command
    }

    /// Runs a command to completion and returns its stdout; panics with its output on failure.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self
            .command(args)
            .stdin(Stdio::null())
            .output()
            .expect("copytrace runs");
        assert!(
            output.status.success(),
            "copytrace {args:?} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// Starts a long-running process (`worker crawl`, `worker match`, `serve`).
    pub fn spawn(&self, args: &[&str]) -> Process {
        let log = tempfile::NamedTempFile::new_in(&self.dir).expect("a log file");
        let child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log.reopen().expect("reopen the log"))
            .spawn()
            .expect("copytrace starts");
        Process {
            child,
            log,
            name: args.join(" "),
        }
    }

    /// Registers the sample library and, with Redis, builds the index.
    pub fn add_library(&self, library_dir: &std::path::Path) {
        let dir = library_dir.to_str().expect("UTF-8 path");
        self.ok(&["library", "add", dir]);
        if self.redis.is_some() {
            self.ok(&["index", "rebuild"]);
        }
    }

    /// `(kind, state) → count` of the queue.
    pub fn job_counts(&self) -> BTreeMap<(String, String), u64> {
        let stats: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["jobs", "stats", "--json"])).expect("JSON stats");
        stats
            .iter()
            .map(|c| {
                (
                    (
                        c["kind"].as_str().unwrap().to_owned(),
                        c["state"].as_str().unwrap().to_owned(),
                    ),
                    c["count"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// Waits until every crawl job is done and no match job is queued or running.
    pub fn wait_until_idle(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let counts = self.job_counts();
            let pending = |kind: &str| {
                ["queued", "running"]
                    .iter()
                    .map(|state| {
                        counts
                            .get(&(kind.to_owned(), (*state).to_owned()))
                            .copied()
                            .unwrap_or(0)
                    })
                    .sum::<u64>()
            };
            let crawled = counts
                .get(&("crawl".into(), "done".into()))
                .copied()
                .unwrap_or(0)
                > 0;
            if crawled && pending("crawl") == 0 && pending("match") == 0 {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "the queue did not drain within {limit:?}: {counts:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Every match job: `(page id, state, attempts)`.
    pub fn match_jobs(&self) -> Vec<(i64, String, u64)> {
        let jobs: Vec<serde_json::Value> = serde_json::from_str(&self.ok(&[
            "jobs", "list", "--kind", "match", "--limit", "1000000", "--json",
        ]))
        .expect("JSON jobs");
        jobs.iter()
            .map(|j| {
                (
                    j["payload"]["page_id"].as_i64().unwrap(),
                    j["state"].as_str().unwrap().to_owned(),
                    j["attempts"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// Exported matches as `(page URL, work id)`, with duplicates kept (as a list).
    pub fn exported_pairs(&self) -> Vec<(String, String)> {
        let matches: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["export", "matches", "--format", "json"]))
                .expect("JSON export");
        matches
            .iter()
            .map(|m| {
                (
                    m["page_url"].as_str().unwrap().to_owned(),
                    m["work_external_id"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// Exported matches without what depends on timing (ids, clock, order).
    pub fn comparable_export(&self) -> Vec<serde_json::Value> {
        let mut matches: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["export", "matches", "--format", "json"]))
                .expect("JSON export");
        for record in &mut matches {
            let record = record.as_object_mut().expect("a match is an object");
            for key in ["first_seen", "last_seen", "id", "page_id"] {
                assert!(record.remove(key).is_some(), "{key} is exported");
            }
        }
        // Exports follow page ids, which follow the order concurrent fetches finished in.
        matches.sort_by_key(|record| {
            (
                record["page_url"].to_string(),
                record["work_external_id"].to_string(),
            )
        });
        matches
    }

    /// `(pages, distinct URLs, pages not matched on their current text)` read from PostgreSQL.
    pub fn page_counts(&self) -> (i64, i64, i64) {
        runtime().block_on(async {
            let mut connection = PgConnection::connect(&self.db).await.expect("connect");
            let counts = sqlx::query_as(
                "SELECT count(*), count(DISTINCT url), \
                   count(*) FILTER (WHERE matched_hash IS DISTINCT FROM content_hash) FROM pages",
            )
            .fetch_one(&mut connection)
            .await
            .expect("count pages");
            let _ = connection.close().await;
            counts
        })
    }

    /// Pages stored so far.
    pub fn pages_stored(&self) -> i64 {
        self.page_counts().0
    }

    /// Pages stored so far, or 0 while the database cannot be reached (being restarted).
    pub fn pages_stored_or_zero(&self) -> i64 {
        runtime().block_on(async {
            let Ok(mut connection) = PgConnection::connect(&self.db).await else {
                return 0;
            };
            let count = sqlx::query_scalar("SELECT count(*) FROM pages")
                .fetch_one(&mut connection)
                .await
                .unwrap_or(0);
            let _ = connection.close().await;
            count
        })
    }

    /// Evidence rows that break their match's sequence (`ordinal` not 0, 1, 2… without gaps),
    /// and matches without evidence.
    pub fn broken_evidence(&self) -> (i64, i64) {
        runtime().block_on(async {
            let mut connection = PgConnection::connect(&self.db).await.expect("connect");
            let counts = sqlx::query_as(
                "SELECT \
                   (SELECT count(*) FROM (SELECT match_id FROM evidence GROUP BY match_id \
                      HAVING min(ordinal) <> 0 OR max(ordinal) <> count(*) - 1) gaps), \
                   (SELECT count(*) FROM matches m \
                      WHERE NOT EXISTS (SELECT 1 FROM evidence e WHERE e.match_id = m.id))",
            )
            .fetch_one(&mut connection)
            .await
            .expect("check evidence");
            let _ = connection.close().await;
            counts
        })
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// How many times each page was really matched (verdict recorded), from the match workers'
/// logs: a job that finds its page already matched on this text logs that instead.
fn matched_pages(match_worker_logs: &[String]) -> BTreeMap<i64, usize> {
    let mut matched = BTreeMap::new();
    for line in match_worker_logs.iter().flat_map(|log| log.lines()) {
        if !line.ends_with("match(es)") {
            continue;
        }
        let Some(rest) = line.split(" page ").nth(1) else {
            continue;
        };
        let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
        *matched
            .entry(id.parse::<i64>().expect("a page id"))
            .or_default() += 1;
    }
    matched
}

/// Checks that every page of `site` was stored once and matched exactly once (one recorded
/// verdict, by whichever worker), every match job ended done, and the exported matches are
/// exactly the expected ones: no duplicate rows, none missing.
pub fn assert_each_page_stored_and_matched_once(
    deployment: &Deployment,
    expected_pages: usize,
    expected: &BTreeSet<(String, String)>,
    match_worker_logs: &[String],
) {
    let matched = assert_stored_once_and_matched(deployment, expected_pages, expected);
    // A second job for a page can only come from a sweep that saw the page due just before its
    // first job recorded the verdict; it finds the page matched and does nothing.
    let logged = matched_pages(match_worker_logs);
    assert_eq!(logged.len(), matched, "every page's verdict was recorded");
    assert!(
        logged.values().all(|&n| n == 1),
        "a page was matched twice: {:?}",
        logged.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
}

/// [`assert_each_page_stored_and_matched_once`] for runs whose processes were killed: a
/// killed worker may have recorded a verdict without living to log it, so that every verdict
/// was recorded is read from the database (each page matched on its current text), and the
/// logs of every process, killed ones included, show none recorded twice.
pub fn assert_each_page_stored_and_matched_once_by_db(
    deployment: &Deployment,
    expected_pages: usize,
    expected: &BTreeSet<(String, String)>,
    logs: &[String],
) {
    assert_stored_once_and_matched(deployment, expected_pages, expected);
    let logged = matched_pages(logs);
    assert!(
        logged.values().all(|&n| n == 1),
        "a page was matched twice: {:?}",
        logged.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
    assert_eq!(
        deployment.broken_evidence(),
        (0, 0),
        "(matches whose evidence rows have gaps or repeats, matches without evidence)"
    );
}

/// The checks both share; returns the number of pages.
fn assert_stored_once_and_matched(
    deployment: &Deployment,
    expected_pages: usize,
    expected: &BTreeSet<(String, String)>,
) -> usize {
    let (pages, urls, unmatched) = deployment.page_counts();
    assert_eq!(pages, expected_pages as i64, "every page stored");
    assert_eq!(urls, pages, "no page stored twice");
    assert_eq!(unmatched, 0, "every page matched on its current text");

    let jobs = deployment.match_jobs();
    let mut per_page: BTreeMap<i64, usize> = BTreeMap::new();
    for (page, state, _) in &jobs {
        assert_eq!(state, "done", "match job of page {page}");
        *per_page.entry(*page).or_default() += 1;
    }
    assert_eq!(per_page.len(), expected_pages, "every page had a match job");

    let pairs = deployment.exported_pairs();
    let distinct: BTreeSet<_> = pairs.iter().cloned().collect();
    assert_eq!(distinct.len(), pairs.len(), "no duplicate match rows");
    assert_eq!(
        &distinct, expected,
        "exactly the pirated chapters are reported"
    );
    expected_pages
}

/// A long-running `copytrace` process; killed if the test ends without stopping it.
pub struct Process {
    child: Child,
    log: tempfile::NamedTempFile,
    pub name: String,
}

impl Process {
    /// The process's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for it to exit on its own.
    pub fn wait_for_exit(&mut self, limit: Duration) -> ExitStatus {
        let mut exit = None;
        wait_for(&format!("{} to finish", self.name), limit, || {
            exit = self.child.try_wait().expect("try_wait");
            exit.is_some()
        });
        exit.expect("exited")
    }

    /// `kill -9`: no chance to release its job.
    pub fn kill_hard(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }

    /// SIGTERM, then waits for a clean exit.
    pub fn terminate(&mut self, limit: Duration) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let mut exit = None;
        wait_for(&format!("{} to stop", self.name), limit, || {
            exit = self.child.try_wait().expect("try_wait");
            exit.is_some()
        });
        exit.expect("exited")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
