//! Alerts on both backends: targets, gathering the events a target has not been told into one
//! delivery, and the deliveries' attempts.
//!
//! **Each event once.** `alert_events` has one row per target, match and event (`new`,
//! `removed`), inserted with `ON CONFLICT DO NOTHING` in the transaction that creates the
//! delivery: two processes gathering at once each get the events the other did not claim, and
//! a crash before the commit claims nothing. The delivery keeps its events as JSON, so every
//! retry sends the same body under the same delivery key.

use chrono::{DateTime, Utc};
use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{Columns, StoredTime, match_status_column};
use crate::rules::{from_json, to_json, to_u32};
use crate::{
    AlertCadence, AlertDelivery, AlertEvent, AlertEventKind, AlertKind, AlertTarget, Id,
    NewAlertTarget, Result, Review, StoreError,
};

#[derive(FromRow)]
pub(crate) struct AlertTargetRow<C: Columns> {
    id: i64,
    rights_holder_id: i64,
    kind: String,
    address: String,
    secret: String,
    cadence: String,
    lang: String,
    created_at: C::Time,
    last_collected_at: Option<C::Time>,
}

impl<C: Columns> AlertTargetRow<C> {
    fn into_model(self) -> Result<AlertTarget> {
        let unknown = |what: &str, value: &str| {
            StoreError::Invalid(format!("stored alert {what} {value:?} is unknown"))
        };
        Ok(AlertTarget {
            id: self.id,
            rights_holder_id: self.rights_holder_id,
            kind: AlertKind::parse(&self.kind).ok_or_else(|| unknown("kind", &self.kind))?,
            cadence: AlertCadence::parse(&self.cadence)
                .ok_or_else(|| unknown("cadence", &self.cadence))?,
            address: self.address,
            secret: self.secret,
            lang: self.lang,
            created_at: self.created_at.into_time()?,
            last_collected_at: self
                .last_collected_at
                .map(StoredTime::into_time)
                .transpose()?,
        })
    }
}

/// The columns of an [`AlertTargetRow`].
macro_rules! target_columns {
    () => {
        "id, rights_holder_id, kind, address, secret, cadence, lang, created_at, \
         last_collected_at"
    };
}

/// Checks a target before it is stored.
fn validate_target(target: &NewAlertTarget) -> Result<()> {
    if target.address.trim().is_empty() {
        return Err(StoreError::Invalid(
            "an alert target needs an address".into(),
        ));
    }
    if !["zh", "en"].contains(&target.lang.as_str()) {
        return Err(StoreError::Invalid(format!(
            "alert language {:?} is not zh or en",
            target.lang
        )));
    }
    if target.kind == AlertKind::Webhook && target.secret.is_empty() {
        return Err(StoreError::Invalid(
            "a webhook needs a signing secret".into(),
        ));
    }
    Ok(())
}

/// [`crate::Store::add_alert_target`]: adding the same address again updates its cadence,
/// language and secret and keeps its id and history.
pub(crate) async fn add_alert_target<'e, DB, E>(executor: E, target: &NewAlertTarget) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    validate_target(target)?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO alert_targets (rights_holder_id, kind, address, secret, cadence, lang, \
                                    created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (rights_holder_id, kind, address) DO UPDATE \
           SET secret = excluded.secret, cadence = excluded.cadence, lang = excluded.lang \
         RETURNING id",
    )
    .bind(target.rights_holder_id)
    .bind(target.kind.as_str())
    .bind(target.address.trim())
    .bind(target.secret.as_str())
    .bind(target.cadence.as_str())
    .bind(target.lang.as_str())
    .bind(DB::time(target.at))
    .fetch_one(executor)
    .await?;
    Ok(id)
}

pub(crate) async fn list_alert_targets<'e, DB, E>(
    executor: E,
    rights_holder_id: Option<Id>,
) -> Result<Vec<AlertTarget>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    AlertTargetRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, AlertTargetRow<DB>>(concat!(
        "SELECT ",
        target_columns!(),
        " FROM alert_targets WHERE ($1 IS NULL OR rights_holder_id = $1) ORDER BY id"
    ))
    .bind(rights_holder_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(AlertTargetRow::into_model)
    .collect()
}

/// [`crate::Store::remove_alert_target`]; its deliveries and what it was told go with it.
pub(crate) async fn remove_alert_target<'e, DB, E>(
    executor: E,
    id: Id,
    rights_holder_id: Option<Id>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(
        "DELETE FROM alert_targets WHERE id = $1 AND ($2 IS NULL OR rights_holder_id = $2)",
    )
    .bind(id)
    .bind(rights_holder_id)
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("alert target {id}")));
    }
    Ok(())
}

/// The reported matches of the target's holder (confirmed or pending, not on a licensed host,
/// not of a withdrawn work) with `status`, as `c(id, status, first_seen, removed_at)`.
macro_rules! reported_matches {
    () => {
        concat!(
            "(SELECT m.id, m.first_seen, m.removed_at, ",
            match_status_column!(),
            " FROM matches m JOIN pages p ON p.id = m.page_id JOIN works w ON w.id = m.work_id \
              WHERE w.rights_holder_id = $3 AND m.review IN ('pending', 'confirmed')) c"
        )
    };
}

#[derive(FromRow)]
pub(crate) struct AlertEventRow<C: Columns> {
    event: String,
    match_id: i64,
    page_url: String,
    work_external_id: String,
    work_title: String,
    score: f64,
    review: String,
    first_seen: C::Time,
    removed_at: Option<C::Time>,
}

impl<C: Columns> AlertEventRow<C> {
    fn into_model(self) -> Result<AlertEvent> {
        Ok(AlertEvent {
            event: AlertEventKind::parse(&self.event).ok_or_else(|| {
                StoreError::Invalid(format!("stored alert event {:?} is unknown", self.event))
            })?,
            match_id: self.match_id,
            page_url: self.page_url,
            work_external_id: self.work_external_id,
            work_title: self.work_title,
            score: self.score,
            review: Review::parse(&self.review).ok_or_else(|| {
                StoreError::Invalid(format!("stored review {:?} is unknown", self.review))
            })?,
            first_seen: self.first_seen.into_time()?,
            removed_at: self.removed_at.map(StoredTime::into_time).transpose()?,
        })
    }
}

/// The dialect-free body of [`crate::Store::gather_alert`], in the backend's transaction.
/// Returns `None`, having written nothing that stays (the caller rolls back), when the target
/// has nothing new to be told.
pub(crate) async fn gather_alert_in<DB>(
    conn: &mut DB::Connection,
    target_id: Id,
    delivery_key: &str,
    at: DateTime<Utc>,
) -> Result<Option<AlertDelivery>>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    AlertTargetRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    AlertEventRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let target = sqlx::query_as::<_, AlertTargetRow<DB>>(concat!(
        "SELECT ",
        target_columns!(),
        " FROM alert_targets WHERE id = $1"
    ))
    .bind(target_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("alert target {target_id}")))?
    .into_model()?;
    let delivery_id: i64 = sqlx::query_scalar(
        "INSERT INTO alert_deliveries (target_id, delivery_key, events, event_count, \
                                       created_at, next_attempt_at) \
         VALUES ($1, $2, '[]', 1, $3, $3) RETURNING id",
    )
    .bind(target_id)
    .bind(delivery_key)
    .bind(DB::time(at))
    .fetch_one(&mut *conn)
    .await?;
    let since = DB::time(target.created_at);
    let mut claimed = 0;
    for statement in [
        concat!(
            "INSERT INTO alert_events (target_id, match_id, event, delivery_id) \
             SELECT $1, c.id, 'new', $2 FROM ",
            reported_matches!(),
            " WHERE c.first_seen >= $4 AND c.status NOT IN ('licensed', 'withdrawn') \
             ON CONFLICT (target_id, match_id, event) DO NOTHING"
        ),
        concat!(
            "INSERT INTO alert_events (target_id, match_id, event, delivery_id) \
             SELECT $1, c.id, 'removed', $2 FROM ",
            reported_matches!(),
            " WHERE c.removed_at >= $4 AND c.status = 'removed' \
             ON CONFLICT (target_id, match_id, event) DO NOTHING"
        ),
    ] {
        let done = sqlx::query(statement)
            .bind(target_id)
            .bind(delivery_id)
            .bind(target.rights_holder_id)
            .bind(since)
            .execute(&mut *conn)
            .await?;
        claimed += DB::rows_affected(&done);
    }
    if claimed == 0 {
        return Ok(None);
    }
    let events = sqlx::query_as::<_, AlertEventRow<DB>>(
        "SELECT a.event, m.id AS match_id, p.url AS page_url, \
                w.external_id AS work_external_id, w.title AS work_title, m.score, m.review, \
                m.first_seen, m.removed_at \
         FROM alert_events a JOIN matches m ON m.id = a.match_id \
         JOIN pages p ON p.id = m.page_id JOIN works w ON w.id = m.work_id \
         WHERE a.delivery_id = $1 ORDER BY a.event, m.id",
    )
    .bind(delivery_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(AlertEventRow::into_model)
    .collect::<Result<Vec<_>>>()?;
    sqlx::query("UPDATE alert_deliveries SET events = $2, event_count = $3 WHERE id = $1")
        .bind(delivery_id)
        .bind(to_json(&events, "alert events")?)
        .bind(events.len() as i64)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE alert_targets SET last_collected_at = $2 WHERE id = $1")
        .bind(target_id)
        .bind(DB::time(at))
        .execute(&mut *conn)
        .await?;
    Ok(Some(AlertDelivery {
        id: delivery_id,
        target_id,
        delivery_key: delivery_key.to_owned(),
        events,
        created_at: at,
        attempts: 0,
        next_attempt_at: at,
        last_error: None,
        delivered_at: None,
    }))
}

#[derive(FromRow)]
pub(crate) struct AlertDeliveryRow<C: Columns> {
    id: i64,
    target_id: i64,
    delivery_key: String,
    events: String,
    created_at: C::Time,
    attempts: i64,
    next_attempt_at: C::Time,
    last_error: Option<String>,
    delivered_at: Option<C::Time>,
}

impl<C: Columns> AlertDeliveryRow<C> {
    fn into_model(self) -> Result<AlertDelivery> {
        Ok(AlertDelivery {
            id: self.id,
            target_id: self.target_id,
            delivery_key: self.delivery_key,
            events: from_json(&self.events, "alert events")?,
            created_at: self.created_at.into_time()?,
            attempts: to_u32(self.attempts, "alert attempts")?,
            next_attempt_at: self.next_attempt_at.into_time()?,
            last_error: self.last_error,
            delivered_at: self.delivered_at.map(StoredTime::into_time).transpose()?,
        })
    }
}

/// The columns of an [`AlertDeliveryRow`].
macro_rules! delivery_columns {
    () => {
        "id, target_id, delivery_key, events, created_at, CAST(attempts AS BIGINT) AS attempts, \
         next_attempt_at, last_error, delivered_at"
    };
}

/// [`crate::Store::due_alert_deliveries`].
pub(crate) async fn due_alert_deliveries<'e, DB, E>(
    executor: E,
    at: DateTime<Utc>,
    max_attempts: u32,
) -> Result<Vec<AlertDelivery>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    AlertDeliveryRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, AlertDeliveryRow<DB>>(concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM alert_deliveries \
         WHERE delivered_at IS NULL AND next_attempt_at <= $1 AND attempts < $2 \
         ORDER BY next_attempt_at, id LIMIT 100"
    ))
    .bind(DB::time(at))
    .bind(i64::from(max_attempts))
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(AlertDeliveryRow::into_model)
    .collect()
}

/// [`crate::Store::alert_deliveries`].
pub(crate) async fn alert_deliveries<'e, DB, E>(
    executor: E,
    target_id: Id,
) -> Result<Vec<AlertDelivery>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    AlertDeliveryRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, AlertDeliveryRow<DB>>(concat!(
        "SELECT ",
        delivery_columns!(),
        " FROM alert_deliveries WHERE target_id = $1 ORDER BY id DESC LIMIT 100"
    ))
    .bind(target_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(AlertDeliveryRow::into_model)
    .collect()
}

/// [`crate::Store::record_alert_attempt`]. An attempt on a delivery already delivered (by a
/// concurrent sender) changes nothing.
pub(crate) async fn record_alert_attempt<'e, DB, E>(
    executor: E,
    delivery_id: Id,
    error: Option<&str>,
    at: DateTime<Utc>,
    next_attempt_at: DateTime<Utc>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    Option<DB::Time>: for<'q> Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let delivered = match error {
        None => Some(DB::time(at)),
        Some(_) => None,
    };
    sqlx::query(
        "UPDATE alert_deliveries SET attempts = attempts + 1, last_error = $2, \
                delivered_at = $3, next_attempt_at = $4 \
         WHERE id = $1 AND delivered_at IS NULL",
    )
    .bind(delivery_id)
    .bind(error)
    .bind(delivered)
    .bind(DB::time(next_attempt_at))
    .execute(executor)
    .await?;
    Ok(())
}
