//! `argus biometric {fingercode|eigenfaces|facenet}`: batched identification of a client's
//! queries against a server's references (paper 004) on a synthetic population, the secure
//! decisions printed beside the plaintext twin's (exit status 1 on any disagreement).
//!
//! The two parties are threads of this process (--backend), or with --party I --addrs A,B
//! --pki DIR this process is party I alone over TCP with mutual TLS; each process then draws
//! the same population from --seed and uses only its own role's part (party 0 the queries,
//! party 1 the references).

use std::process::ExitCode;
use std::time::Instant;

use argus_biometric::protocol::{run_local, run_party, Measured, Source};
use argus_biometric::{App, Dataset};
use argus_mpc::local::Backend;
use argus_net::NetConfig;

use crate::failure::{bad_input, failed, Failure};
use crate::one_party::OnePartyArgs;

/// Which application.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum AppArg {
    /// Fingerprints: 640 8-bit entries, 32-bit distances (paper: 128 queries, 1024 references).
    Fingercode,
    /// Faces of 92 × 112 8-bit pixels projected in MPC on 12 eigenfaces, 64-bit distances
    /// (paper: 80 queries, 1000 references).
    Eigenfaces,
    /// 128-dimensional embeddings truncated to 8 bits, 32-bit distances (they stay below 2^23;
    /// the paper takes 64 bits) (paper: 1024 queries, 1024 references).
    Facenet,
}

impl From<AppArg> for App {
    fn from(a: AppArg) -> App {
        match a {
            AppArg::Fingercode => App::FingerCode,
            AppArg::Eigenfaces => App::Eigenfaces,
            AppArg::Facenet => App::FaceNet,
        }
    }
}

/// Arguments of `argus biometric`.
#[derive(clap::Args, Debug)]
pub struct BiometricArgs {
    /// The application (its dimensions and ring).
    #[arg(value_enum)]
    app: AppArg,
    /// Queries in the batch (the client's; half of them noisy copies of a reference).
    #[arg(long, default_value_t = 32)]
    queries: usize,
    /// References (the server's).
    #[arg(long, default_value_t = 256)]
    refs: usize,
    /// Seed of the synthetic population.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Match at squared distance at most this (default: calibrated on the population, halfway
    /// between the genuine distances and the others).
    #[arg(long)]
    threshold: Option<u64>,
    /// Take the matrix triples from an in-process dealer with this seed (paper 004, appendix C)
    /// instead of OT: faster offline, but not secure here, for comparison only.
    #[arg(long, value_name = "SEED")]
    dealer: Option<u64>,
    /// Transport of a local run: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    #[command(flatten)]
    net: OnePartyArgs,
}

/// Most queries × references of one batch: the decisions and distances of a larger batch would
/// not fit a modest machine's memory.
const MAX_PAIRS: usize = 1 << 24;

/// Runs `argus biometric`; prints `error: …` on stderr and returns the exit status.
pub fn run_cmd(a: BiometricArgs) -> ExitCode {
    crate::failure::exit(execute(a))
}

fn execute(a: BiometricArgs) -> Result<(), Failure> {
    let app = App::from(a.app);
    if a.queries == 0 || a.refs == 0 {
        return Err(bad_input("--queries and --refs must be at least 1"));
    }
    if a.queries.saturating_mul(a.refs) > MAX_PAIRS {
        return Err(bad_input(format!(
            "--queries {} × --refs {} is more than {MAX_PAIRS} pairs in one batch: split the queries",
            a.queries, a.refs
        )));
    }
    if let Some(t) = a.threshold {
        if t as u128 >= app.max_distance() {
            return Err(bad_input(format!(
                "--threshold {t}: every {} distance is at most {}, so every pair would match",
                app.name(),
                app.max_distance()
            )));
        }
    }
    let started = Instant::now();
    let mut data = Dataset::synthetic(app, a.queries, a.refs, a.seed);
    if let Some(t) = a.threshold {
        data.threshold = t;
    }
    let want = data.decide();
    eprintln!(
        "{}: {} queries × {} references of {} entries, threshold {}, drawn in {:.2} s",
        app.name(),
        data.m(),
        data.n(),
        app.dim(),
        data.threshold,
        started.elapsed().as_secs_f64()
    );
    let source = a.dealer.map_or(Source::Ot, Source::Dealer);
    if a.dealer.is_some() {
        eprintln!(
            "note: --dealer: the triples come from an in-process dealer both parties can read, for comparison only"
        );
    }
    let (got, measured) = match a.net.party {
        None => local(&a, &data, source)?,
        Some(id) => {
            let (got, m) = one_party(&a, &data, source, id)?;
            (got, vec![m])
        }
    };
    for (i, m) in measured.iter().enumerate() {
        let who = a.net.party.unwrap_or(i);
        eprintln!(
            "party {who}: offline {:.3} s (the distances' triples {:.3} s), {} bytes sent in {} rounds; online {:.3} s, {} bytes sent in {} rounds",
            m.offline_seconds,
            m.offline_distance_seconds,
            m.offline.bytes_sent,
            m.offline.rounds,
            m.online_seconds,
            m.online.bytes_sent,
            m.online.rounds
        );
    }
    report(&data, &got, &want)
}

fn local(a: &BiometricArgs, data: &Dataset, source: Source) -> Result<(Vec<bool>, Vec<Measured>), Failure> {
    let backend = match a.backend.as_str() {
        "tcp" => Backend::Tcp,
        "memory" => Backend::Memory,
        other => return Err(bad_input(format!("--backend {other}: use tcp or memory"))),
    };
    let out = run_local(data, backend, NetConfig::default(), source)
        .map_err(|e| failed(format!("the parties failed: {e}")))?;
    Ok((out.matches, out.parties.to_vec()))
}

fn one_party(a: &BiometricArgs, data: &Dataset, source: Source, id: usize) -> Result<(Vec<bool>, Measured), Failure> {
    if id > 1 {
        return Err(bad_input(format!("--party {id}: the parties are 0 (client) and 1 (server)")));
    }
    let mut p = a.net.connect(id, 2)?;
    run_party(&mut p, data, source).map_err(|e| failed(format!("party {id}: {e}")))
}

/// Per query: the references the secure run and the twin matched it to (the first few
/// queries), then the totals; a disagreement is a failure.
fn report(data: &Dataset, got: &[bool], want: &[bool]) -> Result<(), Failure> {
    let n = data.n();
    let matched = |row: &[bool]| -> Vec<usize> { row.iter().enumerate().filter(|(_, &b)| b).map(|(j, _)| j).collect() };
    const SHOWN: usize = 8;
    println!("query  genuine-of  secure matches  twin matches");
    for i in 0..data.m().min(SHOWN) {
        let g = data.genuine[i].map_or("-".to_string(), |r| r.to_string());
        let (s, t) = (matched(&got[i * n..(i + 1) * n]), matched(&want[i * n..(i + 1) * n]));
        println!("{i:>5}  {g:>10}  {:>14}  {:>12}", format!("{s:?}"), format!("{t:?}"));
    }
    if data.m() > SHOWN {
        println!("  … {} more queries", data.m() - SHOWN);
    }
    let agree = got.iter().zip(want).filter(|(a, b)| a == b).count();
    let matches = got.iter().filter(|&&b| b).count();
    println!("{matches} matching pairs; the secure decisions equal the twin's on {agree} of {} pairs", want.len());
    if agree != want.len() {
        return Err(failed("the secure decisions differ from the plaintext twin's"));
    }
    Ok(())
}
