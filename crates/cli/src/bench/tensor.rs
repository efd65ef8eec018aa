//! `argus bench tensor`: paper 004 — tensor-triple generation from OT, Gilboa's (COT) and
//! silent (SOT) (offline; Tables 1–3), the matrix product with triples (online; Tables 4 and 5) and batched FingerCode,
//! Eigenfaces and FaceNet identification (Tables 6–8: online under a LAN and the paper's WAN,
//! offline from OT), the paper's figures beside ours. Every product is checked against the
//! plaintext twin on a sample of entries, every identification on all its decisions.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use argus_biometric::protocol::{self, Measured, Source};
use argus_biometric::{App, Dataset};
use argus_math::{Ring, Z128, Z32, Z64};
use argus_mpc::additive2::{generate, generate_silent, matmul, reveal, share, MatrixTriple, Ots, Vole};
use argus_mpc::local::{run, Backend};
use argus_mpc::{MpcError, Party};
use argus_net::{NetConfig, Shaper, Stats};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use super::core::barrier;
use super::Run;

/// Arguments of `argus bench tensor`.
#[derive(clap::Args, Debug)]
pub struct TensorArgs {
    /// Also write the records as a JSON array to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Sizes m = n of the 32-bit tensor triples generated from OT (offline).
    #[arg(long, value_delimiter = ',', default_values_t = [8usize, 256, 1024])]
    triples: Vec<usize>,
    /// Sizes d of the square d × d matrix products (online, 32- and 128-bit, with triples from a
    /// dealer: appendix C).
    #[arg(long, value_delimiter = ',', default_values_t = [128usize, 256, 512, 1024])]
    matmul: Vec<usize>,
    /// Network settings: none (memory channels, no shaping), lan (1 Gbps, 2 ms round trip), wan
    /// (the paper's: 500 Mbps, 20 ms one way).
    #[arg(long, value_delimiter = ',', default_values_t = ["none".to_string(), "lan".to_string(), "wan".to_string()])]
    networks: Vec<String>,
    /// Repetitions per measurement (the median is reported; offline identification runs once).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Applications to identify with at the paper's batch sizes (fingercode, eigenfaces,
    /// facenet; `none` for none).
    #[arg(long, value_delimiter = ',', default_values_t = ["fingercode".to_string(), "eigenfaces".to_string(), "facenet".to_string()])]
    apps: Vec<String>,
    /// Batches MxN (queries × references) to identify in, for every app, instead of the
    /// paper's (e.g. 16x1024,1024x1024).
    #[arg(long, value_delimiter = ',')]
    batches: Vec<String>,
    /// Measure an identification's offline phase (from OT, unshaped, once) only where it sends
    /// at most this many GB per party (the largest batches send hundreds).
    #[arg(long, default_value_t = 25.0)]
    offline_budget_gb: f64,
}

/// One record of the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct TensorRecord {
    suite: String,
    /// `tensor_triple` or `matmul`.
    op: String,
    /// `offline` or `online`.
    phase: String,
    m: usize,
    n: usize,
    modulus_bits: u32,
    network: String,
    /// For identification: `distance` (the paper's measure) or `identify` (with the threshold);
    /// `-` otherwise.
    step: String,
    /// Offline, how the triples' cross terms were made: `gilboa` (the paper's COT) or `silent`
    /// (its SOT); `-` online.
    vole: String,
    seconds: f64,
    bytes_per_party: u64,
    rounds: u64,
}

/// The shaper of a network setting: `none` (no shaping: memory channels), `lan` or `wan`.
fn shaper(network: &str) -> Result<Option<Shaper>, String> {
    let (mbps, one_way_ms) = match network {
        "none" => return Ok(None),
        "lan" => (1000.0, 1),
        "wan" => (500.0, 20),
        other => return Err(format!("unknown network {other:?} (use none, lan or wan)")),
    };
    Ok(Some(Shaper {
        latency: Duration::from_millis(one_way_ms),
        bandwidth_bytes_per_sec: Some((mbps * 1e6 / 8.0) as u64),
    }))
}

/// The paper's figures (ms, and MB for a triple) where its tables give them: Table 1 / 3 for one
/// 32-bit (d, d) triple, Table 4 for a 32-bit d × d × d product, Table 5 for a 128-bit one.
fn paper(op: &str, bits: u32, d: usize, network: &str) -> String {
    let lan = match network {
        "lan" => true,
        "wan" => false,
        _ => return "-".into(),
    };
    match (op, bits, d) {
        ("tensor_triple_gilboa", 32, 256) => format!("{} ms, 16.26 MB", if lan { 29 } else { 654 }),
        ("tensor_triple_gilboa", 32, 1024) => format!("{} ms, 257.01 MB", if lan { 638 } else { 5530 }),
        ("tensor_triple_silent", 32, 256) => format!("{} ms, 28.79 MB", if lan { 593 } else { 1603 }),
        ("tensor_triple_silent", 32, 1024) => format!("{} ms, 114.76 MB", if lan { 2271 } else { 4850 }),
        ("matmul", 32, 256) => format!("{} ms, 1 MB", if lan { 22 } else { 62 }),
        ("matmul", 32, 1024) => format!("{} ms, 16 MB", if lan { 1062 } else { 1289 }),
        ("matmul", 128, d) if lan => {
            let s = match d {
                128 => 0.007,
                256 => 0.049,
                384 => 0.158,
                512 => 0.402,
                1024 => 4.324,
                _ => return "-".into(),
            };
            format!("{:.0} ms (LAN)", s * 1e3)
        }
        _ => "-".into(),
    }
}

/// The timed part of one party's run: what [`timed`] gives back.
type Timed = Result<(f64, Stats), MpcError>;

/// Runs `work` after a barrier, timing it and counting its traffic.
fn timed<T>(
    p: &mut Party,
    work: impl FnOnce(&mut Party) -> Result<T, MpcError>,
) -> Result<(T, (f64, Stats)), MpcError> {
    barrier(p)?;
    let (before, t0) = (p.stats(), Instant::now());
    let out = work(p)?;
    Ok((out, (t0.elapsed().as_secs_f64(), p.stats() - before)))
}

/// The slowest party's median seconds, the busiest party's bytes and rounds of `f` (which times
/// its own part with [`timed`]) run by two parties in memory under `cfg`.
fn measure<F>(cfg: &NetConfig, reps: usize, f: F) -> Result<(f64, u64, u64), String>
where
    F: Fn(&mut Party) -> Timed + Sync,
{
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        let got = run(2, Backend::Memory, cfg.clone(), &f).map_err(|e| e.to_string())?;
        runs.push(Run::of(got.into_iter()));
    }
    let r = Run::median_of(runs);
    Ok((r.seconds, r.bytes, r.rounds))
}

/// Runs the suite.
pub fn run_suite(a: TensorArgs) -> Result<(), String> {
    // every argument checked before anything runs
    for n in &a.networks {
        shaper(n)?;
    }
    let apps: Vec<App> = a
        .apps
        .iter()
        .filter(|s| s.as_str() != "none")
        .map(|s| {
            App::from_name(s).ok_or_else(|| format!("unknown app {s:?} (use fingercode, eigenfaces, facenet or none)"))
        })
        .collect::<Result<_, _>>()?;
    let chosen: Vec<(usize, usize)> = a.batches.iter().map(|b| parse_batch(b)).collect::<Result<_, _>>()?;
    let mut records = Vec::new();
    println!("Tensor triples from OT (paper 004, Fig. 5 on Gilboa's product or the silent VOLE), 32-bit, one (d, d) triple, offline");
    println!("{:>6} {:<7} {:<5} {:>10} {:>12} {:>7}  paper", "d", "vole", "net", "seconds", "MB/party", "rounds");
    for net in &a.networks {
        let cfg = NetConfig { shaper: shaper(net)?, ..NetConfig::default() };
        for &d in &a.triples {
            for vole in [Vole::Gilboa, Vole::Silent] {
                let ring = Z32::new();
                let (s, bytes, rounds) = measure(&cfg, a.reps, |p| {
                    let mut ots = Ots::setup(p)?;
                    let (t, time) = timed(p, |p| match vole {
                        Vole::Gilboa => generate(&ring, p, &mut ots, d, d, 1),
                        Vole::Silent => generate_silent(&ring, p, &mut ots, d, d, 1),
                    })?;
                    // W = u ⊗ v, checked on its first row
                    let u0 = reveal(&ring, p, &t[0].u[..1])?[0];
                    let v = reveal(&ring, p, &t[0].v)?;
                    let w = reveal(&ring, p, &t[0].w[..d])?;
                    if w.iter().zip(&v).any(|(&w, &v)| w != ring.mul(u0, v)) {
                        return Err(MpcError::InvalidParameter("a triple's W is not u ⊗ v".into()));
                    }
                    Ok(time)
                })?;
                let name = vole_name(vole);
                println!(
                    "{d:>6} {name:<7} {net:<5} {s:>10.3} {:>12.2} {rounds:>7}  {}",
                    bytes as f64 / 1e6,
                    paper(&format!("tensor_triple_{name}"), 32, d, net)
                );
                let mut r = record("tensor_triple", "offline", d, d, 32, net, s, bytes, rounds);
                r.vole = name.into();
                records.push(r);
            }
        }
    }
    println!("\nMatrix products d × d × d with a dealt matrix triple (Fig. 10), online");
    println!("{:>6} {:>4} {:<5} {:>10} {:>12} {:>7}  paper", "d", "bits", "net", "seconds", "MB/party", "rounds");
    for net in &a.networks {
        let cfg = NetConfig { shaper: shaper(net)?, ..NetConfig::default() };
        for &d in &a.matmul {
            records.push(product(&Z32::new(), 32, d, net, &cfg, a.reps)?);
            records.push(product(&Z128::new(), 128, d, net, &cfg, a.reps)?);
        }
    }
    if !apps.is_empty() {
        println!("\nBatched identification (Tables 6-8): m queries × n references, distances then the threshold");
        println!(
            "{:<10} {:>5} {:>5} {:<7} {:<7} {:>9} {:>10} {:>12} {:>7}  paper",
            "app", "m", "n", "phase", "net", "distance", "identify", "MB/party", "rounds"
        );
        for app in apps {
            let batches = if chosen.is_empty() { paper_batches(app) } else { chosen.clone() };
            for (m, n) in batches {
                records.extend(identification(app, m, n, &a)?);
            }
        }
    }
    if let Some(path) = &a.json {
        super::write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    Ok(())
}

/// One online d × d × d product over `ring`, checked against the twin on its first row.
fn product<R: Ring>(
    ring: &R,
    bits: u32,
    d: usize,
    net: &str,
    cfg: &NetConfig,
    reps: usize,
) -> Result<TensorRecord, String> {
    let mut rng = StdRng::seed_from_u64(d as u64);
    let triple = MatrixTriple::deal(ring, &mut rng, (d, d, d));
    let (x, y) = (ring.sample_vec(&mut rng, d * d), ring.sample_vec(&mut rng, d * d));
    let (sx, sy) = (share(ring, &mut rng, &x), share(ring, &mut rng, &y));
    let want: Vec<R::El> =
        (0..d).map(|j| (0..d).fold(ring.zero(), |acc, l| ring.add(acc, ring.mul(x[l], y[l * d + j])))).collect();
    let (s, bytes, rounds) = measure(cfg, reps, |p| {
        let me = p.id();
        let (c, time) = timed(p, |p| matmul(ring, p, &sx[me], &sy[me], &triple[me]))?;
        if reveal(ring, p, &c[..d])? != want {
            return Err(MpcError::InvalidParameter("a product differs from the twin".into()));
        }
        Ok(time)
    })?;
    println!(
        "{d:>6} {bits:>4} {net:<5} {s:>10.3} {:>12.2} {rounds:>7}  {}",
        bytes as f64 / 1e6,
        paper("matmul", bits, d, net)
    );
    Ok(record("matmul", "online", d, d, bits, net, s, bytes, rounds))
}

#[allow(clippy::too_many_arguments)]
fn record(
    op: &str,
    phase: &str,
    m: usize,
    n: usize,
    bits: u32,
    net: &str,
    s: f64,
    bytes: u64,
    rounds: u64,
) -> TensorRecord {
    TensorRecord {
        suite: "tensor".into(),
        op: op.into(),
        phase: phase.into(),
        m,
        n,
        modulus_bits: bits,
        network: net.into(),
        step: "-".into(),
        vole: "-".into(),
        seconds: s,
        bytes_per_party: bytes,
        rounds,
    }
}

/// `MxN` as (queries, references), both at least 1.
fn parse_batch(b: &str) -> Result<(usize, usize), String> {
    let parse = |s: &str| s.trim().parse::<usize>().ok().filter(|&v| v > 0);
    match b.split_once(['x', 'X', '×']) {
        Some((m, n)) => match (parse(m), parse(n)) {
            (Some(m), Some(n)) => Ok((m, n)),
            _ => Err(format!("--batches {b:?}: queries and references must be whole numbers above 0")),
        },
        None => Err(format!("--batches {b:?}: write queries x references, e.g. 16x1024")),
    }
}

/// The paper's batches of each application (Tables 6, 7 and 8).
fn paper_batches(app: App) -> Vec<(usize, usize)> {
    match app {
        App::FingerCode => vec![(128, 128), (128, 1024)],
        App::Eigenfaces => vec![(80, 320), (80, 1000)],
        App::FaceNet => vec![(16, 16), (16, 1024), (1024, 1024)],
    }
}

/// The paper's identification figures: seconds (and MB where given), online or offline.
fn paper_identification(app: App, m: usize, n: usize, phase: &str) -> &'static str {
    match (app, m, n, phase) {
        (App::FingerCode, 128, 128, "online") => "0.016 s, 1.25 MB",
        (App::FingerCode, 128, 128, _) => "1.90 s, 2640 MB",
        (App::FingerCode, 128, 1024, "online") => "0.082 s, 5.63 MB",
        (App::FingerCode, 128, 1024, _) => "15.54 s, 20560 MB",
        (App::Eigenfaces, 80, 320, "online") => "0.029 s, 14.57 MB",
        (App::Eigenfaces, 80, 320, _) => "41.44 s, 65207 MB",
        (App::Eigenfaces, 80, 1000, "online") => "0.032 s, 14.69 MB",
        (App::Eigenfaces, 80, 1000, _) => "124.24 s, 202057 MB",
        (App::FaceNet, 16, 16, "online") => "0.00068 s",
        (App::FaceNet, 16, 16, _) => "0.02 s (COT)",
        (App::FaceNet, 16, 1024, "online") => "0.0055 s",
        (App::FaceNet, 16, 1024, _) => "0.378 s (COT), 12.00 s (SOT)",
        (App::FaceNet, 1024, 1024, "online") => "0.25 s",
        (App::FaceNet, 1024, 1024, _) => "19.456 s (COT), 1219.05 s (SOT)",
        _ => "-",
    }
}

/// One batch: online under every network with dealt triples (the online phase does not
/// depend on where they came from), the median of `reps`; offline from OT, unshaped, once,
/// where within the budget. Each run's decisions must equal the twin's.
fn identification(app: App, m: usize, n: usize, a: &TensorArgs) -> Result<Vec<TensorRecord>, String> {
    let data = Dataset::synthetic(app, m, n, 1);
    let want = data.decide();
    let bits = app.ring_bits();
    let mut out = Vec::new();
    let check = |got: &protocol::Outcome| -> Result<[Measured; 2], String> {
        if got.matches != want {
            return Err(format!("{} {m} × {n}: the secure decisions differ from the twin's", app.name()));
        }
        Ok(got.parties)
    };
    let slowest = |ps: &[Measured; 2], f: fn(&Measured) -> f64| f(&ps[0]).max(f(&ps[1]));
    for net in &a.networks {
        let cfg = NetConfig { shaper: shaper(net)?, ..NetConfig::default() };
        let mut runs = Vec::new();
        for rep in 0..a.reps.max(1) {
            let got = protocol::run_local(&data, Backend::Memory, cfg.clone(), Source::Dealer(rep as u64))
                .map_err(|e| e.to_string())?;
            runs.push(check(&got)?);
        }
        let median = |f: fn(&Measured) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(|ps| slowest(ps, f)).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (dist, all) = (median(|x| x.distance_seconds), median(|x| x.online_seconds));
        let online = busier(&runs[0][0].online, &runs[0][1].online);
        println!(
            "{:<10} {m:>5} {n:>5} {:<7} {net:<7} {dist:>9.4} {all:>10.4} {:>12.2} {:>7}  {}",
            app.name(),
            "online",
            online.0 as f64 / 1e6,
            online.1,
            paper_identification(app, m, n, "online")
        );
        let mut r = record(app.name(), "online", m, n, bits, net, dist, online.0, online.1);
        r.step = "distance".into();
        out.push(r);
        let mut r = record(app.name(), "online", m, n, bits, net, all, online.0, online.1);
        r.step = "identify".into();
        out.push(r);
    }
    let bytes = protocol::offline_bytes(&protocol::Batch { app, m, n, threshold: data.threshold });
    let gb = bytes[0].max(bytes[1]) as f64 / 1e9;
    if gb > a.offline_budget_gb {
        println!(
            "{:<10} {m:>5} {n:>5} {:<7} {:<7} skipped: about {gb:.0} GB per party (--offline-budget-gb {})  {}",
            app.name(),
            "offline",
            "none",
            a.offline_budget_gb,
            paper_identification(app, m, n, "offline")
        );
        return Ok(out);
    }
    let got =
        protocol::run_local(&data, Backend::Memory, NetConfig::default(), Source::Ot).map_err(|e| e.to_string())?;
    let ps = check(&got)?;
    let (dist, all) = (slowest(&ps, |x| x.offline_distance_seconds), slowest(&ps, |x| x.offline_seconds));
    let (bytes, rounds) = busier(&ps[0].offline, &ps[1].offline);
    println!(
        "{:<10} {m:>5} {n:>5} {:<7} {:<7} {dist:>9.3} {all:>10.3} {:>12.2} {rounds:>7}  {}",
        app.name(),
        "offline",
        "none",
        bytes as f64 / 1e6,
        paper_identification(app, m, n, "offline")
    );
    let vole = match bits {
        32 => Vole::cheaper(&Z32::new(), (m, app.compared_dim(), n)),
        _ => Vole::cheaper(&Z64::new(), (m, app.compared_dim(), n)),
    };
    for (step, s) in [("distance", dist), ("identify", all)] {
        let mut r = record(app.name(), "offline", m, n, bits, "none", s, bytes, rounds);
        r.step = step.into();
        r.vole = vole_name(vole).into();
        out.push(r);
    }
    Ok(out)
}

/// A record's name for `vole`.
fn vole_name(vole: Vole) -> &'static str {
    match vole {
        Vole::Gilboa => "gilboa",
        Vole::Silent => "silent",
    }
}

/// The busier party's bytes sent and rounds.
fn busier(a: &Stats, b: &Stats) -> (u64, u64) {
    (a.bytes_sent.max(b.bytes_sent), a.rounds.max(b.rounds))
}
