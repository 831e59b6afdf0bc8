//! What the library and matching benchmarks store: a library file of a given text, and a
//! crawled page of a given text, as the CLI would have them.

use copytrace_service::library::{CatalogEntry, LibraryFile};
use copytrace_service::textfile::TextFile;
use copytrace_store::{NewPage, Store};

/// A UTF-8 library file `<id>.txt` holding `text`, with no title, chapters or catalog entry.
pub fn library_file(id: String, text: String) -> LibraryFile {
    LibraryFile {
        path: format!("{id}.txt").into(),
        external_id: id,
        file: TextFile {
            text,
            encoding: "UTF-8",
            title: None,
            chapters: Vec::new(),
        },
        catalog: CatalogEntry::default(),
    }
}

/// Stores page `n` of `http://pirate.example/` with `text`, fetched `now` (due for matching).
pub async fn store_page(
    store: &dyn Store,
    n: usize,
    text: String,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<()> {
    store
        .upsert_page(&NewPage {
            url: format!("http://pirate.example/{n}.html"),
            title: None,
            content_hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes())),
            text,
            http_status: 200,
            fetched_at: now,
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await?;
    Ok(())
}
