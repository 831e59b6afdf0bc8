//! What a crawl prints at the default log level: its progress and summary, with failed URLs
//! summarised by kind, and no third-party library's warnings (the HTML parser's "foster
//! parenting not implemented", the browser protocol's "WS Invalid message"); `-v` lists every
//! failed URL.

use copytrace::demo::{SamplePage, SampleSite};

use crate::helpers::{TestSite, Workspace, html_page};

/// Broken ad links on the home page: each answers 404.
const BROKEN_ADS: usize = 30;

fn noisy_site() -> SampleSite {
    let ads: String = (0..BROKEN_ADS)
        .map(|id| format!("<a href=\"/ad/click.php?id={id}\">广告{id}</a> "))
        .collect();
    let home = html_page(
        "/list.html",
        &format!("<p>首页</p><a href=\"/book/1.html\">第一章</a> {ads}"),
    );
    // A paragraph inside a table: html5ever logs a warning for every such page it parses.
    let misnested = html_page(
        "/book/1.html",
        "<table><p>第一章的正文写在表格里，这是常见的坏标记。</p><tr><td>目录</td></tr></table>\
         <a href=\"/book/2.html\">下一章</a>",
    );
    // Text a script writes: read in headless Chromium, whose protocol messages the browser
    // library may not all know.
    let scripted = SamplePage {
        body: "<!DOCTYPE html><html><head><meta charset=utf-8><title>第二章</title></head><body>\
               <div id=\"content\"></div><script>document.getElementById('content').innerHTML = \
               '第二章的正文由脚本写出。';</script></body></html>"
            .as_bytes()
            .to_vec(),
        ..html_page("/book/2.html", "")
    };
    SampleSite {
        pages: vec![home, misnested, scripted],
    }
}

#[test]
fn a_crawl_prints_no_library_warnings_and_summarises_failures_by_kind() {
    let workspace = Workspace::new();
    let site = TestSite::serve(noisy_site());
    let seed = site.url("/list.html");
    let run = workspace.ok(&["crawl", &seed, "--allow-private-addresses"]);
    let stderr = &run.stderr;
    for noise in [
        "html5ever",
        "chromiumoxide",
        "foster parenting",
        "WARN",
        "INFO",
    ] {
        assert!(!stderr.contains(noise), "{noise:?} in stderr:\n{stderr}");
    }
    assert!(
        stderr.contains(&format!(
            "failed: {BROKEN_ADS} URL(s), http-4xx ({} more not shown; -v lists every one)",
            BROKEN_ADS - 3
        )),
        "{stderr}"
    );
    let listed = stderr.matches("/ad/click.php?id=").count();
    assert_eq!(listed, 3, "three examples, not a line per URL:\n{stderr}");
    assert!(
        run.stdout.contains("failures by kind: http-4xx 30"),
        "{}",
        run.stdout
    );

    let fresh = Workspace::new();
    let run = fresh.ok(&["crawl", &seed, "--allow-private-addresses", "-v"]);
    for id in 0..BROKEN_ADS {
        assert!(
            run.stderr.contains(&format!(
                "failed: {}:",
                site.url(&format!("/ad/click.php?id={id}"))
            )),
            "-v lists every failed URL:\n{}",
            run.stderr
        );
    }
}
