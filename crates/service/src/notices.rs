//! Takedown notices: one per rights holder and site, listing that holder's confirmed copies
//! still online there, rendered from the templates in `web/templates/notices/`, stored with a
//! status that removal checks move (`copytrace dedup` refreshes them after its checks).
//!
//! Only **confirmed** matches go into a notice (by a person, or by the certainty gate): a
//! false takedown notice is worse than a missed copy, so pending matches must be confirmed
//! first, and rejected or licensed ones (by decision or licensed host) never appear.
//!
//! A notice is written **under a law** (`copytrace_analytics::notice::NoticeLaw`): China's
//! 条例第十四条 in Chinese or the US §512(c)(3) in English, chosen by the caller or by the
//! holder's default notice language, and filled from the holder's profile
//! ([`holders::set_profile`]). One that would lack an element its law requires is refused,
//! naming the element, rather than sent and ignored.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, SecondsFormat, Utc};
use copytrace_analytics::delisting::{
    AbuseInput, Engine, abuse_missing_elements, notice_urls, render_abuse, url_list,
};
use copytrace_analytics::export::chapter_list;
use copytrace_analytics::notice::{
    Claimant, NoticeInput, NoticeItem, NoticeLaw, excerpt, missing_elements, render_notice,
};
use copytrace_store::{
    Id, MatchFilter, MatchRecord, MatchStatus, NewNotice, Notice, NoticeMail, NoticeStatus,
    NoticeStatusChange, NoticeStep, Review, RightsHolder, Store, sha256_hex,
};

use crate::error::{Context, Result, ServiceError};
use crate::evidence::{self, PackageRequest, ScreenshotSettings};
use crate::holders;

/// Characters of each copied passage quoted in a notice: enough to recognise the text, short
/// enough that quoting it is not a copy of its own.
const EXCERPT_CHARS: usize = 60;

/// Copied passages quoted per URL.
const EXCERPT_PASSAGES: usize = 3;

/// The manifest hash of a package [`create`] is about to write (never rendered).
const PENDING_PACKAGE: &str = "pending";

/// The confirmed copies of `rights_holder_id`'s works still online on `site` (the host or one
/// of its subdomains): what a notice to that site lists, by page URL.
pub async fn notice_matches(
    store: &dyn Store,
    rights_holder_id: Id,
    site: &str,
) -> Result<Vec<MatchRecord>> {
    online_confirmed(store, Some(rights_holder_id), site).await
}

/// The confirmed copies still online on `site`, of one rights holder's works or (`None`) of
/// every holder's.
async fn online_confirmed(
    store: &dyn Store,
    rights_holder_id: Option<Id>,
    site: &str,
) -> Result<Vec<MatchRecord>> {
    let site = site.trim().to_ascii_lowercase();
    let records = store
        .list_matches(&MatchFilter {
            rights_holder_id,
            reviews: vec![Review::Confirmed],
            ..MatchFilter::default()
        })
        .await?;
    Ok(records
        .into_iter()
        .filter(|r| matches!(r.status, MatchStatus::Open | MatchStatus::NoticeSent))
        .filter(|r| on_site(&r.page_url, &site))
        .collect())
}

/// Whether the page at `url` is on `site` (a host, with a port when not the default) or on a
/// subdomain of it.
fn on_site(url: &str, site: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    let Some(host) = crate::recrawl::site_of(&url) else {
        return false;
    };
    host == site || host.ends_with(&format!(".{site}"))
}

/// Where [`create`] writes fresh evidence packages for the copies it lists.
#[derive(Debug, Clone)]
pub struct EvidenceOutput {
    /// The directory: each match's package goes to `match-<id>/` inside it (each must be new
    /// or empty).
    pub dir: PathBuf,
    /// How the packages' screenshots are taken.
    pub screenshot: ScreenshotSettings,
    /// The time-stamping authority that stamps each package's manifest; none: no timestamps.
    pub timestamps: Option<crate::timestamp::TsaSettings>,
}

/// What [`create`] is asked for.
#[derive(Debug, Clone)]
pub struct NoticeRequest<'a> {
    /// Whose works: the rights holder's name, or `None` for the one holder whose works the
    /// confirmed copies on the site are.
    pub holder: Option<&'a str>,
    /// The site's host.
    pub site: &'a str,
    /// The law (and so the template); `None` for the one of the holder's default notice
    /// language (zh → cn, en → us), or cn for a holder without a profile.
    pub law: Option<NoticeLaw>,
    /// Write a fresh evidence package for every listed copy and cite its manifest hash. Without
    /// it each copy cites its newest recorded package (`copytrace evidence`, the web's
    /// download), and a law that asks for proof refuses a copy that has none.
    pub evidence: Option<&'a EvidenceOutput>,
    /// When it is written (its date).
    pub at: DateTime<Utc>,
}

/// Writes and stores (as a draft) the notice of a rights holder to the operator of a site,
/// under the law `request` names (see [`NoticeRequest`]), filled from the holder's profile and
/// the confirmed copies: works, chapters, URLs with their aliases, and per URL the preliminary
/// proof (first-seen time, copied passages, SHA-256 of the evidence package's manifest and of
/// the page text). `Invalid` when there is no confirmed copy to list, and when the notice would
/// lack an element its law requires, naming each (nothing is written then, not even evidence
/// packages).
///
/// Without a holder, the notice is the one of the rights holder whose works the confirmed
/// copies on `site` are, when they are all one holder's (as in a single publisher's library,
/// whatever its holder is called). When they are several holders' works, or there is none, it
/// is refused: a notice names one claimant, so picking one of several would send a notice for
/// some of the copies only and leave the operator to guess whose the others are.
pub async fn create(store: &dyn Store, request: &NoticeRequest<'_>) -> Result<Notice> {
    let site = request.site.trim().to_ascii_lowercase();
    if site.is_empty() || site.contains('/') {
        return Err(ServiceError::invalid(format!(
            "--site {site:?} is not a host name (e.g. pirate.example, or pirate.example:8080)"
        )));
    }
    let (holder, records) = match request.holder {
        Some(name) => {
            let holder = holders::find(store, name).await?;
            let records = notice_matches(store, holder.id, &site).await?;
            (holder, records)
        }
        None => sole_holder_on(store, &site).await?,
    };
    if records.is_empty() {
        return Err(ServiceError::invalid(format!(
            "{:?} has no confirmed copy online on {site}: nothing to notify (matches waiting \
             for review need `copytrace review confirm` first)",
            holder.name
        )));
    }
    let profile = store.rights_holder_profile(holder.id).await?;
    let law = request
        .law
        .or_else(|| {
            profile
                .as_ref()
                .and_then(|p| NoticeLaw::for_language(&p.language))
        })
        .unwrap_or(NoticeLaw::Cn);

    let mut items = Vec::with_capacity(records.len());
    for record in &records {
        items.push(notice_item(store, record, request.evidence.is_some()).await?);
    }
    let date = request.at.format("%Y-%m-%d").to_string();
    let claimant = Claimant {
        holder: &holder.name,
        profile: profile.as_ref(),
    };
    // Checked before any package is written: a refused notice leaves nothing behind.
    let missing = missing_elements(&NoticeInput {
        law,
        claimant,
        site: &site,
        date: &date,
        items: &items,
    });
    if !missing.is_empty() {
        return Err(refusal(&holder.name, law, &missing));
    }
    if let Some(output) = request.evidence {
        for (item, record) in items.iter_mut().zip(&records) {
            let package = evidence::write_package(
                store,
                &PackageRequest {
                    match_id: record.id,
                    rights_holder_id: Some(holder.id),
                    out: output.dir.join(format!("match-{}", record.id)),
                    screenshot: output.screenshot.clone(),
                    timestamps: output.timestamps.clone(),
                },
            )
            .await
            .with_context(|| format!("cannot write the evidence package of match {}", record.id))?;
            if let evidence::PackageStamp::Failed(why) = &package.stamp {
                return Err(ServiceError::unavailable(format!(
                    "no notice written: the evidence package of match {} in {} could not be \
                     timestamped ({why}); it is written and recorded, and `copytrace evidence \
                     timestamp DIR` stamps it when the authority answers",
                    record.id,
                    package.dir.display()
                )));
            }
            item.manifest_sha256 = Some(package.manifest_sha256);
        }
    }
    let body = render_notice(&NoticeInput {
        law,
        claimant,
        site: &site,
        date: &date,
        items: &items,
    })?;
    let id = store
        .create_notice(&NewNotice {
            rights_holder_id: holder.id,
            site,
            lang: law.language().to_owned(),
            body,
            match_ids: records.iter().map(|r| r.id).collect(),
            at: request.at,
        })
        .await?;
    Ok(store.get_notice(id, Some(holder.id)).await?)
}

/// A copy as a notice lists it, with its preliminary proof. With `package_pending`, its
/// manifest hash is a placeholder that the package about to be written replaces; otherwise it
/// is the newest package recorded for the match, if any.
async fn notice_item(
    store: &dyn Store,
    record: &MatchRecord,
    package_pending: bool,
) -> Result<NoticeItem> {
    let text = store
        .evidence_text(record.page_id, &record.evidence_hash)
        .await?
        .unwrap_or_default();
    let excerpts = record
        .evidence
        .iter()
        .filter_map(|e| text.get(e.page_start as usize..e.page_end as usize))
        .map(|quote| excerpt(quote, EXCERPT_CHARS))
        .filter(|quote| !quote.is_empty())
        .take(EXCERPT_PASSAGES)
        .collect();
    let manifest_sha256 = if package_pending {
        Some(PENDING_PACKAGE.to_owned())
    } else {
        store
            .evidence_packages(record.id)
            .await?
            .pop()
            .map(|package| package.manifest_sha256)
    };
    Ok(NoticeItem {
        url: record.page_url.clone(),
        aliases: record.aliases.clone(),
        work_title: record.work_title.clone(),
        work_external_id: record.work_external_id.clone(),
        chapters: chapter_list(record),
        excerpts,
        first_seen: record.first_seen.to_rfc3339_opts(SecondsFormat::Secs, true),
        copied_chars: record.copied_chars,
        text_sha256: sha256_hex(text.as_bytes()),
        manifest_sha256,
    })
}

/// The refusal of a notice lacking `missing`, saying where each comes from.
fn refusal(holder: &str, law: NoticeLaw, missing: &[String]) -> ServiceError {
    let proof = missing.iter().any(|m| m.contains("evidence package"));
    let profile = missing.iter().any(|m| !m.contains("evidence package"));
    let mut hints = Vec::new();
    if profile {
        hints.push(format!(
            "fill in the rights holder's profile (`copytrace rights-holder set {holder:?} \
             --legal-name … --address … --email … --phone … --signature …`)"
        ));
    }
    if proof {
        hints.push(
            "write the evidence packages (`notice create … --evidence-dir DIR`, or `copytrace \
             evidence MATCH_ID --out DIR`)"
                .to_owned(),
        );
    }
    ServiceError::invalid(format!(
        "the notice of {holder:?} under {} lacks required element(s): {}; {}",
        law.citation(),
        missing.join("; "),
        hints.join(", and ")
    ))
}

/// The one rights holder whose works have confirmed copies online on `site`, with those
/// copies; refused (naming the holders and their copies) when there are several, and when
/// there is no copy to notify at all.
async fn sole_holder_on(store: &dyn Store, site: &str) -> Result<(RightsHolder, Vec<MatchRecord>)> {
    let records = online_confirmed(store, None, site).await?;
    let mut copies: BTreeMap<Id, usize> = BTreeMap::new();
    for record in &records {
        *copies.entry(record.rights_holder_id).or_default() += 1;
    }
    match copies.keys().copied().collect::<Vec<Id>>().as_slice() {
        [] => Err(ServiceError::invalid(format!(
            "no confirmed copy of any rights holder's work is online on {site}: nothing to \
             notify (matches waiting for review need `copytrace review confirm` first)"
        ))),
        [only] => Ok((holders::get(store, *only).await?, records)),
        _ => {
            let names: BTreeMap<Id, String> = store
                .list_rights_holders()
                .await?
                .into_iter()
                .map(|h| (h.id, h.name))
                .collect();
            let mut listed: Vec<String> = copies
                .iter()
                .map(|(id, n)| {
                    let name = names.get(id).map_or("?", String::as_str);
                    format!("{name:?} ({n} cop{})", if *n == 1 { "y" } else { "ies" })
                })
                .collect();
            listed.sort();
            Err(ServiceError::invalid(format!(
                "the confirmed copies online on {site} are works of {} rights holders: {}; a \
                 notice speaks for one, so choose it with --rights-holder NAME",
                copies.len(),
                listed.join(", ")
            )))
        }
    }
}

/// Moves a notice by the hand of a person of the web or the API (`actor`, e.g.
/// `web:alice@example.com`), as [`move_notice`] does, now: sent (its copies become
/// `notice_sent`), acknowledged, ignored, escalated, or back to draft. Only a notice of
/// `rights_holder_id` when given (another holder's is `NotFound`).
pub async fn set_status(
    store: &dyn Store,
    id: Id,
    status: NoticeStatus,
    rights_holder_id: Option<Id>,
    actor: &str,
    note: Option<String>,
) -> Result<Notice> {
    move_notice(
        store,
        &NoticeStatusChange {
            id,
            status,
            rights_holder_id,
            actor: actor.to_owned(),
            note: note.filter(|n| !n.trim().is_empty()),
            at: Utc::now(),
        },
    )
    .await
}

/// The statuses a person may move a notice in `status` to, as the store allows them (removal
/// states are the removal checks', `sending` is `notice send`'s; acknowledged, ignored and
/// escalated need a sent notice; a notice stuck in `sending` is settled as sent or draft).
pub fn manual_moves(status: NoticeStatus) -> Vec<NoticeStatus> {
    use NoticeStatus::{Acknowledged, Draft, Escalated, Ignored, Sending, Sent};
    let moves: &[NoticeStatus] = match status {
        Draft => &[Sent],
        Sending => &[Sent, Draft],
        _ => &[Sent, Acknowledged, Ignored, Escalated, Draft],
    };
    moves.iter().copied().filter(|s| *s != status).collect()
}

/// Moves a notice to another status as a person or a process says (acknowledged, ignored,
/// escalated, sent, draft), recorded in its history with the actor and note. Removal states
/// are refused: only removal checks verify removals. See [`Store::set_notice_status`].
pub async fn move_notice(store: &dyn Store, change: &NoticeStatusChange) -> Result<Notice> {
    store.set_notice_status(change).await?;
    Ok(store.get_notice(change.id, change.rights_holder_id).await?)
}

/// A notice's history, oldest first, and the mails sent about it.
pub async fn history(store: &dyn Store, id: Id) -> Result<(Vec<NoticeStep>, Vec<NoticeMail>)> {
    Ok((
        store.notice_history(id).await?,
        store.notice_mails(id).await?,
    ))
}

/// After removal checks recorded what became of the copies: sent notices follow them
/// (removal_verified, partially_removed), each move a step of the history by `removal-check`.
/// Returns how many notices moved. `copytrace dedup` calls it after its checks.
pub async fn follow_removals(store: &dyn Store, now: DateTime<Utc>) -> Result<u64> {
    Ok(store.refresh_notices(now).await?)
}

/// Replaces a draft notice's text, as the rights holder edited it before sending.
pub async fn edit(
    store: &dyn Store,
    id: Id,
    rights_holder_id: Option<Id>,
    body: &str,
) -> Result<Notice> {
    store.set_notice_body(id, rights_holder_id, body).await?;
    Ok(store.get_notice(id, rights_holder_id).await?)
}

/// The notices of one rights holder (all for `None`), newest first as the store lists them.
pub async fn list(store: &dyn Store, rights_holder_id: Option<Id>) -> Result<Vec<Notice>> {
    Ok(store.list_notices(rights_holder_id).await?)
}

/// One notice; another holder's is "not found" when `rights_holder_id` is given.
pub async fn get(store: &dyn Store, id: Id, rights_holder_id: Option<Id>) -> Result<Notice> {
    Ok(store.get_notice(id, rights_holder_id).await?)
}

/// What [`export`] writes of a notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The notice's URLs (aliases included) as a search engine's removal form takes them.
    Delisting(Engine),
    /// An abuse report to the site's host or CDN.
    Abuse,
}

/// How [`export`] writes an abuse report.
#[derive(Debug, Clone, Default)]
pub struct AbuseOptions {
    /// `zh` or `en`; `None` for the notice's language.
    pub lang: Option<String>,
    /// The host's IP addresses, as the operator knows them.
    pub ips: Vec<std::net::IpAddr>,
    /// Also look the site's addresses up in the DNS now.
    pub resolve: bool,
}

/// Writes notice `id` (of `rights_holder_id` when given: another holder's is "not found") for
/// a search engine or a host: see `copytrace_analytics::delisting`. Every copy the notice lists
/// is written with its aliases. An abuse report lacking an element it requires (the
/// complainant's legal name and contact, an evidence package per URL) is refused naming each.
pub async fn export(
    store: &dyn Store,
    id: Id,
    rights_holder_id: Option<Id>,
    kind: ExportKind,
    abuse: &AbuseOptions,
    now: DateTime<Utc>,
) -> Result<String> {
    let notice = store.get_notice(id, rights_holder_id).await?;
    let listed: std::collections::HashSet<Id> = notice.match_ids.iter().copied().collect();
    let mut records: Vec<MatchRecord> = store
        .list_matches(&MatchFilter {
            rights_holder_id: Some(notice.rights_holder_id),
            include_licensed: true,
            ..MatchFilter::default()
        })
        .await?
        .into_iter()
        .filter(|r| listed.contains(&r.id))
        .collect();
    // In the notice's order.
    records.sort_by_key(|r| notice.match_ids.iter().position(|m| *m == r.id));
    let mut items = Vec::with_capacity(records.len());
    for record in &records {
        items.push(notice_item(store, record, false).await?);
    }
    match kind {
        ExportKind::Delisting(engine) => Ok(url_list(engine, &notice_urls(&items))),
        ExportKind::Abuse => {
            let holder = holders::get(store, notice.rights_holder_id).await?;
            let profile = store.rights_holder_profile(holder.id).await?;
            let mut ips: Vec<String> = abuse.ips.iter().map(ToString::to_string).collect();
            if abuse.resolve {
                for ip in resolve(&notice.site).await? {
                    if !ips.contains(&ip) {
                        ips.push(ip);
                    }
                }
            }
            let sent = notice
                .sent_at
                .map(|at| at.to_rfc3339_opts(SecondsFormat::Secs, true));
            let date = now.format("%Y-%m-%d").to_string();
            let input = AbuseInput {
                lang: abuse.lang.as_deref().unwrap_or(&notice.lang),
                claimant: Claimant {
                    holder: &holder.name,
                    profile: profile.as_ref(),
                },
                site: &notice.site,
                notice_id: notice.id,
                notice_sent: sent.as_deref(),
                date: &date,
                items: &items,
                ips: &ips,
            };
            let missing = abuse_missing_elements(&input);
            if !missing.is_empty() {
                return Err(ServiceError::invalid(format!(
                    "the abuse report of notice {id} lacks required element(s): {}; fill in the \
                     rights holder's profile (`copytrace rights-holder set {:?} --legal-name … \
                     --email …`) and write the evidence packages (`copytrace evidence MATCH_ID \
                     --out DIR`) as needed",
                    missing.join("; "),
                    holder.name
                )));
            }
            Ok(render_abuse(&input)?)
        }
    }
}

/// The IP addresses `site` (a host, with a port when not the default) resolves to now.
async fn resolve(site: &str) -> Result<Vec<String>> {
    let host = match site.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => site,
    };
    let found = tokio::net::lookup_host((host, 80))
        .await
        .map_err(|e| ServiceError::unavailable(format!("cannot resolve {host}: {e}")))?;
    let mut ips: Vec<String> = Vec::new();
    for addr in found {
        let ip = addr.ip().to_string();
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    Ok(ips)
}
