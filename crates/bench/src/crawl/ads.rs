//! `copytrace-bench crawl-ads`: what `--render auto` costs on a site whose text no script
//! writes but whose every page carries inline ad and analytics scripts (issue 38's second
//! site, where `auto` took 3.6 times as long as `never`): the same crawl with `--render never`
//! and `--render auto`, alternating, in one run, and the pages the rule before issue 38 would
//! have rendered on the same site.
//!
//! The site is generated in memory from one seed and served by axum on a loopback port, from a
//! thread of its own:
//! * `/news/S/N.html`: `--articles` articles of 1 to 3 KB of Chinese prose in an
//!   `article-content` (or, in every other section, a `#content`) element, with tag links and
//!   a related list;
//! * `/list/N.html`: one list page per 40 articles (links only, a pager);
//! * `/tag/N.html`: one tag page per 8 articles: a line and 3 to 12 links, short;
//! * `/`: the home page, linking every list page.
//!
//! Every page loads jQuery by address and carries inline ad and analytics scripts, a varying
//! few of: an `innerHTML` banner, a `document.write` of an ad server's script, a CNZZ counter
//! written with `document.write(unescape(…))`, Baidu Tongji, AdSense, a tracking pixel written
//! with `document.write`, and a jQuery `.html(…)` of an app advert. The ad scripts' addresses
//! answer 404 (as blocked ads do).
//!
//! Each crawl starts from `/` with politeness off (no host delay, per-host concurrency =
//! concurrency), on a fresh tokio runtime, with a sink that checks every page of the site was
//! fetched once with text. The output ends with
//! `RESULT never_s=… auto_s=… ratio=… rendered=… render_skipped=… old_rule_rendered=… pages=…`.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use copytrace_crawler::{CrawlConfig, CrawlError, FetchedPage, PageSink, RenderMode};
use url::Url;

use super::ads_site::AdSite;
use super::cpu;

/// Options of `copytrace-bench crawl-ads`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Article pages (plus one list page per 40, one tag page per 8, and the home page).
    #[arg(long, default_value_t = 6_000)]
    articles: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Rounds; each crawls the site with `never` and with `auto`, the first of the two
    /// alternating (medians are reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The Chromium executable (default: `chromium` on `PATH`).
    #[arg(long)]
    chromium: Option<PathBuf>,
    /// Every page also loads the site's own `/static/js/common.js` (which writes nothing): a
    /// script the rules cannot tell from one that writes, so short pages without a content
    /// element go to the template trials.
    #[arg(long)]
    common_script: bool,
}

/// Serves `site` on a loopback port from a thread of its own.
fn serve(site: &AdSite) -> Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .context("cannot bind a loopback port for the site")?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    let mut files: HashMap<String, (&'static str, Vec<u8>)> = site
        .pages
        .iter()
        .map(|(p, h)| {
            (
                p.clone(),
                ("text/html; charset=utf-8", h.clone().into_bytes()),
            )
        })
        .collect();
    files.insert(
        "/robots.txt".to_owned(),
        ("text/plain", b"User-agent: *\nAllow: /\n".to_vec()),
    );
    files.insert(
        "/static/js/common.js".to_owned(),
        (
            "application/javascript",
            b"window.siteReady = true;".to_vec(),
        ),
    );
    files.insert(
        "/static/js/jquery.min.js".to_owned(),
        (
            "application/javascript",
            b"window.jQuery = window.$ = function () { return { html: function () {} }; };"
                .to_vec(),
        ),
    );
    let files = Arc::new(files);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime for the site");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            let app = Router::new()
                .route("/", get(home))
                .route("/{*path}", get(file))
                .with_state(files);
            axum::serve(listener, app).await.expect("the site");
        });
    });
    Ok(address)
}

type Files = Arc<HashMap<String, (&'static str, Vec<u8>)>>;

async fn home(State(files): State<Files>) -> Response {
    serve_path(&files, "/")
}

async fn file(State(files): State<Files>, Path(path): Path<String>) -> Response {
    serve_path(&files, &format!("/{path}"))
}

fn serve_path(files: &Files, path: &str) -> Response {
    match files.get(path) {
        Some((kind, body)) => ([(header::CONTENT_TYPE, *kind)], body.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// The rule before issue 38, for the count of pages it renders: static text under 200
/// characters, and scripts, and an inline script calling a writing function or fewer than 40
/// links.
fn old_rule(html: &str, url: &Url) -> bool {
    const CALLS: [&str; 12] = [
        "document.write",
        "innerhtml",
        "insertadjacenthtml",
        "textcontent",
        "innertext",
        "atob(",
        "decodeuricomponent(",
        "unescape(",
        "fetch(",
        "xmlhttprequest",
        ".html(",
        ".load(",
    ];
    let doc = copytrace_crawler::extract::parse_html(html);
    let (_, text) = copytrace_crawler::extract::title_and_text(&doc);
    let links = copytrace_crawler::links::discover_in(&doc, url).len();
    if text.chars().filter(|c| !c.is_whitespace()).count() >= 200 {
        return false;
    }
    let lower = html.to_ascii_lowercase();
    let mut any = false;
    let mut writes = false;
    let mut rest = lower.as_str();
    while let Some(start) = rest.find("<script") {
        any = true;
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else {
            break;
        };
        let body_end = after[open_end + 1..]
            .find("</script")
            .map_or(after.len(), |e| open_end + 1 + e);
        if CALLS
            .iter()
            .any(|c| after[open_end + 1..body_end].contains(c))
        {
            writes = true;
            break;
        }
        rest = &after[body_end..];
    }
    any && (writes || links < 40)
}

/// Counts pages and checks them against the site.
#[derive(Default)]
struct Sink {
    paths: HashSet<String>,
    empty: Vec<String>,
    failures: Vec<String>,
}

#[async_trait::async_trait]
impl PageSink for Sink {
    async fn page(
        &mut self,
        page: FetchedPage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if page.text.trim().is_empty() {
            self.empty.push(page.url.to_string());
        }
        self.paths.insert(page.url.path().to_owned());
        Ok(())
    }

    async fn failure(&mut self, url: &Url, error: &CrawlError) {
        // The ads' own addresses (`/go/…`, `/app/`, written by the ad scripts into a rendered
        // page) answer 404, as blocked ads do; only a page of the site may not fail.
        if !url.path().starts_with("/go/") && url.path() != "/app/" {
            self.failures.push(format!("{url}: {error}"));
        }
    }
}

/// One crawl's figures.
#[derive(Debug, Clone, Copy)]
struct Run {
    seconds: f64,
    pages: usize,
    rendered: usize,
    skipped: usize,
    cpu: f64,
}

fn crawl(
    args: &Args,
    seed: &Url,
    mode: RenderMode,
    chromium: &std::path::Path,
    expected: &HashSet<String>,
) -> Result<Run> {
    let config = CrawlConfig {
        max_pages: expected.len() * 2,
        max_depth: None,
        allow_private_addresses: true,
        concurrency: args.concurrency,
        per_host_concurrency: args.concurrency,
        host_delay: Duration::ZERO,
        render: mode,
        chromium: Some(chromium.to_owned()),
        ..CrawlConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let mut sink = Sink::default();
    let cpu0 = cpu::self_seconds() + cpu::waited_children_seconds();
    let report = runtime.block_on(copytrace_crawler::crawl(
        &config,
        std::slice::from_ref(seed),
        &mut sink,
    ))?;
    drop(runtime);
    let cpu1 = cpu::self_seconds() + cpu::waited_children_seconds();
    if !sink.failures.is_empty() || !sink.empty.is_empty() {
        bail!(
            "{mode}: {} failures ({:?}), {} pages without text ({:?})",
            sink.failures.len(),
            sink.failures.iter().take(3).collect::<Vec<_>>(),
            sink.empty.len(),
            sink.empty.iter().take(3).collect::<Vec<_>>()
        );
    }
    let missing = expected.difference(&sink.paths).count();
    if missing > 0 {
        bail!(
            "{mode}: {missing} of {} pages never fetched",
            expected.len()
        );
    }
    Ok(Run {
        seconds: report.stats.elapsed.as_secs_f64(),
        pages: report.stats.pages,
        rendered: report.stats.rendered,
        skipped: report.stats.render_skipped,
        cpu: cpu1 - cpu0,
    })
}

fn median(runs: &[Run]) -> Run {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    sorted[sorted.len() / 2]
}

/// Runs the benchmark and prints the table and the `RESULT` line.
pub fn run(args: &Args) -> Result<()> {
    if args.articles == 0 || args.concurrency == 0 || args.rounds == 0 {
        bail!("--articles, --concurrency and --rounds must be positive");
    }
    let chromium = match &args.chromium {
        Some(path) => path.clone(),
        None => copytrace_browser::find_chromium(None, std::env::var_os("PATH").as_deref())
            .map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    let site = AdSite::new(args.articles, args.common_script);
    let address = serve(&site)?;
    let base = Url::parse(&format!("http://{address}/"))?;
    let old_rule_rendered = site
        .pages
        .iter()
        .filter(|(path, html)| old_rule(html, &base.join(path).expect("a path")))
        .count();
    let expected: HashSet<String> = site.pages.keys().cloned().collect();
    let bytes: usize = site.pages.values().map(String::len).sum();
    println!(
        "Site: {} pages ({} articles), {:.1} MB, every page with inline ad and analytics scripts{}; \
         concurrency {}; {} cores; load average {:.2}",
        expected.len(),
        args.articles,
        bytes as f64 / 1e6,
        if args.common_script {
            " and common.js"
        } else {
            ""
        },
        args.concurrency,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu::load_average(),
    );
    // Untimed: warms the server, the page cache and the allocator.
    crawl(args, &base, RenderMode::Never, &chromium, &expected)?;
    let (mut never, mut auto) = (Vec::new(), Vec::new());
    // The mode crawled first alternates from round to round: the second crawl of a round
    // meets the allocator and the server as the first left them, which once made `auto`, always
    // second, look up to a fifth slower than it is.
    for round in 1..=args.rounds {
        let order = if round % 2 == 1 {
            [RenderMode::Never, RenderMode::Auto]
        } else {
            [RenderMode::Auto, RenderMode::Never]
        };
        for mode in order {
            let run = crawl(args, &base, mode, &chromium, &expected)?;
            if mode == RenderMode::Never {
                eprintln!("round {round}: never {:.2} s", run.seconds);
                never.push(run);
            } else {
                eprintln!(
                    "round {round}: auto {:.2} s, {} rendered, {} skipped by the template rule",
                    run.seconds, run.rendered, run.skipped
                );
                auto.push(run);
            }
        }
    }
    let (n, a) = (median(&never), median(&auto));
    let ratio = a.seconds / n.seconds;
    println!();
    println!(
        "| --render | runs | wall s | pages | pages/s | rendered | skipped by template | CPU s (crawler and Chromium) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, r) in [("never", n), ("auto", a)] {
        println!(
            "| {name} | median of {} | {:.2} | {} | {:.0} | {} | {} | {:.1} |",
            args.rounds,
            r.seconds,
            r.pages,
            r.pages as f64 / r.seconds,
            r.rendered,
            r.skipped,
            r.cpu
        );
    }
    println!();
    println!(
        "auto ÷ never wall time: {ratio:.3} (per round: {}; target ≤ 1.10)",
        never
            .iter()
            .zip(&auto)
            .map(|(n, a)| format!("{:.3}", a.seconds / n.seconds))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "pages the rule before issue 38 renders on this site: {old_rule_rendered} of {}; this \
         rule: {} (median run)",
        expected.len(),
        a.rendered
    );
    println!(
        "RESULT never_s={:.2} auto_s={:.2} ratio={ratio:.3} rendered={} render_skipped={} \
         old_rule_rendered={old_rule_rendered} pages={} concurrency={}",
        n.seconds,
        a.seconds,
        a.rendered,
        a.skipped,
        expected.len(),
        args.concurrency
    );
    Ok(())
}
