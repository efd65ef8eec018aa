//! GMW with almost-free branching (paper 003, "MOTIF"): p-party boolean circuits (2 ≤ p ≤ 5 in
//! tests, semi-honest, up to p − 1 corruptions) over OT extension, with vector-scalar (VS) gates
//! that let the AND gates of mutually exclusive branches share their OTs.
//!
//! * [`circuit`]: the IR (XOR, INV, AND, VS, INPUT, OUTPUT in topological order), its layers,
//!   and the plaintext twin (Fig. 2's `eval`).
//! * [`bristol`]: Bristol Fashion import, errors with line numbers.
//! * [`builder`]: circuits with IF/ELSE and SWITCH, VS-demultiplexed and merged (Fig. 1), or the
//!   standard GMW form as the baseline.
//! * [`circuits`]: the paper's benchmark circuit (branching log-depth string equality).
//! * [`protocol`]: the evaluation (Figs. 3 and 4) on random OTs made beforehand.

pub mod bristol;
pub mod builder;
pub mod circuit;
pub mod circuits;
mod layer;
pub mod protocol;

pub use builder::{Branching, Builder};
pub use circuit::{Circuit, CircuitError, Counts, Gate, Wire};
pub use protocol::{cost, evaluate, preprocess, Cost, Preprocessed};

#[cfg(test)]
mod tests;
