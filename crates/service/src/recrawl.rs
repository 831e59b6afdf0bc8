//! What a crawl of the product does about pages it has seen before: conditional requests, and
//! the fate of known infringing pages.
//!
//! **Conditional requests.** A crawl sends back the `ETag` / `Last-Modified` stored with a page
//! (`If-None-Match` / `If-Modified-Since`); a `304 Not Modified` then costs no body, and the
//! store records that the page was seen unchanged ([`Store::record_not_modified`]).
//! The crawler does not parse a page answered 304, so it **follows none of its links**: a
//! conditional request on a table of contents would hide every chapter behind it, and on a
//! paginated one the new last page. So a crawl that follows links sends validators only for the
//! pages whose links it does not need: the **known infringing pages** of the seeds' sites (the
//! chapters whose copies are tracked), never for the seeds themselves. A crawl that follows no
//! link at all (`--depth 0`, removal checks) may be conditional for every page it knows. At most
//! [`VALIDATOR_LIMIT`] validators are loaded per crawl, and only those of the seeds' sites.
//!
//! **Known infringing pages.** A re-crawl records what became of a page with undismissed
//! matches, as the daily removal check does (a `page_checks` row, the page's availability, the
//! matches' status): a 404/410 or a vanished domain is `gone` and its matches become `removed`;
//! a 304 or the same text again is `online` and reopens a match whose copy was seen gone
//! before; a timeout or a 5xx is `unreachable` and changes nothing. A new text is judged by
//! the match that follows ([`copytrace_store::Store::record_page_matches`]): a copy missing from
//! it is `soft_removed`, with its evidence and the text it points into kept.
//!
//! A gone page with aliases (the same page under other URLs) is recorded at the end of the
//! crawl, once its aliases are fetched again ([`crate::alias_checks`]): one still showing the
//! copy takes the group's matches over, one gone is removed with it. A page whose text changed
//! keeps the aliases whose text is the evidence of its copies (the store does not free them to
//! be matched from a stale text); the next removal check fetches them.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, Validators};
use copytrace_store::{
    Availability, Id, NewCapture, NewPage, NewRendering, NewSubresponse, PageCheck, Store,
    ValidatorScope,
};
use url::Url;

use crate::alias_checks::{RemovalTally, record_removals};
use crate::error::Result;
use crate::library::content_hash;

/// Most validators one crawl loads (about 100 bytes each).
pub const VALIDATOR_LIMIT: u32 = 50_000;

/// How the crawler's DNS failure message starts (see `CrawlError::Dns`).
const DNS_FAILURE: &str = "could not resolve ";

/// The store form of a fetched page, with the validators of its response and the raw response
/// itself, and for a rendered page the DOM and the responses its scripts received (kept as
/// evidence, see [`Store::page_capture`]).
pub fn new_page(page: FetchedPage) -> NewPage {
    let rendering = page.rendering.map(new_rendering);
    NewPage {
        url: page.url.to_string(),
        title: page.title,
        content_hash: content_hash(&page.text),
        text: page.text,
        http_status: page.status,
        fetched_at: page.fetched_at,
        etag: page.validators.etag,
        last_modified: page.validators.last_modified,
        capture: Some(NewCapture {
            requested_url: page.requested_url.to_string(),
            final_url: page.url.to_string(),
            headers: page.headers,
            encoding: page.encoding.to_owned(),
            body: page.body,
            rendering,
        }),
    }
}

/// The store form of a page as the browser rendered it.
fn new_rendering(rendering: copytrace_crawler::Rendering) -> NewRendering {
    let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    NewRendering {
        dom: rendering.dom,
        browser: rendering.browser,
        settle_quiet_ms: millis(rendering.settle_quiet),
        settled_after_ms: millis(rendering.settled_after),
        rendered_at: rendering.rendered_at,
        responses_not_kept: u64::try_from(rendering.responses_not_kept).unwrap_or(u64::MAX),
        subresponses: rendering
            .subresponses
            .into_iter()
            .map(|r| NewSubresponse {
                url: r.url,
                resource_type: r.resource_type,
                http_status: r.status,
                headers: r.headers,
                mime_type: r.mime_type,
                decoded_text: r.decoded_text,
                body: r.body,
                body_note: r.body_note,
            })
            .collect(),
    }
}

/// A site as the store names it: the lower-case host, with the port when not the default.
pub fn site_of(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// The validators a crawl from `seeds` sends back: those of the known infringing pages of the
/// seeds' sites, or of every known page when the crawl follows no link (`follows_links`
/// false). Seeds never get one when the crawl follows links, so their links are always read.
pub async fn crawl_validators(
    store: &dyn Store,
    seeds: &[Url],
    follows_links: bool,
) -> Result<HashMap<Url, Validators>> {
    let mut hosts: Vec<String> = seeds.iter().filter_map(site_of).collect();
    hosts.sort();
    hosts.dedup();
    if hosts.is_empty() {
        return Ok(HashMap::new());
    }
    let stored = store
        .page_validators(&ValidatorScope {
            hosts,
            infringing_only: follows_links,
            limit: VALIDATOR_LIMIT,
        })
        .await?;
    let seeds: Vec<String> = seeds.iter().map(comparable).collect();
    Ok(stored
        .into_iter()
        .filter_map(|page| {
            let url = Url::parse(&page.url).ok()?;
            if follows_links && seeds.contains(&comparable(&url)) {
                return None;
            }
            Some((
                url,
                Validators {
                    etag: page.etag,
                    last_modified: page.last_modified,
                },
            ))
        })
        .collect())
}

/// A URL in the crawler's normalized form, to compare a seed with a stored page.
fn comparable(url: &Url) -> String {
    copytrace_crawler::urls::normalize(url).to_string()
}

/// Whether a failed fetch means the page is gone (404/410, or its domain no longer resolves)
/// or only unreachable (no verdict), with the HTTP status when the server answered.
pub fn classify_failure(error: &CrawlError) -> (Option<u16>, Availability) {
    match error {
        CrawlError::HttpStatus { status, .. } if matches!(status, 404 | 410) => {
            (Some(*status), Availability::Gone)
        }
        CrawlError::HttpStatus { status, .. } => (Some(*status), Availability::Unreachable),
        // The domain is gone: the usual end of a pirate site. The first request to a host is
        // for its robots.txt, so a vanished domain shows as an unavailable robots.txt whose
        // reason is the resolver's failure.
        CrawlError::Dns { .. } => (None, Availability::Gone),
        CrawlError::RobotsUnavailable { reason, .. } if reason.starts_with(DNS_FAILURE) => {
            (None, Availability::Gone)
        }
        _ => (None, Availability::Unreachable),
    }
}

/// Records, for one crawl, what became of the known infringing pages it fetched again.
pub struct Recrawl {
    store: Arc<dyn Store>,
    run_id: Option<Id>,
    /// Matches moved to `removed` so far.
    pub removed: u64,
    /// Matches reopened so far.
    pub reopened: u64,
    /// What re-checking the aliases of pages found gone did.
    pub aliases: RemovalTally,
    /// Pages found gone that have aliases: recorded by [`Recrawl::settle_removals`] once the
    /// aliases are fetched again.
    removals: Vec<PageCheck>,
}

impl Recrawl {
    /// Records for the crawl run `run_id` (if any) into `store`.
    pub fn new(store: Arc<dyn Store>, run_id: Option<Id>) -> Self {
        Self {
            store,
            run_id,
            removed: 0,
            reopened: 0,
            aliases: RemovalTally::default(),
            removals: Vec::new(),
        }
    }

    /// Records the pages found gone that have aliases, after fetching their aliases with
    /// `politeness` (see [`crate::alias_checks`]): an alias still showing the copy takes the
    /// group's matches over, one gone is removed with its page. An alias whose text changed is
    /// left to the next removal check (a crawl does not match).
    pub async fn settle_removals(&mut self, politeness: &CrawlConfig) -> Result<()> {
        let removals = std::mem::take(&mut self.removals);
        if removals.is_empty() {
            return Ok(());
        }
        let tally = record_removals(self.store.as_ref(), None, removals, politeness).await?;
        self.removed += tally.matches_removed;
        self.reopened += tally.matches_reopened;
        self.aliases.aliases_checked += tally.aliases_checked;
        self.aliases.aliases_kept += tally.aliases_kept;
        self.aliases.aliases_removed += tally.aliases_removed;
        Ok(())
    }

    /// A page was fetched again with the text already stored (`status` 2xx): its copies are
    /// still there.
    pub async fn unchanged(&mut self, url: &str, status: u16) -> Result<()> {
        self.still_there(
            url,
            status,
            "re-crawl: the page is unchanged and still carries the copy",
        )
        .await
    }

    /// A conditional request for the page was answered 304: the stored text is current.
    pub async fn not_modified(&mut self, url: &Url) -> Result<()> {
        let Some(_) = self
            .store
            .record_not_modified(url.as_str(), Utc::now())
            .await?
        else {
            return Ok(());
        };
        self.still_there(
            url.as_str(),
            304,
            "re-crawl: not modified, the copy is still there",
        )
        .await
    }

    async fn still_there(&mut self, url: &str, status: u16, detail: &str) -> Result<()> {
        let Some(page) = self.store.infringing_page(url).await? else {
            return Ok(());
        };
        // Copies found only in an earlier text are not vouched for by the stored one.
        let present: Vec<Id> = page
            .work_ids
            .iter()
            .copied()
            .filter(|work| !page.stale_evidence.contains(work))
            .collect();
        if present.is_empty() {
            return Ok(());
        }
        let outcome = self
            .store
            .record_page_check(&PageCheck {
                page_id: page.page_id,
                run_id: self.run_id,
                checked_at: Utc::now(),
                availability: Availability::Online,
                http_status: Some(status),
                detail: detail.to_owned(),
                still_present: present,
                removed: Vec::new(),
            })
            .await?;
        self.reopened += outcome.reopened;
        Ok(())
    }

    /// Fetching `url` failed: a known infringing page that is gone has its matches removed;
    /// one that is unreachable gets a check without a verdict.
    pub async fn failure(&mut self, url: &Url, error: &CrawlError) -> Result<()> {
        let mut page = self.store.infringing_page(url.as_str()).await?;
        // The page may be stored under the URL a redirect led to.
        if page.is_none()
            && let CrawlError::HttpStatus { url: last, .. } = error
            && last != url
        {
            page = self.store.infringing_page(last.as_str()).await?;
        }
        let Some(page) = page else {
            return Ok(());
        };
        let (http_status, availability) = classify_failure(error);
        let check = PageCheck {
            page_id: page.page_id,
            run_id: self.run_id,
            checked_at: Utc::now(),
            availability,
            http_status,
            detail: format!("re-crawl: {error}"),
            still_present: Vec::new(),
            removed: if availability == Availability::Gone {
                page.work_ids
            } else {
                Vec::new()
            },
        };
        // A gone page's other URLs may still serve the copy: it is recorded once they are
        // fetched again, at the end of the crawl.
        if availability == Availability::Gone
            && !self.store.alias_pages(page.page_id).await?.is_empty()
        {
            self.removals.push(check);
            return Ok(());
        }
        let outcome = self.store.record_page_check(&check).await?;
        self.removed += outcome.removed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_gone_only_when_the_page_or_its_domain_is() {
        let url = Url::parse("http://pirate.example/1.html").unwrap();
        let status = |status| CrawlError::HttpStatus {
            url: url.clone(),
            status,
        };
        assert_eq!(
            classify_failure(&status(404)),
            (Some(404), Availability::Gone)
        );
        assert_eq!(
            classify_failure(&status(410)),
            (Some(410), Availability::Gone)
        );
        assert_eq!(
            classify_failure(&status(503)),
            (Some(503), Availability::Unreachable)
        );
        assert_eq!(
            classify_failure(&status(403)),
            (Some(403), Availability::Unreachable)
        );
        let dns = CrawlError::Dns {
            url: url.clone(),
            host: "pirate.example".into(),
            message: "no record".into(),
        };
        let reason = dns.to_string();
        assert_eq!(classify_failure(&dns), (None, Availability::Gone));
        let robots = CrawlError::RobotsUnavailable {
            url: url.clone(),
            origin: "http://pirate.example".into(),
            reason,
        };
        assert_eq!(classify_failure(&robots), (None, Availability::Gone));
        let robots_down = CrawlError::RobotsUnavailable {
            url: url.clone(),
            origin: "http://pirate.example".into(),
            reason: "HTTP 503".into(),
        };
        assert_eq!(
            classify_failure(&robots_down),
            (None, Availability::Unreachable)
        );
        let refused = CrawlError::Connect {
            url: url.clone(),
            message: "connection refused".into(),
        };
        assert_eq!(
            classify_failure(&refused),
            (None, Availability::Unreachable)
        );
        assert_eq!(
            classify_failure(&CrawlError::Timeout { url }),
            (None, Availability::Unreachable)
        );
    }

    #[test]
    fn sites_are_named_as_the_store_names_them() {
        let site = |url: &str| site_of(&Url::parse(url).unwrap());
        assert_eq!(
            site("https://Pirate.Example/a"),
            Some("pirate.example".into())
        );
        assert_eq!(
            site("http://pirate.example:80/a"),
            Some("pirate.example".into())
        );
        assert_eq!(
            site("http://127.0.0.1:8080/a"),
            Some("127.0.0.1:8080".into())
        );
    }
}
