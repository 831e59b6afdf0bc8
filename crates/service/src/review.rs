//! Review with confidence gating: which matches are reported without a person, which wait in
//! the review queue, and the decisions people take on them.
//!
//! A false takedown notice is worse than a missed copy, so only matches that pass the certainty
//! gate are confirmed automatically: those whose [certainty](ReviewGate::certainty) reaches the
//! auto-confirm level. Certainty is the larger of the score (the share of the smaller unit of
//! copying that is copied, see docs/algorithms.md) and the copied characters over
//! [`CERTAIN_COPIED_CHARS`], so the default 0.5 means "at least half of the page, or of the
//! work, is the copy, or at least 500 characters are": a page carrying one chapter among many
//! is as certain as a page that is nothing but the chapter. The rest (excerpts inside other
//! text, quotations in commentary) wait as `pending` until a person confirms, rejects (false
//! positive) or licenses them. Every decision
//! records who, when and why, belongs to the page × work pair, and survives re-crawls,
//! re-matching and `dedup --full`; a rejected pair comes back to the queue only when the page
//! changes substantially (the store's rule, [`copytrace_store::Store::record_page_matches`]).

use chrono::Utc;
use copytrace_matcher::WorkMatch;
use copytrace_store::{
    DecisionRecord, Id, MatchFilter, MatchRecord, NewDecision, NewMatch, Review, Store, StoreError,
};

use crate::error::{Context, Result, ServiceError};

/// Default auto-confirm level: matches at least this certain are reported without a person.
pub const DEFAULT_AUTO_CONFIRM_SCORE: f64 = 0.5;

/// Copied characters that make a match certain (1.0) whatever the size of the page and the
/// work: about two pages of a printed novel, far beyond any quotation.
pub const CERTAIN_COPIED_CHARS: f64 = 1_000.0;

/// The certainty gate of new matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReviewGate {
    /// Matches at least this certain are confirmed automatically; above 1 every match waits
    /// for a person, 0 confirms every match.
    pub auto_confirm_score: f64,
}

impl Default for ReviewGate {
    fn default() -> Self {
        Self {
            auto_confirm_score: DEFAULT_AUTO_CONFIRM_SCORE,
        }
    }
}

impl ReviewGate {
    /// A gate at `score`, refusing a level that is not a number.
    pub fn new(auto_confirm_score: f64) -> Result<Self> {
        if auto_confirm_score.is_nan() || auto_confirm_score < 0.0 {
            return Err(ServiceError::invalid(format!(
                "the auto-confirm score must be a number from 0 (confirm every match) to above 1 \
                 (review every match), not {auto_confirm_score}"
            )));
        }
        Ok(Self { auto_confirm_score })
    }

    /// How certain a verified match is, in [0, 1]: the larger of its score and its copied
    /// characters over [`CERTAIN_COPIED_CHARS`].
    pub fn certainty(found: &WorkMatch) -> f64 {
        certainty_of(found.score, found.copied_chars as f64)
    }

    /// Whether a verified match is certain enough to report without a person.
    pub fn passes(&self, found: &WorkMatch) -> bool {
        Self::certainty(found) >= self.auto_confirm_score
    }

    /// [`ReviewGate::passes`] for a match as it was recorded (the verdict of a page with the
    /// same text, reused): the same judgement, from the same score and copied characters.
    pub fn passes_recorded(&self, recorded: &NewMatch) -> bool {
        certainty_of(recorded.score, f64::from(recorded.copied_chars)) >= self.auto_confirm_score
    }
}

/// See [`ReviewGate::certainty`].
fn certainty_of(score: f64, copied_chars: f64) -> f64 {
    score.max(copied_chars / CERTAIN_COPIED_CHARS).min(1.0)
}

/// A decision a person takes on matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It is an infringement: report it.
    Confirm,
    /// A false positive: never report it (unless the page changes substantially).
    Reject,
    /// The page may carry the work: never report it.
    License,
    /// Back to the review queue.
    Reopen,
}

impl Decision {
    /// The review state the decision sets.
    pub fn review(self) -> Review {
        match self {
            Decision::Confirm => Review::Confirmed,
            Decision::Reject => Review::Rejected,
            Decision::License => Review::Licensed,
            Decision::Reopen => Review::Pending,
        }
    }
}

/// Who is deciding, and for which tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    /// Recorded with each decision (a user's e-mail, `cli:<login>`).
    pub actor: String,
    /// Only this rights holder's matches may be decided on (the web's tenants); another
    /// holder's match is "not found". `None` for operators.
    pub rights_holder_id: Option<Id>,
}

/// Takes `decision` on every match of `match_ids`, each atomically with its audit record.
/// Every match is looked up first: when one does not exist (or is another tenant's) the answer
/// is `NotFound` naming it and nothing is decided, so a list that names another holder's match
/// among one's own changes none of them.
pub async fn decide(
    store: &dyn Store,
    reviewer: &Reviewer,
    match_ids: &[Id],
    decision: Decision,
    note: &str,
) -> Result<Vec<Id>> {
    if match_ids.is_empty() {
        return Err(ServiceError::invalid("name at least one match id"));
    }
    for &match_id in match_ids {
        let (_, work_id) = store.match_subject(match_id).await?;
        if let Some(own) = reviewer.rights_holder_id
            && store.work_summary(work_id).await?.rights_holder_id != own
        {
            return Err(StoreError::NotFound(format!("match {match_id}")).into());
        }
    }
    let mut decided = Vec::with_capacity(match_ids.len());
    for &match_id in match_ids {
        let id = store
            .decide_match(&NewDecision {
                match_id,
                review: decision.review(),
                actor: reviewer.actor.clone(),
                note: note.to_owned(),
                at: Utc::now(),
                rights_holder_id: reviewer.rights_holder_id,
            })
            .await
            .with_context(|| format!("cannot record the decision on match {match_id}"))?;
        decided.push(id);
    }
    Ok(decided)
}

/// The matches in review state `review` (the queue: `Pending`), of one rights holder or all,
/// highest score first: the strongest candidates are the quickest to decide.
pub async fn queue(
    store: &dyn Store,
    rights_holder_id: Option<Id>,
    reviews: &[Review],
) -> Result<Vec<MatchRecord>> {
    let mut records = store
        .list_matches(&MatchFilter {
            rights_holder_id,
            include_licensed: true,
            reviews: reviews.to_vec(),
            ..MatchFilter::default()
        })
        .await?;
    records.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    Ok(records)
}

/// The decisions taken on a match's page × work pair, oldest first.
pub async fn history(
    store: &dyn Store,
    reviewer: &Reviewer,
    match_id: Id,
) -> Result<Vec<DecisionRecord>> {
    Ok(store
        .match_decisions(match_id, reviewer.rights_holder_id)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(score: f64, copied_chars: usize) -> WorkMatch {
        WorkMatch {
            work_id: 1,
            score,
            coverage: score,
            containment: score,
            copied_chars,
            method: "simhash+align".to_owned(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn certainty_is_the_score_or_the_copied_length_whichever_is_larger() {
        let gate = ReviewGate::default();
        // A page that is the chapter, short or long.
        assert!(gate.passes(&found(0.95, 300)));
        // One chapter among many on an aggregator page: a small share, but 3,000 characters.
        assert_eq!(ReviewGate::certainty(&found(0.12, 3_000)), 1.0);
        assert!(gate.passes(&found(0.12, 3_000)));
        // An excerpt of 297 characters inside unrelated text: a person decides.
        assert!((ReviewGate::certainty(&found(0.24, 297)) - 0.297).abs() < 1e-9);
        assert!(!gate.passes(&found(0.24, 297)));
        assert!(!ReviewGate::new(1.01).unwrap().passes(&found(1.0, 100_000)));
        assert!(ReviewGate::new(0.0).unwrap().passes(&found(0.0, 0)));
    }

    #[test]
    fn the_gate_refuses_levels_that_are_not_numbers() {
        assert!(ReviewGate::new(f64::NAN).is_err());
        assert!(ReviewGate::new(-0.1).is_err());
        assert_eq!(ReviewGate::new(2.0).unwrap().auto_confirm_score, 2.0);
    }
}
