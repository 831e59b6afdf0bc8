//! The durable job queue on PostgreSQL (claims with `FOR UPDATE SKIP LOCKED`, leases, retries)
//! and leadership as a session-level advisory lock.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Connection, PgConnection};

use super::{ATTEMPTS, PostgresStore, now, stored};
use crate::rows::{JobRow, job_columns};
use crate::rules::{self, lease_until, validate_job};
use crate::shared;
use crate::{
    Id, Job, JobCount, JobFilter, JobLease, JobState, Leadership, NewJob, Result, StoreError,
};
use sqlx::Postgres;

/// Inserts a queued job without a dedup key (keyed jobs need [`Store::enqueue_job`]'s race
/// handling).
pub(super) async fn insert_job(conn: &mut PgConnection, job: &NewJob) -> Result<Id> {
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, 'queued', 0, $3, $4, $5, $5) \
         RETURNING id",
    )
    .bind(&job.kind)
    .bind(&job.payload)
    .bind(i64::from(job.max_attempts))
    .bind(stored(job.run_at))
    .bind(now())
    .fetch_one(conn)
    .await?)
}

/// The advisory lock key of a leadership name: FNV-1a of the name, stable across processes,
/// versions and platforms (PostgreSQL's own `hashtext` is not promised to be).
fn advisory_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"copytrace-leader:".iter().chain(name.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Leadership held as a session-level advisory lock on a connection of its own (taken out of
/// the pool, so no other query ever runs on it and it is never recycled while the lock is held).
struct PostgresLeadership {
    connection: Option<PgConnection>,
    key: i64,
}

#[async_trait]
impl Leadership for PostgresLeadership {
    async fn confirm(&mut self) -> Result<bool> {
        let Some(connection) = self.connection.as_mut() else {
            return Ok(false);
        };
        // The lock lives as long as the session: if the session still answers, and still holds
        // the lock, we lead. A restarted server or a broken connection ends both.
        let held: std::result::Result<bool, sqlx::Error> = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
               AND pid = pg_backend_pid() AND granted \
               AND ((classid::bigint << 32) | objid::bigint) = $1)",
        )
        .bind(self.key)
        .fetch_one(&mut *connection)
        .await;
        match held {
            Ok(true) => Ok(true),
            Ok(false) | Err(_) => {
                self.connection = None;
                Ok(false)
            }
        }
    }

    async fn resign(mut self: Box<Self>) -> Result<()> {
        if let Some(mut connection) = self.connection.take() {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(self.key)
                .execute(&mut connection)
                .await?;
            connection.close().await?;
        }
        Ok(())
    }
}

pub(super) async fn enqueue_job(store: &PostgresStore, job: &NewJob) -> Result<Id> {
    validate_job(job)?;
    let Some(key) = &job.dedup_key else {
        let mut conn = store.pool.acquire().await?;
        return insert_job(&mut conn, job).await;
    };
    let pending = || {
        sqlx::query_scalar::<_, i64>(
            "SELECT id FROM jobs WHERE md5(dedup_key) = md5($1) AND dedup_key = $1 \
             AND state IN ('queued', 'running')",
        )
        .bind(key)
    };
    for _ in 0..ATTEMPTS {
        if let Some(id) = pending().fetch_optional(&store.pool).await? {
            return Ok(id);
        }
        // The partial unique index decides between concurrent enqueuers of one key.
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO jobs (kind, payload, dedup_key, state, attempts, max_attempts, \
             run_at, created_at, updated_at) \
             VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $6) \
             ON CONFLICT (md5(dedup_key)) \
               WHERE dedup_key IS NOT NULL AND state IN ('queued', 'running') \
             DO NOTHING RETURNING id",
        )
        .bind(&job.kind)
        .bind(&job.payload)
        .bind(key)
        .bind(i64::from(job.max_attempts))
        .bind(stored(job.run_at))
        .bind(now())
        .fetch_optional(&store.pool)
        .await?;
        if let Some(id) = inserted {
            return Ok(id);
        }
        // Another enqueuer won; the next round returns its job (or, if that job finished
        // in between, enqueues again).
    }
    Err(StoreError::Invalid(format!(
        "{} job with dedup key {key:?} cannot be enqueued: another pending job's key has \
         the same MD5 digest",
        job.kind
    )))
}

pub(super) async fn claim_job(
    store: &PostgresStore,
    kinds: &[&str],
    now: DateTime<Utc>,
    lease: chrono::Duration,
) -> Result<Option<Job>> {
    if kinds.is_empty() {
        return Ok(None);
    }
    let lease_until = stored(lease_until(now, lease)?);
    let now = stored(now);
    let mut tx = store.begin().await?;

    // A worker that died during the last allowed attempt must not earn the job another one.
    sqlx::query(
        "UPDATE jobs SET state = 'dead', lease_until = NULL, updated_at = $2, \
         last_error = 'lease expired during the last allowed attempt' \
         WHERE state = 'running' AND lease_until <= $2 AND attempts >= max_attempts \
           AND kind = ANY($1)",
    )
    .bind(kinds)
    .bind(now)
    .execute(&mut *tx)
    .await?;

    // The oldest due job nobody else is taking right now: rows locked by another claimer
    // are skipped, not waited for, and re-checked after locking, so no job is taken twice.
    let row = sqlx::query_as::<_, JobRow<Postgres>>(concat!(
        "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = $3, \
         updated_at = $2 \
         WHERE id = ( \
           SELECT id FROM jobs \
           WHERE kind = ANY($1) \
             AND ((state = 'queued' AND run_at <= $2) \
               OR (state = 'running' AND lease_until <= $2 \
                   AND attempts < max_attempts)) \
           ORDER BY run_at, id LIMIT 1 \
           FOR UPDATE SKIP LOCKED) \
         RETURNING ",
        job_columns!()
    ))
    .bind(kinds)
    .bind(now)
    .bind(lease_until)
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    row.map(JobRow::into_model).transpose()
}

pub(super) async fn complete_job(store: &PostgresStore, lease: JobLease) -> Result<()> {
    if !shared::complete_job(&store.pool, lease).await? {
        return Err(shared::lease_not_current(&store.pool, lease).await);
    }
    Ok(())
}

pub(super) async fn fail_job(
    store: &PostgresStore,
    lease: JobLease,
    error: &str,
    retry_at: DateTime<Utc>,
) -> Result<()> {
    if !shared::fail_job(&store.pool, lease, error, retry_at).await? {
        return Err(shared::lease_not_current(&store.pool, lease).await);
    }
    Ok(())
}

pub(super) async fn renew_job_lease(
    store: &PostgresStore,
    lease: JobLease,
    lease_until: DateTime<Utc>,
) -> Result<()> {
    if !shared::renew_job_lease(&store.pool, lease, lease_until).await? {
        return Err(shared::lease_not_current(&store.pool, lease).await);
    }
    Ok(())
}

pub(super) async fn release_job(
    store: &PostgresStore,
    lease: JobLease,
    run_at: DateTime<Utc>,
) -> Result<()> {
    if !shared::release_job(&store.pool, lease, run_at).await? {
        return Err(shared::lease_not_current(&store.pool, lease).await);
    }
    Ok(())
}

pub(super) async fn requeue_dead_job(
    store: &PostgresStore,
    job_id: Id,
    run_at: DateTime<Utc>,
) -> Result<()> {
    let requeued = sqlx::query(
        "UPDATE jobs SET state = 'queued', attempts = 0, run_at = $2, lease_until = NULL, \
           updated_at = $3 WHERE id = $1 AND state = 'dead'",
    )
    .bind(job_id)
    .bind(stored(run_at))
    .bind(now())
    .execute(&store.pool)
    .await;
    // A pending job with the same dedup key may have taken its place meanwhile.
    let done = rules::refuse_duplicate(requeued, || rules::requeue_taken(job_id))?;
    if done.rows_affected() == 1 {
        return Ok(());
    }
    let state: Option<String> = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(&store.pool)
        .await?;
    Err(rules::not_requeueable(job_id, state))
}

pub(super) async fn list_jobs(store: &PostgresStore, filter: &JobFilter) -> Result<Vec<Job>> {
    sqlx::query_as::<_, JobRow<Postgres>>(concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE ($1::text IS NULL OR kind = $1) \
           AND ($2::text IS NULL OR state = $2) ORDER BY id DESC LIMIT $3"
    ))
    .bind(&filter.kind)
    .bind(filter.state.map(JobState::as_str))
    .bind(filter.limit.map(i64::from))
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(JobRow::into_model)
    .collect()
}

pub(super) async fn job_counts(store: &PostgresStore) -> Result<Vec<JobCount>> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state \
         ORDER BY kind COLLATE \"C\", state COLLATE \"C\"",
    )
    .fetch_all(&store.pool)
    .await?;
    rows.into_iter()
        .map(|(kind, state, count)| rules::job_count(kind, &state, count))
        .collect()
}

pub(super) async fn try_lead(
    store: &PostgresStore,
    name: &str,
    ttl: chrono::Duration,
) -> Result<Option<Box<dyn Leadership>>> {
    // The lock ends with its session, so PostgreSQL needs no ttl; it is still validated so
    // that both backends refuse the same arguments.
    rules::positive_micros(ttl, "leadership ttl")?;
    let key = advisory_key(name);
    let mut connection = store.pool.acquire().await?.detach();
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(key)
        .fetch_one(&mut connection)
        .await?;
    if !locked {
        let _ = connection.close().await;
        return Ok(None);
    }
    Ok(Some(Box::new(PostgresLeadership {
        connection: Some(connection),
        key,
    })))
}
