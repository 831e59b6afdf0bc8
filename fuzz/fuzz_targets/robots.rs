//! Arbitrary robots.txt bytes → the rules the crawler obeys.
//!
//! The crawler's robots.txt wrapper (`crawler/src/robots.rs`) is crate-private: it hands the
//! body to `texting_robots::Robot::new` with the product token of its User-Agent, asks
//! `allowed` with full URLs, and turns `delay` and `sitemaps` into a `Duration` and `Url`s.
//! This target makes exactly those calls, with the same conversions, on fuzzed files:
//!
//! * parsing refuses or succeeds, never panics; verdicts are deterministic;
//! * `/robots.txt` itself is always allowed, and an empty file allows everything;
//! * the crawl delay becomes a `Duration` without panicking (finite, positive, capped);
//! * a `Disallow: /` group for our token added to the file never makes a URL allowed that the
//!   file alone disallowed.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use texting_robots::Robot;
use url::Url;

/// The product token of a User-Agent, as `robots::product_token` takes it.
fn product_token(user_agent: &str) -> &str {
    let token = user_agent
        .split(|c: char| c == '/' || c.is_whitespace())
        .next()
        .unwrap_or("");
    if token.is_empty() { "*" } else { token }
}

const USER_AGENTS: [&str; 4] = [
    "CopytraceBot/0.1 (+https://example.invalid/copytrace)",
    "Mozilla/5.0 (compatible; Googlebot/2.1)",
    "",
    "copytracebot",
];

/// Paths every file is asked about, besides the fuzzed one.
const PATHS: [&str; 6] = [
    "/",
    "/book/1/2.html",
    "/private/x?y=1",
    "/%E7%AB%A0/%zz",
    "/a*b$",
    "/ü/章节.html",
];

fn verdicts(robot: &Robot, urls: &[String]) -> Vec<bool> {
    urls.iter().map(|url| robot.allowed(url)).collect()
}

fuzz_target!(|data: &[u8]| {
    let (head, body) = data.split_at(data.len().min(1));
    let selector = usize::from(head.first().copied().unwrap_or(0));
    let agent = product_token(USER_AGENTS[selector % USER_AGENTS.len()]);
    // The last line of the file, lossily decoded, is asked about too.
    let fuzzed_path = String::from_utf8_lossy(body.rsplit(|&b| b == b'\n').next().unwrap_or(b""));
    let mut urls: Vec<String> = PATHS
        .iter()
        .map(|path| format!("http://novel.example.cn{path}"))
        .collect();
    urls.push(format!("http://novel.example.cn/{fuzzed_path}"));
    // The crawler asks only about the http(s) URLs it would fetch.
    if let Ok(url) = Url::parse("http://novel.example.cn/").and_then(|base| base.join(&fuzzed_path))
        && matches!(url.scheme(), "http" | "https")
    {
        urls.push(url.to_string());
    }

    let Ok(robot) = Robot::new(agent, body) else {
        return;
    };
    let allowed = verdicts(&robot, &urls);
    assert_eq!(
        verdicts(&robot, &urls),
        allowed,
        "verdicts are deterministic"
    );
    assert!(robot.allowed("http://novel.example.cn/robots.txt"));

    // `HostRobots::crawl_delay` and `HostRobots::sitemaps`.
    if let Some(delay) = robot.delay.filter(|d| d.is_finite() && *d > 0.0) {
        let delay = Duration::from_secs_f64(f64::from(delay).min(86_400.0));
        assert!(delay <= Duration::from_secs(86_400));
    }
    let sitemaps: Vec<Url> = robot
        .sitemaps
        .iter()
        .filter_map(|s| Url::parse(s.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .collect();
    assert!(sitemaps.len() <= robot.sitemaps.len());

    // At the end: in front, rule lines the file starts with (before any User-agent line)
    // would join the added group.
    let mut stricter = body.to_vec();
    stricter.extend_from_slice(format!("\nUser-agent: {agent}\nDisallow: /\n").as_bytes());
    if let Ok(strict) = Robot::new(agent, &stricter) {
        for (url, (was, is)) in urls
            .iter()
            .zip(allowed.iter().zip(verdicts(&strict, &urls)))
        {
            assert!(
                !is || *was,
                "{url} allowed only after disallowing everything"
            );
        }
    }

    let empty = Robot::new(agent, b"").expect("an empty file parses");
    assert!(
        urls.iter().all(|url| empty.allowed(url)),
        "an empty file disallows"
    );
});
