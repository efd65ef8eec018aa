//! ReshareToTwo (Alg. 10), Overflow (Alg. 11), ShiftR by a public amount (Alg. 12) and the
//! comparison built on it (paper 001 appendix A).

use argus_math::{BitVec, Ring};

use super::bits::{msnzb, pair_to_rep3, share_conv};
use super::{planes, width, Add3, Pow2};
use crate::error::{MpcError, Result};
use crate::party::Party;
use crate::rep3::{and_many, Rep3Bits};

/// ReshareToTwo (Alg. 10): the same values shared by P2 and P3 alone (`u'_1 = 0`). P1 keeps `r_2`
/// in the stream it shares with P2 and sends `r_3 = u_1 - r_2` to P3: one round, one element.
pub fn reshare_to_two<R: Ring>(p: &mut Party, u: &Add3<R>) -> Result<Add3<R>> {
    let ring = u.ring();
    let n = u.len();
    let x = match p.id() {
        0 => {
            let r2 = ring.sample_vec(p.prg.with(1).expect("3 parties"), n);
            let r3: Vec<R::El> = u.x.iter().zip(&r2).map(|(&a, &b)| ring.sub(a, b)).collect();
            p.send_elems(ring, 2, &r3)?;
            vec![ring.zero(); n]
        }
        1 => {
            let r2 = ring.sample_vec(p.prg.with(0).expect("3 parties"), n);
            u.x.iter().zip(&r2).map(|(&a, &b)| ring.add(a, b)).collect()
        }
        _ => {
            let r3 = p.recv_elems(ring, 0, n)?;
            u.x.iter().zip(&r3).map(|(&a, &b)| ring.add(a, b)).collect()
        }
    };
    Ok(Add3::new(ring.clone(), x))
}

/// Overflow (Alg. 11): for `u'` with `u'_1 = 0` (from [`reshare_to_two`]), the bit
/// `λ = [u'_2 + u'_3 ≥ 2^n]` shared in `target` (Z_2^n itself, or a larger ring: Overflow^m).
///
/// `u'_2 ≥ -u'_3 mod 2^n` is decided at the most significant bit where `u'_2` and `-u'_3`
/// differ: MSNZB of their XOR (made replicated by one swap, `pair_to_rep3`) selects it, one AND
/// layer with the bits of `-u'_3` (which P3 inputs in the same round) reads `-u'_3` there, and P3
/// corrects the case `u'_3 = 0`. Rounds: `ceil(log2 n) + 3`.
pub fn overflow<R: Pow2, T: Ring>(p: &mut Party, u: &Add3<R>, target: &T) -> Result<Add3<T>> {
    let ring = u.ring();
    let k = width(ring)?;
    let n = u.len();
    let me = p.id();
    let minus_u3: Option<Vec<R::El>> = (me == 2).then(|| u.x.iter().map(|&a| ring.neg(a)).collect());
    let mine = match me {
        0 => None,
        1 => Some(planes(ring, &u.x, k)),
        _ => Some(planes(ring, minus_u3.as_ref().expect("party 2"), k)),
    };
    // P3's input goes out before the swap, so that both are one round.
    let t = input_planes_from_2(p, mine.as_deref().filter(|_| me == 2), k, n)?;
    let diff = pair_to_rep3(p, mine.as_deref(), k, n)?;
    let s = msnzb(p, &diff)?;
    let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = s.iter().zip(&t).collect();
    let picked = and_many(p, &pairs)?;
    let mut lambda0 = Rep3Bits::zeros(n);
    for b in &picked {
        lambda0 = lambda0.xor(b)?;
    }
    let mut own = lambda0.not(me).a;
    if me == 2 {
        // u'_3 = 0: no overflow can occur, but λ0 reads 1 there; P3 flips its share.
        for (i, &x) in u.x.iter().enumerate() {
            if x == ring.zero() {
                own.set(i, !own.get(i));
            }
        }
    }
    Ok(share_conv(p, target, &[&own])?.pop().expect("one vector"))
}

/// Replicated planes of values party 2 holds (one message of one bit per bit, to party 0), as
/// [`crate::rep3::input_bits`] does for one plane: `x_1` from the stream of parties 1 and 2,
/// `x_0 = 0`, `x_2 = v ⊕ x_1` sent to party 0.
fn input_planes_from_2(p: &mut Party, values: Option<&[BitVec]>, k: usize, n: usize) -> Result<Vec<Rep3Bits>> {
    match p.id() {
        0 => {
            let got = p.net().recv(2)?;
            let x2 = crate::party::split_bits(2, &got, std::iter::repeat_n(n, k))?;
            Ok(x2.into_iter().map(|b| Rep3Bits { a: BitVec::zeros(n), b }).collect())
        }
        1 => {
            let s = p.prg.with(2).expect("3 parties");
            Ok((0..k).map(|_| Rep3Bits { a: BitVec::random(s, n), b: BitVec::zeros(n) }).collect())
        }
        _ => {
            let v = values.ok_or_else(|| MpcError::InvalidParameter("party 2 must pass its planes".into()))?;
            let s = p.prg.with(1).expect("3 parties");
            let x1: Vec<BitVec> = (0..k).map(|_| BitVec::random(s, n)).collect();
            let mut msg = Vec::new();
            let mut out = Vec::with_capacity(k);
            for (v, x1) in v.iter().zip(x1) {
                let x2 = v.xor(&x1)?;
                x2.append_bytes(&mut msg);
                out.push(Rep3Bits { a: x2, b: x1 });
            }
            p.net().send(0, msg)?;
            Ok(out)
        }
    }
}

/// ShiftR (Alg. 12): `u >> shift` for a public `shift` in `0..n`. The two-party sharing `u'`
/// shifted share by share loses the carry out of the low `shift` bits (the overflow of
/// `u' << (n - shift)`) and gains `2^(n - shift)` times the top carry (the overflow of `u'`);
/// both overflows are found in one [`overflow`] call. Rounds: `ceil(log2 n) + 4`.
pub fn shift_r<R: Pow2>(p: &mut Party, u: &Add3<R>, shift: u32) -> Result<Add3<R>> {
    let ring = u.ring();
    let k = width(ring)? as u32;
    if shift >= k {
        return Err(MpcError::InvalidParameter(format!("a right shift by {shift} in Z_2^{k}")));
    }
    if shift == 0 {
        return Ok(u.clone());
    }
    let n = u.len();
    let u2 = reshare_to_two(p, u)?;
    let s = Add3::new(ring.clone(), u2.x.iter().map(|&a| ring.shl(a, k - shift)).collect());
    let lambda = overflow(p, &Add3::concat(&[&u2, &s])?, ring)?;
    let top = ring.shl(ring.one(), k - shift);
    let x = (0..n)
        .map(|i| {
            let v = ring.shr(u2.x[i], shift);
            ring.add(ring.sub(v, ring.mul(top, lambda.x[i])), lambda.x[n + i])
        })
        .collect();
    Ok(Add3::new(ring.clone(), x))
}

/// `[x < y]` as the sign bit of `x - y`, `(x - y) >> (n - 1)` by [`shift_r`] (the paper's
/// comparison, appendix A): exact when `x - y` does not wrap past half the ring.
pub fn lt<R: Pow2>(p: &mut Party, x: &Add3<R>, y: &Add3<R>) -> Result<Add3<R>> {
    let k = width(x.ring())? as u32;
    shift_r(p, &x.sub(y)?, k - 1)
}
