//! What each operation of [`super::Additive3`] sends and receives, party by party, for the cost
//! counter ([`crate::scheme::Cost`]). Each function mirrors its protocol's messages; the tests
//! hold them equal to what the parties count on the network.

use super::DivParams;
use crate::rep3::KoggeStonePlan;
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

/// Bytes of `n` elements of Z_2^bits.
fn elems(n: usize, bits: usize) -> u64 {
    (n * bits).div_ceil(8) as u64
}

fn zero() -> OpCost {
    OpCost::zero(3)
}

/// One layer of `gates` AND gates on `n`-bit planes: a pass of one bit per gate.
fn and_layer(gates: usize, n: usize) -> OpCost {
    let mut c = zero();
    if gates > 0 {
        c.pass(gates as u64 * bits_bytes(n));
    }
    c
}

/// [`super::reshare_to_two`] of `n` elements of Z_2^bits.
pub(crate) fn reshare_to_two(n: usize, bits: usize) -> OpCost {
    let mut c = zero();
    c.send(0, elems(n, bits)).recv(2);
    c
}

/// [`super::share_conv`] of `n` bits into Z_2^target.
pub(crate) fn share_conv(n: usize, target: usize) -> OpCost {
    let mut c = zero();
    c.send(0, elems(n, target));
    c.send(1, bits_bytes(n)).recv(1);
    c.send(2, bits_bytes(n)).recv(2).recv(2);
    c
}

/// [`super::prefix_or`] (and so [`super::msnzb`]) of `k` planes of `n` bits.
pub(crate) fn prefix_or(k: usize, n: usize) -> OpCost {
    let mut c = zero();
    let mut d = 1;
    while d < k {
        c.then(&and_layer((0..k).filter(|t| t % (2 * d) >= d).count(), n));
        d *= 2;
    }
    c
}

/// [`super::bit_conj`] of `k` planes of `n` bits.
pub(crate) fn bit_conj(k: usize, n: usize) -> OpCost {
    let mut c = zero();
    let mut len = k;
    while len > 1 {
        c.then(&and_layer(len / 2, n));
        len = len.div_ceil(2);
    }
    c
}

/// P3's planes input and the swap of [`super::bits::pair_to_rep3`], `k` planes of `n` bits.
fn input_and_swap(k: usize, n: usize) -> OpCost {
    let planes = k as u64 * bits_bytes(n);
    let mut c = zero();
    c.recv(0);
    c.send(2, planes);
    c.send(1, planes).recv(1);
    c.send(2, planes).recv(2);
    c
}

/// [`super::overflow`] of `n` values of Z_2^width into Z_2^target.
pub(crate) fn overflow(n: usize, width: usize, target: usize) -> OpCost {
    let mut c = input_and_swap(width, n);
    c.then(&prefix_or(width, n)).then(&and_layer(width, n)).then(&share_conv(n, target));
    c
}

/// [`super::shift_r`] of `n` values of Z_2^width.
pub(crate) fn shift_r(n: usize, width: usize) -> OpCost {
    let mut c = reshare_to_two(n, width);
    c.then(&overflow(2 * n, width, width));
    c
}

/// [`super::equal`] of `n` values of Z_2^width.
pub(crate) fn equal(n: usize, width: usize) -> OpCost {
    let planes = width as u64 * bits_bytes(n);
    let mut c = zero();
    c.send(0, elems(n, width)).recv(2);
    c.send(1, planes).recv(1);
    c.send(2, planes).recv(2);
    c.then(&bit_conj(width, n)).then(&share_conv(n, width));
    c
}

/// [`super::bit_extr`] of `n` values of Z_2^width.
pub(crate) fn bit_extr(n: usize, width: usize) -> OpCost {
    let mut c = zero();
    c.send(0, elems(n, width) + width as u64 * bits_bytes(n));
    c.send(1, elems(n, width)).recv(1);
    c.recv(2).send(2, elems(n, width)).recv(2);
    let plan = KoggeStonePlan::new(width - 1, &(0..width).collect::<Vec<_>>());
    c.then(&and_layer(plan.need_g.iter().filter(|&&g| g).count(), n));
    for (d, g, p) in &plan.levels {
        let gates = (*d..g.len()).filter(|&j| g[j]).count() + (*d..p.len()).filter(|&j| p[j]).count();
        c.then(&and_layer(gates, n));
    }
    c
}

/// A product pass of `parts` vectors of `n` elements of Z_2^bits from every party (each
/// vector packed on its own).
fn products(parts: usize, n: usize, bits: usize) -> OpCost {
    let mut c = zero();
    c.pass(parts as u64 * elems(n, bits));
    c
}

/// [`super::div_public`] of `n` values of Z_2^width.
pub(crate) fn div_public(n: usize, width: usize) -> OpCost {
    let mut c = reshare_to_two(n, width);
    c.then(&overflow(3 * n, 2 * width, width)).then(&products(2, n, width));
    c
}

/// [`super::div`] of `n` values of Z_2^width.
pub(crate) fn div(n: usize, width: usize) -> OpCost {
    let prm = DivParams::for_bits(width).expect("division parameters");
    let exp_bits = usize::BITS - (width.max(2) - 1).leading_zeros();
    let w = 1usize << exp_bits.div_ceil(2);
    let mut c = bit_extr(n, width);
    c.then(&prefix_or(width, n))
        .then(&share_conv((w + width.div_ceil(w)) * n, width))
        .then(&products(2, n, width))
        .then(&products(2, n, width))
        .then(&reshare_to_two(3 * n, width))
        .then(&overflow(3 * n, width, prm.m))
        .then(&products(2, n, prm.m))
        .then(&products(2, n, prm.m));
    for step in 1..=prm.k {
        c.then(&products(2, n, prm.m - step * prm.f));
    }
    c.then(&reshare_to_two(n, width + prm.f)).then(&overflow(n, prm.f, width));
    c
}

impl CostModel for Additive3Costs {
    fn parties(&self) -> usize {
        3
    }
    fn cost(&self, op: Op, n: usize) -> OpCost {
        let k = self.bits as usize;
        match op {
            Op::Input { .. } | Op::Reshare => zero(),
            Op::Reveal => {
                let mut c = zero();
                for i in 0..3 {
                    c.send(i, 2 * elems(n, k)).recv(i).recv(i);
                }
                c
            }
            Op::RevealTo { to } => {
                let mut c = zero();
                for i in (0..3).filter(|&i| i != to) {
                    c.send(i, elems(n, k));
                }
                c.recv(to).recv(to);
                c
            }
            // both operands replicated: one element of each from every party
            Op::Mul => products(2, n, k),
            Op::Dot { left, right } => {
                let mut c = zero();
                c.pass(elems(left, k) + elems(right, k));
                c
            }
            Op::Lt => shift_r(n, k),
            Op::Eq => equal(n, k),
            Op::DivPublic => div_public(n, k),
            Op::Div => div(n, k),
        }
    }
}
