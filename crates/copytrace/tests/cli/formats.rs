//! `library add` reads plain text in any of the usual encodings, HTML and Markdown, and refuses
//! other files by name.

use crate::helpers::{Workspace, library_text, title_of};

/// The body of a sample work, without its title line.
fn body(id: &str) -> String {
    library_text(id)
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn html_markdown_and_utf16_works_are_read_with_their_titles() {
    let workspace = Workspace::new();
    let paragraphs: String = body("xingchen-ch2")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>\n"))
        .collect();
    workspace.write(
        "lib/xingchen-ch2.html",
        format!(
            "<!DOCTYPE html><html><head><title>星辰旅人 HTML</title></head><body>\
             <div class=\"nav\"><a href=\"/\">目录</a></div>{paragraphs}</body></html>"
        ),
    );
    workspace.write(
        "lib/jianghu-ch1.md",
        format!("# 江湖 Markdown\n\n{}\n", body("jianghu-ch1")),
    );
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in library_text("news-harbor").encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    workspace.write("lib/news-harbor.txt", utf16);
    workspace.write("lib/notes.pdf", b"%PDF-1.7");

    let added = workspace.ok(&["library", "add", workspace.path("lib").to_str().unwrap()]);
    assert!(
        added.stdout.contains("3 work(s): 3 added"),
        "{}",
        added.stdout
    );
    assert!(added.stdout.contains("UTF-16LE"), "{}", added.stdout);
    let titles: Vec<(String, String)> = workspace
        .works()
        .iter()
        .map(|w| {
            (
                w["external_id"].as_str().unwrap().to_owned(),
                w["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        titles,
        [
            ("jianghu-ch1".to_owned(), "江湖 Markdown".to_owned()),
            (
                "news-harbor".to_owned(),
                title_of(library_text("news-harbor")).to_owned()
            ),
            ("xingchen-ch2".to_owned(), "星辰旅人 HTML".to_owned()),
        ]
    );
}

#[test]
fn a_file_of_another_format_is_refused_by_name() {
    let workspace = Workspace::new();
    let pdf = workspace.write("notes.pdf", b"%PDF-1.7");
    let run = workspace.run(&["library", "add", pdf.to_str().unwrap()]);
    let error = run.one_line_error();
    assert!(
        error.contains("notes.pdf") && error.contains("Markdown"),
        "{error}"
    );
    assert!(!workspace.db_file().exists(), "nothing may be written");
}
