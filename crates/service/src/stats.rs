//! Statistics for analysts and rights holders: the store's SQL aggregates completed by
//! `copytrace-analytics` (medians, domains, chapters, time to piracy). The CLI's `stats` and the
//! web's dashboard call these.

use copytrace_analytics::stats::{
    self as analytics, ChapterRow, NoticeRow, PublishedWindow, SiteGrouping, SiteRow, TimeToPiracy,
    WorkRow,
};
use copytrace_store::{DailyStats, HolderStats, Id, MatchFilter, StatsFilter, Store};

use crate::error::Result;

/// Copies per work with time to piracy, most pages first, at most `top`.
pub async fn works(
    store: &dyn Store,
    filter: &StatsFilter,
    top: Option<usize>,
) -> Result<Vec<WorkRow>> {
    Ok(analytics::work_rows(store.work_stats(filter).await?, top))
}

/// Copies per chapter, from the matches' chapters (works without chapters have none).
pub async fn chapters(
    store: &dyn Store,
    filter: &StatsFilter,
    top: Option<usize>,
) -> Result<Vec<ChapterRow>> {
    // The chapters a match copies are named by the store's one rule when matches are listed.
    let records = store.list_matches(&MatchFilter::from(filter)).await?;
    let kept = records
        .iter()
        .filter(|r| r.status != copytrace_store::MatchStatus::Withdrawn);
    Ok(analytics::chapter_rows(kept, top))
}

/// Copies per site (host, or registered domain), most copies first, at most `top`.
pub async fn sites(
    store: &dyn Store,
    filter: &StatsFilter,
    grouping: SiteGrouping,
    top: Option<usize>,
) -> Result<Vec<SiteRow>> {
    let sites = store.site_stats(filter).await?;
    let lifetimes = store.copy_lifetimes(filter).await?;
    Ok(analytics::site_rows(sites, &lifetimes, grouping, top))
}

/// Copies, removals and notices per site, most copies first, at most `top`, without what
/// [`sites`] derives from every copy's lifetime: the medians are `None`, and a domain's works
/// are summed over its hosts (a work copied on two hosts of one domain counts twice). What a
/// dashboard shows, without returning every counted copy from the store.
pub async fn site_counts(
    store: &dyn Store,
    filter: &StatsFilter,
    grouping: SiteGrouping,
    top: Option<usize>,
) -> Result<Vec<SiteRow>> {
    let sites = store.site_stats(filter).await?;
    Ok(analytics::site_rows(sites, &[], grouping, top))
}

/// Activity per UTC day.
pub async fn daily(store: &dyn Store, filter: &StatsFilter) -> Result<Vec<DailyStats>> {
    Ok(store.daily_stats(filter).await?)
}

/// Copies per rights holder.
pub async fn holders(store: &dyn Store, filter: &StatsFilter) -> Result<Vec<HolderStats>> {
    Ok(store.holder_stats(filter).await?)
}

/// Time from publication to first copies, per work, per site and overall, of the works
/// `published` names (see [`PublishedWindow`]; every work for the default).
pub async fn time_to_piracy(
    store: &dyn Store,
    filter: &StatsFilter,
    published: &PublishedWindow,
) -> Result<TimeToPiracy> {
    Ok(analytics::time_to_piracy_of(
        store.first_copies(filter).await?,
        published,
    ))
}

/// How sites answered takedown notices (of one rights holder, or all), and how many of them
/// await follow-up ([`analytics::awaiting_follow_up`]).
pub async fn notices(store: &dyn Store, rights_holder_id: Option<Id>) -> Result<Vec<NoticeRow>> {
    Ok(analytics::notice_rows(
        &store.list_notices(rights_holder_id).await?,
    ))
}
