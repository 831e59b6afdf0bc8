//! Takedown notices: one per rights holder and site, listing that holder's confirmed copies
//! still online there, rendered from the templates in `web/templates/notices/`, stored with a
//! status that removal checks move (`copytrace dedup` refreshes them after its checks).
//!
//! Only **confirmed** matches go into a notice (by a person, or by the certainty gate): a
//! false takedown notice is worse than a missed copy, so pending matches must be confirmed
//! first, and rejected or licensed ones (by decision or licensed host) never appear.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_analytics::export::chapter_list;
use copytrace_analytics::notice::{NoticeItem, NoticeLanguage, excerpt, render_notice};
use copytrace_store::{
    Id, MatchFilter, MatchRecord, MatchStatus, NewNotice, Notice, NoticeStatus, Review,
    RightsHolder, Store,
};

use crate::error::{Result, ServiceError};
use crate::holders;

/// Characters of each copy quoted in a notice.
const EXCERPT_CHARS: usize = 60;

/// The confirmed copies of `rights_holder_id`'s works still online on `site` (the host or one
/// of its subdomains): what a notice to that site lists, by page URL.
pub async fn notice_matches(
    store: &dyn Store,
    rights_holder_id: Id,
    site: &str,
) -> Result<Vec<MatchRecord>> {
    online_confirmed(store, Some(rights_holder_id), site).await
}

/// The confirmed copies still online on `site`, of one rights holder's works or (`None`) of
/// every holder's.
async fn online_confirmed(
    store: &dyn Store,
    rights_holder_id: Option<Id>,
    site: &str,
) -> Result<Vec<MatchRecord>> {
    let site = site.trim().to_ascii_lowercase();
    let records = store
        .list_matches(&MatchFilter {
            rights_holder_id,
            reviews: vec![Review::Confirmed],
            ..MatchFilter::default()
        })
        .await?;
    Ok(records
        .into_iter()
        .filter(|r| matches!(r.status, MatchStatus::Open | MatchStatus::NoticeSent))
        .filter(|r| on_site(&r.page_url, &site))
        .collect())
}

/// Whether the page at `url` is on `site` (a host, with a port when not the default) or on a
/// subdomain of it.
fn on_site(url: &str, site: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    let Some(host) = crate::recrawl::site_of(&url) else {
        return false;
    };
    host == site || host.ends_with(&format!(".{site}"))
}

/// Writes and stores (as a draft) the notice of `holder` to the operator of `site`. `Invalid`
/// when there is no confirmed copy to list.
///
/// Without a holder, the notice is the one of the rights holder whose works the confirmed
/// copies on `site` are, when they are all one holder's (as in a single publisher's library,
/// whatever its holder is called). When they are several holders' works, or there is none, it
/// is refused: a notice names one claimant, so picking one of several would send a notice for
/// some of the copies only and leave the operator to guess whose the others are.
pub async fn create(
    store: &dyn Store,
    holder: Option<&str>,
    site: &str,
    language: NoticeLanguage,
    at: DateTime<Utc>,
) -> Result<Notice> {
    let site = site.trim().to_ascii_lowercase();
    if site.is_empty() || site.contains('/') {
        return Err(ServiceError::invalid(format!(
            "--site {site:?} is not a host name (e.g. pirate.example, or pirate.example:8080)"
        )));
    }
    let (holder, records) = match holder {
        Some(name) => {
            let holder = holders::find(store, name).await?;
            let records = notice_matches(store, holder.id, &site).await?;
            (holder, records)
        }
        None => sole_holder_on(store, &site).await?,
    };
    if records.is_empty() {
        return Err(ServiceError::invalid(format!(
            "{:?} has no confirmed copy online on {site}: nothing to notify (matches waiting \
             for review need `copytrace review confirm` first)",
            holder.name
        )));
    }
    let mut items = Vec::with_capacity(records.len());
    for record in &records {
        let text = store
            .evidence_text(record.page_id, &record.evidence_hash)
            .await?
            .unwrap_or_default();
        let quote = record
            .evidence
            .first()
            .and_then(|e| text.get(e.page_start as usize..e.page_end as usize))
            .unwrap_or_default();
        items.push(NoticeItem {
            url: record.page_url.clone(),
            aliases: record.aliases.clone(),
            work_title: record.work_title.clone(),
            work_external_id: record.work_external_id.clone(),
            chapters: chapter_list(record),
            excerpt: excerpt(quote, EXCERPT_CHARS),
            first_seen: record.first_seen.to_rfc3339_opts(SecondsFormat::Secs, true),
            copied_chars: record.copied_chars,
            evidence_hash: record.evidence_hash.clone(),
        });
    }
    let date = at.format("%Y-%m-%d").to_string();
    let body = render_notice(language, &holder.name, &site, &date, &items)?;
    let id = store
        .create_notice(&NewNotice {
            rights_holder_id: holder.id,
            site,
            lang: language.as_str().to_owned(),
            body,
            match_ids: records.iter().map(|r| r.id).collect(),
            at,
        })
        .await?;
    Ok(store.get_notice(id, Some(holder.id)).await?)
}

/// The one rights holder whose works have confirmed copies online on `site`, with those
/// copies; refused (naming the holders and their copies) when there are several, and when
/// there is no copy to notify at all.
async fn sole_holder_on(store: &dyn Store, site: &str) -> Result<(RightsHolder, Vec<MatchRecord>)> {
    let records = online_confirmed(store, None, site).await?;
    let mut copies: BTreeMap<Id, usize> = BTreeMap::new();
    for record in &records {
        *copies.entry(record.rights_holder_id).or_default() += 1;
    }
    match copies.keys().copied().collect::<Vec<Id>>().as_slice() {
        [] => Err(ServiceError::invalid(format!(
            "no confirmed copy of any rights holder's work is online on {site}: nothing to \
             notify (matches waiting for review need `copytrace review confirm` first)"
        ))),
        [only] => Ok((holders::get(store, *only).await?, records)),
        _ => {
            let names: BTreeMap<Id, String> = store
                .list_rights_holders()
                .await?
                .into_iter()
                .map(|h| (h.id, h.name))
                .collect();
            let mut listed: Vec<String> = copies
                .iter()
                .map(|(id, n)| {
                    let name = names.get(id).map_or("?", String::as_str);
                    format!("{name:?} ({n} cop{})", if *n == 1 { "y" } else { "ies" })
                })
                .collect();
            listed.sort();
            Err(ServiceError::invalid(format!(
                "the confirmed copies online on {site} are works of {} rights holders: {}; a \
                 notice speaks for one, so choose it with --rights-holder NAME",
                copies.len(),
                listed.join(", ")
            )))
        }
    }
}

/// Marks a notice sent (its copies become `notice_sent`), ignored, or back to draft.
pub async fn set_status(
    store: &dyn Store,
    id: Id,
    status: NoticeStatus,
    rights_holder_id: Option<Id>,
) -> Result<Notice> {
    store
        .set_notice_status(id, status, rights_holder_id, Utc::now())
        .await?;
    Ok(store.get_notice(id, rights_holder_id).await?)
}

/// Replaces a draft notice's text, as the rights holder edited it before sending.
pub async fn edit(
    store: &dyn Store,
    id: Id,
    rights_holder_id: Option<Id>,
    body: &str,
) -> Result<Notice> {
    store.set_notice_body(id, rights_holder_id, body).await?;
    Ok(store.get_notice(id, rights_holder_id).await?)
}

/// The notices of one rights holder (all for `None`), newest first as the store lists them.
pub async fn list(store: &dyn Store, rights_holder_id: Option<Id>) -> Result<Vec<Notice>> {
    Ok(store.list_notices(rights_holder_id).await?)
}

/// One notice; another holder's is "not found" when `rights_holder_id` is given.
pub async fn get(store: &dyn Store, id: Id, rights_holder_id: Option<Id>) -> Result<Notice> {
    Ok(store.get_notice(id, rights_holder_id).await?)
}
