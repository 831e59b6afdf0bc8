//! Running a task in exactly one process of a deployment.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use copytrace_store::{Leadership, Store};
use tokio_util::sync::CancellationToken;

/// How a contender competes for leadership.
#[derive(Debug, Clone)]
pub struct LeaderConfig {
    /// Leadership name; processes competing for the same name elect one leader.
    pub name: String,
    /// How long a lease-based leadership (SQLite) survives its holder's silence.
    pub ttl: Duration,
    /// How often the leader confirms it still leads, and a follower tries to take over.
    pub check_every: Duration,
}

impl LeaderConfig {
    /// The scheduler's leadership with production timings: a dead leader is replaced within
    /// about 30 s on SQLite and within `check_every` on PostgreSQL (where its lock dies with
    /// its connection).
    pub fn scheduler() -> Self {
        Self {
            name: "scheduler".to_owned(),
            ttl: Duration::from_secs(30),
            check_every: Duration::from_secs(5),
        }
    }
}

/// Competes for leadership named in `config` until `shutdown`, and while this process leads,
/// runs `tick` every `check_every`. When leadership is lost (database restart, lapsed lease)
/// the process goes back to competing. Returns how many ticks ran here.
///
/// `tick` is called only between confirmations, never concurrently with itself; its errors are
/// logged, not fatal, because the next tick tries again. `leading` follows whether this process
/// leads right now (for metrics).
pub async fn run_as_leader<F, Fut>(
    store: Arc<dyn Store>,
    config: LeaderConfig,
    shutdown: CancellationToken,
    leading: Arc<AtomicBool>,
    mut tick: F,
) -> u64
where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = Result<(), Box<dyn std::error::Error + Send + Sync>>> + Send,
{
    let leading_flag = leading;
    let ttl = chrono::Duration::from_std(config.ttl).unwrap_or(chrono::Duration::seconds(30));
    let mut leadership: Option<Box<dyn Leadership>> = None;
    let mut ticks = 0;
    while !shutdown.is_cancelled() {
        let leading = match leadership.as_mut() {
            Some(held) => match held.confirm().await {
                Ok(true) => true,
                Ok(false) => {
                    tracing::warn!(name = %config.name, "leadership lost");
                    leadership = None;
                    false
                }
                Err(error) => {
                    tracing::warn!(name = %config.name, %error, "cannot confirm leadership");
                    leadership = None;
                    false
                }
            },
            None => match store.try_lead(&config.name, ttl).await {
                Ok(Some(won)) => {
                    tracing::info!(name = %config.name, "this process leads");
                    leadership = Some(won);
                    true
                }
                Ok(None) => false,
                Err(error) => {
                    tracing::warn!(name = %config.name, %error, "cannot compete for leadership");
                    false
                }
            },
        };
        leading_flag.store(leading, Ordering::Relaxed);
        if leading {
            ticks += 1;
            if let Err(error) = tick().await {
                tracing::warn!(name = %config.name, %error, "leader task failed; next tick retries");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(config.check_every) => {}
            () = shutdown.cancelled() => {}
        }
    }
    leading_flag.store(false, Ordering::Relaxed);
    if let Some(held) = leadership
        && let Err(error) = held.resign().await
    {
        tracing::warn!(name = %config.name, %error, "cannot resign leadership");
    }
    ticks
}
