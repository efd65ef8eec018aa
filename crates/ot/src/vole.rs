//! Vector OLE over a ring from random OT: shares of `y ⊗ x` between two parties, the receiver
//! holding `y` (n elements) and the sender `x` (m elements). Gilboa's product, paper 004's
//! Fig. 6 (COT-based RsVOLE) over a ring instead of F_2.
//!
//! For each element `y_i` and each of its bits `y_{i,t}` one random OT, the receiver choosing
//! `y_{i,t}`. With keys `k_0, k_1` expanded by the PRG to `G(k_b) ∈ R^m`, the sender sends
//! `d = G(k_0) − G(k_1) + 2^t·x` and keeps `−G(k_0)`; the receiver takes `G(k_c) + c·d`, which is
//! `G(k_0) + c·2^t·x`. Summed over the bits, the two rows add up to `y_i·x`. Cost: `n·bits`
//! random OTs (IKNP: 16 bytes each from the receiver) and `n·bits·m` ring elements from the
//! sender, in two messages.

use argus_math::Ring;
use argus_net::{Network, PartyId};
use argus_prg::{Prg, Seed};

use crate::{iknp, Block, OtError};

/// `G(key)`: `out.len()` elements.
fn expand<R: Ring>(ring: &R, key: Block, out: &mut [R::El]) {
    ring.sample_into(&mut Prg::new(&Seed(key.to_le_bytes())), out);
}

/// `n` elements from a peer's `bytes`: read in place where the ring's wire form is its memory
/// form, else decoded into `scratch`; a non-canonical element is [`OtError::BadElement`].
pub(crate) fn elements<'a, R: Ring>(
    ring: &R,
    bytes: &'a [u8],
    n: usize,
    peer: PartyId,
    scratch: &'a mut Vec<R::El>,
) -> Result<&'a [R::El], OtError> {
    match ring.wire_view(bytes) {
        Some(d) if d.len() == n => Ok(d),
        _ => {
            *scratch = ring.wire_decode(bytes, n).map_err(|e| OtError::BadElement { peer, reason: e.to_string() })?;
            Ok(&scratch[..])
        }
    }
}

/// The bits `y_{i,t}` (t below the ring's width) of every element, element by element.
fn bits_of<R: Ring>(ring: &R, y: &[R::El]) -> Vec<bool> {
    let w = ring.bits();
    y.iter().flat_map(|&e| (0..w).map(move |t| ring.to_u128(e) >> t & 1 == 1)).collect()
}

/// Shares of `y ⊗ x` products with `peer`, in both directions at once: this party receives
/// for each `(y, m)` of `ys` (its rows; `m` the length of the peer's matching `x`) and sends
/// for each `(x, n)` of `xs` (its columns; `n` the length of the peer's matching `y`), while
/// the peer does the same with the roles swapped. Returns this party's shares of every
/// received product and every sent one, each row-major with one row per `y` element. Two
/// messages each way (the extension's, then the corrections); both parties call it together.
#[allow(clippy::type_complexity)]
pub fn cross<R: Ring>(
    ring: &R,
    net: &Network,
    peer: PartyId,
    (sender, receiver): (&mut iknp::Sender, &mut iknp::Receiver),
    ys: &[(&[R::El], usize)],
    xs: &[(&[R::El], usize)],
) -> Result<(Vec<Vec<R::El>>, Vec<Vec<R::El>>), OtError> {
    let w = ring.bits() as usize;
    // receiving: one random OT per bit of every y element, chosen by the bit
    let choices: Vec<bool> = ys.iter().flat_map(|(y, _)| bits_of(ring, y)).collect();
    let keys = receiver.random(net, peer, &choices)?;
    // sending: the corrections d for every bit of the peer's y elements (`n` of them)
    let total: usize = xs.iter().map(|(_, n)| n * w).sum();
    let pairs = sender.random(net, peer, total)?;
    let mut msg = Vec::with_capacity(xs.iter().map(|(x, n)| n * w * ring.wire_len(x.len())).sum());
    let mut sent = Vec::with_capacity(xs.len());
    let mut pair = pairs.iter();
    for &(x, n) in xs {
        let m = x.len();
        let (mut g0, mut g1, mut d) = (vec![ring.zero(); m], vec![ring.zero(); m], vec![ring.zero(); m]);
        let mut share = vec![ring.zero(); n * m];
        for row in share.chunks_exact_mut(m.max(1)).take(n) {
            let mut pow = ring.one();
            for _ in 0..w {
                let [k0, k1] = *pair.next().expect("one OT per bit");
                expand(ring, k0, &mut g0);
                expand(ring, k1, &mut g1);
                // one pass: the correction d = g0 − g1 + 2^t·x, and −g0 into the share
                for j in 0..m {
                    d[j] = ring.add(ring.sub(g0[j], g1[j]), ring.mul(pow, x[j]));
                    row[j] = ring.sub(row[j], g0[j]);
                }
                ring.wire_encode(&d, &mut msg);
                pow = ring.add(pow, pow);
            }
        }
        sent.push(share);
    }
    net.send(peer, msg)?;
    // receiving: G(k_c) + c·d
    let got = net.recv(peer)?;
    let want: usize = ys.iter().map(|(y, m)| y.len() * w * ring.wire_len(*m)).sum();
    if got.len() != want {
        return Err(OtError::Malformed { peer, got: got.len(), want });
    }
    let mut at = 0;
    let (mut key, mut choice) = (keys.iter(), choices.iter());
    let mut received = Vec::with_capacity(ys.len());
    for &(y, m) in ys {
        let mut share = vec![ring.zero(); y.len() * m];
        let (len, mut g) = (ring.wire_len(m), vec![ring.zero(); m]);
        let mut decoded = Vec::new();
        for row in share.chunks_exact_mut(m.max(1)).take(y.len()) {
            for _ in 0..w {
                let bytes = &got[at..at + len];
                at += len;
                let d = elements(ring, bytes, m, peer, &mut decoded)?;
                expand(ring, *key.next().expect("one key per bit"), &mut g);
                if *choice.next().expect("one choice per bit") {
                    for ((s, &g), &d) in row.iter_mut().zip(&g).zip(d) {
                        *s = ring.add(*s, ring.add(g, d));
                    }
                } else {
                    for (s, &g) in row.iter_mut().zip(&g) {
                        *s = ring.add(*s, g);
                    }
                }
            }
        }
        received.push(share);
    }
    Ok((received, sent))
}

#[cfg(test)]
mod tests {
    use argus_math::{Fp, Ring, Z64};
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;
    use crate::testing::run_pair;

    fn extensions(net: &Network, seed: u64) -> (iknp::Sender, iknp::Receiver) {
        let mut rng = StdRng::seed_from_u64(seed);
        iknp::setup_with(net, &[1 - net.id()], &mut rng).unwrap().pop().unwrap()
    }

    /// One party of [`cross`]: receiving for `y` against the peer's `m` columns, sending for `x`
    /// against its `n` rows.
    #[allow(clippy::type_complexity)]
    fn party<'a, R: Ring>(
        ring: &'a R,
        y: &'a [R::El],
        x: &'a [R::El],
        m: usize,
        n: usize,
        seed: u64,
    ) -> impl FnOnce(&Network) -> (Vec<Vec<R::El>>, Vec<Vec<R::El>>) + Send + 'a {
        move |net: &Network| {
            let (mut s, mut r) = extensions(net, seed);
            cross(ring, net, 1 - net.id(), (&mut s, &mut r), &[(y, m)], &[(x, n)]).unwrap()
        }
    }

    /// The two parties' shares add up to `y ⊗ x` in both directions, over Z_2^64 and F_p, with
    /// 0, 1 and −1 among the elements.
    fn products<R: Ring>(ring: &R) {
        let mut rng = StdRng::seed_from_u64(7);
        let mut draw = |n: usize| {
            let mut v = ring.sample_vec(&mut rng, n);
            v[0] = ring.zero();
            v[n - 1] = ring.neg(ring.one());
            v
        };
        let (y0, x0, y1, x1) = (draw(3), draw(4), draw(5), draw(2));
        // party 0 receives for y0 against party 1's x1, party 1 for y1 against party 0's x0
        let ((r0, s0), (r1, s1)) =
            run_pair(party(ring, &y0, &x0, x1.len(), y1.len(), 1), party(ring, &y1, &x1, x0.len(), y0.len(), 2));
        let outer = |y: &[R::El], x: &[R::El]| -> Vec<R::El> {
            y.iter().flat_map(|&a| x.iter().map(move |&b| ring.mul(a, b))).collect()
        };
        let sum = |a: &[R::El], b: &[R::El]| -> Vec<R::El> { a.iter().zip(b).map(|(&a, &b)| ring.add(a, b)).collect() };
        assert_eq!(sum(&r0[0], &s1[0]), outer(&y0, &x1));
        assert_eq!(sum(&r1[0], &s0[0]), outer(&y1, &x0));
    }

    #[test]
    fn shares_add_up_to_the_products() {
        products(&Z64::new());
        products(&Fp::p128());
    }

    /// A correction that is not a canonical field element is a typed error, not a panic.
    #[test]
    fn a_bad_correction_is_refused() {
        let ring = Fp::p128();
        let y = vec![ring.one()];
        let (_, got) = run_pair(
            |net: &Network| {
                let (mut s, mut r) = extensions(net, 3);
                // play the sender by hand: take the extension's message, answer with all-ones bytes
                let _ = r.random(net, 1, &[]).unwrap();
                let n = 128;
                s.random(net, 1, n).unwrap();
                net.send(1, vec![0xff; n * 16]).unwrap();
                // the peer's own (empty) corrections: leaving before they arrive would close the
                // link under its send
                assert_eq!(net.recv(1).unwrap(), Vec::<u8>::new());
            },
            |net: &Network| {
                let (mut s, mut r) = extensions(net, 4);
                cross(&ring, net, 0, (&mut s, &mut r), &[(&y, 1)], &[])
            },
        );
        assert!(matches!(got, Err(OtError::BadElement { peer: 0, .. })), "{got:?}");
    }
}
