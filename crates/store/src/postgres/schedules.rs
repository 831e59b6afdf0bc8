//! Schedules and runs on PostgreSQL: cron schedules, firing their ticks, and the life of a run.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use sqlx::types::Json;

use super::jobs::insert_job;
use super::{ATTEMPTS, PostgresStore, exists, now, stored};
use crate::rows::{RunRow, ScheduleRow, run_select, schedule_select};
use crate::rules::{self, Referenced, validate_schedule};
use crate::shared;
use crate::{
    FiredRun, Id, NewJob, NewRun, NewSchedule, Result, Run, RunCounts, RunFilter, RunKind,
    RunState, ScheduleFire, StoreError,
};
use sqlx::Postgres;

/// Inserts an enabled, never fired schedule unless its name is taken (`None` then).
async fn insert_schedule(
    conn: &mut PgConnection,
    name: &str,
    schedule: &NewSchedule,
) -> Result<Option<Id>> {
    Ok(sqlx::query_scalar(
        "INSERT INTO schedules (name, kind, cron, timezone, seeds, config, enabled, owner, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7, $8, $8) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
    )
    .bind(name)
    .bind(schedule.kind.as_str())
    .bind(schedule.cron.trim())
    .bind(schedule.timezone.trim())
    .bind(Json(&schedule.seeds))
    .bind(&schedule.config)
    .bind(&schedule.owner)
    .bind(now())
    .fetch_optional(conn)
    .await?)
}

async fn fetch_run(conn: &mut PgConnection, id: Id) -> Result<Run> {
    sqlx::query_as::<_, RunRow<Postgres>>(concat!(run_select!(), " WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?
        .into_model()
}

pub(super) async fn create_schedule(store: &PostgresStore, schedule: &NewSchedule) -> Result<Id> {
    let name = validate_schedule(schedule)?;
    let mut conn = store.pool.acquire().await?;
    insert_schedule(&mut conn, name, schedule)
        .await?
        .ok_or_else(|| StoreError::Invalid(format!("schedule {name:?} already exists")))
}

pub(super) async fn ensure_schedule(store: &PostgresStore, schedule: &NewSchedule) -> Result<Id> {
    let name = validate_schedule(schedule)?;
    for _ in 0..ATTEMPTS {
        let mut tx = store.begin().await?;
        let existing = sqlx::query_as::<_, ScheduleRow<Postgres>>(concat!(
            schedule_select!(),
            " WHERE name = $1 FOR NO KEY UPDATE"
        ))
        .bind(name)
        .fetch_optional(&mut *tx)
        .await?;
        let id = match existing {
            None => match insert_schedule(&mut tx, name, schedule).await? {
                Some(id) => id,
                None => {
                    // A concurrent caller created it first: start over, comparing with it.
                    tx.rollback().await?;
                    continue;
                }
            },
            Some(row) => {
                let stored = row.into_model()?;
                if stored.kind != schedule.kind {
                    return Err(rules::schedule_kind_mismatch(
                        name,
                        stored.kind,
                        schedule.kind,
                    ));
                }
                if rules::schedule_differs(&stored, schedule) {
                    sqlx::query(
                        "UPDATE schedules SET cron = $2, timezone = $3, seeds = $4, \
                         config = $5, owner = $6, updated_at = $7 WHERE id = $1",
                    )
                    .bind(stored.id)
                    .bind(schedule.cron.trim())
                    .bind(schedule.timezone.trim())
                    .bind(Json(&schedule.seeds))
                    .bind(&schedule.config)
                    .bind(&schedule.owner)
                    .bind(now())
                    .execute(&mut *tx)
                    .await?;
                }
                stored.id
            }
        };
        tx.commit().await?;
        return Ok(id);
    }
    Err(StoreError::Invalid(format!(
        "schedule {name:?} kept being created and deleted concurrently; try again"
    )))
}

pub(super) async fn fire_schedule(
    store: &PostgresStore,
    fire: &ScheduleFire,
) -> Result<Option<FiredRun>> {
    rules::validate_fire(fire)?;
    let mut tx = store.begin().await?;
    // The compare-and-set. Concurrent firers queue on the schedule's row lock; once the
    // winner commits, each re-evaluates the condition against the row the winner wrote,
    // finds `last_fired_at` moved, and updates nothing.
    let moved = sqlx::query(
        "UPDATE schedules SET last_fired_at = $2 \
         WHERE id = $1 AND enabled AND last_fired_at IS NOT DISTINCT FROM $3",
    )
    .bind(fire.schedule_id)
    .bind(stored(fire.scheduled_for))
    .bind(fire.expected_last_fired_at.map(stored))
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() == 0 {
        exists(&mut tx, Referenced::Schedule, fire.schedule_id).await?;
        tx.rollback().await?;
        return Ok(None);
    }
    let job_id = insert_job(&mut tx, &fire.job).await?;
    let run_id = shared::insert_run(&mut *tx, &fire.run, Some(job_id)).await?;
    tx.commit().await?;
    Ok(Some(FiredRun { run_id, job_id }))
}

pub(super) async fn create_run(
    store: &PostgresStore,
    run: &NewRun,
    job: Option<&NewJob>,
) -> Result<(Id, Option<Id>)> {
    if let Some(job) = job {
        rules::validate_run_job(job)?;
    }
    let mut tx = store.begin().await?;
    if let Some(schedule_id) = run.schedule_id {
        // Locked (key share, as the foreign key would) so it cannot vanish before the insert.
        let found: Option<i64> =
            sqlx::query_scalar("SELECT id FROM schedules WHERE id = $1 FOR KEY SHARE")
                .bind(schedule_id)
                .fetch_optional(&mut *tx)
                .await?;
        if found.is_none() {
            return Err(StoreError::NotFound(format!("schedule {schedule_id}")));
        }
    }
    let job_id = match job {
        Some(job) => Some(insert_job(&mut tx, job).await?),
        None => None,
    };
    let run_id = shared::insert_run(&mut *tx, run, job_id).await?;
    tx.commit().await?;
    Ok((run_id, job_id))
}

pub(super) async fn get_run(store: &PostgresStore, id: Id) -> Result<Run> {
    let mut conn = store.pool.acquire().await?;
    fetch_run(&mut conn, id).await
}

pub(super) async fn list_runs(store: &PostgresStore, filter: &RunFilter) -> Result<Vec<Run>> {
    sqlx::query_as::<_, RunRow<Postgres>>(concat!(
        run_select!(),
        " WHERE ($1::text IS NULL OR r.kind = $1) \
           AND ($2::bigint IS NULL OR r.schedule_id = $2) \
           AND ($3::text IS NULL OR r.state = $3) ORDER BY r.id DESC LIMIT $4"
    ))
    .bind(filter.kind.map(RunKind::as_str))
    .bind(filter.schedule_id)
    .bind(filter.state.map(RunState::as_str))
    .bind(filter.limit.map(i64::from))
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(RunRow::into_model)
    .collect()
}

pub(super) async fn start_run(store: &PostgresStore, id: Id, at: DateTime<Utc>) -> Result<Run> {
    let mut tx = store.begin().await?;
    sqlx::query(
        "UPDATE runs SET state = 'running', started_at = $2 \
         WHERE id = $1 AND state = 'queued' AND NOT cancel_requested",
    )
    .bind(id)
    .bind(stored(at))
    .execute(&mut *tx)
    .await?;
    let run = fetch_run(&mut tx, id).await?;
    tx.commit().await?;
    Ok(run)
}

pub(super) async fn update_run_progress(
    store: &PostgresStore,
    id: Id,
    counts: &RunCounts,
    stats: &serde_json::Value,
) -> Result<bool> {
    let [
        pages_checked,
        new_matches,
        matches_removed,
        errors,
        reopened,
        aliases_checked,
        aliases_kept,
        aliases_removed,
    ] = rules::run_counts_to_db(counts)?;
    let cancel: Option<bool> = sqlx::query_scalar(
        "UPDATE runs SET pages_checked = $2, new_matches = $3, matches_removed = $4, \
         errors = $5, stats = $6, matches_reopened = $7, aliases_checked = $8, \
         aliases_kept = $9, aliases_removed = $10 WHERE id = $1 AND state = 'running' \
         RETURNING cancel_requested",
    )
    .bind(id)
    .bind(pages_checked)
    .bind(new_matches)
    .bind(matches_removed)
    .bind(errors)
    .bind(stats)
    .bind(reopened)
    .bind(aliases_checked)
    .bind(aliases_kept)
    .bind(aliases_removed)
    .fetch_optional(&store.pool)
    .await?;
    match cancel {
        Some(cancel) => Ok(cancel),
        None => {
            // Not running (any more): the worker must stop.
            let mut conn = store.pool.acquire().await?;
            exists(&mut conn, Referenced::Run, id).await?;
            Ok(true)
        }
    }
}

pub(super) async fn finish_run(
    store: &PostgresStore,
    id: Id,
    state: RunState,
    counts: &RunCounts,
    stats: &serde_json::Value,
    error: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()> {
    rules::validate_run_end(id, state)?;
    let [
        pages_checked,
        new_matches,
        matches_removed,
        errors,
        reopened,
        aliases_checked,
        aliases_kept,
        aliases_removed,
    ] = rules::run_counts_to_db(counts)?;
    let done = sqlx::query(
        "UPDATE runs SET state = $2, pages_checked = $3, new_matches = $4, \
         matches_removed = $5, errors = $6, stats = $7, error = $8, finished_at = $9, \
         matches_reopened = $10, aliases_checked = $11, aliases_kept = $12, \
         aliases_removed = $13 WHERE id = $1",
    )
    .bind(id)
    .bind(state.as_str())
    .bind(pages_checked)
    .bind(new_matches)
    .bind(matches_removed)
    .bind(errors)
    .bind(stats)
    .bind(error)
    .bind(stored(at))
    .bind(reopened)
    .bind(aliases_checked)
    .bind(aliases_kept)
    .bind(aliases_removed)
    .execute(&store.pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound(format!("run {id}")));
    }
    Ok(())
}

pub(super) async fn request_run_cancel(
    store: &PostgresStore,
    id: Id,
    at: DateTime<Utc>,
) -> Result<RunState> {
    // A queued run ends here; a running one is asked to stop by its worker. The conditions
    // are re-checked against the latest row if another writer changed it meanwhile.
    let state: Option<String> = sqlx::query_scalar(
        "UPDATE runs SET \
           state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, \
           finished_at = CASE WHEN state = 'queued' THEN $2 ELSE finished_at END, \
           cancel_requested = (state = 'running') OR cancel_requested \
         WHERE id = $1 AND state IN ('queued', 'running') RETURNING state",
    )
    .bind(id)
    .bind(stored(at))
    .fetch_optional(&store.pool)
    .await?;
    if let Some(state) = state {
        return rules::run_state(&state);
    }
    let ended: Option<String> = sqlx::query_scalar("SELECT state FROM runs WHERE id = $1")
        .bind(id)
        .fetch_optional(&store.pool)
        .await?;
    Err(rules::not_cancellable(id, ended))
}
