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
    /// Listen/dial addresses of the 3 parties, in party order, comma separated.
    #[arg(long, value_delimiter = ',', num_args = 1.., required = true)]
    addrs: Vec<SocketAddr>,
    /// Directory with `ca.pem`, `party-<i>.pem`, `party-<i>.key` (see `argus pki`).
    #[arg(long)]
    pki: PathBuf,
    /// Seconds to wait for a peer before failing (above 0; fractions allowed).
    #[arg(long, default_value = "30", value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: Duration,
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

/// Parses a positive, finite number of seconds that a [`Duration`] can hold.
pub(crate) fn positive_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("{s} is not a finite number of seconds above 0")),
    }
}

/// The number of parties of the protocol `argus party` runs (replicated, 3 parties).
const PARTIES: usize = 3;

/// Runs the party; returns an error (non-zero exit) if any peer fails.
pub fn run(a: PartyArgs) -> Result<(), String> {
    // Checked before any file is read: a wrong id or address list would otherwise show as a
    // missing PEM file or a network error.
    if a.addrs.len() != PARTIES {
        return Err(format!(
            "--addrs has {} address(es); give the {PARTIES} parties' addresses, in party order, comma separated",
            a.addrs.len()
        ));
    }
    if a.id >= PARTIES {
        return Err(format!("--id {} is out of range: the id must be below the number of parties ({PARTIES})", a.id));
    }
    let identity = tcp::TlsIdentity::from_pem_dir(&a.pki, a.id).map_err(|e| e.to_string())?;
    let cfg = NetConfig::with_timeout(a.timeout);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_must_be_finite_positive_and_fit_a_duration() {
        assert_eq!(positive_seconds("30").unwrap(), Duration::from_secs(30));
        assert_eq!(positive_seconds("0.25").unwrap(), Duration::from_millis(250));
        for bad in ["-1", "0", "NaN", "inf", "-inf", "1e30", "1e-12"] {
            let e = positive_seconds(bad).unwrap_err();
            assert!(e.contains("not a finite number of seconds above 0"), "{bad}: {e}");
        }
        assert!(positive_seconds("soon").unwrap_err().contains("not a number"));
    }
}
