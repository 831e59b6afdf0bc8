//! Users of the admin web on PostgreSQL: the insert is shared, the write transaction is the
//! backend's.

use super::PostgresStore;
use crate::rules::validate_user;
use crate::{Id, NewUser, Result, shared};

pub(super) async fn create_user(store: &PostgresStore, user: &NewUser) -> Result<Id> {
    let email = validate_user(user)?;
    shared::create_user(store.begin().await?, &email, user).await
}
