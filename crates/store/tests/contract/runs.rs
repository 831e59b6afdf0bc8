//! Runs: the history of crawl and dedup runs, their life cycle from queued to ended, progress,
//! and cancellation.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use copytrace_store::{
    Id, JobFilter, JobState, NewJob, NewRun, RunCounts, RunFilter, RunKind, RunState, RunTrigger,
    Store,
};
use serde_json::json;

use crate::helpers::{at, contract_tests, fire, invalid, manual_run, not_found, run_job, schedule};

contract_tests!(
    a_run_with_a_job_is_queued_and_one_without_is_running,
    creating_a_run_checks_its_job_and_schedule,
    unknown_runs_are_not_found,
    runs_are_listed_newest_first_and_filtered,
    a_run_outlives_its_schedule_without_its_name,
    the_last_succeeded_run_is_the_latest_started_one,
    starting_a_run_moves_only_a_queued_one_to_running,
    progress_is_saved_while_running_and_answers_whether_to_stop,
    ending_a_run_needs_an_end_state_and_the_last_ending_wins,
    cancelling_ends_a_queued_run_and_asks_a_running_one_to_stop,
);

/// A run carried by a queued job; returns the run's and the job's ids.
async fn queued_run(store: &dyn Store, kind: RunKind, created_at: DateTime<Utc>) -> (Id, Id) {
    let (run, job) = store
        .create_run(&manual_run(kind, None, created_at), Some(&run_job(kind)))
        .await
        .unwrap();
    (run, job.expect("a job was enqueued"))
}

/// A run done in-process, running since `started_at`.
async fn running_run(store: &dyn Store, kind: RunKind, started_at: DateTime<Utc>) -> Id {
    let (run, job) = store
        .create_run(&manual_run(kind, None, started_at), None)
        .await
        .unwrap();
    assert_eq!(job, None);
    run
}

fn counts(pages_checked: u64) -> RunCounts {
    RunCounts {
        pages_checked,
        new_matches: pages_checked / 2,
        matches_removed: pages_checked / 3,
        errors: pages_checked / 4,
        matches_reopened: pages_checked / 5,
        aliases_checked: pages_checked / 6,
        aliases_kept: pages_checked / 7,
        aliases_removed: pages_checked / 8,
    }
}

async fn a_run_with_a_job_is_queued_and_one_without_is_running(store: Arc<dyn Store>) {
    let (queued, job) = queued_run(&*store, RunKind::Dedup, at(10)).await;
    let run = store.get_run(queued).await.unwrap();
    assert_eq!(run.id, queued);
    assert_eq!(run.kind, RunKind::Dedup);
    assert_eq!((run.schedule_id, &run.schedule_name), (None, &None));
    assert_eq!(run.job_id, Some(job));
    assert_eq!(run.trigger, RunTrigger::Manual);
    assert_eq!(run.state, RunState::Queued);
    assert_eq!(run.scheduled_for, None);
    assert_eq!(run.created_at, at(10));
    assert_eq!((run.started_at, run.finished_at), (None, None));
    assert_eq!(run.counts, RunCounts::default());
    assert_eq!(run.stats, json!(null));
    assert_eq!(run.error, None);
    assert!(!run.cancel_requested);
    let enqueued = store.get_job(job).await.unwrap();
    assert_eq!(
        (enqueued.kind.as_str(), enqueued.state, enqueued.payload),
        ("dedup", JobState::Queued, run_job(RunKind::Dedup).payload)
    );
    assert_eq!(
        store.run_for_job(job).await.unwrap().map(|r| r.id),
        Some(queued)
    );

    let in_process = running_run(&*store, RunKind::Crawl, at(20)).await;
    let run = store.get_run(in_process).await.unwrap();
    assert_eq!(
        (run.state, run.job_id, run.created_at, run.started_at),
        (RunState::Running, None, at(20), Some(at(20)))
    );
    assert_eq!(
        store.list_jobs(&JobFilter::default()).await.unwrap().len(),
        1,
        "a run without a job enqueues nothing"
    );

    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let scheduled = NewRun {
        kind: RunKind::Crawl,
        schedule_id: Some(id),
        trigger: RunTrigger::CatchUp,
        scheduled_for: Some(at(3600)),
        created_at: at(4000),
    };
    let (run, job) = store
        .create_run(&scheduled, Some(&run_job(RunKind::Crawl)))
        .await
        .unwrap();
    let run = store.get_run(run).await.unwrap();
    assert_eq!(
        (
            run.schedule_id,
            run.schedule_name.as_deref(),
            run.trigger,
            run.scheduled_for,
            run.job_id
        ),
        (
            Some(id),
            Some("nightly"),
            RunTrigger::CatchUp,
            Some(at(3600)),
            job
        )
    );
}

async fn creating_a_run_checks_its_job_and_schedule(store: Arc<dyn Store>) {
    let keyed = NewJob {
        dedup_key: Some("dedup:daily".to_owned()),
        ..run_job(RunKind::Dedup)
    };
    let why = invalid(
        store
            .create_run(&manual_run(RunKind::Dedup, None, at(0)), Some(&keyed))
            .await,
    );
    assert!(why.contains("dedup key"), "{why}");
    let no_attempts = NewJob {
        max_attempts: 0,
        ..run_job(RunKind::Dedup)
    };
    invalid(
        store
            .create_run(&manual_run(RunKind::Dedup, None, at(0)), Some(&no_attempts))
            .await,
    );
    assert_eq!(
        not_found(
            store
                .create_run(
                    &manual_run(RunKind::Crawl, Some(77), at(0)),
                    Some(&run_job(RunKind::Crawl))
                )
                .await
        ),
        "schedule 77"
    );
    assert_eq!(
        not_found(
            store
                .create_run(&manual_run(RunKind::Crawl, Some(77), at(0)), None)
                .await
        ),
        "schedule 77"
    );
    assert!(
        store
            .list_runs(&RunFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_jobs(&JobFilter::default())
            .await
            .unwrap()
            .is_empty(),
        "a refused run enqueues no job"
    );
}

async fn unknown_runs_are_not_found(store: Arc<dyn Store>) {
    assert_eq!(not_found(store.get_run(999).await), "run 999");
    assert_eq!(not_found(store.start_run(999, at(0)).await), "run 999");
    assert_eq!(
        not_found(
            store
                .update_run_progress(999, &counts(1), &json!(null))
                .await
        ),
        "run 999"
    );
    assert_eq!(
        not_found(
            store
                .finish_run(
                    999,
                    RunState::Succeeded,
                    &counts(1),
                    &json!(null),
                    None,
                    at(0)
                )
                .await
        ),
        "run 999"
    );
    assert_eq!(
        not_found(store.request_run_cancel(999, at(0)).await),
        "run 999"
    );
    assert_eq!(store.run_for_job(999).await.unwrap(), None);
    let plain = store.enqueue_job(&run_job(RunKind::Crawl)).await.unwrap();
    assert_eq!(
        store.run_for_job(plain).await.unwrap(),
        None,
        "a job that carries no run"
    );
}

async fn runs_are_listed_newest_first_and_filtered(store: Arc<dyn Store>) {
    let nightly = store.create_schedule(&schedule("nightly")).await.unwrap();
    let weekly = store.create_schedule(&schedule("weekly")).await.unwrap();
    let a = store
        .fire_schedule(&fire(nightly, None, at(100)))
        .await
        .unwrap()
        .unwrap()
        .run_id;
    let b = store
        .fire_schedule(&fire(weekly, None, at(100)))
        .await
        .unwrap()
        .unwrap()
        .run_id;
    let c = running_run(&*store, RunKind::Dedup, at(200)).await;
    let d = store
        .fire_schedule(&fire(nightly, Some(at(100)), at(300)))
        .await
        .unwrap()
        .unwrap()
        .run_id;
    let (e, _) = queued_run(&*store, RunKind::Dedup, at(400)).await;
    store.start_run(d, at(301)).await.unwrap();

    let ids = |filter: RunFilter| {
        let store = store.clone();
        async move {
            store
                .list_runs(&filter)
                .await
                .unwrap()
                .into_iter()
                .map(|run| run.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(ids(RunFilter::default()).await, [e, d, c, b, a]);
    assert_eq!(
        ids(RunFilter {
            kind: Some(RunKind::Dedup),
            ..RunFilter::default()
        })
        .await,
        [e, c]
    );
    assert_eq!(
        ids(RunFilter {
            schedule_id: Some(nightly),
            ..RunFilter::default()
        })
        .await,
        [d, a]
    );
    assert_eq!(
        ids(RunFilter {
            state: Some(RunState::Running),
            ..RunFilter::default()
        })
        .await,
        [d, c]
    );
    assert_eq!(
        ids(RunFilter {
            kind: Some(RunKind::Crawl),
            state: Some(RunState::Queued),
            ..RunFilter::default()
        })
        .await,
        [b, a]
    );
    assert_eq!(
        ids(RunFilter {
            limit: Some(2),
            ..RunFilter::default()
        })
        .await,
        [e, d]
    );
    assert_eq!(
        ids(RunFilter {
            schedule_id: Some(weekly),
            state: Some(RunState::Running),
            ..RunFilter::default()
        })
        .await,
        Vec::<Id>::new()
    );

    let names: Vec<Option<String>> = store
        .list_runs(&RunFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|run| run.schedule_name)
        .collect();
    assert_eq!(
        names,
        [
            None,
            Some("nightly".to_owned()),
            None,
            Some("weekly".to_owned()),
            Some("nightly".to_owned())
        ]
    );
}

async fn a_run_outlives_its_schedule_without_its_name(store: Arc<dyn Store>) {
    let id = store.create_schedule(&schedule("nightly")).await.unwrap();
    let fired = store
        .fire_schedule(&fire(id, None, at(100)))
        .await
        .unwrap()
        .unwrap();
    store.delete_schedule(id).await.unwrap();

    let run = store.get_run(fired.run_id).await.unwrap();
    assert_eq!((run.schedule_id, &run.schedule_name), (None, &None));
    assert_eq!(
        run.scheduled_for,
        Some(at(100)),
        "the rest of the run stays"
    );
    assert_eq!(run.job_id, Some(fired.job_id));
    assert_eq!(
        store
            .list_runs(&RunFilter {
                schedule_id: Some(id),
                ..RunFilter::default()
            })
            .await
            .unwrap(),
        []
    );
    assert_eq!(store.list_runs(&RunFilter::default()).await.unwrap(), [run]);
}

async fn the_last_succeeded_run_is_the_latest_started_one(store: Arc<dyn Store>) {
    assert_eq!(
        store.last_succeeded_run(RunKind::Crawl).await.unwrap(),
        None
    );
    let succeed = |id: Id| {
        let store = store.clone();
        async move {
            store
                .finish_run(
                    id,
                    RunState::Succeeded,
                    &counts(1),
                    &json!(null),
                    None,
                    at(1000),
                )
                .await
                .unwrap();
        }
    };

    let early = running_run(&*store, RunKind::Crawl, at(10)).await;
    succeed(early).await;
    let latest = running_run(&*store, RunKind::Crawl, at(30)).await;
    succeed(latest).await;
    // Created later, started earlier: starting time decides, not the id.
    let started_earlier = running_run(&*store, RunKind::Crawl, at(20)).await;
    succeed(started_earlier).await;
    let failed = running_run(&*store, RunKind::Crawl, at(50)).await;
    store
        .finish_run(
            failed,
            RunState::Failed,
            &counts(1),
            &json!(null),
            Some("boom"),
            at(60),
        )
        .await
        .unwrap();
    let _still_running = running_run(&*store, RunKind::Crawl, at(70)).await;
    // Ended without ever starting: it has no starting time to compare, so it never wins.
    let (never_started, _) = queued_run(&*store, RunKind::Crawl, at(80)).await;
    succeed(never_started).await;
    let dedup = running_run(&*store, RunKind::Dedup, at(5)).await;
    succeed(dedup).await;

    let last = store.last_succeeded_run(RunKind::Crawl).await.unwrap();
    assert_eq!(last.map(|run| run.id), Some(latest));
    let last = store.last_succeeded_run(RunKind::Dedup).await.unwrap();
    assert_eq!(last.map(|run| run.id), Some(dedup));

    // Same starting time: the later run wins.
    let tie = running_run(&*store, RunKind::Crawl, at(30)).await;
    succeed(tie).await;
    let last = store.last_succeeded_run(RunKind::Crawl).await.unwrap();
    assert_eq!(last.map(|run| run.id), Some(tie));
}

async fn starting_a_run_moves_only_a_queued_one_to_running(store: Arc<dyn Store>) {
    let (id, _) = queued_run(&*store, RunKind::Crawl, at(0)).await;
    let started = store.start_run(id, at(5)).await.unwrap();
    assert_eq!(
        (started.state, started.started_at, started.cancel_requested),
        (RunState::Running, Some(at(5)), false)
    );
    assert_eq!(store.get_run(id).await.unwrap(), started);

    // The job was retried: the run goes on, and keeps when it began.
    let again = store.start_run(id, at(50)).await.unwrap();
    assert_eq!(again, started);

    store
        .finish_run(
            id,
            RunState::Succeeded,
            &counts(3),
            &json!({ "fetched": 3 }),
            None,
            at(60),
        )
        .await
        .unwrap();
    let finished = store.get_run(id).await.unwrap();
    assert_eq!(store.start_run(id, at(70)).await.unwrap(), finished);
    assert_eq!(finished.state, RunState::Succeeded);

    let (cancelled, _) = queued_run(&*store, RunKind::Crawl, at(0)).await;
    store.request_run_cancel(cancelled, at(1)).await.unwrap();
    let run = store.start_run(cancelled, at(2)).await.unwrap();
    assert_eq!(
        (run.state, run.started_at, run.finished_at),
        (RunState::Cancelled, None, Some(at(1))),
        "a cancelled run is not started"
    );
}

async fn progress_is_saved_while_running_and_answers_whether_to_stop(store: Arc<dyn Store>) {
    let id = running_run(&*store, RunKind::Dedup, at(0)).await;
    let stats = json!({ "pages": { "matched": 10 }, "works": [1, 2] });
    assert!(
        !store
            .update_run_progress(id, &counts(10), &stats)
            .await
            .unwrap(),
        "nobody asked to stop"
    );
    let run = store.get_run(id).await.unwrap();
    assert_eq!((run.counts, &run.stats), (counts(10), &stats));
    assert_eq!(run.state, RunState::Running);

    assert_eq!(
        store.request_run_cancel(id, at(5)).await.unwrap(),
        RunState::Running
    );
    assert!(
        store
            .update_run_progress(id, &counts(12), &json!(null))
            .await
            .unwrap(),
        "cancellation was requested"
    );
    let run = store.get_run(id).await.unwrap();
    assert_eq!(
        (run.counts, run.stats, run.state),
        (counts(12), json!(null), RunState::Running),
        "the progress up to the request is kept"
    );

    store
        .finish_run(
            id,
            RunState::Cancelled,
            &counts(12),
            &json!({ "final": true }),
            None,
            at(9),
        )
        .await
        .unwrap();
    let ended = store.get_run(id).await.unwrap();
    assert!(
        store
            .update_run_progress(id, &counts(99), &json!({ "late": true }))
            .await
            .unwrap(),
        "an ended run tells its worker to stop"
    );
    assert_eq!(
        store.get_run(id).await.unwrap(),
        ended,
        "and is not changed"
    );

    let (queued, _) = queued_run(&*store, RunKind::Dedup, at(0)).await;
    let before = store.get_run(queued).await.unwrap();
    assert!(
        store
            .update_run_progress(queued, &counts(5), &json!(null))
            .await
            .unwrap()
    );
    assert_eq!(store.get_run(queued).await.unwrap(), before);

    let too_many = RunCounts {
        pages_checked: u64::MAX,
        ..RunCounts::default()
    };
    let running = running_run(&*store, RunKind::Dedup, at(0)).await;
    invalid(
        store
            .update_run_progress(running, &too_many, &json!(null))
            .await,
    );
    assert_eq!(
        store.get_run(running).await.unwrap().counts,
        RunCounts::default()
    );
}

async fn ending_a_run_needs_an_end_state_and_the_last_ending_wins(store: Arc<dyn Store>) {
    let (id, _) = queued_run(&*store, RunKind::Crawl, at(0)).await;
    store.start_run(id, at(1)).await.unwrap();
    let before = store.get_run(id).await.unwrap();
    for state in [RunState::Queued, RunState::Running] {
        let why = invalid(
            store
                .finish_run(id, state, &counts(1), &json!(null), None, at(2))
                .await,
        );
        assert!(why.contains(state.as_str()), "{why}");
    }
    assert_eq!(store.get_run(id).await.unwrap(), before, "nothing changed");

    let stats = json!({ "fetched": 40, "robots_denied": 2 });
    store
        .finish_run(id, RunState::Succeeded, &counts(40), &stats, None, at(10))
        .await
        .unwrap();
    let run = store.get_run(id).await.unwrap();
    assert_eq!(run.state, RunState::Succeeded);
    assert_eq!(run.counts, counts(40));
    assert_eq!(run.stats, stats);
    assert_eq!(run.error, None);
    assert_eq!(
        (run.started_at, run.finished_at),
        (Some(at(1)), Some(at(10)))
    );

    // A second delivery of the job ends it again, and has the last word.
    store
        .finish_run(
            id,
            RunState::Failed,
            &counts(7),
            &json!(null),
            Some("fetch failed: connection reset"),
            at(20),
        )
        .await
        .unwrap();
    let run = store.get_run(id).await.unwrap();
    assert_eq!(
        (
            run.state,
            run.counts,
            run.stats,
            run.error.as_deref(),
            run.finished_at
        ),
        (
            RunState::Failed,
            counts(7),
            json!(null),
            Some("fetch failed: connection reset"),
            Some(at(20))
        )
    );
    assert_eq!(run.started_at, Some(at(1)));
}

async fn cancelling_ends_a_queued_run_and_asks_a_running_one_to_stop(store: Arc<dyn Store>) {
    let (queued, job) = queued_run(&*store, RunKind::Crawl, at(0)).await;
    assert_eq!(
        store.request_run_cancel(queued, at(3)).await.unwrap(),
        RunState::Cancelled
    );
    let run = store.get_run(queued).await.unwrap();
    assert_eq!(
        (run.state, run.started_at, run.finished_at),
        (RunState::Cancelled, None, Some(at(3)))
    );
    assert_eq!(
        store.get_job(job).await.unwrap().state,
        JobState::Queued,
        "its job stays, and finds the run cancelled when claimed"
    );

    let running = running_run(&*store, RunKind::Dedup, at(0)).await;
    for _ in 0..2 {
        assert_eq!(
            store.request_run_cancel(running, at(4)).await.unwrap(),
            RunState::Running
        );
        let run = store.get_run(running).await.unwrap();
        assert_eq!(
            (run.state, run.cancel_requested, run.finished_at),
            (RunState::Running, true, None)
        );
    }

    let why = invalid(store.request_run_cancel(queued, at(5)).await);
    assert!(why.contains("cancelled"), "{why}");
    let done = running_run(&*store, RunKind::Dedup, at(0)).await;
    store
        .finish_run(
            done,
            RunState::Succeeded,
            &counts(1),
            &json!(null),
            None,
            at(6),
        )
        .await
        .unwrap();
    let before = store.get_run(done).await.unwrap();
    let why = invalid(store.request_run_cancel(done, at(7)).await);
    assert!(why.contains("succeeded"), "{why}");
    assert_eq!(store.get_run(done).await.unwrap(), before);
}
