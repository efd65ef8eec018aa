//! `argus relu`: ReLU or a comparison with zero (paper 002) applied to a file of fixed-point
//! numbers by three parties in the Shamir setting or two in the FT setting (SPDZ-style MACs,
//! garbled comparisons, online or garbled ahead), the results written out and checked against
//! the plaintext twin.
//!
//! Every input problem (flags, the file, a value outside the representable range — named by its
//! line) is found before any party starts and exits with status 2; a failure during the run, or
//! a result that disagrees with the twin, exits with status 1. The parties are threads of this
//! process (`--backend`), or with `--party I --addrs A,B,C --pki DIR` this process is party I
//! alone over TCP with mutual TLS: party 0 reads the file, shares its values and learns the
//! results (in FT both parties learn them: the MAC check runs on the opened values); it sends
//! the others the count and the plan first.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use argus_math::{Fp, Ring};
use argus_mpc::inq::ft::{FtAbb, Garbling};
use argus_mpc::inq::rabbit::{self, RabbitMask};
use argus_mpc::inq::shamir::ShamirAbb;
use argus_mpc::inq::{fixed, ltz, one_minus, rabbit_conv, relu, reveal, Abb, Bitwise, Circuit, Mask};
use argus_mpc::local::{self, Backend};
use argus_mpc::shamir::{self, Shamir};
use argus_mpc::{MpcError, Party};
use argus_net::NetConfig;
use clap::{Args, ValueEnum};

use crate::failure::{bad_input, failed, Failure};
use crate::one_party::OnePartyArgs;

/// Arguments of `argus relu`.
#[derive(Args, Debug)]
pub struct ReluArgs {
    /// The numbers: one decimal number per line (blank lines and lines starting with `#` are
    /// skipped). With --party: party 0 only.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the results here, one per line (default: standard output).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// What to compute (with --party: party 0's choice, and of the flags below --protocol,
    /// --circuit and --bits, holds for all): relu (max(x, 0)), ltz (`[x < 0]` as 0/1) or lteqz (`[x ≤ 0]` as 0/1).
    #[arg(long, value_enum, default_value_t = Op::Relu)]
    op: Op,
    /// The setting: shamir (3 parties, honest majority, Shamir shares), ft (2 parties, dishonest
    /// majority: SPDZ-style MACs checked before the results are revealed, comparisons garbled
    /// online) or ft-og (ft with the garbling done before the inputs are known). With --party,
    /// every party passes the same.
    #[arg(long, value_enum, default_value_t = Setting::Shamir)]
    setting: Setting,
    /// The comparison protocol: cons-ltz (paper 002, Protocol 5), lsss-ltz (Catrina and de
    /// Hoogh on F_q bits), rabbit-slack (Protocol 3; with --op lteqz only, or relu on it) or
    /// rabbit-conv (Rabbit's ReLU protocol: a conversion to bits, the top bit).
    #[arg(long, value_enum, default_value_t = Protocol::ConsLtz)]
    protocol: Protocol,
    /// The bitwise comparison's circuit: and-not (log depth) or and-xor (one layer per bit).
    #[arg(long, value_enum, default_value_t = CircuitArg::AndNot)]
    circuit: CircuitArg,
    /// Fixed-point precision f: numbers are their mantissas round(x·2^f).
    #[arg(long, default_value_t = 16)]
    precision: u32,
    /// Bits of the signed mantissas (the paper's 40).
    #[arg(long, default_value_t = fixed::MANTISSA_BITS)]
    bits: u32,
    /// Transport between the local parties: tcp (loopback with mutual TLS, certificates
    /// made at run time) or memory.
    #[arg(long, default_value = "tcp")]
    backend: String,
    #[command(flatten)]
    net: OnePartyArgs,
}

/// `--op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Op {
    Relu,
    Ltz,
    Lteqz,
}

/// `--protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Protocol {
    ConsLtz,
    LsssLtz,
    RabbitSlack,
    RabbitConv,
}

/// `--setting`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Setting {
    Shamir,
    Ft,
    FtOg,
}

impl Setting {
    fn parties(self) -> usize {
        match self {
            Setting::Shamir => 3,
            Setting::Ft | Setting::FtOg => 2,
        }
    }
}

/// `--circuit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CircuitArg {
    AndNot,
    AndXor,
}

/// Statistical slack of the masks.
const KAPPA: u32 = 40;

/// Runs `argus relu`; prints `error: ...` on stderr and returns the exit status.
pub fn run_cmd(a: ReluArgs) -> ExitCode {
    crate::failure::exit(execute(a))
}

/// The checked request: mantissas and how to compute on them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plan {
    op: Op,
    protocol: Protocol,
    circuit: Circuit,
    bits: u32,
    setting: Setting,
}

impl Plan {
    /// Five bytes: op, protocol, circuit, bits, setting.
    fn to_bytes(self) -> [u8; 5] {
        [
            self.op as u8,
            self.protocol as u8,
            u8::from(self.circuit == Circuit::AndXor),
            self.bits as u8,
            self.setting as u8,
        ]
    }

    fn from_bytes(b: &[u8]) -> Option<Plan> {
        let [op, protocol, circuit, bits, setting] = *b else { return None };
        let op = [Op::Relu, Op::Ltz, Op::Lteqz].get(usize::from(op)).copied()?;
        let protocol = [Protocol::ConsLtz, Protocol::LsssLtz, Protocol::RabbitSlack, Protocol::RabbitConv]
            .get(usize::from(protocol))
            .copied()?;
        let circuit = [Circuit::AndNot, Circuit::AndXor].get(usize::from(circuit)).copied()?;
        let setting = [Setting::Shamir, Setting::Ft, Setting::FtOg].get(usize::from(setting)).copied()?;
        argus_mpc::inq::check_width(&Fp::p128(), u32::from(bits), KAPPA).ok()?;
        Some(Plan { op, protocol, circuit, bits: u32::from(bits), setting })
    }
}

fn execute(a: ReluArgs) -> Result<(), Failure> {
    let field = Fp::p128();
    argus_mpc::inq::check_width(&field, a.bits, KAPPA).map_err(|e| bad_input(format!("--bits {}: {e}", a.bits)))?;
    if a.precision >= a.bits {
        return Err(bad_input(format!("--precision {} leaves no integer bits of --bits {}", a.precision, a.bits)));
    }
    if a.protocol == Protocol::RabbitSlack && a.op == Op::Ltz {
        return Err(bad_input("--protocol rabbit-slack computes [x ≤ 0]: use --op lteqz or relu"));
    }
    let circuit = match a.circuit {
        CircuitArg::AndNot => Circuit::AndNot,
        CircuitArg::AndXor => Circuit::AndXor,
    };
    let plan = Plan { op: a.op, protocol: a.protocol, circuit, bits: a.bits, setting: a.setting };
    let parties = a.setting.parties();
    match a.net.party {
        Some(id) if id != 0 => {
            let mut p = a.net.connect(id, parties)?;
            party(&mut p, plan, None).map_err(|e| failed(format!("party {id}: {e}")))?;
            eprintln!("party {id}: done");
            Ok(())
        }
        party0 => {
            let values = read(&a)?;
            let lowest = -(1i128 << (a.bits - 1));
            if a.op == Op::Lteqz && a.protocol != Protocol::RabbitSlack && values.contains(&lowest) {
                return Err(bad_input(format!(
                    "--op lteqz by {:?} computes [x − 1 < 0]: the smallest mantissa −2^{} has no x − 1 (use --protocol rabbit-slack or more --bits)",
                    a.protocol,
                    a.bits - 1
                )));
            }
            let started = Instant::now();
            let got = match party0 {
                Some(_) => {
                    let mut p = a.net.connect(0, parties)?;
                    party(&mut p, plan, Some(&values)).map_err(|e| failed(format!("party 0: {e}")))?
                }
                None => {
                    let backend = match a.backend.as_str() {
                        "tcp" => Backend::Tcp,
                        "memory" => Backend::Memory,
                        other => return Err(bad_input(format!("--backend {other}: use tcp or memory"))),
                    };
                    let out = local::run(parties, backend, NetConfig::default(), |p| {
                        party(p, plan, (p.id() == 0).then_some(&values[..]))
                    })
                    .map_err(|e| failed(e.to_string()))?;
                    out.into_iter().next().expect("party 0")
                }
            };
            eprintln!("{} values in {:.3} s", values.len(), started.elapsed().as_secs_f64());
            report(&a, plan, &values, &got)
        }
    }
}

/// The file's mantissas, each checked against the range (an error names its line).
fn read(a: &ReluArgs) -> Result<Vec<i128>, Failure> {
    let Some(path) = &a.input else {
        return Err(bad_input("--input FILE is required: the numbers, one per line"));
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let mut values = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let x: f64 = line
            .parse()
            .map_err(|_| bad_input(format!("{} line {}: {line:?} is not a number", path.display(), i + 1)))?;
        let v = fixed::encode(x, a.precision, a.bits)
            .map_err(|e| bad_input(format!("{} line {}: {e}", path.display(), i + 1)))?;
        values.push(v);
    }
    if values.is_empty() {
        return Err(bad_input(format!("{}: no numbers", path.display())));
    }
    Ok(values)
}

/// One party: party 0 sends the count and the plan and shares its values, every party makes
/// the masks and runs the protocol, and party 0 learns the results (signed mantissas or 0/1).
fn party(p: &mut Party, plan: Plan, values: Option<&[i128]>) -> Result<Vec<i128>, MpcError> {
    let field = Fp::p128();
    // the header from party 0: the count and the plan, which the others take over
    let (n, plan) = if p.id() == 0 {
        let n = values.map_or(0, <[i128]>::len);
        let mut header = (n as u64).to_le_bytes().to_vec();
        header.extend(plan.to_bytes());
        for peer in 1..p.n() {
            p.net().send(peer, header.clone())?;
        }
        (n, plan)
    } else {
        let got = p.net().recv(0)?;
        let bad = || MpcError::InvalidParameter("party 0 sent a malformed header".into());
        let count: [u8; 8] = got.get(..8).and_then(|b| b.try_into().ok()).ok_or_else(bad)?;
        let theirs = Plan::from_bytes(&got[8..]).ok_or_else(bad)?;
        if theirs.setting != plan.setting {
            return Err(MpcError::InvalidParameter(format!(
                "party 0 runs --setting {:?}, this party {:?}",
                theirs.setting, plan.setting
            )));
        }
        (u64::from_le_bytes(count) as usize, theirs)
    };
    let embedded: Option<Vec<u128>> = values.map(|v| v.iter().map(|&x| fixed::embed(&field, x)).collect());
    let out = match plan.setting {
        Setting::Shamir => {
            let x: Shamir<Fp> = shamir::input(p, &field, 0, embedded.as_deref(), n)?;
            let mut abb = ShamirAbb::new(p, field)?;
            let y = compute(&mut abb, &x, plan, n)?;
            shamir::reveal_to(abb.party(), &y, 0)?
        }
        Setting::Ft | Setting::FtOg => {
            let garbling = if plan.setting == Setting::Ft { Garbling::Online } else { Garbling::Offline };
            let mut abb = FtAbb::new(p, field, garbling)?;
            let x = abb.input(&embedded.unwrap_or_else(|| vec![0; n]))?;
            let y = compute(&mut abb, &x, plan, n)?;
            let v = reveal(&mut abb, &y)?;
            (abb.party().id() == 0).then_some(v)
        }
    };
    Ok(out.map(|v| v.into_iter().map(|e| fixed::signed(&field, e)).collect()).unwrap_or_default())
}

/// The masks, then the plan's protocol on `x` (`n` mantissas), in any setting.
fn compute<A: Abb>(abb: &mut A, x: &A::Arith, plan: Plan, n: usize) -> Result<A::Arith, MpcError> {
    let field = *abb.field();
    // [x ≤ 0] = [x − 1 < 0] for integers (x − 1 stays in range but at the bottom)
    let minus_one = |abb: &mut A| abb.add(x, &abb.constant(&vec![field.neg(1); n]));
    // ReLU from a sign: (1 − [x < 0])·x
    let times_x = |abb: &mut A, negative: &A::Arith| {
        let positive = one_minus(abb, negative)?;
        abb.mul(&positive, x)
    };
    let bitwise = match plan.protocol {
        Protocol::LsssLtz => Bitwise::Arithmetic(plan.circuit),
        _ => Bitwise::Binary(plan.circuit),
    };
    match plan.protocol {
        Protocol::RabbitSlack => {
            let mask = RabbitMask::new(abb, rabbit::Variant::Slack, n, plan.bits, KAPPA, plan.circuit)?;
            if plan.op == Op::Relu {
                abb.prepare_products(n)?;
            }
            let le = rabbit::lteqz(abb, x, &mask)?;
            match plan.op {
                Op::Relu => times_x(abb, &le),
                _ => Ok(le),
            }
        }
        Protocol::RabbitConv => {
            let mask = Mask::conversion(abb, n, plan.bits, KAPPA, plan.circuit)?;
            if plan.op == Op::Relu {
                abb.prepare_products(n)?;
            }
            match plan.op {
                Op::Relu => {
                    let lt = rabbit_conv(abb, x, &mask)?;
                    times_x(abb, &lt)
                }
                Op::Ltz => rabbit_conv(abb, x, &mask),
                Op::Lteqz => {
                    let y = minus_one(abb)?;
                    rabbit_conv(abb, &y, &mask)
                }
            }
        }
        Protocol::ConsLtz | Protocol::LsssLtz => match plan.op {
            Op::Relu => {
                let mask = Mask::for_relu(abb, n, plan.bits, KAPPA, bitwise)?;
                relu(abb, x, &mask)
            }
            Op::Ltz => {
                let mask = Mask::new(abb, n, plan.bits, plan.bits - 1, KAPPA, bitwise)?;
                ltz(abb, x, &mask)
            }
            Op::Lteqz => {
                let mask = Mask::new(abb, n, plan.bits, plan.bits - 1, KAPPA, bitwise)?;
                let y = minus_one(abb)?;
                ltz(abb, &y, &mask)
            }
        },
    }
}

/// Writes the results, checks them against the twin.
fn report(a: &ReluArgs, plan: Plan, values: &[i128], got: &[i128]) -> Result<(), Failure> {
    let want: Vec<i128> = values
        .iter()
        .map(|&v| match plan.op {
            Op::Relu => v.max(0),
            Op::Ltz => i128::from(v < 0),
            Op::Lteqz => i128::from(v <= 0),
        })
        .collect();
    let text: String = got
        .iter()
        .map(|&v| match plan.op {
            Op::Relu => format!("{}\n", fixed::decode(v, a.precision)),
            _ => format!("{v}\n"),
        })
        .collect();
    match &a.output {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| failed(format!("writing {}: {e}", path.display())))?;
            eprintln!("wrote {} results to {}", got.len(), path.display());
        }
        None => print!("{text}"),
    }
    let agree = got.iter().zip(&want).filter(|(a, b)| a == b).count();
    eprintln!("the secure results equal the plaintext twin's on {agree} of {} values", want.len());
    if agree != want.len() || got.len() != want.len() {
        return Err(failed("the secure results differ from the plaintext twin's"));
    }
    Ok(())
}
