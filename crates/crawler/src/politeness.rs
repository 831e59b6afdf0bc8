//! Per-host pacing: one `governor` rate limiter per host, plus pauses asked for by the server.
//!
//! `governor` has no per-key quota (its keyed limiter applies one quota to every key), while each
//! host has its own delay: the larger of [`CrawlConfig::host_delay`](crate::CrawlConfig) and its
//! robots.txt `Crawl-delay` (capped). So each host gets its own direct GCRA limiter with a burst
//! of one request per delay, created when the host's robots.txt is known (robots.txt is always
//! fetched before the first page of an origin, so no page request escapes the limiter).
//!
//! The frontier asks [`Politeness::try_acquire`] before it starts a page task, so a host that
//! must wait does not hold one of the crawl's concurrency slots while it waits: the frontier
//! serves another host instead and wakes up when the earliest host is ready. Redirect hops and
//! retries inside a task wait with [`Politeness::acquire`].
//!
//! A `Retry-After` on a 429 or 503 pauses the whole host ([`Politeness::pause`]), not only the
//! request that received it: the server said it is overloaded, and every other queued request to
//! it would only earn another 429.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::time::Instant;

/// The pacing state of every host seen so far.
pub(crate) struct Politeness {
    hosts: Mutex<HashMap<String, HostPace>>,
    clock: DefaultClock,
}

#[derive(Default)]
struct HostPace {
    /// `None` until the host's delay is known, and for hosts without any delay.
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
    configured: bool,
    delay: Duration,
    paused_until: Option<Instant>,
}

/// The answer of [`Politeness::try_acquire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// A request may start now; the host's limiter has counted it.
    Acquired,
    /// The host's delay is not known yet (robots.txt not loaded): the task must configure the
    /// host and then [`Politeness::acquire`] before requesting.
    Unknown,
    /// Not before this instant.
    Wait(Instant),
}

impl Politeness {
    pub(crate) fn new() -> Self {
        Self {
            hosts: Mutex::new(HashMap::new()),
            clock: DefaultClock::default(),
        }
    }

    /// Sets the host's delay between request starts. Only the first call for a host counts:
    /// the delay of a host does not change during a crawl (a new limiter would forget when the
    /// last request started).
    pub(crate) fn configure(&self, host: &str, delay: Duration) {
        let mut hosts = self.lock();
        let pace = hosts.entry(host.to_owned()).or_default();
        if pace.configured {
            return;
        }
        pace.configured = true;
        pace.delay = delay;
        pace.limiter = Quota::with_period(delay)
            .map(|quota| Arc::new(RateLimiter::direct(quota.allow_burst(NonZeroU32::MIN))));
    }

    /// The delay configured for a host (zero if none or not yet known).
    #[cfg(test)]
    pub(crate) fn delay(&self, host: &str) -> Duration {
        self.lock().get(host).map_or(Duration::ZERO, |p| p.delay)
    }

    /// Takes the host's next turn if it is due now.
    pub(crate) fn try_acquire(&self, host: &str) -> Turn {
        let (limiter, paused_until) = {
            let hosts = self.lock();
            match hosts.get(host) {
                None => return Turn::Unknown,
                Some(pace) if !pace.configured => {
                    return pace.paused_until.map_or(Turn::Unknown, Turn::Wait);
                }
                Some(pace) => (pace.limiter.clone(), pace.paused_until),
            }
        };
        let now = Instant::now();
        if let Some(until) = paused_until
            && until > now
        {
            return Turn::Wait(until);
        }
        let Some(limiter) = limiter else {
            return Turn::Acquired;
        };
        match limiter.check() {
            Ok(()) => Turn::Acquired,
            Err(not_until) => Turn::Wait(now + not_until.wait_time_from(self.clock.now())),
        }
    }

    /// Waits for and takes the host's next turn (a host without a known delay goes at once).
    pub(crate) async fn acquire(&self, host: &str) {
        loop {
            match self.try_acquire(host) {
                Turn::Acquired | Turn::Unknown => return,
                Turn::Wait(until) => tokio::time::sleep_until(until).await,
            }
        }
    }

    /// No request to `host` starts before `until`.
    pub(crate) fn pause(&self, host: &str, until: Instant) {
        let mut hosts = self.lock();
        let pace = hosts.entry(host.to_owned()).or_default();
        pace.paused_until = Some(pace.paused_until.map_or(until, |p| p.max(until)));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HostPace>> {
        self.hosts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_configured_delay_spaces_turns_and_hosts_are_independent() {
        let pace = Politeness::new();
        assert_eq!(pace.try_acquire("a:80"), Turn::Unknown);
        pace.configure("a:80", Duration::from_millis(200));
        pace.configure("b:80", Duration::ZERO);
        assert_eq!(pace.try_acquire("a:80"), Turn::Acquired);
        let before = Instant::now();
        match pace.try_acquire("a:80") {
            Turn::Wait(until) => {
                let wait = until - before;
                assert!(wait > Duration::from_millis(150), "{wait:?}");
                assert!(wait <= Duration::from_millis(200), "{wait:?}");
            }
            other => panic!("expected a wait, got {other:?}"),
        }
        // Another host without a delay is not held up.
        for _ in 0..3 {
            assert_eq!(pace.try_acquire("b:80"), Turn::Acquired);
        }
        pace.acquire("a:80").await;
        assert!(before.elapsed() >= Duration::from_millis(150));
    }

    #[tokio::test]
    async fn a_pause_holds_a_host_even_without_a_delay() {
        let pace = Politeness::new();
        pace.configure("a:80", Duration::ZERO);
        let until = Instant::now() + Duration::from_millis(100);
        pace.pause("a:80", until);
        assert_eq!(pace.try_acquire("a:80"), Turn::Wait(until));
        pace.acquire("a:80").await;
        assert!(Instant::now() >= until);
        assert_eq!(pace.try_acquire("a:80"), Turn::Acquired);
    }

    #[test]
    fn the_first_configuration_of_a_host_wins() {
        let pace = Politeness::new();
        pace.configure("a:80", Duration::from_secs(2));
        pace.configure("a:80", Duration::ZERO);
        assert_eq!(pace.delay("a:80"), Duration::from_secs(2));
    }
}
