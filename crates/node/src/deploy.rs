//! A local three-node deployment in one directory: a fresh PKI (three parties and the named
//! clients), `party0.toml` … `party2.toml` on free loopback ports, and `client.toml`. Used by
//! `argus setup`, `argus demo` and the tests. The PKI also holds a client `guest` that the nodes
//! do not accept (for trying the refusal).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use argus_net::tcp::Pki;

use crate::client::ClientFile;
use crate::config::{BatchSettings, IrisSettings};
use crate::{NodeConfig, NodeError};

/// Where a local deployment's files are.
#[derive(Clone, Debug)]
pub struct LocalDeployment {
    /// The directory.
    pub dir: PathBuf,
    /// `party<i>.toml`.
    pub node_configs: [PathBuf; 3],
    /// `client.toml` (client name `demo`).
    pub client_config: PathBuf,
    /// The nodes' configurations as written.
    pub nodes: [NodeConfig; 3],
}

fn free_ports(n: usize) -> Result<Vec<SocketAddr>, NodeError> {
    let ls = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| NodeError::Io { context: "finding free loopback ports".into(), source: e })?;
    ls.iter()
        .map(|l| l.local_addr())
        .collect::<Result<_, _>>()
        .map_err(|e| NodeError::Io { context: "ports".into(), source: e })
}

/// Writes a deployment into `dir` (created). `stores[i]` is node `i`'s store URL (a relative
/// `sqlite:` path is relative to `dir`). The three nodes share this machine's cores, so with
/// `batch.threads == 0` each gets a third of them for its matrix products (oversubscribing
/// them costs throughput).
pub fn write_local(
    dir: &Path,
    iris: &IrisSettings,
    batch: &BatchSettings,
    stores: [String; 3],
) -> Result<LocalDeployment, NodeError> {
    let io = |what: String| move |e| NodeError::Io { context: what, source: e };
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    Pki::generate_with_clients(3, &["demo", "guest"]).write_pem(dir.join("pki"))?;
    let ports = free_ports(6)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let batch =
        BatchSettings { threads: if batch.threads == 0 { (cores / 3).max(1) } else { batch.threads }, ..batch.clone() };
    let nodes: [NodeConfig; 3] = std::array::from_fn(|i| NodeConfig {
        id: i,
        peers: ports[..3].to_vec(),
        listen: ports[3 + i],
        pki: PathBuf::from("pki"),
        clients: vec!["demo".into()],
        store: stores[i].clone(),
        iris: iris.clone(),
        batch: batch.clone(),
    });
    let node_configs: [PathBuf; 3] = std::array::from_fn(|i| dir.join(format!("party{i}.toml")));
    for (cfg, path) in nodes.iter().zip(&node_configs) {
        std::fs::write(path, cfg.to_toml()).map_err(io(format!("writing {}", path.display())))?;
    }
    let client = ClientFile {
        nodes: ports[3..].to_vec(),
        pki: PathBuf::from("pki"),
        name: "demo".into(),
        timeout_s: 600,
        retries: 8,
        iris: iris.clone(),
    };
    let client_config = dir.join("client.toml");
    std::fs::write(&client_config, toml::to_string_pretty(&client).expect("serialises"))
        .map_err(io(format!("writing {}", client_config.display())))?;
    Ok(LocalDeployment { dir: dir.to_path_buf(), node_configs, client_config, nodes })
}
