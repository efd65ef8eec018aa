//! Division: by public divisors (PubDiv, Alg. 8) and by secret divisors (Div, Alg. 9).

use argus_math::{Limbs, Ring, Z2m};

use super::shift::{overflow, reshare_to_two};
use super::{arith, width, Add3, Pow2};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// The same integer in another ring Z_2^k (zero-extended, or reduced mod the smaller 2^k).
pub(crate) fn recast<A: Pow2, B: Pow2>(a: &A, b: &B, x: A::El) -> B::El {
    let words = (b.bits() as usize).div_ceil(64);
    let mut buf = [0u64; 16];
    for (w, slot) in buf.iter_mut().enumerate().take(words) {
        *slot = a.word(x, w);
    }
    b.of_words(&buf[..words])
}

/// A wide ring of `bits` bits for the division's intermediate values.
fn ring_of<const L: usize>(bits: usize) -> Result<Z2m<L>> {
    Ok(Z2m::<L>::new(bits as u32)?)
}

/// PubDiv (Alg. 8): `floor(u_i / d_i)` for public divisors `1 ≤ d_i < 2^n`, `n ≤ 64`.
///
/// Granlund–Montgomery: with `c = ceil(2^(2n) / d)`, `floor(u/d) = floor(c·u / 2^(2n))` for every
/// `u < 2^n` (the error `c - 2^(2n)/d < 1` moves `c·u / 2^(2n)` by less than `u / 2^(2n) < 1/d`).
/// The paper takes the shift `n + 1` in a ring of `2n + 1` bits; a shift of `2n` for every
/// divisor keeps the theorem's condition for all `d < 2^n` and makes the cost independent of the
/// divisors. As in the paper, `u` is shared between P2 and P3 (ReshareToTwo), so `u'_2 + u'_3`
/// is `u` or `u + 2^n`; both candidates `c·u'` and `c·(u' - 2^n)` are truncated share by share in
/// Z_2^(3n), where the top wrap is a multiple of `2^n` and vanishes in the result, and the carry
/// lost in each truncation is the overflow of the low `2n` bits. The three overflows (of `u'`
/// and of the two candidates) are one [`overflow`] call; one product picks the candidate.
/// Rounds: those of one overflow of `2n`-bit values, plus one.
pub fn div_public<R: Pow2>(p: &mut Party, u: &Add3<R>, d: &[u128]) -> Result<Add3<R>> {
    let ring = u.ring();
    let n = width(ring)?;
    if n > 64 {
        return Err(MpcError::InvalidParameter(format!("public division in Z_2^{n}: at most 64 bits")));
    }
    super::check_len(u.len(), d.len())?;
    if let Some(i) = d.iter().position(|&x| x == 0 || x >> n != 0) {
        return Err(MpcError::InvalidParameter(format!("public divisor {i} is not in 1..2^{n}")));
    }
    let shift = 2 * n;
    let wide = ring_of::<3>(3 * n)?;
    let low = ring_of::<2>(shift)?;
    // c = ceil(2^shift / d) = floor((2^shift - 1) / d) + 1; for d = 1 that is 2^shift itself
    let all_ones = u128::MAX >> (128 - shift);
    let c: Vec<_> = d
        .iter()
        .map(|&d| if d == 1 { wide.shl(wide.one(), shift as u32) } else { wide.from_u128(all_ones / d + 1) })
        .collect();
    let u2 = reshare_to_two(p, u)?;
    let me = p.id();
    let len = u.len();
    let two_n = wide.shl(wide.one(), n as u32);
    let mut cands = [Vec::with_capacity(len), Vec::with_capacity(len)];
    for (&x, &c) in u2.x.iter().zip(&c) {
        let x = recast(ring, &wide, x);
        let v1 = wide.mul(c, x);
        let v2 = if me == 1 { wide.mul(c, wide.sub(x, two_n)) } else { v1 };
        cands[0].push(v1);
        cands[1].push(v2);
    }
    // overflow inputs, in Z_2^(2n): u' at the top, and each candidate's low 2n bits
    let mut tops: Vec<_> = u2.x.iter().map(|&x| low.shl(recast(ring, &low, x), n as u32)).collect();
    for cand in &cands {
        tops.extend(cand.iter().map(|&v| recast(&wide, &low, v)));
    }
    let lambda = overflow(p, &Add3::new(low, tops), ring)?;
    let t: Vec<Vec<R::El>> = (0..2)
        .map(|j| {
            let carry = &lambda.x[(j + 1) * len..(j + 2) * len];
            cands[j]
                .iter()
                .zip(carry)
                .map(|(&v, &l)| ring.add(recast(&wide, ring, wide.shr(v, shift as u32)), l))
                .collect()
        })
        .collect();
    let t1 = Add3::new(ring.clone(), t[0].clone());
    let diff = Add3::new(ring.clone(), t[1].clone()).sub(&t1)?;
    let pick = arith::mul(p, &lambda.slice(0, len)?, &diff)?;
    t1.add(&pick)
}

/// The parameters of [`div`] for `n`-bit values, chosen by the error analysis of the paper's
/// appendix B (see [`DivParams::for_bits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivParams {
    /// `n`: the values' ring Z_2^n.
    pub n: usize,
    /// `n'`: fraction bits of the fixed-point iterates.
    pub f: usize,
    /// Goldschmidt steps after the first (each one truncation and two products).
    pub k: usize,
    /// `Δ = N_0 · 2^(1 - p)` covers the iteration's gap below `u/v`: `1 - D_(k+1) ≤ 2^-p`.
    pub p: usize,
    /// `m`: the ring the iteration starts in, `n + (k + 2)·n' + 2` bits rounded up to whole bytes
    /// (each truncation drops `n'` of them; the last product needs `n + 2n' + 2`).
    pub m: usize,
}

impl DivParams {
    /// The cheapest parameters (smallest starting ring) whose error bounds give the exact floor
    /// for every `u, v < 2^n`, `v ≥ 1`, or `None` if none within the search (n up to 64 has them).
    /// `n'` and `m` are whole bytes (for `n` a multiple of 8 every ring on the way then is).
    ///
    /// With `δ = 3·2^-n'` (three shares truncated, rounded down for D and up for N), the first
    /// step `F_1 = κ - 2D_0` (`κ = floor(2^n'·2√2)/2^n'`, exact products) leaves
    /// `1 - D_1 ≤ e_1 = 3 - κ`, and each step after it squares that gap, adds at most
    /// `ΔD' ≤ 2ΔD·e + ΔD² + δ` to D's error and `ΔN' ≤ ΔN(1 + e + ΔD) + (u/v)ΔD + δ` to N's. With
    /// `ΔN ≤ a + b·(u/v)` after the last step and `Δ ≤ N_0·2^(1-p) + δ`, `R = N + Δ` lies in
    /// `[u/v, floor(u/v) + 1)` when `2^n·(a + b + 2^(1-p) + δ) < 1`.
    pub fn for_bits(n: usize) -> Option<DivParams> {
        let mut best: Option<DivParams> = None;
        // n' and m in whole bytes, so that every ring on the way is byte-aligned on the wire
        for f in (n + 1..=n + 24).filter(|f| f % 8 == 0) {
            let delta = 3.0 * (-(f as f64)).exp2();
            let kappa = isqrt_pow2(2 * f as u32 + 3) as f64 / (f as f64).exp2();
            for k in 1..=8 {
                let (mut e, mut dd, mut a, mut b) = (3.0 - kappa + (-(f as f64)).exp2(), delta, delta, 0.0f64);
                for _ in 0..k {
                    let grow = 1.0 + e + dd;
                    a = a * grow + delta;
                    b = b * grow + dd;
                    dd = 2.0 * dd * e + dd * dd + delta;
                    e *= e;
                }
                let p = (-e.log2()).floor() as usize;
                if p < 2 {
                    continue;
                }
                let slack = 1.0 + 1e-9;
                let bound = (n as f64).exp2() * (a + b + (1.0 - p as f64).exp2() + delta) * slack;
                let m = (n + (k + 2) * f + 2).next_multiple_of(8);
                if bound < 1.0 && p <= (k + 1) * f && best.is_none_or(|b| m < b.m) {
                    best = Some(DivParams { n, f, k, p, m });
                }
            }
        }
        best
    }
}

/// `floor(sqrt(2^e))` for `e < 256`, exact.
fn isqrt_pow2(e: u32) -> u128 {
    let mut r = 0u128;
    for bit in (0..=(e / 2 + 1).min(127)).rev() {
        let t = r | 1u128 << bit;
        let (hi, lo) = argus_math::mul_wide(t, t);
        let fits = if e >= 128 {
            hi < 1u128 << (e - 128) || (hi == 1u128 << (e - 128) && lo == 0)
        } else {
            hi == 0 && lo <= 1u128 << e
        };
        if fits {
            r = t;
        }
    }
    r
}

/// A public constant of a Goldschmidt step: `2^k` (a product is a shift), or any value.
#[derive(Clone, Copy)]
enum Constant {
    Pow2(u32),
    Value(u128),
}

impl Constant {
    fn value<const L: usize>(&self, ring: &Z2m<L>) -> Limbs<L> {
        match *self {
            Constant::Pow2(k) => ring.shl(ring.one(), k),
            Constant::Value(v) => ring.from_u128(v),
        }
    }
}

/// Elements per chunk of the Goldschmidt steps' passes: small enough that a chunk's operands
/// stay in cache between the passes over it, and a multiple of 8 (so a chunk of any width is
/// whole bytes on the wire).
const CHUNK: usize = 2048;

/// The shares of the Goldschmidt iteration between steps: `N` and `D` in Z_2^bits, as the
/// 64-bit words of `ceil(bits / 64)`-limb elements. Each step runs in the limb count of its own
/// ring (see [`step`]), so the narrowing rings are not carried in the widest one's.
struct Iterates {
    bits: usize,
    n: Vec<u64>,
    d: Vec<u64>,
}

/// Runs `$f::<A, B>($args)` for the run-time limb counts `A` (at most 10) and `B` (`A` to
/// `A − 2`: a truncation drops at most 88 bits).
macro_rules! by_limbs {
    ($a:expr, $b:expr, $f:ident $args:tt) => {
        by_limbs!(@arms $a, $b, $f $args;
            (1,1) (2,2) (2,1) (3,3) (3,2) (3,1) (4,4) (4,3) (4,2) (5,5) (5,4) (5,3) (6,6) (6,5) (6,4)
            (7,7) (7,6) (7,5) (8,8) (8,7) (8,6) (9,9) (9,8) (9,7) (10,10) (10,9) (10,8))
    };
    (@arms $a:expr, $b:expr, $f:ident $args:tt; $(($x:literal, $y:literal))*) => {
        match ($a, $b) {
            $(($x, $y) => $f::<$x, $y> $args,)*
            (a, b) => Err(MpcError::InvalidParameter(format!("a Goldschmidt step from {a} to {b} limbs"))),
        }
    };
}

/// One Goldschmidt step of the iterates `it`, in the ring `shift` bits narrower than theirs (the
/// shares first truncated locally, section 7.2: `N` rounded up, `D` down, three parties adding at
/// most 3): `F = c - D` (`c - 2D` if `double`), `N ← N·F` and, if `both`, `D ← D·F` (else `D` is
/// left empty: the last step needs only `N`). `F` is linear in `D`, so only `N` and `D` are
/// passed (Alg. 2's lines 3–5) and the replicated `F` is made locally from the replicated `D`:
/// two elements per party instead of three.
fn step(p: &mut Party, it: &Iterates, shift: usize, c: Constant, double: bool, both: bool) -> Result<Iterates> {
    let bits = it.bits - shift;
    by_limbs!(it.bits.div_ceil(64), bits.div_ceil(64), step_in(p, it, shift, c, double, both))
}

fn step_in<const A: usize, const B: usize>(
    p: &mut Party,
    it: &Iterates,
    shift: usize,
    c: Constant,
    double: bool,
    both: bool,
) -> Result<Iterates> {
    let from = ring_of::<A>(it.bits)?;
    let ring = ring_of::<B>(it.bits - shift)?;
    let (n, d): (&[Limbs<A>], &[Limbs<A>]) = (bytemuck::cast_slice(&it.n), bytemuck::cast_slice(&it.d));
    let (me, len) = (p.id(), n.len());
    let half = ring.wire_len(len);
    // Truncate, re-randomise and encode, chunk by chunk: N's bytes, then D's.
    let mut msg = Vec::with_capacity(2 * half);
    let mut own = [Vec::with_capacity(len), Vec::with_capacity(len)];
    for ((x, up), out) in [(n, true), (d, false)].into_iter().zip(&mut own) {
        let one = if up { ring.one() } else { ring.zero() };
        for chunk in x.chunks(CHUNK) {
            let at = out.len();
            out.extend(chunk.iter().map(|&v| {
                let t = ring.from_limbs(from.shr(v, shift as u32).as_array());
                if shift > 0 {
                    ring.add(t, one)
                } else {
                    t
                }
            }));
            p.prg.add_zero_share(&ring, &mut out[at..]);
            ring.wire_encode(&out[at..], &mut msg);
        }
    }
    let peer = p.prev();
    let got = p.pass_next(msg)?;
    if got.len() != 2 * half {
        return Err(MpcError::Malformed { peer, reason: format!("expected {} bytes, got {}", 2 * half, got.len()) });
    }
    let [mut n, mut d] = own;
    let cv = c.value(&ring);
    // the constant is component x_0: party 0's own, party 1's previous
    let (ca, cb) = (if me == 0 { cv } else { ring.zero() }, if me == 1 { cv } else { ring.zero() });
    let times = |x: Limbs<B>| if double { ring.add(x, x) } else { x };
    let f_of = |c: Limbs<B>, x: Limbs<B>| ring.sub(c, times(x));
    let c_times = |x: Limbs<B>| match c {
        Constant::Pow2(k) => ring.shl(x, k),
        Constant::Value(_) => ring.mul(x, cv),
    };
    let stride = ring.wire_len(CHUNK);
    for (k, (nc, dc)) in n.chunks_mut(CHUNK).zip(d.chunks_mut(CHUNK)).enumerate() {
        let bytes = |base: usize| &got[base + k * stride..base + k * stride + ring.wire_len(nc.len())];
        let nb = crate::party::decode_exact(&ring, peer, bytes(0), nc.len())?;
        let db = crate::party::decode_exact(&ring, peer, bytes(half), nc.len())?;
        // N·F: x_i (F_i + F_{i-1}) + x_{i-1} F_i. D·F = c·D - D² (2D² if doubled), with D²'s
        // component d_i (d_i + 2 d_{i-1}): one product, not two.
        for (((na, da), nb), db) in nc.iter_mut().zip(dc.iter_mut()).zip(&nb).zip(&db) {
            let (fa, fb) = (f_of(ca, *da), f_of(cb, *db));
            *na = ring.add(ring.mul(*na, ring.add(fa, fb)), ring.mul(*nb, fa));
            if both {
                let square = ring.mul(*da, ring.add(*da, ring.add(*db, *db)));
                *da = ring.sub(c_times(*da), times(square));
            }
        }
    }
    if !both {
        d = Vec::new();
    }
    Ok(Iterates {
        bits: ring.bits() as usize,
        n: bytemuck::allocation::cast_vec(n),
        d: bytemuck::allocation::cast_vec(d),
    })
}

/// Each party's share shifted right by `f` (the local, inexact truncation of section 7.2) and
/// read in the ring `f` bits narrower, plus `up` (1 to round up: three parties add 3 in all).
fn truncate<const L: usize>(from: &Z2m<L>, xs: &[Limbs<L>], f: usize, up: bool) -> Result<Add3<Z2m<L>>> {
    let to = ring_of::<L>(from.bits() as usize - f)?;
    let one = if up { to.one() } else { to.zero() };
    Ok(Add3::new(to, xs.iter().map(|&v| to.add(recast(from, &to, from.shr(v, f as u32)), one)).collect()))
}

/// `2^e` in Z_2^n for the exponent `e = n - 1 - j` of the set plane `j` of a one-hot vector
/// (0 where none is set). The exponent is split into its low and high bits, `e = a + w·b`:
/// the one-hot planes of `a` and of `b` are XORs of the given planes (local), their
/// ShareConvs give `2^a` and `2^(w·b)` as sums of weighted bits, and one product joins them.
/// For n = 64 that is 16 ShareConvs and a product (one more round) instead of 64 ShareConvs.
fn pow2_of_onehot<R: Pow2>(p: &mut Party, ring: &R, onehot: &[crate::rep3::Rep3Bits]) -> Result<Add3<R>> {
    let n = onehot.len();
    let exp_bits = usize::BITS - (n.max(2) - 1).leading_zeros();
    let lo_bits = exp_bits.div_ceil(2);
    let w = 1usize << lo_bits;
    let hi = n.div_ceil(w);
    let len = onehot.first().map_or(0, |b| b.a.len());
    let mut planes = vec![crate::rep3::Rep3Bits::zeros(len); w + hi];
    for (j, s) in onehot.iter().enumerate() {
        let e = n - 1 - j;
        planes[e % w] = planes[e % w].xor(s)?;
        planes[w + e / w] = planes[w + e / w].xor(s)?;
    }
    let own: Vec<&argus_math::BitVec> = planes.iter().map(|b| &b.a).collect();
    let conv = super::share_conv(p, ring, &own)?;
    let weighted = |parts: &[Add3<R>], step: usize| {
        let mut acc = vec![ring.zero(); len];
        for (i, c) in parts.iter().enumerate() {
            let at = (i * step) as u32;
            acc.iter_mut().zip(&c.x).for_each(|(g, &b)| *g = ring.add(*g, ring.shl(b, at)));
        }
        Add3::new(ring.clone(), acc)
    };
    let (low, high) = (weighted(&conv[..w], 1), weighted(&conv[w..], w));
    arith::mul(p, &low, &high)
}

/// `floor(x / 2^f) mod 2^n` for `x` in Z_2^(n+f), exactly: as two shares `a + b = x + λ·2^(n+f)`
/// (ReshareToTwo), it is `(a >> f) + (b >> f) + c` with `c` the carry out of the low `f` bits
/// (one [`overflow`] of `f`-bit values); the wrap `λ` lands on `2^n` and vanishes. ShiftR
/// would also find `λ`, an overflow of twice as many, twice as wide values.
fn floor_shift<const L: usize, R: Pow2>(p: &mut Party, x: &Add3<Z2m<L>>, f: usize, ring: &R) -> Result<Add3<R>> {
    let from = x.ring();
    let two = reshare_to_two(p, x)?;
    let low = ring_of::<L>(f)?;
    let carry = overflow(p, &Add3::new(low, two.x.iter().map(|&a| from.reduce_to(a, &low)).collect()), ring)?;
    let out =
        two.x.iter().zip(&carry.x).map(|(&a, &c)| ring.add(recast(from, ring, from.shr(a, f as u32)), c)).collect();
    Ok(Add3::new(ring.clone(), out))
}

/// Div (Alg. 9): `floor(u_i / v_i)` for secret divisors, by Goldschmidt's iteration with the
/// paper's first step `F_1 = 2√2 - 2D_0` and its exact-floor correction `Δ` ([`DivParams`]).
/// `x / 0` is 0.
///
/// Beyond the paper: the initial scale `c_0 = 2^(-h-1)` is found as `γ = 2^(n-1-h)` in Z_2^n
/// from the MSNZB's one-hot bits (`pow2_of_onehot`), where the paper converts each bit into the
/// wide ring; `D_0 = v·c_0` is `v·γ` (a product in Z_2^n, where it is exact: `v·γ < 2^n`) shifted;
/// `u`, `γ` and `v·γ` are lifted to the wide ring together (ReshareToTwo, one Overflow of all
/// three into it), so that the only wide product before the iteration is `u·c_0`; and the final
/// shift needs only the carry of its low bits (`floor_shift`).
pub fn div<R: Pow2>(p: &mut Party, u: &Add3<R>, v: &Add3<R>) -> Result<Add3<R>> {
    u.check_compatible(v)?;
    let n = width(u.ring())?;
    let params = DivParams::for_bits(n)
        .ok_or_else(|| MpcError::InvalidParameter(format!("no division parameters for Z_2^{n}")))?;
    match params.m.div_ceil(64) {
        ..=4 => div_in::<R, 4>(p, u, v, params),
        5 => div_in::<R, 5>(p, u, v, params),
        6 => div_in::<R, 6>(p, u, v, params),
        7 => div_in::<R, 7>(p, u, v, params),
        8 => div_in::<R, 8>(p, u, v, params),
        9 => div_in::<R, 9>(p, u, v, params),
        10 => div_in::<R, 10>(p, u, v, params),
        l => Err(MpcError::InvalidParameter(format!("division in Z_2^{n} needs {l} limbs"))),
    }
}

fn div_in<R: Pow2, const L: usize>(p: &mut Party, u: &Add3<R>, v: &Add3<R>, prm: DivParams) -> Result<Add3<R>> {
    let (ring, n, f, len) = (u.ring(), prm.n, prm.f, u.len());
    // Lines 1-4: the most significant bit h of v, as γ = 2^(n-1-h) in Z_2^n.
    let bits = super::bit_extr(p, v)?;
    let onehot = super::msnzb(p, &bits)?;
    let gamma = pow2_of_onehot(p, ring, &onehot)?;
    // v·γ lies in [2^(n-1), 2^n) (0 for v = 0): exact in Z_2^n, one product of n-bit values.
    let vg = arith::mul(p, v, &gamma)?;
    // Lines 5-8: u, γ and v·γ into the wide ring Z_2^m, exactly (shares lifted, minus 2^n·overflow).
    let big = ring_of::<L>(prm.m)?;
    let two = reshare_to_two(p, &Add3::concat(&[u, &gamma, &vg])?)?;
    let lambda = overflow(p, &two, &big)?;
    let lifted = |j: usize, shift: usize| -> Vec<Limbs<L>> {
        let (x, l) = (&two.x[j * len..(j + 1) * len], &lambda.x[j * len..(j + 1) * len]);
        x.iter()
            .zip(l)
            .map(|(&x, &l)| big.shl(big.sub(recast(ring, &big, x), big.shl(l, n as u32)), shift as u32))
            .collect()
    };
    // Line 9: N_0 = u·c_0 with c_0 = γ·2^(f-n), and D_0 = v·c_0 = (v·γ)·2^(f-n) (f fraction bits).
    let u2 = Add3::new(big, lifted(0, 0));
    let c0 = Add3::new(big, lifted(1, f - n));
    let nx = arith::mul(p, &u2, &c0)?.x;
    let dx = lifted(2, f - n);
    // Δ = N_0·2^(1-p) rounded up, for line 17.
    let delta = truncate(&big, &nx, prm.p - 1, true)?;
    let words = |x: Vec<Limbs<L>>| -> Vec<u64> { bytemuck::allocation::cast_vec(x) };
    let mut it = Iterates { bits: prm.m, n: words(nx), d: words(dx) };
    // Lines 10-11: F_1 = κ - 2D_0, the first step.
    it = step(p, &it, 0, Constant::Value(isqrt_pow2(2 * f as u32 + 3)), true, true)?;
    // Lines 12-16: truncate (N up, D down), F = 2 - D, multiply; the ring narrows by f each time.
    for k in 1..=prm.k {
        it = step(p, &it, f, Constant::Pow2((f + 1) as u32), false, k < prm.k)?;
    }
    // Line 17: R = N + Δ in Z_2^(n+f).
    let limbs = it.bits.div_ceil(64);
    let r = ring_of::<L>(it.bits)?;
    let nx: Vec<_> = it.n.chunks_exact(limbs).map(|w| r.from_limbs(w)).collect();
    let last = truncate(&r, &nx, f, true)?;
    let out_ring = ring_of::<L>(n + f)?;
    let r_hat = Add3::new(
        out_ring,
        last.x
            .iter()
            .zip(&delta.x)
            .map(|(&a, &b)| out_ring.add(recast(last.ring(), &out_ring, a), recast(delta.ring(), &out_ring, b)))
            .collect(),
    );
    // Line 18: w = R >> f, exactly, mod 2^n.
    floor_shift(p, &r_hat, f, ring)
}
