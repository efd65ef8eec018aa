//! Selection and aggregation: multiplexers and the OR-tree (paper 000 section 4.2).

use argus_math::Ring;

use super::binary::and;
use super::ot::bit_inject;
use super::{arith::mul, check_len, Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// `c ? x : y` on shared bits: `y ^ (c & (x ^ y))`, one AND per bit.
pub fn mux_bits(p: &mut Party, c: &Rep3Bits, x: &Rep3Bits, y: &Rep3Bits) -> Result<Rep3Bits> {
    check_len(c.len(), x.len())?;
    let d = x.xor(y)?;
    y.xor(&and(p, c, &d)?)
}

/// `c ? x : y` on shared ring elements: inject `c`, then `y + c·(x - y)` (three rounds).
pub fn mux<R: Ring>(p: &mut Party, c: &Rep3Bits, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
    x.check_compatible(y)?;
    check_len(c.len(), x.len())?;
    let ci = bit_inject(p, c, x.ring())?;
    y.add(&mul(p, &ci, &x.sub(y)?)?)
}

/// OR of `bits.len() / groups` elements for each of `groups` independent groups, as a binary tree
/// of depth `ceil(log2(elements))` (`x | y = x ^ y ^ (x & y)`). Layout is element-major: bit
/// `e·groups + g` is element `e` of group `g`, so each level folds the vector in half.
pub fn or_tree(p: &mut Party, bits: &Rep3Bits, groups: usize) -> Result<Rep3Bits> {
    if groups == 0 || !bits.len().is_multiple_of(groups) {
        return Err(MpcError::InvalidParameter(format!("{} bits do not split into {groups} groups", bits.len())));
    }
    let mut cur = bits.clone();
    let mut elems = bits.len() / groups;
    if elems == 0 {
        return Ok(Rep3Bits::zeros(groups));
    }
    while elems > 1 {
        let half = elems / 2;
        let lo = cur.slice(0, half * groups)?;
        let hi = cur.slice(half * groups, half * groups)?;
        let both = and(p, &lo, &hi)?;
        let or = lo.xor(&hi)?.xor(&both)?;
        cur = if elems % 2 == 1 { Rep3Bits::concat(&[&or, &cur.slice(2 * half * groups, groups)?]) } else { or };
        elems = elems.div_ceil(2);
    }
    Ok(cur)
}
