//! Batched biometric identification (paper 004, section 5): a client's `m` queries against a
//! server's `n` references by squared Euclidean distance, then the threshold, between two
//! parties on tensor triples. The paper's three applications ([`App`]), a synthetic data
//! generator ([`data`]), the plaintext twin ([`Dataset::decide`]) and the protocol
//! ([`protocol`]).

pub mod data;
pub mod protocol;

pub use data::{App, Dataset};
