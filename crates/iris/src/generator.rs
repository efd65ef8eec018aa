//! Reproducible synthetic iris codes with realistic masks, genuine captures and impostors.
//!
//! Everything is drawn from a `StdRng` (ChaCha12 in `rand` 0.8) seeded by a `u64`, so a seed gives
//! the same codes on every run and platform of this build.
//!
//! **Masks.** Occlusion is decided per (row, col) cell, i.e. for all `filters · parts` bits of a
//! cell at once, as in an unwrapped iris image: rows are radial (row 0 at the pupil, row
//! `rows − 1` at the limbus) and columns angular. The upper eyelid hides an angular range around
//! the top of the eye (column ≈ `cols / 4`) and the lower eyelid a smaller one around the bottom
//! (≈ `3·cols / 4`); both cover the outermost rows, deepest at the range centre and thinning
//! parabolically to its edges, with centre, width and depth drawn per sample. A few eyelash streaks
//! below the upper eyelid and specular reflections in the inner rows add small occluded blobs, and
//! about 2 % of bits are dropped individually (weak filter responses). Typical coverage is 70–90 %
//! ones.
//!
//! **Genuine captures** of a code: rotated by a random `r`, `|r| ≤ 10`; a random 10–25 % of the
//! code bits flipped; each occluded angular run of every row moved at each end by up to 2 columns,
//! fresh reflections and lashes, fresh per-bit dropouts. **Impostors** are independent random codes.
//! Code bits are independent and uniform, so impostor distances concentrate near 0.5 more tightly
//! than for real irises (whose bits are correlated).

use argus_math::BitVec;
use rand::{rngs::StdRng, seq::index, Rng, SeedableRng};

use crate::{IrisCode, IrisError, IrisGeometry, Template};

/// Probability that a single bit is dropped from the mask on its own.
const BIT_DROPOUT: f64 = 0.02;
/// Largest rotation of a genuine capture.
pub const GENUINE_MAX_ROTATION: i32 = 10;
/// Fraction of code bits a genuine capture flips: uniform in this range.
pub const GENUINE_FLIP: (f64, f64) = (0.10, 0.25);

/// A seeded generator of synthetic codes for one geometry.
#[derive(Clone, Debug)]
pub struct Generator {
    geometry: IrisGeometry,
    rng: StdRng,
}

/// Occlusion per (row, col) cell.
struct Cells {
    rows: usize,
    cols: usize,
    occluded: Vec<bool>,
}

impl Cells {
    fn new(g: &IrisGeometry) -> Self {
        Cells { rows: g.rows, cols: g.cols, occluded: vec![false; g.rows * g.cols] }
    }
    fn occlude(&mut self, row: usize, col: i64) {
        let c = col.rem_euclid(self.cols as i64) as usize;
        if row < self.rows {
            self.occluded[row * self.cols + c] = true;
        }
    }
}

impl Generator {
    /// A generator for `geometry` seeded with `seed`; errors if the geometry is invalid.
    pub fn new(geometry: IrisGeometry, seed: u64) -> Result<Self, IrisError> {
        geometry.validate()?;
        Ok(Generator { geometry, rng: StdRng::seed_from_u64(seed) })
    }

    /// The geometry generated.
    pub fn geometry(&self) -> IrisGeometry {
        self.geometry
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.rng.gen::<f64>()
    }

    /// One eyelid: centre `centre_frac · cols` (± 5 % of the circle), half-width and depth as
    /// fractions of `cols` and `rows`, occluding the outer rows.
    fn eyelid(&mut self, cells: &mut Cells, centre_frac: f64, width: (f64, f64), depth: (f64, f64)) {
        let g = self.geometry;
        let (cols, rows) = (g.cols as f64, g.rows as f64);
        let centre = (centre_frac + self.uniform(-0.05, 0.05)) * cols;
        let half = (self.uniform(width.0, width.1) * cols).max(1.0);
        let deep = self.uniform(depth.0, depth.1) * rows;
        let (lo, hi) = ((centre - half).floor() as i64, (centre + half).ceil() as i64);
        for col in lo..=hi {
            let x = (col as f64 - centre) / half;
            let d = (deep * (1.0 - x * x)).round();
            if d >= 1.0 {
                let d = (d as usize).min(g.rows);
                for row in g.rows - d..g.rows {
                    cells.occlude(row, col);
                }
            }
        }
    }

    /// Small blobs: eyelash streaks below the upper eyelid and specular reflections near the pupil.
    fn dropouts(&mut self, cells: &mut Cells) {
        let g = self.geometry;
        let lashes = self.rng.gen_range(0..=4);
        for _ in 0..lashes {
            let col = ((0.25 + self.uniform(-0.15, 0.15)) * g.cols as f64) as i64;
            let len = self.rng.gen_range(2..=5usize).min(g.rows);
            let top = g.rows - len;
            let width = self.rng.gen_range(1..=2);
            for row in top..g.rows {
                for dc in 0..width {
                    cells.occlude(row, col + dc);
                }
            }
        }
        let specular = self.rng.gen_range(1..=3);
        for _ in 0..specular {
            let col = self.rng.gen_range(0..g.cols) as i64;
            let row0 = self.rng.gen_range(0..g.rows.div_ceil(3));
            let (h, w) = (self.rng.gen_range(1..=3), self.rng.gen_range(2..=6));
            for row in row0..row0 + h {
                for dc in 0..w {
                    cells.occlude(row, col + dc);
                }
            }
        }
    }

    /// The per-bit mask: occluded cells cleared, then individual dropouts.
    fn mask_from(&mut self, cells: &Cells) -> BitVec {
        let g = self.geometry;
        let mut mask = BitVec::ones(g.bits());
        let cell = g.cell_bits();
        for (k, &occ) in cells.occluded.iter().enumerate() {
            if occ {
                for j in 0..cell {
                    mask.set(k * cell + j, false);
                }
            }
        }
        for i in 0..g.bits() {
            if self.rng.gen_bool(BIT_DROPOUT) {
                mask.set(i, false);
            }
        }
        mask
    }

    /// A random code: uniform code bits and a realistic mask (see the module documentation).
    pub fn random_code(&mut self) -> IrisCode {
        let g = self.geometry;
        let code = BitVec::random(&mut self.rng, g.bits());
        let mut cells = Cells::new(&g);
        self.eyelid(&mut cells, 0.25, (0.12, 0.25), (0.3, 0.7));
        self.eyelid(&mut cells, 0.75, (0.08, 0.18), (0.15, 0.45));
        self.dropouts(&mut cells);
        let mask = self.mask_from(&cells);
        IrisCode::new(g, code, mask).expect("lengths come from the generator's own geometry")
    }

    /// A random two-eye template.
    pub fn random_template(&mut self) -> Template {
        Template { left: self.random_code(), right: self.random_code() }
    }

    /// An impostor: an independent random template.
    pub fn impostor(&mut self) -> Template {
        self.random_template()
    }

    /// Another capture of the same eye (see the module documentation). Errors if `code` has a
    /// different geometry from the generator's.
    pub fn genuine(&mut self, code: &IrisCode) -> Result<IrisCode, IrisError> {
        let g = self.geometry;
        g.check_same(&code.geometry())?;
        let r = self.rng.gen_range(-GENUINE_MAX_ROTATION..=GENUINE_MAX_ROTATION);
        let rotated = code.rotate(r);
        // Code noise: flip an exact random fraction of the bits.
        let mut bits = rotated.code().clone();
        let f = self.uniform(GENUINE_FLIP.0, GENUINE_FLIP.1);
        let n = ((f * g.bits() as f64).round() as usize).min(g.bits());
        for i in index::sample(&mut self.rng, g.bits(), n) {
            bits.set(i, !bits.get(i));
        }
        // Mask: the old occluded cells with every run's ends moved, plus fresh dropouts.
        let cell = g.cell_bits();
        let mask = rotated.mask();
        let mut cells = Cells::new(&g);
        for row in 0..g.rows {
            let occ: Vec<bool> =
                (0..g.cols).map(|c| (0..cell).all(|j| !mask.get((row * g.cols + c) * cell + j))).collect();
            for col in self.jitter_runs(&occ) {
                cells.occlude(row, col as i64);
            }
        }
        self.dropouts(&mut cells);
        let mask = self.mask_from(&cells);
        IrisCode::new(g, bits, mask)
    }

    /// The occluded columns of one row after moving both ends of every cyclic run by −2..=2.
    fn jitter_runs(&mut self, occ: &[bool]) -> Vec<usize> {
        let n = occ.len() as i64;
        let Some(z) = occ.iter().position(|&o| !o) else {
            return (0..occ.len()).collect(); // the whole row is occluded
        };
        // Walk the circle starting just after a visible cell, so no run wraps in `j`.
        let at = |j: i64| occ[((z as i64 + j).rem_euclid(n)) as usize];
        let mut out = Vec::new();
        let mut j = 1;
        while j <= n {
            if at(j) {
                let start = j;
                while j < n && at(j + 1) {
                    j += 1;
                }
                let (s, e) = (start + self.rng.gen_range(-2..=2), j + self.rng.gen_range(-2..=2));
                for k in s..=e.min(s + n - 1) {
                    out.push((z as i64 + k).rem_euclid(n) as usize);
                }
            }
            j += 1;
        }
        out
    }

    /// Another capture of both eyes.
    pub fn genuine_template(&mut self, t: &Template) -> Result<Template, IrisError> {
        Ok(Template { left: self.genuine(&t.left)?, right: self.genuine(&t.right)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible() {
        let g = IrisGeometry::DEPLOYED;
        let (mut a, mut b) = (Generator::new(g, 7).unwrap(), Generator::new(g, 7).unwrap());
        let (ca, cb) = (a.random_code(), b.random_code());
        assert_eq!(ca, cb);
        assert_eq!(a.genuine(&ca).unwrap(), b.genuine(&cb).unwrap());
        assert_ne!(Generator::new(g, 8).unwrap().random_code(), ca);
    }

    #[test]
    fn tiny_geometries_do_not_panic() {
        for (r, c, f, p) in [(1, 1, 1, 1), (1, 2, 1, 2), (2, 3, 1, 1), (16, 4, 2, 2), (3, 300, 1, 2)] {
            let g = IrisGeometry::new(r, c, f, p).unwrap();
            let mut gen = Generator::new(g, 1).unwrap();
            for _ in 0..20 {
                let x = gen.random_code();
                let y = gen.genuine(&x).unwrap();
                assert_eq!(y.geometry(), g);
            }
        }
        assert!(Generator::new(IrisGeometry { rows: 0, cols: 1, filters: 1, parts: 1 }, 0).is_err());
        let mut gen = Generator::new(IrisGeometry::DEPLOYED, 0).unwrap();
        let other = Generator::new(IrisGeometry::OPEN_IRIS, 0).unwrap().random_code();
        assert!(gen.genuine(&other).is_err());
    }

    #[test]
    fn jitter_handles_wrapping_runs() {
        let mut gen = Generator::new(IrisGeometry::DEPLOYED, 3).unwrap();
        let mut occ = vec![false; 20];
        for c in [18, 19, 0, 1] {
            occ[c] = true;
        }
        for _ in 0..50 {
            let out = gen.jitter_runs(&occ);
            assert!(out.iter().all(|&c| c < 20));
            // Any surviving run stays near the original wrap-around run.
            assert!(out.iter().all(|&c| !(4..=15).contains(&c)));
        }
        assert_eq!(gen.jitter_runs(&[true; 5]).len(), 5);
        assert!(gen.jitter_runs(&[false; 5]).is_empty());
    }
}
