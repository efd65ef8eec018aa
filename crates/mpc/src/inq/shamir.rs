//! The Shamir setting of paper 002: three parties, honest majority, F_q values as degree-1
//! Shamir shares ([`crate::shamir`]) and F_2 values as replicated bits ([`crate::rep3`]), whose
//! AND gates cost one round each layer.
//!
//! Randomness comes from the pairwise PRG streams of replicated sharing: a replicated value's
//! component `x_i` is drawn by parties `i` and `i + 1` from their common stream, so random bits
//! and bounded random integers cost nothing, and [`crate::shamir::from_rep3`] turns a replicated
//! F_q sharing into a Shamir one locally. A daBit's F_q side comes from its replicated bit by
//! bit injection ([`rep3::bit_inject`]: ABY3's 3-party OT, two rounds, four elements per bit and
//! no products).

use argus_math::{BitVec, Fp};
use rand_core::RngCore;

use super::{Abb, BoolCircuit};
use crate::error::{MpcError, Result};
use crate::gmw::Gate;
use crate::party::Party;
use crate::rep3::{self, Rep3, Rep3Bits};
use crate::shamir::{self, from_rep3, Degree, Shamir};

/// The black box of the Shamir setting over a session of three parties.
pub struct ShamirAbb<'p> {
    p: &'p mut Party,
    field: Fp,
}

impl<'p> ShamirAbb<'p> {
    /// The setting over `p`'s session (three parties) and F_q = `field`.
    pub fn new(p: &'p mut Party, field: Fp) -> Result<Self> {
        p.require("the Shamir setting of paper 002", 3)?;
        Ok(ShamirAbb { p, field })
    }

    /// The session.
    pub fn party(&mut self) -> &mut Party {
        self.p
    }
}

impl Abb for ShamirAbb<'_> {
    type Arith = Shamir<Fp>;
    type Bits = Rep3Bits;

    fn field(&self) -> &Fp {
        &self.field
    }
    fn stats(&self) -> argus_net::Stats {
        self.p.stats()
    }
    fn len(&self, x: &Shamir<Fp>) -> usize {
        x.len()
    }
    fn constant(&self, c: &[u128]) -> Shamir<Fp> {
        // the constant polynomial: every party's point is c
        Shamir::zeros(self.field, Degree::One, c.len()).add_public(c).expect("one length")
    }
    fn add(&self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        x.add(y)
    }
    fn sub(&self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        x.sub(y)
    }
    fn scale(&self, x: &Shamir<Fp>, c: u128) -> Shamir<Fp> {
        x.mul_scalar(c)
    }
    fn mul_public(&self, x: &Shamir<Fp>, c: &[u128]) -> Result<Shamir<Fp>> {
        x.mul_public(c)
    }
    fn slice(&self, x: &Shamir<Fp>, start: usize, n: usize) -> Result<Shamir<Fp>> {
        x.slice(start, n)
    }
    fn concat(&self, parts: &[&Shamir<Fp>]) -> Result<Shamir<Fp>> {
        Shamir::concat(parts)
    }
    fn mul(&mut self, x: &Shamir<Fp>, y: &Shamir<Fp>) -> Result<Shamir<Fp>> {
        shamir::mul(self.p, x, y)
    }
    fn open(&mut self, x: &Shamir<Fp>) -> Result<Vec<u128>> {
        shamir::reveal(self.p, x)
    }

    fn xor(&self, a: &Rep3Bits, b: &Rep3Bits) -> Result<Rep3Bits> {
        a.xor(b)
    }
    fn not(&self, a: &Rep3Bits) -> Rep3Bits {
        a.not(self.p.id())
    }
    fn xor_public(&self, a: &Rep3Bits, c: &BitVec) -> Result<Rep3Bits> {
        a.xor_public(self.p.id(), c)
    }
    fn slice_bits(&self, b: &Rep3Bits, start: usize, n: usize) -> Result<Rep3Bits> {
        b.slice(start, n)
    }
    fn concat_bits(&self, parts: &[&Rep3Bits]) -> Rep3Bits {
        Rep3Bits::concat(parts)
    }
    fn open_bits(&mut self, b: &Rep3Bits) -> Result<BitVec> {
        rep3::reveal_bits(self.p, b)
    }

    fn evaluate(&mut self, c: &BoolCircuit, public: &[BitVec], shared: &[Rep3Bits]) -> Result<Vec<Rep3Bits>> {
        layered(self.p, c, public, shared)
    }

    fn dabits(&mut self, n: usize) -> Result<(Shamir<Fp>, Rep3Bits)> {
        let bits = Rep3Bits::from_parts(BitVec::random(self.p.prg.next(), n), BitVec::random(self.p.prg.prev(), n))?;
        let q = rep3::bit_inject(self.p, &bits, &self.field)?;
        Ok((from_rep3(self.p.id(), &q)?, bits))
    }

    fn rand_int(&mut self, bits: u32, n: usize) -> Result<Shamir<Fp>> {
        let below = |prg: &mut argus_prg::Prg| -> Vec<u128> {
            (0..n)
                .map(|_| {
                    let x = u128::from(prg.next_u64()) << 64 | u128::from(prg.next_u64());
                    if bits >= 128 {
                        x
                    } else {
                        x & ((1 << bits) - 1)
                    }
                })
                .collect()
        };
        let a = below(self.p.prg.next());
        let b = below(self.p.prg.prev());
        from_rep3(self.p.id(), &Rep3::from_parts(self.field, a, b)?)
    }
}

/// A wire of [`layered`]: bits every party knows, or replicated shares.
enum Value {
    Public(BitVec),
    Shared(Rep3Bits),
}

/// Evaluates `c` on replicated bits by AND layers: gates whose inputs are ready run as soon as
/// they are (XOR, INV and AND with a public wire are local), and the ANDs of two shared wires
/// that are ready together make one round ([`rep3::and_many`]).
fn layered(p: &mut Party, c: &BoolCircuit, public: &[BitVec], shared: &[Rep3Bits]) -> Result<Vec<Rep3Bits>> {
    let me = p.id();
    let gates = c.gates();
    let mut wires: Vec<Option<Value>> = std::iter::repeat_with(|| None).take(c.wires()).collect();
    let (mut pi, mut si) = (public.iter(), shared.iter());
    let short = || MpcError::InvalidParameter("fewer input planes than the circuit has inputs".into());
    let mut n = None;
    for g in gates {
        if let Gate::Input { party, wire } = g {
            let v = if *party == 0 {
                Value::Public(pi.next().ok_or_else(short)?.clone())
            } else {
                Value::Shared(si.next().ok_or_else(short)?.clone())
            };
            let len = match &v {
                Value::Public(b) => b.len(),
                Value::Shared(b) => b.len(),
            };
            if *n.get_or_insert(len) != len {
                return Err(MpcError::InvalidParameter("input planes of different lengths".into()));
            }
            wires[*wire as usize] = Some(v);
        }
    }
    let n = n.unwrap_or(0);
    let mut done: Vec<bool> = gates.iter().map(|g| matches!(g, Gate::Input { .. } | Gate::Output { .. })).collect();
    loop {
        // the ANDs of two shared wires ready now: (gate, input wires, output wire)
        let mut pending: Vec<(usize, u32, u32, u32)> = Vec::new();
        for (i, g) in gates.iter().enumerate() {
            if done[i] {
                continue;
            }
            let get = |w: &u32| wires[*w as usize].as_ref();
            let value = match g {
                Gate::Xor { a, b, .. } => match (get(a), get(b)) {
                    (Some(Value::Public(x)), Some(Value::Public(y))) => Some(Value::Public(x.xor(y)?)),
                    (Some(Value::Public(x)), Some(Value::Shared(y)))
                    | (Some(Value::Shared(y)), Some(Value::Public(x))) => Some(Value::Shared(y.xor_public(me, x)?)),
                    (Some(Value::Shared(x)), Some(Value::Shared(y))) => Some(Value::Shared(x.xor(y)?)),
                    _ => None,
                },
                Gate::Inv { a, .. } => match get(a) {
                    Some(Value::Public(x)) => Some(Value::Public(x.not())),
                    Some(Value::Shared(x)) => Some(Value::Shared(x.not(me))),
                    None => None,
                },
                Gate::And { a, b, out } => match (get(a), get(b)) {
                    (Some(Value::Public(x)), Some(Value::Public(y))) => Some(Value::Public(x.and(y)?)),
                    (Some(Value::Public(x)), Some(Value::Shared(y)))
                    | (Some(Value::Shared(y)), Some(Value::Public(x))) => Some(Value::Shared(y.and_public(x)?)),
                    (Some(Value::Shared(_)), Some(Value::Shared(_))) => {
                        pending.push((i, *a, *b, *out));
                        None
                    }
                    _ => None,
                },
                Gate::Vs { .. } => return Err(MpcError::InvalidParameter("VS gates in a comparison circuit".into())),
                Gate::Input { .. } | Gate::Output { .. } => None,
            };
            if let Some(v) = value {
                let out = match g {
                    Gate::Xor { out, .. } | Gate::Inv { out, .. } | Gate::And { out, .. } => *out,
                    _ => unreachable!("only these compute"),
                };
                wires[out as usize] = Some(v);
                done[i] = true;
            }
        }
        if pending.is_empty() {
            break;
        }
        let shared = |w: u32| match &wires[w as usize] {
            Some(Value::Shared(b)) => b,
            _ => unreachable!("queued as an AND of two shared wires"),
        };
        let pairs: Vec<(&Rep3Bits, &Rep3Bits)> = pending.iter().map(|&(_, a, b, _)| (shared(a), shared(b))).collect();
        let got = rep3::and_many(p, &pairs)?;
        for (&(i, _, _, out), v) in pending.iter().zip(got) {
            wires[out as usize] = Some(Value::Shared(v));
            done[i] = true;
        }
    }
    gates
        .iter()
        .filter_map(|g| if let Gate::Output { wire } = g { Some(*wire) } else { None })
        .map(|w| match &wires[w as usize] {
            Some(Value::Shared(b)) => Ok(b.clone()),
            Some(Value::Public(b)) => Rep3Bits::zeros(n).xor_public(me, b),
            None => Err(MpcError::InvalidParameter(format!("output wire {w} never set"))),
        })
        .collect()
}
