//! The `[iris]` settings — scheme, code layout and matching — which a client and the three nodes
//! must share: the nodes read them in their configuration (`argus_node::config`), a client in
//! its `client.toml` ([`crate::ClientFile`]). A client uses the scheme, the layout, the rotations
//! and the mask mode to share a template; the other keys are the nodes' business.

use argus_iris::{EyeRule, IrisGeometry, MaskMode, MatchConfig, Threshold};
use argus_mpc::rep3::Adder;
use serde::{Deserialize, Serialize};

use crate::ClientError;

/// The schemes a node can run: the iris registry's ([`argus_iris::protocol::schemes`]).
pub use argus_iris::protocol::Scheme;

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
    pub fn geometry(&self) -> Result<IrisGeometry, ClientError> {
        match *self {
            Layout::Named(NamedLayout::Deployed) => Ok(IrisGeometry::DEPLOYED),
            Layout::Named(NamedLayout::OpenIris) => Ok(IrisGeometry::OPEN_IRIS),
            Layout::Custom { rows, cols, filters, parts } => {
                IrisGeometry::new(rows, cols, filters, parts).map_err(|e| ClientError::Config(e.to_string()))
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

/// The binary adder of the comparisons (see [`Tuning::adder`](argus_iris::protocol::Tuning::adder)).
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
    /// 256 batches and, on a LAN, the chunk node 0 planned on its host; 0 is the adder's default (2^20 with ripple, 2^21 with log depth); otherwise
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
    /// [`argus_iris::protocol::auto_compare_chunk`]): on one machine or a LAN the chunk node 0
    /// picks for that round time from the candidates it timed on its host when it started
    /// ([`argus_iris::protocol::plan_compare_chunk`]), 2^22 from 2 ms rounds (a ~4 ms round
    /// trip), 2^23 from 5 ms (~10 ms), with the ripple adder; the log-depth adder's default.
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
        self.scheme.name()
    }

    /// The matcher configuration (the threshold exactly as its decimal is written: 0.345 is 69/200).
    pub fn match_config(&self) -> Result<MatchConfig, ClientError> {
        if self.rotations < 0 {
            return Err(ClientError::Config(format!("rotations must be >= 0, got {}", self.rotations)));
        }
        if let CompareChunk::Count(n) = self.compare_chunk {
            check_compare_chunk("compare_chunk", n).map_err(ClientError::Config)?;
        }
        let threshold = Threshold::from_decimal(self.threshold).map_err(|e| ClientError::Config(e.to_string()))?;
        let min_valid = Threshold::from_decimal(self.min_valid).map_err(|e| {
            ClientError::Config(format!("iris.min_valid ({}) must be a fraction from 0 to 1: {e}", self.min_valid))
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
            min_valid,
        })
    }

    /// The MPC check's tuning these settings name (`adder`, and `compare_chunk`'s starting value:
    /// the adder's default for `auto`, until the nodes measure their round time).
    pub fn tuning(&self) -> argus_iris::protocol::Tuning {
        argus_iris::protocol::Tuning {
            adder: match self.adder {
                AdderSetting::Ripple => Adder::Ripple,
                AdderSetting::LogDepth => Adder::LogDepth,
            },
            compare_chunk: self.compare_chunk.initial(),
        }
    }

    /// Whether the scheme can run this layout with these settings: one synthetic template is
    /// shared as a client would share it (milliseconds), so a pairing the protocol cannot run (say
    /// codes of 2^15 bits on a 16-bit ring) is refused at start instead of refusing every query.
    pub fn check_supported(&self) -> Result<(), ClientError> {
        use argus_iris::protocol::scheme::IrisScheme;
        let (geometry, cfg) = (self.layout.geometry()?, self.match_config()?);
        let refuse = |e: argus_iris::IrisError| {
            ClientError::Config(format!(
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
