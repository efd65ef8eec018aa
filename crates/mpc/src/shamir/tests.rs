//! shamir against its plaintext twin (integer arithmetic mod p written out here, independent of
//! the field types): random inputs and edge cases, both backends, and byte and round counts.

use std::time::Duration;

use argus_math::{Field, Fp, MathError, Modulus, Ring, Zt, F65519};
use argus_net::{NetConfig, Stats};
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

use super::*;
use crate::local::{run3, Backend};
use crate::party::Party;
use crate::rep3::{self, Rep3, Rep3Bits};
use crate::MpcError;

type R<T> = crate::error::Result<T>;
type PropResult = std::result::Result<(), TestCaseError>;

fn cfg() -> NetConfig {
    NetConfig::with_timeout(Duration::from_secs(60))
}

// ---------------------------------------------------------------- plaintext twin

fn modulus_of<Q: Ring>(f: &Q) -> u128 {
    match f.modulus() {
        Modulus::Int(t) => t,
        Modulus::Pow2(k) => 1u128 << k,
    }
}

fn addm(a: u128, b: u128, p: u128) -> u128 {
    let (s, c) = a.overflowing_add(b);
    if c || s >= p {
        s.wrapping_sub(p)
    } else {
        s
    }
}

fn subm(a: u128, b: u128, p: u128) -> u128 {
    addm(a, p - b, p) % p
}

/// Double-and-add, so that no product overflows even for 128-bit p.
fn mulm(a: u128, mut b: u128, p: u128) -> u128 {
    let (mut acc, mut a) = (0, a % p);
    while b > 0 {
        if b & 1 == 1 {
            acc = addm(acc, a, p);
        }
        a = addm(a, a, p);
        b >>= 1;
    }
    acc
}

/// 0, 1, p-1, (p-1)/2, (p+1)/2, 2^(ℓ-1), 2^(ℓ-1)-1 (2^15 and 2^15-1 for F_65519).
fn edges<Q: Ring>(f: &Q) -> Vec<u128> {
    let p = modulus_of(f);
    let h = 1u128 << (f.bits() - 1);
    vec![0, 1, p - 1, (p - 1) / 2, p.div_ceil(2), h, h - 1]
}

/// Edge cases first, then random values, with more edge cases sprinkled in.
fn values<Q: Ring>(f: &Q, n: usize, seed: u64) -> Vec<u128> {
    let mut rng = StdRng::seed_from_u64(seed);
    let e = edges(f);
    (0..n)
        .map(|i| {
            if i < e.len() {
                e[i]
            } else if i % 5 == 0 {
                e[i % e.len()]
            } else {
                f.to_u128(f.sample(&mut rng))
            }
        })
        .collect()
}

fn els<Q: Ring>(f: &Q, v: &[u128]) -> Vec<Q::El> {
    v.iter().map(|&x| f.try_from_u128(x).expect("canonical test value")).collect()
}

fn ints<Q: Ring>(f: &Q, v: &[Q::El]) -> Vec<u128> {
    v.iter().map(|&x| f.to_u128(x)).collect()
}

// ---------------------------------------------------------------- harness

/// Client-shares `inputs` with `degree`, runs `f` at every party on its shares, returns all outputs.
fn run<F: Field, T: Send>(
    backend: Backend,
    field: &F,
    inputs: &[Vec<u128>],
    degree: Degree,
    f: impl Fn(&mut Party, Vec<Shamir<F>>) -> R<T> + Sync,
) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(11);
    let shares: Vec<[Shamir<F>; 3]> = inputs
        .iter()
        .map(|v| share_from_client_with_degree(field, degree, &els(field, v), &mut rng).unwrap())
        .collect();
    run3(backend, cfg(), |p| {
        let mine = shares.iter().map(|s| s[p.id()].clone()).collect();
        f(p, mine)
    })
    .unwrap()
}

/// Replicated client shares over any ring (for the binary conversions).
fn run_rep3<Q: Ring, T: Send>(
    backend: Backend,
    ring: &Q,
    xs: &[u128],
    f: impl Fn(&mut Party, &Rep3<Q>) -> R<T> + Sync,
) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(13);
    let shares = rep3::share_from_client(ring, &els(ring, xs), &mut rng);
    run3(backend, cfg(), |p| f(p, &shares[p.id()])).unwrap()
}

fn open_bits(p: &mut Party, x: &Rep3Bits) -> R<Vec<bool>> {
    Ok(rep3::reveal_bits(p, x)?.to_bools())
}

/// Stats spent by each party inside `f`.
fn measured(p: &mut Party, f: impl FnOnce(&mut Party) -> R<()>) -> R<Stats> {
    let before = p.stats();
    f(p)?;
    Ok(p.stats() - before)
}

// ---------------------------------------------------------------- generic checks

fn check_sharing<F: Field>(field: F, xs: Vec<u128>) -> PropResult {
    let n = xs.len();
    let vals = els(&field, &xs);
    for degree in [Degree::One, Degree::Two] {
        let out = run(Backend::Memory, &field, std::slice::from_ref(&xs), degree, |p, s| {
            let x = &s[0];
            assert_eq!(x.degree(), degree);
            let all = reveal(p, x)?;
            let to = (0..3).map(|t| reveal_to(p, x, t)).collect::<R<Vec<_>>>()?;
            let by_party = (0..3)
                .map(|o| {
                    let sh = input(p, &field, o, (p.id() == o).then_some(&vals[..]), n)?;
                    assert_eq!(sh.degree(), Degree::One);
                    let to_o = reveal_to(p, &sh, (o + 1) % 3)?;
                    Ok((reveal(p, &sh)?, to_o))
                })
                .collect::<R<Vec<_>>>()?;
            Ok((p.id(), all, to, by_party))
        });
        for (id, all, to, by_party) in out {
            prop_assert_eq!(&ints(&field, &all), &xs);
            for (t, v) in to.iter().enumerate() {
                prop_assert_eq!(v.is_some(), id == t);
                if let Some(v) = v {
                    prop_assert_eq!(&ints(&field, v), &xs);
                }
            }
            for (o, (v, to_o)) in by_party.iter().enumerate() {
                prop_assert_eq!(&ints(&field, v), &xs);
                prop_assert_eq!(to_o.is_some(), id == (o + 1) % 3);
                if let Some(v) = to_o {
                    prop_assert_eq!(&ints(&field, v), &xs);
                }
            }
        }
    }
    Ok(())
}

fn check_linear_and_mul<F: Field>(field: F, xs: Vec<u128>, seed: u64) -> PropResult {
    let p = modulus_of(&field);
    let n = xs.len();
    let ys: Vec<u128> = values(&field, n, seed ^ 0x55).into_iter().rev().collect();
    let c = edges(&field)[(seed % 7) as usize];
    let (ce, ye) = (field.from_u128(c), els(&field, &ys));
    let out = run(Backend::Memory, &field, &[xs.clone(), ys.clone()], Degree::One, |pt, s| {
        let (x, y) = (&s[0], &s[1]);
        let lin = x.add(y)?.sub(&y.mul_scalar(ce))?.neg().add_scalar(ce).add_public(&ye)?.mul_public(&ye)?;
        let m = mul(pt, x, y)?;
        let m2 = mul(pt, &m, x)?;
        let ml = mul_local(x, y)?;
        let ml_sum = ml.add(&mul_local(x, x)?)?;
        assert_eq!((m.degree(), ml.degree()), (Degree::One, Degree::Two));
        Ok((reveal(pt, &lin)?, reveal(pt, &m)?, reveal(pt, &m2)?, reveal(pt, &ml_sum)?))
    });
    for (lin, m, m2, ml) in out {
        for k in 0..n {
            let (x, y) = (xs[k], ys[k]);
            let e = subm(0, subm(addm(x, y, p), mulm(y, c, p), p), p);
            let e = mulm(addm(addm(e, c, p), y, p), y, p);
            prop_assert_eq!(field.to_u128(lin[k]), e);
            prop_assert_eq!(field.to_u128(m[k]), mulm(x, y, p));
            prop_assert_eq!(field.to_u128(m2[k]), mulm(mulm(x, y, p), x, p));
            prop_assert_eq!(field.to_u128(ml[k]), addm(mulm(x, y, p), mulm(x, x, p), p));
        }
    }
    Ok(())
}

fn check_dot_and_conversions<F: Field>(field: F, rows: usize, len: usize, seed: u64) -> PropResult {
    let p = modulus_of(&field);
    let xs = values(&field, rows * len, seed);
    let ys: Vec<u128> = values(&field, rows * len, seed ^ 0xabc).into_iter().rev().collect();
    let out = run(Backend::Memory, &field, &[xs.clone(), ys.clone()], Degree::One, |pt, s| {
        let (x, y) = (&s[0], &s[1]);
        let d = dot(x, y, len)?;
        assert_eq!((d.degree(), d.len()), (Degree::Two, rows));
        let mut conv = None;
        let cost = measured(pt, |pt| {
            conv = Some(to_rep3(pt, &d)?);
            Ok(())
        })?;
        let r = conv.expect("converted");
        // Degree-1 shares convert the same way, and back to Shamir locally.
        let r1 = to_rep3(pt, x)?;
        let back = from_rep3(pt.id(), &r1)?;
        Ok((reveal(pt, &d)?, reveal_rep3(pt, &r)?, cost, reveal_rep3(pt, &r1)?, reveal(pt, &back)?))
    });
    let want: Vec<u128> =
        (0..rows).map(|r| (0..len).fold(0, |acc, j| addm(acc, mulm(xs[r * len + j], ys[r * len + j], p), p))).collect();
    // One round (counted at the parties that received since their last send).
    prop_assert_eq!(out.iter().map(|o| o.2.rounds).max(), Some(1));
    for (d, r, cost, r1, back) in out {
        prop_assert_eq!(&ints(&field, &d), &want);
        prop_assert_eq!(&ints(&field, &r), &want);
        // One element per row, whatever the row length.
        prop_assert_eq!(cost.bytes_sent, (rows * field.byte_len()) as u64);
        prop_assert_eq!(&ints(&field, &r1), &xs);
        prop_assert_eq!(&ints(&field, &back), &xs);
    }
    Ok(())
}

/// Bits `outs` and the MSB of `x mod t` for both circuits over any ring.
fn check_bits<Q: Ring>(ring: Q, xs: Vec<u128>, outs: Vec<usize>) -> PropResult {
    let l = ring.bits() as usize;
    for circuit in [Circuit::Paper, Circuit::Parallel] {
        let out = run_rep3(Backend::Memory, &ring, &xs, |p, x| {
            let bits = bit_extract_p_with(p, x, &outs, circuit)?;
            let m = msb_p_with(p, x, circuit)?;
            let opened = bits.iter().map(|b| open_bits(p, b)).collect::<R<Vec<_>>>()?;
            Ok((opened, open_bits(p, &m)?))
        });
        for (bits, m) in out {
            for (i, &x) in xs.iter().enumerate() {
                for (o, &j) in outs.iter().enumerate() {
                    prop_assert_eq!(bits[o][i], (x >> j) & 1 == 1, "{:?} bit {} of value {}", circuit, j, i);
                }
                prop_assert_eq!(m[i], (x >> (l - 1)) & 1 == 1, "{:?} msb of value {}", circuit, i);
            }
        }
    }
    Ok(())
}

fn check_lift<Q: Ring>(ring: Q, xs: Vec<u128>, ms: &[u32]) -> PropResult {
    let t = modulus_of(&ring);
    for &m in ms {
        let target = Zt::new(t << m).unwrap();
        for circuit in [Circuit::Paper, Circuit::Parallel] {
            let out = run_rep3(Backend::Memory, &ring, &xs, |p, x| {
                let l = lift_p_with(p, x, m, &target, circuit)?;
                rep3::reveal(p, &l)
            });
            for o in out {
                prop_assert_eq!(&o, &xs, "{:?} lift by 2^{}", circuit, m);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- property tests

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn sharing_and_reveal_all_ways(seed: u64, n in 1usize..200) {
        check_sharing(F65519, values(&F65519, n, seed))?;
        check_sharing(Fp::p128(), values(&Fp::p128(), n, seed))?;
    }

    #[test]
    fn linear_ops_and_mul_match_plaintext(seed: u64, n in 1usize..200) {
        check_linear_and_mul(F65519, values(&F65519, n, seed), seed)?;
        check_linear_and_mul(Fp::p128(), values(&Fp::p128(), n, seed), seed)?;
    }

    #[test]
    fn dot_and_conversions_match_plaintext(seed: u64, rows in 1usize..20, len in 1usize..50) {
        check_dot_and_conversions(F65519, rows, len, seed)?;
        check_dot_and_conversions(Fp::p128(), rows, len, seed)?;
    }

    #[test]
    fn bit_extract_all_bits_and_msb_mod_p(seed: u64, n in 1usize..200) {
        check_bits(F65519, values(&F65519, n, seed), (0..16).collect())?;
    }

    #[test]
    fn bit_extract_other_moduli(seed: u64, n in 1usize..100) {
        // 128-bit prime: ℓ = 128, A + B no longer fits 128 bits.
        check_bits(Fp::p128(), values(&Fp::p128(), n, seed), vec![0, 1, 64, 126, 127])?;
        // Z_{p·2^m} (section 5.2), where the low m carries are shared by both adders.
        let zt = Zt::new(65519u128 << 20).unwrap();
        check_bits(zt, values(&zt, n, seed), vec![0, 3, 19, 20, 21, 35])?;
        // An even modulus that is not p·2^m-shaped, and a power of two.
        let z6 = Zt::new(6 * 1000).unwrap();
        check_bits(z6, values(&z6, n, seed), (0..13).collect())?;
        let z2 = Zt::pow2(12).unwrap();
        check_bits(z2, values(&z2, n, seed), (0..12).collect())?;
    }

    #[test]
    fn lift_p_matches_plaintext(seed: u64, n in 1usize..200) {
        check_lift(F65519, values(&F65519, n, seed), &[20, 1, 2])?;
        let f61 = Fp::new((1u128 << 61) - 1).unwrap();
        check_lift(f61, values(&f61, n, seed), &[20])?;
    }
}

#[test]
fn dot_of_iris_length() {
    let field = F65519;
    let (rows, len) = (3, 12800);
    let mut rng = StdRng::seed_from_u64(5);
    // Bits, as the iris codes are, and full field elements.
    let xs: Vec<u128> =
        (0..rows * len).map(|i| if i % 2 == 0 { rng.gen_range(0..2) } else { rng.gen_range(0..65519) }).collect();
    let ys: Vec<u128> = (0..rows * len).map(|_| rng.gen_range(0..65519)).collect();
    let out = run(Backend::Memory, &field, &[xs.clone(), ys.clone()], Degree::One, |p, s| {
        let before = p.stats();
        let d = dot(&s[0], &s[1], len)?;
        assert_eq!(p.stats() - before, Stats::default(), "dot is local");
        let r = to_rep3(p, &d)?;
        assert_eq!((p.stats() - before).bytes_sent, 2 * rows as u64);
        Ok((reveal(p, &d)?, reveal_rep3(p, &r)?))
    });
    let p = 65519u128;
    let want: Vec<u128> =
        (0..rows).map(|r| (0..len).map(|j| xs[r * len + j] * ys[r * len + j] % p).sum::<u128>() % p).collect();
    for (d, r) in out {
        assert_eq!(ints(&field, &d), want);
        assert_eq!(ints(&field, &r), want);
    }
}

// ---------------------------------------------------------------- TCP

#[test]
fn mul_msb_and_lift_over_tcp() {
    let field = F65519;
    let xs = values(&field, 150, 21);
    let ys = values(&field, 150, 22);
    let target = Zt::new(65519u128 << 20).unwrap();
    let out = run(Backend::Tcp, &field, &[xs.clone(), ys.clone()], Degree::One, |p, s| {
        let m = mul(p, &s[0], &s[1])?;
        let r = to_rep3(p, &s[0])?;
        let msb = msb_p(p, &r)?;
        let msb_paper = msb_p_with(p, &r, Circuit::Paper)?;
        let lifted = lift_p(p, &r, 20, &target)?;
        Ok((reveal(p, &m)?, open_bits(p, &msb)?, open_bits(p, &msb_paper)?, rep3::reveal(p, &lifted)?))
    });
    for (m, msb, msb_paper, lifted) in out {
        for k in 0..xs.len() {
            assert_eq!(m[k] as u128, xs[k] * ys[k] % 65519);
            assert_eq!(msb[k], xs[k] >> 15 == 1);
            assert_eq!(msb_paper[k], xs[k] >> 15 == 1);
        }
        assert_eq!(lifted, xs);
    }
}

// ---------------------------------------------------------------- counts

/// Per-party cost of `f` on a replicated sharing mod 65519 of `n` values.
fn cost_rep3(n: usize, f: impl Fn(&mut Party, &Rep3<F65519>) -> R<()> + Sync) -> Vec<Stats> {
    let xs = values(&F65519, n, 3);
    run_rep3(Backend::Memory, &F65519, &xs, |p, x| measured(p, |p| f(p, x)))
}

fn max_rounds(c: &[Stats]) -> u64 {
    c.iter().map(|s| s.rounds).max().unwrap()
}

#[test]
fn msb_p_paper_circuit_is_50_bits_in_35_rounds() {
    let n = 64 * 50;
    let c = cost_rep3(n, |p, x| msb_p_with(p, x, Circuit::Paper).map(|_| ()));
    for s in &c {
        // 16 input bits (reshare) + 16 adder ANDs + 17 subtractor ANDs + 1 mux AND = 3k + 2.
        assert_eq!(s.bytes_sent, 50 * n as u64 / 8);
    }
    // 1 + k + (k + 1) + 1 = 2k + 3 (party 0 counts one less: its last act before was a send, of
    // the seed setup, so its first send here does not open a round by the counter's rule).
    assert_eq!(max_rounds(&c), 35);
}

#[test]
fn msb_p_parallel_circuit_is_48_bits_in_k_plus_2_delays() {
    // Party 1 inputs 16 bits (the others send nothing for it), then 15 ANDs for the carries of
    // x01 + x2 below bit 15 and 16 for the carries of x01 + x2 - p run in the same 16 rounds,
    // then 1 mux AND: 48 = 3k bits for party 1, 32 for parties 0 and 2 (paper: 50 each).
    let n = 64 * 50;
    let c = cost_rep3(n, |p, x| msb_p(p, x).map(|_| ()));
    let bits: Vec<u64> = c.iter().map(|s| s.bytes_sent * 8 / n as u64).collect();
    assert_eq!(bits, vec![32, 48, 32]);
    // The critical path is 18 = k + 2 message delays (input hop 1 -> 2, 16 AND layers, mux); the
    // counter shows 17 because party 1 sends its first AND layer right after its input, with
    // nothing to receive in between, and party 2 first sends after receiving the input.
    assert_eq!(max_rounds(&c), 17);
    // Full decomposition: 16 + 15 + 16 + 16 mux = 63 bits at party 1, same rounds.
    let c = cost_rep3(n, |p, x| bit_extract_p(p, x, &(0..16).collect::<Vec<_>>()).map(|_| ()));
    assert_eq!(c[1].bytes_sent * 8 / n as u64, 63);
    assert_eq!(max_rounds(&c), 17);
    let c = cost_rep3(n, |p, x| bit_extract_p_with(p, x, &(0..16).collect::<Vec<_>>(), Circuit::Paper).map(|_| ()));
    assert_eq!(c[1].bytes_sent * 8 / n as u64, 16 + 16 + 17 + 16);
    assert_eq!(max_rounds(&c), 35);
}

#[test]
fn msb_mod_p_times_2_to_the_m_saves_m_gates() {
    // Paper 000 section 5.2: for t = p·2^m the low m carries of both adders coincide.
    let m = 20;
    let zt = Zt::new(65519u128 << m).unwrap();
    let n = 64 * 10;
    let xs = values(&zt, n, 4);
    let c = run_rep3(Backend::Memory, &zt, &xs, |p, x| measured(p, |p| msb_p(p, x).map(|_| ())));
    let k = 36;
    // 3k - m bits at party 1 (k input + (k - 1 - m) + k carries + 1 mux).
    assert_eq!(c[1].bytes_sent * 8 / n as u64, 3 * k - m);
    assert_eq!(max_rounds(&c), k + 1);
}

type Costs = (usize, Stats, Stats, Stats, Stats, Stats);

#[test]
fn mul_input_reveal_and_conversion_costs() {
    let field = F65519;
    let n = 64 * 7;
    let xs = values(&field, n, 8);
    let vals = els(&field, &xs);
    let out = run(Backend::Memory, &field, &[xs.clone(), xs.clone()], Degree::One, |p, s| {
        let mul_cost = measured(p, |p| mul(p, &s[0], &s[1]).map(|_| ()))?;
        let in_cost = measured(p, |p| input(p, &field, 2, (p.id() == 2).then_some(&vals[..]), n).map(|_| ()))?;
        let rev1 = measured(p, |p| reveal(p, &s[0]).map(|_| ()))?;
        let rev2 = measured(p, |p| reveal(p, &mul_local(&s[0], &s[1])?).map(|_| ()))?;
        let conv = measured(p, |p| to_rep3(p, &s[0]).map(|_| ()))?;
        Ok((p.id(), mul_cost, in_cost, rev1, rev2, conv))
    });
    let e = 2 * n as u64; // bytes of n elements of F_65519
                          // Each is one round (max over the parties: a party whose last act was a send does not open a
                          // new round with its next send).
    for pick in [|o: &Costs| o.1, |o: &Costs| o.2, |o: &Costs| o.3, |o: &Costs| o.4, |o: &Costs| o.5] {
        assert_eq!(out.iter().map(|o| pick(o).rounds).max(), Some(1));
    }
    for (id, mul_cost, in_cost, rev1, rev2, conv) in out {
        // Degree reduction through rep3: one element per value.
        assert_eq!(mul_cost.bytes_sent, e);
        // Input by party 2: one message of n elements to party 1 (party 0's point is from a seed).
        assert_eq!(in_cost.bytes_sent, if id == 2 { e } else { 0 });
        assert_eq!(rev1.bytes_sent, e);
        assert_eq!(rev2.bytes_sent, 2 * e);
        assert_eq!(conv.bytes_sent, e);
    }
}

#[test]
fn lift_p_costs() {
    let n = 64 * 10;
    let target = Zt::new(65519u128 << 20).unwrap();
    // Paper (Alg. 15): 2 extractions of 2·17 - 1 = 33 AND gates (17 full adders, 16 ripple
    // carries) in 1 + 16 rounds, then two injections into Z_2^20 (20-bit elements, packed: 2.5
    // bytes): party 0 sends 2 elements per injection, parties 1 and 2 one.
    let c = cost_rep3(n, |p, x| lift_p_with(p, x, 20, &target, Circuit::Paper).map(|_| ()));
    let nb = n as u64;
    assert_eq!(
        c.iter().map(|s| s.bytes_sent).collect::<Vec<_>>(),
        vec![66 * nb / 8 + 10 * nb, 66 * nb / 8 + 5 * nb, 66 * nb / 8 + 5 * nb]
    );
    assert_eq!(max_rounds(&c), 17 + 1);
    // Parallel: party 1 inputs 16 bits and its overflow bit (one 20-bit element), 16 AND gates for
    // the one comparison, one injection.
    let c = cost_rep3(n, |p, x| lift_p(p, x, 20, &target).map(|_| ()));
    assert_eq!(
        c.iter().map(|s| s.bytes_sent).collect::<Vec<_>>(),
        vec![2 * nb + 5 * nb, 2 * nb + 5 * nb / 2 + 2 * nb + 5 * nb / 2, 2 * nb + 5 * nb / 2]
    );
    assert_eq!(max_rounds(&c), 17);
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_input_is_a_typed_error() {
    let f = F65519;
    let mut rng = StdRng::seed_from_u64(1);
    // A client value >= p.
    let e = share_from_client(&f, &[1, 65519], &mut rng).unwrap_err();
    assert!(matches!(e, MpcError::Math(MathError::OutOfRange { index: 1, .. })), "{e}");
    assert!(share_from_client(&f, &[u16::MAX], &mut rng).is_err());
    let e = Shamir::from_parts(f, Degree::One, vec![0, 65530]).unwrap_err();
    assert!(matches!(e, MpcError::Math(MathError::OutOfRange { index: 1, .. })), "{e}");
    // p = 3 has no three distinct non-zero points.
    let f3 = Fp::new(3).unwrap();
    assert!(share_from_client(&f3, &[1], &mut rng).unwrap_err().to_string().contains("p > 3"));

    let out = run3(Backend::Memory, cfg(), |p| {
        let me = p.id();
        let d1 = Shamir::zeros(f, Degree::One, 3);
        let d2 = Shamir::zeros(f, Degree::Two, 3);
        let short = Shamir::zeros(f, Degree::One, 4);
        let (fa, fb) = (Fp::new(65521).unwrap(), Fp::new(65537).unwrap());
        let errs = vec![
            d1.add(&d2).unwrap_err(),
            d1.sub(&short).unwrap_err(),
            Shamir::zeros(fa, Degree::One, 3).add(&Shamir::zeros(fb, Degree::One, 3)).unwrap_err(),
            mul(p, &d1, &d2).unwrap_err(),
            mul(p, &d2, &d2).unwrap_err(),
            mul(p, &d1, &short).unwrap_err(),
            mul_local(&d2, &d2).unwrap_err(),
            dot(&d1, &d1, 2).unwrap_err(),
            dot(&d2, &d2, 3).unwrap_err(),
            Shamir::concat(&[&d1, &d2]).unwrap_err(),
            d1.add_public(&[1, 2]).unwrap_err(),
            input(p, &f, 3, None, 3).unwrap_err(),
            input(p, &f, me, Some(&[65519, 0, 0]), 3).unwrap_err(),
            bit_extract_p(p, &Rep3::zeros(f, 3), &[16]).unwrap_err(),
            lift_p(p, &Rep3::zeros(f, 3), 20, &Zt::pow2(36).unwrap()).unwrap_err(),
            lift_p(p, &Rep3::zeros(f, 3), 0, &Zt::new(65519).unwrap()).unwrap_err(),
            from_rep3(3, &Rep3::zeros(f, 3)).unwrap_err(),
        ];
        Ok(errs.into_iter().map(|e| e.to_string()).collect::<Vec<_>>())
    })
    .unwrap();
    let e = &out[0];
    assert!(e[0].contains("degree mismatch: 1 vs 2"), "{}", e[0]);
    assert_eq!(e[1], "length mismatch: 3 vs 4");
    assert!(e[2].contains("different rings"), "{}", e[2]);
    assert!(e[3].contains("degree mismatch"), "{}", e[3]);
    assert!(e[4].contains("needs degree-1"), "{}", e[4]);
    assert_eq!(e[5], "length mismatch: 3 vs 4");
    assert!(e[6].contains("needs degree-1"), "{}", e[6]);
    assert!(e[7].contains("rows of 2"), "{}", e[7]);
    assert!(e[8].contains("needs degree-1"), "{}", e[8]);
    assert!(e[9].contains("degree mismatch"), "{}", e[9]);
    assert!(e[10].contains("length mismatch"), "{}", e[10]);
    assert!(e[11].contains("not a party"), "{}", e[11]);
    assert!(e[12].contains("outside"), "{}", e[12]);
    assert!(e[13].contains("bit 16"), "{}", e[13]);
    assert!(e[14].contains("LiftP"), "{}", e[14]);
    assert!(e[15].contains("m >= 1"), "{}", e[15]);
    assert!(e[16].contains("not a party"), "{}", e[16]);
}

#[test]
fn debug_shows_no_shares() {
    let mut rng = StdRng::seed_from_u64(2);
    let s = share_from_client(&F65519, &[12345, 54321], &mut rng).unwrap();
    let d = format!("{:?}", s[0]);
    assert_eq!(d, "Shamir<F_65519, degree 1>[2]");
}
