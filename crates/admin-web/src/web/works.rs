//! The library's works and each work's copies.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use copytrace_store::{ListingOrder, MatchFilter, StatsFilter};

use super::i18n::Texts;
use super::lists::{ListQuery, Pager, page_of};
use super::{Area, MatchRowView, Viewer, Visitor, WebState, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/works", get(works_page))
        .route("/works/{id}", get(work_page))
}

struct WorkRowView {
    id: i64,
    title: String,
    external_id: String,
    chapters: u32,
    pages: u64,
    sites: u64,
}

#[derive(Template)]
#[template(path = "web/works.html")]
struct WorksPage {
    t: &'static Texts,
    viewer: Viewer,
    works: Vec<WorkRowView>,
    pager: Pager,
    list_path: &'static str,
}

/// The library's works (a rights holder's own), filtered by title or identifier, a page at a
/// time, with how many pages and sites copy each.
async fn works_page(
    State(state): State<WebState>,
    visitor: Visitor,
    axum::extract::Query(query): axum::extract::Query<ListQuery>,
) -> Result<Response, Response> {
    visitor.enter(Area::Reports)?;
    let Visitor { session, t } = visitor;
    let store = state.store.as_ref();
    let holder = session.user.rights_holder_id;
    let works = copytrace_service::library::list_works(store, holder)
        .await
        .map_err(failure)?;
    let matching: Vec<_> = works
        .into_iter()
        .filter(|w| query.keeps(&[&w.title, &w.external_id]))
        .collect();
    let (shown, pager) = page_of(matching, &query);
    let mut works = Vec::with_capacity(shown.len());
    for w in shown {
        // Copies of the works shown only, each counted over its own matches (an index
        // lookup), never over every match of the library.
        let filter = StatsFilter {
            rights_holder_id: holder,
            work_id: Some(w.id),
            reviews: MatchFilter::reported().reviews,
            ..StatsFilter::default()
        };
        let copies = copytrace_service::stats::works(store, &filter, None)
            .await
            .map_err(failure)?;
        let found = copies.first();
        works.push(WorkRowView {
            id: w.id,
            title: w.title,
            external_id: w.external_id,
            chapters: w.chapter_count,
            pages: found.map_or(0, |c| c.stats.pages),
            sites: found.map_or(0, |c| c.stats.sites),
        });
    }
    Ok(page(WorksPage {
        t,
        viewer: Viewer::of(&session, t),
        works,
        pager,
        list_path: "/works",
    }))
}

#[derive(Template)]
#[template(path = "web/work.html")]
struct WorkPage {
    t: &'static Texts,
    viewer: Viewer,
    id: i64,
    title: String,
    external_id: String,
    holder: String,
    chapters: u32,
    /// Whether the work has more copies than the page shows.
    more: bool,
    /// The chapters copied, in chapter order.
    copied_chapters: Vec<ChapterLine>,
    matches: Vec<MatchRowView>,
}

/// A chapter of a work and its copies.
struct ChapterLine {
    ordinal: u32,
    title: String,
    pages: u64,
    sites: u64,
    coverage: String,
}

/// Copies listed on a work's page (the newest; the match list pages through them all).
const WORK_MATCHES: u32 = 50;

/// One work and its newest reported copies. Another holder's work answers 404, as a missing
/// one does.
async fn work_page(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    visitor.enter(Area::Reports)?;
    let t = visitor.t;
    let store = state.store.as_ref();
    let (work, holder) = copytrace_service::library::work_summary(store, id)
        .await
        .map_err(|error| visitor.not_found_or_failure(error))?;
    if visitor
        .tenant()
        .is_some_and(|own| own != work.rights_holder_id)
    {
        return Err(visitor.not_found());
    }
    let filter = MatchFilter {
        work_id: Some(id),
        rights_holder_id: visitor.tenant(),
        ..MatchFilter::reported()
    };
    let listing = copytrace_service::export::match_listing(
        store,
        &filter,
        ListingOrder::Newest,
        0,
        WORK_MATCHES,
    )
    .await
    .map_err(failure)?;
    // Which chapters are copied, and how widely (a work without chapters is one unit).
    let chapters = if work.chapter_count > 0 {
        let filter = StatsFilter {
            work_id: Some(id),
            rights_holder_id: visitor.tenant(),
            reviews: MatchFilter::reported().reviews,
            ..StatsFilter::default()
        };
        copytrace_service::stats::chapters(store, &filter, None)
            .await
            .map_err(failure)?
            .into_iter()
            .map(|c| ChapterLine {
                ordinal: c.chapter,
                title: c.title,
                pages: c.pages,
                sites: c.sites,
                coverage: format!("{:.0}", c.best_coverage * 100.0),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(page(WorkPage {
        t,
        viewer: visitor.viewer(),
        id,
        copied_chapters: chapters,
        title: work.title,
        external_id: work.external_id,
        holder,
        chapters: work.chapter_count,
        more: listing.more,
        matches: listing
            .matches
            .iter()
            .map(|m| MatchRowView::of(m, t))
            .collect(),
    }))
}
