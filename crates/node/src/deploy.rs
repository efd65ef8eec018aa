//! A local three-node deployment in one directory: a fresh PKI (three parties and the named
//! clients), `party0.toml` … `party2.toml` on free loopback ports, `client.toml` (the enrolling
//! client `demo`) and `operator.toml` (the client `operator`, whose certificate carries the
//! operator role: deletions, the commit log). Used by `argus setup`, `argus demo` and the tests.
//! The PKI also holds a client `guest` that the nodes do not accept (for trying the refusal).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use argus_client::ClientFile;
use argus_net::tcp::{ClientRole, Pki};
use rand::RngCore;

use crate::config::{BatchSettings, IrisSettings};
use crate::{NodeConfig, NodeError};

/// Where a local deployment's files are.
#[derive(Clone, Debug)]
pub struct LocalDeployment {
    /// The directory.
    pub dir: PathBuf,
    /// `party<i>.toml`.
    pub node_configs: [PathBuf; 3],
    /// `client.toml` (client name `demo`, enrolling role).
    pub client_config: PathBuf,
    /// `operator.toml` (client name `operator`, operator role).
    pub operator_config: PathBuf,
    /// The nodes' configurations as written.
    pub nodes: [NodeConfig; 3],
}

/// `n` distinct loopback ports that are free now. Where the OS says which range it hands out to
/// outgoing connections (Linux), they are drawn from below it: a port from `bind(0)` comes from
/// that very range, and an outgoing connection of any process (another node's peer link, say)
/// could take it before our node binds it — which made a CI run's node unreachable for a minute.
pub fn free_loopback_ports(n: usize) -> Result<Vec<SocketAddr>, NodeError> {
    if let Some(lo) = ephemeral_start() {
        // A random spot in the 12 000 ports below the range, then the next free ones from there.
        let base = lo.saturating_sub(12_000).max(1024);
        let span = u32::from(lo - base);
        if span >= 2 * n as u32 {
            let start = rand::rngs::OsRng.next_u32() % span;
            let mut out = Vec::with_capacity(n);
            for k in 0..span {
                let port = base + ((start + k) % span) as u16;
                // Free now (the listener is dropped at once; nothing but an explicit bind takes it).
                if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                    out.push(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
                    if out.len() == n {
                        return Ok(out);
                    }
                }
            }
        }
    }
    let ls = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| NodeError::Io { context: "finding free loopback ports".into(), source: e })?;
    ls.iter()
        .map(|l| l.local_addr())
        .collect::<Result<_, _>>()
        .map_err(|e| NodeError::Io { context: "ports".into(), source: e })
}

/// The first port of the range the OS assigns to outgoing connections, where it says (Linux).
fn ephemeral_start() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

/// The paths in `dir` that [`write_local`] would write and that exist already (it refuses to
/// overwrite any: a new `pki/ca.pem` would orphan every certificate issued under the old one).
pub fn existing_files(dir: &Path) -> Vec<PathBuf> {
    let names = ["pki", "party0.toml", "party1.toml", "party2.toml", "client.toml", "operator.toml"];
    // symlink_metadata: a dangling link counts too, as writing through it would create its target.
    names.iter().map(|n| dir.join(n)).filter(|p| p.symlink_metadata().is_ok()).collect()
}

/// Writes a deployment into `dir` (created), refusing if any of its files, `pki/` or an SQLite
/// store it names exists (a new deployment would otherwise start on an old one's identities).
/// `stores[i]` is node `i`'s store URL (a relative `sqlite:` path is relative to `dir`). The three
/// nodes share this machine's cores, so with `batch.threads == 0` each gets a third of them for
/// its matrix products (oversubscribing them costs throughput).
pub fn write_local(
    dir: &Path,
    iris: &IrisSettings,
    batch: &BatchSettings,
    stores: [String; 3],
) -> Result<LocalDeployment, NodeError> {
    let io = |what: String| move |e| NodeError::Io { context: what, source: e };
    let sqlite = stores.iter().filter_map(|s| s.strip_prefix("sqlite:")).map(|f| dir.join(f));
    let existing = existing_files(dir).into_iter().chain(sqlite.filter(|p| p.symlink_metadata().is_ok()));
    if let Some(p) = existing.into_iter().next() {
        return Err(NodeError::Input(format!(
            "{} already exists; a new deployment overwrites nothing: choose another directory",
            p.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let clients = [("demo", ClientRole::Enroll), ("operator", ClientRole::Operator), ("guest", ClientRole::Enroll)];
    Pki::generate_with_roles(3, &clients)?.write_pem(dir.join("pki"))?;
    let ports = free_loopback_ports(6)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let batch =
        BatchSettings { threads: if batch.threads == 0 { (cores / 3).max(1) } else { batch.threads }, ..batch.clone() };
    let nodes: [NodeConfig; 3] = std::array::from_fn(|i| NodeConfig {
        id: i,
        peers: ports[..3].to_vec(),
        listen: ports[3 + i],
        pki: PathBuf::from("pki"),
        clients: vec!["demo".into(), "operator".into()],
        store: stores[i].clone(),
        iris: iris.clone(),
        batch: batch.clone(),
        limits: Default::default(),
        recover: false,
        audit: false,
        kernel_cache: None,
    });
    let node_configs: [PathBuf; 3] = std::array::from_fn(|i| dir.join(format!("party{i}.toml")));
    for (cfg, path) in nodes.iter().zip(&node_configs) {
        std::fs::write(path, cfg.to_toml()).map_err(io(format!("writing {}", path.display())))?;
    }
    let client = |name: &str, file: &str| -> Result<PathBuf, NodeError> {
        let c = ClientFile {
            nodes: ports[3..].to_vec(),
            pki: PathBuf::from("pki"),
            name: name.into(),
            timeout_s: 600,
            retries: 8,
            iris: iris.clone(),
        };
        let path = dir.join(file);
        std::fs::write(&path, toml::to_string_pretty(&c).expect("serialises"))
            .map_err(io(format!("writing {}", path.display())))?;
        Ok(path)
    };
    let (client_config, operator_config) = (client("demo", "client.toml")?, client("operator", "operator.toml")?);
    Ok(LocalDeployment { dir: dir.to_path_buf(), node_configs, client_config, operator_config, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_loopback_ports_are_distinct_bindable_and_outside_the_ephemeral_range() {
        let ports = free_loopback_ports(6).unwrap();
        let mut seen: Vec<u16> = ports.iter().map(|a| a.port()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 6, "{ports:?}");
        if let Some(lo) = ephemeral_start() {
            assert!(seen.iter().all(|&p| p < lo), "{seen:?} reach the range from {lo}");
        }
        let held: Vec<_> = ports.iter().map(|a| TcpListener::bind(a).unwrap()).collect();
        assert_eq!(held.len(), 6);
    }

    /// A directory holding only `pki/` (or any one file a deployment writes) is refused, naming
    /// it, and nothing in it changes.
    #[test]
    fn write_local_overwrites_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("pki/ca.pem");
        std::fs::create_dir_all(ca.parent().unwrap()).unwrap();
        std::fs::write(&ca, "old CA").unwrap();
        let stores = || std::array::from_fn(|i| format!("sqlite:party{i}.db"));
        let e = write_local(dir.path(), &IrisSettings::default(), &BatchSettings::default(), stores()).unwrap_err();
        assert!(e.to_string().contains(&format!("{} already exists", dir.path().join("pki").display())), "{e}");
        assert_eq!(std::fs::read_to_string(&ca).unwrap(), "old CA");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else written");
        std::fs::remove_dir_all(dir.path().join("pki")).unwrap();
        std::fs::write(dir.path().join("client.toml"), "old").unwrap();
        assert_eq!(existing_files(dir.path()), [dir.path().join("client.toml")]);
        assert!(write_local(dir.path(), &IrisSettings::default(), &BatchSettings::default(), stores()).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else written");
        // An old deployment's store: the new nodes would start on its identities.
        std::fs::remove_file(dir.path().join("client.toml")).unwrap();
        std::fs::write(dir.path().join("party2.db"), "old store").unwrap();
        let e = write_local(dir.path(), &IrisSettings::default(), &BatchSettings::default(), stores()).unwrap_err();
        assert!(e.to_string().contains(&format!("{} already exists", dir.path().join("party2.db").display())), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else written");
    }
}
