//! The one error type of the kernels: bad input is reported, never a panic.

/// Why a kernel refused its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// Two vectors that must have the same length do not.
    #[error("length mismatch: {left} != {right}")]
    LengthMismatch {
        /// Length of the first operand (`dst` or `a`).
        left: usize,
        /// Length of the second operand (`src` or `b`).
        right: usize,
    },
    /// A matrix argument does not have the shape the others imply.
    #[error("shape mismatch in {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// Which quantity is wrong, e.g. `"out.len()"`.
        what: &'static str,
        /// The value it should have.
        expected: usize,
        /// The value it has.
        got: usize,
    },
    /// An F_65519 input is not canonical, i.e. not below p = 65519.
    #[error("value {value} at index {index} is not a canonical F_65519 element")]
    NotCanonical {
        /// Position in the first offending argument (arguments are checked in order; for the
        /// scalar of `scalar_mul_f65519` the index is 0).
        index: usize,
        /// The offending value.
        value: u16,
    },
}
