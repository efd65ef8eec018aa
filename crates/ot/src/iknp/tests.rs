use std::thread;

use argus_net::{mem, NetConfig};
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
