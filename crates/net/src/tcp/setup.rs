//! Connection establishment: TLS configuration, dialling, accepting and the
//! identity check.
//!
//! Wire protocol of a fresh connection, after the TLS 1.3 handshake (in which
//! both sides present a certificate that must chain to the party CA, and the
//! dialler checks that the acceptor's certificate names `party-{j}`):
//!
//! 1. the dialler sends a hello: `b"ARGUSNET"`, protocol version, its party
//!    id and the number of parties (u32 little-endian each);
//! 2. the acceptor checks the hello and that the dialler's certificate names
//!    the party it claims to be, and answers with a status byte (0 = accepted,
//!    1 = identity refused, 2 = wrong number of parties), a u32 (the
//!    acceptor's number of parties) and a reason (u16 length + UTF-8).
//!
//! After that the connection carries frames (see [`super::link`]).

use std::collections::BTreeSet;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::verify_server_name;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::server::{ParsedCertificate, WebPkiClientVerifier};
use rustls::{CipherSuite, ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{sleep, timeout_at, Instant};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::link::is_disconnect;
use super::{party_name, wrap_io, Io, Stream, TlsIdentity};
use crate::{NetError, PartyId};

const MAGIC: &[u8; 8] = b"ARGUSNET";
const VERSION: u32 = 1;
const HELLO_LEN: usize = 8 + 4 + 4 + 4;

const STATUS_OK: u8 = 0;
const STATUS_IDENTITY: u8 = 1;
const STATUS_PARTY_COUNT: u8 = 2;

/// The TLS client and server configurations of one party.
pub(crate) struct TlsContext {
    connector: TlsConnector,
    acceptor: TlsAcceptor,
}

/// The `ring` provider, preferring AES-128-GCM (fastest with AES-NI).
fn provider() -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites.sort_by_key(|s| s.suite() != CipherSuite::TLS13_AES_128_GCM_SHA256);
    Arc::new(p)
}

fn config_err(what: &str, e: impl std::fmt::Display) -> NetError {
    NetError::Tls { peer: None, reason: format!("{what}: {e}") }
}

impl TlsContext {
    pub(crate) fn new(identity: &TlsIdentity) -> Result<Self, NetError> {
        let provider = provider();
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from(identity.ca_cert_der.clone()))
            .map_err(|e| config_err("invalid CA certificate", e))?;
        let roots = Arc::new(roots);
        let (chain, key) = own_cert(identity);
        let server = server_config(identity, roots.clone())?;

        // `with_root_certificates` builds the standard WebPKI server verifier
        // with this builder's (ring) provider.
        let mut client = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| config_err("TLS client configuration", e))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| config_err("own certificate or key", e))?;
        client.resumption = rustls::client::Resumption::disabled();

        Ok(TlsContext { connector: TlsConnector::from(Arc::new(client)), acceptor: TlsAcceptor::from(server) })
    }
}

/// The TLS 1.3 configurations of `identity` (server side requiring a client certificate that
/// chains to the CA; client side presenting `identity`'s certificate and trusting only the CA),
/// for services built beside the party network (e.g. a node's client port).
pub fn tls_configs(identity: &TlsIdentity) -> Result<(Arc<ServerConfig>, Arc<ClientConfig>), NetError> {
    let ctx = TlsContext::new(identity)?;
    Ok((ctx.acceptor.config().clone(), ctx.connector.config().clone()))
}

/// The TLS 1.3 server configuration of a node's client port: `identity`'s certificate, and client
/// certificates required to chain to `client_ca_der` (the client CA), not to the party CA: a
/// party's certificate is no client's, and a client's is refused at the peer ports.
pub fn client_port_config(identity: &TlsIdentity, client_ca_der: &[u8]) -> Result<Arc<ServerConfig>, NetError> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(client_ca_der.to_vec()))
        .map_err(|e| config_err("invalid client CA certificate", e))?;
    server_config(identity, Arc::new(roots))
}

/// `identity`'s certificate chain and key.
fn own_cert(identity: &TlsIdentity) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let chain = vec![CertificateDer::from(identity.cert_der.clone())];
    (chain, PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(identity.key_der.clone())))
}

/// A TLS 1.3 server presenting `identity`'s certificate that requires client certificates
/// chaining to `roots`; no session tickets.
fn server_config(identity: &TlsIdentity, roots: Arc<RootCertStore>) -> Result<Arc<ServerConfig>, NetError> {
    let provider = provider();
    let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| config_err("building the client certificate verifier", e))?;
    let (chain, key) = own_cert(identity);
    let mut server = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| config_err("TLS server configuration", e))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| config_err("own certificate or key", e))?;
    server.send_tls13_tickets = 0;
    Ok(Arc::new(server))
}

/// Whether the (CA-verified) certificate `cert` names the DNS name `name`.
pub fn cert_names(cert: &CertificateDer<'_>, name: &str) -> bool {
    let (Ok(parsed), Ok(name)) = (ParsedCertificate::try_from(cert), ServerName::try_from(name.to_string())) else {
        return false;
    };
    verify_server_name(&parsed, &name).is_ok()
}

/// What this party is and where everybody listens.
pub(crate) struct Plan {
    pub(crate) id: PartyId,
    pub(crate) addrs: Vec<SocketAddr>,
    pub(crate) timeout: Duration,
    pub(crate) deadline: Instant,
}

impl Plan {
    fn n(&self) -> usize {
        self.addrs.len()
    }
}

/// Human readable description of a rustls error seen during setup.
fn describe(err: &rustls::Error) -> String {
    use rustls::{CertificateError as C, Error as E};
    match err {
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            "peer presented a certificate not signed by the party CA".to_string()
        }
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            format!("peer presented a certificate for another party ({err})")
        }
        E::InvalidCertificate(_) => format!("peer presented an invalid certificate ({err})"),
        E::NoCertificatesPresented => "peer presented no certificate".to_string(),
        E::AlertReceived(alert) => format!(
            "peer aborted the TLS handshake (alert {alert:?}); it does not accept our \
             certificate (different party CA?)"
        ),
        other => other.to_string(),
    }
}

fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

/// Maps an I/O error of the TLS handshake or the hello exchange.
fn setup_error(e: io::Error, peer: Option<PartyId>, context: String) -> NetError {
    if let Some(r) = rustls_error(&e) {
        return NetError::Tls { peer, reason: format!("{context}: {}", describe(r)) };
    }
    if is_disconnect(&e) {
        return NetError::Tls {
            peer,
            reason: format!(
                "{context}: connection closed during the handshake (the peer probably \
                 refused our certificate)"
            ),
        };
    }
    NetError::Io { context, source: e }
}

fn timed_out(what: String, after: Duration) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} within {after:?}"))
}

/// Dials every lower-numbered party, one after the other, retrying refused
/// TCP connections until the deadline.
pub(crate) async fn dial_all(ctx: Arc<TlsContext>, plan: Arc<Plan>) -> Result<Vec<(PartyId, Stream)>, NetError> {
    let mut out = Vec::with_capacity(plan.id);
    for peer in 0..plan.id {
        let stream = dial(&ctx, &plan, peer).await?;
        out.push((peer, stream));
    }
    Ok(out)
}

async fn dial(ctx: &TlsContext, plan: &Plan, peer: PartyId) -> Result<Stream, NetError> {
    let me = plan.id;
    let addr = plan.addrs[peer];
    let context = format!("party {me} connecting to party {peer} at {addr}");
    let mut backoff = Duration::from_millis(5);
    let tcp = loop {
        match timeout_at(plan.deadline, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => break s,
            Ok(Err(e)) => {
                if Instant::now() + backoff >= plan.deadline {
                    return Err(NetError::Io {
                        context: format!("{context} (gave up after {:?})", plan.timeout),
                        source: e,
                    });
                }
                tracing::trace!(party = me, peer, error = %e, "connect failed, retrying");
                sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(100));
            }
            Err(_) => {
                return Err(NetError::Io { source: timed_out("no TCP connection".into(), plan.timeout), context })
            }
        }
    };
    let name = ServerName::try_from(party_name(peer)).expect("party names are valid DNS names");
    let mut tls = match timeout_at(plan.deadline, ctx.connector.connect(name, wrap_io(tcp))).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(setup_error(e, Some(peer), context)),
        Err(_) => {
            return Err(NetError::Io { source: timed_out("TLS handshake not completed".into(), plan.timeout), context })
        }
    };

    let mut hello = [0u8; HELLO_LEN];
    hello[..8].copy_from_slice(MAGIC);
    hello[8..12].copy_from_slice(&VERSION.to_le_bytes());
    hello[12..16].copy_from_slice(&(me as u32).to_le_bytes());
    hello[16..20].copy_from_slice(&(plan.n() as u32).to_le_bytes());
    let exchange = async {
        tls.write_all(&hello).await?;
        tls.flush().await?;
        let mut head = [0u8; 7];
        tls.read_exact(&mut head).await?;
        let status = head[0];
        let value = u32::from_le_bytes(head[1..5].try_into().unwrap());
        let len = u16::from_le_bytes(head[5..7].try_into().unwrap()) as usize;
        let mut reason = vec![0u8; len];
        tls.read_exact(&mut reason).await?;
        Ok::<_, io::Error>((status, value, String::from_utf8_lossy(&reason).into_owned()))
    };
    let (status, value, reason) = match timeout_at(plan.deadline, exchange).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(setup_error(e, Some(peer), context)),
        Err(_) => {
            return Err(NetError::Io { source: timed_out("no answer to our hello".into(), plan.timeout), context })
        }
    };
    match status {
        STATUS_OK => {
            tracing::debug!(party = me, peer, %addr, "connected");
            Ok(tokio_rustls::TlsStream::Client(tls))
        }
        STATUS_PARTY_COUNT => Err(NetError::WrongPartyCount { expected: plan.n(), got: value as usize }),
        _ => Err(NetError::Tls { peer: Some(peer), reason: format!("party {peer} refused the connection: {reason}") }),
    }
}

/// Accepts one connection from every higher-numbered party; a party that connects again before
/// the others have replaces its earlier connection.
///
/// Incoming connections are handshaken concurrently (a stalled connection
/// does not hold up the others). Connections that are not TLS, or break
/// before presenting a certificate (e.g. port scanners), are logged and
/// ignored. A peer that presents a certificate the CA did not sign, rejects
/// ours, or fails the identity check aborts the setup with [`NetError::Tls`]
/// (after being told the reason when the handshake got that far).
pub(crate) async fn accept_all(
    ctx: Arc<TlsContext>,
    plan: Arc<Plan>,
    listener: TcpListener,
) -> Result<Vec<(PartyId, Stream)>, NetError> {
    let me = plan.id;
    let n = plan.n();
    let mut pending: BTreeSet<PartyId> = (me + 1..n).collect();
    let mut out = Vec::with_capacity(pending.len());
    let mut handshakes = JoinSet::new();
    // Why the last stray connection was refused (a certificate of another CA, a client's): shown
    // if the setup then times out, since it may have been a misconfigured peer.
    let mut refused: Option<String> = None;
    loop {
        if pending.is_empty() {
            // A peer that abandoned its attempt after we accepted it has closed that connection
            // by now: wait for its next one instead of handing back a dead link.
            let stale: Vec<PartyId> = out.iter().filter(|(_, s)| closed_by_peer(s)).map(|(p, _)| *p).collect();
            if stale.is_empty() {
                break;
            }
            tracing::debug!(party = me, ?stale, "peers closed their connections; waiting for them again");
            out.retain(|(p, _)| !stale.contains(p));
            pending.extend(stale);
        }
        let first_missing = *pending.first().expect("not empty");
        tokio::select! {
            accepted = listener.accept() => {
                let (tcp, from) = accepted.map_err(|e| NetError::Io {
                    context: format!("party {me} accepting connections"),
                    source: e,
                })?;
                handshakes.spawn(handshake(ctx.clone(), plan.clone(), tcp, from));
            }
            Some(joined) = handshakes.join_next(), if !handshakes.is_empty() => {
                let (mut tls, hello, from) = match joined.map_err(join_error)?? {
                    Incoming::Hello(tls, hello, from) => (*tls, hello, from),
                    Incoming::Stray(reason) => {
                        refused = reason.or(refused);
                        continue;
                    }
                };
                let context = format!("party {me} accepting a connection from {from}");
                let (status, err) = match check_hello(&hello, &tls, me, n) {
                    Ok(claimed) => {
                        let reply = encode_reply(STATUS_OK, n, "");
                        let sent = async {
                            tls.write_all(&reply).await?;
                            tls.flush().await
                        };
                        match timeout_at(plan.deadline, sent).await {
                            Ok(Ok(())) => {}
                            Ok(Err(e)) => return Err(setup_error(e, Some(claimed), context)),
                            Err(_) => {
                                return Err(NetError::Io {
                                    source: timed_out("hello answer not sent".into(), plan.timeout),
                                    context,
                                })
                            }
                        }
                        tracing::debug!(party = me, peer = claimed, %from, "accepted");
                        let stream = tokio_rustls::TlsStream::Server(tls);
                        if pending.remove(&claimed) {
                            out.push((claimed, stream));
                        } else if let Some(slot) = out.iter_mut().find(|(p, _)| *p == claimed) {
                            // The peer gave up on its earlier connection and dialled again
                            // (its own attempt ended first): the newer one is the live one.
                            tracing::debug!(party = me, peer = claimed, "replacing an earlier connection");
                            slot.1 = stream;
                        }
                        continue;
                    }
                    Err(Refusal::PartyCount(got)) => (
                        STATUS_PARTY_COUNT,
                        NetError::WrongPartyCount { expected: n, got },
                    ),
                    Err(Refusal::Identity(peer, reason)) => {
                        (STATUS_IDENTITY, NetError::Tls { peer, reason })
                    }
                };
                let reason = match &err {
                    NetError::Tls { reason, .. } => reason.clone(),
                    other => other.to_string(),
                };
                tracing::warn!(party = me, %from, %reason, "refusing connection");
                let reply = encode_reply(status, n, &reason);
                let _ = timeout_at(plan.deadline, async {
                    tls.write_all(&reply).await?;
                    tls.shutdown().await
                })
                .await;
                return Err(err);
            }
            _ = tokio::time::sleep_until(plan.deadline) => {
                return Err(match refused {
                    Some(reason) => NetError::Tls {
                        peer: None,
                        reason: format!(
                            "no connection from party {first_missing} within {:?}; refused a connection: {reason}",
                            plan.timeout
                        ),
                    },
                    None => NetError::Timeout { peer: first_missing, after: plan.timeout },
                });
            }
        }
    }
    Ok(out)
}

/// Whether the peer has closed `stream` already (end of stream waiting, nothing unread): a
/// connection left over from an attempt the peer abandoned. Best effort: a close still in flight
/// is not seen, and then the first message on the link fails instead.
pub(crate) fn closed_by_peer(stream: &Stream) -> bool {
    let io = stream.get_ref().0;
    if !io.buffer().is_empty() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut byte = 0u8;
        // SAFETY: a one-byte peek into a live local, on a socket this stream owns.
        let r = unsafe {
            libc::recv(io.get_ref().as_raw_fd(), (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
        };
        r == 0
    }
    #[cfg(not(unix))]
    false
}

fn join_error(e: tokio::task::JoinError) -> NetError {
    if e.is_panic() {
        std::panic::resume_unwind(e.into_panic());
    }
    NetError::Io { context: "connection setup".into(), source: io::Error::other(e.to_string()) }
}

/// Whether a rustls error means the other end authenticated wrongly (a certificate of another CA,
/// none, or our own refused), as opposed to a connection that is not TLS at all. Either way an
/// incoming connection is then a stray, ignored; the reason is kept for the time-out error.
fn is_certificate_problem(e: &rustls::Error) -> bool {
    matches!(
        e,
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented | rustls::Error::AlertReceived(_)
    )
}

/// An incoming connection after its TLS handshake.
enum Incoming {
    /// A party-CA certificate and a hello.
    Hello(Box<tokio_rustls::server::TlsStream<Io>>, [u8; HELLO_LEN], SocketAddr),
    /// Not a party (no TLS, a certificate of another CA — e.g. a client's — or none): ignored,
    /// with why if it presented the wrong certificate.
    Stray(Option<String>),
}

/// TLS handshake and hello of one incoming connection. Only a party-CA certificate gets to the
/// hello; anything else is a stray, never an error that ends the set-up.
async fn handshake(
    ctx: Arc<TlsContext>,
    plan: Arc<Plan>,
    tcp: TcpStream,
    from: SocketAddr,
) -> Result<Incoming, NetError> {
    let me = plan.id;
    let context = format!("party {me} accepting a connection from {from}");
    let mut tls = match timeout_at(plan.deadline, ctx.acceptor.accept(wrap_io(tcp))).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let reason =
                rustls_error(&e).filter(|r| is_certificate_problem(r)).map(|r| format!("{from}: {}", describe(r)));
            tracing::warn!(party = me, %from, error = %e, "ignoring a connection that failed the TLS handshake");
            return Ok(Incoming::Stray(reason));
        }
        Err(_) => {
            tracing::warn!(party = me, %from, "ignoring a connection that did not complete the TLS handshake in time");
            return Ok(Incoming::Stray(None));
        }
    };
    let mut hello = [0u8; HELLO_LEN];
    match timeout_at(plan.deadline, tls.read_exact(&mut hello)).await {
        Ok(Ok(_)) => Ok(Incoming::Hello(Box::new(tls), hello, from)),
        // The peer authenticated with a CA-signed certificate: from here on
        // failures are the party's, and fatal.
        Ok(Err(e)) => Err(setup_error(e, None, context)),
        Err(_) => Err(NetError::Tls { peer: None, reason: format!("{context}: no hello within {:?}", plan.timeout) }),
    }
}

enum Refusal {
    PartyCount(usize),
    Identity(Option<PartyId>, String),
}

fn check_hello(
    hello: &[u8; HELLO_LEN],
    tls: &tokio_rustls::server::TlsStream<Io>,
    me: PartyId,
    n: usize,
) -> Result<PartyId, Refusal> {
    let word = |i: usize| u32::from_le_bytes(hello[i..i + 4].try_into().unwrap()) as usize;
    if &hello[..8] != MAGIC || word(8) != VERSION as usize {
        return Err(Refusal::Identity(None, "peer does not speak the Argus network protocol (version 1)".into()));
    }
    let (claimed, their_n) = (word(12), word(16));
    if their_n != n {
        return Err(Refusal::PartyCount(their_n));
    }
    if claimed <= me || claimed >= n {
        return Err(Refusal::Identity(
            None,
            format!("peer claims to be party {claimed}, but only parties {}..{n} connect to party {me}", me + 1),
        ));
    }
    check_cert_names(tls.get_ref().1, claimed, n).map_err(|r| Refusal::Identity(Some(claimed), r))?;
    Ok(claimed)
}

/// Checks that the (CA-verified) client certificate names `party-{claimed}`.
fn check_cert_names(conn: &rustls::ServerConnection, claimed: PartyId, n: usize) -> Result<(), String> {
    let cert =
        conn.peer_certificates().and_then(|c| c.first()).ok_or_else(|| "peer presented no certificate".to_string())?;
    let parsed = ParsedCertificate::try_from(cert).map_err(|e| format!("unparsable certificate: {e}"))?;
    let names = |k: PartyId| {
        let name = ServerName::try_from(party_name(k)).expect("valid DNS name");
        verify_server_name(&parsed, &name).is_ok()
    };
    if names(claimed) {
        return Ok(());
    }
    match (0..n).find(|&k| names(k)) {
        Some(k) => Err(format!("certificate names party-{k} but connected as party {claimed}")),
        None => Err(format!("certificate does not name party-{claimed}, the party it connected as")),
    }
}

fn encode_reply(status: u8, n: usize, reason: &str) -> Vec<u8> {
    let mut reason = reason.as_bytes();
    if reason.len() > u16::MAX as usize {
        reason = &reason[..u16::MAX as usize];
    }
    let mut out = Vec::with_capacity(7 + reason.len());
    out.push(status);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(reason.len() as u16).to_le_bytes());
    out.extend_from_slice(reason);
    out
}
