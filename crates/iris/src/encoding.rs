//! Masked bitvectors (paper 000, section 4.1.1 and appendix B) and the integer comparison the MPC
//! protocol evaluates.
//!
//! A code bit `a` with mask bit `m` becomes the *masked bit* `a' = m − 2·(a ∧ m)`:
//!
//! | code | mask | `a'` |
//! |------|------|------|
//! | 1    | 1    | −1   |
//! | 0    | 1    | +1   |
//! | any  | 0    | 0    |
//!
//! For two codes, `a'_i · b'_i` is 0 where either mask is 0, +1 where both are valid and equal and
//! −1 where both are valid and differ, so
//!
//! ```text
//! dot(a', b') = ml − 2·hd        and        dot(m_a, m_b) = ml.
//! ```
//!
//! # The comparison
//!
//! With a threshold `num / B` (any denominator `B`), let `a = B − 2·num` and `b = B`
//! ([`mpc_comparison_terms`]). Then
//!
//! ```text
//! MATCH  ⟺  a·ml − b·dot < 0.
//! ```
//!
//! *Proof.* MATCH is `ml > 0 ∧ hd·B < num·ml`. By the identity, `hd = (ml − dot) / 2`, so
//! `hd·B < num·ml ⟺ (ml − dot)·B < 2·num·ml ⟺ (B − 2·num)·ml − B·dot < 0`. If `ml = 0`, every
//! product `a'_i · b'_i` has a zero factor, so `dot = 0` and `a·ml − b·dot = 0`, which is not
//! negative: the `ml > 0` condition needs no separate test. ∎
//!
//! *In a ring.* Since `0 ≤ num ≤ B`, `−b ≤ a ≤ b`; with `0 ≤ ml ≤ l` and `|dot| ≤ ml`, the value
//! `a·ml − b·dot` lies in `[(a − b)·ml, (a + b)·ml] ⊆ [−2·b·l, 2·b·l]`. Read as a signed
//! (two's-complement) element of `Z_2^k`, every integer in `[−2^(k−1), 2^(k−1))` is represented
//! exactly and has its most significant bit set iff it is negative. So if `2·b·l < 2^(k−1)`, i.e.
//! `b·l < 2^k / 4` (Lemma 2's first condition; its second, `b·l < 2^k − 2^(k−1) = 2^(k−1)`, then
//! holds too), MSB(`a·ml − b·dot mod 2^k`) = MATCH. This holds for every threshold in `[0, 1]`,
//! including those above 1/2 where `a < 0` (Lemma 2 itself assumes `0 ≤ a ≤ b`).
//! [`lemma2_ring_bits`] gives the smallest such `k`: 24 for the deployed `l = 12800` under the
//! default 69/200, and for open-iris's `l = 16384` too.
//!
//! *Powers of two.* Protocols that lift `b·dot` for free (ConstLift) need `b = 2^m`; they run
//! on the threshold's dyadic stand-in ([`Threshold::dyadic_for`]), which decides every
//! `(hd, ml)` with `ml ≤ l` as the rational does (69/200 becomes 723517/2^21 for 12800 bits).
//!
//! *Exactly.* The extremes of `a·ml − b·dot` lie at `ml = l, dot = ±l`, so its exact range is
//! [`comparison_range`] `= [(a − b)·l, (a + b)·l]`, narrower than the lemma's `[−2·b·l, 2·b·l]`
//! by `(b − |a|)·l` on each side. The protocols size their rings by that range
//! (`rep3::msb_is_sign`): with the default threshold (`a = 0.31·b`) the values need one bit
//! less than the lemma asks.

use crate::{IrisCode, IrisError, Threshold};

/// The masked-bitvector encoding of a code: `m − 2·(a ∧ m)` per bit, in {−1, 0, 1}.
pub fn encode_masked(code: &IrisCode) -> Vec<i8> {
    let (c, m) = (code.code().words(), code.mask().words());
    (0..code.geometry().bits())
        .map(|i| {
            let (w, s) = (i / 64, i % 64);
            let (a, m) = ((c[w] >> s) & 1, (m[w] >> s) & 1);
            m as i8 - 2 * (a & m) as i8
        })
        .collect()
}

/// The mask as a 0/1 vector.
pub fn mask_vector(code: &IrisCode) -> Vec<u8> {
    let m = code.mask().words();
    (0..code.geometry().bits()).map(|i| ((m[i / 64] >> (i % 64)) & 1) as u8).collect()
}

/// `Σ a_i · b_i` of two masked bitvectors. Errors if the lengths differ or an entry is outside
/// {−1, 0, 1}.
pub fn dot_masked(a: &[i8], b: &[i8]) -> Result<i64, IrisError> {
    if a.len() != b.len() {
        return Err(IrisError::LengthMismatch { what: "masked encoding", expected: a.len(), actual: b.len() });
    }
    let mut s = 0i64;
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        if !(-1..=1).contains(&x) || !(-1..=1).contains(&y) {
            return Err(IrisError::InvalidEntry { what: "masked encoding", index: i });
        }
        s += (x * y) as i64;
    }
    Ok(s)
}

/// `Σ a_i · b_i` of two 0/1 mask vectors (= `ml`). Errors if the lengths differ or an entry is
/// outside {0, 1}.
pub fn dot_masks(a: &[u8], b: &[u8]) -> Result<u64, IrisError> {
    if a.len() != b.len() {
        return Err(IrisError::LengthMismatch { what: "mask vector", expected: a.len(), actual: b.len() });
    }
    let mut s = 0u64;
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        if x > 1 || y > 1 {
            return Err(IrisError::InvalidEntry { what: "mask vector", index: i });
        }
        s += (x & y) as u64;
    }
    Ok(s)
}

/// `(dot, ml)` of two codes computed through their encodings, the way the MPC protocol computes
/// them: `dot = dot_masked(encode_masked(a), encode_masked(b))`, `ml = dot_masks(masks)`. By the
/// module's identity `dot = ml − 2·hd`. Errors if the geometries differ.
pub fn masked_dot(a: &IrisCode, b: &IrisCode) -> Result<(i64, u64), IrisError> {
    a.geometry().check_same(&b.geometry())?;
    let dot = dot_masked(&encode_masked(a), &encode_masked(b))?;
    let ml = dot_masks(&mask_vector(a), &mask_vector(b))?;
    Ok((dot, ml))
}

/// `hd = (ml − dot) / 2`, or `None` if `(ml, dot)` cannot come from two masked bitvectors
/// (`|dot| > ml` or different parity).
pub fn hd_from_dot(ml: u64, dot: i64) -> Option<u64> {
    let diff = ml as i128 - dot as i128;
    (dot.unsigned_abs() <= ml && diff % 2 == 0).then_some((diff / 2) as u64)
}

/// `(a, b) = (den − 2·num, den)`: MATCH ⟺ `a·ml − b·dot < 0` (proof in the module
/// documentation).
pub fn mpc_comparison_terms(threshold: Threshold) -> (i128, i128) {
    let b = threshold.den() as i128;
    (b - 2 * threshold.num() as i128, b)
}

/// `a·ml − b·dot` with the terms of [`mpc_comparison_terms`] (cannot overflow: `|a|, b ≤ 2^62`).
pub fn mpc_comparison_value(threshold: Threshold, ml: u64, dot: i64) -> i128 {
    let (a, b) = mpc_comparison_terms(threshold);
    a * ml as i128 - b * dot as i128
}

/// The match decision from `(ml, dot)` alone: `a·ml − b·dot < 0`.
pub fn mpc_match(threshold: Threshold, ml: u64, dot: i64) -> bool {
    mpc_comparison_value(threshold, ml, dot) < 0
}

/// The most significant bit of `value mod 2^k` (bit `k − 1`), as the MPC protocol extracts it;
/// `None` unless `1 <= k <= 128`.
pub fn ring_msb(value: i128, k: u32) -> Option<bool> {
    (1..=128).contains(&k).then(|| (value as u128 >> (k - 1)) & 1 == 1)
}

/// The exact range `[lo, hi]` of `a·ml − b·dot` over codes of `len` bits whose mask products
/// count `factor` bits each (1 for per-bit masks, 2 for trimmed ones, whose products count
/// pairs: `a` then already carries the factor): `0 ≤ ml ≤ len / factor` and
/// `|dot| ≤ factor·ml`, a triangle whose corners `(0, 0)` and `(len / factor, ±factor·(len /
/// factor))` give the extremes of the linear form. Both ends are reached by some pair of codes.
pub fn comparison_range(len: usize, factor: i128, a: i128, b: i128) -> (i128, i128) {
    let ml = len as i128 / factor.max(1);
    let (low, high) = (a * ml - b * factor * ml, a * ml + b * factor * ml);
    (low.min(high).min(0), low.max(high).max(0))
}

/// The smallest `k` such that `Z_2^k` satisfies paper 000's Lemma 2 for vectors of `l` bits and
/// `b = den`: `b·l < 2^k / 4` and `b·l < 2^k − 2^(k−1)`. At least 1.
pub fn lemma2_ring_bits(l: usize, threshold: Threshold) -> u32 {
    let bl = (threshold.den() as u128) * (l as u128); // <= 2^62 · 2^64
    if bl == 0 {
        return 1;
    }
    // 4·bl < 2^k  ⟺  k ≥ bitlen(bl) + 2; the second condition (2·bl < 2^k) is then implied.
    (128 - bl.leading_zeros()) + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IrisGeometry;
    use argus_math::BitVec;

    #[test]
    fn encoding_table() {
        let g = IrisGeometry::new(1, 1, 2, 2).unwrap();
        let c = IrisCode::new(
            g,
            BitVec::from_bools(&[true, false, true, false]),
            BitVec::from_bools(&[true, true, false, false]),
        )
        .unwrap();
        assert_eq!(encode_masked(&c), vec![-1, 1, 0, 0]);
        assert_eq!(mask_vector(&c), vec![1, 1, 0, 0]);
    }

    #[test]
    fn dot_rejects_bad_vectors() {
        assert!(matches!(dot_masked(&[1, 0], &[1]), Err(IrisError::LengthMismatch { .. })));
        assert_eq!(dot_masked(&[1, 2], &[1, 1]), Err(IrisError::InvalidEntry { what: "masked encoding", index: 1 }));
        assert_eq!(dot_masks(&[1, 0], &[3, 0]), Err(IrisError::InvalidEntry { what: "mask vector", index: 0 }));
        assert_eq!(dot_masks(&[1, 1, 0], &[1, 1, 1]), Ok(2));
    }

    #[test]
    fn ring_bits() {
        let t = Threshold::DEFAULT;
        assert_eq!(lemma2_ring_bits(12800, t), 24);
        assert_eq!(lemma2_ring_bits(16384, t), 24);
        assert_eq!(lemma2_ring_bits(0, t), 1);
        assert_eq!(lemma2_ring_bits(1, Threshold::new(1, 0).unwrap()), 3);
        assert_eq!(mpc_comparison_terms(t), (200 - 138, 200));
        for l in [1usize, 2, 3, 100, 12800, 16384, 1 << 32] {
            for d in [0u32, 1, 16, 40, 62] {
                let th = Threshold::new(0, d).unwrap();
                let k = lemma2_ring_bits(l, th);
                let bl = (th.den() as u128) * l as u128;
                assert!(4 * bl < 1u128 << k && bl < (1u128 << k) - (1u128 << (k - 1)));
                assert!(4 * bl >= 1u128 << (k - 1), "k is the smallest");
            }
        }
    }

    #[test]
    fn msb() {
        assert_eq!(ring_msb(-1, 32), Some(true));
        assert_eq!(ring_msb(5, 32), Some(false));
        assert_eq!(ring_msb(1 << 31, 32), Some(true));
        assert_eq!(ring_msb(1, 0), None);
        assert_eq!(ring_msb(-1, 128), Some(true));
        assert_eq!(hd_from_dot(10, 4), Some(3));
        assert_eq!(hd_from_dot(10, 3), None);
        assert_eq!(hd_from_dot(2, -4), None);
    }
}
