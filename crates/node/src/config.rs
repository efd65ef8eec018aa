//! A node's configuration file (`party0.toml`): who it is, where its peers and clients are, which
//! store and which scheme it uses. Everything but `id`, `peers`, `listen` and `store` has a default.
//!
//! ```toml
//! id = 0
//! peers = ["127.0.0.1:7100", "127.0.0.1:7101", "127.0.0.1:7102"]  # the party network, mutual TLS
//! listen = "127.0.0.1:7200"        # clients, TLS with client certificates
//! pki = "pki"                       # ca.pem, party-<id>.pem, party-<id>.key (`argus pki`)
//! clients = ["demo"]                # accepted client certificates (client-<name>)
//! store = "sqlite:party0.db"        # or "postgres://user@host/db"
//!
//! [iris]
//! scheme = "mpclift-GR16-shamir"    # see `Scheme`
//! layout = "deployed"               # or "open-iris" (16384 bits), or { rows = 16, cols = 200, filters = 2, parts = 2 }
//! threshold = 0.345
//! rule = "and"                      # both eyes must match; "or": either
//! rotations = 15                    # the window -15..=15
//! mask_mode = "per-bit"             # or "trimmed"
//! reveal_matches = false            # true: log the identities each query matched (operator only)
//! adder = "ripple"                  # the comparisons' adder; "log-depth": fewer rounds, more bytes (WAN)
//! compare_chunk = "auto"            # comparisons per chunk, from the round time and node 0's plan; 0: the adder's default; or a count
//! min_valid = 0.25                  # a query with an eye less valid (unmasked) than this is refused
//! mirror_check = true               # refuse a query whose mirror image (eyes swapped) is enrolled
//!
//! [batch]
//! max = 32          # queries per protocol run
//! wait_ms = 20      # how long the leader waits to fill a batch
//! max_queued = 1024 # requests waiting at the leader; more are refused (retryable) until it drains
//! share_timeout_ms = 3000   # how long a request waits for its share to reach all three nodes
//! peer_timeout_s = 120      # a silent peer fails the batch after this long
//! threads = 0       # threads of each matrix product; 0: every core (a node on its own machine)
//! kernel = "auto"   # the correlation kernel: planned at start by timing the candidates on this
//!                   # host ("auto", remembered in kernel-plans.txt next to this file), "unplanned",
//!                   # or a path such as "packed-vnni-l5-b32" (`argus bench iris` lists them)
//!
//! [limits]          # what one client, and all together, may hold at this node's client port
//! connections = 1024            # open client connections (TLS handshakes included)
//! connections_per_client = 8    # open connections of one client certificate
//! in_flight = 4096              # requests waiting for their answer, all clients together
//! in_flight_per_client = 256    # requests of one client waiting for their answer
//! pending_shares = 4096         # enrolment shares on the leader's disk waiting for their batch
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use argus_client::settings::{
    check_compare_chunk, AdderSetting, CompareChunk, IrisSettings, Layout, MaskSetting, NamedLayout, RuleSetting,
    Scheme, COMPARE_CHUNK_RANGE,
};

use crate::NodeError;

/// Batching and time limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchSettings {
    /// Most queries in one protocol run.
    pub max: usize,
    /// How long the leader waits for more requests before running a partial batch.
    pub wait_ms: u64,
    /// Most requests waiting for a batch at the leader (node 0), which forms the batches. A new
    /// request past it is refused with a retryable "busy" error (the client backs off and
    /// retries), so an overloaded service holds a bounded backlog — each waiting query keeps its
    /// share in memory — and tells its clients, instead of letting the backlog and the latency grow.
    /// A full queue is `max_queued` / throughput of waiting (about 100 s at the demo's 10 queries
    /// per second on two cores): size it as throughput × the latency the clients accept.
    pub max_queued: usize,
    /// How long a request may wait for its shares to reach all three nodes.
    pub share_timeout_ms: u64,
    /// A peer silent for this long fails the batch (and the session is re-established).
    pub peer_timeout_s: u64,
    /// Threads each matrix product of the dot-product phase splits the database over: 0 for every
    /// core (a node on its own machine); a local deployment of three nodes on one machine gives
    /// each a third of the cores.
    pub threads: usize,
    /// The batch check's correlation kernel: `auto` (planned when the node starts, by timing
    /// the candidate paths on this host for a moment; the choice is remembered in
    /// [`NodeConfig::kernel_cache`]), `unplanned` (the rule-of-thumb path), or a path such as
    /// `packed-vnni-l5-b32` or `rows-amx-l0-b256`.
    pub kernel: String,
}

impl Default for BatchSettings {
    fn default() -> Self {
        BatchSettings {
            max: 32,
            wait_ms: 20,
            max_queued: 1024,
            share_timeout_ms: 3000,
            peer_timeout_s: 120,
            threads: 0,
            kernel: "auto".into(),
        }
    }
}

/// What clients may hold at a node (its client port and its store), so that one client that
/// floods gets a retryable "busy" while the others keep being served. A request past a limit is
/// answered at once and leaves nothing behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Open client connections, all clients together (TLS handshakes included: a connection
    /// counts from its accept).
    pub connections: usize,
    /// Open connections of one client certificate (the Rust client keeps one per node).
    pub connections_per_client: usize,
    /// Requests waiting for their answer at this node, all clients together: the bound of the
    /// queue between the client port and the node's core.
    pub in_flight: usize,
    /// Requests of one client waiting for their answer at this node (`argus demo` keeps 64 in
    /// flight by default).
    pub in_flight_per_client: usize,
    /// Enrolment shares stored at the leader while they wait for their batch (each is deleted
    /// when its batch commits, or as abandoned after a day): a new enrolment past it is refused
    /// as busy. A follower's are bounded by the requests it holds (`in_flight`).
    pub pending_shares: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 1024,
            connections_per_client: 8,
            in_flight: 4096,
            in_flight_per_client: 256,
            pending_shares: 4096,
        }
    }
}

/// One node's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// This node's party index: 0 (the batch leader), 1 or 2.
    pub id: usize,
    /// The three parties' network addresses, in party order (this node listens on its own).
    pub peers: Vec<SocketAddr>,
    /// Where clients connect.
    pub listen: SocketAddr,
    /// Directory with `ca.pem`, `party-<id>.pem`, `party-<id>.key`.
    #[serde(default = "default_pki")]
    pub pki: PathBuf,
    /// Client names whose certificates (`client-<name>`, signed by the CA) are accepted.
    #[serde(default = "default_clients")]
    pub clients: Vec<String>,
    /// `sqlite:PATH` (or a plain path) or `postgres://...`.
    pub store: String,
    /// Matching and scheme.
    #[serde(default)]
    pub iris: IrisSettings,
    /// Batching.
    #[serde(default)]
    pub batch: BatchSettings,
    /// What clients may hold at this node.
    #[serde(default)]
    pub limits: Limits,
    /// Rebuild this node's store from its two peers before serving (`argus node --recover`; never
    /// read from the file): share recovery, for a node whose store was lost or restored from an
    /// older backup.
    #[serde(skip)]
    pub recover: bool,
    /// Check with the peers, before serving, that the three nodes' shares are consistent
    /// (`argus node --audit`; never read from the file).
    #[serde(skip)]
    pub audit: bool,
    /// Where the kernel planner remembers its choices for this host (`kernel-plans.txt` next to
    /// the configuration file; never read from the file). `None`: planned at every start.
    #[serde(skip)]
    pub kernel_cache: Option<PathBuf>,
}

/// The kernel planner's cache, next to a node's configuration file.
pub const KERNEL_CACHE: &str = "kernel-plans.txt";

fn default_pki() -> PathBuf {
    PathBuf::from("pki")
}

fn default_clients() -> Vec<String> {
    vec!["demo".into()]
}

impl NodeConfig {
    /// Reads and checks a TOML file; relative `pki` and `sqlite:` paths are taken relative to the file.
    pub fn load(path: &Path) -> Result<NodeConfig, NodeError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| NodeError::Config(format!("reading {}: {e}", path.display())))?;
        let mut cfg: NodeConfig =
            toml::from_str(&text).map_err(|e| NodeError::Config(format!("{}: {e}", path.display())))?;
        let base = path.parent().unwrap_or(Path::new("."));
        if cfg.pki.is_relative() {
            cfg.pki = base.join(&cfg.pki);
        }
        cfg.kernel_cache = Some(base.join(KERNEL_CACHE));
        if !cfg.store.contains("://") {
            let file = cfg.store.strip_prefix("sqlite:").unwrap_or(&cfg.store);
            if Path::new(file).is_relative() {
                cfg.store = format!("sqlite:{}", base.join(file).display());
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the values that parsing cannot.
    pub fn validate(&self) -> Result<(), NodeError> {
        if self.peers.len() != 3 {
            return Err(NodeError::Config(format!("peers must list 3 addresses, got {}", self.peers.len())));
        }
        if self.id >= 3 {
            return Err(NodeError::Config(format!("id must be 0, 1 or 2, got {}", self.id)));
        }
        if self.batch.max == 0 {
            return Err(NodeError::Config("batch.max must be at least 1".into()));
        }
        if self.batch.max_queued < self.batch.max {
            return Err(NodeError::Config(format!(
                "batch.max_queued ({}) must be at least batch.max ({}): a smaller queue never fills a batch",
                self.batch.max_queued, self.batch.max
            )));
        }
        let l = &self.limits;
        for (name, v) in [
            ("connections", l.connections),
            ("connections_per_client", l.connections_per_client),
            ("in_flight", l.in_flight),
            ("in_flight_per_client", l.in_flight_per_client),
            ("pending_shares", l.pending_shares),
        ] {
            if v == 0 {
                return Err(NodeError::Config(format!("limits.{name} must be at least 1")));
            }
        }
        if l.in_flight_per_client > l.in_flight || l.connections_per_client > l.connections {
            return Err(NodeError::Config(format!(
                "limits.in_flight_per_client ({}) and limits.connections_per_client ({}) must not exceed \
                 limits.in_flight ({}) and limits.connections ({}): one client would be held by the node-wide limit",
                l.in_flight_per_client, l.connections_per_client, l.in_flight, l.connections
            )));
        }
        let addrs = self.peers.iter().chain([&self.listen]);
        if let Some(a) = addrs.clone().enumerate().find_map(|(i, a)| addrs.clone().skip(i + 1).find(|b| *b == a)) {
            return Err(NodeError::Config(format!(
                "address {a} appears twice among peers and listen: every node needs its own peer address, and clients another"
            )));
        }
        if !matches!(self.batch.kernel.as_str(), "auto" | "unplanned") {
            self.batch.kernel.parse::<argus_math::kernels::CorrelationPath>().map_err(|e| {
                NodeError::Config(format!("batch.kernel: {e}; or \"auto\" (planned at start), \"unplanned\""))
            })?;
        }
        if self.batch.share_timeout_ms == 0 || self.batch.peer_timeout_s == 0 {
            return Err(NodeError::Config(
                "batch.share_timeout_ms and batch.peer_timeout_s must be positive: 0 would fail every request".into(),
            ));
        }
        Ok(self.iris.check_supported()?)
    }

    /// As TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a node configuration serialises")
    }

    /// Receive timeout for the party network.
    pub fn peer_timeout(&self) -> Duration {
        Duration::from_secs(self.batch.peer_timeout_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argus_mpc::rep3::Adder;

    fn config(batch: BatchSettings) -> NodeConfig {
        let addr = |port| SocketAddr::from(([127, 0, 0, 1], port));
        NodeConfig {
            id: 0,
            peers: vec![addr(1), addr(2), addr(3)],
            listen: addr(4),
            pki: default_pki(),
            clients: default_clients(),
            store: "sqlite:node.db".into(),
            iris: IrisSettings::default(),
            batch,
            limits: Limits::default(),
            recover: false,
            audit: false,
            kernel_cache: None,
        }
    }

    /// Limits of 0, or a client's limit above the node's, are refused with the keys named.
    #[test]
    fn limits_must_hold_at_least_one_and_a_client_no_more_than_the_node() {
        let mut c = config(BatchSettings::default());
        c.limits.pending_shares = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("limits.pending_shares must be at least 1"), "{e}");
        c.limits = Limits { in_flight: 10, in_flight_per_client: 11, ..Limits::default() };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("limits.in_flight_per_client (11)") && e.contains("limits.in_flight (10)"), "{e}");
        c.limits = Limits { in_flight: 11, in_flight_per_client: 11, ..Limits::default() };
        c.validate().unwrap();
        // written by `to_toml` and read back
        let back: NodeConfig = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(back.limits, c.limits);
    }

    /// The defaults validate; a queue smaller than a batch is refused with both values named.
    #[test]
    fn the_queue_holds_at_least_a_batch() {
        assert!(config(BatchSettings::default()).validate().is_ok());
        let small = BatchSettings { max: 8, max_queued: 7, ..BatchSettings::default() };
        let e = config(small).validate().unwrap_err().to_string();
        assert!(e.contains("batch.max_queued (7) must be at least batch.max (8)"), "{e}");
        let exact = BatchSettings { max: 8, max_queued: 8, ..BatchSettings::default() };
        assert!(config(exact).validate().is_ok());
    }

    /// A layout the scheme cannot run, a repeated address and zero timeouts are refused at start,
    /// with what to change.
    #[test]
    fn settings_that_could_not_serve_are_refused() {
        let mut c = config(BatchSettings::default());
        c.iris.layout = Layout::Custom { rows: 32, cols: 256, filters: 2, parts: 2 };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("scheme = \"mpclift-GR16-shamir\" cannot run layout 32x256x2x2"), "{e}");
        assert!(e.contains("choose another scheme or layout"), "{e}");
        assert!(e.contains("use a scheme over Z_2^32 (nolift-Z32-rep3)"), "{e}");
        c.iris.scheme = Scheme::NoLiftZ32;
        c.validate().unwrap();
        // Open-iris codes run on the default scheme and with public masks, but these compare in 16
        // bits, which a threshold of 0 overflows.
        let mut c = config(BatchSettings::default());
        c.iris.layout = Layout::Named(NamedLayout::OpenIris);
        c.validate().unwrap();
        c.iris.scheme = Scheme::PlainMaskZ16;
        c.validate().unwrap();
        c.iris.threshold = 0.0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("cannot run layout 16x256x2x2") && e.contains("use a secret-mask scheme"), "{e}");
        let mut c = config(BatchSettings::default());
        c.listen = c.peers[1];
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("address 127.0.0.1:2 appears twice"), "{e}");
        c.listen = c.peers[0];
        c.peers[2] = c.peers[1];
        assert!(c.validate().unwrap_err().to_string().contains("appears twice"));
        for batch in [
            BatchSettings { share_timeout_ms: 0, ..BatchSettings::default() },
            BatchSettings { peer_timeout_s: 0, ..BatchSettings::default() },
        ] {
            let e = config(batch).validate().unwrap_err().to_string();
            assert!(e.contains("must be positive"), "{e}");
        }
        for ok in ["auto", "unplanned", "packed-vnni-l5-b32", "rows-amx-l0-b256"] {
            config(BatchSettings { kernel: ok.into(), ..BatchSettings::default() }).validate().unwrap();
        }
        let e = config(BatchSettings { kernel: "fastest".into(), ..BatchSettings::default() })
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("batch.kernel: not a correlation path: \"fastest\"") && e.contains("\"auto\""), "{e}");
    }

    /// Layouts read by name or as a table; a wrong one is refused with the accepted forms, a
    /// table missing a dimension with the dimension named; settings survive a round trip.
    #[test]
    fn layouts_are_read_with_clear_errors() {
        let read = |s: &str| toml::from_str::<IrisSettings>(s).map(|i| i.layout).map_err(|e| e.to_string());
        assert_eq!(read("layout = \"open-iris\"").unwrap(), Layout::Named(NamedLayout::OpenIris));
        assert_eq!(
            read("layout = { rows = 2, cols = 8, filters = 1, parts = 2 }").unwrap(),
            Layout::Custom { rows: 2, cols: 8, filters: 1, parts: 2 }
        );
        let e = read("layout = \"openiris\"").unwrap_err();
        assert!(e.contains("unknown layout \"openiris\": expected \"deployed\", \"open-iris\" or a table"), "{e}");
        let e = read("layout = { rows = 2, cols = 8, filters = 1 }").unwrap_err();
        assert!(e.contains("missing field `parts`"), "{e}");
        let e = read("layout = 3").unwrap_err();
        assert!(e.contains("expected \"deployed\""), "{e}");
        let mut c = config(BatchSettings::default());
        c.iris.layout = Layout::Custom { rows: 2, cols: 8, filters: 1, parts: 2 };
        let back: NodeConfig = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(back.iris, c.iris);
        let json = serde_json::to_string(&c.iris).unwrap();
        assert_eq!(serde_json::from_str::<IrisSettings>(&json).unwrap(), c.iris);
    }

    /// `[iris] adder` reaches the matcher configuration, is written by `to_toml` (so `argus setup`
    /// files show it), and an unknown value is refused with the ones it takes.
    #[test]
    fn the_adder_is_configurable() {
        let mut c = config(BatchSettings::default());
        assert_eq!(c.iris.tuning().adder, Adder::Ripple);
        assert!(c.to_toml().contains("adder = \"ripple\""), "{}", c.to_toml());
        c.iris = toml::from_str("adder = \"log-depth\"").unwrap();
        assert_eq!(c.iris.tuning().adder, Adder::LogDepth);
        assert_eq!(c.iris.threshold, 0.345, "other keys keep their defaults");
        let e = toml::from_str::<IrisSettings>("adder = \"fast\"").unwrap_err().to_string();
        assert!(e.contains("ripple") && e.contains("log-depth"), "{e}");
    }

    /// `[iris] compare_chunk`: `"auto"` (the default, written by `to_toml`) starts from the
    /// adder's default until the nodes measure their round time; 0 is the adder's default; a
    /// count in range reaches the matcher configuration; one outside it is refused by `validate`
    /// with the range, before a node starts; another word or a negative number when parsed.
    /// The bench flag reads the same values.
    #[test]
    fn the_compare_chunk_is_configurable() {
        let mut c = config(BatchSettings::default());
        assert_eq!(c.iris.compare_chunk, CompareChunk::Auto);
        assert!(c.to_toml().contains("compare_chunk = \"auto\""), "{}", c.to_toml());
        let m = c.iris.tuning();
        assert_eq!((m.compare_chunk, m.comparisons_per_chunk(Adder::Ripple)), (0, 1 << 20));
        assert_eq!(m.comparisons_per_chunk(Adder::LogDepth), 1 << 21);
        c.iris = toml::from_str("compare_chunk = 0").unwrap();
        assert_eq!((c.iris.compare_chunk, c.iris.tuning().compare_chunk), (CompareChunk::Count(0), 0));
        for ok in [1 << 10, 4194304, 1 << 26] {
            c.iris = toml::from_str(&format!("compare_chunk = {ok}")).unwrap();
            let m = c.iris.tuning();
            assert_eq!((m.compare_chunk, m.comparisons_per_chunk(Adder::LogDepth)), (ok, ok));
            assert!(c.validate().is_ok());
            assert_eq!(ok.to_string().parse(), Ok(CompareChunk::Count(ok)));
        }
        for bad in [1, 1023, (1 << 26) + 1] {
            c.iris = toml::from_str(&format!("compare_chunk = {bad}")).unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(
                e.contains("compare_chunk must be \"auto\", 0 (the adder's default) or from 1024 to 67108864")
                    && e.contains(&format!("got {bad}")),
                "{e}"
            );
            assert!(bad.to_string().parse::<CompareChunk>().unwrap_err().contains("from 1024 to 67108864"));
        }
        for bad in ["compare_chunk = -1", "compare_chunk = \"fast\"", "compare_chunk = 1.5"] {
            let e = toml::from_str::<IrisSettings>(bad).unwrap_err().to_string();
            assert!(e.contains("expected \"auto\" or a number of comparisons"), "{bad}: {e}");
        }
        assert_eq!("auto".parse(), Ok(CompareChunk::Auto));
        assert!("fast".parse::<CompareChunk>().unwrap_err().contains("expected \"auto\" or a number"));
    }
}
