//! `wrk`, the HTTP load generator, as the reference: how many requests per second the server
//! answers at a given number of connections when the client does nothing but send requests and
//! read responses.
//!
//! A Lua script cycles every thread through the site's paths (each thread starting at another
//! offset), so wrk asks for every page like the crawler does rather than for one hot URL.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The figures read from wrk's report.
#[derive(Debug, Clone, PartialEq)]
pub struct WrkReport {
    /// `Requests/sec:`.
    pub requests_per_s: f64,
    /// Requests completed (`N requests in …`).
    pub requests: u64,
    /// Responses with a status other than 2xx or 3xx.
    pub non_2xx: u64,
    /// Socket errors of every kind (connect, read, write, timeout).
    pub socket_errors: u64,
}

/// The Lua script: reads the paths (one per line) from `paths_file`.
pub fn script(paths_file: &Path) -> String {
    let quoted = paths_file
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        r#"-- Cycles through every page path of the site; each thread starts at another offset.
local paths = {{}}
for line in io.lines("{quoted}") do
  paths[#paths + 1] = line
end
local threads = 0
function setup(thread)
  thread:set("thread_index", threads)
  threads = threads + 1
end
local i = 0
function init(args)
  i = (thread_index or 0) * 7919 % #paths
end
function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
"#
    )
}

/// Runs `wrk` against `url` with the script at `script_file`.
pub fn run(
    wrk: &str,
    url: &str,
    script_file: &Path,
    threads: usize,
    connections: usize,
    seconds: u64,
) -> Result<WrkReport> {
    let output = Command::new(wrk)
        .arg("-t")
        .arg(threads.to_string())
        .arg("-c")
        .arg(connections.to_string())
        .arg("-d")
        .arg(format!("{seconds}s"))
        .arg("-s")
        .arg(script_file)
        .arg(url)
        .output()
        .with_context(|| format!("cannot run {wrk} (apt-get install wrk)"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "wrk failed ({}): {}{}",
            output.status,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    parse(&stdout)
}

/// Reads wrk's report.
pub fn parse(text: &str) -> Result<WrkReport> {
    let mut report = WrkReport {
        requests_per_s: f64::NAN,
        requests: 0,
        non_2xx: 0,
        socket_errors: 0,
    };
    let mut found_requests = false;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("Requests/sec:") {
            report.requests_per_s = rest
                .trim()
                .parse()
                .with_context(|| format!("bad Requests/sec line {line:?}"))?;
        } else if let Some(rest) = line.strip_prefix("Non-2xx or 3xx responses:") {
            report.non_2xx = rest.trim().parse().context("bad Non-2xx line")?;
        } else if let Some(rest) = line.strip_prefix("Socket errors:") {
            // `Socket errors: connect 0, read 3, write 0, timeout 0`
            for part in rest.split(',') {
                let count = part.split_whitespace().nth(1).unwrap_or("0");
                report.socket_errors += count.parse::<u64>().context("bad Socket errors line")?;
            }
        } else if let Some((count, _)) = line.split_once(" requests in ") {
            report.requests = count.trim().parse().context("bad request count line")?;
            found_requests = true;
        }
    }
    if report.requests_per_s.is_nan() || !found_requests {
        bail!("no Requests/sec or request count in wrk's output:\n{text}");
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str = "Running 10s test @ http://127.0.0.1:40123/
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   480.12us  310.50us  12.01ms   91.20%
    Req/Sec    16.80k     1.20k   19.30k    70.50%
  334567 requests in 10.00s, 2.81GB read
Requests/sec:  33452.71
Transfer/sec:    287.61MB
";

    #[test]
    fn a_clean_report_is_read() {
        let report = parse(CLEAN).unwrap();
        assert_eq!(report.requests_per_s, 33452.71);
        assert_eq!(report.requests, 334_567);
        assert_eq!(report.non_2xx, 0);
        assert_eq!(report.socket_errors, 0);
    }

    #[test]
    fn errors_and_bad_statuses_are_counted() {
        let text = CLEAN.replace(
            "Requests/sec:",
            "  Socket errors: connect 0, read 3, write 1, timeout 2\n  \
             Non-2xx or 3xx responses: 17\nRequests/sec:",
        );
        let report = parse(&text).unwrap();
        assert_eq!(report.socket_errors, 6);
        assert_eq!(report.non_2xx, 17);
    }

    #[test]
    fn output_without_figures_is_an_error() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused\n").is_err());
    }

    #[test]
    fn the_script_reads_the_paths_file() {
        let script = script(Path::new("/tmp/a \"b\"/paths.txt"));
        assert!(
            script.contains(r#"io.lines("/tmp/a \"b\"/paths.txt")"#),
            "{script}"
        );
    }
}
