//! Alerts: telling each rights holder of its new reported infringements and of removals, by a
//! signed webhook or an e-mail digest, after runs or once a day.
//!
//! **Gather, then deliver.** [`Alerter::gather_due`] asks the store to put what each due target
//! has not been told into one delivery ([`Store::gather_alert`]): the store tells each match's
//! first report and its removal once per target, whoever gathers and however often. Delivering
//! ([`Alerter::deliver_due`]) sends each undelivered delivery whose time has come and records
//! the attempt: delivered, or due again after a backoff (1 minute, doubling, at most 6 hours)
//! until [`MAX_ATTEMPTS`]. A retry sends the same body under the same delivery key, so a
//! receiver that saw it already can drop it: delivery is at least once, effects idempotent.
//!
//! **When.** [`Alerter::run`] (gather and deliver) runs after `copytrace crawl`, `match` and
//! `dedup`, and as the `alerts` job that crawl and dedup jobs enqueue in production; the job
//! enqueues its own follow-up for deliveries still waiting ([`AlertJobs`]). `copytrace alerts
//! send` runs it by hand. A `daily` target is gathered at most once in 23 hours, so a daily
//! dedup run a little early still sends the day's digest.
//!
//! **Webhooks** are an HTTP POST of JSON ([`WebhookBody`]) with the headers
//! `X-Copytrace-Delivery` (the delivery key), `X-Copytrace-Timestamp` (Unix seconds of when the
//! delivery was gathered) and `X-Copytrace-Signature: sha256=HEX`, the HMAC-SHA256 under the
//! target's secret of `TIMESTAMP.BODY`. They go through the crawler's address guard: private and
//! loopback destinations are refused unless allowed, and redirects are not followed. **E-mail**
//! goes through the SMTP server of [`AlertSettings::smtp_url`], as a plain-text digest in the
//! target's language, with the delivery key in its `Message-ID`.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use copytrace_crawler::guard::{AddressPolicy, GuardedResolver, find_guard_error};
use copytrace_scheduler::JobHandler;
use copytrace_scheduler::worker::JobError;
use copytrace_store::{
    AlertCadence, AlertDelivery, AlertEvent, AlertEventKind, AlertKind, AlertTarget, Id, Job,
    NewJob, Store,
};
use hmac::{Hmac, Mac};
use lettre::message::{Mailbox, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::Serialize;
use sha2::Sha256;

use crate::error::{Result, ServiceError};

/// Attempts at one delivery before it is given up (its last error stays visible).
pub const MAX_ATTEMPTS: u32 = 8;
/// Kind of the job that gathers and delivers alerts.
pub const ALERTS: &str = "alerts";
/// A daily target is gathered again after this long.
const DAILY: chrono::Duration = chrono::Duration::hours(23);

/// How alerts are sent.
#[derive(Debug, Clone)]
pub struct AlertSettings {
    /// SMTP server of e-mail digests, in lettre's URL form: `smtp://host:port` (plain),
    /// `smtp://host:587?tls=required` (STARTTLS), `smtps://user:password@host` (TLS). E-mail targets wait (their deliveries
    /// fail with a clear error) until it is set.
    pub smtp_url: Option<String>,
    /// The digests' sender.
    pub mail_from: String,
    /// Allow webhooks to private and loopback addresses (an intranet receiver, tests).
    pub allow_private_addresses: bool,
    /// Longest wait for one webhook or SMTP exchange.
    pub timeout: Duration,
    /// When the `alerts` job follows up sent notices (reminder, escalation): the notices'
    /// mails go through the same server and sender.
    pub follow_up: crate::sending::FollowUpSettings,
    /// The time-stamping authority that stamps the text of every notice mail before it is sent
    /// (RFC 3161, [`crate::timestamp`]); none: mails are sent without.
    pub timestamps: Option<crate::timestamp::TsaSettings>,
}

impl Default for AlertSettings {
    fn default() -> Self {
        Self {
            smtp_url: None,
            mail_from: "Copytrace <copytrace@localhost>".to_owned(),
            allow_private_addresses: false,
            timeout: Duration::from_secs(15),
            follow_up: crate::sending::FollowUpSettings::default(),
            timestamps: None,
        }
    }
}

/// What one [`Alerter::run`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertReport {
    /// Deliveries gathered.
    pub gathered: u64,
    /// Deliveries sent.
    pub delivered: u64,
    /// Attempts that failed, with their errors (`target N: …`).
    pub failures: Vec<String>,
    /// Undelivered deliveries left to retry, and when the first of them is due.
    pub waiting: Option<DateTime<Utc>>,
}

/// The JSON a webhook receives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebhookBody<'a> {
    /// The delivery key, also in `X-Copytrace-Delivery`: the same on every retry.
    pub delivery_id: &'a str,
    /// The rights holder.
    pub rights_holder: &'a str,
    /// When the events were gathered.
    pub created_at: DateTime<Utc>,
    /// How many copies were found, and how many found removed.
    pub new: usize,
    /// See `new`.
    pub removed: usize,
    /// The events.
    pub events: &'a [AlertEvent],
}

/// Gathers and sends alerts.
pub struct Alerter {
    store: Arc<dyn Store>,
    settings: AlertSettings,
    http: reqwest::Client,
}

impl Alerter {
    /// An alerter over `store`.
    pub fn new(store: Arc<dyn Store>, settings: AlertSettings) -> Result<Self> {
        let policy = AddressPolicy {
            allow_private: settings.allow_private_addresses,
            allowed: Vec::new(),
        };
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(Arc::new(policy))))
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .user_agent(concat!("Copytrace-Alerts/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ServiceError::invalid(format!("cannot build the webhook client: {e}")))?;
        Ok(Self {
            store,
            settings,
            http,
        })
    }

    /// Gathers for every due target, then delivers everything due.
    pub async fn run(&self, now: DateTime<Utc>) -> Result<AlertReport> {
        let gathered = self.gather_due(now).await?;
        let mut report = self.deliver_due(now).await?;
        report.gathered = gathered;
        Ok(report)
    }

    /// Gathers what each due target has not been told; returns how many deliveries that made.
    pub async fn gather_due(&self, now: DateTime<Utc>) -> Result<u64> {
        let mut gathered = 0;
        for target in self.store.list_alert_targets(None).await? {
            if !is_due(&target, now) {
                continue;
            }
            let key = uuid::Uuid::new_v4().to_string();
            if self
                .store
                .gather_alert(target.id, &key, now)
                .await?
                .is_some()
            {
                gathered += 1;
            }
        }
        Ok(gathered)
    }

    /// Sends every delivery due at `now` and records each attempt as made at `now`.
    pub async fn deliver_due(&self, now: DateTime<Utc>) -> Result<AlertReport> {
        let targets = self.store.list_alert_targets(None).await?;
        let holders = self.store.list_rights_holders().await?;
        let mut report = AlertReport::default();
        for delivery in self.store.due_alert_deliveries(now, MAX_ATTEMPTS).await? {
            let Some(target) = targets.iter().find(|t| t.id == delivery.target_id) else {
                continue;
            };
            let holder = holders
                .iter()
                .find(|h| h.id == target.rights_holder_id)
                .map_or("", |h| h.name.as_str());
            let sent = match target.kind {
                AlertKind::Webhook => self.post(target, holder, &delivery).await,
                AlertKind::Email => self.mail(target, holder, &delivery).await,
            };
            let at = now;
            match sent {
                Ok(()) => {
                    self.store
                        .record_alert_attempt(delivery.id, None, at, at)
                        .await?;
                    report.delivered += 1;
                }
                Err(error) => {
                    let next = at + backoff(delivery.attempts);
                    self.store
                        .record_alert_attempt(delivery.id, Some(&error), at, next)
                        .await?;
                    report.failures.push(format!(
                        "target {} ({}): {error}",
                        target.id, target.address
                    ));
                    if delivery.attempts + 1 < MAX_ATTEMPTS {
                        report.waiting = Some(report.waiting.map_or(next, |w| w.min(next)));
                    }
                }
            }
        }
        Ok(report)
    }

    /// POSTs a delivery to a webhook; the error says why it was not accepted.
    async fn post(
        &self,
        target: &AlertTarget,
        holder: &str,
        delivery: &AlertDelivery,
    ) -> std::result::Result<(), String> {
        let url = url::Url::parse(&target.address).map_err(|e| format!("bad URL: {e}"))?;
        let policy = AddressPolicy {
            allow_private: self.settings.allow_private_addresses,
            allowed: Vec::new(),
        };
        policy.check_host_literal(&url).map_err(|e| e.to_string())?;
        let body = webhook_body(holder, delivery)?;
        let timestamp = delivery.created_at.timestamp().to_string();
        let signature = sign(&target.secret, &timestamp, &body);
        let response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("X-Copytrace-Delivery", &delivery.delivery_key)
            .header("X-Copytrace-Timestamp", &timestamp)
            .header("X-Copytrace-Signature", format!("sha256={signature}"))
            .body(body)
            .send()
            .await
            .map_err(|e| match find_guard_error(&e) {
                Some(guard) => guard.to_string(),
                None => crate::error::one_line(&e),
            })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {status}"))
        }
    }

    /// Mails a delivery's digest.
    async fn mail(
        &self,
        target: &AlertTarget,
        holder: &str,
        delivery: &AlertDelivery,
    ) -> std::result::Result<(), String> {
        let Some(smtp_url) = &self.settings.smtp_url else {
            return Err("no SMTP server is configured (--smtp-url, COPYTRACE_SMTP_URL)".into());
        };
        let from: Mailbox = self
            .settings
            .mail_from
            .parse()
            .map_err(|e| format!("bad sender {:?}: {e}", self.settings.mail_from))?;
        let to: Mailbox = target
            .address
            .parse()
            .map_err(|e| format!("bad address {:?}: {e}", target.address))?;
        let (subject, text) = digest(&target.lang, holder, delivery);
        let message = Message::builder()
            .from(from)
            .to(to)
            .subject(subject)
            .message_id(Some(format!("<{}@copytrace>", delivery.delivery_key)))
            .header(ContentType::TEXT_PLAIN)
            .body(text)
            .map_err(|e| format!("cannot build the message: {e}"))?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|e| format!("bad SMTP URL: {e}"))?
            .timeout(Some(self.settings.timeout))
            .build();
        transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| format!("SMTP: {e}"))
    }
}

/// Where a new alert target sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// An `http` or `https` URL.
    Webhook(String),
    /// An e-mail address.
    Email(String),
}

/// Adds (or updates) an alert target of rights holder `holder`. A webhook without `secret`
/// gets a new random one. Returns the target's id and its secret (empty for e-mail), which is
/// shown this once: listings never print it.
pub async fn add_target(
    store: &dyn Store,
    holder: &str,
    destination: Destination,
    secret: Option<String>,
    cadence: AlertCadence,
    lang: &str,
) -> Result<(Id, String)> {
    let holder = crate::holders::find(store, holder).await?;
    let (kind, address, secret) = match destination {
        Destination::Webhook(url) => {
            let parsed = url::Url::parse(url.trim())
                .map_err(|e| ServiceError::invalid(format!("webhook URL {url:?}: {e}")))?;
            if !["http", "https"].contains(&parsed.scheme()) || parsed.host().is_none() {
                return Err(ServiceError::invalid(format!(
                    "webhook URL {url:?}: expected an http or https URL with a host"
                )));
            }
            let secret = match secret {
                Some(secret) if secret.len() < 16 => {
                    return Err(ServiceError::invalid(
                        "a webhook secret has at least 16 characters",
                    ));
                }
                Some(secret) => secret,
                // Two version-4 UUIDs: 244 random bits.
                None => format!(
                    "{}{}",
                    uuid::Uuid::new_v4().simple(),
                    uuid::Uuid::new_v4().simple()
                ),
            };
            (AlertKind::Webhook, parsed.to_string(), secret)
        }
        Destination::Email(address) => {
            let parsed: lettre::Address = address
                .trim()
                .parse()
                .map_err(|e| ServiceError::invalid(format!("e-mail address {address:?}: {e}")))?;
            (AlertKind::Email, parsed.to_string(), String::new())
        }
    };
    let id = store
        .add_alert_target(&copytrace_store::NewAlertTarget {
            rights_holder_id: holder.id,
            kind,
            address,
            secret: secret.clone(),
            cadence,
            lang: lang.to_owned(),
            at: Utc::now(),
        })
        .await?;
    Ok((id, secret))
}

/// A target with how its deliveries stand.
#[derive(Debug, Clone, Serialize)]
pub struct TargetStatus {
    /// The target (its secret is never serialized).
    #[serde(flatten)]
    pub target: AlertTarget,
    /// The rights holder's name.
    pub rights_holder: String,
    /// Deliveries sent.
    pub delivered: usize,
    /// Deliveries waiting for a retry.
    pub waiting: usize,
    /// Deliveries given up after [`MAX_ATTEMPTS`].
    pub failed: usize,
    /// The last error of an undelivered delivery.
    pub last_error: Option<String>,
}

/// Alert targets (of one holder, or all) with how their recent deliveries stand.
pub async fn targets(store: &dyn Store, holder: Option<&str>) -> Result<Vec<TargetStatus>> {
    let holder_id = match holder {
        Some(name) => Some(crate::holders::find(store, name).await?.id),
        None => None,
    };
    let holders = store.list_rights_holders().await?;
    let mut statuses = Vec::new();
    for target in store.list_alert_targets(holder_id).await? {
        let deliveries = store.alert_deliveries(target.id).await?;
        let undelivered = || deliveries.iter().filter(|d| d.delivered_at.is_none());
        statuses.push(TargetStatus {
            rights_holder: holders
                .iter()
                .find(|h| h.id == target.rights_holder_id)
                .map_or_else(String::new, |h| h.name.clone()),
            delivered: deliveries
                .iter()
                .filter(|d| d.delivered_at.is_some())
                .count(),
            waiting: undelivered().filter(|d| d.attempts < MAX_ATTEMPTS).count(),
            failed: undelivered().filter(|d| d.attempts >= MAX_ATTEMPTS).count(),
            last_error: undelivered().find_map(|d| d.last_error.clone()),
            target,
        });
    }
    Ok(statuses)
}

/// Removes alert target `id` with its delivery history: only one of `rights_holder_id` when
/// given (another holder's is `NotFound`, as a missing one is), any for `None`.
pub async fn remove_target(store: &dyn Store, id: Id, rights_holder_id: Option<Id>) -> Result<()> {
    Ok(store.remove_alert_target(id, rights_holder_id).await?)
}

/// Whether a target is gathered at `now`.
fn is_due(target: &AlertTarget, now: DateTime<Utc>) -> bool {
    match target.cadence {
        AlertCadence::AfterRun => true,
        AlertCadence::Daily => target
            .last_collected_at
            .is_none_or(|last| now - last >= DAILY),
    }
}

/// Wait before the attempt after `attempts` failed ones: 1 minute, doubling, at most 6 hours.
fn backoff(attempts: u32) -> chrono::Duration {
    let minutes = 1i64 << attempts.min(9);
    chrono::Duration::minutes(minutes.min(6 * 60))
}

/// The JSON body of a delivery: the same bytes on every retry.
fn webhook_body(holder: &str, delivery: &AlertDelivery) -> std::result::Result<String, String> {
    let count = |kind| delivery.events.iter().filter(|e| e.event == kind).count();
    serde_json::to_string(&WebhookBody {
        delivery_id: &delivery.delivery_key,
        rights_holder: holder,
        created_at: delivery.created_at,
        new: count(AlertEventKind::New),
        removed: count(AlertEventKind::Removed),
        events: &delivery.events,
    })
    .map_err(|e| format!("cannot encode the body: {e}"))
}

/// `hex(HMAC-SHA256(secret, "TIMESTAMP.BODY"))`: what `X-Copytrace-Signature` carries after
/// `sha256=`. A receiver computes the same over the raw body it received.
pub fn sign(secret: &str, timestamp: &str, body: &str) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The subject and text of an e-mail digest in `lang` (`zh` or `en`).
fn digest(lang: &str, holder: &str, delivery: &AlertDelivery) -> (String, String) {
    let new: Vec<&AlertEvent> = delivery
        .events
        .iter()
        .filter(|e| e.event == AlertEventKind::New)
        .collect();
    let removed: Vec<&AlertEvent> = delivery
        .events
        .iter()
        .filter(|e| e.event == AlertEventKind::Removed)
        .collect();
    let zh = lang == "zh";
    let subject = if zh {
        format!(
            "Copytrace：{holder} 新发现 {} 个侵权页面，{} 个已删除",
            new.len(),
            removed.len()
        )
    } else {
        format!(
            "Copytrace: {} new infringing page(s), {} removed, for {holder}",
            new.len(),
            removed.len()
        )
    };
    let mut text = String::new();
    let mut section = |title: &str, events: &[&AlertEvent]| {
        if events.is_empty() {
            return;
        }
        text.push_str(title);
        text.push('\n');
        for e in events {
            let review = match (zh, e.review) {
                (true, copytrace_store::Review::Pending) => "（待审核）",
                (false, copytrace_store::Review::Pending) => " (waiting for review)",
                _ => "",
            };
            let when = e
                .removed_at
                .unwrap_or(e.first_seen)
                .format("%Y-%m-%d %H:%M UTC");
            text.push_str(&format!(
                "- {} 《{}》 ({}) score {:.2}{review}, {when}, match {}\n",
                e.page_url, e.work_title, e.work_external_id, e.score, e.match_id
            ));
        }
        text.push('\n');
    };
    if zh {
        section("新发现的侵权页面：", &new);
        section("已删除的侵权页面：", &removed);
        text.push_str(&format!(
            "证据包：copytrace evidence 匹配编号 --out 目录\n投递编号：{}\n",
            delivery.delivery_key
        ));
    } else {
        section("New infringing pages:", &new);
        section("Copies found removed:", &removed);
        text.push_str(&format!(
            "Evidence: copytrace evidence MATCH_ID --out DIR\nDelivery: {}\n",
            delivery.delivery_key
        ));
    }
    (subject, text)
}

/// Enqueues the `alerts` job now (once: while one is pending, nothing more is queued). Crawl
/// and dedup jobs call this when they end.
pub async fn enqueue(store: &dyn Store) -> Result<Id> {
    enqueue_at(store, Utc::now(), "alerts").await
}

async fn enqueue_at(store: &dyn Store, run_at: DateTime<Utc>, key: &str) -> Result<Id> {
    Ok(store
        .enqueue_job(&NewJob {
            kind: ALERTS.to_owned(),
            payload: serde_json::Value::Null,
            dedup_key: Some(key.to_owned()),
            run_at,
            max_attempts: 3,
        })
        .await?)
}

/// Runs `alerts` jobs (on crawl workers, which reach the outside world).
pub struct AlertJobs {
    alerter: Alerter,
}

impl AlertJobs {
    /// A handler sending with `alerter`.
    pub fn new(alerter: Alerter) -> Self {
        Self { alerter }
    }
}

#[async_trait::async_trait]
impl JobHandler for AlertJobs {
    fn kinds(&self) -> Vec<String> {
        vec![ALERTS.to_owned()]
    }

    async fn run(&self, _job: &Job) -> std::result::Result<String, JobError> {
        let report = self
            .alerter
            .run(Utc::now())
            .await
            .map_err(|e| JobError::from(crate::error::one_line(&e)))?;
        // The daily step of notice follow-up: the job runs after every crawl and dedup run,
        // and each step (reminder, escalations, delisting) happens once however often it runs. A failure is
        // logged and said in the summary; the alerts already delivered stand.
        let settings = &self.alerter.settings;
        let follow_up = crate::sending::follow_up(
            self.alerter.store.as_ref(),
            settings,
            &settings.follow_up,
            "scheduler",
            Utc::now(),
        )
        .await;
        let follow_up = match follow_up {
            Ok(done) => {
                for failure in &done.failures {
                    tracing::warn!("notice follow-up: {failure}");
                }
                format!(
                    "; notices: {} reminded, {} escalated ({} without an abuse contact), {} \
                     to a CDN, {} delisting, {} failed",
                    done.reminded.len(),
                    done.escalated.len() + done.escalated_without_contact.len(),
                    done.escalated_without_contact.len(),
                    done.cdn_escalated.len(),
                    done.delisted.len(),
                    done.failures.len()
                )
            }
            Err(error) => {
                let error = crate::error::one_line(&error);
                tracing::warn!("notice follow-up failed: {error}");
                format!("; notice follow-up failed: {error}")
            }
        };
        if let Some(due) = report.waiting {
            // A separate key: the running job still holds `alerts`.
            enqueue_at(self.alerter.store.as_ref(), due, "alerts:retry")
                .await
                .map_err(|e| JobError::from(crate::error::one_line(&e)))?;
        }
        Ok(format!("{}{follow_up}", summary(&report)))
    }
}

/// One line saying what a run did.
pub fn summary(report: &AlertReport) -> String {
    let mut line = format!(
        "{} alert(s) gathered, {} delivered",
        report.gathered, report.delivered
    );
    if !report.failures.is_empty() {
        line.push_str(&format!(
            ", {} failed ({})",
            report.failures.len(),
            report.failures.join("; ")
        ));
    }
    if let Some(due) = report.waiting {
        line.push_str(&format!(
            ", next retry at {}",
            due.format("%Y-%m-%d %H:%M:%S UTC")
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // RFC 4231 has no test of this exact message; the value is checked against Python's
        // hmac.new(b"key", b"1700000000.{}", "sha256").hexdigest().
        assert_eq!(
            sign("key", "1700000000", "{}"),
            "9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
        );
    }

    #[test]
    fn retries_back_off_to_six_hours() {
        assert_eq!(backoff(0), chrono::Duration::minutes(1));
        assert_eq!(backoff(3), chrono::Duration::minutes(8));
        assert_eq!(backoff(20), chrono::Duration::hours(6));
    }
}
