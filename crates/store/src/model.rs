//! Domain records: what the store keeps and hands back.
//!
//! Offsets stored here are always **byte offsets into the original text** (the work file as
//! ingested, the page text as extracted), so evidence can be sliced out of the original without
//! re-running normalization.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// Database identifier of any stored row.
pub type Id = i64;

/// A rights holder: the tenant that owns works and sees only their matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RightsHolder {
    /// Row id.
    pub id: Id,
    /// Unique display name.
    pub name: String,
    /// When the holder was first registered.
    pub created_at: DateTime<Utc>,
}

/// One window of a work with its fingerprint, as produced by `copytrace-fingerprint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentFingerprint {
    /// Position of the window in the work, starting at 0.
    pub ordinal: u32,
    /// Byte offset of the window's first character in the original work text.
    pub start: u32,
    /// Byte offset just past the window's last character in the original work text.
    pub end: u32,
    /// 64-bit SimHash of the window.
    pub simhash: u64,
}

/// A document-level fingerprint of a work by one algorithm, tagged with the algorithm's
/// version so a changed algorithm is noticed and the work re-fingerprinted, never compared
/// across versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmFingerprint {
    /// Name of the algorithm (`copytrace_fingerprint::Algorithm::name`).
    pub algorithm: String,
    /// Version of the algorithm's output (`copytrace_fingerprint::Algorithm::version`).
    pub version: u32,
    /// The fingerprint, serialized by the fingerprint crate; the store does not interpret it.
    pub fingerprint: serde_json::Value,
}

/// A work to add or replace in the library.
#[derive(Debug, Clone)]
pub struct NewWork {
    /// Owner of the work.
    pub rights_holder_id: Id,
    /// The holder's own identifier for the work (the file stem for `library add`).
    pub external_id: String,
    /// Human title.
    pub title: String,
    /// Full original text (UTF-8).
    pub content: String,
    /// Hash of `content`, used to decide whether re-adding changed anything.
    pub content_hash: String,
    /// Version of the fingerprint algorithm set that produced `segments`; a different version
    /// forces re-fingerprinting even when the content is unchanged.
    pub fingerprint_version: u32,
    /// Window fingerprints, replacing any previous ones.
    pub segments: Vec<SegmentFingerprint>,
    /// Document-level fingerprints, one per algorithm, replacing any previous ones. A work
    /// whose stored algorithm versions differ from these counts as changed.
    pub fingerprints: Vec<AlgorithmFingerprint>,
    /// Who wrote it, when the catalog says.
    pub author: Option<String>,
    /// When it was first published, when the catalog says: the date a copy can be compared
    /// with.
    pub published_at: Option<DateTime<Utc>>,
    /// Its chapters in order, tiling `content` (empty: the work is one unit), replacing any
    /// previous ones.
    pub chapters: Vec<WorkChapter>,
    /// Hosts licensed to publish this work (beyond the holder's own licensed hosts): `Some`
    /// replaces the stored set, `None` leaves it as it is (a file added without a catalog).
    pub licensed_hosts: Option<Vec<String>>,
}

/// One chapter of a work: a title and the byte range of the work text it covers, so a match's
/// evidence (byte ranges of the work) names the chapters it copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkChapter {
    /// Position in the work, starting at 0.
    pub ordinal: u32,
    /// The chapter's heading (`第七章 雨夜`), empty for untitled front matter.
    pub title: String,
    /// Byte offset of its first character in the work text.
    pub start: u32,
    /// Byte offset just past its last character.
    pub end: u32,
}

/// Whether a work takes part in matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkStatus {
    /// Matched against every page.
    Active,
    /// Taken out of the library (`library rm`): in no index, never matched again; the row
    /// stays so its past matches stay visible as `withdrawn`.
    Withdrawn,
}

impl WorkStatus {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkStatus::Active => "active",
            WorkStatus::Withdrawn => "withdrawn",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "active" => WorkStatus::Active,
            "withdrawn" => WorkStatus::Withdrawn,
            _ => return None,
        })
    }
}

/// A host licensed to publish a rights holder's works (all of them, or one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LicensedHost {
    /// The rights holder who granted the licence.
    pub rights_holder_id: Id,
    /// The one work it covers; `None` for every work of the holder.
    pub work_id: Option<Id>,
    /// The host; its subdomains are licensed too.
    pub host: String,
    /// When it was recorded.
    pub created_at: DateTime<Utc>,
}

/// What [`crate::Store::upsert_work`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOutcome {
    /// A new row was created.
    Created,
    /// An existing row changed (content, title or fingerprints replaced).
    Updated,
    /// The same data was already stored; nothing was written.
    Unchanged,
}

/// Where the library stands, kept by the store in the transaction of every change a candidate
/// index must follow (a work added, its text or fingerprint version replaced, withdrawn,
/// brought back, deleted). An index records the generation it reflects: one row then tells a
/// match worker whether the index is the library's, and whether what it lacks is only works
/// added since (it keeps matching) or a replacement or removal (it must wait for the update).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryState {
    /// The last change.
    pub generation: i64,
    /// The last change that was not an addition: an index older than this may propose text
    /// that is no longer the library's.
    pub rewritten: i64,
    /// The last generation whose works have had the pages that may copy them marked for
    /// matching ([`Store::mark_library_generation`](crate::Store::mark_library_generation)).
    pub marked: i64,
}

/// A work that changed after some generation ([`crate::Store::library_changes_since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryChange {
    /// The work (possibly deleted since).
    pub work_id: Id,
    /// The generation of its last change.
    pub generation: i64,
    /// Whether it takes part in matching now (`false`: withdrawn or deleted).
    pub active: bool,
}

/// A stored work, without its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkSummary {
    /// Row id.
    pub id: Id,
    /// Owner.
    pub rights_holder_id: Id,
    /// The holder's identifier.
    pub external_id: String,
    /// Title.
    pub title: String,
    /// Hash of the content.
    pub content_hash: String,
    /// Fingerprint algorithm version of the stored segments.
    pub fingerprint_version: u32,
    /// Length of the content in bytes.
    pub content_len: u64,
    /// Number of stored segments.
    pub segment_count: u32,
    /// Number of chapters (0: one unit).
    pub chapter_count: u32,
    /// Author, when known.
    pub author: Option<String>,
    /// First publication, when known.
    pub published_at: Option<DateTime<Utc>>,
    /// Active or withdrawn.
    pub status: WorkStatus,
    /// When it was withdrawn; `None` while active.
    pub withdrawn_at: Option<DateTime<Utc>>,
    /// First time the work was added.
    pub created_at: DateTime<Utc>,
    /// Last time the content or fingerprints changed.
    pub updated_at: DateTime<Utc>,
}

/// A stored work with its full text, for verification and evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// Everything but the text.
    pub summary: WorkSummary,
    /// The original text.
    pub content: String,
    /// Its chapters in order (empty: one unit).
    pub chapters: Vec<WorkChapter>,
}

/// One segment fingerprint with the work it belongs to, for loading the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedSegment {
    /// The work.
    pub work_id: Id,
    /// The segment.
    pub segment: SegmentFingerprint,
}

/// A sample of a page's text (`copytrace_fingerprint::sketch`), made from the text whose hash
/// is `content_hash`: what incremental matching reads instead of the page text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSketch {
    /// The page.
    pub page_id: Id,
    /// Hash of the text it was made from.
    pub content_hash: String,
    /// Sketch version (`copytrace_fingerprint::sketch::SKETCH_VERSION`).
    pub version: u32,
    /// The sampled hashes, sorted.
    pub sample: Vec<u32>,
}

/// A crawled site (one host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Row id.
    pub id: Id,
    /// Lower-case host name (with port when not the default).
    pub host: String,
    /// First time a page of this host was stored.
    pub created_at: DateTime<Utc>,
}

/// A fetched page to store.
#[derive(Debug, Clone)]
pub struct NewPage {
    /// Final URL of the page (after redirects); unique key of the page.
    pub url: String,
    /// Page title, if any.
    pub title: Option<String>,
    /// Extracted main text.
    pub text: String,
    /// Hash of `text`.
    pub content_hash: String,
    /// HTTP status of the fetch.
    pub http_status: u16,
    /// When it was fetched.
    pub fetched_at: DateTime<Utc>,
    /// The `ETag` header of the fetch, kept so the next crawl can ask `If-None-Match`.
    pub etag: Option<String>,
    /// The `Last-Modified` header of the fetch, kept so the next crawl can ask
    /// `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// The raw response `text` was extracted from, kept as evidence (see
    /// [`crate::Store::page_capture`]); `None` when the caller has no raw bytes.
    pub capture: Option<NewCapture>,
}

/// The raw response of a fetch, beyond what [`NewPage`] already says (its status and fetch
/// time are the page's): what an evidence package shows a court or a hosting provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCapture {
    /// The URL the crawler asked for (before redirects).
    pub requested_url: String,
    /// The URL that answered, after redirects, as fetched (the page's stored URL is its
    /// normalized form).
    pub final_url: String,
    /// Every response header, in order, as received.
    pub headers: Vec<(String, String)>,
    /// The `encoding_rs` name of the charset the text was decoded with (`"GBK"`).
    pub encoding: String,
    /// The body as received (after HTTP content decoding, before charset decoding).
    pub body: Vec<u8>,
    /// When the text was read from the page as headless Chromium rendered it: the rendered DOM
    /// and the responses its scripts received (see [`crate::Store::page_capture`]).
    pub rendering: Option<NewRendering>,
}

/// A page as headless Chromium rendered it: what the browser showed, beside the bytes served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRendering {
    /// The DOM's HTML once the page settled.
    pub dom: String,
    /// The browser's product and version (`HeadlessChrome/…`).
    pub browser: String,
    /// How long the DOM had to stay unchanged to count as settled, in milliseconds.
    pub settle_quiet_ms: u64,
    /// From navigation to the moment the DOM was read, in milliseconds.
    pub settled_after_ms: u64,
    /// When the DOM was read.
    pub rendered_at: DateTime<Utc>,
    /// Responses over the crawler's count cap, not kept.
    pub responses_not_kept: u64,
    /// The responses the page's scripts received, in the order they arrived.
    pub subresponses: Vec<NewSubresponse>,
}

/// One response a rendered page received besides its own document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSubresponse {
    /// The URL that answered.
    pub url: String,
    /// Chromium's resource type (`Script`, `XHR`, `Fetch`, `Document`…).
    pub resource_type: String,
    /// HTTP status.
    pub http_status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The MIME type Chromium took it for.
    pub mime_type: String,
    /// Whether `body` is the text Chromium decoded, as UTF-8, rather than the bytes received.
    pub decoded_text: bool,
    /// The body, when it was kept.
    pub body: Option<Vec<u8>>,
    /// Why there is no body.
    pub body_note: Option<String>,
}

/// A stored rendering: the DOM of a page as headless Chromium rendered it and the responses
/// its scripts received, kept with the capture of the same text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendering {
    /// The browser's product and version.
    pub browser: String,
    /// How long the DOM had to stay unchanged to count as settled, in milliseconds.
    pub settle_quiet_ms: u64,
    /// From navigation to the moment the DOM was read, in milliseconds.
    pub settled_after_ms: u64,
    /// When the DOM was read.
    pub rendered_at: DateTime<Utc>,
    /// Responses over the crawler's count cap, not kept.
    pub responses_not_kept: u64,
    /// SHA-256 of `dom` (its UTF-8 bytes), lower-case hex, computed when it was stored.
    pub dom_sha256: String,
    /// The rendered DOM's HTML.
    pub dom: String,
    /// The responses, in the order they arrived.
    pub subresponses: Vec<Subresponse>,
}

/// A stored response of a rendered page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subresponse {
    /// Its place in the order of arrival, from 1.
    pub seq: u32,
    /// The URL that answered.
    pub url: String,
    /// Chromium's resource type.
    pub resource_type: String,
    /// HTTP status.
    pub http_status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The MIME type Chromium took it for.
    pub mime_type: String,
    /// Whether `body` is the text Chromium decoded, as UTF-8.
    pub decoded_text: bool,
    /// SHA-256 of `body`, computed when it was stored.
    pub body_sha256: Option<String>,
    /// The body, when it was kept.
    pub body: Option<Vec<u8>>,
    /// Why there is no body.
    pub body_note: Option<String>,
}

/// A stored capture: the raw response one page text was extracted from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCapture {
    /// The page.
    pub page_id: Id,
    /// Hash of the text extracted from it (a match's `evidence_hash` names it).
    pub content_hash: String,
    /// The URL the crawler asked for.
    pub requested_url: String,
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// HTTP status of the response.
    pub http_status: u16,
    /// Response headers, in order.
    pub headers: Vec<(String, String)>,
    /// Charset the text was decoded with.
    pub encoding: String,
    /// When the response arrived.
    pub fetched_at: DateTime<Utc>,
    /// SHA-256 of `body`, lower-case hex, computed when it was stored.
    pub body_sha256: String,
    /// The body, decompressed: byte for byte what was received.
    pub body: Vec<u8>,
    /// The page as headless Chromium rendered it, when the text was read from it; `None` for
    /// pages read without the browser and for captures stored before migration 0022.
    pub rendering: Option<Rendering>,
}

/// An evidence package written for a match: the hash of its manifest, recorded so that a
/// package whose manifest was rewritten (with hashes of altered files) can be told from the one
/// Copytrace wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvidencePackage {
    /// The match it documents.
    pub match_id: Id,
    /// SHA-256 of its `manifest.json`, lower-case hex.
    pub manifest_sha256: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
}

/// A recorded evidence package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidencePackage {
    /// Row id.
    pub id: Id,
    /// The match it documents (kept even if the match is deleted later).
    pub match_id: Id,
    /// SHA-256 of its manifest.
    pub manifest_sha256: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// The RFC 3161 timestamp of its manifest's SHA-256, when a time-stamping authority was
    /// configured ([`crate::Store::timestamp_evidence_package`]).
    pub timestamp: Option<TrustedTimestamp>,
}

/// An RFC 3161 timestamp: a time-stamping authority's signed statement that a SHA-256 digest
/// existed at `gen_time`. Kept so that the proof of time survives the file it was written to;
/// the token proves itself (its signature), the store only keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedTimestamp {
    /// The authority's URL the token came from.
    pub tsa_url: String,
    /// The token's `genTime`: when the authority saw the digest.
    pub gen_time: DateTime<Utc>,
    /// The DER `TimeStampResp` as the authority answered it (what `openssl ts -verify -in`
    /// reads). Left out of JSON listings: it is binary and only useful as a file.
    #[serde(skip)]
    pub token: Vec<u8>,
}

/// A stored page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Row id.
    pub id: Id,
    /// Site the page belongs to.
    pub site_id: Id,
    /// Unique URL.
    pub url: String,
    /// Title, if any.
    pub title: Option<String>,
    /// Extracted main text.
    pub text: String,
    /// Hash of the text.
    pub content_hash: String,
    /// Status of the last fetch.
    pub http_status: u16,
    /// First time this URL was stored.
    pub first_seen: DateTime<Utc>,
    /// Last successful fetch.
    pub last_seen: DateTime<Utc>,
    /// Content hash the last completed match ran on; `None` if never matched. A page whose
    /// `matched_hash` differs from `content_hash` is due for matching.
    pub matched_hash: Option<String>,
    /// Outcome of the latest removal check ([`crate::Store::record_page_check`]); `None` until
    /// the page was checked.
    pub availability: Option<Availability>,
    /// When the latest removal check ran.
    pub availability_checked_at: Option<DateTime<Utc>>,
    /// The page this one is an alias of (the same page under another URL, see
    /// [`crate::Store::set_page_alias`]); `None` for a page that is nobody's alias.
    pub alias_of: Option<Id>,
    /// `ETag` of the fetch that gave the stored text (see [`NewPage::etag`]).
    pub etag: Option<String>,
    /// `Last-Modified` of the fetch that gave the stored text.
    pub last_modified: Option<String>,
}

/// The HTTP validators stored for one page: what a re-crawl sends back to be answered
/// `304 Not Modified` when the page did not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageValidators {
    /// The page's stored URL.
    pub url: String,
    /// `ETag` of the fetch that gave the stored text.
    pub etag: Option<String>,
    /// `Last-Modified` of the fetch that gave the stored text.
    pub last_modified: Option<String>,
}

/// Which pages' validators [`crate::Store::page_validators`] returns: those of a crawl's sites,
/// never the whole page library.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidatorScope {
    /// Sites, as stored (lower-case host, with the port when not the default).
    pub hosts: Vec<String>,
    /// Only pages with a match that is not `rejected` (see [`crate::Store::infringing_pages`]).
    pub infringing_only: bool,
    /// At most this many pages (by id).
    pub limit: u32,
}

/// What [`crate::Store::upsert_page`] did, and the page id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageWrite {
    /// Row id of the page.
    pub id: Id,
    /// Whether the row was created, its text changed, or only `last_seen` moved.
    pub outcome: WriteOutcome,
}

/// One aligned passage: a byte range of the page text copied from a byte range of the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidencePassage {
    /// Start byte in the page text.
    pub page_start: u32,
    /// End byte (exclusive) in the page text.
    pub page_end: u32,
    /// Start byte in the work text.
    pub work_start: u32,
    /// End byte (exclusive) in the work text.
    pub work_end: u32,
}

/// A verified page × work match to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMatch {
    /// The matched work.
    pub work_id: Id,
    /// Calibrated score in [0, 1].
    pub score: f64,
    /// Share of the work's normalized text found on the page, in [0, 1].
    pub coverage: f64,
    /// Share of the page's normalized text copied from the work, in [0, 1].
    pub containment: f64,
    /// Canonical characters of the page verified as copied from the work, boilerplate
    /// excluded: what the report threshold is applied to.
    pub copied_chars: u32,
    /// Method(s) that found and verified it, e.g. `simhash+align`.
    pub method: String,
    /// Evidence passages, in page order.
    pub evidence: Vec<EvidencePassage>,
    /// Whether the caller's certainty gate passed (the score reached the configured
    /// auto-confirm level): a match nobody has decided on yet is then confirmed without a
    /// person, and waits in the review queue otherwise. A person's decision always wins.
    pub auto_confirm: bool,
}

/// Whether a match is reported as an infringement: decided by a person, or by the certainty
/// gate for matches nobody looked at. Separate from [`MatchStatus`], which follows the copy's
/// life online (notice sent, removed); a decision survives re-crawls and re-matching (see
/// [`crate::Store::record_page_matches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Review {
    /// Below the certainty gate and not decided yet: waits in the review queue, not reported.
    Pending,
    /// Reported: confirmed by a person, or automatically above the certainty gate.
    Confirmed,
    /// A person judged it a false positive: not reported again unless the page changes
    /// substantially.
    Rejected,
    /// A person judged the page licensed to carry the work: never reported.
    Licensed,
}

impl Review {
    /// Every review state, in queue order.
    pub const ALL: [Review; 4] = [
        Review::Pending,
        Review::Confirmed,
        Review::Rejected,
        Review::Licensed,
    ];

    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Review::Pending => "pending",
            Review::Confirmed => "confirmed",
            Review::Rejected => "rejected",
            Review::Licensed => "licensed",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Review::ALL.into_iter().find(|r| r.as_str() == value)
    }
}

/// A person's (or the certainty gate's) decision on a match, as [`crate::Store::decide_match`]
/// records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewDecision {
    /// The match decided on.
    pub match_id: Id,
    /// What was decided: `confirmed`, `rejected` or `licensed` (`pending` puts it back in
    /// the queue).
    pub review: Review,
    /// Who decided: a user's e-mail, `cli:<login>`, ...
    pub actor: String,
    /// Why (may be empty).
    pub note: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Only a match of this rights holder's works (tenant isolation): another holder's match
    /// is `NotFound`, as if it did not exist.
    pub rights_holder_id: Option<Id>,
}

/// One recorded decision on a page × work pair: the audit trail of a match's review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// Row id.
    pub id: Id,
    /// The page.
    pub page_id: Id,
    /// The work.
    pub work_id: Id,
    /// The match row decided on (a pair's row can be deleted and found again; the decision
    /// stays with the pair).
    pub match_id: Option<Id>,
    /// What was decided.
    pub review: Review,
    /// Taken by the certainty gate, not a person.
    pub automatic: bool,
    /// Who decided.
    pub actor: String,
    /// Why.
    pub note: String,
    /// Content hash of the page text decided on.
    pub content_hash: String,
    /// Characters copied in that text.
    pub copied_chars: u32,
    /// When.
    pub decided_at: DateTime<Utc>,
}

/// Lifecycle state of a match online.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Found, not yet acted upon.
    Open,
    /// A takedown notice was sent.
    NoticeSent,
    /// The page no longer carries the text.
    Removed,
    /// Derived, never stored: the work was withdrawn from the library after the match was
    /// found. The match stays for the record but is no longer acted upon.
    Withdrawn,
    /// Derived, never stored: the page is on a host licensed to publish the work (or its
    /// subdomain). Left out of reported infringements unless asked for.
    Licensed,
}

impl MatchStatus {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Open => "open",
            MatchStatus::NoticeSent => "notice_sent",
            MatchStatus::Removed => "removed",
            MatchStatus::Withdrawn => "withdrawn",
            MatchStatus::Licensed => "licensed",
        }
    }

    /// Whether a person can set it (`withdrawn` and `licensed` follow from the library).
    pub fn is_review_status(self) -> bool {
        !matches!(self, MatchStatus::Withdrawn | MatchStatus::Licensed)
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "open" => MatchStatus::Open,
            "notice_sent" => MatchStatus::NoticeSent,
            "removed" => MatchStatus::Removed,
            "withdrawn" => MatchStatus::Withdrawn,
            "licensed" => MatchStatus::Licensed,
            _ => return None,
        })
    }
}

/// A stored match joined with what a report needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// Row id.
    pub id: Id,
    /// Page row id.
    pub page_id: Id,
    /// Page URL.
    pub page_url: String,
    /// Page title.
    pub page_title: Option<String>,
    /// Work row id.
    pub work_id: Id,
    /// The holder's identifier of the work.
    pub work_external_id: String,
    /// Work title.
    pub work_title: String,
    /// Owner of the work.
    pub rights_holder_id: Id,
    /// Calibrated score.
    pub score: f64,
    /// Share of the work found on the page.
    pub coverage: f64,
    /// Share of the page copied from the work.
    pub containment: f64,
    /// Canonical characters of the page verified as copied (0 for matches recorded before
    /// this was stored).
    pub copied_chars: u32,
    /// Method(s).
    pub method: String,
    /// Lifecycle state online (derived `withdrawn` and `licensed` included).
    pub status: MatchStatus,
    /// Whether it is reported: see [`Review`].
    pub review: Review,
    /// First time this page × work match was recorded.
    pub first_seen: DateTime<Utc>,
    /// Last time a match run confirmed it.
    pub last_seen: DateTime<Utc>,
    /// When a removal check found the page without the copy (status `removed`); `None`
    /// otherwise.
    pub removed_at: Option<DateTime<Utc>>,
    /// Content hash of the page text the evidence offsets point into: the page's current text,
    /// or an earlier one kept because a re-crawl replaced it ([`crate::Store::evidence_text`]).
    pub evidence_hash: String,
    /// Evidence passages in page order.
    pub evidence: Vec<EvidencePassage>,
    /// The chapters of the work the evidence copies, in chapter order (empty when the work has
    /// no chapters).
    pub chapters: Vec<ChapterCopy>,
    /// Other URLs of the same page (the same text on the same site; see
    /// [`crate::Store::set_page_alias`]), oldest first; empty in paginated listings
    /// ([`crate::Store::match_listing`]), which show pages, not their aliases.
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// How much of one chapter a match copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChapterCopy {
    /// The chapter's position in the work.
    pub ordinal: u32,
    /// Its title.
    pub title: String,
    /// Bytes of the chapter the evidence covers.
    pub copied_bytes: u32,
    /// Share of the chapter's bytes the evidence covers, in [0, 1].
    pub coverage: f64,
}

/// What [`crate::Store::record_page_matches`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictOutcome {
    /// Matches of page × work pairs that had no match before.
    pub new_matches: u64,
    /// `open` and `notice_sent` matches moved to `removed` because the page changed and the
    /// copy is no longer in its text.
    pub removed: u64,
    /// `removed` matches reopened because a newer text of the page carries the copy again.
    pub reopened: u64,
}

/// What a verdict was found against: the library generation the matcher reflected and the
/// matcher itself (see [`crate::Store::record_page_verdict`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictBasis {
    /// The library generation ([`LibraryState::generation`]) the matcher reflected.
    pub generation: i64,
    /// The matcher's identity: its version and settings. Verdicts of different matchers are
    /// never taken for one another.
    pub matcher: String,
}

/// One page's verdict, as [`crate::Store::record_page_verdicts`] records many in one
/// transaction: the arguments of [`crate::Store::record_page_verdict`].
#[derive(Debug, Clone, Copy)]
pub struct PageVerdict<'a> {
    /// The page.
    pub page_id: Id,
    /// The text the verdict is on: nothing is recorded when the page has another text now.
    pub content_hash: &'a str,
    /// The works the page copies.
    pub matches: &'a [NewMatch],
    /// What the verdict was found against (`None`: a verdict nobody reuses).
    pub basis: Option<&'a VerdictBasis>,
    /// When it was found.
    pub at: DateTime<Utc>,
}

/// Another page whose verdict on the same text a page may reuse
/// ([`crate::Store::verified_twin`]).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedTwin {
    /// The page that was verified.
    pub page_id: Id,
    /// What its verdict was found against; its generation is the library's current one.
    pub basis: VerdictBasis,
    /// Its verdict's matches as the matcher gave them, ordered by work, with `auto_confirm`
    /// false: the certainty gate is the caller's to apply.
    pub matches: Vec<NewMatch>,
}

/// Filter for [`crate::Store::list_matches`] and [`crate::Store::stream_matches`]. The default
/// selects every match but those on licensed hosts; [`MatchFilter::reported`] the reported
/// infringements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchFilter {
    /// Only matches of works owned by this holder (tenant isolation).
    pub rights_holder_id: Option<Id>,
    /// Only matches of this work.
    pub work_id: Option<Id>,
    /// Also matches on licensed hosts (status `licensed`), which reports leave out.
    pub include_licensed: bool,
    /// Only matches in these review states (all when empty).
    pub reviews: Vec<Review>,
    /// Only pages on this host or its subdomains.
    pub site: Option<String>,
    /// Only matches first seen at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only matches first seen before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only matches in these listed states (all when empty).
    pub statuses: Vec<MatchStatus>,
    /// Only matches scoring at least this.
    pub min_score: Option<f64>,
}

impl MatchFilter {
    /// The reported infringements: confirmed matches and those waiting for review, not the
    /// rejected ones, and none on licensed hosts. What exports, reports and statistics show
    /// unless asked otherwise.
    pub fn reported() -> Self {
        MatchFilter {
            reviews: vec![Review::Pending, Review::Confirmed],
            ..MatchFilter::default()
        }
    }

    /// Whether a listing with this filter shows `record`.
    pub fn selects(&self, record: &MatchRecord) -> bool {
        (self.include_licensed
            || record.status != MatchStatus::Licensed
            || self.statuses.contains(&MatchStatus::Licensed))
            && self
                .rights_holder_id
                .is_none_or(|id| record.rights_holder_id == id)
            && self.work_id.is_none_or(|id| record.work_id == id)
            && (self.reviews.is_empty() || self.reviews.contains(&record.review))
            && (self.statuses.is_empty() || self.statuses.contains(&record.status))
            && self.since.is_none_or(|t| record.first_seen >= t)
            && self.until.is_none_or(|t| record.first_seen < t)
            && self.min_score.is_none_or(|s| record.score >= s)
            && self
                .site
                .as_deref()
                .is_none_or(|site| crate::rules::url_on_site(&record.page_url, site))
    }
}

/// The order of a [`crate::Store::match_listing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListingOrder {
    /// Most recently found first: what a list of new copies shows.
    #[default]
    Newest,
    /// Highest score first: the review queue, where the strongest candidates are the quickest
    /// to decide.
    HighestScore,
}

/// One page of matches, and whether more follow. There is no total: counting a filter's
/// matches among millions costs far more than reading a page, so a list offers the next page
/// when there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchListing {
    /// Whether more matches follow this page.
    pub more: bool,
    /// This page's matches, without evidence or chapters.
    pub matches: Vec<MatchRecord>,
}

/// The same selection as the statistics count, for listing the matches behind them.
impl From<&StatsFilter> for MatchFilter {
    fn from(filter: &StatsFilter) -> Self {
        MatchFilter {
            rights_holder_id: filter.rights_holder_id,
            work_id: filter.work_id,
            include_licensed: false,
            reviews: filter.reviews.clone(),
            site: filter.site.clone(),
            since: filter.since,
            until: filter.until,
            statuses: filter.statuses.clone(),
            min_score: filter.min_score,
        }
    }
}

/// State of a durable job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a worker (or for its `run_at`).
    Queued,
    /// Claimed by a worker holding a lease.
    Running,
    /// Finished successfully.
    Done,
    /// Failed too often; kept for inspection.
    Dead,
}

impl JobState {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Dead => "dead",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "dead" => JobState::Dead,
            _ => return None,
        })
    }
}

/// A job to enqueue.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// Kind, e.g. `crawl` or `match`.
    pub kind: String,
    /// Kind-specific JSON payload.
    pub payload: serde_json::Value,
    /// Optional key making the enqueue idempotent: a second job with the same key while the
    /// first is queued or running is not created.
    pub dedup_key: Option<String>,
    /// Earliest time to run.
    pub run_at: DateTime<Utc>,
    /// Attempts allowed before the job goes dead.
    pub max_attempts: u32,
}

/// A stored job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Row id.
    pub id: Id,
    /// Kind.
    pub kind: String,
    /// Payload.
    pub payload: serde_json::Value,
    /// State.
    pub state: JobState,
    /// Attempts started so far.
    pub attempts: u32,
    /// Attempts allowed.
    pub max_attempts: u32,
    /// Earliest next run.
    pub run_at: DateTime<Utc>,
    /// Lease expiry while running.
    pub lease_until: Option<DateTime<Utc>>,
    /// Last error message.
    pub last_error: Option<String>,
    /// The key that made its enqueue idempotent, if any.
    pub dedup_key: Option<String>,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When its state, lease or error last changed.
    pub updated_at: DateTime<Utc>,
}

impl Job {
    /// The claim this job was handed out under: what [`crate::Store::complete_job`] and the
    /// other lease operations take, so a worker whose lease expired (and whose job another
    /// worker took over) cannot finish or fail the newer claim.
    pub fn lease(&self) -> JobLease {
        JobLease {
            job_id: self.id,
            attempt: self.attempts,
        }
    }
}

/// One claim of a job: the job and the attempt number it was claimed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLease {
    /// The job.
    pub job_id: Id,
    /// The job's `attempts` right after the claim.
    pub attempt: u32,
}

/// Filter for [`crate::Store::list_jobs`].
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    /// Only jobs of this kind.
    pub kind: Option<String>,
    /// Only jobs in this state.
    pub state: Option<JobState>,
    /// At most this many jobs, newest first (by id); `None` lists all.
    pub limit: Option<u32>,
}

/// How many jobs of one kind are in one state (queue depth for dashboards and metrics).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCount {
    /// Job kind.
    pub kind: String,
    /// State.
    pub state: JobState,
    /// Number of jobs.
    pub count: u64,
}

/// What a schedule starts when it fires, and what a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A crawl of the schedule's seeds with its scope and limits.
    Crawl,
    /// The dedup run: due pages matched against the library, infringing pages re-checked.
    Dedup,
}

impl RunKind {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Crawl => "crawl",
            RunKind::Dedup => "dedup",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "crawl" => RunKind::Crawl,
            "dedup" => RunKind::Dedup,
            _ => return None,
        })
    }
}

/// A schedule: something run by cron.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Row id.
    pub id: Id,
    /// Unique name.
    pub name: String,
    /// What it starts.
    pub kind: RunKind,
    /// Cron expression as the operator wrote it.
    pub cron: String,
    /// IANA time zone the expression is evaluated in.
    pub timezone: String,
    /// Seed URLs (empty for a dedup schedule).
    pub seeds: Vec<String>,
    /// What the run needs besides the seeds (a crawl's scope and limits) as JSON.
    pub config: serde_json::Value,
    /// Whether it fires.
    pub enabled: bool,
    /// Owner (user email or operator name).
    pub owner: Option<String>,
    /// The cron tick it fired last (see [`crate::Store::fire_schedule`]); `None` if it never
    /// fired. Ticks missed while no scheduler ran are counted from here.
    pub last_fired_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change of its definition or enabled flag (not of `last_fired_at`).
    pub updated_at: DateTime<Utc>,
}

/// A schedule to create.
#[derive(Debug, Clone)]
pub struct NewSchedule {
    /// Unique name.
    pub name: String,
    /// What it starts.
    pub kind: RunKind,
    /// Cron expression.
    pub cron: String,
    /// IANA time zone.
    pub timezone: String,
    /// Seed URLs.
    pub seeds: Vec<String>,
    /// Scope and limits.
    pub config: serde_json::Value,
    /// Owner.
    pub owner: Option<String>,
}

/// State of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Its job waits in the queue.
    Queued,
    /// Being worked on.
    Running,
    /// Finished.
    Succeeded,
    /// Gave up with an error.
    Failed,
    /// Stopped on request.
    Cancelled,
}

impl RunState {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Succeeded => "succeeded",
            RunState::Failed => "failed",
            RunState::Cancelled => "cancelled",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "queued" => RunState::Queued,
            "running" => RunState::Running,
            "succeeded" => RunState::Succeeded,
            "failed" => RunState::Failed,
            "cancelled" => RunState::Cancelled,
            _ => return None,
        })
    }

    /// Whether the run has ended (succeeded, failed or cancelled).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            RunState::Succeeded | RunState::Failed | RunState::Cancelled
        )
    }
}

/// Why a run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunTrigger {
    /// Its schedule's cron tick came.
    Schedule,
    /// Its schedule's tick passed while no scheduler ran; fired once for all missed ticks.
    CatchUp,
    /// Started by a person (`schedule run-now`, `crawl`, `dedup`).
    Manual,
}

impl RunTrigger {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunTrigger::Schedule => "schedule",
            RunTrigger::CatchUp => "catch_up",
            RunTrigger::Manual => "manual",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "schedule" => RunTrigger::Schedule,
            "catch_up" => RunTrigger::CatchUp,
            "manual" => RunTrigger::Manual,
            _ => return None,
        })
    }
}

/// A run to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// Crawl or dedup.
    pub kind: RunKind,
    /// The schedule it belongs to, if any.
    pub schedule_id: Option<Id>,
    /// Why it starts.
    pub trigger: RunTrigger,
    /// The cron tick it stands for, if scheduled.
    pub scheduled_for: Option<DateTime<Utc>>,
    /// Creation time (and start time of a run created without a job).
    pub created_at: DateTime<Utc>,
}

/// The counts every run keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    /// Pages fetched (crawl) or matched and re-checked (dedup).
    pub pages_checked: u64,
    /// Page × work matches that did not exist before.
    pub new_matches: u64,
    /// Matches whose copy was found gone (status moved to `removed`).
    pub matches_removed: u64,
    /// Pages or URLs that failed.
    pub errors: u64,
    /// Copies found online again after they were seen removed (their matches reopened).
    #[serde(default)]
    pub matches_reopened: u64,
    /// Other URLs (aliases) of pages found removed that were fetched again before any of them
    /// could be matched on its own (see `copytrace_service::alias_checks`).
    #[serde(default)]
    pub aliases_checked: u64,
    /// Of those, the URLs that still showed the copy: the group's matches stay open under one
    /// of them, with the group's first-seen time.
    #[serde(default)]
    pub aliases_kept: u64,
    /// Of those, the URLs that were gone with their page.
    #[serde(default)]
    pub aliases_removed: u64,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Row id.
    pub id: Id,
    /// Crawl or dedup.
    pub kind: RunKind,
    /// Its schedule, if any (`None` also once the schedule is deleted).
    pub schedule_id: Option<Id>,
    /// Its schedule's name, if it still exists.
    pub schedule_name: Option<String>,
    /// The job that carries it, if it runs through the queue.
    pub job_id: Option<Id>,
    /// Why it started.
    pub trigger: RunTrigger,
    /// Current state.
    pub state: RunState,
    /// The cron tick it stands for, if scheduled.
    pub scheduled_for: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// When work on it began.
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// Its counts so far.
    pub counts: RunCounts,
    /// Kind-specific figures (a crawl's statistics); JSON null when none.
    pub stats: serde_json::Value,
    /// Why it failed.
    pub error: Option<String>,
    /// Whether someone asked to cancel it while it ran.
    pub cancel_requested: bool,
}

/// Filter for [`crate::Store::list_runs`].
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only runs of this kind.
    pub kind: Option<RunKind>,
    /// Only runs of this schedule.
    pub schedule_id: Option<Id>,
    /// Only runs in this state.
    pub state: Option<RunState>,
    /// At most this many (newest first).
    pub limit: Option<u32>,
}

/// A cron tick to fire, see [`crate::Store::fire_schedule`].
#[derive(Debug, Clone)]
pub struct ScheduleFire {
    /// The schedule.
    pub schedule_id: Id,
    /// The `last_fired_at` the caller read and computed the tick from: the fire happens only
    /// if the schedule still has it (compare-and-set).
    pub expected_last_fired_at: Option<DateTime<Utc>>,
    /// The tick fired: the schedule's new `last_fired_at` and the run's `scheduled_for`.
    pub scheduled_for: DateTime<Utc>,
    /// The run to create (its `schedule_id` and `scheduled_for` must agree with the above).
    pub run: NewRun,
    /// The job that carries the run.
    pub job: NewJob,
}

/// The run and job a fire created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiredRun {
    /// The run's id.
    pub run_id: Id,
    /// The job's id.
    pub job_id: Id,
}

/// Outcome of a removal check of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// The page answered and still carries the copy.
    Online,
    /// The page is gone: 404 or 410, or its host no longer resolves.
    Gone,
    /// The page answered 2xx but the copied text is no longer on it.
    SoftRemoved,
    /// No verdict: timeout, connection refused, 5xx... The matches keep their state.
    Unreachable,
}

impl Availability {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Availability::Online => "online",
            Availability::Gone => "gone",
            Availability::SoftRemoved => "soft_removed",
            Availability::Unreachable => "unreachable",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "online" => Availability::Online,
            "gone" => Availability::Gone,
            "soft_removed" => Availability::SoftRemoved,
            "unreachable" => Availability::Unreachable,
            _ => return None,
        })
    }
}

/// A removal check to record, see [`crate::Store::record_page_check`].
#[derive(Debug, Clone, PartialEq)]
pub struct PageCheck {
    /// The page checked.
    pub page_id: Id,
    /// The run that checked it, if any.
    pub run_id: Option<Id>,
    /// When.
    pub checked_at: DateTime<Utc>,
    /// The verdict for the page as a whole.
    pub availability: Availability,
    /// The final HTTP status, when the server answered.
    pub http_status: Option<u16>,
    /// One line saying why (`HTTP 404`, `could not resolve host`, `2 of 3 works gone`).
    pub detail: String,
    /// Works whose copy was found on the page again: their `removed` matches reopen.
    pub still_present: Vec<Id>,
    /// Works whose copy is no longer on the page: their `open` and `notice_sent` matches become
    /// `removed`.
    pub removed: Vec<Id>,
}

/// What [`crate::Store::record_page_check`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCheckOutcome {
    /// Matches moved to `removed`.
    pub removed: u64,
    /// `removed` matches reopened because the copy is back.
    pub reopened: u64,
}

/// A stored removal check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCheckRecord {
    /// Row id.
    pub id: Id,
    /// The page.
    pub page_id: Id,
    /// The run that checked it.
    pub run_id: Option<Id>,
    /// When.
    pub checked_at: DateTime<Utc>,
    /// Verdict.
    pub availability: Availability,
    /// Final HTTP status, if any.
    pub http_status: Option<u16>,
    /// Why.
    pub detail: String,
}

/// A page with matches worth re-checking (any match not `rejected` in review).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfringingPage {
    /// The page.
    pub page_id: Id,
    /// Its URL.
    pub url: String,
    /// Hash of its stored text.
    pub content_hash: String,
    /// `ETag` of the fetch that gave the stored text, so a removal check can be conditional.
    pub etag: Option<String>,
    /// `Last-Modified` of the fetch that gave the stored text.
    pub last_modified: Option<String>,
    /// The works it was matched to (not rejected), ascending.
    pub work_ids: Vec<Id>,
    /// Those of `work_ids` whose evidence points into an earlier text of the page, not into the
    /// stored one: the page changed since their copy was found, so the stored text may not
    /// carry it. Ascending.
    pub stale_evidence: Vec<Id>,
}

/// Role of a user of the admin web and API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Full access.
    Admin,
    /// Schedules and watches crawls.
    Operator,
    /// Reads statistics and exports.
    Analyst,
    /// Sees only the matches of their own works.
    RightsHolder,
}

impl Role {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Operator => "operator",
            Role::Analyst => "analyst",
            Role::RightsHolder => "rights_holder",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "admin" => Role::Admin,
            "operator" => Role::Operator,
            "analyst" => Role::Analyst,
            "rights_holder" => Role::RightsHolder,
            _ => return None,
        })
    }
}

/// A user account. The password is stored only as an argon2 PHC string produced by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// Row id.
    pub id: Id,
    /// Unique, lower-cased login.
    pub email: String,
    /// Argon2 PHC hash.
    #[serde(skip_serializing)]
    pub password_hash: String,
    /// Role.
    pub role: Role,
    /// The holder a `RightsHolder` user belongs to.
    pub rights_holder_id: Option<Id>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A user to create.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Login.
    pub email: String,
    /// Argon2 PHC hash.
    pub password_hash: String,
    /// Role.
    pub role: Role,
    /// Holder for `RightsHolder` users.
    pub rights_holder_id: Option<Id>,
}

/// Which matches statistics count ([`crate::Store::work_stats`] and the other statistics).
/// Matches on licensed hosts and of withdrawn works are never counted: they are not
/// infringements to act on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsFilter {
    /// Only this rights holder's works (tenant isolation).
    pub rights_holder_id: Option<Id>,
    /// Only this work.
    pub work_id: Option<Id>,
    /// Only pages on this host or its subdomains (lower-case, as sites are stored).
    pub site: Option<String>,
    /// Only matches first seen at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only matches first seen before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only matches in these lifecycle states (`open`, `notice_sent`, `removed`; all when
    /// empty).
    pub statuses: Vec<MatchStatus>,
    /// Only matches in these review states (all when empty).
    pub reviews: Vec<Review>,
    /// Only matches scoring at least this.
    pub min_score: Option<f64>,
}

/// Copies of one work, as [`crate::Store::work_stats`] counts them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkStats {
    /// The work.
    pub work_id: Id,
    /// The holder's identifier of the work.
    pub external_id: String,
    /// Its title.
    pub title: String,
    /// Its owner.
    pub rights_holder_id: Id,
    /// When it was published (catalog), if known.
    pub published_at: Option<DateTime<Utc>>,
    /// When it entered the library.
    pub created_at: DateTime<Utc>,
    /// Pages carrying a copy.
    pub pages: u64,
    /// Sites (hosts) carrying a copy.
    pub sites: u64,
    /// Best score of its matches.
    pub best_score: f64,
    /// Mean score of its matches.
    pub mean_score: f64,
    /// Largest share of the work found on one page.
    pub best_coverage: f64,
    /// When the first copy was seen.
    pub first_seen: DateTime<Utc>,
    /// When a copy was last seen.
    pub last_seen: DateTime<Utc>,
    /// Copies (page × work matches) still online: `open` or `notice_sent`.
    pub online: u64,
    /// Copies found removed.
    pub removed: u64,
}

/// Copies on one site (host), as [`crate::Store::site_stats`] counts them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteStats {
    /// The host, as stored (lower-case, with a port when not the default).
    pub host: String,
    /// Pages carrying a copy.
    pub pages: u64,
    /// Works copied.
    pub works: u64,
    /// Copies (page × work matches).
    pub copies: u64,
    /// Copies found removed.
    pub removed: u64,
    /// Copies a notice was sent for and not (yet) found removed.
    pub notice_sent: u64,
    /// When its first copy was seen.
    pub first_seen: DateTime<Utc>,
    /// When a copy was last seen.
    pub last_seen: DateTime<Utc>,
}

/// How long one copy stayed online: first seen, and removed (or last seen online).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyLifetime {
    /// The work copied (so sites' works can be counted per registered domain).
    pub work_id: Id,
    /// When the copy was first seen.
    pub first_seen: DateTime<Utc>,
    /// When it was last seen online.
    pub last_seen: DateTime<Utc>,
    /// When it was found removed, if it was.
    pub removed_at: Option<DateTime<Utc>>,
}

/// One day of activity, as [`crate::Store::daily_stats`] counts it (days in UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyStats {
    /// The day, `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Matches first seen that day.
    pub new_matches: u64,
    /// Copies found removed that day.
    pub removals: u64,
    /// Pages first stored that day (of the filter's site, when it names one).
    pub pages_crawled: u64,
}

/// Copies of one rights holder's works, as [`crate::Store::holder_stats`] counts them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderStats {
    /// The rights holder.
    pub rights_holder_id: Id,
    /// Its name.
    pub name: String,
    /// Its works with at least one copy.
    pub works_copied: u64,
    /// Pages carrying a copy.
    pub pages: u64,
    /// Sites carrying a copy.
    pub sites: u64,
    /// Copies (page × work matches).
    pub copies: u64,
    /// Copies confirmed (reportable in notices).
    pub confirmed: u64,
    /// Copies waiting for review.
    pub pending: u64,
    /// Copies found removed.
    pub removed: u64,
}

/// The first copy of a work on one site, for time to piracy ([`crate::Store::first_copies`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstCopy {
    /// The work.
    pub work_id: Id,
    /// Its identifier.
    pub external_id: String,
    /// The site.
    pub host: String,
    /// When the work was published (catalog), if known.
    pub published_at: Option<DateTime<Utc>>,
    /// When it entered the library (stands in for a publication time the catalog lacks).
    pub created_at: DateTime<Utc>,
    /// When its first copy on this site was seen.
    pub first_seen: DateTime<Utc>,
}

/// Where a takedown notice stands.
///
/// draft → sending → sent → acknowledged → removal_verified (the "removed" state: every copy
/// found gone) / partially_removed / ignored → escalated. Removal checks move sent notices to
/// removal_verified and partially_removed; `copytrace notice send` moves drafts through
/// sending to sent; follow-up escalates; people set the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeStatus {
    /// Written, not sent yet.
    Draft,
    /// Its mail is being sent, or a send was interrupted before it was known to have arrived:
    /// recorded before the SMTP exchange so that a crash never sends it twice unnoticed.
    Sending,
    /// Sent; its copies are `notice_sent` until a check finds them removed.
    Sent,
    /// The site answered that it received the notice.
    Acknowledged,
    /// Every copy it lists was found removed (the notice's "removed" state).
    RemovalVerified,
    /// Some of its copies were found removed, others are still online.
    PartiallyRemoved,
    /// The site did not react; kept for the record.
    Ignored,
    /// The host's abuse desk was told (or would have been: see the history's note).
    Escalated,
    /// The last step of follow-up: the copies are still online after the escalation, so the
    /// search engines' delisting lists of the notice were made and handed to the rights holder
    /// to submit (Google's, Bing's and Baidu's forms take no mail).
    Delisting,
}

impl NoticeStatus {
    /// Every status.
    pub const ALL: [NoticeStatus; 9] = [
        NoticeStatus::Draft,
        NoticeStatus::Sending,
        NoticeStatus::Sent,
        NoticeStatus::Acknowledged,
        NoticeStatus::RemovalVerified,
        NoticeStatus::PartiallyRemoved,
        NoticeStatus::Ignored,
        NoticeStatus::Escalated,
        NoticeStatus::Delisting,
    ];

    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeStatus::Draft => "draft",
            NoticeStatus::Sending => "sending",
            NoticeStatus::Sent => "sent",
            NoticeStatus::Acknowledged => "acknowledged",
            NoticeStatus::RemovalVerified => "removal_verified",
            NoticeStatus::PartiallyRemoved => "partially_removed",
            NoticeStatus::Ignored => "ignored",
            NoticeStatus::Escalated => "escalated",
            NoticeStatus::Delisting => "delisting",
        }
    }

    /// Parses the stored value. `removed` is accepted for `removal_verified`, the name the
    /// issue and people use for it.
    pub fn parse(value: &str) -> Option<Self> {
        if value == "removed" {
            return Some(NoticeStatus::RemovalVerified);
        }
        NoticeStatus::ALL.into_iter().find(|s| s.as_str() == value)
    }

    /// Whether the notice went out (or is on its way): the states follow-up and removal
    /// checks care about.
    pub fn was_sent(self) -> bool {
        !matches!(self, NoticeStatus::Draft | NoticeStatus::Sending)
    }
}

/// A move of a notice to another status by a person or a process, recorded in its history
/// ([`crate::Store::set_notice_status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeStatusChange {
    /// The notice.
    pub id: Id,
    /// Where it goes.
    pub status: NoticeStatus,
    /// Only a notice of this holder (`NotFound` otherwise); any when `None`.
    pub rights_holder_id: Option<Id>,
    /// Who moves it: `cli:LOGIN`, `web`, `scheduler`, …
    pub actor: String,
    /// Why, in the actor's words.
    pub note: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
}

/// One step in a notice's history: a status change, or a reminder (same status on both
/// sides), with when and who.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeStep {
    /// The notice.
    pub notice_id: Id,
    /// Its status before.
    pub from: NoticeStatus,
    /// Its status after.
    pub to: NoticeStatus,
    /// When.
    pub at: DateTime<Utc>,
    /// Who or what: `cli:LOGIN`, `web`, `removal-check`, `scheduler`.
    pub actor: String,
    /// What happened, in words (recipients, Message-ID, why).
    pub note: Option<String>,
}

/// Why a mail about a notice is sent: each at most once per notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailPurpose {
    /// The notice itself, to the site's contacts.
    Notice,
    /// The one reminder after some days without removal.
    Reminder,
    /// The one escalation to the host's abuse contact.
    Escalation,
    /// The one escalation to the site's CDN (its contacts of kind `cdn`), alongside the host's.
    CdnEscalation,
    /// The search-engine delisting step: the notice's URL lists for Google, Bing and Baidu,
    /// mailed to the rights holder (or recorded as made, `skipped`, when it has no e-mail).
    Delisting,
}

impl MailPurpose {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            MailPurpose::Notice => "notice",
            MailPurpose::Reminder => "reminder",
            MailPurpose::Escalation => "escalation",
            MailPurpose::CdnEscalation => "cdn_escalation",
            MailPurpose::Delisting => "delisting",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        [
            MailPurpose::Notice,
            MailPurpose::Reminder,
            MailPurpose::Escalation,
            MailPurpose::CdnEscalation,
            MailPurpose::Delisting,
        ]
        .into_iter()
        .find(|p| p.as_str() == value)
    }
}

/// Where a mail about a notice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailState {
    /// Recorded before the SMTP exchange, not finished: on its way, or interrupted (a crash)
    /// with its fate unknown.
    Sending,
    /// The SMTP server accepted it.
    Sent,
    /// The server or the connection refused it: nothing was delivered.
    Refused,
    /// Nobody to write to; recorded as done (an escalation without an abuse contact).
    Skipped,
    /// Was stuck in `sending` and a person gave it up to send again (`--force`).
    Abandoned,
}

impl MailState {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            MailState::Sending => "sending",
            MailState::Sent => "sent",
            MailState::Refused => "refused",
            MailState::Skipped => "skipped",
            MailState::Abandoned => "abandoned",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        [
            MailState::Sending,
            MailState::Sent,
            MailState::Refused,
            MailState::Skipped,
            MailState::Abandoned,
        ]
        .into_iter()
        .find(|s| s.as_str() == value)
    }
}

/// A mail about a notice, recorded before it is sent ([`crate::Store::begin_notice_mail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNoticeMail {
    /// The notice.
    pub notice_id: Id,
    /// Why.
    pub purpose: MailPurpose,
    /// The `Message-ID` it is sent with (unique).
    pub message_id: String,
    /// To whom, in order (empty for an escalation with nobody to write to).
    pub recipients: Vec<String>,
    /// Give up a notice mail stuck in `sending` and record this one instead.
    pub force: bool,
    /// Who sends it (recorded in the history).
    pub actor: String,
    /// When.
    pub at: DateTime<Utc>,
    /// SHA-256 of the text mailed, lower-case hex, when it was timestamped.
    pub body_sha256: Option<String>,
    /// The RFC 3161 timestamp of `body_sha256`, when a time-stamping authority is configured.
    pub timestamp: Option<TrustedTimestamp>,
}

/// A stored mail about a notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeMail {
    /// Row id.
    pub id: Id,
    /// The notice.
    pub notice_id: Id,
    /// Why.
    pub purpose: MailPurpose,
    /// Its `Message-ID`.
    pub message_id: String,
    /// To whom, in order.
    pub recipients: Vec<String>,
    /// Where it stands.
    pub state: MailState,
    /// When it was recorded (just before the SMTP exchange).
    pub started_at: DateTime<Utc>,
    /// When the exchange ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// Why it was refused.
    pub error: Option<String>,
    /// SHA-256 of the text mailed, lower-case hex, when it was timestamped.
    pub body_sha256: Option<String>,
    /// The RFC 3161 timestamp of `body_sha256`, when a time-stamping authority was configured.
    pub timestamp: Option<TrustedTimestamp>,
}

/// What [`crate::Store::begin_notice_mail`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailClaim {
    /// Recorded as `sending`: send it now, then [`crate::Store::finish_notice_mail`].
    Claimed(Id),
    /// A mail of this purpose exists already (sent, skipped, or stuck in `sending`): send
    /// nothing.
    Exists(NoticeMail),
}

/// How the SMTP exchange of a claimed mail ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailOutcome {
    /// Accepted by the server.
    Sent,
    /// Refused before it could be delivered (the error): a new attempt may follow.
    Refused(String),
    /// Not sent, on purpose, and done (an escalation with nobody to write to).
    Skipped,
}

/// The end of a claimed mail ([`crate::Store::finish_notice_mail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailEnd {
    /// The mail, as [`MailClaim::Claimed`] named it.
    pub mail_id: Id,
    /// How it ended.
    pub outcome: MailOutcome,
    /// Who sent it (recorded in the history).
    pub actor: String,
    /// What the history says of it.
    pub note: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
}

/// Whom a scheduled report is about and for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "rights_holder_id")]
pub enum ReportAudience {
    /// One rights holder: its works only, mailed to its profile's e-mail.
    Holder(Id),
    /// Staff: every holder's works, mailed to the configured staff recipients.
    Staff,
}

impl ReportAudience {
    /// The value stored in the database: `holder:ID` or `staff`.
    pub fn key(self) -> String {
        match self {
            ReportAudience::Holder(id) => format!("holder:{id}"),
            ReportAudience::Staff => "staff".to_owned(),
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "staff" => Some(ReportAudience::Staff),
            _ => value
                .strip_prefix("holder:")?
                .parse()
                .ok()
                .map(ReportAudience::Holder),
        }
    }
}

/// Where a report mail stands ([`crate::Store::begin_report_mail`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportMailState {
    /// Recorded before the SMTP exchange, not finished: on its way, or interrupted with its
    /// fate unknown (never sent again by itself).
    Sending,
    /// The SMTP server accepted it.
    Sent,
    /// Nothing was delivered (the error says why): it may be sent again.
    Refused,
    /// Was stuck in `sending` and a person gave it up to send again (`--force`).
    Abandoned,
}

impl ReportMailState {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportMailState::Sending => "sending",
            ReportMailState::Sent => "sent",
            ReportMailState::Refused => "refused",
            ReportMailState::Abandoned => "abandoned",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        [
            ReportMailState::Sending,
            ReportMailState::Sent,
            ReportMailState::Refused,
            ReportMailState::Abandoned,
        ]
        .into_iter()
        .find(|s| s.as_str() == value)
    }
}

/// A report mail to record before it is sent ([`crate::Store::begin_report_mail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReportMail {
    /// Whom it is about and for.
    pub audience: ReportAudience,
    /// First day of the period (UTC).
    pub period_from: NaiveDate,
    /// The day after its last (UTC): the period is `[period_from, period_to)`.
    pub period_to: NaiveDate,
    /// Its `Message-ID`.
    pub message_id: String,
    /// To whom, in order (at least one).
    pub recipients: Vec<String>,
    /// Give up a mail of the same audience and period stuck in `sending` and record this one.
    pub force: bool,
    /// When.
    pub at: DateTime<Utc>,
}

/// A weekly report mail as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportMail {
    /// Row id.
    pub id: Id,
    /// Whom it is about and for.
    pub audience: ReportAudience,
    /// First day of the period (UTC).
    pub period_from: NaiveDate,
    /// The day after its last.
    pub period_to: NaiveDate,
    /// Its `Message-ID`.
    pub message_id: String,
    /// To whom.
    pub recipients: Vec<String>,
    /// Where it stands.
    pub state: ReportMailState,
    /// When its SMTP exchange began.
    pub started_at: DateTime<Utc>,
    /// When it ended, if it did.
    pub finished_at: Option<DateTime<Utc>>,
    /// Why nothing was delivered, or why it was abandoned.
    pub error: Option<String>,
}

/// What [`crate::Store::begin_report_mail`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportClaim {
    /// Recorded as `sending`: send it now, then [`crate::Store::finish_report_mail`].
    Claimed(Id),
    /// The report of this audience and period was sent, or is stuck in `sending`: send
    /// nothing.
    Exists(ReportMail),
}

/// What kind of desk an address of a site is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactKind {
    /// Abuse reports (a host's abuse desk): where escalations go.
    Abuse,
    /// Copyright complaints (DMCA agent, 版权投诉).
    Copyright,
    /// Any other contact (webmaster, 联系我们).
    General,
    /// The abuse desk of the CDN in front of the site (Cloudflare's and the like): a further
    /// escalation goes there too, since a CDN hides the host that serves the copies.
    Cdn,
}

impl ContactKind {
    /// The value stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ContactKind::Abuse => "abuse",
            ContactKind::Copyright => "copyright",
            ContactKind::General => "general",
            ContactKind::Cdn => "cdn",
        }
    }

    /// Parses the stored value.
    pub fn parse(value: &str) -> Option<Self> {
        [
            ContactKind::Abuse,
            ContactKind::Copyright,
            ContactKind::General,
            ContactKind::Cdn,
        ]
        .into_iter()
        .find(|k| k.as_str() == value)
    }
}

/// Where a site contact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactSource {
    /// Read from one of the site's own pages.
    Found,
    /// Added by a person; preferred over found ones.
    Operator,
}

/// A contact of a site to store ([`crate::Store::add_site_contacts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSiteContact {
    /// The site as the store names it (lower-case host, with its port when not the default).
    pub host: String,
    /// The address (lower-cased by the store).
    pub email: String,
    /// What kind of desk.
    pub kind: ContactKind,
    /// The page it was found on; `None` for an operator's.
    pub found_on: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
}

/// A stored contact of a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteContact {
    /// Row id.
    pub id: Id,
    /// The site.
    pub host: String,
    /// The address.
    pub email: String,
    /// What kind of desk.
    pub kind: ContactKind,
    /// Found or added by a person.
    pub source: ContactSource,
    /// The page it was found on (found ones only).
    pub found_on: Option<String>,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

/// The ICP filing (备案) number a site shows ([`crate::Store::set_site_icp`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteIcp {
    /// The site.
    pub host: String,
    /// The number as shown, e.g. `京ICP备12345678号`.
    pub icp_number: String,
    /// The page it was read on.
    pub found_on: String,
    /// When it was read.
    pub found_at: DateTime<Utc>,
}

/// A takedown notice to store ([`crate::Store::create_notice`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotice {
    /// Whose works it defends.
    pub rights_holder_id: Id,
    /// The host it is addressed to.
    pub site: String,
    /// `zh` or `en`.
    pub lang: String,
    /// The rendered text.
    pub body: String,
    /// The matches it lists (each must be the holder's).
    pub match_ids: Vec<Id>,
    /// When it was written.
    pub at: DateTime<Utc>,
}

/// A stored takedown notice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    /// Row id.
    pub id: Id,
    /// Whose works it defends.
    pub rights_holder_id: Id,
    /// The host it is addressed to.
    pub site: String,
    /// `zh` or `en`.
    pub lang: String,
    /// Where it stands.
    pub status: NoticeStatus,
    /// The text as rendered.
    pub body: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// When it was marked sent.
    pub sent_at: Option<DateTime<Utc>>,
    /// When a removal check last moved its status.
    pub status_changed_at: Option<DateTime<Utc>>,
    /// The matches it lists.
    pub match_ids: Vec<Id>,
    /// How many of them are found removed now.
    pub removed: u64,
}

/// How an alert reaches a rights holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// An HTTP POST of JSON, signed with HMAC-SHA256.
    Webhook,
    /// An e-mail digest over SMTP.
    Email,
}

/// When an alert target is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertCadence {
    /// After every crawl, match or dedup run that found something new.
    AfterRun,
    /// At most once a day.
    Daily,
}

macro_rules! stored_names {
    ($type:ty { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $type {
            /// The stored name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }

            /// The value of a stored name.
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

stored_names!(AlertKind { Webhook = "webhook", Email = "email" });
stored_names!(AlertCadence { AfterRun = "after_run", Daily = "daily" });
stored_names!(AlertEventKind { New = "new", Removed = "removed" });

/// An alert target to store ([`crate::Store::add_alert_target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAlertTarget {
    /// Whose matches it reports.
    pub rights_holder_id: Id,
    /// Webhook or e-mail.
    pub kind: AlertKind,
    /// The webhook's URL, or the e-mail address.
    pub address: String,
    /// The webhook's HMAC key (empty for e-mail).
    pub secret: String,
    /// When it is told.
    pub cadence: AlertCadence,
    /// `zh` or `en`: the language of an e-mail digest.
    pub lang: String,
    /// Now. Only events from this time on are sent: a new target is not flooded with history.
    pub at: DateTime<Utc>,
}

/// A stored alert target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertTarget {
    /// Row id.
    pub id: Id,
    /// Whose matches it reports.
    pub rights_holder_id: Id,
    /// Webhook or e-mail.
    pub kind: AlertKind,
    /// The webhook's URL, or the e-mail address.
    pub address: String,
    /// The webhook's HMAC key (empty for e-mail). Never printed by listings.
    #[serde(skip_serializing)]
    pub secret: String,
    /// When it is told.
    pub cadence: AlertCadence,
    /// Language of an e-mail digest.
    pub lang: String,
    /// When it was added: events before it are not sent.
    pub created_at: DateTime<Utc>,
    /// When events were last gathered into a delivery.
    pub last_collected_at: Option<DateTime<Utc>>,
}

/// What happened to a reported infringement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertEventKind {
    /// It was found (and is reported: confirmed, or waiting for review).
    New,
    /// A removal check found it gone.
    Removed,
}

/// One event of an alert: a match as it was when the delivery was gathered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertEvent {
    /// New, or removed.
    pub event: AlertEventKind,
    /// The match's id (for `copytrace evidence`, `review`).
    pub match_id: Id,
    /// The infringing page.
    pub page_url: String,
    /// The work's identifier.
    pub work_external_id: String,
    /// The work's title.
    pub work_title: String,
    /// The match's score.
    pub score: f64,
    /// Its review state (`confirmed` or `pending`).
    pub review: Review,
    /// When it was first seen.
    pub first_seen: DateTime<Utc>,
    /// When it was found removed.
    pub removed_at: Option<DateTime<Utc>>,
}

/// A gathered alert: the events one target is told at once, and how sending it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertDelivery {
    /// Row id.
    pub id: Id,
    /// The target.
    pub target_id: Id,
    /// Sent with every attempt so that a receiver can drop repeats.
    pub delivery_key: String,
    /// The events, fixed when gathered (retries send the same).
    pub events: Vec<AlertEvent>,
    /// When it was gathered.
    pub created_at: DateTime<Utc>,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it may be tried next.
    pub next_attempt_at: DateTime<Utc>,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// When it was delivered.
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A web session to store ([`crate::Store::create_session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// SHA-256 (hex) of the cookie's token; the token itself is never stored.
    pub token_hash: String,
    /// Whose session.
    pub user_id: Id,
    /// The token every form of the session carries.
    pub csrf_token: String,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// When it ends.
    pub expires_at: DateTime<Utc>,
}

/// A live web session and its user ([`crate::Store::session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 (hex) of the cookie's token.
    pub token_hash: String,
    /// The token every form of the session carries.
    pub csrf_token: String,
    /// When it ends.
    pub expires_at: DateTime<Utc>,
    /// Its user.
    pub user: User,
}

/// An API token to store ([`crate::Store::create_api_token`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiToken {
    /// Whose token: requests with it act as this user.
    pub user_id: Id,
    /// What it is for, as its maker named it.
    pub name: String,
    /// SHA-256 (hex) of the token; the token itself is never stored.
    pub token_hash: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// A stored API token, as listed (never its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiToken {
    /// Row id, by which it is revoked.
    pub id: Id,
    /// Whose token.
    pub user_id: Id,
    /// What it is for.
    pub name: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// The last request it authenticated, to the minute; `None` before the first.
    pub last_used_at: Option<DateTime<Utc>>,
}

// ----- rights-holder profiles (issue 40) -----

/// What a takedown notice says about its claimant: the rights holder's legal identity, how to
/// reach it, who acts for it and how it signs. China's 条例 art. 14 and 17 U.S.C. §512(c)(3)
/// each require some of these, so a notice is refused while its law's ones are missing; the
/// store keeps them as given (`None` when not given) and leaves checking syntax (e-mail) to the
/// service. One per rights holder at most ([`crate::Store::set_rights_holder_profile`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RightsHolderProfile {
    /// The holder it describes.
    pub rights_holder_id: Id,
    /// The registered name of the company or person (may differ from the display name).
    pub legal_name: Option<String>,
    /// Postal address.
    pub address: Option<String>,
    /// Contact e-mail address.
    pub email: Option<String>,
    /// Contact telephone number.
    pub phone: Option<String>,
    /// The person authorised to act for the holder (who signs the notices).
    pub agent_name: Option<String>,
    /// Their role, e.g. "法务经理" or "Legal counsel".
    pub agent_role: Option<String>,
    /// How to reach them, when not the holder's contact.
    pub agent_contact: Option<String>,
    /// The signature line as text, e.g. `/s/ Zhang San` (an electronic signature in the
    /// sense of §512(c)(3)(A)(i)).
    pub signature: Option<String>,
    /// Default notice language, `zh` or `en`: which law's template a notice uses when none is
    /// chosen.
    pub language: String,
    /// When it was last set.
    pub updated_at: DateTime<Utc>,
}

/// A rights holder's signature as an image, shown under the signature line of its notices
/// (HTML mail, web). Kept apart from [`RightsHolderProfile`] so that the profile, read by every
/// notice, does not carry the bytes, and so that saving the profile's texts keeps the image
/// ([`crate::Store::set_signature_image`]). The service checks the bytes (magic bytes, size);
/// the store accepts only the two types it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureImage {
    /// `image/png` or `image/jpeg`.
    pub content_type: String,
    /// The image file as uploaded.
    pub bytes: Vec<u8>,
}
