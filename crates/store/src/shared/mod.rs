//! The statements whose SQL is the same on both backends, written once.
//!
//! Many statements do not depend on the dialect: the same text, the same binds, the same row
//! type (generic over [`Columns`]) and the same conversion. Each is a function generic over
//! the database, run on the executor the backend passes: its pool for a method that is
//! nothing but the statement (`impl_store_by_section!` calls those directly), its transaction
//! for one step of a larger write. A statement that differs between SQLite and PostgreSQL,
//! even by a cast or a lock clause, stays in the backend that needs it. The files mirror the
//! backends' sections.
//!
//! The `where` clauses name what sqlx needs to bind and decode on a generic database; they are
//! met by both `sqlx::Sqlite` and `sqlx::Postgres`.

use sqlx::postgres::PgQueryResult;
use sqlx::sqlite::SqliteQueryResult;
use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Type};

use crate::rows::Columns;
use crate::rules::Referenced;
use crate::{Id, Result};

mod alerts;
mod evidence;
mod jobs;
mod library;
mod match_stream;
mod matches;
mod notices;
mod pages;
mod profiles;
mod reports;
mod schedules;
mod sending;
mod stats;
mod users;

pub(crate) use alerts::*;
pub(crate) use evidence::*;
pub(crate) use jobs::*;
pub(crate) use library::*;
pub(crate) use match_stream::*;
pub(crate) use matches::*;
pub(crate) use notices::*;
pub(crate) use pages::*;
pub(crate) use profiles::*;
pub(crate) use reports::*;
pub(crate) use schedules::*;
pub(crate) use sending::*;
pub(crate) use stats::*;
pub(crate) use users::*;

/// A database the shared statements run on: SQLite or PostgreSQL.
pub(crate) trait Db: Database<Arguments: IntoArguments<Self>> + Columns {
    /// How many rows a write changed (sqlx has no trait for it).
    fn rows_affected(result: &Self::QueryResult) -> u64;

    /// SQL for the UTC day (`YYYY-MM-DD`) of the timestamp column `column`.
    fn utc_day(column: &str) -> String;
}

impl Db for sqlx::Sqlite {
    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    fn utc_day(column: &str) -> String {
        // Integer microseconds since the epoch.
        format!("date({column} / 1000000, 'unixepoch')")
    }
}

impl Db for sqlx::Postgres {
    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }

    fn utc_day(column: &str) -> String {
        format!("to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
    }
}

/// `NotFound` naming the row unless it exists.
pub(crate) async fn exists<'e, DB, E>(executor: E, what: Referenced, id: Id) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let found: Option<i64> = sqlx::query_scalar(what.query())
        .bind(id)
        .fetch_optional(executor)
        .await?;
    found.map(|_| ()).ok_or_else(|| what.not_found(id))
}
