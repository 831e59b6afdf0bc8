//! The crawl loop: the frontier feeding up to `concurrency` spawned page and sitemap tasks.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use reqwest::header::{self, HeaderMap};
use scraper::Html;
use tokio::task::JoinSet;
use tokio::time::Instant;
use url::Url;

use crate::error::CrawlError;
use crate::fetch::{
    ContentKind, FetchFailure, Fetcher, Gate, RequestOptions, content_kind, looks_binary,
    sniff_html,
};
use crate::frontier::{Frontier, Item, Next, Rules, Scope};
use crate::links::{self, Link};
use crate::render::decide::{self, Decision, RenderMemory, ScriptFile, Template};
use crate::render::{self, RenderMode, Renderer};
use crate::robots::{HostRobots, Verdict};
use crate::sitemap::{self, MAX_SITEMAP_FILES};
use crate::stats::CrawlProgress;
use crate::urls::normalize;
use crate::{
    CrawlConfig, CrawlFailure, CrawlReport, FetchedPage, PageSink, Validators, decode, extract,
};

/// Crawls from `seeds`, handing each fetched HTML page to `sink`.
///
/// Returns `Err` only for fatal problems: an invalid scope pattern, the HTTP client could not
/// be built, or the sink returned an error (the crawl stops at once and requests in flight are
/// cancelled). Every per-URL problem is recorded in [`CrawlReport::failures`], passed to
/// [`PageSink::failure`], and the crawl goes on. Seeds that are not `http`/`https` URLs are
/// reported as failures.
pub async fn crawl(
    config: &CrawlConfig,
    seeds: &[Url],
    sink: &mut dyn PageSink,
) -> Result<CrawlReport, CrawlError> {
    let started = Instant::now();
    let rules = Rules::new(config)?;
    let fetcher = Fetcher::new(config)?;
    let validators = config
        .validators
        .iter()
        .map(|(url, v)| (normalize(url).to_string(), v.clone()))
        .collect();
    let shared = Arc::new(Shared {
        gate: Gate::new(config),
        fetcher,
        config: config.clone(),
        validators,
        renderer: Renderer::new(config.chromium.clone(), config.render_timeout),
        render_memory: RenderMemory::default(),
        script_files: Mutex::default(),
    });
    let mut run = Run {
        report: CrawlReport::default(),
        started,
    };
    let mut frontier = Frontier::new(rules);
    let mut tasks: JoinSet<TaskOutput> = JoinSet::new();
    let mut in_flight: HashMap<tokio::task::Id, Job> = HashMap::new();

    let mut sitemap_origins = HashSet::new();
    for seed in seeds {
        let url = normalize(seed);
        match Scope::of(&url) {
            Some(scope) if matches!(url.scheme(), "http" | "https") => {
                let scope = Arc::new(scope);
                if config.sitemaps
                    && config.max_depth != Some(0)
                    && sitemap_origins.insert(url.origin().ascii_serialization())
                {
                    let handle = tasks.spawn(sitemap_task(shared.clone(), url.clone()));
                    in_flight.insert(handle.id(), Job::Sitemap(scope.clone()));
                }
                frontier.push_seed(url, scope);
            }
            _ => {
                let error = CrawlError::UnsupportedScheme { url: url.clone() };
                run.fail(sink, &url, &error).await;
            }
        }
    }

    let concurrency = config.concurrency.max(1);
    // Requests started or about to start; given back by tasks that never requested their page.
    let mut budget_used = 0usize;

    loop {
        let mut wake = None;
        // A page waiting for its template's render trials has given its slot back.
        while tasks.len() - shared.render_memory.parked().min(tasks.len()) < concurrency
            && budget_used < config.max_pages
        {
            match frontier.next(&shared.gate) {
                Next::Fetch(item, turn_taken) => {
                    budget_used += 1;
                    let handle = tasks.spawn(page_task(shared.clone(), item.clone(), turn_taken));
                    in_flight.insert(handle.id(), Job::Page(item));
                }
                Next::Disallowed(item) => {
                    tracing::debug!(url = %item.url, "disallowed by robots.txt");
                    run.report.disallowed_by_robots += 1;
                    run.progress(sink, &frontier, &shared, tasks.len());
                }
                Next::Unavailable(item, origin, reason) => {
                    let error = CrawlError::RobotsUnavailable {
                        url: item.url.clone(),
                        origin,
                        reason,
                    };
                    run.fail(sink, &item.url, &error).await;
                    run.progress(sink, &frontier, &shared, tasks.len());
                }
                Next::Wait(until) => {
                    wake = Some(until);
                    break;
                }
                Next::Idle => break,
            }
        }
        let joined = match (tasks.is_empty(), wake) {
            (true, None) => break,
            (true, Some(until)) => {
                tokio::time::sleep_until(until).await;
                continue;
            }
            (false, None) => tokio::select! {
                joined = tasks.join_next_with_id() => joined,
                () = shared.render_memory.slot_freed() => continue,
            },
            (false, Some(until)) => tokio::select! {
                joined = tasks.join_next_with_id() => joined,
                () = shared.render_memory.slot_freed() => continue,
                () = tokio::time::sleep_until(until) => continue,
            },
        };
        let Some(joined) = joined else {
            continue;
        };
        let (id, output) = match joined {
            Ok((id, output)) => (id, output),
            Err(e) => (e.id(), TaskOutput::Panicked(e.to_string())),
        };
        let Some(job) = in_flight.remove(&id) else {
            continue;
        };
        match (job, output) {
            (Job::Sitemap(scope), TaskOutput::Sitemap(urls)) => {
                run.report.stats.sitemap_urls += frontier.add_sitemap_urls(&scope, urls);
            }
            (Job::Sitemap(_), _) => {}
            (Job::Page(item), output) => {
                frontier.done(&item);
                let outcome = match output {
                    TaskOutput::Page(outcome) => outcome,
                    TaskOutput::Panicked(message) => {
                        Outcome::not_requested(Err(Failure::Internal(message)))
                    }
                    TaskOutput::Sitemap(_) => {
                        Outcome::not_requested(Err(Failure::Internal("task mix-up".into())))
                    }
                };
                if !outcome.requested {
                    budget_used = budget_used.saturating_sub(1);
                }
                run.settle(sink, &mut frontier, &item, outcome.result)
                    .await?;
            }
        }
        run.progress(sink, &frontier, &shared, tasks.len());
    }
    run.report.skipped = frontier.skipped();
    run.report.stats.link_limits = frontier.link_limits;
    run.snapshot(&shared);
    // Every task has ended, so this is the last reference: the browser (if one was started)
    // is closed and its process group killed before the crawl returns.
    drop(tasks);
    if let Ok(shared) = Arc::try_unwrap(shared) {
        shared.renderer.close().await;
    }
    Ok(run.report)
}

pub(crate) struct Shared {
    pub(crate) fetcher: Fetcher,
    pub(crate) gate: Gate,
    pub(crate) config: CrawlConfig,
    /// The browser of the rendered path, started on first need.
    renderer: Renderer,
    /// What rendering gained per page template, in auto mode.
    render_memory: RenderMemory,
    /// What the sites' script files were read to do, in auto mode (by address).
    script_files: Mutex<HashMap<Url, Arc<tokio::sync::OnceCell<ScriptFile>>>>,
    /// [`CrawlConfig::validators`] keyed by normalized URL.
    validators: HashMap<String, Validators>,
}

/// What a spawned task was doing (kept outside the task so a panic can still be attributed).
enum Job {
    Page(Item),
    Sitemap(Arc<Scope>),
}

enum TaskOutput {
    Page(Outcome),
    Sitemap(Vec<Url>),
    Panicked(String),
}

/// The report under construction.
struct Run {
    report: CrawlReport,
    started: Instant,
}

impl Run {
    async fn fail(&mut self, sink: &mut dyn PageSink, url: &Url, error: &CrawlError) {
        *self.report.stats.errors.entry(error.kind()).or_default() += 1;
        if let CrawlError::NotRendered { reason, .. } = error {
            self.report
                .not_rendered
                .push((url.to_string(), reason.clone()));
        }
        self.report.failures.push(CrawlFailure {
            url: url.to_string(),
            kind: error.kind(),
            reason: error.to_string(),
        });
        sink.failure(url, error).await;
    }

    async fn settle(
        &mut self,
        sink: &mut dyn PageSink,
        frontier: &mut Frontier,
        item: &Item,
        result: Result<Fetched, Failure>,
    ) -> Result<(), CrawlError> {
        match result {
            Ok(Fetched::Page(page, links)) => {
                self.report.fetched += 1;
                self.report.stats.pages += 1;
                self.report.stats.rendered += usize::from(page.rendered);
                frontier.add_links(item, &page.url, links);
                sink.page(*page).await.map_err(CrawlError::Sink)?;
            }
            Ok(Fetched::NotRendered(error, final_url, links)) => {
                // Its text is unknown, so it is not a page (never "no match"), but its links
                // were read from the HTML as served and are followed.
                frontier.add_links(item, &final_url, links);
                self.fail(sink, &item.url, &error).await;
            }
            Ok(Fetched::NotModified(final_url)) => {
                frontier.mark_redirect_target(item, &final_url);
                self.report.stats.not_modified += 1;
                sink.not_modified(&item.url).await;
            }
            Err(Failure::Disallowed) => self.report.disallowed_by_robots += 1,
            Err(Failure::Internal(message)) => {
                let error = CrawlError::Internal {
                    url: item.url.to_string(),
                    message,
                };
                tracing::error!(%error, "crawl task failed");
                self.fail(sink, &item.url, &error).await;
            }
            Err(Failure::Crawl(error)) => {
                tracing::info!(url = %item.url, %error, "fetch failed");
                self.fail(sink, &item.url, &error).await;
            }
        }
        Ok(())
    }

    fn snapshot(&mut self, shared: &Shared) {
        let stats = &mut self.report.stats;
        shared.fetcher.counters.fill(stats);
        stats.render_skipped = shared.render_memory.skipped();
        stats.disallowed_by_robots = self.report.disallowed_by_robots;
        stats.elapsed = self.started.elapsed();
    }

    fn progress(
        &mut self,
        sink: &mut dyn PageSink,
        frontier: &Frontier,
        shared: &Shared,
        in_flight: usize,
    ) {
        self.snapshot(shared);
        self.report.stats.link_limits = frontier.link_limits;
        sink.progress(&CrawlProgress {
            stats: self.report.stats.clone(),
            queued: frontier.queued(),
            in_flight,
        });
    }
}

enum Failure {
    Disallowed,
    Crawl(CrawlError),
    Internal(String),
}

enum Fetched {
    Page(Box<FetchedPage>, Vec<Link>),
    /// A page that needed rendering and could not be rendered (with the URL that answered and
    /// the links of its static HTML).
    NotRendered(Box<CrawlError>, Url, Vec<Link>),
    /// A conditional request answered 304 (with the URL that answered).
    NotModified(Url),
}

struct Outcome {
    /// Whether the page itself was requested (counts against `max_pages`).
    requested: bool,
    result: Result<Fetched, Failure>,
}

impl Outcome {
    fn not_requested(result: Result<Fetched, Failure>) -> Self {
        Self {
            requested: false,
            result,
        }
    }

    fn requested(result: Result<Fetched, Failure>) -> Self {
        Self {
            requested: true,
            result,
        }
    }
}

async fn page_task(shared: Arc<Shared>, item: Item, turn_taken: bool) -> TaskOutput {
    TaskOutput::Page(page_outcome(&shared, &item, turn_taken).await)
}

async fn page_outcome(shared: &Arc<Shared>, item: &Item, turn_taken: bool) -> Outcome {
    let url = &item.url;
    // Literal hosts are refused before robots.txt is even asked for.
    if let Err(e) = shared.fetcher.policy().check_host_literal(url) {
        return Outcome::requested(Err(Failure::Crawl(CrawlError::from_guard(url, &e))));
    }
    match shared.gate.prepare(&shared.fetcher, url).await.0 {
        Verdict::Allowed => {}
        Verdict::Disallowed => return Outcome::not_requested(Err(Failure::Disallowed)),
        Verdict::Unavailable { origin, reason } => {
            return Outcome::not_requested(Err(Failure::Crawl(CrawlError::RobotsUnavailable {
                url: url.clone(),
                origin,
                reason,
            })));
        }
    }
    Outcome::requested(fetch_page(shared, item, turn_taken).await)
}

async fn fetch_page(
    shared: &Arc<Shared>,
    item: &Item,
    turn_taken: bool,
) -> Result<Fetched, Failure> {
    let validators = shared.validators.get(item.url.as_str());
    let options = RequestOptions {
        gate: Some(&shared.gate),
        first_turn_taken: turn_taken,
        validators,
    };
    let (final_url, mut response) = match shared.fetcher.get(&item.url, options).await {
        Ok(ok) => ok,
        Err(FetchFailure::Disallowed) => return Err(Failure::Disallowed),
        Err(FetchFailure::Failed(e)) => return Err(Failure::Crawl(e)),
    };
    let fetched_at = chrono::Utc::now();
    let status = response.status();
    if status.as_u16() == 304 && validators.is_some() {
        return Ok(Fetched::NotModified(final_url));
    }
    if !status.is_success() {
        return Err(Failure::Crawl(CrawlError::HttpStatus {
            url: final_url,
            status: status.as_u16(),
        }));
    }
    let content_type = header_string(response.headers(), header::CONTENT_TYPE);
    let kind = content_kind(content_type.as_deref());
    if let ContentKind::Other(mime) = kind {
        return Err(Failure::Crawl(CrawlError::NotHtml {
            url: final_url,
            content_type: mime,
        }));
    }
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    let new_validators = Validators {
        etag: header_string(response.headers(), header::ETAG),
        last_modified: header_string(response.headers(), header::LAST_MODIFIED),
    };
    let limit = shared.config.max_body_bytes;
    let body = shared
        .fetcher
        .read_body(&final_url, &mut response, limit, false)
        .await
        .map_err(Failure::Crawl)?;
    drop(response);
    if kind == ContentKind::Unknown && !sniff_html(&body) {
        return Err(Failure::Crawl(CrawlError::NotHtml {
            url: final_url,
            content_type: "unknown".into(),
        }));
    }
    if looks_binary(&body) {
        return Err(Failure::Crawl(CrawlError::NotHtml {
            url: final_url,
            content_type: "binary data".into(),
        }));
    }

    // Parsing a few megabytes of HTML takes long enough to keep off the async workers.
    let base = final_url.clone();
    let for_decision = shared.clone();
    let parsed = tokio::task::spawn_blocking(move || {
        let (html, encoding) = decode::decode_html(&body, content_type.as_deref(), Some(&base));
        let doc = extract::parse_html(&html);
        let (title, text) = extract::title_and_text(&doc);
        let links = links::discover_in(&doc, &base);
        let decision = for_decision.render_decision(&doc, &text, links.len(), &base);
        (title, text, links, encoding, body, decision.with_html(html))
    })
    .await;
    let (mut title, mut text, mut links, encoding, body, mut to_render) =
        parsed.map_err(|e| Failure::Internal(e.to_string()))?;
    // A page that would be rendered only for the site's script files nobody has read: read
    // them (once a crawl each), and decide again.
    if let ToRender::AfterReading(files, html) = to_render {
        for file in &files {
            shared.read_script_file(file).await;
        }
        let (for_decision, base, links_len) = (shared.clone(), final_url.clone(), links.len());
        let text_now = text.clone();
        to_render = tokio::task::spawn_blocking(move || {
            let doc = extract::parse_html(&html);
            let decision = for_decision.render_decision(&doc, &text_now, links_len, &base);
            match decision.with_html(html) {
                // Files that could not be read are known as may-write now, so this is rare:
                // a page naming more files than one reading takes.
                ToRender::AfterReading(_, html) => {
                    ToRender::Now(html, Some(Template::of(&base, &doc)))
                }
                decided => decided,
            }
        })
        .await
        .map_err(|e| Failure::Internal(e.to_string()))?;
    }
    let to_render = match to_render {
        ToRender::No => None,
        ToRender::Now(html, template) => Some((html, template)),
        // Not reached (decided again above); rendering is the side that loses no text.
        ToRender::AfterReading(_, html) => Some((html, None)),
    };
    // In auto mode, a template whose renders never gained text keeps its static text.
    let to_render = match to_render {
        Some((_, Some(template))) if !shared.render_memory.admit(template).await => None,
        to_render => to_render,
    };
    let mut rendered = false;
    let mut rendering = None;
    if let Some((html, template)) = to_render {
        let dom = shared
            .renderer
            .render(Arc::downgrade(shared), &final_url, html)
            .await;
        match dom {
            Ok(mut capture) => {
                let base = final_url.clone();
                let dom = std::mem::take(&mut capture.dom);
                let read = tokio::task::spawn_blocking(move || {
                    let doc = extract::parse_html(&dom);
                    let (title, text) = extract::title_and_text(&doc);
                    (title, text, links::discover_in(&doc, &base), dom)
                })
                .await
                .map_err(|e| Failure::Internal(e.to_string()))?;
                capture.dom = read.3;
                rendering = Some(capture);
                // The rendered DOM holds what the served HTML did, and what scripts added.
                if let Some(template) = template {
                    let gained = render::decide::gained_text(&text, &read.1);
                    shared.render_memory.record(template, Some(gained));
                }
                title = read.0.or(title);
                text = read.1;
                let known: HashSet<Url> = links.iter().map(|l| l.url.clone()).collect();
                links.extend(read.2.into_iter().filter(|l| !known.contains(&l.url)));
                rendered = true;
            }
            Err(reason) => {
                if let Some(template) = template {
                    shared.render_memory.record(template, None);
                }
                let error = CrawlError::NotRendered {
                    url: final_url.clone(),
                    reason,
                };
                return Ok(Fetched::NotRendered(Box::new(error), final_url, links));
            }
        }
    }
    let page = FetchedPage {
        requested_url: item.url.clone(),
        url: final_url,
        status: status.as_u16(),
        title,
        text,
        encoding,
        fetched_at,
        depth: item.depth,
        validators: new_validators,
        headers,
        body,
        rendered,
        rendering,
    };
    Ok(Fetched::Page(Box::new(page), links))
}

fn header_string(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Reads the sitemaps of `seed`'s origin: those robots.txt lists, else `/sitemap.xml`, and the
/// files a sitemap index lists, up to [`MAX_SITEMAP_FILES`]. Every file is fetched like a page
/// (guarded, robots-checked, paced, retried); a missing or broken file is skipped quietly.
/// Whether a page goes to the browser, as its task carries it (with its HTML when it may).
enum ToRender {
    No,
    Now(String, Option<Template>),
    /// After the site's script files at these addresses are read.
    AfterReading(Vec<Url>, String),
}

/// [`ToRender`] before the page's HTML is attached.
enum PageDecision {
    Static,
    Render(Option<Template>),
    ReadScripts(Vec<Url>),
}

impl PageDecision {
    fn with_html(self, html: String) -> ToRender {
        match self {
            PageDecision::Static => ToRender::No,
            PageDecision::Render(template) => ToRender::Now(html, template),
            PageDecision::ReadScripts(files) => ToRender::AfterReading(files, html),
        }
    }
}

/// Largest script file read for a rendering decision; a larger one may write.
const MAX_SCRIPT_FILE_BYTES: usize = 2 << 20;

impl Shared {
    /// Whether the page `doc` served at `page` (with its extracted `text` and number of
    /// `links`) goes to the browser under the crawl's render mode, with its template in auto
    /// mode (for [`RenderMemory`]).
    fn render_decision(&self, doc: &Html, text: &str, links: usize, page: &Url) -> PageDecision {
        match self.config.render {
            RenderMode::Never => PageDecision::Static,
            RenderMode::Always => PageDecision::Render(None),
            RenderMode::Auto => {
                let known = |file: &Url| self.known_script_file(file);
                match decide::decide(doc, text, links, page, &known) {
                    Decision::Static => PageDecision::Static,
                    Decision::Render(_) => PageDecision::Render(Some(Template::of(page, doc))),
                    Decision::ReadScripts(files) => PageDecision::ReadScripts(files),
                }
            }
        }
    }

    fn known_script_file(&self, file: &Url) -> Option<ScriptFile> {
        let files = self.script_files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(file).and_then(|cell| cell.get().copied())
    }

    /// What the site's script file at `file` does, read once a crawl (pages asking while it is
    /// read wait for that one reading). One that cannot be read may write.
    async fn read_script_file(&self, file: &Url) -> ScriptFile {
        let cell = {
            let mut files = self.script_files.lock().unwrap_or_else(|e| e.into_inner());
            files.entry(file.clone()).or_default().clone()
        };
        *cell
            .get_or_init(|| async {
                match fetch_script_file(self, file).await {
                    Ok(source) => decide::read_script_file(&source),
                    Err(reason) => {
                        tracing::debug!(%file, %reason, "script file not read; it may write");
                        ScriptFile::MayWrite
                    }
                }
            })
            .await
    }
}

async fn fetch_script_file(shared: &Shared, url: &Url) -> Result<String, String> {
    let limit = shared.config.max_body_bytes.min(MAX_SCRIPT_FILE_BYTES);
    let body = fetch_resource(shared, url, limit, false).await?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The body of a resource the crawl reads besides its pages (a sitemap, a script file), through
/// the same address guard, robots rules and politeness; an error says why in a few words.
async fn fetch_resource(
    shared: &Shared,
    url: &Url,
    limit: usize,
    truncate: bool,
) -> Result<Vec<u8>, String> {
    if shared.fetcher.policy().check_host_literal(url).is_err() {
        return Err("refused address".into());
    }
    if shared.gate.prepare(&shared.fetcher, url).await.0 != Verdict::Allowed {
        return Err("not allowed by robots.txt".into());
    }
    let options = RequestOptions {
        gate: Some(&shared.gate),
        ..RequestOptions::default()
    };
    let (final_url, mut response) = match shared.fetcher.get(url, options).await {
        Ok(ok) => ok,
        Err(FetchFailure::Disallowed) => return Err("redirected to a disallowed URL".into()),
        Err(FetchFailure::Failed(e)) => return Err(e.to_string()),
    };
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status().as_u16()));
    }
    shared
        .fetcher
        .read_body(&final_url, &mut response, limit, truncate)
        .await
        .map_err(|e| e.to_string())
}

async fn sitemap_task(shared: Arc<Shared>, seed: Url) -> TaskOutput {
    let (_, robots) = shared.gate.prepare(&shared.fetcher, &seed).await;
    if matches!(*robots, HostRobots::Unavailable(_)) {
        return TaskOutput::Sitemap(Vec::new());
    }
    let mut queue: std::collections::VecDeque<Url> = robots.sitemaps().into();
    if queue.is_empty() {
        let mut default = seed.clone();
        default.set_path("/sitemap.xml");
        default.set_query(None);
        queue.push_back(default);
    }
    let mut visited = HashSet::new();
    let mut pages = Vec::new();
    while let Some(url) = queue.pop_front() {
        if visited.len() >= MAX_SITEMAP_FILES {
            break;
        }
        let url = normalize(&url);
        if !visited.insert(url.to_string()) {
            continue;
        }
        match read_sitemap(&shared, &url).await {
            Ok(found) => {
                pages.extend(found.pages);
                queue.extend(found.sitemaps);
            }
            Err(reason) => tracing::info!(%url, %reason, "sitemap skipped"),
        }
    }
    TaskOutput::Sitemap(pages)
}

async fn read_sitemap(shared: &Shared, url: &Url) -> Result<sitemap::Sitemap, String> {
    let limit = shared.config.max_body_bytes;
    let body = fetch_resource(shared, url, limit, true).await?;
    Ok(
        tokio::task::spawn_blocking(move || sitemap::parse(&body, limit))
            .await
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crawl_future_can_be_spawned_on_a_multi_threaded_runtime() {
        fn assert_send<T: Send>(_: &T) {}
        let config = CrawlConfig::default();
        let mut sink: Vec<FetchedPage> = Vec::new();
        let future = crawl(&config, &[], &mut sink);
        assert_send(&future);
    }

    #[tokio::test]
    async fn an_invalid_pattern_stops_the_crawl_before_any_request() {
        let config = CrawlConfig {
            include_patterns: vec!["[".into()],
            ..CrawlConfig::default()
        };
        let seeds = [Url::parse("http://example.invalid/").unwrap()];
        let err = crawl(&config, &seeds, &mut Vec::new()).await.unwrap_err();
        assert!(matches!(err, CrawlError::InvalidPattern { .. }), "{err}");
        assert!(err.is_fatal());
    }
}
