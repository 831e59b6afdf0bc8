//! `schedule`, `runs` and `dedup`: schedules are validated before anything is stored, every
//! crawl and dedup run is recorded with its counts, a new work is found in pages crawled
//! before it without crawling again, and removal checks tell online, gone and soft-removed
//! copies apart, keeping the evidence.

use std::collections::{BTreeMap, BTreeSet};

use copytrace::demo::SampleSite;

use crate::helpers::{TestSite, Workspace, html_page, library_text, write_sample_library};

fn json(workspace: &Workspace, args: &[&str]) -> serde_json::Value {
    let run = workspace.ok(args);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", run.stdout))
}

#[test]
fn a_bad_cron_field_is_named_and_nothing_is_stored() {
    let workspace = Workspace::new();
    workspace.ok(&["migrate"]);
    let seed = "https://pirate.example/";
    let bad = workspace.run(&[
        "schedule",
        "add",
        "--name",
        "x",
        "--cron",
        "61 * * * *",
        seed,
    ]);
    assert_eq!(bad.code, Some(1), "{}", bad.stderr);
    let message = bad.one_line_error();
    assert!(
        message.contains("minute") && message.contains("61") && message.contains("0-59"),
        "{message}"
    );
    for (cron, field) in [
        ("0 25 * * *", "hour"),
        ("0 3 * * 9", "day-of-week"),
        ("0 3 32 * *", "day-of-month"),
        ("0 3 * 0 *", "month"),
        ("61 0 3 * * *", "second"),
    ] {
        let bad = workspace.run(&["schedule", "add", "--name", "x", "--cron", cron, seed]);
        assert!(
            bad.one_line_error().contains(field),
            "{cron}: {}",
            bad.stderr
        );
    }
    let zone = workspace.run(&[
        "schedule",
        "add",
        "--name",
        "x",
        "--cron",
        "0 3 * * *",
        "--tz",
        "Asia/Shanghia",
        seed,
    ]);
    assert!(
        zone.one_line_error().contains("Asia/Shanghia"),
        "{}",
        zone.stderr
    );
    let url = workspace.run(&[
        "schedule",
        "add",
        "--name",
        "x",
        "--cron",
        "0 3 * * *",
        "ftp://x/",
    ]);
    assert!(url.one_line_error().contains("ftp://x/"), "{}", url.stderr);
    assert_eq!(
        json(&workspace, &["schedule", "list", "--json"]),
        serde_json::json!([])
    );
}

#[test]
fn a_seed_at_a_private_address_is_refused_unless_allowed() {
    let workspace = Workspace::new();
    for seed in [
        "http://localhost:8080/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://10.1.2.3/",
    ] {
        for args in [
            &[
                "schedule",
                "add",
                "--name",
                "intranet",
                "--cron",
                "0 3 * * *",
                seed,
            ][..],
            &["crawl", "--queue", seed],
        ] {
            let refused = workspace.run(args);
            assert_eq!(refused.code, Some(1), "{args:?}: {}", refused.stderr);
            let message = refused.one_line_error();
            assert!(
                message.contains("refused private address")
                    && message.contains("--allow-private-addresses"),
                "{args:?}: {message}"
            );
        }
    }
    assert_eq!(
        json(&workspace, &["schedule", "list", "--json"]),
        serde_json::json!([])
    );
    assert_eq!(
        json(&workspace, &["runs", "list", "--json"]),
        serde_json::json!([]),
        "no crawl was queued"
    );
    // Allowed explicitly, it is taken.
    let added = json(
        &workspace,
        &[
            "schedule",
            "add",
            "--name",
            "intranet",
            "--cron",
            "0 3 * * *",
            "--allow-private-addresses",
            "--json",
            "http://localhost:8080/",
        ],
    );
    assert_eq!(added["config"]["allow_private_addresses"], true);
}

#[test]
fn schedules_are_added_listed_shown_paused_resumed_run_and_removed() {
    let workspace = Workspace::new();
    let added = json(
        &workspace,
        &[
            "schedule",
            "add",
            "--name",
            "nightly",
            "--cron",
            "0 3 * * *",
            "--tz",
            "Asia/Shanghai",
            "--max-pages",
            "500",
            "--depth",
            "3",
            "--exclude",
            "/forum/",
            "--owner",
            "ops",
            "--json",
            "https://pirate.example/书/",
        ],
    );
    assert_eq!(added["name"], "nightly");
    assert_eq!(added["kind"], "crawl");
    assert_eq!(added["enabled"], true);
    assert_eq!(
        added["seeds"],
        serde_json::json!(["https://pirate.example/%E4%B9%A6/"])
    );
    assert_eq!(added["config"]["max_pages"], 500);
    assert_eq!(added["config"]["depth"], 3);
    assert_eq!(added["config"]["exclude"], serde_json::json!(["/forum/"]));
    assert!(added["config"].get("seeds").is_none());
    let again = workspace.run(&[
        "schedule",
        "add",
        "--name",
        "nightly",
        "--cron",
        "0 4 * * *",
        "https://x.example/",
    ]);
    assert!(
        again.one_line_error().contains("already exists"),
        "{}",
        again.stderr
    );

    let shown = json(&workspace, &["schedule", "show", "nightly", "--json"]);
    let next: Vec<String> = serde_json::from_value(shown["next"].clone()).unwrap();
    assert_eq!(next.len(), 5);
    for tick in &next {
        // 03:00 in Shanghai is 19:00 UTC.
        assert!(tick.contains("T19:00:00"), "{tick}");
    }
    let text = workspace.ok(&["schedule", "show", "nightly"]).stdout;
    assert!(text.contains("03:00 CST"), "{text}");

    workspace.ok(&["schedule", "pause", "nightly"]);
    let listed = json(&workspace, &["schedule", "list", "--json"]);
    assert_eq!(listed[0]["enabled"], false);
    assert!(
        workspace
            .ok(&["schedule", "list"])
            .stdout
            .contains("paused")
    );
    workspace.ok(&["schedule", "resume", "nightly"]);
    assert_eq!(
        json(&workspace, &["schedule", "list", "--json"])[0]["enabled"],
        true
    );

    let started = workspace.ok(&["schedule", "run-now", "nightly"]).stdout;
    assert!(started.contains("run 1 enqueued as job"), "{started}");
    let runs = json(&workspace, &["runs", "list", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["trigger"], "manual");
    assert_eq!(runs[0]["state"], "queued");
    assert_eq!(runs[0]["schedule_name"], "nightly");
    let job = &json(&workspace, &["jobs", "list", "--json"])[0];
    assert_eq!(job["kind"], "crawl");
    assert_eq!(job["payload"]["max_pages"], 500);
    assert_eq!(
        job["payload"]["seeds"],
        serde_json::json!(["https://pirate.example/%E4%B9%A6/"])
    );
    let cancelled = workspace.ok(&["runs", "cancel", "1"]).stdout;
    assert!(cancelled.contains("run 1 cancelled"), "{cancelled}");
    let again = workspace.run(&["runs", "cancel", "1"]);
    assert!(
        again.one_line_error().contains("cancelled"),
        "{}",
        again.stderr
    );

    workspace.ok(&["schedule", "rm", "nightly"]);
    assert_eq!(
        json(&workspace, &["schedule", "list", "--json"]),
        serde_json::json!([])
    );
    let missing = workspace.run(&["schedule", "pause", "nightly"]);
    assert!(
        missing.one_line_error().contains("nightly"),
        "{}",
        missing.stderr
    );
    // The run outlives its schedule.
    let runs = json(&workspace, &["runs", "list", "--json"]);
    assert_eq!(runs[0]["state"], "cancelled");
    assert!(runs[0]["schedule_name"].is_null());
}

#[test]
fn a_crawl_is_recorded_as_a_run_with_its_statistics() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let crawled = workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    let fetched: u64 = crawled
        .stdout
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", crawled.stdout));
    let runs = json(&workspace, &["runs", "list", "--kind", "crawl", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 1);
    let run = &runs[0];
    assert_eq!(run["state"], "succeeded");
    assert_eq!(run["trigger"], "manual");
    assert_eq!(run["counts"]["pages_checked"], fetched);
    assert!(run["stats"]["requests"].as_u64().unwrap() >= fetched);
    assert!(run["stats"]["bytes"].as_u64().unwrap() > 0);
    assert!(run["started_at"].is_string() && run["finished_at"].is_string());
    let shown = workspace
        .ok(&["runs", "show", &run["id"].to_string()])
        .stdout;
    assert!(shown.contains("\"requests\""), "{shown}");
}

/// A site with one page copying `jianghu-ch1` and one copying `xingchen-ch1`.
fn two_work_site() -> SampleSite {
    let page = |path: &str, id: &str| {
        let body: String = library_text(id)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("<p>{l}</p>"))
            .collect();
        html_page(path, &body)
    };
    SampleSite {
        pages: vec![
            page("/book/jianghu.html", "jianghu-ch1"),
            page("/book/xingchen.html", "xingchen-ch1"),
            html_page(
                "/about.html",
                "<p>本站所有小说均来自网络，仅供交流学习。</p>",
            ),
        ],
    }
}

fn pairs(workspace: &Workspace) -> BTreeSet<(String, String)> {
    workspace.export_csv().pairs().into_iter().collect()
}

#[test]
fn a_work_added_after_the_crawl_is_found_by_the_next_dedup_run_without_crawling_again() {
    let workspace = Workspace::new();
    let site = TestSite::serve(two_work_site());
    workspace.write("first/jianghu-ch1.txt", library_text("jianghu-ch1"));
    workspace.ok(&["library", "add", workspace.path("first").to_str().unwrap()]);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    let jianghu = (site.url("/book/jianghu.html"), "jianghu-ch1".to_owned());
    assert_eq!(pairs(&workspace), BTreeSet::from([jianghu.clone()]));
    let crawled = site.requests().len();

    // The new work arrives; the daily run (here run by hand) finds its copy among the pages
    // already stored.
    workspace.write("second/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.ok(&["library", "add", workspace.path("second").to_str().unwrap()]);
    let run = json(
        &workspace,
        &[
            "dedup",
            "--recheck-allow-private-addresses",
            "--recheck-delay",
            "0",
            "--json",
        ],
    );
    assert_eq!(run["state"], "succeeded", "{run}");
    assert_eq!(run["kind"], "dedup");
    assert_eq!(run["counts"]["new_matches"], 1, "{run}");
    assert_eq!(run["counts"]["matches_removed"], 0, "{run}");
    let xingchen = (site.url("/book/xingchen.html"), "xingchen-ch1".to_owned());
    assert_eq!(pairs(&workspace), BTreeSet::from([jianghu, xingchen]));
    // Only the known infringing page was fetched again (its removal check); nothing was
    // crawled.
    let since: Vec<String> = site.requests()[crawled..].to_vec();
    let pages: Vec<&String> = since.iter().filter(|p| *p != "/robots.txt").collect();
    assert_eq!(pages, ["/book/jianghu.html"], "{since:?}");

    // Running it again changes nothing.
    let again = json(&workspace, &["dedup", "--no-recheck", "--json"]);
    assert_eq!(again["counts"]["new_matches"], 0, "{again}");
    assert_eq!(again["counts"]["pages_checked"], 0, "{again}");
    assert_eq!(workspace.export_csv().rows.len(), 2);
    let full = json(&workspace, &["dedup", "--no-recheck", "--full", "--json"]);
    // The three pages and the site's index page.
    assert_eq!(full["counts"]["pages_checked"], 4, "{full}");
    assert_eq!(full["counts"]["new_matches"], 0, "{full}");
    assert_eq!(workspace.export_csv().rows.len(), 2);
    let runs = json(&workspace, &["runs", "list", "--kind", "dedup", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 3);
}

/// `page_url → (status, removed_at)` of every exported match.
fn statuses(workspace: &Workspace) -> BTreeMap<String, (String, String)> {
    let export = workspace.export_csv();
    let (url, status, removed) = (
        export.column("page_url"),
        export.column("status"),
        export.column("removed_at"),
    );
    export
        .rows
        .iter()
        .map(|r| {
            (
                r[url].to_owned(),
                (r[status].to_owned(), r[removed].to_owned()),
            )
        })
        .collect()
}

#[test]
fn removal_checks_tell_online_gone_and_soft_removed_copies_apart_and_keep_the_evidence() {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().unwrap()]);
    let original = two_work_site();
    let site = TestSite::serve(original.clone());
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    let (jianghu, xingchen) = (
        site.url("/book/jianghu.html"),
        site.url("/book/xingchen.html"),
    );
    let before = workspace.export_json();
    assert_eq!(before.len(), 2);
    let addr = site.addr();
    drop(site);

    // The site comes back: one copy deleted (404), the other page emptied of its copy.
    let mut changed = original.clone();
    changed.pages.retain(|p| p.path != "/book/jianghu.html");
    for page in &mut changed.pages {
        if page.path == "/book/xingchen.html" {
            *page = html_page(&page.path, "<p>应版权方要求，本章节已删除。</p>");
        }
    }
    let site = TestSite::serve_at(changed, addr);
    let dedup = [
        "dedup",
        "--recheck-allow-private-addresses",
        "--recheck-delay",
        "0",
        "--json",
    ];
    let run = json(&workspace, &dedup);
    assert_eq!(run["counts"]["matches_removed"], 2, "{run}");
    assert_eq!(run["counts"]["errors"], 0, "{run}");
    let now = statuses(&workspace);
    assert_eq!(now[&jianghu].0, "removed");
    assert_eq!(now[&xingchen].0, "removed");
    assert!(
        now[&jianghu].1.ends_with('Z') && now[&xingchen].1.ends_with('Z'),
        "{now:?}"
    );
    // The evidence is the proof of what was copied: untouched.
    let after = workspace.export_json();
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old["evidence"], new["evidence"]);
        assert_eq!(old["first_seen"], new["first_seen"]);
    }
    drop(site);

    // Unreachable: no verdict, nothing changes.
    let run = json(&workspace, &dedup);
    assert_eq!(run["counts"]["errors"], 2, "{run}");
    assert_eq!(run["counts"]["matches_removed"], 0, "{run}");
    assert_eq!(statuses(&workspace), now);

    // The copies come back: the matches reopen.
    let site = TestSite::serve_at(original, addr);
    let run = json(&workspace, &dedup);
    assert_eq!(run["counts"]["matches_removed"], 0, "{run}");
    let back = statuses(&workspace);
    assert_eq!(back[&jianghu], ("open".to_owned(), String::new()));
    assert_eq!(back[&xingchen], ("open".to_owned(), String::new()));
    let fetched: Vec<String> = site.page_requests();
    assert_eq!(
        fetched.len(),
        2,
        "one request per known infringing page: {fetched:?}"
    );
}
