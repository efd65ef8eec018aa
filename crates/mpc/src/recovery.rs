//! Share recovery: a party that lost its shares (a node whose store is gone) gets them back from
//! the other two, and learns nothing but its own shares.
//!
//! Each of the two *helpers* sends the lost party a *part*; the sum of the two parts is the lost
//! share, exactly as it was (threshold 1: any two parties determine the third's share).
//!
//! * Replicated ([`rep3`]): the lost party `l` holds `(x_l, x_{l-1})`. Party `l+1` holds `x_l`
//!   (its second component) and party `l-1` holds `x_{l-1}` (its first), so each helper sends
//!   one of the lost party's own components and zero for the other. Nothing else is sent, so no
//!   mask is needed.
//! * Shamir, degree 1 ([`shamir`] over a prime field, [`galois`] over GR(2^16, 4)): the lost point
//!   is `f(α_l) = λ_j·f(α_j) + λ_k·f(α_k)` with `λ_j = (α_l − α_k)/(α_j − α_k)`. Helper `j` sends
//!   `λ_j·f(α_j) + r` and helper `k` sends `λ_k·f(α_k) − r` (the lower-numbered helper adds),
//!   where `r` is uniform and drawn from `pad`, a stream the two helpers share and the lost party
//!   does not ([`Party::stream_with`](crate::Party::stream_with)). Each part alone is uniform; the
//!   pair is a uniform split of the lost share.

use argus_math::galois as gr;
use argus_math::{Field, Ring, Z16};
use argus_net::PartyId;
use argus_prg::Prg;

use crate::error::{MpcError, Result};
use crate::rep3::Rep3;
use crate::shamir::{Degree, Shamir};

/// The other helper, and whether this helper adds the pad (the lower-numbered one does).
fn roles(me: PartyId, lost: PartyId) -> Result<(PartyId, bool)> {
    if me >= 3 || lost >= 3 || me == lost {
        return Err(MpcError::InvalidParameter(format!(
            "share recovery needs two helpers among 3 parties: party {me} cannot help party {lost}"
        )));
    }
    let other = 3 - me - lost;
    Ok((other, me < other))
}

/// Helper `me`'s part of replicated party `lost`'s share `x` (see the module documentation).
pub fn rep3<R: Ring>(me: PartyId, lost: PartyId, x: &Rep3<R>) -> Result<Rep3<R>> {
    roles(me, lost)?;
    let zero = vec![x.ring().zero(); x.len()];
    if me == (lost + 1) % 3 {
        Rep3::from_parts(x.ring().clone(), x.b.clone(), zero)
    } else {
        Rep3::from_parts(x.ring().clone(), zero, x.a.clone())
    }
}

/// Helper `me`'s part `λ·f(α_me) ± r` of Shamir party `lost`'s share (points `1, 2, 3`), for a
/// degree-1 sharing `x`. The part is typed as a degree-1 share so that [`Shamir::add`] of both
/// parts gives the lost share.
pub fn shamir<F: Field>(me: PartyId, lost: PartyId, x: &Shamir<F>, pad: &mut Prg) -> Result<Shamir<F>> {
    let (other, adds) = roles(me, lost)?;
    if x.degree() != Degree::One {
        return Err(MpcError::InvalidParameter("only a degree-1 sharing can be recovered from two parties".into()));
    }
    let f = x.field();
    let point = |i: PartyId| f.from_u128(i as u128 + 1);
    let d = f.inv(f.sub(point(me), point(other))).expect("distinct points in a field with p > 3");
    let lambda = f.mul(f.sub(point(lost), point(other)), d);
    let r = f.sample_vec(pad, x.len());
    let shares = x
        .shares()
        .iter()
        .zip(r)
        .map(|(&s, r)| {
            let s = f.mul(lambda, s);
            if adds {
                f.add(s, r)
            } else {
                f.sub(s, r)
            }
        })
        .collect();
    Shamir::from_parts(f.clone(), Degree::One, shares)
}

/// Helper `me`'s part of GR(2^16, 4) party `lost`'s share `x` (coefficient vectors, four values
/// per ring element, points [`gr::POINTS`]); the lost share is the two parts added mod 2^16
/// ([`add_u16`]).
pub fn galois(me: PartyId, lost: PartyId, x: &[u16], pad: &mut Prg) -> Result<Vec<u16>> {
    let (other, adds) = roles(me, lost)?;
    if !x.len().is_multiple_of(4) {
        return Err(MpcError::InvalidParameter(format!("GR(2^16, 4) shares group values by four; {} do not", x.len())));
    }
    let p = gr::POINTS;
    let d = gr::inv(gr::sub(p[me], p[other])).expect("the points differ by units");
    let lambda = gr::mul(gr::sub(p[lost], p[other]), d);
    // Multiplying by λ is Z_2^16-linear: its matrix's column k is λ·x^k.
    let cols: [gr::Gr4; 4] = std::array::from_fn(|k| gr::mul(lambda, std::array::from_fn(|i| u16::from(i == k))));
    let mut out = Z16::new().sample_vec(pad, x.len());
    for (o, s) in out.chunks_exact_mut(4).zip(x.chunks_exact(4)) {
        for (i, o) in o.iter_mut().enumerate() {
            let v = (0..4).fold(0u16, |v, k| v.wrapping_add(cols[k][i].wrapping_mul(s[k])));
            *o = if adds { v.wrapping_add(*o) } else { v.wrapping_sub(*o) };
        }
    }
    Ok(out)
}

/// The sum mod 2^16 of two parts (GR(2^16, 4) addition is coefficient-wise).
pub fn add_u16(a: &[u16], b: &[u16]) -> Result<Vec<u16>> {
    if a.len() != b.len() {
        return Err(MpcError::LengthMismatch { left: a.len(), right: b.len() });
    }
    Ok(a.iter().zip(b).map(|(&x, &y)| x.wrapping_add(y)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::galois::{self as mg, Basis};
    use argus_math::{F65519, Z32};
    use argus_prg::Seed;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// The two helpers' pads: one stream each, from one seed (as `Party::stream_with` gives them).
    fn pads(seed: u8) -> (Prg, Prg) {
        (Prg::new(&Seed([seed; 16])), Prg::new(&Seed([seed; 16])))
    }

    fn helpers(lost: PartyId) -> (PartyId, PartyId) {
        ((lost + 1) % 3, (lost + 2) % 3)
    }

    proptest! {
        #[test]
        fn rep3_parts_add_up_to_the_lost_share(seed in any::<u64>(), n in 0usize..50, lost in 0usize..3) {
            let mut rng = StdRng::seed_from_u64(seed);
            let ring = Z32::new();
            let mut x = ring.sample_vec(&mut rng, n);
            if n > 0 {
                x[0] = u32::MAX; // −1
            }
            let s = crate::rep3::share_from_client(&ring, &x, &mut rng);
            let (j, k) = helpers(lost);
            let got = rep3(j, lost, &s[j]).unwrap().add(&rep3(k, lost, &s[k]).unwrap()).unwrap();
            prop_assert_eq!(&got, &s[lost]);
        }

        #[test]
        fn shamir_parts_add_up_to_the_lost_share(seed in any::<u64>(), n in 0usize..50, lost in 0usize..3) {
            let mut rng = StdRng::seed_from_u64(seed);
            let f = F65519;
            let mut x = f.sample_vec(&mut rng, n);
            if n > 1 {
                (x[0], x[1]) = (0, f.from_i128(-1));
            }
            let s = crate::shamir::share_from_client(&f, &x, &mut rng).unwrap();
            let (j, k) = helpers(lost);
            let (mut pj, mut pk) = pads(seed as u8);
            let (a, b) = (shamir(j, lost, &s[j], &mut pj).unwrap(), shamir(k, lost, &s[k], &mut pk).unwrap());
            prop_assert_eq!(&a.add(&b).unwrap(), &s[lost]);
        }

        #[test]
        fn galois_parts_add_up_to_the_lost_share(seed in any::<u64>(), groups in 0usize..20, lost in 0usize..3) {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut x = Z16::new().sample_vec(&mut rng, 4 * groups);
            if groups > 0 {
                x[..4].copy_from_slice(&[0, 1, u16::MAX, 1 << 15]);
            }
            let s = mg::share_from_client(&x, Basis::Monomial, &mut rng).unwrap();
            let (j, k) = helpers(lost);
            let (mut pj, mut pk) = pads(seed as u8);
            let (a, b) = (galois(j, lost, &s[j], &mut pj).unwrap(), galois(k, lost, &s[k], &mut pk).unwrap());
            prop_assert_eq!(add_u16(&a, &b).unwrap(), s[lost].clone());
        }
    }

    /// What the lost party receives does not depend on the secret: a part is uniform for the
    /// secret 0 as for the secret 1 (the low bit of its first value is balanced), and it is
    /// masked (never the bare `λ·f(α_j)`, which with the other part would give away a point).
    #[test]
    fn parts_are_uniform_whatever_the_secret() {
        let f = F65519;
        let mut rng = StdRng::seed_from_u64(5);
        let (mut pj, mut pk) = pads(9);
        for v in [0u16, 1] {
            let (mut ones_f, mut ones_g) = (0, 0);
            for _ in 0..4000 {
                let s = crate::shamir::share_from_client(&f, &[v], &mut rng).unwrap();
                let part = shamir(1, 0, &s[1], &mut pj).unwrap();
                let unpadded = f.mul(f.mul(f.sub(1, 3), f.inv(f.sub(2, 3)).unwrap()), s[1].shares()[0]);
                assert_ne!(part.shares()[0], unpadded, "the part is masked");
                let _ = shamir(2, 0, &s[2], &mut pk).unwrap();
                ones_f += (part.shares()[0] & 1) as usize;
                let g = mg::share_from_client(&[v; 4], Basis::Monomial, &mut rng).unwrap();
                ones_g += (galois(2, 1, &g[2], &mut pj).unwrap()[0] & 1) as usize;
            }
            assert!((1800..2200).contains(&ones_f), "F_65519, secret {v}: {ones_f}");
            assert!((1800..2200).contains(&ones_g), "GR, secret {v}: {ones_g}");
        }
    }

    #[test]
    fn refuses_bad_roles_and_degree_two() {
        let f = F65519;
        let x = Shamir::zeros(f, Degree::One, 2);
        let mut pad = pads(1).0;
        assert!(shamir(0, 0, &x, &mut pad).is_err());
        assert!(shamir(3, 0, &x, &mut pad).is_err());
        assert!(shamir(0, 1, &Shamir::zeros(f, Degree::Two, 2), &mut pad).is_err());
        assert!(galois(0, 1, &[1, 2, 3], &mut pad).is_err());
        assert!(add_u16(&[1], &[1, 2]).is_err());
        assert!(rep3(1, 1, &Rep3::zeros(Z16::new(), 1)).is_err());
    }
}
