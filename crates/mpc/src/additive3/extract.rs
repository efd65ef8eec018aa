//! BitExtr (Alg. 6) and Equal (Alg. 7).

use argus_math::BitVec;

use super::bits::{bit_conj, pair_to_rep3, share_conv};
use super::{planes, width, Add3, Pow2};
use crate::error::Result;
use crate::party::Party;
use crate::rep3::{add_bits, Adder, Plane, Rep3Bits};

/// BitExtr (Alg. 6): the bit planes (LSB first) of the shared values.
///
/// P1 writes `u = v + r` with `r` its own random value: it keeps `r_2` and `\bar q_2` in the
/// stream it shares with P2 and sends `r_3 = u_1 - r - r_2` and `\bar q_3 = \bar r ⊕ \bar q_2` to
/// P3; P2 and P3 swap `v_i = u_i + r_i` and both know `v`. Then `\bar r` is a replicated sharing
/// at no cost (P1 holds `(q_2, q_3)`, P2 `(0, q_2)`, P3 `(q_3, 0)`), so is the public `v` (the
/// component P2 and P3 hold), and CarryBits is the engine's carry look-ahead (Kogge–Stone) adder
/// on them. Rounds: 2 + the adder's `1 + ceil(log2(n - 1))`.
pub fn bit_extr<R: Pow2>(p: &mut Party, u: &Add3<R>) -> Result<Vec<Rep3Bits>> {
    let ring = u.ring();
    let k = width(ring)?;
    let n = u.len();
    let (v_planes, q): (Vec<Rep3Bits>, Vec<Rep3Bits>) = match p.id() {
        0 => {
            let r = ring.sample_vec(p.prg.own(), n);
            let s = p.prg.with(1).expect("3 parties");
            let r2 = ring.sample_vec(s, n);
            let q2: Vec<BitVec> = (0..k).map(|_| BitVec::random(s, n)).collect();
            let r3: Vec<R::El> = (0..n).map(|i| ring.sub(ring.sub(u.x[i], r[i]), r2[i])).collect();
            let q3: Vec<BitVec> =
                planes(ring, &r, k).iter().zip(&q2).map(|(a, b)| a.xor(b)).collect::<std::result::Result<_, _>>()?;
            let mut msg = Vec::new();
            ring.wire_encode(&r3, &mut msg);
            for plane in &q3 {
                plane.append_bytes(&mut msg);
            }
            p.net().send(2, msg)?;
            let q = q2.into_iter().zip(q3).map(|(a, b)| Rep3Bits { a, b }).collect();
            (vec![Rep3Bits::zeros(n); k], q)
        }
        1 => {
            let s = p.prg.with(0).expect("3 parties");
            let r2 = ring.sample_vec(s, n);
            let q2: Vec<BitVec> = (0..k).map(|_| BitVec::random(s, n)).collect();
            let v1: Vec<R::El> = (0..n).map(|i| ring.add(u.x[i], r2[i])).collect();
            p.send_elems(ring, 2, &v1)?;
            let v2 = p.recv_elems(ring, 2, n)?;
            let v: Vec<R::El> = (0..n).map(|i| ring.add(v1[i], v2[i])).collect();
            let vp = planes(ring, &v, k).into_iter().map(|a| Rep3Bits { a, b: BitVec::zeros(n) }).collect();
            (vp, q2.into_iter().map(|b| Rep3Bits { a: BitVec::zeros(n), b }).collect())
        }
        _ => {
            let bytes = p.net().recv(0)?;
            let split = ring.wire_len(n);
            let r3 = crate::party::decode_exact(ring, 0, bytes.get(..split).unwrap_or(&bytes), n)?;
            let q3 = crate::party::split_bits(0, bytes.get(split..).unwrap_or(&[]), std::iter::repeat_n(n, k))?;
            let v2: Vec<R::El> = (0..n).map(|i| ring.add(u.x[i], r3[i])).collect();
            p.send_elems(ring, 1, &v2)?;
            let v1 = p.recv_elems(ring, 1, n)?;
            let v: Vec<R::El> = (0..n).map(|i| ring.add(v1[i], v2[i])).collect();
            let vp = planes(ring, &v, k).into_iter().map(|b| Rep3Bits { a: BitVec::zeros(n), b }).collect();
            (vp, q3.into_iter().map(|a| Rep3Bits { a, b: BitVec::zeros(n) }).collect())
        }
    };
    let x: Vec<Plane> = v_planes.into_iter().map(Some).collect();
    let y: Vec<Plane> = q.into_iter().map(Some).collect();
    let outputs: Vec<usize> = (0..k).collect();
    let bits = add_bits(p, &x, &y, &outputs, Adder::LogDepth)?;
    Ok(bits.into_iter().map(|b| b.unwrap_or_else(|| Rep3Bits::zeros(n))).collect())
}

/// Equal (Alg. 7): `[u = v]` as a sharing of 0 or 1 in the ring.
///
/// P1 shares its `u_1 - v_1` between P2 and P3 (`r_2` from their common stream, `r_3` sent), so
/// that `u = v` iff `e_2 = -e_3` bitwise; the XOR of `\bar e_2` and `\bar{-e_3}`, negated, is made
/// replicated by one swap between P2 and P3 (`pair_to_rep3`), BitConj takes the AND of its `n`
/// planes and ShareConv brings the bit to the ring. Rounds: `ceil(log2 n) + 3`.
pub fn equal<R: Pow2>(p: &mut Party, u: &Add3<R>, v: &Add3<R>) -> Result<Add3<R>> {
    let d = u.sub(v)?;
    let ring = d.ring();
    let k = width(ring)?;
    let n = d.len();
    let mine = match p.id() {
        0 => {
            let r2 = ring.sample_vec(p.prg.with(1).expect("3 parties"), n);
            let r3: Vec<R::El> = (0..n).map(|i| ring.sub(d.x[i], r2[i])).collect();
            p.send_elems(ring, 2, &r3)?;
            None
        }
        1 => {
            let r2 = ring.sample_vec(p.prg.with(0).expect("3 parties"), n);
            let e2: Vec<R::El> = (0..n).map(|i| ring.add(d.x[i], r2[i])).collect();
            Some(planes(ring, &e2, k))
        }
        _ => {
            let r3 = p.recv_elems(ring, 0, n)?;
            let minus_e3: Vec<R::El> = (0..n).map(|i| ring.neg(ring.add(d.x[i], r3[i]))).collect();
            Some(planes(ring, &minus_e3, k))
        }
    };
    let diff = pair_to_rep3(p, mine.as_deref(), k, n)?;
    let me = p.id();
    let same: Vec<Rep3Bits> = diff.iter().map(|b| b.not(me)).collect();
    let eq = bit_conj(p, &same)?;
    Ok(share_conv(p, ring, &[&eq.a])?.pop().expect("one vector"))
}
