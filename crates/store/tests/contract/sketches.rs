//! Page sketches and marking chosen pages for matching: what incremental matching runs on.

use std::sync::Arc;

use copytrace_store::{PageSketch, Store};

use crate::helpers::{at, contract_tests, hash_of, not_found, page, stored_page};

contract_tests!(
    a_sketch_comes_back_while_it_is_of_the_current_text_and_version,
    sketches_are_walked_in_id_order_in_batches,
    chosen_pages_and_pages_without_a_current_sketch_become_due,
);

fn sketch(page_id: i64, text: &str, sample: &[u32]) -> PageSketch {
    PageSketch {
        page_id,
        content_hash: hash_of(text),
        version: 1,
        sample: sample.to_vec(),
    }
}

async fn a_sketch_comes_back_while_it_is_of_the_current_text_and_version(store: Arc<dyn Store>) {
    let id = stored_page(store.as_ref(), "http://pirate.example/1", "old text").await;
    store
        .save_page_sketch(&sketch(id, "old text", &[1, 7, u32::MAX]))
        .await
        .unwrap();
    let read = store.page_sketches(0, 10, 1).await.unwrap();
    assert_eq!(read, [sketch(id, "old text", &[1, 7, u32::MAX])]);
    assert!(
        store.page_sketches(0, 10, 2).await.unwrap().is_empty(),
        "another version"
    );

    // Saving again replaces it.
    store
        .save_page_sketch(&sketch(id, "old text", &[3]))
        .await
        .unwrap();
    assert_eq!(store.page_sketches(0, 10, 1).await.unwrap()[0].sample, [3]);

    // The page changes: its sketch is out of date until made again.
    store
        .upsert_page(&page("http://pirate.example/1", "new text", at(10)))
        .await
        .unwrap();
    assert!(store.page_sketches(0, 10, 1).await.unwrap().is_empty());
    not_found(store.save_page_sketch(&sketch(9_999, "x", &[1])).await);
}

async fn sketches_are_walked_in_id_order_in_batches(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for n in 0..5 {
        let text = format!("text {n}");
        let id = stored_page(store.as_ref(), &format!("http://pirate.example/{n}"), &text).await;
        store
            .save_page_sketch(&sketch(id, &text, &[n]))
            .await
            .unwrap();
        ids.push(id);
    }
    let first = store.page_sketches(0, 2, 1).await.unwrap();
    let rest = store
        .page_sketches(first.last().unwrap().page_id, 10, 1)
        .await
        .unwrap();
    let walked: Vec<i64> = first.iter().chain(&rest).map(|s| s.page_id).collect();
    assert_eq!(walked, ids);
}

async fn chosen_pages_and_pages_without_a_current_sketch_become_due(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for n in 0..4 {
        let text = format!("text {n}");
        let id = stored_page(store.as_ref(), &format!("http://pirate.example/{n}"), &text).await;
        store
            .record_page_matches(id, &hash_of(&text), &[], at(1))
            .await
            .unwrap();
        ids.push(id);
    }
    assert!(store.pages_to_match(10).await.unwrap().is_empty());
    // Pages 0 and 1 have sketches; 2 and 3 were matched before sketches existed.
    for &id in &ids[..2] {
        let text = format!("text {}", ids.iter().position(|&i| i == id).unwrap());
        store
            .save_page_sketch(&sketch(id, &text, &[1]))
            .await
            .unwrap();
    }
    assert_eq!(
        store.mark_pages_unmatched(&[ids[0], 9_999]).await.unwrap(),
        1
    );
    assert_eq!(
        store.mark_pages_unmatched(&[ids[0]]).await.unwrap(),
        0,
        "already due"
    );
    assert_eq!(store.mark_unsketched_pages_unmatched(1).await.unwrap(), 2);
    let due: Vec<i64> = store
        .pages_to_match(10)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(due, [ids[0], ids[2], ids[3]]);
}
