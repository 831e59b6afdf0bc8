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

/// Times `a` and `b` alternately, `reps` times each after `warmup` untimed rounds, and returns
/// the median of the per-round ratios `a / b` with the median duration of each.
///
/// Alternating puts both sides under the same machine conditions (frequency scaling, noisy
/// neighbours), so their ratio is steadier than the ratio of two separately taken medians.
pub fn median_ratio<T, U>(
    warmup: usize,
    reps: usize,
    mut a: impl FnMut() -> T,
    mut b: impl FnMut() -> U,
) -> (f64, Duration, Duration) {
    for _ in 0..warmup {
        std::hint::black_box(a());
        std::hint::black_box(b());
    }
    let mut ratios = Vec::new();
    let mut a_times = Vec::new();
    let mut b_times = Vec::new();
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        std::hint::black_box(a());
        let a_time = start.elapsed();
        let start = Instant::now();
        std::hint::black_box(b());
        let b_time = start.elapsed();
        ratios.push(a_time.as_secs_f64() / b_time.as_secs_f64());
        a_times.push(a_time);
        b_times.push(b_time);
    }
    ratios.sort_by(f64::total_cmp);
    a_times.sort_unstable();
    b_times.sort_unstable();
    let mid = ratios.len() / 2;
    (ratios[mid], a_times[mid], b_times[mid])
}
