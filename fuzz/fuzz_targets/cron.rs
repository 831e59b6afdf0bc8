//! Arbitrary text → `CronSchedule::parse` in one of a few time zones (with and without DST,
//! with a half-hour DST shift, or a fuzzed name), then the schedule's ticks around a fuzzed
//! instant. An expression is refused (with a message) or parsed, never a panic, and a parsed
//! schedule keeps its promises:
//!
//! * `expression()` is the expression trimmed;
//! * `next_after(t) > t`, `latest_at_or_before(t) <= t`, and nothing fires between the two:
//!   the first tick after the latest one at or before `t` is `next_after(t)`;
//! * `upcoming` lists increasing ticks after `t`, starting at `next_after(t)`;
//! * `due(since, now)` fires a tick in `(since, now]` with at most `MISSED_COUNT_LIMIT` missed.
#![no_main]

use chrono::{DateTime, TimeDelta, Utc};
use copytrace_scheduler::cron::{CronSchedule, MISSED_COUNT_LIMIT};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

const ZONES: [&str; 5] = [
    "UTC",
    "Asia/Shanghai",
    "America/New_York",
    "Australia/Lord_Howe",
    "Europe/London",
];

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let zone: String = match u.int_in_range(0..=ZONES.len())? {
        0 => u.arbitrary()?,
        i => ZONES[i - 1].to_owned(),
    };
    // Instants from 1970 to 2100, and spans up to two days (a longer one only repeats).
    let t = DateTime::<Utc>::from_timestamp(u.int_in_range(0..=4_102_444_800i64)?, 0)
        .expect("in range");
    let span = TimeDelta::seconds(u.int_in_range(0..=172_800i64)?);
    let expression = String::from_utf8_lossy(u.take_rest()).into_owned();

    let schedule = match CronSchedule::parse(&expression, &zone) {
        Ok(schedule) => schedule,
        Err(error) => {
            assert!(!error.to_string().is_empty());
            return Ok(());
        }
    };
    assert_eq!(schedule.expression(), expression.trim());

    let next = schedule.next_after(t);
    if let Some(next) = next {
        assert!(
            next > t,
            "next tick {next} not after {t} for {expression:?} in {zone}"
        );
    }
    let latest = schedule.latest_at_or_before(t);
    if let Some(latest) = latest {
        assert!(
            latest <= t,
            "latest tick {latest} after {t} for {expression:?} in {zone}"
        );
        assert_eq!(
            schedule.next_after(latest),
            next,
            "a tick between {latest} and {next:?} (t = {t}) for {expression:?} in {zone}"
        );
    }

    let upcoming = schedule.upcoming(t, 4);
    assert_eq!(upcoming.first().copied(), next, "upcoming starts elsewhere");
    assert!(
        upcoming.windows(2).all(|p| p[0] < p[1]),
        "upcoming not increasing"
    );

    let since = t - span;
    if let Some(due) = schedule.due(since, t) {
        assert!(
            since < due.at && due.at <= t,
            "due {due:?} outside ({since}, {t}]"
        );
        assert!(due.missed <= MISSED_COUNT_LIMIT);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
