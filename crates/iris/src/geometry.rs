//! The shape of an iris code, and the flat bit layout every other module uses.
//!
//! An iris code is a `rows × cols × filters × parts` array of bits: `rows` radial rings (pupil to
//! limbus), `cols` angular positions around the eye, `filters` Gabor filters and `parts` components
//! of each filter response (real and imaginary). It is stored flat, with
//!
//! ```text
//! index = ((row · cols + col) · filters + filter) · parts + part
//! ```
//!
//! i.e. row-major with the angular column second. All `filters · parts` bits of one (row, col) cell
//! are adjacent, so a rotation by `r` moves whole cells of `filters · parts` bits within each row:
//! the bit at `(row, col, filter, part)` goes to `(row, (col + r) mod cols, filter, part)`. The
//! real/imaginary pair of one filter response (`parts = 2`) is two adjacent bits `2k, 2k + 1`.

use serde::{Deserialize, Serialize};

use crate::IrisError;

/// The largest number of bits a geometry may have (2^32), so every count and every product of
/// counts with a 62-bit threshold denominator fits the integer types used here.
pub const MAX_BITS: usize = 1 << 32;

/// Dimensions of an iris code. Configuration, not constants: [`DEPLOYED`](Self::DEPLOYED) and
/// [`OPEN_IRIS`](Self::OPEN_IRIS) are the two in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IrisGeometry {
    /// Radial rows.
    pub rows: usize,
    /// Angular columns (the rotation axis).
    pub cols: usize,
    /// Gabor filters.
    pub filters: usize,
    /// Parts of each filter response (2: real and imaginary).
    pub parts: usize,
}

impl IrisGeometry {
    /// The deployed system of paper 000: 16 × 200 × 2 × 2 = 12800 bits.
    pub const DEPLOYED: IrisGeometry = IrisGeometry { rows: 16, cols: 200, filters: 2, parts: 2 };
    /// The `open-iris` package's layout: 16 × 256 × 2 × 2 = 16384 bits.
    pub const OPEN_IRIS: IrisGeometry = IrisGeometry { rows: 16, cols: 256, filters: 2, parts: 2 };

    /// A validated geometry.
    pub fn new(rows: usize, cols: usize, filters: usize, parts: usize) -> Result<Self, IrisError> {
        let g = IrisGeometry { rows, cols, filters, parts };
        g.validate()?;
        Ok(g)
    }

    /// Checks that no dimension is zero and the total is at most [`MAX_BITS`].
    pub fn validate(&self) -> Result<(), IrisError> {
        let err = |reason| IrisError::InvalidGeometry {
            rows: self.rows,
            cols: self.cols,
            filters: self.filters,
            parts: self.parts,
            reason,
        };
        if self.rows == 0 || self.cols == 0 || self.filters == 0 || self.parts == 0 {
            return Err(err("every dimension must be at least 1"));
        }
        match self.checked_bits() {
            Some(n) if n <= MAX_BITS => Ok(()),
            _ => Err(err("more than 2^32 bits")),
        }
    }

    fn checked_bits(&self) -> Option<usize> {
        self.rows.checked_mul(self.cols)?.checked_mul(self.filters)?.checked_mul(self.parts)
    }

    /// Total number of bits, `rows · cols · filters · parts` (saturating for invalid geometries).
    pub fn bits(&self) -> usize {
        self.checked_bits().unwrap_or(usize::MAX)
    }

    /// Bits in one (row, col) cell: `filters · parts`.
    pub fn cell_bits(&self) -> usize {
        self.filters.saturating_mul(self.parts)
    }

    /// Bits in one row: `cols · filters · parts`.
    pub fn row_bits(&self) -> usize {
        self.cols.saturating_mul(self.cell_bits())
    }

    /// Flat index of `(row, col, filter, part)`, or `None` if any coordinate is out of range.
    pub fn index(&self, row: usize, col: usize, filter: usize, part: usize) -> Option<usize> {
        if row >= self.rows || col >= self.cols || filter >= self.filters || part >= self.parts {
            return None;
        }
        Some(((row * self.cols + col) * self.filters + filter) * self.parts + part)
    }

    /// The `(row, col, filter, part)` of a flat index, or `None` past the end.
    pub fn coords(&self, index: usize) -> Option<(usize, usize, usize, usize)> {
        if index >= self.bits() {
            return None;
        }
        let part = index % self.parts;
        let rest = index / self.parts;
        let filter = rest % self.filters;
        let rest = rest / self.filters;
        Some((rest / self.cols, rest % self.cols, filter, part))
    }

    /// The column `col` lands on after a rotation by `r`: `(col + r) mod cols`.
    pub fn rotated_col(&self, col: usize, r: i32) -> usize {
        let c = self.cols as i64;
        ((col as i64 % c) + (r as i64).rem_euclid(c)).rem_euclid(c) as usize
    }

    /// The mirror image of one row of values in this geometry's order (`[row][col][cell]`, `cell =
    /// v.len() / (rows · cols)` values: code bits, or trimmed mask values): the angular axis
    /// reversed, column `col` to `(cols − col) mod cols`, and with `negate` every value of an
    /// imaginary part (part 1 of each filter response, in a cell of `filters · parts` values)
    /// replaced by `negate(v)`: in the mirror image of an eye the odd (imaginary) Gabor responses
    /// change sign. Masks are moved only (`negate = None`).
    pub fn mirror_values<T: Copy>(&self, v: &[T], negate: Option<&dyn Fn(T) -> T>) -> Vec<T> {
        let cell = v.len() / (self.rows * self.cols).max(1);
        let imaginary =
            |k: usize| negate.is_some() && cell == self.cell_bits() && self.parts >= 2 && k % self.parts == 1;
        let mut out = Vec::with_capacity(v.len());
        for r in 0..self.rows {
            for col in 0..self.cols {
                let from = (self.cols - col) % self.cols;
                for (k, &x) in v[(r * self.cols + from) * cell..][..cell].iter().enumerate() {
                    out.push(match negate {
                        Some(neg) if imaginary(k) => neg(x),
                        _ => x,
                    });
                }
            }
        }
        out
    }

    /// `rows x cols x filters x parts`, as used in error messages.
    pub fn describe(&self) -> String {
        format!("{}x{}x{}x{}", self.rows, self.cols, self.filters, self.parts)
    }

    pub(crate) fn check_same(&self, o: &IrisGeometry) -> Result<(), IrisError> {
        if self != o {
            return Err(IrisError::GeometryMismatch { left: self.describe(), right: o.describe() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(IrisGeometry::DEPLOYED.bits(), 12800);
        assert_eq!(IrisGeometry::OPEN_IRIS.bits(), 16384);
        assert_eq!(IrisGeometry::DEPLOYED.cell_bits(), 4);
        assert_eq!(IrisGeometry::DEPLOYED.row_bits(), 800);
    }

    #[test]
    fn index_coords_round_trip() {
        let g = IrisGeometry::new(3, 5, 2, 2).unwrap();
        for i in 0..g.bits() {
            let (r, c, f, p) = g.coords(i).unwrap();
            assert_eq!(g.index(r, c, f, p), Some(i));
        }
        assert_eq!(g.coords(g.bits()), None);
        assert_eq!(g.index(3, 0, 0, 0), None);
        assert_eq!(g.index(0, 0, 0, 2), None);
    }

    #[test]
    fn rejects_bad_geometry() {
        assert!(IrisGeometry::new(0, 200, 2, 2).is_err());
        assert!(IrisGeometry::new(1 << 20, 1 << 20, 2, 2).is_err());
        assert!(IrisGeometry::new(usize::MAX, 2, 2, 2).is_err());
        assert!(IrisGeometry::DEPLOYED.validate().is_ok());
    }

    #[test]
    fn rotated_col_wraps() {
        let g = IrisGeometry::DEPLOYED;
        assert_eq!(g.rotated_col(199, 1), 0);
        assert_eq!(g.rotated_col(0, -1), 199);
        assert_eq!(g.rotated_col(5, 200), 5);
        assert_eq!(g.rotated_col(5, i32::MIN), g.rotated_col(5, (i32::MIN as i64).rem_euclid(200) as i32));
    }
}
