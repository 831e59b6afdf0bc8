//! How long a failed job waits before its next attempt.

use std::time::Duration;

/// Exponential backoff with "full jitter" below a cap: attempt 1 waits up to `base`, attempt 2
/// up to `2 × base`, … never more than `max`. The random part spreads the retries of many jobs
/// that failed together (a site or the database was down), so they do not all come back in the
/// same second and fail together again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Upper bound of the first retry's delay.
    pub base: Duration,
    /// Upper bound of any delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(10),
            max: Duration::from_secs(30 * 60),
        }
    }
}

impl Backoff {
    /// The delay ceiling after `attempt` failed attempts (1 = the first attempt failed).
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(30);
        self.base
            .checked_mul(1 << doublings)
            .unwrap_or(self.max)
            .min(self.max)
    }

    /// A random delay between half the ceiling and the ceiling: jittered, yet never so short
    /// that a retry storm hits a struggling server at once.
    pub fn delay(&self, attempt: u32) -> Duration {
        let ceiling = self.ceiling(attempt);
        let half = ceiling / 2;
        let spread = u64::try_from((ceiling - half).as_millis()).unwrap_or(u64::MAX);
        half + Duration::from_millis(fastrand::u64(0..=spread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_per_attempt_up_to_the_cap() {
        let backoff = Backoff {
            base: Duration::from_secs(10),
            max: Duration::from_secs(60),
        };
        let ceilings: Vec<u64> = (1..=6).map(|a| backoff.ceiling(a).as_secs()).collect();
        assert_eq!(ceilings, [10, 20, 40, 60, 60, 60]);
        assert_eq!(backoff.ceiling(u32::MAX), Duration::from_secs(60));
        assert_eq!(backoff.ceiling(0), Duration::from_secs(10));
    }

    #[test]
    fn delays_are_jittered_between_half_the_ceiling_and_the_ceiling() {
        let backoff = Backoff {
            base: Duration::from_secs(8),
            max: Duration::from_secs(600),
        };
        let delays: Vec<Duration> = (0..200).map(|_| backoff.delay(3)).collect();
        assert!(
            delays
                .iter()
                .all(|d| *d >= Duration::from_secs(16) && *d <= Duration::from_secs(32))
        );
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 50, "jittered, not one fixed delay");
    }
}
