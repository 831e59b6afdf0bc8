//! The fingerprint library statements both backends share: rights holders, works, segments and
//! fingerprint versions.

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{
    RightsHolderRow, SegmentRow, WorkWithContentRow, fingerprint_version, work_summary_columns,
};
use crate::{Id, IndexedSegment, NewWork, Result, RightsHolder, StoreError, Work, rules};

pub(crate) async fn list_rights_holders<'e, DB, E>(executor: E) -> Result<Vec<RightsHolder>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    RightsHolderRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, RightsHolderRow<DB>>(
        "SELECT id, name, created_at FROM rights_holders ORDER BY name, id",
    )
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(RightsHolderRow::into_model)
    .collect()
}

/// Deletes a rights holder that owns no work and no user account; otherwise refuses, saying
/// what it still owns (works are never removed as a side effect of removing their owner).
pub(crate) async fn delete_rights_holder<'e, DB, E>(executor: E, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (String, i64, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let deleted = sqlx::query(
        "DELETE FROM rights_holders WHERE id = $1 \
         AND NOT EXISTS (SELECT 1 FROM works WHERE rights_holder_id = $1) \
         AND NOT EXISTS (SELECT 1 FROM users WHERE rights_holder_id = $1)",
    )
    .bind(id)
    .execute(executor)
    .await?;
    if DB::rows_affected(&deleted) > 0 {
        return Ok(());
    }
    let owned: Option<(String, i64, i64)> = sqlx::query_as(
        "SELECT name, \
                (SELECT COUNT(*) FROM works WHERE rights_holder_id = $1), \
                (SELECT COUNT(*) FROM users WHERE rights_holder_id = $1) \
         FROM rights_holders WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(executor)
    .await?;
    match owned {
        None => Err(StoreError::NotFound(format!("rights holder {id}"))),
        Some((name, works, users)) => Err(StoreError::Invalid(format!(
            "rights holder {name:?} still owns {works} work(s) and {users} user account(s): \
             remove them first"
        ))),
    }
}

pub(crate) async fn get_work<'e, DB, E>(executor: E, id: Id) -> Result<Work>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    WorkWithContentRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let row = sqlx::query_as::<_, WorkWithContentRow<DB>>(concat!(
        "SELECT ",
        work_summary_columns!(),
        ", w.content FROM works w WHERE w.id = $1"
    ))
    .bind(id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("work {id}")))?;
    Ok(Work {
        summary: row.summary.into_model()?,
        content: row.content,
    })
}

pub(crate) async fn all_segments<'e, DB, E>(executor: E) -> Result<Vec<IndexedSegment>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SegmentRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, SegmentRow>(
        "SELECT work_id, ordinal, start_offset, end_offset, simhash FROM work_segments \
         ORDER BY work_id, ordinal",
    )
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(SegmentRow::into_model)
    .collect()
}

pub(crate) async fn fingerprint_versions<'e, DB, E>(executor: E) -> Result<Vec<(Id, String, u32)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String, i64): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    let rows: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT work_id, algorithm, version FROM work_fingerprints \
         ORDER BY work_id, algorithm",
    )
    .fetch_all(executor)
    .await?;
    rows.into_iter().map(fingerprint_version).collect()
}

/// Replaces a stored work's text, title and fingerprint version and drops its segments and
/// fingerprints (the caller inserts the new ones), in the caller's transaction.
pub(crate) async fn rewrite_work<DB>(
    conn: &mut DB::Connection,
    id: Id,
    work: &NewWork,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "UPDATE works SET title = $2, content = $3, content_len = $4, \
         content_hash = $5, fingerprint_version = $6, updated_at = $7 WHERE id = $1",
    )
    .bind(id)
    .bind(work.title.as_str())
    .bind(work.content.as_str())
    .bind(rules::content_len(work)?)
    .bind(work.content_hash.as_str())
    .bind(i64::from(work.fingerprint_version))
    .bind(DB::now())
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM work_segments WHERE work_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM work_fingerprints WHERE work_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
