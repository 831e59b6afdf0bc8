//! Statistics for analysts: what the store aggregates in SQL, completed with what SQL cannot do
//! on both backends alike (medians, registered domains, distributions), and the per-chapter
//! view computed from the matches' chapters (the store's one rule for naming a chapter).
//!
//! Everything here is a pure function of store records, so the CLI, the web and the exports
//! present the same numbers.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use copytrace_store::{
    CopyLifetime, FirstCopy, Id, MatchRecord, MatchStatus, Notice, NoticeStatus, SiteStats,
    WorkStats,
};
use serde::Serialize;

/// Copies of one work, with its time to piracy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkRow {
    /// What the store counted.
    #[serde(flatten)]
    pub stats: WorkStats,
    /// Hours from publication to its first copy; `None` when its publication time is unknown
    /// (see [`hours_after_publication`]).
    pub hours_to_first_copy: Option<f64>,
}

/// Work rows with their time to piracy, most pages first (then by work id), at most `top`.
pub fn work_rows(stats: Vec<WorkStats>, top: Option<usize>) -> Vec<WorkRow> {
    let mut rows: Vec<WorkRow> = stats
        .into_iter()
        .map(|stats| WorkRow {
            hours_to_first_copy: hours_after_publication(stats.published_at, stats.first_seen),
            stats,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.stats
            .pages
            .cmp(&a.stats.pages)
            .then(a.stats.work_id.cmp(&b.stats.work_id))
    });
    rows.truncate(top.unwrap_or(usize::MAX));
    rows
}

/// Copies of one chapter of a work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChapterRow {
    /// The work.
    pub work_id: Id,
    /// Its identifier.
    pub work_external_id: String,
    /// The chapter's position, from 1.
    pub chapter: u32,
    /// Its title.
    pub title: String,
    /// Pages copying it.
    pub pages: u64,
    /// Hosts copying it.
    pub sites: u64,
    /// Best score of those pages' matches.
    pub best_score: f64,
    /// Largest share of the chapter copied on one page.
    pub best_coverage: f64,
    /// When a copy was first seen.
    pub first_seen: DateTime<Utc>,
    /// When a copy was last seen.
    pub last_seen: DateTime<Utc>,
    /// Copies still online.
    pub online: u64,
    /// Copies found removed.
    pub removed: u64,
}

/// Per-chapter copies, from matches listed with their chapters (each match names the chapters
/// it copies by the store's rule), by work then chapter, at most `top` (most pages first).
pub fn chapter_rows<'a>(
    records: impl IntoIterator<Item = &'a MatchRecord>,
    top: Option<usize>,
) -> Vec<ChapterRow> {
    struct Acc {
        row: ChapterRow,
        pages: BTreeSet<Id>,
        sites: BTreeSet<String>,
    }
    let mut chapters: BTreeMap<(Id, u32), Acc> = BTreeMap::new();
    for record in records {
        let host = host_of(&record.page_url);
        for copy in &record.chapters {
            let acc = chapters
                .entry((record.work_id, copy.ordinal))
                .or_insert_with(|| Acc {
                    row: ChapterRow {
                        work_id: record.work_id,
                        work_external_id: record.work_external_id.clone(),
                        chapter: copy.ordinal + 1,
                        title: copy.title.clone(),
                        pages: 0,
                        sites: 0,
                        best_score: 0.0,
                        best_coverage: 0.0,
                        first_seen: record.first_seen,
                        last_seen: record.last_seen,
                        online: 0,
                        removed: 0,
                    },
                    pages: BTreeSet::new(),
                    sites: BTreeSet::new(),
                });
            acc.pages.insert(record.page_id);
            acc.sites.insert(host.clone());
            let row = &mut acc.row;
            row.best_score = row.best_score.max(record.score);
            row.best_coverage = row.best_coverage.max(copy.coverage.min(1.0));
            row.first_seen = row.first_seen.min(record.first_seen);
            row.last_seen = row.last_seen.max(record.last_seen);
            if record.status == MatchStatus::Removed {
                row.removed += 1;
            } else {
                row.online += 1;
            }
        }
    }
    let mut rows: Vec<ChapterRow> = chapters
        .into_values()
        .map(|mut acc| {
            acc.row.pages = acc.pages.len() as u64;
            acc.row.sites = acc.sites.len() as u64;
            acc.row
        })
        .collect();
    if let Some(top) = top {
        rows.sort_by(|a, b| {
            b.pages
                .cmp(&a.pages)
                .then((a.work_id, a.chapter).cmp(&(b.work_id, b.chapter)))
        });
        rows.truncate(top);
    }
    rows
}

/// Copies on one site, or on every host of one registered domain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteRow {
    /// The host, or the registered domain (`example.co.uk` for `m.example.co.uk`).
    pub site: String,
    /// Hosts counted in this row (1 unless grouped by domain).
    pub hosts: u64,
    /// Pages carrying a copy.
    pub pages: u64,
    /// Works copied.
    pub works: u64,
    /// Copies (page × work matches).
    pub copies: u64,
    /// Copies found removed.
    pub removed: u64,
    /// Copies with a notice sent, not yet found removed.
    pub notice_sent: u64,
    /// `removed / copies`.
    pub removal_rate: f64,
    /// Median hours from first seen to found removed, over removed copies.
    pub median_hours_to_removal: Option<f64>,
    /// Median hours a copy was seen online (to its removal, or to when it was last seen).
    pub median_hours_online: Option<f64>,
    /// When its first copy was seen.
    pub first_seen: DateTime<Utc>,
    /// When a copy was last seen.
    pub last_seen: DateTime<Utc>,
}

/// How [`site_rows`] groups hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SiteGrouping {
    /// One row per host.
    #[default]
    Host,
    /// One row per registered domain (public suffix list): the hosts of one operator.
    Domain,
}

/// Site rows from the store's per-host counts and the copies' lifetimes, most copies first
/// (then by name), at most `top`.
pub fn site_rows(
    sites: Vec<SiteStats>,
    lifetimes: &[(String, CopyLifetime)],
    grouping: SiteGrouping,
    top: Option<usize>,
) -> Vec<SiteRow> {
    let key = |host: &str| match grouping {
        SiteGrouping::Host => host.to_owned(),
        SiteGrouping::Domain => registered_domain(host),
    };
    let mut rows: BTreeMap<String, SiteRow> = BTreeMap::new();
    for site in sites {
        let name = key(&site.host);
        let row = rows.entry(name.clone()).or_insert_with(|| SiteRow {
            site: name,
            hosts: 0,
            pages: 0,
            works: 0,
            copies: 0,
            removed: 0,
            notice_sent: 0,
            removal_rate: 0.0,
            median_hours_to_removal: None,
            median_hours_online: None,
            first_seen: site.first_seen,
            last_seen: site.last_seen,
        });
        row.hosts += 1;
        row.pages += site.pages;
        row.works += site.works;
        row.copies += site.copies;
        row.removed += site.removed;
        row.notice_sent += site.notice_sent;
        row.first_seen = row.first_seen.min(site.first_seen);
        row.last_seen = row.last_seen.max(site.last_seen);
    }
    // Lifetimes give the medians and, for domains, the distinct works (a work copied on two
    // hosts of one domain is one work there).
    /// Hours to removal, hours online, and works, of one row's copies.
    type Lifetimes = (Vec<f64>, Vec<f64>, BTreeSet<Id>);
    let mut durations: HashMap<String, Lifetimes> = HashMap::new();
    for (host, life) in lifetimes {
        let (to_removal, online, works) = durations.entry(key(host)).or_default();
        if let Some(removed_at) = life.removed_at {
            to_removal.push(hours(life.first_seen, removed_at));
        }
        online.push(hours(
            life.first_seen,
            life.removed_at.unwrap_or(life.last_seen),
        ));
        works.insert(life.work_id);
    }
    let mut rows: Vec<SiteRow> = rows
        .into_values()
        .map(|mut row| {
            if let Some((to_removal, online, works)) = durations.get_mut(&row.site) {
                row.median_hours_to_removal = median(to_removal);
                row.median_hours_online = median(online);
                if grouping == SiteGrouping::Domain {
                    row.works = works.len() as u64;
                }
            }
            row.removal_rate = if row.copies == 0 {
                0.0
            } else {
                row.removed as f64 / row.copies as f64
            };
            row
        })
        .collect();
    rows.sort_by(|a, b| b.copies.cmp(&a.copies).then(a.site.cmp(&b.site)));
    rows.truncate(top.unwrap_or(usize::MAX));
    rows
}

/// How one site answered takedown notices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeRow {
    /// The site notices were addressed to.
    pub site: String,
    /// Notices sent (drafts are not counted).
    pub sent: u64,
    /// Of those, every copy found removed.
    pub removal_verified: u64,
    /// Of those, some copies found removed.
    pub partially_removed: u64,
    /// Of those, marked ignored.
    pub ignored: u64,
    /// Share of sent notices with at least one copy removed.
    pub response_rate: f64,
    /// Median hours from sending to the check that verified the removal.
    pub median_hours_to_removal: Option<f64>,
    /// Of those, still awaiting follow-up ([`awaiting_follow_up`]): not all their copies
    /// removed, and neither verified removed nor escalated.
    pub awaiting_follow_up: u64,
}

/// Whether `notice` awaits follow-up: it was sent, not every copy it lists is found removed,
/// and it is sent, acknowledged, partially removed or ignored (not escalated or delisting:
/// past the site, at the host, CDN and search engines). The notices `copytrace notice
/// follow-up` reminds and escalates, and what `stats notices` and the weekly report count as
/// awaiting follow-up: one rule.
pub fn awaiting_follow_up(notice: &Notice) -> bool {
    matches!(
        notice.status,
        NoticeStatus::Sent
            | NoticeStatus::Acknowledged
            | NoticeStatus::PartiallyRemoved
            | NoticeStatus::Ignored
    ) && notice.removed < notice.match_ids.len() as u64
        && notice.sent_at.is_some()
}

/// Per site: notices sent and how the site responded, most notices first.
pub fn notice_rows(notices: &[Notice]) -> Vec<NoticeRow> {
    let mut rows: BTreeMap<String, (NoticeRow, Vec<f64>)> = BTreeMap::new();
    for notice in notices {
        let Some(sent_at) = notice.sent_at else {
            continue;
        };
        let (row, delays) = rows.entry(notice.site.clone()).or_insert_with(|| {
            (
                NoticeRow {
                    site: notice.site.clone(),
                    sent: 0,
                    removal_verified: 0,
                    partially_removed: 0,
                    ignored: 0,
                    response_rate: 0.0,
                    median_hours_to_removal: None,
                    awaiting_follow_up: 0,
                },
                Vec::new(),
            )
        });
        row.sent += 1;
        if awaiting_follow_up(notice) {
            row.awaiting_follow_up += 1;
        }
        match notice.status {
            NoticeStatus::RemovalVerified => {
                row.removal_verified += 1;
                if let Some(at) = notice.status_changed_at {
                    delays.push(hours(sent_at, at));
                }
            }
            NoticeStatus::PartiallyRemoved => row.partially_removed += 1,
            NoticeStatus::Ignored => row.ignored += 1,
            // Still waiting for the site (escalated ones too): counted as sent only.
            NoticeStatus::Draft
            | NoticeStatus::Sending
            | NoticeStatus::Sent
            | NoticeStatus::Acknowledged
            | NoticeStatus::Escalated
            | NoticeStatus::Delisting => {}
        }
    }
    let mut rows: Vec<NoticeRow> = rows
        .into_values()
        .map(|(mut row, mut delays)| {
            row.response_rate =
                (row.removal_verified + row.partially_removed) as f64 / row.sent as f64;
            row.median_hours_to_removal = median(&mut delays);
            row
        })
        .collect();
    rows.sort_by(|a, b| b.sent.cmp(&a.sent).then(a.site.cmp(&b.site)));
    rows
}

/// Hours from a work's publication to a copy of it first seen at `first_seen` (negative when
/// the copy was seen before the recorded publication), or `None` when the publication time is
/// unknown (the catalog gave no `published_at`): the one place time to piracy is computed, so
/// that every view (CLI, exports, web, API) agrees.
///
/// The time the work was added to the library is not a stand-in: a work added after it was
/// published would look pirated "0.0 h after publication" by any copy found on the first
/// crawl, and pull every average towards zero.
pub fn hours_after_publication(
    published_at: Option<DateTime<Utc>>,
    first_seen: DateTime<Utc>,
) -> Option<f64> {
    published_at.map(|published| hours(published, first_seen))
}

/// Time from a work's publication to its first copies: per work (its first copy anywhere),
/// per site (first copies there), and the distribution over works. Works whose publication
/// time is unknown are in `copies` (without hours) and counted apart, in
/// `publication_unknown`, never in the delays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeToPiracy {
    /// One row per work × site: the chart-ready series.
    pub copies: Vec<FirstCopyRow>,
    /// Per work with a known publication time: hours to its first copy anywhere.
    pub works: Vec<DelayRow>,
    /// Per site: the median hours to a work's first copy there, over works with a known
    /// publication time.
    pub sites: Vec<DelayRow>,
    /// Over works with a known publication time (their first copy anywhere).
    pub overall: Distribution,
    /// External ids of the copied works whose publication time is unknown, by work id: left
    /// out of `works`, `sites` and `overall`.
    pub publication_unknown: Vec<String>,
}

/// The first copy of a work on a site.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstCopyRow {
    /// The work.
    pub work_id: Id,
    /// Its identifier.
    pub work_external_id: String,
    /// The site.
    pub site: String,
    /// Publication time (catalog); `None` when unknown.
    pub published_at: Option<DateTime<Utc>>,
    /// When the first copy there was seen.
    pub first_copy_at: DateTime<Utc>,
    /// Hours between them (negative when the copy was seen before the recorded publication);
    /// `None` when the publication time is unknown.
    pub hours: Option<f64>,
}

/// A delay for one work or one site.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelayRow {
    /// The work's identifier, or the site.
    pub key: String,
    /// Hours (for a site: the median over its works).
    pub hours: f64,
    /// Works counted.
    pub works: u64,
}

/// A distribution of delays, in hours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// How many delays.
    pub count: u64,
    /// 10th percentile.
    pub p10: Option<f64>,
    /// Median.
    pub median: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// How many within an hour, a day, a week, a month, and later: `(label, count)`.
    pub buckets: Vec<(String, u64)>,
}

/// Which works' time to piracy is asked for, by when they were published: works published in
/// `[since, until)`, and works whose publication time is unknown that entered the library in
/// it (they are new works too, and are shown as "publication time unknown", never as a
/// delay). `None` bounds are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublishedWindow {
    /// From (inclusive).
    pub since: Option<DateTime<Utc>>,
    /// To (exclusive).
    pub until: Option<DateTime<Utc>>,
}

impl PublishedWindow {
    /// Whether the work of `copy` falls in the window (see [`PublishedWindow`]).
    pub fn contains(&self, copy: &FirstCopy) -> bool {
        let at = copy.published_at.unwrap_or(copy.created_at);
        self.since.is_none_or(|since| at >= since) && self.until.is_none_or(|until| at < until)
    }
}

/// Time to piracy from the store's first copies per work and site.
pub fn time_to_piracy(first_copies: Vec<FirstCopy>) -> TimeToPiracy {
    time_to_piracy_of(first_copies, &PublishedWindow::default())
}

/// [`time_to_piracy`] of the works `published` names only.
pub fn time_to_piracy_of(
    first_copies: Vec<FirstCopy>,
    published: &PublishedWindow,
) -> TimeToPiracy {
    let copies: Vec<FirstCopyRow> = first_copies
        .into_iter()
        .filter(|c| published.contains(c))
        .map(|c| FirstCopyRow {
            work_id: c.work_id,
            work_external_id: c.external_id,
            hours: hours_after_publication(c.published_at, c.first_seen),
            site: c.host,
            published_at: c.published_at,
            first_copy_at: c.first_seen,
        })
        .collect();
    let mut per_work: BTreeMap<Id, (String, f64)> = BTreeMap::new();
    let mut per_site: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut unknown: BTreeMap<Id, String> = BTreeMap::new();
    for copy in &copies {
        let Some(hours) = copy.hours else {
            unknown.insert(copy.work_id, copy.work_external_id.clone());
            continue;
        };
        let entry = per_work
            .entry(copy.work_id)
            .or_insert_with(|| (copy.work_external_id.clone(), hours));
        entry.1 = entry.1.min(hours);
        per_site.entry(copy.site.clone()).or_default().push(hours);
    }
    let mut work_hours: Vec<f64> = per_work.values().map(|(_, h)| *h).collect();
    let overall = distribution(&mut work_hours);
    TimeToPiracy {
        works: per_work
            .into_values()
            .map(|(key, hours)| DelayRow {
                key,
                hours,
                works: 1,
            })
            .collect(),
        sites: per_site
            .into_iter()
            .map(|(key, mut delays)| DelayRow {
                key,
                works: delays.len() as u64,
                hours: median(&mut delays).unwrap_or(0.0),
            })
            .collect(),
        copies,
        overall,
        publication_unknown: unknown.into_values().collect(),
    }
}

/// Percentiles and buckets of `delays` (hours).
pub fn distribution(delays: &mut [f64]) -> Distribution {
    const BUCKETS: [(&str, f64); 4] = [
        ("under 1 hour", 1.0),
        ("under 1 day", 24.0),
        ("under 1 week", 168.0),
        ("under 30 days", 720.0),
    ];
    let mut buckets: Vec<(String, u64)> = BUCKETS
        .iter()
        .map(|(label, _)| ((*label).to_owned(), 0))
        .collect();
    buckets.push(("30 days or more".to_owned(), 0));
    for &delay in delays.iter() {
        let index = BUCKETS
            .iter()
            .position(|(_, limit)| delay < *limit)
            .unwrap_or(BUCKETS.len());
        buckets[index].1 += 1;
    }
    Distribution {
        count: delays.len() as u64,
        p10: percentile(delays, 0.1),
        median: median(delays),
        p90: percentile(delays, 0.9),
        buckets,
    }
}

/// The median (mean of the two middle values for an even count); `None` when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The `q` quantile by linear interpolation between closest ranks; `None` when empty.
pub fn percentile(values: &mut [f64], q: f64) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let last = values.len().checked_sub(1)?;
    let rank = q.clamp(0.0, 1.0) * last as f64;
    let (low, high) = (rank.floor() as usize, rank.ceil() as usize);
    Some(values[low] + (values[high] - values[low]) * (rank - low as f64))
}

/// Hours from `from` to `to`.
pub fn hours(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_seconds() as f64 / 3600.0
}

/// The registered domain of a host (`m.pirate.co.uk:8080` → `pirate.co.uk`), or the host itself
/// (without port) when it has none (an IP address, `localhost`).
pub fn registered_domain(host: &str) -> String {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    if name.parse::<std::net::IpAddr>().is_ok() || name.starts_with('[') {
        return name.to_owned();
    }
    psl::domain_str(name).unwrap_or(name).to_owned()
}

/// The host of a page URL (as sites are stored), or the URL when it has none.
fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(port) => format!("{h}:{port}"),
                None => h.to_owned(),
            })
        })
        .unwrap_or_else(|| url.to_owned())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(hours: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap() + chrono::Duration::hours(hours)
    }

    #[test]
    fn medians_and_percentiles_by_hand() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let mut ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&mut ten, 0.1), Some(1.9));
        assert_eq!(percentile(&mut ten, 0.9), Some(9.1));
        assert_eq!(percentile(&mut [7.0], 0.9), Some(7.0));
    }

    #[test]
    fn registered_domains_follow_the_public_suffix_list() {
        assert_eq!(registered_domain("m.pirate.example.co.uk"), "example.co.uk");
        assert_eq!(registered_domain("www.biquge.com.cn:8080"), "biquge.com.cn");
        assert_eq!(registered_domain("127.0.0.1:8080"), "127.0.0.1");
    }

    fn site(host: &str, copies: u64, removed: u64) -> SiteStats {
        SiteStats {
            host: host.to_owned(),
            pages: copies,
            works: 1,
            copies,
            removed,
            notice_sent: 0,
            first_seen: at(0),
            last_seen: at(10),
        }
    }

    fn life(work_id: Id, first: i64, last: i64, removed: Option<i64>) -> CopyLifetime {
        CopyLifetime {
            work_id,
            first_seen: at(first),
            last_seen: at(last),
            removed_at: removed.map(at),
        }
    }

    #[test]
    fn sites_group_by_domain_with_medians_of_their_copies() {
        let sites = vec![
            site("a.pirate.com", 2, 1),
            site("b.pirate.com", 2, 1),
            site("other.org", 1, 0),
        ];
        let lifetimes = vec![
            ("a.pirate.com".to_owned(), life(1, 0, 5, Some(10))),
            ("a.pirate.com".to_owned(), life(2, 0, 30, None)),
            ("b.pirate.com".to_owned(), life(1, 0, 4, Some(30))),
            ("b.pirate.com".to_owned(), life(3, 10, 20, None)),
            ("other.org".to_owned(), life(1, 0, 48, None)),
        ];
        let rows = site_rows(sites.clone(), &lifetimes, SiteGrouping::Domain, None);
        assert_eq!(rows.len(), 2);
        let pirate = &rows[0];
        assert_eq!(
            (
                pirate.site.as_str(),
                pirate.hosts,
                pirate.copies,
                pirate.removed,
                pirate.works
            ),
            ("pirate.com", 2, 4, 2, 3)
        );
        assert_eq!(pirate.removal_rate, 0.5);
        // Removed after 10 and 30 hours; online 10, 30, 30, 10 hours.
        assert_eq!(pirate.median_hours_to_removal, Some(20.0));
        assert_eq!(pirate.median_hours_online, Some(20.0));
        assert_eq!(rows[1].median_hours_to_removal, None);
        assert_eq!(rows[1].median_hours_online, Some(48.0));

        let by_host = site_rows(sites, &lifetimes, SiteGrouping::Host, Some(1));
        assert_eq!(by_host.len(), 1, "top 1");
        assert_eq!(by_host[0].site, "a.pirate.com", "most copies, then by name");
        assert_eq!(by_host[0].median_hours_to_removal, Some(10.0));
    }

    #[test]
    fn notice_response_rates_count_sent_notices_only() {
        let notice = |site: &str, status, sent: Option<i64>, changed: Option<i64>| Notice {
            id: 1,
            rights_holder_id: 1,
            site: site.to_owned(),
            lang: "zh".to_owned(),
            status,
            body: String::new(),
            created_at: at(0),
            sent_at: sent.map(at),
            status_changed_at: changed.map(at),
            match_ids: vec![1],
            removed: 0,
        };
        let rows = notice_rows(&[
            notice(
                "a.example",
                NoticeStatus::RemovalVerified,
                Some(0),
                Some(10),
            ),
            notice(
                "a.example",
                NoticeStatus::RemovalVerified,
                Some(5),
                Some(35),
            ),
            notice("a.example", NoticeStatus::Ignored, Some(0), None),
            notice("a.example", NoticeStatus::Sent, Some(0), None),
            notice("a.example", NoticeStatus::Draft, None, None),
            notice(
                "b.example",
                NoticeStatus::PartiallyRemoved,
                Some(0),
                Some(3),
            ),
        ]);
        let a = &rows[0];
        assert_eq!(
            (a.site.as_str(), a.sent, a.removal_verified, a.ignored),
            ("a.example", 4, 2, 1)
        );
        // The ignored and the sent one still wait; verified removals and drafts do not.
        assert_eq!(a.awaiting_follow_up, 2);
        assert_eq!(rows[1].awaiting_follow_up, 1);
        assert_eq!(a.response_rate, 0.5);
        assert_eq!(a.median_hours_to_removal, Some(20.0));
        assert_eq!(
            (rows[1].response_rate, rows[1].median_hours_to_removal),
            (1.0, None)
        );
    }

    #[test]
    fn time_to_piracy_counts_only_works_whose_publication_time_is_known() {
        let copy = |work: Id, host: &str, published: Option<i64>, first: i64| FirstCopy {
            work_id: work,
            external_id: format!("w{work}"),
            host: host.to_owned(),
            published_at: published.map(at),
            created_at: at(100),
            first_seen: at(first),
        };
        let report = time_to_piracy(vec![
            copy(1, "a.example", Some(0), 2),
            copy(1, "b.example", Some(0), 30),
            copy(2, "a.example", None, 106),
            copy(3, "b.example", Some(0), 1_000),
        ]);
        let works: Vec<_> = report
            .works
            .iter()
            .map(|d| (d.key.as_str(), d.hours))
            .collect();
        // Work 2 has no publication time: its ingest time (6 h before the copy) is no
        // stand-in, so it is in no delay and is counted apart.
        assert_eq!(works, [("w1", 2.0), ("w3", 1_000.0)]);
        let sites: Vec<_> = report
            .sites
            .iter()
            .map(|d| (d.key.as_str(), d.hours, d.works))
            .collect();
        assert_eq!(sites, [("a.example", 2.0, 1), ("b.example", 515.0, 2)]);
        assert_eq!(report.overall.count, 2);
        assert_eq!(report.overall.median, Some(501.0));
        let buckets: Vec<u64> = report.overall.buckets.iter().map(|(_, n)| *n).collect();
        assert_eq!(buckets, [0, 1, 0, 0, 1]);
        assert_eq!(report.publication_unknown, ["w2"]);
        let unknown = &report.copies[2];
        assert_eq!((unknown.published_at, unknown.hours), (None, None));
        assert_eq!(report.copies[0].hours, Some(2.0));
    }

    #[test]
    fn a_published_window_takes_works_published_in_it_or_added_in_it_without_a_date() {
        let copy = |work: Id, published: Option<i64>, created: i64| FirstCopy {
            work_id: work,
            external_id: format!("w{work}"),
            host: "a.example".to_owned(),
            published_at: published.map(at),
            created_at: at(created),
            first_seen: at(200),
        };
        let window = PublishedWindow {
            since: Some(at(100)),
            until: Some(at(168)),
        };
        let report = time_to_piracy_of(
            vec![
                // Published in it (added to the library long before).
                copy(1, Some(150), 0),
                // Published before it, added in it: not a new work.
                copy(2, Some(10), 120),
                // Unknown publication, added in it: a new work, with no delay.
                copy(3, None, 110),
                // Unknown publication, added before it.
                copy(4, None, 50),
                // Published at its end (exclusive).
                copy(5, Some(168), 0),
            ],
            &window,
        );
        let works: Vec<_> = report
            .works
            .iter()
            .map(|d| (d.key.as_str(), d.hours))
            .collect();
        assert_eq!(works, [("w1", 50.0)]);
        assert_eq!(report.publication_unknown, ["w3"]);
        assert_eq!(report.overall.count, 1);
        assert_eq!(report.copies.len(), 2);
    }

    #[test]
    fn a_work_without_a_publication_time_has_no_time_to_piracy() {
        let work = |id: Id, published: Option<i64>| WorkStats {
            work_id: id,
            external_id: format!("w{id}"),
            title: format!("作品{id}"),
            rights_holder_id: 1,
            pages: 1,
            sites: 1,
            best_score: 1.0,
            mean_score: 1.0,
            best_coverage: 1.0,
            first_seen: at(30),
            last_seen: at(30),
            online: 1,
            removed: 0,
            published_at: published.map(at),
            created_at: at(30),
        };
        let rows = work_rows(vec![work(1, Some(0)), work(2, None)], None);
        let hours: Vec<_> = rows
            .iter()
            .map(|r| (r.stats.work_id, r.hours_to_first_copy))
            .collect();
        assert_eq!(hours, [(1, Some(30.0)), (2, None)]);
        assert_eq!(hours_after_publication(None, at(30)), None);
        assert_eq!(hours_after_publication(Some(at(40)), at(30)), Some(-10.0));
    }
}
