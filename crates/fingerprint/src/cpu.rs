//! Hot loops compiled for the CPU the program runs on, chosen at run time.
//!
//! Rust's default `x86_64` target assumes the 2003 baseline instruction set: no `POPCNT`, no
//! AVX2. Compiled for it, `u64::count_ones` becomes a dozen shift-and-mask instructions and the
//! SimHash column counters stay scalar. Building the whole program with `-C target-cpu=native`
//! would fix that but makes binaries that crash on older machines, so instead the two hot loops
//! here are compiled three times — portable, with `popcnt`, with `avx2` (+ `popcnt`) — and
//! [`detected`] picks the best one the running CPU supports (`is_x86_feature_detected!`,
//! cached by the standard library). Other architectures always use the portable code, which
//! their default targets already compile well.
//!
//! Every level computes exactly the same result; [`Level`] can be forced (clamped to what the
//! CPU supports) so benchmarks and tests compare the levels in one run.
//!
//! This is the only module of the workspace allowed to use `unsafe`: calling a
//! `#[target_feature]` function is unsafe because running it on a CPU without the feature is
//! undefined behaviour. Each call is guarded by a run-time detection of that feature.

#![allow(unsafe_code)]

/// An instruction-set level the hot loops are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The target's baseline instruction set (on x86-64: SSE2, no `POPCNT`).
    Portable,
    /// x86-64 with the `POPCNT` instruction.
    Popcnt,
    /// x86-64 with AVX2 and `POPCNT`.
    Avx2,
}

impl Level {
    /// Short lower-case name (`portable`, `popcnt`, `avx2`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Popcnt => "popcnt",
            Level::Avx2 => "avx2",
        }
    }
}

/// The best level the running CPU supports.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let popcnt = std::arch::is_x86_feature_detected!("popcnt");
        if popcnt && std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
        if popcnt {
            return Level::Popcnt;
        }
    }
    Level::Portable
}

/// `requested`, lowered to what the running CPU supports.
fn clamp(requested: Level) -> Level {
    requested.min(detected())
}

/// Appends to `out` the index of every fingerprint within `max_distance` Hamming bits of
/// `query` (distance ≤ `max_distance`), in increasing order. Uses the best level of the CPU.
pub fn hamming_scan(query: u64, fingerprints: &[u64], max_distance: u32, out: &mut Vec<u32>) {
    hamming_scan_at(detected(), query, fingerprints, max_distance, out);
}

/// [`hamming_scan`] at a chosen level (lowered to what the CPU supports), for benchmarks.
pub fn hamming_scan_at(
    level: Level,
    query: u64,
    fingerprints: &[u64],
    max_distance: u32,
    out: &mut Vec<u32>,
) {
    assert!(
        u32::try_from(fingerprints.len()).is_ok(),
        "hamming_scan indexes at most u32::MAX fingerprints"
    );
    match clamp(level) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `clamp` returned Avx2 only because `is_x86_feature_detected!` found both
        // `avx2` and `popcnt` on this CPU.
        Level::Avx2 => unsafe { x86::hamming_scan_avx2(query, fingerprints, max_distance, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `clamp` returned Popcnt only because `is_x86_feature_detected!` found
        // `popcnt` on this CPU.
        Level::Popcnt => unsafe {
            x86::hamming_scan_popcnt(query, fingerprints, max_distance, out)
        },
        _ => hamming_scan_generic(query, fingerprints, max_distance, out),
    }
}

/// Adds to `counts[bit]`, for every bit of a 64-bit hash, the number of `hashes` with that bit
/// set (the SimHash column sums, as counts of ones). Uses the best level of the CPU.
pub fn bit_counts(hashes: &[u64], counts: &mut [u32; 64]) {
    bit_counts_at(detected(), hashes, counts);
}

/// [`bit_counts`] at a chosen level (lowered to what the CPU supports), for benchmarks.
pub fn bit_counts_at(level: Level, hashes: &[u64], counts: &mut [u32; 64]) {
    match clamp(level) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `clamp` returned Avx2 only because `is_x86_feature_detected!` found `avx2`
        // (and `popcnt`) on this CPU.
        Level::Avx2 => unsafe { x86::bit_counts_avx2(hashes, counts) },
        // POPCNT does not help here: the portable byte-sliced loop is already branch-free.
        _ => bit_counts_generic(hashes, counts),
    }
}

/// Brute-force scan, written so that the compiler vectorises the distance computation: each
/// block of 64 fingerprints yields a bit mask of hits, and only the (rare) hits are pushed.
#[inline(always)]
fn hamming_scan_generic(query: u64, fingerprints: &[u64], max_distance: u32, out: &mut Vec<u32>) {
    let mut base = 0u32;
    let mut blocks = fingerprints.chunks_exact(64);
    for block in &mut blocks {
        let mut mask = 0u64;
        for (i, &fp) in block.iter().enumerate() {
            mask |= u64::from((query ^ fp).count_ones() <= max_distance) << i;
        }
        while mask != 0 {
            out.push(base + mask.trailing_zeros());
            mask &= mask - 1;
        }
        base += 64;
    }
    for (i, &fp) in blocks.remainder().iter().enumerate() {
        if (query ^ fp).count_ones() <= max_distance {
            out.push(base + i as u32);
        }
    }
}

/// Byte-sliced column counting: `lanes[j]` holds eight 8-bit counters, byte `k` counting bit
/// `8k + j`, so one hash costs eight shift-mask-add steps instead of 64 compares. The byte
/// counters are flushed into `counts` every 255 hashes, before they can overflow.
#[inline(always)]
fn bit_counts_generic(hashes: &[u64], counts: &mut [u32; 64]) {
    const LOW_BITS: u64 = 0x0101_0101_0101_0101;
    for chunk in hashes.chunks(255) {
        let mut lanes = [0u64; 8];
        for &hash in chunk {
            for (j, lane) in lanes.iter_mut().enumerate() {
                *lane += (hash >> j) & LOW_BITS;
            }
        }
        for (j, lane) in lanes.iter().enumerate() {
            for (k, byte) in lane.to_le_bytes().iter().enumerate() {
                counts[8 * k + j] += u32::from(*byte);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The generic loops, recompiled with CPU features enabled.

    #[target_feature(enable = "popcnt")]
    pub(super) fn hamming_scan_popcnt(
        query: u64,
        fingerprints: &[u64],
        max_distance: u32,
        out: &mut Vec<u32>,
    ) {
        super::hamming_scan_generic(query, fingerprints, max_distance, out);
    }

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) fn hamming_scan_avx2(
        query: u64,
        fingerprints: &[u64],
        max_distance: u32,
        out: &mut Vec<u32>,
    ) {
        super::hamming_scan_generic(query, fingerprints, max_distance, out);
    }

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) fn bit_counts_avx2(hashes: &[u64], counts: &mut [u32; 64]) {
        super::bit_counts_generic(hashes, counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u64) -> Vec<u64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                state ^ state >> 29
            })
            .collect()
    }

    const LEVELS: [Level; 3] = [Level::Portable, Level::Popcnt, Level::Avx2];

    #[test]
    fn every_level_finds_the_same_hamming_neighbours_as_a_plain_loop() {
        let mut fps = pseudo_random(1000, 7);
        let query = fps[500];
        fps[10] = query ^ 0b1011; // 3 bits away
        fps[999] = query ^ (1 << 63); // 1 bit away
        for max in [0, 3, 20, 32, 64] {
            let expected: Vec<u32> = (0..fps.len() as u32)
                .filter(|&i| (query ^ fps[i as usize]).count_ones() <= max)
                .collect();
            for level in LEVELS {
                let mut out = vec![];
                hamming_scan_at(level, query, &fps, max, &mut out);
                assert_eq!(out, expected, "level {level:?}, max {max}");
            }
        }
    }

    #[test]
    fn every_level_counts_the_same_bit_columns_as_a_plain_loop() {
        for n in [0, 1, 7, 254, 255, 256, 1000] {
            let hashes = pseudo_random(n, n as u64 + 1);
            let mut expected = [0u32; 64];
            for h in &hashes {
                for (bit, count) in expected.iter_mut().enumerate() {
                    *count += (h >> bit & 1) as u32;
                }
            }
            for level in LEVELS {
                let mut counts = [0u32; 64];
                bit_counts_at(level, &hashes, &mut counts);
                assert_eq!(counts, expected, "level {level:?}, {n} hashes");
            }
        }
    }

    #[test]
    fn all_ones_hashes_do_not_overflow_the_byte_counters() {
        let hashes = vec![u64::MAX; 600];
        for level in LEVELS {
            let mut counts = [0u32; 64];
            bit_counts_at(level, &hashes, &mut counts);
            assert_eq!(counts, [600; 64]);
        }
    }
}
