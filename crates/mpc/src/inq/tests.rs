use argus_math::Fp;
use argus_net::NetConfig;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::shamir::ShamirAbb;
use super::*;
use crate::error::Result;
use crate::local::{run, Backend};
use crate::shamir::{share_from_client, Shamir};

const KAPPA: u32 = 40;

/// What each protocol gives, per element, as signed integers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Mod2m(u32),
    Ltz,
    Relu,
}

/// An opening of nothing, so that the next send opens a round for every party (the masks' last
/// messages go one way).
fn sync(abb: &mut ShamirAbb<'_>) -> Result<()> {
    abb.open(&abb.constant(&[])).map(|_| ())
}

/// The twin.
fn plain(op: Op, x: i128) -> i128 {
    match op {
        Op::Mod2m(m) => x.rem_euclid(1 << m),
        Op::Ltz => i128::from(x < 0),
        Op::Relu => x.max(0),
    }
}

/// Runs `op` on `xs` (`k`-bit signed) with three parties in the Shamir setting; returns the
/// opened results (signed) and the online rounds and bytes of party 0.
fn shamir_run(op: Op, xs: &[i128], k: u32, bitwise: Bitwise) -> (Vec<i128>, u64, u64) {
    let field = Fp::p128();
    let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(&field, x)).collect();
    let shares = share_from_client(&field, &values, &mut StdRng::seed_from_u64(1)).unwrap();
    let got = run(3, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let mut abb = ShamirAbb::new(p, field)?;
        let m = match op {
            Op::Mod2m(m) => m,
            _ => k - 1,
        };
        let mask = Mask::new(&mut abb, xs.len(), k, m, KAPPA)?;
        let x: Shamir<Fp> = shares[me].clone();
        sync(&mut abb)?;
        let before = abb.party().stats();
        let y = match op {
            Op::Mod2m(_) => mod2m(&mut abb, &x, &mask, bitwise)?,
            Op::Ltz => ltz(&mut abb, &x, &mask, bitwise)?,
            Op::Relu => relu(&mut abb, &x, &mask, bitwise)?,
        };
        let used = abb.party().stats() - before;
        let out = abb.open(&y)?;
        Ok((out, used.rounds, used.bytes_sent))
    })
    .unwrap();
    let (out, rounds, bytes) = got[0].clone();
    (out.into_iter().map(|v| fixed::signed(&field, v)).collect(), rounds, bytes)
}

fn check(op: Op, xs: &[i128], k: u32, bitwise: Bitwise) {
    let (got, rounds, _) = shamir_run(op, xs, k, bitwise);
    let want: Vec<i128> = xs.iter().map(|&x| plain(op, x)).collect();
    assert_eq!(got, want, "{op:?}, k = {k}, {bitwise:?}");
    let m = match op {
        Op::Mod2m(m) => m,
        _ => k - 1,
    };
    // one opening, the comparison's AND layers, the conversion's opening if binary (and ReLU's
    // product)
    let extra = u64::from(op == Op::Relu);
    assert_eq!(rounds, 1 + u64::from(bitwise.rounds(m)) + extra, "{op:?}, k = {k}, {bitwise:?}: rounds");
}

/// The edges of a `k`-bit input: 0, ±1, the largest and smallest, around ±2^m.
fn edges(k: u32, m: u32) -> Vec<i128> {
    let (top, p) = (1i128 << (k - 1), 1i128 << m);
    let mut v = vec![0, 1, -1, top - 1, -top, top - 2, -top + 1, p, p - 1, -p, -p + 1, 2, -2];
    v.retain(|&x| -top <= x && x < top);
    v
}

#[test]
fn comparisons_and_relu_agree_with_the_twin_at_the_edges() {
    for circuit in [Circuit::AndNot, Circuit::AndXor] {
        for bitwise in [Bitwise::Binary(circuit), Bitwise::Arithmetic(circuit)] {
            for k in [2, 3, 8, 40, 64] {
                check(Op::Ltz, &edges(k, k - 1), k, bitwise);
                check(Op::Relu, &edges(k, k - 1), k, bitwise);
            }
            for (k, m) in [(8, 1), (8, 3), (40, 20), (64, 63), (80, 17)] {
                check(Op::Mod2m(m), &edges(k, m), k, bitwise);
            }
        }
    }
}

/// The fixed-point ReLU of the paper: mantissas of 40 bits at precision 16.
#[test]
fn relu_on_fixed_point_numbers() {
    let (f, l) = (16, fixed::MANTISSA_BITS);
    let xs = [0.0, 1.5, -1.5, 2.0f64.powi(23) - 1.0, -(2.0f64.powi(23)), 1e-5, -1e-5, 3.25];
    let vs: Vec<i128> = xs.iter().map(|&x| fixed::encode(x, f, l).unwrap()).collect();
    let (got, _, _) = shamir_run(Op::Relu, &vs, l, Bitwise::Binary(Circuit::AndNot));
    let decoded: Vec<f64> = got.iter().map(|&v| fixed::decode(v, f)).collect();
    let want: Vec<f64> = vs.iter().map(|&v| fixed::decode(v.max(0), f)).collect();
    assert_eq!(decoded, want);
    let err = fixed::encode(2.0f64.powi(23), f, l).unwrap_err().to_string();
    assert!(err.contains("outside"), "{err}");
    assert!(fixed::encode(f64::NAN, f, l).is_err());
}

/// Widths the field cannot hold, and a mask used on another length, are refused.
#[test]
fn bad_parameters_are_refused() {
    let field = Fp::p128();
    assert!(check_width(&field, 40, KAPPA).is_ok());
    assert!(check_width(&field, 85, KAPPA).is_err(), "85 + 40 + 3 bits do not fit");
    assert!(check_width(&field, 1, KAPPA).is_err());
    let got = run(3, Backend::Memory, NetConfig::default(), |p| {
        let mut abb = ShamirAbb::new(p, field)?;
        assert!(Mask::new(&mut abb, 4, 8, 8, KAPPA).is_err(), "m = k");
        assert!(Mask::new(&mut abb, 4, 8, 0, KAPPA).is_err(), "m = 0");
        let mask = Mask::new(&mut abb, 4, 8, 3, KAPPA)?;
        let (x, four) = (abb.constant(&[1, 2, 3]), abb.constant(&[1; 4]));
        Ok((
            mod2m(&mut abb, &x, &mask, Bitwise::Binary(Circuit::AndNot)).is_err(),
            ltz(&mut abb, &four, &mask, Bitwise::Binary(Circuit::AndNot)).is_err(),
        ))
    })
    .unwrap();
    assert_eq!(got[0], (true, true));
}

/// daBits are bits, the same in F_q and F_2, and balanced.
#[test]
fn dabits_agree_in_both_fields() {
    let got = run(3, Backend::Memory, NetConfig::default(), |p| {
        let mut abb = ShamirAbb::new(p, Fp::p128())?;
        let (q, b) = abb.dabits(2000)?;
        Ok((abb.open(&q)?, abb.open_bits(&b)?))
    })
    .unwrap();
    let (q, b) = &got[0];
    assert!(q.iter().enumerate().all(|(i, &v)| v == u128::from(b.get(i))), "F_q and F_2 sides differ");
    let ones = b.count_ones();
    assert!((800..1200).contains(&ones), "{ones} ones in 2000");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_inputs_agree_with_the_twin(k in 2u32..=80, seed: u64, and_not: bool, binary: bool) {
        let mut rng = StdRng::seed_from_u64(seed);
        let top = 1i128 << (k - 1);
        let xs: Vec<i128> = (0..20).map(|_| rng.gen_range(-top..top)).collect();
        let circuit = if and_not { Circuit::AndNot } else { Circuit::AndXor };
        let circuit = if binary { Bitwise::Binary(circuit) } else { Bitwise::Arithmetic(circuit) };
        let m = rng.gen_range(1..k);
        for op in [Op::Ltz, Op::Relu, Op::Mod2m(m)] {
            let (got, _, _) = shamir_run(op, &xs, k, circuit);
            let want: Vec<i128> = xs.iter().map(|&x| plain(op, x)).collect();
            prop_assert_eq!(got, want, "{:?}", op);
        }
    }

    #[test]
    fn random_rabbit_inputs_agree_with_the_twin(k in 2u32..=80, seed: u64, and_not: bool) {
        let mut rng = StdRng::seed_from_u64(seed);
        let top = 1i128 << (k - 1);
        let xs: Vec<i128> = (0..20).map(|_| rng.gen_range(-top..top)).collect();
        let circuit = if and_not { Circuit::AndNot } else { Circuit::AndXor };
        let (got, _, _) = rabbit_run(&Fp::p128(), rabbit::Variant::Slack, &xs, k, circuit).unwrap();
        prop_assert_eq!(got, xs.iter().map(|&x| u128::from(x <= 0)).collect::<Vec<_>>());
    }
}

/// Rabbit's `[x ≤ 0]` on `xs` (field elements: signed values embedded) in the Shamir setting
/// over `field`; returns the opened bits, party 0's online rounds and the rejected draws.
fn rabbit_run(
    field: &Fp,
    variant: rabbit::Variant,
    xs: &[i128],
    k: u32,
    circuit: Circuit,
) -> Result<(Vec<u128>, u64, usize)> {
    let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(field, x)).collect();
    let shares = share_from_client(field, &values, &mut StdRng::seed_from_u64(2)).unwrap();
    let got = run(3, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let mut abb = ShamirAbb::new(p, *field)?;
        let mask = rabbit::RabbitMask::new(&mut abb, variant, xs.len(), k, KAPPA, circuit)?;
        sync(&mut abb)?;
        let before = abb.party().stats();
        let y = rabbit::lteqz(&mut abb, &shares[me], &mask, circuit)?;
        let rounds = (abb.party().stats() - before).rounds;
        Ok((abb.open(&y)?, rounds, mask.rejected))
    })?;
    Ok(got[0].clone())
}

#[test]
fn rabbit_agrees_with_the_twin_at_the_edges() {
    let field = Fp::p128();
    let half = (field.p() / 2) as i128;
    for circuit in [Circuit::AndNot, Circuit::AndXor] {
        for k in [2, 8, 40, 64] {
            let xs = edges(k, k - 1);
            let (got, rounds, _) = rabbit_run(&field, rabbit::Variant::Slack, &xs, k, circuit).unwrap();
            let want: Vec<u128> = xs.iter().map(|&x| u128::from(x <= 0)).collect();
            assert_eq!(got, want, "rabbit_slack k = {k} {circuit:?}");
            assert_eq!(rounds, 2 + u64::from(circuit.layers(k)), "rabbit_slack rounds");
        }
        // the whole field, read centred: ±(q−1)/2 are its ends
        let xs = [0, 1, -1, half, -half, half - 1, -half + 1, 1 << 100, -(1 << 100)];
        for variant in [rabbit::Variant::Fp, rabbit::Variant::RejectionList] {
            let (got, rounds, _) = rabbit_run(&field, variant, &xs, 0, circuit).unwrap();
            let want: Vec<u128> = xs.iter().map(|&x| u128::from(x <= 0)).collect();
            assert_eq!(got, want, "{variant:?} {circuit:?}");
            assert_eq!(rounds, 2 + u64::from(circuit.layers(128)), "{variant:?} rounds");
        }
    }
}

/// Over a prime far below a power of two the rejection list redraws about half the masks and
/// stays exact, and `rabbit_fp` is refused.
#[test]
fn the_rejection_list_redraws_and_rabbit_fp_refuses_a_far_prime() {
    let p = (1u128 << 31..).step_by(1).find(|&p| p % 2 == 1 && Fp::new(p).is_ok()).unwrap();
    let field = Fp::new(p).unwrap();
    let half = (p / 2) as i128;
    let mut rng = StdRng::seed_from_u64(4);
    let mut xs: Vec<i128> = (0..200).map(|_| rng.gen_range(-half..=half)).collect();
    xs.extend([0, 1, -1, half, -half]);
    let (got, _, rejected) = rabbit_run(&field, rabbit::Variant::RejectionList, &xs, 0, Circuit::AndNot).unwrap();
    assert_eq!(got, xs.iter().map(|&x| u128::from(x <= 0)).collect::<Vec<_>>());
    assert!(rejected > 50, "about half of 205 draws of 32 bits exceed q ≈ 2^31: {rejected}");
    let err = rabbit_run(&field, rabbit::Variant::Fp, &xs, 0, Circuit::AndNot).unwrap_err().to_string();
    assert!(err.contains("rejection list"), "{err}");
}

/// What each party receives in `cons_ltz` and in `rabbit_slack` looks uniform and the same whether
/// the inputs are all at the smallest, all 0, all at the largest or random; and the opened masked
/// value `x + r' + 2^m·r'' + 2^(k−1)` is distributed alike for `x` at either end (the mask hides
/// `x` statistically: only its bytes' distribution is compared, not uniformity).
#[test]
fn views_are_independent_of_the_inputs() {
    use crate::testing::{assert_views_uniform, byte_histogram, chi2_same};
    let field = Fp::p128();
    let (k, n) = (40u32, 2000usize);
    let top = 1i128 << (k - 1);
    let mut rng = StdRng::seed_from_u64(8);
    let sets = [vec![-top; n], vec![0; n], vec![top - 1; n], (0..n).map(|_| rng.gen_range(-top..top)).collect()];
    type View = Vec<(usize, Vec<u8>)>;
    let views: Vec<Vec<(View, View)>> = sets
        .iter()
        .map(|xs| {
            let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(&field, x)).collect();
            let shares = share_from_client(&field, &values, &mut StdRng::seed_from_u64(3)).unwrap();
            run(3, Backend::Memory, NetConfig::default(), |p| {
                let me = p.id();
                let mut abb = ShamirAbb::new(p, field)?;
                let mask = Mask::new(&mut abb, n, k, k - 1, KAPPA)?;
                let rmask = rabbit::RabbitMask::new(&mut abb, rabbit::Variant::Slack, n, k, KAPPA, Circuit::AndNot)?;
                abb.party().net().record_view();
                ltz(&mut abb, &shares[me], &mask, Bitwise::Binary(Circuit::AndNot))?;
                let ltz_view = abb.party().net().take_view();
                abb.party().net().record_view();
                rabbit::lteqz(&mut abb, &shares[me], &rmask, Circuit::AndNot)?;
                Ok((ltz_view, abb.party().net().take_view()))
            })
            .unwrap()
        })
        .collect();
    for id in 0..3 {
        let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id].0)).collect();
        assert!(hs[0].iter().sum::<f64>() > 30_000.0, "the opening's shares");
        assert_views_uniform("cons_ltz", id, &hs);
        let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id].1)).collect();
        assert_views_uniform("rabbit_slack", id, &hs);
    }
    // the opened value itself, for the two ends of the range
    let n = 20_000;
    let opened: Vec<[f64; 256]> = [-top, top - 1]
        .iter()
        .map(|&x| {
            let got = run(3, Backend::Memory, NetConfig::default(), |p| {
                let mut abb = ShamirAbb::new(p, field)?;
                let mask = Mask::new(&mut abb, n, k, k - 1, KAPPA)?;
                let x = abb.constant(&vec![fixed::embed(&field, x); n]);
                abb.open(&abb.add(&x, &mask.pad)?)
            })
            .unwrap();
            let bytes: Vec<u8> = got[0].iter().flat_map(|a| a.to_le_bytes()[..11].to_vec()).collect();
            byte_histogram(&[(0, bytes)])
        })
        .collect();
    let c = chi2_same(&opened[0], &opened[1]);
    assert!(c < 380.0, "the opened value's bytes differ between x = min and x = max (chi2 = {c:.0})");
}
