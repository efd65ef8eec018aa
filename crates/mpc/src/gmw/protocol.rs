//! p-party GMW with VS gates (paper 003, Figs. 3 and 4), semi-honest, up to p − 1 corruptions.
//!
//! Wires carry XOR shares. INPUT: the owner's share is its bit XOR a pad drawn from the stream it
//! shares with each other party, who take that pad as their share (no message). XOR and INV are
//! local. An AND or VS gate `a·(x^1..x^n)` expands by Eq. (1) into `⊕_i ⊕_j a_i x_j`: the terms
//! `a_i x_i` are local and each cross term `a_i x_j` (i ≠ j) is one 1-out-of-2 OT of n-bit
//! strings, receiver `i`, sender `j`: `p(p − 1)` OTs per gate whatever n.
//!
//! The OTs are random OTs made before the circuit's inputs are known ([`preprocess`], IKNP), then
//! derandomised Beaver-style: a random OT `(k0, k1)` / `(c, k_c)` is a triple `c·R = G(k0) ⊕
//! G(k_c)` with `R = G(k0) ⊕ G(k1)` (`G` stretches a key to n bits). The receiver sends
//! `e = a_i ⊕ c` (1 bit) and the sender `F = x_j ⊕ R` (n bits), both at once; then
//! `a_i x_j = [a_i·F ⊕ G(k_c)] ⊕ [G(k_e)]`, the receiver's and the sender's share. One round per
//! layer of AND/VS gates, `1 + n` bits per gate and ordered pair; plus one round for the outputs.

use argus_math::BitVec;
use argus_ot::{iknp, Block};
use argus_prg::Prg;
use rand_core::RngCore;

use super::circuit::{Circuit, Gate, Wire};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Random OTs with every other party, made before the circuit is evaluated, and how many of
/// them are used. Each OT is used once: an evaluation consumes them from the front.
pub struct Preprocessed {
    peers: Vec<Option<PeerOts>>,
    used: usize,
    len: usize,
}

/// The random OTs with one peer, in both directions.
struct PeerOts {
    /// This party as the sender: the key pairs.
    send: Vec<[Block; 2]>,
    /// This party as the receiver: its random choices and the keys it got.
    choices: BitVec,
    recv: Vec<Block>,
}

impl Preprocessed {
    /// OTs made per ordered pair.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether none were made.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// OTs used so far per ordered pair (AND and VS gates evaluated).
    pub fn used(&self) -> usize {
        self.used
    }
}

/// Makes `m` random OTs in each direction with every other party (IKNP: 128 base OTs per pair
/// and direction, then κ = 128 bits per OT from the extension's receiver). Pairs take turns in
/// one global order, so no two parties wait on each other.
pub fn preprocess(p: &mut Party, m: usize) -> Result<Preprocessed> {
    let (me, n) = (p.id(), p.n());
    let mut rng = Prg::new(&p.prg.own().fork());
    let mut peers: Vec<Option<PeerOts>> = (0..n).map(|_| None).collect();
    for lo in 0..n {
        for hi in lo + 1..n {
            if me != lo && me != hi {
                continue;
            }
            let peer = if me == lo { hi } else { lo };
            let choices = BitVec::random(&mut rng, m);
            let bools = choices.to_bools();
            let net = p.net();
            // lo sends first, then hi
            let (send, recv) = if me == lo {
                let mut s = iknp::Sender::setup(net, peer, &mut rng)?;
                let send = s.random(net, peer, m)?;
                let mut r = iknp::Receiver::setup(net, peer, &mut rng)?;
                (send, r.random(net, peer, &bools)?)
            } else {
                let mut r = iknp::Receiver::setup(net, peer, &mut rng)?;
                let recv = r.random(net, peer, &bools)?;
                let mut s = iknp::Sender::setup(net, peer, &mut rng)?;
                (s.random(net, peer, m)?, recv)
            };
            peers[peer] = Some(PeerOts { send, choices, recv });
        }
    }
    Ok(Preprocessed { peers, used: 0, len: m })
}

/// `n` bits of `G(key)` into `out` (whole words; bits past `n` are garbage): the key itself
/// for `n ≤ 128` (it is already a hash output), else the engine's PRG keyed by it.
fn stretch(key: Block, n: usize, out: &mut Vec<u64>) {
    out.clear();
    if n <= 128 {
        out.extend([key as u64, (key >> 64) as u64]);
    } else {
        out.resize(n.div_ceil(64), 0);
        Prg::new(&argus_prg::Seed(key.to_le_bytes())).fill_bytes(bytemuck::cast_slice_mut(out));
    }
}

fn bit(words: &[u64], k: usize) -> u8 {
    (words[k / 64] >> (k % 64)) as u8 & 1
}

/// Bits appended LSB first into words.
#[derive(Default)]
struct BitWriter {
    words: Vec<u64>,
    len: usize,
}

impl BitWriter {
    fn push(&mut self, b: u8) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        *self.words.last_mut().expect("a word") |= u64::from(b & 1) << (self.len % 64);
        self.len += 1;
    }
    fn into_bytes(self) -> Vec<u8> {
        let mut out: Vec<u8> = bytemuck::cast_slice(&self.words).to_vec();
        out.truncate(self.len.div_ceil(8));
        out
    }
}

/// An AND or VS gate's scalar, vector and outputs.
fn parts(g: &Gate) -> (Wire, &[Wire], &[Wire]) {
    match g {
        Gate::And { a, b, out } => (*a, std::slice::from_ref(b), std::slice::from_ref(out)),
        Gate::Vs { scalar, vector, out } => (*scalar, vector, out),
        _ => unreachable!("only AND and VS gates are nonlinear"),
    }
}

/// Evaluates `c` with this party's `input` bits (as many as the circuit's INPUT gates of this
/// party), using OTs from `pre`; returns the outputs, revealed to every party.
pub fn evaluate(p: &mut Party, c: &Circuit, pre: &mut Preprocessed, input: &[bool]) -> Result<Vec<bool>> {
    let (me, n) = (p.id(), p.n());
    if c.parties() != n {
        return Err(MpcError::WrongPartyCount { scheme: "this circuit", expected: c.parties(), got: n });
    }
    if input.len() != c.inputs()[me] {
        return Err(MpcError::InvalidParameter(format!(
            "party {me} gave {} input bits, the circuit takes {}",
            input.len(),
            c.inputs()[me]
        )));
    }
    let counts = c.counts();
    let need = counts.and + counts.vs;
    if pre.len - pre.used < need {
        return Err(MpcError::InvalidParameter(format!(
            "the circuit needs {need} OTs per pair, {} are left",
            pre.len - pre.used
        )));
    }
    // INPUT: pads from the pairwise streams, drawn owner by owner in party order on both sides.
    let mut pads: Vec<BitVec> = Vec::with_capacity(n);
    for owner in 0..n {
        let bits = c.inputs()[owner];
        let mut mine = if owner == me { BitVec::from_bools(input) } else { BitVec::zeros(bits) };
        for peer in (0..n).filter(|&q| q != me) {
            if owner != me && owner != peer {
                continue;
            }
            let stream = p.prg.with(peer).expect("a stream with every peer");
            mine.xor_assign(&BitVec::random(stream, bits))?;
        }
        pads.push(mine);
    }
    let mut next_input = vec![0usize; n];
    let mut w = vec![0u8; c.wires()];
    // revealed at the end, in gate order (layers may visit them in another)
    let outputs: Vec<Wire> =
        c.gates().iter().filter_map(|g| if let Gate::Output { wire } = g { Some(*wire) } else { None }).collect();
    let (mut ka, mut kb) = (Vec::new(), Vec::new());
    for layer in c.layers() {
        for &i in &layer.local {
            match &c.gates()[i] {
                Gate::Input { party, wire } => {
                    w[*wire as usize] = u8::from(pads[*party].get(next_input[*party]));
                    next_input[*party] += 1;
                }
                Gate::Xor { a, b, out } => w[*out as usize] = w[*a as usize] ^ w[*b as usize],
                Gate::Inv { a, out } => w[*out as usize] = w[*a as usize] ^ u8::from(me == 0),
                Gate::Output { .. } => {}
                Gate::And { .. } | Gate::Vs { .. } => unreachable!("layers keep AND and VS apart"),
            }
        }
        if layer.nonlinear.is_empty() {
            continue;
        }
        let gates: Vec<(Wire, &[Wire], &[Wire])> = layer.nonlinear.iter().map(|&i| parts(&c.gates()[i])).collect();
        let first = pre.used;
        // To each peer: e = a ⊕ c for every gate (this party receiving), then F = x ⊕ R.
        for peer in (0..n).filter(|&q| q != me) {
            let ots = pre.peers[peer].as_ref().expect("OTs with every peer");
            let mut msg = BitWriter::default();
            for (t, &(a, _, _)) in gates.iter().enumerate() {
                msg.push(w[a as usize] ^ u8::from(ots.choices.get(first + t)));
            }
            for (t, &(_, x, _)) in gates.iter().enumerate() {
                let [k0, k1] = ots.send[first + t];
                stretch(k0, x.len(), &mut ka);
                stretch(k1, x.len(), &mut kb);
                for (k, &xw) in x.iter().enumerate() {
                    msg.push(w[xw as usize] ^ bit(&ka, k) ^ bit(&kb, k));
                }
            }
            p.net().send(peer, msg.into_bytes())?;
        }
        // a_me·x_me, then each peer's two cross terms
        let mut z: Vec<u8> = gates
            .iter()
            .flat_map(|&(a, x, _)| x.iter().map(move |&xw| (a, xw)))
            .map(|(a, xw)| w[a as usize] & w[xw as usize])
            .collect();
        let elements = z.len();
        for peer in (0..n).filter(|&q| q != me) {
            let ots = pre.peers[peer].as_ref().expect("OTs with every peer");
            let got = p.net().recv(peer)?;
            let want = (gates.len() + elements).div_ceil(8);
            if got.len() != want {
                return Err(MpcError::Malformed { peer, reason: format!("{} bytes for a layer of {want}", got.len()) });
            }
            let got = BitVec::from_bytes(&got, gates.len() + elements)?;
            let mut at = gates.len();
            let mut zi = 0;
            for (t, &(a, x, _)) in gates.iter().enumerate() {
                // receiver part a·F ⊕ G(k_c); sender part G(k_e)
                stretch(ots.recv[first + t], x.len(), &mut ka);
                let e = got.get(t);
                stretch(ots.send[first + t][usize::from(e)], x.len(), &mut kb);
                let a = w[a as usize];
                for k in 0..x.len() {
                    z[zi] ^= (a & u8::from(got.get(at))) ^ bit(&ka, k) ^ bit(&kb, k);
                    at += 1;
                    zi += 1;
                }
            }
        }
        let mut zi = 0;
        for &(_, _, out) in &gates {
            for &o in out {
                w[o as usize] = z[zi];
                zi += 1;
            }
        }
        pre.used += gates.len();
    }
    // OUTPUT: every party sends its shares to every other and XORs what it gets.
    let mine = BitVec::from_bools(&outputs.iter().map(|&o| w[o as usize] == 1).collect::<Vec<_>>());
    for peer in (0..n).filter(|&q| q != me) {
        p.net().send(peer, mine.to_bytes())?;
    }
    let mut all = mine;
    for peer in (0..n).filter(|&q| q != me) {
        let got = p.net().recv(peer)?;
        if got.len() != outputs.len().div_ceil(8) {
            return Err(MpcError::Malformed {
                peer,
                reason: format!("{} bytes of {} output shares", got.len(), outputs.len()),
            });
        }
        all.xor_assign(&BitVec::from_bytes(&got, outputs.len())?)?;
    }
    Ok(all.to_bools())
}
