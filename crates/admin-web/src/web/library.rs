//! The source library: uploading work files (text, HTML, Markdown, EPUB; any encoding `library
//! add` reads) or, for staff, a catalog with its files, as `copytrace library add` and `library
//! import` do: the same service calls, the same checks, the Redis index kept in step when one
//! is configured. A rights holder's uploads go into its own catalog.
//!
//! An upload is handled while the request waits and the page then lists what became of each
//! file (created, updated, unchanged) or why the upload was refused; nothing is stored when a
//! file of the upload cannot be read.

use std::path::{Path as FilePath, PathBuf};

use askama::Template;
use axum::Router;
use axum::extract::multipart::Multipart;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use copytrace_fingerprint::FingerprintConfig;
use copytrace_service::{NoProgress, catalog, holders, library};

use super::i18n::Texts;
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new().route(
        "/library",
        get(library_page)
            .post(upload)
            .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES)),
    )
}

/// Largest upload accepted: a catalog's worth of novels.
const MAX_UPLOAD_BYTES: usize = 512 * 1024 * 1024;

/// One file's outcome, as the page lists it.
struct OutcomeRow {
    id: i64,
    external_id: String,
    title: String,
    outcome: &'static str,
}

#[derive(Template)]
#[template(path = "web/library.html")]
struct LibraryPage {
    t: &'static Texts,
    viewer: Viewer,
    /// Holders an upload may go to: a staff member chooses; a rights holder has its own.
    holders: Vec<String>,
    /// Whether the visitor may upload a catalog (staff: a catalog names each row's holder).
    may_import_catalog: bool,
    outcomes: Vec<OutcomeRow>,
    rejected: Vec<String>,
    /// Stored pages marked for matching against the new and changed works.
    marked: u64,
    problem: Option<String>,
    done: bool,
}

async fn library_page(
    State(state): State<WebState>,
    visitor: Visitor,
) -> Result<Response, Response> {
    visitor.enter(Area::Library)?;
    render(&state, &visitor, Report::default(), StatusCode::OK).await
}

/// What an upload did.
#[derive(Default)]
struct Report {
    outcomes: Vec<OutcomeRow>,
    rejected: Vec<String>,
    marked: u64,
    problem: Option<String>,
    done: bool,
}

async fn render(
    state: &WebState,
    visitor: &Visitor,
    report: Report,
    status: StatusCode,
) -> Result<Response, Response> {
    let holders = match visitor.tenant() {
        Some(_) => Vec::new(),
        None => holders::names(state.store.as_ref())
            .await
            .map_err(failure)?,
    };
    Ok((
        status,
        page(LibraryPage {
            t: visitor.t,
            viewer: visitor.viewer(),
            holders,
            may_import_catalog: visitor.tenant().is_none(),
            outcomes: report.outcomes,
            rejected: report.rejected,
            marked: report.marked,
            problem: report.problem,
            done: report.done,
        }),
    )
        .into_response())
}

/// The fields of an upload form, with its files saved in a temporary directory.
struct Upload {
    csrf: String,
    holder: String,
    /// The catalog file, when one was sent.
    catalog: Option<PathBuf>,
    files: Vec<PathBuf>,
    /// Where the files are; removed when the upload is dropped.
    dir: tempfile::TempDir,
}

/// A file name from a browser, reduced to its last component of safe characters, so nothing is
/// written outside the upload's directory.
fn safe_file_name(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next()?.trim();
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|'))
        .collect();
    (!cleaned.is_empty() && cleaned != "." && cleaned != "..").then_some(cleaned)
}

async fn read_upload(mut multipart: Multipart) -> Result<Upload, String> {
    let mut upload = Upload {
        csrf: String::new(),
        holder: String::new(),
        catalog: None,
        files: Vec::new(),
        dir: tempfile::tempdir().map_err(|e| e.to_string())?,
    };
    while let Some(field) = multipart.next_field().await.map_err(|e| e.to_string())? {
        let name = field.name().unwrap_or_default().to_owned();
        match name.as_str() {
            "csrf" => upload.csrf = field.text().await.map_err(|e| e.to_string())?,
            "holder" => upload.holder = field.text().await.map_err(|e| e.to_string())?,
            "files" | "catalog" => {
                let Some(file_name) = field.file_name().and_then(safe_file_name) else {
                    continue;
                };
                let bytes = field.bytes().await.map_err(|e| e.to_string())?;
                if bytes.is_empty() {
                    continue;
                }
                let path = upload.dir.path().join(&file_name);
                std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
                if name == "catalog" {
                    upload.catalog = Some(path);
                } else {
                    upload.files.push(path);
                }
            }
            _ => {}
        }
    }
    Ok(upload)
}

fn outcome_rows(outcomes: &[library::IngestOutcome], t: &Texts) -> Vec<OutcomeRow> {
    outcomes
        .iter()
        .map(|o| OutcomeRow {
            id: o.work_id,
            external_id: o.external_id.clone(),
            title: o.title.clone(),
            outcome: match o.outcome {
                copytrace_store::WriteOutcome::Created => t.created_work,
                copytrace_store::WriteOutcome::Updated => t.updated_work,
                copytrace_store::WriteOutcome::Unchanged => t.unchanged_work,
            },
        })
        .collect()
}

/// Stores the uploaded work files (or imports the uploaded catalog) and lists what became of
/// each.
async fn upload(
    State(state): State<WebState>,
    visitor: Visitor,
    multipart: Multipart,
) -> Result<Response, Response> {
    visitor.enter(Area::Library)?;
    let t = visitor.t;
    let upload = read_upload(multipart)
        .await
        .map_err(|problem| visitor.bad_request(&problem))?;
    visitor.check_form(&upload.csrf)?;
    let store = state.store.as_ref();
    let holder = match visitor.tenant() {
        Some(own) => {
            holders::get(store, own)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?
                .name
        }
        None if upload.holder.trim().is_empty() => holders::DEFAULT_RIGHTS_HOLDER.to_owned(),
        None => upload.holder.trim().to_owned(),
    };
    let refused = |problem: String| Report {
        problem: Some(problem),
        ..Report::default()
    };
    let mut redis = match &state.redis {
        Some((url, prefix)) => {
            Some(copytrace_service::index::open_redis_index(url, prefix).map_err(failure)?)
        }
        None => None,
    };
    let config = FingerprintConfig::default();
    let report = if let Some(catalog_path) = &upload.catalog {
        // A catalog names each row's holder: only staff may import one.
        if visitor.tenant().is_some() {
            return Err(visitor.forbidden());
        }
        match catalog::import_catalog(store, catalog_path, redis.as_mut(), &config, &NoProgress)
            .await
        {
            Ok(imported) => Report {
                outcomes: outcome_rows(&imported.imported, t),
                rejected: imported
                    .rejected
                    .iter()
                    .map(|r| format!("{}:{}: {}", file_name(catalog_path), r.line, r.error))
                    .collect(),
                marked: imported.matching.candidates,
                done: true,
                problem: None,
            },
            Err(error) => refused(copytrace_service::error::one_line(&error)),
        }
    } else if upload.files.is_empty() {
        refused(t.choose_files.to_owned())
    } else {
        let checked = match library::check_library_files(&upload.files, &NoProgress) {
            Ok(checked) => checked,
            Err(error) => {
                let report = refused(copytrace_service::error::one_line(&error));
                return render(&state, &visitor, report, StatusCode::BAD_REQUEST).await;
            }
        };
        match library::add_paths(
            store,
            &holder,
            &checked,
            redis.as_mut(),
            &config,
            &NoProgress,
        )
        .await
        {
            Ok(added) => Report {
                outcomes: outcome_rows(&added.works, t),
                marked: added.matching.candidates,
                done: true,
                ..Report::default()
            },
            Err(error) if error.kind() == copytrace_service::ErrorKind::Invalid => {
                refused(copytrace_service::error::one_line(&error))
            }
            Err(error) => return Err(failure(error)),
        }
    };
    let status = if report.problem.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    render(&state, &visitor, report, status).await
}

fn file_name(path: &FilePath) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::safe_file_name;

    #[test]
    fn uploaded_names_stay_inside_the_upload_directory() {
        assert_eq!(safe_file_name("夜雨.txt").as_deref(), Some("夜雨.txt"));
        assert_eq!(
            safe_file_name("../../etc/passwd").as_deref(),
            Some("passwd")
        );
        assert_eq!(
            safe_file_name("C:\\books\\a.epub").as_deref(),
            Some("a.epub")
        );
        assert_eq!(safe_file_name("..").as_deref(), None);
        assert_eq!(safe_file_name("dir/").as_deref(), None);
        assert_eq!(safe_file_name("a\u{0}b.txt").as_deref(), Some("ab.txt"));
    }
}
