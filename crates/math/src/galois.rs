//! The Galois ring GR(2^16, 4) = `Z_2^16[x] / (x^4 − x − 1)`, the ring the deployed iris system
//! (worldcoin/iris-mpc) shares over: Shamir sharing needs distinct evaluation points whose
//! differences are units, which Z_2^16 lacks (only odd numbers are units) but GR(2^16, 4) has —
//! its residue field is F_16, and x^4 + x + 1 is irreducible over F_2.
//!
//! An element is four u16 coefficients `[c0, c1, c2, c3]` = c0 + c1·x + c2·x^2 + c3·x^3, all
//! arithmetic wrapping mod 2^16. Four 16-bit values of a vector form one element, so shares take
//! the same 2 bytes per value as the plain vector.
//!
//! The dot product trick: with φ(E) = c0 (the constant coefficient), the bilinear form
//! φ(A·B) = aᵀ·G·b on coefficient vectors has `G = [[1,0,0,0],[0,0,0,1],[0,0,1,0],[0,1,0,0]]`
//! (x^4 = x + 1 gives φ(x^4) = 1, φ(x^5) = φ(x^6) = 0), a permutation that is its own inverse.
//! A vector encoded *monomially* (coefficients = values) on one side and in the *query basis*
//! (coefficients = G·values) on the other therefore has φ(A·B) = aᵀ·b: one plain 16-bit multiply
//! per value (see [`query_basis`] and [`dot_weights`]).

/// One element of GR(2^16, 4): coefficients of 1, x, x^2, x^3.
pub type Gr4 = [u16; 4];

/// The multiplicative identity.
pub const ONE: Gr4 = [1, 0, 0, 0];

/// The three Shamir evaluation points, one per party: 1, x, x + 1. Their pairwise differences
/// (1 − x, −x, −1) are units (non-zero mod 2 in F_16).
pub const POINTS: [Gr4; 3] = [[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]];

/// a + b.
#[inline(always)]
pub fn add(a: Gr4, b: Gr4) -> Gr4 {
    std::array::from_fn(|k| a[k].wrapping_add(b[k]))
}

/// a − b.
#[inline(always)]
pub fn sub(a: Gr4, b: Gr4) -> Gr4 {
    std::array::from_fn(|k| a[k].wrapping_sub(b[k]))
}

/// a · b mod (x^4 − x − 1).
#[inline(always)]
pub fn mul(a: Gr4, b: Gr4) -> Gr4 {
    let mut c = [0u16; 7];
    for i in 0..4 {
        for k in 0..4 {
            c[i + k] = c[i + k].wrapping_add(a[i].wrapping_mul(b[k]));
        }
    }
    // x^d = x^(d−4)·(x + 1): fold the top degrees down, highest first.
    for d in (4..7).rev() {
        let t = c[d];
        c[d - 4] = c[d - 4].wrapping_add(t);
        c[d - 3] = c[d - 3].wrapping_add(t);
    }
    [c[0], c[1], c[2], c[3]]
}

/// The inverse of a unit (an element that is non-zero mod 2), or `None`.
pub fn inv(a: Gr4) -> Option<Gr4> {
    // The inverse mod 2 by search over the 16 elements of F_16, then Newton's iteration
    // y ← y·(2 − a·y), which doubles the 2-adic precision: 1 → 2 → 4 → 8 → 16 bits.
    let mut y = (1u16..16).map(|m| std::array::from_fn(|k| (m >> k) & 1)).find(|&y: &Gr4| {
        let p = mul(a, y);
        p.map(|c| c & 1) == ONE
    })?;
    for _ in 0..4 {
        y = mul(y, sub([2, 0, 0, 0], mul(a, y)));
    }
    Some(y)
}

/// Lagrange coefficients at 0 for the three [`POINTS`]: any polynomial P of degree ≤ 2 has
/// `P(0) = Σ_i λ_i·P(POINTS[i])`.
pub fn lagrange_at_zero() -> [Gr4; 3] {
    std::array::from_fn(|i| {
        let mut l = ONE;
        for j in (0..3).filter(|&j| j != i) {
            let d = inv(sub(POINTS[j], POINTS[i])).expect("the points differ by units");
            l = mul(l, mul(POINTS[j], d));
        }
        l
    })
}

/// The query-basis coefficients of four values (G·v; G is an involution, so this also maps back).
#[inline(always)]
pub fn query_basis(v: Gr4) -> Gr4 {
    [v[0], v[3], v[2], v[1]]
}

/// For a fixed element `q`, the weights w with φ(s·q) = Σ_k s_k·w_k for every s: w_k = φ(x^k·q).
#[inline(always)]
pub fn dot_weights(q: Gr4) -> Gr4 {
    // φ(x^k·q) for k = 0..3 reads off G·q (see the module docs).
    query_basis(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn x_pow(k: usize) -> Gr4 {
        (0..k).fold(ONE, |acc, _| mul(acc, [0, 1, 0, 0]))
    }

    #[test]
    fn x4_is_x_plus_1_and_the_form_is_g() {
        assert_eq!(x_pow(4), [1, 1, 0, 0]);
        for i in 0..4 {
            for k in 0..4 {
                assert_eq!(mul(x_pow(i), x_pow(k))[0], query_basis(x_pow(k))[i], "G[{i}][{k}]");
            }
        }
    }

    #[test]
    fn lagrange_interpolates_degree_two() {
        let l = lagrange_at_zero();
        assert_eq!(l.iter().fold([0; 4], |s, &x| add(s, x)), ONE);
        for p in POINTS {
            assert!(inv(p).is_some());
        }
        // Σ λ_i·α_i^e = [e = 0] for e ≤ 2.
        for e in 1..3 {
            let s = (0..3).fold([0; 4], |s, i| add(s, mul(l[i], (0..e).fold(ONE, |a, _| mul(a, POINTS[i])))));
            assert_eq!(s, [0; 4], "power {e}");
        }
    }

    #[test]
    fn non_units_have_no_inverse() {
        assert_eq!(inv([0; 4]), None);
        assert_eq!(inv([2, 4, 0, 6]), None);
    }

    proptest! {
        #[test]
        fn ring_laws(a in any::<[u16; 4]>(), b in any::<[u16; 4]>(), c in any::<[u16; 4]>()) {
            prop_assert_eq!(mul(a, b), mul(b, a));
            prop_assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
            prop_assert_eq!(mul(a, add(b, c)), add(mul(a, b), mul(a, c)));
            prop_assert_eq!(mul(a, ONE), a);
        }

        #[test]
        fn units_invert(a in any::<[u16; 4]>()) {
            match inv(a) {
                Some(y) => prop_assert_eq!(mul(a, y), ONE),
                None => prop_assert!(a.iter().all(|c| c & 1 == 0)),
            }
        }

        #[test]
        fn monomial_times_query_basis_is_the_dot(a in any::<[u16; 4]>(), b in any::<[u16; 4]>(), s in any::<[u16; 4]>()) {
            let dot = (0..4).fold(0u16, |acc, k| acc.wrapping_add(a[k].wrapping_mul(b[k])));
            prop_assert_eq!(mul(a, query_basis(b))[0], dot);
            let w = dot_weights(b);
            let via = (0..4).fold(0u16, |acc, k| acc.wrapping_add(s[k].wrapping_mul(w[k])));
            prop_assert_eq!(via, mul(s, b)[0]);
        }
    }
}
