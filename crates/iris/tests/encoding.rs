//! The masked-bitvector identity and the MPC comparison against the reference matcher.

use argus_iris::*;
use argus_math::BitVec;
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

fn code(g: IrisGeometry, code: BitVec, mask: BitVec) -> IrisCode {
    IrisCode::new(g, code, mask).unwrap()
}

/// Checks every claim about one pair: identity, MPC comparison, ring MSB with Lemma 2's k.
fn check_pair(a: &IrisCode, b: &IrisCode, th: Threshold) {
    let (hd, ml) = distance(a, b).unwrap();
    let (dot, ml2) = masked_dot(a, b).unwrap();
    assert_eq!(ml2, ml);
    assert_eq!(dot, ml as i64 - 2 * hd as i64);
    assert_eq!(hd_from_dot(ml, dot), Some(hd));
    check_numbers(a.geometry().bits(), hd, ml, th);
}

/// The comparison on bare numbers: `hd <= ml <= l`.
fn check_numbers(l: usize, hd: u64, ml: u64, th: Threshold) {
    let dot = ml as i64 - 2 * hd as i64;
    let expected = th.matches(hd, ml);
    assert_eq!(mpc_match(th, ml, dot), expected, "hd={hd} ml={ml} th={th:?}");
    let k = lemma2_ring_bits(l, th);
    let v = mpc_comparison_value(th, ml, dot);
    assert!(v.unsigned_abs() < 1u128 << (k - 1), "value fits the signed range of Z_2^{k}");
    // Reduce mod 2^k as a party would hold it, then read the MSB.
    let reduced = if k == 128 { v as u128 } else { (v as u128) & ((1u128 << k) - 1) };
    assert_eq!(ring_msb(reduced as i128, k), Some(expected), "hd={hd} ml={ml} th={th:?} k={k}");
    assert_eq!(ring_msb(v, k), Some(expected));
}

#[test]
fn exhaustive_small() {
    // Every (hd, ml) with ml <= 64 against every threshold num / 2^d, d <= 6 (including 0 and 1,
    // and hd exactly at the threshold whenever num·ml is a multiple of 2^d).
    let l = 64;
    for d in 0..=6u32 {
        for num in 0..=(1u64 << d) {
            let th = Threshold::new(num, d).unwrap();
            for ml in 0..=l as u64 {
                for hd in 0..=ml {
                    check_numbers(l, hd, ml, th);
                }
            }
        }
    }
}

/// `comparison_range` is the exact range of `a·ml − b·dot`: every value the pairs of codes of
/// `l` bits give lies in it and both ends are reached, for per-bit masks (`ml` counts bits,
/// `dot = ml − 2·hd`) and trimmed ones (`ml` counts pairs, `a` doubled, each pair adding −2, 0
/// or 2 to `dot`), for every threshold `num / 2^d`, `d ≤ 6`.
#[test]
fn comparison_range_is_exact() {
    let l = 64usize;
    for d in 0..=6u32 {
        for num in 0..=(1u64 << d) {
            let (a, b) = mpc_comparison_terms(Threshold::new(num, d).unwrap());
            for (factor, step) in [(1i128, 1i128), (2, 2)] {
                let pairs = l as i128 / factor;
                let values = (0..=pairs).flat_map(|ml| (-ml..=ml).map(move |k| a * factor * ml - b * step * k));
                let (lo, hi) = values.fold((0, 0), |(lo, hi), v| (v.min(lo), v.max(hi)));
                assert_eq!(comparison_range(l, factor, a * factor, b), (lo, hi), "{num}/2^{d}, factor {factor}");
            }
        }
    }
}

#[test]
fn at_threshold_is_not_a_match() {
    for (num, d, ml) in [(22610u64, 16u32, 32768u64), (1, 1, 12800), (3, 3, 8), (1 << 20, 21, 6400)] {
        let th = Threshold::new(num, d).unwrap();
        let hd = (num * ml) >> d;
        assert_eq!(hd << d, num * ml, "exactly at the threshold");
        assert!(!th.matches(hd, ml));
        assert!(th.matches(hd - 1, ml));
        check_numbers(ml as usize, hd, ml, th);
        check_numbers(ml as usize, hd - 1, ml, th);
    }
}

#[test]
fn edge_codes() {
    let g = IrisGeometry::DEPLOYED;
    let n = g.bits();
    let mut rng = StdRng::seed_from_u64(11);
    let (ca, cb) = (BitVec::random(&mut rng, n), BitVec::random(&mut rng, n));
    let th = Threshold::DEFAULT;
    // All masked: ml = 0, dot = 0, never a match.
    let a = code(g, ca.clone(), BitVec::zeros(n));
    let b = code(g, cb.clone(), BitVec::ones(n));
    assert_eq!(masked_dot(&a, &b).unwrap(), (0, 0));
    assert!(!match_eye(&a, &a, th, &(-15..=15)).unwrap());
    check_pair(&a, &b, th);
    // Nothing masked.
    let a = code(g, ca.clone(), BitVec::ones(n));
    check_pair(&a, &b, th);
    // Identical codes: hd = 0.
    assert_eq!(distance(&a, &a).unwrap(), (0, n as u64));
    assert_eq!(masked_dot(&a, &a).unwrap(), (n as i64, n as u64));
    check_pair(&a, &a, th);
    // Complementary codes: hd = ml.
    let c = code(g, ca.not(), BitVec::ones(n));
    assert_eq!(distance(&a, &c).unwrap(), (n as u64, n as u64));
    check_pair(&a, &c, th);
    // Thresholds 0 and 1.
    check_pair(&a, &a, Threshold::new(0, 16).unwrap());
    check_pair(&a, &c, Threshold::new(1 << 16, 16).unwrap());
}

#[test]
fn encoding_values() {
    let g = IrisGeometry::DEPLOYED;
    let mut gen = Generator::new(g, 5).unwrap();
    let c = gen.random_code();
    let e = encode_masked(&c);
    let m = mask_vector(&c);
    for i in 0..g.bits() {
        let (a, k) = (c.code().get(i) as i8, c.mask().get(i) as i8);
        assert_eq!(e[i], k - 2 * (a & k));
        assert_eq!(m[i] as i8, k);
        assert_eq!(e[i] * e[i], k, "a'^2 extracts the mask");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn identity_on_random_codes(seed in any::<u64>(), rows in 1usize..5, cols in 1usize..40, filters in 1usize..3, parts in 1usize..3,
                                 mask_density in 0.0f64..=1.0, d in 0u32..=62, frac in 0.0f64..=1.0) {
        let g = IrisGeometry::new(rows, cols, filters, parts).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let n = g.bits();
        let rand_mask = |rng: &mut StdRng| BitVec::from_bools(&(0..n).map(|_| rng.gen_bool(mask_density)).collect::<Vec<_>>());
        let (ma, mb) = (rand_mask(&mut rng), rand_mask(&mut rng));
        let a = code(g, BitVec::random(&mut rng, n), ma);
        let b = code(g, BitVec::random(&mut rng, n), mb);
        let th = Threshold::from_fraction(frac, d).unwrap();
        check_pair(&a, &b, th);
        check_pair(&a, &a, th);
    }

    #[test]
    fn comparison_on_random_numbers(l in 1usize..=(1usize << 32), d in 0u32..=62, num_frac in 0.0f64..=1.0,
                                    ml_frac in 0.0f64..=1.0, hd_frac in 0.0f64..=1.0) {
        let th = Threshold::from_fraction(num_frac, d).unwrap();
        let ml = ((l as f64 * ml_frac) as u64).min(l as u64);
        let hd = ((ml as f64 * hd_frac) as u64).min(ml);
        check_numbers(l, hd, ml, th);
        // Right next to the threshold: the largest hd with hd·B <= num·ml, and its neighbours.
        let edge = ((th.num() as u128 * ml as u128) >> d) as u64;
        for h in [edge.saturating_sub(1), edge, edge + 1] {
            if h <= ml {
                check_numbers(l, h, ml, th);
            }
        }
    }
}
