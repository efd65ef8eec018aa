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

use argus_math::Ring;
use argus_mpc::audit;
use argus_mpc::rep3::Rep3;
use argus_mpc::{MpcError, Party};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;

/// Random combinations with public weights, the same for every query of a batch (drawn after
/// all of them are fixed): [`audit::checks_for`] weight vectors, one weight per group of `group`
/// values (a GR element for the line test; single values for the zero test).
pub(crate) struct Combiner<R: Ring> {
    ring: R,
    group: usize,
    weights: Vec<Vec<R::El>>,
}

impl<R: Ring> Combiner<R> {
    pub(crate) fn new(ring: R, group: usize, values: usize, seed: &Seed) -> Self {
        let mut g = Prg::new(seed);
        let weights = (0..audit::checks_for(&ring, group)).map(|_| ring.sample_vec(&mut g, values / group)).collect();
        Combiner { ring, group, weights }
    }

    /// This party's combinations of its values `rows` (one after the other), `[k · group +
    /// lane]`: one dot product per combination and lane.
    pub(crate) fn combine(&self, rows: &[&[R::El]]) -> Result<Vec<R::El>, MpcError> {
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
pub(crate) fn seeds(p: &mut Party) -> Result<(Seed, Seed), MpcError> {
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
pub(crate) fn product<R: Ring>(ring: &R, x: &Rep3<R>, y: &Rep3<R>, factor: usize, out: &mut Vec<R::El>) {
    out.extend((0..x.len()).map(|j| {
        let k = j / factor;
        let (xa, xb, ya, yb) = (x.a[j], x.b[j], y.a[k], y.b[k]);
        ring.add(ring.mul(xa, ya), ring.add(ring.mul(xa, yb), ring.mul(xb, ya)))
    }));
}

/// The error values of one eye from replicated `β` and `m` (additive shares, appended to `out`):
/// `β² − β`, `m² − m`, `β·M − β`.
pub(crate) fn products<R: Ring>(ring: &R, beta: &Rep3<R>, m: &Rep3<R>, factor: usize, out: &mut Vec<R::El>) {
    for (x, y, f) in [(beta, beta, 1), (m, m, 1), (beta, m, factor)] {
        let start = out.len();
        product(ring, x, y, f, out);
        for (e, &v) in out[start..].iter_mut().zip(&x.a) {
            *e = ring.sub(*e, v);
        }
    }
}

/// `c − M + 2β` from additive shares of `c`, `m` (expanded by `factor`) and `β`, appended.
pub(crate) fn linear<R: Ring>(ring: &R, c: &[R::El], m: &[R::El], beta: &[R::El], factor: usize, out: &mut Vec<R::El>) {
    out.extend(
        c.iter().zip(beta).enumerate().map(|(j, (&c, &b))| ring.add(ring.sub(c, m[j / factor]), ring.add(b, b))),
    );
}

pub(crate) fn factor_of(code: usize, mask: usize) -> Result<usize, MpcError> {
    Ok(super::mask_factor(code, mask)? as usize)
}

pub(crate) fn bits_of<T>(bits: &[T]) -> Result<[&T; 2], MpcError> {
    match bits {
        [l, r] => Ok([l, r]),
        _ => Err(MpcError::InvalidParameter("a query share without its masked code bits".into())),
    }
}
