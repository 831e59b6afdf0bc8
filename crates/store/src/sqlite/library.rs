//! The fingerprint library on SQLite: rights holders, works, their window segments and
//! document fingerprints.

use sqlx::SqliteConnection;

use super::{SqliteStore, exists, micros, now_micros};
use crate::rows::{WorkRow, algorithm_version, work_summary_columns};
use crate::rules::{self, Referenced, to_u32, validate_work};
use crate::shared;
use crate::{AlgorithmFingerprint, Id, NewWork, Result, StoreError, WorkSummary, WriteOutcome};
use sqlx::Sqlite;

async fn insert_fingerprints(
    conn: &mut SqliteConnection,
    work_id: Id,
    work: &NewWork,
) -> Result<()> {
    for fingerprint in &work.fingerprints {
        sqlx::query(
            "INSERT INTO work_fingerprints (work_id, algorithm, version, fingerprint) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(work_id)
        .bind(&fingerprint.algorithm)
        .bind(i64::from(fingerprint.version))
        .bind(fingerprint.fingerprint.to_string())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `(algorithm, version)` of a stored work's fingerprints, ordered by algorithm.
async fn algorithm_versions(
    conn: &mut SqliteConnection,
    work_id: Id,
) -> Result<Vec<(String, u32)>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT algorithm, version FROM work_fingerprints WHERE work_id = $1 ORDER BY algorithm",
    )
    .bind(work_id)
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(algorithm_version).collect()
}

pub(super) async fn ensure_rights_holder(store: &SqliteStore, name: &str) -> Result<Id> {
    let name = rules::rights_holder_name(name)?;
    // Insert-or-ignore then read: correct under concurrency without a transaction.
    sqlx::query(
        "INSERT INTO rights_holders (name, created_at) VALUES ($1, $2) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(now_micros())
    .execute(&store.pool)
    .await?;
    Ok(
        sqlx::query_scalar("SELECT id FROM rights_holders WHERE name = $1")
            .bind(name)
            .fetch_one(&store.pool)
            .await?,
    )
}

pub(super) async fn upsert_work(store: &SqliteStore, work: &NewWork) -> Result<(Id, WriteOutcome)> {
    validate_work(work)?;
    let mut tx = store.write().await?;
    let done = upsert_in(&mut tx, work).await?;
    tx.commit().await?;
    Ok(done)
}

pub(super) async fn upsert_works(
    store: &SqliteStore,
    works: &[NewWork],
) -> Result<Vec<(Id, WriteOutcome)>> {
    for work in works {
        validate_work(work)?;
    }
    let mut tx = store.write().await?;
    let mut done = Vec::with_capacity(works.len());
    for work in works {
        done.push(upsert_in(&mut tx, work).await?);
    }
    tx.commit().await?;
    Ok(done)
}

/// One work's upsert in the caller's transaction (validated already).
async fn upsert_in(tx: &mut SqliteConnection, work: &NewWork) -> Result<(Id, WriteOutcome)> {
    let version = i64::from(work.fingerprint_version);
    let existing: Option<(i64, String, String, i64)> = sqlx::query_as(
        "SELECT id, title, content_hash, fingerprint_version FROM works \
         WHERE rights_holder_id = $1 AND external_id = $2",
    )
    .bind(work.rights_holder_id)
    .bind(&work.external_id)
    .fetch_optional(&mut *tx)
    .await?;
    let now = now_micros();
    let content_len = rules::content_len(work)?;

    let stored_algorithms = match &existing {
        Some((id, ..)) => algorithm_versions(&mut *tx, *id).await?,
        None => Vec::new(),
    };
    let (id, outcome) = match existing {
        Some((id, title, hash, stored_version))
            if rules::work_unchanged(work, (&title, &hash, stored_version), &stored_algorithms) =>
        {
            let catalog = shared::stored_catalog::<Sqlite>(&mut *tx, id).await?;
            let published_at = work
                .published_at
                .and_then(|at| chrono::DateTime::from_timestamp_micros(micros(at)));
            if rules::catalog_unchanged(work, &catalog, published_at) {
                return Ok((id, WriteOutcome::Unchanged));
            }
            // Only the catalog entry changed: the text and its fingerprints stand.
            shared::write_catalog::<Sqlite>(&mut *tx, work.rights_holder_id, id, work).await?;
            return Ok((id, WriteOutcome::Updated));
        }
        Some((id, ..)) => {
            shared::rewrite_work::<Sqlite>(&mut *tx, id, work).await?;
            // Every page matched against the old version must be matched again.
            sqlx::query(
                "UPDATE pages SET matched_hash = NULL \
                 WHERE matched_hash IS NOT NULL \
                   AND id IN (SELECT page_id FROM matches WHERE work_id = $1)",
            )
            .bind(id)
            .execute(&mut *tx)
            .await?;
            (id, WriteOutcome::Updated)
        }
        None => {
            exists(&mut *tx, Referenced::RightsHolder, work.rights_holder_id).await?;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO works (rights_holder_id, external_id, title, content, \
                 content_len, content_hash, fingerprint_version, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id",
            )
            .bind(work.rights_holder_id)
            .bind(&work.external_id)
            .bind(&work.title)
            .bind(&work.content)
            .bind(content_len)
            .bind(&work.content_hash)
            .bind(version)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            (id, WriteOutcome::Created)
        }
    };
    shared::insert_windows::<Sqlite>(&mut *tx, id, work).await?;
    insert_fingerprints(&mut *tx, id, work).await?;
    shared::write_catalog::<Sqlite>(&mut *tx, work.rights_holder_id, id, work).await?;
    Ok((id, outcome))
}

pub(super) async fn list_works(
    store: &SqliteStore,
    rights_holder_id: Option<Id>,
) -> Result<Vec<WorkSummary>> {
    sqlx::query_as::<_, WorkRow<Sqlite>>(concat!(
        "SELECT ",
        work_summary_columns!(),
        " FROM works w WHERE ($1 IS NULL OR w.rights_holder_id = $1)",
        " ORDER BY w.external_id, w.rights_holder_id"
    ))
    .bind(rights_holder_id)
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(WorkRow::into_model)
    .collect()
}

pub(super) async fn work_fingerprints(
    store: &SqliteStore,
    work_id: Id,
) -> Result<Vec<AlgorithmFingerprint>> {
    let mut conn = store.pool.acquire().await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = $1")
        .bind(work_id)
        .fetch_optional(&mut *conn)
        .await?;
    if exists.is_none() {
        return Err(StoreError::NotFound(format!("work {work_id}")));
    }
    let rows: Vec<(String, i64, String)> = sqlx::query_as(
        "SELECT algorithm, version, fingerprint FROM work_fingerprints \
         WHERE work_id = $1 ORDER BY algorithm",
    )
    .bind(work_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|(algorithm, version, fingerprint)| {
            Ok(AlgorithmFingerprint {
                version: to_u32(version, "fingerprint version")?,
                fingerprint: serde_json::from_str(&fingerprint).map_err(|error| {
                    StoreError::Invalid(format!(
                        "stored {algorithm} fingerprint of work {work_id} is not JSON: {error}"
                    ))
                })?,
                algorithm,
            })
        })
        .collect()
}
