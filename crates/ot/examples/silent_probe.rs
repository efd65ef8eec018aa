use std::time::Instant;
use argus_math::{Ring, Z32};
use argus_prg::{Prg, Seed};
fn main() {
    let ring = Z32::new();
    let mut rng = Prg::new(&Seed([1; 16]));
    let (m, n, l) = (1024usize, 4096usize, 1024usize);
    let h = ring.sample_vec(&mut rng, m * n);
    let s = ring.sample_vec(&mut rng, l * n);
    let mut out = vec![0u32; m * l];
    for _ in 0..3 {
        let t = Instant::now();
        ring.gemm(&h, &s, n, &mut out);
        println!("gemm {m}x{n}x{l}: {:.3} s", t.elapsed().as_secs_f64());
    }
    let mut buf = vec![0u32; 1024];
    for _ in 0..2 {
        let t = Instant::now();
        for i in 0..65536u32 {
            let mut seed = [0u8; 16];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            ring.sample_into(&mut Prg::new(&Seed(seed)), &mut buf);
        }
        println!("prg 256 MB in 4 KB streams: {:.3} s", t.elapsed().as_secs_f64());
    }
}
