//! The one place where a database URL becomes a storage backend.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use copytrace_store::postgres::PostgresStore;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Store, StoreError};

pub use copytrace_service::redact;

/// The database used when neither `--db` nor `COPYTRACE_DATABASE_URL` says otherwise.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://copytrace.db";

/// What `--db` accepts, for error messages.
const EXPECTED_URLS: &str =
    "expected sqlite://PATH (or sqlite::memory:) or postgres://USER@HOST/DB";

/// Whether a command may create the database it opens. Each command says which it is
/// ([`crate::cli::Command::open`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Open {
    /// The command can be the first one of a new library (`library add`, `crawl`, `migrate`,
    /// `serve`, …): a SQLite file that does not exist is created.
    Create,
    /// The command works on what earlier commands stored (`report`, `stats`, `export`, lists,
    /// decisions, …): a SQLite file that does not exist is refused, and not created, so that a
    /// mistyped `--db` is an error rather than an empty new database that reports nothing.
    /// PostgreSQL databases are never created, so it changes nothing there.
    #[default]
    Existing,
}

/// Opens the store named by `url` and applies pending migrations: `sqlite:` URLs open the
/// embedded SQLite backend, `postgres://` and `postgresql://` URLs the PostgreSQL backend.
/// `open` says whether a SQLite file that does not exist yet is created or refused.
pub async fn open_store(url: &str, open: Open) -> Result<Arc<dyn Store>> {
    let shown = redact(url);
    let Some((scheme, _)) = url.split_once(':') else {
        bail!("invalid database URL {shown:?}: {EXPECTED_URLS}");
    };
    let store: Arc<dyn Store> = match scheme.to_ascii_lowercase().as_str() {
        "sqlite" => {
            let connected = match open {
                Open::Create => SqliteStore::connect(url).await,
                Open::Existing => SqliteStore::connect_existing(url).await,
            };
            match connected {
                Err(StoreError::NoDatabase(path)) => bail!(
                    "database file {path} does not exist: check --db (or COPYTRACE_DATABASE_URL); \
                     to start a library there, run `copytrace library add` or `copytrace \
                     migrate` first"
                ),
                connected => {
                    Arc::new(connected.with_context(|| format!("cannot open database {shown}"))?)
                }
            }
        }
        "postgres" | "postgresql" => Arc::new(
            PostgresStore::connect(url)
                .await
                .with_context(|| format!("cannot open database {shown}"))?,
        ),
        other => bail!("invalid database URL {shown:?}: unknown scheme {other:?}, {EXPECTED_URLS}"),
    };
    store
        .migrate()
        .await
        .with_context(|| format!("cannot migrate database {shown}"))?;
    Ok(store)
}

/// [`open_store`] for a long-running process (`serve`, `worker`): while the database cannot be
/// reached (connections refused, a server starting up or shutting down, as during its
/// restart), it tries again for up to `patience`, as the process reconnects when the database
/// restarts while it runs. A bad URL, a wrong password or a failed migration fails at once.
pub async fn open_store_waiting(
    url: &str,
    open: Open,
    patience: Duration,
) -> Result<Arc<dyn Store>> {
    copytrace_service::error::retry_while(
        patience,
        unreachable,
        |error| format!("{error:#}"),
        || open_store(url, open),
    )
    .await
}

/// Whether `error` says the database server could not be reached (yet).
fn unreachable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<copytrace_store::StoreError>()
            .is_some_and(copytrace_store::StoreError::is_unreachable)
    })
}
