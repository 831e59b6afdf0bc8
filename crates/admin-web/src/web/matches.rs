//! Matches: the filtered list, the review queue with decisions in bulk, and one match's
//! evidence side by side.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::{Form, Query};
use copytrace_service::review::{self, Decision, Reviewer};
use copytrace_store::{Id, ListingOrder, Review};
use serde::Deserialize;

use super::filters::{Choice, FilterQuery, review_choices, status_choices};
use super::i18n::Texts;
use super::{Area, MatchRowView, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/matches", get(match_list))
        .route("/review", get(review_queue))
        .route("/matches/decide", post(decide))
        .route("/matches/{id}", get(match_page))
        .route("/matches/{id}/package", post(evidence_package))
}

/// Matches on one page of a list.
const MATCHES_PER_PAGE: u32 = 50;

#[derive(Template)]
#[template(path = "web/matches.html")]
struct MatchListPage {
    t: &'static Texts,
    viewer: Viewer,
    /// `/matches` or `/review`: where the filter form and the pager point.
    path: &'static str,
    heading: &'static str,
    query: FilterQuery,
    /// Fields the filter form carries along unchanged (the statistics' table).
    hidden: Vec<(&'static str, String)>,
    /// The filter as a URL query, for the pager's links.
    query_string: String,
    problem: Option<String>,
    statuses: Vec<Choice>,
    reviews: Vec<Choice>,
    matches: Vec<MatchRowView>,
    /// Whether another page follows.
    more: bool,
    page: u64,
    /// Whether the visitor may decide (the checkboxes and the decision form).
    may_decide: bool,
    /// Where a decision returns to.
    back: String,
}

async fn match_list(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<FilterQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Reports)?;
    let t = visitor.t;
    listing(
        &state,
        &visitor,
        query,
        "/matches",
        t.matches,
        ListingOrder::Newest,
    )
    .await
}

/// The matches waiting for a person, strongest first (the same list, its review fixed to
/// `pending` unless another state is asked for).
async fn review_queue(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(mut query): Query<FilterQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Review)?;
    if query.review.trim().is_empty() {
        query.review = Review::Pending.as_str().to_owned();
    }
    let t = visitor.t;
    listing(
        &state,
        &visitor,
        query,
        "/review",
        t.review_queue,
        ListingOrder::HighestScore,
    )
    .await
}

/// One page of the matches `query` selects, of the visitor's own works for a rights holder.
async fn listing(
    state: &WebState,
    visitor: &Visitor,
    query: FilterQuery,
    path: &'static str,
    heading: &'static str,
    order: ListingOrder,
) -> Result<Response, Response> {
    let t = visitor.t;
    visitor.check_work(state, &query.work).await?;
    let (filter, problem) = match query.match_filter(visitor.tenant(), t) {
        Ok(filter) => (Some(filter), None),
        Err(problem) => (None, Some(problem)),
    };
    let shown = query.page_number();
    let listing = match &filter {
        Some(filter) => copytrace_service::export::match_listing(
            state.store.as_ref(),
            filter,
            order,
            (shown - 1) * u64::from(MATCHES_PER_PAGE),
            MATCHES_PER_PAGE,
        )
        .await
        .map_err(failure)?,
        None => copytrace_store::MatchListing {
            more: false,
            matches: Vec::new(),
        },
    };
    let query_string = query.query_string();
    let back = format!("{path}?{query_string}&page={shown}");
    Ok(page(MatchListPage {
        t,
        viewer: visitor.viewer(),
        path,
        heading,
        hidden: Vec::new(),
        statuses: status_choices(t),
        reviews: review_choices(t),
        query,
        query_string,
        problem,
        matches: listing
            .matches
            .iter()
            .map(|m| MatchRowView::of(m, t))
            .collect(),
        more: listing.more,
        page: shown,
        may_decide: Area::Review.allows(visitor.session.user.role),
        back,
    }))
}

/// A decision on the matches ticked in a list.
#[derive(Deserialize)]
struct DecisionForm {
    #[serde(default)]
    csrf: String,
    /// `confirm`, `reject`, `license` or `reopen`.
    decision: String,
    #[serde(default)]
    note: String,
    /// The ticked matches.
    #[serde(default, rename = "id")]
    ids: Vec<Id>,
    /// The list to return to.
    #[serde(default)]
    back: String,
}

/// Takes one decision on every ticked match (each with its audit record), then returns to the
/// list. A rights holder's decision on another holder's match is a 404 and changes nothing of
/// it.
async fn decide(
    State(state): State<WebState>,
    visitor: Visitor,
    Form(form): Form<DecisionForm>,
) -> Result<Response, Response> {
    visitor.enter(Area::Review)?;
    visitor.check_form(&form.csrf)?;
    let t = visitor.t;
    let decision = match form.decision.as_str() {
        "confirm" => Decision::Confirm,
        "reject" => Decision::Reject,
        "license" => Decision::License,
        "reopen" => Decision::Reopen,
        _ => return Err(visitor.bad_request(t.choose_decision)),
    };
    if form.ids.is_empty() {
        return Err(visitor.bad_request(t.choose_matches));
    }
    let reviewer = Reviewer {
        actor: visitor.session.user.email.clone(),
        rights_holder_id: visitor.tenant(),
    };
    // Another holder's match among the ticked is not found, and then nothing is decided.
    review::decide(
        state.store.as_ref(),
        &reviewer,
        &form.ids,
        decision,
        form.note.trim(),
    )
    .await
    .map_err(|error| visitor.not_found_or_failure(error))?;
    // Back only to one of this site's lists or matches, never elsewhere.
    let back = if (form.back.starts_with("/matches") || form.back.starts_with("/review"))
        && !form.back.contains("//")
        && !form.back.contains('\\')
    {
        form.back
    } else {
        "/review".to_owned()
    };
    Ok(Redirect::to(&back).into_response())
}

/// A run of characters of a passage, and whether it differs from the other side.
struct Segment {
    text: String,
    changed: bool,
}

/// One aligned passage with its differences marked on both sides.
struct PairView {
    page: Vec<Segment>,
    work: Vec<Segment>,
    /// Synonyms the page put in place of the work's words (laundered copies only).
    substitutions: Vec<Substitution>,
}

/// A word of the page standing for a synonym in the work.
struct Substitution {
    page: String,
    work: String,
}

/// Marks, character by character, what the page changed: on the work's side what it lacks, on
/// the page's side what it substituted or inserted.
fn diff_pair(pair: &copytrace_service::evidence::PassagePair) -> PairView {
    use similar::{ChangeTag, TextDiff};
    let work = pair.work.as_deref().unwrap_or("");
    let copy = pair.page.as_deref().unwrap_or("");
    let mut work_side: Vec<Segment> = Vec::new();
    let mut page_side: Vec<Segment> = Vec::new();
    let push = |side: &mut Vec<Segment>, text: &str, changed: bool| match side.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => side.push(Segment {
            text: text.to_owned(),
            changed,
        }),
    };
    let diff = TextDiff::from_chars(work, copy);
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push(&mut work_side, text, false);
                push(&mut page_side, text, false);
            }
            ChangeTag::Delete => push(&mut work_side, text, true),
            ChangeTag::Insert => push(&mut page_side, text, true),
        }
    }
    PairView {
        page: page_side,
        work: work_side,
        substitutions: pair
            .substitutions
            .iter()
            .map(|(page, work)| Substitution {
                page: page.clone(),
                work: work.clone(),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "web/match.html")]
struct MatchPage {
    t: &'static Texts,
    viewer: Viewer,
    m: MatchRowView,
    /// Whether the visitor may decide on it (the decision form).
    may_decide: bool,
    work_id: i64,
    work_title: String,
    work_external_id: String,
    /// Other URLs of the same page (the same text on the same site).
    aliases: Vec<String>,
    pairs: Vec<PairView>,
}

/// One match with its passages side by side and the differences marked. Another holder's
/// match answers 404, as a missing one does.
async fn match_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    visitor.enter(Area::Reports)?;
    let t = visitor.t;
    let evidence =
        copytrace_service::evidence::match_evidence(state.store.as_ref(), id, visitor.tenant())
            .await
            .map_err(|error| visitor.not_found_or_failure(error))?;
    let record = evidence.record;
    Ok(page(MatchPage {
        t,
        viewer: visitor.viewer(),
        m: MatchRowView::of(&record, t),
        may_decide: Area::Review.allows(visitor.session.user.role),
        work_id: record.work_id,
        work_title: record.work_title,
        work_external_id: record.work_external_id,
        aliases: record.aliases,
        pairs: evidence.pairs.iter().map(diff_pair).collect(),
    }))
}

/// The evidence package of one match, written now and downloaded as a ZIP archive: the raw
/// page, its text, the passages side by side, a screenshot of the stored page (by headless
/// Chromium, offline, when it is installed) and the manifest with every file's SHA-256, recorded
/// in the store so `copytrace evidence verify` can check it later. With a time-stamping
/// authority configured (`--tsa-url`, the one notice mails are stamped by) the manifest gets its
/// RFC 3161 token, `manifest.tsr`, exactly as `copytrace evidence ID --out DIR` writes it; an
/// authority that fails leaves the package without one (logged), to stamp later with `copytrace
/// evidence timestamp`. Another holder's match is a 404.
async fn evidence_package(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
    Form(form): Form<PackageForm>,
) -> Result<Response, Response> {
    use copytrace_service::evidence::{self, PackageRequest};
    visitor.enter(Area::Reports)?;
    visitor.check_form(&form.csrf)?;
    let scratch = tempfile::tempdir().map_err(|e| failure(e.into()))?;
    // Chromium named by COPYTRACE_CHROMIUM (as the CLI's --chromium), else found on PATH.
    let chromium = std::env::var_os("COPYTRACE_CHROMIUM").map(std::path::PathBuf::from);
    let screenshot =
        evidence::screenshot_settings(chromium.as_deref(), std::time::Duration::from_secs(30));
    let package_dir = scratch.path().join("package");
    let summary = evidence::write_package(
        state.store.as_ref(),
        &PackageRequest {
            match_id: id,
            rights_holder_id: visitor.tenant(),
            out: package_dir.clone(),
            screenshot,
            timestamps: state.mail.timestamps.clone(),
        },
    )
    .await
    .map_err(|error| visitor.not_found_or_failure(error))?;
    if let evidence::PackageStamp::Failed(why) = &summary.stamp {
        tracing::warn!(match_id = id, %why, "evidence package downloaded without a timestamp");
    }
    let mut archive = tempfile::tempfile().map_err(|e| failure(e.into()))?;
    evidence::zip_package(&package_dir, id, &mut archive).map_err(failure)?;
    super::download(
        archive,
        "application/zip",
        &format!("copytrace-evidence-{id}.zip"),
    )
}

#[derive(Deserialize)]
struct PackageForm {
    #[serde(default)]
    csrf: String,
}
