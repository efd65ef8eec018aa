//! The bitwise circuits of paper 002 in the boolean IR ([`crate::gmw`]), so that every setting
//! evaluates the same gates: by AND layers on secret-shared bits (Shamir) or garbled (FT).
//! Inputs: party 0's are public bit planes (`a`, known to both once opened), party 1's the
//! shared planes of `r`; both least significant first.

use super::Circuit as Form;
use crate::gmw::{Builder, Circuit, Wire};

/// `[a > r]` (`[a ≥ r]` with `or_equal`) for `bits`-bit `r`, with a last public input `top`
/// (`a ≥ 2^bits`, greater than any such `r`) or'ed into the result. Inputs: `a` (`bits`),
/// `top`, then `r` (`bits`); one output. [`Form::layers`] AND layers on shared bits when `a` is
/// public: `a_j ∧ ¬r_j` and the comparison of equal bits are free.
pub fn comparison(bits: usize, or_equal: bool, form: Form) -> Circuit {
    let mut b = Builder::new(2);
    let a = b.input(0, bits);
    let top = b.input(0, 1)[0];
    let r = b.input(1, bits);
    // per bit j: gt_j = a_j ∧ ¬r_j, eq_j = ¬(a_j ⊕ r_j); bit 0's "greater" is a_0 ∨ ¬r_0 =
    // ¬(¬a_0 ∧ r_0) when equality counts
    let mut groups: Vec<(Wire, Option<Wire>)> = Vec::with_capacity(bits);
    for j in 0..bits {
        let gt = if j == 0 && or_equal {
            let na = b.not(a[0]);
            let t = b.and(na, r[0]);
            b.not(t)
        } else {
            let nr = b.not(r[j]);
            b.and(a[j], nr)
        };
        // the lowest group's equality is never needed
        let eq = (j > 0).then(|| {
            let x = b.xor(a[j], r[j]);
            b.not(x)
        });
        groups.push((gt, eq));
    }
    let c = match form {
        Form::AndNot => tree(&mut b, groups),
        Form::AndXor => ripple(&mut b, groups),
    };
    let out = match c {
        // c ∨ top = ¬(¬c ∧ ¬top)
        Some(c) => {
            let (nc, nt) = (b.not(c), b.not(top));
            let t = b.and(nc, nt);
            b.not(t)
        }
        None => top,
    };
    b.output(&[out]);
    b.build().expect("a well-formed comparison")
}

/// The log-depth comparator (`AndNot`): adjacent groups, low and high, merge into
/// `(c_hi ⊕ eq_hi ∧ c_lo, eq_hi ∧ eq_lo)`; a layer's ANDs are independent.
fn tree(b: &mut Builder, mut groups: Vec<(Wire, Option<Wire>)>) -> Option<Wire> {
    while groups.len() > 1 {
        let mut next = Vec::with_capacity(groups.len().div_ceil(2));
        for pair in groups.chunks(2) {
            match pair {
                [(c_lo, eq_lo), (c_hi, eq_hi)] => {
                    let eq_hi = eq_hi.expect("only the lowest group lacks eq");
                    let carry = b.and(eq_hi, *c_lo);
                    let c = b.xor(*c_hi, carry);
                    let eq = eq_lo.map(|e| b.and(eq_hi, e));
                    next.push((c, eq));
                }
                [odd] => next.push(*odd),
                _ => unreachable!("chunks of two"),
            }
        }
        groups = next;
    }
    groups.pop().map(|g| g.0)
}

/// The comparator as synthesised (`AndXor`): `c ← c_j ⊕ eq_j ∧ c` from bit 1 up.
fn ripple(b: &mut Builder, groups: Vec<(Wire, Option<Wire>)>) -> Option<Wire> {
    let mut it = groups.into_iter();
    let (mut c, _) = it.next()?;
    for (cj, eqj) in it {
        let carry = b.and(eqj.expect("only the lowest group lacks eq"), c);
        c = b.xor(cj, carry);
    }
    Some(c)
}

/// The bits of `(a − r) mod 2^bits` (a subtractor: the conversion of `rabbit_conv`). Inputs:
/// `a` (`bits`), then `r` (`bits`); `bits` outputs, least significant first. The borrows
/// `β_{j+1} = g_j ⊕ p_j ∧ β_j` (generate `g_j = ¬a_j ∧ r_j`, propagate `p_j = ¬(a_j ⊕ r_j)`)
/// by a ripple (`AndXor`, `bits − 1` layers) or a Sklansky prefix (`AndNot`, `⌈log₂ bits⌉`).
pub fn subtraction(bits: usize, form: Form) -> Circuit {
    let mut b = Builder::new(2);
    let a = b.input(0, bits);
    let r = b.input(1, bits);
    let mut g = Vec::with_capacity(bits);
    let mut p = Vec::with_capacity(bits);
    let mut diff = Vec::with_capacity(bits);
    for j in 0..bits {
        let na = b.not(a[j]);
        g.push(b.and(na, r[j]));
        let x = b.xor(a[j], r[j]);
        diff.push(x);
        p.push(b.not(x));
    }
    // prefix[j] = (G, P) over bits 0..=j: the borrow into bit j + 1 is G
    let mut prefix: Vec<(Wire, Wire)> = g.iter().copied().zip(p.iter().copied()).collect();
    match form {
        Form::AndXor => {
            for j in 1..bits {
                let (gl, _) = prefix[j - 1];
                let (gj, pj) = prefix[j];
                let t = b.and(pj, gl);
                prefix[j] = (b.xor(gj, t), pj);
            }
        }
        Form::AndNot => {
            // Sklansky: at span s, each block's upper half takes the top of its lower half
            let mut s = 1;
            while s < bits {
                for j in 0..bits {
                    if j & s != 0 {
                        let low = (j & !(s - 1)) - 1;
                        let (gl, pl) = prefix[low];
                        let (gj, pj) = prefix[j];
                        let t = b.and(pj, gl);
                        let gn = b.xor(gj, t);
                        let pn = b.and(pj, pl);
                        prefix[j] = (gn, pn);
                    }
                }
                s <<= 1;
            }
        }
    }
    let mut out = Vec::with_capacity(bits);
    for j in 0..bits {
        out.push(if j == 0 { diff[0] } else { b.xor(diff[j], prefix[j - 1].0) });
    }
    b.output(&out);
    b.build().expect("a well-formed subtractor")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits_of(x: u128, k: usize) -> Vec<bool> {
        (0..k).map(|j| x >> j & 1 == 1).collect()
    }

    #[test]
    fn the_comparison_circuits_agree_with_the_plaintext() {
        for form in [Form::AndNot, Form::AndXor] {
            for bits in [1usize, 2, 3, 5, 8] {
                for or_equal in [false, true] {
                    let c = comparison(bits, or_equal, form);
                    for a in 0..(1u128 << (bits + 1)) {
                        for r in 0..(1u128 << bits) {
                            let top = a >> bits != 0;
                            let mut x = bits_of(a, bits);
                            x.push(top);
                            let got = c.eval(&[x, bits_of(r, bits)]).unwrap()[0];
                            assert_eq!(got, if or_equal { a >= r } else { a > r }, "{form:?} {bits} {a} {r}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_subtractors_agree_with_the_plaintext() {
        for form in [Form::AndNot, Form::AndXor] {
            for bits in [1usize, 2, 3, 5, 7, 8] {
                let c = subtraction(bits, form);
                let m = 1u128 << bits;
                for a in 0..m {
                    for r in 0..m {
                        let got = c.eval(&[bits_of(a, bits), bits_of(r, bits)]).unwrap();
                        assert_eq!(got, bits_of((a + m - r) % m, bits), "{form:?} {bits} {a} {r}");
                    }
                }
            }
        }
    }
}
