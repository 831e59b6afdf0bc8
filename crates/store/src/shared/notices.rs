//! Takedown notices on both backends: what they list, where they stand, and how removal
//! checks move them.

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{Columns, StoredTime};
use crate::{Id, NewNotice, Notice, NoticeStatus, Result, StoreError};

#[derive(FromRow)]
pub(crate) struct NoticeRow<C: Columns> {
    id: i64,
    rights_holder_id: i64,
    site: String,
    lang: String,
    status: String,
    body: String,
    created_at: C::Time,
    sent_at: Option<C::Time>,
    status_changed_at: Option<C::Time>,
}

impl<C: Columns> NoticeRow<C> {
    fn into_model(self, match_ids: Vec<Id>, removed: u64) -> Result<Notice> {
        Ok(Notice {
            id: self.id,
            rights_holder_id: self.rights_holder_id,
            site: self.site,
            lang: self.lang,
            status: NoticeStatus::parse(&self.status).ok_or_else(|| {
                StoreError::Invalid(format!("stored notice status {:?} is unknown", self.status))
            })?,
            body: self.body,
            created_at: self.created_at.into_time()?,
            sent_at: self.sent_at.map(StoredTime::into_time).transpose()?,
            status_changed_at: self
                .status_changed_at
                .map(StoredTime::into_time)
                .transpose()?,
            match_ids,
            removed,
        })
    }
}

/// The dialect-free body of [`crate::Store::create_notice`], in the backend's transaction.
pub(crate) async fn create_notice_in<DB>(
    conn: &mut DB::Connection,
    notice: &NewNotice,
) -> Result<Id>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if notice.match_ids.is_empty() {
        return Err(StoreError::Invalid(
            "a notice lists at least one match".into(),
        ));
    }
    if !["zh", "en"].contains(&notice.lang.as_str()) {
        return Err(StoreError::Invalid(format!(
            "notice language {:?} is not zh or en",
            notice.lang
        )));
    }
    if notice.site.trim().is_empty() {
        return Err(StoreError::Invalid(
            "a notice is addressed to a site".into(),
        ));
    }
    for &match_id in &notice.match_ids {
        let holder: Option<i64> = sqlx::query_scalar(
            "SELECT w.rights_holder_id FROM matches m JOIN works w ON w.id = m.work_id \
             WHERE m.id = $1",
        )
        .bind(match_id)
        .fetch_optional(&mut *conn)
        .await?;
        if holder != Some(notice.rights_holder_id) {
            return Err(StoreError::NotFound(format!("match {match_id}")));
        }
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO notices (rights_holder_id, site, lang, status, body, created_at) \
         VALUES ($1, $2, $3, 'draft', $4, $5) RETURNING id",
    )
    .bind(notice.rights_holder_id)
    .bind(notice.site.as_str())
    .bind(notice.lang.as_str())
    .bind(notice.body.as_str())
    .bind(DB::time(notice.at))
    .fetch_one(&mut *conn)
    .await?;
    for &match_id in &notice.match_ids {
        sqlx::query("INSERT INTO notice_matches (notice_id, match_id) VALUES ($1, $2)")
            .bind(id)
            .bind(match_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(id)
}

pub(crate) async fn get_notice<'e, DB, E>(
    executor: E,
    id: Id,
    rights_holder_id: Option<Id>,
) -> Result<Notice>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    NoticeRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (i64, String): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let row = sqlx::query_as::<_, NoticeRow<DB>>(
        "SELECT id, rights_holder_id, site, lang, status, body, created_at, sent_at, \
         status_changed_at FROM notices WHERE id = $1 AND ($2 IS NULL OR rights_holder_id = $2)",
    )
    .bind(id)
    .bind(rights_holder_id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("notice {id}")))?;
    with_matches(executor, row).await
}

/// [`crate::Store::set_notice_body`]: a draft's text replaced.
pub(crate) async fn set_notice_body<'e, DB, E>(
    executor: E,
    id: Id,
    rights_holder_id: Option<Id>,
    body: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (String,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    if body.trim().is_empty() {
        return Err(StoreError::Invalid(
            "a notice's text cannot be empty".into(),
        ));
    }
    let status: Option<(String,)> = sqlx::query_as(
        "SELECT status FROM notices WHERE id = $1 AND ($2 IS NULL OR rights_holder_id = $2)",
    )
    .bind(id)
    .bind(rights_holder_id)
    .fetch_optional(executor)
    .await?;
    match status {
        None => return Err(StoreError::NotFound(format!("notice {id}"))),
        Some((status,)) if status != "draft" => {
            return Err(StoreError::Invalid(format!(
                "notice {id} is {status}: only a draft's text can be changed"
            )));
        }
        Some(_) => {}
    }
    // The status is checked again in the statement, so a notice marked sent meanwhile keeps
    // the text it was sent with.
    let done = sqlx::query("UPDATE notices SET body = $1 WHERE id = $2 AND status = 'draft'")
        .bind(body)
        .bind(id)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::Invalid(format!(
            "notice {id} is no longer a draft: only a draft's text can be changed"
        )));
    }
    Ok(())
}

/// A notice row with its matches and how many of them are removed.
async fn with_matches<'e, DB, E>(executor: E, row: NoticeRow<DB>) -> Result<Notice>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let matches: Vec<(i64, String)> = sqlx::query_as(
        "SELECT m.id, m.status FROM notice_matches n JOIN matches m ON m.id = n.match_id \
         WHERE n.notice_id = $1 ORDER BY m.id",
    )
    .bind(row.id)
    .fetch_all(executor)
    .await?;
    let removed = matches.iter().filter(|(_, s)| s == "removed").count() as u64;
    row.into_model(matches.into_iter().map(|(id, _)| id).collect(), removed)
}

pub(crate) async fn list_notices<'e, DB, E>(
    executor: E,
    rights_holder_id: Option<Id>,
) -> Result<Vec<Notice>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    NoticeRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (i64, String): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let rows = sqlx::query_as::<_, NoticeRow<DB>>(
        "SELECT id, rights_holder_id, site, lang, status, body, created_at, sent_at, \
         status_changed_at FROM notices WHERE ($1 IS NULL OR rights_holder_id = $1) \
         ORDER BY id DESC",
    )
    .bind(rights_holder_id)
    .fetch_all(executor)
    .await?;
    let mut notices = Vec::with_capacity(rows.len());
    for row in rows {
        notices.push(with_matches(executor, row).await?);
    }
    Ok(notices)
}
