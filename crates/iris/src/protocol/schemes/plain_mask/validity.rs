//! The validity check of public-mask query shares ([`crate::protocol::validity`]).

use argus_math::Z16;
use argus_mpc::audit::{self, Digest};
use argus_mpc::{MpcError, Party};

use super::PlainMaskShare;
use crate::protocol::validity::{bits_of, linear, product, seeds, Combiner};

/// Public masks: per query, whether its shares are not those of a valid template (the masks are
/// bits by construction; each node's copy must be the same).
pub(crate) fn invalid(p: &mut Party, queries: &[PlainMaskShare], len: usize) -> Result<Vec<bool>, MpcError> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let ring = Z16::new();
    let me = p.id();
    let (weights, _) = seeds(p)?;
    let test = Combiner::new(ring, 1, 2 * 3 * len, &weights);
    let (mut combos, mut digests, mut masks, mut errors) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let bits = bits_of(&q.bits)?;
        let (mut a, mut b, mut public) = (Digest::default(), Digest::default(), Digest::default());
        errors.clear();
        for (e, beta) in bits.into_iter().enumerate() {
            let c = q.codes[e].slice(q.unrotated * len, len)?;
            let mask = q.masks[e].get(q.unrotated).filter(|m| m.len() == len && beta.len() == len);
            let mask = mask.ok_or_else(|| MpcError::InvalidParameter("a query of another shape".into()))?;
            // Party 0 adds the public term.
            let m: Vec<u16> = (0..len).map(|j| u16::from(me == 0 && mask.get(j))).collect();
            linear(&ring, &c.a, &m, &beta.a, 1, &mut errors);
            // β² − β, and β where the mask is clear (public: linear).
            let start = errors.len();
            product(&ring, beta, beta, 1, &mut errors);
            for (x, &b) in errors[start..].iter_mut().zip(&beta.a) {
                *x = x.wrapping_sub(b);
            }
            errors.extend(beta.a.iter().enumerate().map(|(j, &b)| if mask.get(j) { 0 } else { b }));
            for x in [&c, beta] {
                a.absorb(&ring, &x.a);
                b.absorb(&ring, &x.b);
            }
            public.absorb_bytes(&mask.to_bytes());
        }
        combos.push(test.combine(&[&errors])?);
        digests.push((a, b));
        masks.push(public);
    }
    let zero = audit::additive_zero_each(p, &ring, &combos)?;
    let consistent = audit::rep3_consistent_each(p, &digests)?;
    let same = audit::public_equal_each(p, &masks)?;
    Ok((0..queries.len()).map(|i| !(zero[i] && consistent[i] && same[i])).collect())
}
