//! Scratch: random OTs per second between two threads on the in-memory network (both sides
//! done, per batch), `cargo run --release -p argus-ot --example rot_speed [m] [reps]`.
use std::sync::Barrier;
use std::time::Instant;

use argus_net::{mem, NetConfig};
use argus_ot::iknp::{Receiver, Sender};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn main() {
    let m: usize = std::env::args().nth(1).map_or(1 << 24, |a| a.parse().unwrap());
    let reps: usize = std::env::args().nth(2).map_or(3, |a| a.parse().unwrap());
    // "into": write into buffers reused across batches (random_into), else a Vec per batch
    let into = std::env::args().nth(3).is_some_and(|a| a == "into");
    let mut nets = mem::connect(2, NetConfig::default()).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    let mut rng = StdRng::seed_from_u64(1);
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    let bar = Barrier::new(3);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let mut x = Sender::setup(&s, 1, &mut StdRng::seed_from_u64(2)).unwrap();
            let mut out = vec![[0; 2]; m];
            for _ in 0..reps {
                bar.wait();
                if into {
                    x.random_into(&s, 1, &mut out).unwrap();
                } else {
                    std::hint::black_box(x.random(&s, 1, m).unwrap());
                }
                bar.wait();
            }
        });
        sc.spawn(|| {
            let mut x = Receiver::setup(&r, 0, &mut StdRng::seed_from_u64(3)).unwrap();
            let mut out = vec![0; m];
            for _ in 0..reps {
                bar.wait();
                if into {
                    x.random_into(&r, 0, &choices, &mut out).unwrap();
                } else {
                    std::hint::black_box(x.random(&r, 0, &choices).unwrap());
                }
                bar.wait();
            }
        });
        for _ in 0..reps {
            bar.wait();
            let t = Instant::now();
            bar.wait();
            let el = t.elapsed().as_secs_f64();
            println!("{m} random OTs in {el:.3} s: {:.1} M/s", m as f64 / el / 1e6);
        }
    });
}
