//! `copytrace alert`: a webhook receiver started here is told of the copies `match` records,
//! once, signed with the secret `alert add` printed.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};

use crate::helpers::{TestSite, Workspace, write_sample_library};

type Requests = Arc<Mutex<Vec<(HeaderMap, String)>>>;

async fn receive(State(requests): State<Requests>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let body = String::from_utf8(body.to_vec()).expect("UTF-8 JSON");
    requests.lock().unwrap().push((headers, body));
    StatusCode::OK
}

/// A webhook receiver on a loopback port, on its own runtime; returns its URL.
fn start_receiver(runtime: &tokio::runtime::Runtime, requests: Requests) -> String {
    runtime.block_on(async {
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(requests);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/hook")
    })
}

#[test]
fn match_tells_a_webhook_of_new_copies_once_signed_with_its_secret() {
    let workspace = Workspace::new();
    let library = write_sample_library(&workspace);
    workspace.ok(&["library".as_ref(), "add".as_ref(), library.as_os_str()]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let requests = Requests::default();
    let url = start_receiver(&runtime, requests.clone());

    let refused = workspace.run(&[
        "alert",
        "add",
        "default",
        "--webhook",
        "ftp://hooks.example/",
    ]);
    assert_ne!(refused.code, Some(0));
    assert!(
        refused.stderr.contains("expected an http or https URL"),
        "{refused:#?}"
    );
    let added = workspace.ok(&["alert", "add", "default", "--webhook", &url]);
    let secret = added
        .stdout
        .lines()
        .find_map(|line| line.split("receiver): ").nth(1))
        .expect("the generated secret is printed")
        .trim()
        .to_owned();
    assert!(secret.len() >= 32, "{secret}");
    let listed = workspace.ok(&["alert", "list", "--json"]);
    assert!(
        !listed.stdout.contains(&secret),
        "listings never show the secret"
    );
    let targets: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(targets[0]["address"], url);
    assert_eq!(targets[0]["cadence"], "after_run");

    let site = TestSite::sample();
    workspace.ok(&["crawl", &site.base_url(), "--allow-private-addresses"]);
    // The receiver is on loopback, which alerts refuse unless allowed.
    let matched = workspace.ok(&["match", "--alerts-allow-private-addresses"]);
    assert!(
        matched
            .stderr
            .contains("alerts: 1 alert(s) gathered, 1 delivered"),
        "{matched:#?}"
    );
    let reported = workspace.export_json();
    let received = requests.lock().unwrap().clone();
    assert_eq!(received.len(), 1);
    let (headers, body) = &received[0];
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    assert_eq!(
        header("x-copytrace-signature"),
        format!(
            "sha256={}",
            copytrace_service::alerts::sign(&secret, &header("x-copytrace-timestamp"), body)
        )
    );
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["rights_holder"], "default");
    let mut told: Vec<(String, String)> = json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["event"], "new");
            (e["page_url"].to_string(), e["work_external_id"].to_string())
        })
        .collect();
    let mut expected: Vec<(String, String)> = reported
        .iter()
        .map(|m| (m["page_url"].to_string(), m["work_external_id"].to_string()))
        .collect();
    told.sort();
    expected.sort();
    assert_eq!(
        told, expected,
        "every reported copy, as the export lists them"
    );

    // Matching everything again finds nothing new: nothing more is sent.
    workspace.ok(&["match", "--all", "--alerts-allow-private-addresses"]);
    let again = workspace.ok(&["alert", "send", "--alerts-allow-private-addresses"]);
    assert!(
        again.stdout.contains("0 alert(s) gathered, 0 delivered"),
        "{again:#?}"
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
    let list = workspace.ok(&["alert", "list"]);
    assert!(
        list.stdout.contains("delivered 1, waiting 0, failed 0"),
        "{list:#?}"
    );
}
