//! The match library on SQLite: a page's verdicts, matches with their evidence, and the removal
//! checks of infringing pages.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::{SqliteStore, micros};
use crate::rows::{MatchEvidenceRow, group_matches, match_listing_columns};
use crate::rules::{self, page_key, to_json, validate_matches};
use crate::shared;
use crate::{
    Id, InfringingPage, MatchFilter, MatchRecord, MatchStatus, NewDecision, PageCheck,
    PageCheckOutcome, PageVerdict, Result, StoreError, VerdictOutcome,
};
use sqlx::Sqlite;

/// The matches of a batch's pages before their new verdicts, those of withdrawn works left
/// out. Run for every batch matched: the subquery must use the partial index
/// `works_withdrawn` (migration 0021), or it reads every work's row, and `status` lies after
/// the work's text, in its overflow pages (tested in `super::tests`).
pub(super) const PREVIOUS_MATCHES: &str = "SELECT page_id, id, work_id, status, review, evidence_hash, removed_at \
     FROM matches WHERE page_id IN (SELECT value FROM json_each($1)) \
       AND work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn')";

/// A page as a verdict reads it: content hash, last seen, HTTP status, last check.
type PageState = (String, i64, i64, Option<i64>);

/// The ids as the JSON array `json_each` reads.
fn json_ids(ids: impl IntoIterator<Item = Id>) -> Result<String> {
    to_json(&ids.into_iter().collect::<Vec<Id>>(), "ids")
}

pub(super) async fn record_page_verdicts(
    store: &SqliteStore,
    verdicts: &[PageVerdict<'_>],
) -> Result<Vec<VerdictOutcome>> {
    for verdict in verdicts {
        validate_matches(verdict.page_id, verdict.matches)?;
    }
    let mut tx = store.write().await?;
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
    tx: &mut sqlx::Transaction<'static, Sqlite>,
    verdicts: &[PageVerdict<'_>],
) -> Result<Vec<VerdictOutcome>> {
    let ids = json_ids(verdicts.iter().map(|v| v.page_id))?;
    let pages: HashMap<Id, PageState> = sqlx::query_as::<_, (Id, String, i64, i64, Option<i64>)>(
        "SELECT id, content_hash, last_seen, http_status, availability_checked_at \
         FROM pages WHERE id IN (SELECT value FROM json_each($1))",
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
        false => {
            sqlx::query_scalar("SELECT id FROM works WHERE id IN (SELECT value FROM json_each($1))")
                .bind(json_ids(work_ids)?)
                .fetch_all(&mut **tx)
                .await?
                .into_iter()
                .collect()
        }
    };
    rules::check_references(
        verdicts,
        |page| pages.contains_key(&page),
        |work| known.contains(&work),
    )?;
    let mut previous = rules::by_page(
        sqlx::query_as::<_, (Id, Id, Id, String, String, String, Option<i64>)>(PREVIOUS_MATCHES)
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
                          WHERE page_id IN (SELECT value FROM json_each($1)) AND automatic = $2 \
                          GROUP BY page_id, work_id)",
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
    tx: &mut sqlx::Transaction<'static, Sqlite>,
    verdict: &PageVerdict<'_>,
    (last_seen, http_status, last_checked): (i64, i64, Option<i64>),
    rows: Vec<rules::PreviousRow<i64>>,
    decisions: Vec<rules::DecisionRow>,
) -> Result<VerdictOutcome> {
    let PageVerdict {
        page_id,
        content_hash,
        matches,
        at,
        ..
    } = *verdict;
    let at = micros(at);
    let (plan, outcome) = rules::judge_verdict(rows, decisions, &last_seen, matches, content_hash)?;

    for (m, review) in matches.iter().zip(&plan.reviews) {
        // Upsert keeps id, status and first_seen of a match found again.
        let match_id: i64 = sqlx::query_scalar(
            "INSERT INTO matches (page_id, work_id, score, coverage, containment, method, \
             first_seen, last_seen, copied_chars, evidence_hash, review, rights_holder_id) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10, w.rights_holder_id \
             FROM works w WHERE w.id = $2 \
             ON CONFLICT (page_id, work_id) DO UPDATE SET score = excluded.score, \
             coverage = excluded.coverage, containment = excluded.containment, \
             method = excluded.method, last_seen = excluded.last_seen, \
             copied_chars = excluded.copied_chars, evidence_hash = excluded.evidence_hash, \
             review = excluded.review \
             RETURNING id",
        )
        .bind(page_id)
        .bind(m.work_id)
        .bind(m.score)
        .bind(m.coverage)
        .bind(m.containment)
        .bind(&m.method)
        .bind(at)
        .bind(i64::from(m.copied_chars))
        .bind(content_hash)
        .bind(review.as_str())
        .fetch_optional(&mut **tx)
        .await?
        // The insert takes the match's holder from its work: a work that is gone (removed
        // while the page was matched) inserts no row, and the verdict is refused.
        .ok_or_else(|| StoreError::NotFound(format!("work {}", m.work_id)))?;
        if plan.confirmed_now.contains(&m.work_id) {
            shared::log_gate_confirmations::<Sqlite>(
                tx,
                page_id,
                content_hash,
                std::iter::once((m.work_id, Some(match_id), m)),
                at,
            )
            .await?;
        }

        sqlx::query("DELETE FROM evidence WHERE match_id = $1")
            .bind(match_id)
            .execute(&mut **tx)
            .await?;
        for (ordinal, passage) in m.evidence.iter().enumerate() {
            sqlx::query(
                "INSERT INTO evidence (match_id, ordinal, page_start, page_end, work_start, \
                 work_end) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(match_id)
            .bind(ordinal as i64)
            .bind(i64::from(passage.page_start))
            .bind(i64::from(passage.page_end))
            .bind(i64::from(passage.work_start))
            .bind(i64::from(passage.work_end))
            .execute(&mut **tx)
            .await?;
        }
    }

    for id in &plan.delete {
        sqlx::query("DELETE FROM matches WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    for id in &plan.remove {
        sqlx::query("UPDATE matches SET status = 'removed', removed_at = $2 WHERE id = $1")
            .bind(id)
            .bind(last_seen)
            .execute(&mut **tx)
            .await?;
    }
    for id in &plan.reopen {
        sqlx::query("UPDATE matches SET status = 'open', removed_at = NULL WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    if let Some(check) = &plan.check {
        shared::record_verdict_check::<Sqlite>(
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
    tx: &mut sqlx::Transaction<'static, Sqlite>,
    verdicts: &[&PageVerdict<'_>],
) -> Result<()> {
    if verdicts.is_empty() {
        return Ok(());
    }
    let ids = json_ids(verdicts.iter().map(|v| v.page_id))?;
    sqlx::query(
        "DELETE FROM page_texts WHERE page_id IN (SELECT value FROM json_each($1)) \
         AND (content_hash = (SELECT p.content_hash FROM pages p WHERE p.id = page_texts.page_id) \
              OR content_hash NOT IN (SELECT m.evidence_hash FROM matches m \
                                      WHERE m.page_id = page_texts.page_id))",
    )
    .bind(&ids)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "DELETE FROM page_captures WHERE page_id IN (SELECT value FROM json_each($1)) \
         AND content_hash <> (SELECT p.content_hash FROM pages p WHERE p.id = page_captures.page_id) \
         AND content_hash NOT IN (SELECT m.evidence_hash FROM matches m \
                                  WHERE m.page_id = page_captures.page_id)",
    )
    .bind(&ids)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE pages SET matched_hash = content_hash WHERE id IN (SELECT value FROM json_each($1))")
        .bind(&ids)
        .execute(&mut **tx)
        .await?;
    let (based, unbased): (Vec<&&PageVerdict>, Vec<&&PageVerdict>) =
        verdicts.iter().partition(|v| v.basis.is_some());
    if !unbased.is_empty() {
        sqlx::query("DELETE FROM page_verdicts WHERE page_id IN (SELECT value FROM json_each($1))")
            .bind(json_ids(unbased.iter().map(|v| v.page_id))?)
            .execute(&mut **tx)
            .await?;
    }
    if !based.is_empty() {
        let rows: Vec<serde_json::Value> = based
            .iter()
            .filter_map(|v| {
                let basis = v.basis?;
                Some(serde_json::json!([
                    v.page_id,
                    v.content_hash,
                    basis.generation,
                    basis.matcher,
                    v.matches.len(),
                    micros(v.at),
                ]))
            })
            .collect();
        sqlx::query(
            "INSERT INTO page_verdicts (page_id, content_hash, generation, matcher, matches, \
             recorded_at) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
             json_extract(value, '$[2]'), json_extract(value, '$[3]'), \
             json_extract(value, '$[4]'), json_extract(value, '$[5]') FROM json_each($1) \
             WHERE true \
             ON CONFLICT (page_id) DO UPDATE SET content_hash = excluded.content_hash, \
             generation = excluded.generation, matcher = excluded.matcher, \
             matches = excluded.matches, recorded_at = excluded.recorded_at",
        )
        .bind(to_json(&rows, "verdict bases")?)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

pub(super) async fn list_matches(
    store: &SqliteStore,
    filter: &MatchFilter,
) -> Result<Vec<MatchRecord>> {
    // One statement (not one per match) so the listing is a consistent snapshot.
    let rows = sqlx::query_as::<_, MatchEvidenceRow<Sqlite>>(concat!(
        "SELECT ",
        match_listing_columns!(),
        " FROM matches m \
         JOIN pages p ON p.id = m.page_id \
         JOIN works w ON w.id = m.work_id \
         LEFT JOIN evidence e ON e.match_id = m.id \
         WHERE ($1 IS NULL OR w.rights_holder_id = $1) AND ($2 IS NULL OR m.work_id = $2) \
         ORDER BY p.url, w.external_id, m.id, e.ordinal"
    ))
    .bind(filter.rights_holder_id)
    .bind(filter.work_id)
    .fetch_all(&store.pool)
    .await?;

    shared::finish_match_listing(&store.pool, group_matches(rows)?, filter).await
}

pub(super) async fn set_match_status(
    store: &SqliteStore,
    match_id: Id,
    status: MatchStatus,
) -> Result<()> {
    rules::validate_review_status(status)?;
    // removed_at belongs to the removed status: any other status clears it.
    let done = sqlx::query(
        "UPDATE matches SET status = $2, \
         removed_at = CASE WHEN $2 = 'removed' THEN removed_at END WHERE id = $1",
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

pub(super) async fn decide_match(store: &SqliteStore, decision: &NewDecision) -> Result<Id> {
    let mut tx = store.write().await?;
    let id = shared::decide_in::<Sqlite>(&mut tx, decision).await?;
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn create_notice(store: &SqliteStore, notice: &crate::NewNotice) -> Result<Id> {
    let mut tx = store.write().await?;
    let id = shared::create_notice_in::<Sqlite>(&mut tx, notice).await?;
    tx.commit().await?;
    Ok(id)
}

pub(super) async fn set_notice_status(
    store: &SqliteStore,
    change: &crate::NoticeStatusChange,
) -> Result<()> {
    let mut tx = store.write().await?;
    shared::set_notice_status_in::<Sqlite>(&mut tx, change).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn refresh_notices(store: &SqliteStore, at: DateTime<Utc>) -> Result<u64> {
    let mut tx = store.write().await?;
    let moved = shared::refresh_notices_in::<Sqlite>(&mut tx, at).await?;
    tx.commit().await?;
    Ok(moved)
}

pub(super) async fn begin_notice_mail(
    store: &SqliteStore,
    mail: &crate::NewNoticeMail,
) -> Result<crate::MailClaim> {
    let mut tx = store.write().await?;
    let claim = shared::begin_notice_mail_in::<Sqlite>(&mut tx, mail).await?;
    tx.commit().await?;
    Ok(claim)
}

pub(super) async fn finish_notice_mail(store: &SqliteStore, end: &crate::MailEnd) -> Result<()> {
    let mut tx = store.write().await?;
    shared::finish_notice_mail_in::<Sqlite>(&mut tx, end).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn infringing_page(
    store: &SqliteStore,
    url: &str,
) -> Result<Option<InfringingPage>> {
    let (url, _) = page_key(url)?;
    let rows: Vec<rules::InfringingRow> = sqlx::query_as(
        "SELECT p.id, p.url, p.content_hash, p.etag, p.last_modified, m.work_id, \
         m.evidence_hash FROM pages p \
         JOIN matches m ON m.page_id = p.id AND m.review <> 'rejected' \
              AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn') \
         WHERE p.url = $1 ORDER BY m.work_id",
    )
    .bind(&url)
    .fetch_all(&store.pool)
    .await?;
    Ok(rules::group_infringing_pages(rows).pop())
}

pub(super) async fn record_page_check(
    store: &SqliteStore,
    check: &PageCheck,
) -> Result<PageCheckOutcome> {
    rules::validate_page_check(check)?;
    let checked_at = micros(check.checked_at);
    let removed = to_json(&check.removed, "removed works")?;
    let still_present = to_json(&check.still_present, "works still present")?;
    let mut tx = store.write().await?;
    let page: Option<Option<i64>> =
        sqlx::query_scalar("SELECT availability_checked_at FROM pages WHERE id = $1")
            .bind(check.page_id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(last_checked) = page else {
        return Err(StoreError::NotFound(format!("page {}", check.page_id)));
    };
    let mut outcome = PageCheckOutcome::default();
    if shared::append_check::<Sqlite>(&mut tx, check, checked_at, last_checked).await? {
        outcome.removed = sqlx::query(
            "UPDATE matches SET status = 'removed', removed_at = $3 \
             WHERE page_id = $1 AND status IN ('open', 'notice_sent') AND review <> 'rejected' \
               AND work_id IN (SELECT value FROM json_each($2))",
        )
        .bind(check.page_id)
        .bind(&removed)
        .bind(checked_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        outcome.reopened = sqlx::query(
            "UPDATE matches SET status = 'open', removed_at = NULL \
             WHERE page_id = $1 AND status = 'removed' AND review <> 'rejected' \
               AND work_id IN (SELECT value FROM json_each($2))",
        )
        .bind(check.page_id)
        .bind(&still_present)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // A copy seen online again was online then: exports show it still online yesterday.
        sqlx::query(
            "UPDATE matches SET last_seen = $3 \
             WHERE page_id = $1 AND last_seen < $3 \
               AND work_id IN (SELECT value FROM json_each($2))",
        )
        .bind(check.page_id)
        .bind(&still_present)
        .bind(checked_at)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(outcome)
}

pub(super) async fn gather_alert(
    store: &SqliteStore,
    target_id: Id,
    delivery_key: &str,
    at: DateTime<Utc>,
) -> Result<Option<crate::AlertDelivery>> {
    let mut tx = store.write().await?;
    let delivery = shared::gather_alert_in::<Sqlite>(&mut tx, target_id, delivery_key, at).await?;
    if delivery.is_some() {
        tx.commit().await?;
    }
    Ok(delivery)
}
