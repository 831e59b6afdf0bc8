//! The durable job queue on SQLite (claims, leases, retries) and leadership as a renewed lease
//! row.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;
use sqlx::sqlite::SqlitePool;

use super::{SqliteStore, micros, now_micros};
use crate::rows::{JobRow, job_columns};
use crate::rules::{self, lease_until, to_json, validate_job};
use crate::shared;
use crate::{Id, Job, JobCount, JobFilter, JobLease, JobState, Leadership, NewJob, Result};
use sqlx::Sqlite;

/// Leadership held through a row of `leader_leases`, renewed by [`Leadership::confirm`].
struct SqliteLeadership {
    pool: SqlitePool,
    name: String,
    holder: String,
    ttl_micros: i64,
}

#[async_trait]
impl Leadership for SqliteLeadership {
    async fn confirm(&mut self) -> Result<bool> {
        let now = now_micros();
        let renewed = sqlx::query(
            "UPDATE leader_leases SET lease_until = $3 \
             WHERE name = $1 AND holder = $2 AND lease_until > $4",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(now.saturating_add(self.ttl_micros))
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(renewed.rows_affected() == 1)
    }

    async fn resign(self: Box<Self>) -> Result<()> {
        sqlx::query("DELETE FROM leader_leases WHERE name = $1 AND holder = $2")
            .bind(&self.name)
            .bind(&self.holder)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// Inserts a queued job (the dedup check, when there is a key, is the caller's).
pub(super) async fn insert_job(conn: &mut SqliteConnection, job: &NewJob) -> Result<Id> {
    let payload = to_json(&job.payload, "job payload")?;
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, dedup_key, state, attempts, max_attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $6) \
         RETURNING id",
    )
    .bind(&job.kind)
    .bind(payload)
    .bind(&job.dedup_key)
    .bind(i64::from(job.max_attempts))
    .bind(micros(job.run_at))
    .bind(now_micros())
    .fetch_one(conn)
    .await?)
}

pub(super) async fn enqueue_job(store: &SqliteStore, job: &NewJob) -> Result<Id> {
    validate_job(job)?;
    let mut tx = store.write().await?;
    if let Some(key) = &job.dedup_key {
        let pending: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM jobs WHERE dedup_key = $1 AND state IN ('queued', 'running')",
        )
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(id) = pending {
            tx.rollback().await?;
            return Ok(id);
        }
    }
    let id = insert_job(&mut tx, job).await?;
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn claim_job(
    store: &SqliteStore,
    kinds: &[&str],
    now: DateTime<Utc>,
    lease: chrono::Duration,
) -> Result<Option<Job>> {
    if kinds.is_empty() {
        return Ok(None);
    }
    let lease_until = lease_until(now, lease)?;
    // Kinds travel as one JSON array so the statement text stays fixed (PostgreSQL:
    // `kind = ANY($1)`).
    let kinds = to_json(&kinds, "job kinds")?;
    let now = micros(now);
    let mut tx = store.write().await?;

    // A worker that died during the last allowed attempt must not earn the job another one.
    sqlx::query(
        "UPDATE jobs SET state = 'dead', lease_until = NULL, updated_at = $2, \
         last_error = 'lease expired during the last allowed attempt' \
         WHERE state = 'running' AND lease_until <= $2 AND attempts >= max_attempts \
           AND kind IN (SELECT value FROM json_each($1))",
    )
    .bind(&kinds)
    .bind(now)
    .execute(&mut *tx)
    .await?;

    // One statement picks and takes the job, so no other claimer can take it in between
    // (and the write lock of the transaction serializes claimers anyway).
    let row = sqlx::query_as::<_, JobRow<Sqlite>>(concat!(
        "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = $3, \
         updated_at = $2 \
         WHERE id = ( \
           SELECT id FROM jobs \
           WHERE kind IN (SELECT value FROM json_each($1)) \
             AND ((state = 'queued' AND run_at <= $2) \
               OR (state = 'running' AND lease_until <= $2)) \
           ORDER BY run_at, id LIMIT 1) \
         RETURNING ",
        job_columns!()
    ))
    .bind(&kinds)
    .bind(now)
    .bind(micros(lease_until))
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    row.map(JobRow::into_model).transpose()
}

pub(super) async fn complete_job(store: &SqliteStore, lease: JobLease) -> Result<()> {
    let mut tx = store.write().await?;
    if !shared::complete_job(&mut *tx, lease).await? {
        return Err(shared::lease_not_current(&mut *tx, lease).await);
    }
    tx.commit().await?;
    Ok(())
}

pub(super) async fn fail_job(
    store: &SqliteStore,
    lease: JobLease,
    error: &str,
    retry_at: DateTime<Utc>,
) -> Result<()> {
    let mut tx = store.write().await?;
    if !shared::fail_job(&mut *tx, lease, error, retry_at).await? {
        return Err(shared::lease_not_current(&mut *tx, lease).await);
    }
    tx.commit().await?;
    Ok(())
}

pub(super) async fn renew_job_lease(
    store: &SqliteStore,
    lease: JobLease,
    lease_until: DateTime<Utc>,
) -> Result<()> {
    let mut tx = store.write().await?;
    if !shared::renew_job_lease(&mut *tx, lease, lease_until).await? {
        return Err(shared::lease_not_current(&mut *tx, lease).await);
    }
    tx.commit().await?;
    Ok(())
}

pub(super) async fn release_job(
    store: &SqliteStore,
    lease: JobLease,
    run_at: DateTime<Utc>,
) -> Result<()> {
    let mut tx = store.write().await?;
    if !shared::release_job(&mut *tx, lease, run_at).await? {
        return Err(shared::lease_not_current(&mut *tx, lease).await);
    }
    tx.commit().await?;
    Ok(())
}

pub(super) async fn requeue_dead_job(
    store: &SqliteStore,
    job_id: Id,
    run_at: DateTime<Utc>,
) -> Result<()> {
    let mut tx = store.write().await?;
    let state: Option<String> = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(&mut *tx)
        .await?;
    if state.as_deref() != Some("dead") {
        return Err(rules::not_requeueable(job_id, state));
    }
    let requeued = sqlx::query(
        "UPDATE jobs SET state = 'queued', attempts = 0, run_at = $2, lease_until = NULL, \
           updated_at = $3 WHERE id = $1 AND state = 'dead'",
    )
    .bind(job_id)
    .bind(micros(run_at))
    .bind(now_micros())
    .execute(&mut *tx)
    .await;
    // A pending job with the same dedup key may have taken its place meanwhile.
    rules::refuse_duplicate(requeued, || rules::requeue_taken(job_id))?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn list_jobs(store: &SqliteStore, filter: &JobFilter) -> Result<Vec<Job>> {
    sqlx::query_as::<_, JobRow<Sqlite>>(concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE ($1 IS NULL OR kind = $1) AND ($2 IS NULL OR state = $2) \
         ORDER BY id DESC LIMIT $3"
    ))
    .bind(&filter.kind)
    .bind(filter.state.map(JobState::as_str))
    .bind(filter.limit.map_or(-1, i64::from))
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(JobRow::into_model)
    .collect()
}

pub(super) async fn job_counts(store: &SqliteStore) -> Result<Vec<JobCount>> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state ORDER BY kind, state",
    )
    .fetch_all(&store.pool)
    .await?;
    rows.into_iter()
        .map(|(kind, state, count)| rules::job_count(kind, &state, count))
        .collect()
}

pub(super) async fn try_lead(
    store: &SqliteStore,
    name: &str,
    ttl: chrono::Duration,
) -> Result<Option<Box<dyn Leadership>>> {
    let holder = rules::leader_holder_id();
    let ttl_micros = rules::positive_micros(ttl, "leadership ttl")?;
    let now = now_micros();
    let mut tx = store.write().await?;
    // Take the row if it is free, lapsed, or ours already.
    let taken = sqlx::query(
        "INSERT INTO leader_leases (name, holder, lease_until) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
           lease_until = excluded.lease_until \
         WHERE leader_leases.lease_until <= $4 OR leader_leases.holder = excluded.holder",
    )
    .bind(name)
    .bind(&holder)
    .bind(now.saturating_add(ttl_micros))
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    if taken.rows_affected() == 0 {
        return Ok(None);
    }
    Ok(Some(Box::new(SqliteLeadership {
        pool: store.pool.clone(),
        name: name.to_owned(),
        holder,
        ttl_micros,
    })))
}
