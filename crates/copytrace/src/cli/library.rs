//! `copytrace library`: the source library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use copytrace_fingerprint::FingerprintConfig;
use copytrace_service::holders::DEFAULT_RIGHTS_HOLDER;
use copytrace_service::library::{
    self, AddReport, IncrementalMatch, IndexUpdate, LibraryFile, WorkRef,
};
use copytrace_store::{Store, WorkStatus, WriteOutcome};

use super::Globals;
use super::progress::Bar;
use copytrace_service::catalog::import_catalog;

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
    /// Import a catalog: a CSV file with the columns external_id, title, author, rights_holder,
    /// path, published_at and optionally licensed_hosts (separated by `;`). Paths are read
    /// relative to the catalog's directory; published_at is a date (2024-03-01), an RFC 3339
    /// time, or empty. Each row is checked and stored on its own: bad rows are reported with
    /// their line numbers (exit code 3) and the good ones imported. Re-importing changes
    /// nothing.
    Import {
        /// The catalog file.
        catalog: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the works in the library.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Withdraw a work: it leaves every index at once (in memory and Redis) and is never
    /// matched again. Its matches are kept, listed as `withdrawn`. Adding the work again
    /// brings it back.
    ///
    /// ID is the work's internal id (the first column of `library list`), never its catalog
    /// id, even when that is a number: `--external-id X` names the work by its catalog id
    /// instead, and is refused when several rights holders' works have that id (unless
    /// `--rights-holder` picks one).
    #[command(alias = "remove")]
    Rm {
        /// Which work.
        #[command(flatten)]
        work: WorkArgs,
    },
    /// Show one work: its owner, size, chapters, fingerprints and matches by status.
    ///
    /// ID is the work's internal id (the first column of `library list`), never its catalog
    /// id, even when that is a number: `--external-id X` names the work by its catalog id
    /// instead, and is refused when several rights holders' works have that id (unless
    /// `--rights-holder` picks one).
    Show {
        /// Which work.
        #[command(flatten)]
        work: WorkArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Which work `library rm` and `library show` act on: the internal id, or `--external-id`.
///
/// The rule never guesses which of the two a text means. Catalog ids are often numbers too
/// (`1001`, an ISBN), so "the internal id if a work has it, else the external id" could
/// withdraw another work than the one the publisher meant as soon as the numbers collide; a
/// positional argument is therefore always the internal id, and a catalog id is only ever read
/// from `--external-id`. Catalog ids are unique per rights holder only: when several holders'
/// works share one, the command is refused, naming them, rather than acting on one of them.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkArgs {
    /// The work's internal id (the first column of `library list`).
    #[arg(value_name = "ID", required_unless_present = "external_id")]
    id: Option<String>,
    /// Name the work by its catalog external id instead (the `external_id` column of the
    /// catalog, or the file stem for `library add`).
    #[arg(long, value_name = "EXTERNAL_ID", conflicts_with = "id")]
    external_id: Option<String>,
    /// With --external-id: the rights holder whose work it is, when several holders' works
    /// share the external id.
    #[arg(long, value_name = "NAME", requires = "external_id")]
    rights_holder: Option<String>,
}

impl WorkArgs {
    /// The work named, as the service resolves it.
    fn work_ref(self) -> Result<WorkRef> {
        if let Some(external_id) = self.external_id {
            return Ok(WorkRef::External {
                external_id,
                rights_holder: self.rights_holder,
            });
        }
        let id = self.id.unwrap_or_default();
        match id.trim().parse::<i64>() {
            Ok(number) => Ok(WorkRef::Id(number)),
            Err(_) => bail!(
                "{id:?} is not a work id (the number in the first column of `library list`); \
                 to name a work by its catalog id, use --external-id {id:?}"
            ),
        }
    }
}

/// Runs `copytrace library …`.
pub async fn run(globals: &Globals, command: LibraryCommand) -> Result<ExitCode> {
    match command {
        LibraryCommand::Add { paths, holder } => {
            // Every file is read and checked before the store is opened or anything stored.
            let bar = Bar::counted("{prefix:>8} {bar:30} {pos}/{len} files [{elapsed}]");
            let found = library::check_library_files(&paths, &bar);
            bar.finish();
            let found = found?;
            let store = globals.store().await?;
            let mut index = globals.redis_index()?;
            let bar = Bar::counted("{prefix:>8} {bar:30} {pos}/{len} files [{elapsed}]");
            let report = library::add_paths(
                store.as_ref(),
                &holder,
                &found,
                index.as_mut(),
                &FingerprintConfig::default(),
                &bar,
            )
            .await;
            bar.finish();
            let report = report?;
            print_added(&report);
            print_index_update(report.index, &globals.redis_prefix);
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Import { catalog, json } => {
            let store = globals.store().await?;
            let mut index = globals.redis_index()?;
            let bar = Bar::counted("importing {bar:30} {pos}/{len} rows [{elapsed}] {wide_msg}");
            let report = import_catalog(
                store.as_ref(),
                &catalog,
                index.as_mut(),
                &FingerprintConfig::default(),
                &bar,
            )
            .await;
            bar.finish();
            let report = report?;
            let mut counts = [0usize; 3];
            for o in &report.imported {
                counts[outcome_slot(o.outcome).1] += 1;
            }
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "added": counts[0],
                        "updated": counts[1],
                        "unchanged": counts[2],
                        "rejected": report.rejected,
                        "matching": report.matching,
                    }))?
                );
            } else {
                for rejected in &report.rejected {
                    eprintln!(
                        "{}:{}: {}",
                        catalog.display(),
                        rejected.line,
                        rejected.error
                    );
                }
                println!(
                    "{} row(s) imported: {} added, {} updated, {} unchanged; {} rejected",
                    report.imported.len(),
                    counts[0],
                    counts[1],
                    counts[2],
                    report.rejected.len()
                );
            }
            if !json {
                print_matching(&report.matching);
            }
            print_index_update(report.index, &globals.redis_prefix);
            Ok(if report.rejected.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(3)
            })
        }
        LibraryCommand::Rm { work } => {
            let work = work.work_ref()?;
            let store = globals.store().await?;
            let id = library::resolve_work(store.as_ref(), &work).await?;
            let mut index = globals.redis_index()?;
            let done = library::withdraw_work(store.as_ref(), id, index.as_mut()).await?;
            let work = &done.work;
            if done.changed {
                println!(
                    "withdrew work {} ({}, 《{}》): it is no longer matched; its matches stay, \
                     listed as withdrawn",
                    work.id, work.external_id, work.title
                );
            } else {
                println!(
                    "work {} ({}, 《{}》) was already withdrawn",
                    work.id, work.external_id, work.title
                );
            }
            print_index_update(done.index, &globals.redis_prefix);
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Show { work, json } => {
            let work = work.work_ref()?;
            let store = globals.store().await?;
            let id = library::resolve_work(store.as_ref(), &work).await?;
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
            if let Some(author) = &work.author {
                println!("author:        {author}");
            }
            if let Some(published) = work.published_at {
                println!("published:     {}", published.format("%Y-%m-%d"));
            }
            match work.withdrawn_at {
                Some(at) => println!(
                    "status:        withdrawn {} (not matched)",
                    at.format("%Y-%m-%d %H:%M:%S")
                ),
                None => println!("status:        active"),
            }
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
            if details.chapters.is_empty() {
                println!("chapters:      none detected (the work is one unit)");
            } else {
                println!("chapters:      {}", details.chapters.len());
                for chapter in &details.chapters {
                    let title = if chapter.title.is_empty() {
                        "(untitled)"
                    } else {
                        &chapter.title
                    };
                    println!(
                        "  {:>4}  {title}  ({} bytes)",
                        chapter.ordinal + 1,
                        chapter.end - chapter.start
                    );
                }
            }
            if !details.licensed_hosts.is_empty() {
                println!("licensed on:   {}", details.licensed_hosts.join(", "));
            }
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
                    let chapters = match w.chapter_count {
                        0 => String::new(),
                        n => format!(", {n} chapters"),
                    };
                    let status = match w.status {
                        WorkStatus::Active => "",
                        WorkStatus::Withdrawn => ", withdrawn",
                    };
                    println!(
                        "{:>6}  {}  《{}》  {} bytes, {} windows{chapters}{status}",
                        w.id, w.external_id, w.title, w.content_len, w.segment_count
                    );
                }
                println!("{} work(s)", works.len());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// How a stored work is counted: its word and its slot in `[added, updated, unchanged]`.
fn outcome_slot(outcome: WriteOutcome) -> (&'static str, usize) {
    match outcome {
        WriteOutcome::Created => ("added", 0),
        WriteOutcome::Updated => ("updated", 1),
        WriteOutcome::Unchanged => ("unchanged", 2),
    }
}

/// Says which stored pages are to be matched against the new and changed works.
fn print_matching(matching: &IncrementalMatch) {
    let due = matching.candidates + matching.unsketched;
    if due > 0 {
        println!(
            "{due} stored page(s) may copy them and are due for matching ({} of {} page \
             sketches collide{}): run `copytrace match`",
            matching.candidates,
            matching.pages_scanned,
            match matching.unsketched {
                0 => String::new(),
                n => format!(", {n} matched before sketches existed"),
            }
        );
    }
}

/// Says what became of the Redis index after the library changed.
fn print_index_update(update: IndexUpdate, prefix: &str) {
    match update {
        IndexUpdate::NotUsed => {}
        IndexUpdate::Updated => println!("Redis index under {prefix:?} updated"),
        IndexUpdate::Built { works } => println!(
            "Redis index under {prefix:?} built from the library ({works} work(s)): it was empty"
        ),
        IndexUpdate::NeedsRebuild => eprintln!(
            "note: the Redis index under {prefix:?} was not built from this library; run \
             `copytrace index rebuild` before matching"
        ),
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
    print_added(&report);
    Ok(report)
}

/// One line per added work, a summary, which pages are due, and the Redis index.
fn print_added(report: &AddReport) {
    let mut counts = [0usize; 3];
    for o in &report.works {
        let (word, slot) = outcome_slot(o.outcome);
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
    print_matching(&report.matching);
}
