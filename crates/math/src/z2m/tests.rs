use super::*;
use crate::testing::Counter;
use crate::{Zt, Z128, Z16, Z64};
use num_bigint::BigUint;
use proptest::prelude::*;

/// The widths the arithmetic is checked at (those up to 64·L for each L).
const WIDTHS: [u32; 12] = [1, 63, 64, 65, 128, 129, 200, 254, 256, 511, 554, 576];

fn big<const L: usize>(a: Limbs<L>) -> BigUint {
    BigUint::from_bytes_le(bytemuck::bytes_of(&a))
}

fn is_bad_encoding<T>(res: Result<T, MathError>) -> bool {
    matches!(res, Err(MathError::BadEncoding { .. }))
}

fn pow2(k: u32) -> BigUint {
    BigUint::from(1u8) << k
}

/// Limbs with the edges (0, 1, all ones) more often than uniform draws give them.
fn limb() -> impl Strategy<Value = u64> {
    prop_oneof![3 => any::<u64>(), 1 => Just(0u64), 1 => Just(1u64), 1 => Just(u64::MAX)]
}

/// Every operation on canonical `a`, `b` against `num-bigint`, with shift count `k`.
fn check_pair<const L: usize>(r: &Z2m<L>, a: Limbs<L>, b: Limbs<L>, k: u32) {
    let m = r.bits();
    let modulus = pow2(m);
    let (x, y) = (big(a), big(b));
    assert!(x < modulus && y < modulus, "m = {m}: inputs canonical");
    let at = |what: &str| format!("L = {L}, m = {m}, a = {a:?}, b = {b:?}, k = {k}: {what}");
    assert_eq!(big(r.add(a, b)), (&x + &y) % &modulus, "{}", at("add"));
    assert_eq!(big(r.sub(a, b)), (&x + &modulus - &y) % &modulus, "{}", at("sub"));
    assert_eq!(big(r.neg(a)), (&modulus - &x) % &modulus, "{}", at("neg"));
    assert_eq!(big(r.mul(a, b)), (&x * &y) % &modulus, "{}", at("mul"));
    assert_eq!(big(r.shr(a, k)), &x >> k, "{}", at("shr"));
    assert_eq!(big(r.shl(a, k)), (&x << k) % &modulus, "{}", at("shl"));
    assert_eq!(r.bit(a, k), x.bit(k as u64), "{}", at("bit"));
    assert_eq!(r.low_u64(a), x.iter_u64_digits().next().unwrap_or(0), "{}", at("low_u64"));
    assert_eq!(BigUint::from(r.to_u128(a)), &x % pow2(128), "{}", at("to_u128"));
    for to in WIDTHS.iter().filter_map(|&w| Z2m::<L>::new(w).ok()) {
        assert_eq!(big(r.reduce_to(a, &to)), &x % pow2(to.bits()), "{}", at("reduce_to"));
    }
}

/// `check_pair` at every width up to 64·L, the operands reduced from the raw limbs.
fn check_ops<const L: usize>(a: &[u64], b: &[u64], k: u32) {
    let raw = |v: &[u64]| BigUint::from_bytes_le(bytemuck::cast_slice(&v[..L]));
    for r in WIDTHS.iter().filter_map(|&m| Z2m::<L>::new(m).ok()) {
        let (x, y) = (r.from_limbs(a), r.from_limbs(b));
        assert_eq!(big(x), raw(a) % pow2(r.bits()), "from_limbs reduces");
        check_pair(&r, x, y, k);
    }
}

proptest! {
    #[test]
    fn ops_match_bigint_2_limbs(a in proptest::array::uniform9(limb()), b in proptest::array::uniform9(limb()), k in 0u32..600) {
        check_ops::<2>(&a, &b, k);
    }

    #[test]
    fn ops_match_bigint_4_limbs(a in proptest::array::uniform9(limb()), b in proptest::array::uniform9(limb()), k in 0u32..600) {
        check_ops::<4>(&a, &b, k);
    }

    #[test]
    fn ops_match_bigint_9_limbs(a in proptest::array::uniform9(limb()), b in proptest::array::uniform9(limb()), k in 0u32..600) {
        check_ops::<9>(&a, &b, k);
    }

    /// Up to 128 bits the arithmetic and the wire form are those of `Zt` (the trait's defaults)
    /// and, at 128 bits, of the machine word.
    #[test]
    fn agrees_with_zt_up_to_128_bits(m in 1u32..=128, xs in proptest::collection::vec(any::<u128>(), 0..12), c: u128) {
        let r = Z2m::<2>::new(m).unwrap();
        let els: Vec<Limbs<2>> = xs.iter().map(|&x| r.from_u128(x)).collect();
        let vals: Vec<u128> = els.iter().map(|&x| r.to_u128(x)).collect();
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        r.wire_encode(&els, &mut mine);
        if m < 128 {
            let zt = Zt::pow2(m).unwrap();
            prop_assert_eq!(&vals, &xs.iter().map(|&x| zt.from_u128(x)).collect::<Vec<_>>());
            zt.wire_encode(&vals, &mut theirs);
            let c = zt.from_u128(c);
            for (&x, &v) in els.iter().zip(&vals) {
                prop_assert_eq!(r.to_u128(r.mul(x, r.from_u128(c))), zt.mul(v, c));
                prop_assert_eq!(r.to_u128(r.sub(x, r.from_u128(c))), zt.sub(v, c));
            }
        } else {
            Z128::new().wire_encode(&vals, &mut theirs);
        }
        prop_assert_eq!(&mine, &theirs);
        prop_assert_eq!(r.wire_decode(&theirs, xs.len()).unwrap(), els);
    }

    /// The byte form is `byte_len` little-endian bytes per element, the wire form the elements'
    /// m-bit values back to back, LSB first (both against `num-bigint`); decoding inverts them
    /// and rejects wrong lengths, stray padding bits and non-canonical values.
    #[test]
    fn wire_forms_match_the_reference(
        m in prop_oneof![
            Just(1u32), Just(7), Just(8), Just(9), Just(63), Just(64), Just(65), Just(127), Just(128),
            Just(129), Just(200), Just(254), Just(256), Just(511), Just(512), Just(554), Just(575), Just(576),
        ],
        raw in proptest::collection::vec(proptest::array::uniform9(limb()), 0..12),
        prefix in proptest::collection::vec(any::<u8>(), 0..9),
        bad: proptest::sample::Index,
    ) {
        let r = Z2m::<9>::new(m).unwrap();
        let (n, w) = (raw.len(), r.byte_len());
        let xs: Vec<Limbs<9>> = raw.iter().map(|a| r.from_limbs(a)).collect();
        let padded = |x: BigUint, len: usize| {
            let mut b = x.to_bytes_le();
            b.resize(len, 0);
            b
        };

        let bytes: Vec<u8> = xs.iter().flat_map(|&x| padded(big(x), w)).collect();
        let mut out = prefix.clone();
        r.encode(&xs, &mut out);
        prop_assert_eq!(&out[..prefix.len()], &prefix[..]);
        prop_assert_eq!(&out[prefix.len()..], &bytes[..]);
        prop_assert_eq!(r.decode(&bytes).unwrap(), xs.clone());
        for &x in &xs {
            prop_assert_eq!(r.to_le_bytes(x), padded(big(x), w));
            prop_assert_eq!(r.from_le_bytes(&r.to_le_bytes(x)), x);
        }

        let packed = xs.iter().rev().fold(BigUint::default(), |acc, &x| (acc << m) + big(x));
        let wire = padded(packed, (n * m as usize).div_ceil(8));
        prop_assert_eq!(r.wire_len(n), wire.len());
        let mut out = prefix.clone();
        r.wire_encode(&xs, &mut out);
        prop_assert_eq!(&out[..prefix.len()], &prefix[..]);
        prop_assert_eq!(&out[prefix.len()..], &wire[..]);
        prop_assert_eq!(r.wire_decode(&wire, n).unwrap(), xs.clone());
        match r.wire_view(&wire) {
            Some(view) => prop_assert_eq!(view, &xs[..]),
            None => prop_assert!(m < 576 || wire.as_ptr().align_offset(8) != 0),
        }

        let too_long = [&wire[..], &[0]].concat();
        prop_assert!(is_bad_encoding(r.wire_decode(&too_long, n)));
        if n > 0 {
            prop_assert!(is_bad_encoding(r.wire_decode(&wire[1..], n)));
            if r.wire_len(n - 1) != wire.len() {
                prop_assert!(is_bad_encoding(r.wire_decode(&wire, n - 1)));
            }
        }
        if !(n * m as usize).is_multiple_of(8) {
            let mut stray = wire.clone();
            *stray.last_mut().unwrap() |= 0x80;
            prop_assert!(is_bad_encoding(r.wire_decode(&stray, n)));
        }
        if w > 1 && n > 0 {
            prop_assert!(is_bad_encoding(r.decode(&bytes[1..])));
        }
        if !m.is_multiple_of(8) && n > 0 {
            let i = bad.index(n);
            let mut wrong = bytes.clone();
            wrong[i * w + w - 1] |= 0x80;
            prop_assert_eq!(r.decode(&wrong), Err(MathError::OutOfRange { index: i, modulus: Modulus::Pow2(m) }));
        }
    }
}

/// 0, 1, 2, 2^(m−1) − 1, 2^(m−1), 2^m − 2 and 2^m − 1 of `r`, via `num-bigint`.
fn edges<const L: usize>(r: &Z2m<L>) -> Vec<Limbs<L>> {
    let m = r.bits();
    let top = pow2(m - 1);
    let all = pow2(m) - 1u8;
    let vals = [BigUint::from(0u8), 1u8.into(), 2u8.into(), &top - 1u8, top, &all - 1u8, all];
    vals.iter().map(|v| r.from_limbs(&(v % pow2(m)).to_u64_digits())).collect()
}

fn check_edges<const L: usize>() {
    for r in WIDTHS.iter().filter_map(|&m| Z2m::<L>::new(m).ok()) {
        let m = r.bits();
        let es = edges(&r);
        for &a in &es {
            for &b in &es {
                for k in [0, 1, 63, 64, 65, m - 1, m, m + 1] {
                    check_pair(&r, a, b, k);
                }
            }
        }
        let (zero, one) = (r.zero(), r.one());
        let max = r.neg(one);
        assert_eq!(max, r.from_limbs(&[u64::MAX; 10]), "m = {m}: -1 is 2^m - 1");
        assert_eq!(r.add(max, one), zero);
        assert_eq!(r.mul(max, max), one);
        assert_eq!(r.shr(max, m - 1), one);
        assert!(r.bit(r.shl(one, m - 1), m - 1));
        assert_eq!(r.shl(one, m), zero);
        assert_eq!(r.from_i128(-1), max);
        assert_eq!(r.from_u64(u64::MAX), r.from_limbs(&[u64::MAX]));
        assert_eq!(
            r.pow(r.from_u64(3), 1 << 20),
            r.from_limbs(&(BigUint::from(3u8).pow(1 << 20) % pow2(m)).to_u64_digits())
        );
    }
}

#[test]
fn edge_cases_match_bigint() {
    check_edges::<2>();
    check_edges::<4>();
    check_edges::<9>();
}

#[test]
fn construction_refuses_bad_widths() {
    fn check<const L: usize>() {
        let width = 64 * L as u32;
        assert!(matches!(Z2m::<L>::new(0), Err(MathError::InvalidModulus { .. })));
        assert!(matches!(Z2m::<L>::new(width + 1), Err(MathError::InvalidModulus { .. })));
        let r = Z2m::<L>::new(width).unwrap();
        assert_eq!((r.bits(), r.byte_len(), r.modulus()), (width, 8 * L, Modulus::Pow2(width)));
    }
    check::<1>();
    check::<2>();
    check::<9>();
    assert!(Z2m::<0>::new(1).is_err());
    let r = Z2m::<9>::new(554).unwrap();
    assert_eq!((r.byte_len(), r.wire_len(3)), (70, 208));
    assert_eq!(format!("{r:?}"), "Z_2^554");
    assert_eq!(Z2m::<9>::new(560).unwrap().wire_len(3), 210);
}

#[test]
fn limbs_print_hex_and_default_to_zero() {
    assert_eq!(Limbs::<2>::default(), Limbs::<2>::ZERO);
    assert_eq!(format!("{:?}", Limbs::<3>::ZERO), "0x0");
    let r = Z2m::<3>::new(192).unwrap();
    assert_eq!(format!("{:?}", r.one()), "0x1");
    assert_eq!(format!("{:?}", r.from_limbs(&[1, 0xab])), "0xab0000000000000001");
    assert_eq!(format!("{:?}", r.from_limbs(&[0, 0, 0x10])), format!("0x10{}", "0".repeat(32)));
    assert_eq!(r.from_limbs(&[1, 2, 3]).as_array(), &[1, 2, 3]);
}

#[test]
fn u128_conversions() {
    fn check<const L: usize>() {
        let xs = [0u128, 1, 2, u64::MAX as u128, 1 << 64, (1 << 127) + 5, u128::MAX - 1, u128::MAX];
        for r in (1..=64 * L as u32).filter_map(|m| Z2m::<L>::new(m).ok()) {
            let m = r.bits();
            for x in xs {
                let reduced = if m >= 128 { x } else { x & ((1 << m) - 1) };
                assert_eq!(big(r.from_u128(x)), BigUint::from(reduced), "m = {m}, x = {x}");
                assert_eq!(r.to_u128(r.from_u128(x)), reduced, "m = {m}, x = {x}");
                let fits = m >= 128 || x >> m == 0;
                assert_eq!(r.try_from_u128(x), fits.then(|| r.from_u128(x)), "m = {m}, x = {x}");
                assert_eq!(r.from_i128(-((x >> 1) as i128)), r.neg(r.from_u128(x >> 1)));
            }
            // Past 128 bits `to_u128` keeps the low 128 bits only.
            assert_eq!(r.to_u128(r.neg(r.one())), if m >= 128 { u128::MAX } else { (1 << m) - 1 });
        }
    }
    check::<1>();
    check::<2>();
    check::<5>();
}

/// Samples are canonical, vary, reach the top bit, and read `byte_len` bytes of the stream each
/// (so `sample_vec` is repeated `sample`, and the machine-word widths draw what `Z2` draws).
#[test]
fn sample_is_canonical_and_reads_the_stream_in_order() {
    for r in WIDTHS.iter().map(|&m| Z2m::<9>::new(m).unwrap()) {
        let m = r.bits();
        let mut rng = Counter(7);
        let draws: Vec<Limbs<9>> = (0..64).map(|_| r.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&x| big(x) < pow2(m)), "m = {m}: canonical");
        assert!(draws.iter().any(|&x| x != draws[0]), "m = {m}: not constant");
        assert!(draws.iter().any(|&x| r.bit(x, m - 1)), "m = {m}: the top bit is drawn");
        for n in [0, 1, 255, 256, 257, 600] {
            let mut one_by_one = Counter(3);
            let want: Vec<Limbs<9>> = (0..n).map(|_| r.sample(&mut one_by_one)).collect();
            assert_eq!(r.sample_vec(&mut Counter(3), n), want, "m = {m}, n = {n}");
        }
    }
    let (r16, r64, r128) = (Z2m::<2>::new(16).unwrap(), Z2m::<2>::new(64).unwrap(), Z2m::<2>::new(128).unwrap());
    for seed in 0..8 {
        assert_eq!(r16.to_u128(r16.sample(&mut Counter(seed))), Z16::new().sample(&mut Counter(seed)) as u128);
        assert_eq!(r64.to_u128(r64.sample(&mut Counter(seed))), Z64::new().sample(&mut Counter(seed)) as u128);
        assert_eq!(r128.to_u128(r128.sample(&mut Counter(seed))), Z128::new().sample(&mut Counter(seed)));
    }
}
