//! Rabbit's comparison (Makri et al.; paper 002, Protocols 1–3 and appendix 1): `[x ≤ 0]` from
//! one opening and two comparisons of public numbers with the same shared random bits, run side
//! by side. With `y` the input moved to `[0, M)`, `T` a public bound and `B = M − T`:
//!
//! `[y ≥ T] = [a < r] ⊕ [b < B] ⊕ [b < r]` for `a = (y + r) mod M`, `b = (a + B) mod M`,
//!
//! the three terms' integer sum being 0 or 1. Three variants differ in `M` and in how `r` is
//! drawn ([`Variant`]).

use argus_math::{BitVec, Fp, Ring};

use super::{check_width, circuits, convert, greater, Abb, Circuit};
use crate::error::{MpcError, Result};

/// Which Rabbit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `rabbit_slack` (Protocol 3): `M = 2^k` for `k`-bit inputs, `r` from `k` daBits plus
    /// `2^k·r_κ` (PRandInt of κ bits) so that `y + r + 2^k·r_κ` opens without wrapping: short
    /// comparisons, statistical security.
    Slack,
    /// `rabbit_fp` (Protocol 1): `M = q`, `r` from `⌈log₂ q⌉` daBits, which is uniform in F_q only
    /// up to the gap between q and the next power of two: needs q within `2^−κ` of it.
    Fp,
    /// `req_list` (Protocol 2): `M = q`, and `r` redrawn until it is below q (a comparison with q
    /// opened per draw): perfect security.
    RejectionList,
}

/// Rabbit's randomness for `n` inputs: `r` (F_q value and bit planes), the slack mask, and one
/// daBit per input for the conversion.
pub struct RabbitMask<A: Abb> {
    variant: Variant,
    r: A::Arith,
    planes: Vec<A::Bits>,
    high: Option<A::Arith>,
    conv: (A::Arith, A::Bits),
    circuit: Circuit,
    n: usize,
    k: u32,
    /// Draws of `r` refused by the rejection list (for tests and the bench).
    pub rejected: usize,
}

impl<A: Abb> RabbitMask<A> {
    /// For `n` inputs of `k` bits (the slack variant; the others take the whole field), `κ`
    /// bits of slack. The rejection list's comparisons with q run here, before the inputs.
    pub fn new(abb: &mut A, variant: Variant, n: usize, k: u32, kappa: u32, circuit: Circuit) -> Result<Self> {
        let f = *abb.field();
        let width = match variant {
            Variant::Slack => {
                check_width(&f, k, kappa)?;
                k
            }
            Variant::Fp | Variant::RejectionList => f.bits(),
        };
        if variant == Variant::Fp {
            // the chance that r ≥ q (and its bits disagree with its F_q value) is (2^w − q)/2^w
            let gap = (u128::MAX >> (128 - width)).wrapping_sub(f.p()).wrapping_add(1);
            if gap != 0 && (gap as f64).log2() > f64::from(width) - f64::from(kappa) {
                return Err(MpcError::InvalidParameter(format!(
                    "rabbit_fp needs q within 2^-{kappa} of 2^{width}; this q is {gap} below it (use the rejection list)"
                )));
            }
        }
        let w = width as usize;
        let (r_bits_q, r_bits) = abb.dabits(n * w)?;
        // plane j holds bit j of every r
        let mut q_planes: Vec<A::Arith> = (0..w).map(|j| abb.slice(&r_bits_q, j * n, n)).collect::<Result<_>>()?;
        let mut planes: Vec<A::Bits> = (0..w).map(|j| abb.slice_bits(&r_bits, j * n, n)).collect::<Result<_>>()?;
        let mut rejected = 0;
        if variant == Variant::RejectionList {
            // redraw every r ≥ q until none is left; only the redrawn ones are compared again
            let q = f.p();
            let mut pending: Vec<usize> = (0..n).collect();
            let mut check = planes.clone();
            while !pending.is_empty() {
                let below = greater(abb, &vec![q; pending.len()], &check, false, circuit)?;
                let below = abb.open_bits(&below)?;
                let refused: Vec<usize> =
                    pending.iter().enumerate().filter(|(i, _)| !below.get(*i)).map(|(_, &e)| e).collect();
                rejected += refused.len();
                if refused.is_empty() {
                    break;
                }
                let (fresh_q, fresh) = abb.dabits(refused.len() * w)?;
                let c = refused.len();
                check = Vec::with_capacity(w);
                for j in 0..w {
                    let new_q = abb.slice(&fresh_q, j * c, c)?;
                    let new_b = abb.slice_bits(&fresh, j * c, c)?;
                    q_planes[j] = splice(
                        abb,
                        &q_planes[j],
                        &new_q,
                        &refused,
                        n,
                        |abb, x, s, l| abb.slice(x, s, l),
                        |abb, p| abb.concat(p),
                    )?;
                    planes[j] = splice(
                        abb,
                        &planes[j],
                        &new_b,
                        &refused,
                        n,
                        |abb, x, s, l| abb.slice_bits(x, s, l),
                        |abb, p| Ok(abb.concat_bits(p)),
                    )?;
                    check.push(new_b);
                }
                pending = refused;
            }
        }
        // r = Σ 2^j·r_j by Horner's rule: additions only
        let mut r = abb.constant(&vec![0; n]);
        for bit in q_planes.iter().rev() {
            r = abb.add(&abb.add(&r, &r)?, bit)?;
        }
        let high = match variant {
            Variant::Slack => Some(abb.rand_int(kappa, n)?),
            _ => None,
        };
        let conv = abb.dabits(n)?;
        // the two comparisons of lteqz run side by side on the same planes
        abb.prepare(&circuits::comparison(w, true, circuit), 2 * n)?;
        Ok(RabbitMask { variant, r, planes, high, conv, circuit, n, k: width, rejected })
    }
}

/// `[x ≤ 0]` in F_q (the paper's LTEQZ, converted with a daBit): for the slack variant `x` has
/// the mask's `k` bits, for the others it is any field element read in the centred interval.
/// `1 + circuit.layers(width) + 1` rounds, `circuit` the mask's.
pub fn lteqz<A: Abb>(abb: &mut A, x: &A::Arith, mask: &RabbitMask<A>) -> Result<A::Arith> {
    let (n, circuit) = (mask.n, mask.circuit);
    if abb.len(x) != n {
        return Err(MpcError::InvalidParameter(format!("a Rabbit mask for {n} elements used on {}", abb.len(x))));
    }
    let f: Fp = *abb.field();
    let (modulus, offset) = match mask.variant {
        // y = x + 2^(k−1) in [0, 2^k); x ≤ 0 iff y < 2^(k−1) + 1
        Variant::Slack => (1u128 << mask.k, 1u128 << (mask.k - 1)),
        // y = x + (q−1)/2 in [0, q); x ≤ 0 iff y < (q−1)/2 + 1
        _ => (f.p(), f.p() / 2),
    };
    let t = offset + 1;
    let big_b = modulus - t;
    let mut masked = abb.add(x, &mask.r)?;
    if let Some(high) = &mask.high {
        masked = abb.add(&masked, &abb.scale(high, f.from_u128(modulus)))?;
    }
    let opened = abb.open(&abb.add(&masked, &abb.constant(&vec![f.from_u128(offset); n]))?)?;
    let a: Vec<u128> =
        opened.iter().map(|&v| if mask.variant == Variant::Slack { v & (modulus - 1) } else { v }).collect();
    let b: Vec<u128> = a.iter().map(|&a| add_mod(a, big_b, modulus)).collect();
    // [a < r] and [b < r] side by side: ¬[· ≥ r]
    let doubled: Vec<A::Bits> = mask.planes.iter().map(|p| abb.concat_bits(&[p, p])).collect();
    let both: Vec<u128> = a.iter().chain(&b).copied().collect();
    let ge = greater(abb, &both, &doubled, true, circuit)?;
    let (ge_a, ge_b) = (abb.slice_bits(&ge, 0, n)?, abb.slice_bits(&ge, n, n)?);
    // [y ≥ T] = ¬ge_a ⊕ [b < B] ⊕ ¬ge_b; [x ≤ 0] = ¬[y ≥ T]
    let mut w = abb.xor(&ge_a, &ge_b)?;
    let public: Vec<bool> = b.iter().map(|&b| b < big_b).collect();
    w = abb.xor_public(&w, &BitVec::from_bools(&public))?;
    let lteqz = abb.not(&w);
    convert(abb, &lteqz, &mask.conv)
}

/// `x` (n elements) with element `at[i]` replaced by `fresh[i]` (`at` ascending), by slices.
fn splice<A: Abb, T>(
    abb: &A,
    x: &T,
    fresh: &T,
    at: &[usize],
    n: usize,
    slice: impl Fn(&A, &T, usize, usize) -> Result<T>,
    concat: impl Fn(&A, &[&T]) -> Result<T>,
) -> Result<T> {
    let mut parts = Vec::with_capacity(2 * at.len() + 1);
    let mut from = 0;
    for (i, &e) in at.iter().enumerate() {
        parts.push(slice(abb, x, from, e - from)?);
        parts.push(slice(abb, fresh, i, 1)?);
        from = e + 1;
    }
    parts.push(slice(abb, x, from, n - from)?);
    concat(abb, &parts.iter().collect::<Vec<_>>())
}

/// `(a + b) mod m` for `a, b < m` without overflow.
fn add_mod(a: u128, b: u128, m: u128) -> u128 {
    if a >= m - b {
        a - (m - b)
    } else {
        a + b
    }
}
