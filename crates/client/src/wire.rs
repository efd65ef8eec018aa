//! Messages between a client and a node (length-prefixed frames over TLS), and their coding: bincode,
//! which the nodes' control messages on the party network (`argus_node::wire`) use too.

use argus_records::{Commit, IdentityId, Summary};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::ClientError;

/// The version of what a client and a node send each other (the messages and frames below, and
/// the schemes' share encodings), offered by the client and chosen by the node as the TLS
/// application protocol (ALPN). A node refuses in the handshake a client that offers only other
/// versions, and after it a client that offers none (a release before this one); a client
/// refuses a node that chose none. Bump the number with any change to what a client sends or reads.
///
/// `argus-client/2` (2026-11-29): re-authentication (`Kind::Verify`); request ids are bound to
/// the client and deleting or reading the commit log needs the operator role.
/// `argus-client/3` (2026-11-29): refused queries (`Op::Refused` in the commit log) and their
/// count in the status.
/// `argus-client/4` (2026-11-29): a query share carries its unrotated row and masked code bits
/// alone (the nodes make the rotations and check the shares); invalid shares and mirror attacks
/// are refused and counted in the status.
/// `argus-client/5` (2026-11-29): the status names the kernel the node planned, its CPU and
/// kernel level.
pub const CLIENT_PROTOCOL: &str = "argus-client/5";

/// The ALPN list of a client or node that speaks [`CLIENT_PROTOCOL`].
pub fn client_alpn() -> Vec<Vec<u8>> {
    vec![CLIENT_PROTOCOL.as_bytes().to_vec()]
}

/// Whether a TLS handshake failed because the two sides share no application protocol: the
/// node's own error when the client offered only others, the alert a client receives for it.
pub fn no_common_protocol(e: &std::io::Error) -> bool {
    use rustls::{AlertDescription, Error};
    matches!(
        e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()),
        Some(Error::NoApplicationProtocol | Error::AlertReceived(AlertDescription::NoApplicationProtocol))
    )
}

/// Largest client frame (a query share of the open-iris layout is about 4 MB).
pub const MAX_FRAME: usize = 64 << 20;

/// What a submission asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// Only check uniqueness against the enrolled population.
    Check,
    /// Check, and enrol if unique (two duplicates in one batch are not both enrolled).
    Enroll,
    /// Re-authentication (1:1): is the query enrolled identity `id`, both eyes under the eye
    /// rule? It is compared with that identity alone, and only yes or no is revealed (the
    /// outcome's `unique` is `false` for yes; an id not enrolled is a no).
    Verify(IdentityId),
}

/// A client's request to one node.
#[derive(Clone, Serialize, Deserialize)]
pub enum Request {
    /// This node's share of a query (all rotations of both eyes).
    Submit {
        /// Chosen by the client, the same at all three nodes; retries reuse it (idempotent).
        request_id: String,
        /// Check only, or enrol.
        kind: Kind,
        /// The scheme's encoding of the share (as bytes: bincode's sequence of `u8` would
        /// visit them one at a time; the encoding is the same).
        #[serde(with = "serde_bytes")]
        share: Vec<u8>,
    },
    /// Delete an enrolled identity.
    Delete {
        /// As for `Submit`.
        request_id: String,
        /// The identity.
        id: IdentityId,
    },
    /// The node's state.
    Status,
    /// The committed batches after `after` (public: request ids, outcomes, identity ids).
    Commits {
        /// Last sequence number already known.
        after: u64,
    },
}

/// Never prints share bytes (only their length): messages end up in error texts and logs.
impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Request::Submit { request_id, kind, share } => f
                .debug_struct("Submit")
                .field("request_id", request_id)
                .field("kind", kind)
                .field("share", &format_args!("[{} bytes]", share.len()))
                .finish(),
            Request::Delete { request_id, id } => {
                f.debug_struct("Delete").field("request_id", request_id).field("id", id).finish()
            }
            Request::Status => f.write_str("Status"),
            Request::Commits { after } => f.debug_struct("Commits").field("after", after).finish(),
        }
    }
}

/// One node's answer to one request: the public outcome every node computed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The request.
    pub request_id: String,
    /// No enrolled identity (and no earlier query of its batch, for enrolments) matched.
    pub unique: bool,
    /// The identity it was enrolled as.
    pub enrolled: Option<IdentityId>,
    /// The batch (commit) that decided it.
    pub seq: u64,
}

/// What a node reports about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// Party index.
    pub id: usize,
    /// Scheme name.
    pub scheme: String,
    /// Enrolled identities, digest of their ids, last commit, next id.
    pub summary: Summary,
    /// Bytes of shares held in memory.
    pub db_bytes: u64,
    /// Resident memory of the node process, bytes (Linux; 0 elsewhere).
    pub rss_bytes: u64,
    /// Bytes of share per code bit in memory (the scheme's storage cost).
    pub share_bytes_per_code_bit: f64,
    /// Payload bytes this node sent to its peers since start.
    pub peer_bytes_sent: u64,
    /// Requests waiting for a batch.
    pub queued: usize,
    /// New requests the core refused as busy since start: `batch.max_queued` were waiting at the
    /// leader, or `limits.pending_shares` enrolment shares on disk.
    pub refused_busy: u64,
    /// Queries refused without a check since start: an eye with fewer valid bits than
    /// `iris.min_valid` asks.
    pub refused_short: u64,
    /// Queries refused without a check since start: shares that are not those of a valid
    /// template (values out of range, or the nodes' shares not of one template).
    pub refused_invalid: u64,
    /// Queries refused since start as mirror attacks (`iris.mirror_check`): unique as presented,
    /// matching an enrolled identity with the eyes swapped and mirrored.
    pub refused_mirror: u64,
    /// Whether the node is in a session with both peers (connected, consistent, taking batches);
    /// false while it connects or catches up.
    pub serving: bool,
    /// The kernel its batch checks run, as the planner chose it on this host (e.g.
    /// `packed-vnni-l5-b32`; `gemm-<level>` for schemes without a middle product).
    pub kernel: String,
    /// The host's CPU model.
    pub cpu: String,
    /// The kernel level in use (`amx`, `avx512vnni`, `avx512`, `avx2`, `portable`).
    pub isa: String,
}

impl NodeStatus {
    /// Memory of shares per enrolled identity (bytes), if any are enrolled.
    pub fn db_bytes_per_identity(&self) -> Option<f64> {
        (self.summary.count > 0).then(|| self.db_bytes as f64 / self.summary.count as f64)
    }
}

/// A node's reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// A submission was decided.
    Outcome(Outcome),
    /// A deletion was applied.
    Deleted {
        /// The request.
        request_id: String,
        /// Whether the identity was enrolled.
        existed: bool,
        /// The commit.
        seq: u64,
    },
    /// Node state.
    Status(NodeStatus),
    /// Committed batches.
    Commits(Vec<Commit>),
    /// The request failed; `retry`: it changed nothing and may be sent again unchanged.
    Error {
        /// What went wrong.
        message: String,
        /// Whether a retry can succeed.
        retry: bool,
    },
}

/// A request or reply with the tag that pairs them on a multiplexed connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope<T> {
    /// Chosen by the client, echoed by the node.
    pub tag: u64,
    /// The message.
    pub body: T,
}

/// Encodes a message with bincode.
pub fn encode<T: Serialize>(m: &T) -> Vec<u8> {
    bincode::serialize(m).expect("messages serialise")
}

/// Decodes a message (bounded by [`MAX_FRAME`]).
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ClientError> {
    use bincode::Options;
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(MAX_FRAME as u64)
        .deserialize(bytes)
        .map_err(|e| ClientError::Protocol(format!("malformed message: {e}")))
}

/// Writes one frame: `u32` little-endian length, then the payload.
pub async fn write_frame<W: AsyncWriteExt + Unpin>(w: &mut W, payload: &[u8]) -> std::io::Result<()> {
    w.write_all(&(payload.len() as u32).to_le_bytes()).await?;
    w.write_all(payload).await?;
    w.flush().await
}

/// Reads one frame (`None` at a clean end of stream). The buffer grows with the bytes that
/// arrive, from at most 64 KiB: a header announcing up to [`MAX_FRAME`] bytes reserves nothing
/// the peer does not send.
pub async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds {MAX_FRAME}"),
        ));
    }
    let mut buf = Vec::with_capacity(len.min(64 << 10));
    r.take(len as u64).read_to_end(&mut buf).await?;
    if buf.len() != len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the stream ended {} bytes into a frame of {len}", buf.len()),
        ));
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames round-trip; a header announcing the largest frame followed by a few bytes and the
    /// end of the stream is an error naming both (read as the bytes come, not allocated up front);
    /// a header beyond the limit is refused before any read.
    #[test]
    fn frames_are_read_as_their_bytes_arrive() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut out = Vec::new();
            write_frame(&mut out, b"hello").await.unwrap();
            assert_eq!(read_frame(&mut &out[..]).await.unwrap(), Some(b"hello".to_vec()));
            assert_eq!(read_frame(&mut &[][..]).await.unwrap(), None);
            let mut short = (MAX_FRAME as u32).to_le_bytes().to_vec();
            short.extend_from_slice(&[7; 10]);
            let e = read_frame(&mut &short[..]).await.unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
            assert!(e.to_string().contains(&format!("10 bytes into a frame of {MAX_FRAME}")), "{e}");
            let big = (MAX_FRAME as u32 + 1).to_le_bytes();
            assert_eq!(read_frame(&mut &big[..]).await.unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        });
    }

    /// The client protocol is settled in the TLS handshake: a client that offers it gets it (also
    /// among others, as a later release might); one that offers only others is refused there, and
    /// both sides see why; one that offers none gets through with none (the node then refuses it
    /// in a frame).
    #[test]
    fn the_client_protocol_is_settled_in_the_tls_handshake() {
        use argus_net::tcp::{client_port_config, party_name, tls_configs, Pki};
        use std::sync::Arc;
        type Chosen = std::io::Result<Option<Vec<u8>>>;
        let pki = Pki::generate_with_clients(3, &["demo"]).unwrap();
        let server = client_port_config(&pki.identity(0), pki.client_ca_der()).unwrap();
        let mut server = (*server).clone();
        server.alpn_protocols = client_alpn();
        let (_, client) = tls_configs(&pki.client_identity("demo").unwrap()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let handshake = |offer: &[&str]| -> (Chosen, Chosen) {
            let mut client = (*client).clone();
            client.alpn_protocols = offer.iter().map(|p| p.as_bytes().to_vec()).collect();
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server.clone()));
            let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
            let name = rustls::pki_types::ServerName::try_from(party_name(0)).unwrap();
            rt.block_on(async {
                let (a, b) = tokio::io::duplex(1 << 16);
                let (s, c) = tokio::join!(acceptor.accept(a), connector.connect(name, b));
                let chosen = |p: Option<&[u8]>| p.map(<[u8]>::to_vec);
                (s.map(|t| chosen(t.get_ref().1.alpn_protocol())), c.map(|t| chosen(t.get_ref().1.alpn_protocol())))
            })
        };
        let ours = Some(CLIENT_PROTOCOL.as_bytes().to_vec());
        for offer in [&[CLIENT_PROTOCOL][..], &["argus-client/99", CLIENT_PROTOCOL]] {
            let (s, c) = handshake(offer);
            assert_eq!((s.unwrap(), c.unwrap()), (ours.clone(), ours.clone()), "{offer:?}");
        }
        let (s, c) = handshake(&["argus-client/99"]);
        assert!(no_common_protocol(&s.unwrap_err()));
        assert!(no_common_protocol(&c.unwrap_err()));
        let (s, c) = handshake(&[]);
        assert_eq!((s.unwrap(), c.unwrap()), (None, None));

        // Peers and clients do not share trust: a party's certificate (party CA) is no client's.
        let (_, peer) = tls_configs(&pki.identity(1)).unwrap();
        let refused = rt.block_on(async {
            let (a, b) = tokio::io::duplex(1 << 16);
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server.clone()));
            let name = rustls::pki_types::ServerName::try_from(party_name(0)).unwrap();
            let (s, _) = tokio::join!(acceptor.accept(a), tokio_rustls::TlsConnector::from(peer).connect(name, b));
            s.map(|_| ())
        });
        let e = refused.unwrap_err().to_string();
        assert!(e.contains("UnknownIssuer"), "{e}");
    }

    /// Shares travel as bytes (`serde_bytes`) in the encoding a `Vec<u8>` always had: its
    /// `u64` length, then the bytes; and they decode back.
    #[test]
    fn share_bytes_keep_their_encoding() {
        let share: Vec<u8> = (0..=255).collect();
        #[derive(Serialize)]
        struct Plain {
            request_id: String,
            kind: Kind,
            share: Vec<u8>,
        }
        let plain = Plain { request_id: "r".into(), kind: Kind::Enroll, share: share.clone() };
        let req = Request::Submit { request_id: "r".into(), kind: Kind::Enroll, share: share.clone() };
        let bytes = encode(&req);
        assert_eq!(bytes[4..], encode(&plain)[..], "after the variant tag");
        match decode::<Request>(&bytes).unwrap() {
            Request::Submit { share: back, .. } => assert_eq!(back, share),
            other => panic!("{other:?}"),
        }
        // Debug output (error texts, logs) names lengths, never share bytes.
        let debug = format!("{req:?}");
        assert!(debug.contains("[256 bytes]") && !debug.contains("255"), "{debug}");
    }
}
