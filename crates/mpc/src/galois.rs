//! Shamir sharing with 3 parties and threshold 1 over the Galois ring GR(2^16, 4)
//! ([`argus_math::galois`]), as the deployed iris system shares: four 16-bit values form one
//! ring element, a client shares each element as `v + r·α_i` (α_i = 1, x, x + 1), and a secret
//! dot product of two shared vectors costs each party **one plain 16-bit multiply per value**
//! with no communication — the output is an additive sharing mod 2^16:
//!
//! * one side is shared monomially (coefficients = values, [`Basis::Monomial`]; the database),
//!   the other in the query basis ([`Basis::Query`]);
//! * party i turns its share t_i of the query side into weights w_i = φ(x^k·λ_i·t_i) once
//!   ([`dot_weights`]), with λ_i the Lagrange coefficient at 0 and φ the constant coefficient;
//! * then `Σ_i ⟨s_i, w_i⟩ = Σ_i φ(λ_i·S(α_i)·T(α_i)) = φ(S(0)·T(0)) = ⟨a, b⟩` mod 2^16, where
//!   the inner sum is over the coefficient vectors — a plain matrix product for many rows.
//!
//! Each party's additive share is not uniformly random on its own: callers re-randomise
//! before sending (as `rep3::reshare` does with a zero sharing).

use argus_math::galois::{self, Gr4};
use argus_math::{Ring, Z16};
use rand_core::{CryptoRng, RngCore};

use crate::error::Result;
use crate::MpcError;

/// How a client maps four values to the coefficients of one ring element before sharing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Coefficients = values: the side kept in the database.
    Monomial,
    /// Coefficients = G·values ([`galois::query_basis`]): the side turned into weights.
    Query,
}

fn check_len(n: usize) -> Result<()> {
    if !n.is_multiple_of(4) {
        return Err(MpcError::InvalidParameter(format!("GR(2^16, 4) shares group values by four; {n} values do not")));
    }
    Ok(())
}

fn element(v: &[u16]) -> Gr4 {
    [v[0], v[1], v[2], v[3]]
}

/// A client shares `values` (a multiple of 4 of them): party i's share is the coefficient vector
/// of `E + R·α_i` per element, 2 bytes per value.
pub fn share_from_client<G: RngCore + CryptoRng>(values: &[u16], basis: Basis, rng: &mut G) -> Result<[Vec<u16>; 3]> {
    check_len(values.len())?;
    let r = Z16::new().sample_vec(rng, values.len());
    let mut out: [Vec<u16>; 3] = std::array::from_fn(|_| Vec::with_capacity(values.len()));
    for (v, r) in values.chunks_exact(4).zip(r.chunks_exact(4)) {
        let e = match basis {
            Basis::Monomial => element(v),
            Basis::Query => galois::query_basis(element(v)),
        };
        for (share, alpha) in out.iter_mut().zip(galois::POINTS) {
            share.extend_from_slice(&galois::add(e, galois::mul(element(r), alpha)));
        }
    }
    Ok(out)
}

/// Party `id`'s weights for its share of query-basis values: `⟨s, w⟩` over any monomially shared
/// vector's share `s` is then this party's additive share of the plain dot product.
pub fn dot_weights(id: usize, share: &[u16]) -> Result<Vec<u16>> {
    check_len(share.len())?;
    let lambda =
        *galois::lagrange_at_zero().get(id).ok_or_else(|| MpcError::InvalidParameter(format!("party {id} of 3")))?;
    Ok(share.chunks_exact(4).flat_map(|t| galois::dot_weights(galois::mul(lambda, element(t)))).collect())
}

/// Party `id`'s additive share (mod 2^16) of the sum of the values shared monomially in `share`:
/// the coefficients of `λ_i·t` (λ_i the Lagrange coefficient at 0) summed, since the sum of
/// the coefficients is linear and `Σ_i λ_i·t_i` is the shared element. Not uniformly random on
/// its own: re-randomise before sending.
pub fn sum_share(id: usize, share: &[u16]) -> Result<u16> {
    Ok(additive_values(id, share, Basis::Monomial)?.into_iter().fold(0u16, u16::wrapping_add))
}

/// Party `id`'s additive shares (mod 2^16) of the values its share holds, shared in `basis`: the
/// coefficients of `λ_i·t` per element (mapped back from the query basis for [`Basis::Query`]).
/// Any three points give values this way (a degree-2 sharing too). Not uniformly random on its
/// own: re-randomise before sending.
pub fn additive_values(id: usize, share: &[u16], basis: Basis) -> Result<Vec<u16>> {
    check_len(share.len())?;
    let lambda =
        *galois::lagrange_at_zero().get(id).ok_or_else(|| MpcError::InvalidParameter(format!("party {id} of 3")))?;
    Ok(share
        .chunks_exact(4)
        .flat_map(|t| {
            let v = galois::mul(lambda, element(t));
            match basis {
                Basis::Monomial => v,
                Basis::Query => galois::query_basis(v),
            }
        })
        .collect())
}

/// Opens a degree-1 sharing from all three shares (tests and plaintext twins), in the basis it
/// was shared in.
pub fn open(shares: [&[u16]; 3], basis: Basis) -> Result<Vec<u16>> {
    let n = shares[0].len();
    if shares.iter().any(|s| s.len() != n) {
        return Err(MpcError::InvalidParameter("shares of different lengths".into()));
    }
    check_len(n)?;
    let l = galois::lagrange_at_zero();
    Ok((0..n / 4)
        .flat_map(|j| {
            let e = (0..3).fold([0; 4], |acc, i| galois::add(acc, galois::mul(l[i], element(&shares[i][4 * j..]))));
            match basis {
                Basis::Monomial => e,
                Basis::Query => galois::query_basis(e),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn dot(a: &[u16], b: &[u16]) -> u16 {
        a.iter().zip(b).fold(0u16, |s, (&x, &y)| s.wrapping_add(x.wrapping_mul(y)))
    }

    proptest! {
        #[test]
        fn share_open_and_dot(seed in any::<u64>(), groups in 1usize..40, edge in 0u16..4) {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut a = Z16::new().sample_vec(&mut rng, 4 * groups);
            let b = Z16::new().sample_vec(&mut rng, 4 * groups);
            // Edge values: 0, 1, −1, 2^15 in the first group.
            a[..4].fill([0, 1, u16::MAX, 1 << 15][edge as usize]);
            let sa = share_from_client(&a, Basis::Monomial, &mut rng).unwrap();
            let sb = share_from_client(&b, Basis::Query, &mut rng).unwrap();
            prop_assert_eq!(open([&sa[0], &sa[1], &sa[2]], Basis::Monomial).unwrap(), a.clone());
            prop_assert_eq!(open([&sb[0], &sb[1], &sb[2]], Basis::Query).unwrap(), b.clone());
            let sum = (0..3).fold(0u16, |s, i| s.wrapping_add(dot(&sa[i], &dot_weights(i, &sb[i]).unwrap())));
            prop_assert_eq!(sum, dot(&a, &b));
            let total = (0..3).fold(0u16, |s, i| s.wrapping_add(sum_share(i, &sa[i]).unwrap()));
            prop_assert_eq!(total, a.iter().fold(0u16, |s, &x| s.wrapping_add(x)));
        }
    }

    #[test]
    fn one_share_reveals_nothing_about_a_constant() {
        // A share of 0 and a share of 1 have the same distribution: each coefficient of E + R·α_i
        // is uniform since α_i is a unit. Spot check: the low bit of coefficient 0 is balanced.
        let mut rng = StdRng::seed_from_u64(7);
        for v in [0u16, 1] {
            let ones: usize = (0..4000)
                .map(|_| (share_from_client(&[v; 4], Basis::Monomial, &mut rng).unwrap()[1][0] & 1) as usize)
                .sum();
            assert!((1800..2200).contains(&ones), "value {v}: {ones}");
        }
    }

    #[test]
    fn refuses_lengths_not_divisible_by_four() {
        let mut rng = StdRng::seed_from_u64(1);
        assert!(share_from_client(&[1, 2, 3], Basis::Monomial, &mut rng).is_err());
        assert!(dot_weights(0, &[1, 2]).is_err());
        assert!(dot_weights(3, &[1, 2, 3, 4]).is_err());
    }
}
