//! Argus math layer: element types for rings Z_2^k, Z_t and prime fields, packed bit vectors,
//! and the hot vector kernels with runtime CPU dispatch. Pure arithmetic, no I/O.
#![deny(missing_docs)]

pub mod kernels;
