//! 3-party OT and bit injection (paper 000 Alg. 16, 17; based on ABY3).

use argus_math::{BitVec, Ring};
use argus_net::PartyId;

use super::{Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Bit `i` without the bounds assertion of `BitVec::get` (callers iterate below the length).
#[inline(always)]
fn bit(v: &BitVec, i: usize) -> bool {
    (v.words()[i / 64] >> (i % 64)) & 1 == 1
}

/// Roles of a 3-party OT: sender `s`, receiver `s + 1`, helper `s + 2`. Sender and helper share
/// the seed `s_{s+2}` (the sender's `prev` stream, the helper's `next` stream).
fn role(p: &Party, sender: PartyId) -> usize {
    (p.id() + 3 - sender) % 3
}

/// The OT sender's two messages per choice, `(m0, m1)`.
pub type OtMessages<'a, E> = (&'a [E], &'a [E]);

/// 3-party OT (Alg. 16): the sender inputs `(m0, m1)`, the receiver and helper both know the
/// choice bits `c`; the receiver learns `m_c` and nothing else, the others learn nothing.
/// Masks `w_0, w_1` come from the seed of sender and helper, so the sender sends two elements and
/// the helper one, all to the receiver, in one round. Returns `Some(m_c)` at the receiver.
pub fn three_party_ot<R: Ring>(
    p: &mut Party,
    ring: &R,
    sender: PartyId,
    msgs: Option<OtMessages<'_, R::El>>,
    choice: Option<&BitVec>,
    n: usize,
) -> Result<Option<Vec<R::El>>> {
    match role(p, sender) {
        0 => {
            let (m0, m1) = msgs.ok_or_else(|| MpcError::InvalidParameter("the OT sender needs messages".into()))?;
            super::check_len(m0.len(), n)?;
            super::check_len(m1.len(), n)?;
            let w0 = ring.sample_vec(p.prg.prev(), n);
            let w1 = ring.sample_vec(p.prg.prev(), n);
            let mut k: Vec<R::El> = m0.iter().zip(&w0).map(|(&m, &w)| ring.add(m, w)).collect();
            k.extend(m1.iter().zip(&w1).map(|(&m, &w)| ring.add(m, w)));
            p.send_elems(ring, (sender + 1) % 3, &k)?;
            Ok(None)
        }
        2 => {
            let c = choice.ok_or_else(|| MpcError::InvalidParameter("the OT helper needs the choice bits".into()))?;
            super::check_len(c.len(), n)?;
            let w0 = ring.sample_vec(p.prg.next(), n);
            let w1 = ring.sample_vec(p.prg.next(), n);
            let wc: Vec<R::El> = (0..n).map(|i| if bit(c, i) { w1[i] } else { w0[i] }).collect();
            p.send_elems(ring, (sender + 1) % 3, &wc)?;
            Ok(None)
        }
        _ => {
            let c = choice.ok_or_else(|| MpcError::InvalidParameter("the OT receiver needs the choice bits".into()))?;
            super::check_len(c.len(), n)?;
            let k = p.recv_elems(ring, sender, 2 * n)?;
            let wc = p.recv_elems(ring, (sender + 2) % 3, n)?;
            Ok(Some((0..n).map(|i| ring.sub(k[if bit(c, i) { n + i } else { i }], wc[i])).collect()))
        }
    }
}

/// Bit injection (Alg. 17): shared bits `[x]_2` to shares `[x]` over `ring`.
pub fn bit_inject<R: Ring>(p: &mut Party, x: &Rep3Bits, ring: &R) -> Result<Rep3<R>> {
    Ok(bit_inject_many(p, &[(x, ring.clone())])?.pop().expect("one input"))
}

/// Several bit injections, each into its own ring of the same type, in the same two rounds.
///
/// With `x = b_0 ^ b_1 ^ b_2`: party 0 (sender, knows `b_0, b_2`) offers `m_j = (j ^ b_0 ^ b_2) -
/// r_0 - r_2` where `r_0` is from seed `s_0` (parties 0, 1) and `r_2` from seed `s_2` (parties 2, 0);
/// party 1 (receiver) and party 2 (helper) both know the choice `b_1`, so party 1 learns
/// `x_1 = x - r_0 - r_2` through the 3-party OT and forwards it to party 2. The result is the
/// replicated sharing `(r_0, x_1, r_2)`. Sends per bit: party 0 two elements, party 2 one
/// (round 1), party 1 one (round 2).
pub fn bit_inject_many<R: Ring>(p: &mut Party, xs: &[(&Rep3Bits, R)]) -> Result<Vec<Rep3<R>>> {
    let me = p.id();
    // Random components, drawn in the same order by both holders of each seed.
    let mut r0 = Vec::new(); // s_0: party 0 `next`, party 1 `prev`
    let mut r2 = Vec::new(); // s_2: party 2 `next`, party 0 `prev`
    for (x, ring) in xs {
        let n = x.len();
        r0.push(match me {
            0 => ring.sample_vec(p.prg.next(), n),
            1 => ring.sample_vec(p.prg.prev(), n),
            _ => Vec::new(),
        });
        r2.push(match me {
            0 => ring.sample_vec(p.prg.prev(), n),
            2 => ring.sample_vec(p.prg.next(), n),
            _ => Vec::new(),
        });
    }
    let mut out = Vec::with_capacity(xs.len());
    for (idx, (x, ring)) in xs.iter().enumerate() {
        let n = x.len();
        let x1 = match me {
            0 => {
                // Party 0 holds (b_0, b_2).
                let known = x.a.xor(&x.b)?;
                let (one, zero) = (ring.one(), ring.zero());
                let base = |i: usize| ring.neg(ring.add(r0[idx][i], r2[idx][i]));
                let m0: Vec<R::El> =
                    (0..n).map(|i| ring.add(base(i), if bit(&known, i) { one } else { zero })).collect();
                let m1: Vec<R::El> =
                    (0..n).map(|i| ring.add(base(i), if bit(&known, i) { zero } else { one })).collect();
                three_party_ot(p, ring, 0, Some((&m0, &m1)), None, n)?;
                None
            }
            1 => three_party_ot(p, ring, 0, None, Some(&x.a), n)?, // party 1's own component is b_1
            _ => {
                three_party_ot(p, ring, 0, None, Some(&x.b), n)?; // party 2 holds b_1 as `b`
                None
            }
        };
        out.push(x1);
    }
    // Round 2: party 1 forwards x_1 to party 2.
    let mut shares = Vec::with_capacity(xs.len());
    if me == 1 {
        let mut all = Vec::new();
        for ((_, ring), x1) in xs.iter().zip(&out) {
            ring.wire_encode(x1.as_ref().expect("receiver output"), &mut all);
        }
        p.net().send(2, all)?;
    }
    let from1 = if me == 2 { Some(p.net().recv(1)?) } else { None };
    let mut at = 0;
    for (idx, ((x, ring), x1)) in xs.iter().zip(out).enumerate() {
        let n = x.len();
        let share = match me {
            0 => Rep3::from_parts(ring.clone(), std::mem::take(&mut r0[idx]), std::mem::take(&mut r2[idx]))?,
            1 => Rep3::from_parts(ring.clone(), x1.expect("receiver output"), std::mem::take(&mut r0[idx]))?,
            _ => {
                let bytes = from1.as_ref().expect("received");
                let w = ring.wire_len(n);
                let chunk = bytes
                    .get(at..at + w)
                    .ok_or_else(|| MpcError::Malformed { peer: 1, reason: "short bit-injection message".into() })?;
                at += w;
                let x1 = crate::party::decode_exact(ring, 1, chunk, n)?;
                Rep3::from_parts(ring.clone(), std::mem::take(&mut r2[idx]), x1)?
            }
        };
        shares.push(share);
    }
    Ok(shares)
}
