//! Users of the admin web on SQLite.

use super::{SqliteStore, exists, now_micros};
use crate::rules::{self, Referenced, validate_user};
use crate::{Id, NewUser, Result, StoreError};

pub(super) async fn create_user(store: &SqliteStore, user: &NewUser) -> Result<Id> {
    let email = validate_user(user)?;
    let mut tx = store.write().await?;
    if let Some(holder) = user.rights_holder_id {
        exists(&mut tx, Referenced::RightsHolder, holder).await?;
    }
    let result = sqlx::query_scalar(
        "INSERT INTO users (email, password_hash, role, rights_holder_id, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&email)
    .bind(&user.password_hash)
    .bind(user.role.as_str())
    .bind(user.rights_holder_id)
    .bind(now_micros())
    .fetch_one(&mut *tx)
    .await;
    let id = rules::refuse_duplicate(result, || {
        StoreError::Invalid(format!("user {email:?} already exists"))
    })?;
    tx.commit().await?;
    Ok(id)
}
