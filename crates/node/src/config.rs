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
//! compare_chunk = "auto"            # comparisons per chunk, from the nodes' round time; 0: the adder's default; or a count
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

use argus_iris::{EyeRule, IrisGeometry, MaskMode, MatchConfig, Threshold};
use argus_mpc::rep3::Adder;
use serde::{Deserialize, Serialize};

use crate::NodeError;

/// The schemes a node can run (paper 000 section 5); all keep the masks secret except `PlainMaskZ16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Scheme {
    /// Shamir over F_65519, MPCLift-F: 2 bytes of share per code bit.
    #[serde(rename = "mpclift-F16-shamir")]
    MpcLiftF16,
    /// Replicated over Z_2^16, MPCLift-Z (4 bytes per code bit).
    #[serde(rename = "mpclift-Z16-rep3")]
    MpcLiftZ16,
    /// Replicated over Z_2^32, NoLift-Z (8 bytes per code bit).
    #[serde(rename = "nolift-Z32-rep3")]
    NoLiftZ32,
    /// Public masks (Alg. 2): the masks are known to the nodes.
    #[serde(rename = "plain-mask-Z16-rep3")]
    PlainMaskZ16,
    /// Shamir over GR(2^16, 4), MPCLift-Z after the products: 2 bytes of share per code bit and
    /// one 16-bit multiply per bit (the deployed system's sharing). The default: the fastest
    /// measured with secret masks, at the 2-byte storage bound.
    #[default]
    #[serde(rename = "mpclift-GR16-shamir")]
    MpcLiftGr16,
}

/// Code layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Layout {
    /// `"deployed"` or `"open-iris"`.
    Named(NamedLayout),
    /// Explicit geometry.
    Custom {
        /// Rows.
        rows: usize,
        /// Angular columns (rotations shift these).
        cols: usize,
        /// Filters.
        filters: usize,
        /// Bits per filter response (real/imaginary).
        parts: usize,
    },
}

/// Read by hand rather than `untagged`, whose error ("did not match any variant") names no
/// accepted value.
impl<'de> Deserialize<'de> for Layout {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        const EXPECTED: &str = "\"deployed\", \"open-iris\" or a table { rows, cols, filters, parts }";
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Layout;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Layout, E> {
                match v {
                    "deployed" => Ok(Layout::Named(NamedLayout::Deployed)),
                    "open-iris" => Ok(Layout::Named(NamedLayout::OpenIris)),
                    other => Err(E::custom(format!("unknown layout \"{other}\": expected {EXPECTED}"))),
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Layout, A::Error> {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Table {
                    rows: usize,
                    cols: usize,
                    filters: usize,
                    parts: usize,
                }
                let t = Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Layout::Custom { rows: t.rows, cols: t.cols, filters: t.filters, parts: t.parts })
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The named layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NamedLayout {
    /// 16 × 200 × 2 × 2 = 12800 bits.
    Deployed,
    /// 16 × 256 × 2 × 2 = 16384 bits.
    OpenIris,
}

impl Layout {
    /// The geometry.
    pub fn geometry(&self) -> Result<IrisGeometry, NodeError> {
        match *self {
            Layout::Named(NamedLayout::Deployed) => Ok(IrisGeometry::DEPLOYED),
            Layout::Named(NamedLayout::OpenIris) => Ok(IrisGeometry::OPEN_IRIS),
            Layout::Custom { rows, cols, filters, parts } => {
                IrisGeometry::new(rows, cols, filters, parts).map_err(|e| NodeError::Config(e.to_string()))
            }
        }
    }
}

/// How masks are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MaskSetting {
    /// One mask bit per code bit.
    #[default]
    PerBit,
    /// One mask bit per real/imaginary pair.
    Trimmed,
}

/// The both-eyes rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RuleSetting {
    /// Both eyes must match.
    #[default]
    And,
    /// Either eye matching is enough.
    Or,
}

/// The binary adder of the comparisons (see [`MatchConfig::adder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AdderSetting {
    /// Ripple carry: fewest bytes, one round per bit (nodes on one LAN).
    #[default]
    Ripple,
    /// Kogge-Stone: a few rounds per comparison for about 1.6 times the bytes (nodes far apart).
    LogDepth,
}

/// What decides a match, and how it is computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrisSettings {
    /// The MPC scheme.
    pub scheme: Scheme,
    /// Code layout.
    pub layout: Layout,
    /// Fractional Hamming distance threshold (exclusive): below it is a match.
    pub threshold: f64,
    /// Both-eyes rule.
    pub rule: RuleSetting,
    /// Rotations each way: the window is `-rotations..=rotations`.
    pub rotations: i32,
    /// Mask mode.
    pub mask_mode: MaskSetting,
    /// Also reveal, per query, the enrolled identities it matched, to this node's operator (an
    /// info-level log line per matching query; clients never see them). Off by default: then a
    /// batch reveals only "unique / not unique" per query.
    pub reveal_matches: bool,
    /// The comparisons' binary adder: `ripple` (default; one round per bit of the compared
    /// values: 275 rounds for a batch of 32 against 4000) or `log-depth` (55 rounds for ~1.6
    /// times the bytes). Choose `log-depth` when the nodes are far apart: from a round trip of
    /// ~5 ms the rounds, not the products, set a batch's time. Results are the same either way;
    /// the scheme over F_65519 always uses ripple.
    pub adder: AdderSetting,
    /// Comparisons per chunk of the comparison phase (see [`CompareChunk`]): `"auto"` (the
    /// default) chooses from the round time the nodes measure at every session start and every
    /// 256 batches; 0 is the adder's default (2^20 with ripple, 2^21 with log depth); otherwise
    /// from 1024 to 67108864 (2^26). The phase runs its rounds once per chunk and holds a chunk's values at once, ~40
    /// bytes per comparison with ripple and ~90 with log depth, so a larger chunk buys fewer
    /// rounds with memory, for nodes far apart (docs/OPERATIONS.md): a batch of 32 queries
    /// against 4000 takes 275 rounds at 2^20, 83 at `4194304` (2^22) and 51 at `8388608` (2^23),
    /// ripple. Results are the same either way.
    pub compare_chunk: CompareChunk,
    /// The least fraction of each eye's code bits that must be valid (unmasked) for a query to be
    /// checked: a query below it is refused with that reason, decided in MPC without revealing
    /// the count (0.25 by default; 0 checks every query, even an all-masked one, which then
    /// matches nothing and is "unique").
    pub min_valid: f64,
    /// Mirror-attack detection (on by default): a query that matches nothing as presented but
    /// matches an enrolled identity with its eyes swapped and each code mirrored (the image of a
    /// face in a mirror, [`argus_iris::Template::mirrored`]) is refused as an attack and counted
    /// in `argus status`, not enrolled. It checks every query found unique a second time against
    /// the database: about twice a batch's products and comparisons.
    pub mirror_check: bool,
}

/// `[iris] compare_chunk` (and `argus bench iris --compare-chunk`): comparisons per chunk of the
/// comparison phase, or `"auto"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CompareChunk {
    /// Chosen when the nodes connect, and again every 256 batches, from the round time they
    /// measure between them ([`argus_mpc::Party::round_time`],
    /// [`argus_iris::protocol::auto_compare_chunk`]): the adder's default on one machine or a LAN, 2^22 from 2 ms rounds (a ~4 ms round trip), 2^23
    /// from 5 ms (~10 ms), with the ripple adder.
    #[default]
    Auto,
    /// This many comparisons; 0: the adder's default.
    Count(usize),
}

impl CompareChunk {
    /// The value the matcher starts with: the count, or for `Auto` the adder's default until the
    /// nodes have measured their round time.
    pub fn initial(self) -> usize {
        match self {
            CompareChunk::Auto => 0,
            CompareChunk::Count(n) => n,
        }
    }
}

impl std::fmt::Display for CompareChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompareChunk::Auto => f.write_str("auto"),
            CompareChunk::Count(n) => write!(f, "{n}"),
        }
    }
}

impl std::str::FromStr for CompareChunk {
    type Err = String;
    /// `auto` or a count in range ([`check_compare_chunk`]).
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(CompareChunk::Auto);
        }
        let n = s.parse().map_err(|_| format!("expected \"auto\" or a number of comparisons, got {s:?}"))?;
        check_compare_chunk("the comparisons per chunk", n)?;
        Ok(CompareChunk::Count(n))
    }
}

impl Serialize for CompareChunk {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CompareChunk::Auto => s.serialize_str("auto"),
            CompareChunk::Count(n) => s.serialize_u64(*n as u64),
        }
    }
}

impl<'de> Deserialize<'de> for CompareChunk {
    /// `"auto"` or a non-negative integer (its range is checked with the rest of the config).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = CompareChunk;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"auto\" or a number of comparisons")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CompareChunk, E> {
                match v {
                    "auto" => Ok(CompareChunk::Auto),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CompareChunk, E> {
                usize::try_from(v)
                    .map(CompareChunk::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CompareChunk, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The range of a non-zero [`CompareChunk::Count`].
pub const COMPARE_CHUNK_RANGE: std::ops::RangeInclusive<usize> = 1 << 10..=1 << 26;

/// Checks a comparisons-per-chunk count given as `name` (a config key or a command-line flag):
/// 0 or within [`COMPARE_CHUNK_RANGE`], else an error naming the range and the memory it costs.
pub fn check_compare_chunk(name: &str, n: usize) -> Result<(), String> {
    if n == 0 || COMPARE_CHUNK_RANGE.contains(&n) {
        return Ok(());
    }
    Err(format!(
        "{name} must be \"auto\", 0 (the adder's default) or from {} to {} comparisons (each holds ~40 bytes per \
         node, ~90 with the log-depth adder), got {n}",
        COMPARE_CHUNK_RANGE.start(),
        COMPARE_CHUNK_RANGE.end(),
    ))
}

impl Default for IrisSettings {
    fn default() -> Self {
        IrisSettings {
            scheme: Scheme::default(),
            layout: Layout::Named(NamedLayout::Deployed),
            threshold: 0.345,
            rule: RuleSetting::And,
            rotations: 15,
            mask_mode: MaskSetting::PerBit,
            reveal_matches: false,
            adder: AdderSetting::Ripple,
            compare_chunk: CompareChunk::Auto,
            min_valid: 0.25,
            mirror_check: true,
        }
    }
}

impl IrisSettings {
    /// The scheme's name, e.g. `mpclift-F16-shamir`.
    pub fn scheme_name(&self) -> &'static str {
        crate::with_scheme!(self.scheme, s => argus_iris::protocol::scheme::IrisScheme::name(&s))
    }

    /// The matcher configuration (the threshold exactly as its decimal is written: 0.345 is 69/200).
    pub fn match_config(&self) -> Result<MatchConfig, NodeError> {
        if self.rotations < 0 {
            return Err(NodeError::Config(format!("rotations must be >= 0, got {}", self.rotations)));
        }
        if let CompareChunk::Count(n) = self.compare_chunk {
            check_compare_chunk("compare_chunk", n).map_err(NodeError::Config)?;
        }
        let threshold = Threshold::from_decimal(self.threshold).map_err(|e| NodeError::Config(e.to_string()))?;
        let min_valid = Threshold::from_decimal(self.min_valid).map_err(|e| {
            NodeError::Config(format!("iris.min_valid ({}) must be a fraction from 0 to 1: {e}", self.min_valid))
        })?;
        Ok(MatchConfig {
            threshold,
            rotations: -self.rotations..=self.rotations,
            rule: match self.rule {
                RuleSetting::And => EyeRule::And,
                RuleSetting::Or => EyeRule::Or,
            },
            mask_mode: match self.mask_mode {
                MaskSetting::PerBit => MaskMode::PerBit,
                MaskSetting::Trimmed => MaskMode::Trimmed,
            },
            reveal_matches: self.reveal_matches,
            adder: match self.adder {
                AdderSetting::Ripple => Adder::Ripple,
                AdderSetting::LogDepth => Adder::LogDepth,
            },
            compare_chunk: self.compare_chunk.initial(),
            min_valid,
        })
    }

    /// Whether the scheme can run this layout with these settings: one synthetic template is
    /// shared as a client would share it (milliseconds), so a pairing the protocol cannot run (say
    /// codes of 2^15 bits on a 16-bit ring) is refused at start instead of refusing every query.
    pub fn check_supported(&self) -> Result<(), NodeError> {
        use argus_iris::protocol::scheme::IrisScheme;
        let (geometry, cfg) = (self.layout.geometry()?, self.match_config()?);
        let refuse = |e: argus_iris::IrisError| {
            NodeError::Config(format!(
                "[iris] scheme = \"{}\" cannot run layout {} with these settings: {e}; choose another scheme or layout",
                self.scheme_name(),
                geometry.describe()
            ))
        };
        let t = argus_iris::Generator::new(geometry, 0).map_err(refuse)?.random_template();
        crate::with_scheme!(self.scheme, s => {
            s.share_enrollment(&t, &cfg).map_err(refuse)?;
            s.share_query(&t, &cfg).map_err(refuse)?;
        });
        Ok(())
    }
}

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
}

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
        if self.batch.share_timeout_ms == 0 || self.batch.peer_timeout_s == 0 {
            return Err(NodeError::Config(
                "batch.share_timeout_ms and batch.peer_timeout_s must be positive: 0 would fail every request".into(),
            ));
        }
        self.iris.check_supported()
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
        assert_eq!(c.iris.match_config().unwrap().adder, Adder::Ripple);
        assert!(c.to_toml().contains("adder = \"ripple\""), "{}", c.to_toml());
        c.iris = toml::from_str("adder = \"log-depth\"").unwrap();
        assert_eq!(c.iris.match_config().unwrap().adder, Adder::LogDepth);
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
        let m = c.iris.match_config().unwrap();
        assert_eq!((m.compare_chunk, m.comparisons_per_chunk(Adder::Ripple)), (0, 1 << 20));
        assert_eq!(m.comparisons_per_chunk(Adder::LogDepth), 1 << 21);
        c.iris = toml::from_str("compare_chunk = 0").unwrap();
        assert_eq!((c.iris.compare_chunk, c.iris.match_config().unwrap().compare_chunk), (CompareChunk::Count(0), 0));
        for ok in [1 << 10, 4194304, 1 << 26] {
            c.iris = toml::from_str(&format!("compare_chunk = {ok}")).unwrap();
            let m = c.iris.match_config().unwrap();
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
