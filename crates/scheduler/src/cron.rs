//! Cron expressions as operators write them, evaluated in a time zone.
//!
//! The `cron` crate parses and iterates the ticks; this module puts the dialect operators know
//! in front of it:
//!
//! * the **five-field** form `minute hour day-of-month month day-of-week` of crontab, plus the
//!   **seconds** form (`second` first, six fields) and an optional trailing `year` (seven);
//!   `@daily`, `@hourly`, `@weekly`, `@monthly` and `@yearly` too;
//! * day-of-week numbers are crontab's in every form: `0` and `7` are Sunday, `1` Monday
//!   (the `cron` crate itself counts Sunday as 1, which would silently shift every weekly
//!   schedule by a day);
//! * as in crontab, when **both** day-of-month and day-of-week are restricted, a day matching
//!   **either** fires (`0 3 1 * 1`: the 1st of each month and every Monday);
//! * an invalid expression is refused with the name of the field at fault and its range, so
//!   `61 * * * *` says "minute".
//!
//! Ticks are computed in the schedule's IANA time zone and returned in UTC. Across a DST change
//! a local time that does not exist is skipped and one that exists twice fires at its first
//! occurrence (the scheduler fires a tick only if it is later than the last one fired).

use std::collections::BTreeSet;
use std::str::FromStr;

use chrono::{DateTime, Datelike, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use cron::TimeUnitSpec;

/// Why an expression or time zone was refused. Messages name the field and say what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    /// Wrong number of fields.
    #[error(
        "cron expression {expression:?} has {found} field(s); expected 5 \
         (minute hour day-of-month month day-of-week), 6 with seconds first, or 7 with a \
         year last"
    )]
    FieldCount {
        /// The expression as given.
        expression: String,
        /// Fields found.
        found: usize,
    },
    /// One field is invalid.
    #[error(
        "invalid {field} field {value:?} in cron expression {expression:?}: {field} takes {range}"
    )]
    Field {
        /// The expression as given.
        expression: String,
        /// Which field (`minute`, `day-of-week`, ...).
        field: &'static str,
        /// The field as written.
        value: String,
        /// What the field accepts.
        range: &'static str,
    },
    /// Every field is valid but the expression as a whole is not (the `cron` crate's words).
    #[error("invalid cron expression {expression:?}: {reason}")]
    Expression {
        /// The expression as given.
        expression: String,
        /// Why.
        reason: String,
    },
    /// The expression can never fire (`0 0 30 2 *`: February 30th).
    #[error("cron expression {expression:?} never fires")]
    Never {
        /// The expression as given.
        expression: String,
    },
    /// Unknown time zone.
    #[error("unknown time zone {0:?}: use an IANA name such as Asia/Shanghai or UTC")]
    TimeZone(String),
}

/// Name and accepted values of each field of the seven-field form.
const FIELDS: [(&str, &str); 7] = [
    ("second", "0-59"),
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31"),
    ("month", "1-12 or JAN-DEC"),
    (
        "day-of-week",
        "0-7 or SUN-SAT (0 and 7 are Sunday), with lists, ranges and steps",
    ),
    ("year", "1970-2099"),
];
const DAY_OF_MONTH: usize = 3;
const DAY_OF_WEEK: usize = 5;
const YEAR: usize = 6;

/// A validated cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct CronSchedule {
    expression: String,
    timezone: Tz,
    /// One schedule, or two whose ticks are merged (day-of-month OR day-of-week).
    schedules: Vec<cron::Schedule>,
}

/// The tick a schedule owes, see [`CronSchedule::due`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueTick {
    /// The latest tick at or before now: the one to fire.
    pub at: DateTime<Utc>,
    /// Earlier ticks since the last fire that are not fired separately (the process was
    /// down): 0 for a tick on time. Counted up to [`MISSED_COUNT_LIMIT`].
    pub missed: u32,
}

/// Missed ticks are counted up to this many (a seconds schedule down for a month would
/// otherwise take millions of steps to count).
pub const MISSED_COUNT_LIMIT: u32 = 10_000;

impl CronSchedule {
    /// Parses `expression` (see the module documentation for the dialect) for the IANA time
    /// zone `timezone`.
    pub fn parse(expression: &str, timezone: &str) -> Result<Self, CronError> {
        let timezone = parse_timezone(timezone)?;
        let expression = expression.trim();
        let schedules = if expression.starts_with('@') {
            vec![parse_whole(expression, expression)?]
        } else {
            let fields = seven_fields(expression)?;
            let restricted = |field: &str| !matches!(field, "*" | "?");
            if restricted(&fields[DAY_OF_MONTH]) && restricted(&fields[DAY_OF_WEEK]) {
                let mut by_month_day = fields.clone();
                by_month_day[DAY_OF_WEEK] = "*".to_owned();
                let mut by_week_day = fields;
                by_week_day[DAY_OF_MONTH] = "*".to_owned();
                vec![
                    parse_whole(expression, &by_month_day.join(" "))?,
                    parse_whole(expression, &by_week_day.join(" "))?,
                ]
            } else {
                vec![parse_whole(expression, &fields.join(" "))?]
            }
        };
        let parsed = Self {
            expression: expression.to_owned(),
            timezone,
            schedules,
        };
        if parsed.next_after(Utc::now()).is_none() {
            return Err(CronError::Never {
                expression: parsed.expression,
            });
        }
        Ok(parsed)
    }

    /// The expression as given (trimmed).
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The time zone ticks are computed in.
    pub fn timezone(&self) -> Tz {
        self.timezone
    }

    /// The first tick strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = after.with_timezone(&self.timezone);
        self.schedules
            .iter()
            .filter_map(|s| s.after(&local).next())
            .map(|t| t.with_timezone(&Utc))
            .min()
    }

    /// The latest tick at or before `at`.
    pub fn latest_at_or_before(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        // Ticks are whole seconds: anything before the next whole second is at or before `at`.
        let bound = at
            .checked_add_signed(TimeDelta::seconds(1))?
            .with_timezone(&self.timezone);
        self.schedules
            .iter()
            .filter_map(|s| {
                let bound = reverse_start(s, &bound)?;
                s.after(&bound).rev().find(|t| t.with_timezone(&Utc) <= at)
            })
            .map(|t| t.with_timezone(&Utc))
            .max()
    }

    /// The tick to fire at `now` for a schedule that last fired the tick `since` (or was
    /// created then): the latest tick in `(since, now]`, if any. Several ticks in that interval
    /// mean the scheduler was not running; they are fired once, as the latest, and counted in
    /// [`DueTick::missed`].
    pub fn due(&self, since: DateTime<Utc>, now: DateTime<Utc>) -> Option<DueTick> {
        let at = self.latest_at_or_before(now)?;
        if at <= since || self.same_wall_clock(at, since) {
            // The second occurrence of a local time that exists twice (DST ends) is the tick
            // already fired, as crontab has it.
            return None;
        }
        let mut missed = 0;
        let mut tick = self.next_after(since);
        while let Some(t) = tick {
            if t >= at || missed >= MISSED_COUNT_LIMIT {
                break;
            }
            missed += 1;
            tick = self.next_after(t);
        }
        Some(DueTick { at, missed })
    }

    fn same_wall_clock(&self, a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
        a - b <= TimeDelta::hours(3)
            && a.with_timezone(&self.timezone).naive_local()
                == b.with_timezone(&self.timezone).naive_local()
    }

    /// The next `count` ticks after `after` (for `schedule show`).
    pub fn upcoming(&self, after: DateTime<Utc>, count: usize) -> Vec<DateTime<Utc>> {
        let mut ticks = Vec::with_capacity(count);
        let mut from = after;
        while ticks.len() < count {
            let Some(t) = self.next_after(from) else {
                break;
            };
            ticks.push(t);
            from = t;
        }
        ticks
    }
}

/// Where to start reading `schedule`'s ticks backwards to find those before `bound`.
///
/// The `cron` crate (0.17) reads ticks backwards from a year its schedule leaves out as if the
/// previous year it includes were the starting one, skipping the months, days and times after
/// the starting date's (`1/5 * * * 3 * */2` from February 1987 found March 1984, not March
/// 1986). Starting at the first instant after the latest included year before `bound` finds
/// the same ticks, since the years in between have none.
fn reverse_start(schedule: &cron::Schedule, bound: &DateTime<Tz>) -> Option<DateTime<Tz>> {
    let years = schedule.years();
    let year = u32::try_from(bound.year()).ok()?;
    if years.includes(year) {
        return Some(*bound);
    }
    let next = i32::try_from(years.range(..year).next_back()?).ok()? + 1;
    // The first hour of that New Year's Day the time zone has (a change of offset may skip
    // midnight).
    (0..24).find_map(|hour| {
        bound
            .timezone()
            .with_ymd_and_hms(next, 1, 1, hour, 0, 0)
            .earliest()
    })
}

/// Parses an IANA time zone name.
pub fn parse_timezone(name: &str) -> Result<Tz, CronError> {
    Tz::from_str(name.trim()).map_err(|_| CronError::TimeZone(name.to_owned()))
}

/// The expression's fields in the seven-field form of the `cron` crate, day-of-week
/// translated, each field checked on its own so an error can name it.
fn seven_fields(expression: &str) -> Result<Vec<String>, CronError> {
    let written: Vec<&str> = expression.split_whitespace().collect();
    // Index into FIELDS of each written field.
    let first = match written.len() {
        5 => 1,
        6 | 7 => 0,
        found => {
            return Err(CronError::FieldCount {
                expression: expression.to_owned(),
                found,
            });
        }
    };
    let mut fields = vec![
        "0".to_owned(),
        "*".to_owned(),
        "*".to_owned(),
        "*".to_owned(),
        "*".to_owned(),
        "*".to_owned(),
        "*".to_owned(),
    ];
    for (offset, value) in written.iter().enumerate() {
        let index = first + offset;
        let bad = || CronError::Field {
            expression: expression.to_owned(),
            field: FIELDS[index].0,
            value: (*value).to_owned(),
            range: FIELDS[index].1,
        };
        let translated = if index == DAY_OF_WEEK {
            crontab_days_of_week(value).ok_or_else(bad)?
        } else {
            (*value).to_owned()
        };
        // Check the field alone: every other field a wildcard.
        let mut probe = ["0", "*", "*", "*", "*", "*", "*"];
        probe[index] = translated.as_str();
        if cron::Schedule::from_str(&probe.join(" ")).is_err() || !in_range(index, &translated) {
            return Err(bad());
        }
        fields[index] = translated;
    }
    if written.len() < 7 {
        fields[YEAR] = "*".to_owned();
    }
    Ok(fields)
}

/// Numbers in a field must lie in its range: the `cron` crate accepts some out-of-range values
/// in steps and ranges that crontab refuses.
fn in_range(index: usize, field: &str) -> bool {
    let (low, high) = match index {
        0 | 1 => (0, 59),
        2 => (0, 23),
        3 => (1, 31),
        4 => (1, 12),
        6 => (1970, 2099),
        // Day-of-week was rewritten to names.
        _ => return true,
    };
    field
        .split(',')
        .flat_map(|part| {
            let (base, step) = part.split_once('/').unwrap_or((part, ""));
            let step_ok = step.is_empty() || step.parse::<u32>().is_ok_and(|s| s >= 1);
            base.split('-')
                .map(move |n| (n.to_owned(), step_ok))
                .collect::<Vec<_>>()
        })
        .all(|(n, step_ok)| {
            step_ok
                && (n == "*"
                    || n == "?"
                    || n.parse::<u32>()
                        .map_or(index == 4, |v| (low..=high).contains(&v)))
        })
}

fn parse_whole(expression: &str, seven: &str) -> Result<cron::Schedule, CronError> {
    cron::Schedule::from_str(seven).map_err(|e| CronError::Expression {
        expression: expression.to_owned(),
        reason: e.to_string(),
    })
}

const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Rewrites a crontab day-of-week field (0-7, Sunday 0 or 7, names, lists, ranges, steps) as
/// a list of day names, which the `cron` crate reads without its own numbering. `None` if it
/// is not a valid field.
fn crontab_days_of_week(field: &str) -> Option<String> {
    if matches!(field, "*" | "?") {
        return Some(field.to_owned());
    }
    let day = |value: &str| -> Option<u32> {
        if let Ok(n) = value.parse::<u32>() {
            return (n <= 7).then_some(n);
        }
        let upper = value.to_ascii_uppercase();
        DAY_NAMES
            .iter()
            .position(|name| upper == *name || (upper.len() > 3 && full_day(name) == upper))
            .map(|i| i as u32)
    };
    let mut days = BTreeSet::new();
    for part in field.split(',') {
        let (base, step) = match part.split_once('/') {
            Some((base, step)) => (base, step.parse::<u32>().ok().filter(|s| *s >= 1)?),
            None => (part, 1),
        };
        let (from, to) = match base {
            "*" => (0, 6),
            _ => match base.split_once('-') {
                Some((a, b)) => (day(a)?, day(b)?),
                // `5/2`: from Friday on, every other day, as crontab reads it.
                None if part.contains('/') => (day(base)?, 6),
                None => {
                    let d = day(base)?;
                    (d, d)
                }
            },
        };
        if from > to {
            return None;
        }
        let mut d = from;
        while d <= to {
            days.insert(d % 7);
            // Saturating: `5/4294967295` is Friday alone, not an overflow.
            d = d.saturating_add(step);
        }
    }
    Some(
        days.iter()
            .map(|&d| DAY_NAMES[d as usize])
            .collect::<Vec<_>>()
            .join(","),
    )
}

fn full_day(abbreviation: &str) -> String {
    match abbreviation {
        "SUN" => "SUNDAY",
        "MON" => "MONDAY",
        "TUE" => "TUESDAY",
        "WED" => "WEDNESDAY",
        "THU" => "THURSDAY",
        "FRI" => "FRIDAY",
        _ => "SATURDAY",
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use chrono::{Datelike, TimeZone, Timelike, Weekday};

    use super::*;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    fn field_error(expression: &str) -> (&'static str, String) {
        match CronSchedule::parse(expression, "UTC") {
            Err(CronError::Field { field, value, .. }) => (field, value),
            other => panic!("{expression}: expected a field error, got {other:?}"),
        }
    }

    #[test]
    fn a_bad_field_is_named() {
        assert_eq!(field_error("61 * * * *"), ("minute", "61".to_owned()));
        assert_eq!(field_error("0 24 * * *"), ("hour", "24".to_owned()));
        assert_eq!(field_error("0 3 0 * *"), ("day-of-month", "0".to_owned()));
        assert_eq!(field_error("0 3 * 13 *"), ("month", "13".to_owned()));
        assert_eq!(field_error("0 3 * * 8"), ("day-of-week", "8".to_owned()));
        assert_eq!(
            field_error("0 3 * * MON-XYZ"),
            ("day-of-week", "MON-XYZ".to_owned())
        );
        assert_eq!(field_error("60 0 3 * * *"), ("second", "60".to_owned()));
        assert_eq!(field_error("*/0 * * * *"), ("minute", "*/0".to_owned()));
        assert_eq!(field_error("0 0 3 * * * 1900"), ("year", "1900".to_owned()));
        let message = CronSchedule::parse("61 * * * *", "UTC")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("minute") && message.contains("0-59"),
            "{message}"
        );
    }

    #[test]
    fn wrong_field_counts_and_zones_are_refused() {
        assert!(matches!(
            CronSchedule::parse("* * * *", "UTC"),
            Err(CronError::FieldCount { found: 4, .. })
        ));
        assert!(matches!(
            CronSchedule::parse("0 3 * * *", "Mars/Olympus"),
            Err(CronError::TimeZone(_))
        ));
        assert!(matches!(
            CronSchedule::parse("0 0 30 2 *", "UTC"),
            Err(CronError::Never { .. })
        ));
    }

    #[test]
    fn daily_at_three_in_shanghai_is_nineteen_utc() {
        let cron = CronSchedule::parse("0 3 * * *", "Asia/Shanghai").unwrap();
        let next = cron.next_after(utc(2026, 3, 1, 0, 0, 0)).unwrap();
        assert_eq!(next, utc(2026, 3, 1, 19, 0, 0));
        assert_eq!(cron.next_after(next).unwrap(), utc(2026, 3, 2, 19, 0, 0));
    }

    #[test]
    fn latest_tick_includes_the_instant_itself() {
        let cron = CronSchedule::parse("0 3 * * *", "UTC").unwrap();
        let tick = utc(2026, 3, 5, 3, 0, 0);
        assert_eq!(cron.latest_at_or_before(tick), Some(tick));
        assert_eq!(
            cron.latest_at_or_before(tick - TimeDelta::milliseconds(1)),
            Some(utc(2026, 3, 4, 3, 0, 0))
        );
        assert_eq!(
            cron.latest_at_or_before(tick + TimeDelta::milliseconds(999)),
            Some(tick)
        );
    }

    #[test]
    fn the_latest_tick_is_found_in_the_last_year_a_schedule_includes() {
        // Found by the `cron` fuzz target: from February 1987, the `cron` crate's reverse
        // iteration skipped 1986 and answered the last tick of March 1984.
        let cron = CronSchedule::parse("1/5 * * * 3 * */2", "America/New_York").unwrap();
        let t = utc(1987, 2, 6, 17, 41, 57);
        // 23:59:56 on 31 March 1986, Eastern Standard Time.
        let latest = utc(1986, 4, 1, 4, 59, 56);
        assert_eq!(cron.latest_at_or_before(t), Some(latest));
        assert_eq!(cron.next_after(latest), cron.next_after(t));
        let yearly = CronSchedule::parse("0 0 3 1 12 * 2090,2092", "UTC").unwrap();
        let due = yearly.due(utc(2092, 11, 1, 0, 0, 0), utc(2093, 1, 5, 0, 0, 0));
        assert_eq!(due.map(|d| d.at), Some(utc(2092, 12, 1, 3, 0, 0)));
    }

    #[test]
    fn a_day_of_week_step_past_the_week_is_the_first_day_alone() {
        // A step near u32::MAX overflowed the day counter (a panic with overflow checks,
        // Friday to Sunday without); replayed through the `cron` fuzz target.
        let fridays = CronSchedule::parse("0 0 * * 5/4294967295", "UTC").unwrap();
        let days: Vec<Weekday> = fridays
            .upcoming(utc(2026, 3, 1, 0, 0, 0), 3)
            .iter()
            .map(|t| t.weekday())
            .collect();
        assert_eq!(days, [Weekday::Fri; 3]);
        assert!(CronSchedule::parse("0 0 * * 1-7/4294967290", "UTC").is_ok());
    }

    #[test]
    fn day_of_week_numbers_are_crontab_numbers() {
        // 2026-03-02 is a Monday.
        let monday = CronSchedule::parse("0 9 * * 1", "UTC").unwrap();
        let t = monday.next_after(utc(2026, 3, 1, 0, 0, 0)).unwrap();
        assert_eq!(t.weekday(), Weekday::Mon);
        for sunday in ["0 9 * * 0", "0 9 * * 7", "0 9 * * sun", "0 0 9 * * Sunday"] {
            let cron = CronSchedule::parse(sunday, "UTC").unwrap();
            let t = cron.next_after(utc(2026, 3, 2, 0, 0, 0)).unwrap();
            assert_eq!(t.weekday(), Weekday::Sun, "{sunday}");
        }
        let weekdays = CronSchedule::parse("0 9 * * 1-5", "UTC").unwrap();
        let days: Vec<Weekday> = weekdays
            .upcoming(utc(2026, 3, 1, 0, 0, 0), 7)
            .iter()
            .map(|t| t.weekday())
            .collect();
        assert_eq!(
            days,
            [
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
                Weekday::Mon,
                Weekday::Tue
            ]
        );
        let weekend = CronSchedule::parse("0 9 * * 6-7", "UTC").unwrap();
        let days: Vec<Weekday> = weekend
            .upcoming(utc(2026, 3, 1, 0, 0, 0), 3)
            .iter()
            .map(|t| t.weekday())
            .collect();
        assert_eq!(days, [Weekday::Sun, Weekday::Sat, Weekday::Sun]);
    }

    #[test]
    fn restricted_month_day_and_week_day_fire_on_either() {
        // The 15th of each month and every Monday (2026-03: Mondays 2, 9, 16...).
        let cron = CronSchedule::parse("0 3 15 * 1", "UTC").unwrap();
        let days: Vec<u32> = cron
            .upcoming(utc(2026, 3, 1, 0, 0, 0), 4)
            .iter()
            .map(|t| t.day())
            .collect();
        assert_eq!(days, [2, 9, 15, 16]);
    }

    #[test]
    fn seconds_form_and_shortcuts_parse() {
        let every_two = CronSchedule::parse("*/2 * * * * *", "UTC").unwrap();
        let t = every_two.next_after(utc(2026, 3, 1, 0, 0, 1)).unwrap();
        assert_eq!((t.minute(), t.second()), (0, 2));
        let daily = CronSchedule::parse("@daily", "UTC").unwrap();
        assert_eq!(
            daily.next_after(utc(2026, 3, 1, 0, 0, 1)).unwrap(),
            utc(2026, 3, 2, 0, 0, 0)
        );
    }

    #[test]
    fn due_fires_the_latest_missed_tick_once() {
        let cron = CronSchedule::parse("0 3 * * *", "UTC").unwrap();
        let since = utc(2026, 3, 1, 3, 0, 0);
        assert_eq!(cron.due(since, utc(2026, 3, 2, 2, 59, 59)), None);
        assert_eq!(
            cron.due(since, utc(2026, 3, 2, 3, 0, 10)),
            Some(DueTick {
                at: utc(2026, 3, 2, 3, 0, 0),
                missed: 0
            })
        );
        assert_eq!(
            cron.due(since, utc(2026, 3, 4, 12, 0, 0)),
            Some(DueTick {
                at: utc(2026, 3, 4, 3, 0, 0),
                missed: 2
            })
        );
    }

    #[test]
    fn dst_gaps_are_skipped_and_repeated_hours_fire_once() {
        // New York: 2026-03-08 02:00 does not exist; 2026-11-01 01:30 exists twice.
        let gap = CronSchedule::parse("30 2 * * *", "America/New_York").unwrap();
        let ticks = gap.upcoming(utc(2026, 3, 7, 0, 0, 0), 2);
        assert_eq!(ticks[0], utc(2026, 3, 7, 7, 30, 0));
        assert!(ticks[1] >= utc(2026, 3, 9, 0, 0, 0), "{ticks:?}");
        let repeated = CronSchedule::parse("30 1 * * *", "America/New_York").unwrap();
        let first = repeated.next_after(utc(2026, 11, 1, 0, 0, 0)).unwrap();
        assert_eq!(first, utc(2026, 11, 1, 5, 30, 0));
        // Fired at its first occurrence, the second one is not due again.
        assert_eq!(repeated.due(first, utc(2026, 11, 1, 6, 45, 0)), None);
    }
}
