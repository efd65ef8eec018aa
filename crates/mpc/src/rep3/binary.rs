//! Boolean circuits on replicated bit shares: AND gates batched into one message per layer, and
//! binary adders over bit planes (paper 000 appendix E, Alg. 6–9).

use argus_math::BitVec;

use super::Rep3Bits;
use crate::error::Result;
use crate::party::Party;

/// One bit position of a batch of shared values ("bit plane"), or `None` for a public zero.
/// Tracking known zeros lets the adders skip AND gates whose result is known (e.g. the carry into
/// bit 0), so gate counts match the paper's.
pub type Plane = Option<Rep3Bits>;

/// Which binary adder a bit decomposition uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Adder {
    /// Ripple carry (Alg. 7): fewest AND gates, one round per bit.
    #[default]
    Ripple,
    /// Kogge-Stone parallel prefix: about `log2(k)` rounds, more AND gates.
    LogDepth,
}

/// `x & y` for shared bits: `z_i = x_i y_i ^ x_{i-1} y_i ^ x_i y_{i-1} ^ r_i`, then reshare.
pub fn and(p: &mut Party, x: &Rep3Bits, y: &Rep3Bits) -> Result<Rep3Bits> {
    Ok(and_many(p, &[(x, y)])?.pop().expect("one pair"))
}

/// Many independent AND gates in one round (one message carrying all of them).
pub fn and_many(p: &mut Party, pairs: &[(&Rep3Bits, &Rep3Bits)]) -> Result<Vec<Rep3Bits>> {
    let mut local = Vec::with_capacity(pairs.len());
    for (x, y) in pairs {
        super::check_len(x.len(), y.len())?;
        let (xa, xb, ya, yb) = (x.a.words(), x.b.words(), y.a.words(), y.b.words());
        local.push(and_local(p, x.len(), |k| (xa[k], xb[k], ya[k], yb[k])));
    }
    let prev = p.pass_bits(&local)?;
    Ok(local.into_iter().zip(prev).map(|(a, b)| Rep3Bits { a, b }).collect())
}

/// A layer of majority gates in one round: for each `(x, y, c)` the carry `maj(x, y, c) = ((x ^ c)
/// & (y ^ c)) ^ c` of a ripple adder, one AND gate each. The gate inputs are formed word by word
/// inside the AND (no vectors for `x ^ c` and `y ^ c`), and `c` is added in place.
pub(crate) fn maj_many(p: &mut Party, gates: &[(&Rep3Bits, &Rep3Bits, &Rep3Bits)]) -> Result<Vec<Rep3Bits>> {
    let mut local = Vec::with_capacity(gates.len());
    for (x, y, c) in gates {
        super::check_len(x.len(), y.len())?;
        super::check_len(x.len(), c.len())?;
        let (xa, xb, ya, yb, ca, cb) = (x.a.words(), x.b.words(), y.a.words(), y.b.words(), c.a.words(), c.b.words());
        local.push(and_local(p, x.len(), |k| (xa[k] ^ ca[k], xb[k] ^ cb[k], ya[k] ^ ca[k], yb[k] ^ cb[k])));
    }
    let prev = p.pass_bits(&local)?;
    local
        .into_iter()
        .zip(prev)
        .zip(gates)
        .map(|((mut a, mut b), (_, _, c))| {
            a.xor_assign(&c.a)?;
            b.xor_assign(&c.b)?;
            Ok(Rep3Bits { a, b })
        })
        .collect()
}

/// This party's additive share `z_i` of an AND gate (before the reshare), word by word from the
/// words `(x_i, x_{i-1}, y_i, y_{i-1})` that `words(k)` returns for word `k`.
pub(crate) fn and_local(p: &mut Party, n: usize, words: impl Fn(usize) -> (u64, u64, u64, u64)) -> BitVec {
    let mut z = p.prg.zero_bits(n);
    for (k, w) in z.words_mut().iter_mut().enumerate() {
        let (xa, xb, ya, yb) = words(k);
        *w ^= (xa & ya) ^ (xb & ya) ^ (xa & yb);
    }
    z
}

/// XOR of planes with public zeros.
pub(crate) fn pxor(x: &Plane, y: &Plane) -> Plane {
    match (x, y) {
        (None, None) => None,
        (Some(v), None) | (None, Some(v)) => Some(v.clone()),
        (Some(a), Some(b)) => Some(a.xor(b).expect("planes of one batch have equal length")),
    }
}

/// A layer of AND gates on planes in one round; gates with a zero input cost nothing.
pub(crate) fn and_planes(p: &mut Party, pairs: &[(&Plane, &Plane)]) -> Result<Vec<Plane>> {
    let live: Vec<(&Rep3Bits, &Rep3Bits)> = pairs
        .iter()
        .filter_map(|(x, y)| match (x, y) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        })
        .collect();
    let mut done = if live.is_empty() { Vec::new() } else { and_many(p, &live)? }.into_iter();
    Ok(pairs.iter().map(|(x, y)| if x.is_some() && y.is_some() { done.next() } else { None }).collect())
}

/// Adds two shared binary numbers given as planes (index = bit position, missing = 0) and returns
/// the sum's bits at the positions in `outputs`, in that order. Gates with a known-zero input
/// are skipped, so the counts are those of the paper's circuits.
pub fn add_bits(p: &mut Party, x: &[Plane], y: &[Plane], outputs: &[usize], adder: Adder) -> Result<Vec<Plane>> {
    let Some(&top) = outputs.iter().max() else { return Ok(Vec::new()) };
    let mut all = match adder {
        Adder::Ripple => ripple(p, x, y, top, outputs)?,
        Adder::LogDepth => kogge_stone(p, x, y, top, outputs)?,
    };
    Ok(outputs.iter().map(|&j| all[j].take()).collect())
}

fn plane_at(v: &[Plane], j: usize) -> Plane {
    v.get(j).cloned().flatten()
}

/// Ripple-carry adder (Alg. 6/7): the carry into bit `j+1` is `((a_j^c_j) & (b_j^c_j)) ^ c_j`,
/// one AND and one round per bit. Each step reads the planes in place (the gate's operands are
/// XORed word by word inside its local product) and updates the carry in place: no plane is
/// copied, which matters at a million values per plane.
fn ripple(p: &mut Party, x: &[Plane], y: &[Plane], top: usize, outputs: &[usize]) -> Result<Vec<Plane>> {
    fn at(v: &[Plane], j: usize) -> Option<&Rep3Bits> {
        v.get(j).and_then(Option::as_ref)
    }
    let mut out = Vec::with_capacity(top + 1);
    let mut carry: Plane = None;
    for j in 0..=top {
        let (a, b) = (at(x, j), at(y, j));
        out.push(if outputs.contains(&j) { xor3(a, b, carry.as_ref()) } else { None });
        if j < top {
            carry = ripple_carry(p, a, b, carry)?;
        }
    }
    Ok(out)
}

/// `a ^ b ^ c` of planes with public zeros (`None`).
fn xor3(a: Option<&Rep3Bits>, b: Option<&Rep3Bits>, c: Option<&Rep3Bits>) -> Plane {
    let mut live = [a, b, c].into_iter().flatten();
    let mut acc = live.next()?.clone();
    for v in live {
        acc.a.xor_assign(&v.a).expect("planes of one batch have equal length");
        acc.b.xor_assign(&v.b).expect("planes of one batch have equal length");
    }
    Some(acc)
}

/// One ripple step: the carry out of a bit with inputs `a`, `b` and carry in `c`,
/// `((a ^ c) & (b ^ c)) ^ c`. The AND is skipped when an operand is a public zero (then the
/// carry is zero), as the gate counts of the paper assume.
fn ripple_carry(p: &mut Party, a: Option<&Rep3Bits>, b: Option<&Rep3Bits>, c: Plane) -> Result<Plane> {
    if c.is_none() && (a.is_none() || b.is_none()) {
        // An AND operand is a public zero only when the carry in is: the carry out is zero.
        return Ok(None);
    }
    let n = a.or(b).or(c.as_ref()).map_or(0, Rep3Bits::len);
    fn words(v: Option<&Rep3Bits>) -> Option<(&[u64], &[u64])> {
        v.map(|v| (v.a.words(), v.b.words()))
    }
    let (wa, wb, wc) = (words(a), words(b), words(c.as_ref()));
    let word = |w: Option<(&[u64], &[u64])>, k: usize| w.map_or((0, 0), |(x, y)| (x[k], y[k]));
    let local = and_local(p, n, |k| {
        let ((aa, ab), (ba, bb), (ca, cb)) = (word(wa, k), word(wb, k), word(wc, k));
        (aa ^ ca, ab ^ cb, ba ^ ca, bb ^ cb)
    });
    let prev = p.pass_bits(std::slice::from_ref(&local))?.pop().expect("one plane");
    let mut carry = Rep3Bits { a: local, b: prev };
    if let Some(c) = &c {
        carry.a.xor_assign(&c.a)?;
        carry.b.xor_assign(&c.b)?;
    }
    Ok(Some(carry))
}

/// Which (G, P) nodes of a Kogge–Stone adder up to bit `top` the requested outputs need: the
/// generate gates (`need_g`), the propagates read before the first level (`need_p`), and per
/// level its distance and the nodes it updates.
pub(crate) struct KoggeStonePlan {
    pub(crate) need_g: Vec<bool>,
    pub(crate) need_p: Vec<bool>,
    pub(crate) levels: Vec<(usize, Vec<bool>, Vec<bool>)>,
}

impl KoggeStonePlan {
    pub(crate) fn new(top: usize, outputs: &[usize]) -> Self {
        let n = top;
        let mut levels = Vec::new();
        let mut d = 1;
        while d < n {
            levels.push(d);
            d *= 2;
        }
        // Walk the levels backwards to find which (G, P) nodes are needed at each level's output.
        let mut need_g = vec![false; n];
        for &j in outputs.iter().filter(|&&j| j >= 1) {
            need_g[j - 1] = true;
        }
        let mut need_p = vec![false; n];
        let mut plan = Vec::with_capacity(levels.len());
        for &d in levels.iter().rev() {
            let (mut ng, mut np) = (need_g.clone(), need_p.clone());
            for j in d..n {
                if need_g[j] {
                    ng[j - d] = true;
                    np[j] = true;
                }
                if need_p[j] {
                    np[j - d] = true;
                }
            }
            plan.push((d, need_g, need_p));
            need_g = ng;
            need_p = np;
        }
        plan.reverse();
        KoggeStonePlan { need_g, need_p, levels: plan }
    }
}

/// Kogge-Stone prefix adder: generate `g_j = a_j b_j`, propagate `p_j = a_j ^ b_j`, then
/// `ceil(log2(top))` levels of `(G, P)_j <- (G_j ^ P_j G_{j-d}, P_j P_{j-d})`. Only the nodes the
/// requested outputs depend on are computed (for one output, the MSB: about `3·top` gates in
/// `1 + ⌈log2 top⌉` rounds). Each level's gates read the previous level's planes and are applied
/// in place, so no plane is copied.
fn kogge_stone(p: &mut Party, x: &[Plane], y: &[Plane], top: usize, outputs: &[usize]) -> Result<Vec<Plane>> {
    let a: Vec<Plane> = (0..=top).map(|j| plane_at(x, j)).collect();
    let b: Vec<Plane> = (0..=top).map(|j| plane_at(y, j)).collect();
    let prop: Vec<Plane> = (0..=top).map(|j| pxor(&a[j], &b[j])).collect();
    let n = top; // carries into bits 1..=top are the prefixes G over 0..j-1
    let KoggeStonePlan { need_g, need_p, levels: plan } = KoggeStonePlan::new(top, outputs);
    let none: Plane = None;
    let gen_pairs: Vec<(&Plane, &Plane)> =
        (0..n).map(|j| if need_g[j] { (&a[j], &b[j]) } else { (&none, &none) }).collect();
    let mut g = and_planes(p, &gen_pairs)?;
    // P is needed below the last level only where a node's propagate is read.
    let mut pp: Vec<Plane> = (0..n).map(|j| if need_p[j] { prop[j].clone() } else { None }).collect();
    for (d, want_g, want_p) in plan {
        let mut pairs: Vec<(&Plane, &Plane)> = Vec::new();
        let mut slots = Vec::new();
        for j in d..n {
            if want_g[j] {
                pairs.push((&pp[j], &g[j - d]));
                slots.push((j, true));
            }
            if want_p[j] {
                pairs.push((&pp[j], &pp[j - d]));
                slots.push((j, false));
            }
        }
        let res = and_planes(p, &pairs)?;
        for ((j, is_g), v) in slots.into_iter().zip(res) {
            if is_g {
                g[j] = match (g[j].take(), v) {
                    (Some(mut acc), Some(v)) => {
                        acc.a.xor_assign(&v.a)?;
                        acc.b.xor_assign(&v.b)?;
                        Some(acc)
                    }
                    (acc, v) => acc.or(v),
                };
            } else {
                pp[j] = v;
            }
        }
    }
    Ok((0..=top)
        .map(|j| match j {
            _ if !outputs.contains(&j) => None,
            0 => prop[0].clone(),
            _ => pxor(&prop[j], &g[j - 1]),
        })
        .collect())
}
