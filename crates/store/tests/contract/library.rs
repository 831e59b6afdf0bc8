//! The fingerprint library: rights holders, works and their segments.

use std::sync::Arc;

use copytrace_store::{MatchFilter, SegmentFingerprint, Store, WriteOutcome};

use crate::helpers::{
    algorithm_fingerprint, at, contract_tests, found, invalid, not_found, stored_page, stored_work,
    work,
};

contract_tests!(
    ensuring_a_rights_holder_twice_returns_the_same_id,
    a_rights_holder_is_deleted_only_once_it_owns_nothing,
    adding_the_same_work_twice_creates_one_row,
    changed_work_replaces_its_segments_and_marks_matched_pages_stale,
    a_new_title_or_fingerprint_version_updates_an_unchanged_text,
    works_are_listed_per_rights_holder_by_external_id,
    a_work_comes_back_with_its_text_and_byte_length,
    simhash_values_with_the_top_bit_set_round_trip,
    unknown_work_is_not_found,
    a_work_of_an_unknown_rights_holder_is_not_found,
    a_works_summary_is_the_listed_one,
    bad_segments_are_refused_and_nothing_is_stored,
    algorithm_fingerprints_come_back_with_their_versions,
    a_changed_algorithm_version_updates_an_unchanged_work,
    unknown_work_has_no_fingerprints,
    a_work_with_seventy_thousand_windows_round_trips,
    names_and_external_ids_sort_bytewise_not_by_locale,
    concurrent_adds_of_one_work_make_one_row,
    the_library_generation_moves_with_every_change_an_index_follows,
);

async fn holder_names(store: &dyn Store) -> Vec<String> {
    store
        .list_rights_holders()
        .await
        .unwrap()
        .into_iter()
        .map(|holder| holder.name)
        .collect()
}

async fn ensuring_a_rights_holder_twice_returns_the_same_id(store: Arc<dyn Store>) {
    let first = store.ensure_rights_holder("Yuewen").await.unwrap();
    let again = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other = store.ensure_rights_holder("Acme Books").await.unwrap();
    assert_eq!(first, again);
    assert_ne!(first, other);

    let names = holder_names(store.as_ref()).await;
    assert_eq!(names, ["Acme Books", "Yuewen"]);
    invalid(store.ensure_rights_holder("  ").await);
}

async fn a_rights_holder_is_deleted_only_once_it_owns_nothing(store: Arc<dyn Store>) {
    let empty = store.ensure_rights_holder("Acme Books").await.unwrap();
    let owner = store.ensure_rights_holder("Yuewen").await.unwrap();
    stored_work(store.as_ref(), owner, "novel-1", "the quick brown fox").await;

    let refused = invalid(store.delete_rights_holder(owner).await);
    assert!(
        refused.contains("Yuewen") && refused.contains("1 work(s)"),
        "{refused}"
    );
    assert_eq!(store.list_works(Some(owner)).await.unwrap().len(), 1);

    store.delete_rights_holder(empty).await.unwrap();
    let names = holder_names(store.as_ref()).await;
    assert_eq!(names, ["Yuewen"]);
    not_found(store.delete_rights_holder(empty).await);
}

async fn adding_the_same_work_twice_creates_one_row(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let new = work(
        holder,
        "novel-1",
        "the quick brown fox jumps over the lazy dog",
    );

    let (id, outcome) = store.upsert_work(&new).await.unwrap();
    assert_eq!(outcome, WriteOutcome::Created);
    let before = store.get_work(id).await.unwrap();

    let (again, outcome) = store.upsert_work(&new).await.unwrap();
    assert_eq!(outcome, WriteOutcome::Unchanged);
    assert_eq!(again, id);
    assert_eq!(
        store.get_work(id).await.unwrap(),
        before,
        "unchanged writes nothing"
    );

    let works = store.list_works(None).await.unwrap();
    assert_eq!(works.len(), 1);
    assert_eq!(works[0].segment_count as usize, new.segments.len());
    assert_eq!(
        store.all_segments().await.unwrap().len(),
        new.segments.len()
    );
}

async fn changed_work_replaces_its_segments_and_marks_matched_pages_stale(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let changed = stored_work(&*store, holder, "changed", "first version of the text").await;
    let other = stored_work(&*store, holder, "other", "a completely different work").await;
    let copy_of_changed = stored_page(&*store, "https://pirate.example/1", "copy one").await;
    let copy_of_other = stored_page(&*store, "https://pirate.example/2", "copy two").await;
    for (page, work_id) in [(copy_of_changed, changed), (copy_of_other, other)] {
        let hash = store.get_page(page).await.unwrap().content_hash;
        let verdict = [found(work_id, 0.9, &[(0, 0)])];
        store
            .record_page_matches(page, &hash, &verdict, at(1))
            .await
            .unwrap();
    }
    assert!(store.pages_to_match(10).await.unwrap().is_empty());

    let mut new = work(
        holder,
        "changed",
        "second version, longer than the first one was",
    );
    new.segments.truncate(2);
    let (id, outcome) = store.upsert_work(&new).await.unwrap();
    assert_eq!((id, outcome), (changed, WriteOutcome::Updated));

    let segments: Vec<SegmentFingerprint> = store
        .all_segments()
        .await
        .unwrap()
        .into_iter()
        .filter(|indexed| indexed.work_id == changed)
        .map(|indexed| indexed.segment)
        .collect();
    assert_eq!(
        segments, new.segments,
        "old segments are gone, new ones stored"
    );
    let others = store.all_segments().await.unwrap();
    assert!(others.iter().any(|indexed| indexed.work_id == other));

    let stored = store.get_work(changed).await.unwrap();
    assert_eq!(stored.content, new.content);
    assert_eq!(stored.summary.content_hash, new.content_hash);
    assert!(stored.summary.updated_at >= stored.summary.created_at);

    let due: Vec<_> = store
        .pages_to_match(10)
        .await
        .unwrap()
        .into_iter()
        .map(|page| page.id)
        .collect();
    assert_eq!(
        due,
        [copy_of_changed],
        "only the page matched against the changed work"
    );
    assert_eq!(
        store.get_page(copy_of_changed).await.unwrap().matched_hash,
        None
    );
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(
        matches.len(),
        2,
        "the verdicts stay until the pages are re-matched"
    );
}

async fn a_new_title_or_fingerprint_version_updates_an_unchanged_text(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut new = work(holder, "novel", "same text every time");
    let (id, _) = store.upsert_work(&new).await.unwrap();

    new.fingerprint_version = 2;
    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    assert_eq!(
        store
            .get_work(id)
            .await
            .unwrap()
            .summary
            .fingerprint_version,
        2
    );

    new.title = "A better title".to_owned();
    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    assert_eq!(
        store.get_work(id).await.unwrap().summary.title,
        "A better title"
    );

    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Unchanged)
    );
}

async fn works_are_listed_per_rights_holder_by_external_id(store: Arc<dyn Store>) {
    let first = store.ensure_rights_holder("First").await.unwrap();
    let second = store.ensure_rights_holder("Second").await.unwrap();
    stored_work(&*store, first, "b", "text b").await;
    stored_work(&*store, first, "a", "text a").await;
    stored_work(&*store, second, "c", "text c").await;
    // The same external id under another holder is another work.
    stored_work(&*store, second, "a", "their own a").await;

    let ids = |works: Vec<copytrace_store::WorkSummary>| {
        works
            .into_iter()
            .map(|work| (work.rights_holder_id, work.external_id))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(store.list_works(None).await.unwrap()),
        [
            (first, "a".to_owned()),
            (second, "a".to_owned()),
            (first, "b".to_owned()),
            (second, "c".to_owned())
        ]
    );
    assert_eq!(
        ids(store.list_works(Some(first)).await.unwrap()),
        [(first, "a".to_owned()), (first, "b".to_owned())]
    );
    assert!(
        store
            .list_works(Some(second + 100))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_work_comes_back_with_its_text_and_byte_length(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let text = "斗破苍穹第一章：陨落的天才";
    let mut new = work(holder, "doupo", "");
    new.content = text.to_owned();
    new.content_hash = "doupo-v1".to_owned();
    new.segments = vec![SegmentFingerprint {
        ordinal: 0,
        start: 0,
        end: text.len() as u32,
        simhash: 42,
    }];
    let (id, _) = store.upsert_work(&new).await.unwrap();

    let stored = store.get_work(id).await.unwrap();
    assert_eq!(stored.content, text);
    assert_eq!(
        stored.summary.content_len,
        text.len() as u64,
        "bytes, not characters"
    );
    assert_eq!(stored.summary.segment_count, 1);
    assert_eq!(stored.summary.external_id, "doupo");
    assert_eq!(stored.summary.rights_holder_id, holder);
}

async fn simhash_values_with_the_top_bit_set_round_trip(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let hashes = [u64::MAX, 1 << 63, (1 << 63) | 1, i64::MAX as u64, 0];
    let mut new = work(holder, "bits", "0123456789");
    new.segments = hashes
        .iter()
        .enumerate()
        .map(|(ordinal, &simhash)| SegmentFingerprint {
            ordinal: ordinal as u32,
            start: ordinal as u32,
            end: ordinal as u32 + 5,
            simhash,
        })
        .collect();
    let (id, _) = store.upsert_work(&new).await.unwrap();

    let stored: Vec<u64> = store
        .all_segments()
        .await
        .unwrap()
        .into_iter()
        .filter(|indexed| indexed.work_id == id)
        .map(|indexed| indexed.segment.simhash)
        .collect();
    assert_eq!(stored, hashes);
}

async fn unknown_work_is_not_found(store: Arc<dyn Store>) {
    let error = store.get_work(4242).await.unwrap_err();
    assert_eq!(error.to_string(), "work 4242 not found");
    assert_eq!(not_found(store.get_work(4242).await), "work 4242");
}

async fn a_work_of_an_unknown_rights_holder_is_not_found(store: Arc<dyn Store>) {
    let result = store.upsert_work(&work(999, "orphan", "no owner")).await;
    assert_eq!(not_found(result), "rights holder 999");
    assert!(store.list_works(None).await.unwrap().is_empty());
}

async fn a_works_summary_is_the_listed_one(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let id = stored_work(&*store, holder, "w1", "a text with at least two windows").await;
    stored_work(
        &*store,
        holder,
        "w2",
        "another text of two windows at least",
    )
    .await;
    let listed = store.list_works(None).await.unwrap();
    let expected = listed.iter().find(|w| w.id == id).unwrap();
    assert_eq!(&store.work_summary(id).await.unwrap(), expected);
    assert_eq!(store.get_work(id).await.unwrap().summary, *expected);
    assert_eq!(
        not_found(store.work_summary(id + 1_000).await),
        format!("work {}", id + 1_000)
    );
}

async fn bad_segments_are_refused_and_nothing_is_stored(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut past_the_end = work(holder, "bad", "short text");
    past_the_end.segments[0].end = 1000;
    assert!(invalid(store.upsert_work(&past_the_end).await).contains("outside"));

    let mut twice = work(holder, "bad", "a text with at least two windows");
    twice.segments[1].ordinal = 0;
    assert!(invalid(store.upsert_work(&twice).await).contains("ordinal 0"));

    assert!(store.list_works(None).await.unwrap().is_empty());
    assert!(store.all_segments().await.unwrap().is_empty());
}

async fn algorithm_fingerprints_come_back_with_their_versions(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let (a, _) = store
        .upsert_work(&work(holder, "a", "first text"))
        .await
        .unwrap();
    let mut other = work(holder, "b", "second text");
    other.fingerprints = vec![algorithm_fingerprint(
        "dna",
        7,
        serde_json::json!({ "Dna": ["340282366920938463463374607431768211455"] }),
    )];
    let (b, _) = store.upsert_work(&other).await.unwrap();

    let stored = store.work_fingerprints(a).await.unwrap();
    let names: Vec<&str> = stored.iter().map(|f| f.algorithm.as_str()).collect();
    assert_eq!(names, ["minhash", "simhash"], "ordered by algorithm");
    assert_eq!(
        stored[0].fingerprint,
        serde_json::json!({ "MinHash": [1, 2, 3] })
    );
    assert_eq!(stored[1].version, 1);
    assert_eq!(
        store.work_fingerprints(b).await.unwrap(),
        other.fingerprints
    );
    assert_eq!(
        store.fingerprint_versions().await.unwrap(),
        vec![
            (a, "minhash".to_owned(), 1),
            (a, "simhash".to_owned(), 1),
            (b, "dna".to_owned(), 7),
        ]
    );
}

async fn a_changed_algorithm_version_updates_an_unchanged_work(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let mut new = work(holder, "novel", "same text every time");
    let (id, _) = store.upsert_work(&new).await.unwrap();
    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Unchanged)
    );

    new.fingerprints[0] = algorithm_fingerprint("simhash", 2, serde_json::json!({ "SimHash": 7 }));
    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    let versions = store.fingerprint_versions().await.unwrap();
    assert_eq!(
        versions,
        vec![(id, "minhash".to_owned(), 1), (id, "simhash".to_owned(), 2)],
        "the old version is replaced, not kept beside the new one"
    );

    // A new algorithm joining the set also counts as a change.
    new.fingerprints.push(algorithm_fingerprint(
        "dna",
        1,
        serde_json::json!({ "Dna": [] }),
    ));
    assert_eq!(
        store.upsert_work(&new).await.unwrap(),
        (id, WriteOutcome::Updated)
    );
    assert_eq!(store.work_fingerprints(id).await.unwrap().len(), 3);
}

async fn unknown_work_has_no_fingerprints(store: Arc<dyn Store>) {
    not_found(store.work_fingerprints(12345).await);
}

/// More windows than one multi-row `VALUES` statement can bind (65,535 parameters), so a backend
/// writing them in bulk must not be limited by the parameter count.
async fn a_work_with_seventy_thousand_windows_round_trips(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let text: String = (0..70_000)
        .map(|n| format!("{:08}", n * 7919 % 100_000_000))
        .collect();
    let new = work(holder, "long-novel", &text);
    assert_eq!(new.segments.len(), 70_000);
    let (id, outcome) = store.upsert_work(&new).await.unwrap();
    assert_eq!(outcome, WriteOutcome::Created);

    let summary = store.get_work(id).await.unwrap().summary;
    assert_eq!(summary.segment_count, 70_000);
    let stored: Vec<SegmentFingerprint> = store
        .all_segments()
        .await
        .unwrap()
        .into_iter()
        .map(|indexed| indexed.segment)
        .collect();
    assert_eq!(stored, new.segments, "every window, in ordinal order");
    assert_eq!(store.work_fingerprints(id).await.unwrap().len(), 2);

    // Replacing them replaces all of them.
    let mut shorter = work(holder, "long-novel", &text[..80_000]);
    shorter.content = text.clone();
    shorter.content_hash = "v2".to_owned();
    let (_, outcome) = store.upsert_work(&shorter).await.unwrap();
    assert_eq!(outcome, WriteOutcome::Updated);
    assert_eq!(store.all_segments().await.unwrap().len(), 10_000);
}

async fn names_and_external_ids_sort_bytewise_not_by_locale(store: Arc<dyn Store>) {
    // Bytewise: upper case before lower case, ASCII before accented letters. A linguistic
    // collation would give alpha, Ébène, Zeta, zulu instead.
    let names = ["zulu", "Zeta", "alpha", "Ébène", "_draft"];
    let mut holders = Vec::new();
    for name in names {
        holders.push(store.ensure_rights_holder(name).await.unwrap());
    }
    let listed: Vec<String> = store
        .list_rights_holders()
        .await
        .unwrap()
        .into_iter()
        .map(|holder| holder.name)
        .collect();
    assert_eq!(listed, ["Zeta", "_draft", "alpha", "zulu", "Ébène"]);

    for name in names {
        stored_work(&*store, holders[0], name, "some text").await;
    }
    let external_ids: Vec<String> = store
        .list_works(None)
        .await
        .unwrap()
        .into_iter()
        .map(|work| work.external_id)
        .collect();
    assert_eq!(external_ids, ["Zeta", "_draft", "alpha", "zulu", "Ébène"]);
}

/// Two `library add` runs racing over the same file: one row, one set of windows.
async fn concurrent_adds_of_one_work_make_one_row(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let new = work(
        holder,
        "novel",
        "the same chapter added by eight processes at once",
    );
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            let new = new.clone();
            tokio::spawn(async move { store.upsert_work(&new).await.unwrap() })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    let created = results
        .iter()
        .filter(|(_, outcome)| *outcome == WriteOutcome::Created)
        .count();
    assert_eq!(created, 1, "{results:?}");
    assert!(results.iter().all(|(id, _)| *id == results[0].0));
    assert_eq!(store.list_works(None).await.unwrap().len(), 1);
    assert_eq!(
        store.all_segments().await.unwrap().len(),
        new.segments.len()
    );
}

async fn the_library_generation_moves_with_every_change_an_index_follows(store: Arc<dyn Store>) {
    use copytrace_store::{LibraryChange, LibraryState};
    let state = |s: &Arc<dyn Store>| {
        let s = s.clone();
        async move { s.library_state().await.unwrap() }
    };
    assert_eq!(state(&store).await, LibraryState::default());
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let first = stored_work(store.as_ref(), holder, "novel-1", "the quick brown fox").await;
    let second = stored_work(store.as_ref(), holder, "novel-2", "a lazy dog sleeps").await;
    // Two additions: nothing an index holds was replaced.
    let added = state(&store).await;
    assert_eq!((added.generation, added.rewritten, added.marked), (2, 0, 0));
    let changes = store.library_changes_since(0).await.unwrap();
    assert_eq!(
        changes,
        [
            LibraryChange {
                work_id: first,
                generation: 1,
                active: true
            },
            LibraryChange {
                work_id: second,
                generation: 2,
                active: true
            },
        ]
    );
    assert_eq!(store.library_changes_since(1).await.unwrap().len(), 1);

    // The same text again, or only a new title, changes nothing an index reads.
    store
        .upsert_work(&work(holder, "novel-1", "the quick brown fox"))
        .await
        .unwrap();
    let mut retitled = work(holder, "novel-2", "a lazy dog sleeps");
    retitled.title = "Another title".into();
    store.upsert_work(&retitled).await.unwrap();
    assert_eq!(state(&store).await, added);

    // A new text replaces what an index holds: a rewrite.
    store
        .upsert_work(&work(holder, "novel-1", "the quick red fox"))
        .await
        .unwrap();
    let replaced = state(&store).await;
    assert_eq!((replaced.generation, replaced.rewritten), (3, 3));
    // Withdrawal removes; bringing the same text back is an addition again.
    assert!(store.withdraw_work(second, at(2)).await.unwrap());
    let withdrawn = state(&store).await;
    assert_eq!((withdrawn.generation, withdrawn.rewritten), (4, 4));
    assert_eq!(
        store.library_changes_since(3).await.unwrap(),
        [LibraryChange {
            work_id: second,
            generation: 4,
            active: false
        }]
    );
    assert!(!store.withdraw_work(second, at(3)).await.unwrap());
    assert_eq!(state(&store).await, withdrawn);
    store.upsert_work(&retitled).await.unwrap();
    let back = state(&store).await;
    assert_eq!((back.generation, back.rewritten), (5, 4));
    assert_eq!(
        store.library_changes_since(4).await.unwrap(),
        [LibraryChange {
            work_id: second,
            generation: 5,
            active: true
        }]
    );

    // The mark of pages never goes back.
    store.mark_library_generation(5).await.unwrap();
    store.mark_library_generation(3).await.unwrap();
    assert_eq!(state(&store).await.marked, 5);
}
