//! The client of the iris uniqueness service (paper 000 section 6): it shares a template, sends
//! one share to each of the three nodes and combines their answers. A crate of its own, so that a
//! client (the command line's `enroll`, `check`, …, the Python client) links neither the nodes'
//! store (SQLite, PostgreSQL) nor the nodes.
//!
//! * [`client`]: the [`Client`] and its configuration file (`client.toml`, [`ClientFile`]).
//! * [`settings`]: the `[iris]` settings (scheme, layout, matching) the client and the nodes share.
//! * [`wire`]: the client ↔ node messages, their coding and framing, and the client protocol's
//!   version; the nodes speak it from the other side (`argus_node::wire`).
//!
//! The public records the nodes answer with (identity ids, the commit log, the store summary in
//! a node's status) are `argus_records`', re-exported here.

pub mod client;
pub mod settings;
pub mod wire;

/// The scheme registry's dispatch, for the client and the nodes alike (see
/// [`argus_iris::with_scheme`]).
pub use argus_iris::with_scheme;
pub use argus_records::{Commit, IdentityId, Op, Summary};
pub use client::{check_layout, new_request_id, Client, ClientConfig, ClientFile};
pub use settings::{IrisSettings, Scheme};
pub use wire::{Kind, NodeStatus, Outcome};

/// What can go wrong in a client (and in reading the settings or the messages it shares with the
/// nodes).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A bad configuration file or value.
    #[error("configuration: {0}")]
    Config(String),
    /// TLS set-up failed (say, an unreadable certificate).
    #[error("network: {0}")]
    Net(#[from] argus_net::NetError),
    /// A template or request that is not acceptable.
    #[error("invalid input: {0}")]
    Input(String),
    /// A node sent something out of protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// A node refused a request.
    #[error("node {node} refused: {message}")]
    Refused {
        /// Party index.
        node: usize,
        /// Its reason.
        message: String,
    },
    /// A node speaks another client protocol ([`wire::CLIENT_PROTOCOL`]): another release.
    #[error("node {node} runs another release: {message}; the client and the nodes must run releases that speak the same client protocol")]
    OtherRelease {
        /// Party index.
        node: usize,
        /// What the handshake showed.
        message: String,
    },
    /// The three nodes gave different answers.
    #[error("the nodes disagree: {0}")]
    Disagree(String),
    /// I/O with a node.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

impl From<argus_iris::IrisError> for ClientError {
    fn from(e: argus_iris::IrisError) -> Self {
        ClientError::Input(e.to_string())
    }
}
