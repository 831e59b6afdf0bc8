//! The dashboard's figures and their short-lived cache.
//!
//! **Why a cache.** The dashboard aggregates every reported copy the visitor may see: per
//! rights holder, per day, per work and per site. With 1,000,000 matches that is four
//! statements over all of them, several seconds of database time for the admin (a rights
//! holder's share, ~50,000 matches, still 0.5–3 s under load), while the figures
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
//! - *Paced refreshes*: after a background refresh that took `d`, the next one (of any tenant)
//!   starts no sooner than `3 × d` later, so refreshing takes at most a quarter of one
//!   connection's time. With many tenants' figures stale together, the last of them are
//!   refreshed after the others' turns: on the benchmark's 21 tenants under load, a few minutes.
//!   The dashboard says when its figures were computed.
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

/// After a background refresh that took `d`, the next one waits `REFRESH_REST × d`: refreshes
/// take at most a quarter of one connection's time, however many tenants' figures are stale.
const REFRESH_REST: u32 = 3;

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
    /// When their computation started: the figures count what was recorded by then.
    pub computed_at: chrono::DateTime<Utc>,
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
    let started_at = Utc::now();
    let filter = StatsFilter {
        rights_holder_id,
        since: Some(started_at - chrono::Duration::days(30)),
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
    let sites = stats::site_counts(store, &all_time, SiteGrouping::Domain, Some(8))
        .await?
        .into_iter()
        .map(|row| SiteLine {
            site: row.site,
            copies: row.copies,
            removal_percent: format!("{:.0}", row.removal_rate * 100.0),
        })
        .collect();
    let holder = match rights_holder_id {
        Some(id) => Some(copytrace_service::holders::get(store, id).await?.name),
        None => None,
    };
    Ok(Figures {
        computed_at: started_at,
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
    /// The earliest time the next background refresh may start (see [`REFRESH_REST`]).
    next_refresh: Arc<Mutex<Instant>>,
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
            next_refresh: Arc::new(Mutex::new(Instant::now())),
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

    /// Computes `tenant`'s figures again in the background: after the previous refresh has
    /// rested (see [`REFRESH_REST`]) and while no other computation runs.
    async fn refresh(&self, store: &dyn Store, rights_holder_id: Option<Id>, tenant: &Tenant) {
        loop {
            let rest = self
                .next_refresh_at()
                .saturating_duration_since(Instant::now());
            if !rest.is_zero() {
                tokio::time::sleep(rest).await;
                continue;
            }
            // Never closed, so the permit always comes.
            let _permit = self.computing.acquire().await;
            if self.next_refresh_at() > Instant::now() {
                // Another refresh ran while this one waited for the permit: rest after it.
                continue;
            }
            let started = Instant::now();
            match compute(store, rights_holder_id).await {
                Ok(figures) => tenant.store(started, Arc::new(figures)),
                Err(error) => tracing::error!(
                    error = %copytrace_service::error::one_line(&error),
                    "the dashboard's figures could not be computed again; the previous ones \
                     are still shown"
                ),
            }
            *self
                .next_refresh
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                Instant::now() + started.elapsed() * REFRESH_REST;
            return;
        }
    }

    fn next_refresh_at(&self) -> Instant {
        *self
            .next_refresh
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
                let (store, tenant, cache) = (store.clone(), tenant.clone(), self.clone());
                tokio::spawn(async move {
                    cache
                        .refresh(store.as_ref(), rights_holder_id, &tenant)
                        .await;
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
        let holder = store.ensure_rights_holder("某出版社").await.unwrap();
        let (_, other) = cache.figures(&store, Some(holder)).await.unwrap();
        assert_eq!(other.holder.as_deref(), Some("某出版社"));
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

    #[tokio::test]
    async fn a_refresh_waits_for_the_previous_one_to_rest() {
        let store = store().await;
        let cache = DashboardCache::new(Duration::ZERO);
        let (_, first) = cache.figures(&store, None).await.unwrap();
        // As if a refresh of another tenant had just taken a long time.
        *cache.next_refresh.lock().unwrap() = Instant::now() + Duration::from_millis(400);
        let (_, served) = cache.figures(&store, None).await.unwrap();
        assert!(Arc::ptr_eq(&first, &served));
        tokio::time::sleep(Duration::from_millis(200)).await;
        let tenant = cache.tenant(None);
        assert!(
            Arc::ptr_eq(&tenant.latest().unwrap().1, &first),
            "refreshed before the previous refresh had rested"
        );
        for _ in 0..200 {
            if !Arc::ptr_eq(&tenant.latest().unwrap().1, &first) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the stale figures were never replaced after the rest");
    }
}
