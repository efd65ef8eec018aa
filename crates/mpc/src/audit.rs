//! Share audit: the three parties check that their shares of a long vector are consistent — that
//! they are shares of *some* vector — revealing nothing about it. A share corrupted on one party
//! (a bad disk, a wrong recovery) would otherwise go unnoticed and silently change results.
//!
//! * replicated ([`rep3_consistent`]): party `i` sends a SHA-256 [`Digest`] of its `x_i` to party
//!   `i+1`, which holds `x_i` too and compares (it learns nothing it did not know); the verdicts
//!   are then exchanged so that all three agree. Exact: a differing copy escapes only by a hash
//!   collision;
//! * public values ([`public_equal`], e.g. public masks): the three digests must be equal.
//!
//! Shamir shares must lie on a line, a linear relation a hash cannot see: each party folds its
//! shares into random linear combinations with public weights ([`Combination`], the same weights
//! everywhere, from a seed the parties draw jointly when the audit starts, [`joint_seed`], so
//! nobody who could corrupt a share knows them beforehand), which are shares of the same
//! combinations of the secret values, and then:
//!
//! * Shamir, degree 1 ([`shamir_consistent`] over a prime field, [`galois_consistent`] over
//!   GR(2^16, 4)): each party adds its share of a fresh random value `r` (pseudo-random secret
//!   sharing from the pairwise seeds: the key of the pair that excludes party `a` gives `R_a`,
//!   shared along `f_a(x) = 1 − x/α_a`, so `r = Σ_a R_a` and no party knows all three) and
//!   opens the sum to both peers; the three points must lie on a line. What is opened is a
//!   combination of the secrets plus `r`: uniform;
//!
//! A corrupted value escapes one combination only if its weight happens to cancel it: with
//! probability at most about `2/p` over F_p, and `1/2` over Z_2^k and GR(2^16, 4) (an error
//! `2^15·u` is cancelled by every even scalar weight); [`Combination`] takes enough of them for
//! at most `2^-SOUNDNESS_BITS` in all.
//!
//! The same checks run per item of a batch (`*_each`, e.g. per client query: one verdict each,
//! the same rounds), and [`additive_zero_each`] tests that additively shared values are zero.

use argus_math::galois as gr;
use argus_math::{Field, Modulus, Ring, Z16};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;
use sha2::{Digest as _, Sha256};

use crate::error::{MpcError, Result};
use crate::party::Party;

/// An audit lets a corrupted share through with probability at most `2^-SOUNDNESS_BITS`.
pub const SOUNDNESS_BITS: u32 = 40;

/// Independent combinations for `2^-SOUNDNESS_BITS` over `ring` with one scalar weight per group
/// of `group` values: each escapes with probability at most `2^-b`, `b = ⌊log2 p⌋ − 1` over F_p
/// (16-bit weights reduced mod p hit a value at most twice) and `b = 1` over Z_2^k and
/// GR(2^k, 4) alike (an error `2^(k−1)·u` is cancelled by every even weight).
pub fn checks_for<R: Ring>(ring: &R, group: usize) -> usize {
    let _ = group;
    let b = match ring.modulus() {
        Modulus::Int(p) => (127 - p.leading_zeros()).saturating_sub(1).clamp(1, 15),
        // The weights are scalars of Z_2^k (also over GR(2^k, 4), whose elements they scale):
        // an error `2^(k−1)·u` escapes every even weight, half of them.
        _ => 1,
    };
    SOUNDNESS_BITS.div_ceil(b) as usize
}

/// A seed all three parties draw together: each sends 16 fresh bytes of OS randomness to both
/// peers and the seed is the hash of the three in party order (one round). Drawn when an audit
/// starts, after the shares it checks are fixed, so no one who wrote a share knew the weights.
pub fn joint_seed(p: &mut Party) -> Result<Seed> {
    let mut mine = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut mine);
    for peer in [p.next(), p.prev()] {
        p.net().send(peer, mine.to_vec())?;
    }
    let mut all = [[0u8; 16]; 3];
    all[p.id()] = mine;
    for peer in [p.next(), p.prev()] {
        let got = p.net().recv(peer)?;
        all[peer] = got.try_into().map_err(|g: Vec<u8>| MpcError::Malformed {
            peer,
            reason: format!("a seed contribution of {} bytes, expected 16", g.len()),
        })?;
    }
    let h = Sha256::digest(all.concat());
    Ok(Seed(h[..16].try_into().expect("16 of 32 bytes")))
}

/// A SHA-256 digest of the elements absorbed (in their wire encoding), for the exact checks of
/// replicated copies and public values.
#[derive(Clone, Default)]
pub struct Digest {
    hash: Sha256,
    buf: Vec<u8>,
}

impl Digest {
    /// Adds `xs` to the digest.
    pub fn absorb<R: Ring>(&mut self, ring: &R, xs: &[R::El]) {
        self.buf.clear();
        ring.wire_encode(xs, &mut self.buf);
        self.hash.update(&self.buf);
    }

    /// Adds raw bytes to the digest.
    pub fn absorb_bytes(&mut self, bytes: &[u8]) {
        self.hash.update(bytes);
    }

    fn value(&self) -> Vec<u8> {
        self.hash.clone().finalize().to_vec()
    }
}

/// [`checks_for`] random linear combinations, with public weights from a seed, of the values
/// absorbed: one weight per group of `group` consecutive values (a GR(2^16, 4) element is a group
/// of 4, so the combination is GR-linear).
pub struct Combination<R: Ring> {
    ring: R,
    group: usize,
    weights: Prg,
    /// `acc[k · group + lane]`.
    acc: Vec<R::El>,
}

impl<R: Ring> Combination<R> {
    /// An empty combination; every party must use the same `seed` (from [`joint_seed`]) and
    /// absorb vectors of the same lengths in the same order.
    pub fn new(ring: R, group: usize, seed: &Seed) -> Self {
        let group = group.max(1);
        let checks = checks_for(&ring, group);
        let acc = vec![ring.zero(); checks * group];
        Combination { acc, ring, group, weights: Prg::new(seed) }
    }

    /// Adds `Σ_j w_{k,j} · xs[j]` to each combination `k` (`xs.len()` a multiple of the group):
    /// per combination, fresh weights for the groups and one dot product per lane.
    pub fn absorb(&mut self, xs: &[R::El]) {
        let (r, group) = (&self.ring, self.group);
        let groups = xs.len() / group;
        debug_assert_eq!(groups * group, xs.len(), "whole groups");
        let lanes: Vec<Vec<R::El>> = match group {
            1 => Vec::new(),
            _ => (0..group).map(|l| xs.iter().skip(l).step_by(group).copied().collect()).collect(),
        };
        for acc in self.acc.chunks_exact_mut(group) {
            let w = r.sample_vec(&mut self.weights, groups);
            for (lane, acc) in acc.iter_mut().enumerate() {
                let x = if group == 1 { xs } else { &lanes[lane][..] };
                *acc = r.add(*acc, r.dot(&w, x));
            }
        }
    }

    /// The combinations.
    pub fn values(&self) -> &[R::El] {
        &self.acc
    }
}

/// Replicated shares: `a` digests this party's `x_i` (its first components), `b` its `x_{i-1}`.
/// True on all three parties iff every party's `x_i` equals the copy the next party holds (two
/// rounds, 32 bytes and a verdict).
pub fn rep3_consistent(p: &mut Party, a: &Digest, b: &Digest) -> Result<bool> {
    Ok(rep3_consistent_each(p, &[(a.clone(), b.clone())])?[0])
}

/// [`rep3_consistent`] per item (`(a, b)` digests of each): one verdict per item, known to all
/// three parties (two rounds, 32 bytes per item, then one byte per item).
pub fn rep3_consistent_each(p: &mut Party, items: &[(Digest, Digest)]) -> Result<Vec<bool>> {
    let mine: Vec<u8> = items.iter().flat_map(|(a, _)| a.value()).collect();
    p.net().send(p.next(), mine)?;
    let prev = p.net().recv(p.prev())?;
    if prev.len() != 32 * items.len() {
        return Err(MpcError::Malformed { peer: p.prev(), reason: format!("{} digest bytes", prev.len()) });
    }
    let ok: Vec<bool> = items.iter().zip(prev.chunks_exact(32)).map(|((_, b), d)| d == b.value()).collect();
    agree_each(p, &ok)
}

/// All three parties learn, per item, whether all three found its check passed (one round,
/// one byte per item).
fn agree_each(p: &Party, ok: &[bool]) -> Result<Vec<bool>> {
    let mine: Vec<u8> = ok.iter().map(|&b| u8::from(b)).collect();
    for peer in [p.next(), p.prev()] {
        p.net().send(peer, mine.clone())?;
    }
    let mut all = ok.to_vec();
    for peer in [p.next(), p.prev()] {
        let got = p.net().recv(peer)?;
        if got.len() != ok.len() {
            return Err(MpcError::Malformed { peer, reason: format!("{} verdicts for {} items", got.len(), ok.len()) });
        }
        for (a, g) in all.iter_mut().zip(got) {
            *a &= g == 1;
        }
    }
    Ok(all)
}

/// Public values: true on all three parties iff all three digests are equal (one round).
pub fn public_equal(p: &mut Party, c: &Digest) -> Result<bool> {
    Ok(public_equal_each(p, std::slice::from_ref(c))?[0])
}

/// [`public_equal`] per item: one verdict per item (one round, 32 bytes per item).
pub fn public_equal_each(p: &mut Party, items: &[Digest]) -> Result<Vec<bool>> {
    let mine: Vec<u8> = items.iter().flat_map(Digest::value).collect();
    for peer in [p.next(), p.prev()] {
        p.net().send(peer, mine.clone())?;
    }
    let mut same = vec![true; items.len()];
    for peer in [p.next(), p.prev()] {
        let got = p.net().recv(peer)?;
        if got.len() != mine.len() {
            return Err(MpcError::Malformed { peer, reason: format!("{} digest bytes", got.len()) });
        }
        for (s, (a, b)) in same.iter_mut().zip(got.chunks_exact(32).zip(mine.chunks_exact(32))) {
            *s &= a == b;
        }
    }
    Ok(same)
}

/// Per item, whether the values shared additively in `items` (this party's shares, the same
/// number per item on every party) are all zero: each party adds a fresh zero sharing and opens
/// to both peers (one round). What is opened is uniform but for the sums: zero for a passing
/// item, and for a failing one the values themselves (when they are functions of what a
/// cheating client sent, nothing of anyone else's).
pub fn additive_zero_each<R: Ring>(p: &mut Party, ring: &R, items: &[Vec<R::El>]) -> Result<Vec<bool>> {
    Ok(additive_open(p, ring, items)?.0)
}

/// [`additive_zero_each`], and the three opened vectors (what every party sees).
#[allow(clippy::type_complexity)]
fn additive_open<R: Ring>(p: &mut Party, ring: &R, items: &[Vec<R::El>]) -> Result<(Vec<bool>, Vec<Vec<R::El>>)> {
    let per = per_item(items)?;
    let mut mine: Vec<R::El> = items.concat();
    p.prg.add_zero_share(ring, &mut mine);
    let all = open_to_all(p, ring, mine)?;
    let zero = (0..items.len())
        .map(|i| (0..per).all(|j| (0..3).fold(ring.zero(), |s, k| ring.add(s, all[k][i * per + j])) == ring.zero()))
        .collect();
    Ok((zero, all))
}

/// The common length of `items` (one per batch item), or an error if they differ.
fn per_item<T>(items: &[Vec<T>]) -> Result<usize> {
    let per = items.first().map_or(0, Vec::len);
    if items.iter().any(|v| v.len() != per) {
        return Err(MpcError::InvalidParameter("items of different lengths".into()));
    }
    Ok(per)
}

/// Sends `mine` to both peers and returns all three parties' vectors, indexed by party (one
/// round).
fn open_to_all<R: Ring>(p: &Party, r: &R, mine: Vec<R::El>) -> Result<Vec<Vec<R::El>>> {
    for peer in [p.next(), p.prev()] {
        p.send_elems(r, peer, &mine)?;
    }
    let mut all = vec![Vec::new(); 3];
    for peer in [p.next(), p.prev()] {
        all[peer] = p.recv_elems(r, peer, mine.len())?;
    }
    all[p.id()] = mine;
    Ok(all)
}

/// This party's points of the three pseudo-random polynomials `R_a · f_a` it can compute (the
/// two pairs it is in), summed: its share of `Σ_a R_a`, `n` values; `eval(r, a)` is
/// `R · f_a(α_me)` for party `a`'s polynomial.
fn prss<T>(p: &mut Party, mut draw: impl FnMut(&mut Prg) -> T, mut eval: impl FnMut(T, usize) -> T) -> Result<[T; 2]> {
    let (next, prev) = (p.next(), p.prev());
    // The pair with the next party excludes the previous one, and the other way round.
    let mut with_next = p.stream_with(next)?;
    let mut with_prev = p.stream_with(prev)?;
    Ok([eval(draw(&mut with_next), prev), eval(draw(&mut with_prev), next)])
}

/// Shamir degree-1 shares over `F` (points `1, 2, 3`): true on all three parties iff the three
/// parties' combinations lie on a line (one round; what is opened is uniform).
pub fn shamir_consistent<F: Field>(p: &mut Party, c: &Combination<F>) -> Result<bool> {
    Ok(shamir_open(p, &c.ring, &[c.values().to_vec()])?.0[0])
}

/// [`shamir_consistent`] per item, from each item's combinations (the same number per item on
/// every party, e.g. [`Combination::values`]): one verdict per item, one round.
pub fn shamir_consistent_each<F: Field>(p: &mut Party, f: &F, items: &[Vec<F::El>]) -> Result<Vec<bool>> {
    Ok(shamir_open(p, f, items)?.0)
}

/// [`shamir_consistent_each`], and the three opened points (what every party sees).
#[allow(clippy::type_complexity)]
fn shamir_open<F: Field>(p: &mut Party, f: &F, items: &[Vec<F::El>]) -> Result<(Vec<bool>, Vec<Vec<F::El>>)> {
    let per = per_item(items)?;
    let n = per * items.len();
    let point = |i: usize| f.from_u128(i as u128 + 1);
    let me = p.id();
    // f_a(α_me) = 1 − α_me / α_a.
    let at = |a: usize| f.sub(f.one(), f.mul(point(me), f.inv(point(a)).expect("p > 3")));
    let [x, y] = prss(p, |s| f.sample_vec(s, n), |r, a| r.into_iter().map(|v| f.mul(v, at(a))).collect::<Vec<_>>())?;
    let values = items.iter().flat_map(|c| c.iter().copied());
    let t: Vec<F::El> = values.zip(x.iter().zip(&y)).map(|(v, (&x, &y))| f.add(v, f.add(x, y))).collect();
    let all = open_to_all(p, f, t)?;
    // The line through parties 0 and 1, at party 2's point: λ_0 = (3 − 2)/(1 − 2), λ_1 = (3 − 1)/(2 − 1).
    let l0 = f.mul(f.sub(point(2), point(1)), f.inv(f.sub(point(0), point(1))).expect("distinct points"));
    let l1 = f.mul(f.sub(point(2), point(0)), f.inv(f.sub(point(1), point(0))).expect("distinct points"));
    let ok = (0..items.len())
        .map(|i| (i * per..(i + 1) * per).all(|j| f.add(f.mul(l0, all[0][j]), f.mul(l1, all[1][j])) == all[2][j]))
        .collect();
    Ok((ok, all))
}

/// Shamir degree-1 shares over GR(2^16, 4) (coefficient vectors, points [`gr::POINTS`]), combined
/// with `group = 4`: as [`shamir_consistent`].
pub fn galois_consistent(p: &mut Party, c: &Combination<Z16>) -> Result<bool> {
    debug_assert_eq!(c.group, 4, "GR elements");
    Ok(galois_consistent_each(p, &[c.values().to_vec()])?[0])
}

/// [`galois_consistent`] per item, from each item's combinations (GR elements, the same number
/// per item on every party): one verdict per item, one round.
pub fn galois_consistent_each(p: &mut Party, items: &[Vec<u16>]) -> Result<Vec<bool>> {
    let per = per_item(items)?;
    if !per.is_multiple_of(4) {
        return Err(MpcError::InvalidParameter("items not of whole GR elements".into()));
    }
    let n = per * items.len();
    let pts = gr::POINTS;
    let me = p.id();
    let el = |v: &[u16]| -> gr::Gr4 { [v[0], v[1], v[2], v[3]] };
    let at = |a: usize| gr::sub(gr::ONE, gr::mul(pts[me], gr::inv(pts[a]).expect("the points are units")));
    let [x, y] = prss(
        p,
        |s| Z16::new().sample_vec(s, n),
        |r, a| r.chunks_exact(4).flat_map(|v| gr::mul(el(v), at(a))).collect::<Vec<u16>>(),
    )?;
    let values = items.iter().flat_map(|c| c.iter().copied());
    let t: Vec<u16> = values.zip(x.iter().zip(&y)).map(|(v, (&x, &y))| v.wrapping_add(x).wrapping_add(y)).collect();
    let all = open_to_all(p, &Z16::new(), t)?;
    let lambda =
        |j: usize, k: usize| gr::mul(gr::sub(pts[2], pts[k]), gr::inv(gr::sub(pts[j], pts[k])).expect("units"));
    let (l0, l1) = (lambda(0, 1), lambda(1, 0));
    let on_line = |e: usize| {
        let line = gr::add(gr::mul(l0, el(&all[0][4 * e..])), gr::mul(l1, el(&all[1][4 * e..])));
        line == el(&all[2][4 * e..])
    };
    Ok((0..items.len()).map(|i| (i * per / 4..(i + 1) * per / 4).all(on_line)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::galois::{self as mg, Basis};
    use crate::local::{run3, Backend};
    use argus_math::{F65519, Z32};
    use argus_net::NetConfig;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    const SEED: Seed = Seed([3; 16]);

    /// Runs `check` on the three parties' shares; returns the three verdicts.
    fn verdicts<S: Clone + Send + Sync + 'static>(
        shares: [S; 3],
        check: fn(&mut Party, &S) -> Result<bool>,
    ) -> Vec<bool> {
        run3(Backend::Memory, NetConfig::default(), |p| check(p, &shares[p.id()])).unwrap()
    }

    fn rep3_check(p: &mut Party, x: &crate::rep3::Rep3<Z32>) -> Result<bool> {
        let (mut a, mut b) = (Digest::default(), Digest::default());
        a.absorb(&Z32::new(), &x.a);
        b.absorb(&Z32::new(), &x.b);
        rep3_consistent(p, &a, &b)
    }

    fn field_check(p: &mut Party, x: &crate::shamir::Shamir<F65519>) -> Result<bool> {
        let mut c = Combination::new(F65519, 1, &SEED);
        c.absorb(x.shares());
        shamir_consistent(p, &c)
    }

    #[allow(clippy::ptr_arg)] // the type `verdicts` holds the shares in
    fn gr_check(p: &mut Party, x: &Vec<u16>) -> Result<bool> {
        let mut c = Combination::new(Z16::new(), 4, &SEED);
        c.absorb(x);
        galois_consistent(p, &c)
    }

    #[allow(clippy::ptr_arg)] // as above
    fn public_check(p: &mut Party, x: &Vec<u16>) -> Result<bool> {
        let mut c = Digest::default();
        c.absorb(&Z16::new(), x);
        public_equal(p, &c)
    }

    /// The combinations needed for 2^-40: 3 over F_65519, 40 over GR(2^16, 4) and a bare Z_2^k
    /// (scalar weights: every even one cancels an error of 2^15).
    #[test]
    fn enough_combinations_for_2_to_the_minus_40() {
        assert_eq!(checks_for(&F65519, 1), 3);
        assert_eq!(checks_for(&Z16::new(), 4), 40);
        assert_eq!(checks_for(&Z16::new(), 1), 40);
    }

    /// The joint seed is the same on all three parties and new every time.
    #[test]
    fn the_joint_seed_is_shared_and_fresh() {
        let draw = || run3(Backend::Memory, NetConfig::default(), |p| joint_seed(p).map(|s| s.0)).unwrap();
        let (a, b) = (draw(), draw());
        assert!(a.iter().all(|s| *s == a[0]) && b.iter().all(|s| *s == b[0]));
        assert_ne!(a[0], b[0]);
    }

    /// Soundness: an error of 2^15 in one coefficient of a GR(2^16, 4) share (the hardest to
    /// see: the weights in 2·GR cancel it) is caught under every one of 200 seeds, and one in a
    /// replicated Z_2^16 copy by its digest (the 4 scalar combinations of before let that one
    /// through under about one seed in 16).
    #[test]
    fn an_error_of_2_to_the_15_is_caught_under_every_seed() {
        let mut rng = StdRng::seed_from_u64(5);
        let vals = Z16::new().sample_vec(&mut rng, 4 * 8);
        let s = mg::share_from_client(&vals, Basis::Monomial, &mut rng).unwrap();
        let mut bad = s.clone();
        bad[1][3] = bad[1][3].wrapping_add(1 << 15);
        let z = Z16::new();
        let r = crate::rep3::share_from_client(&z, &z.sample_vec(&mut rng, 8), &mut rng);
        let mut bad_rep = r.clone();
        bad_rep[2].a[0] = bad_rep[2].a[0].wrapping_add(1 << 15);
        let caught = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut caught = 0;
            for seed in 0..200u8 {
                let mut c = Combination::new(Z16::new(), 4, &Seed([seed; 16]));
                c.absorb(&bad[p.id()]);
                caught += usize::from(!galois_consistent(p, &c)?);
            }
            let (mut a, mut b) = (Digest::default(), Digest::default());
            a.absorb(&z, &bad_rep[p.id()].a);
            b.absorb(&z, &bad_rep[p.id()].b);
            Ok((caught, rep3_consistent(p, &a, &b)?))
        })
        .unwrap();
        assert_eq!(caught, vec![(200, false); 3]);
    }

    /// Consistent shares pass on all three parties; one value changed on any one party (by 1, or
    /// by 2^15 in the rings mod 2^16) fails on all three.
    #[test]
    fn consistent_shares_pass_and_a_changed_value_fails_everywhere() {
        let mut rng = StdRng::seed_from_u64(9);
        let n = 400;
        let z = Z32::new();
        let v = z.sample_vec(&mut rng, n);
        let s = crate::rep3::share_from_client(&z, &v, &mut rng);
        assert_eq!(verdicts(s.clone(), rep3_check), [true; 3]);
        for party in 0..3 {
            for delta in [1u32, 1 << 31] {
                let mut bad = s.clone();
                bad[party].b[17] = bad[party].b[17].wrapping_add(delta);
                assert_eq!(verdicts(bad.clone(), rep3_check), [false; 3], "rep3 party {party} b");
                let mut bad = s.clone();
                bad[party].a[n - 1] = bad[party].a[n - 1].wrapping_add(delta);
                assert_eq!(verdicts(bad, rep3_check), [false; 3], "rep3 party {party} a");
            }
        }

        let f = F65519;
        let s = crate::shamir::share_from_client(&f, &f.sample_vec(&mut rng, n), &mut rng).unwrap();
        assert_eq!(verdicts(s.clone(), field_check), [true; 3]);
        for party in 0..3 {
            let mut shares = s[party].shares().to_vec();
            shares[5] = f.add(shares[5], 1);
            let mut bad = s.clone();
            bad[party] = crate::shamir::Shamir::from_parts(f, crate::shamir::Degree::One, shares).unwrap();
            assert_eq!(verdicts(bad, field_check), [false; 3], "F party {party}");
        }

        let vals = Z16::new().sample_vec(&mut rng, 4 * n);
        let s = mg::share_from_client(&vals, Basis::Monomial, &mut rng).unwrap();
        assert_eq!(verdicts(s.clone(), gr_check), [true; 3]);
        for party in 0..3 {
            for delta in [1u16, 1 << 15] {
                let mut bad = s.clone();
                bad[party][4 * n - 2] = bad[party][4 * n - 2].wrapping_add(delta);
                assert_eq!(verdicts(bad, gr_check), [false; 3], "GR party {party} delta {delta}");
            }
        }

        let public = Z16::new().sample_vec(&mut rng, n);
        assert_eq!(verdicts([public.clone(), public.clone(), public.clone()], public_check), [true; 3]);
        let mut other = public.clone();
        other[0] ^= 1;
        assert_eq!(verdicts([public.clone(), other, public], public_check), [false; 3]);
    }

    /// Rounds and bytes per party, against the protocols' counts: Shamir (prime field and GR)
    /// opens `checks · group` elements to both peers in one round and public values a 32-byte
    /// digest; replicated sends its digest to the next party, then a one-byte verdict to both:
    /// two rounds.
    #[test]
    fn rounds_and_bytes() {
        let mut rng = StdRng::seed_from_u64(4);
        let n = 64;
        // Rounds as the busiest party counts them (one whose last setup message was a send
        // counts its first send here as part of that round).
        let cost = |stats: Vec<argus_net::Stats>| {
            assert!(stats.iter().all(|s| s.bytes_sent == stats[0].bytes_sent), "{stats:?}");
            (stats.iter().map(|s| s.rounds).max().unwrap(), stats[0].bytes_sent)
        };
        let measured = |f: &(dyn Fn(&mut Party) -> Result<bool> + Sync)| {
            cost(
                run3(Backend::Memory, NetConfig::default(), |p| {
                    let before = p.stats();
                    assert!(f(p)?);
                    Ok(p.stats() - before)
                })
                .unwrap(),
            )
        };
        let (z32, f, z16) = (Z32::new(), F65519, Z16::new());
        let s = crate::rep3::share_from_client(&z32, &z32.sample_vec(&mut rng, n), &mut rng);
        assert_eq!(measured(&|p| rep3_check(p, &s[p.id()])), (2, 32 + 2));
        let s = crate::shamir::share_from_client(&f, &f.sample_vec(&mut rng, n), &mut rng).unwrap();
        assert_eq!(measured(&|p| field_check(p, &s[p.id()])), (1, 2 * f.wire_len(3) as u64));
        let s = mg::share_from_client(&z16.sample_vec(&mut rng, 4 * n), Basis::Monomial, &mut rng).unwrap();
        assert_eq!(measured(&|p| gr_check(p, &s[p.id()])), (1, 2 * z16.wire_len(4 * 40) as u64));
        let v = z16.sample_vec(&mut rng, n);
        assert_eq!(measured(&|p| public_check(p, &v)), (1, 2 * 32));
    }

    /// What a party receives in the zero test does not depend on the shares it opens: for
    /// additive shares of 0 split as (x, −x, 0) with x = 0 or x = 12345 + k, the value party 0
    /// receives from party 1 has its low bit balanced either way, and every item passes.
    #[test]
    fn opened_zero_tests_are_uniform() {
        let z = Z16::new();
        for x in [0u16, 12345] {
            let mut ones = 0;
            for k in 0..600u16 {
                let v = x.wrapping_add(if x == 0 { 0 } else { k });
                let seen = run3(Backend::Memory, NetConfig::default(), |p| {
                    let mine = [v, v.wrapping_neg(), 0][p.id()];
                    additive_open(p, &z, &[vec![mine]])
                })
                .unwrap();
                assert!(seen.iter().all(|(ok, _)| ok == &[true]));
                ones += usize::from(seen[0].1[1][0] & 1);
            }
            assert!((240..360).contains(&ones), "x = {x}: {ones} of 600");
        }
    }

    /// What a party receives in the Shamir audit does not depend on the secret: the value the
    /// opened points determine (the combination of the secrets plus `r`) is uniform, its low bit
    /// balanced, for the secret 0 as for the secret 1.
    #[test]
    fn opened_combinations_are_uniform() {
        let mut rng = StdRng::seed_from_u64(2);
        let f = F65519;
        for v in [0u16, 1] {
            let mut ones = 0;
            for _ in 0..600 {
                let s = crate::shamir::share_from_client(&f, &[v; 8], &mut rng).unwrap();
                let seen = run3(Backend::Memory, NetConfig::default(), |p| {
                    let mut c = Combination::new(F65519, 1, &SEED);
                    c.absorb(s[p.id()].shares());
                    shamir_open(p, &F65519, &[c.values().to_vec()])
                })
                .unwrap();
                assert!(seen.iter().all(|(ok, all)| ok[0] && *all == seen[0].1));
                // The line through the points at 0: 2·t_0 − t_1 (points 1 and 2).
                let all = &seen[0].1;
                let at0 = f.sub(f.add(all[0][0], all[0][0]), all[1][0]);
                ones += usize::from(at0 & 1);
            }
            assert!((240..360).contains(&ones), "secret {v}: {ones} of 600");
        }
    }
}
