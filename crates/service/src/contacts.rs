//! Site contacts: where a takedown notice to a site goes (issue 40).
//!
//! Two sources, one list per site (its host as the store names it, see
//! [`crate::recrawl::site_of`]):
//!
//! * **found** on the site's own pages while they are crawled ([`record_found`], called for
//!   every stored page): `mailto:` links, addresses on its contact, DMCA and report pages, and
//!   the ICP filing number of its footer (see [`copytrace_crawler::contacts`]). Recording is
//!   idempotent: a page crawled again writes nothing new.
//! * added by an **operator** ([`add`]), who knows better: an operator's address comes first
//!   and takes a found one over. Removing a found address ([`remove`]) removes it until a
//!   crawl finds it on the site again.
//!
//! Addresses are checked with `lettre`'s parser, the one the mails go through, so an address
//! that is stored can be written to.

use chrono::{DateTime, Utc};
use copytrace_crawler::FetchedPage;
use copytrace_crawler::contacts::{self, PageContacts};
use copytrace_store::{ContactKind, NewSiteContact, SiteContact, SiteIcp, Store};
use serde::Serialize;

use crate::error::{Result, ServiceError};
use crate::recrawl::site_of;

/// An e-mail address as a mail can be sent to: trimmed, lower-case, and accepted by
/// `lettre`'s address parser; refused naming it otherwise. A `mailto:` link (as copied from a
/// site's contact page) is taken for its address.
pub fn parse_email(input: &str) -> Result<String> {
    let mut email = input.trim().to_lowercase();
    if let Some(rest) = email.strip_prefix("mailto:") {
        email = rest.split('?').next().unwrap_or_default().trim().to_owned();
    }
    email
        .parse::<lettre::Address>()
        .map_err(|e| ServiceError::invalid(format!("{input:?} is not an e-mail address ({e})")))?;
    Ok(email)
}

/// A site's host as contacts are filed under: lower-case, with a port when not the default;
/// a URL is taken for its host.
pub fn parse_host(input: &str) -> Result<String> {
    let trimmed = input.trim();
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("http://{trimmed}/")
    };
    url::Url::parse(&with_scheme)
        .ok()
        .filter(|url| url.path() == "/" || trimmed.contains("://"))
        .and_then(|url| site_of(&url))
        .filter(|host| !host.is_empty())
        .ok_or_else(|| {
            ServiceError::invalid(format!(
                "{input:?} is not a site's host name (e.g. pirate.example, or pirate.example:8080)"
            ))
        })
}

/// What is known of whom to write to about a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteContacts {
    /// The site.
    pub host: String,
    /// Its addresses, the operator's first.
    pub contacts: Vec<SiteContact>,
    /// The ICP filing number its pages show, if any.
    pub icp: Option<SiteIcp>,
}

/// A site's contacts and ICP number.
pub async fn list(store: &dyn Store, host: &str) -> Result<SiteContacts> {
    let host = parse_host(host)?;
    Ok(SiteContacts {
        contacts: store.site_contacts(&host).await?,
        icp: store.site_icp(&host).await?,
        host,
    })
}

/// Adds an operator's contact of a site (or makes a found one theirs, with this kind).
/// Returns the site's contacts as they now are.
pub async fn add(
    store: &dyn Store,
    host: &str,
    email: &str,
    kind: ContactKind,
    at: DateTime<Utc>,
) -> Result<SiteContacts> {
    let host = parse_host(host)?;
    let email = parse_email(email)?;
    store
        .add_site_contacts(&[NewSiteContact {
            host: host.clone(),
            email,
            kind,
            found_on: None,
            at,
        }])
        .await?;
    list(store, &host).await
}

/// Removes a contact of a site; `NotFound` naming it when there is none.
pub async fn remove(store: &dyn Store, host: &str, email: &str) -> Result<()> {
    let host = parse_host(host)?;
    Ok(store
        .remove_site_contact(&host, &email.trim().to_lowercase())
        .await?)
}

/// What a crawled page says about whom to contact, read from its body as received (the
/// footer included, which main-text extraction drops). Pages with neither a `mailto:` link,
/// an ICP number nor a contact-page URL or title are not decoded again.
pub fn contacts_of(page: &FetchedPage) -> PageContacts {
    if !contacts::is_contact_page(&page.url, page.title.as_deref())
        && !contacts::may_hold_contacts(&page.body)
    {
        return PageContacts::default();
    }
    let encoding =
        encoding_rs::Encoding::for_label(page.encoding.as_bytes()).unwrap_or(encoding_rs::UTF_8);
    let (html, _, _) = encoding.decode(&page.body);
    contacts::find_contacts(&page.url, page.title.as_deref(), &html)
}

/// Records the contacts `found` on the page at `url` of its site, idempotently: an address
/// already known, or the same ICP number again, writes nothing. Addresses `lettre` would not
/// send to are skipped. Returns how many rows were new or changed.
pub async fn record_found(
    store: &dyn Store,
    url: &url::Url,
    found: &PageContacts,
    at: DateTime<Utc>,
) -> Result<u64> {
    let Some(host) = site_of(url) else {
        return Ok(0);
    };
    let contacts: Vec<NewSiteContact> = found
        .emails
        .iter()
        .filter_map(|found| Some((parse_email(&found.address).ok()?, found.kind)))
        .map(|(email, kind)| NewSiteContact {
            host: host.clone(),
            email,
            kind: match kind {
                contacts::ContactKind::Abuse => ContactKind::Abuse,
                contacts::ContactKind::Copyright => ContactKind::Copyright,
                contacts::ContactKind::General => ContactKind::General,
            },
            found_on: Some(url.to_string()),
            at,
        })
        .collect();
    let mut changed = 0;
    if !contacts.is_empty() {
        changed += store.add_site_contacts(&contacts).await?;
    }
    if let Some(number) = &found.icp_number {
        let icp = SiteIcp {
            host,
            icp_number: number.clone(),
            found_on: url.to_string(),
            found_at: at,
        };
        changed += u64::from(store.set_site_icp(&icp).await?);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_normalized_and_mailto_links_taken_for_their_address() {
        assert_eq!(
            parse_email(" Legal@Pirate.Example ").unwrap(),
            "legal@pirate.example"
        );
        assert_eq!(
            parse_email("mailto:DMCA@pirate.example?subject=版权").unwrap(),
            "dmca@pirate.example"
        );
        for bad in ["", "pirate.example", "mailto:", "a@", "two words@x.example"] {
            let refused = parse_email(bad).unwrap_err();
            assert!(
                refused.to_string().contains("is not an e-mail address"),
                "{bad:?}: {refused}"
            );
        }
    }

    #[test]
    fn hosts_are_lower_case_with_their_port() {
        assert_eq!(parse_host("Pirate.Example").unwrap(), "pirate.example");
        assert_eq!(
            parse_host("https://pirate.example:8443/contact").unwrap(),
            "pirate.example:8443"
        );
        assert!(parse_host("pirate.example/contact").is_err());
        assert!(parse_host("").is_err());
    }
}
