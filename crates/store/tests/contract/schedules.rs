//! Crawl schedules.

use std::sync::Arc;

use copytrace_store::{NewSchedule, Store};
use serde_json::json;

use crate::helpers::{contract_tests, invalid, not_found};

contract_tests!(
    a_schedule_round_trips_and_starts_enabled,
    duplicate_schedule_name_is_refused,
    schedules_are_listed_by_name_and_can_be_disabled_and_deleted,
    changing_an_unknown_schedule_is_not_found,
);

fn schedule(name: &str) -> NewSchedule {
    NewSchedule {
        name: name.to_owned(),
        cron: "0 3 * * *".to_owned(),
        timezone: "Asia/Shanghai".to_owned(),
        seeds: vec![
            "https://pirate.example/".to_owned(),
            "https://mirror.example/书".to_owned(),
        ],
        config: json!({ "max_pages": 500, "same_host": true }),
        owner: Some("ops@example.com".to_owned()),
    }
}

async fn a_schedule_round_trips_and_starts_enabled(store: Arc<dyn Store>) {
    let new = schedule("nightly");
    let id = store.create_schedule(&new).await.unwrap();
    let listed = store.list_schedules().await.unwrap();
    assert_eq!(listed.len(), 1);
    let stored = &listed[0];
    assert_eq!(stored.id, id);
    assert_eq!(stored.name, new.name);
    assert_eq!(stored.cron, new.cron);
    assert_eq!(stored.timezone, new.timezone);
    assert_eq!(stored.seeds, new.seeds);
    assert_eq!(stored.config, new.config);
    assert_eq!(stored.owner, new.owner);
    assert!(stored.enabled);
}

async fn duplicate_schedule_name_is_refused(store: Arc<dyn Store>) {
    store.create_schedule(&schedule("nightly")).await.unwrap();
    let why = invalid(store.create_schedule(&schedule("nightly")).await);
    assert!(
        why.contains("nightly") && why.contains("already exists"),
        "{why}"
    );
    assert_eq!(store.list_schedules().await.unwrap().len(), 1);
}

async fn schedules_are_listed_by_name_and_can_be_disabled_and_deleted(store: Arc<dyn Store>) {
    let weekly = store.create_schedule(&schedule("weekly")).await.unwrap();
    let hourly = store.create_schedule(&schedule("hourly")).await.unwrap();
    let daily = store.create_schedule(&schedule("daily")).await.unwrap();

    store.set_schedule_enabled(hourly, false).await.unwrap();
    store.delete_schedule(weekly).await.unwrap();
    let listed: Vec<(i64, String, bool)> = store
        .list_schedules()
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.name, s.enabled))
        .collect();
    assert_eq!(
        listed,
        [
            (daily, "daily".to_owned(), true),
            (hourly, "hourly".to_owned(), false)
        ]
    );

    store.set_schedule_enabled(hourly, true).await.unwrap();
    assert!(
        store
            .list_schedules()
            .await
            .unwrap()
            .iter()
            .all(|s| s.enabled)
    );
}

async fn changing_an_unknown_schedule_is_not_found(store: Arc<dyn Store>) {
    assert_eq!(
        not_found(store.set_schedule_enabled(8, false).await),
        "schedule 8"
    );
    assert_eq!(not_found(store.delete_schedule(8).await), "schedule 8");
    invalid(store.create_schedule(&schedule(" ")).await);
}
