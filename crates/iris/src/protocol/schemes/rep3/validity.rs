//! The validity check of replicated query shares ([`crate::protocol::validity`]).

use argus_math::Ring;
use argus_mpc::audit::{self, Digest};
use argus_mpc::{MpcError, Party};

use super::TemplateShare;
use crate::protocol::validity::{bits_of, factor_of, linear, products, seeds, Combiner};

/// Replicated queries (Z_2^16, Z_2^32): per query, whether its shares are not those of a valid
/// template.
pub(crate) fn invalid<R: Ring>(p: &mut Party, queries: &[TemplateShare<R>], len: usize) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let ring = first.left.code.ring().clone();
    let mlen = first.left.mask.len() / first.rows.max(1);
    let factor = factor_of(len, mlen)?;
    let (weights, _) = seeds(p)?;
    let test = Combiner::new(ring.clone(), 1, 2 * (3 * len + mlen), &weights);
    let (mut combos, mut digests, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let bits = bits_of(&q.bits)?;
        let (mut a, mut b) = (Digest::default(), Digest::default());
        errors.clear();
        for (eye, beta) in [&q.left, &q.right].into_iter().zip(bits) {
            let c = eye.code.slice(q.unrotated * len, len)?;
            let m = eye.mask.slice(q.unrotated * mlen, mlen)?;
            if beta.len() != len || m.len() != mlen {
                return Err(MpcError::InvalidParameter("a query of another shape".into()));
            }
            linear(&ring, &c.a, &m.a, &beta.a, factor, &mut errors);
            products(&ring, beta, &m, factor, &mut errors);
            for x in [&c, &m, beta] {
                a.absorb(&ring, &x.a);
                b.absorb(&ring, &x.b);
            }
        }
        combos.push(test.combine(&[&errors])?);
        digests.push((a, b));
    }
    let zero = audit::additive_zero_each(p, &ring, &combos)?;
    let consistent = audit::rep3_consistent_each(p, &digests)?;
    Ok(zero.iter().zip(&consistent).map(|(&z, &c)| !(z && c)).collect())
}
