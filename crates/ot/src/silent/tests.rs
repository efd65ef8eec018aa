use argus_math::{Fp, Modulus, Ring, Z32, Z64};
use argus_net::Network;
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::*;
use crate::testing::{assert_views_uniform, run_pair, view_bytes};

fn extensions(net: &Network, seed: u64) -> (iknp::Sender, iknp::Receiver) {
    let mut rng = StdRng::seed_from_u64(seed);
    iknp::setup_with(net, &[1 - net.id()], &mut rng).unwrap().pop().unwrap()
}

/// One silent VOLE: party 0 the noise side with vectors of `rows`, party 1 the Δ side with
/// `bs`. Returns `(Aᵀ, H·S_0, H·S_1)` and each side's view.
#[allow(clippy::type_complexity)]
fn silent<R: Ring>(
    ring: &R,
    params: Params,
    rows: usize,
    bs: &[Vec<R::El>],
    budget: usize,
) -> ((Vec<R::El>, Vec<R::El>, Vec<u8>), (Vec<R::El>, Vec<u8>)) {
    let cols = bs[0].len();
    let code = Code::new(ring, rows, params);
    run_pair(
        |net: &Network| {
            let (mut s, mut r) = extensions(net, 1);
            net.record_view();
            let (at, st) = noise_side(
                ring,
                net,
                1,
                (&mut s, &mut r),
                &code,
                params,
                bs.len(),
                cols,
                &mut StdRng::seed_from_u64(3),
                budget,
            )
            .unwrap();
            (at, code.product(ring, &st), view_bytes(&net.take_view()))
        },
        |net: &Network| {
            let (mut s, mut r) = extensions(net, 2);
            net.record_view();
            let refs: Vec<&[R::El]> = bs.iter().map(|b| &b[..]).collect();
            let st = delta_side(ring, net, 0, (&mut s, &mut r), params, &refs, &mut StdRng::seed_from_u64(4), budget)
                .unwrap();
            (code.product(ring, &st), view_bytes(&net.take_view()))
        },
    )
}

/// `Σ_l a_l ⊗ b_l` (M × L) for the rows `a_l` of `at`.
fn twin<R: Ring>(ring: &R, at: &[R::El], bs: &[Vec<R::El>]) -> Vec<R::El> {
    let (rows, cols) = (at.len() / bs.len(), bs[0].len());
    let mut w = vec![ring.zero(); rows * cols];
    for (a, b) in at.chunks_exact(rows).zip(bs) {
        for i in 0..rows {
            for j in 0..cols {
                w[i * cols + j] = ring.add(w[i * cols + j], ring.mul(a[i], b[j]));
            }
        }
    }
    w
}

/// The shares add up to `Σ a_l ⊗ b_l`, with 0, 1 and −1 among the Δ side's elements, in one
/// message and in one message per vector.
fn products<R: Ring>(ring: &R) {
    let mut rng = StdRng::seed_from_u64(9);
    let (rows, cols, count) = (20, 7, 3);
    let bs: Vec<Vec<R::El>> = (0..count)
        .map(|_| {
            let mut b = ring.sample_vec(&mut rng, cols);
            (b[0], b[1], b[2]) = (ring.zero(), ring.one(), ring.neg(ring.one()));
            b
        })
        .collect();
    for (params, budget) in [(Params { noise: 4, block: 8 }, usize::MAX), (Params { noise: 3, block: 2 }, 1)] {
        let ((at, w0, _), (w1, _)) = silent(ring, params, rows, &bs, budget);
        assert!(at.iter().any(|&a| a != ring.zero()), "the noise side's vectors are drawn");
        let sum: Vec<R::El> = w0.iter().zip(&w1).map(|(&a, &b)| ring.add(a, b)).collect();
        assert_eq!(sum, twin(ring, &at, &bs), "{params:?}, budget {budget}");
    }
}

#[test]
fn shares_add_up_to_the_products() {
    products(&Z32::new());
    products(&Z64::new());
    products(&Fp::p128());
}

/// `a_l = H·e_l` for a regular noise of weight `t`: over a prime field, some choice of one
/// column of `H` per block (the positions `α`) explains `a` on two rows with some values `β`,
/// and the same `β` explain the other rows too.
#[test]
fn the_noise_side_vectors_are_the_code_times_a_regular_noise() {
    let ring = Fp::p128();
    let Modulus::Int(p) = ring.modulus() else { unreachable!("a prime field") };
    let params = Params { noise: 2, block: 4 };
    let rows = 5;
    let ((at, _, _), _) = silent(&ring, params, rows, &[vec![ring.one()]], usize::MAX);
    let code = Code::new(&ring, rows, params);
    let h = |i: usize, c: usize| code.h[i * params.len() + c];
    let explains = |c0: usize, c1: usize| {
        // Cramer on rows 0 and 1
        let det = ring.sub(ring.mul(h(0, c0), h(1, c1)), ring.mul(h(1, c0), h(0, c1)));
        let inv = ring.pow(det, p - 2);
        let b0 = ring.mul(ring.sub(ring.mul(at[0], h(1, c1)), ring.mul(at[1], h(0, c1))), inv);
        let b1 = ring.mul(ring.sub(ring.mul(h(0, c0), at[1]), ring.mul(h(1, c0), at[0])), inv);
        (0..rows).all(|i| ring.add(ring.mul(b0, h(i, c0)), ring.mul(b1, h(i, c1))) == at[i])
    };
    let found: Vec<(usize, usize)> =
        (0..4).flat_map(|a0| (0..4).map(move |a1| (a0, 4 + a1))).filter(|&(c0, c1)| explains(c0, c1)).collect();
    assert_eq!(found.len(), 1, "one regular noise of weight 2 explains a: {found:?}");
}

/// Bytes and rounds: the noise side sends IKNP's 16 bytes per random OT (Gilboa's `t·ℓ` per
/// vector, the trees' `t·depth`); the Δ side sends `t·ℓ` corrections of L elements, two 16-byte
/// sums per tree level and one `d` of L elements per block.
#[test]
fn messages_are_the_formulas() {
    let ring = Z32::new();
    let (rows, cols, count) = (16, 5, 2);
    let params = Params { noise: 6, block: 8 };
    let bs = vec![ring.sample_vec(&mut StdRng::seed_from_u64(1), cols); count];
    let ((_, _, noise_view), (_, delta_view)) = silent(&ring, params, rows, &bs, usize::MAX);
    let pad = |ots: usize| 128 * ots.div_ceil(128) * 16;
    let (t, ell, depth) = (6, 32, 3);
    // what each side received is what the other sent: Gilboa's and the trees' IKNP messages
    // (plus the empty ones of the unused directions)
    assert_eq!(delta_view.len(), pad(count * t * ell) + pad(count * t * depth));
    assert_eq!(
        noise_view.len(),
        count * t * ell * ring.wire_len(cols) + count * t * (depth * 32 + ring.wire_len(cols))
    );
}

/// The noise side's view (Gilboa's corrections, the trees' sums, the `d`s) and the Δ side's
/// (IKNP) look uniform and alike for Δ vectors all zero, all one and random.
#[test]
fn views_are_independent_of_the_inputs() {
    let ring = Z32::new();
    let params = Params { noise: 16, block: 8 };
    let (rows, cols, count) = (16, 64, 4);
    let inputs = [
        vec![vec![0u32; cols]; count],
        vec![vec![u32::MAX; cols]; count],
        vec![ring.sample_vec(&mut StdRng::seed_from_u64(5), cols); count],
    ];
    let views: Vec<(Vec<u8>, Vec<u8>)> = inputs
        .iter()
        .map(|bs| {
            let ((_, _, n), (_, d)) = silent(&ring, params, rows, bs, usize::MAX);
            (n, d)
        })
        .collect();
    assert_views_uniform("silent VOLE, noise side", &views.iter().map(|v| v.0.clone()).collect::<Vec<_>>());
    assert_views_uniform("silent VOLE, Δ side", &views.iter().map(|v| v.1.clone()).collect::<Vec<_>>());
}

/// A `d` message of the wrong length, or with an element outside the field, is a typed error.
#[test]
fn a_bad_message_is_refused() {
    let ring = Fp::p128();
    let params = Params { noise: 2, block: 4 };
    let code = Code::new(&ring, 4, params);
    for (len, bad) in [(10, false), (2 * (2 * 32 + 16), true)] {
        let (_, got) = run_pair(
            |net: &Network| {
                let (mut s, mut r) = extensions(net, 3);
                // play the Δ side by hand up to its last message
                let b = vec![ring.one()];
                cross(&ring, net, 1, (&mut s, &mut r), &[], &[(&b, 2)]).unwrap();
                s.random(net, 1, 4).unwrap();
                net.send(1, vec![0xff; len]).unwrap();
            },
            |net: &Network| {
                let (mut s, mut r) = extensions(net, 4);
                noise_side(
                    &ring,
                    net,
                    0,
                    (&mut s, &mut r),
                    &code,
                    params,
                    1,
                    1,
                    &mut StdRng::seed_from_u64(1),
                    usize::MAX,
                )
            },
        );
        match got {
            Err(OtError::BadElement { peer: 0, .. }) if bad => {}
            Err(OtError::Malformed { peer: 0, got: 10, .. }) if !bad => {}
            other => panic!("{len} bytes: {other:?}"),
        }
    }
}

/// [`Params::for_rows`] reaches 128 bits by its own estimate, and the estimate is Prange's
/// `−t·log2((1 + M/N)/2)`: for M = N/3 each block gives log2(3/2) bits.
#[test]
fn the_parameters_reach_the_security_level() {
    let p = Params { noise: 100, block: 12 };
    assert!((p.security_bits(400) - 100.0 * (1.5f64).log2()).abs() < 1e-9);
    assert_eq!(Params { noise: 10, block: 8 }.security_bits(80), 0.0, "N ≤ M is no LPN at all");
    for rows in [1, 16, 128, 1024, 4096, 1 << 16] {
        for bits in [32, 64, 128] {
            let p = Params::for_rows(rows, bits);
            assert!(p.block.is_power_of_two() && p.block >= 8, "{p:?}");
            assert!(p.security_bits(rows) >= Params::SECURITY, "{rows}: {p:?}");
            let fewer = Params { noise: p.noise - 1, ..p };
            assert!(fewer.security_bits(rows) < Params::SECURITY, "{rows}: {p:?} is not the least noise");
        }
    }
}
