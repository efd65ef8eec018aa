//! A node's event loop. Sessions: connect to the peers (mutual TLS), agree on the commit log
//! (catching up a node that is behind), check that all three hold the same identities, then serve
//! batches until a peer fails — and start over. Requests from the client port arrive on a channel.
//!
//! One module per job, each an `impl Core` block over the state kept here, its policies pure
//! functions with their unit tests:
//! * `session`: the start of a session — same settings, the round time, catch-up, recovery and
//!   audit in order, the consistency check — and the compare chunk measured again while serving;
//! * `catch_up`: bringing every node to the latest commit;
//! * `audit`: the audit of the three databases;
//! * `recovery`: share recovery of a lost node from its two peers;
//! * `batching`: the leader proposes, the followers answer what they lack, the rest runs
//!   (`pick`: which waiting requests the leader proposes);
//! * `batch`: one batch — the protocol run, the verdicts, the commit, the replies;
//! * `intake`: requests from the client port — admission, the queue, expiry, pending shares.

mod audit;
mod batch;
mod batching;
mod catch_up;
mod intake;
mod pick;
mod recovery;
mod session;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;
use argus_net::{tcp, NetConfig, PartyId};
use argus_store::Op;
use crossbeam_channel::Receiver;
use tokio::sync::oneshot;

use crate::engine::Engine;
use crate::wire::{self, NodeStatus, Outcome, PeerMsg, Reply, Request};
use crate::{NodeConfig, NodeError};

pub(crate) use intake::check_request_id;
use intake::Queue;

/// The node's latest status, published by the core after start-up and after every batch, so
/// that status requests are answered at once instead of waiting for a running batch.
pub type StatusBoard = Arc<std::sync::Mutex<Option<NodeStatus>>>;

/// A request from the client port and where its reply goes.
pub struct Incoming {
    /// The request.
    pub req: Request,
    /// The reply.
    pub reply: oneshot::Sender<Reply>,
}

/// Why a session ended.
#[derive(Debug)]
enum End {
    /// A peer failed: reconnect.
    Peer(NodeError),
    /// This node cannot go on.
    Fatal(NodeError),
}

impl From<argus_net::NetError> for End {
    fn from(e: argus_net::NetError) -> Self {
        End::Peer(e.into())
    }
}

/// The node's core: its engine, request queue and peers.
pub struct Core<S: IrisScheme> {
    cfg: NodeConfig,
    engine: Engine<S>,
    inbox: Receiver<Incoming>,
    queue: Queue<S::Share>,
    stop: Arc<AtomicBool>,
    loaded: bool,
    /// Payload bytes sent to peers in ended sessions, and in the current one.
    peer_bytes: (u64, u64),
    /// Total time spent running batches.
    busy: Duration,
    /// The longest batch so far (bounds how long the leader may hold a request).
    longest_batch: Duration,
    /// New requests refused as busy since start (`batch.max_queued`, `limits.pending_shares`).
    refused_busy: u64,
    /// Queries refused without a check since start: an eye with too few valid bits.
    refused_short: u64,
    /// Queries refused without a check since start: shares not of a valid template.
    refused_invalid: u64,
    /// Queries refused since start as mirror attacks.
    refused_mirror: u64,
    /// Whether the last new request was refused (logged once per spell of refusals).
    refusing: bool,
    /// In a session with both peers, past the consistency check (reported in the status).
    serving: bool,
    /// Activity since the last periodic log line: (start, batches, requests, busy time).
    window: (Instant, u64, u64, Duration),
    /// When abandoned pending shares were last pruned (`None`: not yet in this process).
    pruned_at: Option<Instant>,
    /// Where [`Core::publish`] puts the status.
    board: StatusBoard,
    /// The comparison chunks timed on this host ([`Core::with_chunk_times`]), from which node
    /// 0 picks for its round time and tells the others with `compare_chunk = "auto"`.
    chunk_times: Option<argus_iris::protocol::ChunkTimes>,
    /// The client that led the last batch ([`pick::pick`]).
    last_lead: Option<String>,
}

const LEADER: PartyId = 0;
/// How often a node waiting for requests looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);
/// A session that lasted this long resets the reconnection back-off.
const STABLE_SESSION: Duration = Duration::from_secs(10);
/// How long one attempt to connect to the peers may take.
const CONNECT: Duration = Duration::from_secs(10);
/// The pause after a failed attempt, doubling up to the maximum.
const RETRY_MIN: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

fn send(p: &Party, to: PartyId, m: &PeerMsg) -> Result<(), End> {
    Ok(p.net().send(to, wire::encode(m))?)
}

fn recv(p: &Party, from: PartyId) -> Result<PeerMsg, End> {
    wire::decode(&p.net().recv(from)?).map_err(|e| End::Peer(e.into()))
}

/// A peer sent something other than what the protocol expects here.
fn unexpected(what: &str, got: &PeerMsg) -> End {
    End::Peer(NodeError::Protocol(format!("expected {what}, got {got:?}")))
}

fn error(message: impl Into<String>, retry: bool) -> Reply {
    Reply::Error { message: message.into(), retry }
}

/// The reply a committed op gives.
fn reply_of(seq: u64, op: &Op) -> Reply {
    match op {
        Op::Outcome { request_id, unique, enrolled } => {
            Reply::Outcome(Outcome { request_id: request_id.clone(), unique: *unique, enrolled: *enrolled, seq })
        }
        Op::Delete { request_id, existed, .. } => {
            Reply::Deleted { request_id: request_id.clone(), existed: *existed, seq }
        }
        Op::Refused { reason, .. } => error(reason.clone(), false),
    }
}

impl<S: IrisScheme> Core<S> {
    /// A core over `engine`, fed by `inbox`; stops when `stop` is set; publishes its status on
    /// `board`.
    pub fn new(
        cfg: NodeConfig,
        engine: Engine<S>,
        inbox: Receiver<Incoming>,
        stop: Arc<AtomicBool>,
        board: StatusBoard,
    ) -> Self {
        Core {
            cfg,
            engine,
            inbox,
            queue: Queue::default(),
            stop,
            loaded: false,
            peer_bytes: (0, 0),
            busy: Duration::ZERO,
            longest_batch: Duration::ZERO,
            refused_busy: 0,
            refused_short: 0,
            refused_invalid: 0,
            refused_mirror: 0,
            refusing: false,
            serving: false,
            window: (Instant::now(), 0, 0, Duration::ZERO),
            pruned_at: None,
            board,
            chunk_times: None,
            last_lead: None,
        }
    }

    /// Sets the comparison chunks timed on this host
    /// ([`argus_iris::protocol::plan_compare_chunk`]): node 0's pick from them is the chunk the
    /// three nodes use with `compare_chunk = "auto"` on one machine or a LAN.
    pub fn with_chunk_times(mut self, times: Option<argus_iris::protocol::ChunkTimes>) -> Self {
        self.chunk_times = times;
        self
    }

    /// Publishes the current status (see [`StatusBoard`]); a store error leaves the old one.
    fn publish(&mut self) {
        if let Ok(s) = self.status() {
            *self.board.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        }
    }

    /// Runs sessions until stopped or a fatal error (an inconsistent store, a store failure).
    pub fn run(mut self) -> Result<(), NodeError> {
        let identity = tcp::TlsIdentity::from_pem_dir(&self.cfg.pki, self.cfg.id)?;
        let id = self.cfg.id;
        // One listener for the node's life: a peer that dials between two of our attempts waits
        // in its backlog instead of being refused, so attempts out of phase still meet.
        let addr = self.cfg.peers[id];
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| NodeError::Io { context: format!("listening for peers on {addr}"), source: e })?;
        let mut pause = RETRY_MIN;
        // A first snapshot (the store's summary) so that status is answered while the node waits
        // for its peers, before its first session.
        self.publish();
        while !self.stop.load(Ordering::Relaxed) {
            tracing::info!(node = id, "connecting to peers");
            let Some(attempt) = self.connect(&listener, &identity) else { break };
            // The seeds are agreed over the new links (one round): a peer that goes away meanwhile
            // (a rolling restart) fails this attempt like a failed connection, not the node.
            let party = attempt.and_then(|net| {
                net.set_timeout(self.cfg.peer_timeout());
                Ok(Party::new(net)?)
            });
            let mut p = match party {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(node = id, "peers not reachable: {e}");
                    self.fail_queue("this node is not connected to its peers");
                    // Some failures are immediate (a refused identity): pause, answering clients.
                    self.drain_for(pause);
                    pause = (pause * 2).min(RETRY_MAX);
                    continue;
                }
            };
            let started = Instant::now();
            let end = self.session(&mut p);
            self.serving = false;
            self.peer_bytes = (self.peer_bytes.0 + p.stats().bytes_sent, 0);
            self.publish();
            match end {
                Ok(()) => break,
                Err(End::Fatal(e)) => return Err(e),
                Err(End::Peer(e)) => {
                    tracing::warn!(node = id, "session ended: {e}");
                    self.fail_queue("a peer failed; retry");
                    // A session that fails as soon as it starts (a peer failing it each time)
                    // backs off like a failed connection instead of reconnecting in a loop.
                    if started.elapsed() < STABLE_SESSION {
                        self.drain_for(pause);
                        pause = (pause * 2).min(RETRY_MAX);
                    } else {
                        pause = RETRY_MIN;
                    }
                }
            }
        }
        // Stopped, between batches: what waits has no batch here any more, so its clients retry
        // (at a node that is back, or at the restarted one: request ids keep that idempotent).
        let why = format!("node {id} is shutting down; retry");
        let mut waiting = self.queue.len();
        self.fail_queue(&why);
        // And what the client port handed over since the last batch, still unread.
        while let Ok(m) = self.inbox.try_recv() {
            waiting += 1;
            let _ = m.reply.send(error(why.as_str(), true));
        }
        tracing::info!(node = id, last_seq = self.engine.last_seq(), waiting, "stopped (no batch running)");
        Ok(())
    }

    /// One attempt (of up to [`CONNECT`]) to connect to the peers, on a helper thread so that a
    /// stop is not held up by peers that are down: `None` if the node is stopped meanwhile (the
    /// attempt is then left to end by itself).
    fn connect(
        &self,
        listener: &std::net::TcpListener,
        identity: &tcp::TlsIdentity,
    ) -> Option<Result<argus_net::Network, NodeError>> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (id, peers, identity) = (self.cfg.id, self.cfg.peers.clone(), identity.clone());
        let listener = listener.try_clone();
        std::thread::spawn(move || {
            let attempt =
                listener.map_err(|e| NodeError::Io { context: "peer listener".into(), source: e }).and_then(|l| {
                    tcp::connect_with_listener(id, l, &peers, &identity, NetConfig::with_timeout(CONNECT))
                        .map_err(NodeError::from)
                });
            let _ = tx.send(attempt);
        });
        loop {
            match rx.recv_timeout(STOP_POLL) {
                Ok(attempt) => return Some(attempt),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) if !self.stop.load(Ordering::Relaxed) => {}
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => return None,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    return Some(Err(NodeError::Protocol("the connection attempt ended without a result".into())))
                }
            }
        }
    }

    fn status(&mut self) -> Result<NodeStatus, NodeError> {
        let host = argus_math::kernels::host();
        Ok(NodeStatus {
            id: self.cfg.id,
            scheme: self.engine.scheme.name().to_string(),
            summary: self.engine.summary()?,
            db_bytes: self.engine.db_bytes() as u64,
            rss_bytes: crate::rss_bytes(),
            share_bytes_per_code_bit: self.engine.scheme.share_bytes_per_code_bit(),
            peer_bytes_sent: self.peer_bytes.0 + self.peer_bytes.1,
            queued: self.queue.len(),
            refused_busy: self.refused_busy,
            refused_short: self.refused_short,
            refused_invalid: self.refused_invalid,
            refused_mirror: self.refused_mirror,
            serving: self.serving,
            kernel: argus_iris::protocol::kernel_name(
                &self.engine.scheme,
                self.engine.geometry(),
                &self.engine.cfg,
                self.cfg.batch.max,
            ),
            cpu: host.cpu,
            isa: host.isa.to_string(),
        })
    }
}
