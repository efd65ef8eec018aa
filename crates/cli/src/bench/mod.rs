//! `argus bench <suite>`: measurements that print the paper's or a baseline's figure beside ours.

mod compare;
mod core;
mod gmw;
mod iris;
mod relu;
mod sharemind;
mod tensor;

use std::path::PathBuf;

use argus_net::Stats;
use clap::Subcommand;
use serde::Serialize;

/// Benchmark suites.
#[derive(Subcommand, Debug)]
pub enum Suite {
    /// The engine's core protocols (rep3, Shamir) and the plaintext kernel.
    Core(core::CoreArgs),
    /// Paper 000: Table 1 (secret dot products), Tables 2 and 3 (comparison phase) and the iris check end to end.
    Iris(iris::IrisArgs),
    /// Paper 001 (Sharemind): Table 2 (each protocol's single-op latency, saturation point and
    /// saturated cost, Z_2^32 and Z_2^64) and Table 3 (private k-means), the paper's figures beside.
    Sharemind(sharemind::SharemindArgs),
    /// Paper 003 (GMW with VS gates): the branching string equality, standard GMW against VS,
    /// for 2..5 parties under LAN, shared-LAN and WAN shaping; random OTs per second; AES-128
    /// and SHA-256 from Bristol files.
    Gmw(gmw::GmwArgs),
    /// Paper 002 (comparisons and ReLU over a 128-bit prime field), as far as built: every
    /// protocol and circuit form in the Shamir setting at 0, 10 and 20 ms one-way latency, one
    /// comparison and a batch, the paper's figures beside.
    Relu(relu::ReluArgs),
    /// Paper 004 (tensor triples), as far as built: triple generation from OT (offline) and
    /// matrix products with triples (online), 32- and 128-bit, under LAN and WAN shaping.
    Tensor(tensor::TensorArgs),
}

/// Runs a suite.
pub fn run(suite: Suite) -> Result<(), String> {
    match suite {
        Suite::Core(a) => core::run(a),
        Suite::Iris(a) => iris::run(a),
        Suite::Sharemind(a) => sharemind::run(a),
        Suite::Gmw(a) => gmw::run_suite(a),
        Suite::Relu(a) => relu::run_suite(a),
        Suite::Tensor(a) => tensor::run_suite(a),
    }
}

/// One line of a benchmark report (also the JSON record).
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// Suite name, e.g. `core`.
    pub suite: String,
    /// Operation, e.g. `mul`.
    pub op: String,
    /// Sharing scheme: `rep3`, `shamir` or `plain`.
    pub scheme: String,
    /// Variant, e.g. the adder.
    pub variant: String,
    /// Bits of the modulus.
    pub modulus_bits: u32,
    /// Operations in the batch.
    pub batch: usize,
    /// `memory` or `tcp`.
    pub backend: String,
    /// Median wall time of one batch.
    pub seconds: f64,
    /// `batch / seconds`.
    pub ops_per_sec: f64,
    /// Bytes sent by the busiest party for the whole batch.
    pub bytes_per_party: u64,
    /// Rounds of the busiest party for the whole batch.
    pub rounds: u64,
}

/// Writes records as a JSON array, each naming the host it was measured on: `cpu` (the CPU's
/// model) and `isa` (the kernel level in use), next to its own fields.
pub fn write_json<T: Serialize>(path: &PathBuf, records: &[T]) -> Result<(), String> {
    let host = argus_math::kernels::host();
    let mut values = Vec::with_capacity(records.len());
    for r in records {
        let mut v = serde_json::to_value(r).map_err(|e| e.to_string())?;
        if let Some(fields) = v.as_object_mut() {
            fields.insert("cpu".into(), host.cpu.clone().into());
            fields.insert("isa".into(), host.isa.name().into());
        }
        values.push(v);
    }
    let text = serde_json::to_string_pretty(&values).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Median of a non-empty sample.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Threads of each party's matrix products when the three parties share this machine (as they
/// do in every benchmark): a third of its cores, at least one. Oversubscribing costs throughput.
fn party_threads() -> usize {
    (std::thread::available_parallelism().map_or(1, |n| n.get()) / 3).max(1)
}

/// One measured evaluation: the slowest party's seconds, the busiest party's bytes and rounds.
pub(super) struct Run {
    pub(super) seconds: f64,
    pub(super) bytes: u64,
    pub(super) rounds: u64,
}

impl Run {
    /// From each party's (seconds, traffic): the slowest and the busiest.
    pub(super) fn of(parties: impl Iterator<Item = (f64, Stats)> + Clone) -> Run {
        Run {
            seconds: parties.clone().map(|g| g.0).fold(0.0, f64::max),
            bytes: parties.clone().map(|g| g.1.bytes_sent).max().unwrap_or(0),
            rounds: parties.map(|g| g.1.rounds).max().unwrap_or(0),
        }
    }

    /// The median seconds of `runs`, with the bytes and rounds of the last (every run sends the same).
    pub(super) fn median_of(mut runs: Vec<Run>) -> Run {
        let seconds = median(runs.iter().map(|r| r.seconds).collect());
        Run { seconds, ..runs.pop().expect("one run") }
    }
}
