//! `argus gmw`: evaluates a Bristol Fashion circuit by p-party GMW (paper 003) on inputs given as
//! hex, with the parties as threads of this process (over TCP with mutual TLS on loopback, or
//! memory channels) or, with `--party I --addrs … --pki DIR`, as one process per party.
//!
//! Input value `k` of the circuit is party `k`'s input; a value is hex, most significant digit
//! first (as the known-answer tests print them), or `@FILE` for hex in a file. A malformed
//! circuit or input is refused before any party starts (exit status 2); a failure, or a secure
//! output that differs from the plaintext evaluation of a local run, exits 1.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use argus_mpc::gmw::bristol::{bits_to_hex, hex_to_bits, parse, Bristol};
use argus_mpc::gmw::{cost, evaluate, preprocess};
use argus_mpc::local::{run, Backend};
use argus_mpc::Party;
use argus_net::NetConfig;

use crate::failure::{bad_input, failed, Failure};
use crate::one_party::OnePartyArgs;

/// Arguments of `argus gmw`.
#[derive(clap::Args, Debug)]
pub struct GmwArgs {
    /// The circuit, in Bristol Fashion (e.g. data/circuits/aes_128.txt).
    #[arg(long)]
    circuit: PathBuf,
    /// Number of parties (2 to 16; at least the circuit's number of input values).
    #[arg(long, default_value_t = 2)]
    parties: usize,
    /// Input values in party order (party k gives input value k), as hex (most significant digit
    /// first; the value's wires hold its bits least significant first) or @FILE holding hex; with
    /// --party, only this party's value (none if the circuit has no input for it).
    #[arg(long = "input", value_name = "HEX|@FILE")]
    inputs: Vec<String>,
    /// Transport of a local run: tcp (mutual TLS on loopback) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    #[command(flatten)]
    net: OnePartyArgs,
}

/// Runs `argus gmw`; prints `error: …` on stderr and returns the exit status.
pub fn run_cmd(a: GmwArgs) -> ExitCode {
    crate::failure::exit(execute(a))
}

fn value(arg: &str, width: usize, what: &str) -> Result<Vec<bool>, Failure> {
    let text = match arg.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| bad_input(format!("{what}: reading {path}: {e}")))?,
        None => arg.to_string(),
    };
    let hex: String = text.split_whitespace().collect();
    hex_to_bits(&hex, width).map_err(|e| bad_input(format!("{what}: {e}")))
}

fn execute(a: GmwArgs) -> Result<(), Failure> {
    if !(2..=16).contains(&a.parties) {
        return Err(bad_input(format!("--parties {}: GMW here runs 2 to 16 parties", a.parties)));
    }
    let text =
        std::fs::read_to_string(&a.circuit).map_err(|e| bad_input(format!("reading {}: {e}", a.circuit.display())))?;
    let b = parse(&text, a.parties).map_err(|e| bad_input(format!("{}: {e}", a.circuit.display())))?;
    let k = b.circuit.counts();
    let plan = cost(&b.circuit);
    eprintln!(
        "{}: {} ANDs, {} XORs, {} INVs, AND depth {}; {} parties: {} random OTs per ordered pair at most, {} rounds",
        a.circuit.display(),
        k.and,
        k.xor,
        k.inv,
        k.depth,
        a.parties,
        plan.max_ots(),
        plan.rounds
    );
    match a.net.party {
        None => local(&a, &b),
        Some(id) => one_party(&a, &b, id),
    }
}

/// The inputs of all parties, checked against the circuit's widths.
fn all_inputs(a: &GmwArgs, b: &Bristol) -> Result<Vec<Vec<bool>>, Failure> {
    if a.inputs.len() != b.input_widths.len() {
        return Err(bad_input(format!(
            "the circuit takes {} input value(s) ({} bits), --input gave {}",
            b.input_widths.len(),
            b.input_widths.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            a.inputs.len()
        )));
    }
    let mut out: Vec<Vec<bool>> = a
        .inputs
        .iter()
        .zip(&b.input_widths)
        .enumerate()
        .map(|(k, (v, &w))| value(v, w, &format!("input {k}")))
        .collect::<Result<_, _>>()?;
    out.resize(a.parties, Vec::new());
    Ok(out)
}

fn print_outputs(b: &Bristol, bits: &[bool]) {
    let mut at = 0;
    for (k, &w) in b.output_widths.iter().enumerate() {
        println!("output {k}: {}", bits_to_hex(&bits[at..at + w]));
        at += w;
    }
}

fn local(a: &GmwArgs, b: &Bristol) -> Result<(), Failure> {
    let backend = match a.backend.as_str() {
        "tcp" => Backend::Tcp,
        "memory" => Backend::Memory,
        other => return Err(bad_input(format!("--backend {other}: use tcp or memory"))),
    };
    let inputs = all_inputs(a, b)?;
    let want = b.circuit.eval(&inputs).map_err(bad_input)?;
    let c = &b.circuit;
    let started = Instant::now();
    let got = run(a.parties, backend, NetConfig::default(), |p| {
        let mut pre = preprocess(p, cost(c).max_ots())?;
        let out = evaluate(p, c, &mut pre, &inputs[p.id()])?;
        Ok((out, p.stats()))
    })
    .map_err(|e| failed(format!("the parties failed: {e}")))?;
    let seconds = started.elapsed().as_secs_f64();
    print_outputs(b, &got[0].0);
    for (i, (_, s)) in got.iter().enumerate() {
        eprintln!("party {i}: sent {} bytes in {} rounds", s.bytes_sent, s.rounds);
    }
    eprintln!("{} parties as threads over {backend}: {seconds:.3} s (set-up, OT extension and evaluation)", a.parties);
    if got.iter().any(|(out, _)| *out != want) {
        return Err(failed("the secure outputs differ from the plaintext evaluation"));
    }
    eprintln!("every party's outputs equal the plaintext evaluation");
    Ok(())
}

fn one_party(a: &GmwArgs, b: &Bristol, id: usize) -> Result<(), Failure> {
    if id >= a.parties {
        return Err(bad_input(format!("--party {id}: the parties are 0 to {}", a.parties - 1)));
    }
    let width = b.input_widths.get(id).copied();
    let input = match (width, a.inputs.as_slice()) {
        (Some(w), [v]) => value(v, w, &format!("party {id}'s input"))?,
        (None, []) => Vec::new(),
        (Some(w), _) => return Err(bad_input(format!("party {id} gives input value {id} ({w} bits): one --input"))),
        (None, _) => return Err(bad_input(format!("the circuit has no input for party {id}: no --input"))),
    };
    let mut p = a.net.connect(id, a.parties)?;
    let run = |p: &mut Party| -> Result<Vec<bool>, argus_mpc::MpcError> {
        let mut pre = preprocess(p, cost(&b.circuit).max_ots())?;
        evaluate(p, &b.circuit, &mut pre, &input)
    };
    let started = Instant::now();
    let out = run(&mut p).map_err(|e| failed(format!("party {id}: {e}")))?;
    print_outputs(b, &out);
    let s = p.stats();
    eprintln!(
        "party {id}: {:.3} s, sent {} bytes in {} rounds",
        started.elapsed().as_secs_f64(),
        s.bytes_sent,
        s.rounds
    );
    Ok(())
}
