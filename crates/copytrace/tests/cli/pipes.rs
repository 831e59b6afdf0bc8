//! A reader that stops early, as `copytrace … | head` has: the command ends quietly.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::helpers::{Workspace, copytrace_std};

/// Adds `count` works whose titles are 200 Chinese characters (600 bytes), so that `library
/// list` prints many times what a pipe holds (64 KiB on Linux) and must still be writing when
/// its reader goes away.
fn add_works_with_long_titles(workspace: &Workspace, count: usize) {
    let words: String = "星辰旅人雨夜来客".chars().cycle().take(190).collect();
    for i in 0..count {
        workspace.write(
            &format!("library/w{i:04}.txt"),
            format!(
                "第{i:04}部{words}\n夜色渐深，雨水顺着屋檐滴落下来。少年推开木门，看见第{i}个陌生人。\n"
            ),
        );
    }
    workspace.ok(&[
        "library",
        "add",
        workspace.path("library").to_str().unwrap(),
    ]);
}

#[test]
fn a_reader_that_stops_early_ends_a_command_quietly() {
    let workspace = Workspace::new();
    add_works_with_long_titles(&workspace, 300);
    // One line after another, and one long JSON document in a single `println!`.
    for args in [&["library", "list"][..], &["library", "list", "--json"]] {
        let mut child = copytrace_std()
            .current_dir(workspace.root())
            .arg("--db")
            .arg(&workspace.db)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the copytrace binary starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("a pipe"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a first line");
        assert!(!first.is_empty(), "{args:?} printed nothing");
        // The reader is done, as `head` is after its lines: the pipe's read end closes.
        drop(stdout);
        let output = child.wait_with_output().expect("the binary ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        assert_ne!(output.status.code(), Some(101), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
