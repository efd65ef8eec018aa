//! Products of shared vectors and matrices with tensor triples (paper 004, section 4): open
//! `s = a − u` and `t = b − v` (one round), then `[a ⊗ b] = s ⊗ t + [u] ⊗ t + s ⊗ [v] + [W]`, the
//! public term added by party 0 alone. A triple serves one product only: used twice, the two
//! opened differences would reveal the difference of the inputs.

use std::borrow::Cow;

use argus_math::Ring;

use rand_core::RngCore;

use super::triple::{generate, TensorTriple};
use super::vole::Ots;
use super::{exchange, share};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Shares of the outer product `a ⊗ b` (m × n, row-major) with an (m, n) triple (Fig. 8).
pub fn outer<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    b: &[R::El],
    triple: &TensorTriple<R::El>,
) -> Result<Vec<R::El>> {
    let (m, n) = (a.len(), b.len());
    matmul(ring, p, a, b, &MatrixTriple::from_tensors(ring, std::slice::from_ref(triple), m, n)?)
}

/// Shares of the dot product `a · b` with an (n, n) triple: the trace of `a ⊗ b`'s shares
/// (section 4.1), from the diagonal alone.
pub fn dot<R: Ring>(ring: &R, p: &mut Party, a: &[R::El], b: &[R::El], triple: &TensorTriple<R::El>) -> Result<R::El> {
    let n = a.len();
    if b.len() != n || triple.m() != n || triple.n() != n {
        return Err(MpcError::InvalidParameter(format!(
            "a dot product of {} and {} elements with a ({}, {}) triple",
            n,
            b.len(),
            triple.m(),
            triple.n()
        )));
    }
    let (s, t) = open(ring, p, a, b, &triple.u, &triple.v)?;
    let me0 = p.id() == 0;
    Ok((0..n).fold(ring.zero(), |acc, i| {
        let mut x = ring.add(ring.mul(triple.u[i], t[i]), ring.mul(s[i], triple.v[i]));
        x = ring.add(x, triple.w[i * n + i]);
        if me0 {
            x = ring.add(x, ring.mul(s[i], t[i]));
        }
        ring.add(acc, x)
    }))
}

/// Shares of the element-wise products `a_i·b_i` with one Beaver triple each (the (1, 1) tensor
/// triples of [`super::generate`]; the baseline the tensor triples improve on). One round;
/// each party sends `2n` elements.
pub fn mul<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    b: &[R::El],
    triples: &[TensorTriple<R::El>],
) -> Result<Vec<R::El>> {
    let n = a.len();
    if b.len() != n || triples.len() != n || triples.iter().any(|t| t.m() != 1 || t.n() != 1) {
        return Err(MpcError::InvalidParameter(format!(
            "{n} and {} factors need as many (1, 1) triples, got {}",
            b.len(),
            triples.len()
        )));
    }
    let (u, v): (Vec<R::El>, Vec<R::El>) = triples.iter().map(|t| (t.u[0], t.v[0])).unzip();
    let (s, t) = open(ring, p, a, b, &u, &v)?;
    let me0 = p.id() == 0;
    Ok((0..n)
        .map(|i| {
            let left = if me0 { ring.add(s[i], u[i]) } else { u[i] };
            ring.add(ring.add(ring.mul(left, t[i]), ring.mul(s[i], v[i])), triples[i].w[0])
        })
        .collect())
}

/// `s = a − u` and `t = b − v`, opened (one round).
#[allow(clippy::type_complexity)]
fn open<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    b: &[R::El],
    u: &[R::El],
    v: &[R::El],
) -> Result<(Vec<R::El>, Vec<R::El>)> {
    p.require("two-party additive sharing", 2)?;
    let mine: Vec<R::El> = a.iter().zip(u).chain(b.iter().zip(v)).map(|(&x, &y)| ring.sub(x, y)).collect();
    let other = exchange(ring, p, &mine)?;
    let mut st: Vec<R::El> = mine.iter().zip(&other).map(|(&x, &y)| ring.add(x, y)).collect();
    let t = st.split_off(a.len());
    Ok((st, t))
}

/// Shares of the matrix product `A·B` (m × n, row-major) of `A` (m × k) and `B` (k × n), both
/// row-major, with a matrix triple of that shape (Fig. 10: `AB = Σ_l a_l ⊗ b_l`, the triples'
/// `W` summed ahead of time). One round; each party sends `m·k + k·n` elements.
pub fn matmul<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    b: &[R::El],
    triple: &MatrixTriple<R::El>,
) -> Result<Vec<R::El>> {
    let (_, k, n) = triple.shape();
    if b.len() != k * n {
        return Err(MpcError::InvalidParameter(format!("a {k} × {n} right factor of {} elements", b.len())));
    }
    matmul_t(ring, p, a, &transpose(b, k, n), triple)
}

/// [`matmul`] with the right factor given transposed: `Bᵀ` (n × k, row-major), as a server
/// holds its references one per row. Nothing is transposed on the way.
pub fn matmul_t<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    bt: &[R::El],
    triple: &MatrixTriple<R::El>,
) -> Result<Vec<R::El>> {
    let (m, k, n) = triple.shape();
    if a.len() != m * k || bt.len() != k * n {
        return Err(MpcError::InvalidParameter(format!(
            "a {m} × {k} by {k} × {n} product of {} and {} elements",
            a.len(),
            bt.len()
        )));
    }
    let (s, tt) = open(ring, p, a, bt, &triple.u, &triple.vt)?;
    // [AB] = (S·[party 0] + U)·T + S·V + W: one product of [L | S] (m × 2k) by the transpose
    // of [T; V] (rows [Tᵀ_j | Vᵀ_j], n × 2k), on the ring's matrix kernel
    let mut c = triple.w.clone();
    if k > 0 {
        let me0 = p.id() == 0;
        let mut left = Vec::with_capacity(2 * m * k);
        for (s, u) in s.chunks_exact(k).zip(triple.u.chunks_exact(k)) {
            if me0 {
                left.extend(s.iter().zip(u).map(|(&s, &u)| ring.add(s, u)));
            } else {
                left.extend_from_slice(u);
            }
            left.extend_from_slice(s);
        }
        let mut right = Vec::with_capacity(2 * n * k);
        for (t, v) in tt.chunks_exact(k).zip(triple.vt.chunks_exact(k)) {
            right.extend_from_slice(t);
            right.extend_from_slice(v);
        }
        let mut prod = vec![ring.zero(); m * n];
        ring.gemm(&left, &right, 2 * k, &mut prod);
        for (c, x) in c.iter_mut().zip(prod) {
            *c = ring.add(*c, x);
        }
    }
    Ok(c)
}

pub(super) use argus_math::transpose;

/// About the most bytes one message of [`MatrixTriple::generate`] carries.
pub const GENERATE_BUDGET: usize = 1 << 28;

/// Columns of a `k`-column triple made per message when each costs `column_bytes`: as many as
/// fit `budget`, at least one.
pub(super) fn per_message(budget: usize, column_bytes: usize, k: usize) -> usize {
    (budget / column_bytes.max(1)).clamp(1, k.max(1))
}

/// One party's share of a matrix triple: `U` (m × k), `V` (k × n, kept as `Vᵀ`), `W = U·V`
/// (m × n), all row-major: k tensor triples side by side, made before the inputs are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixTriple<E> {
    pub(super) u: Vec<E>,
    pub(super) vt: Vec<E>,
    pub(super) w: Vec<E>,
    shape: (usize, usize, usize),
}

impl<E: Copy> MatrixTriple<E> {
    /// `(m, k, n)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.shape
    }

    /// Both parties' shares of a fresh (m, k, n) triple made by a dealer who knows it (paper
    /// 004, appendix C: a third party serving the triples): `U`, `V` drawn from `rng`,
    /// `W = U·V` on the ring's kernel, each split into two additive shares.
    pub fn deal<R: Ring<El = E>, G: RngCore + ?Sized>(
        ring: &R,
        rng: &mut G,
        (m, k, n): (usize, usize, usize),
    ) -> [Self; 2] {
        // V is drawn transposed: a uniform matrix either way
        let (u, vt) = (ring.sample_vec(rng, m * k), ring.sample_vec(rng, n * k));
        let mut w = vec![ring.zero(); m * n];
        if k > 0 {
            ring.gemm(&u, &vt, k, &mut w);
        }
        let ([u0, u1], [v0, v1], [w0, w1]) = (share(ring, rng, &u), share(ring, rng, &vt), share(ring, rng, &w));
        let shape = (m, k, n);
        [MatrixTriple { u: u0, vt: v0, w: w0, shape }, MatrixTriple { u: u1, vt: v1, w: w1, shape }]
    }

    /// A fresh (m, k, n) triple from OT: k (m, n) tensor triples ([`generate`]), made a few at
    /// a time so that no message exceeds about [`GENERATE_BUDGET`] bytes, their `W` summed as
    /// they come. Paper 004's offline phase (Fig. 5 and 10).
    pub fn generate<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        shape: (usize, usize, usize),
    ) -> Result<Self> {
        Self::generate_within(ring, p, ots, shape, GENERATE_BUDGET)
    }

    /// [`generate`](Self::generate) with messages of about `budget` bytes at most.
    pub(crate) fn generate_within<R: Ring<El = E>>(
        ring: &R,
        p: &mut Party,
        ots: &mut Ots,
        (m, k, n): (usize, usize, usize),
        budget: usize,
    ) -> Result<Self> {
        // per tensor triple: n-element corrections for every bit of the peer's m-element u
        let chunk = per_message(budget, m.max(1) * ring.bits() as usize * ring.wire_len(n.max(1)), k);
        let mut triple = Self::empty(ring, (m, k, n));
        for first in (0..k).step_by(chunk) {
            for (l, t) in (first..).zip(generate(ring, p, ots, m, n, chunk.min(k - first))?) {
                triple.put(ring, l, &t);
            }
        }
        Ok(triple)
    }

    /// The (m, k, n) triple from k tensor triples of at least (m, n) each (trimmed where larger):
    /// column l of `U` is triple l's `u`, row l of `V` its `v`, and `W = Σ_l W_l` (local work
    /// that does not depend on the inputs, so it is done here rather than in [`matmul`]).
    pub fn from_tensors<R: Ring<El = E>>(ring: &R, tensors: &[TensorTriple<E>], m: usize, n: usize) -> Result<Self> {
        let mut triple = Self::empty(ring, (m, tensors.len(), n));
        for (l, t) in tensors.iter().enumerate() {
            let t = if t.m() == m && t.n() == n { Cow::Borrowed(t) } else { Cow::Owned(t.trim(m, n)?) };
            triple.put(ring, l, &t);
        }
        Ok(triple)
    }

    /// All zero: [`put`](Self::put) fills it.
    fn empty<R: Ring<El = E>>(ring: &R, (m, k, n): (usize, usize, usize)) -> Self {
        let (u, w) = (vec![ring.zero(); m * k], vec![ring.zero(); m * n]);
        MatrixTriple { u, vt: vec![ring.zero(); n * k], w, shape: (m, k, n) }
    }

    /// Tensor triple `l` (of exactly (m, n)): column l of `U`, row l of `V`, its `W` added.
    fn put<R: Ring<El = E>>(&mut self, ring: &R, l: usize, t: &TensorTriple<E>) {
        let k = self.shape.1;
        for (i, &x) in t.u.iter().enumerate() {
            self.u[i * k + l] = x;
        }
        for (j, &x) in t.v.iter().enumerate() {
            self.vt[j * k + l] = x;
        }
        for (x, &y) in self.w.iter_mut().zip(&t.w) {
            *x = ring.add(*x, y);
        }
    }
}
