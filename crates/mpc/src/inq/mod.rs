//! Inequality tests and ReLU over a prime field F_q (paper 002): Catrina and de Hoogh's
//! `mod2m` and constant-round LTZ with Rabbit's bitwise comparison (Protocols 4 and 5) or with
//! their own comparison on F_q bits (`lsss_ltz`), ReLU on them (Protocol 6), and the Rabbit
//! family ([`rabbit`], Protocols 1–3, and [`rabbit_conv`]), written once against the paper's
//! arithmetic black box ([`Abb`]) so that each setting plugs in its own sharing:
//! [`shamir::ShamirAbb`] (3 parties, honest majority) and [`ft::FtAbb`] (2 parties, SPDZ-style
//! MACs, garbled comparisons). The bitwise circuits are built once ([`circuits`]).
//!
//! Values are signed integers in the centred interval, `−x` encoded as `q − x`; an input of `k`
//! bits lies in `[−2^(k−1), 2^(k−1))`. Masks are statistical with `κ` bits of slack, so a field
//! needs `q > 2^(k + κ + 3)` ([`check_width`]). Fixed-point numbers (Catrina–Saxena) are their
//! mantissas `v = x·2^f` ([`fixed`], with probabilistic truncation); ReLU acts on the mantissa.
//!
//! Each protocol splits into randomness made before the inputs are known ([`Mask`], from
//! daBits — a random bit shared both in F_q and in F_2 — and a bounded random integer) and an
//! online part whose rounds the tests assert: one opening, the bitwise comparison's AND layers
//! ([`Circuit`]; one garbler's message in FT), one opening to convert its F_2 result to F_q.

pub mod circuits;
pub mod fixed;
pub mod ft;
pub mod rabbit;
pub mod shamir;
#[cfg(test)]
mod tests;

use argus_math::{BitVec, Field, Fp, Ring};

use crate::error::{MpcError, Result};
pub use crate::gmw::Circuit as BoolCircuit;

/// `[a > r]` (or `[a ≥ r]` with `or_equal`) per element, for public `a` and `r` given by its
/// bit planes (least significant first, `r.len()` bits): paper 002's `bitwise_lteq` is its
/// negation. [`Circuit::layers`] rounds in a secret-shared boolean setting.
pub fn greater<A: Abb>(abb: &mut A, a: &[u128], r: &[A::Bits], or_equal: bool, circuit: Circuit) -> Result<A::Bits> {
    let bits = r.len();
    let mut public = BitVec::planes_of(a, bits);
    // a ≥ 2^bits: greater than any r of these bits
    public.push(BitVec::from_bools(&a.iter().map(|&a| bits < 128 && a >> bits != 0).collect::<Vec<_>>()));
    let c = circuits::comparison(bits, or_equal, circuit);
    Ok(abb.evaluate(&c, &public, r)?.pop().expect("one output"))
}

/// Opens `x` to every party after checking everything opened before ([`Abb::check`]): the way
/// a result leaves the black box.
pub fn reveal<A: Abb>(abb: &mut A, x: &A::Arith) -> Result<Vec<u128>> {
    let v = abb.open(x)?;
    abb.check()?;
    Ok(v)
}

/// The bitwise comparison's circuit form (paper 002, section 5): the same comparison of a public
/// number with shared bits, as synthesised (`AndXor`: one carry after the other, `k − 1` AND
/// layers) or with the depth reduced (`AndNot`: a log-depth tree, `⌈log₂ k⌉` layers — the form
/// the paper finds better for secret sharing, where every layer is a round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Circuit {
    /// The ripple form: `k − 1` layers of one AND each.
    AndXor,
    /// The log-depth tree: `⌈log₂ k⌉` layers.
    AndNot,
}

impl Circuit {
    /// AND layers (rounds, in a secret-shared boolean setting) of a `k`-bit comparison.
    pub fn layers(self, k: u32) -> u32 {
        match self {
            Circuit::AndXor => k.saturating_sub(1),
            Circuit::AndNot => k.max(1).next_power_of_two().trailing_zeros(),
        }
    }
}

/// The paper's arithmetic black box (its Table 1): a setting's sharings of F_q vectors
/// (`Arith`) and of F_2 vectors (`Bits`), with what the comparisons need of them.
pub trait Abb {
    /// Shares of a vector of F_q elements.
    type Arith: Clone;
    /// Shares of a vector of bits.
    type Bits: Clone;

    /// F_q.
    fn field(&self) -> &Fp;
    /// This party's traffic so far (subtract two readings to measure a call).
    fn stats(&self) -> argus_net::Stats;
    /// The number of elements of `x`.
    fn len(&self, x: &Self::Arith) -> usize;
    /// The public vector `c` as a sharing (no communication).
    fn constant(&self, c: &[u128]) -> Self::Arith;
    /// `x + y` (local).
    fn add(&self, x: &Self::Arith, y: &Self::Arith) -> Result<Self::Arith>;
    /// `x − y` (local).
    fn sub(&self, x: &Self::Arith, y: &Self::Arith) -> Result<Self::Arith>;
    /// `c·x` for one public scalar (local).
    fn scale(&self, x: &Self::Arith, c: u128) -> Self::Arith;
    /// `c ⊙ x` for a public vector (local).
    fn mul_public(&self, x: &Self::Arith, c: &[u128]) -> Result<Self::Arith>;
    /// `x[start..start + n]`.
    fn slice(&self, x: &Self::Arith, start: usize, n: usize) -> Result<Self::Arith>;
    /// The parts one after the other.
    fn concat(&self, parts: &[&Self::Arith]) -> Result<Self::Arith>;
    /// `x ⊙ y` (one round).
    fn mul(&mut self, x: &Self::Arith, y: &Self::Arith) -> Result<Self::Arith>;
    /// Opens `x` to every party (one round).
    fn open(&mut self, x: &Self::Arith) -> Result<Vec<u128>>;

    /// `a ⊕ b` (local).
    fn xor(&self, a: &Self::Bits, b: &Self::Bits) -> Result<Self::Bits>;
    /// `¬a` (local).
    fn not(&self, a: &Self::Bits) -> Self::Bits;
    /// `a ⊕ c` for public bits (local).
    fn xor_public(&self, a: &Self::Bits, c: &BitVec) -> Result<Self::Bits>;
    /// `b[start..start + n]`.
    fn slice_bits(&self, b: &Self::Bits, start: usize, n: usize) -> Result<Self::Bits>;
    /// The parts one after the other.
    fn concat_bits(&self, parts: &[&Self::Bits]) -> Self::Bits;
    /// Opens `b` to every party (one round).
    fn open_bits(&mut self, b: &Self::Bits) -> Result<BitVec>;
    /// Evaluates the boolean circuit `c` ([`circuits`]) on `n` instances: its party-0 inputs
    /// are the public planes `public`, its party-1 inputs the shared planes `shared`, each in
    /// the order of its INPUT gates. Returns its outputs, shared.
    fn evaluate(&mut self, c: &BoolCircuit, public: &[BitVec], shared: &[Self::Bits]) -> Result<Vec<Self::Bits>>;
    /// Announces that `c` will be evaluated on `n` instances whose inputs are not known yet: a
    /// setting that can work ahead (FT(OG) garbles it now) does so. Default: nothing.
    fn prepare(&mut self, _c: &BoolCircuit, _n: usize) -> Result<()> {
        Ok(())
    }
    /// Announces `n` products ([`Abb::mul`]) to come: FT makes their Beaver triples now.
    /// Default: nothing.
    fn prepare_products(&mut self, _n: usize) -> Result<()> {
        Ok(())
    }
    /// Checks that every value opened so far is the one the parties hold (FT: the MAC check),
    /// before anything is revealed; a deviation ends the session with [`MpcError::Abort`].
    /// Default: nothing to check (honest majority, semi-honest).
    fn check(&mut self) -> Result<()> {
        Ok(())
    }

    /// `n` daBits: uniform bits shared in F_q and in F_2 alike.
    fn dabits(&mut self, n: usize) -> Result<(Self::Arith, Self::Bits)>;
    /// `n` random integers below `3·2^bits`, each hiding like a uniform one below `2^bits`
    /// (PRandInt: a statistical mask, not a uniform value).
    fn rand_int(&mut self, bits: u32, n: usize) -> Result<Self::Arith>;
}

/// Refuses a field too small for `k`-bit inputs with `κ` bits of slack: the masked value of
/// [`mod2m`] is below `2^k + 3·2^(k + κ)` and must not wrap around q.
pub fn check_width(field: &Fp, k: u32, kappa: u32) -> Result<()> {
    if k < 2 || k + kappa + 3 > field.bits() - 1 {
        return Err(MpcError::InvalidParameter(format!(
            "{k}-bit inputs with {kappa} bits of slack need 2 ≤ k and k + κ + 3 < {} (the field's bits)",
            field.bits()
        )));
    }
    Ok(())
}

/// The randomness of one [`mod2m`] over `n` elements, made before the inputs are known: `m`
/// daBits per element (`r'`, below 2^m, in F_q and as bit planes), the high mask `r''`
/// (PRandInt of `k + κ − m` bits) and one daBit per element for the conversion.
pub struct Mask<A: Abb> {
    low: A::Arith,
    /// `r' + 2^m·r'' + 2^(k−1)`: what the input is masked with before the opening.
    pad: A::Arith,
    low_planes: Vec<A::Arith>,
    planes: Vec<A::Bits>,
    conv: (A::Arith, A::Bits),
    bitwise: Bitwise,
    n: usize,
    k: u32,
    m: u32,
}

impl<A: Abb> Mask<A> {
    /// For `n` elements of `k` bits, `m < k` low bits, `κ` bits of slack, and the comparison
    /// `bitwise` (announced to the black box: its circuit, or its products).
    pub fn new(abb: &mut A, n: usize, k: u32, m: u32, kappa: u32, bitwise: Bitwise) -> Result<Self> {
        if m >= k {
            return Err(MpcError::InvalidParameter(format!("mod 2^{m} of {k}-bit inputs: need 0 < m < k")));
        }
        let mask = Self::with_low_bits(abb, n, k, m, kappa, bitwise)?;
        match bitwise {
            Bitwise::Binary(circuit) => abb.prepare(&circuits::comparison(m as usize, true, circuit), n)?,
            Bitwise::Arithmetic(circuit) => abb.prepare_products(n * arith_products(m as usize, circuit))?,
        }
        Ok(mask)
    }

    /// [`Mask::new`] with `m = k − 1` and the product of ReLU announced too.
    pub fn for_relu(abb: &mut A, n: usize, k: u32, kappa: u32, bitwise: Bitwise) -> Result<Self> {
        let mask = Self::new(abb, n, k, k - 1, kappa, bitwise)?;
        abb.prepare_products(n)?;
        Ok(mask)
    }

    /// The mask of [`rabbit_conv`]: all `k` low bits from daBits, `κ` bits of slack above.
    pub fn conversion(abb: &mut A, n: usize, k: u32, kappa: u32, circuit: Circuit) -> Result<Self> {
        let mask = Self::with_low_bits(abb, n, k, k, kappa, Bitwise::Binary(circuit))?;
        abb.prepare(&circuits::subtraction(k as usize, circuit), n)?;
        Ok(mask)
    }

    pub(crate) fn with_low_bits(abb: &mut A, n: usize, k: u32, m: u32, kappa: u32, bitwise: Bitwise) -> Result<Self> {
        check_width(abb.field(), k, kappa)?;
        if m == 0 {
            return Err(MpcError::InvalidParameter(format!("mod 2^{m} of {k}-bit inputs: need 0 < m < k")));
        }
        let (q_bits, bits) = abb.dabits(n * (m as usize + 1))?;
        // plane i is daBits i·n .. (i+1)·n; the last plane converts
        let mut low = abb.constant(&vec![0; n]);
        let (mut planes, mut low_planes) = (Vec::with_capacity(m as usize), Vec::with_capacity(m as usize));
        for i in 0..m as usize {
            low_planes.push(abb.slice(&q_bits, i * n, n)?);
            planes.push(abb.slice_bits(&bits, i * n, n)?);
        }
        // r' = Σ 2^i·r_i by Horner's rule: additions only
        for bit in low_planes.iter().rev() {
            low = abb.add(&abb.add(&low, &low)?, bit)?;
        }
        let at = m as usize * n;
        let conv = (abb.slice(&q_bits, at, n)?, abb.slice_bits(&bits, at, n)?);
        let high = abb.rand_int(k + kappa - m, n)?;
        let pad = abb.add(&abb.add(&low, &abb.scale(&high, 1 << m))?, &abb.constant(&vec![1 << (k - 1); n]))?;
        Ok(Mask { low, pad, low_planes, planes, conv, bitwise, n, k, m })
    }
}

/// `[b]_q` from `[b]_2` with a daBit `(r_q, r_2)` (the paper's `conv_sint`): open `c = b ⊕ r`,
/// then `b = c + r − 2·c·r` with `c` public. One round.
pub fn convert<A: Abb>(abb: &mut A, b: &A::Bits, (r_q, r_2): &(A::Arith, A::Bits)) -> Result<A::Arith> {
    let c = abb.open_bits(&abb.xor(b, r_2)?)?;
    let f = *abb.field();
    let n = c.len();
    let scale: Vec<u128> = (0..n).map(|i| if c.get(i) { f.neg(f.one()) } else { f.one() }).collect();
    let offset: Vec<u128> = (0..n).map(|i| u128::from(c.get(i))).collect();
    abb.add(&abb.mul_public(r_q, &scale)?, &abb.constant(&offset))
}

/// Where a protocol's bitwise comparison runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bitwise {
    /// On the F_2 sharing, converted to F_q by a daBit after (paper 002's protocols).
    Binary(Circuit),
    /// On the daBits' F_q side, one product per AND, no conversion (Catrina and de Hoogh's
    /// original LSSS form: `lsss_ltz`).
    Arithmetic(Circuit),
}

impl Bitwise {
    /// Online rounds of a `k`-bit comparison with its result in F_q.
    pub fn rounds(self, k: u32) -> u32 {
        match self {
            Bitwise::Binary(c) => c.layers(k) + 1,
            Bitwise::Arithmetic(c) => c.layers(k),
        }
    }
}

/// `x mod 2^m` (in `[0, 2^m)`) of `k`-bit signed `x` (paper 002, Protocol 4; Catrina and de
/// Hoogh's Mod2m with Rabbit's bitwise comparison): open `a = 2^(k−1) + x + r' + 2^m·r''`, then
/// `x mod 2^m = a' − r' + 2^m·[a' < r']` for `a' = a mod 2^m`. `1 + bitwise.rounds(m)` rounds.
pub fn mod2m<A: Abb>(abb: &mut A, x: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    let (n, m, bitwise) = (mask.n, mask.m, mask.bitwise);
    check_len(n, x, abb)?;
    if m == mask.k {
        return Err(MpcError::InvalidParameter("a conversion mask used for mod 2^m".into()));
    }
    let a = abb.open(&abb.add(x, &mask.pad)?)?;
    let low: Vec<u128> = a.iter().map(|&a| a & ((1 << m) - 1)).collect();
    // [a' < r'] = ¬[a' ≥ r']
    let u = match bitwise {
        Bitwise::Binary(circuit) => {
            let ge = greater(abb, &low, &mask.planes, true, circuit)?;
            convert(abb, &abb.not(&ge), &mask.conv)?
        }
        Bitwise::Arithmetic(circuit) => {
            let ge = greater_arith(abb, &low, &mask.low_planes, true, circuit)?;
            one_minus(abb, &ge)?
        }
    };
    abb.add(&abb.sub(&abb.constant(&low), &mask.low)?, &abb.scale(&u, 1 << m))
}

/// `1 − b` (local).
pub fn one_minus<A: Abb>(abb: &A, b: &A::Arith) -> Result<A::Arith> {
    abb.sub(&abb.constant(&vec![1; abb.len(b)]), b)
}

/// [`greater`] on bits shared in F_q (each plane's elements 0 or 1): `a_j ∧ r` is a public
/// multiple, `a_j ⊕ r = a_j + r − 2·a_j·r`, and a layer's ANDs are one batched product. The
/// merge `c_hi ⊕ eq_hi·c_lo` is a sum, its two terms never both 1.
pub fn greater_arith<A: Abb>(
    abb: &mut A,
    a: &[u128],
    r: &[A::Arith],
    or_equal: bool,
    circuit: Circuit,
) -> Result<A::Arith> {
    let f = *abb.field();
    let n = a.len();
    let (one, minus_one) = (f.one(), f.neg(f.one()));
    let mut groups: Vec<(A::Arith, A::Arith)> = Vec::with_capacity(r.len());
    for (j, rj) in r.iter().enumerate() {
        let aj: Vec<u128> = a.iter().map(|&a| a >> j & 1).collect();
        let c = if j == 0 && or_equal {
            // a ∨ ¬r = 1 − (1 − a)·r
            let not_a: Vec<u128> = aj.iter().map(|&b| 1 - b).collect();
            one_minus(abb, &abb.mul_public(rj, &not_a)?)?
        } else {
            // a·(1 − r) = a − a·r
            let minus_a: Vec<u128> = aj.iter().map(|&b| if b == 1 { minus_one } else { 0 }).collect();
            abb.add(&abb.mul_public(rj, &minus_a)?, &abb.constant(&aj))?
        };
        // 1 − (a + r − 2ar) = (1 − a) + r·(2a − 1)
        let scale: Vec<u128> = aj.iter().map(|&b| if b == 1 { one } else { minus_one }).collect();
        let base: Vec<u128> = aj.iter().map(|&b| 1 - b).collect();
        let eq = abb.add(&abb.mul_public(rj, &scale)?, &abb.constant(&base))?;
        groups.push((c, eq));
    }
    let mut c = match circuit {
        Circuit::AndNot => {
            while groups.len() > 1 {
                let pairs = groups.len() / 2;
                let (mut left, mut right) = (Vec::new(), Vec::new());
                for g in 0..pairs {
                    left.push(&groups[2 * g + 1].1);
                    right.push(&groups[2 * g].0);
                    if g > 0 {
                        left.push(&groups[2 * g + 1].1);
                        right.push(&groups[2 * g].1);
                    }
                }
                let prod = abb.mul(&abb.concat(&left)?, &abb.concat(&right)?)?;
                let mut next = Vec::with_capacity(groups.len().div_ceil(2));
                let mut at = 0;
                for g in 0..pairs {
                    let c = abb.add(&groups[2 * g + 1].0, &abb.slice(&prod, at, n)?)?;
                    at += n;
                    let eq = if g > 0 {
                        at += n;
                        abb.slice(&prod, at - n, n)?
                    } else {
                        abb.constant(&vec![0; n])
                    };
                    next.push((c, eq));
                }
                if groups.len() % 2 == 1 {
                    next.push(groups.pop().expect("the odd group"));
                }
                groups = next;
            }
            groups.pop().map(|g| g.0)
        }
        Circuit::AndXor => {
            let mut it = groups.into_iter();
            let mut c = it.next().map(|g| g.0);
            for (cj, eqj) in it {
                let prev = c.expect("a group");
                let carry = abb.mul(&eqj, &prev)?;
                c = Some(abb.add(&cj, &carry)?);
            }
            c
        }
    }
    .unwrap_or_else(|| abb.constant(&vec![0; n]));
    // a ≥ 2^bits: greater than any r of these bits
    let top: Vec<u128> = a.iter().map(|&a| u128::from(r.len() < 128 && a >> r.len() != 0)).collect();
    if top.contains(&1) {
        // c ∨ top = c + top − c·top with top public
        let keep: Vec<u128> = top.iter().map(|&t| 1 - t).collect();
        c = abb.add(&abb.mul_public(&c, &keep)?, &abb.constant(&top))?;
    }
    Ok(c)
}

/// `[x < 0]` in F_q for `k`-bit signed `x` (paper 002, Protocol 5, `cons_ltz`): with
/// `x' = x mod 2^(k−1)`, `(x − x')/2^(k−1)` is `−1` for negative `x` and 0 otherwise.
/// `mask` is a [`Mask`] with `m = k − 1`. The rounds of [`mod2m`]; with
/// [`Bitwise::Arithmetic`] this is Catrina and de Hoogh's own LTZ (`lsss_ltz`).
pub fn ltz<A: Abb>(abb: &mut A, x: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    if mask.m + 1 != mask.k {
        return Err(MpcError::InvalidParameter(format!(
            "LTZ needs a mask with m = k − 1, not {} of {}",
            mask.m, mask.k
        )));
    }
    let low = mod2m(abb, x, mask)?;
    let f = *abb.field();
    let inv = f.inv(f.from_u128(1 << mask.m)).expect("2^m is invertible mod an odd prime");
    // −(x − x')/2^m = (x' − x)/2^m
    Ok(abb.scale(&abb.sub(&low, x)?, inv))
}

/// `max(x, 0)` for `k`-bit signed `x` (paper 002, Protocol 6 on `cons_ltz`): `(1 − [x < 0])·x`.
/// The rounds of [`ltz`] and one product.
pub fn relu<A: Abb>(abb: &mut A, x: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    let negative = ltz(abb, x, mask)?;
    let positive = one_minus(abb, &negative)?;
    abb.mul(&positive, x)
}

/// `[x < 0]` in F_q for `k`-bit signed `x` by Rabbit's ReLU protocol as paper 002 runs it
/// (`rabbit_conv`, section 3.3): convert `x` to the `k` bits of `x + 2^(k−1) mod 2^k` (open
/// `a = x + 2^(k−1) + r' + 2^k·r''`, subtract `r'` from `a mod 2^k` bitwise), whose top bit is
/// `[x ≥ 0]`; negate and convert with a daBit. `mask` from [`Mask::conversion`].
/// `1 + layers + 1` rounds, the subtractor's layers those of `circuit` on `k` bits.
pub fn rabbit_conv<A: Abb>(abb: &mut A, x: &A::Arith, mask: &Mask<A>) -> Result<A::Arith> {
    let (n, k) = (mask.n, mask.k);
    check_len(n, x, abb)?;
    let Bitwise::Binary(circuit) = mask.bitwise else {
        return Err(MpcError::InvalidParameter("rabbit_conv needs a binary mask".into()));
    };
    if mask.m != k {
        return Err(MpcError::InvalidParameter("rabbit_conv needs a mask from Mask::conversion".into()));
    }
    let a = abb.open(&abb.add(x, &mask.pad)?)?;
    let low = BitVec::planes_of(&a.iter().map(|&a| a & ((1 << k) - 1)).collect::<Vec<_>>(), k as usize);
    let bits = abb.evaluate(&circuits::subtraction(k as usize, circuit), &low, &mask.planes)?;
    let negative = abb.not(bits.last().expect("k ≥ 2 bits"));
    convert(abb, &negative, &mask.conv)
}

/// The products of [`greater_arith`] on `bits` bits.
pub fn arith_products(bits: usize, circuit: Circuit) -> usize {
    match circuit {
        Circuit::AndXor => bits.saturating_sub(1),
        Circuit::AndNot => {
            // per layer: two products per pair but the lowest pair's one
            let (mut groups, mut products) = (bits, 0);
            while groups > 1 {
                products += 2 * (groups / 2) - 1;
                groups = groups.div_ceil(2);
            }
            products
        }
    }
}

pub(crate) fn check_len<A: Abb>(n: usize, x: &A::Arith, abb: &A) -> Result<()> {
    if abb.len(x) != n {
        return Err(MpcError::InvalidParameter(format!("a mask for {n} elements used on {}", abb.len(x))));
    }
    Ok(())
}
