//! Schedules and runs on SQLite: cron schedules, firing their ticks, and the life of a run.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::jobs::insert_job;
use super::{SqliteStore, exists, micros, now_micros};
use crate::rows::{RunRow, ScheduleRow, run_select, schedule_select};
use crate::rules::{self, Referenced, to_json, validate_schedule};
use crate::shared;
use crate::{
    FiredRun, Id, NewJob, NewRun, NewSchedule, Result, Run, RunCounts, RunFilter, RunKind,
    RunState, ScheduleFire, StoreError,
};
use sqlx::Sqlite;

/// Inserts an enabled, never fired schedule; the raw error lets the caller name a duplicate.
async fn insert_schedule(
    conn: &mut SqliteConnection,
    name: &str,
    schedule: &NewSchedule,
) -> Result<std::result::Result<Id, sqlx::Error>> {
    let seeds = to_json(&schedule.seeds, "schedule seeds")?;
    let config = to_json(&schedule.config, "schedule config")?;
    Ok(sqlx::query_scalar(
        "INSERT INTO schedules (name, kind, cron, timezone, seeds, config, enabled, owner, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $8) RETURNING id",
    )
    .bind(name)
    .bind(schedule.kind.as_str())
    .bind(schedule.cron.trim())
    .bind(schedule.timezone.trim())
    .bind(seeds)
    .bind(config)
    .bind(&schedule.owner)
    .bind(now_micros())
    .fetch_one(conn)
    .await)
}

async fn fetch_run(conn: &mut SqliteConnection, id: Id) -> Result<Run> {
    sqlx::query_as::<_, RunRow<Sqlite>>(concat!(run_select!(), " WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?
        .into_model()
}

pub(super) async fn create_schedule(store: &SqliteStore, schedule: &NewSchedule) -> Result<Id> {
    let name = validate_schedule(schedule)?;
    let mut conn = store.pool.acquire().await?;
    rules::refuse_duplicate(insert_schedule(&mut conn, name, schedule).await?, || {
        StoreError::Invalid(format!("schedule {name:?} already exists"))
    })
}

pub(super) async fn ensure_schedule(store: &SqliteStore, schedule: &NewSchedule) -> Result<Id> {
    let name = validate_schedule(schedule)?;
    let mut tx = store.write().await?;
    let existing =
        sqlx::query_as::<_, ScheduleRow<Sqlite>>(concat!(schedule_select!(), " WHERE name = $1"))
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
    let id = match existing {
        None => insert_schedule(&mut tx, name, schedule).await??,
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
                    "UPDATE schedules SET cron = $2, timezone = $3, seeds = $4, config = $5, \
                     owner = $6, updated_at = $7 WHERE id = $1",
                )
                .bind(stored.id)
                .bind(schedule.cron.trim())
                .bind(schedule.timezone.trim())
                .bind(to_json(&schedule.seeds, "schedule seeds")?)
                .bind(to_json(&schedule.config, "schedule config")?)
                .bind(&schedule.owner)
                .bind(now_micros())
                .execute(&mut *tx)
                .await?;
            }
            stored.id
        }
    };
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn fire_schedule(
    store: &SqliteStore,
    fire: &ScheduleFire,
) -> Result<Option<FiredRun>> {
    rules::validate_fire(fire)?;
    let mut tx = store.write().await?;
    // The compare-and-set: the write lock makes it atomic with the inserts below.
    let moved = sqlx::query(
        "UPDATE schedules SET last_fired_at = $2 \
         WHERE id = $1 AND enabled = 1 AND last_fired_at IS $3",
    )
    .bind(fire.schedule_id)
    .bind(micros(fire.scheduled_for))
    .bind(fire.expected_last_fired_at.map(micros))
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
    store: &SqliteStore,
    run: &NewRun,
    job: Option<&NewJob>,
) -> Result<(Id, Option<Id>)> {
    if let Some(job) = job {
        rules::validate_run_job(job)?;
    }
    let mut tx = store.write().await?;
    if let Some(schedule_id) = run.schedule_id {
        exists(&mut tx, Referenced::Schedule, schedule_id).await?;
    }
    let job_id = match job {
        Some(job) => Some(insert_job(&mut tx, job).await?),
        None => None,
    };
    let run_id = shared::insert_run(&mut *tx, run, job_id).await?;
    tx.commit().await?;
    Ok((run_id, job_id))
}

pub(super) async fn get_run(store: &SqliteStore, id: Id) -> Result<Run> {
    let mut conn = store.pool.acquire().await?;
    fetch_run(&mut conn, id).await
}

pub(super) async fn list_runs(store: &SqliteStore, filter: &RunFilter) -> Result<Vec<Run>> {
    sqlx::query_as::<_, RunRow<Sqlite>>(concat!(
        run_select!(),
        " WHERE ($1 IS NULL OR r.kind = $1) AND ($2 IS NULL OR r.schedule_id = $2) \
           AND ($3 IS NULL OR r.state = $3) ORDER BY r.id DESC LIMIT $4"
    ))
    .bind(filter.kind.map(RunKind::as_str))
    .bind(filter.schedule_id)
    .bind(filter.state.map(RunState::as_str))
    .bind(filter.limit.map_or(-1, i64::from))
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(RunRow::into_model)
    .collect()
}

pub(super) async fn start_run(store: &SqliteStore, id: Id, at: DateTime<Utc>) -> Result<Run> {
    let mut tx = store.write().await?;
    sqlx::query(
        "UPDATE runs SET state = 'running', started_at = $2 \
         WHERE id = $1 AND state = 'queued' AND cancel_requested = 0",
    )
    .bind(id)
    .bind(micros(at))
    .execute(&mut *tx)
    .await?;
    let run = fetch_run(&mut tx, id).await?;
    tx.commit().await?;
    Ok(run)
}

pub(super) async fn update_run_progress(
    store: &SqliteStore,
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
    let stats = to_json(stats, "run stats")?;
    let mut tx = store.write().await?;
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
    .fetch_optional(&mut *tx)
    .await?;
    let cancel = match cancel {
        Some(cancel) => cancel,
        None => {
            // Not running (any more): the worker must stop.
            exists(&mut tx, Referenced::Run, id).await?;
            true
        }
    };
    tx.commit().await?;
    Ok(cancel)
}

pub(super) async fn finish_run(
    store: &SqliteStore,
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
    let stats = to_json(stats, "run stats")?;
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
    .bind(micros(at))
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
    store: &SqliteStore,
    id: Id,
    at: DateTime<Utc>,
) -> Result<RunState> {
    let mut tx = store.write().await?;
    // A queued run ends here; a running one is asked to stop by its worker.
    let state: Option<String> = sqlx::query_scalar(
        "UPDATE runs SET \
           state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END, \
           finished_at = CASE WHEN state = 'queued' THEN $2 ELSE finished_at END, \
           cancel_requested = CASE WHEN state = 'running' THEN 1 ELSE cancel_requested END \
         WHERE id = $1 AND state IN ('queued', 'running') RETURNING state",
    )
    .bind(id)
    .bind(micros(at))
    .fetch_optional(&mut *tx)
    .await?;
    let state = match state {
        Some(state) => rules::run_state(&state)?,
        None => {
            let ended: Option<String> = sqlx::query_scalar("SELECT state FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            return Err(rules::not_cancellable(id, ended));
        }
    };
    tx.commit().await?;
    Ok(state)
}
