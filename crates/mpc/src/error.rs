//! The typed error of all protocols. Messages name what was wrong, never a share or a value.

use argus_math::{MathError, Modulus};
use argus_net::{NetError, PartyId};

/// Why a protocol call failed.
#[derive(Debug, thiserror::Error)]
pub enum MpcError {
    /// The network failed (peer closed, timeout, TLS, ...).
    #[error(transparent)]
    Net(#[from] NetError),
    /// An oblivious transfer failed (a bad base-OT point, a malformed extension message).
    #[error(transparent)]
    Ot(#[from] argus_ot::OtError),
    /// Bad arithmetic input (value out of range, bad encoding, ...).
    #[error(transparent)]
    Math(#[from] MathError),
    /// Two share vectors that must have equal lengths do not.
    #[error("length mismatch: {left} vs {right}")]
    LengthMismatch {
        /// Left operand length.
        left: usize,
        /// Right operand length.
        right: usize,
    },
    /// Shares over different rings were combined.
    #[error("shares over different rings combined: {left} and {right}")]
    RingMismatch {
        /// Ring of the left operand.
        left: Modulus,
        /// Ring of the right operand.
        right: Modulus,
    },
    /// The scheme needs a different number of parties than the network has.
    #[error("{scheme} needs {expected} parties, the session has {got}")]
    WrongPartyCount {
        /// The scheme.
        scheme: &'static str,
        /// Parties it needs.
        expected: usize,
        /// Parties the network has.
        got: usize,
    },
    /// A parameter outside what the protocol supports (e.g. a bound of Lemma 1/2 violated).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A party deviated from the protocol and was caught (a failed MAC check, a garbled
    /// label off its wire): the session ends, nothing more is revealed.
    #[error("aborted: {0}")]
    Abort(String),
    /// A peer sent a message of the wrong shape.
    #[error("malformed message from party {peer}: {reason}")]
    Malformed {
        /// Sender.
        peer: PartyId,
        /// What was wrong.
        reason: String,
    },
}

/// Result alias.
pub type Result<T> = std::result::Result<T, MpcError>;
