//! The Rust client: shares a template (one share per node, over TLS with a client certificate),
//! sends the shares, and combines the three answers (they must agree). Retries reuse the request
//! id and the very same shares, so a retried enrolment is applied at most once.
//!
//! Its configuration file (`client.toml`, read by `argus enroll`, `check`, `delete`, `status` and
//! `load`); only `nodes` is required:
//!
//! ```toml
//! nodes = ["127.0.0.1:7200", "127.0.0.1:7201", "127.0.0.1:7202"]  # the nodes' `listen`, in party order
//! pki = "pki"           # ca.pem (the nodes' CA) and client-<name>.pem / .key
//! name = "demo"         # this client: its certificate names client-<name>; the nodes list <name> in `clients`
//!                       # (an operator's also names role-operator: deletions and the commit log)
//! timeout_s = 300       # how long to wait for an answer (`argus setup` writes 600)
//! retries = 8           # retries of a request that failed without changing anything (~16 s of back-off)
//!
//! [iris]                # as the nodes' [iris] (see `settings.rs`): scheme, layout, rotations and
//! scheme = "mpclift-GR16-shamir"   # mask_mode must match theirs; the other keys are the nodes' business
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::{MatchConfig, Template};
use argus_net::tcp::{self, party_name, TlsIdentity};
use argus_records::{Commit, IdentityId};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio_rustls::TlsConnector;

use crate::settings::IrisSettings;
use crate::wire::{self, Envelope, Kind, NodeStatus, Outcome, Reply, Request};
use crate::{with_scheme, ClientError};

/// A client's configuration file (`client.toml`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientFile {
    /// The three nodes' client ports, in party order.
    pub nodes: Vec<SocketAddr>,
    /// Directory with `ca.pem` and `client-<name>.pem` / `.key`.
    #[serde(default = "default_pki")]
    pub pki: PathBuf,
    /// This client's name (its certificate names `client-<name>`).
    #[serde(default = "default_name")]
    pub name: String,
    /// Seconds to wait for an answer (a batch against a large database takes a while).
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    /// Retries of a request that failed in a way that changed nothing.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Must match the nodes' settings.
    #[serde(default)]
    pub iris: IrisSettings,
}

fn default_pki() -> PathBuf {
    PathBuf::from("pki")
}
fn default_name() -> String {
    "demo".into()
}
fn default_timeout() -> u64 {
    300
}
fn default_retries() -> u32 {
    8
}

/// Everything a [`Client`] needs.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The nodes' client ports, in party order.
    pub nodes: Vec<SocketAddr>,
    /// The client's TLS identity.
    pub identity: TlsIdentity,
    /// Matching settings (must match the nodes').
    pub iris: IrisSettings,
    /// How long to wait for an answer.
    pub timeout: Duration,
    /// Retries after retryable failures.
    pub retries: u32,
}

impl ClientConfig {
    /// Reads a client file; a relative `pki` is relative to the file.
    pub fn load(path: &Path) -> Result<ClientConfig, ClientError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ClientError::Config(format!("reading {}: {e}", path.display())))?;
        let f: ClientFile =
            toml::from_str(&text).map_err(|e| ClientError::Config(format!("{}: {e}", path.display())))?;
        let pki = if f.pki.is_relative() { path.parent().unwrap_or(Path::new(".")).join(&f.pki) } else { f.pki };
        let paths = tcp::PemPaths::client(&pki, &f.name);
        let identity = TlsIdentity::from_pem_files(&paths.ca, &paths.cert, &paths.key)?;
        Ok(ClientConfig {
            nodes: f.nodes,
            identity,
            iris: f.iris,
            timeout: Duration::from_secs(f.timeout_s),
            retries: f.retries,
        })
    }
}

/// Waiters by tag; `None` once the connection's reader has ended, so that a request sent on a
/// connection the node closed (say, it restarted while the client was idle) fails at once and is
/// retried on a new connection instead of waiting out the timeout.
type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Reply>>>>>;

/// One multiplexed TLS connection to a node.
#[derive(Clone)]
struct Conn {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    next_tag: Arc<AtomicU64>,
    /// The node's refusal of the connection (tag 0), kept for the requests that register after
    /// it arrived: they would otherwise see only the closed connection.
    refused: Arc<Mutex<Option<Reply>>>,
}

/// A client of the three nodes. Cheap to share behind an `Arc`; many requests may be in flight.
pub struct Client {
    cfg: ClientConfig,
    match_cfg: MatchConfig,
    connector: TlsConnector,
    conns: [tokio::sync::Mutex<Option<Conn>>; 3],
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> ClientError {
    move |source| ClientError::Io { context, source }
}

impl Client {
    /// A client (connections are made on first use, and again after a failure).
    pub fn new(cfg: ClientConfig) -> Result<Client, ClientError> {
        if cfg.nodes.len() != 3 {
            return Err(ClientError::Config(format!("a client needs the 3 nodes' addresses, got {}", cfg.nodes.len())));
        }
        let (_, tls) = tcp::tls_configs(&cfg.identity)?;
        let mut tls = (*tls).clone();
        tls.alpn_protocols = wire::client_alpn();
        let tls = Arc::new(tls);
        let match_cfg = cfg.iris.match_config()?;
        Ok(Client { cfg, match_cfg, connector: TlsConnector::from(tls), conns: Default::default() })
    }

    async fn connect(&self, node: usize) -> Result<Conn, ClientError> {
        let addr = self.cfg.nodes[node];
        let tcp =
            tokio::net::TcpStream::connect(addr).await.map_err(io(format!("connecting to node {node} at {addr}")))?;
        let _ = tcp.set_nodelay(true);
        let name = rustls::pki_types::ServerName::try_from(party_name(node)).expect("valid name");
        let tls = self.connector.connect(name, tcp).await.map_err(|e| {
            if wire::no_common_protocol(&e) {
                ClientError::OtherRelease {
                    node,
                    message: format!("it speaks none of this client's protocols ({})", wire::CLIENT_PROTOCOL),
                }
            } else {
                io(format!("TLS with node {node} at {addr}"))(e)
            }
        })?;
        if tls.get_ref().1.alpn_protocol() != Some(wire::CLIENT_PROTOCOL.as_bytes()) {
            return Err(ClientError::OtherRelease {
                node,
                message: format!(
                    "it chose no client protocol, as releases before {p} do (this client speaks {p})",
                    p = wire::CLIENT_PROTOCOL
                ),
            });
        }
        let (mut rd, mut wr) = tokio::io::split(tls);
        let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(async move {
            while let Some(frame) = out_rx.recv().await {
                if wire::write_frame(&mut wr, &frame).await.is_err() {
                    break;
                }
            }
        });
        let readers = pending.clone();
        let refused: Arc<Mutex<Option<Reply>>> = Arc::default();
        let refusal = refused.clone();
        tokio::spawn(async move {
            while let Ok(Some(frame)) = wire::read_frame(&mut rd).await {
                let Ok(env) = wire::decode::<Envelope<Reply>>(&frame) else { break };
                let waiter = readers.lock().unwrap().as_mut().and_then(|p| p.remove(&env.tag));
                match waiter {
                    Some(w) => {
                        let _ = w.send(env.body);
                    }
                    // Tag 0: the node refused the connection (e.g. unknown client).
                    None if env.tag == 0 => {
                        *refusal.lock().unwrap() = Some(env.body.clone());
                        for (_, w) in readers.lock().unwrap().iter_mut().flat_map(|p| p.drain()) {
                            let _ = w.send(env.body.clone());
                        }
                    }
                    None => {}
                }
            }
            // Connection gone: waiters see their sender dropped, later requests are refused.
            *readers.lock().unwrap() = None;
        });
        Ok(Conn { out, pending, next_tag: Arc::new(AtomicU64::new(1)), refused })
    }

    /// Sends one request to one node and waits for its reply.
    async fn call(&self, node: usize, req: &Request) -> Result<Reply, ClientError> {
        let conn = {
            let mut slot = self.conns[node].lock().await;
            match slot.as_ref() {
                Some(c) if !c.out.is_closed() && c.pending.lock().unwrap().is_some() => c.clone(),
                _ => {
                    let c = self.connect(node).await?;
                    *slot = Some(c.clone());
                    c
                }
            }
        };
        let tag = conn.next_tag.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let lost = || ClientError::Io {
            context: format!("node {node}"),
            source: std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "connection lost"),
        };
        let registered = conn.pending.lock().unwrap().as_mut().map(|p| p.insert(tag, tx)).is_some();
        let refusal = || conn.refused.lock().unwrap().clone();
        if !registered {
            *self.conns[node].lock().await = None;
            return refusal().ok_or_else(lost);
        }
        if conn.out.send(wire::encode(&Envelope { tag, body: req })).is_err() {
            *self.conns[node].lock().await = None;
            return refusal().ok_or_else(lost);
        }
        match tokio::time::timeout(self.cfg.timeout, rx).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(_)) => {
                *self.conns[node].lock().await = None;
                refusal().ok_or_else(lost)
            }
            Err(_) => {
                if let Some(p) = conn.pending.lock().unwrap().as_mut() {
                    p.remove(&tag);
                }
                Err(ClientError::Io {
                    context: format!("node {node}"),
                    source: std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time"),
                })
            }
        }
    }

    /// One attempt of [`Client::send_all`]: the three replies, or an error and whether it is
    /// retryable. A node's error answer ends the attempt at once; a connection failure waits for
    /// the other nodes, whose answer (say, a refusal) says more.
    async fn attempt(&self, reqs: &[Request; 3]) -> Result<[Reply; 3], (ClientError, bool)> {
        let mut calls = [0, 1, 2].map(|node| Box::pin(self.call(node, &reqs[node])));
        let mut done: [Option<Result<Reply, ClientError>>; 3] = [None, None, None];
        std::future::poll_fn(|cx| {
            for (node, (call, slot)) in calls.iter_mut().zip(done.iter_mut()).enumerate() {
                if slot.is_none() {
                    if let Poll::Ready(r) = call.as_mut().poll(cx) {
                        if let Ok(Reply::Error { message, retry }) = r {
                            return Poll::Ready(Err((ClientError::Refused { node, message }, retry)));
                        }
                        *slot = Some(r);
                    }
                }
            }
            if done.iter().all(Option::is_some) {
                Poll::Ready(Ok(()))
            } else {
                Poll::Pending
            }
        })
        .await?;
        // A node of another release will not speak this client's protocol on a retry either.
        let [a, b, c] = done.map(|r| {
            r.expect("all three answered").map_err(|e| {
                let retry = !matches!(e, ClientError::OtherRelease { .. });
                (e, retry)
            })
        });
        Ok([a?, b?, c?])
    }

    /// One request per node (e.g. each its own share), retried while the failure is retryable;
    /// returns the three replies once none is an error. The building block of the other calls.
    ///
    /// A node's error answer ends an attempt without waiting for the other nodes: a busy leader
    /// answers at once, while the followers would answer only when the request's batch runs or
    /// their copy expires. Their copies stay queued, and the retry (same id, same bytes) joins them.
    pub async fn send_all(&self, reqs: [Request; 3]) -> Result<[Reply; 3], ClientError> {
        let mut attempt = 0;
        loop {
            match self.attempt(&reqs).await {
                Ok(replies) => return Ok(replies),
                Err((e, retry)) if !retry || attempt >= self.cfg.retries => return Err(e),
                Err((e, _)) => {
                    tracing::debug!("retrying after: {e}");
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(100 << attempt.min(5))).await;
                }
            }
        }
    }

    /// Shares `t` as a query (all rotations, both eyes), one encoded share per node.
    pub fn make_shares(&self, t: &Template) -> Result<[Vec<u8>; 3], ClientError> {
        check_layout(t, self.cfg.iris.layout.geometry()?)?;
        with_scheme!(self.cfg.iris.scheme, s => {
            let [a, b, c] = s.share_query(t, &self.match_cfg)?;
            Ok([s.encode(&a), s.encode(&b), s.encode(&c)])
        })
    }

    /// Checks (and with [`Kind::Enroll`] enrols if unique) a template.
    pub async fn submit(&self, t: &Template, kind: Kind) -> Result<Outcome, ClientError> {
        let shares = self.make_shares(t)?;
        self.submit_shares(new_request_id(), kind, shares).await
    }

    /// Re-authentication (1:1): whether `t` is enrolled identity `id` (both eyes under the nodes'
    /// eye rule), compared with that identity alone; only yes or no is revealed.
    pub async fn verify(&self, t: &Template, id: IdentityId) -> Result<bool, ClientError> {
        Ok(!self.submit(t, Kind::Verify(id)).await?.unique)
    }

    /// Submits already made shares under `request_id` (retrying with the same id and shares
    /// returns the recorded outcome).
    pub async fn submit_shares(
        &self,
        request_id: String,
        kind: Kind,
        shares: [Vec<u8>; 3],
    ) -> Result<Outcome, ClientError> {
        let reqs = shares.map(|share| Request::Submit { request_id: request_id.clone(), kind, share });
        let replies = self.send_all(reqs).await?;
        let outcomes: Vec<Outcome> = replies
            .into_iter()
            .enumerate()
            .map(|(node, r)| match r {
                Reply::Outcome(o) => Ok(o),
                other => Err(ClientError::Protocol(format!("node {node} answered a submission with {other:?}"))),
            })
            .collect::<Result<_, _>>()?;
        if outcomes.iter().any(|o| *o != outcomes[0]) {
            return Err(ClientError::Disagree(format!("{outcomes:?}")));
        }
        Ok(outcomes.into_iter().next().expect("three outcomes"))
    }

    /// Deletes identity `id`; returns whether it was enrolled.
    pub async fn delete(&self, id: u64) -> Result<bool, ClientError> {
        let request_id = new_request_id();
        let req = Request::Delete { request_id, id };
        let replies = self.send_all([req.clone(), req.clone(), req]).await?;
        let existed: Vec<bool> = replies
            .into_iter()
            .map(|r| match r {
                Reply::Deleted { existed, .. } => Ok(existed),
                other => Err(ClientError::Protocol(format!("unexpected answer to a deletion: {other:?}"))),
            })
            .collect::<Result<_, _>>()?;
        if existed.iter().any(|e| *e != existed[0]) {
            return Err(ClientError::Disagree(format!("deletion of {id}: {existed:?}")));
        }
        Ok(existed[0])
    }

    /// Node `node`'s status, asked once (no retry): for monitoring, where an unreachable node is
    /// the answer.
    pub async fn node_status(&self, node: usize) -> Result<NodeStatus, ClientError> {
        status_of(node, self.call(node, &Request::Status).await?)
    }

    /// The three nodes' status.
    pub async fn status(&self) -> Result<[NodeStatus; 3], ClientError> {
        let replies = self.send_all([Request::Status, Request::Status, Request::Status]).await?;
        let s: Vec<NodeStatus> =
            replies.into_iter().enumerate().map(|(node, r)| status_of(node, r)).collect::<Result<_, _>>()?;
        Ok(s.try_into().expect("three"))
    }

    /// The commit log of node `node` after `after` (public: request ids, outcomes, identity ids).
    pub async fn commits(&self, node: usize, after: u64) -> Result<Vec<Commit>, ClientError> {
        match self.call(node, &Request::Commits { after }).await? {
            Reply::Commits(c) => Ok(c),
            Reply::Error { message, .. } => Err(ClientError::Refused { node, message }),
            other => Err(ClientError::Protocol(format!("unexpected answer to commits: {other:?}"))),
        }
    }
}

/// Refuses a template whose eyes are not in the service's layout `geometry`: shared anyway, its
/// shares would be refused by the nodes, or by `argus import` long after `argus share`.
pub fn check_layout(t: &Template, geometry: argus_iris::IrisGeometry) -> Result<(), ClientError> {
    if t.left.geometry() != geometry || t.right.geometry() != geometry {
        let eye = if t.left.geometry() != geometry { &t.left } else { &t.right };
        return Err(ClientError::Input(format!(
            "the template's layout {} does not match the service's {} (the [iris] layout of the configuration)",
            eye.geometry().describe(),
            geometry.describe()
        )));
    }
    Ok(())
}

/// Node `node`'s answer to a status request.
fn status_of(node: usize, r: Reply) -> Result<NodeStatus, ClientError> {
    match r {
        Reply::Status(s) => Ok(s),
        Reply::Error { message, .. } => Err(ClientError::Refused { node, message }),
        other => Err(ClientError::Protocol(format!("unexpected answer to status: {other:?}"))),
    }
}

/// A fresh random request id (128 bits, hex).
pub fn new_request_id() -> String {
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}
