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

/// `[match]` settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchSection {
    /// `COPYTRACE_CANDIDATES`
    pub candidates: Option<String>,
    /// `COPYTRACE_MIN_COPIED_CHARS`
    pub min_copied_chars: Option<u32>,
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
        Ok(file)
    }

    /// Every setting of the file as `(environment variable, value)`.
    pub fn to_env(&self) -> BTreeMap<&'static str, String> {
        let mut env = BTreeMap::new();
        let mut put = |name: &'static str, value: Option<String>| {
            if let Some(value) = value {
                env.insert(name, value);
            }
        };
        put("COPYTRACE_DATABASE_URL", self.database_url.clone());
        put("COPYTRACE_REDIS_URL", self.redis_url.clone());
        put("COPYTRACE_REDIS_PREFIX", self.redis_prefix.clone());
        put("COPYTRACE_LOG", self.log.clone());
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
            [serve]
            listen = "0.0.0.0:8080"
            workers = 0
            [worker]
            lease_secs = 90
            [match]
            min_copied_chars = 120
            [schedule]
            timezone = "Asia/Shanghai"
            dedup_cron = "30 2 * * *"
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
        assert_eq!(env["COPYTRACE_TIMEZONE"], "Asia/Shanghai");
        assert_eq!(env["COPYTRACE_DEDUP_CRON"], "30 2 * * *");
        assert_eq!(env.len(), 9);
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
