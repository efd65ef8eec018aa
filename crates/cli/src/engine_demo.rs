//! `argus engine-demo`: the three parties over TCP with mutual TLS on loopback, running the core
//! protocols on client-shared data and checking each result against plaintext.

use std::time::{Duration, Instant};

use argus_math::{BitVec, Ring, Zt, F65519, Z16, Z64};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::{self, share_bits_from_client, share_from_client, Adder};
use argus_mpc::shamir;
use argus_mpc::MpcError;
use argus_net::NetConfig;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Arguments of `argus engine-demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Values per step.
    #[arg(long, default_value_t = 100_000)]
    n: usize,
    /// Transport between the parties: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    /// Seed of the client's plaintext data (shares always use OS randomness).
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

struct Step {
    name: &'static str,
    want: Vec<u128>,
}

/// Runs the demo; any disagreement with plaintext is an error.
pub fn run(a: DemoArgs) -> Result<(), String> {
    let backend = match a.backend.as_str() {
        "tcp" => Backend::Tcp,
        "memory" => Backend::Memory,
        o => return Err(format!("unknown backend {o:?} (use tcp or memory)")),
    };
    let n = a.n.max(8);
    let mut data = StdRng::seed_from_u64(a.seed);
    let mut client = rand::rngs::OsRng;
    let (z64, z16, z36) = (Z64::new(), Z16::new(), Zt::pow2(36).map_err(|e| e.to_string())?);
    let edges = [0u64, 1, u64::MAX, i64::MAX as u64, i64::MIN as u64];
    let x: Vec<u64> = (0..n).map(|i| if i < edges.len() { edges[i] } else { data.gen() }).collect();
    let y: Vec<u64> = (0..n).map(|i| if i < edges.len() { edges[edges.len() - 1 - i] } else { data.gen() }).collect();
    let h: Vec<u16> = (0..n).map(|_| data.gen()).collect();
    let dot_len = 12800;
    let rows = (n / 100).max(1);
    let q: Vec<u16> = (0..rows * dot_len).map(|_| data.gen_range(0..3u16).wrapping_sub(1)).collect();
    let db: Vec<u16> = (0..rows * dot_len).map(|_| data.gen_range(0..3u16).wrapping_sub(1)).collect();
    let flags: Vec<bool> = (0..n).map(|i| i == n / 2).collect();

    let sx = share_from_client(&z64, &x, &mut client);
    let sy = share_from_client(&z64, &y, &mut client);
    let sh = share_from_client(&z16, &h, &mut client);
    let sq = share_from_client(&z16, &q, &mut client);
    let sdb = share_from_client(&z16, &db, &mut client);
    let sf = share_bits_from_client(&BitVec::from_bools(&flags), &mut client);
    let f = F65519;
    let fq: Vec<u16> = q.iter().map(|&v| f.from_i128(v as i16 as i128)).collect();
    let fdb: Vec<u16> = db.iter().map(|&v| f.from_i128(v as i16 as i128)).collect();
    let fh: Vec<u16> = h.iter().map(|&v| v % F65519::P).collect();
    let shq = shamir::share_from_client(&f, &fq, &mut client).map_err(|e| e.to_string())?;
    let shdb = shamir::share_from_client(&f, &fdb, &mut client).map_err(|e| e.to_string())?;
    let shh = shamir::share_from_client(&f, &fh, &mut client).map_err(|e| e.to_string())?;

    let steps = vec![
        Step { name: "multiply 64-bit", want: x.iter().zip(&y).map(|(a, b)| a.wrapping_mul(*b) as u128).collect() },
        Step {
            name: "dot products, length 12800, 16-bit",
            want: q.chunks(dot_len).zip(db.chunks(dot_len)).map(|(a, b)| z16.dot(a, b) as u128).collect(),
        },
        Step {
            name: "signed less-than, 64-bit",
            want: x.iter().zip(&y).map(|(a, b)| ((*a as i64) < (*b as i64)) as u128).collect(),
        },
        Step { name: "MSB extraction, 16-bit ripple", want: h.iter().map(|v| (v >> 15) as u128).collect() },
        Step { name: "MSB extraction, 16-bit log-depth", want: h.iter().map(|v| (v >> 15) as u128).collect() },
        Step { name: "lift Z_2^16 -> Z_2^36", want: h.iter().map(|&v| v as u128).collect() },
        Step { name: "OR-tree over all flags", want: vec![flags.iter().any(|&f| f) as u128] },
        Step { name: "Shamir multiply mod 65519", want: fh.iter().map(|&v| f.mul(v, v) as u128).collect() },
        Step {
            name: "Shamir dot products -> rep3 mod p",
            want: fq.chunks(dot_len).zip(fdb.chunks(dot_len)).map(|(a, b)| f.dot(a, b) as u128).collect(),
        },
        Step { name: "Shamir MSB mod 65519", want: fh.iter().map(|v| (v >> 15) as u128).collect() },
    ];
    println!("argus demo: 3 parties over {} ({} values per step)", backend, n);
    let bar = ProgressBar::new(steps.len() as u64)
        .with_style(ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg}").expect("valid").progress_chars("=> "));
    let started = Instant::now();
    let outputs = run3(backend, NetConfig::with_timeout(Duration::from_secs(60)), |p| {
        let me = p.id();
        let mut out: Vec<(Vec<u128>, argus_net::Stats, f64)> = Vec::new();
        let mut step =
            |p: &mut argus_mpc::Party, i: usize, f: &dyn Fn(&mut argus_mpc::Party) -> Result<Vec<u128>, MpcError>| {
                if me == 0 {
                    bar.set_message(steps[i].name);
                }
                let (before, t0) = (p.stats(), Instant::now());
                let v = f(p)?;
                out.push((v, p.stats() - before, t0.elapsed().as_secs_f64()));
                if me == 0 {
                    bar.inc(1);
                }
                Ok::<_, MpcError>(())
            };
        let wide = |v: Vec<u64>| v.into_iter().map(u128::from).collect::<Vec<_>>();
        let wide16 = |v: Vec<u16>| v.into_iter().map(u128::from).collect::<Vec<_>>();
        let bits = |b: BitVec| b.to_bools().into_iter().map(u128::from).collect::<Vec<_>>();
        step(p, 0, &|p| {
            let r = rep3::mul(p, &sx[me], &sy[me])?;
            Ok(wide(rep3::reveal(p, &r)?))
        })?;
        step(p, 1, &|p| {
            let r = rep3::dot(p, &sq[me], &sdb[me], dot_len)?;
            Ok(wide16(rep3::reveal(p, &r)?))
        })?;
        step(p, 2, &|p| {
            let r = rep3::lt(p, &sx[me], &sy[me], Adder::Ripple)?;
            Ok(bits(rep3::reveal_bits(p, &r)?))
        })?;
        step(p, 3, &|p| {
            let r = rep3::msb(p, &sh[me], Adder::Ripple)?;
            Ok(bits(rep3::reveal_bits(p, &r)?))
        })?;
        step(p, 4, &|p| {
            let r = rep3::msb(p, &sh[me], Adder::LogDepth)?;
            Ok(bits(rep3::reveal_bits(p, &r)?))
        })?;
        step(p, 5, &|p| {
            let r = rep3::lift(p, &sh[me], &z36, Adder::Ripple)?;
            rep3::reveal(p, &r)
        })?;
        step(p, 6, &|p| {
            let r = rep3::or_tree(p, &sf[me], 1)?;
            Ok(bits(rep3::reveal_bits(p, &r)?))
        })?;
        step(p, 7, &|p| {
            let r = shamir::mul(p, &shh[me], &shh[me])?;
            Ok(wide16(shamir::reveal(p, &r)?))
        })?;
        step(p, 8, &|p| {
            let d = shamir::dot(&shq[me], &shdb[me], dot_len)?;
            let r = shamir::to_rep3(p, &d)?;
            Ok(wide16(rep3::reveal(p, &r)?))
        })?;
        step(p, 9, &|p| {
            let r = shamir::to_rep3(p, &shh[me])?;
            let m = shamir::msb_p(p, &r)?;
            Ok(bits(rep3::reveal_bits(p, &m)?))
        })?;
        Ok(out)
    })
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let mut failures = 0;
    println!("{:<36} {:>9} {:>10} {:>14} {:>7}  check", "step", "values", "seconds", "bytes/party", "rounds");
    for (i, s) in steps.iter().enumerate() {
        let agree = outputs.iter().all(|party| party[i].0 == s.want);
        failures += usize::from(!agree);
        let bytes = outputs.iter().map(|party| party[i].1.bytes_sent).max().unwrap_or(0);
        let rounds = outputs.iter().map(|party| party[i].1.rounds).max().unwrap_or(0);
        let secs = outputs.iter().map(|party| party[i].2).fold(0.0, f64::max);
        println!(
            "{:<36} {:>9} {:>10.4} {:>14} {:>7}  {}",
            s.name,
            s.want.len(),
            secs,
            bytes,
            rounds,
            if agree { "matches plaintext" } else { "MISMATCH" }
        );
    }
    println!("total {:.2} s", started.elapsed().as_secs_f64());
    if failures > 0 {
        return Err(format!("{failures} step(s) disagree with the plaintext reference"));
    }
    println!("all results agree with the plaintext reference");
    Ok(())
}
