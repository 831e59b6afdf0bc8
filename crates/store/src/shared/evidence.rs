//! The evidence statements both backends share: page captures (the raw responses page texts
//! were extracted from) and the record of evidence packages written.

use sqlx::types::Json;
use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::capture::{self, GZIP};
use crate::rows::{Columns, StoredJson, StoredTime};
use crate::rules::to_u32;
use crate::{
    EvidencePackage, Id, NewCapture, NewEvidencePackage, NewRendering, PageCapture, Rendering,
    Result, StoreError, Subresponse, TrustedTimestamp,
};

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
    Option<Vec<u8>>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
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
    if let Some(rendering) = &capture.rendering {
        save_rendering::<DB>(conn, page_id, content_hash, rendering).await?;
    }
    Ok(())
}

/// Stores the rendering of a capture just stored: its DOM and the responses its scripts
/// received.
async fn save_rendering<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    content_hash: &str,
    rendering: &NewRendering,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<Vec<u8>>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    Json<Vec<(String, String)>>: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let dom = capture::pack(rendering.dom.as_bytes())?;
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    sqlx::query(
        "INSERT INTO page_renderings (page_id, content_hash, browser, settle_quiet_ms, \
         settled_after_ms, rendered_at, responses_not_kept, dom_sha256, dom_size, compression, \
         dom) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(page_id)
    .bind(content_hash)
    .bind(rendering.browser.as_str())
    .bind(count(rendering.settle_quiet_ms))
    .bind(count(rendering.settled_after_ms))
    .bind(DB::time(rendering.rendered_at))
    .bind(count(rendering.responses_not_kept))
    .bind(dom.sha256.as_str())
    .bind(dom.size)
    .bind(GZIP)
    .bind(dom.data)
    .execute(&mut *conn)
    .await?;
    for (seq, response) in rendering.subresponses.iter().enumerate() {
        let body = response.body.as_deref().map(capture::pack).transpose()?;
        let (sha256, size, data) = match body {
            Some(packed) => (Some(packed.sha256), Some(packed.size), Some(packed.data)),
            None => (None, None, None),
        };
        sqlx::query(
            "INSERT INTO page_subresponses (page_id, content_hash, seq, url, resource_type, \
             http_status, headers, mime_type, decoded_text, body_note, body_sha256, body_size, \
             compression, body) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(page_id)
        .bind(content_hash)
        .bind(i64::try_from(seq + 1).unwrap_or(i64::MAX))
        .bind(response.url.as_str())
        .bind(response.resource_type.as_str())
        .bind(i64::from(response.http_status))
        .bind(Json(response.headers.clone()))
        .bind(response.mime_type.as_str())
        .bind(i64::from(response.decoded_text))
        .bind(response.body_note.as_deref())
        .bind(sha256.as_deref())
        .bind(size)
        .bind(data.is_some().then_some(GZIP))
        .bind(data)
        .execute(&mut *conn)
        .await?;
    }
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
            rendering: None,
        })
    }
}

/// [`crate::Store::page_capture`], with its rendering when it has one. Three reads on the
/// pool (`executor` is the pool, hence `Copy`): a capture pruned between them is read without
/// its rendering, as it would have been a moment later not at all.
pub(crate) async fn page_capture<'e, DB, E>(
    executor: E,
    page_id: Id,
    content_hash: &str,
) -> Result<Option<PageCapture>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    CaptureRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    RenderingRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    SubresponseRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let capture = sqlx::query_as::<_, CaptureRow<DB>>(
        "SELECT page_id, content_hash, requested_url, final_url, http_status, headers, \
         encoding, fetched_at, body_sha256, body_size, compression, body \
         FROM page_captures WHERE page_id = $1 AND content_hash = $2",
    )
    .bind(page_id)
    .bind(content_hash)
    .fetch_optional(executor)
    .await?
    .map(CaptureRow::into_model)
    .transpose()?;
    let Some(mut capture) = capture else {
        return Ok(None);
    };
    let rendering = sqlx::query_as::<_, RenderingRow<DB>>(
        "SELECT browser, settle_quiet_ms, settled_after_ms, rendered_at, responses_not_kept, \
         dom_sha256, dom_size, compression, dom \
         FROM page_renderings WHERE page_id = $1 AND content_hash = $2",
    )
    .bind(page_id)
    .bind(content_hash)
    .fetch_optional(executor)
    .await?;
    if let Some(rendering) = rendering {
        let responses = sqlx::query_as::<_, SubresponseRow<DB>>(
            "SELECT seq, url, resource_type, http_status, headers, mime_type, decoded_text, \
             body_note, body_sha256, body_size, compression, body \
             FROM page_subresponses WHERE page_id = $1 AND content_hash = $2 ORDER BY seq",
        )
        .bind(page_id)
        .bind(content_hash)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(SubresponseRow::into_model)
        .collect::<Result<Vec<_>>>()?;
        capture.rendering = Some(rendering.into_model(responses)?);
    }
    Ok(Some(capture))
}

#[derive(FromRow)]
pub(crate) struct RenderingRow<C: Columns> {
    browser: String,
    settle_quiet_ms: i64,
    settled_after_ms: i64,
    rendered_at: C::Time,
    responses_not_kept: i64,
    dom_sha256: String,
    dom_size: i64,
    compression: String,
    dom: Vec<u8>,
}

impl<C: Columns> RenderingRow<C> {
    fn into_model(self, subresponses: Vec<Subresponse>) -> Result<Rendering> {
        let dom = capture::unpack(&self.compression, &self.dom, self.dom_size)?;
        let dom = String::from_utf8(dom)
            .map_err(|_| StoreError::Invalid("a stored rendered DOM is not UTF-8".into()))?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(Rendering {
            browser: self.browser,
            settle_quiet_ms: count(self.settle_quiet_ms),
            settled_after_ms: count(self.settled_after_ms),
            rendered_at: self.rendered_at.into_time()?,
            responses_not_kept: count(self.responses_not_kept),
            dom_sha256: self.dom_sha256,
            dom,
            subresponses,
        })
    }
}

#[derive(FromRow)]
pub(crate) struct SubresponseRow<C: Columns> {
    seq: i64,
    url: String,
    resource_type: String,
    http_status: i64,
    headers: C::Json,
    mime_type: String,
    decoded_text: i64,
    body_note: Option<String>,
    body_sha256: Option<String>,
    body_size: Option<i64>,
    compression: Option<String>,
    body: Option<Vec<u8>>,
}

impl<C: Columns> SubresponseRow<C> {
    fn into_model(self) -> Result<Subresponse> {
        let headers: serde_json::Value = self.headers.into_value("subresponse headers")?;
        let headers: Vec<(String, String)> = serde_json::from_value(headers).map_err(|e| {
            StoreError::Invalid(format!(
                "stored subresponse headers are not name/value pairs: {e}"
            ))
        })?;
        let body = match (self.compression, self.body, self.body_size) {
            (Some(compression), Some(body), Some(size)) => {
                Some(capture::unpack(&compression, &body, size)?)
            }
            _ => None,
        };
        Ok(Subresponse {
            seq: to_u32(self.seq, "subresponse number")?,
            url: self.url,
            resource_type: self.resource_type,
            http_status: u16::try_from(to_u32(self.http_status, "subresponse status")?)
                .map_err(|_| StoreError::Invalid("stored subresponse status is not HTTP".into()))?,
            headers,
            mime_type: self.mime_type,
            decoded_text: self.decoded_text != 0,
            body_sha256: self.body_sha256,
            body,
            body_note: self.body_note,
        })
    }
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
    check_sha256(digest)?;
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
    timestamp_tsa: Option<String>,
    timestamp_time: Option<C::Time>,
    timestamp_token: Option<Vec<u8>>,
}

/// The timestamp of a row, from its three columns (all set or none).
pub(crate) fn stored_timestamp<T: StoredTime>(
    tsa: Option<String>,
    time: Option<T>,
    token: Option<Vec<u8>>,
) -> Result<Option<TrustedTimestamp>> {
    Ok(match (tsa, time, token) {
        (Some(tsa_url), Some(time), Some(token)) => Some(TrustedTimestamp {
            tsa_url,
            gen_time: time.into_time()?,
            token,
        }),
        _ => None,
    })
}

/// Refuses a timestamp that cannot be one: no URL or no token.
pub(crate) fn check_timestamp(timestamp: &TrustedTimestamp) -> Result<()> {
    if timestamp.tsa_url.trim().is_empty() || timestamp.token.is_empty() {
        return Err(StoreError::Invalid(
            "a trusted timestamp needs its authority's URL and its token".into(),
        ));
    }
    Ok(())
}

/// Refuses a digest that is not SHA-256 in lower-case hex.
pub(crate) fn check_sha256(digest: &str) -> Result<()> {
    if digest.len() != 64
        || !digest
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(StoreError::Invalid(format!(
            "{digest:?} is not a SHA-256 digest in lower-case hex"
        )));
    }
    Ok(())
}

/// [`crate::Store::timestamp_evidence_package`].
pub(crate) async fn timestamp_evidence_package<'e, DB, E>(
    executor: E,
    match_id: Id,
    manifest_sha256: &str,
    timestamp: &TrustedTimestamp,
) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    check_sha256(manifest_sha256)?;
    check_timestamp(timestamp)?;
    let done = sqlx::query(
        "UPDATE evidence_packages SET timestamp_tsa = $3, timestamp_time = $4, \
         timestamp_token = $5 \
         WHERE match_id = $1 AND manifest_sha256 = $2 AND timestamp_token IS NULL",
    )
    .bind(match_id)
    .bind(manifest_sha256)
    .bind(timestamp.tsa_url.as_str())
    .bind(DB::time(timestamp.gen_time))
    .bind(timestamp.token.as_slice())
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) > 0 {
        return Ok(true);
    }
    let known: Option<(i64,)> = sqlx::query_as(
        "SELECT id FROM evidence_packages WHERE match_id = $1 AND manifest_sha256 = $2",
    )
    .bind(match_id)
    .bind(manifest_sha256)
    .fetch_optional(executor)
    .await?;
    match known {
        Some(_) => Ok(false),
        None => Err(StoreError::NotFound(format!(
            "evidence package {manifest_sha256} of match {match_id}"
        ))),
    }
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
        "SELECT id, match_id, manifest_sha256, created_at, timestamp_tsa, timestamp_time, \
         timestamp_token FROM evidence_packages WHERE match_id = $1 ORDER BY created_at, id",
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
            timestamp: stored_timestamp(
                row.timestamp_tsa,
                row.timestamp_time,
                row.timestamp_token,
            )?,
        })
    })
    .collect()
}
