//! The client port of a node (TLS 1.3; clients present a certificate signed by the client CA —
//! not the party CA — that names an accepted client) and [`run_node`], which starts everything.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use argus_net::tcp::{self, cert_names, client_name};
use crossbeam_channel::Sender;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio_rustls::TlsAcceptor;

use crate::core::{Core, Incoming, StatusBoard};
use crate::engine::Engine;
use crate::gate::{Gate, Permit};
use crate::wire::{self, Envelope, Reply, Request};
use crate::{with_scheme, NodeConfig, NodeError};
use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::{IrisGeometry, MatchConfig};

/// How long a stopping node's client port may take to deliver its last replies.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(200);
/// How long a client may take over its TLS handshake, and to take one reply frame off the
/// node's hands: a client that stalls longer is disconnected (and frees its places).
const CLIENT_STALL: std::time::Duration = std::time::Duration::from_secs(30);
/// Replies a connection holds for its writer.
const OUT_FRAMES: usize = 64;

/// Runs one node until `stop` is set or a fatal error: opens the store, starts the client port,
/// connects to the peers, checks consistency, loads the database and serves.
pub fn run_node(cfg: NodeConfig, stop: Arc<AtomicBool>) -> Result<(), NodeError> {
    cfg.validate()?;
    if cfg.iris.scheme == crate::Scheme::MpcLiftF16 && cfg.iris.adder == crate::config::AdderSetting::LogDepth {
        tracing::warn!(
            node = cfg.id,
            "[iris] adder = \"log-depth\" has no effect with the scheme mpclift-F16-shamir: its comparisons \
             over F_65519 always use their ripple circuit (the log-depth adder is for the Z_2^k schemes)"
        );
    }
    let identity = tcp::TlsIdentity::from_pem_dir(&cfg.pki, cfg.id)?;
    let client_ca = match tcp::TlsIdentity::client_ca_from_pem_dir(&cfg.pki)? {
        Some(ca) => ca,
        None => {
            tracing::warn!(
                node = cfg.id,
                pki = %cfg.pki.display(),
                "no client-ca.pem (certificates made before clients had a CA of their own): clients are checked \
                 against the party CA; run `argus setup` again to separate them"
            );
            identity.ca_cert_der.clone()
        }
    };
    let server_tls = tcp::client_port_config(&identity, &client_ca)?;
    let store = argus_store::open(&cfg.store)?;
    tracing::info!(node = cfg.id, store = store.describe(), scheme = ?cfg.iris.scheme, "starting");
    let listener = std::net::TcpListener::bind(cfg.listen)
        .map_err(|e| NodeError::Io { context: format!("listening for clients on {}", cfg.listen), source: e })?;
    listener.set_nonblocking(true).map_err(|e| NodeError::Io { context: "client listener".into(), source: e })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(format!("argus-node-{}", cfg.id))
        .enable_all()
        .build()
        .map_err(|e| NodeError::Io { context: "starting the client runtime".into(), source: e })?;
    // Bounded like the requests in flight: the gate admits no more than fit.
    let (tx, rx) = crossbeam_channel::bounded(cfg.limits.in_flight);
    let clients = Arc::new(cfg.clients.clone());
    let gate = Gate::new(cfg.limits.clone());
    let acceptor = client_acceptor(&server_tls);
    let listener = {
        let _guard = runtime.enter();
        TcpListener::from_std(listener).map_err(|e| NodeError::Io { context: "client listener".into(), source: e })?
    };
    let board = StatusBoard::default();
    runtime.spawn(accept_clients(listener, acceptor, Port { clients, inbox: tx, board: board.clone(), gate }));
    let geometry = cfg.iris.layout.geometry()?;
    let match_cfg = cfg.iris.match_config()?;
    argus_math::kernels::set_threads(cfg.batch.threads);
    let result = with_scheme!(cfg.iris.scheme, s => {
        choose_kernels(&cfg, &s, geometry, &match_cfg)?;
        let planned = plan_compare_chunk(&cfg, &s, geometry, &match_cfg)?;
        let engine = Engine::new(s, match_cfg, cfg.iris.tuning(), geometry, store)?;
        Core::new(cfg, engine, rx, stop, board).with_chunk_times(planned).run()
    });
    // A moment for the client port to deliver the last replies (the stopped node's "retry").
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

/// The batch check's kernels as `batch.kernel` says: planned (the candidates timed on this host
/// for a moment, or the choice remembered in `kernel_cache`), unplanned, or a given path, for
/// batches of `batch.max` queries. Logs the choice and the host.
fn choose_kernels<S: IrisScheme>(
    cfg: &NodeConfig,
    scheme: &S,
    geometry: IrisGeometry,
    match_cfg: &MatchConfig,
) -> Result<(), NodeError> {
    use argus_math::kernels::{self, PlanOptions};
    let (host, batch) = (kernels::host(), cfg.batch.max);
    let options = PlanOptions { cache: cfg.kernel_cache.clone(), ..PlanOptions::default() };
    let plans = argus_iris::protocol::choose_kernels(scheme, geometry, match_cfg, batch, &cfg.batch.kernel, &options)
        .map_err(|e| NodeError::Config(format!("batch.kernel: {e}")))?;
    for plan in plans {
        if let Some(e) = &plan.cache_error {
            tracing::warn!(node = cfg.id, "{e}: the kernel plan holds until the node stops");
        }
        let shape = plan.shape;
        tracing::info!(
            node = cfg.id,
            kernel = %plan.path,
            source = ?plan.source,
            candidates = plan.measured.len(),
            shape = format!("{}x{}x{}", shape.positions, shape.width, shape.lags),
            "kernel planned"
        );
    }
    tracing::info!(
        node = cfg.id,
        kernel = argus_iris::protocol::kernel_name(scheme, geometry, match_cfg, batch),
        cpu = host.cpu,
        isa = %host.isa,
        "kernels"
    );
    Ok(())
}

/// With `compare_chunk = "auto"`, node 0 times the comparison chunks on its host (the
/// candidates timed for a moment, or the times remembered in `kernel_cache`), from which it picks
/// for the round time at every session start and tells the others; `None` where nothing is
/// planned (other nodes, a set chunk, the log-depth adder). Logs the chunk for one machine.
fn plan_compare_chunk<S: IrisScheme>(
    cfg: &NodeConfig,
    scheme: &S,
    geometry: IrisGeometry,
    match_cfg: &MatchConfig,
) -> Result<Option<argus_iris::protocol::ChunkTimes>, NodeError> {
    use crate::config::CompareChunk;
    if cfg.id != 0 || cfg.iris.compare_chunk != CompareChunk::Auto {
        return Ok(None);
    }
    let options = argus_math::kernels::PlanOptions { cache: cfg.kernel_cache.clone(), ..Default::default() };
    let adder = cfg.iris.tuning().adder;
    let Some(plan) = argus_iris::protocol::plan_compare_chunk(scheme, geometry, match_cfg, adder, &options)
        .map_err(|e| NodeError::Config(format!("planning the comparison chunk: {e}")))?
    else {
        return Ok(None);
    };
    if let Some(e) = &plan.cache_error {
        tracing::warn!(node = cfg.id, "{e}: the comparison chunk's plan holds until the node stops");
    }
    tracing::info!(
        node = cfg.id,
        compare_chunk = plan.local_chunk(),
        rounds_per_chunk = plan.times.rounds_per_chunk,
        source = ?plan.source,
        "comparison chunk planned (on one machine; with rounds under 2 ms chosen per session by the round time)"
    );
    Ok(Some(plan.times))
}

/// The client port's TLS: the node's server side, choosing [`wire::CLIENT_PROTOCOL`].
fn client_acceptor(server_tls: &rustls::ServerConfig) -> TlsAcceptor {
    let mut client_tls = server_tls.clone();
    client_tls.alpn_protocols = wire::client_alpn();
    TlsAcceptor::from(Arc::new(client_tls))
}

/// What every connection of the client port shares.
#[derive(Clone)]
struct Port {
    /// The accepted client names.
    clients: Arc<Vec<String>>,
    /// Requests for the core.
    inbox: Sender<Incoming>,
    board: StatusBoard,
    gate: Arc<Gate>,
}

async fn accept_clients(listener: TcpListener, acceptor: TlsAcceptor, port: Port) {
    loop {
        let (tcp, addr) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("accepting a client: {e}");
                continue;
            }
        };
        // Past `limits.connections` a connection is closed at once (before any TLS work).
        let held = match port.gate.connection() {
            Ok(p) => p,
            Err(why) => {
                tracing::warn!(%addr, "refused a client connection: {why}");
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let (acceptor, port) = (acceptor.clone(), port.clone());
        tokio::spawn(async move {
            if let Err(e) = serve_client(tcp, acceptor, port).await {
                tracing::info!(%addr, "client connection ended: {e}");
            }
            drop(held);
        });
    }
}

/// One client connection: requests are read as they come and answered as their batches finish
/// (tagged, so a client can keep many in flight).
async fn serve_client(tcp: tokio::net::TcpStream, acceptor: TlsAcceptor, port: Port) -> Result<(), String> {
    let Port { clients, inbox, board, gate } = port;
    let handshake = tokio::time::timeout(CLIENT_STALL, acceptor.accept(tcp))
        .await
        .map_err(|_| format!("no TLS handshake within {} s", CLIENT_STALL.as_secs()))?;
    let tls = handshake.map_err(|e| {
        if wire::no_common_protocol(&e) {
            format!(
                "refused a client that offers none of this node's client protocols ({}): another release",
                wire::CLIENT_PROTOCOL
            )
        } else {
            format!("TLS handshake: {e}")
        }
    })?;
    let cert = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).cloned();
    let who = cert.as_ref().and_then(|cert| clients.iter().find(|c| cert_names(cert, &client_name(c))).cloned());
    let role = cert.as_ref().map_or(tcp::ClientRole::Enroll, tcp::client_role);
    // The handshake chose ours if the client offered it, refused the client if it offered others.
    let tls_protocol = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    let (mut rd, mut wr) = tokio::io::split(tls);
    // A refusal goes out as tag 0, which a client of any release reads as one for all requests.
    let refusal = |message: String| wire::encode(&Envelope { tag: 0, body: Reply::Error { message, retry: false } });
    let Some(who) = who else {
        let _ = wire::write_frame(&mut wr, &refusal("unknown client".into())).await;
        return Err("refused a client whose certificate names no accepted client".into());
    };
    if tls_protocol.is_none() {
        let message = format!(
            "this node speaks client protocol {} and the client offered none (an older release): \
             the client and the nodes must run releases that speak the same client protocol",
            wire::CLIENT_PROTOCOL
        );
        let _ = wire::write_frame(&mut wr, &refusal(message)).await;
        return Err("refused a client that offered no client protocol (an older release)".into());
    }
    let _connection = match gate.client_connection(&who) {
        Ok(p) => p,
        Err(why) => {
            let busy = Envelope { tag: 0, body: Reply::Error { message: format!("busy: {why}"), retry: true } };
            let _ = wire::write_frame(&mut wr, &wire::encode(&busy)).await;
            return Err(format!("refused a connection: {why}"));
        }
    };
    // Replies wait here for the writer; a full channel stops this connection's reading (its
    // requests wait in the client's socket), and a client that takes no reply for
    // `CLIENT_STALL` is disconnected.
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(OUT_FRAMES);
    let writer = tokio::spawn(async move {
        while let Some(frame) = out_rx.recv().await {
            match tokio::time::timeout(CLIENT_STALL, wire::write_frame(&mut wr, &frame)).await {
                Ok(Ok(())) => {}
                _ => break,
            }
        }
    });
    let result = loop {
        let frame = match wire::read_frame(&mut rd).await {
            Ok(Some(f)) => f,
            Ok(None) => break Ok(()),
            Err(e) => break Err(format!("reading: {e}")),
        };
        let env: Envelope<Request> = match wire::decode(&frame) {
            Ok(e) => e,
            Err(e) => {
                let body = Reply::Error { message: e.to_string(), retry: false };
                let _ = out_tx.send(wire::encode(&Envelope { tag: 0, body })).await;
                break Err(e.to_string());
            }
        };
        let reply_now = |body: Reply| wire::encode(&Envelope { tag: env.tag, body });
        // Status from the last published snapshot (memory measured now): no waiting for a batch.
        if matches!(env.body, Request::Status) {
            let snapshot = board.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(mut s) = snapshot {
                s.rss_bytes = crate::rss_bytes();
                if out_tx.send(reply_now(Reply::Status(s))).await.is_err() {
                    break Ok(());
                }
                continue;
            }
        }
        // Refused (not retryable) or busy (retryable): answered at once.
        let admitted = authorize(&who, role, env.body).map_err(|refusal| (refusal, false)).and_then(|req| {
            let held = gate.request(&who).map_err(|why| (format!("busy: {why}"), true))?;
            Ok((req, held))
        });
        let (req, held) = match admitted {
            Ok(r) => r,
            Err((message, retry)) => {
                if out_tx.send(reply_now(Reply::Error { message, retry })).await.is_err() {
                    break Ok(());
                }
                continue;
            }
        };
        let (reply_tx, reply_rx) = oneshot::channel();
        match inbox.try_send(Incoming { req, reply: reply_tx }) {
            Ok(()) => {}
            Err(crossbeam_channel::TrySendError::Disconnected(_)) => break Err("node stopped".into()),
            Err(crossbeam_channel::TrySendError::Full(_)) => {
                // Not reached while the gate admits no more than the channel holds.
                let message = "busy: the node's request queue is full; retry later".to_string();
                let _ = out_tx.send(reply_now(Reply::Error { message, retry: true })).await;
                continue;
            }
        }
        let (out, who) = (out_tx.clone(), who.clone());
        tokio::spawn(async move {
            let body = reply_rx.await.unwrap_or(Reply::Error { message: "the node stopped".into(), retry: true });
            let _ = out.send(wire::encode(&Envelope { tag: env.tag, body: unbind(&who, body) })).await;
            // the request's place is free once its reply is on its way
            drop::<Permit>(held);
        });
    };
    drop(out_tx);
    let _ = writer.await;
    result
}

/// What client `who` with `role` may ask, with its request ids bound to it (`who/id`), so that
/// no client reads or replays another's: enrolling clients submit and ask the status; deleting
/// identities and reading the commit log (every client's outcomes) need an operator's
/// certificate.
pub(crate) fn authorize(who: &str, role: tcp::ClientRole, req: Request) -> Result<Request, String> {
    let bound = |id: String| -> Result<String, String> {
        crate::core::check_request_id(&id, 128)?;
        Ok(format!("{who}/{id}"))
    };
    let operator = role == tcp::ClientRole::Operator;
    match req {
        Request::Delete { .. } | Request::Commits { .. } if !operator => Err(format!(
            "client {who:?} may not {}: its certificate has the enrolling role, and only an operator's \
             (one that names {}) may delete identities or read the commit log",
            if matches!(req, Request::Delete { .. }) { "delete identities" } else { "read the commit log" },
            tcp::OPERATOR_NAME
        )),
        Request::Submit { request_id, kind, share } => {
            Ok(Request::Submit { request_id: bound(request_id)?, kind, share })
        }
        Request::Delete { request_id, id } => Ok(Request::Delete { request_id: bound(request_id)?, id }),
        other => Ok(other),
    }
}

/// A reply with the request id as its client sent it (without the `who/` that binds it).
fn unbind(who: &str, reply: Reply) -> Reply {
    let strip = |id: String| id.strip_prefix(who).and_then(|r| r.strip_prefix('/')).map_or(id.clone(), str::to_string);
    match reply {
        Reply::Outcome(o) => Reply::Outcome(wire::Outcome { request_id: strip(o.request_id), ..o }),
        Reply::Deleted { request_id, existed, seq } => Reply::Deleted { request_id: strip(request_id), existed, seq },
        other => other,
    }
}

#[cfg(test)]
mod tests {

    /// Roles and bound request ids: an enrolling client submits and asks the status, only an
    /// operator deletes or reads the commit log; ids get their client's name, replies lose it.
    #[test]
    fn roles_decide_what_a_client_may_ask_and_ids_are_bound_to_it() {
        use tcp::ClientRole::{Enroll, Operator};
        let submit = || Request::Submit { request_id: "r1".into(), kind: crate::Kind::Check, share: vec![1] };
        let delete = || Request::Delete { request_id: "r2".into(), id: 3 };
        match authorize("demo", Enroll, submit()).unwrap() {
            Request::Submit { request_id, .. } => assert_eq!(request_id, "demo/r1"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(authorize("demo", Enroll, Request::Status), Ok(Request::Status)));
        let e = authorize("demo", Enroll, delete()).unwrap_err();
        assert!(e.contains("may not delete identities"), "{e}");
        let e = authorize("demo", Enroll, Request::Commits { after: 0 }).unwrap_err();
        assert!(e.contains("may not read the commit log"), "{e}");
        match authorize("ops", Operator, delete()).unwrap() {
            Request::Delete { request_id, id: 3 } => assert_eq!(request_id, "ops/r2"),
            other => panic!("{other:?}"),
        }
        assert!(authorize("ops", Operator, Request::Commits { after: 0 }).is_ok());
        let long = Request::Submit { request_id: "x".repeat(129), kind: crate::Kind::Check, share: vec![] };
        assert!(authorize("demo", Enroll, long).is_err());
        let out = wire::Outcome { request_id: "demo/r1".into(), unique: true, enrolled: None, seq: 4 };
        match unbind("demo", Reply::Outcome(out)) {
            Reply::Outcome(o) => assert_eq!(o.request_id, "r1"),
            other => panic!("{other:?}"),
        }
    }
    use std::time::Duration;

    use argus_net::tcp::{party_name, Pki};

    use super::*;
    use argus_client::{Client, ClientConfig};

    /// Three client ports of this build (`alpn`) or of a release before the client protocol
    /// (none); requests get the answer "served". Returns their addresses.
    async fn client_ports(pki: &Pki, alpn: bool) -> Vec<std::net::SocketAddr> {
        let (tx, rx) = crossbeam_channel::unbounded::<Incoming>();
        std::thread::spawn(move || {
            for incoming in rx {
                let _ = incoming.reply.send(Reply::Error { message: "served".into(), retry: false });
            }
        });
        let mut addrs = Vec::new();
        for node in 0..3 {
            let acceptor = acceptor(pki, node, alpn);
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            addrs.push(listener.local_addr().unwrap());
            let port = Port {
                clients: Arc::new(vec!["demo".to_string()]),
                inbox: tx.clone(),
                board: StatusBoard::default(),
                gate: Gate::new(Default::default()),
            };
            tokio::spawn(accept_clients(listener, acceptor, port));
        }
        addrs
    }

    fn acceptor(pki: &Pki, node: usize, alpn: bool) -> TlsAcceptor {
        let server_tls = tcp::client_port_config(&pki.identity(node), pki.client_ca_der()).unwrap();
        if alpn {
            client_acceptor(&server_tls)
        } else {
            TlsAcceptor::from(server_tls)
        }
    }

    /// A TLS connection to a client port as client `name` (this build's protocol).
    async fn connect(
        pki: &Pki,
        addr: std::net::SocketAddr,
        name: &str,
    ) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        let (_, tls) = tcp::tls_configs(&pki.client_identity(name).unwrap()).unwrap();
        let mut tls = (*tls).clone();
        tls.alpn_protocols = wire::client_alpn();
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let server = rustls::pki_types::ServerName::try_from(party_name(0)).unwrap();
        tokio_rustls::TlsConnector::from(Arc::new(tls)).connect(server, tcp).await.unwrap()
    }

    async fn read(conn: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> Envelope<Reply> {
        wire::decode(&wire::read_frame(conn).await.unwrap().expect("a frame")).unwrap()
    }

    /// The client port's limits: a client's connection past `connections_per_client` is closed
    /// with a retryable "busy" (another client still connects); its request past
    /// `in_flight_per_client` is answered "busy" at once, with its tag, while the first waits
    /// for the core, and once that one is answered the client may send again.
    #[test]
    fn the_client_port_answers_busy_past_a_clients_limits() {
        let pki = Pki::generate_with_clients(3, &["demo", "other"]).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            // The core: holds every request until told to answer.
            let (tx, rx) = crossbeam_channel::unbounded::<Incoming>();
            let (answer, answers) = crossbeam_channel::unbounded::<()>();
            std::thread::spawn(move || {
                for incoming in rx {
                    let _ = answers.recv();
                    let _ = incoming.reply.send(Reply::Error { message: "served".into(), retry: false });
                }
            });
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let limits =
                crate::config::Limits { connections_per_client: 2, in_flight_per_client: 1, ..Default::default() };
            let port = Port {
                clients: Arc::new(vec!["demo".into(), "other".into()]),
                inbox: tx,
                board: StatusBoard::default(),
                gate: Gate::new(limits),
            };
            tokio::spawn(accept_clients(listener, acceptor(&pki, 0, true), port));

            let mut first = connect(&pki, addr, "demo").await;
            let _second = connect(&pki, addr, "demo").await;
            let mut third = connect(&pki, addr, "demo").await;
            match read(&mut third).await {
                Envelope { tag: 0, body: Reply::Error { message, retry: true } } => {
                    assert!(message.contains("busy") && message.contains("limits.connections_per_client"), "{message}")
                }
                other => panic!("{other:?}"),
            }
            let _other = connect(&pki, addr, "other").await;

            let commits = |tag| wire::encode(&Envelope { tag, body: Request::Commits { after: 0 } });
            // `demo` is not an operator: a commit-log request is refused without the core
            wire::write_frame(&mut first, &commits(5)).await.unwrap();
            assert!(matches!(read(&mut first).await, Envelope { tag: 5, body: Reply::Error { retry: false, .. } }));
            let submit = |tag| {
                let body = Request::Submit { request_id: format!("r{tag}"), kind: crate::Kind::Check, share: vec![1] };
                wire::encode(&Envelope { tag, body })
            };
            wire::write_frame(&mut first, &submit(1)).await.unwrap();
            wire::write_frame(&mut first, &submit(2)).await.unwrap();
            match read(&mut first).await {
                Envelope { tag: 2, body: Reply::Error { message, retry: true } } => {
                    assert!(message.contains("busy") && message.contains("limits.in_flight_per_client"), "{message}")
                }
                other => panic!("{other:?}"),
            }
            answer.send(()).unwrap();
            assert!(matches!(read(&mut first).await, Envelope { tag: 1, body: Reply::Error { retry: false, .. } }));
            wire::write_frame(&mut first, &submit(3)).await.unwrap();
            answer.send(()).unwrap();
            assert!(matches!(read(&mut first).await, Envelope { tag: 3, body: Reply::Error { retry: false, .. } }));
        });
    }

    fn client(pki: &Pki, nodes: Vec<std::net::SocketAddr>) -> Client {
        let cfg = ClientConfig {
            nodes,
            identity: pki.client_identity("demo").unwrap(),
            iris: Default::default(),
            timeout: Duration::from_secs(10),
            retries: 8,
        };
        Client::new(cfg).unwrap()
    }

    /// A client and a node of releases that speak different client protocols refuse each other
    /// at connection, naming the protocol, without retries; the same release is served.
    #[test]
    fn clients_and_nodes_of_other_releases_are_refused_with_the_protocol_named() {
        let pki = Pki::generate_with_clients(3, &["demo"]).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            // Same release: the request reaches the node (its answer is the test's "served").
            let ours = client(&pki, client_ports(&pki, true).await);
            let e = ours.node_status(1).await.unwrap_err().to_string();
            assert!(e.contains("served"), "{e}");

            // Nodes of an older release choose no protocol: this client refuses them, and does
            // not retry (eight retries would wait 15 s).
            let older_nodes = client(&pki, client_ports(&pki, false).await);
            let started = std::time::Instant::now();
            let e = older_nodes.status().await.unwrap_err().to_string();
            assert!(e.contains("runs another release") && e.contains(wire::CLIENT_PROTOCOL), "{e}");
            assert!(started.elapsed() < Duration::from_secs(5), "retried: {:?}", started.elapsed());

            // A client of an older release offers none: the node tells it which it speaks.
            let addr = client_ports(&pki, true).await[0];
            let (_, tls) = tcp::tls_configs(&pki.client_identity("demo").unwrap()).unwrap();
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from(party_name(0)).unwrap();
            let mut conn = tokio_rustls::TlsConnector::from(tls).connect(name, tcp).await.unwrap();
            let frame = wire::read_frame(&mut conn).await.unwrap().expect("a refusal");
            let Envelope { tag: 0, body: Reply::Error { message, retry: false } } = wire::decode(&frame).unwrap()
            else {
                panic!("not a refusal");
            };
            assert!(message.contains(&format!("client protocol {}", wire::CLIENT_PROTOCOL)), "{message}");
        });
    }
}
