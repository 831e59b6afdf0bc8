//! Crawl runs: seeds and settings in, pages stored, the run recorded.
//!
//! The same function crawls for `copytrace crawl` (in the caller's process, pages matched later
//! by `copytrace match` or the scheduler's sweep) and for crawl jobs (pages queued for match
//! workers as they arrive). Both record a run with the crawler's statistics, send the stored
//! validators of known copies back (conditional requests), and record what became of known
//! copies they meet again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use copytrace_crawler::{CrawlConfig, CrawlError, CrawlReport, CrawlStats};
use copytrace_store::{Id, RunCounts, RunKind, RunState, Store};
use futures_util::StreamExt;
use tokio::sync::Notify;
use url::Url;

use crate::error::{Context, Result, ServiceError};
use crate::intake::{IntakeCounts, PageIntake, crawl_stats_json};
use crate::matching::{MatchEngine, MatchSummary};
use crate::progress::Progress;
use crate::recrawl::crawl_validators;
use crate::runs::{RunTracker, end_run, start_manual_run};
use crate::settings::CrawlSettings;

/// Validates seed URLs: absolute `http`/`https` URLs with a host.
pub fn parse_seeds(urls: &[String]) -> Result<Vec<Url>> {
    urls.iter()
        .map(|raw| {
            let url = Url::parse(raw)
                .map_err(|e| ServiceError::invalid(format!("invalid URL {raw:?}: {e}")))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ServiceError::invalid(format!(
                    "invalid URL {raw:?}: only http and https can be crawled"
                )));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(ServiceError::invalid(format!(
                    "invalid URL {raw:?}: no host"
                )));
            }
            Ok(url)
        })
        .collect()
}

/// Longest wait for the resolution of one seed's name when a crawl is queued or scheduled.
const SEED_RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Refuses, before anything is stored, seeds that the crawl would refuse: a host that is, or a
/// name that resolves to, a loopback, private, link-local or otherwise non-public address
/// (`http://169.254.169.254/`, `http://localhost:8080/`, `http://[::ffff:10.0.0.1]/`), unless
/// `settings` allow private addresses explicitly. A name that does not resolve now, or not
/// within a few seconds, is accepted: the crawler's guard vets every address it connects to
/// anyway, at crawl time and on every redirect, so this is early feedback, not the defence.
pub async fn vet_seeds(seeds: &[Url], settings: &CrawlSettings) -> Result<()> {
    use copytrace_crawler::guard::{AddressPolicy, GuardError};
    let policy = AddressPolicy {
        allow_private: settings.allow_private_addresses,
        allowed: Vec::new(),
    };
    for seed in seeds {
        let checked = tokio::time::timeout(SEED_RESOLVE_TIMEOUT, policy.check_url(seed)).await;
        if let Ok(Err(refused @ GuardError::Refused { .. })) = checked {
            return Err(ServiceError::invalid(format!(
                "invalid URL {:?}: {refused} (crawling private addresses must be allowed \
                 explicitly: --allow-private-addresses)",
                seed.as_str()
            )));
        }
    }
    Ok(())
}

/// The crawler configuration of a crawl of `seeds`, with the validators of the pages a
/// conditional re-crawl sends back (none when the settings say `no_conditional`).
pub async fn crawl_config(
    store: &dyn Store,
    seeds: &[Url],
    settings: &CrawlSettings,
) -> Result<CrawlConfig> {
    let mut config = settings.crawl_config();
    config.chromium = find_chromium();
    if !settings.no_conditional {
        let follows_links = !(config.max_depth == Some(0) && config.max_page_chain == 0);
        config.validators = crawl_validators(store, seeds, follows_links).await?;
    }
    Ok(config)
}

/// The Chromium of the crawler's rendered path: the one `COPYTRACE_CHROMIUM` names (as for
/// evidence screenshots), else the first found on `PATH`; `None` when none is installed (pages
/// that need rendering are then reported as not rendered).
pub fn find_chromium() -> Option<std::path::PathBuf> {
    let explicit = std::env::var_os("COPYTRACE_CHROMIUM").map(std::path::PathBuf::from);
    let path = std::env::var_os("PATH");
    copytrace_browser::find_chromium(explicit.as_deref(), path.as_deref()).ok()
}

/// What a crawl run did.
#[derive(Debug)]
pub struct CrawlDone {
    /// The run.
    pub run_id: Id,
    /// The crawler's report, or why the crawl stopped as a whole.
    pub result: std::result::Result<CrawlReport, CrawlError>,
    /// Whether it stopped because the run was cancelled.
    pub cancelled: bool,
    /// What happened to the pages.
    pub pages: IntakeCounts,
    /// The run's counts.
    pub run_counts: RunCounts,
    /// The crawler's statistics as stored with the run.
    pub stats: serde_json::Value,
    /// Why no seed could be crawled, when none could (every seed refused by the address guard,
    /// unreachable or failing): the run then failed, though the crawler finished.
    pub seeds_failed: Option<String>,
}

impl CrawlDone {
    /// How the run ended: succeeded, cancelled, or the reason it failed (the crawl stopped as
    /// a whole, or none of its seeds could be crawled).
    pub fn run_outcome(&self) -> std::result::Result<RunState, String> {
        match &self.result {
            Ok(_) => match &self.seeds_failed {
                Some(reason) => Err(reason.clone()),
                None => Ok(RunState::Succeeded),
            },
            Err(_) if self.cancelled => Ok(RunState::Cancelled),
            Err(error) => Err(format!("crawl aborted: {error}")),
        }
    }
}

/// Why none of `seeds` could be crawled, when every one of them failed: `no seed could be
/// crawled: URL: reason; …`. `None` when a seed was crawled.
pub fn every_seed_failed(report: &CrawlReport, seeds: &[Url]) -> Option<String> {
    if seeds.is_empty() || report.fetched > 0 {
        return None;
    }
    let mut reasons = Vec::with_capacity(seeds.len());
    for seed in seeds {
        let mut seed = seed.clone();
        seed.set_fragment(None);
        let failed = report
            .failures
            .iter()
            .find(|failure| Url::parse(&failure.url).is_ok_and(|failed| failed == seed))?;
        reasons.push(format!("{}: {}", failed.url, failed.reason));
    }
    Some(format!("no seed could be crawled: {}", reasons.join("; ")))
}

/// How the removal checks of a crawl (the aliases of pages it found gone) fetch: the crawl's
/// politeness, no link followed.
fn recheck_politeness(config: &CrawlConfig) -> CrawlConfig {
    CrawlConfig {
        allow_private_addresses: config.allow_private_addresses,
        allowed_addresses: config.allowed_addresses.clone(),
        user_agent: config.user_agent.clone(),
        concurrency: config.concurrency,
        per_host_concurrency: config.per_host_concurrency,
        host_delay: config.host_delay,
        request_timeout: config.request_timeout,
        max_retries: config.max_retries,
        chromium: config.chromium.clone(),
        ..CrawlConfig::default()
    }
}

/// Crawls `seeds` with `config` for the running run `run_id`, storing pages through a
/// [`PageIntake`] (queueing their match jobs when `queue_matches`). The run is not ended here:
/// the caller knows whether a failure is final.
pub async fn crawl_for_run(
    store: Arc<dyn Store>,
    run_id: Id,
    seeds: &[Url],
    config: &CrawlConfig,
    queue_matches: bool,
    progress: Arc<dyn Progress>,
) -> CrawlDone {
    let mut intake = PageIntake::new(store, RunTracker::new(run_id), queue_matches, progress);
    let result = copytrace_crawler::crawl(config, seeds, &mut intake).await;
    let cancelled = matches!(result, Err(CrawlError::Sink(_))) && intake.cancelled();
    // Known copies found gone whose pages have other URLs: those are fetched now, before any
    // of them could be matched on its own.
    if let Err(error) = intake
        .recrawl
        .settle_removals(&recheck_politeness(config))
        .await
    {
        tracing::warn!(run = run_id, %error, "cannot re-check the aliases of removed pages");
    }
    let seeds_failed = match &result {
        Ok(report) => every_seed_failed(report, seeds),
        Err(_) => None,
    };
    let stats = match &result {
        Ok(report) => report.stats.clone(),
        Err(_) if cancelled => intake.latest.clone(),
        Err(_) => CrawlStats::default(),
    };
    intake.latest = stats.clone();
    CrawlDone {
        run_id,
        cancelled,
        pages: intake.counts,
        run_counts: intake.run_counts(),
        stats: crawl_stats_json(&stats),
        seeds_failed,
        result,
    }
}

/// `copytrace crawl`: crawls `seeds` now, in this process, as a manual run that is recorded
/// like a scheduled one. Pages are stored, not matched (a match run does that). A crawl that
/// stops as a whole fails the run and is returned as the error; a crawl none of whose seeds
/// could be crawled fails the run with the reasons, and is returned (its report lists them).
pub async fn crawl_now(
    store: Arc<dyn Store>,
    seeds: &[Url],
    settings: &CrawlSettings,
    progress: Arc<dyn Progress>,
) -> Result<CrawlDone> {
    let done = crawl_unended(store.clone(), seeds, settings, progress).await?;
    end_crawl(store.as_ref(), done, RunCounts::default()).await
}

/// Starts a manual crawl run and crawls; the run is left running.
async fn crawl_unended(
    store: Arc<dyn Store>,
    seeds: &[Url],
    settings: &CrawlSettings,
    progress: Arc<dyn Progress>,
) -> Result<CrawlDone> {
    let config = crawl_config(store.as_ref(), seeds, settings).await?;
    let run_id = start_manual_run(store.as_ref(), RunKind::Crawl).await?;
    Ok(crawl_for_run(store.clone(), run_id, seeds, &config, false, progress).await)
}

/// Ends the run of a manual crawl, with the counts of matching done alongside it (`matched`:
/// new, removed and reopened matches) added to the crawl's own.
async fn end_crawl(
    store: &dyn Store,
    mut done: CrawlDone,
    matched: RunCounts,
) -> Result<CrawlDone> {
    done.run_counts.new_matches += matched.new_matches;
    done.run_counts.matches_removed += matched.matches_removed;
    done.run_counts.matches_reopened += matched.matches_reopened;
    let outcome = done.run_outcome();
    // A failure is final: no retry will take the run up.
    let recorded = end_run(
        store,
        done.run_id,
        outcome.clone(),
        &done.run_counts,
        &done.stats,
        true,
    )
    .await;
    match done.result {
        Err(error) if !done.cancelled => Err(error).context("crawl aborted"),
        result => {
            // A run failed for its seeds is recorded (`end_run` returns the reason again).
            if outcome.is_ok() {
                recorded.map_err(ServiceError::unavailable)?;
            }
            Ok(CrawlDone { result, ..done })
        }
    }
}

/// What [`crawl_and_match_now`] did: the crawl's result as [`crawl_now`] returns it, and the
/// matching's, each on its own.
#[derive(Debug)]
pub struct CrawledAndMatched {
    /// The crawl.
    pub crawl: Result<CrawlDone>,
    /// The pages matched while the crawl ran and after it ended.
    pub matched: Result<MatchSummary>,
}

/// How long the matching side of [`crawl_and_match_now`] waits for new pages when it has
/// matched every stored one and the crawl goes on.
const MATCH_IDLE_WAIT: Duration = Duration::from_millis(200);

/// `copytrace crawl --match`: crawls `seeds` as [`crawl_now`] does and matches the pages as
/// they are stored, `concurrency` at a time, so that a run costs about the slower of crawling
/// and matching instead of their sum (the crawl waits on the network and on per-host pacing,
/// matching on the cores).
///
/// The matching side passes over the due pages again at once while its passes record verdicts,
/// else after a fifth of a second or as soon as the crawl ends, and makes one last pass after
/// the crawl has ended, so every page the crawl stored is matched before this returns. A matching failure (a shared index that was never built, say) does not stop
/// the crawl: the pages stay stored and due for `copytrace match`, and the error is returned
/// beside the crawl's result.
pub async fn crawl_and_match_now(
    store: Arc<dyn Store>,
    seeds: &[Url],
    settings: &CrawlSettings,
    engine: &MatchEngine,
    concurrency: usize,
    crawl_progress: Arc<dyn Progress>,
    match_progress: &dyn Progress,
) -> CrawledAndMatched {
    let crawl_ended = AtomicBool::new(false);
    let ended = Notify::new();
    let crawl = async {
        let done = crawl_unended(store.clone(), seeds, settings, crawl_progress).await;
        crawl_ended.store(true, Ordering::SeqCst);
        ended.notify_one();
        done
    };
    let matching = async {
        let mut summary = MatchSummary::default();
        loop {
            // Read before the pass: a pass that starts after the crawl ended sees every page.
            let last_pass = crawl_ended.load(Ordering::SeqCst);
            let mut recorded = 0u64;
            let mut outcomes = std::pin::pin!(engine.match_due(concurrency));
            while let Some(outcome) = outcomes.next().await {
                if summary.add(&outcome?) {
                    recorded += 1;
                    match_progress.advance(1);
                }
            }
            if last_pass {
                return Ok(summary);
            }
            if recorded == 0 {
                tokio::select! {
                    () = ended.notified() => {}
                    () = tokio::time::sleep(MATCH_IDLE_WAIT) => {}
                }
            }
        }
    };
    let (crawl, matched): (Result<CrawlDone>, Result<MatchSummary>) = tokio::join!(crawl, matching);
    // The run ends once its matching has: it counts the matches its pages gave.
    let counts = matched.as_ref().map_or_else(
        |_| RunCounts::default(),
        |summary| RunCounts {
            new_matches: summary.new_matches,
            matches_removed: summary.removed,
            matches_reopened: summary.reopened,
            ..RunCounts::default()
        },
    );
    let crawl = match crawl {
        Ok(done) => end_crawl(store.as_ref(), done, counts).await,
        Err(error) => Err(error),
    };
    CrawledAndMatched { crawl, matched }
}

/// Whether the crawl failed on one of its seeds (the crawler reports URLs without their
/// fragment, so seeds are compared the same way).
pub fn seed_failed(report: &CrawlReport, seeds: &[Url]) -> bool {
    report.failures.iter().any(|failure| {
        seeds.iter().any(|seed| {
            let mut seed = seed.clone();
            seed.set_fragment(None);
            Url::parse(&failure.url).is_ok_and(|failed| failed == seed)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crawl_fails_only_when_no_seed_could_be_crawled() {
        let seeds = parse_seeds(&["http://127.0.0.1:9/#top".to_owned()]).unwrap();
        let refused = CrawlReport {
            failures: vec![copytrace_crawler::CrawlFailure {
                url: "http://127.0.0.1:9/".to_owned(),
                kind: copytrace_crawler::ErrorKind::RefusedAddress,
                reason: "address 127.0.0.1 is not public".to_owned(),
            }],
            ..CrawlReport::default()
        };
        assert_eq!(
            every_seed_failed(&refused, &seeds).as_deref(),
            Some("no seed could be crawled: http://127.0.0.1:9/: address 127.0.0.1 is not public")
        );
        let some_page = CrawlReport {
            fetched: 1,
            ..refused.clone()
        };
        assert_eq!(every_seed_failed(&some_page, &seeds), None);
        let two = parse_seeds(&[
            "http://127.0.0.1:9/".to_owned(),
            "http://127.0.0.1:10/".to_owned(),
        ])
        .unwrap();
        assert_eq!(
            every_seed_failed(&refused, &two),
            None,
            "a seed that did not fail (here: robots.txt disallowed it) is no failure"
        );
    }
}
