//! Re-crawls: validators for conditional requests, 304s, and what a new text of a known
//! infringing page does to its matches and their evidence.

use std::sync::Arc;

use copytrace_store::{
    Availability, EvidencePassage, Id, MatchStatus, NewPage, PageValidators, Store, ValidatorScope,
    VerdictOutcome,
};

use crate::helpers::{
    at, contract_tests, found, hash_of, matches_of, page, reject, statuses, stored_work,
};

contract_tests!(
    validators_are_stored_with_the_text_of_the_latest_fetch,
    validators_are_listed_for_the_given_sites_only,
    a_not_modified_page_only_moves_last_seen,
    a_changed_page_keeps_the_text_its_evidence_points_into,
    a_copy_gone_from_a_changed_page_is_removed_with_its_evidence_kept,
    a_copy_that_comes_back_reopens_its_match,
    a_page_gone_and_matched_again_on_its_stored_text_stays_removed,
    matching_the_same_text_again_revises_open_matches_but_keeps_takedown_records,
    an_earlier_text_is_let_go_once_no_evidence_points_into_it,
    the_infringing_page_at_a_url_names_its_stale_evidence,
);

const URL: &str = "https://pirate.example/book/1.html";
const COPY: &str = "The stolen chapter, word for word. Some more copied text here.";
const OTHER: &str = "An unrelated notice: this chapter was taken down.";

/// A fetch of `url` with `text` at `at(seconds)` and the given validators.
fn fetch(
    url: &str,
    text: &str,
    seconds: i64,
    etag: Option<&str>,
    modified: Option<&str>,
) -> NewPage {
    NewPage {
        etag: etag.map(str::to_owned),
        last_modified: modified.map(str::to_owned),
        ..page(url, text, at(seconds))
    }
}

/// Stores `text` at `URL` (fetched at `seconds`) and returns the page id.
async fn store_text(store: &dyn Store, text: &str, seconds: i64) -> Id {
    store
        .upsert_page(&fetch(URL, text, seconds, Some("\"v1\""), None))
        .await
        .unwrap()
        .id
}

/// Records the verdict "the copy of `works` is in the page's current text".
async fn verdict(store: &dyn Store, page: Id, works: &[Id], seconds: i64) -> VerdictOutcome {
    let hash = store.get_page(page).await.unwrap().content_hash;
    let matches: Vec<_> = works.iter().map(|&w| found(w, 0.9, &[(4, 0)])).collect();
    store
        .record_page_matches(page, &hash, &matches, at(seconds))
        .await
        .unwrap()
}

/// Works `a` and `b` of one holder.
async fn two_works(store: &dyn Store) -> (Id, Id) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    (
        stored_work(store, holder, "a", "text of work a").await,
        stored_work(store, holder, "b", "text of work b").await,
    )
}

/// The evidence passage `found(_, _, &[(4, 0)])` records.
fn passage() -> EvidencePassage {
    EvidencePassage {
        page_start: 4,
        page_end: 14,
        work_start: 0,
        work_end: 10,
    }
}

async fn validators_are_stored_with_the_text_of_the_latest_fetch(store: Arc<dyn Store>) {
    let id = store
        .upsert_page(&fetch(
            URL,
            COPY,
            0,
            Some("\"v1\""),
            Some("Sun, 01 Mar 2026 08:00:00 GMT"),
        ))
        .await
        .unwrap()
        .id;
    let stored = store.get_page(id).await.unwrap();
    assert_eq!(stored.etag.as_deref(), Some("\"v1\""));
    assert_eq!(
        stored.last_modified.as_deref(),
        Some("Sun, 01 Mar 2026 08:00:00 GMT")
    );

    // Same text, new validators (the server changed its ETag scheme): they are stored too.
    store
        .upsert_page(&fetch(URL, COPY, 10, Some("W/\"v2\""), None))
        .await
        .unwrap();
    let stored = store.get_page(id).await.unwrap();
    assert_eq!(
        (stored.etag.as_deref(), stored.last_modified.as_deref()),
        (Some("W/\"v2\""), None)
    );

    // New text without validators: the old ones would describe a text no longer stored.
    store
        .upsert_page(&fetch(URL, OTHER, 20, None, None))
        .await
        .unwrap();
    let stored = store.get_page(id).await.unwrap();
    assert_eq!((stored.etag, stored.last_modified), (None, None));
    assert_eq!(stored.text, OTHER);
}

async fn validators_are_listed_for_the_given_sites_only(store: Arc<dyn Store>) {
    let (a, _) = two_works(&*store).await;
    let urls = [
        "https://pirate.example/1",
        "https://www.pirate.example/2",
        "https://pirate.example:8443/3",
        "https://mirror.example/4",
        "https://pirate.example/5",
        "https://pirate.example/6",
    ];
    let mut ids = Vec::new();
    for (n, url) in urls.iter().enumerate() {
        // Page 5 came without validators.
        let etag = (n != 4).then(|| format!("\"e{n}\""));
        let modified = (n == 2).then_some("Sun, 01 Mar 2026 08:00:00 GMT");
        let id = store
            .upsert_page(&fetch(
                url,
                &format!("text {n}"),
                0,
                etag.as_deref(),
                modified,
            ))
            .await
            .unwrap()
            .id;
        ids.push(id);
    }
    // Pages 1 and 6 are infringing; page 2's only match was rejected.
    for id in [ids[0], ids[1], ids[5]] {
        verdict(&*store, id, &[a], 1).await;
    }
    reject(&*store, ids[1], a).await;

    let listed = |hosts: &[&str], infringing_only: bool, limit: u32| {
        let store = store.clone();
        let scope = ValidatorScope {
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
            infringing_only,
            limit,
        };
        async move {
            store
                .page_validators(&scope)
                .await
                .unwrap()
                .into_iter()
                .map(|v| v.url)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        listed(&["pirate.example"], false, 100).await,
        [urls[0], urls[1], urls[5]],
        "www. is the same site, another port is not, a page without validators is left out"
    );
    assert_eq!(
        listed(&["WWW.Pirate.example"], false, 100).await,
        [urls[0], urls[1], urls[5]]
    );
    assert_eq!(
        listed(&["pirate.example:8443", "mirror.example"], false, 100).await,
        [urls[2], urls[3]]
    );
    assert_eq!(
        listed(&["pirate.example"], true, 100).await,
        [urls[0], urls[5]],
        "only pages with an unrejected match"
    );
    assert_eq!(
        listed(&["pirate.example"], false, 2).await,
        [urls[0], urls[1]]
    );
    assert!(listed(&["elsewhere.example"], false, 100).await.is_empty());
    assert!(listed(&[], false, 100).await.is_empty());

    let scope = ValidatorScope {
        hosts: vec!["pirate.example:8443".to_owned()],
        infringing_only: false,
        limit: 10,
    };
    assert_eq!(
        store.page_validators(&scope).await.unwrap(),
        [PageValidators {
            url: urls[2].to_owned(),
            etag: Some("\"e2\"".to_owned()),
            last_modified: Some("Sun, 01 Mar 2026 08:00:00 GMT".to_owned()),
        }]
    );
}

async fn a_not_modified_page_only_moves_last_seen(store: Arc<dyn Store>) {
    let (a, _) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a], 1).await;
    let before = store.get_page(id).await.unwrap();
    let matches_before = matches_of(&*store, id).await;

    // The URL as the crawler reports it, spelled differently from the stored form.
    let spelled = "HTTPS://Pirate.example/book/1.html#top";
    assert_eq!(
        store.record_not_modified(spelled, at(50)).await.unwrap(),
        Some(id)
    );
    let after = store.get_page(id).await.unwrap();
    assert_eq!(after.last_seen, at(50));
    assert_eq!(
        (
            &after.text,
            &after.content_hash,
            &after.etag,
            &after.matched_hash,
            after.first_seen
        ),
        (
            &before.text,
            &before.content_hash,
            &before.etag,
            &before.matched_hash,
            before.first_seen
        )
    );
    assert_eq!(matches_of(&*store, id).await, matches_before);
    assert!(
        store.pages_to_match(10).await.unwrap().is_empty(),
        "not due"
    );

    // A late 304 (stored out of order) does not move it back.
    store.record_not_modified(URL, at(40)).await.unwrap();
    assert_eq!(store.get_page(id).await.unwrap().last_seen, at(50));
    assert_eq!(
        store
            .record_not_modified("https://pirate.example/unknown", at(60))
            .await
            .unwrap(),
        None
    );
}

async fn a_changed_page_keeps_the_text_its_evidence_points_into(store: Arc<dyn Store>) {
    let (a, _) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a], 1).await;
    assert_eq!(
        matches_of(&*store, id).await[0].evidence_hash,
        hash_of(COPY)
    );

    store_text(&*store, OTHER, 100).await;
    assert_eq!(store.get_page(id).await.unwrap().text, OTHER);
    assert_eq!(
        store
            .evidence_text(id, &hash_of(COPY))
            .await
            .unwrap()
            .as_deref(),
        Some(COPY),
        "the text the evidence points into is kept"
    );
    assert_eq!(
        store
            .evidence_text(id, &hash_of(OTHER))
            .await
            .unwrap()
            .as_deref(),
        Some(OTHER),
        "the current text is read from the page"
    );
    assert_eq!(store.evidence_text(id, "nope").await.unwrap(), None);
    assert_eq!(
        store
            .evidence_text(id + 1000, &hash_of(COPY))
            .await
            .unwrap(),
        None
    );
    // Until it is matched again, the match and its evidence are as they were.
    let record = &matches_of(&*store, id).await[0];
    assert_eq!(
        (
            record.status,
            record.evidence_hash.as_str(),
            record.evidence.as_slice()
        ),
        (
            MatchStatus::Open,
            hash_of(COPY).as_str(),
            [passage()].as_slice()
        )
    );

    // A page that was never matched keeps no earlier text.
    let plain = store
        .upsert_page(&page("https://pirate.example/plain", "first", at(0)))
        .await
        .unwrap()
        .id;
    store
        .upsert_page(&page("https://pirate.example/plain", "second", at(5)))
        .await
        .unwrap();
    assert_eq!(
        store.evidence_text(plain, &hash_of("first")).await.unwrap(),
        None
    );
}

async fn a_copy_gone_from_a_changed_page_is_removed_with_its_evidence_kept(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let (a, b) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a, b], 1).await;
    let b_match = matches_of(&*store, id).await[1].id;
    store.set_match_status(b_match, NoticeSent).await.unwrap();

    // The re-crawl finds other text at 100 and the match runs at 150: neither copy is there.
    store_text(&*store, OTHER, 100).await;
    assert_eq!(
        verdict(&*store, id, &[], 150).await,
        VerdictOutcome {
            new_matches: 0,
            removed: 2,
            reopened: 0
        }
    );
    assert_eq!(
        statuses(&*store, id).await,
        [(a, Removed, Some(at(100))), (b, Removed, Some(at(100)))],
        "removed when the page was seen without the copy, a sent notice included"
    );
    for record in matches_of(&*store, id).await {
        assert_eq!(record.evidence, [passage()], "the evidence is kept");
        assert_eq!(record.evidence_hash, hash_of(COPY));
        let text = store
            .evidence_text(id, &record.evidence_hash)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            &text[4..14],
            &COPY[4..14],
            "and still reads what was copied"
        );
    }
    let page = store.get_page(id).await.unwrap();
    assert_eq!(page.matched_hash, Some(hash_of(OTHER)));
    assert_eq!(
        (page.availability, page.availability_checked_at),
        (Some(Availability::SoftRemoved), Some(at(100)))
    );
    let checks = store.page_checks(id).await.unwrap();
    assert_eq!(checks.len(), 1);
    assert_eq!(
        (
            checks[0].availability,
            checks[0].http_status,
            checks[0].checked_at,
            checks[0].run_id
        ),
        (Availability::SoftRemoved, Some(200), at(100), None)
    );
    assert!(checks[0].detail.contains("2 of 2"), "{}", checks[0].detail);

    // Matching the same text again (the library changed) adds no second check and keeps them.
    store.mark_all_pages_unmatched().await.unwrap();
    assert_eq!(
        verdict(&*store, id, &[], 200).await,
        VerdictOutcome::default()
    );
    assert_eq!(
        statuses(&*store, id).await,
        [(a, Removed, Some(at(100))), (b, Removed, Some(at(100)))]
    );
    assert_eq!(store.page_checks(id).await.unwrap().len(), 1);
    assert!(store.infringing_page(URL).await.unwrap().is_some());
}

async fn a_copy_that_comes_back_reopens_its_match(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let (a, b) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a, b], 1).await;
    store_text(&*store, OTHER, 100).await;
    verdict(&*store, id, &[b], 150).await;
    assert_eq!(
        statuses(&*store, id).await,
        [(a, Removed, Some(at(100))), (b, Open, None)]
    );
    assert_eq!(
        store.page_checks(id).await.unwrap()[0].availability,
        Availability::SoftRemoved
    );

    // The pirate puts the text back; the next crawl and match find it.
    store_text(&*store, COPY, 300).await;
    assert_eq!(
        verdict(&*store, id, &[a, b], 350).await,
        VerdictOutcome {
            new_matches: 0,
            removed: 0,
            reopened: 1
        }
    );
    assert_eq!(
        statuses(&*store, id).await,
        [(a, Open, None), (b, Open, None)]
    );
    let checks = store.page_checks(id).await.unwrap();
    assert_eq!(checks.len(), 2);
    assert_eq!(
        (checks[1].availability, checks[1].checked_at),
        (Availability::Online, at(300))
    );
    let page = store.get_page(id).await.unwrap();
    assert_eq!(page.availability, Some(Availability::Online));
    for record in matches_of(&*store, id).await {
        assert_eq!(record.evidence_hash, hash_of(COPY));
    }
}

async fn a_page_gone_and_matched_again_on_its_stored_text_stays_removed(store: Arc<dyn Store>) {
    use MatchStatus::*;
    let (a, _) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a], 1).await;
    // A re-crawl got 404 at 100: nothing was stored, the check records the removal.
    store
        .record_page_check(&copytrace_store::PageCheck {
            page_id: id,
            run_id: None,
            checked_at: at(100),
            availability: Availability::Gone,
            http_status: Some(404),
            detail: "HTTP 404".to_owned(),
            still_present: Vec::new(),
            removed: vec![a],
        })
        .await
        .unwrap();
    // The stored (old) text still carries the copy, but the page is gone.
    store.mark_all_pages_unmatched().await.unwrap();
    assert_eq!(
        verdict(&*store, id, &[a], 200).await,
        VerdictOutcome::default()
    );
    assert_eq!(statuses(&*store, id).await, [(a, Removed, Some(at(100)))]);

    // The page is back with the same text at 300: its copy is there again.
    store_text(&*store, COPY, 300).await;
    store.mark_all_pages_unmatched().await.unwrap();
    assert_eq!(verdict(&*store, id, &[a], 350).await.reopened, 1);
    assert_eq!(statuses(&*store, id).await, [(a, Open, None)]);
}

async fn matching_the_same_text_again_revises_open_matches_but_keeps_takedown_records(
    store: Arc<dyn Store>,
) {
    use MatchStatus::*;
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut works = Vec::new();
    for name in ["open", "notice", "removed", "rejected"] {
        works.push(stored_work(&*store, holder, name, &format!("text of {name}")).await);
    }
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &works, 1).await;
    for (record, status) in matches_of(&*store, id)
        .await
        .into_iter()
        .zip([Open, NoticeSent, Removed, Open])
    {
        store.set_match_status(record.id, status).await.unwrap();
    }
    reject(&*store, id, works[3]).await;
    // The library changed, not the page: the matcher no longer finds any of them.
    store.mark_all_pages_unmatched().await.unwrap();
    assert_eq!(
        verdict(&*store, id, &[], 50).await,
        VerdictOutcome::default()
    );
    assert_eq!(
        statuses(&*store, id).await,
        [(works[1], NoticeSent, None), (works[2], Removed, None)],
        "an open or rejected verdict is revised; a sent notice or a removal is a record"
    );
    assert!(
        store.page_checks(id).await.unwrap().is_empty(),
        "the page did not change: no removal check"
    );
    for record in matches_of(&*store, id).await {
        assert_eq!(record.evidence, [passage()]);
    }
}

async fn an_earlier_text_is_let_go_once_no_evidence_points_into_it(store: Arc<dyn Store>) {
    let (a, _) = two_works(&*store).await;
    let id = store_text(&*store, COPY, 0).await;
    verdict(&*store, id, &[a], 1).await;
    // The page changes but still carries the copy: the new evidence points into the new text.
    let moved = format!("New header. {COPY}");
    store_text(&*store, &moved, 100).await;
    assert!(
        store
            .evidence_text(id, &hash_of(COPY))
            .await
            .unwrap()
            .is_some()
    );
    verdict(&*store, id, &[a], 150).await;
    let record = &matches_of(&*store, id).await[0];
    assert_eq!(
        (record.status, record.evidence_hash.clone()),
        (MatchStatus::Open, hash_of(&moved))
    );
    assert_eq!(store.evidence_text(id, &hash_of(COPY)).await.unwrap(), None);
    let checks = store.page_checks(id).await.unwrap();
    assert_eq!(
        checks
            .iter()
            .map(|c| (c.availability, c.checked_at))
            .collect::<Vec<_>>(),
        [(Availability::Online, at(100))]
    );
}

async fn the_infringing_page_at_a_url_names_its_stale_evidence(store: Arc<dyn Store>) {
    let (a, b) = two_works(&*store).await;
    assert_eq!(store.infringing_page(URL).await.unwrap(), None);
    let id = store_text(&*store, COPY, 0).await;
    assert_eq!(
        store.infringing_page(URL).await.unwrap(),
        None,
        "no match yet"
    );
    verdict(&*store, id, &[a, b], 1).await;
    let listed = store.infringing_page(URL).await.unwrap().unwrap();
    assert_eq!(
        (
            listed.page_id,
            listed.work_ids.clone(),
            listed.stale_evidence.clone()
        ),
        (id, vec![a, b], vec![])
    );
    assert_eq!(store.infringing_pages(0, 10).await.unwrap(), [listed]);

    store_text(&*store, OTHER, 100).await;
    let listed = store
        .infringing_page("https://PIRATE.example/book/1.html")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(listed.content_hash, hash_of(OTHER));
    assert_eq!(
        (listed.etag.as_deref(), listed.last_modified.as_deref()),
        (Some("\"v1\""), None),
        "the validators of the stored text, for a conditional removal check"
    );
    assert_eq!(
        listed.stale_evidence,
        [a, b],
        "the page changed since they were found"
    );
    verdict(&*store, id, &[b], 150).await;
    let listed = store.infringing_page(URL).await.unwrap().unwrap();
    assert_eq!(
        (listed.work_ids.clone(), listed.stale_evidence.clone()),
        (vec![a, b], vec![a]),
        "a's evidence is in the earlier text, b's in the stored one"
    );
    assert_eq!(store.infringing_pages(0, 10).await.unwrap(), [listed]);
}
