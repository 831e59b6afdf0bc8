//! Statistics on a fixture whose expected values are computed by hand (in the comments).

use std::sync::Arc;

use copytrace_store::{
    Availability, DailyStats, HolderStats, MatchStatus, NewMatch, PageCheck, Review, StatsFilter,
    Store,
};

use crate::helpers::{at, contract_tests, found, hash_of, page, stored_work};

contract_tests!(
    work_statistics_count_each_works_copies,
    site_statistics_count_each_hosts_copies_and_lifetimes,
    daily_statistics_count_each_event_on_its_own_day,
    holder_statistics_and_first_copies,
    a_filter_that_means_nothing_is_refused,
);

const DAY: i64 = 86_400;

/// The fixture's ids.
struct Fixture {
    holder: i64,
    other_holder: i64,
    a: i64,
    b: i64,
    c: i64,
}

/// Holder 1 owns works A and B, holder 2 owns C.
///
/// | page | host | stored | matches (score, review) |
/// |---|---|---|---|
/// | p1 | pirate.example | day 0 | A (0.9, confirmed), B (0.3, pending) |
/// | p2 | pirate.example | day 0 | A (0.7, confirmed) |
/// | p3 | m.pirate.example | day 0 | A (0.8, confirmed), removed on day 2 |
/// | p4 | other.example | day 1 | C (0.95, confirmed) |
/// | p5 | partner.example (licensed to holder 1) | day 0 | A (0.9): never counted |
///
/// Coverage is half the score (the `found` helper).
async fn fixture(store: &dyn Store) -> Fixture {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other_holder = store.ensure_rights_holder("Zongheng").await.unwrap();
    let a = stored_work(store, holder, "a", "text of a").await;
    let b = stored_work(store, holder, "b", "text of b").await;
    let c = stored_work(store, other_holder, "c", "text of c").await;
    store
        .add_licensed_hosts(holder, None, &["partner.example".to_owned()])
        .await
        .unwrap();
    let pending = |work, score| NewMatch {
        auto_confirm: false,
        ..found(work, score, &[(0, 0)])
    };
    let pages = [
        (
            "https://pirate.example/1",
            0,
            vec![found(a, 0.9, &[(0, 0)]), pending(b, 0.3)],
        ),
        (
            "https://pirate.example/2",
            0,
            vec![found(a, 0.7, &[(0, 0)])],
        ),
        (
            "https://m.pirate.example/3",
            0,
            vec![found(a, 0.8, &[(0, 0)])],
        ),
        (
            "https://other.example/4",
            DAY,
            vec![found(c, 0.95, &[(0, 0)])],
        ),
        (
            "https://partner.example/5",
            0,
            vec![found(a, 0.9, &[(0, 0)])],
        ),
    ];
    for (url, seconds, verdict) in pages {
        let id = store
            .upsert_page(&page(url, url, at(seconds)))
            .await
            .unwrap()
            .id;
        store
            .record_page_matches(id, &hash_of(url), &verdict, at(seconds + 60))
            .await
            .unwrap();
        if url.contains("/3") {
            store
                .record_page_check(&PageCheck {
                    page_id: id,
                    run_id: None,
                    checked_at: at(2 * DAY),
                    availability: Availability::Gone,
                    http_status: Some(404),
                    detail: "HTTP 404".to_owned(),
                    still_present: Vec::new(),
                    removed: vec![a],
                })
                .await
                .unwrap();
        }
    }
    Fixture {
        holder,
        other_holder,
        a,
        b,
        c,
    }
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-9
}

async fn work_statistics_count_each_works_copies(store: Arc<dyn Store>) {
    let f = fixture(&*store).await;
    let all = store.work_stats(&StatsFilter::default()).await.unwrap();
    let summary: Vec<_> = all
        .iter()
        .map(|w| (w.work_id, w.pages, w.sites, w.online, w.removed))
        .collect();
    // A: p1, p2, p3 on two hosts (the licensed p5 left out), p3 removed.
    assert_eq!(
        summary,
        [(f.a, 3, 2, 2, 1), (f.b, 1, 1, 1, 0), (f.c, 1, 1, 1, 0)]
    );
    let a = &all[0];
    assert!(
        close(a.best_score, 0.9) && close(a.mean_score, 0.8),
        "{a:?}"
    );
    assert!(close(a.best_coverage, 0.45), "{a:?}");
    assert_eq!((a.first_seen, a.last_seen), (at(60), at(60)));
    assert_eq!(a.external_id, "a");
    assert_eq!(a.rights_holder_id, f.holder);

    let confirmed = StatsFilter {
        reviews: vec![Review::Confirmed],
        ..StatsFilter::default()
    };
    let ids: Vec<i64> = store
        .work_stats(&confirmed)
        .await
        .unwrap()
        .iter()
        .map(|w| w.work_id)
        .collect();
    assert_eq!(ids, [f.a, f.c], "B's only copy waits for review");

    let theirs = StatsFilter {
        rights_holder_id: Some(f.other_holder),
        ..StatsFilter::default()
    };
    let ids: Vec<i64> = store
        .work_stats(&theirs)
        .await
        .unwrap()
        .iter()
        .map(|w| w.work_id)
        .collect();
    assert_eq!(ids, [f.c]);

    // A site includes its subdomains; a score floor and a state narrow further.
    let pirate = StatsFilter {
        site: Some("pirate.example".to_owned()),
        min_score: Some(0.75),
        ..StatsFilter::default()
    };
    let summary: Vec<_> = store
        .work_stats(&pirate)
        .await
        .unwrap()
        .iter()
        .map(|w| (w.work_id, w.pages, w.sites))
        .collect();
    assert_eq!(summary, [(f.a, 2, 2)], "p1 (0.9) and p3 (0.8)");
    let removed = StatsFilter {
        statuses: vec![MatchStatus::Removed],
        ..StatsFilter::default()
    };
    let summary: Vec<_> = store
        .work_stats(&removed)
        .await
        .unwrap()
        .iter()
        .map(|w| (w.work_id, w.pages, w.removed))
        .collect();
    assert_eq!(summary, [(f.a, 1, 1)]);

    // First seen on day 1 or later: C only.
    let later = StatsFilter {
        since: Some(at(DAY)),
        ..StatsFilter::default()
    };
    let ids: Vec<i64> = store
        .work_stats(&later)
        .await
        .unwrap()
        .iter()
        .map(|w| w.work_id)
        .collect();
    assert_eq!(ids, [f.c]);
}

async fn site_statistics_count_each_hosts_copies_and_lifetimes(store: Arc<dyn Store>) {
    let f = fixture(&*store).await;
    let sites = store.site_stats(&StatsFilter::default()).await.unwrap();
    let summary: Vec<_> = sites
        .iter()
        .map(|s| (s.host.as_str(), s.pages, s.works, s.copies, s.removed))
        .collect();
    assert_eq!(
        summary,
        [
            ("m.pirate.example", 1, 1, 1, 1),
            ("other.example", 1, 1, 1, 0),
            ("pirate.example", 2, 2, 3, 0),
        ]
    );
    assert_eq!(sites[1].first_seen, at(DAY + 60));

    let lifetimes = store.copy_lifetimes(&StatsFilter::default()).await.unwrap();
    let removed: Vec<_> = lifetimes
        .iter()
        .filter(|(_, l)| l.removed_at.is_some())
        .map(|(host, l)| (host.as_str(), l.work_id, l.first_seen, l.removed_at))
        .collect();
    assert_eq!(
        removed,
        [("m.pirate.example", f.a, at(60), Some(at(2 * DAY)))]
    );
    assert_eq!(lifetimes.len(), 5, "every counted copy");
    assert!(
        lifetimes.windows(2).all(|w| w[0].0 <= w[1].0),
        "grouped by host"
    );
}

async fn daily_statistics_count_each_event_on_its_own_day(store: Arc<dyn Store>) {
    let f = fixture(&*store).await;
    let day = |n: i64| at(n * DAY).date_naive().to_string();
    let daily = store.daily_stats(&StatsFilter::default()).await.unwrap();
    assert_eq!(
        daily,
        [
            // p1 A, p1 B, p2 A, p3 A; p1, p2, p3 and p5 stored (crawling is not per holder).
            DailyStats {
                day: day(0),
                new_matches: 4,
                removals: 0,
                pages_crawled: 4,
            },
            DailyStats {
                day: day(1),
                new_matches: 1,
                removals: 0,
                pages_crawled: 1,
            },
            DailyStats {
                day: day(2),
                new_matches: 0,
                removals: 1,
                pages_crawled: 0,
            },
        ]
    );
    // A range keeps the events inside it: the removal on day 2 of a copy first seen on day 0.
    let from_day_two = StatsFilter {
        since: Some(at(2 * DAY)),
        ..StatsFilter::default()
    };
    assert_eq!(
        store.daily_stats(&from_day_two).await.unwrap(),
        [DailyStats {
            day: day(2),
            new_matches: 0,
            removals: 1,
            pages_crawled: 0,
        }]
    );
    // One holder's view counts only pages carrying its copies.
    let theirs = StatsFilter {
        rights_holder_id: Some(f.other_holder),
        ..StatsFilter::default()
    };
    assert_eq!(
        store.daily_stats(&theirs).await.unwrap(),
        [DailyStats {
            day: day(1),
            new_matches: 1,
            removals: 0,
            pages_crawled: 1,
        }]
    );
    let _ = (f.holder, f.a, f.b, f.c);
}

async fn holder_statistics_and_first_copies(store: Arc<dyn Store>) {
    let f = fixture(&*store).await;
    let holders = store.holder_stats(&StatsFilter::default()).await.unwrap();
    assert_eq!(
        holders,
        [
            HolderStats {
                rights_holder_id: f.holder,
                name: "Yuewen".to_owned(),
                works_copied: 2,
                pages: 3,
                sites: 2,
                copies: 4,
                confirmed: 3,
                pending: 1,
                removed: 1,
            },
            HolderStats {
                rights_holder_id: f.other_holder,
                name: "Zongheng".to_owned(),
                works_copied: 1,
                pages: 1,
                sites: 1,
                copies: 1,
                confirmed: 1,
                pending: 0,
                removed: 0,
            },
        ]
    );
    let firsts: Vec<_> = store
        .first_copies(&StatsFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.work_id, c.host, c.first_seen))
        .collect();
    assert_eq!(
        firsts,
        [
            (f.a, "m.pirate.example".to_owned(), at(60)),
            (f.a, "pirate.example".to_owned(), at(60)),
            (f.b, "pirate.example".to_owned(), at(60)),
            (f.c, "other.example".to_owned(), at(DAY + 60)),
        ]
    );
}

async fn a_filter_that_means_nothing_is_refused(store: Arc<dyn Store>) {
    let backwards = StatsFilter {
        since: Some(at(DAY)),
        until: Some(at(0)),
        ..StatsFilter::default()
    };
    assert!(store.work_stats(&backwards).await.is_err());
    let derived = StatsFilter {
        statuses: vec![MatchStatus::Licensed],
        ..StatsFilter::default()
    };
    assert!(store.site_stats(&derived).await.is_err());
}
