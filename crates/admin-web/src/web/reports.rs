//! The weekly report in the web (issue 40): the figures `copytrace report weekly` mails, for a
//! chosen week, on a page and as the same XLSX workbook; and a notice's exports for search
//! engines and hosts (`copytrace notice export --format google|bing|baidu|abuse`).
//!
//! Both call the service's operations (`copytrace_service::reports::weekly`,
//! `copytrace_service::notices::export`), so the page shows exactly what the mail and the CLI
//! say. A rights holder sees its own report only (naming another holder is 404, as a holder that
//! does not exist is); staff (admins, analysts) see the staff report of every holder or any one
//! holder's. A notice's exports are its holder's and admins' (another holder's notice is 404).

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_extra::extract::Query;
use chrono::{Datelike, Duration, NaiveDate, Utc};
use copytrace_analytics::delisting::Engine;
use copytrace_analytics::export::ExportOptions;
use copytrace_service::notices::{self, AbuseOptions, ExportKind};
use copytrace_service::reports::{self, Period};
use copytrace_store::{Id, ReportAudience};
use serde::Deserialize;

use super::i18n::Texts;
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/reports/weekly", get(weekly_page))
        .route("/reports/weekly.xlsx", get(weekly_xlsx))
        .route("/notices/{id}/export/{format}", get(notice_export))
}

/// Which report: the week (any day of it; default the last whole week) and, for staff, a
/// holder (none: the staff report).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WeeklyQuery {
    /// `YYYY-MM-DD`, any day of the week wanted.
    week: String,
    /// A rights holder's id; empty for the staff report.
    holder: String,
}

/// The week (Monday to Sunday, UTC) of the day typed, or the last whole week.
fn period_of(week: &str) -> Result<Period, String> {
    let week = week.trim();
    if week.is_empty() {
        return Ok(Period::previous_week(Utc::now().date_naive()));
    }
    let day = NaiveDate::parse_from_str(week, "%Y-%m-%d")
        .map_err(|_| format!("{week:?} is not a date (YYYY-MM-DD)"))?;
    let monday = day - Duration::days(i64::from(day.weekday().num_days_from_monday()));
    Ok(Period {
        from: monday,
        to: monday + Duration::days(7),
    })
}

/// Whose report the visitor asked for and may see: its own for a rights holder (another
/// holder's is 404), the holder named or the staff report for staff.
async fn audience(
    state: &WebState,
    visitor: &Visitor,
    holder: &str,
) -> Result<ReportAudience, Response> {
    let named = match holder.trim() {
        "" => None,
        text => Some(text.parse::<Id>().map_err(|_| visitor.not_found())?),
    };
    match (visitor.tenant(), named) {
        (Some(own), Some(id)) if id != own => Err(visitor.not_found()),
        (Some(own), _) => Ok(ReportAudience::Holder(own)),
        (None, Some(id)) => {
            copytrace_service::holders::get(state.store.as_ref(), id)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?;
            Ok(ReportAudience::Holder(id))
        }
        (None, None) => Ok(ReportAudience::Staff),
    }
}

/// The report's language: the visitor's.
fn lang(t: &Texts) -> &'static str {
    if t.html_lang.starts_with("zh") {
        "zh"
    } else {
        "en"
    }
}

#[derive(Template)]
#[template(path = "web/weekly_report.html")]
struct WeeklyPage {
    t: &'static Texts,
    viewer: Viewer,
    /// The day typed (or the period's Monday).
    week: String,
    /// `(id, name, selected)` of every holder, for staff; empty for a rights holder.
    holders: Vec<(Id, String, bool)>,
    problem: Option<String>,
    /// `YYYY-MM-DD – YYYY-MM-DD (UTC)`.
    period: String,
    audience: String,
    headline: Vec<(&'static str, String)>,
    /// `(site, copies, removed, removal rate %)`.
    sites: Vec<(String, u64, u64, String)>,
    delays: Vec<(String, String)>,
    /// `(site, sent, removal verified, partially removed, awaiting follow-up)`.
    notices: Vec<(String, u64, u64, u64, u64)>,
    /// The query of the workbook's link.
    xlsx_query: String,
}

/// The weekly report's figures for the week and audience asked for.
async fn weekly_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<WeeklyQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Statistics)?;
    let t = visitor.t;
    let store = state.store.as_ref();
    let audience = audience(&state, &visitor, &query.holder).await?;
    let (period, problem) = match period_of(&query.week) {
        Ok(period) => (period, None),
        Err(problem) => (
            Period::previous_week(Utc::now().date_naive()),
            Some(problem),
        ),
    };
    let report = reports::weekly(store, audience, period, lang(t), Utc::now())
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    let holders = match visitor.tenant() {
        Some(_) => Vec::new(),
        None => copytrace_service::holders::list(store)
            .await
            .map_err(failure)?
            .into_iter()
            .map(|h| {
                let selected = audience == ReportAudience::Holder(h.holder.id);
                (h.holder.id, h.holder.name, selected)
            })
            .collect(),
    };
    let holder = match audience {
        ReportAudience::Holder(id) if visitor.tenant().is_none() => id.to_string(),
        _ => String::new(),
    };
    let last = period.to.pred_opt().unwrap_or(period.to);
    Ok(page(WeeklyPage {
        t,
        viewer: visitor.viewer(),
        week: period.from.to_string(),
        holders,
        problem,
        period: format!("{} – {last} (UTC)", period.from),
        audience: report.audience(),
        headline: report.headline(),
        sites: report
            .sites
            .iter()
            .map(|s| {
                (
                    s.site.clone(),
                    s.copies,
                    s.removed,
                    format!("{:.0}%", s.removal_rate * 100.0),
                )
            })
            .collect(),
        delays: report.delays(),
        notices: report
            .notices
            .iter()
            .map(|n| {
                (
                    n.site.clone(),
                    n.sent,
                    n.removal_verified,
                    n.partially_removed,
                    n.awaiting_follow_up,
                )
            })
            .collect(),
        xlsx_query: format!("week={}&holder={holder}", period.from),
    }))
}

/// The weekly report's workbook, as the mail attaches it.
async fn weekly_xlsx(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<WeeklyQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Statistics)?;
    let audience = audience(&state, &visitor, &query.holder).await?;
    let period = period_of(&query.week).map_err(|problem| visitor.bad_request(&problem))?;
    let report = reports::weekly(
        state.store.as_ref(),
        audience,
        period,
        lang(visitor.t),
        Utc::now(),
    )
    .await
    .map_err(|error| visitor.not_found_or_failure(error))?;
    let bytes = report
        .xlsx(&ExportOptions::default())
        .map_err(|e| failure(copytrace_service::ServiceError::from(e)))?;
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet".to_owned(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"{}\"",
                    reports::attachment_name(audience, period.from)
                ),
            ),
        ],
        bytes,
    )
        .into_response())
}

/// A notice's URL list for a search engine's removal form, or its abuse report for the host or
/// CDN, as a text file; an abuse report lacking a required element says which (400).
async fn notice_export(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((id, format)): Path<(Id, String)>,
) -> Result<Response, Response> {
    visitor.enter(Area::Notices)?;
    let kind = match format.as_str() {
        "google" => ExportKind::Delisting(Engine::Google),
        "bing" => ExportKind::Delisting(Engine::Bing),
        "baidu" => ExportKind::Delisting(Engine::Baidu),
        "abuse" => ExportKind::Abuse,
        _ => return Err(visitor.not_found()),
    };
    let text = notices::export(
        state.store.as_ref(),
        id,
        visitor.tenant(),
        kind,
        &AbuseOptions::default(),
        Utc::now(),
    )
    .await
    .map_err(|error| match error.kind() {
        copytrace_service::ErrorKind::Invalid => {
            visitor.bad_request(&copytrace_service::error::one_line(&error))
        }
        _ => visitor.not_found_or_failure(error),
    })?;
    let name = match kind {
        ExportKind::Delisting(_) => format!("notice-{id}-{format}.txt"),
        ExportKind::Abuse => format!("notice-{id}-abuse-report.txt"),
    };
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/plain; charset=utf-8".to_owned(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        text,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_week_is_the_monday_to_sunday_of_the_day_typed() {
        let wednesday = period_of("2026-12-02").unwrap();
        assert_eq!(wednesday.from.to_string(), "2026-11-30");
        assert_eq!(wednesday.to.to_string(), "2026-12-07");
        assert_eq!(period_of(" 2026-11-30 ").unwrap(), wednesday);
        assert!(period_of("last week").unwrap_err().contains("not a date"));
        let default = period_of("").unwrap();
        assert_eq!((default.to - default.from).num_days(), 7);
    }
}
