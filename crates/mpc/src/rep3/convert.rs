//! Arithmetic-to-binary conversion: bit extraction, MSB and comparison (paper 000 Alg. 5, 10;
//! Lemma 1 and 2).

use argus_math::{BitVec, Modulus, Ring};

use super::binary::{add_bits, and_local, Adder, Plane};
use super::{Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// `k` for a ring Z_2^k, or an error naming the ring.
pub(crate) fn pow2_bits<R: Ring>(ring: &R) -> Result<u32> {
    match ring.modulus() {
        Modulus::Pow2(k) => Ok(k),
        m => Err(MpcError::InvalidParameter(format!("bit extraction by binary adder needs Z_2^k, got {m}"))),
    }
}

/// Bits `outputs` of the integer sum `x_0 + x_1 + x_2` of the three `width`-bit components whose
/// two this party holds as `a` (= x_i) and `b` (= x_{i-1}) (paper 000 Alg. 10 with ShareSplit,
/// Alg. 5). Output positions `>= width` see the carries, as Lift (Alg. 14) needs.
pub fn bit_extract_components(
    p: &mut Party,
    a: &[u128],
    b: &[u128],
    width: usize,
    outputs: &[usize],
    adder: Adder,
) -> Result<Vec<Rep3Bits>> {
    super::check_len(a.len(), b.len())?;
    let pa = BitVec::planes_of(a, width);
    let pb = BitVec::planes_of(b, width);
    extract_from_planes(p, pa, pb, a.len(), outputs, adder)
}

/// The adder part of [`bit_extract_components`], on the bit planes of this party's two components.
fn extract_from_planes(
    p: &mut Party,
    pa: Vec<BitVec>,
    pb: Vec<BitVec>,
    n: usize,
    outputs: &[usize],
    adder: Adder,
) -> Result<Vec<Rep3Bits>> {
    let width = pa.len();
    let Some(&top) = outputs.iter().max() else { return Ok(Vec::new()) };
    let (me, prev) = (p.id(), (p.id() + 2) % 3);
    // ShareSplit: component x_j is a boolean sharing held by parties j (as `a`) and j+1 (as `b`),
    // so this party's share of a XOR of components `set` is (x_i if i in set, x_{i-1} if i-1 in
    // set, else 0) — which of its two planes enter, decided once per party.
    let sel = |set: &[usize]| (set.contains(&me), set.contains(&prev));
    let (t1, t2, x2) = (sel(&[0, 2]), sel(&[1, 2]), sel(&[2]));
    let pick = |(ua, ub): (bool, bool), a: u64, b: u64| (if ua { a } else { 0 }, if ub { b } else { 0 });
    // Full-adder layer (Alg. 6) compresses x_0 + x_1 + x_2 to sum s and carry c, with
    // c_j = ((x_0 ^ x_2) & (x_1 ^ x_2)) ^ x_2 feeding bit j+1: one AND layer, computed straight
    // from the two planes without materialising the operands.
    let local: Vec<BitVec> = (0..width.min(top))
        .map(|bit| {
            let (wa, wb) = (pa[bit].words(), pb[bit].words());
            and_local(p, n, |k| {
                let (t1a, t1b) = pick(t1, wa[k], wb[k]);
                let (t2a, t2b) = pick(t2, wa[k], wb[k]);
                (t1a, t1b, t2a, t2b)
            })
        })
        .collect();
    let from_prev = if local.is_empty() { Vec::new() } else { p.pass_bits(&local)? };
    let mut c: Vec<Plane> = vec![None];
    for (bit, (mut a, mut b)) in local.into_iter().zip(from_prev).enumerate() {
        if x2.0 {
            a.xor_assign(&pa[bit])?;
        }
        if x2.1 {
            b.xor_assign(&pb[bit])?;
        }
        c.push(Some(Rep3Bits { a, b }));
    }
    let s: Vec<Plane> = pa.into_iter().zip(pb).map(|(a, b)| Some(Rep3Bits { a, b })).collect();
    let bits = add_bits(p, &s, &c, outputs, adder)?;
    Ok(bits.into_iter().map(|b| b.unwrap_or_else(|| Rep3Bits::zeros(n))).collect())
}

/// Bits `outputs` (LSB = 0) of shared values in Z_2^k (Alg. 10).
pub fn bit_extract<R: Ring>(p: &mut Party, x: &Rep3<R>, outputs: &[usize], adder: Adder) -> Result<Vec<Rep3Bits>> {
    let k = pow2_bits(x.ring())? as usize;
    if let Some(&j) = outputs.iter().find(|&&j| j >= k) {
        return Err(MpcError::InvalidParameter(format!("bit {j} does not exist in Z_2^{k}")));
    }
    bit_extract_sum(p, x, k, outputs, adder)
}

/// Bits `outputs` of the integer sum of the three `width`-bit components of `x` (the canonical
/// representatives of its ring), transposed straight from the shares.
pub(crate) fn bit_extract_sum<R: Ring>(
    p: &mut Party,
    x: &Rep3<R>,
    width: usize,
    outputs: &[usize],
    adder: Adder,
) -> Result<Vec<Rep3Bits>> {
    let r = x.ring();
    let pa = BitVec::planes_from_fn(x.len(), width, |i| r.to_u128(x.a[i]));
    let pb = BitVec::planes_from_fn(x.len(), width, |i| r.to_u128(x.b[i]));
    extract_from_planes(p, pa, pb, x.len(), outputs, adder)
}

/// Full bit decomposition (A2B): the `k` bit planes of shared values in Z_2^k, LSB first.
/// With the ripple adder: `2k - 3` AND gates per value in `k - 1` rounds.
pub fn a2b<R: Ring>(p: &mut Party, x: &Rep3<R>, adder: Adder) -> Result<Vec<Rep3Bits>> {
    let k = pow2_bits(x.ring())? as usize;
    bit_extract(p, x, &(0..k).collect::<Vec<_>>(), adder)
}

/// Most significant bit of shared values in Z_2^k. For k = 16 with the ripple adder: 29 AND
/// gates in 15 rounds (paper 000 section 4.3.1).
pub fn msb<R: Ring>(p: &mut Party, x: &Rep3<R>, adder: Adder) -> Result<Rep3Bits> {
    let k = pow2_bits(x.ring())? as usize;
    Ok(bit_extract(p, x, &[k - 1], adder)?.pop().expect("one output"))
}

/// MSBs of several vectors over the same ring in one run of the circuit.
pub fn msb_many<R: Ring>(p: &mut Party, xs: &[&Rep3<R>], adder: Adder) -> Result<Vec<Rep3Bits>> {
    let all = Rep3::concat(xs)?;
    let m = msb(p, &all, adder)?;
    let mut at = 0;
    xs.iter()
        .map(|x| {
            let part = m.slice(at, x.len());
            at += x.len();
            part
        })
        .collect()
}

/// Most significant bit of `n` values of Z_2^k (2 ≤ k ≤ 64) shared replicated, where this
/// party's two components of value `i` are `comp(i) = (x_me, x_prev)`, integers below 2^k:
/// callers compute the values being compared on the fly, inside the transpose, without
/// materialising them.
///
/// Two-operand bit decomposition (as ABY3's A2B; Alg. 10 compresses the three components with a
/// full-adder layer instead). The values are split in thirds (whole words of 64); in third `s`,
/// party `s + 1` holds `x_s` and `x_{s+1}` and adds them, `y = x_s + x_{s+1} mod 2^k`, and
/// shares `y` in binary with one message (`y ⊕ r` to party `s + 2`; `r` comes from its seed
/// with party `s`, so party `s + 2` sees a one-time pad). `x_{s+2}`, held by parties `s + 2` and
/// `s`, is the other operand, shared with no message. A ripple adder of two `k`-bit operands
/// then needs `k − 1` AND gates (Alg. 10: `2k − 3`) in `k` rounds with the sharing, and each
/// party transposes one component per value instead of two. Per value a party sends `k − 1`
/// bits for the gates and `k` bits for a third of the values. With [`Adder::LogDepth`] the adder
/// is Kogge-Stone's instead: `1 + ⌈log2(k − 1)⌉` rounds for about three times the gates (for a
/// link whose round trips cost more than its bytes).
pub fn msb_of(p: &mut Party, n: usize, k: usize, adder: Adder, comp: impl Fn(usize) -> (u64, u64)) -> Result<Rep3Bits> {
    if !(2..=64).contains(&k) {
        return Err(MpcError::InvalidParameter(format!("msb_of needs 2 ≤ k ≤ 64, got {k}")));
    }
    let mask = u64::MAX >> (64 - k);
    msb_core(p, n, k, adder, |which, at, len, planes| {
        BitVec::planes_into(planes, at, len, |i| {
            let (a, b) = comp(at + i);
            (match which {
                Operand::Sum => a.wrapping_add(b),
                Operand::Me => a,
                Operand::Prev => b,
            } & mask) as u128
        })
    })
}

/// [`msb_of`] for `k ≤ 32` with the components as slices (`a[i] = x_me`, `b[i] = x_prev`; bits
/// from `k` up are ignored): the planes come from slices in tight loops, no call per value.
pub fn msb_of_u32(p: &mut Party, k: usize, a: &[u32], b: &[u32], adder: Adder) -> Result<Rep3Bits> {
    if !(2..=32).contains(&k) || a.len() != b.len() {
        return Err(MpcError::InvalidParameter(format!(
            "msb_of_u32 needs 2 ≤ k ≤ 32 and components of one length, got k = {k}, {} and {}",
            a.len(),
            b.len()
        )));
    }
    msb_core(p, a.len(), k, adder, |which, at, len, planes| {
        let r = at..at + len;
        match which {
            Operand::Me => BitVec::planes_into_u32(planes, at, &a[r]),
            Operand::Prev => BitVec::planes_into_u32(planes, at, &b[r]),
            Operand::Sum => {
                let sum: Vec<u32> = a[r.clone()].iter().zip(&b[r]).map(|(x, y)| x.wrapping_add(*y)).collect();
                BitVec::planes_into_u32(planes, at, &sum)
            }
        }
    })
}

/// [`msb_of_u32`] for `k ≤ 64` with 64-bit components (bits from `k` up are ignored): the low
/// 32 planes and the rest each from 32-bit slices.
pub fn msb_of_u64(p: &mut Party, k: usize, a: &[u64], b: &[u64], adder: Adder) -> Result<Rep3Bits> {
    if a.len() != b.len() {
        return Err(MpcError::InvalidParameter(format!(
            "msb_of_u64 needs components of one length, got {} and {}",
            a.len(),
            b.len()
        )));
    }
    msb_of_u64_with(p, a.len(), k, adder, |at, prev, out| {
        out.copy_from_slice(&(if prev { b } else { a })[at..at + out.len()])
    })
}

/// Values per block of [`msb_of_u64_with`].
const COMPONENT_BLOCK: usize = 1024;

/// [`msb_of_u64`] for `n` values whose components are made a block at a time, and only those
/// read: `comp(at, prev, out)` fills `out[i]` with `x_prev` (if `prev`) or `x_me` of value
/// `at + i`. A caller that computes its components (the iris comparison's
/// `a·ml − 2^16·a·j − 2^m·dot`) writes no vector of all `n` of them: each block goes from a
/// cache-resident buffer into the bit planes.
pub fn msb_of_u64_with(
    p: &mut Party,
    n: usize,
    k: usize,
    adder: Adder,
    comp: impl Fn(usize, bool, &mut [u64]),
) -> Result<Rep3Bits> {
    if !(2..=64).contains(&k) {
        return Err(MpcError::InvalidParameter(format!("msb_of_u64 needs 2 ≤ k ≤ 64, got {k}")));
    }
    msb_core(p, n, k, adder, |which, at, len, planes| {
        let (low, high) = planes.split_at_mut(planes.len().min(32));
        let (mut x, mut y) = ([0u64; COMPONENT_BLOCK], [0u64; COMPONENT_BLOCK]);
        let (mut lo, mut hi) = ([0u32; COMPONENT_BLOCK], [0u32; COMPONENT_BLOCK]);
        for start in (at..at + len).step_by(COMPONENT_BLOCK) {
            let m = COMPONENT_BLOCK.min(at + len - start);
            // The operand's value into `x`: one component, or the sum of both.
            comp(start, matches!(which, Operand::Prev), &mut x[..m]);
            if let Operand::Sum = which {
                comp(start, true, &mut y[..m]);
                x[..m].iter_mut().zip(&y[..m]).for_each(|(x, y)| *x = x.wrapping_add(*y));
            }
            for ((lo, hi), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(&x[..m]) {
                (*lo, *hi) = (v as u32, (v >> 32) as u32);
            }
            BitVec::planes_into_u32(low, start, &lo[..m])?;
            if !high.is_empty() {
                BitVec::planes_into_u32(high, start, &hi[..m])?;
            }
        }
        Ok(())
    })
}

/// Which value of its components a party decomposes in a piece of [`msb_core`].
#[derive(Clone, Copy)]
enum Operand {
    /// `x_me + x_prev` (the party is the adder of that third).
    Sum,
    /// `x_me`.
    Me,
    /// `x_prev`.
    Prev,
}

/// The body of [`msb_of`]: `planes(which, at, len, planes)` writes the low bit planes of the
/// operand `which` of values `at..at + len` (a piece of whole words) into `planes`.
fn msb_core(
    p: &mut Party,
    n: usize,
    k: usize,
    adder: Adder,
    write: impl Fn(Operand, usize, usize, &mut [BitVec]) -> std::result::Result<(), argus_math::MathError>,
) -> Result<Rep3Bits> {
    let (me, next, prev) = (p.id(), p.next(), p.prev());
    let third = |s: usize| super::third(n, s);
    let (mine, after, before) = (third(me), third(next), third(prev));
    // The planes of both operands over all n values, each third's piece written in place by my
    // role there: y = (y_a, y_b) is [r, 0, y ⊕ r] / [0, y_prev ⊕ r_prev, r] over [mine, after,
    // before], z = (z_a, z_b) is [0, x_me, 0] / [x_prev, 0, 0].
    let planes = || (0..k).map(|_| BitVec::zeros(n)).collect::<Vec<_>>();
    let (mut ya, mut yb, mut za, mut zb) = (planes(), planes(), planes(), planes());
    // Pads of the y operand: over my third with the next party (there I am party s, holding y_s
    // = r and y_{s+2} = 0), over the previous third with the previous party (there I am the adder).
    for (a, b) in ya.iter_mut().zip(&mut yb) {
        a.fill_random_at(p.prg.next(), mine.start, mine.len())?;
        b.fill_random_at(p.prg.prev(), before.start, before.len())?;
    }
    // Adder of the previous third: y ⊕ r to the next party; the previous party's arrives for the
    // next third (there I hold y_{s+2} = 0 and y_{s+1} = y ⊕ r).
    write(Operand::Sum, before.start, before.len(), &mut ya)?;
    let mut msg = Vec::with_capacity(k * before.len().div_ceil(8));
    for (a, b) in ya.iter_mut().zip(&yb) {
        a.xor_at(b, before.start, before.len())?;
        a.append_bytes_at(before.start, before.len(), &mut msg)?;
    }
    let got = p.pass_next(msg)?;
    let nb = after.len().div_ceil(8);
    if got.len() != k * nb {
        return Err(MpcError::Malformed {
            peer: prev,
            reason: format!("expected {} bytes of planes, got {}", k * nb, got.len()),
        });
    }
    for (j, b) in yb.iter_mut().enumerate() {
        b.set_bytes_at(after.start, after.len(), &got[j * nb..(j + 1) * nb])
            .map_err(|e| MpcError::Malformed { peer: prev, reason: e.to_string() })?;
    }
    // The other operand x_{s+2}: my `a` over the next third, my `b` over mine.
    write(Operand::Me, after.start, after.len(), &mut za)?;
    write(Operand::Prev, mine.start, mine.len(), &mut zb)?;
    let pair = |(a, b)| Some(Rep3Bits { a, b });
    let y: Vec<_> = ya.into_iter().zip(yb).map(pair).collect();
    let z: Vec<_> = za.into_iter().zip(zb).map(pair).collect();
    let mut out = add_bits(p, &y, &z, &[k - 1], adder)?;
    Ok(out.pop().flatten().unwrap_or_else(|| Rep3Bits::zeros(n)))
}

/// [`msb`] by the two-operand decomposition of [`msb_of`] for rings up to Z_2^64 (`k − 1` AND
/// gates instead of `2k − 3` with the ripple adder); wider rings fall back to Alg. 10.
pub fn msb_two_operand<R: Ring>(p: &mut Party, x: &Rep3<R>, adder: Adder) -> Result<Rep3Bits> {
    let k = pow2_bits(x.ring())? as usize;
    if k > 64 {
        return msb(p, x, adder);
    }
    let r = x.ring();
    let w = |e: R::El| r.to_u128(e) as u64;
    msb_of(p, x.len(), k, adder, |i| (w(x.a[i]), w(x.b[i])))
}

/// Signed less-than `x < y` for any two values of Z_2^k read as two's complement. `msb(x - y)`
/// alone is wrong when the subtraction overflows, so the overflow is corrected with the signs:
/// `lt = d ^ ((s_x ^ s_y) & (s_x ^ d))`, with all three MSBs from one circuit run.
pub fn lt<R: Ring>(p: &mut Party, x: &Rep3<R>, y: &Rep3<R>, adder: Adder) -> Result<Rep3Bits> {
    x.check_compatible(y)?;
    let d = x.sub(y)?;
    let m = msb_many(p, &[&d, x, y], adder)?;
    let (d, sx, sy) = (&m[0], &m[1], &m[2]);
    let fix = super::binary::and(p, &sx.xor(sy)?, &sx.xor(d)?)?;
    d.xor(&fix)
}

/// `x < y` as `msb(x - y)` for values known to lie in `[-bound, bound)` (signed), the cheap
/// comparison of paper 000 section 4.2. Refuses a bound for which `x - y` could overflow.
pub fn lt_bounded<R: Ring>(p: &mut Party, x: &Rep3<R>, y: &Rep3<R>, bound: u128, adder: Adder) -> Result<Rep3Bits> {
    x.check_compatible(y)?;
    let k = pow2_bits(x.ring())?;
    // x - y lies in (-2·bound, 2·bound); it must fit the signed range [-2^(k-1), 2^(k-1)).
    if k < 2 || bound > 1u128 << (k - 2) {
        return Err(MpcError::InvalidParameter(format!("bound {bound} too large for a comparison in Z_2^{k}")));
    }
    msb(p, &x.sub(y)?, adder)
}

/// Lemma 1 (paper 000): `hd > f·ml` equals `MSB(ceil(f·ml) - hd)` over Z_t for vectors of length
/// `l` if `l < t/4` and `l < t - 2^(ceil(log2 t) - 1)`.
pub fn lemma1(l: u128, t: u128) -> Result<()> {
    lemma2(l, 1, t)
}

/// Whether the MSB over Z_t (bit `K − 1` of the representative in `[0, t)`, `K = ⌈log2 t⌉`) is
/// the sign of every integer in `[lo, hi]`: `hi < 2^(K−1)` and `lo ≥ −(t − 2^(K−1))`. Lemmas 1
/// and 2 are this for the ranges `[−l, 2l]` and `[−2·b·l, 2·b·l]`; callers that know the exact
/// range of what they compare (the iris check's `a·ml − b·dot`) pass it, which admits rings the
/// lemmas' slack refuses.
pub fn msb_is_sign(lo: i128, hi: i128, t: u128) -> Result<()> {
    if t < 2 || lo > hi {
        return Err(MpcError::InvalidParameter(format!("no sign test for [{lo}, {hi}] over Z_{t}")));
    }
    let half = 1u128 << (128 - (t - 1).leading_zeros() - 1);
    if (hi >= 0 && hi as u128 >= half) || (lo < 0 && lo.unsigned_abs() > t - half) {
        return Err(MpcError::InvalidParameter(format!(
            "values in [{lo}, {hi}] do not keep their sign in the MSB over Z_{t} (needs [-{}, {half})",
            t - half
        )));
    }
    Ok(())
}

/// The smallest `k` for which the MSB over Z_2^k is the sign of every integer in `[lo, hi]`
/// ([`msb_is_sign`]), if one below 128 is.
pub fn msb_ring_bits(lo: i128, hi: i128) -> Option<u32> {
    (1..128).find(|&k| msb_is_sign(lo, hi, 1u128 << k).is_ok())
}

/// Lemma 2 (paper 000): `hd > (a/b)·ml` equals `MSB(a·ml - b·hd)` over Z_t if `b·l < t/4` and
/// `b·l < t - 2^(ceil(log2 t) - 1)`.
pub fn lemma2(l: u128, b: u128, t: u128) -> Result<()> {
    let bl = l.checked_mul(b).ok_or_else(|| MpcError::InvalidParameter("b·l overflows".into()))?;
    if t < 4 {
        return Err(MpcError::InvalidParameter(format!("modulus {t} too small")));
    }
    let half = 1u128 << (128 - (t - 1).leading_zeros() - 1);
    if bl.checked_mul(4).is_none_or(|v| v >= t) || bl >= t - half {
        return Err(MpcError::InvalidParameter(format!(
            "Lemma 2 bound violated: b·l = {bl} needs b·l < t/4 and b·l < t - {half} for t = {t}"
        )));
    }
    Ok(())
}
