//! Liveness (`/healthz`), readiness (`/readyz`) and metrics (`/metrics`) of a process.
//!
//! * `/healthz` answers 200 while the process runs: a container that stops answering is
//!   restarted.
//! * `/readyz` answers 200 only when the process can work: its database answers and, when it
//!   uses one, its shared index is built. Otherwise 503 with the reason, so a deployment waits
//!   for (or alerts on) the dependency instead of piling up failed jobs.
//! * `/metrics` is the Prometheus text format: job queue depth per kind and state, whether this
//!   process leads the scheduler.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
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

/// The router of the three endpoints.
pub fn router(probe: Arc<dyn Probe>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(probe)
}

async fn readyz(State(probe): State<Arc<dyn Probe>>) -> impl IntoResponse {
    match probe.ready().await {
        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

async fn metrics(State(probe): State<Arc<dyn Probe>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        probe.metrics().await.render(),
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
