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

/// `(hi·2^128 + lo) mod m` for `m = 2^128 − c` with `c < 2^32`: `2^128 ≡ c`, so the high half
/// folds down as `hi·c` (below 2^160), and the few bits that still overflow fold once more.
#[inline]
pub fn reduce_folding(hi: u128, lo: u128, c: u128, m: u128) -> u128 {
    debug_assert!(c < 1 << 32 && m == c.wrapping_neg());
    const LOW: u128 = u64::MAX as u128;
    // hi·c = (h1·c)·2^64 + h0·c, each part below 2^96
    let (a, b) = ((hi & LOW) * c, (hi >> 64) * c);
    let (t, carry1) = (b << 64).overflowing_add(a);
    let (x, carry2) = t.overflowing_add(lo);
    // x_hi = b >> 64 plus the carries: below 2^33, so x_hi·c < 2^65
    let x_hi = (b >> 64) + u128::from(carry1) + u128::from(carry2);
    let (y, carry) = x.overflowing_add(x_hi * c);
    // a last carry leaves y below x_hi·c < 2^65: one more fold cannot overflow
    let y = if carry { y + c } else { y };
    if y >= m {
        y - m
    } else {
        y
    }
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

    /// The folding reduction equals the reference for 2^128 − 159 (and the other small c), at the
    /// edges and on random values.
    #[test]
    fn folding_matches_the_reference() {
        let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835u128;
        for c in [159u128, 1, 3, (1 << 32) - 1] {
            let m = c.wrapping_neg();
            let mut vals = vec![0, 1, 2, m - 1, m - 2, m / 2, m / 2 + 1, 1 << 127, (1 << 64) - 1, 1 << 64];
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                vals.push(x % m);
            }
            for (i, &a) in vals.iter().enumerate() {
                let b = vals[(i * 7 + 3) % vals.len()];
                let (hi, lo) = super::mul_wide(a, b);
                assert_eq!(super::reduce_folding(hi, lo, c, m), ref_mul_mod(a, b, m), "{a} · {b} mod 2^128 − {c}");
            }
        }
    }

    #[test]
    fn wide_product() {
        let (hi, lo) = super::mul_wide(u128::MAX, u128::MAX);
        assert_eq!((hi, lo), (u128::MAX - 1, 1));
    }
}
