//! One layer of AND and VS gates on packed bits (paper 003, Fig. 4's `VS` and Eq. (1)).
//!
//! Which gates need a cross term with a peer, in which direction, and which of their elements
//! it covers is public (the owners in [`super::protocol`]): it is worked out once per circuit
//! and party ([`links`]). A layer then gathers the shares of its vectors into packed words in
//! one pass, builds and reads each peer's message a word at a time, and writes the products
//! back in one pass.

use argus_math::{get_bits, low_bits, words_for, xor_bits};
use argus_ot::Block;
use argus_prg::{Prg, Seed};
use rand_core::RngCore;

use super::circuit::{Circuit, Gate, Layer, Wire};
use super::protocol::{Owners, Preprocessed};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// An AND or VS gate's scalar, vector and outputs.
pub(super) fn parts(g: &Gate) -> (Wire, &[Wire], &[Wire]) {
    match g {
        Gate::And { a, b, out } => (*a, std::slice::from_ref(b), std::slice::from_ref(out)),
        Gate::Vs { scalar, vector, out } => (*scalar, vector, out),
        _ => unreachable!("only AND and VS gates are nonlinear"),
    }
}

/// One gate's cross term with a peer: the gate (its place among the layer's AND/VS gates),
/// where its elements start in the layer's packed vector, how many the term covers, and which:
/// `runs` runs of consecutive elements from [`Terms::List`]'s `sel[sel..]`, or all ([`ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Term {
    gate: u32,
    start: u32,
    n: u32,
    sel: u32,
    runs: u32,
}

/// [`Term::sel`] for a term that covers all of its gate's elements.
const ALL: u32 = u32::MAX;

/// A run of covered elements of a gate: the first one's index in the gate, and how many.
type ElemRun = (u32, u32);

/// The cross terms of one direction with one peer in one layer, in gate order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Terms {
    /// Every gate, every element (the common case past the inputs: no list kept).
    All,
    /// These terms; `sel` holds the covered runs of the partial ones.
    List { terms: Vec<Term>, sel: Vec<ElemRun> },
}

impl Terms {
    fn len(&self, gates: usize) -> usize {
        match self {
            Terms::All => gates,
            Terms::List { terms, .. } => terms.len(),
        }
    }
    fn get(&self, k: usize, starts: &[u32]) -> Term {
        match self {
            Terms::All => Term { gate: k as u32, start: starts[k], n: starts[k + 1] - starts[k], sel: ALL, runs: 1 },
            Terms::List { terms, .. } => terms[k],
        }
    }
    fn sel(&self) -> &[ElemRun] {
        match self {
            Terms::All => &[],
            Terms::List { sel, .. } => sel,
        }
    }
    /// Bits the terms carry: one per term (`e`) or one per covered element (`F`).
    fn bits(&self, starts: &[u32], e: bool) -> usize {
        match (self, e) {
            (Terms::All, true) => starts.len() - 1,
            (Terms::All, false) => *starts.last().unwrap_or(&0) as usize,
            (Terms::List { terms, .. }, true) => terms.len(),
            (Terms::List { terms, .. }, false) => terms.iter().map(|t| t.n as usize).sum(),
        }
    }
}

/// One party's cross terms with one peer in one layer: where it receives (`a_me · x_peer`, it
/// sends `e`) and where it sends (`a_peer · x_me`, it sends `F`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Link {
    recv: Terms,
    send: Terms,
}

/// Where each AND/VS gate's elements start in its layer's packed vector (one more entry than
/// gates: the layer's total last).
pub(super) fn starts(c: &Circuit, layer: &Layer) -> Vec<u32> {
    let mut at = 0u32;
    let mut out = Vec::with_capacity(layer.nonlinear.len() + 1);
    out.push(0);
    for &gi in &layer.nonlinear {
        at += parts(&c.gates()[gi]).1.len() as u32;
        out.push(at);
    }
    out
}

/// [`spans`]: a gate's vector is consecutive wires.
const VECTOR_SPAN: u8 = 1;
/// [`spans`]: a gate's outputs are consecutive wires.
const OUT_SPAN: u8 = 2;

/// Per AND/VS gate of a layer, whether its vector and its outputs are consecutive wires (read and
/// written 8 at a time).
pub(super) fn spans(c: &Circuit, layer: &Layer) -> Vec<u8> {
    let consecutive = |ws: &[Wire]| ws.len() >= 8 && ws.windows(2).all(|p| p[1] == p[0] + 1);
    layer
        .nonlinear
        .iter()
        .map(|&gi| {
            let (_, x, out) = parts(&c.gates()[gi]);
            (u8::from(consecutive(x)) * VECTOR_SPAN) | (u8::from(consecutive(out)) * OUT_SPAN)
        })
        .collect()
}

/// Party `me`'s links with every other party (in id order), per layer (empty for a layer with no
/// AND/VS gate).
pub(super) fn links(c: &Circuit, own: &Owners, starts: &[Vec<u32>], me: usize) -> Vec<Vec<Link>> {
    let peers: Vec<usize> = (0..c.parties()).filter(|&q| q != me).collect();
    c.layers()
        .iter()
        .zip(starts)
        .map(|(layer, starts)| {
            if layer.nonlinear.is_empty() {
                return Vec::new();
            }
            peers
                .iter()
                .map(|&q| Link {
                    // receiving: my scalar share times q's vector shares
                    recv: terms(c, own, layer, starts, me, q),
                    // sending: q's scalar share times my vector shares
                    send: terms(c, own, layer, starts, q, me),
                })
                .collect()
        })
        .collect()
}

/// The terms `a_i · x_j` of a layer (receiver `i`, sender `j`): gates not computed by one party
/// alone, with `a_i` possibly non-zero, covering the elements with `x_j` possibly non-zero.
fn terms(c: &Circuit, own: &Owners, layer: &Layer, starts: &[u32], i: usize, j: usize) -> Terms {
    let (mut terms, mut sel, mut all) = (Vec::new(), Vec::new(), true);
    for (k, &gi) in layer.nonlinear.iter().enumerate() {
        let (a, x, _) = parts(&c.gates()[gi]);
        if own.sole(a, x).is_some() || !own.may(a, i) {
            all = false;
            continue;
        }
        let before = sel.len();
        let mut n = 0;
        for e in (0..x.len() as u32).filter(|&e| own.may(x[e as usize], j)) {
            let fresh = sel.len() == before;
            match sel.last_mut() {
                Some((first, len)) if !fresh && *first + *len == e => *len += 1,
                _ => sel.push((e, 1)),
            }
            n += 1;
        }
        let t = Term { gate: k as u32, start: starts[k], n, sel: before as u32, runs: (sel.len() - before) as u32 };
        if n == x.len() as u32 {
            sel.truncate(before);
            terms.push(Term { sel: ALL, runs: 1, ..t });
        } else {
            all = false;
            if n > 0 {
                terms.push(t);
            }
        }
    }
    if all {
        Terms::All
    } else {
        Terms::List { terms, sel }
    }
}

/// Buffers kept across layers.
#[derive(Default)]
pub(super) struct Scratch {
    /// This party's shares of the layer's vectors, packed.
    x: Vec<u64>,
    /// The layer's products, packed.
    z: Vec<u64>,
    ka: Vec<u64>,
    kb: Vec<u64>,
    t: Vec<u64>,
    got: Vec<u64>,
}

/// Evaluates one layer's AND and VS gates on the wire shares `w`: the local terms, one round
/// with every peer if `exchange` (some gate is not one party's alone), the outputs written back.
#[allow(clippy::too_many_arguments)]
pub(super) fn eval(
    p: &mut Party,
    pre: &mut Preprocessed,
    c: &Circuit,
    layer: &Layer,
    (starts, spans): (&[u32], &[u8]),
    links: &[Link],
    exchange: bool,
    w: &mut [u8],
    s: &mut Scratch,
) -> Result<()> {
    let me = p.id();
    let gates: Vec<(Wire, &[Wire], &[Wire])> = layer.nonlinear.iter().map(|&gi| parts(&c.gates()[gi])).collect();
    gather(w, &gates, spans, s);
    if exchange {
        let peers = (0..p.n()).filter(|&q| q != me);
        for (q, link) in peers.clone().zip(links) {
            let msg = message(pre, q, link, starts, &gates, w, s);
            p.net().send(q, msg)?;
        }
        for (q, link) in peers.zip(links) {
            let got = p.net().recv(q)?;
            absorb(pre, q, link, starts, &gates, w, &got, s)?;
        }
    }
    // the products back onto the output wires
    let mut at = 0;
    for (&(_, _, out), &span) in gates.iter().zip(spans) {
        let mut k = 0;
        if span & OUT_SPAN != 0 {
            let o = out[0] as usize;
            for (c, dst) in w[o..o + out.len()].chunks_exact_mut(8).enumerate() {
                dst.copy_from_slice(&spread(get_bits(&s.z, at + 8 * c, 8)).to_le_bytes());
            }
            k = out.len() / 8 * 8;
        }
        for &o in &out[k..] {
            w[o as usize] = get_bits(&s.z, at + k, 1) as u8;
            k += 1;
        }
        at += out.len();
    }
    Ok(())
}

/// The 8 bytes (0 or 1, LSB first) of the low 8 bits of `x`.
fn spread(x: u64) -> u64 {
    let v = (x * 0x0101_0101_0101_0101) & 0x8040_2010_0804_0201;
    ((v + 0x7F7F_7F7F_7F7F_7F7F) >> 7) & 0x0101_0101_0101_0101
}

/// The bits of 8 bytes (each 0 or 1), the first byte's lowest.
fn gather8(bytes: [u8; 8]) -> u64 {
    u64::from_le_bytes(bytes).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Bits appended into words, up to 64 at a time (the gathered vectors, the messages).
struct Packer<'a> {
    out: &'a mut Vec<u64>,
    cur: u64,
    k: u32,
}

impl<'a> Packer<'a> {
    fn new(out: &'a mut Vec<u64>) -> Self {
        out.clear();
        Packer { out, cur: 0, k: 0 }
    }
    /// Appends the low `n ≤ 64` bits of `v` (higher bits are ignored).
    #[inline]
    fn push(&mut self, v: u64, n: u32) {
        let v = v & low_bits(n as usize);
        self.cur |= v << self.k;
        let room = 64 - self.k;
        if n >= room {
            self.out.push(self.cur);
            self.cur = if n > room { v >> room } else { 0 };
            self.k = n - room;
        } else {
            self.k += n;
        }
    }
    /// The last bits and a spare word (for reads across the end).
    fn finish(self) {
        self.out.extend([self.cur, 0]);
    }
}

/// Packs this party's shares of every vector element into `s.x` and the local terms
/// `a_me · x_me` into `s.z`, in one pass (one spare word each for reads across the end).
fn gather(w: &[u8], gates: &[(Wire, &[Wire], &[Wire])], spans: &[u8], s: &mut Scratch) {
    let mut xs = Packer::new(&mut s.x);
    let mut zs = Packer::new(&mut s.z);
    for (&(a, x, _), &span) in gates.iter().zip(spans) {
        let av = u64::from(w[a as usize]);
        let mut k = 0;
        if span & VECTOR_SPAN != 0 {
            let first = x[0] as usize;
            for bytes in w[first..first + x.len()].chunks_exact(8) {
                let v = gather8(bytes.try_into().expect("8 bytes"));
                xs.push(v, 8);
                zs.push(v & 0u64.wrapping_sub(av), 8);
            }
            k = x.len() / 8 * 8;
        }
        for &xw in &x[k..] {
            let b = u64::from(w[xw as usize]);
            xs.push(b, 1);
            zs.push(b & av, 1);
        }
    }
    xs.finish();
    zs.finish();
}

/// `n` bits of `G(key)` into `out` (whole words; bits past `n` are garbage): the key itself
/// for `n ≤ 128` (it is already a hash output), else the engine's PRG keyed by it.
fn stretch(key: Block, n: usize, out: &mut Vec<u64>) {
    out.clear();
    if n <= 128 {
        out.extend([key as u64, (key >> 64) as u64]);
    } else {
        out.resize(words_for(n), 0);
        Prg::new(&Seed(key.to_le_bytes())).fill_bytes(bytemuck::cast_slice_mut(out));
    }
}

/// A term's covered runs: where each starts in the layer's packed vector, and its length.
fn runs(t: Term, sel: &[ElemRun]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (all, some) =
        if t.sel == ALL { (Some((0, t.n)), &[][..]) } else { (None, &sel[t.sel as usize..][..t.runs as usize]) };
    all.into_iter().chain(some.iter().copied()).map(move |(e, len)| ((t.start + e) as usize, len as usize))
}

/// XORs `n` bits of packed `src` from bit `from` on into packed `dst` from bit `to` on.
fn xor_range(dst: &mut [u64], to: usize, src: &[u64], from: usize, n: usize) {
    for c in (0..n).step_by(64) {
        let len = (n - c).min(64);
        xor_bits(dst, to + c, get_bits(src, from + c, len), len);
    }
}

/// A term's covered bits of the packed `src`, packed into `out`.
fn gather_term(src: &[u64], t: Term, sel: &[ElemRun], out: &mut Vec<u64>) {
    out.clear();
    out.resize(words_for(t.n as usize) + 1, 0);
    let mut k = 0;
    for (at, len) in runs(t, sel) {
        xor_range(out, k, src, at, len);
        k += len;
    }
}

/// XORs the packed `bits` into a term's covered places of `dst`.
fn scatter_term(dst: &mut [u64], t: Term, sel: &[ElemRun], bits: &[u64]) {
    let mut k = 0;
    for (at, len) in runs(t, sel) {
        xor_range(dst, at, bits, k, len);
        k += len;
    }
}

/// To peer `q`: `e = a ⊕ c` for every term where this party receives, then `F = x ⊕ G(k0) ⊕
/// G(k1)` where it sends.
fn message(
    pre: &Preprocessed,
    q: usize,
    link: &Link,
    starts: &[u32],
    gates: &[(Wire, &[Wire], &[Wire])],
    w: &[u8],
    s: &mut Scratch,
) -> Vec<u8> {
    let ots = pre.peer(q);
    let (recv, send) = (&link.recv, &link.send);
    let bits = recv.bits(starts, true) + send.bits(starts, false);
    let mut words = Vec::with_capacity(words_for(bits) + 1);
    let mut msg = Packer::new(&mut words);
    for k in 0..recv.len(gates.len()) {
        let t = recv.get(k, starts);
        let a = w[gates[t.gate as usize].0 as usize];
        msg.push(u64::from(a ^ u8::from(ots.choices.get(ots.received + k))), 1);
    }
    for k in 0..send.len(gates.len()) {
        let t = send.get(k, starts);
        let [k0, k1] = ots.send[ots.sent + k];
        let n = t.n as usize;
        if t.sel == ALL && n <= 64 {
            msg.push(get_bits(&s.x, t.start as usize, n) ^ (k0 ^ k1) as u64, n as u32);
            continue;
        }
        gather_term(&s.x, t, send.sel(), &mut s.t);
        stretch(k0, n, &mut s.ka);
        stretch(k1, n, &mut s.kb);
        for c in 0..words_for(n) {
            msg.push(s.t[c] ^ s.ka[c] ^ s.kb[c], (n - 64 * c).min(64) as u32);
        }
    }
    msg.finish();
    let mut out: Vec<u8> = bytemuck::cast_slice(&words).to_vec();
    out.truncate(bits.div_ceil(8));
    out
}

/// From peer `q`: its `e` bits pick this party's key where it sends (its share `G(k_e)`), its
/// `F` bits where it receives give `a·F ⊕ G(k_c)`; both into the products.
#[allow(clippy::too_many_arguments)]
fn absorb(
    pre: &mut Preprocessed,
    q: usize,
    link: &Link,
    starts: &[u32],
    gates: &[(Wire, &[Wire], &[Wire])],
    w: &[u8],
    got: &[u8],
    s: &mut Scratch,
) -> Result<()> {
    let (recv, send) = (&link.recv, &link.send);
    let (es, fs) = (send.bits(starts, true), recv.bits(starts, false));
    if got.len() != (es + fs).div_ceil(8) {
        return Err(MpcError::Malformed {
            peer: q,
            reason: format!("{} bytes for a layer of {} bits", got.len(), es + fs),
        });
    }
    s.got.clear();
    s.got.extend(got.chunks(8).map(|b| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    }));
    s.got.push(0);
    let ots = pre.peer_mut(q);
    for k in 0..send.len(gates.len()) {
        let t = send.get(k, starts);
        let e = get_bits(&s.got, k, 1) as usize;
        let key = ots.send[ots.sent][e];
        ots.sent += 1;
        let n = t.n as usize;
        if t.sel == ALL && n <= 64 {
            xor_bits(&mut s.z, t.start as usize, key as u64, n);
        } else {
            stretch(key, n, &mut s.ka);
            scatter_term(&mut s.z, t, send.sel(), &s.ka);
        }
    }
    let mut f_at = es;
    for k in 0..recv.len(gates.len()) {
        let t = recv.get(k, starts);
        let key = ots.recv[ots.received];
        ots.received += 1;
        let a = 0u64.wrapping_sub(u64::from(w[gates[t.gate as usize].0 as usize]));
        let n = t.n as usize;
        if t.sel == ALL && n <= 64 {
            xor_bits(&mut s.z, t.start as usize, (get_bits(&s.got, f_at, n) & a) ^ key as u64, n);
        } else {
            stretch(key, n, &mut s.kb);
            s.t.clear();
            s.t.extend(
                (0..words_for(n)).map(|c| (get_bits(&s.got, f_at + 64 * c, (n - 64 * c).min(64)) & a) ^ s.kb[c]),
            );
            scatter_term(&mut s.z, t, recv.sel(), &s.t);
        }
        f_at += n;
    }
    Ok(())
}
