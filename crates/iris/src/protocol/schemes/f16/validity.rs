//! The validity check of Shamir query shares over F_65519 ([`crate::protocol::validity`]).

use argus_math::{Ring, F65519};
use argus_mpc::audit;
use argus_mpc::{MpcError, Party};

use super::FieldTemplateShare;
use crate::protocol::validity::{bits_of, factor_of, linear, seeds, Combiner};

/// Shamir over F_65519 (points 1, 2, 3): per query, whether its shares are not those of a valid
/// template. Products are local degree-2 shares, made additive with the Lagrange coefficients
/// at 0 (3, −3, 1), which is what the three points mean if they lie on a line (checked too).
pub(crate) fn invalid(p: &mut Party, queries: &[FieldTemplateShare], len: usize) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let f = F65519;
    let mlen = first.left.mask.len() / first.rows.max(1);
    let factor = factor_of(len, mlen)?;
    let lambda = [f.from_u128(3), f.neg(f.from_u128(3)), f.one()][p.id()];
    let (weights, lines) = seeds(p)?;
    let test = Combiner::new(f, 1, 2 * (3 * len + mlen), &weights);
    let line = Combiner::new(f, 1, 2 * (2 * len + mlen), &lines);
    let (mut combos, mut lines_of, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let bits = bits_of(&q.bits)?;
        let mut rows = Vec::new();
        errors.clear();
        for (eye, beta) in [&q.left, &q.right].into_iter().zip(bits) {
            let c = &eye.code.shares()[q.unrotated * len..][..len];
            let m = &eye.mask.shares()[q.unrotated * mlen..][..mlen];
            let beta = beta.shares();
            if beta.len() != len {
                return Err(MpcError::InvalidParameter("a query of another shape".into()));
            }
            linear(&f, c, m, beta, factor, &mut errors);
            let sq = |x: u16| f.sub(f.mul(x, x), x);
            errors.extend(beta.iter().map(|&b| sq(b)));
            errors.extend(m.iter().map(|&x| sq(x)));
            errors.extend(beta.iter().enumerate().map(|(j, &b)| f.sub(f.mul(b, m[j / factor]), b)));
            rows.extend([c, m, beta]);
        }
        for e in errors.iter_mut() {
            *e = f.mul(*e, lambda);
        }
        combos.push(test.combine(&[&errors])?);
        lines_of.push(line.combine(&rows)?);
    }
    let zero = audit::additive_zero_each(p, &f, &combos)?;
    let on_lines = audit::shamir_consistent_each(p, &f, &lines_of)?;
    Ok(zero.iter().zip(&on_lines).map(|(&z, &l)| !(z && l)).collect())
}
