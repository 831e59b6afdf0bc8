//! The match library on PostgreSQL: a page's verdicts, matches with their evidence, and the
//! removal checks of infringing pages.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::{PostgresStore, stored, u32_to_i64};
use crate::rows::{MatchEvidenceRow, group_matches, match_listing_columns};
use crate::rules::{self, page_key, validate_matches};
use crate::shared;
use crate::{
    Id, InfringingPage, MatchFilter, MatchRecord, MatchStatus, NewDecision, PageCheck,
    PageCheckOutcome, PageVerdict, Result, StoreError, VerdictBasis, VerdictOutcome,
};
use sqlx::Postgres;

/// A page as a verdict reads it: content hash, last seen, HTTP status, last check.
type PageState = (String, DateTime<Utc>, i64, Option<DateTime<Utc>>);

pub(super) async fn record_page_verdicts(
    store: &PostgresStore,
    verdicts: &[PageVerdict<'_>],
) -> Result<Vec<VerdictOutcome>> {
    for verdict in verdicts {
        validate_matches(verdict.page_id, verdict.matches)?;
    }
    let mut tx = store.begin().await?;
    let mut outcomes = Vec::with_capacity(verdicts.len());
    for round in rules::distinct_page_runs(verdicts) {
        outcomes.extend(record_round_in(&mut tx, &verdicts[round]).await?);
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// Records the verdicts of distinct pages in the transaction `tx`, which the caller commits.
/// What they read (pages, works, previous matches, decisions) takes one statement each for
/// all of them, and so does what every verdict writes ([`finish_verdicts_in`]); a page runs
/// statements of its own only for its matches and for what its plan changes.
async fn record_round_in(
    tx: &mut sqlx::Transaction<'static, Postgres>,
    verdicts: &[PageVerdict<'_>],
) -> Result<Vec<VerdictOutcome>> {
    let ids: Vec<Id> = verdicts.iter().map(|v| v.page_id).collect();
    // Locking the pages serializes two recordings of the same page (at-least-once delivery
    // may run a match job twice); the second then replaces the first's verdict whole. They
    // are locked in the order of their ids, so two batches sharing pages wait for each other
    // instead of deadlocking.
    let pages: HashMap<Id, PageState> =
        sqlx::query_as::<_, (Id, String, DateTime<Utc>, i64, Option<DateTime<Utc>>)>(
            "SELECT id, content_hash, last_seen, http_status, availability_checked_at \
         FROM pages WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE",
        )
        .bind(&ids)
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .map(|(id, hash, last_seen, status, checked)| (id, (hash, last_seen, status, checked)))
        .collect();
    let work_ids = rules::works_of(verdicts);
    let known: HashSet<Id> = match work_ids.is_empty() {
        true => HashSet::new(),
        false => sqlx::query_scalar("SELECT id FROM works WHERE id = ANY($1)")
            .bind(&work_ids)
            .fetch_all(&mut **tx)
            .await?
            .into_iter()
            .collect(),
    };
    rules::check_references(
        verdicts,
        |page| pages.contains_key(&page),
        |work| known.contains(&work),
    )?;
    // The pages are locked, so their matches cannot change before the writes below.
    let mut previous = rules::by_page(
        sqlx::query_as::<_, (Id, Id, Id, String, String, String, Option<DateTime<Utc>>)>(
            "SELECT page_id, id, work_id, status, review, evidence_hash, removed_at FROM matches \
             WHERE page_id = ANY($1) \
               AND work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn')",
        )
        .bind(&ids)
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .map(|(page, id, work, status, review, hash, removed)| {
            (page, (id, work, status, review, hash, removed))
        }),
    );
    let mut decisions = rules::by_page(
        sqlx::query_as::<_, (Id, Id, String, String, i64)>(
            "SELECT page_id, work_id, decision, content_hash, copied_chars FROM match_decisions \
             WHERE id IN (SELECT max(id) FROM match_decisions \
                          WHERE page_id = ANY($1) AND automatic = $2 GROUP BY page_id, work_id)",
        )
        .bind(&ids)
        .bind(false)
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .map(|(page, work, decision, hash, chars)| (page, (work, decision, hash, chars))),
    );

    let mut outcomes = Vec::with_capacity(verdicts.len());
    let mut recorded = Vec::with_capacity(verdicts.len());
    for verdict in verdicts {
        let (current_hash, last_seen, http_status, last_checked) = &pages[&verdict.page_id];
        if *current_hash != verdict.content_hash {
            // The page changed while it was matched: its newer text gets a verdict of its own.
            outcomes.push(VerdictOutcome::default());
            continue;
        }
        let page = (*last_seen, *http_status, *last_checked);
        let rows = previous.remove(&verdict.page_id).unwrap_or_default();
        let decided = decisions.remove(&verdict.page_id).unwrap_or_default();
        outcomes.push(record_verdict_in(tx, verdict, page, rows, decided).await?);
        recorded.push(verdict);
    }
    finish_verdicts_in(tx, &recorded).await?;
    Ok(outcomes)
}

/// Writes what one page's verdict changes of its own (its matches with their evidence, its
/// previous matches, a removal check), judged from what [`record_round_in`] read of the page
/// (`page`: last seen, HTTP status, last check), in the transaction `tx`.
async fn record_verdict_in(
    tx: &mut sqlx::Transaction<'static, Postgres>,
    verdict: &PageVerdict<'_>,
    (last_seen, http_status, last_checked): (DateTime<Utc>, i64, Option<DateTime<Utc>>),
    rows: Vec<rules::PreviousRow<DateTime<Utc>>>,
    decisions: Vec<rules::DecisionRow>,
) -> Result<VerdictOutcome> {
    let PageVerdict {
        page_id,
        content_hash,
        matches,
        at,
        ..
    } = *verdict;
    let at = stored(at);
    let work_ids: Vec<i64> = matches.iter().map(|m| m.work_id).collect();
    let (plan, outcome) = rules::judge_verdict(rows, decisions, &last_seen, matches, content_hash)?;

    if !matches.is_empty() {
        // Upsert keeps id, status and first_seen of a match found again.
        let ids: Vec<(i64, i64)> = sqlx::query_as(
            "INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
             copied_chars, review, first_seen, last_seen, evidence_hash, rights_holder_id) \
             SELECT $1, t.*, $2, $2, $9, w.rights_holder_id FROM UNNEST($3::bigint[], \
               $4::float8[], $5::float8[], $6::float8[], $7::text[], $8::bigint[], \
               $10::text[]) AS t (work_id) JOIN works w ON w.id = t.work_id \
             ON CONFLICT (page_id, work_id) DO UPDATE SET score = excluded.score, \
             coverage = excluded.coverage, containment = excluded.containment, \
             method = excluded.method, last_seen = excluded.last_seen, \
             copied_chars = excluded.copied_chars, evidence_hash = excluded.evidence_hash, \
             review = excluded.review \
             RETURNING work_id, id",
        )
        .bind(page_id)
        .bind(at)
        .bind(&work_ids)
        .bind(matches.iter().map(|m| m.score).collect::<Vec<f64>>())
        .bind(matches.iter().map(|m| m.coverage).collect::<Vec<f64>>())
        .bind(matches.iter().map(|m| m.containment).collect::<Vec<f64>>())
        .bind(
            matches
                .iter()
                .map(|m| m.method.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(u32_to_i64(matches.iter().map(|m| m.copied_chars)))
        .bind(content_hash)
        .bind(
            plan.reviews
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<&str>>(),
        )
        .fetch_all(&mut **tx)
        .await?;
        let match_of: HashMap<i64, i64> = ids.into_iter().collect();
        // The insert takes each match's holder from its work: a work that is gone (removed
        // while the page was matched) inserts no row. The whole verdict is refused, as the
        // foreign key would.
        if let Some(gone) = matches.iter().find(|m| !match_of.contains_key(&m.work_id)) {
            return Err(StoreError::NotFound(format!("work {}", gone.work_id)));
        }
        shared::log_gate_confirmations::<Postgres>(
            tx,
            page_id,
            content_hash,
            matches
                .iter()
                .filter(|m| plan.confirmed_now.contains(&m.work_id))
                .map(|m| (m.work_id, match_of.get(&m.work_id).copied(), m)),
            at,
        )
        .await?;
        let match_ids: Vec<i64> = match_of.values().copied().collect();

        // Evidence is replaced, not appended: all of it in two statements.
        sqlx::query("DELETE FROM evidence WHERE match_id = ANY($1)")
            .bind(&match_ids)
            .execute(&mut **tx)
            .await?;
        let passages = matches.iter().flat_map(|m| {
            let match_id = match_of[&m.work_id];
            m.evidence
                .iter()
                .enumerate()
                .map(move |(ordinal, passage)| (match_id, ordinal as i64, *passage))
        });
        let mut columns: [Vec<i64>; 6] = Default::default();
        for (match_id, ordinal, passage) in passages {
            for (column, value) in columns.iter_mut().zip([
                match_id,
                ordinal,
                i64::from(passage.page_start),
                i64::from(passage.page_end),
                i64::from(passage.work_start),
                i64::from(passage.work_end),
            ]) {
                column.push(value);
            }
        }
        if !columns[0].is_empty() {
            let [
                match_id,
                ordinal,
                page_start,
                page_end,
                work_start,
                work_end,
            ] = columns;
            sqlx::query(
                "INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, \
                 work_end) SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], \
                 $4::bigint[], $5::bigint[], $6::bigint[])",
            )
            .bind(match_id)
            .bind(ordinal)
            .bind(page_start)
            .bind(page_end)
            .bind(work_start)
            .bind(work_end)
            .execute(&mut **tx)
            .await?;
        }
    }

    if !plan.delete.is_empty() {
        sqlx::query("DELETE FROM matches WHERE id = ANY($1)")
            .bind(&plan.delete)
            .execute(&mut **tx)
            .await?;
    }
    if !plan.remove.is_empty() {
        sqlx::query("UPDATE matches SET status = 'removed', removed_at = $2 WHERE id = ANY($1)")
            .bind(&plan.remove)
            .bind(last_seen)
            .execute(&mut **tx)
            .await?;
    }
    if !plan.reopen.is_empty() {
        sqlx::query("UPDATE matches SET status = 'open', removed_at = NULL WHERE id = ANY($1)")
            .bind(&plan.reopen)
            .execute(&mut **tx)
            .await?;
    }
    if let Some(check) = &plan.check {
        shared::record_verdict_check::<Postgres>(
            tx,
            page_id,
            check,
            http_status,
            last_seen,
            last_checked,
        )
        .await?;
    }
    Ok(outcome)
}

/// What every verdict of a round writes, in one statement each for all of `verdicts` (the
/// pages' current texts, checked by [`record_round_in`]): earlier texts and captures no
/// evidence points into any more are let go, the texts are marked as matched, and the
/// verdicts' bases are kept (or forgotten, for a verdict without one).
async fn finish_verdicts_in(
    tx: &mut sqlx::Transaction<'static, Postgres>,
    verdicts: &[&PageVerdict<'_>],
) -> Result<()> {
    if verdicts.is_empty() {
        return Ok(());
    }
    let ids: Vec<Id> = verdicts.iter().map(|v| v.page_id).collect();
    sqlx::query(
        "DELETE FROM page_texts t USING pages p WHERE t.page_id = ANY($1) AND p.id = t.page_id \
         AND (t.content_hash = p.content_hash \
              OR t.content_hash NOT IN (SELECT m.evidence_hash FROM matches m \
                                        WHERE m.page_id = t.page_id))",
    )
    .bind(&ids)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "DELETE FROM page_captures c USING pages p WHERE c.page_id = ANY($1) AND p.id = c.page_id \
         AND c.content_hash <> p.content_hash \
         AND c.content_hash NOT IN (SELECT m.evidence_hash FROM matches m \
                                    WHERE m.page_id = c.page_id)",
    )
    .bind(&ids)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE pages SET matched_hash = content_hash WHERE id = ANY($1)")
        .bind(&ids)
        .execute(&mut **tx)
        .await?;
    let unbased: Vec<Id> = verdicts
        .iter()
        .filter(|v| v.basis.is_none())
        .map(|v| v.page_id)
        .collect();
    if !unbased.is_empty() {
        sqlx::query("DELETE FROM page_verdicts WHERE page_id = ANY($1)")
            .bind(&unbased)
            .execute(&mut **tx)
            .await?;
    }
    let based: Vec<(&PageVerdict, &VerdictBasis)> = verdicts
        .iter()
        .filter_map(|v| v.basis.map(|basis| (*v, basis)))
        .collect();
    if !based.is_empty() {
        sqlx::query(
            "INSERT INTO page_verdicts (page_id, content_hash, generation, matcher, matches, \
             recorded_at) SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::bigint[], \
             $4::text[], $5::bigint[], $6::timestamptz[]) \
             ON CONFLICT (page_id) DO UPDATE SET content_hash = excluded.content_hash, \
             generation = excluded.generation, matcher = excluded.matcher, \
             matches = excluded.matches, recorded_at = excluded.recorded_at",
        )
        .bind(based.iter().map(|(v, _)| v.page_id).collect::<Vec<Id>>())
        .bind(
            based
                .iter()
                .map(|(v, _)| v.content_hash)
                .collect::<Vec<&str>>(),
        )
        .bind(
            based
                .iter()
                .map(|(_, b)| b.generation)
                .collect::<Vec<i64>>(),
        )
        .bind(
            based
                .iter()
                .map(|(_, b)| b.matcher.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(
            based
                .iter()
                .map(|(v, _)| v.matches.len() as i64)
                .collect::<Vec<i64>>(),
        )
        .bind(
            based
                .iter()
                .map(|(v, _)| stored(v.at))
                .collect::<Vec<DateTime<Utc>>>(),
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

pub(super) async fn list_matches(
    store: &PostgresStore,
    filter: &MatchFilter,
) -> Result<Vec<MatchRecord>> {
    // One statement (not one per match) so the listing is a consistent snapshot.
    let rows = sqlx::query_as::<_, MatchEvidenceRow<Postgres>>(concat!(
        "SELECT ",
        match_listing_columns!(),
        " FROM matches m \
         JOIN pages p ON p.id = m.page_id \
         JOIN works w ON w.id = m.work_id \
         LEFT JOIN evidence e ON e.match_id = m.id \
         WHERE ($1::bigint IS NULL OR w.rights_holder_id = $1) \
           AND ($2::bigint IS NULL OR m.work_id = $2) \
         ORDER BY p.url, w.external_id, m.id, e.ordinal"
    ))
    .bind(filter.rights_holder_id)
    .bind(filter.work_id)
    .fetch_all(&store.pool)
    .await?;

    shared::finish_match_listing(&store.pool, group_matches(rows)?, filter).await
}

pub(super) async fn set_match_status(
    store: &PostgresStore,
    match_id: Id,
    status: MatchStatus,
) -> Result<()> {
    rules::validate_review_status(status)?;
    // removed_at belongs to the removed status: any other status clears it.
    let done = sqlx::query(
        "UPDATE matches SET status = $2, \
         removed_at = CASE WHEN $2::text = 'removed' THEN removed_at END WHERE id = $1",
    )
    .bind(match_id)
    .bind(status.as_str())
    .execute(&store.pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound(format!("match {match_id}")));
    }
    Ok(())
}

pub(super) async fn decide_match(store: &PostgresStore, decision: &NewDecision) -> Result<Id> {
    let mut tx = store.begin().await?;
    let id = shared::decide_in::<Postgres>(&mut tx, decision).await?;
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn create_notice(store: &PostgresStore, notice: &crate::NewNotice) -> Result<Id> {
    let mut tx = store.begin().await?;
    let id = shared::create_notice_in::<Postgres>(&mut tx, notice).await?;
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn set_notice_status(
    store: &PostgresStore,
    change: &crate::NoticeStatusChange,
) -> Result<()> {
    let mut tx = store.begin().await?;
    shared::set_notice_status_in::<Postgres>(&mut tx, change).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn refresh_notices(store: &PostgresStore, at: DateTime<Utc>) -> Result<u64> {
    let mut tx = store.begin().await?;
    let moved = shared::refresh_notices_in::<Postgres>(&mut tx, at).await?;
    tx.commit().await?;
    Ok(moved)
}

pub(super) async fn begin_notice_mail(
    store: &PostgresStore,
    mail: &crate::NewNoticeMail,
) -> Result<crate::MailClaim> {
    let mut tx = store.begin().await?;
    let claim = shared::begin_notice_mail_in::<Postgres>(&mut tx, mail).await?;
    tx.commit().await?;
    Ok(claim)
}

pub(super) async fn finish_notice_mail(store: &PostgresStore, end: &crate::MailEnd) -> Result<()> {
    let mut tx = store.begin().await?;
    shared::finish_notice_mail_in::<Postgres>(&mut tx, end).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn infringing_page(
    store: &PostgresStore,
    url: &str,
) -> Result<Option<InfringingPage>> {
    let (url, _) = page_key(url)?;
    let rows: Vec<rules::InfringingRow> = sqlx::query_as(
        "SELECT p.id, p.url, p.content_hash, p.etag, p.last_modified, m.work_id, \
         m.evidence_hash FROM pages p \
         JOIN matches m ON m.page_id = p.id AND m.review <> 'rejected' \
              AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
         WHERE md5(p.url) = md5($1) AND p.url = $1 ORDER BY m.work_id",
    )
    .bind(&url)
    .fetch_all(&store.pool)
    .await?;
    Ok(rules::group_infringing_pages(rows).pop())
}

pub(super) async fn record_page_check(
    store: &PostgresStore,
    check: &PageCheck,
) -> Result<PageCheckOutcome> {
    rules::validate_page_check(check)?;
    let checked_at = stored(check.checked_at);
    let mut tx = store.begin().await?;
    // Locking the page orders concurrent checks of it (and a match recording) one after
    // the other, so "is this the latest check" is answered against committed data.
    let page: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
        "SELECT availability_checked_at FROM pages WHERE id = $1 FOR NO KEY UPDATE",
    )
    .bind(check.page_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(last_checked) = page else {
        return Err(StoreError::NotFound(format!("page {}", check.page_id)));
    };
    let mut outcome = PageCheckOutcome::default();
    if shared::append_check::<Postgres>(&mut tx, check, checked_at, last_checked).await? {
        outcome.removed = sqlx::query(
            "UPDATE matches SET status = 'removed', removed_at = $3 \
             WHERE page_id = $1 AND status IN ('open', 'notice_sent') AND review <> 'rejected' \
               AND work_id = ANY($2)",
        )
        .bind(check.page_id)
        .bind(&check.removed)
        .bind(checked_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        outcome.reopened = sqlx::query(
            "UPDATE matches SET status = 'open', removed_at = NULL \
             WHERE page_id = $1 AND status = 'removed' AND review <> 'rejected' AND work_id = ANY($2)",
        )
        .bind(check.page_id)
        .bind(&check.still_present)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // A copy seen online again was online then: exports show it still online yesterday.
        sqlx::query(
            "UPDATE matches SET last_seen = $3 \
             WHERE page_id = $1 AND last_seen < $3 AND work_id = ANY($2)",
        )
        .bind(check.page_id)
        .bind(&check.still_present)
        .bind(checked_at)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(outcome)
}

pub(super) async fn gather_alert(
    store: &PostgresStore,
    target_id: Id,
    delivery_key: &str,
    at: DateTime<Utc>,
) -> Result<Option<crate::AlertDelivery>> {
    let mut tx = store.begin().await?;
    let delivery =
        shared::gather_alert_in::<Postgres>(&mut tx, target_id, delivery_key, at).await?;
    if delivery.is_some() {
        tx.commit().await?;
    }
    Ok(delivery)
}
