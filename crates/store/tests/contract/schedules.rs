//! Schedules: their definitions, how configuration keeps built-in ones up to date, and firing
//! cron ticks exactly once however many schedulers race.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use copytrace_store::{
    JobFilter, JobState, NewSchedule, RunCounts, RunFilter, RunKind, RunState, RunTrigger, Store,
};
use serde_json::json;

use crate::helpers::{at, contract_tests, fire, invalid, not_found, schedule};

contract_tests!(
    a_schedule_round_trips_and_starts_enabled_and_never_fired,
    duplicate_schedule_name_is_refused,
    schedules_are_listed_by_name_and_can_be_disabled_and_deleted,
    changing_an_unknown_schedule_is_not_found,
    only_a_change_of_the_enabled_flag_moves_updated_at,
    ensuring_a_schedule_creates_it_once_then_follows_the_definition,
    ensuring_a_schedule_keeps_its_enabled_flag_and_last_fire,
    ensuring_a_schedule_of_another_kind_is_refused,
    concurrent_ensures_of_one_schedule_make_one,
    a_fire_moves_last_fired_at_and_queues_a_run_with_its_job,
    a_fire_with_a_stale_expected_value_changes_nothing,
    a_disabled_schedule_does_not_fire,
    concurrent_fires_of_one_tick_make_one_run_and_one_job,
    a_fire_that_disagrees_with_its_run_or_job_is_refused,
);

/// The store's clock stamps `created_at` and `updated_at`; waiting a little makes a later
/// stamp strictly later.
async fn tick_of_the_store_clock() {
    tokio::time::sleep(StdDuration::from_millis(5)).await;
}

async fn a_schedule_round_trips_and_starts_enabled_and_never_fired(store: Arc<dyn Store>) {
    let new = schedule("nightly");
    let id = store.create_schedule(&new).await.unwrap();
    let listed = store.list_schedules().await.unwrap();
    assert_eq!(listed.len(), 1);
    let stored = &listed[0];
    assert_eq!(stored.id, id);
    assert_eq!(stored.name, new.name);
    assert_eq!(stored.kind, RunKind::Crawl);
    assert_eq!(stored.cron, new.cron);
    assert_eq!(stored.timezone, new.timezone);
    assert_eq!(stored.seeds, new.seeds);
    assert_eq!(stored.config, new.config);
    assert_eq!(stored.owner, new.owner);
    assert!(stored.enabled);
    assert_eq!(stored.last_fired_at, None);
    assert_eq!(stored.updated_at, stored.created_at);
    assert_eq!(
        &store.get_schedule_by_name("nightly").await.unwrap(),
        stored
    );

    let dedup = NewSchedule {
        kind: RunKind::Dedup,
        seeds: Vec::new(),
        config: json!(null),
        owner: None,
        ..schedule("daily dedup")
    };
    store.create_schedule(&dedup).await.unwrap();
    let stored = store.get_schedule_by_name(" daily dedup ").await.unwrap();
    assert_eq!(
        (stored.kind, stored.seeds, stored.config, stored.owner),
        (RunKind::Dedup, Vec::new(), json!(null), None)
    );
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
    assert_eq!(
        not_found(store.get_schedule_by_name("nightly").await),
        "schedule \"nightly\""
    );
    invalid(store.create_schedule(&schedule(" ")).await);
    invalid(store.ensure_schedule(&schedule(" ")).await);
    assert!(store.list_schedules().await.unwrap().is_empty());
}

async fn only_a_change_of_the_enabled_flag_moves_updated_at(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let created = store.get_schedule_by_name("nightly").await.unwrap();
    tick_of_the_store_clock().await;
    store.set_schedule_enabled(id, true).await.unwrap();
    assert_eq!(
        store.get_schedule_by_name("nightly").await.unwrap(),
        created,
        "enabling an enabled schedule changes nothing"
    );
    store.set_schedule_enabled(id, false).await.unwrap();
    let disabled = store.get_schedule_by_name("nightly").await.unwrap();
    assert!(!disabled.enabled);
    assert!(disabled.updated_at > created.updated_at, "{disabled:?}");
    assert_eq!(disabled.created_at, created.created_at);
}

async fn ensuring_a_schedule_creates_it_once_then_follows_the_definition(store: Arc<dyn Store>) {
    let first = schedule(" nightly ");
    let id = store.ensure_schedule(&first).await.unwrap();
    let created = store.get_schedule_by_name("nightly").await.unwrap();
    assert_eq!(created.id, id);
    assert_eq!(created.name, "nightly", "the name is trimmed");
    assert!(created.enabled);
    assert_eq!(created.last_fired_at, None);
    assert_eq!(created.updated_at, created.created_at);

    tick_of_the_store_clock().await;
    assert_eq!(store.ensure_schedule(&first).await.unwrap(), id);
    assert_eq!(
        store.get_schedule_by_name("nightly").await.unwrap(),
        created,
        "the same definition changes nothing, not even updated_at"
    );

    // Each part of the definition is followed on its own.
    let changes = [
        NewSchedule {
            cron: "30 4 * * *".to_owned(),
            ..schedule("nightly")
        },
        NewSchedule {
            cron: "30 4 * * *".to_owned(),
            timezone: "Europe/Paris".to_owned(),
            ..schedule("nightly")
        },
        NewSchedule {
            cron: "30 4 * * *".to_owned(),
            timezone: "Europe/Paris".to_owned(),
            seeds: vec!["https://other.example/".to_owned()],
            ..schedule("nightly")
        },
        NewSchedule {
            cron: "30 4 * * *".to_owned(),
            timezone: "Europe/Paris".to_owned(),
            seeds: vec!["https://other.example/".to_owned()],
            config: json!({ "max_pages": 10 }),
            ..schedule("nightly")
        },
        NewSchedule {
            cron: "30 4 * * *".to_owned(),
            timezone: "Europe/Paris".to_owned(),
            seeds: vec!["https://other.example/".to_owned()],
            config: json!({ "max_pages": 10 }),
            owner: None,
            ..schedule("nightly")
        },
    ];
    let mut before = created;
    for change in changes {
        tick_of_the_store_clock().await;
        assert_eq!(store.ensure_schedule(&change).await.unwrap(), id);
        let after = store.get_schedule_by_name("nightly").await.unwrap();
        assert_eq!(
            (
                &after.cron,
                &after.timezone,
                &after.seeds,
                &after.config,
                &after.owner
            ),
            (
                &change.cron,
                &change.timezone,
                &change.seeds,
                &change.config,
                &change.owner
            )
        );
        assert!(after.updated_at > before.updated_at, "{after:?}");
        assert_eq!(after.created_at, before.created_at);
        before = after;
    }
    assert_eq!(store.list_schedules().await.unwrap().len(), 1);
}

async fn ensuring_a_schedule_keeps_its_enabled_flag_and_last_fire(store: Arc<dyn Store>) {
    let id = store.ensure_schedule(&schedule("nightly")).await.unwrap();
    store
        .fire_schedule(&fire(id, None, at(3600)))
        .await
        .unwrap()
        .expect("fired");
    store.set_schedule_enabled(id, false).await.unwrap();

    let changed = NewSchedule {
        cron: "0 4 * * *".to_owned(),
        ..schedule("nightly")
    };
    assert_eq!(store.ensure_schedule(&changed).await.unwrap(), id);
    let after = store.get_schedule_by_name("nightly").await.unwrap();
    assert_eq!(after.cron, "0 4 * * *");
    assert!(!after.enabled, "an operator's disabling survives");
    assert_eq!(after.last_fired_at, Some(at(3600)));
}

async fn ensuring_a_schedule_of_another_kind_is_refused(store: Arc<dyn Store>) {
    store.create_schedule(&schedule("nightly")).await.unwrap();
    let before = store.get_schedule_by_name("nightly").await.unwrap();
    let dedup = NewSchedule {
        kind: RunKind::Dedup,
        cron: "0 5 * * *".to_owned(),
        ..schedule("nightly")
    };
    let why = invalid(store.ensure_schedule(&dedup).await);
    assert!(
        why.contains("nightly") && why.contains("crawl") && why.contains("dedup"),
        "{why}"
    );
    assert_eq!(
        store.get_schedule_by_name("nightly").await.unwrap(),
        before,
        "nothing changed"
    );
}

async fn concurrent_ensures_of_one_schedule_make_one(store: Arc<dyn Store>) {
    // Every process of a deployment ensures the built-in schedules when it starts.
    let processes: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.ensure_schedule(&schedule("nightly")).await })
        })
        .collect();
    let mut ids = Vec::new();
    for process in processes {
        ids.push(process.await.unwrap().unwrap());
    }
    let schedules = store.list_schedules().await.unwrap();
    assert_eq!(schedules.len(), 1);
    assert!(ids.iter().all(|&id| id == schedules[0].id), "{ids:?}");
}

async fn a_fire_moves_last_fired_at_and_queues_a_run_with_its_job(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let before = store.get_schedule_by_name("nightly").await.unwrap();
    let tick = at(3600);
    let fired = store
        .fire_schedule(&fire(id, None, tick))
        .await
        .unwrap()
        .expect("the first fire of a tick happens");

    let after = store.get_schedule_by_name("nightly").await.unwrap();
    assert_eq!(after.last_fired_at, Some(tick));
    assert_eq!(
        after.updated_at, before.updated_at,
        "firing is not a change of the definition"
    );

    let run = store.get_run(fired.run_id).await.unwrap();
    assert_eq!(run.id, fired.run_id);
    assert_eq!(run.kind, RunKind::Crawl);
    assert_eq!(run.schedule_id, Some(id));
    assert_eq!(run.schedule_name.as_deref(), Some("nightly"));
    assert_eq!(run.job_id, Some(fired.job_id));
    assert_eq!(run.trigger, RunTrigger::Schedule);
    assert_eq!(run.state, RunState::Queued);
    assert_eq!(run.scheduled_for, Some(tick));
    assert_eq!(run.created_at, tick + chrono::Duration::seconds(1));
    assert_eq!((run.started_at, run.finished_at), (None, None));
    assert_eq!(run.counts, RunCounts::default());
    assert_eq!(run.stats, json!(null));
    assert_eq!(run.error, None);
    assert!(!run.cancel_requested);

    let job = store.get_job(fired.job_id).await.unwrap();
    let expected = fire(id, None, tick).job;
    assert_eq!(
        (
            &job.kind,
            &job.payload,
            job.state,
            &job.dedup_key,
            job.run_at
        ),
        (
            &expected.kind,
            &expected.payload,
            JobState::Queued,
            &None,
            expected.run_at
        )
    );
    assert_eq!(store.run_for_job(fired.job_id).await.unwrap(), Some(run));

    // The next tick fires from the value the first fire left.
    let next = store
        .fire_schedule(&fire(id, Some(tick), at(7200)))
        .await
        .unwrap()
        .expect("the next tick fires");
    assert_ne!(next, fired);
    assert_eq!(
        store
            .get_schedule_by_name("nightly")
            .await
            .unwrap()
            .last_fired_at,
        Some(at(7200))
    );
}

/// How many runs and jobs exist.
async fn runs_and_jobs(store: &dyn Store) -> (usize, usize) {
    let runs = store.list_runs(&RunFilter::default()).await.unwrap().len();
    let jobs = store.list_jobs(&JobFilter::default()).await.unwrap().len();
    (runs, jobs)
}

async fn a_fire_with_a_stale_expected_value_changes_nothing(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    store
        .fire_schedule(&fire(id, None, at(3600)))
        .await
        .unwrap()
        .expect("fired");
    let fired_once = store.get_schedule_by_name("nightly").await.unwrap();

    // Another scheduler read the schedule before the first fire, or read something else.
    for expected in [None, Some(at(0)), Some(at(7200))] {
        assert_eq!(
            store
                .fire_schedule(&fire(id, expected, at(10_800)))
                .await
                .unwrap(),
            None,
            "expected {expected:?}"
        );
    }
    assert_eq!(runs_and_jobs(&*store).await, (1, 1), "nothing was created");
    assert_eq!(
        store.get_schedule_by_name("nightly").await.unwrap(),
        fired_once,
        "the schedule did not move"
    );
}

async fn a_disabled_schedule_does_not_fire(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    store.set_schedule_enabled(id, false).await.unwrap();
    assert_eq!(
        store
            .fire_schedule(&fire(id, None, at(3600)))
            .await
            .unwrap(),
        None
    );
    assert_eq!(runs_and_jobs(&*store).await, (0, 0));
    assert_eq!(
        store
            .get_schedule_by_name("nightly")
            .await
            .unwrap()
            .last_fired_at,
        None
    );

    store.set_schedule_enabled(id, true).await.unwrap();
    assert!(
        store
            .fire_schedule(&fire(id, None, at(3600)))
            .await
            .unwrap()
            .is_some(),
        "enabled again, it fires"
    );
}

async fn concurrent_fires_of_one_tick_make_one_run_and_one_job(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let mut last = None;
    for round in 1..=3_i64 {
        let tick = at(3600 * round);
        let schedulers: Vec<_> = (0..8)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.fire_schedule(&fire(id, last, tick)).await })
            })
            .collect();
        let mut fired = Vec::new();
        for scheduler in schedulers {
            if let Some(run) = scheduler.await.unwrap().unwrap() {
                fired.push(run);
            }
        }
        assert_eq!(fired.len(), 1, "round {round}: {fired:?}");
        let run = store.get_run(fired[0].run_id).await.unwrap();
        assert_eq!(run.scheduled_for, Some(tick));
        assert_eq!(run.job_id, Some(fired[0].job_id));
        last = Some(tick);
    }
    assert_eq!(
        runs_and_jobs(&*store).await,
        (3, 3),
        "one run and one job per tick"
    );
    assert_eq!(
        store
            .get_schedule_by_name("nightly")
            .await
            .unwrap()
            .last_fired_at,
        last
    );
}

async fn a_fire_that_disagrees_with_its_run_or_job_is_refused(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let other = store.create_schedule(&schedule("other")).await.unwrap();
    let tick = at(3600);

    let mut wrong_schedule = fire(id, None, tick);
    wrong_schedule.run.schedule_id = Some(other);
    let why = invalid(store.fire_schedule(&wrong_schedule).await);
    assert!(why.contains(&format!("schedule {other}")), "{why}");

    let mut no_schedule = fire(id, None, tick);
    no_schedule.run.schedule_id = None;
    invalid(store.fire_schedule(&no_schedule).await);

    let mut wrong_tick = fire(id, None, tick);
    wrong_tick.run.scheduled_for = Some(at(60));
    invalid(store.fire_schedule(&wrong_tick).await);

    let mut no_tick = fire(id, None, tick);
    no_tick.run.scheduled_for = None;
    invalid(store.fire_schedule(&no_tick).await);

    let mut keyed = fire(id, None, tick);
    keyed.job.dedup_key = Some("crawl:nightly".to_owned());
    let why = invalid(store.fire_schedule(&keyed).await);
    assert!(why.contains("dedup key"), "{why}");

    let mut no_attempts = fire(id, None, tick);
    no_attempts.job.max_attempts = 0;
    invalid(store.fire_schedule(&no_attempts).await);

    // Firing a tick that is not after the last one would fire that tick twice.
    store
        .fire_schedule(&fire(id, None, tick))
        .await
        .unwrap()
        .expect("fired");
    let why = invalid(store.fire_schedule(&fire(id, Some(tick), tick)).await);
    assert!(why.contains("not after"), "{why}");
    invalid(store.fire_schedule(&fire(id, Some(tick), at(60))).await);

    assert_eq!(
        not_found(store.fire_schedule(&fire(999, None, tick)).await),
        "schedule 999"
    );
    assert_eq!(
        runs_and_jobs(&*store).await,
        (1, 1),
        "only the valid fire created anything"
    );
    assert_eq!(
        store
            .get_schedule_by_name("other")
            .await
            .unwrap()
            .last_fired_at,
        None
    );
}
