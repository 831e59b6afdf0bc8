//! `copytrace library`: the source library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use copytrace_fingerprint::FingerprintConfig;
use copytrace_service::holders::DEFAULT_RIGHTS_HOLDER;
use copytrace_service::index::open_redis_index;
use copytrace_service::library::{self, AddReport, IndexUpdate, LibraryFile};
use copytrace_store::{Store, WriteOutcome};

use super::Globals;

/// `copytrace library …`
#[derive(Debug, Subcommand)]
pub enum LibraryCommand {
    /// Add works: each work file is one work whose id is the file stem: plain text (`.txt`;
    /// UTF-8, UTF-16 with a BOM, GBK/GB18030 or Big5, detected), HTML (`.html`, `.htm`,
    /// `.xhtml`; its main text), Markdown (`.md`, `.markdown`) or EPUB 2/3 (`.epub`, without
    /// DRM; its spine in reading order). The title is the EPUB's, the HTML `<title>`, the first
    /// Markdown heading, or the first non-empty line. Directories are walked. Re-adding an
    /// unchanged file changes nothing; a changed file replaces that work.
    Add {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Rights holder owning the works (created when new; see `copytrace rights-holder`).
        /// Without it, works belong to the default rights holder, `default`.
        #[arg(long = "rights-holder", alias = "holder", value_name = "NAME",
              default_value = DEFAULT_RIGHTS_HOLDER)]
        holder: String,
    },
    /// List the works in the library.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one work: its owner, size, fingerprints and matches by status.
    Show {
        /// The work's id (the first column of `library list --json`).
        id: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `copytrace library …`.
pub async fn run(globals: &Globals, command: LibraryCommand) -> Result<ExitCode> {
    match command {
        LibraryCommand::Add { paths, holder } => {
            // Every file is read and checked before anything is stored.
            let files = library::read_library_files(&paths)?;
            let store = globals.store().await?;
            let mut index = match &globals.redis_url {
                Some(url) => Some(open_redis_index(url, &globals.redis_prefix)?),
                None => None,
            };
            let report = add(store.as_ref(), &holder, &files, index.as_mut()).await?;
            match report.index {
                IndexUpdate::NotUsed => {}
                IndexUpdate::Updated => {
                    println!("Redis index under {:?} updated", globals.redis_prefix);
                }
                IndexUpdate::NeedsRebuild => eprintln!(
                    "note: the Redis index under {:?} was not built from this library; run \
                     `copytrace index rebuild` before matching",
                    globals.redis_prefix
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Show { id, json } => {
            let store = globals.store().await?;
            let details = library::work_details(store.as_ref(), id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&details)?);
                return Ok(ExitCode::SUCCESS);
            }
            let work = &details.work;
            println!("id:            {}", work.id);
            println!("external id:   {}", work.external_id);
            println!("title:         《{}》", work.title);
            println!("rights holder: {}", details.rights_holder);
            println!(
                "text:          {} bytes, {} windows, content hash {}",
                work.content_len, work.segment_count, work.content_hash
            );
            let fingerprints: Vec<String> = details
                .fingerprints
                .iter()
                .map(|(name, version)| format!("{name} v{version}"))
                .collect();
            println!("fingerprints:  {}", fingerprints.join(", "));
            let matches: Vec<String> = details
                .matches
                .iter()
                .map(|(status, count)| format!("{count} {status}"))
                .collect();
            println!(
                "matches:       {}",
                if matches.is_empty() {
                    "none".to_owned()
                } else {
                    matches.join(", ")
                }
            );
            println!(
                "added:         {}  updated: {}",
                work.created_at.format("%Y-%m-%d %H:%M:%S"),
                work.updated_at.format("%Y-%m-%d %H:%M:%S")
            );
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::List { json } => {
            let store = globals.store().await?;
            let works = library::list_works(store.as_ref(), None).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&works)?);
            } else {
                for w in &works {
                    println!(
                        "{}  《{}》  {} bytes, {} windows",
                        w.external_id, w.title, w.content_len, w.segment_count
                    );
                }
                println!("{} work(s)", works.len());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Adds `files` for `holder` and prints one line per work and a summary.
pub async fn add(
    store: &dyn Store,
    holder: &str,
    files: &[LibraryFile],
    index: Option<&mut copytrace_index_redis::RedisIndex>,
) -> Result<AddReport> {
    let report =
        library::add_works(store, holder, files, index, &FingerprintConfig::default()).await?;
    let mut counts = [0usize; 3];
    for o in &report.works {
        let (word, slot) = match o.outcome {
            WriteOutcome::Created => ("added", 0),
            WriteOutcome::Updated => ("updated", 1),
            WriteOutcome::Unchanged => ("unchanged", 2),
        };
        counts[slot] += 1;
        println!(
            "{word:>9}  {}  《{}》  {} windows, {}",
            o.external_id, o.title, o.windows, o.encoding
        );
    }
    println!(
        "{} work(s): {} added, {} updated, {} unchanged",
        report.works.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    Ok(report)
}
