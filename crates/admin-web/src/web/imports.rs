//! Library uploads running in the background, and how far each has come.
//!
//! **Why in the background.** An upload may carry a catalog of hundreds of novels (up to 512
//! MB): reading, fingerprinting and storing them takes minutes, longer than a browser or a proxy
//! waits for an answer. The upload request therefore only receives the files; the import runs
//! in a task of the process that received them, and the visitor is sent to its page, which
//! shows the progress the service functions report and, at the end, what became of each file.
//!
//! **What it promises.** An import is seen only by the tenant that started it (staff's imports
//! by staff, a rights holder's by that holder); anyone else gets 404, as for an import that does
//! not exist. Its id is random, so ids cannot be guessed either. Imports are kept in memory: a
//! restart of the process forgets them and abandons one that was running. Nothing of a file is
//! half-stored (each work is stored in one transaction) and importing the same files again is
//! idempotent (unchanged works are reported unchanged), so the remedy is to upload again. The
//! last [`KEPT_IMPORTS`] imports are kept; the oldest finished ones are forgotten first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use copytrace_service::Progress;
use copytrace_store::Id;

/// Imports remembered per process (finished ones are forgotten first).
pub const KEPT_IMPORTS: usize = 100;

/// What an import did, once it has finished.
#[derive(Default, Clone)]
pub(crate) struct ImportReport {
    /// One line per work: id, external id, title, and what became of it.
    pub outcomes: Vec<ImportedWork>,
    /// Catalog rows refused, each with its file, line and reason.
    pub rejected: Vec<String>,
    /// Stored pages marked for matching against the new and changed works.
    pub marked: u64,
    /// Why nothing was stored, when the upload was refused.
    pub problem: Option<String>,
}

/// One work an import created, updated or found unchanged.
#[derive(Clone)]
pub(crate) struct ImportedWork {
    pub id: Id,
    pub external_id: String,
    pub title: String,
    pub outcome: copytrace_store::WriteOutcome,
}

/// One import: who may see it, what it is doing, and its report once done.
pub(crate) struct Import {
    pub id: String,
    /// The tenant that started it (`None`: staff).
    pub tenant: Option<Id>,
    /// The rights holder the works go to ("catalog" for a catalog, which names its own).
    pub holder: String,
    pub started_at: DateTime<Utc>,
    /// Files received with the upload.
    pub files: usize,
    progress: ImportProgress,
    finished: Mutex<Option<(DateTime<Utc>, ImportReport)>>,
}

impl Import {
    /// The progress reporter the import's service calls write to.
    pub fn progress(&self) -> &ImportProgress {
        &self.progress
    }

    /// Records the import's end.
    pub fn finish(&self, report: ImportReport) {
        *self.finished.lock().unwrap_or_else(PoisonError::into_inner) = Some((Utc::now(), report));
        self.progress.running.store(false, Ordering::Release);
    }

    /// When it ended and what it did; `None` while it runs.
    pub fn finished(&self) -> Option<(DateTime<Utc>, ImportReport)> {
        self.finished
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Progress of one import, as [`copytrace_service`]'s functions report it.
#[derive(Default)]
pub(crate) struct ImportProgress {
    running: AtomicBool,
    total: AtomicU64,
    done: AtomicU64,
    label: Mutex<String>,
    status: Mutex<String>,
}

impl ImportProgress {
    /// The current step ("checking", "adding", …), steps done and steps in all (0: not known
    /// yet), and the last status line.
    pub fn snapshot(&self) -> (String, u64, u64, String) {
        (
            self.label
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            self.done.load(Ordering::Acquire),
            self.total.load(Ordering::Acquire),
            self.status
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        )
    }
}

impl Progress for ImportProgress {
    fn set_total(&self, total: u64) {
        // A new step starts counting again.
        self.done.store(0, Ordering::Release);
        self.total.store(total, Ordering::Release);
    }

    fn advance(&self, steps: u64) {
        self.done.fetch_add(steps, Ordering::AcqRel);
    }

    fn status(&self, status: &str) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status.to_owned();
    }

    fn label(&self, label: &str) {
        *self.label.lock().unwrap_or_else(PoisonError::into_inner) = label.to_owned();
    }
}

/// The imports of this process, newest last. Clones share them.
#[derive(Clone, Default)]
pub struct LibraryImports {
    imports: Arc<Mutex<VecDeque<Arc<Import>>>>,
}

impl LibraryImports {
    /// Registers a new running import of `files` files for `tenant`.
    pub(crate) fn start(&self, tenant: Option<Id>, holder: String, files: usize) -> Arc<Import> {
        let import = Arc::new(Import {
            id: random_id(),
            tenant,
            holder,
            started_at: Utc::now(),
            files,
            progress: ImportProgress {
                running: AtomicBool::new(true),
                ..ImportProgress::default()
            },
            finished: Mutex::new(None),
        });
        let mut imports = self.imports.lock().unwrap_or_else(PoisonError::into_inner);
        while imports.len() >= KEPT_IMPORTS {
            // The oldest finished import goes first; running ones only when all are running.
            let oldest_finished = imports
                .iter()
                .position(|i| !i.progress.running.load(Ordering::Acquire));
            imports.remove(oldest_finished.unwrap_or(0));
        }
        imports.push_back(import.clone());
        import
    }

    /// Import `id` when `tenant` may see it (its own), else `None`, as for an unknown id.
    pub(crate) fn get(&self, id: &str, tenant: Option<Id>) -> Option<Arc<Import>> {
        self.imports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|i| i.id == id && i.tenant == tenant)
            .cloned()
    }

    /// `tenant`'s imports, newest first.
    pub(crate) fn of(&self, tenant: Option<Id>) -> Vec<Arc<Import>> {
        self.imports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .rev()
            .filter(|i| i.tenant == tenant)
            .cloned()
            .collect()
    }
}

/// Random bits from the operating system, in hex: an import's id cannot be guessed from
/// another's.
fn random_id() -> String {
    copytrace_service::accounts::random_token()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_is_seen_by_its_own_tenant_only() {
        let imports = LibraryImports::default();
        let staff = imports.start(None, "catalog".into(), 3);
        let holder = imports.start(Some(7), "Holder".into(), 1);
        assert!(imports.get(&staff.id, None).is_some());
        assert!(imports.get(&staff.id, Some(7)).is_none());
        assert!(imports.get(&holder.id, Some(7)).is_some());
        assert!(imports.get(&holder.id, Some(8)).is_none());
        assert!(
            imports.get(&holder.id, None).is_none(),
            "staff see staff imports only"
        );
        assert_eq!(imports.of(Some(7)).len(), 1);
        assert_ne!(staff.id, holder.id);
    }

    #[test]
    fn progress_counts_each_step_from_zero() {
        let imports = LibraryImports::default();
        let import = imports.start(None, "h".into(), 2);
        let progress = import.progress();
        progress.label("checking");
        progress.set_total(2);
        progress.advance(2);
        assert_eq!(
            progress.snapshot(),
            ("checking".into(), 2, 2, String::new())
        );
        progress.label("adding");
        progress.set_total(2);
        progress.advance(1);
        assert_eq!(progress.snapshot(), ("adding".into(), 1, 2, String::new()));
        assert!(import.finished().is_none());
        import.finish(ImportReport::default());
        assert!(import.finished().is_some());
    }

    #[test]
    fn finished_imports_are_forgotten_before_running_ones() {
        let imports = LibraryImports::default();
        let running = imports.start(None, "h".into(), 1);
        let mut finished = Vec::new();
        for _ in 1..KEPT_IMPORTS {
            let import = imports.start(None, "h".into(), 1);
            import.finish(ImportReport::default());
            finished.push(import);
        }
        imports.start(None, "h".into(), 1);
        assert!(
            imports.get(&running.id, None).is_some(),
            "a running import is kept"
        );
        assert!(
            imports.get(&finished[0].id, None).is_none(),
            "the oldest finished one goes"
        );
        assert_eq!(imports.of(None).len(), KEPT_IMPORTS);
    }
}
