//! `argus bench sharemind`: the Sharemind protocols of paper 001 (Table 2) and private k-means
//! (Table 3) on the engine's additive 3-party scheme ([`argus_mpc::additive3`]), with the paper's
//! figures beside ours and the targets checked.
//!
//! **Protocols.** Each protocol (`reshare`, `mult`, `bit_conj`, `prefix_or`, `msnzb`,
//! `share_conv`, `bit_extr`, `equal`, `lt`, `shift_r`, `pub_div`, `div`) runs in Z_2^32 and
//! Z_2^64 on three parties (threads of this process, loopback TCP with mutual TLS by default)
//! over a sweep of batch sizes (1, 10, …, 10^6). A measurement is the median of `--reps`
//! repetitions, a repetition lasting as long as its slowest party; bytes and rounds are those of
//! the busiest party. Inputs are drawn before the clock starts: ring values are random and shared
//! by [`share_from_client`](a3::share_from_client); bit inputs are random replicated planes
//! (`bit_conj`, `prefix_or` and `msnzb` take `n` planes of the ring's width `n`; `share_conv`
//! converts one bit per element). `pub_div` divides by public divisors drawn in `1..2^16`, `div` by secret non-zero
//! ones; `shift_r` shifts by half the width. A batch is run only if the affine extrapolation of
//! the smaller batches (`t_1 + (t_prev − t_1)·n/n_prev`, `t_1` the smallest batch's time) stays
//! under `--max-batch-seconds` (2 s), so slow protocols stop early.
//!
//! **Saturation point.** The paper fits two lines to time against batch size and calls their
//! crossing `n_s`. Here, from the measured sweep: with `c(n)` the median time per operation at
//! batch `n` and `c* = min c(n)` the **saturated per-operation cost**, the saturation point `n_s`
//! is the smallest measured batch from which every larger measured batch has `c(n) ≤ 1.25·c*`
//! (within 25 % of the best). When `n_s` is the largest batch measured, the cost may still have
//! been falling: the table marks it with `*`.
//!
//! **k-means.** iris (k = 3), the synthetic control chart (seed 1, k = 6) and the plants-like data
//! (seed 1, scale 3, k = 5), each in the paper's variant and with the assignment hidden, via
//! [`argus_kmeans::run::run_local`]; each result is checked against the plaintext reference
//! ([`argus_kmeans::reference::kmeans`]) and any disagreement fails the bench.
//!
//! **Bounded memory.** `--huge` multiplies 10^8 pairs of 64-bit values in batches of 10^6 whose
//! inputs are drawn per batch from each party's stream, and reports the throughput and the
//! process's peak resident set (VmHWM, reset before the run where the kernel allows).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use argus_kmeans::protocol::{Iteration, Options};
use argus_kmeans::{control_chart, plants_like, run as km, Dataset};
use argus_math::{BitVec, Ring, Z32, Z64};
use argus_mpc::additive3::{self as a3, Add3, Pow2};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::Rep3Bits;
use argus_mpc::{MpcError, Party};
use argus_net::{NetConfig, Stats};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::core::{barrier, timed, Timed};
use super::{median, write_json, Record};

/// Arguments of `argus bench sharemind`.
#[derive(Args, Debug, Clone)]
pub struct SharemindArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Repetitions per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Transport: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    /// Only these protocols (default: all): reshare, mult, bit_conj, prefix_or, msnzb,
    /// share_conv, bit_extr, equal, lt, shift_r, pub_div, div.
    #[arg(long, value_delimiter = ',')]
    ops: Vec<String>,
    /// Ring widths: 32, 64.
    #[arg(long, value_delimiter = ',', default_values_t = [32u32, 64])]
    bits: Vec<u32>,
    /// Batch sizes of the sweep.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 10, 100, 1_000, 10_000, 100_000, 1_000_000])]
    batches: Vec<usize>,
    /// A batch runs only if its extrapolated time per repetition is below this (seconds).
    #[arg(long, default_value_t = 2.0)]
    max_batch_seconds: f64,
    /// Only the k-means table (Table 3).
    #[arg(long)]
    kmeans_only: bool,
    /// No k-means (Table 2 only).
    #[arg(long)]
    no_kmeans: bool,
    /// Skip the plants-like k-means runs (the long ones).
    #[arg(long)]
    skip_plants: bool,
    /// k-means datasets to run: iris, control, plants.
    #[arg(long, value_delimiter = ',', default_values_t = ["iris".to_string(), "control".to_string(), "plants".to_string()])]
    datasets: Vec<String>,
    /// Also multiply 10^8 64-bit pairs in batches of 10^6 and report the peak RSS.
    #[arg(long)]
    huge: bool,
}

/// The protocols, in the order of the tables.
const OPS: [&str; 12] = [
    "reshare",
    "mult",
    "bit_conj",
    "prefix_or",
    "msnzb",
    "share_conv",
    "bit_extr",
    "equal",
    "lt",
    "shift_r",
    "pub_div",
    "div",
];

/// Paper 001, Table 2 (32-bit, 3 servers, 1 Gb/s): (our op, paper's name, single op in seconds,
/// n_s, saturated op in seconds).
const PAPER: [(&str, &str, f64, usize, f64); 7] = [
    ("share_conv", "ShareConv", 15.3e-3, 24000, 0.8e-6),
    ("mult", "Mult", 25.9e-3, 15000, 1.8e-6),
    ("equal", "Equal", 101e-3, 27000, 5.0e-6),
    ("bit_extr", "BitExtr", 113e-3, 2600, 51e-6),
    ("shift_r", "ShiftR", 122e-3, 12000, 15.7e-6),
    ("pub_div", "PubDiv", 124e-3, 3500, 44e-6),
    ("div", "Div", 390e-3, 800, 534e-6),
];

/// Our saturated cost must be this many times below the paper's.
const PAPER_FACTOR: f64 = 20.0;
/// The saturation point's tolerance: within 25 % of the best time per operation.
const SATURATION_SLACK: f64 = 1.25;

fn paper(op: &str) -> Option<(&'static str, f64, usize, f64)> {
    PAPER.iter().find(|p| p.0 == op).map(|&(_, name, single, ns, sat)| (name, single, ns, sat))
}

/// One measured batch of a sweep.
#[derive(Clone, Debug)]
struct Point {
    batch: usize,
    seconds: f64,
    bytes: u64,
    rounds: u64,
}

/// One protocol's sweep at one width.
#[derive(Clone, Debug)]
struct Sweep {
    op: &'static str,
    bits: u32,
    points: Vec<Point>,
}

/// The saturation of a sweep ([module docs](self)).
#[derive(Clone, Copy, Debug)]
struct Saturation {
    /// `n_s`.
    batch: usize,
    /// `c*`, seconds per operation.
    per_op: f64,
    /// `n_s` is the largest batch measured.
    at_end: bool,
}

impl Sweep {
    fn single(&self) -> Option<&Point> {
        self.points.iter().find(|p| p.batch == 1)
    }
    fn saturation(&self) -> Option<Saturation> {
        let per: Vec<f64> = self.points.iter().map(|p| p.seconds / p.batch as f64).collect();
        let best = per.iter().copied().fold(f64::INFINITY, f64::min);
        if !best.is_finite() {
            return None;
        }
        // the first index from which every later one is within the slack
        let mut from = per.len() - 1;
        while from > 0 && per[from - 1] <= SATURATION_SLACK * best {
            from -= 1;
        }
        Some(Saturation { batch: self.points[from].batch, per_op: best, at_end: from + 1 == per.len() })
    }
}

/// One k-means run's result.
#[derive(Clone, Debug)]
struct KmeansResult {
    dataset: &'static str,
    variant: String,
    rows: usize,
    cols: usize,
    k: usize,
    hidden: bool,
    /// Median over the runs.
    seconds: f64,
    /// Runs made.
    runs: usize,
    iterations: usize,
    bytes: u64,
    rounds: u64,
}

/// The bounded-memory run's result.
#[derive(Clone, Debug)]
struct HugeResult {
    total: usize,
    chunk: usize,
    mult_seconds: f64,
    wall_seconds: f64,
    bytes: u64,
    rounds: u64,
    rss_start: u64,
    /// The peak after the first `early` products.
    peak_early: u64,
    early: usize,
    peak_rss: u64,
    peak_reset: bool,
}

/// Everything one run measured.
#[derive(Default)]
struct Report {
    sweeps: Vec<Sweep>,
    kmeans: Vec<KmeansResult>,
    huge: Option<HugeResult>,
    backend: String,
}

/// Runs the suite.
pub fn run(a: SharemindArgs) -> Result<(), String> {
    let report = measure(&a)?;
    print_report(&report);
    let records = records(&report);
    if let Some(path) = &a.json {
        write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

fn backend_of(name: &str) -> Result<Backend, String> {
    match name {
        "memory" => Ok(Backend::Memory),
        "tcp" => Ok(Backend::Tcp),
        other => Err(format!("unknown backend {other:?} (use memory or tcp)")),
    }
}

/// Runs every selected measurement.
fn measure(a: &SharemindArgs) -> Result<Report, String> {
    let backend = backend_of(&a.backend)?;
    for op in &a.ops {
        if !OPS.contains(&op.as_str()) {
            return Err(format!("unknown protocol {op:?} (one of {})", OPS.join(", ")));
        }
    }
    for &b in &a.bits {
        if b != 32 && b != 64 {
            return Err(format!("unsupported width {b} (use 32 or 64)"));
        }
    }
    for d in &a.datasets {
        if !["iris", "control", "plants"].contains(&d.as_str()) {
            return Err(format!("unknown k-means dataset {d:?} (iris, control or plants)"));
        }
    }
    if a.kmeans_only && a.no_kmeans {
        return Err("--kmeans-only and --no-kmeans exclude each other".into());
    }
    let mut report = Report { backend: a.backend.clone(), ..Report::default() };
    if a.huge {
        report.huge = Some(huge(backend)?);
    }
    if !a.kmeans_only {
        let ops: Vec<&'static str> =
            OPS.iter().copied().filter(|o| a.ops.is_empty() || a.ops.iter().any(|s| s == o)).collect();
        let mut batches = a.batches.clone();
        batches.retain(|&n| n > 0);
        batches.sort_unstable();
        batches.dedup();
        let plan: Vec<(&'static str, u32)> = ops.iter().flat_map(|&op| a.bits.iter().map(move |&b| (op, b))).collect();
        let bar = bar((plan.len() * batches.len()) as u64);
        for (op, bits) in plan {
            let t0 = Instant::now();
            let sweep = sweep(op, bits, a, backend, &batches, &bar)?;
            let line = match sweep.saturation() {
                Some(s) => format!(
                    "{op:<10} {bits}-bit: {} batches up to {}, saturated {}/op from n_s = {}{} ({:.1} s)",
                    sweep.points.len(),
                    sweep.points.last().map_or(0, |p| p.batch),
                    fmt_time(s.per_op),
                    s.batch,
                    if s.at_end { "*" } else { "" },
                    t0.elapsed().as_secs_f64()
                ),
                None => format!("{op:<10} {bits}-bit: nothing measured"),
            };
            say(&bar, &line);
            report.sweeps.push(sweep);
        }
        bar.finish_and_clear();
    }
    if !a.no_kmeans {
        report.kmeans = kmeans_all(a, backend)?;
    }
    Ok(report)
}

fn bar(len: u64) -> ProgressBar {
    ProgressBar::new(len).with_style(
        ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    )
}

/// A progress line on stderr (above the bar when it is drawn).
fn say(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

fn cfg() -> NetConfig {
    NetConfig::with_timeout(Duration::from_secs(300))
}

/// One protocol's sweep at one width, on one session.
fn sweep(
    op: &'static str,
    bits: u32,
    a: &SharemindArgs,
    backend: Backend,
    batches: &[usize],
    bar: &ProgressBar,
) -> Result<Sweep, String> {
    let reps = a.reps.max(1);
    let op_index = OPS.iter().position(|&o| o == op).expect("a known op") as u64;
    let per_party = run3(backend, cfg(), |p| {
        let mut out: Vec<(usize, Vec<f64>, Stats)> = Vec::new();
        let mut first: Option<f64> = None;
        let mut prev: Option<(usize, f64)> = None;
        let mut seed = (op_index << 48) ^ (u64::from(bits) << 40);
        for &n in batches {
            if let (Some(t1), Some((m, t))) = (first, prev) {
                // The affine extrapolation; every party computes the same from the same figures.
                let predicted = t1 + (t - t1).max(0.0) * n as f64 / m as f64;
                if predicted > a.max_batch_seconds {
                    break;
                }
            }
            if p.id() == 0 {
                bar.set_message(format!("{op} {bits}-bit x{n}"));
            }
            let runs = timed(p, reps, |p| {
                seed += 1;
                if bits == 32 {
                    prepare(op, p, Z32::new(), n, seed)
                } else {
                    prepare(op, p, Z64::new(), n, seed)
                }
            })?;
            let mine: Vec<f64> = runs.iter().map(|r| r.0).collect();
            let t = median(slowest(p, &mine)?);
            first.get_or_insert(t);
            prev = Some((n, t));
            out.push((n, mine, runs[0].1));
            if p.id() == 0 {
                bar.inc(1);
            }
        }
        Ok(out)
    })
    .map_err(|e| format!("{op} {bits}-bit: {e}"))?;
    let done = per_party[0].len();
    bar.inc((batches.len() - done) as u64);
    let points = (0..done)
        .map(|k| {
            let secs: Vec<f64> = (0..reps).map(|r| per_party.iter().map(|pp| pp[k].1[r]).fold(0.0, f64::max)).collect();
            Point {
                batch: per_party[0][k].0,
                seconds: median(secs),
                bytes: per_party.iter().map(|pp| pp[k].2.bytes_sent).max().unwrap_or(0),
                rounds: per_party.iter().map(|pp| pp[k].2.rounds).max().unwrap_or(0),
            }
        })
        .collect();
    Ok(Sweep { op, bits, points })
}

/// Each repetition's time of the slowest party: every party sends its times to both others, so
/// that all three decide alike whether to run the next batch (outside the measured calls).
fn slowest(p: &mut Party, mine: &[f64]) -> Result<Vec<f64>, MpcError> {
    let bytes: Vec<u8> = mine.iter().flat_map(|t| t.to_le_bytes()).collect();
    for peer in [p.next(), p.prev()] {
        p.net().send(peer, bytes.clone())?;
    }
    let mut out = mine.to_vec();
    for peer in [p.next(), p.prev()] {
        let got = p.net().recv(peer)?;
        if got.len() != bytes.len() {
            return Err(MpcError::Malformed { peer, reason: "repetition times of another length".into() });
        }
        for (o, c) in out.iter_mut().zip(got.chunks_exact(8)) {
            *o = o.max(f64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
    }
    Ok(out)
}

/// This party's share of random values (all parties draw the same values and three-way split
/// from the common `rng`, each keeping its own share).
fn client_shares<R: Pow2>(me: usize, ring: &R, rng: &mut StdRng, n: usize, nonzero: bool) -> Add3<R> {
    let mut v = ring.sample_vec(rng, n);
    if nonzero {
        v.iter_mut().filter(|x| **x == ring.zero()).for_each(|x| *x = ring.one());
    }
    let [s0, s1, s2] = a3::share_from_client(ring, &v, rng);
    match me {
        0 => s0,
        1 => s1,
        _ => s2,
    }
}

/// The three XOR components of `planes` random bit planes of `n` bits (same on every party).
fn random_components(rng: &mut StdRng, planes: usize, n: usize) -> Vec<[BitVec; 3]> {
    (0..planes).map(|_| [BitVec::random(rng, n), BitVec::random(rng, n), BitVec::random(rng, n)]).collect()
}

/// This party's replicated planes of random values: components `(x_me, x_{me-1})`.
fn replicated(me: usize, comps: &[[BitVec; 3]]) -> Vec<Rep3Bits> {
    comps.iter().map(|c| Rep3Bits::from_parts(c[me].clone(), c[(me + 2) % 3].clone()).expect("equal lengths")).collect()
}

/// Draws the inputs of `op` for a batch of `n` (not timed) and returns the timed call.
fn prepare<R: Pow2>(op: &str, p: &mut Party, ring: R, n: usize, seed: u64) -> Timed {
    let me = p.id();
    let width = ring.bits() as usize;
    let mut rng = StdRng::seed_from_u64(seed);
    match op {
        "reshare" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            Box::new(move |p| {
                std::hint::black_box(a3::reshare(p, &x));
                Ok(())
            })
        }
        "mult" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            let y = client_shares(me, &ring, &mut rng, n, false);
            Box::new(move |p| a3::mul(p, &x, &y).map(|_| ()))
        }
        "bit_conj" | "prefix_or" | "msnzb" => {
            let planes = replicated(me, &random_components(&mut rng, width, n));
            match op {
                "bit_conj" => Box::new(move |p| a3::bit_conj(p, &planes).map(|_| ())),
                "prefix_or" => Box::new(move |p| a3::prefix_or(p, &planes).map(|_| ())),
                _ => Box::new(move |p| a3::msnzb(p, &planes).map(|_| ())),
            }
        }
        "share_conv" => {
            let mut comps = random_components(&mut rng, 1, n).pop().expect("one plane");
            let own = std::mem::replace(&mut comps[me], BitVec::zeros(0));
            Box::new(move |p| a3::share_conv(p, &ring, &[&own]).map(|_| ()))
        }
        "bit_extr" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            Box::new(move |p| a3::bit_extr(p, &x).map(|_| ()))
        }
        "equal" | "lt" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            let y = client_shares(me, &ring, &mut rng, n, false);
            if op == "equal" {
                Box::new(move |p| a3::equal(p, &x, &y).map(|_| ()))
            } else {
                Box::new(move |p| a3::lt(p, &x, &y).map(|_| ()))
            }
        }
        "shift_r" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            Box::new(move |p| a3::shift_r(p, &x, (width / 2) as u32).map(|_| ()))
        }
        "pub_div" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            let d: Vec<u128> = (0..n).map(|_| rng.gen_range(1..1u128 << 16)).collect();
            Box::new(move |p| a3::div_public(p, &x, &d).map(|_| ()))
        }
        "div" => {
            let x = client_shares(me, &ring, &mut rng, n, false);
            let y = client_shares(me, &ring, &mut rng, n, true);
            Box::new(move |p| a3::div(p, &x, &y).map(|_| ()))
        }
        other => unreachable!("unknown op {other}"),
    }
}

/// The variant field of a protocol's records.
fn variant(op: &str, bits: u32) -> String {
    match op {
        "reshare" => "zero-sharing".into(),
        "bit_conj" | "prefix_or" | "msnzb" => format!("{bits}-planes"),
        "share_conv" => format!("z2->z2^{bits}"),
        "shift_r" => format!("by-{}", bits / 2),
        "pub_div" => "d<2^16".into(),
        "div" => "secret-nonzero".into(),
        _ => "-".into(),
    }
}

/// The k-means cases: (dataset, data, k).
fn kmeans_cases(a: &SharemindArgs) -> Result<Vec<(&'static str, Dataset, usize)>, String> {
    let mut out = Vec::new();
    let want = |d: &str| a.datasets.iter().any(|s| s == d);
    if want("iris") {
        out.push(("iris", Dataset::read_csv(&iris_path()).map_err(|e| e.to_string())?, 3));
    }
    if want("control") {
        out.push(("control", control_chart(1), 6));
    }
    if want("plants") && !a.skip_plants {
        out.push(("plants", plants_like(1).with_scale(3).map_err(|e| e.to_string())?, 5));
    }
    Ok(out)
}

/// `data/iris.csv` from the working directory, else from the repository this binary was built in.
fn iris_path() -> PathBuf {
    let here = Path::new("data/iris.csv");
    if here.exists() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/iris.csv")
}

fn kmeans_all(a: &SharemindArgs, backend: Backend) -> Result<Vec<KmeansResult>, String> {
    let cases = kmeans_cases(a)?;
    let bar = bar((cases.len() * 2) as u64);
    let mut out = Vec::new();
    for (name, data, k) in &cases {
        let points = km::prepare(data, *k).map_err(|e| format!("{name}: {e}"))?;
        let want = argus_kmeans::kmeans(&points.values, points.rows, points.cols, *k, None)
            .map_err(|e| format!("{name}: reference: {e}"))?;
        for hidden in [false, true] {
            let variant = format!("{name}-k{k}{}", if hidden { "-hidden" } else { "" });
            bar.set_message(variant.clone());
            let opts = Options { k: *k, max_iterations: None, hide_assignment: hidden };
            let progress = |it: &Iteration| bar.set_message(format!("{variant}: iteration {}", it.iteration));
            // Runs shorter than a sweep's batch limit are repeated (median); each is checked.
            let mut times = Vec::new();
            let mut first = None;
            while times.len() < a.reps.max(1) && times.iter().all(|&t| t < a.max_batch_seconds) {
                let run = km::run_local(&points, opts, backend, &progress).map_err(|e| format!("{variant}: {e}"))?;
                let got = &run.clustering;
                let agrees = got.centroids == want.centroids
                    && got.iterations == want.iterations
                    && got.converged == want.converged
                    && (hidden
                        || (got.assignment.as_ref() == Some(&want.assignment)
                            && got.sizes.as_ref() == Some(&want.sizes)));
                if !agrees {
                    return Err(format!(
                        "k-means {variant}: the MPC result disagrees with the reference ({} iterations, converged {}, \
                         vs {} and {})",
                        got.iterations, got.converged, want.iterations, want.converged
                    ));
                }
                times.push(run.seconds);
                first.get_or_insert(run);
            }
            let run = first.expect("at least one run");
            let r = KmeansResult {
                dataset: name,
                variant,
                rows: points.rows,
                cols: points.cols,
                k: *k,
                hidden,
                seconds: median(times.clone()),
                runs: times.len(),
                iterations: run.clustering.iterations,
                bytes: run.bytes.iter().copied().max().unwrap_or(0),
                rounds: run.rounds.iter().copied().max().unwrap_or(0),
            };
            say(
                &bar,
                &format!(
                    "k-means {:<17} {}x{}: {:.3} s (median of {}), {} iterations, {} B/party, {} rounds, agrees with the reference",
                    r.variant, r.rows, r.cols, r.seconds, r.runs, r.iterations, r.bytes, r.rounds
                ),
            );
            out.push(r);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(out)
}

/// A `kB` field of /proc/self/status, in bytes.
fn proc_status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .map_or(0, |kb| kb * 1024)
}

/// 10^8 64-bit products in batches of 10^6, inputs drawn per batch.
fn huge(backend: Backend) -> Result<HugeResult, String> {
    const TOTAL: usize = 100_000_000;
    const CHUNK: usize = 1_000_000;
    // the peak is also read after this many products: the same, if memory is bounded
    const EARLY: usize = 10_000_000;
    // "5" resets the peak RSS to the current RSS (Linux ≥ 4.0).
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_start = proc_status_bytes("VmRSS");
    let bar = bar((TOTAL / CHUNK) as u64);
    bar.set_message("mult 64-bit x10^8 in batches of 10^6");
    let ring = Z64::new();
    let per_party = run3(backend, cfg(), |p| {
        barrier(p)?;
        let before = p.stats();
        let start = Instant::now();
        let mut busy = 0.0;
        let mut rss_early = 0;
        for i in 0..TOTAL / CHUNK {
            // random components of random values: a valid additive sharing
            let x = Add3::new(ring, ring.sample_vec(p.prg.own(), CHUNK));
            let y = Add3::new(ring, ring.sample_vec(p.prg.own(), CHUNK));
            let t = Instant::now();
            let z = a3::mul(p, &x, &y)?;
            busy += t.elapsed().as_secs_f64();
            std::hint::black_box(z);
            if p.id() == 0 {
                bar.inc(1);
                if i + 1 == EARLY / CHUNK {
                    rss_early = proc_status_bytes("VmHWM");
                }
            }
        }
        Ok((busy, start.elapsed().as_secs_f64(), p.stats() - before, rss_early))
    })
    .map_err(|e| format!("huge mult: {e}"))?;
    bar.finish_and_clear();
    let peak_rss = proc_status_bytes("VmHWM");
    Ok(HugeResult {
        total: TOTAL,
        chunk: CHUNK,
        mult_seconds: per_party.iter().map(|r| r.0).fold(0.0, f64::max),
        wall_seconds: per_party.iter().map(|r| r.1).fold(0.0, f64::max),
        bytes: per_party.iter().map(|r| r.2.bytes_sent).max().unwrap_or(0),
        rounds: per_party.iter().map(|r| r.2.rounds).max().unwrap_or(0),
        rss_start,
        peak_early: per_party[0].3,
        early: EARLY,
        peak_rss,
        peak_reset,
    })
}

/// The JSON records of a report.
fn records(r: &Report) -> Vec<Record> {
    let mut out = Vec::new();
    let rec = |op: &str, variant: String, bits: u32, batch: usize, seconds: f64, bytes: u64, rounds: u64| Record {
        suite: "sharemind".into(),
        op: op.into(),
        scheme: "additive3".into(),
        variant,
        modulus_bits: bits,
        batch,
        backend: r.backend.clone(),
        seconds,
        ops_per_sec: batch as f64 / seconds,
        bytes_per_party: bytes,
        rounds,
    };
    if let Some(h) = &r.huge {
        out.push(rec(
            "mult",
            format!("batched-1e{}", h.chunk.ilog10()),
            64,
            h.total,
            h.mult_seconds,
            h.bytes,
            h.rounds,
        ));
    }
    for s in &r.sweeps {
        for p in &s.points {
            out.push(rec(s.op, variant(s.op, s.bits), s.bits, p.batch, p.seconds, p.bytes, p.rounds));
        }
    }
    for k in &r.kmeans {
        out.push(rec("kmeans", k.variant.clone(), km::RING_BITS, k.rows, k.seconds, k.bytes, k.rounds));
    }
    out
}

/// `1.23 ms`, `0.80 µs`, …
fn fmt_time(s: f64) -> String {
    if s >= 60.0 {
        format!("{}m{:04.1}s", (s / 60.0).floor(), s % 60.0)
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.3} µs", s * 1e6)
    } else {
        format!("{:.2} ns", s * 1e9)
    }
}

/// `12.34 M/s` and the like.
fn fmt_rate(x: f64) -> String {
    format!("{}/s", super::core::human(x))
}

fn fmt_batch(n: usize) -> String {
    if n >= 10_000 && 10usize.pow(n.ilog10()) == n {
        format!("1e{}", n.ilog10())
    } else {
        n.to_string()
    }
}

fn print_report(r: &Report) {
    if !r.sweeps.is_empty() {
        print_sweeps(r);
        for bits in [32, 64] {
            if r.sweeps.iter().any(|s| s.bits == bits) {
                print_table2(r, bits);
            }
        }
    }
    if let Some(h) = &r.huge {
        print_huge(h, &r.backend);
    }
    if !r.kmeans.is_empty() {
        print_table3(r);
    }
    print_targets(r);
}

/// Time per operation at every batch of every sweep.
fn print_sweeps(r: &Report) {
    let mut batches: Vec<usize> = r.sweeps.iter().flat_map(|s| s.points.iter().map(|p| p.batch)).collect();
    batches.sort_unstable();
    batches.dedup();
    println!("Sweep ({}, median of the repetitions): time per operation at each batch size", r.backend);
    print!("{:<10} {:>4}", "protocol", "bits");
    for b in &batches {
        print!(" {:>11}", fmt_batch(*b));
    }
    println!(" {:>7} {:>12}", "rounds", "bytes/op");
    for s in &r.sweeps {
        print!("{:<10} {:>4}", s.op, s.bits);
        for b in &batches {
            match s.points.iter().find(|p| p.batch == *b) {
                Some(p) => print!(" {:>11}", fmt_time(p.seconds / p.batch as f64)),
                None => print!(" {:>11}", "-"),
            }
        }
        let last = s.points.last();
        println!(
            " {:>7} {:>12}",
            last.map_or("-".into(), |p| p.rounds.to_string()),
            last.map_or("-".into(), |p| format!("{:.1}", p.bytes as f64 / p.batch as f64))
        );
    }
    println!();
}

/// Table 2 the paper's way, ours beside the paper's (32-bit) figures.
fn print_table2(r: &Report, bits: u32) {
    println!(
        "Table 2, Z_2^{bits} ({}; paper: 32-bit, 3 servers, 1 Gb/s). n_s: the smallest batch from which every larger \
         batch's time per op is within 25 % of the best ('*': the largest batch measured)",
        r.backend
    );
    println!(
        "{:<10} {:>10} {:>10} {:>9} {:>7} {:>11} {:>10} {:>11} {:>12}",
        "protocol", "single op", "paper", "n_s", "paper", "saturated", "paper", "paper/ours", "ours ops/s"
    );
    for s in r.sweeps.iter().filter(|s| s.bits == bits) {
        let pp = paper(s.op);
        let single = s.single().map_or("-".into(), |p| fmt_time(p.seconds));
        let sat = s.saturation();
        let dash = || "-".to_string();
        println!(
            "{:<10} {:>10} {:>10} {:>9} {:>7} {:>11} {:>10} {:>11} {:>12}",
            pp.map_or(s.op, |p| p.0),
            single,
            pp.map_or_else(dash, |p| fmt_time(p.1)),
            sat.map_or_else(dash, |x| format!("{}{}", x.batch, if x.at_end { "*" } else { "" })),
            pp.map_or_else(dash, |p| p.2.to_string()),
            sat.map_or_else(dash, |x| fmt_time(x.per_op)),
            pp.map_or_else(dash, |p| fmt_time(p.3)),
            match (pp, sat) {
                (Some(p), Some(x)) => format!("{:.0}x", p.3 / x.per_op),
                _ => dash(),
            },
            sat.map_or_else(dash, |x| fmt_rate(1.0 / x.per_op)),
        );
    }
    println!();
}

fn print_huge(h: &HugeResult, backend: &str) {
    println!("Bounded memory ({backend}): mult 64-bit on {} elements in batches of {}", h.total, h.chunk);
    println!(
        "  {} in the products ({}), {} with the inputs drawn per batch; {} B and {} rounds per party",
        fmt_time(h.mult_seconds),
        fmt_rate(h.total as f64 / h.mult_seconds),
        fmt_time(h.wall_seconds),
        h.bytes,
        h.rounds
    );
    let mib = |b: u64| b as f64 / 1048576.0;
    println!(
        "  peak RSS (VmHWM) {:.1} MiB{} ({:.1} MiB after the first {} products); RSS at the start {:.1} MiB",
        mib(h.peak_rss),
        if h.peak_reset { " since the start of this run" } else { " of the whole process (reset refused)" },
        mib(h.peak_early),
        h.early,
        mib(h.rss_start)
    );
    println!();
}

/// Paper 001, Table 3 (k-means), for the datasets we run: (label, seconds, iterations).
fn kmeans_paper(dataset: &str) -> Option<(&'static str, f64, usize)> {
    match dataset {
        "iris" => Some(("iris 150x4 k=3", 1.0, 4)),
        "control" => Some(("synthetic 600x60 k=5", 6.0, 8)),
        "plants" => Some(("plants 34781x70 k=5", 22.0 * 60.0 + 42.0, 28)),
        _ => None,
    }
}

fn print_table3(r: &Report) {
    println!("Table 3, k-means in Z_2^64 ({}), every result equal to the plaintext reference", r.backend);
    println!(
        "{:<18} {:>9} {:>3} {:>10} {:>5} {:>14} {:>7}   {:<22} {:>9} {:>5}",
        "variant", "points", "k", "time", "iter", "bytes/party", "rounds", "paper", "time", "iter"
    );
    for k in &r.kmeans {
        let pp = kmeans_paper(k.dataset);
        println!(
            "{:<18} {:>9} {:>3} {:>10} {:>5} {:>14} {:>7}   {:<22} {:>9} {:>5}",
            k.variant,
            format!("{}x{}", k.rows, k.cols),
            k.k,
            fmt_time(k.seconds),
            k.iterations,
            k.bytes,
            k.rounds,
            pp.map_or("-", |p| p.0),
            pp.map_or("-".into(), |p| fmt_time(p.1)),
            pp.map_or("-".into(), |p| p.2.to_string()),
        );
    }
    println!("(the paper's variant reveals the assignment and sizes; -hidden keeps them secret, beyond the paper)");
    println!();
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

fn print_targets(r: &Report) {
    let sat = |op: &str, bits: u32| r.sweeps.iter().find(|s| s.op == op && s.bits == bits).and_then(Sweep::saturation);
    let mut lines: Vec<String> = Vec::new();
    for &(op, name, _, _, paper_sat) in &PAPER {
        if let Some(s) = sat(op, 32) {
            let ratio = paper_sat / s.per_op;
            let wide = sat(op, 64).map_or(String::new(), |w| format!("; 64-bit {:.0}x", paper_sat / w.per_op));
            lines.push(format!(
                "{} {name:<9} saturated 32-bit op >= {PAPER_FACTOR:.0}x below the paper's {}: {} = {ratio:.0}x{wide}",
                verdict(ratio >= PAPER_FACTOR),
                fmt_time(paper_sat),
                fmt_time(s.per_op)
            ));
        }
    }
    let rate = |op: &str, name: &str, target: f64| {
        sat(op, 64).map(|s| {
            let narrow = sat(op, 32).map_or(String::new(), |n| format!(" (32-bit {})", fmt_rate(1.0 / n.per_op)));
            format!(
                "{} {name} 64-bit >= {}: {}{narrow}",
                verdict(1.0 / s.per_op >= target),
                fmt_rate(target),
                fmt_rate(1.0 / s.per_op)
            )
        })
    };
    lines.extend(rate("mult", "Mult", 20e6));
    lines.extend(rate("equal", "Equal", 2e6));
    lines.extend(rate("lt", "LT (comparison)", 2e6));
    lines.extend(rate("div", "Div by a secret divisor", 300e3));
    for (dataset, limit) in [("iris", 0.05), ("plants", 30.0)] {
        if let Some(k) = r.kmeans.iter().find(|k| k.dataset == dataset && !k.hidden) {
            lines.push(format!(
                "{} k-means {} (paper's variant) <= {}: {}",
                verdict(k.seconds <= limit),
                k.variant,
                fmt_time(limit),
                fmt_time(k.seconds)
            ));
        }
    }
    if !lines.is_empty() {
        println!("Targets");
        for l in lines {
            println!("  {l}");
        }
        println!();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> SharemindArgs {
        SharemindArgs {
            json: None,
            reps: 1,
            backend: "memory".into(),
            ops: Vec::new(),
            bits: vec![32],
            batches: vec![1, 100],
            max_batch_seconds: 30.0,
            kmeans_only: false,
            no_kmeans: false,
            skip_plants: true,
            datasets: vec!["iris".into()],
            huge: false,
        }
    }

    #[test]
    fn a_tiny_run_gives_every_record() {
        let a = tiny();
        let report = measure(&a).unwrap();
        print_report(&report);
        let recs = records(&report);
        let ops: Vec<&str> = recs.iter().filter(|r| r.op != "kmeans").map(|r| r.op.as_str()).collect();
        for op in OPS {
            assert_eq!(ops.iter().filter(|&&o| o == op).count(), 2, "{op}: batches 1 and 100");
        }
        for r in &recs {
            assert_eq!(r.suite, "sharemind");
            assert_eq!(r.scheme, "additive3");
            assert_eq!(r.backend, "memory");
            assert!(r.seconds > 0.0 && r.ops_per_sec > 0.0, "{r:?}");
            assert!((r.ops_per_sec - r.batch as f64 / r.seconds).abs() <= 1e-6 * r.ops_per_sec);
            if r.op == "kmeans" {
                assert_eq!(r.modulus_bits, 64);
                assert_eq!(r.batch, 150);
                assert!(r.variant == "iris-k3" || r.variant == "iris-k3-hidden", "{}", r.variant);
                assert!(r.bytes_per_party > 0 && r.rounds > 0);
                continue;
            }
            assert!(OPS.contains(&r.op.as_str()), "{}", r.op);
            assert_eq!(r.modulus_bits, 32);
            assert!(r.batch == 1 || r.batch == 100);
            if r.op == "reshare" {
                // a zero-sharing from the pairwise streams: no message
                assert_eq!((r.bytes_per_party, r.rounds), (0, 0));
            } else {
                assert!(r.bytes_per_party > 0 && r.rounds > 0, "{r:?}");
            }
        }
        // mult: one round, two 4-byte elements per value per party
        let mult = recs.iter().find(|r| r.op == "mult" && r.batch == 100).unwrap();
        assert_eq!((mult.bytes_per_party, mult.rounds), (800, 1));
        assert_eq!(recs.iter().filter(|r| r.op == "kmeans").count(), 2);
        let s = report.sweeps.iter().find(|s| s.op == "mult").unwrap().saturation().unwrap();
        assert!(s.batch == 1 || s.batch == 100);
    }

    #[test]
    fn the_saturation_point_is_where_the_cost_stays_near_the_best() {
        let pt = |batch: usize, per_op: f64| Point { batch, seconds: per_op * batch as f64, bytes: 0, rounds: 0 };
        let s = Sweep {
            op: "mult",
            bits: 32,
            points: vec![pt(1, 100.0), pt(10, 11.0), pt(100, 1.2), pt(1000, 1.0), pt(10000, 1.3), pt(100000, 1.1)],
        };
        // 1.3 is beyond 1.25 × 1.0, so saturation starts after it
        let sat = s.saturation().unwrap();
        assert_eq!((sat.batch, sat.per_op, sat.at_end), (100000, 1.0, true));
        let s = Sweep { points: vec![pt(1, 100.0), pt(10, 1.2), pt(100, 1.0), pt(1000, 1.1)], ..s };
        let sat = s.saturation().unwrap();
        assert_eq!((sat.batch, sat.at_end), (10, false));
    }
}
