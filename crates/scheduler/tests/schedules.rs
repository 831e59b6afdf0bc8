//! Cron schedules fired by the scheduler tick, against a real (SQLite) store and a test clock:
//! a month of daily ticks, a three-day outage, racing schedulers, pausing.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Timelike, Utc};
use copytrace_scheduler::cron::CronSchedule;
use copytrace_scheduler::schedules::{JobFactory, fire_due_schedules};
use copytrace_scheduler::{Clock, ManualClock};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    NewJob, NewSchedule, Run, RunFilter, RunKind, RunState, RunTrigger, Schedule, Store,
};

async fn store_in(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    let url = format!("sqlite://{}", dir.path().join("schedules.db").display());
    let store = SqliteStore::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    Arc::new(store)
}

/// Jobs that say which tick they carry.
struct TickJobs;

impl JobFactory for TickJobs {
    fn job_for(&self, schedule: &Schedule, scheduled_for: DateTime<Utc>) -> Result<NewJob, String> {
        Ok(NewJob {
            kind: "crawl".to_owned(),
            payload: serde_json::json!({ "schedule": schedule.name, "tick": scheduled_for }),
            dedup_key: None,
            run_at: scheduled_for,
            max_attempts: 1,
        })
    }
}

async fn nightly(store: &dyn Store, cron: &str) -> i64 {
    store
        .create_schedule(&NewSchedule {
            name: "nightly".to_owned(),
            kind: RunKind::Crawl,
            cron: cron.to_owned(),
            timezone: "Asia/Shanghai".to_owned(),
            seeds: vec!["https://pirate.example/".to_owned()],
            config: serde_json::json!({}),
            owner: None,
        })
        .await
        .unwrap()
}

async fn runs(store: &dyn Store) -> Vec<Run> {
    let mut runs = store.list_runs(&RunFilter::default()).await.unwrap();
    runs.reverse();
    runs
}

/// Ticks the scheduler every `step` from the clock's time until `until`.
async fn tick_until(
    store: &dyn Store,
    clock: &ManualClock,
    until: DateTime<Utc>,
    step: TimeDelta,
) -> usize {
    let mut fired = 0;
    while clock.now() < until {
        clock.advance(step);
        let report = fire_due_schedules(store, &TickJobs, clock.now())
            .await
            .unwrap();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        fired += report.fired.len();
    }
    fired
}

#[tokio::test]
async fn a_daily_shanghai_schedule_fires_once_a_day_for_a_month_and_catches_up_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    let id = nightly(store.as_ref(), "0 3 * * *").await;
    // The schedule was created "now"; the test clock starts there and moves by 7 minutes, a
    // step that does not divide the day, so ticks are seen at varying delays.
    let created = store
        .get_schedule_by_name("nightly")
        .await
        .unwrap()
        .created_at;
    let clock = ManualClock::new(created);
    let step = TimeDelta::minutes(7);
    let month_end = created + TimeDelta::days(30);
    let fired = tick_until(store.as_ref(), &clock, month_end, step).await;
    assert_eq!(fired, 30);

    let month = runs(store.as_ref()).await;
    assert_eq!(month.len(), 30);
    let mut local_days = BTreeSet::new();
    for run in &month {
        let tick = run.scheduled_for.expect("a scheduled run has its tick");
        // 03:00 in Shanghai (UTC+8, no DST) is 19:00 UTC the day before.
        assert_eq!((tick.hour(), tick.minute(), tick.second()), (19, 0, 0));
        assert!(
            run.created_at >= tick && run.created_at < tick + step,
            "{run:?}"
        );
        assert_eq!(run.trigger, RunTrigger::Schedule);
        assert_eq!(run.state, RunState::Queued);
        assert_eq!(run.schedule_id, Some(id));
        assert_eq!(run.schedule_name.as_deref(), Some("nightly"));
        let job = store.get_job(run.job_id.unwrap()).await.unwrap();
        assert_eq!(job.payload["tick"], serde_json::json!(tick));
        local_days.insert(tick.date_naive());
    }
    assert_eq!(local_days.len(), 30, "one run per day");
    for pair in month.windows(2) {
        let gap = pair[1].scheduled_for.unwrap() - pair[0].scheduled_for.unwrap();
        assert_eq!(gap, TimeDelta::days(1));
    }

    // Down for three days and a bit: nothing ticks.
    let last_tick = month.last().unwrap().scheduled_for.unwrap();
    clock.set(last_tick + TimeDelta::days(3) + TimeDelta::hours(5));
    let report = fire_due_schedules(store.as_ref(), &TickJobs, clock.now())
        .await
        .unwrap();
    assert_eq!(report.fired.len(), 1, "the missed ticks are caught up once");
    let catch_up = &report.fired[0];
    assert_eq!(catch_up.trigger, RunTrigger::CatchUp);
    assert_eq!(catch_up.scheduled_for, last_tick + TimeDelta::days(3));
    assert_eq!(catch_up.missed, 2);
    // Ticking on: no second catch-up, and the next day is on time again.
    let fired = tick_until(
        store.as_ref(),
        &clock,
        last_tick + TimeDelta::days(4) + TimeDelta::hours(1),
        step,
    )
    .await;
    assert_eq!(fired, 1);
    let all = runs(store.as_ref()).await;
    assert_eq!(all.len(), 32);
    let last = all.last().unwrap();
    assert_eq!(last.trigger, RunTrigger::Schedule);
    assert_eq!(last.scheduled_for, Some(last_tick + TimeDelta::days(4)));
    assert_eq!(
        store
            .get_schedule_by_name("nightly")
            .await
            .unwrap()
            .last_fired_at,
        last.scheduled_for
    );
}

#[tokio::test]
async fn racing_schedulers_fire_each_tick_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    nightly(store.as_ref(), "*/10 * * * * *").await;
    let created = store
        .get_schedule_by_name("nightly")
        .await
        .unwrap()
        .created_at;
    // Four schedulers without leader election, each on its own clock moving by 3 s over an
    // hour of ticks every 10 s.
    let mut tasks = Vec::new();
    for offset in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let clock = ManualClock::new(created + TimeDelta::milliseconds(offset * 700));
            let mut fired = 0;
            for _ in 0..1200 {
                clock.advance(TimeDelta::seconds(3));
                let report = fire_due_schedules(store.as_ref(), &TickJobs, clock.now())
                    .await
                    .unwrap();
                fired += report.fired.len();
                tokio::task::yield_now().await;
            }
            fired
        }));
    }
    let mut fired = 0;
    for task in tasks {
        fired += task.await.unwrap();
    }
    let all = runs(store.as_ref()).await;
    assert_eq!(all.len(), fired);
    let ticks: BTreeSet<_> = all.iter().map(|r| r.scheduled_for.unwrap()).collect();
    assert_eq!(ticks.len(), all.len(), "no tick was fired twice");
    let jobs = store
        .list_jobs(&copytrace_store::JobFilter::default())
        .await
        .unwrap();
    assert_eq!(jobs.len(), all.len(), "one job per run");
    // An hour of 10-second ticks, give or take the racers' offsets and the catch-ups.
    assert!(all.len() >= 300, "{}", all.len());
}

#[tokio::test]
async fn a_paused_schedule_does_not_fire_and_owes_nothing_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    let id = nightly(store.as_ref(), "0 3 * * *").await;
    let created = store
        .get_schedule_by_name("nightly")
        .await
        .unwrap()
        .created_at;
    store.set_schedule_enabled(id, false).await.unwrap();
    let clock = ManualClock::new(created);
    let fired = tick_until(
        store.as_ref(),
        &clock,
        created + TimeDelta::days(3),
        TimeDelta::minutes(10),
    )
    .await;
    assert_eq!(fired, 0);
    // Resumed: the ticks that passed while it was paused are not owed; the next one fires
    // on time.
    store.set_schedule_enabled(id, true).await.unwrap();
    let resumed = store.get_schedule_by_name("nightly").await.unwrap();
    assert!(resumed.enabled);
    let just_after = resumed.updated_at + TimeDelta::minutes(1);
    let report = fire_due_schedules(store.as_ref(), &TickJobs, just_after)
        .await
        .unwrap();
    assert!(report.fired.is_empty(), "{:?}", report.fired);
    let next = CronSchedule::parse("0 3 * * *", "Asia/Shanghai")
        .unwrap()
        .next_after(resumed.updated_at)
        .unwrap();
    let report = fire_due_schedules(store.as_ref(), &TickJobs, next + TimeDelta::minutes(1))
        .await
        .unwrap();
    assert_eq!(report.fired.len(), 1);
    assert_eq!(report.fired[0].trigger, RunTrigger::Schedule);
    assert_eq!(report.fired[0].scheduled_for, next);
}

#[tokio::test]
async fn a_schedule_whose_expression_no_longer_parses_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir).await;
    nightly(store.as_ref(), "not a cron").await;
    let created = store
        .get_schedule_by_name("nightly")
        .await
        .unwrap()
        .created_at;
    let report = fire_due_schedules(store.as_ref(), &TickJobs, created + TimeDelta::days(2))
        .await
        .unwrap();
    assert!(report.fired.is_empty());
    assert_eq!(report.errors.len(), 1);
    assert!(report.errors[0].1.contains("field"), "{:?}", report.errors);
}
