//! The public records of the iris service, shared by the nodes' store (`argus-store`), the
//! nodes (`argus-node`) and the client (`argus-client`): identity ids, the ops and commits of the
//! commit log, and a store's summary. Plain data (serde only), so that a client reads the commit
//! log and the nodes' status without linking a database.
//!
//! The commit log is public: request ids, outcomes and identity ids, never shares.

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

/// The id of an enrolled identity.
pub type IdentityId = u64;

/// One operation of a committed batch. Every node applies the same commits in the same order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// A uniqueness check finished. `enrolled = Some(id)`: the request's pending share becomes identity `id`.
    Outcome {
        /// The request this outcome answers.
        request_id: String,
        /// Whether the query matched no enrolled identity.
        unique: bool,
        /// The identity id the request's share was enrolled under, if it was enrolled.
        enrolled: Option<IdentityId>,
    },
    /// Deletion of identity `id` (`existed` = whether it was enrolled at that point).
    Delete {
        /// The request that asked for the deletion.
        request_id: String,
        /// The identity to delete.
        id: IdentityId,
        /// Whether the identity was enrolled when the deletion was decided.
        existed: bool,
    },
    /// A submission refused without a check (nothing of it enrolled); `reason` is what its client
    /// is told, the same at every node.
    Refused {
        /// The request refused.
        request_id: String,
        /// Why.
        reason: String,
    },
}

impl Op {
    /// The request id this op answers.
    pub fn request_id(&self) -> &str {
        match self {
            Op::Outcome { request_id, .. } | Op::Refused { request_id, .. } | Op::Delete { request_id, .. } => {
                request_id
            }
        }
    }
}

/// A batch of ops applied atomically, numbered `seq` (1, 2, 3, … without gaps).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// The sequence number: the commit applies on top of a store whose `last_seq` is `seq - 1`.
    pub seq: u64,
    /// The ops, applied in order.
    pub ops: Vec<Op>,
}

/// Count and SHA-256 digest of the enrolled ids (u64 little-endian, ascending), the start-up consistency check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The number of enrolled identities.
    pub count: u64,
    /// SHA-256 over the enrolled ids in ascending order, each as 8 little-endian bytes.
    pub digest: [u8; 32],
    /// The sequence number of the last applied commit (0: none).
    pub last_seq: u64,
    /// The smallest id above every id ever enrolled or imported.
    pub next_id: IdentityId,
}
