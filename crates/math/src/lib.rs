//! Argus math layer: element types for rings Z_2^k, Z_t and prime fields, packed bit vectors,
//! and the hot vector kernels with runtime CPU dispatch. Pure arithmetic, no I/O.
//!
//! * [`Ring`] is implemented by [`Z2`] (Z_2^16, Z_2^32, Z_2^64, Z_2^128 as wrapping machine words),
//!   [`Zt`] (any modulus below 2^128, e.g. Z_{p·2^m}), [`Zt64`] (the same up to 2^64 in `u64`), [`F65519`] and [`Fp`] (any prime, e.g. [`P128`]).
//! * [`Z2m`] is Z_2^m for any width m up to 64·L (254 or 554 bits, say) on `[u64; L]` limbs, for
//!   fixed-point protocols whose shares outgrow 128 bits.
//! * [`galois`] is the Galois ring GR(2^16, 4), for Shamir sharing with 16-bit arithmetic.
//! * [`BitVec`] is GF(2)^n packed 64 bits per word, the form boolean shares take.
//! * [`kernels`] holds the SIMD dot products and matrix products.
#![deny(missing_docs)]

mod bitvec;
mod error;
mod field;
pub mod galois;
pub mod kernels;
mod matrix;
mod pow2;
mod ring;
#[cfg(test)]
mod testing;
mod wide;
mod wire;
mod z2m;

pub use bitvec::{get_bits, low_bits, transpose64, words_for, xor_bits, BitVec};
pub use error::MathError;
pub use field::{is_probable_prime, Field, Fp, F65519, P128};
pub use matrix::transpose;
pub use pow2::Pow2;
pub use ring::{Modulus, Ring, Word, Zt, Zt64, Z128, Z16, Z2, Z32, Z64, Z8};
pub use wide::{mul_mod_u128, mul_wide};
pub use z2m::{Limbs, Z2m};
