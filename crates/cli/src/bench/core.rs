//! `argus bench core`: every core operation at several batch sizes over both backends.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_math::kernels::{measure_plain_dot, PlainDotVariant};
use argus_math::{Field, Ring, Zt, Zt64, F65519, Z16, Z32, Z64};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::{self, Adder, Rep3, Rep3Bits, Rep3Pre};
use argus_mpc::shamir::{self, Circuit, Shamir};
use argus_mpc::{MpcError, Party};
use argus_net::{NetConfig, Stats};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::{median, write_json, Record};

/// Arguments of `argus bench core`.
#[derive(Args, Debug)]
pub struct CoreArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Repetitions per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Batch sizes for element-wise operations.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 1_000, 100_000, 1_000_000])]
    batches: Vec<usize>,
    /// Batch sizes (rows) for length-12800 dot products.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 100, 10_000])]
    dot_batches: Vec<usize>,
    /// Backends to run: memory, tcp.
    #[arg(long, value_delimiter = ',', default_values_t = ["memory".to_string(), "tcp".to_string()])]
    backends: Vec<String>,
    /// Only these operations (default: all), e.g. `mul,msb`.
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
}

const DOT_LEN: usize = 12800;

/// One benchmarked operation: names for the record and the closure each party runs.
struct Case {
    op: &'static str,
    scheme: &'static str,
    variant: &'static str,
    modulus_bits: u32,
    dot: bool,
    /// Draws inputs for a batch (untimed) and returns the timed protocol call.
    prepare: fn(&mut Party, usize, usize) -> Timed,
}

/// The protocol call of one repetition, inputs already drawn.
pub(super) type Timed = Box<dyn FnOnce(&mut Party) -> Result<(), MpcError>>;

/// Random valid replicated shares of `n` unknown values, drawn from the pairwise streams.
pub(super) fn random_shares<R: Ring>(p: &mut Party, ring: R, n: usize) -> Rep3<R> {
    let (a, b) = p.prg.random_pair(&ring, n);
    Rep3::from_parts(ring, a, b).expect("equal lengths")
}

/// Replicated shares of `n` values below `bound` (some at 0 and `bound − 1`), for protocols with
/// a precondition on their input: party 0 inputs them and one reshare hides them (set-up, not
/// timed).
pub(super) fn bounded_shares<R: Ring>(p: &mut Party, ring: R, n: usize, bound: u128) -> Result<Rep3<R>, MpcError> {
    let plain: Vec<R::El> = (0..n as u128)
        .map(|i| ring.from_u128(if p.id() == 0 { i.wrapping_mul(0x9e37_79b9) % bound } else { 0 }))
        .collect();
    rep3::reshare(p, &ring, plain)
}

/// Random degree-1 Shamir shares of `n` unknown values (local conversion of random replicated ones).
fn random_shamir<F: Field>(p: &mut Party, field: F, n: usize) -> Shamir<F> {
    let r = random_shares(p, field, n);
    shamir::from_rep3(p.id(), &r).expect("valid shares")
}

fn random_bits(p: &mut Party, n: usize) -> Rep3Bits {
    let r = random_shares(p, Z64::new(), n.div_ceil(64));
    let bits = |v: Vec<u64>| argus_math::BitVec::from_words(v, n).expect("sized");
    Rep3Bits::from_parts(bits(r.a), bits(r.b)).expect("equal lengths")
}

/// Runs `reps` timed repetitions of `f` on fresh inputs of size `n`; a barrier (one empty message
/// to each peer) lines the parties up before each start. Returns (seconds, stats) per repetition.
/// An empty message to every other party and one from each: all parties start the clock
/// together.
pub(super) fn barrier(p: &mut Party) -> Result<(), MpcError> {
    let me = p.id();
    for peer in (0..p.n()).filter(|&q| q != me) {
        p.net().send(peer, Vec::new())?;
    }
    for peer in (0..p.n()).filter(|&q| q != me) {
        p.net().recv(peer)?;
    }
    Ok(())
}

pub(super) fn timed(
    p: &mut Party,
    reps: usize,
    mut prepare: impl FnMut(&mut Party) -> Timed,
) -> Result<Vec<(f64, Stats)>, MpcError> {
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let f = prepare(p);
        barrier(p)?;
        let before = p.stats();
        let t0 = Instant::now();
        f(p)?;
        out.push((t0.elapsed().as_secs_f64(), p.stats() - before));
    }
    Ok(out)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            op: "mul",
            scheme: "rep3",
            variant: "-",
            modulus_bits: 64,
            dot: false,
            prepare: |p, n, _len| {
                let (x, y) = (random_shares(p, Z64::new(), n), random_shares(p, Z64::new(), n));
                Box::new(move |p| rep3::mul(p, &x, &y).map(|_| ()))
            },
        },
        Case {
            op: "mul",
            scheme: "rep3",
            variant: "-",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let (x, y) = (random_shares(p, Z16::new(), n), random_shares(p, Z16::new(), n));
                Box::new(move |p| rep3::mul(p, &x, &y).map(|_| ()))
            },
        },
        Case {
            op: "dot",
            scheme: "rep3",
            variant: "pre",
            modulus_bits: 16,
            dot: true,
            prepare: |p, n, len| {
                let x = Rep3Pre::new(&random_shares(p, Z16::new(), n * len));
                let y = Rep3Pre::new(&random_shares(p, Z16::new(), n * len));
                Box::new(move |p| rep3::dot_pre(p, &x, &y, len).map(|_| ()))
            },
        },
        Case {
            op: "lt",
            scheme: "rep3",
            variant: "ripple",
            modulus_bits: 64,
            dot: false,
            prepare: |p, n, _len| {
                let (x, y) = (random_shares(p, Z64::new(), n), random_shares(p, Z64::new(), n));
                Box::new(move |p| rep3::lt(p, &x, &y, Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "a2b",
            scheme: "rep3",
            variant: "ripple",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z16::new(), n);
                Box::new(move |p| rep3::a2b(p, &x, Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "a2b",
            scheme: "rep3",
            variant: "ripple",
            modulus_bits: 64,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z64::new(), n);
                Box::new(move |p| rep3::a2b(p, &x, Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "bit_inject",
            scheme: "rep3",
            variant: "-",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let b = random_bits(p, n);
                Box::new(move |p| rep3::bit_inject(p, &b, &Z16::new()).map(|_| ()))
            },
        },
        Case {
            op: "lift",
            scheme: "rep3",
            variant: "16->36",
            modulus_bits: 36,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z16::new(), n);
                Box::new(move |p| rep3::lift(p, &x, &Zt64::pow2(36).expect("valid"), Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "or_tree",
            scheme: "rep3",
            variant: "-",
            modulus_bits: 1,
            dot: false,
            prepare: |p, n, _len| {
                let b = random_bits(p, n);
                Box::new(move |p| rep3::or_tree(p, &b, 1).map(|_| ()))
            },
        },
        Case {
            op: "msb",
            scheme: "rep3",
            variant: "ripple",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z16::new(), n);
                Box::new(move |p| rep3::msb(p, &x, Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "msb",
            scheme: "rep3",
            variant: "logdepth",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z16::new(), n);
                Box::new(move |p| rep3::msb(p, &x, Adder::LogDepth).map(|_| ()))
            },
        },
        Case {
            op: "msb",
            scheme: "rep3",
            variant: "ripple",
            modulus_bits: 32,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z32::new(), n);
                Box::new(move |p| rep3::msb(p, &x, Adder::Ripple).map(|_| ()))
            },
        },
        Case {
            op: "msb",
            scheme: "rep3",
            variant: "logdepth",
            modulus_bits: 32,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, Z32::new(), n);
                Box::new(move |p| rep3::msb(p, &x, Adder::LogDepth).map(|_| ()))
            },
        },
        Case {
            op: "mul",
            scheme: "shamir",
            variant: "-",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let (x, y) = (random_shamir(p, F65519, n), random_shamir(p, F65519, n));
                Box::new(move |p| shamir::mul(p, &x, &y).map(|_| ()))
            },
        },
        Case {
            op: "dot",
            scheme: "shamir",
            variant: "to_rep3",
            modulus_bits: 16,
            dot: true,
            prepare: |p, n, len| {
                let (x, y) = (random_shamir(p, F65519, n * len), random_shamir(p, F65519, n * len));
                Box::new(move |p| {
                    let d = shamir::dot(&x, &y, len)?;
                    shamir::to_rep3(p, &d).map(|_| ())
                })
            },
        },
        Case {
            op: "msb",
            scheme: "shamir",
            variant: "parallel",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, F65519, n);
                Box::new(move |p| shamir::msb_p_with(p, &x, Circuit::Parallel).map(|_| ()))
            },
        },
        Case {
            op: "msb",
            scheme: "shamir",
            variant: "paper",
            modulus_bits: 16,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, F65519, n);
                Box::new(move |p| shamir::msb_p_with(p, &x, Circuit::Paper).map(|_| ()))
            },
        },
        Case {
            op: "lift",
            scheme: "shamir",
            variant: "p->p*2^20",
            modulus_bits: 36,
            dot: false,
            prepare: |p, n, _len| {
                let x = random_shares(p, F65519, n);
                Box::new(move |p| shamir::lift_p(p, &x, 20, &Zt::new(65519u128 << 20).expect("valid")).map(|_| ()))
            },
        },
    ]
}

/// Targets of the engine issue (batch 10^6, TCP), printed beside our figures.
fn target(op: &str, scheme: &str, bits: u32, backend: &str, batch: usize) -> Option<f64> {
    if backend != "tcp" || batch != 1_000_000 || scheme != "rep3" {
        return None;
    }
    match (op, bits) {
        ("mul", 64) => Some(30e6),
        ("lt", 64) => Some(1.2e6),
        ("msb", 16) => Some(20e6),
        _ => None,
    }
}

/// Runs the suite.
pub fn run(a: CoreArgs) -> Result<(), String> {
    let mut records = Vec::new();
    let selected = |op: &str| a.ops.is_empty() || a.ops.iter().any(|o| o == op);
    let cases: Vec<Case> = cases().into_iter().filter(|c| selected(c.op)).collect();
    let reps = a.reps.max(1);
    argus_math::kernels::set_threads(super::party_threads());
    for backend_name in &a.backends {
        let backend = match backend_name.as_str() {
            "memory" => Backend::Memory,
            "tcp" => Backend::Tcp,
            other => return Err(format!("unknown backend {other:?} (use memory or tcp)")),
        };
        let plan: Vec<(usize, usize)> = cases
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                if c.dot { a.dot_batches.clone() } else { a.batches.clone() }.into_iter().map(move |n| (i, n))
            })
            .collect();
        let bar = ProgressBar::new(plan.len() as u64).with_style(
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(backend_name.clone());
        let cfg = NetConfig::with_timeout(Duration::from_secs(300));
        let per_party = run3(backend, cfg, |p| {
            let mut res = Vec::with_capacity(plan.len());
            for &(i, n) in &plan {
                let c = &cases[i];
                if p.id() == 0 {
                    bar.set_message(format!("{} {} {}-bit {} x{n}", c.op, c.scheme, c.modulus_bits, c.variant));
                }
                res.push(timed(p, reps, |p| (c.prepare)(p, n, DOT_LEN))?);
                if p.id() == 0 {
                    bar.inc(1);
                }
            }
            Ok(res)
        })
        .map_err(|e| e.to_string())?;
        bar.finish_and_clear();
        for (k, &(i, n)) in plan.iter().enumerate() {
            let c = &cases[i];
            // A repetition lasts as long as its slowest party; bytes/rounds of the busiest party.
            let secs: Vec<f64> = (0..reps).map(|r| per_party.iter().map(|pp| pp[k][r].0).fold(0.0, f64::max)).collect();
            let bytes = per_party.iter().map(|pp| pp[k][0].1.bytes_sent).max().unwrap_or(0);
            let rounds = per_party.iter().map(|pp| pp[k][0].1.rounds).max().unwrap_or(0);
            let s = median(secs);
            records.push(Record {
                suite: "core".into(),
                op: c.op.into(),
                scheme: c.scheme.into(),
                variant: c.variant.into(),
                modulus_bits: c.modulus_bits,
                batch: n,
                backend: backend_name.clone(),
                seconds: s,
                ops_per_sec: n as f64 / s,
                bytes_per_party: bytes,
                rounds,
            });
        }
    }
    if selected("plain_dot") {
        for (variant, v, bits) in [("ring", PlainDotVariant::Ring16, 16), ("field", PlainDotVariant::Field65519, 16)] {
            let m = measure_plain_dot(v, DOT_LEN, 1024, reps);
            records.push(Record {
                suite: "core".into(),
                op: "plain_dot".into(),
                scheme: "plain".into(),
                variant: variant.into(),
                modulus_bits: bits,
                batch: 64 * 1024,
                backend: "none".into(),
                seconds: m.seconds_median,
                ops_per_sec: m.dots_per_sec,
                bytes_per_party: 0,
                rounds: 0,
            });
        }
    }
    print_table(&records);
    if let Some(path) = &a.json {
        write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

fn print_table(records: &[Record]) {
    println!(
        "{:<10} {:<7} {:<9} {:>4} {:>9} {:<7} {:>11} {:>14} {:>14} {:>7}  target",
        "op", "scheme", "variant", "bits", "batch", "backend", "median s", "ops/s", "bytes/party", "rounds"
    );
    for r in records {
        let tgt = match (r.op.as_str(), r.variant.as_str()) {
            ("plain_dot", "ring") => Some(8e6),
            ("plain_dot", "field") => Some(4e6),
            _ => target(&r.op, &r.scheme, r.modulus_bits, &r.backend, r.batch),
        }
        .map(|t| format!(">= {} ({:.0}%)", human(t), 100.0 * r.ops_per_sec / t))
        .unwrap_or_default();
        println!(
            "{:<10} {:<7} {:<9} {:>4} {:>9} {:<7} {:>11.6} {:>14} {:>14} {:>7}  {}",
            r.op,
            r.scheme,
            r.variant,
            r.modulus_bits,
            r.batch,
            r.backend,
            r.seconds,
            human(r.ops_per_sec),
            r.bytes_per_party,
            r.rounds,
            tgt
        );
    }
}

/// `12.34 M` and the like.
pub(super) fn human(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}
