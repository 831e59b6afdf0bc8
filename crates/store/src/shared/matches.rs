//! The match library statements both backends share: infringing pages, removal checks and the
//! end of a verdict.

use sqlx::{Encode, Executor, FromRow, Type};

use super::{Db, exists};
use crate::rows::{ChapterRow, DecisionRow, PageCheckRow};
use crate::rules::{self, Referenced};
use crate::{
    Availability, DecisionRecord, EvidencePassage, Id, InfringingPage, MatchFilter, MatchRecord,
    NewDecision, NewMatch, PageCheck, PageCheckRecord, Result, Review, StoreError, VerdictBasis,
    VerifiedTwin,
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

/// The removal check a verdict amounts to (see `rules::plan_verdict`), appended to page
/// `page_id`'s history and applied to the page when it is its latest. `last_seen` and
/// `last_checked` are the page's, as read at the start of the transaction `conn` runs.
pub(crate) async fn record_verdict_check<DB>(
    conn: &mut DB::Connection,
    page_id: Id,
    (availability, detail): &(Availability, String),
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
    insert_page_check(
        &mut *conn,
        page_id,
        None,
        last_seen,
        *availability,
        Some(http_status),
        detail,
    )
    .await?;
    if rules::is_latest_check(last_checked, &last_seen) {
        set_availability(&mut *conn, page_id, *availability, last_seen).await?;
    }
    Ok(())
}

/// A row of [`verified_twin`]: the twin and its verdict's size, then one of its matches with
/// one of its evidence passages (`NULL`s where it has none).
#[derive(FromRow)]
pub(crate) struct TwinRow {
    page_id: i64,
    generation: i64,
    verdict_matches: i64,
    match_id: Option<i64>,
    work_id: Option<i64>,
    score: Option<f64>,
    coverage: Option<f64>,
    containment: Option<f64>,
    copied_chars: Option<i64>,
    method: Option<String>,
    page_start: Option<i64>,
    page_end: Option<i64>,
    work_start: Option<i64>,
    work_end: Option<i64>,
}

/// [`crate::Store::verified_twin`]'s statement: one, so that the twin's basis, the library's
/// generation and the twin's matches are one snapshot.
///
/// The twin is looked up through `page_verdicts_by_text` (text, generation), and only then is
/// its page read (by id) to see that the verdict is still its current one: `CROSS JOIN` keeps
/// SQLite from starting at the pages with the text instead, which reads, for each, the columns
/// stored after its text (tested in `sqlite::tests`). The verdict's matches are the twin's rows
/// whose evidence points into this text and that the verdict saw (last seen since it was
/// recorded); a row it did not find but a removal check saw since is told apart by the count.
pub(crate) const VERIFIED_TWIN: &str = "WITH twin AS ( \
       SELECT v.page_id, v.content_hash, v.generation, v.matches, v.recorded_at \
       FROM page_verdicts v CROSS JOIN pages p \
       WHERE v.content_hash = $1 \
         AND v.generation = (SELECT generation FROM library_state WHERE id = 1) \
         AND v.page_id <> $2 AND v.matcher = $3 \
         AND p.id = v.page_id AND p.content_hash = v.content_hash \
         AND p.matched_hash = v.content_hash AND p.alias_of IS NULL \
       ORDER BY v.page_id LIMIT 1) \
     SELECT t.page_id, t.generation, t.matches AS verdict_matches, m.id AS match_id, \
       m.work_id, m.score, m.coverage, m.containment, m.copied_chars, m.method, \
       e.page_start, e.page_end, e.work_start, e.work_end \
     FROM twin t \
     LEFT JOIN matches m ON m.page_id = t.page_id AND m.evidence_hash = t.content_hash \
       AND m.last_seen >= t.recorded_at \
       AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
     LEFT JOIN evidence e ON e.match_id = m.id \
     ORDER BY m.work_id, e.ordinal";

/// [`crate::Store::verified_twin`].
pub(crate) async fn verified_twin<'e, DB, E>(
    executor: E,
    page_id: Id,
    content_hash: &str,
    matcher: &str,
) -> Result<Option<VerifiedTwin>>
where
    DB: Db,
    E: Executor<'e, Database = DB>,
    TwinRow: for<'r> FromRow<'r, DB::Row> + Send + Unpin,
    i64: for<'q> Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let rows: Vec<TwinRow> = sqlx::query_as(VERIFIED_TWIN)
        .bind(content_hash)
        .bind(page_id)
        .bind(matcher)
        .fetch_all(executor)
        .await?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let (twin, generation, size) = (first.page_id, first.generation, first.verdict_matches);
    let mut matches: Vec<NewMatch> = Vec::new();
    let mut last_match = None;
    for row in rows {
        let Some(match_id) = row.match_id else {
            continue;
        };
        if last_match != Some(match_id) {
            last_match = Some(match_id);
            let missing = || StoreError::Invalid(format!("match {match_id} lacks a column"));
            matches.push(NewMatch {
                work_id: row.work_id.ok_or_else(missing)?,
                score: row.score.ok_or_else(missing)?,
                coverage: row.coverage.ok_or_else(missing)?,
                containment: row.containment.ok_or_else(missing)?,
                copied_chars: rules::to_u32(
                    row.copied_chars.ok_or_else(missing)?,
                    "copied characters",
                )?,
                method: row.method.ok_or_else(missing)?,
                evidence: Vec::new(),
                auto_confirm: false,
            });
        }
        if let (Some(page_start), Some(page_end), Some(work_start), Some(work_end)) =
            (row.page_start, row.page_end, row.work_start, row.work_end)
            && let Some(m) = matches.last_mut()
        {
            m.evidence.push(EvidencePassage {
                page_start: rules::to_u32(page_start, "evidence offset")?,
                page_end: rules::to_u32(page_end, "evidence offset")?,
                work_start: rules::to_u32(work_start, "evidence offset")?,
                work_end: rules::to_u32(work_end, "evidence offset")?,
            });
        }
    }
    // Not exactly the verdict's matches (a row it did not find, one of a work withdrawn since
    // it was recorded): the page is matched instead.
    if i64::try_from(matches.len()).ok() != Some(size) {
        return Ok(None);
    }
    Ok(Some(VerifiedTwin {
        page_id: twin,
        basis: VerdictBasis {
            generation,
            matcher: matcher.to_owned(),
        },
        matches,
    }))
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
