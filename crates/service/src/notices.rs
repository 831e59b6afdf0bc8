//! Takedown notices: one per rights holder and site, listing that holder's confirmed copies
//! still online there, rendered from the templates in `web/templates/notices/`, stored with a
//! status that removal checks move (`copytrace dedup` refreshes them after its checks).
//!
//! Only **confirmed** matches go into a notice (by a person, or by the certainty gate): a
//! false takedown notice is worse than a missed copy, so pending matches must be confirmed
//! first, and rejected or licensed ones (by decision or licensed host) never appear.

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_analytics::export::chapter_list;
use copytrace_analytics::notice::{NoticeItem, NoticeLanguage, excerpt, render_notice};
use copytrace_store::{
    Id, MatchFilter, MatchRecord, MatchStatus, NewNotice, Notice, NoticeStatus, Review, Store,
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
    let site = site.trim().to_ascii_lowercase();
    let records = store
        .list_matches(&MatchFilter {
            rights_holder_id: Some(rights_holder_id),
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

/// Writes and stores (as a draft) the notice of `holder` (the default rights holder when
/// `None`) to the operator of `site`. `Invalid` when there is no confirmed copy to list.
pub async fn create(
    store: &dyn Store,
    holder: Option<&str>,
    site: &str,
    language: NoticeLanguage,
    at: DateTime<Utc>,
) -> Result<Notice> {
    let holder = holders::find(store, holder.unwrap_or(holders::DEFAULT_RIGHTS_HOLDER)).await?;
    let site = site.trim().to_ascii_lowercase();
    if site.is_empty() || site.contains('/') {
        return Err(ServiceError::invalid(format!(
            "--site {site:?} is not a host name (e.g. pirate.example, or pirate.example:8080)"
        )));
    }
    let records = notice_matches(store, holder.id, &site).await?;
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
