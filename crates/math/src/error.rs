//! Errors of the math layer. They name what was wrong, never a value (a value may be a secret).

use crate::Modulus;

/// A typed error from element or vector construction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MathError {
    /// Two vectors that must have the same length do not.
    #[error("length mismatch: {left} vs {right}")]
    LengthMismatch {
        /// Length of the left operand.
        left: usize,
        /// Length of the right operand.
        right: usize,
    },
    /// An input value is not a canonical element of the ring (the value itself is not reported).
    #[error("value at index {index} is outside {modulus}")]
    OutOfRange {
        /// Position of the offending value.
        index: usize,
        /// The ring it had to belong to.
        modulus: Modulus,
    },
    /// A modulus that this type cannot represent (too small, too large, not prime, ...).
    #[error("invalid modulus: {reason}")]
    InvalidModulus {
        /// Why it was refused.
        reason: String,
    },
    /// A byte string does not decode to whole elements.
    #[error("cannot decode {bytes} bytes as elements of {elem_bytes} bytes each")]
    BadEncoding {
        /// Length of the byte string.
        bytes: usize,
        /// Width of one element on the wire.
        elem_bytes: usize,
    },
}
