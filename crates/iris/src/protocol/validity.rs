//! Are a client's query shares those of a valid template? (Issue 35, item 1.) Clients are not
//! trusted: a share made from another template for one node, a code value outside {−1, 0, 1} or
//! a mask value outside {0, 1} would break the comparison's range and let one request poison
//! every later check. Checked per query, in MPC, before anything of it is used; one bit revealed
//! per query: valid or not.
//!
//! A query carries, per eye, its unrotated code row `c`, mask row `m` and masked code bits `β`
//! (`c = M − 2β`, `M` the mask expanded to one value per code bit: the mask itself, or each
//! trimmed value twice). The nodes make the rotations from that row, so these relations say all:
//!
//! * `β² = β`, `m² = m` — exact in every ring used (in Z_2^k, `x(x − 1) = 0` forces `x ∈ {0, 1}`:
//!   one of `x`, `x − 1` is odd) — and `β·M = β` (a code bit only where the mask is set);
//! * `c = M − 2β`, so `c ∈ {−1, 0, 1}` and `c ≠ 0` exactly where `M = 1`. (In Z_2^16, `c² = m`
//!   and `c³ = c` alone would let `c = 1 + 2^15` through: no polynomial in `c` and `m` tells it
//!   from 1. The bits make the check polynomial, with no MSB.)
//! * GR: the query-basis row holds the same values as the monomial row;
//! * the three parties' shares are consistent: replicated copies agree (a digest per query, as
//!   [`argus_mpc::audit`] compares them), Shamir points lie on a line (random combinations opened
//!   with a pseudo-random mask), public masks are the same at every node.
//!
//! The relations are checked as additive shares of error values that must all be zero (local
//! products of replicated shares, or degree-2 Shamir products weighted by the Lagrange
//! coefficients), folded into [`audit::checks_for`] random combinations with weights from a seed
//! the parties draw together after the shares are fixed ([`audit::joint_seed`]), and opened with
//! a zero sharing ([`audit::additive_zero_each`]): an invalid query passes with probability at
//! most 2^-40 (40 combinations over Z_2^k, whose even weights cancel an error of 2^(k−1); 3 over
//! F_65519). A GR query's values are first made additive (`λ_i·t_i`, coefficient-wise) and
//! reshared as replicated Z_2^16 values for the products (one round).
//!
//! Cost per batch, whatever its size: the seed (1 round), GR's reshare (1), the zero test (1),
//! the consistency (1–2, public masks 1 more).

use argus_math::{Ring, F65519, Z16};
use argus_mpc::audit::{self, Digest};
use argus_mpc::galois::{self as mg, Basis};
use argus_mpc::rep3::{self, Rep3};
use argus_mpc::{MpcError, Party};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;

use super::field::FieldTemplateShare;
use super::galois::GrTemplateShare;
use super::plain_mask::PlainMaskShare;
use super::TemplateShare;

/// Random combinations with public weights, the same for every query of a batch (drawn after
/// all of them are fixed): [`audit::checks_for`] weight vectors, one weight per group of `group`
/// values (a GR element for the line test; single values for the zero test).
struct Combiner<R: Ring> {
    ring: R,
    group: usize,
    weights: Vec<Vec<R::El>>,
}

impl<R: Ring> Combiner<R> {
    fn new(ring: R, group: usize, values: usize, seed: &Seed) -> Self {
        let mut g = Prg::new(seed);
        let weights = (0..audit::checks_for(&ring, group)).map(|_| ring.sample_vec(&mut g, values / group)).collect();
        Combiner { ring, group, weights }
    }

    /// This party's combinations of its values `rows` (one after the other), `[k · group +
    /// lane]`: one dot product per combination and lane.
    fn combine(&self, rows: &[&[R::El]]) -> Result<Vec<R::El>, MpcError> {
        let g = self.group;
        let lanes: Vec<Vec<R::El>> = match rows {
            [one] if g == 1 => vec![one.to_vec()],
            _ => (0..g).map(|l| rows.iter().flat_map(|r| r.iter().skip(l).step_by(g).copied()).collect()).collect(),
        };
        if self.weights.first().is_some_and(|w| w.len() != lanes[0].len()) {
            return Err(MpcError::InvalidParameter("queries of different shapes in one batch".into()));
        }
        Ok(self.weights.iter().flat_map(|w| lanes.iter().map(|x| self.ring.dot(w, x))).collect())
    }
}

/// Two seeds from the joint one: the zero test's weights and the consistency combinations'.
fn seeds(p: &mut Party) -> Result<(Seed, Seed), MpcError> {
    let mut g = Prg::new(&audit::joint_seed(p)?);
    let mut draw = || {
        let mut s = [0u8; 16];
        g.fill_bytes(&mut s);
        Seed(s)
    };
    Ok((draw(), draw()))
}

/// `x_j · y_{j / factor}` as this party's additive share, from replicated shares (`x·y = Σ_i
/// x_i·y_i + x_i·y_{i−1} + x_{i−1}·y_i`); `factor` expands a trimmed mask.
fn product<R: Ring>(ring: &R, x: &Rep3<R>, y: &Rep3<R>, factor: usize, out: &mut Vec<R::El>) {
    out.extend((0..x.len()).map(|j| {
        let k = j / factor;
        let (xa, xb, ya, yb) = (x.a[j], x.b[j], y.a[k], y.b[k]);
        ring.add(ring.mul(xa, ya), ring.add(ring.mul(xa, yb), ring.mul(xb, ya)))
    }));
}

/// The error values of one eye from replicated `β` and `m` (additive shares, appended to `out`):
/// `β² − β`, `m² − m`, `β·M − β`.
fn products<R: Ring>(ring: &R, beta: &Rep3<R>, m: &Rep3<R>, factor: usize, out: &mut Vec<R::El>) {
    for (x, y, f) in [(beta, beta, 1), (m, m, 1), (beta, m, factor)] {
        let start = out.len();
        product(ring, x, y, f, out);
        for (e, &v) in out[start..].iter_mut().zip(&x.a) {
            *e = ring.sub(*e, v);
        }
    }
}

/// `c − M + 2β` from additive shares of `c`, `m` (expanded by `factor`) and `β`, appended.
fn linear<R: Ring>(ring: &R, c: &[R::El], m: &[R::El], beta: &[R::El], factor: usize, out: &mut Vec<R::El>) {
    out.extend(
        c.iter().zip(beta).enumerate().map(|(j, (&c, &b))| ring.add(ring.sub(c, m[j / factor]), ring.add(b, b))),
    );
}

fn factor_of(code: usize, mask: usize) -> Result<usize, MpcError> {
    Ok(super::mask_factor(code, mask)? as usize)
}

fn bits_of<T>(bits: &[T]) -> Result<[&T; 2], MpcError> {
    match bits {
        [l, r] => Ok([l, r]),
        _ => Err(MpcError::InvalidParameter("a query share without its masked code bits".into())),
    }
}

/// Replicated queries (Z_2^16, Z_2^32): per query, whether its shares are not those of a valid
/// template.
pub fn invalid_rep3<R: Ring>(p: &mut Party, queries: &[TemplateShare<R>], len: usize) -> Result<Vec<bool>, MpcError> {
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

/// Public masks: per query, whether its shares are not those of a valid template (the masks are
/// bits by construction; each node's copy must be the same).
pub fn invalid_plain_mask(p: &mut Party, queries: &[PlainMaskShare], len: usize) -> Result<Vec<bool>, MpcError> {
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

/// Shamir over F_65519 (points 1, 2, 3): per query, whether its shares are not those of a valid
/// template. Products are local degree-2 shares, made additive with the Lagrange coefficients
/// at 0 (3, −3, 1), which is what the three points mean if they lie on a line (checked too).
pub fn invalid_field(p: &mut Party, queries: &[FieldTemplateShare], len: usize) -> Result<Vec<bool>, MpcError> {
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

/// Shamir over GR(2^16, 4): per query, whether its shares are not those of a valid template:
/// also that its query-basis row holds its monomial row's values.
pub fn invalid_gr(p: &mut Party, queries: &[GrTemplateShare], len: usize) -> Result<Vec<bool>, MpcError> {
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
