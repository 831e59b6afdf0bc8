//! How long operations tell their caller how far they are, without printing.
//!
//! The CLI draws `indicatif` bars, the web will show live progress, jobs save counts into their
//! run: all from the same operations, which only call a [`Progress`] they are handed.

/// Receives the progress of one long operation. Calls are cheap and may come often; an
/// implementation must not block.
pub trait Progress: Send + Sync {
    /// The number of steps the operation will take, once known.
    fn set_total(&self, _total: u64) {}
    /// `steps` more steps are done.
    fn advance(&self, _steps: u64) {}
    /// A one-line description of the current state ("12.5 pages/s, 40 queued").
    fn status(&self, _status: &str) {}
    /// A short label of what is being done ("crawling (2 failed), pages stored:").
    fn label(&self, _label: &str) {}
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
