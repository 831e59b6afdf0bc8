//! The source library: uploading work files (text, HTML, Markdown, EPUB; any encoding `library
//! add` reads) or, for staff, a catalog with its files, as `copytrace library add` and `library
//! import` do: the same service calls, the same checks, the Redis index kept in step when one
//! is configured. A rights holder's uploads go into its own catalog.
//!
//! The upload request receives the files and starts their import in the background
//! ([`super::imports`]); the visitor is sent to the import's page, which shows its progress and
//! then what became of each file (created, updated, unchanged) or why the upload was refused.
//! Nothing is stored when a file of the upload cannot be read.

use std::path::{Path as FilePath, PathBuf};

use askama::Template;
use axum::Router;
use axum::extract::multipart::Multipart;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use copytrace_fingerprint::FingerprintConfig;
use copytrace_service::{catalog, holders, library};
use copytrace_store::Store;

use super::i18n::Texts;
use super::imports::{Import, ImportReport, ImportedWork};
use super::{Area, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route(
            "/library",
            get(library_page)
                .post(upload)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES)),
        )
        .route("/library/imports/{id}", get(import_page))
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

/// One import in the library page's list.
struct ImportLine {
    id: String,
    started: String,
    holder: String,
    files: usize,
    /// How it stands: running (with its progress), done, or refused.
    state: String,
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
    problem: Option<String>,
    /// The visitor's tenant's recent imports, newest first.
    imports: Vec<ImportLine>,
}

async fn library_page(
    State(state): State<WebState>,
    visitor: Visitor,
) -> Result<Response, Response> {
    visitor.enter(Area::Library)?;
    render(&state, &visitor, None, StatusCode::OK).await
}

async fn render(
    state: &WebState,
    visitor: &Visitor,
    problem: Option<String>,
    status: StatusCode,
) -> Result<Response, Response> {
    let holders = match visitor.tenant() {
        Some(_) => Vec::new(),
        None => holders::names(state.store.as_ref())
            .await
            .map_err(failure)?,
    };
    let t = visitor.t;
    let imports = state
        .imports
        .of(visitor.tenant())
        .iter()
        .map(|import| ImportLine {
            id: import.id.clone(),
            started: super::utc_seconds(import.started_at),
            holder: import.holder.clone(),
            files: import.files,
            state: import_state(import, t),
        })
        .collect();
    Ok((
        status,
        page(LibraryPage {
            t,
            viewer: visitor.viewer(),
            holders,
            may_import_catalog: visitor.tenant().is_none(),
            problem,
            imports,
        }),
    )
        .into_response())
}

/// How an import stands, in a few words.
fn import_state(import: &Import, t: &Texts) -> String {
    match import.finished() {
        Some((_, report)) if report.problem.is_some() => t.import_refused.to_owned(),
        Some((_, report)) => format!("{} ({})", t.import_done, report.outcomes.len()),
        None => {
            let (label, done, total, _) = import.progress().snapshot();
            if total > 0 {
                format!("{} {done}/{total}", step_name(&label, t))
            } else {
                step_name(&label, t).to_owned()
            }
        }
    }
}

/// The step the service reports, as the page names it.
fn step_name(label: &str, t: &Texts) -> &'static str {
    match label {
        "checking" => t.import_checking,
        "adding" => t.import_adding,
        _ => t.import_running,
    }
}

/// The fields of an upload form, with its files saved in a temporary directory.
pub(crate) struct Upload {
    pub csrf: String,
    pub holder: String,
    /// The catalog file, when one was sent.
    pub catalog: Option<PathBuf>,
    pub files: Vec<PathBuf>,
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

pub(crate) async fn read_upload(mut multipart: Multipart) -> Result<Upload, String> {
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

fn imported_works(outcomes: &[library::IngestOutcome]) -> Vec<ImportedWork> {
    outcomes
        .iter()
        .map(|o| ImportedWork {
            id: o.work_id,
            external_id: o.external_id.clone(),
            title: o.title.clone(),
            outcome: o.outcome,
        })
        .collect()
}

fn outcome_rows(works: &[ImportedWork], t: &Texts) -> Vec<OutcomeRow> {
    works
        .iter()
        .map(|o| OutcomeRow {
            id: o.id,
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

/// Receives an upload of work files (or a catalog with its files), starts importing it in the
/// background, and sends the visitor to the import's page.
async fn upload(
    State(state): State<WebState>,
    visitor: Visitor,
    multipart: Multipart,
) -> Result<Response, Response> {
    visitor.enter(Area::Library)?;
    let upload = read_upload(multipart)
        .await
        .map_err(|problem| visitor.bad_request(&problem))?;
    visitor.check_form(&upload.csrf)?;
    let holder = match visitor.tenant() {
        Some(own) => {
            holders::get(state.store.as_ref(), own)
                .await
                .map_err(|error| visitor.not_found_or_failure(error))?
                .name
        }
        None if upload.holder.trim().is_empty() => holders::DEFAULT_RIGHTS_HOLDER.to_owned(),
        None => upload.holder.trim().to_owned(),
    };
    if upload.catalog.is_some() {
        // A catalog names each row's holder: only staff may import one.
        if visitor.tenant().is_some() {
            return Err(visitor.forbidden());
        }
    } else if upload.files.is_empty() {
        let problem = Some(visitor.t.choose_files.to_owned());
        return render(&state, &visitor, problem, StatusCode::BAD_REQUEST).await;
    }
    let shown_holder = if upload.catalog.is_some() {
        visitor.t.catalog_holders.to_owned()
    } else {
        holder.clone()
    };
    let import = state
        .imports
        .start(visitor.tenant(), shown_holder, upload.files.len());
    let id = import.id.clone();
    tokio::spawn(async move {
        let report = run_import(&state, &upload, &holder, &import).await;
        import.finish(report);
        // The upload's files are removed here, when the import is done with them.
        drop(upload);
    });
    Ok(Redirect::to(&format!("/library/imports/{id}")).into_response())
}

/// Imports an upload's files (or catalog) into the library, reporting progress to `import`.
pub(crate) async fn run_import(
    state: &WebState,
    upload: &Upload,
    holder: &str,
    import: &Import,
) -> ImportReport {
    let refused = |error: copytrace_service::ServiceError| {
        if error.kind() != copytrace_service::ErrorKind::Invalid {
            tracing::error!(
                error = %copytrace_service::error::one_line(&error),
                "a library upload could not be imported"
            );
        }
        ImportReport {
            problem: Some(copytrace_service::error::one_line(&error)),
            ..ImportReport::default()
        }
    };
    let store: &dyn Store = state.store.as_ref();
    let mut redis = match &state.redis {
        Some((url, prefix)) => match copytrace_service::index::open_redis_index(url, prefix) {
            Ok(index) => Some(index),
            Err(error) => return refused(error),
        },
        None => None,
    };
    let config = FingerprintConfig::default();
    let progress = import.progress();
    if let Some(catalog_path) = &upload.catalog {
        return match catalog::import_uploaded_catalog(
            store,
            catalog_path,
            redis.as_mut(),
            &config,
            progress,
        )
        .await
        {
            Ok(imported) => ImportReport {
                outcomes: imported_works(&imported.imported),
                rejected: imported
                    .rejected
                    .iter()
                    .map(|r| format!("{}:{}: {}", file_name(catalog_path), r.line, r.error))
                    .collect(),
                marked: imported.matching.candidates,
                problem: None,
            },
            Err(error) => refused(error),
        };
    }
    let checked = match library::check_library_files(&upload.files, progress) {
        Ok(checked) => checked,
        Err(error) => return refused(error),
    };
    match library::add_paths(store, holder, &checked, redis.as_mut(), &config, progress).await {
        Ok(added) => ImportReport {
            outcomes: imported_works(&added.works),
            marked: added.matching.candidates,
            ..ImportReport::default()
        },
        Err(error) => refused(error),
    }
}

#[derive(Template)]
#[template(path = "web/library_import.html")]
struct ImportPage {
    t: &'static Texts,
    viewer: Viewer,
    started: String,
    holder: String,
    files: usize,
    /// While it runs: the step, steps done and in all (0: not known yet), and a status line.
    running: Option<(String, u64, u64, String)>,
    /// When it ended.
    finished: Option<String>,
    outcomes: Vec<OutcomeRow>,
    rejected: Vec<String>,
    marked: u64,
    problem: Option<String>,
}

/// One import's progress, then its outcome. Another tenant's import answers 404.
async fn import_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<String>,
) -> Result<Response, Response> {
    visitor.enter(Area::Library)?;
    let t = visitor.t;
    let Some(import) = state.imports.get(&id, visitor.tenant()) else {
        return Err(visitor.not_found());
    };
    let finished = import.finished();
    let running = match &finished {
        Some(_) => None,
        None => {
            let (label, done, total, status) = import.progress().snapshot();
            Some((step_name(&label, t).to_owned(), done, total, status))
        }
    };
    let (ended, report) = match finished {
        Some((at, report)) => (Some(super::utc_seconds(at)), report),
        None => (None, ImportReport::default()),
    };
    Ok((
        StatusCode::OK,
        page(ImportPage {
            t,
            viewer: visitor.viewer(),
            started: super::utc_seconds(import.started_at),
            holder: import.holder.clone(),
            files: import.files,
            running,
            finished: ended,
            outcomes: outcome_rows(&report.outcomes, t),
            rejected: report.rejected,
            marked: report.marked,
            problem: report.problem,
        }),
    )
        .into_response())
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
