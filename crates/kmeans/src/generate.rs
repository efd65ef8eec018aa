//! Synthetic datasets shaped like the paper's UCI benchmarks (Table 3), reproducible from a `u64` seed.
//!
//! Both generators draw from `ChaCha8Rng` (`rand_chacha`, whose output is fixed for a seed across
//! versions and platforms), so a seed always gives the same dataset. [`control_chart`] evaluates `sin`
//! through the platform's libm: a last-bit difference there could only show if a value fell within
//! one ulp of a rounding boundary at the fourth decimal.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::data::Dataset;

/// Rows of [`control_chart`].
pub const CONTROL_CHART_ROWS: usize = 600;
/// Columns (time steps) of [`control_chart`].
pub const CONTROL_CHART_COLS: usize = 60;
/// The six classes of [`control_chart`], 100 rows each, in this order.
pub const CONTROL_CHART_CLASSES: [&str; 6] =
    ["normal", "cyclic", "increasing trend", "decreasing trend", "upward shift", "downward shift"];

/// Rows (plant species) of [`plants_like`].
pub const PLANTS_ROWS: usize = 34781;
/// Columns (US states and Canadian provinces) of [`plants_like`].
pub const PLANTS_COLS: usize = 70;

/// The UCI "Synthetic Control Chart Time Series" data, regenerated from its published definition
/// (Alcock & Manolopoulos 1999): 600 rows × 60 time steps, 100 rows of each class of
/// [`CONTROL_CHART_CLASSES`] in order. With `m = 30`, `s = 2`, `r` uniform in `[−3, 3]` drawn per
/// point and `t = 1..=60`:
///
/// * normal: `y = m + r·s`;
/// * cyclic: `y = m + r·s + a·sin(2πt/T)`, `a ∈ [10, 15]`, `T ∈ [10, 15]` drawn per row;
/// * increasing / decreasing trend: `y = m + r·s ± g·t`, `g ∈ [0.2, 0.5]` per row;
/// * upward / downward shift: `y = m + r·s ± k·x`, `x ∈ [7.5, 20]` per row, `k = 0` for `t < t3`
///   and `1` from `t3` on, `t3` an integer in `[20, 40]` per row.
///
/// Values are rounded to 4 decimals (scale 4); no header.
pub fn control_chart(seed: u64) -> Dataset {
    const M: f64 = 30.0;
    const S: f64 = 2.0;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut values = Vec::with_capacity(CONTROL_CHART_ROWS * CONTROL_CHART_COLS);
    for class in control_chart_labels() {
        // The row's parameters: each class uses its own, but all are drawn so every row takes the
        // same number of draws before its noise (simpler to reason about, no effect on the data).
        let a = rng.gen_range(10.0..=15.0);
        let period = rng.gen_range(10.0..=15.0);
        let g = rng.gen_range(0.2..=0.5);
        let x = rng.gen_range(7.5..=20.0);
        let t3: usize = rng.gen_range(20..=40);
        for t in 1..=CONTROL_CHART_COLS {
            let r: f64 = rng.gen_range(-3.0..=3.0);
            let tf = t as f64;
            let k = if t >= t3 { 1.0 } else { 0.0 };
            let pattern = match class {
                0 => 0.0,
                1 => a * (2.0 * std::f64::consts::PI * tf / period).sin(),
                2 => g * tf,
                3 => -g * tf,
                4 => k * x,
                _ => -k * x,
            };
            values.push(((M + r * S + pattern) * 1e4).round() as i64);
        }
    }
    Dataset {
        name: format!("control_chart(seed {seed})"),
        rows: CONTROL_CHART_ROWS,
        cols: CONTROL_CHART_COLS,
        values,
        scale: 4,
        header: None,
    }
}

/// The class (index into [`CONTROL_CHART_CLASSES`]) of each row of [`control_chart`].
pub fn control_chart_labels() -> Vec<usize> {
    (0..CONTROL_CHART_ROWS).map(|row| row / (CONTROL_CHART_ROWS / CONTROL_CHART_CLASSES.len())).collect()
}

/// Column ranges of the latent regions of [`plants_like`]: neighbouring columns, 7 regions.
const PLANT_REGIONS: [(usize, usize); 7] = [(0, 8), (8, 20), (20, 30), (30, 39), (39, 50), (50, 60), (60, 70)];
/// Relative weight of each region as a species' home (some regions are richer in species).
const PLANT_REGION_WEIGHTS: [u32; 7] = [10, 18, 14, 12, 20, 15, 11];

/// **Synthetic** data with the shape of the UCI "plants" data: 34781 rows (plant species) × 70 columns
/// (US states and Canadian provinces), 1 = the species occurs there. It is not the UCI data: it only
/// mimics its size, sparsity and cluster structure.
///
/// The columns fall into 7 latent regions of 8–12 neighbouring columns. A species has a home region
/// (present in each of its columns with a probability drawn in `[0.5, 0.95]`), with probability 0.35 a
/// second region (`[0.3, 0.8]`), and occurs elsewhere with a probability in `[0, 0.06]`; 5 % of the
/// species are widespread (`[0.4, 0.8]` everywhere). Every species occurs in at least one column.
/// Scale 0, no header.
pub fn plants_like(seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let total_weight: u32 = PLANT_REGION_WEIGHTS.iter().sum();
    let mut values = vec![0i64; PLANTS_ROWS * PLANTS_COLS];
    // A presence probability as a threshold on a uniform u32 (one draw per cell, no float per cell).
    let threshold = |p: f64| (p * 4294967296.0) as u64;
    for row in values.chunks_exact_mut(PLANTS_COLS) {
        let mut region_threshold = [0u64; PLANT_REGIONS.len()];
        if rng.gen_bool(0.05) {
            let p = threshold(rng.gen_range(0.4..=0.8));
            region_threshold = [p; PLANT_REGIONS.len()];
        } else {
            for t in &mut region_threshold {
                *t = threshold(rng.gen_range(0.0..=0.06));
            }
            let home = pick_region(&mut rng, total_weight, None);
            region_threshold[home] = threshold(rng.gen_range(0.5..=0.95));
            if rng.gen_bool(0.35) {
                let second = pick_region(&mut rng, total_weight, Some(home));
                region_threshold[second] = threshold(rng.gen_range(0.3..=0.8));
            }
        }
        for (region, &(start, end)) in PLANT_REGIONS.iter().enumerate() {
            for cell in &mut row[start..end] {
                *cell = i64::from(u64::from(rng.gen::<u32>()) < region_threshold[region]);
            }
        }
        if row.iter().all(|&v| v == 0) {
            row[rng.gen_range(0..PLANTS_COLS)] = 1;
        }
    }
    Dataset {
        name: format!("plants_like(seed {seed})"),
        rows: PLANTS_ROWS,
        cols: PLANTS_COLS,
        values,
        scale: 0,
        header: None,
    }
}

/// A region drawn by [`PLANT_REGION_WEIGHTS`], other than `not`.
fn pick_region(rng: &mut ChaCha8Rng, total_weight: u32, not: Option<usize>) -> usize {
    loop {
        let mut draw = rng.gen_range(0..total_weight);
        let region = PLANT_REGION_WEIGHTS
            .iter()
            .position(|&w| {
                if draw < w {
                    true
                } else {
                    draw -= w;
                    false
                }
            })
            .expect("draw below the total weight");
        if Some(region) != not {
            return region;
        }
    }
}
