//! Sites as people look at them (issue 40): for each host, its reported copies and how many
//! were removed, when copies were first and last seen, when it was first crawled, and the
//! notices sent to it; what the web's site list and the API show. A rights holder's view
//! counts its own copies and notices only, and lists only the sites holding them; staff see
//! every crawled site.
//!
//! A site's contacts and ICP number are [`crate::contacts`]'.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use copytrace_store::{Id, Review, StatsFilter, Store};
use serde::Serialize;

use crate::error::Result;

/// One site (host) with its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteSummary {
    /// The host, as stored (lower-case, with a port when not the default).
    pub host: String,
    /// Reported copies (pending and confirmed matches) on it.
    pub copies: u64,
    /// Of those, found removed.
    pub removed: u64,
    /// Copies with a notice sent, not yet found removed.
    pub notice_sent: u64,
    /// `removed / copies` (0 without copies).
    pub removal_rate: f64,
    /// When its first copy was seen.
    pub first_seen: Option<DateTime<Utc>>,
    /// When a copy was last seen.
    pub last_seen: Option<DateTime<Utc>>,
    /// When a page of it was first stored; `None` for a rights holder (crawling is staff's)
    /// and for a site known only from its copies' statistics.
    pub crawled_since: Option<DateTime<Utc>>,
    /// Notices addressed to it (the caller's own, for a rights holder).
    pub notices: usize,
}

/// The sites the caller may see (`rights_holder_id`: only those holding its copies, counted
/// for it alone), most copies first, then by host.
pub async fn overview(store: &dyn Store, rights_holder_id: Option<Id>) -> Result<Vec<SiteSummary>> {
    let filter = StatsFilter {
        rights_holder_id,
        reviews: vec![Review::Pending, Review::Confirmed],
        ..StatsFilter::default()
    };
    let mut sites: BTreeMap<String, SiteSummary> = BTreeMap::new();
    let blank = |host: &str| SiteSummary {
        host: host.to_owned(),
        copies: 0,
        removed: 0,
        notice_sent: 0,
        removal_rate: 0.0,
        first_seen: None,
        last_seen: None,
        crawled_since: None,
        notices: 0,
    };
    for stats in store.site_stats(&filter).await? {
        sites.insert(
            stats.host.clone(),
            SiteSummary {
                host: stats.host,
                copies: stats.copies,
                removed: stats.removed,
                notice_sent: stats.notice_sent,
                removal_rate: if stats.copies == 0 {
                    0.0
                } else {
                    stats.removed as f64 / stats.copies as f64
                },
                first_seen: Some(stats.first_seen),
                last_seen: Some(stats.last_seen),
                crawled_since: None,
                notices: 0,
            },
        );
    }
    if rights_holder_id.is_none() {
        for site in store.list_sites().await? {
            sites
                .entry(site.host.clone())
                .or_insert_with(|| blank(&site.host))
                .crawled_since = Some(site.created_at);
        }
    }
    for notice in store.list_notices(rights_holder_id).await? {
        // A holder's notice to a site it has no copy on any more still counts there.
        sites
            .entry(notice.site.clone())
            .or_insert_with(|| blank(&notice.site))
            .notices += 1;
    }
    let mut sites: Vec<SiteSummary> = sites.into_values().collect();
    sites.sort_by(|a, b| b.copies.cmp(&a.copies).then_with(|| a.host.cmp(&b.host)));
    Ok(sites)
}
