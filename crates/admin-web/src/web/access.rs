//! Which roles may open which pages.

use copytrace_store::Role;

/// A part of the web, with the roles allowed into it. Tenancy is not decided here: a rights
/// holder allowed into an area still sees only its own objects there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The dashboard: everyone logged in.
    Dashboard,
    /// Works, matches and their evidence: what rights holders and analysts read.
    Reports,
    /// Deciding on matches (confirm, reject, license): the owners of the works, and admins.
    Review,
    /// Takedown notices: the owners of the works, and admins.
    Notices,
    /// Statistics: analysts, rights holders (their own), admins.
    Statistics,
    /// Sites with their copies, removal rates, notices and contacts: everyone (a rights
    /// holder sees only the sites with its copies, counted for it alone).
    Sites,
    /// Adding and removing the contacts notices are mailed to: operators and admins.
    SiteContacts,
    /// A rights holder's own settings (profile, licensed hosts, alerts): the holder itself,
    /// and admins.
    Holders,
    /// Downloads of matches and statistics: analysts, rights holders (their own), admins.
    Exports,
    /// Crawl schedules, runs and jobs: operators and admins.
    Crawls,
    /// The source library: uploading works and catalogs. Rights holders (into their own
    /// catalog), operators and admins.
    Library,
    /// Accounts: admins only.
    Users,
}

impl Area {
    /// Whether `role` may open this area's pages.
    pub fn allows(self, role: Role) -> bool {
        use Role::{Admin, Analyst, Operator, RightsHolder};
        match self {
            Area::Dashboard | Area::Sites => true,
            Area::Reports | Area::Statistics | Area::Exports => {
                matches!(role, Admin | Analyst | RightsHolder)
            }
            Area::Review | Area::Notices | Area::Holders => matches!(role, Admin | RightsHolder),
            Area::Crawls | Area::SiteContacts => matches!(role, Admin | Operator),
            Area::Library => matches!(role, Admin | Operator | RightsHolder),
            Area::Users => role == Admin,
        }
    }
}
