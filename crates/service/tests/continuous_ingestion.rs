//! A catalog imported all day must not stall matching: while `library add` files batch after
//! batch of new works in the shared Redis index, a match worker keeps matching (the index lags
//! only by works added, whose pages are marked once the index holds them), and the works are
//! found as soon as their batch is filed. Needs the Redis server `./scripts/test` starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use copytrace_fingerprint::FingerprintConfig;
use copytrace_matcher::MatchConfig;
use copytrace_service::MatchEngine;
use copytrace_service::index::{IndexSource, open_redis_index};
use copytrace_service::library::{CatalogEntry, IndexUpdate, LibraryFile, add_works};
use copytrace_service::textfile::TextFile;
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{Id, Store};

/// The test server's URL. Unset means the tests were not started by `./scripts/test`: that is
/// a failure, never a reason to skip.
fn redis_url() -> String {
    std::env::var("COPYTRACE_TEST_REDIS_URL").unwrap_or_else(|_| {
        panic!(
            "COPYTRACE_TEST_REDIS_URL is not set: run ./scripts/test, which starts a real \
             redis-server for these tests (or export the URL of a disposable Redis yourself)"
        )
    })
}

/// Distinct random text of `chars` common CJK characters with punctuation.
fn text(seed: u64, chars: usize) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::new();
    for i in 0..chars {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push(char::from_u32(0x4E00 + (state % 0x1400) as u32).expect("a CJK character"));
        if i % 20 == 19 {
            out.push('，');
        }
    }
    out
}

fn file(n: u64) -> LibraryFile {
    LibraryFile {
        path: format!("w{n}.txt").into(),
        external_id: format!("w{n}"),
        file: TextFile {
            text: text(n + 1, 800),
            encoding: "UTF-8",
            title: None,
            chapters: Vec::new(),
        },
        catalog: CatalogEntry::default(),
    }
}

/// A page carrying 400 characters of work `n` inside text of its own.
fn page_copying(n: u64) -> String {
    let work: String = text(n + 1, 800).chars().skip(200).take(400).collect();
    format!(
        "{}\n{work}\n{}",
        text(10_000 + n, 150),
        text(20_000 + n, 150)
    )
}

/// A fresh SQLite library and an empty Redis namespace for one test.
struct Fresh {
    url: String,
    prefix: String,
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    index: copytrace_index_redis::RedisIndex,
}

impl Fresh {
    async fn new(name: &str) -> Fresh {
        let url = redis_url();
        let prefix = format!("{name}-{}", std::process::id());
        let dir = tempfile::tempdir().expect("a temporary directory");
        let db = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&db).await.expect("the store opens");
        store.migrate().await.expect("migrations run");
        let index = open_redis_index(&url, &prefix).expect("Redis answers");
        index.delete_namespace().expect("a clean namespace");
        Fresh {
            url,
            prefix,
            _dir: dir,
            store: Arc::new(store),
            index,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_workers_keep_matching_while_works_are_added_and_find_them_once_filed() {
    let Fresh {
        url,
        prefix,
        _dir,
        store,
        mut index,
    } = Fresh::new("test-ingestion").await;
    let config = FingerprintConfig::default();

    let first: Vec<LibraryFile> = (0..40).map(file).collect();
    let added = add_works(store.as_ref(), "h", &first, Some(&mut index), &config)
        .await
        .expect("the first works are added");
    assert!(
        matches!(added.index, IndexUpdate::Built { works: 40 }),
        "{:?}",
        added.index
    );
    let first_id: Id = added.works[0].work_id;

    let source = IndexSource::Redis {
        url: url.clone(),
        prefix: prefix.clone(),
    };
    let engine = MatchEngine::new(store.clone(), source, MatchConfig::default());
    engine.preload().await.expect("the worker loads the index");

    // Twelve `library add` runs of 32 works each, one after the other, as a catalog import.
    let ingesting = Arc::new(AtomicBool::new(true));
    let ingestion = {
        let (store, url, prefix, ingesting) = (
            store.clone(),
            url.clone(),
            prefix.clone(),
            ingesting.clone(),
        );
        tokio::spawn(async move {
            let mut index = open_redis_index(&url, &prefix).expect("Redis answers");
            let mut last = Vec::new();
            for batch in 0..12u64 {
                let files: Vec<LibraryFile> =
                    (40 + batch * 32..40 + (batch + 1) * 32).map(file).collect();
                let report = add_works(store.as_ref(), "h", &files, Some(&mut index), &config)
                    .await
                    .expect("a batch is added");
                assert_eq!(report.index, IndexUpdate::Updated);
                last = report.works.iter().map(|w| w.work_id).collect();
            }
            ingesting.store(false, Ordering::SeqCst);
            last
        })
    };

    // Meanwhile the worker matches: no page is refused or waits for the import to end.
    let started = Instant::now();
    let mut matched_during = 0;
    while ingesting.load(Ordering::SeqCst) {
        let found = engine
            .match_text(&page_copying(0))
            .await
            .expect("matching goes on while works are added");
        assert_eq!(
            found.iter().map(|m| m.work_id).collect::<Vec<_>>(),
            [first_id]
        );
        matched_during += 1;
    }
    let last_batch = ingestion.await.expect("the import ends");
    assert!(
        matched_during >= 3,
        "only {matched_during} pages matched during {:?} of import",
        started.elapsed()
    );

    // A work of the last batch is found at once: the index is ahead of the loaded matcher,
    // which learns the new works before matching.
    let found = engine
        .match_text(&page_copying(40 + 11 * 32 + 5))
        .await
        .expect("matching");
    assert_eq!(
        found.iter().map(|m| m.work_id).collect::<Vec<_>>(),
        [last_batch[5]]
    );
    index.delete_namespace().expect("clean up");
}

/// Works appended until the workers' hash filter is too full to spare lookups: the next
/// `library add` builds a larger one from the library's texts, holding every work's hashes,
/// so a worker loading it finds copies of works old and new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hash_filter_grown_too_full_is_built_again_by_the_next_library_add() {
    use copytrace_matcher::postings::HashFilter;

    let Fresh {
        url,
        prefix,
        _dir,
        store,
        mut index,
    } = Fresh::new("test-filter-growth").await;
    let config = FingerprintConfig::default();
    let postings_config = MatchConfig::default().candidates.postings;

    let first: Vec<LibraryFile> = (0..10).map(file).collect();
    let added = add_works(store.as_ref(), "h", &first, Some(&mut index), &config)
        .await
        .expect("the first works are added");
    let first_id: Id = added.works[0].work_id;
    let postings = index.postings(&postings_config).expect("the postings open");
    assert_eq!(postings.load_filter().unwrap(), HashFilter::MIN_BITS);
    // As if many works had been appended since: 64 bits for hundreds of postings. (Left as
    // it is, it lacks the works' hashes, so workers would miss them: the rebuild must not
    // keep any of it.)
    postings
        .write_filter(&HashFilter::from_bytes(vec![0; 8]).expect("a filter"))
        .unwrap();
    assert!(!postings.filter_has_room().unwrap());

    let more = vec![file(10)];
    let report = add_works(store.as_ref(), "h", &more, Some(&mut index), &config)
        .await
        .expect("a work is added");
    assert_eq!(report.index, IndexUpdate::Updated);
    assert!(postings.filter_has_room().unwrap());
    assert_eq!(postings.load_filter().unwrap(), HashFilter::MIN_BITS);

    let source = IndexSource::Redis {
        url: url.clone(),
        prefix: prefix.clone(),
    };
    let engine = MatchEngine::new(store.clone(), source, MatchConfig::default());
    for (page, work) in [
        (page_copying(0), first_id),
        (page_copying(10), report.works[0].work_id),
    ] {
        let found = engine.match_text(&page).await.expect("matching");
        assert_eq!(found.iter().map(|m| m.work_id).collect::<Vec<_>>(), [work]);
    }
    index.delete_namespace().expect("clean up");
}

/// A library grown by `library add` from one small work: once the works appended fill the
/// buckets it was built with to four times their target, the update files every posting again
/// under more bucket bits and deletes the old buckets, and a worker loaded before finds copies
/// of old and new works alike (it learns the new bits with the works added).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buckets_overfilled_by_works_added_are_filed_again_under_more_bits() {
    use copytrace_index_redis::OVERFULL_BUCKET;
    use copytrace_matcher::postings::PostingIndex;

    let Fresh {
        url,
        prefix,
        _dir,
        store,
        mut index,
    } = Fresh::new("test-rebucket").await;
    let config = FingerprintConfig::default();
    let postings_config = MatchConfig::default().candidates.postings;

    let added = add_works(store.as_ref(), "h", &[file(0)], Some(&mut index), &config)
        .await
        .expect("the first work is added");
    let first_id: Id = added.works[0].work_id;
    let bits = index.postings(&postings_config).unwrap().bucket_bits();
    let source = IndexSource::Redis {
        url: url.clone(),
        prefix: prefix.clone(),
    };
    let engine = MatchEngine::new(store.clone(), source, MatchConfig::default());
    engine.preload().await.expect("the worker loads the index");

    // Long works: more than OVERFULL_BUCKET postings a bucket in all (about 0.24 a character).
    let big = |n: u64| LibraryFile {
        file: TextFile {
            text: text(n + 1, 16_000),
            ..file(n).file
        },
        ..file(n)
    };
    let files: Vec<LibraryFile> = (1..=40).map(big).collect();
    let report = add_works(store.as_ref(), "h", &files, Some(&mut index), &config)
        .await
        .expect("the long works are added");
    assert_eq!(report.index, IndexUpdate::Updated);
    let postings = index.postings(&postings_config).unwrap();
    let filed = postings.len().unwrap() as u64;
    assert!(
        filed > OVERFULL_BUCKET << bits,
        "{filed} postings do overfill 2^{bits} buckets"
    );
    assert!(postings.bucket_bits() > bits, "filed again under more bits");
    assert!(postings.overfull().unwrap().is_none());

    for (page, work) in [
        (page_copying(0), first_id),
        (page_copying(20), report.works[19].work_id),
    ] {
        let found = engine.match_text(&page).await.expect("matching");
        assert_eq!(found.iter().map(|m| m.work_id).collect::<Vec<_>>(), [work]);
    }
    index.delete_namespace().expect("clean up");
}
