use std::thread;

use argus_net::{mem, NetConfig, Network};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

#[test]
fn transpose64_moves_bit_c_of_word_r_to_bit_r_of_word_c() {
    let mut rng = StdRng::seed_from_u64(1);
    let a: [u64; 64] = std::array::from_fn(|_| rng.gen());
    let mut t = a;
    transpose64(&mut t);
    for (r, word) in a.iter().enumerate() {
        for (c, col) in t.iter().enumerate() {
            assert_eq!(col >> r & 1, word >> c & 1, "bit {c} of word {r}");
        }
    }
}

#[test]
fn random_ots_agree_with_the_choices() {
    let mut nets = mem::connect(2, NetConfig::default()).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    let mut rng = StdRng::seed_from_u64(2);
    // two batches: the index runs on, lengths not multiples of 128
    let batches: Vec<Vec<bool>> = [1000usize, 77].iter().map(|&m| (0..m).map(|_| rng.gen()).collect()).collect();
    let (sent, got) = thread::scope(|sc| {
        let bs = batches.clone();
        let a = sc.spawn(move || {
            let mut x = Sender::setup(&s, 1, &mut StdRng::seed_from_u64(3)).unwrap();
            bs.iter().map(|b| x.random(&s, 1, b.len()).unwrap()).collect::<Vec<_>>()
        });
        let bs = batches.clone();
        let b = sc.spawn(move || {
            let mut x = Receiver::setup(&r, 0, &mut StdRng::seed_from_u64(4)).unwrap();
            bs.iter()
                .map(|b| {
                    let before = r.stats().bytes_sent;
                    let keys = x.random(&r, 0, b).unwrap();
                    // κ bits per OT, each row padded to whole 128-bit blocks
                    assert_eq!(r.stats().bytes_sent - before, (KAPPA * b.len().div_ceil(128) * 16) as u64);
                    keys
                })
                .collect::<Vec<_>>()
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut all = Vec::new();
    for ((pairs, keys), choices) in sent.iter().zip(&got).zip(&batches) {
        assert_eq!(pairs.len(), choices.len());
        for ((p, &k), &c) in pairs.iter().zip(keys).zip(choices) {
            assert_eq!(k, p[usize::from(c)]);
            assert_ne!(k, p[usize::from(!c)]);
            all.extend_from_slice(p);
        }
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "every key distinct");
}

/// Bytes of the receiver's one message for `m` OTs: κ bits per OT, rows padded to whole blocks.
fn u_bytes(m: usize) -> u64 {
    (KAPPA * m.div_ceil(128) * 16) as u64
}

fn random_bits(m: usize, seed: u64) -> Vec<bool> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..m).map(|_| rng.gen()).collect()
}

/// Runs the set-up on both sides, then `sender` and `receiver` on the ready parties.
fn session<A: Send, B: Send>(
    sender: impl FnOnce(&mut Sender, &Network) -> A + Send,
    receiver: impl FnOnce(&mut Receiver, &Network) -> B + Send,
) -> (A, B) {
    seeded_session(10, sender, receiver)
}

/// [`session`] with the set-up's randomness drawn from `seed` (view tests compare independent
/// runs: with the same seeds, two views would be the same pads under different inputs).
fn seeded_session<A: Send, B: Send>(
    seed: u64,
    sender: impl FnOnce(&mut Sender, &Network) -> A + Send,
    receiver: impl FnOnce(&mut Receiver, &Network) -> B + Send,
) -> (A, B) {
    crate::testing::run_pair(
        |net| sender(&mut Sender::setup(net, 1, &mut StdRng::seed_from_u64(seed)).unwrap(), net),
        |net| receiver(&mut Receiver::setup(net, 0, &mut StdRng::seed_from_u64(seed + 1)).unwrap(), net),
    )
}

#[test]
fn a_million_random_ots_in_one_call_agree_with_the_choices() {
    const M: usize = 1_000_000;
    let choices = random_bits(M, 5);
    let (pairs, (keys, sent)) = session(
        |x, net| x.random(net, 1, M).unwrap(),
        |x, net| {
            let before = net.stats().bytes_sent;
            let keys = x.random(net, 0, &choices).unwrap();
            (keys, net.stats().bytes_sent - before)
        },
    );
    assert_eq!(sent, u_bytes(M));
    assert_eq!((pairs.len(), keys.len()), (M, M));
    let mut wrong = 0;
    for ((p, &k), &c) in pairs.iter().zip(&keys).zip(&choices) {
        wrong += usize::from(k != p[usize::from(c)] || k == p[usize::from(!c)]);
    }
    assert_eq!(wrong, 0, "OTs whose key is not the chosen one");
    let mut all: Vec<Block> = pairs.iter().flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 2 * M, "every key distinct");
}

#[test]
fn raw_rows_differ_by_the_global_delta_on_the_ones() {
    let choices = random_bits(1000, 6);
    let ((q, delta), t) = session(
        |x, net| (x.correlated_raw(net, 1, 1000).unwrap(), x.delta()),
        |x, net| x.correlated_raw(net, 0, &choices).unwrap(),
    );
    assert_ne!(delta, 0);
    for ((&q, &t), &c) in q.iter().zip(&t).zip(&choices) {
        assert_eq!(q ^ t, if c { delta } else { 0 });
    }
}

#[test]
fn correlated_ots_give_the_receiver_x_plus_its_choice_times_delta() {
    const M: usize = 1000;
    let choices = random_bits(M, 7);
    let mut rng = StdRng::seed_from_u64(8);
    let per_ot: Vec<Block> = (0..M).map(|_| rng.gen()).collect();
    let global = vec![rng.gen::<Block>(); M];
    let deltas = [per_ot, global];
    let (sent, got) = session(
        |x, net| {
            deltas
                .iter()
                .map(|d| {
                    let before = net.stats().bytes_sent;
                    let out = x.correlated(net, 1, d).unwrap();
                    // one block per OT back
                    assert_eq!(net.stats().bytes_sent - before, 16 * M as u64);
                    out
                })
                .collect::<Vec<_>>()
        },
        |x, net| {
            (0..2)
                .map(|_| {
                    let before = net.stats().bytes_sent;
                    let out = x.correlated(net, 0, &choices).unwrap();
                    assert_eq!(net.stats().bytes_sent - before, u_bytes(M));
                    out
                })
                .collect::<Vec<_>>()
        },
    );
    for ((xs, ys), delta) in sent.iter().zip(&got).zip(&deltas) {
        for (((&x, &y), &c), &d) in xs.iter().zip(ys).zip(&choices).zip(delta) {
            assert_eq!(y, if c { x ^ d } else { x });
        }
    }
    // hashed: the sender's x_i do not share a correlation (unlike the raw rows)
    let mut all = sent.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 2 * M);
}

#[test]
fn string_ots_of_any_length_give_the_chosen_strings() {
    const M: usize = 300;
    let choices = random_bits(M, 9);
    for len in [1, 16, 17, 1000] {
        let mut rng = StdRng::seed_from_u64(len as u64);
        let m0: Vec<u8> = (0..M * len).map(|_| rng.gen()).collect();
        let m1: Vec<u8> = (0..M * len).map(|_| rng.gen()).collect();
        let (sent, (got, received)) = session(
            |x, net| {
                let before = net.stats().bytes_sent;
                x.send_strings(net, 1, &m0, &m1, len).unwrap();
                net.stats().bytes_sent - before
            },
            |x, net| {
                let before = net.stats().bytes_sent;
                let out = x.receive_strings(net, 0, &choices, len).unwrap();
                (out, net.stats().bytes_sent - before)
            },
        );
        // the u-matrix one way, both strings of each pair back
        assert_eq!(sent, 2 * (len * M) as u64, "len {len}");
        assert_eq!(received, u_bytes(M), "len {len}");
        assert_eq!(got.len(), M * len);
        for (i, &c) in choices.iter().enumerate() {
            let want = if c { &m1 } else { &m0 };
            assert_eq!(got[i * len..(i + 1) * len], want[i * len..(i + 1) * len], "len {len}, OT {i}");
        }
    }
}

#[test]
fn a_short_derandomising_message_is_a_typed_error() {
    let (_, got) = session(
        |x, net| {
            x.random(net, 1, 10).unwrap();
            net.send(1, vec![0; 5]).unwrap();
        },
        |x, net| x.correlated(net, 0, &[true; 10]),
    );
    assert!(matches!(got, Err(OtError::Malformed { peer: 0, got: 5, want: 160 })));
}

/// The bytes each side receives after the set-up, for `choices` and the sender's inputs made of
/// `fill`: a correlated batch (Δ_i all `fill`) then a string batch (17-byte strings all `fill`).
/// The set-up's randomness is drawn from `fill`, so each input set is an independent run.
fn extension_views(choices: &[bool], fill: u8) -> (Vec<u8>, Vec<u8>) {
    const LEN: usize = 17;
    let m = choices.len();
    let delta = vec![u128::from_le_bytes([fill; 16]); m];
    let strings = vec![fill; m * LEN];
    seeded_session(
        100 + u64::from(fill),
        |x, net| {
            net.record_view();
            x.correlated(net, 1, &delta).unwrap();
            x.send_strings(net, 1, &strings, &strings, LEN).unwrap();
            crate::testing::view_bytes(&net.take_view())
        },
        |x, net| {
            net.record_view();
            x.correlated(net, 0, choices).unwrap();
            x.receive_strings(net, 0, choices, LEN).unwrap();
            crate::testing::view_bytes(&net.take_view())
        },
    )
}

#[test]
fn views_are_independent_of_the_choices_and_the_messages() {
    // m not a multiple of 128: the u-matrix padding is in the sender's view too
    const M: usize = 10_000;
    let (s0, r0) = extension_views(&[false; M], 0x00);
    let (s1, r1) = extension_views(&[true; M], 0xff);
    let mixed: Vec<bool> = random_bits(M, 12);
    let (s2, r2) = extension_views(&mixed, 0x5a);
    // the sender sees the u-matrices, κ bits per OT and batch
    assert_eq!(s0.len() as u64, 2 * u_bytes(M));
    crate::testing::assert_views_uniform("IKNP sender's view (u)", &[s0, s1, s2]);
    // the receiver sees y (16 bytes per OT) and both masked strings (2·17 bytes per OT)
    assert_eq!(r0.len(), M * (16 + 2 * 17));
    crate::testing::assert_views_uniform("IKNP receiver's view (y, e)", &[r0, r1, r2]);
}

#[test]
fn every_transpose_path_agrees_with_the_definition() {
    let mut rng = StdRng::seed_from_u64(13);
    // widths: one block column, an odd number of lanes, a whole chunk; strided rows
    for (w, stride) in [(2, 2), (6, 10), (CHUNK_WORDS, CHUNK_WORDS), (18, 40)] {
        let cols: Vec<u64> = (0..KAPPA * stride).map(|_| rng.gen()).collect();
        let mut want = vec![0u128; 64 * w];
        for (j, row) in cols.chunks_exact(stride).enumerate() {
            for (i, x) in want.iter_mut().enumerate() {
                *x |= u128::from(row[i / 64] >> (i % 64) & 1) << j;
            }
        }
        let mut got = vec![0u128; 64 * w];
        transpose_lanes(&cols, stride, w, &mut got);
        assert_eq!(got, want, "portable, w = {w}");
        let mut got = vec![0u128; 64 * w];
        transpose(&cols, stride, w, &mut got);
        assert_eq!(got, want, "dispatched, w = {w}");
        #[cfg(target_arch = "x86_64")]
        for (name, have, f) in [
            ("avx2", is_x86_feature_detected!("avx2"), transpose_avx2 as unsafe fn(&[u64], usize, usize, &mut [u128])),
            ("avx512", is_x86_feature_detected!("avx512f"), transpose_avx512),
        ] {
            if have {
                let mut got = vec![0u128; 64 * w];
                // SAFETY: the CPU has the feature (checked).
                unsafe { f(&cols, stride, w, &mut got) };
                assert_eq!(got, want, "{name}, w = {w}");
            }
        }
    }
}

#[test]
fn random_into_matches_random_and_empty_batches_work() {
    let choices = random_bits(3000, 14);
    let ((a, b, e), (ka, kb, ke)) = session(
        |x, net| {
            let a = x.random(net, 1, 3000).unwrap();
            let mut b = vec![[0; 2]; 3000];
            x.random_into(net, 1, &mut b).unwrap();
            (a, b, x.random(net, 1, 0).unwrap())
        },
        |x, net| {
            let ka = x.random(net, 0, &choices).unwrap();
            let mut kb = vec![0; 3000];
            x.random_into(net, 0, &choices, &mut kb).unwrap();
            (ka, kb, x.random(net, 0, &[]).unwrap())
        },
    );
    assert!(e.is_empty() && ke.is_empty());
    for (pairs, keys) in [(a, ka), (b, kb)] {
        for ((p, &k), &c) in pairs.iter().zip(&keys).zip(&choices) {
            assert_eq!(k, p[usize::from(c)]);
        }
    }
}

#[test]
fn extensions_with_every_peer_set_up_side_by_side() {
    let nets = mem::connect(3, NetConfig::default());
    let m = 300;
    let got: Vec<_> = thread::scope(|sc| {
        let hs: Vec<_> = nets
            .iter()
            .map(|net| {
                sc.spawn(move || {
                    let me = net.id();
                    let peers: Vec<usize> = (0..3).filter(|&q| q != me).collect();
                    let mut rng = StdRng::seed_from_u64(40 + me as u64);
                    let mut ext = setup_with(net, &peers, &mut rng).unwrap();
                    let choices: Vec<Vec<bool>> = peers.iter().map(|_| (0..m).map(|_| rng.gen()).collect()).collect();
                    let keys: Vec<Vec<Block>> = peers
                        .iter()
                        .zip(&mut ext)
                        .zip(&choices)
                        .map(|((&q, (_, r)), c)| r.random(net, q, c).unwrap())
                        .collect();
                    let pairs: Vec<Vec<[Block; 2]>> =
                        peers.iter().zip(&mut ext).map(|(&q, (s, _))| s.random(net, q, m).unwrap()).collect();
                    (peers, choices, keys, pairs)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // party a's receiver keys from b agree with b's sender pairs for a
    for a in 0..3 {
        let (peers, choices, keys, _) = &got[a];
        for (k, &b) in peers.iter().enumerate() {
            let pairs = &got[b].3[got[b].0.iter().position(|&q| q == a).unwrap()];
            for ((key, &c), pair) in keys[k].iter().zip(&choices[k]).zip(pairs) {
                assert_eq!(*key, pair[usize::from(c)]);
            }
        }
    }
}
