//! Weekly reports by e-mail (issue 40): per rights holder (its works only) and one for staff
//! (every holder's), the figures of one period, mailed as an HTML body with a plain-text
//! alternative and an XLSX workbook attached.
//!
//! **The figures are the statistics'.** [`weekly`] reads every figure through [`crate::stats`],
//! the functions `copytrace stats … --json` prints, with the filters the report's summary names
//! (see `copytrace_analytics::weekly`): there is no second count to disagree with them.
//!
//! **Where it goes.** A holder's report goes to the e-mail of its profile (`copytrace
//! rights-holder set NAME --email …`), in the profile's language; a holder without one is
//! skipped, saying so. The staff report goes to the configured staff recipients
//! ([`WeeklySettings`]). Mail goes through the alert mailer's SMTP server and sender.
//!
//! **At most once per audience and period.** Each mail is recorded `sending` before its SMTP
//! exchange and finished after it ([`Store::begin_report_mail`]), as notices are: a retried
//! job, a second scheduler or a re-run sends nothing already sent; a refusal that proves
//! nothing was delivered may be sent again; an exchange that broke off leaves the report
//! `sending`, never sent again by itself (`report weekly --send --force` gives it up). The
//! job that sends them ([`ReportJobs`]) is delivered at least once; its effect happens once.
//!
//! **When.** [`WeeklySchedule`]: a cron expression (default Mondays 08:00) in the deployment's
//! time zone; `serve`'s scheduler enqueues the job of the latest due period once per period
//! (a process starting after the send time catches that period up), and crawl workers run it.
//! A period is the seven UTC days before the UTC day of the send time.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use copytrace_analytics::export::ExportOptions;
use copytrace_analytics::stats::{PublishedWindow, SiteGrouping};
use copytrace_analytics::weekly::{WeeklyReport, WeeklyRows};
use copytrace_scheduler::JobHandler;
use copytrace_scheduler::cron::CronSchedule;
use copytrace_scheduler::worker::JobError;
use copytrace_store::{
    Id, Job, MatchFilter, NewJob, NewReportMail, ReportAudience, ReportClaim, ReportMail,
    StatsFilter, Store,
};
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, MultiPart};
use serde::{Deserialize, Serialize};

use crate::alerts::AlertSettings;
use crate::error::{Result, ServiceError};
use crate::sending::{Failure, Mailer, mailbox};
use crate::stats;

/// Kind of the job that sends a period's weekly reports.
pub const WEEKLY_REPORTS: &str = "weekly-reports";
/// Default send time of the weekly reports: Mondays at 08:00 (in the deployment's time zone).
pub const DEFAULT_WEEKLY_REPORT_CRON: &str = "0 8 * * 1";
/// Attempts of a weekly-reports job.
const ATTEMPTS: u32 = 6;
/// The XLSX attachment's content type.
const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// A report period: the UTC days `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    /// First day.
    pub from: NaiveDate,
    /// The day after the last.
    pub to: NaiveDate,
}

impl Period {
    /// `[from, to)`; `Invalid` when empty.
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<Self> {
        if to <= from {
            return Err(ServiceError::invalid(format!(
                "the report period {from} to {to} is empty: --to is the day after the last \
                 day, after --from"
            )));
        }
        Ok(Period { from, to })
    }

    /// The last whole week, Monday to Sunday (UTC), before the one `today` is in.
    pub fn previous_week(today: NaiveDate) -> Self {
        let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
        Period {
            from: monday - Duration::days(7),
            to: monday,
        }
    }

    /// The seven days before the UTC day of `at`: the period a report sent at `at` covers.
    pub fn week_before(at: DateTime<Utc>) -> Self {
        let to = at.date_naive();
        Period {
            from: to - Duration::days(7),
            to,
        }
    }

    fn since(&self) -> DateTime<Utc> {
        self.from.and_time(chrono::NaiveTime::MIN).and_utc()
    }

    fn until(&self) -> DateTime<Utc> {
        self.to.and_time(chrono::NaiveTime::MIN).and_utc()
    }
}

/// Who gets the staff report, and in which language.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeeklySettings {
    /// The staff report's recipients; none: no staff report is sent.
    pub staff_recipients: Vec<String>,
    /// Its language, `zh` or `en`.
    pub staff_language: String,
}

/// Computes the report of `audience` over `period` in `lang`, from the statistics (see the
/// module documentation).
pub async fn weekly(
    store: &dyn Store,
    audience: ReportAudience,
    period: Period,
    lang: &str,
    now: DateTime<Utc>,
) -> Result<WeeklyReport> {
    let (holder_id, holder) = match audience {
        ReportAudience::Holder(id) => (Some(id), Some(crate::holders::get(store, id).await?.name)),
        ReportAudience::Staff => (None, None),
    };
    // What `stats` counts by default: the reported infringements, confirmed and pending.
    let to_date = StatsFilter {
        rights_holder_id: holder_id,
        until: Some(period.until()),
        reviews: MatchFilter::reported().reviews,
        ..StatsFilter::default()
    };
    let in_period = StatsFilter {
        since: Some(period.since()),
        ..to_date.clone()
    };
    let rows = WeeklyRows {
        holders: stats::holders(store, &in_period).await?,
        holders_to_date: stats::holders(store, &to_date).await?,
        daily: stats::daily(store, &in_period).await?,
        sites: stats::sites(store, &to_date, SiteGrouping::Domain, None).await?,
        time_to_piracy: stats::time_to_piracy(
            store,
            &to_date,
            &PublishedWindow {
                since: Some(period.since()),
                until: Some(period.until()),
            },
        )
        .await?,
        notices: stats::notices(store, holder_id).await?,
    };
    Ok(WeeklyReport::new(
        holder,
        lang,
        (period.from, period.to),
        now,
        rows,
    ))
}

/// Which reports: some holders (all when `None`) and the staff report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Holders by id; `None` for every rights holder.
    pub holders: Option<Vec<Id>>,
    /// The staff report too.
    pub staff: bool,
}

impl Selection {
    /// Every holder's report and the staff report.
    pub fn all() -> Self {
        Selection {
            holders: None,
            staff: true,
        }
    }
}

/// One report, addressed.
#[derive(Debug, Clone, Serialize)]
pub struct Addressed {
    /// Whom it is about and for.
    pub audience: ReportAudience,
    /// Where it goes (empty: nowhere, see `skipped`).
    pub recipients: Vec<String>,
    /// Why it cannot be sent, when it cannot (no e-mail in the holder's profile, no staff
    /// recipient configured).
    pub skipped: Option<String>,
    /// The report.
    pub report: WeeklyReport,
}

/// The reports of `selection` over `period`, each addressed (nothing is sent).
pub async fn prepare(
    store: &dyn Store,
    selection: &Selection,
    period: Period,
    settings: &WeeklySettings,
    now: DateTime<Utc>,
) -> Result<Vec<Addressed>> {
    let holders = match &selection.holders {
        Some(ids) => {
            let mut holders = Vec::with_capacity(ids.len());
            for &id in ids {
                holders.push(crate::holders::get(store, id).await?);
            }
            holders
        }
        None => store.list_rights_holders().await?,
    };
    let mut reports = Vec::new();
    for holder in holders {
        let profile = store.rights_holder_profile(holder.id).await?;
        let lang = profile.as_ref().map_or("zh", |p| p.language.as_str());
        let email = profile
            .as_ref()
            .and_then(|p| p.email.clone())
            .filter(|e| !e.trim().is_empty());
        let audience = ReportAudience::Holder(holder.id);
        reports.push(Addressed {
            skipped: email.is_none().then(|| {
                format!(
                    "{:?} has no e-mail in its profile: `copytrace rights-holder set {:?} \
                     --email ADDRESS`",
                    holder.name, holder.name
                )
            }),
            recipients: email.into_iter().collect(),
            report: weekly(store, audience, period, lang, now).await?,
            audience,
        });
    }
    if selection.staff {
        let recipients: Vec<String> = settings
            .staff_recipients
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        reports.push(Addressed {
            audience: ReportAudience::Staff,
            skipped: recipients.is_empty().then(|| {
                "no staff recipient is configured (--report-staff-email, \
                 COPYTRACE_REPORT_STAFF_EMAILS)"
                    .to_owned()
            }),
            recipients,
            report: weekly(
                store,
                ReportAudience::Staff,
                period,
                &settings.staff_language,
                now,
            )
            .await?,
        });
    }
    Ok(reports)
}

/// What became of one report.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Mailed now.
    Sent {
        /// Whom it is about.
        audience: ReportAudience,
        /// To whom.
        recipients: Vec<String>,
        /// Its `Message-ID`.
        message_id: String,
    },
    /// Mailed before (or stuck in `sending`: see its state): nothing sent now.
    AlreadySent {
        /// The earlier mail.
        mail: ReportMail,
    },
    /// Not sent: nowhere to send it.
    Skipped {
        /// Whom it is about.
        audience: ReportAudience,
        /// Why.
        reason: String,
    },
    /// Not sent now: the SMTP server refused it or could not be reached (it may be sent again
    /// later), or the exchange broke off (it stays `sending`).
    Failed {
        /// Whom it is about.
        audience: ReportAudience,
        /// Why.
        error: String,
    },
}

/// Mails each report of `reports` not yet sent for its audience and period, at most once
/// each (see the module documentation); `force` gives up a report stuck in `sending` and
/// sends it again.
pub async fn send(
    store: &dyn Store,
    mail: &AlertSettings,
    reports: &[Addressed],
    force: bool,
    now: DateTime<Utc>,
) -> Result<Vec<Outcome>> {
    let mailer = Mailer::new(mail)?;
    let mut outcomes = Vec::with_capacity(reports.len());
    for addressed in reports {
        let audience = addressed.audience;
        if let Some(reason) = &addressed.skipped {
            outcomes.push(Outcome::Skipped {
                audience,
                reason: reason.clone(),
            });
            continue;
        }
        outcomes.push(
            match send_one(store, &mailer, addressed, force, now).await {
                Ok(outcome) => outcome,
                Err(error) => Outcome::Failed {
                    audience,
                    error: crate::error::one_line(&error),
                },
            },
        );
    }
    Ok(outcomes)
}

async fn send_one(
    store: &dyn Store,
    mailer: &Mailer<'_>,
    addressed: &Addressed,
    force: bool,
    now: DateTime<Utc>,
) -> Result<Outcome> {
    let report = &addressed.report;
    let audience = addressed.audience;
    let message_id = format!(
        "<weekly-{}-{}-{}@copytrace>",
        audience.key().replace(':', "-"),
        report.period_from,
        uuid::Uuid::new_v4()
    );
    // Built before the claim: a report that cannot be written is never recorded as sending.
    let message = compose(mailer, addressed, &message_id)?;
    let claim = store
        .begin_report_mail(&NewReportMail {
            audience,
            period_from: report.period_from,
            period_to: report.period_to,
            message_id: message_id.clone(),
            recipients: addressed.recipients.clone(),
            force,
            at: now,
        })
        .await?;
    let mail_id = match claim {
        ReportClaim::Claimed(id) => id,
        ReportClaim::Exists(mail) => return Ok(Outcome::AlreadySent { mail }),
    };
    match mailer.send(message).await {
        Ok(()) => {
            store.finish_report_mail(mail_id, None, now).await?;
            Ok(Outcome::Sent {
                audience,
                recipients: addressed.recipients.clone(),
                message_id,
            })
        }
        Err(Failure::Refused(error)) => {
            store.finish_report_mail(mail_id, Some(&error), now).await?;
            Ok(Outcome::Failed {
                audience,
                error: format!("nothing was delivered ({error}); it may be sent again"),
            })
        }
        Err(Failure::Unknown(error)) => Ok(Outcome::Failed {
            audience,
            error: format!(
                "{error}; the {} report of {} is left `sending`: it may or may not have \
                 arrived; check the mail server's log, and send it again with `copytrace report \
                 weekly --send --force` if it did not",
                audience.key(),
                report.period_from
            ),
        }),
    }
}

/// The mail of one report: the HTML body with its plain-text alternative, the workbook
/// attached.
fn compose(mailer: &Mailer<'_>, addressed: &Addressed, message_id: &str) -> Result<Message> {
    let report = &addressed.report;
    let html = report
        .html()
        .map_err(|e| ServiceError::invalid(format!("cannot render the report: {e}")))?;
    let xlsx = report
        .xlsx(&ExportOptions::default())
        .map_err(|e| ServiceError::invalid(format!("cannot write the report's workbook: {e}")))?;
    let mut builder = Message::builder()
        .from(mailer.from.clone())
        .subject(report.subject())
        .message_id(Some(message_id.to_owned()));
    for address in &addressed.recipients {
        builder = builder.to(mailbox(address)?);
    }
    let attachment = Attachment::new(attachment_name(addressed.audience, report.period_from)).body(
        xlsx,
        ContentType::parse(XLSX).expect("a valid content type"),
    );
    builder
        .multipart(
            MultiPart::mixed()
                .multipart(MultiPart::alternative_plain_html(report.text(), html))
                .singlepart(attachment),
        )
        .map_err(|e| ServiceError::invalid(format!("cannot build the mail: {e}")))
}

/// `copytrace-weekly-holder-3-2026-11-02.xlsx`, `copytrace-weekly-staff-2026-11-02.xlsx`.
pub fn attachment_name(audience: ReportAudience, from: NaiveDate) -> String {
    format!(
        "copytrace-weekly-{}-{from}.xlsx",
        audience.key().replace(':', "-")
    )
}

/// When the weekly reports are sent: a cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct WeeklySchedule {
    cron: CronSchedule,
}

impl WeeklySchedule {
    /// The schedule of `expression` (five cron fields, e.g. `0 8 * * 1`: Mondays 08:00) in
    /// `timezone` (IANA); `Invalid` naming the fault.
    pub fn parse(expression: &str, timezone: &str) -> Result<Self> {
        Ok(WeeklySchedule {
            cron: CronSchedule::parse(expression, timezone)?,
        })
    }

    /// The period whose reports are due at `now`: the week before the latest send time at or
    /// before `now`.
    pub fn due(&self, now: DateTime<Utc>) -> Option<Period> {
        self.cron.latest_at_or_before(now).map(Period::week_before)
    }
}

/// Payload of a weekly-reports job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportJob {
    /// The period.
    pub period: Period,
    /// The staff report's recipients and language.
    pub settings: WeeklySettings,
}

/// Enqueues the job that sends `period`'s reports (one while one is pending); returns its id.
pub async fn enqueue(
    store: &dyn Store,
    period: Period,
    settings: &WeeklySettings,
    now: DateTime<Utc>,
) -> Result<Id> {
    Ok(store
        .enqueue_job(&NewJob {
            kind: WEEKLY_REPORTS.to_owned(),
            payload: serde_json::to_value(ReportJob {
                period,
                settings: settings.clone(),
            })?,
            dedup_key: Some(format!("{WEEKLY_REPORTS}:{}", period.from)),
            run_at: now,
            max_attempts: ATTEMPTS,
        })
        .await?)
}

/// Runs weekly-reports jobs (on crawl workers, which reach the outside world): every holder's
/// report and the staff report of the job's period, each sent at most once. The job fails
/// (and is retried) while a report could not be sent.
pub struct ReportJobs {
    store: std::sync::Arc<dyn Store>,
    mail: AlertSettings,
}

impl ReportJobs {
    /// A handler sending through `mail`'s SMTP server.
    pub fn new(store: std::sync::Arc<dyn Store>, mail: AlertSettings) -> Self {
        Self { store, mail }
    }
}

#[async_trait::async_trait]
impl JobHandler for ReportJobs {
    fn kinds(&self) -> Vec<String> {
        vec![WEEKLY_REPORTS.to_owned()]
    }

    async fn run(&self, job: &Job) -> std::result::Result<String, JobError> {
        let fail = |e: ServiceError| JobError::from(crate::error::one_line(&e));
        let payload: ReportJob = serde_json::from_value(job.payload.clone())
            .map_err(|e| JobError::from(format!("bad weekly-reports payload: {e}")))?;
        let store = self.store.as_ref();
        let now = Utc::now();
        let reports = prepare(
            store,
            &Selection::all(),
            payload.period,
            &payload.settings,
            now,
        )
        .await
        .map_err(fail)?;
        let outcomes = send(store, &self.mail, &reports, false, now)
            .await
            .map_err(fail)?;
        let summary = summary(&outcomes);
        let failures: Vec<String> = outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Failed { audience, error } => Some(format!("{}: {error}", audience.key())),
                _ => None,
            })
            .collect();
        if failures.is_empty() {
            Ok(format!(
                "weekly reports of {}: {summary}",
                payload.period.from
            ))
        } else {
            Err(JobError::from(format!(
                "weekly reports of {}: {summary}; {}",
                payload.period.from,
                failures.join("; ")
            )))
        }
    }
}

/// One line counting outcomes.
pub fn summary(outcomes: &[Outcome]) -> String {
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    format!(
        "{} sent, {} sent before, {} skipped, {} failed",
        count(|o| matches!(o, Outcome::Sent { .. })),
        count(|o| matches!(o, Outcome::AlreadySent { .. })),
        count(|o| matches!(o, Outcome::Skipped { .. })),
        count(|o| matches!(o, Outcome::Failed { .. })),
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn the_previous_week_runs_monday_to_monday() {
        // 2026-11-11 is a Wednesday.
        let week = Period::previous_week(day(2026, 11, 11));
        assert_eq!((week.from, week.to), (day(2026, 11, 2), day(2026, 11, 9)));
        assert_eq!(Period::previous_week(day(2026, 11, 9)), week);
        assert!(Period::new(day(2026, 11, 9), day(2026, 11, 9)).is_err());
    }

    #[test]
    fn the_due_period_is_the_week_before_the_latest_send_time() {
        let schedule = WeeklySchedule::parse("0 8 * * 1", "Asia/Shanghai").unwrap();
        // Monday 2026-11-09 08:00 in Shanghai is 00:00 UTC: the week 11-02 to 11-09 is due
        // from then until the next Monday.
        let monday = Utc.with_ymd_and_hms(2026, 11, 9, 0, 0, 0).unwrap();
        let due = schedule.due(monday).unwrap();
        assert_eq!((due.from, due.to), (day(2026, 11, 2), day(2026, 11, 9)));
        assert_eq!(schedule.due(monday + Duration::days(6)), Some(due));
        let before = schedule.due(monday - Duration::seconds(1)).unwrap();
        assert_eq!(before.to, day(2026, 11, 2));
        assert!(WeeklySchedule::parse("0 8 * * funday", "UTC").is_err());
    }
}
