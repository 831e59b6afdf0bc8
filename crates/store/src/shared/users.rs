//! The user statements both backends share.

use chrono::{DateTime, Utc};
use sqlx::{Encode, Executor, FromRow, Transaction, Type};

use super::{Db, exists};
use crate::rows::{Columns, StoredTime, UserRow};
use crate::rules::{self, Referenced, normalize_email};
use crate::{ApiToken, Id, NewApiToken, NewUser, Result, StoreError, User};

/// Creates a user, in `tx` (a write transaction of the backend), once `user` is validated and
/// its `email` normalized (see `rules::validate_user`).
pub(crate) async fn create_user<DB>(
    mut tx: Transaction<'static, DB>,
    email: &str,
    user: &NewUser,
) -> Result<Id>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some(holder) = user.rights_holder_id {
        exists(&mut *tx, Referenced::RightsHolder, holder).await?;
    }
    let result = sqlx::query_scalar(
        "INSERT INTO users (email, password_hash, role, rights_holder_id, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(email)
    .bind(user.password_hash.as_str())
    .bind(user.role.as_str())
    .bind(user.rights_holder_id)
    .bind(DB::now())
    .fetch_one(&mut *tx)
    .await;
    let id = rules::refuse_duplicate(result, || {
        StoreError::Invalid(format!("user {email:?} already exists"))
    })?;
    tx.commit().await?;
    Ok(id)
}

pub(crate) async fn find_user_by_email<'e, DB, E>(executor: E, email: &str) -> Result<Option<User>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    UserRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    String: for<'q> Encode<'q, DB> + Type<DB>,
{
    let Some(email) = normalize_email(email) else {
        return Ok(None);
    };
    sqlx::query_as::<_, UserRow<DB>>(
        "SELECT id, email, password_hash, role, rights_holder_id, created_at FROM users \
         WHERE email = $1",
    )
    .bind(email)
    .fetch_optional(executor)
    .await?
    .map(UserRow::into_model)
    .transpose()
}

pub(crate) async fn list_users<'e, DB, E>(executor: E) -> Result<Vec<User>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    UserRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    sqlx::query_as::<_, UserRow<DB>>(
        "SELECT id, email, password_hash, role, rights_holder_id, created_at FROM users \
         ORDER BY email",
    )
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(UserRow::into_model)
    .collect()
}

/// [`crate::Store::set_user_password`].
pub(crate) async fn set_user_password<'e, DB, E>(
    executor: E,
    email: &str,
    password_hash: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let missing = || StoreError::NotFound(format!("user {email:?}"));
    let normalized = normalize_email(email).ok_or_else(missing)?;
    let done = sqlx::query("UPDATE users SET password_hash = $2 WHERE email = $1")
        .bind(normalized)
        .bind(password_hash)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(missing());
    }
    Ok(())
}

/// [`crate::Store::remove_user`].
pub(crate) async fn remove_user<'e, DB, E>(executor: E, email: &str) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    String: for<'q> Encode<'q, DB> + Type<DB>,
{
    let missing = || StoreError::NotFound(format!("user {email:?}"));
    let normalized = normalize_email(email).ok_or_else(missing)?;
    let done = sqlx::query("DELETE FROM users WHERE email = $1")
        .bind(normalized)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(missing());
    }
    Ok(())
}

/// [`crate::Store::create_session`].
pub(crate) async fn create_session<'e, DB, E>(
    executor: E,
    session: &crate::NewSession,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "INSERT INTO web_sessions (token_hash, user_id, csrf_token, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(session.token_hash.as_str())
    .bind(session.user_id)
    .bind(session.csrf_token.as_str())
    .bind(DB::time(session.created_at))
    .bind(DB::time(session.expires_at))
    .execute(executor)
    .await?;
    Ok(())
}

#[derive(FromRow)]
pub(crate) struct SessionRow<C: Columns> {
    token_hash: String,
    csrf_token: String,
    expires_at: C::Time,
    #[sqlx(flatten)]
    user: UserRow<C>,
}

/// [`crate::Store::session`].
pub(crate) async fn session<'e, DB, E>(
    executor: E,
    token_hash: &str,
    at: DateTime<Utc>,
) -> Result<Option<crate::Session>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SessionRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let Some(row) = sqlx::query_as::<_, SessionRow<DB>>(
        "SELECT s.token_hash, s.csrf_token, s.expires_at, u.id, u.email, u.password_hash, \
                u.role, u.rights_holder_id, u.created_at \
         FROM web_sessions s JOIN users u ON u.id = s.user_id \
         WHERE s.token_hash = $1 AND s.expires_at > $2",
    )
    .bind(token_hash)
    .bind(DB::time(at))
    .fetch_optional(executor)
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(crate::Session {
        token_hash: row.token_hash,
        csrf_token: row.csrf_token,
        expires_at: row.expires_at.into_time()?,
        user: row.user.into_model()?,
    }))
}

/// [`crate::Store::delete_session`].
pub(crate) async fn delete_session<'e, DB, E>(executor: E, token_hash: &str) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    sqlx::query("DELETE FROM web_sessions WHERE token_hash = $1")
        .bind(token_hash)
        .execute(executor)
        .await?;
    Ok(())
}

/// [`crate::Store::delete_expired_sessions`].
pub(crate) async fn delete_expired_sessions<'e, DB, E>(
    executor: E,
    at: DateTime<Utc>,
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query("DELETE FROM web_sessions WHERE expires_at <= $1")
        .bind(DB::time(at))
        .execute(executor)
        .await?;
    Ok(DB::rows_affected(&done))
}

/// [`crate::Store::record_login_failure`].
pub(crate) async fn record_login_failure<'e, DB, E>(
    executor: E,
    key: &str,
    at: DateTime<Utc>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query("INSERT INTO login_failures (key, at) VALUES ($1, $2)")
        .bind(key)
        .bind(DB::time(at))
        .execute(executor)
        .await?;
    Ok(())
}

/// [`crate::Store::login_failures_since`].
pub(crate) async fn login_failures_since<'e, DB, E>(
    executor: E,
    key: &str,
    since: DateTime<Utc>,
) -> Result<u64>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let count: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM login_failures WHERE key = $1 AND at > $2")
            .bind(key)
            .bind(DB::time(since))
            .fetch_one(executor)
            .await?;
    rules::to_u64(count, "login failures")
}

/// [`crate::Store::clear_login_failures`]: those of `key`, and everyone's older than `before`.
pub(crate) async fn clear_login_failures<'e, DB, E>(
    executor: E,
    key: &str,
    before: DateTime<Utc>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query("DELETE FROM login_failures WHERE key = $1 OR at < $2")
        .bind(key)
        .bind(DB::time(before))
        .execute(executor)
        .await?;
    Ok(())
}

/// [`crate::Store::create_api_token`].
pub(crate) async fn create_api_token<'e, DB, E>(executor: E, token: &NewApiToken) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    exists(executor, Referenced::User, token.user_id).await?;
    let result = sqlx::query_scalar(concat!(
        "INSERT INTO api_tokens (user_id, name, token_hash, created_at) ",
        "VALUES ($1, $2, $3, $4) RETURNING id",
    ))
    .bind(token.user_id)
    .bind(token.name.as_str())
    .bind(token.token_hash.as_str())
    .bind(DB::time(token.created_at))
    .fetch_one(executor)
    .await;
    rules::refuse_duplicate(result, || {
        StoreError::Invalid("an API token with this hash already exists".to_owned())
    })
}

/// How stale a token's `last_used_at` may be before a request records a new one: a client
/// polling every second should not turn every read into a write.
const LAST_USE_PRECISION_SECONDS: i64 = 60;

/// [`crate::Store::api_token_user`].
pub(crate) async fn api_token_user<'e, DB, E>(
    executor: E,
    token_hash: &str,
    at: DateTime<Utc>,
) -> Result<Option<User>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    UserRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let Some(user) = sqlx::query_as::<_, UserRow<DB>>(concat!(
        "SELECT u.id, u.email, u.password_hash, u.role, u.rights_holder_id, u.created_at ",
        "FROM api_tokens t JOIN users u ON u.id = t.user_id ",
        "WHERE t.token_hash = $1",
    ))
    .bind(token_hash)
    .fetch_optional(executor)
    .await?
    else {
        return Ok(None);
    };
    let stale = at - chrono::Duration::seconds(LAST_USE_PRECISION_SECONDS);
    sqlx::query(concat!(
        "UPDATE api_tokens SET last_used_at = $2 ",
        "WHERE token_hash = $1 AND (last_used_at IS NULL OR last_used_at <= $3)",
    ))
    .bind(token_hash)
    .bind(DB::time(at))
    .bind(DB::time(stale))
    .execute(executor)
    .await?;
    user.into_model().map(Some)
}

#[derive(FromRow)]
pub(crate) struct ApiTokenRow<C: Columns> {
    id: i64,
    user_id: i64,
    name: String,
    created_at: C::Time,
    last_used_at: Option<C::Time>,
}

/// [`crate::Store::list_api_tokens`].
pub(crate) async fn list_api_tokens<'e, DB, E>(executor: E, user_id: Id) -> Result<Vec<ApiToken>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    ApiTokenRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, ApiTokenRow<DB>>(concat!(
        "SELECT id, user_id, name, created_at, last_used_at FROM api_tokens ",
        "WHERE user_id = $1 ORDER BY id",
    ))
    .bind(user_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(|row| {
        Ok(ApiToken {
            id: row.id,
            user_id: row.user_id,
            name: row.name,
            created_at: row.created_at.into_time()?,
            last_used_at: row.last_used_at.map(StoredTime::into_time).transpose()?,
        })
    })
    .collect()
}

/// [`crate::Store::delete_api_token`].
pub(crate) async fn delete_api_token<'e, DB, E>(executor: E, id: Id, user_id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(executor)
        .await?;
    if DB::rows_affected(&done) == 0 {
        return Err(StoreError::NotFound(format!("API token {id}")));
    }
    Ok(())
}
