//! The weekly report (issue 40): per rights holder (its works only) or for staff (every
//! holder's), the figures of one period as an HTML mail body, its plain-text alternative and
//! an XLSX workbook with one sheet per table.
//!
//! **One source of figures.** Nothing here counts: [`WeeklyReport`] is assembled from the rows
//! `copytrace stats … --json` prints for the same filters (`copytrace-service` calls the same
//! functions), and its totals are sums of those rows. [`WeeklyReport::summary`] names, for each
//! headline figure, the `stats` command it equals, and the workbook's `summary` sheet carries
//! those commands, so a reader can check any figure.
//!
//! **Periods are UTC days**, `[from, to)`, as `stats daily` counts days: new copies and
//! removals are those of the period; removal rates by site, pending reviews and notices
//! awaiting follow-up are as of the report, over the copies first seen before the period's
//! end. Time to piracy is of the works published in the period, and of works without a
//! publication time that entered the library in it, which are listed as "publication time
//! unknown" and never given a delay.
//!
//! The HTML is rendered by askama from `web/templates/reports/weekly.html`, which escapes every
//! value (site names and titles come from pirate sites).

use askama::Template;
use chrono::{DateTime, NaiveDate, Utc};
use copytrace_store::{DailyStats, HolderStats};
use serde::Serialize;

use crate::AnalyticsError;
use crate::export::{
    Cell, Column, ExportOptions, Table, TableRow, Workbook, daily_table, first_copy_table,
    holder_table, notice_table, site_table,
};
use crate::stats::{NoticeRow, SiteRow, TimeToPiracy};

/// One period's figures for one audience.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeeklyReport {
    /// The rights holder it is about, or `None` for the staff report (every holder).
    pub holder: Option<String>,
    /// Its language, `zh` or `en`.
    pub lang: String,
    /// First day of the period (UTC).
    pub period_from: NaiveDate,
    /// The day after its last.
    pub period_to: NaiveDate,
    /// When the figures were read.
    pub computed_at: DateTime<Utc>,
    /// New copies: reported infringements (page × work) first seen in the period, the sum of
    /// [`WeeklyReport::holders`]' copies.
    pub new_copies: u64,
    /// Copies found removed in the period: the sum of [`WeeklyReport::daily`]'s removals.
    pub removals: u64,
    /// Copies first seen before the period's end still waiting for review.
    pub pending_reviews: u64,
    /// Sent notices awaiting follow-up: the sum of [`WeeklyReport::notices`]' counts.
    pub notices_awaiting_follow_up: u64,
    /// New copies per rights holder (`stats holders` of the period).
    pub holders: Vec<HolderStats>,
    /// Per UTC day of the period (`stats daily`).
    pub daily: Vec<DailyStats>,
    /// Removal rate by site (registered domain), over copies first seen before the period's
    /// end (`stats sites --by-domain`).
    pub sites: Vec<SiteRow>,
    /// Time to piracy of the works published in the period (`stats time-to-piracy`).
    pub time_to_piracy: TimeToPiracy,
    /// Notices per site (`stats notices`).
    pub notices: Vec<NoticeRow>,
}

/// The rows a report is assembled from, each as `stats … --json` prints it.
#[derive(Debug, Clone)]
pub struct WeeklyRows {
    /// `stats holders --since FROM --until TO`.
    pub holders: Vec<HolderStats>,
    /// `stats holders --until TO` (its pending copies are the pending reviews).
    pub holders_to_date: Vec<HolderStats>,
    /// `stats daily --since FROM --until TO`.
    pub daily: Vec<DailyStats>,
    /// `stats sites --by-domain --until TO`.
    pub sites: Vec<SiteRow>,
    /// `stats time-to-piracy --until TO --published-since FROM --published-until TO`.
    pub time_to_piracy: TimeToPiracy,
    /// `stats notices`.
    pub notices: Vec<NoticeRow>,
}

/// One headline figure: what it is, its value, and the `stats` command it equals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Its key (`new_copies`, `removals`, …), as the summary sheet's first column.
    pub figure: &'static str,
    /// Its value; `None` when there is none (no median of no delay).
    pub value: Option<f64>,
    /// The command whose `--json` output gives it, and how.
    pub source: String,
}

impl TableRow for SummaryRow {
    fn cells(&self) -> Vec<Cell<'_>> {
        vec![
            Cell::text(self.figure),
            self.value.map_or(Cell::Empty, Cell::Float),
            Cell::text(&self.source),
        ]
    }
}

/// The workbook's first sheet: the headline figures and their sources.
pub fn summary_table() -> Table {
    Table::new(
        "summary",
        vec![
            Column::text("figure").width(28.0),
            Column::float("value").width(12.0),
            Column::text("source").width(100.0),
        ],
    )
}

impl WeeklyReport {
    /// The report of `rows` for `holder` (`None`: staff) over `[from, to)`, in `lang` (`zh`,
    /// anything else is English).
    pub fn new(
        holder: Option<String>,
        lang: &str,
        (period_from, period_to): (NaiveDate, NaiveDate),
        computed_at: DateTime<Utc>,
        rows: WeeklyRows,
    ) -> Self {
        WeeklyReport {
            holder,
            lang: if lang == "zh" { "zh" } else { "en" }.to_owned(),
            period_from,
            period_to,
            computed_at,
            new_copies: rows.holders.iter().map(|h| h.copies).sum(),
            removals: rows.daily.iter().map(|d| d.removals).sum(),
            pending_reviews: rows.holders_to_date.iter().map(|h| h.pending).sum(),
            notices_awaiting_follow_up: rows.notices.iter().map(|n| n.awaiting_follow_up).sum(),
            holders: rows.holders,
            daily: rows.daily,
            sites: rows.sites,
            time_to_piracy: rows.time_to_piracy,
            notices: rows.notices,
        }
    }

    /// The headline figures, each with the `stats` command it equals.
    pub fn summary(&self) -> Vec<SummaryRow> {
        let scope = match &self.holder {
            Some(name) => format!(" --rights-holder {}", shell_word(name)),
            None => String::new(),
        };
        let (from, to) = (self.period_from, self.period_to);
        let count = |n: u64| Some(n as f64);
        let ttp = &self.time_to_piracy;
        let ttp_command = format!(
            "copytrace stats time-to-piracy{scope} --until {to} --published-since {from} \
             --published-until {to} --json"
        );
        vec![
            SummaryRow {
                figure: "new_copies",
                value: count(self.new_copies),
                source: format!(
                    "copytrace stats holders{scope} --since {from} --until {to} --json: sum of \
                     copies"
                ),
            },
            SummaryRow {
                figure: "removals",
                value: count(self.removals),
                source: format!(
                    "copytrace stats daily{scope} --since {from} --until {to} --json: sum of \
                     removals"
                ),
            },
            SummaryRow {
                figure: "pending_reviews",
                value: count(self.pending_reviews),
                source: format!(
                    "copytrace stats holders{scope} --until {to} --json: sum of pending"
                ),
            },
            SummaryRow {
                figure: "notices_awaiting_follow_up",
                value: count(self.notices_awaiting_follow_up),
                source: format!("copytrace stats notices{scope} --json: sum of awaiting_follow_up"),
            },
            SummaryRow {
                figure: "sites",
                value: count(self.sites.len() as u64),
                source: format!(
                    "copytrace stats sites --by-domain{scope} --until {to} --json: rows (the \
                     sites sheet)"
                ),
            },
            SummaryRow {
                figure: "works_published_copied",
                value: count(ttp.works.len() as u64),
                source: format!("{ttp_command}: rows of works"),
            },
            SummaryRow {
                figure: "publication_time_unknown",
                value: count(ttp.publication_unknown.len() as u64),
                source: format!("{ttp_command}: publication_unknown"),
            },
            SummaryRow {
                figure: "median_hours_to_first_copy",
                value: ttp.overall.median,
                source: format!("{ttp_command}: overall.median"),
            },
        ]
    }

    /// The mail's subject.
    pub fn subject(&self) -> String {
        let (from, last) = (self.period_from, self.last_day());
        match (&self.holder, self.zh()) {
            (Some(holder), true) => format!(
                "Copytrace 每周报告：{holder}（{from} 至 {last}），新发现 {} 个侵权副本，{} 个已删除",
                self.new_copies, self.removals
            ),
            (None, true) => format!(
                "Copytrace 每周报告：全部权利人（{from} 至 {last}），新发现 {} 个侵权副本，{} 个已删除",
                self.new_copies, self.removals
            ),
            (Some(holder), false) => format!(
                "Copytrace weekly report for {holder} ({from} to {last}): {} new copies, {} \
                 removed",
                self.new_copies, self.removals
            ),
            (None, false) => format!(
                "Copytrace weekly report, all rights holders ({from} to {last}): {} new copies, \
                 {} removed",
                self.new_copies, self.removals
            ),
        }
    }

    fn zh(&self) -> bool {
        self.lang == "zh"
    }

    /// The period's last day.
    fn last_day(&self) -> NaiveDate {
        self.period_to.pred_opt().unwrap_or(self.period_to)
    }

    fn labels(&self) -> &'static Labels {
        if self.zh() { &ZH } else { &EN }
    }

    /// The delays of the works published in the period, in words: hours (or days), or
    /// "publication time unknown".
    pub fn delays(&self) -> Vec<(String, String)> {
        let l = self.labels();
        let ttp = &self.time_to_piracy;
        ttp.works
            .iter()
            .map(|w| (w.key.clone(), hours(Some(w.hours), l)))
            .chain(
                ttp.publication_unknown
                    .iter()
                    .map(|key| (key.clone(), l.publication_unknown.to_owned())),
            )
            .collect()
    }

    /// The plain-text body (the HTML body's alternative): the same figures.
    pub fn text(&self) -> String {
        let l = self.labels();
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        line(self.subject());
        line(String::new());
        line(format!(
            "{}: {} – {} (UTC)",
            l.period,
            self.period_from,
            self.last_day()
        ));
        line(format!("{}: {}", l.audience, self.audience()));
        line(String::new());
        for (label, value) in self.headline() {
            line(format!("{label}: {value}"));
        }
        line(String::new());
        line(format!("{}:", l.sites_title));
        if self.sites.is_empty() {
            line(format!("  {}", l.none));
        }
        for site in &self.sites {
            line(format!(
                "  {}  {} {}, {} {}, {} {:.0}%",
                site.site,
                site.copies,
                l.copies,
                site.removed,
                l.removed,
                l.removal_rate,
                site.removal_rate * 100.0
            ));
        }
        line(String::new());
        line(format!("{}:", l.ttp_title));
        let delays = self.delays();
        if delays.is_empty() {
            line(format!("  {}", l.none));
        }
        for (work, delay) in delays {
            line(format!("  {work}: {delay}"));
        }
        if self.holder.is_none() {
            line(String::new());
            line(format!("{}:", l.holders_title));
            for holder in &self.holders {
                line(format!("  {}: {} {}", holder.name, holder.copies, l.copies));
            }
        }
        line(String::new());
        line(l.footer.to_owned());
        out
    }

    /// The HTML body, every value escaped.
    pub fn html(&self) -> Result<String, AnalyticsError> {
        let l = self.labels();
        Ok(WeeklyHtml {
            l,
            lang: &self.lang,
            subject: self.subject(),
            period: format!("{} – {} (UTC)", self.period_from, self.last_day()),
            audience: self.audience(),
            headline: self.headline(),
            sites: self
                .sites
                .iter()
                .map(|s| {
                    [
                        s.site.clone(),
                        s.copies.to_string(),
                        s.removed.to_string(),
                        format!("{:.0}%", s.removal_rate * 100.0),
                    ]
                })
                .collect(),
            delays: self.delays(),
            holders: if self.holder.is_none() {
                self.holders
                    .iter()
                    .map(|h| [h.name.clone(), h.copies.to_string(), h.pages.to_string()])
                    .collect()
            } else {
                Vec::new()
            },
            daily: self
                .daily
                .iter()
                .map(|d| {
                    [
                        d.day.clone(),
                        d.new_matches.to_string(),
                        d.removals.to_string(),
                    ]
                })
                .collect(),
        }
        .render()?)
    }

    /// The workbook: `summary`, then one sheet per table (`holders`, `daily`, `sites`,
    /// `time_to_piracy`, `notices`), as `copytrace export` writes each.
    pub fn xlsx(&self, options: &ExportOptions) -> Result<Vec<u8>, AnalyticsError> {
        let mut out = Vec::new();
        let mut book = Workbook::new(&mut out, options);
        book.sheet(&summary_table(), &self.summary())?;
        book.sheet(&holder_table(), &self.holders)?;
        book.sheet(&daily_table(), &self.daily)?;
        book.sheet(&site_table(), &self.sites)?;
        book.sheet(&first_copy_table(), &self.time_to_piracy.copies)?;
        book.sheet(&notice_table(), &self.notices)?;
        book.finish()?;
        Ok(out)
    }

    /// Whom it is about, in words.
    pub fn audience(&self) -> String {
        match &self.holder {
            Some(holder) => holder.clone(),
            None => self.labels().staff.to_owned(),
        }
    }

    /// The headline figures in words, in order.
    pub fn headline(&self) -> Vec<(&'static str, String)> {
        let l = self.labels();
        let ttp = &self.time_to_piracy;
        vec![
            (l.new_copies, self.new_copies.to_string()),
            (l.removals, self.removals.to_string()),
            (l.pending_reviews, self.pending_reviews.to_string()),
            (l.awaiting, self.notices_awaiting_follow_up.to_string()),
            (l.median_ttp, hours(ttp.overall.median, l)),
        ]
    }
}

/// Hours in words: `5.0 h`, `3.5 d` from two days on, or "no delay known".
fn hours(value: Option<f64>, l: &Labels) -> String {
    match value {
        None => l.no_delay.to_owned(),
        Some(h) if h.abs() < 48.0 => format!("{h:.1} {}", l.hours),
        Some(h) => format!("{:.1} {}", h / 24.0, l.days),
    }
}

/// `name` as one shell word (quoted when it needs to be).
fn shell_word(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
    {
        name.to_owned()
    } else {
        format!("'{}'", name.replace('\'', r"'\''"))
    }
}

/// The words of a report in one language.
struct Labels {
    title: &'static str,
    period: &'static str,
    audience: &'static str,
    staff: &'static str,
    new_copies: &'static str,
    removals: &'static str,
    pending_reviews: &'static str,
    awaiting: &'static str,
    median_ttp: &'static str,
    sites_title: &'static str,
    site: &'static str,
    copies: &'static str,
    removed: &'static str,
    removal_rate: &'static str,
    ttp_title: &'static str,
    work: &'static str,
    delay: &'static str,
    publication_unknown: &'static str,
    no_delay: &'static str,
    holders_title: &'static str,
    holder: &'static str,
    pages: &'static str,
    daily_title: &'static str,
    day: &'static str,
    hours: &'static str,
    days: &'static str,
    none: &'static str,
    footer: &'static str,
}

const EN: Labels = Labels {
    title: "Weekly report",
    period: "Period",
    audience: "Rights holder",
    staff: "all rights holders (staff)",
    new_copies: "New copies (infringing page × work, first seen in the period)",
    removals: "Copies found removed in the period",
    pending_reviews: "Matches waiting for review",
    awaiting: "Notices awaiting follow-up",
    median_ttp: "Median time to piracy of works published in the period",
    sites_title: "Removal rate by site (copies first seen before the period's end)",
    site: "Site",
    copies: "copies",
    removed: "removed",
    removal_rate: "removal rate",
    ttp_title: "Time to piracy of works published in the period",
    work: "Work",
    delay: "First copy after publication",
    publication_unknown: "publication time unknown",
    no_delay: "none known",
    holders_title: "New copies per rights holder",
    holder: "Rights holder",
    pages: "pages",
    daily_title: "Per day",
    day: "Day (UTC)",
    hours: "h",
    days: "d",
    none: "none",
    footer: "The figures are those of `copytrace stats` for the same period (the summary \
             sheet of the attached workbook names each command); the workbook has every table.",
};

const ZH: Labels = Labels {
    title: "每周报告",
    period: "统计周期",
    audience: "权利人",
    staff: "全部权利人（内部）",
    new_copies: "新发现的侵权副本（本周期首次发现的侵权网页 × 作品）",
    removals: "本周期确认删除的副本",
    pending_reviews: "待审核的匹配",
    awaiting: "待跟进的侵权通知",
    median_ttp: "本周期发布作品被盗版的时间（中位数）",
    sites_title: "各站点删除率（周期结束前发现的副本）",
    site: "站点",
    copies: "个副本",
    removed: "个已删除",
    removal_rate: "删除率",
    ttp_title: "本周期发布作品的盗版速度",
    work: "作品",
    delay: "发布后首次发现盗版",
    publication_unknown: "发布时间未知",
    no_delay: "无",
    holders_title: "各权利人新发现的副本",
    holder: "权利人",
    pages: "个网页",
    daily_title: "每日",
    day: "日期（UTC）",
    hours: "小时",
    days: "天",
    none: "无",
    footer: "以上数字与同一周期的 `copytrace stats` 一致（附件工作簿的 summary 表列出每个数字对应的命令）；附件包含全部表格。",
};

#[derive(Template)]
#[template(path = "reports/weekly.html")]
struct WeeklyHtml<'a> {
    l: &'a Labels,
    lang: &'a str,
    subject: String,
    period: String,
    audience: String,
    headline: Vec<(&'static str, String)>,
    /// Site, copies, removed, removal rate.
    sites: Vec<[String; 4]>,
    /// Work, delay in words.
    delays: Vec<(String, String)>,
    /// Holder, copies, pages (staff report only).
    holders: Vec<[String; 3]>,
    /// Day, new copies, removals.
    daily: Vec<[String; 3]>,
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::stats::{DelayRow, Distribution};

    fn report(lang: &str, holder: Option<&str>) -> WeeklyReport {
        let at = Utc.with_ymd_and_hms(2026, 11, 9, 1, 0, 0).unwrap();
        let holder_row = |id: i64, name: &str, copies: u64, pending: u64| HolderStats {
            rights_holder_id: id,
            name: name.to_owned(),
            works_copied: 1,
            pages: copies,
            sites: 1,
            copies,
            confirmed: copies - pending,
            pending,
            removed: 0,
        };
        let site = SiteRow {
            site: "<b>pirate</b>.example".to_owned(),
            hosts: 1,
            pages: 4,
            works: 2,
            copies: 4,
            removed: 1,
            notice_sent: 0,
            removal_rate: 0.25,
            median_hours_to_removal: Some(30.0),
            median_hours_online: Some(30.0),
            first_seen: at,
            last_seen: at,
        };
        WeeklyReport::new(
            holder.map(str::to_owned),
            lang,
            (
                NaiveDate::from_ymd_opt(2026, 11, 2).unwrap(),
                NaiveDate::from_ymd_opt(2026, 11, 9).unwrap(),
            ),
            at,
            WeeklyRows {
                holders: vec![
                    holder_row(1, "Yuewen", 3, 1),
                    holder_row(2, "Zongheng", 2, 0),
                ],
                holders_to_date: vec![holder_row(1, "Yuewen", 5, 2)],
                daily: vec![DailyStats {
                    day: "2026-11-03".to_owned(),
                    new_matches: 5,
                    removals: 1,
                    pages_crawled: 9,
                }],
                sites: vec![site],
                time_to_piracy: TimeToPiracy {
                    copies: Vec::new(),
                    works: vec![DelayRow {
                        key: "xingchen".to_owned(),
                        hours: 5.0,
                        works: 1,
                    }],
                    sites: Vec::new(),
                    overall: Distribution {
                        count: 1,
                        p10: Some(5.0),
                        median: Some(5.0),
                        p90: Some(5.0),
                        buckets: Vec::new(),
                    },
                    publication_unknown: vec!["jianghu".to_owned()],
                },
                notices: Vec::new(),
            },
        )
    }

    #[test]
    fn totals_are_sums_of_the_stats_rows() {
        let r = report("en", None);
        assert_eq!(
            (
                r.new_copies,
                r.removals,
                r.pending_reviews,
                r.notices_awaiting_follow_up
            ),
            (5, 1, 2, 0)
        );
        let summary = r.summary();
        assert_eq!(summary[0].figure, "new_copies");
        assert_eq!(summary[0].value, Some(5.0));
        assert!(
            summary[0]
                .source
                .starts_with("copytrace stats holders --since 2026-11-02 --until 2026-11-09"),
            "{:?}",
            summary[0]
        );
        let holder = report("en", Some("Yue wen"));
        assert!(
            holder.summary()[1]
                .source
                .contains("stats daily --rights-holder 'Yue wen' --since"),
            "{:?}",
            holder.summary()
        );
    }

    #[test]
    fn an_unknown_publication_time_is_said_never_zero_hours() {
        for (lang, unknown) in [("en", "publication time unknown"), ("zh", "发布时间未知")] {
            let r = report(lang, Some("Yuewen"));
            let text = r.text();
            assert!(text.contains(&format!("jianghu: {unknown}")), "{text}");
            assert!(!text.contains("jianghu: 0.0"), "{text}");
            let html = r.html().unwrap();
            assert!(html.contains(unknown), "{html}");
        }
    }

    #[test]
    fn the_html_escapes_what_pirate_sites_named() {
        let html = report("zh", Some("Yuewen")).html().unwrap();
        // askama escapes `<` and `>` as numeric references.
        assert!(
            html.contains("&#60;b&#62;pirate&#60;/b&#62;.example"),
            "{html}"
        );
        assert!(!html.contains("<b>pirate"), "{html}");
        assert!(html.contains("lang=\"zh\""), "{html}");
        assert!(html.contains("各站点删除率"), "{html}");
        assert!(html.contains("25%"), "{html}");
    }

    #[test]
    fn the_workbook_has_one_sheet_per_table() {
        let xlsx = report("en", None).xlsx(&ExportOptions::default()).unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(xlsx)).unwrap();
        let mut workbook = String::new();
        std::io::Read::read_to_string(
            &mut archive.by_name("xl/workbook.xml").unwrap(),
            &mut workbook,
        )
        .unwrap();
        let names: Vec<&str> = workbook
            .split("<sheet name=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        assert_eq!(
            names,
            [
                "summary",
                "holders",
                "daily",
                "sites",
                "time_to_piracy",
                "notices"
            ]
        );
    }
}
