//! The API's request and response types: what the OpenAPI document describes. They are the
//! API's own, converted from the store's records, so that the wire format is a decision of this
//! module (the store's types can change without changing the API) and utoipa stays out of the
//! store.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use copytrace_store::Id;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Every error answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in a sentence.
    pub error: String,
}

/// The caller, as the API sees them.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub id: Id,
    pub email: String,
    /// `admin`, `operator`, `analyst` or `rights_holder`.
    pub role: String,
    /// The rights holder whose data alone a `rights_holder` account sees.
    pub rights_holder_id: Option<Id>,
}

/// `GET /api/v1/works`: a title or identifier to look for, and the page.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WorksQuery {
    /// Part of a title or external identifier (case does not matter).
    pub q: Option<String>,
    /// Page number, from 1.
    pub page: Option<String>,
    /// Works per page, 1 to 200 (50 if not given).
    pub per_page: Option<String>,
}

/// A work of the library with how far it is copied.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkItem {
    pub id: Id,
    pub external_id: String,
    pub title: String,
    pub author: Option<String>,
    pub rights_holder_id: Id,
    /// Chapters (0: the work is one unit).
    pub chapters: u32,
    /// `active` or `withdrawn`.
    pub status: String,
    pub created_at: DateTime<Utc>,
    /// Pages with a reported copy.
    pub pages: u64,
    /// Sites with a reported copy.
    pub sites: u64,
}

/// One page of works.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkPage {
    /// Works matching the query, on all pages.
    pub total: u64,
    pub page: u64,
    pub per_page: u32,
    pub works: Vec<WorkItem>,
}

/// One work with its owner and what was found of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkDetail {
    pub id: Id,
    pub external_id: String,
    pub title: String,
    pub author: Option<String>,
    pub rights_holder_id: Id,
    /// The rights holder's name.
    pub rights_holder: String,
    pub chapters: u32,
    pub status: String,
    pub published_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Recorded matches by lifecycle state (`open`, `notice_sent`, `removed`, …).
    pub matches_by_status: BTreeMap<String, usize>,
    /// Hosts licensed to publish it.
    pub licensed_hosts: Vec<String>,
}

/// The filter of matches and statistics, as the web's filter form has it. Every field is
/// optional; a wrong one is a 400 naming it.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FilterParams {
    /// A work id.
    pub work: Option<String>,
    /// A host; its subdomains are included.
    pub site: Option<String>,
    /// Lifecycle state: `open`, `notice_sent`, `removed`, `licensed` or `withdrawn`.
    pub status: Option<String>,
    /// Review state (`pending`, `confirmed`, `rejected`, `licensed`) or `all`; not given: the
    /// reported ones (pending and confirmed).
    pub review: Option<String>,
    /// First day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub since: Option<String>,
    /// Last day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub until: Option<String>,
    /// Lowest score, 0 to 1.
    pub min_score: Option<String>,
}

impl FilterParams {
    /// The web's filter form with these fields.
    pub fn form(&self) -> crate::web::filters::FilterQuery {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        crate::web::filters::FilterQuery {
            work: text(&self.work),
            site: text(&self.site),
            status: text(&self.status),
            review: text(&self.review),
            since: text(&self.since),
            until: text(&self.until),
            min_score: text(&self.min_score),
            page: String::new(),
        }
    }
}

/// `GET /api/v1/matches`: the filter (as [`FilterParams`]), the order and the page.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MatchesQuery {
    /// A work id.
    pub work: Option<String>,
    /// A host; its subdomains are included.
    pub site: Option<String>,
    /// Lifecycle state: `open`, `notice_sent`, `removed`, `licensed` or `withdrawn`.
    pub status: Option<String>,
    /// Review state (`pending`, `confirmed`, `rejected`, `licensed`) or `all`; not given: the
    /// reported ones (pending and confirmed).
    pub review: Option<String>,
    /// First day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub since: Option<String>,
    /// Last day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub until: Option<String>,
    /// Lowest score, 0 to 1.
    pub min_score: Option<String>,
    /// `newest` (first seen, the default) or `score` (highest first, as the review queue).
    pub order: Option<String>,
    /// Page number, from 1.
    pub page: Option<String>,
    /// Matches per page, 1 to 200 (50 if not given).
    pub per_page: Option<String>,
}

impl MatchesQuery {
    /// Its filter fields.
    pub fn filter(&self) -> FilterParams {
        FilterParams {
            work: self.work.clone(),
            site: self.site.clone(),
            status: self.status.clone(),
            review: self.review.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            min_score: self.min_score.clone(),
        }
    }
}

/// A match: a page that copies a work.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchItem {
    pub id: Id,
    pub work_id: Id,
    pub work_external_id: String,
    pub work_title: String,
    pub rights_holder_id: Id,
    pub page_id: Id,
    pub page_url: String,
    pub page_title: Option<String>,
    /// Strength of the match, 0 to 1.
    pub score: f64,
    /// Share of the work the page copies, 0 to 1.
    pub coverage: f64,
    /// Share of the page that is the work, 0 to 1.
    pub containment: f64,
    pub copied_chars: u32,
    /// Which algorithms found and verified it.
    pub method: String,
    /// Lifecycle state: `open`, `notice_sent`, `removed`, `licensed`, `withdrawn`.
    pub status: String,
    /// Review state: `pending`, `confirmed`, `rejected`, `licensed`.
    pub review: String,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    pub removed_at: Option<DateTime<Utc>>,
}

impl From<&copytrace_store::MatchRecord> for MatchItem {
    fn from(m: &copytrace_store::MatchRecord) -> MatchItem {
        MatchItem {
            id: m.id,
            work_id: m.work_id,
            work_external_id: m.work_external_id.clone(),
            work_title: m.work_title.clone(),
            rights_holder_id: m.rights_holder_id,
            page_id: m.page_id,
            page_url: m.page_url.clone(),
            page_title: m.page_title.clone(),
            score: m.score,
            coverage: m.coverage,
            containment: m.containment,
            copied_chars: m.copied_chars,
            method: m.method.clone(),
            status: m.status.as_str().to_owned(),
            review: m.review.as_str().to_owned(),
            first_seen: m.first_seen,
            last_seen: m.last_seen,
            removed_at: m.removed_at,
        }
    }
}

/// One page of matches.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchPage {
    /// Whether another page follows (there is no total: counting millions of matches would
    /// cost more than reading the page).
    pub more: bool,
    pub page: u64,
    pub per_page: u32,
    pub matches: Vec<MatchItem>,
}

/// An aligned passage of a match: where it is in the page and in the work, and both texts.
#[derive(Debug, Serialize, ToSchema)]
pub struct Passage {
    /// Byte offsets in the page's text (the one the evidence was taken from).
    pub page_start: u32,
    pub page_end: u32,
    /// Byte offsets in the work's text.
    pub work_start: u32,
    pub work_end: u32,
    /// The page's passage (`null` when the offsets do not fall in the text).
    pub page_text: Option<String>,
    /// The work's passage.
    pub work_text: Option<String>,
    /// Laundered copies only (method ending in `+laundered`): the page's words that replace
    /// a synonym in the work's passage, as `[page word, work word]` pairs.
    pub substitutions: Vec<[String; 2]>,
}

/// A match with its evidence.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchDetail {
    #[serde(flatten)]
    pub record: MatchItem,
    /// The passages the page copied, page ↔ work, in evidence order.
    pub evidence: Vec<Passage>,
}

/// A decision on matches.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionName {
    /// An infringement: report it.
    Confirm,
    /// A false positive: never report it.
    Reject,
    /// The page may carry the work.
    License,
    /// Back to the review queue.
    Reopen,
}

/// `POST /api/v1/matches/decide`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DecideRequest {
    /// The matches to decide on (1 to 1000). If any is missing or another rights holder's,
    /// the answer is 404 and none is decided.
    pub ids: Vec<Id>,
    pub decision: DecisionName,
    /// Why, kept with each decision's audit record.
    #[serde(default)]
    pub note: String,
}

/// What a decision did.
#[derive(Debug, Serialize, ToSchema)]
pub struct DecideResult {
    pub decision: DecisionName,
    /// The matches decided on.
    pub decided: Vec<Id>,
}

/// `GET /api/v1/stats/works`: copies per work.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkStatsItem {
    pub work_id: Id,
    pub external_id: String,
    pub title: String,
    /// Pages with a copy.
    pub pages: u64,
    /// Sites with a copy.
    pub sites: u64,
    pub best_score: f64,
    /// Copies still online.
    pub online: u64,
    /// Copies found removed.
    pub removed: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// Hours from publication (the catalog's `published_at`) to the first copy; null when the
    /// publication time is unknown.
    pub hours_to_first_copy: Option<f64>,
}

/// `GET /api/v1/stats/sites`: copies per registered domain.
#[derive(Debug, Serialize, ToSchema)]
pub struct SiteStatsItem {
    /// The registered domain (`example.co.uk` for `m.example.co.uk`).
    pub site: String,
    /// Hosts counted in it.
    pub hosts: u64,
    pub pages: u64,
    pub works: u64,
    /// Copies (page × work).
    pub copies: u64,
    pub removed: u64,
    /// Copies with a notice sent, not yet found removed.
    pub notice_sent: u64,
    /// `removed / copies`.
    pub removal_rate: f64,
    /// Median hours from first seen to found removed.
    pub median_hours_to_removal: Option<f64>,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

/// `GET /api/v1/stats/daily`: one UTC day.
#[derive(Debug, Serialize, ToSchema)]
pub struct DailyItem {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub new_matches: u64,
    pub removals: u64,
    pub pages_crawled: u64,
}

/// A takedown notice to a site's operator.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoticeItem {
    pub id: Id,
    pub rights_holder_id: Id,
    pub site: String,
    /// `zh` or `en`.
    pub lang: String,
    /// `draft`, `sending`, `sent`, `acknowledged`, `removal_verified`, `partially_removed`,
    /// `ignored` or `escalated`.
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub status_changed_at: Option<DateTime<Utc>>,
    /// The copies it lists.
    pub match_ids: Vec<Id>,
    /// Of those, how many are found removed.
    pub removed: u64,
}

impl From<&copytrace_store::Notice> for NoticeItem {
    fn from(n: &copytrace_store::Notice) -> NoticeItem {
        NoticeItem {
            id: n.id,
            rights_holder_id: n.rights_holder_id,
            site: n.site.clone(),
            lang: n.lang.clone(),
            status: n.status.as_str().to_owned(),
            created_at: n.created_at,
            sent_at: n.sent_at,
            status_changed_at: n.status_changed_at,
            match_ids: n.match_ids.clone(),
            removed: n.removed,
        }
    }
}

/// A notice with its text.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoticeDetail {
    #[serde(flatten)]
    pub notice: NoticeItem,
    /// The notice's text, ready to send.
    pub body: String,
}

/// `POST /api/v1/notices`: a draft notice of the confirmed copies online on a site.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewNoticeRequest {
    /// The site's host (`pirate.example`); its subdomains are included.
    pub site: String,
    /// `zh` (a Chinese notice under 《信息网络传播权保护条例》第十四条) or `en` (a US notice
    /// under 17 U.S.C. §512(c)(3)); `cn` and `us` name the law directly. Default: the rights
    /// holder's notice language. A notice lacking an element its law requires (a profile
    /// field, an evidence package) is refused, naming it.
    pub lang: Option<String>,
    /// The rights holder's name: required for staff; a rights holder's own is used.
    pub holder: Option<String>,
}

/// A notice's new status, as a person may set it. The removal states (`removal_verified`,
/// `partially_removed`) are set by removal checks and `sending` by sending, never by hand.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoticeStatusName {
    /// Sent to the site (by mail outside Copytrace, or a stuck mail that arrived): its copies
    /// become `notice_sent`.
    Sent,
    /// The site answered that it received it (a sent notice only).
    Acknowledged,
    /// The site did not react (a sent notice only).
    Ignored,
    /// Reported by other means, e.g. to the host (a sent notice only).
    Escalated,
    /// Back to draft (a stuck mail that did not arrive, or to edit it again).
    Draft,
}

/// `POST /api/v1/notices/{id}/status`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NoticeStatusRequest {
    pub status: NoticeStatusName,
    /// Why, kept in the notice's history.
    #[serde(default)]
    pub note: Option<String>,
}

/// A cron schedule.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleItem {
    pub name: String,
    /// `crawl` or `dedup`.
    pub kind: String,
    /// Five fields (or six, seconds first), read in `timezone`.
    pub cron: String,
    /// IANA time zone.
    pub timezone: String,
    pub enabled: bool,
    pub seeds: Vec<String>,
    pub owner: Option<String>,
    /// The next five runs (UTC); empty while paused.
    pub next_runs: Vec<DateTime<Utc>>,
    pub last_fired_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// `POST /api/v1/schedules`: a crawl schedule.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewScheduleRequest {
    /// Unique name.
    pub name: String,
    /// Five fields (or six, seconds first), e.g. `0 3 * * *`.
    pub cron: String,
    /// IANA time zone the expression is read in; `UTC` if not given.
    pub timezone: Option<String>,
    /// Seed URLs (http or https).
    pub seeds: Vec<String>,
    /// Most pages one crawl fetches; the crawl settings' default if not given.
    pub max_pages: Option<usize>,
}

/// `POST /api/v1/schedules/{name}/run`: the run started and the job that carries it out.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStarted {
    pub run_id: i64,
    pub job_id: i64,
}

/// `GET /api/v1/runs`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunsQuery {
    /// Most runs listed, 1 to 200 (50 if not given).
    pub limit: Option<String>,
}

/// A run of a crawl or dedup, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunItem {
    pub id: Id,
    /// `crawl`, `dedup`, …
    pub kind: String,
    /// The schedule that fired it, if any.
    pub schedule: Option<String>,
    /// `schedule` or `manual`.
    pub trigger: String,
    /// `queued`, `running`, `succeeded`, `failed` or `cancelled`.
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub pages_checked: u64,
    pub new_matches: u64,
    pub matches_removed: u64,
    pub errors: u64,
    /// Why it failed.
    pub error: Option<String>,
}

/// One of the caller's API tokens (never the token itself).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenItem {
    pub id: Id,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

// ----- rights-holder profiles (issue 40) -----

/// A rights holder's profile: what its takedown notices say about it. Every field is `null`
/// until given.
#[derive(Debug, Serialize, ToSchema)]
pub struct HolderProfileBody {
    /// The rights holder's id.
    pub id: Id,
    /// Its name in Copytrace.
    pub name: String,
    /// Registered name of the company or person.
    pub legal_name: Option<String>,
    /// Postal address.
    pub address: Option<String>,
    /// Contact e-mail address.
    pub email: Option<String>,
    /// Contact telephone number.
    pub phone: Option<String>,
    /// The person authorised to act for the holder.
    pub agent_name: Option<String>,
    /// Their role.
    pub agent_role: Option<String>,
    /// How to reach them.
    pub agent_contact: Option<String>,
    /// The signature line, as text.
    pub signature: Option<String>,
    /// The type of the signature image (`image/png` or `image/jpeg`), `null` without one; the
    /// image itself is `GET /api/v1/holders/{id}/signature-image`.
    pub signature_image: Option<String>,
    /// Default notice language, `zh` (China's 条例第十四条) or `en` (US §512(c)(3)); `null`
    /// until a profile is set.
    pub language: Option<String>,
    /// When the profile was last set; `null` until it is.
    pub updated_at: Option<DateTime<Utc>>,
}

/// `POST /api/v1/holders/{id}/profile`: each field given replaces the stored one (an empty
/// string clears it); fields left out stay as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HolderProfileRequest {
    /// Registered name.
    pub legal_name: Option<String>,
    /// Postal address.
    pub address: Option<String>,
    /// Contact e-mail address (checked for its form).
    pub email: Option<String>,
    /// Contact telephone number (digits and `+ - ( ) .` only).
    pub phone: Option<String>,
    /// The authorised agent's name.
    pub agent_name: Option<String>,
    /// Their role.
    pub agent_role: Option<String>,
    /// How to reach them.
    pub agent_contact: Option<String>,
    /// The signature line, as text.
    pub signature: Option<String>,
    /// `zh` or `en`.
    pub language: Option<String>,
}

// ----- sites and their contacts (issue 40) -----

/// A site (host) with its figures; a rights holder's view counts its own copies and notices.
#[derive(Debug, Serialize, ToSchema)]
pub struct SiteItem {
    /// The host (lower-case, with a port when not the default).
    pub host: String,
    /// Reported copies (pending and confirmed).
    pub copies: u64,
    pub removed: u64,
    /// Copies with a notice sent, not yet found removed.
    pub notice_sent: u64,
    /// `removed / copies` (0 without copies).
    pub removal_rate: f64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
    /// When a page of it was first stored (staff only).
    pub crawled_since: Option<DateTime<Utc>>,
    /// Notices addressed to it.
    pub notices: u64,
}

/// An address notices to a site are mailed to.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactItem {
    pub email: String,
    /// `copyright`, `general`, `abuse` or `cdn` (abuse desks get escalations, and notices only
    /// when the site has no other address; `cdn` ones, the CDN's abuse desk, a further
    /// escalation).
    pub kind: String,
    /// `found` (on one of the site's pages) or `operator` (added by a person; comes first).
    pub source: String,
    /// The page it was found on.
    pub found_on: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// The ICP filing (备案) number a site's pages show.
#[derive(Debug, Serialize, ToSchema)]
pub struct IcpItem {
    pub icp_number: String,
    pub found_on: String,
    pub found_at: DateTime<Utc>,
}

/// A site's contacts, in the order notices use them, and its ICP number.
#[derive(Debug, Serialize, ToSchema)]
pub struct SiteContactsBody {
    pub host: String,
    pub contacts: Vec<ContactItem>,
    pub icp: Option<IcpItem>,
}

/// `POST /api/v1/sites/{host}/contacts`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewContactRequest {
    /// The address (a `mailto:` link is taken for its address).
    pub email: String,
    /// `copyright` (default), `general`, `abuse` or `cdn`.
    pub kind: Option<String>,
}

// ----- licensed hosts and alerts (issue 40) -----

/// A host licensed to publish a rights holder's works (and its subdomains).
#[derive(Debug, Serialize, ToSchema)]
pub struct LicenceItem {
    pub host: String,
    /// The one work it covers; `null` for every work of the holder.
    pub work_id: Option<Id>,
    pub work_external_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// `POST /api/v1/holders/{id}/licensed-hosts`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLicenceRequest {
    /// A host name, URL or `*.host`: all license the host and its subdomains.
    pub host: String,
    /// One work's external id; left out: every work of the holder.
    pub work_external_id: Option<String>,
}

/// `DELETE /api/v1/holders/{id}/licensed-hosts/{host}`: which licence.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LicenceQuery {
    /// The work's external id of a licence of one work; left out: the licence of every work.
    pub work_external_id: Option<String>,
}

/// An alert target with how its deliveries stand (its secret is never shown again).
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertItem {
    pub id: Id,
    /// `webhook` or `email`.
    pub kind: String,
    /// The webhook's URL or the e-mail address.
    pub address: String,
    /// `after_run` or `daily`.
    pub cadence: String,
    /// `zh` or `en`: the e-mail digest's language.
    pub lang: String,
    pub created_at: DateTime<Utc>,
    pub delivered: u64,
    pub waiting: u64,
    pub failed: u64,
    pub last_error: Option<String>,
}

/// `POST /api/v1/holders/{id}/alerts`: adding the same kind and address again updates it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAlertRequest {
    /// `webhook` or `email`.
    pub kind: String,
    /// An http(s) URL, or an e-mail address.
    pub address: String,
    /// At most one digest a day (default: after every run).
    #[serde(default)]
    pub daily: bool,
    /// `zh` (default) or `en`.
    pub lang: Option<String>,
    /// A webhook's signing key (at least 16 characters); left out: a random one.
    pub secret: Option<String>,
}

/// The target added, with a webhook's signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertAdded {
    #[serde(flatten)]
    pub target: AlertItem,
    /// The webhook's HMAC-SHA256 key (`null` for e-mail): give it to the receiver.
    pub secret: Option<String>,
}

// ----- sending notices (issue 40) -----

/// `POST /api/v1/notices/{id}/send`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendRequestBody {
    /// Send a notice stuck in `sending` again, accepting that the site may get it twice.
    #[serde(default)]
    pub force: bool,
}

/// A mail about a notice.
#[derive(Debug, Serialize, ToSchema)]
pub struct MailItem {
    /// `notice`, `reminder` or `escalation`.
    pub purpose: String,
    /// `sending`, `sent`, `refused`, `skipped` or `abandoned`.
    pub state: String,
    pub message_id: String,
    pub recipients: Vec<String>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
}

/// What a send did: `sent` now, or `already_sent` before (nothing was sent now).
#[derive(Debug, Serialize, ToSchema)]
pub struct SendResult {
    pub notice_id: Id,
    /// `sent` or `already_sent`.
    pub outcome: String,
    pub recipients: Vec<String>,
    pub message_id: String,
}

/// A notice not sent by `send-drafts`, and why.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendFailure {
    pub notice_id: Id,
    pub error: String,
}

/// What `send-drafts` did.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkSendResult {
    pub sent: Vec<SendResult>,
    pub failed: Vec<SendFailure>,
}

/// One step of a notice's history.
#[derive(Debug, Serialize, ToSchema)]
pub struct StepItem {
    pub from: String,
    pub to: String,
    pub at: DateTime<Utc>,
    /// `web:EMAIL`, `api:EMAIL`, `cli:LOGIN`, `removal-check`, `scheduler`.
    pub actor: String,
    pub note: Option<String>,
}

/// A notice's history, oldest first, and its mails.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoticeHistory {
    pub notice_id: Id,
    pub history: Vec<StepItem>,
    pub mails: Vec<MailItem>,
}

// ----- downloads, uploads and more statistics -----

/// `GET /api/v1/exports/{table}`: the format and the filter.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportParams {
    /// `csv` (default, with a BOM for Excel), `json`, `ndjson` or `xlsx`.
    pub format: Option<String>,
    /// A work id.
    pub work: Option<String>,
    /// A host; its subdomains are included.
    pub site: Option<String>,
    /// Lifecycle state: `open`, `notice_sent`, `removed`, `licensed` or `withdrawn`.
    pub status: Option<String>,
    /// Review state or `all`; not given: the reported ones (pending and confirmed).
    pub review: Option<String>,
    /// First day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub since: Option<String>,
    /// Last day, `YYYY-MM-DD` (inclusive) or RFC 3339.
    pub until: Option<String>,
    /// Lowest score, 0 to 1.
    pub min_score: Option<String>,
}

impl ExportParams {
    /// Its filter fields.
    pub fn filter(&self) -> FilterParams {
        FilterParams {
            work: self.work.clone(),
            site: self.site.clone(),
            status: self.status.clone(),
            review: self.review.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            min_score: self.min_score.clone(),
        }
    }
}

/// `POST /api/v1/works`: work files, as `multipart/form-data`.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// One work per file (text, HTML, Markdown or EPUB, any common Chinese encoding); the file
    /// name is its external id. Repeat the field for several.
    #[schema(value_type = Vec<String>, format = Binary)]
    pub files: Vec<u8>,
    /// Staff: the rights holder the works go to (`default` if not given); a rights holder's
    /// own is used whatever this says.
    pub holder: Option<String>,
}

/// An upload being imported.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportStatus {
    /// Its id, for `GET /api/v1/imports/{id}`.
    pub id: String,
    /// `running`, `done` or `refused`.
    pub state: String,
    pub holder: String,
    pub files: u64,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Steps done and in all while running (0 in all: not known yet).
    pub done: u64,
    pub total: u64,
    /// One per work: what became of it.
    pub works: Vec<ImportedWorkItem>,
    /// Stored pages marked for matching against the new and changed works.
    pub marked_for_matching: u64,
    /// Why nothing was stored, when refused.
    pub problem: Option<String>,
}

/// A work an upload created, updated or found unchanged.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportedWorkItem {
    pub id: Id,
    pub external_id: String,
    pub title: String,
    /// `created`, `updated` or `unchanged`.
    pub outcome: String,
}

/// Copies per rights holder.
#[derive(Debug, Serialize, ToSchema)]
pub struct HolderStatsItem {
    pub rights_holder_id: Id,
    pub name: String,
    pub works_copied: u64,
    pub pages: u64,
    pub sites: u64,
    pub copies: u64,
    pub confirmed: u64,
    pub pending: u64,
    pub removed: u64,
}

/// The first copy of a work on a site.
#[derive(Debug, Serialize, ToSchema)]
pub struct FirstCopyItem {
    pub work_id: Id,
    pub work_external_id: String,
    pub site: String,
    pub published_at: Option<DateTime<Utc>>,
    pub first_copy_at: DateTime<Utc>,
    /// Hours from publication to that copy; `null` when the publication time is unknown.
    pub hours: Option<f64>,
}

/// A delay for one work (its external id) or one site (the median over its works).
#[derive(Debug, Serialize, ToSchema)]
pub struct DelayItem {
    pub key: String,
    pub hours: f64,
    pub works: u64,
}

/// A distribution of delays in hours.
#[derive(Debug, Serialize, ToSchema)]
pub struct DistributionItem {
    pub count: u64,
    pub p10: Option<f64>,
    pub median: Option<f64>,
    pub p90: Option<f64>,
    /// `[label, count]`: within an hour, a day, a week, a month, later.
    pub buckets: Vec<(String, u64)>,
}

/// Time from publication to piracy.
#[derive(Debug, Serialize, ToSchema)]
pub struct TimeToPiracyBody {
    pub copies: Vec<FirstCopyItem>,
    pub works: Vec<DelayItem>,
    pub sites: Vec<DelayItem>,
    pub overall: DistributionItem,
    /// External ids of copied works whose publication time is unknown (left out of the
    /// delays).
    pub publication_unknown: Vec<String>,
}
