//! The one spelling of a crawl's settings.
//!
//! The same settings arrive from the command line (`crawl`, `schedule add`), from the
//! environment and the configuration file (`COPYTRACE_CRAWL_…`, `[crawl]`), inside a queued
//! crawl job's payload, inside a schedule record, and as the settings of removal checks. They
//! are one type, [`CrawlSettings`], that derives both `clap::Args` and serde, so a flag, a
//! variable, a stored job and a schedule can never disagree on a name or a default: the tests
//! below hold the two derives to each other. The crawler's own, larger [`CrawlConfig`] is built
//! from it in one place ([`CrawlSettings::crawl_config`]).

use std::collections::HashMap;
use std::time::Duration;

use copytrace_crawler::{CrawlConfig, RenderMode, Validators};
use serde::{Deserialize, Serialize};
use url::Url;

/// Prefix of the environment variable of every crawl setting: `COPYTRACE_CRAWL_` and the
/// flag's name in capitals (`--max-pages` → `COPYTRACE_CRAWL_MAX_PAGES`).
pub const CRAWL_ENV_PREFIX: &str = "COPYTRACE_CRAWL_";

/// Scope and limits of a crawl. Serialized (jobs, schedules) with the field names; every field
/// has a default, so payloads stored by older versions still read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct CrawlSettings {
    /// Stop after this many page requests.
    #[arg(long, env = "COPYTRACE_CRAWL_MAX_PAGES", default_value_t = 100)]
    pub max_pages: usize,
    /// Follow links at most this far from a seed (no limit unless given).
    #[arg(long, env = "COPYTRACE_CRAWL_DEPTH")]
    pub depth: Option<u32>,
    /// Allow loopback, private and link-local addresses (refused by default).
    #[arg(long, env = "COPYTRACE_CRAWL_ALLOW_PRIVATE_ADDRESSES")]
    pub allow_private_addresses: bool,
    /// Requests in flight at once.
    #[arg(long, env = "COPYTRACE_CRAWL_CONCURRENCY", default_value_t = 4)]
    pub concurrency: usize,
    /// Per-request timeout in seconds.
    #[arg(
        long = "timeout",
        env = "COPYTRACE_CRAWL_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 30
    )]
    pub timeout_secs: u64,
    /// The User-Agent header; robots.txt rules for its first word apply.
    #[arg(long, env = "COPYTRACE_CRAWL_USER_AGENT",
          default_value = copytrace_crawler::DEFAULT_USER_AGENT)]
    pub user_agent: String,
    /// Seconds between two requests to the same host (a robots.txt Crawl-delay may ask more).
    #[arg(long = "delay", env = "COPYTRACE_CRAWL_DELAY", value_name = "SECONDS",
          default_value = "0", value_parser = parse_seconds)]
    pub delay_secs: f64,
    /// Requests in flight at once to one host.
    #[arg(long, env = "COPYTRACE_CRAWL_PER_HOST", default_value_t = 2)]
    pub per_host: usize,
    /// Retries after a timeout, a connection error, 429 or 5xx.
    #[arg(long, env = "COPYTRACE_CRAWL_RETRIES", default_value_t = 2)]
    pub retries: u32,
    /// Do not read the seeds' sitemaps. By default the sitemaps robots.txt names (else
    /// /sitemap.xml) are read and their pages queued, within the same limits and robots rules:
    /// pirate sites list every chapter there, some linked from nowhere else.
    #[arg(long, env = "COPYTRACE_CRAWL_NO_SITEMAPS")]
    #[serde(rename = "sitemaps", with = "inverted")]
    pub no_sitemaps: bool,
    /// When to read a page in headless Chromium, its scripts run: `auto` (pages whose static
    /// text is short and whose scripts may write it), `never` or `always`. Chromium is found
    /// as `COPYTRACE_CHROMIUM` names it, else on `PATH`; without it, pages that need it are
    /// reported as not rendered.
    #[arg(long, env = "COPYTRACE_CRAWL_RENDER", value_name = "WHEN",
          default_value = "auto", value_parser = parse_render_mode)]
    #[serde(with = "render_mode")]
    pub render: RenderMode,
    /// Follow only links matching this regular expression (repeatable; seeds always go). In the
    /// environment, one expression per line.
    #[arg(
        long,
        value_name = "REGEX",
        env = "COPYTRACE_CRAWL_INCLUDE",
        value_delimiter = '\n'
    )]
    pub include: Vec<String>,
    /// Never follow links matching this regular expression (repeatable). In the environment,
    /// one expression per line.
    #[arg(
        long,
        value_name = "REGEX",
        env = "COPYTRACE_CRAWL_EXCLUDE",
        value_delimiter = '\n'
    )]
    pub exclude: Vec<String>,
    /// Also follow links to this host (repeatable; `*.example.cn` means any subdomain). In the
    /// environment, one host per line.
    #[arg(
        long,
        value_name = "HOST",
        env = "COPYTRACE_CRAWL_ALLOW_HOST",
        value_delimiter = '\n'
    )]
    pub allow_host: Vec<String>,
    /// Never send the stored ETag / Last-Modified back: fetch every known page whole. By
    /// default a re-crawl asks known infringing pages (not the seeds) `If-None-Match` /
    /// `If-Modified-Since`, so an unchanged one costs a 304.
    #[arg(long, env = "COPYTRACE_CRAWL_NO_CONDITIONAL")]
    #[serde(rename = "conditional", with = "inverted")]
    pub no_conditional: bool,
}

impl Default for CrawlSettings {
    fn default() -> Self {
        let crawler = CrawlConfig::default();
        Self {
            max_pages: 100,
            depth: None,
            allow_private_addresses: false,
            concurrency: crawler.concurrency,
            timeout_secs: crawler.request_timeout.as_secs(),
            user_agent: copytrace_crawler::DEFAULT_USER_AGENT.to_owned(),
            delay_secs: 0.0,
            per_host: crawler.per_host_concurrency,
            retries: crawler.max_retries,
            no_sitemaps: false,
            render: RenderMode::Auto,
            include: Vec::new(),
            exclude: Vec::new(),
            allow_host: Vec::new(),
            no_conditional: false,
        }
    }
}

/// `--render`'s values (`auto`, `never`, `always`).
fn parse_render_mode(raw: &str) -> Result<RenderMode, String> {
    raw.parse()
}

/// Stored as its name (`"auto"`).
mod render_mode {
    use copytrace_crawler::RenderMode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &RenderMode, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(value.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RenderMode, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// Stored as `"conditional": true` and `"sitemaps": true` (the form older versions wrote), read
/// on the command line as `--no-conditional` and `--no-sitemaps`.
mod inverted {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &bool, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(!*value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        bool::deserialize(deserializer).map(|conditional| !conditional)
    }
}

/// Parses a non-negative number of seconds (`0`, `1.5`).
pub fn parse_seconds(raw: &str) -> Result<f64, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|secs| Duration::try_from_secs_f64(*secs).is_ok())
        .ok_or_else(|| format!("{raw:?} is not a number of seconds >= 0"))
}

impl CrawlSettings {
    /// The crawler configuration these settings ask for (no validators yet; see
    /// [`crate::recrawl::crawl_validators`]).
    pub fn crawl_config(&self) -> CrawlConfig {
        CrawlConfig {
            max_pages: self.max_pages,
            max_depth: self.depth,
            allow_private_addresses: self.allow_private_addresses,
            concurrency: self.concurrency.max(1),
            request_timeout: Duration::from_secs(self.timeout_secs.max(1)),
            user_agent: self.user_agent.clone(),
            host_delay: Duration::try_from_secs_f64(self.delay_secs).unwrap_or_default(),
            per_host_concurrency: self.per_host.max(1),
            max_retries: self.retries,
            sitemaps: !self.no_sitemaps,
            render: self.render,
            include_patterns: self.include.clone(),
            exclude_patterns: self.exclude.clone(),
            allowed_hosts: self.allow_host.clone(),
            ..CrawlConfig::default()
        }
    }

    /// A crawl of exactly `pages` URLs with these politeness settings, as removal checks make
    /// it: no link, not even a "next page" link, is followed, so every request may be
    /// conditional on `validators` (a 304 hides no link that matters). Scope settings (page
    /// limit, depth, link patterns, sitemaps) do not apply.
    pub fn recheck_config(
        &self,
        pages: usize,
        validators: HashMap<Url, Validators>,
    ) -> CrawlConfig {
        CrawlConfig {
            max_pages: pages,
            validators,
            max_depth: Some(0),
            max_page_chain: 0,
            allow_private_addresses: self.allow_private_addresses,
            user_agent: self.user_agent.clone(),
            concurrency: self.concurrency.max(1),
            per_host_concurrency: self.per_host.max(1),
            host_delay: Duration::try_from_secs_f64(self.delay_secs).unwrap_or_default(),
            request_timeout: Duration::from_secs(self.timeout_secs.max(1)),
            max_retries: self.retries,
            ..CrawlConfig::default()
        }
    }

    /// `(configuration-file key, environment variable)` of every setting, from the command-line
    /// definition: the key is the flag's long name with `_` for `-`.
    pub fn config_keys() -> Vec<(String, String)> {
        use clap::Args as _;
        let command = Self::augment_args(clap::Command::new("crawl"));
        command
            .get_arguments()
            .filter_map(|arg| {
                let long = arg.get_long()?;
                let env = arg.get_env()?.to_string_lossy().into_owned();
                Some((long.replace('-', "_"), env))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        settings: CrawlSettings,
    }

    fn parse(args: &[&str]) -> CrawlSettings {
        Cli::try_parse_from(std::iter::once("crawl").chain(args.iter().copied()))
            .unwrap()
            .settings
    }

    #[test]
    fn the_command_line_defaults_are_the_serde_defaults() {
        let from_cli = parse(&[]);
        let from_json: CrawlSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(from_cli, CrawlSettings::default());
        assert_eq!(from_json, CrawlSettings::default());
    }

    #[test]
    fn a_payload_of_an_older_version_reads_with_its_own_values() {
        let old = serde_json::json!({
            "max_pages": 7, "depth": 2, "allow_private_addresses": true, "concurrency": 3,
            "timeout_secs": 9, "user_agent": "x/1", "delay_secs": 1.5, "per_host": 1,
            "retries": 0, "sitemaps": false, "include": ["/book/"], "exclude": [],
            "allow_host": ["*.example.cn"], "conditional": false
        });
        let settings: CrawlSettings = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(
            settings,
            parse(&[
                "--max-pages",
                "7",
                "--depth",
                "2",
                "--allow-private-addresses",
                "--concurrency",
                "3",
                "--timeout",
                "9",
                "--user-agent",
                "x/1",
                "--delay",
                "1.5",
                "--per-host",
                "1",
                "--retries",
                "0",
                "--no-sitemaps",
                "--include",
                "/book/",
                "--allow-host",
                "*.example.cn",
                "--no-conditional",
            ])
        );
        // Written back, it gains the settings added since, at their defaults.
        let mut written = old.clone();
        written["render"] = serde_json::json!("auto");
        assert_eq!(serde_json::to_value(&settings).unwrap(), written);
    }

    #[test]
    fn every_flag_has_the_environment_variable_of_its_name() {
        let keys = CrawlSettings::config_keys();
        let fields = serde_json::to_value(CrawlSettings::default()).unwrap();
        assert_eq!(keys.len(), fields.as_object().unwrap().len());
        for (key, env) in keys {
            assert_eq!(env, format!("{CRAWL_ENV_PREFIX}{}", key.to_uppercase()));
        }
    }

    #[test]
    fn negative_and_non_numeric_delays_are_refused() {
        assert_eq!(parse_seconds("1.5"), Ok(1.5));
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("soon").is_err());
    }

    #[test]
    fn a_recheck_crawl_follows_no_link_and_is_conditional() {
        let url = Url::parse("http://pirate.example/1.html").unwrap();
        let stored = Validators {
            etag: Some("\"v1\"".into()),
            last_modified: None,
        };
        let config = CrawlSettings::default()
            .recheck_config(3, HashMap::from([(url.clone(), stored.clone())]));
        assert_eq!(config.max_pages, 3);
        assert_eq!(config.max_depth, Some(0));
        assert_eq!(config.max_page_chain, 0);
        assert!(!config.allow_private_addresses);
        assert_eq!(config.validators.get(&url), Some(&stored));
    }
}
