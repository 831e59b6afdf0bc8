//! Streamed match listings (`Store::stream_matches`), what exports read, and paginated ones
//! (`Store::match_listing`), what the web's lists read: the same matches as `list_matches`, a
//! page of rows at a time.

use std::sync::Arc;

use copytrace_store::{
    Id, ListingOrder, MatchFilter, MatchRecord, MatchStatus, NewDecision, NewMatch, Review, Store,
    WorkChapter,
};
use futures_util::TryStreamExt;

use crate::helpers::{at, contract_tests, found, hash_of, page, stored_work, work};

contract_tests!(
    streamed_matches_are_the_listed_ones_by_page_then_work,
    matches_are_filtered_by_site_time_score_and_status,
    a_stream_outlives_the_store_handle_it_came_from,
    listing_pages_are_the_listed_matches_filtered_ordered_and_cut_in_sql,
);

/// Pages copying each of three works, more matches than the stream reads in one statement.
const PAGES: usize = 350;

async fn streamed(store: &dyn Store, filter: &MatchFilter) -> Vec<MatchRecord> {
    store
        .stream_matches(filter)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// `list_matches` in the stream's order.
async fn listed(store: &dyn Store, filter: &MatchFilter) -> Vec<MatchRecord> {
    let mut records = store.list_matches(filter).await.unwrap();
    records.sort_by_key(|r| (r.page_id, r.work_id));
    records
}

/// Holder A's works `a1` (with chapters of 16 bytes) and `a2`, holder B's `b1`, each copied by
/// every page; a few pages are on a host licensed to B, one match of `a1` is rejected and those
/// of `a2` on every seventh page wait for review. Returns the holders and works.
async fn library_with_copies(store: &dyn Store) -> ([Id; 2], [Id; 3]) {
    let a = store.ensure_rights_holder("A").await.unwrap();
    let b = store.ensure_rights_holder("B").await.unwrap();
    let text = "x".repeat(64);
    let mut chaptered = work(a, "a1", &text);
    chaptered.chapters = (0..4)
        .map(|ordinal| WorkChapter {
            ordinal,
            title: format!("第{}章", ordinal + 1),
            start: ordinal * 16,
            end: ordinal * 16 + 16,
        })
        .collect();
    let a1 = store.upsert_work(&chaptered).await.unwrap().0;
    let a2 = stored_work(store, a, "a2", "text of a2").await;
    let b1 = stored_work(store, b, "b1", "text of b1").await;
    store
        .add_licensed_hosts(b, None, &["licensed.example".to_owned()])
        .await
        .unwrap();
    for n in 0..PAGES {
        // Stored in an order that is not the URL order, so page id order differs from it.
        let host = if n % 50 == 3 {
            "licensed.example"
        } else {
            "pirate.example"
        };
        let url = format!("https://{host}/{}", PAGES - n);
        let text = format!("page {n}");
        let id = store
            .upsert_page(&page(&url, &text, at(0)))
            .await
            .unwrap()
            .id;
        let pending = NewMatch {
            auto_confirm: n % 7 != 0,
            ..found(a2, 0.6, &[])
        };
        let verdict = [
            found(a1, 0.9, &[(0, (n % 4) as u32 * 16), (20, 40)]),
            pending,
            found(b1, 0.7, &[(5, 0)]),
        ];
        store
            .record_page_matches(id, &hash_of(&text), &verdict, at(n as i64))
            .await
            .unwrap();
    }
    let first = listed(store, &MatchFilter::default()).await[0].id;
    store
        .decide_match(&NewDecision {
            match_id: first,
            rights_holder_id: None,
            review: Review::Rejected,
            actor: "analyst".into(),
            note: String::new(),
            at: at(1_000),
        })
        .await
        .unwrap();
    ([a, b], [a1, a2, b1])
}

async fn streamed_matches_are_the_listed_ones_by_page_then_work(store: Arc<dyn Store>) {
    let ([a, b], [a1, a2, _]) = library_with_copies(&*store).await;
    let everything = MatchFilter {
        include_licensed: true,
        ..MatchFilter::default()
    };
    let all = streamed(&*store, &everything).await;
    assert_eq!(all.len(), 3 * PAGES, "every match, across several reads");
    assert!(
        all.windows(2)
            .all(|w| (w[0].page_id, w[0].work_id) < (w[1].page_id, w[1].work_id)),
        "ordered by page, then work, each pair once"
    );
    assert_eq!(all, listed(&*store, &everything).await);
    let chapters = &all.iter().find(|r| r.work_id == a1).unwrap().chapters;
    assert_eq!(
        chapters.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
        [0, 2],
        "chapters named from the evidence: {chapters:?}"
    );

    let filters = [
        MatchFilter::default(),
        MatchFilter {
            rights_holder_id: Some(a),
            ..MatchFilter::default()
        },
        MatchFilter {
            rights_holder_id: Some(b),
            include_licensed: true,
            ..MatchFilter::default()
        },
        MatchFilter {
            work_id: Some(a2),
            reviews: vec![Review::Pending],
            ..MatchFilter::default()
        },
        MatchFilter {
            reviews: vec![Review::Pending, Review::Confirmed],
            ..MatchFilter::default()
        },
        MatchFilter {
            reviews: vec![Review::Rejected],
            ..MatchFilter::default()
        },
    ];
    for filter in filters {
        let expected = listed(&*store, &filter).await;
        assert!(!expected.is_empty(), "{filter:?} selects something");
        assert_eq!(streamed(&*store, &filter).await, expected, "{filter:?}");
    }
    let licensed = streamed(&*store, &everything)
        .await
        .into_iter()
        .filter(|r| r.status == copytrace_store::MatchStatus::Licensed)
        .count();
    assert_eq!(licensed, PAGES / 50, "B's matches on its licensed host");
    assert!(
        streamed(&*store, &MatchFilter::default())
            .await
            .iter()
            .all(|r| r.status != copytrace_store::MatchStatus::Licensed),
        "licensed matches only when asked for"
    );
}

async fn matches_are_filtered_by_site_time_score_and_status(store: Arc<dyn Store>) {
    let (_, [a1, a2, b1]) = library_with_copies(&*store).await;
    let count = |filter: MatchFilter| {
        let store = store.clone();
        async move {
            let listed = listed(&*store, &filter).await;
            assert_eq!(streamed(&*store, &filter).await, listed, "{filter:?}");
            listed
        }
    };
    // Pages n = 3, 53, …, 303 (7 of them) are on the licensed host; its subdomains would be too.
    let on_licensed_host = count(MatchFilter {
        site: Some("Licensed.Example".into()),
        include_licensed: true,
        ..MatchFilter::default()
    })
    .await;
    assert_eq!(on_licensed_host.len(), 3 * PAGES / 50);
    assert!(
        on_licensed_host
            .iter()
            .all(|r| r.page_url.starts_with("https://licensed.example/"))
    );
    assert_eq!(
        count(MatchFilter {
            site: Some("example".into()),
            statuses: vec![copytrace_store::MatchStatus::Licensed],
            ..MatchFilter::default()
        })
        .await
        .iter()
        .map(|r| r.work_id)
        .collect::<Vec<_>>(),
        vec![b1; PAGES / 50],
        "asking for the licensed status lists them"
    );
    assert!(
        count(MatchFilter {
            site: Some("other.example".into()),
            ..MatchFilter::default()
        })
        .await
        .is_empty()
    );
    // Page n's matches were first seen at n seconds; a1 scores 0.9, a2 0.6, b1 0.7.
    let late_and_strong = count(MatchFilter {
        since: Some(at(300)),
        min_score: Some(0.8),
        ..MatchFilter::default()
    })
    .await;
    assert_eq!(late_and_strong.len(), PAGES - 300);
    assert!(late_and_strong.iter().all(|r| r.work_id == a1));
    let early_a2 = count(MatchFilter {
        work_id: Some(a2),
        until: Some(at(10)),
        ..MatchFilter::default()
    })
    .await;
    assert_eq!(early_a2.len(), 10);
}

async fn a_stream_outlives_the_store_handle_it_came_from(store: Arc<dyn Store>) {
    library_with_copies(&*store).await;
    let expected = listed(&*store, &MatchFilter::default()).await;
    let handle = store.clone();
    let stream = handle
        .stream_matches(&MatchFilter::default())
        .await
        .unwrap();
    drop(handle);
    let records: Vec<MatchRecord> = tokio::spawn(stream.try_collect()).await.unwrap().unwrap();
    assert_eq!(records, expected);
}

/// Every page of `match_listing` for `filter` in `order`, 100 at a time, each page full but
/// the last, which alone says no more follow.
async fn paged(store: &dyn Store, filter: &MatchFilter, order: ListingOrder) -> Vec<MatchRecord> {
    let mut all = Vec::new();
    loop {
        let page = store
            .match_listing(filter, order, all.len() as u64, 100)
            .await
            .unwrap();
        let read = page.matches.len();
        all.extend(page.matches);
        if !page.more {
            assert!(read <= 100, "{filter:?}: a page holds at most its size");
            return all;
        }
        assert_eq!(read, 100, "{filter:?}: a page followed by more is full");
    }
}

async fn listing_pages_are_the_listed_matches_filtered_ordered_and_cut_in_sql(
    store: Arc<dyn Store>,
) {
    let ([a, b], [_, a2, _]) = library_with_copies(&*store).await;
    let filters = [
        MatchFilter::default(),
        MatchFilter {
            include_licensed: true,
            ..MatchFilter::default()
        },
        MatchFilter {
            rights_holder_id: Some(a),
            ..MatchFilter::default()
        },
        MatchFilter {
            rights_holder_id: Some(b),
            statuses: vec![MatchStatus::Licensed],
            ..MatchFilter::default()
        },
        MatchFilter {
            work_id: Some(a2),
            reviews: vec![Review::Pending],
            ..MatchFilter::default()
        },
        MatchFilter {
            site: Some("pirate.example".into()),
            since: Some(at(100)),
            until: Some(at(200)),
            min_score: Some(0.65),
            ..MatchFilter::default()
        },
        MatchFilter {
            site: Some("'; DROP TABLE matches; --".into()),
            ..MatchFilter::default()
        },
    ];
    for filter in filters {
        let mut expected = listed(&*store, &filter).await;
        for record in &mut expected {
            record.evidence.clear();
            record.chapters.clear();
        }
        expected.sort_by(|x, y| y.first_seen.cmp(&x.first_seen).then(y.id.cmp(&x.id)));
        assert_eq!(
            paged(&*store, &filter, ListingOrder::Newest).await,
            expected,
            "{filter:?}, newest first"
        );
        expected.sort_by(|x, y| y.score.total_cmp(&x.score).then(x.id.cmp(&y.id)));
        assert_eq!(
            paged(&*store, &filter, ListingOrder::HighestScore).await,
            expected,
            "{filter:?}, highest score first"
        );
    }
    assert_eq!(
        store
            .match_listing(&MatchFilter::default(), ListingOrder::Newest, 10_000, 50)
            .await
            .unwrap(),
        copytrace_store::MatchListing {
            more: false,
            matches: Vec::new(),
        },
        "a page past the end is empty"
    );
    assert!(
        store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap()
            .len()
            > 1,
        "the hostile site filter dropped nothing"
    );
}
