//! Mirror pages verified once: the verdict a page with the same text may reuse
//! (`Store::record_page_verdict`, `Store::verified_twin`).

use std::sync::Arc;

use copytrace_store::{
    Availability, Id, MatchStatus, NewMatch, PageCheck, Store, VerdictBasis, VerifiedTwin,
};

use crate::helpers::*;

contract_tests!(
    a_page_with_the_same_text_finds_the_verdict_the_matcher_gave,
    a_verdict_of_an_earlier_library_or_another_matcher_is_not_reused,
    a_verdict_that_is_no_longer_the_pages_current_one_is_not_reused,
    reviews_and_statuses_are_not_copied_and_rows_the_verdict_did_not_find_are_not_reused,
);

const MATCHER: &str = "copytrace 0.1.0 test";
const CHAPTER: &str = "chapter one of the novel, copied whole by a mirror";

/// A basis of [`MATCHER`] at the library's current generation.
async fn now(store: &dyn Store) -> VerdictBasis {
    VerdictBasis {
        generation: store.library_state().await.unwrap().generation,
        matcher: MATCHER.to_owned(),
    }
}

/// Records `matches` on `page` (text [`CHAPTER`]) at `seconds`, found against `basis`.
async fn verdict(
    store: &dyn Store,
    page: Id,
    matches: &[NewMatch],
    basis: Option<&VerdictBasis>,
    seconds: i64,
) {
    store
        .record_page_verdict(page, &hash_of(CHAPTER), matches, basis, at(seconds))
        .await
        .unwrap();
}

async fn twin_of(store: &dyn Store, page: Id) -> Option<VerifiedTwin> {
    store
        .verified_twin(page, &hash_of(CHAPTER), MATCHER)
        .await
        .unwrap()
}

/// `matches` as the store returns them: by work, without the gate's judgement.
fn as_returned(matches: &[NewMatch]) -> Vec<NewMatch> {
    let mut matches: Vec<NewMatch> = matches
        .iter()
        .map(|m| NewMatch {
            auto_confirm: false,
            ..m.clone()
        })
        .collect();
    matches.sort_by_key(|m| m.work_id);
    matches
}

/// Another verified match, of `work`.
fn found_of(work: Id) -> NewMatch {
    found(work, 0.8, &[(10, 10)])
}

async fn a_page_with_the_same_text_finds_the_verdict_the_matcher_gave(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (w1, w2) = (
        stored_work(&*store, holder, "w1", "the first work").await,
        stored_work(&*store, holder, "w2", "the second work").await,
    );
    let first = stored_page(&*store, "https://pirate.example/1.html", CHAPTER).await;
    let mirror = stored_page(&*store, "https://mirror.example/a/1.html", CHAPTER).await;
    let other = stored_page(&*store, "https://mirror.example/a/2.html", "another text").await;
    // Nothing verified yet.
    assert_eq!(twin_of(&*store, mirror).await, None);

    let found = [
        found(w2, 0.9, &[(0, 5), (20, 40)]),
        found(w1, 0.5, &[(3, 0)]),
    ];
    let basis = now(&*store).await;
    verdict(&*store, first, &found, Some(&basis), 10).await;

    let twin = twin_of(&*store, mirror)
        .await
        .expect("the first page's verdict");
    assert_eq!(twin.page_id, first);
    assert_eq!(twin.basis, basis);
    assert_eq!(twin.matches, as_returned(&found));
    // Not the page's own verdict, nor one of another text or another matcher.
    assert_eq!(twin_of(&*store, first).await, None);
    let text = hash_of("another text");
    assert_eq!(
        store.verified_twin(other, &text, MATCHER).await.unwrap(),
        None
    );
    let elsewhere = store
        .verified_twin(mirror, &hash_of(CHAPTER), "another matcher")
        .await
        .unwrap();
    assert_eq!(elsewhere, None);

    // A verdict without matches is a verdict too; a mirror that reused one may be reused, and
    // the lowest page id is the twin.
    verdict(&*store, first, &[], Some(&basis), 20).await;
    verdict(&*store, mirror, &[], Some(&basis), 21).await;
    let third = stored_page(&*store, "https://third.example/1.html", CHAPTER).await;
    let twin = twin_of(&*store, third)
        .await
        .expect("a verdict without matches");
    assert_eq!((twin.page_id, twin.matches), (first, Vec::new()));
    assert_eq!(twin_of(&*store, first).await.unwrap().page_id, mirror);
}

async fn a_verdict_of_an_earlier_library_or_another_matcher_is_not_reused(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let w1 = stored_work(&*store, holder, "w1", "the first work").await;
    let first = stored_page(&*store, "https://pirate.example/1.html", CHAPTER).await;
    let mirror = stored_page(&*store, "https://mirror.example/1.html", CHAPTER).await;
    let found = [found(w1, 0.9, &[(0, 5)])];

    // Found against an earlier library.
    let mut basis = now(&*store).await;
    basis.generation -= 1;
    verdict(&*store, first, &found, Some(&basis), 10).await;
    assert_eq!(twin_of(&*store, mirror).await, None);

    // Found against the library as it is, until the library changes: a work added...
    let basis = now(&*store).await;
    verdict(&*store, first, &found, Some(&basis), 20).await;
    assert!(twin_of(&*store, mirror).await.is_some());
    let w2 = stored_work(&*store, holder, "w2", "the second work").await;
    assert_eq!(twin_of(&*store, mirror).await, None);

    // ... or one withdrawn, whose match a verdict found since no longer has.
    verdict(
        &*store,
        first,
        &[found[0].clone(), found_of(w2)],
        Some(&now(&*store).await),
        30,
    )
    .await;
    assert_eq!(twin_of(&*store, mirror).await.unwrap().matches.len(), 2);
    assert!(store.withdraw_work(w2, at(31)).await.unwrap());
    assert_eq!(twin_of(&*store, mirror).await, None);
    verdict(&*store, first, &found, Some(&now(&*store).await), 40).await;
    assert_eq!(
        twin_of(&*store, mirror).await.unwrap().matches,
        as_returned(&found)
    );

    // A verdict recorded without a basis forgets the page's previous one.
    store
        .record_page_matches(first, &hash_of(CHAPTER), &found, at(50))
        .await
        .unwrap();
    assert_eq!(twin_of(&*store, mirror).await, None);
}

async fn a_verdict_that_is_no_longer_the_pages_current_one_is_not_reused(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let w1 = stored_work(&*store, holder, "w1", "the first work").await;
    let first = stored_page(&*store, "https://pirate.example/1.html", CHAPTER).await;
    let mirror = stored_page(&*store, "https://mirror.example/1.html", CHAPTER).await;
    let found = [found(w1, 0.9, &[(0, 5)])];
    let basis = now(&*store).await;

    // Marked due (the operator asked for every page to be matched again).
    verdict(&*store, first, &found, Some(&basis), 10).await;
    assert!(twin_of(&*store, mirror).await.is_some());
    store.mark_pages_unmatched(&[first]).await.unwrap();
    assert_eq!(twin_of(&*store, mirror).await, None);

    // Made an alias of another page.
    verdict(&*store, first, &found, Some(&basis), 20).await;
    assert!(twin_of(&*store, mirror).await.is_some());
    let head = stored_page(&*store, "https://pirate.example/index.html", "other").await;
    store.set_page_alias(first, Some(head)).await.unwrap();
    assert_eq!(twin_of(&*store, mirror).await, None);
    store.set_page_alias(first, None).await.unwrap();
    assert!(twin_of(&*store, mirror).await.is_some());

    // Its matches handed over to another page.
    let heir = stored_page(&*store, "https://pirate.example/1.html?from=hot", CHAPTER).await;
    store.set_page_alias(heir, Some(first)).await.unwrap();
    let moved = store.hand_over_matches(first, heir, &[w1]).await.unwrap();
    assert_eq!(moved, [w1]);
    assert_eq!(twin_of(&*store, mirror).await, None);

    // Changed: its new text's verdict is not yet recorded.
    verdict(&*store, mirror, &found, Some(&basis), 30).await;
    let third = stored_page(&*store, "https://third.example/1.html", CHAPTER).await;
    assert_eq!(twin_of(&*store, third).await.unwrap().page_id, mirror);
    store
        .upsert_page(&page("https://mirror.example/1.html", "a new text", at(40)))
        .await
        .unwrap();
    assert_eq!(twin_of(&*store, third).await, None);
}

async fn reviews_and_statuses_are_not_copied_and_rows_the_verdict_did_not_find_are_not_reused(
    store: Arc<dyn Store>,
) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (w1, w2) = (
        stored_work(&*store, holder, "w1", "the first work").await,
        stored_work(&*store, holder, "w2", "the second work").await,
    );
    let first = stored_page(&*store, "https://pirate.example/1.html", CHAPTER).await;
    let mirror = stored_page(&*store, "https://mirror.example/1.html", CHAPTER).await;
    let both = [found(w1, 0.9, &[(0, 5)]), found(w2, 0.4, &[(9, 9)])];
    let basis = now(&*store).await;
    verdict(&*store, first, &both, Some(&basis), 10).await;

    // A person rejects one match and a notice is sent for the other: the twin's verdict is
    // still what the matcher gave.
    reject(&*store, first, w1).await;
    let w2_match = matches_of(&*store, first)
        .await
        .into_iter()
        .find(|m| m.work_id == w2)
        .unwrap()
        .id;
    store
        .set_match_status(w2_match, MatchStatus::NoticeSent)
        .await
        .unwrap();
    let twin = twin_of(&*store, mirror).await.unwrap();
    assert_eq!(twin.matches, as_returned(&both));

    // Matched again (another matcher setting, say): w2 is no longer found, but its match
    // stays, a takedown record. The verdict is w1 alone...
    verdict(&*store, first, &both[..1], Some(&basis), 20).await;
    assert_eq!(
        twin_of(&*store, mirror).await.unwrap().matches,
        as_returned(&both[..1])
    );
    // ... and once a removal check saw w2 since, its row is not told from the verdict's by
    // time alone: the page is matched instead.
    let check = PageCheck {
        page_id: first,
        run_id: None,
        checked_at: at(30),
        availability: Availability::Online,
        http_status: Some(200),
        detail: "HTTP 200".to_owned(),
        still_present: vec![w2],
        removed: Vec::new(),
    };
    store.record_page_check(&check).await.unwrap();
    assert_eq!(twin_of(&*store, mirror).await, None);
}
