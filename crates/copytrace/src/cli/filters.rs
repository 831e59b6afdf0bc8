//! The filters shared by `copytrace stats`, `export` and `report`: which matches they take.

use anyhow::Result;
use clap::ValueEnum;
use copytrace_service::catalog::parse_instant;
use copytrace_service::holders;
use copytrace_store::{MatchFilter, MatchStatus, Review, StatsFilter, Store};

/// Which copies (matches) a statistic, an export or a report takes.
#[derive(Debug, Clone, clap::Args)]
pub struct FilterArgs {
    /// Only this rights holder's works.
    #[arg(long, value_name = "NAME")]
    rights_holder: Option<String>,
    /// Only this work (its id, from `library list`).
    #[arg(long, value_name = "ID")]
    work: Option<i64>,
    /// Only pages on this host and its subdomains.
    #[arg(long, value_name = "HOST")]
    site: Option<String>,
    /// Only copies first seen on or after this date (2026-01-31) or time (RFC 3339); for
    /// `daily`, only days from it.
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only copies first seen before this date or time; for `daily`, only days before it.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Only copies in these states (repeatable, or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    status: Vec<StatusArg>,
    /// Review states counted (default: the reported infringements, confirmed and pending).
    #[arg(long, value_enum, value_delimiter = ',',
          default_values_t = [ReviewArg::Confirmed, ReviewArg::Pending])]
    review: Vec<ReviewArg>,
    /// Only copies scoring at least this.
    #[arg(long, value_name = "SCORE")]
    min_score: Option<f64>,
}

/// A stored lifecycle state on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusArg {
    /// Online, no notice sent.
    Open,
    /// Online, a notice was sent.
    NoticeSent,
    /// Found removed.
    Removed,
}

impl FilterArgs {
    /// The statistics filter these arguments name (a rights holder is looked up by name).
    pub async fn stats_filter(&self, store: &dyn Store) -> Result<StatsFilter> {
        let rights_holder_id = match &self.rights_holder {
            Some(name) => Some(holders::find(store, name).await?.id),
            None => None,
        };
        Ok(StatsFilter {
            rights_holder_id,
            work_id: self.work,
            site: self.site.clone(),
            since: self
                .since
                .as_deref()
                .map(|v| parse_instant("--since", v))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|v| parse_instant("--until", v))
                .transpose()?,
            statuses: self
                .status
                .iter()
                .map(|s| match s {
                    StatusArg::Open => MatchStatus::Open,
                    StatusArg::NoticeSent => MatchStatus::NoticeSent,
                    StatusArg::Removed => MatchStatus::Removed,
                })
                .collect(),
            reviews: ReviewArg::states(&self.review),
            min_score: self.min_score,
        })
    }
}

/// Which matches an export or report holds: the filters of the statistics, and licensed
/// matches on request.
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Also include matches on hosts licensed to publish the work (status `licensed`; see
    /// `rights-holder license`), which are not infringements and are left out by default.
    #[arg(long)]
    include_licensed: bool,
    /// Which matches.
    #[command(flatten)]
    filter: FilterArgs,
}

impl ScopeArgs {
    /// The match filter these arguments name.
    pub async fn match_filter(&self, store: &dyn Store) -> Result<MatchFilter> {
        let mut filter = MatchFilter::from(&self.filter.stats_filter(store).await?);
        // Asking for licensed decisions asks for the licensed status they list as.
        filter.include_licensed =
            self.include_licensed || filter.reviews.contains(&Review::Licensed);
        Ok(filter)
    }
}

/// A review state on the command line (see `copytrace review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewArg {
    /// Waiting for a person (below the certainty gate).
    Pending,
    /// Reported: confirmed by a person or the certainty gate.
    Confirmed,
    /// Judged a false positive.
    Rejected,
    /// Judged licensed.
    Licensed,
    /// Every state.
    All,
}

impl ReviewArg {
    /// The review states named (every state if `all` is among them).
    pub fn states(args: &[ReviewArg]) -> Vec<Review> {
        if args.contains(&ReviewArg::All) {
            return Vec::new();
        }
        let mut states: Vec<Review> = args
            .iter()
            .filter_map(|arg| match arg {
                ReviewArg::Pending => Some(Review::Pending),
                ReviewArg::Confirmed => Some(Review::Confirmed),
                ReviewArg::Rejected => Some(Review::Rejected),
                ReviewArg::Licensed => Some(Review::Licensed),
                ReviewArg::All => None,
            })
            .collect();
        states.dedup();
        states
    }
}
