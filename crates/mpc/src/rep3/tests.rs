//! rep3 against its plaintext twin: random inputs and edge cases, both backends, and the
//! paper's gate, round and byte counts.

use crate::testing::{assert_views_uniform, byte_histogram};
use argus_math::{BitVec, Ring, Zt, Z16, Z32, Z64};
use argus_net::{NetConfig, Stats};
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

use super::*;
use crate::local::{run3, Backend};
use crate::party::Party;

fn cfg() -> NetConfig {
    NetConfig::with_timeout(std::time::Duration::from_secs(20))
}

/// Client-shares `xs`, runs `f` at every party on its share, and returns party 0's output.
fn with_shares<R: Ring, T: Send>(
    backend: Backend,
    ring: &R,
    inputs: &[Vec<R::El>],
    f: impl Fn(&mut Party, Vec<Rep3<R>>) -> crate::error::Result<T> + Sync,
) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(1);
    let shares: Vec<[Rep3<R>; 3]> = inputs.iter().map(|v| share_from_client(ring, v, &mut rng)).collect();
    run3(backend, cfg(), |p| {
        let mine = shares.iter().map(|s| s[p.id()].clone()).collect();
        f(p, mine)
    })
    .unwrap()
}

fn open_bits(p: &mut Party, x: &Rep3Bits) -> crate::error::Result<Vec<bool>> {
    Ok(reveal_bits(p, x)?.to_bools())
}

/// Edge values of Z_2^64 mixed with random ones.
fn edge64(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let edges = [0, 1, u64::MAX, i64::MAX as u64, i64::MIN as u64, 2, u64::MAX - 1];
    (0..n)
        .map(|i| {
            if i < edges.len() {
                edges[i]
            } else if i % 3 == 0 {
                edges[i % edges.len()]
            } else {
                rng.gen()
            }
        })
        .collect()
}

#[test]
fn sharing_and_reveal_all_ways() {
    for backend in [Backend::Memory, Backend::Tcp] {
        let ring = Z64::new();
        let xs = edge64(50, 2);
        let out = with_shares(backend, &ring, std::slice::from_ref(&xs), |p, s| {
            let all = reveal(p, &s[0])?;
            let to2 = reveal_to(p, &s[0], 2)?;
            let from1 = input(p, &ring, 1, (p.id() == 1).then_some(&xs[..]), xs.len())?;
            let back = reveal(p, &from1)?;
            let bits = BitVec::from_bools(&xs.iter().map(|v| v & 1 == 1).collect::<Vec<_>>());
            let b = input_bits(p, 2, (p.id() == 2).then_some(&bits), bits.len())?;
            Ok((p.id(), all, to2, back, open_bits(p, &b)?, bits.to_bools()))
        });
        for (id, all, to2, back, b, want_b) in out {
            assert_eq!(all, xs);
            assert_eq!(to2.is_some(), id == 2);
            if let Some(v) = to2 {
                assert_eq!(v, xs);
            }
            assert_eq!(back, xs);
            assert_eq!(b, want_b);
        }
    }
}

/// The 64-bit MSB over batches whose thirds span several component blocks (and end inside
/// one): the slice form and the block form, whose components are made from the shares as asked
/// for (here: the shares plus a public offset, the iris comparison's shape), against the
/// plaintext.
#[test]
fn msb_of_u64_over_many_blocks_matches_plaintext() {
    let ring = Z64::new();
    for (n, k, seed) in [(3100, 36, 5), (7001, 64, 6), (2049, 33, 7)] {
        let mask = u64::MAX >> (64 - k);
        let xs: Vec<u64> = edge64(n, seed).into_iter().map(|x| x & mask).collect();
        let off = 12345u64;
        let out = with_shares(Backend::Memory, &ring, std::slice::from_ref(&xs), |p, s| {
            let slices = msb_of_u64(p, k, &s[0].a, &s[0].b, Adder::Ripple)?;
            // x + off: party 0 adds the offset to its own component, party 1 to its `b`.
            let id = p.id();
            let blocks = msb_of_u64_with(p, n, k, Adder::Ripple, |at, prev, out| {
                let (x, holder) = if prev { (&s[0].b, 1) } else { (&s[0].a, 0) };
                for (i, o) in out.iter_mut().enumerate() {
                    *o = x[at + i].wrapping_add(if id == holder { off } else { 0 });
                }
            })?;
            Ok((open_bits(p, &slices)?, open_bits(p, &blocks)?))
        });
        let top = |x: u64| (x >> (k - 1)) & 1 == 1;
        assert_eq!(out[0].0, xs.iter().map(|&x| top(x)).collect::<Vec<_>>(), "n {n}, k {k}");
        assert_eq!(out[0].1, xs.iter().map(|&x| top(x.wrapping_add(off) & mask)).collect::<Vec<_>>(), "n {n}, k {k}");
    }
}

#[test]
fn local_ops_match_plaintext() {
    let ring = Zt::new(65519 << 20).unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    let xs: Vec<u128> = (0..40).map(|_| ring.sample(&mut rng)).collect();
    let ys: Vec<u128> = (0..40).map(|_| ring.sample(&mut rng)).collect();
    let out = with_shares(Backend::Memory, &ring, &[xs.clone(), ys.clone()], |p, s| {
        let (x, y) = (&s[0], &s[1]);
        let e =
            x.add(y)?.sub(&y.mul_scalar(3))?.neg().add_scalar(p.id(), 7).add_public(p.id(), &ys)?.mul_public(&xs)?;
        reveal(p, &e)
    });
    for k in 0..40 {
        let r = &ring;
        let e = r.neg(r.sub(r.add(xs[k], ys[k]), r.mul(ys[k], 3)));
        let e = r.mul(r.add(r.add(e, 7), ys[k]), xs[k]);
        assert_eq!(out[0][k], e);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn mul_and_dot_match_plaintext(xs in proptest::collection::vec(any::<u16>(), 1..60), len in 1usize..7) {
        let ring = Z16::new();
        let n = xs.len() * len;
        let ys: Vec<u16> = (0..n).map(|i| (i as u16).wrapping_mul(40503) ^ 0x5a5a).collect();
        let xs2: Vec<u16> = (0..n).map(|i| xs[i % xs.len()].wrapping_add(i as u16)).collect();
        let out = with_shares(Backend::Memory, &ring, &[xs2.clone(), ys.clone()], |p, s| {
            let m = mul(p, &s[0], &s[1])?;
            let d = dot(p, &s[0], &s[1], len)?;
            Ok((reveal(p, &m)?, reveal(p, &d)?))
        });
        let want_m: Vec<u16> = xs2.iter().zip(&ys).map(|(a, b)| a.wrapping_mul(*b)).collect();
        let want_d: Vec<u16> = xs2.chunks(len).zip(ys.chunks(len)).map(|(a, b)| a.iter().zip(b).fold(0u16, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y)))).collect();
        prop_assert_eq!(&out[0].0, &want_m);
        prop_assert_eq!(&out[2].1, &want_d);
    }

    #[test]
    fn bit_decomposition_and_msb(seed: u64, n in 1usize..130) {
        let ring = Z32::new();
        let mut rng = StdRng::seed_from_u64(seed);
        let edges = [0u32, 1, u32::MAX, 1 << 31, (1 << 31) - 1];
        let xs: Vec<u32> = (0..n).map(|i| if i < edges.len() { edges[i] } else { rng.gen() }).collect();
        for adder in [Adder::Ripple, Adder::LogDepth] {
            let out = with_shares(Backend::Memory, &ring, std::slice::from_ref(&xs), |p, s| {
                let planes = a2b(p, &s[0], adder)?;
                let m = msb(p, &s[0], adder)?;
                let mid = bit_extract(p, &s[0], &[5, 17], adder)?;
                let opened: Vec<Vec<bool>> = planes.iter().map(|b| open_bits(p, b)).collect::<crate::error::Result<_>>()?;
                Ok((opened, open_bits(p, &m)?, open_bits(p, &mid[0])?, open_bits(p, &mid[1])?))
            });
            let (planes, m, b5, b17) = &out[1];
            for (i, &x) in xs.iter().enumerate() {
                for (j, plane) in planes.iter().enumerate() {
                    prop_assert_eq!(plane[i], (x >> j) & 1 == 1);
                }
                prop_assert_eq!(m[i], x >> 31 == 1);
                prop_assert_eq!(b5[i], (x >> 5) & 1 == 1);
                prop_assert_eq!(b17[i], (x >> 17) & 1 == 1);
            }
        }
    }

    /// The two-operand MSB against the plaintext for widths 2..64, on random values and the
    /// edges of each width, batch sizes that do not split into whole words or equal thirds.
    #[test]
    fn msb_of_matches_plaintext(seed: u64, n in 0usize..300, k in prop::sample::select(vec![2usize, 3, 16, 31, 32, 33, 63, 64])) {
        let ring = Z64::new();
        let mask = u64::MAX >> (64 - k);
        let xs: Vec<u64> = edge64(n, seed).into_iter().enumerate()
            .map(|(i, x)| match i % 7 { 1 => 1 << (k - 1), 2 => (1 << (k - 1)) - 1, 3 => mask, _ => x } & mask)
            .collect();
        for adder in [Adder::Ripple, Adder::LogDepth] {
            let out = with_shares(Backend::Memory, &ring, std::slice::from_ref(&xs), |p, s| {
                let m = msb_of(p, n, k, adder, |i| (s[0].a[i] & mask, s[0].b[i] & mask))?;
                // The slice form for k ≤ 32, given the components' high bits too (it ignores them).
                let m32 = if k <= 32 {
                    let (a, b): (Vec<u32>, Vec<u32>) = s[0].a.iter().zip(&s[0].b).map(|(&a, &b)| (a as u32, b as u32)).unzip();
                    let m32 = msb_of_u32(p, k, &a, &b, adder)?;
                    Some(open_bits(p, &m32)?)
                } else {
                    None
                };
                // The 64-bit slice form, every width (also given the high bits).
                let m64 = msb_of_u64(p, k, &s[0].a, &s[0].b, adder)?;
                Ok((open_bits(p, &m)?, m32, open_bits(p, &m64)?))
            });
            let want: Vec<bool> = xs.iter().map(|&x| (x >> (k - 1)) & 1 == 1).collect();
            for (o, o32, o64) in &out {
                prop_assert_eq!(o, &want);
                prop_assert_eq!(o64, &want);
                if let Some(o32) = o32 {
                    prop_assert_eq!(o32, &want);
                }
            }
        }
    }

    #[test]
    fn signed_less_than(seed: u64, n in 1usize..80) {
        let ring = Z64::new();
        let xs = edge64(n, seed);
        let ys = edge64(n, seed.wrapping_add(1)).into_iter().rev().collect::<Vec<_>>();
        for adder in [Adder::Ripple, Adder::LogDepth] {
            let out = with_shares(Backend::Memory, &ring, &[xs.clone(), ys.clone()], |p, s| {
                let l = lt(p, &s[0], &s[1], adder)?;
                open_bits(p, &l)
            });
            for i in 0..n {
                prop_assert_eq!(out[0][i], (xs[i] as i64) < (ys[i] as i64), "{} < {}", xs[i] as i64, ys[i] as i64);
            }
        }
    }

    #[test]
    fn inject_lift_mux_or(seed: u64, n in 1usize..100, groups in 1usize..5) {
        let mut rng = StdRng::seed_from_u64(seed);
        let ring = Z16::new();
        let xs: Vec<u16> = (0..n).map(|i| match i { 0 => 0, 1 => u16::MAX, 2 => 1 << 15, _ => rng.gen() }).collect();
        let ys: Vec<u16> = (0..n).map(|_| rng.gen()).collect();
        let big = Zt::pow2(36).unwrap();
        let bits: Vec<bool> = (0..n * groups).map(|i| rng.gen_bool(if i % 7 == 0 { 0.5 } else { 0.02 })).collect();
        let bitv = BitVec::from_bools(&bits);
        let cbits = BitVec::from_bools(&(0..n).map(|_| rng.gen()).collect::<Vec<bool>>());
        let mut crng = StdRng::seed_from_u64(seed ^ 9);
        let bshares = share_bits_from_client(&bitv, &mut crng);
        let cshares = share_bits_from_client(&cbits, &mut crng);
        let out = with_shares(Backend::Memory, &ring, &[xs.clone(), ys.clone()], |p, s| {
            let me = p.id();
            let inj = bit_inject(p, &cshares[me], &Z64::new())?;
            let l36 = lift(p, &s[0], &big, Adder::Ripple)?;
            let l32 = lift(p, &s[0], &Z32::new(), Adder::LogDepth)?;
            let cl = const_lift(&s[0], 1 << 20, &big)?;
            let mx = mux(p, &cshares[me], &s[0], &s[1])?;
            let mb = mux_bits(p, &cshares[me], &cshares[me].not(me), &cshares[me])?;
            let ors = or_tree(p, &bshares[me], groups)?;
            Ok((reveal(p, &inj)?, reveal(p, &l36)?, reveal(p, &l32)?, reveal(p, &cl)?, reveal(p, &mx)?, open_bits(p, &mb)?, open_bits(p, &ors)?))
        });
        let (inj, l36, l32, cl, mx, mb, ors) = &out[0];
        for i in 0..n {
            let c = cbits.get(i);
            prop_assert_eq!(inj[i], c as u64);
            prop_assert_eq!(l36[i], xs[i] as u128);
            prop_assert_eq!(l32[i], xs[i] as u32);
            prop_assert_eq!(cl[i], (xs[i] as u128) << 20);
            prop_assert_eq!(mx[i], if c { xs[i] } else { ys[i] });
            prop_assert!(!mb[i], "c ? !c : c is always false");
        }
        for g in 0..groups {
            let want = (0..n).any(|e| bits[e * groups + g]);
            prop_assert_eq!(ors[g], want);
        }
    }
}

#[test]
fn three_party_ot_delivers_chosen_message() {
    let ring = Z32::new();
    let m0: Vec<u32> = (0..100).collect();
    let m1: Vec<u32> = (0..100).map(|i| 1000 + i).collect();
    let c = BitVec::from_bools(&(0..100).map(|i| i % 3 == 0).collect::<Vec<_>>());
    for sender in 0..3 {
        let out = run3(Backend::Memory, cfg(), |p| {
            let role = (p.id() + 3 - sender) % 3;
            three_party_ot(p, &ring, sender, (role == 0).then_some((&m0[..], &m1[..])), (role != 0).then_some(&c), 100)
        })
        .unwrap();
        for (id, o) in out.into_iter().enumerate() {
            assert_eq!(o.is_some(), id == (sender + 1) % 3);
            if let Some(v) = o {
                assert!((0..100).all(|i| v[i] == if c.get(i) { m1[i] } else { m0[i] }));
            }
        }
    }
}

/// Bytes and rounds a party spends in `f`, maximised over the parties.
fn cost(backend: Backend, n: usize, f: impl Fn(&mut Party, &Rep3<Z16>) -> crate::error::Result<()> + Sync) -> Stats {
    let ring = Z16::new();
    let xs: Vec<u16> = (0..n as u32).map(|i| (i * 7919) as u16).collect();
    let per = with_shares(backend, &ring, &[xs], |p, s| {
        let before = p.stats();
        f(p, &s[0])?;
        Ok(p.stats() - before)
    });
    per.into_iter().fold(Stats::default(), |m, s| Stats {
        bytes_sent: m.bytes_sent.max(s.bytes_sent),
        bytes_received: m.bytes_received.max(s.bytes_received),
        messages_sent: m.messages_sent.max(s.messages_sent),
        rounds: m.rounds.max(s.rounds),
    })
}

#[test]
fn msb16_ripple_is_29_and_gates_in_15_rounds() {
    let n = 64 * 100;
    for backend in [Backend::Memory, Backend::Tcp] {
        let c = cost(backend, n, |p, x| msb(p, x, Adder::Ripple).map(|_| ()));
        assert_eq!(c.rounds, 15);
        assert_eq!(c.bytes_sent, 29 * n as u64 / 8, "29 AND gates per value, one bit each");
    }
    // Full decomposition: 2k - 3 gates in k - 1 rounds (paper 000 section 5.2).
    let c = cost(Backend::Memory, n, |p, x| a2b(p, x, Adder::Ripple).map(|_| ()));
    assert_eq!((c.rounds, c.bytes_sent), (15, 29 * n as u64 / 8));
    // The log-depth adder trades gates for rounds: 1 (full adders) + 1 (generate) + 4 levels.
    let c = cost(Backend::Memory, n, |p, x| msb(p, x, Adder::LogDepth).map(|_| ()));
    assert_eq!(c.rounds, 6);
}

/// The two-operand MSB of a k-bit value: k − 1 AND gates in k rounds (one for sharing the sum
/// of two components), and k bits for a third of the values; per party at most
/// `(k − 1)·n + k·⌈n/3⌉` bits (thirds are whole words of 64 values).
#[test]
fn msb_of_costs_k_minus_1_gates_in_k_rounds() {
    let n = 64 * 99;
    for backend in [Backend::Memory, Backend::Tcp] {
        let c = cost(backend, n, |p, x| msb_two_operand(p, x, Adder::Ripple).map(|_| ()));
        assert_eq!(c.rounds, 16);
        assert_eq!(c.bytes_sent, (15 * n / 8 + 16 * (n / 3) / 8) as u64, "15 AND gates per value, 16 bits per third");
    }
}

/// The same MSB with the Kogge-Stone adder, pruned to the one carry it needs (into bit 15, the
/// prefix G over bits 0..14): 15 generate gates, then levels d = 1, 2, 4, 8 with 14, 7, 3 and 1
/// gates (the G and P nodes that carry depends on) — 40 gates in 1 + 4 rounds, plus the sharing
/// round: 6 rounds instead of 16 for 40 gates instead of 15.
#[test]
fn msb_of_log_depth_costs_40_gates_in_6_rounds() {
    let n = 64 * 99;
    let c = cost(Backend::Memory, n, |p, x| msb_two_operand(p, x, Adder::LogDepth).map(|_| ()));
    assert_eq!(c.rounds, 6);
    assert_eq!(c.bytes_sent, (40 * n / 8 + 16 * (n / 3) / 8) as u64, "40 AND gates per value, 16 bits per third");
}

#[test]
fn dot_product_costs_one_multiplication_whatever_the_length() {
    let rows = 64;
    let mul_cost = cost(Backend::Memory, rows, |p, x| mul(p, x, x).map(|_| ()));
    for len in [1, 10, 1000] {
        let c = cost(Backend::Memory, rows * len, |p, x| dot(p, x, x, len).map(|_| ()));
        assert_eq!((c.bytes_sent, c.rounds), (mul_cost.bytes_sent, mul_cost.rounds));
    }
    assert_eq!((mul_cost.bytes_sent, mul_cost.rounds), (2 * rows as u64, 1));
}

#[test]
fn bit_injection_and_lift_costs() {
    let n = 64 * 10;
    // Bit injection into Z_2^16: party 0 sends 2 elements, party 2 one, party 1 one; two rounds.
    let c = cost(Backend::Memory, n, |p, x| {
        let b = msb(p, x, Adder::Ripple)?;
        let before = p.stats();
        bit_inject(p, &b, &Z16::new())?;
        let used = p.stats() - before;
        let want = if p.id() == 0 { 4 * n as u64 } else { 2 * n as u64 };
        assert_eq!(used.bytes_sent, want, "party {}", p.id());
        Ok(())
    });
    assert!(c.rounds > 0);
    // Lift Z_2^16 -> Z_2^36: 2k = 32 AND gates in k + 1 = 17 rounds, then the bit injections.
    // Their two hops (OT to party 1, party 1 forwards to party 2) count as one round per party:
    // each party sends once in them (the counter counts a party's sends after a receive).
    let c = cost(Backend::Memory, n, |p, x| lift(p, x, &Zt::pow2(36).unwrap(), Adder::Ripple).map(|_| ()));
    assert_eq!(c.rounds, 17 + 1);
    // Party 0 sends most: 32 gates, then two packed elements per injection (20 and 19 bits).
    assert_eq!(c.bytes_sent, (32 * n / 8 + (2 * n * 20).div_ceil(8) + (2 * n * 19).div_ceil(8)) as u64);
    // Z_2^16 -> Z_2^32 (the iris case): both bits go into Z_2^16 machine words, one bit more for
    // b_{k+1} than Z_2^15 would take.
    let c = cost(Backend::Memory, n, |p, x| lift(p, x, &Z32::new(), Adder::Ripple).map(|_| ()));
    assert_eq!(c.rounds, 17 + 1);
    assert_eq!(c.bytes_sent, (32 * n / 8 + 2 * 2 * n * 2) as u64);
}

/// `lift_small` against the plaintext on values below 2^{k−1}: edge values (0, 1, the largest
/// allowed, 2^{k−2} on either side: bit k − 2 set and clear), random ones, batch sizes that do
/// not split into equal thirds, machine-word and packed target rings.
#[test]
fn lift_small_is_exact_below_half_the_ring() {
    let mut rng = StdRng::seed_from_u64(17);
    for n in [1usize, 2, 3, 4, 6, 100, 1001] {
        let edges = [(1 << 15) - 1, 0, 1, 1 << 14, (1 << 14) - 1, (1 << 14) + 1];
        let xs: Vec<u16> = (0..n).map(|i| if i < edges.len() { edges[i] } else { rng.gen_range(0..1 << 15) }).collect();
        let small: Vec<u8> = xs.iter().map(|&x| (x % 128) as u8).collect();
        for backend in [Backend::Memory, Backend::Tcp] {
            let out = with_shares(backend, &Z16::new(), std::slice::from_ref(&xs), |p, s| {
                let l32 = lift_small(p, &s[0], &Z32::new())?;
                let l36 = lift_small(p, &s[0], &Zt::pow2(36).unwrap())?;
                Ok((reveal(p, &l32)?, reveal(p, &l36)?))
            });
            let (l32, l36) = &out[0];
            for i in 0..n {
                assert_eq!((l32[i], l36[i]), (u32::from(xs[i]), u128::from(xs[i])), "n {n}, value {}", xs[i]);
            }
        }
        let out = with_shares(Backend::Memory, &argus_math::Z8::new(), std::slice::from_ref(&small), |p, s| {
            let l = lift_small(p, &s[0], &Z16::new())?;
            reveal(p, &l)
        });
        assert_eq!(out[0], small.iter().map(|&x| u16::from(x)).collect::<Vec<_>>());
    }
}

/// `lift_small` costs 2 rounds, and every party sends 2 elements of Z_2^m per value: four OT
/// messages for each value of its third, one mask per value of the next, one forward per value
/// of the previous.
#[test]
fn lift_small_costs_two_rounds_and_two_elements_per_party() {
    let n = 64 * 30;
    for backend in [Backend::Memory, Backend::Tcp] {
        // The cost does not depend on the values (these exceed the bound).
        let c = cost(backend, n, |p, x| {
            let before = p.stats();
            lift_small(p, x, &Z32::new())?;
            let used = p.stats() - before;
            assert_eq!(used.bytes_sent, 2 * 2 * n as u64, "party {}", p.id());
            Ok(())
        });
        assert_eq!(c.rounds, 2);
    }
}

/// The one-round carry count as the input of a two-operand MSB (MPCLift's pattern): for `x <
/// 2^15` in Z_2^16, components `v_i = c·x_i − 2^16·c·j_i` mod 2^24 sum to `c·x`, whose bit 23 the
/// MSB opens — against the plaintext for both adders. Against the two-round carry count it saves
/// exactly one round and the forward, `n/3` elements of Z_2^16 per party.
#[test]
fn carry_count_for_msb_feeds_the_msb_in_one_round() {
    let mut rng = StdRng::seed_from_u64(23);
    let n = 64 * 30 + 7; // thirds of whole words, the last one longer
    let xs: Vec<u16> =
        (0..n).map(|i| if i < 4 { [0, 1, 1 << 14, (1 << 15) - 1][i] } else { rng.gen_range(0..1 << 15) }).collect();
    let c = 1000u32;
    let want: Vec<bool> = xs.iter().map(|&x| (c * u32::from(x)) >> 23 & 1 == 1).collect();
    assert!(want.iter().any(|&b| b) && want.iter().any(|&b| !b), "both outcomes drawn");
    for adder in [Adder::Ripple, Adder::LogDepth] {
        let out = with_shares(Backend::Memory, &Z16::new(), std::slice::from_ref(&xs), |p, s| {
            let x = &s[0];
            let v = |xc: &[u16], jc: &[u16]| -> Vec<u32> {
                xc.iter()
                    .zip(jc)
                    .map(|(&x, &j)| c.wrapping_mul(x.into()).wrapping_sub(c.wrapping_mul(j.into()) << 16))
                    .collect()
            };
            let mut run = |fused: bool| -> crate::error::Result<(Vec<bool>, Stats)> {
                let before = p.stats();
                let j =
                    if fused { carry_count_for_msb(p, x, &Z16::new())? } else { carry_count_small(p, x, &Z16::new())? };
                let m = msb_of_u32(p, 24, &v(&x.a, &j.a), &v(&x.b, &j.b), adder)?;
                let used = p.stats() - before;
                Ok((open_bits(p, &m)?, used))
            };
            Ok((run(true)?, run(false)?))
        });
        // The busiest party's rounds (one whose set-up ended on a send counts one fewer).
        let busiest = |full: bool| out.iter().map(|(f, g)| if full { g.1.rounds } else { f.1.rounds }).max();
        assert_eq!(busiest(false).map(|r| r + 1), busiest(true), "{adder:?}");
        for (id, ((fused, f), (full, g))) in out.iter().enumerate() {
            assert_eq!(fused, &want, "{adder:?}");
            assert_eq!(full, &want, "{adder:?}");
            // The forward: the receiver's y, one element per value of the third before its own.
            assert_eq!(g.bytes_sent - f.bytes_sent, 2 * third(n, (id + 2) % 3).len() as u64, "{adder:?}, party {id}");
        }
    }
}

/// Additive sharings reshared in one message for each use: a value for an MSB only (its MSB
/// opens the plaintext's top bit), one for a full sharing (it opens to the values), and a mask
/// product for the carry count and then the MSB (MPCLift's pattern with `c·x`, opening bit 23 of
/// `c·x` for `x < 2^15`). Each party sends `n − |t|` elements for the first, `n` for the second
/// and `n − |t|` elements plus `⌈|t|/4⌉` bytes for the third, `t` being the third where it is
/// the MSB's adder.
#[test]
fn a_reshare_for_the_msb_sends_two_thirds() {
    let mut rng = StdRng::seed_from_u64(29);
    for n in [0usize, 1, 5, 64 * 30 + 7] {
        let xs: Vec<u16> = (0..n).map(|i| if i < 3 { [0, u16::MAX, 1 << 15][i] } else { rng.gen() }).collect();
        let ys: Vec<u16> = (0..n).map(|_| rng.gen()).collect();
        let ms: Vec<u16> =
            (0..n).map(|i| if i < 2 { [0, (1 << 15) - 1][i] } else { rng.gen_range(0..1 << 15) }).collect();
        let c = 1000u32;
        for adder in [Adder::Ripple, Adder::LogDepth] {
            let out = run3(Backend::Memory, cfg(), |p| {
                // Additive shares: party 0 holds the values, the others zeros.
                let mine = |v: &[u16]| if p.id() == 0 { v.to_vec() } else { vec![0; n] };
                let before = p.stats();
                let uses = [ReshareFor::Msb, ReshareFor::Any, ReshareFor::CarryCountThenMsb];
                let [x, y, m]: [Rep3<Z16>; 3] =
                    reshare_parts_for(p, &Z16::new(), vec![mine(&xs), mine(&ys), mine(&ms)], &uses)?
                        .try_into()
                        .unwrap();
                let sent = (p.stats() - before).bytes_sent;
                let top = msb_two_operand(p, &x, adder)?;
                let j = carry_count_for_msb(p, &m, &Z16::new())?;
                let v = |mc: &[u16], jc: &[u16]| -> Vec<u32> {
                    mc.iter()
                        .zip(jc)
                        .map(|(&x, &j)| c.wrapping_mul(x.into()).wrapping_sub(c.wrapping_mul(j.into()) << 16))
                        .collect()
                };
                let bit23 = msb_of_u32(p, 24, &v(&m.a, &j.a), &v(&m.b, &j.b), adder)?;
                Ok((open_bits(p, &top)?, reveal(p, &y)?, open_bits(p, &bit23)?, sent))
            })
            .unwrap();
            let want_top: Vec<bool> = xs.iter().map(|&x| x >> 15 == 1).collect();
            let want_23: Vec<bool> = ms.iter().map(|&x| (c * u32::from(x)) >> 23 & 1 == 1).collect();
            for (id, (top, y, bit23, sent)) in out.iter().enumerate() {
                assert_eq!(top, &want_top, "n {n}");
                assert_eq!(y, &ys, "n {n}");
                assert_eq!(bit23, &want_23, "n {n}, {adder:?}");
                let t = third(n, (id + 2) % 3).len();
                assert_eq!(*sent as usize, 2 * (n - t) + 2 * n + 2 * (n - t) + t.div_ceil(4), "n {n}, party {id}");
            }
        }
    }
}

/// Outside its precondition `lift_small` is wrong, which is why callers check the bound (the
/// iris mask products stay below 2^15 for codes below 2^15 bits).
#[test]
fn lift_small_needs_its_bound() {
    let xs: Vec<u16> = (0..300).map(|i| u16::MAX - i).collect();
    let out = with_shares(Backend::Memory, &Z16::new(), std::slice::from_ref(&xs), |p, s| {
        let l = lift_small(p, &s[0], &Z32::new())?;
        reveal(p, &l)
    });
    let wrong = out[0].iter().zip(&xs).filter(|&(&v, &x)| v != u32::from(x)).count();
    assert!(wrong > 100, "{wrong} of 300 wrong");
}

#[test]
fn bad_input_is_a_typed_error() {
    let out = run3(Backend::Memory, cfg(), |p| {
        let a = Rep3::zeros(Z16::new(), 3);
        let b = Rep3::zeros(Z16::new(), 4);
        let e1 = mul(p, &a, &b).unwrap_err();
        let t = Rep3::zeros(Zt::new(7).unwrap(), 3);
        let t2 = Rep3::zeros(Zt::new(11).unwrap(), 3);
        let e2 = t.add(&t2).unwrap_err();
        let e3 = msb(p, &t, Adder::Ripple).unwrap_err();
        let e4 = dot(p, &b, &b, 3).unwrap_err();
        let e5 = lift(p, &a, &Zt::new(100).unwrap(), Adder::Ripple).unwrap_err();
        let e6 = Rep3::from_parts(Z16::new(), vec![1], vec![]).unwrap_err();
        Ok([e1, e2, e3, e4, e5, e6].map(|e| e.to_string()))
    })
    .unwrap();
    let e = &out[0];
    assert_eq!(e[0], "length mismatch: 3 vs 4");
    assert!(e[1].contains("different rings"), "{}", e[1]);
    assert!(e[2].contains("needs Z_2^k"), "{}", e[2]);
    assert!(e[3].contains("rows of 3"), "{}", e[3]);
    assert!(e[4].contains("Z_2^k"), "{}", e[4]);
    assert!(e[5].contains("length mismatch"));
    // A session of the wrong size is refused before any protocol runs.
    let errs = crate::local::run(2, Backend::Memory, cfg(), |p| Ok(p.require("rep3", 3).unwrap_err())).unwrap();
    assert!(errs[0].to_string().contains("rep3 needs 3 parties, the session has 2"), "{}", errs[0]);
}

#[test]
fn lemma_bounds() {
    assert!(lemma1(12800, 1 << 16).is_ok());
    assert!(lemma1(16384, 1 << 16).is_err()); // l = t/4 is not < t/4
    assert!(lemma1(12800, 65519).is_ok());
    assert!(lemma2(12800, 1 << 20, 1 << 36).is_ok());
    assert!(lemma2(12800, 1 << 20, 1 << 35).is_err());
    assert!(lemma2(12800, 1 << 20, 65519u128 << 20).is_ok());
}

/// The exact sign test agrees with reducing every value of the range and reading its MSB, over
/// powers of two and other moduli, at the edges of each range.
#[test]
fn msb_is_sign_is_exact() {
    let msb = |v: i128, t: u128| {
        let k = 128 - (t - 1).leading_zeros();
        (v.rem_euclid(t as i128) as u128 >> (k - 1)) & 1 == 1
    };
    // Ranges of fewer than t values inside (−t, t), where reducing loses nothing.
    for t in [2u128, 3, 4, 5, 7, 8, 12, 16, 17, 31, 32, 33, 100] {
        let t1 = t as i128 - 1;
        for lo in -t1..=t1 {
            for hi in lo..=t1.min(lo + t1) {
                let sign = (lo..=hi).all(|v| msb(v, t) == (v < 0));
                assert_eq!(msb_is_sign(lo, hi, t).is_ok(), sign, "[{lo}, {hi}] over Z_{t}");
            }
        }
    }
    assert_eq!(msb_ring_bits(-(1 << 29), (1 << 29) - 1), Some(30));
    assert_eq!(msb_ring_bits(-(1 << 29) - 1, 0), Some(31));
    assert_eq!(msb_ring_bits(0, 1 << 29), Some(31));
    assert_eq!(msb_ring_bits(0, 0), Some(1));
    assert_eq!(msb_ring_bits(-1, 0), Some(1));
    assert_eq!(msb_ring_bits(0, i128::MAX), None);
    assert!(msb_is_sign(1, 0, 8).is_err());
    // Lemma 2's slack: open-iris codes under the default threshold need Z_2^33 by the lemma, 30
    // bits by their range (a = 5079, b = 2^14 after reduction: [(a − b)·l, (a + b)·l]).
    assert!(lemma2(16384, 1 << 14, 1 << 30).is_err());
    assert_eq!(msb_ring_bits((5079 - 16384) * 16384, (5079 + 16384) * 16384), Some(30));
}

/// Byte histogram of everything party `id` received while running `f` on shares of `xs`.
fn view_histogram(
    xs: Vec<u16>,
    id: usize,
    f: impl Fn(&mut Party, &Rep3<Z16>) -> crate::error::Result<()> + Sync,
) -> [f64; 256] {
    let views = with_shares(Backend::Memory, &Z16::new(), &[xs], |p, s| {
        p.net().record_view();
        f(p, &s[0])?;
        Ok(p.net().take_view())
    });
    byte_histogram(&views[id])
}

/// What a party receives in multiplication, bit decomposition and the small-value lift looks uniform and is the
/// same whatever the inputs (all zero, all ones, random). With 255 degrees of freedom the
/// statistic has mean 255 and standard deviation 22.6; 380 is more than 5 deviations out.
#[test]
fn views_are_independent_of_inputs() {
    let n = 1 << 15;
    let mut rng = StdRng::seed_from_u64(11);
    let inputs = [vec![0u16; n], vec![u16::MAX; n], (0..n).map(|_| rng.gen()).collect::<Vec<u16>>()];
    type Op = fn(&mut Party, &Rep3<Z16>) -> crate::error::Result<()>;
    let ops: [(&str, Op); 5] = [
        ("mul", |p, x| mul(p, x, x).map(|_| ())),
        ("bit decomposition", |p, x| a2b(p, &x.slice(0, 1 << 13)?, Adder::Ripple).map(|_| ())),
        // Its masks do not depend on the bound, so inputs above it test the view as well.
        ("lift_small", |p, x| lift_small(p, x, &Z32::new()).map(|_| ())),
        ("two-operand msb", |p, x| msb_two_operand(p, &x.slice(0, 1 << 13)?, Adder::Ripple).map(|_| ())),
        ("two-operand msb, log depth", |p, x| msb_two_operand(p, &x.slice(0, 1 << 13)?, Adder::LogDepth).map(|_| ())),
    ];
    for (name, op) in ops {
        for id in 0..3 {
            let hs: Vec<[f64; 256]> = inputs.iter().map(|xs| view_histogram(xs.clone(), id, op)).collect();
            assert_views_uniform(name, id, &hs);
        }
    }
}

/// Every rep3 protocol once more over TCP with mutual TLS, on random values plus edge cases.
#[test]
fn all_protocols_over_tcp() {
    let mut rng = StdRng::seed_from_u64(99);
    let n = 300;
    let x64 = edge64(n, 5);
    let y64: Vec<u64> = edge64(n, 6).into_iter().rev().collect();
    let x16: Vec<u16> = (0..n).map(|i| if i < 3 { [0, 1, u16::MAX][i] } else { rng.gen() }).collect();
    let bits = BitVec::from_bools(&(0..n).map(|i| i == 7).collect::<Vec<_>>());
    let mut crng = StdRng::seed_from_u64(3);
    let s64 = [share_from_client(&Z64::new(), &x64, &mut crng), share_from_client(&Z64::new(), &y64, &mut crng)];
    let s16 = share_from_client(&Z16::new(), &x16, &mut crng);
    let sb = share_bits_from_client(&bits, &mut crng);
    let out = run3(Backend::Tcp, cfg(), |p| {
        let me = p.id();
        let (x, y, h) = (&s64[0][me], &s64[1][me], &s16[me]);
        let m = mul(p, x, y)?;
        let d = dot(p, x, y, 3)?;
        let l = lt(p, x, y, Adder::LogDepth)?;
        let planes = a2b(p, h, Adder::Ripple)?;
        let inj = bit_inject(p, &planes[15], &Z64::new())?;
        let lf = lift(p, h, &Zt::pow2(40).unwrap(), Adder::LogDepth)?;
        let mx = mux(p, &l, x, y)?;
        let or = or_tree(p, &sb[me], 1)?;
        Ok((
            reveal(p, &m)?,
            reveal(p, &d)?,
            reveal_bits(p, &l)?.to_bools(),
            reveal(p, &inj)?,
            reveal(p, &lf)?,
            reveal(p, &mx)?,
            reveal_bits(p, &or)?.to_bools(),
        ))
    })
    .unwrap();
    let (m, d, l, inj, lf, mx, or) = &out[2];
    for i in 0..n {
        assert_eq!(m[i], x64[i].wrapping_mul(y64[i]));
        let less = (x64[i] as i64) < (y64[i] as i64);
        assert_eq!(l[i], less);
        assert_eq!(inj[i], (x16[i] >> 15) as u64);
        assert_eq!(lf[i], x16[i] as u128);
        assert_eq!(mx[i], if less { x64[i] } else { y64[i] });
    }
    for (r, want) in d.iter().zip(x64.chunks(3).zip(y64.chunks(3))) {
        assert_eq!(*r, want.0.iter().zip(want.1).fold(0u64, |s, (a, b)| s.wrapping_add(a.wrapping_mul(*b))));
    }
    assert_eq!(or, &vec![true]);
}

/// Queries × database on shares (rep3 over Z_2^16 and Shamir over F_65519) equals the plaintext
/// matrix product, and communication is one element per product whatever the row length.
#[test]
fn matrix_products_match_plaintext() {
    use argus_math::F65519;
    let mut rng = StdRng::seed_from_u64(21);
    for (q, s, len) in [(1, 1, 1), (3, 5, 17), (4, 70, 12800), (9, 3, 100)] {
        let xs: Vec<u16> = (0..q * len).map(|_| rng.gen_range(0..3u16).wrapping_sub(1)).collect();
        let ys: Vec<u16> = (0..s * len).map(|_| rng.gen()).collect();
        let want: Vec<u16> =
            (0..q * s).map(|k| Z16::new().dot(&xs[(k / s) * len..][..len], &ys[(k % s) * len..][..len])).collect();
        let out = with_shares(Backend::Memory, &Z16::new(), &[xs.clone(), ys.clone()], |p, sh| {
            let before = p.stats();
            let z = matmul(p, &Rep3Pre::new(&sh[0]), &Rep3Pre::new(&sh[1]), len)?;
            let used = p.stats() - before;
            Ok((reveal(p, &z)?, used.bytes_sent))
        });
        assert_eq!(out[0].0, want, "rep3 {q}x{s}x{len}");
        assert_eq!(out[0].1, 2 * (q * s) as u64, "one 16-bit element per product");

        let f = F65519;
        let fx: Vec<u16> = xs.iter().map(|&v| f.from_i128(v as i16 as i128)).collect();
        let fy: Vec<u16> = ys.iter().map(|&v| v % F65519::P).collect();
        let fwant: Vec<u16> =
            (0..q * s).map(|k| f.dot(&fx[(k / s) * len..][..len], &fy[(k % s) * len..][..len])).collect();
        let mut crng = StdRng::seed_from_u64(5);
        let sx = crate::shamir::share_from_client(&f, &fx, &mut crng).unwrap();
        let sy = crate::shamir::share_from_client(&f, &fy, &mut crng).unwrap();
        let got = run3(Backend::Memory, cfg(), |p| {
            let d = crate::shamir::matmul(&sx[p.id()], &sy[p.id()], len)?;
            crate::shamir::reveal(p, &d)
        })
        .unwrap();
        assert_eq!(got[1], fwant, "shamir {q}x{s}x{len}");
    }
    let bad = Rep3Pre::new(&Rep3::zeros(Z16::new(), 10));
    let out = run3(Backend::Memory, cfg(), |p| Ok(matmul(p, &bad, &bad, 3).unwrap_err().to_string())).unwrap();
    assert!(out[0].contains("rows of 3"));
}

/// Resharing several additive sharings in one message gives each its own replicated sharing
/// of the sums, in one round and the bytes of each part's wire form (packed rings included:
/// every part is packed on its own).
#[test]
fn reshare_parts_opens_to_the_sums_in_one_round() {
    fn check<R: Ring>(ring: R, lens: &[usize]) {
        let add = |p: usize, len: usize| -> Vec<R::El> {
            let mut rng = StdRng::seed_from_u64(10 * p as u64 + len as u64);
            ring.sample_vec(&mut rng, len)
        };
        let sums: Vec<Vec<R::El>> = lens
            .iter()
            .map(|&n| (0..n).map(|i| (0..3).fold(ring.zero(), |s, p| ring.add(s, add(p, n)[i]))).collect())
            .collect();
        let out = run3(Backend::Memory, cfg(), |p| {
            let mine: Vec<Vec<R::El>> = lens.iter().map(|&n| add(p.id(), n)).collect();
            let before = p.stats();
            let shared = reshare_parts(p, &ring, mine)?;
            let opened: Vec<Vec<R::El>> = shared.iter().map(|s| reveal(p, s)).collect::<crate::error::Result<_>>()?;
            Ok((p.stats() - before, opened))
        })
        .unwrap();
        let bytes: usize = lens.iter().map(|&n| ring.wire_len(n)).sum();
        // One round for the reshare and one per reveal (maximised over the parties, as a party
        // whose last act before was a send counts its first round late); each reveal sends its
        // part once more.
        let rounds = out.iter().map(|(spent, _)| spent.rounds).max();
        assert_eq!(rounds, Some(1 + lens.len() as u64));
        for (spent, opened) in out {
            assert_eq!(spent.bytes_sent, 2 * bytes as u64);
            assert_eq!(opened, sums);
        }
    }
    check(Z16::new(), &[0, 1, 1000, 7]);
    check(Zt::pow2(36).unwrap(), &[3, 5]);
    check(Zt::new(65519).unwrap(), &[64]);
}

/// The round time the parties measure is the links' one-way delay, on both backends, and all
/// three get party 0's figure. (Only a lower bound is asserted: a busy machine only adds.)
#[test]
fn the_parties_agree_on_their_round_time() {
    use std::time::Duration;
    let delay = Duration::from_millis(20);
    let shaped =
        NetConfig { shaper: Some(argus_net::Shaper { latency: delay, bandwidth_bytes_per_sec: None }), ..cfg() };
    let runs = [(Backend::Memory, shaped.clone(), true), (Backend::Tcp, shaped, true), (Backend::Memory, cfg(), false)];
    for (backend, net, slow) in runs {
        let out = run3(backend, net, |p| p.round_time(5)).unwrap();
        assert!(out.iter().all(|&t| t == out[0]), "{out:?}");
        let t = out[0];
        assert!(!slow || t >= delay, "{t:?}");
        assert!(t < Duration::from_secs(1), "{t:?}");
    }
}
