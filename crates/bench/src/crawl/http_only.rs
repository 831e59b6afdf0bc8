//! The HTTP floor of a Rust crawler: `reqwest` (the client the crawler's fetcher is built on)
//! fetching every page of the site at the same concurrency, reading each body whole and doing
//! nothing else with it: no decoding, parsing, extraction, link discovery or frontier.
//!
//! It separates what the HTTP stack costs (tokio, hyper, reqwest, the kernel's socket calls)
//! from what the crawler adds on top, so the crawler ÷ wrk ratio can be read as
//! (HTTP stack ÷ wrk) × (crawler ÷ HTTP stack).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// What one run of the HTTP-only client did.
pub struct Report {
    pub requests: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// Fetches every path of `paths` once from `base`, `concurrency` requests in flight, on a
/// 2-thread tokio runtime like the crawler's. Fails on any error or non-2xx answer.
pub fn run(base: &str, paths: &[String], concurrency: usize) -> Result<Report> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .timeout(Duration::from_secs(30))
        .build()
        .context("cannot build the HTTP client")?;
    let urls: Arc<Vec<String>> = Arc::new(
        paths
            .iter()
            .map(|p| format!("{}{}", base.trim_end_matches('/'), p))
            .collect(),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let totals = runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..concurrency.max(1) {
            let (client, urls, next) = (client.clone(), urls.clone(), next.clone());
            tasks.spawn(async move {
                let (mut requests, mut bytes) = (0u64, 0u64);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(url) = urls.get(i) else {
                        return Ok::<_, anyhow::Error>((requests, bytes));
                    };
                    let response = client.get(url).send().await?;
                    if !response.status().is_success() {
                        bail!("{url}: HTTP {}", response.status());
                    }
                    bytes += response.bytes().await?.len() as u64;
                    requests += 1;
                }
            });
        }
        let (mut requests, mut bytes) = (0u64, 0u64);
        while let Some(joined) = tasks.join_next().await {
            let (r, b) = joined??;
            requests += r;
            bytes += b;
        }
        Ok::<_, anyhow::Error>((requests, bytes))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    drop(runtime);
    Ok(Report {
        requests: totals.0,
        bytes: totals.1,
        seconds,
    })
}
