//! Bit-packing of elements whose width is not a whole number of bytes (the wire form of
//! [`Ring::wire_encode`](crate::Ring::wire_encode)).

use crate::MathError;

/// Appends `w` bits of each value (LSB first, values back to back) to `out`, zero-padding the
/// last byte.
pub(crate) fn pack(values: impl Iterator<Item = u128>, w: u32, out: &mut Vec<u8>) {
    let mut acc: u128 = 0;
    let mut count = 0u32;
    let put = |x: u64, nbits: u32, acc: &mut u128, count: &mut u32, out: &mut Vec<u8>| {
        *acc |= (x as u128) << *count;
        *count += nbits;
        while *count >= 64 {
            out.extend_from_slice(&(*acc as u64).to_le_bytes());
            *acc >>= 64;
            *count -= 64;
        }
    };
    for v in values {
        let lo = w.min(64);
        let mask = |n: u32| if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        put(v as u64 & mask(lo), lo, &mut acc, &mut count, out);
        if w > 64 {
            put((v >> 64) as u64 & mask(w - 64), w - 64, &mut acc, &mut count, out);
        }
    }
    let tail = count.div_ceil(8) as usize;
    out.extend_from_slice(&acc.to_le_bytes()[..tail]);
}

/// Reads `n` values of `w` bits; the padding bits after the last value must be zero.
pub(crate) fn unpack(bytes: &[u8], w: u32, n: usize) -> Result<Vec<u128>, MathError> {
    let bad = || MathError::BadEncoding { bytes: bytes.len(), elem_bytes: 0 };
    if bytes.len() != (n * w as usize).div_ceil(8) {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(n);
    let mut acc: u128 = 0;
    let mut count = 0u32;
    let mut at = 0usize;
    let mut take = |nbits: u32, acc: &mut u128, count: &mut u32| -> u64 {
        while *count < nbits {
            let chunk = &bytes[at..(at + 8).min(bytes.len())];
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *acc |= (u64::from_le_bytes(b) as u128) << *count;
            *count += 8 * chunk.len() as u32;
            at += chunk.len();
        }
        let mask = if nbits == 64 { u64::MAX as u128 } else { (1u128 << nbits) - 1 };
        let x = (*acc & mask) as u64;
        *acc >>= nbits;
        *count -= nbits;
        x
    };
    for _ in 0..n {
        let lo = w.min(64);
        let mut v = take(lo, &mut acc, &mut count) as u128;
        if w > 64 {
            v |= (take(w - 64, &mut acc, &mut count) as u128) << 64;
        }
        out.push(v);
    }
    if acc != 0 {
        return Err(bad());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pack_roundtrip(w in 1u32..=128, seed: u64, n in 0usize..70) {
            let mask = if w == 128 { u128::MAX } else { (1u128 << w) - 1 };
            let vals: Vec<u128> = (0..n as u128).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) ^ seed as u128) & mask).collect();
            let mut out = Vec::new();
            pack(vals.iter().copied(), w, &mut out);
            prop_assert_eq!(out.len(), (n * w as usize).div_ceil(8));
            prop_assert_eq!(unpack(&out, w, n).unwrap(), vals);
        }
    }

    #[test]
    fn stray_padding_is_rejected() {
        let mut out = Vec::new();
        pack([5u128].into_iter(), 3, &mut out);
        out[0] |= 0x80;
        assert!(unpack(&out, 3, 1).is_err());
        assert!(unpack(&[0, 0], 3, 1).is_err());
    }
}
