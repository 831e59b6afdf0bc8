//! One page under many URLs: a chapter the site links as `7.html`, `7.html?from=hot` and
//! `7.html?from=rank` is one infringing page in the export (its other URLs in the `aliases`
//! column and in the notice), while another chapter of the same work stays a page of its own.

use copytrace::demo::{SamplePage, SampleSite};

use crate::helpers::{TestSite, Workspace, html_page, library_text};

/// A chapter page copying the sample work `id` in full.
fn chapter_page(path: &str, id: &'static str) -> SamplePage {
    let paragraphs: String = library_text(id)
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>"))
        .collect();
    let mut page = html_page(path, &format!("<div id=\"content\">{paragraphs}</div>"));
    page.copies = vec![id];
    page
}

fn site_with_url_variants() -> SampleSite {
    // The demo server answers every query string with the page of the path, as pirate sites
    // do with their referral parameters.
    let hub = html_page(
        "/hub.html",
        "<a href=\"/read/7.html?from=hot\">热门</a> <a href=\"/read/7.html?from=rank\">排行</a>",
    );
    SampleSite {
        pages: vec![
            chapter_page("/read/7.html", "xingchen-ch1"),
            chapter_page("/read/8.html", "xingchen-ch2"),
            hub,
        ],
    }
}

#[test]
fn url_variants_of_one_page_are_one_row_with_their_aliases() {
    let workspace = Workspace::new();
    for id in ["xingchen-ch1", "xingchen-ch2"] {
        let file = workspace.write(&format!("library/{id}.txt"), library_text(id));
        workspace.ok(&["library".as_ref(), "add".as_ref(), file.as_os_str()]);
    }
    let site = TestSite::serve(site_with_url_variants());
    // The page first, alone (as a later crawl finds its variants); then the whole site, whose
    // hub links the variants. The page stored first is the page; the others are its aliases.
    let page_url = site.url("/read/7.html");
    workspace.ok(&[
        "crawl",
        &page_url,
        "--depth",
        "0",
        "--allow-private-addresses",
    ]);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    let matched = workspace.ok(&["match"]);
    assert!(
        matched.stdout.contains("2 page(s) show the same text"),
        "{}",
        matched.stdout
    );

    let export = workspace.export_csv();
    let url = export.column("page_url");
    let aliases = export.column("aliases");
    let mut rows: Vec<(String, String)> = export
        .rows
        .iter()
        .map(|row| {
            // Variants are stored in the order the crawl fetched them.
            let mut listed: Vec<&str> = row[aliases].split(' ').filter(|a| !a.is_empty()).collect();
            listed.sort_unstable();
            (row[url].to_string(), listed.join(" "))
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        vec![
            (
                site.url("/read/7.html"),
                format!(
                    "{} {}",
                    site.url("/read/7.html?from=hot"),
                    site.url("/read/7.html?from=rank")
                )
            ),
            (site.url("/read/8.html"), String::new()),
        ],
        "one row per page, its URL variants listed beside it"
    );
    let json = workspace.export_json();
    assert_eq!(json.len(), 2, "{json:?}");
    let first = json
        .iter()
        .find(|m| m["page_url"] == site.url("/read/7.html"))
        .expect("the page is exported");
    let mut listed: Vec<&str> = first["aliases"]
        .as_array()
        .expect("aliases are a JSON array")
        .iter()
        .map(|a| a.as_str().expect("a URL"))
        .collect();
    listed.sort_unstable();
    assert_eq!(
        listed,
        [
            site.url("/read/7.html?from=hot"),
            site.url("/read/7.html?from=rank")
        ]
    );

    // Matching again, and crawling again, change nothing.
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    workspace.ok(&["match"]);
    assert_eq!(workspace.export_csv().rows.len(), 2);
}
