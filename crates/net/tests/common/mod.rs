//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use argus_net::{mem, tcp, NetConfig, Network};

/// A backend under test: its name and a constructor for `n` connected parties.
pub type Connect = fn(usize, NetConfig) -> Vec<Network>;

fn mem_connect(n: usize, cfg: NetConfig) -> Vec<Network> {
    mem::connect(n, cfg)
}

fn tcp_connect(n: usize, cfg: NetConfig) -> Vec<Network> {
    // Connect with a generous deadline (the test machine may be busy), then
    // apply the timeout under test.
    let timeout = cfg.timeout;
    let nets = tcp::connect_local(n, NetConfig { timeout: timeout.max(Duration::from_secs(20)), ..cfg })
        .expect("tcp::connect_local");
    for net in &nets {
        net.set_timeout(timeout);
    }
    nets
}

/// Both backends.
pub const BACKENDS: [(&str, Connect); 2] = [("mem", mem_connect), ("tcp", tcp_connect)];

/// Runs `f(net)` for every party in its own thread; returns the results in
/// party order.
pub fn run_parties<T: Send>(nets: Vec<Network>, f: impl Fn(Network) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|net| {
                let f = &f;
                s.spawn(move || f(net))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A fresh, empty directory under the system temp dir (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let p = std::env::temp_dir().join(format!("argus-net-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
