//! Yao's garbled circuits for two parties with free-XOR (Kolesnikov–Schneider 2008) and
//! half-gates (Zahur, Rosulek, Evans 2015) over fixed-key AES: the boolean engine of paper 002's
//! FT setting. The circuits are [`crate::gmw`]'s IR, evaluated on `n` instances side by side
//! (one label per instance on every wire), which batches the AES calls of every gate.
//!
//! Wire `w` carries a bit `v` as labels: the garbler holds `Z_w` (the label of 0), the evaluator
//! holds `Z_w ⊕ v·Δ`, with one global `Δ` whose lowest bit is 1 (point-and-permute). So the bit
//! is XOR-shared as the labels' lowest bits, and a wire's labels are a one-sided MAC on it: an
//! evaluator that claims another label than the one it holds is caught.
//!
//! A wire may also be public (both parties know its bits): XOR, INV and AND with a public wire
//! are free. AND of two labelled wires costs two 16-byte rows per instance (the half gates).
//! Semi-honest for the garbler, as Yao's protocol is.

use argus_math::BitVec;
use argus_prg::Permutation;

use crate::error::{MpcError, Result};
use crate::gmw::{Circuit, Gate};

/// A wire's value on every instance.
#[derive(Clone, Debug)]
pub enum Wire {
    /// Bits both parties know.
    Public(BitVec),
    /// Labels: the garbler's labels of 0, or the evaluator's active labels.
    Labels(Vec<u128>),
}

/// The fixed key of the hash's permutation (a public constant).
const KEY: u128 = 0x6172_6775_732d_6861_6c66_2d67_6174_6573;

/// `H(x, j) = π(2x ⊕ j) ⊕ 2x ⊕ j` for every `x` with tweak `j` (a tweakable
/// correlation-robust hash from a fixed-key permutation, as the half-gates paper uses).
fn hash(pi: &Permutation, xs: &[u128], tweak: u64, out: &mut Vec<u128>) {
    out.clear();
    out.extend(xs.iter().enumerate().map(|(i, &x)| double(x) ^ u128::from(tweak + i as u64)));
    let mut ys = out.clone();
    pi.permute(&mut ys);
    for (o, y) in out.iter_mut().zip(ys) {
        *o ^= y;
    }
}

/// Doubling in GF(2^128) (the polynomial x^128 + x^7 + x^2 + x + 1).
fn double(x: u128) -> u128 {
    (x << 1) ^ if x >> 127 == 1 { 0x87 } else { 0 }
}

fn lsb(x: u128) -> bool {
    x & 1 == 1
}

/// Two labelled wires' AND rows for `n` instances: `2n` blocks.
pub fn rows_per_and(n: usize) -> usize {
    2 * n
}

/// The labelled ANDs of `c` given which inputs are public (the rest cost rows).
pub fn labelled_ands(c: &Circuit, public_inputs: &[bool]) -> usize {
    let mut public = vec![false; c.wires()];
    let mut inputs = public_inputs.iter();
    let mut ands = 0;
    for g in c.gates() {
        match g {
            Gate::Input { wire, .. } => public[*wire as usize] = *inputs.next().unwrap_or(&false),
            Gate::Xor { a, b, out } => public[*out as usize] = public[*a as usize] && public[*b as usize],
            Gate::Inv { a, out } => public[*out as usize] = public[*a as usize],
            Gate::And { a, b, out } => {
                ands += usize::from(!(public[*a as usize] || public[*b as usize]));
                public[*out as usize] = public[*a as usize] && public[*b as usize];
            }
            Gate::Vs { scalar, vector, out } => {
                for (v, o) in vector.iter().zip(out) {
                    ands += usize::from(!(public[*scalar as usize] || public[*v as usize]));
                    public[*o as usize] = public[*scalar as usize] && public[*v as usize];
                }
            }
            Gate::Output { .. } => {}
        }
    }
    ands
}

/// One side of a garbled evaluation.
enum Role<'a> {
    /// Writes the AND rows.
    Garbler { delta: u128, rows: &'a mut Vec<u128> },
    /// Reads them.
    Evaluator { rows: &'a [u128], at: usize },
}

/// A garbling session's state: the permutation and the tweak counter both sides advance alike.
pub struct Session {
    pi: Permutation,
    tweak: u64,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// A fresh session (tweaks from 0): one per pair of parties.
    pub fn new() -> Self {
        Session { pi: Permutation::new(KEY), tweak: 0 }
    }

    /// A session whose next tweak is `tweak` (to evaluate rows garbled earlier).
    pub fn at(tweak: u64) -> Self {
        Session { pi: Permutation::new(KEY), tweak }
    }

    /// The next tweak.
    pub fn tweak(&self) -> u64 {
        self.tweak
    }

    /// Moves past the tweaks garbling `c` on `n` instances with every input labelled uses (the
    /// evaluator's side of a circuit garbled ahead).
    pub fn skip(&mut self, c: &Circuit, n: usize) {
        self.tweak += (2 * n * labelled_ands(c, &[])) as u64;
    }

    /// Garbles `c` on `n` instances: `inputs` in the order of its INPUT gates (public bits, or
    /// the labels of 0). Appends the AND rows to `rows`; returns the outputs' labels of 0 (or
    /// their public bits).
    pub fn garble(
        &mut self,
        c: &Circuit,
        inputs: Vec<Wire>,
        n: usize,
        delta: u128,
        rows: &mut Vec<u128>,
    ) -> Result<Vec<Wire>> {
        assert!(lsb(delta), "free-XOR with point-and-permute needs lsb(Δ) = 1");
        self.run(c, inputs, n, Role::Garbler { delta, rows })
    }

    /// Evaluates `c` on `n` instances with the garbler's `rows`: `inputs` the public bits or the
    /// active labels. Returns the outputs' active labels (or public bits).
    pub fn evaluate(&mut self, c: &Circuit, inputs: Vec<Wire>, n: usize, rows: &[u128]) -> Result<Vec<Wire>> {
        self.run(c, inputs, n, Role::Evaluator { rows, at: 0 })
    }

    fn run(&mut self, c: &Circuit, inputs: Vec<Wire>, n: usize, mut role: Role<'_>) -> Result<Vec<Wire>> {
        let mut wires: Vec<Option<Wire>> = vec![None; c.wires()];
        let mut inputs = inputs.into_iter();
        let mut outputs = Vec::new();
        let (mut ha, mut hb) = (Vec::with_capacity(2 * n), Vec::with_capacity(2 * n));
        let get = |wires: &[Option<Wire>], w: u32| -> Result<Wire> {
            wires[w as usize]
                .clone()
                .ok_or_else(|| MpcError::InvalidParameter(format!("wire {w} read before it is set")))
        };
        let delta = match &role {
            Role::Garbler { delta, .. } => Some(*delta),
            Role::Evaluator { .. } => None,
        };
        for g in c.gates() {
            match g {
                Gate::Input { wire, .. } => {
                    let w = inputs.next().ok_or_else(|| MpcError::InvalidParameter("too few circuit inputs".into()))?;
                    check_width(&w, n)?;
                    wires[*wire as usize] = Some(w);
                }
                Gate::Xor { a, b, out } => {
                    let v = match (get(&wires, *a)?, get(&wires, *b)?) {
                        (Wire::Public(x), Wire::Public(y)) => Wire::Public(x.xor(&y)?),
                        (Wire::Public(p), Wire::Labels(l)) | (Wire::Labels(l), Wire::Public(p)) => {
                            Wire::Labels(flip(l, &p, delta))
                        }
                        (Wire::Labels(x), Wire::Labels(y)) => {
                            Wire::Labels(x.iter().zip(&y).map(|(a, b)| a ^ b).collect())
                        }
                    };
                    wires[*out as usize] = Some(v);
                }
                Gate::Inv { a, out } => {
                    let v = match get(&wires, *a)? {
                        Wire::Public(x) => Wire::Public(x.not()),
                        Wire::Labels(l) => Wire::Labels(flip(l, &BitVec::ones(n), delta)),
                    };
                    wires[*out as usize] = Some(v);
                }
                Gate::And { a, b, out } => {
                    let v = self.and(get(&wires, *a)?, get(&wires, *b)?, n, &mut role, (&mut ha, &mut hb))?;
                    wires[*out as usize] = Some(v);
                }
                Gate::Vs { scalar, vector, out } => {
                    for (v, o) in vector.iter().zip(out) {
                        let r = self.and(get(&wires, *scalar)?, get(&wires, *v)?, n, &mut role, (&mut ha, &mut hb))?;
                        wires[*o as usize] = Some(r);
                    }
                }
                Gate::Output { wire } => outputs.push(get(&wires, *wire)?),
            }
        }
        if let Role::Evaluator { rows, at } = role {
            if at != rows.len() {
                return Err(MpcError::InvalidParameter(format!("{} garbled rows, the circuit used {at}", rows.len())));
            }
        }
        Ok(outputs)
    }

    fn and(
        &mut self,
        a: Wire,
        b: Wire,
        n: usize,
        role: &mut Role<'_>,
        (ha, hb): (&mut Vec<u128>, &mut Vec<u128>),
    ) -> Result<Wire> {
        let (x, y) = match (a, b) {
            (Wire::Public(x), Wire::Public(y)) => return Ok(Wire::Public(x.and(&y)?)),
            // p ∧ v: the label where p is 1, else the public 0 (labels 0 on both sides)
            (Wire::Public(p), Wire::Labels(l)) | (Wire::Labels(l), Wire::Public(p)) => {
                return Ok(Wire::Labels(l.iter().enumerate().map(|(i, &l)| if p.get(i) { l } else { 0 }).collect()))
            }
            (Wire::Labels(x), Wire::Labels(y)) => (x, y),
        };
        let j = self.tweak;
        self.tweak += 2 * n as u64;
        let mut out = vec![0u128; n];
        match role {
            Role::Garbler { delta, rows } => {
                let d = *delta;
                // H over both labels of a and of b: [A0.., A1..], tweaks j.. for a, j + n.. for b
                let ones = |z: &[u128]| -> Vec<u128> { z.iter().map(|&z| z ^ d).collect() };
                let (mut h_a1, mut h_b1) = (Vec::with_capacity(n), Vec::with_capacity(n));
                hash(&self.pi, &x, j, ha);
                hash(&self.pi, &ones(&x), j, &mut h_a1);
                hash(&self.pi, &y, j + n as u64, hb);
                hash(&self.pi, &ones(&y), j + n as u64, &mut h_b1);
                let start = rows.len();
                rows.resize(start + 2 * n, 0);
                let (tg, te) = rows[start..].split_at_mut(n);
                for i in 0..n {
                    let (a0, b0) = (x[i], y[i]);
                    let (pa, pb) = (lsb(a0), lsb(b0));
                    // generator half: a ∧ p_b
                    tg[i] = ha[i] ^ h_a1[i] ^ if pb { d } else { 0 };
                    let wg = ha[i] ^ if pa { tg[i] } else { 0 };
                    // evaluator half: a ∧ (b ⊕ p_b)
                    te[i] = hb[i] ^ h_b1[i] ^ a0;
                    let we = hb[i] ^ if pb { te[i] ^ a0 } else { 0 };
                    out[i] = wg ^ we;
                }
            }
            Role::Evaluator { rows, at } => {
                let need = *at + 2 * n;
                if rows.len() < need {
                    return Err(MpcError::InvalidParameter(format!(
                        "{} garbled rows, the circuit needs more",
                        rows.len()
                    )));
                }
                let (tg, te) = rows[*at..need].split_at(n);
                *at = need;
                hash(&self.pi, &x, j, ha);
                hash(&self.pi, &y, j + n as u64, hb);
                for i in 0..n {
                    let wg = ha[i] ^ if lsb(x[i]) { tg[i] } else { 0 };
                    let we = hb[i] ^ if lsb(y[i]) { te[i] ^ x[i] } else { 0 };
                    out[i] = wg ^ we;
                }
            }
        }
        Ok(Wire::Labels(out))
    }
}

/// Labels XOR a public bit vector: the garbler's labels of 0 move by `Δ` where the bit is 1 (the
/// evaluator's stay).
fn flip(mut l: Vec<u128>, p: &BitVec, delta: Option<u128>) -> Vec<u128> {
    if let Some(d) = delta {
        for (i, x) in l.iter_mut().enumerate() {
            if p.get(i) {
                *x ^= d;
            }
        }
    }
    l
}

fn check_width(w: &Wire, n: usize) -> Result<()> {
    let got = match w {
        Wire::Public(b) => b.len(),
        Wire::Labels(l) => l.len(),
    };
    if got != n {
        return Err(MpcError::LengthMismatch { left: got, right: n });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmw::Builder;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Garbles and evaluates a circuit of ANDs, XORs and INVs on random inputs (some public),
    /// and compares the XOR of the output labels' lowest bits with the plaintext.
    #[test]
    fn garbled_evaluation_agrees_with_the_plaintext() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut b = Builder::new(2);
        let x = b.input(0, 4);
        let y = b.input(1, 4);
        let mut outs = Vec::new();
        for i in 0..4 {
            let a = b.and(x[i], y[(i + 1) % 4]);
            let n = b.not(a);
            let c = b.xor(n, y[i]);
            let d = b.and(c, x[(i + 2) % 4]);
            outs.push(b.and(d, a));
            outs.push(c);
        }
        b.output(&outs);
        let c = b.build().unwrap();
        let n = 37;
        for public_x in [false, true] {
            let delta: u128 = rng.gen::<u128>() | 1;
            let xs: Vec<BitVec> = (0..4).map(|_| BitVec::random(&mut rng, n)).collect();
            let ys: Vec<BitVec> = (0..4).map(|_| BitVec::random(&mut rng, n)).collect();
            let zero: Vec<Vec<u128>> = (0..8).map(|_| (0..n).map(|_| rng.gen()).collect()).collect();
            let active = |i: usize, bits: &BitVec| -> Vec<u128> {
                zero[i].iter().enumerate().map(|(e, &z)| if bits.get(e) { z ^ delta } else { z }).collect()
            };
            let g_in: Vec<Wire> = (0..8)
                .map(|i| if i < 4 && public_x { Wire::Public(xs[i].clone()) } else { Wire::Labels(zero[i].clone()) })
                .collect();
            let e_in: Vec<Wire> = (0..8)
                .map(|i| match i {
                    _ if i < 4 && public_x => Wire::Public(xs[i].clone()),
                    _ if i < 4 => Wire::Labels(active(i, &xs[i])),
                    _ => Wire::Labels(active(i, &ys[i - 4])),
                })
                .collect();
            let mut rows = Vec::new();
            let g_out = Session::new().garble(&c, g_in, n, delta, &mut rows).unwrap();
            let publics: Vec<bool> = (0..8).map(|i| i < 4 && public_x).collect();
            assert_eq!(rows.len(), labelled_ands(&c, &publics) * rows_per_and(n));
            let e_out = Session::new().evaluate(&c, e_in, n, &rows).unwrap();
            for e in 0..n {
                let mut inputs = vec![(0..4).map(|i| xs[i].get(e)).collect::<Vec<_>>()];
                inputs.push((0..4).map(|i| ys[i].get(e)).collect());
                let want = c.eval(&inputs).unwrap();
                for (o, (g, v)) in g_out.iter().zip(&e_out).enumerate() {
                    let got = match (g, v) {
                        (Wire::Labels(g), Wire::Labels(v)) => {
                            assert!(v[e] == g[e] || v[e] == g[e] ^ delta, "a label off the wire");
                            lsb(g[e]) ^ lsb(v[e])
                        }
                        (Wire::Public(g), Wire::Public(_)) => g.get(e),
                        _ => panic!("the two sides disagree on a wire's kind"),
                    };
                    assert_eq!(got, want[o], "instance {e}, output {o}");
                }
            }
        }
    }

    /// Rows missing from the garbler's message are an error, not a panic.
    #[test]
    fn too_few_rows_are_an_error() {
        let mut b = Builder::new(2);
        let x = b.input(0, 1)[0];
        let y = b.input(1, 1)[0];
        let z = b.and(x, y);
        b.output(&[z]);
        let c = b.build().unwrap();
        let got = Session::new().evaluate(&c, vec![Wire::Labels(vec![1; 3]), Wire::Labels(vec![2; 3])], 3, &[0; 5]);
        assert!(got.is_err());
    }
}
