//! `copytrace stats` on the sample site, through the binary.

use crate::helpers::{TestSite, Workspace, add_crawl_match};

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
    assert!(works[0]["hours_to_first_copy"].as_f64().unwrap() >= 0.0);

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
    assert_eq!(
        delays["overall"]["count"].as_u64().unwrap(),
        pages_per_work.len() as u64
    );
    // A date range before anything happened counts nothing.
    let none = json(&["works", "--until", "2000-01-01"]);
    assert_eq!(none.as_array().unwrap().len(), 0);
    let bad = workspace.run(&["stats", "works", "--since", "yesterday"]);
    assert_ne!(bad.code, Some(0));
    assert!(bad.stderr.contains("--since"), "{}", bad.stderr);
}
