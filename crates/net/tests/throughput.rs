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
