//! The flags of a command that runs either all its parties as threads of this process or, with
//! `--party I`, party I alone over TCP with mutual TLS (`argus gmw`, `argus biometric`), and the
//! connection of that one party.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use argus_mpc::Party;
use argus_net::{tcp, NetConfig};

use crate::failure::{bad_input, failed, Failure};

/// `--party`, `--addrs`, `--pki`, `--timeout`.
#[derive(clap::Args, Debug)]
pub struct OnePartyArgs {
    /// Run as this party alone, over TCP with mutual TLS (needs --addrs and --pki).
    #[arg(long)]
    pub party: Option<usize>,
    /// With --party: every party's listen/dial address, in party order, comma separated.
    #[arg(long, value_delimiter = ',')]
    pub addrs: Vec<SocketAddr>,
    /// With --party: directory with `ca.pem`, `party-<i>.pem`, `party-<i>.key` (see `argus pki`).
    #[arg(long)]
    pub pki: Option<PathBuf>,
    /// With --party: seconds to wait for a peer before giving up.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

impl OnePartyArgs {
    /// Checks the flags of party `id` of `parties` (bad input), then connects it to the others.
    pub fn connect(&self, id: usize, parties: usize) -> Result<Party, Failure> {
        if id >= parties {
            return Err(bad_input(format!("--party {id}: the parties are 0 to {}", parties - 1)));
        }
        let Some(pki) = self.pki.as_deref() else {
            return Err(bad_input(
                "--party needs --addrs (every party's address, in party order) and --pki (see `argus pki`)",
            ));
        };
        if self.addrs.len() != parties {
            return Err(bad_input(format!("--addrs has {} address(es) for {parties} parties", self.addrs.len())));
        }
        let identity = tcp::TlsIdentity::from_pem_dir(pki, id).map_err(bad_input)?;
        eprintln!("party {id}: connecting to the other parties");
        let cfg = NetConfig::with_timeout(Duration::from_secs(self.timeout));
        let net = tcp::connect(id, &self.addrs, &identity, cfg).map_err(|e| failed(e.to_string()))?;
        Party::new(net).map_err(|e| failed(format!("party {id}: {e}")))
    }
}
