//! The job queue statements both backends share: reading a job and the lease-guarded updates
//! of a claimed one.

use chrono::{DateTime, Utc};
use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{JobRow, job_columns};
use crate::rules::{self};
use crate::{Id, Job, JobLease, Result, StoreError};

pub(crate) async fn get_job<'e, DB, E>(executor: E, job_id: Id) -> Result<Job>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    JobRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, JobRow<DB>>(concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE id = $1"
    ))
    .bind(job_id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("job {job_id}")))?
    .into_model()
}

/// Why a lease-guarded update of a claimed job touched no row (see
/// `rules::lease_not_current`).
pub(crate) async fn lease_not_current<'e, DB, E>(executor: E, lease: JobLease) -> StoreError
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (String, i64): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found = sqlx::query_as("SELECT state, attempts FROM jobs WHERE id = $1")
        .bind(lease.job_id)
        .fetch_optional(executor)
        .await;
    match found {
        Ok(found) => rules::lease_not_current(lease, found),
        Err(error) => error.into(),
    }
}

/// The lease-guarded updates of a claimed job: each changes the job only while `lease` is its
/// current claim (same attempt, still running), and answers whether it did. The caller then
/// explains a `false` with [`lease_not_current`].
pub(crate) async fn complete_job<'e, DB, E>(executor: E, lease: JobLease) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = $3 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: back to queued at `retry_at`, or dead once attempts are used up.
pub(crate) async fn fail_job<'e, DB, E>(
    executor: E,
    lease: JobLease,
    error: &str,
    retry_at: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET \
           state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
           run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE $3 END, \
           lease_until = NULL, last_error = $4, updated_at = $5 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(retry_at))
    .bind(error)
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: the lease now ends at `lease_until`.
pub(crate) async fn renew_job_lease<'e, DB, E>(
    executor: E,
    lease: JobLease,
    lease_until: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET lease_until = $3, updated_at = $4 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(lease_until))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// See [`complete_job`]: queued again at `run_at`, the attempt given back.
pub(crate) async fn release_job<'e, DB, E>(
    executor: E,
    lease: JobLease,
    run_at: DateTime<Utc>,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "UPDATE jobs SET state = 'queued', attempts = attempts - 1, run_at = $3, \
           lease_until = NULL, updated_at = $4 \
         WHERE id = $1 AND attempts = $2 AND state = 'running'",
    )
    .bind(lease.job_id)
    .bind(i64::from(lease.attempt))
    .bind(DB::time(run_at))
    .bind(DB::now())
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}
