//! The evidence statements both backends share: page captures (the raw responses page texts
//! were extracted from) and the record of evidence packages written.

use sqlx::types::Json;
use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::capture::{self, GZIP};
use crate::rows::{Columns, StoredJson, StoredTime};
use crate::rules::to_u32;
use crate::{EvidencePackage, Id, NewCapture, NewEvidencePackage, PageCapture, Result, StoreError};

/// Stores the capture of text `content_hash` of page `page_id`, fetched at `fetched_at` with
/// status `http_status`, unless that text has one already (the first fetch of a text is its
/// capture). Runs in the transaction of the page write, after it.
pub(crate) async fn save_capture<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    content_hash: &str,
    http_status: i64,
    fetched_at: DB::Time,
    capture: &NewCapture,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + Type<DB>,
    Json<Vec<(String, String)>>: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    // `page_id`, not a literal: PostgreSQL types `SELECT 1` as int4, which is no i64.
    let known: Option<i64> = sqlx::query_scalar(
        "SELECT page_id FROM page_captures WHERE page_id = $1 AND content_hash = $2",
    )
    .bind(page_id)
    .bind(content_hash)
    .fetch_optional(&mut *conn)
    .await?;
    if known.is_some() {
        return Ok(());
    }
    let packed = capture::pack(&capture.body)?;
    sqlx::query(
        "INSERT INTO page_captures (page_id, content_hash, requested_url, final_url, \
         http_status, headers, encoding, fetched_at, body_sha256, body_size, compression, body) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(page_id)
    .bind(content_hash)
    .bind(capture.requested_url.as_str())
    .bind(capture.final_url.as_str())
    .bind(http_status)
    .bind(Json(capture.headers.clone()))
    .bind(capture.encoding.as_str())
    .bind(fetched_at)
    .bind(packed.sha256.as_str())
    .bind(packed.size)
    .bind(GZIP)
    .bind(packed.data)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Drops the captures of page `page_id` that are neither of its text `current_hash` nor of a
/// text some match's evidence points into: the retention rule of [`crate::Store::page_capture`].
pub(crate) async fn prune_captures<'e, DB, E>(
    executor: E,
    page_id: Id,
    current_hash: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "DELETE FROM page_captures WHERE page_id = $1 AND content_hash <> $2 \
         AND content_hash NOT IN (SELECT evidence_hash FROM matches WHERE page_id = $1)",
    )
    .bind(page_id)
    .bind(current_hash)
    .execute(executor)
    .await?;
    Ok(())
}

#[derive(FromRow)]
pub(crate) struct CaptureRow<C: Columns> {
    page_id: i64,
    content_hash: String,
    requested_url: String,
    final_url: String,
    http_status: i64,
    headers: C::Json,
    encoding: String,
    fetched_at: C::Time,
    body_sha256: String,
    body_size: i64,
    compression: String,
    body: Vec<u8>,
}

impl<C: Columns> CaptureRow<C> {
    fn into_model(self) -> Result<PageCapture> {
        let headers: serde_json::Value = self.headers.into_value("capture headers")?;
        let headers: Vec<(String, String)> = serde_json::from_value(headers).map_err(|e| {
            StoreError::Invalid(format!(
                "stored capture headers are not name/value pairs: {e}"
            ))
        })?;
        Ok(PageCapture {
            page_id: self.page_id,
            content_hash: self.content_hash,
            requested_url: self.requested_url,
            final_url: self.final_url,
            http_status: u16::try_from(to_u32(self.http_status, "capture status")?)
                .map_err(|_| StoreError::Invalid("stored capture status is not HTTP".into()))?,
            headers,
            encoding: self.encoding,
            fetched_at: self.fetched_at.into_time()?,
            body_sha256: self.body_sha256,
            body: capture::unpack(&self.compression, &self.body, self.body_size)?,
        })
    }
}

/// [`crate::Store::page_capture`].
pub(crate) async fn page_capture<'e, DB, E>(
    executor: E,
    page_id: Id,
    content_hash: &str,
) -> Result<Option<PageCapture>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    CaptureRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, CaptureRow<DB>>(
        "SELECT page_id, content_hash, requested_url, final_url, http_status, headers, \
         encoding, fetched_at, body_sha256, body_size, compression, body \
         FROM page_captures WHERE page_id = $1 AND content_hash = $2",
    )
    .bind(page_id)
    .bind(content_hash)
    .fetch_optional(executor)
    .await?
    .map(CaptureRow::into_model)
    .transpose()
}

/// [`crate::Store::match_subject`].
pub(crate) async fn match_subject<'e, DB, E>(executor: E, match_id: Id) -> Result<(Id, Id)>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, i64): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as("SELECT page_id, work_id FROM matches WHERE id = $1")
        .bind(match_id)
        .fetch_optional(executor)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("match {match_id}")))
}

/// [`crate::Store::record_evidence_package`].
pub(crate) async fn record_evidence_package<'e, DB, E>(
    executor: E,
    package: &NewEvidencePackage,
) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let digest = package.manifest_sha256.as_str();
    if digest.len() != 64
        || !digest
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(StoreError::Invalid(format!(
            "{digest:?} is not a SHA-256 digest in lower-case hex"
        )));
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO evidence_packages (match_id, manifest_sha256, created_at) \
         VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(package.match_id)
    .bind(digest)
    .bind(DB::time(package.created_at))
    .fetch_one(executor)
    .await?)
}

#[derive(FromRow)]
pub(crate) struct PackageRow<C: Columns> {
    id: i64,
    match_id: i64,
    manifest_sha256: String,
    created_at: C::Time,
}

/// [`crate::Store::evidence_packages`].
pub(crate) async fn evidence_packages<'e, DB, E>(
    executor: E,
    match_id: Id,
) -> Result<Vec<EvidencePackage>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PackageRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, PackageRow<DB>>(
        "SELECT id, match_id, manifest_sha256, created_at FROM evidence_packages \
         WHERE match_id = $1 ORDER BY created_at, id",
    )
    .bind(match_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(|row| {
        Ok(EvidencePackage {
            id: row.id,
            match_id: row.match_id,
            manifest_sha256: row.manifest_sha256,
            created_at: row.created_at.into_time()?,
        })
    })
    .collect()
}
