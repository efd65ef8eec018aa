//! Every public kernel at every available level against a naive reference, plus the edge
//! cases the fast paths are most likely to get wrong and every error variant.

use proptest::prelude::*;
use proptest::sample::select;

use super::dispatch::backend;
use super::isa::resolve;
use super::*;

const P: u16 = P65519;

/// Deterministic test data: `n` xorshift64 steps from `state`, each reduced mod `m` (`1 << 16`
/// for any u16).
fn xorshift_u16(state: &mut u64, n: usize, m: u64) -> Vec<u16> {
    (0..n)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            (*state % m) as u16
        })
        .collect()
}

/// Naive references: simple loops, wrapping arithmetic or `% p` in u64, nothing shared with
/// the implementations under test.
mod reference {
    use super::P;

    pub fn fadd(a: u16, b: u16) -> u16 {
        ((a as u64 + b as u64) % P as u64) as u16
    }
    pub fn fsub(a: u16, b: u16) -> u16 {
        ((a as u64 + P as u64 - b as u64) % P as u64) as u16
    }
    pub fn fmul(a: u16, b: u16) -> u16 {
        ((a as u64 * b as u64) % P as u64) as u16
    }
    pub fn fdot(a: &[u16], b: &[u16]) -> u16 {
        let mut acc = 0u64;
        for i in 0..a.len() {
            acc = (acc + a[i] as u64 * b[i] as u64) % P as u64;
        }
        acc as u16
    }

    macro_rules! ring {
        ($dot:ident, $t:ty) => {
            pub fn $dot(a: &[$t], b: &[$t]) -> $t {
                let mut acc: $t = 0;
                for i in 0..a.len() {
                    acc = acc.wrapping_add(a[i].wrapping_mul(b[i]));
                }
                acc
            }
        };
    }
    ring!(dot16, u16);
    ring!(dot32, u32);
    ring!(dot64, u64);

    /// out[i*rows_b + j] = dot(a_i, b_j).
    pub fn gemm<T: Copy>(a: &[T], b: &[T], len: usize, dot: fn(&[T], &[T]) -> T) -> Vec<T> {
        let (ra, rb) = (a.len() / len, b.len() / len);
        let mut out = Vec::new();
        for i in 0..ra {
            for j in 0..rb {
                out.push(dot(&a[i * len..(i + 1) * len], &b[j * len..(j + 1) * len]));
            }
        }
        out
    }
}

type Binary<T> = fn(Isa, &mut [T], &[T]) -> Result<(), KernelError>;
type Scalar<T> = fn(Isa, &mut [T], T) -> Result<(), KernelError>;
type Dot<T> = fn(Isa, &[T], &[T]) -> Result<T, KernelError>;
type Gemm<T> = fn(Isa, &[T], &[T], usize, &mut [T]) -> Result<(), KernelError>;

fn check_binary<T: Copy + PartialEq + std::fmt::Debug>(
    name: &str,
    f: Binary<T>,
    r: fn(T, T) -> T,
    dst: &[T],
    src: &[T],
) {
    let expect: Vec<T> = dst.iter().zip(src).map(|(&x, &y)| r(x, y)).collect();
    for isa in available() {
        let mut d = dst.to_vec();
        f(isa, &mut d, src).unwrap();
        assert_eq!(d, expect, "{name} at {isa}, len {}", dst.len());
    }
}

fn check_scalar<T: Copy + PartialEq + std::fmt::Debug>(name: &str, f: Scalar<T>, r: fn(T, T) -> T, dst: &[T], s: T) {
    let expect: Vec<T> = dst.iter().map(|&x| r(x, s)).collect();
    for isa in available() {
        let mut d = dst.to_vec();
        f(isa, &mut d, s).unwrap();
        assert_eq!(d, expect, "{name} at {isa}, len {}", dst.len());
    }
}

fn check_dot<T: Copy + PartialEq + std::fmt::Debug>(name: &str, f: Dot<T>, r: fn(&[T], &[T]) -> T, a: &[T], b: &[T]) {
    let expect = r(a, b);
    for isa in available() {
        assert_eq!(f(isa, a, b).unwrap(), expect, "{name} at {isa}, len {}", a.len());
    }
}

fn check_gemm<T: Copy + PartialEq + std::fmt::Debug + Default>(
    name: &str,
    f: Gemm<T>,
    r: fn(&[T], &[T]) -> T,
    a: &[T],
    b: &[T],
    len: usize,
) {
    let expect = reference::gemm(a, b, len, r);
    for isa in available() {
        // Pre-filled with garbage: the kernels must overwrite, not accumulate into, `out`.
        let mut out = vec![T::default(); expect.len()];
        if let Some(first) = a.first() {
            out.fill(*first);
        }
        f(isa, a, b, len, &mut out).unwrap();
        assert_eq!(out, expect, "{name} at {isa}, {}x{} rows of len {len}", a.len() / len, b.len() / len);
    }
}

/// Generates the proptest and edge-case tests of one ring Z_2^k.
macro_rules! ring_tests {
    ($modname:ident, $t:ty, $dot_ref:path, [$add:ident, $sub:ident, $mul:ident, $smul:ident, $dot:ident, $gemm:ident]) => {
        mod $modname {
            use super::*;

            fn elem() -> impl Strategy<Value = $t> {
                prop_oneof![4 => any::<$t>(), 1 => Just(<$t>::MAX), 1 => Just(0 as $t), 1 => Just(1 as $t)]
            }

            fn pair() -> impl Strategy<Value = (Vec<$t>, Vec<$t>)> {
                (0usize..300).prop_flat_map(|n| (prop::collection::vec(elem(), n), prop::collection::vec(elem(), n)))
            }

            fn all_ops(a: &[$t], b: &[$t], s: $t) {
                check_binary("add", $add, <$t>::wrapping_add, a, b);
                check_binary("sub", $sub, <$t>::wrapping_sub, a, b);
                check_binary("mul", $mul, <$t>::wrapping_mul, a, b);
                check_scalar("scalar_mul", $smul, <$t>::wrapping_mul, a, s);
                check_dot("dot", $dot, $dot_ref, a, b);
            }

            proptest! {
                #[test]
                fn elementwise_and_dot((a, b) in pair(), s in elem()) {
                    all_ops(&a, &b, s);
                }

                #[test]
                fn gemm_random(
                    (len, a, b) in (1usize..300, 0usize..9, 0usize..9).prop_flat_map(|(len, ra, rb)| {
                        (Just(len), prop::collection::vec(elem(), ra * len), prop::collection::vec(elem(), rb * len))
                    })
                ) {
                    check_gemm("gemm", $gemm, $dot_ref, &a, &b, len);
                }
            }

            #[test]
            fn edges() {
                for n in [0usize, 1, 7, 31, 32, 33, 63, 64, 65, 12800, 16384] {
                    let max = vec![<$t>::MAX; n];
                    let zero = vec![0 as $t; n];
                    all_ops(&max, &max, <$t>::MAX);
                    all_ops(&zero, &max, <$t>::MAX);
                    all_ops(&max, &zero, 0);
                }
            }

            #[test]
            fn gemm_edges() {
                let mut x = 0x1234_5678_9abc_def0u64;
                let mut rnd = |n: usize| -> Vec<$t> {
                    (0..n).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as $t }).collect()
                };
                // Several K-blocks plus a tail; more queries than one query block (64 or 256), more
                // rows than one row block (96); lengths 12800 and 16384 from the benchmarks.
                for (ra, rb, len) in [(3, 5, 12800), (2, 3, 16384), (5, 7, 4100), (70, 9, 40), (66, 3, 2100), (1, 1, 1), (3, 200, 70), (65, 130, 33), (260, 5, 70)] {
                    check_gemm("gemm", $gemm, $dot_ref, &rnd(ra * len), &rnd(rb * len), len);
                    check_gemm("gemm", $gemm, $dot_ref, &vec![<$t>::MAX; ra * len], &vec![<$t>::MAX; rb * len], len);
                }
                // Zero rows on either side.
                check_gemm("gemm", $gemm, $dot_ref, &[], &rnd(30), 10);
                check_gemm("gemm", $gemm, $dot_ref, &rnd(30), &[], 10);
            }
        }
    };
}

ring_tests!(
    ring16,
    u16,
    reference::dot16,
    [add_u16_with, sub_u16_with, mul_u16_with, scalar_mul_u16_with, dot_u16_with, gemm_u16_with]
);
ring_tests!(
    ring32,
    u32,
    reference::dot32,
    [add_u32_with, sub_u32_with, mul_u32_with, scalar_mul_u32_with, dot_u32_with, gemm_u32_with]
);
ring_tests!(
    ring64,
    u64,
    reference::dot64,
    [add_u64_with, sub_u64_with, mul_u64_with, scalar_mul_u64_with, dot_u64_with, gemm_u64_with]
);

mod field {
    use super::reference::{fadd, fdot, fmul, fsub};
    use super::*;

    /// Values the centring and splitting treat specially: 0, ±1, ±(p−1)/2 and their
    /// neighbours, multiples of 256 ± 128, and p − 1.
    const SPECIAL: [u16; 12] = [0, 1, 2, 127, 128, 32639, 32640, 32759, 32760, 32761, P - 2, P - 1];

    fn elem() -> impl Strategy<Value = u16> {
        prop_oneof![4 => 0..P, 1 => select(&SPECIAL[..])]
    }

    fn pair() -> impl Strategy<Value = (Vec<u16>, Vec<u16>)> {
        (0usize..300).prop_flat_map(|n| (prop::collection::vec(elem(), n), prop::collection::vec(elem(), n)))
    }

    fn all_ops(a: &[u16], b: &[u16], s: u16) {
        check_binary("add_f65519", add_f65519_with, fadd, a, b);
        check_binary("sub_f65519", sub_f65519_with, fsub, a, b);
        check_binary("mul_f65519", mul_f65519_with, fmul, a, b);
        check_scalar("scalar_mul_f65519", scalar_mul_f65519_with, fmul, a, s);
        check_dot("dot_f65519", dot_f65519_with, fdot, a, b);
    }

    proptest! {
        #[test]
        fn elementwise_and_dot((a, b) in pair(), s in elem()) {
            all_ops(&a, &b, s);
        }

        #[test]
        fn gemm_random(
            (len, a, b) in (1usize..300, 0usize..9, 0usize..9).prop_flat_map(|(len, ra, rb)| {
                (Just(len), prop::collection::vec(elem(), ra * len), prop::collection::vec(elem(), rb * len))
            })
        ) {
            check_gemm("gemm_f65519", gemm_f65519_with, fdot, &a, &b, len);
        }
    }

    #[test]
    fn edges() {
        for n in [0usize, 1, 15, 16, 17, 31, 32, 33, 12800, 16384] {
            for &(x, y) in &[(P - 1, P - 1), (0, P - 1), (32759, 32759), (32760, 32760), (32759, 32760)] {
                all_ops(&vec![x; n], &vec![y; n], y);
            }
        }
    }

    /// Constant inputs make every lane of every accumulator add the same worst-case term at
    /// every step, the hardest case for the deferred reductions.
    #[test]
    fn deferred_reduction_worst_cases() {
        let mut pairs = vec![(P - 1, P - 1), (32759, 32759), (32760, 32760), (32759, 32760)];
        // For the packed matrix product the per-element term is
        // hi·centre(256·u mod p) + lo·centre(u), where centre(v) = 256·hi + lo is the split
        // operand: search the u maximising it for the v with the largest split parts, and use
        // the pair both ways round (queries are scaled, rows split; both orders are tested).
        for v in [32640u16, 32759, 32760, 32879, 128, P - 128, 32767, 32768] {
            let x = centred(v);
            let hi = (x + 128) >> 8;
            let lo = x - 256 * hi;
            let best = (0..P)
                .max_by_key(|&u| (hi * centred(((u as u64 * 256) % P as u64) as u16) + lo * centred(u)).abs())
                .unwrap_or(0);
            pairs.push((v, best));
            pairs.push((best, v));
        }
        for (x, y) in pairs {
            for len in [16384usize, 12800, 4096 + 16] {
                let (a, b) = (vec![x; 2 * len], vec![y; 3 * len]);
                check_dot("dot_f65519", dot_f65519_with, fdot, &a[..len], &b[..len]);
                check_gemm("gemm_f65519", gemm_f65519_with, fdot, &a, &b, len);
            }
        }
    }

    /// Long enough for the SIMD dot product to flush its split accumulators several times.
    #[test]
    fn long_dot_products() {
        let n = 3 * (1 << 19) + 77;
        let mut x = 0x5555_aaaa_1234_9876u64;
        let rnd: Vec<u16> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % P as u64) as u16
            })
            .collect();
        for (a, b) in [(vec![32759; n], vec![32759; n]), (vec![P - 1; n], rnd.clone()), (rnd.clone(), rnd)] {
            check_dot("dot_f65519", dot_f65519_with, fdot, &a, &b);
        }
    }

    fn centred(v: u16) -> i64 {
        if v > P / 2 {
            v as i64 - P as i64
        } else {
            v as i64
        }
    }

    #[test]
    fn gemm_edges() {
        let mut x = 0x0fed_cba9_8765_4321u64;
        let mut rnd = |n: usize| xorshift_u16(&mut x, n, u64::from(P));
        for (ra, rb, len) in [
            (3, 5, 12800),
            (2, 3, 16384),
            (5, 7, 4100),
            (70, 9, 40),
            (66, 3, 2100),
            (1, 1, 1),
            (3, 200, 70),
            (65, 130, 33),
        ] {
            check_gemm("gemm_f65519", gemm_f65519_with, fdot, &rnd(ra * len), &rnd(rb * len), len);
        }
        check_gemm("gemm_f65519", gemm_f65519_with, fdot, &[], &rnd(30), 10);
        check_gemm("gemm_f65519", gemm_f65519_with, fdot, &rnd(30), &[], 10);
    }
}

#[test]
fn dispatch_picks_the_requested_level_or_the_best_below() {
    let avail = available();
    for isa in Isa::ALL {
        let got = backend(isa).isa();
        assert_eq!(got, resolve(isa));
        assert_eq!(avail.contains(&isa), got == isa, "{isa}");
    }
}

#[test]
fn length_mismatch_is_reported() {
    let e = Err(KernelError::LengthMismatch { left: 3, right: 2 });
    for isa in available() {
        let (mut d16, s16) = ([1u16, 2, 3], [4u16, 5]);
        let (mut d32, s32) = ([1u32, 2, 3], [4u32, 5]);
        let (mut d64, s64) = ([1u64, 2, 3], [4u64, 5]);
        assert_eq!(add_u16_with(isa, &mut d16, &s16), e);
        assert_eq!(sub_u16_with(isa, &mut d16, &s16), e);
        assert_eq!(mul_u16_with(isa, &mut d16, &s16), e);
        assert_eq!(add_u32_with(isa, &mut d32, &s32), e);
        assert_eq!(sub_u32_with(isa, &mut d32, &s32), e);
        assert_eq!(mul_u32_with(isa, &mut d32, &s32), e);
        assert_eq!(add_u64_with(isa, &mut d64, &s64), e);
        assert_eq!(sub_u64_with(isa, &mut d64, &s64), e);
        assert_eq!(mul_u64_with(isa, &mut d64, &s64), e);
        assert_eq!(add_f65519_with(isa, &mut d16, &s16), e);
        assert_eq!(sub_f65519_with(isa, &mut d16, &s16), e);
        assert_eq!(mul_f65519_with(isa, &mut d16, &s16), e);
        assert_eq!(d16, [1, 2, 3], "nothing written on error");
        assert_eq!(dot_u16_with(isa, &d16, &s16), Err(KernelError::LengthMismatch { left: 3, right: 2 }));
        assert_eq!(dot_u32_with(isa, &d32, &s32), Err(KernelError::LengthMismatch { left: 3, right: 2 }));
        assert_eq!(dot_u64_with(isa, &d64, &s64), Err(KernelError::LengthMismatch { left: 3, right: 2 }));
        assert_eq!(dot_f65519_with(isa, &d16, &s16), Err(KernelError::LengthMismatch { left: 3, right: 2 }));
    }
    // The plain (detected-level) entry points validate the same way.
    assert_eq!(add_u16(&mut [1, 2], &[1]), Err(KernelError::LengthMismatch { left: 2, right: 1 }));
    assert_eq!(dot_f65519(&[1], &[]), Err(KernelError::LengthMismatch { left: 1, right: 0 }));
}

#[test]
fn shape_mismatch_is_reported() {
    let shape = |what, expected, got| Err(KernelError::ShapeMismatch { what, expected, got });
    let (a, b) = (vec![1u16; 12], vec![2u16; 8]);
    for isa in available() {
        let mut out = vec![7u16; 6];
        assert_eq!(gemm_u16_with(isa, &a, &b, 0, &mut out), shape("len (must be non-zero)", 1, 0));
        assert_eq!(gemm_u16_with(isa, &a, &b, 5, &mut out), shape("a.len() % len", 0, 2));
        assert_eq!(gemm_u16_with(isa, &a, &b, 3, &mut out), shape("b.len() % len", 0, 2));
        assert_eq!(gemm_u16_with(isa, &a, &b, 4, &mut out), Ok(()));
        assert_eq!(gemm_u16_with(isa, &a, &b, 2, &mut out), shape("out.len()", 24, 6));
        assert_eq!(gemm_f65519_with(isa, &a, &b, 2, &mut out), shape("out.len()", 24, 6));
        assert_eq!(gemm_f65519_with(isa, &a, &b, 0, &mut out), shape("len (must be non-zero)", 1, 0));
        let (a32, b32, mut o32) = (vec![1u32; 12], vec![1u32; 8], vec![0u32; 5]);
        assert_eq!(gemm_u32_with(isa, &a32, &b32, 4, &mut o32), shape("out.len()", 6, 5));
        let (a64, b64, mut o64) = (vec![1u64; 12], vec![1u64; 8], vec![0u64; 6]);
        assert_eq!(gemm_u64_with(isa, &a64, &b64, 5, &mut o64), shape("a.len() % len", 0, 2));
        assert!(out.iter().all(|&x| x == 7 || x == 8), "only the valid call wrote");
    }
    assert_eq!(gemm_u16(&a, &b, 4, &mut [0; 5]), shape("out.len()", 6, 5));
}

#[test]
fn non_canonical_is_reported() {
    let bad = |index, value| Err(KernelError::NotCanonical { index, value });
    let bad_dot = |index, value| Err::<u16, _>(KernelError::NotCanonical { index, value });
    for isa in available() {
        for n in [1usize, 40, 300] {
            let good = vec![5u16; n];
            let mut worse = good.clone();
            worse[n - 1] = P;
            let mut d = worse.clone();
            assert_eq!(add_f65519_with(isa, &mut d, &good), bad(n - 1, P));
            assert_eq!(sub_f65519_with(isa, &mut good.clone(), &worse), bad(n - 1, P));
            assert_eq!(mul_f65519_with(isa, &mut d, &good), bad(n - 1, P));
            assert_eq!(scalar_mul_f65519_with(isa, &mut d, 3), bad(n - 1, P));
            assert_eq!(d, worse, "nothing written on error");
            assert_eq!(scalar_mul_f65519_with(isa, &mut good.clone(), u16::MAX), bad(0, u16::MAX));
            assert_eq!(dot_f65519_with(isa, &good, &worse), bad_dot(n - 1, P));
            assert_eq!(dot_f65519_with(isa, &worse, &good), bad_dot(n - 1, P));
        }
        // Matrix products: a bad value in the vectorised part, in the scalar tail, on either
        // side, and with no output at all.
        for (ra, rb, len) in [(2usize, 3usize, 100usize), (2, 3, 40), (2, 3, 7), (5, 70, 33), (0, 3, 10), (2, 0, 10)] {
            let (a, b) = (vec![1u16; ra * len], vec![2u16; rb * len]);
            let mut out = vec![0u16; ra * rb];
            assert_eq!(gemm_f65519_with(isa, &a, &b, len, &mut out), Ok(()));
            for pos in [0, len / 2, len - 1] {
                if ra > 0 {
                    let mut a2 = a.clone();
                    a2[(ra - 1) * len + pos] = u16::MAX;
                    assert_eq!(gemm_f65519_with(isa, &a2, &b, len, &mut out), bad((ra - 1) * len + pos, u16::MAX));
                }
                if rb > 0 {
                    let mut b2 = b.clone();
                    b2[(rb - 1) * len + pos] = P;
                    assert_eq!(
                        gemm_f65519_with(isa, &a, &b2, len, &mut out),
                        bad((rb - 1) * len + pos, P),
                        "{isa} {ra}x{rb}x{len}"
                    );
                }
            }
        }
    }
}

#[test]
fn measure_plain_dot_runs() {
    for variant in [PlainDotVariant::Ring16, PlainDotVariant::Field65519] {
        let m = measure_plain_dot(variant, 100, 8, 3);
        assert!(m.seconds_median > 0.0 && m.dots_per_sec > 0.0, "{m:?}");
        let m = measure_plain_dot_with(Isa::Portable, variant, 0, 0, 0);
        assert!(m.dots_per_sec > 0.0, "{m:?}");
    }
}

/// Query rows at arbitrary (overlapping, unordered) offsets give the products of the same rows
/// copied out, at every level: the sliding windows the iris rotations use.
#[test]
fn gemm_rows_windows() {
    let mut x = 0x0bad_cafe_1234_5678u64;
    let mut rnd = |n: usize| xorshift_u16(&mut x, n, 1 << 16);
    for (len, stride, windows, rb) in [(12800, 64, 31, 5), (4100, 3, 70, 9), (33, 1, 65, 130), (1, 1, 2, 1)] {
        let a = rnd((windows - 1) * stride + len + 7);
        let b = rnd(rb * len);
        // Rows in descending offset order, plus one repeated.
        let mut rows: Vec<usize> = (0..windows).rev().map(|w| w * stride).collect();
        rows.push(3);
        let copied: Vec<u16> = rows.iter().flat_map(|&s| a[s..s + len].iter().copied()).collect();
        let expect = reference::gemm(&copied, &b, len, reference::dot16);
        for isa in available() {
            let mut out = vec![1u16; expect.len()];
            gemm_u16_rows_with(isa, &a, &rows, &b, len, &mut out).unwrap();
            assert_eq!(out, expect, "gemm_u16_rows at {isa}, len {len}, stride {stride}");
        }
    }
    let shape = |what, expected, got| Err(KernelError::ShapeMismatch { what, expected, got });
    let (a, b) = (vec![1u32; 10], vec![1u32; 8]);
    let mut out = vec![0u32; 4];
    assert_eq!(gemm_u32_rows(&a, &[0, 6], &b, 4, &mut out), Ok(()));
    assert_eq!(gemm_u32_rows(&a, &[0, 7], &b, 4, &mut out), shape("query row end (start + len <= a.len())", 10, 11));
    assert_eq!(
        gemm_u32_rows(&a, &[usize::MAX], &b, 4, &mut out[..2]),
        shape("query row end (start + len <= a.len())", 10, usize::MAX)
    );
    assert_eq!(gemm_u32_rows(&a, &[0], &b, 4, &mut out), shape("out.len()", 2, 4));
    assert_eq!(gemm_u32_rows(&a, &[0], &b, 3, &mut out), shape("b.len() % len", 0, 2));
    assert_eq!(gemm_u64_rows(&[1u64; 3], &[0], &[1u64; 3], 0, &mut []), shape("len (must be non-zero)", 1, 0));
}

/// The iris layout: the rotations of several queries as windows of each query's cyclically
/// extended row, ordered rotation-major so that 16-row tiles are the same windows shifted (the
/// tile kernel packs them once). Shifts of whole tile steps (64), of part of one (32, 4) and not
/// a multiple of 4 (6: packed apart), query counts that fill tiles, leave one ragged and leave
/// tiles mixing two rotations, and rows in descending and ascending offset order.
#[test]
fn gemm_rows_rotation_windows() {
    let mut x = 0x90ad_0123_4567_89abu64;
    let mut rnd = |n: usize| xorshift_u16(&mut x, n, 1 << 16);
    for (len, width, rot, nq, rb) in
        [(1280, 64, 7, 16, 70), (640, 32, 5, 20, 33), (900, 4, 9, 3, 17), (600, 6, 4, 16, 5)]
    {
        let ext = len + (rot - 1) * width;
        let a = rnd(nq * ext);
        let b = rnd(rb * len);
        for ascending in [false, true] {
            let rows: Vec<usize> = (0..rot)
                .flat_map(|k| (0..nq).map(move |q| q * ext + if ascending { k } else { rot - 1 - k } * width))
                .collect();
            let copied: Vec<u16> = rows.iter().flat_map(|&s| a[s..s + len].iter().copied()).collect();
            let expect = reference::gemm(&copied, &b, len, reference::dot16);
            for isa in available() {
                let mut out = vec![3u16; expect.len()];
                gemm_u16_rows_with(isa, &a, &rows, &b, len, &mut out).unwrap();
                assert!(out == expect, "gemm_u16_rows at {isa}, len {len}, width {width}, {nq} queries");
            }
        }
    }
}

/// A product large enough to be split over threads gives the same result as the reference, at
/// every level, with the rows split unevenly (600 rows over 2 and 3 threads). The thread count
/// is process-wide, but results never depend on it, so tests running beside this one are safe.
#[test]
fn gemm_split_over_threads() {
    let mut x = 0x5eed_1234_abcd_0001u64;
    let mut rnd = |n: usize| xorshift_u16(&mut x, n, u64::from(P));
    let (ra, rb, len) = (64, 600, 2048);
    let (a, b) = (rnd(ra * len), rnd(rb * len));
    let ring = reference::gemm(&a, &b, len, reference::dot16);
    let field = reference::gemm(&a, &b, len, reference::fdot);
    for t in [2, 3] {
        set_threads(t);
        assert_eq!(threads(), t);
        for isa in available() {
            let mut out = vec![7u16; ra * rb];
            gemm_u16_with(isa, &a, &b, len, &mut out).unwrap();
            assert_eq!(out, ring, "gemm_u16 at {isa} on {t} threads");
            let rows: Vec<usize> = (0..ra).map(|i| i * len).collect();
            gemm_u16_rows_with(isa, &a, &rows, &b, len, &mut out).unwrap();
            assert_eq!(out, ring, "gemm_u16_rows at {isa} on {t} threads");
            gemm_f65519_with(isa, &a, &b, len, &mut out).unwrap();
            assert_eq!(out, field, "gemm_f65519 at {isa} on {t} threads");
        }
        let mut bad = b.clone();
        bad[rb * len - 1] = P;
        let mut out = vec![0u16; ra * rb];
        assert_eq!(
            gemm_f65519(&a, &bad, len, &mut out),
            Err(KernelError::NotCanonical { index: rb * len - 1, value: P })
        );
    }
    set_threads(0);
}

/// The 16-bit product across every block boundary of every level, the tile kernel's included:
/// more queries than one query block (1024) with a ragged tail of query tiles and pairs, more
/// rows than one row block (64) ending mid-tile, a length spanning two K-blocks (640)
/// with a tail that is neither a whole tile step (64) nor a whole group of four; then the same
/// shape as overlapping rotation windows, and all-ones bits (every byte product at its maximum).
#[test]
fn gemm_u16_crosses_every_block_boundary() {
    let mut x = 0x7117_5eed_0bad_f00du64;
    let mut rnd = |n: usize| xorshift_u16(&mut x, n, 1 << 16);
    let (ra, rb, len) = (1060, 150, 1101);
    let saved = super::threads::setting();
    set_threads(1);
    for (a, b) in [(rnd(ra * len), rnd(rb * len)), (vec![u16::MAX; ra * len], vec![u16::MAX; rb * len])] {
        let expect = reference::gemm(&a, &b, len, reference::dot16);
        let windows: Vec<usize> = (0..ra).map(|i| (i * 7) % (a.len() - len)).collect();
        let copied: Vec<u16> = windows.iter().flat_map(|&s| a[s..s + len].iter().copied()).collect();
        let expect_windows = reference::gemm(&copied, &b, len, reference::dot16);
        for isa in available() {
            let mut out = vec![9u16; ra * rb];
            gemm_u16_with(isa, &a, &b, len, &mut out).unwrap();
            assert!(out == expect, "gemm_u16 at {isa}");
            gemm_u16_rows_with(isa, &a, &windows, &b, len, &mut out).unwrap();
            assert!(out == expect_windows, "gemm_u16_rows at {isa}");
        }
    }
    set_threads(saved);
}

/// The F_65519 product across the same block boundaries, at the largest byte-product sums (all
/// p − 1), and at the longest length the tile kernel takes with exact 32-bit sums (66 051) and
/// one past it (the VNNI kernel then).
#[test]
fn gemm_f65519_crosses_every_block_boundary() {
    let mut x = 0x7117_5eed_0bad_f00eu64;
    let mut rnd = |n: usize| xorshift_u16(&mut x, n, u64::from(P));
    let (ra, rb, len) = (1060, 150, 1101);
    let saved = super::threads::setting();
    set_threads(1);
    let cases = [
        (rnd(ra * len), rnd(rb * len), len),
        (vec![P - 1; ra * len], vec![P - 1; rb * len], len),
        (vec![P - 1; 3 * 66_051], vec![P - 1; 2 * 66_051], 66_051),
        (vec![P - 1; 3 * 66_052], rnd(2 * 66_052), 66_052),
    ];
    for (a, b, len) in cases {
        check_gemm("gemm_f65519", gemm_f65519_with, reference::fdot, &a, &b, len);
    }
    set_threads(saved);
}

/// The matrix product mod 2^128: every kernel this CPU runs ([`Gemm128`]), each forced, and every
/// level's choice, against the naive `wrapping_mul`/`wrapping_add` reference.
mod ring128 {
    use super::*;

    fn dot128(a: &[u128], b: &[u128]) -> u128 {
        let mut acc = 0u128;
        for i in 0..a.len() {
            acc = acc.wrapping_add(a[i].wrapping_mul(b[i]));
        }
        acc
    }

    /// `out` pre-filled with garbage: the kernels must overwrite, not accumulate into, it.
    fn check_with(label: &str, expect: &[u128], f: impl FnOnce(&mut [u128]) -> Result<(), KernelError>) {
        let mut out = vec![0x5555_aaaa_u128 << 64 | 7; expect.len()];
        f(&mut out).unwrap();
        if let Some(at) = out.iter().zip(expect).position(|(o, e)| o != e) {
            panic!("{label}: first wrong output {at}: {:#x} != {:#x}", out[at], expect[at]);
        }
    }

    /// Every available kernel forced, then every level's choice.
    fn check(a: &[u128], b: &[u128], len: usize) {
        let expect = reference::gemm(a, b, len, dot128);
        let shape = format!("{}x{} rows of len {len}", a.len() / len, b.len() / len);
        for kernel in Gemm128::available() {
            check_with(&format!("{kernel} kernel, {shape}"), &expect, |out| gemm_u128_kernel(kernel, a, b, len, out));
        }
        for isa in available() {
            check_with(&format!("level {isa}, {shape}"), &expect, |out| gemm_u128_with(isa, a, b, len, out));
        }
    }

    fn rnd(x: &mut u64, n: usize) -> Vec<u128> {
        (0..n)
            .map(|_| {
                *x ^= *x << 13;
                *x ^= *x >> 7;
                *x ^= *x << 17;
                u128::from(*x) << 64 | u128::from(x.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            })
            .collect()
    }

    /// The values the limb and byte splits treat specially: limb and half boundaries of the
    /// 51-bit limbs (IFMA), byte boundaries (AMX), 64-bit halves (portable).
    const SPECIAL: [u128; 10] =
        [0, 1, u128::MAX, 1 << 127, (1 << 51) - 1, (1 << 52) - 1, 1 << 102, !0 << 102, u64::MAX as u128, 0xff << 120];

    fn elem() -> impl Strategy<Value = u128> {
        prop_oneof![4 => any::<u128>(), 1 => select(&SPECIAL[..])]
    }

    proptest! {
        #[test]
        fn gemm_u128_random(
            (len, a, b) in (1usize..300, 0usize..12, 0usize..12).prop_flat_map(|(len, ra, rb)| {
                (Just(len), prop::collection::vec(elem(), ra * len), prop::collection::vec(elem(), rb * len))
            })
        ) {
            check(&a, &b, len);
        }
    }

    /// Ragged shapes around every kernel's tiles and blocks (IFMA: 3 × 8 tiles, 63-row query
    /// blocks, 512-element K-blocks; AMX: 32-row blocks, 1024-element K-blocks, 64-element
    /// steps; portable: 2 × 2 tiles, 16-row blocks, 1024-element K-blocks; odd lengths for
    /// Winograd's pairing), constant special values, and zero rows on either side.
    #[test]
    fn gemm_u128_edges() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for (ra, rb, len) in [
            (1, 1, 1),
            (1, 9, 3),
            (9, 1, 17),
            (3, 5, 8),
            (7, 13, 100),
            (33, 65, 70),
            (65, 33, 129),
            (70, 9, 1100),
            (2, 3, 2049),
        ] {
            check(&rnd(&mut x, ra * len), &rnd(&mut x, rb * len), len);
            for v in SPECIAL {
                check(&vec![v; ra * len], &vec![u128::MAX - v; rb * len], len);
            }
        }
        check(&[], &rnd(&mut x, 30), 10);
        check(&rnd(&mut x, 30), &[], 10);
    }

    /// All-ones inputs longer than a K-block of every kernel and than 4096 elements: the largest
    /// limb and byte sums, where an unnormalised 64-bit limb sum (or an i32 byte sum) would
    /// overflow.
    #[test]
    fn gemm_u128_long_all_ones() {
        for len in [5000, 4096 + 64, 1365, 1366] {
            check(&vec![u128::MAX; 3 * len], &vec![u128::MAX; 10 * len], len);
            check(&vec![(1 << 51) - 1; 2 * len], &vec![u128::MAX; 9 * len], len);
        }
    }

    /// The IFMA kernel forced by name; skips (with a note) only on CPUs without IFMA.
    #[test]
    fn gemm_u128_ifma_forced() {
        forced(Gemm128::Ifma);
    }

    /// The AMX kernel forced by name; skips (with a note) only where AMX is not usable.
    #[test]
    fn gemm_u128_amx_forced() {
        forced(Gemm128::Amx);
    }

    #[test]
    fn gemm_u128_portable_forced() {
        forced(Gemm128::Portable);
    }

    fn forced(kernel: Gemm128) {
        if !Gemm128::available().contains(&kernel) {
            eprintln!("note: skipping the {kernel} kernel of gemm_u128: this CPU lacks it");
            return;
        }
        let mut x = 0xfeed_0123_4567_89abu64;
        for (ra, rb, len) in [(40, 36, 1030), (8, 8, 64), (1, 1, 5000)] {
            let (a, b) = (rnd(&mut x, ra * len), rnd(&mut x, rb * len));
            let expect = reference::gemm(&a, &b, len, dot128);
            check_with(&format!("{kernel} kernel"), &expect, |out| gemm_u128_kernel(kernel, &a, &b, len, out));
        }
    }

    /// Every level's choice is a kernel the level allows, and a forced kernel the CPU lacks
    /// falls back to the best one below it.
    #[test]
    fn gemm_u128_choice_is_runnable() {
        let avail = Gemm128::available();
        assert_eq!(avail[0], Gemm128::Portable);
        for isa in Isa::ALL {
            let k = super::super::ring128::chosen(isa);
            assert!(avail.contains(&k), "{isa}: {k}");
            assert!(k <= Gemm128::Amx && (k != Gemm128::Amx || resolve(isa) == Isa::Amx), "{isa}: {k}");
            assert!(k == Gemm128::Portable || resolve(isa) >= Isa::Avx512, "{isa}: {k}");
        }
        for k in Gemm128::ALL {
            assert!(avail.contains(&k.or_below()) && k.or_below() <= k);
        }
    }

    /// `Ring::gemm` of Z_2^128 runs the kernel (same results as the reference).
    #[test]
    fn z128_ring_gemm() {
        use crate::Ring;
        let mut x = 0x7777_0000_1111_2222u64;
        let (a, b) = (rnd(&mut x, 5 * 77), rnd(&mut x, 9 * 77));
        let mut out = vec![0u128; 45];
        crate::Z128::new().gemm(&a, &b, 77, &mut out);
        assert_eq!(out, reference::gemm(&a, &b, 77, dot128));
    }

    /// Query rows at overlapping offsets, and a product split over threads.
    #[test]
    fn gemm_u128_rows_and_threads() {
        let mut x = 0x0bad_cafe_1234_5678u64;
        let (len, rb) = (300, 70);
        let a = rnd(&mut x, 40 * 7 + len);
        let b = rnd(&mut x, rb * len);
        let rows: Vec<usize> = (0..40).rev().map(|w| w * 7).collect();
        let copied: Vec<u128> = rows.iter().flat_map(|&s| a[s..s + len].iter().copied()).collect();
        let expect = reference::gemm(&copied, &b, len, dot128);
        for isa in available() {
            check_with(&format!("rows at {isa}"), &expect, |out| gemm_u128_rows_with(isa, &a, &rows, &b, len, out));
        }
        // 40 × 600 × 3000 multiply-adds: above the threading threshold, split unevenly.
        let (ra, rb, len) = (40, 600, 3000);
        let (a, b) = (rnd(&mut x, ra * len), rnd(&mut x, rb * len));
        let expect = reference::gemm(&a, &b, len, dot128);
        set_threads(3);
        for kernel in Gemm128::available() {
            check_with(&format!("{kernel} on 3 threads"), &expect, |out| gemm_u128_kernel(kernel, &a, &b, len, out));
        }
        set_threads(0);
    }
}

/// The measured choice prefers the clearly faster of two computations, whatever their order.
#[test]
fn fastest_of_picks_the_quicker() {
    let slow = || std::thread::sleep(std::time::Duration::from_millis(3));
    let fast = || {};
    let (mut s, mut f) = (slow, fast);
    assert_eq!(super::measure::fastest_of(&mut [&mut s, &mut f], 2), 1);
    assert_eq!(super::measure::fastest_of(&mut [&mut f, &mut s], 2), 0);
    assert_eq!(super::measure::fastest_of(&mut [], 2), 0);
}
