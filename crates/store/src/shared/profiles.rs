//! Rights-holder profiles on both backends (issue 40): one row per holder, replaced whole.

use sqlx::{Encode, Executor, FromRow, Type};

use super::{Db, exists};
use crate::rows::RightsHolderProfileRow;
use crate::rules::Referenced;
use crate::{Id, Result, RightsHolderProfile, StoreError};

/// A profile text as stored: trimmed, `None` when nothing is left, so that "not given" has one
/// form whoever wrote it.
fn text(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// [`crate::Store::set_rights_holder_profile`].
pub(crate) async fn set_rights_holder_profile<'e, DB, E>(
    executor: E,
    profile: &RightsHolderProfile,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if !["zh", "en"].contains(&profile.language.as_str()) {
        return Err(StoreError::Invalid(format!(
            "notice language {:?} is not zh or en",
            profile.language
        )));
    }
    exists(executor, Referenced::RightsHolder, profile.rights_holder_id).await?;
    sqlx::query(
        "INSERT INTO rights_holder_profiles (rights_holder_id, legal_name, address, email, \
             phone, agent_name, agent_role, agent_contact, signature, language, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (rights_holder_id) DO UPDATE SET legal_name = excluded.legal_name, \
             address = excluded.address, email = excluded.email, phone = excluded.phone, \
             agent_name = excluded.agent_name, agent_role = excluded.agent_role, \
             agent_contact = excluded.agent_contact, signature = excluded.signature, \
             language = excluded.language, updated_at = excluded.updated_at",
    )
    .bind(profile.rights_holder_id)
    .bind(text(&profile.legal_name))
    .bind(text(&profile.address))
    .bind(text(&profile.email))
    .bind(text(&profile.phone))
    .bind(text(&profile.agent_name))
    .bind(text(&profile.agent_role))
    .bind(text(&profile.agent_contact))
    .bind(text(&profile.signature))
    .bind(profile.language.as_str())
    .bind(DB::time(profile.updated_at))
    .execute(executor)
    .await?;
    Ok(())
}

/// [`crate::Store::rights_holder_profile`].
pub(crate) async fn rights_holder_profile<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
) -> Result<Option<RightsHolderProfile>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    RightsHolderProfileRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
{
    exists(executor, Referenced::RightsHolder, rights_holder_id).await?;
    sqlx::query_as::<_, RightsHolderProfileRow<DB>>(
        "SELECT rights_holder_id, legal_name, address, email, phone, agent_name, agent_role, \
                agent_contact, signature, language, updated_at \
         FROM rights_holder_profiles WHERE rights_holder_id = $1",
    )
    .bind(rights_holder_id)
    .fetch_optional(executor)
    .await?
    .map(RightsHolderProfileRow::into_model)
    .transpose()
}
