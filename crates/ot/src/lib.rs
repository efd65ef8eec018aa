//! Oblivious transfer for the engine's dishonest-majority families (GMW, tensor triples, SPDZ-style
//! preprocessing). At the bottom is the base OT every extension starts from:
//! [`base`], Chou–Orlandi's "simplest OT" on the Ristretto group, batched, semi-honest. On it,
//! [`iknp`] extends κ base OTs to any number of random, correlated or chosen-string OTs, and
//! [`derand`] turns random OTs precomputed before the inputs are known into chosen ones;
//! [`vole`] makes shares of vector products over a ring from them (Gilboa).
//!
//! Messages travel over the engine's one transport ([`argus_net::Network`]): in memory or over
//! TCP with mutual TLS.

pub mod base;
pub mod derand;
pub mod iknp;
pub mod silent;
#[cfg(test)]
mod testing;
pub mod vole;

use argus_net::{NetError, PartyId};

/// A 128-bit OT message (a key for a PRG or a hash, or a string OT's pad).
pub type Block = u128;

/// Why an OT failed.
#[derive(Debug, thiserror::Error)]
pub enum OtError {
    /// The transport failed (the peer went away, a timeout).
    #[error(transparent)]
    Net(#[from] NetError),
    /// The peer sent bytes that are not a valid group element.
    #[error("party {peer} sent an invalid group element (point {index})")]
    BadPoint { peer: PartyId, index: usize },
    /// The peer's message has the wrong length.
    #[error("party {peer} sent {got} bytes, expected {want}")]
    Malformed { peer: PartyId, got: usize, want: usize },
    /// The peer sent a ring element that is not canonical.
    #[error("party {peer} sent an invalid ring element: {reason}")]
    BadElement { peer: PartyId, reason: String },
    /// A session with itself, or with a party that does not exist.
    #[error("no OT with party {peer} from party {me} of {n}")]
    BadPeer { me: PartyId, peer: PartyId, n: usize },
}
