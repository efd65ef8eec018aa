use argus_math::{Fp, Ring, Z32, Z64};
use argus_net::NetConfig;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng};

use super::*;
use crate::local::{run, Backend};

/// Row-major `A·B` in the clear: the plaintext twin.
fn twin<R: Ring>(ring: &R, a: &[R::El], b: &[R::El], (m, k, n): (usize, usize, usize)) -> Vec<R::El> {
    (0..m * n)
        .map(|x| (0..k).fold(ring.zero(), |acc, l| ring.add(acc, ring.mul(a[x / n * k + l], b[l * n + x % n]))))
        .collect()
}

/// An empty message each way, so that the next send opens a round for both parties.
fn sync(p: &mut crate::party::Party) {
    exchange(&Z32::new(), p, &[]).unwrap();
}

fn add<R: Ring>(ring: &R, x: &[R::El], y: &[R::El]) -> Vec<R::El> {
    x.iter().zip(y).map(|(&a, &b)| ring.add(a, b)).collect()
}

/// The largest element, 1, −1, 0 and random ones: the edge cases of a ring.
fn values<R: Ring>(ring: &R, rng: &mut StdRng, n: usize) -> Vec<R::El> {
    let edges =
        [ring.zero(), ring.one(), ring.neg(ring.one()), ring.from_u128(ring.to_u128(ring.neg(ring.one())) / 2 + 1)];
    let mut v = ring.sample_vec(rng, n);
    for (x, e) in v.iter_mut().zip(edges) {
        *x = e;
    }
    v
}

/// Triples made by two parties (Gilboa's or the silent VOLE): each party's shares.
fn triples<R: Ring>(ring: &R, m: usize, n: usize, count: usize, quiet: bool) -> Vec<Vec<TensorTriple<R::El>>> {
    run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        if quiet {
            generate_silent(ring, p, &mut ots, m, n, count)
        } else {
            generate(ring, p, &mut ots, m, n, count)
        }
    })
    .unwrap()
}

fn check_triples<R: Ring>(ring: &R, m: usize, n: usize) {
    for quiet in [false, true] {
        check_triples_from(ring, m, n, quiet);
    }
}

fn check_triples_from<R: Ring>(ring: &R, m: usize, n: usize, quiet: bool) {
    let got = triples(ring, m, n, 3, quiet);
    for (t0, t1) in got[0].iter().zip(&got[1]) {
        let (u, v, w) = (add(ring, &t0.u, &t1.u), add(ring, &t0.v, &t1.v), add(ring, &t0.w, &t1.w));
        assert_eq!(w, twin(ring, &u, &v, (m, 1, n)), "u ⊗ v = W (silent: {quiet})");
        // a trimmed triple keeps the relation
        let (s, t) = (m / 2, n.saturating_sub(1));
        let (a, b) = (t0.trim(s, t).unwrap(), t1.trim(s, t).unwrap());
        assert_eq!(add(ring, &a.w, &b.w), twin(ring, &u[..s], &v[..t], (s, 1, t)));
        assert!(t0.trim(m + 1, n).is_err());
    }
}

#[test]
fn tensor_triples_hold_over_rings_and_a_field() {
    check_triples(&Z32::new(), 5, 7);
    check_triples(&Z64::new(), 4, 1);
    check_triples(&Fp::p128(), 3, 4);
}

/// The two-party product of secret `A` and `B` against the twin, with the paper's cost: one round,
/// `m·k + k·n` elements from each party.
fn check_matmul<R: Ring>(ring: &R, (m, k, n): (usize, usize, usize), seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (a, b) = (values(ring, &mut rng, m * k), values(ring, &mut rng, k * n));
    let (sa, sb) = (share(ring, &mut rng, &a), share(ring, &mut rng, &b));
    // triples larger than needed, trimmed inside
    let tr = triples(ring, m + 1, n + 2, k, false);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let triple = MatrixTriple::from_tensors(ring, &tr[me], m, n)?;
        sync(p);
        let before = p.stats();
        let c = matmul(ring, p, &sa[me], &sb[me], &triple)?;
        let used = p.stats() - before;
        assert_eq!(used.bytes_sent as usize, ring.wire_len(m * k + k * n), "elements sent");
        assert_eq!(used.rounds, 1);
        reveal(ring, p, &c)
    })
    .unwrap();
    assert_eq!(got[0], twin(ring, &a, &b, (m, k, n)));
    assert_eq!(got[0], got[1]);
}

#[test]
fn dealt_matrix_triples_serve_products() {
    let ring = Z64::new();
    let mut rng = StdRng::seed_from_u64(5);
    let (m, k, n) = (3, 4, 2);
    let dealt = MatrixTriple::deal(&ring, &mut rng, (m, k, n));
    assert_eq!(product::transpose(&product::transpose(&dealt[0].u, m, k), k, m), dealt[0].u);
    let (a, b) = (values(&ring, &mut rng, m * k), values(&ring, &mut rng, k * n));
    let (sa, sb) = (share(&ring, &mut rng, &a), share(&ring, &mut rng, &b));
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let c = matmul(&ring, p, &sa[me], &sb[me], &dealt[me])?;
        reveal(&ring, p, &c)
    })
    .unwrap();
    assert_eq!(got[0], twin(&ring, &a, &b, (m, k, n)));
}

#[test]
fn matrix_products_agree_with_the_twin() {
    check_matmul(&Z32::new(), (4, 3, 5), 1);
    check_matmul(&Z64::new(), (1, 6, 2), 2);
    check_matmul(&Fp::p128(), (3, 2, 3), 3);
}

#[test]
fn outer_and_dot_products_agree_with_the_twin() {
    let ring = Z64::new();
    let mut rng = StdRng::seed_from_u64(4);
    let (a, b) = (values(&ring, &mut rng, 6), values(&ring, &mut rng, 6));
    let (sa, sb) = (share(&ring, &mut rng, &a), share(&ring, &mut rng, &b));
    let tr = triples(&ring, 6, 6, 2, true);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        let o = outer(&ring, p, &sa[me], &sb[me], &tr[me][0])?;
        let d = dot(&ring, p, &sa[me], &sb[me], &tr[me][1])?;
        Ok((reveal(&ring, p, &o)?, reveal(&ring, p, &[d])?))
    })
    .unwrap();
    assert_eq!(got[0].0, twin(&ring, &a, &b, (6, 1, 6)));
    assert_eq!(got[0].1, twin(&ring, &a, &b, (1, 6, 1)));
    assert!(run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        dot(&ring, p, &sa[me][..5], &sb[me], &tr[me][1])
    })
    .is_err());
}

/// Beaver triples are the (1, 1) tensor triples: element-wise products with one each, in one
/// round of `2n` elements, equal to the twin at the ring's edges; a wrong count is refused.
#[test]
fn beaver_products_agree_with_the_twin() {
    let ring = Z32::new();
    let mut rng = StdRng::seed_from_u64(6);
    let n = 9;
    let (a, b) = (values(&ring, &mut rng, n), values(&ring, &mut rng, n));
    let (sa, sb) = (share(&ring, &mut rng, &a), share(&ring, &mut rng, &b));
    let tr = triples(&ring, 1, 1, n, false);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let me = p.id();
        sync(p);
        let before = p.stats();
        let c = mul(&ring, p, &sa[me], &sb[me], &tr[me])?;
        let used = p.stats() - before;
        assert_eq!((used.bytes_sent as usize, used.rounds), (ring.wire_len(2 * n), 1));
        assert!(mul(&ring, p, &sa[me], &sb[me], &tr[me][1..]).is_err());
        reveal(&ring, p, &c)
    })
    .unwrap();
    let want: Vec<u32> = a.iter().zip(&b).map(|(&x, &y)| ring.mul(x, y)).collect();
    assert_eq!(got[0], want);
}

/// The products' bytes are the paper's: per cross term `n·bits` OTs (16 bytes each from the
/// receiver) and `n·bits·m` elements from the sender.
#[test]
fn triple_generation_costs_the_papers_bytes() {
    let ring = Z32::new();
    let (m, n, count) = (3, 5, 2);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        sync(p);
        let before = p.stats();
        generate(&ring, p, &mut ots, m, n, count)?;
        Ok(p.stats() - before)
    })
    .unwrap();
    // receiving for u (m elements, 32 bits each): IKNP's κ bits per OT, padded to 128 OTs
    let ots = count * m * 32;
    let iknp = 128 * ots.div_ceil(128) * 16;
    // sending for v: n elements' corrections per bit of the other party's u
    let corrections = count * m * 32 * ring.wire_len(n);
    for s in got {
        assert_eq!(s.bytes_sent as usize, iknp + corrections);
        assert_eq!(s.rounds, 2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn random_products_agree_with_the_twin(m in 1usize..5, k in 1usize..5, n in 1usize..5, seed: u64) {
        check_matmul(&Z32::new(), (m, k, n), seed);
    }
}

/// Shares of `x_i < t` for shared `x_i` by the carry comparison, opened, against the twin; the
/// rounds and bytes are the tree's: [`compare::comparison_rounds`] layers, each AND two bits
/// from each party.
fn check_less_than<R: Ring>(ring: &R, x: &[u128], t: u128, k: u32, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let xs: Vec<R::El> = x.iter().map(|&v| ring.from_u128(v)).collect();
    let sx = share(ring, &mut rng, &xs);
    let words = compare::triple_words(x.len(), k);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        let mut triples = BitTriples::generate(p, &mut ots, words + 1)?;
        sync(p);
        let before = p.stats();
        let bits = less_than(ring, p, &mut triples, &sx[p.id()], t, k)?;
        let used = p.stats() - before;
        assert_eq!(used.rounds as usize, compare::comparison_rounds(k), "rounds");
        assert_eq!(used.bytes_sent as usize, 2 * 8 * words, "two bits per AND from each party");
        assert_eq!(triples.remaining(), 1, "triples used");
        reveal_bits(p, &bits)
    })
    .unwrap();
    let want: Vec<bool> = x.iter().map(|&v| v < t).collect();
    assert_eq!(got[0], want, "k = {k}, t = {t}");
    assert_eq!(got[1], want);
}

/// Values at and around the threshold, 0, the largest `k`-bit value, thresholds 0 and 2^k − 1,
/// over 32-, 64- and 128-bit rings, with `k` odd, even and one below the ring's width.
#[test]
fn comparisons_agree_with_the_twin_at_the_edges() {
    for (k, seed) in [(1u32, 1u64), (2, 2), (5, 3), (26, 4), (31, 5)] {
        let max = (1u128 << k) - 1;
        for t in [0, 1, max / 2, max] {
            let mut x = vec![0, 1, max, t, t.saturating_sub(1), (t + 1).min(max)];
            let mut rng = StdRng::seed_from_u64(seed);
            x.extend((0..70).map(|_| rng.gen_range(0..=max)));
            check_less_than(&Z32::new(), &x, t, k, seed);
        }
    }
    check_less_than(&Z64::new(), &[0, 5, 1 << 40, (1 << 63) - 1, 1 << 62], 1 << 40, 63, 6);
    check_less_than(&argus_math::Z128::new(), &[0, u128::MAX >> 1, 7, 1 << 100], 1 << 100, 127, 7);
}

#[test]
fn bit_triples_hold() {
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        let t = BitTriples::generate(p, &mut ots, 3)?;
        Ok((t.a.clone(), t.b.clone(), t.c.clone()))
    })
    .unwrap();
    let (x, y) = (&got[0], &got[1]);
    for w in 0..3 {
        assert_eq!((x.0[w] ^ y.0[w]) & (x.1[w] ^ y.1[w]), x.2[w] ^ y.2[w]);
    }
    assert_ne!(x.0, y.0, "random a");
    let [d0, d1] = BitTriples::deal(&mut StdRng::seed_from_u64(1), 2);
    for w in 0..2 {
        assert_eq!((d0.a[w] ^ d1.a[w]) & (d0.b[w] ^ d1.b[w]), d0.c[w] ^ d1.c[w]);
    }
}

/// A field, a threshold of more than `k` bits and `k` at the ring's width are refused; too
/// few triples are an error, not a panic.
#[test]
fn bad_comparisons_are_refused() {
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        let mut t = BitTriples::generate(p, &mut ots, 1)?;
        let field = less_than(&Fp::p128(), p, &mut t, &[Fp::p128().one()], 1, 4).is_err();
        let wide_t = less_than(&Z32::new(), p, &mut t, &[1], 16, 4).is_err();
        let wide_k = less_than(&Z32::new(), p, &mut t, &[1], 1, 32).is_err();
        let few = less_than(&Z32::new(), p, &mut t, &[1; 65], 1, 8).is_err();
        Ok([field, wide_t, wide_k, few])
    })
    .unwrap();
    assert_eq!(got[0], [true; 4]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn random_comparisons_agree_with_the_twin(k in 1u32..32, n in 1usize..200, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let max = (1u128 << k) - 1;
        let t = rng.gen_range(0..=max);
        let x: Vec<u128> = (0..n).map(|_| rng.gen_range(0..=max)).collect();
        check_less_than(&Z32::new(), &x, t, k, seed);
    }
}

/// Matrix triples from OT, a few tensor triples per message (the budget forces three
/// messages), hold `W = U·V` and serve a product.
#[test]
fn generated_matrix_triples_hold() {
    let ring = Z32::new();
    let (m, k, n) = (3, 5, 4);
    let per_triple = m * 32 * ring.wire_len(n);
    let got = run(2, Backend::Memory, NetConfig::default(), |p| {
        let mut ots = Ots::setup(p)?;
        sync(p);
        let before = p.stats();
        let t = MatrixTriple::generate_within(&ring, p, &mut ots, (m, k, n), 2 * per_triple)?;
        assert_eq!((p.stats() - before).rounds, 6, "three calls of two rounds");
        Ok(t)
    })
    .unwrap();
    let (u, v, w) =
        (add(&ring, &got[0].u, &got[1].u), add(&ring, &got[0].vt, &got[1].vt), add(&ring, &got[0].w, &got[1].w));
    let v = product::transpose(&v, n, k);
    assert_eq!(w, twin(&ring, &u, &v, (m, k, n)));
    assert_eq!(got[0].shape(), (m, k, n));
}

/// Products of party 0's `X` by party 1's `Y` with owned triples from OT (in three messages)
/// and from a dealer agree with the twin; party 0 sends `m·k` elements, party 1 `n·k`, in one
/// round; a wrong length is refused.
#[test]
fn owned_products_agree_with_the_twin() {
    fn check<R: Ring>(ring: &R, (m, k, n): (usize, usize, usize)) {
        let mut rng = StdRng::seed_from_u64(9);
        let (x, y) = (values(ring, &mut rng, m * k), values(ring, &mut rng, k * n));
        let yt = product::transpose(&y, k, n);
        let dealt = OwnedTriple::deal(ring, &mut rng, (m, k, n));
        let per_column = m.min(n) * ring.bits() as usize * ring.wire_len(m.max(n));
        let got = run(2, Backend::Memory, NetConfig::default(), |p| {
            let me = p.id();
            let mut ots = Ots::setup(p)?;
            let made = OwnedTriple::generate_within(ring, p, &mut ots, (m, k, n), per_column * k.div_ceil(3))?;
            // silent, one cross term per message
            let quiet = OwnedTriple::generate_silent(ring, p, &mut ots, (m, k, n), 1)?;
            let mine = if me == 0 { &x } else { &yt };
            sync(p);
            let before = p.stats();
            let c = owned_product(ring, p, mine, &made)?;
            let used = p.stats() - before;
            assert_eq!(used.rounds, 1);
            assert_eq!(used.bytes_sent as usize, ring.wire_len(if me == 0 { m * k } else { n * k }));
            let d = owned_product(ring, p, mine, &dealt[me])?;
            assert!(owned_product(ring, p, &mine[1..], &dealt[me]).is_err());
            let q = owned_product(ring, p, mine, &quiet)?;
            Ok([reveal(ring, p, &c)?, reveal(ring, p, &d)?, reveal(ring, p, &q)?])
        })
        .unwrap();
        let want = twin(ring, &x, &y, (m, k, n));
        assert_eq!(got[0], [want.clone(), want.clone(), want], "Gilboa, dealt, silent");
    }
    // party 0 chooses (m ≤ n), party 1 chooses (n < m); the other way round in the silent VOLE
    check(&Z32::new(), (4, 7, 5));
    check(&Z32::new(), (6, 5, 2));
    check(&Z64::new(), (1, 3, 9));
    check(&Fp::p128(), (3, 2, 2));
    check(&Fp::p128(), (3, 2, 1));
}

/// What each party receives in a comparison and in an owned product looks uniform and the same
/// whether the inputs are all 0, all at their largest or random (the messages are masked by
/// triples the receiver never sees).
#[test]
fn views_of_comparisons_and_owned_products_are_independent_of_the_inputs() {
    use crate::testing::{assert_views_uniform, byte_histogram};
    let ring = Z32::new();
    let (n, k) = (2048, 20u32);
    let (m, kk, cols) = (16, 32, 24);
    let mut rng = StdRng::seed_from_u64(12);
    let max = (1u32 << k) - 1;
    let sets: Vec<(Vec<u32>, Vec<u32>)> = vec![
        (vec![0; n], vec![0; (m + cols) * kk]),
        (vec![max; n], vec![u32::MAX; (m + cols) * kk]),
        ((0..n).map(|_| rng.gen_range(0..=max)).collect(), ring.sample_vec(&mut rng, (m + cols) * kk)),
    ];
    type View = Vec<(usize, Vec<u8>)>;
    let views: Vec<Vec<(View, View)>> = sets
        .iter()
        .map(|(x, mats)| {
            let sx = share(&ring, &mut StdRng::seed_from_u64(1), x);
            run(2, Backend::Memory, NetConfig::default(), |p| {
                let me = p.id();
                let mut ots = Ots::setup(p)?;
                let mut triples = BitTriples::generate(p, &mut ots, compare::triple_words(n, k))?;
                let owned = OwnedTriple::generate(&ring, p, &mut ots, (m, kk, cols))?;
                p.net().record_view();
                less_than(&ring, p, &mut triples, &sx[me], 1 << (k - 1), k)?;
                let compare_view = p.net().take_view();
                p.net().record_view();
                let mine = if me == 0 { &mats[..m * kk] } else { &mats[m * kk..] };
                owned_product(&ring, p, mine, &owned)?;
                Ok((compare_view, p.net().take_view()))
            })
            .unwrap()
        })
        .collect();
    for id in 0..2 {
        let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id].0)).collect();
        assert!(hs[0].iter().sum::<f64>() > 20_000.0, "the comparison's layers");
        assert_views_uniform("less_than", id, &hs);
        let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id].1)).collect();
        assert_views_uniform("owned_product", id, &hs);
    }
}

/// An owned triple's bytes are [`Vole::bytes`] with IKNP's padding (128 OTs per call), and
/// [`Vole::cheaper`] picks Gilboa for a short vector and the silent VOLE for FaceNet's shape.
#[test]
fn owned_triple_generation_costs_the_formula() {
    let ring = Z32::new();
    let pad = |ots: u64| 128 * ots.div_ceil(128) * 16;
    for (shape, vole) in
        [((5, 3, 9), Vole::Gilboa), ((9, 3, 5), Vole::Gilboa), ((300, 2, 7), Vole::Silent), ((7, 2, 300), Vole::Silent)]
    {
        let (m, k, n) = shape;
        let got = run(2, Backend::Memory, NetConfig::default(), |p| {
            let mut ots = Ots::setup(p)?;
            sync(p);
            let before = p.stats();
            OwnedTriple::generate_with(&ring, p, &mut ots, shape, vole)?;
            Ok(p.stats() - before)
        })
        .unwrap();
        let want = vole.bytes(&ring, shape);
        let ell = 32;
        let chooser = match vole {
            Vole::Gilboa => usize::from(n < m),
            Vole::Silent => usize::from(n > m),
        };
        let padded = match vole {
            Vole::Gilboa => pad((k * m.min(n)) as u64 * ell),
            Vole::Silent => {
                let params = argus_ot::silent::Params::for_rows(m.max(n), 32);
                let (t, d) = (params.noise as u64, u64::from(params.depth()));
                pad(k as u64 * t * ell) + pad(k as u64 * t * d)
            }
        };
        assert_eq!(got[chooser].bytes_sent, padded, "{shape:?} {vole:?}: the chooser's OTs");
        assert_eq!(got[1 - chooser].bytes_sent, want[1 - chooser], "{shape:?} {vole:?}: the corrections");
        assert!(want[chooser] <= padded && padded < want[chooser] + 2 * 128 * 16);
    }
    assert_eq!(Vole::cheaper(&ring, (16, 128, 16)), Vole::Gilboa);
    assert_eq!(Vole::cheaper(&ring, (1024, 128, 1024)), Vole::Silent);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    /// Owned products of random shapes (either party choosing) equal the twin.
    #[test]
    fn random_owned_products_agree_with_the_twin(m in 1usize..6, k in 0usize..6, n in 1usize..6, seed: u64) {
        let ring = Z32::new();
        let mut rng = StdRng::seed_from_u64(seed);
        let (x, y) = (values(&ring, &mut rng, m * k), values(&ring, &mut rng, k * n));
        let yt = product::transpose(&y, k, n);
        let got = run(2, Backend::Memory, NetConfig::default(), |p| {
            let mut ots = Ots::setup(p)?;
            let t = OwnedTriple::generate(&ring, p, &mut ots, (m, k, n))?;
            let c = owned_product(&ring, p, if p.id() == 0 { &x } else { &yt }, &t)?;
            reveal(&ring, p, &c)
        })
        .unwrap();
        prop_assert_eq!(&got[0], &twin(&ring, &x, &y, (m, k, n)));
    }
}
