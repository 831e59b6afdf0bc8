//! Running the same commands again changes nothing; changed inputs replace what they changed.

use std::collections::BTreeSet;
use std::time::Duration;

use copytrace::demo::UNRELATED;

/// A little more than the resolution of exported timestamps.
const SECOND: Duration = Duration::from_millis(1100);

use crate::helpers::{
    CsvExport, TestSite, Workspace, add_crawl_match, crawl_and_match, library_text, title_of,
    write_sample_library,
};

#[test]
fn re_adding_an_unchanged_library_changes_nothing() {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    let add = ["library".as_ref(), "add".as_ref(), library.as_os_str()];
    workspace.ok(&add);
    let before = workspace.works();

    let again = workspace.ok(&add);
    assert!(
        again
            .stdout
            .contains("4 work(s): 0 added, 0 updated, 4 unchanged"),
        "{}",
        again.stdout
    );
    let unchanged = again
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("unchanged"))
        .count();
    assert_eq!(unchanged, 4, "{}", again.stdout);
    assert_eq!(
        workspace.works(),
        before,
        "the stored works did not change at all"
    );
}

#[test]
fn a_changed_file_is_reported_updated_and_replaces_only_that_work() {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    let add = ["library".as_ref(), "add".as_ref(), library.as_os_str()];
    workspace.ok(&add);
    let before = workspace.works();

    let longer = format!(
        "{}\n沈青川合上书页，窗外的雨又下了起来。\n",
        library_text("xingchen-ch2")
    );
    workspace.write("library/vol2/xingchen-ch2.txt", longer);
    let again = workspace.ok(&add);

    let updated: Vec<&str> = again
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("updated"))
        .collect();
    assert_eq!(updated.len(), 1, "{}", again.stdout);
    assert!(updated[0].contains("xingchen-ch2"), "{}", updated[0]);
    assert!(
        again
            .stdout
            .contains("4 work(s): 0 added, 1 updated, 3 unchanged"),
        "{}",
        again.stdout
    );
    let after = workspace.works();
    assert_eq!(after.len(), before.len());
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old["external_id"], new["external_id"]);
        assert_eq!(old["id"], new["id"], "a work keeps its row");
        if new["external_id"] == "xingchen-ch2" {
            assert_ne!(old["content_hash"], new["content_hash"]);
            assert_ne!(old["content_len"], new["content_len"]);
        } else {
            assert_eq!(old, new);
        }
    }
}

#[test]
fn a_changed_file_replaces_the_works_fingerprints() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    let runs = add_crawl_match(&workspace, &site);
    let library = workspace.path("library");
    let verbatim = (site.url("/book/xingchen/1.html"), "xingchen-ch1".to_owned());
    assert!(workspace.export_csv().pairs().contains(&verbatim));
    assert!(runs.add.stdout.contains("4 added"), "{}", runs.add.stdout);

    // The work keeps its id but now holds the text of the cooking blog.
    let cooking = UNRELATED
        .iter()
        .find(|(id, _)| *id == "cooking")
        .map(|(_, text)| *text)
        .expect("the cooking text");
    workspace.write("library/xingchen-ch1.txt", cooking);
    let again = workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    assert!(again.stdout.contains("1 updated"), "{}", again.stdout);
    let rematch = workspace.ok(&["match"]);
    assert!(
        !rematch.stdout.contains("matched 0 page(s)"),
        "{}",
        rematch.stdout
    );

    let pairs: BTreeSet<(String, String)> = workspace.export_csv().pairs().into_iter().collect();
    let mut expected = site.expected_matches();
    expected.remove(&verbatim);
    expected.insert((site.url("/life/beef.html"), "xingchen-ch1".to_owned()));
    assert_eq!(pairs, expected, "old fingerprints gone, new ones matched");
    let work = workspace
        .works()
        .into_iter()
        .find(|w| w["external_id"] == "xingchen-ch1")
        .expect("xingchen-ch1");
    assert_eq!(work["title"], title_of(cooking));
}

#[test]
fn crawling_and_matching_twice_yields_identical_exports() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let first = workspace.export_csv();
    let requests_after_first = site.page_requests().len();
    // Timestamps are exported to the second: make sure a re-insert would show.
    std::thread::sleep(SECOND);

    let (crawl, matched) = crawl_and_match(&workspace, &site);
    assert!(
        crawl.stdout.contains(" 0 new, 0 changed"),
        "{}",
        crawl.stdout
    );
    assert!(
        matched.stdout.contains("matched 0 page(s)"),
        "unchanged pages are not matched again: {}",
        matched.stdout
    );
    assert_eq!(
        site.page_requests().len(),
        2 * requests_after_first,
        "the second crawl fetched the site again"
    );
    let second = workspace.export_csv();
    assert_eq!(second.header, first.header);
    assert_eq!(second.rows.len(), first.rows.len());
    let key = |export: &CsvExport| -> BTreeSet<Vec<String>> {
        let columns: Vec<usize> = [
            "page_url",
            "work_external_id",
            "work_title",
            "score",
            "coverage",
            "method",
            "first_seen",
        ]
        .iter()
        .map(|c| export.column(c))
        .collect();
        export
            .rows
            .iter()
            .map(|r| columns.iter().map(|&i| r[i].to_owned()).collect())
            .collect()
    };
    assert_eq!(key(&second), key(&first));
}

#[test]
fn matching_again_after_a_library_change_keeps_when_matches_were_first_seen() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let first = workspace.export_csv();
    // Timestamps are exported to the second: make sure a re-insert would show.
    std::thread::sleep(SECOND);

    let longer = format!("{}\n沈青川合上书页。\n", library_text("xingchen-ch2"));
    workspace.write("library/vol2/xingchen-ch2.txt", longer);
    let library = workspace.path("library");
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let rematch = workspace.ok(&["match"]);
    // Only the pages that may copy the changed work are matched again, not the whole site.
    let copies = site
        .expected_matches()
        .iter()
        .filter(|(_, work)| work == "xingchen-ch2")
        .count();
    assert!(copies > 0);
    assert!(
        rematch
            .stdout
            .contains(&format!("matched {copies} page(s)")),
        "the {copies} page(s) copying the changed work again: {}",
        rematch.stdout
    );

    let second = workspace.export_csv();
    let first_seen = |export: &CsvExport| -> BTreeSet<(String, String, String)> {
        let (url, work, seen) = (
            export.column("page_url"),
            export.column("work_external_id"),
            export.column("first_seen"),
        );
        export
            .rows
            .iter()
            .map(|r| (r[url].to_owned(), r[work].to_owned(), r[seen].to_owned()))
            .collect()
    };
    assert_eq!(first_seen(&second), first_seen(&first));
}
