//! Rights holders: the owners of works (publishers, news agencies), so that each sees and acts
//! on its own works only.
//!
//! A single-tenant installation never has to name one: works added without a holder belong to
//! [`DEFAULT_RIGHTS_HOLDER`]. A holder is removed only once it owns no work and no user account,
//! so removing an owner never removes evidence as a side effect.

use copytrace_store::{RightsHolder, Store, StoreError};
use serde::Serialize;

use crate::error::{Result, ServiceError};

/// The rights holder of works added without naming one.
pub const DEFAULT_RIGHTS_HOLDER: &str = "default";

/// A rights holder with the size of its catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HolderSummary {
    /// The holder.
    #[serde(flatten)]
    pub holder: RightsHolder,
    /// Works it owns.
    pub works: usize,
}

/// Registers a rights holder (nothing changes if it exists); returns it as stored.
pub async fn add(store: &dyn Store, name: &str) -> Result<RightsHolder> {
    let id = store.ensure_rights_holder(name).await?;
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.id == id)
        .ok_or_else(|| ServiceError::unavailable(format!("rights holder {id} vanished")))
}

/// Every rights holder, by name, with the number of works it owns.
pub async fn list(store: &dyn Store) -> Result<Vec<HolderSummary>> {
    // One listing of the library, counted per holder, rather than one query per holder.
    let mut owned: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    for work in store.list_works(None).await? {
        *owned.entry(work.rights_holder_id).or_default() += 1;
    }
    Ok(store
        .list_rights_holders()
        .await?
        .into_iter()
        .map(|holder| HolderSummary {
            works: owned.get(&holder.id).copied().unwrap_or(0),
            holder,
        })
        .collect())
}

/// The rights holder called `name`.
pub async fn find(store: &dyn Store, name: &str) -> Result<RightsHolder> {
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.name == name.trim())
        .ok_or_else(|| StoreError::NotFound(format!("rights holder {:?}", name.trim())).into())
}

/// Removes the rights holder called `name`; refused while it owns works or user accounts.
pub async fn remove(store: &dyn Store, name: &str) -> Result<()> {
    let holder = find(store, name).await?;
    Ok(store.delete_rights_holder(holder.id).await?)
}

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;
    use crate::ErrorKind;

    #[tokio::test]
    async fn holders_are_added_once_listed_with_their_works_and_removed_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();

        let first = add(&store, "Yuewen").await.unwrap();
        assert_eq!(add(&store, " Yuewen ").await.unwrap(), first);
        add(&store, "Acme Books").await.unwrap();
        let listed: Vec<(String, usize)> = list(&store)
            .await
            .unwrap()
            .into_iter()
            .map(|s| (s.holder.name, s.works))
            .collect();
        assert_eq!(listed, [("Acme Books".into(), 0), ("Yuewen".into(), 0)]);

        remove(&store, "Acme Books").await.unwrap();
        let missing = remove(&store, "Acme Books").await.unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(missing.to_string().contains("Acme Books"), "{missing}");
    }
}
