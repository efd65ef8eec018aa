//! Circuits of the paper's evaluation (section 9): the log-depth string equality of SZ13
//! (Schneider–Zohner) and its branching form, `b` copies of it under a SWITCH chosen by the
//! parties' secret index; and the standard adder and comparator.

use super::builder::{Branch, Branching, Builder};
use super::circuit::{Circuit, CircuitError, Wire};

/// `x == y` bit for bit: `¬(x_k ⊕ y_k)` for every k, then a balanced tree of ANDs (depth
/// `ceil(log2 n)`, `n − 1` ANDs).
pub fn string_eq(b: &mut Builder, x: &[Wire], y: &[Wire]) -> Wire {
    // all the XORs, then all the NOTs: each a run of gates over consecutive wires
    let diff: Vec<Wire> = x.iter().zip(y).map(|(&a, &c)| b.xor(a, c)).collect();
    let mut level: Vec<Wire> = diff.iter().map(|&d| b.not(d)).collect();
    while level.len() > 1 {
        let mut next: Vec<Wire> = level.chunks_exact(2).map(|p| b.and(p[0], p[1])).collect();
        if level.len() % 2 == 1 {
            next.push(*level.last().expect("odd length"));
        }
        level = next;
    }
    level[0]
}

/// The one-hot vector of `2^t` bits for the index given by its `t` bits (LSB first): bit `i` is
/// set where the index is `i`. `2^t − 2` ANDs in `t − 1` layers.
pub fn one_hot(b: &mut Builder, index: &[Wire]) -> Vec<Wire> {
    let Some((&first, rest)) = index.split_first() else { return Vec::new() };
    let mut sel = vec![b.not(first), first];
    for &s in rest {
        // e·¬s = e ⊕ e·s: one AND per entry
        let hi: Vec<Wire> = sel.iter().map(|&e| b.and(e, s)).collect();
        let lo: Vec<Wire> = sel.iter().zip(&hi).map(|(&e, &h)| b.xor(e, h)).collect();
        sel = lo.into_iter().chain(hi).collect();
    }
    sel
}

/// The benchmark circuit: party 0 gives `x`, party 1 gives `y` (`bits` each), and every party
/// `log2(branches)` bits whose XOR picks the branch; each of the `branches` (a power of two)
/// branches computes `x == y`. One branch: the equality alone.
pub fn branching_string_eq(
    parties: usize,
    bits: usize,
    branches: usize,
    how: Branching,
) -> Result<Circuit, CircuitError> {
    if !branches.is_power_of_two() || parties < 2 || bits == 0 {
        return Err(CircuitError {
            gate: 0,
            reason: format!("{branches} branches of {bits}-bit strings for {parties} parties: need a power of two, 2+ parties, 1+ bits"),
        });
    }
    let mut b = Builder::new(parties);
    let x = b.input(0, bits);
    let y = b.input(1, bits);
    let t = branches.trailing_zeros() as usize;
    let shares: Vec<Vec<Wire>> = (0..parties).map(|q| b.input(q, t)).collect();
    let index: Vec<Wire> = (0..t).map(|k| shares[1..].iter().fold(shares[0][k], |acc, s| b.xor(acc, s[k]))).collect();
    let out = if branches == 1 {
        string_eq(&mut b, &x, &y)
    } else {
        let select = one_hot(&mut b, &index);
        let inputs: Vec<Wire> = x.iter().chain(&y).copied().collect();
        let eq = |b: &mut Builder, ins: &[Wire]| {
            let (x, y) = ins.split_at(ins.len() / 2);
            vec![string_eq(b, x, y)]
        };
        let all: Vec<Branch> = vec![&eq; branches];
        b.switch(&select, &inputs, &all, how)[0]
    };
    b.output(&[out]);
    b.build()
}

/// `x + y mod 2^n` (bits LSB first): a ripple-carry adder, one AND per bit but the last
/// (`c' = c ⊕ ((x ⊕ c) ∧ (y ⊕ c))`).
pub fn add(b: &mut Builder, x: &[Wire], y: &[Wire]) -> Vec<Wire> {
    let mut out = Vec::with_capacity(x.len());
    let mut carry: Option<Wire> = None;
    for (k, (&a, &c)) in x.iter().zip(y).enumerate() {
        let s = b.xor(a, c);
        let Some(cin) = carry else {
            out.push(s);
            carry = (k + 1 < x.len()).then(|| b.and(a, c));
            continue;
        };
        out.push(b.xor(s, cin));
        if k + 1 < x.len() {
            let (p, q) = (b.xor(a, cin), b.xor(c, cin));
            let t = b.and(p, q);
            carry = Some(b.xor(cin, t));
        }
    }
    out
}

/// `x < y` as unsigned numbers (bits LSB first, at least one): the carry out of `¬x + y`, one
/// AND per bit.
pub fn less_than(b: &mut Builder, x: &[Wire], y: &[Wire]) -> Wire {
    // x < y ⟺ the carry out of ¬x + y is 1: majority(¬x_k, y_k, c) bit by bit from c = 0
    let mut carry: Option<Wire> = None;
    for (&a, &c) in x.iter().zip(y) {
        let na = b.not(a);
        carry = Some(match carry {
            None => b.and(na, c),
            Some(cin) => {
                let (p, q) = (b.xor(na, cin), b.xor(c, cin));
                let t = b.and(p, q);
                b.xor(cin, t)
            }
        });
    }
    carry.expect("at least one bit")
}
