//! Rights holders: the owners of works (publishers, news agencies), so that each sees and acts
//! on its own works only.
//!
//! A single-tenant installation never has to name one: works added without a holder belong to
//! [`DEFAULT_RIGHTS_HOLDER`]. A holder is removed only once it owns no work and no user account,
//! so removing an owner never removes evidence as a side effect.

use copytrace_store::{Id, LicensedHost, RightsHolder, Store, StoreError};
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

/// The names of every rights holder (what a form's choice of holder lists), without counting
/// their works as [`list`] does.
pub async fn names(store: &dyn Store) -> Result<Vec<String>> {
    let mut names: Vec<String> = store
        .list_rights_holders()
        .await?
        .into_iter()
        .map(|holder| holder.name)
        .collect();
    names.sort();
    Ok(names)
}

/// The rights holder with id `id`.
pub async fn get(store: &dyn Store, id: Id) -> Result<RightsHolder> {
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.id == id)
        .ok_or_else(|| StoreError::NotFound(format!("rights holder {id}")).into())
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

/// A host as a licence names it: `Partner.example`, `https://partner.example/books`,
/// `*.partner.example` and `partner.example:8080` all license `partner.example` and its
/// subdomains (on any port). Internationalized names become their ASCII (punycode) form, as
/// crawled URLs store them.
pub fn licensed_host(input: &str) -> Result<String> {
    let trimmed = input.trim();
    let without_wildcard = trimmed.strip_prefix("*.").unwrap_or(trimmed);
    let as_url = if without_wildcard.contains("://") {
        without_wildcard.to_owned()
    } else {
        format!("http://{without_wildcard}")
    };
    // The host as a crawled URL spells it, so that a stored licence reads back as itself: only
    // a web address normalizes its host (`e://80` would give `80`, which is `0.0.0.80`), a
    // name without its trailing dots is read again (`1..` is `0.0.0.1`, `a.0..` no host at
    // all), and a wildcard is only the leading `*.` (`*.*.x` would give `*.x`, then `x`).
    let host = url::Url::parse(&as_url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https"))
        .and_then(|url| url.host_str().map(|h| h.trim_end_matches('.').to_owned()))
        .and_then(|h| url::Url::parse(&format!("http://{h}")).ok())
        .and_then(|url| url.host_str().map(str::to_owned))
        .filter(|h| !h.is_empty() && !h.contains(['[', ']', ':', '*']))
        .ok_or_else(|| {
            ServiceError::invalid(format!(
                "{input:?} is not a host name (expected something like partner.example)"
            ))
        })?;
    Ok(host)
}

/// Licenses hosts (and their subdomains) to publish the works of the holder called `name`: all
/// of them, or the work `work_id`. Returns the normalized hosts and how many were new.
pub async fn license(
    store: &dyn Store,
    name: &str,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<(Vec<String>, u64)> {
    let holder = find(store, name).await?;
    let hosts = hosts
        .iter()
        .map(|h| licensed_host(h))
        .collect::<Result<Vec<_>>>()?;
    let added = store.add_licensed_hosts(holder.id, work_id, &hosts).await?;
    Ok((hosts, added))
}

/// Takes back licences given by [`license`]; returns how many there were.
pub async fn unlicense(
    store: &dyn Store,
    name: &str,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<u64> {
    let holder = find(store, name).await?;
    let hosts = hosts
        .iter()
        .map(|h| licensed_host(h))
        .collect::<Result<Vec<_>>>()?;
    Ok(store
        .remove_licensed_hosts(holder.id, work_id, &hosts)
        .await?)
}

/// The licensed hosts of the holder called `name`, or of every holder.
pub async fn licenses(store: &dyn Store, name: Option<&str>) -> Result<Vec<LicensedHost>> {
    let holder = match name {
        Some(name) => Some(find(store, name).await?.id),
        None => None,
    };
    Ok(store.list_licensed_hosts(holder).await?)
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

    #[test]
    fn licensed_hosts_are_read_as_the_host_they_name() {
        for (input, host) in [
            ("partner.example", "partner.example"),
            (" Partner.Example ", "partner.example"),
            ("https://partner.example/books/1", "partner.example"),
            ("*.partner.example", "partner.example"),
            ("partner.example:8080", "partner.example"),
            ("partner.example.", "partner.example"),
            ("正版.example", "xn--2lw00m.example"),
            ("127.0.0.1", "127.0.0.1"),
        ] {
            assert_eq!(licensed_host(input).unwrap(), host, "{input}");
        }
        for bad in ["", "http://", "[::1]", "a b.example"] {
            assert!(licensed_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_licensed_host_reads_back_as_itself() {
        // Found by the `catalog` fuzz target: `a://8` gave the host `8`, which reads as
        // `0.0.0.8`, and `2024-03-.0..` gave `2024-03-.0`, which is no host at all, so the
        // stored licence named no host a crawled page has.
        for bad in [
            "a://8",
            "2024-03-.0..",
            "ftp://partner.example/books",
            "*.*.x",
        ] {
            assert!(licensed_host(bad).is_err(), "{bad:?}");
        }
        assert_eq!(licensed_host("1..").unwrap(), "0.0.0.1");
        for input in [
            "https://8/books",
            "http://Partner.Example:8080/",
            "*.partner.example",
        ] {
            let host = licensed_host(input).unwrap();
            assert_eq!(licensed_host(&host).unwrap(), host, "{input}");
        }
    }
}
