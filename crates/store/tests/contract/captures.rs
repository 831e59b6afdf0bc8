//! Evidence: the raw response a page text was extracted from (captures), how long it is kept,
//! and the record of evidence packages.

use std::sync::Arc;

use copytrace_store::{
    Id, NewCapture, NewEvidencePackage, NewPage, NewRendering, NewSubresponse, PageCapture, Store,
};
use sha2::{Digest, Sha256};

use crate::helpers::{
    at, contract_tests, found, hash_of, invalid, not_found, page, stored_page, stored_work,
};

contract_tests!(
    a_capture_reads_back_byte_for_byte_with_its_sha256,
    a_later_fetch_of_the_same_text_keeps_the_first_capture,
    a_page_keeps_only_the_captures_its_evidence_points_into,
    a_page_stored_without_raw_bytes_has_no_capture,
    a_rendered_capture_keeps_its_dom_and_responses_with_their_sha256,
    a_rendering_goes_with_its_capture,
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
            rendering: None,
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

/// A rendered fetch of `URL` giving `text`: the DOM, a script and an XHR answer with bodies,
/// and a failed request without one.
fn rendered_fetch(text: &str, seconds: i64, dom: &str) -> NewPage {
    let mut page = fetch(
        text,
        seconds,
        b"<div id=content></div><script src=/a.js></script>",
    );
    let response = |url: &str, kind: &str, body: Option<&[u8]>| NewSubresponse {
        url: url.to_owned(),
        resource_type: kind.to_owned(),
        http_status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        mime_type: "application/json".into(),
        decoded_text: true,
        body: body.map(<[u8]>::to_vec),
        body_note: body
            .is_none()
            .then(|| "the load failed: net::ERR_FAILED".to_owned()),
    };
    if let Some(capture) = &mut page.capture {
        capture.rendering = Some(NewRendering {
            dom: dom.to_owned(),
            browser: "HeadlessChrome/142.0.0.0".into(),
            settle_quiet_ms: 500,
            settled_after_ms: 812,
            rendered_at: at(seconds + 1),
            responses_not_kept: 2,
            subresponses: vec![
                response(
                    "https://pirate.example/a.js",
                    "Script",
                    Some(b"load('/c.json')"),
                ),
                response(
                    "https://pirate.example/c.json",
                    "XHR",
                    Some("{\"t\":\"第七章\"}".as_bytes()),
                ),
                response("https://ads.example/x.js", "Script", None),
            ],
        });
    }
    page
}

async fn a_rendered_capture_keeps_its_dom_and_responses_with_their_sha256(store: Arc<dyn Store>) {
    let dom = "<!DOCTYPE html>\n<html><body><div id=\"content\">第七章 The stolen chapter</div></body></html>";
    let id = store
        .upsert_page(&rendered_fetch(COPY, 5, dom))
        .await
        .unwrap()
        .id;
    let capture = capture_of(&*store, id, COPY).await;
    let rendering = capture.rendering.expect("the rendering is kept");
    assert_eq!(rendering.dom, dom);
    assert_eq!(rendering.dom_sha256, sha256(dom.as_bytes()));
    assert_eq!(rendering.browser, "HeadlessChrome/142.0.0.0");
    assert_eq!(
        (rendering.settle_quiet_ms, rendering.settled_after_ms),
        (500, 812)
    );
    assert_eq!(rendering.rendered_at, at(6));
    assert_eq!(rendering.responses_not_kept, 2);
    let responses = &rendering.subresponses;
    assert_eq!(
        responses
            .iter()
            .map(|r| (r.seq, r.url.as_str(), r.resource_type.as_str()))
            .collect::<Vec<_>>(),
        [
            (1, "https://pirate.example/a.js", "Script"),
            (2, "https://pirate.example/c.json", "XHR"),
            (3, "https://ads.example/x.js", "Script"),
        ]
    );
    let json = "{\"t\":\"第七章\"}".as_bytes();
    assert_eq!(responses[1].body.as_deref(), Some(json));
    assert_eq!(
        responses[1].body_sha256.as_deref(),
        Some(sha256(json).as_str())
    );
    assert_eq!(responses[1].http_status, 200);
    assert!(responses[1].decoded_text);
    assert_eq!(
        responses[1].headers,
        [("content-type".to_owned(), "application/json".to_owned())]
    );
    assert_eq!(responses[2].body, None);
    assert_eq!(responses[2].body_sha256, None);
    assert!(
        responses[2]
            .body_note
            .as_deref()
            .unwrap()
            .contains("failed")
    );
}

async fn a_rendering_goes_with_its_capture(store: Arc<dyn Store>) {
    let id = store
        .upsert_page(&rendered_fetch(COPY, 5, "<html>first</html>"))
        .await
        .unwrap()
        .id;
    // The same text fetched again, rendered anew: the first capture and its rendering stay.
    store
        .upsert_page(&rendered_fetch(COPY, 50, "<html>second</html>"))
        .await
        .unwrap();
    let rendering = capture_of(&*store, id, COPY).await.rendering.unwrap();
    assert_eq!(rendering.dom, "<html>first</html>");
    // A new text read without the browser: the old capture is let go with its rendering and
    // responses, and the new one has none.
    let new_text = "An index page now, nothing copied.";
    store
        .upsert_page(&fetch(new_text, 60, b"<p>index</p>"))
        .await
        .unwrap();
    assert_eq!(store.page_capture(id, &hash_of(COPY)).await.unwrap(), None);
    assert_eq!(capture_of(&*store, id, new_text).await.rendering, None);
    // The old text comes back, rendered: stored afresh, with no response left over.
    store
        .upsert_page(&rendered_fetch(COPY, 70, "<html>third</html>"))
        .await
        .unwrap();
    let rendering = capture_of(&*store, id, COPY).await.rendering.unwrap();
    assert_eq!(rendering.dom, "<html>third</html>");
    assert_eq!(rendering.subresponses.len(), 3);
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

    // A package gains its trusted timestamp once: the first is the earlier proof.
    assert!(listed.iter().all(|p| p.timestamp.is_none()));
    let stamp = |token: u8| copytrace_store::TrustedTimestamp {
        tsa_url: "http://tsa.example/".to_owned(),
        gen_time: at(4),
        token: vec![0x30, 0x03, 0x02, 0x01, token],
    };
    assert!(
        store
            .timestamp_evidence_package(match_id, &first, &stamp(1))
            .await
            .unwrap()
    );
    assert!(
        !store
            .timestamp_evidence_package(match_id, &first, &stamp(2))
            .await
            .unwrap()
    );
    let listed = store.evidence_packages(match_id).await.unwrap();
    assert_eq!(listed[0].timestamp, Some(stamp(1)));
    assert_eq!(listed[1].timestamp, None);
    let unknown = not_found(
        store
            .timestamp_evidence_package(match_id + 1, &first, &stamp(1))
            .await,
    );
    assert!(unknown.contains(&first), "{unknown}");
    let empty = copytrace_store::TrustedTimestamp {
        token: Vec::new(),
        ..stamp(1)
    };
    assert!(
        invalid(
            store
                .timestamp_evidence_package(match_id, &second, &empty)
                .await
        )
        .contains("token")
    );
}
