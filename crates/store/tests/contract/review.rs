//! Review with confidence gating: the certainty gate, people's decisions and their audit trail,
//! and decisions that survive re-matching and re-crawls.

use std::sync::Arc;

use copytrace_store::{MatchFilter, MatchRecord, NewDecision, NewMatch, Review, Store, StoreError};

use crate::helpers::{
    at, contract_tests, found, hash_of, matches_of, not_found, page, stored_work,
};

contract_tests!(
    the_certainty_gate_confirms_or_queues_new_matches_and_logs_its_confirmations,
    a_rejection_survives_rematching_and_the_match_row_being_dropped,
    a_rejected_pair_comes_back_only_when_the_page_changes_substantially,
    a_persons_confirmation_and_licence_outlast_the_gate,
    decisions_are_scoped_to_the_rights_holder_and_need_an_actor,
    no_sequence_of_recrawls_and_dedup_passes_undoes_a_decision,
);

/// `verdict` as a match run finds it: `copied` characters, through the gate or not.
fn run(work: i64, copied: u32, auto_confirm: bool) -> NewMatch {
    NewMatch {
        copied_chars: copied,
        auto_confirm,
        ..found(work, 0.9, &[(0, 0)])
    }
}

/// Stores `text` at `url` (at `seconds`) and records `verdict` on it.
async fn crawled(
    store: &dyn Store,
    url: &str,
    text: &str,
    seconds: i64,
    verdict: &[NewMatch],
) -> i64 {
    let id = store
        .upsert_page(&page(url, text, at(seconds)))
        .await
        .unwrap()
        .id;
    store
        .record_page_matches(id, &hash_of(text), verdict, at(seconds + 1))
        .await
        .unwrap();
    id
}

fn decision(match_id: i64, review: Review, holder: Option<i64>) -> NewDecision {
    NewDecision {
        match_id,
        review,
        actor: "editor@example.com".to_owned(),
        note: "checked by hand".to_owned(),
        at: at(500),
        rights_holder_id: holder,
    }
}

/// The matches of `page`, licensed ones included.
async fn all_matches_of(store: &dyn Store, page: i64) -> Vec<MatchRecord> {
    let filter = MatchFilter {
        include_licensed: true,
        ..MatchFilter::default()
    };
    let mut found: Vec<MatchRecord> = store.list_matches(&filter).await.unwrap();
    found.retain(|m| m.page_id == page);
    found.sort_by_key(|m| m.work_id);
    found
}

async fn reviews(store: &dyn Store, page: i64) -> Vec<(i64, Review)> {
    all_matches_of(store, page)
        .await
        .into_iter()
        .map(|m| (m.work_id, m.review))
        .collect()
}

async fn the_certainty_gate_confirms_or_queues_new_matches_and_logs_its_confirmations(
    store: Arc<dyn Store>,
) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let certain = stored_work(&*store, holder, "certain", "text of certain").await;
    let unsure = stored_work(&*store, holder, "unsure", "text of unsure").await;
    let page = crawled(
        &*store,
        "https://pirate.example/1",
        "copy",
        0,
        &[run(certain, 900, true), run(unsure, 120, false)],
    )
    .await;
    assert_eq!(
        reviews(&*store, page).await,
        [(certain, Review::Confirmed), (unsure, Review::Pending)]
    );
    let records = matches_of(&*store, page).await;
    let trail = store.match_decisions(records[0].id, None).await.unwrap();
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert!(trail[0].automatic);
    assert_eq!(trail[0].review, Review::Confirmed);
    assert_eq!(trail[0].actor, "auto");
    assert_eq!(trail[0].copied_chars, 900);
    assert!(
        store
            .match_decisions(records[1].id, None)
            .await
            .unwrap()
            .is_empty(),
        "nobody decided on the pending one"
    );

    // Matched again (dedup): the pending one now passes the gate, the confirmed one is not
    // confirmed twice.
    store.mark_all_pages_unmatched().await.unwrap();
    store
        .record_page_matches(
            page,
            &hash_of("copy"),
            &[run(certain, 900, true), run(unsure, 400, true)],
            at(10),
        )
        .await
        .unwrap();
    assert_eq!(
        reviews(&*store, page).await,
        [(certain, Review::Confirmed), (unsure, Review::Confirmed)]
    );
    assert_eq!(
        store
            .match_decisions(records[0].id, None)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .match_decisions(records[1].id, None)
            .await
            .unwrap()
            .len(),
        1
    );
}

async fn a_rejection_survives_rematching_and_the_match_row_being_dropped(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let text = "a review quoting the novel";
    let page = crawled(
        &*store,
        "https://blog.example/review",
        text,
        0,
        &[run(work, 300, true)],
    )
    .await;
    let match_id = matches_of(&*store, page).await[0].id;
    store
        .decide_match(&decision(match_id, Review::Rejected, Some(holder)))
        .await
        .unwrap();
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);

    // dedup --full: the same text matched again, passing the gate; the person's word stands.
    store.mark_all_pages_unmatched().await.unwrap();
    store
        .record_page_matches(page, &hash_of(text), &[run(work, 300, true)], at(600))
        .await
        .unwrap();
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);

    // A matcher that does not find it drops the row; found again later, it is still rejected.
    store.mark_all_pages_unmatched().await.unwrap();
    store
        .record_page_matches(page, &hash_of(text), &[], at(700))
        .await
        .unwrap();
    assert!(matches_of(&*store, page).await.is_empty());
    store.mark_all_pages_unmatched().await.unwrap();
    store
        .record_page_matches(page, &hash_of(text), &[run(work, 300, true)], at(800))
        .await
        .unwrap();
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);
    let new_id = matches_of(&*store, page).await[0].id;
    let trail = store.match_decisions(new_id, None).await.unwrap();
    assert_eq!(
        trail.len(),
        2,
        "the gate's first confirmation and the person's rejection, kept with the pair \
         (and no confirmation since): {trail:?}"
    );
    assert!(trail[0].automatic);
    assert_eq!(
        (
            trail[1].review,
            trail[1].automatic,
            trail[1].actor.as_str(),
            trail[1].note.as_str(),
            trail[1].match_id,
            trail[1].decided_at
        ),
        (
            Review::Rejected,
            false,
            "editor@example.com",
            "checked by hand",
            Some(match_id),
            at(500)
        )
    );

    // A re-crawl of the unchanged page changes nothing either.
    let again = crawled(
        &*store,
        "https://blog.example/review",
        text,
        900,
        &[run(work, 300, true)],
    )
    .await;
    assert_eq!(again, page);
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);
}

async fn a_rejected_pair_comes_back_only_when_the_page_changes_substantially(
    store: Arc<dyn Store>,
) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let url = "https://forum.example/thread";
    let page = crawled(&*store, url, "a quotation", 0, &[run(work, 300, true)]).await;
    let match_id = matches_of(&*store, page).await[0].id;
    store
        .decide_match(&decision(match_id, Review::Rejected, None))
        .await
        .unwrap();

    // New text around the same quotation (300 → 420 copied characters: under +50 %).
    crawled(
        &*store,
        url,
        "a quotation, new ads",
        100,
        &[run(work, 420, true)],
    )
    .await;
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);

    // The thread now carries much more of the novel (300 → 2,000): back in the queue, not
    // confirmed by the gate, since a person rejected it before.
    crawled(
        &*store,
        url,
        "whole chapters",
        200,
        &[run(work, 2_000, true)],
    )
    .await;
    assert_eq!(reviews(&*store, page).await, [(work, Review::Pending)]);

    // Grown by half but by fewer than 200 characters: not substantial.
    let other = crawled(
        &*store,
        "https://forum.example/2",
        "short",
        0,
        &[run(work, 100, true)],
    )
    .await;
    let other_id = matches_of(&*store, other).await[0].id;
    store
        .decide_match(&decision(other_id, Review::Rejected, None))
        .await
        .unwrap();
    crawled(
        &*store,
        "https://forum.example/2",
        "short, longer",
        100,
        &[run(work, 250, true)],
    )
    .await;
    assert_eq!(reviews(&*store, other).await, [(work, Review::Rejected)]);
}

async fn a_persons_confirmation_and_licence_outlast_the_gate(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let pending = crawled(
        &*store,
        "https://pirate.example/1",
        "copy",
        0,
        &[run(work, 100, false)],
    )
    .await;
    let partner = crawled(
        &*store,
        "https://partner.example/1",
        "copy",
        0,
        &[run(work, 900, true)],
    )
    .await;
    let pending_id = matches_of(&*store, pending).await[0].id;
    let partner_id = matches_of(&*store, partner).await[0].id;
    store
        .decide_match(&decision(pending_id, Review::Confirmed, None))
        .await
        .unwrap();
    store
        .decide_match(&decision(partner_id, Review::Licensed, None))
        .await
        .unwrap();
    assert!(
        matches_of(&*store, partner).await.is_empty(),
        "licensed matches are left out of listings unless asked for"
    );
    let listed = all_matches_of(&*store, partner).await;
    assert_eq!(listed[0].review, Review::Licensed);
    assert_eq!(
        listed[0].status,
        copytrace_store::MatchStatus::Licensed,
        "a licensed decision lists as licensed"
    );

    // Both pages change; the gate would judge otherwise, the people's decisions stand.
    crawled(
        &*store,
        "https://pirate.example/1",
        "copy 2",
        100,
        &[run(work, 90, false)],
    )
    .await;
    crawled(
        &*store,
        "https://partner.example/1",
        "copy 2",
        100,
        &[run(work, 5_000, true)],
    )
    .await;
    assert_eq!(reviews(&*store, pending).await, [(work, Review::Confirmed)]);
    assert_eq!(reviews(&*store, partner).await, [(work, Review::Licensed)]);

    // Back to the queue by hand: the gate may decide again.
    store
        .decide_match(&decision(pending_id, Review::Pending, None))
        .await
        .unwrap();
    assert_eq!(reviews(&*store, pending).await, [(work, Review::Pending)]);
    let trail = store.match_decisions(pending_id, None).await.unwrap();
    assert_eq!(
        trail.iter().map(|d| d.review).collect::<Vec<_>>(),
        [Review::Confirmed, Review::Pending],
        "oldest first"
    );
}

async fn decisions_are_scoped_to_the_rights_holder_and_need_an_actor(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let theirs = store.ensure_rights_holder("Zongheng").await.unwrap();
    let work = stored_work(&*store, theirs, "their-novel", "text of their novel").await;
    let page = crawled(
        &*store,
        "https://pirate.example/1",
        "copy",
        0,
        &[run(work, 900, true)],
    )
    .await;
    let match_id = matches_of(&*store, page).await[0].id;

    not_found(
        store
            .decide_match(&decision(match_id, Review::Rejected, Some(mine)))
            .await,
    );
    not_found(store.match_decisions(match_id, Some(mine)).await);
    not_found(
        store
            .decide_match(&decision(31337, Review::Rejected, None))
            .await,
    );
    assert_eq!(
        reviews(&*store, page).await,
        [(work, Review::Confirmed)],
        "nothing changed"
    );
    let anonymous = NewDecision {
        actor: "  ".to_owned(),
        ..decision(match_id, Review::Rejected, Some(theirs))
    };
    assert!(matches!(
        store.decide_match(&anonymous).await,
        Err(StoreError::Invalid(_))
    ));
    store
        .decide_match(&decision(match_id, Review::Rejected, Some(theirs)))
        .await
        .unwrap();
    assert_eq!(reviews(&*store, page).await, [(work, Review::Rejected)]);
}

/// Review decisions as a property: seeded random sequences of re-crawls (the page's text
/// changes or not, each work found or not, through the gate or not), dedup passes (every page
/// marked unmatched and matched again), and people's decisions (confirm, reject, license) on
/// three pages × three works. After every step, every listed match of a pair a person decided
/// on carries that decision, whatever the gate says and however often the row was dropped and
/// found again; at the end each pair's audit trail holds every decision the people took, in
/// order. (Copied characters stay within 100–140, never the "substantial" growth that brings
/// a rejected pair back to the queue; that rule has its own test above.)
async fn no_sequence_of_recrawls_and_dedup_passes_undoes_a_decision(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut works = Vec::new();
    for name in ["alpha", "beta", "gamma"] {
        works.push(stored_work(&*store, holder, name, &format!("text of {name}")).await);
    }
    let (mut decided_steps, mut dropped_and_found) = (0, 0);
    for (round, seed) in [0x9e37_79b9_u64, 0x2545_f491, 0xdead_beef, 0x1234_5678]
        .into_iter()
        .enumerate()
    {
        let mut next = crate::helpers::xorshift(seed);
        let urls: Vec<String> = (0..3)
            .map(|p| format!("https://pirate{round}.example/{p}"))
            .collect();
        let mut texts: Vec<String> = urls.iter().map(|u| format!("{u} v0")).collect();
        let mut pages = Vec::new();
        // What people decided, per (page, work): the decision and how many they took.
        let mut decided: std::collections::HashMap<(i64, i64), (Review, usize)> =
            Default::default();
        let mut listed_before: std::collections::HashSet<(i64, i64)> = Default::default();
        let mut clock = 0;
        let verdict = |next: &mut dyn FnMut(u64) -> u64| -> Vec<NewMatch> {
            let mut found = Vec::new();
            for &work in &works {
                if next(3) > 0 {
                    let copied = 100 + next(41) as u32;
                    found.push(run(work, copied, next(2) == 0));
                }
            }
            found
        };
        for p in 0..3 {
            let v = verdict(&mut next);
            pages.push(crawled(&*store, &urls[p], &texts[p], clock, &v).await);
        }
        for _step in 0..120 {
            clock += 10;
            match next(3) {
                // A re-crawl: the text changes (or not), and the page is matched on it.
                0 => {
                    let p = next(3) as usize;
                    texts[p] = format!("{} v{}", urls[p], next(3));
                    let v = verdict(&mut next);
                    crawled(&*store, &urls[p], &texts[p], clock, &v).await;
                }
                // A dedup pass over every page.
                1 => {
                    store.mark_all_pages_unmatched().await.unwrap();
                    for p in 0..3 {
                        let v = verdict(&mut next);
                        store
                            .record_page_matches(pages[p], &hash_of(&texts[p]), &v, at(clock))
                            .await
                            .unwrap();
                    }
                }
                // A person decides on a listed match.
                _ => {
                    let page = pages[next(3) as usize];
                    let listed = all_matches_of(&*store, page).await;
                    if listed.is_empty() {
                        continue;
                    }
                    let target = &listed[next(listed.len() as u64) as usize];
                    let review =
                        [Review::Confirmed, Review::Rejected, Review::Licensed][next(3) as usize];
                    store
                        .decide_match(&NewDecision {
                            at: at(clock),
                            ..decision(target.id, review, Some(holder))
                        })
                        .await
                        .unwrap();
                    let entry = decided.entry((page, target.work_id)).or_insert((review, 0));
                    *entry = (review, entry.1 + 1);
                }
            }
            for &page in &pages {
                for record in all_matches_of(&*store, page).await {
                    let pair = (page, record.work_id);
                    if let Some((review, _)) = decided.get(&pair) {
                        assert_eq!(
                            record.review, *review,
                            "seed {seed:x}: the decision on page {page} × work {} was undone",
                            record.work_id
                        );
                        decided_steps += 1;
                        if !listed_before.contains(&pair) {
                            dropped_and_found += 1;
                        }
                    }
                }
                listed_before = listed_before
                    .into_iter()
                    .filter(|(p, _)| *p != page)
                    .chain(
                        all_matches_of(&*store, page)
                            .await
                            .into_iter()
                            .map(|m| (page, m.work_id)),
                    )
                    .collect();
            }
        }
        // Every decision people took is in its pair's trail, in order.
        for (&(page, work), &(last, taken)) in &decided {
            let Some(record) = all_matches_of(&*store, page)
                .await
                .into_iter()
                .find(|m| m.work_id == work)
            else {
                continue;
            };
            let trail = store.match_decisions(record.id, None).await.unwrap();
            let people: Vec<Review> = trail
                .iter()
                .filter(|d| !d.automatic)
                .map(|d| d.review)
                .collect();
            assert_eq!(people.len(), taken, "seed {seed:x}: {trail:?}");
            assert_eq!(people.last(), Some(&last));
        }
    }
    // The sequences did reach the cases that matter: decided pairs checked many times, and
    // decided pairs dropped by a verdict and found again.
    assert!(
        decided_steps > 100 && dropped_and_found > 5,
        "{decided_steps} checks of decided pairs, {dropped_and_found} found again after a drop"
    );
}
