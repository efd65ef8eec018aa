//! `argus bench iris`: the iris uniqueness check end to end (more of paper 000's tables to come).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::protocol::{Scheme, Tuning};
use argus_iris::with_scheme;
use argus_iris::{Generator, MaskMode, MatchConfig};
use argus_math::kernels::Isa;
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::Adder;
use argus_net::{NetConfig, Shaper};
use argus_node::config::CompareChunk;
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::median;

/// Arguments of `argus bench iris`.
#[derive(Args, Debug)]
pub struct IrisArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Enrolled identities (both eyes each).
    #[arg(long, default_value_t = 4000)]
    db: usize,
    /// Queries per batch (the nodes' default batch size).
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// The end to end's correlation kernel: `auto` (plan it: time the candidates on this host, as
    /// a node does when it starts, and take the fastest), `unplanned` (the rule-of-thumb path) or
    /// a path such as `packed-vnni-l5-b8` or `rows-amx-l0-b24` (see the plan's printout).
    #[arg(long, default_value = "auto")]
    kernel: String,
    /// Repetitions (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Transport: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    // End-to-end schemes to run: the help lists the registry's (`schemes_help`).
    #[arg(long, value_delimiter = ',', help = schemes_help(), default_values_t = DEFAULT_SCHEMES.map(String::from))]
    schemes: Vec<String>,
    /// Trimmed masks: one mask bit per real/imaginary pair (half the mask storage and products).
    #[arg(long)]
    trimmed: bool,
    /// Code layout of the end to end: deployed (16x200x2x2 = 12800 bits) or open-iris
    /// (16x256x2x2 = 16384 bits).
    #[arg(long, value_enum, default_value = "deployed")]
    layout: crate::service::LayoutArg,
    /// Batch sizes of the comparison-phase tables (paper 000 Tables 2 and 3).
    #[arg(long, value_delimiter = ',', default_values_t = [50_000usize, 100_000, 250_000, 500_000])]
    compare_batches: Vec<usize>,
    /// Comparison variants of Tables 2 and 3 to run (default: all): plain_mask-Z, plain_mask-F,
    /// mpclift-Z, constlift-Z, nolift-Z, mpclift-F, constlift-F, nolift-F, or_tree.
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Skip the dot-product table (paper 000 Table 1)
    #[arg(long)]
    no_dot: bool,
    /// Skip the comparison-phase tables (end to end only).
    #[arg(long)]
    no_compare: bool,
    /// The comparisons' binary adder, as `[iris] adder` in a node's config. Replicated-sharing
    /// comparisons only; those mod a prime always ripple.
    #[arg(long, value_enum, default_value_t = AdderArg::Ripple)]
    adder: AdderArg,
    /// Comparisons per chunk of the end to end's comparison phase, as `[iris] compare_chunk` in a
    /// node's config: auto (from the round time the parties measure before the batches: the
    /// adder's default below 2 ms rounds, 2^22 from 2 ms, 2^23 from 5 ms, with ripple), 0 (the
    /// adder's default, 2^20 with ripple and 2^21 with log depth) or 1024 to 2^26. Larger chunks
    /// take fewer rounds and more memory.
    #[arg(long, default_value_t = CompareChunk::Auto)]
    compare_chunk: CompareChunk,
    /// Simulated round-trip time between the parties in milliseconds (half of it added to
    /// every message on top of the real transport's), for the comparison tables and end to end.
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Simulated link capacity per direction in megabits per second (0: unlimited).
    #[arg(long, default_value_t = 0.0)]
    mbps: f64,
}

/// `--adder`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum AdderArg {
    /// Ripple carry: fewest bytes, one round per bit.
    Ripple,
    /// Kogge-Stone: a few rounds per comparison, ~1.6 times the bytes (nodes far apart).
    LogDepth,
}

impl IrisArgs {
    /// The adder `--adder` names.
    fn adder(&self) -> Adder {
        match self.adder {
            AdderArg::Ripple => Adder::Ripple,
            AdderArg::LogDepth => Adder::LogDepth,
        }
    }

    /// The transport configuration: a long receive timeout, and the simulated link if any.
    fn net(&self) -> Result<NetConfig, String> {
        if !(self.rtt_ms.is_finite() && self.rtt_ms >= 0.0 && self.mbps.is_finite() && self.mbps >= 0.0) {
            return Err(format!("--rtt-ms and --mbps must be finite and >= 0, got {} and {}", self.rtt_ms, self.mbps));
        }
        let mut net = NetConfig::with_timeout(Duration::from_secs(600));
        if self.rtt_ms > 0.0 || self.mbps > 0.0 {
            net.shaper = Some(Shaper {
                latency: Duration::from_secs_f64(self.rtt_ms / 2e3),
                bandwidth_bytes_per_sec: (self.mbps > 0.0).then(|| (self.mbps * 1e6 / 8.0) as u64),
            });
        }
        Ok(net)
    }
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
    /// End to end: the process's CPU time per batch, all three parties (median), and the
    /// comparisons per core-second it gives (`batch × 3 / cpu_seconds`): the per-core rate without
    /// the host's idle time and speed swings between runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ops_per_cpu_second: Option<f64>,
    /// End to end: bits per code (12800 deployed, 16384 open-iris).
    #[serde(skip_serializing_if = "Option::is_none")]
    code_bits: Option<usize>,
    /// The kernel that ran: a correlation path (`packed-vnni-l5-b8`) or `gemm-<level>`.
    kernel: String,
}

impl Record {
    /// A Table 1 record: `products` local dot products in `seconds`, on `cores` cores.
    fn dot(
        variant: &'static str,
        modulus_bits: u32,
        products: usize,
        seconds: f64,
        cores: usize,
        kernel: String,
    ) -> Record {
        let rate = products as f64 / seconds;
        Record {
            suite: "iris",
            op: "dot",
            variant,
            masks: "-",
            modulus_bits,
            batch: products,
            seconds,
            ops_per_sec: rate,
            ops_per_sec_per_core: rate / cores as f64,
            bytes_per_party: 0,
            rounds: 0,
            cpu_seconds: None,
            ops_per_cpu_second: None,
            code_bits: None,
            kernel,
        }
    }
}

fn config(a: &IrisArgs) -> MatchConfig {
    let mask_mode = if a.trimmed { MaskMode::Trimmed } else { MaskMode::PerBit };
    MatchConfig { mask_mode, ..MatchConfig::default() }
}

/// The MPC check's tuning the flags name.
fn tuning(a: &IrisArgs) -> Tuning {
    Tuning { adder: a.adder(), compare_chunk: a.compare_chunk.initial() }
}

/// The end-to-end schemes run by default: the secret-mask ones.
const DEFAULT_SCHEMES: [&str; 4] = ["mpclift-gr16", "mpclift-f16", "mpclift-z16", "nolift-z32"];

/// `--schemes`' help: every registered scheme by its short name, with its line.
fn schemes_help() -> String {
    let each: Vec<String> = Scheme::ALL.iter().map(|s| format!("{} ({})", s.short_name(), s.about())).collect();
    format!(
        "End-to-end schemes to run (`--schemes \"\"` for none; the nodes' names such as {} work too): {}",
        Scheme::default().name(),
        each.join(", ")
    )
}

/// A scheme's `--schemes` name, also from the nodes' names (`mpclift-GR16-shamir`), in any case.
fn bench_name(s: &str) -> String {
    let s = s.to_ascii_lowercase();
    s.strip_suffix("-shamir").or_else(|| s.strip_suffix("-rep3")).map_or(s.clone(), str::to_string)
}

/// The scheme a `--schemes` name selects ([`bench_name`]).
fn bench_scheme(s: &str) -> Option<Scheme> {
    Scheme::from_short_name(&bench_name(s))
}

/// Runs the suite.
pub fn run(a: IrisArgs) -> Result<(), String> {
    let backend = match a.backend.as_str() {
        "tcp" => Backend::Tcp,
        "memory" => Backend::Memory,
        o => return Err(format!("unknown backend {o:?} (use tcp or memory)")),
    };
    // Names are checked before anything runs: a typo should not cost the tables before it.
    a.net()?;
    let schemes = a
        .schemes
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| {
            bench_scheme(s).ok_or_else(|| {
                let short: Vec<_> = Scheme::ALL.iter().map(|s| s.short_name()).collect();
                format!("unknown scheme {s:?} (use {}, or the nodes' names)", short.join(", "))
            })
        })
        .collect::<Result<Vec<Scheme>, String>>()?;
    if !matches!(a.kernel.as_str(), "auto" | "unplanned") {
        a.kernel.parse::<argus_math::kernels::CorrelationPath>()?;
    }
    let known: Vec<_> = super::compare::variants().iter().map(|k| k.name).collect();
    if let Some(v) = a.variants.iter().find(|v| !known.contains(&v.as_str())) {
        return Err(format!("unknown comparison variant {v:?} (use {})", known.join(", ")));
    }
    let mut records = if a.no_dot { Vec::new() } else { dot_table(&a)? };
    records.extend(compare_tables(&a, backend)?);
    for &scheme in &schemes {
        records.extend(with_scheme!(scheme, s => e2e(&a, backend, &s)?));
    }
    if let Some(path) = &a.json {
        super::write_json(path, &records)?;
    }
    Ok(())
}

/// Table 1: secret length-12800 dot products per second on one core, i.e. each party's local
/// work for a 64 × 2048 block of query rows × database rows: two plain products per secret one
/// for replicated sharing (eq. 6), one for Shamir; GR(2^16, 4) includes the weights of the query
/// rows. The paper's figures are its 64-core Graviton3 rates divided by 64.
fn dot_table(a: &IrisArgs) -> Result<Vec<Record>, String> {
    use argus_math::{kernels, Ring, Zt64, Z16, Z32};
    const LEN: usize = 12800;
    let (mq, nr) = (64usize, 2048usize);
    let reps = a.reps.max(1);
    let mut rng = rand::rngs::OsRng;
    let (q16, d16) = (Z16::new().sample_vec(&mut rng, mq * LEN), Z16::new().sample_vec(&mut rng, nr * LEN));
    let f16: Vec<u16> = q16.iter().map(|&v| v % 65519).collect();
    let g16: Vec<u16> = d16.iter().map(|&v| v % 65519).collect();
    let (q32, d32) = (Z32::new().sample_vec(&mut rng, mq * LEN), Z32::new().sample_vec(&mut rng, nr * LEN));
    const P32: u32 = 4_294_967_291; // 2^32 − 5
    let f32_field = Zt64::new(P32.into()).map_err(|e| e.to_string())?;
    let share32 = |n: usize| -> Vec<u32> {
        f32_field.sample_vec(&mut rand::rngs::OsRng, n).into_iter().map(|v| v as u32).collect()
    };
    let (fq, fd) = (share32(mq * LEN), share32(nr * LEN));
    let err = |e: kernels::KernelError| e.to_string();
    let gemm = format!("gemm-{}", kernels::detected());
    type Run<'a> = Box<dyn Fn() -> Result<(), String> + 'a>;
    // (variant, modulus bits, paper per core (M/s), one block of local work)
    let variants: Vec<(&str, u32, f64, Run)> = vec![
        (
            "Z16",
            16,
            49.0 / 64.0,
            Box::new(|| {
                let mut out = vec![0u16; mq * nr];
                kernels::gemm_u16(&q16, &d16, LEN, &mut out).map_err(err)?;
                kernels::gemm_u16(&q16, &d16, LEN, &mut out).map_err(err)
            }),
        ),
        (
            "F16",
            16,
            129.0 / 64.0,
            Box::new(|| kernels::gemm_f65519(&f16, &g16, LEN, &mut vec![0u16; mq * nr]).map_err(err)),
        ),
        (
            "GR16",
            16,
            f64::NAN,
            Box::new(|| {
                let w = gr_weights(&q16, LEN)?;
                kernels::gemm_u16(&w, &d16, LEN, &mut vec![0u16; mq * nr]).map_err(err)
            }),
        ),
        (
            "Z32",
            32,
            24.0 / 64.0,
            Box::new(|| {
                let mut out = vec![0u32; mq * nr];
                kernels::gemm_u32(&q32, &d32, LEN, &mut out).map_err(err)?;
                kernels::gemm_u32(&q32, &d32, LEN, &mut out).map_err(err)
            }),
        ),
        (
            "F32",
            32,
            21.0 / 64.0,
            Box::new(|| kernels::gemm_mod_p32(P32, &fq, &fd, LEN, &mut vec![0u32; mq * nr]).map_err(err)),
        ),
    ];
    println!(
        "{:<6} {:>9} {:>10} {:>14}   paper per Graviton3 core (M/s); kernels at {}",
        "dot",
        "products",
        "ms",
        "M/s per core",
        kernels::detected()
    );
    let time = |run: &Run| -> Result<f64, String> {
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            run()?;
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(median(times))
    };
    let mut records = Vec::new();
    // Per core: the products on the calling thread only.
    kernels::set_threads(1);
    for (name, bits, paper, run) in &variants {
        let (name, bits, paper) = (*name, *bits, *paper);
        let secs = time(run)?;
        let rate = (mq * nr) as f64 / secs;
        let paper = if paper.is_nan() {
            "—".to_string()
        } else {
            format!("{paper:.2}   ours/paper: {:.1}x", rate / 1e6 / paper)
        };
        println!("{name:<6} {:>9} {:>10.1} {:>14.2}   {paper}", mq * nr, secs * 1e3, rate / 1e6);
        records.push(Record::dot(name, bits, mq * nr, secs, 1, gemm.clone()));
    }
    // GR16 again with the products split over every core (the dot-product phase of a node on its
    // own machine).
    kernels::set_threads(0);
    let threads = kernels::threads();
    if threads > 1 {
        let gr16 = variants.iter().find(|v| v.0 == "GR16").expect("GR16 is a variant");
        let gr16_secs = records.iter().find(|r| r.variant == "GR16").map_or(f64::NAN, |r| r.seconds);
        let secs = time(&gr16.3)?;
        let rate = (mq * nr) as f64 / secs;
        println!(
            "{:<6} {:>9} {:>10.1} {:>14.2}   on {threads} threads: {:.2} M/s, {:.2}x one thread",
            "GR16",
            mq * nr,
            secs * 1e3,
            rate / 1e6 / threads as f64,
            rate / 1e6,
            gr16_secs / secs
        );
        records.push(Record::dot("GR16-all-cores", 16, mq * nr, secs, threads, gemm.clone()));
    }
    // GR16 at the service's shape, one core: a batch of 16 queries is 16 × 31 rotation rows per
    // eye against the database, so the query side is 7.75 times as tall as above and each
    // database row streamed from memory serves that many more products.
    kernels::set_threads(1);
    let rows = 16 * 31;
    // Times `run` (rows × nr products on one core), prints it with `what` and records it.
    let one_core = |variant: &'static str, what: &str, kernel: String, run: Run| -> Result<Record, String> {
        let secs = time(&run)?;
        let rate = (rows * nr) as f64 / secs;
        println!("{:<6} {:>9} {:>10.1} {:>14.2}   {what}, 1 thread", "GR16", rows * nr, secs * 1e3, rate / 1e6);
        Ok(Record::dot(variant, 16, rows * nr, secs, 1, kernel))
    };
    let tall = Z16::new().sample_vec(&mut rng, rows * LEN);
    let w = gr_weights(&tall, LEN)?;
    let batch: Run = Box::new(|| kernels::gemm_u16(&w, &d16, LEN, &mut vec![0u16; rows * nr]).map_err(err));
    records.push(one_core("GR16-batch496", "496 query rows (one eye of a 16-query batch)", gemm.clone(), batch)?);
    // The same products as the service lays them out: the 31 rotations of each of 16 queries are
    // windows of its weights extended by 30 columns of 64 values, rotation-major, so that the
    // tile kernel packs each query once for all its rotations.
    let (nq, rot, width) = (16, 31, LEN / 200);
    let ext = LEN + (rot - 1) * width;
    let wide = Z16::new().sample_vec(&mut rng, nq * ext);
    let starts: Vec<usize> = (0..rot).flat_map(|k| (0..nq).map(move |q| q * ext + (rot - 1 - k) * width)).collect();
    let windows: Run =
        Box::new(|| kernels::gemm_u16_rows(&wide, &starts, &d16, LEN, &mut vec![0u16; rows * nr]).map_err(err));
    let what = "the same as 31 rotation windows of 16 queries (the service's layout)";
    records.push(one_core("GR16-windows496", what, gemm.clone(), windows)?);
    // The same rotations by Karatsuba's middle product (what the service runs): (3/4)^levels of
    // the multiplies, on the path planned for this shape (unplanned unless an end to end or a
    // node planned it in this process).
    let shape = kernels::Correlation { positions: 200, width, lags: rot };
    let path = kernels::correlation_path(shape, nq);
    let karatsuba: Run =
        Box::new(|| kernels::correlate_u16(shape, None, &wide, &d16, &mut vec![0u16; rows * nr]).map_err(err));
    let what = format!("the same by Karatsuba's middle product ({path})");
    records.push(one_core("GR16-karatsuba496", &what, path.to_string(), karatsuba)?);
    kernels::set_threads(0);
    Ok(records)
}

/// Party 1's GR(2^16, 4) weights for each length-`len` query row of `q` (its share of the query
/// basis), concatenated: what a node multiplies the database by.
fn gr_weights(q: &[u16], len: usize) -> Result<Vec<u16>, String> {
    let rows: Vec<Vec<u16>> = q
        .chunks_exact(len)
        .map(|row| argus_mpc::galois::dot_weights(1, row))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    Ok(rows.concat())
}

/// Tables 2 and 3: every comparison variant at every batch size, the paper's figure beside ours.
fn compare_tables(a: &IrisArgs, backend: Backend) -> Result<Vec<Record>, String> {
    if a.no_compare || a.compare_batches.is_empty() {
        return Ok(Vec::new());
    }
    let mut variants = super::compare::variants();
    if !a.variants.is_empty() {
        variants.retain(|k| a.variants.iter().any(|v| v == k.name));
    }
    let reps = a.reps.max(1);
    let batches = a.compare_batches.clone();
    let adder = a.adder();
    let per_party = run3(backend, a.net()?, |p| {
        let mut out = Vec::new();
        for v in &variants {
            for &n in &batches {
                out.push(super::compare::measure(p, v, n, reps, adder)?);
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
                cpu_seconds: None,
                ops_per_cpu_second: None,
                code_bits: None,
                kernel: "-".into(),
            });
            k += 1;
        }
    }
    Ok(records)
}

/// End to end with any scheme: share a population and a batch, load each party's database, and
/// time the batch check; and the validity check of the batch's shares that a node runs before it
/// (issue 35: at most 10 % of the check), as a second record.
fn e2e<S: IrisScheme>(a: &IrisArgs, backend: Backend, scheme: &S) -> Result<[Record; 2], String> {
    let geometry = a.layout.geometry();
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
    let kernel = choose_kernel(a, scheme, geometry, &cfg)?;
    let planned = plan_chunk(a, scheme, geometry, &cfg)?;
    // The three parties share this machine's cores: a third each for their products.
    argus_math::kernels::set_threads(super::party_threads());
    let per_party = run3(backend, a.net()?, |p| {
        let mut db = scheme.new_db(geometry.bits());
        for e in &enrolled {
            scheme.push(&mut db, &e[p.id()])?;
        }
        let mine: Vec<_> = queries.iter().map(|q| q[p.id()].clone()).collect();
        // As a node does when it connects, before (and not counted in) the batches.
        let mut tuning = tuning(a);
        if a.compare_chunk == CompareChunk::Auto {
            let round;
            (round, tuning.compare_chunk) =
                argus_iris::protocol::choose_compare_chunk(p, tuning.adder, planned.as_ref())?;
            if p.id() == 0 {
                eprintln!(
                    "compare_chunk auto: rounds of {:.2} ms, {} comparisons per chunk",
                    round.as_secs_f64() * 1e3,
                    tuning.compare_chunk
                );
            }
        }
        let (mut out, mut valid) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let (before, t0, cpu0) = (p.stats(), Instant::now(), process_cpu_seconds());
            let bad = scheme.invalid(p, &mine, geometry.bits())?;
            valid.push((t0.elapsed().as_secs_f64(), p.stats() - before, process_cpu_seconds() - cpu0));
            if bad.iter().any(|&b| b) {
                return Err(argus_mpc::MpcError::InvalidParameter("a valid query was found invalid".into()));
            }
            let (before, t0, cpu0) = (p.stats(), Instant::now(), process_cpu_seconds());
            scheme.check(p, &mine, &db, &cfg, &tuning, true)?;
            out.push((t0.elapsed().as_secs_f64(), p.stats() - before, process_cpu_seconds() - cpu0));
        }
        Ok((out, valid))
    })
    .map_err(|e| e.to_string())?;
    let (checks, valid): (Vec<_>, Vec<_>) = per_party.into_iter().unzip();
    let check = report(a, scheme.name(), scheme.bits(), rot, &checks, &kernel);
    let validity = report_validity(a, scheme.name(), scheme.bits(), &valid, check.seconds, &kernel);
    Ok([check, validity])
}

/// The end to end's correlation kernel as `--kernel` says: planned here (the candidates' times
/// printed), the unplanned path, or a given one. Returns its name.
fn choose_kernel<S: IrisScheme>(
    a: &IrisArgs,
    scheme: &S,
    geometry: argus_iris::IrisGeometry,
    cfg: &MatchConfig,
) -> Result<String, String> {
    use argus_math::kernels;
    let host = kernels::host();
    let options = kernels::PlanOptions { replan: true, ..Default::default() };
    let plans = argus_iris::protocol::choose_kernels(scheme, geometry, cfg, a.batch, &a.kernel, &options)?;
    for plan in plans {
        let shape = plan.shape;
        let at = format!("{}x{}x{} at {} queries", shape.positions, shape.width, shape.lags, a.batch);
        let mut measured = plan.measured.clone();
        measured.sort_by(|x, y| x.1.total_cmp(&y.1));
        let unplanned = kernels::CorrelationPath::unplanned(host.isa, shape, a.batch);
        let ms = |p: &kernels::CorrelationPath| {
            measured.iter().find(|m| m.0 == *p).map_or("-".into(), |m| format!("{:.1}", m.1 * 1e3))
        };
        eprintln!(
            "kernel plan for {at} on {} ({}): {} ({} ms per {} rows on one core; unplanned {unplanned}: {} ms); \
             fastest candidates: {}",
            host.cpu,
            host.isa,
            plan.path,
            ms(&plan.path),
            kernels::SAMPLE_ROWS,
            ms(&unplanned),
            measured.iter().take(6).map(|(p, t)| format!("{p} {:.1}", t * 1e3)).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(argus_iris::protocol::kernel_name(scheme, geometry, cfg, a.batch))
}

/// With `--compare-chunk auto`, the comparison chunks timed here as node 0 times them (the
/// candidates' times printed); `None` where nothing is planned.
fn plan_chunk<S: IrisScheme>(
    a: &IrisArgs,
    scheme: &S,
    geometry: argus_iris::IrisGeometry,
    cfg: &MatchConfig,
) -> Result<Option<argus_iris::protocol::ChunkTimes>, String> {
    if a.compare_chunk != CompareChunk::Auto {
        return Ok(None);
    }
    let options = argus_math::kernels::PlanOptions { replan: true, ..Default::default() };
    let Some(plan) = argus_iris::protocol::plan_compare_chunk(scheme, geometry, cfg, a.adder(), &options)
        .map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let each: Vec<String> = plan.times.seconds.iter().map(|(c, t)| format!("{c} {:.1}", t * 1e3)).collect();
    eprintln!(
        "compare_chunk plan: {} comparisons per chunk on one machine (ms per {} comparisons on three in-memory \
         parties: {}; {} rounds per chunk)",
        plan.local_chunk(),
        argus_iris::protocol::CHUNK_SAMPLE,
        each.join(", "),
        plan.times.rounds_per_chunk
    );
    Ok(Some(plan.times))
}

/// Medians over the repetitions of each party's (seconds, stats, CPU seconds): the slowest
/// party's time, party 0's CPU (the process's), the most bytes and rounds of any party.
struct Summary {
    reps: usize,
    secs: f64,
    cpu: f64,
    bytes: u64,
    rounds: u64,
}

fn summary(per_party: &[Vec<(f64, argus_net::Stats, f64)>]) -> Summary {
    let reps = per_party[0].len();
    Summary {
        reps,
        secs: median((0..reps).map(|r| per_party.iter().map(|pp| pp[r].0).fold(0.0, f64::max)).collect()),
        cpu: median(per_party[0].iter().map(|r| r.2).collect()),
        bytes: per_party.iter().map(|pp| pp[0].1.bytes_sent).max().unwrap_or(0),
        rounds: per_party.iter().map(|pp| pp[0].1.rounds).max().unwrap_or(0),
    }
}

/// The validity check's record and line, from each party's (seconds, stats, CPU seconds) per
/// repetition, against the batch check's median `check_secs`.
fn report_validity(
    a: &IrisArgs,
    variant: &'static str,
    bits: u32,
    per_party: &[Vec<(f64, argus_net::Stats, f64)>],
    check_secs: f64,
    kernel: &str,
) -> Record {
    let Summary { reps, secs, cpu, bytes, rounds } = summary(per_party);
    println!(
        "validity {variant}: {} queries' shares checked in {:.1} ms (median of {reps}), {:.1} % of the batch check; \
         {bytes} bytes/party, {rounds} rounds; CPU {:.3} core-s",
        a.batch,
        secs * 1e3,
        100.0 * secs / check_secs,
        cpu
    );
    Record {
        suite: "iris",
        op: "validity",
        variant,
        masks: if a.trimmed { "trimmed" } else { "per-bit" },
        modulus_bits: bits,
        batch: a.batch,
        seconds: secs,
        ops_per_sec: a.batch as f64 / secs,
        ops_per_sec_per_core: a.batch as f64 / secs,
        bytes_per_party: bytes,
        rounds,
        cpu_seconds: Some(cpu),
        ops_per_cpu_second: Some(a.batch as f64 / cpu),
        kernel: kernel.to_string(),
        code_bits: Some(a.layout.geometry().bits()),
    }
}

/// The CPU time (user and system) this process has used, all threads, in seconds.
fn process_cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Builds and prints the record from each party's (seconds, stats, process CPU seconds) per
/// repetition (the CPU time is the whole process's, so party 0's is taken).
fn report(
    a: &IrisArgs,
    variant: &'static str,
    bits: u32,
    rot: usize,
    per_party: &[Vec<(f64, argus_net::Stats, f64)>],
    kernel: &str,
) -> Record {
    let Summary { reps, secs, cpu, bytes, rounds } = summary(per_party);
    // One comparison: one rotation of one eye of a query against one enrolled code of that eye.
    let comparisons = a.batch * rot * 2 * a.db;
    let rate = comparisons as f64 / secs;
    let per_cpu_second = comparisons as f64 * 3.0 / cpu;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(3 * super::party_threads());
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
        cpu_seconds: Some(cpu),
        ops_per_cpu_second: Some(per_cpu_second),
        code_bits: Some(a.layout.geometry().bits()),
        kernel: kernel.to_string(),
    };
    println!(
        "e2e {} ({} masks, {}-bit codes): {} queries x {} rotations x 2 eyes x {} identities = {} comparisons in {:.3} s (median of {reps}) \
         over {}: {:.2} M comparisons/s, {:.2} M per core ({} cores for 3 parties; paper's CPU headline 1 M, {}), \
         {} bytes/party, {} rounds; CPU {:.2} core-s per batch, {:.2} M per core-second; kernel {}",
        rec.variant,
        rec.masks,
        a.layout.geometry().bits(),
        a.batch,
        rot,
        a.db,
        comparisons,
        secs,
        a.backend,
        rate / 1e6,
        rec.ops_per_sec_per_core / 1e6,
        cores,
        target_of(argus_math::kernels::host().isa),
        bytes,
        rounds,
        cpu,
        per_cpu_second / 1e6,
        rec.kernel,
    );
    rec
}

/// The end to end's target per core on a host of kernel level `isa` (issue 36).
fn target_of(isa: Isa) -> &'static str {
    match isa {
        Isa::Amx => "target 15 M (AMX class)",
        Isa::Avx512Vnni => "target 10 M (AVX-512 VNNI class)",
        Isa::Avx512 | Isa::Avx2 => "target 5 M (AVX2 class)",
        Isa::Portable => "no target (portable kernels)",
    }
}

#[cfg(test)]
mod tests {
    use argus_iris::protocol::Scheme;

    /// The nodes' scheme names select the same benchmark as the short ones, in any case, for
    /// every registered scheme.
    #[test]
    fn the_nodes_scheme_names_are_taken() {
        for &s in Scheme::ALL {
            for name in [s.name(), s.short_name(), &s.name().to_ascii_uppercase(), &s.short_name().to_ascii_uppercase()]
            {
                assert_eq!(super::bench_scheme(name), Some(s), "{name}");
            }
        }
        assert_eq!(super::bench_scheme("mpclift-GR16-shamir"), Some(Scheme::MpcLiftGr16));
        assert_eq!(super::bench_scheme("gr16"), None);
        assert!(super::DEFAULT_SCHEMES.iter().all(|s| super::bench_scheme(s).is_some()));
    }
}
