//! The iris uniqueness service (paper 000 section 6): a **node** runs one of the three parties;
//! a **client** (`argus_client`, a crate of its own that links no store) shares a template,
//! sends one share to each node and reads the answer.
//!
//! * [`config`]: the node's TOML file (its `[iris]` settings are `argus_client::settings`).
//! * [`wire`]: the nodes' control messages (the client ↔ node frames are `argus_client::wire`).
//! * [`engine`]: one node's state — the scheme, the in-memory database in kernel layout, the store —
//!   and the transitions every node applies identically (check a batch, plan a commit, apply it).
//! * [`core`]: the node's event loop: sessions with the peers (start-up consistency check and
//!   catch-up), batching with propose/confirm, the protocol run, commit, replies.
//! * [`service`]: the client port (TLS with client certificates) and [`run_node`].
//!
//! # Consistency
//! Party 0 leads: it proposes each batch (sequence number and request ids); a follower answers
//! which proposed requests it does not hold, and the leader confirms the batch with those left
//! out. An enrolment's share is durably stored as *pending* before its node confirms; after the
//! protocol reveals the outcome, each node commits the batch (outcomes, new identities, deletions)
//! in one store transaction. A node that crashed before committing finds, at the next session
//! start, that a peer has a later commit; it fetches the public commit log and applies it from its
//! own pending shares. Every session starts with all three nodes comparing count, a digest of the
//! enrolled ids and the last commit; a node that disagrees refuses to serve.

pub mod config;
pub mod core;
pub mod deploy;
pub mod engine;
pub(crate) mod gate;
pub mod import;
pub mod service;
pub mod wire;

pub use argus_client::{with_scheme, Client, ClientConfig, ClientError};
pub use config::{NodeConfig, Scheme};
pub use service::run_node;
pub use wire::{Kind, NodeStatus, Outcome};

/// What can go wrong in a node.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A bad configuration file or value.
    #[error("configuration: {0}")]
    Config(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] argus_store::StoreError),
    /// The party network failed.
    #[error("network: {0}")]
    Net(#[from] argus_net::NetError),
    /// The protocol failed.
    #[error("protocol: {0}")]
    Mpc(#[from] argus_mpc::MpcError),
    /// A share, template or request that is not acceptable.
    #[error("invalid input: {0}")]
    Input(String),
    /// A peer or client sent something out of protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// This node's state differs from its peers'.
    #[error("inconsistent with peers: {0}")]
    Inconsistent(String),
    /// I/O with a client or node.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// An error of what the nodes share with the client: the `[iris]` settings, the client
    /// protocol's messages (say, one that does not decode).
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl From<argus_iris::IrisError> for NodeError {
    fn from(e: argus_iris::IrisError) -> Self {
        NodeError::Input(e.to_string())
    }
}

/// Resident set size of this process in bytes (Linux; 0 elsewhere).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

/// Fault injection for the tests: `ARGUS_FAILPOINT=<name>:<seq>` aborts the process when the
/// node reaches point `name` in batch `seq`; `<name>:<seq>:stall-<ms>` pauses it there instead.
pub(crate) fn failpoint(name: &str, seq: u64) {
    if let Ok(v) = std::env::var("ARGUS_FAILPOINT") {
        let here = format!("{name}:{seq}");
        if v == here {
            eprintln!("failpoint {v}: aborting");
            std::process::abort();
        }
        if let Some(ms) = v.strip_prefix(&here).and_then(|r| r.strip_prefix(":stall-")).and_then(|m| m.parse().ok()) {
            eprintln!("failpoint {v}: stalling");
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
}
