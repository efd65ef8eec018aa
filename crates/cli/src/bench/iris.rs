//! `argus bench iris`: the iris uniqueness check end to end (more of paper 000's tables to come).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::{IrisScheme, MpcLiftF16, MpcLiftGr16, MpcLiftZ16, NoLiftZ32, PlainMaskZ16};
use argus_iris::{Generator, IrisGeometry, MaskMode, MatchConfig};
use argus_mpc::local::{run3, Backend};
use argus_net::NetConfig;
use clap::Args;
use serde::Serialize;

use super::median;

/// Arguments of `argus bench iris`.
#[derive(Args, Debug)]
pub struct IrisArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Enrolled identities (both eyes each).
    #[arg(long, default_value_t = 1000)]
    db: usize,
    /// Queries per batch.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// Repetitions (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Transport: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    /// End-to-end schemes to run (`--schemes ""` for none): mpclift-gr16 (Shamir over GR(2^16, 4), 2 bytes per
    /// code bit, one 16-bit multiply per bit), mpclift-f16 (Shamir over F_65519, 2 bytes per code bit), mpclift-z16
    /// (replicated over Z_2^16), nolift-z32 (replicated over Z_2^32), plain-mask-z16 (Alg. 2: public
    /// masks, secret codes over Z_2^16).
    #[arg(long, value_delimiter = ',', default_values_t = ["mpclift-gr16".to_string(), "mpclift-f16".to_string(), "mpclift-z16".to_string(), "nolift-z32".to_string()])]
    schemes: Vec<String>,
    /// Trimmed masks: one mask bit per real/imaginary pair (half the mask storage and products).
    #[arg(long)]
    trimmed: bool,
    /// Batch sizes of the comparison-phase tables (paper 000 Tables 2 and 3).
    #[arg(long, value_delimiter = ',', default_values_t = [50_000usize, 100_000, 250_000, 500_000])]
    compare_batches: Vec<usize>,
    /// Skip the comparison-phase tables (end to end only).
    #[arg(long)]
    no_compare: bool,
}

/// One record of the iris suite.
#[derive(Debug, Serialize)]
struct Record {
    suite: &'static str,
    op: &'static str,
    variant: &'static str,
    masks: &'static str,
    modulus_bits: u32,
    batch: usize,
    seconds: f64,
    ops_per_sec: f64,
    ops_per_sec_per_core: f64,
    bytes_per_party: u64,
    rounds: u64,
}

fn config(a: &IrisArgs) -> MatchConfig {
    let mask_mode = if a.trimmed { MaskMode::Trimmed } else { MaskMode::PerBit };
    MatchConfig { mask_mode, ..MatchConfig::default() }
}

/// Runs the suite.
pub fn run(a: IrisArgs) -> Result<(), String> {
    let backend = match a.backend.as_str() {
        "tcp" => Backend::Tcp,
        "memory" => Backend::Memory,
        o => return Err(format!("unknown backend {o:?} (use tcp or memory)")),
    };
    let mut records = compare_tables(&a, backend)?;
    for scheme in a.schemes.iter().filter(|s| !s.is_empty()) {
        records.push(match scheme.as_str() {
            "mpclift-z16" => e2e(&a, backend, &MpcLiftZ16)?,
            "nolift-z32" => e2e(&a, backend, &NoLiftZ32)?,
            "mpclift-f16" => e2e(&a, backend, &MpcLiftF16)?,
            "mpclift-gr16" => e2e(&a, backend, &MpcLiftGr16)?,
            "plain-mask-z16" => e2e(&a, backend, &PlainMaskZ16)?,
            o => {
                return Err(format!(
                    "unknown scheme {o:?} (use mpclift-gr16, mpclift-f16, mpclift-z16, nolift-z32 or plain-mask-z16)"
                ))
            }
        });
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&records).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Tables 2 and 3: every comparison variant at every batch size, the paper's figure beside ours.
fn compare_tables(a: &IrisArgs, backend: Backend) -> Result<Vec<Record>, String> {
    if a.no_compare || a.compare_batches.is_empty() {
        return Ok(Vec::new());
    }
    let variants = super::compare::variants();
    let reps = a.reps.max(1);
    let batches = a.compare_batches.clone();
    let per_party = run3(backend, NetConfig::with_timeout(Duration::from_secs(600)), |p| {
        let mut out = Vec::new();
        for v in &variants {
            for &n in &batches {
                out.push(super::compare::measure(p, v, n, reps)?);
            }
        }
        Ok(out)
    })
    .map_err(|e| e.to_string())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(3);
    println!(
        "{:<13} {:>7} {:>10} {:>12} {:>11} {:>7}   paper (1 thread per party): M el/s, kB",
        "compare", "batch", "ms", "M el/s/core", "kB/party", "rounds"
    );
    let mut records = Vec::new();
    let mut k = 0;
    for v in &variants {
        for &n in &batches {
            let secs = median((0..reps).map(|r| per_party.iter().map(|pp| pp[k][r].0).fold(0.0, f64::max)).collect());
            let bytes = per_party.iter().map(|pp| pp[k][0].1.bytes_sent).max().unwrap_or(0);
            let rounds = per_party.iter().map(|pp| pp[k][0].1.rounds).max().unwrap_or(0);
            let per_core = n as f64 / secs * 3.0 / cores as f64;
            let paper = v.paper.iter().find(|(b, _, _)| *b == n).map_or(String::new(), |(_, t, kb)| {
                format!(
                    "{t:>6.1} {kb:>8.0}   ours/paper: {:.2}x speed, {:.2}x bytes",
                    per_core / 1e6 / t,
                    bytes as f64 / 1e3 / kb
                )
            });
            println!(
                "{:<13} {:>7} {:>10.2} {:>12.2} {:>11.0} {:>7}   {paper}",
                v.name,
                n,
                secs * 1e3,
                per_core / 1e6,
                bytes as f64 / 1e3,
                rounds
            );
            let op = if v.name == "or_tree" { "or_tree" } else { "compare" };
            records.push(Record {
                suite: "iris",
                op,
                variant: v.name,
                masks: if v.name.starts_with("plain") { "plain" } else { "secret" },
                modulus_bits: v.bits,
                batch: n,
                seconds: secs,
                ops_per_sec: per_core,
                ops_per_sec_per_core: per_core,
                bytes_per_party: bytes,
                rounds,
            });
            k += 1;
        }
    }
    Ok(records)
}

/// End to end with any scheme: share a population and a batch, load each party's database, and
/// time the batch check.
fn e2e<S: IrisScheme>(a: &IrisArgs, backend: Backend, scheme: &S) -> Result<Record, String> {
    let geometry = IrisGeometry::DEPLOYED;
    let cfg = config(a);
    let mut g = Generator::new(geometry, 1).map_err(|e| e.to_string())?;
    eprintln!("{}: sharing {} identities and {} queries ...", scheme.name(), a.db, a.batch);
    let enrolled: Vec<_> = (0..a.db)
        .map(|_| scheme.share_enrollment(&g.random_template(), &cfg))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let queries: Vec<_> = (0..a.batch)
        .map(|_| scheme.share_query(&g.random_template(), &cfg))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let rot = geometry.cols.min(cfg.rotations.clone().count());
    let reps = a.reps.max(1);
    let per_party = run3(backend, NetConfig::with_timeout(Duration::from_secs(600)), |p| {
        let mut db = scheme.new_db(geometry.bits());
        for e in &enrolled {
            scheme.push(&mut db, &e[p.id()])?;
        }
        let mine: Vec<_> = queries.iter().map(|q| q[p.id()].clone()).collect();
        let mut out = Vec::new();
        for _ in 0..reps {
            let (before, t0) = (p.stats(), Instant::now());
            let unique = scheme.check(p, &mine, &db, &cfg, true)?;
            out.push((t0.elapsed().as_secs_f64(), p.stats() - before, unique));
        }
        Ok(out)
    })
    .map_err(|e| e.to_string())?;
    Ok(report(a, scheme.name(), scheme.bits(), rot, &per_party))
}

/// Builds and prints the record from each party's (seconds, stats, result) per repetition.
fn report<T>(
    a: &IrisArgs,
    variant: &'static str,
    bits: u32,
    rot: usize,
    per_party: &[Vec<(f64, argus_net::Stats, T)>],
) -> Record {
    let reps = per_party[0].len();
    let secs = median((0..reps).map(|r| per_party.iter().map(|pp| pp[r].0).fold(0.0, f64::max)).collect());
    let bytes = per_party.iter().map(|pp| pp[0].1.bytes_sent).max().unwrap_or(0);
    let rounds = per_party.iter().map(|pp| pp[0].1.rounds).max().unwrap_or(0);
    // One comparison: one rotation of one eye of a query against one enrolled code of that eye.
    let comparisons = a.batch * rot * 2 * a.db;
    let rate = comparisons as f64 / secs;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(3);
    let rec = Record {
        suite: "iris",
        op: "e2e",
        variant,
        masks: if a.trimmed { "trimmed" } else { "per-bit" },
        modulus_bits: bits,
        batch: comparisons,
        seconds: secs,
        ops_per_sec: rate,
        ops_per_sec_per_core: rate * 3.0 / cores as f64,
        bytes_per_party: bytes,
        rounds,
    };
    println!(
        "e2e {}: {} queries x {} rotations x 2 eyes x {} identities = {} comparisons in {:.3} s (median of {reps}) \
         over {}: {:.2} M comparisons/s, {:.2} M per core ({} cores for 3 parties; paper's CPU headline 1 M, target 10 M), \
         {} bytes/party, {} rounds",
        format!("{} ({} masks)", rec.variant, rec.masks),
        a.batch,
        rot,
        a.db,
        comparisons,
        secs,
        a.backend,
        rate / 1e6,
        rec.ops_per_sec_per_core / 1e6,
        cores,
        bytes,
        rounds
    );
    rec
}
