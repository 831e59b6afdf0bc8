//! Rights-holder profiles on both backends (issue 40): one row per holder, replaced whole.

use sqlx::{Encode, Executor, FromRow, Type};

use super::{Db, exists};
use crate::rows::RightsHolderProfileRow;
use crate::rules::Referenced;
use crate::{Id, Result, RightsHolderProfile, SignatureImage, StoreError};

/// The types a signature image may have (the table's CHECK says the same).
const SIGNATURE_TYPES: [&str; 2] = ["image/png", "image/jpeg"];

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

/// [`crate::Store::set_signature_image`].
pub(crate) async fn set_signature_image<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
    image: Option<&SignatureImage>,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q [u8]>: Encode<'q, DB> + Type<DB>,
{
    if let Some(image) = image {
        if !SIGNATURE_TYPES.contains(&image.content_type.as_str()) {
            return Err(StoreError::Invalid(format!(
                "a signature image is image/png or image/jpeg, not {:?}",
                image.content_type
            )));
        }
        if image.bytes.is_empty() {
            return Err(StoreError::Invalid("an empty signature image".into()));
        }
    }
    exists(executor, Referenced::RightsHolder, rights_holder_id).await?;
    let updated = sqlx::query(
        "UPDATE rights_holder_profiles SET signature_image = $2, signature_image_type = $3 \
         WHERE rights_holder_id = $1",
    )
    .bind(rights_holder_id)
    .bind(image.map(|i| i.bytes.as_slice()))
    .bind(image.map(|i| i.content_type.as_str()))
    .execute(executor)
    .await?;
    if DB::rows_affected(&updated) == 0 {
        return Err(StoreError::Invalid(format!(
            "rights holder {rights_holder_id} has no profile yet: set its profile before its \
             signature image"
        )));
    }
    Ok(())
}

/// [`crate::Store::signature_image`].
pub(crate) async fn signature_image<'e, DB, E>(
    executor: E,
    rights_holder_id: Id,
) -> Result<Option<SignatureImage>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    (Option<Vec<u8>>, Option<String>): for<'r> FromRow<'r, DB::Row>,
{
    exists(executor, Referenced::RightsHolder, rights_holder_id).await?;
    let row: Option<(Option<Vec<u8>>, Option<String>)> = sqlx::query_as(
        "SELECT signature_image, signature_image_type FROM rights_holder_profiles \
         WHERE rights_holder_id = $1",
    )
    .bind(rights_holder_id)
    .fetch_optional(executor)
    .await?;
    Ok(match row {
        Some((Some(bytes), Some(content_type))) => Some(SignatureImage {
            content_type,
            bytes,
        }),
        _ => None,
    })
}
