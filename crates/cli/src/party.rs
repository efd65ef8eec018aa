//! `argus party`: one party as its own OS process, connected to its peers over TCP + mutual TLS.
//! Runs a loop of multiplications (a smoke protocol) so that process failures can be exercised.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use argus_math::{Ring, Z64};
use argus_mpc::rep3::{mul, reveal, Rep3};
use argus_mpc::Party;
use argus_net::{tcp, NetConfig};
use clap::Args;

/// Arguments of `argus party`.
#[derive(Args, Debug)]
pub struct PartyArgs {
    /// This party's index (0, 1 or 2).
    #[arg(long)]
    id: usize,
    /// Listen/dial addresses of all parties, in party order, comma separated.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    addrs: Vec<SocketAddr>,
    /// Directory with `ca.pem`, `party-<i>.pem`, `party-<i>.key` (see `argus pki`).
    #[arg(long)]
    pki: PathBuf,
    /// Seconds to wait for a peer before failing.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Multiplication rounds to run (each on `batch` elements, checked by reveal).
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// Elements per multiplication.
    #[arg(long, default_value_t = 1000)]
    batch: usize,
    /// Pause between iterations, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pause_ms: u64,
}

/// Runs the party; returns an error (non-zero exit) if any peer fails.
pub fn run(a: PartyArgs) -> Result<(), String> {
    let identity = tcp::TlsIdentity::from_pem_dir(&a.pki, a.id).map_err(|e| e.to_string())?;
    let cfg = NetConfig::with_timeout(Duration::from_secs_f64(a.timeout));
    let net = tcp::connect(a.id, &a.addrs, &identity, cfg).map_err(|e| e.to_string())?;
    let mut p = Party::new(net).map_err(|e| e.to_string())?;
    println!("party {}: connected", a.id);
    let ring = Z64::new();
    for it in 0..a.iterations {
        let (xa, xb) = p.prg.random_pair(&ring, a.batch);
        let x = Rep3::from_parts(ring, xa, xb).map_err(|e| e.to_string())?;
        let sq = mul(&mut p, &x, &x).map_err(|e| format!("iteration {it}: {e}"))?;
        let open =
            reveal(&mut p, &sq.sub(&sq).map_err(|e| e.to_string())?).map_err(|e| format!("iteration {it}: {e}"))?;
        if open.iter().any(|&v| v != ring.zero()) {
            return Err(format!("iteration {it}: wrong result"));
        }
        std::thread::sleep(Duration::from_millis(a.pause_ms));
    }
    println!("party {}: done", a.id);
    Ok(())
}
