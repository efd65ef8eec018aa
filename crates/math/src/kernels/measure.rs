//! A dependency-free throughput measurement of the plaintext matrix products, for the
//! project's `argus bench core` command (the criterion benches cover the same ground in more
//! detail), and the timing behind kernel choices made by measurement (`fastest_of`).

use std::time::Instant;

use super::isa::{detected, Isa};
use super::{gemm_f65519_with, gemm_u16_with, P65519};

/// Number of query vectors every measurement multiplies against the database block.
pub const MEASURE_QUERIES: usize = 64;

/// Which plaintext dot product [`measure_plain_dot`] times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlainDotVariant {
    /// Z_2^16 ([`super::gemm_u16`]).
    Ring16,
    /// F_65519 ([`super::gemm_f65519`]).
    Field65519,
}

/// Result of [`measure_plain_dot`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlainDotMeasurement {
    /// Median wall-clock seconds of one matrix-product call.
    pub seconds_median: f64,
    /// Dot products per second at that median (`64 · rows / seconds_median`).
    pub dots_per_sec: f64,
}

/// Measures plaintext length-`len` dot products per second on the calling thread: 64 query
/// vectors against a block of `rows` database rows, one matrix-product call per repetition,
/// `reps` repetitions after one warm-up call; returns the median seconds per call and dot
/// products per second. Runs at [`detected()`]. Zero arguments are treated as 1.
pub fn measure_plain_dot(variant: PlainDotVariant, len: usize, rows: usize, reps: usize) -> PlainDotMeasurement {
    measure_plain_dot_with(detected(), variant, len, rows, reps)
}

/// [`measure_plain_dot`] at a forced level: the best available one ≤ `isa`.
pub fn measure_plain_dot_with(
    isa: Isa,
    variant: PlainDotVariant,
    len: usize,
    rows: usize,
    reps: usize,
) -> PlainDotMeasurement {
    let (len, rows, reps) = (len.max(1), rows.max(1), reps.max(1));
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    // Random canonical values serve both variants.
    let mut random = |n: usize| -> Vec<u16> { (0..n).map(|_| (rng.next() % P65519 as u64) as u16).collect() };
    let a = random(MEASURE_QUERIES * len);
    let b = random(rows * len);
    let mut out = vec![0u16; MEASURE_QUERIES * rows];
    // One core's rate: the product on the calling thread (restored below).
    let saved = super::threads::setting();
    super::set_threads(1);
    let times = timed_runs(reps, || {
        // The shapes are consistent by construction and the values canonical, so the kernels
        // cannot fail; a failure would only show up as a meaningless timing.
        let _ = match variant {
            PlainDotVariant::Ring16 => gemm_u16_with(isa, &a, &b, len, &mut out),
            PlainDotVariant::Field65519 => gemm_f65519_with(isa, &a, &b, len, &mut out),
        };
    });
    super::set_threads(saved);
    let seconds_median = times[times.len() / 2];
    PlainDotMeasurement {
        seconds_median,
        dots_per_sec: (MEASURE_QUERIES * rows) as f64 / seconds_median.max(f64::MIN_POSITIVE),
    }
}

/// Wall-clock seconds of `reps` calls of `f` (at least one) after one warm-up call, sorted
/// ascending.
fn timed_runs(reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    f();
    let mut times: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// Which of several equivalent computations runs fastest here: one warm-up call of each, then
/// `rounds` rounds that time each once, interleaved so that a burst of other load on the
/// machine hits all of them alike; returns the index of the lowest time (0 if there are none).
pub(crate) fn fastest_of(candidates: &mut [&mut dyn FnMut()], rounds: usize) -> usize {
    for f in candidates.iter_mut() {
        f();
    }
    let mut best = vec![f64::INFINITY; candidates.len()];
    for _ in 0..rounds.max(1) {
        for (b, f) in best.iter_mut().zip(candidates.iter_mut()) {
            let start = Instant::now();
            f();
            *b = b.min(start.elapsed().as_secs_f64());
        }
    }
    (0..best.len()).min_by(|&x, &y| best[x].total_cmp(&best[y])).unwrap_or(0)
}

/// Marsaglia's xorshift64: plenty for benchmark data, and no `rand` dependency.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
