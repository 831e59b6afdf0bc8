//! Liveness (`/healthz`), readiness (`/readyz`) and metrics (`/metrics`) of a process.
//!
//! * `/healthz` answers 200 while the process runs: a container that stops answering is
//!   restarted.
//! * `/readyz` answers 200 only when the process can work: its database answers and, when it
//!   uses one, its shared index is built. Otherwise 503 with the reason, so a deployment waits
//!   for (or alerts on) the dependency instead of piling up failed jobs.
//! * `/metrics` is the Prometheus text format: job queue depth per kind and state, whether this
//!   process leads the scheduler, and, for a router wrapped by [`measured`], requests per route,
//!   method and status with a histogram of their latencies.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use copytrace_store::JobCount;

/// What the endpoints ask of the process serving them.
#[async_trait]
pub trait Probe: Send + Sync {
    /// `Ok` when the process can do its work; otherwise why not, in one line.
    async fn ready(&self) -> Result<(), String>;
    /// The current metrics.
    async fn metrics(&self) -> Metrics;
}

/// Values exported on `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Jobs per kind and state, `None` when the database did not answer.
    pub jobs: Option<Vec<JobCount>>,
    /// Whether this process leads the scheduler (`None`: it does not compete).
    pub leader: Option<bool>,
}

impl Metrics {
    /// The Prometheus text exposition of these values.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(jobs) = &self.jobs {
            out.push_str("# HELP copytrace_jobs Jobs in the durable queue by kind and state.\n");
            out.push_str("# TYPE copytrace_jobs gauge\n");
            for count in jobs {
                let _ = writeln!(
                    out,
                    "copytrace_jobs{{kind=\"{}\",state=\"{}\"}} {}",
                    escape_label(&count.kind),
                    count.state.as_str(),
                    count.count
                );
            }
        }
        out.push_str("# HELP copytrace_database_up Whether the database answered.\n");
        out.push_str("# TYPE copytrace_database_up gauge\n");
        let _ = writeln!(
            out,
            "copytrace_database_up {}",
            u8::from(self.jobs.is_some())
        );
        if let Some(leader) = self.leader {
            out.push_str("# HELP copytrace_scheduler_leader Whether this process leads.\n");
            out.push_str("# TYPE copytrace_scheduler_leader gauge\n");
            let _ = writeln!(out, "copytrace_scheduler_leader {}", u8::from(leader));
        }
        out
    }
}

/// Escapes a Prometheus label value.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Upper bounds (seconds) of the request latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Requests of one route and method.
#[derive(Debug, Default)]
struct RouteStats {
    /// Requests per status code.
    statuses: BTreeMap<u16, u64>,
    /// Requests at or under each of [`LATENCY_BUCKETS`] (not cumulative here).
    buckets: [u64; LATENCY_BUCKETS.len()],
    /// Total seconds.
    sum: f64,
    /// Requests.
    count: u64,
}

/// Requests served, per route (its pattern: `/works/{id}` is one series whatever the id),
/// method and status, with their latencies. Filled by [`measured`], shown on `/metrics`.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    routes: Mutex<BTreeMap<(String, String), RouteStats>>,
}

impl RequestMetrics {
    /// Counts one request.
    pub fn record(&self, route: &str, method: &str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        let stats = routes
            .entry((route.to_owned(), method.to_owned()))
            .or_default();
        *stats.statuses.entry(status).or_insert(0) += 1;
        if let Some(bucket) = LATENCY_BUCKETS.iter().position(|le| seconds <= *le) {
            stats.buckets[bucket] += 1;
        }
        stats.sum += seconds;
        stats.count += 1;
    }

    /// The Prometheus text of the counts.
    pub fn render(&self) -> String {
        let routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        out.push_str(
            "# HELP copytrace_http_requests_total Requests served by route, method and status.\n",
        );
        out.push_str("# TYPE copytrace_http_requests_total counter\n");
        for ((route, method), stats) in routes.iter() {
            for (status, count) in &stats.statuses {
                let _ = writeln!(
                    out,
                    "copytrace_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {count}",
                    escape_label(route),
                    escape_label(method)
                );
            }
        }
        out.push_str(
            "# HELP copytrace_http_request_duration_seconds Time to answer, by route and method.\n",
        );
        out.push_str("# TYPE copytrace_http_request_duration_seconds histogram\n");
        for ((route, method), stats) in routes.iter() {
            let labels = format!(
                "route=\"{}\",method=\"{}\"",
                escape_label(route),
                escape_label(method)
            );
            let mut cumulative = 0;
            for (le, count) in LATENCY_BUCKETS.iter().zip(stats.buckets) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "copytrace_http_request_duration_seconds_bucket{{{labels},le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "copytrace_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                stats.count
            );
            let _ = writeln!(
                out,
                "copytrace_http_request_duration_seconds_sum{{{labels}}} {}",
                stats.sum
            );
            let _ = writeln!(
                out,
                "copytrace_http_request_duration_seconds_count{{{labels}}} {}",
                stats.count
            );
        }
        out
    }
}

/// `router` with every request counted in `requests`.
pub fn measured(router: Router, requests: Arc<RequestMetrics>) -> Router {
    router.layer(axum::middleware::from_fn_with_state(requests, track))
}

async fn track(
    State(requests): State<Arc<RequestMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = request.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    requests.record(
        &route,
        &method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// The router of the three endpoints.
pub fn router(probe: Arc<dyn Probe>) -> Router {
    router_with(probe, Arc::new(RequestMetrics::default()))
}

/// The router of the three endpoints, `/metrics` showing `requests` too.
pub fn router_with(probe: Arc<dyn Probe>, requests: Arc<RequestMetrics>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state((probe, requests))
}

async fn readyz(
    State((probe, _)): State<(Arc<dyn Probe>, Arc<RequestMetrics>)>,
) -> impl IntoResponse {
    match probe.ready().await {
        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

async fn metrics(
    State((probe, requests)): State<(Arc<dyn Probe>, Arc<RequestMetrics>)>,
) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        probe.metrics().await.render() + &requests.render(),
    )
}

#[cfg(test)]
mod tests {
    use copytrace_store::JobState;

    use super::*;

    struct Fixed(Result<(), String>);

    #[async_trait]
    impl Probe for Fixed {
        async fn ready(&self) -> Result<(), String> {
            self.0.clone()
        }
        async fn metrics(&self) -> Metrics {
            Metrics {
                jobs: Some(vec![JobCount {
                    kind: "match".into(),
                    state: JobState::Queued,
                    count: 42,
                }]),
                leader: Some(true),
            }
        }
    }

    async fn serve(probe: Fixed) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, router(Arc::new(probe)))
                .await
                .unwrap();
        });
        format!("http://{address}")
    }

    #[tokio::test]
    async fn requests_are_counted_per_route_pattern_with_their_latencies() {
        let requests = Arc::new(RequestMetrics::default());
        let app = measured(
            router_with(Arc::new(Fixed(Ok(()))), requests.clone())
                .route("/works/{id}", get(|| async { "work" })),
            requests,
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        for path in ["/works/1", "/works/2", "/healthz", "/nowhere"] {
            reqwest::get(format!("{base}{path}")).await.unwrap();
        }
        let text = reqwest::get(format!("{base}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for line in [
            "copytrace_http_requests_total{route=\"/works/{id}\",method=\"GET\",status=\"200\"} 2\n",
            "copytrace_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1\n",
            "copytrace_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1\n",
            "copytrace_http_request_duration_seconds_bucket{route=\"/works/{id}\",method=\"GET\",le=\"+Inf\"} 2\n",
            "copytrace_http_request_duration_seconds_count{route=\"/works/{id}\",method=\"GET\"} 2\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    #[tokio::test]
    async fn endpoints_answer_over_http() {
        let base = serve(Fixed(Ok(()))).await;
        let client = reqwest::Client::new();
        let health = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
        let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
        assert_eq!(ready.status(), 200);
        let metrics = client.get(format!("{base}/metrics")).send().await.unwrap();
        let text = metrics.text().await.unwrap();
        assert!(
            text.contains("copytrace_jobs{kind=\"match\",state=\"queued\"} 42\n"),
            "{text}"
        );
        assert!(text.contains("copytrace_scheduler_leader 1\n"), "{text}");
        assert!(text.contains("copytrace_database_up 1\n"));
    }

    #[tokio::test]
    async fn a_process_that_cannot_work_is_not_ready_and_says_why() {
        let base = serve(Fixed(Err("database: connection refused".into()))).await;
        let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
        assert_eq!(ready.status(), 503);
        assert_eq!(
            ready.text().await.unwrap(),
            "not ready: database: connection refused\n"
        );
        let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
        assert_eq!(health.status(), 200, "alive, just not ready");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
