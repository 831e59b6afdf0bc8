//! Statistics with filters, and exports of matches and statistics in every format (CSV, JSON,
//! NDJSON, XLSX) with the same filters: what analysts read and download. A rights holder's
//! statistics and exports hold only its own works' copies.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum_extra::extract::Query;
use chrono::Utc;
use copytrace_analytics::export::{ExportFormat, ExportOptions};
use copytrace_analytics::stats::SiteGrouping;
use copytrace_service::export::{self as exports, StatsTable};
use serde::Deserialize;

use super::filters::{Choice, FilterQuery, review_choices, status_choices};
use super::i18n::Texts;
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/stats", get(stats_page))
        .route("/exports/{table}", get(export))
}

/// Rows a statistics table shows (the export has them all).
const SHOWN_ROWS: usize = 200;

/// What the statistics page asks for: a table and the filter.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StatsQuery {
    /// `works`, `sites` or `daily`.
    table: String,
    #[serde(flatten)]
    filter: FilterQuery,
}

struct StatsRow {
    cells: Vec<String>,
    /// Where the first cell links to.
    link: Option<String>,
}

#[derive(Template)]
#[template(path = "web/stats.html")]
struct StatsPage {
    t: &'static Texts,
    viewer: Viewer,
    path: &'static str,
    table: &'static str,
    tables: Vec<Choice>,
    query: FilterQuery,
    /// Fields the filter form carries along unchanged (the statistics' table).
    hidden: Vec<(&'static str, String)>,
    query_string: String,
    problem: Option<String>,
    statuses: Vec<Choice>,
    reviews: Vec<Choice>,
    headers: Vec<&'static str>,
    /// Which columns are numbers (right-aligned).
    numeric: Vec<bool>,
    rows: Vec<StatsRow>,
    /// Rows there are in all (more than shown when the table is long).
    total_rows: usize,
    /// Export links of this table and of the matches behind it.
    exports: Vec<(&'static str, String)>,
}

/// The statistics page: copies per work, per site or per day, for the filter typed.
async fn stats_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<StatsQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Statistics)?;
    let t = visitor.t;
    let store = state.store.as_ref();
    let table = match query.table.as_str() {
        "sites" => "sites",
        "daily" => "daily",
        _ => "works",
    };
    visitor.check_work(&state, &query.filter.work).await?;
    let (filter, problem) = match query.filter.stats_filter(visitor.tenant(), t) {
        Ok(filter) => (Some(filter), None),
        Err(problem) => (None, Some(problem)),
    };
    let number = |value: u64| value.to_string();
    let (headers, numeric, rows): (Vec<&'static str>, Vec<bool>, Vec<StatsRow>) =
        match (table, &filter) {
            (_, None) => (Vec::new(), Vec::new(), Vec::new()),
            ("sites", Some(filter)) => {
                let rows =
                    copytrace_service::stats::sites(store, filter, SiteGrouping::Domain, None)
                        .await
                        .map_err(failure)?;
                (
                    vec![
                        t.site,
                        t.copies,
                        t.pages,
                        t.works,
                        t.removed,
                        t.removal_rate,
                    ],
                    vec![false, true, true, true, true, true],
                    rows.into_iter()
                        .map(|r| StatsRow {
                            link: Some(format!("/sites/{}", r.site)),
                            cells: vec![
                                r.site,
                                number(r.copies),
                                number(r.pages),
                                number(r.works),
                                number(r.removed),
                                format!("{:.0}%", r.removal_rate * 100.0),
                            ],
                        })
                        .collect(),
                )
            }
            ("daily", Some(filter)) => {
                let mut rows = copytrace_service::stats::daily(store, filter)
                    .await
                    .map_err(failure)?;
                rows.reverse();
                (
                    vec![t.day, t.new_matches, t.removals, t.pages],
                    vec![false, true, true, true],
                    rows.into_iter()
                        .map(|r| StatsRow {
                            link: None,
                            cells: vec![
                                r.day,
                                number(r.new_matches),
                                number(r.removals),
                                number(r.pages_crawled),
                            ],
                        })
                        .collect(),
                )
            }
            (_, Some(filter)) => {
                let rows = copytrace_service::stats::works(store, filter, None)
                    .await
                    .map_err(failure)?;
                (
                    vec![
                        t.work,
                        "ID",
                        t.pages,
                        t.sites,
                        t.best_score,
                        t.online,
                        t.removed,
                    ],
                    vec![false, false, true, true, true, true, true],
                    rows.into_iter()
                        .map(|r| StatsRow {
                            link: Some(format!("/works/{}", r.stats.work_id)),
                            cells: vec![
                                r.stats.title,
                                r.stats.external_id,
                                number(r.stats.pages),
                                number(r.stats.sites),
                                format!("{:.2}", r.stats.best_score),
                                number(r.stats.online),
                                number(r.stats.removed),
                            ],
                        })
                        .collect(),
                )
            }
        };
    let total_rows = rows.len();
    let query_string = query.filter.query_string();
    let with_filter = |path: String| {
        if query_string.is_empty() {
            path
        } else {
            format!("{path}&{query_string}")
        }
    };
    let exports = ["xlsx", "csv", "json", "ndjson"]
        .into_iter()
        .map(|format| {
            (
                format,
                with_filter(format!("/exports/{table}?format={format}")),
            )
        })
        .chain(std::iter::once((
            t.matches,
            with_filter("/exports/matches?format=xlsx".to_owned()),
        )))
        .collect();
    Ok(page(StatsPage {
        t,
        viewer: visitor.viewer(),
        path: "/stats",
        table,
        tables: vec![
            Choice {
                value: "works",
                label: t.stats_works,
            },
            Choice {
                value: "sites",
                label: t.stats_sites,
            },
            Choice {
                value: "daily",
                label: t.stats_daily,
            },
        ],
        hidden: vec![("table", table.to_owned())],
        statuses: status_choices(t),
        reviews: review_choices(t),
        query: query.filter,
        query_string,
        problem,
        headers,
        numeric,
        rows: rows.into_iter().take(SHOWN_ROWS).collect(),
        total_rows,
        exports,
    }))
}

/// What an export asks for: a format and the filter.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ExportQuery {
    /// `csv` (with a byte order mark, for Excel), `json`, `ndjson` or `xlsx`.
    format: String,
    #[serde(flatten)]
    filter: FilterQuery,
}

/// A download of `table` (`matches`, `works`, `sites`, `daily`, `time-to-piracy`) in the
/// format asked for, with the filter of the statistics page. It is written to a temporary file
/// first and then streamed, so its size costs disk, not memory, and a failure midway answers
/// an error instead of a truncated file.
async fn export(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(table): Path<String>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Exports)?;
    let t = visitor.t;
    let (format, extension, content_type) = match query.format.as_str() {
        "csv" | "" => (ExportFormat::Csv, "csv", "text/csv; charset=utf-8"),
        "json" => (ExportFormat::Json, "json", "application/json"),
        "ndjson" => (ExportFormat::Ndjson, "ndjson", "application/x-ndjson"),
        "xlsx" => (
            ExportFormat::Xlsx,
            "xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        other => {
            return Err(visitor.bad_request(&format!("{} format {other:?}", t.invalid_filter)));
        }
    };
    let stats_table = match table.as_str() {
        "matches" => None,
        "works" => Some(StatsTable::Works),
        "sites" => Some(StatsTable::Sites(SiteGrouping::Domain)),
        "daily" => Some(StatsTable::Daily),
        "time-to-piracy" => Some(StatsTable::TimeToPiracy),
        _ => return Err(visitor.not_found()),
    };
    visitor.check_work(&state, &query.filter.work).await?;
    let options = ExportOptions {
        bom: format == ExportFormat::Csv,
        scratch_dir: None,
    };
    let file = tempfile::tempfile().map_err(|e| failure(e.into()))?;
    let mut out = std::io::BufWriter::new(file);
    let store = state.store.as_ref();
    match stats_table {
        None => {
            let filter = query
                .filter
                .match_filter(visitor.tenant(), t)
                .map_err(|problem| visitor.bad_request(&problem))?;
            exports::export_matches(store, format, &filter, &options, &mut out)
                .await
                .map_err(failure)?;
        }
        Some(stats_table) => {
            let filter = query
                .filter
                .stats_filter(visitor.tenant(), t)
                .map_err(|problem| visitor.bad_request(&problem))?;
            exports::export_stats(
                store,
                stats_table,
                &filter,
                None,
                format,
                &options,
                &mut out,
            )
            .await
            .map_err(failure)?;
        }
    }
    let file = out
        .into_inner()
        .map_err(|e| failure(e.into_error().into()))?;
    let name = format!(
        "copytrace-{table}-{}.{extension}",
        Utc::now().format("%Y%m%d-%H%M")
    );
    super::download(file, content_type, &name)
}
