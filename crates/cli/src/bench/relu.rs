//! `argus bench relu`: paper 002 — Tables 2–4, every inequality test and ReLU of `mpc::inq` in
//! the Shamir setting (three parties as threads over memory channels; the FT setting is not
//! built yet) per circuit form, at 0, 10 and 20 ms one-way latency through the shaper, one
//! comparison (the paper's latency figures) and a batch (the throughput a network layer needs),
//! the paper's figure beside ours. The online phase is timed; the masks (daBits, PRandInt) are
//! made before and timed apart. Every run's outputs are checked against the plaintext twin.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_math::Fp;
use argus_mpc::inq::rabbit::{self, RabbitMask};
use argus_mpc::inq::shamir::ShamirAbb;
use argus_mpc::inq::{fixed, ltz, relu, Abb, Bitwise, Circuit, Mask};
use argus_mpc::local::{run, Backend};
use argus_mpc::shamir::share_from_client;
use argus_mpc::MpcError;
use argus_net::{NetConfig, Shaper};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::core::barrier;
use super::median;

/// The protocols, by the paper's names.
const OPS: [&str; 6] = ["rabbit_slack", "cons_ltz", "lsss_ltz", "rabbit_fp", "req_list", "relu"];

/// Arguments of `argus bench relu`.
#[derive(clap::Args, Debug)]
pub struct ReluArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Protocols: rabbit_slack, cons_ltz, lsss_ltz, rabbit_fp, req_list, relu.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = OPS.map(String::from))]
    ops: Vec<String>,
    /// One-way latencies in milliseconds added to every message.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [0, 10, 20])]
    latencies: Vec<u64>,
    /// Comparisons per run: 1 for the paper's latency figures, a large batch for throughput.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [1, 100_000])]
    batches: Vec<usize>,
    /// Largest batch measured under added latency (the batch's time there is the same rounds).
    #[arg(long, default_value_t = 1000)]
    max_batch_with_latency: usize,
    /// Bits of the inputs (the paper's circuits are 64 bits wide).
    #[arg(long, default_value_t = 64)]
    bits: u32,
    /// Statistical security parameter κ (bits of slack).
    #[arg(long, default_value_t = 40)]
    kappa: u32,
    /// Repetitions per measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
}

/// One JSON record.
#[derive(Clone, Debug, Serialize)]
pub struct ReluRecord {
    suite: String,
    /// The protocol.
    op: String,
    /// `shamir` (`ft`, `ft_og` once built).
    setting: String,
    /// `and_not`, `and_xor` or `-`.
    circuit: String,
    latency_ms: u64,
    batch: usize,
    /// The online phase, median.
    seconds: f64,
    ops_per_sec: f64,
    rounds: u64,
    bytes_per_party: u64,
    /// The masks (daBits, PRandInt), made before the inputs, median.
    offline_seconds: f64,
}

/// The paper's Shamir figure (Tables 2 and 3, ms) for one comparison.
fn paper(op: &str, circuit: &str, latency: u64) -> String {
    let ms = match (op, circuit, latency) {
        ("rabbit_slack", "and_not", 0) => 2.3,
        ("cons_ltz", "and_not", 0) => 1.3,
        ("rabbit_slack", "and_xor", 0) => 3.1,
        ("cons_ltz", "and_xor", 0) => 1.5,
        ("req_list", _, 0) => 44.0,
        ("rabbit_fp", _, 0) => 30.7,
        ("lsss_ltz", _, 0) => 1.7,
        ("rabbit_slack", "and_not", 10) => 623.1,
        ("cons_ltz", "and_not", 10) => 317.7,
        ("rabbit_slack", "and_xor", 10) => 1031.5,
        ("cons_ltz", "and_xor", 10) => 522.0,
        ("lsss_ltz", _, 10) => 74.9,
        ("rabbit_slack", "and_not", 20) => 1236.2,
        ("cons_ltz", "and_not", 20) => 627.7,
        ("rabbit_slack", "and_xor", 20) => 2045.2,
        ("cons_ltz", "and_xor", 20) => 1033.0,
        ("lsss_ltz", _, 20) => 144.9,
        _ => return "-".into(),
    };
    format!("{ms} ms")
}

/// The circuit forms an operation runs in: both for those on F_2 bits, one for lsss_ltz (the
/// tree on F_q bits) and for the full-field Rabbits (128-bit circuits: the tree only).
fn circuits(op: &str) -> Vec<(Circuit, &'static str)> {
    match op {
        "lsss_ltz" | "rabbit_fp" | "req_list" => vec![(Circuit::AndNot, "-")],
        _ => vec![(Circuit::AndNot, "and_not"), (Circuit::AndXor, "and_xor")],
    }
}

/// One party's run: masks, then the timed online phase; returns its outputs (opened after the
/// clock stops), (offline s, online s, rounds, bytes).
type PartyRun = (Vec<u128>, f64, f64, u64, u64);

fn party(
    p: &mut argus_mpc::Party,
    op: &str,
    circuit: Circuit,
    x: &argus_mpc::shamir::Shamir<Fp>,
    k: u32,
    kappa: u32,
) -> Result<PartyRun, MpcError> {
    let n = x.len();
    let mut abb = ShamirAbb::new(p, Fp::p128())?;
    let t0 = Instant::now();
    enum M<'a> {
        Catrina(Mask<ShamirAbb<'a>>),
        Rabbit(RabbitMask<ShamirAbb<'a>>),
    }
    let mask = match op {
        "rabbit_slack" => M::Rabbit(RabbitMask::new(&mut abb, rabbit::Variant::Slack, n, k, kappa, circuit)?),
        "rabbit_fp" => M::Rabbit(RabbitMask::new(&mut abb, rabbit::Variant::Fp, n, k, kappa, circuit)?),
        "req_list" => M::Rabbit(RabbitMask::new(&mut abb, rabbit::Variant::RejectionList, n, k, kappa, circuit)?),
        _ => M::Catrina(Mask::new(&mut abb, n, k, k - 1, kappa)?),
    };
    let offline = t0.elapsed().as_secs_f64();
    // two barriers: the masks end with a one-way message (bit injection's forward), after which
    // one exchange would let its receiver start a latency ahead of the others
    barrier(abb.party())?;
    barrier(abb.party())?;
    let (before, t0) = (abb.party().stats(), Instant::now());
    let y = match (&mask, op) {
        (M::Rabbit(m), _) => rabbit::lteqz(&mut abb, x, m, circuit)?,
        (M::Catrina(m), "cons_ltz") => ltz(&mut abb, x, m, Bitwise::Binary(circuit))?,
        (M::Catrina(m), "lsss_ltz") => ltz(&mut abb, x, m, Bitwise::Arithmetic(circuit))?,
        (M::Catrina(m), _) => relu(&mut abb, x, m, Bitwise::Binary(circuit))?,
    };
    let online = t0.elapsed().as_secs_f64();
    let used = abb.party().stats() - before;
    let out = abb.open(&y)?;
    Ok((out, offline, online, used.rounds, used.bytes_sent))
}

/// The twin of `op` on signed `x`: the comparisons' 0/1, ReLU's value.
fn twin(op: &str, x: i128) -> i128 {
    match op {
        "rabbit_slack" | "rabbit_fp" | "req_list" => i128::from(x <= 0),
        "cons_ltz" | "lsss_ltz" => i128::from(x < 0),
        _ => x.max(0),
    }
}

/// Runs the suite.
pub fn run_suite(a: ReluArgs) -> Result<(), String> {
    for op in &a.ops {
        if !OPS.contains(&op.as_str()) {
            return Err(format!("unknown op {op:?} (use {})", OPS.join(", ")));
        }
    }
    let field = Fp::p128();
    argus_mpc::inq::check_width(&field, a.bits, a.kappa).map_err(|e| e.to_string())?;
    println!(
        "Paper 002 in the Shamir setting (3 parties, F_q with q = 2^128 − 159), {}-bit inputs, κ = {}",
        a.bits, a.kappa
    );
    println!(
        "{:<13} {:<8} {:>6} {:>7} {:>11} {:>12} {:>6} {:>11} {:>10}  paper (Shamir, one comparison)",
        "op", "circuit", "ms", "batch", "online s", "ops/s", "rounds", "KB/party", "offline s"
    );
    let mut records = Vec::new();
    for &latency in &a.latencies {
        let cfg = NetConfig {
            shaper: (latency > 0)
                .then(|| Shaper { latency: Duration::from_millis(latency), bandwidth_bytes_per_sec: None }),
            ..NetConfig::default()
        };
        for op in &a.ops {
            for (circuit, name) in circuits(op) {
                for &batch in a.batches.iter().filter(|&&b| latency == 0 || b <= a.max_batch_with_latency) {
                    let r = measure(&field, op, circuit, name, latency, batch, &cfg, &a)?;
                    println!(
                        "{op:<13} {name:<8} {latency:>6} {batch:>7} {:>11.4} {:>12.0} {:>6} {:>11.1} {:>10.3}  {}",
                        r.seconds,
                        r.ops_per_sec,
                        r.rounds,
                        r.bytes_per_party as f64 / 1e3,
                        r.offline_seconds,
                        if batch == 1 { paper(op, name, latency) } else { "-".into() }
                    );
                    records.push(r);
                }
            }
        }
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&records).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn measure(
    field: &Fp,
    op: &str,
    circuit: Circuit,
    name: &str,
    latency: u64,
    batch: usize,
    cfg: &NetConfig,
    a: &ReluArgs,
) -> Result<ReluRecord, String> {
    let full_field = matches!(op, "rabbit_fp" | "req_list");
    let mut rng = StdRng::seed_from_u64(batch as u64);
    let top = 1i128 << (a.bits - 1);
    let xs: Vec<i128> = (0..batch).map(|_| rng.gen_range(-top..top)).collect();
    let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(field, x)).collect();
    let shares = share_from_client(field, &values, &mut rng).map_err(|e| e.to_string())?;
    let (mut offline, mut online) = (Vec::new(), Vec::new());
    let (mut rounds, mut bytes) = (0, 0);
    for _ in 0..a.reps.max(1) {
        let got = run(3, Backend::Memory, cfg.clone(), |p| {
            let me = p.id();
            party(p, op, circuit, &shares[me], if full_field { 0 } else { a.bits }, a.kappa)
        })
        .map_err(|e| format!("{op}: {e}"))?;
        let want: Vec<u128> = xs.iter().map(|&x| fixed::embed(field, twin(op, x))).collect();
        if got[0].0 != want {
            return Err(format!("{op} ({name}, batch {batch}): the secure outputs differ from the twin's"));
        }
        offline.push(got.iter().map(|g| g.1).fold(0.0, f64::max));
        online.push(got.iter().map(|g| g.2).fold(0.0, f64::max));
        rounds = got.iter().map(|g| g.3).max().unwrap_or(0);
        bytes = got.iter().map(|g| g.4).max().unwrap_or(0);
    }
    let seconds = median(online);
    Ok(ReluRecord {
        suite: "relu".into(),
        op: op.into(),
        setting: "shamir".into(),
        circuit: name.into(),
        latency_ms: latency,
        batch,
        seconds,
        ops_per_sec: batch as f64 / seconds.max(f64::MIN_POSITIVE),
        rounds,
        bytes_per_party: bytes,
        offline_seconds: median(offline),
    })
}
