//! Users of the admin web on SQLite: the insert is shared, the write transaction is the
//! backend's.

use super::SqliteStore;
use crate::rules::validate_user;
use crate::{Id, NewUser, Result, shared};

pub(super) async fn create_user(store: &SqliteStore, user: &NewUser) -> Result<Id> {
    let email = validate_user(user)?;
    shared::create_user(store.write().await?, &email, user).await
}
