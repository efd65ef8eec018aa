//! Conversions: Shamir to and from replicated sharing mod p (paper 000 section 4.3.2), bit
//! extraction mod p (Alg. 12) and lifting from F_p to Z_{p·2^m} (section 5.1, Alg. 15).

use argus_math::{BitVec, Field, Modulus, Ring, Zt, Zt64, Z16, Z32, Z64, Z8};
use argus_net::PartyId;

use super::{check_len, consts, Degree, Shamir};
use crate::error::{MpcError, Result};
use crate::party::Party;
use crate::rep3::{self, Adder, Rep3, Rep3Bits};

/// Shamir (degree 1 or 2) to replicated sharing mod p, re-randomised: party `i` multiplies its
/// point by its Lagrange coefficient (3, -3, 1 for the points 1, 2, 3, valid for both degrees),
/// which gives an additive sharing, and [`rep3::reshare`] adds a zero-sharing and passes it to the
/// next party. One round, one element per value per party.
pub fn to_rep3<F: Field>(p: &mut Party, x: &Shamir<F>) -> Result<Rep3<F>> {
    let f = &x.field;
    let l = consts(f)?.lambda[p.id()];
    let z = x.shares.iter().map(|&s| f.mul(s, l)).collect();
    rep3::reshare(p, f, z)
}

/// Replicated sharing mod p to degree-1 Shamir, locally (party `me`). Component `x_k` is known
/// to parties `k` and `k + 1`; it is shared with the degree-1 polynomial `g_k(X) = x_k·(1 -
/// X/a_k)` that vanishes at the point `a_k` of party `k + 2`, the one that does not know it, so
/// party `j` can evaluate `sum_k g_k(j + 1)` from its own two components. The result is as random
/// as the replicated sharing it comes from (re-randomise that one if needed).
pub fn from_rep3<F: Field>(me: PartyId, x: &Rep3<F>) -> Result<Shamir<F>> {
    if me >= 3 {
        return Err(MpcError::InvalidParameter(format!("party {me} is not a party of 3")));
    }
    let f = x.ring();
    let c = consts(f)?;
    let (next, prev) = ((me + 1) % 3, (me + 2) % 3);
    // Own component x_me vanishes at the previous party's point, x_{me-1} at the next party's.
    let ca = f.mul(f.sub(c.point[prev], c.point[me]), c.inv_point[prev]);
    let cb = f.mul(f.sub(c.point[next], c.point[me]), c.inv_point[next]);
    let shares = x.a.iter().zip(&x.b).map(|(&a, &b)| f.add(f.mul(a, ca), f.mul(b, cb))).collect();
    Ok(Shamir { field: f.clone(), degree: Degree::One, shares })
}

/// Which circuit the binary conversions mod t use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Circuit {
    /// The paper's circuits as written, to reproduce its counts. Bit extraction (Alg. 12): reshare
    /// party 1's `x_0 + x_1 mod t`, ripple-add `x_2`, ripple-subtract `t` (bits of `t` treated as
    /// a shared operand), one multiplexer per output: for an MSB `3k + 2` AND gates in `2k + 3`
    /// rounds (k = 16: 50 bits, 35 rounds). Lift (Alg. 15): signs of `X - t` and `X - 2t` from the
    /// three components in one adder run (`2·(2k + 1)` AND gates in `k + 1` rounds), two bit
    /// injections, two ConstLifts.
    Paper,
    /// Ours (default). Party 1 inputs the bits of `A = x_0 + x_1 mod t` (only it sends), and
    /// parties 0 and 2, which know `B = x_2`, also know `B' = (x_2 - t) mod 2^k`: so `A + B` and
    /// `A + B' = A + B - t` are two two-operand ripple adders run side by side in the same rounds
    /// instead of one after the other. The carry of `A + B'` into bit `k` is `[A + B >= t]` and
    /// selects the result. Carries below the trailing zeros of `t` are shared by both adders (for
    /// t = p·2^m the low m bits cost nothing twice). For an MSB: `3k - z` bits at party 1 (`k`
    /// input bits, `2k - z - 1` carries, 1 mux; z trailing zeros of t), `2k - z` at the others,
    /// in `k + 2` message delays (k = 16: 48 and 32 bits, 18 delays; paper: 50 bits, 35 rounds).
    /// Lift: one comparison `[A + B >= t]` (`k` AND gates), one bit injection, and party 1
    /// inputs its own overflow bit `[x_0 + x_1 >= t]` into Z_{2^m} in the first round.
    #[default]
    Parallel,
}

/// `t` and `k = ceil(log2 t)` of a ring, for the binary circuits mod t.
fn modulus_bits<R: Ring>(r: &R) -> Result<(u128, usize)> {
    let t = match r.modulus() {
        Modulus::Pow2(k) if k < 128 => 1u128 << k,
        Modulus::Int(t) => t,
        m => return Err(MpcError::InvalidParameter(format!("binary circuits mod t need t < 2^128, got {m}"))),
    };
    Ok((t, r.bits() as usize))
}

fn mask(k: usize) -> u128 {
    if k >= 128 {
        u128::MAX
    } else {
        (1u128 << k) - 1
    }
}

/// Bit planes `0..k` of `(x_2 − c) mod 2^k` (`B = x_2` for c = 0, `B' = x_2 − t` for c = t),
/// transposed straight from the shares of parties 2 (as `a`) and 0 (as `b`): component `x_2` of
/// a replicated boolean sharing whose other components are 0 (free).
fn component2_planes<R: Ring>(me: PartyId, x: &Rep3<R>, c: u128, k: usize) -> Vec<Rep3Bits> {
    let (r, n) = (x.ring(), x.len());
    match component2(me, x) {
        Some(v) => planes_of(v, k, |e| r.to_u128(e).wrapping_sub(c))
            .into_iter()
            .map(|pl| {
                if me == 2 {
                    Rep3Bits { a: pl, b: BitVec::zeros(n) }
                } else {
                    Rep3Bits { a: BitVec::zeros(n), b: pl }
                }
            })
            .collect(),
        _ => (0..k).map(|_| Rep3Bits::zeros(n)).collect(),
    }
}

/// Bit planes `0..k` of `value(e)` for the elements `e` of `v` (bits from `k` up are ignored):
/// where `k <= 32`, one tight loop into 32-bit values and then [`BitVec::planes_from_u32`] (a call
/// per value inside the transpose cost more than the transpose).
fn planes_of<E: Copy>(v: &[E], k: usize, value: impl Fn(E) -> u128) -> Vec<BitVec> {
    if k > 32 {
        return BitVec::planes_from_fn(v.len(), k, |i| value(v[i]) & mask(k));
    }
    let vals: Vec<u32> = v.iter().map(|&e| value(e) as u32).collect();
    BitVec::planes_from_u32(&vals, k).expect("k <= 32")
}

/// A public constant bit for all `n` values, as a sharing (the constant in component `x_0`).
fn public_plane(me: PartyId, bit: bool, n: usize) -> Result<Rep3Bits> {
    Rep3Bits::zeros(n).xor_public(me, &if bit { BitVec::ones(n) } else { BitVec::zeros(n) })
}

/// Party 1's values as shared bit planes via [`rep3::input_bits`]: only party 1 sends, `k` bits
/// per value, one message.
fn input_planes(p: &mut Party, vals: Option<&[u128]>, k: usize, n: usize) -> Result<Vec<Rep3Bits>> {
    let all = vals.map(|v| {
        let planes = planes_of(v, k, |a| a);
        BitVec::concat(&planes.iter().collect::<Vec<_>>())
    });
    let shared = rep3::input_bits(p, 1, all.as_ref(), k * n)?;
    (0..k).map(|j| shared.slice(j * n, n)).collect()
}

/// Party 1's values as shared bit planes as in the paper: XOR with a zero-sharing and reshare,
/// every party sends `k` bits per value, one round.
fn reshare_planes(p: &mut Party, vals: Option<&[u128]>, k: usize, n: usize) -> Result<Vec<Rep3Bits>> {
    let mut parts: Vec<BitVec> = (0..k).map(|_| p.prg.zero_bits(n)).collect();
    if let Some(v) = vals {
        for (part, plane) in parts.iter_mut().zip(BitVec::planes_of(v, k)) {
            part.xor_assign(&plane)?;
        }
    }
    let prev = p.pass_bits(&parts)?;
    parts.into_iter().zip(prev).map(|(a, b)| Rep3Bits::from_parts(a, b)).collect()
}

/// Party 1's values `A = x_0 + x_1 mod t` of a replicated sharing mod t, as integers, with the
/// overflow bits `[x_0 + x_1 >= t]` (`None` at the other parties).
fn party1_sums<R: Ring>(me: PartyId, x: &Rep3<R>, t: u128) -> Option<(Vec<u128>, Vec<bool>)> {
    let r = x.ring();
    (me == 1).then(|| x.a.iter().zip(&x.b).map(|(&x1, &x0)| sum_mod(r.to_u128(x0), r.to_u128(x1), t)).unzip())
}

/// `(x_0 + x_1) mod t` and whether the sum reached t, for `x_0, x_1 < t`.
#[inline]
fn sum_mod(x0: u128, x1: u128, t: u128) -> (u128, bool) {
    // x_0 + x_1 < 2t may pass 2^128 (for a 128-bit t): keep the carry.
    let (s, carry) = x0.overflowing_add(x1);
    if carry || s >= t {
        (s.wrapping_sub(t), true)
    } else {
        (s, false)
    }
}

/// Component `x_2` where this party holds it (party 2 as `a`, party 0 as `b`).
fn component2<R: Ring>(me: PartyId, x: &Rep3<R>) -> Option<&[R::El]> {
    match me {
        2 => Some(&x.a),
        0 => Some(&x.b),
        _ => None,
    }
}

/// The core of [`Circuit::Parallel`]: with shared bit planes of `A`, `B` and `B' = (B - t) mod
/// 2^k` (all below 2^k, `A, B < t`), returns the bits `outputs` (all `< k`) of `(A + B) mod t`
/// and the bit `s = [A + B >= t]` (if `need_s` or an output needs it).
///
/// Two ripple adders side by side: `g_{j+1} = maj(A_j, B_j, g_j)` for the bits of `c = A + B`
/// and `h_{j+1} = maj(A_j, B'_j, h_j)` for `d = A + B'`, `maj(a, b, c) = ((a^c)&(b^c))^c`, all
/// gates of one bit position in one message. `A + B' = A + B - t + 2^k`, so `h_k = s`, and
/// for `s = 1` the low `k` bits of `d` are `A + B - t`. Below the `z` trailing zeros of `t`,
/// `B'_j = B_j` and `g = h`: one gate serves both, and the output bits need no multiplexer.
#[allow(clippy::too_many_arguments)]
fn parallel_mod_add(
    p: &mut Party,
    a: &[Rep3Bits],
    b: &[Rep3Bits],
    bt: &[Rep3Bits],
    k: usize,
    z: usize,
    outputs: &[usize],
    need_s: bool,
    n: usize,
) -> Result<(Vec<Rep3Bits>, Option<Rep3Bits>)> {
    let top = outputs.iter().copied().max().unwrap_or(0);
    let need_s = need_s || outputs.iter().any(|&j| j >= z);
    let steps_g = top;
    let steps_h = if need_s { k } else { 0 };
    // gs[j] / hs[j]: the carries into bit j (the last one is the running carry).
    let mut gs = vec![Rep3Bits::zeros(n)];
    let mut hs = vec![Rep3Bits::zeros(n)];
    for j in 0..steps_g.max(steps_h) {
        let (g, h) = (&gs[j], &hs[j]);
        if j < z {
            // B'_j = B_j and g_j = h_j: one gate for both carries.
            let next = rep3::maj_many(p, &[(&a[j], &bt[j], g)])?.pop().expect("one gate");
            hs.push(next.clone());
            gs.push(next);
        } else {
            let mut gates = Vec::with_capacity(2);
            if j < steps_g {
                gates.push((&a[j], &b[j], g));
            }
            if j < steps_h {
                gates.push((&a[j], &bt[j], h));
            }
            let mut next = rep3::maj_many(p, &gates)?.into_iter();
            let next_g = if j < steps_g { next.next().expect("g gate") } else { g.clone() };
            let next_h = if j < steps_h { next.next().expect("h gate") } else { h.clone() };
            gs.push(next_g);
            hs.push(next_h);
        }
    }
    let s = need_s.then(|| hs[k].clone());
    // r_j = c_j ^ s & (c_j ^ d_j), with c_j ^ d_j = B_j ^ B'_j ^ g_j ^ h_j.
    let mut out = Vec::with_capacity(outputs.len());
    let mut muxed = Vec::new();
    for &j in outputs {
        let c = a[j].xor(&b[j])?.xor(&gs[j])?;
        if j >= z {
            muxed.push((out.len(), b[j].xor(&bt[j])?.xor(&gs[j])?.xor(&hs[j])?));
        }
        out.push(c);
    }
    if let Some(s) = &s {
        if !muxed.is_empty() {
            let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = muxed.iter().map(|(_, diff)| (s, diff)).collect();
            let prods = rep3::and_many(p, &pairs)?;
            for ((at, _), prod) in muxed.iter().zip(prods) {
                out[*at] = out[*at].xor(&prod)?;
            }
        }
    }
    Ok((out, s))
}

/// The paper's Alg. 12 after the input: `c = A + B` by ripple carry (k + 1 bits), `d = c - t` by
/// ripple borrow (Alg. 9 with the full subtractor of Alg. 8, `t` as a shared operand so no gate
/// is skipped), and `r_j = borrow ? c_j : d_j` for each output.
fn paper_mod_add(
    p: &mut Party,
    a: &[Rep3Bits],
    b: &[Rep3Bits],
    t: u128,
    k: usize,
    outputs: &[usize],
    n: usize,
) -> Result<Vec<Rep3Bits>> {
    let me = p.id();
    let xa: Vec<rep3::Plane> = a.iter().cloned().map(Some).collect();
    let xb: Vec<rep3::Plane> = b.iter().cloned().map(Some).collect();
    let c: Vec<Rep3Bits> = rep3::add_bits(p, &xa, &xb, &(0..=k).collect::<Vec<_>>(), Adder::Ripple)?
        .into_iter()
        .map(|pl| pl.unwrap_or_else(|| Rep3Bits::zeros(n)))
        .collect();
    let tb: Vec<Rep3Bits> =
        (0..=k).map(|j| public_plane(me, j < 128 && (t >> j) & 1 == 1, n)).collect::<Result<_>>()?;
    // Bit 0: d_0 = c_0 ^ t_0, borrow = d_0 & t_0 (= !c_0 & t_0).
    let mut d = Vec::with_capacity(k + 1);
    d.push(c[0].xor(&tb[0])?);
    let mut borrow = rep3::and(p, &d[0], &tb[0])?;
    // FS (Alg. 8): d_i = c_i ^ t_i ^ w, borrow' = ((c_i ^ t_i) & (t_i ^ w)) ^ w.
    for i in 1..=k {
        let t1 = c[i].xor(&tb[i])?;
        let t2 = tb[i].xor(&borrow)?;
        d.push(t1.xor(&borrow)?);
        borrow = rep3::and(p, &t1, &t2)?.xor(&borrow)?;
    }
    // CMux: the final borrow says c < t, then c is the result.
    let diffs: Vec<Rep3Bits> = outputs.iter().map(|&j| c[j].xor(&d[j])).collect::<std::result::Result<_, _>>()?;
    let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = diffs.iter().map(|x| (&borrow, x)).collect();
    let prods = rep3::and_many(p, &pairs)?;
    outputs.iter().zip(prods).map(|(&j, m)| d[j].xor(&m)).collect()
}

/// Bits `outputs` (LSB = 0) of the canonical value `x mod t` of a replicated sharing over any
/// ring Z_t or F_p (t < 2^128), with the default [`Circuit::Parallel`]. Paper 000 Alg. 12 with the
/// semi-honest start of section 4.3.2: party 1, which holds `x_0` and `x_1`, adds them mod t.
pub fn bit_extract_p<R: Ring>(p: &mut Party, x: &Rep3<R>, outputs: &[usize]) -> Result<Vec<Rep3Bits>> {
    bit_extract_p_with(p, x, outputs, Circuit::default())
}

/// [`bit_extract_p`] with a chosen circuit.
pub fn bit_extract_p_with<R: Ring>(
    p: &mut Party,
    x: &Rep3<R>,
    outputs: &[usize],
    circuit: Circuit,
) -> Result<Vec<Rep3Bits>> {
    let (t, k) = modulus_bits(x.ring())?;
    if let Some(&j) = outputs.iter().find(|&&j| j >= k) {
        return Err(MpcError::InvalidParameter(format!("bit {j} does not exist below {}", x.ring().modulus())));
    }
    if outputs.is_empty() {
        return Ok(Vec::new());
    }
    let (me, n) = (p.id(), x.len());
    // B = x_2 (parties 2 and 0) and A = (x_0 + x_1) mod t (party 1), transposed straight from the
    // shares (no vectors of integers in between).
    let pb = component2_planes(me, x, 0, k);
    match circuit {
        Circuit::Paper => {
            let a = party1_sums(me, x, t).map(|(v, _)| v);
            let pa = reshare_planes(p, a.as_deref(), k, n)?;
            paper_mod_add(p, &pa, &pb, t, k, outputs, n)
        }
        Circuit::Parallel => {
            let a = party1_sums(me, x, t).map(|(v, _)| v);
            let pa = input_planes(p, a.as_deref(), k, n)?;
            let pbt = component2_planes(me, x, t, k);
            let z = (t.trailing_zeros() as usize).min(k);
            Ok(parallel_mod_add(p, &pa, &pb, &pbt, k, z, outputs, false, n)?.0)
        }
    }
}

/// The most significant bit `ℓ - 1`, `ℓ = ceil(log2 t)`, of the canonical `x mod t`
/// ([`Circuit::Parallel`]).
pub fn msb_p<R: Ring>(p: &mut Party, x: &Rep3<R>) -> Result<Rep3Bits> {
    msb_p_with(p, x, Circuit::default())
}

/// [`msb_p`] with a chosen circuit.
pub fn msb_p_with<R: Ring>(p: &mut Party, x: &Rep3<R>, circuit: Circuit) -> Result<Rep3Bits> {
    let k = x.ring().bits() as usize;
    Ok(bit_extract_p_with(p, x, &[k - 1], circuit)?.pop().expect("one output"))
}

/// LiftP (paper 000 Alg. 15): `[x]_t` (t = p, or any t < 2^127) to `[x]_{t·2^m}`, `m >= 1`; `target`
/// must be Z_{t·2^m}. With [`Circuit::Parallel`].
///
/// The components summed without reduction give `X = x + t·o` with `o` in {0, 1, 2}; `o` is
/// computed in binary, brought to Z_{2^m} and scaled by ConstLift (Alg. 13): `x = X - t·o`.
pub fn lift_p<R: Ring, T: Ring>(p: &mut Party, x: &Rep3<R>, m: u32, target: &T) -> Result<Rep3<T>> {
    lift_p_with(p, x, m, target, Circuit::default())
}

/// [`lift_p`] with a chosen circuit. [`Circuit::Paper`] follows Alg. 15: the overflow bits
/// `o1 = [X >= t]` and `o2 = [X >= 2t]` are the negated sign bits `ℓ + 1` of `X - t` and `X - 2t`
/// as (ℓ+2)-bit numbers (the constant goes into component `x_0`, both batches in one adder run),
/// each injected into Z_{2^m}. [`Circuit::Parallel`] gets `o = [x_0 + x_1 >= t] + [A + x_2 >= t]`,
/// the first bit from party 1 directly, the second from one comparison.
pub fn lift_p_with<R: Ring, T: Ring>(
    p: &mut Party,
    x: &Rep3<R>,
    m: u32,
    target: &T,
    circuit: Circuit,
) -> Result<Rep3<T>> {
    let (t, _) = modulus_bits(x.ring())?;
    let want = (1..128).contains(&m).then(|| t.checked_mul(1u128 << m)).flatten();
    let have = match target.modulus() {
        Modulus::Pow2(k) if k < 128 => Some(1u128 << k),
        Modulus::Pow2(_) => None,
        Modulus::Int(v) => Some(v),
    };
    if want.is_none() || want != have {
        return Err(MpcError::InvalidParameter(format!(
            "LiftP from {} by 2^{m} needs m >= 1 and the target Z_(t·2^m) below 2^128, got {}",
            x.ring().modulus(),
            target.modulus()
        )));
    }
    let r = x.ring();
    let big = |v: &[R::El]| v.iter().map(|&e| target.from_u128(r.to_u128(e))).collect();
    let sum = Rep3::from_parts(target.clone(), big(&x.a), big(&x.b))?;
    // The overflow count in Z_2^m: machine words where m allows (m = 16 for the iris check's
    // Z_{p·2^16}), else Z_t with u64 (m <= 64) or u128 elements.
    let scaled = match m {
        8 => scaled_overflow(p, x, Z8::new(), target, circuit)?,
        16 => scaled_overflow(p, x, Z16::new(), target, circuit)?,
        32 => scaled_overflow(p, x, Z32::new(), target, circuit)?,
        64 => scaled_overflow(p, x, Z64::new(), target, circuit)?,
        m if m < 64 => scaled_overflow(p, x, Zt64::pow2(m)?, target, circuit)?,
        m => scaled_overflow(p, x, Zt::pow2(m)?, target, circuit)?,
    };
    sum.sub(&scaled)
}

/// `t·o` in `target` for LiftP's overflow count `o` ∈ {0, 1, 2} of `x`'s components (computed in
/// `z2m` = Z_2^m, then ConstLifted by t).
fn scaled_overflow<R: Ring, S: Ring, T: Ring>(
    p: &mut Party,
    x: &Rep3<R>,
    z2m: S,
    target: &T,
    circuit: Circuit,
) -> Result<Rep3<T>> {
    let (t, l) = modulus_bits(x.ring())?;
    let (me, n, r) = (p.id(), x.len(), x.ring());
    let o = match circuit {
        Circuit::Paper => {
            let w = l + 2;
            if w > 128 {
                return Err(MpcError::InvalidParameter(format!(
                    "LiftP (Alg. 15) needs ceil(log2 t) + 2 <= 128, got {w}"
                )));
            }
            // Component x_0 (party 0's `a`, party 1's `b`) carries the constant -t or -2t.
            let shift = |v: &[R::El], held_x0: bool| -> Vec<u128> {
                let mut out = Vec::with_capacity(2 * n);
                for c in [t, 2 * t] {
                    let sub = if held_x0 { c } else { 0 };
                    out.extend(v.iter().map(|&e| r.to_u128(e).wrapping_sub(sub) & mask(w)));
                }
                out
            };
            let (ca, cb) = (shift(&x.a, me == 0), shift(&x.b, me == 1));
            let sign =
                rep3::bit_extract_components(p, &ca, &cb, w, &[l + 1], Adder::Ripple)?.pop().expect("one output");
            let over = sign.not(me);
            let (o1, o2) = (over.slice(0, n)?, over.slice(n, n)?);
            let inj = rep3::bit_inject_many(p, &[(&o1, z2m.clone()), (&o2, z2m.clone())])?;
            inj[0].add(&inj[1])?
        }
        Circuit::Parallel => {
            let (a_vals, o01) = party1_sums(me, x, t).unzip();
            let pa = input_planes(p, a_vals.as_deref(), l, n)?;
            let o01: Option<Vec<S::El>> = o01.map(|v| v.into_iter().map(|o| z2m.from_u128(o.into())).collect());
            let first = rep3::input(p, &z2m, 1, o01.as_deref(), n)?;
            let (pb, pbt) = (component2_planes(me, x, 0, l), component2_planes(me, x, t, l));
            let z = (t.trailing_zeros() as usize).min(l);
            let (_, s) = parallel_mod_add(p, &pa, &pb, &pbt, l, z, &[], true, n)?;
            let second = rep3::bit_inject(p, &s.expect("requested"), &z2m)?;
            first.add(&second)?
        }
    };
    check_len(o.len(), n)?;
    rep3::const_lift(&o, t, target)
}
