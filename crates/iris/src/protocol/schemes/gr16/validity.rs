//! The validity check of Shamir query shares over GR(2^16, 4) ([`crate::protocol::validity`]).

use argus_math::Z16;
use argus_mpc::audit;
use argus_mpc::galois::{self as mg, Basis};
use argus_mpc::rep3;
use argus_mpc::{MpcError, Party};

use super::GrTemplateShare;
use crate::protocol::validity::{bits_of, factor_of, linear, products, seeds, Combiner};

/// Shamir over GR(2^16, 4): per query, whether its shares are not those of a valid template:
/// also that its query-basis row holds its monomial row's values.
pub(crate) fn invalid(p: &mut Party, queries: &[GrTemplateShare], len: usize) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let ring = Z16::new();
    let me = p.id();
    let mlen = first.entry[0].mask.len();
    let factor = factor_of(len, mlen)?;
    let (weights, lines) = seeds(p)?;
    // Additive values of every query's β and m, reshared in one round for the products.
    let mut additive = Vec::new();
    let mut to_reshare = Vec::new();
    for q in queries {
        let bits = bits_of(&q.bits)?;
        for (e, bits) in bits.into_iter().enumerate() {
            let (entry, query) = (&q.entry[e], &q.query[e]);
            if entry.code.len() != len || entry.mask.len() != mlen || bits.len() != len {
                return Err(MpcError::InvalidParameter("a query of another shape".into()));
            }
            if query.code.len() != len || query.mask.len() != mlen {
                return Err(MpcError::InvalidParameter("a query without its query-basis row".into()));
            }
            let beta = mg::additive_values(me, bits, Basis::Monomial)?;
            let m = mg::additive_values(me, &entry.mask, Basis::Monomial)?;
            to_reshare.push(beta.clone());
            to_reshare.push(m.clone());
            additive.push((mg::additive_values(me, &entry.code, Basis::Monomial)?, m, beta));
        }
    }
    let replicated = rep3::reshare_parts(p, &ring, to_reshare)?;
    let test = Combiner::new(ring, 1, 2 * (4 * len + 2 * mlen), &weights);
    // β is read only here, through its additive values: any three points give it one. The rows
    // the check and the database multiply must be degree-1 sharings.
    let line = Combiner::new(ring, 4, 2 * (2 * len + 2 * mlen), &lines);
    let (mut combos, mut lines_of, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for (i, q) in queries.iter().enumerate() {
        let mut rows: Vec<&[u16]> = Vec::new();
        errors.clear();
        for e in 0..2 {
            let (c, m, beta) = &additive[2 * i + e];
            let (beta_r, m_r) = (&replicated[2 * (2 * i + e)], &replicated[2 * (2 * i + e) + 1]);
            linear(&ring, c, m, beta, factor, &mut errors);
            products(&ring, beta_r, m_r, factor, &mut errors);
            let (qc, qm) = (
                mg::additive_values(me, &q.query[e].code, Basis::Query)?,
                mg::additive_values(me, &q.query[e].mask, Basis::Query)?,
            );
            errors.extend(qc.iter().zip(c).map(|(&x, &y)| x.wrapping_sub(y)));
            errors.extend(qm.iter().zip(m).map(|(&x, &y)| x.wrapping_sub(y)));
            rows.extend([&q.entry[e].code[..], &q.entry[e].mask, &q.query[e].code, &q.query[e].mask]);
        }
        combos.push(test.combine(&[&errors])?);
        lines_of.push(line.combine(&rows)?);
    }
    let zero = audit::additive_zero_each(p, &ring, &combos)?;
    let on_lines = audit::galois_consistent_each(p, &lines_of)?;
    Ok(zero.iter().zip(&on_lines).map(|(&z, &l)| !(z && l)).collect())
}
