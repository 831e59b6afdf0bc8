//! CPU time of processes from `/proc`, so each client's run can say how much CPU it and the
//! server spent per request, and the load average the run was taken under.

use std::process::Command;
use std::sync::OnceLock;

/// Clock ticks per second (`getconf CLK_TCK`, 100 on every Linux this runs on).
fn ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .filter(|&t: &f64| t > 0.0)
            .unwrap_or(100.0)
    })
}

/// The numeric fields of `/proc/PID/stat` from field 4 (`ppid`, index 0) on.
fn stat_fields(pid: &str) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(
        rest.split_whitespace()
            .skip(1)
            .map(|f| f.parse::<i64>().map_or(0, |v| v.max(0) as u64))
            .collect(),
    )
}

/// utime + stime of `pid` (all its threads), in seconds.
pub fn process_seconds(pid: u32) -> Option<f64> {
    own_seconds(&pid.to_string())
}

fn own_seconds(pid: &str) -> Option<f64> {
    let fields = stat_fields(pid)?;
    // ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    // cstime: utime and stime are indexes 10 and 11.
    Some((fields.get(10)? + fields.get(11)?) as f64 / ticks_per_second())
}

/// CPU seconds of this process (every thread).
pub fn self_seconds() -> f64 {
    own_seconds("self").unwrap_or(0.0)
}

/// CPU seconds of this process's children that have exited and been waited for.
pub fn waited_children_seconds() -> f64 {
    stat_fields("self")
        .and_then(|f| Some((f.get(12)? + f.get(13)?) as f64 / ticks_per_second()))
        .unwrap_or(0.0)
}

/// Pids whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            stat_fields(&pid.to_string())
                .and_then(|f| f.first().copied())
                .is_some_and(|ppid| ppid == u64::from(parent))
        })
        .collect()
}

/// The 1-minute load average.
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_and_children_are_read_from_proc() {
        let start = self_seconds();
        let begin = std::time::Instant::now();
        let mut x = 0u64;
        while self_seconds() <= start && begin.elapsed() < std::time::Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        assert!(self_seconds() > start, "a busy loop never showed in utime");
        let me = std::process::id();
        let child = Command::new("sleep").arg("2").spawn().unwrap();
        let children = children_of(me);
        let mut child = child;
        let id = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(children.contains(&id), "{children:?} lacks {id}");
        assert!(load_average() >= 0.0);
    }
}
