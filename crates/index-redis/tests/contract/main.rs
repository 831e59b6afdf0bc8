//! One suite of `Index` behaviour tests, run against every implementation: the in-memory
//! `SimHashIndex`, and `RedisIndex` on the real Redis server and on the real three-master Redis
//! Cluster that `./scripts/test` starts.
//!
//! Each suite function takes a factory making a fresh, empty index for a given max distance,
//! so one more backend is one more line in [`memory`] / [`redis`]-like modules. Every Redis
//! test works under its own key prefix (cleared when the test ends), so the tests run in
//! parallel on one server without seeing each other's keys.

mod candidates;
mod helpers;
mod postings;
mod redis_only;
mod statistics;
mod suite;

/// Instantiates every contract test for one backend.
macro_rules! contract_tests {
    ($backend:ident, $make:expr) => {
        mod $backend {
            use crate::suite;

            #[test]
            fn recall_equals_brute_force_for_every_k_up_to_4_and_planted_distances_up_to_k_plus_1()
            {
                suite::recall_equals_brute_force(&$make);
            }

            #[test]
            fn query_many_answers_each_fingerprint_in_its_own_slot_in_order() {
                suite::query_many_keeps_order(&$make);
            }

            #[test]
            fn removed_works_are_no_longer_found_and_other_works_stay() {
                suite::removed_works_are_not_found(&$make);
            }

            #[test]
            fn removing_a_work_twice_or_an_unknown_work_changes_nothing() {
                suite::remove_is_idempotent(&$make);
            }

            #[test]
            fn reinserting_a_removed_work_restores_exactly_the_first_answers() {
                suite::reinsert_after_remove_restores_answers(&$make);
            }

            #[test]
            fn a_work_inserted_twice_is_gone_after_one_removal() {
                suite::double_insert_then_remove_leaves_nothing(&$make);
            }

            #[test]
            fn len_counts_every_window_of_every_work() {
                suite::len_is_exact(&$make);
            }
        }
    };
}

contract_tests!(
    memory,
    |k| Box::new(copytrace_matcher::SimHashIndex::new(k)) as Box<dyn copytrace_matcher::Index>
);
contract_tests!(redis, |k| Box::new(crate::helpers::TestRedisIndex::new(k))
    as Box<dyn copytrace_matcher::Index>);
contract_tests!(
    redis_cluster,
    |k| Box::new(crate::helpers::TestRedisIndex::on_cluster(k))
        as Box<dyn copytrace_matcher::Index>
);
