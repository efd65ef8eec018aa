//! `argus bench gmw`: paper 003's evaluation (section 9) — the branching 65 000-bit string
//! equality in 1..16 branches for 2..5 parties, standard GMW against VS gates, under the
//! shaper's LAN, shared-LAN and WAN settings — plus random OTs per second and the Bristol
//! AES-128 and SHA-256 circuits. Every secure output is checked against the plaintext twin.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_mpc::gmw::{bristol, circuits, evaluate, preprocess, Branching, Circuit};
use argus_mpc::local::{run, Backend};
use argus_net::{NetConfig, Shaper};
use argus_ot::iknp;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::core::barrier;
use super::Run;

/// Arguments of `argus bench gmw`.
#[derive(clap::Args, Debug)]
pub struct GmwArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Bits of each string of the equality circuit.
    #[arg(long, default_value_t = 65_000)]
    bits: usize,
    /// Branch counts (powers of two).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 4, 8, 16])]
    branches: Vec<usize>,
    /// Party counts (2 to 5).
    #[arg(long, value_delimiter = ',', default_values_t = [2usize, 3, 4, 5])]
    parties: Vec<usize>,
    /// Network settings: lan (1 Gbps, 2 ms round trip), shared_lan (50 Mbps, 2 ms), wan
    /// (100 Mbps, 20 ms).
    #[arg(long, value_delimiter = ',', default_values_t = ["lan".to_string(), "shared_lan".to_string(), "wan".to_string()])]
    networks: Vec<String>,
    /// Every combination of parties, branches and networks. Without it, more than two parties
    /// run only on the LAN (communication does not depend on the network).
    #[arg(long)]
    full: bool,
    /// Repetitions per measurement (the median is reported); a run that takes longer than
    /// --max-seconds is not repeated.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// See --reps.
    #[arg(long, default_value_t = 3.0)]
    max_seconds: f64,
    /// Random OTs for the `rot` measurement (in batches of 2^20).
    #[arg(long, default_value_t = 1 << 24)]
    rots: usize,
    /// Skip the string-equality grid (only OTs and the Bristol circuits).
    #[arg(long)]
    no_grid: bool,
}

/// One record of the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct GmwRecord {
    suite: String,
    /// `string_eq`, `rot`, `aes128` or `sha256`.
    op: String,
    /// `vs` or `gmw` (standard), `-` for the others.
    variant: String,
    parties: usize,
    branches: usize,
    /// `lan`, `shared_lan`, `wan`, or for `rot` the transport (`tcp`, `memory`).
    network: String,
    seconds: f64,
    /// Gates per second (ANDs the circuit stands for, XOR and INV included), OTs per second.
    ops_per_sec: f64,
    bytes_per_party: u64,
    rounds: u64,
}

/// The paper's figures at 16 branches, 2 parties (section 9.1): standard GMW over VS.
const PAPER_COMM: f64 = 9.4;
const PAPER_TIME: [(&str, f64); 3] = [("lan", 5.1), ("shared_lan", 9.2), ("wan", 4.1)];

fn shaper(network: &str) -> Result<Shaper, String> {
    let (mbps, rtt_ms) = match network {
        "lan" => (1000.0, 2),
        "shared_lan" => (50.0, 2),
        "wan" => (100.0, 20),
        other => return Err(format!("unknown network {other:?} (use lan, shared_lan or wan)")),
    };
    Ok(Shaper { latency: Duration::from_millis(rtt_ms / 2), bandwidth_bytes_per_sec: Some((mbps * 1e6 / 8.0) as u64) })
}

/// Preprocessing and evaluation of `c` by its parties in memory, shaped by `cfg`, `reps` times
/// (fewer if one takes over `max_seconds`); errors if any output differs from the twin's.
fn measure(c: &Circuit, inputs: &[Vec<bool>], cfg: NetConfig, reps: usize, max_seconds: f64) -> Result<Run, String> {
    let want = c.eval(inputs).map_err(|e| e.to_string())?;
    let ots = argus_mpc::gmw::cost(c).max_ots();
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        let got = run(c.parties(), Backend::Memory, cfg.clone(), |p| {
            barrier(p)?;
            let (before, t0) = (p.stats(), Instant::now());
            let mut pre = preprocess(p, ots)?;
            let out = evaluate(p, c, &mut pre, &inputs[p.id()])?;
            Ok((t0.elapsed().as_secs_f64(), p.stats() - before, out))
        })
        .map_err(|e| e.to_string())?;
        if got.iter().any(|(_, _, out)| *out != want) {
            return Err("a secure output differs from the plaintext twin".into());
        }
        let r = Run::of(got.iter().map(|g| (g.0, g.1)));
        let slow = r.seconds > max_seconds;
        runs.push(r);
        if slow {
            break;
        }
    }
    Ok(Run::median_of(runs))
}

fn random_inputs(c: &Circuit, rng: &mut StdRng) -> Vec<Vec<bool>> {
    c.inputs().iter().map(|&n| (0..n).map(|_| rng.gen()).collect()).collect()
}

/// Runs the suite.
pub fn run_suite(a: GmwArgs) -> Result<(), String> {
    for n in &a.networks {
        shaper(n)?;
    }
    if let Some(b) = a.branches.iter().find(|b| !b.is_power_of_two()) {
        return Err(format!("{b} branches: use powers of two"));
    }
    if let Some(p) = a.parties.iter().find(|&&p| !(2..=5).contains(&p)) {
        return Err(format!("{p} parties: use 2 to 5"));
    }
    let mut records = Vec::new();
    let mut rng = StdRng::seed_from_u64(3);
    records.extend(rot(&a)?);
    records.extend(bristol_circuits(&a, &mut rng)?);
    if !a.no_grid {
        records.extend(grid(&a, &mut rng)?);
    }
    if let Some(path) = &a.json {
        super::write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

fn record(op: &str, variant: &str, parties: usize, branches: usize, network: &str, r: &Run, ops: f64) -> GmwRecord {
    GmwRecord {
        suite: "gmw".into(),
        op: op.into(),
        variant: variant.into(),
        parties,
        branches,
        network: network.into(),
        seconds: r.seconds,
        ops_per_sec: ops / r.seconds,
        bytes_per_party: r.bytes,
        rounds: r.rounds,
    }
}

/// Random OTs between two parties, one thread each, after the base OTs: over TCP + TLS on
/// loopback and in memory.
fn rot(a: &GmwArgs) -> Result<Vec<GmwRecord>, String> {
    const BATCH: usize = 1 << 20;
    let batches = a.rots.div_ceil(BATCH).max(1);
    let mut out = Vec::new();
    println!("Random OT (IKNP), 2 parties, {} OTs in batches of {BATCH}, after the base OTs", batches * BATCH);
    for backend in [Backend::Tcp, Backend::Memory] {
        let mut runs = Vec::new();
        for _ in 0..a.reps.max(1) {
            let got = run(2, backend, NetConfig::default(), |p| {
                let mut rng = argus_prg::Prg::new(&p.prg.own().fork());
                let peer = 1 - p.id();
                if p.id() == 0 {
                    let mut s = iknp::Sender::setup(p.net(), peer, &mut rng)?;
                    let mut buf = vec![[0u128; 2]; BATCH];
                    barrier(p)?;
                    let (before, t0) = (p.stats(), Instant::now());
                    for _ in 0..batches {
                        s.random_into(p.net(), peer, &mut buf)?;
                    }
                    // the receiver's last message is in: both are done
                    Ok((t0.elapsed().as_secs_f64(), p.stats() - before))
                } else {
                    let mut r = iknp::Receiver::setup(p.net(), peer, &mut rng)?;
                    let choices: Vec<bool> = (0..BATCH).map(|_| rng.gen()).collect();
                    let mut buf = vec![0u128; BATCH];
                    barrier(p)?;
                    let (before, t0) = (p.stats(), Instant::now());
                    for _ in 0..batches {
                        r.random_into(p.net(), peer, &choices, &mut buf)?;
                    }
                    Ok((t0.elapsed().as_secs_f64(), p.stats() - before))
                }
            })
            .map_err(|e| e.to_string())?;
            runs.push(Run::of(got.into_iter()));
        }
        let r = Run::median_of(runs);
        let m = (batches * BATCH) as f64;
        println!(
            "  {:<7} {:>8.3} s  {:>7.2} M OTs/s  {:>6.1} B/OT   (target ≥ 30 M/s; cryprot-ot's README: 51.5 M/s on a 4-core EPYC)",
            backend.to_string(),
            r.seconds,
            m / r.seconds / 1e6,
            r.bytes as f64 / m
        );
        out.push(record("rot", "-", 2, 1, &backend.to_string(), &r, m));
    }
    Ok(out)
}

/// AES-128 and SHA-256 from the Bristol files, 2 and 3 parties in memory, unshaped.
fn bristol_circuits(a: &GmwArgs, rng: &mut StdRng) -> Result<Vec<GmwRecord>, String> {
    const AES: &str = include_str!("../../../../data/circuits/aes_128.txt");
    const SHA: &str = include_str!("../../../../data/circuits/sha256.txt");
    let mut out = Vec::new();
    println!("\nBristol circuits, in memory, one evaluation (OT extension included), checked against the twin");
    for (op, text) in [("aes128", AES), ("sha256", SHA)] {
        for parties in [2usize, 3] {
            let c = bristol::parse(text, parties).map_err(|e| format!("{op}: {e}"))?.circuit;
            let k = c.counts();
            let gates = (k.and + k.xor + k.inv) as f64;
            let inputs = random_inputs(&c, rng);
            let r = measure(&c, &inputs, NetConfig::default(), a.reps, a.max_seconds)?;
            println!(
                "  {op:<7} {parties} parties: {:>8.2} ms  {:>7.2} M gates/s  {} ANDs, depth {}, {} B/party, {} rounds",
                r.seconds * 1e3,
                gates / r.seconds / 1e6,
                k.and,
                k.depth,
                r.bytes,
                r.rounds
            );
            out.push(record(op, "-", parties, 1, "memory", &r, gates));
        }
    }
    Ok(out)
}

/// The string-equality grid, and the ratios of standard GMW over VS.
fn grid(a: &GmwArgs, rng: &mut StdRng) -> Result<Vec<GmwRecord>, String> {
    let mut out = Vec::new();
    println!(
        "\nString equality of {}-bit strings in b branches (paper 003, Figs. 5-7): standard GMW against VS",
        a.bits
    );
    println!(
        "{:>2} {:>3} {:<10} {:>12} {:>12} {:>8} {:>10} {:>10} {:>8}  paper (p=2, b=16)",
        "p", "b", "network", "gmw bytes", "vs bytes", "comm ×", "gmw s", "vs s", "time ×"
    );
    for &p in &a.parties {
        for &b in &a.branches {
            let nets: Vec<&String> = a.networks.iter().filter(|n| a.full || p == 2 || n.as_str() == "lan").collect();
            if nets.is_empty() {
                continue;
            }
            let vs = circuits::branching_string_eq(p, a.bits, b, Branching::Vs).map_err(|e| e.to_string())?;
            let gmw = circuits::branching_string_eq(p, a.bits, b, Branching::Plain).map_err(|e| e.to_string())?;
            let inputs = random_inputs(&vs, rng);
            let ands = (vs.counts().vs_elements + vs.counts().and) as f64;
            for net in nets {
                let cfg = NetConfig { shaper: Some(shaper(net)?), ..NetConfig::default() };
                let rg = measure(&gmw, &inputs, cfg.clone(), a.reps, a.max_seconds)?;
                let rv = measure(&vs, &inputs, cfg, a.reps, a.max_seconds)?;
                let comm = rg.bytes as f64 / rv.bytes as f64;
                let time = rg.seconds / rv.seconds;
                let paper = if p == 2 && b == 16 {
                    let t = PAPER_TIME.iter().find(|(n, _)| n == net).map_or(f64::NAN, |x| x.1);
                    format!("comm {PAPER_COMM}×, time {t}×")
                } else {
                    "-".into()
                };
                println!(
                    "{p:>2} {b:>3} {net:<10} {:>12} {:>12} {comm:>7.2}× {:>10.3} {:>10.3} {time:>7.2}×  {paper}",
                    rg.bytes, rv.bytes, rg.seconds, rv.seconds
                );
                out.push(record("string_eq", "gmw", p, b, net, &rg, ands));
                out.push(record("string_eq", "vs", p, b, net, &rv, ands));
                if p == 2 && b == 16 {
                    let (want_comm, want_time) = match net.as_str() {
                        "lan" => (12.0, Some(8.0)),
                        "shared_lan" => (12.0, Some(12.0)),
                        _ => (12.0, None),
                    };
                    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
                    println!("   {} communication ≥ {want_comm}× ({comm:.2}×)", verdict(comm >= want_comm));
                    if let Some(w) = want_time {
                        println!("   {} {net} time ≥ {w}× ({time:.2}×)", verdict(time >= w));
                    }
                }
            }
        }
    }
    Ok(out)
}
