//! Bit-level protocols (paper 001 section 5): BitConj, PrefixOR (Alg. 3), MSNZB (Alg. 4), and
//! ShareConv from Z_2 to Z_2^n (Alg. 5). Bitwise-shared values are replicated bit planes
//! ([`Rep3Bits`], index = bit position, LSB first).

use argus_math::{BitVec, Ring};

use super::Add3;
use crate::error::{MpcError, Result};
use crate::party::Party;
use crate::rep3::{and_many, Rep3Bits};

/// `x ∨ y = x ⊕ y ⊕ (x ∧ y)` for many pairs, one round.
fn or_many(p: &mut Party, pairs: &[(&Rep3Bits, &Rep3Bits)]) -> Result<Vec<Rep3Bits>> {
    let ands = and_many(p, pairs)?;
    ands.into_iter().zip(pairs).map(|(a, (x, y))| a.xor(x).and_then(|a| a.xor(y))).collect()
}

/// BitConj: the conjunction of all planes (per value), by a balanced tree of AND layers:
/// `n - 1` AND gates in `ceil(log2 n)` rounds.
pub fn bit_conj(p: &mut Party, planes: &[Rep3Bits]) -> Result<Rep3Bits> {
    let mut level: Vec<Rep3Bits> = planes.to_vec();
    if level.is_empty() {
        return Err(MpcError::InvalidParameter("the conjunction of no bits".into()));
    }
    while level.len() > 1 {
        let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = level.chunks_exact(2).map(|c| (&c[0], &c[1])).collect();
        let mut next = and_many(p, &pairs)?;
        if level.len() % 2 == 1 {
            next.push(level.pop().expect("odd length"));
        }
        level = next;
    }
    Ok(level.pop().expect("one left"))
}

/// PrefixOR (Alg. 3): plane `j` of the result is the OR of planes `j..n` (from the most
/// significant bit down, so the result reads `0…01…1`). The paper's halving recursion, run level
/// by level with each level's OR gates in one round: `ceil(log2 n)` rounds, at most `n/2` gates
/// per round.
pub fn prefix_or(p: &mut Party, planes: &[Rep3Bits]) -> Result<Vec<Rep3Bits>> {
    let n = planes.len();
    // q[t] is plane n-1-t: the prefix runs over t.
    let mut q: Vec<Rep3Bits> = planes.iter().rev().cloned().collect();
    let mut d = 1;
    while d < n {
        // In each block of 2d positions the upper half takes the OR of the lower half's last.
        let targets: Vec<(usize, usize)> =
            (0..n).filter(|t| t % (2 * d) >= d).map(|t| (t, t - t % (2 * d) + d - 1)).collect();
        let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = targets.iter().map(|&(t, s)| (&q[t], &q[s])).collect();
        let ors = or_many(p, &pairs)?;
        for ((t, _), v) in targets.into_iter().zip(ors) {
            q[t] = v;
        }
        d *= 2;
    }
    q.reverse();
    Ok(q)
}

/// MSNZB (Alg. 4): the most significant non-zero bit as a one-hot vector of planes (all zero for
/// a zero value): PrefixOR, then `s_j = u'_j ⊕ u'_{j+1}` locally.
pub fn msnzb(p: &mut Party, planes: &[Rep3Bits]) -> Result<Vec<Rep3Bits>> {
    let pre = prefix_or(p, planes)?;
    let n = pre.len();
    (0..n).map(|j| if j + 1 < n { Ok(pre[j].xor(&pre[j + 1])?) } else { Ok(pre[j].clone()) }).collect()
}

/// ShareConv (Alg. 5): additive bit shares (each party's XOR component `u_i` of every bit, one
/// vector per input) to additive shares of the same bits in `ring`.
///
/// The paper's P1 generates `b`, `m_12`, `b_12` and sends them; here `b_12`, `m_12` come from the
/// stream P1 shares with P2 and `b_13` from the one it shares with P3 (so `b = b_12 ⊕ b_13`), and
/// P2 and P3 can send `s_23`, `s_32` at once. One round instead of two, and `n + 2` bits per
/// converted bit (P1 sends `m_13`, P2 and P3 one bit each) instead of `5n + 4`; P2's view
/// `(m_12, b_12, b_13 ⊕ u_3)` and P3's `(b_13, m − m_12, b_12 ⊕ u_2)` are uniform as before.
pub fn share_conv<R: Ring>(p: &mut Party, ring: &R, bits: &[&BitVec]) -> Result<Vec<Add3<R>>> {
    let lens: Vec<usize> = bits.iter().map(|b| b.len()).collect();
    let u = BitVec::concat(bits);
    let n = u.len();
    let conv = match p.id() {
        0 => {
            let b12 = BitVec::random(p.prg.with(1).expect("3 parties"), n);
            let m12 = ring.sample_vec(p.prg.with(1).expect("3 parties"), n);
            let b13 = BitVec::random(p.prg.with(2).expect("3 parties"), n);
            let m = u.xor(&b12)?.xor(&b13)?;
            let m13: Vec<R::El> = (0..n).map(|i| ring.sub(ring.from_u128(u128::from(m.get(i))), m12[i])).collect();
            p.send_elems(ring, 2, &m13)?;
            vec![ring.zero(); n]
        }
        1 => {
            let b12 = BitVec::random(p.prg.with(0).expect("3 parties"), n);
            let m12 = ring.sample_vec(p.prg.with(0).expect("3 parties"), n);
            let s23 = b12.xor(&u)?;
            p.net().send(2, s23.to_bytes())?;
            let s = s23.xor(&recv_bits(p, 2, n)?)?;
            (0..n).map(|i| if s.get(i) { ring.sub(ring.one(), m12[i]) } else { m12[i] }).collect()
        }
        _ => {
            let b13 = BitVec::random(p.prg.with(0).expect("3 parties"), n);
            let s32 = b13.xor(&u)?;
            p.net().send(1, s32.to_bytes())?;
            let m13 = p.recv_elems(ring, 0, n)?;
            let s = s32.xor(&recv_bits(p, 1, n)?)?;
            (0..n).map(|i| if s.get(i) { ring.neg(m13[i]) } else { m13[i] }).collect()
        }
    };
    let mut at = 0;
    Ok(lens
        .into_iter()
        .map(|len| {
            at += len;
            Add3::new(ring.clone(), conv[at - len..at].to_vec())
        })
        .collect())
}

/// Receives `n` bits from `peer`.
pub(crate) fn recv_bits(p: &Party, peer: usize, n: usize) -> Result<BitVec> {
    let bytes = p.net().recv(peer)?;
    BitVec::from_bytes(&bytes, n).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })
}

/// Replicated bit planes of `a_1 ⊕ a_2`, where party 1 holds the planes `a_1` and party 2 the
/// planes `a_2` (party 0 passes the plane count and length): component `x_0 = ρ` (stream of
/// parties 0, 1), `x_2 = σ` (stream of parties 0, 2) and `x_1 = a_1 ⊕ a_2 ⊕ ρ ⊕ σ`, which parties
/// 1 and 2 learn by swapping `a_1 ⊕ ρ` and `a_2 ⊕ σ`. One round, one bit per bit from each of
/// parties 1 and 2.
pub(crate) fn pair_to_rep3(p: &mut Party, mine: Option<&[BitVec]>, planes: usize, n: usize) -> Result<Vec<Rep3Bits>> {
    let draw = |p: &mut Party, peer: usize| -> Vec<BitVec> {
        let s = p.prg.with(peer).expect("3 parties");
        (0..planes).map(|_| BitVec::random(s, n)).collect()
    };
    let me = p.id();
    if me == 0 {
        let rho = draw(p, 1);
        let sigma = draw(p, 2);
        return Ok(rho.into_iter().zip(sigma).map(|(a, b)| Rep3Bits { a, b }).collect());
    }
    let mine = mine.ok_or_else(|| MpcError::InvalidParameter("parties 1 and 2 must pass their planes".into()))?;
    if mine.len() != planes || mine.iter().any(|m| m.len() != n) {
        return Err(MpcError::InvalidParameter(format!("expected {planes} planes of {n} bits")));
    }
    let mask = draw(p, 0);
    let other = 3 - me;
    let masked: Vec<BitVec> = mine.iter().zip(&mask).map(|(a, m)| a.xor(m)).collect::<std::result::Result<_, _>>()?;
    let mut out = Vec::with_capacity(planes * n.div_ceil(8));
    for m in &masked {
        m.append_bytes(&mut out);
    }
    p.net().send(other, out)?;
    let got = p.net().recv(other)?;
    let theirs = crate::party::split_bits(other, &got, std::iter::repeat_n(n, planes))?;
    masked
        .into_iter()
        .zip(theirs)
        .zip(mask)
        .map(|((m, t), mask)| {
            let x1 = m.xor(&t)?;
            // party 1 holds (x_1, x_0 = ρ), party 2 holds (x_2 = σ, x_1)
            Ok(if me == 1 { Rep3Bits { a: x1, b: mask } } else { Rep3Bits { a: mask, b: x1 } })
        })
        .collect()
}
