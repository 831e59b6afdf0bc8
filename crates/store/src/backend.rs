//! How a backend implements [`Store`](crate::Store): one plain async function per trait method,
//! and this one mapping from the trait onto those functions.
//!
//! Both backends are laid out alike (`mod.rs` for connecting and migrating, then `library`,
//! `pages`, `matches`, `jobs`, `schedules` and `users`), each function taking the store as its
//! first argument. A method whose SQL is the same on both backends is not in either: it is one
//! generic function of `crate::shared`, run on the backend's pool. [`impl_store_by_section!`]
//! writes the `impl Store` that forwards every method to its function, so the list of the 120
//! methods and where each lives is written once instead of once per backend, and a method
//! missing from a section file is a compile error naming it.

/// Implements [`Store`](crate::Store) for `$store` by forwarding each method to the function
/// of the same name in the section module it belongs to (see [`forward!`]). Invoked once in
/// each backend's `mod.rs`, where the section modules are in scope.
macro_rules! impl_store_by_section {
    ($store:ty) => {
        $crate::backend::impl_store_by_section!(@impl $store;
            schema::migrate() -> ();

            library::ensure_rights_holder(name: &str) -> $crate::Id;
            shared::list_rights_holders() -> Vec<$crate::RightsHolder>;
            shared::delete_rights_holder(id: $crate::Id) -> ();
            library::upsert_work(work: &$crate::NewWork) -> ($crate::Id, $crate::WriteOutcome);
            library::upsert_works(works: &[$crate::NewWork])
                -> Vec<($crate::Id, $crate::WriteOutcome)>;
            shared::withdraw_work(id: $crate::Id, at: ::chrono::DateTime<::chrono::Utc>) -> bool;
            shared::add_licensed_hosts(
                rights_holder_id: $crate::Id,
                work_id: Option<$crate::Id>,
                hosts: &[String]
            ) -> u64;
            shared::remove_licensed_hosts(
                rights_holder_id: $crate::Id,
                work_id: Option<$crate::Id>,
                hosts: &[String]
            ) -> u64;
            shared::list_licensed_hosts(rights_holder_id: Option<$crate::Id>)
                -> Vec<$crate::LicensedHost>;
            shared::library_state() -> $crate::LibraryState;
            shared::library_changes_since(generation: i64) -> Vec<$crate::LibraryChange>;
            shared::mark_library_generation(generation: i64) -> ();
            library::list_works(rights_holder_id: Option<$crate::Id>)
                -> Vec<$crate::WorkSummary>;
            shared::get_work(id: $crate::Id) -> $crate::Work;
            shared::work_summary(id: $crate::Id) -> $crate::WorkSummary;
            shared::all_segments() -> Vec<$crate::IndexedSegment>;
            library::work_fingerprints(work_id: $crate::Id)
                -> Vec<$crate::AlgorithmFingerprint>;
            shared::fingerprint_versions() -> Vec<($crate::Id, String, u32)>;

            pages::upsert_page(page: &$crate::NewPage) -> $crate::PageWrite;
            shared::get_page(id: $crate::Id) -> $crate::Page;
            pages::get_pages(ids: &[$crate::Id]) -> Vec<$crate::Page>;
            pages::shared_texts(content_hashes: &[String]) -> Vec<String>;
            shared::pages_to_match(limit: u32) -> Vec<$crate::Page>;
            shared::due_page_ids(after_id: $crate::Id, limit: u32) -> Vec<($crate::Id, String)>;
            pages::mark_all_pages_unmatched() -> u64;
            pages::mark_pages_unmatched(ids: &[$crate::Id]) -> u64;
            shared::save_page_sketch(sketch: &$crate::PageSketch) -> ();
            pages::save_page_sketches(sketches: &[$crate::PageSketch]) -> u64;
            shared::page_sketches(after_id: $crate::Id, limit: u32, version: u32)
                -> Vec<$crate::PageSketch>;
            pages::mark_unsketched_pages_unmatched(version: u32) -> u64;
            pages::record_not_modified(url: &str, seen_at: ::chrono::DateTime<::chrono::Utc>)
                -> Option<$crate::Id>;
            pages::page_validators(scope: &$crate::ValidatorScope)
                -> Vec<$crate::PageValidators>;
            shared::evidence_text(page_id: $crate::Id, content_hash: &str) -> Option<String>;
            shared::page_capture(page_id: $crate::Id, content_hash: &str)
                -> Option<$crate::PageCapture>;
            shared::earlier_pages_with_text(
                content_hash: &str,
                host: &str,
                before_id: $crate::Id,
                limit: u32
            ) -> Vec<($crate::Id, String)>;
            shared::set_page_alias(page_id: $crate::Id, alias_of: Option<$crate::Id>) -> ();
            shared::release_aliases(page_id: $crate::Id, content_hash: &str) -> u64;
            shared::page_aliases(page_id: $crate::Id) -> Vec<String>;
            shared::alias_pages(page_id: $crate::Id) -> Vec<($crate::Id, String)>;
            pages::hand_over_matches(from: $crate::Id, to: $crate::Id, works: &[$crate::Id])
                -> Vec<$crate::Id>;
            shared::list_sites() -> Vec<$crate::Site>;
            shared::count_pages() -> u64;

            matches::record_page_verdicts(verdicts: &[$crate::PageVerdict<'_>])
                -> Vec<$crate::VerdictOutcome>;
            shared::verified_twin(page_id: $crate::Id, content_hash: &str, matcher: &str)
                -> Option<$crate::VerifiedTwin>;
            matches::list_matches(filter: &$crate::MatchFilter) -> Vec<$crate::MatchRecord>;
            shared::stream_matches(filter: &$crate::MatchFilter) -> $crate::MatchStream;
            shared::match_listing(
                filter: &$crate::MatchFilter,
                order: $crate::ListingOrder,
                offset: u64,
                limit: u32
            ) -> $crate::MatchListing;
            matches::set_match_status(match_id: $crate::Id, status: $crate::MatchStatus) -> ();
            matches::decide_match(decision: &$crate::NewDecision) -> $crate::Id;
            shared::match_decisions(match_id: $crate::Id, rights_holder_id: Option<$crate::Id>)
                -> Vec<$crate::DecisionRecord>;
            shared::infringing_pages(after_id: $crate::Id, limit: u32)
                -> Vec<$crate::InfringingPage>;
            matches::infringing_page(url: &str) -> Option<$crate::InfringingPage>;
            matches::record_page_check(check: &$crate::PageCheck) -> $crate::PageCheckOutcome;
            shared::page_checks(page_id: $crate::Id) -> Vec<$crate::PageCheckRecord>;

            shared::work_stats(filter: &$crate::StatsFilter) -> Vec<$crate::WorkStats>;
            shared::site_stats(filter: &$crate::StatsFilter) -> Vec<$crate::SiteStats>;
            shared::copy_lifetimes(filter: &$crate::StatsFilter)
                -> Vec<(String, $crate::CopyLifetime)>;
            shared::daily_stats(filter: &$crate::StatsFilter) -> Vec<$crate::DailyStats>;
            shared::holder_stats(filter: &$crate::StatsFilter) -> Vec<$crate::HolderStats>;
            shared::first_copies(filter: &$crate::StatsFilter) -> Vec<$crate::FirstCopy>;

            matches::create_notice(notice: &$crate::NewNotice) -> $crate::Id;
            shared::get_notice(id: $crate::Id, rights_holder_id: Option<$crate::Id>)
                -> $crate::Notice;
            shared::list_notices(rights_holder_id: Option<$crate::Id>) -> Vec<$crate::Notice>;
            shared::set_notice_body(
                id: $crate::Id,
                rights_holder_id: Option<$crate::Id>,
                body: &str
            ) -> ();
            matches::set_notice_status(change: &$crate::NoticeStatusChange) -> ();
            matches::refresh_notices(at: ::chrono::DateTime<::chrono::Utc>) -> u64;
            shared::notice_history(notice_id: $crate::Id) -> Vec<$crate::NoticeStep>;
            matches::begin_notice_mail(mail: &$crate::NewNoticeMail) -> $crate::MailClaim;
            matches::finish_notice_mail(end: &$crate::MailEnd) -> ();
            shared::notice_mails(notice_id: $crate::Id) -> Vec<$crate::NoticeMail>;
            shared::begin_report_mail(mail: &$crate::NewReportMail) -> $crate::ReportClaim;
            shared::finish_report_mail(
                mail_id: $crate::Id,
                error: Option<&str>,
                at: ::chrono::DateTime<::chrono::Utc>
            ) -> ();
            shared::report_mails(period_from: Option<::chrono::NaiveDate>)
                -> Vec<$crate::ReportMail>;
            shared::add_site_contacts(contacts: &[$crate::NewSiteContact]) -> u64;
            shared::site_contacts(host: &str) -> Vec<$crate::SiteContact>;
            shared::remove_site_contact(host: &str, email: &str) -> ();
            shared::set_site_icp(icp: &$crate::SiteIcp) -> bool;
            shared::site_icp(host: &str) -> Option<$crate::SiteIcp>;
            shared::add_alert_target(target: &$crate::NewAlertTarget) -> $crate::Id;
            shared::list_alert_targets(rights_holder_id: Option<$crate::Id>)
                -> Vec<$crate::AlertTarget>;
            shared::remove_alert_target(id: $crate::Id, rights_holder_id: Option<$crate::Id>)
                -> ();
            matches::gather_alert(
                target_id: $crate::Id,
                delivery_key: &str,
                at: ::chrono::DateTime<::chrono::Utc>
            ) -> Option<$crate::AlertDelivery>;
            shared::due_alert_deliveries(at: ::chrono::DateTime<::chrono::Utc>, max_attempts: u32)
                -> Vec<$crate::AlertDelivery>;
            shared::alert_deliveries(target_id: $crate::Id) -> Vec<$crate::AlertDelivery>;
            shared::record_alert_attempt(
                delivery_id: $crate::Id,
                error: Option<&str>,
                at: ::chrono::DateTime<::chrono::Utc>,
                next_attempt_at: ::chrono::DateTime<::chrono::Utc>
            ) -> ();
            shared::match_subject(match_id: $crate::Id) -> ($crate::Id, $crate::Id);
            shared::record_evidence_package(package: &$crate::NewEvidencePackage) -> $crate::Id;
            shared::evidence_packages(match_id: $crate::Id) -> Vec<$crate::EvidencePackage>;
            shared::timestamp_evidence_package(
                match_id: $crate::Id,
                manifest_sha256: &str,
                timestamp: &$crate::TrustedTimestamp
            ) -> bool;

            jobs::enqueue_job(job: &$crate::NewJob) -> $crate::Id;
            jobs::claim_job(
                kinds: &[&str],
                now: ::chrono::DateTime<::chrono::Utc>,
                lease: ::chrono::Duration
            ) -> Option<$crate::Job>;
            jobs::complete_job(lease: $crate::JobLease) -> ();
            jobs::fail_job(
                lease: $crate::JobLease,
                error: &str,
                retry_at: ::chrono::DateTime<::chrono::Utc>
            ) -> ();
            jobs::renew_job_lease(
                lease: $crate::JobLease,
                lease_until: ::chrono::DateTime<::chrono::Utc>
            ) -> ();
            jobs::release_job(lease: $crate::JobLease, run_at: ::chrono::DateTime<::chrono::Utc>)
                -> ();
            jobs::requeue_dead_job(job_id: $crate::Id, run_at: ::chrono::DateTime<::chrono::Utc>)
                -> ();
            shared::get_job(job_id: $crate::Id) -> $crate::Job;
            jobs::list_jobs(filter: &$crate::JobFilter) -> Vec<$crate::Job>;
            jobs::job_counts() -> Vec<$crate::JobCount>;
            jobs::try_lead(name: &str, ttl: ::chrono::Duration)
                -> Option<Box<dyn $crate::Leadership>>;

            schedules::create_schedule(schedule: &$crate::NewSchedule) -> $crate::Id;
            schedules::ensure_schedule(schedule: &$crate::NewSchedule) -> $crate::Id;
            shared::list_schedules() -> Vec<$crate::Schedule>;
            shared::get_schedule_by_name(name: &str) -> $crate::Schedule;
            shared::set_schedule_enabled(id: $crate::Id, enabled: bool) -> ();
            shared::delete_schedule(id: $crate::Id) -> ();
            schedules::fire_schedule(fire: &$crate::ScheduleFire) -> Option<$crate::FiredRun>;
            schedules::create_run(run: &$crate::NewRun, job: Option<&$crate::NewJob>)
                -> ($crate::Id, Option<$crate::Id>);
            schedules::get_run(id: $crate::Id) -> $crate::Run;
            shared::run_for_job(job_id: $crate::Id) -> Option<$crate::Run>;
            schedules::list_runs(filter: &$crate::RunFilter) -> Vec<$crate::Run>;
            shared::last_succeeded_run(kind: $crate::RunKind) -> Option<$crate::Run>;
            schedules::start_run(id: $crate::Id, at: ::chrono::DateTime<::chrono::Utc>)
                -> $crate::Run;
            schedules::update_run_progress(
                id: $crate::Id,
                counts: &$crate::RunCounts,
                stats: &::serde_json::Value
            ) -> bool;
            schedules::finish_run(
                id: $crate::Id,
                state: $crate::RunState,
                counts: &$crate::RunCounts,
                stats: &::serde_json::Value,
                error: Option<&str>,
                at: ::chrono::DateTime<::chrono::Utc>
            ) -> ();
            schedules::request_run_cancel(id: $crate::Id, at: ::chrono::DateTime<::chrono::Utc>)
                -> $crate::RunState;

            users::create_user(user: &$crate::NewUser) -> $crate::Id;
            shared::find_user_by_email(email: &str) -> Option<$crate::User>;
            shared::list_users() -> Vec<$crate::User>;
            shared::set_user_password(email: &str, password_hash: &str) -> ();
            shared::remove_user(email: &str) -> ();
            shared::create_session(session: &$crate::NewSession) -> ();
            shared::session(token_hash: &str, at: ::chrono::DateTime<::chrono::Utc>)
                -> Option<$crate::Session>;
            shared::delete_session(token_hash: &str) -> ();
            shared::delete_expired_sessions(at: ::chrono::DateTime<::chrono::Utc>) -> u64;
            shared::record_login_failure(key: &str, at: ::chrono::DateTime<::chrono::Utc>) -> ();
            shared::login_failures_since(key: &str, since: ::chrono::DateTime<::chrono::Utc>)
                -> u64;
            shared::clear_login_failures(key: &str, before: ::chrono::DateTime<::chrono::Utc>)
                -> ();
            shared::create_api_token(token: &$crate::NewApiToken) -> $crate::Id;
            shared::api_token_user(token_hash: &str, at: ::chrono::DateTime<::chrono::Utc>)
                -> Option<$crate::User>;
            shared::list_api_tokens(user_id: $crate::Id) -> Vec<$crate::ApiToken>;
            shared::delete_api_token(id: $crate::Id, user_id: $crate::Id) -> ();

            // rights-holder profiles (issue 40)
            shared::set_rights_holder_profile(profile: &$crate::RightsHolderProfile) -> ();
            shared::rights_holder_profile(rights_holder_id: $crate::Id)
                -> Option<$crate::RightsHolderProfile>;
            shared::set_signature_image(
                rights_holder_id: $crate::Id,
                image: Option<&$crate::SignatureImage>
            ) -> ();
            shared::signature_image(rights_holder_id: $crate::Id)
                -> Option<$crate::SignatureImage>;
        );
    };
    (@impl $store:ty; $(
        $section:ident :: $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;
    )*) => {
        #[::async_trait::async_trait]
        impl $crate::Store for $store {
            $(
                async fn $name(&self, $($arg: $ty),*) -> $crate::Result<$ret> {
                    $crate::backend::forward!($section::$name(self $(, $arg)*))
                }
            )*
        }
    };
}

pub(crate) use impl_store_by_section;

/// One forwarded call: a statement of `crate::shared` runs on the store's pool, a section
/// function gets the store itself, and `schema::migrate` is the backend's own `migrate`.
macro_rules! forward {
    (shared::$name:ident($store:ident $(, $arg:ident)*)) => {
        $crate::shared::$name(&$store.pool $(, $arg)*).await
    };
    (schema::$name:ident($store:ident)) => {
        $name($store).await
    };
    ($section:ident::$name:ident($store:ident $(, $arg:ident)*)) => {
        $section::$name($store $(, $arg)*).await
    };
}

pub(crate) use forward;
