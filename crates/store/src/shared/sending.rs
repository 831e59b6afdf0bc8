//! Sending notices and following them up, on both backends (issue 40): site contacts, the
//! mails about a notice, and its history.
//!
//! **At most once.** A mail is recorded `sending` (with its `Message-ID`) in the transaction
//! that claims it, before the caller talks to the SMTP server, and finished afterwards. The
//! partial unique index `notice_mails_once` allows one `sending`, `sent` or `skipped` mail per
//! notice and purpose, so two processes, a retry or a re-run never send the same notice,
//! reminder or escalation twice. A crash between the SMTP exchange and its finish leaves the
//! mail `sending` and the notice `sending`: visible, never sent again by itself, and given up
//! by a person (`--force`, which marks the stuck mail `abandoned`).

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{Columns, StoredTime};
use crate::{
    ContactKind, ContactSource, Id, MailClaim, MailEnd, MailOutcome, MailPurpose, MailState,
    NewNoticeMail, NewSiteContact, NoticeMail, NoticeStatus, NoticeStatusChange, NoticeStep,
    Result, SiteContact, SiteIcp, StoreError,
};

fn unknown(what: &str, value: &str) -> StoreError {
    StoreError::Invalid(format!("stored {what} {value:?} is unknown"))
}

fn status(value: &str) -> Result<NoticeStatus> {
    NoticeStatus::parse(value).ok_or_else(|| unknown("notice status", value))
}

// ----- site contacts -----

#[derive(FromRow)]
pub(crate) struct SiteContactRow<C: Columns> {
    id: i64,
    host: String,
    email: String,
    kind: String,
    found_on: Option<String>,
    created_at: C::Time,
}

impl<C: Columns> SiteContactRow<C> {
    fn into_model(self) -> Result<SiteContact> {
        Ok(SiteContact {
            id: self.id,
            host: self.host,
            email: self.email,
            kind: ContactKind::parse(&self.kind)
                .ok_or_else(|| unknown("contact kind", &self.kind))?,
            source: if self.found_on.is_some() {
                ContactSource::Found
            } else {
                ContactSource::Operator
            },
            found_on: self.found_on,
            created_at: self.created_at.into_time()?,
        })
    }
}

/// A site as contacts name it: trimmed and lower-case, never empty.
fn site_key(host: &str) -> Result<String> {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() || host.contains(['/', ' ', '@']) {
        return Err(StoreError::Invalid(format!(
            "{host:?} is not a site's host name"
        )));
    }
    Ok(host)
}

/// [`crate::Store::add_site_contacts`].
pub(crate) async fn add_site_contacts<'e, DB, E>(
    executor: E,
    contacts: &[NewSiteContact],
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let mut rows = Vec::with_capacity(contacts.len());
    for contact in contacts {
        let email = contact.email.trim().to_lowercase();
        if email.is_empty() || !email.contains('@') || email.contains(char::is_whitespace) {
            return Err(StoreError::Invalid(format!(
                "{:?} is not an e-mail address",
                contact.email
            )));
        }
        rows.push((site_key(&contact.host)?, email, contact));
    }
    let mut changed = 0;
    for (host, email, contact) in &rows {
        // A found address never overrides what a person said; a person's takes a found one
        // over (its kind and source become theirs).
        let sql = if contact.found_on.is_some() {
            "INSERT INTO site_contacts (host, email, kind, source, found_on, created_at) \
             VALUES ($1, $2, $3, 'found', $4, $5) ON CONFLICT (host, email) DO NOTHING"
        } else {
            "INSERT INTO site_contacts (host, email, kind, source, found_on, created_at) \
             VALUES ($1, $2, $3, 'operator', $4, $5) ON CONFLICT (host, email) DO UPDATE \
             SET kind = excluded.kind, source = 'operator', found_on = NULL \
             WHERE site_contacts.source <> 'operator' OR site_contacts.kind <> excluded.kind"
        };
        let done = sqlx::query(sql)
            .bind(host.as_str())
            .bind(email.as_str())
            .bind(contact.kind.as_str())
            .bind(contact.found_on.as_deref())
            .bind(DB::time(contact.at))
            .execute(executor)
            .await?;
        changed += DB::rows_affected(&done);
    }
    Ok(changed)
}

/// [`crate::Store::site_contacts`].
pub(crate) async fn site_contacts<'e, DB, E>(executor: E, host: &str) -> Result<Vec<SiteContact>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SiteContactRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let host = site_key(host)?;
    sqlx::query_as::<_, SiteContactRow<DB>>(
        "SELECT id, host, email, kind, found_on, created_at FROM site_contacts WHERE host = $1 \
         ORDER BY CASE source WHEN 'operator' THEN 0 ELSE 1 END, id",
    )
    .bind(host.as_str())
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(SiteContactRow::into_model)
    .collect()
}

/// [`crate::Store::remove_site_contact`].
pub(crate) async fn remove_site_contact<'e, DB, E>(
    executor: E,
    host: &str,
    email: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let host = site_key(host)?;
    let email = email.trim().to_lowercase();
    let done = sqlx::query("DELETE FROM site_contacts WHERE host = $1 AND email = $2")
        .bind(host.as_str())
        .bind(email.as_str())
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("contact {email} of {host}")));
    }
    Ok(())
}

#[derive(FromRow)]
pub(crate) struct SiteIcpRow<C: Columns> {
    host: String,
    icp_number: String,
    found_on: String,
    found_at: C::Time,
}

/// [`crate::Store::set_site_icp`].
pub(crate) async fn set_site_icp<'e, DB, E>(executor: E, icp: &SiteIcp) -> Result<bool>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let host = site_key(&icp.host)?;
    let number = icp.icp_number.trim();
    if number.is_empty() {
        return Err(StoreError::Invalid("an empty ICP number".into()));
    }
    // The same number seen again writes nothing: every crawled page shows it.
    let done = sqlx::query(
        "INSERT INTO site_icp (host, icp_number, found_on, found_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (host) DO UPDATE SET icp_number = excluded.icp_number, \
             found_on = excluded.found_on, found_at = excluded.found_at \
         WHERE site_icp.icp_number <> excluded.icp_number",
    )
    .bind(host.as_str())
    .bind(number)
    .bind(icp.found_on.as_str())
    .bind(DB::time(icp.found_at))
    .execute(executor)
    .await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// [`crate::Store::site_icp`].
pub(crate) async fn site_icp<'e, DB, E>(executor: E, host: &str) -> Result<Option<SiteIcp>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SiteIcpRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let host = site_key(host)?;
    let row = sqlx::query_as::<_, SiteIcpRow<DB>>(
        "SELECT host, icp_number, found_on, found_at FROM site_icp WHERE host = $1",
    )
    .bind(host.as_str())
    .fetch_optional(executor)
    .await?;
    row.map(|row| {
        Ok(SiteIcp {
            host: row.host,
            icp_number: row.icp_number,
            found_on: row.found_on,
            found_at: row.found_at.into_time()?,
        })
    })
    .transpose()
}

// ----- notice history -----

#[derive(FromRow)]
pub(crate) struct NoticeStepRow<C: Columns> {
    notice_id: i64,
    from_status: String,
    to_status: String,
    at: C::Time,
    actor: String,
    note: Option<String>,
}

/// [`crate::Store::notice_history`].
pub(crate) async fn notice_history<'e, DB, E>(executor: E, notice_id: Id) -> Result<Vec<NoticeStep>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    NoticeStepRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM notices WHERE id = $1")
        .bind(notice_id)
        .fetch_optional(executor)
        .await?;
    if found.is_none() {
        return Err(StoreError::NotFound(format!("notice {notice_id}")));
    }
    sqlx::query_as::<_, NoticeStepRow<DB>>(
        "SELECT notice_id, from_status, to_status, at, actor, note FROM notice_history \
         WHERE notice_id = $1 ORDER BY id",
    )
    .bind(notice_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(|row| {
        Ok(NoticeStep {
            notice_id: row.notice_id,
            from: status(&row.from_status)?,
            to: status(&row.to_status)?,
            at: row.at.into_time()?,
            actor: row.actor,
            note: row.note,
        })
    })
    .collect()
}

/// Appends a step to a notice's history.
async fn record_step<DB>(
    conn: &mut DB::Connection,
    notice_id: Id,
    from: NoticeStatus,
    to: NoticeStatus,
    at: DB::Time,
    actor: &str,
    note: Option<&str>,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let actor = actor.trim();
    if actor.is_empty() {
        return Err(StoreError::Invalid(
            "a notice's step names who took it".into(),
        ));
    }
    sqlx::query(
        "INSERT INTO notice_history (notice_id, from_status, to_status, at, actor, note) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(notice_id)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(at)
    .bind(actor)
    .bind(note.map(str::trim).filter(|n| !n.is_empty()))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The status of notice `id` (of `rights_holder_id` when given); `NotFound` otherwise.
async fn current_status<DB>(
    conn: &mut DB::Connection,
    id: Id,
    rights_holder_id: Option<Id>,
) -> Result<NoticeStatus>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT status FROM notices WHERE id = $1 AND ($2 IS NULL OR rights_holder_id = $2)",
    )
    .bind(id)
    .bind(rights_holder_id)
    .fetch_optional(&mut *conn)
    .await?;
    let (value,) = found.ok_or_else(|| StoreError::NotFound(format!("notice {id}")))?;
    status(&value)
}

/// Moves a notice's status, stamping `sent_at` the first time it is sent and moving its open
/// copies to `notice_sent` then.
async fn move_notice<DB>(
    conn: &mut DB::Connection,
    id: Id,
    to: NoticeStatus,
    at: DB::Time,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "UPDATE notices SET status = $2, \
         sent_at = CASE WHEN $2 = 'sent' THEN COALESCE(sent_at, $3) ELSE sent_at END \
         WHERE id = $1",
    )
    .bind(id)
    .bind(to.as_str())
    .bind(at)
    .execute(&mut *conn)
    .await?;
    if to == NoticeStatus::Sent {
        sqlx::query(
            "UPDATE matches SET status = 'notice_sent' WHERE status = 'open' \
             AND id IN (SELECT match_id FROM notice_matches WHERE notice_id = $1)",
        )
        .bind(id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The dialect-free body of [`crate::Store::set_notice_status`], in the backend's transaction.
pub(crate) async fn set_notice_status_in<DB>(
    conn: &mut DB::Connection,
    change: &NoticeStatusChange,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let to = change.status;
    match to {
        NoticeStatus::RemovalVerified | NoticeStatus::PartiallyRemoved => {
            return Err(StoreError::Invalid(format!(
                "{} is set by removal checks, not by hand",
                to.as_str()
            )));
        }
        NoticeStatus::Sending => {
            return Err(StoreError::Invalid(
                "sending is set by `notice send`, not by hand".into(),
            ));
        }
        _ => {}
    }
    let from = current_status::<DB>(conn, change.id, change.rights_holder_id).await?;
    if from == to {
        return Ok(());
    }
    let needs_sent = matches!(
        to,
        NoticeStatus::Acknowledged
            | NoticeStatus::Ignored
            | NoticeStatus::Escalated
            | NoticeStatus::Delisting
    );
    if needs_sent && !from.was_sent() {
        return Err(StoreError::Invalid(format!(
            "notice {} is {}: only a sent notice can be {}",
            change.id,
            from.as_str(),
            to.as_str()
        )));
    }
    let at = DB::time(change.at);
    move_notice::<DB>(conn, change.id, to, at).await?;
    if from == NoticeStatus::Sending {
        // A person settles a mail whose fate a crash left unknown: it arrived (sent) or it
        // did not (back to draft, sendable again).
        sqlx::query(
            "UPDATE notice_mails SET state = CASE WHEN $2 = 'sent' THEN 'sent' ELSE 'abandoned' \
             END, finished_at = $3 WHERE notice_id = $1 AND purpose = 'notice' \
             AND state = 'sending'",
        )
        .bind(change.id)
        .bind(to.as_str())
        .bind(at)
        .execute(&mut *conn)
        .await?;
    }
    record_step::<DB>(
        conn,
        change.id,
        from,
        to,
        at,
        &change.actor,
        change.note.as_deref(),
    )
    .await
}

/// The dialect-free body of [`crate::Store::refresh_notices`], in the backend's transaction.
pub(crate) async fn refresh_notices_in<DB>(
    conn: &mut DB::Connection,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<u64>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64, String, String, i64, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    // Sent notices follow their copies: all removed, some, or none (a copy that came back
    // makes a removed notice sent again; an acknowledged or escalated one stays as it is).
    let moves: Vec<(i64, String, String, i64, i64)> = sqlx::query_as(
        "WITH tally AS ( \
           SELECT n.notice_id, COUNT(*) AS total, \
                  SUM(CASE WHEN m.status = 'removed' THEN 1 ELSE 0 END) AS removed \
           FROM notice_matches n JOIN matches m ON m.id = n.match_id GROUP BY n.notice_id) \
         SELECT notices.id, notices.status, \
                CASE WHEN t.removed = t.total THEN 'removal_verified' \
                     WHEN t.removed > 0 THEN 'partially_removed' \
                     WHEN notices.status IN ('removal_verified', 'partially_removed') \
                          THEN 'sent' \
                     ELSE notices.status END AS next, \
                t.total, t.removed \
         FROM notices JOIN tally t ON t.notice_id = notices.id \
         WHERE notices.status IN ('sent', 'acknowledged', 'escalated', 'delisting', \
                                  'removal_verified', 'partially_removed') \
         ORDER BY notices.id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let at = DB::time(at);
    let mut moved = 0;
    for (id, from, next, total, removed) in moves {
        if from == next {
            continue;
        }
        sqlx::query("UPDATE notices SET status = $2, status_changed_at = $3 WHERE id = $1")
            .bind(id)
            .bind(next.as_str())
            .bind(at)
            .execute(&mut *conn)
            .await?;
        let note = format!("{removed} of {total} cop(ies) found removed");
        record_step::<DB>(
            conn,
            id,
            status(&from)?,
            status(&next)?,
            at,
            "removal-check",
            Some(&note),
        )
        .await?;
        moved += 1;
    }
    Ok(moved)
}

// ----- mails about a notice -----

#[derive(FromRow)]
pub(crate) struct NoticeMailRow<C: Columns> {
    id: i64,
    notice_id: i64,
    purpose: String,
    message_id: String,
    recipients: String,
    state: String,
    started_at: C::Time,
    finished_at: Option<C::Time>,
    error: Option<String>,
    body_sha256: Option<String>,
    timestamp_tsa: Option<String>,
    timestamp_time: Option<C::Time>,
    timestamp_token: Option<Vec<u8>>,
}

impl<C: Columns> NoticeMailRow<C> {
    fn into_model(self) -> Result<NoticeMail> {
        Ok(NoticeMail {
            id: self.id,
            notice_id: self.notice_id,
            purpose: MailPurpose::parse(&self.purpose)
                .ok_or_else(|| unknown("mail purpose", &self.purpose))?,
            message_id: self.message_id,
            recipients: self
                .recipients
                .split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect(),
            state: MailState::parse(&self.state)
                .ok_or_else(|| unknown("mail state", &self.state))?,
            started_at: self.started_at.into_time()?,
            finished_at: self.finished_at.map(StoredTime::into_time).transpose()?,
            error: self.error,
            body_sha256: self.body_sha256,
            timestamp: super::stored_timestamp(
                self.timestamp_tsa,
                self.timestamp_time,
                self.timestamp_token,
            )?,
        })
    }
}

const MAIL_COLUMNS: &str = "id, notice_id, purpose, message_id, recipients, state, started_at, \
     finished_at, error, body_sha256, timestamp_tsa, timestamp_time, timestamp_token";

/// [`crate::Store::notice_mails`].
pub(crate) async fn notice_mails<'e, DB, E>(executor: E, notice_id: Id) -> Result<Vec<NoticeMail>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    NoticeMailRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, NoticeMailRow<DB>>(sqlx::AssertSqlSafe(format!(
        "SELECT {MAIL_COLUMNS} FROM notice_mails WHERE notice_id = $1 ORDER BY id"
    )))
    .bind(notice_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(NoticeMailRow::into_model)
    .collect()
}

/// The dialect-free body of [`crate::Store::begin_notice_mail`], in the backend's transaction.
pub(crate) async fn begin_notice_mail_in<DB>(
    conn: &mut DB::Connection,
    mail: &NewNoticeMail,
) -> Result<MailClaim>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    NoticeMailRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q [u8]>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
    Option<DB::Time>: for<'q> Encode<'q, DB> + Type<DB>,
{
    if mail.message_id.trim().is_empty() {
        return Err(StoreError::Invalid("a mail needs a Message-ID".into()));
    }
    // An escalation with no abuse contact, and a delisting step whose holder has no e-mail,
    // are recorded as done with nobody written to.
    if !matches!(
        mail.purpose,
        MailPurpose::Escalation | MailPurpose::Delisting
    ) && mail.recipients.is_empty()
    {
        return Err(StoreError::Invalid(format!(
            "a {} mail needs at least one recipient",
            mail.purpose.as_str()
        )));
    }
    // Lock the notice's row first (a no-op write: both dialects, no `FOR UPDATE` in SQLite), so
    // that two claimers of the same notice on PostgreSQL take turns and the second one sees the
    // first one's mail, instead of both seeing none and one failing on the unique index.
    sqlx::query("UPDATE notices SET status = status WHERE id = $1")
        .bind(mail.notice_id)
        .execute(&mut *conn)
        .await?;
    let from = current_status::<DB>(conn, mail.notice_id, None).await?;
    let at = DB::time(mail.at);
    let existing = sqlx::query_as::<_, NoticeMailRow<DB>>(sqlx::AssertSqlSafe(format!(
        "SELECT {MAIL_COLUMNS} FROM notice_mails WHERE notice_id = $1 AND purpose = $2 \
         AND state IN ('sending', 'sent', 'skipped')"
    )))
    .bind(mail.notice_id)
    .bind(mail.purpose.as_str())
    .fetch_optional(&mut *conn)
    .await?
    .map(NoticeMailRow::into_model)
    .transpose()?;
    match (mail.purpose, existing) {
        (MailPurpose::Notice, Some(stuck)) if stuck.state == MailState::Sending && mail.force => {
            sqlx::query(
                "UPDATE notice_mails SET state = 'abandoned', finished_at = $2, \
                 error = 'given up to send again (--force): it may or may not have arrived' \
                 WHERE id = $1",
            )
            .bind(stuck.id)
            .bind(at)
            .execute(&mut *conn)
            .await?;
        }
        (_, Some(existing)) => return Ok(MailClaim::Exists(existing)),
        (MailPurpose::Notice, None) if from != NoticeStatus::Draft => {
            return Err(StoreError::Invalid(format!(
                "notice {} is {}, not a draft, and Copytrace has no record of mailing it: \
                 nothing to send",
                mail.notice_id,
                from.as_str()
            )));
        }
        (
            MailPurpose::Reminder
            | MailPurpose::Escalation
            | MailPurpose::CdnEscalation
            | MailPurpose::Delisting,
            None,
        ) if !from.was_sent() => {
            return Err(StoreError::Invalid(format!(
                "notice {} is {}: a {} follows a sent notice only",
                mail.notice_id,
                from.as_str(),
                mail.purpose.as_str()
            )));
        }
        _ => {}
    }
    let recipients = mail.recipients.join(", ");
    if let Some(digest) = &mail.body_sha256 {
        super::check_sha256(digest)?;
    }
    let timestamp = mail.timestamp.as_ref();
    if let Some(timestamp) = timestamp {
        super::check_timestamp(timestamp)?;
        if mail.body_sha256.is_none() {
            return Err(StoreError::Invalid(
                "a mail's timestamp needs the SHA-256 of the text it stamps".into(),
            ));
        }
    }
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO notice_mails (notice_id, purpose, message_id, recipients, state, \
             started_at, body_sha256, timestamp_tsa, timestamp_time, timestamp_token) \
         VALUES ($1, $2, $3, $4, 'sending', $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(mail.notice_id)
    .bind(mail.purpose.as_str())
    .bind(mail.message_id.trim())
    .bind(recipients.as_str())
    .bind(at)
    .bind(mail.body_sha256.as_deref())
    .bind(timestamp.map(|t| t.tsa_url.as_str()))
    .bind(timestamp.map(|t| DB::time(t.gen_time)))
    .bind(timestamp.map(|t| t.token.as_slice()))
    .fetch_one(&mut *conn)
    .await?;
    if mail.purpose == MailPurpose::Notice {
        move_notice::<DB>(conn, mail.notice_id, NoticeStatus::Sending, at).await?;
        let note = format!(
            "mailing to {recipients} (Message-ID {}){}",
            mail.message_id.trim(),
            if from == NoticeStatus::Sending {
                "; an earlier attempt of unknown fate was given up (--force)"
            } else {
                ""
            }
        );
        record_step::<DB>(
            conn,
            mail.notice_id,
            from,
            NoticeStatus::Sending,
            at,
            &mail.actor,
            Some(&note),
        )
        .await?;
    }
    Ok(MailClaim::Claimed(id))
}

/// The dialect-free body of [`crate::Store::finish_notice_mail`], in the backend's transaction.
pub(crate) async fn finish_notice_mail_in<DB>(
    conn: &mut DB::Connection,
    end: &MailEnd,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    NoticeMailRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let mail = sqlx::query_as::<_, NoticeMailRow<DB>>(sqlx::AssertSqlSafe(format!(
        "SELECT {MAIL_COLUMNS} FROM notice_mails WHERE id = $1"
    )))
    .bind(end.mail_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("notice mail {}", end.mail_id)))?
    .into_model()?;
    if mail.state != MailState::Sending {
        return Err(StoreError::Invalid(format!(
            "mail {} of notice {} is already {}",
            mail.id,
            mail.notice_id,
            mail.state.as_str()
        )));
    }
    let (state, error) = match &end.outcome {
        MailOutcome::Sent => (MailState::Sent, None),
        MailOutcome::Refused(error) => (MailState::Refused, Some(error.as_str())),
        MailOutcome::Skipped if mail.purpose == MailPurpose::Notice => {
            return Err(StoreError::Invalid(
                "a notice is sent or refused, never skipped".into(),
            ));
        }
        MailOutcome::Skipped => (MailState::Skipped, None),
    };
    let at = DB::time(end.at);
    sqlx::query("UPDATE notice_mails SET state = $2, finished_at = $3, error = $4 WHERE id = $1")
        .bind(mail.id)
        .bind(state.as_str())
        .bind(at)
        .bind(error)
        .execute(&mut *conn)
        .await?;
    let from = current_status::<DB>(conn, mail.notice_id, None).await?;
    let note = match (end.note.as_deref(), error) {
        (Some(note), Some(error)) => Some(format!("{note}: {error}")),
        (Some(note), None) => Some(note.to_owned()),
        (None, error) => error.map(str::to_owned),
    };
    let to = match (mail.purpose, state) {
        // The notice went out (sending → sent), or nothing was delivered (back to draft).
        (MailPurpose::Notice, MailState::Sent) => NoticeStatus::Sent,
        (MailPurpose::Notice, _) if from == NoticeStatus::Sending => NoticeStatus::Draft,
        (MailPurpose::Notice, _) => return Ok(()),
        // A reminder changes no status, but is a step of the history.
        (MailPurpose::Reminder, MailState::Sent) => from,
        (MailPurpose::Escalation, MailState::Sent | MailState::Skipped) => NoticeStatus::Escalated,
        // The CDN is told alongside the host: escalated (a step of its own in the history).
        (MailPurpose::CdnEscalation, MailState::Sent) => NoticeStatus::Escalated,
        // The delisting lists were made (and mailed to the holder, when it has an address).
        (MailPurpose::Delisting, MailState::Sent | MailState::Skipped) => NoticeStatus::Delisting,
        // A refused reminder or escalation is tried again by the next follow-up.
        _ => return Ok(()),
    };
    if to != from {
        move_notice::<DB>(conn, mail.notice_id, to, at).await?;
    }
    record_step::<DB>(
        conn,
        mail.notice_id,
        from,
        to,
        at,
        &end.actor,
        note.as_deref(),
    )
    .await
}
