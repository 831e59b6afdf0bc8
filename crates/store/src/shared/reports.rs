//! Scheduled reports by e-mail (issue 40): each report mail recorded `sending` before its
//! SMTP exchange and finished after it. The partial unique index `report_mails_once` allows
//! one `sending` or `sent` mail per audience and period, and the claim is one `INSERT … ON
//! CONFLICT DO NOTHING` on it, so two processes, a retried job or a re-run never send the
//! same report twice, on either backend.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{Columns, StoredTime};
use crate::{
    Id, NewReportMail, ReportAudience, ReportClaim, ReportMail, ReportMailState, Result, StoreError,
};

/// The one kind of scheduled report so far.
const WEEKLY: &str = "weekly";

#[derive(FromRow)]
pub(crate) struct ReportMailRow<C: Columns> {
    id: i64,
    audience: String,
    period_from: String,
    period_to: String,
    message_id: String,
    recipients: String,
    state: String,
    started_at: C::Time,
    finished_at: Option<C::Time>,
    error: Option<String>,
}

impl<C: Columns> ReportMailRow<C> {
    fn into_model(self) -> Result<ReportMail> {
        let unknown = |what: &str, value: &str| {
            StoreError::Invalid(format!("stored {what} {value:?} is unknown"))
        };
        let day = |value: &str| {
            NaiveDate::parse_from_str(value, "%Y-%m-%d").map_err(|_| unknown("report day", value))
        };
        Ok(ReportMail {
            id: self.id,
            audience: ReportAudience::parse(&self.audience)
                .ok_or_else(|| unknown("report audience", &self.audience))?,
            period_from: day(&self.period_from)?,
            period_to: day(&self.period_to)?,
            message_id: self.message_id,
            recipients: self
                .recipients
                .split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect(),
            state: ReportMailState::parse(&self.state)
                .ok_or_else(|| unknown("report mail state", &self.state))?,
            started_at: self.started_at.into_time()?,
            finished_at: self.finished_at.map(StoredTime::into_time).transpose()?,
            error: self.error,
        })
    }
}

const COLUMNS: &str = "id, audience, period_from, period_to, message_id, recipients, state, \
                       started_at, finished_at, error";

/// [`crate::Store::begin_report_mail`].
pub(crate) async fn begin_report_mail<'e, DB, E>(
    executor: E,
    mail: &NewReportMail,
) -> Result<ReportClaim>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    ReportMailRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if mail.message_id.trim().is_empty() {
        return Err(StoreError::Invalid(
            "a report mail needs a Message-ID".into(),
        ));
    }
    if mail.recipients.iter().all(|r| r.trim().is_empty()) {
        return Err(StoreError::Invalid(
            "a report mail needs at least one recipient".into(),
        ));
    }
    if mail.period_to <= mail.period_from {
        return Err(StoreError::Invalid(format!(
            "the report period {} to {} is empty",
            mail.period_from, mail.period_to
        )));
    }
    let audience = mail.audience.key();
    let (from, to) = (mail.period_from.to_string(), mail.period_to.to_string());
    let at = DB::time(mail.at);
    if mail.force {
        sqlx::query(
            "UPDATE report_mails SET state = 'abandoned', finished_at = $5, \
             error = 'given up to send again (--force): it may or may not have arrived' \
             WHERE kind = $1 AND audience = $2 AND period_from = $3 AND period_to = $4 \
             AND state = 'sending'",
        )
        .bind(WEEKLY)
        .bind(audience.as_str())
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(at)
        .execute(executor)
        .await?;
    }
    let recipients = mail
        .recipients
        .iter()
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    // A claim and its loser's look-up: the existing mail may be given up (abandoned) between
    // the two, so the pair is tried twice.
    for _ in 0..2 {
        let claimed: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO report_mails (kind, audience, period_from, period_to, message_id, \
                 recipients, state, started_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 'sending', $7) \
             ON CONFLICT (kind, audience, period_from, period_to) \
                 WHERE state IN ('sending', 'sent') DO NOTHING \
             RETURNING id",
        )
        .bind(WEEKLY)
        .bind(audience.as_str())
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(mail.message_id.trim())
        .bind(recipients.as_str())
        .bind(at)
        .fetch_optional(executor)
        .await?;
        if let Some((id,)) = claimed {
            return Ok(ReportClaim::Claimed(id));
        }
        let existing = sqlx::query_as::<_, ReportMailRow<DB>>(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM report_mails WHERE kind = $1 AND audience = $2 \
             AND period_from = $3 AND period_to = $4 AND state IN ('sending', 'sent')"
        )))
        .bind(WEEKLY)
        .bind(audience.as_str())
        .bind(from.as_str())
        .bind(to.as_str())
        .fetch_optional(executor)
        .await?;
        if let Some(existing) = existing {
            return Ok(ReportClaim::Exists(existing.into_model()?));
        }
    }
    Err(StoreError::Invalid(format!(
        "the {audience} report of {from} to {to} is being claimed and given up at once; try \
         again"
    )))
}

/// [`crate::Store::finish_report_mail`].
pub(crate) async fn finish_report_mail<'e, DB, E>(
    executor: E,
    mail_id: Id,
    error: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (String,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let state = if error.is_some() {
        ReportMailState::Refused
    } else {
        ReportMailState::Sent
    };
    // Only a mail still `sending` is finished, in one statement, so two finishers cannot
    // both win.
    let done = sqlx::query(
        "UPDATE report_mails SET state = $2, finished_at = $3, error = $4 \
         WHERE id = $1 AND state = 'sending'",
    )
    .bind(mail_id)
    .bind(state.as_str())
    .bind(DB::time(at))
    .bind(error)
    .execute(executor)
    .await?;
    if DB::rows_affected(&done) == 1 {
        return Ok(());
    }
    let found: Option<(String,)> = sqlx::query_as("SELECT state FROM report_mails WHERE id = $1")
        .bind(mail_id)
        .fetch_optional(executor)
        .await?;
    match found {
        None => Err(StoreError::NotFound(format!("report mail {mail_id}"))),
        Some((state,)) => Err(StoreError::Invalid(format!(
            "report mail {mail_id} is already {state}"
        ))),
    }
}

/// [`crate::Store::report_mails`].
pub(crate) async fn report_mails<'e, DB, E>(
    executor: E,
    period_from: Option<NaiveDate>,
) -> Result<Vec<ReportMail>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ReportMailRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, ReportMailRow<DB>>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM report_mails WHERE ($1 IS NULL OR period_from = $1) ORDER BY id"
    )))
    .bind(period_from.map(|d| d.to_string()))
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(ReportMailRow::into_model)
    .collect()
}
