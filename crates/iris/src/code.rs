//! Iris codes with their masks, rotations, trimmed masks, and two-eye templates.
//!
//! A mask bit of 1 means "this code bit is valid" (not occluded). A *per-bit* mask has one bit per
//! code bit. A *trimmed* mask has one bit per group of `parts` adjacent bits (one bit per
//! real/imaginary pair when `parts = 2`, so `bits / 2` of them): [`IrisCode::trim`] takes the AND
//! of each group (a pair counts only if both of its bits are valid) and [`expand_trimmed`] gives
//! every bit of a group its group's bit.

use argus_math::BitVec;
use serde::{Deserialize, Serialize};

use crate::{IrisError, IrisGeometry};

/// How masks are used when matching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MaskMode {
    /// Every code bit has its own mask bit (the masks as given).
    #[default]
    PerBit,
    /// One mask bit per real/imaginary group: masks are trimmed (AND within each group) and
    /// expanded back before matching, so a group counts only if all its bits are valid.
    Trimmed,
}

impl MaskMode {
    /// `code` with its mask as this mode sees it (a copy; unchanged for `PerBit`).
    pub fn apply(self, code: &IrisCode) -> IrisCode {
        match self {
            MaskMode::PerBit => code.clone(),
            MaskMode::Trimmed => code.with_trimmed_mask(),
        }
    }
}

/// One eye's iris code and mask, both `geometry.bits()` long (checked at construction).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IrisCode {
    geometry: IrisGeometry,
    code: BitVec,
    mask: BitVec,
}

#[inline]
fn bit(words: &[u64], i: usize) -> bool {
    (words[i / 64] >> (i % 64)) & 1 == 1
}

#[inline]
fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

impl IrisCode {
    /// A code with its per-bit mask; errors if the geometry is invalid or a length differs from
    /// `geometry.bits()`.
    pub fn new(geometry: IrisGeometry, code: BitVec, mask: BitVec) -> Result<Self, IrisError> {
        geometry.validate()?;
        let expected = geometry.bits();
        for (what, v) in [("code", &code), ("mask", &mask)] {
            if v.len() != expected {
                return Err(IrisError::LengthMismatch { what, expected, actual: v.len() });
            }
        }
        Ok(IrisCode { geometry, code, mask })
    }

    /// A code with a trimmed mask (`bits / parts` long), expanded to a per-bit mask.
    pub fn from_trimmed(geometry: IrisGeometry, code: BitVec, trimmed: &BitVec) -> Result<Self, IrisError> {
        geometry.validate()?;
        let mask = expand_trimmed(geometry, trimmed)?;
        Self::new(geometry, code, mask)
    }

    /// A code with every bit valid (mask all ones).
    pub fn unmasked(geometry: IrisGeometry, code: BitVec) -> Result<Self, IrisError> {
        let mask = BitVec::ones(code.len());
        Self::new(geometry, code, mask)
    }

    /// The geometry.
    pub fn geometry(&self) -> IrisGeometry {
        self.geometry
    }

    /// The code bits, in the flat layout of [`geometry`](crate::geometry).
    pub fn code(&self) -> &BitVec {
        &self.code
    }

    /// The per-bit mask (1 = valid).
    pub fn mask(&self) -> &BitVec {
        &self.mask
    }

    /// Geometry, code and mask.
    pub fn into_parts(self) -> (IrisGeometry, BitVec, BitVec) {
        (self.geometry, self.code, self.mask)
    }

    /// Fraction of mask bits that are 1.
    pub fn mask_coverage(&self) -> f64 {
        self.mask.count_ones() as f64 / self.mask.len() as f64
    }

    /// The code rotated by `r` columns: bit `(row, col, f, p)` moves to `(row, (col + r) mod cols,
    /// f, p)`; code and mask move together. Any `r` is accepted (`r` and `r + cols` are the same).
    pub fn rotate(&self, r: i32) -> IrisCode {
        let g = self.geometry;
        let shift = g.rotated_col(0, r);
        if shift == 0 {
            return self.clone();
        }
        let rot = |src: &BitVec| rotate_words(g, shift, src).unwrap_or_else(|| rotate_bits(g, shift, src));
        IrisCode { geometry: g, code: rot(&self.code), mask: rot(&self.mask) }
    }

    /// The code of this eye's mirror image ([`IrisGeometry::mirror_values`]): the angular axis
    /// reversed, the imaginary bits of the code flipped, the mask moved alike. Its masked value
    /// `m − 2β` is negated where a bit is flipped.
    pub fn mirror(&self) -> IrisCode {
        let g = self.geometry;
        let flip = |b: bool| !b;
        let code = BitVec::from_bools(&g.mirror_values(&self.code.to_bools(), Some(&flip)));
        let mask = BitVec::from_bools(&g.mirror_values(&self.mask.to_bools(), None));
        IrisCode { geometry: g, code, mask }
    }

    /// The trimmed mask: bit `k` is the AND of mask bits `k·parts .. (k+1)·parts` (for
    /// `parts = 2`, one bit per real/imaginary pair, `bits / 2` in all).
    pub fn trim(&self) -> BitVec {
        let p = self.geometry.parts;
        let n = self.geometry.bits() / p;
        let mut out = BitVec::zeros(n);
        let (mw, ow) = (self.mask.words(), out.words_mut());
        for k in 0..n {
            if (0..p).all(|j| bit(mw, k * p + j)) {
                set_bit(ow, k);
            }
        }
        out
    }

    /// This code with its mask replaced by the expansion of its trimmed mask.
    pub fn with_trimmed_mask(&self) -> IrisCode {
        let trimmed = self.trim();
        let mask = expand_bits(self.geometry.parts, &trimmed);
        IrisCode { geometry: self.geometry, code: self.code.clone(), mask }
    }
}

/// Rotation of a flat vector by `shift` columns, word-shifted: each row becomes its last
/// `shift·cell` bits followed by the rest. `None` only if a slice is refused (never for a valid
/// code, whose length is the geometry's).
fn rotate_words(g: IrisGeometry, shift: usize, src: &BitVec) -> Option<BitVec> {
    let (row_bits, s) = (g.row_bits(), shift * g.cell_bits());
    let mut pieces = Vec::with_capacity(2 * g.rows);
    for row in 0..g.rows {
        let base = row * row_bits;
        pieces.push(src.slice(base + row_bits - s, s).ok()?);
        pieces.push(src.slice(base, row_bits - s).ok()?);
    }
    Some(BitVec::concat(&pieces.iter().collect::<Vec<_>>()))
}

/// The same rotation bit by bit (the reference for [`rotate_words`]).
fn rotate_bits(g: IrisGeometry, shift: usize, src: &BitVec) -> BitVec {
    let (cell, row_bits) = (g.cell_bits(), g.row_bits());
    let mut out = BitVec::zeros(src.len());
    let (sw, dw) = (src.words(), out.words_mut());
    for row in 0..g.rows {
        let base = row * row_bits;
        for col in 0..g.cols {
            let (from, to) = (base + col * cell, base + ((col + shift) % g.cols) * cell);
            for k in 0..cell {
                if from + k < src.len() && to + k < src.len() && bit(sw, from + k) {
                    set_bit(dw, to + k);
                }
            }
        }
    }
    out
}

fn expand_bits(parts: usize, trimmed: &BitVec) -> BitVec {
    let mut out = BitVec::zeros(trimmed.len() * parts);
    let (tw, ow) = (trimmed.words(), out.words_mut());
    for k in 0..trimmed.len() {
        if bit(tw, k) {
            for j in 0..parts {
                set_bit(ow, k * parts + j);
            }
        }
    }
    out
}

/// Expands a trimmed mask (`bits / parts` long) to a per-bit mask: every bit of group `k` gets
/// trimmed bit `k`. Errors if the geometry is invalid or the length is wrong.
pub fn expand_trimmed(geometry: IrisGeometry, trimmed: &BitVec) -> Result<BitVec, IrisError> {
    geometry.validate()?;
    let expected = geometry.bits() / geometry.parts;
    if trimmed.len() != expected {
        return Err(IrisError::LengthMismatch { what: "trimmed mask", expected, actual: trimmed.len() });
    }
    Ok(expand_bits(geometry.parts, trimmed))
}

/// Both eyes of one person.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Template {
    /// The left eye.
    pub left: IrisCode,
    /// The right eye.
    pub right: IrisCode,
}

impl Template {
    /// A template; errors if the two eyes have different geometries.
    pub fn new(left: IrisCode, right: IrisCode) -> Result<Self, IrisError> {
        left.geometry().check_same(&right.geometry())?;
        Ok(Template { left, right })
    }

    /// The template a mirror image of the face gives: each eye mirrored ([`IrisCode::mirror`])
    /// and the eyes swapped (the left eye's image is where the right eye was). A query that
    /// matches an enrolled identity this way, and not as presented, is a mirror attack.
    pub fn mirrored(&self) -> Template {
        Template { left: self.right.mirror(), right: self.left.mirror() }
    }

    /// The geometry of both eyes (errors if they differ, which only direct field edits can cause).
    pub fn geometry(&self) -> Result<IrisGeometry, IrisError> {
        self.left.geometry().check_same(&self.right.geometry())?;
        Ok(self.left.geometry())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    fn random(g: IrisGeometry, seed: u64) -> IrisCode {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = g.bits();
        IrisCode::new(g, BitVec::random(&mut rng, n), BitVec::random(&mut rng, n)).unwrap()
    }

    #[test]
    fn constructor_checks_lengths() {
        let g = IrisGeometry::DEPLOYED;
        let e = IrisCode::new(g, BitVec::zeros(12800), BitVec::zeros(12799)).unwrap_err();
        assert_eq!(e, IrisError::LengthMismatch { what: "mask", expected: 12800, actual: 12799 });
        let e = IrisCode::new(g, BitVec::zeros(1), BitVec::zeros(12800)).unwrap_err();
        assert!(matches!(e, IrisError::LengthMismatch { what: "code", .. }));
        let bad = IrisGeometry { rows: 0, ..g };
        assert!(matches!(
            IrisCode::new(bad, BitVec::zeros(0), BitVec::zeros(0)),
            Err(IrisError::InvalidGeometry { .. })
        ));
        assert!(expand_trimmed(g, &BitVec::zeros(12800)).is_err());
    }

    #[test]
    fn rotation_moves_cells() {
        let g = IrisGeometry::new(3, 7, 2, 2).unwrap();
        let c = random(g, 1);
        for r in [-9, -1, 0, 1, 3, 6, 7, 15] {
            let rc = c.rotate(r);
            for i in 0..g.bits() {
                let (row, col, f, p) = g.coords(i).unwrap();
                let j = g.index(row, g.rotated_col(col, r), f, p).unwrap();
                assert_eq!(rc.code().get(j), c.code().get(i));
                assert_eq!(rc.mask().get(j), c.mask().get(i));
            }
            assert_eq!(rc.rotate(-r), c);
        }
    }

    #[test]
    fn word_rotation_equals_bit_rotation() {
        for g in
            [IrisGeometry::DEPLOYED, IrisGeometry::new(3, 7, 1, 3).unwrap(), IrisGeometry::new(2, 1, 1, 1).unwrap()]
        {
            let c = random(g, 9);
            for shift in 0..g.cols {
                assert_eq!(rotate_words(g, shift, c.code()), Some(rotate_bits(g, shift, c.code())));
            }
        }
    }

    #[test]
    fn rotation_by_cols_is_identity() {
        let c = random(IrisGeometry::DEPLOYED, 2);
        assert_eq!(c.rotate(200), c);
        assert_eq!(c.rotate(-400), c);
        assert_eq!(c.rotate(3).rotate(197), c);
        assert_eq!(c.rotate(i32::MAX).rotate(-i32::MAX), c);
    }

    #[test]
    fn trim_and_expand() {
        let c = random(IrisGeometry::DEPLOYED, 3);
        let t = c.trim();
        assert_eq!(t.len(), 6400);
        for k in 0..t.len() {
            assert_eq!(t.get(k), c.mask().get(2 * k) && c.mask().get(2 * k + 1));
        }
        let e = expand_trimmed(c.geometry(), &t).unwrap();
        for i in 0..e.len() {
            assert_eq!(e.get(i), t.get(i / 2));
        }
        // Round trip: trimming an expanded mask gives the trimmed mask back.
        let c2 = IrisCode::from_trimmed(c.geometry(), c.code().clone(), &t).unwrap();
        assert_eq!(c2.trim(), t);
        assert_eq!(c2, c.with_trimmed_mask());
        assert_eq!(MaskMode::Trimmed.apply(&c2), c2);
        assert_eq!(MaskMode::PerBit.apply(&c), c);
    }

    #[test]
    fn template_checks_geometry() {
        let a = random(IrisGeometry::DEPLOYED, 4);
        let b = random(IrisGeometry::OPEN_IRIS, 5);
        assert!(matches!(Template::new(a.clone(), b), Err(IrisError::GeometryMismatch { .. })));
        assert!(Template::new(a.clone(), a).is_ok());
    }
}
