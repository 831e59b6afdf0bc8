//! The configuration file, `copytrace.toml`.
//!
//! Settings come from, weakest first: built-in defaults ← the file named by `--config` or
//! `COPYTRACE_CONFIG` ← `COPYTRACE_…` environment variables ← command-line flags. The file is
//! applied by turning each of its settings into the environment variable of the same setting,
//! unless that variable is already set; the command-line parser then reads flags, variables and
//! defaults as usual. So every setting has one name per layer, documented in `--help`, and the
//! file can never say something a variable could not.
//!
//! Unknown keys are errors (a misspelt key silently ignored is a setting silently lost).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use copytrace_service::{CrawlSettings, redact};
use serde::Deserialize;

/// The file's shape. Every field maps to one environment variable (see [`ConfigFile::to_env`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `COPYTRACE_DATABASE_URL`
    pub database_url: Option<String>,
    /// `COPYTRACE_REDIS_URL`
    pub redis_url: Option<String>,
    /// `COPYTRACE_REDIS_PREFIX`
    pub redis_prefix: Option<String>,
    /// `COPYTRACE_LOG` (a tracing filter such as `info` or `warn,copytrace=debug`)
    pub log: Option<String>,
    /// `COPYTRACE_TSA_URL`: the RFC 3161 time-stamping authority
    pub tsa_url: Option<String>,
    /// `COPYTRACE_TSA_CERT`: the certificate file of the time-stamping authority to trust
    pub tsa_cert: Option<String>,
    /// `[serve]`
    #[serde(default)]
    pub serve: ServeSection,
    /// `[worker]`
    #[serde(default)]
    pub worker: WorkerSection,
    /// `[match]`
    #[serde(default, rename = "match")]
    pub matching: MatchSection,
    /// `[schedule]`
    #[serde(default)]
    pub schedule: ScheduleSection,
    /// `[alerts]`
    #[serde(default)]
    pub alerts: AlertsSection,
    /// `[crawl]`: the defaults of every crawl's settings (`copytrace crawl`, `schedule add`),
    /// keyed by flag name (`max_pages`, `delay`, `include`, …; see `copytrace crawl --help`).
    /// Each becomes `COPYTRACE_CRAWL_<KEY>`; lists are joined one item per line.
    #[serde(default)]
    pub crawl: toml::Table,
}

/// `[schedule]` settings: the daily dedup run and its removal checks.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSection {
    /// `COPYTRACE_TIMEZONE` (IANA name, e.g. `Asia/Shanghai`)
    pub timezone: Option<String>,
    /// `COPYTRACE_DEDUP_CRON` (e.g. `0 3 * * *`)
    pub dedup_cron: Option<String>,
    /// `COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES`
    pub recheck_allow_private_addresses: Option<bool>,
    /// `COPYTRACE_RECHECK_USER_AGENT`
    pub recheck_user_agent: Option<String>,
    /// `COPYTRACE_RECHECK_DELAY` (seconds)
    pub recheck_delay: Option<f64>,
    /// `COPYTRACE_WEEKLY_REPORT_CRON` (e.g. `0 8 * * 1`, Mondays 08:00; `off`)
    pub weekly_report_cron: Option<String>,
}

/// `[serve]` settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// `COPYTRACE_LISTEN`
    pub listen: Option<String>,
    /// `COPYTRACE_SERVE_WORKERS`
    pub workers: Option<u32>,
    /// `COPYTRACE_SWEEP_SECS`
    pub sweep_secs: Option<u64>,
    /// `COPYTRACE_SECURE_COOKIES`
    pub secure_cookies: Option<bool>,
    /// `COPYTRACE_TRUSTED_PROXIES`
    pub trusted_proxies: Option<Vec<String>>,
}

/// `[worker]` settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSection {
    /// `COPYTRACE_WORKER_CONCURRENCY`
    pub concurrency: Option<u32>,
    /// `COPYTRACE_LEASE_SECS`
    pub lease_secs: Option<u64>,
    /// `COPYTRACE_RETRY_BASE_SECS`
    pub retry_base_secs: Option<u64>,
    /// `COPYTRACE_WORKER_LISTEN`
    pub listen: Option<String>,
}

/// `[alerts]` settings: how webhooks and e-mail digests are sent.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsSection {
    /// `COPYTRACE_SMTP_URL`
    pub smtp_url: Option<String>,
    /// `COPYTRACE_MAIL_FROM`
    pub mail_from: Option<String>,
    /// `COPYTRACE_ALERTS_ALLOW_PRIVATE_ADDRESSES`
    pub allow_private_addresses: Option<bool>,
    /// `COPYTRACE_NOTICE_REMINDER_DAYS`
    pub notice_reminder_days: Option<u32>,
    /// `COPYTRACE_NOTICE_ESCALATE_DAYS`
    pub notice_escalate_days: Option<u32>,
    /// `COPYTRACE_NOTICE_DELIST_DAYS`
    pub notice_delist_days: Option<u32>,
    /// `COPYTRACE_REPORT_STAFF_EMAILS`: recipients of the staff weekly report
    pub report_staff_emails: Option<Vec<String>>,
    /// `COPYTRACE_REPORT_STAFF_LANGUAGE` (`zh` or `en`)
    pub report_staff_language: Option<String>,
}

/// `[match]` settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchSection {
    /// `COPYTRACE_CANDIDATES`
    pub candidates: Option<String>,
    /// `COPYTRACE_MIN_COPIED_CHARS`
    pub min_copied_chars: Option<u32>,
    /// `COPYTRACE_MIN_STRETCH_CHARS`
    pub min_stretch_chars: Option<u32>,
    /// `COPYTRACE_AUTO_CONFIRM_SCORE`
    pub auto_confirm_score: Option<f64>,
}

impl ConfigFile {
    /// Reads and checks a configuration file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read configuration file {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("invalid configuration file {}", path.display()))
    }

    /// Parses the text of a configuration file.
    pub fn parse(text: &str) -> Result<Self> {
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.message()))?;
        if let Some(prefix) = &file.redis_prefix
            && prefix.trim().is_empty()
        {
            bail!("redis_prefix must not be empty");
        }
        let known = CrawlSettings::config_keys();
        for (key, value) in &file.crawl {
            if !known.iter().any(|(name, _)| name == key) {
                let names: Vec<&str> = known.iter().map(|(name, _)| name.as_str()).collect();
                bail!(
                    "unknown key {key:?} in [crawl]; expected one of {}",
                    names.join(", ")
                );
            }
            crawl_value(key, value)?;
        }
        Ok(file)
    }

    /// Every setting of the file as `(environment variable, value)`.
    pub fn to_env(&self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        for (key, env_name) in CrawlSettings::config_keys() {
            if let Some(value) = self.crawl.get(&key) {
                // Checked by `parse`.
                if let Ok(value) = crawl_value(&key, value) {
                    env.insert(env_name, value);
                }
            }
        }
        let mut put = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                env.insert(name.to_owned(), value);
            }
        };
        put("COPYTRACE_DATABASE_URL", self.database_url.clone());
        put("COPYTRACE_REDIS_URL", self.redis_url.clone());
        put("COPYTRACE_REDIS_PREFIX", self.redis_prefix.clone());
        put("COPYTRACE_LOG", self.log.clone());
        put("COPYTRACE_TSA_URL", self.tsa_url.clone());
        put("COPYTRACE_TSA_CERT", self.tsa_cert.clone());
        put("COPYTRACE_LISTEN", self.serve.listen.clone());
        put(
            "COPYTRACE_SERVE_WORKERS",
            self.serve.workers.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_SWEEP_SECS",
            self.serve.sweep_secs.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_SECURE_COOKIES",
            self.serve.secure_cookies.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_TRUSTED_PROXIES",
            self.serve.trusted_proxies.as_ref().map(|v| v.join(",")),
        );
        put(
            "COPYTRACE_WORKER_CONCURRENCY",
            self.worker.concurrency.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_LEASE_SECS",
            self.worker.lease_secs.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_RETRY_BASE_SECS",
            self.worker.retry_base_secs.map(|v| v.to_string()),
        );
        put("COPYTRACE_WORKER_LISTEN", self.worker.listen.clone());
        put("COPYTRACE_CANDIDATES", self.matching.candidates.clone());
        put(
            "COPYTRACE_MIN_COPIED_CHARS",
            self.matching.min_copied_chars.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_MIN_STRETCH_CHARS",
            self.matching.min_stretch_chars.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_AUTO_CONFIRM_SCORE",
            self.matching.auto_confirm_score.map(|v| v.to_string()),
        );
        put("COPYTRACE_SMTP_URL", self.alerts.smtp_url.clone());
        put("COPYTRACE_MAIL_FROM", self.alerts.mail_from.clone());
        put(
            "COPYTRACE_ALERTS_ALLOW_PRIVATE_ADDRESSES",
            self.alerts.allow_private_addresses.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_NOTICE_REMINDER_DAYS",
            self.alerts.notice_reminder_days.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_NOTICE_ESCALATE_DAYS",
            self.alerts.notice_escalate_days.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_NOTICE_DELIST_DAYS",
            self.alerts.notice_delist_days.map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_REPORT_STAFF_EMAILS",
            self.alerts
                .report_staff_emails
                .as_ref()
                .map(|v| v.join(",")),
        );
        put(
            "COPYTRACE_REPORT_STAFF_LANGUAGE",
            self.alerts.report_staff_language.clone(),
        );
        put(
            "COPYTRACE_WEEKLY_REPORT_CRON",
            self.schedule.weekly_report_cron.clone(),
        );
        put("COPYTRACE_TIMEZONE", self.schedule.timezone.clone());
        put("COPYTRACE_DEDUP_CRON", self.schedule.dedup_cron.clone());
        put(
            "COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES",
            self.schedule
                .recheck_allow_private_addresses
                .map(|v| v.to_string()),
        );
        put(
            "COPYTRACE_RECHECK_USER_AGENT",
            self.schedule.recheck_user_agent.clone(),
        );
        put(
            "COPYTRACE_RECHECK_DELAY",
            self.schedule.recheck_delay.map(|v| v.to_string()),
        );
        env
    }
}

/// A `[crawl]` value as its environment variable holds it: a string, number or boolean as
/// written, a list of strings one per line.
fn crawl_value(key: &str, value: &toml::Value) -> Result<String> {
    Ok(match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Integer(number) => number.to_string(),
        toml::Value::Float(number) => number.to_string(),
        toml::Value::Boolean(flag) => flag.to_string(),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                toml::Value::String(text) if !text.contains('\n') => Ok(text.clone()),
                _ => bail!("[crawl] {key} must be a list of one-line strings"),
            })
            .collect::<Result<Vec<_>>>()?
            .join("\n"),
        _ => bail!("[crawl] {key} must be a string, number, boolean or list of strings"),
    })
}

/// Prints the effective settings (`copytrace config`), secrets hidden.
pub fn print_effective(globals: &crate::cli::Globals) {
    let shown = |name: &str| std::env::var(name).ok();
    println!("database_url = {:?}", redact(&globals.db));
    match &globals.redis_url {
        Some(url) => println!("redis_url = {:?}", redact(url)),
        None => println!("# redis_url: not set (in-memory index)"),
    }
    println!("redis_prefix = {:?}", globals.redis_prefix);
    match &globals.smtp_url {
        Some(url) => println!("smtp_url = {:?}", redact(url)),
        None => println!("# smtp_url: not set (e-mail alerts wait)"),
    }
    match &globals.tsa_url {
        Some(tsa) => println!("tsa_url = {:?}", redact(tsa.url.as_str())),
        None => println!("# tsa_url: not set (no trusted timestamps)"),
    }
    match &globals.tsa_cert {
        Some(path) => println!("tsa_cert = {:?}", path.display().to_string()),
        None => {
            println!("# tsa_cert: not set (timestamps are checked against their own certificate)")
        }
    }
    if let Some(path) = &globals.config {
        println!("# configuration file: {}", path.display());
    }
    let crawl = CrawlSettings::config_keys().into_iter().map(|(_, env)| env);
    for name in [
        "COPYTRACE_LOG",
        "COPYTRACE_LISTEN",
        "COPYTRACE_SERVE_WORKERS",
        "COPYTRACE_SWEEP_SECS",
        "COPYTRACE_SECURE_COOKIES",
        "COPYTRACE_TRUSTED_PROXIES",
        "COPYTRACE_WORKER_CONCURRENCY",
        "COPYTRACE_LEASE_SECS",
        "COPYTRACE_RETRY_BASE_SECS",
        "COPYTRACE_WORKER_LISTEN",
        "COPYTRACE_CANDIDATES",
        "COPYTRACE_MIN_COPIED_CHARS",
        "COPYTRACE_MIN_STRETCH_CHARS",
        "COPYTRACE_AUTO_CONFIRM_SCORE",
        "COPYTRACE_TIMEZONE",
        "COPYTRACE_DEDUP_CRON",
        "COPYTRACE_RECHECK_ALLOW_PRIVATE_ADDRESSES",
        "COPYTRACE_RECHECK_USER_AGENT",
        "COPYTRACE_RECHECK_DELAY",
        "COPYTRACE_MAIL_FROM",
        "COPYTRACE_ALERTS_ALLOW_PRIVATE_ADDRESSES",
        "COPYTRACE_NOTICE_REMINDER_DAYS",
        "COPYTRACE_NOTICE_ESCALATE_DAYS",
        "COPYTRACE_NOTICE_DELIST_DAYS",
        "COPYTRACE_REPORT_STAFF_EMAILS",
        "COPYTRACE_REPORT_STAFF_LANGUAGE",
        "COPYTRACE_WEEKLY_REPORT_CRON",
    ]
    .map(str::to_owned)
    .into_iter()
    .chain(crawl)
    {
        match shown(&name) {
            Some(value) => println!("# {name} = {value:?}"),
            None => println!("# {name}: default"),
        }
    }
}

/// The configuration file named on the command line (`--config PATH`, `--config=PATH`) or by
/// `COPYTRACE_CONFIG`, found before the command line is parsed (the file feeds the parser).
pub fn config_path(args: &[std::ffi::OsString]) -> Option<std::path::PathBuf> {
    let mut iter = args.iter().skip(1);
    while let Some(arg) = iter.next() {
        let Some(text) = arg.to_str() else { continue };
        if text == "--" {
            break;
        }
        if text == "--config" {
            return iter.next().map(Into::into);
        }
        if let Some(path) = text.strip_prefix("--config=") {
            return Some(path.into());
        }
    }
    std::env::var_os("COPYTRACE_CONFIG").map(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_becomes_its_environment_variable() {
        let file = ConfigFile::parse(
            r#"
            database_url = "postgres://copytrace@db/copytrace"
            redis_url = "redis://redis:6379/0"
            log = "info"
            tsa_url = "https://freetsa.org/tsr"
            tsa_cert = "/etc/copytrace/tsa-ca.pem"
            [serve]
            listen = "0.0.0.0:8080"
            workers = 0
            [worker]
            lease_secs = 90
            [match]
            min_copied_chars = 120
            min_stretch_chars = 80
            auto_confirm_score = 0.75
            [schedule]
            timezone = "Asia/Shanghai"
            dedup_cron = "30 2 * * *"
            [alerts]
            notice_reminder_days = 5
            notice_escalate_days = 10
            notice_delist_days = 30
            "#,
        )
        .unwrap();
        let env = file.to_env();
        assert_eq!(
            env["COPYTRACE_DATABASE_URL"],
            "postgres://copytrace@db/copytrace"
        );
        assert_eq!(env["COPYTRACE_LISTEN"], "0.0.0.0:8080");
        assert_eq!(env["COPYTRACE_SERVE_WORKERS"], "0");
        assert_eq!(env["COPYTRACE_LEASE_SECS"], "90");
        assert_eq!(env["COPYTRACE_MIN_COPIED_CHARS"], "120");
        assert_eq!(env["COPYTRACE_MIN_STRETCH_CHARS"], "80");
        assert_eq!(env["COPYTRACE_AUTO_CONFIRM_SCORE"], "0.75");
        assert_eq!(env["COPYTRACE_TIMEZONE"], "Asia/Shanghai");
        assert_eq!(env["COPYTRACE_DEDUP_CRON"], "30 2 * * *");
        assert_eq!(env["COPYTRACE_NOTICE_REMINDER_DAYS"], "5");
        assert_eq!(env["COPYTRACE_NOTICE_ESCALATE_DAYS"], "10");
        assert_eq!(env["COPYTRACE_NOTICE_DELIST_DAYS"], "30");
        assert_eq!(env["COPYTRACE_TSA_URL"], "https://freetsa.org/tsr");
        assert_eq!(env["COPYTRACE_TSA_CERT"], "/etc/copytrace/tsa-ca.pem");
        assert_eq!(env.len(), 16);
    }

    #[test]
    fn crawl_settings_become_the_variables_the_crawl_flags_read() {
        let file = ConfigFile::parse(
            r#"
            [crawl]
            max_pages = 500
            delay = 1.5
            user_agent = "copytrace-test/1"
            no_conditional = true
            include = ["/book/", "/chapter/[0-9]{1,4}"]
            "#,
        )
        .unwrap();
        let env = file.to_env();
        assert_eq!(env["COPYTRACE_CRAWL_MAX_PAGES"], "500");
        assert_eq!(env["COPYTRACE_CRAWL_DELAY"], "1.5");
        assert_eq!(env["COPYTRACE_CRAWL_USER_AGENT"], "copytrace-test/1");
        assert_eq!(env["COPYTRACE_CRAWL_NO_CONDITIONAL"], "true");
        assert_eq!(
            env["COPYTRACE_CRAWL_INCLUDE"],
            "/book/\n/chapter/[0-9]{1,4}"
        );
        let unknown = ConfigFile::parse("[crawl]\nmax_page = 3")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("max_page") && unknown.contains("max_pages"),
            "{unknown}"
        );
        let nested = ConfigFile::parse("[crawl]\ninclude = [1]")
            .unwrap_err()
            .to_string();
        assert!(nested.contains("include"), "{nested}");
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_refused_by_name() {
        let unknown = ConfigFile::parse("databse_url = \"x\"")
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("databse_url"), "{unknown}");
        let section = ConfigFile::parse("[worker]\nlease = 3")
            .unwrap_err()
            .to_string();
        assert!(section.contains("lease"), "{section}");
        let wrong = ConfigFile::parse("[serve]\nworkers = \"two\"")
            .unwrap_err()
            .to_string();
        assert!(wrong.contains("invalid type"), "{wrong}");
    }

    #[test]
    fn the_config_path_comes_from_the_flag_in_either_spelling() {
        let args = |list: &[&str]| {
            list.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(
            config_path(&args(&["copytrace", "--config", "a.toml", "serve"])),
            Some("a.toml".into())
        );
        assert_eq!(
            config_path(&args(&["copytrace", "serve", "--config=b.toml"])),
            Some("b.toml".into())
        );
    }
}
