//! The match library statements both backends share: infringing pages, removal checks and the
//! end of a verdict.

use sqlx::{Encode, Executor, FromRow, Type};

use super::{Db, exists};
use crate::rows::{ChapterRow, DecisionRow, PageCheckRow};
use crate::rules::{self, Referenced};
use crate::{
    Availability, DecisionRecord, Id, InfringingPage, MatchFilter, MatchRecord, NewDecision,
    NewMatch, PageCheck, PageCheckRecord, Result, Review, StoreError,
};

pub(crate) async fn infringing_pages<'e, DB, E>(
    executor: E,
    after_id: Id,
    limit: u32,
) -> Result<Vec<InfringingPage>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    rules::InfringingRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    // One statement, so a page and its works are one consistent snapshot.
    let rows: Vec<rules::InfringingRow> = sqlx::query_as(
        "SELECT p.id, p.url, p.content_hash, p.etag, p.last_modified, m.work_id, \
         m.evidence_hash \
         FROM (SELECT DISTINCT page_id FROM matches \
               WHERE review <> 'rejected' AND page_id > $1 \
                 AND work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
               ORDER BY page_id LIMIT $2) AS chosen \
         JOIN pages p ON p.id = chosen.page_id \
         JOIN matches m ON m.page_id = p.id AND m.review <> 'rejected' \
              AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
         ORDER BY p.id, m.work_id",
    )
    .bind(after_id)
    .bind(i64::from(limit))
    .fetch_all(executor)
    .await?;
    Ok(rules::group_infringing_pages(rows))
}

pub(crate) async fn page_checks<'e, DB, E>(executor: E, page_id: Id) -> Result<Vec<PageCheckRecord>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    PageCheckRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as::<_, PageCheckRow<DB>>(
        "SELECT id, page_id, run_id, checked_at, availability, http_status, detail \
         FROM page_checks WHERE page_id = $1 ORDER BY checked_at, id",
    )
    .bind(page_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(PageCheckRow::into_model)
    .collect()
}

/// Appends a removal check to a page's history (`run_id` `None` for a re-crawl's verdict).
pub(crate) async fn insert_page_check<'e, DB, E>(
    executor: E,
    page_id: Id,
    run_id: Option<Id>,
    checked_at: DB::Time,
    availability: Availability,
    http_status: Option<i64>,
    detail: &str,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query(
        "INSERT INTO page_checks (page_id, run_id, checked_at, availability, http_status, \
         detail) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(page_id)
    .bind(run_id)
    .bind(checked_at)
    .bind(availability.as_str())
    .bind(http_status)
    .bind(detail)
    .execute(executor)
    .await?;
    Ok(())
}

/// Sets a page's availability as seen by its latest check, at `checked_at`.
pub(crate) async fn set_availability<'e, DB, E>(
    executor: E,
    page_id: Id,
    availability: Availability,
    checked_at: DB::Time,
) -> Result<()>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query("UPDATE pages SET availability = $2, availability_checked_at = $3 WHERE id = $1")
        .bind(page_id)
        .bind(availability.as_str())
        .bind(checked_at)
        .execute(executor)
        .await?;
    Ok(())
}

/// The dialect-free part of [`crate::Store::record_page_check`], in the transaction `conn`
/// runs once the page is known to exist: checks the run, appends the check to the page's
/// history and, when it is the page's latest (`last_checked` is the page's latest check so
/// far), sets the page's availability. Returns whether it is the latest: only then do the
/// page's matches move.
pub(crate) async fn append_check<DB>(
    conn: &mut DB::Connection,
    check: &PageCheck,
    checked_at: DB::Time,
    last_checked: Option<DB::Time>,
) -> Result<bool>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some(run_id) = check.run_id {
        exists(&mut *conn, Referenced::Run, run_id).await?;
    }
    let status = check.http_status.map(i64::from);
    let (page_id, availability) = (check.page_id, check.availability);
    insert_page_check(
        &mut *conn,
        page_id,
        check.run_id,
        checked_at,
        availability,
        status,
        &check.detail,
    )
    .await?;
    // A check older than the page's latest one is history only: its verdict was superseded.
    let latest = rules::is_latest_check(last_checked, &checked_at);
    if latest {
        set_availability(&mut *conn, page_id, availability, checked_at).await?;
    }
    Ok(latest)
}

/// The end of [`crate::Store::record_page_matches`], once the page's matches are written: the
/// removal check the verdict amounts to (see `rules::plan_verdict`), letting go of earlier
/// texts (and their captures) no evidence points into any more, and marking the text as
/// matched. `last_seen` and
/// `last_checked` are the page's, as read at the start of the transaction `conn` runs.
pub(crate) async fn finish_verdict<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    content_hash: &str,
    check: Option<&(Availability, String)>,
    http_status: i64,
    last_seen: DB::Time,
    last_checked: Option<DB::Time>,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    if let Some((availability, detail)) = check {
        let (availability, status) = (*availability, Some(http_status));
        insert_page_check(
            &mut *conn,
            page_id,
            None,
            last_seen,
            availability,
            status,
            detail,
        )
        .await?;
        if rules::is_latest_check(last_checked, &last_seen) {
            set_availability(&mut *conn, page_id, availability, last_seen).await?;
        }
    }
    // Earlier texts no evidence points into any more are let go.
    sqlx::query(
        "DELETE FROM page_texts WHERE page_id = $1 AND (content_hash = $2 OR \
         content_hash NOT IN (SELECT evidence_hash FROM matches WHERE page_id = $1))",
    )
    .bind(page_id)
    .bind(content_hash)
    .execute(&mut *conn)
    .await?;
    super::prune_captures(&mut *conn, page_id, content_hash).await?;
    sqlx::query("UPDATE pages SET matched_hash = $2 WHERE id = $1")
        .bind(page_id)
        .bind(content_hash)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The end of [`crate::Store::list_matches`]: leaves out `licensed` matches unless the filter
/// asks for them, names the chapters each match copies (one chapter query per work) and lists
/// each page's aliases (one query for all pages: a work page lists every copy of its work, and
/// a query per copy made it wait for a pooled connection a hundred times under load).
pub(crate) async fn finish_match_listing<'e, DB, E>(
    executor: E,
    mut records: Vec<MatchRecord>,
    filter: &MatchFilter,
) -> Result<Vec<MatchRecord>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    ChapterRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    (Id, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    records.retain(|record| filter.selects(record));
    if records.is_empty() {
        return Ok(records);
    }
    let aliases = aliases_of_matched_pages(executor, filter).await?;
    let mut chapters = super::ChapterCache::unbounded();
    for record in &mut records {
        chapters.name_chapters(executor, record).await?;
        if let Some(urls) = aliases.get(&record.page_id) {
            record.aliases.clone_from(urls);
        }
    }
    Ok(records)
}

/// The aliases (in the order they were stored) of every page with a match of the filter's
/// holder and work: a superset of the pages a listing keeps, read in one statement.
async fn aliases_of_matched_pages<'e, DB, E>(
    executor: E,
    filter: &MatchFilter,
) -> Result<std::collections::HashMap<Id, Vec<String>>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (Id, String): for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let rows: Vec<(Id, String)> = sqlx::query_as(
        "SELECT a.alias_of, a.url FROM pages a \
         WHERE a.alias_of IS NOT NULL AND a.alias_of IN \
               (SELECT m.page_id FROM matches m JOIN works w ON w.id = m.work_id \
                WHERE (CAST($1 AS BIGINT) IS NULL OR w.rights_holder_id = $1) \
                  AND (CAST($2 AS BIGINT) IS NULL OR m.work_id = $2)) \
         ORDER BY a.alias_of, a.id",
    )
    .bind(filter.rights_holder_id)
    .bind(filter.work_id)
    .fetch_all(executor)
    .await?;
    let mut aliases: std::collections::HashMap<Id, Vec<String>> = std::collections::HashMap::new();
    for (page_id, url) in rows {
        aliases.entry(page_id).or_default().push(url);
    }
    Ok(aliases)
}

/// The latest decision a person took on each work's pair with page `page_id` (automatic
/// decisions of the certainty gate left out): what a new verdict on the page applies.
pub(crate) async fn persons_decisions<'e, DB, E>(
    executor: E,
    page_id: Id,
) -> Result<Vec<rules::DecisionRow>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    rules::DecisionRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
{
    Ok(sqlx::query_as(
        "SELECT work_id, decision, content_hash, copied_chars FROM match_decisions \
         WHERE id IN (SELECT max(id) FROM match_decisions \
                      WHERE page_id = $1 AND automatic = $2 GROUP BY work_id)",
    )
    .bind(page_id)
    .bind(false)
    .fetch_all(executor)
    .await?)
}

/// One decision on a page × work pair, as the audit trail keeps it.
pub(crate) struct DecisionEntry<'a, T> {
    pub page_id: Id,
    pub work_id: Id,
    pub match_id: Option<Id>,
    pub review: Review,
    pub automatic: bool,
    pub actor: &'a str,
    pub note: &'a str,
    pub content_hash: &'a str,
    pub copied_chars: i64,
    pub at: T,
}

/// Appends a decision to the audit trail; returns its id.
pub(crate) async fn insert_decision<'e, DB, E>(
    executor: E,
    entry: DecisionEntry<'_, DB::Time>,
) -> Result<Id>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    Ok(sqlx::query_scalar(
        "INSERT INTO match_decisions (page_id, work_id, match_id, decision, automatic, actor, \
         note, content_hash, copied_chars, decided_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
    )
    .bind(entry.page_id)
    .bind(entry.work_id)
    .bind(entry.match_id)
    .bind(entry.review.as_str())
    .bind(entry.automatic)
    .bind(entry.actor)
    .bind(entry.note)
    .bind(entry.content_hash)
    .bind(entry.copied_chars)
    .bind(entry.at)
    .fetch_one(executor)
    .await?)
}

/// Logs the certainty gate's confirmations of a verdict (`confirmed_now`, see
/// `rules::VerdictPlan`), given each work's match id.
pub(crate) async fn log_gate_confirmations<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    content_hash: &str,
    confirmed: impl Iterator<Item = (Id, Option<Id>, &NewMatch)>,
    at: DB::Time,
) -> Result<()>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    for (work_id, match_id, found) in confirmed {
        let note = format!(
            "score {:.2} with {} copied characters passed the certainty gate",
            found.score, found.copied_chars
        );
        insert_decision::<DB, _>(
            &mut *conn,
            DecisionEntry {
                page_id,
                work_id,
                match_id,
                review: Review::Confirmed,
                automatic: true,
                actor: AUTO_ACTOR,
                note: &note,
                content_hash,
                copied_chars: i64::from(found.copied_chars),
                at,
            },
        )
        .await?;
    }
    Ok(())
}

/// The actor of the certainty gate's decisions.
pub(crate) const AUTO_ACTOR: &str = "auto";

/// The dialect-free body of [`crate::Store::decide_match`], in the backend's write transaction.
pub(crate) async fn decide_in<DB>(conn: &mut DB::Connection, decision: &NewDecision) -> Result<Id>
where
    DB: Db,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    (i64, i64, String, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    DB::Time: for<'q> Encode<'q, DB> + Type<DB>,
{
    let actor = decision.actor.trim();
    if actor.is_empty() {
        return Err(StoreError::Invalid("a decision needs who took it".into()));
    }
    let (page_id, work_id, content_hash, copied_chars) =
        scoped_match::<DB, _>(&mut *conn, decision.match_id, decision.rights_holder_id).await?;
    sqlx::query("UPDATE matches SET review = $2 WHERE id = $1")
        .bind(decision.match_id)
        .bind(decision.review.as_str())
        .execute(&mut *conn)
        .await?;
    insert_decision::<DB, _>(
        &mut *conn,
        DecisionEntry {
            page_id,
            work_id,
            match_id: Some(decision.match_id),
            review: decision.review,
            automatic: false,
            actor,
            note: decision.note.trim(),
            content_hash: &content_hash,
            copied_chars,
            at: DB::time(decision.at),
        },
    )
    .await
}

/// Page, work, evidence hash and copied characters of match `match_id` if it is one of
/// `rights_holder_id`'s (any holder's when `None`); `NotFound` otherwise, the same answer as
/// for a match that does not exist.
async fn scoped_match<'e, DB, E>(
    executor: E,
    match_id: Id,
    rights_holder_id: Option<Id>,
) -> Result<(Id, Id, String, i64)>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    (i64, i64, String, i64): for<'r> FromRow<'r, DB::Row>,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    sqlx::query_as(
        "SELECT m.page_id, m.work_id, m.evidence_hash, m.copied_chars FROM matches m \
         JOIN works w ON w.id = m.work_id \
         WHERE m.id = $1 AND ($2 IS NULL OR w.rights_holder_id = $2)",
    )
    .bind(match_id)
    .bind(rights_holder_id)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("match {match_id}")))
}

/// [`crate::Store::match_decisions`].
pub(crate) async fn match_decisions<'e, DB, E>(
    executor: E,
    match_id: Id,
    rights_holder_id: Option<Id>,
) -> Result<Vec<DecisionRecord>>
where
    DB: Db,
    E: Executor<'e, Database = DB> + Copy,
    (i64, i64, String, i64): for<'r> FromRow<'r, DB::Row>,
    DecisionRow<DB>: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
{
    let (page_id, work_id, ..) =
        scoped_match::<DB, _>(executor, match_id, rights_holder_id).await?;
    sqlx::query_as::<_, DecisionRow<DB>>(
        "SELECT id, page_id, work_id, match_id, decision, automatic, actor, note, content_hash, \
         copied_chars, decided_at FROM match_decisions \
         WHERE page_id = $1 AND work_id = $2 ORDER BY id",
    )
    .bind(page_id)
    .bind(work_id)
    .fetch_all(executor)
    .await?
    .into_iter()
    .map(DecisionRow::into_model)
    .collect()
}
