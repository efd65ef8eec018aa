//! FT's bitwise circuits: garbled after the opening (FT) or ahead on fresh labels (FT(OG)), and
//! the opening of labels.

use argus_math::BitVec;
use rand_core::RngCore;

use super::{FtAbb, Garbling, Labels, CHUNK};
use crate::error::{MpcError, Result};
use crate::garble::{self, Wire};
use crate::gmw::Gate;
use crate::inq::BoolCircuit;

/// One chunk of a circuit garbled ahead: the garbler's input labels of 0 and output labels of 0
/// (empty at the evaluator), the evaluator's rows (empty at the garbler).
struct Chunk {
    fresh: Vec<Vec<u128>>,
    outputs: Vec<Wire>,
    rows: Vec<u128>,
}

/// A circuit garbled ahead, per chunk of instances.
pub(super) struct Garbled {
    circuit: BoolCircuit,
    n: usize,
    tweak: u64,
    chunks: Vec<Chunk>,
}

impl FtAbb<'_> {
    /// `n` fresh labels of 0.
    fn zero_labels(&mut self, n: usize) -> Vec<u128> {
        (0..n).map(|_| u128::from(self.rng.next_u64()) << 64 | u128::from(self.rng.next_u64())).collect()
    }

    /// A garbled output as labels (a public output as the labels both would hold for it).
    fn wire_to_labels(&self, w: Wire) -> Vec<u128> {
        match w {
            Wire::Labels(l) => l,
            // a public bit v: the garbler holds v·Δ, the evaluator 0
            Wire::Public(b) => (0..b.len()).map(|i| if b.get(i) { self.delta } else { 0 }).collect(),
        }
    }

    /// Garbles (or evaluates) `c` now on the public and shared inputs: one message from the
    /// garbler per chunk of instances.
    fn evaluate_online(
        &mut self,
        c: &BoolCircuit,
        public: &[BitVec],
        shared: &[Labels],
        n: usize,
    ) -> Result<Vec<Labels>> {
        let peer = self.peer();
        let mut outs: Vec<Vec<u128>> = vec![Vec::with_capacity(n); c.outputs()];
        for at in (0..n.max(1)).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            let inputs = inputs_of(c, public, shared, at, len)?;
            let got = if self.garbler() {
                let mut rows = Vec::new();
                let got = self.gc.garble(c, inputs, len, self.delta, &mut rows)?;
                let bytes: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
                self.p.net().send(peer, bytes)?;
                got
            } else {
                let rows = blocks(peer, self.p.net().recv(peer)?)?;
                self.gc.evaluate(c, inputs, len, &rows)?
            };
            for (o, w) in outs.iter_mut().zip(got) {
                o.extend(self.wire_to_labels(w));
            }
        }
        Ok(outs.into_iter().map(Labels).collect())
    }

    /// Evaluates a circuit garbled ahead: the garbler sends the public inputs' active labels and
    /// the offsets from the shared inputs' labels to the fresh ones it garbled with (`Z ⊕ F`, with
    /// the same Δ), one message per chunk; the evaluator evaluates the rows it holds.
    fn evaluate_ahead(&mut self, g: Garbled, public: &[BitVec], shared: &[Labels]) -> Result<Vec<Labels>> {
        let peer = self.peer();
        let circuit = g.circuit;
        let mut gc = garble::Session::at(g.tweak);
        let sources = sources(&circuit);
        let mut outs: Vec<Vec<u128>> = Vec::new();
        for (chunk, Chunk { fresh, outputs: out0, rows }) in g.chunks.into_iter().enumerate() {
            let at = chunk * CHUNK;
            let len = CHUNK.min(g.n - at);
            let got: Vec<Wire> = if self.garbler() {
                let mut msg = Vec::with_capacity(16 * len * sources.len());
                for (f, &(party, idx)) in fresh.iter().zip(&sources) {
                    for (i, &f) in f.iter().enumerate() {
                        let l = if party == 0 {
                            f ^ if public[idx].get(at + i) { self.delta } else { 0 }
                        } else {
                            f ^ shared[idx].0[at + i]
                        };
                        msg.extend_from_slice(&l.to_le_bytes());
                    }
                }
                self.p.net().send(peer, msg)?;
                out0
            } else {
                let got = blocks(peer, self.p.net().recv(peer)?)?;
                if got.len() != len * sources.len() {
                    return Err(MpcError::Malformed {
                        peer,
                        reason: format!("{} input labels, expected {}", got.len(), len * sources.len()),
                    });
                }
                let inputs = sources
                    .iter()
                    .enumerate()
                    .map(|(w, &(party, idx))| {
                        let recv = &got[w * len..(w + 1) * len];
                        Wire::Labels(if party == 0 {
                            recv.to_vec()
                        } else {
                            recv.iter().zip(&shared[idx].0[at..at + len]).map(|(r, m)| r ^ m).collect()
                        })
                    })
                    .collect();
                gc.evaluate(&circuit, inputs, len, &rows)?
            };
            if outs.is_empty() {
                outs = vec![Vec::with_capacity(g.n); got.len()];
            }
            for (o, w) in outs.iter_mut().zip(got) {
                o.extend(self.wire_to_labels(w));
            }
        }
        Ok(outs.into_iter().map(Labels).collect())
    }

    /// `c` on the planes: by the circuit garbled ahead for it when one of this shape waits at the
    /// front of the queue, else garbled now.
    pub(super) fn run_circuit(&mut self, c: &BoolCircuit, public: &[BitVec], shared: &[Labels]) -> Result<Vec<Labels>> {
        let n = public.first().map(BitVec::len).or_else(|| shared.first().map(Labels::len)).unwrap_or(0);
        if public.iter().any(|p| p.len() != n) || shared.iter().any(|s| s.len() != n) {
            return Err(MpcError::InvalidParameter("input planes of different lengths".into()));
        }
        let ready = self.ahead.front().is_some_and(|g| g.n == n && g.circuit.gates() == c.gates());
        match self.ahead.pop_front() {
            Some(g) if ready => self.evaluate_ahead(g, public, shared),
            other => {
                if let Some(g) = other {
                    self.ahead.push_front(g);
                }
                self.evaluate_online(c, public, shared, n)
            }
        }
    }

    /// In FT(OG), garbles `c` for `n` instances now on fresh input labels and sends the rows.
    pub(super) fn garble_ahead(&mut self, c: &BoolCircuit, n: usize) -> Result<()> {
        if self.garbling == Garbling::Online {
            return Ok(());
        }
        let peer = self.peer();
        let tweak = self.gc.tweak();
        let inputs = sources(c).len();
        let mut chunks = Vec::with_capacity(n.div_ceil(CHUNK));
        for at in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            if self.garbler() {
                let fresh: Vec<Vec<u128>> = (0..inputs).map(|_| self.zero_labels(len)).collect();
                let mut rows = Vec::new();
                let wires = fresh.iter().map(|f| Wire::Labels(f.clone())).collect();
                let out = self.gc.garble(c, wires, len, self.delta, &mut rows)?;
                let bytes: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
                self.p.net().send(peer, bytes)?;
                chunks.push(Chunk { fresh, outputs: out, rows: Vec::new() });
            } else {
                let rows = blocks(peer, self.p.net().recv(peer)?)?;
                self.gc.skip(c, len);
                chunks.push(Chunk { fresh: Vec::new(), outputs: Vec::new(), rows });
            }
        }
        self.ahead.push_back(Garbled { circuit: c.clone(), n, tweak, chunks });
        Ok(())
    }

    /// The evaluator sends its labels, the garbler the lowest bits of its labels of 0; the
    /// garbler refuses a label that is neither of its wire's two ([`MpcError::Abort`]).
    pub(super) fn open_labels(&mut self, b: &Labels) -> Result<BitVec> {
        let peer = self.peer();
        let n = b.len();
        if self.garbler() {
            let lsbs = BitVec::from_bools(&b.0.iter().map(|&z| z & 1 == 1).collect::<Vec<_>>());
            self.p.net().send(peer, lsbs.to_bytes())?;
            let got = blocks(peer, self.p.net().recv(peer)?)?;
            if got.len() != n {
                return Err(MpcError::Malformed { peer, reason: format!("{} labels, expected {n}", got.len()) });
            }
            let mut out = BitVec::zeros(n);
            for (i, (&z, &l)) in b.0.iter().zip(&got).enumerate() {
                if l == z ^ self.delta {
                    out.set(i, true);
                } else if l != z {
                    return Err(MpcError::Abort(format!(
                        "party {peer} opened a label that is not on its wire (bit {i})"
                    )));
                }
            }
            Ok(out)
        } else {
            let bytes: Vec<u8> = b.0.iter().flat_map(|l| l.to_le_bytes()).collect();
            self.p.net().send(peer, bytes)?;
            let got = self.p.net().recv(peer)?;
            let lsbs = BitVec::from_bytes(&got, n).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })?;
            Ok(BitVec::from_bools(&(0..n).map(|i| lsbs.get(i) ^ (b.0[i] & 1 == 1)).collect::<Vec<_>>()))
        }
    }
}

/// For each INPUT gate of `c` in order: its party and its index among that party's inputs.
fn sources(c: &BoolCircuit) -> Vec<(usize, usize)> {
    let mut count = [0usize; 2];
    c.gates()
        .iter()
        .filter_map(|g| match g {
            Gate::Input { party, .. } => {
                let p = (*party).min(1);
                count[p] += 1;
                Some((p, count[p] - 1))
            }
            _ => None,
        })
        .collect()
}

/// Blocks of a message of 16-byte labels.
fn blocks(peer: usize, bytes: Vec<u8>) -> Result<Vec<u128>> {
    if !bytes.len().is_multiple_of(16) {
        return Err(MpcError::Malformed { peer, reason: format!("{} bytes are not whole labels", bytes.len()) });
    }
    Ok(bytes.chunks_exact(16).map(|b| u128::from_le_bytes(b.try_into().expect("16 bytes"))).collect())
}

/// The inputs of `c` for instances `at..at + len`: public planes for party 0's INPUT gates,
/// labels for party 1's, in gate order.
fn inputs_of(c: &BoolCircuit, public: &[BitVec], shared: &[Labels], at: usize, len: usize) -> Result<Vec<Wire>> {
    let (mut pi, mut si) = (public.iter(), shared.iter());
    c.gates()
        .iter()
        .filter_map(|g| if let Gate::Input { party, .. } = g { Some(*party) } else { None })
        .map(|party| {
            let short = || MpcError::InvalidParameter("fewer input planes than the circuit has inputs".into());
            Ok(if party == 0 {
                Wire::Public(pi.next().ok_or_else(short)?.slice(at, len)?)
            } else {
                Wire::Labels(si.next().ok_or_else(short)?.0[at..at + len].to_vec())
            })
        })
        .collect()
}
