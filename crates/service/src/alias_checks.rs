//! Aliases re-checked, never assumed: what becomes of a page's other URLs when the page is
//! found removed.
//!
//! A page's aliases (the same page under `?from=hot`, an `m.` host, `index.html`; see
//! [`crate::aliases`]) record no matches of their own: the group's matches are on its page.
//! When a removal check finds that page gone (404/410, its domain gone) or without the copy
//! (soft-removed), the copy may still be online under another URL of the group, or gone from
//! all of them. Their stored texts say nothing about that: they were fetched before the removal.
//! So, in the same run and before any alias could be matched on its own, every alias of the
//! page is fetched again (one request each, no link followed, with the check's politeness) and
//! judged:
//!
//! * an alias that still shows the copy (the text stored for it, or a new text that the
//!   matcher finds the copied works in) **takes the group's matches over** under its own URL
//!   ([`Store::hand_over_matches`]): the same match rows, so their first-seen time, review,
//!   notices and alerts already sent stay theirs, open (reopened if an earlier check had
//!   removed them). The page that lost the copy and the group's other URLs become its aliases,
//!   so a later check of it fetches them again;
//! * an alias that is gone is **removed with the page**: it is recorded gone and stays in the
//!   group, whose matches are recorded removed;
//! * an alias that cannot be reached (timeout, refused connection, 5xx) gives no verdict: the
//!   page's removal is recorded, and the next check fetches the aliases again (the page keeps
//!   its removed matches, so it is checked again).
//!
//! The page's own check is recorded last, with only the works no alias still shows as removed:
//! no copy is counted removed and then reopened in one run, and no alert, export row or
//! statistic calls a copy new because one of its URLs went away. A page restored later (its
//! removed matches are still checked) reopens its matches, not new ones.
//!
//! Dedup's removal checks ([`crate::dedup`]) and crawls that find a known copy gone
//! ([`crate::recrawl`]) both go through [`record_removals`].

use std::collections::{BTreeSet, HashMap};

use chrono::Utc;
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, PageSink, Validators};
use copytrace_store::{Availability, Id, PageCheck, Store};
use url::Url;

use crate::error::{Context, Result};
use crate::library::content_hash;
use crate::matching::MatchEngine;
use crate::recrawl::classify_failure;

/// What fetching a page again gave.
pub(crate) enum Fetched {
    Page(Box<FetchedPage>),
    /// The conditional request was answered 304: the stored text is current.
    NotModified,
    Failed(String, Option<u16>, Availability),
}

/// Collects the re-fetched pages and failures by URL.
#[derive(Default)]
struct RecheckSink {
    results: HashMap<String, Fetched>,
}

#[async_trait::async_trait]
impl PageSink for RecheckSink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.results.insert(
            page.requested_url.to_string(),
            Fetched::Page(Box::new(page)),
        );
        Ok(())
    }

    async fn not_modified(&mut self, url: &Url) {
        self.results.insert(url.to_string(), Fetched::NotModified);
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        let (status, availability) = classify_failure(error);
        self.results.insert(
            url.to_string(),
            Fetched::Failed(error.to_string(), status, availability),
        );
    }
}

/// Fetches `seeds` once each with `politeness` (a removal check's crawl configuration: no link
/// followed), conditional on `validators`; the results by [`crawl_key`].
pub(crate) async fn fetch_pages(
    seeds: &[Url],
    validators: HashMap<Url, Validators>,
    politeness: &CrawlConfig,
) -> Result<HashMap<String, Fetched>> {
    if seeds.is_empty() {
        return Ok(HashMap::new());
    }
    let config = CrawlConfig {
        max_pages: seeds.len(),
        validators,
        max_depth: Some(0),
        max_page_chain: 0,
        ..politeness.clone()
    };
    let mut sink = RecheckSink::default();
    copytrace_crawler::crawl(&config, seeds, &mut sink)
        .await
        .context("the removal check crawl failed")?;
    Ok(sink.results)
}

/// The crawler's form of a stored URL, to find a page's fetch among the crawl's results.
pub(crate) fn crawl_key(url: &str) -> String {
    Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |u| copytrace_crawler::urls::normalize(&u).to_string(),
    )
}

/// What recording removals did, for the run's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemovalTally {
    /// Matches moved to `removed`.
    pub matches_removed: u64,
    /// `removed` matches reopened (an alias shows a copy an earlier check had removed).
    pub matches_reopened: u64,
    /// Aliases fetched again.
    pub aliases_checked: u64,
    /// Aliases that still showed the copy.
    pub aliases_kept: u64,
    /// Aliases found gone with their page.
    pub aliases_removed: u64,
}

/// How an alias answered.
enum AliasAnswer {
    /// It shows the copies of these works (of those its page lost), with the HTTP status.
    Shows(Vec<Id>, u16),
    /// Gone (404/410, domain gone), with the HTTP status.
    Gone(Option<u16>, String),
    /// Answered without any of the copies (soft-removed), with the HTTP status.
    Without(u16),
    /// No verdict: not fetched, unreachable, or a changed text with no matcher at hand.
    Unknown(Option<u16>, String),
}

/// Records the checks `removals` of pages found gone or soft-removed (their `removed` works),
/// after fetching each page's aliases with `politeness` and handing the group's matches to an
/// alias that still shows the copy (see the module header). `engine` matches an alias whose
/// text changed; without it (a crawl that does not match) such an alias gives no verdict and
/// the next removal check decides.
pub async fn record_removals(
    store: &dyn Store,
    engine: Option<&MatchEngine>,
    removals: Vec<PageCheck>,
    politeness: &CrawlConfig,
) -> Result<RemovalTally> {
    let mut tally = RemovalTally::default();
    let mut groups = Vec::with_capacity(removals.len());
    let mut seeds = Vec::new();
    for check in removals {
        let aliases = if check.removed.is_empty() {
            Vec::new()
        } else {
            store.alias_pages(check.page_id).await?
        };
        seeds.extend(aliases.iter().filter_map(|(_, url)| Url::parse(url).ok()));
        groups.push((check, aliases));
    }
    let fetched = fetch_pages(&seeds, HashMap::new(), politeness).await?;
    for (mut check, aliases) in groups {
        let lost: Vec<Id> = check.removed.clone();
        let mut heir: Option<(Id, Vec<Id>)> = None;
        for (alias_id, url) in &aliases {
            let outcome = fetched.get(&crawl_key(url));
            tally.aliases_checked += u64::from(outcome.is_some());
            let answer = judge_alias(store, engine, *alias_id, outcome, &lost).await?;
            let now = Utc::now();
            let alias_check = |availability, http_status, detail: String| PageCheck {
                page_id: *alias_id,
                run_id: check.run_id,
                checked_at: now,
                availability,
                http_status,
                detail,
                still_present: Vec::new(),
                removed: Vec::new(),
            };
            match answer {
                AliasAnswer::Shows(works, status) => {
                    tally.aliases_kept += 1;
                    let mut alias_check = alias_check(
                        Availability::Online,
                        Some(status),
                        format!(
                            "alias of removed page {}: still shows the copy",
                            check.page_id
                        ),
                    );
                    if heir.is_none() {
                        let moved = store
                            .hand_over_matches(check.page_id, *alias_id, &works)
                            .await?;
                        if !moved.is_empty() {
                            tracing::info!(
                                page = check.page_id,
                                alias = alias_id,
                                "an alias of a removed page still shows the copy: it takes the \
                                 page's {} match(es) over",
                                moved.len()
                            );
                            alias_check.still_present = moved.clone();
                            heir = Some((*alias_id, moved));
                        }
                    }
                    let outcome = store.record_page_check(&alias_check).await?;
                    tally.matches_reopened += outcome.reopened;
                }
                AliasAnswer::Gone(status, detail) => {
                    tally.aliases_removed += 1;
                    store
                        .record_page_check(&alias_check(
                            Availability::Gone,
                            status,
                            format!("alias of removed page {}: {detail}", check.page_id),
                        ))
                        .await?;
                }
                AliasAnswer::Without(status) => {
                    tally.aliases_removed += 1;
                    store
                        .record_page_check(&alias_check(
                            Availability::SoftRemoved,
                            Some(status),
                            format!(
                                "alias of removed page {}: HTTP {status} without the copy",
                                check.page_id
                            ),
                        ))
                        .await?;
                }
                AliasAnswer::Unknown(status, detail) => {
                    store
                        .record_page_check(&alias_check(
                            Availability::Unreachable,
                            status,
                            format!("alias of removed page {}: {detail}", check.page_id),
                        ))
                        .await?;
                }
            }
        }
        if let Some((heir, moved)) = &heir {
            check.removed.retain(|work| !moved.contains(work));
            check.detail = format!(
                "{}; {} copied work(s) still online under its alias page {heir}",
                check.detail,
                moved.len()
            );
        }
        let outcome = store.record_page_check(&check).await?;
        tally.matches_removed += outcome.removed;
        tally.matches_reopened += outcome.reopened;
    }
    Ok(tally)
}

/// What the fetch of alias `alias_id` says about the works `lost` of its removed page.
async fn judge_alias(
    store: &dyn Store,
    engine: Option<&MatchEngine>,
    alias_id: Id,
    outcome: Option<&Fetched>,
    lost: &[Id],
) -> Result<AliasAnswer> {
    let fetched = match outcome {
        None => {
            return Ok(AliasAnswer::Unknown(
                None,
                "not fetched (robots.txt disallows it, or the URL is invalid)".into(),
            ));
        }
        Some(Fetched::NotModified) => {
            // Not asked for (aliases are fetched without validators); the stored text stands.
            return Ok(AliasAnswer::Shows(lost.to_vec(), 304));
        }
        Some(Fetched::Failed(reason, status, availability)) => {
            return Ok(if *availability == Availability::Gone {
                AliasAnswer::Gone(*status, reason.clone())
            } else {
                AliasAnswer::Unknown(*status, reason.clone())
            });
        }
        Some(Fetched::Page(fetched)) => fetched,
    };
    let stored = store.get_page(alias_id).await?;
    if content_hash(&fetched.text) == stored.content_hash {
        return Ok(AliasAnswer::Shows(lost.to_vec(), fetched.status));
    }
    let Some(engine) = engine else {
        return Ok(AliasAnswer::Unknown(
            Some(fetched.status),
            format!(
                "HTTP {}: the text changed; the next removal check matches it",
                fetched.status
            ),
        ));
    };
    let found: BTreeSet<Id> = engine
        .match_text(&fetched.text)
        .await?
        .iter()
        .map(|m| m.work_id)
        .collect();
    let shows: Vec<Id> = lost.iter().copied().filter(|w| found.contains(w)).collect();
    Ok(if shows.is_empty() {
        AliasAnswer::Without(fetched.status)
    } else {
        AliasAnswer::Shows(shows, fetched.status)
    })
}
