//! A worker's batch of pages: read in one statement, their verdicts recorded and their
//! sketches stored in one transaction each (`Store::get_pages`, `Store::record_page_verdicts`,
//! `Store::save_page_sketches`), and
//! which of their texts other pages show too (`Store::shared_texts`).

use std::sync::Arc;

use copytrace_store::{PageSketch, PageVerdict, Store, VerdictBasis};

use crate::helpers::*;

contract_tests!(
    a_batch_records_each_verdict_as_it_would_be_recorded_alone,
    a_batch_with_a_failing_verdict_records_none_of_them,
    a_page_twice_in_a_batch_is_recorded_as_one_verdict_after_the_other,
    pages_are_read_and_sketches_stored_by_the_batch_skipping_deleted_pages,
    texts_that_several_pages_show_are_named_once_each,
);

fn verdict<'a>(
    page_id: i64,
    content_hash: &'a str,
    matches: &'a [copytrace_store::NewMatch],
    basis: Option<&'a VerdictBasis>,
) -> PageVerdict<'a> {
    PageVerdict {
        page_id,
        content_hash,
        matches,
        basis,
        at: at(5),
    }
}

async fn a_batch_records_each_verdict_as_it_would_be_recorded_alone(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "w1", "the work").await;
    let copy = stored_page(&*store, "https://pirate.example/1", "a copy").await;
    let clean = stored_page(&*store, "https://pirate.example/2", "nothing").await;
    let changed = stored_page(&*store, "https://pirate.example/3", "new text").await;
    let basis = VerdictBasis {
        generation: store.library_state().await.unwrap().generation,
        matcher: "copytrace test".to_owned(),
    };
    let (copy_hash, clean_hash, old_hash) =
        (hash_of("a copy"), hash_of("nothing"), hash_of("old text"));
    let copied = [found(work, 0.9, &[(0, 0), (20, 20)])];
    let outcomes = store
        .record_page_verdicts(&[
            verdict(copy, &copy_hash, &copied, Some(&basis)),
            verdict(clean, &clean_hash, &[], Some(&basis)),
            // A verdict on a text the page no longer shows records nothing.
            verdict(changed, &old_hash, &copied, Some(&basis)),
        ])
        .await
        .unwrap();
    assert_eq!(outcomes.len(), 3);
    assert_eq!(outcomes[0].new_matches, 1);
    assert_eq!(outcomes[1].new_matches, 0);
    assert_eq!(outcomes[2], Default::default());

    let matches = matches_of(&*store, copy).await;
    assert_eq!(matches.len(), 1);
    assert_eq!(matches[0].work_id, work);
    assert_eq!(matches[0].evidence.len(), 2);
    assert!(matches_of(&*store, changed).await.is_empty());
    let matched = |id| {
        let store = store.clone();
        async move { store.get_page(id).await.unwrap().matched_hash }
    };
    assert_eq!(matched(copy).await, Some(copy_hash.clone()));
    assert_eq!(matched(clean).await, Some(clean_hash.clone()));
    assert_eq!(matched(changed).await, None, "its new text is still due");
    // The verdicts keep their basis: a mirror of the copy reuses it.
    let mirror = stored_page(&*store, "https://mirror.example/1", "a copy").await;
    let twin = store
        .verified_twin(mirror, &copy_hash, "copytrace test")
        .await
        .unwrap()
        .expect("the batch's verdict is reusable");
    assert_eq!(twin.page_id, copy);

    // Recorded again, the same batch changes nothing.
    let again = store
        .record_page_verdicts(&[
            verdict(copy, &copy_hash, &copied, Some(&basis)),
            verdict(clean, &clean_hash, &[], Some(&basis)),
        ])
        .await
        .unwrap();
    assert_eq!(again[0].new_matches, 0);
    assert_eq!(matches_of(&*store, copy).await.len(), 1);
}

/// A batch reads all its pages before it writes: a page recorded twice in it (a job delivered
/// twice) must still have its second verdict judged against the first, as when recorded one
/// after the other.
async fn a_page_twice_in_a_batch_is_recorded_as_one_verdict_after_the_other(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "w1", "the work").await;
    let other = stored_work(&*store, holder, "w2", "another work").await;
    let batched = stored_page(&*store, "https://pirate.example/1", "a copy").await;
    let alone = stored_page(&*store, "https://pirate.example/2", "a copy").await;
    let hash = hash_of("a copy");
    let first = [found(work, 0.9, &[(0, 0)])];
    let second = [found(other, 0.8, &[(10, 10)])];
    let in_batch = store
        .record_page_verdicts(&[
            verdict(batched, &hash, &first, None),
            verdict(batched, &hash, &second, None),
        ])
        .await
        .unwrap();
    let mut one_by_one = Vec::new();
    for matches in [&first[..], &second[..]] {
        one_by_one.extend(
            store
                .record_page_verdicts(&[verdict(alone, &hash, matches, None)])
                .await
                .unwrap(),
        );
    }
    assert_eq!(in_batch, one_by_one);
    let state = |page| {
        let store = store.clone();
        async move {
            matches_of(&*store, page)
                .await
                .into_iter()
                .map(|m| (m.work_id, m.status, m.score))
                .collect::<Vec<_>>()
        }
    };
    let after = state(batched).await;
    assert_eq!(after, state(alone).await);
    assert!(after.iter().any(|(w, _, _)| *w == other), "{after:?}");
}

async fn a_batch_with_a_failing_verdict_records_none_of_them(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "w1", "the work").await;
    let first = stored_page(&*store, "https://pirate.example/1", "a copy").await;
    let second = stored_page(&*store, "https://pirate.example/2", "another copy").await;
    let (first_hash, second_hash) = (hash_of("a copy"), hash_of("another copy"));
    let copied = [found(work, 0.9, &[(0, 0)])];
    let of_a_missing_work = [found(work + 1000, 0.9, &[(0, 0)])];
    let result = store
        .record_page_verdicts(&[
            verdict(first, &first_hash, &copied, None),
            verdict(second, &second_hash, &of_a_missing_work, None),
        ])
        .await;
    assert!(not_found(result).contains("work"));
    assert!(matches_of(&*store, first).await.is_empty());
    assert_eq!(store.get_page(first).await.unwrap().matched_hash, None);
}

async fn pages_are_read_and_sketches_stored_by_the_batch_skipping_deleted_pages(
    store: Arc<dyn Store>,
) {
    let first = stored_page(&*store, "https://pirate.example/1", "one").await;
    let second = stored_page(&*store, "https://pirate.example/2", "two").await;
    let pages = store
        .get_pages(&[second, first + 1000, first])
        .await
        .unwrap();
    let read: Vec<(i64, &str)> = pages.iter().map(|p| (p.id, p.text.as_str())).collect();
    assert_eq!(read, [(first, "one"), (second, "two")]);
    assert!(store.get_pages(&[]).await.unwrap().is_empty());

    let sketch = |page_id, text: &str| PageSketch {
        page_id,
        content_hash: hash_of(text),
        version: 1,
        sample: vec![page_id as u32, 7],
    };
    let saved = store
        .save_page_sketches(&[
            sketch(first, "one"),
            sketch(first + 1000, "gone"),
            sketch(second, "two"),
        ])
        .await
        .unwrap();
    assert_eq!(saved, 2);
    let stored: Vec<i64> = store
        .page_sketches(0, 10, 1)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.page_id)
        .collect();
    assert_eq!(stored, [first, second]);

    // Saved again: each page keeps the last sketch given for it, however often it is named.
    let resketched = |page_id, text: &str, mark: u32| PageSketch {
        sample: vec![mark],
        ..sketch(page_id, text)
    };
    let saved = store
        .save_page_sketches(&[
            resketched(first, "one", 1),
            resketched(second, "two", 2),
            resketched(first, "one", 3),
        ])
        .await
        .unwrap();
    assert_eq!(saved, 2);
    let samples: Vec<(i64, Vec<u32>)> = store
        .page_sketches(0, 10, 1)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.page_id, s.sample))
        .collect();
    assert_eq!(samples, [(first, vec![3]), (second, vec![2])]);
}

async fn texts_that_several_pages_show_are_named_once_each(store: Arc<dyn Store>) {
    stored_page(&*store, "https://a.example/1", "mirrored").await;
    stored_page(&*store, "https://a.example/1?from=home", "mirrored").await;
    stored_page(&*store, "https://b.example/1", "mirrored").await;
    stored_page(&*store, "https://a.example/2", "alone").await;
    let changed = stored_page(&*store, "https://a.example/3", "was alone too").await;
    let (mirrored, alone, changed_from) = (
        hash_of("mirrored"),
        hash_of("alone"),
        hash_of("was alone too"),
    );
    let asked = [
        alone.clone(),
        mirrored.clone(),
        mirrored.clone(),
        hash_of("nobody's"),
        changed_from.clone(),
    ];
    assert_eq!(
        store.shared_texts(&asked).await.unwrap(),
        std::slice::from_ref(&mirrored)
    );
    assert!(store.shared_texts(&[]).await.unwrap().is_empty());

    // A page that now shows another page's text shares it; its old text is nobody's.
    store
        .upsert_page(&page("https://a.example/3", "alone", at(1)))
        .await
        .unwrap();
    let mut shared = store.shared_texts(&asked).await.unwrap();
    shared.sort();
    let mut expected = vec![alone, mirrored];
    expected.sort();
    assert_eq!(shared, expected);
    assert_eq!(
        store.get_page(changed).await.unwrap().content_hash,
        hash_of("alone")
    );
}
