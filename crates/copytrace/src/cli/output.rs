//! `copytrace export` and `copytrace report`: the match library for analysts and scripts.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Subcommand, ValueEnum};
use copytrace_service::export::{self, ExportFormat, ExportOptions};
use copytrace_store::Review;

use super::Globals;

/// `copytrace export …`
#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Export page × work matches, one row per match.
    Matches {
        /// Output format.
        #[arg(long, value_enum, default_value_t = FormatArg::Csv)]
        format: FormatArg,
        /// Write to this file (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Start a CSV export with a UTF-8 byte order mark, so that Excel reads it as UTF-8
        /// (without one it assumes the machine's legacy code page and garbles Chinese).
        #[arg(long)]
        bom: bool,
        /// Which matches it exports.
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

/// Which matches an export or report holds.
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Also include matches on hosts licensed to publish the work (status `licensed`; see
    /// `rights-holder license`), which are not infringements and are left out by default.
    #[arg(long)]
    include_licensed: bool,
    /// Review states to include (repeatable, or comma-separated). By default every reported
    /// infringement: `confirmed` ones and those `pending` in the review queue (see `copytrace
    /// review`), not those a person rejected or licensed.
    #[arg(long, value_enum, value_delimiter = ',',
          default_values_t = [ReviewArg::Confirmed, ReviewArg::Pending])]
    review: Vec<ReviewArg>,
}

impl From<ScopeArgs> for export::Scope {
    fn from(args: ScopeArgs) -> Self {
        export::Scope {
            include_licensed: args.include_licensed,
            reviews: ReviewArg::states(&args.review),
        }
    }
}

/// A review state on the command line (see `copytrace review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewArg {
    /// Waiting for a person (below the certainty gate).
    Pending,
    /// Reported: confirmed by a person or the certainty gate.
    Confirmed,
    /// Judged a false positive.
    Rejected,
    /// Judged licensed.
    Licensed,
    /// Every state.
    All,
}

impl ReviewArg {
    /// The review states named (every state if `all` is among them).
    pub fn states(args: &[ReviewArg]) -> Vec<Review> {
        if args.contains(&ReviewArg::All) {
            return Vec::new();
        }
        let mut states: Vec<Review> = args
            .iter()
            .filter_map(|arg| match arg {
                ReviewArg::Pending => Some(Review::Pending),
                ReviewArg::Confirmed => Some(Review::Confirmed),
                ReviewArg::Rejected => Some(Review::Rejected),
                ReviewArg::Licensed => Some(Review::Licensed),
                ReviewArg::All => None,
            })
            .collect();
        states.dedup();
        states
    }
}

/// Export formats on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Comma-separated values in UTF-8 with a header row (see `--bom`).
    Csv,
    /// A JSON array of matches with evidence offsets.
    Json,
    /// One JSON object per line, the same objects as `json`.
    Ndjson,
    /// An Excel workbook: typed columns (dates, numbers), frozen header row, autofilter.
    Xlsx,
}

impl From<FormatArg> for ExportFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Csv => ExportFormat::Csv,
            FormatArg::Json => ExportFormat::Json,
            FormatArg::Ndjson => ExportFormat::Ndjson,
            FormatArg::Xlsx => ExportFormat::Xlsx,
        }
    }
}

/// Runs `copytrace export …`.
pub async fn run_export(globals: &Globals, command: ExportCommand) -> Result<ExitCode> {
    let ExportCommand::Matches {
        format,
        out,
        bom,
        scope,
    } = command;
    let format = ExportFormat::from(format);
    let store = globals.store().await?;
    let Some(path) = out else {
        let stdout = std::io::stdout();
        if format.is_binary() && stdout.is_terminal() {
            bail!("an XLSX export is binary: write it to a file with --out FILE");
        }
        let options = ExportOptions {
            bom,
            scratch_dir: None,
        };
        let mut stdout = stdout;
        export::export_matches(store.as_ref(), format, scope.into(), &options, &mut stdout).await?;
        return Ok(ExitCode::SUCCESS);
    };
    // Write beside the target and rename, so a failed export never leaves half a file. The
    // XLSX sheet's scratch file goes there too: the system's temporary directory may be small
    // or held in memory.
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(".".as_ref());
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write to {}", dir.display()))?;
    let options = ExportOptions {
        bom,
        scratch_dir: Some(dir.to_owned()),
    };
    let count = export::export_matches(
        store.as_ref(),
        format,
        scope.into(),
        &options,
        temp.as_file_mut(),
    )
    .await?;
    temp.as_file_mut()
        .sync_all()
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("exported {count} match(es) to {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Runs `copytrace report`.
pub async fn run_report(globals: &Globals, scope: ScopeArgs) -> Result<ExitCode> {
    let store = globals.store().await?;
    export::report(store.as_ref(), scope.into(), &mut std::io::stdout().lock()).await?;
    Ok(ExitCode::SUCCESS)
}
