use std::thread;

use argus_net::{mem, NetConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// What the sender and the receiver return, and the bytes each sent.
type Both = (Result<Vec<[Block; 2]>, OtError>, Result<Vec<Block>, OtError>, [u64; 2]);

/// Runs the sender as party 0 and the receiver as party 1 of an in-memory pair.
fn pair(choices: &[bool], seed: u64) -> Both {
    let mut nets = mem::connect(2, NetConfig::default()).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    let n = choices.len();
    let choices = choices.to_vec();
    thread::scope(|sc| {
        let a = sc.spawn(move || (send(&s, 1, n, &mut StdRng::seed_from_u64(seed)), s.stats().bytes_sent));
        let b =
            sc.spawn(move || (receive(&r, 0, &choices, &mut StdRng::seed_from_u64(seed + 1)), r.stats().bytes_sent));
        let ((sent, sb), (got, rb)) = (a.join().unwrap(), b.join().unwrap());
        (sent, got, [sb, rb])
    })
}

#[test]
fn the_receiver_gets_the_chosen_key_and_not_the_other() {
    let mut rng = StdRng::seed_from_u64(1);
    let choices: Vec<bool> = (0..256).map(|_| rng.gen()).collect();
    let (sent, got, bytes) = pair(&choices, 7);
    let (sent, got) = (sent.unwrap(), got.unwrap());
    assert_eq!(sent.len(), 256);
    // one point from the sender, one per OT from the receiver
    assert_eq!(bytes, [32, 32 * 256]);
    for ((pair, &k), &c) in sent.iter().zip(&got).zip(&choices) {
        assert_eq!(k, pair[usize::from(c)]);
        assert_ne!(k, pair[usize::from(!c)]);
    }
    // keys differ across OTs (the index is hashed in)
    let mut all: Vec<Block> = sent.iter().flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 512);
}

#[test]
fn no_choices_is_no_ots() {
    let (sent, got, _) = pair(&[], 3);
    assert!(sent.unwrap().is_empty() && got.unwrap().is_empty());
}

/// The sender's result for `n` OTs against a receiver that reads `A` and answers `reply`.
fn against_reply(n: usize, reply: Vec<u8>) -> Result<Vec<[Block; 2]>, OtError> {
    let mut nets = mem::connect(2, NetConfig::default()).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    thread::scope(|sc| {
        let a = sc.spawn(move || send(&s, 1, n, &mut StdRng::seed_from_u64(5)));
        r.recv(0).unwrap();
        r.send(0, reply).unwrap();
        a.join().unwrap()
    })
}

#[test]
fn a_point_off_the_group_is_a_typed_error() {
    // one valid encoding and one that is not canonical (all 0xff)
    let mut msg = RistrettoPoint::default().compress().as_bytes().to_vec();
    msg.extend_from_slice(&[0xff; 32]);
    assert!(matches!(against_reply(2, msg), Err(OtError::BadPoint { peer: 1, index: 1 })));
}

#[test]
fn a_wrong_length_and_a_vanished_peer_are_typed_errors() {
    assert!(matches!(against_reply(3, vec![0; 40]), Err(OtError::Malformed { peer: 1, got: 40, want: 96 })));
    let mut nets = mem::connect(2, NetConfig::with_timeout(std::time::Duration::from_millis(300))).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    drop(r);
    assert!(matches!(send(&s, 1, 4, &mut StdRng::seed_from_u64(5)), Err(OtError::Net(_))));
    assert!(matches!(send(&s, 0, 4, &mut StdRng::seed_from_u64(5)), Err(OtError::BadPeer { .. })));
}

/// The sender's view (the receiver's `B_i`, 32 bytes each) for `n` OTs all on `choice`.
fn sender_view(n: usize, choice: bool, seed: u64) -> Vec<u8> {
    let choices = vec![choice; n];
    let (view, _) = crate::testing::run_pair(
        |net| {
            net.record_view();
            send(net, 1, n, &mut StdRng::seed_from_u64(seed)).unwrap();
            crate::testing::view_bytes(&net.take_view())
        },
        |net| receive(net, 0, &choices, &mut StdRng::seed_from_u64(seed + 1)).unwrap(),
    );
    view
}

#[test]
fn the_senders_view_is_valid_distinct_points_alike_for_both_choices() {
    use crate::testing::{assert_balanced, byte_histogram, chi2_same, CHI2_LIMIT};
    const N: usize = 4096;
    let views = [sender_view(N, false, 20), sender_view(N, true, 30)];
    for (c, view) in views.iter().enumerate() {
        assert_eq!(view.len(), N * POINT);
        // every B_i a valid point in canonical encoding, and all distinct
        for (i, enc) in view.chunks_exact(POINT).enumerate() {
            assert!(CompressedRistretto::from_slice(enc).unwrap().decompress().is_some(), "choice {c}, point {i}");
        }
        let mut encs: Vec<&[u8]> = view.chunks_exact(POINT).collect();
        encs.sort_unstable();
        encs.dedup();
        assert_eq!(encs.len(), N, "choice {c}: points repeat");
        // a canonical encoding is an even field element below 2^255 - 19: bits 0 and 255 are
        // zero, every other bit fair (N samples per bit, 254·N bits in all)
        let bit = |k: usize| view.chunks_exact(POINT).filter(|e| e[k / 8] >> (k % 8) & 1 == 1).count() as u64;
        assert_eq!((bit(0), bit(255)), (0, 0), "choice {c}");
        let mut ones = 0;
        for k in 1..255 {
            assert_balanced(&format!("choice {c}, bit {k} of B_i"), bit(k), N as u64);
            ones += bit(k);
        }
        assert_balanced(&format!("choice {c}, all bits of B_i"), ones, 254 * N as u64);
    }
    // bytes 1..=30 hold only fair bits: their distribution is the same for either choice
    let inner = |v: &[u8]| -> Vec<u8> { v.chunks_exact(POINT).flat_map(|e| e[1..31].iter().copied()).collect() };
    let c = chi2_same(&byte_histogram(&inner(&views[0])), &byte_histogram(&inner(&views[1])));
    assert!(c < CHI2_LIMIT, "B_i bytes differ between choice 0 and 1 (chi2 = {c:.0})");
}
