//! Where the database comes from, and `--help` everywhere.

use crate::helpers::{Workspace, copytrace, library_text, run_command};

#[test]
fn the_database_url_is_taken_from_the_environment_when_db_is_absent() {
    let workspace = Workspace::new();
    let file = workspace.write("xingchen-ch1.txt", library_text("xingchen-ch1"));
    let mut command = workspace.bare();
    command.env("COPYTRACE_DATABASE_URL", &workspace.db).args([
        "library".as_ref(),
        "add".as_ref(),
        file.as_os_str(),
    ]);
    run_command(&mut command).success();

    assert!(workspace.db_file().exists());
    assert!(
        !workspace.path("copytrace.db").exists(),
        "the default was not used"
    );
    assert_eq!(workspace.work_ids(), ["xingchen-ch1".to_owned()].into());
}

#[test]
fn the_db_flag_wins_over_the_environment() {
    let workspace = Workspace::new();
    let file = workspace.write("xingchen-ch1.txt", library_text("xingchen-ch1"));
    let other = format!("sqlite://{}", workspace.path("env.db").display());
    let mut command = workspace.bare();
    command
        .env("COPYTRACE_DATABASE_URL", &other)
        .arg("--db")
        .arg(&workspace.db)
        .args(["library".as_ref(), "add".as_ref(), file.as_os_str()]);
    run_command(&mut command).success();

    assert!(!workspace.path("env.db").exists());
    assert_eq!(workspace.work_ids().len(), 1);
}

#[test]
fn the_database_defaults_to_copytrace_db_in_the_working_directory() {
    let workspace = Workspace::new();
    let file = workspace.write("xingchen-ch1.txt", library_text("xingchen-ch1"));
    let mut command = workspace.bare();
    command.args(["library".as_ref(), "add".as_ref(), file.as_os_str()]);
    run_command(&mut command).success();

    assert!(workspace.path("copytrace.db").exists());
    let mut list = workspace.bare();
    list.args(["library", "list", "--json"]);
    let run = run_command(&mut list).success();
    assert!(run.stdout.contains("\"xingchen-ch1\""), "{}", run.stdout);
    assert!(!workspace.db_file().exists());
}

#[test]
fn the_top_level_help_documents_the_database_default_and_variable() {
    let run = run_command(copytrace().arg("--help")).success();
    let out = &run.stdout;
    assert!(out.contains("Usage: copytrace"), "{out}");
    assert!(out.contains("--db"), "{out}");
    assert!(out.contains("sqlite://copytrace.db"), "{out}");
    assert!(out.contains("COPYTRACE_DATABASE_URL"), "{out}");
    for command in ["library", "crawl", "match", "export", "demo"] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(command)),
            "{command} not listed: {out}"
        );
    }
}

#[test]
fn every_subcommand_explains_itself_with_help() {
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["library", "add"],
            &[
                "Usage: copytrace library add",
                "GBK",
                "first non-empty line",
                "<PATHS>",
            ],
        ),
        (
            &["library", "list"],
            &["Usage: copytrace library list", "--json"],
        ),
        (
            &["crawl"],
            &[
                "Usage: copytrace crawl",
                "--max-pages",
                "--depth",
                "--allow-private-addresses",
            ],
        ),
        (&["match"], &["Usage: copytrace match", "not yet matched"]),
        (
            &["export", "matches"],
            &[
                "Usage: copytrace export matches",
                "--format",
                "csv",
                "json",
                "--out",
            ],
        ),
        (&["demo"], &["Usage: copytrace demo", "sample"]),
    ];
    for (command, expected) in cases {
        let run = run_command(copytrace().args(command).arg("--help")).success();
        for text in expected {
            assert!(
                run.stdout.contains(text),
                "{command:?} --help lacks {text:?}: {}",
                run.stdout
            );
        }
        assert!(
            run.stderr.is_empty(),
            "{command:?} --help wrote to stderr: {}",
            run.stderr
        );
    }
}
