//! Messages between the nodes: control messages on the party network, between protocol runs
//! (bincode, coded by [`encode`] and [`decode`]). The client ↔ node messages and the framing are
//! `argus_client::wire`'s, re-exported here.

use argus_store::{Commit, IdentityId, Summary};
use serde::{Deserialize, Serialize};

pub use argus_client::wire::*;

/// The version of what the nodes send each other: the control messages below and the messages
/// of the MPC protocols (`argus_iris`, `argus_mpc`). Sent with the settings at session start, so
/// nodes of releases that cannot talk refuse each other there, both versions named, instead of
/// failing mid-batch on a message they cannot read. Bump it with any change to either.
///
/// * 1 (2026-11-25): the first version sent (builds before it send none). With
///   `compare_chunk = "auto"` the nodes time their rounds after the settings
///   (`argus_mpc::Party::round_time`).
/// * 2 (2026-11-25): `nolift-Z32-rep3` compares `a·ml − b·dot` with Lemma 2's terms reduced (so
///   the 16384-bit open-iris codes fit Z_2^32); nodes of version 1 would reshare other values.
/// * 3 (2026-11-29): the threshold is an exact rational (MPCLift and F_65519 on its dyadic
///   stand-in, a 36-bit MSB), the audit's seed is drawn jointly and replicated copies are
///   compared by digest, and a batch may carry re-authentications (`Kind::Verify`).
/// * 4 (2026-11-29): a batch starts with the coverage step (`short_masks`: one MSB and one
///   reveal), and its commit may refuse a query (`Op::Refused`).
/// * 5 (2026-11-29): before it, the validity check of the queries' shares (`invalid`); queries
///   carry their unrotated row alone; after it, with `iris.mirror_check`, the mirror check of
///   the queries found unique.
/// * 6 (2026-11-29): with `compare_chunk = "auto"`, after the round time node 0 sends the
///   comparisons per chunk it planned on its host (`argus_mpc::Party::value_of_party0`).
pub const PEER_PROTOCOL: u32 = 6;

/// One item of a batch, as the leader proposes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The request.
    pub request_id: String,
    /// What it asks.
    pub op: ItemOp,
}

/// What a batch item does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ItemOp {
    /// A submission.
    Submit(Kind),
    /// A deletion.
    Delete(IdentityId),
}

/// What a node asks of a session at its start (each only in its first session).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asks {
    /// To be rebuilt by its peers (`argus node --recover`).
    pub recover: bool,
    /// An audit of the three databases before serving (`argus node --audit`).
    pub audit: bool,
}

/// Share recovery: a helper's part of one identity's share, encoded like a share.
#[derive(Clone, Serialize, Deserialize)]
pub struct Part {
    /// The identity.
    pub id: IdentityId,
    /// The part ([`argus_iris::protocol::scheme::IrisScheme::recovery_part`]).
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// Never prints the part's bytes (only their length).
impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Part {{ id: {}, bytes: [{} bytes] }}", self.id, self.bytes.len())
    }
}

/// Control messages between the nodes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum PeerMsg {
    /// Session start, first: the sender's `[iris]` settings and [`PEER_PROTOCOL`] (JSON), which
    /// all three must share. It stays the first variant and a string, so that any two releases
    /// read each other's and can name the difference.
    Settings(String),
    /// Session start: the sender's store summary, and what it asks of this session.
    Hello {
        /// The sender's store summary.
        summary: Summary,
        /// What the sender asks for.
        asks: Asks,
    },
    /// Send me your commits after this sequence number.
    CommitsAfter(u64),
    /// The commits asked for.
    Commits(Vec<Commit>),
    /// Share recovery, helper → lost node: parts of the lost node's shares of the next identities
    /// in id order; a page shorter than the agreed size is the last.
    Parts(Vec<Part>),
    /// Share recovery, lost node → helpers: a page of parts is written (flow control).
    PartsTaken,
    /// Leader → followers: run batch `seq` with these items if you hold them.
    Propose {
        /// The batch's sequence number.
        seq: u64,
        /// Items in batch order.
        items: Vec<Item>,
    },
    /// Follower → leader: the proposed items this node does not hold.
    Missing(Vec<String>),
    /// Leader → followers: run these (possibly none).
    Go(Vec<Item>),
    /// Leader → followers when idle, so a dead link is noticed.
    Ping,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recovery part travels as bytes and decodes back; its Debug output (error texts, logs)
    /// names its length, never its bytes.
    #[test]
    fn parts_keep_their_bytes_out_of_logs() {
        let share: Vec<u8> = (0..=255).collect();
        let part = PeerMsg::Parts(vec![Part { id: 7, bytes: share.clone() }]);
        let debug = format!("{part:?}");
        assert!(debug.contains("[256 bytes]") && !debug.contains("255"), "{debug}");
        match decode::<PeerMsg>(&encode(&part)).unwrap() {
            PeerMsg::Parts(p) => assert_eq!((p[0].id, &p[0].bytes), (7, &share)),
            other => panic!("{other:?}"),
        }
    }
}
