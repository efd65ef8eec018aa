//! The `Ring` abstraction and the rings Z_2^k (k = 16, 32, 64, 128) and Z_t (any 2 <= t < 2^128).
//!
//! A ring value is a small *context* object (zero-sized for Z_2^k, the modulus for Z_t) that
//! performs arithmetic on plain element values `Ring::El`. Protocols are generic over `Ring`, so one
//! implementation of replicated sharing serves Z_2^16, Z_2^64 and Z_{p·2^m} alike.

use std::fmt::{self, Debug, Display};
use std::marker::PhantomData;

use rand_core::RngCore;

use crate::wide::{mul_mod_u128, reduce_u128};
use crate::MathError;

/// The modulus of a ring, for messages and for checking that two shares live in the same ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modulus {
    /// Z_{2^k}, k >= 1: up to 128 for the machine-word rings and [`Zt`], any width of a
    /// [`Z2m`](crate::Z2m) (254 or 554 bits, say).
    Pow2(u32),
    /// Z_t for the given t (not a power of two, or a power of two handled by `Zt`).
    Int(u128),
}

impl Display for Modulus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modulus::Pow2(k) => write!(f, "Z_2^{k}"),
            Modulus::Int(t) => write!(f, "Z_{t}"),
        }
    }
}

/// Arithmetic in a finite commutative ring, on plain element values.
pub trait Ring: Clone + PartialEq + Debug + Send + Sync + 'static {
    /// An element, always kept in canonical form `[0, modulus)`.
    type El: Copy + Default + PartialEq + Eq + Debug + Send + Sync + 'static;

    /// The modulus, for error messages and ring-equality checks.
    fn modulus(&self) -> Modulus;
    /// `ceil(log2(modulus))`: the bit width of a canonical element.
    fn bits(&self) -> u32;
    /// Bytes of one element on the wire.
    fn byte_len(&self) -> usize;
    /// Additive identity.
    fn zero(&self) -> Self::El;
    /// Multiplicative identity.
    fn one(&self) -> Self::El;
    /// `a + b`.
    fn add(&self, a: Self::El, b: Self::El) -> Self::El;
    /// `a - b`.
    fn sub(&self, a: Self::El, b: Self::El) -> Self::El;
    /// `-a`.
    fn neg(&self, a: Self::El) -> Self::El {
        self.sub(self.zero(), a)
    }
    /// `a * b`.
    fn mul(&self, a: Self::El, b: Self::El) -> Self::El;
    /// The element `x mod modulus`. (It takes the ring, whose modulus makes the element: the
    /// `from_*` names read as conversions into it.)
    #[allow(clippy::wrong_self_convention)]
    fn from_u128(&self, x: u128) -> Self::El;
    /// The canonical representative in `[0, modulus)`.
    fn to_u128(&self, a: Self::El) -> u128;
    /// `x` if it is canonical, else `None`.
    fn try_from_u128(&self, x: u128) -> Option<Self::El>;
    /// A uniformly random element (unbiased) drawn from `rng`.
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> Self::El;

    /// `a^e` by square-and-multiply.
    fn pow(&self, mut a: Self::El, mut e: u128) -> Self::El {
        let mut acc = self.one();
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, a);
            }
            a = self.mul(a, a);
            e >>= 1;
        }
        acc
    }
    /// `sum_i a_i * b_i`; rings with a SIMD kernel override this (equal lengths are the caller's duty).
    fn dot(&self, a: &[Self::El], b: &[Self::El]) -> Self::El {
        debug_assert_eq!(a.len(), b.len());
        a.iter().zip(b).fold(self.zero(), |acc, (&x, &y)| self.add(acc, self.mul(x, y)))
    }
    /// Blocked matrix product: `out[i·rows_b + j] = dot(a_i, b_j)` for the `len`-long rows of `a`
    /// (`rows_a = a.len() / len`) and of `b`. Rings with a SIMD kernel override this; shapes are
    /// the caller's duty (`len > 0`, whole rows, `out.len() == rows_a·rows_b`).
    fn gemm(&self, a: &[Self::El], b: &[Self::El], len: usize, out: &mut [Self::El]) {
        let rows_b = b.len() / len;
        for (i, q) in a.chunks_exact(len).enumerate() {
            for (j, r) in b.chunks_exact(len).enumerate() {
                out[i * rows_b + j] = self.dot(q, r);
            }
        }
    }
    /// The signed embedding: `x mod modulus` for negative `x` too.
    #[allow(clippy::wrong_self_convention)]
    fn from_i128(&self, x: i128) -> Self::El {
        if x >= 0 {
            self.from_u128(x as u128)
        } else {
            self.neg(self.from_u128(x.unsigned_abs()))
        }
    }
    /// `n` uniformly random elements.
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<Self::El> {
        (0..n).map(|_| self.sample(rng)).collect()
    }
    /// Fills `out` with uniformly random elements (the same stream as [`sample_vec`] of
    /// `out.len()` where a ring overrides both), without allocating.
    ///
    /// [`sample_vec`]: Ring::sample_vec
    fn sample_into<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [Self::El]) {
        for x in out {
            *x = self.sample(rng);
        }
    }
    /// `c · x` for every canonical `x` of `xs` (a public scalar times a vector; rings with a
    /// faster way than `mul` per element override it).
    fn scale_vec(&self, xs: &[Self::El], c: Self::El) -> Vec<Self::El> {
        xs.iter().map(|&x| self.mul(x, c)).collect()
    }
    /// Canonical elements from `u128` values, or `OutOfRange` naming the first bad index.
    fn try_vec_from_u128(&self, xs: &[u128]) -> Result<Vec<Self::El>, MathError> {
        xs.iter()
            .enumerate()
            .map(|(index, &x)| self.try_from_u128(x).ok_or(MathError::OutOfRange { index, modulus: self.modulus() }))
            .collect()
    }
    /// Bytes that `n` elements take on the wire: `ceil(n·bits/8)` — elements whose width is not
    /// a whole number of bytes (Z_2^36, Z_{p·2^20}) are packed, as the paper counts bits.
    fn wire_len(&self, n: usize) -> usize {
        if self.bits().is_multiple_of(8) {
            n * self.byte_len()
        } else {
            (n * self.bits() as usize).div_ceil(8)
        }
    }
    /// Appends the wire form of `xs` to `out`: [`encode`](Ring::encode) for byte-wide elements,
    /// else `bits` bits per element, LSB first, the last byte zero-padded.
    fn wire_encode(&self, xs: &[Self::El], out: &mut Vec<u8>) {
        if self.bits().is_multiple_of(8) {
            return self.encode(xs, out);
        }
        crate::wire::pack(xs.iter().map(|&x| self.to_u128(x)), self.bits(), out);
    }
    /// Decodes exactly `n` elements from their wire form; rejects a wrong length, stray padding
    /// bits and non-canonical values.
    fn wire_decode(&self, bytes: &[u8], n: usize) -> Result<Vec<Self::El>, MathError> {
        if bytes.len() != self.wire_len(n) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: self.byte_len() });
        }
        if self.bits().is_multiple_of(8) {
            return self.decode(bytes);
        }
        let raw = crate::wire::unpack(bytes, self.bits(), n)?;
        raw.into_iter()
            .enumerate()
            .map(|(index, x)| self.try_from_u128(x).ok_or(MathError::OutOfRange { index, modulus: self.modulus() }))
            .collect()
    }
    /// Appends the little-endian encoding of `xs` (`byte_len` bytes each) to `out`.
    fn encode(&self, xs: &[Self::El], out: &mut Vec<u8>) {
        let w = self.byte_len();
        out.reserve(xs.len() * w);
        for &x in xs {
            out.extend_from_slice(&self.to_u128(x).to_le_bytes()[..w]);
        }
    }
    /// The elements of a wire form read in place, where the wire form is the memory form (the
    /// machine-word rings, whose every bit pattern is an element) and `bytes` is aligned for
    /// them; `None` otherwise (then [`decode`](Self::decode) copies).
    fn wire_view<'a>(&self, _bytes: &'a [u8]) -> Option<&'a [Self::El]> {
        None
    }
    /// Decodes whole elements; rejects a ragged length or a non-canonical value.
    fn decode(&self, bytes: &[u8]) -> Result<Vec<Self::El>, MathError> {
        let w = self.byte_len();
        if !bytes.len().is_multiple_of(w) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: w });
        }
        bytes
            .chunks_exact(w)
            .enumerate()
            .map(|(index, c)| {
                let mut buf = [0u8; 16];
                buf[..w].copy_from_slice(c);
                self.try_from_u128(u128::from_le_bytes(buf))
                    .ok_or(MathError::OutOfRange { index, modulus: self.modulus() })
            })
            .collect()
    }
}

/// Machine words that implement Z_2^k by wrapping arithmetic.
pub trait Word:
    Copy + Default + PartialEq + Eq + Debug + Send + Sync + 'static + bytemuck::Pod + sealed::Sealed
{
    /// Bit width k.
    const BITS: u32;
    /// Wrapping addition.
    fn wadd(self, o: Self) -> Self;
    /// Wrapping subtraction.
    fn wsub(self, o: Self) -> Self;
    /// Wrapping multiplication.
    fn wmul(self, o: Self) -> Self;
    /// Truncating conversion from u128.
    fn from_u128(x: u128) -> Self;
    /// Zero-extending conversion to u128.
    fn to_u128(self) -> u128;
    /// Decodes from little-endian bytes (exactly `BITS / 8` of them).
    fn from_le(b: &[u8]) -> Self;
    /// Appends the little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// Wrapping dot product of equal-length slices (a SIMD kernel where there is one).
    fn dot(a: &[Self], b: &[Self]) -> Self;
    /// Wrapping matrix product as [`Ring::gemm`] (a SIMD kernel where there is one).
    fn gemm(a: &[Self], b: &[Self], len: usize, out: &mut [Self]);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! word {
    ($t:ty, $kernel:expr, $gemm:expr) => {
        impl sealed::Sealed for $t {}
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn from_u128(x: u128) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_u128(self) -> u128 {
                self as u128
            }
            #[inline(always)]
            fn from_le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("caller passes BITS/8 bytes"))
            }
            #[inline(always)]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn dot(a: &[Self], b: &[Self]) -> Self {
                let kernel: Option<fn(&[$t], &[$t]) -> Result<$t, crate::kernels::KernelError>> = $kernel;
                match kernel {
                    Some(k) => k(a, b).expect("callers pass equal lengths"),
                    None => a.iter().zip(b).fold(0, |s: $t, (x, y)| s.wrapping_add(x.wrapping_mul(*y))),
                }
            }
            fn gemm(a: &[Self], b: &[Self], len: usize, out: &mut [Self]) {
                type Gemm = fn(&[$t], &[$t], usize, &mut [$t]) -> Result<(), crate::kernels::KernelError>;
                let kernel: Option<Gemm> = $gemm;
                match kernel {
                    Some(k) => k(a, b, len, out).expect("callers pass whole rows"),
                    None => {
                        let rows_b = b.len() / len;
                        for (i, q) in a.chunks_exact(len).enumerate() {
                            for (j, r) in b.chunks_exact(len).enumerate() {
                                out[i * rows_b + j] = Self::dot(q, r);
                            }
                        }
                    }
                }
            }
        }
    };
}
word!(u8, None, None);
word!(u16, Some(crate::kernels::dot_u16), Some(crate::kernels::gemm_u16));
word!(u32, Some(crate::kernels::dot_u32), Some(crate::kernels::gemm_u32));
word!(u64, Some(crate::kernels::dot_u64), Some(crate::kernels::gemm_u64));
word!(u128, None, Some(crate::kernels::gemm_u128));

/// The ring Z_2^k with k the width of the machine word `W` (wrapping arithmetic).
pub struct Z2<W>(PhantomData<W>);

impl<W> Z2<W> {
    /// The ring (a zero-sized value).
    pub const fn new() -> Self {
        Z2(PhantomData)
    }
}
impl<W> Default for Z2<W> {
    fn default() -> Self {
        Self::new()
    }
}
impl<W> Clone for Z2<W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W> Copy for Z2<W> {}
impl<W> PartialEq for Z2<W> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<W: Word> Debug for Z2<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Z_2^{}", W::BITS)
    }
}

/// Z_2^8.
pub type Z8 = Z2<u8>;
/// Z_2^16.
pub type Z16 = Z2<u16>;
/// Z_2^32.
pub type Z32 = Z2<u32>;
/// Z_2^64.
pub type Z64 = Z2<u64>;
/// Z_2^128.
pub type Z128 = Z2<u128>;

impl<W: Word> Ring for Z2<W> {
    type El = W;
    fn modulus(&self) -> Modulus {
        Modulus::Pow2(W::BITS)
    }
    fn bits(&self) -> u32 {
        W::BITS
    }
    fn byte_len(&self) -> usize {
        (W::BITS / 8) as usize
    }
    #[inline(always)]
    fn zero(&self) -> W {
        W::default()
    }
    #[inline(always)]
    fn one(&self) -> W {
        W::from_u128(1)
    }
    #[inline(always)]
    fn add(&self, a: W, b: W) -> W {
        a.wadd(b)
    }
    #[inline(always)]
    fn sub(&self, a: W, b: W) -> W {
        a.wsub(b)
    }
    #[inline(always)]
    fn mul(&self, a: W, b: W) -> W {
        a.wmul(b)
    }
    #[inline(always)]
    fn from_u128(&self, x: u128) -> W {
        W::from_u128(x)
    }
    #[inline(always)]
    fn to_u128(&self, a: W) -> u128 {
        a.to_u128()
    }
    fn try_from_u128(&self, x: u128) -> Option<W> {
        (W::BITS == 128 || x >> W::BITS == 0).then(|| W::from_u128(x))
    }
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> W {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b[..(W::BITS / 8) as usize]);
        W::from_u128(u128::from_le_bytes(b))
    }
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<W> {
        // Bulk draws (AES-CTR fills blocks far faster than per element; every bit pattern is a
        // valid word) through a cache-resident block appended to the vector: one pass over the
        // output instead of zeroing it first. The stream is read in order, so the elements are
        // the same as one draw of `n` words.
        let mut block = [W::default(); 1024];
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let b = &mut block[..(n - v.len()).min(1024)];
            rng.fill_bytes(bytemuck::cast_slice_mut(b));
            v.extend_from_slice(b);
        }
        v
    }
    fn sample_into<R: RngCore + ?Sized>(&self, rng: &mut R, out: &mut [W]) {
        rng.fill_bytes(bytemuck::cast_slice_mut(out));
    }
    fn encode(&self, xs: &[W], out: &mut Vec<u8>) {
        // Little-endian targets only (x86-64, aarch64): the in-memory form is the wire form.
        out.extend_from_slice(bytemuck::cast_slice(xs));
    }
    fn wire_view<'a>(&self, bytes: &'a [u8]) -> Option<&'a [W]> {
        bytemuck::try_cast_slice(bytes).ok()
    }
    fn decode(&self, bytes: &[u8]) -> Result<Vec<W>, MathError> {
        let w = (W::BITS / 8) as usize;
        if !bytes.len().is_multiple_of(w) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: w });
        }
        // A message buffer is word-aligned in practice: one copy, no zeroing pass.
        Ok(match self.wire_view(bytes) {
            Some(words) => words.to_vec(),
            None => bytemuck::pod_collect_to_vec(bytes),
        })
    }
    fn dot(&self, a: &[W], b: &[W]) -> W {
        W::dot(a, b)
    }
    fn gemm(&self, a: &[W], b: &[W], len: usize, out: &mut [W]) {
        W::gemm(a, b, len, out)
    }
}

#[cfg(not(target_endian = "little"))]
compile_error!("argus-math encodes Z_2^k elements by their in-memory bytes: little-endian targets only");

/// The ring Z_t for any modulus 2 <= t < 2^128 (e.g. Z_{p·2^m} for the lifting protocols, or
/// Z_2^k for a k that is not a machine word). Elements are `u128` in `[0, t)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Zt {
    t: u128,
    bits: u32,
    /// `c = 2^128 − t` where that is below 2^32 (a 128-bit pseudo-Mersenne modulus such as
    /// paper 002's 2^128 − 159: products reduce by folding, `2^128 ≡ c`), else 0.
    fold: u128,
}

impl Debug for Zt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.modulus())
    }
}

impl Zt {
    /// The ring Z_t; refuses t < 2.
    pub fn new(t: u128) -> Result<Self, MathError> {
        if t < 2 {
            return Err(MathError::InvalidModulus { reason: format!("Z_t needs t >= 2, got {t}") });
        }
        let bits = 128 - (t - 1).leading_zeros();
        let c = t.wrapping_neg();
        let fold = if bits == 128 && c < 1 << 32 { c } else { 0 };
        Ok(Zt { t, bits, fold })
    }
    /// Z_{2^k} for 1 <= k <= 127.
    pub fn pow2(k: u32) -> Result<Self, MathError> {
        if !(1..=127).contains(&k) {
            return Err(MathError::InvalidModulus { reason: format!("Z_2^k needs 1 <= k <= 127, got {k}") });
        }
        Self::new(1u128 << k)
    }
    /// The modulus t.
    pub fn t(&self) -> u128 {
        self.t
    }
    /// Whether t is a power of two.
    pub fn is_pow2(&self) -> bool {
        self.t.is_power_of_two()
    }
}

impl Ring for Zt {
    type El = u128;
    fn modulus(&self) -> Modulus {
        if self.t.is_power_of_two() {
            Modulus::Pow2(self.t.trailing_zeros())
        } else {
            Modulus::Int(self.t)
        }
    }
    fn bits(&self) -> u32 {
        self.bits
    }
    fn byte_len(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }
    fn zero(&self) -> u128 {
        0
    }
    fn one(&self) -> u128 {
        1
    }
    #[inline]
    fn add(&self, a: u128, b: u128) -> u128 {
        let (s, carry) = a.overflowing_add(b);
        if carry || s >= self.t {
            s.wrapping_sub(self.t)
        } else {
            s
        }
    }
    #[inline]
    fn sub(&self, a: u128, b: u128) -> u128 {
        if a >= b {
            a - b
        } else {
            a.wrapping_sub(b).wrapping_add(self.t)
        }
    }
    #[inline]
    fn mul(&self, a: u128, b: u128) -> u128 {
        if self.t.is_power_of_two() {
            a.wrapping_mul(b) & (self.t - 1)
        } else if self.bits <= 64 {
            (a * b) % self.t
        } else if self.fold != 0 {
            let (hi, lo) = crate::wide::mul_wide(a, b);
            crate::wide::reduce_folding(hi, lo, self.fold, self.t)
        } else {
            mul_mod_u128(a, b, self.t)
        }
    }
    fn from_u128(&self, x: u128) -> u128 {
        reduce_u128(x, self.t)
    }
    fn to_u128(&self, a: u128) -> u128 {
        a
    }
    fn try_from_u128(&self, x: u128) -> Option<u128> {
        (x < self.t).then_some(x)
    }
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u128 {
        self.sample_vec(rng, 1)[0]
    }
    fn decode(&self, bytes: &[u8]) -> Result<Vec<u128>, MathError> {
        let w = self.byte_len();
        if !bytes.len().is_multiple_of(w) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: w });
        }
        let mut out = Vec::with_capacity(bytes.len() / w);
        let mut bad = None;
        for (index, c) in bytes.chunks_exact(w).enumerate() {
            let mut b = [0u8; 16];
            b[..w].copy_from_slice(c);
            let x = u128::from_le_bytes(b);
            if x >= self.t && bad.is_none() {
                bad = Some(index);
            }
            out.push(x);
        }
        match bad {
            Some(index) => Err(MathError::OutOfRange { index, modulus: self.modulus() }),
            None => Ok(out),
        }
    }
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<u128> {
        // Rejection sampling on `bits` random bits (unbiased, fewer than two draws per element on
        // average), drawing the stream in blocks rather than per element.
        let mask = if self.bits == 128 { u128::MAX } else { (1u128 << self.bits) - 1 };
        sample_rejecting(rng, n, self.byte_len(), |raw| {
            let x = raw & mask;
            (x, x < self.t)
        })
    }
}

/// `n` elements from `w`-byte little-endian draws, keeping those `accept` maps to `(x, true)`.
/// The stream is read in blocks; the sequence of draws depends only on the stream, so two parties
/// sharing a seed obtain the same elements.
pub(crate) fn sample_rejecting<R: RngCore + ?Sized, T: Copy>(
    rng: &mut R,
    n: usize,
    w: usize,
    accept: impl Fn(u128) -> (T, bool),
) -> Vec<T> {
    const BLOCK: usize = 1024;
    assert!((1..=16).contains(&w), "draws of 1 to 16 bytes");
    let mut out = Vec::with_capacity(n);
    // 16 bytes of slack past the draws: each draw is read as a whole u128 and masked to its `w`
    // bytes (a copy of `w` bytes per draw, its length known only at run time, cost more than
    // the sampling's PRG and test together).
    let mut buf = vec![0u8; w * BLOCK.min(n.max(1)) + 16];
    let mask = u128::MAX >> (128 - 8 * w);
    while out.len() < n {
        let want = (n - out.len()).min(BLOCK);
        rng.fill_bytes(&mut buf[..want * w]);
        out.reserve(want);
        // Every draw is written to the next free slot, which advances only when it is accepted:
        // no branch per draw.
        let free = &mut out.spare_capacity_mut()[..want];
        let mut kept = 0;
        for i in 0..want {
            let raw = u128::from_le_bytes(buf[i * w..i * w + 16].try_into().expect("16 bytes"));
            let (x, ok) = accept(raw & mask);
            free[kept].write(x);
            kept += usize::from(ok);
        }
        // SAFETY: each of the first `kept` free slots was written (last with an accepted draw)
        // before `kept` moved past it.
        unsafe { out.set_len(out.len() + kept) };
    }
    out
}

/// The ring Z_t for a modulus 2 <= t <= 2^64 with `u64` elements: the same arithmetic as [`Zt`] at
/// half the memory, for the lifted rings of the comparison protocols (Z_2^36, Z_{p·2^20}, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Zt64 {
    /// t − 1 (so that t = 2^64 fits).
    max: u64,
    bits: u32,
    /// floor((2^64 − 1) / t): Barrett's multiplier for reducing 64-bit values (non-powers of two).
    barrett: u64,
}

impl Debug for Zt64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.modulus())
    }
}

impl Zt64 {
    /// Z_t for 2 <= t <= 2^64.
    pub fn new(t: u128) -> Result<Self, MathError> {
        if !(2..=1u128 << 64).contains(&t) {
            return Err(MathError::InvalidModulus { reason: format!("Zt64 needs 2 <= t <= 2^64, got {t}") });
        }
        Ok(Zt64 { max: (t - 1) as u64, bits: 128 - (t - 1).leading_zeros(), barrett: (u64::MAX as u128 / t) as u64 })
    }
    /// Z_{2^k} for 1 <= k <= 64.
    pub fn pow2(k: u32) -> Result<Self, MathError> {
        if !(1..=64).contains(&k) {
            return Err(MathError::InvalidModulus { reason: format!("Zt64 needs 1 <= k <= 64, got {k}") });
        }
        Self::new(1u128 << k)
    }
    /// The modulus t.
    pub fn t(&self) -> u128 {
        self.max as u128 + 1
    }
    #[inline(always)]
    fn is_pow2(&self) -> bool {
        self.max & self.max.wrapping_add(1) == 0
    }
    /// `x mod t` for a non-power-of-two t: Barrett reduction for 64-bit `x` (a multiply and at
    /// most two corrections instead of a division), a division otherwise.
    #[inline]
    fn reduce(&self, x: u128) -> u64 {
        let t = self.max + 1;
        if x >> 64 != 0 {
            return (x % t as u128) as u64;
        }
        let x = x as u64;
        // q <= x / t < q + 3, so r < 3t (and r <= x fits).
        let q = ((x as u128 * self.barrett as u128) >> 64) as u64;
        let mut r = x - q * t;
        while r >= t {
            r -= t;
        }
        r
    }
}

impl Ring for Zt64 {
    type El = u64;
    fn modulus(&self) -> Modulus {
        if self.is_pow2() {
            Modulus::Pow2(self.bits)
        } else {
            Modulus::Int(self.t())
        }
    }
    fn bits(&self) -> u32 {
        self.bits
    }
    fn byte_len(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }
    fn zero(&self) -> u64 {
        0
    }
    fn one(&self) -> u64 {
        1
    }
    #[inline]
    fn add(&self, a: u64, b: u64) -> u64 {
        if self.is_pow2() {
            return a.wrapping_add(b) & self.max;
        }
        let (s, carry) = a.overflowing_add(b);
        if carry || s > self.max {
            s.wrapping_sub(self.max).wrapping_sub(1)
        } else {
            s
        }
    }
    #[inline]
    fn sub(&self, a: u64, b: u64) -> u64 {
        if self.is_pow2() {
            a.wrapping_sub(b) & self.max
        } else if a >= b {
            a - b
        } else {
            a.wrapping_sub(b).wrapping_add(self.max).wrapping_add(1)
        }
    }
    #[inline]
    fn mul(&self, a: u64, b: u64) -> u64 {
        if self.is_pow2() {
            a.wrapping_mul(b) & self.max
        } else {
            self.reduce(a as u128 * b as u128)
        }
    }
    fn scale_vec(&self, xs: &[u64], c: u64) -> Vec<u64> {
        if self.is_pow2() {
            return xs.iter().map(|&x| x.wrapping_mul(c) & self.max).collect();
        }
        if self.max >= u32::MAX as u64 || c > self.max {
            return xs.iter().map(|&x| self.mul(x, c)).collect();
        }
        // Shoup's multiplication by a fixed c for t < 2^32: with c' = floor(c·2^32 / t) and
        // q = floor(x·c' / 2^32), x·c − q·t lies in [0, 2t); 32 × 32-bit products only, so the
        // loop vectorises (the generic path is a Barrett reduction of a 128-bit product each).
        let t = self.max + 1;
        let shoup = ((c as u128) << 32) / t as u128;
        let shoup = shoup as u64;
        xs.iter()
            .map(|&x| {
                let q = (x * shoup) >> 32;
                let r = (x * c).wrapping_sub(q * t);
                if r >= t {
                    r - t
                } else {
                    r
                }
            })
            .collect()
    }
    // Inlined across crates: the comparison protocols call these once per element.
    #[inline]
    fn from_u128(&self, x: u128) -> u64 {
        if x <= self.max as u128 {
            x as u64
        } else if self.is_pow2() {
            x as u64 & self.max
        } else {
            self.reduce(x)
        }
    }
    #[inline]
    fn to_u128(&self, a: u64) -> u128 {
        a as u128
    }
    fn try_from_u128(&self, x: u128) -> Option<u64> {
        (x <= self.max as u128).then_some(x as u64)
    }
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u64 {
        self.sample_vec(rng, 1)[0]
    }
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<u64> {
        let mask = if self.bits == 64 { u64::MAX } else { (1u64 << self.bits) - 1 };
        sample_rejecting(rng, n, self.byte_len(), |raw| {
            let x = raw as u64 & mask;
            (x, x <= self.max)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Counter;
    use proptest::prelude::*;
    use rand_core::RngCore; // named: proptest's prelude exports another RngCore

    proptest! {
        #[test]
        fn zt_matches_big_arithmetic(t in 2u128..u128::MAX, a: u128, b: u128) {
            let r = Zt::new(t).unwrap();
            let (a, b) = (a % t, b % t);
            // Reference via 256-bit schoolbook in u128 halves (independent of wide.rs).
            let expect_mul = crate::wide::tests::ref_mul_mod(a, b, t);
            prop_assert_eq!(r.mul(a, b), expect_mul);
            prop_assert_eq!(r.add(r.sub(a, b), b), a);
            prop_assert_eq!(r.add(a, r.neg(a)), 0);
        }

        #[test]
        fn zt_small_moduli(t in 2u128..1u128 << 40, a: u64, b: u64) {
            let r = Zt::new(t).unwrap();
            let (a, b) = (a as u128 % t, b as u128 % t);
            prop_assert_eq!(r.mul(a, b), a * b % t);
            prop_assert_eq!(r.add(a, b), (a + b) % t);
            prop_assert_eq!(r.sub(a, b), (a + t - b) % t);
        }

        #[test]
        fn encode_roundtrip(xs in proptest::collection::vec(any::<u16>(), 0..50)) {
            let r = Z16::new();
            let mut out = Vec::new();
            r.encode(&xs, &mut out);
            prop_assert_eq!(r.decode(&out).unwrap(), xs);
        }
    }

    proptest! {
        #[test]
        fn zt64_matches_zt(t in 2u128..=1u128 << 64, a: u64, b: u64, pow in 1u32..=64) {
            for t in [t, 1u128 << pow] {
                let (small, big) = (Zt64::new(t).unwrap(), Zt::new(t).unwrap());
                let (a, b) = ((a as u128 % t) as u64, (b as u128 % t) as u64);
                prop_assert_eq!(small.add(a, b) as u128, big.add(a as u128, b as u128));
                prop_assert_eq!(small.sub(a, b) as u128, big.sub(a as u128, b as u128));
                prop_assert_eq!(small.mul(a, b) as u128, big.mul(a as u128, b as u128));
                let wide = (a as u128) << 64 | b as u128;
                for x in [a as u128, b as u128 * 3, a as u128 * b as u128, wide, u64::MAX as u128, u128::MAX] {
                    prop_assert_eq!(small.from_u128(x) as u128, x % t);
                }
                prop_assert_eq!(small.modulus(), big.modulus());
                prop_assert_eq!(small.byte_len(), big.byte_len());
            }
        }

        /// Zt and Zt64 write and read the plain little-endian `byte_len`-byte form (the
        /// reference below), after bytes already in the buffer, and a decode names the first
        /// non-canonical element.
        #[test]
        fn zt_wire_form_is_little_endian_words(
            t in prop_oneof![2u128..=1 << 64, 2u128..u128::MAX, Just(255u128), Just(256u128), Just(1u128 << 64)],
            xs: Vec<u128>,
            prefix in proptest::collection::vec(any::<u8>(), 0..9),
            bad: proptest::sample::Index,
        ) {
            let big = Zt::new(t).unwrap();
            let w = big.byte_len();
            let xs: Vec<u128> = xs.iter().map(|&x| x % t).collect();
            let want: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()[..w].to_vec()).collect();
            let mut out = prefix.clone();
            big.encode(&xs, &mut out);
            prop_assert_eq!(&out[..prefix.len()], &prefix[..]);
            prop_assert_eq!(&out[prefix.len()..], &want[..]);
            prop_assert_eq!(big.decode(&want).unwrap(), xs.clone());
            if t <= 1 << 64 {
                let small = Zt64::new(t).unwrap();
                let xs64: Vec<u64> = xs.iter().map(|&x| x as u64).collect();
                let mut out = prefix.clone();
                small.encode(&xs64, &mut out);
                prop_assert_eq!(&out[prefix.len()..], &want[..]);
                prop_assert_eq!(small.decode(&want).unwrap(), xs64);
            }
            // The smallest non-canonical value, where `w` bytes can hold one.
            if !xs.is_empty() && (8 * w as u32) < 128 && t < 1 << (8 * w) {
                let i = bad.index(xs.len());
                let mut wrong = want.clone();
                wrong[i * w..(i + 1) * w].copy_from_slice(&t.to_le_bytes()[..w]);
                let err = MathError::OutOfRange { index: i, modulus: big.modulus() };
                prop_assert_eq!(big.decode(&wrong), Err(err.clone()));
                if t <= 1 << 64 {
                    prop_assert_eq!(Zt64::new(t).unwrap().decode(&wrong), Err(err));
                }
            }
            if !want.is_empty() && w > 1 {
                prop_assert!(big.decode(&want[1..]).is_err(), "a ragged length");
            }
        }

        /// `scale_vec` (Shoup's method below 2^32, the generic path above) is `mul` per element.
        #[test]
        fn zt64_scale_vec_is_mul(t in prop_oneof![2u128..1 << 32, 2u128..=1 << 64], c: u64, xs: Vec<u64>) {
            let r = Zt64::new(t).unwrap();
            let c = (c as u128 % t) as u64;
            let xs: Vec<u64> = xs.iter().map(|&x| (x as u128 % t) as u64).collect();
            let want: Vec<u64> = xs.iter().map(|&x| r.mul(x, c)).collect();
            prop_assert_eq!(r.scale_vec(&xs, c), want);
        }
    }

    /// Barrett reduction at the edges: small and large odd moduli, values just below and above
    /// multiples of t, and the 64-bit boundary where the division takes over.
    #[test]
    fn zt64_reduces_at_the_edges() {
        for t in [3u128, 5, 65_519, 65_519 << 16, (1 << 32) - 5, (1 << 32) + 15, (1 << 63) + 1, (1 << 64) - 59] {
            let r = Zt64::new(t).unwrap();
            let m = t - 1;
            for x in [0, 1, m, t, t + 1, 2 * t - 1, 2 * t, 3 * t + 2, u64::MAX as u128, 1 << 64, u128::MAX] {
                assert_eq!(r.from_u128(x) as u128, x % t, "t = {t}, x = {x}");
            }
            for (a, b) in [(m, m), (m, 1), (m / 2, 3), (0, m)] {
                assert_eq!(r.mul(a as u64, b as u64) as u128, a * b % t, "t = {t}: {a}·{b}");
                assert_eq!(r.scale_vec(&[a as u64], b as u64), [r.mul(a as u64, b as u64)], "t = {t}: {a}·{b}");
            }
        }
    }

    /// A vector of random words is the stream read as words, whatever its length (the block
    /// size of the bulk draw and one past it included), drawn into a vector or into a slice,
    /// and decoding accepts unaligned bytes.
    #[test]
    fn sample_vec_reads_the_stream_in_order() {
        fn check<W: Word>(r: Z2<W>) {
            let w = (W::BITS / 8) as usize;
            for n in [0, 1, 1023, 1024, 1025, 3000] {
                let mut bytes = vec![0u8; n * w + 1];
                Counter(0).fill_bytes(&mut bytes[1..]);
                assert_eq!(r.sample_vec(&mut Counter(0), n), r.decode(&bytes[1..]).unwrap(), "n = {n}");
                let mut into = vec![W::default(); n];
                r.sample_into(&mut Counter(0), &mut into);
                assert_eq!(into, r.sample_vec(&mut Counter(0), n), "sample_into, n = {n}");
                let aligned = bytes[1..].to_vec();
                assert_eq!(r.decode(&aligned).unwrap(), r.decode(&bytes[1..]).unwrap());
                if let Some(view) = r.wire_view(&aligned) {
                    assert_eq!(view, r.decode(&aligned).unwrap());
                }
            }
        }
        check(Z8::new());
        check(Z16::new());
        check(Z32::new());
        check(Z64::new());
        check(Z2::<u128>::new());
    }

    /// Rejection sampling keeps, in order, the draws of the stream that lie below the modulus:
    /// `w`-byte little-endian draws masked to the modulus's bits, in blocks of at most 1024
    /// (block boundaries included), for moduli that reject almost never and ones that reject
    /// often.
    #[test]
    fn rejection_sampling_keeps_the_streams_draws_below_the_modulus() {
        fn reference(n: usize, w: usize, bits: u32, below: u128) -> Vec<u128> {
            let (mut stream, mut out) = (Counter(0), Vec::new());
            while out.len() < n {
                let mut bytes = vec![0u8; (n - out.len()).min(1024) * w];
                stream.fill_bytes(&mut bytes);
                for c in bytes.chunks_exact(w) {
                    let mut b = [0u8; 16];
                    b[..w].copy_from_slice(c);
                    let x = u128::from_le_bytes(b) & (u128::MAX >> (128 - bits));
                    if x < below {
                        out.push(x);
                    }
                }
            }
            out
        }
        for n in [0, 1, 1023, 1024, 1025, 3000] {
            for t in [5u128, 65519 << 16, (1 << 40) + 1] {
                let r = Zt64::new(t).unwrap();
                let got: Vec<u128> = r.sample_vec(&mut Counter(0), n).into_iter().map(u128::from).collect();
                assert_eq!(got, reference(n, r.byte_len(), r.bits(), t), "Zt64 {t}, n = {n}");
            }
            let r = Zt::new(65519 << 20).unwrap();
            assert_eq!(r.sample_vec(&mut Counter(0), n), reference(n, 5, 36, 65519 << 20), "Zt, n = {n}");
            let f: Vec<u128> = crate::F65519.sample_vec(&mut Counter(0), n).into_iter().map(u128::from).collect();
            assert_eq!(f, reference(n, 2, 16, 65519), "F65519, n = {n}");
        }
    }

    #[test]
    fn edge_cases() {
        let r = Zt::new(u128::MAX).unwrap();
        assert_eq!(r.add(u128::MAX - 1, u128::MAX - 1), u128::MAX - 2);
        assert_eq!(r.bits(), 128);
        assert_eq!(Zt::new(65519 << 20).unwrap().bits(), 36);
        assert_eq!(Zt::pow2(36).unwrap().modulus(), Modulus::Pow2(36));
        assert!(Zt::new(1).is_err());
        assert!(Zt::pow2(128).is_err());
        let z = Z16::new();
        assert_eq!(z.from_i128(-1), u16::MAX);
        assert_eq!(z.try_from_u128(1 << 16), None);
        let zt = Zt::new(7).unwrap();
        assert_eq!(zt.from_i128(-1), 6);
        assert_eq!(zt.decode(&[7]), Err(MathError::OutOfRange { index: 0, modulus: Modulus::Int(7) }));
        assert_eq!(Z32::new().decode(&[1, 2, 3]), Err(MathError::BadEncoding { bytes: 3, elem_bytes: 4 }));
    }
}
