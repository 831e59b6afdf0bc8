//! Files in and out: exports of matches and statistics (as `copytrace export` and the web's
//! downloads), a match's evidence package (as `copytrace evidence`), and uploads of work files
//! into the library (as `copytrace library add` and the web's library page), imported in the
//! background with their progress at `/api/v1/imports/{id}`.

use axum::Json;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use copytrace_analytics::export::{ExportFormat, ExportOptions};
use copytrace_analytics::stats::SiteGrouping;
use copytrace_service::export::{self as exports, StatsTable};
use copytrace_service::holders;

use super::schema::{ErrorBody, ExportParams, ImportStatus, ImportedWorkItem, UploadForm};
use super::{ApiError, ApiResult, Caller, IdPath, Query};
use crate::web::i18n::Lang;
use crate::web::imports::Import;
use crate::web::{Area, WebState};

/// A file already written in full, sent as the attachment `name`.
fn attachment(file: std::fs::File, content_type: &str, name: &str) -> ApiResult<Response> {
    crate::web::download(file, content_type, name)
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
}

fn internal(error: impl std::fmt::Display) -> ApiError {
    tracing::error!(%error, "an API download failed");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

/// A download of `table` (`matches`, `works`, `sites`, `daily`, `time-to-piracy`) in the format
/// asked for, with the statistics' filter: the same files as `copytrace export` and the web's
/// export links, written in full before the first byte is sent (a failure is an error, never a
/// truncated file). A rights holder's hold only its own works' copies.
#[utoipa::path(
    get,
    path = "/api/v1/exports/{table}",
    tag = "statistics",
    params(
        ("table" = String, Path, description = "`matches`, `works`, `sites`, `daily` or `time-to-piracy`"),
        ExportParams,
    ),
    responses(
        (status = 200, description = "The file as an attachment: text/csv, application/json, application/x-ndjson or the XLSX spreadsheet type", content_type = "application/octet-stream"),
        (status = 400, description = "A wrong format or filter field, named", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not export", body = ErrorBody),
        (status = 404, description = "No such table, or the filter's work is not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn export(
    caller: Caller,
    State(state): State<WebState>,
    Path(table): Path<String>,
    Query(params): Query<ExportParams>,
) -> ApiResult<Response> {
    caller.enter(Area::Exports)?;
    let (format, extension, content_type) = match params.format.as_deref().unwrap_or("csv") {
        "csv" | "" => (ExportFormat::Csv, "csv", "text/csv; charset=utf-8"),
        "json" => (ExportFormat::Json, "json", "application/json"),
        "ndjson" => (ExportFormat::Ndjson, "ndjson", "application/x-ndjson"),
        "xlsx" => (
            ExportFormat::Xlsx,
            "xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        other => {
            return Err(ApiError::bad_request(format!(
                "format {other:?}: `csv`, `json`, `ndjson` or `xlsx`"
            )));
        }
    };
    let stats_table = match table.as_str() {
        "matches" => None,
        "works" => Some(StatsTable::Works),
        "sites" => Some(StatsTable::Sites(SiteGrouping::Domain)),
        "daily" => Some(StatsTable::Daily),
        "time-to-piracy" => Some(StatsTable::TimeToPiracy),
        _ => return Err(ApiError::not_found()),
    };
    let form = params.filter().form();
    caller.check_filter_work(&state, &form.work).await?;
    let t = Lang::En.texts();
    let options = ExportOptions {
        bom: format == ExportFormat::Csv,
        scratch_dir: None,
    };
    let file = tempfile::tempfile().map_err(internal)?;
    let mut out = std::io::BufWriter::new(file);
    let store = state.store.as_ref();
    match stats_table {
        None => {
            let filter = form
                .match_filter(caller.tenant(), t)
                .map_err(ApiError::bad_request)?;
            exports::export_matches(store, format, &filter, &options, &mut out)
                .await
                .map_err(ApiError::service)?;
        }
        Some(stats_table) => {
            let filter = form
                .stats_filter(caller.tenant(), t)
                .map_err(ApiError::bad_request)?;
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
            .map_err(ApiError::service)?;
        }
    }
    let file = out.into_inner().map_err(|e| internal(e.into_error()))?;
    let name = format!(
        "copytrace-{table}-{}.{extension}",
        Utc::now().format("%Y%m%d-%H%M")
    );
    attachment(file, content_type, &name)
}

/// A match's evidence package, written now and sent as a ZIP archive: the raw page and its
/// SHA-256, the text, the passages side by side, a screenshot (headless Chromium, offline,
/// when installed) and the manifest with every file's hash, recorded so `copytrace evidence
/// verify` can check it later; with a time-stamping authority configured, also the manifest's
/// RFC 3161 token `manifest.tsr`, as the CLI writes it. Another rights holder's match is 404.
#[utoipa::path(
    post,
    path = "/api/v1/matches/{id}/evidence",
    tag = "matches",
    params(("id" = i64, Path, description = "The match's id")),
    responses(
        (status = 200, description = "The package as a ZIP archive; with `manifest.tsr`, an RFC 3161 token of the manifest, when a time-stamping authority is configured", content_type = "application/zip"),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Operators may not read matches; or a cookie without X-CSRF-Token", body = ErrorBody),
        (status = 404, description = "No such match, or not the caller's", body = ErrorBody),
    )
)]
pub(super) async fn evidence(
    caller: Caller,
    State(state): State<WebState>,
    IdPath(id): IdPath,
) -> ApiResult<Response> {
    use copytrace_service::evidence::{self, PackageRequest};
    caller.enter(Area::Reports)?;
    let scratch = tempfile::tempdir().map_err(internal)?;
    // Chromium named by COPYTRACE_CHROMIUM (as the CLI's --chromium), else found on PATH.
    let chromium = std::env::var_os("COPYTRACE_CHROMIUM").map(std::path::PathBuf::from);
    let screenshot =
        evidence::screenshot_settings(chromium.as_deref(), std::time::Duration::from_secs(30));
    let package_dir = scratch.path().join("package");
    let summary = evidence::write_package(
        state.store.as_ref(),
        &PackageRequest {
            match_id: id,
            rights_holder_id: caller.tenant(),
            out: package_dir.clone(),
            screenshot,
            timestamps: state.mail.timestamps.clone(),
        },
    )
    .await
    .map_err(ApiError::service)?;
    if let evidence::PackageStamp::Failed(why) = &summary.stamp {
        tracing::warn!(match_id = id, %why, "evidence package downloaded without a timestamp");
    }
    let mut archive = tempfile::tempfile().map_err(internal)?;
    evidence::zip_package(&package_dir, id, &mut archive).map_err(ApiError::service)?;
    attachment(
        archive,
        "application/zip",
        &format!("copytrace-evidence-{id}.zip"),
    )
}

/// An import as the API shows it.
fn import_status(import: &Import) -> ImportStatus {
    let finished = import.finished();
    let (label, done, total, _) = import.progress().snapshot();
    let _ = label;
    let (state, finished_at, works, marked, problem) = match finished {
        Some((at, report)) => (
            if report.problem.is_some() {
                "refused"
            } else {
                "done"
            },
            Some(at),
            report
                .outcomes
                .iter()
                .map(|w| ImportedWorkItem {
                    id: w.id,
                    external_id: w.external_id.clone(),
                    title: w.title.clone(),
                    outcome: match w.outcome {
                        copytrace_store::WriteOutcome::Created => "created",
                        copytrace_store::WriteOutcome::Updated => "updated",
                        copytrace_store::WriteOutcome::Unchanged => "unchanged",
                    }
                    .to_owned(),
                })
                .collect(),
            report.marked,
            report.problem.clone(),
        ),
        None => ("running", None, Vec::new(), 0, None),
    };
    ImportStatus {
        id: import.id.clone(),
        state: state.to_owned(),
        holder: import.holder.clone(),
        files: import.files as u64,
        started_at: import.started_at,
        finished_at,
        done,
        total,
        works,
        marked_for_matching: marked,
        problem,
    }
}

/// Uploads work files into the library (a rights holder's into its own catalog), one work per
/// file, the file name its external id; the same files again change nothing. The import runs
/// in the background: the answer says where to follow it.
#[utoipa::path(
    post,
    path = "/api/v1/works",
    tag = "works",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "Importing; follow it at /api/v1/imports/{id}", body = ImportStatus),
        (status = 400, description = "No file, or not a multipart form", body = ErrorBody),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Analysts may not add works; or a cookie without X-CSRF-Token", body = ErrorBody),
    )
)]
pub(super) async fn upload(
    caller: Caller,
    State(state): State<WebState>,
    multipart: Multipart,
) -> ApiResult<Response> {
    caller.enter(Area::Library)?;
    let upload = crate::web::library::read_upload(multipart)
        .await
        .map_err(ApiError::bad_request)?;
    if upload.catalog.is_some() {
        return Err(ApiError::bad_request(
            "catalogs are imported with `copytrace library import` or the web's library page",
        ));
    }
    if upload.files.is_empty() {
        return Err(ApiError::bad_request("files: send at least one work file"));
    }
    let holder = match caller.tenant() {
        Some(own) => {
            holders::get(state.store.as_ref(), own)
                .await
                .map_err(ApiError::service)?
                .name
        }
        None if upload.holder.trim().is_empty() => holders::DEFAULT_RIGHTS_HOLDER.to_owned(),
        None => upload.holder.trim().to_owned(),
    };
    let import = state
        .imports
        .start(caller.tenant(), holder.clone(), upload.files.len());
    let shown = import_status(&import);
    let task_state = state.clone();
    tokio::spawn(async move {
        let report = crate::web::library::run_import(&task_state, &upload, &holder, &import).await;
        import.finish(report);
        drop(upload);
    });
    let location = format!("/api/v1/imports/{}", shown.id);
    Ok((
        StatusCode::ACCEPTED,
        [(axum::http::header::LOCATION, location)],
        Json(shown),
    )
        .into_response())
}

/// An upload's progress, then what became of each file. Another tenant's import is 404.
#[utoipa::path(
    get,
    path = "/api/v1/imports/{id}",
    tag = "works",
    params(("id" = String, Path, description = "The import's id, from the upload's answer")),
    responses(
        (status = 200, description = "Where it stands", body = ImportStatus),
        (status = 401, description = "No live credentials", body = ErrorBody),
        (status = 403, description = "Analysts may not add works", body = ErrorBody),
        (status = 404, description = "No such import, or not the caller's (imports are kept until the server restarts)", body = ErrorBody),
    )
)]
pub(super) async fn import(
    caller: Caller,
    State(state): State<WebState>,
    Path(id): Path<String>,
) -> ApiResult<Json<ImportStatus>> {
    caller.enter(Area::Library)?;
    let import = state
        .imports
        .get(&id, caller.tenant())
        .ok_or_else(ApiError::not_found)?;
    Ok(Json(import_status(&import)))
}
