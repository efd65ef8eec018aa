//! Products of shared vectors and matrices with tensor triples (paper 004, section 4): open
//! `s = a − u` and `t = b − v` (one round), then `[a ⊗ b] = s ⊗ t + [u] ⊗ t + s ⊗ [v] + [W]`, the
//! public term added by party 0 alone. A triple serves one product only: used twice, the two
//! opened differences would reveal the difference of the inputs.

use std::borrow::Cow;

use argus_math::Ring;

use super::exchange;
use super::triple::TensorTriple;
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
    matmul(ring, p, a, b, (a.len(), 1, b.len()), std::slice::from_ref(triple))
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
/// row-major, with k triples of at least (m, n) each, one per column of `A` and row of `B`
/// (Fig. 10: `AB = Σ_l a_l ⊗ b_l`). One round; each party sends `m·k + k·n` elements.
pub fn matmul<R: Ring>(
    ring: &R,
    p: &mut Party,
    a: &[R::El],
    b: &[R::El],
    (m, k, n): (usize, usize, usize),
    triples: &[TensorTriple<R::El>],
) -> Result<Vec<R::El>> {
    if a.len() != m * k || b.len() != k * n {
        return Err(MpcError::InvalidParameter(format!(
            "a {m} × {k} by {k} × {n} product of {} and {} elements",
            a.len(),
            b.len()
        )));
    }
    if triples.len() != k {
        return Err(MpcError::InvalidParameter(format!(
            "a product over {k} columns needs {k} triples, got {}",
            triples.len()
        )));
    }
    // triples of the product's size as they are, larger ones trimmed
    let triples: Vec<Cow<TensorTriple<R::El>>> = triples
        .iter()
        .map(|t| if t.m() == m && t.n() == n { Ok(Cow::Borrowed(t)) } else { t.trim(m, n).map(Cow::Owned) })
        .collect::<Result<_>>()?;
    // U: column l is triple l's u; V: row l is triple l's v
    let u: Vec<R::El> = (0..m * k).map(|x| triples[x % k].u[x / k]).collect();
    let v: Vec<R::El> = triples.iter().flat_map(|t| t.v.iter().copied()).collect();
    let (s, t) = open(ring, p, a, b, &u, &v)?;
    // [AB] = S·T (party 0) + U·T + S·V + Σ_l W_l
    let mut c = vec![ring.zero(); m * n];
    for tr in &triples {
        for (x, &w) in c.iter_mut().zip(&tr.w) {
            *x = ring.add(*x, w);
        }
    }
    let me0 = p.id() == 0;
    for i in 0..m {
        let row = &mut c[i * n..(i + 1) * n];
        for l in 0..k {
            let (si, ui) = (s[i * k + l], u[i * k + l]);
            let left = if me0 { ring.add(si, ui) } else { ui };
            let (t_row, v_row) = (&t[l * n..(l + 1) * n], &v[l * n..(l + 1) * n]);
            for ((x, &tj), &vj) in row.iter_mut().zip(t_row).zip(v_row) {
                *x = ring.add(*x, ring.add(ring.mul(left, tj), ring.mul(si, vj)));
            }
        }
    }
    Ok(c)
}
