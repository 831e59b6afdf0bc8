//! Alerts: targets per rights holder, events gathered once per target, deliveries and their
//! attempts.

use std::sync::Arc;

use copytrace_store::{
    AlertCadence, AlertEventKind, AlertKind, Availability, NewAlertTarget, NewDecision, PageCheck,
    Review, Store, StoreError,
};

use crate::helpers::{
    at, contract_tests, found, hash_of, matches_of, not_found, page, stored_work,
};

contract_tests!(
    a_target_is_told_each_new_and_removed_copy_of_its_holder_once,
    targets_are_per_holder_and_adding_one_again_updates_it,
    attempts_are_recorded_until_one_delivers,
);

fn webhook(holder: i64, url: &str, seconds: i64) -> NewAlertTarget {
    NewAlertTarget {
        rights_holder_id: holder,
        kind: AlertKind::Webhook,
        address: url.to_owned(),
        secret: "s3cret".to_owned(),
        cadence: AlertCadence::AfterRun,
        lang: "en".to_owned(),
        at: at(seconds),
    }
}

/// A page at `url` matched to `works` at `seconds`; returns the page id.
async fn matched(store: &dyn Store, url: &str, works: &[i64], seconds: i64) -> i64 {
    let id = store
        .upsert_page(&page(url, url, at(seconds)))
        .await
        .unwrap()
        .id;
    let verdict: Vec<_> = works.iter().map(|&w| found(w, 0.9, &[(0, 0)])).collect();
    store
        .record_page_matches(id, &hash_of(url), &verdict, at(seconds))
        .await
        .unwrap();
    id
}

async fn a_target_is_told_each_new_and_removed_copy_of_its_holder_once(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let theirs = store.ensure_rights_holder("Zongheng").await.unwrap();
    let my_work = stored_work(&*store, mine, "mine", "text of mine").await;
    let their_work = stored_work(&*store, theirs, "theirs", "text of theirs").await;
    // A copy from before the target was added is history, not news.
    matched(&*store, "https://pirate.example/old", &[my_work], 5).await;
    let target = store
        .add_alert_target(&webhook(mine, "https://hooks.example/a", 10))
        .await
        .unwrap();
    let page = matched(
        &*store,
        "https://pirate.example/1",
        &[my_work, their_work],
        20,
    )
    .await;
    let rejected = matched(&*store, "https://pirate.example/2", &[my_work], 21).await;
    let rejected_match = matches_of(&*store, rejected).await[0].id;
    store
        .decide_match(&NewDecision {
            match_id: rejected_match,
            rights_holder_id: Some(mine),
            review: Review::Rejected,
            actor: "me".into(),
            note: String::new(),
            at: at(22),
        })
        .await
        .unwrap();

    let first = store
        .gather_alert(target, "key-1", at(30))
        .await
        .unwrap()
        .expect("a new copy to tell");
    let my_match = matches_of(&*store, page)
        .await
        .into_iter()
        .find(|m| m.work_id == my_work)
        .unwrap();
    assert_eq!(first.delivery_key, "key-1");
    assert_eq!(first.events.len(), 1, "{:?}", first.events);
    let event = &first.events[0];
    assert_eq!(event.event, AlertEventKind::New);
    assert_eq!(event.match_id, my_match.id);
    assert_eq!(event.page_url, "https://pirate.example/1");
    assert_eq!(event.work_external_id, "mine");
    assert_eq!(event.review, Review::Confirmed);
    assert!(
        store
            .gather_alert(target, "key-2", at(31))
            .await
            .unwrap()
            .is_none(),
        "nothing is told twice"
    );

    // The copy disappears: that is news once too.
    store
        .record_page_check(&PageCheck {
            page_id: page,
            run_id: None,
            checked_at: at(40),
            availability: Availability::Gone,
            http_status: Some(404),
            detail: "gone".into(),
            still_present: Vec::new(),
            removed: vec![my_work, their_work],
        })
        .await
        .unwrap();
    let second = store
        .gather_alert(target, "key-3", at(50))
        .await
        .unwrap()
        .expect("a removal to tell");
    assert_eq!(second.events.len(), 1);
    assert_eq!(second.events[0].event, AlertEventKind::Removed);
    assert_eq!(second.events[0].removed_at, Some(at(40)));
    assert!(
        store
            .gather_alert(target, "key-4", at(51))
            .await
            .unwrap()
            .is_none()
    );

    let deliveries = store.alert_deliveries(target).await.unwrap();
    assert_eq!(
        deliveries
            .iter()
            .map(|d| d.delivery_key.as_str())
            .collect::<Vec<_>>(),
        ["key-3", "key-1"],
        "only gathered deliveries are kept, newest first"
    );
    assert_eq!(deliveries[1].events, first.events, "the events as gathered");
    not_found(store.gather_alert(target + 100, "key-5", at(60)).await);
}

async fn targets_are_per_holder_and_adding_one_again_updates_it(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let theirs = store.ensure_rights_holder("Zongheng").await.unwrap();
    let id = store
        .add_alert_target(&webhook(mine, "https://hooks.example/a", 1))
        .await
        .unwrap();
    let again = store
        .add_alert_target(&NewAlertTarget {
            cadence: AlertCadence::Daily,
            secret: "rotated".into(),
            ..webhook(mine, "https://hooks.example/a", 2)
        })
        .await
        .unwrap();
    assert_eq!(again, id, "the same target");
    let email = store
        .add_alert_target(&NewAlertTarget {
            kind: AlertKind::Email,
            address: "legal@theirs.example".into(),
            secret: String::new(),
            ..webhook(theirs, "", 3)
        })
        .await
        .unwrap();
    let mine_only = store.list_alert_targets(Some(mine)).await.unwrap();
    assert_eq!(mine_only.len(), 1);
    assert_eq!(mine_only[0].cadence, AlertCadence::Daily);
    assert_eq!(mine_only[0].secret, "rotated");
    assert_eq!(mine_only[0].created_at, at(1), "history kept");
    assert_eq!(store.list_alert_targets(None).await.unwrap().len(), 2);

    assert!(matches!(
        store
            .add_alert_target(&NewAlertTarget {
                secret: String::new(),
                ..webhook(mine, "https://hooks.example/b", 4)
            })
            .await,
        Err(StoreError::Invalid(_))
    ));
    not_found(store.remove_alert_target(email, Some(mine)).await);
    store
        .remove_alert_target(email, Some(theirs))
        .await
        .unwrap();
    not_found(store.remove_alert_target(email, None).await);
    assert_eq!(store.list_alert_targets(None).await.unwrap().len(), 1);
}

async fn attempts_are_recorded_until_one_delivers(store: Arc<dyn Store>) {
    let mine = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, mine, "mine", "text of mine").await;
    let target = store
        .add_alert_target(&webhook(mine, "https://hooks.example/a", 0))
        .await
        .unwrap();
    matched(&*store, "https://pirate.example/1", &[work], 5).await;
    let delivery = store
        .gather_alert(target, "key", at(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.due_alert_deliveries(at(10), 3).await.unwrap(),
        std::slice::from_ref(&delivery)
    );
    store
        .record_alert_attempt(delivery.id, Some("HTTP 503"), at(10), at(70))
        .await
        .unwrap();
    assert!(
        store
            .due_alert_deliveries(at(69), 3)
            .await
            .unwrap()
            .is_empty(),
        "not before its next attempt"
    );
    let due = store.due_alert_deliveries(at(70), 3).await.unwrap();
    assert_eq!(due[0].attempts, 1);
    assert_eq!(due[0].last_error.as_deref(), Some("HTTP 503"));
    assert!(
        store
            .due_alert_deliveries(at(70), 1)
            .await
            .unwrap()
            .is_empty(),
        "none past its attempts"
    );
    store
        .record_alert_attempt(delivery.id, None, at(71), at(71))
        .await
        .unwrap();
    assert!(
        store
            .due_alert_deliveries(at(1_000), 9)
            .await
            .unwrap()
            .is_empty()
    );
    // A late report of a failure (a concurrent sender) changes nothing once delivered.
    store
        .record_alert_attempt(delivery.id, Some("late"), at(72), at(80))
        .await
        .unwrap();
    let stored = &store.alert_deliveries(target).await.unwrap()[0];
    assert_eq!(stored.delivered_at, Some(at(71)));
    assert_eq!(stored.attempts, 2);
}
