//! Removal checks: which pages are re-checked, and what a check of a page records and changes.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use copytrace_store::{
    Availability, Id, InfringingPage, MatchStatus, PageCheck, PageCheckOutcome, PageCheckRecord,
    RunKind, Store,
};

use crate::helpers::{
    at, contract_tests, found, hash_of, invalid, manual_run, matches_of, not_found, reject,
    statuses, stored_page, stored_work,
};

contract_tests!(
    infringing_pages_are_the_pages_with_unrejected_matches,
    infringing_pages_are_paged_by_id,
    a_gone_check_moves_open_and_notice_sent_matches_to_removed,
    a_check_that_finds_the_copy_again_reopens_removed_matches,
    an_older_check_does_not_override_a_newer_one,
    a_check_never_touches_the_page_text_or_the_evidence,
    a_refused_check_records_nothing,
    checks_are_listed_oldest_first,
    a_status_other_than_removed_clears_removed_at,
    an_alias_still_showing_the_copy_takes_the_match_over_with_its_first_seen_time,
    an_alias_whose_text_is_evidence_stays_in_its_group_when_the_page_changes,
);

/// Works `a`, `b`, `c`, `d` of one holder, in this order.
async fn works(store: &dyn Store) -> [Id; 4] {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut ids = [0; 4];
    for (id, name) in ids.iter_mut().zip(["a", "b", "c", "d"]) {
        *id = stored_work(store, holder, name, &format!("text of work {name}")).await;
    }
    ids
}

/// A page matched to `works`, each match then set to its status.
async fn matched_page(store: &dyn Store, url: &str, works: &[(Id, MatchStatus)]) -> Id {
    let text = format!("copied text on {url}");
    let page = stored_page(store, url, &text).await;
    // Recorded in reverse, so an ordered answer is the store's doing.
    let verdict: Vec<_> = works
        .iter()
        .rev()
        .map(|&(work, _)| found(work, 0.8, &[(0, 0), (20, 40)]))
        .collect();
    store
        .record_page_matches(page, &hash_of(&text), &verdict, at(1))
        .await
        .unwrap();
    for record in matches_of(store, page).await {
        let status = works.iter().find(|(w, _)| *w == record.work_id).unwrap().1;
        store.set_match_status(record.id, status).await.unwrap();
    }
    page
}

fn check(page_id: Id, checked_at: DateTime<Utc>, availability: Availability) -> PageCheck {
    PageCheck {
        page_id,
        run_id: None,
        checked_at,
        availability,
        http_status: Some(404),
        detail: "HTTP 404".to_owned(),
        still_present: Vec::new(),
        removed: Vec::new(),
    }
}

async fn infringing_pages_are_the_pages_with_unrejected_matches(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let [a, b, c, d] = works(&*store).await;
    let mixed = matched_page(
        &*store,
        "https://pirate.example/mixed",
        &[(a, Open), (b, NoticeSent), (c, Removed), (d, Open)],
    )
    .await;
    reject(&*store, mixed, d).await;
    let rejected_only =
        matched_page(&*store, "https://pirate.example/rejected", &[(a, Open)]).await;
    reject(&*store, rejected_only, a).await;
    let _without_matches = matched_page(&*store, "https://pirate.example/none", &[]).await;
    let _never_matched = stored_page(&*store, "https://pirate.example/new", "new").await;
    let single = matched_page(&*store, "https://pirate.example/single", &[(d, Open)]).await;

    let pages = store.infringing_pages(0, 100).await.unwrap();
    assert_eq!(
        pages,
        [
            InfringingPage {
                page_id: mixed,
                url: "https://pirate.example/mixed".to_owned(),
                content_hash: hash_of("copied text on https://pirate.example/mixed"),
                work_ids: vec![a, b, c],
                etag: None,
                last_modified: None,
                stale_evidence: Vec::new(),
            },
            InfringingPage {
                page_id: single,
                url: "https://pirate.example/single".to_owned(),
                content_hash: hash_of("copied text on https://pirate.example/single"),
                work_ids: vec![d],
                etag: None,
                last_modified: None,
                stale_evidence: Vec::new(),
            }
        ]
    );
}

async fn infringing_pages_are_paged_by_id(store: Arc<dyn Store>) {
    let [a, b, ..] = works(&*store).await;
    let mut pages = Vec::new();
    for n in 0..5 {
        let works = [(a, MatchStatus::Open), (b, MatchStatus::Open)];
        let works = if n == 2 { &works[..1] } else { &works[..] };
        pages.push(matched_page(&*store, &format!("https://pirate.example/{n}"), works).await);
    }

    let mut walked = Vec::new();
    let mut after = 0;
    loop {
        let batch = store.infringing_pages(after, 2).await.unwrap();
        assert!(batch.len() <= 2, "{batch:?}");
        let Some(last) = batch.last() else { break };
        after = last.page_id;
        walked.extend(batch.into_iter().map(|p| (p.page_id, p.work_ids)));
    }
    let expected: Vec<(Id, Vec<Id>)> = pages
        .iter()
        .enumerate()
        .map(|(n, &page)| (page, if n == 2 { vec![a] } else { vec![a, b] }))
        .collect();
    assert_eq!(
        walked, expected,
        "every page once, each with all its works, whatever the page size"
    );
    assert!(store.infringing_pages(0, 0).await.unwrap().is_empty());
    assert!(
        store
            .infringing_pages(pages[4], 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_gone_check_moves_open_and_notice_sent_matches_to_removed(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let [a, b, c, d] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, Open), (b, NoticeSent), (c, Open), (d, Open)],
    )
    .await;
    reject(&*store, page, c).await;
    let untouched = matched_page(&*store, "https://pirate.example/2", &[(a, Open)]).await;
    let fresh = store.get_page(page).await.unwrap();
    assert_eq!(
        (fresh.availability, fresh.availability_checked_at),
        (None, None),
        "never checked"
    );

    let gone = PageCheck {
        removed: vec![a, b, c],
        ..check(page, at(100), Availability::Gone)
    };
    assert_eq!(
        store.record_page_check(&gone).await.unwrap(),
        PageCheckOutcome {
            removed: 2,
            reopened: 0
        }
    );
    assert_eq!(
        statuses(&*store, page).await,
        [
            (a, Removed, Some(at(100))),
            (b, Removed, Some(at(100))),
            (c, Open, None),
            (d, Open, None)
        ],
        "a rejected match is not moved; a work not named is not touched"
    );
    let checked = store.get_page(page).await.unwrap();
    assert_eq!(
        (checked.availability, checked.availability_checked_at),
        (Some(Availability::Gone), Some(at(100)))
    );
    assert_eq!(
        statuses(&*store, untouched).await,
        [(a, Open, None)],
        "another page's match of the same work is not touched"
    );

    // Still gone a day later: nothing moves again, and the first removal time stays.
    let again = PageCheck {
        removed: vec![a, b],
        ..check(page, at(86_500), Availability::Gone)
    };
    assert_eq!(
        store.record_page_check(&again).await.unwrap(),
        PageCheckOutcome::default()
    );
    assert_eq!(
        statuses(&*store, page).await[..2],
        [(a, Removed, Some(at(100))), (b, Removed, Some(at(100)))]
    );
    assert_eq!(
        store.get_page(page).await.unwrap().availability_checked_at,
        Some(at(86_500))
    );
}

async fn a_check_that_finds_the_copy_again_reopens_removed_matches(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let [a, b, c, d] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, Open), (b, NoticeSent), (c, Open), (d, Open)],
    )
    .await;
    reject(&*store, page, c).await;
    let gone = PageCheck {
        removed: vec![a, b],
        ..check(page, at(100), Availability::SoftRemoved)
    };
    store.record_page_check(&gone).await.unwrap();

    // The copy of a is back, b's is still gone; c and d were never removed.
    let back = PageCheck {
        http_status: Some(200),
        detail: "1 of 2 works back".to_owned(),
        still_present: vec![a, c, d],
        removed: vec![b],
        ..check(page, at(200), Availability::Online)
    };
    assert_eq!(
        store.record_page_check(&back).await.unwrap(),
        PageCheckOutcome {
            removed: 0,
            reopened: 1
        }
    );
    assert_eq!(
        statuses(&*store, page).await,
        [
            (a, Open, None),
            (b, Removed, Some(at(100))),
            (c, Open, None),
            (d, Open, None)
        ]
    );
    assert_eq!(
        store.get_page(page).await.unwrap().availability,
        Some(Availability::Online)
    );

    let all_back = PageCheck {
        still_present: vec![a, b, c, d],
        ..check(page, at(300), Availability::Online)
    };
    assert_eq!(
        store.record_page_check(&all_back).await.unwrap(),
        PageCheckOutcome {
            removed: 0,
            reopened: 1
        }
    );
    assert_eq!(statuses(&*store, page).await[1], (b, Open, None));
}

async fn an_older_check_does_not_override_a_newer_one(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let [a, b, ..] = works(&*store).await;
    let page = matched_page(&*store, "https://pirate.example/1", &[(a, Open), (b, Open)]).await;
    let newer = PageCheck {
        http_status: Some(200),
        still_present: vec![a, b],
        ..check(page, at(200), Availability::Online)
    };
    store.record_page_check(&newer).await.unwrap();

    // A slower worker of an earlier run records its check after the newer one.
    let older = PageCheck {
        removed: vec![a, b],
        ..check(page, at(100), Availability::Gone)
    };
    assert_eq!(
        store.record_page_check(&older).await.unwrap(),
        PageCheckOutcome::default(),
        "a superseded verdict moves no match"
    );
    let stored = store.get_page(page).await.unwrap();
    assert_eq!(
        (stored.availability, stored.availability_checked_at),
        (Some(Availability::Online), Some(at(200)))
    );
    assert_eq!(
        statuses(&*store, page).await,
        [(a, Open, None), (b, Open, None)]
    );
    let history: Vec<(DateTime<Utc>, Availability)> = store
        .page_checks(page)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.checked_at, c.availability))
        .collect();
    assert_eq!(
        history,
        [
            (at(100), Availability::Gone),
            (at(200), Availability::Online)
        ],
        "it is still part of the history, in time order"
    );

    // A check at the same instant as the latest one is not older: it applies.
    let same_time = PageCheck {
        removed: vec![a],
        ..check(page, at(200), Availability::SoftRemoved)
    };
    assert_eq!(
        store.record_page_check(&same_time).await.unwrap().removed,
        1
    );
    assert_eq!(
        store.get_page(page).await.unwrap().availability,
        Some(Availability::SoftRemoved)
    );
}

async fn a_check_never_touches_the_page_text_or_the_evidence(store: Arc<dyn Store>) {
    let [a, b, ..] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, MatchStatus::Open), (b, MatchStatus::NoticeSent)],
    )
    .await;
    let before_page = store.get_page(page).await.unwrap();
    let before_matches = matches_of(&*store, page).await;

    let gone = PageCheck {
        removed: vec![a, b],
        ..check(page, at(100), Availability::Gone)
    };
    store.record_page_check(&gone).await.unwrap();

    let after_page = store.get_page(page).await.unwrap();
    assert_eq!(
        (
            &after_page.text,
            &after_page.content_hash,
            &after_page.matched_hash,
            after_page.http_status,
            &after_page.title,
            after_page.last_seen
        ),
        (
            &before_page.text,
            &before_page.content_hash,
            &before_page.matched_hash,
            before_page.http_status,
            &before_page.title,
            before_page.last_seen
        )
    );
    let after_matches = matches_of(&*store, page).await;
    for (before, after) in before_matches.iter().zip(&after_matches) {
        assert_eq!(after.evidence, before.evidence, "the proof stays");
        assert_eq!(
            (after.score, after.first_seen, after.last_seen),
            (before.score, before.first_seen, before.last_seen)
        );
        assert_eq!(after.status, MatchStatus::Removed);
    }
}

async fn a_refused_check_records_nothing(store: Arc<dyn Store>) {
    let [a, b, ..] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, MatchStatus::Open), (b, MatchStatus::Open)],
    )
    .await;

    assert_eq!(
        not_found(
            store
                .record_page_check(&check(page + 1000, at(1), Availability::Gone))
                .await
        ),
        format!("page {}", page + 1000)
    );
    let unknown_run = PageCheck {
        run_id: Some(4242),
        removed: vec![a],
        ..check(page, at(1), Availability::Gone)
    };
    assert_eq!(
        not_found(store.record_page_check(&unknown_run).await),
        "run 4242"
    );
    let both = PageCheck {
        removed: vec![a, b],
        still_present: vec![b],
        ..check(page, at(1), Availability::Online)
    };
    let why = invalid(store.record_page_check(&both).await);
    assert!(why.contains(&format!("work {b}")), "{why}");

    assert!(store.page_checks(page).await.unwrap().is_empty());
    let stored = store.get_page(page).await.unwrap();
    assert_eq!(
        (stored.availability, stored.availability_checked_at),
        (None, None)
    );
    assert!(
        matches_of(&*store, page)
            .await
            .iter()
            .all(|m| m.status == MatchStatus::Open)
    );
}

async fn checks_are_listed_oldest_first(store: Arc<dyn Store>) {
    let [a, ..] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, MatchStatus::Open)],
    )
    .await;
    let other = matched_page(
        &*store,
        "https://pirate.example/2",
        &[(a, MatchStatus::Open)],
    )
    .await;
    assert!(store.page_checks(page).await.unwrap().is_empty());
    assert!(store.page_checks(page + 1000).await.unwrap().is_empty());

    let (run, _) = store
        .create_run(&manual_run(RunKind::Dedup, None, at(0)), None)
        .await
        .unwrap();
    let checks = [
        PageCheck {
            run_id: Some(run),
            http_status: None,
            detail: "could not resolve host".to_owned(),
            ..check(page, at(300), Availability::Unreachable)
        },
        PageCheck {
            http_status: Some(200),
            detail: "all works present".to_owned(),
            ..check(page, at(100), Availability::Online)
        },
        check(other, at(200), Availability::Gone),
        PageCheck {
            http_status: Some(410),
            detail: "HTTP 410".to_owned(),
            ..check(page, at(200), Availability::Gone)
        },
    ];
    for c in &checks {
        store.record_page_check(c).await.unwrap();
    }
    let history = store.page_checks(page).await.unwrap();
    // Ids are the store's; everything else is what was recorded, in time order.
    let expected: Vec<PageCheckRecord> = [&checks[1], &checks[3], &checks[0]]
        .iter()
        .zip(&history)
        .map(|(c, stored)| PageCheckRecord {
            id: stored.id,
            page_id: page,
            run_id: c.run_id,
            checked_at: c.checked_at,
            availability: c.availability,
            http_status: c.http_status,
            detail: c.detail.clone(),
        })
        .collect();
    assert_eq!(history.len(), 3);
    assert_eq!(history, expected);
    assert!(history.windows(2).all(|w| w[0].id != w[1].id));
    assert_eq!(store.page_checks(other).await.unwrap().len(), 1);
    assert_eq!(
        store.get_page(page).await.unwrap().availability,
        Some(Availability::Unreachable),
        "the latest check is the page's availability, whatever the order they came in"
    );
}

async fn a_status_other_than_removed_clears_removed_at(store: Arc<dyn Store>) {
    let [a, ..] = works(&*store).await;
    let page = matched_page(
        &*store,
        "https://pirate.example/1",
        &[(a, MatchStatus::Open)],
    )
    .await;
    store
        .record_page_check(&PageCheck {
            removed: vec![a],
            ..check(page, at(100), Availability::Gone)
        })
        .await
        .unwrap();
    let id = matches_of(&*store, page).await[0].id;

    store
        .set_match_status(id, MatchStatus::Removed)
        .await
        .unwrap();
    assert_eq!(
        statuses(&*store, page).await,
        [(a, MatchStatus::Removed, Some(at(100)))],
        "setting the same status keeps when the removal was seen"
    );
    store
        .set_match_status(id, MatchStatus::NoticeSent)
        .await
        .unwrap();
    assert_eq!(
        statuses(&*store, page).await,
        [(a, MatchStatus::NoticeSent, None)]
    );
}

/// A removal check found a page gone while its alias still shows the copy: the alias takes the
/// very match over (its id, first-seen time and review), the page and its other URLs become the
/// alias's aliases, and the alias's check reopens the match.
async fn an_alias_still_showing_the_copy_takes_the_match_over_with_its_first_seen_time(
    store: Arc<dyn Store>,
) {
    let [a, b, ..] = works(&*store).await;
    let page = stored_page(&*store, "https://pirate.example/7.html", "chapter seven").await;
    let alias = stored_page(
        &*store,
        "https://pirate.example/7.html?from=hot",
        "chapter seven",
    )
    .await;
    let mobile = stored_page(&*store, "https://m.pirate.example/7.html", "chapter seven").await;
    let other = stored_page(&*store, "https://pirate.example/8.html", "chapter eight").await;
    store
        .record_page_matches(
            page,
            &hash_of("chapter seven"),
            &[found(a, 0.9, &[(0, 0)]), found(b, 0.8, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();
    for url_variant in [alias, mobile] {
        store.set_page_alias(url_variant, Some(page)).await.unwrap();
    }
    let before = matches_of(&*store, page).await;
    let gone = PageCheck {
        page_id: page,
        run_id: None,
        checked_at: at(5),
        availability: Availability::Gone,
        http_status: Some(404),
        detail: "HTTP 404".to_owned(),
        still_present: Vec::new(),
        removed: vec![a, b],
    };
    store.record_page_check(&gone).await.unwrap();

    // A page of another text cannot hold evidence into this one.
    assert!(
        store
            .hand_over_matches(page, other, &[a])
            .await
            .unwrap()
            .is_empty()
    );
    invalid(store.hand_over_matches(page, page, &[a]).await);
    not_found(store.hand_over_matches(page, 9_999, &[a]).await);
    not_found(store.hand_over_matches(9_999, alias, &[a]).await);

    assert_eq!(
        store.hand_over_matches(page, alias, &[a]).await.unwrap(),
        [a]
    );
    let taken = matches_of(&*store, alias).await;
    assert_eq!(taken.len(), 1);
    let (was, now) = (&before[0], &taken[0]);
    assert_eq!(
        (now.id, now.work_id, now.first_seen),
        (was.id, a, was.first_seen)
    );
    assert_eq!(now.page_url, "https://pirate.example/7.html?from=hot");
    assert_eq!(
        now.status,
        MatchStatus::Removed,
        "the caller's check decides the status"
    );
    // The page keeps the match of b: it stays the page of its group, and the alias heads a
    // group of its own.
    assert_eq!(matches_of(&*store, page).await.len(), 1);
    assert_eq!(store.get_page(alias).await.unwrap().alias_of, None);
    assert_eq!(store.get_page(mobile).await.unwrap().alias_of, Some(page));

    let online = PageCheck {
        page_id: alias,
        availability: Availability::Online,
        http_status: Some(200),
        still_present: vec![a],
        removed: Vec::new(),
        checked_at: at(6),
        ..gone.clone()
    };
    assert_eq!(store.record_page_check(&online).await.unwrap().reopened, 1);
    assert_eq!(
        statuses(&*store, alias).await,
        [(a, MatchStatus::Open, None)]
    );

    // Once the page keeps no match, it and its other URLs join the alias's group.
    assert_eq!(
        store.hand_over_matches(page, alias, &[b]).await.unwrap(),
        [b]
    );
    assert!(matches_of(&*store, page).await.is_empty());
    assert_eq!(store.get_page(page).await.unwrap().alias_of, Some(alias));
    assert_eq!(store.get_page(mobile).await.unwrap().alias_of, Some(alias));
    let mut listed = store.page_aliases(alias).await.unwrap();
    listed.sort();
    assert_eq!(
        listed,
        [
            "https://m.pirate.example/7.html",
            "https://pirate.example/7.html"
        ]
    );
    assert_eq!(
        store.alias_pages(alias).await.unwrap(),
        [
            (page, "https://pirate.example/7.html".to_owned()),
            (mobile, "https://m.pirate.example/7.html".to_owned())
        ]
    );
    // Handing over again moves nothing.
    assert!(
        store
            .hand_over_matches(page, alias, &[a, b])
            .await
            .unwrap()
            .is_empty()
    );
}

/// A page whose text changed frees only the aliases that carry no evidence of its copies: an
/// alias showing a known copy, matched on its own from that stored text, would report it as new.
async fn an_alias_whose_text_is_evidence_stays_in_its_group_when_the_page_changes(
    store: Arc<dyn Store>,
) {
    let [a, ..] = works(&*store).await;
    let page = stored_page(&*store, "https://pirate.example/7.html", "chapter seven").await;
    let alias = stored_page(
        &*store,
        "https://pirate.example/7.html?from=hot",
        "chapter seven",
    )
    .await;
    store
        .record_page_matches(
            page,
            &hash_of("chapter seven"),
            &[found(a, 0.9, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();
    store
        .record_page_matches(alias, &hash_of("chapter seven"), &[], at(1))
        .await
        .unwrap();
    store.set_page_alias(alias, Some(page)).await.unwrap();
    store
        .upsert_page(&crate::helpers::page(
            "https://pirate.example/7.html",
            "chapter seven, taken down",
            at(4),
        ))
        .await
        .unwrap();
    assert_eq!(store.get_page(alias).await.unwrap().alias_of, Some(page));
    assert_eq!(
        store.get_page(alias).await.unwrap().matched_hash.as_deref(),
        Some(hash_of("chapter seven").as_str()),
        "not due: it is never matched from its stored text"
    );
    assert_eq!(
        store.release_aliases(page, "another text").await.unwrap(),
        0
    );
}
