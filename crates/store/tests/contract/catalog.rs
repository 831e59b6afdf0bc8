//! Real catalogs: chapters, authors and publication dates, withdrawal and licensed hosts.

use std::sync::Arc;

use copytrace_store::{MatchFilter, MatchStatus, Store, WorkChapter, WorkStatus, WriteOutcome};

use crate::helpers::{at, contract_tests, found, invalid, not_found, stored_page, work};

contract_tests!(
    a_work_keeps_its_chapters_author_and_publication_date,
    a_catalog_change_alone_updates_without_refingerprinting,
    chapters_outside_the_text_or_out_of_order_are_refused,
    a_match_names_the_chapters_its_evidence_copies,
    a_withdrawn_work_leaves_the_index_but_its_matches_stay_withdrawn,
    adding_a_withdrawn_work_again_brings_it_back,
    matches_on_licensed_hosts_and_their_subdomains_are_licensed,
    a_licence_for_one_work_covers_only_that_work,
    licensed_hosts_are_validated_and_owned,
    review_cannot_set_a_derived_status,
    a_batch_of_works_is_written_whole_or_not_at_all,
    pages_copying_only_withdrawn_works_are_not_checked_for_removal,
);

/// Three chapters of ten bytes each.
const NOVEL: &str = "chapter-1.chapter-2.chapter-3.";

fn chapters() -> Vec<WorkChapter> {
    (0..3)
        .map(|i| WorkChapter {
            ordinal: i,
            title: format!("第{}章", i + 1),
            start: i * 10,
            end: i * 10 + 10,
        })
        .collect()
}

async fn a_work_keeps_its_chapters_author_and_publication_date(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut novel = work(holder, "novel", NOVEL);
    novel.chapters = chapters();
    novel.author = Some("天蚕土豆".to_owned());
    novel.published_at = Some(at(86_400));
    let (id, outcome) = store.upsert_work(&novel).await.unwrap();
    assert_eq!(outcome, WriteOutcome::Created);

    let stored = store.get_work(id).await.unwrap();
    assert_eq!(stored.chapters, chapters());
    assert_eq!(stored.summary.chapter_count, 3);
    assert_eq!(stored.summary.author.as_deref(), Some("天蚕土豆"));
    assert_eq!(stored.summary.published_at, Some(at(86_400)));
    assert_eq!(stored.summary.status, WorkStatus::Active);
    assert_eq!(stored.summary.withdrawn_at, None);
    assert_eq!(
        store.upsert_work(&novel).await.unwrap(),
        (id, WriteOutcome::Unchanged),
        "the same catalog entry again changes nothing"
    );
}

async fn a_catalog_change_alone_updates_without_refingerprinting(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut novel = work(holder, "novel", NOVEL);
    let (id, _) = store.upsert_work(&novel).await.unwrap();
    let page = stored_page(store.as_ref(), "http://pirate.example/1", "copy").await;
    store
        .record_page_matches(
            page,
            &crate::helpers::hash_of("copy"),
            &[found(id, 0.9, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();

    novel.chapters = chapters();
    novel.author = Some("someone".to_owned());
    novel.licensed_hosts = Some(vec!["partner.example".to_owned()]);
    assert_eq!(
        store.upsert_work(&novel).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    assert_eq!(store.get_work(id).await.unwrap().chapters, chapters());
    assert!(
        store.pages_to_match(10).await.unwrap().is_empty(),
        "the text did not change: no page needs matching again"
    );
    assert_eq!(
        store.upsert_work(&novel).await.unwrap().1,
        WriteOutcome::Unchanged
    );
    // Without a catalog, the licensed hosts stay as they are.
    novel.licensed_hosts = None;
    assert_eq!(
        store.upsert_work(&novel).await.unwrap().1,
        WriteOutcome::Unchanged
    );
    let hosts = store.list_licensed_hosts(Some(holder)).await.unwrap();
    assert_eq!(hosts.len(), 1);
    assert_eq!(
        (hosts[0].work_id, hosts[0].host.as_str()),
        (Some(id), "partner.example")
    );
    // An empty list from a catalog takes them away.
    novel.licensed_hosts = Some(Vec::new());
    assert_eq!(
        store.upsert_work(&novel).await.unwrap().1,
        WriteOutcome::Updated
    );
    assert!(store.list_licensed_hosts(None).await.unwrap().is_empty());
}

async fn chapters_outside_the_text_or_out_of_order_are_refused(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut novel = work(holder, "novel", NOVEL);
    novel.chapters = chapters();
    novel.chapters[2].end = 31;
    invalid(store.upsert_work(&novel).await);
    novel.chapters = chapters();
    novel.chapters.swap(0, 1);
    invalid(store.upsert_work(&novel).await);
    novel.chapters = chapters();
    novel.licensed_hosts = Some(vec!["https://Partner.example/".to_owned()]);
    invalid(store.upsert_work(&novel).await);
    assert!(store.list_works(None).await.unwrap().is_empty());
}

async fn a_match_names_the_chapters_its_evidence_copies(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    // Chapters of 1,000 bytes: a 10-byte passage is too little to name one, half of one is not.
    let text = "x".repeat(3000);
    let mut novel = work(holder, "novel", &text);
    novel.chapters = (0..3)
        .map(|i| WorkChapter {
            ordinal: i,
            title: format!("Chapter {}", i + 1),
            start: i * 1000,
            end: i * 1000 + 1000,
        })
        .collect();
    let (id, _) = store.upsert_work(&novel).await.unwrap();
    let page = stored_page(store.as_ref(), "http://pirate.example/7", "page").await;
    let mut copy = found(id, 0.9, &[]);
    // Most of chapter 2, and ten bytes of chapter 3.
    copy.evidence = vec![copytrace_store::EvidencePassage {
        page_start: 0,
        page_end: 900,
        work_start: 1100,
        work_end: 2010,
    }];
    store
        .record_page_matches(page, &crate::helpers::hash_of("page"), &[copy], at(1))
        .await
        .unwrap();
    let listed = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(listed.len(), 1);
    let named: Vec<(u32, &str, u32)> = listed[0]
        .chapters
        .iter()
        .map(|c| (c.ordinal, c.title.as_str(), c.copied_bytes))
        .collect();
    assert_eq!(named, [(1, "Chapter 2", 900)]);
    assert!((listed[0].chapters[0].coverage - 0.9).abs() < 1e-9);
}

async fn a_withdrawn_work_leaves_the_index_but_its_matches_stay_withdrawn(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (gone, _) = store
        .upsert_work(&work(holder, "gone", NOVEL))
        .await
        .unwrap();
    let (kept, _) = store
        .upsert_work(&work(holder, "kept", "another text entirely"))
        .await
        .unwrap();
    let page = stored_page(store.as_ref(), "http://pirate.example/1", "copy").await;
    let hash = crate::helpers::hash_of("copy");
    store
        .record_page_matches(
            page,
            &hash,
            &[found(gone, 0.9, &[(0, 0)]), found(kept, 0.8, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();

    assert!(store.withdraw_work(gone, at(2)).await.unwrap());
    assert!(
        !store.withdraw_work(gone, at(3)).await.unwrap(),
        "withdrawing twice changes nothing"
    );
    not_found(store.withdraw_work(9_999, at(3)).await);
    let summary = store.get_work(gone).await.unwrap().summary;
    assert_eq!(
        (summary.status, summary.withdrawn_at),
        (WorkStatus::Withdrawn, Some(at(2)))
    );
    assert!(
        store
            .all_segments()
            .await
            .unwrap()
            .iter()
            .all(|s| s.work_id != gone),
        "a withdrawn work's windows leave the index"
    );
    assert!(
        store
            .all_segments()
            .await
            .unwrap()
            .iter()
            .any(|s| s.work_id == kept)
    );

    // Matching the page again (the withdrawn work is no longer found) keeps its match.
    store.mark_all_pages_unmatched().await.unwrap();
    store
        .record_page_matches(page, &hash, &[found(kept, 0.8, &[(0, 0)])], at(4))
        .await
        .unwrap();
    let statuses = listed_as(store.as_ref(), false, |m| (m.work_id, m.status)).await;
    assert_eq!(
        statuses,
        [(gone, MatchStatus::Withdrawn), (kept, MatchStatus::Open)]
    );
}

async fn adding_a_withdrawn_work_again_brings_it_back(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let novel = work(holder, "novel", NOVEL);
    let (id, _) = store.upsert_work(&novel).await.unwrap();
    store.withdraw_work(id, at(1)).await.unwrap();
    assert_eq!(
        store.upsert_work(&novel).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    let summary = store.get_work(id).await.unwrap().summary;
    assert_eq!(
        (summary.status, summary.withdrawn_at),
        (WorkStatus::Active, None)
    );
    assert!(
        store
            .all_segments()
            .await
            .unwrap()
            .iter()
            .any(|s| s.work_id == id)
    );
}

/// `(url, status)` of every listed match, licensed ones included.
async fn listed(store: &dyn Store, include_licensed: bool) -> Vec<(String, MatchStatus)> {
    listed_as(store, include_licensed, |m| (m.page_url, m.status)).await
}

/// Every listed match, licensed ones when asked, each seen through `view`.
async fn listed_as<T>(
    store: &dyn Store,
    include_licensed: bool,
    view: impl Fn(copytrace_store::MatchRecord) -> T,
) -> Vec<T> {
    store
        .list_matches(&MatchFilter {
            include_licensed,
            ..MatchFilter::default()
        })
        .await
        .unwrap()
        .into_iter()
        .map(view)
        .collect()
}

async fn matched_page(store: &dyn Store, url: &str, work_id: i64) {
    let page = stored_page(store, url, url).await;
    store
        .record_page_matches(
            page,
            &crate::helpers::hash_of(url),
            &[found(work_id, 0.9, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();
}

async fn matches_on_licensed_hosts_and_their_subdomains_are_licensed(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (id, _) = store
        .upsert_work(&work(holder, "novel", NOVEL))
        .await
        .unwrap();
    for url in [
        "http://partner.example/1",
        "http://m.partner.example/1",
        "http://partner.example:8080/1",
        "http://notpartner.example/1",
        "http://partner.example.pirate.example/1",
    ] {
        matched_page(store.as_ref(), url, id).await;
    }
    let hosts = vec!["partner.example".to_owned()];
    assert_eq!(
        store
            .add_licensed_hosts(holder, None, &hosts)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .add_licensed_hosts(holder, None, &hosts)
            .await
            .unwrap(),
        0
    );

    let open = MatchStatus::Open;
    let licensed = MatchStatus::Licensed;
    assert_eq!(
        listed(store.as_ref(), true).await,
        [
            ("http://m.partner.example/1".to_owned(), licensed),
            ("http://notpartner.example/1".to_owned(), open),
            ("http://partner.example.pirate.example/1".to_owned(), open),
            ("http://partner.example/1".to_owned(), licensed),
            ("http://partner.example:8080/1".to_owned(), licensed),
        ]
    );
    assert_eq!(
        listed(store.as_ref(), false).await,
        [
            ("http://notpartner.example/1".to_owned(), open),
            ("http://partner.example.pirate.example/1".to_owned(), open),
        ],
        "reports leave licensed matches out by default"
    );
    assert_eq!(
        store
            .remove_licensed_hosts(holder, None, &hosts)
            .await
            .unwrap(),
        1
    );
    assert_eq!(listed(store.as_ref(), false).await.len(), 5);
}

async fn a_licence_for_one_work_covers_only_that_work(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other_holder = store.ensure_rights_holder("Acme").await.unwrap();
    let (licensed_work, _) = store.upsert_work(&work(holder, "a", NOVEL)).await.unwrap();
    let (other_work, _) = store
        .upsert_work(&work(holder, "b", "second text"))
        .await
        .unwrap();
    let (foreign_work, _) = store
        .upsert_work(&work(other_holder, "c", "third text"))
        .await
        .unwrap();
    let page = stored_page(store.as_ref(), "http://partner.example/1", "copy").await;
    store
        .record_page_matches(
            page,
            &crate::helpers::hash_of("copy"),
            &[
                found(licensed_work, 0.9, &[(0, 0)]),
                found(other_work, 0.9, &[(0, 0)]),
                found(foreign_work, 0.9, &[(0, 0)]),
            ],
            at(1),
        )
        .await
        .unwrap();
    store
        .add_licensed_hosts(holder, Some(licensed_work), &["partner.example".to_owned()])
        .await
        .unwrap();
    let statuses = listed_as(store.as_ref(), true, |m| (m.work_id, m.status)).await;
    assert_eq!(
        statuses,
        [
            (licensed_work, MatchStatus::Licensed),
            (other_work, MatchStatus::Open),
            (foreign_work, MatchStatus::Open),
        ]
    );
}

async fn licensed_hosts_are_validated_and_owned(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other = store.ensure_rights_holder("Acme").await.unwrap();
    let (theirs, _) = store.upsert_work(&work(other, "x", NOVEL)).await.unwrap();
    for bad in [
        "",
        "Partner.example",
        "partner.example/path",
        "*.partner.example",
        ".example",
    ] {
        invalid(
            store
                .add_licensed_hosts(holder, None, &[bad.to_owned()])
                .await,
        );
    }
    let host = vec!["partner.example".to_owned()];
    not_found(store.add_licensed_hosts(holder, Some(theirs), &host).await);
    not_found(store.add_licensed_hosts(9_999, None, &host).await);
    assert!(store.list_licensed_hosts(None).await.unwrap().is_empty());
}

async fn review_cannot_set_a_derived_status(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (id, _) = store
        .upsert_work(&work(holder, "novel", NOVEL))
        .await
        .unwrap();
    matched_page(store.as_ref(), "http://pirate.example/1", id).await;
    let match_id = store.list_matches(&MatchFilter::default()).await.unwrap()[0].id;
    invalid(
        store
            .set_match_status(match_id, MatchStatus::Licensed)
            .await,
    );
    invalid(
        store
            .set_match_status(match_id, MatchStatus::Withdrawn)
            .await,
    );
    store
        .set_match_status(match_id, MatchStatus::NoticeSent)
        .await
        .unwrap();
}

async fn a_batch_of_works_is_written_whole_or_not_at_all(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut batch = vec![
        work(holder, "a", NOVEL),
        work(holder, "b", "second text"),
        work(holder, "c", "third text"),
    ];
    batch[1].chapters = chapters();
    batch[1].chapters[0].end = 99;
    invalid(store.upsert_works(&batch).await);
    assert!(
        store.list_works(None).await.unwrap().is_empty(),
        "nothing written"
    );

    batch[1].chapters.clear();
    let done = store.upsert_works(&batch).await.unwrap();
    assert_eq!(
        done.iter().map(|(_, o)| *o).collect::<Vec<_>>(),
        [WriteOutcome::Created; 3]
    );
    batch[2] = work(holder, "c", "third text, revised");
    let again = store.upsert_works(&batch).await.unwrap();
    assert_eq!(
        again,
        [
            (done[0].0, WriteOutcome::Unchanged),
            (done[1].0, WriteOutcome::Unchanged),
            (done[2].0, WriteOutcome::Updated),
        ]
    );
    let listed: Vec<String> = store
        .list_works(None)
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.external_id)
        .collect();
    assert_eq!(listed, ["a", "b", "c"]);
    assert_eq!(
        store.get_work(done[2].0).await.unwrap().content,
        "third text, revised"
    );
}

async fn pages_copying_only_withdrawn_works_are_not_checked_for_removal(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (gone, _) = store
        .upsert_work(&work(holder, "gone", NOVEL))
        .await
        .unwrap();
    let (kept, _) = store
        .upsert_work(&work(holder, "kept", "another text"))
        .await
        .unwrap();
    matched_page(store.as_ref(), "http://pirate.example/only-gone", gone).await;
    let both = stored_page(store.as_ref(), "http://pirate.example/both", "both").await;
    store
        .record_page_matches(
            both,
            &crate::helpers::hash_of("both"),
            &[found(gone, 0.9, &[(0, 0)]), found(kept, 0.9, &[(0, 0)])],
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(store.infringing_pages(0, 10).await.unwrap().len(), 2);

    store.withdraw_work(gone, at(2)).await.unwrap();
    let checked = store.infringing_pages(0, 10).await.unwrap();
    assert_eq!(checked.len(), 1, "{checked:?}");
    assert_eq!(checked[0].url, "http://pirate.example/both");
    assert_eq!(
        checked[0].work_ids,
        [kept],
        "only the active work's copy is checked"
    );
    assert!(
        store
            .infringing_page("http://pirate.example/only-gone")
            .await
            .unwrap()
            .is_none()
    );
}
