//! Statistics: copies per work, site, day and rights holder, aggregated in SQL on both backends;
//! and the paginated listing of the matches behind them, filtered the same way.
//!
//! Every statistic counts the same copies: the matches selected by a [`StatsFilter`] (the
//! `counted` common table expression below), never those on licensed hosts or of withdrawn
//! works. The one dialect difference, turning a timestamp into its UTC day, is
//! [`Db::utc_day`].

use sqlx::{Encode, Executor, FromRow, Type};

use super::Db;
use crate::rows::{Columns, MatchEvidenceRow, StoredTime, group_matches, match_status_column};
use crate::rules::{to_u64, validate_stats_filter};
use crate::{
    CopyLifetime, DailyStats, FirstCopy, HolderStats, Id, ListingOrder, MatchFilter, MatchListing,
    Result, SiteStats, StatsFilter, WorkStats,
};

/// The matches a [`StatsFilter`] selects, as the common table expression `counted`, with the
/// page's site, the work's owner, the stored lifecycle state (`stored_status`) and the status
/// listings show (`status`). Parameters `$1`–`$15` are bound by [`bind_filter!`].
macro_rules! counted_matches {
    () => {
        concat!(
            filtered_matches!(),
            ", counted AS (SELECT * FROM f WHERE status NOT IN ('licensed', 'withdrawn')) "
        )
    };
}

/// The matches a [`StatsFilter`] selects, licensed and withdrawn ones included, as the common
/// table expression `f` (see [`counted_matches!`], which counts only the reported ones).
macro_rules! filtered_matches {
    () => {
        concat!(
            "WITH f AS (SELECT m.id, m.page_id, m.work_id, w.rights_holder_id, p.site_id, \
                    s.host, m.score, m.coverage, m.first_seen, m.last_seen, m.removed_at, \
                    m.status AS stored_status, m.review, ",
            match_status_column!(),
            selected_matches!(),
            ") "
        )
    };
}

/// The joins and conditions that select a [`StatsFilter`]'s matches (`$1`–`$15`, bound by
/// [`bind_filter!`]): matches `m` with their page `p`, work `w` and site `s`.
macro_rules! selected_matches {
    () => {
        " FROM matches m \
         JOIN pages p ON p.id = m.page_id \
         JOIN works w ON w.id = m.work_id \
         JOIN sites s ON s.id = p.site_id \
         WHERE ($1 IS NULL OR m.rights_holder_id = $1) \
           AND ($2 IS NULL OR m.work_id = $2) \
           AND ($3 IS NULL OR s.host = $3 OR s.host LIKE ('%.' || $3)) \
           AND ($4 IS NULL OR m.first_seen >= $4) \
           AND ($5 IS NULL OR m.first_seen < $5) \
           AND ($6 IS NULL OR m.score >= $6) \
           AND ($7 = '' OR m.status IN ($7, $8, $9, $10, $11)) \
           AND ($12 = '' OR m.review IN ($12, $13, $14, $15))"
    };
}

/// The values of `$1`–`$15` of [`counted_matches!`].
struct Binds<T> {
    rights_holder_id: Option<Id>,
    work_id: Option<Id>,
    site: Option<String>,
    since: Option<T>,
    until: Option<T>,
    min_score: Option<f64>,
    /// The stored states to keep, in five slots (`$7`–`$11`), unused ones empty; all empty
    /// keeps every state.
    statuses: [String; 5],
    /// The review states to keep, in four slots (`$12`–`$15`), the same way.
    reviews: [String; 4],
}

impl<T> Binds<T> {
    fn new<DB: Columns<Time = T>>(filter: &StatsFilter) -> Result<Self> {
        validate_stats_filter(filter)?;
        // Equality lists (`IN ($7, …)`) rather than one pattern: the planner estimates them
        // from the column's statistics, where a `LIKE` over a parameter looked like a handful
        // of rows and led it to plans that read every match of a holder one at a time.
        fn slots<const N: usize>(values: Vec<&str>) -> [String; N] {
            let mut slots: [String; N] = std::array::from_fn(|_| String::new());
            for (slot, value) in slots.iter_mut().zip(values) {
                *slot = value.to_owned();
            }
            slots
        }
        Ok(Self {
            rights_holder_id: filter.rights_holder_id,
            work_id: filter.work_id,
            site: filter.site.as_ref().map(|s| s.trim().to_ascii_lowercase()),
            since: filter.since.map(DB::time),
            until: filter.until.map(DB::time),
            min_score: filter.min_score,
            statuses: slots(filter.statuses.iter().map(|s| s.as_str()).collect()),
            reviews: slots(filter.reviews.iter().map(|r| r.as_str()).collect()),
        })
    }
}

/// Binds `$1`–`$15` of [`counted_matches!`] to `query`.
macro_rules! bind_filter {
    ($query:expr, $binds:expr) => {{
        let binds = $binds;
        let mut query = $query
            .bind(binds.rights_holder_id)
            .bind(binds.work_id)
            .bind(binds.site.clone())
            .bind(binds.since)
            .bind(binds.until)
            .bind(binds.min_score);
        for status in &binds.statuses {
            query = query.bind(status.clone());
        }
        for review in &binds.reviews {
            query = query.bind(review.clone());
        }
        query
    }};
}

#[derive(FromRow)]
pub(crate) struct WorkStatsRow<C: Columns> {
    work_id: i64,
    external_id: String,
    title: String,
    rights_holder_id: i64,
    published_at: Option<C::Time>,
    created_at: C::Time,
    pages: i64,
    sites: i64,
    best_score: f64,
    mean_score: f64,
    best_coverage: f64,
    first_seen: C::Time,
    last_seen: C::Time,
    online: i64,
    removed: i64,
}

pub(crate) async fn work_stats<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<WorkStats>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    WorkStatsRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    let binds = Binds::new::<DB>(filter)?;
    let query = sqlx::query_as::<_, WorkStatsRow<DB>>(concat!(
        counted_matches!(),
        "SELECT c.work_id, w.external_id, w.title, w.rights_holder_id, w.published_at, \
                w.created_at, COUNT(DISTINCT c.page_id) AS pages, \
                COUNT(DISTINCT c.site_id) AS sites, MAX(c.score) AS best_score, \
                AVG(c.score) AS mean_score, MAX(c.coverage) AS best_coverage, \
                MIN(c.first_seen) AS first_seen, MAX(c.last_seen) AS last_seen, \
                SUM(CASE WHEN c.stored_status = 'removed' THEN 0 ELSE 1 END) AS online, \
                SUM(CASE WHEN c.stored_status = 'removed' THEN 1 ELSE 0 END) AS removed \
         FROM counted c JOIN works w ON w.id = c.work_id \
         GROUP BY c.work_id, w.external_id, w.title, w.rights_holder_id, w.published_at, \
                  w.created_at \
         ORDER BY c.work_id"
    ));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(|row| {
            Ok(WorkStats {
                work_id: row.work_id,
                external_id: row.external_id,
                title: row.title,
                rights_holder_id: row.rights_holder_id,
                published_at: row.published_at.map(StoredTime::into_time).transpose()?,
                created_at: row.created_at.into_time()?,
                pages: to_u64(row.pages, "page count")?,
                sites: to_u64(row.sites, "site count")?,
                best_score: row.best_score,
                mean_score: row.mean_score,
                best_coverage: row.best_coverage,
                first_seen: row.first_seen.into_time()?,
                last_seen: row.last_seen.into_time()?,
                online: to_u64(row.online, "copy count")?,
                removed: to_u64(row.removed, "copy count")?,
            })
        })
        .collect()
}

#[derive(FromRow)]
pub(crate) struct SiteStatsRow<C: Columns> {
    host: String,
    pages: i64,
    works: i64,
    copies: i64,
    removed: i64,
    notice_sent: i64,
    first_seen: C::Time,
    last_seen: C::Time,
}

pub(crate) async fn site_stats<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<SiteStats>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    SiteStatsRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    let binds = Binds::new::<DB>(filter)?;
    let query = sqlx::query_as::<_, SiteStatsRow<DB>>(concat!(
        counted_matches!(),
        "SELECT c.host, COUNT(DISTINCT c.page_id) AS pages, COUNT(DISTINCT c.work_id) AS works, \
                COUNT(*) AS copies, \
                SUM(CASE WHEN c.stored_status = 'removed' THEN 1 ELSE 0 END) AS removed, \
                SUM(CASE WHEN c.stored_status = 'notice_sent' THEN 1 ELSE 0 END) AS notice_sent, \
                MIN(c.first_seen) AS first_seen, MAX(c.last_seen) AS last_seen \
         FROM counted c GROUP BY c.host ORDER BY c.host"
    ));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(|row| {
            Ok(SiteStats {
                host: row.host,
                pages: to_u64(row.pages, "page count")?,
                works: to_u64(row.works, "work count")?,
                copies: to_u64(row.copies, "copy count")?,
                removed: to_u64(row.removed, "copy count")?,
                notice_sent: to_u64(row.notice_sent, "copy count")?,
                first_seen: row.first_seen.into_time()?,
                last_seen: row.last_seen.into_time()?,
            })
        })
        .collect()
}

#[derive(FromRow)]
pub(crate) struct LifetimeRow<C: Columns> {
    host: String,
    work_id: i64,
    first_seen: C::Time,
    last_seen: C::Time,
    removed_at: Option<C::Time>,
}

pub(crate) async fn copy_lifetimes<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<(String, CopyLifetime)>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    LifetimeRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    let binds = Binds::new::<DB>(filter)?;
    let query = sqlx::query_as::<_, LifetimeRow<DB>>(concat!(
        counted_matches!(),
        "SELECT c.host, c.work_id, c.first_seen, c.last_seen, \
                CASE WHEN c.stored_status = 'removed' THEN c.removed_at END AS removed_at \
         FROM counted c ORDER BY c.host, c.first_seen, c.id"
    ));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(|row| {
            Ok((
                row.host,
                CopyLifetime {
                    work_id: row.work_id,
                    first_seen: row.first_seen.into_time()?,
                    last_seen: row.last_seen.into_time()?,
                    removed_at: row.removed_at.map(StoredTime::into_time).transpose()?,
                },
            ))
        })
        .collect()
}

pub(crate) async fn daily_stats<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<DailyStats>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (String, i64, i64, i64): for<'r> FromRow<'r, DB::Row>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    // Each event counts on its own day: a removal today of a copy first seen last month is
    // today's. So the date range applies to the days, not to when the copies were first seen.
    let every_day = StatsFilter {
        since: None,
        until: None,
        ..filter.clone()
    };
    let binds = Binds::new::<DB>(&every_day)?;
    let sql = format!(
        "{counted}, events AS ( \
           SELECT {match_day} AS day, 1 AS new_matches, 0 AS removals, 0 AS pages \
           FROM counted c \
           UNION ALL \
           SELECT {removal_day}, 0, 1, 0 FROM counted c \
           WHERE c.stored_status = 'removed' AND c.removed_at IS NOT NULL \
           UNION ALL \
           SELECT {page_day}, 0, 0, 1 FROM pages p JOIN sites s ON s.id = p.site_id \
           WHERE ($3 IS NULL OR s.host = $3 OR s.host LIKE ('%.' || $3)) \
             AND (($1 IS NULL AND $2 IS NULL) OR p.id IN (SELECT page_id FROM counted))) \
         SELECT day, SUM(new_matches) AS new_matches, SUM(removals) AS removals, \
                SUM(pages) AS pages \
         FROM events GROUP BY day ORDER BY day",
        counted = counted_matches!(),
        match_day = DB::utc_day("c.first_seen"),
        removal_day = DB::utc_day("c.removed_at"),
        page_day = DB::utc_day("p.first_seen"),
    );
    let since = filter.since.map(|t| t.date_naive().to_string());
    let until = filter.until.map(|t| {
        // `until` is exclusive: a day is in range when it starts before it.
        let day = t.date_naive();
        if t == day.and_time(chrono::NaiveTime::MIN).and_utc() {
            day.to_string()
        } else {
            day.succ_opt().unwrap_or(day).to_string()
        }
    });
    // Audited: `sql` is built from this module's literals and `Db::utc_day`'s, with every
    // value bound as a parameter.
    let query = sqlx::query_as::<_, (String, i64, i64, i64)>(sqlx::AssertSqlSafe(sql));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .filter(|(day, ..)| {
            since.as_ref().is_none_or(|s| day >= s) && until.as_ref().is_none_or(|u| day < u)
        })
        .map(|(day, new_matches, removals, pages)| {
            Ok(DailyStats {
                day,
                new_matches: to_u64(new_matches, "match count")?,
                removals: to_u64(removals, "removal count")?,
                pages_crawled: to_u64(pages, "page count")?,
            })
        })
        .collect()
}

pub(crate) async fn holder_stats<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<HolderStats>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, String, i64, i64, i64, i64, i64, i64, i64): for<'r> FromRow<'r, DB::Row>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    let binds = Binds::new::<DB>(filter)?;
    let query = sqlx::query_as::<_, (i64, String, i64, i64, i64, i64, i64, i64, i64)>(concat!(
        counted_matches!(),
        "SELECT c.rights_holder_id, h.name, COUNT(DISTINCT c.work_id), \
                COUNT(DISTINCT c.page_id), COUNT(DISTINCT c.site_id), COUNT(*), \
                SUM(CASE WHEN c.review = 'confirmed' THEN 1 ELSE 0 END), \
                SUM(CASE WHEN c.review = 'pending' THEN 1 ELSE 0 END), \
                SUM(CASE WHEN c.stored_status = 'removed' THEN 1 ELSE 0 END) \
         FROM counted c JOIN rights_holders h ON h.id = c.rights_holder_id \
         GROUP BY c.rights_holder_id, h.name ORDER BY c.rights_holder_id"
    ));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(
            |(id, name, works, pages, sites, copies, confirmed, pending, removed)| {
                Ok(HolderStats {
                    rights_holder_id: id,
                    name,
                    works_copied: to_u64(works, "work count")?,
                    pages: to_u64(pages, "page count")?,
                    sites: to_u64(sites, "site count")?,
                    copies: to_u64(copies, "copy count")?,
                    confirmed: to_u64(confirmed, "copy count")?,
                    pending: to_u64(pending, "copy count")?,
                    removed: to_u64(removed, "copy count")?,
                })
            },
        )
        .collect()
}

#[derive(FromRow)]
pub(crate) struct FirstCopyRow<C: Columns> {
    work_id: i64,
    external_id: String,
    host: String,
    published_at: Option<C::Time>,
    created_at: C::Time,
    first_seen: C::Time,
}

pub(crate) async fn first_copies<'e, DB, E>(
    executor: E,
    filter: &StatsFilter,
) -> Result<Vec<FirstCopy>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    FirstCopyRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    let binds = Binds::new::<DB>(filter)?;
    let query = sqlx::query_as::<_, FirstCopyRow<DB>>(concat!(
        counted_matches!(),
        "SELECT c.work_id, w.external_id, c.host, w.published_at, w.created_at, \
                MIN(c.first_seen) AS first_seen \
         FROM counted c JOIN works w ON w.id = c.work_id \
         GROUP BY c.work_id, w.external_id, c.host, w.published_at, w.created_at \
         ORDER BY c.work_id, c.host"
    ));
    bind_filter!(query, &binds)
        .fetch_all(executor)
        .await?
        .into_iter()
        .map(|row| {
            Ok(FirstCopy {
                work_id: row.work_id,
                external_id: row.external_id,
                host: row.host,
                published_at: row.published_at.map(StoredTime::into_time).transpose()?,
                created_at: row.created_at.into_time()?,
                first_seen: row.first_seen.into_time()?,
            })
        })
        .collect()
}

/// [`crate::Store::match_listing`]'s page: the matches of the filter (`$1`–`$15`), licensed
/// ones only when `$16` is true or `$17` names them, in the derived states `$17` lists (all when
/// empty), `$18` of them after the first `$19`. Evidence columns are NULL: a listing shows none.
///
/// One level of joins, not the `f` expression joined back to its tables: with the tables
/// joined twice, planning the statement (done for each execution, since its parameters decide
/// the plan) cost 12–20 ms, more than running it.
macro_rules! listing_page {
    ($order:literal) => {
        concat!(
            "SELECT * FROM (SELECT m.id, m.page_id, p.url AS page_url, p.title AS page_title, \
                    m.work_id, w.external_id AS work_external_id, w.title AS work_title, \
                    w.rights_holder_id, m.score, m.coverage, m.containment, m.copied_chars, \
                    m.method, ",
            match_status_column!(),
            ", m.review, m.first_seen, m.last_seen, m.removed_at, m.evidence_hash, \
                    CAST(NULL AS BIGINT) AS page_start, CAST(NULL AS BIGINT) AS page_end, \
                    CAST(NULL AS BIGINT) AS work_start, CAST(NULL AS BIGINT) AS work_end",
            selected_matches!(),
            ") f WHERE ($16 OR f.status <> 'licensed' OR $17 LIKE '%,licensed,%') \
               AND ($17 = '' OR $17 LIKE ('%,' || f.status || ',%')) \
             ORDER BY ",
            $order,
            " LIMIT $18 OFFSET $19"
        )
    };
}

/// [`crate::Store::match_listing`]: the filter, order and page in SQL, so a page of a million
/// matches reads about a page of rows (the listing indexes give the order).
pub(crate) async fn match_listing<'e, DB, E>(
    executor: E,
    filter: &MatchFilter,
    order: ListingOrder,
    offset: u64,
    limit: u32,
) -> Result<MatchListing>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    MatchEvidenceRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<f64>: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<DB::Time>: Encode<'q, DB> + Type<DB>,
{
    // The stored-state filter of `f` is left empty: a listing filters on the derived state
    // (`licensed`, `withdrawn`), as `MatchFilter::selects` does.
    let binds = Binds::new::<DB>(&StatsFilter {
        rights_holder_id: filter.rights_holder_id,
        work_id: filter.work_id,
        site: filter.site.clone(),
        since: filter.since,
        until: filter.until,
        statuses: Vec::new(),
        reviews: filter.reviews.clone(),
        min_score: filter.min_score,
    })?;
    let statuses = if filter.statuses.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        format!(",{},", names.join(","))
    };
    let page = match order {
        ListingOrder::Newest => {
            sqlx::query_as::<_, MatchEvidenceRow<DB>>(listing_page!("f.first_seen DESC, f.id DESC"))
        }
        ListingOrder::HighestScore => {
            sqlx::query_as::<_, MatchEvidenceRow<DB>>(listing_page!("f.score DESC, f.id"))
        }
    };
    let rows = bind_filter!(page, &binds)
        .bind(filter.include_licensed)
        .bind(statuses)
        // One more than the page, to tell whether another page follows.
        .bind(i64::from(limit) + 1)
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(executor)
        .await?;
    let mut matches = group_matches(rows)?;
    let more = matches.len() > limit as usize;
    matches.truncate(limit as usize);
    Ok(MatchListing { more, matches })
}
