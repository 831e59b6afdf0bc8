//! The dashboard's figures and their short-lived cache.
//!
//! **Why a cache.** The dashboard aggregates every reported copy the visitor may see: per
//! rights holder, per day, per work and per site. With 1,000,000 matches that is five
//! statements over all of them, several seconds of database time for the admin (a rights
//! holder's share, ~50,000 matches, still takes hundreds of milliseconds), while the figures
//! move only when a crawl or a review records something. `copytrace-bench web` measured the
//! admin's dashboard at minutes under 20 concurrent users without it (docs/benchmarks.md,
//! "Admin web under load").
//!
//! **What it promises.** Figures are kept per tenant (`None` for staff, who all see the same
//! figures, else the rights holder's id), never shared between tenants.
//! - *Fresh* (younger than [`DashboardCache::ttl`], 60 s by default): served as they are.
//! - *Stale*: served as they are while **one** background task computes them again; every
//!   visitor of that tenant meanwhile still gets the stale figures. So a dashboard shows
//!   figures at most `ttl` plus one computation old (and older only while computing keeps
//!   failing: the failure is logged, the next visit tries again).
//! - *Missing* (first visit of a tenant since the process started): the first visitor computes
//!   them and every concurrent visitor of the same tenant waits for that one computation
//!   (single flight) instead of starting its own.
//!
//! - *One at a time*: figures are computed for at most one tenant at a time in the process
//!   (fresh ones of a first visit, or a background refresh), so the dashboards never hold more
//!   than one of the pool's connections and about one core, however many tenants' figures
//!   expire together; the other pages keep the rest. Figures may therefore also be as old as
//!   the refreshes queued before theirs took.
//!
//! Nothing else is cached: the works list, work and match pages read the store on every visit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use copytrace_analytics::stats::SiteGrouping;
use copytrace_service::stats;
use copytrace_store::{DailyStats, Id, MatchFilter, StatsFilter, Store};

/// How long the dashboard's figures are served without being computed again.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

/// The dashboard's totals.
#[derive(Default, Clone)]
pub(super) struct Totals {
    pub works: u64,
    pub pages: u64,
    pub sites: u64,
    pub removed: u64,
}

#[derive(Clone)]
pub(super) struct WorkLine {
    pub title: String,
    pub pages: u64,
    pub sites: u64,
}

#[derive(Clone)]
pub(super) struct SiteLine {
    pub site: String,
    pub copies: u64,
    pub removal_percent: String,
}

/// Everything the dashboard shows of the store, for one tenant.
pub(super) struct Figures {
    pub holder: Option<String>,
    pub totals: Totals,
    /// Activity per day of the last month (at least), ascending.
    pub daily: Vec<DailyStats>,
    pub works: Vec<WorkLine>,
    pub sites: Vec<SiteLine>,
}

/// Computes the figures of `rights_holder_id`'s copies (everyone's for `None`).
async fn compute(
    store: &dyn Store,
    rights_holder_id: Option<Id>,
) -> copytrace_service::Result<Figures> {
    let filter = StatsFilter {
        rights_holder_id,
        since: Some(Utc::now() - chrono::Duration::days(30)),
        reviews: MatchFilter::reported().reviews,
        ..StatsFilter::default()
    };
    let all_time = StatsFilter {
        since: None,
        ..filter.clone()
    };
    let holders = stats::holders(store, &all_time).await?;
    let totals = holders.iter().fold(Totals::default(), |mut sum, h| {
        sum.works += h.works_copied;
        sum.pages += h.pages;
        sum.sites += h.sites;
        sum.removed += h.removed;
        sum
    });
    let daily = stats::daily(store, &filter).await?;
    let works = stats::works(store, &all_time, Some(8))
        .await?
        .into_iter()
        .map(|row| WorkLine {
            title: row.stats.title,
            pages: row.stats.pages,
            sites: row.stats.sites,
        })
        .collect();
    let sites = stats::sites(store, &all_time, SiteGrouping::Domain, Some(8))
        .await?
        .into_iter()
        .map(|row| SiteLine {
            site: row.site,
            copies: row.copies,
            removal_percent: format!("{:.0}", row.removal_rate * 100.0),
        })
        .collect();
    let holder = match rights_holder_id {
        Some(id) => store
            .list_rights_holders()
            .await?
            .into_iter()
            .find(|h| h.id == id)
            .map(|h| h.name),
        None => None,
    };
    Ok(Figures {
        holder,
        totals,
        daily,
        works,
        sites,
    })
}

/// Dashboard figures per tenant (see the module documentation). Clones share one cache.
#[derive(Clone)]
pub struct DashboardCache {
    ttl: Duration,
    tenants: Arc<Mutex<HashMap<Option<Id>, Arc<Tenant>>>>,
    /// One permit: one computation at a time, whichever the tenant.
    computing: Arc<tokio::sync::Semaphore>,
}

impl Default for DashboardCache {
    fn default() -> Self {
        DashboardCache::new(DEFAULT_TTL)
    }
}

/// One tenant's figures and who is computing them.
#[derive(Default)]
struct Tenant {
    /// The latest figures and when their computation started.
    latest: Mutex<Option<(Instant, Arc<Figures>)>>,
    /// Held while figures are computed for a visitor who has none to show (single flight).
    first: tokio::sync::Mutex<()>,
    /// Set while a background task recomputes stale figures.
    refreshing: std::sync::atomic::AtomicBool,
}

impl Tenant {
    fn latest(&self) -> Option<(Instant, Arc<Figures>)> {
        self.latest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn store(&self, at: Instant, figures: Arc<Figures>) {
        let mut latest = self
            .latest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A slower computation that started earlier never replaces a newer one.
        if latest.as_ref().is_none_or(|(known, _)| *known <= at) {
            *latest = Some((at, figures));
        }
    }
}

impl DashboardCache {
    /// A cache serving figures for `ttl` before computing them again.
    pub fn new(ttl: Duration) -> Self {
        DashboardCache {
            ttl,
            tenants: Arc::default(),
            computing: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// How long figures are served before they are computed again.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn tenant(&self, rights_holder_id: Option<Id>) -> Arc<Tenant> {
        self.tenants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(rights_holder_id)
            .or_default()
            .clone()
    }

    /// The figures of `rights_holder_id`'s dashboard, and when they were computed.
    pub(super) async fn figures(
        &self,
        store: &Arc<dyn Store>,
        rights_holder_id: Option<Id>,
    ) -> copytrace_service::Result<(Instant, Arc<Figures>)> {
        let tenant = self.tenant(rights_holder_id);
        if let Some((at, figures)) = tenant.latest() {
            if at.elapsed() >= self.ttl
                && !tenant
                    .refreshing
                    .swap(true, std::sync::atomic::Ordering::AcqRel)
            {
                let (store, tenant) = (store.clone(), tenant.clone());
                let computing = self.computing.clone();
                tokio::spawn(async move {
                    // Never closed, so the permit always comes.
                    let _permit = computing.acquire().await;
                    let started = Instant::now();
                    match compute(store.as_ref(), rights_holder_id).await {
                        Ok(figures) => tenant.store(started, Arc::new(figures)),
                        Err(error) => tracing::error!(
                            error = %copytrace_service::error::one_line(&error),
                            "the dashboard's figures could not be computed again; the previous \
                             ones are still shown"
                        ),
                    }
                    tenant
                        .refreshing
                        .store(false, std::sync::atomic::Ordering::Release);
                });
            }
            return Ok((at, figures));
        }
        // None yet: one visitor computes, the others wait for it.
        let _first = tenant.first.lock().await;
        if let Some(latest) = tenant.latest() {
            return Ok(latest);
        }
        let _permit = self.computing.acquire().await;
        let started = Instant::now();
        let figures = Arc::new(compute(store.as_ref(), rights_holder_id).await?);
        tenant.store(started, figures.clone());
        Ok((started, figures))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copytrace_store::sqlite::SqliteStore;

    async fn store() -> Arc<dyn Store> {
        let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
        store.migrate().await.unwrap();
        Arc::new(store)
    }

    #[tokio::test]
    async fn fresh_figures_are_served_from_the_cache_per_tenant() {
        let store = store().await;
        let cache = DashboardCache::new(Duration::from_secs(3600));
        let (at, first) = cache.figures(&store, None).await.unwrap();
        let (again_at, again) = cache.figures(&store, None).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(at, again_at);
        let (_, other) = cache.figures(&store, Some(1)).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "tenants never share figures");
    }

    #[tokio::test]
    async fn concurrent_first_visits_compute_once() {
        let store = store().await;
        let cache = DashboardCache::new(Duration::from_secs(3600));
        let visits: Vec<_> = (0..8)
            .map(|_| {
                let (cache, store) = (cache.clone(), store.clone());
                tokio::spawn(async move { cache.figures(&store, None).await.unwrap().1 })
            })
            .collect();
        let mut figures = Vec::new();
        for visit in visits {
            figures.push(visit.await.unwrap());
        }
        assert!(figures.iter().all(|f| Arc::ptr_eq(f, &figures[0])));
    }

    #[tokio::test]
    async fn stale_figures_are_served_while_one_refresh_replaces_them() {
        let store = store().await;
        let cache = DashboardCache::new(Duration::ZERO);
        let (_, first) = cache.figures(&store, None).await.unwrap();
        // Stale at once: served, and a refresh starts in the background.
        let (_, served) = cache.figures(&store, None).await.unwrap();
        assert!(Arc::ptr_eq(&first, &served));
        let tenant = cache.tenant(None);
        for _ in 0..200 {
            if !Arc::ptr_eq(&tenant.latest().unwrap().1, &first) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the stale figures were never replaced");
    }
}
