//! The ring Z_2^m for any width 1 <= m <= 64·L, on `L` little-endian 64-bit limbs.
//!
//! The machine-word rings stop at 128 bits; fixed-point protocols such as the Goldschmidt
//! division of Sharemind keep their shares in Z_2^m with m = n + (k+1)·n' (about 254 bits for
//! n = 32, about 560 for n = 64). [`Z2m`] holds the width at run time and the limb count `L` at
//! compile time, so elements are plain `Copy` arrays and the arithmetic allocates nothing.

use std::fmt::{self, Debug};

use rand_core::RngCore;

use crate::{MathError, Modulus, Ring};

/// An element of a [`Z2m`]: `L` limbs, least significant first. Ring operations keep it
/// canonical: the bits at and above the ring's width m are zero.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limbs<const L: usize>([u64; L]);

impl<const L: usize> Limbs<L> {
    /// The zero element (of every width).
    pub const ZERO: Self = Limbs([0; L]);

    /// The limbs, least significant first.
    pub const fn as_array(&self) -> &[u64; L] {
        &self.0
    }
}

impl<const L: usize> Default for Limbs<L> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const L: usize> Debug for Limbs<L> {
    /// Hexadecimal, most significant digit first, without leading zeros (`0x0` for zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(top) = self.0.iter().rposition(|&x| x != 0) else {
            return f.write_str("0x0");
        };
        write!(f, "{:#x}", self.0[top])?;
        self.0[..top].iter().rev().try_for_each(|x| write!(f, "{x:016x}"))
    }
}

// SAFETY: a transparent wrapper of `[u64; L]`: no padding, and every bit pattern (all zeros
// included) is a value.
unsafe impl<const L: usize> bytemuck::Zeroable for Limbs<L> {}
// SAFETY: as above; `Limbs` is `Copy + 'static`.
unsafe impl<const L: usize> bytemuck::Pod for Limbs<L> {}

/// The ring Z_2^m for a run-time width 1 <= m <= 64·L, elements [`Limbs<L>`] (wrapping
/// arithmetic on the limbs below m). Choose `L = ceil(m / 64)`: the operations touch only the
/// limbs below m, but every element takes `L` limbs of memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Z2m<const L: usize> {
    bits: u32,
    /// Limb i's bits below m (a function of `bits`, kept so that reducing is one AND per limb).
    mask: Limbs<L>,
}

impl<const L: usize> Debug for Z2m<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.modulus())
    }
}

impl<const L: usize> Z2m<L> {
    /// Z_2^bits; refuses a width of 0 or above 64·L.
    pub fn new(bits: u32) -> Result<Self, MathError> {
        if bits == 0 || bits as usize > 64 * L {
            return Err(MathError::InvalidModulus {
                reason: format!("Z2m<{L}> needs 1 <= m <= {}, got {bits}", 64 * L),
            });
        }
        let mut mask = Limbs::ZERO;
        for (i, x) in mask.0.iter_mut().enumerate() {
            let keep = (bits as usize).saturating_sub(64 * i).min(64) as u32;
            *x = if keep == 64 { u64::MAX } else { (1u64 << keep) - 1 };
        }
        Ok(Z2m { bits, mask })
    }

    /// Limbs that hold bits below m: `ceil(m / 64)`, at least 1 and at most `L`.
    #[inline(always)]
    fn used(&self) -> usize {
        self.bits.div_ceil(64) as usize
    }

    /// The bits of the top used limb that lie below m.
    #[inline(always)]
    fn top_mask(&self) -> u64 {
        u64::MAX >> (64 * self.used() as u32 - self.bits)
    }

    /// `a mod 2^m`: clears the bits at and above m.
    #[inline(always)]
    fn canon(&self, mut a: Limbs<L>) -> Limbs<L> {
        a.0.iter_mut().zip(&self.mask.0).for_each(|(x, m)| *x &= m);
        a
    }

    /// The element of the first `byte_len` bytes of `c` (little-endian), reduced mod 2^m.
    #[inline]
    fn of_chunk(&self, c: &[u8]) -> Limbs<L> {
        let mut a = Limbs::ZERO;
        bytemuck::bytes_of_mut(&mut a)[..c.len()].copy_from_slice(c);
        self.canon(a)
    }

    /// The element of the bytes from `at` (little-endian), reduced mod 2^m: `at + 8·L` bytes
    /// must exist (the bytes past the element's `byte_len` are masked off), so that the load is
    /// `L` whole words and not a copy of a run-time length.
    #[inline(always)]
    fn load(&self, bytes: &[u8], at: usize) -> Limbs<L> {
        let mut a = Limbs::ZERO;
        for (x, w) in a.0.iter_mut().zip(bytes[at..at + 8 * L].chunks_exact(8)) {
            *x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        }
        self.canon(a)
    }

    /// `x mod 2^m`.
    #[allow(clippy::wrong_self_convention)]
    pub fn from_u64(&self, x: u64) -> Limbs<L> {
        let mut a = Limbs::ZERO;
        a.0[0] = x;
        self.canon(a)
    }

    /// The integer `sum_i limbs[i]·2^(64·i)` mod 2^m (limbs past `L` lie above m and drop out).
    #[allow(clippy::wrong_self_convention)]
    pub fn from_limbs(&self, limbs: &[u64]) -> Limbs<L> {
        let mut a = Limbs::ZERO;
        let k = limbs.len().min(L);
        a.0[..k].copy_from_slice(&limbs[..k]);
        self.canon(a)
    }

    /// The little-endian integer `bytes` mod 2^m (any length; bytes past `8·L` drop out).
    #[allow(clippy::wrong_self_convention)]
    pub fn from_le_bytes(&self, bytes: &[u8]) -> Limbs<L> {
        self.of_chunk(&bytes[..bytes.len().min(8 * L)])
    }

    /// The `byte_len` little-endian bytes of `a` (the form [`encode`](Ring::encode) writes).
    pub fn to_le_bytes(&self, a: Limbs<L>) -> Vec<u8> {
        bytemuck::bytes_of(&a)[..self.byte_len()].to_vec()
    }

    /// The low 64 bits of `a`.
    pub fn low_u64(&self, a: Limbs<L>) -> u64 {
        a.0[0]
    }

    /// Bit `i` of `a` (false for `i >= m`).
    pub fn bit(&self, a: Limbs<L>, i: u32) -> bool {
        i < self.bits && (a.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    /// `floor(a / 2^k)`, the logical right shift (zero for `k >= m`).
    pub fn shr(&self, a: Limbs<L>, k: u32) -> Limbs<L> {
        if k >= self.bits {
            return Limbs::ZERO;
        }
        let (q, r) = ((k / 64) as usize, k % 64);
        let n = self.used();
        let mut out = Limbs::ZERO;
        for i in 0..n - q {
            let hi = if r > 0 && i + q + 1 < n { a.0[i + q + 1] << (64 - r) } else { 0 };
            out.0[i] = a.0[i + q] >> r | hi;
        }
        out
    }

    /// `a · 2^k mod 2^m` (zero for `k >= m`).
    pub fn shl(&self, a: Limbs<L>, k: u32) -> Limbs<L> {
        if k >= self.bits {
            return Limbs::ZERO;
        }
        let (q, r) = ((k / 64) as usize, k % 64);
        let mut out = Limbs::ZERO;
        for i in q..self.used() {
            let lo = if r > 0 && i > q { a.0[i - q - 1] >> (64 - r) } else { 0 };
            out.0[i] = a.0[i - q] << r | lo;
        }
        self.canon(out)
    }

    /// `a mod 2^m'` for the width m' of `to`: the low m' bits for a narrower ring, the same value
    /// (zero-extended) for a wider one.
    pub fn reduce_to(&self, a: Limbs<L>, to: &Z2m<L>) -> Limbs<L> {
        to.canon(a)
    }
}

impl<const L: usize> Ring for Z2m<L> {
    type El = Limbs<L>;
    fn modulus(&self) -> Modulus {
        Modulus::Pow2(self.bits)
    }
    fn bits(&self) -> u32 {
        self.bits
    }
    fn byte_len(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }
    #[inline(always)]
    fn zero(&self) -> Limbs<L> {
        Limbs::ZERO
    }
    #[inline(always)]
    fn one(&self) -> Limbs<L> {
        self.from_u64(1)
    }
    // Addition and subtraction run over all `L` limbs (a fixed, unrolled loop: the limbs above
    // m are zero and `canon` drops what carries into them).
    #[inline]
    fn add(&self, a: Limbs<L>, b: Limbs<L>) -> Limbs<L> {
        let mut out = Limbs::ZERO;
        let mut carry = false;
        for i in 0..L {
            let (s, c1) = a.0[i].overflowing_add(b.0[i]);
            let (s, c2) = s.overflowing_add(carry as u64);
            out.0[i] = s;
            carry = c1 | c2;
        }
        self.canon(out)
    }
    #[inline]
    fn sub(&self, a: Limbs<L>, b: Limbs<L>) -> Limbs<L> {
        let mut out = Limbs::ZERO;
        let mut borrow = false;
        for i in 0..L {
            let (d, b1) = a.0[i].overflowing_sub(b.0[i]);
            let (d, b2) = d.overflowing_sub(borrow as u64);
            out.0[i] = d;
            borrow = b1 | b2;
        }
        self.canon(out)
    }
    #[inline]
    fn neg(&self, a: Limbs<L>) -> Limbs<L> {
        self.sub(Limbs::ZERO, a)
    }
    #[inline]
    fn mul(&self, a: Limbs<L>, b: Limbs<L>) -> Limbs<L> {
        // The loop bounds are constants at every used limb count (an unrolled product): the
        // division's rings narrow step by step inside one limb count `L`.
        let (a, b) = (&a.0, &b.0);
        let out = match self.used() {
            1 => mul_low::<L, 1>(a, b),
            2 => mul_low::<L, 2>(a, b),
            3 => mul_low::<L, 3>(a, b),
            4 => mul_low::<L, 4>(a, b),
            5 => mul_low::<L, 5>(a, b),
            6 => mul_low::<L, 6>(a, b),
            7 => mul_low::<L, 7>(a, b),
            8 => mul_low::<L, 8>(a, b),
            9 => mul_low::<L, 9>(a, b),
            10 => mul_low::<L, 10>(a, b),
            _ => mul_low::<L, L>(a, b),
        };
        self.canon(Limbs(out))
    }
    fn from_u128(&self, x: u128) -> Limbs<L> {
        self.from_limbs(&[x as u64, (x >> 64) as u64])
    }
    /// The low 128 bits of `a`: for m > 128 this truncates (use [`Z2m::shr`] or the limbs for
    /// the rest).
    fn to_u128(&self, a: Limbs<L>) -> u128 {
        let hi = if L > 1 { a.0[1] } else { 0 };
        (hi as u128) << 64 | a.0[0] as u128
    }
    fn try_from_u128(&self, x: u128) -> Option<Limbs<L>> {
        (self.bits >= 128 || x >> self.bits == 0).then(|| self.from_u128(x))
    }
    /// `byte_len` bytes of the stream, masked to m bits (uniform: every m-bit pattern is an
    /// element).
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> Limbs<L> {
        let mut a = Limbs::ZERO;
        rng.fill_bytes(&mut bytemuck::bytes_of_mut(&mut a)[..self.byte_len()]);
        self.canon(a)
    }
    /// The same elements as `n` calls of [`sample`](Ring::sample), the stream drawn in blocks.
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<Limbs<L>> {
        const BLOCK: usize = 256;
        let w = self.byte_len();
        // `8·L` spare bytes for the whole-word loads of the block's last elements
        let mut buf = vec![0u8; w * BLOCK.min(n.max(1)) + 8 * L];
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let k = (n - v.len()).min(BLOCK);
            rng.fill_bytes(&mut buf[..k * w]);
            v.extend((0..k).map(|i| self.load(&buf, i * w)));
        }
        v
    }
    fn wire_len(&self, n: usize) -> usize {
        if self.bits.is_multiple_of(8) {
            n * self.byte_len()
        } else {
            (n * self.bits as usize).div_ceil(8)
        }
    }
    /// [`encode`](Ring::encode) for a width that is a whole number of bytes, else m bits per
    /// element, LSB first, the last byte zero-padded (the trait's convention, past 128 bits).
    fn wire_encode(&self, xs: &[Limbs<L>], out: &mut Vec<u8>) {
        if self.bits.is_multiple_of(8) {
            return self.encode(xs, out);
        }
        // Element i starts at bit i·m: its limbs, shifted by that offset within a 64-bit word,
        // are ORed into the zeroed output, which has 16 spare bytes for the last word's carry
        // while it is written.
        let (m, n) = (self.bits as usize, self.used());
        let len = self.wire_len(xs.len());
        let start = out.len();
        out.resize(start + len + 16, 0);
        let buf = &mut out[start..];
        let mut or_at = |word: usize, v: u64| {
            let b: &mut [u8; 8] = (&mut buf[8 * word..8 * word + 8]).try_into().expect("8 bytes");
            *b = (u64::from_le_bytes(*b) | v).to_le_bytes();
        };
        for (i, x) in xs.iter().enumerate() {
            let x = self.canon(*x);
            let (q, r) = (i * m / 64, (i * m % 64) as u32);
            for (j, &limb) in x.0[..n].iter().enumerate() {
                or_at(q + j, limb << r);
                // `limb >> (64 − r)`, and 0 for r = 0 (where a single shift would overflow).
                or_at(q + j + 1, (limb >> 1) >> (63 - r));
            }
        }
        out.truncate(start + len);
    }
    fn wire_decode(&self, bytes: &[u8], n: usize) -> Result<Vec<Limbs<L>>, MathError> {
        let bad = || MathError::BadEncoding { bytes: bytes.len(), elem_bytes: self.byte_len() };
        if bytes.len() != self.wire_len(n) {
            return Err(bad());
        }
        if self.bits.is_multiple_of(8) {
            return self.decode(bytes);
        }
        // The inverse of `wire_encode`: the bytes are copied into words (a spare zero word at the
        // end), and limb j of element i is the 64 bits from bit i·m + 64·j, masked at m.
        let (m, used) = (self.bits as usize, self.used());
        let mut words = vec![0u64; bytes.len().div_ceil(8) + 1];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (q, r) = (i * m / 64, (i * m % 64) as u32);
            let x = read_limbs(&words, q, r, used);
            out.push(self.canon(Limbs(x)));
        }
        // The bits after the last element are padding, and must be zero.
        let end = n * m;
        if words[end / 64] >> (end % 64) != 0 {
            return Err(bad());
        }
        Ok(out)
    }
    fn encode(&self, xs: &[Limbs<L>], out: &mut Vec<u8>) {
        let w = self.byte_len();
        if w == 8 * L {
            // Little-endian targets (see ring.rs): the in-memory form is the wire form.
            return out.extend_from_slice(bytemuck::cast_slice(xs));
        }
        // Whole elements written `w` bytes apart, each over the (zero) tail of the one before,
        // with `8·L` spare bytes for the last, then cut.
        let start = out.len();
        out.resize(start + xs.len() * w + 8 * L, 0);
        for (i, x) in xs.iter().enumerate() {
            let at = start + i * w;
            out[at..at + 8 * L].copy_from_slice(bytemuck::bytes_of(&self.canon(*x)));
        }
        out.truncate(start + xs.len() * w);
    }
    fn wire_view<'a>(&self, bytes: &'a [u8]) -> Option<&'a [Limbs<L>]> {
        // Only at the full width is every bit pattern of `8·L` bytes an element.
        if self.bits as usize == 64 * L {
            bytemuck::try_cast_slice(bytes).ok()
        } else {
            None
        }
    }
    fn decode(&self, bytes: &[u8]) -> Result<Vec<Limbs<L>>, MathError> {
        let w = self.byte_len();
        if !bytes.len().is_multiple_of(w) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: w });
        }
        if self.bits as usize == 64 * L {
            return Ok(bytemuck::pod_collect_to_vec(bytes));
        }
        let count = bytes.len() / w;
        let mut out = Vec::with_capacity(count);
        if self.bits.is_multiple_of(8) {
            // Every pattern of `w` bytes is an element: whole-word loads while `8·L` bytes remain.
            let fast = bytes.len().checked_sub(8 * L).map_or(0, |slack| (slack / w + 1).min(count));
            out.extend((0..fast).map(|i| self.load(bytes, i * w)));
            out.extend(bytes[fast * w..].chunks_exact(w).map(|c| self.of_chunk(c)));
            return Ok(out);
        }
        // Below the full width an element's top byte may carry bits at or above m: refused.
        let n = self.used();
        let mask = self.top_mask();
        for (index, c) in bytes.chunks_exact(w).enumerate() {
            let mut x = Limbs::ZERO;
            bytemuck::bytes_of_mut(&mut x)[..w].copy_from_slice(c);
            if x.0[n - 1] & !mask != 0 {
                return Err(MathError::OutOfRange { index, modulus: self.modulus() });
            }
            out.push(x);
        }
        Ok(out)
    }
}

/// The low `min(N, L)` limbs of `a · b` (limbs of `a` and `b` at and above them ignored), by the
/// truncated schoolbook product: only the partial products below limb `N`, carries in `u128`
/// (`(2^64−1)^2 + 2·(2^64−1) < 2^128`, so a step cannot overflow).
#[inline(always)]
fn mul_low<const L: usize, const N: usize>(a: &[u64; L], b: &[u64; L]) -> [u64; L] {
    let n = N.min(L);
    let mut out = [0u64; L];
    for i in 0..n {
        let x = a[i] as u128;
        let mut carry = 0u64;
        for j in 0..n - i {
            let t = x * b[j] as u128 + out[i + j] as u128 + carry as u128;
            out[i + j] = t as u64;
            carry = (t >> 64) as u64;
        }
    }
    out
}

/// `n <= L` limbs of the bit string `words` from bit `64·q + r` (`r < 64`); `words` holds a word
/// past the last one read.
#[inline(always)]
fn read_limbs<const L: usize>(words: &[u64], q: usize, r: u32, n: usize) -> [u64; L] {
    let mut x = [0u64; L];
    let src = &words[q..q + n.min(L) + 1];
    for (j, limb) in x.iter_mut().take(n).enumerate() {
        // `src[j + 1] << (64 − r)`, and 0 for r = 0.
        *limb = src[j] >> r | (src[j + 1] << (63 - r)) << 1;
    }
    x
}

#[cfg(test)]
mod tests;
