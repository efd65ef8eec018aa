//! Three parties in separate OS processes over TCP+TLS (identities loaded from
//! PEM files); one process is killed mid-exchange and the survivors must get a
//! typed error within the timeout.
//!
//! The children are this test binary itself, re-run with `ARGUS_NET_CHILD`
//! set, which turns the `child_party` test into a party.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use argus_net::tcp::{self, Pki, TlsIdentity};
use argus_net::{NetConfig, NetError};
use common::TempDir;

const CHILD_ENV: &str = "ARGUS_NET_CHILD";
const DIR_ENV: &str = "ARGUS_NET_PEM_DIR";
/// Receive timeout of the children.
const TIMEOUT: Duration = Duration::from_millis(1000);
/// Lines for the parent start with this (libtest may print on the same line).
const TAG: &str = "ARGUS-CHILD:";

/// The child's side; a no-op unless run as a child by `killed_party`.
#[test]
fn child_party() {
    let Ok(id) = std::env::var(CHILD_ENV) else {
        return;
    };
    let id: usize = id.parse().unwrap();
    let dir = std::env::var(DIR_ENV).unwrap();
    let say = |s: String| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{TAG} {s}").unwrap();
        out.flush().unwrap();
    };
    let identity = TlsIdentity::from_pem_dir(&dir, id).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    say(format!("PORT {}", listener.local_addr().unwrap().port()));
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let addrs: Vec<SocketAddr> = line.split_whitespace().map(|a| a.parse().unwrap()).collect();
    let net =
        tcp::connect_with_listener(id, listener, &addrs, &identity, NetConfig::with_timeout(Duration::from_secs(20)))
            .unwrap();
    net.set_timeout(TIMEOUT);
    say("CONNECTED".into());
    let started = Instant::now();
    let mut round = 0u64;
    let mut next_report = 20;
    loop {
        // Bound the child's life even if the parent goes away.
        if started.elapsed() > Duration::from_secs(25) {
            say("GAVE-UP".into());
            std::process::exit(3);
        }
        let result = (|| {
            for to in [net.next(), net.prev()] {
                net.send(to, vec![id as u8; 4096])?;
            }
            for from in [net.next(), net.prev()] {
                let m = net.recv(from)?;
                assert_eq!(m, vec![from as u8; 4096]);
            }
            Ok::<_, NetError>(())
        })();
        let last_ok = Instant::now();
        match result {
            Ok(()) => {
                round += 1;
                if round >= next_report {
                    next_report += 20;
                    say(format!("ROUND {round}"));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => {
                let kind = match e {
                    NetError::PeerClosed { .. } => "PeerClosed",
                    NetError::Timeout { .. } => "Timeout",
                    _ => "Other",
                };
                say(format!("ERROR {kind} {} {e}", last_ok.elapsed().as_millis()));
                std::process::exit(0);
            }
        }
    }
}

/// Kills the children on drop, so a failing test leaves no processes behind.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn killed_party() {
    let dir = TempDir::new("kill");
    Pki::generate(3).write_pem(&dir.0).unwrap();
    let exe = std::env::current_exe().unwrap();
    let (tx, rx) = mpsc::channel::<(usize, String)>();
    let mut children = Children(Vec::new());
    for i in 0..3 {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_party", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, i.to_string())
            .env(DIR_ENV, &dir.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(pos) = line.find(TAG) {
                    let msg = line[pos + TAG.len()..].trim().to_string();
                    if tx.send((i, msg)).is_err() {
                        break;
                    }
                }
            }
        });
        children.0.push(child);
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(20);
    let next = |what: &str| -> (usize, String) {
        let left = deadline.saturating_duration_since(Instant::now());
        rx.recv_timeout(left).unwrap_or_else(|e| panic!("waiting for {what}: {e}"))
    };

    // Collect the ports, tell everybody the addresses.
    let mut ports = [0u16; 3];
    while ports.contains(&0) {
        let (i, msg) = next("ports");
        if let Some(p) = msg.strip_prefix("PORT ") {
            ports[i] = p.parse().unwrap();
        }
    }
    let addrs = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect::<Vec<_>>().join(" ");
    for c in &mut children.0 {
        writeln!(c.stdin.as_mut().unwrap(), "{addrs}").unwrap();
    }

    // Wait until every party has done some rounds, then kill party 2.
    let mut progressed = [false; 3];
    while progressed.contains(&false) {
        let (i, msg) = next("rounds");
        assert!(!msg.starts_with("ERROR"), "party {i} failed early: {msg}");
        if msg.starts_with("ROUND") {
            progressed[i] = true;
        }
    }
    children.0[2].kill().unwrap();
    let killed_at = Instant::now();

    // Both survivors must report PeerClosed or Timeout, within the timeout
    // (plus slack for a loaded machine).
    let mut errors: [Option<String>; 2] = [None, None];
    while errors.contains(&None) {
        let (i, msg) = next("the survivors' errors");
        if let Some(err) = msg.strip_prefix("ERROR ") {
            assert!(i < 2, "killed party reported {msg}");
            errors[i] = Some(err.to_string());
        }
    }
    let elapsed = killed_at.elapsed();
    for (i, err) in errors.iter().enumerate() {
        let err = err.as_ref().unwrap();
        assert!(err.starts_with("PeerClosed") || err.starts_with("Timeout"), "party {i}: {err}");
    }
    assert!(elapsed < TIMEOUT + Duration::from_secs(3), "survivors noticed after {elapsed:?}: {errors:?}");
    for c in &mut children.0[..2] {
        let status = c.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
    eprintln!("survivors noticed the kill after {elapsed:?}: {errors:?}");
}
