//! Argus MPC protocols. One module per sharing scheme, each with the same shape: a share vector
//! type (struct of arrays), sharing by a party or a client, reveal, local operations, interactive
//! operations on whole batches in a fixed number of rounds, and conversions.
//!
//! * [`scheme`]: the seam every scheme plugs into — the [`scheme::Scheme`] trait, its plaintext
//!   twin [`scheme::Plain`] and its cost counter [`scheme::Cost`]; [`Party`] is a session of p
//!   parties, [`local`] runs p parties in one process.
//! * [`additive3`]: Sharemind's 3-party additive sharing over Z_2^n (paper 001).
//! * [`rep3`]: replicated 3-party sharing (ABY3, semi-honest) over Z_2^k, Z_t and GF(2).
//! * [`shamir`]: Shamir sharing with 3 parties and threshold 1 over prime fields.
//! * [`inq`]: inequality tests and ReLU over a prime field (paper 002), on an arithmetic black
//!   box each setting implements.
//! * [`garble`]: Yao's garbled circuits (free-XOR, half-gates) for two parties, the boolean
//!   engine of [`inq`]'s FT setting.
//! * [`galois`]: Shamir sharing over the Galois ring GR(2^16, 4), dot products at one 16-bit
//!   multiply per value.
//! * [`recovery`]: a party that lost its shares gets them back from the other two;
//!   [`audit`]: the three check that their shares are consistent, revealing nothing.
#![deny(missing_docs)]

pub mod additive2;
pub mod additive3;
pub mod audit;
mod error;
pub mod galois;
pub mod garble;
pub mod gmw;
pub mod inq;
pub mod local;
mod party;
pub mod recovery;
pub mod rep3;
pub mod scheme;
pub mod shamir;
#[cfg(test)]
mod testing;

pub use error::MpcError;
pub use party::Party;
