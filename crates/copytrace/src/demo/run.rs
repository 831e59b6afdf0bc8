//! `copytrace demo`: the whole pipeline on the bundled sample data, checked against what the
//! sample site really contains.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use copytrace_matcher::MatchConfig;
use copytrace_service::chapters::detect_chapters;
use copytrace_service::crawl::parse_seeds;
use copytrace_service::index::IndexSource;
use copytrace_service::library::LibraryFile;
use copytrace_service::review;
use copytrace_service::textfile::TextFile;
use copytrace_service::{CrawlSettings, MatchEngine, export};
use copytrace_store::Review;

use super::{LIBRARY, sample_site, serve};
use crate::backend::{Open, open_store, redact};
use crate::cli;

/// Runs the demo in a temporary database; fails when the report disagrees with the site.
pub async fn run_demo() -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let db = format!("sqlite://{}", dir.path().join("demo.db").display());
    println!("Copytrace demo — temporary database {}", redact(&db));
    let store = open_store(&db, Open::Create).await?;

    println!(
        "\n1. Registering the sample library ({} works)",
        LIBRARY.len()
    );
    let files: Vec<LibraryFile> = LIBRARY
        .iter()
        .map(|(id, text)| LibraryFile {
            path: PathBuf::from(format!("demo/library/{id}.txt")),
            external_id: (*id).to_owned(),
            file: TextFile {
                text: (*text).to_owned(),
                encoding: "UTF-8",
                title: None,
                chapters: detect_chapters(text),
            },
            catalog: Default::default(),
        })
        .collect();
    cli::library::add(store.as_ref(), "Demo Publisher", &files, None).await?;

    let site = sample_site();
    let server = serve(site.clone())
        .await
        .context("cannot start the sample site")?;
    let base = server.base_url();
    println!("\n2. Crawling the sample piracy site at {base}");
    let settings = CrawlSettings {
        allow_private_addresses: true,
        ..CrawlSettings::default()
    };
    let seeds = parse_seeds(std::slice::from_ref(&base))?;
    cli::crawl::crawl_and_print(store.clone(), &seeds, &settings, 0).await?;

    println!("\n3. Matching pages against the library");
    let engine = MatchEngine::new(store.clone(), IndexSource::Memory, MatchConfig::default());
    cli::matching::match_and_print(engine, copytrace_service::matching::default_concurrency())
        .await?;

    println!("\n4. Report\n");
    export::report(
        store.as_ref(),
        &copytrace_store::MatchFilter::reported(),
        &mut std::io::stdout().lock(),
    )
    .await?;

    // Below the certainty gate: found, but reported only once a person confirms them.
    let queue = review::queue(store.as_ref(), None, &[Review::Pending]).await?;
    if !queue.is_empty() {
        println!(
            "\nWaiting for review (below the auto-confirm score; `copytrace review confirm ID`):"
        );
        for record in &queue {
            println!(
                "  match {}  score {:.2}  {} copied characters  {}  ←  {}",
                record.id,
                record.score,
                record.copied_chars,
                record.page_url,
                record.work_external_id
            );
        }
    }

    // The demo checks itself: every pirated page found against the right work (confirmed, or
    // waiting for review), nothing else, not even in the review queue.
    let records =
        export::matches(store.as_ref(), &copytrace_store::MatchFilter::reported()).await?;
    let requested = server.requested_paths();
    server.stop().await;
    println!("\n5. Checking the report against what the sample site really contains\n");
    let mut problems = 0;
    for page in &site.pages {
        let url = format!("{}{}", base.trim_end_matches('/'), page.path);
        let found: BTreeSet<&str> = records
            .iter()
            .filter(|r| r.page_url == url)
            .map(|r| r.work_external_id.as_str())
            .collect();
        let waiting = records
            .iter()
            .any(|r| r.page_url == url && r.review == Review::Pending);
        let expected: BTreeSet<&str> = if page.disallowed {
            BTreeSet::new()
        } else {
            page.copies.iter().copied().collect()
        };
        let fetched = requested.contains(&page.path);
        let ok = found == expected && !(page.disallowed && fetched);
        problems += usize::from(!ok);
        let verdict = match (&expected.is_empty(), page.disallowed) {
            (_, true) => format!(
                "not fetched (robots.txt){}",
                if fetched { " — BUT IT WAS" } else { "" }
            ),
            (true, false) => format!(
                "not reported{}",
                if found.is_empty() {
                    ""
                } else {
                    " — BUT IT WAS"
                }
            ),
            (false, false) => format!(
                "found {}{}",
                found.iter().copied().collect::<Vec<_>>().join(", "),
                if waiting { " (waiting for review)" } else { "" }
            ),
        };
        println!(
            "  {} {:<28} {:<50} {}",
            if ok { "✓" } else { "✗" },
            page.path,
            page.label,
            verdict
        );
    }
    drop(store);
    if problems > 0 {
        bail!("the demo report disagrees with the sample site on {problems} page(s)");
    }
    println!(
        "\nAll pirated sample pages were found against the right work; no unrelated page was accused."
    );
    Ok(ExitCode::SUCCESS)
}
