//! Takedown notices: what they list, who sees them, and how removal checks move them.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use copytrace_store::{
    Availability, NewNotice, NoticeStatus, NoticeStatusChange, PageCheck, Store, StoreError,
};

use crate::helpers::{
    at, contract_tests, found, hash_of, matches_of, not_found, page, stored_work,
};

contract_tests!(
    a_notice_lists_only_its_holders_matches,
    sending_a_notice_marks_its_copies_and_checks_move_it,
    a_check_that_finds_a_copy_online_moves_its_last_seen,
    a_drafts_text_is_edited_until_it_is_sent,
);

/// A page at `url` matched to `works`; returns the page id.
pub async fn matched(store: &dyn Store, url: &str, works: &[i64]) -> i64 {
    let id = store.upsert_page(&page(url, url, at(0))).await.unwrap().id;
    let verdict: Vec<_> = works.iter().map(|&w| found(w, 0.9, &[(0, 0)])).collect();
    store
        .record_page_matches(id, &hash_of(url), &verdict, at(1))
        .await
        .unwrap();
    id
}

pub fn notice(holder: i64, match_ids: Vec<i64>) -> NewNotice {
    NewNotice {
        rights_holder_id: holder,
        site: "pirate.example".to_owned(),
        lang: "zh".to_owned(),
        body: "侵权通知".to_owned(),
        match_ids,
        at: at(10),
    }
}

/// A move of notice `id` by `cli:tester`.
pub fn change(
    id: i64,
    status: NoticeStatus,
    rights_holder_id: Option<i64>,
    at: DateTime<Utc>,
) -> NoticeStatusChange {
    NoticeStatusChange {
        id,
        status,
        rights_holder_id,
        actor: "cli:tester".to_owned(),
        note: None,
        at,
    }
}

pub fn check(page_id: i64, seconds: i64, removed: Vec<i64>, present: Vec<i64>) -> PageCheck {
    PageCheck {
        page_id,
        run_id: None,
        checked_at: at(seconds),
        availability: if removed.is_empty() {
            Availability::Online
        } else {
            Availability::Gone
        },
        http_status: Some(if removed.is_empty() { 200 } else { 404 }),
        detail: "check".to_owned(),
        still_present: present,
        removed,
    }
}

async fn a_notice_lists_only_its_holders_matches(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let theirs = store.ensure_rights_holder("Zongheng").await.unwrap();
    let my_work = stored_work(&*store, mine, "mine", "text of mine").await;
    let their_work = stored_work(&*store, theirs, "theirs", "text of theirs").await;
    let page = matched(&*store, "https://pirate.example/1", &[my_work, their_work]).await;
    let ids: Vec<(i64, i64)> = matches_of(&*store, page)
        .await
        .iter()
        .map(|m| (m.work_id, m.id))
        .collect();
    let my_match = ids.iter().find(|(w, _)| *w == my_work).unwrap().1;
    let their_match = ids.iter().find(|(w, _)| *w == their_work).unwrap().1;

    not_found(
        store
            .create_notice(&notice(mine, vec![my_match, their_match]))
            .await,
    );
    assert!(
        store.list_notices(None).await.unwrap().is_empty(),
        "nothing stored"
    );
    assert!(matches!(
        store.create_notice(&notice(mine, Vec::new())).await,
        Err(StoreError::Invalid(_))
    ));

    let id = store
        .create_notice(&notice(mine, vec![my_match]))
        .await
        .unwrap();
    let stored = store.get_notice(id, Some(mine)).await.unwrap();
    assert_eq!(stored.match_ids, [my_match]);
    assert_eq!(stored.status, NoticeStatus::Draft);
    assert_eq!((stored.created_at, stored.sent_at), (at(10), None));
    assert_eq!(stored.body, "侵权通知");
    not_found(store.get_notice(id, Some(theirs)).await);
    assert!(store.list_notices(Some(theirs)).await.unwrap().is_empty());
    assert_eq!(store.list_notices(Some(mine)).await.unwrap().len(), 1);
}

async fn sending_a_notice_marks_its_copies_and_checks_move_it(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let first = matched(&*store, "https://pirate.example/1", &[work]).await;
    let second = matched(&*store, "https://pirate.example/2", &[work]).await;
    let mut ids = Vec::new();
    for page in [first, second] {
        ids.push(matches_of(&*store, page).await[0].id);
    }
    let id = store
        .create_notice(&notice(holder, ids.clone()))
        .await
        .unwrap();

    // Only removal checks verify removals.
    assert!(matches!(
        store
            .set_notice_status(&change(id, NoticeStatus::RemovalVerified, None, at(20)))
            .await,
        Err(StoreError::Invalid(_))
    ));
    // A draft is not followed by checks.
    assert_eq!(store.refresh_notices(at(20)).await.unwrap(), 0);

    store
        .set_notice_status(&change(id, NoticeStatus::Sent, Some(holder), at(30)))
        .await
        .unwrap();
    let sent = store.get_notice(id, None).await.unwrap();
    assert_eq!(
        (sent.status, sent.sent_at),
        (NoticeStatus::Sent, Some(at(30)))
    );
    for page in [first, second] {
        assert_eq!(
            matches_of(&*store, page).await[0].status,
            copytrace_store::MatchStatus::NoticeSent
        );
    }

    // One page gone: partially removed.
    store
        .record_page_check(&check(first, 100, vec![work], Vec::new()))
        .await
        .unwrap();
    assert_eq!(store.refresh_notices(at(110)).await.unwrap(), 1);
    let partial = store.get_notice(id, None).await.unwrap();
    assert_eq!(
        (partial.status, partial.removed, partial.status_changed_at),
        (NoticeStatus::PartiallyRemoved, 1, Some(at(110)))
    );
    assert_eq!(
        store.refresh_notices(at(115)).await.unwrap(),
        0,
        "nothing new"
    );
    // Both gone: verified.
    store
        .record_page_check(&check(second, 120, vec![work], Vec::new()))
        .await
        .unwrap();
    store.refresh_notices(at(130)).await.unwrap();
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::RemovalVerified
    );
    // One comes back: partially removed again.
    store
        .record_page_check(&check(first, 200, Vec::new(), vec![work]))
        .await
        .unwrap();
    store.refresh_notices(at(210)).await.unwrap();
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::PartiallyRemoved
    );
    // Ignored by hand: checks leave it alone.
    store
        .set_notice_status(&change(id, NoticeStatus::Ignored, None, at(300)))
        .await
        .unwrap();
    store
        .record_page_check(&check(first, 400, vec![work], Vec::new()))
        .await
        .unwrap();
    assert_eq!(store.refresh_notices(at(410)).await.unwrap(), 0);
    assert_eq!(
        store.get_notice(id, None).await.unwrap().status,
        NoticeStatus::Ignored
    );
}

async fn a_drafts_text_is_edited_until_it_is_sent(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let theirs = store.ensure_rights_holder("Zongheng").await.unwrap();
    let work = stored_work(&*store, mine, "novel", "text of novel").await;
    let page = matched(&*store, "https://pirate.example/1", &[work]).await;
    let id = store
        .create_notice(&notice(mine, vec![matches_of(&*store, page).await[0].id]))
        .await
        .unwrap();
    store
        .set_notice_body(id, Some(mine), "改过的通知")
        .await
        .unwrap();
    assert_eq!(store.get_notice(id, None).await.unwrap().body, "改过的通知");
    not_found(store.set_notice_body(id, Some(theirs), "theirs").await);
    assert!(matches!(
        store.set_notice_body(id, None, "  ").await,
        Err(StoreError::Invalid(_))
    ));
    store
        .set_notice_status(&change(id, NoticeStatus::Sent, None, at(20)))
        .await
        .unwrap();
    assert!(matches!(
        store.set_notice_body(id, None, "after sending").await,
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(
        store.get_notice(id, None).await.unwrap().body,
        "改过的通知",
        "a sent notice keeps the text it was sent with"
    );
    not_found(store.set_notice_body(id + 100, None, "missing").await);
}

async fn a_check_that_finds_a_copy_online_moves_its_last_seen(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "novel", "text of novel").await;
    let page = matched(&*store, "https://pirate.example/1", &[work]).await;
    assert_eq!(matches_of(&*store, page).await[0].last_seen, at(1));
    store
        .record_page_check(&check(page, 5_000, Vec::new(), vec![work]))
        .await
        .unwrap();
    assert_eq!(matches_of(&*store, page).await[0].last_seen, at(5_000));
    // An older check arriving late never moves it back.
    store
        .record_page_check(&check(page, 3_000, Vec::new(), vec![work]))
        .await
        .unwrap();
    assert_eq!(matches_of(&*store, page).await[0].last_seen, at(5_000));
}
