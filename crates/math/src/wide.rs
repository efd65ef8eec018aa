//! 128 x 128 -> 256-bit products and their reduction, for moduli above 2^64.

/// Full 256-bit product `a * b` as (high, low) halves.
#[inline]
pub fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u64::MAX as u128);
    let (b1, b0) = (b >> 64, b & u64::MAX as u128);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & u64::MAX as u128) + (p10 & u64::MAX as u128);
    let lo = (p00 & u64::MAX as u128) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// `x mod m` for `m >= 1`.
#[inline]
pub fn reduce_u128(x: u128, m: u128) -> u128 {
    if x < m {
        x
    } else if m.is_power_of_two() {
        x & (m - 1)
    } else if x >> 64 == 0 {
        // A 64-bit division is several times faster than the 128-bit one.
        ((x as u64) % (m as u64)) as u128
    } else {
        x % m
    }
}

/// `(hi·2^128 + lo) mod m` with `hi < m`, by binary long division (128 steps). Used only for
/// moduli above 2^64 that are not powers of two; a Montgomery form can replace it when a
/// protocol needs the speed (paper 002's 128-bit field).
pub fn reduce_wide(mut hi: u128, lo: u128, m: u128) -> u128 {
    debug_assert!(hi < m);
    for i in (0..128).rev() {
        let top = hi >> 127;
        hi = (hi << 1) | ((lo >> i) & 1);
        if top == 1 || hi >= m {
            hi = hi.wrapping_sub(m);
        }
    }
    hi
}

/// `a * b mod m` for canonical `a, b < m`.
#[inline]
pub fn mul_mod_u128(a: u128, b: u128, m: u128) -> u128 {
    let (hi, lo) = mul_wide(a, b);
    reduce_wide(hi % m, lo, m)
}

#[cfg(test)]
pub(crate) mod tests {
    /// Independent reference: double-and-add with modular additions.
    pub fn ref_mul_mod(a: u128, mut b: u128, m: u128) -> u128 {
        let add = |x: u128, y: u128| {
            let (s, c) = x.overflowing_add(y);
            if c || s >= m {
                s.wrapping_sub(m)
            } else {
                s
            }
        };
        let (mut acc, mut base) = (0u128, a % m);
        while b > 0 {
            if b & 1 == 1 {
                acc = add(acc, base);
            }
            base = add(base, base);
            b >>= 1;
        }
        acc
    }

    #[test]
    fn wide_product() {
        let (hi, lo) = super::mul_wide(u128::MAX, u128::MAX);
        assert_eq!((hi, lo), (u128::MAX - 1, 1));
    }
}
