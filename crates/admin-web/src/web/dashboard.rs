//! The dashboard: totals, new matches per day, the most pirated works and the top sites.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use chrono::Utc;
use copytrace_store::Session;

use super::figures::{SiteLine, Totals, WorkLine};
use super::i18n::Texts;
use super::{Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new().route("/", get(dashboard))
}

/// One bar of the dashboard's chart.
struct Bar {
    day: String,
    new_matches: u64,
    removals: u64,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    label: bool,
}

#[derive(Template)]
#[template(path = "web/dashboard.html")]
struct DashboardPage {
    t: &'static Texts,
    viewer: Viewer,
    holder: Option<String>,
    /// When the figures were computed (UTC).
    as_of: String,
    totals: Totals,
    days: Vec<Bar>,
    any_matches: bool,
    chart_width: u32,
    works: Vec<WorkLine>,
    sites: Vec<SiteLine>,
}

async fn dashboard(State(state): State<WebState>, Visitor { session, t }: Visitor) -> Response {
    match dashboard_page(&state, &session, t).await {
        Ok(page_data) => page(page_data),
        Err(error) => failure(error),
    }
}

/// The dashboard of `session`'s user: a rights holder's own copies, everyone's for staff, from
/// figures at most [`super::DashboardCache::ttl`] (plus one computation) old.
async fn dashboard_page(
    state: &WebState,
    session: &Session,
    t: &'static Texts,
) -> copytrace_service::Result<DashboardPage> {
    let (_, figures) = state
        .dashboard
        .figures(&state.store, session.user.rights_holder_id)
        .await?;
    let any_matches = figures.daily.iter().any(|d| d.new_matches > 0);
    let (days, chart_width) = bars(&figures.daily);
    Ok(DashboardPage {
        t,
        viewer: Viewer::of(session, t),
        holder: figures.holder.clone(),
        as_of: super::utc_seconds(figures.computed_at),
        totals: figures.totals.clone(),
        days,
        any_matches,
        chart_width,
        works: figures.works.clone(),
        sites: figures.sites.clone(),
    })
}

/// Days the dashboard's chart spans, ending today.
const CHART_DAYS: i64 = 30;

/// Bars of new matches for each of the last [`CHART_DAYS`] days (days without any are empty
/// bars, so the axis is always a month), scaled to 120 units of height; returns them and the
/// chart's width.
fn bars(daily: &[copytrace_store::DailyStats]) -> (Vec<Bar>, u32) {
    let today = Utc::now().date_naive();
    let days: Vec<(String, u64, u64)> = (0..CHART_DAYS)
        .rev()
        .map(|back| {
            let day = (today - chrono::Duration::days(back))
                .format("%Y-%m-%d")
                .to_string();
            let found = daily.iter().find(|d| d.day == day);
            (
                day,
                found.map_or(0, |d| d.new_matches),
                found.map_or(0, |d| d.removals),
            )
        })
        .collect();
    let highest = days.iter().map(|d| d.1).max().unwrap_or(0).max(1);
    let width = 18;
    let bars = days
        .into_iter()
        .enumerate()
        .map(|(i, (day, new_matches, removals))| {
            let height = ((new_matches as f64 / highest as f64) * 120.0).round() as u32;
            Bar {
                day,
                new_matches,
                removals,
                x: i as u32 * (width + 4),
                y: 122 - height,
                width,
                height,
                label: i % 7 == 0,
            }
        })
        .collect();
    (bars, CHART_DAYS as u32 * (width + 4))
}
