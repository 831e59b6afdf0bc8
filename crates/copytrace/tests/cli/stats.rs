//! `copytrace stats` on the sample site, through the binary.

use crate::helpers::{TestSite, Workspace, add_crawl_match, crawl_and_match, library_text};

#[test]
fn stats_count_the_sample_sites_copies_per_work_site_day_and_holder() {
    use std::collections::BTreeMap;

    let workspace = Workspace::new();
    let site = TestSite::sample();
    add_crawl_match(&workspace, &site);
    let expected = site.expected_matches();
    let mut pages_per_work: BTreeMap<String, u64> = BTreeMap::new();
    for (_, work) in &expected {
        *pages_per_work.entry(work.clone()).or_default() += 1;
    }
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["stats"];
        all.extend_from_slice(args);
        all.push("--json");
        serde_json::from_str(&workspace.ok(&all).stdout).expect("stats --json")
    };

    let works = json(&["works"]);
    let counted: BTreeMap<String, u64> = works
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["external_id"].as_str().unwrap().to_owned(),
                w["pages"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counted, pages_per_work);
    // `library add` gives no publication time: no time to piracy can be told.
    assert!(works[0]["hours_to_first_copy"].is_null(), "{works}");

    // The sample site is one host; the excerpt waits for review, so confirmed copies are one
    // fewer.
    let sites = json(&["sites"]);
    assert_eq!(sites.as_array().unwrap().len(), 1);
    assert_eq!(sites[0]["copies"].as_u64().unwrap(), expected.len() as u64);
    assert_eq!(sites[0]["removal_rate"].as_f64().unwrap(), 0.0);
    let confirmed = json(&["sites", "--review", "confirmed"]);
    assert_eq!(
        confirmed[0]["copies"].as_u64().unwrap(),
        expected.len() as u64 - 1
    );

    let daily = json(&["daily"]);
    assert_eq!(
        daily.as_array().unwrap().len(),
        1,
        "everything happened today"
    );
    assert_eq!(
        daily[0]["new_matches"].as_u64().unwrap(),
        expected.len() as u64
    );
    assert!(daily[0]["pages_crawled"].as_u64().unwrap() >= expected.len() as u64);

    let holders = json(&["holders"]);
    assert_eq!(
        holders[0]["copies"].as_u64().unwrap(),
        expected.len() as u64
    );
    assert_eq!(holders[0]["pending"].as_u64().unwrap(), 1);

    let delays = json(&["time-to-piracy"]);
    assert_eq!(delays["overall"]["count"].as_u64().unwrap(), 0);
    assert_eq!(
        delays["publication_unknown"].as_array().unwrap().len(),
        pages_per_work.len()
    );
    // A date range before anything happened counts nothing.
    let none = json(&["works", "--until", "2000-01-01"]);
    assert_eq!(none.as_array().unwrap().len(), 0);
    let bad = workspace.run(&["stats", "works", "--since", "yesterday"]);
    assert_ne!(bad.code, Some(0));
    assert!(bad.stderr.contains("--since"), "{}", bad.stderr);
}

#[test]
fn time_to_piracy_is_unknown_without_a_publication_time() {
    let workspace = Workspace::new();
    let site = TestSite::sample();
    // One work with a catalog publication date, one without (as `library add` gives them).
    workspace.write("catalog/xingchen-ch1.txt", library_text("xingchen-ch1"));
    workspace.write("catalog/jianghu-ch1.txt", library_text("jianghu-ch1"));
    let catalog = workspace.write(
        "catalog/catalog.csv",
        "external_id,title,author,rights_holder,path,published_at\n\
         xingchen-ch1,星辰,,Yuewen,xingchen-ch1.txt,2024-03-01\n\
         jianghu-ch1,江湖,,Yuewen,jianghu-ch1.txt,\n",
    );
    workspace.ok(&["library", "import", catalog.to_str().unwrap()]);
    crawl_and_match(&workspace, &site);

    let works = workspace.ok(&["stats", "works"]).stdout;
    let line = |id: &str| {
        works
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("no row of {id} in {works}"))
            .to_owned()
    };
    let dated = line("xingchen-ch1");
    assert!(dated.contains(" h after publication"), "{dated}");
    let undated = line("jianghu-ch1");
    assert!(undated.contains("publication time unknown"), "{undated}");
    assert!(!undated.contains("after publication"), "{undated}");

    let rows: serde_json::Value =
        serde_json::from_str(&workspace.ok(&["stats", "works", "--json"]).stdout).unwrap();
    let hours = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["external_id"] == id)
            .unwrap()["hours_to_first_copy"]
            .clone()
    };
    // Copied today, published in March 2024: well over a year.
    assert!(hours("xingchen-ch1").as_f64().unwrap() > 24.0 * 365.0);
    assert!(hours("jianghu-ch1").is_null());

    let delays = workspace.ok(&["stats", "time-to-piracy"]).stdout;
    assert!(
        delays.contains("1 work(s) with a known publication time copied"),
        "{delays}"
    );
    assert!(
        delays.contains(
            "1 work(s) copied whose publication time is unknown (no published_at in the \
             catalog), not counted above: jianghu-ch1"
        ),
        "{delays}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&workspace.ok(&["stats", "time-to-piracy", "--json"]).stdout).unwrap();
    assert_eq!(report["overall"]["count"], 1);
    assert_eq!(
        report["publication_unknown"],
        serde_json::json!(["jianghu-ch1"])
    );
    let works: Vec<&str> = report["works"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["key"].as_str().unwrap())
        .collect();
    assert_eq!(works, ["xingchen-ch1"]);
}
