//! Products of one party's matrix by the other's: `X·Y` for party 0's `X` (m × k) and party 1's
//! `Y` (k × n, held as `Yᵀ`), as when a client's queries meet a server's references.
//!
//! A matrix triple whose `U` party 0 owns and whose `V` party 1 owns ([`OwnedTriple`]) needs
//! only the cross term `U ⊗ V` from OT, one direction of Gilboa's product (half of Fig. 5's
//! cost), and the product costs each party one local `m·k·n` matrix product instead of two:
//! party 0 sends `S = X − U`, party 1 sends `T = Y − V`, and `X·Y = U·T + S·Y + W` with `U·T`
//! party 0's to compute and `S·Y` party 1's. Each message is masked by a matrix the receiver
//! never sees.

use argus_math::Ring;
use rand_core::RngCore;

use argus_ot::silent;
use argus_prg::Prg;

use super::product::{per_message, transpose, GENERATE_BUDGET};
use super::share;
use super::vole::{cross, Ots};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// How the cross terms `u_l ⊗ v_l` of an owned triple are made from OT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vole {
    /// Gilboa's product (paper 004's COT-based RsVOLE, Fig. 6): per term `min(m, n)·ℓ` random OTs
    /// and as many corrections of `max(m, n)` elements.
    Gilboa,
    /// The silent VOLE ([`argus_ot::silent`], the paper's SOT): per term `t·ℓ` random OTs and
    /// corrections of `min(m, n)` elements, `t` the noise weight for `max(m, n)` rows.
    Silent,
}

impl Vole {
    /// The one whose busier party sends fewer bytes for an (m, k, n) owned triple.
    pub fn cheaper<R: Ring>(ring: &R, shape: (usize, usize, usize)) -> Self {
        let busier = |v: Vole| v.bytes(ring, shape).into_iter().max().unwrap_or(0);
        if busier(Vole::Silent) < busier(Vole::Gilboa) {
            Vole::Silent
        } else {
            Vole::Gilboa
        }
    }

    /// Bytes parties 0 and 1 send to make an (m, k, n) owned triple, IKNP's padding aside: 16
    /// per random OT from the choosing party (the shorter vector's for Gilboa, the noise side —
    /// the longer — for the silent VOLE), the corrections from the other; the silent VOLE adds
    /// per noise block one random OT per tree level, and two 16-byte sums per level and one `d`
    /// of `min(m, n)` elements from the Δ side.
    pub fn bytes<R: Ring>(self, ring: &R, (m, k, n): (usize, usize, usize)) -> [u64; 2] {
        let (long, short, ell) = (m.max(n), m.min(n), ring.bits() as usize);
        let (chooser, choosing, other) = match self {
            Vole::Gilboa => (usize::from(n < m), k * short * ell * 16, k * short * ell * ring.wire_len(long)),
            Vole::Silent => {
                let p = silent::Params::for_rows(long, ring.bits());
                let (t, depth, d) = (p.noise, p.depth() as usize, ring.wire_len(short));
                (usize::from(n > m), k * t * (ell + depth) * 16, k * t * (ell * d + depth * 32 + d))
            }
        };
        let (choosing, other) = (choosing as u64, other as u64);
        if chooser == 0 {
            [choosing, other]
        } else {
            [other, choosing]
        }
    }
}

/// One party's part of a owned triple: party 0 holds `U` (m × k), party 1 `Vᵀ` (n × k), and
/// each a share of `W = U·V` (m × n), all row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedTriple<E> {
    pub(super) mine: Vec<E>,
    pub(super) w: Vec<E>,
    shape: (usize, usize, usize),
}

impl<E: Copy> OwnedTriple<E> {
    /// `(m, k, n)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.shape
    }

    /// A fresh (m, k, n) owned triple from OT, its cross terms made by whichever [`Vole`] sends
    /// fewer bytes for the shape ([`Vole::cheaper`]).
    pub fn generate<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        shape: (usize, usize, usize),
    ) -> Result<Self> {
        Self::generate_with(ring, p, ots, shape, Vole::cheaper(ring, shape))
    }

    /// A fresh (m, k, n) owned triple from OT: party 0 draws the k columns of `U`, party 1 the k
    /// rows of `V`, and the `u_l ⊗ v_l` are shared by `vole`, a few per message so that none
    /// exceeds about [`GENERATE_BUDGET`] bytes.
    pub fn generate_with<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        shape: (usize, usize, usize),
        vole: Vole,
    ) -> Result<Self> {
        match vole {
            Vole::Gilboa => Self::generate_within(ring, p, ots, shape, GENERATE_BUDGET),
            Vole::Silent => Self::generate_silent(ring, p, ots, shape, GENERATE_BUDGET),
        }
    }

    /// Gilboa's product for each `u_l ⊗ v_l`, the party with the shorter vector choosing by its
    /// bits (`min(m, n)·ℓ` OTs per column); messages of about `budget` bytes at most.
    pub(crate) fn generate_within<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        (m, k, n): (usize, usize, usize),
        budget: usize,
    ) -> Result<Self> {
        p.require("two-party additive sharing", 2)?;
        let me0 = p.id() == 0;
        // the party with the shorter vector chooses (ℓ OTs per element of it), the other sends
        // corrections as long as its own vector
        let chooser = usize::from(n < m);
        let chunk = per_message(budget, m.min(n).max(1) * ring.bits() as usize * ring.wire_len(m.max(n).max(1)), k);
        let (rows, mut mine) = if me0 { (m, vec![ring.zero(); m * k]) } else { (n, vec![ring.zero(); n * k]) };
        let mut w = vec![ring.zero(); m * n];
        for first in (0..k).step_by(chunk) {
            let count = chunk.min(k - first);
            let drawn: Vec<Vec<E>> = (0..count).map(|_| ring.sample_vec(p.prg.own(), rows)).collect();
            let pairs: Vec<(&[E], usize)> = drawn.iter().map(|x| (&x[..], if me0 { n } else { m })).collect();
            let (received, sent) =
                if p.id() == chooser { cross(ring, p, ots, &pairs, &[])? } else { cross(ring, p, ots, &[], &pairs)? };
            for (l, x) in (first..).zip(&drawn) {
                for (i, &e) in x.iter().enumerate() {
                    mine[i * k + l] = e;
                }
            }
            // each part is u_l ⊗ v_l's share, one row per element of the chooser's vector
            for part in received.iter().chain(&sent) {
                if chooser == 0 {
                    for (w, &x) in w.iter_mut().zip(part) {
                        *w = ring.add(*w, x);
                    }
                } else {
                    for (j, row) in part.chunks_exact(m.max(1)).enumerate().take(n) {
                        for (i, &x) in row.iter().enumerate() {
                            w[i * n + j] = ring.add(w[i * n + j], x);
                        }
                    }
                }
            }
        }
        Ok(OwnedTriple { mine, w, shape: (m, k, n) })
    }

    /// A silent VOLE ([`argus_ot::silent`]) for all k cross terms at once: the party with the
    /// longer vector is the noise side (its `k` vectors pseudorandom, `M = max(m, n)`), the
    /// other draws its `k` vectors of `L = min(m, n)` as the Δ side.
    pub(crate) fn generate_silent<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        (m, k, n): (usize, usize, usize),
        budget: usize,
    ) -> Result<Self> {
        p.require("two-party additive sharing", 2)?;
        let me = p.id();
        let noisy = usize::from(n > m);
        let (long, short) = (m.max(n), m.min(n));
        let params = silent::Params::for_rows(long, ring.bits());
        let code = silent::Code::new(ring, long, params);
        let peer = 1 - me;
        let mut rng = Prg::new(&p.prg.own().fork());
        let (mine_t, st) = if me == noisy {
            silent::noise_side(ring, p.net(), peer, ots.pair(), &code, params, k, short, &mut rng, budget)?
        } else {
            let drawn: Vec<Vec<E>> = (0..k).map(|_| ring.sample_vec(&mut rng, short)).collect();
            let refs: Vec<&[E]> = drawn.iter().map(|b| &b[..]).collect();
            let st = silent::delta_side(ring, p.net(), peer, ots.pair(), params, &refs, &mut rng, budget)?;
            (drawn.concat(), st)
        };
        // the noise side holds H·S with H·e_l its party's vectors: party 0's W directly, party
        // 1's transposed
        let w = if noisy == 0 { code.product(ring, &st) } else { code.product_t(ring, &st) };
        let rows = if me == 0 { m } else { n };
        Ok(OwnedTriple { mine: transpose(&mine_t, k, rows), w, shape: (m, k, n) })
    }

    /// Both parties' parts of a fresh (m, k, n) owned triple made by a dealer who knows it
    /// (paper 004, appendix C), drawn from `rng`.
    pub fn deal<R: Ring<El = E>, G: RngCore + ?Sized>(
        ring: &R,
        rng: &mut G,
        (m, k, n): (usize, usize, usize),
    ) -> [Self; 2] {
        let (u, vt) = (ring.sample_vec(rng, m * k), ring.sample_vec(rng, n * k));
        let mut w = vec![ring.zero(); m * n];
        if k > 0 {
            ring.gemm(&u, &vt, k, &mut w);
        }
        let [w0, w1] = share(ring, rng, &w);
        let shape = (m, k, n);
        [OwnedTriple { mine: u, w: w0, shape }, OwnedTriple { mine: vt, w: w1, shape }]
    }
}

/// Shares of `X·Y` (m × n, row-major) for party 0's `X` (m × k) and party 1's `Yᵀ` (n × k),
/// each passing its own matrix as `mine`. One round; party 0 sends `m·k` elements, party 1
/// `n·k`, and each computes one m × k × n product.
pub fn owned_product<R: Ring>(
    ring: &R,
    p: &mut Party,
    mine: &[R::El],
    triple: &OwnedTriple<R::El>,
) -> Result<Vec<R::El>> {
    p.require("two-party additive sharing", 2)?;
    let (m, k, n) = triple.shape();
    let me0 = p.id() == 0;
    let (rows, other_rows) = if me0 { (m, n) } else { (n, m) };
    if mine.len() != rows * k {
        return Err(MpcError::InvalidParameter(format!(
            "party {} of an {m} × {k} by {k} × {n} cross product gives {} elements, not {}",
            p.id(),
            mine.len(),
            rows * k
        )));
    }
    // party 0: S = X − U; party 1: Tᵀ = Yᵀ − Vᵀ
    let masked: Vec<R::El> = mine.iter().zip(&triple.mine).map(|(&x, &r)| ring.sub(x, r)).collect();
    let peer = 1 - p.id();
    p.send_elems(ring, peer, &masked)?;
    let theirs = p.recv_elems(ring, peer, other_rows * k)?;
    let mut c = triple.w.clone();
    if k > 0 {
        // party 0: U·T (U by the rows of Tᵀ); party 1: S·Y (the rows of S by those of Yᵀ)
        let (left, right): (&[R::El], &[R::El]) = if me0 { (&triple.mine, &theirs) } else { (&theirs, mine) };
        let mut prod = vec![ring.zero(); m * n];
        ring.gemm(left, right, k, &mut prod);
        for (c, x) in c.iter_mut().zip(prod) {
            *c = ring.add(*c, x);
        }
    }
    Ok(c)
}
