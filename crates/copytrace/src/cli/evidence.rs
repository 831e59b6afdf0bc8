//! `copytrace evidence MATCH_ID --out DIR` and `copytrace evidence verify DIR`: evidence
//! packages of single matches, written and checked by `copytrace_service::evidence`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Subcommand;
use copytrace_service::evidence::{
    self, PackageRequest, ScreenshotSettings, files, verify_package,
};
use copytrace_store::Id;

use super::Globals;

/// `copytrace evidence …`
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

/// `copytrace evidence verify`
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Recompute the SHA-256 of every file of a package and compare with its manifest; with the
    /// database, also check that the manifest is the one recorded when the package was written.
    /// Exits 1 naming every altered, missing or unlisted file.
    Verify {
        /// The package directory.
        dir: PathBuf,
        /// Check the files against the manifest only, without the database (on a machine
        /// without it; a rewritten manifest then goes unnoticed).
        #[arg(long)]
        no_database: bool,
    },
}

/// Runs `copytrace evidence …`.
pub async fn run(globals: &Globals, args: EvidenceArgs) -> Result<ExitCode> {
    if let Some(EvidenceCommand::Verify { dir, no_database }) = args.command {
        return verify(globals, dir, no_database).await;
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
    Ok(ExitCode::SUCCESS)
}

async fn verify(globals: &Globals, dir: PathBuf, no_database: bool) -> Result<ExitCode> {
    let store = if no_database {
        None
    } else {
        Some(globals.store().await?)
    };
    let check = verify_package(&dir, store.as_deref()).await?;
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
