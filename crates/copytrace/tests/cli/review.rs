//! `copytrace review`: the certainty gate, the review queue, and decisions that survive
//! `dedup --full` and re-crawls, through the binary.

use crate::helpers::{TestSite, Workspace, add_crawl_match, crawl_and_match};

/// `(id, review)` of the exported match of the page at `path`, if exported.
fn exported(
    workspace: &Workspace,
    site: &TestSite,
    path: &str,
    extra: &[&str],
) -> Option<(i64, String)> {
    let mut args = vec!["export", "matches", "--format", "json"];
    args.extend_from_slice(extra);
    let run = workspace.ok(&args);
    let records: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).expect("JSON export");
    records
        .iter()
        .find(|r| r["page_url"] == site.url(path))
        .map(|r| {
            (
                r["id"].as_i64().expect("id"),
                r["review"].as_str().expect("review").to_owned(),
            )
        })
}

#[test]
fn the_gate_queues_an_excerpt_and_a_rejection_survives_dedup_full_and_a_recrawl() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);

    // Whole copies pass the gate; the excerpt inside unrelated text waits for a person.
    let (_, chapter) = exported(&workspace, &site, "/book/xingchen/1.html", &[]).unwrap();
    assert_eq!(chapter, "confirmed");
    let (excerpt_id, excerpt) = exported(&workspace, &site, "/forum/thread-88.html", &[]).unwrap();
    assert_eq!(excerpt, "pending", "reported, but waiting for review");
    let queue = workspace.ok(&["review", "list", "--json"]);
    let queue: Vec<serde_json::Value> = serde_json::from_str(&queue.stdout).unwrap();
    assert_eq!(
        queue
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [excerpt_id],
        "the queue holds the pending match only"
    );
    let csv = workspace.export_csv();
    assert_eq!(
        csv.header.iter().rev().nth(1).map(String::as_str),
        Some("review")
    );
    assert_eq!(csv.header.last().map(String::as_str), Some("aliases"));

    // A person rejects it: it leaves the reported infringements, and the queue.
    let rejected = workspace.ok(&[
        "review",
        "reject",
        &excerpt_id.to_string(),
        "--note",
        "a forum post quoting the first chapter",
        "--by",
        "editor@example.com",
    ]);
    assert!(
        rejected.stdout.contains("now rejected"),
        "{}",
        rejected.stdout
    );
    assert_eq!(
        exported(&workspace, &site, "/forum/thread-88.html", &[]),
        None
    );
    assert_eq!(
        exported(
            &workspace,
            &site,
            "/forum/thread-88.html",
            &["--review", "rejected"]
        ),
        Some((excerpt_id, "rejected".to_owned()))
    );
    let queue = workspace.ok(&["review", "list", "--json"]);
    assert_eq!(queue.stdout.trim(), "[]");

    // dedup --full matches every page again: the decision stands.
    workspace.ok(&["dedup", "--no-recheck", "--full"]);
    let after_dedup = exported(
        &workspace,
        &site,
        "/forum/thread-88.html",
        &["--review", "all"],
    );
    assert_eq!(
        after_dedup.map(|(_, review)| review).as_deref(),
        Some("rejected")
    );
    // A re-crawl of the unchanged page, and matching, change nothing either.
    crawl_and_match(&workspace, &site);
    workspace.ok(&["match", "--all"]);
    let after_recrawl = exported(
        &workspace,
        &site,
        "/forum/thread-88.html",
        &["--review", "all"],
    );
    assert_eq!(
        after_recrawl.map(|(_, review)| review).as_deref(),
        Some("rejected")
    );
    assert_eq!(
        exported(&workspace, &site, "/forum/thread-88.html", &[]),
        None
    );

    // Who, when and why are kept.
    let (id_now, _) = exported(
        &workspace,
        &site,
        "/forum/thread-88.html",
        &["--review", "rejected"],
    )
    .unwrap();
    let history = workspace.ok(&["review", "history", &id_now.to_string(), "--json"]);
    let history: Vec<serde_json::Value> = serde_json::from_str(&history.stdout).unwrap();
    let people: Vec<_> = history
        .iter()
        .filter(|d| d["automatic"] == false)
        .map(|d| {
            (
                d["review"].as_str().unwrap(),
                d["actor"].as_str().unwrap(),
                d["note"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        people,
        [(
            "rejected",
            "editor@example.com",
            "a forum post quoting the first chapter"
        )]
    );
    assert!(history.iter().all(|d| d["decided_at"].is_string()));

    // Confirming it by hand brings it back, confirmed.
    workspace.ok(&["review", "confirm", &id_now.to_string()]);
    assert_eq!(
        exported(&workspace, &site, "/forum/thread-88.html", &[])
            .map(|(_, r)| r)
            .as_deref(),
        Some("confirmed")
    );
}

#[test]
fn deciding_on_an_unknown_match_fails_and_changes_nothing() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let before = workspace.export_csv().pairs();
    let run = workspace.run(&["review", "reject", "999999"]);
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("match 999999"), "{}", run.stderr);
    assert_eq!(workspace.export_csv().pairs(), before);
}

#[test]
fn an_auto_confirm_level_above_one_sends_every_match_to_review() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = crate::helpers::write_sample_library(&workspace);
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match", "--auto-confirm-score", "1.5"]);
    let queue = workspace.ok(&["review", "list", "--json"]);
    let queue: Vec<serde_json::Value> = serde_json::from_str(&queue.stdout).unwrap();
    assert_eq!(queue.len(), site.expected_matches().len());
    let confirmed = workspace.ok(&[
        "export",
        "matches",
        "--format",
        "json",
        "--review",
        "confirmed",
    ]);
    assert_eq!(confirmed.stdout.trim(), "[]");
    let refused = workspace.run(&["match", "--auto-confirm-score=-1"]);
    assert_ne!(refused.code, Some(0));
    assert!(
        refused.stderr.contains("auto-confirm"),
        "{}",
        refused.stderr
    );
}

/// The login name of the user running the tests, as `id -un` reads it from the system's user
/// database, or `uid:N` when the database has no name for the user id.
fn login_of_this_user() -> String {
    let id = |flag: &str| {
        std::process::Command::new("id")
            .arg(flag)
            .output()
            .expect("id runs")
    };
    let name = id("-un");
    if name.status.success() {
        String::from_utf8(name.stdout).unwrap().trim().to_owned()
    } else {
        let uid = id("-u");
        format!("uid:{}", String::from_utf8(uid.stdout).unwrap().trim())
    }
}

/// Cron jobs and containers often set neither USER nor LOGNAME: a decision taken there still
/// names who took it.
#[test]
fn a_decision_without_user_or_logname_names_the_user_running_the_command() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let (id, _) = exported(&workspace, &site, "/forum/thread-88.html", &[]).unwrap();
    let mut command = workspace.bare();
    command.env_remove("USER").env_remove("LOGNAME").args([
        "--db",
        &workspace.db,
        "review",
        "reject",
        &id.to_string(),
    ]);
    let decided = crate::helpers::run_command(&mut command).success();
    let login = login_of_this_user();
    assert!(
        decided.stdout.contains(&format!("(by cli:{login})")),
        "{}",
        decided.stdout
    );
    let history = workspace.ok(&["review", "history", &id.to_string(), "--json"]);
    let history: Vec<serde_json::Value> = serde_json::from_str(&history.stdout).unwrap();
    let actors: Vec<&str> = history
        .iter()
        .filter(|d| d["automatic"] == false)
        .map(|d| d["actor"].as_str().unwrap())
        .collect();
    assert_eq!(actors, [format!("cli:{login}")]);
    assert_ne!(actors, ["cli:unknown"]);
}
