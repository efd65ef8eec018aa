//! Prime fields: the hot 16-bit field F_65519 (p = 2^16 - 17, paper 000 section 4.3.2) and `Fp`
//! for any prime below 2^128 (e.g. the 128-bit prime of paper 002).

use std::fmt::{self, Debug};

use rand_core::RngCore;

use crate::ring::{Modulus, Ring, Zt};
use crate::MathError;

/// A ring in which every non-zero element has an inverse.
pub trait Field: Ring {
    /// `a^-1`, or `None` for zero.
    fn inv(&self, a: Self::El) -> Option<Self::El>;
}

/// F_p with p = 2^16 - 17 = 65519, elements as canonical `u16`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F65519;

impl F65519 {
    /// The prime 2^16 - 17.
    pub const P: u16 = 65519;
}

impl Debug for F65519 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F_65519")
    }
}

impl Ring for F65519 {
    type El = u16;
    fn modulus(&self) -> Modulus {
        Modulus::Int(Self::P as u128)
    }
    fn bits(&self) -> u32 {
        16
    }
    fn byte_len(&self) -> usize {
        2
    }
    fn zero(&self) -> u16 {
        0
    }
    fn one(&self) -> u16 {
        1
    }
    #[inline(always)]
    fn add(&self, a: u16, b: u16) -> u16 {
        let s = a as u32 + b as u32;
        (if s >= Self::P as u32 { s - Self::P as u32 } else { s }) as u16
    }
    #[inline(always)]
    fn sub(&self, a: u16, b: u16) -> u16 {
        if a >= b {
            a - b
        } else {
            (a as u32 + Self::P as u32 - b as u32) as u16
        }
    }
    #[inline(always)]
    fn mul(&self, a: u16, b: u16) -> u16 {
        ((a as u32 * b as u32) % Self::P as u32) as u16
    }
    fn from_u128(&self, x: u128) -> u16 {
        (x % Self::P as u128) as u16
    }
    fn to_u128(&self, a: u16) -> u128 {
        a as u128
    }
    fn try_from_u128(&self, x: u128) -> Option<u16> {
        (x < Self::P as u128).then_some(x as u16)
    }
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u16 {
        self.sample_vec(rng, 1)[0]
    }
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<u16> {
        crate::ring::sample_rejecting(rng, n, 2, |x| (x as u16, x < Self::P as u128))
    }
    fn gemm(&self, a: &[u16], b: &[u16], len: usize, out: &mut [u16]) {
        crate::kernels::gemm_f65519(a, b, len, out).expect("canonical inputs in whole rows")
    }
    fn dot(&self, a: &[u16], b: &[u16]) -> u16 {
        // SIMD kernel with deferred reduction; shares are canonical by construction.
        crate::kernels::dot_f65519(a, b).expect("canonical inputs of equal length")
    }
    fn decode(&self, bytes: &[u8]) -> Result<Vec<u16>, MathError> {
        if !bytes.len().is_multiple_of(2) {
            return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: 2 });
        }
        bytes
            .chunks_exact(2)
            .enumerate()
            .map(|(index, c)| {
                let x = u16::from_le_bytes([c[0], c[1]]);
                if x < Self::P {
                    Ok(x)
                } else {
                    Err(MathError::OutOfRange { index, modulus: self.modulus() })
                }
            })
            .collect()
    }
}

impl Field for F65519 {
    fn inv(&self, a: u16) -> Option<u16> {
        (a != 0).then(|| self.pow(a, Self::P as u128 - 2))
    }
}

/// F_p for any prime 2 < p < 2^128; elements are canonical `u128`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fp {
    zt: Zt,
}

impl Debug for Fp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F_{}", self.zt.t())
    }
}

/// The largest prime below 2^128, 2^128 - 159: the default "128-bit prime" field.
pub const P128: u128 = u128::MAX - 158;

impl Fp {
    /// F_p; refuses p that is not an odd prime (Miller–Rabin).
    pub fn new(p: u128) -> Result<Self, MathError> {
        if p < 3 || !is_probable_prime(p) {
            return Err(MathError::InvalidModulus { reason: format!("{p} is not an odd prime") });
        }
        Ok(Fp { zt: Zt::new(p)? })
    }
    /// F_p with p = 2^128 - 159.
    pub fn p128() -> Self {
        Fp { zt: Zt::new(P128).expect("valid") }
    }
    /// The prime p.
    pub fn p(&self) -> u128 {
        self.zt.t()
    }
}

impl Ring for Fp {
    type El = u128;
    fn modulus(&self) -> Modulus {
        self.zt.modulus()
    }
    fn bits(&self) -> u32 {
        self.zt.bits()
    }
    fn byte_len(&self) -> usize {
        self.zt.byte_len()
    }
    fn zero(&self) -> u128 {
        0
    }
    fn one(&self) -> u128 {
        1
    }
    fn add(&self, a: u128, b: u128) -> u128 {
        self.zt.add(a, b)
    }
    fn sub(&self, a: u128, b: u128) -> u128 {
        self.zt.sub(a, b)
    }
    fn mul(&self, a: u128, b: u128) -> u128 {
        self.zt.mul(a, b)
    }
    fn from_u128(&self, x: u128) -> u128 {
        self.zt.from_u128(x)
    }
    fn to_u128(&self, a: u128) -> u128 {
        a
    }
    fn try_from_u128(&self, x: u128) -> Option<u128> {
        self.zt.try_from_u128(x)
    }
    fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u128 {
        self.zt.sample(rng)
    }
    fn sample_vec<R: RngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<u128> {
        self.zt.sample_vec(rng, n)
    }
}

impl Field for Fp {
    fn inv(&self, a: u128) -> Option<u128> {
        (a != 0).then(|| self.pow(a, self.p() - 2))
    }
}

/// Miller–Rabin with the first 24 prime bases (deterministic far beyond 2^64; for 128-bit
/// candidates the error probability is below 4^-24 for adversarial and negligible for ours).
pub fn is_probable_prime(n: u128) -> bool {
    const BASES: [u128; 24] =
        [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89];
    if n < 2 {
        return false;
    }
    for &b in &BASES {
        if n == b {
            return true;
        }
        if n.is_multiple_of(b) {
            return false;
        }
    }
    let r = Zt::new(n).expect("n >= 2");
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    let pow = |a, e| r.pow(a, e);
    'bases: for &b in &BASES {
        let mut x = pow(b, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = r.mul(x, x);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn primes() {
        assert!(is_probable_prime(65519));
        assert!(is_probable_prime(P128));
        assert!(!is_probable_prime(65519 * 3));
        assert!(!is_probable_prime(u128::MAX));
        assert!(Fp::new(65520).is_err());
        assert_eq!(Fp::p128().bits(), 128);
    }

    proptest! {
        #[test]
        fn f65519_matches_reference(a in 0u16..65519, b in 0u16..65519) {
            let f = F65519;
            let p = 65519u64;
            prop_assert_eq!(f.mul(a, b) as u64, a as u64 * b as u64 % p);
            prop_assert_eq!(f.add(a, b) as u64, (a as u64 + b as u64) % p);
            prop_assert_eq!(f.sub(a, b) as u64, (a as u64 + p - b as u64) % p);
            if a != 0 { prop_assert_eq!(f.mul(a, f.inv(a).unwrap()), 1); }
        }

        #[test]
        fn fp128_inverse(a in 1u128..P128) {
            let f = Fp::p128();
            prop_assert_eq!(f.mul(a, f.inv(a).unwrap()), 1);
        }
    }

    #[test]
    fn f65519_edges() {
        let f = F65519;
        assert_eq!(f.add(65518, 1), 0);
        assert_eq!(f.from_i128(-1), 65518);
        assert_eq!(f.mul(65518, 65518), 1);
        assert_eq!(f.try_from_u128(65519), None);
        assert!(f.decode(&65519u16.to_le_bytes()).is_err());
        assert_eq!(f.inv(0), None);
    }
}
