//! `copytrace-bench web`: the admin web under load on PostgreSQL.
//!
//! 1. **Data.** A PostgreSQL database (a throwaway cluster, or `--postgres-url`) is migrated by
//!    the store itself, then filled with `--works` works of `--holders` rights holders (Chinese
//!    titles, authors, 20–60 chapters of `--chapter-bytes` of prose each) and `--matches`
//!    matches on `--matches / --matches-per-page` pages spread over `--sites` sites, each match
//!    with two evidence passages inside one chapter of its work. Pages were first seen over the
//!    last 90 days (more of them recently), sites are Zipf-like (a few big ones), works too (the
//!    most copied has a few hundred copies, the least a few dozen). Review states and statuses
//!    are mixed: about 65 % confirmed, 25 % pending, 8 % rejected, 2 % licensed; of the rest a
//!    fifth removed and a seventh with a notice sent. Writing a million matches one verdict at a
//!    time through the store would take most of an hour, so the rows are generated here and sent
//!    with `COPY … FROM STDIN` (sqlx's `copy_in_raw`) into the migrated tables, indexes and
//!    constraints in place; identity sequences are moved past the ids used, and the database is
//!    `VACUUM ANALYZE`d, as autovacuum would have done on a live server. The load is timed
//!    apart. A database already holding exactly this data set is reused.
//! 2. **Users.** An admin and one account per rights holder are created with
//!    `service::accounts::add_user`. `--users` clients (the first `--admins` of them as the
//!    admin, the others as rights holders in turn) each log in through the real login form (the
//!    `copytrace_csrf` cookie and the form's `csrf` field, then the session cookie), so each has
//!    its own session.
//! 3. **Load.** The real router (`copytrace_admin_web::web::router`) is served on a loopback
//!    port in this process, on the store `copytrace serve` uses (its pool of 10 connections).
//!    Each client loops over `--routes` (by default the dashboard `/`, a random work of its own
//!    `/works/{work}`, and the match list `/matches?page={page}` with a page drawn from
//!    `1..=--list-pages`) for `--duration` seconds or `--requests` rounds. A route that answers
//!    404 to the admin before the run is reported as missing and left out of the loop.
//!
//! 4. **Background** (`--background-sites N`, default 0: none). During the measured load, and
//!    only then, `N` generated sites on loopback ports are crawled, and the pages stored are
//!    matched, by real `copytrace worker crawl` and `copytrace worker match` processes writing
//!    to the same database (see [`crate::background`]). What they did during the load (pages
//!    stored, match jobs done, matches recorded, the match backlog left, their CPU time) is read
//!    from the database and `/proc` and reported. The match worker fingerprints the library
//!    when it starts (the data set is loaded without fingerprints): with the default 10,000
//!    works that takes many minutes, so `--works 2000 --matches 200000` suits a small machine.
//!    The database then holds more pages and matches than the data set: the next run needs a
//!    fresh one (a throwaway cluster, the default, is).
//!
//! Latency is from sending the request to the end of the body, per route and role, from the
//! sorted samples (nearest rank). Any answer but 200 is an error; the error rate is errors ÷
//! requests. It ends with `RESULT works=… matches=… users=… req_s=… requests=… errors=…
//! error_rate=… background_sites=… [background_pages_stored=… background_match_jobs_done=…
//! …] <route>_<role>_p50_ms=… <route>_<role>_p99_ms=… … target=met|missed`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use chrono::{DateTime, Utc};
use copytrace_admin_web::web::{WebState, router};
use copytrace_service::accounts;
use copytrace_store::postgres::PostgresStore;
use copytrace_store::{Role, Store};
use sqlx::{Connection, PgConnection};

/// Options of `copytrace-bench web`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// PostgreSQL database to use (`postgres://USER@HOST:PORT/DATABASE`): migrated, and loaded
    /// when empty; reused when it already holds this data set. Without it a throwaway cluster
    /// is started and stopped.
    #[arg(long)]
    postgres_url: Option<String>,
    /// Works in the library.
    #[arg(long, default_value_t = 10_000)]
    works: usize,
    /// Matches recorded.
    #[arg(long, default_value_t = 1_000_000)]
    matches: usize,
    /// Rights holders the works belong to (in turn).
    #[arg(long, default_value_t = 20)]
    holders: usize,
    /// Sites the pages are on.
    #[arg(long, default_value_t = 2_000)]
    sites: usize,
    /// Matches per page (distinct works).
    #[arg(long, default_value_t = 2)]
    matches_per_page: usize,
    /// Bytes of prose per chapter (20–60 chapters a work).
    #[arg(long, default_value_t = 3_000)]
    chapter_bytes: usize,
    /// Concurrent clients, each with its own session.
    #[arg(long, default_value_t = 20)]
    users: usize,
    /// How many of the clients are the admin (the others are rights holders).
    #[arg(long, default_value_t = 4)]
    admins: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// Rounds over the routes per client instead of `--duration`.
    #[arg(long)]
    requests: Option<u64>,
    /// Routes each client requests in turn, `NAME=PATH`, comma-separated; `{work}` is a random
    /// work of the client's (all works for the admin), `{page}` a page in 1..=--list-pages.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [
            "dashboard=/".to_owned(),
            "work=/works/{work}".to_owned(),
            "matches=/matches?page={page}".to_owned(),
        ]
    )]
    routes: Vec<String>,
    /// Highest page `{page}` stands for.
    #[arg(long, default_value_t = 10)]
    list_pages: u64,
    /// Unmeasured rounds per client before the measured run (their slowest answer per route is
    /// printed apart: the first visit of each tenant fills the dashboard's cache).
    #[arg(long, default_value_t = 1)]
    warmup_rounds: u64,
    /// The p99 every route must stay under, in milliseconds.
    #[arg(long, default_value_t = 300.0)]
    target_p99_ms: f64,
    /// Local sites crawled, and their pages matched, by `copytrace worker` processes on the same
    /// database during the measured load (0: the store is otherwise idle).
    #[arg(long, default_value_t = 0)]
    background_sites: usize,
    /// Chapter pages of each background site (plus a home page and a table of contents per
    /// 200 chapters).
    #[arg(long, default_value_t = 3_000)]
    background_pages: usize,
    /// The copytrace binary of the background workers (default: beside this one).
    #[arg(long)]
    copytrace: Option<std::path::PathBuf>,
}

/// The password of every generated account.
const PASSWORD: &str = "bench password, not a secret";
/// The admin's account.
const ADMIN_EMAIL: &str = "admin@bench.example";

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.works > 0 && args.holders > 0 && args.sites > 0 && args.users > 0,
        "--works, --holders, --sites and --users must be positive"
    );
    ensure!(
        args.matches_per_page > 0 && args.matches.is_multiple_of(args.matches_per_page),
        "--matches must be a multiple of --matches-per-page"
    );
    ensure!(
        args.matches_per_page <= args.works,
        "--matches-per-page exceeds --works"
    );
    let routes = parse_routes(&args.routes)?;
    let (cluster, url) = crate::pgcluster::server(args.postgres_url.as_deref())?;
    if let Some(cluster) = &cluster {
        println!("throwaway cluster: {}", cluster.version()?);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(bench(args, &url, &routes))?;
    drop(cluster);
    Ok(())
}

/// One route of the loop.
#[derive(Debug, Clone)]
struct Route {
    name: String,
    template: String,
}

fn parse_routes(specs: &[String]) -> Result<Vec<Route>> {
    specs
        .iter()
        .map(|spec| {
            let (name, template) = spec
                .split_once('=')
                .with_context(|| format!("route {spec:?} is not NAME=PATH"))?;
            ensure!(
                template.starts_with('/'),
                "route {spec:?}: the path starts with /"
            );
            Ok(Route {
                name: name.to_owned(),
                template: template.to_owned(),
            })
        })
        .collect()
}

/// A client's role, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Who {
    Admin,
    Holder,
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Admin => "admin",
            Who::Holder => "rights holder",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Who::Admin => "admin",
            Who::Holder => "holder",
        }
    }
}

async fn bench(args: &Args, url: &str, routes: &[Route]) -> Result<()> {
    let store = PostgresStore::connect(url).await?;
    store.migrate().await?;
    let started = Instant::now();
    let loaded = load(args, url, &store).await?;
    let load_s = started.elapsed().as_secs_f64();
    let mut connection = PgConnection::connect(url).await?;
    let (database_mb, works_per_holder) = describe(&mut connection, args).await?;
    connection.close().await?;
    match &loaded {
        Some(timing) => println!(
            "data: {} works of {} holders, {} matches on {} pages of {} sites, loaded in {load_s:.1} s \
             ({timing}); database {database_mb:.0} MB",
            args.works,
            args.holders,
            args.matches,
            args.matches / args.matches_per_page,
            args.sites
        ),
        None => println!(
            "data: {} works, {} matches (reused); database {database_mb:.0} MB",
            args.works, args.matches
        ),
    }

    // The background's workers start (and the match worker loads the library) before the
    // warm-up; their jobs are queued when the measured load starts.
    let background = if args.background_sites > 0 {
        let (background, ready_s) = crate::background::Background::start(
            args.copytrace.as_deref(),
            url,
            args.background_sites,
            args.background_pages,
        )
        .await?;
        println!(
            "background: {} sites of {} pages on loopback ports; crawl and match workers ready \
             in {ready_s:.1} s (the match worker fingerprinted and loaded the library)",
            args.background_sites,
            background.pages_per_site()
        );
        Some(background)
    } else {
        None
    };

    let store: Arc<dyn Store> = Arc::new(store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let app = router(WebState {
        store: store.clone(),
        secure_cookies: false,
        redis: None,
        dashboard: Default::default(),
        imports: Default::default(),
        trusted_proxies: Vec::new(),
        mail: Default::default(),
    })
    .into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    // Log every client in through the login form.
    let mut clients = Vec::new();
    for i in 0..args.users {
        let (who, email, holder) = if i < args.admins {
            (Who::Admin, ADMIN_EMAIL.to_owned(), None)
        } else {
            let holder = (i - args.admins) % args.holders;
            (Who::Holder, holder_email(holder), Some(holder))
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let cookie = login(&http, &base, &email)
            .await
            .with_context(|| format!("{email} cannot log in"))?;
        let works = match holder {
            None => (1..=args.works as i64).collect(),
            Some(h) => works_per_holder[h].clone(),
        };
        clients.push(Client {
            who,
            http,
            cookie,
            works,
            seed: 0x5eed_0000 + i as u64,
        });
    }

    // A route the admin cannot open is not there yet: report it, leave it out.
    let mut present = Vec::new();
    let mut missing = Vec::new();
    let probe = clients
        .iter()
        .find(|c| c.who == Who::Admin)
        .unwrap_or(&clients[0]);
    for route in routes {
        let path = probe.path(&route.template, &mut Rng(1), args.list_pages);
        let status = probe
            .http
            .get(format!("{base}{path}"))
            .header(reqwest::header::COOKIE, &probe.cookie)
            .send()
            .await?
            .status();
        if status == reqwest::StatusCode::NOT_FOUND {
            println!("route {} ({}): 404, missing", route.name, route.template);
            missing.push(route.name.clone());
        } else {
            present.push(route.clone());
        }
    }
    ensure!(!present.is_empty(), "no route answers");

    let present = Arc::new(present);
    let clients: Vec<Arc<Client>> = clients.into_iter().map(Arc::new).collect();
    if args.warmup_rounds > 0 {
        let started = Instant::now();
        let mut cold = round_robin(
            &clients,
            &present,
            &base,
            None,
            Some(args.warmup_rounds),
            args.list_pages,
        )
        .await?;
        let mut line = Vec::new();
        for ((route, who), s) in &mut cold {
            line.push(format!(
                "{route} {} {:.0} ms",
                who.key(),
                s.summary().max_ms
            ));
        }
        println!(
            "warm-up: {} round(s) per client in {:.1} s, slowest answer per route: {}",
            args.warmup_rounds,
            started.elapsed().as_secs_f64(),
            line.join(", ")
        );
    }

    let mut connection = PgConnection::connect(url).await?;
    let before = crate::background::Snapshot::read(&mut connection).await?;
    let cpu_before = background.as_ref().map(|b| b.cpu_seconds());
    if let Some(background) = &background {
        background.enqueue().await?;
    }
    let load_before = loadavg();
    let deadline = Instant::now() + Duration::from_secs_f64(args.duration);
    let run_started = Instant::now();
    let mut samples = round_robin(
        &clients,
        &present,
        &base,
        Some(deadline),
        args.requests,
        args.list_pages,
    )
    .await?;
    let elapsed = run_started.elapsed().as_secs_f64();
    let load_after = loadavg();
    let after = crate::background::Snapshot::read(&mut connection).await?;
    let cpu_after = background.as_ref().map(|b| b.cpu_seconds());
    server.abort();
    let stopped = background.map(|b| b.stop()).unwrap_or_default();
    connection.close().await?;

    let total: usize = samples.values().map(|s| s.latencies_us.len()).sum();
    let errors: u64 = samples
        .values()
        .map(|s| s.errors.values().sum::<u64>())
        .sum();
    let error_rate = errors as f64 / total.max(1) as f64;
    println!(
        "\n{} clients ({} admin, {} rights holders), {total} requests in {elapsed:.1} s: \
         {:.1} requests/s, {errors} errors (error rate {:.4} %); load average {load_before} \
         before, {load_after} after; {} cores, shared with other jobs",
        args.users,
        args.admins.min(args.users),
        args.users.saturating_sub(args.admins),
        total as f64 / elapsed,
        error_rate * 100.0,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let pages_stored = after.pages - before.pages;
    let matches_recorded = after.matches - before.matches;
    let match_done = after.jobs("match", "done") - before.jobs("match", "done");
    let crawl_done = after.jobs("crawl", "done") - before.jobs("crawl", "done");
    let match_backlog = after.jobs("match", "queued") + after.jobs("match", "running");
    let dead = after.jobs("match", "dead") + after.jobs("crawl", "dead")
        - before.jobs("match", "dead")
        - before.jobs("crawl", "dead");
    if let (Some((crawl0, match0)), Some((crawl1, match1))) = (cpu_before, cpu_after) {
        println!(
            "background during the load: {pages_stored} pages stored ({:.1}/s) of {} sites, \
             {match_done} match jobs done ({:.1}/s), {matches_recorded} matches recorded, \
             {match_backlog} match jobs still queued or running, {crawl_done} of {} crawl \
             jobs done, {dead} jobs dead; CPU: crawl worker {:.1} s, match worker {:.1} s",
            pages_stored as f64 / elapsed,
            args.background_sites,
            match_done as f64 / elapsed,
            args.background_sites,
            crawl1 - crawl0,
            match1 - match0
        );
        for line in &stopped {
            println!("  {line}");
        }
    } else if pages_stored != 0 || matches_recorded != 0 {
        println!(
            "note: {pages_stored} pages and {matches_recorded} matches were written during the \
             load by something else"
        );
    }
    println!();
    println!(
        "| route | role | requests | errors | mean ms | p50 ms | p95 ms | p99 ms | max ms | req/s |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut result = format!(
        "RESULT works={} matches={} users={} duration_s={elapsed:.0} req_s={:.1} requests={total} \
         errors={errors} error_rate={error_rate:.5} background_sites={}",
        args.works,
        args.matches,
        args.users,
        total as f64 / elapsed,
        args.background_sites
    );
    if args.background_sites > 0 {
        let _ = write!(
            result,
            " background_pages_stored={pages_stored} background_match_jobs_done={match_done} \
             background_matches={matches_recorded} background_match_backlog={match_backlog} \
             background_crawl_jobs_done={crawl_done} background_dead_jobs={dead}"
        );
    }
    if let Some(load_s) = loaded.as_ref().map(|_| load_s) {
        let _ = write!(result, " load_s={load_s:.0}");
    }
    let mut met = true;
    for route in present.iter() {
        for who in [Who::Admin, Who::Holder] {
            let Some(s) = samples.get_mut(&(route.name.clone(), who)) else {
                continue;
            };
            let stats = s.summary();
            println!(
                "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                route.name,
                who.name(),
                stats.count,
                stats.errors,
                stats.mean_ms,
                stats.p50_ms,
                stats.p95_ms,
                stats.p99_ms,
                stats.max_ms,
                stats.count as f64 / elapsed
            );
            let key = format!("{}_{}", route.name, who.key());
            let _ = write!(
                result,
                " {key}_p50_ms={:.0} {key}_p99_ms={:.0} {key}_errors={}",
                stats.p50_ms, stats.p99_ms, stats.errors
            );
            if stats.p99_ms >= args.target_p99_ms || stats.errors > 0 {
                met = false;
            }
            if let Some(statuses) = s.error_summary() {
                println!("  ({} {}: {statuses})", route.name, who.name());
            }
        }
    }
    for name in &missing {
        println!("| {name} | – | missing (404) | | | | | | | |");
        let _ = write!(result, " {name}=missing");
        met = false;
    }
    let _ = write!(
        result,
        " target_p99_ms={} target={}",
        args.target_p99_ms,
        if met { "met" } else { "missed" }
    );
    println!("\n{result}");
    Ok(())
}

/// Runs every client over `routes` until `deadline` or for `rounds`; the samples per route
/// and role.
async fn round_robin(
    clients: &[Arc<Client>],
    routes: &Arc<Vec<Route>>,
    base: &str,
    deadline: Option<Instant>,
    rounds: Option<u64>,
    list_pages: u64,
) -> Result<BTreeMap<(String, Who), Samples>> {
    let deadline = deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
    let mut tasks = Vec::new();
    for client in clients {
        let (client, routes, base) = (client.clone(), routes.clone(), base.to_owned());
        tasks.push(tokio::spawn(async move {
            client
                .run(&base, &routes, deadline, rounds, list_pages)
                .await
        }));
    }
    let mut samples: BTreeMap<(String, Who), Samples> = BTreeMap::new();
    for task in tasks {
        for ((route, who), s) in task.await?? {
            samples.entry((route, who)).or_default().merge(s);
        }
    }
    Ok(samples)
}

/// Logs in through the form; returns the session's `Cookie` header value.
async fn login(http: &reqwest::Client, base: &str, email: &str) -> Result<String> {
    let form = http.get(format!("{base}/login")).send().await?;
    ensure!(form.status().is_success(), "GET /login: {}", form.status());
    let csrf_cookie = set_cookie(&form, "copytrace_csrf").context("no copytrace_csrf cookie")?;
    let html = form.text().await?;
    let start = html
        .find("name=\"csrf\" value=\"")
        .context("no csrf field in the login form")?
        + 19;
    let end = start + html[start..].find('"').context("unterminated csrf field")?;
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("csrf", &html[start..end])
        .append_pair("email", email)
        .append_pair("password", PASSWORD)
        .finish();
    let response = http
        .post(format!("{base}/login"))
        .header(reqwest::header::COOKIE, csrf_cookie)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await?;
    ensure!(
        response.status() == reqwest::StatusCode::SEE_OTHER,
        "POST /login: {}",
        response.status()
    );
    set_cookie(&response, "copytrace_session").context("no session cookie")
}

/// `name=value` of the response's `Set-Cookie` for `name`.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .and_then(|v| v.split(';').next())
        .map(str::to_owned)
}

/// A logged-in client.
struct Client {
    who: Who,
    http: reqwest::Client,
    cookie: String,
    /// The works it may open.
    works: Vec<i64>,
    seed: u64,
}

impl Client {
    fn path(&self, template: &str, rng: &mut Rng, list_pages: u64) -> String {
        let mut path = template.to_owned();
        if path.contains("{work}") {
            let work = self.works[rng.below(self.works.len() as u64) as usize];
            path = path.replace("{work}", &work.to_string());
        }
        if path.contains("{page}") {
            let page = 1 + rng.below(list_pages.max(1));
            path = path.replace("{page}", &page.to_string());
        }
        path
    }

    async fn run(
        &self,
        base: &str,
        routes: &[Route],
        deadline: Instant,
        rounds: Option<u64>,
        list_pages: u64,
    ) -> Result<Vec<((String, Who), Samples)>> {
        // Rounds counted (the warm-up) draw other works than a run against the clock.
        let mut rng = Rng(self.seed ^ u64::from(rounds.is_some()) << 40);
        let mut samples: Vec<Samples> = routes.iter().map(|_| Samples::default()).collect();
        let mut round = 0;
        loop {
            match rounds {
                Some(n) if round >= n => break,
                None if Instant::now() >= deadline => break,
                _ => {}
            }
            round += 1;
            for (route, s) in routes.iter().zip(&mut samples) {
                let path = self.path(&route.template, &mut rng, list_pages);
                let started = Instant::now();
                let outcome = async {
                    let response = self
                        .http
                        .get(format!("{base}{path}"))
                        .header(reqwest::header::COOKIE, &self.cookie)
                        .send()
                        .await?;
                    let status = response.status();
                    response.bytes().await?;
                    Ok::<_, reqwest::Error>(status)
                }
                .await;
                let us = started.elapsed().as_micros() as u64;
                s.latencies_us.push(us);
                match outcome {
                    Ok(status) if status == reqwest::StatusCode::OK => {}
                    Ok(status) => s.error(status.as_u16().to_string()),
                    Err(error) => s.error(format!("{error}")),
                }
            }
        }
        Ok(routes
            .iter()
            .map(|r| (r.name.clone(), self.who))
            .zip(samples)
            .collect())
    }
}

/// Latencies and errors of one route and role.
#[derive(Default)]
struct Samples {
    latencies_us: Vec<u64>,
    errors: BTreeMap<String, u64>,
}

struct Summary {
    count: usize,
    errors: u64,
    mean_ms: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

impl Samples {
    fn error(&mut self, what: String) {
        *self.errors.entry(what).or_insert(0) += 1;
    }

    fn merge(&mut self, other: Samples) {
        self.latencies_us.extend(other.latencies_us);
        for (what, n) in other.errors {
            *self.errors.entry(what).or_insert(0) += n;
        }
    }

    fn summary(&mut self) -> Summary {
        self.latencies_us.sort_unstable();
        let v = &self.latencies_us;
        let ms = |us: u64| us as f64 / 1000.0;
        // Nearest rank: the smallest sample with at least q of the samples at or below it.
        let rank = |q: f64| {
            if v.is_empty() {
                0.0
            } else {
                ms(v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1])
            }
        };
        Summary {
            count: v.len(),
            errors: self.errors.values().sum(),
            mean_ms: if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0
            },
            p50_ms: rank(0.50),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
            max_ms: v.last().copied().map_or(0.0, ms),
        }
    }

    fn error_summary(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| {
            self.errors
                .iter()
                .map(|(what, n)| format!("{n} × {what}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }
}

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn holder_email(holder: usize) -> String {
    format!("holder{:02}@bench.example", holder + 1)
}

const HOLDER_NAMES: [&str; 20] = [
    "青云文学",
    "星河出版",
    "墨香书社",
    "南山文化",
    "北辰阅读",
    "云起书院",
    "紫藤文库",
    "潇湘书局",
    "长风出版社",
    "白鹿文化",
    "赤霞文学",
    "碧海书城",
    "千山阅读",
    "万卷出版",
    "清风书苑",
    "明月文学",
    "金石书局",
    "银河文化",
    "翰林书院",
    "凤鸣出版",
];
const TITLE_A: [&str; 24] = [
    "星辰", "剑", "龙", "仙", "夜", "雪", "风", "山河", "江湖", "帝国", "天道", "长安", "玄", "云",
    "月", "青", "万古", "九州", "神", "凡人", "诡秘", "盛世", "大唐", "都市",
];
const TITLE_B: [&str; 16] = [
    "之主", "传", "记", "录", "行", "变", "劫", "歌", "志", "梦", "令", "诀", "纪元", "之门",
    "少年", "修仙",
];
const SURNAMES: [&str; 16] = [
    "李", "王", "张", "刘", "陈", "杨", "赵", "黄", "周", "吴", "徐", "孙", "胡", "朱", "高", "林",
];
const GIVEN: [&str; 16] = [
    "一", "墨", "青", "子", "三", "风", "小", "鱼", "辰", "东", "白", "夜", "川", "舟", "然", "安",
];
const CHAPTER_WORDS: [&str; 12] = [
    "雨夜", "初见", "离别", "归来", "风起", "对决", "秘密", "长夜", "黎明", "故人", "山门", "旧梦",
];
const HOST_WORDS: [&str; 16] = [
    "biquge", "xiaoshuo", "shuba", "dingdian", "quanben", "wenxue", "yuedu", "kanshu", "txt",
    "novel", "shuge", "bqg", "xbiquge", "69shu", "uukanshu", "ddxs",
];
const HOST_TLDS: [&str; 8] = [
    ".com", ".net", ".org", ".cc", ".la", ".info", ".com.cn", ".xyz",
];
const METHODS: [&str; 3] = ["simhash+align", "minhash+align", "dna+align"];

/// Appends `value` as a field of PostgreSQL's COPY text format.
fn field(buf: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => buf.push_str("\\\\"),
            '\n' => buf.push_str("\\n"),
            '\r' => buf.push_str("\\r"),
            '\t' => buf.push_str("\\t"),
            c => buf.push(c),
        }
    }
}

/// A timestamp as COPY reads `timestamptz`.
fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.6f+00").to_string()
}

/// Bytes buffered before a chunk is sent.
const CHUNK: usize = 4 << 20;

/// Sends `count` rows, written by `row` in COPY's text format (tab-separated fields, without
/// the line end), into `table (columns)` with one `COPY … FROM STDIN`; returns the rows copied.
async fn copy_rows<F>(
    connection: &mut PgConnection,
    table: &str,
    columns: &str,
    count: usize,
    mut row: F,
) -> Result<u64>
where
    F: FnMut(usize, &mut String),
{
    let statement = format!("COPY {table} ({columns}) FROM STDIN");
    let mut copy = connection.copy_in_raw(&statement).await?;
    let mut buf = String::with_capacity(CHUNK + 64 * 1024);
    for i in 0..count {
        row(i, &mut buf);
        buf.push('\n');
        if buf.len() >= CHUNK {
            copy.send(buf.as_bytes()).await?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        copy.send(buf.as_bytes()).await?;
    }
    Ok(copy.finish().await?)
}

/// The generated library, kept for the rows that refer to it.
struct Library {
    /// Holder index (0-based) of each work, by work index (id − 1).
    holder: Vec<usize>,
    /// Byte offset where each chapter starts, and the work's length, per work.
    chapter_starts: Vec<Vec<u64>>,
    /// Page text hash, by page index.
    page_hashes: Vec<String>,
    /// First seen of each page.
    page_seen: Vec<DateTime<Utc>>,
    /// Title of each work.
    titles: Vec<String>,
}

/// Loads the data set unless the database holds it already; returns how the time was spent,
/// or `None` when it was reused.
async fn load(args: &Args, url: &str, store: &PostgresStore) -> Result<Option<String>> {
    let mut connection = PgConnection::connect(url).await?;
    let works: i64 = sqlx::query_scalar("SELECT count(*) FROM works")
        .fetch_one(&mut connection)
        .await?;
    let matches: i64 = sqlx::query_scalar("SELECT count(*) FROM matches")
        .fetch_one(&mut connection)
        .await?;
    if works as usize == args.works && matches as usize == args.matches {
        connection.close().await?;
        return Ok(None);
    }
    if works != 0 || matches != 0 {
        bail!(
            "the database holds {works} works and {matches} matches, not {} and {}: use an \
             empty database",
            args.works,
            args.matches
        );
    }
    let now = Utc::now();
    let day = chrono::Duration::days(1);
    let mut rng = Rng(0x00c0_ffee);
    let mut timings = Vec::new();

    // Rights holders and their accounts.
    let started = Instant::now();
    let holder_names: Vec<String> = (0..args.holders)
        .map(|h| match h / HOLDER_NAMES.len() {
            0 => HOLDER_NAMES[h].to_owned(),
            n => format!("{}{n}", HOLDER_NAMES[h % HOLDER_NAMES.len()]),
        })
        .collect();
    let holders_created = ts(now - day * 400);
    copy_rows(
        &mut connection,
        "rights_holders",
        "id, name, created_at",
        args.holders,
        |h, buf| {
            let _ = write!(buf, "{}\t", h + 1);
            field(buf, &holder_names[h]);
            let _ = write!(buf, "\t{holders_created}");
        },
    )
    .await?;
    accounts::add_user(store, ADMIN_EMAIL, Role::Admin, None, PASSWORD).await?;
    for (h, name) in holder_names.iter().enumerate() {
        accounts::add_user(
            store,
            &holder_email(h),
            Role::RightsHolder,
            Some(name),
            PASSWORD,
        )
        .await?;
    }
    timings.push(format!(
        "holders and users {:.1} s",
        started.elapsed().as_secs_f64()
    ));

    // Works and their chapters.
    let started = Instant::now();
    let prose = crate::corpus::chinese_prose(4 << 20);
    let mut library = Library {
        holder: Vec::with_capacity(args.works),
        chapter_starts: Vec::with_capacity(args.works),
        page_hashes: Vec::new(),
        page_seen: Vec::new(),
        titles: Vec::with_capacity(args.works),
    };
    let mut chapter_titles: Vec<Vec<String>> = Vec::with_capacity(args.works);
    let mut work_rng = Rng(rng.next());
    let mut work_bytes = 0u64;
    copy_rows(
        &mut connection,
        "works",
        "id, rights_holder_id, external_id, title, content, content_len, content_hash, \
         fingerprint_version, created_at, updated_at, author, published_at, status, \
         withdrawn_at",
        args.works,
        |w, buf| {
            let rng = &mut work_rng;
            let holder = w % args.holders;
            let chapters = 20 + rng.below(41) as usize;
            let mut content = String::with_capacity(chapters * (args.chapter_bytes + 64));
            let mut starts = Vec::with_capacity(chapters + 1);
            let mut titles = Vec::with_capacity(chapters);
            for c in 0..chapters {
                starts.push(content.len() as u64);
                let title = format!("第{}章 {}", c + 1, rng.pick(&CHAPTER_WORDS));
                content.push_str(&title);
                content.push('\n');
                // A slice of the prose starting and ending at a character boundary.
                let mut from = rng.below((prose.len() - args.chapter_bytes - 8) as u64) as usize;
                while !prose.is_char_boundary(from) {
                    from += 1;
                }
                let mut to = from + args.chapter_bytes;
                while !prose.is_char_boundary(to) {
                    to += 1;
                }
                content.push_str(&prose[from..to]);
                content.push('\n');
                titles.push(title);
            }
            starts.push(content.len() as u64);
            work_bytes += content.len() as u64;
            let title = format!(
                "{}{}{}",
                rng.pick(&TITLE_A),
                rng.pick(&TITLE_A),
                rng.pick(&TITLE_B)
            );
            let author = format!(
                "{}{}{}",
                rng.pick(&SURNAMES),
                rng.pick(&GIVEN),
                rng.pick(&GIVEN)
            );
            let created = now - day * (120 + rng.below(600) as i32);
            let published = created - day * rng.below(30) as i32;
            let withdrawn = rng.below(200) == 0;
            let _ = write!(
                buf,
                "{}\t{}\tcn-{:02}-{:06}\t",
                w + 1,
                holder + 1,
                holder + 1,
                w + 1
            );
            field(buf, &title);
            buf.push('\t');
            field(buf, &content);
            let _ = write!(
                buf,
                "\t{}\t{}\t1\t{}\t{}\t",
                content.len(),
                copytrace_store::sha256_hex(content.as_bytes()),
                ts(created),
                ts(created)
            );
            field(buf, &author);
            let _ = write!(
                buf,
                "\t{}\t{}\t{}",
                ts(published),
                if withdrawn { "withdrawn" } else { "active" },
                if withdrawn {
                    ts(now - day * 10)
                } else {
                    "\\N".to_owned()
                }
            );
            library.holder.push(holder);
            library.titles.push(title);
            library.chapter_starts.push(starts);
            chapter_titles.push(titles);
        },
    )
    .await?;
    let chapter_rows: Vec<(usize, usize)> = chapter_titles
        .iter()
        .enumerate()
        .flat_map(|(w, titles)| (0..titles.len()).map(move |c| (w, c)))
        .collect();
    copy_rows(
        &mut connection,
        "work_chapters",
        "work_id, ordinal, title, start_offset, end_offset",
        chapter_rows.len(),
        |i, buf| {
            let (w, c) = chapter_rows[i];
            let starts = &library.chapter_starts[w];
            let _ = write!(buf, "{}\t{c}\t", w + 1);
            field(buf, &chapter_titles[w][c]);
            let _ = write!(buf, "\t{}\t{}", starts[c], starts[c + 1]);
        },
    )
    .await?;
    timings.push(format!(
        "{} works ({:.0} MB of text), {} chapters {:.1} s",
        args.works,
        work_bytes as f64 / 1e6,
        chapter_rows.len(),
        started.elapsed().as_secs_f64()
    ));

    // Sites: a word and a number under a common TLD; every eighth a mobile subdomain of the one
    // before (so grouping by registered domain differs from grouping by host).
    let started = Instant::now();
    let mut hosts: Vec<String> = Vec::with_capacity(args.sites);
    let mut site_rng = Rng(rng.next());
    for s in 0..args.sites {
        let host = if s % 8 == 7 {
            let previous = hosts[s - 1].trim_start_matches("www.").to_owned();
            format!("m.{previous}")
        } else {
            format!(
                "www.{}{}{}",
                site_rng.pick(&HOST_WORDS),
                s,
                site_rng.pick(&HOST_TLDS)
            )
        };
        hosts.push(host);
    }
    let sites_created = ts(now - day * 95);
    copy_rows(
        &mut connection,
        "sites",
        "id, host, created_at",
        args.sites,
        |s, buf| {
            let _ = write!(buf, "{}\t{}\t{sites_created}", s + 1, hosts[s]);
        },
    )
    .await?;

    // Pages: Zipf-like over sites (site rank r gets a share ∝ about 1/√r), first seen over the
    // last 90 days, more of them recently.
    let pages = args.matches / args.matches_per_page;
    let mut page_rng = Rng(rng.next());
    let mut page_work: Vec<usize> = Vec::with_capacity(pages);
    // Work popularity: rank r (by a shuffled order of works) drawn as works × u^1.5.
    let mut popularity: Vec<usize> = (0..args.works).collect();
    for i in (1..popularity.len()).rev() {
        let j = page_rng.below(i as u64 + 1) as usize;
        popularity.swap(i, j);
    }
    let mut work_of_page_rng = Rng(rng.next());
    let draw_work = |rng: &mut Rng| {
        let rank = (args.works as f64 * rng.unit().powf(1.5)) as usize;
        popularity[rank.min(args.works - 1)]
    };
    copy_rows(
        &mut connection,
        "pages",
        "id, site_id, url, title, text, content_hash, http_status, first_seen, last_seen, \
         matched_hash",
        pages,
        |p, buf| {
            let rng = &mut page_rng;
            let site = ((args.sites as f64) * rng.unit().powi(2)) as usize;
            let site = site.min(args.sites - 1);
            let work = draw_work(&mut work_of_page_rng);
            page_work.push(work);
            let chapter = 1 + rng.below(60);
            let seen =
                now - chrono::Duration::seconds((90.0 * 86_400.0 * rng.unit().powf(1.3)) as i64);
            let last = seen
                + chrono::Duration::seconds(
                    ((now - seen).num_seconds() as f64 * rng.unit()) as i64,
                );
            let text = format!(
                "第{chapter}章 {} —— {}（本章完）请收藏本站 {}",
                rng.pick(&CHAPTER_WORDS),
                &prose[..prose.char_indices().nth(60).map_or(0, |(i, _)| i)],
                p
            );
            let hash = copytrace_store::sha256_hex(text.as_bytes());
            let _ = write!(
                buf,
                "{}\t{}\thttps://{}/book/{}/{}_{chapter}.html\t",
                p + 1,
                site + 1,
                hosts[site],
                work + 1,
                p + 1,
            );
            field(
                buf,
                &format!("{} 第{chapter}章 - {}", library.titles[work], hosts[site]),
            );
            buf.push('\t');
            field(buf, &text);
            let _ = write!(buf, "\t{hash}\t200\t{}\t{}\t{hash}", ts(seen), ts(last));
            library.page_hashes.push(hash);
            library.page_seen.push(seen);
        },
    )
    .await?;
    timings.push(format!(
        "{} sites, {pages} pages {:.1} s",
        args.sites,
        started.elapsed().as_secs_f64()
    ));

    // Matches: the page's own work, then others drawn the same way (distinct on a page).
    let started = Instant::now();
    let mut match_rng = Rng(rng.next());
    let mut extra_rng = Rng(rng.next());
    let mut match_work: Vec<(usize, usize)> = Vec::with_capacity(args.matches);
    for (p, &first) in page_work.iter().enumerate() {
        let mut chosen = vec![first];
        while chosen.len() < args.matches_per_page {
            let w = draw_work(&mut extra_rng);
            if !chosen.contains(&w) {
                chosen.push(w);
            }
        }
        match_work.extend(chosen.into_iter().map(|w| (p, w)));
    }
    // The chapter each match copies, kept for its evidence.
    let mut match_chapter: Vec<u32> = Vec::with_capacity(args.matches);
    copy_rows(
        &mut connection,
        "matches",
        "id, page_id, work_id, score, coverage, containment, method, status, first_seen, \
         last_seen, copied_chars, removed_at, evidence_hash, review, rights_holder_id",
        args.matches,
        |m, buf| {
            let rng = &mut match_rng;
            let (p, w) = match_work[m];
            let chapters = library.chapter_starts[w].len() - 1;
            match_chapter.push(rng.below(chapters as u64) as u32);
            let first = library.page_seen[p] + chrono::Duration::minutes(5 + rng.below(600) as i64);
            let first = first.min(now);
            let last = first
                + chrono::Duration::seconds(
                    ((now - first).num_seconds() as f64 * rng.unit()) as i64,
                );
            let review = match rng.below(100) {
                0..65 => "confirmed",
                65..90 => "pending",
                90..98 => "rejected",
                _ => "licensed",
            };
            let roll = rng.below(100);
            let (status, removed_at) = if review == "rejected" || review == "licensed" {
                ("open", None)
            } else if roll < 20 {
                let removed = (first + day * (1 + rng.below(20) as i32)).min(now);
                ("removed", Some(removed))
            } else if roll < 35 {
                ("notice_sent", None)
            } else {
                ("open", None)
            };
            let _ = write!(
                buf,
                "{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{}\t{status}\t{}\t{}\t{}\t{}\t{}\t{review}\t{}",
                m + 1,
                p + 1,
                w + 1,
                0.55 + 0.45 * rng.unit(),
                0.005 + 0.05 * rng.unit(),
                0.5 + 0.5 * rng.unit(),
                METHODS[match rng.below(10) {
                    0..6 => 0,
                    6..9 => 1,
                    _ => 2,
                }],
                ts(first),
                ts(last),
                500 + rng.below(2500),
                removed_at.map_or_else(|| "\\N".to_owned(), ts),
                library.page_hashes[p],
                library.holder[w] + 1,
            );
        },
    )
    .await?;
    copy_rows(
        &mut connection,
        "evidence",
        "id, match_id, ordinal, page_start, page_end, work_start, work_end",
        args.matches * 2,
        |e, buf| {
            let (m, ordinal) = (e / 2, e % 2);
            let (_, w) = match_work[m];
            let chapter = match_chapter[m] as usize;
            let start = library.chapter_starts[w][chapter] + 40 + ordinal as u64 * 1_200;
            let _ = write!(
                buf,
                "{}\t{}\t{ordinal}\t{}\t{}\t{start}\t{}",
                e + 1,
                m + 1,
                40 + ordinal * 1_200,
                40 + ordinal * 1_200 + 1_100,
                start + 1_100
            );
        },
    )
    .await?;
    timings.push(format!(
        "{} matches, {} evidence rows {:.1} s",
        args.matches,
        args.matches * 2,
        started.elapsed().as_secs_f64()
    ));

    // What a live server would have: sequences past the ids used, statistics, visibility map.
    let started = Instant::now();
    for table in [
        "rights_holders",
        "works",
        "sites",
        "pages",
        "matches",
        "evidence",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
        )))
        .execute(&mut connection)
        .await?;
    }
    sqlx::raw_sql("VACUUM ANALYZE")
        .execute(&mut connection)
        .await?;
    timings.push(format!(
        "VACUUM ANALYZE {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    connection.close().await?;
    Ok(Some(timings.join(", ")))
}

/// The database's size in MB and each holder's work ids.
async fn describe(connection: &mut PgConnection, args: &Args) -> Result<(f64, Vec<Vec<i64>>)> {
    let bytes: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
        .fetch_one(&mut *connection)
        .await?;
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("SELECT id, rights_holder_id FROM works ORDER BY id")
            .fetch_all(&mut *connection)
            .await?;
    let mut per_holder = vec![Vec::new(); args.holders];
    for (id, holder) in rows {
        if let Some(list) = per_holder.get_mut((holder - 1) as usize) {
            list.push(id);
        }
    }
    Ok((bytes as f64 / 1e6, per_holder))
}
