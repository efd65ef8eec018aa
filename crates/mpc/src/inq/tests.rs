use argus_math::Fp;
use argus_net::NetConfig;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ft::{FtAbb, Garbling};
use super::shamir::ShamirAbb;
use super::*;
use crate::error::Result;
use crate::local::{run, Backend};
use crate::shamir::share_from_client;

const KAPPA: u32 = 40;

/// Where a protocol runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Setting {
    Shamir,
    Ft(Garbling),
}

const SETTINGS: [Setting; 3] = [Setting::Shamir, Setting::Ft(Garbling::Online), Setting::Ft(Garbling::Offline)];

/// Runs `body` with `abb` the setting's black box and `x` the shares of `values` (embedded
/// field elements, given by a client in Shamir, by party 0 in FT); returns every party's result.
macro_rules! in_setting {
    ($setting:expr, $field:expr, $values:expr, |$abb:ident, $x:ident| $body:block) => {{
        let field: Fp = $field;
        let values: Vec<u128> = $values.to_vec();
        match $setting {
            Setting::Shamir => {
                let shares = share_from_client(&field, &values, &mut StdRng::seed_from_u64(1)).unwrap();
                run(3, Backend::Memory, NetConfig::default(), |p| {
                    let me = p.id();
                    let mut abb = ShamirAbb::new(p, field)?;
                    let $x = shares[me].clone();
                    let $abb = &mut abb;
                    $body
                })
            }
            Setting::Ft(garbling) => run(2, Backend::Memory, NetConfig::default(), |p| {
                let mine = if p.id() == 0 { values.clone() } else { vec![0; values.len()] };
                let mut abb = FtAbb::new(p, field, garbling)?;
                let $x = abb.input(&mine)?;
                let $abb = &mut abb;
                $body
            }),
        }
    }};
}

/// What each protocol gives, per element, as signed integers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Mod2m(u32),
    Ltz,
    Relu,
    /// `[x < 0]` by Rabbit's conversion (`rabbit_conv`).
    Conv,
}

/// An opening of nothing, so that the next send opens a round for every party (the masks' last
/// messages go one way).
fn sync<A: Abb>(abb: &mut A) -> Result<()> {
    abb.open(&abb.constant(&[])).map(|_| ())
}

/// The twin.
fn plain(op: Op, x: i128) -> i128 {
    match op {
        Op::Mod2m(m) => x.rem_euclid(1 << m),
        Op::Ltz | Op::Conv => i128::from(x < 0),
        Op::Relu => x.max(0),
    }
}

/// The mask `op` needs, then `op` on `x`; returns the revealed results and the online rounds of
/// every party.
fn protocol<A: Abb>(abb: &mut A, op: Op, x: &A::Arith, k: u32, bitwise: Bitwise) -> Result<(Vec<u128>, u64)> {
    let n = abb.len(x);
    let mask = match op {
        Op::Mod2m(m) => Mask::new(abb, n, k, m, KAPPA, bitwise)?,
        Op::Ltz => Mask::new(abb, n, k, k - 1, KAPPA, bitwise)?,
        Op::Relu => Mask::for_relu(abb, n, k, KAPPA, bitwise)?,
        Op::Conv => {
            let Bitwise::Binary(c) = bitwise else { unreachable!("rabbit_conv is binary") };
            Mask::conversion(abb, n, k, KAPPA, c)?
        }
    };
    sync(abb)?;
    let before = abb.stats();
    let y = match op {
        Op::Mod2m(_) => mod2m(abb, x, &mask)?,
        Op::Ltz => ltz(abb, x, &mask)?,
        Op::Relu => relu(abb, x, &mask)?,
        Op::Conv => rabbit_conv(abb, x, &mask)?,
    };
    let rounds = (abb.stats() - before).rounds;
    Ok((reveal(abb, &y)?, rounds))
}

/// Runs `op` on `xs` (`k`-bit signed) in `setting`; returns the results (signed) and every
/// party's online rounds.
fn setting_run(setting: Setting, op: Op, xs: &[i128], k: u32, bitwise: Bitwise) -> (Vec<i128>, Vec<u64>) {
    let field = Fp::p128();
    let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(&field, x)).collect();
    let got = in_setting!(setting, field, values, |abb, x| { protocol(abb, op, &x, k, bitwise) }).unwrap();
    let out = got[0].0.iter().map(|&v| fixed::signed(&field, v)).collect();
    (out, got.iter().map(|g| g.1).collect())
}

/// Online rounds each party's counter shows. In FT a garbled circuit is one message from the
/// garbler, which the counter folds into the garbler's next send (it counts a send after a
/// receive): on the wire the binary forms take one latency more than they count.
fn expected_rounds(setting: Setting, op: Op, k: u32, bitwise: Bitwise) -> u64 {
    let m = match op {
        Op::Mod2m(m) => m,
        Op::Conv => k,
        _ => k - 1,
    };
    let extra = u64::from(op == Op::Relu);
    let layers = |b: Bitwise| match b {
        Bitwise::Binary(c) if op == Op::Conv => c.layers(m),
        Bitwise::Binary(c) | Bitwise::Arithmetic(c) => c.layers(m),
    };
    match (setting, bitwise) {
        (Setting::Shamir, Bitwise::Binary(_)) => 1 + u64::from(layers(bitwise)) + 1 + extra,
        (_, Bitwise::Arithmetic(_)) => 1 + u64::from(layers(bitwise)) + extra,
        (Setting::Ft(_), Bitwise::Binary(_)) => 2 + extra,
    }
}

fn check(setting: Setting, op: Op, xs: &[i128], k: u32, bitwise: Bitwise) {
    let (got, rounds) = setting_run(setting, op, xs, k, bitwise);
    let want: Vec<i128> = xs.iter().map(|&x| plain(op, x)).collect();
    assert_eq!(got, want, "{setting:?} {op:?}, k = {k}, {bitwise:?}");
    let want = expected_rounds(setting, op, k, bitwise);
    assert!(
        rounds.iter().all(|&r| r == want),
        "{setting:?} {op:?}, k = {k}, {bitwise:?}: rounds {rounds:?}, want {want}"
    );
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
    for setting in SETTINGS {
        for circuit in [Circuit::AndNot, Circuit::AndXor] {
            for bitwise in [Bitwise::Binary(circuit), Bitwise::Arithmetic(circuit)] {
                // FT's products cost OTs: its arithmetic forms on fewer widths
                let widths: &[u32] = if setting == Setting::Shamir || bitwise == Bitwise::Binary(circuit) {
                    &[2, 3, 8, 40, 64]
                } else {
                    &[2, 8, 40]
                };
                if matches!(setting, Setting::Ft(Garbling::Offline)) && matches!(bitwise, Bitwise::Arithmetic(_)) {
                    continue; // nothing garbled: the same as FT
                }
                for &k in widths {
                    check(setting, Op::Ltz, &edges(k, k - 1), k, bitwise);
                    check(setting, Op::Relu, &edges(k, k - 1), k, bitwise);
                    if let Bitwise::Binary(_) = bitwise {
                        check(setting, Op::Conv, &edges(k, k - 1), k, bitwise);
                    }
                }
                for (k, m) in [(8, 1), (8, 3), (40, 20), (64, 63), (80, 17)] {
                    check(setting, Op::Mod2m(m), &edges(k, m), k, bitwise);
                }
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
    for setting in SETTINGS {
        let (got, _) = setting_run(setting, Op::Relu, &vs, l, Bitwise::Binary(Circuit::AndNot));
        let decoded: Vec<f64> = got.iter().map(|&v| fixed::decode(v, f)).collect();
        let want: Vec<f64> = vs.iter().map(|&v| fixed::decode(v.max(0), f)).collect();
        assert_eq!(decoded, want, "{setting:?}");
    }
    let (got, _) = setting_run(Setting::Shamir, Op::Relu, &vs, l, Bitwise::Binary(Circuit::AndNot));
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
        let b = Bitwise::Binary(Circuit::AndNot);
        assert!(Mask::new(&mut abb, 4, 8, 8, KAPPA, b).is_err(), "m = k");
        assert!(Mask::new(&mut abb, 4, 8, 0, KAPPA, b).is_err(), "m = 0");
        let mask = Mask::new(&mut abb, 4, 8, 3, KAPPA, b)?;
        let conv = Mask::conversion(&mut abb, 4, 8, KAPPA, Circuit::AndNot)?;
        let (x, four) = (abb.constant(&[1, 2, 3]), abb.constant(&[1; 4]));
        Ok((
            mod2m(&mut abb, &x, &mask).is_err(),
            ltz(&mut abb, &four, &mask).is_err() && mod2m(&mut abb, &four, &conv).is_err(),
        ))
    })
    .unwrap();
    assert_eq!(got[0], (true, true));
}

/// daBits are bits, the same in F_q and F_2, and balanced; their MACs check.
#[test]
fn dabits_agree_in_both_fields() {
    for setting in SETTINGS {
        let got = in_setting!(setting, Fp::p128(), [], |abb, _x| {
            let (q, b) = abb.dabits(2000)?;
            let q = abb.open(&q)?;
            let b = abb.open_bits(&b)?;
            abb.check()?;
            Ok((q, b))
        })
        .unwrap();
        let (q, b) = &got[0];
        assert!(q.iter().enumerate().all(|(i, &v)| v == u128::from(b.get(i))), "{setting:?}: F_q and F_2 sides differ");
        let ones = b.count_ones();
        assert!((800..1200).contains(&ones), "{setting:?}: {ones} ones in 2000");
    }
}

/// FT: a party that flips one share of its input before a comparison is caught by the MAC
/// check before the result is revealed, and both parties end with the typed abort; a label the
/// evaluator opens off its wire is refused by the garbler at once.
#[test]
fn a_flipped_share_is_caught_before_the_output() {
    let field = Fp::p128();
    for garbling in [Garbling::Online, Garbling::Offline] {
        let got = run(2, Backend::Memory, NetConfig::default(), |p| {
            let me = p.id();
            let mut abb = FtAbb::new(p, field, garbling)?;
            let mut x = abb.input(&if me == 0 { vec![5, fixed::embed(&field, -3)] } else { vec![0, 0] })?;
            let mask = Mask::new(&mut abb, 2, 16, 15, KAPPA, Bitwise::Binary(Circuit::AndNot))?;
            if me == 1 {
                x.values_mut()[0] = field.add(x.values_mut()[0], 1);
            }
            let y = ltz(&mut abb, &x, &mask)?;
            reveal(&mut abb, &y)
        });
        let err = got.unwrap_err();
        assert!(matches!(err, crate::MpcError::Abort(_)), "{garbling:?}: {err}");
    }
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let mut abb = FtAbb::new(p, field, Garbling::Online)?;
        let (_, b) = abb.dabits(8)?;
        let b = if me == 1 { abb.xor(&b, &abb.slice_bits(&b, 0, 8)?)? } else { b };
        abb.open_bits(&b).map(|_| ())
    });
    assert!(matches!(got.unwrap_err(), crate::MpcError::Abort(_)), "a label of another wire");
    // a product off by one in a triple: the sacrifice refuses it before it is used
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let mut abb = FtAbb::new(p, field, Garbling::Online)?;
        abb.corrupt_triples = me == 1;
        abb.prepare_products(4)
    });
    let err = got.unwrap_err();
    assert!(err.to_string().contains("sacrifice"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_inputs_agree_with_the_twin(k in 2u32..=80, seed: u64, and_not: bool, binary: bool, setting in 0usize..3) {
        let mut rng = StdRng::seed_from_u64(seed);
        let top = 1i128 << (k - 1);
        let xs: Vec<i128> = (0..20).map(|_| rng.gen_range(-top..top)).collect();
        let circuit = if and_not { Circuit::AndNot } else { Circuit::AndXor };
        let bitwise = if binary { Bitwise::Binary(circuit) } else { Bitwise::Arithmetic(circuit) };
        let m = rng.gen_range(1..k);
        let mut ops = vec![Op::Ltz, Op::Relu, Op::Mod2m(m)];
        if binary {
            ops.push(Op::Conv);
        }
        for op in ops {
            let (got, _) = setting_run(SETTINGS[setting], op, &xs, k, bitwise);
            let want: Vec<i128> = xs.iter().map(|&x| plain(op, x)).collect();
            prop_assert_eq!(got, want, "{:?} {:?}", SETTINGS[setting], op);
        }
    }

    #[test]
    fn random_rabbit_inputs_agree_with_the_twin(k in 2u32..=80, seed: u64, and_not: bool) {
        let mut rng = StdRng::seed_from_u64(seed);
        let top = 1i128 << (k - 1);
        let xs: Vec<i128> = (0..20).map(|_| rng.gen_range(-top..top)).collect();
        let circuit = if and_not { Circuit::AndNot } else { Circuit::AndXor };
        for setting in SETTINGS {
            let (got, _, _) = rabbit_run(setting, &Fp::p128(), rabbit::Variant::Slack, &xs, k, circuit).unwrap();
            prop_assert_eq!(got, xs.iter().map(|&x| u128::from(x <= 0)).collect::<Vec<_>>());
        }
    }
}

/// Rabbit's `[x ≤ 0]` on `xs` (field elements: signed values embedded) in `setting` over
/// `field`; returns the opened bits, party 0's online rounds and the rejected draws.
fn rabbit_run(
    setting: Setting,
    field: &Fp,
    variant: rabbit::Variant,
    xs: &[i128],
    k: u32,
    circuit: Circuit,
) -> Result<(Vec<u128>, u64, usize)> {
    let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(field, x)).collect();
    let got = in_setting!(setting, *field, values, |abb, x| {
        let mask = rabbit::RabbitMask::new(abb, variant, xs.len(), k, KAPPA, circuit)?;
        sync(abb)?;
        let before = abb.stats();
        let y = rabbit::lteqz(abb, &x, &mask)?;
        let rounds = (abb.stats() - before).rounds;
        Ok((reveal(abb, &y)?, rounds, mask.rejected))
    })?;
    Ok(got[0].clone())
}

#[test]
fn rabbit_agrees_with_the_twin_at_the_edges() {
    let field = Fp::p128();
    let half = (field.p() / 2) as i128;
    for setting in SETTINGS {
        // FT: one garbled message, folded into the counter as in `expected_rounds`
        let rounds_of = |layers: u32| if setting == Setting::Shamir { 2 + u64::from(layers) } else { 2 };
        for circuit in [Circuit::AndNot, Circuit::AndXor] {
            for k in [2, 8, 40, 64] {
                let xs = edges(k, k - 1);
                let (got, rounds, _) = rabbit_run(setting, &field, rabbit::Variant::Slack, &xs, k, circuit).unwrap();
                let want: Vec<u128> = xs.iter().map(|&x| u128::from(x <= 0)).collect();
                assert_eq!(got, want, "{setting:?} rabbit_slack k = {k} {circuit:?}");
                assert_eq!(rounds, rounds_of(circuit.layers(k)), "{setting:?} rabbit_slack rounds");
            }
            // the whole field, read centred: ±(q−1)/2 are its ends
            let xs = [0, 1, -1, half, -half, half - 1, -half + 1, 1 << 100, -(1 << 100)];
            for variant in [rabbit::Variant::Fp, rabbit::Variant::RejectionList] {
                let (got, rounds, _) = rabbit_run(setting, &field, variant, &xs, 0, circuit).unwrap();
                let want: Vec<u128> = xs.iter().map(|&x| u128::from(x <= 0)).collect();
                assert_eq!(got, want, "{setting:?} {variant:?} {circuit:?}");
                assert_eq!(rounds, rounds_of(circuit.layers(128)), "{setting:?} {variant:?} rounds");
            }
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
    for setting in SETTINGS {
        let (got, _, rejected) =
            rabbit_run(setting, &field, rabbit::Variant::RejectionList, &xs, 0, Circuit::AndNot).unwrap();
        assert_eq!(got, xs.iter().map(|&x| u128::from(x <= 0)).collect::<Vec<_>>(), "{setting:?}");
        assert!(rejected > 50, "about half of 205 draws of 32 bits exceed q ≈ 2^31: {rejected}");
    }
    let err =
        rabbit_run(Setting::Shamir, &field, rabbit::Variant::Fp, &xs, 0, Circuit::AndNot).unwrap_err().to_string();
    assert!(err.contains("rejection list"), "{err}");
}

/// The view tests' input sets of `n` `k`-bit values: all at the smallest, all 0, all at the
/// largest, random.
fn view_inputs(k: u32, n: usize, seed: u64) -> [Vec<i128>; 4] {
    let top = 1i128 << (k - 1);
    let mut rng = StdRng::seed_from_u64(seed);
    [vec![-top; n], vec![0; n], vec![top - 1; n], (0..n).map(|_| rng.gen_range(-top..top)).collect()]
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
    let sets = view_inputs(k, n, 8);
    type View = Vec<(usize, Vec<u8>)>;
    let views: Vec<Vec<(View, View)>> = sets
        .iter()
        .map(|xs| {
            let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(&field, x)).collect();
            let shares = share_from_client(&field, &values, &mut StdRng::seed_from_u64(3)).unwrap();
            run(3, Backend::Memory, NetConfig::default(), |p| {
                let me = p.id();
                let mut abb = ShamirAbb::new(p, field)?;
                let mask = Mask::new(&mut abb, n, k, k - 1, KAPPA, Bitwise::Binary(Circuit::AndNot))?;
                let rmask = rabbit::RabbitMask::new(&mut abb, rabbit::Variant::Slack, n, k, KAPPA, Circuit::AndNot)?;
                abb.party().net().record_view();
                ltz(&mut abb, &shares[me], &mask)?;
                let ltz_view = abb.party().net().take_view();
                abb.party().net().record_view();
                rabbit::lteqz(&mut abb, &shares[me], &rmask)?;
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
                let mask = Mask::new(&mut abb, n, k, k - 1, KAPPA, Bitwise::Binary(Circuit::AndNot))?;
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

/// FT's online bytes per element of `cons_ltz` against the formula: the opening (16 bytes each
/// way), then the garbler's rows — two labels per AND of two shared wires, those of the
/// comparison tree with `a` public — or, garbled ahead, one label per input wire; the
/// conversion's opening is the evaluator's label one way and the garbler's bit the other.
#[test]
fn ft_bytes_per_comparison_follow_the_formula() {
    let field = Fp::p128();
    let (k, n) = (40u32, 64usize);
    let m = (k - 1) as usize;
    for garbling in [Garbling::Online, Garbling::Offline] {
        let got = run(2, Backend::Memory, NetConfig::default(), |p| {
            let me = p.id();
            let mut abb = FtAbb::new(p, field, garbling)?;
            let x = abb.input(&vec![if me == 0 { 7 } else { 0 }; n])?;
            let mask = Mask::new(&mut abb, n, k, k - 1, KAPPA, Bitwise::Binary(Circuit::AndNot))?;
            sync(&mut abb)?;
            let before = abb.stats();
            ltz(&mut abb, &x, &mask)?;
            Ok((abb.stats() - before).bytes_sent)
        })
        .unwrap();
        let garbled = match garbling {
            Garbling::Online => 32 * arith_products(m, Circuit::AndNot),
            Garbling::Offline => 16 * (2 * m + 1),
        };
        let garbler = 16 * n + garbled * n + n.div_ceil(8);
        assert_eq!(got, vec![garbler as u64, 32 * n as u64], "{garbling:?}");
    }
}

/// FT: what each party receives in `cons_ltz` and its MAC check — the opened shares, the
/// garbled rows or input labels, the conversion's labels and bits, the check's digests — looks
/// uniform and the same for inputs all at the smallest, all 0, all at the largest or random,
/// garbling online and ahead.
#[test]
fn ft_views_are_independent_of_the_inputs() {
    use crate::testing::{assert_views_uniform, byte_histogram};
    let field = Fp::p128();
    let (k, n) = (40u32, 1000usize);
    let sets = view_inputs(k, n, 9);
    for garbling in [Garbling::Online, Garbling::Offline] {
        type View = Vec<(usize, Vec<u8>)>;
        let views: Vec<Vec<View>> = sets
            .iter()
            .map(|xs| {
                let values: Vec<u128> = xs.iter().map(|&x| fixed::embed(&field, x)).collect();
                in_setting!(Setting::Ft(garbling), field, values, |abb, x| {
                    let mask = Mask::new(abb, n, k, k - 1, KAPPA, Bitwise::Binary(Circuit::AndNot))?;
                    abb.party().net().record_view();
                    ltz(abb, &x, &mask)?;
                    abb.check()?;
                    Ok(abb.party().net().take_view())
                })
                .unwrap()
            })
            .collect();
        for id in 0..2 {
            let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id])).collect();
            assert!(hs[0].iter().sum::<f64>() > 15_000.0, "{garbling:?}: party {id} received the opening");
            assert_views_uniform(&format!("FT {garbling:?} cons_ltz"), id, &hs);
        }
    }
}

/// Fixed-point products at precision 16 of 40-bit mantissas (the edges and random ones), in
/// every setting: each result is `⌊x·y/2^16⌋` or one more, exactly the former when `2^16`
/// divides the product; two rounds (the product, the truncation's opening).
#[test]
fn fixed_point_products_truncate_probabilistically() {
    let (f, l) = (16u32, fixed::MANTISSA_BITS);
    let top = 1i128 << (l - 1);
    let mut rng = StdRng::seed_from_u64(11);
    let mut xs = vec![0, 1, -1, top - 1, -top, 1 << f, -(1 << f), 3 << f, top - 1, -top];
    let mut ys = vec![top - 1, -top, 1, -1, top - 1, top - 1, -top, -(5 << f), top - 1, -top];
    for _ in 0..30 {
        xs.push(rng.gen_range(-top..top));
        ys.push(rng.gen_range(-top..top));
    }
    let n = xs.len();
    let field = Fp::p128();
    let values: Vec<u128> = xs.iter().chain(&ys).map(|&v| fixed::embed(&field, v)).collect();
    for setting in SETTINGS {
        let got = in_setting!(setting, field, values, |abb, xy| {
            let mask = fixed::truncation_mask(abb, n, 2 * l, f, KAPPA)?;
            abb.prepare_products(n)?;
            let (x, y) = (abb.slice(&xy, 0, n)?, abb.slice(&xy, n, n)?);
            sync(abb)?;
            let before = abb.stats();
            let z = fixed::mul(abb, &x, &y, &mask)?;
            let rounds = (abb.stats() - before).rounds;
            Ok((reveal(abb, &z)?, rounds))
        })
        .unwrap();
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            let z = fixed::signed(&field, got[0].0[i]);
            let floor = (x * y).div_euclid(1 << f);
            if (x * y).rem_euclid(1 << f) == 0 {
                assert_eq!(z, floor, "{setting:?}: {x}·{y} is a multiple of 2^{f}");
            } else {
                assert!(z == floor || z == floor + 1, "{setting:?}: {x}·{y}/2^{f} gave {z}, floor {floor}");
            }
        }
        assert!(got.iter().all(|g| g.1 == 2), "{setting:?}: rounds {:?}", got.iter().map(|g| g.1).collect::<Vec<_>>());
    }
    let got = run(3, Backend::Memory, NetConfig::default(), |p| {
        let mut abb = ShamirAbb::new(p, field)?;
        Ok(fixed::truncation_mask(&mut abb, 2, 40, 40, KAPPA).is_err())
    })
    .unwrap();
    assert!(got[0], "m = k refused");
}

/// Shamir's online bytes per party of `cons_ltz` against the formula: the opening (one element
/// to the next party), one bit per AND of two shared wires (the comparison tree's; `a` is public),
/// the conversion's bit.
#[test]
fn shamir_bytes_per_comparison_follow_the_formula() {
    let field = Fp::p128();
    let (k, n) = (64u32, 100usize);
    for circuit in [Circuit::AndNot, Circuit::AndXor] {
        let got = in_setting!(Setting::Shamir, field, vec![3u128; n], |abb, x| {
            let mask = Mask::new(abb, n, k, k - 1, KAPPA, Bitwise::Binary(circuit))?;
            sync(abb)?;
            let before = abb.stats();
            ltz(abb, &x, &mask)?;
            Ok((abb.stats() - before).bytes_sent)
        })
        .unwrap();
        let ands = arith_products((k - 1) as usize, circuit);
        let want = (16 * n + ands * n.div_ceil(8) + n.div_ceil(8)) as u64;
        assert_eq!(got, vec![want; 3], "{circuit:?}");
    }
}
