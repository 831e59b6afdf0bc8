//! Copytrace storage: the three libraries of the fingerprint-tracking design behind one trait.
//!
//! * the **fingerprint library**: rights holders, works and their window fingerprints;
//! * the **page library**: sites and crawled pages;
//! * the **match library**: page × work matches with scores and evidence passages;
//!
//! plus the operational records every deployment needs (durable jobs, schedules and the history
//! of their runs, removal checks of infringing pages, users).
//!
//! [`Store`] is the only way the rest of Copytrace touches the database. It is object safe
//! (`Arc<dyn Store>`) so the binary chooses the backend exactly once, from the database URL, and
//! nothing else knows which one runs. The SQLite implementation ([`sqlite::SqliteStore`]) is the
//! embedded default for one machine; the PostgreSQL implementation
//! ([`postgres::PostgresStore`]) is the production backend shared by several processes. Both
//! have their own migrations (`migrations/sqlite`, `migrations/postgres`) and pass the same
//! contract tests.
//!
//! Library writes are idempotent: adding the same work or page twice leaves one row, and
//! recording the matches of a page replaces that page's previous verdict instead of appending to
//! it. Jobs are made idempotent by their `dedup_key`.
//!
//! A takedown record is never lost to a re-crawl. Evidence offsets point into a page text, so
//! each match names the text its evidence points into (`evidence_hash`), and a text that some
//! evidence still points into is kept when a re-crawl replaces it ([`Store::evidence_text`]).
//! A copy missing from a page's new text moves its match to `removed`; it is not deleted.
//!
//! Rules every backend keeps, so callers never see which one runs:
//!
//! * timestamps are stored to the **microsecond** (PostgreSQL's `timestamptz` resolution); finer
//!   parts are truncated, so a value with whole microseconds round-trips exactly;
//! * text keys (URLs, external ids, names) are ordered **bytewise**, as SQLite's `BINARY`
//!   collation and PostgreSQL's `COLLATE "C"` do, never by a locale;
//! * e-mail addresses are lower-cased by the store before they are written or looked up;
//! * "does not exist" is always [`StoreError::NotFound`] naming the row (`"work 42"`), and a
//!   refused value is [`StoreError::Invalid`] with a reason a person can act on; both backends
//!   share the validation code, so they refuse the same values with the same words.
//!
//! One difference is PostgreSQL's, not the store's: it cannot hold the NUL character in text, so
//! such a value is `Invalid` there (SQLite stores it). Works and pages never contain one: text
//! files with NUL bytes are refused as binary, and HTML parsing drops them.
//!
//! `tests/contract` holds the executable form of these rules: every test runs once per backend,
//! each on a fresh database.

mod backend;
mod capture;
pub mod model;
pub mod postgres;
mod rows;
mod rules;
mod shared;
pub mod sqlite;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

pub use capture::sha256_hex;
pub use model::*;
pub use rows::pack_windows;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL could not be understood.
    #[error("invalid database URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL with any password redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The requested row does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The SQLite database file to open does not exist, and was not to be created
    /// ([`sqlite::SqliteStore::connect_existing`]). Holds the file's path.
    #[error("database file {0} does not exist")]
    NoDatabase(String),
    /// A value broke a rule of the data model (bad role, bad status, empty name, ...).
    #[error("invalid data: {0}")]
    Invalid(String),
    /// Applying migrations failed.
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A job operation used a claim that is no longer current: the lease expired and another
    /// worker took the job over, or the job already ended. The caller must drop its work on the
    /// job without recording anything.
    #[error("lease lost: {0}")]
    LeaseLost(String),
    /// The disk holding the database is full (SQLite's `SQLITE_FULL`, PostgreSQL's
    /// `disk_full`). Said plainly, with what to do: the transaction was rolled back, so what
    /// was stored before is intact and a run started once there is space resumes.
    #[error(
        "the disk holding the database is full ({0}); nothing of the failed write was kept: free \
         space, then run again"
    )]
    DiskFull(String),
    /// Any other database error.
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::RowNotFound => StoreError::NotFound("row".to_owned()),
            // character_not_in_repertoire, untranslatable_character: PostgreSQL's answer to a
            // NUL character in text or jsonb. The value is at fault, not the database.
            sqlx::Error::Database(db)
                if matches!(db.code().as_deref(), Some("22021" | "22P05")) =>
            {
                StoreError::Invalid(format!(
                    "text containing a NUL character cannot be stored in PostgreSQL ({})",
                    db.message()
                ))
            }
            sqlx::Error::Database(db) if is_disk_full(db.as_ref()) => {
                StoreError::DiskFull(db.message().to_owned())
            }
            other => StoreError::Database(other),
        }
    }
}

impl StoreError {
    /// Whether the database server could not be reached, rather than refusing the request:
    /// an I/O error (connection refused or cut), a pool that timed out waiting for a
    /// connection, or PostgreSQL's "operator intervention" class 57P (starting up, shutting
    /// down, terminated by the administrator). What a process waits out while a database
    /// restarts.
    pub fn is_unreachable(&self) -> bool {
        let sqlx = match self {
            StoreError::Database(error) => error,
            StoreError::Migration(sqlx::migrate::MigrateError::Execute(error)) => error,
            _ => return false,
        };
        match sqlx {
            sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
            sqlx::Error::Database(db) => db.code().is_some_and(|code| code.starts_with("57P")),
            _ => false,
        }
    }
}

/// SQLite's extended code for a WAL index (`-shm`) file that could not be grown.
const SQLITE_IOERR_SHMSIZE: i64 = 4874;

/// Whether the database refused a write for want of disk space: SQLite's `SQLITE_FULL` (13, or
/// an extended code whose low byte is 13) or `SQLITE_IOERR_SHMSIZE` (4874: the WAL index file
/// could not be grown, what SQLite answers when a full disk is met while opening the
/// database; found by the disk-full fault test in a full run), PostgreSQL's `disk_full` (53100).
fn is_disk_full(error: &dyn sqlx::error::DatabaseError) -> bool {
    let code = error.code();
    if error
        .try_downcast_ref::<sqlx::sqlite::SqliteError>()
        .is_some()
    {
        code.and_then(|c| c.parse::<i64>().ok())
            .is_some_and(|c| c & 0xff == 13 || c == SQLITE_IOERR_SHMSIZE)
    } else {
        code.as_deref() == Some("53100")
    }
}

/// Leadership won through [`Store::try_lead`]. Dropping it without [`Leadership::resign`] ends
/// it too, only later (when the connection closes or the lease lapses).
#[async_trait]
pub trait Leadership: Send + Sync {
    /// Checks that this process still leads (and renews a lease-based leadership). `false`
    /// means leadership was lost (the database restarted, the lease lapsed): the caller must
    /// stop leading and may try again with [`Store::try_lead`].
    async fn confirm(&mut self) -> Result<bool>;
    /// Gives leadership up now, so another process can take over without waiting.
    async fn resign(self: Box<Self>) -> Result<()>;
}

/// Result alias of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The matches of [`Store::stream_matches`], one at a time; an error ends the stream.
pub type MatchStream = futures_util::stream::BoxStream<'static, Result<MatchRecord>>;

/// Hides the password of a `scheme://user:password@host/...` URL, so that a database URL can go
/// into an error message or a log line without leaking the secret.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let authority_start = scheme_end + 3;
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority_start + i);
    let authority = &url[authority_start..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let Some(colon) = authority[..at].find(':') else {
        return url.to_owned();
    };
    format!(
        "{}{}:***{}",
        &url[..authority_start],
        &authority[..colon],
        &url[authority_start + at..]
    )
}

/// The storage contract shared by every backend.
#[async_trait]
pub trait Store: Send + Sync {
    /// Applies pending migrations. Safe to call on every start.
    async fn migrate(&self) -> Result<()>;

    // ----- fingerprint library -----

    /// Returns the id of the holder with this name, creating it if needed. Surrounding
    /// whitespace is not part of the name; an empty name is `Invalid`.
    async fn ensure_rights_holder(&self, name: &str) -> Result<Id>;
    /// Lists all rights holders by name.
    async fn list_rights_holders(&self) -> Result<Vec<RightsHolder>>;
    /// Deletes a rights holder. `Invalid` (naming what it still owns, nothing deleted) while it
    /// owns works or user accounts; `NotFound` if absent.
    async fn delete_rights_holder(&self, id: Id) -> Result<()>;
    /// Adds a work or replaces it (keyed by holder + external id). Unchanged content, title and
    /// fingerprint version write nothing and return [`WriteOutcome::Unchanged`]; otherwise the
    /// work's segments are replaced in the same transaction and every page's match against
    /// this work becomes stale (the caller re-matches).
    ///
    /// Segments must lie inside the text and have distinct ordinals (`Invalid` otherwise); an
    /// unknown rights holder is `NotFound`.
    async fn upsert_work(&self, work: &NewWork) -> Result<(Id, WriteOutcome)>;
    /// [`Store::upsert_work`] for several works in one transaction, in order: all are written
    /// or none (the first refusal is the error). Loading a library a batch at a time spares a
    /// commit per work, which dominates the cost of small works.
    async fn upsert_works(&self, works: &[NewWork]) -> Result<Vec<(Id, WriteOutcome)>>;
    /// Withdraws a work from the library (`library rm`): it leaves [`Store::all_segments`] and
    /// every index built from the store, and is never matched again, while its row and its
    /// matches stay (listed as [`MatchStatus::Withdrawn`]). Upserting the work again brings it
    /// back. Returns whether it was active; `NotFound` if absent.
    async fn withdraw_work(&self, id: Id, at: DateTime<Utc>) -> Result<bool>;
    /// Licenses `hosts` (and their subdomains) to publish the works of a rights holder: all of
    /// them, or work `work_id` (which must be the holder's, else `NotFound`). Matches on them
    /// list as [`MatchStatus::Licensed`]. Returns how many were new (adding one again changes
    /// nothing). Hosts must be lower-case host names (`Invalid` otherwise, nothing written).
    async fn add_licensed_hosts(
        &self,
        rights_holder_id: Id,
        work_id: Option<Id>,
        hosts: &[String],
    ) -> Result<u64>;
    /// Takes back licences given by [`Store::add_licensed_hosts`]; returns how many there were.
    async fn remove_licensed_hosts(
        &self,
        rights_holder_id: Id,
        work_id: Option<Id>,
        hosts: &[String],
    ) -> Result<u64>;
    /// Licensed hosts of one rights holder, or of all.
    async fn list_licensed_hosts(&self, rights_holder_id: Option<Id>) -> Result<Vec<LicensedHost>>;
    /// Where the library stands: its generation, the last generation that was not an
    /// addition, and the last one whose pages were marked (one row, read by every match
    /// worker every few seconds).
    async fn library_state(&self) -> Result<LibraryState>;
    /// The works that changed after generation `generation` (added, replaced, withdrawn,
    /// brought back, deleted), in generation order: what an index or a match worker that
    /// reflects `generation` must catch up with.
    async fn library_changes_since(&self, generation: i64) -> Result<Vec<LibraryChange>>;
    /// Records that the pages that may copy the works changed up to `generation` were marked
    /// for matching (the mark never goes back).
    async fn mark_library_generation(&self, generation: i64) -> Result<()>;
    /// Lists works (without text), optionally of one holder, ordered by external id then holder.
    async fn list_works(&self, rights_holder_id: Option<Id>) -> Result<Vec<WorkSummary>>;
    /// One work with its text. `NotFound` if absent.
    async fn get_work(&self, id: Id) -> Result<Work>;
    /// One work without its text or chapters: what a page about it shows. `NotFound` if
    /// absent.
    async fn work_summary(&self, id: Id) -> Result<WorkSummary>;
    /// Every segment fingerprint of every active work, for (re)building the index.
    async fn all_segments(&self) -> Result<Vec<IndexedSegment>>;
    /// The document-level fingerprints of one work, ordered by algorithm name. `NotFound` if
    /// the work does not exist.
    async fn work_fingerprints(&self, work_id: Id) -> Result<Vec<AlgorithmFingerprint>>;
    /// `(work, algorithm, version)` of every stored document-level fingerprint, ordered by
    /// work then algorithm: enough to find works whose fingerprints are out of date without
    /// reading the fingerprints themselves.
    async fn fingerprint_versions(&self) -> Result<Vec<(Id, String, u32)>>;

    // ----- page library -----

    /// Stores a fetched page keyed by URL, creating its site from the URL host. Same text →
    /// only `last_seen`, status, title and validators move ([`WriteOutcome::Unchanged`]); new
    /// text → the page is due for matching again ([`WriteOutcome::Updated`]). The validators
    /// (`etag`, `last_modified`) are always those of this fetch, so they belong to the stored
    /// text.
    ///
    /// When new text replaces a text that some match's evidence points into, that text is kept
    /// (see [`Store::evidence_text`]): a re-crawl never takes the proof of a copy away. New
    /// text also ends the page's standing as an alias and frees its own aliases (see
    /// [`Store::set_page_alias`]): each is judged on its own text again.
    ///
    /// The URL is stored in its WHATWG-normalized form without fragment (`HTTP://Example.com#x`
    /// and `http://example.com/` are one page); a URL without a host is `Invalid`. `last_seen`
    /// never moves backwards when fetches are stored out of order.
    async fn upsert_page(&self, page: &NewPage) -> Result<PageWrite>;
    /// One page. `NotFound` if absent.
    async fn get_page(&self, id: Id) -> Result<Page>;
    /// The pages of `ids` that exist, by id, in one statement: what a worker matching a batch
    /// of due pages reads (a deleted page is simply not returned).
    async fn get_pages(&self, ids: &[Id]) -> Result<Vec<Page>>;
    /// Of `content_hashes`, those that are the current text of more than one page, each once,
    /// in one statement. A page whose text no other page shows is nobody's alias and has no
    /// verified twin ([`Store::earlier_pages_with_text`], [`Store::verified_twin`] both ask
    /// for another page with its current text), so a worker matching a batch of pages asks
    /// those two only for the pages this names.
    async fn shared_texts(&self, content_hashes: &[String]) -> Result<Vec<String>>;
    /// Pages whose current text has not been matched yet (`matched_hash` missing or different
    /// from `content_hash`), oldest first (by id), at most `limit`.
    async fn pages_to_match(&self, limit: u32) -> Result<Vec<Page>>;
    /// `(id, content_hash)` of the pages due for matching (as [`Store::pages_to_match`]) whose id
    /// is above `after_id`, by id, at most `limit`: how a sweeper walks every due page once
    /// without reading their texts.
    async fn due_page_ids(&self, after_id: Id, limit: u32) -> Result<Vec<(Id, String)>>;
    /// `(id, url)` of the pages stored before `before_id` (lower ids) whose current text has
    /// `content_hash`, on host `host` (`name` or `name:port`, as sites are stored) or a
    /// subdomain of it, oldest first, at most `limit`: the pages a page may be an alias of (one
    /// page served under several URLs; see [`Store::set_page_alias`]). Pages a removal check
    /// found gone or without the copy are left out: an alias of a removed page is a copy
    /// still online.
    async fn earlier_pages_with_text(
        &self,
        content_hash: &str,
        host: &str,
        before_id: Id,
        limit: u32,
    ) -> Result<Vec<(Id, String)>>;
    /// Records page `page_id` as an alias of page `alias_of` (`None`: of no page). An alias
    /// records no matches of its own; reports list it beside its page. `NotFound` if the page
    /// is absent, `Invalid` for a page named as its own alias.
    async fn set_page_alias(&self, page_id: Id, alias_of: Option<Id>) -> Result<()>;
    /// Frees the aliases of page `page_id` whose text is no longer `content_hash` (the page
    /// changed under them) and marks them due for matching, so each is judged on its own
    /// again. Returns how many were freed. An alias whose text is the evidence of one of the
    /// page's unrejected matches is not freed: matched from that stored text it would report a
    /// known copy as new; it stays in the group until a removal check fetches it (see
    /// [`Store::hand_over_matches`]).
    async fn release_aliases(&self, page_id: Id, content_hash: &str) -> Result<u64>;
    /// The URLs of the aliases of page `page_id`, oldest first.
    async fn page_aliases(&self, page_id: Id) -> Result<Vec<String>>;
    /// `(id, url)` of the aliases of page `page_id`, oldest first: what a removal check fetches
    /// again when it finds the page removed.
    async fn alias_pages(&self, page_id: Id) -> Result<Vec<(Id, String)>>;
    /// Hands the matches of page `from` for `works` over to page `to`, an alias of it that a
    /// removal check found still showing the copy while `from` no longer does, atomically: the
    /// same match rows move (their id, first-seen time, status, review, evidence, notices and
    /// alerts already sent stay theirs) with the pair's review decisions, so the copy is never
    /// reported again as new. Only a match whose evidence is `to`'s stored text moves (the
    /// proof stays on the page that holds it), and none for a work `to` already has a match
    /// of. When any moves, `to` stops being an alias; when `from` keeps no match, `from` and
    /// its other aliases become aliases of `to`. Returns the works moved.
    ///
    /// The status is not changed here: the caller records `to`'s check
    /// ([`Store::record_page_check`]), which reopens a match an earlier check had removed.
    /// `NotFound` if either page is absent, `Invalid` when `from` is `to`.
    async fn hand_over_matches(&self, from: Id, to: Id, works: &[Id]) -> Result<Vec<Id>>;
    /// Marks every page as due for matching (after the library changed). Returns how many pages
    /// were matched before and are now due.
    async fn mark_all_pages_unmatched(&self) -> Result<u64>;
    /// Marks the pages `ids` as due for matching (those matched before); returns how many
    /// moved. Unknown ids are ignored: a page deleted meanwhile needs no matching.
    async fn mark_pages_unmatched(&self, ids: &[Id]) -> Result<u64>;
    /// Stores (or replaces) the sketch of a page. `NotFound` if the page does not exist.
    async fn save_page_sketch(&self, sketch: &PageSketch) -> Result<()>;
    /// [`Store::save_page_sketch`] of each of `sketches`, in one transaction; a page that does
    /// not exist (deleted since it was matched) is skipped. Returns how many were stored.
    async fn save_page_sketches(&self, sketches: &[PageSketch]) -> Result<u64>;
    /// The current sketches of version `version` (made from the page's stored text) of pages
    /// with id above `after_id`, by id, at most `limit`: how incremental matching walks every
    /// page once without reading texts.
    async fn page_sketches(
        &self,
        after_id: Id,
        limit: u32,
        version: u32,
    ) -> Result<Vec<PageSketch>>;
    /// Marks as due for matching every matched page without a current sketch of `version`
    /// (matched before sketches existed, or by another sketch version): incremental matching
    /// cannot tell whether they copy a new work. Returns how many moved.
    async fn mark_unsketched_pages_unmatched(&self, version: u32) -> Result<u64>;
    /// Records that a conditional re-fetch of the page at `url` was answered `304 Not
    /// Modified` at `seen_at`: its stored text is still current. Only `last_seen` moves (never
    /// backwards); text, validators, matches and evidence stay. Returns the page's id, or
    /// `None` when no page has this URL (compared as [`Store::upsert_page`] stores it).
    async fn record_not_modified(&self, url: &str, seen_at: DateTime<Utc>) -> Result<Option<Id>>;
    /// The stored validators of the pages of `scope.hosts` that have at least one (and, with
    /// `infringing_only`, a match that is not rejected), by page id, at most `scope.limit`:
    /// what a crawl of those sites sends back to make its requests conditional.
    async fn page_validators(&self, scope: &ValidatorScope) -> Result<Vec<PageValidators>>;
    /// The text of page `page_id` whose content hash is `content_hash`: the stored text if it
    /// is that one, else the earlier text kept for evidence; `None` if neither. Evidence
    /// offsets of a match are read against `evidence_text(page_id, match.evidence_hash)`.
    async fn evidence_text(&self, page_id: Id, content_hash: &str) -> Result<Option<String>>;
    /// The raw response the text `content_hash` of page `page_id` was extracted from, as stored
    /// by [`Store::upsert_page`], decompressed; `None` when there is none (pages stored before
    /// captures were kept, or by a caller without raw bytes).
    ///
    /// Retention: a page keeps the capture of its current text, plus the capture of every
    /// earlier text some match's evidence points into (as `evidence_text` keeps texts); the
    /// others are dropped when a re-crawl replaces the text or a verdict stops pointing into
    /// it. The capture of a text is the first fetch that gave it: a later fetch of the same text
    /// does not replace it, so the stored SHA-256 of a match's evidence does not change.
    async fn page_capture(&self, page_id: Id, content_hash: &str) -> Result<Option<PageCapture>>;
    /// Lists sites by host.
    async fn list_sites(&self) -> Result<Vec<Site>>;
    /// Number of stored pages.
    async fn count_pages(&self) -> Result<u64>;

    // ----- match library -----

    /// Records the verdict of one match run on a page, atomically: matches for works in
    /// `matches` are inserted or updated (keeping `first_seen` and the review status), their
    /// evidence replaced and pointed at this text (`evidence_hash = content_hash`); the
    /// page's `matched_hash` is set to `content_hash`. Running it twice with the same input
    /// changes nothing.
    ///
    /// A previous match of a work not in `matches` is never silently dropped when it is a
    /// takedown record:
    ///
    /// * if its evidence points into an earlier text (the page changed since the copy was
    ///   found: the re-crawl found it without the copy), an `open` or `notice_sent` match
    ///   becomes `removed` with `removed_at` = the page's `last_seen` (soft-removed), and a
    ///   `removed` one stays; evidence and the text it points into are kept;
    /// * if its evidence points into this very text (the library or the matcher changed, not
    ///   the page), an `open` match is deleted (the verdict is revised), `notice_sent` and
    ///   `removed` ones stay as they are;
    /// * a `rejected` match is deleted (the rejection stays with the page × work pair in the
    ///   decisions, and applies again if the pair is found again).
    ///
    /// Review (see [`Review`]): a person's latest decision on the pair wins, whether or not
    /// its match row still existed; a rejection holds until the page changes substantially
    /// (another text, the copy grown by half and by at least 200 characters), which puts it
    /// back in the queue (`pending`). Without a decision a confirmed match stays confirmed
    /// and a new or pending one is confirmed when [`NewMatch::auto_confirm`] says it passed
    /// the certainty gate (logged as an automatic decision), else it is `pending`.
    ///
    /// A `removed` match found again reopens (`open`, no `removed_at`) when the page was fetched
    /// after its removal was seen (`last_seen > removed_at`): the copy came back. Matching the
    /// stored text again after a page went away (404) reopens nothing.
    ///
    /// When the page changed since some of its unrejected matches were found, the run is a
    /// re-crawl's verdict on them and is appended to the page's removal checks (`online` or
    /// `soft_removed`, at the page's `last_seen`, no run), as [`Store::record_page_check`] does.
    ///
    /// `content_hash` is the hash of the text the match ran on: if the page changed meanwhile,
    /// nothing is recorded (evidence would point into a text that is not stored) and the page
    /// stays due for matching. `NotFound` if the page or one of the works does not exist.
    ///
    /// A verdict recorded here has no [`VerdictBasis`]: no other page reuses it
    /// ([`Store::record_page_verdict`]).
    async fn record_page_matches(
        &self,
        page_id: Id,
        content_hash: &str,
        matches: &[NewMatch],
        at: DateTime<Utc>,
    ) -> Result<VerdictOutcome> {
        self.record_page_verdict(page_id, content_hash, matches, None, at)
            .await
    }
    /// [`Store::record_page_matches`], keeping with the verdict, in the same transaction, what
    /// it was found against (`basis`: the library generation and the matcher), so that another
    /// page with the same text may reuse it ([`Store::verified_twin`]). `None` records a verdict
    /// nobody reuses (an alias's empty verdict) and forgets the page's previous basis.
    async fn record_page_verdict(
        &self,
        page_id: Id,
        content_hash: &str,
        matches: &[NewMatch],
        basis: Option<&VerdictBasis>,
        at: DateTime<Utc>,
    ) -> Result<VerdictOutcome> {
        let verdict = PageVerdict {
            page_id,
            content_hash,
            matches,
            basis,
            at,
        };
        let mut outcomes = self
            .record_page_verdicts(std::slice::from_ref(&verdict))
            .await?;
        Ok(outcomes.pop().unwrap_or_default())
    }
    /// [`Store::record_page_verdict`] of each of `verdicts`, in one transaction, with the
    /// outcome of each in their order: a worker records a batch of pages with one commit
    /// instead of one a page. All or nothing: on an error nothing is recorded, and the caller
    /// may record the pages one at a time to learn which one failed.
    async fn record_page_verdicts(
        &self,
        verdicts: &[PageVerdict<'_>],
    ) -> Result<Vec<VerdictOutcome>>;
    /// A page other than `page_id` whose text is `content_hash` and whose verdict on that text
    /// a page showing the same text may take as its own: its current verdict (its
    /// `matched_hash` is its text), recorded with a basis of matcher `matcher` at the library's
    /// current generation (read in the same statement), and not an alias. Returns its matches
    /// as the matcher gave them, those of withdrawn works left out; never statuses, review
    /// states or decisions, which belong to each page (licensed hosts are applied per page when
    /// listing). `None` when there is no such page, or when its matches are no longer exactly
    /// its verdict's; the lowest page id when there are several.
    async fn verified_twin(
        &self,
        page_id: Id,
        content_hash: &str,
        matcher: &str,
    ) -> Result<Option<VerifiedTwin>>;
    /// Lists matches with evidence, ordered by page URL then work external id.
    async fn list_matches(&self, filter: &MatchFilter) -> Result<Vec<MatchRecord>>;
    /// Every match [`Store::list_matches`] would list for `filter`, with the same derived status,
    /// review filter and chapters, as a stream that reads a page of matches at a time: memory
    /// stays flat however many there are, which is what exports of millions of rows need.
    ///
    /// Ordered by page (in the order pages were first stored), then by work id; the walk is not
    /// one snapshot (a match recorded meanwhile may or may not be in it) but never lists a pair
    /// twice. The stream owns what it needs, so it may outlive `self`.
    async fn stream_matches(&self, filter: &MatchFilter) -> Result<MatchStream>;
    /// One page of the matches [`Store::list_matches`] would list for `filter` (same derived
    /// status and filters), filtered, ordered and cut in SQL, with how many there are in all:
    /// what a paginated list needs when the matches are millions. The records carry neither
    /// evidence nor chapters (a list shows neither; [`Store::list_matches`] with `work_id` or
    /// the evidence service gives them).
    async fn match_listing(
        &self,
        filter: &MatchFilter,
        order: ListingOrder,
        offset: u64,
        limit: u32,
    ) -> Result<MatchListing>;
    /// Changes the review state of a match. Any status but `removed` clears `removed_at`
    /// (setting `removed` by hand keeps it, `None` if no check saw the removal). `NotFound` if
    /// absent.
    async fn set_match_status(&self, match_id: Id, status: MatchStatus) -> Result<()>;
    /// Records a person's decision on a match (confirm, reject, license, or back to pending)
    /// and sets its review state, atomically. The decision belongs to the page × work pair: it
    /// survives re-crawls, re-matching and the match row being deleted and found again (see
    /// [`Store::record_page_matches`]). `NotFound` if the match does not exist or is not of
    /// `decision.rights_holder_id`'s works. Returns the decision's id.
    async fn decide_match(&self, decision: &NewDecision) -> Result<Id>;
    /// Every decision on the page × work pair of match `match_id`, oldest first (the audit
    /// trail). `NotFound` as for [`Store::decide_match`].
    async fn match_decisions(
        &self,
        match_id: Id,
        rights_holder_id: Option<Id>,
    ) -> Result<Vec<DecisionRecord>>;

    // ----- statistics -----

    /// Copies per work, by work id. See [`StatsFilter`] for what is counted.
    async fn work_stats(&self, filter: &StatsFilter) -> Result<Vec<WorkStats>>;
    /// Copies per site (host), by host.
    async fn site_stats(&self, filter: &StatsFilter) -> Result<Vec<SiteStats>>;
    /// Every counted copy's lifetime, grouped by host (ordered by host, then first seen): what
    /// medians of time to removal and of time online are computed from.
    async fn copy_lifetimes(&self, filter: &StatsFilter) -> Result<Vec<(String, CopyLifetime)>>;
    /// Activity per UTC day, by day; days without any are left out.
    async fn daily_stats(&self, filter: &StatsFilter) -> Result<Vec<DailyStats>>;
    /// Copies per rights holder, by holder id.
    async fn holder_stats(&self, filter: &StatsFilter) -> Result<Vec<HolderStats>>;
    /// The first copy of each work on each site, by work then host.
    async fn first_copies(&self, filter: &StatsFilter) -> Result<Vec<FirstCopy>>;

    // ----- takedown notices -----

    /// Stores a notice (a draft) listing `notice.match_ids`. `NotFound` if a match does not
    /// exist or is not the holder's; `Invalid` without matches or with an unknown language.
    async fn create_notice(&self, notice: &NewNotice) -> Result<Id>;
    /// One notice, if it is `rights_holder_id`'s (any holder's when `None`); `NotFound`
    /// otherwise.
    async fn get_notice(&self, id: Id, rights_holder_id: Option<Id>) -> Result<Notice>;
    /// Notices of one holder or all, newest first.
    async fn list_notices(&self, rights_holder_id: Option<Id>) -> Result<Vec<Notice>>;
    /// Replaces the text of a draft notice (of `rights_holder_id` only, when given: another
    /// holder's is `NotFound`). `Invalid` once the notice is no longer a draft, or for an
    /// empty text: a sent notice keeps the text it was sent with.
    async fn set_notice_body(&self, id: Id, rights_holder_id: Option<Id>, body: &str)
    -> Result<()>;
    /// Moves a notice to another status by hand or by a process (`acknowledged`, `ignored`,
    /// `escalated`, `sent`, or back to `draft`), recording the step with its actor and note
    /// in the notice's history; moving it to the status it has changes nothing. Marking it
    /// sent stamps `sent_at` and moves its `open` copies to `notice_sent`. Moving a notice
    /// stuck in `sending` settles its mail: `sent` (it arrived) or `draft` (it did not).
    /// `NotFound` as for [`Store::get_notice`]; `Invalid` for a status only removal checks or
    /// `notice send` set, and for acknowledged, ignored or escalated before it was sent.
    async fn set_notice_status(&self, change: &NoticeStatusChange) -> Result<()>;
    /// After removal checks: every sent (acknowledged, escalated) notice whose copies are now
    /// all removed becomes `removal_verified`, some removed `partially_removed`, and one of
    /// those two whose copies are back online `sent` again; each move is a step of its history
    /// by `removal-check`. Returns how many notices moved.
    async fn refresh_notices(&self, at: DateTime<Utc>) -> Result<u64>;
    /// A notice's history, oldest first. `NotFound` for an unknown notice.
    async fn notice_history(&self, notice_id: Id) -> Result<Vec<NoticeStep>>;
    /// Records a mail about a notice as `sending`, before it is sent: the notice itself (the
    /// notice, a draft, becomes `sending`, a step of its history), its reminder or its
    /// escalation (of a sent notice). Each purpose happens at most once per notice: when a
    /// mail of that purpose is sending, sent or skipped already, nothing is written and it is
    /// returned ([`MailClaim::Exists`]). With `force`, a notice mail stuck in `sending` is
    /// given up (`abandoned`) and the new one recorded. `NotFound` for an unknown notice;
    /// `Invalid` for a notice that is not a draft and has no mail (marked sent by hand), a
    /// reminder or escalation of an unsent notice, a notice or reminder without recipients.
    async fn begin_notice_mail(&self, mail: &NewNoticeMail) -> Result<MailClaim>;
    /// Records how the SMTP exchange of a mail [`Store::begin_notice_mail`] claimed ended. A
    /// notice: sent (the notice becomes `sent`, its open copies `notice_sent`) or refused
    /// (back to `draft`). A sent reminder is a step of the history; a sent or skipped
    /// escalation makes the notice `escalated`. A refused reminder or escalation changes
    /// nothing else (the next follow-up tries again). `NotFound` for an unknown mail;
    /// `Invalid` for one already finished.
    async fn finish_notice_mail(&self, end: &MailEnd) -> Result<()>;
    /// The mails about a notice, oldest first.
    async fn notice_mails(&self, notice_id: Id) -> Result<Vec<NoticeMail>>;

    // ----- scheduled reports -----

    /// Records a report mail as `sending`, before it is sent: at most one report per audience
    /// and period is sending or sent. When one is, nothing is written and it is returned
    /// ([`ReportClaim::Exists`]); with `force`, one stuck in `sending` is given up
    /// (`abandoned`) and the new one recorded. `Invalid` for an empty period, no recipient or
    /// no `Message-ID`.
    async fn begin_report_mail(&self, mail: &NewReportMail) -> Result<ReportClaim>;
    /// Records how the SMTP exchange of a claimed report mail ended: sent (`error` `None`) or
    /// refused with nothing delivered (the error; the report may be sent again). `NotFound`
    /// for an unknown mail; `Invalid` for one already finished.
    async fn finish_report_mail(
        &self,
        mail_id: Id,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<()>;
    /// The report mails of the period starting `period_from` (all when `None`), oldest
    /// first.
    async fn report_mails(&self, period_from: Option<chrono::NaiveDate>)
    -> Result<Vec<ReportMail>>;

    // ----- site contacts -----

    /// Stores contacts of sites; returns how many rows were new or changed. A found contact
    /// is stored once per host and address, never over an existing one; an operator's takes
    /// a found one over (kind and source). Hosts are lower-cased, e-mail addresses too;
    /// `Invalid` (nothing written for that row on) for an empty host or a value that is not
    /// an address.
    async fn add_site_contacts(&self, contacts: &[NewSiteContact]) -> Result<u64>;
    /// A site's contacts: the operator's first, then found ones, each in the order stored.
    async fn site_contacts(&self, host: &str) -> Result<Vec<SiteContact>>;
    /// Removes a contact of a site. `NotFound` naming it when there is none.
    async fn remove_site_contact(&self, host: &str, email: &str) -> Result<()>;
    /// Records the ICP filing number a site shows; returns whether it was new or changed (the
    /// same number again writes nothing).
    async fn set_site_icp(&self, icp: &SiteIcp) -> Result<bool>;
    /// The ICP filing number last seen on a site, if any.
    async fn site_icp(&self, host: &str) -> Result<Option<SiteIcp>>;

    // ----- alerts -----

    /// Adds a rights holder's alert target; adding the same kind and address again updates
    /// its secret, cadence and language and returns the same id. `Invalid` without an address,
    /// for a webhook without a secret, or an unknown language.
    async fn add_alert_target(&self, target: &NewAlertTarget) -> Result<Id>;
    /// Alert targets of one holder or all, by id.
    async fn list_alert_targets(&self, rights_holder_id: Option<Id>) -> Result<Vec<AlertTarget>>;
    /// Removes a target if it is `rights_holder_id`'s (any holder's when `None`), with its
    /// deliveries; `NotFound` otherwise.
    async fn remove_alert_target(&self, id: Id, rights_holder_id: Option<Id>) -> Result<()>;
    /// Gathers what target `target_id` has not been told into one delivery under
    /// `delivery_key`: every reported match of its holder (confirmed or pending, not licensed,
    /// not withdrawn) first seen since the target was added (`new`), and every one found
    /// removed since then (`removed`), each once per target however often this runs, in one
    /// transaction. `None` when there is nothing new. `NotFound` for an unknown target.
    async fn gather_alert(
        &self,
        target_id: Id,
        delivery_key: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<AlertDelivery>>;
    /// Undelivered deliveries due at `at` with fewer than `max_attempts` attempts, oldest due
    /// first, at most 100.
    async fn due_alert_deliveries(
        &self,
        at: DateTime<Utc>,
        max_attempts: u32,
    ) -> Result<Vec<AlertDelivery>>;
    /// A target's deliveries, newest first, at most 100.
    async fn alert_deliveries(&self, target_id: Id) -> Result<Vec<AlertDelivery>>;
    /// Records an attempt at a delivery: delivered at `at` when `error` is `None`, else due
    /// again at `next_attempt_at`. Nothing changes once it is delivered.
    async fn record_alert_attempt(
        &self,
        delivery_id: Id,
        error: Option<&str>,
        at: DateTime<Utc>,
        next_attempt_at: DateTime<Utc>,
    ) -> Result<()>;

    /// The page and work of match `match_id`. `NotFound` if absent.
    async fn match_subject(&self, match_id: Id) -> Result<(Id, Id)>;
    /// Records that an evidence package was written for a match. Returns its id. The match is
    /// not required to exist still: the record is an audit log.
    async fn record_evidence_package(&self, package: &NewEvidencePackage) -> Result<Id>;
    /// The evidence packages recorded for a match, oldest first.
    async fn evidence_packages(&self, match_id: Id) -> Result<Vec<EvidencePackage>>;
    /// Keeps the RFC 3161 timestamp of the package of match `match_id` whose manifest hashes to
    /// `manifest_sha256`. `true` when it was kept; `false` when that package has one already
    /// (the first is kept: it is the earlier proof). `NotFound` when no such package is
    /// recorded.
    async fn timestamp_evidence_package(
        &self,
        match_id: Id,
        manifest_sha256: &str,
        timestamp: &TrustedTimestamp,
    ) -> Result<bool>;

    // ----- jobs -----

    /// Enqueues a job; with a `dedup_key` equal to a queued or running job's, returns that
    /// job's id instead of creating another. A job must allow at least one attempt.
    async fn enqueue_job(&self, job: &NewJob) -> Result<Id>;
    /// Claims the oldest due job of one of `kinds` (queued with `run_at <= now`, or running
    /// with an expired lease, i.e. `lease_until <= now`), marks it running with
    /// `lease_until = now + lease`, and counts the attempt. Oldest means smallest `run_at`, then
    /// smallest id. Two concurrent claimers never get the same job.
    ///
    /// A running job whose lease expired after its last allowed attempt is not claimed again: it
    /// goes dead with `last_error` saying so.
    async fn claim_job(
        &self,
        kinds: &[&str],
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Option<Job>>;
    /// Marks a claimed job done. The work is accepted even if the lease ran out meanwhile, as
    /// long as nobody claimed the job since. `NotFound` if the job is absent; `LeaseLost` if it
    /// is no longer running under this claim (taken over after the lease expired, or dead).
    async fn complete_job(&self, lease: JobLease) -> Result<()>;
    /// Records a failure of a claimed job: back to queued at `retry_at`, or dead once attempts
    /// are used up (`attempts >= max_attempts`). `NotFound` / `LeaseLost` as for
    /// [`Store::complete_job`].
    async fn fail_job(&self, lease: JobLease, error: &str, retry_at: DateTime<Utc>) -> Result<()>;
    /// Extends the lease of a claimed job that is still being worked on, so that a long job is
    /// not taken over by another worker. `NotFound` / `LeaseLost` as for
    /// [`Store::complete_job`]: a worker that gets `LeaseLost` must stop and not record
    /// anything.
    async fn renew_job_lease(&self, lease: JobLease, lease_until: DateTime<Utc>) -> Result<()>;
    /// Gives a claimed job back unfinished (graceful shutdown): queued again at `run_at`, and the
    /// attempt does not count against `max_attempts`. `NotFound` / `LeaseLost` as for
    /// [`Store::complete_job`].
    async fn release_job(&self, lease: JobLease, run_at: DateTime<Utc>) -> Result<()>;
    /// Puts a dead job back in the queue with its attempts reset, after the operator fixed what
    /// made it fail. `NotFound` if absent, `Invalid` if it is not dead.
    async fn requeue_dead_job(&self, job_id: Id, run_at: DateTime<Utc>) -> Result<()>;
    /// One job. `NotFound` if absent.
    async fn get_job(&self, job_id: Id) -> Result<Job>;
    /// Jobs matching the filter, newest first (by id).
    async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>>;
    /// Number of jobs per kind and state, ordered by kind then state; pairs without jobs are
    /// left out.
    async fn job_counts(&self) -> Result<Vec<JobCount>>;

    // ----- leadership -----

    /// Tries to become the one leader named `name` across every process sharing this database
    /// (the scheduler loop must run exactly once). Returns `None` when another process leads.
    ///
    /// PostgreSQL holds a session-level advisory lock on a dedicated connection: leadership
    /// ends when that connection ends, so a killed or partitioned leader frees it at once.
    /// SQLite keeps a lease row that the holder renews through [`Leadership::confirm`] and that
    /// lapses `ttl` after the last renewal.
    async fn try_lead(
        &self,
        name: &str,
        ttl: chrono::Duration,
    ) -> Result<Option<Box<dyn Leadership>>>;

    // ----- schedules -----

    /// Creates a schedule (enabled, never fired). Fails with `Invalid` if the name exists.
    async fn create_schedule(&self, schedule: &NewSchedule) -> Result<Id>;
    /// Creates the schedule if no schedule has its name; otherwise updates its cron
    /// expression, time zone, seeds, config and owner where they differ (moving `updated_at`),
    /// keeping its enabled flag and `last_fired_at`. How built-in schedules (the daily dedup
    /// run) follow the configuration. `Invalid` if the existing schedule is of another kind.
    async fn ensure_schedule(&self, schedule: &NewSchedule) -> Result<Id>;
    /// Lists schedules by name.
    async fn list_schedules(&self) -> Result<Vec<Schedule>>;
    /// One schedule by name. `NotFound` if absent.
    async fn get_schedule_by_name(&self, name: &str) -> Result<Schedule>;
    /// Enables or disables a schedule; `updated_at` moves only if the flag changes. `NotFound`
    /// if absent.
    async fn set_schedule_enabled(&self, id: Id, enabled: bool) -> Result<()>;
    /// Deletes a schedule; its runs stay, without schedule. `NotFound` if absent.
    async fn delete_schedule(&self, id: Id) -> Result<()>;
    /// Fires one cron tick of a schedule, atomically: moves the schedule's `last_fired_at` from
    /// `expected_last_fired_at` to `scheduled_for`, creates the run (queued, with the job's id)
    /// and enqueues its job. Returns `None` and changes nothing when the schedule's
    /// `last_fired_at` is no longer the expected one (another scheduler fired first) or the
    /// schedule is disabled, so a tick is fired at most once however many schedulers race.
    /// `NotFound` if the schedule does not exist; `Invalid` if the job has a `dedup_key` or the
    /// run disagrees with the fire (schedule, `scheduled_for`), or if `scheduled_for` is not
    /// after `expected_last_fired_at` (that tick has been fired already).
    async fn fire_schedule(&self, fire: &ScheduleFire) -> Result<Option<FiredRun>>;

    // ----- runs -----

    /// Creates a run. With a job, the run is queued and the job enqueued in the same
    /// transaction (the job must have no `dedup_key`: `Invalid` otherwise); without one, the
    /// run is running from `created_at` (a run the caller does in-process). Returns the run's
    /// and the job's ids.
    async fn create_run(&self, run: &NewRun, job: Option<&NewJob>) -> Result<(Id, Option<Id>)>;
    /// One run. `NotFound` if absent.
    async fn get_run(&self, id: Id) -> Result<Run>;
    /// The run carried by a job, if any.
    async fn run_for_job(&self, job_id: Id) -> Result<Option<Run>>;
    /// Runs matching the filter, newest first (by id).
    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<Run>>;
    /// The latest run of `kind` that succeeded (by `started_at`, then id), if any: where an
    /// incremental run starts from.
    async fn last_succeeded_run(&self, kind: RunKind) -> Result<Option<Run>>;
    /// A worker begins a run: a queued run becomes running with `started_at = at`. A run that
    /// is already running (the job was retried) keeps its `started_at`. A queued run with a
    /// pending cancellation, or a finished run, is left as it is. Returns the run as it now
    /// is: the caller works on it only if it is `Running` and not `cancel_requested`.
    /// `NotFound` if absent.
    async fn start_run(&self, id: Id, at: DateTime<Utc>) -> Result<Run>;
    /// Saves a running run's counts and stats so far, and answers whether cancellation was
    /// requested (the worker polls this between pages). A run that is no longer running is
    /// not changed and answers `true`. `NotFound` if absent.
    async fn update_run_progress(
        &self,
        id: Id,
        counts: &RunCounts,
        stats: &serde_json::Value,
    ) -> Result<bool>;
    /// Ends a run with `state` (succeeded, failed or cancelled; `Invalid` otherwise), its final
    /// counts, stats and error, at `at`. Ending an ended run overwrites the ending (the last
    /// delivery of an at-least-once job has the last word). `NotFound` if absent.
    async fn finish_run(
        &self,
        id: Id,
        state: RunState,
        counts: &RunCounts,
        stats: &serde_json::Value,
        error: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<()>;
    /// Asks a run to stop. A queued run is cancelled at once (`finished_at = at`; its job, when
    /// claimed, finds it cancelled and does nothing); a running run gets `cancel_requested` and
    /// stops at its worker's next progress update. Returns the run's state after the request.
    /// `NotFound` if absent; `Invalid` (naming its state) if it already ended.
    async fn request_run_cancel(&self, id: Id, at: DateTime<Utc>) -> Result<RunState>;

    // ----- removal checks -----

    /// Pages with at least one match that is not `rejected` (nor of a withdrawn work), with
    /// those matches' works, whose id is above `after_id`, by id, at most `limit`: the pages a
    /// removal check visits.
    async fn infringing_pages(&self, after_id: Id, limit: u32) -> Result<Vec<InfringingPage>>;
    /// The page at `url` as [`Store::infringing_pages`] lists it, or `None` when no page has
    /// this URL or it has no match that is not rejected: how a crawl knows that the page it
    /// just fetched (or failed to) is a known copy whose fate must be recorded.
    async fn infringing_page(&self, url: &str) -> Result<Option<InfringingPage>>;
    /// Records a removal check of a page, atomically: appends it to the page's check history,
    /// sets the page's `availability` and `availability_checked_at` (unless a later check is
    /// already recorded), moves the `open` and `notice_sent` matches of the works in
    /// `removed` to `removed` with `removed_at = checked_at`, and reopens (`open`, no
    /// `removed_at`) the `removed` matches of the works in `still_present`. The page's text and
    /// evidence are never touched: they are the proof of what was copied.
    ///
    /// A check older than the page's latest recorded one joins the history but changes neither
    /// the page nor its matches (the later verdict stands), so replayed or slow checks cannot
    /// undo a newer one. `NotFound` if the page or the run does not exist; `Invalid` if a work
    /// is both `removed` and `still_present`.
    async fn record_page_check(&self, check: &PageCheck) -> Result<PageCheckOutcome>;
    /// A page's removal checks, oldest first.
    async fn page_checks(&self, page_id: Id) -> Result<Vec<PageCheckRecord>>;

    // ----- users -----

    /// Creates a user. Fails with `Invalid` if the email exists (in any case), or if the role
    /// and the rights holder disagree: a `RightsHolder` user needs one, other roles have none.
    async fn create_user(&self, user: &NewUser) -> Result<Id>;
    /// Finds a user by (case-insensitive) email.
    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>>;
    /// Every user, by email.
    async fn list_users(&self) -> Result<Vec<User>>;
    /// Replaces a user's password hash. `NotFound` for an unknown email.
    async fn set_user_password(&self, email: &str, password_hash: &str) -> Result<()>;
    /// Removes a user and their sessions. `NotFound` for an unknown
    /// email.
    async fn remove_user(&self, email: &str) -> Result<()>;
    /// Stores a web session.
    async fn create_session(&self, session: &NewSession) -> Result<()>;
    /// The session whose token hashes to `token_hash`, with its user, unless it ended by `at`.
    async fn session(&self, token_hash: &str, at: DateTime<Utc>) -> Result<Option<Session>>;
    /// Ends a session (nothing happens for an unknown one).
    async fn delete_session(&self, token_hash: &str) -> Result<()>;
    /// Deletes the sessions ended by `at`; returns how many.
    async fn delete_expired_sessions(&self, at: DateTime<Utc>) -> Result<u64>;
    /// Records a failed login under `key` (`account:EMAIL`, `address:IP`).
    async fn record_login_failure(&self, key: &str, at: DateTime<Utc>) -> Result<()>;
    /// Failed logins under `key` after `since`.
    async fn login_failures_since(&self, key: &str, since: DateTime<Utc>) -> Result<u64>;
    /// Forgets the failures of `key` (a successful login), and everyone's before `before`.
    async fn clear_login_failures(&self, key: &str, before: DateTime<Utc>) -> Result<()>;

    // ----- API tokens -----

    /// Stores an API token of a user; returns its id. `NotFound` for an unknown user;
    /// `Invalid` if a token with the same hash exists.
    async fn create_api_token(&self, token: &NewApiToken) -> Result<Id>;
    /// The user of the token whose SHA-256 is `token_hash`, if any; records `at` as the token's
    /// last use (at most once a minute, so that a busy client does not write on every request).
    async fn api_token_user(&self, token_hash: &str, at: DateTime<Utc>) -> Result<Option<User>>;
    /// A user's API tokens, oldest first.
    async fn list_api_tokens(&self, user_id: Id) -> Result<Vec<ApiToken>>;
    /// Revokes token `id` of `user_id`. `NotFound` if it does not exist or is another user's.
    async fn delete_api_token(&self, id: Id, user_id: Id) -> Result<()>;

    // ----- rights-holder profiles (issue 40) -----

    /// Sets a rights holder's profile, replacing the one it had (every field: a field left
    /// `None` is cleared). Texts are stored trimmed, and an empty one as `None`, so that "not
    /// given" has one form. `NotFound` for an unknown holder; `Invalid` for a language other
    /// than `zh` or `en`. Removing the holder removes its profile.
    async fn set_rights_holder_profile(&self, profile: &RightsHolderProfile) -> Result<()>;
    /// A rights holder's profile, `None` until one is set. `NotFound` for an unknown holder,
    /// so a typo is not read as "no profile yet".
    async fn rights_holder_profile(
        &self,
        rights_holder_id: Id,
    ) -> Result<Option<RightsHolderProfile>>;
    /// Sets (or, with `None`, clears) the signature image of a holder's profile; saving the
    /// profile's texts later keeps it. `NotFound` for an unknown holder; `Invalid` for a holder
    /// without a profile yet, or a type other than `image/png` and `image/jpeg`.
    async fn set_signature_image(
        &self,
        rights_holder_id: Id,
        image: Option<&SignatureImage>,
    ) -> Result<()>;
    /// A holder's signature image, `None` when it has none. `NotFound` for an unknown holder.
    async fn signature_image(&self, rights_holder_id: Id) -> Result<Option<SignatureImage>>;
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_in_urls_are_redacted() {
        assert_eq!(
            redact_url("postgres://app:s3cr@t@db:5432/ct?sslmode=require"),
            "postgres://app:***@db:5432/ct?sslmode=require"
        );
        assert_eq!(redact_url("postgres://app@db/ct"), "postgres://app@db/ct");
        assert_eq!(
            redact_url("sqlite://data/a:b@c.db"),
            "sqlite://data/a:b@c.db"
        );
        assert_eq!(redact_url("sqlite::memory:"), "sqlite::memory:");
    }
}
