//! The user statements both backends share.

use sqlx::{Encode, Executor, FromRow, Transaction, Type};

use super::{Db, exists};
use crate::rows::UserRow;
use crate::rules::{self, Referenced, normalize_email};
use crate::{Id, NewUser, Result, StoreError, User};

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
