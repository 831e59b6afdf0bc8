//! The service's one error type, and `context` for saying what was being done when it failed.
//!
//! Callers of different kinds read an error differently: the CLI prints the cause chain on one
//! line, a job records it as the job's last error, the web turns it into a status code. So the
//! error keeps its causes as a chain (`source()`), each link saying what was being attempted
//! ("cannot store works/a.txt"), and [`ServiceError::kind`] tells, whatever the wrapping, whether
//! the caller asked for something that does not exist, gave bad input, or hit a fault.

use std::fmt;

use copytrace_crawler::CrawlError;
use copytrace_matcher::IndexError;
use copytrace_store::StoreError;

/// Result of a service operation.
pub type Result<T, E = ServiceError> = std::result::Result<T, E>;

/// What went wrong in a service operation.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A window index (in memory or Redis) failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A crawl stopped as a whole (not a single page's failure, which is reported per URL).
    /// Boxed: a crawl error is large and rare, and every result carries this enum.
    #[error(transparent)]
    Crawl(Box<CrawlError>),
    /// Reading or writing a file or stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// An export or report could not be written.
    #[error(transparent)]
    Analytics(#[from] copytrace_analytics::AnalyticsError),
    /// (De)serializing a job payload or a fingerprint failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A cron expression or time zone was refused.
    #[error(transparent)]
    Cron(#[from] copytrace_scheduler::cron::CronError),
    /// A trusted timestamp could not be had, or did not verify.
    #[error(transparent)]
    Timestamp(#[from] crate::timestamp::TimestampError),
    /// The input was refused: a bad URL, file, setting or state of the data. The message says
    /// what to change.
    #[error("{0}")]
    Invalid(String),
    /// Something the service relies on is not in the state it needs (a Redis index not built
    /// from the library, a task that panicked). The message says what to do.
    #[error("{0}")]
    Unavailable(String),
    /// An error with what was being done when it happened.
    #[error("{context}")]
    Context {
        /// What was being attempted.
        context: String,
        /// Why it failed.
        #[source]
        source: Box<ServiceError>,
    },
}

impl From<CrawlError> for ServiceError {
    fn from(error: CrawlError) -> Self {
        ServiceError::Crawl(Box::new(error))
    }
}

/// How a caller should treat an error, whatever context wraps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The thing asked for does not exist (HTTP 404).
    NotFound,
    /// The request was refused as invalid (HTTP 400, exit code 1 with the reason).
    Invalid,
    /// A fault of the system or a service it depends on (HTTP 500/503; retry later).
    Internal,
}

impl ServiceError {
    /// A refusal of bad input.
    pub fn invalid(message: impl Into<String>) -> Self {
        ServiceError::Invalid(message.into())
    }

    /// A dependency not in the state the operation needs.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ServiceError::Unavailable(message.into())
    }

    /// Whether this is worth waiting out at a process's start: the database or Redis cannot be
    /// reached (restarting), or a shared index is being built or updated by another process.
    pub fn is_passing(&self) -> bool {
        match self {
            ServiceError::Context { source, .. } => source.is_passing(),
            ServiceError::Store(error) => error.is_unreachable(),
            // Redis could not be reached (a node restarting) or refused the command: waited
            // out with the reason logged, since from here the two look the same.
            ServiceError::Unavailable(_) | ServiceError::Index(IndexError::Backend(_)) => true,
            _ => false,
        }
    }

    /// Whether the innermost cause is a missing row, refused input, or a fault.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ServiceError::Context { source, .. } => source.kind(),
            ServiceError::Store(StoreError::NotFound(_)) => ErrorKind::NotFound,
            ServiceError::Store(StoreError::Invalid(_) | StoreError::InvalidUrl { .. })
            | ServiceError::Invalid(_)
            | ServiceError::Timestamp(crate::timestamp::TimestampError::Settings(_))
            | ServiceError::Cron(_) => ErrorKind::Invalid,
            _ => ErrorKind::Internal,
        }
    }
}

/// Adds what was being done to an error, as `anyhow::Context` does, but typed.
pub trait Context<T> {
    /// Wraps the error with `context`.
    fn context(self, context: impl fmt::Display) -> Result<T>;
    /// Wraps the error with the context `f` builds (only when there is an error).
    fn with_context<C: fmt::Display>(self, f: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Into<ServiceError>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl fmt::Display) -> Result<T> {
        self.map_err(|error| ServiceError::Context {
            context: context.to_string(),
            source: Box::new(error.into()),
        })
    }

    fn with_context<C: fmt::Display>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|error| ServiceError::Context {
            context: f().to_string(),
            source: Box::new(error.into()),
        })
    }
}

/// The error and its causes on one line, `: `-separated, as logs and job records show them. A
/// cause that only repeats the end of the message before it is left out.
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(cause) = next {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.ends_with(&text)) {
            parts.push(text);
        }
        next = cause.source();
    }
    parts.join(": ")
}

/// Runs `step` until it succeeds, fails with an error that is not [`ServiceError::is_passing`],
/// or `patience` runs out (the last error is returned): what a long-running process does with
/// the steps of its start, so that it starts when the database or the shared index is back
/// rather than exiting because it began while they restarted.
pub async fn patiently<T, F, Fut>(patience: std::time::Duration, step: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    retry_while(patience, ServiceError::is_passing, |e| one_line(e), step).await
}

/// Runs `step` until it succeeds, fails with an error for which `passing` is false, or
/// `patience` runs out (the last error is returned), pausing between attempts (250 ms, doubling
/// up to 5 s) and logging each passing error as `describe` words it. The one retry loop of a
/// process's start, whatever the error type of its step ([`patiently`] is it for the service's
/// own steps).
pub async fn retry_while<T, E, F, Fut>(
    patience: std::time::Duration,
    passing: impl Fn(&E) -> bool,
    describe: impl Fn(&E) -> String,
    mut step: F,
) -> std::result::Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, E>>,
{
    let deadline = std::time::Instant::now() + patience;
    let mut pause = std::time::Duration::from_millis(250);
    loop {
        match step().await {
            Err(error) if passing(&error) && std::time::Instant::now() + pause < deadline => {
                tracing::warn!("{}; trying again", describe(&error));
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(5));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_read_through_any_context() {
        let missing: Result<()> = Err(StoreError::NotFound("work 7".into()).into());
        let wrapped = missing.context("cannot show work 7").unwrap_err();
        assert_eq!(wrapped.kind(), ErrorKind::NotFound);
        assert_eq!(one_line(&wrapped), "cannot show work 7: work 7 not found");
        let bad = ServiceError::invalid("no seeds given");
        assert_eq!(bad.kind(), ErrorKind::Invalid);
        let io: std::result::Result<(), std::io::Error> = Err(std::io::Error::other("disk full"));
        assert_eq!(
            io.context("cannot write").unwrap_err().kind(),
            ErrorKind::Internal
        );
    }

    #[tokio::test]
    async fn a_passing_error_is_tried_again_until_patience_runs_out_and_no_other_is() {
        let calls = std::cell::Cell::new(0);
        let flaky = || {
            calls.set(calls.get() + 1);
            let call = calls.get();
            async move { if call < 3 { Err(call) } else { Ok(call) } }
        };
        let every_error_passes = |_: &u32| true;
        let patience = std::time::Duration::from_secs(5);
        assert_eq!(
            retry_while(patience, every_error_passes, u32::to_string, flaky).await,
            Ok(3)
        );
        calls.set(0);
        let none_passes = |_: &u32| false;
        assert_eq!(
            retry_while(patience, none_passes, u32::to_string, flaky).await,
            Err(1)
        );
        calls.set(0);
        let short = std::time::Duration::from_millis(300);
        assert_eq!(
            retry_while(short, every_error_passes, u32::to_string, flaky).await,
            Err(2),
            "a second pause would end after the deadline"
        );
    }
}
