//! The filter form shared by the match list, the review queue, the statistics and the exports:
//! what a user typed, read into the store's filters. Every field arrives as text, so bad input
//! is a message on the page (not a bare 400), and every value reaches the database as a bound
//! parameter, never as SQL.

use chrono::Duration;
use copytrace_service::catalog::parse_instant;
use copytrace_store::{Id, MatchFilter, MatchStatus, Review, StatsFilter};
use serde::Deserialize;

use super::i18n::Texts;

/// The filter form's fields, as typed (empty means "any").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FilterQuery {
    /// A work id.
    pub work: String,
    /// A host; its subdomains are included.
    pub site: String,
    /// A lifecycle state (`open`, `notice_sent`, `removed`, `licensed`, `withdrawn`).
    pub status: String,
    /// A review state, or `all`; empty means the reported ones (pending and confirmed).
    pub review: String,
    /// First day (inclusive), `YYYY-MM-DD` or RFC 3339.
    pub since: String,
    /// Last day (inclusive), `YYYY-MM-DD` or RFC 3339.
    pub until: String,
    /// Lowest score, 0 to 1.
    pub min_score: String,
    /// Page number of a list, from 1.
    pub page: String,
}

/// A choice of a select box: the value sent and what it reads.
pub(super) struct Choice {
    pub value: &'static str,
    pub label: &'static str,
}

/// The status field's choices, in the visitor's language.
pub(super) fn status_choices(t: &Texts) -> Vec<Choice> {
    STATUSES
        .iter()
        .map(|s| Choice {
            value: s.as_str(),
            label: t.code(s.as_str()),
        })
        .collect()
}

/// The review field's choices, in the visitor's language.
pub(super) fn review_choices(t: &Texts) -> Vec<Choice> {
    Review::ALL
        .iter()
        .map(|r| Choice {
            value: r.as_str(),
            label: t.code(r.as_str()),
        })
        .collect()
}

/// The states the status field offers.
pub(super) const STATUSES: [MatchStatus; 5] = [
    MatchStatus::Open,
    MatchStatus::NoticeSent,
    MatchStatus::Removed,
    MatchStatus::Licensed,
    MatchStatus::Withdrawn,
];

impl FilterQuery {
    /// The matches these fields select, of `tenant`'s works only when it is a rights holder's
    /// visit; or the message saying which field is wrong.
    pub fn match_filter(&self, tenant: Option<Id>, t: &Texts) -> Result<MatchFilter, String> {
        let mut filter = MatchFilter::from(&self.stats_filter(tenant, t)?);
        filter.include_licensed = filter.statuses.contains(&MatchStatus::Licensed)
            || filter.reviews.contains(&Review::Licensed);
        Ok(filter)
    }

    /// The statistics filter of these fields (see [`FilterQuery::match_filter`]).
    pub fn stats_filter(&self, tenant: Option<Id>, t: &Texts) -> Result<StatsFilter, String> {
        let wrong = |field: &str, value: &str| format!("{} {field}: {value:?}", t.invalid_filter);
        let work_id = match self.work.trim() {
            "" => None,
            id => Some(id.parse::<Id>().map_err(|_| wrong(t.work, id))?),
        };
        let statuses = match self.status.trim() {
            "" => Vec::new(),
            code => vec![MatchStatus::parse(code).ok_or_else(|| wrong(t.status, code))?],
        };
        let reviews = match self.review.trim() {
            "" => vec![Review::Pending, Review::Confirmed],
            "all" => Vec::new(),
            code => vec![Review::parse(code).ok_or_else(|| wrong(t.review, code))?],
        };
        let day =
            |field: &str, value: &str| parse_instant(field, value).map_err(|_| wrong(field, value));
        let since = match self.since.trim() {
            "" => None,
            value => Some(day(t.since, value)?),
        };
        // A day named as the end is included: the filter stops at the next midnight.
        let until = match self.until.trim() {
            "" => None,
            value if value.len() == 10 => Some(day(t.until, value)? + Duration::days(1)),
            value => Some(day(t.until, value)?),
        };
        let min_score = match self.min_score.trim() {
            "" => None,
            value => Some(
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| (0.0..=1.0).contains(s))
                    .ok_or_else(|| wrong(t.min_score, value))?,
            ),
        };
        let site = match self.site.trim() {
            "" => None,
            host => Some(host.to_ascii_lowercase()),
        };
        Ok(StatsFilter {
            rights_holder_id: tenant,
            work_id,
            site,
            since,
            until,
            statuses,
            reviews,
            min_score,
        })
    }

    /// The page number asked for (1 when missing or not a number).
    pub fn page_number(&self) -> u64 {
        self.page.trim().parse::<u64>().unwrap_or(1).max(1)
    }

    /// These fields (without the page) as a URL query, to carry the filter into links.
    pub fn query_string(&self) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("work", &self.work),
            ("site", &self.site),
            ("status", &self.status),
            ("review", &self.review),
            ("since", &self.since),
            ("until", &self.until),
            ("min_score", &self.min_score),
        ] {
            if !value.trim().is_empty() {
                query.append_pair(name, value.trim());
            }
        }
        query.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::i18n::Lang;

    fn query(pairs: &[(&str, &str)]) -> FilterQuery {
        let text = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        serde_urlencoded_from(&text)
    }

    fn serde_urlencoded_from(text: &str) -> FilterQuery {
        axum_extra::extract::Query::<FilterQuery>::try_from_uri(
            &format!("/x?{text}").parse().unwrap(),
        )
        .unwrap()
        .0
    }

    #[test]
    fn typed_fields_become_the_stores_filter() {
        let t = Lang::En.texts();
        let filter = query(&[
            ("work", "7"),
            ("site", " Pirate.Example "),
            ("status", "removed"),
            ("review", "all"),
            ("since", "2026-01-01"),
            ("until", "2026-01-31"),
            ("min_score", "0.5"),
        ])
        .match_filter(Some(3), t)
        .unwrap();
        assert_eq!(filter.rights_holder_id, Some(3));
        assert_eq!(filter.work_id, Some(7));
        assert_eq!(filter.site.as_deref(), Some("pirate.example"));
        assert_eq!(filter.statuses, vec![MatchStatus::Removed]);
        assert!(filter.reviews.is_empty(), "all review states");
        assert_eq!(
            filter.until.unwrap().to_rfc3339(),
            "2026-02-01T00:00:00+00:00",
            "the last day is included"
        );
        assert_eq!(filter.min_score, Some(0.5));
        let reported = query(&[]).match_filter(None, t).unwrap();
        assert_eq!(reported.reviews, MatchFilter::reported().reviews);
        assert!(!reported.include_licensed);
        assert!(
            query(&[("status", "licensed")])
                .match_filter(None, t)
                .unwrap()
                .include_licensed
        );
    }

    #[test]
    fn bad_fields_are_named_not_run() {
        let t = Lang::En.texts();
        for (field, value) in [
            ("work", "1 OR 1=1"),
            ("status", "open'; DROP TABLE matches; --"),
            ("review", "maybe"),
            ("since", "yesterday"),
            ("min_score", "2"),
            ("min_score", "NaN"),
        ] {
            let problem = query(&[(field, value)]).match_filter(None, t).unwrap_err();
            assert!(problem.contains(value), "{field}: {problem}");
        }
    }

    #[test]
    fn the_filter_travels_in_links_without_the_page() {
        let q = query(&[("site", "a.example"), ("review", "all"), ("page", "3")]);
        assert_eq!(q.query_string(), "site=a.example&review=all");
        assert_eq!(q.page_number(), 3);
        assert_eq!(query(&[("page", "x")]).page_number(), 1);
    }
}
