//! The page library on PostgreSQL: crawled pages, their sites and validators, and the earlier
//! texts kept as evidence.

use chrono::{DateTime, Utc};
use sqlx::Postgres;

use super::{ATTEMPTS, PostgresStore, stored};
use crate::rules::{self, page_key};
use crate::shared;
use crate::{
    Id, NewPage, PageValidators, PageWrite, Result, StoreError, ValidatorScope, WriteOutcome,
};

pub(super) async fn upsert_page(store: &PostgresStore, page: &NewPage) -> Result<PageWrite> {
    let (url, host) = page_key(&page.url)?;
    let fetched_at = stored(page.fetched_at);
    let status = i64::from(page.http_status);
    for _ in 0..ATTEMPTS {
        let mut tx = store.begin().await?;
        let site = || sqlx::query_scalar::<_, i64>("SELECT id FROM sites WHERE host = $1");
        let site_id = match site().bind(&host).fetch_optional(&mut *tx).await? {
            Some(id) => id,
            None => {
                sqlx::query(
                    "INSERT INTO sites (host, created_at) VALUES ($1, $2) \
                     ON CONFLICT (host) DO NOTHING",
                )
                .bind(&host)
                .bind(fetched_at)
                .execute(&mut *tx)
                .await?;
                site().bind(&host).fetch_one(&mut *tx).await?
            }
        };

        let existing: Option<(i64, String)> = sqlx::query_as(
            "SELECT id, content_hash FROM pages WHERE md5(url) = md5($1) AND url = $1 \
             FOR NO KEY UPDATE",
        )
        .bind(&url)
        .fetch_optional(&mut *tx)
        .await?;
        let write = match existing {
            None => {
                let inserted: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO pages (site_id, url, title, text, content_hash, \
                     http_status, first_seen, last_seen, etag, last_modified) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) \
                     ON CONFLICT (md5(url)) DO NOTHING RETURNING id",
                )
                .bind(site_id)
                .bind(&url)
                .bind(&page.title)
                .bind(&page.text)
                .bind(&page.content_hash)
                .bind(status)
                .bind(fetched_at)
                .bind(&page.etag)
                .bind(&page.last_modified)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(id) = inserted else {
                    // A concurrent fetch of the same URL stored it first: start over.
                    tx.rollback().await?;
                    continue;
                };
                PageWrite {
                    id,
                    outcome: WriteOutcome::Created,
                }
            }
            Some((id, hash)) if hash == page.content_hash => {
                sqlx::query(
                    "UPDATE pages SET title = $2, http_status = $3, \
                     last_seen = GREATEST(last_seen, $4), etag = $5, last_modified = $6 \
                     WHERE id = $1",
                )
                .bind(id)
                .bind(&page.title)
                .bind(status)
                .bind(fetched_at)
                .bind(&page.etag)
                .bind(&page.last_modified)
                .execute(&mut *tx)
                .await?;
                PageWrite {
                    id,
                    outcome: WriteOutcome::Unchanged,
                }
            }
            Some((id, _)) => {
                // The text some evidence points into is kept before it is replaced.
                shared::keep_evidence_text(&mut *tx, id, fetched_at).await?;
                sqlx::query(
                    "UPDATE pages SET title = $2, text = $3, content_hash = $4, \
                     http_status = $5, last_seen = GREATEST(last_seen, $6), \
                     matched_hash = NULL, etag = $7, last_modified = $8, alias_of = NULL \
                     WHERE id = $1",
                )
                .bind(id)
                .bind(&page.title)
                .bind(&page.text)
                .bind(&page.content_hash)
                .bind(status)
                .bind(fetched_at)
                .bind(&page.etag)
                .bind(&page.last_modified)
                .execute(&mut *tx)
                .await?;
                shared::prune_captures(&mut *tx, id, &page.content_hash).await?;
                // Another text: the page is judged afresh, and so are the pages that were its aliases.
                shared::release_aliases(&mut *tx, id, &page.content_hash).await?;
                PageWrite {
                    id,
                    outcome: WriteOutcome::Updated,
                }
            }
        };
        if let Some(capture) = &page.capture {
            let (id, hash) = (write.id, page.content_hash.as_str());
            shared::save_capture::<Postgres>(&mut tx, id, hash, status, fetched_at, capture)
                .await?;
        }
        tx.commit().await?;
        return Ok(write);
    }
    // Only reachable when another stored URL has the same MD5 digest.
    Err(StoreError::Invalid(format!(
        "page URL {url:?} cannot be stored: its MD5 digest equals another stored URL's"
    )))
}

pub(super) async fn record_not_modified(
    store: &PostgresStore,
    url: &str,
    seen_at: DateTime<Utc>,
) -> Result<Option<Id>> {
    let (url, _) = page_key(url)?;
    Ok(sqlx::query_scalar(
        "UPDATE pages SET last_seen = GREATEST(last_seen, $2) \
         WHERE md5(url) = md5($1) AND url = $1 RETURNING id",
    )
    .bind(&url)
    .bind(stored(seen_at))
    .fetch_optional(&store.pool)
    .await?)
}

pub(super) async fn page_validators(
    store: &PostgresStore,
    scope: &ValidatorScope,
) -> Result<Vec<PageValidators>> {
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT p.url, p.etag, p.last_modified FROM pages p \
         JOIN sites s ON s.id = p.site_id \
         WHERE s.host = ANY($1) \
           AND (p.etag IS NOT NULL OR p.last_modified IS NOT NULL) \
           AND (NOT $2 OR EXISTS (SELECT 1 FROM matches m \
                WHERE m.page_id = p.id AND m.review <> 'rejected' \
                  AND m.work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn'))) \
         ORDER BY p.id LIMIT $3",
    )
    .bind(rules::validator_hosts(&scope.hosts))
    .bind(scope.infringing_only)
    .bind(i64::from(scope.limit))
    .fetch_all(&store.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(url, etag, last_modified)| PageValidators {
            url,
            etag,
            last_modified,
        })
        .collect())
}

pub(super) async fn mark_all_pages_unmatched(store: &PostgresStore) -> Result<u64> {
    // Rows are locked in id order, like a work update does, so the two cannot deadlock.
    let done = sqlx::query(
        "WITH matched AS ( \
           SELECT id FROM pages WHERE matched_hash IS NOT NULL ORDER BY id \
           FOR NO KEY UPDATE) \
         UPDATE pages SET matched_hash = NULL WHERE id IN (SELECT id FROM matched)",
    )
    .execute(&store.pool)
    .await?;
    Ok(done.rows_affected())
}

pub(super) async fn mark_pages_unmatched(store: &PostgresStore, ids: &[Id]) -> Result<u64> {
    // Rows are locked in id order, like a work update does, so the two cannot deadlock.
    let done = sqlx::query(
        "WITH chosen AS ( \
           SELECT id FROM pages WHERE id = ANY($1) AND matched_hash IS NOT NULL ORDER BY id \
           FOR NO KEY UPDATE) \
         UPDATE pages SET matched_hash = NULL WHERE id IN (SELECT id FROM chosen)",
    )
    .bind(ids)
    .execute(&store.pool)
    .await?;
    Ok(done.rows_affected())
}

pub(super) async fn mark_unsketched_pages_unmatched(
    store: &PostgresStore,
    version: u32,
) -> Result<u64> {
    let done = sqlx::query(
        "WITH chosen AS ( \
           SELECT p.id FROM pages p WHERE p.matched_hash IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM page_sketches s WHERE s.page_id = p.id \
                             AND s.version = $1 AND s.content_hash = p.content_hash) \
           ORDER BY p.id FOR NO KEY UPDATE) \
         UPDATE pages SET matched_hash = NULL WHERE id IN (SELECT id FROM chosen)",
    )
    .bind(i64::from(version))
    .execute(&store.pool)
    .await?;
    Ok(done.rows_affected())
}

pub(super) async fn hand_over_matches(
    store: &PostgresStore,
    from: Id,
    to: Id,
    works: &[Id],
) -> Result<Vec<Id>> {
    let mut tx = store.pool.begin().await?;
    let moved = shared::hand_over_matches_in::<Postgres>(&mut tx, from, to, works).await?;
    tx.commit().await?;
    Ok(moved)
}

pub(super) async fn get_pages(store: &PostgresStore, ids: &[Id]) -> Result<Vec<crate::Page>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as::<_, crate::rows::PageRow<Postgres>>(concat!(
        crate::rows::page_select!(),
        " WHERE id = ANY($1) ORDER BY id"
    ))
    .bind(ids)
    .fetch_all(&store.pool)
    .await?
    .into_iter()
    .map(crate::rows::PageRow::into_model)
    .collect()
}

pub(super) async fn shared_texts(
    store: &PostgresStore,
    content_hashes: &[String],
) -> Result<Vec<String>> {
    if content_hashes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(sqlx::query_scalar(
        "SELECT content_hash FROM pages WHERE content_hash = ANY($1) \
         GROUP BY content_hash HAVING COUNT(*) > 1 ORDER BY content_hash",
    )
    .bind(content_hashes)
    .fetch_all(&store.pool)
    .await?)
}

pub(super) async fn save_page_sketches(
    store: &PostgresStore,
    sketches: &[crate::PageSketch],
) -> Result<u64> {
    if sketches.is_empty() {
        return Ok(0);
    }
    let mut tx = store.begin().await?;
    let saved = shared::save_page_sketches_in::<Postgres>(&mut *tx, sketches).await?;
    tx.commit().await?;
    Ok(saved)
}
