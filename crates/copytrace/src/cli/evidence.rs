//! `copytrace evidence MATCH_ID --out DIR`, `copytrace evidence verify DIR` and `copytrace
//! evidence timestamp DIR`: evidence packages of single matches, written, checked and
//! timestamped by `copytrace_service::evidence`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Subcommand;
use copytrace_service::evidence::{
    self, PackageRequest, PackageStamp, ScreenshotSettings, files, verify_package,
};
use copytrace_service::timestamp::{self, Timestamp, TokenInfo, Trust};
use copytrace_store::Id;

use super::Globals;

/// `copytrace evidence …` (its help text is the doc of `Command::Evidence`).
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EvidenceArgs {
    /// Check a package instead of writing one.
    #[command(subcommand)]
    pub command: Option<EvidenceCommand>,
    /// The match (its `id` in `copytrace export matches --format json`).
    #[arg(required = true)]
    pub match_id: Option<Id>,
    /// The directory to write the package into (created; must be empty if it exists).
    #[arg(long, value_name = "DIR", required = true)]
    pub out: Option<PathBuf>,
    /// Only a match of this rights holder's works (another holder's match is not found).
    #[arg(long, value_name = "NAME")]
    pub rights_holder: Option<String>,
    /// The Chromium executable for the screenshot (default: `chromium` or Chrome on PATH).
    #[arg(long, env = "COPYTRACE_CHROMIUM", value_name = "PATH")]
    pub chromium: Option<PathBuf>,
    /// Write the package without a screenshot.
    #[arg(long)]
    pub no_screenshot: bool,
    /// Seconds allowed for starting Chromium and for rendering the page.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub screenshot_timeout: u64,
}

/// `copytrace evidence verify|timestamp`
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Recompute the SHA-256 of every file of a package and compare with its manifest; with the
    /// database, also check that the manifest is the one recorded when the package was written.
    /// A package with a timestamp (`manifest.tsr`) has it checked: it must stamp the SHA-256 of
    /// manifest.json as it is, its signature must verify with the TSA's certificate, and with
    /// --tsa-cert that certificate must chain to the one given (without it, trust in the TSA
    /// is not established, and the output says so). Exits 1 naming every altered, missing or
    /// unlisted file and every timestamp problem.
    Verify {
        /// The package directory.
        dir: PathBuf,
        /// Check the files against the manifest only, without the database (on a machine
        /// without it; a rewritten manifest then goes unnoticed).
        #[arg(long)]
        no_database: bool,
    },
    /// Timestamp a package written without one (no TSA was configured, or it failed): the
    /// manifest must be the one recorded in the database; needs --tsa-url.
    Timestamp {
        /// The package directory.
        dir: PathBuf,
    },
}

/// Runs `copytrace evidence …`.
pub async fn run(globals: &Globals, args: EvidenceArgs) -> Result<ExitCode> {
    match args.command {
        Some(EvidenceCommand::Verify { dir, no_database }) => {
            return verify(globals, dir, no_database).await;
        }
        Some(EvidenceCommand::Timestamp { dir }) => return stamp(globals, dir).await,
        None => {}
    }
    let (Some(match_id), Some(out)) = (args.match_id, args.out) else {
        bail!("name a match and --out DIR, or `evidence verify DIR`");
    };
    let store = globals.store().await?;
    let rights_holder_id = match &args.rights_holder {
        Some(name) => Some(
            copytrace_service::holders::find(store.as_ref(), name)
                .await?
                .id,
        ),
        None => None,
    };
    let screenshot = if args.no_screenshot {
        ScreenshotSettings::Skip("not asked for (--no-screenshot)".into())
    } else {
        evidence::screenshot_settings(
            args.chromium.as_deref(),
            Duration::from_secs(args.screenshot_timeout.max(1)),
        )
    };
    let request = PackageRequest {
        match_id,
        rights_holder_id,
        out,
        screenshot,
        timestamps: globals.tsa_url.clone(),
    };
    let summary = evidence::write_package(store.as_ref(), &request).await?;
    let manifest = &summary.manifest;
    for file in &manifest.files {
        println!("{}  {}  ({} bytes)", file.sha256, file.name, file.size);
    }
    println!("{}  {}", summary.manifest_sha256, files::MANIFEST);
    match &manifest.capture {
        Some(capture) => println!(
            "raw page fetched {} from {} (HTTP {}, {}), SHA-256 {}",
            capture.fetched_at.to_rfc3339(),
            capture.final_url,
            capture.http_status,
            capture.encoding,
            capture.raw_sha256
        ),
        None => eprintln!(
            "warning: {}",
            manifest.capture_note.as_deref().unwrap_or("no raw bytes")
        ),
    }
    if let Some(reason) = &manifest.screenshot.skipped {
        eprintln!("warning: no screenshot: {reason}");
    }
    println!(
        "evidence package of match {match_id} written to {} (manifest recorded in the database)",
        summary.dir.display()
    );
    match &summary.stamp {
        PackageStamp::NotAsked => Ok(ExitCode::SUCCESS),
        PackageStamp::Stamped(stamp) => {
            print_stamp(stamp);
            Ok(ExitCode::SUCCESS)
        }
        PackageStamp::Failed(why) => {
            eprintln!(
                "warning: the package is written and recorded but has no trusted timestamp: \
                 {why}; run `copytrace evidence timestamp {}` when the authority answers",
                summary.dir.display()
            );
            Ok(ExitCode::from(super::EXIT_PARTIAL))
        }
    }
}

fn print_stamp(stamp: &Timestamp) {
    println!(
        "timestamped by {} at {} (RFC 3161, serial {}, signed by {}): {}",
        stamp.tsa_url,
        stamp.token.gen_time.to_rfc3339(),
        stamp.token.serial,
        stamp.token.signer,
        files::TIMESTAMP
    );
}

async fn stamp(globals: &Globals, dir: PathBuf) -> Result<ExitCode> {
    let Some(tsa) = &globals.tsa_url else {
        bail!(
            "no time-stamping authority is configured: give --tsa-url URL (COPYTRACE_TSA_URL, tsa_url in copytrace.toml)"
        );
    };
    let store = globals.store().await?;
    let stamp = evidence::timestamp_package(store.as_ref(), &dir, tsa).await?;
    print_stamp(&stamp);
    Ok(ExitCode::SUCCESS)
}

/// What `evidence verify` says of a verified timestamp.
fn describe_stamp(info: &TokenInfo, trusted_file: Option<&std::path::Path>) -> String {
    let trust = match (&info.trust, trusted_file) {
        (Trust::Chained(anchor), Some(file)) => format!(
            "its signer chains to the trusted certificate {anchor} ({})",
            file.display()
        ),
        (Trust::Chained(anchor), None) => {
            format!("its signer chains to the trusted certificate {anchor}")
        }
        (Trust::EmbeddedOnly, _) => "the signature was checked against the certificate \
             embedded in the token only: trust in the authority was NOT established (give \
             --tsa-cert FILE with the TSA's CA certificate)"
            .to_owned(),
    };
    format!(
        "{} is an RFC 3161 timestamp of manifest.json's SHA-256 by {}, genTime {} (serial {}); \
         {trust}",
        files::TIMESTAMP,
        info.signer,
        info.gen_time.to_rfc3339(),
        info.serial
    )
}

async fn verify(globals: &Globals, dir: PathBuf, no_database: bool) -> Result<ExitCode> {
    let store = if no_database {
        None
    } else {
        Some(globals.store().await?)
    };
    let trusted = match &globals.tsa_cert {
        Some(path) => Some(timestamp::read_trusted(path)?),
        None => None,
    };
    let check = verify_package(&dir, store.as_deref(), trusted.as_deref()).await?;
    for name in &check.verified {
        println!("ok       {name}");
    }
    for problem in &check.problems {
        println!("FAILED   {problem}");
    }
    match check.recorded {
        Some(true) => println!("ok       manifest.json is the one recorded in the database"),
        Some(false) => {}
        None => println!("(manifest.json not checked against the database: --no-database)"),
    }
    match &check.timestamp {
        Some(info) => println!(
            "ok       {}",
            describe_stamp(info, globals.tsa_cert.as_deref())
        ),
        None if !check
            .problems
            .iter()
            .any(|p| matches!(p, evidence::Problem::Timestamp(_))) =>
        {
            println!(
                "(no trusted timestamp: the package has no {})",
                files::TIMESTAMP
            );
        }
        None => {}
    }
    if !check.ok() {
        let names: Vec<String> = check.problems.iter().map(ToString::to_string).collect();
        bail!(
            "evidence package {} failed verification: {}",
            dir.display(),
            names.join("; ")
        );
    }
    println!(
        "evidence package {} of match {} verified: {} file(s) intact",
        dir.display(),
        check.match_id.map_or_else(String::new, |id| id.to_string()),
        check.verified.len()
    );
    Ok(ExitCode::SUCCESS)
}
