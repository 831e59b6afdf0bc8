//! The frontier: per-host queues served round-robin, the seen-set, scope rules and the guards
//! against infinite link spaces.
//!
//! Each host (host and port) has two queues: pagination and chapter links first, everything
//! else after, each breadth-first. [`Frontier::next`] walks the hosts in turn and hands out the
//! first URL whose host is under its per-host concurrency limit and whose politeness turn has
//! come; if every host with work must wait, it says until when, so the crawl loop can sleep
//! without holding a request slot. URLs whose robots.txt verdict is already known to be "no" are
//! settled here without spawning a task.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use regex::RegexSet;
use tokio::time::Instant;
use url::{Host, Url};

use crate::CrawlConfig;
use crate::error::CrawlError;
use crate::fetch::Gate;
use crate::links::{Link, LinkKind};
use crate::politeness::Turn;
use crate::robots::Verdict;
use crate::urls::{host_key, normalize};

/// A frontier entry.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    /// Normalized.
    pub(crate) url: Url,
    pub(crate) depth: u32,
    /// "Next page" links followed in a row to get here.
    pub(crate) chain: u32,
    pub(crate) scope: Arc<Scope>,
}

/// The sites a crawl branch may visit: the seed's, plus the one a seed redirected to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Scope {
    sites: Vec<Site>,
}

/// A site: host without a leading `www.`, and the port when it is not the scheme's default
/// (so `http://x/` and `https://www.x/` are the same site, `http://x:8080/` is another).
#[derive(Debug, PartialEq, Eq, Clone)]
struct Site {
    host: String,
    port: Option<u16>,
}

impl Site {
    fn of(url: &Url) -> Option<Site> {
        Some(Site {
            host: site_host(url)?,
            port: url.port(),
        })
    }
}

/// The host of a URL, lower-case, without a trailing dot or a leading `www.`.
fn site_host(url: &Url) -> Option<String> {
    Some(match url.host()? {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d.strip_prefix("www.").map(str::to_owned).unwrap_or(d)
        }
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => ip.to_string(),
    })
}

impl Scope {
    pub(crate) fn of(url: &Url) -> Option<Scope> {
        Some(Scope {
            sites: vec![Site::of(url)?],
        })
    }

    fn contains(&self, url: &Url) -> bool {
        Site::of(url).is_some_and(|site| self.sites.contains(&site))
    }
}

/// An entry of [`CrawlConfig::allowed_hosts`].
#[derive(Debug)]
enum HostPattern {
    Exact(String),
    /// `*.example.cn`: the domain itself and any subdomain.
    Subdomains(String),
}

impl HostPattern {
    fn parse(raw: &str) -> HostPattern {
        let host = raw.trim().trim_end_matches('.').to_ascii_lowercase();
        match host.strip_prefix("*.") {
            Some(domain) => HostPattern::Subdomains(domain.to_owned()),
            None => HostPattern::Exact(host.strip_prefix("www.").unwrap_or(&host).to_owned()),
        }
    }

    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(h) => h == host,
            HostPattern::Subdomains(d) => {
                host == d
                    || host
                        .strip_suffix(d.as_str())
                        .is_some_and(|prefix| prefix.ends_with('.'))
            }
        }
    }
}

/// The compiled scope and limit settings of a crawl.
#[derive(Debug)]
pub(crate) struct Rules {
    max_depth: Option<u32>,
    allowed_hosts: Vec<HostPattern>,
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
    max_url_length: usize,
    max_query_variants: usize,
    max_page_chain: u32,
    per_host_concurrency: usize,
}

impl Rules {
    pub(crate) fn new(config: &CrawlConfig) -> Result<Rules, CrawlError> {
        Ok(Rules {
            max_depth: config.max_depth,
            allowed_hosts: config
                .allowed_hosts
                .iter()
                .map(|h| HostPattern::parse(h))
                .collect(),
            include: compile("include", &config.include_patterns)?,
            exclude: compile("exclude", &config.exclude_patterns)?,
            max_url_length: config.max_url_length,
            max_query_variants: config.max_query_variants,
            max_page_chain: config.max_page_chain,
            per_host_concurrency: config.per_host_concurrency.max(1),
        })
    }

    fn in_scope(&self, scope: &Scope, url: &Url) -> bool {
        if !scope.contains(url)
            && !site_host(url).is_some_and(|h| self.allowed_hosts.iter().any(|p| p.matches(&h)))
        {
            return false;
        }
        let text = url.as_str();
        self.include.as_ref().is_none_or(|set| set.is_match(text))
            && !self.exclude.as_ref().is_some_and(|set| set.is_match(text))
    }
}

fn compile(which: &'static str, patterns: &[String]) -> Result<Option<RegexSet>, CrawlError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for pattern in patterns {
        if let Err(e) = regex::Regex::new(pattern) {
            return Err(CrawlError::InvalidPattern {
                which,
                pattern: pattern.clone(),
                message: e.to_string().replace('\n', " "),
            });
        }
    }
    RegexSet::new(patterns)
        .map(Some)
        .map_err(|e| CrawlError::InvalidPattern {
            which,
            pattern: patterns.join(" | "),
            message: e.to_string().replace('\n', " "),
        })
}

/// What [`Frontier::next`] found.
#[derive(Debug)]
pub(crate) enum Next {
    /// Fetch this URL; `true` if its politeness turn is already taken.
    Fetch(Item, bool),
    /// robots.txt (already loaded) forbids this URL: count it, do not fetch.
    Disallowed(Item),
    /// robots.txt of this URL's origin could not be fetched: a failure, do not fetch.
    Unavailable(Item, String, String),
    /// Every host with queued URLs must wait until then.
    Wait(Instant),
    /// Nothing can start now: the queues are empty or every host is at its concurrency limit.
    Idle,
}

#[derive(Default)]
struct HostQueue {
    /// Seeds, pagination and chapter links.
    first: VecDeque<Item>,
    rest: VecDeque<Item>,
    in_flight: usize,
}

impl HostQueue {
    fn peek(&self) -> Option<&Item> {
        self.first.front().or_else(|| self.rest.front())
    }

    fn pop(&mut self) -> Option<Item> {
        self.first.pop_front().or_else(|| self.rest.pop_front())
    }

    fn is_empty(&self) -> bool {
        self.first.is_empty() && self.rest.is_empty()
    }
}

pub(crate) struct Frontier {
    rules: Rules,
    hosts: HashMap<String, HostQueue>,
    /// Hosts with queued URLs, in serving order.
    ring: VecDeque<String>,
    queued: usize,
    /// Normalized URLs queued, fetched or rejected by a limit (including final URLs of
    /// redirects).
    seen: HashSet<String>,
    /// In-scope URLs found only beyond `max_depth` so far.
    too_deep: HashSet<String>,
    /// Final URLs of redirected requests: already fetched, never to be requested again.
    redirect_targets: HashSet<String>,
    /// Distinct query strings queued per host and path.
    variants: HashMap<String, usize>,
    /// Links dropped by the URL-length, query-variant and page-chain limits.
    pub(crate) link_limits: usize,
}

impl Frontier {
    pub(crate) fn new(rules: Rules) -> Self {
        Self {
            rules,
            hosts: HashMap::new(),
            ring: VecDeque::new(),
            queued: 0,
            seen: HashSet::new(),
            too_deep: HashSet::new(),
            redirect_targets: HashSet::new(),
            variants: HashMap::new(),
            link_limits: 0,
        }
    }

    /// Queues a seed (normalized by the caller). Seeds skip the scope patterns and limits: the
    /// operator asked for them.
    pub(crate) fn push_seed(&mut self, url: Url, scope: Arc<Scope>) {
        if self.seen.insert(url.as_str().to_owned()) {
            self.enqueue(
                Item {
                    url,
                    depth: 0,
                    chain: 0,
                    scope,
                },
                true,
            );
        }
    }

    fn enqueue(&mut self, item: Item, first: bool) {
        let key = host_key(&item.url);
        let queue = self.hosts.entry(key.clone()).or_default();
        if queue.is_empty() {
            self.ring.push_back(key);
        }
        if first {
            queue.first.push_back(item);
        } else {
            queue.rest.push_back(item);
        }
        self.queued += 1;
    }

    /// Queues the links of a fetched page that pass the scope rules and limits.
    pub(crate) fn add_links(&mut self, parent: &Item, final_url: &Url, links: Vec<Link>) {
        self.mark_redirect_target(parent, final_url);
        let mut scope = parent.scope.clone();
        if parent.depth == 0 && !scope.contains(final_url) {
            // A seed that moved (old domain → new domain) is crawled where it moved to.
            if let Some(site) = Site::of(final_url) {
                let mut sites = scope.sites.clone();
                sites.push(site);
                scope = Arc::new(Scope { sites });
            }
        }
        for link in links {
            let (depth, chain) = match link.kind {
                LinkKind::NextPage => (parent.depth, parent.chain.saturating_add(1)),
                _ => (parent.depth.saturating_add(1), 0),
            };
            let first = link.kind != LinkKind::Other;
            self.admit(link.url, depth, chain, &scope, first);
        }
    }

    /// Remembers that `parent` was answered from another URL (after redirects).
    pub(crate) fn mark_redirect_target(&mut self, parent: &Item, final_url: &Url) {
        if final_url != &parent.url {
            let key = normalize(final_url).to_string();
            self.seen.insert(key.clone());
            self.redirect_targets.insert(key);
        }
    }

    /// Queues URLs read from a seed's sitemap at depth 1. Returns how many were queued.
    pub(crate) fn add_sitemap_urls(&mut self, scope: &Arc<Scope>, urls: Vec<Url>) -> usize {
        let before = self.queued;
        for url in urls {
            self.admit(url, 1, 0, scope, false);
        }
        self.queued - before
    }

    fn admit(&mut self, url: Url, depth: u32, chain: u32, scope: &Arc<Scope>, first: bool) {
        if !matches!(url.scheme(), "http" | "https") {
            return;
        }
        let url = normalize(&url);
        if !self.rules.in_scope(scope, &url) {
            return;
        }
        let key = url.as_str().to_owned();
        if self.seen.contains(&key) {
            return;
        }
        if key.len() > self.rules.max_url_length {
            self.link_limits += 1;
            self.seen.insert(key);
            return;
        }
        if chain > self.rules.max_page_chain {
            self.link_limits += 1;
            return;
        }
        if self.rules.max_depth.is_some_and(|max| depth > max) {
            self.too_deep.insert(key);
            return;
        }
        if url.query().is_some() {
            let path_key = format!("{}{}", host_key(&url), url.path());
            let count = self.variants.entry(path_key).or_default();
            if *count >= self.rules.max_query_variants {
                self.link_limits += 1;
                self.seen.insert(key);
                return;
            }
            *count += 1;
        }
        self.too_deep.remove(&key);
        self.seen.insert(key);
        self.enqueue(
            Item {
                url,
                depth,
                chain,
                scope: scope.clone(),
            },
            first,
        );
    }

    /// The next URL to start, if any host may be served now.
    pub(crate) fn next(&mut self, gate: &Gate) -> Next {
        let mut wake: Option<Instant> = None;
        for _ in 0..self.ring.len() {
            let Some(key) = self.ring.pop_front() else {
                break;
            };
            let Some(queue) = self.hosts.get_mut(&key) else {
                continue;
            };
            // A queued URL may meanwhile have been fetched as the target of a redirect.
            while queue
                .peek()
                .is_some_and(|item| self.redirect_targets.contains(item.url.as_str()))
            {
                queue.pop();
                self.queued -= 1;
            }
            let Some(head) = queue.peek() else {
                continue;
            };
            if let Some(robots) = gate.robots.peek(&head.url) {
                let settled = match robots.verdict(&head.url) {
                    Verdict::Allowed => None,
                    Verdict::Disallowed => queue.pop().map(Next::Disallowed),
                    Verdict::Unavailable { origin, reason } => queue
                        .pop()
                        .map(|item| Next::Unavailable(item, origin, reason)),
                };
                if let Some(settled) = settled {
                    self.queued -= 1;
                    if !queue.is_empty() {
                        self.ring.push_front(key);
                    }
                    return settled;
                }
            }
            if queue.in_flight >= self.rules.per_host_concurrency {
                self.ring.push_back(key);
                continue;
            }
            let turn = gate.politeness.try_acquire(&key);
            if let Turn::Wait(until) = turn {
                wake = Some(wake.map_or(until, |w| w.min(until)));
                self.ring.push_back(key);
                continue;
            }
            let item = queue.pop().expect("peeked above");
            queue.in_flight += 1;
            self.queued -= 1;
            if !queue.is_empty() {
                self.ring.push_back(key);
            }
            return Next::Fetch(item, turn == Turn::Acquired);
        }
        wake.map_or(Next::Idle, Next::Wait)
    }

    /// A URL handed out by [`Frontier::next`] as `Fetch` has been settled.
    pub(crate) fn done(&mut self, item: &Item) {
        if let Some(queue) = self.hosts.get_mut(&host_key(&item.url)) {
            queue.in_flight = queue.in_flight.saturating_sub(1);
        }
    }

    /// URLs waiting to be fetched.
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// URLs discovered but never requested: too deep, or left in the queue when the page
    /// budget ran out.
    pub(crate) fn skipped(&self) -> usize {
        self.too_deep.len() + self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn rules(config: CrawlConfig) -> Rules {
        Rules::new(&config).unwrap()
    }

    fn other(s: &str) -> Link {
        Link {
            url: url(s),
            kind: LinkKind::Other,
        }
    }

    fn link(s: &str, kind: LinkKind) -> Link {
        Link { url: url(s), kind }
    }

    /// Pops everything queued, ignoring politeness and concurrency.
    fn drain(frontier: &mut Frontier) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        while let Some(key) = frontier.ring.pop_front() {
            let queue = frontier.hosts.get_mut(&key).unwrap();
            while let Some(item) = queue.pop() {
                frontier.queued -= 1;
                out.push((item.url.to_string(), item.depth));
            }
        }
        out
    }

    fn seeded(config: CrawlConfig, seed: &str) -> (Frontier, Item) {
        let mut frontier = Frontier::new(rules(config));
        frontier.push_seed(url(seed), Arc::new(Scope::of(&url(seed)).unwrap()));
        let item = frontier.hosts.values_mut().next().unwrap().pop().unwrap();
        frontier.ring.clear();
        frontier.queued = 0;
        (frontier, item)
    }

    #[test]
    fn sites_ignore_www_and_default_ports_but_not_other_ports() {
        let scope = Scope::of(&url("http://www.example.cn/")).unwrap();
        assert!(scope.contains(&url("https://example.cn/a")));
        assert!(scope.contains(&url("http://WWW.example.cn:80/b")));
        assert!(!scope.contains(&url("http://example.cn:8080/")));
        assert!(!scope.contains(&url("http://m.example.cn/")));
        assert!(!scope.contains(&url("http://example.com/")));
    }

    #[test]
    fn links_beyond_max_depth_are_counted_as_skipped_once() {
        let config = CrawlConfig {
            max_depth: Some(0),
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config, "http://a.cn/");
        let links = vec![
            other("http://a.cn/1"),
            other("http://a.cn/1#x"),
            other("http://b.cn/"),
        ];
        frontier.add_links(&seed, &seed.url.clone(), links);
        assert_eq!(frontier.queued(), 0);
        assert_eq!(frontier.skipped(), 1);
    }

    #[test]
    fn a_seed_that_redirects_to_another_domain_is_followed_there() {
        let (mut frontier, seed) = seeded(CrawlConfig::default(), "http://old.cn/");
        let links = vec![
            other("http://new.cn/2"),
            other("http://old.cn/3"),
            other("http://x.cn/"),
        ];
        frontier.add_links(&seed, &url("http://new.cn/"), links);
        let mut queued: Vec<String> = drain(&mut frontier).into_iter().map(|i| i.0).collect();
        queued.sort();
        assert_eq!(queued, ["http://new.cn/2", "http://old.cn/3"]);
    }

    #[test]
    fn listed_hosts_and_patterns_widen_and_narrow_the_scope() {
        let config = CrawlConfig {
            allowed_hosts: vec!["*.cdn.cn".into(), "www.Mirror.cn".into()],
            include_patterns: vec![r"/book/".into(), r"cdn\.cn".into()],
            exclude_patterns: vec![r"\.zip$".into()],
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config, "http://a.cn/");
        let links = vec![
            other("http://a.cn/book/1.html"),
            other("http://a.cn/news/1.html"),
            other("http://a.cn/book/all.zip"),
            other("http://img.cdn.cn/x.html"),
            other("http://cdn.cn/y.html"),
            other("http://evilcdn.cn/book/z.html"),
            other("http://mirror.cn/book/2.html"),
        ];
        frontier.add_links(&seed, &seed.url.clone(), links);
        let mut queued: Vec<String> = drain(&mut frontier).into_iter().map(|i| i.0).collect();
        queued.sort();
        assert_eq!(
            queued,
            [
                "http://a.cn/book/1.html",
                "http://cdn.cn/y.html",
                "http://img.cdn.cn/x.html",
                "http://mirror.cn/book/2.html",
            ]
        );
    }

    #[test]
    fn invalid_patterns_are_reported() {
        let config = CrawlConfig {
            exclude_patterns: vec!["(unclosed".into()],
            ..CrawlConfig::default()
        };
        let err = Rules::new(&config).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid exclude pattern \"(unclosed\""),
            "{err}"
        );
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn next_pages_keep_their_depth_and_chapters_go_first() {
        let config = CrawlConfig {
            max_depth: Some(1),
            max_page_chain: 2,
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config, "http://a.cn/book/1.html");
        frontier.add_links(
            &seed,
            &seed.url.clone(),
            vec![
                other("http://a.cn/about.html"),
                link("http://a.cn/book/2.html", LinkKind::Chapter),
                link("http://a.cn/book/1_2.html", LinkKind::NextPage),
            ],
        );
        let queued = drain(&mut frontier);
        assert_eq!(
            queued,
            [
                ("http://a.cn/book/2.html".to_owned(), 1),
                ("http://a.cn/book/1_2.html".to_owned(), 0),
                ("http://a.cn/about.html".to_owned(), 1),
            ]
        );
        // A page chain continues at depth 1 (the depth limit) up to max_page_chain pages.
        let mut page = Item {
            url: url("http://a.cn/book/2.html"),
            depth: 1,
            chain: 0,
            scope: seed.scope.clone(),
        };
        let mut followed = 0;
        for n in 2..10 {
            let next = format!("http://a.cn/book/2_{n}.html");
            frontier.add_links(
                &page,
                &page.url.clone(),
                vec![link(&next, LinkKind::NextPage)],
            );
            let Some(item) = drain(&mut frontier).pop() else {
                break;
            };
            assert_eq!(item.1, 1);
            followed += 1;
            page = Item {
                url: url(&item.0),
                depth: 1,
                chain: page.chain + 1,
                scope: seed.scope.clone(),
            };
        }
        assert_eq!(followed, 2);
        assert_eq!(frontier.link_limits, 1);
    }

    #[test]
    fn long_urls_and_endless_query_variants_are_cut() {
        let config = CrawlConfig {
            max_url_length: 60,
            max_query_variants: 3,
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config, "http://a.cn/");
        let mut links: Vec<Link> = (0..10)
            .map(|i| other(&format!("http://a.cn/search?q={i}")))
            .collect();
        links.push(other(&format!("http://a.cn/{}", "x".repeat(60))));
        links.push(other("http://a.cn/other?q=1"));
        // Same query twice (after normalization): one variant.
        links.push(other("http://a.cn/search?utm_source=x&q=0"));
        frontier.add_links(&seed, &seed.url.clone(), links);
        let queued: Vec<String> = drain(&mut frontier).into_iter().map(|i| i.0).collect();
        assert_eq!(
            queued,
            [
                "http://a.cn/search?q=0",
                "http://a.cn/search?q=1",
                "http://a.cn/search?q=2",
                "http://a.cn/other?q=1",
            ]
        );
        assert_eq!(frontier.link_limits, 8);
    }

    #[test]
    fn hosts_are_served_in_turn() {
        let config = CrawlConfig {
            allowed_hosts: vec!["b.cn".into()],
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config.clone(), "http://a.cn/");
        frontier.add_links(
            &seed,
            &seed.url.clone(),
            vec![
                other("http://a.cn/1"),
                other("http://a.cn/2"),
                other("http://b.cn/1"),
                other("http://b.cn/2"),
            ],
        );
        let gate = Gate::new(&config);
        for host in ["a.cn:80", "b.cn:80"] {
            gate.politeness.configure(host, std::time::Duration::ZERO);
        }
        let mut order = Vec::new();
        while let Next::Fetch(item, taken) = frontier.next(&gate) {
            assert!(taken);
            order.push(item.url.to_string());
            frontier.done(&item);
        }
        assert_eq!(
            order,
            [
                "http://a.cn/1",
                "http://b.cn/1",
                "http://a.cn/2",
                "http://b.cn/2"
            ]
        );
    }

    #[test]
    fn a_host_at_its_concurrency_limit_or_waiting_is_passed_over() {
        let config = CrawlConfig {
            per_host_concurrency: 1,
            ..CrawlConfig::default()
        };
        let (mut frontier, seed) = seeded(config.clone(), "http://a.cn/");
        frontier.add_links(
            &seed,
            &seed.url.clone(),
            vec![other("http://a.cn/1"), other("http://a.cn/2")],
        );
        let gate = Gate::new(&config);
        gate.politeness
            .configure("a.cn:80", std::time::Duration::from_secs(60));
        let Next::Fetch(first, true) = frontier.next(&gate) else {
            panic!("the first request goes at once");
        };
        assert!(matches!(frontier.next(&gate), Next::Idle));
        frontier.done(&first);
        match frontier.next(&gate) {
            Next::Wait(until) => {
                assert!(until > Instant::now() + std::time::Duration::from_secs(50))
            }
            other => panic!("expected a wait, got {other:?}"),
        }
    }
}
