//! Alerts against real receivers started here: an HTTP server (axum) that checks signatures
//! and fails on demand, and an SMTP server (mailin-embedded) that keeps what it is sent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, TimeZone, Utc};
use copytrace_service::alerts::{AlertSettings, Alerter, sign};
use copytrace_store::sqlite::SqliteStore;
use copytrace_store::{
    AlertCadence, AlertKind, Availability, EvidencePassage, NewAlertTarget, NewMatch, NewPage,
    NewWork, PageCheck, Store,
};
use support::start_smtp;

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + seconds, 0).unwrap()
}

/// A store with holder `Yuewen` and its work `xingchen`; returns them.
async fn library() -> (Arc<dyn Store>, i64, i64) {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    store.migrate().await.unwrap();
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let text = "星辰旅人第一章，雨夜来客。".repeat(20);
    let (work, _) = store
        .upsert_work(&NewWork {
            rights_holder_id: holder,
            external_id: "xingchen".into(),
            title: "星辰旅人".into(),
            content_hash: copytrace_store::sha256_hex(text.as_bytes()),
            content: text,
            fingerprint_version: 1,
            segments: Vec::new(),
            fingerprints: Vec::new(),
            author: None,
            published_at: None,
            chapters: Vec::new(),
            licensed_hosts: None,
        })
        .await
        .unwrap();
    (Arc::new(store), holder, work)
}

/// A page at `url` copying `work`, recorded at `seconds`; returns the page id.
async fn copied(store: &dyn Store, url: &str, work: i64, seconds: i64) -> i64 {
    let text = format!("copy at {url}");
    let hash = copytrace_store::sha256_hex(text.as_bytes());
    let page = store
        .upsert_page(&NewPage {
            url: url.into(),
            title: None,
            text,
            content_hash: hash.clone(),
            http_status: 200,
            fetched_at: at(seconds),
            etag: None,
            last_modified: None,
            capture: None,
        })
        .await
        .unwrap()
        .id;
    let found = NewMatch {
        work_id: work,
        score: 0.97,
        coverage: 0.9,
        containment: 0.97,
        copied_chars: 240,
        method: "simhash+align".into(),
        auto_confirm: true,
        evidence: vec![EvidencePassage {
            page_start: 0,
            page_end: 10,
            work_start: 0,
            work_end: 10,
        }],
    };
    store
        .record_page_matches(page, &hash, &[found], at(seconds))
        .await
        .unwrap();
    page
}

/// What the webhook receiver saw: each request's headers and body.
#[derive(Clone, Default)]
struct Receiver {
    requests: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    /// Requests to refuse with 503 before accepting.
    failures_left: Arc<Mutex<u32>>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let body = String::from_utf8(body.to_vec()).unwrap();
    receiver.requests.lock().unwrap().push((headers, body));
    let mut failures = receiver.failures_left.lock().unwrap();
    if *failures > 0 {
        *failures -= 1;
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::NO_CONTENT
    }
}

/// Starts the webhook receiver; returns its URL.
async fn start_receiver(receiver: Receiver) -> String {
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/hook")
}

fn settings() -> AlertSettings {
    AlertSettings {
        allow_private_addresses: true,
        timeout: Duration::from_secs(5),
        ..AlertSettings::default()
    }
}

/// Adds a webhook target of `holder` at `url` with the secret `s3cret`, at time 0.
async fn add_webhook(store: &dyn Store, holder: i64, url: String) {
    store
        .add_alert_target(&NewAlertTarget {
            rights_holder_id: holder,
            kind: AlertKind::Webhook,
            address: url,
            secret: "s3cret".into(),
            cadence: AlertCadence::AfterRun,
            lang: "en".into(),
            at: at(0),
        })
        .await
        .unwrap();
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).unwrap().to_str().unwrap()
}

#[tokio::test]
async fn a_webhook_is_signed_retried_with_the_same_delivery_and_never_repeated() {
    let (store, holder, work) = library().await;
    let receiver = Receiver::default();
    *receiver.failures_left.lock().unwrap() = 1;
    let url = start_receiver(receiver.clone()).await;
    add_webhook(&*store, holder, url).await;
    let page = copied(&*store, "https://pirate.example/1.html", work, 10).await;
    let alerter = Alerter::new(store.clone(), settings()).unwrap();

    // The receiver answers 503: the delivery waits for its retry.
    let first = alerter.run(at(20)).await.unwrap();
    assert_eq!((first.gathered, first.delivered), (1, 0));
    assert_eq!(first.failures.len(), 1);
    assert!(first.failures[0].contains("503"), "{:?}", first.failures);
    let retry_at = first.waiting.expect("a retry is due");
    assert_eq!(retry_at, at(80), "backs off a minute");
    // Nothing new and the retry not yet due: nothing is sent.
    let idle = alerter.run(at(21)).await.unwrap();
    assert_eq!((idle.gathered, idle.delivered), (0, 0));
    assert_eq!(receiver.requests.lock().unwrap().len(), 1);
    // At its time the same delivery goes again, and is accepted.
    let second = alerter.run(retry_at).await.unwrap();
    assert_eq!((second.gathered, second.delivered), (0, 1));

    let requests = receiver.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let (headers, body) = &requests[1];
    assert_eq!(requests[0].1, *body, "a retry sends the same body");
    assert_eq!(
        header(&requests[0].0, "x-copytrace-delivery"),
        header(headers, "x-copytrace-delivery")
    );
    assert_eq!(header(headers, "content-type"), "application/json");
    let timestamp = header(headers, "x-copytrace-timestamp");
    assert_eq!(
        header(headers, "x-copytrace-signature"),
        format!("sha256={}", sign("s3cret", timestamp, body)),
        "signed with the target's secret"
    );
    assert_ne!(
        header(headers, "x-copytrace-signature"),
        format!("sha256={}", sign("other", timestamp, body))
    );
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["rights_holder"], "Yuewen");
    assert_eq!(json["delivery_id"], header(headers, "x-copytrace-delivery"));
    assert_eq!(
        (json["new"].as_u64(), json["removed"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(json["events"][0]["event"], "new");
    assert_eq!(
        json["events"][0]["page_url"],
        "https://pirate.example/1.html"
    );
    assert_eq!(json["events"][0]["work_external_id"], "xingchen");

    // The copy is removed: one more delivery, of the removal only.
    store
        .record_page_check(&PageCheck {
            page_id: page,
            run_id: None,
            checked_at: at(90),
            availability: Availability::Gone,
            http_status: Some(404),
            detail: "gone".into(),
            still_present: Vec::new(),
            removed: vec![work],
        })
        .await
        .unwrap();
    let third = alerter.run(at(100)).await.unwrap();
    assert_eq!((third.gathered, third.delivered), (1, 1));
    let requests = receiver.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3);
    let json: serde_json::Value = serde_json::from_str(&requests[2].1).unwrap();
    assert_eq!(
        (json["new"].as_u64(), json["removed"].as_u64()),
        (Some(0), Some(1))
    );
    assert_ne!(
        json["delivery_id"],
        requests[1].0["x-copytrace-delivery"].to_str().unwrap()
    );
    assert_eq!(alerter.run(at(101)).await.unwrap().gathered, 0);
}

#[tokio::test]
async fn a_webhook_to_a_private_address_is_refused_unless_allowed() {
    let (store, holder, work) = library().await;
    let receiver = Receiver::default();
    let url = start_receiver(receiver.clone()).await;
    add_webhook(&*store, holder, url).await;
    copied(&*store, "https://pirate.example/1.html", work, 10).await;
    let strict = Alerter::new(store.clone(), AlertSettings::default()).unwrap();
    let report = strict.run(Utc::now()).await.unwrap();
    assert_eq!(report.delivered, 0);
    assert!(
        report.failures[0].contains("refused private address 127.0.0.1"),
        "{:?}",
        report.failures
    );
    assert!(
        receiver.requests.lock().unwrap().is_empty(),
        "nothing reached it"
    );
}

#[tokio::test]
async fn a_webhook_to_a_name_resolving_to_loopback_is_refused_unless_allowed() {
    let (store, holder, work) = library().await;
    let receiver = Receiver::default();
    let url = start_receiver(receiver.clone()).await;
    // The same receiver, named by a host name that resolves to loopback.
    add_webhook(&*store, holder, url.replace("127.0.0.1", "localhost")).await;
    copied(&*store, "https://pirate.example/1.html", work, 10).await;
    let strict = Alerter::new(store.clone(), AlertSettings::default()).unwrap();
    let report = strict.run(Utc::now()).await.unwrap();
    assert_eq!(report.delivered, 0);
    assert!(
        report.failures[0].contains("refused private address")
            && report.failures[0].contains("localhost"),
        "{:?}",
        report.failures
    );
    assert!(
        report.failures.iter().all(|f| !f.contains("s3cret")),
        "the signing secret is never in an error: {:?}",
        report.failures
    );
    assert!(
        receiver.requests.lock().unwrap().is_empty(),
        "nothing reached it"
    );
    // Allowed explicitly, the same target is reached (once the retry is due): the refusal
    // was the guard's.
    let allowed = Alerter::new(store.clone(), settings()).unwrap();
    let report = allowed
        .run(Utc::now() + chrono::Duration::minutes(2))
        .await
        .unwrap();
    assert_eq!(report.delivered, 1, "{:?}", report.failures);
    assert_eq!(receiver.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_daily_digest_is_mailed_once_a_day_in_the_targets_language() {
    let (store, holder, work) = library().await;
    let (smtp, received) = start_smtp();
    store
        .add_alert_target(&NewAlertTarget {
            rights_holder_id: holder,
            kind: AlertKind::Email,
            address: "legal@yuewen.example".into(),
            secret: String::new(),
            cadence: AlertCadence::Daily,
            lang: "zh".into(),
            at: at(0),
        })
        .await
        .unwrap();
    copied(&*store, "https://pirate.example/1.html", work, 10).await;
    copied(&*store, "https://pirate.example/2.html", work, 11).await;

    // Without an SMTP server configured the delivery fails clearly and waits.
    let unconfigured = Alerter::new(store.clone(), settings()).unwrap();
    let report = unconfigured.run(at(100)).await.unwrap();
    assert_eq!(report.gathered, 1);
    assert!(report.failures[0].contains("no SMTP server"), "{report:?}");

    let alerter = Alerter::new(
        store.clone(),
        AlertSettings {
            smtp_url: Some(format!("smtp://{smtp}")),
            mail_from: "Copytrace <alerts@copytrace.test>".into(),
            ..settings()
        },
    )
    .unwrap();
    let report = alerter.run(report.waiting.unwrap()).await.unwrap();
    assert_eq!(report.delivered, 1, "{report:?}");
    let mails = received.lock().unwrap().clone();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, ["legal@yuewen.example"]);
    let message = mail_parser::MessageParser::default()
        .parse(mails[0].data.as_bytes())
        .expect("a MIME message");
    assert_eq!(
        message.subject(),
        Some("Copytrace：Yuewen 新发现 2 个侵权页面，0 个已删除")
    );
    let from = message.from().and_then(|f| f.first()).unwrap();
    assert_eq!(from.address(), Some("alerts@copytrace.test"));
    let key = message.message_id().expect("a Message-ID");
    assert!(key.ends_with("@copytrace"), "{key}");
    let body = message.body_text(0).expect("a text body");
    assert!(body.contains("新发现的侵权页面"), "{body}");
    assert!(body.contains("https://pirate.example/1.html"), "{body}");
    assert!(body.contains("https://pirate.example/2.html"), "{body}");

    // A new copy the same day waits for tomorrow's digest.
    copied(&*store, "https://pirate.example/3.html", work, 200).await;
    let same_day = alerter.run(at(300)).await.unwrap();
    assert_eq!(same_day.gathered, 0);
    let tomorrow = alerter
        .run(at(100) + chrono::Duration::hours(24))
        .await
        .unwrap();
    assert_eq!((tomorrow.gathered, tomorrow.delivered), (1, 1));
    assert_eq!(received.lock().unwrap().len(), 2);
}
