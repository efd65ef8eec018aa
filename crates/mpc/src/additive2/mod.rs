//! Two-party additive sharing over a ring (paper 004): `x = x_0 + x_1`, party `i` holding `x_i`;
//! semi-honest, dishonest majority (either party may be corrupted). Products cost one tensor
//! triple each, made from OT.
//!
//! * [`vole`]: shares of `y ⊗ x` for the receiver's `y` and the sender's `x` from random OT
//!   (Gilboa; paper 004, Fig. 6 over a ring), the primitive under the triples.
//! * [`triple`]: tensor triples `(u, v, W = u ⊗ v)` (Fig. 5, two products in opposite
//!   directions), trimmed to serve smaller products.
//! * [`owned`]: products of one party's matrix by the other's (a client's queries by a
//!   server's references) with triples whose `U` and `V` each party owns: half the offline
//!   cost and one local product each online; their cross terms from Gilboa's product or from
//!   the silent VOLE ([`argus_ot::silent`], the paper's SOT), whichever sends less.
//! * [`compare`]: `[x < t]` for shared `x` and a public threshold, as XOR-shared bits, with
//!   boolean Beaver triples from random OT (the threshold step of identification).
//! * [`product`]: element-wise products with Beaver triples (the baseline), dot, outer
//!   (Fig. 8) and matrix (Fig. 10) products with tensor triples, one round each;
//!   [`MatrixTriple`]: k tensor triples assembled for one matrix product ahead of time.

pub mod compare;
pub mod owned;
pub mod product;
pub mod triple;
pub mod vole;

pub use compare::{less_than, reveal_bits, BitTriples, SharedBits};
pub use owned::{owned_product, OwnedTriple, Vole};
pub use product::{dot, matmul, matmul_t, mul, outer, MatrixTriple};
pub use triple::{generate, generate_silent, TensorTriple};
pub use vole::Ots;

use argus_math::Ring;
use rand_core::RngCore;

use crate::error::Result;
use crate::party::Party;

/// Splits `x` into two additive shares with randomness from `rng` (a client or a test).
pub fn share<R: Ring, G: RngCore + ?Sized>(ring: &R, rng: &mut G, x: &[R::El]) -> [Vec<R::El>; 2] {
    let r = ring.sample_vec(rng, x.len());
    let other = x.iter().zip(&r).map(|(&x, &r)| ring.sub(x, r)).collect();
    [r, other]
}

/// The other party's shares of the same length: one message each way.
pub(crate) fn exchange<R: Ring>(ring: &R, p: &mut Party, mine: &[R::El]) -> Result<Vec<R::El>> {
    let peer = 1 - p.id();
    p.send_elems(ring, peer, mine)?;
    p.recv_elems(ring, peer, mine.len())
}

/// Opens shared `x` to both parties (one round).
pub fn reveal<R: Ring>(ring: &R, p: &mut Party, x: &[R::El]) -> Result<Vec<R::El>> {
    p.require("two-party additive sharing", 2)?;
    let other = exchange(ring, p, x)?;
    Ok(x.iter().zip(&other).map(|(&a, &b)| ring.add(a, b)).collect())
}

#[cfg(test)]
mod tests;
