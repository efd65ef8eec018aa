//! `argus bench relu`: paper 002 — Tables 2–4, every inequality test and ReLU of `mpc::inq` in
//! the Shamir setting (three parties) and the FT setting (two, garbling online or ahead:
//! `ft_og`), as threads over memory channels, per circuit form, at 0, 10 and 20 ms one-way
//! latency through the shaper, one comparison (the paper's latency figures) and a batch (the
//! throughput a network layer needs), the paper's figure beside ours. The online phase is timed
//! (in FT with the MAC check that must precede any output); the masks, triples and circuits
//! garbled ahead are made before and timed apart. Every run's outputs are checked against the
//! plaintext twin.

use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use argus_math::Fp;
use argus_mpc::inq::ft::{FtAbb, Garbling};
use argus_mpc::inq::rabbit::{self, RabbitMask};
use argus_mpc::inq::shamir::ShamirAbb;
use argus_mpc::inq::{fixed, ltz, rabbit_conv, relu, Abb, Bitwise, Circuit, Mask};
use argus_mpc::local::{run, Backend};
use argus_mpc::shamir::share_from_client;
use argus_mpc::MpcError;
use argus_net::{NetConfig, Shaper};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::median;

/// The protocols, by the paper's names.
const OPS: [&str; 7] = ["rabbit_slack", "cons_ltz", "lsss_ltz", "rabbit_conv", "rabbit_fp", "req_list", "relu"];

/// The settings.
const SETTINGS: [&str; 3] = ["shamir", "ft", "ft_og"];

/// Arguments of `argus bench relu`.
#[derive(clap::Args, Debug)]
pub struct ReluArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Protocols: rabbit_slack, cons_ltz, lsss_ltz, rabbit_conv, rabbit_fp, req_list, relu.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = OPS.map(String::from))]
    ops: Vec<String>,
    /// Settings: shamir, ft (garbling online), ft_og (garbling ahead).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = SETTINGS.map(String::from))]
    settings: Vec<String>,
    /// One-way latencies in milliseconds added to every message.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [0, 10, 20])]
    latencies: Vec<u64>,
    /// Comparisons per run: 1 for the paper's latency figures, a large batch for throughput.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [1, 100_000])]
    batches: Vec<usize>,
    /// Largest batch measured under added latency (the batch's time there is the same rounds).
    #[arg(long, default_value_t = 1000)]
    max_batch_with_latency: usize,
    /// Largest batch measured in FT for the full-field Rabbits and lsss_ltz (their
    /// preprocessing is OT per product or 128-bit circuits: the batch only repeats it).
    #[arg(long, default_value_t = 1000)]
    max_ft_batch_heavy: usize,
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
    /// `shamir`, `ft` or `ft_og`.
    setting: String,
    /// `and_not`, `and_xor` or `-`.
    circuit: String,
    latency_ms: u64,
    batch: usize,
    /// The online phase, median.
    seconds: f64,
    ops_per_sec: f64,
    /// Rounds on the wire: the busier party's count, plus in FT the garbler's one-way message
    /// (which the count folds into its next send).
    rounds: u64,
    bytes_per_party: u64,
    /// The masks (daBits, PRandInt), triples and circuits garbled ahead, made before the
    /// inputs, median.
    offline_seconds: f64,
}

/// The paper's figure (Tables 2–4, ms) for one comparison: Shamir, FT, FT(OG); lsss_ltz's
/// ripple (`and_xor`: one round per product) is Table 4's `lsss_ltz-O1`.
fn paper(setting: &str, op: &str, circuit: &str, latency: u64) -> String {
    let row: [f64; 3] = match (op, circuit, latency) {
        ("rabbit_slack", "and_not", 0) => [2.3, 8.5, 1.4],
        ("cons_ltz", "and_not", 0) => [1.3, 4.2, 1.2],
        ("rabbit_slack", "and_xor", 0) => [3.1, 8.1, 1.3],
        ("cons_ltz", "and_xor", 0) => [1.5, 4.0, 1.0],
        ("rabbit_conv", "and_not", 0) => [8.4, 12.7, f64::NAN],
        ("req_list", _, 0) => [44.0, 119.7, f64::NAN],
        ("rabbit_fp", _, 0) => [30.7, 64.0, f64::NAN],
        ("lsss_ltz", "-", 0) => [1.7, 1.8, f64::NAN],
        ("lsss_ltz", "and_xor", 0) => [4.1, 4.0, f64::NAN],
        ("rabbit_slack", "and_not", 10) => [623.1, 297.6, 124.7],
        ("cons_ltz", "and_not", 10) => [317.7, 148.6, 62.6],
        ("rabbit_slack", "and_xor", 10) => [1031.5, 295.7, 124.7],
        ("cons_ltz", "and_xor", 10) => [522.0, 148.6, 62.5],
        ("lsss_ltz", "-", 10) => [74.9, 75.2, f64::NAN],
        ("lsss_ltz", "and_xor", 10) => [1243.8, 1238.8, f64::NAN],
        ("rabbit_slack", "and_not", 20) => [1236.2, 577.2, 245.1],
        ("cons_ltz", "and_not", 20) => [627.7, 289.1, 122.7],
        ("rabbit_slack", "and_xor", 20) => [2045.2, 575.2, 244.6],
        ("cons_ltz", "and_xor", 20) => [1033.0, 288.1, 122.5],
        ("lsss_ltz", "-", 20) => [144.9, 144.6, f64::NAN],
        ("lsss_ltz", "and_xor", 20) => [2453.8, 2449.2, f64::NAN],
        _ => return "-".into(),
    };
    let ms = row[SETTINGS.iter().position(|&s| s == setting).unwrap_or(0)];
    if ms.is_nan() {
        "-".into()
    } else {
        format!("{ms} ms")
    }
}

/// The circuit forms an operation runs in: both for those on F_2 bits; for lsss_ltz the tree on
/// F_q bits (`-`) and the ripple (Table 4's unoptimised form); for the full-field Rabbits and
/// rabbit_conv (the paper's single row) the tree only.
fn circuits(op: &str) -> Vec<(Circuit, &'static str)> {
    match op {
        "lsss_ltz" => vec![(Circuit::AndNot, "-"), (Circuit::AndXor, "and_xor")],
        "rabbit_fp" | "req_list" => vec![(Circuit::AndNot, "-")],
        "rabbit_conv" => vec![(Circuit::AndNot, "and_not")],
        _ => vec![(Circuit::AndNot, "and_not"), (Circuit::AndXor, "and_xor")],
    }
}

/// One party's run: masks, then the timed online phase; returns its outputs (opened after the
/// clock stops), (offline s, online s, rounds, bytes).
type PartyRun = (Vec<u128>, f64, f64, u64, u64);

fn party<A: Abb>(
    abb: &mut A,
    gate: &Barrier,
    op: &str,
    circuit: Circuit,
    x: &A::Arith,
    k: u32,
    kappa: u32,
) -> Result<PartyRun, MpcError> {
    let n = abb.len(x);
    let t0 = Instant::now();
    enum M<A: Abb> {
        Catrina(Mask<A>),
        Rabbit(RabbitMask<A>),
    }
    let mask = match op {
        "rabbit_slack" => M::Rabbit(RabbitMask::new(abb, rabbit::Variant::Slack, n, k, kappa, circuit)?),
        "rabbit_fp" => M::Rabbit(RabbitMask::new(abb, rabbit::Variant::Fp, n, k, kappa, circuit)?),
        "req_list" => M::Rabbit(RabbitMask::new(abb, rabbit::Variant::RejectionList, n, k, kappa, circuit)?),
        "rabbit_conv" => M::Catrina(Mask::conversion(abb, n, k, kappa, circuit)?),
        "lsss_ltz" => M::Catrina(Mask::new(abb, n, k, k - 1, kappa, Bitwise::Arithmetic(circuit))?),
        "cons_ltz" => M::Catrina(Mask::new(abb, n, k, k - 1, kappa, Bitwise::Binary(circuit))?),
        _ => M::Catrina(Mask::for_relu(abb, n, k, kappa, Bitwise::Binary(circuit))?),
    };
    let offline = t0.elapsed().as_secs_f64();
    // the parties are threads of this process: they start the clock together (a barrier over
    // the network cannot, since the masks may end with a one-way message that leaves one party
    // a latency ahead, and every exchange keeps that skew)
    gate.wait();
    let (before, t0) = (abb.stats(), Instant::now());
    let y = match (&mask, op) {
        (M::Rabbit(m), _) => rabbit::lteqz(abb, x, m)?,
        (M::Catrina(m), "rabbit_conv") => rabbit_conv(abb, x, m)?,
        (M::Catrina(m), "cons_ltz" | "lsss_ltz") => ltz(abb, x, m)?,
        (M::Catrina(m), _) => relu(abb, x, m)?,
    };
    // nothing may leave the black box unchecked
    abb.check()?;
    let online = t0.elapsed().as_secs_f64();
    let used = abb.stats() - before;
    let out = abb.open(&y)?;
    Ok((out, offline, online, used.rounds, used.bytes_sent))
}

/// The twin of `op` on signed `x`: the comparisons' 0/1, ReLU's value.
fn twin(op: &str, x: i128) -> i128 {
    match op {
        "rabbit_slack" | "rabbit_fp" | "req_list" => i128::from(x <= 0),
        "cons_ltz" | "lsss_ltz" | "rabbit_conv" => i128::from(x < 0),
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
    for setting in &a.settings {
        if !SETTINGS.contains(&setting.as_str()) {
            return Err(format!("unknown setting {setting:?} (use {})", SETTINGS.join(", ")));
        }
    }
    let field = Fp::p128();
    argus_mpc::inq::check_width(&field, a.bits, a.kappa).map_err(|e| e.to_string())?;
    println!(
        "Paper 002: Shamir (3 parties) and FT (2 parties; ft_og garbles ahead), F_q with q = 2^128 − 159, {}-bit inputs, κ = {}",
        a.bits, a.kappa
    );
    println!(
        "{:<7} {:<13} {:<8} {:>6} {:>7} {:>11} {:>12} {:>6} {:>11} {:>10}  paper (one comparison)",
        "setting", "op", "circuit", "ms", "batch", "online s", "ops/s", "rounds", "KB/party", "offline s"
    );
    let mut records = Vec::new();
    for &latency in &a.latencies {
        let cfg = NetConfig {
            shaper: (latency > 0)
                .then(|| Shaper { latency: Duration::from_millis(latency), bandwidth_bytes_per_sec: None }),
            ..NetConfig::default()
        };
        for setting in &a.settings {
            for op in &a.ops {
                // garbling ahead changes nothing where nothing is garbled
                if setting == "ft_og" && matches!(op.as_str(), "lsss_ltz") {
                    continue;
                }
                for (circuit, name) in circuits(op) {
                    let heavy = setting != "shamir" && matches!(op.as_str(), "lsss_ltz" | "rabbit_fp" | "req_list");
                    let batches = a.batches.iter().filter(|&&b| {
                        (latency == 0 || b <= a.max_batch_with_latency) && (!heavy || b <= a.max_ft_batch_heavy)
                    });
                    for &batch in batches {
                        let r = measure(&field, setting, op, circuit, name, latency, batch, &cfg, &a)?;
                        println!(
                            "{setting:<7} {op:<13} {name:<8} {latency:>6} {batch:>7} {:>11.4} {:>12.0} {:>6} {:>11.1} {:>10.3}  {}",
                            r.seconds,
                            r.ops_per_sec,
                            r.rounds,
                            r.bytes_per_party as f64 / 1e3,
                            r.offline_seconds,
                            if batch == 1 { paper(setting, op, name, latency) } else { "-".into() }
                        );
                        records.push(r);
                    }
                }
            }
        }
    }
    if let Some(path) = &a.json {
        super::write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn measure(
    field: &Fp,
    setting: &str,
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
    let k = if full_field { 0 } else { a.bits };
    for _ in 0..a.reps.max(1) {
        let gate = Barrier::new(if setting == "shamir" { 3 } else { 2 });
        let got = match setting {
            "shamir" => run(3, Backend::Memory, cfg.clone(), |p| {
                let me = p.id();
                let mut abb = ShamirAbb::new(p, *field)?;
                party(&mut abb, &gate, op, circuit, &shares[me], k, a.kappa)
            }),
            _ => run(2, Backend::Memory, cfg.clone(), |p| {
                let garbling = if setting == "ft" { Garbling::Online } else { Garbling::Offline };
                let mine = if p.id() == 0 { values.clone() } else { vec![0; values.len()] };
                let mut abb = FtAbb::new(p, *field, garbling)?;
                let x = abb.input(&mine)?;
                party(&mut abb, &gate, op, circuit, &x, k, a.kappa)
            }),
        }
        .map_err(|e| format!("{setting} {op}: {e}"))?;
        let want: Vec<u128> = xs.iter().map(|&x| fixed::embed(field, twin(op, x))).collect();
        if got[0].0 != want {
            return Err(format!("{setting} {op} ({name}, batch {batch}): the secure outputs differ from the twin's"));
        }
        offline.push(got.iter().map(|g| g.1).fold(0.0, f64::max));
        online.push(got.iter().map(|g| g.2).fold(0.0, f64::max));
        // FT's garbled circuit: one message the count folds into the garbler's next send
        let garbled = setting != "shamir" && op != "lsss_ltz";
        rounds = got.iter().map(|g| g.3).max().unwrap_or(0) + u64::from(garbled);
        bytes = got.iter().map(|g| g.4).max().unwrap_or(0);
    }
    let seconds = median(online);
    Ok(ReluRecord {
        suite: "relu".into(),
        op: op.into(),
        setting: setting.into(),
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
