//! The behaviour every `Index<u64>` implementation must show. Each function gets a factory of
//! fresh indexes and panics on the first difference.

use copytrace_matcher::{Hit, SegmentRef};

use crate::helpers::{Make, brute_force, flip_bits, sorted, splitmix};

fn segment(work_id: i64, ordinal: u32) -> SegmentRef {
    SegmentRef { work_id, ordinal }
}

fn query(index: &dyn copytrace_matcher::Index, fingerprint: u64) -> Vec<(i64, u32, u32)> {
    let mut hits = Vec::new();
    index.query(&fingerprint, &mut hits).expect("query");
    sorted(&hits)
}

/// Random library windows plus, around each query centre, indexed neighbours at every distance
/// from 0 to `k + 1`; then queries at every distance from 0 to `k + 1` of library windows and of
/// the centres. Both `query` and `query_many` must return exactly what a linear scan finds.
pub fn recall_equals_brute_force(make: &Make) {
    for k in 0..=4u32 {
        let mut state = 0xC0FFEE + u64::from(k);
        let mut index = make(k);
        let mut indexed: Vec<(u64, SegmentRef)> = Vec::new();
        // Twelve works of random windows.
        for work_id in 1..=12 {
            let windows: Vec<(u32, u64)> = (0..60).map(|o| (o, splitmix(&mut state))).collect();
            index.insert_work(work_id, &windows).expect("insert_work");
            indexed.extend(windows.iter().map(|&(o, fp)| (fp, segment(work_id, o))));
        }
        // Work 100 plants neighbours at each distance 0..=k+1 around eight centres.
        let centres: Vec<u64> = (0..8).map(|_| splitmix(&mut state)).collect();
        let mut planted = Vec::new();
        for &centre in &centres {
            for distance in 0..=k + 1 {
                planted.push(flip_bits(centre, distance, &mut state));
            }
        }
        let planted: Vec<(u32, u64)> = planted
            .into_iter()
            .zip(0..)
            .map(|(fp, o)| (o, fp))
            .collect();
        index.insert_work(100, &planted).expect("insert_work");
        indexed.extend(planted.iter().map(|&(o, fp)| (fp, segment(100, o))));

        let mut queries = centres.clone();
        for distance in 0..=k + 1 {
            for q in 0..10 {
                let base = indexed[(q * 37 + distance as usize) % indexed.len()].0;
                queries.push(flip_bits(base, distance, &mut state));
            }
        }
        let mut many = vec![vec![Hit {
            segment: segment(-1, 0),
            distance: 99,
        }]];
        index.query_many(&queries, &mut many).expect("query_many");
        assert_eq!(many.len(), queries.len(), "k={k}: one answer per query");
        let mut planted_found = 0;
        for (i, &q) in queries.iter().enumerate() {
            let expected = brute_force(&indexed, q, k);
            assert_eq!(
                query(index.as_ref(), q),
                expected,
                "k={k} query {i} via query"
            );
            assert_eq!(sorted(&many[i]), expected, "k={k} query {i} via query_many");
            if i < centres.len() {
                planted_found += expected.iter().filter(|hit| hit.0 == 100).count();
            }
        }
        // The planted neighbours within k of their centre are really there to be found (the
        // test would prove nothing if brute force found nothing either).
        assert!(
            planted_found >= centres.len() * (k as usize + 1),
            "k={k}: only {planted_found} planted neighbours found"
        );
    }
}

/// `query_many` clears `out`, then fills `out[i]` with the hits of `fingerprints[i]`, for
/// repeated and unknown fingerprints too.
pub fn query_many_keeps_order(make: &Make) {
    let mut index = make(3);
    let a = 0x0123_4567_89AB_CDEF;
    let b = !a;
    index.insert_work(1, &[(0, a)]).expect("insert");
    index.insert_work(2, &[(5, b)]).expect("insert");
    let unknown = a ^ 0x5555_5555_0000_0000; // 16 bits away from a, 48 from b
    let mut out = vec![Vec::new(); 9];
    index
        .query_many(&[b, unknown, a ^ 1, b], &mut out)
        .expect("query_many");
    let answers: Vec<_> = out.iter().map(|hits| sorted(hits)).collect();
    assert_eq!(
        answers,
        vec![vec![(2, 5, 0)], vec![], vec![(1, 0, 1)], vec![(2, 5, 0)]]
    );
    index.query_many(&[], &mut out).expect("query_many");
    assert!(out.is_empty(), "an empty page leaves no answers behind");
}

/// Removing one work removes all of its windows, and only its windows, even where another work
/// has the very same signature.
pub fn removed_works_are_not_found(make: &Make) {
    let mut index = make(3);
    let mut state = 11;
    let [shared, only_1, only_2] = [(); 3].map(|()| splitmix(&mut state));
    index
        .insert_work(1, &[(0, shared), (1, only_1)])
        .expect("insert");
    index
        .insert_work(2, &[(7, shared), (8, only_2)])
        .expect("insert");
    assert_eq!(query(index.as_ref(), shared), vec![(1, 0, 0), (2, 7, 0)]);
    index.remove_work(1).expect("remove");
    assert_eq!(query(index.as_ref(), shared), vec![(2, 7, 0)]);
    assert_eq!(query(index.as_ref(), only_1), vec![]);
    assert_eq!(query(index.as_ref(), only_2 ^ 0b101), vec![(2, 8, 2)]);
    assert_eq!(index.len().expect("len"), 2);
}

/// `remove_work` of a work that is not (or no longer) indexed succeeds and changes nothing.
pub fn remove_is_idempotent(make: &Make) {
    let mut index = make(2);
    let mut state = 12;
    let [a, b, c] = [(); 3].map(|()| splitmix(&mut state));
    index.insert_work(1, &[(0, a), (1, b)]).expect("insert");
    index.insert_work(2, &[(0, c)]).expect("insert");
    index.remove_work(99).expect("removing an unknown work");
    assert_eq!(index.len().expect("len"), 3);
    index.remove_work(1).expect("remove");
    index.remove_work(1).expect("removing it again");
    assert_eq!(index.len().expect("len"), 1);
    assert_eq!(query(index.as_ref(), c), vec![(2, 0, 0)]);
    assert_eq!(query(index.as_ref(), a), vec![]);
    assert_eq!(query(index.as_ref(), b), vec![]);
}

/// What the matcher does when a work changes: remove, insert again. The answers afterwards are
/// exactly those of the first insertion.
pub fn reinsert_after_remove_restores_answers(make: &Make) {
    let mut state = 7;
    let mut index = make(3);
    let windows: Vec<(u32, u64)> = (0..40).map(|o| (o, splitmix(&mut state))).collect();
    let other: Vec<(u32, u64)> = (0..40).map(|o| (o, splitmix(&mut state))).collect();
    index.insert_work(5, &windows).expect("insert");
    index.insert_work(6, &other).expect("insert");
    let probes: Vec<u64> = windows
        .iter()
        .chain(&other)
        .map(|&(_, fp)| flip_bits(fp, 2, &mut state))
        .collect();
    let mut first = Vec::new();
    index.query_many(&probes, &mut first).expect("query_many");
    let len = index.len().expect("len");
    index.remove_work(5).expect("remove");
    assert_eq!(index.len().expect("len"), len - windows.len());
    index.insert_work(5, &windows).expect("insert again");
    let mut second = Vec::new();
    index.query_many(&probes, &mut second).expect("query_many");
    let first: Vec<_> = first.iter().map(|h| sorted(h)).collect();
    let second: Vec<_> = second.iter().map(|h| sorted(h)).collect();
    assert_eq!(first, second);
    assert_eq!(index.len().expect("len"), len);
    assert!(
        first.iter().all(|hits| hits.len() == 1),
        "each probe finds its window"
    );
}

/// However often a work was inserted, one `remove_work` takes all of it away.
pub fn double_insert_then_remove_leaves_nothing(make: &Make) {
    let mut index = make(3);
    index.insert_work(3, &[(0, 1), (1, 2)]).expect("insert");
    index
        .insert_work(3, &[(0, 1), (1, 2)])
        .expect("insert again");
    index
        .insert(&3, segment(3, 2))
        .expect("insert one more window");
    assert!(!query(index.as_ref(), 1).is_empty());
    index.remove_work(3).expect("remove");
    assert_eq!(index.len().expect("len"), 0);
    assert!(index.is_empty().expect("is_empty"));
    for fp in [1, 2, 3] {
        assert_eq!(query(index.as_ref(), fp), vec![], "fingerprint {fp}");
    }
}

/// `len` counts windows, through single inserts, whole works and removals.
pub fn len_is_exact(make: &Make) {
    let mut index = make(3);
    assert_eq!(index.len().expect("len"), 0);
    assert!(index.is_empty().expect("is_empty"));
    index.insert(&11, segment(1, 0)).expect("insert");
    index.insert(&12, segment(1, 1)).expect("insert");
    assert_eq!(index.len().expect("len"), 2);
    let windows: Vec<(u32, u64)> = (0..25).map(|o| (o, 1000 + u64::from(o))).collect();
    index.insert_work(2, &windows).expect("insert_work");
    index.insert_work(3, &[]).expect("an empty work");
    assert_eq!(index.len().expect("len"), 27);
    assert!(!index.is_empty().expect("is_empty"));
    index.remove_work(2).expect("remove");
    assert_eq!(index.len().expect("len"), 2);
}
