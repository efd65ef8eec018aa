//! Tensor triples (paper 004, Definition 3 and Fig. 5): shares of `u ∈ R^m`, `v ∈ R^n` and
//! `W = u ⊗ v ∈ R^{m×n}`. Each party draws its own `u_i`, `v_i`; `W = u_0⊗v_0 + u_1⊗v_1 +
//! u_0⊗v_1 + u_1⊗v_0`, the two cross terms by [`super::vole::cross`] in opposite directions
//! (each party receives for its `u` and sends for its `v`), or by the silent VOLE
//! ([`generate_silent`], the paper's SOT).

use argus_math::Ring;
use argus_ot::silent;
use argus_prg::Prg;

use super::product::GENERATE_BUDGET;
use super::vole::{cross, Ots};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// One party's share of an (m, n) tensor triple: `u` (m), `v` (n), `W` (m × n, row-major).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorTriple<E> {
    /// Share of `u`.
    pub u: Vec<E>,
    /// Share of `v`.
    pub v: Vec<E>,
    /// Share of `W = u ⊗ v`, row `a` holding `u_a·v`.
    pub w: Vec<E>,
}

impl<E: Copy> TensorTriple<E> {
    /// `m`, the length of `u`.
    pub fn m(&self) -> usize {
        self.u.len()
    }
    /// `n`, the length of `v`.
    pub fn n(&self) -> usize {
        self.v.len()
    }
    /// The (s, t) triple in the top-left corner (`u[..s]`, `v[..t]`, `W[..s][..t]`): a large
    /// triple serving a smaller product (section 4.4). Errors if it does not fit.
    pub fn trim(&self, s: usize, t: usize) -> Result<Self> {
        if s > self.m() || t > self.n() {
            return Err(MpcError::InvalidParameter(format!(
                "a ({s}, {t}) triple from a ({}, {}) one",
                self.m(),
                self.n()
            )));
        }
        let n = self.n();
        let w = (0..s).flat_map(|a| self.w[a * n..a * n + t].iter().copied()).collect();
        Ok(TensorTriple { u: self.u[..s].to_vec(), v: self.v[..t].to_vec(), w })
    }
}

/// `count` (m, n) tensor triples, all in the same two messages each way.
pub fn generate<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    m: usize,
    n: usize,
    count: usize,
) -> Result<Vec<TensorTriple<R::El>>> {
    p.require("two-party additive sharing", 2)?;
    let rng = p.prg.own();
    // this party's (u_i, v_i) of each triple
    let mine: Vec<[Vec<R::El>; 2]> = (0..count).map(|_| [ring.sample_vec(rng, m), ring.sample_vec(rng, n)]).collect();
    // u_me ⊗ v_other (receiving for u) and u_other ⊗ v_me (sending for v): m × n both ways
    let ys: Vec<(&[R::El], usize)> = mine.iter().map(|[u, _]| (&u[..], n)).collect();
    let xs: Vec<(&[R::El], usize)> = mine.iter().map(|[_, v]| (&v[..], m)).collect();
    let (received, sent) = cross(ring, p, ots, &ys, &xs)?;
    Ok(mine
        .into_iter()
        .zip(received.into_iter().zip(sent))
        .map(|([u, v], (r, s))| {
            let w = (0..m * n).map(|k| ring.add(ring.add(ring.mul(u[k / n], v[k % n]), r[k]), s[k])).collect();
            TensorTriple { u, v, w }
        })
        .collect())
}

/// `count` (m, n) tensor triples with both cross terms from the silent VOLE
/// ([`argus_ot::silent`], the paper's SOT-based RsVOLE in Fig. 5): each party is the noise side
/// for its `u` (pseudorandom, `m` rows) in one direction and the Δ side for its `v` in the
/// other, one triple at a time (each needs its own `W`). Cheaper than [`generate`] once `m`
/// exceeds the noise weight ([`silent::Params::for_rows`]).
pub fn generate_silent<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    m: usize,
    n: usize,
    count: usize,
) -> Result<Vec<TensorTriple<R::El>>> {
    p.require("two-party additive sharing", 2)?;
    let (me, params) = (p.id(), silent::Params::for_rows(m, ring.bits()));
    let code = silent::Code::new(ring, m, params);
    let mut rng = Prg::new(&p.prg.own().fork());
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let v = ring.sample_vec(&mut rng, n);
        let (mut u, mut w) = (Vec::new(), vec![ring.zero(); m * n]);
        // u_0 ⊗ v_1 with party 0 the noise side, then u_1 ⊗ v_0
        for noisy in 0..2 {
            let st = if me == noisy {
                let (at, st) = silent::noise_side(
                    ring,
                    p.net(),
                    1 - me,
                    ots.pair(),
                    &code,
                    params,
                    1,
                    n,
                    &mut rng,
                    GENERATE_BUDGET,
                )?;
                u = at;
                st
            } else {
                silent::delta_side(ring, p.net(), 1 - me, ots.pair(), params, &[&v], &mut rng, GENERATE_BUDGET)?
            };
            for (w, x) in w.iter_mut().zip(code.product(ring, &st)) {
                *w = ring.add(*w, x);
            }
        }
        // and u_me ⊗ v_me locally
        for (k, w) in w.iter_mut().enumerate() {
            *w = ring.add(*w, ring.mul(u[k / n], v[k % n]));
        }
        out.push(TensorTriple { u, v, w });
    }
    Ok(out)
}
