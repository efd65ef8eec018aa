//! Bristol Fashion circuits (the "MPC circuits" format of Archer, Bogdanov, Lindell, Smart et
//! al.): a header of gate and wire counts, the input values' widths, the output values' widths,
//! then one gate per line, `in out wires… NAME`. Input value `k` is given by party `k`; its bits
//! are wires `off_k .. off_k + n_k`, and the outputs are the last wires of the circuit.
//!
//! Gates: XOR, AND, INV, EQW (a copy: an alias, no gate), MAND (several ANDs). A malformed file
//! is refused with the line that is wrong, before any party starts. [`write()`] goes the other way.

use std::fmt;

use super::circuit::{Circuit, Gate, Wire};

/// A Bristol file that cannot be read: the line (1-based) and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BristolError {
    /// 1-based line number in the file.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for BristolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for BristolError {}

/// A parsed Bristol circuit: the circuit, and the widths of its input and output values.
#[derive(Clone, Debug)]
pub struct Bristol {
    /// The circuit; input value `k` is party `k`'s input.
    pub circuit: Circuit,
    /// Bits of each input value (= each party's input).
    pub input_widths: Vec<usize>,
    /// Bits of each output value.
    pub output_widths: Vec<usize>,
}

/// Parses a Bristol Fashion circuit with `parties` parties (at least the number of input values;
/// parties beyond them give no input).
pub fn parse(text: &str, parties: usize) -> Result<Bristol, BristolError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let mut header = |what: &str| -> Result<(usize, Vec<usize>), BristolError> {
        let (no, l) =
            lines.next().ok_or(BristolError { line: 0, reason: format!("the file ends before its {what}") })?;
        let nums = numbers(l, no)?;
        Ok((no, nums))
    };
    let (no, counts) = header("gate and wire counts")?;
    let [gates, wires] = counts[..] else {
        return Err(BristolError {
            line: no,
            reason: format!("expected `gates wires`, found {} numbers", counts.len()),
        });
    };
    let (no_in, ins) = header("input widths")?;
    let input_widths = widths(&ins, no_in, "input")?;
    let (no_out, outs) = header("output widths")?;
    let output_widths = widths(&outs, no_out, "output")?;
    if input_widths.len() > parties {
        return Err(BristolError {
            line: no_in,
            reason: format!("{} input values, but only {parties} parties to give them", input_widths.len()),
        });
    }
    let n_in: usize = input_widths.iter().sum();
    let n_out: usize = output_widths.iter().sum();
    if n_in + n_out > wires {
        return Err(BristolError {
            line: no_out,
            reason: format!("{n_in} input and {n_out} output wires in {wires} wires"),
        });
    }
    if wires > Wire::MAX as usize {
        return Err(BristolError { line: no, reason: format!("{wires} wires is more than this importer takes") });
    }
    // EQW makes a wire another's alias; `alias[w]` is the wire that holds w's value.
    let mut alias: Vec<Wire> = (0..wires as Wire).collect();
    let mut out: Vec<Gate> = Vec::with_capacity(gates + n_in + n_out);
    let mut gate_line: Vec<usize> = Vec::with_capacity(gates + n_in + n_out);
    let mut w = 0 as Wire;
    for (party, &n) in input_widths.iter().enumerate() {
        for _ in 0..n {
            out.push(Gate::Input { party, wire: w });
            gate_line.push(no_in);
            w += 1;
        }
    }
    let mut seen = 0;
    for (no, l) in lines.by_ref() {
        if seen == gates {
            return Err(BristolError { line: no, reason: format!("more gates than the header's {gates}") });
        }
        seen += 1;
        let err = |reason: String| BristolError { line: no, reason };
        let mut fields: Vec<&str> = l.split_whitespace().collect();
        let name = fields.pop().unwrap_or_default();
        let nums = fields
            .iter()
            .map(|f| f.parse::<usize>().map_err(|_| err(format!("`{f}` is not a number"))))
            .collect::<Result<Vec<_>, _>>()?;
        let [n_in, n_out, ref rest @ ..] = nums[..] else {
            return Err(err("a gate needs its input and output counts".into()));
        };
        if rest.len() != n_in + n_out {
            return Err(err(format!("{n_in} inputs and {n_out} outputs announced, {} wires given", rest.len())));
        }
        let arity = |i: usize, o: usize| {
            if (n_in, n_out) == (i, o) {
                Ok(())
            } else {
                Err(err(format!("{name} takes {i} inputs and {o} outputs, not {n_in} and {n_out}")))
            }
        };
        let wire = |x: usize| -> Result<Wire, BristolError> {
            if x < wires {
                Ok(x as Wire)
            } else {
                Err(err(format!("wire {x} is beyond the header's {wires} wires")))
            }
        };
        let (ins, outs) = rest.split_at(n_in);
        let ins: Vec<Wire> = ins.iter().map(|&x| wire(x).map(|x| alias[x as usize])).collect::<Result<_, _>>()?;
        let outs: Vec<Wire> = outs.iter().map(|&x| wire(x)).collect::<Result<_, _>>()?;
        match name {
            "XOR" => {
                arity(2, 1)?;
                out.push(Gate::Xor { a: ins[0], b: ins[1], out: outs[0] });
            }
            "AND" => {
                arity(2, 1)?;
                out.push(Gate::And { a: ins[0], b: ins[1], out: outs[0] });
            }
            "INV" | "NOT" => {
                arity(1, 1)?;
                out.push(Gate::Inv { a: ins[0], out: outs[0] });
            }
            "EQW" => {
                arity(1, 1)?;
                alias[outs[0] as usize] = ins[0];
                continue;
            }
            "MAND" => {
                if n_in != 2 * n_out || n_out == 0 {
                    return Err(err(format!("MAND takes 2k inputs and k outputs, not {n_in} and {n_out}")));
                }
                for k in 0..n_out {
                    out.push(Gate::And { a: ins[k], b: ins[n_out + k], out: outs[k] });
                    gate_line.push(no);
                }
                continue;
            }
            "EQ" => return Err(err("EQ (a constant) gates are not supported".into())),
            "" => return Err(err("a gate line without a gate name".into())),
            other => return Err(err(format!("unknown gate `{other}`"))),
        }
        gate_line.push(no);
    }
    if seen != gates {
        return Err(BristolError {
            line: text.lines().count(),
            reason: format!("{seen} gates, the header says {gates}"),
        });
    }
    for &wire in &alias[wires - n_out..] {
        out.push(Gate::Output { wire });
        gate_line.push(no_out);
    }
    let circuit = Circuit::new(parties, wires, out).map_err(|e| BristolError {
        line: gate_line.get(e.gate).copied().unwrap_or(no),
        reason: e.reason.replace("set a second time", "set a second time (or an input wire is set)"),
    })?;
    Ok(Bristol { circuit, input_widths, output_widths })
}

fn numbers(l: &str, no: usize) -> Result<Vec<usize>, BristolError> {
    l.split_whitespace()
        .map(|f| f.parse::<usize>().map_err(|_| BristolError { line: no, reason: format!("`{f}` is not a number") }))
        .collect()
}

/// `count w_1 … w_count`: the widths.
fn widths(nums: &[usize], no: usize, what: &str) -> Result<Vec<usize>, BristolError> {
    match nums.split_first() {
        Some((&k, rest)) if rest.len() == k => Ok(rest.to_vec()),
        _ => Err(BristolError {
            line: no,
            reason: format!("expected the number of {what} values and then each one's width"),
        }),
    }
}

/// A value written as hexadecimal (most significant digit first, as the known-answer tests
/// print them) to its `width` wire bits, least significant first: Bristol's order. Errors on an
/// empty value, a digit that is not hex, or a value longer than `width` bits.
pub fn hex_to_bits(hex: &str, width: usize) -> Result<Vec<bool>, String> {
    let hex = hex.trim().trim_start_matches("0x");
    if hex.is_empty() {
        return Err("an empty value (write 0 for zero)".into());
    }
    let mut bits = Vec::with_capacity(hex.len() * 4);
    for c in hex.chars().rev() {
        let d = c.to_digit(16).ok_or_else(|| format!("`{c}` is not a hex digit"))?;
        bits.extend((0..4).map(|k| d >> k & 1 == 1));
    }
    if let Some(extra) = bits.get(width..) {
        if extra.iter().any(|&b| b) {
            return Err(format!("{} hex digits is more than {width} bits", hex.len()));
        }
    }
    bits.resize(width, false);
    Ok(bits)
}

/// Wire bits (least significant first) as hexadecimal, most significant digit first.
pub fn bits_to_hex(bits: &[bool]) -> String {
    bits.chunks(4)
        .rev()
        .map(|c| {
            let d = c.iter().enumerate().fold(0u32, |acc, (k, &b)| acc | u32::from(b) << k);
            char::from_digit(d, 16).expect("a hex digit")
        })
        .collect()
}

/// `c` in Bristol Fashion: party `k`'s inputs are input value `k` (parties after the last one
/// with inputs are left out), the outputs one value, copied by EQW onto the last wires. A VS
/// gate becomes its ANDs. [`parse`] reads it back as the same function.
pub fn write(c: &Circuit) -> String {
    let mut id: Vec<Wire> = vec![Wire::MAX; c.wires()];
    let mut next: Wire = 0;
    let values = c.inputs().iter().rposition(|&n| n > 0).map_or(0, |q| q + 1);
    // party q's inputs take the wires after those of parties 0..q, in gate order
    let mut at: Vec<Wire> =
        c.inputs().iter().scan(0, |sum, &n| Some(std::mem::replace(sum, *sum + n as Wire))).collect();
    for g in c.gates() {
        if let Gate::Input { party, wire } = g {
            id[*wire as usize] = at[*party];
            at[*party] += 1;
        }
    }
    next += c.inputs().iter().sum::<usize>() as Wire;
    let mut lines = Vec::new();
    let mut fresh = |w: Wire, id: &mut Vec<Wire>| {
        id[w as usize] = next;
        next += 1;
        next - 1
    };
    let mut outputs = Vec::new();
    for g in c.gates() {
        match g {
            Gate::Input { .. } => {}
            Gate::Xor { a, b, out } => {
                let (a, b) = (id[*a as usize], id[*b as usize]);
                lines.push(format!("2 1 {a} {b} {} XOR", fresh(*out, &mut id)));
            }
            Gate::And { a, b, out } => {
                let (a, b) = (id[*a as usize], id[*b as usize]);
                lines.push(format!("2 1 {a} {b} {} AND", fresh(*out, &mut id)));
            }
            Gate::Inv { a, out } => {
                let a = id[*a as usize];
                lines.push(format!("1 1 {a} {} INV", fresh(*out, &mut id)));
            }
            Gate::Vs { scalar, vector, out } => {
                let s = id[*scalar as usize];
                for (v, o) in vector.iter().zip(out) {
                    let v = id[*v as usize];
                    lines.push(format!("2 1 {s} {v} {} AND", fresh(*o, &mut id)));
                }
            }
            Gate::Output { wire } => outputs.push(id[*wire as usize]),
        }
    }
    for &w in &outputs {
        lines.push(format!("1 1 {w} {next} EQW"));
        next += 1;
    }
    let widths: Vec<String> = c.inputs()[..values].iter().map(ToString::to_string).collect();
    let outs = if outputs.is_empty() { "0".to_string() } else { format!("1 {}", outputs.len()) };
    format!("{} {next}\n{} {}\n{outs}\n\n{}\n", lines.len(), values, widths.join(" "), lines.join("\n"))
}
