//! Pages whose text only a script writes, through the CLI contract: without Chromium `crawl`
//! says once which pages needed it and how to install it, and stores nothing for them; with
//! it, the page is read, matched and exported like any other.

use copytrace::demo::{SamplePage, SampleSite};

use crate::helpers::{TestSite, Workspace, library_text, write_sample_library};

/// `s` as a JavaScript string literal of `\uXXXX` escapes: nothing of the text is in the HTML.
fn escaped(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

fn scripted_page(path: &str, work: &'static str) -> SamplePage {
    let text = library_text(work).replace('\n', "<br>");
    SamplePage {
        path: path.to_owned(),
        label: "written by a script",
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html><html><head><meta charset=utf-8><title>第一章</title></head><body>\
             <div id=\"content\"></div><script>document.getElementById('content').innerHTML = \
             \"{}\";</script></body></html>",
            escaped(&text)
        )
        .into_bytes(),
        copies: vec![work],
        disallowed: false,
    }
}

#[test]
fn a_page_written_by_a_script_is_reported_without_chromium_and_matched_with_it() {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library", "add", library.to_str().expect("UTF-8")]);
    let site = TestSite::serve(SampleSite {
        pages: vec![
            scripted_page("/js/1.html", "xingchen-ch1"),
            scripted_page("/js/2.html", "news-harbor"),
        ],
    });

    let mut without = workspace.bare();
    without
        .env("COPYTRACE_CHROMIUM", workspace.path("no-such-chromium"))
        .args([
            "--db",
            &workspace.db,
            "crawl",
            &site.base_url(),
            "--allow-private-addresses",
        ]);
    let run = crate::helpers::run_command(&mut without).success();
    assert_eq!(
        run.stderr.matches("apt-get install chromium").count(),
        1,
        "said once: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("not rendered: 2 page(s)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&site.url("/js/1.html")),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("not-rendered 2"), "{}", run.stdout);
    workspace.ok(&["match"]);
    assert!(
        workspace.export_json().is_empty(),
        "nothing stored, nothing matched"
    );

    let run = workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    assert!(
        run.stdout.contains("2 page(s) read in headless Chromium"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    workspace.ok(&["match"]);
    let mut pairs = workspace.export_csv().pairs();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            (site.url("/js/1.html"), "xingchen-ch1".to_owned()),
            (site.url("/js/2.html"), "news-harbor".to_owned()),
        ]
    );

    // `--render never` keeps the static path: the pages have no text to match.
    let fresh = Workspace::new();
    let library = write_sample_library(&fresh);
    fresh.ok(&["library", "add", library.to_str().expect("UTF-8")]);
    fresh.ok(&[
        "crawl",
        &site.base_url(),
        "--allow-private-addresses",
        "--render",
        "never",
    ]);
    fresh.ok(&["match"]);
    assert!(fresh.export_json().is_empty());
}
