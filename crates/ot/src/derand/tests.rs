use argus_net::Network;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::iknp;
use crate::testing::{assert_views_uniform, run_pair, view_bytes};

fn random_bits(m: usize, seed: u64) -> Vec<bool> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..m).map(|_| rng.gen()).collect()
}

/// Precomputes `m` random OTs on random choices (before any input is known), then runs `sender`
/// on the pairs and `receiver` on the keys and the random choices. Returns both results and the
/// bytes each sent in the second phase. The random choices and the set-up are drawn from `seed`.
fn precomputed<A: Send, B: Send>(
    seed: u64,
    m: usize,
    sender: impl FnOnce(&Network, &[[Block; 2]]) -> A + Send,
    receiver: impl FnOnce(&Network, &[Block], &[bool]) -> B + Send,
) -> ((A, u64), (B, u64)) {
    let r = random_bits(m, seed);
    run_pair(
        |net| {
            let mut x = iknp::Sender::setup(net, 1, &mut StdRng::seed_from_u64(seed + 1)).unwrap();
            let keys = x.random(net, 1, m).unwrap();
            let before = net.stats().bytes_sent;
            let out = sender(net, &keys);
            (out, net.stats().bytes_sent - before)
        },
        |net| {
            let mut x = iknp::Receiver::setup(net, 0, &mut StdRng::seed_from_u64(seed + 2)).unwrap();
            let keys = x.random(net, 0, &r).unwrap();
            let before = net.stats().bytes_sent;
            let out = receiver(net, &keys, &r);
            (out, net.stats().bytes_sent - before)
        },
    )
}

#[test]
fn chosen_strings_from_precomputed_random_ots() {
    const M: usize = 1000;
    let choices = random_bits(M, 4);
    for len in [1, 16, 17, 1000] {
        let mut rng = StdRng::seed_from_u64(len as u64);
        let m0: Vec<u8> = (0..M * len).map(|_| rng.gen()).collect();
        let m1: Vec<u8> = (0..M * len).map(|_| rng.gen()).collect();
        let ((_, sent), (got, received)) = precomputed(
            1,
            M,
            |net, keys| send_chosen(net, 1, keys, &m0, &m1, len).unwrap(),
            |net, keys, r| receive_chosen(net, 0, keys, r, &choices, len).unwrap(),
        );
        // ⌈m/8⌉ bytes of corrections one way, 2·len·m bytes of masked strings back
        assert_eq!((received, sent), (M.div_ceil(8) as u64, (2 * len * M) as u64), "len {len}");
        for (i, &c) in choices.iter().enumerate() {
            let want = if c { &m1 } else { &m0 };
            assert_eq!(got[i * len..(i + 1) * len], want[i * len..(i + 1) * len], "len {len}, OT {i}");
        }
    }
}

#[test]
fn correlated_ots_from_precomputed_random_ots() {
    const M: usize = 1000;
    let choices = random_bits(M, 5);
    let mut rng = StdRng::seed_from_u64(6);
    let delta: Vec<Block> = (0..M).map(|_| rng.gen()).collect();
    let ((xs, sent), (ys, received)) = precomputed(
        1,
        M,
        |net, keys| send_correlated(net, 1, keys, &delta).unwrap(),
        |net, keys, r| receive_correlated(net, 0, keys, r, &choices).unwrap(),
    );
    assert_eq!((received, sent), (M.div_ceil(8) as u64, 16 * M as u64));
    for (((&x, &y), &c), &d) in xs.iter().zip(&ys).zip(&choices).zip(&delta) {
        assert_eq!(y, if c { x ^ d } else { x });
    }
}

#[test]
fn a_wrong_number_of_correction_bits_is_a_typed_error() {
    let (got, _) =
        run_pair(|net| send_correlated(net, 1, &[[0, 1]; 20], &[0; 20]), |net| net.send(0, vec![0; 2]).unwrap());
    assert!(matches!(got, Err(OtError::Malformed { peer: 1, got: 2, want: 3 })));
}

/// The bytes each side receives in the second phase, for `choices` and inputs made of `fill`:
/// a chosen-string batch (17 bytes) and a correlated batch, each on its own precomputed OTs.
/// The precomputation is drawn from `fill`, so each input set is an independent run (with the
/// same pads, two views would differ only by the inputs, and the comparison would not hold).
fn derand_views(choices: &[bool], fill: u8) -> (Vec<u8>, Vec<u8>) {
    const LEN: usize = 17;
    let m = choices.len();
    let strings = vec![fill; m * LEN];
    let delta = vec![u128::from_le_bytes([fill; 16]); m];
    let ((s, _), (r, _)) = precomputed(
        100 + u64::from(fill),
        2 * m,
        |net, keys| {
            net.record_view();
            send_chosen(net, 1, &keys[..m], &strings, &strings, LEN).unwrap();
            send_correlated(net, 1, &keys[m..], &delta).unwrap();
            view_bytes(&net.take_view())
        },
        |net, keys, r| {
            net.record_view();
            receive_chosen(net, 0, &keys[..m], &r[..m], choices, LEN).unwrap();
            receive_correlated(net, 0, &keys[m..], &r[m..], choices).unwrap();
            view_bytes(&net.take_view())
        },
    );
    (s, r)
}

#[test]
fn views_are_independent_of_the_choices_and_the_messages() {
    // the sender's view is the d bits, 2·m of them: m = 2^16 + 5 gives over 10^5 bits
    const M: usize = (1 << 16) + 5;
    let (s0, r0) = derand_views(&vec![false; M], 0x00);
    let (s1, r1) = derand_views(&vec![true; M], 0xff);
    let (s2, r2) = derand_views(&random_bits(M, 7), 0x5a);
    assert_eq!(s0.len(), 2 * M.div_ceil(8));
    // the padding bits of the last byte are zero, not random: leave that byte out
    let trim = |v: Vec<u8>| -> Vec<u8> {
        let k = M.div_ceil(8);
        [&v[..k - 1], &v[k..2 * k - 1]].concat()
    };
    assert_views_uniform("derandomisation sender's view (d)", &[trim(s0), trim(s1), trim(s2)]);
    assert_eq!(r0.len(), M * (2 * 17 + 16));
    assert_views_uniform("derandomisation receiver's view (e, y)", &[r0, r1, r2]);
}
