//! What each operation of [`super::Additive3`] sends, for the cost counter
//! ([`crate::scheme::Cost`]); the tests hold it equal to the bytes and rounds the parties count.

use crate::scheme::{CostModel, Op, OpCost};

/// The costs of the Sharemind scheme over Z_2^bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Additive3Costs {
    /// `n` of the ring Z_2^n.
    pub bits: u32,
}

/// Bytes of `n` packed bits.
fn bits_bytes(n: usize) -> u64 {
    n.div_ceil(8) as u64
}

impl Additive3Costs {
    /// Bytes of `n` ring elements.
    fn elems(&self, n: usize) -> u64 {
        (n * self.bits as usize).div_ceil(8) as u64
    }
    /// Rounds of the prefix OR over `k` planes, and the AND gates it has.
    fn prefix_or(k: usize) -> (u64, usize) {
        let (mut rounds, mut gates, mut d) = (0, 0, 1);
        while d < k {
            rounds += 1;
            gates += (0..k).filter(|t| t % (2 * d) >= d).count();
            d *= 2;
        }
        (rounds, gates)
    }
    /// Rounds and AND gates of the balanced AND tree over `k` planes.
    fn bit_conj(k: usize) -> (u64, usize) {
        let (mut rounds, mut gates, mut len) = (0, 0, k);
        while len > 1 {
            rounds += 1;
            gates += len / 2;
            len = len.div_ceil(2);
        }
        (rounds, gates)
    }
    /// Overflow of `n` values (with the conversion into this ring).
    fn overflow(&self, n: usize) -> OpCost {
        let k = self.bits as usize;
        let (pre_rounds, pre_gates) = Self::prefix_or(k);
        let and = |gates: usize| gates as u64 * bits_bytes(n);
        let planes = k as u64 * bits_bytes(n);
        // swap + P3's input, prefix OR, one AND layer, ShareConv
        let all = and(pre_gates) + and(k);
        OpCost {
            rounds: 1 + pre_rounds + 1 + 1,
            bytes: vec![all + self.elems(n), all + planes + bits_bytes(n), all + 2 * planes + bits_bytes(n)],
        }
    }
}

impl CostModel for Additive3Costs {
    fn parties(&self) -> usize {
        3
    }
    fn bits(&self) -> u32 {
        self.bits
    }
    fn cost(&self, op: Op, n: usize) -> OpCost {
        let k = self.bits as usize;
        match op {
            Op::Input { .. } | Op::Reshare => OpCost { rounds: 0, bytes: vec![0; 3] },
            Op::Reveal => OpCost { rounds: 1, bytes: vec![2 * self.elems(n); 3] },
            Op::RevealTo { to } => {
                OpCost { rounds: 1, bytes: (0..3).map(|i| if i == to { 0 } else { self.elems(n) }).collect() }
            }
            // both operands replicated: one element each
            Op::Mul | Op::Dot { .. } => {
                let inputs = match op {
                    Op::Dot { inputs } => inputs,
                    _ => 2 * n,
                };
                OpCost { rounds: 1, bytes: vec![self.elems(inputs); 3] }
            }
            Op::Lt => {
                // ReshareToTwo, then one Overflow of 2n values; P3 receives r_3 before its first
                // send, so the counter sees no extra round (P1 sends on).
                let mut c = self.overflow(2 * n);
                c.bytes[0] += self.elems(n);
                c
            }
            Op::Eq => {
                let (conj_rounds, conj_gates) = Self::bit_conj(k);
                let and = conj_gates as u64 * bits_bytes(n);
                let planes = k as u64 * bits_bytes(n);
                OpCost {
                    // r_3 and the swap are one counted round (P3 receives, then sends)
                    rounds: 1 + conj_rounds + 1,
                    bytes: vec![
                        self.elems(n) + and + self.elems(n),
                        planes + and + bits_bytes(n),
                        planes + and + bits_bytes(n),
                    ],
                }
            }
            Op::DivPublic | Op::Div => unimplemented!("division costs"),
        }
    }
}
