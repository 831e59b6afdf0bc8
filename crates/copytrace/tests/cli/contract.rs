//! The contract end to end: `library add` → `crawl` → `match` → `export`, against the sample
//! piracy site served inside the test.

use std::collections::BTreeSet;

use crate::helpers::{
    TestSite, Workspace, add_crawl_match, library_text, title_of, write_sample_library,
};

#[test]
fn every_pirated_page_is_exported_against_the_right_work_and_nothing_else() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);

    let export = workspace.export_csv();
    let pairs = export.pairs();
    let unique: BTreeSet<(String, String)> = pairs.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        pairs.len(),
        "one row per (page, work) match: {pairs:#?}"
    );
    assert_eq!(unique, site.expected_matches());
    // The set covers the verbatim, Traditional-Chinese, GBK, ads-injected and excerpt pages.
    for path in [
        "/book/xingchen/1.html",
        "/book/xingchen/2.html",
        "/book/jianghu/1.html",
        "/news/2026/harbor.html",
        "/forum/thread-88.html",
    ] {
        assert!(
            unique.iter().any(|(url, _)| *url == site.url(path)),
            "{path} missing"
        );
    }
}

#[test]
fn the_csv_export_starts_with_the_contracted_columns() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);

    let export = workspace.export_csv();
    let contracted = [
        "page_url",
        "work_external_id",
        "work_title",
        "score",
        "coverage",
        "method",
        "first_seen",
    ];
    assert_eq!(export.header[..contracted.len()], contracted);
    assert!(!export.rows.is_empty());
    let title = export.column("work_title");
    let work = export.column("work_external_id");
    let score = export.column("score");
    let coverage = export.column("coverage");
    let first_seen = export.column("first_seen");
    for row in &export.rows {
        assert_eq!(&row[title], title_of(library_text(&row[work])), "{row:?}");
        let score: f64 = row[score].parse().expect("numeric score");
        let coverage: f64 = row[coverage].parse().expect("numeric coverage");
        assert!(score > 0.0 && score <= 1.0, "{row:?}");
        assert!(coverage > 0.0 && coverage <= 1.0, "{row:?}");
        assert!(!row[export.column("method")].is_empty(), "{row:?}");
        assert!(
            chrono_like_rfc3339(&row[first_seen]),
            "first_seen is a timestamp: {row:?}"
        );
    }
}

/// `2026-11-01T08:00:00Z` and the like.
fn chrono_like_rfc3339(value: &str) -> bool {
    let bytes = value.as_bytes();
    value.len() >= 20
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[10] == b'T'
        && bytes[13] == b':'
        && bytes[..4].iter().all(u8::is_ascii_digit)
}

#[test]
fn the_json_export_lists_the_same_matches_as_the_csv_export() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);

    let csv: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    let json = workspace.export_json();
    let from_json: BTreeSet<(String, String)> = json
        .iter()
        .map(|m| {
            (
                m["page_url"].as_str().expect("page_url").to_owned(),
                m["work_external_id"]
                    .as_str()
                    .expect("work_external_id")
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(json.len(), csv.len());
    assert_eq!(from_json, csv);
    assert_eq!(from_json, site.expected_matches());
}

#[test]
fn robots_disallowed_pages_are_never_requested() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let runs = add_crawl_match(&workspace, &site);

    let disallowed: Vec<&str> = site
        .site
        .pages
        .iter()
        .filter(|p| p.disallowed)
        .map(|p| p.path.as_str())
        .collect();
    assert!(!disallowed.is_empty());
    let requests = site.requests();
    assert!(requests.contains(&"/robots.txt".to_owned()), "{requests:?}");
    for path in &disallowed {
        assert!(
            !requests.iter().any(|r| r == path),
            "{path} was requested: {requests:?}"
        );
        assert!(
            !workspace
                .export_csv()
                .pairs()
                .iter()
                .any(|(url, _)| *url == site.url(path))
        );
    }
    // Every allowed page was fetched, so the absence above is robots.txt's doing.
    for page in site.site.pages.iter().filter(|p| !p.disallowed) {
        assert!(requests.contains(&page.path), "{} not requested", page.path);
    }
    assert!(
        runs.crawl.stdout.contains("1 disallowed by robots.txt"),
        "{}",
        runs.crawl.stdout
    );
}

#[test]
fn unrelated_pages_never_match() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let runs = add_crawl_match(&workspace, &site);

    let matched_urls: BTreeSet<String> = workspace
        .export_csv()
        .pairs()
        .into_iter()
        .map(|(url, _)| url)
        .collect();
    let unrelated: Vec<String> = site
        .site
        .pages
        .iter()
        .filter(|p| p.copies.is_empty())
        .map(|p| site.url(&p.path))
        .chain([site.base_url()])
        .collect();
    assert!(
        unrelated.len() >= 5,
        "the site has unrelated pages and an index"
    );
    for url in &unrelated {
        assert!(!matched_urls.contains(url), "{url} was accused");
    }
    // They were crawled and matched, not skipped.
    let pages = site.site.pages.iter().filter(|p| !p.disallowed).count() + 1;
    assert!(
        runs.matched
            .stdout
            .contains(&format!("matched {pages} page(s) against 4 work(s)")),
        "{}",
        runs.matched.stdout
    );
}

#[test]
fn gbk_library_files_are_detected() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let runs = add_crawl_match(&workspace, &site);

    let line = runs
        .add
        .stdout
        .lines()
        .find(|l| l.contains("jianghu-ch1"))
        .unwrap_or_else(|| panic!("no line for jianghu-ch1 in {}", runs.add.stdout));
    assert!(
        line.contains("GB"),
        "encoding not reported as GBK/GB18030: {line}"
    );
    let works = workspace.works();
    let jianghu = works
        .iter()
        .find(|w| w["external_id"] == "jianghu-ch1")
        .expect("jianghu-ch1 was added");
    assert_eq!(jianghu["title"], title_of(library_text("jianghu-ch1")));
    // Decoded correctly, the work is found on both the GBK page and the forum excerpt.
    let pairs = workspace.export_csv().pairs();
    for path in ["/book/jianghu/1.html", "/forum/thread-88.html"] {
        assert!(
            pairs.contains(&(site.url(path), "jianghu-ch1".to_owned())),
            "{path} not matched to jianghu-ch1: {pairs:#?}"
        );
    }
}

#[test]
fn library_directories_are_walked_for_txt_files_only() {
    let workspace = Workspace::new();
    let library = crate::helpers::write_sample_library(&workspace);
    let run = workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);

    // `vol2/` and `news/2026/` are subdirectories; `cover.png` is not a `.txt` file.
    let expected: BTreeSet<String> = ["jianghu-ch1", "news-harbor", "xingchen-ch1", "xingchen-ch2"]
        .map(str::to_owned)
        .into();
    assert_eq!(workspace.work_ids(), expected);
    assert!(
        run.stdout
            .contains("4 work(s): 4 added, 0 updated, 0 unchanged"),
        "{}",
        run.stdout
    );
    for work in workspace.works() {
        let id = work["external_id"].as_str().expect("external_id");
        assert_eq!(work["title"], title_of(library_text(id)), "title of {id}");
    }
}

#[test]
fn the_title_is_the_first_non_empty_line_and_the_id_the_file_stem() {
    let workspace = Workspace::new();
    let text = format!("\n\n   \n  {}", library_text("xingchen-ch1"));
    let file = workspace.write("books/星辰 旅人.第一卷.txt", text);
    workspace.ok(&["library".as_ref(), "add".as_ref(), file.as_os_str()]);

    let works = workspace.works();
    assert_eq!(works.len(), 1);
    assert_eq!(works[0]["external_id"], "星辰 旅人.第一卷");
    assert_eq!(works[0]["title"], "星辰旅人 第一章 雨夜来客");
}

#[test]
fn private_addresses_are_refused_without_the_flag() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let run = workspace.run(&["crawl", &site.base_url()]);

    assert_ne!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stderr.contains("refused private address 127.0.0.1"),
        "{}",
        run.stderr
    );
    assert!(
        site.requests().is_empty(),
        "requested {:?}",
        site.requests()
    );
    assert!(run.stdout.contains("crawled 0 page(s)"), "{}", run.stdout);
    let matched = workspace.ok(&["match"]);
    assert!(
        matched.stdout.contains("matched 0 page(s)"),
        "{}",
        matched.stdout
    );
}

#[test]
fn the_report_threshold_and_candidate_sources_can_be_set_and_copied_chars_are_exported() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let library = crate::helpers::write_sample_library(&workspace);
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);

    let unknown = workspace.run(&["match", "--candidates", "simhash+bogus"]);
    assert_eq!(unknown.code, Some(2), "{}", unknown.stderr);
    assert!(unknown.stderr.contains("bogus"), "{}", unknown.stderr);
    let none = workspace.run(&["match", "--candidates", "none"]);
    assert_ne!(none.code, Some(0), "matching with no source is refused");

    // A threshold above any copy reports nothing; the default one reports every copy, each
    // with at least the default number of copied characters in the export.
    workspace.ok(&["match", "--min-copied-chars", "1000000"]);
    assert!(workspace.export_csv().rows.is_empty());
    let db_again = Workspace::new();
    let library = crate::helpers::write_sample_library(&db_again);
    db_again.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    db_again.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    db_again.ok(&["match", "--candidates", "dna+simhash"]);
    let export = db_again.export_csv();
    let copied = export.column("copied_chars");
    assert_eq!(
        export.pairs().into_iter().collect::<BTreeSet<_>>(),
        site.expected_matches()
    );
    for row in &export.rows {
        let chars: u32 = row[copied].parse().expect("a count");
        assert!(chars >= 80, "the default threshold: {row:?}");
    }
}

#[test]
fn crawl_with_match_records_the_same_matches_as_crawl_then_match() {
    let site = TestSite::sample();
    let separate = Workspace::new();
    add_crawl_match(&separate, &site);

    let streamed = Workspace::new();
    let library = write_sample_library(&streamed);
    streamed.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let run = streamed.ok(&[
        "crawl",
        &site.base_url(),
        "--allow-private-addresses",
        "--match",
        "--parallel",
        "2",
    ]);
    assert!(run.stdout.contains("crawled "), "{}", run.stdout);
    assert!(run.stdout.contains("matched "), "{}", run.stdout);

    let pairs = |workspace: &Workspace| -> BTreeSet<(String, String)> {
        workspace.export_csv().pairs().into_iter().collect()
    };
    assert_eq!(pairs(&streamed), site.expected_matches());
    assert_eq!(pairs(&streamed), pairs(&separate));
    // Every stored page was matched before `crawl --match` returned.
    let after = streamed.ok(&["match"]);
    assert!(
        after.stdout.starts_with("matched 0 page(s)"),
        "{}",
        after.stdout
    );
}

#[test]
fn crawl_with_match_refuses_to_queue() {
    let workspace = Workspace::new();
    let run = workspace.run(&["crawl", "http://example.com/", "--match", "--queue"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--queue"), "{}", run.stderr);
}
