//! The durable job queue: claiming, leases, retries, dead jobs and deduplication.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use copytrace_store::{JobCount, JobFilter, JobLease, JobState, NewJob, Store};
use serde_json::json;

use crate::helpers::{at, contract_tests, invalid, lease_lost, not_found};

contract_tests!(
    a_job_is_claimed_once_and_reclaimed_after_its_lease_expires,
    concurrent_claimers_never_get_the_same_job,
    a_job_goes_dead_after_max_attempts,
    a_failed_job_waits_until_its_retry_time,
    jobs_are_claimed_by_kind_when_due_and_oldest_first,
    enqueuing_with_a_pending_dedup_key_returns_the_pending_job,
    a_completed_job_is_done_and_is_not_claimed_again,
    a_job_whose_lease_expires_on_its_last_attempt_goes_dead,
    unknown_or_idle_jobs_cannot_be_completed_or_failed,
    a_job_needs_a_kind_and_at_least_one_attempt,
    concurrent_enqueues_with_one_dedup_key_make_one_job,
    a_worker_whose_job_was_taken_over_cannot_finish_it,
    a_renewed_lease_keeps_the_job_from_other_workers,
    a_released_job_is_queued_again_without_spending_an_attempt,
    a_dead_job_can_be_requeued_with_fresh_attempts,
    jobs_are_listed_newest_first_and_counted_by_kind_and_state,
    only_one_leader_at_a_time,
    any_interleaving_of_queue_operations_loses_no_job_and_completes_none_twice,
);

fn job(kind: &str, run_at: DateTime<Utc>, max_attempts: u32) -> NewJob {
    NewJob {
        kind: kind.to_owned(),
        payload: json!({ "kind": kind, "urls": ["https://pirate.example/"], "depth": 2 }),
        dedup_key: None,
        run_at,
        max_attempts,
    }
}

fn lease() -> Duration {
    Duration::seconds(30)
}

async fn a_job_is_claimed_once_and_reclaimed_after_its_lease_expires(store: Arc<dyn Store>) {
    let new = job("crawl", at(0), 3);
    let id = store.enqueue_job(&new).await.unwrap();
    let queued = store.get_job(id).await.unwrap();
    assert_eq!(
        (queued.state, queued.attempts, queued.lease_until),
        (JobState::Queued, 0, None)
    );

    let claimed = store
        .claim_job(&["crawl"], at(1), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, id);
    assert_eq!(claimed.kind, "crawl");
    assert_eq!(claimed.payload, new.payload);
    assert_eq!(claimed.state, JobState::Running);
    assert_eq!(claimed.attempts, 1);
    assert_eq!(claimed.max_attempts, 3);
    assert_eq!(claimed.lease_until, Some(at(1) + lease()));
    assert_eq!(store.get_job(id).await.unwrap(), claimed);

    assert_eq!(
        store.claim_job(&["crawl"], at(2), lease()).await.unwrap(),
        None
    );
    assert_eq!(
        store.claim_job(&["crawl"], at(30), lease()).await.unwrap(),
        None
    );

    let reclaimed = store
        .claim_job(&["crawl"], at(31), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        reclaimed.id, id,
        "the lease ended at 31 s: another worker takes over"
    );
    assert_eq!(reclaimed.attempts, 2);
    assert_eq!(reclaimed.lease_until, Some(at(31) + lease()));
}

async fn concurrent_claimers_never_get_the_same_job(store: Arc<dyn Store>) {
    let mut enqueued = HashSet::new();
    for _ in 0..24 {
        enqueued.insert(store.enqueue_job(&job("match", at(0), 1)).await.unwrap());
    }
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut claimed = Vec::new();
                while let Some(job) = store.claim_job(&["match"], at(1), lease()).await.unwrap() {
                    claimed.push(job.id);
                }
                claimed
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for worker in workers {
        claimed.extend(worker.await.unwrap());
    }
    let unique: HashSet<_> = claimed.iter().copied().collect();
    assert_eq!(
        claimed.len(),
        24,
        "every job claimed exactly once: {claimed:?}"
    );
    assert_eq!(unique, enqueued);
}

async fn a_job_goes_dead_after_max_attempts(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 2)).await.unwrap();

    let first = store
        .claim_job(&["crawl"], at(1), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .fail_job(first.lease(), "timeout", at(10))
        .await
        .unwrap();
    let retry = store.get_job(id).await.unwrap();
    assert_eq!(retry.state, JobState::Queued);
    assert_eq!(retry.run_at, at(10));
    assert_eq!(retry.lease_until, None);
    assert_eq!(retry.last_error.as_deref(), Some("timeout"));

    let second = store
        .claim_job(&["crawl"], at(10), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .fail_job(second.lease(), "connection refused", at(20))
        .await
        .unwrap();
    let dead = store.get_job(id).await.unwrap();
    assert_eq!(dead.state, JobState::Dead);
    assert_eq!(dead.attempts, 2);
    assert_eq!(dead.last_error.as_deref(), Some("connection refused"));
    assert_eq!(
        store
            .claim_job(&["crawl"], at(1000), lease())
            .await
            .unwrap(),
        None
    );
}

async fn a_failed_job_waits_until_its_retry_time(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 5)).await.unwrap();
    let claimed = store
        .claim_job(&["crawl"], at(0), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .fail_job(claimed.lease(), "503", at(60))
        .await
        .unwrap();

    assert_eq!(
        store.claim_job(&["crawl"], at(59), lease()).await.unwrap(),
        None
    );
    let again = store
        .claim_job(&["crawl"], at(60), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.id, again.attempts), (id, 2));
    assert_eq!(
        again.last_error.as_deref(),
        Some("503"),
        "the last error stays visible"
    );
}

async fn jobs_are_claimed_by_kind_when_due_and_oldest_first(store: Arc<dyn Store>) {
    let later = store.enqueue_job(&job("crawl", at(20), 1)).await.unwrap();
    let earlier = store.enqueue_job(&job("crawl", at(10), 1)).await.unwrap();
    let matching = store.enqueue_job(&job("match", at(0), 1)).await.unwrap();
    let future = store.enqueue_job(&job("crawl", at(1000), 1)).await.unwrap();

    assert_eq!(store.claim_job(&[], at(30), lease()).await.unwrap(), None);
    assert_eq!(
        store.claim_job(&["report"], at(30), lease()).await.unwrap(),
        None
    );
    assert_eq!(
        store.claim_job(&["crawl"], at(5), lease()).await.unwrap(),
        None,
        "not due"
    );

    let mut order = Vec::new();
    while let Some(job) = store.claim_job(&["crawl"], at(30), lease()).await.unwrap() {
        order.push(job.id);
    }
    assert_eq!(order, [earlier, later]);
    let both = store
        .claim_job(&["report", "match"], at(30), lease())
        .await
        .unwrap();
    assert_eq!(both.map(|job| job.id), Some(matching));
    assert_eq!(store.get_job(future).await.unwrap().state, JobState::Queued);
}

async fn enqueuing_with_a_pending_dedup_key_returns_the_pending_job(store: Arc<dyn Store>) {
    let keyed = |key: &str| NewJob {
        dedup_key: Some(key.to_owned()),
        ..job("crawl", at(0), 3)
    };
    let first = store
        .enqueue_job(&keyed("site:pirate.example"))
        .await
        .unwrap();
    assert_eq!(
        store
            .enqueue_job(&keyed("site:pirate.example"))
            .await
            .unwrap(),
        first
    );
    let other = store
        .enqueue_job(&keyed("site:mirror.example"))
        .await
        .unwrap();
    assert_ne!(other, first);

    let claimed = store
        .claim_job(&["crawl"], at(1), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.get_job(first).await.unwrap().state, JobState::Running);
    assert_eq!(
        store
            .enqueue_job(&keyed("site:pirate.example"))
            .await
            .unwrap(),
        first,
        "a running job is pending too"
    );

    store.complete_job(claimed.lease()).await.unwrap();
    let next = store
        .enqueue_job(&keyed("site:pirate.example"))
        .await
        .unwrap();
    assert_ne!(next, first, "a finished job does not block new work");

    let plain_one = store.enqueue_job(&job("crawl", at(0), 1)).await.unwrap();
    let plain_two = store.enqueue_job(&job("crawl", at(0), 1)).await.unwrap();
    assert_ne!(
        plain_one, plain_two,
        "without a key every enqueue is a new job"
    );
}

async fn a_completed_job_is_done_and_is_not_claimed_again(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 3)).await.unwrap();
    let claimed = store
        .claim_job(&["crawl"], at(1), lease())
        .await
        .unwrap()
        .unwrap();
    store.complete_job(claimed.lease()).await.unwrap();

    let done = store.get_job(id).await.unwrap();
    assert_eq!((done.state, done.lease_until), (JobState::Done, None));
    assert_eq!(
        store
            .claim_job(&["crawl"], at(1000), lease())
            .await
            .unwrap(),
        None
    );
    assert!(lease_lost(store.complete_job(claimed.lease()).await).contains("is done"));
}

async fn a_job_whose_lease_expires_on_its_last_attempt_goes_dead(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 1)).await.unwrap();
    store
        .claim_job(&["crawl"], at(0), lease())
        .await
        .unwrap()
        .unwrap();

    assert_eq!(
        store.claim_job(&["crawl"], at(31), lease()).await.unwrap(),
        None
    );
    let dead = store.get_job(id).await.unwrap();
    assert_eq!(dead.state, JobState::Dead);
    assert_eq!(dead.attempts, 1);
    assert!(dead.last_error.unwrap().contains("lease expired"));
}

async fn unknown_or_idle_jobs_cannot_be_completed_or_failed(store: Arc<dyn Store>) {
    let missing = JobLease {
        job_id: 404,
        attempt: 1,
    };
    assert_eq!(not_found(store.complete_job(missing).await), "job 404");
    assert_eq!(
        not_found(store.fail_job(missing, "x", at(0)).await),
        "job 404"
    );
    assert_eq!(
        not_found(store.renew_job_lease(missing, at(0)).await),
        "job 404"
    );
    assert_eq!(
        not_found(store.release_job(missing, at(0)).await),
        "job 404"
    );
    assert_eq!(not_found(store.get_job(404).await), "job 404");
    assert_eq!(
        not_found(store.requeue_dead_job(404, at(0)).await),
        "job 404"
    );

    let id = store.enqueue_job(&job("crawl", at(0), 3)).await.unwrap();
    let never_claimed = JobLease {
        job_id: id,
        attempt: 0,
    };
    assert!(lease_lost(store.fail_job(never_claimed, "x", at(5)).await).contains("queued"));
    assert!(
        invalid(store.requeue_dead_job(id, at(5)).await).contains("only dead jobs"),
        "a queued job is not requeued"
    );
    let unchanged = store.get_job(id).await.unwrap();
    assert_eq!(
        (unchanged.state, unchanged.last_error),
        (JobState::Queued, None)
    );
}

async fn a_job_needs_a_kind_and_at_least_one_attempt(store: Arc<dyn Store>) {
    invalid(store.enqueue_job(&job("", at(0), 1)).await);
    invalid(store.enqueue_job(&job("crawl", at(0), 0)).await);
    invalid(store.claim_job(&["crawl"], at(0), Duration::zero()).await);
    assert_eq!(
        store
            .claim_job(&["", "crawl"], at(100), lease())
            .await
            .unwrap(),
        None
    );
}

async fn concurrent_enqueues_with_one_dedup_key_make_one_job(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let keyed = NewJob {
                    dedup_key: Some("site:pirate.example".to_owned()),
                    ..job("crawl", at(0), 3)
                };
                store.enqueue_job(&keyed).await.unwrap()
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for task in tasks {
        ids.insert(task.await.unwrap());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = *ids.iter().next().unwrap();
    let claimed = store.claim_job(&["crawl"], at(1), lease()).await.unwrap();
    assert_eq!(claimed.map(|job| job.id), Some(id));
    assert_eq!(
        store.claim_job(&["crawl"], at(1), lease()).await.unwrap(),
        None,
        "no second job was created"
    );
}

async fn a_worker_whose_job_was_taken_over_cannot_finish_it(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("match", at(0), 3)).await.unwrap();
    let slow = store
        .claim_job(&["match"], at(0), lease())
        .await
        .unwrap()
        .unwrap();
    let taker = store
        .claim_job(&["match"], at(31), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((taker.id, taker.attempts), (id, 2));

    // The first worker comes back after its lease: nothing it does counts any more.
    for lost in [
        lease_lost(store.complete_job(slow.lease()).await),
        lease_lost(store.fail_job(slow.lease(), "late", at(40)).await),
        lease_lost(store.renew_job_lease(slow.lease(), at(90)).await),
        lease_lost(store.release_job(slow.lease(), at(40)).await),
    ] {
        assert!(lost.contains("taken over"), "{lost}");
    }
    let running = store.get_job(id).await.unwrap();
    assert_eq!(
        (running.state, running.attempts, running.lease_until),
        (JobState::Running, 2, Some(at(31) + lease()))
    );
    assert_eq!(running.last_error, None);

    store.complete_job(taker.lease()).await.unwrap();
    assert_eq!(store.get_job(id).await.unwrap().state, JobState::Done);
}

async fn a_renewed_lease_keeps_the_job_from_other_workers(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 3)).await.unwrap();
    let claimed = store
        .claim_job(&["crawl"], at(0), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .renew_job_lease(claimed.lease(), at(20) + lease())
        .await
        .unwrap();
    assert_eq!(store.get_job(id).await.unwrap().lease_until, Some(at(50)));
    assert_eq!(
        store.claim_job(&["crawl"], at(49), lease()).await.unwrap(),
        None,
        "the renewed lease runs to 50 s"
    );
    // A lease may be renewed after it ran out, as long as nobody took the job.
    store
        .renew_job_lease(claimed.lease(), at(60) + lease())
        .await
        .unwrap();
    assert_eq!(
        store.claim_job(&["crawl"], at(80), lease()).await.unwrap(),
        None
    );
    store.complete_job(claimed.lease()).await.unwrap();
    let done = store.get_job(id).await.unwrap();
    assert_eq!((done.state, done.attempts), (JobState::Done, 1));
}

async fn a_released_job_is_queued_again_without_spending_an_attempt(store: Arc<dyn Store>) {
    let id = store.enqueue_job(&job("crawl", at(0), 1)).await.unwrap();
    let claimed = store
        .claim_job(&["crawl"], at(0), lease())
        .await
        .unwrap()
        .unwrap();
    store.release_job(claimed.lease(), at(5)).await.unwrap();
    let released = store.get_job(id).await.unwrap();
    assert_eq!(
        (
            released.state,
            released.attempts,
            released.run_at,
            released.lease_until
        ),
        (JobState::Queued, 0, at(5), None)
    );
    assert_eq!(
        store.claim_job(&["crawl"], at(4), lease()).await.unwrap(),
        None
    );
    let again = store
        .claim_job(&["crawl"], at(5), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (again.id, again.attempts),
        (id, 1),
        "its only attempt is still available"
    );
}

async fn a_dead_job_can_be_requeued_with_fresh_attempts(store: Arc<dyn Store>) {
    let keyed = NewJob {
        dedup_key: Some("page:7".to_owned()),
        ..job("match", at(0), 1)
    };
    let id = store.enqueue_job(&keyed).await.unwrap();
    let claimed = store
        .claim_job(&["match"], at(0), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .fail_job(claimed.lease(), "index missing", at(10))
        .await
        .unwrap();
    assert_eq!(store.get_job(id).await.unwrap().state, JobState::Dead);

    store.requeue_dead_job(id, at(100)).await.unwrap();
    let requeued = store.get_job(id).await.unwrap();
    assert_eq!(
        (requeued.state, requeued.attempts, requeued.run_at),
        (JobState::Queued, 0, at(100))
    );
    assert_eq!(
        requeued.last_error.as_deref(),
        Some("index missing"),
        "the error that killed it stays visible"
    );
    assert_eq!(
        store.enqueue_job(&keyed).await.unwrap(),
        id,
        "the requeued job is pending again for its dedup key"
    );
    let again = store
        .claim_job(&["match"], at(100), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.id, again.attempts), (id, 1));
    store.complete_job(again.lease()).await.unwrap();

    // A dead job whose key is pending again under a newer job is not revived next to it.
    let second = store.enqueue_job(&keyed).await.unwrap();
    let claimed = store
        .claim_job(&["match"], at(200), lease())
        .await
        .unwrap()
        .unwrap();
    store
        .fail_job(claimed.lease(), "again", at(0))
        .await
        .unwrap();
    store.enqueue_job(&keyed).await.unwrap();
    assert!(
        invalid(store.requeue_dead_job(second, at(300)).await).contains("dedup key"),
        "two pending jobs with one key"
    );
}

async fn jobs_are_listed_newest_first_and_counted_by_kind_and_state(store: Arc<dyn Store>) {
    let crawl = store.enqueue_job(&job("crawl", at(0), 1)).await.unwrap();
    let keyed = NewJob {
        dedup_key: Some("page:1:abc".to_owned()),
        ..job("match", at(0), 2)
    };
    let first_match = store.enqueue_job(&keyed).await.unwrap();
    let second_match = store.enqueue_job(&job("match", at(0), 2)).await.unwrap();
    let claimed = store
        .claim_job(&["match"], at(1), lease())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, first_match);
    store.complete_job(claimed.lease()).await.unwrap();

    let all = store.list_jobs(&JobFilter::default()).await.unwrap();
    assert_eq!(
        all.iter().map(|j| j.id).collect::<Vec<_>>(),
        [second_match, first_match, crawl]
    );
    assert_eq!(all[1].dedup_key.as_deref(), Some("page:1:abc"));
    assert_eq!(all[1].state, JobState::Done);
    assert!(all[1].updated_at >= all[1].created_at);

    let matches = store
        .list_jobs(&JobFilter {
            kind: Some("match".into()),
            ..JobFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(matches.len(), 2);
    let queued = store
        .list_jobs(&JobFilter {
            state: Some(JobState::Queued),
            limit: Some(1),
            ..JobFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        queued.iter().map(|j| j.id).collect::<Vec<_>>(),
        [second_match]
    );

    let count = |kind: &str, state, count| JobCount {
        kind: kind.to_owned(),
        state,
        count,
    };
    assert_eq!(
        store.job_counts().await.unwrap(),
        [
            count("crawl", JobState::Queued, 1),
            count("match", JobState::Done, 1),
            count("match", JobState::Queued, 1),
        ]
    );
}

async fn only_one_leader_at_a_time(store: Arc<dyn Store>) {
    let ttl = Duration::seconds(60);
    let mut leader = store
        .try_lead("scheduler", ttl)
        .await
        .unwrap()
        .expect("nobody leads yet");
    assert!(
        store.try_lead("scheduler", ttl).await.unwrap().is_none(),
        "a second contender is refused while the first leads"
    );
    assert!(leader.confirm().await.unwrap());
    let other = store
        .try_lead("daily-dedup", ttl)
        .await
        .unwrap()
        .expect("names are independent");
    other.resign().await.unwrap();

    leader.resign().await.unwrap();
    let mut next = store
        .try_lead("scheduler", ttl)
        .await
        .unwrap()
        .expect("resigning frees leadership at once");
    assert!(next.confirm().await.unwrap());
    next.resign().await.unwrap();
    invalid(
        store
            .try_lead("scheduler", Duration::zero())
            .await
            .map(|l| l.is_some()),
    );
}

/// A worker of the interleaving test: the claim it holds, as it believes.
#[derive(Debug, Clone, Copy)]
struct Held {
    lease: JobLease,
    /// The claim number of the job this worker's claim was (see `claims` below).
    claim: usize,
}

/// Random interleavings (seeded, so a failure replays) of claims, renewals, completions,
/// failures, releases, worker crashes and clock jumps by three workers over six jobs. Checked at
/// every step: a job is never claimed while another worker's lease on it runs, a completed job is
/// never claimed again, a worker whose job was claimed by another since cannot complete, fail,
/// renew or release it, and a job is completed at most once. At the end, with the clock far
/// ahead, draining the queue leaves every job done (completed exactly once) or dead, none lost.
async fn any_interleaving_of_queue_operations_loses_no_job_and_completes_none_twice(
    store: Arc<dyn Store>,
) {
    let (mut takeovers, mut refused) = (0, 0);
    for seed in [0x9e37_79b9_u64, 0x2545_f491, 0xdead_beef, 0x1234_5678] {
        let (t, r) = interleave(store.as_ref(), seed).await;
        takeovers += t;
        refused += r;
    }
    // The interleavings did reach the cases that matter.
    assert!(
        takeovers > 0 && refused > 0,
        "{takeovers} takeovers, {refused} refusals"
    );
}

/// One seeded interleaving; returns how many claims took a job over from a worker whose lease
/// ran out, and how many operations of such a worker were refused.
async fn interleave(store: &dyn Store, seed: u64) -> (usize, usize) {
    let (mut takeovers, mut refused) = (0, 0);
    let kind = format!("interleave-{seed:x}");
    let mut next = crate::helpers::xorshift(seed);
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(store.enqueue_job(&job(&kind, at(0), 3)).await.unwrap());
    }
    let lease = Duration::seconds(30);
    let mut now = 0i64;
    let mut workers: [Option<Held>; 3] = [None; 3];
    // Per job: the number of its latest claim, and when that claim's lease ends.
    let mut claims: std::collections::HashMap<i64, (usize, DateTime<Utc>)> = Default::default();
    let mut claim_count = 0usize;
    let mut completed: std::collections::HashMap<i64, usize> = Default::default();
    for _ in 0..150 {
        let w = next(3) as usize;
        match next(7) {
            0 => now += next(40) as i64,
            1 | 2 => {
                if workers[w].is_some() {
                    continue;
                }
                let Some(claimed) = store.claim_job(&[&kind], at(now), lease).await.unwrap() else {
                    continue;
                };
                assert!(
                    !completed.contains_key(&claimed.id),
                    "seed {seed:x}: completed job {} claimed again",
                    claimed.id
                );
                if let Some((_, until)) = claims.get(&claimed.id) {
                    takeovers += usize::from(*until > at(-1));
                    assert!(
                        *until <= at(now),
                        "seed {seed:x}: job {} claimed at {now} while a lease ran to {until}",
                        claimed.id
                    );
                }
                claim_count += 1;
                let until = at(now) + lease;
                claims.insert(claimed.id, (claim_count, until));
                workers[w] = Some(Held {
                    lease: JobLease {
                        job_id: claimed.id,
                        attempt: claimed.attempts,
                    },
                    claim: claim_count,
                });
            }
            op => {
                let Some(held) = workers[w] else { continue };
                if next(10) == 0 {
                    // The worker crashes holding the job: the lease must run out first.
                    workers[w] = None;
                    continue;
                }
                let current = claims.get(&held.lease.job_id).map(|c| c.0) == Some(held.claim);
                let result = match op {
                    3 => {
                        let result = store.complete_job(held.lease).await;
                        if result.is_ok() {
                            *completed.entry(held.lease.job_id).or_default() += 1;
                        }
                        result
                    }
                    4 => {
                        store
                            .fail_job(held.lease, "failed", at(now + next(20) as i64))
                            .await
                    }
                    5 => {
                        store
                            .release_job(held.lease, at(now + next(20) as i64))
                            .await
                    }
                    _ => {
                        let until = at(now) + lease;
                        let result = store.renew_job_lease(held.lease, until).await;
                        if result.is_ok() {
                            claims.insert(held.lease.job_id, (held.claim, until));
                            continue;
                        }
                        result
                    }
                };
                if !current {
                    refused += 1;
                    assert!(
                        matches!(result, Err(copytrace_store::StoreError::LeaseLost(_))),
                        "seed {seed:x}: a claim taken over since was still honoured: {result:?}"
                    );
                }
                if result.is_ok() {
                    // Failed or released: queued again, no lease runs any more.
                    claims.insert(held.lease.job_id, (held.claim, at(-1)));
                }
                workers[w] = None;
            }
        }
    }
    // Drain: far in the future, every job is claimable or finished.
    now += 10_000;
    while let Some(claimed) = store.claim_job(&[&kind], at(now), lease).await.unwrap() {
        assert!(!completed.contains_key(&claimed.id), "seed {seed:x}");
        store
            .complete_job(JobLease {
                job_id: claimed.id,
                attempt: claimed.attempts,
            })
            .await
            .unwrap();
        *completed.entry(claimed.id).or_default() += 1;
    }
    for id in ids {
        let job = store.get_job(id).await.unwrap();
        match job.state {
            JobState::Done => assert_eq!(completed.get(&id), Some(&1), "seed {seed:x}: job {id}"),
            JobState::Dead => {
                assert!(!completed.contains_key(&id), "seed {seed:x}: job {id}");
                assert_eq!(job.attempts, job.max_attempts, "seed {seed:x}: job {id}");
            }
            other => panic!("seed {seed:x}: job {id} left {other:?} after the drain"),
        }
    }
    (takeovers, refused)
}
