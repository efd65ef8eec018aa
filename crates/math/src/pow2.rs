//! [`Pow2`]: the rings Z_2^n read and written 64 bits at a time, for bit-level protocols and
//! fixed-point shifts on any width (the machine words and [`crate::Z2m`]).

use crate::{Ring, Word, Z2};

/// The rings Z_2^n the bit-level protocols run on: elements read and written 64 bits at a time.
pub trait Pow2: Ring {
    /// Bits `[64·w, 64·w + 64)` of `a`.
    fn word(&self, a: Self::El, w: usize) -> u64;
    /// The element whose bits are `words` (little-endian 64-bit words), reduced mod 2^n.
    fn of_words(&self, words: &[u64]) -> Self::El;
    /// `a >> k` (logical).
    fn shr(&self, a: Self::El, k: u32) -> Self::El;
    /// `a << k` mod 2^n.
    fn shl(&self, a: Self::El, k: u32) -> Self::El;
}

impl<W: Word> Pow2 for Z2<W> {
    fn word(&self, a: W, w: usize) -> u64 {
        match w {
            0 => self.to_u128(a) as u64,
            1 => (self.to_u128(a) >> 64) as u64,
            _ => 0,
        }
    }
    fn of_words(&self, words: &[u64]) -> W {
        let lo = words.first().copied().unwrap_or(0) as u128;
        let hi = words.get(1).copied().unwrap_or(0) as u128;
        self.from_u128(lo | hi << 64)
    }
    fn shr(&self, a: W, k: u32) -> W {
        self.from_u128(self.to_u128(a).checked_shr(k).unwrap_or(0))
    }
    fn shl(&self, a: W, k: u32) -> W {
        self.from_u128(self.to_u128(a).checked_shl(k).unwrap_or(0))
    }
}

impl<const L: usize> Pow2 for crate::Z2m<L> {
    fn word(&self, a: Self::El, w: usize) -> u64 {
        a.as_array().get(w).copied().unwrap_or(0)
    }
    fn of_words(&self, words: &[u64]) -> Self::El {
        crate::Z2m::<L>::from_limbs(self, words)
    }
    fn shr(&self, a: Self::El, k: u32) -> Self::El {
        crate::Z2m::<L>::shr(self, a, k)
    }
    fn shl(&self, a: Self::El, k: u32) -> Self::El {
        crate::Z2m::<L>::shl(self, a, k)
    }
}
