//! `--max-pages` and `--depth` bound the crawl; the server's request log is the witness.

use crate::helpers::{TestSite, Workspace, chain_site};

fn chain_paths(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("/chain/{i}.html")).collect()
}

#[test]
fn max_pages_bounds_the_number_of_requests() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let run = workspace.ok(&[
        "crawl",
        &site.base_url(),
        "--allow-private-addresses",
        "--max-pages",
        "3",
    ]);

    let requests = site.page_requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    assert_eq!(requests[0], "/", "the seed comes first");
    assert!(run.stdout.contains("crawled 3 page(s)"), "{}", run.stdout);
    let matched = workspace.ok(&["match"]);
    assert!(
        matched.stdout.contains("matched 3 page(s)"),
        "{}",
        matched.stdout
    );
}

#[test]
fn depth_bounds_how_far_links_are_followed() {
    let workspace = Workspace::new();
    let site = TestSite::serve(chain_site(6));
    workspace.ok(&[
        "crawl",
        &site.url("/chain/0.html"),
        "--allow-private-addresses",
        "--depth",
        "2",
    ]);

    assert_eq!(site.page_requests(), chain_paths(0..3));
}

#[test]
fn depth_zero_fetches_only_the_seeds() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    workspace.ok(&[
        "crawl",
        &site.base_url(),
        "--allow-private-addresses",
        "--depth",
        "0",
    ]);

    assert_eq!(site.page_requests(), ["/"]);
}

#[test]
fn depth_is_unlimited_unless_given() {
    let workspace = Workspace::new();
    let site = TestSite::serve(chain_site(15));
    let run = workspace.ok(&[
        "crawl",
        &site.url("/chain/0.html"),
        "--allow-private-addresses",
    ]);

    assert_eq!(site.page_requests(), chain_paths(0..15));
    assert!(run.stdout.contains("crawled 15 page(s)"), "{}", run.stdout);
}

#[test]
fn the_page_budget_bounds_a_crawl_of_unlimited_depth() {
    let workspace = Workspace::new();
    let site = TestSite::serve(chain_site(15));
    workspace.ok(&[
        "crawl",
        &site.url("/chain/0.html"),
        "--allow-private-addresses",
        "--max-pages",
        "5",
    ]);

    assert_eq!(site.page_requests(), chain_paths(0..5));
}

#[test]
fn scope_and_politeness_flags_reach_the_crawler_and_the_summary_counts_requests() {
    let workspace = Workspace::new();
    let site = TestSite::serve(chain_site(6));
    let run = workspace.ok(&[
        "crawl",
        &site.url("/chain/0.html"),
        "--allow-private-addresses",
        "--exclude",
        r"/chain/3\.html$",
        "--delay",
        "0.05",
        "--user-agent",
        "PirateHunter/2.0",
    ]);

    assert_eq!(site.page_requests(), chain_paths(0..3));
    assert!(
        run.stdout.starts_with("crawled 3 page(s): 3 new"),
        "{}",
        run.stdout
    );
    // robots.txt, the sitemap probe (read by default) and three pages.
    assert!(
        run.stdout.contains("; 5 request(s), 0 retried"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("pages/s"), "{}", run.stdout);

    let bad = workspace.run(&["crawl", &site.url("/"), "--delay", "-1"]);
    assert_eq!(bad.code, Some(2), "{bad:#?}");
}
