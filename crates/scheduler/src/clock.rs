//! Where "now" comes from.

use chrono::{DateTime, Utc};

/// The time source of the job runner and the scheduler. Production uses [`SystemClock`]; tests
/// use a clock they move by hand, so leases, retries and schedules are tested without sleeping.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}
