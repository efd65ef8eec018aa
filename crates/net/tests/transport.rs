//! Behaviour common to both backends (in-memory and TCP+TLS).

mod common;

use std::time::{Duration, Instant};

use argus_net::{NetConfig, NetError, Network, Shaper, Stats};
use common::{run_parties, BACKENDS};

fn cfg(timeout_ms: u64) -> NetConfig {
    NetConfig::with_timeout(Duration::from_millis(timeout_ms))
}

/// A 10 s timeout and a simulated link of `latency` and `bandwidth` (bytes/s).
fn shaped(latency: Duration, bandwidth: Option<u64>) -> NetConfig {
    NetConfig {
        timeout: Duration::from_secs(10),
        shaper: Some(Shaper { latency, bandwidth_bytes_per_sec: bandwidth }),
        ..NetConfig::default()
    }
}

fn msg(from: usize, to: usize, i: usize, len: usize) -> Vec<u8> {
    let mut m = vec![(from * 16 + to) as u8; len];
    let tag = (i as u32).to_le_bytes();
    for (k, b) in tag.iter().enumerate() {
        if k < len {
            m[k] = *b;
        }
    }
    m
}

#[test]
fn topology_and_local_errors() {
    for (name, connect) in BACKENDS {
        let nets = connect(3, cfg(5_000));
        for (i, net) in nets.iter().enumerate() {
            assert_eq!(net.id(), i);
            assert_eq!(net.n(), 3);
            assert_eq!(net.next(), (i + 1) % 3);
            assert_eq!(net.prev(), (i + 2) % 3);
            assert_eq!(net.timeout(), Duration::from_secs(5));
        }
        let net = &nets[1];
        assert!(matches!(net.send(1, vec![1]), Err(NetError::SelfMessage { party: 1 })), "{name}");
        assert!(matches!(net.recv(1), Err(NetError::SelfMessage { party: 1 })));
        assert!(matches!(net.send(3, vec![1]), Err(NetError::UnknownParty { party: 3, n: 3 })));
        assert!(matches!(net.recv(7), Err(NetError::UnknownParty { party: 7, n: 3 })));
        // Oversize messages are refused before anything is queued (the
        // zeroed allocation is never touched, so this costs no memory).
        let huge = vec![0u8; argus_net::MAX_MESSAGE_LEN + 1];
        assert!(matches!(net.send(0, huge), Err(NetError::Frame { peer: 0, .. })), "{name}");
        assert_eq!(net.stats(), Stats::default(), "{name}: failed calls count nothing");
    }
}

#[test]
fn ping_pong_and_ordering() {
    for (name, connect) in BACKENDS {
        let sizes = [0usize, 1, 3, 4, 5, 1000, 65_536, 65_537, 300_000];
        let results = run_parties(connect(3, cfg(10_000)), |net| {
            let me = net.id();
            // Every party sends a burst of differently sized messages to both
            // others, then receives both bursts and checks order and content.
            for i in 0..200 {
                for to in [net.next(), net.prev()] {
                    net.send(to, msg(me, to, i, sizes[i % sizes.len()])).unwrap();
                }
            }
            for i in 0..200 {
                for from in [net.prev(), net.next()] {
                    let got = net.recv(from).unwrap();
                    assert_eq!(got, msg(from, me, i, sizes[i % sizes.len()]), "{name}");
                }
            }
            // Ping-pong between 0 and 1 (2 idles).
            if me < 2 {
                let other = 1 - me;
                for i in 0..100 {
                    if me == 0 {
                        net.send(other, msg(0, 1, i, 16)).unwrap();
                        assert_eq!(net.recv(other).unwrap(), msg(1, 0, i, 16));
                    } else {
                        let got = net.recv(other).unwrap();
                        assert_eq!(got, msg(0, 1, i, 16));
                        net.send(other, msg(1, 0, i, 16)).unwrap();
                    }
                }
            }
            true
        });
        assert!(results.into_iter().all(|ok| ok));
    }
}

/// Payloads of every length around the sender's record boundaries arrive byte for byte and in
/// order: the empty one, lengths around the 16 KiB record and the 64 KiB where a large message
/// starts with a short record, and large odd ones that also wait for the flusher.
#[test]
fn payloads_around_record_boundaries_arrive_exactly() {
    const LENS: [usize; 10] = [0, 1, 16_383, 16_385, 65_535, 65_536, 65_537, 300_001, 1 << 20, (4 << 20) + 3];
    let payload = |from: usize, len: usize| -> Vec<u8> {
        (0..len).map(|i| (i.wrapping_mul(31) ^ (i >> 8) ^ (len * 7 + from)) as u8).collect()
    };
    for (name, connect) in BACKENDS {
        let ok = run_parties(connect(3, cfg(30_000)), |net| {
            for &len in &LENS {
                net.send(net.next(), payload(net.id(), len)).unwrap();
            }
            LENS.iter().all(|&len| net.recv(net.prev()).unwrap() == payload(net.prev(), len))
        });
        assert!(ok.into_iter().all(|ok| ok), "{name}: a payload arrived altered");
    }
}

#[test]
fn everyone_sends_64_mib_at_once() {
    const LEN: usize = 64 << 20;
    for (name, connect) in BACKENDS {
        let start = Instant::now();
        let received = run_parties(connect(3, cfg(30_000)), |net| {
            let me = net.id();
            for to in [net.next(), net.prev()] {
                net.send(to, vec![(me * 16 + to) as u8; LEN]).unwrap();
            }
            let mut total = 0;
            for from in [net.next(), net.prev()] {
                let got = net.recv(from).unwrap();
                assert_eq!(got.len(), LEN);
                let expected = (from * 16 + me) as u8;
                assert!(got.iter().all(|&b| b == expected), "{name}: corrupted payload");
                total += got.len();
            }
            assert_eq!(net.stats().bytes_received, 2 * LEN as u64);
            assert_eq!(net.stats().bytes_sent, 2 * LEN as u64);
            total
        });
        assert_eq!(received, vec![2 * LEN; 3]);
        eprintln!("{name}: 3 parties x 2 x 64 MiB in {:?}", start.elapsed());
    }
}

#[test]
fn stats_and_round_counting() {
    for (name, connect) in BACKENDS {
        let stats = run_parties(connect(3, cfg(10_000)), |net| {
            // k rounds of "send to next, receive from prev".
            let before = net.stats();
            for i in 0..5 {
                net.send(net.next(), vec![i as u8; 10]).unwrap();
                net.recv(net.prev()).unwrap();
            }
            let ring = net.stats() - before;
            // Sending to both peers before receiving counts one round.
            let before = net.stats();
            for _ in 0..3 {
                net.send(net.next(), vec![0; 7]).unwrap();
                net.send(net.prev(), vec![0; 7]).unwrap();
                net.recv(net.next()).unwrap();
                net.recv(net.prev()).unwrap();
            }
            let both = net.stats() - before;
            // Several sends without receiving in between: still one round.
            let before = net.stats();
            for _ in 0..4 {
                net.send(net.next(), vec![]).unwrap();
            }
            for _ in 0..4 {
                net.recv(net.prev()).unwrap();
            }
            let burst = net.stats() - before;
            (ring, both, burst, net.stats())
        });
        for (ring, both, burst, total) in stats {
            assert_eq!(ring, Stats { bytes_sent: 50, bytes_received: 50, messages_sent: 5, rounds: 5 }, "{name}");
            assert_eq!(both, Stats { bytes_sent: 42, bytes_received: 42, messages_sent: 6, rounds: 3 }, "{name}");
            assert_eq!(burst, Stats { bytes_sent: 0, bytes_received: 0, messages_sent: 4, rounds: 1 }, "{name}");
            assert_eq!(total, ring + both + burst);
        }
    }
}

#[test]
fn first_send_counts_a_round_and_recv_alone_does_not() {
    for (name, connect) in BACKENDS {
        let nets = connect(2, cfg(10_000));
        nets[0].send(1, vec![1, 2, 3]).unwrap();
        assert_eq!(nets[0].stats().rounds, 1, "{name}");
        assert_eq!(nets[1].recv(0).unwrap(), vec![1, 2, 3]);
        assert_eq!(nets[1].stats().rounds, 0, "{name}: receiving is not a round");
        nets[1].send(0, vec![4]).unwrap();
        assert_eq!(nets[1].stats().rounds, 1);
        nets[1].send(0, vec![5]).unwrap();
        assert_eq!(nets[1].stats().rounds, 1);
        assert_eq!(nets[1].stats(), Stats { bytes_sent: 2, bytes_received: 3, messages_sent: 2, rounds: 1 });
    }
}

#[test]
fn silent_peer_times_out() {
    for (name, connect) in BACKENDS {
        let nets = connect(3, cfg(300));
        let start = Instant::now();
        let err = nets[0].recv(1).unwrap_err();
        let elapsed = start.elapsed();
        match err {
            NetError::Timeout { peer: 1, after } => assert_eq!(after, Duration::from_millis(300)),
            other => panic!("{name}: expected Timeout, got {other:?}"),
        }
        assert!(elapsed >= Duration::from_millis(300), "{name}: {elapsed:?}");
        assert!(elapsed < Duration::from_millis(1500), "{name}: {elapsed:?}");
        assert_eq!(err_string(nets[0].recv(2)), "party 2 sent nothing for 300ms", "{name}");
        // The link still works afterwards.
        nets[1].send(0, vec![9]).unwrap();
        assert_eq!(nets[0].recv(1).unwrap(), vec![9]);
    }
}

fn err_string<T: std::fmt::Debug>(r: Result<T, NetError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn dropped_peer_gives_peer_closed_quickly() {
    for (name, connect) in BACKENDS {
        let mut nets = connect(3, cfg(5_000));
        let p2 = nets.pop().unwrap();
        let p1 = nets.pop().unwrap();
        let p0 = nets.pop().unwrap();
        // Party 1's last messages are delivered before the close.
        p1.send(0, vec![1; 100]).unwrap();
        p1.send(0, vec![2; 1 << 20]).unwrap();
        let start = Instant::now();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                // Party 2 blocks in recv from 1 while 1 goes away.
                let r = p2.recv(1);
                (r.map(|_| ()), start.elapsed())
            });
            std::thread::sleep(Duration::from_millis(50));
            drop(p1);
            let (r, elapsed) = waiter.join().unwrap();
            assert!(matches!(r, Err(NetError::PeerClosed { peer: 1 })), "{name}: {r:?}");
            assert!(elapsed < Duration::from_secs(2), "{name}: took {elapsed:?}");
        });
        assert_eq!(p0.recv(1).unwrap(), vec![1; 100], "{name}");
        assert_eq!(p0.recv(1).unwrap(), vec![2; 1 << 20], "{name}");
        let start = Instant::now();
        assert!(matches!(p0.recv(1), Err(NetError::PeerClosed { peer: 1 })));
        assert!(matches!(p0.recv(1), Err(NetError::PeerClosed { peer: 1 })));
        assert!(start.elapsed() < Duration::from_secs(2));
        // Sending to the dead party fails (the link is known dead after
        // the close was observed).
        assert!(matches!(p0.send(1, vec![0]), Err(NetError::PeerClosed { peer: 1 })), "{name}");
        // Links between the survivors are unaffected.
        p0.send(2, vec![7]).unwrap();
        assert_eq!(p2.recv(0).unwrap(), vec![7]);
    }
}

#[test]
fn shaper_latency_and_bandwidth() {
    for (name, connect) in BACKENDS {
        // 50 ms latency: a round trip takes at least 100 ms.
        let cfg_latency = shaped(Duration::from_millis(50), None);
        let nets = connect(2, cfg_latency);
        let rtts = run_parties(nets, |net| {
            let other = 1 - net.id();
            let start = Instant::now();
            if net.id() == 0 {
                net.send(other, vec![1]).unwrap();
                net.recv(other).unwrap();
            } else {
                net.recv(other).unwrap();
                net.send(other, vec![2]).unwrap();
            }
            start.elapsed()
        });
        assert!(rtts[0] >= Duration::from_millis(100), "{name}: rtt {:?}", rtts[0]);
        assert!(rtts[0] < Duration::from_millis(1000), "{name}: rtt {:?}", rtts[0]);

        // 10 MB/s: 1 MB takes at least 100 ms, two of them queue behind each other.
        let cfg_bw = shaped(Duration::ZERO, Some(10_000_000));
        let nets = connect(2, cfg_bw);
        let start = Instant::now();
        nets[0].send(1, vec![0; 1_000_000]).unwrap();
        nets[0].send(1, vec![0; 1_000_000]).unwrap();
        nets[1].recv(0).unwrap();
        let first = start.elapsed();
        nets[1].recv(0).unwrap();
        let second = start.elapsed();
        assert!(first >= Duration::from_millis(100), "{name}: {first:?}");
        assert!(second >= Duration::from_millis(200), "{name}: {second:?}");
        assert!(second < Duration::from_millis(1500), "{name}: {second:?}");
    }
}

/// The simulated delay runs from when a message arrives, also for a peer's message that arrives
/// while the receiver holds another one back. Each party sends to the next at once, and from a
/// second thread to the previous 100 ms later, while it receives from the previous (held until
/// 400 ms) and then from the next: with 400 ms latency a round takes 500 ms. (The TCP backend once
/// stamped a frame when it was read after the hold, which made it 800 ms.)
#[test]
fn shaper_delays_run_from_arrival_for_every_peer() {
    for (name, connect) in BACKENDS {
        let rounds = run_parties(connect(3, shaped(Duration::from_millis(400), None)), |net| {
            (0..3)
                .map(|i| {
                    let start = Instant::now();
                    std::thread::scope(|s| {
                        net.send(net.next(), vec![i; 10]).unwrap();
                        s.spawn(|| {
                            std::thread::sleep(Duration::from_millis(100));
                            net.send(net.prev(), vec![i; 10]).unwrap();
                        });
                        assert_eq!(net.recv(net.prev()).unwrap(), vec![i; 10]);
                        assert_eq!(net.recv(net.next()).unwrap(), vec![i; 10]);
                    });
                    start.elapsed()
                })
                .collect::<Vec<_>>()
        });
        for (party, mut r) in rounds.into_iter().enumerate() {
            r.sort();
            // A busy machine only adds; the median of three keeps one slow round out, and the
            // bound leaves a busy machine 150 ms.
            assert!(r[1] >= Duration::from_millis(490), "{name}: party {party} rounds {r:?}");
            assert!(r[1] < Duration::from_millis(650), "{name}: party {party} rounds {r:?}");
        }
    }
}

#[test]
fn concurrent_use_from_several_threads() {
    // Network is Sync: two threads of one party talk to the two peers.
    for (name, connect) in BACKENDS {
        let nets = connect(3, cfg(10_000));
        let nets: Vec<Network> = nets;
        std::thread::scope(|s| {
            for net in &nets {
                for peer in (0..3).filter(|&p| p != net.id()) {
                    s.spawn(move || {
                        for i in 0..100u32 {
                            net.send(peer, i.to_le_bytes().to_vec()).unwrap();
                            let got = net.recv(peer).unwrap();
                            assert_eq!(got, i.to_le_bytes().to_vec(), "{name}");
                        }
                    });
                }
            }
        });
        for net in &nets {
            assert_eq!(net.stats().messages_sent, 200);
        }
    }
}

#[test]
fn messages_sent_right_after_connecting_arrive() {
    // The first messages may reach a party while its set-up is still reading the handshake's
    // last reply (and rustls has decrypted them already): they must not be lost there.
    use argus_net::tcp;
    use std::net::{Ipv4Addr, TcpListener};
    for round in 0..30 {
        let pki = tcp::Pki::generate(2);
        let listeners: Vec<TcpListener> =
            (0..2).map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap()).collect();
        let addrs: Vec<_> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
        std::thread::scope(|s| {
            for (id, listener) in listeners.into_iter().enumerate() {
                let (addrs, identity) = (&addrs, pki.identity(id));
                s.spawn(move || {
                    let net = tcp::connect_with_listener(id, listener, addrs, &identity, cfg(5_000)).unwrap();
                    net.send(1 - id, vec![id as u8; 3]).unwrap();
                    assert_eq!(net.recv(1 - id).unwrap(), vec![1 - id as u8; 3], "round {round}");
                });
            }
        });
    }
}
