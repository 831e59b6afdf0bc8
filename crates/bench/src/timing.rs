//! Median-of-repetitions timing.

use std::time::{Duration, Instant};

/// Runs `f` `warmup` times untimed, then `reps` times timed, and returns the median duration.
pub fn median<T>(warmup: usize, reps: usize, mut f: impl FnMut() -> T) -> Duration {
    for _ in 0..warmup {
        std::hint::black_box(f());
    }
    let mut times: Vec<Duration> = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

/// Throughput in MB/s (10^6 bytes per second).
pub fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Nanoseconds per item.
pub fn ns_per(items: usize, time: Duration) -> f64 {
    time.as_secs_f64() * 1e9 / items as f64
}
