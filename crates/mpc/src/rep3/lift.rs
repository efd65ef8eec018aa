//! Moving shares to a larger modulus (paper 000 section 5.1, Alg. 13 and 14).

use argus_math::{Modulus, Ring, Zt, Z16, Z32, Z64, Z8};

use super::convert::{bit_extract_sum, pow2_bits};
use super::ot::bit_inject_many;
use super::{Adder, Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// The modulus as a number (`None` for 2^128).
pub(crate) fn modulus_value(m: Modulus) -> Option<u128> {
    match m {
        Modulus::Pow2(k) if k < 128 => Some(1u128 << k),
        Modulus::Pow2(_) => None,
        Modulus::Int(t) => Some(t),
    }
}

/// ConstLift (Alg. 13): `[a]_c` to `[a·d]_{c·d}` locally, by multiplying every component by `d`
/// without reduction: `sum a_i·d = d·(a + j·c) ≡ d·a (mod c·d)`. `target` must be Z_{c·d}.
pub fn const_lift<R: Ring, T: Ring>(x: &Rep3<R>, d: u128, target: &T) -> Result<Rep3<T>> {
    let c = modulus_value(x.ring().modulus());
    let want = c.and_then(|c| c.checked_mul(d));
    if want.is_none() || want != modulus_value(target.modulus()) {
        return Err(MpcError::InvalidParameter(format!(
            "ConstLift by {d} from {} needs the target Z_(c·d), got {}",
            x.ring().modulus(),
            target.modulus()
        )));
    }
    let r = x.ring();
    // Below 2^64 (Z_{p·2^16} of the field comparisons) the products e·d < c·d fit a u64: one
    // 64-bit multiply per element instead of a 128-bit one.
    let narrow = want.is_some_and(|t| t <= 1 << 64);
    let lift = |v: &[R::El]| {
        if narrow {
            let d = d as u64;
            v.iter().map(|&e| target.from_u128(((r.to_u128(e) as u64) * d) as u128)).collect()
        } else {
            v.iter().map(|&e| target.from_u128(r.to_u128(e) * d)).collect()
        }
    };
    Rep3::from_parts(target.clone(), lift(&x.a), lift(&x.b))
}

/// Lift (Alg. 14): `[x]_{2^k}` to `[x]_{2^{k+m}}`. The components summed without reduction give
/// `X = x + j·2^k` with `j < 3`; bits `k` and `k+1` of `X` (one adder run) are injected into
/// Z_{2^m} and scaled by ConstLift, so `x = X - 2^k·b_k - 2^{k+1}·b_{k+1}`.
pub fn lift<R: Ring, T: Ring>(p: &mut Party, x: &Rep3<R>, target: &T, adder: Adder) -> Result<Rep3<T>> {
    let k = pow2_bits(x.ring())?;
    let km = pow2_bits(target)?;
    if km <= k || km > 127 {
        return Err(MpcError::InvalidParameter(format!(
            "Lift from Z_2^{k} needs a target Z_2^(k+m), 0 < m, k+m < 128; got Z_2^{km}"
        )));
    }
    let m = km - k;
    let big = widen(x, target)?;
    let bits = bit_extract_sum(p, x, k as usize, &[k as usize, k as usize + 1], adder)?;
    // 2^{k+1}·b_{k+1} vanishes mod 2^{k+1} when m = 1: skip its injection then.
    let bits = if m >= 2 { &bits[..2] } else { &bits[..1] };
    // Machine-word rings where m allows (Z_2^16 → Z_2^32 is the iris case; b_{k+1} then goes
    // into Z_2^m too, one bit wider than it needs, to keep one fast element type), else Z_t with
    // b_{k+1} in Z_2^{m−1}.
    let carry = match m {
        8 => inject_carries(p, bits, Z8::new(), Z8::new(), k, target)?,
        16 => inject_carries(p, bits, Z16::new(), Z16::new(), k, target)?,
        32 => inject_carries(p, bits, Z32::new(), Z32::new(), k, target)?,
        64 => inject_carries(p, bits, Z64::new(), Z64::new(), k, target)?,
        _ => inject_carries(p, bits, Zt::pow2(m)?, Zt::pow2(m.saturating_sub(1).max(1))?, k, target)?,
    };
    big.sub(&carry)
}

/// Lift of small values: `[x]_{2^k}` with `0 ≤ x < 2^{k−1}` to `[x]_{2^{k+m}}` in **2 rounds**,
/// our shortcut of Alg. 14 for values with a spare top bit (the iris check's mask products, at
/// most 16 384 < 2^15 in Z_2^16 for open-iris codes). The components summed as integers give
/// `X = x + j·2^k`, and with a spare bit the carry count `j ∈ {0, 1, 2}` is a function of the
/// components' top two bits alone ([`carry_count_small`], a 1-out-of-4 three-party OT instead of
/// Alg. 14's 16-bit adder and two bit injections); then `x = X − 2^k·j` locally (each component
/// widened, ConstLift of `j` by 2^k). Every party sends 2 elements of Z_2^m per value (4 bytes
/// for Z_2^16 → Z_2^32; Alg. 14: 32 AND gates and two injections, 12 bytes at party 0).
///
/// Values at or above `2^{k−1}` give wrong results: the caller vouches for the bound.
pub fn lift_small<R: Ring, T: Ring>(p: &mut Party, x: &Rep3<R>, target: &T) -> Result<Rep3<T>> {
    let k = pow2_bits(x.ring())?;
    let km = pow2_bits(target)?;
    if k < 2 || km <= k || km > 127 {
        return Err(MpcError::InvalidParameter(format!(
            "Lift from Z_2^{k} needs k ≥ 2 and a target Z_2^(k+m), 0 < m, k+m < 128; got Z_2^{km}"
        )));
    }
    match km - k {
        8 => lift_with(p, x, Z8::new(), target),
        16 => lift_with(p, x, Z16::new(), target),
        32 => lift_with(p, x, Z32::new(), target),
        64 => lift_with(p, x, Z64::new(), target),
        m => lift_with(p, x, Zt::pow2(m)?, target),
    }
}

/// [`lift_small`] with the carry count shared in `ring` = Z_2^m: `x = (x_0 + x_1 + x_2) − 2^k·j`
/// in `target`, per component in one pass (the wrap 2^m·2^k of ConstLift vanishes in Z_2^{k+m}).
fn lift_with<R: Ring, S: Ring, T: Ring>(p: &mut Party, x: &Rep3<R>, ring: S, target: &T) -> Result<Rep3<T>> {
    let k = pow2_bits(x.ring())?;
    let j = carry_count_small(p, x, &ring)?;
    let r = x.ring();
    let lifted = |xc: &[R::El], jc: &[S::El]| -> Vec<T::El> {
        let v = |(&xe, &je): (&R::El, &S::El)| {
            target.sub(target.from_u128(r.to_u128(xe)), target.from_u128(ring.to_u128(je) << k))
        };
        xc.iter().zip(jc).map(v).collect()
    };
    Rep3::from_parts(target.clone(), lifted(&x.a, &j.a), lifted(&x.b, &j.b))
}

/// The carry count `j ∈ {0, 1, 2}` of `[x]_{2^k}` with `0 ≤ x < 2^{k−1}`, shared in `ring` (any
/// Z_2^m, m ≥ 2): the components summed as integers are `x + j·2^k`. Writing
/// `x_i = t_i·2^{k−2} + u_i`, the low parts carry `e ∈ {0, 1, 2}` into bit `k − 2`, so
/// `t_0 + t_1 + t_2 + e = 4j + h` where `h ∈ {0, 1}` is bit `k − 2` of `x` (the bound leaves no
/// higher bit). The sum of the top-bit pairs thus lies in `[4j − 2, 4j + 1]`, and
/// `j = ⌊(t_0 + t_1 + t_2 + 2)/4⌋`. 2 rounds; callers combine `j` with the components
/// themselves ([`lift_small`], or fused into their next pass).
///
/// One 1-out-of-4 three-party OT per value (Alg. 16 with four messages). Values are split in
/// thirds; in third `s` party `s` is the sender (it holds `t_s` and `t_{s+2}`: its own component
/// and the previous one), `s + 1` the receiver and `s + 2` the helper (both hold `t_{s+1}`, the
/// choice). With `r_s` from the seed of parties `s, s+1`, `r_{s+2}` from that of `s+2, s` and
/// the OT masks `w_0..w_3` from the latter too, the sender offers
/// `K_c = f(t_s + c + t_{s+2}) − r_s − r_{s+2} + w_c`, the helper sends `w_{t_{s+1}}`, and the
/// receiver learns `y = j − r_s − r_{s+2}` (masked by `r_{s+2}`, which it lacks) and forwards it
/// to the helper (which lacks `r_s`). The result is the replicated sharing with components
/// `(r_s, y, r_{s+2})` at positions `(s, s+1, s+2)`. The thirds are those of the two-operand MSB
/// (in whole words of 64 values).
pub fn carry_count_small<R: Ring, S: Ring>(p: &mut Party, x: &Rep3<R>, ring: &S) -> Result<Rep3<S>> {
    carry_count(p, x, ring, true)
}

/// [`carry_count_small`] in one round, as the input of a two-operand MSB ([`super::msb_of_u32`],
/// [`super::msb_of`]) of values computed from `j` component by component. In third `s` the MSB's
/// adder, party `s + 1`, is the OT's receiver: it holds `r_s` and `y`, the two components it adds;
/// parties `s + 2` and `s` hold `r_{s+2}`, the other operand. So nothing the MSB reads needs round
/// 2, which only gives the helper its copy of `y`: that component (the helper's `b` over the
/// third it helps in) is left zero. The result is therefore **not a sharing of `j`** for any other
/// use. Against [`carry_count_small`] it saves one round and, per party, a third of an element per
/// value.
pub fn carry_count_for_msb<R: Ring, S: Ring>(p: &mut Party, x: &Rep3<R>, ring: &S) -> Result<Rep3<S>> {
    carry_count(p, x, ring, false)
}

/// [`carry_count_small`]'s body; without `forward`, [`carry_count_for_msb`].
fn carry_count<R: Ring, S: Ring>(p: &mut Party, x: &Rep3<R>, ring: &S, forward: bool) -> Result<Rep3<S>> {
    let k = pow2_bits(x.ring())?;
    if k < 2 || pow2_bits(ring)? < 2 {
        return Err(MpcError::InvalidParameter(format!(
            "a carry count needs Z_2^k and Z_2^m with k, m ≥ 2; got Z_2^{k} and {}",
            ring.modulus()
        )));
    }
    let n = x.len();
    let (me, next, prev) = (p.id(), p.next(), p.prev());
    let third = |s: usize| super::third(n, s);
    let (own, recv, help) = (third(me), third(prev), third(next));
    let r = x.ring();
    // Top two bits of a component; machine words shift without u128 arithmetic.
    let top = |e: R::El| -> usize {
        let v = r.to_u128(e);
        (if k <= 64 { (v as u64) >> (k - 2) } else { (v >> (k - 2)) as u64 } & 3) as usize
    };
    // ⌊(t + 2)/4⌋ for every sum t ≤ 9 of three top-bit pairs.
    let carry: [S::El; 10] = std::array::from_fn(|t| ring.from_u128((t as u128 + 2) / 4));
    // The result's components (me, me − 1) per third, in value order, drawn or computed in
    // place: a = [r_own | y | r_help], b = [r_own2 | r_recv | y_help or 0] over [own | recv |
    // help] (in the order the thirds have in the values).
    let (mut a, mut b) = (vec![ring.zero(); n], vec![ring.zero(); n]);
    // Seed draws. Party u's `next` stream is party u+1's `prev`; both draw [third u: r_u] then
    // [third u+1: r_{s+2}, w], so the holders of every stream draw the same values in order.
    ring.sample_into(p.prg.next(), &mut a[own.clone()]); // r_own: component me of my third
    ring.sample_into(p.prg.next(), &mut a[help.clone()]); // r_help: component me of the next third
    let w_help = ring.sample_vec(p.prg.next(), 4 * help.len());
    ring.sample_into(p.prg.prev(), &mut b[recv.clone()]); // r_recv: component prev of the previous third
    ring.sample_into(p.prg.prev(), &mut b[own.clone()]); // r_own2: component prev of my third
                                                         // The OT masks w of my third, turned into the offers in place.
    let mut offers = ring.sample_vec(p.prg.prev(), 4 * own.len());
    // Round 1. Sender (my third): the four masked messages per value, to the receiver (next).
    let own_x = x.a[own.clone()].iter().zip(&x.b[own.clone()]);
    let own_r = a[own.clone()].iter().zip(&b[own.clone()]);
    for ((w, (&xa, &xb)), (&ra, &rb)) in offers.chunks_exact_mut(4).zip(own_x).zip(own_r) {
        let (t, base) = (top(xa) + top(xb), ring.neg(ring.add(ra, rb)));
        for (c, w) in w.iter_mut().enumerate() {
            *w = ring.add(ring.add(carry[t + c], base), *w);
        }
    }
    p.send_elems(ring, next, &offers)?;
    // Helper (next third; the receiver is my previous party): the mask of the choice, which is
    // the component I hold as `b`.
    let masks: Vec<S::El> = w_help.chunks_exact(4).zip(&x.b[help.clone()]).map(|(w, &xb)| w[top(xb)]).collect();
    p.send_elems(ring, prev, &masks)?;
    // Receiver (previous third; the choice is my own component `a`): y into place. Both
    // messages are read in place where the ring allows.
    let y = &mut a[recv.clone()];
    p.recv_elems_with(ring, prev, 4 * recv.len(), |got| {
        p.recv_elems_with(ring, next, recv.len(), |got_masks| {
            let choices = x.a[recv.clone()].iter().zip(got_masks);
            for ((y, g), (&xa, &m)) in y.iter_mut().zip(got.chunks_exact(4)).zip(choices) {
                *y = ring.sub(g[top(xa)], m);
            }
        })
    })??;
    if forward {
        // Round 2: the receiver forwards y to the helper (my next party); I get the next third's.
        p.send_elems(ring, next, &a[recv.clone()])?;
        p.recv_elems_with(ring, prev, help.len(), |y_help| b[help.clone()].copy_from_slice(y_help))?;
    }
    // Without `forward`, b over the next third stays zero (see `carry_count_for_msb`).
    Rep3::from_parts(ring.clone(), a, b)
}

/// The components of `x` read as integers in `target`: a sharing of `x_0 + x_1 + x_2` without
/// reduction, which Alg. 14 then corrects by its carries.
fn widen<R: Ring, T: Ring>(x: &Rep3<R>, target: &T) -> Result<Rep3<T>> {
    let r = x.ring();
    let w = |v: &[R::El]| v.iter().map(|&e| target.from_u128(r.to_u128(e))).collect();
    Rep3::from_parts(target.clone(), w(&x.a), w(&x.b))
}

/// `[2^k·b_k + 2^{k+1}·b_{k+1}]` in `target` = Z_{2^{k+m}}, the bits injected in one round trip:
/// b_k into `ring` = Z_2^m, b_{k+1} (if given) into `ring1` = Z_2^m or Z_2^{m−1}, then ConstLift.
fn inject_carries<S: Ring, T: Ring>(
    p: &mut Party,
    bits: &[Rep3Bits],
    ring: S,
    ring1: S,
    k: u32,
    target: &T,
) -> Result<Rep3<T>> {
    let inputs: Vec<_> = bits.iter().zip([ring.clone(), ring1.clone()]).collect();
    let mut injected = bit_inject_many(p, &inputs)?.into_iter();
    let b0 = injected.next().ok_or_else(|| MpcError::InvalidParameter("no bits to inject".into()))?;
    match injected.next() {
        None => const_lift(&b0, 1u128 << k, target),
        // Same ring: combine before the one ConstLift.
        Some(b1) if ring1.modulus() == ring.modulus() => {
            const_lift(&b0.add(&b1.mul_scalar(ring.from_u128(2)))?, 1u128 << k, target)
        }
        Some(b1) => const_lift(&b0, 1u128 << k, target)?.add(&const_lift(&b1, 1u128 << (k + 1), target)?),
    }
}
