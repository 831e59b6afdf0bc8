//! The production backend: one PostgreSQL database shared by any number of processes.
//!
//! It keeps every rule of the SQLite backend (the crate documentation lists them, the contract
//! tests check them on both), with PostgreSQL's own means where SQLite serializes writers:
//!
//! * **Races are settled by row locks and unique indexes, not by one global write lock.**
//!   Transactions run at `READ COMMITTED`. A read-then-write locks the row it read
//!   (`FOR NO KEY UPDATE`, which, unlike `FOR UPDATE`, does not block the foreign-key checks of
//!   other writers); an insert that may race another uses `ON CONFLICT DO NOTHING` and, when it
//!   lost, reads the winner's row and starts over. Recording a page's matches locks the page
//!   first, so two recorders of one page run one after the other.
//! * **A schedule's cron tick is fired by a conditional `UPDATE`** of its `last_fired_at`
//!   (compare-and-set) in the transaction that inserts the run and its job: concurrent firers
//!   queue on the row lock, and each loser re-reads the winner's value and updates nothing.
//! * **Jobs are claimed with `FOR UPDATE SKIP LOCKED`**: concurrent claimers never wait for each
//!   other and never take the same job; a job one of them is taking is simply skipped.
//! * **Timestamps are `timestamptz`**, written as whole microseconds (finer parts are truncated
//!   before binding, as SQLite's integer microseconds do), so both backends return identical
//!   values. The clock of rows the caller does not timestamp is the process's, like SQLite's.
//! * **Bulk writes are one statement each**: a work's window fingerprints, its document
//!   fingerprints, a page's matches and all their evidence go in as `UNNEST` of one array per
//!   column, whatever the row count (no bind-parameter limit, one round trip). A binary `COPY`
//!   of a work's windows was measured instead: no faster for large works, and over TCP 4.5x
//!   slower for works of 1,000 windows, because sqlx 0.9.0 does not set `TCP_NODELAY` and the
//!   message ending each COPY waits about 40 ms for the server's delayed acknowledgement
//!   (docs/benchmarks.md, "Store bulk load").
//! * **Text keys sort bytewise** (`COLLATE "C"` in the schema); page URLs and job dedup keys are
//!   unique through `md5(value)` because a B-tree entry cannot hold a very long URL.
//! * **Only parameterized, static SQL** (`$n` binds), as in the SQLite backend.
//!
//! PostgreSQL cannot store the NUL character in `text` or `jsonb`; such a value is refused as
//! [`StoreError::Invalid`] (SQLite would store it; no Copytrace input path produces one).
//!
//! The backend is one file per part of the [`Store`](crate::Store) contract (`library`,
//! `pages`, `matches`, `jobs`, `schedules`, `users`); this one connects, migrates and holds what
//! they share. What is the same on SQLite is not here: the row types (`crate::rows`), the
//! decisions (`crate::rules`) and the statements whose SQL does not differ (`crate::shared`).

mod jobs;
mod library;
mod matches;
mod pages;
mod schedules;
mod users;

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Connection, PgConnection, Postgres, Transaction};

use crate::backend::impl_store_by_section;
use crate::rules::Referenced;
use crate::{Id, Result, StoreError, redact_url};

/// The PostgreSQL migrations, embedded at compile time so the binary needs no files beside it.
/// sqlx takes an advisory lock while migrating, so processes starting together are safe.
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Connections per process: enough for the concurrent claimers and writers of one worker
/// without exhausting the server's default 100 connections across a handful of processes.
const POOL_SIZE: u32 = 10;

/// How long a statement waits for a free connection, including reconnecting after the server
/// restarted, before failing.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// An insert that lost a race (or a digest collision) is retried this many times in all.
const ATTEMPTS: usize = 5;

/// [`Store`](crate::Store) on a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects to the database named by `url` (`postgres://` or `postgresql://`, with any of
    /// libpq's query parameters that sqlx understands, e.g. `?sslmode=disable`).
    ///
    /// One connection is opened right away, so a wrong host, password or database name fails
    /// here with the server's reason instead of at the first query; the database must exist and
    /// use the UTF8 encoding. The schema is not touched: call [`Store::migrate`](crate::Store::migrate).
    pub async fn connect(url: &str) -> Result<PostgresStore> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: redact_url(url),
            reason,
        };
        let scheme = url.split_once("://").map(|(scheme, _)| scheme);
        if !scheme.is_some_and(|s| {
            s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql")
        }) {
            return Err(invalid(
                "expected a PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
                    .to_owned(),
            ));
        }
        let mut options = PgConnectOptions::from_str(url)
            .map_err(|error| invalid(format!("it cannot be parsed: {error}")))?;
        if options.get_application_name().is_none() {
            options = options.application_name("copytrace");
        }

        let mut first = PgConnection::connect_with(&options).await?;
        let encoding: String = sqlx::query_scalar("SELECT current_setting('server_encoding')")
            .fetch_one(&mut first)
            .await?;
        first.close().await?;
        if encoding != "UTF8" {
            return Err(StoreError::Invalid(format!(
                "database {} uses the {encoding} encoding; Copytrace needs UTF8",
                redact_url(url)
            )));
        }

        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(|connection, _| {
                Box::pin(async move {
                    // The listing and statistics statements take optional filters
                    // (`$1 IS NULL OR …`): their plan depends on which are given. After five
                    // executions PostgreSQL may switch a prepared statement to one generic plan,
                    // which for a work's copies scanned every page (555 ms instead of 25) and
                    // gave the match list a tail of seconds under load. A plan per execution
                    // costs a millisecond or two of planning.
                    sqlx::query("SET plan_cache_mode = force_custom_plan")
                        .execute(connection)
                        .await?;
                    Ok(())
                })
            })
            .connect_lazy_with(options);
        tracing::debug!(url = %redact_url(url), "connected to PostgreSQL");
        Ok(PostgresStore { pool })
    }

    /// Closes every connection. Call it on shutdown; later calls on the store fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }
}

// ----- conversions -----

/// A timestamp as stored: whole microseconds, finer parts truncated (see the crate docs).
pub(crate) fn stored(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap_or(at)
}

/// The clock for rows the caller does not timestamp itself, at stored precision.
fn now() -> DateTime<Utc> {
    stored(Utc::now())
}

fn u32_to_i64(values: impl Iterator<Item = u32>) -> Vec<i64> {
    values.map(i64::from).collect()
}

/// `NotFound` naming the row unless it exists.
async fn exists(conn: &mut PgConnection, what: Referenced, id: Id) -> Result<()> {
    crate::shared::exists(conn, what, id).await
}

async fn migrate(store: &PostgresStore) -> Result<()> {
    MIGRATOR.run(&store.pool).await?;
    tracing::debug!("PostgreSQL schema is up to date");
    Ok(())
}

impl_store_by_section!(PostgresStore);

#[cfg(test)]
mod tests {
    #[test]
    fn the_migrations_mirror_the_sqlite_ones_one_for_one() {
        let steps = |migrator: &sqlx::migrate::Migrator| {
            migrator
                .iter()
                .map(|m| (m.version, m.description.to_string()))
                .collect::<Vec<_>>()
        };
        let postgres = steps(&super::MIGRATOR);
        assert_eq!(postgres, steps(&crate::sqlite::MIGRATOR));
        assert_eq!(
            postgres.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            (1..=30).collect::<Vec<i64>>()
        );
    }

    #[test]
    fn stored_timestamps_are_truncated_to_whole_microseconds() {
        use chrono::TimeZone;
        let at = chrono::Utc
            .timestamp_opt(1_780_000_000, 123_456_789)
            .unwrap();
        assert_eq!(super::stored(at).timestamp_subsec_nanos(), 123_456_000);
        let before_1970 = chrono::Utc.timestamp_opt(-10, 999_999_999).unwrap();
        assert_eq!(
            super::stored(before_1970).timestamp_subsec_nanos(),
            999_999_000,
            "truncated towards the past, as SQLite's integer microseconds are"
        );
    }

    /// Every connection of the pool plans each execution for its own parameters: with a
    /// generic plan, the copies of one work were found by scanning every page (555 ms instead of
    /// 25 ms on 100,000 pages), and the match list had a tail of seconds under load.
    #[tokio::test]
    async fn every_pooled_connection_plans_each_execution_for_its_parameters() {
        let url = std::env::var("COPYTRACE_TEST_POSTGRES_URL").expect(
            "COPYTRACE_TEST_POSTGRES_URL is not set: run ./scripts/test, which starts a \
             throwaway PostgreSQL cluster",
        );
        let store = super::PostgresStore::connect(&url).await.unwrap();
        let mut connections = Vec::new();
        for _ in 0..3 {
            connections.push(store.pool.acquire().await.unwrap());
        }
        for connection in &mut connections {
            let mode: String = sqlx::query_scalar("SHOW plan_cache_mode")
                .fetch_one(&mut **connection)
                .await
                .unwrap();
            assert_eq!(mode, "force_custom_plan");
        }
        drop(connections);
        store.close().await;
    }
}
