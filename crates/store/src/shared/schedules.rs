//! The schedule and run statements both backends share.

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{RunRow, ScheduleRow, run_select, schedule_select};
use crate::{Id, NewRun, Result, Run, RunKind, RunState, Schedule, StoreError};

pub(crate) async fn list_schedules<'e, DB, E>(executor: E) -> Result<Vec<Schedule>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ScheduleRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, ScheduleRow<DB>>(concat!(schedule_select!(), " ORDER BY name"))
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(ScheduleRow::into_model)
        .collect()
}

pub(crate) async fn get_schedule_by_name<'e, DB, E>(executor: E, name: &str) -> Result<Schedule>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ScheduleRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let name = name.trim();
    sqlx::query_as::<_, ScheduleRow<DB>>(concat!(schedule_select!(), " WHERE name = $1"))
        .bind(name)
        .fetch_optional(executor)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("schedule {name:?}")))?
        .into_model()
}

pub(crate) async fn set_schedule_enabled<'e, DB, E>(
    executor: E,
    id: Id,
    enabled: bool,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    // Only a change of the flag is a change of the schedule.
    let done = sqlx::query(
        "UPDATE schedules SET enabled = $2, \
         updated_at = CASE WHEN enabled = $2 THEN updated_at ELSE $3 END WHERE id = $1",
    )
    .bind(id)
    .bind(enabled)
    .bind(DB::now())
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("schedule {id}")));
    }
    Ok(())
}

pub(crate) async fn delete_schedule<'e, DB, E>(executor: E, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query("DELETE FROM schedules WHERE id = $1")
        .bind(id)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("schedule {id}")));
    }
    Ok(())
}

/// Inserts a run: queued when a job carries it, otherwise running since its creation.
pub(crate) async fn insert_run<'e, DB, E>(
    executor: E,
    run: &NewRun,
    job_id: Option<Id>,
) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
    Option<DB::Time>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let created_at = DB::time(run.created_at);
    let (state, started_at) = match job_id {
        Some(_) => (RunState::Queued, None),
        None => (RunState::Running, Some(created_at)),
    };
    Ok(sqlx::query_scalar(
        "INSERT INTO runs (kind, schedule_id, job_id, trigger, state, scheduled_for, created_at, \
         started_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(run.kind.as_str())
    .bind(run.schedule_id)
    .bind(job_id)
    .bind(run.trigger.as_str())
    .bind(state.as_str())
    .bind(run.scheduled_for.map(DB::time))
    .bind(created_at)
    .bind(started_at)
    .fetch_one(executor)
    .await?)
}

pub(crate) async fn run_for_job<'e, DB, E>(executor: E, job_id: Id) -> Result<Option<Run>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RunRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, RunRow<DB>>(concat!(
        run_select!(),
        " WHERE r.job_id = $1 ORDER BY r.id LIMIT 1"
    ))
    .bind(job_id)
    .fetch_optional(executor)
    .await?
    .map(RunRow::into_model)
    .transpose()
}

pub(crate) async fn last_succeeded_run<'e, DB, E>(executor: E, kind: RunKind) -> Result<Option<Run>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RunRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, RunRow<DB>>(concat!(
        run_select!(),
        " WHERE r.kind = $1 AND r.state = 'succeeded' \
         ORDER BY r.started_at DESC NULLS LAST, r.id DESC LIMIT 1"
    ))
    .bind(kind.as_str())
    .fetch_optional(executor)
    .await?
    .map(RunRow::into_model)
    .transpose()
}
