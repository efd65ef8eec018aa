//! TCP backend: identity checks, PEM files, connection setup.

mod common;

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use argus_net::tcp::{self, PemPaths, Pki, TlsIdentity};
use argus_net::{NetConfig, NetError, Network};
use common::TempDir;

fn listeners(n: usize) -> (Vec<TcpListener>, Vec<SocketAddr>) {
    let ls: Vec<_> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addrs = ls.iter().map(|l| l.local_addr().unwrap()).collect();
    (ls, addrs)
}

/// Connects party `i` with `identities[i]` (and start delay `delays[i]`) in
/// a thread each; returns every party's result.
fn connect_all(identities: Vec<TlsIdentity>, delays_ms: &[u64], timeout: Duration) -> Vec<Result<Network, NetError>> {
    let n = identities.len();
    let (ls, addrs) = listeners(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = ls
            .into_iter()
            .zip(identities)
            .enumerate()
            .map(|(i, (l, id))| {
                let addrs = &addrs;
                let delay = Duration::from_millis(delays_ms.get(i).copied().unwrap_or(0));
                s.spawn(move || {
                    std::thread::sleep(delay);
                    tcp::connect_with_listener(i, l, addrs, &id, NetConfig::with_timeout(timeout))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn tls_reason(r: &Result<Network, NetError>) -> String {
    match r {
        Err(NetError::Tls { reason, .. }) => reason.clone(),
        other => panic!("expected NetError::Tls, got {other:?}"),
    }
}

#[test]
fn parties_may_start_in_any_order() {
    let pki = Pki::generate(3);
    let ids = (0..3).map(|i| pki.identity(i)).collect();
    // Party 0 (dialled by everybody) starts last.
    let nets = connect_all(ids, &[400, 100, 0], Duration::from_secs(10));
    let nets: Vec<Network> = nets.into_iter().map(|r| r.unwrap()).collect();
    nets[2].send(0, b"hello".to_vec()).unwrap();
    assert_eq!(nets[0].recv(2).unwrap(), b"hello");
    nets[0].send(1, b"hi".to_vec()).unwrap();
    assert_eq!(nets[1].recv(0).unwrap(), b"hi");
}

/// Attempts out of phase, as restarted nodes make them: party 1 connects to party 0, gives up
/// waiting for party 2 (its attempt times out at 300 ms) and dials party 0 again at about
/// 1000 ms, while party 0 is still in its first attempt. Party 1 keeps its listener, so party 2
/// (starting at `party2_ms`) finds it between attempts. The gaps are some 300 ms either way; the
/// order they aim at is checked from what party 0 reports (`case`, a tracing event of its
/// setup), and a run that missed it (a stalled machine) is repeated, at most three times.
fn out_of_phase(party2_ms: u64, case: &str) {
    for attempt in 1..=3 {
        let events = out_of_phase_once(party2_ms);
        if events.iter().any(|e| e == case) {
            return;
        }
        eprintln!("attempt {attempt}: party 0 did not report {case:?} (it reported {events:?}); again");
    }
    panic!("the parties never came in the order the test is for: party 0 never reported {case:?}");
}

/// One run of [`out_of_phase`]: the messages of party 0's tracing events.
fn out_of_phase_once(party2_ms: u64) -> Vec<String> {
    let pki = Pki::generate(3);
    let (mut ls, addrs) = listeners(3);
    let l2 = ls.pop().unwrap();
    let l1 = ls.pop().unwrap();
    let l0 = ls.pop().unwrap();
    let cfg = |ms| NetConfig::with_timeout(Duration::from_millis(ms));
    let (nets, events) = std::thread::scope(|s| {
        let addrs = &addrs;
        let h0 = s.spawn(|| events_during(|| tcp::connect_with_listener(0, l0, addrs, &pki.identity(0), cfg(10_000))));
        let h1 = s.spawn(|| {
            let first = tcp::connect_with_listener(1, l1.try_clone().unwrap(), addrs, &pki.identity(1), cfg(300));
            assert!(first.is_err(), "party 2 is not there yet");
            std::thread::sleep(Duration::from_millis(700));
            tcp::connect_with_listener(1, l1, addrs, &pki.identity(1), cfg(10_000))
        });
        std::thread::sleep(Duration::from_millis(party2_ms));
        let n2 = tcp::connect_with_listener(2, l2, addrs, &pki.identity(2), cfg(10_000));
        let (n0, events) = h0.join().unwrap();
        ([n0, h1.join().unwrap(), n2], events)
    });
    let nets: Vec<Network> = nets.into_iter().map(|r| r.unwrap()).collect();
    nets[1].send(0, b"live".to_vec()).unwrap();
    assert_eq!(nets[0].recv(1).unwrap(), b"live");
    nets[2].send(1, b"also".to_vec()).unwrap();
    assert_eq!(nets[1].recv(2).unwrap(), b"also");
    nets[0].send(2, b"too".to_vec()).unwrap();
    assert_eq!(nets[2].recv(0).unwrap(), b"too");
    events
}

/// Runs `f` with a tracing subscriber on this thread that keeps every event's message.
fn events_during<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata};

    struct Keep(Arc<Mutex<Vec<String>>>);
    struct Message(Option<String>);
    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = Some(format!("{value:?}"));
            }
        }
    }
    impl tracing::Subscriber for Keep {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut m = Message(None);
            event.record(&mut m);
            if let Some(m) = m.0 {
                self.0.lock().unwrap().push(m);
            }
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
    let kept = Arc::new(Mutex::new(Vec::new()));
    let out = tracing::subscriber::with_default(Keep(kept.clone()), f);
    let events = kept.lock().unwrap().clone();
    (out, events)
}

/// Party 1 dials again before party 2 arrives: party 0 takes the newer connection (it used to
/// refuse "connected twice", failing both attempts).
#[test]
fn a_party_that_dials_again_replaces_its_earlier_connection() {
    out_of_phase(1600, "replacing an earlier connection");
}

/// Party 2 arrives at party 0 before party 1 dials again: party 0 notices that party 1 closed its
/// first connection and waits for the next instead of returning a dead link.
#[test]
fn a_connection_its_party_abandoned_is_not_returned() {
    out_of_phase(650, "peers closed their connections; waiting for them again");
}

/// Parties 0 and 1 connect (party 0 first) while `meanwhile` runs between their starts (what it
/// returns lives until both are connected), and then exchange a message.
fn two_parties_connect_despite<T>(pki: &Pki, meanwhile: impl FnOnce(&[SocketAddr]) -> T) {
    let (mut ls, addrs) = listeners(2);
    let (l1, l0) = (ls.pop().unwrap(), ls.pop().unwrap());
    let cfg = || NetConfig::with_timeout(Duration::from_secs(5));
    let nets = std::thread::scope(|s| {
        let h0 = s.spawn(|| tcp::connect_with_listener(0, l0, &addrs, &pki.identity(0), cfg()));
        let _kept = meanwhile(&addrs);
        let n1 = tcp::connect_with_listener(1, l1, &addrs, &pki.identity(1), cfg());
        (h0.join().unwrap(), n1)
    });
    let (n0, n1) = (nets.0.unwrap(), nets.1.unwrap());
    n1.send(0, vec![42]).unwrap();
    assert_eq!(n0.recv(1).unwrap(), vec![42]);
}

#[test]
fn stray_connections_are_ignored() {
    // A port scanner that sends junk, one that connects and closes, and one
    // that connects and stays silent do not disturb the setup.
    use std::io::Write;
    two_parties_connect_despite(&Pki::generate(2), |addrs| {
        let mut junk = std::net::TcpStream::connect(addrs[0]).unwrap();
        junk.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        drop(std::net::TcpStream::connect(addrs[0]).unwrap());
        let silent = std::net::TcpStream::connect(addrs[0]).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        (junk, silent)
    });
}

#[test]
fn client_certificate_from_another_ca_is_refused() {
    let pki = Pki::generate(3);
    let rogue = Pki::generate(3);
    let mut ids: Vec<_> = (0..3).map(|i| pki.identity(i)).collect();
    // Party 2 trusts the right CA but presents a certificate of another CA.
    ids[2] = TlsIdentity { ca_cert_der: pki.ca_cert_der().to_vec(), ..rogue.identity(2) };
    let results = connect_all(ids, &[], Duration::from_secs(3));
    let r0 = tls_reason(&results[0]);
    assert!(r0.contains("peer presented a certificate not signed by the party CA"), "{r0}");
    // The rogue party learns it was refused.
    assert!(matches!(results[2], Err(NetError::Tls { peer: Some(0), .. })), "{:?}", results[2]);
    assert!(results[1].is_err());
}

#[test]
fn server_certificate_from_another_ca_is_refused() {
    let pki = Pki::generate(3);
    let rogue = Pki::generate(3);
    let mut ids: Vec<_> = (0..3).map(|i| pki.identity(i)).collect();
    // Party 2 belongs to another PKI altogether: it refuses party 0's
    // certificate, and party 0 sees the handshake aborted.
    ids[2] = rogue.identity(2);
    let results = connect_all(ids, &[], Duration::from_secs(3));
    let r2 = tls_reason(&results[2]);
    assert!(r2.contains("peer presented a certificate not signed by the party CA"), "{r2}");
    assert!(matches!(results[2], Err(NetError::Tls { peer: Some(0), .. })));
    let r0 = tls_reason(&results[0]);
    assert!(r0.contains("does not accept our certificate"), "{r0}");
    assert!(results[1].is_err());
}

#[test]
fn certificate_of_another_party_is_refused() {
    let pki = Pki::generate(3);
    // Party 2 presents party 1's (valid, CA-signed) certificate.
    let ids = vec![pki.identity(0), pki.identity(1), pki.identity(1)];
    let start = Instant::now();
    let results = connect_all(ids, &[], Duration::from_secs(3));
    let r0 = tls_reason(&results[0]);
    assert_eq!(r0, "certificate names party-1 but connected as party 2");
    assert!(matches!(results[0], Err(NetError::Tls { peer: Some(2), .. })));
    let r2 = tls_reason(&results[2]);
    assert!(r2.contains("party 0 refused the connection: certificate names party-1 but connected as party 2"), "{r2}");
    assert!(results[1].is_err());
    assert!(start.elapsed() < Duration::from_secs(5));
    let shown = results[0].as_ref().unwrap_err().to_string();
    assert_eq!(shown, "TLS error with party 2: certificate names party-1 but connected as party 2");
}

#[test]
fn server_naming_another_party_is_refused() {
    // Party 2 believes party 1 listens where party 0 does: its second dial
    // reaches party 0, whose certificate does not name party-1.
    let pki = Pki::generate(3);
    let (mut ls, addrs) = listeners(3);
    let wrong = vec![addrs[0], addrs[0], addrs[2]];
    let l0 = ls.remove(0);
    let (r0, r2) = std::thread::scope(|s| {
        let (addrs, id0) = (&addrs, pki.identity(0));
        let h0 = s.spawn(move || {
            tcp::connect_with_listener(0, l0, addrs, &id0, NetConfig::with_timeout(Duration::from_secs(3)))
        });
        let l2 = ls.pop().unwrap();
        let r2 = tcp::connect_with_listener(
            2,
            l2,
            &wrong,
            &pki.identity(2),
            NetConfig::with_timeout(Duration::from_secs(3)),
        );
        (h0.join().unwrap(), r2)
    });
    let reason = tls_reason(&r2);
    assert!(reason.contains("certificate for another party"), "{reason}");
    assert!(matches!(r2, Err(NetError::Tls { peer: Some(1), .. })));
    let reason = tls_reason(&r0);
    assert!(reason.contains("does not accept our certificate"), "{reason}");
}

#[test]
fn party_count_mismatch_is_detected() {
    let pki = Pki::generate(3);
    let (mut ls, addrs) = listeners(3);
    let l0 = ls.remove(0);
    let results = std::thread::scope(|s| {
        let a0 = addrs.clone();
        let id0 = pki.identity(0);
        let h0 = s.spawn(move || {
            tcp::connect_with_listener(0, l0, &a0[..2], &id0, NetConfig::with_timeout(Duration::from_secs(3)))
        });
        let l1 = ls.remove(0);
        let id1 = pki.identity(1);
        let r1 = tcp::connect_with_listener(1, l1, &addrs, &id1, NetConfig::with_timeout(Duration::from_secs(3)));
        (h0.join().unwrap(), r1)
    });
    assert!(matches!(results.0, Err(NetError::WrongPartyCount { expected: 2, got: 3 })), "{:?}", results.0);
    assert!(matches!(results.1, Err(NetError::WrongPartyCount { expected: 3, got: 2 })), "{:?}", results.1);
}

#[test]
fn missing_party_times_out() {
    let pki = Pki::generate(2);
    let (mut ls, addrs) = listeners(2);
    drop(ls.pop());
    let start = Instant::now();
    let r = tcp::connect_with_listener(
        0,
        ls.pop().unwrap(),
        &addrs,
        &pki.identity(0),
        NetConfig::with_timeout(Duration::from_millis(300)),
    );
    assert!(matches!(r, Err(NetError::Timeout { peer: 1, .. })), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
    // The dialling side gives up with an I/O error naming the party.
    let (ls, addrs) = listeners(2);
    drop(ls);
    let start = Instant::now();
    let r = tcp::connect(1, &addrs, &pki.identity(1), NetConfig::with_timeout(Duration::from_millis(300)));
    match r {
        Err(e @ NetError::Io { .. }) => {
            assert!(e.to_string().contains("connecting to party 0"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn pem_files_round_trip() {
    let pki = Pki::generate(3);
    let dir = TempDir::new("pem");
    pki.write_pem(&dir.0).unwrap();
    for i in 0..3 {
        let loaded = TlsIdentity::from_pem_dir(&dir.0, i).unwrap();
        assert_eq!(loaded, pki.identity(i));
        let p = PemPaths::new(&dir.0, i);
        assert_eq!(TlsIdentity::from_pem_files(&p.ca, &p.cert, &p.key).unwrap(), loaded);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(PemPaths::new(&dir.0, 0).key).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "private keys are not world readable");
    }
    let err = TlsIdentity::from_pem_dir(&dir.0, 9).unwrap_err();
    assert!(matches!(err, NetError::Io { .. }), "{err:?}");
    // Debug output never shows the key.
    let dbg = format!("{:?}", pki.identity(0));
    assert!(dbg.contains("redacted"), "{dbg}");
}

/// Peers and clients do not share trust: a client's certificate (client CA) at a peer port is a
/// stray connection, ignored while the parties connect, never an error that ends their set-up.
#[test]
fn a_client_certificate_at_a_peer_port_is_a_stray() {
    let pki = Pki::generate_with_clients(2, &["alice"]).unwrap();
    let (_, client_tls) = tcp::tls_configs(&pki.client_identity("alice").unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    two_parties_connect_despite(&pki, |addrs| {
        // The client dials party 0's peer port: party 0 refuses its certificate.
        let refused = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(addrs[0]).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from(tcp::party_name(0)).unwrap();
            match tokio_rustls::TlsConnector::from(client_tls).connect(name, tcp).await {
                // TLS 1.3: the client may finish first and learn of the refusal on its first read.
                Ok(mut c) => {
                    use tokio::io::AsyncReadExt;
                    c.read(&mut [0u8; 1]).await.map(|_| ())
                }
                Err(e) => Err(e),
            }
        });
        assert!(refused.is_err(), "party 0 refused the client's certificate");
    });
}
