//! Argus MPC protocols. One module per sharing scheme, each with the same shape: a share vector
//! type (struct of arrays), sharing by a party or a client, reveal, local operations, interactive
//! operations on whole batches in a fixed number of rounds, and conversions.
//!
//! * [`rep3`]: replicated 3-party sharing (ABY3, semi-honest) over Z_2^k, Z_t and GF(2).
//! * [`shamir`]: Shamir sharing with 3 parties and threshold 1 over prime fields.
//! * [`galois`]: Shamir sharing over the Galois ring GR(2^16, 4), dot products at one 16-bit
//!   multiply per value.
//! * [`recovery`]: a party that lost its shares gets them back from the other two;
//!   [`audit`]: the three check that their shares are consistent, revealing nothing.
#![deny(missing_docs)]

pub mod audit;
mod error;
pub mod galois;
pub mod local;
mod party;
pub mod recovery;
pub mod rep3;
pub mod shamir;

pub use error::MpcError;
pub use party::Party;
