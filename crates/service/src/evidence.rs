//! Evidence packages: everything about one match that a hosting provider, a platform or a
//! court needs, in one directory that checks itself.
//!
//! [`write_package`] writes, for a match (optionally only of one rights holder, so the web can
//! hand a tenant only their own matches):
//!
//! | file | what |
//! |---|---|
//! | `page.html` | the raw response body as fetched (after HTTP content decoding, in the page's own charset), byte for byte; its SHA-256 is the one stored when it was fetched |
//! | `rendered.html` | for a page whose text was read in headless Chromium: the DOM once its scripts had written it (UTF-8, with its doctype), as stored at crawl time with its SHA-256 |
//! | `subresources/NNN` | for a rendered page: the body of each response its scripts received (scripts, XHR, `fetch`, frames), numbered in order of arrival; URL, type, status, headers and stored SHA-256 of each are in the manifest |
//! | `page.txt` | the text extracted from it, UTF-8: the text the evidence offsets point into |
//! | `passages.html` | the aligned passages side by side, page ↔ work, HTML-escaped |
//! | `screenshot.png` | a full-page screenshot by headless Chromium, offline: of `rendered.html` with JavaScript disabled for a rendered page, of `page.html` otherwise |
//! | `manifest.json` | the match, the fetch (URLs, status, headers, encoding, time), the stored SHA-256 of the raw bytes, how the page was rendered (browser version, settle time, when, the responses) or that it was not, the package time, and the SHA-256 and size of every other file |
//!
//! **The screenshot is of the stored bytes, not of the live URL.** It then shows exactly what
//! the hashed files hold, however long after the fetch the package is made, even once the page
//! is gone, and making a package contacts no pirate server: Chromium runs behind a proxy that
//! serves it the stored document and refuses every other request (see `copytrace-browser`).
//! The price: images and styles the page loads from elsewhere are not shown. The manifest says
//! how the screenshot was made, or why there is none (Chromium not installed, no raw bytes
//! stored).
//!
//! **A rendered page is pictured from its rendered DOM, with JavaScript disabled.** Its served
//! bytes show an empty content element; the text the reader saw is in the DOM the crawler's
//! browser read after the scripts ran, stored with the capture. Rendering that DOM again with
//! scripts off shows that text exactly as stored, deterministically (no timer, no randomness,
//! no second run of a script over text it already wrote, as `document.write` would do), and
//! needs nothing but the hashed `rendered.html`. Replaying the page with its stored responses
//! served by the proxy was the alternative; it re-runs code from a pirate site, depends on
//! every response having been kept within the caps and on the script behaving the same twice,
//! and pictures something no file of the package pins down. The responses are kept all the
//! same (`subresources/`): they show where the text came from.
//!
//! **Pages stored before raw captures were kept** have no `page.html` and no screenshot; the
//! manifest says so (`capture: null` with a `capture_note`), the rest of the package is written.
//! Pages read without the browser, or stored before renderings were kept (migration 0022), have
//! no `rendered.html`: the manifest says `rendering: null` with a `rendering_note` starting "not
//! rendered".
//!
//! **Verification** ([`verify_package`]) recomputes the SHA-256 of every file the manifest
//! lists (in `subresources/` too) and names each altered, missing or unlisted file; the rendered
//! DOM and every kept response body must be listed with the SHA-256 stored with them. A manifest rewritten together with
//! the files it lists cannot be caught from the directory alone, so the SHA-256 of every
//! manifest written is recorded in the store ([`Store::record_evidence_package`]); with the
//! database at hand, verification also requires the manifest to be one Copytrace recorded for
//! that match, and the hashes of the raw bytes, the rendered DOM and the responses to be the
//! ones stored with the capture.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_browser::{Browser, BrowserConfig, Document, Network};
use copytrace_store::{
    EvidencePassage, Id, MatchFilter, MatchRecord, NewEvidencePackage, PageCapture, Rendering,
    Store, StoreError, sha256_hex,
};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Context, Result, ServiceError};
use crate::timestamp::{self, Timestamp, TokenInfo, TsaSettings};
use sha2::{Digest, Sha256};
use x509_certificate::CapturedX509Certificate;

/// The manifest's `format`: what a reader of the package may rely on.
pub const FORMAT: &str = "copytrace-evidence/1";

/// File names inside a package.
pub mod files {
    /// The raw response body.
    pub const RAW: &str = "page.html";
    /// The extracted text.
    pub const TEXT: &str = "page.txt";
    /// The passages side by side.
    pub const PASSAGES: &str = "passages.html";
    /// The screenshot.
    pub const SCREENSHOT: &str = "screenshot.png";
    /// The DOM as headless Chromium rendered it at crawl time (rendered pages only).
    pub const RENDERED: &str = "rendered.html";
    /// The directory of the bodies of the responses a rendered page's scripts received.
    pub const SUBRESOURCES: &str = "subresources";

    /// The file of the body of response `seq` (from 1) of a rendered page.
    pub fn subresource(seq: u32) -> String {
        format!("{SUBRESOURCES}/{seq:03}")
    }
    /// The manifest.
    pub const MANIFEST: &str = "manifest.json";
    /// The RFC 3161 timestamp of the manifest's SHA-256 (DER `TimeStampResp`), when a
    /// time-stamping authority was configured.
    pub const TIMESTAMP: &str = "manifest.tsr";
}

/// How the screenshot is taken.
#[derive(Debug, Clone)]
pub enum ScreenshotSettings {
    /// With this Chromium executable, each page given `timeout`.
    Chromium {
        /// The executable (`copytrace_browser::find_chromium`).
        executable: PathBuf,
        /// Longest time for starting the browser, and for rendering and picturing the page.
        timeout: Duration,
    },
    /// No screenshot, for this reason (Chromium not found, or not wanted).
    Skip(String),
}

/// Screenshots with the Chromium at `explicit`, else the first found on `PATH` (see
/// `copytrace_browser::find_chromium`), each given `timeout`; when none is found, packages are
/// written without one and their manifest says why.
pub fn screenshot_settings(explicit: Option<&Path>, timeout: Duration) -> ScreenshotSettings {
    let path = std::env::var_os("PATH");
    match copytrace_browser::find_chromium(explicit, path.as_deref()) {
        Ok(executable) => ScreenshotSettings::Chromium {
            executable,
            timeout,
        },
        Err(error) => ScreenshotSettings::Skip(error.to_string()),
    }
}

/// A package to write.
#[derive(Debug, Clone)]
pub struct PackageRequest {
    /// The match.
    pub match_id: Id,
    /// Only a match of this rights holder's works: another holder's match is `NotFound`, as a
    /// match that does not exist (tenant isolation for the web).
    pub rights_holder_id: Option<Id>,
    /// The directory to write into: created if missing, refused unless empty.
    pub out: PathBuf,
    /// The screenshot.
    pub screenshot: ScreenshotSettings,
    /// The time-stamping authority that stamps the manifest; none: no timestamp.
    pub timestamps: Option<TsaSettings>,
}

/// A file of the package with its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Its name in the package directory.
    pub name: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The match a package documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestMatch {
    /// The match id (`copytrace export matches --format json` lists it).
    pub id: Id,
    /// The page.
    pub page_id: Id,
    /// Its URL as stored (normalized).
    pub page_url: String,
    /// Its title.
    pub page_title: Option<String>,
    /// The work.
    pub work_id: Id,
    /// The rights holder's identifier of the work.
    pub work_external_id: String,
    /// Its title.
    pub work_title: String,
    /// Its rights holder.
    pub rights_holder_id: Id,
    /// Score, coverage and containment, as recorded.
    pub score: f64,
    /// Share of the work found on the page.
    pub coverage: f64,
    /// Share of the page copied from the work.
    pub containment: f64,
    /// Characters verified as copied.
    pub copied_chars: u32,
    /// How it was found.
    pub method: String,
    /// Its status when the package was made.
    pub status: String,
    /// First and last time a match run found it.
    pub first_seen: DateTime<Utc>,
    /// Last time it was confirmed.
    pub last_seen: DateTime<Utc>,
    /// Hash of the page text the passages point into (`page.txt`).
    pub evidence_hash: String,
    /// The aligned passages: byte ranges of `page.txt` and of the work's text.
    pub passages: Vec<EvidencePassage>,
}

/// The fetch the raw bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestCapture {
    /// The URL the crawler asked for.
    pub requested_url: String,
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// HTTP status.
    pub http_status: u16,
    /// Response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The charset the text was decoded with.
    pub encoding: String,
    /// When the response arrived.
    pub fetched_at: DateTime<Utc>,
    /// The SHA-256 stored with the raw bytes when they were fetched.
    pub raw_sha256: String,
    /// The file holding them.
    pub raw_file: String,
}

/// How the screenshot was made, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestScreenshot {
    /// The file, when there is one.
    pub file: Option<String>,
    /// What was rendered and how.
    pub source: String,
    /// Why there is none.
    pub skipped: Option<String>,
    /// The browser.
    pub browser: Option<String>,
    /// When it was taken.
    pub taken_at: Option<DateTime<Utc>>,
    /// Pixel size.
    pub width: Option<u32>,
    /// Pixel size.
    pub height: Option<u32>,
    /// Whether the page was cut at the maximum height.
    pub truncated: bool,
}

/// How the page was rendered in headless Chromium when it was crawled: what the browser showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRendering {
    /// Always true: the page text was read from the DOM the browser rendered.
    pub rendered: bool,
    /// The browser's product and version.
    pub browser: String,
    /// How long the DOM had to stay unchanged to count as settled, in milliseconds.
    pub settle_quiet_ms: u64,
    /// From navigation to the moment the DOM was read, in milliseconds.
    pub settled_after_ms: u64,
    /// When the DOM was read.
    pub rendered_at: DateTime<Utc>,
    /// The file holding the rendered DOM.
    pub dom_file: String,
    /// The SHA-256 stored with the rendered DOM when it was crawled.
    pub dom_sha256: String,
    /// The responses the page's scripts received, in the order they arrived.
    pub subresponses: Vec<ManifestSubresponse>,
    /// Responses over the crawler's count cap, not kept.
    pub responses_not_kept: u64,
}

/// One response a rendered page's scripts received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestSubresponse {
    /// Its number, from 1, in the order of arrival.
    pub seq: u32,
    /// The URL that answered.
    pub url: String,
    /// Chromium's resource type (`Script`, `XHR`, `Fetch`, `Document`…).
    pub resource_type: String,
    /// HTTP status.
    pub http_status: u16,
    /// Response headers as the browser reported them.
    pub headers: Vec<(String, String)>,
    /// The MIME type the browser took it for.
    pub mime_type: String,
    /// Whether the body file is the text the browser decoded (UTF-8), not the bytes received.
    pub decoded_text: bool,
    /// The file holding the body, when it was kept.
    pub body_file: Option<String>,
    /// The SHA-256 stored with the body when it was crawled.
    pub body_sha256: Option<String>,
    /// Why there is no body.
    pub body_note: Option<String>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// The program that wrote it.
    pub generator: String,
    /// When the package was written.
    pub created_at: DateTime<Utc>,
    /// The match.
    #[serde(rename = "match")]
    pub subject: ManifestMatch,
    /// The fetch the raw bytes come from; `None` when none was stored.
    pub capture: Option<ManifestCapture>,
    /// Why there is no capture.
    pub capture_note: Option<String>,
    /// How the page was rendered in headless Chromium, when its text was read that way.
    #[serde(default)]
    pub rendering: Option<ManifestRendering>,
    /// Why there is no rendering (absent from packages written before renderings were kept).
    #[serde(default)]
    pub rendering_note: Option<String>,
    /// The screenshot.
    pub screenshot: ManifestScreenshot,
    /// Every file of the package but the manifest, with its SHA-256.
    pub files: Vec<FileEntry>,
}

/// What [`write_package`] wrote.
#[derive(Debug, Clone)]
pub struct PackageSummary {
    /// The directory.
    pub dir: PathBuf,
    /// The manifest written.
    pub manifest: Manifest,
    /// SHA-256 of `manifest.json`, as recorded in the store.
    pub manifest_sha256: String,
    /// What became of the manifest's trusted timestamp.
    pub stamp: PackageStamp,
}

/// What became of a package's trusted timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageStamp {
    /// No time-stamping authority is configured.
    NotAsked,
    /// Stamped: `manifest.tsr` written, the token kept in the store.
    Stamped(Timestamp),
    /// The authority failed (why): the package is written and recorded without a timestamp;
    /// [`timestamp_package`] stamps it later.
    Failed(String),
}

/// The match `match_id`, if it is visible to `rights_holder_id` (all are without one).
pub async fn find_match(
    store: &dyn Store,
    match_id: Id,
    rights_holder_id: Option<Id>,
) -> Result<MatchRecord> {
    let missing = || ServiceError::Store(StoreError::NotFound(format!("match {match_id}")));
    let (_, work_id) = match store.match_subject(match_id).await {
        Err(StoreError::NotFound(_)) => return Err(missing()),
        other => other?,
    };
    // Every review state and licensed hosts too: evidence is asked for by id.
    let filter = MatchFilter {
        rights_holder_id,
        work_id: Some(work_id),
        include_licensed: true,
        ..MatchFilter::default()
    };
    store
        .list_matches(&filter)
        .await?
        .into_iter()
        .find(|m| m.id == match_id)
        .ok_or_else(missing)
}

/// Writes the evidence package of one match; see the module documentation.
pub async fn write_package(store: &dyn Store, request: &PackageRequest) -> Result<PackageSummary> {
    let record = find_match(store, request.match_id, request.rights_holder_id).await?;
    let text = store
        .evidence_text(record.page_id, &record.evidence_hash)
        .await?
        .ok_or_else(|| {
            ServiceError::unavailable(format!(
                "the page text match {} points into is no longer stored",
                record.id
            ))
        })?;
    let work = store.get_work(record.work_id).await?;
    let capture = store
        .page_capture(record.page_id, &record.evidence_hash)
        .await?;
    if let Some(capture) = &capture {
        check_stored_hashes(record.page_id, capture)?;
    }
    prepare_dir(&request.out)?;

    let mut written = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> Result<()> {
        let path = request.out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(FileEntry {
            name: name.to_owned(),
            sha256: sha256_hex(bytes),
            size: bytes.len() as u64,
        });
        Ok(())
    };
    if let Some(capture) = &capture {
        put(files::RAW, &capture.body)?;
    }
    let rendering = capture.as_ref().and_then(|c| c.rendering.as_ref());
    if let Some(rendering) = rendering {
        put(files::RENDERED, rendering.dom.as_bytes())?;
        let dir = request.out.join(files::SUBRESOURCES);
        if rendering.subresponses.iter().any(|r| r.body.is_some()) {
            std::fs::create_dir(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        for response in &rendering.subresponses {
            if let Some(body) = &response.body {
                put(&files::subresource(response.seq), body)?;
            }
        }
    }
    put(files::TEXT, text.as_bytes())?;
    put(
        files::PASSAGES,
        passages_html(&record, &text, &work.content).as_bytes(),
    )?;
    let (screenshot, png) = screenshot(&request.screenshot, &record, capture.as_ref()).await;
    if let Some(png) = png {
        put(files::SCREENSHOT, &png)?;
    }

    let manifest = Manifest {
        format: FORMAT.to_owned(),
        generator: format!("copytrace {}", env!("CARGO_PKG_VERSION")),
        created_at: Utc::now(),
        subject: manifest_match(&record),
        capture: capture.as_ref().map(|c| ManifestCapture {
            requested_url: c.requested_url.clone(),
            final_url: c.final_url.clone(),
            http_status: c.http_status,
            headers: c.headers.clone(),
            encoding: c.encoding.clone(),
            fetched_at: c.fetched_at,
            raw_sha256: c.body_sha256.clone(),
            raw_file: files::RAW.to_owned(),
        }),
        capture_note: capture.is_none().then(|| {
            "no raw bytes are stored for this page text: it was fetched before Copytrace kept \
             raw captures (they are kept from migration 0013 on); page.txt is the text as \
             extracted then"
                .to_owned()
        }),
        rendering: rendering.map(manifest_rendering),
        rendering_note: rendering.is_none().then(|| {
            "not rendered: no rendered DOM is stored for this page text; it was read from the \
             HTML as served, without the browser (or stored before Copytrace kept renderings, \
             migration 0022)"
                .to_owned()
        }),
        screenshot,
        files: written,
    };
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    let path = request.out.join(files::MANIFEST);
    std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
    let manifest_sha256 = sha256_hex(&json);
    store
        .record_evidence_package(&NewEvidencePackage {
            match_id: record.id,
            manifest_sha256: manifest_sha256.clone(),
            created_at: manifest.created_at,
        })
        .await
        .context("cannot record the package's manifest hash")?;
    let stamp = match &request.timestamps {
        None => PackageStamp::NotAsked,
        Some(tsa) => match stamp_manifest(store, &request.out, record.id, &json, tsa).await {
            Ok(stamp) => PackageStamp::Stamped(stamp),
            Err(error) => PackageStamp::Failed(crate::error::one_line(&error)),
        },
    };
    Ok(PackageSummary {
        dir: request.out.clone(),
        manifest,
        manifest_sha256,
        stamp,
    })
}

/// Timestamps the manifest `json` of the package of match `match_id` in `dir`: writes the
/// token to [`files::TIMESTAMP`] and keeps it with the package's record.
async fn stamp_manifest(
    store: &dyn Store,
    dir: &Path,
    match_id: Id,
    json: &[u8],
    tsa: &TsaSettings,
) -> Result<Timestamp> {
    let digest: [u8; 32] = Sha256::digest(json).into();
    let stamp = timestamp::request(tsa, &digest).await?;
    let path = dir.join(files::TIMESTAMP);
    std::fs::write(&path, &stamp.response)
        .with_context(|| format!("cannot write {}", path.display()))?;
    store
        .timestamp_evidence_package(match_id, &sha256_hex(json), &stamp.stored())
        .await
        .context("cannot keep the timestamp in the database")?;
    Ok(stamp)
}

/// Timestamps a package written before (without a time-stamping authority, or when it
/// failed): its manifest must be one recorded in the store, and it must have no
/// [`files::TIMESTAMP`] yet.
pub async fn timestamp_package(
    store: &dyn Store,
    dir: &Path,
    tsa: &TsaSettings,
) -> Result<Timestamp> {
    let path = dir.join(files::MANIFEST);
    let json = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: Manifest = serde_json::from_slice(&json).map_err(|e| {
        ServiceError::invalid(format!("{} is not a package manifest: {e}", path.display()))
    })?;
    let stamped = dir.join(files::TIMESTAMP);
    if stamped.exists() {
        return Err(ServiceError::invalid(format!(
            "{} exists: the package is timestamped already (`copytrace evidence verify {}` \
             checks it)",
            stamped.display(),
            dir.display()
        )));
    }
    let digest = sha256_hex(&json);
    let recorded = store.evidence_packages(manifest.subject.id).await?;
    if !recorded.iter().any(|p| p.manifest_sha256 == digest) {
        return Err(ServiceError::invalid(format!(
            "{}'s SHA-256 {digest} is not recorded for match {} in the database: only a \
             package Copytrace wrote, unaltered, is timestamped",
            path.display(),
            manifest.subject.id
        )));
    }
    stamp_manifest(store, dir, manifest.subject.id, &json, tsa).await
}

/// Refuses a capture whose stored bytes no longer hash to the SHA-256 stored with them: the raw
/// body, the rendered DOM and every kept subresponse body.
fn check_stored_hashes(page_id: Id, capture: &PageCapture) -> Result<()> {
    let damaged = |what: &str, actual: &str, stored: &str| {
        ServiceError::unavailable(format!(
            "the stored {what} of page {page_id} hash to {actual}, not to the SHA-256 stored \
             with them ({stored}): the capture is damaged"
        ))
    };
    let actual = sha256_hex(&capture.body);
    if actual != capture.body_sha256 {
        return Err(damaged("raw bytes", &actual, &capture.body_sha256));
    }
    if let Some(rendering) = &capture.rendering {
        let actual = sha256_hex(rendering.dom.as_bytes());
        if actual != rendering.dom_sha256 {
            return Err(damaged("rendered DOM", &actual, &rendering.dom_sha256));
        }
        for response in &rendering.subresponses {
            if let (Some(body), Some(stored)) = (&response.body, &response.body_sha256) {
                let actual = sha256_hex(body);
                if &actual != stored {
                    return Err(damaged(
                        &format!("response {} ({})", response.seq, response.url),
                        &actual,
                        stored,
                    ));
                }
            }
        }
    }
    Ok(())
}

fn manifest_rendering(rendering: &Rendering) -> ManifestRendering {
    ManifestRendering {
        rendered: true,
        browser: rendering.browser.clone(),
        settle_quiet_ms: rendering.settle_quiet_ms,
        settled_after_ms: rendering.settled_after_ms,
        rendered_at: rendering.rendered_at,
        dom_file: files::RENDERED.to_owned(),
        dom_sha256: rendering.dom_sha256.clone(),
        subresponses: rendering
            .subresponses
            .iter()
            .map(|r| ManifestSubresponse {
                seq: r.seq,
                url: r.url.clone(),
                resource_type: r.resource_type.clone(),
                http_status: r.http_status,
                headers: r.headers.clone(),
                mime_type: r.mime_type.clone(),
                decoded_text: r.decoded_text,
                body_file: r.body.is_some().then(|| files::subresource(r.seq)),
                body_sha256: r.body_sha256.clone(),
                body_note: r.body_note.clone(),
            })
            .collect(),
        responses_not_kept: rendering.responses_not_kept,
    }
}

/// Creates `dir` or accepts it empty: files already there would be mistaken for the package's.
fn prepare_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the output directory {}", dir.display()))?;
        if entries.next().is_some() {
            return Err(ServiceError::invalid(format!(
                "the output directory {} is not empty; name a new or empty directory",
                dir.display()
            )));
        }
        Ok(())
    } else {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))
    }
}

fn manifest_match(record: &MatchRecord) -> ManifestMatch {
    ManifestMatch {
        id: record.id,
        page_id: record.page_id,
        page_url: record.page_url.clone(),
        page_title: record.page_title.clone(),
        work_id: record.work_id,
        work_external_id: record.work_external_id.clone(),
        work_title: record.work_title.clone(),
        rights_holder_id: record.rights_holder_id,
        score: record.score,
        coverage: record.coverage,
        containment: record.containment,
        copied_chars: record.copied_chars,
        method: record.method.clone(),
        status: record.status.as_str().to_owned(),
        first_seen: record.first_seen,
        last_seen: record.last_seen,
        evidence_hash: record.evidence_hash.clone(),
        passages: record.evidence.clone(),
    }
}

/// Where the stored page is served to the renderer: a name that resolves nowhere, so nothing
/// but the proxy can answer it (the page's own URL may be https, which the proxy cannot serve).
fn render_url(match_id: Id) -> Url {
    Url::parse(&format!(
        "http://evidence.copytrace.invalid/match/{match_id}"
    ))
    .expect("a valid URL")
}

/// Pictures the page offline: the DOM the browser rendered at crawl time, with scripts
/// disabled, for a rendered page; the stored raw bytes otherwise. The manifest section says what
/// happened either way.
async fn screenshot(
    settings: &ScreenshotSettings,
    record: &MatchRecord,
    capture: Option<&PageCapture>,
) -> (ManifestScreenshot, Option<Vec<u8>>) {
    let rendering = capture.and_then(|c| c.rendering.as_ref());
    let source = if rendering.is_some() {
        format!(
            "{} (the DOM headless Chromium rendered when the page was crawled, the text its \
             scripts wrote included) rendered offline by headless Chromium with JavaScript \
             disabled, served as UTF-8 text/html; no request left the renderer, so images and \
             styles loaded from the network are not shown",
            files::RENDERED
        )
    } else {
        format!(
            "{} (the stored raw bytes) rendered offline by headless Chromium, served as \
             text/html in the charset the crawler decoded it with; no request left the renderer, \
             so images, styles and scripts loaded from the network are not shown",
            files::RAW
        )
    };
    let skipped = |reason: String| ManifestScreenshot {
        file: None,
        source: source.clone(),
        skipped: Some(reason),
        browser: None,
        taken_at: None,
        width: None,
        height: None,
        truncated: false,
    };
    let Some(capture) = capture else {
        return (skipped("no raw bytes are stored to render".into()), None);
    };
    let (executable, timeout) = match settings {
        ScreenshotSettings::Skip(reason) => return (skipped(reason.clone()), None),
        ScreenshotSettings::Chromium {
            executable,
            timeout,
        } => (executable.clone(), *timeout),
    };
    let config = BrowserConfig {
        timeout,
        ..BrowserConfig::new(executable, Network::Offline)
    };
    let document = match rendering {
        Some(rendering) => Document {
            content_type: "text/html; charset=utf-8".to_owned(),
            body: rendering.dom.clone().into_bytes(),
        },
        None => Document {
            content_type: format!("text/html; charset={}", capture.encoding),
            body: capture.body.clone(),
        },
    };
    let shot = async {
        let browser = Browser::launch(config).await?;
        let url = render_url(record.id);
        let shot = if rendering.is_some() {
            browser
                .screenshot_document_without_scripts(&url, document)
                .await
        } else {
            browser.screenshot_document(&url, document).await
        };
        let version = browser.version().to_owned();
        browser.close().await;
        shot.map(|shot| (shot, version))
    }
    .await;
    match shot {
        Ok((shot, browser)) => (
            ManifestScreenshot {
                file: Some(files::SCREENSHOT.to_owned()),
                source,
                skipped: None,
                browser: Some(browser),
                taken_at: Some(Utc::now()),
                width: Some(shot.width),
                height: Some(shot.height),
                truncated: shot.truncated,
            },
            Some(shot.png),
        ),
        Err(error) => {
            tracing::warn!(%error, "no screenshot");
            (skipped(format!("the screenshot failed: {error}")), None)
        }
    }
}

/// Packs the evidence package in `dir` (as [`write_package`] wrote it) into one ZIP archive on
/// `out`, its files under `evidence-<match id>/`: what a browser downloads. The files are
/// stored byte for byte, so the manifest's hashes still verify after unpacking.
pub fn zip_package(
    dir: &Path,
    match_id: Id,
    out: impl std::io::Write + std::io::Seek,
) -> Result<()> {
    use zip::write::SimpleFileOptions;
    let mut archive = zip::ZipWriter::new(out);
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for name in package_files(dir)? {
        let path = dir.join(&name);
        archive
            .start_file(format!("evidence-{match_id}/{name}"), options)
            .map_err(|e| ServiceError::unavailable(format!("cannot write the archive: {e}")))?;
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        std::io::Write::write_all(&mut archive, &bytes)
            .with_context(|| "cannot write the archive".to_owned())?;
    }
    archive
        .finish()
        .map_err(|e| ServiceError::unavailable(format!("cannot write the archive: {e}")))?;
    Ok(())
}

/// One aligned passage: where it is in the page text and in the work text, and both texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassagePair {
    /// Byte range in the page text the evidence points into.
    pub page_range: (u32, u32),
    /// Byte range in the work's text.
    pub work_range: (u32, u32),
    /// The page's passage (`None` when the range is outside the text, or not on a character
    /// boundary).
    pub page: Option<String>,
    /// The work's passage.
    pub work: Option<String>,
    /// For a laundered copy (method `…+laundered`), the page's words that replace a synonym
    /// in the work's passage, `(page word, work word)`: what a reviewer checks before agreeing
    /// that different characters say the same thing.
    pub substitutions: Vec<(String, String)>,
}

/// The synonym substitutions between two passages of a match found as a laundered copy, none
/// for any other match (its evidence is characters, which the side-by-side diff shows).
fn substitutions(method: &str, page: Option<&str>, work: Option<&str>) -> Vec<(String, String)> {
    match (page, work) {
        (Some(page), Some(work)) if method.ends_with("+laundered") => {
            copytrace_matcher::laundering::substitutions(page, work)
        }
        _ => Vec::new(),
    }
}

/// A match's passages, page ↔ work, in evidence order.
pub fn passage_pairs(record: &MatchRecord, page_text: &str, work_text: &str) -> Vec<PassagePair> {
    let slice = |text: &str, start: u32, end: u32| {
        text.get(start as usize..end as usize).map(str::to_owned)
    };
    record
        .evidence
        .iter()
        .map(|p| {
            let page = slice(page_text, p.page_start, p.page_end);
            let work = slice(work_text, p.work_start, p.work_end);
            PassagePair {
                page_range: (p.page_start, p.page_end),
                work_range: (p.work_start, p.work_end),
                substitutions: substitutions(&record.method, page.as_deref(), work.as_deref()),
                page,
                work,
            }
        })
        .collect()
}

/// A match with its aligned passages, for a page that shows them.
#[derive(Debug, Clone)]
pub struct MatchEvidence {
    /// The match.
    pub record: MatchRecord,
    /// Its passages, page ↔ work.
    pub pairs: Vec<PassagePair>,
}

/// Match `match_id` with its passages, if it is visible to `rights_holder_id` (`NotFound`
/// otherwise). The page text is the one the evidence points into, even after a re-crawl.
pub async fn match_evidence(
    store: &dyn Store,
    match_id: Id,
    rights_holder_id: Option<Id>,
) -> Result<MatchEvidence> {
    let record = find_match(store, match_id, rights_holder_id).await?;
    let page_text = store
        .evidence_text(record.page_id, &record.evidence_hash)
        .await?
        .unwrap_or_default();
    let work = store.get_work(record.work_id).await?;
    let pairs = passage_pairs(&record, &page_text, &work.content);
    Ok(MatchEvidence { record, pairs })
}

/// The passages side by side, page ↔ work, every piece of text HTML-escaped (it comes from a
/// pirate site).
pub fn passages_html(record: &MatchRecord, page_text: &str, work_text: &str) -> String {
    let text = |passage: &Option<String>| {
        passage
            .as_deref()
            .map_or_else(|| "(outside the text)".to_owned(), escape)
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\
         <title>Evidence: match {id}</title>\n<style>\
         body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse;width:100%}} \
         td,th{{border:1px solid #999;padding:.5em;vertical-align:top;width:45%}} \
         th.n,td.n{{width:4em}}</style></head><body>\n\
         <h1>Match {id}</h1>\n<dl><dt>Page</dt><dd>{url}</dd><dt>Work</dt><dd>{work} \
         ({external})</dd><dt>Score</dt><dd>{score:.4}</dd><dt>Copied characters</dt>\
         <dd>{chars}</dd><dt>First seen</dt><dd>{first}</dd></dl>\n\
         <table><tr><th class=\"n\">#</th><th>Page (bytes of page.txt)</th>\
         <th>Work (bytes of the work text)</th></tr>\n",
        id = record.id,
        url = escape(&record.page_url),
        work = escape(&record.work_title),
        external = escape(&record.work_external_id),
        score = record.score,
        chars = record.copied_chars,
        first = record.first_seen.to_rfc3339_opts(SecondsFormat::Secs, true),
    );
    for (n, pair) in passage_pairs(record, page_text, work_text)
        .iter()
        .enumerate()
    {
        let _ = writeln!(
            html,
            "<tr><td class=\"n\">{}</td><td><small>{}–{}</small><br>{}</td>\
             <td><small>{}–{}</small><br>{}</td></tr>",
            n + 1,
            pair.page_range.0,
            pair.page_range.1,
            text(&pair.page),
            pair.work_range.0,
            pair.work_range.1,
            text(&pair.work),
        );
    }
    html.push_str("</table>\n</body></html>\n");
    html
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push_str("<br>"),
            c => out.push(c),
        }
    }
    out
}

/// One thing wrong with a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A listed file whose bytes do not hash to the manifest's SHA-256.
    Altered(String),
    /// A listed file that is not there.
    Missing(String),
    /// A file the manifest does not list.
    Extra(String),
    /// The manifest itself: unreadable, inconsistent, or not the one recorded.
    Manifest(String),
    /// The trusted timestamp (`manifest.tsr`): missing though recorded, or not verifying.
    Timestamp(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Altered(name) => write!(f, "altered: {name} does not match its SHA-256"),
            Problem::Missing(name) => write!(f, "missing: {name}"),
            Problem::Extra(name) => write!(f, "extra: {name} is not listed in the manifest"),
            Problem::Manifest(why) => write!(f, "manifest.json: {why}"),
            Problem::Timestamp(why) => write!(f, "{}: {why}", files::TIMESTAMP),
        }
    }
}

/// What [`verify_package`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The match the manifest names (when it could be read).
    pub match_id: Option<Id>,
    /// Files whose hash matched.
    pub verified: Vec<String>,
    /// Everything wrong; empty when the package is intact.
    pub problems: Vec<Problem>,
    /// Whether the manifest's hash was found recorded in the store (`None` without a store).
    pub recorded: Option<bool>,
    /// The manifest's trusted timestamp, when the package has one and it verified.
    pub timestamp: Option<TokenInfo>,
}

impl Verification {
    /// Whether the package is intact.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks a package: every listed file against its SHA-256, no file missing or unlisted, and
/// with a store, the manifest against the hashes recorded for its match and the raw bytes'
/// hash against the capture's. A package with a trusted timestamp ([`files::TIMESTAMP`]) has
/// it verified against the manifest's SHA-256, its signer chained to one of `trusted` when
/// given ([`timestamp::verify`]); one whose timestamp the store recorded must still have it.
/// I/O errors other than a missing file are errors; everything wrong with the package is a
/// [`Problem`].
pub async fn verify_package(
    dir: &Path,
    store: Option<&dyn Store>,
    trusted: Option<&[CapturedX509Certificate]>,
) -> Result<Verification> {
    let mut check = Verification {
        match_id: None,
        verified: Vec::new(),
        problems: Vec::new(),
        recorded: None,
        timestamp: None,
    };
    if !dir.is_dir() {
        return Err(ServiceError::invalid(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let manifest_path = dir.join(files::MANIFEST);
    let json = match std::fs::read(&manifest_path) {
        Ok(json) => json,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            check
                .problems
                .push(Problem::Missing(files::MANIFEST.to_owned()));
            return Ok(check);
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", manifest_path.display()));
        }
    };
    let manifest: Manifest = match serde_json::from_slice(&json) {
        Ok(manifest) => manifest,
        Err(error) => {
            check.problems.push(Problem::Manifest(format!(
                "not a package manifest: {error}"
            )));
            return Ok(check);
        }
    };
    check.match_id = Some(manifest.subject.id);
    if manifest.format != FORMAT {
        check.problems.push(Problem::Manifest(format!(
            "unknown format {:?} (expected {FORMAT})",
            manifest.format
        )));
    }

    let mut listed = BTreeSet::from([files::MANIFEST.to_owned(), files::TIMESTAMP.to_owned()]);
    for entry in &manifest.files {
        let name = &entry.name;
        if !inside_package(name) {
            check.problems.push(Problem::Manifest(format!(
                "lists a file outside the package: {name:?}"
            )));
            continue;
        }
        listed.insert(name.clone());
        match std::fs::read(dir.join(name)) {
            Ok(bytes) if sha256_hex(&bytes) == entry.sha256 && bytes.len() as u64 == entry.size => {
                check.verified.push(name.clone());
            }
            Ok(_) => check.problems.push(Problem::Altered(name.clone())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                check.problems.push(Problem::Missing(name.clone()));
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {name}"));
            }
        }
    }
    for required in [files::TEXT, files::PASSAGES] {
        if !listed.contains(required) {
            check
                .problems
                .push(Problem::Manifest(format!("does not list {required}")));
        }
    }
    if let Some(capture) = &manifest.capture {
        let listed_raw = manifest.files.iter().find(|f| f.name == capture.raw_file);
        match listed_raw {
            Some(raw) if raw.sha256 == capture.raw_sha256 => {}
            Some(_) => check.problems.push(Problem::Manifest(format!(
                "the SHA-256 it lists for {} is not the one stored with the raw bytes",
                capture.raw_file
            ))),
            None => check.problems.push(Problem::Manifest(format!(
                "does not list the raw bytes ({})",
                capture.raw_file
            ))),
        }
    }
    if let Some(file) = &manifest.screenshot.file
        && !listed.contains(file)
    {
        check.problems.push(Problem::Manifest(format!(
            "does not list the screenshot {file}"
        )));
    }
    if let Some(rendering) = &manifest.rendering {
        check_rendering_listed(rendering, &manifest.files, &mut check.problems);
    }
    for name in package_files(dir)? {
        if !listed.contains(&name) {
            check.problems.push(Problem::Extra(name));
        }
    }

    let token_path = dir.join(files::TIMESTAMP);
    let token = match std::fs::read(&token_path) {
        Ok(token) => Some(token),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", token_path.display()));
        }
    };
    if let Some(token) = &token {
        match timestamp::verify(token, &Sha256::digest(&json), trusted) {
            Ok(info) => check.timestamp = Some(info),
            Err(error) => check.problems.push(Problem::Timestamp(error.to_string())),
        }
    }

    if let Some(store) = store {
        let recorded = store.evidence_packages(manifest.subject.id).await?;
        let digest = sha256_hex(&json);
        let known = recorded.iter().any(|p| p.manifest_sha256 == digest);
        if token.is_none()
            && let Some(stamp) = recorded
                .iter()
                .filter(|p| p.manifest_sha256 == digest)
                .find_map(|p| p.timestamp.as_ref())
        {
            check.problems.push(Problem::Timestamp(format!(
                "missing: the database holds a timestamp of this manifest by {} at {}",
                stamp.tsa_url,
                stamp.gen_time.to_rfc3339_opts(SecondsFormat::Secs, true)
            )));
        }
        check.recorded = Some(known);
        if !known {
            check.problems.push(Problem::Manifest(format!(
                "its SHA-256 {digest} is not recorded for match {} in the database ({} \
                 package(s) recorded): it was altered, or written by another database",
                manifest.subject.id,
                recorded.len()
            )));
        }
        if let Some(capture) = &manifest.capture {
            let stored = store
                .page_capture(manifest.subject.page_id, &manifest.subject.evidence_hash)
                .await?;
            if let Some(stored) = stored {
                if stored.body_sha256 != capture.raw_sha256 {
                    check.problems.push(Problem::Manifest(format!(
                        "the raw bytes' SHA-256 differs from the one stored in the database ({})",
                        stored.body_sha256
                    )));
                }
                check_rendering_stored(
                    manifest.rendering.as_ref(),
                    stored.rendering.as_ref(),
                    &mut check.problems,
                );
            }
        }
    }
    Ok(check)
}

/// Whether a manifest's file name is a plain relative path inside the package: normal
/// components only (no `..`, no root, no drive), `/`-separated, no backslash.
fn inside_package(name: &str) -> bool {
    !name.is_empty()
        && !name.contains('\\')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && Path::new(name)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// Every file in the package directory and its subdirectories, as `/`-separated relative names,
/// sorted. A directory is not a file: an empty one is not reported.
fn package_files(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut pending = vec![(dir.to_owned(), String::new())];
    while let Some((path, prefix)) = pending.pop() {
        let entries =
            std::fs::read_dir(&path).with_context(|| format!("cannot list {}", path.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", path.display()))?;
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            let kind = entry
                .file_type()
                .with_context(|| format!("cannot list {}", path.display()))?;
            if kind.is_dir() {
                pending.push((entry.path(), format!("{name}/")));
            } else {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The rendered DOM and every kept subresponse body are listed, with the SHA-256 the manifest
/// says was stored with them.
fn check_rendering_listed(
    rendering: &ManifestRendering,
    listed: &[FileEntry],
    problems: &mut Vec<Problem>,
) {
    let expect = |file: &str, stored: &str, what: &str| match listed.iter().find(|f| f.name == file)
    {
        Some(entry) if entry.sha256 == stored => None,
        Some(_) => Some(Problem::Manifest(format!(
            "the SHA-256 it lists for {file} is not the one stored with the {what}"
        ))),
        None => Some(Problem::Manifest(format!(
            "does not list the {what} ({file})"
        ))),
    };
    problems.extend(expect(
        &rendering.dom_file,
        &rendering.dom_sha256,
        "rendered DOM",
    ));
    for response in &rendering.subresponses {
        match (&response.body_file, &response.body_sha256) {
            (Some(file), Some(stored)) => problems.extend(expect(file, stored, "response body")),
            (Some(file), None) => problems.push(Problem::Manifest(format!(
                "lists {file} without the SHA-256 stored with it"
            ))),
            (None, _) => {}
        }
    }
}

/// The rendering the manifest describes is the one stored in the database: the DOM's and every
/// body's SHA-256, and no response left out.
fn check_rendering_stored(
    described: Option<&ManifestRendering>,
    stored: Option<&Rendering>,
    problems: &mut Vec<Problem>,
) {
    match (described, stored) {
        (None, None) => {}
        (Some(_), None) => problems.push(Problem::Manifest(
            "describes a rendering the database does not hold for this page text".into(),
        )),
        (None, Some(_)) => problems.push(Problem::Manifest(
            "leaves out the rendering stored in the database for this page text".into(),
        )),
        (Some(described), Some(stored)) => {
            if described.dom_sha256 != stored.dom_sha256 {
                problems.push(Problem::Manifest(format!(
                    "the rendered DOM's SHA-256 differs from the one stored in the database ({})",
                    stored.dom_sha256
                )));
            }
            let hashes = |r: &ManifestSubresponse| (r.seq, r.url.clone(), r.body_sha256.clone());
            let described: Vec<_> = described.subresponses.iter().map(hashes).collect();
            let stored: Vec<_> = stored
                .subresponses
                .iter()
                .map(|r| (r.seq, r.url.clone(), r.body_sha256.clone()))
                .collect();
            if described != stored {
                problems.push(Problem::Manifest(
                    "its responses (URLs and SHA-256) differ from those stored in the database"
                        .into(),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_file_names_stay_inside_the_package() {
        assert!(inside_package("page.html"));
        assert!(inside_package("subresources/001"));
        for outside in [
            "",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            "./a",
            "a\\b",
            "a/",
        ] {
            assert!(!inside_package(outside), "{outside:?}");
        }
    }

    #[test]
    fn a_laundered_match_lists_its_substituted_words_and_others_none() {
        let page = Some("少年马上推开木门，瞧见庭院里站着一个生人。");
        let work = Some("少年立即推开木门，看见院子里站着一个陌生人。");
        let found = substitutions("simhash+sense+align+laundered", page, work);
        assert!(
            found.contains(&("马上".to_owned(), "立即".to_owned())),
            "{found:?}"
        );
        assert!(substitutions("simhash+sense+align", page, work).is_empty());
        assert!(substitutions("sense+align+laundered", None, work).is_empty());
    }

    #[test]
    fn text_from_pirate_pages_is_escaped() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\"\nline"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;<br>line"
        );
    }
}
