//! `copytrace export` and `copytrace report`: the match library for analysts and scripts.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Subcommand, ValueEnum};
use copytrace_analytics::stats::SiteGrouping;
use copytrace_service::export::{self, ExportFormat, ExportOptions, StatsTable};
use copytrace_store::{MatchFilter, StatsFilter, Store};

use super::Globals;
use super::filters::{FilterArgs, ScopeArgs};

/// `copytrace export …`
#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Export page × work matches, one row per match (the reported infringements unless
    /// filtered otherwise).
    Matches {
        /// Which matches.
        #[command(flatten)]
        scope: ScopeArgs,
        /// Where and how.
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Export copies per work (as `stats works`), or per chapter with `--chapters`.
    Works {
        /// Per chapter instead (works with chapters only).
        #[arg(long)]
        chapters: bool,
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Only the first N rows (the largest).
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Where and how.
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Export copies per site (as `stats sites`), or per registered domain with `--by-domain`.
    Sites {
        /// One row per registered domain instead of per host.
        #[arg(long)]
        by_domain: bool,
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Only the first N rows (the largest).
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Where and how.
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Export activity per UTC day (as `stats daily`).
    Daily {
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Where and how.
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Export the time from publication to the first copy, one row per work and site: the
    /// series behind `stats time-to-piracy`, ready for a chart.
    TimeToPiracy {
        /// Which copies are counted.
        #[command(flatten)]
        filter: FilterArgs,
        /// Where and how.
        #[command(flatten)]
        output: OutputArgs,
    },
}

/// Where an export goes and in which format.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
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

/// What one export writes.
enum Rows {
    /// The matches a filter selects.
    Matches(MatchFilter),
    /// A statistics table, its filter and its row limit.
    Stats(StatsTable, StatsFilter, Option<usize>),
}

impl Rows {
    /// Writes the rows to `out`; returns how many.
    async fn write(
        &self,
        store: &dyn Store,
        format: ExportFormat,
        options: &ExportOptions,
        out: &mut (dyn Write + Send),
    ) -> copytrace_service::Result<u64> {
        match self {
            Rows::Matches(filter) => {
                export::export_matches(store, format, filter, options, out).await
            }
            Rows::Stats(table, filter, top) => {
                export::export_stats(store, *table, filter, *top, format, options, out).await
            }
        }
    }

    /// What a row is, to say how many were written.
    fn noun(&self) -> &'static str {
        match self {
            Rows::Matches(_) => "match(es)",
            Rows::Stats(..) => "row(s)",
        }
    }
}

/// Runs `copytrace export …`.
pub async fn run_export(globals: &Globals, command: ExportCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let store = store.as_ref();
    let (table, filter, top, output) = match command {
        ExportCommand::Matches { scope, output } => {
            let rows = Rows::Matches(scope.match_filter(store).await?);
            return write_export(store, &rows, &output).await;
        }
        ExportCommand::Works {
            chapters,
            filter,
            top,
            output,
        } => {
            let table = if chapters {
                StatsTable::Chapters
            } else {
                StatsTable::Works
            };
            (table, filter, top, output)
        }
        ExportCommand::Sites {
            by_domain,
            filter,
            top,
            output,
        } => {
            let grouping = if by_domain {
                SiteGrouping::Domain
            } else {
                SiteGrouping::Host
            };
            (StatsTable::Sites(grouping), filter, top, output)
        }
        ExportCommand::Daily { filter, output } => (StatsTable::Daily, filter, None, output),
        ExportCommand::TimeToPiracy { filter, output } => {
            (StatsTable::TimeToPiracy, filter, None, output)
        }
    };
    let rows = Rows::Stats(table, filter.stats_filter(store).await?, top);
    write_export(store, &rows, &output).await
}

/// Writes one export to standard output or, atomically, to `--out`, and says how many rows it
/// wrote there.
async fn write_export(store: &dyn Store, rows: &Rows, output: &OutputArgs) -> Result<ExitCode> {
    let format = ExportFormat::from(output.format);
    let Some(path) = &output.out else {
        let mut stdout = std::io::stdout();
        if format.is_binary() && stdout.is_terminal() {
            bail!("an XLSX export is binary: write it to a file with --out FILE");
        }
        let options = ExportOptions {
            bom: output.bom,
            scratch_dir: None,
        };
        rows.write(store, format, &options, &mut stdout).await?;
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
        bom: output.bom,
        scratch_dir: Some(dir.to_owned()),
    };
    let count = rows
        .write(store, format, &options, temp.as_file_mut())
        .await?;
    temp.as_file_mut()
        .sync_all()
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("exported {count} {} to {}", rows.noun(), path.display());
    Ok(ExitCode::SUCCESS)
}

/// Runs `copytrace report`.
pub async fn run_report(globals: &Globals, scope: ScopeArgs) -> Result<ExitCode> {
    let store = globals.store().await?;
    let filter = scope.match_filter(store.as_ref()).await?;
    export::report(store.as_ref(), &filter, &mut std::io::stdout().lock()).await?;
    Ok(ExitCode::SUCCESS)
}
