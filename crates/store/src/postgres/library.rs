//! The fingerprint library on PostgreSQL: rights holders, works, their window segments and
//! document fingerprints.

use sqlx::PgConnection;

use super::{ATTEMPTS, PostgresStore, exists, now, stored, u32_to_i64};
use crate::rows::{WorkRow, algorithm_version, work_summary_columns};
use crate::rules::{self, Referenced, to_u32, validate_work};
use crate::shared;
use crate::{AlgorithmFingerprint, Id, NewWork, Result, StoreError, WorkSummary, WriteOutcome};
use sqlx::Postgres;

/// Inserts all document-level fingerprints of a work in one statement.
async fn insert_fingerprints(conn: &mut PgConnection, work_id: Id, work: &NewWork) -> Result<()> {
    if work.fingerprints.is_empty() {
        return Ok(());
    }
    let fingerprints = &work.fingerprints;
    sqlx::query(
        "INSERT INTO work_fingerprints (work_id, algorithm, version, fingerprint) \
         SELECT $1, * FROM UNNEST($2::text[], $3::bigint[], $4::jsonb[])",
    )
    .bind(work_id)
    .bind(
        fingerprints
            .iter()
            .map(|f| f.algorithm.as_str())
            .collect::<Vec<&str>>(),
    )
    .bind(u32_to_i64(fingerprints.iter().map(|f| f.version)))
    .bind(
        fingerprints
            .iter()
            .map(|f| f.fingerprint.clone())
            .collect::<Vec<serde_json::Value>>(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// `(algorithm, version)` of a stored work's fingerprints, ordered by algorithm.
async fn algorithm_versions(conn: &mut PgConnection, work_id: Id) -> Result<Vec<(String, u32)>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT algorithm, version FROM work_fingerprints WHERE work_id = $1 ORDER BY algorithm",
    )
    .bind(work_id)
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(algorithm_version).collect()
}

pub(super) async fn ensure_rights_holder(store: &PostgresStore, name: &str) -> Result<Id> {
    let name = rules::rights_holder_name(name)?;
    let find =
        || sqlx::query_scalar::<_, i64>("SELECT id FROM rights_holders WHERE name = $1").bind(name);
    // Read first: the usual case writes nothing and leaves no gap in the id sequence.
    if let Some(id) = find().fetch_optional(&store.pool).await? {
        return Ok(id);
    }
    // Insert-or-ignore then read: correct under concurrency without a transaction (the
    // insert waits for a concurrent insert of the same name to commit).
    sqlx::query(
        "INSERT INTO rights_holders (name, created_at) VALUES ($1, $2) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(now())
    .execute(&store.pool)
    .await?;
    Ok(find().fetch_one(&store.pool).await?)
}

pub(super) async fn upsert_work(
    store: &PostgresStore,
    work: &NewWork,
) -> Result<(Id, WriteOutcome)> {
    let mut done = upsert_works(store, std::slice::from_ref(work)).await?;
    Ok(done.remove(0))
}

pub(super) async fn upsert_works(
    store: &PostgresStore,
    works: &[NewWork],
) -> Result<Vec<(Id, WriteOutcome)>> {
    for work in works {
        validate_work(work)?;
    }
    'attempt: for _ in 0..ATTEMPTS {
        let mut tx = store.pool.begin().await?;
        let mut done = Vec::with_capacity(works.len());
        for work in works {
            match upsert_in(&mut tx, work).await? {
                Some(outcome) => done.push(outcome),
                None => {
                    tx.rollback().await?;
                    continue 'attempt;
                }
            }
        }
        tx.commit().await?;
        return Ok(done);
    }
    Err(StoreError::Invalid(format!(
        "work {:?} kept being replaced concurrently; try again",
        works.first().map_or("", |w| w.external_id.as_str())
    )))
}

/// One work's upsert in the caller's transaction (validated already); `None` when a concurrent
/// writer created the same work first, and the transaction must start over.
async fn upsert_in(tx: &mut PgConnection, work: &NewWork) -> Result<Option<(Id, WriteOutcome)>> {
    let version = i64::from(work.fingerprint_version);
    let content_len = rules::content_len(work)?;
    let existing: Option<(i64, String, String, i64)> = sqlx::query_as(
        "SELECT id, title, content_hash, fingerprint_version FROM works \
         WHERE rights_holder_id = $1 AND external_id = $2 FOR NO KEY UPDATE",
    )
    .bind(work.rights_holder_id)
    .bind(&work.external_id)
    .fetch_optional(&mut *tx)
    .await?;
    let now = now();
    let stored_algorithms = match &existing {
        Some((id, ..)) => algorithm_versions(&mut *tx, *id).await?,
        None => Vec::new(),
    };
    let (id, outcome) = match existing {
        Some((id, title, hash, stored_version))
            if rules::work_unchanged(work, (&title, &hash, stored_version), &stored_algorithms) =>
        {
            let catalog = shared::stored_catalog::<Postgres>(&mut *tx, id).await?;
            let published_at = work.published_at.map(stored);
            if rules::catalog_unchanged(work, &catalog, published_at) {
                return Ok(Some((id, WriteOutcome::Unchanged)));
            }
            // Only the catalog entry changed: the text and its fingerprints stand.
            shared::write_catalog::<Postgres>(&mut *tx, work.rights_holder_id, id, work).await?;
            return Ok(Some((id, WriteOutcome::Updated)));
        }
        Some((id, ..)) => {
            shared::rewrite_work::<Postgres>(&mut *tx, id, work).await?;
            // Every page matched against the old version must be matched again. The
            // pages are locked in id order so two such updates cannot deadlock.
            sqlx::query(
                "WITH stale AS ( \
                   SELECT id FROM pages WHERE matched_hash IS NOT NULL \
                     AND id IN (SELECT page_id FROM matches WHERE work_id = $1) \
                   ORDER BY id FOR NO KEY UPDATE) \
                 UPDATE pages SET matched_hash = NULL \
                 WHERE id IN (SELECT id FROM stale)",
            )
            .bind(id)
            .execute(&mut *tx)
            .await?;
            (id, WriteOutcome::Updated)
        }
        None => {
            exists(&mut *tx, Referenced::RightsHolder, work.rights_holder_id).await?;
            let inserted: Option<i64> = sqlx::query_scalar(
                "INSERT INTO works (rights_holder_id, external_id, title, content, \
                 content_len, content_hash, fingerprint_version, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
                 ON CONFLICT (rights_holder_id, external_id) DO NOTHING RETURNING id",
            )
            .bind(work.rights_holder_id)
            .bind(&work.external_id)
            .bind(&work.title)
            .bind(&work.content)
            .bind(content_len)
            .bind(&work.content_hash)
            .bind(version)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(id) = inserted else {
                // A concurrent writer created it first: the caller starts over.
                return Ok(None);
            };
            (id, WriteOutcome::Created)
        }
    };
    shared::insert_windows::<Postgres>(&mut *tx, id, work).await?;
    insert_fingerprints(&mut *tx, id, work).await?;
    shared::write_catalog::<Postgres>(&mut *tx, work.rights_holder_id, id, work).await?;
    Ok(Some((id, outcome)))
}

pub(super) async fn list_works(
    store: &PostgresStore,
    rights_holder_id: Option<Id>,
) -> Result<Vec<WorkSummary>> {
    sqlx::query_as::<_, WorkRow<Postgres>>(concat!(
        "SELECT ",
        work_summary_columns!(),
        " FROM works w WHERE ($1::bigint IS NULL OR w.rights_holder_id = $1)",
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
    store: &PostgresStore,
    work_id: Id,
) -> Result<Vec<AlgorithmFingerprint>> {
    let mut tx = store.begin().await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = $1")
        .bind(work_id)
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Err(StoreError::NotFound(format!("work {work_id}")));
    }
    let rows: Vec<(String, i64, serde_json::Value)> = sqlx::query_as(
        "SELECT algorithm, version, fingerprint FROM work_fingerprints \
         WHERE work_id = $1 ORDER BY algorithm",
    )
    .bind(work_id)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    rows.into_iter()
        .map(|(algorithm, version, fingerprint)| {
            Ok(AlgorithmFingerprint {
                version: to_u32(version, "fingerprint version")?,
                fingerprint,
                algorithm,
            })
        })
        .collect()
}
