//! TCP backend with mutual TLS, for parties in separate OS processes (or
//! machines), or in threads of one process ([`connect_local`]).
//!
//! # Identity
//!
//! All parties trust one CA ([`Pki`]); party `i` holds a certificate naming
//! the DNS name `party-{i}` (see [`party_name`]). Every connection is TLS 1.3
//! with certificates on both sides, both checked against the CA:
//!
//! * the dialler checks, via the TLS server name, that the acceptor's
//!   certificate names the party it meant to reach;
//! * the dialler then announces its party id (and the number of parties); the
//!   acceptor checks that the dialler's certificate names that party, and
//!   answers "accepted" or "refused, because ...". A refused dialler gets
//!   [`NetError::Tls`] with the acceptor's reason, the acceptor gets
//!   [`NetError::Tls`] too (e.g. "certificate names party-1 but connected as
//!   party 2").
//!
//! # Dial scheme
//!
//! Party `id` listens on `addrs[id]`, dials every lower-numbered party (one
//! after the other, in increasing order), and accepts one connection from
//! every higher-numbered party (concurrently with its dialling). Refused TCP
//! connections are retried until the overall deadline [`NetConfig::timeout`],
//! so the parties may start in any order.
//!
//! Parties that retry (a service's nodes) restart their attempts out of phase.
//! So a party that dials again replaces its earlier connection, and a
//! connection whose party has closed it meanwhile is not handed back: the
//! acceptor waits for the next one, and a dialler fails with
//! [`NetError::PeerClosed`] and can try again. A retrying party should keep
//! its listener bound between attempts, so that a peer dialling in between
//! waits in the backlog rather than being refused.
//!
//! # Threads
//!
//! No I/O threads sit between a party and its sockets: [`Network::send`]
//! encrypts and writes on the caller's thread, and a [`Network::recv`] that
//! finds nothing queued polls the party's sockets itself and reads (the
//! *reader* role: one thread of the party at a time; other threads waiting in
//! `recv` are woken when their message has been queued, or take the role
//! over). A round thus costs one wake-up per message, as a bare socket does.
//! Where a socket is full, the rest of the message waits in the link's queue
//! for the party's flusher thread, so that [`Network::send`] never blocks on
//! the peer. Messages are framed as a `u32` little-endian length and the
//! payload. A tokio runtime is used only while the connections are set up.
//!
//! # Failures
//!
//! EOF or a reset on a link gives [`NetError::PeerClosed`] (after the
//! messages received before it); a peer that goes silent gives
//! [`NetError::Timeout`] after the receive timeout. Dropping a `Network`
//! waits (at most the timeout) for its queued messages to be written, then
//! closes its TLS sessions and, in the background, reads until the peers
//! close theirs (a socket closed with unread data would be reset, which can
//! destroy our own last messages in flight).

use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::{Backend, Link, NetConfig, NetError, Network, Outgoing, PartyId};

mod link;
mod pki;
mod setup;
mod sockets;

pub(crate) use sockets::Shared;

pub use pki::{
    check_client_name, client_name, client_role, party_name, ClientRole, PemPaths, Pki, TlsIdentity, OPERATOR_NAME,
};
pub use setup::{cert_names, client_port_config, tls_configs};

/// Read buffer under TLS during the set-up: rustls asks the socket for a few
/// KiB at a time; reading in large chunks instead saves most of the system calls.
const SOCKET_READ_BUFFER: usize = 64 * 1024;

/// The transport under TLS during the set-up.
pub(crate) type Io = tokio::io::BufReader<TcpStream>;

/// Wraps a connected socket for use under TLS.
pub(crate) fn wrap_io(tcp: TcpStream) -> Io {
    let _ = tcp.set_nodelay(true);
    tokio::io::BufReader::with_capacity(SOCKET_READ_BUFFER, tcp)
}

/// Takes an established session apart for the synchronous data path: the
/// TLS state, the socket, and ciphertext already read into the set-up's buffer.
fn into_parts(stream: Stream) -> std::io::Result<(rustls::Connection, std::net::TcpStream, Vec<u8>)> {
    let (io, tls): (Io, rustls::Connection) = match stream {
        tokio_rustls::TlsStream::Client(s) => {
            let (io, c) = s.into_inner();
            (io, c.into())
        }
        tokio_rustls::TlsStream::Server(s) => {
            let (io, c) = s.into_inner();
            (io, c.into())
        }
    };
    let leftover = io.buffer().to_vec();
    Ok((tls, io.into_inner().into_std()?, leftover))
}
/// An established, authenticated connection.
pub(crate) type Stream = tokio_rustls::TlsStream<Io>;

fn io_err(context: impl Into<String>, source: std::io::Error) -> NetError {
    NetError::Io { context: context.into(), source }
}

/// Connects party `id` to all others: listens on `addrs[id]` and proceeds as
/// [`connect_with_listener`]. `addrs.len()` is the number of parties.
pub fn connect(id: PartyId, addrs: &[SocketAddr], identity: &TlsIdentity, cfg: NetConfig) -> Result<Network, NetError> {
    let n = addrs.len();
    if id >= n {
        return Err(NetError::UnknownParty { party: id, n });
    }
    let listener =
        StdTcpListener::bind(addrs[id]).map_err(|e| io_err(format!("party {id} listening on {}", addrs[id]), e))?;
    connect_with_listener(id, listener, addrs, identity, cfg)
}

/// Connects party `id` to all others, accepting on an already bound
/// `listener` (e.g. bound to port 0 and its address then told to the other
/// parties); `addrs[id]` is not used.
///
/// Dials every party `j < id` at `addrs[j]` and accepts every party `j > id`
/// (see the [module documentation](self)); returns when all links are
/// established and authenticated, or with an error after at most
/// `cfg.timeout`. Errors: [`NetError::Tls`] for a refused or refusing peer,
/// [`NetError::WrongPartyCount`] if a peer has a different number of parties,
/// [`NetError::Timeout`] if a higher-numbered party did not connect in time,
/// [`NetError::Io`] if a lower-numbered party could not be reached.
pub fn connect_with_listener(
    id: PartyId,
    listener: StdTcpListener,
    addrs: &[SocketAddr],
    identity: &TlsIdentity,
    cfg: NetConfig,
) -> Result<Network, NetError> {
    let n = addrs.len();
    if id >= n {
        return Err(NetError::UnknownParty { party: id, n });
    }
    if n > u32::MAX as usize {
        return Err(NetError::WrongPartyCount { expected: u32::MAX as usize, got: n });
    }
    let start = Instant::now();
    let ctx = Arc::new(setup::TlsContext::new(identity)?);
    // The set-up (dialling, accepting, handshakes, with deadlines) runs on a
    // small runtime that is dropped once the links are established.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| io_err("starting the set-up runtime", e))?;
    listener.set_nonblocking(true).map_err(|e| io_err("configuring the listener", e))?;

    let plan = Arc::new(setup::Plan {
        id,
        addrs: addrs.to_vec(),
        timeout: cfg.timeout,
        deadline: tokio::time::Instant::from_std(start + cfg.timeout),
    });
    let parts = runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::from_std(listener).map_err(|e| io_err("registering the listener", e))?;
        let mut tasks = JoinSet::new();
        tasks.spawn(setup::dial_all(ctx.clone(), plan.clone()));
        if id + 1 < n {
            tasks.spawn(setup::accept_all(ctx.clone(), plan.clone(), listener));
        }
        let mut streams: Vec<Option<Stream>> = (0..n).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(list)) => {
                    for (peer, s) in list {
                        streams[peer] = Some(s);
                    }
                }
                Ok(Err(e)) => {
                    tasks.abort_all();
                    return Err(e);
                }
                Err(join_error) => {
                    tasks.abort_all();
                    if join_error.is_panic() {
                        std::panic::resume_unwind(join_error.into_panic());
                    }
                    return Err(io_err("connection setup", std::io::Error::other(join_error.to_string())));
                }
            }
        }
        // A party we dialled may have given up on its attempt meanwhile (and will accept again).
        if let Some(peer) = (0..id).find(|&p| streams[p].as_ref().is_some_and(setup::closed_by_peer)) {
            return Err(NetError::PeerClosed { peer });
        }
        streams
            .into_iter()
            .map(|s| s.map(into_parts).transpose().map_err(|e| io_err("taking over an established link", e)))
            .collect::<Result<Vec<_>, _>>()
    })?;
    drop(runtime);
    tracing::debug!(party = id, n, elapsed = ?start.elapsed(), "all links established");

    let mut conns = Vec::with_capacity(n);
    let mut inboxes = Vec::with_capacity(n);
    for (peer, part) in parts.into_iter().enumerate() {
        let Some((tls, sock, leftover)) = part else {
            conns.push(None);
            inboxes.push(None);
            continue;
        };
        let (inbox_tx, inbox_rx) = crossbeam_channel::unbounded();
        let dead = Arc::new(AtomicBool::new(false));
        let mut conn = link::Conn::new(peer, tls, sock, &leftover, inbox_tx, dead.clone())
            .map_err(|e| io_err("configuring a link's socket", e))?;
        // Whatever arrived with the set-up's last messages.
        conn.read_available();
        conns.push(Some(conn));
        inboxes.push(Some((inbox_rx, dead)));
    }
    let shared = Arc::new(
        sockets::Shared::new(conns, cfg.spin_polls).map_err(|e| io_err("creating the flusher's wake-up pipe", e))?,
    );
    let flusher = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name(format!("argus-net-{id}-flush"))
            .spawn(move || shared.flusher())
            .map_err(|e| io_err("starting the flusher thread", e))?
    };
    let links = inboxes
        .into_iter()
        .map(|l| l.map(|(inbox, dead)| Link::new(Outgoing::Tcp(shared.clone()), inbox, dead)))
        .collect();
    let backend = TcpBackend { shared, flusher: Some(flusher), linger: cfg.timeout };
    Ok(Network::new(id, &cfg, links, Backend::Tcp(backend)))
}

/// Connects `n` parties over loopback TLS in threads of this process, with a
/// fresh [`Pki`] and free ports (listeners bound to `127.0.0.1:0`), and
/// returns their endpoints (element `i` is party `i`). For tests and
/// benchmarks.
pub fn connect_local(n: usize, cfg: NetConfig) -> Result<Vec<Network>, NetError> {
    let pki = Pki::generate(n);
    let listeners = (0..n)
        .map(|_| {
            StdTcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).map_err(|e| io_err("binding a loopback port", e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr().map_err(|e| io_err("local address", e)))
        .collect::<Result<Vec<_>, _>>()?;
    let results: Vec<Result<Network, NetError>> = std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, listener)| {
                let (addrs, identity, cfg) = (&addrs, pki.identity(i), cfg.clone());
                s.spawn(move || connect_with_listener(i, listener, addrs, &identity, cfg))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    results.into_iter().collect()
}

/// Shutdown bookkeeping of a TCP [`Network`].
pub(crate) struct TcpBackend {
    shared: Arc<sockets::Shared>,
    flusher: Option<std::thread::JoinHandle<()>>,
    linger: Duration,
}

impl Drop for TcpBackend {
    fn drop(&mut self) {
        // The links are dropped before the backend: the flusher now writes
        // what is queued (at most until the deadline) and ends.
        let deadline = Instant::now() + self.linger;
        self.shared.stop(deadline);
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
        self.shared.close_write(deadline);
        // Keep reading (and discarding) until the peers close too, so that
        // our sockets are not reset with unread data; in the background, so
        // that the drop does not wait for the peers.
        let shared = self.shared.clone();
        let lingering =
            std::thread::Builder::new().name("argus-net-linger".into()).spawn(move || shared.drain(deadline));
        if let Err(e) = lingering {
            tracing::warn!(error = %e, "could not start the linger thread");
        }
    }
}
