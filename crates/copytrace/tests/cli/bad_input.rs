//! Bad input: a one-line `error:` on stderr, a non-zero exit, and nothing half-written.

use std::collections::BTreeSet;
use std::path::Path;

use crate::helpers::{
    PNG, TestSite, Workspace, closed_port, library_text, permissions_are_bypassed,
};

/// File names directly inside a directory.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("readable directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// Whether the workspace's library holds no work: it has no database yet (a refused first
/// `library add` creates none, and listing would refuse it), or one without works.
fn holds_no_work(workspace: &Workspace) -> bool {
    !workspace.db_file().exists() || workspace.works().is_empty()
}

#[test]
fn a_missing_library_file_is_a_one_line_error() {
    let workspace = Workspace::new();
    let good = workspace.write("good.txt", library_text("xingchen-ch1"));
    let missing = workspace.path("no-such-work.txt");
    let run = workspace.run(&[
        "library".as_ref(),
        "add".as_ref(),
        good.as_os_str(),
        missing.as_os_str(),
    ]);

    let error = run.one_line_error();
    assert!(error.contains("no-such-work.txt"), "{error}");
    assert!(!workspace.db_file().exists(), "nothing was written");
    assert!(holds_no_work(&workspace));
}

#[test]
fn an_unreadable_library_file_is_a_one_line_error() {
    use std::os::unix::fs::PermissionsExt;

    let workspace = Workspace::new();
    workspace.write("library/good.txt", library_text("xingchen-ch1"));

    // A `.txt` entry of the walked directory that is a dangling symlink cannot be read by
    // anyone, root included.
    std::os::unix::fs::symlink(
        workspace.path("gone.txt"),
        workspace.path("library/dangling.txt"),
    )
    .expect("create a symlink");
    let library = workspace.path("library");
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let error = run.one_line_error();
    assert!(error.contains("dangling.txt"), "{error}");
    assert!(
        holds_no_work(&workspace),
        "the good file was not added either"
    );

    // A file without read permission: only meaningful when permissions are enforced, which
    // they are not for root (CAP_DAC_OVERRIDE), so that sub-case is skipped there.
    let locked = workspace.write("locked.txt", library_text("xingchen-ch2"));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod 000");
    if permissions_are_bypassed(&locked) {
        eprintln!("running with permission bypass (root): chmod 000 sub-case skipped");
        return;
    }
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), locked.as_os_str()]);
    let error = run.one_line_error();
    assert!(error.contains("locked.txt"), "{error}");
    assert!(
        error.to_lowercase().contains("permission denied"),
        "{error}"
    );
    assert!(holds_no_work(&workspace));
}

#[test]
fn a_binary_file_is_refused() {
    let workspace = Workspace::new();
    // Named as text, so the content, not the extension, is what gets it refused.
    let png = workspace.write("cover.txt", PNG);
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), png.as_os_str()]);

    let error = run.one_line_error();
    assert!(error.contains("cover.txt"), "{error}");
    assert!(error.contains("binary"), "{error}");
    assert!(!workspace.db_file().exists());
}

#[test]
fn one_bad_file_among_good_ones_adds_no_work() {
    let workspace = Workspace::new();
    let first = workspace.write("a/xingchen-ch1.txt", library_text("xingchen-ch1"));
    let second = workspace.write("a/xingchen-ch2.txt", library_text("xingchen-ch2"));
    let png = workspace.write("cover.png", PNG);
    let run = workspace.run(&[
        "library".as_ref(),
        "add".as_ref(),
        first.as_os_str(),
        png.as_os_str(),
        second.as_os_str(),
    ]);
    run.one_line_error();
    assert!(holds_no_work(&workspace), "no work may be added");

    // The same inside a walked directory: a `.txt` that is really a PNG spoils the batch.
    workspace.write("a/disguised.txt", PNG);
    let dir = workspace.path("a");
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), dir.as_os_str()]);
    let error = run.one_line_error();
    assert!(error.contains("disguised.txt"), "{error}");
    assert!(holds_no_work(&workspace), "no work may be added");

    // And a library that already has works keeps exactly those.
    workspace.ok(&["library".as_ref(), "add".as_ref(), first.as_os_str()]);
    let before = workspace.works();
    workspace
        .run(&["library".as_ref(), "add".as_ref(), dir.as_os_str()])
        .one_line_error();
    assert_eq!(workspace.works(), before);
}

#[test]
fn invalid_seed_urls_are_refused_before_anything_is_crawled() {
    let site = TestSite::sample();
    for bad in ["not a url", "ftp://x", "http://"] {
        let workspace = Workspace::new();
        let run = workspace.run(&["crawl", &site.base_url(), bad, "--allow-private-addresses"]);

        let error = run.one_line_error();
        assert!(error.contains(bad), "the bad URL is named: {error}");
        assert!(
            site.requests().is_empty(),
            "{bad}: requested {:?}",
            site.requests()
        );
        assert!(
            !workspace.db_file().exists(),
            "{bad}: the database was touched"
        );
    }
}

#[test]
fn an_unreachable_seed_is_reported_and_the_crawl_goes_on() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = crate::helpers::write_sample_library(&workspace);
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let dead = format!("http://127.0.0.1:{}/", closed_port());
    let run = workspace.run(&[
        "crawl",
        &dead,
        &site.base_url(),
        "--allow-private-addresses",
    ]);

    assert_eq!(run.code, Some(3), "{run:#?}");
    let failure = run
        .stderr
        .lines()
        .find(|l| l.contains(&dead))
        .unwrap_or_else(|| panic!("the dead seed is not reported: {}", run.stderr));
    assert!(failure.contains("connection failed"), "{failure}");
    assert!(run.stdout.contains("1 failed"), "{}", run.stdout);
    assert!(
        run.stderr
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("error:")),
        "{}",
        run.stderr
    );
    // The good seed's site was crawled and stored.
    let requested = site.page_requests();
    for page in site.site.pages.iter().filter(|p| !p.disallowed) {
        assert!(
            requested.contains(&page.path),
            "{} not requested",
            page.path
        );
    }
    workspace.ok(&["match"]);
    let pairs: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    assert_eq!(pairs, site.expected_matches());
}

#[test]
fn an_unreachable_seed_written_with_a_fragment_still_exits_3() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let dead = format!("http://127.0.0.1:{}/#top", closed_port());
    let run = workspace.run(&[
        "crawl",
        &dead,
        &site.base_url(),
        "--allow-private-addresses",
    ]);

    assert!(run.stdout.contains("1 failed"), "{}", run.stdout);
    assert_eq!(
        run.code,
        Some(3),
        "a failed seed means exit code 3: {run:#?}"
    );
}

#[test]
fn a_malformed_database_url_is_a_clear_error_and_creates_no_file() {
    for db in ["nonsense", "mysql://x", "sqlite://"] {
        let workspace = Workspace::new();
        let good = workspace.write("library/good.txt", library_text("xingchen-ch1"));
        let before = entries(workspace.root());
        for args in [
            vec!["library".as_ref(), "add".as_ref(), good.as_os_str()],
            vec!["library".as_ref(), "list".as_ref()],
            vec!["match".as_ref()],
            vec!["export".as_ref(), "matches".as_ref()],
        ] {
            let mut command = workspace.bare();
            command.arg("--db").arg(db).args(&args);
            let run = crate::helpers::run_command(&mut command);
            let error = run.one_line_error();
            assert!(
                error.contains("database URL"),
                "--db {db} {args:?}: {error}"
            );
            assert!(error.contains(db), "--db {db}: the URL is named: {error}");
            assert_eq!(
                entries(workspace.root()),
                before,
                "--db {db} {args:?} created a file"
            );
        }
    }
}

#[test]
fn a_database_in_a_missing_directory_is_a_clear_error() {
    let workspace = Workspace::new();
    let db = format!("sqlite://{}", workspace.path("missing/dir/t.db").display());
    let mut command = workspace.bare();
    command.args(["--db", &db, "migrate"]);
    let run = crate::helpers::run_command(&mut command);

    let error = run.one_line_error();
    assert!(error.contains("cannot open database"), "{error}");
    assert!(!workspace.path("missing").exists());
}

/// A mistyped `--db` path is an error naming it, not a new, empty database that reports
/// nothing: every command that works on what is stored refuses a file that does not exist.
#[test]
fn a_command_on_stored_data_refuses_a_database_file_that_does_not_exist() {
    let workspace = Workspace::new();
    let typo = workspace.path("tpyo.db");
    let db = format!("sqlite://{}", typo.display());
    for args in [
        &["report"][..],
        &["stats", "works"],
        &["export", "matches"],
        &["library", "list"],
        &["notice", "list"],
        &["review", "list"],
        &["review", "confirm", "1"],
        &["runs", "list"],
        &["match"],
    ] {
        let mut command = workspace.bare();
        command.arg("--db").arg(&db).args(args);
        let run = crate::helpers::run_command(&mut command);
        let error = run.one_line_error();
        assert!(
            error.contains(&format!("database file {} does not exist", typo.display())),
            "{args:?}: {error}"
        );
        assert!(
            error.contains("copytrace library add") && error.contains("copytrace migrate"),
            "{args:?} says what to do: {error}"
        );
        assert_eq!(
            entries(workspace.root()),
            BTreeSet::new(),
            "{args:?} created a file"
        );
    }
}

/// The commands that start a library, and `migrate`, still create its database.
#[test]
fn the_first_command_of_a_library_creates_its_database() {
    for first in [
        &["migrate"][..],
        &["rights-holder", "add", "Acme Books"],
        &["library", "add", "library"],
    ] {
        let workspace = Workspace::new();
        workspace.write("library/good.txt", library_text("xingchen-ch1"));
        workspace.ok(first);
        assert!(workspace.db_file().exists(), "{first:?}");
        workspace.ok(&["report"]);
    }
}

#[test]
fn exporting_into_a_missing_directory_fails_cleanly() {
    let workspace = Workspace::new();
    workspace.ok(&["migrate"]);
    let out = workspace.path("missing/matches.csv");
    for format in ["csv", "json"] {
        let run = workspace.run(&[
            "export".as_ref(),
            "matches".as_ref(),
            "--format".as_ref(),
            format.as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        let error = run.one_line_error();
        assert!(error.contains("missing"), "{error}");
        assert!(!workspace.path("missing").exists(), "nothing was created");
    }
    let names = entries(workspace.root());
    assert!(
        names.iter().all(|n| n.starts_with("t.db")),
        "no stray temporary file: {names:?}"
    );
}

#[test]
fn two_files_with_the_same_stem_are_refused_instead_of_overwriting_each_other() {
    let workspace = Workspace::new();
    workspace.write("lib/a/chapter.txt", library_text("xingchen-ch1"));
    workspace.write("lib/b/chapter.txt", library_text("xingchen-ch2"));
    let dir = workspace.path("lib");
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), dir.as_os_str()]);

    let error = run.one_line_error();
    assert!(error.contains("chapter"), "{error}");
    assert!(!workspace.db_file().exists(), "nothing may be written");
}

#[test]
fn a_directory_without_text_files_is_an_error() {
    let workspace = Workspace::new();
    workspace.write("empty/cover.png", PNG);
    let dir = workspace.path("empty");
    let run = workspace.run(&["library".as_ref(), "add".as_ref(), dir.as_os_str()]);

    let error = run.one_line_error();
    assert!(error.contains("no work files"), "{error}");
    assert!(!workspace.db_file().exists());
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_in_the_library_is_not_followed() {
    let workspace = Workspace::new();
    workspace.write("lib/xingchen-ch1.txt", library_text("xingchen-ch1"));
    std::os::unix::fs::symlink(workspace.path("lib"), workspace.path("lib/loop")).unwrap();
    let dir = workspace.path("lib");
    let run = workspace.ok(&["library".as_ref(), "add".as_ref(), dir.as_os_str()]);

    assert!(run.stdout.contains("1 work(s): 1 added"), "{}", run.stdout);
    assert_eq!(workspace.work_ids().len(), 1);
}

#[test]
fn a_worker_whose_listen_port_is_taken_fails_at_start() {
    let workspace = Workspace::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let address = taken.local_addr().expect("address").to_string();
    let run = workspace.run(&["worker", "crawl", "--exit-when-idle", "--listen", &address]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.one_line_error()
            .contains(&format!("cannot listen on {address}")),
        "{run:#?}"
    );
}
