//! Evidence: the raw response a page text was extracted from (captures), how long it is kept,
//! and the record of evidence packages.

use std::sync::Arc;

use copytrace_store::{Id, NewCapture, NewEvidencePackage, NewPage, PageCapture, Store};
use sha2::{Digest, Sha256};

use crate::helpers::{
    at, contract_tests, found, hash_of, invalid, not_found, page, stored_page, stored_work,
};

contract_tests!(
    a_capture_reads_back_byte_for_byte_with_its_sha256,
    a_later_fetch_of_the_same_text_keeps_the_first_capture,
    a_page_keeps_only_the_captures_its_evidence_points_into,
    a_page_stored_without_raw_bytes_has_no_capture,
    evidence_packages_are_recorded_per_match,
);

const URL: &str = "https://pirate.example/book/7.html";
const COPY: &str = "The stolen chapter, word for word. Some more copied text here.";

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fetch of `URL` giving `text` at `at(seconds)`, whose raw body is `body`.
fn fetch(text: &str, seconds: i64, body: &[u8]) -> NewPage {
    NewPage {
        http_status: 203,
        capture: Some(NewCapture {
            requested_url: "https://pirate.example/b/7".into(),
            final_url: format!("{URL}#top"),
            headers: vec![
                ("content-type".into(), "text/html; charset=gbk".into()),
                ("set-cookie".into(), "a=1".into()),
                ("set-cookie".into(), "b=2".into()),
            ],
            encoding: "GBK".into(),
            body: body.to_vec(),
        }),
        ..page(URL, text, at(seconds))
    }
}

/// The capture of `text` of page `id`, which must exist.
async fn capture_of(store: &dyn Store, id: Id, text: &str) -> PageCapture {
    let capture = store.page_capture(id, &hash_of(text)).await.unwrap();
    capture.unwrap_or_else(|| panic!("no capture of {text:?}"))
}

/// Bytes that are no UTF-8 (GBK for 第七章) and compress well.
fn raw_body(variant: &str) -> Vec<u8> {
    let mut body = b"<html><title>\xb5\xda\xc6\xdf\xd5\xc2</title><body>".to_vec();
    for _ in 0..200 {
        body.extend_from_slice(b"<p>\xb5\xda\xc6\xdf\xd5\xc2 ");
        body.extend_from_slice(variant.as_bytes());
        body.extend_from_slice(b"</p>\0");
    }
    body
}

async fn a_capture_reads_back_byte_for_byte_with_its_sha256(store: Arc<dyn Store>) {
    let body = raw_body("first");
    let id = store.upsert_page(&fetch(COPY, 5, &body)).await.unwrap().id;
    let capture = capture_of(&*store, id, COPY).await;
    assert_eq!(capture.body, body);
    assert_eq!(capture.body_sha256, sha256(&body));
    assert_eq!(capture.page_id, id);
    assert_eq!(capture.content_hash, hash_of(COPY));
    assert_eq!(capture.requested_url, "https://pirate.example/b/7");
    assert_eq!(capture.final_url, format!("{URL}#top"));
    assert_eq!(capture.http_status, 203);
    assert_eq!(capture.encoding, "GBK");
    assert_eq!(capture.fetched_at, at(5));
    assert_eq!(
        capture.headers,
        [
            ("content-type", "text/html; charset=gbk"),
            ("set-cookie", "a=1"),
            ("set-cookie", "b=2")
        ]
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
    );
    assert_eq!(store.page_capture(id, "other text").await.unwrap(), None);
}

async fn a_later_fetch_of_the_same_text_keeps_the_first_capture(store: Arc<dyn Store>) {
    let first = raw_body("first");
    let id = store.upsert_page(&fetch(COPY, 5, &first)).await.unwrap().id;
    // Another ad in the markup, the same extracted text.
    store
        .upsert_page(&fetch(COPY, 60, &raw_body("second")))
        .await
        .unwrap();
    let capture = capture_of(&*store, id, COPY).await;
    assert_eq!(capture.body, first);
    assert_eq!(capture.fetched_at, at(5));
    assert_eq!(capture.body_sha256, sha256(&first));
}

async fn a_page_keeps_only_the_captures_its_evidence_points_into(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "w", "text of work w").await;
    let captured = |text: &'static str| {
        let store = store.clone();
        async move |id: Id| {
            store
                .page_capture(id, &hash_of(text))
                .await
                .unwrap()
                .is_some()
        }
    };
    // A text nobody matched is let go when the page changes.
    let id = store
        .upsert_page(&fetch("an index page", 0, b"<p>index</p>"))
        .await
        .unwrap()
        .id;
    store
        .upsert_page(&fetch(COPY, 10, &raw_body("copy")))
        .await
        .unwrap();
    assert!(!captured("an index page")(id).await);
    assert!(captured(COPY)(id).await);
    // The copy is found: its capture outlives the next change of the page.
    let matches = [found(work, 0.9, &[(4, 0)])];
    store
        .record_page_matches(id, &hash_of(COPY), &matches, at(11))
        .await
        .unwrap();
    let moved = "New header. The stolen chapter, word for word. Some more copied text here.";
    store
        .upsert_page(&fetch(moved, 20, &raw_body("moved")))
        .await
        .unwrap();
    assert!(captured(COPY)(id).await, "the evidence points into it");
    assert!(captured(moved)(id).await, "the current text");
    // Found again in the new text: the evidence moves, and the old capture goes with it.
    store
        .record_page_matches(id, &hash_of(moved), &matches, at(21))
        .await
        .unwrap();
    assert!(!captured(COPY)(id).await);
    assert!(captured(moved)(id).await);
}

async fn a_page_stored_without_raw_bytes_has_no_capture(store: Arc<dyn Store>) {
    let id = stored_page(&*store, URL, COPY).await;
    assert_eq!(store.page_capture(id, &hash_of(COPY)).await.unwrap(), None);
    // Its next fetch brings one.
    store
        .upsert_page(&fetch(COPY, 30, &raw_body("late")))
        .await
        .unwrap();
    let capture = capture_of(&*store, id, COPY).await;
    assert_eq!(capture.fetched_at, at(30));
}

async fn evidence_packages_are_recorded_per_match(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let work = stored_work(&*store, holder, "w", "text of work w").await;
    let id = stored_page(&*store, URL, COPY).await;
    store
        .record_page_matches(id, &hash_of(COPY), &[found(work, 0.9, &[(4, 0)])], at(1))
        .await
        .unwrap();
    let match_id = store.list_matches(&Default::default()).await.unwrap()[0].id;
    assert_eq!(store.match_subject(match_id).await.unwrap(), (id, work));
    let missing = not_found(store.match_subject(match_id + 1000).await);
    assert!(
        missing.contains(&format!("match {}", match_id + 1000)),
        "{missing}"
    );

    let package = |digest: &str, seconds| NewEvidencePackage {
        match_id,
        manifest_sha256: digest.to_owned(),
        created_at: at(seconds),
    };
    let (first, second) = (sha256(b"manifest 1"), sha256(b"manifest 2"));
    let a = store
        .record_evidence_package(&package(&second, 9))
        .await
        .unwrap();
    let b = store
        .record_evidence_package(&package(&first, 3))
        .await
        .unwrap();
    assert_ne!(a, b);
    let listed = store.evidence_packages(match_id).await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|p| (p.id, p.manifest_sha256.as_str(), p.created_at))
            .collect::<Vec<_>>(),
        [(b, first.as_str(), at(3)), (a, second.as_str(), at(9))]
    );
    assert!(
        store
            .evidence_packages(match_id + 1)
            .await
            .unwrap()
            .is_empty()
    );
    let refused = invalid(store.record_evidence_package(&package("ABC", 1)).await);
    assert!(refused.contains("SHA-256"), "{refused}");
}
