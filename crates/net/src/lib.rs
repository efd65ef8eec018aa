//! Argus net layer: point-to-point message transport between the MPC parties.
//!
//! Protocols are synchronous code (one thread per party). Each party holds a
//! [`Network`], its endpoint to every other party, and calls
//! [`Network::send`] / [`Network::recv`] on it:
//!
//! * [`Network::send`] only queues the message and never blocks on the peer,
//!   so "everybody sends a large message, then everybody receives" cannot
//!   deadlock.
//! * [`Network::recv`] returns the next message from a given peer, in the
//!   order the peer sent them, or a typed [`NetError`] after at most
//!   [`Network::timeout`] (a silent peer gives [`NetError::Timeout`], a peer
//!   whose process or endpoint went away gives [`NetError::PeerClosed`]).
//!
//! Two backends build [`Network`]s:
//!
//! * [`mem::connect`]: in-memory channels, for tests running every party as a
//!   thread of one process;
//! * [`tcp::connect`]: TCP with mutual TLS (one CA, one certificate per
//!   party), for separate OS processes or machines. [`tcp::connect_local`]
//!   runs all parties in one process over loopback.
//!
//! Both backends can simulate a slower link with a [`Shaper`] (latency and
//! bandwidth), applied on the receive side.
//!
//! Message contents are never logged.
//!
//! # Example
//!
//! Three parties as threads of one process; each sends its id to the next
//! party and receives from the previous one (one round):
//!
//! ```
//! use argus_net::{mem, NetConfig};
//!
//! let nets = mem::connect(3, NetConfig::default()); // or tcp::connect_local(3, ..)?
//! std::thread::scope(|s| {
//!     for net in &nets {
//!         s.spawn(move || {
//!             let before = net.stats();
//!             net.send(net.next(), vec![net.id() as u8]).unwrap();
//!             assert_eq!(net.recv(net.prev()).unwrap(), vec![net.prev() as u8]);
//!             let used = net.stats() - before;
//!             assert_eq!((used.bytes_sent, used.rounds), (1, 1));
//!         });
//!     }
//! });
//! ```
//!
//! Separate processes instead load their identity from PEM files written by
//! [`tcp::Pki::write_pem`] and call [`tcp::connect`]:
//!
//! ```no_run
//! # fn main() -> Result<(), argus_net::NetError> {
//! use argus_net::{tcp, NetConfig};
//!
//! let id = 1;
//! let addrs = ["10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"].map(|a| a.parse().unwrap());
//! let identity = tcp::TlsIdentity::from_pem_dir("/etc/argus/pki", id)?;
//! let net = tcp::connect(id, &addrs, &identity, NetConfig::default())?;
//! net.send(net.next(), b"hello".to_vec())?;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

pub mod mem;
pub mod tcp;

/// Index of a party, `0..n`.
pub type PartyId = usize;

/// Largest message (payload bytes) that can be sent, 1 GiB. Larger messages
/// are refused by [`Network::send`] and, on the TCP backend, a frame header
/// announcing more is treated as a protocol violation by the receiver.
pub const MAX_MESSAGE_LEN: usize = 1 << 30;

/// Errors of the transport layer.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Nothing arrived from `peer` within `after`.
    #[error("party {peer} sent nothing for {after:?}")]
    Timeout {
        /// The silent peer.
        peer: PartyId,
        /// How long this party waited.
        after: Duration,
    },
    /// The link to `peer` is closed: the peer dropped its endpoint, its
    /// process died, or the connection was reset. Messages that arrived before
    /// the close are still delivered first.
    #[error("connection to party {peer} is closed")]
    PeerClosed {
        /// The peer whose link is closed.
        peer: PartyId,
    },
    /// `party` is not in `0..n`.
    #[error("unknown party {party} (the network has {n} parties)")]
    UnknownParty {
        /// The requested party.
        party: PartyId,
        /// Number of parties.
        n: usize,
    },
    /// A party tried to send to or receive from itself.
    #[error("party {party} cannot send messages to itself")]
    SelfMessage {
        /// This party.
        party: PartyId,
    },
    /// The parties disagree about how many parties there are.
    #[error("wrong number of parties: expected {expected}, got {got}")]
    WrongPartyCount {
        /// The number of parties this party was configured with.
        expected: usize,
        /// The number of parties announced or provided.
        got: usize,
    },
    /// TLS handshake or identity check failed.
    #[error("TLS error{}: {reason}", fmt_peer(.peer))]
    Tls {
        /// The peer, when known (an incoming connection's identity is unknown
        /// until its certificate and claimed id are checked).
        peer: Option<PartyId>,
        /// Human readable reason, e.g. "peer presented a certificate not
        /// signed by the party CA".
        reason: String,
    },
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A peer violated the framing protocol (e.g. an oversize frame), or a
    /// message is too large to send.
    #[error("bad frame from/to party {peer}: {reason}")]
    Frame {
        /// The peer concerned.
        peer: PartyId,
        /// What was wrong.
        reason: String,
    },
    /// Certificates could not be generated, e.g. for a client name that cannot name one.
    #[error("{reason}")]
    Certificate {
        /// What was wrong, and how to fix it.
        reason: String,
    },
}

fn fmt_peer(peer: &Option<PartyId>) -> String {
    match peer {
        Some(p) => format!(" with party {p}"),
        None => String::new(),
    }
}

/// Cumulative traffic counters of one party (see [`Network::stats`]).
///
/// Byte counts are payload bytes (framing and TLS overhead are not counted).
///
/// Round counting rule: a party's `rounds` increments on a [`Network::send`]
/// when this is its first send, or when it has completed at least one
/// [`Network::recv`] since its previous send. So "send to next, receive from
/// prev" repeated k times counts k rounds, and sending to two peers before
/// receiving counts one round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Payload bytes passed to successful [`Network::send`] calls.
    pub bytes_sent: u64,
    /// Payload bytes returned by successful [`Network::recv`] calls.
    pub bytes_received: u64,
    /// Number of successful [`Network::send`] calls.
    pub messages_sent: u64,
    /// Communication rounds (see the type documentation for the rule).
    pub rounds: u64,
}

impl std::ops::Sub for Stats {
    type Output = Stats;

    /// Field-wise difference (saturating at 0), so that
    /// `let before = net.stats(); protocol(); let used = net.stats() - before;`
    /// gives the cost of `protocol`.
    fn sub(self, rhs: Stats) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent.saturating_sub(rhs.bytes_sent),
            bytes_received: self.bytes_received.saturating_sub(rhs.bytes_received),
            messages_sent: self.messages_sent.saturating_sub(rhs.messages_sent),
            rounds: self.rounds.saturating_sub(rhs.rounds),
        }
    }
}

impl std::ops::Add for Stats {
    type Output = Stats;

    /// Field-wise sum, e.g. to total the stats of all parties.
    fn add(self, rhs: Stats) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent + rhs.bytes_sent,
            bytes_received: self.bytes_received + rhs.bytes_received,
            messages_sent: self.messages_sent + rhs.messages_sent,
            rounds: self.rounds + rhs.rounds,
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} B sent in {} messages, {} B received, {} rounds",
            self.bytes_sent, self.messages_sent, self.bytes_received, self.rounds
        )
    }
}

/// Configuration shared by both backends.
#[derive(Clone, Debug)]
pub struct NetConfig {
    /// How long [`Network::recv`] waits for a message before giving
    /// [`NetError::Timeout`]; for [`tcp::connect`] also the overall deadline
    /// for establishing all connections. Default 30 s.
    pub timeout: Duration,
    /// Optional link simulation (latency, bandwidth). Default none.
    pub shaper: Option<Shaper>,
    /// TCP: how many times a waiting [`Network::recv`] checks its sockets, yielding the CPU in
    /// between, before it sleeps until one is readable. A message arriving meanwhile costs no
    /// wake-up: three parties on two cores then complete a round in ~5 µs (median) instead of
    /// ~15 µs, which decides round-bound protocols (the OR-tree, small batches). The yields
    /// leave the core to any other runnable thread, so the spin costs little even when cores are
    /// busy; 0 turns it off (a party idle for long then burns nothing). Default 400: on the
    /// Zen 4 host a check with its yield takes ~1–2 µs, and 100 checks sometimes ran out before
    /// the message of a round came (the OR-tree at 500k: 0.59–0.60 ms with 100, 0.57 with 400
    /// or 1000, 0.67 with 20).
    pub spin_polls: u32,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig { timeout: Duration::from_secs(30), shaper: None, spin_polls: 400 }
    }
}

impl NetConfig {
    /// Default configuration with the given timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        NetConfig { timeout, ..NetConfig::default() }
    }
}

/// Simulated link: each message is delivered to the receiver `latency` after
/// it arrived, and links carry at most `bandwidth_bytes_per_sec` bytes/s
/// (serialisation delay `len / bandwidth`, queued per link).
///
/// Applied on the RECEIVE side, so it works the same for both backends and
/// across processes: per incoming link the receiver keeps `free_at`; for a
/// message of `len` bytes that arrived at time `t`:
/// `free_at = max(t, free_at) + len / bandwidth`, and the message is handed
/// to [`Network::recv`] no earlier than `deliver_at = free_at + latency`.
/// The real transfer time (if any) is not subtracted, so over TCP the
/// simulated costs add to the real ones. A message that has arrived is held
/// back until its delivery time even if that exceeds the receive timeout.
/// Over TCP `t` is when the frame is read off its socket; a thread that holds a
/// message back keeps reading every link meanwhile, so a frame from another peer
/// is stamped when it arrives, not when the hold ends.
#[derive(Clone, Copy, Debug)]
pub struct Shaper {
    /// One-way delay added to every message.
    pub latency: Duration,
    /// Link capacity in bytes per second (`None`: unlimited).
    pub bandwidth_bytes_per_sec: Option<u64>,
}

impl Shaper {
    /// Computes the delivery time of a `len`-byte message that arrived at
    /// `arrived`, updating the link's `free_at`.
    fn schedule(&self, free_at: &mut Option<Instant>, arrived: Instant, len: usize) -> Instant {
        let start = match *free_at {
            Some(f) if f > arrived => f,
            _ => arrived,
        };
        let serialisation = match self.bandwidth_bytes_per_sec {
            Some(bw) if bw > 0 => Duration::from_secs_f64(len as f64 / bw as f64),
            _ => Duration::ZERO,
        };
        let done = start + serialisation;
        *free_at = Some(done);
        done + self.latency
    }
}

/// A message as it sits in an incoming queue.
pub(crate) struct Arrived {
    pub(crate) data: Vec<u8>,
    /// When the complete message arrived at this party (shaper input).
    pub(crate) at: Instant,
}

/// Element of an incoming queue: a message, or a fatal error of the link
/// (after which the queue is closed). A closed queue means [`NetError::PeerClosed`].
pub(crate) type Incoming = Result<Arrived, NetError>;

/// How messages leave this party towards one peer.
pub(crate) enum Outgoing {
    /// In-memory: straight into the peer's incoming queue.
    Mem(Sender<Incoming>),
    /// TCP: written by the party's own thread (see [`tcp`]).
    Tcp(Arc<tcp::Shared>),
}

/// One party's link to one peer.
pub(crate) struct Link {
    pub(crate) out: Outgoing,
    pub(crate) inbox: Receiver<Incoming>,
    /// Set when the link is known dead (reader saw EOF/reset, writer failed).
    pub(crate) dead: Arc<AtomicBool>,
    /// Receive-side state; the lock also serialises concurrent `recv`s from
    /// the same peer so that messages and shaper bookkeeping stay in order.
    pub(crate) recv_state: Mutex<RecvState>,
}

#[derive(Default)]
pub(crate) struct RecvState {
    free_at: Option<Instant>,
}

impl Link {
    pub(crate) fn new(out: Outgoing, inbox: Receiver<Incoming>, dead: Arc<AtomicBool>) -> Self {
        Link { out, inbox, dead, recv_state: Mutex::new(RecvState::default()) }
    }
}

/// One party's endpoint to all others.
///
/// Cheap to share by reference; `Send + Sync` (several threads of a party may
/// send and receive concurrently; concurrent `recv`s from the same peer are
/// served one after the other).
///
/// Dropping a `Network` closes its links: peers' pending and future
/// [`recv`](Network::recv)s from this party give [`NetError::PeerClosed`]
/// once the messages already sent have been delivered. On the TCP backend the
/// drop waits (at most [`timeout`](Network::timeout)) until queued messages
/// have been handed to the operating system, so "send the last message and
/// return" is safe; do not drop a TCP `Network` from inside an async runtime.
pub struct Network {
    id: PartyId,
    n: usize,
    timeout_nanos: AtomicU64,
    shaper: Option<Shaper>,
    /// `links[j]` is the link to party `j` (`None` for `j == id`).
    // NOTE: declared before `_backend` so that the outgoing queues are closed
    // (dropped) before the backend's drop waits for the writers to finish.
    links: Vec<Option<Link>>,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    messages_sent: AtomicU64,
    rounds: AtomicU64,
    /// True before the first send and after every completed recv.
    round_open: AtomicBool,
    /// Copies of received messages while a test records this party's view (see `record_view`).
    view: std::sync::Mutex<Option<View>>,
    recording: AtomicBool,
    _backend: Backend,
}

/// Received messages with their senders, in order (a party's view).
type View = Vec<(PartyId, Vec<u8>)>;

/// Backend resources owned by a [`Network`] (dropped after the links).
pub(crate) enum Backend {
    Mem,
    /// Held for its `Drop` (flushing queued messages, closing the sessions).
    #[allow(dead_code)]
    Tcp(tcp::TcpBackend),
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("id", &self.id)
            .field("n", &self.n)
            .field("timeout", &self.timeout())
            .field("shaper", &self.shaper)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Network {
    pub(crate) fn new(id: PartyId, cfg: &NetConfig, links: Vec<Option<Link>>, backend: Backend) -> Self {
        Network {
            id,
            n: links.len(),
            timeout_nanos: AtomicU64::new(duration_nanos(cfg.timeout)),
            shaper: cfg.shaper,
            links,
            bytes_sent: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            messages_sent: AtomicU64::new(0),
            rounds: AtomicU64::new(0),
            round_open: AtomicBool::new(true),
            view: std::sync::Mutex::new(None),
            recording: AtomicBool::new(false),
            _backend: backend,
        }
    }

    /// This party's id.
    pub fn id(&self) -> PartyId {
        self.id
    }

    /// Number of parties.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The next party on the ring, `(id + 1) % n`.
    pub fn next(&self) -> PartyId {
        (self.id + 1) % self.n
    }

    /// The previous party on the ring, `(id + n - 1) % n`.
    pub fn prev(&self) -> PartyId {
        (self.id + self.n - 1) % self.n
    }

    /// How long [`recv`](Network::recv) waits before giving [`NetError::Timeout`].
    pub fn timeout(&self) -> Duration {
        Duration::from_nanos(self.timeout_nanos.load(Ordering::Relaxed))
    }

    /// Changes the receive timeout (e.g. before a long local computation of
    /// the peers, or after a slow connection phase).
    pub fn set_timeout(&self, timeout: Duration) {
        self.timeout_nanos.store(duration_nanos(timeout), Ordering::Relaxed);
    }

    /// The link simulation in force, if any.
    pub fn shaper(&self) -> Option<Shaper> {
        self.shaper
    }

    fn link(&self, peer: PartyId) -> Result<&Link, NetError> {
        if peer >= self.n {
            return Err(NetError::UnknownParty { party: peer, n: self.n });
        }
        self.links[peer].as_ref().ok_or(NetError::SelfMessage { party: self.id })
    }

    /// Queues `msg` for party `to`.
    ///
    /// Never blocks on the peer: the message is buffered (without limit) until
    /// the peer's side accepts it, so every party may send a large message at
    /// once before anybody receives. Messages to one peer are delivered in the
    /// order they were sent.
    ///
    /// Errors: [`NetError::UnknownParty`], [`NetError::SelfMessage`],
    /// [`NetError::PeerClosed`] if the link is known to be dead,
    /// [`NetError::Frame`] if `msg` is longer than [`MAX_MESSAGE_LEN`].
    /// A successful send does not guarantee delivery (the peer may die).
    pub fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), NetError> {
        let link = self.link(to)?;
        if msg.len() > MAX_MESSAGE_LEN {
            return Err(NetError::Frame {
                peer: to,
                reason: format!("message of {} bytes exceeds the limit of {} bytes", msg.len(), MAX_MESSAGE_LEN),
            });
        }
        if link.dead.load(Ordering::Acquire) {
            return Err(NetError::PeerClosed { peer: to });
        }
        let len = msg.len() as u64;
        let ok = match &link.out {
            Outgoing::Mem(tx) => tx.send(Ok(Arrived { data: msg, at: Instant::now() })).is_ok(),
            Outgoing::Tcp(links) => links.send(to, msg),
        };
        if !ok {
            link.dead.store(true, Ordering::Release);
            return Err(NetError::PeerClosed { peer: to });
        }
        if self.round_open.swap(false, Ordering::AcqRel) {
            self.rounds.fetch_add(1, Ordering::Relaxed);
        }
        self.messages_sent.fetch_add(1, Ordering::Relaxed);
        self.bytes_sent.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// Returns the next message from party `from`, in the order sent.
    ///
    /// Waits at most [`timeout`](Network::timeout) for the message to arrive
    /// ([`NetError::Timeout`]). With a [`Shaper`], a message that has arrived
    /// is additionally held back until its simulated delivery time.
    ///
    /// Errors: [`NetError::UnknownParty`], [`NetError::SelfMessage`],
    /// [`NetError::Timeout`], [`NetError::PeerClosed`] (immediately, once the
    /// messages that arrived before the close are drained), and on TCP a
    /// link-fatal [`NetError::Frame`] / [`NetError::Tls`] / [`NetError::Io`]
    /// once (later calls give `PeerClosed`).
    pub fn recv(&self, from: PartyId) -> Result<Vec<u8>, NetError> {
        self.recv_waiting(from, self.timeout())
    }

    /// Like [`recv`](Network::recv), but waits at most `wait` and gives `Ok(None)` if nothing
    /// arrived (the link stays usable): for event loops that poll a peer between other work.
    pub fn recv_within(&self, from: PartyId, wait: Duration) -> Result<Option<Vec<u8>>, NetError> {
        match self.recv_waiting(from, wait) {
            Ok(m) => Ok(Some(m)),
            Err(NetError::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn recv_waiting(&self, from: PartyId, timeout: Duration) -> Result<Vec<u8>, NetError> {
        let link = self.link(from)?;
        let mut state = link.recv_state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let next = match &link.out {
            Outgoing::Mem(_) => link.inbox.recv_timeout(timeout),
            Outgoing::Tcp(links) => links.recv_timeout(from, &link.inbox, timeout),
        };
        let arrived = match next {
            Ok(Ok(arrived)) => arrived,
            Ok(Err(e)) => {
                link.dead.store(true, Ordering::Release);
                return Err(e);
            }
            Err(RecvTimeoutError::Timeout) => return Err(NetError::Timeout { peer: from, after: timeout }),
            Err(RecvTimeoutError::Disconnected) => {
                link.dead.store(true, Ordering::Release);
                return Err(NetError::PeerClosed { peer: from });
            }
        };
        if let Some(shaper) = &self.shaper {
            let deliver_at = shaper.schedule(&mut state.free_at, arrived.at, arrived.data.len());
            match &link.out {
                // Frames are stamped when read: keep reading meanwhile (see `read_while_holding`).
                Outgoing::Tcp(links) => links.read_while_holding(deliver_at),
                Outgoing::Mem(_) => {
                    let now = Instant::now();
                    if deliver_at > now {
                        std::thread::sleep(deliver_at - now);
                    }
                }
            }
        }
        drop(state);
        self.bytes_received.fetch_add(arrived.data.len() as u64, Ordering::Relaxed);
        self.round_open.store(true, Ordering::Release);
        if self.recording.load(Ordering::Relaxed) {
            let mut view = self.view.lock().unwrap_or_else(|p| p.into_inner());
            view.get_or_insert_with(Vec::new).push((from, arrived.data.clone()));
        }
        Ok(arrived.data)
    }

    /// Starts keeping a copy of every received message: the party's *view*, for the statistical
    /// tests that check it does not depend on the inputs. Off by default (no cost then).
    pub fn record_view(&self) {
        *self.view.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
        self.recording.store(true, Ordering::Relaxed);
    }

    /// Stops recording and returns the messages received since [`record_view`](Network::record_view),
    /// in order, with their senders.
    pub fn take_view(&self) -> Vec<(PartyId, Vec<u8>)> {
        self.recording.store(false, Ordering::Relaxed);
        self.view.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default()
    }

    /// Cumulative counters of this party (payload bytes, not framing).
    pub fn stats(&self) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            bytes_received: self.bytes_received.load(Ordering::Relaxed),
            messages_sent: self.messages_sent.load(Ordering::Relaxed),
            rounds: self.rounds.load(Ordering::Relaxed),
        }
    }
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Network>();
    is::<NetError>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaper_schedule_queues_per_link() {
        let s = Shaper { latency: Duration::from_millis(10), bandwidth_bytes_per_sec: Some(1000) };
        let t0 = Instant::now();
        let mut free_at = None;
        // 100 bytes at 1000 B/s = 100 ms serialisation.
        let d1 = s.schedule(&mut free_at, t0, 100);
        assert_eq!(d1 - t0, Duration::from_millis(110));
        // Second message arriving at the same time queues behind the first.
        let d2 = s.schedule(&mut free_at, t0, 100);
        assert_eq!(d2 - t0, Duration::from_millis(210));
        // A message arriving after the link is free again starts fresh.
        let t1 = t0 + Duration::from_secs(1);
        let d3 = s.schedule(&mut free_at, t1, 0);
        assert_eq!(d3 - t1, Duration::from_millis(10));
    }

    #[test]
    fn error_messages() {
        let e = NetError::Timeout { peer: 2, after: Duration::from_secs(5) };
        assert_eq!(e.to_string(), "party 2 sent nothing for 5s");
        let e = NetError::Tls { peer: Some(1), reason: "x".into() };
        assert_eq!(e.to_string(), "TLS error with party 1: x");
    }
}
