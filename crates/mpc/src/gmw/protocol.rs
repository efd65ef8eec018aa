//! p-party GMW with VS gates (paper 003, Figs. 3 and 4), semi-honest, up to p − 1 corruptions.
//!
//! Wires carry XOR shares. An AND or VS gate `a·(x^1..x^n)` expands by Eq. (1) into
//! `⊕_i ⊕_j a_i x_j`: the terms `a_i x_i` are local and each cross term `a_i x_j` (i ≠ j) is one
//! 1-out-of-2 OT of n-bit strings, receiver `i`, sender `j`: `p(p − 1)` OTs per gate whatever n.
//!
//! The OTs are random OTs made before the circuit's inputs are known ([`preprocess`], IKNP), then
//! derandomised Beaver-style: a random OT `(k0, k1)` / `(c, k_c)` is a triple `c·R = G(k0) ⊕
//! G(k_c)` with `R = G(k0) ⊕ G(k1)` (`G` stretches a key to n bits). The receiver sends
//! `e = a_i ⊕ c` (1 bit) and the sender `F = x_j ⊕ R` (n bits), both at once; then
//! `a_i x_j = [a_i·F ⊕ G(k_c)] ⊕ [G(k_e)]`, the receiver's and the sender's share. One round per
//! layer of AND/VS gates, `1 + n` bits per gate and ordered pair; plus one round for the outputs.
//!
//! Beyond the paper, shares known to be zero are not sent for. An INPUT is shared as the
//! owner's bit and zeros (no message), and each wire keeps the set of parties that may hold a
//! non-zero share of it (public). A cross term `a_i x_j` with `a_i` or all of `x_j`
//! known zero needs no OT, the elements of `x_j` known zero no bits, and a gate whose inputs all
//! belong to one party is that party's local product. Outputs are re-randomised by a
//! zero-sharing from the pairwise streams before they are revealed. [`cost`] counts the OTs,
//! bytes and rounds of an evaluation from the circuit alone.

use std::sync::OnceLock;

use argus_math::BitVec;
use argus_ot::{iknp, Block};
use argus_prg::Prg;

use super::circuit::{Circuit, Gate, Wire};
use super::layer::{self, parts, Link, Scratch};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Random OTs with every other party, made before the circuit is evaluated, and how many of
/// them are used. Each OT is used once: an evaluation consumes them from the front.
pub struct Preprocessed {
    peers: Vec<Option<PeerOts>>,
    len: usize,
}

/// The random OTs with one peer, in both directions.
pub(super) struct PeerOts {
    /// This party as the sender: the key pairs.
    pub(super) send: Vec<[Block; 2]>,
    /// This party as the receiver: its random choices and the keys it got.
    pub(super) choices: BitVec,
    pub(super) recv: Vec<Block>,
    /// OTs used so far as the sender and as the receiver.
    pub(super) sent: usize,
    pub(super) received: usize,
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
    /// OTs used so far with `peer`: (this party receiving, this party sending).
    pub fn used(&self, peer: usize) -> (usize, usize) {
        self.peers.get(peer).and_then(Option::as_ref).map_or((0, 0), |o| (o.received, o.sent))
    }
    /// The OTs with `peer` (checked to exist before a circuit is evaluated).
    pub(super) fn peer(&self, peer: usize) -> &PeerOts {
        self.peers[peer].as_ref().expect("OTs with every peer")
    }
    pub(super) fn peer_mut(&mut self, peer: usize) -> &mut PeerOts {
        self.peers[peer].as_mut().expect("OTs with every peer")
    }
}

/// Makes `m` random OTs in each direction with every other party (IKNP: 128 base OTs per pair,
/// the other direction's bootstrapped from their extension, then κ = 128 bits per OT from the
/// extension's receiver). All pairs and both directions at once: the set-up in three waves of
/// messages ([`iknp::setup_with`]), then every party's extension messages together.
pub fn preprocess(p: &mut Party, m: usize) -> Result<Preprocessed> {
    let (me, n) = (p.id(), p.n());
    let mut rng = Prg::new(&p.prg.own().fork());
    let others: Vec<usize> = (0..n).filter(|&q| q != me).collect();
    let net = p.net();
    let mut ext = iknp::setup_with(net, &others, &mut rng)?;
    // receivers only send, senders only receive: every receiver first, then every sender
    let mut received = Vec::with_capacity(others.len());
    for (&peer, (_, r)) in others.iter().zip(&mut ext) {
        let choices = BitVec::random(&mut rng, m);
        let keys = r.random(net, peer, &choices.to_bools())?;
        received.push((choices, keys));
    }
    let mut peers: Vec<Option<PeerOts>> = (0..n).map(|_| None).collect();
    for ((&peer, (s, _)), (choices, recv)) in others.iter().zip(&mut ext).zip(received) {
        peers[peer] = Some(PeerOts { send: s.random(net, peer, m)?, choices, recv, sent: 0, received: 0 });
    }
    Ok(Preprocessed { peers, len: m })
}

/// For each wire, the set of parties (a bit mask) whose shares of it may be non-zero: public, the
/// same at every party. An input belongs to its owner, XOR joins the sets, INV adds party 0 (the
/// one who flips), an AND/VS gate whose inputs all belong to one party keeps it (that party's
/// local product), and every other gate's outputs may be anyone's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Owners(Vec<u16>);

impl Owners {
    /// Every wire's set, in one pass over the gates (each wire is set once, so the set a gate
    /// gives its outputs is final).
    fn of(c: &Circuit) -> Self {
        let mut own = Owners(vec![u16::MAX; c.wires()]);
        for g in c.gates() {
            match g {
                Gate::And { .. } | Gate::Vs { .. } => {
                    let (a, x, out) = parts(g);
                    own.set(out, own.sole(a, x));
                }
                g => own.local(g),
            }
        }
        own
    }
    /// Whether party `q`'s share of `w` may be non-zero.
    pub(super) fn may(&self, w: Wire, q: usize) -> bool {
        self.0[w as usize] >> q & 1 == 1
    }
    /// Updates the owners of a local gate's output.
    fn local(&mut self, g: &Gate) {
        let o = &mut self.0;
        match g {
            Gate::Input { party, wire } => o[*wire as usize] = 1 << party,
            Gate::Xor { a, b, out } => o[*out as usize] = o[*a as usize] | o[*b as usize],
            Gate::Inv { a, out } => o[*out as usize] = o[*a as usize] | 1,
            _ => {}
        }
    }
    /// The party that computes `a·x` alone, if all its inputs belong to one.
    pub(super) fn sole(&self, a: Wire, x: &[Wire]) -> Option<usize> {
        let all = x.iter().fold(self.0[a as usize], |m, &w| m | self.0[w as usize]);
        (all.count_ones() == 1).then_some(all.trailing_zeros() as usize)
    }
    /// The elements of `x` the cross term `a_i x_j` covers (0: no OT), receiver `i`, sender `j`.
    fn covered(&self, a: Wire, x: &[Wire], i: usize, j: usize) -> usize {
        if self.may(a, i) {
            x.iter().filter(|&&w| self.may(w, j)).count()
        } else {
            0
        }
    }
    fn set(&mut self, out: &[Wire], sole: Option<usize>) {
        let o = sole.map_or(u16::MAX, |q| 1 << q);
        for &w in out {
            self.0[w as usize] = o;
        }
    }
}

/// What one evaluation of a circuit costs, from the circuit alone (the protocol's cost counter):
/// OTs per ordered pair, bytes each party sends (online, after [`preprocess`]), rounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cost {
    /// `ots[i][j]`: OTs with receiver `i` and sender `j`.
    pub ots: Vec<Vec<usize>>,
    /// Bytes party `i` sends in the evaluation.
    pub bytes_sent: Vec<u64>,
    /// Rounds: one per layer with an OT, one for the outputs.
    pub rounds: usize,
}

impl Cost {
    /// The most OTs any ordered pair needs: what [`preprocess`] must make.
    pub fn max_ots(&self) -> usize {
        self.ots.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// What [`evaluate`] needs to know about a circuit beyond its gates, worked out once per circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    owners: Owners,
    cost: Cost,
    /// Per layer, its XOR and INV gates in runs (a tight loop over small records, and over
    /// whole ranges where the builder laid gates out side by side).
    local: Vec<Vec<Run>>,
    /// Each party's input wires, and the output wires, in gate order.
    inputs: Vec<Vec<Wire>>,
    outputs: Vec<Wire>,
    /// Per layer, where each AND/VS gate's elements start in the layer's packed vector, and
    /// whether the layer needs a round (some gate is not one party's alone).
    starts: Vec<Vec<u32>>,
    exchange: Vec<bool>,
    /// Per layer, which AND/VS gates read or write consecutive wires ([`layer::spans`]).
    spans: Vec<Vec<u8>>,
    /// Per party, its cross terms with each peer per layer: made when it first evaluates.
    links: Vec<OnceLock<Vec<Vec<Link>>>>,
}

/// The `b` of an INV gate in [`Plan::local`].
const INV: Wire = Wire::MAX;

/// `n` XOR gates `out + k = (a + k·sa) ⊕ (b + k·sb)`, or INV gates `out + k = ¬(a + k·sa)`
/// (`b = INV`), with strides `sa ≥ 1`, `sb ≥ 0`; in a run of two or more, every input lies below
/// `out`, so the run is a pass over slices (vectorised for unit strides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    a: Wire,
    b: Wire,
    out: Wire,
    n: u32,
    sa: u32,
    sb: u32,
}

impl Run {
    /// The gates `(a, b, out)` (`b = INV` for INV) in runs, in their order.
    fn compile(gates: impl Iterator<Item = [Wire; 3]>) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for [a, b, out] in gates {
            if let Some(r) = runs.last_mut().filter(|r| r.extends(a, b, out)) {
                if r.n == 1 {
                    r.sa = a - r.a;
                    r.sb = if b == INV { 0 } else { b - r.b };
                }
                r.n += 1;
                continue;
            }
            runs.push(Run { a, b, out, n: 1, sa: 1, sb: 0 });
        }
        runs
    }

    /// Whether gate `(a, b, out)` continues the run: the next output, inputs at the run's strides
    /// (any forward strides after its first gate), and every input below the run's outputs, so
    /// that no gate of a run reads another's output.
    fn extends(&self, a: Wire, b: Wire, out: Wire) -> bool {
        let below = |w: Wire, first: Wire| w < self.out && first < self.out;
        let (sa, sb) = if self.n == 1 {
            if a <= self.a || (b != INV && b < self.b) {
                return false;
            }
            (a - self.a, if b == INV { 0 } else { b - self.b })
        } else {
            (self.sa, self.sb)
        };
        let at = |first: Wire, stride: u32| u64::from(first) + u64::from(self.n) * u64::from(stride);
        let b_fits =
            if b == INV { self.b == INV } else { self.b != INV && u64::from(b) == at(self.b, sb) && below(b, self.b) };
        out as u64 == at(self.out, 1) && u64::from(a) == at(self.a, sa) && below(a, self.a) && b_fits
    }

    /// Evaluates the run on the wire shares `w` (`flip`: whether this party flips for INV).
    fn eval(&self, w: &mut [u8], flip: u8) {
        let (n, a, b, out) = (self.n as usize, self.a as usize, self.b as usize, self.out as usize);
        if n == 1 {
            // one gate: its wires in any order (Bristol numbers them freely)
            w[out] = w[a] ^ if self.b == INV { flip } else { w[b] };
            return;
        }
        let (low, high) = w.split_at_mut(out);
        let dst = &mut high[..n];
        let (sa, sb) = (self.sa as usize, self.sb as usize);
        match (self.b == INV, sa, sb) {
            (true, 1, _) => dst.iter_mut().zip(&low[a..a + n]).for_each(|(d, &x)| *d = x ^ flip),
            (false, 1, 0) => dst.iter_mut().zip(&low[a..a + n]).for_each(|(d, &x)| *d = x ^ low[b]),
            (false, 1, 1) => {
                dst.iter_mut().zip(&low[a..a + n]).zip(&low[b..b + n]).for_each(|((d, &x), &y)| *d = x ^ y)
            }
            _ => {
                for (k, d) in dst.iter_mut().enumerate() {
                    *d = low[a + k * sa] ^ if self.b == INV { flip } else { low[b + k * sb] };
                }
            }
        }
    }
}

fn plan(c: &Circuit) -> &Plan {
    c.plan.get_or_init(|| {
        let owners = Owners::of(c);
        let cost = count(c, &owners);
        let local = c
            .layers()
            .iter()
            .map(|l| {
                Run::compile(l.local.iter().filter_map(|&i| match c.gates()[i] {
                    Gate::Xor { a, b, out } => Some([a, b, out]),
                    Gate::Inv { a, out } => Some([a, INV, out]),
                    _ => None,
                }))
            })
            .collect();
        let mut inputs = vec![Vec::new(); c.parties()];
        let mut outputs = Vec::with_capacity(c.outputs());
        for g in c.gates() {
            match *g {
                Gate::Input { party, wire } => inputs[party].push(wire),
                Gate::Output { wire } => outputs.push(wire),
                _ => {}
            }
        }
        let starts = c.layers().iter().map(|l| layer::starts(c, l)).collect();
        let exchange = c
            .layers()
            .iter()
            .map(|l| {
                l.nonlinear.iter().any(|&gi| {
                    let (a, x, _) = parts(&c.gates()[gi]);
                    owners.sole(a, x).is_none()
                })
            })
            .collect();
        let spans = c.layers().iter().map(|l| layer::spans(c, l)).collect();
        let links = (0..c.parties()).map(|_| OnceLock::new()).collect();
        Plan { owners, cost, local, inputs, outputs, starts, exchange, spans, links }
    })
}

/// The OTs, bytes and rounds of [`evaluate`] on `c` (counted once per circuit).
pub fn cost(c: &Circuit) -> &Cost {
    &plan(c).cost
}

fn count(c: &Circuit, own: &Owners) -> Cost {
    let p = c.parties();
    let mut ots = vec![vec![0; p]; p];
    let mut bytes = vec![0u64; p];
    let mut rounds = 1;
    for layer in c.layers() {
        let mut bits = vec![vec![0usize; p]; p]; // bits[from][to]
        let mut any = false;
        for &gi in &layer.nonlinear {
            let (a, x, _) = parts(&c.gates()[gi]);
            if own.sole(a, x).is_some() {
                continue;
            }
            any = true;
            for i in 0..p {
                for j in (0..p).filter(|&j| j != i) {
                    let n = own.covered(a, x, i, j);
                    if n > 0 {
                        ots[i][j] += 1;
                        bits[i][j] += 1;
                        bits[j][i] += n;
                    }
                }
            }
        }
        if any {
            rounds += 1;
            for (i, row) in bits.iter().enumerate() {
                bytes[i] +=
                    row.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &b)| b.div_ceil(8) as u64).sum::<u64>();
            }
        }
    }
    for b in &mut bytes {
        *b += (p as u64 - 1) * c.outputs().div_ceil(8) as u64;
    }
    Cost { ots, bytes_sent: bytes, rounds }
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
    let plan = plan(c);
    let Plan { owners: own, cost, local, inputs, outputs, starts, exchange, spans, .. } = plan;
    let need = &cost.ots;
    for q in (0..n).filter(|&q| q != me) {
        let Some(o) = pre.peers.get(q).and_then(Option::as_ref) else {
            return Err(MpcError::InvalidParameter(format!("no OTs with party {q}: made in another session")));
        };
        let (left_r, left_s) = (pre.len - o.received, pre.len - o.sent);
        if need[me][q] > left_r || need[q][me] > left_s {
            return Err(MpcError::InvalidParameter(format!(
                "the circuit needs {} and {} OTs with party {q}, {left_r} and {left_s} are left",
                need[me][q], need[q][me]
            )));
        }
    }
    let links = plan.links[me].get_or_init(|| layer::links(c, own, starts, me));
    let peers: Vec<usize> = (0..n).filter(|&q| q != me).collect();
    let mut w = vec![0u8; c.wires()];
    // INPUT: the owner's bit, zeros elsewhere (no message)
    for (&wire, &b) in inputs[me].iter().zip(input) {
        w[wire as usize] = u8::from(b);
    }
    let flip = u8::from(me == 0);
    let mut scratch = Scratch::default();
    for (k, (l, ops)) in c.layers().iter().zip(local).enumerate() {
        for run in ops {
            run.eval(&mut w, flip);
        }
        if !l.nonlinear.is_empty() {
            layer::eval(p, pre, c, l, (&starts[k], &spans[k]), &links[k], exchange[k], &mut w, &mut scratch)?;
        }
    }
    // OUTPUT: shares re-randomised by a zero-sharing (each pairwise stream's bits twice), then
    // every party sends its shares to every other and XORs what it gets.
    let mut mine = BitVec::from_bools(&outputs.iter().map(|&o| w[o as usize] == 1).collect::<Vec<_>>());
    for &q in &peers {
        let stream = p.prg.with(q).expect("a stream with every peer");
        mine.xor_assign(&BitVec::random(stream, outputs.len()))?;
    }
    for &q in &peers {
        p.net().send(q, mine.to_bytes())?;
    }
    let mut all = mine;
    for &q in &peers {
        let got = p.net().recv(q)?;
        if got.len() != outputs.len().div_ceil(8) {
            return Err(MpcError::Malformed {
                peer: q,
                reason: format!("{} bytes of {} output shares", got.len(), outputs.len()),
            });
        }
        all.xor_assign(&BitVec::from_bytes(&got, outputs.len())?)?;
    }
    Ok(all.to_bools())
}
