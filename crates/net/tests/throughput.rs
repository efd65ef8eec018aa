//! Loopback throughput of the TCP+TLS backend. Not part of the normal run:
//! `cargo test -p argus-net --release --test throughput -- --ignored --nocapture`

use std::time::{Duration, Instant};

use argus_net::{tcp, NetConfig};

#[test]
#[ignore = "benchmark; run explicitly with --ignored --nocapture"]
fn tcp_tls_64_mib_throughput() {
    const LEN: usize = 64 << 20;
    let nets = tcp::connect_local(2, NetConfig::with_timeout(Duration::from_secs(30))).unwrap();
    let mut best = f64::MAX;
    for round in 0..8 {
        let msg = vec![round as u8; LEN];
        let start = Instant::now();
        nets[0].send(1, msg).unwrap();
        let got = nets[1].recv(0).unwrap();
        let t = start.elapsed().as_secs_f64();
        assert_eq!(got.len(), LEN);
        best = best.min(t);
        println!("64 MiB one way: {:.1} ms, {:.2} GB/s", t * 1e3, LEN as f64 / t / 1e9);
    }
    // Both directions at once.
    let start = Instant::now();
    std::thread::scope(|s| {
        for net in &nets {
            s.spawn(move || {
                let other = 1 - net.id();
                net.send(other, vec![1; LEN]).unwrap();
                net.recv(other).unwrap();
            });
        }
    });
    let t = start.elapsed().as_secs_f64();
    println!(
        "best one way: {:.2} GB/s; both directions at once: {:.1} ms, {:.2} GB/s per direction",
        LEN as f64 / best / 1e9,
        t * 1e3,
        LEN as f64 / t / 1e9
    );
}

/// Round latency of three parties in a ring (each sends `len` bytes to the next and receives from
/// the previous, as a reshare does), median and mean over 2000 rounds, in memory and over TCP+TLS.
#[test]
#[ignore = "benchmark; run explicitly with --ignored --nocapture"]
fn ring_round_latency() {
    fn rounds(nets: Vec<argus_net::Network>, len: usize) -> (f64, f64) {
        const ROUNDS: usize = 2000;
        let times: Vec<Vec<f64>> = std::thread::scope(|s| {
            let hs: Vec<_> = nets
                .iter()
                .map(|net| {
                    s.spawn(move || {
                        let mut t = Vec::with_capacity(ROUNDS);
                        for _ in 0..ROUNDS {
                            let start = Instant::now();
                            net.send(net.next(), vec![7; len]).unwrap();
                            net.recv(net.prev()).unwrap();
                            t.push(start.elapsed().as_secs_f64() * 1e6);
                        }
                        t
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<f64> = times.into_iter().flatten().collect();
        all.sort_by(f64::total_cmp);
        (all[all.len() / 2], all.iter().sum::<f64>() / all.len() as f64)
    }
    let cfg = || NetConfig::with_timeout(Duration::from_secs(30));
    for len in [8, 4096, 65536] {
        let mem = rounds(argus_net::mem::connect(3, cfg()), len);
        let tcp = rounds(tcp::connect_local(3, cfg()).unwrap(), len);
        let asleep = rounds(tcp::connect_local(3, NetConfig { spin_polls: 0, ..cfg() }).unwrap(), len);
        println!(
            "ring round of {len} B: memory {:.1} µs (mean {:.1}), tcp+tls {:.1} µs (mean {:.1}), \
             tcp+tls without spinning {:.1} µs (mean {:.1}), medians",
            mem.0, mem.1, tcp.0, tcp.1, asleep.0, asleep.1
        );
    }
}
