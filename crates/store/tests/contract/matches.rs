//! The match library: verdicts of match runs, their evidence, filters and review status.

use std::sync::Arc;

use copytrace_store::{
    EvidencePassage, Id, ListingOrder, MatchFilter, MatchStatus, NewMatch, Store,
};

use crate::helpers::{
    at, contract_tests, found, hash_of, invalid, not_found, stored_page, stored_work,
};

contract_tests!(
    recording_matches_twice_is_idempotent_and_keeps_first_seen,
    a_new_verdict_replaces_the_previous_one,
    matches_are_filtered_by_rights_holder,
    matches_are_ordered_by_page_url_then_work_external_id,
    a_review_status_survives_the_match_being_found_again,
    a_failed_recording_changes_nothing,
    scores_outside_zero_to_one_are_refused,
    unknown_match_status_change_is_not_found,
    a_match_with_twenty_thousand_evidence_passages_round_trips,
    concurrent_recordings_of_one_page_leave_one_whole_verdict,
    recording_counts_the_page_work_pairs_that_are_new,
    every_listed_match_names_its_own_pages_aliases,
);

/// What `list_matches` lists for `filter`, each match as `view` shows it.
async fn listed<T>(
    store: &dyn Store,
    filter: &MatchFilter,
    view: impl Fn(copytrace_store::MatchRecord) -> T,
) -> Vec<T> {
    store
        .list_matches(filter)
        .await
        .unwrap()
        .into_iter()
        .map(view)
        .collect()
}

/// A page holding `text` and a work of a new holder, for tests about one pair.
async fn page_and_work(store: &dyn Store) -> (Id, Id) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(store, holder, "novel", "original text of the novel").await;
    let page = stored_page(store, "https://pirate.example/1", "pirated text").await;
    (page, work)
}

async fn recording_matches_twice_is_idempotent_and_keeps_first_seen(store: Arc<dyn Store>) {
    let (page, work) = page_and_work(&*store).await;
    let hash = hash_of("pirated text");
    let verdict = [found(work, 0.8, &[(0, 0), (20, 40)])];

    store
        .record_page_matches(page, &hash, &verdict, at(10))
        .await
        .unwrap();
    let first = store.list_matches(&MatchFilter::default()).await.unwrap();
    store
        .record_page_matches(page, &hash, &verdict, at(10))
        .await
        .unwrap();
    assert_eq!(
        store.list_matches(&MatchFilter::default()).await.unwrap(),
        first,
        "the same input changes nothing"
    );

    store
        .record_page_matches(page, &hash, &verdict, at(99))
        .await
        .unwrap();
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    let record = &matches[0];
    assert_eq!(record.id, first[0].id);
    assert_eq!((record.first_seen, record.last_seen), (at(10), at(99)));
    assert_eq!(
        record.evidence, verdict[0].evidence,
        "evidence replaced, not appended"
    );
    assert_eq!((record.page_id, record.work_id), (page, work));
    assert_eq!(record.page_url, "https://pirate.example/1");
    assert_eq!(
        record.page_title.as_deref(),
        Some("Page https://pirate.example/1")
    );
    assert_eq!(record.work_external_id, "novel");
    assert_eq!(record.work_title, "Title of novel");
    assert_eq!(
        (record.score, record.coverage, record.containment),
        (0.8, 0.4, 0.8 / 3.0)
    );
    assert_eq!(
        record.copied_chars, 800,
        "copied characters survive the round trip"
    );
    assert_eq!(record.method, "simhash+align");
    assert_eq!(record.status, MatchStatus::Open);
    assert_eq!(store.get_page(page).await.unwrap().matched_hash, Some(hash));
}

async fn a_new_verdict_replaces_the_previous_one(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let kept = stored_work(&*store, holder, "kept", "kept work").await;
    let dropped = stored_work(&*store, holder, "dropped", "dropped work").await;
    let page = stored_page(&*store, "https://pirate.example/1", "page").await;
    let hash = hash_of("page");

    let before = [
        found(kept, 0.5, &[(0, 0), (30, 30)]),
        found(dropped, 0.6, &[(50, 0)]),
    ];
    store
        .record_page_matches(page, &hash, &before, at(1))
        .await
        .unwrap();
    assert_eq!(
        store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap()
            .len(),
        2
    );

    let after = [found(kept, 0.7, &[(5, 5)])];
    store
        .record_page_matches(page, &hash, &after, at(2))
        .await
        .unwrap();
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    assert_eq!(matches[0].work_id, kept);
    assert_eq!(matches[0].score, 0.7);
    assert_eq!(
        matches[0].evidence,
        [EvidencePassage {
            page_start: 5,
            page_end: 15,
            work_start: 5,
            work_end: 15
        }]
    );

    store
        .record_page_matches(page, &hash, &[], at(3))
        .await
        .unwrap();
    assert!(
        store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store.pages_to_match(10).await.unwrap().is_empty(),
        "no match is a verdict too"
    );
}

async fn matches_are_filtered_by_rights_holder(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Mine").await.unwrap();
    let theirs = store.ensure_rights_holder("Theirs").await.unwrap();
    let my_work = stored_work(&*store, mine, "mine", "my text").await;
    let my_other_work = stored_work(&*store, mine, "mine-2", "my other text").await;
    let their_work = stored_work(&*store, theirs, "theirs", "their text").await;
    let page = stored_page(&*store, "https://pirate.example/all", "everything").await;
    let verdict = [
        found(my_work, 0.9, &[(0, 0)]),
        found(my_other_work, 0.8, &[]),
        found(their_work, 0.7, &[(10, 0)]),
    ];
    store
        .record_page_matches(page, &hash_of("everything"), &verdict, at(1))
        .await
        .unwrap();

    let works_of = |filter: MatchFilter| {
        let store = store.clone();
        async move {
            listed(&*store, &filter, |record| {
                (record.rights_holder_id, record.work_id)
            })
            .await
        }
    };
    let only_mine = MatchFilter {
        rights_holder_id: Some(mine),
        work_id: None,
        include_licensed: false,
        reviews: Vec::new(),
        ..MatchFilter::default()
    };
    assert_eq!(
        works_of(only_mine).await,
        [(mine, my_work), (mine, my_other_work)]
    );
    let only_theirs = MatchFilter {
        rights_holder_id: Some(theirs),
        work_id: None,
        include_licensed: false,
        reviews: Vec::new(),
        ..MatchFilter::default()
    };
    assert_eq!(works_of(only_theirs).await, [(theirs, their_work)]);
    let one_work = MatchFilter {
        rights_holder_id: None,
        work_id: Some(my_other_work),
        include_licensed: false,
        reviews: Vec::new(),
        ..MatchFilter::default()
    };
    assert_eq!(works_of(one_work).await, [(mine, my_other_work)]);
    let not_their_work = MatchFilter {
        rights_holder_id: Some(mine),
        work_id: Some(their_work),
        include_licensed: false,
        reviews: Vec::new(),
        ..MatchFilter::default()
    };
    assert!(
        works_of(not_their_work).await.is_empty(),
        "a holder never sees another's work"
    );
    assert_eq!(works_of(MatchFilter::default()).await.len(), 3);

    // The paged listing selects a holder's matches by the holder each match carries: the same.
    let listed_of = |filter: MatchFilter| {
        let store = store.clone();
        async move {
            let mut listed: Vec<_> = store
                .match_listing(&filter, ListingOrder::Newest, 0, 10)
                .await
                .unwrap()
                .matches
                .into_iter()
                .map(|record| (record.rights_holder_id, record.work_id))
                .collect();
            listed.sort_unstable();
            listed
        }
    };
    let mine_only = MatchFilter {
        rights_holder_id: Some(mine),
        ..MatchFilter::default()
    };
    let mut expected = vec![(mine, my_work), (mine, my_other_work)];
    expected.sort_unstable();
    assert_eq!(listed_of(mine_only).await, expected);
    let theirs_only = MatchFilter {
        rights_holder_id: Some(theirs),
        ..MatchFilter::default()
    };
    assert_eq!(listed_of(theirs_only).await, [(theirs, their_work)]);
    let not_theirs = MatchFilter {
        rights_holder_id: Some(mine),
        work_id: Some(their_work),
        ..MatchFilter::default()
    };
    assert!(listed_of(not_theirs).await.is_empty());
}

async fn matches_are_ordered_by_page_url_then_work_external_id(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let b = stored_work(&*store, holder, "b", "work b").await;
    let a = stored_work(&*store, holder, "a", "work a").await;
    let later_page = stored_page(&*store, "https://z.example/", "z").await;
    let earlier_page = stored_page(&*store, "https://a.example/", "a").await;
    for (page, text) in [(later_page, "z"), (earlier_page, "a")] {
        let verdict = [found(b, 0.5, &[(1, 1)]), found(a, 0.5, &[(2, 2), (0, 0)])];
        store
            .record_page_matches(page, &hash_of(text), &verdict, at(1))
            .await
            .unwrap();
    }

    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    let order: Vec<(&str, &str)> = matches
        .iter()
        .map(|m| (m.page_url.as_str(), m.work_external_id.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("https://a.example/", "a"),
            ("https://a.example/", "b"),
            ("https://z.example/", "a"),
            ("https://z.example/", "b")
        ]
    );
    let starts: Vec<u32> = matches[0].evidence.iter().map(|e| e.page_start).collect();
    assert_eq!(
        starts,
        [2, 0],
        "evidence keeps the order it was recorded in"
    );
}

async fn a_review_status_survives_the_match_being_found_again(store: Arc<dyn Store>) {
    let (page, work) = page_and_work(&*store).await;
    let hash = hash_of("pirated text");
    let verdict = [found(work, 0.9, &[(0, 0)])];
    store
        .record_page_matches(page, &hash, &verdict, at(1))
        .await
        .unwrap();
    let id = store.list_matches(&MatchFilter::default()).await.unwrap()[0].id;

    store
        .set_match_status(id, MatchStatus::NoticeSent)
        .await
        .unwrap();
    store
        .record_page_matches(page, &hash, &verdict, at(2))
        .await
        .unwrap();
    let record = &store.list_matches(&MatchFilter::default()).await.unwrap()[0];
    assert_eq!(record.status, MatchStatus::NoticeSent);

    store.set_match_status(id, MatchStatus::Open).await.unwrap();
    let record = &store.list_matches(&MatchFilter::default()).await.unwrap()[0];
    assert_eq!(record.status, MatchStatus::Open);
}

async fn a_failed_recording_changes_nothing(store: Arc<dyn Store>) {
    let (page, work) = page_and_work(&*store).await;
    let hash = hash_of("pirated text");
    let verdict = [found(work, 0.9, &[(0, 0)]), found(9999, 0.9, &[])];
    let result = store
        .record_page_matches(page, &hash, &verdict, at(1))
        .await;
    assert_eq!(not_found(result), "work 9999");
    assert!(
        store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.get_page(page).await.unwrap().matched_hash, None);

    let result = store
        .record_page_matches(page + 1000, &hash, &[], at(1))
        .await;
    assert_eq!(not_found(result), format!("page {}", page + 1000));
}

async fn scores_outside_zero_to_one_are_refused(store: Arc<dyn Store>) {
    let (page, work) = page_and_work(&*store).await;
    let hash = hash_of("pirated text");
    for score in [1.5, -0.1, f64::NAN] {
        let result = store
            .record_page_matches(page, &hash, &[found(work, score, &[])], at(1))
            .await;
        assert!(invalid(result).contains("score"));
    }
    let twice = [found(work, 0.5, &[]), found(work, 0.6, &[])];
    assert!(invalid(store.record_page_matches(page, &hash, &twice, at(1)).await).contains("twice"));
    assert!(
        store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

async fn unknown_match_status_change_is_not_found(store: Arc<dyn Store>) {
    let result = store.set_match_status(31337, MatchStatus::Removed).await;
    assert_eq!(not_found(result), "match 31337");
}

/// 20,000 passages × 6 columns is more than one multi-row `VALUES` statement can bind.
async fn a_match_with_twenty_thousand_evidence_passages_round_trips(store: Arc<dyn Store>) {
    let (page, work) = page_and_work(&*store).await;
    let hash = hash_of("pirated text");
    let passages: Vec<(u32, u32)> = (0..20_000).map(|n| (n * 20, (n * 37) % 5_000)).collect();
    let verdict = [found(work, 0.9, &passages)];
    for at_seconds in [1, 2] {
        store
            .record_page_matches(page, &hash, &verdict, at(at_seconds))
            .await
            .unwrap();
    }
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    assert_eq!(
        matches[0].evidence, verdict[0].evidence,
        "all passages, in order, recorded twice but stored once"
    );
}

/// At-least-once delivery can run two match jobs of one page at the same time: the verdicts
/// must not mix (no evidence of one kept beside the other's) and neither run may fail.
async fn concurrent_recordings_of_one_page_leave_one_whole_verdict(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let first = stored_work(&*store, holder, "first", "first work").await;
    let second = stored_work(&*store, holder, "second", "second work").await;
    let page = stored_page(&*store, "https://pirate.example/1", "page").await;
    let verdicts: Vec<Vec<NewMatch>> = (0..6_u32)
        .map(|n| {
            let passages: Vec<(u32, u32)> = (0..50 + n).map(|k| (k * 20 + n, k)).collect();
            let work = if n % 2 == 0 { first } else { second };
            let mut verdict = vec![found(work, 0.5, &passages)];
            if n % 3 == 0 {
                verdict.push(found(
                    if work == first { second } else { first },
                    0.4,
                    &[(n, n)],
                ));
            }
            verdict
        })
        .collect();
    let tasks: Vec<_> = verdicts
        .iter()
        .cloned()
        .map(|verdict| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .record_page_matches(page, &hash_of("page"), &verdict, at(1))
                    .await
                    .unwrap()
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let stored: Vec<(Id, Vec<EvidencePassage>)> = store
        .list_matches(&MatchFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|record| (record.work_id, record.evidence))
        .collect();
    let whole = verdicts.iter().any(|verdict| {
        let mut expected: Vec<(Id, Vec<EvidencePassage>)> = verdict
            .iter()
            .map(|m| (m.work_id, m.evidence.clone()))
            .collect();
        expected.sort_by_key(|(work, _)| if *work == first { 0 } else { 1 });
        expected == stored
    });
    assert!(
        whole,
        "the stored verdict is not one of the recorded ones: {stored:?}"
    );
}

async fn recording_counts_the_page_work_pairs_that_are_new(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let a = stored_work(&*store, holder, "a", "work a").await;
    let b = stored_work(&*store, holder, "b", "work b").await;
    let c = stored_work(&*store, holder, "c", "work c").await;
    let page = stored_page(&*store, "https://pirate.example/1", "page").await;
    let other = stored_page(&*store, "https://pirate.example/2", "other").await;
    let hash = hash_of("page");
    let record = |verdict: Vec<NewMatch>, seconds: i64| {
        let store = store.clone();
        let hash = hash.clone();
        async move {
            store
                .record_page_matches(page, &hash, &verdict, at(seconds))
                .await
                .unwrap()
                .new_matches
        }
    };

    assert_eq!(record(vec![], 1).await, 0);
    assert_eq!(
        record(vec![found(a, 0.5, &[(0, 0)]), found(b, 0.6, &[])], 2).await,
        2,
        "a first verdict is all new"
    );
    assert_eq!(
        record(vec![found(a, 0.5, &[(0, 0)]), found(b, 0.6, &[])], 3).await,
        0,
        "found again is not new"
    );
    assert_eq!(
        record(
            vec![found(a, 0.7, &[]), found(b, 0.6, &[]), found(c, 0.4, &[])],
            4
        )
        .await,
        1,
        "one more work"
    );
    // The same work on another page is another pair.
    assert_eq!(
        store
            .record_page_matches(other, &hash_of("other"), &[found(a, 0.5, &[])], at(5))
            .await
            .unwrap()
            .new_matches,
        1
    );
    assert_eq!(record(vec![found(c, 0.4, &[])], 6).await, 0);
    assert_eq!(
        record(vec![found(a, 0.5, &[]), found(c, 0.4, &[])], 7).await,
        1,
        "a pair dropped by the last verdict is new again"
    );
}

/// The aliases of all listed pages are read in one statement and handed to each match of
/// their own page, in the order they were stored, whatever the filter.
async fn every_listed_match_names_its_own_pages_aliases(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Mine").await.unwrap();
    let theirs = store.ensure_rights_holder("Theirs").await.unwrap();
    let my_work = stored_work(&*store, mine, "mine", "my text").await;
    let their_work = stored_work(&*store, theirs, "theirs", "their text").await;
    let first = stored_page(&*store, "https://pirate.example/1", "one").await;
    let second = stored_page(&*store, "https://pirate.example/2", "two").await;
    let bare = stored_page(&*store, "https://pirate.example/3", "three").await;
    for (page, text) in [(first, "one"), (second, "two"), (bare, "three")] {
        let verdict = [found(my_work, 0.9, &[]), found(their_work, 0.8, &[])];
        store
            .record_page_matches(page, &hash_of(text), &verdict, at(1))
            .await
            .unwrap();
    }
    for (alias_of, url, text) in [
        (second, "https://m.pirate.example/2", "two"),
        (first, "https://pirate.example/1?from=hot", "one"),
        (first, "https://m.pirate.example/1", "one"),
    ] {
        let alias = stored_page(&*store, url, text).await;
        store.set_page_alias(alias, Some(alias_of)).await.unwrap();
    }
    let aliases_listed = |filter: MatchFilter| {
        let store = store.clone();
        async move {
            listed(&*store, &filter, |record| {
                (record.page_id, record.work_id, record.aliases)
            })
            .await
        }
    };
    let first_aliases = vec![
        "https://pirate.example/1?from=hot".to_owned(),
        "https://m.pirate.example/1".to_owned(),
    ];
    let second_aliases = vec!["https://m.pirate.example/2".to_owned()];
    let all = MatchFilter {
        include_licensed: true,
        reviews: Vec::new(),
        ..MatchFilter::default()
    };
    assert_eq!(
        aliases_listed(all.clone()).await,
        [
            (first, my_work, first_aliases.clone()),
            (first, their_work, first_aliases.clone()),
            (second, my_work, second_aliases.clone()),
            (second, their_work, second_aliases.clone()),
            (bare, my_work, Vec::new()),
            (bare, their_work, Vec::new()),
        ]
    );
    let theirs_only = MatchFilter {
        rights_holder_id: Some(theirs),
        ..all.clone()
    };
    assert_eq!(
        aliases_listed(theirs_only).await,
        [
            (first, their_work, first_aliases.clone()),
            (second, their_work, second_aliases),
            (bare, their_work, Vec::new()),
        ]
    );
    let my_work_only = MatchFilter {
        work_id: Some(my_work),
        ..all
    };
    assert_eq!(
        aliases_listed(my_work_only).await[0],
        (first, my_work, first_aliases)
    );
}
